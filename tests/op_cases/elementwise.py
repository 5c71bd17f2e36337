"""Elementwise family: broadcast arithmetic (ADD SUB MUL DIV MAXIMUM MINIMUM SQUARED_DIFFERENCE
LOGICAL_AND PRELU), float unary ops (EXP LOGISTIC TANH RELU RELU6 RELU_N1_TO_1 HARD_SWISH
LEAKY_RELU RSQRT SQRT), CAST, QUANTIZE and DEQUANTIZE."""
import itertools

import numpy as np

from harness import OpCase
from tflite_gpu.testing.builder import ModelBuilder, single_op_model
from tflite_gpu.testing.quant import quant_kind

F32 = np.float32
ACTS = ["NONE", "RELU", "RELU_N1_TO_1", "RELU6", "TANH", "SIGN_BIT"]


def _bshape(a, b):
    return list(np.broadcast_shapes(tuple(a), tuple(b)))


def _gen(dt, shape, rng, lo=-4.0, hi=4.0, nonzero=False):
    dt = np.dtype(dt)
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(dt, np.integer):
        info = np.iinfo(dt)
        lo_i, hi_i = max(int(lo), int(info.min)), min(int(hi), int(info.max))
        x = rng.integers(lo_i, hi_i + 1, size=shape).astype(dt)
        if nonzero:
            x[x == 0] = 1
        return x
    x = rng.uniform(lo, hi, size=shape).astype(dt)
    if nonzero:
        x = np.where(np.abs(x) < 0.25, np.float32(0.25) * np.sign(x + 1e-9), x).astype(dt)
    return x


def binary_case(op, name, s1, s2, dt=F32, act=None, version=1, const2=False, lo=-4.0, hi=4.0,
                nonzero2=False, options="act", gen=None, out_shape=None, **kw):
    """A one-op binary model; input 2 is a graph input, or a constant when const2."""
    out = out_shape if out_shape is not None else _bshape(s1, s2)
    if options == "act":
        opts = dict(fused_activation_function=act) if act is not None else None
    else:
        opts = options
    if const2:
        c = _gen(dt, s2, np.random.default_rng(7), lo, hi, nonzero2)
        if gen is not None:
            c = gen(np.random.default_rng(7))[1]

        def model():
            return single_op_model(op, [(s1, dt)], [(out, dt)], options=opts, version=version, consts=[c])

        def inputs(rng):
            return [gen(rng)[0] if gen else _gen(dt, s1, rng, lo, hi)]
    else:
        def model():
            return single_op_model(op, [(s1, dt), (s2, dt)], [(out, dt)], options=opts, version=version)

        def inputs(rng):
            if gen:
                return list(gen(rng))
            return [_gen(dt, s1, rng, lo, hi), _gen(dt, s2, rng, lo, hi, nonzero2)]
    # float32 ops run on the GPU; so does LOGICAL_AND, whose bool tensors cross partition
    # boundaries as bytes (0/1).
    return OpCase(op, name, model, inputs, gpu=(np.dtype(dt) == F32 or op == "LOGICAL_AND"), **kw)


def unary_case(op, name, shape, lo=-4.0, hi=4.0, options=None, version=1, special=None, **kw):
    def model():
        return single_op_model(op, [shape], [shape], options=options, version=version)

    def inputs(rng):
        x = rng.uniform(lo, hi, size=shape).astype(F32)
        if special is not None:
            flat = x.reshape(-1)
            flat[:len(special)] = np.asarray(special, F32)[:flat.size]
        return [x]
    return OpCase(op, name, model, inputs, **kw)


CASES = []

# ------------------------------------------------------------------ ADD / SUB / MUL / DIV
BIG = [1, 48, 48, 33]          # 76k elements: several parallel chunks
SHAPES = [
    ("same4d", [1, 8, 8, 16], [1, 8, 8, 16]),
    ("chan", [2, 5, 7, 3], [3]),
    ("scalar", [2, 5, 7, 3], []),
    ("one", [2, 5, 7, 3], [1]),
    ("a_small", [3], [2, 4, 3]),
    ("scalar_first", [], [4, 5]),
    ("mid", [4, 1, 3], [1, 5, 1]),
    ("rows", [6, 1], [1, 7]),
    ("rank5", [2, 1, 3, 1, 5], [1, 4, 1, 2, 1]),
    ("rank6", [2, 3, 1, 2, 1, 3], [1, 1, 4, 1, 5, 1]),
    ("rank0", [], []),
    ("zero", [0, 3], [1, 3]),
    ("1x1", [1, 1, 1, 1], [1, 1, 1, 1]),
    ("odd", [1, 3, 5, 7], [1, 1, 5, 7]),
    ("big", BIG, BIG),
    ("big_chan", BIG, [33]),
    ("big_bcast", [3, 50, 50, 7], [50, 1, 7]),
    ("big_scalar", BIG, [1, 1, 1, 1]),
]
for op in ["ADD", "SUB", "MUL", "DIV"]:
    nz = op == "DIV"
    for name, s1, s2 in SHAPES:
        CASES.append(binary_case(op, name, s1, s2, act="NONE", nonzero2=nz))
    for act in ACTS:
        CASES.append(binary_case(op, f"act_{act}", [2, 4, 4, 5], [5], act=act, nonzero2=nz,
                                 lo=-8.0, hi=8.0))
        CASES.append(binary_case(op, f"act_{act}_same", [3, 17], [3, 17], act=act, nonzero2=nz,
                                 lo=-8.0, hi=8.0))
    CASES.append(binary_case(op, "no_options", [2, 3, 4], [2, 3, 4], options=None, nonzero2=nz))
    CASES.append(binary_case(op, "const", [1, 6, 6, 4], [1, 1, 1, 4], const2=True, act="RELU6",
                             nonzero2=nz))
    CASES.append(binary_case(op, "v2", [2, 3], [2, 3], act="RELU", version=2, nonzero2=nz))
    # int32: shape arithmetic.
    CASES.append(binary_case(op, "int32", [2, 3, 4], [2, 3, 4], dt=np.int32, act="NONE",
                             lo=-100, hi=100, nonzero2=nz))
    CASES.append(binary_case(op, "int32_bcast", [4], [], dt=np.int32, act="NONE", lo=-50, hi=50,
                             nonzero2=nz))
    CASES.append(binary_case(op, "int32_relu", [3, 5], [5], dt=np.int32, act="RELU", lo=-50,
                             hi=50, nonzero2=nz))
    CASES.append(binary_case(op, "int32_relu6", [3, 5], [3, 5], dt=np.int32, act="RELU6",
                             lo=-9, hi=9, nonzero2=nz))
    CASES.append(binary_case(op, "int32_tanh_ignored", [7], [7], dt=np.int32, act="TANH",
                             lo=-9, hi=9, nonzero2=nz))
    CASES.append(binary_case(op, "int32_big", [100, 200], [200], dt=np.int32, act="NONE",
                             lo=-1000, hi=1000, nonzero2=nz))
    if op != "DIV":
        CASES.append(binary_case(op, "int64", [2, 3, 4], [3, 4], dt=np.int64, act="NONE",
                                 lo=-10**6, hi=10**6))
        CASES.append(binary_case(op, "int64_relu_n1", [2, 3], [2, 3], dt=np.int64,
                                 act="RELU_N1_TO_1", lo=-3, hi=3))


