"""Reductions and normalisations: REDUCE_MAX REDUCE_MIN REDUCE_PROD REDUCE_ANY REDUCE_ALL ARG_MIN
CUMSUM LOG_SOFTMAX L2_NORMALIZATION LOCAL_RESPONSE_NORMALIZATION, against LiteRT's builtin kernels
(integer/bool outputs exact)."""
import numpy as np

from harness import OpCase
from tflite_gpu.testing.builder import single_op_model

F32 = np.float32
GPU_REDUCE = {"REDUCE_MAX", "REDUCE_MIN", "REDUCE_PROD"}


def _out_shape(shape, axes, keep):
    r = len(shape)
    ax = {a % r for a in axes} if r else set()
    return [1 if i in ax else d for i, d in enumerate(shape) if keep or i not in ax]


def _data(dt, shape, rng, lo=-5, hi=5):
    dt = np.dtype(dt)
    if lo == "prod":
        # Magnitudes in [0.8, 1.25] with random signs: long products stay in fp16 range (GPU F32_F16).
        return (rng.uniform(0.8, 1.25, size=shape) * rng.choice([-1.0, 1.0], size=shape)).astype(dt)
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(dt, np.integer):
        return rng.integers(lo, hi + 1, size=shape).astype(dt)
    return rng.uniform(lo, hi, size=shape).astype(dt)


def reduce_case(op, name, shape, axes, keep, dt=F32, dynamic=False, version=1, lo=-5, hi=5, data=None, gpu=None,
                **kw):
    out = _out_shape(shape, axes, keep)
    if dynamic:
        def model():
            return single_op_model(op, [(shape, dt), ([len(axes)], np.int32)], [(out, dt)],
                                   options=dict(keep_dims=keep), version=version)

        def inputs(rng):
            return [_data(dt, shape, rng, lo, hi), np.array(axes, np.int32)]
    else:
        def model():
            return single_op_model(op, [(shape, dt)], [(out, dt)], options=dict(keep_dims=keep), version=version,
                                   consts=[np.array(axes, np.int32)])

        def inputs(rng):
            return [data if data is not None else _data(dt, shape, rng, lo, hi)]
    if gpu is None:
        gpu = (op in GPU_REDUCE and np.dtype(dt) == F32 and not dynamic and 0 < len(shape) <= 4 and 0 not in shape
               and len(axes) > 0)
    return OpCase(op, name, model, inputs, gpu=gpu, **kw)


SHAPES = [
    ("hw_keep", [2, 7, 7, 16], [1, 2], True),
    ("last", [4, 5, 33], [-1], False),
    ("first", [6, 3, 4], [0], True),
    ("all", [3, 4, 5], [0, 1, 2], False),
    ("neg_repeated", [2, 3, 4, 5], [-1, 3, 1, -3], False),
    ("middle", [4, 9, 5], [1], True),
    ("rank5", [3, 2, 5, 2, 2], [0, 2, 4], False),
    ("big", [64, 64, 20], [1], False),
    ("channels_4d", [2, 3, 5, 37], [3], True),
]
CASES = []
for op in ["REDUCE_MAX", "REDUCE_MIN", "REDUCE_PROD"]:
    for name, shape, axes, keep in SHAPES:
        lo, hi = ("prod", None) if op == "REDUCE_PROD" else (-5, 5)
        CASES.append(reduce_case(op, name, shape, axes, keep, lo=lo, hi=hi))
    CASES += [
        reduce_case(op, "dynamic_axis", [2, 3, 4], [2, -3], False, dynamic=True),
        reduce_case(op, "empty_reduction", [2, 0, 3], [1], False, gpu=False),
        reduce_case(op, "empty_axes", [3, 4], [], False),
        reduce_case(op, "int32", [3, 5, 4], [1], False, dt=np.int32, lo=-9, hi=9),
        reduce_case(op, "int64", [3, 5, 4], [0, 2], True, dt=np.int64, lo=-9, hi=9),
    ]
