"""Lookup family: LSH_PROJECTION, EMBEDDING_LOOKUP_SPARSE, HASHTABLE_LOOKUP, SKIP_GRAM and the
hashtable resource ops HASHTABLE / HASHTABLE_IMPORT / HASHTABLE_FIND / HASHTABLE_SIZE (oracle:
LiteRT BUILTIN_WITHOUT_DEFAULT_DELEGATES). Each op has one plain kernel, which is also its
reference kernel, so the "fast" and "reference" runs check the same code. Every case is exact
(tol 0): LSH_PROJECTION's int32 bits from FarmHash Fingerprint64 (its keys, 4 seed bytes + one
input row, cover every length branch of the hash: 4..7, 8..16, 17..32, 33..64, one and several
64-byte blocks; a STRING input hashes its serialized buffer); EMBEDDING_LOOKUP_SPARSE sums in float
in TFLite's order; STRING outputs (object arrays of bytes) compare element by element.
Bad models and bad data, several invokes, CALL_ONCE-imported tables and the STRING Python API are
in tests/test_lookup_ops.py.
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
    # A STRING input: TFLite hashes its serialized buffer cut into bytes // rows pieces.
    CASES.append(OpCase("LSH_PROJECTION", f"{_kind.lower()}_string_input",
                        (lambda k=_kind: lsh_model(k, 3, 5, (3,), "STRING")),
                        lambda rng: [np.array([b"hello", b"", b"lsh projection of words"], dtype=object)],
                        tol=0.0, gpu=False))
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


# ------------------------------------------------------------------ HASHTABLE_LOOKUP
def hl_model(keys, values, n_lookup, values_const=True):
    mb = ModelBuilder()
    lk = mb.add_input([n_lookup], I32, name="lookup")
    k = mb.add_const(np.asarray(keys, I32), name="keys")
    v = mb.add_const(values, name="values") if values_const else mb.add_input(list(values.shape), values.dtype)
    is_str = values.dtype == object
    o = mb.add_tensor([n_lookup] + ([] if is_str else list(values.shape[1:])), "STRING" if is_str else values.dtype,
                      name="out")
    h = mb.add_tensor([n_lookup], np.uint8, name="hits")
    mb.add_op("HASHTABLE_LOOKUP", [lk, k, v], [o, h])
    mb.mark_output(o)
    mb.mark_output(h)
    return mb.build()


def lookups(values):
    return lambda rng: [np.asarray(values, I32)]


_SORTED = [-7, -2, 0, 3, 4, 10, 11, 50]
_PROBE = [3, 4, 5, -7, 50, 51, -8, 0, 10, 10, 2, 11]
_HL = [
    ("f32_rows", _SORTED, np.random.default_rng(1).normal(0, 1, (8, 3)).astype(F32), _PROBE),
    ("f32_1d", _SORTED, np.arange(8, dtype=F32) * 1.5, _PROBE),
    ("int8_3d", _SORTED, np.arange(8 * 2 * 2, dtype=np.int8).reshape(8, 2, 2), _PROBE),
    ("int64", _SORTED, np.arange(8, dtype=np.int64) * (1 << 40), _PROBE),
    ("uint8", _SORTED, np.arange(8, dtype=np.uint8) + 200, _PROBE),
    ("bool", _SORTED, np.array([1, 0, 1, 1, 0, 0, 1, 0], bool), _PROBE),
    ("string", _SORTED, np.array([b"minus seven", b"-2", b"", b"three", "f\u00fcnf".encode(), b"ten", b"eleven", b"x" * 70],
                                 dtype=object), _PROBE),
    ("unsorted_keys", [9, 1, 5, 3, 7, 0, 2], np.arange(7, dtype=F32), [9, 1, 5, 3, 7, 0, 2, 4, 8]),
    ("extreme_keys_wrap", [-2147483648, -5, 0, 2147483647], np.arange(4, dtype=I32) + 1,
     [-2147483648, -5, 0, 2147483647, 1, -1]),
    ("one_key", [4], np.array([[2.5, -1.0]], F32), [4, 3, 5]),
]
for _name, _k, _v, _p in _HL:
    CASES.append(OpCase("HASHTABLE_LOOKUP", _name, (lambda k=_k, v=_v, n=len(_p): hl_model(k, v, n)), lookups(_p),
                        tol=0.0, gpu=False))
CASES.append(OpCase("HASHTABLE_LOOKUP", "values_input",
                    lambda: hl_model(_SORTED, np.zeros((8, 2), F32), 5, values_const=False),
                    lambda rng: [np.array([0, 1, 10, 11, -7], I32), rng.normal(0, 1, (8, 2)).astype(F32)],
                    tol=0.0, gpu=False))


# ------------------------------------------------------------------ SKIP_GRAM
def skip_gram_model(ngram, skip, include_all):
    mb = ModelBuilder()
    x = mb.add_input([1], "STRING", name="sentence")
    y = mb.add_tensor([1], "STRING", name="ngrams")
    mb.add_op("SKIP_GRAM", [x], [y], options=dict(ngram_size=ngram, max_skip_size=skip, include_all_ngrams=include_all))
    mb.mark_output(y)
    return mb.build()


def sentence(text):
    return lambda rng: [np.array([text.encode() if isinstance(text, str) else text], dtype=object)]


_TEXT = "the quick brown fox jumps over the lazy dog"
for _name, _n, _s, _all, _t in [
        ("bigram_skip1_all", 2, 1, True, _TEXT), ("bigram_skip0", 2, 0, False, _TEXT),
        ("trigram_skip2", 3, 2, False, _TEXT), ("trigram_skip1_all", 3, 1, True, _TEXT),
        ("unigram", 1, 0, False, _TEXT), ("unigram_skip3_all", 1, 3, True, "a b c"),
        ("fourgram_skip2_all", 4, 2, True, "one two three four five six"),
        ("white_space", 2, 1, True, "  lead\tand\n\ntabs  double  spaces \r\x0bend "),
        ("leading_space_drops_first_word", 2, 0, False, " alpha beta gamma"),
        ("utf8", 2, 1, True, "gr\u00fc\u00dfe aus k\u00f6ln \u65e5\u672c"),
        ("exactly_n_words", 3, 0, False, "a b c"), ("no_skip_limit_large", 2, 100, False, "w x y z"),
        ("long_words", 2, 1, False, " ".join("w" * (i + 60) for i in range(5)))]:
    CASES.append(OpCase("SKIP_GRAM", _name, (lambda n=_n, s=_s, a=_all: skip_gram_model(n, s, a)), sentence(_t),
                        tol=0.0, gpu=False))


# ------------------------------------------------------------------ HASHTABLE, _IMPORT, _FIND, _SIZE
def hashtable_model(key_type, keys, values, default, n_find, table_id=3, import_twice=None):
    """HASHTABLE -> HASHTABLE_IMPORT (constant keys/values) -> HASHTABLE_FIND (keys input) and
    HASHTABLE_SIZE, in one subgraph (each invoke imports again: a no-op after the first)."""
    mb = ModelBuilder()
    kt, vt = (np.int64, "STRING") if key_type == "INT64" else ("STRING", np.int64)
    h = mb.add_tensor([1], "RESOURCE", name="table")
    mb.add_op("HASHTABLE", [], [h], options=dict(table_id=table_id, key_dtype=key_type,
                                                  value_dtype="STRING" if key_type == "INT64" else "INT64"))
    ck = mb.add_const(np.asarray(keys, dtype=object if kt == "STRING" else kt), name="import_keys")
    cv = mb.add_const(np.asarray(values, dtype=object if vt == "STRING" else vt), name="import_values")
    mb.add_op("HASHTABLE_IMPORT", [h, ck, cv], [])
    if import_twice is not None:
        ck2 = mb.add_const(np.asarray(import_twice[0], dtype=object if kt == "STRING" else kt))
        cv2 = mb.add_const(np.asarray(import_twice[1], dtype=object if vt == "STRING" else vt))
        mb.add_op("HASHTABLE_IMPORT", [h, ck2, cv2], [])
    q = mb.add_input(list(n_find), kt, name="find_keys")
    d = mb.add_const(np.asarray([default], dtype=object if vt == "STRING" else vt), name="default")
    o = mb.add_tensor(list(n_find), vt, name="found")
    mb.add_op("HASHTABLE_FIND", [h, q, d], [o])
    s = mb.add_tensor([1], np.int64, name="size")
    mb.add_op("HASHTABLE_SIZE", [h], [s])
    mb.mark_output(o)
    mb.mark_output(s)
    return mb.build()


_IK = [5, -3, 1 << 40, 0, 77]
_IV = [b"five", b"minus three", b"big", b"", "n\u00e4chste".encode()]
_SK = [b"apple", b"banana", b"", b"kiwi fruit", "\u00e9t\u00e9".encode()]
_SV = [1, -2, 1 << 50, 0, 9]
# Every model below runs all four ops; each case is listed under the op it is mainly about.
for _op in ("HASHTABLE", "HASHTABLE_FIND"):
    _pre = "create" if _op == "HASHTABLE" else "find"
    CASES.append(OpCase(_op, f"{_pre}_int64_to_string", lambda: hashtable_model("INT64", _IK, _IV, b"?", (2, 3)),
                        lambda rng: [np.array([[5, 6, 0], [1 << 40, -3, 78]], np.int64)], tol=0.0, gpu=False))
    CASES.append(OpCase(_op, f"{_pre}_string_to_int64", lambda: hashtable_model("STRING", _SK, _SV, -1, (4,)),
                        lambda rng: [np.array([b"kiwi fruit", b"kiwi", b"", "\u00e9t\u00e9".encode()], dtype=object)],
                        tol=0.0, gpu=False))
CASES.append(OpCase("HASHTABLE_IMPORT", "duplicate_keys_first_wins",
                    lambda: hashtable_model("INT64", [1, 2, 1, 3, 2], [b"a", b"b", b"c", b"d", b"e"], b"-", (4,)),
                    lambda rng: [np.array([1, 2, 3, 4], np.int64)], tol=0.0, gpu=False))
CASES.append(OpCase("HASHTABLE_IMPORT", "second_import_ignored",
                    lambda: hashtable_model("STRING", [b"x", b"y"], [1, 2], 0, (3,),
                                            import_twice=([b"x", b"z"], [10, 30])),
                    lambda rng: [np.array([b"x", b"y", b"z"], dtype=object)], tol=0.0, gpu=False))
CASES.append(OpCase("HASHTABLE_SIZE", "empty_table",
                    lambda: hashtable_model("INT64", np.zeros(0, np.int64), np.zeros(0, object), b"none", (3,)),
                    lambda rng: [np.array([0, 1, 2], np.int64)], tol=0.0, gpu=False))