# Inputs resized from the model's declared shapes (the harness resizes both interpreters).
for op in ["ADD", "MUL", "MAXIMUM"]:
    CASES.append(binary_case(op, "resized", [1, 4], [4], options=None,
                             gen=lambda r: (r.standard_normal((5, 3, 4)).astype(F32),
                                            r.standard_normal(4).astype(F32))))


def _wrap_gen(op):
    def gen(rng):
        a = np.array([2**31 - 1, -2**31, 2**30, -2**31, 5, -7], np.int32)
        b = np.array([1, -1, 4, 1, 3, 2], np.int32)
        return a, b
    return gen


for op in ["ADD", "SUB", "MUL", "DIV"]:
    CASES.append(binary_case(op, "int32_wrap", [6], [6], dt=np.int32, act="NONE", gen=_wrap_gen(op)))
CASES.append(binary_case("DIV", "int32_trunc", [8], [8], dt=np.int32, act="NONE", gen=lambda r: (
    np.array([-7, 7, -7, 7, 1, -1, 0, 100], np.int32), np.array([2, 2, -2, -2, 3, 3, -5, 7], np.int32))))


def _inf_gen(rng):
    a = np.array([np.inf, -np.inf, np.nan, 1e38, -1e38, 3.0, 0.0, -2.0], F32)
    b = np.array([1.0, 1.0, 1.0, 1e38, 1e38, np.inf, 0.0, np.nan], F32)
    return a, b


def _tile_gen(gen, reps):
    # Specials spread over a long vector: TFLite's vector body and scalar tail both see them.
    def g(rng):
        a, b = gen(rng)
        return np.tile(a, reps), np.tile(b, reps)
    return g


_NO_FP16 = dict(gpu_fp16=False, note="inputs near FLT_MAX/inf: beyond fp16 storage range")
for op in ["ADD", "SUB", "MUL", "DIV"]:
    for act in ["NONE", "RELU", "RELU6"]:
        CASES.append(binary_case(op, f"inf_nan_{act}", [8], [8], act=act, gen=_inf_gen, **_NO_FP16))
    CASES.append(binary_case(op, "inf_nan_long", [72], [72], act="NONE", gen=_tile_gen(_inf_gen, 9), **_NO_FP16))
    CASES.append(binary_case(op, "inf_nan_long_scalar", [72], [1], act="RELU", gen=lambda r: (
        np.tile(_inf_gen(r)[0], 9), np.array([0.0], F32)), **_NO_FP16))

# ------------------------------------------------------------------ MAXIMUM / MINIMUM / SQDIFF


def _nan_gen(rng):
    a = np.array([np.nan, 1, 2, np.nan, -np.inf, 0.0, -0.0, 3], F32)
    b = np.array([1, np.nan, 1, np.nan, 1, -0.0, 0.0, np.inf], F32)
    return a, b


for op in ["MAXIMUM", "MINIMUM", "SQUARED_DIFFERENCE"]:
    for name, s1, s2 in SHAPES:
        CASES.append(binary_case(op, name, s1, s2, options=None))
    CASES.append(binary_case(op, "nan", [8], [8], options=None, gen=_nan_gen))
    CASES.append(binary_case(op, "nan_bcast", [8], [1], options=None,
                             gen=lambda r: (_nan_gen(r)[0], np.array([np.nan], F32))))
    CASES.append(binary_case(op, "nan_long", [72], [72], options=None, gen=_tile_gen(_nan_gen, 9)))
    CASES.append(binary_case(op, "nan_long_bcast", [72], [1], options=None,
                             gen=lambda r: (np.tile(_nan_gen(r)[0], 9), np.array([np.nan], F32))))
    CASES.append(binary_case(op, "const", [1, 4, 4, 3], [3], options=None, const2=True))
    CASES.append(binary_case(op, "int32", [3, 4, 5], [4, 1], dt=np.int32, options=None,
                             lo=-1000, hi=1000))
    CASES.append(binary_case(op, "int32_same", [33], [33], dt=np.int32, options=None,
                             lo=-1000, hi=1000))
    if op != "SQUARED_DIFFERENCE":
        for dt in [np.int64, np.int8, np.uint8, np.int16]:
            CASES.append(binary_case(op, np.dtype(dt).name, [2, 3, 4], [4], dt=dt, options=None,
                                     lo=-200, hi=300, version=2))
        CASES.append(binary_case(op, "v4", [2, 3], [2, 3], options=None, version=4))

# ------------------------------------------------------------------ LOGICAL_AND
for name, s1, s2 in [("same", [2, 3, 4], [2, 3, 4]), ("bcast", [2, 3, 4], [3, 1]),
                     ("scalar", [5, 6], []), ("rank5", [2, 1, 3, 1, 2], [1, 2, 1, 2, 1]),
                     ("big", [300, 301], [301]), ("zero", [0, 2], [2])]:
    CASES.append(binary_case("LOGICAL_AND", name, s1, s2, dt=np.bool_, options=None))

# ------------------------------------------------------------------ PRELU


def _prelu(name, shape, ashape, const=True, lo=-4.0, hi=4.0):
    def gen(rng):
        return (rng.uniform(lo, hi, size=shape).astype(F32),
                rng.uniform(-1.0, 1.0, size=ashape).astype(F32))
    return binary_case("PRELU", name, shape, ashape, options=None, const2=const, gen=gen,
                       out_shape=list(shape))


CASES += [
    _prelu("chan", [1, 6, 6, 3], [3]),
    _prelu("chan_111c", [2, 5, 5, 7], [1, 1, 7]),
    _prelu("full", [1, 4, 4, 5], [1, 4, 4, 5]),
    _prelu("hw", [2, 4, 5, 3], [4, 1, 3]),
    _prelu("scalar", [2, 4, 5, 3], [1]),
    _prelu("input_alpha", [2, 3, 3, 4], [1, 1, 4], const=False),
    _prelu("rank2", [7, 9], [9]),
    _prelu("rank5", [2, 3, 2, 3, 4], [1, 1, 1, 4]),
    _prelu("big", [1, 64, 64, 17], [17]),
    _prelu("specials", [8], [8]),
]
CASES[-1].inputs = lambda rng: [np.array([-np.inf, -1, -0.0, 0.0, np.nan, 2, np.inf, -3], F32)]
CASES.append(_prelu("specials_long", [72], [72], const=False))
CASES[-1].inputs = lambda rng: [np.tile(np.array([-np.inf, -1, -0.0, 0.0, np.nan, 2, np.inf, -3], F32), 9),
                                np.tile(np.array([0.5, np.nan, 2, -1, 0.3, np.inf, -np.inf, 0.0], F32), 9)]

