"""DILATE (builtin 203) and REDUCE_WINDOW (builtin 205), the StableHLO-derived builtins LiteRT's
resolver registers (options in builtin_options_2). Checked against LiteRT's builtin kernels.

DILATE: every fixed-size type (the kernel copies bytes), constant or runtime dilations (a runtime
dilations tensor makes the output dynamic). REDUCE_WINDOW: each reduction (ADD, MUL, MINIMUM,
MAXIMUM, ALL, ANY) over each type LiteRT's kernel takes (BOOL, INT8, INT16, INT32, INT64, UINT8,
FLOAT32, FLOAT64), strides and window dilations, ranks 1..6, windows larger than the input (empty
output). Neither runs on the GPU delegate (gpu=False)."""
import ml_dtypes
import numpy as np

from harness import OpCase
from tflite_gpu.testing.builder import ModelBuilder

CASES = []


def _values(rng, shape, dt):
    dt = np.dtype(dt)
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(dt, np.integer):
        info = np.iinfo(dt)
        return rng.integers(max(info.min, -50), min(info.max, 50) + 1, shape).astype(dt)
    if np.issubdtype(dt, np.complexfloating):
        return (rng.normal(0, 2, shape) + 1j * rng.normal(0, 2, shape)).astype(dt)
    return rng.normal(0, 2, shape).astype(dt)


# ------------------------------------------------------------------ DILATE
def dilate_case(name, shape, dilations, dt=np.float32, pad=-1, dynamic=False):
    out = [(s - 1) * d + 1 for s, d in zip(shape, dilations)]

    def model():
        mb = ModelBuilder()
        x = mb.add_input(shape, dt)
        if dynamic:
            d = mb.add_input([len(shape)], np.int32)
        else:
            d = mb.add_const(np.array(dilations, np.int32))
        p = mb.add_const(np.array(pad).astype(dt), dtype=dt)
        y = mb.add_tensor(out, dt)
        mb.mark_output(y)
        mb.add_op("DILATE", [x, d, p], [y], options={})
        return mb.build()

    def inputs(rng):
        xs = [_values(rng, shape, dt)]
        if dynamic:
            xs.append(np.array(dilations, np.int32))
        return xs
    CASES.append(OpCase("DILATE", name, model, inputs, gpu=False))


dilate_case("2d", [3, 4], [2, 3])
dilate_case("1d", [5], [3])
dilate_case("3d_trailing_ones", [2, 3, 4], [3, 1, 1])
dilate_case("4d_inner", [2, 2, 3, 3], [1, 2, 1, 4], dt=np.int8, pad=7)
dilate_case("all_ones", [2, 5], [1, 1])
dilate_case("bool", [3, 3], [2, 2], dt=np.bool_, pad=True)
dilate_case("int64", [4, 2], [1, 3], dt=np.int64, pad=-5)
dilate_case("float16", [3, 2], [2, 2], dt=np.float16, pad=0.5)
dilate_case("bfloat16", [2, 3], [3, 2], dt=ml_dtypes.bfloat16, pad=2)
dilate_case("uint16", [2, 3], [2, 1], dt=np.uint16, pad=9)
dilate_case("complex64", [2, 2], [2, 2], dt=np.complex64, pad=1)
dilate_case("dynamic_dilations", [3, 2, 2], [2, 1, 3], dynamic=True)
dilate_case("6d", [2, 1, 2, 1, 2, 2], [2, 3, 1, 2, 2, 1], dt=np.int32, pad=0)


# ------------------------------------------------------------------ REDUCE_WINDOW
FUNCS = ["ADD", "MUL", "MINIMUM", "MAXIMUM", "ALL", "ANY"]
INIT = {"ADD": 0, "MUL": 1, "MINIMUM": 100, "MAXIMUM": -100, "ALL": 1, "ANY": 0}


def _rw_out(shape, window, strides, dil):
    out = []
    for s, w, st, d in zip(shape, window, strides, dil):
        dw = (w - 1) * d + 1
        out.append(0 if s < dw else (s - dw) // st + 1)
    return out


def reduce_window_case(name, shape, window, strides, dil, fn, dt=np.float32, init=None, gen=None):
    out = _rw_out(shape, window, strides, dil)
    init = INIT[fn] if init is None else init

    def model():
        mb = ModelBuilder()
        x = mb.add_input(shape, dt)
        iv = mb.add_const(np.array(init).astype(dt), dtype=dt)
        ws = mb.add_const(np.array(window, np.int64))
        st = mb.add_const(np.array(strides, np.int64))
        dl = mb.add_const(np.array(dil, np.int64))
        y = mb.add_tensor(out, dt)
        mb.mark_output(y)
        mb.add_op("REDUCE_WINDOW", [x, iv, ws, st, dl], [y], options=dict(reduce_function=fn))
        return mb.build()

    def inputs(rng):
        if gen is not None:
            return [gen(rng, shape).astype(dt)]
        x = _values(rng, shape, dt)
        if fn == "MUL" and np.dtype(dt).kind == "f":
            x = (np.sign(x) * (0.7 + 0.3 * np.abs(np.tanh(x)))).astype(dt)  # products stay finite
        if fn == "MUL" and np.dtype(dt).kind in "iu":
            x = (x % 3).astype(dt)
        return [x]
    CASES.append(OpCase("REDUCE_WINDOW", name, model, inputs, gpu=False))


for fn in FUNCS:
    reduce_window_case(f"{fn.lower()}_2d", [6, 7], [2, 3], [1, 2], [1, 1], fn)
    reduce_window_case(f"{fn.lower()}_4d_dilated", [2, 7, 6, 3], [1, 3, 2, 2], [1, 2, 1, 1], [1, 2, 3, 1], fn)
for dt in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.float64, np.bool_):
    for fn in ("ADD", "MAXIMUM", "ANY") if dt != np.bool_ else ("ANY", "ALL", "MAXIMUM"):
        init = INIT[fn] if dt != np.uint8 or fn != "MAXIMUM" else 0
        if dt == np.bool_:
            init = fn == "ALL"
        reduce_window_case(f"{fn.lower()}_{np.dtype(dt).name}", [5, 9], [3, 2], [2, 3], [1, 2], fn, dt=dt, init=init)
reduce_window_case("add_int8_wraps", [4, 8], [2, 4], [1, 1], [1, 1], "ADD", dt=np.int8,
                   gen=lambda rng, s: rng.integers(60, 128, s))
reduce_window_case("all_int32_values", [3, 8], [1, 3], [1, 1], [1, 1], "ALL", dt=np.int32, init=5,
                   gen=lambda rng, s: rng.integers(-1, 2, s))
reduce_window_case("max_nan", [2, 8], [1, 3], [1, 1], [1, 1], "MAXIMUM", init=-np.inf,
                   gen=lambda rng, s: np.where(rng.random(s) < 0.2, np.nan, rng.normal(0, 1, s)))
reduce_window_case("min_nan", [2, 8], [1, 3], [1, 2], [1, 1], "MINIMUM", init=np.inf,
                   gen=lambda rng, s: np.where(rng.random(s) < 0.2, np.nan, rng.normal(0, 1, s)))
reduce_window_case("stride_not_dividing", [5], [2], [2], [1], "ADD")
reduce_window_case("window_larger_than_input", [2, 5], [3, 2], [1, 1], [1, 1], "ADD")
reduce_window_case("1d_dilated", [10], [3], [2], [2], "ADD")
reduce_window_case("6d", [2, 3, 2, 3, 2, 4], [1, 2, 1, 2, 2, 2], [1, 1, 1, 1, 1, 2], [1, 1, 1, 1, 1, 1], "ADD")
