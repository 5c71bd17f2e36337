"""Shared by the GPU tests: one delegate per precision for the session, and a skip with the
real reason when this machine has no usable OpenCL device."""
import functools

import pytest

import tflite_gpu


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