# ------------------------------------------------------------------ unary float ops
EDGE = [-np.inf, np.inf, np.nan, 0.0, -0.0, 1e-30, -1e-30, 88.0, -88.0, 100.0, -100.0, 1e30, -1e30]
UNARY = {
    "EXP": dict(lo=-10, hi=10, versions=[1, 2]),
    "LOGISTIC": dict(lo=-20, hi=20, versions=[1, 2, 3]),
    "TANH": dict(lo=-6, hi=6, versions=[1, 2, 3]),
    "RELU": dict(lo=-4, hi=4, versions=[1, 2, 3]),
    "RELU6": dict(lo=-3, hi=9, versions=[1, 2, 3]),
    "RELU_N1_TO_1": dict(lo=-3, hi=3, versions=[1]),
    "HARD_SWISH": dict(lo=-7, hi=7, versions=[1]),
    "LEAKY_RELU": dict(lo=-4, hi=4, versions=[1, 2], options=dict(alpha=0.2)),
    "RSQRT": dict(lo=0.01, hi=50, versions=[1, 2, 3]),
    "SQRT": dict(lo=0.0, hi=50, versions=[1]),
}
for op, d in UNARY.items():
    opts = d.get("options")
    for v in d["versions"]:
        CASES.append(unary_case(op, f"v{v}", [2, 5, 5, 3], d["lo"], d["hi"], options=opts, version=v))
    CASES.append(unary_case(op, "rank1_odd", [37], d["lo"], d["hi"], options=opts))
    CASES.append(unary_case(op, "1x1", [1, 1, 1, 1], d["lo"], d["hi"], options=opts))
    CASES.append(unary_case(op, "rank0", [], d["lo"], d["hi"], options=opts))
    CASES.append(unary_case(op, "zero", [0, 4], d["lo"], d["hi"], options=opts))
    CASES.append(unary_case(op, "big", [1, 80, 80, 21], d["lo"], d["hi"], options=opts))
    CASES.append(unary_case(op, "rank6", [2, 3, 2, 3, 2, 5], d["lo"], d["hi"], options=opts))
    CASES.append(unary_case(op, "edges", [4, 16], -30, 30, options=opts, special=EDGE, gpu=False))
CASES += [
    unary_case("TANH", "tiny", [1000], -1e-3, 1e-3),
    unary_case("TANH", "mid", [1000], -1.0, 1.0),
    unary_case("LOGISTIC", "tails", [1000], -90, 90),
    unary_case("EXP", "wide", [1000], -87, 88, gpu_fp16=False,
               note="exp up to 1.6e38: most results are beyond fp16's 65504"),
    unary_case("EXP", "subnormal", [1000], -103, -87, gpu_fp16=False,
               note="results below 1e-38 are zero in fp16 storage"),
    unary_case("LEAKY_RELU", "no_options", [3, 7], options=None),
    unary_case("LEAKY_RELU", "alpha2", [3, 7], options=dict(alpha=2.0)),
    unary_case("LEAKY_RELU", "alpha_neg", [3, 7], options=dict(alpha=-0.5)),
    unary_case("LEAKY_RELU", "alpha_small", [4, 9, 9, 3], options=dict(alpha=0.01)),
    unary_case("RSQRT", "negative_nan", [64], -2, 2, gpu=False),
    unary_case("SQRT", "negative_nan", [64], -2, 2, gpu=False),
]

# ------------------------------------------------------------------ CAST
CAST_TYPES = [np.float32, np.float16, np.float64, np.int8, np.int16, np.int32, np.int64,
              np.uint8, np.uint16, np.uint32, np.bool_]


def _cast_values(src, rng, n=24):
    src = np.dtype(src)
    if src == np.bool_:
        return rng.random(n) < 0.5
    if np.issubdtype(src, np.floating):
        v = rng.uniform(-300, 300, n)
        v[:6] = [0.0, -0.0, 0.5, -0.5, 2.5, -1.99]
        return v.astype(src)
    info = np.iinfo(src)
    v = rng.integers(max(info.min, -70000), min(info.max, 70000) + 1, n, dtype=np.int64)
    v[:2] = [info.min, info.max]
    return v.astype(src)


def cast_case(src, dst, name=None, values=None, shape=None):
    src, dst = np.dtype(src), np.dtype(dst)
    n = 24 if values is None else len(values)
    shape = shape or [n]

    def model():
        return single_op_model("CAST", [(shape, src)], [(shape, dst)], options=None)

    def inputs(rng):
        if values is not None:
            return [np.asarray(values, src).reshape(shape)]
        return [_cast_values(src, rng, int(np.prod(shape))).reshape(shape)]
    # The GPU takes BOOL -> FLOAT32, FLOAT32 -> BOOL and FLOAT32 -> FLOAT32 (gpu_select_cast.cc).
    gpu = (src, dst) in _CAST_GPU and 0 not in shape and 1 <= len(shape) <= 4
    return OpCase("CAST", name or f"{src.name}_to_{dst.name}", model, inputs, gpu=gpu)


_CAST_GPU = {(np.dtype(np.bool_), np.dtype(np.float32)), (np.dtype(np.float32), np.dtype(np.bool_)),
             (np.dtype(np.float32), np.dtype(np.float32))}


for s, d in itertools.product(CAST_TYPES, CAST_TYPES):
    CASES.append(cast_case(s, d))
_SAT = [300.5, -300.5, 1e10, -1e10, np.nan, np.inf, -np.inf, 127.9, 255.9, -128.9, 65535.5,
        3e9, -0.7, 0.7, 2147483520.0, -2147483648.0]
for d in [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.bool_]:
    for s in [np.float32, np.float64]:
        CASES.append(cast_case(s, d, f"saturate_{np.dtype(s).name}_to_{np.dtype(d).name}", _SAT))
CASES += [
    cast_case(np.float32, np.float16, "f32_to_f16_round",
              [1e6, -1e6, 1e-8, 6e-8, 2049, 2051, 65504, 65519.9, 65520, 0.1, 1 / 3, -2.5e-6,
               np.nan, np.inf, -np.inf, 5.96e-8]),
    cast_case(np.float64, np.float16, "f64_to_f16_round",
              [1e6, 2049.0000001, 2050.9999999, 65519.99, 0.1, 1 / 3, 2.9802322387695312e-08,
               2.98023223876953125e-08 * 1.0000001]),
    cast_case(np.int64, np.float16, "i64_to_f16_round", [2**40, -70000, 2049, 2051, 65519, 65520]),
    cast_case(np.int32, np.int8, "i32_to_i8_wrap", [300, -300, 128, -129, 255, 256]),
    cast_case(np.int64, np.int32, "i64_to_i32_wrap", [2**40 + 5, -2**33 - 1, 2**31, -2**31 - 1]),
    cast_case(np.float32, np.int32, "f32_to_i32_4d", shape=[2, 3, 4, 5]),
    cast_case(np.int32, np.float32, "i32_to_f32_big", shape=[200, 300]),
    cast_case(np.float32, np.int32, "rank0", shape=[]),
    cast_case(np.float32, np.bool_, "f32_to_bool_4d", shape=[2, 3, 4, 5]),
    cast_case(np.bool_, np.float32, "bool_to_f32_4d", shape=[2, 3, 4, 5]),
]


def compare_cast_model(shape):
    """TFLite's GPU pattern: a comparison's BOOL output cast to float and used by a float op."""
    mb = ModelBuilder()
    a = mb.add_input(shape, np.float32, name="a")
    b = mb.add_input(shape, np.float32, name="b")
    m = mb.add_tensor(shape, np.bool_, name="mask")
    f = mb.add_tensor(shape, np.float32, name="maskf")
    y = mb.add_tensor(shape, np.float32, name="y")
    mb.add_op("LESS", [a, b], [m])
    mb.add_op("CAST", [m], [f])
    mb.add_op("MUL", [f, a], [y])
    mb.mark_output(y)
    return mb.build()


