"""Shared by the GPU tests: one delegate per precision for the session, a skip with the
real reason when this machine has no usable OpenCL device, and the two-partition chain model."""
import functools

import numpy as np
import pytest

import tflite_gpu
from tflite_gpu.testing.builder import ModelBuilder

CHAIN_SHAPE = [1, 6, 5, 7]


@functools.lru_cache(maxsize=None)
def _probe():
    try:
        d = tflite_gpu.GpuDelegate()
        return True, d.info()["device_name"]
    except RuntimeError as e:
        return False, str(e)


def require_gpu():
    ok, why = _probe()
    if not ok:
        pytest.skip(f"no usable OpenCL device here: {why}")


def delegate(precision="F32", **kw):
    require_gpu()
    opts = dict(kw)
    if precision != "F32":
        opts.setdefault("is_precision_loss_allowed", True)
    return tflite_gpu.GpuDelegate(tflite_gpu.GpuDelegateOptions(**opts))


def chain_model(builder=False):
    """x -> ADD(c) -> t1 -> CAST(int32) -> t2 -> CAST(float32) -> t3 -> MUL(x) -> t4 -> TANH -> y, all
    CHAIN_SHAPE float32 but t2. CAST to / from INT32 stays on the CPU (the GPU's CAST takes BOOL <-> FLOAT32
    only), so with 2 partitions: [ADD] (x in, t1 out to a CPU node) and [MUL, TANH] (t3 from a CPU node
    and x in, y out) -- four boundary tensors, x shared by both partitions. builder=True: the
    ModelBuilder, not built."""
    none = dict(fused_activation_function="NONE")
    b = ModelBuilder()
    x = b.add_input(CHAIN_SHAPE, name="x")
    c = b.add_const(np.linspace(-1, 1, CHAIN_SHAPE[-1]).astype(np.float32), name="c")
    t1 = b.add_tensor(CHAIN_SHAPE, name="t1")
    t2 = b.add_tensor(CHAIN_SHAPE, dtype=np.int32, name="t2")
    t3 = b.add_tensor(CHAIN_SHAPE, name="t3")
    t4 = b.add_tensor(CHAIN_SHAPE, name="t4")
    y = b.add_tensor(CHAIN_SHAPE, name="y")
    b.add_op("ADD", [x, c], [t1], options=none)
    b.add_op("CAST", [t1], [t2], options=dict(in_data_type="FLOAT32", out_data_type="INT32"))
    b.add_op("CAST", [t2], [t3], options=dict(in_data_type="INT32", out_data_type="FLOAT32"))
    b.add_op("MUL", [t3, x], [t4], options=none)
    b.add_op("TANH", [t4], [y])
    b.mark_output(y)
    return b if builder else b.build()
