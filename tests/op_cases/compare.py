"""Comparisons and logic: EQUAL NOT_EQUAL LESS LESS_EQUAL GREATER GREATER_EQUAL LOGICAL_OR
LOGICAL_NOT SELECT SELECT_V2 WHERE, against LiteRT's builtin kernels (BOOL/integer outputs exact)."""
import numpy as np

from harness import OpCase
from tflite_gpu.testing.builder import ModelBuilder, single_op_model

F32 = np.float32
CMP = ["EQUAL", "NOT_EQUAL", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL"]
GPU_CMP = set(CMP)  # TFLite's GPU delegate takes all six (float inputs)


def _gen(dt, shape, rng, lo=-3, hi=3):
    dt = np.dtype(dt)
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(dt, np.integer):
        info = np.iinfo(dt)
        return rng.integers(max(lo, info.min), min(hi, info.max) + 1, size=shape).astype(dt)
    # Small integers as floats: plenty of equal pairs.
    return rng.integers(lo, hi + 1, size=shape).astype(dt)


def cmp_case(op, name, s1, s2, dt=F32, version=1, gen=None, const2=False, gpu=None, **kw):
    out = list(np.broadcast_shapes(tuple(s1), tuple(s2)))
    if const2:
        c = _gen(dt, s2, np.random.default_rng(3))

        def model():
            return single_op_model(op, [(s1, dt)], [(out, np.bool_)], version=version, consts=[c])

        def inputs(rng):
            return [_gen(dt, s1, rng)]
    else:
        def model():
            return single_op_model(op, [(s1, dt), (s2, dt)], [(out, np.bool_)], version=version)

        def inputs(rng):
            return list(gen(rng)) if gen else [_gen(dt, s1, rng), _gen(dt, s2, rng)]
    if gpu is None:
        gpu = op in GPU_CMP and np.dtype(dt) == F32 and not const2 and len(out) <= 4 and 0 not in out
    return OpCase(op, name, model, inputs, gpu=gpu, **kw)


def _nan_gen(rng):
    a = np.array([np.nan, 1, np.inf, -np.inf, 0.0, -0.0, np.nan, 2], F32)
    b = np.array([np.nan, np.nan, np.inf, np.inf, -0.0, 0.0, 1, 2], F32)
    return a, b


CASES = []
for op in CMP:
    CASES += [
        cmp_case(op, "same", [2, 3, 4, 5], [2, 3, 4, 5]),
        cmp_case(op, "bcast", [2, 5, 3], [5, 1]),
        cmp_case(op, "scalar", [4, 6], []),
        cmp_case(op, "rank5", [2, 1, 3, 1, 2], [1, 2, 1, 2, 1]),
        cmp_case(op, "zero", [0, 3], [3]),
        cmp_case(op, "nan_inf", [8], [8], gen=_nan_gen, gpu=False,
                 note="NaN/inf: GPU comparisons of NaN follow the device"),
        cmp_case(op, "const", [3, 4], [4], const2=True),
        cmp_case(op, "int32", [3, 4], [4], dt=np.int32, version=2),
        cmp_case(op, "int64", [3, 4], [3, 4], dt=np.int64, version=2),
        cmp_case(op, "big", [64, 257], [257]),
    ]
for op in ["EQUAL", "NOT_EQUAL"]:
    CASES.append(cmp_case(op, "bool", [3, 5], [5], dt=np.bool_, version=2))

# ------------------------------------------------------------------ LOGICAL_OR / LOGICAL_NOT
for name, s1, s2 in [("same", [2, 3, 4], [2, 3, 4]), ("bcast", [2, 3, 4], [3, 1]), ("scalar", [5, 6], []),
                     ("rank5", [2, 1, 3, 1, 2], [1, 2, 1, 2, 1]), ("big", [300, 301], [301]), ("zero", [0, 2], [2])]:
    CASES.append(OpCase("LOGICAL_OR", name, (lambda s1=s1, s2=s2: single_op_model(
        "LOGICAL_OR", [(s1, np.bool_), (s2, np.bool_)],
        [(list(np.broadcast_shapes(tuple(s1), tuple(s2))), np.bool_)])),
        (lambda rng, s1=s1, s2=s2: [rng.random(s1) < 0.4, rng.random(s2) < 0.4]),
        gpu=len(np.broadcast_shapes(tuple(s1), tuple(s2))) <= 4 and name != "zero"))
for name, shape in [("4d", [2, 3, 4, 5]), ("1d", [17]), ("scalar", []), ("big", [200, 300]), ("zero", [0, 4])]:
    CASES.append(OpCase("LOGICAL_NOT", name, (lambda s=shape: single_op_model(
        "LOGICAL_NOT", [(s, np.bool_)], [(s, np.bool_)])), (lambda rng, s=shape: [rng.random(s) < 0.5]),
        gpu=name not in ("zero",)))


# ------------------------------------------------------------------ SELECT / SELECT_V2
def select_case(op, name, sc, sx, sy, dt=F32, version=1, out=None, gpu=None, **kw):
    if out is None:
        out = list(np.broadcast_shapes(tuple(sc), tuple(sx), tuple(sy))) if op == "SELECT_V2" else list(sx)

    def model():
        return single_op_model(op, [(sc, np.bool_), (sx, dt), (sy, dt)], [(out, dt)], version=version)

    def inputs(rng):
        return [rng.random(sc) < 0.5, _gen(dt, sx, rng, -100, 100), _gen(dt, sy, rng, -100, 100)]
    if gpu is None:
        gpu = np.dtype(dt) == F32 and len(out) <= 4 and 0 not in out and len(sc) <= 4
    return OpCase(op, name, model, inputs, gpu=gpu, **kw)


for op in ["SELECT", "SELECT_V2"]:
    CASES += [
        select_case(op, "same", [2, 3, 4], [2, 3, 4], [2, 3, 4]),
        select_case(op, "int32", [5, 6], [5, 6], [5, 6], dt=np.int32, version=2),
        select_case(op, "int64", [7], [7], [7], dt=np.int64, version=2),
        select_case(op, "int8", [3, 4], [3, 4], [3, 4], dt=np.int8, version=2),
        select_case(op, "uint8", [3, 4], [3, 4], [3, 4], dt=np.uint8, version=2),
        select_case(op, "bool", [3, 4], [3, 4], [3, 4], dt=np.bool_, version=2),
        select_case(op, "scalar_cond", [], [4, 5], [4, 5]),
        select_case(op, "big", [100, 301], [100, 301], [100, 301]),
        select_case(op, "zero", [0, 3], [0, 3], [0, 3]),
        # All four hold one element: the output keeps its declared shape.
        select_case(op, "all_one_element", [1], [1, 1], [], out=[1, 1, 1], gpu=False,
                    note="one-element rule: output keeps the declared shape (CPU)"),
    ]
CASES += [
    select_case("SELECT", "row_cond", [4], [4, 3, 2], [4, 3, 2]),
    select_case("SELECT_V2", "bcast_cond", [3, 1], [3, 4], [3, 4]),
    select_case("SELECT_V2", "bcast_xy", [2, 3, 4], [4], [3, 1]),
    select_case("SELECT_V2", "bcast_all", [1, 5, 1], [4, 1, 1], [1, 1, 6]),
    select_case("SELECT_V2", "rank5", [2, 1, 3, 1, 2], [1, 2, 1, 2, 1], [2]),
    select_case("SELECT_V2", "scalar_xy", [3, 4], [], []),
    select_case("SELECT_V2", "int32_bcast", [3, 1], [1, 4], [3, 4], dt=np.int32, version=2),
]


# ------------------------------------------------------------------ WHERE
def where_case(name, shape, dt=np.bool_, const=False, version=1, p=0.4, data=None, numpy=False):
    def cond(rng):
        if data is not None:
            return np.asarray(data, dt)
        x = rng.random(shape) < p
        if np.dtype(dt) == np.bool_:
            return x
        return (x * rng.integers(1, 5, size=shape)).astype(dt)
    if const:
        c = cond(np.random.default_rng(5))

        def model():
            mb = ModelBuilder()
            ct = mb.add_const(c)
            o = mb.add_tensor([int(np.count_nonzero(c)), len(shape)], np.int64)
            mb.mark_output(o)
            # A graph input that is not used keeps LiteRT's input list non-empty.
            mb.add_op("WHERE", [ct], [o], version=version)
            return mb.build()
        return OpCase("WHERE", name, model, lambda rng: [], gpu=False, note="WHERE has a dynamic output; CPU only")

    def model():
        return single_op_model("WHERE", [(shape, dt)], [([1, len(shape)], np.int64)], version=version)
    if numpy:
        # LiteRT's Python get_tensor refuses 0-element outputs ("Invalid tensor size").
        return OpCase("WHERE", name, model, lambda rng: [cond(rng)], gpu=False, oracle="numpy",
                      ref_fn=lambda c: [np.argwhere(c).astype(np.int64)],
                      note="empty result: numpy oracle (LiteRT's Python API cannot read 0-element outputs)")
    return OpCase("WHERE", name, model, lambda rng: [cond(rng)], gpu=False,
                  note="WHERE has a dynamic output; CPU only")


CASES += [
    where_case("2d", [4, 5]),
    where_case("1d", [20]),
    where_case("4d", [2, 3, 2, 4]),
    where_case("none_true", [3, 3], p=0.0, numpy=True),
    where_case("all_true", [3, 3], p=1.1),
    where_case("zero", [0, 3], numpy=True),
    where_case("float", [3, 4], dt=F32, version=2),
    where_case("int32", [3, 4], dt=np.int32, version=2),
    where_case("const", [3, 4], const=True),
]


# ------------------------------------------------------------------ quantized comparisons
def qcmp_case(op, name, s1, s2, dt, q1, q2, gen=None):
    out = list(np.broadcast_shapes(tuple(s1), tuple(s2)))

    def model():
        mb = ModelBuilder()
        a = mb.add_input(s1, dt, quant=dict(scale=[q1[0]], zero_point=[q1[1]]))
        b = mb.add_input(s2, dt, quant=dict(scale=[q2[0]], zero_point=[q2[1]]))
        o = mb.add_tensor(out, np.bool_)
        mb.mark_output(o)
        mb.add_op(op, [a, b], [o], version=2)
        return mb.build()

    def inputs(rng):
        if gen:
            return list(gen(rng))
        info = np.iinfo(dt)
        return [rng.integers(info.min, info.max + 1, size=s1).astype(dt),
                rng.integers(info.min, info.max + 1, size=s2).astype(dt)]
    kind = "int8" if np.dtype(dt) == np.int8 else "uint8"
    return OpCase(op, name, model, inputs, gpu=False, quant=kind, note="quantized comparison: CPU")


def _tie_gen(dt):
    # Values whose real numbers coincide across the two scales (0.5 vs 0.25): ties and near-ties.
    def g(rng):
        lo = -60 if np.dtype(dt) == np.int8 else 0
        a = rng.integers(lo, lo + 120, size=64).astype(dt)
        real = (a.astype(np.int32) - (3 if lo else 130)) * 0.5
        b = np.clip(np.round(real / 0.25) + (-1 if lo else 120) + rng.integers(-1, 2, size=64),
                    np.iinfo(dt).min, np.iinfo(dt).max).astype(dt)
        return a, b
    return g


for op in CMP:
    CASES += [
        qcmp_case(op, "int8", [3, 4, 5], [3, 4, 5], np.int8, (0.5, 3), (0.25, -1)),
        qcmp_case(op, "int8_bcast", [2, 3, 4], [4], np.int8, (0.07, -10), (0.11, 20)),
        qcmp_case(op, "int8_ties", [64], [64], np.int8, (0.5, 3), (0.25, -1), gen=_tie_gen(np.int8)),
        qcmp_case(op, "uint8", [3, 4, 5], [1, 5], np.uint8, (0.5, 130), (0.25, 120)),
        qcmp_case(op, "uint8_ties", [64], [64], np.uint8, (0.5, 130), (0.25, 120), gen=_tie_gen(np.uint8)),
        qcmp_case(op, "uint8_same_params", [6, 7], [6, 7], np.uint8, (0.003, 128), (0.003, 128)),
    ]
