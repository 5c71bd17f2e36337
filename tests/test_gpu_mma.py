"""1x1 convolutions on NVIDIA tensor cores (conv_mma_gpu.cc: mma.sync through inline PTX, compute
capability 8.0+; f16 operands in the fp16 storage modes, 3xTF32 in F32), against our plain reference
CPU kernels on the same model.

- The kernel's plain path (TFLITE_GPU_CONV_MMA=plain: the same tiling, weight packing, fragment
  bookkeeping and epilogue, with scalar reads instead of mma.sync) runs on every device, PoCL
  included: F32 within 1e-5 rel-L2 of the reference, fp16 storage within 5e-3 (as test_gpu_gemm).
- The tensor-core path runs where the device has it (NVIDIA sm_80+; elsewhere the test says so and
  skips). fp16 storage: within 5e-3 of the reference, and within 1e-3 of the same delegate with the
  tensor cores off (TFLITE_GPU_CONV_MMA=0), which reads the same half values and differs only in
  summation order and the final rounding to half. F32 (3xTF32: each operand split into two TF32
  terms, w = hi + lo to ~22 bits): within 1e-5 of the reference and of the tensor-cores-off path, as
  every F32 kernel (a single-TF32 product would be ~1e-3 off).

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
    # Large enough for F32's 16x64 tiles (>= 128 channels, enough work groups for 144 compute units),
    # whose k loop is unrolled by two: an odd count of 8-channel steps (K = 40: 5), then K = 36 (the
    # last step reads past the last slice), each also on to the residual's 128 / 256 -> same conv.
    (2, 48, 48, 40, 128, "RELU"),   # 4608 positions
    (2, 40, 40, 36, 256, "NONE"),   # 3200 positions
]
WIDE_TILE_SHAPES = {tuple(r[:5]) for r in SHAPES[-2:]}


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


def test_mma_off_never_uses_it(monkeypatch):
    require_gpu()
    shape, model, x, _ = next(cases())
    monkeypatch.setenv("TFLITE_GPU_CONV_MMA", "f16")
    _, kernels = gpu_run(model, x, "F32")   # "f16": not in F32
    assert not any("_mma" in k for k in kernels), kernels
    monkeypatch.setenv("TFLITE_GPU_CONV_MMA", "0")
    _, kernels = gpu_run(model, x, "F32_F16")
    assert not any("_mma" in k for k in kernels), kernels


@pytest.mark.parametrize("precision", ["F32", "F32_F16"])
def test_tensor_cores_match_reference_and_the_fp32_arithmetic_path(precision, monkeypatch):
    """TFLITE_GPU_CONV_MMA=1: every 1x1 layer on the tensor cores, whatever its size."""
    require_gpu()
    first = True
    tol, tol_off = (1e-5, 1e-5) if precision == "F32" else (5e-3, 1e-3)
    for shape, model, x, convs in cases():
        monkeypatch.setenv("TFLITE_GPU_CONV_MMA", "1")
        got, kernels = gpu_run(model, x, precision)
        if first and not any("_mma" in k for k in kernels):
            pytest.skip(f"this device has no tensor-core path (NVIDIA compute capability 8.0+): kernels {kernels}")
        first = False
        assert sum("_mma" in k for k in kernels) == convs, (shape, kernels)
        if precision == "F32" and shape in WIDE_TILE_SHAPES:
            assert any("_mmatf16x64" in k for k in kernels), (shape, kernels)
        want = run_tflite_gpu(model, [x], reference=True)[0]
        assert rel_l2(got, want) <= tol, (shape, rel_l2(got, want), kernels)
        monkeypatch.setenv("TFLITE_GPU_CONV_MMA", "0")
        plain, _ = gpu_run(model, x, precision)
        assert rel_l2(got, plain) <= tol_off, (shape, rel_l2(got, plain))


@pytest.mark.parametrize("precision", ["F32", "F32_F16"])
def test_tensor_core_rule_takes_large_layers_only(precision, monkeypatch):
    """Unset: 1024 positions with N >= K run on the tensor cores, 6 positions keep the other kernels,
    and projections (K > N) keep them in fp16 storage only from 2048 positions."""
    require_gpu()
    monkeypatch.delenv("TFLITE_GPU_CONV_MMA", raising=False)
    monkeypatch.delenv("TFLITE_GPU_CONV_GEMM", raising=False)
    all_cases = list(cases())
    # 1024 positions, N >= K: both rules take it (F32's 3xTF32 wants >= 1024 positions and N >= K)
    big, convs = pointwise_model(4, 16, 16, 64, 128, "RELU", residual=False), 1
    xb = np.random.default_rng(9).standard_normal([4, 16, 16, 64]).astype(np.float32)
    # Whether the device has tensor cores at all is asked with the kernel forced on (=1), so that
    # the rule's own choice below fails rather than skips when it regresses.
    monkeypatch.setenv("TFLITE_GPU_CONV_MMA", "1")
    _, forced = gpu_run(big, xb, precision)
    if not any("_mma" in k for k in forced):
        pytest.skip(f"this device has no tensor-core path (NVIDIA compute capability 8.0+): kernels {forced}")
    monkeypatch.delenv("TFLITE_GPU_CONV_MMA")
    _, kernels = gpu_run(big, xb, precision)
    assert sum("_mma" in k for k in kernels) == convs, kernels
    _, small, xs, _ = all_cases[4]
    _, kernels = gpu_run(small, xs, precision)
    assert not any("_mma" in k for k in kernels), kernels
    # Projections (more input than output channels): fp16 storage takes the tensor cores from 2048
    # positions only (MobileNet v2's 56x56x96->24), the split-K kernel below (14x14x384->64). Up to
    # 256 positions also K > 128 leaves them (14x14x256->512); K <= 128 keeps them (14x14x96->576).
    # F32: none of these (fewer than 1024 positions, or N < K).
    rng = np.random.default_rng(11)
    for (b, h, w, ci, co), f16_mma in (((1, 56, 56, 96, 24), True), ((1, 14, 14, 384, 64), False),
                                       ((1, 14, 14, 256, 512), False), ((1, 14, 14, 96, 576), True)):
        proj = pointwise_model(b, h, w, ci, co, "NONE", residual=False)
        _, kernels = gpu_run(proj, rng.standard_normal([b, h, w, ci]).astype(np.float32), precision)
        want = 1 if (f16_mma and precision != "F32") else 0
        assert sum("_mma" in k for k in kernels) == want, ((b, h, w, ci, co), kernels)