for op in ["REDUCE_MAX", "REDUCE_MIN"]:
    CASES += [
        reduce_case(op, "int8", [3, 5, 4], [1], False, dt=np.int8, lo=-128, hi=127, version=2),
        reduce_case(op, "uint8", [3, 5, 4], [-1], True, dt=np.uint8, lo=0, hi=255, version=2),
    ]
CASES.append(reduce_case("REDUCE_PROD", "int32_wraps", [2, 3], [1], False, dt=np.int32,
                         data=np.array([[2**20, 2**15, 3], [-7, 2**30, 5]], np.int32)))
for op in ["REDUCE_ANY", "REDUCE_ALL"]:
    for name, shape, axes, keep in SHAPES:
        CASES.append(reduce_case(op, name, shape, axes, keep, dt=np.bool_, gpu=False))
    CASES += [
        reduce_case(op, "dynamic_axis", [2, 3, 4], [1], True, dt=np.bool_, dynamic=True, gpu=False),
        reduce_case(op, "empty_reduction", [2, 0, 3], [1], False, dt=np.bool_, gpu=False),
        reduce_case(op, "sparse", [8, 50], [1], False, dt=np.bool_, gpu=False,
                    data=(np.arange(400).reshape(8, 50) % 97 == 0)),
    ]
for c in CASES:
    if c.op in ("REDUCE_ANY", "REDUCE_ALL"):
        c.note = "BOOL reductions: CPU (not in TFLite's GPU list)"


# ------------------------------------------------------------------ ARG_MIN
def argmin_case(name, shape, axis, in_dt=F32, out_dt=np.int32, const=True, version=1, gen=None):
    a = axis % len(shape)
    oshape = [d for i, d in enumerate(shape) if i != a]
    otype = "INT32" if out_dt == np.int32 else "INT64"

    def model():
        if const:
            return single_op_model("ARG_MIN", [(shape, in_dt)], [(oshape, out_dt)], options=dict(output_type=otype),
                                   version=version, consts=[np.array([axis], np.int32)])
        return single_op_model("ARG_MIN", [(shape, in_dt), ([1], np.int32)], [(oshape, out_dt)],
                               options=dict(output_type=otype), version=version)

    def inputs(rng):
        x = gen(rng) if gen else _data(in_dt, shape, rng, -50, 50)
        return [x] if const else [x, np.array([axis], np.int32)]
    return OpCase("ARG_MIN", name, model, inputs, gpu=False, note="integer indices: CPU")


CASES += [
    argmin_case("last", [3, 10], -1),
    argmin_case("first", [7, 4, 3], 0),
    argmin_case("middle", [2, 9, 5], 1),
    argmin_case("long_row", [3, 5000], 1),
    argmin_case("int64_out", [4, 6], 1, out_dt=np.int64),
    argmin_case("ties", [4, 8], 1, gen=lambda r: r.integers(0, 3, (4, 8)).astype(F32)),
    argmin_case("ties_middle", [3, 6, 5], 1, gen=lambda r: r.integers(0, 2, (3, 6, 5)).astype(F32)),
    argmin_case("dynamic_axis", [3, 4, 5], -2, const=False),
    argmin_case("int32", [5, 7], 1, in_dt=np.int32),
    argmin_case("uint8", [5, 7], 0, in_dt=np.uint8, version=2),
    argmin_case("int8", [5, 7], 1, in_dt=np.int8, version=2),
    argmin_case("bool", [5, 7], 1, in_dt=np.bool_, version=3),
]


# ------------------------------------------------------------------ CUMSUM
def cumsum_case(name, shape, axis, exclusive=False, reverse=False, dt=F32, const_axis=True, gpu=None):
    opts = dict(exclusive=exclusive, reverse=reverse)

    def model():
        if const_axis:
            return single_op_model("CUMSUM", [(shape, dt)], [(shape, dt)], options=opts,
                                   consts=[np.array(axis, np.int32)])
        return single_op_model("CUMSUM", [(shape, dt), ([], np.int32)], [(shape, dt)], options=opts)

    def inputs(rng):
        x = _data(dt, shape, rng, -10, 10)
        return [x] if const_axis else [x, np.array(axis, np.int32)]
    if gpu is None:
        gpu = np.dtype(dt) == F32 and const_axis and 0 < len(shape) <= 4 and 0 not in shape
    return OpCase("CUMSUM", name, model, inputs, gpu=gpu)


