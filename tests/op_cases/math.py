"""Math ops: unary (ABS NEG SQUARE LOG SIN COS FLOOR CEIL ROUND SIGN ELU GELU RELU_0_TO_1) and
binary (POW FLOOR_DIV FLOOR_MOD ATAN2 ADD_N), against LiteRT's builtin kernels (integer outputs
exact)."""
import numpy as np

from harness import OpCase
from tflite_gpu.testing.builder import single_op_model

F32 = np.float32
# TFLite's GPU delegate takes these (float32); CEIL, ROUND and ATAN2 are taken by newer TFLite GPU
# delegates (ML Drift) and have GPU kernels here too.
GPU_OPS = {"ABS", "COS", "ELU", "FLOOR", "FLOOR_DIV", "FLOOR_MOD", "GELU", "LOG", "NEG", "POW", "SIGN", "SIN",
           "SQUARE", "CUMSUM", "RELU_0_TO_1", "CEIL", "ROUND", "ATAN2"}


# Discontinuous ops (FLOOR, CEIL, ROUND, SIGN, FLOOR_DIV, FLOOR_MOD) get inputs exact in fp16
# (quarters, power-of-two divisors) where the GPU runs them, so fp16 storage cannot move a value
# across a jump.
QUARTERS = {"FLOOR", "CEIL", "ROUND", "SIGN"}


def unary(op, name, shape, dt=F32, lo=-4.0, hi=4.0, options=None, version=1, special=None, gpu=None, **kw):
    def model():
        return single_op_model(op, [(shape, dt)], [(shape, dt)], options=options, version=version)

    def inputs(rng):
        if np.issubdtype(np.dtype(dt), np.integer):
            x = rng.integers(int(lo), int(hi) + 1, size=shape).astype(dt)
        elif op in QUARTERS and name != "random":
            x = (rng.integers(int(lo) * 4, int(hi) * 4 + 1, size=shape) / 4.0).astype(dt)
        else:
            x = rng.uniform(lo, hi, size=shape).astype(dt)
        if special is not None:
            flat = x.reshape(-1)
            flat[:len(special)] = np.asarray(special, dt)[:flat.size]
        return [x]
    if gpu is None:
        gpu = op in GPU_OPS and np.dtype(dt) == F32 and len(shape) <= 4 and 0 not in shape and special is None
    return OpCase(op, name, model, inputs, gpu=gpu, **kw)


EDGE = [np.inf, -np.inf, np.nan, 0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 1e30, -1e30]
CASES = []
UN = {
    "ABS": dict(versions=[1, 2]),
    "NEG": dict(versions=[1]),
    "SQUARE": dict(versions=[1]),
    "LOG": dict(lo=0.001, hi=100.0, versions=[1, 2]),
    "SIN": dict(lo=-10.0, hi=10.0, versions=[1, 2]),
    "COS": dict(lo=-10.0, hi=10.0, versions=[1, 2]),
    "FLOOR": dict(versions=[1]),
    "CEIL": dict(versions=[1]),
    "ROUND": dict(versions=[1]),
    "SIGN": dict(versions=[1, 2]),
    "ELU": dict(versions=[1]),
    "RELU_0_TO_1": dict(lo=-1.0, hi=2.0, versions=[1]),
}
for op, d in UN.items():
    lo, hi = d.get("lo", -4.0), d.get("hi", 4.0)
    for v in d["versions"]:
        CASES.append(unary(op, f"v{v}", [2, 5, 5, 3], lo=lo, hi=hi, version=v))
    CASES.append(unary(op, "1d", [17], lo=lo, hi=hi))
    CASES.append(unary(op, "rank5", [2, 3, 1, 2, 3], lo=lo, hi=hi))
    CASES.append(unary(op, "big", [1, 64, 64, 9], lo=lo, hi=hi))
    CASES.append(unary(op, "zero", [0, 3], lo=lo, hi=hi))
    CASES.append(unary(op, "scalar", [], lo=lo, hi=hi, gpu=False, note="rank 0"))
    CASES.append(unary(op, "edge", [len(EDGE)], special=EDGE, note="inf/NaN/halves: CPU"))
