"""Bad DILATE / REDUCE_WINDOW models (tests/op_cases/window.py): bad dilations, padding types,
reduce functions, window vectors and ranks are a ValueError naming the op and the parameter at
allocate_tensors; bad runtime dilations a RuntimeError at invoke. Never a crash (LiteRT 2.3 itself
crashes on some of these: said where so)."""
import numpy as np
import pytest

from harness import assert_refused, litert_refuses
from tflite_gpu.testing.builder import ModelBuilder

F32 = np.float32


# ------------------------------------------------------------------ DILATE
def _dilate(shape=(2, 3), dilations=(2, 2), d_dtype=np.int32, pad_dtype=F32, d_shape=None, const=True):
    mb = ModelBuilder()
    x = mb.add_input(list(shape), F32)
    d_arr = np.array(dilations).astype(d_dtype)
    if d_shape is not None:
        d_arr = d_arr.reshape(d_shape)
    d = mb.add_const(d_arr, name="dil") if const else mb.add_input(list(d_arr.shape), d_dtype, name="dil")
    p = mb.add_const(np.array(0).astype(pad_dtype), name="pad")
    y = mb.add_tensor([1] * len(shape), F32)
    mb.mark_output(y)
    mb.add_op("DILATE", [x, d, p], [y], options={})
    return mb.build()


@pytest.mark.parametrize("kw,words", [
    (dict(dilations=(0, 2)), ("dilations[0] is 0", ">= 1")),
    (dict(dilations=(2, -1)), ("dilations[1] is -1",)),
    (dict(dilations=(2, 2, 2)), ("dilations must have shape [2]",)),
    (dict(d_dtype=np.int64), ("dilations has type INT64, expected INT32",)),
    (dict(pad_dtype=np.int32), ("padding_value has type INT32 but input has type FLOAT32",)),
    (dict(shape=(), dilations=()), ("rank >= 1",)),
])
def test_dilate_bad_parameters(kw, words):
    assert_refused(_dilate(**kw), match="DILATE", words=words)


def test_dilate_bad_runtime_dilations_fail_at_invoke():
    m = _dilate(const=False)
    bad = [np.ones((2, 3), F32), np.array([1, 0], np.int32)]
    print("\nDILATE with a runtime dilation of 0: LiteRT 2.3 crashes (SIGSEGV) on this model; ours refuses at invoke")
    assert_refused(m, bad, at_invoke=True, match="DILATE", words=("dilations[1] is 0",))


# ------------------------------------------------------------------ REDUCE_WINDOW
def _rw(fn=1, dt=F32, init_dt=None, window=(2, 2), strides=(1, 1), dil=(1, 1), w_dtype=np.int64, shape=(4, 4),
        const_window=True, options=True):
    mb = ModelBuilder()
    x = mb.add_input(list(shape), dt)
    iv = mb.add_const(np.array(0).astype(init_dt or dt), name="init")
    ws = (mb.add_const(np.array(window).astype(w_dtype), name="window_shape") if const_window
          else mb.add_input([len(window)], w_dtype, name="window_shape"))
    st = mb.add_const(np.array(strides).astype(w_dtype), name="strides")
    dl = mb.add_const(np.array(dil).astype(w_dtype), name="dil")
    y = mb.add_tensor([1] * len(shape), dt)
    mb.mark_output(y)
    mb.add_op("REDUCE_WINDOW", [x, iv, ws, st, dl], [y], options=dict(reduce_function=fn) if options else None)
    return mb.build()


@pytest.mark.parametrize("kw,words", [
    (dict(fn=0), ("reduce_function UNSUPPORTED (0) is not supported",)),
    (dict(fn=9), ("reduce_function unknown (9) is not supported",)),
    (dict(options=False), ("no ReduceWindowOptions",)),
    (dict(dt=np.float16), ("input type FLOAT16 is not supported",)),
    (dict(dt=np.uint16), ("input type UINT16 is not supported",)),
    (dict(init_dt=np.int32), ("init_value has type INT32 but input has type FLOAT32",)),
    (dict(w_dtype=np.int32), ("window_shape has type INT32, expected INT64",)),
    (dict(window=(2, 2, 2)), ("window_shape has 3 values", "one per input dimension (2)")),
    (dict(strides=(1, 0)), ("window_strides[1] is 0", ">= 1")),
    (dict(dil=(0, 1)), ("window_dilations[0] is 0",)),
    (dict(window=(0, 2)), ("window_shape[0] is 0",)),
    (dict(const_window=False), ("window_shape must be a constant tensor",)),
    (dict(shape=(1,) * 7, window=(1,) * 7, strides=(1,) * 7, dil=(1,) * 7), ("input rank 7 is not in 1..6",)),
])
def test_reduce_window_bad_parameters(kw, words):
    m = _rw(**kw)
    assert_refused(m, match="REDUCE_WINDOW", words=words)


@pytest.mark.parametrize("kw", [dict(fn=0), dict(dt=np.float16)])
def test_reduce_window_litert_refuses_too(kw):
    """LiteRT refuses these as well. (A zero window LiteRT accepts, reducing nothing: every output
    is the init value; ours refuses it, as StableHLO's reduce_window requires windows >= 1. A zero
    stride crashes LiteRT with SIGFPE, so it is not run there.)"""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    m = _rw(**kw)
    try:  # LiteRT refuses an unsupported function already when the interpreter is built
        Interpreter(model_content=m, experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    except (RuntimeError, ValueError):
        return
    assert litert_refuses(m)