CASES.append(OpCase("CAST", "less_cast_mul", lambda: compare_cast_model([1, 6, 5, 7]),
                    lambda rng: [rng.standard_normal((1, 6, 5, 7)).astype(np.float32),
                                 rng.standard_normal((1, 6, 5, 7)).astype(np.float32)]))

# ------------------------------------------------------------------ DEQUANTIZE / QUANTIZE


def q_model(op, in_dt, out_dt, shape, qin=None, qout=None, const=None, version=1):
    mb = ModelBuilder()
    if const is not None:
        # Constant input folded at allocation; add a graph input so the model has one.
        x = mb.add_const(const, name="w", quant=qin)
        y = mb.add_tensor(shape, dtype=out_dt, name="dq", quant=qout)
        mb.add_op(op, [x], [y], version=version)
        z_in = mb.add_input(shape, dtype=np.float32, name="x")
        z = mb.add_tensor(shape, dtype=np.float32, name="y")
        mb.add_op("ADD", [z_in, y], [z], options=dict(fused_activation_function="NONE"))
        mb.mark_output(z)
        mb.add_signature("serving_default", {"x": z_in}, {"y": z})
        return mb.build()
    x = mb.add_input(shape, dtype=in_dt, name="x", quant=qin)
    y = mb.add_tensor(shape, dtype=out_dt, name="y", quant=qout)
    mb.add_op(op, [x], [y], version=version)
    mb.mark_output(y)
    mb.add_signature("serving_default", {"x": x}, {"y": y})
    return mb.build()


def q_case(op, name, in_dt, out_dt, shape, qin=None, qout=None, gen=None, const=None,
           version=1, tol=1e-5):
    in_dt, out_dt = np.dtype(in_dt), np.dtype(out_dt)

    def model():
        return q_model(op, in_dt, out_dt, shape, qin, qout, const, version)

    def inputs(rng):
        if const is not None:
            return [rng.uniform(-1, 1, shape).astype(F32)]
        if gen is not None:
            return [gen(rng)]
        if in_dt == F32:
            return [rng.uniform(-3, 3, shape).astype(F32)]
        if in_dt == np.float16:
            return [rng.uniform(-100, 100, shape).astype(np.float16)]
        info = np.iinfo(in_dt)
        return [rng.integers(info.min, int(info.max) + 1, shape, dtype=np.int64).astype(in_dt)]
    kind = quant_kind(in_dt) or quant_kind(out_dt)
    return OpCase(op, name, model, inputs, tol=tol, gpu=False, quant=kind)


def pt(scale, zp):
    return dict(scale=[scale], zero_point=[zp])


def pc(scales, zps, dim):
    return dict(scale=list(scales), zero_point=list(zps), quantized_dimension=dim)


_rng = np.random.default_rng(3)
CASES += [
    q_case("DEQUANTIZE", "int8", np.int8, F32, [2, 5, 5, 3], qin=pt(0.05, -3)),
    q_case("DEQUANTIZE", "uint8", np.uint8, F32, [2, 5, 5, 3], qin=pt(0.1, 128), version=1),
    q_case("DEQUANTIZE", "int16", np.int16, F32, [4, 33], qin=pt(0.001, 0), version=4),
    q_case("DEQUANTIZE", "fp16", np.float16, F32, [3, 7, 11], version=3),
    q_case("DEQUANTIZE", "fp16_specials", np.float16, F32, [12], gen=lambda r: np.array(
        [0.0, -0.0, 65504, -65504, np.inf, -np.inf, np.nan, 6e-8, -6e-8, 6.1e-5, 1e-5, 3.14],
        np.float16)),
    q_case("DEQUANTIZE", "fp16_big", np.float16, F32, [1, 64, 64, 9]),
    q_case("DEQUANTIZE", "int8_big", np.int8, F32, [1, 64, 64, 9], qin=pt(0.02, 5)),
    q_case("DEQUANTIZE", "int8_perch0", np.int8, F32, [4, 3, 3, 5],
           qin=pc(_rng.uniform(0.01, 0.1, 4), [0, 1, -2, 3], 0), version=4),
    q_case("DEQUANTIZE", "int8_perch3", np.int8, F32, [2, 3, 3, 5],
           qin=pc(_rng.uniform(0.01, 0.1, 5), [0] * 5, 3), version=5),
    q_case("DEQUANTIZE", "int8_perch_last", np.int8, F32, [1, 3, 3, 7],
           qin=pc(_rng.uniform(0.01, 0.1, 7), [0, 1, 2, -3, 4, 5, -6], 3), version=4),
    q_case("DEQUANTIZE", "uint8_perch_last_big", np.uint8, F32, [1, 40, 40, 33],
           qin=pc(_rng.uniform(0.01, 0.1, 33), _rng.integers(0, 256, 33).tolist(), 3), version=4),
    q_case("DEQUANTIZE", "uint8_perch1", np.uint8, F32, [2, 6, 7],
           qin=pc(_rng.uniform(0.01, 0.1, 6), [120, 128, 130, 0, 255, 1], 1), version=6),
    q_case("DEQUANTIZE", "int8_no_quant", np.int8, F32, [6]),
    q_case("DEQUANTIZE", "zero", np.int8, F32, [0, 3], qin=pt(0.1, 0)),
    # Constant weights: folded once at allocation.
    q_case("DEQUANTIZE", "const_fp16", np.float16, F32, [4, 8],
           const=_rng.uniform(-2, 2, (4, 8)).astype(np.float16)),
    q_case("DEQUANTIZE", "const_int8_perch", np.int8, F32, [4, 8],
           qin=pc([0.01, 0.02, 0.03, 0.04], [0, 0, 0, 0], 0),
           const=_rng.integers(-127, 128, (4, 8)).astype(np.int8)),
    q_case("DEQUANTIZE", "const_int8", np.int8, F32, [4, 8], qin=pt(0.05, 2),
           const=_rng.integers(-128, 128, (4, 8)).astype(np.int8)),
]

for dt, zp in [(np.int8, 0), (np.int8, -5), (np.uint8, 128), (np.uint8, 3), (np.int16, 0)]:
    nm = f"{np.dtype(dt).name}_zp{zp}"
    CASES.append(q_case("QUANTIZE", nm, F32, dt, [2, 5, 5, 3], qout=pt(0.02, zp)))
    CASES.append(q_case("QUANTIZE", nm + "_sat", F32, dt, [2, 50], qout=pt(0.001, zp)))


def _ties(scale, n=64):
    # Exact halves: TFLite's vector body (first n // 8 * 8 elements) rounds them to even, its
    # scalar tail away from zero.
    def gen(rng):
        k = rng.integers(-200, 200, n)
        return ((k + 0.5) * scale).astype(F32)
    return gen


