"""Lookup family: LSH_PROJECTION, EMBEDDING_LOOKUP_SPARSE (oracle: LiteRT
BUILTIN_WITHOUT_DEFAULT_DELEGATES). Each op has one plain kernel, which is also its reference
kernel, so the "fast" and "reference" runs check the same code. LSH_PROJECTION is exact (int32
bits from FarmHash Fingerprint64); its keys (4 seed bytes + one input row) cover every length
branch of the hash (4..7, 8..16, 17..32, 33..64, one and several 64-byte blocks).
EMBEDDING_LOOKUP_SPARSE sums in float in TFLite's order: tol 0 as well.
Bad models and bad data are in tests/test_lookup_ops.py.
CPU only: TFLite's GPU delegate takes none of these ops.
"""
import numpy as np

from harness import OpCase
from tflite_gpu.testing.builder import ModelBuilder

F32, I32 = np.float32, np.int32


def lsh_model(kind, num_hash, num_bits, in_shape, in_dtype=F32, weight=True, weight_input=False):
    mb = ModelBuilder()
    rng = np.random.default_rng(num_hash * 100 + num_bits)
    h = mb.add_const(rng.normal(0, 1, (num_hash, num_bits)).astype(F32), name="hash")
    x = mb.add_input(list(in_shape), in_dtype, name="input")
    ins = [h, x]
    if weight:
        ins.append(mb.add_input([in_shape[0]], F32, name="weight") if weight_input
                   else mb.add_const(rng.uniform(-1, 1, in_shape[0]).astype(F32), name="weight"))
    n = num_hash if kind == "SPARSE" else num_hash * num_bits
    y = mb.add_tensor([n], I32, name="y")
    mb.add_op("LSH_PROJECTION", ins, [y], options=dict(type=kind))
    mb.mark_output(y)
    return mb.build()


def lsh_inputs(in_shape, in_dtype=F32, weight_input=False):
    def make(rng):
        if np.dtype(in_dtype).kind == "f":
            x = rng.normal(0, 1, in_shape).astype(in_dtype)
        else:
            x = rng.integers(-100, 100, in_shape).astype(in_dtype)
        out = [x]
        if weight_input:
            out.append(rng.uniform(-1, 1, in_shape[0]).astype(F32))
        return out
    return make


CASES = []
for _kind in ("SPARSE", "DENSE"):
    for _name, _nh, _nb, _shape, _dt, _w in [
            ("f32_3x1_key8", 4, 5, (3,), F32, True), ("f32_5x2_key12", 3, 8, (5, 2), F32, True),
            ("f32_4x5_key24", 6, 3, (4, 5), F32, False), ("f32_3x3x4_key52", 2, 16, (3, 3, 4), F32, True),
            ("f32_2x20_key84", 3, 4, (2, 20), F32, True), ("f32_3x50_key204", 2, 6, (3, 50), F32, False),
            ("i8_4x2_key6", 5, 7, (4, 2), np.int8, True), ("i8_3x1_key5", 2, 4, (3, 1), np.int8, False),
            ("i32_6x4_key20", 3, 10, (6, 4), I32, True), ("bits32", 3, 32, (4, 3), F32, True)]:
        CASES.append(OpCase("LSH_PROJECTION", f"{_kind.lower()}_{_name}",
                            (lambda k=_kind, nh=_nh, nb=_nb, s=_shape, d=_dt, w=_w: lsh_model(k, nh, nb, s, d, w)),
                            lsh_inputs(_shape, _dt), tol=0.0, gpu=False))
    CASES.append(OpCase("LSH_PROJECTION", f"{_kind.lower()}_weight_input",
                        (lambda k=_kind: lsh_model(k, 4, 6, (5, 3), weight_input=True)),
                        lsh_inputs((5, 3), weight_input=True), tol=0.0, gpu=False))


def els_model(n, rank, dense_shape, params_shape, combiner, const_meta=True):
    mb = ModelBuilder()
    ids = mb.add_input([n], I32, name="ids")
    idx = mb.add_input([n, rank], I32, name="indices")
    ds = (mb.add_const(np.array(dense_shape, I32), name="dense_shape") if const_meta
          else mb.add_input([rank], I32, name="dense_shape"))
    w = mb.add_input([n], F32, name="weights")
    p = mb.add_input(list(params_shape), F32, name="params")
    out_shape = list(dense_shape[:-1]) + list(params_shape[1:])
    y = mb.add_tensor(out_shape, F32, name="y")
    mb.add_op("EMBEDDING_LOOKUP_SPARSE", [ids, idx, ds, w, p], [y], options=dict(combiner=combiner))
    mb.mark_output(y)
    return mb.build()


def els_inputs(n, dense_shape, params_shape, sort=True, const_meta=True, positive_w=False):
    rank = len(dense_shape)

    def make(rng):
        ids = rng.integers(0, params_shape[0], n).astype(I32)
        idx = np.stack([rng.integers(0, max(d, 1), n) for d in dense_shape], axis=1).astype(I32)
        if sort:
            idx = idx[np.lexsort(idx.T[::-1])]
        w = (rng.uniform(0.2, 2.0, n) if positive_w else rng.normal(0, 1, n)).astype(F32)
        p = rng.normal(0, 1, params_shape).astype(F32)
        out = [ids, idx.reshape(n, rank)]
        if not const_meta:
            out.append(np.array(dense_shape, I32))
        return out + [w, p]
    return make


for _comb in ("SUM", "MEAN", "SQRTN"):
    for _name, _n, _ds, _ps, _sort in [
            ("rank2", 7, (4, 3), (5, 3), True), ("rank3_emb2d", 9, (2, 3, 4), (6, 2, 3), True),
            ("rank1_one_bucket", 5, (6,), (4, 5), True), ("unsorted_split_buckets", 8, (3, 2), (5, 4), False),
            ("empty_buckets", 2, (6, 2), (3, 2), True), ("no_entries", 0, (3, 2), (4, 2), True)]:
        CASES.append(OpCase("EMBEDDING_LOOKUP_SPARSE", f"{_comb.lower()}_{_name}",
                            (lambda n=_n, ds=_ds, ps=_ps, c=_comb: els_model(n, len(ds), ds, ps, c)),
                            els_inputs(_n, _ds, _ps, _sort, positive_w=(_comb == "MEAN")), tol=0.0, gpu=False))
CASES.append(OpCase("EMBEDDING_LOOKUP_SPARSE", "dense_shape_input",
                    lambda: els_model(6, 2, (3, 4), (5, 2), "MEAN", const_meta=False),
                    els_inputs(6, (3, 4), (5, 2), const_meta=False, positive_w=True), tol=0.0, gpu=False))
