"""1x1 convolutions on NVIDIA tensor cores (conv_mma_gpu.cc: mma.sync through inline PTX, fp16
storage modes, compute capability 8.0+), against our plain reference CPU kernels on the same model.

- The kernel's plain path (TFLITE_GPU_CONV_MMA=plain: the same tiling, weight packing, fragment
  bookkeeping and epilogue, with scalar reads instead of mma.sync) runs on every device, PoCL
  included: F32 within 1e-5 rel-L2 of the reference, fp16 storage within 5e-3 (as test_gpu_gemm).
- The tensor-core path runs where the device has it (NVIDIA sm_80+; elsewhere the test says so and
  skips): within 5e-3 of the reference, and within 1e-3 of the same delegate with the tensor cores
  off (TFLITE_GPU_CONV_MMA=0), which reads the same half values and differs only in summation order
  and the final rounding to half.

Shapes hit the tiling's edges: positions not a multiple of any tile (and fewer than one), batch > 1,
input channels not a multiple of 16 (K step) nor of 4 (padding lanes), output channels not a
multiple of 8 (n tile) nor of 4, bias + activation, a residual ADD fused behind the conv.
"""
import numpy as np
import pytest

from gpu_util import require_gpu
from harness import rel_l2, run_tflite_gpu
from test_gpu_gemm import gpu_run, pointwise_model

SHAPES = [
    (1, 7, 9, 40, 72, "RELU6"),     # 63 positions, K = 40 (2.5 K steps), N = 72
    (3, 5, 5, 64, 130, "NONE"),     # batch 3, N = 130 (padding lanes in the last slice)
    (1, 13, 13, 17, 33, "RELU"),    # K = 17 (padding lanes), N = 33
    (2, 16, 16, 128, 64, "NONE"),   # exact multiples, 512 positions
    (1, 3, 2, 96, 256, "RELU"),     # 6 positions: less than one tile
    (1, 14, 14, 24, 12, "RELU6"),   # K = 24 (1.5 K steps, slices not a multiple of 4), N = 12
]


def cases():
    rng = np.random.default_rng(5)
    for i, (b, h, w, ci, co, act) in enumerate(SHAPES):
        yield (b, h, w, ci, co), pointwise_model(b, h, w, ci, co, act, residual=(i % 2 == 0)), \
            rng.standard_normal([b, h, w, ci]).astype(np.float32), (2 if i % 2 == 0 else 1)


@pytest.mark.parametrize("precision", ["F32", "F32_F16"])
def test_mma_kernel_plain_path_matches_reference(precision, monkeypatch):
    require_gpu()
    monkeypatch.setenv("TFLITE_GPU_CONV_MMA", "plain")
    tol = 1e-5 if precision == "F32" else 5e-3
    for shape, model, x, convs in cases():
        want = run_tflite_gpu(model, [x], reference=True)[0]
        got, kernels = gpu_run(model, x, precision)
        assert sum("_mma" in k for k in kernels) == convs, (shape, kernels)
        assert rel_l2(got, want) <= tol, (shape, precision, rel_l2(got, want), kernels)


def test_mma_off_and_f32_never_use_it(monkeypatch):
    require_gpu()
    shape, model, x, _ = next(cases())
    monkeypatch.delenv("TFLITE_GPU_CONV_MMA", raising=False)
    _, kernels = gpu_run(model, x, "F32")   # fp32 arithmetic: never the fp16 tensor cores
    assert not any("_mma" in k for k in kernels), kernels
    monkeypatch.setenv("TFLITE_GPU_CONV_MMA", "0")
    _, kernels = gpu_run(model, x, "F32_F16")
    assert not any("_mma" in k for k in kernels), kernels


def test_tensor_cores_match_reference_and_the_fp32_arithmetic_path(monkeypatch):
    """TFLITE_GPU_CONV_MMA=1: every 1x1 layer on the tensor cores, whatever its size."""
    require_gpu()
    first = True
    for shape, model, x, convs in cases():
        monkeypatch.setenv("TFLITE_GPU_CONV_MMA", "1")
        got, kernels = gpu_run(model, x, "F32_F16")
        if first and not any("_mma" in k for k in kernels):
            pytest.skip(f"this device has no tensor-core path (NVIDIA compute capability 8.0+): kernels {kernels}")
        first = False
        assert sum("_mma" in k for k in kernels) == convs, (shape, kernels)
        want = run_tflite_gpu(model, [x], reference=True)[0]
        assert rel_l2(got, want) <= 5e-3, (shape, rel_l2(got, want), kernels)
        monkeypatch.setenv("TFLITE_GPU_CONV_MMA", "0")
        plain, _ = gpu_run(model, x, "F32_F16")
        assert rel_l2(got, plain) <= 1e-3, (shape, rel_l2(got, plain))


def test_tensor_core_rule_takes_large_layers_only(monkeypatch):
    """Unset: 512 positions run on the tensor cores, 6 positions keep the other kernels."""
    require_gpu()
    monkeypatch.delenv("TFLITE_GPU_CONV_MMA", raising=False)
    monkeypatch.delenv("TFLITE_GPU_CONV_GEMM", raising=False)
    all_cases = list(cases())
    _, big, xb, convs = all_cases[3]
    _, kernels = gpu_run(big, xb, "F32_F16")
    if not any("_mma" in k for k in kernels):
        pytest.skip(f"this device has no tensor-core path (NVIDIA compute capability 8.0+): kernels {kernels}")
    assert sum("_mma" in k for k in kernels) == convs, kernels
    _, small, xs, _ = all_cases[4]
    _, kernels = gpu_run(small, xs, "F32_F16")
    assert not any("_mma" in k for k in kernels), kernels