CASES += [
    q_case("QUANTIZE", "ties_int8", F32, np.int8, [64], qout=pt(0.05, 1), gen=_ties(0.05)),
    q_case("QUANTIZE", "ties_uint8", F32, np.uint8, [64], qout=pt(0.25, 128), gen=_ties(0.25)),
    q_case("QUANTIZE", "ties_int16", F32, np.int16, [64], qout=pt(0.125, 0), gen=_ties(0.125)),
    q_case("QUANTIZE", "ties_int8_tail", F32, np.int8, [67], qout=pt(0.25, 0), gen=_ties(0.25, 67)),
    q_case("QUANTIZE", "ties_uint8_tail", F32, np.uint8, [7], qout=pt(0.5, 100), gen=_ties(0.5, 7)),
    q_case("QUANTIZE", "ties_perch", F32, np.int8, [2, 16], qout=pc([0.25, 0.5], [0, 3], 0),
           gen=lambda r: np.stack([_ties(0.25, 16)(r), _ties(0.5, 16)(r)])),
    q_case("QUANTIZE", "recip_vs_div_perch", F32, np.int8, [2, 29], qout=pc([0.1, 0.3], [0, 0], 0),
           gen=lambda r: np.nextafter(np.stack([_ties(0.1, 29)(r), _ties(0.3, 29)(r)]), np.float32(
               np.inf) * np.sign(r.standard_normal((2, 29)))).astype(F32)),
    q_case("QUANTIZE", "recip_vs_div", F32, np.int16, [61], qout=pt(0.1, 0), gen=lambda r: np.nextafter(
        _ties(0.1, 61)(r), np.float32(np.inf) * np.sign(r.standard_normal(61))).astype(F32)),
    q_case("QUANTIZE", "specials", F32, np.int8, [12], qout=pt(0.1, 3), gen=lambda r: np.array(
        [np.nan, np.inf, -np.inf, 1e10, -1e10, 3e9, 12.7, -12.8, 0.05, -0.05, 0.0, -0.0], F32)),
    q_case("QUANTIZE", "specials_negzp", F32, np.int8, [6], qout=pt(0.1, -3), gen=lambda r: np.array(
        [np.nan, np.inf, -np.inf, 1e10, -1e10, 1.0], F32)),
    q_case("QUANTIZE", "large_values", F32, np.int16, [19], qout=pt(1.0, 7), gen=lambda r: np.array(
        [4194303.5, 4194304.5, 8388609, -8388609, 2.1e9, -2.1e9, 2147483520, -2147483648, 1e5,
         -1e5, 32760.5, -32768.5, 32767.5, 2.5, -2.5, 3e9, -3e9, 32761.5, -32769.5], F32)),
    q_case("QUANTIZE", "huge_zero_point", F32, np.int8, [19], qout=pt(0.5, 70000),
           gen=lambda r: np.concatenate([r.uniform(-1e5, 1e5, 16), [np.nan, 1e12, -1e12]]).astype(F32)),
    q_case("QUANTIZE", "huge_zero_point_neg", F32, np.int16, [2, 9], qout=pc([0.5, 1e-6], [-70000, 90000], 0),
           gen=lambda r: np.concatenate([r.uniform(-1e5, 1e5, 15), [np.nan, 1e12, -1e12]]).astype(F32).reshape(2, 9)),
    q_case("QUANTIZE", "big", F32, np.int8, [1, 64, 64, 9], qout=pt(0.02, -1)),
    q_case("QUANTIZE", "zero", F32, np.int8, [0, 5], qout=pt(0.02, 0)),
    q_case("QUANTIZE", "perch0", F32, np.int8, [4, 3, 3, 5],
           qout=pc(_rng.uniform(0.01, 0.05, 4), [0, 1, -2, 3], 0)),
    q_case("QUANTIZE", "perch3", F32, np.int8, [2, 3, 3, 5],
           qout=pc(_rng.uniform(0.01, 0.05, 5), [0] * 5, 3)),
    q_case("QUANTIZE", "perch_last", F32, np.int8, [2, 3, 3, 7],
           qout=pc(_rng.uniform(0.01, 0.05, 7), [0, 1, -2, 3, 0, 5, -1], 3)),
    q_case("QUANTIZE", "perch_last_big_int16", F32, np.int16, [1, 40, 40, 33],
           qout=pc(_rng.uniform(1e-4, 1e-3, 33), [0] * 33, 3)),
    q_case("QUANTIZE", "perch1_uint8", F32, np.uint8, [2, 6, 7],
           qout=pc(_rng.uniform(0.01, 0.05, 6), [120, 128, 130, 0, 255, 1], 1)),
    # Requantization.
    q_case("QUANTIZE", "i8_to_u8_shift", np.int8, np.uint8, [2, 5, 5, 3], qin=pt(0.1, -3),
           qout=pt(0.1, 125), version=2),
    q_case("QUANTIZE", "u8_to_i8_shift", np.uint8, np.int8, [2, 5, 5, 3], qin=pt(0.1, 130),
           qout=pt(0.1, 2), version=2),
    q_case("QUANTIZE", "i8_to_i8", np.int8, np.int8, [3, 40], qin=pt(0.1, 1), qout=pt(0.37, -3)),
    q_case("QUANTIZE", "i8_to_i8_small", np.int8, np.int8, [13], qin=pt(0.1, 1), qout=pt(0.37, -3)),
    q_case("QUANTIZE", "u8_to_u8_down", np.uint8, np.uint8, [2, 37], qin=pt(0.01, 128), qout=pt(0.09, 130)),
    q_case("QUANTIZE", "i8_to_i16_down", np.int8, np.int16, [2, 37], qin=pt(0.001, 1), qout=pt(0.0037, 0)),
    q_case("QUANTIZE", "i8_to_i8_up", np.int8, np.int8, [3, 40], qin=pt(0.5, 1), qout=pt(0.03, 4)),
    q_case("QUANTIZE", "i8_to_u8", np.int8, np.uint8, [3, 40], qin=pt(0.1, 1), qout=pt(0.2, 100)),
    q_case("QUANTIZE", "u8_to_u8", np.uint8, np.uint8, [3, 40], qin=pt(0.013, 128), qout=pt(0.02, 120)),
    q_case("QUANTIZE", "u8_to_i8", np.uint8, np.int8, [3, 40], qin=pt(0.05, 128), qout=pt(0.04, -10)),
    q_case("QUANTIZE", "i8_to_i16", np.int8, np.int16, [3, 40], qin=pt(0.1, 1), qout=pt(0.001, 0)),
    q_case("QUANTIZE", "u8_to_i16", np.uint8, np.int16, [3, 40], qin=pt(0.1, 128), qout=pt(0.002, 0)),
    q_case("QUANTIZE", "i16_to_i8", np.int16, np.int8, [3, 40], qin=pt(0.001, 0), qout=pt(0.2, 3)),
    q_case("QUANTIZE", "i16_to_i16", np.int16, np.int16, [3, 40], qin=pt(0.001, 0), qout=pt(0.0037, 0)),
    q_case("QUANTIZE", "i16_to_i32", np.int16, np.int32, [3, 40], qin=pt(0.001, 0), qout=pt(0.0037, 0)),
    q_case("QUANTIZE", "i32_to_i8", np.int32, np.int8, [3, 40], qin=pt(0.0001, 0), qout=pt(0.37, -3),
           gen=lambda r: r.integers(-2**31, 2**31, (3, 40), dtype=np.int64).astype(np.int32)),
    q_case("QUANTIZE", "i32_to_i16", np.int32, np.int16, [3, 40], qin=pt(1e-5, 0), qout=pt(0.01, 0),
           gen=lambda r: r.integers(-3000000, 3000000, (3, 40)).astype(np.int32)),
    q_case("QUANTIZE", "i8_same", np.int8, np.int8, [50], qin=pt(0.1, 0), qout=pt(0.1, 0)),
    q_case("QUANTIZE", "requant_big", np.int8, np.uint8, [1, 64, 64, 9], qin=pt(0.1, 1),
           qout=pt(0.3, 128)),
]