for op in QUARTERS:
    CASES.append(unary(op, "random", [2, 9, 9, 5], gpu_fp16=False,
                       note="random floats: fp16 storage moves values across the jumps (F32 only)"))
# ROUND: halves round to even; values that are already integers beyond 2^31.
CASES.append(unary("ROUND", "halves", [40], special=[k + 0.5 for k in range(-20, 20)], gpu=True))
CASES.append(unary("ROUND", "huge", [6], special=[3e9 + 0.0, -3e9, 2.0**40 + 1, 8388609.0, -8388609.0, 4.5]))
# Integer types where LiteRT has them.
CASES.append(unary("ABS", "int32", [3, 7], dt=np.int32, lo=-1000, hi=1000, version=4))
CASES.append(unary("NEG", "int32", [3, 7], dt=np.int32, lo=-1000, hi=1000))
CASES.append(unary("NEG", "int64", [3, 7], dt=np.int64, lo=-10**9, hi=10**9))
CASES.append(unary("SIGN", "int32", [3, 7], dt=np.int32, lo=-3, hi=3, version=2))
# GELU: exact (erf) and tanh approximation.
for approx in (False, True):
    nm = "tanh" if approx else "erf"
    for v in (1, 2):
        CASES.append(unary("GELU", f"{nm}_v{v}", [2, 6, 6, 5], lo=-6.0, hi=6.0, options=dict(approximate=approx),
                           version=v))
    CASES.append(unary("GELU", f"{nm}_rank5", [2, 3, 1, 2, 3], options=dict(approximate=approx)))
    CASES.append(unary("GELU", f"{nm}_edge", [len(EDGE)], special=EDGE, options=dict(approximate=approx)))
CASES.append(unary("GELU", "no_options", [3, 9], options=None))


# ------------------------------------------------------------------ binary
def binary(op, name, s1, s2, dt=F32, gen=None, version=1, gpu=None, **kw):
    out = list(np.broadcast_shapes(tuple(s1), tuple(s2)))

    def model():
        return single_op_model(op, [(s1, dt), (s2, dt)], [(out, dt)], version=version)

    def inputs(rng):
        return list(gen(rng, s1, s2))
    if gpu is None:
        gpu = op in GPU_OPS and np.dtype(dt) == F32 and len(out) <= 4 and 0 not in out
    return OpCase(op, name, model, inputs, gpu=gpu, **kw)


def fgen(lo1, hi1, lo2, hi2, nonzero=False):
    def g(rng, s1, s2):
        a = rng.uniform(lo1, hi1, size=s1).astype(F32)
        b = rng.uniform(lo2, hi2, size=s2).astype(F32)
        if nonzero:
            b = np.where(np.abs(b) < 0.25, np.float32(0.25), b).astype(F32)
        return a, b
    return g


def igen(dt, lo1, hi1, lo2, hi2, nonzero=False):
    def g(rng, s1, s2):
        a = rng.integers(lo1, hi1 + 1, size=s1).astype(dt)
        b = rng.integers(lo2, hi2 + 1, size=s2).astype(dt)
        if nonzero:
            b[b == 0] = 1
        return a, b
    return g


def qgen(rng, s1, s2):
    a = (rng.integers(-40, 41, size=s1) / 4.0).astype(F32)
    b = rng.choice(np.array([-4, -2, -1, -0.5, 0.5, 1, 2, 4], F32), size=s2).astype(F32)
    return a, b


SH = [("same", [2, 4, 5, 3], [2, 4, 5, 3]), ("bcast", [3, 4, 5], [5]), ("scalar", [4, 6], []),
      ("rank5", [2, 1, 3, 1, 2], [1, 2, 1, 2, 1]), ("zero", [0, 3], [3]), ("big", [64, 300], [300])]
for name, s1, s2 in SH:
    CASES.append(binary("POW", name, s1, s2, gen=fgen(0.1, 3.0, -2.0, 2.0)))
    g = fgen(-10, 10, -4, 4, nonzero=True) if name == "big" else qgen
    CASES.append(binary("FLOOR_DIV", name, s1, s2, gen=g))
    CASES.append(binary("FLOOR_MOD", name, s1, s2, gen=g))
    if s1 == s2:  # ATAN2 does not broadcast
        CASES.append(binary("ATAN2", name, s1, s2, gen=fgen(-3, 3, -3, 3)))