for ex in (False, True):
    for rev in (False, True):
        nm = ("excl_" if ex else "") + ("rev_" if rev else "")
        CASES.append(cumsum_case(nm + "last", [3, 4, 17], -1, ex, rev))
        CASES.append(cumsum_case(nm + "first", [6, 5, 3], 0, ex, rev))
CASES += [
    cumsum_case("middle", [2, 7, 4, 3], 2),
    cumsum_case("middle_neg", [2, 7, 4, 3], -3),
    cumsum_case("1d", [33], 0),
    cumsum_case("rank5", [2, 3, 2, 3, 4], 3),
    cumsum_case("big", [20, 300, 8], 1),
    cumsum_case("zero", [0, 4], 1),
    cumsum_case("int32", [4, 9], 1, dt=np.int32),
    cumsum_case("int64_excl_rev", [4, 9], 0, True, True, dt=np.int64),
    cumsum_case("dynamic_axis", [3, 5], 1, const_axis=False),
]


# ------------------------------------------------------------------ LOG_SOFTMAX / L2 / LRN
def last_axis_case(op, name, shape, options=None, version=1, scale=4.0, gpu=False, special=None):
    def model():
        return single_op_model(op, [shape], [shape], options=options, version=version)

    def inputs(rng):
        x = (rng.standard_normal(shape) * scale).astype(F32)
        if special is not None:
            x.reshape(-1)[:len(special)] = special
        return [x]
    return OpCase(op, name, model, inputs, gpu=gpu, note=f"{op}: CPU (not in TFLite's GPU list)")


for name, shape in [("2d", [5, 10]), ("4d", [2, 3, 4, 9]), ("1d", [7]), ("wide", [3, 1001]), ("rank5", [2, 2, 2, 3, 5]),
                    ("big", [500, 64])]:
    CASES.append(last_axis_case("LOG_SOFTMAX", name, shape))
CASES.append(last_axis_case("LOG_SOFTMAX", "large_values", [4, 6], scale=100.0))
for name, shape in [("2d", [5, 10]), ("4d", [2, 3, 4, 9]), ("1d", [7]), ("wide", [3, 1001]), ("big", [500, 64]),
                    ("rank5", [2, 2, 2, 3, 5])]:
    CASES.append(last_axis_case("L2_NORMALIZATION", name, shape, options=dict(fused_activation_function="NONE")))
CASES.append(last_axis_case("L2_NORMALIZATION", "zero_row", [3, 4], special=[0.0] * 4))
CASES.append(last_axis_case("L2_NORMALIZATION", "tiny_norm", [2, 4], scale=1e-8))  # norm below the 1e-6 epsilon
CASES.append(last_axis_case("L2_NORMALIZATION", "no_options", [2, 6]))
for name, shape, opts in [
        ("r2", [1, 5, 5, 12], dict(radius=2, bias=1.0, alpha=0.1, beta=0.75)),
        ("r0", [2, 3, 3, 6], dict(radius=0, bias=2.0, alpha=0.5, beta=0.5)),
        ("beta1", [1, 4, 4, 7], dict(radius=1, bias=1.0, alpha=0.2, beta=1.0)),
        ("wide_radius", [1, 2, 2, 5], dict(radius=10, bias=0.5, alpha=0.01, beta=0.3)),
        ("alexnet", [1, 6, 6, 96], dict(radius=2, bias=1.0, alpha=1e-4, beta=0.75))]:
    CASES.append(last_axis_case("LOCAL_RESPONSE_NORMALIZATION", name, shape, options=opts, scale=2.0))