# ------------------------------------------------------------------ quantized unary (issue 7)
# int8 / uint8 / int16 vs LiteRT's builtin kernels, exact; OpCase.quant names the kernel.
from tflite_gpu.testing import quant as Q  # noqa: E402

I8, U8, I16 = np.dtype(np.int8), np.dtype(np.uint8), np.dtype(np.int16)


def qcase(op, name, ins, outs, options=None, version=1, consts=None, gen=None, **kw):
    """ins/outs: (shape, dtype, QParams); inputs: random integers over each input's whole range."""
    dt = np.dtype(ins[0][1])

    def model():
        return Q.single_op_model_q(op, ins, outs, options=options, version=version, consts=consts)

    def inputs(rng):
        if gen is not None:
            return gen(rng)
        return [Q.random_q(rng, s, d) for s, d, _ in ins]
    return OpCase(op, f"q_{name}", model, inputs, gpu=False, quant=Q.quant_kind(dt), **kw)


def all_values(shape, dt):
    """Every value of an 8-bit type (tiled), so a table is checked entry by entry."""
    def gen(rng):
        n = int(np.prod(shape))
        info = np.iinfo(dt)
        v = np.arange(int(info.min), int(info.max) + 1)
        return [np.resize(rng.permutation(v), n).astype(dt).reshape(shape)]
    return gen


_S = [2, 9, 15]   # 270 elements: every 8-bit value, vector body and tail
# (in params, out params) per type: shrinking, growing, edge zero points.
_UQ = {I8: [(Q.QParams(0.05, -128), Q.QParams(0.04, -3)), (Q.QParams(0.1, 10), Q.QParams(0.3, 127)),
            (Q.QParams(0.02, 0), Q.QParams(0.02, 0))],
       U8: [(Q.QParams(0.05, 0), Q.QParams(0.04, 128)), (Q.QParams(0.1, 200), Q.QParams(0.03, 255)),
            (Q.QParams(0.02, 128), Q.QParams(0.02, 128))],
       I16: [(Q.QParams(0.001, 0), Q.QParams(0.0007, 0)), (Q.QParams(0.0002, 0), Q.QParams(0.001, 0))]}
for op, types, ver in [("RELU", (I8, U8, I16), 2), ("RELU6", (I8, U8, I16), 2), ("RELU_N1_TO_1", (I8, U8), 1),
                       ("LEAKY_RELU", (I8, U8, I16), 2), ("HARD_SWISH", (I8, U8), 1), ("TANH", (I8, U8), 2)]:
    for dt in types:
        for k, (qi, qo) in enumerate(_UQ[dt]):
            opts = dict(alpha=[0.2, -0.7, 1.5][k % 3]) if op == "LEAKY_RELU" else None
            gen = all_values(_S, dt) if dt != I16 else None
            CASES.append(qcase(op, f"{dt.name}_{k}", [(_S, dt, qi)], [(_S, dt, qo)], opts, version=ver, gen=gen))
# LOGISTIC: TFLite fixes the output scale at 1/256 (the converter also picks zero point -128 for
# int8, 0 for uint8; TFLite accepts any).
for dt, zps in [(I8, (-128, 0, 5)), (U8, (0, 128, 3))]:
    for k, (qi, _) in enumerate(_UQ[dt]):
        CASES.append(qcase("LOGISTIC", f"{dt.name}_{k}", [(_S, dt, qi)], [(_S, dt, Q.QParams(1 / 256, zps[k]))],
                           version=2, gen=all_values(_S, dt)))
# LOGISTIC / TANH int16 (issue 7): TFLite's general-scale table path, every int16 value once
# ([1, 256, 256] = 65536 elements, permuted), input scales below/above 2^-12, tiny and large; output
# grid 1/32768, zero points 0 as TFLite requires.
def _all_int16(rng):
    return [rng.permutation(np.arange(-32768, 32768)).astype(np.int16).reshape(1, 256, 256)]


def _exact_int16(fn, s):
    """The exact function on the dequantized input, quantized to the 1/32768 grid (numpy): what the
    GPU delegate's float view approximates (TFLite's int16 kernels use tables; see test_gpu_quant)."""
    def ref(x):
        v = np.round(fn(x.astype(np.float64) * s) * 32768.0)
        return [np.clip(v, -32768, 32767).astype(np.int16)]
    return ref


for op in ("LOGISTIC", "TANH"):
    fn = (lambda v: 1 / (1 + np.exp(-v))) if op == "LOGISTIC" else np.tanh
    for k, s in enumerate([0.001, 0.00012, 1 / 3000, 0.02, 2.0 ** -13]):
        CASES.append(qcase(op, f"int16_{k}", [([1, 256, 256], I16, Q.QParams(s, 0))],
                           [([1, 256, 256], I16, Q.QParams(1 / 32768, 0))], version=3, gen=_all_int16,
                           ref_fn=_exact_int16(fn, s)))
# EXP int8 (issue 7): TFLite's float table (every int8 value), shrinking / growing grids, edge zero
# points, saturation at the top of the output grid.
for k, (qi, qo) in enumerate([(Q.QParams(0.05, 3), Q.QParams(0.2, -100)), (Q.QParams(0.02, -128), Q.QParams(0.01, -128)),
                              (Q.QParams(0.1, 0), Q.QParams(0.5, -128)), (Q.QParams(0.01, 127), Q.QParams(0.004, 0))]):
    CASES.append(qcase("EXP", f"int8_{k}", [(_S, I8, qi)], [(_S, I8, qo)], version=2, gen=all_values(_S, I8)))
CASES.append(qcase("EXP", "int8_big", [([1, 56, 56, 24], I8, Q.QParams(0.03, -20))],
                   [([1, 56, 56, 24], I8, Q.QParams(0.1, -128))], version=2))
# Large tensors: the parallel table kernel.
for op in ("RELU6", "HARD_SWISH", "LOGISTIC"):
    qo = Q.QParams(1 / 256, -128) if op == "LOGISTIC" else Q.QParams(0.03, -10)
    CASES.append(qcase(op, "int8_big", [([1, 56, 56, 24], I8, Q.QParams(0.05, 3))], [([1, 56, 56, 24], I8, qo)],
                       version=2 if op != "HARD_SWISH" else 1))

# ------------------------------------------------------------------ quantized ADD / SUB / MUL
# Broadcast shapes of the float cases (TFLite splits them into vector bodies and scalar tails by
# its five-fold broadcast: each split is checked), both input orders, every activation, edge zero
# points, different input scales, saturation.
_BQ = {I8: [(Q.QParams(0.05, -128), Q.QParams(0.02, 127), Q.QParams(0.06, -5)),
            (Q.QParams(0.1, 3), Q.QParams(0.1, 3), Q.QParams(0.1, 3)),
            (Q.QParams(0.03, 0), Q.QParams(0.2, -20), Q.QParams(0.01, 0))],
       U8: [(Q.QParams(0.05, 0), Q.QParams(0.02, 255), Q.QParams(0.06, 128)),
            (Q.QParams(0.1, 128), Q.QParams(0.1, 128), Q.QParams(0.1, 128)),
            (Q.QParams(0.03, 17), Q.QParams(0.2, 200), Q.QParams(0.01, 0))]}