CASES.append(binary("ATAN2", "zero", [0, 3], [0, 3], gen=fgen(-3, 3, -3, 3)))
CASES.append(binary("ATAN2", "big", [64, 300], [64, 300], gen=fgen(-3, 3, -3, 3)))
CASES += [
    binary("POW", "int32", [4, 5], [5], dt=np.int32, gen=igen(np.int32, -5, 5, 0, 6)),
    binary("POW", "int32_wraps", [6], [6], dt=np.int32, gen=lambda r, a, b: (
        np.array([3, -3, 7, 2, 0, -1], np.int32), np.array([25, 21, 30, 31, 0, 7], np.int32))),
    binary("POW", "neg_base_int_exp", [8], [8], gen=lambda r, a, b: (
        np.array([-2, -2, -0.5, 0, 0, -3, 2, 1], F32), np.array([2, 3, 2, 0, -1, 0.5, -1, np.nan], F32)),
        gpu=False, note="NaN/inf results: CPU"),
    binary("FLOOR_DIV", "int32", [4, 5], [5], dt=np.int32, gen=igen(np.int32, -50, 50, -7, 7, nonzero=True),
           version=2),
    binary("FLOOR_DIV", "int32_signs", [8], [8], dt=np.int32, gen=lambda r, a, b: (
        np.array([7, -7, 7, -7, 0, 2**31 - 1, -2**31, 1], np.int32),
        np.array([2, 2, -2, -2, 3, -1, 7, -3], np.int32)), version=2),
    binary("FLOOR_MOD", "int32", [4, 5], [5], dt=np.int32, gen=igen(np.int32, -50, 50, -7, 7, nonzero=True)),
    binary("FLOOR_MOD", "int32_signs", [8], [8], dt=np.int32, gen=lambda r, a, b: (
        np.array([7, -7, 7, -7, 0, 2**31 - 1, -2**31, 6], np.int32),
        np.array([3, 3, -3, -3, 3, -1, 5, 3], np.int32))),  # (INT_MIN % -1 traps in LiteRT)
    binary("FLOOR_MOD", "int64", [4, 5], [4, 5], dt=np.int64, gen=igen(np.int64, -10**6, 10**6, -99, 99, nonzero=True),
           version=2),
    binary("FLOOR_MOD", "float_signs", [8], [8], gen=lambda r, a, b: (
        np.array([7.5, -7.5, 7.5, -7.5, 0, 6, -6, 1e-3], F32), np.array([2, 2, -2, -2, 3, 3, 3, -5], F32))),
    binary("FLOOR_DIV", "float_signs", [8], [8], gen=lambda r, a, b: (
        np.array([7.5, -7.5, 7.5, -7.5, 0, 6, -6, 1e-3], F32), np.array([2, 2, -2, -2, 3, 3, 3, -5], F32))),
    binary("ATAN2", "signs", [8], [8], gen=lambda r, a, b: (
        np.array([0, -0.0, 0, -0.0, 1, -1, np.inf, 1], F32), np.array([0, 0, -0.0, -0.0, 0, 0, np.inf, -np.inf], F32)),
        gpu=False),
]


# ------------------------------------------------------------------ ADD_N
def addn(name, n, shape, dt=F32, gpu=False):
    def model():
        return single_op_model("ADD_N", [(shape, dt)] * n, [(shape, dt)])

    def inputs(rng):
        if dt == F32:
            return [rng.standard_normal(shape).astype(F32) for _ in range(n)]
        return [rng.integers(-2**31, 2**31 - 1, size=shape, dtype=np.int64).astype(dt) for _ in range(n)]
    return OpCase("ADD_N", name, model, inputs, gpu=gpu, note="ADD_N: GPU for float32 of rank 1..4")


CASES += [addn("two", 2, [3, 4], gpu=True), addn("five", 5, [2, 3, 4, 5], gpu=True),
          addn("int32_wraps", 3, [20], dt=np.int32), addn("big", 3, [200, 300], gpu=True), addn("zero", 2, [0, 4]),
          addn("scalar", 3, [])]