_QSHAPES = [s for s in SHAPES if s[0] not in ("rank0", "big_bcast")] + [
    ("first_fast", [1, 4, 1, 20], [3, 4, 5, 20]), ("tail_7", [2, 23], [2, 23]),
    ("second_fast_y4_1", [3, 4, 5], [3, 1, 1]), ("generic", [2, 1, 3, 1], [1, 4, 1, 5])]
for op in ("ADD", "SUB", "MUL"):
    for dt in (I8, U8):
        for k, (name, s1, s2) in enumerate(_QSHAPES):
            q1, q2, qo = _BQ[dt][k % 3]
            if op == "MUL":
                qo = Q.QParams(qo.scale * 4, qo.zero_point)
            CASES.append(qcase(op, f"{dt.name}_{name}", [(s1, dt, q1), (s2, dt, q2)],
                               [(_bshape(s1, s2), dt, qo)], dict(fused_activation_function="NONE"), version=2))
        for act in ["RELU", "RELU_N1_TO_1", "RELU6", "TANH"]:
            q1, q2, qo = _BQ[dt][0]
            CASES.append(qcase(op, f"{dt.name}_act_{act}", [([2, 4, 4, 5], dt, q1), ([5], dt, q2)],
                               [([2, 4, 4, 5], dt, qo)], dict(fused_activation_function=act), version=2))
        # Saturation: a small output scale.
        q1, q2, _ = _BQ[dt][2]
        CASES.append(qcase(op, f"{dt.name}_saturate", [([3, 37], dt, q1), ([3, 37], dt, q2)],
                           [([3, 37], dt, Q.QParams(0.004, _BQ[dt][2][2].zero_point))],
                           dict(fused_activation_function="NONE"), version=2))
        # A constant second input (a bias-like vector).
        CASES.append(qcase(op, f"{dt.name}_const", [([1, 6, 6, 8], dt, q1)], [([1, 6, 6, 8], dt, _BQ[dt][0][2])],
                           dict(fused_activation_function="RELU6"), version=2,
                           consts=[(Q.random_q(np.random.default_rng(5), [8], dt), q2)]))
for k, (name, s1, s2) in enumerate(_QSHAPES[:8]):
    CASES.append(qcase("MUL", f"int16_{name}", [(s1, I16, Q.QParams(0.001, 0)), (s2, I16, Q.QParams(0.0005, 0))],
                       [(_bshape(s1, s2), I16, Q.QParams(0.02, 0))], dict(fused_activation_function="NONE"),
                       version=4))

# MAXIMUM / MINIMUM compare the raw integers (TFLite checks no quantization parameters).
for op in ("MAXIMUM", "MINIMUM"):
    for dt, qp in [(I8, Q.QParams(0.05, -128)), (U8, Q.QParams(0.1, 255)), (I16, Q.QParams(0.001, 0))]:
        for name, s1, s2 in [("same", [2, 4, 4, 5], [2, 4, 4, 5]), ("bcast", [2, 3, 4], [4]), ("scalar", [3, 17], [])]:
            CASES.append(qcase(op, f"{dt.name}_{name}", [(s1, dt, qp), (s2, dt, qp)], [(_bshape(s1, s2), dt, qp)],
                               version=2 if dt != I16 else 4))

# PRELU on quantized tensors: alpha constant (as converters write it) or a graph input.
for dt, qi, qa, qo in [(I8, Q.QParams(0.05, -3), Q.QParams(0.01, 0), Q.QParams(0.04, 5)),
                       (I8, Q.QParams(0.1, 127), Q.QParams(0.004, -128), Q.QParams(0.02, -128)),
                       (U8, Q.QParams(0.05, 128), Q.QParams(0.01, 100), Q.QParams(0.04, 120))]:
    k = sum(1 for c in CASES if c.op == "PRELU" and c.quant == Q.quant_kind(dt))
    for name, s, sa in [("chan", [1, 6, 6, 5], [5]), ("111c", [2, 4, 4, 7], [1, 1, 7]), ("hw", [2, 4, 5, 3], [4, 1, 3])]:
        CASES.append(qcase("PRELU", f"{dt.name}_{k}_{name}", [(s, dt, qi)], [(s, dt, qo)],
                           consts=[(Q.random_q(np.random.default_rng(9), sa, dt), qa)]))
    CASES.append(qcase("PRELU", f"{dt.name}_{k}_input_alpha", [([2, 3, 3, 4], dt, qi), ([4], dt, qa)],
                       [([2, 3, 3, 4], dt, qo)]))

# PRELU int16 (16x8: int16 input and output, int8 alpha, as LiteRT 2.3's kernel reads alpha); zero
# points as LiteRT accepts them (any), constant and input alpha, broadcast shapes.
for k, (qi, qa, qo) in enumerate([(Q.QParams(0.001, 0), Q.QParams(0.005, 3), Q.QParams(0.0012, 0)),
                                  (Q.QParams(0.0003, 0), Q.QParams(0.01, -128), Q.QParams(0.0002, 0)),
                                  (Q.QParams(0.002, 7), Q.QParams(0.004, 0), Q.QParams(0.001, -3))]):
    for name, s, sa in [("chan", [1, 6, 6, 5], [5]), ("111c", [2, 4, 4, 7], [1, 1, 7]), ("hw", [2, 4, 5, 3], [4, 1, 3])]:
        CASES.append(qcase("PRELU", f"int16_{k}_{name}", [(s, I16, qi)], [(s, I16, qo)], version=1,
                           consts=[(Q.random_q(np.random.default_rng(9 + k), sa, np.int8), qa)]))
    CASES.append(qcase("PRELU", f"int16_{k}_input_alpha", [([2, 3, 3, 4], I16, qi), ([4], np.int8, qa)],
                       [([2, 3, 3, 4], I16, qo)]))

# int16 ADD / SUB (16x8 models: the converter writes pot_scale_int16 = False, general scales).
for op in ("ADD", "SUB"):
    for k, (name, s1, s2) in enumerate(_QSHAPES[:10] + [("tail_7", [2, 23], [2, 23])]):
        q1, q2, qo = [(Q.QParams(0.001, 0), Q.QParams(0.0005, 0), Q.QParams(0.0012, 0)),
                      (Q.QParams(0.0003, 0), Q.QParams(0.002, 0), Q.QParams(0.0004, 0))][k % 2]
        CASES.append(qcase(op, f"int16_{name}", [(s1, I16, q1), (s2, I16, q2)], [(_bshape(s1, s2), I16, qo)],
                           dict(fused_activation_function="NONE", pot_scale_int16=False), version=3))
    CASES.append(qcase(op, "int16_relu6", [([2, 37], I16, Q.QParams(0.001, 0)), ([2, 37], I16, Q.QParams(0.0005, 0))],
                       [([2, 37], I16, Q.QParams(0.0003, 0))],
                       dict(fused_activation_function="RELU6", pot_scale_int16=False), version=3))
    CASES.append(qcase(op, "int16_pot_flag_general_scales", [([3, 33], I16, Q.QParams(0.001, 0)),
                                                              ([3, 33], I16, Q.QParams(0.0005, 0))],
                       [([3, 33], I16, Q.QParams(0.0012, 0))], dict(fused_activation_function="NONE"), version=3))

# ------------------------------------------------------------------ quantized DIV (issue 7)
# TFLite's fixed-point reciprocal rule (reference_ops::Div, the builtin kernel's only quantized
# path), exact vs LiteRT builtin. The scales keep s1 / (s2 * s_out) in [64, 2^22] for 8-bit
# (int16: [2^14, 2^16)): there every rounding shift of TFLite's rule stays within [0, 31] for
# every input pair. Outside it LiteRT's shifts by 32+ are undefined (x86 garbage) and ours round
# to the zero point: tests/test_quant_div.py checks that region against numpy. Divisors never
# equal their zero point here (an error at invoke, as LiteRT; test_quant_div.py).
_DQ = {I8: [(Q.QParams(0.05, -3), Q.QParams(0.02, 7), Q.QParams(0.02, -10)),
            (Q.QParams(0.1, -128), Q.QParams(0.01, 127), Q.QParams(0.1, 0)),
            (Q.QParams(0.02, 0), Q.QParams(0.01, -128), Q.QParams(0.03, 127))],
       U8: [(Q.QParams(0.05, 128), Q.QParams(0.02, 120), Q.QParams(0.02, 130)),
            (Q.QParams(0.1, 0), Q.QParams(0.01, 255), Q.QParams(0.1, 128)),
            (Q.QParams(0.5, 255), Q.QParams(0.004, 0), Q.QParams(0.5, 3))],
       I16: [(Q.QParams(0.001, 0), Q.QParams(0.0002, 0), Q.QParams(0.0002, 0)),
             (Q.QParams(0.004, 0), Q.QParams(0.0005, 0), Q.QParams(0.0004, 0))]}


def _div_gen(s1, s2, dt, zp2):
    """Random inputs over the whole type range; divisor elements equal to the zero point moved by one."""
    def gen(rng):
        a, b = Q.random_q(rng, s1, dt), Q.random_q(rng, s2, dt)
        lo, hi = Q.qrange(dt)
        b[b == zp2] = zp2 + 1 if zp2 < hi else zp2 - 1
        return [a, b]
    return gen


def _div_all_pairs(dt, zp2):
    """Every (dividend, divisor) pair of an 8-bit type except divisor == zero point: [255, 256]."""
    def gen(rng):
        lo, hi = Q.qrange(dt)
        v = np.arange(lo, hi + 1)
        d = v[v != zp2]
        return [np.tile(v, (255, 1)).astype(dt), np.repeat(d[:, None], 256, axis=1).astype(dt)]
    return gen


for dt in (I8, U8, I16):
    ver = 2
    for k, (name, s1, s2) in enumerate(_QSHAPES):
        q1, q2, qo = _DQ[dt][k % len(_DQ[dt])]
        CASES.append(qcase("DIV", f"{dt.name}_{name}", [(s1, dt, q1), (s2, dt, q2)], [(_bshape(s1, s2), dt, qo)],
                           dict(fused_activation_function="NONE"), version=ver,
                           gen=_div_gen(s1, s2, dt, q2.zero_point)))
    for act in ["RELU", "RELU_N1_TO_1", "RELU6"]:
        q1, q2, qo = _DQ[dt][0]
        CASES.append(qcase("DIV", f"{dt.name}_act_{act}", [([2, 4, 4, 5], dt, q1), ([5], dt, q2)],
                           [([2, 4, 4, 5], dt, qo)], dict(fused_activation_function=act), version=ver,
                           gen=_div_gen([2, 4, 4, 5], [5], dt, q2.zero_point)))
    if dt != I16:
        for k, (q1, q2, qo) in enumerate(_DQ[dt]):
            CASES.append(qcase("DIV", f"{dt.name}_all_pairs_{k}", [([255, 256], dt, q1), ([255, 256], dt, q2)],
                               [([255, 256], dt, qo)], dict(fused_activation_function="NONE"), version=ver,
                               gen=_div_all_pairs(dt, q2.zero_point)))
    # A constant divisor (a normalisation constant), none equal to its zero point.
    q1, q2, qo = _DQ[dt][0]
    cdiv = Q.random_q(np.random.default_rng(11), [8], dt)
    cdiv[cdiv == q2.zero_point] = q2.zero_point + 1
    CASES.append(qcase("DIV", f"{dt.name}_const", [([1, 6, 6, 8], dt, q1)], [([1, 6, 6, 8], dt, qo)],
                       dict(fused_activation_function="NONE"), version=ver, consts=[(cdiv, q2)]))

# ------------------------------------------------------------------ quantized SQUARED_DIFFERENCE
# INT8 only (TFLite's kernel); broadcasting up to 4-D as TFLite's quantized path; every input pair,
# different input scales, edge zero points, saturation at the top of the output grid.
_SQ = [(Q.QParams(0.05, -3), Q.QParams(0.05, -3), Q.QParams(0.2, -128)),
       (Q.QParams(0.1, -128), Q.QParams(0.02, 127), Q.QParams(1.0, -100)),
       (Q.QParams(0.01, 0), Q.QParams(0.03, 10), Q.QParams(0.002, -128)),
       (Q.QParams(0.004, 127), Q.QParams(0.004, -128), Q.QParams(0.0005, 5))]
for k, (name, s1, s2) in enumerate([s for s in _QSHAPES if len(_bshape(s[1], s[2])) <= 4]):
    q1, q2, qo = _SQ[k % len(_SQ)]
    CASES.append(qcase("SQUARED_DIFFERENCE", f"int8_{name}", [(s1, I8, q1), (s2, I8, q2)],
                       [(_bshape(s1, s2), I8, qo)], version=2))
for k, (q1, q2, qo) in enumerate(_SQ):
    def _pairs(rng):
        v = np.arange(-128, 128)
        return [np.tile(v, (256, 1)).astype(np.int8), np.repeat(v[:, None], 256, axis=1).astype(np.int8)]
    CASES.append(qcase("SQUARED_DIFFERENCE", f"int8_all_pairs_{k}", [([256, 256], I8, q1), ([256, 256], I8, q2)],
                       [([256, 256], I8, qo)], version=2, gen=_pairs))

def _exact_exp16(si, so):
    """exp on the dequantized input, quantized to the output grid (numpy): what the GPU delegate's
    float view approximates. TFLite's table is off by up to hundreds of steps where it saturates
    (the last segments interpolate towards a clamped entry): test_gpu_quant checks the GPU here."""
    def ref(x):
        v = np.round(np.exp(x.astype(np.float64) * np.float32(si)) / np.float32(so))
        return [np.clip(v, -32768, 32767).astype(np.int16)]
    return ref


# EXP int16 (issue 7): TFLite's 513-entry interpolated table in float; every int16 value, zero
# points 0 (LiteRT 2.3 requires them), shrinking / growing grids, saturating output ranges.
for k, (qi, qo) in enumerate([(Q.QParams(0.0001, 0), Q.QParams(0.0003, 0)),
                              (Q.QParams(0.0002, 0), Q.QParams(1 / 32768, 0)),
                              (Q.QParams(0.0003, 0), Q.QParams(0.002, 0)),
                              (Q.QParams(0.00005, 0), Q.QParams(0.0001, 0)),
                              (Q.QParams(0.001, 0), Q.QParams(0.00002, 0)),
                              (Q.QParams(1 / 3000, 0), Q.QParams(0.01, 0))]):
    CASES.append(qcase("EXP", f"int16_{k}", [([1, 256, 256], I16, qi)], [([1, 256, 256], I16, qo)], version=2,
                       gen=_all_int16, ref_fn=_exact_exp16(qi.scale, qo.scale)))
