"""The tiled-GEMM kernel of 1x1 convolutions on the GPU delegate (conv_common_gpu.cc,
EmitPointwiseGemm), checked against our plain reference CPU kernels on the same model, for every
register tile the generator has (forced with TFLITE_GPU_CONV_GEMM=RMxRN) and for its own choice.

Shapes are picked to hit every edge of the tiling: positions not a multiple of the tile (and
fewer than one tile), batch > 1 (positions flattened over B x H x W), input channels not a
multiple of the 16-channel K step (and of 4: padding lanes), output channels not a multiple of the
tile's 64 * RN (and of 4), bias + fused activation, a residual ADD fused behind the conv.

CI samples (PoCL compiles every model per tile): each forced tile in F32 on three shapes, fp16
storage with the generator's choice and 8x2; TFLITE_GPU_TEST_FULL=1 runs every tile x precision x
shape.

Tolerances as in test_gpu_ops.py: F32 rel-L2 <= 1e-5, fp16 storage 5e-3.
"""
import os

import numpy as np
import pytest

import tflite_gpu
from gpu_util import delegate, require_gpu
from harness import rel_l2, run_tflite_gpu
from tflite_gpu.testing.zoo import _Net

# (batch, H, W, in channels, out channels, activation)
SHAPES = [
    (1, 7, 9, 40, 72, "RELU6"),     # 63 positions, K = 40 (2.5 K steps), N = 72 (18 slices)
    (3, 5, 5, 64, 130, "NONE"),     # batch 3, N = 130 (padding lanes in the last slice)
    (1, 13, 13, 17, 33, "RELU"),    # K = 17 (padding lanes), N = 33
    (2, 16, 16, 128, 64, "NONE"),   # exact multiples
    (1, 3, 2, 96, 256, "RELU"),     # 6 positions: less than one tile of any size
]


def pointwise_model(b, h, w, ci, co, act, residual):
    net = _Net(11, "float32", "pointwise")
    x = net.mb.add_input([b, h, w, ci], name="x")
    y = net.conv(x, co, k=1, act=act, gain=1.0, prefix="pw")
    if residual:
        z = net.conv(y, co, k=1, act="NONE", gain=1.0, prefix="pw2")
        y = net.binary("ADD", z, y)
    return net.finish({"x": x}, {"y": y})


def gpu_run(model, x, precision):
    it = tflite_gpu.Interpreter(model_content=model,
                                experimental_delegates=[delegate(precision, enable_profiling=True)])
    it.allocate_tensors()
    rep = it.delegation_report()
    assert rep["delegated_nodes"] == rep["total_nodes"], rep["unsupported"]
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.enable_profiling(True)
    it.invoke()
    kernels = [k["kernel"] for k in it._core.gpu_kernel_times()]
    return it.get_tensor(it.get_output_details()[0]["index"]), kernels


@pytest.mark.parametrize("tile", ["8x2", "4x2", "2x2", "8x1", "4x1", "2x1", "1x4", "auto"])
@pytest.mark.parametrize("precision", ["F32", "F32_F16"])
def test_pointwise_gemm_matches_reference(tile, precision, monkeypatch):
    require_gpu()
    if tile == "auto":
        monkeypatch.delenv("TFLITE_GPU_CONV_GEMM", raising=False)
    else:
        monkeypatch.setenv("TFLITE_GPU_CONV_GEMM", tile)
    full = os.environ.get("TFLITE_GPU_TEST_FULL") == "1"
    if not full and precision != "F32" and tile not in ("auto", "8x2"):
        pytest.skip("sampled: fp16 storage runs the generator's choice and 8x2 (TFLITE_GPU_TEST_FULL=1: all)")
    shapes = SHAPES if full or tile == "auto" else [SHAPES[0], SHAPES[1], SHAPES[4]]
    tol = 1e-5 if precision == "F32" else 5e-3
    rng = np.random.default_rng(3)
    for i, (b, h, w, ci, co, act) in enumerate(shapes):
        model = pointwise_model(b, h, w, ci, co, act, residual=(i % 2 == 0))
        x = rng.standard_normal([b, h, w, ci]).astype(np.float32)
        want = run_tflite_gpu(model, [x], reference=True)[0]
        got, kernels = gpu_run(model, x, precision)
        assert got.shape == want.shape
        assert rel_l2(got, want) <= tol, (tile, precision, (b, h, w, ci, co), rel_l2(got, want), kernels)
        gemm = [k for k in kernels if "_gemm" in k]
        if tile != "auto":
            # Every conv here has 8+ output slices, so a forced tile runs for each of them (the
            # generator refuses one only below 8 slices or 256-item work groups).
            assert len(gemm) == (2 if i % 2 == 0 else 1), (tile, kernels)
            assert all(k.endswith("_gemm" + tile) for k in gemm), kernels


def test_gemm_off_runs_the_direct_kernel(monkeypatch):
    require_gpu()
    monkeypatch.setenv("TFLITE_GPU_CONV_GEMM", "0")
    model = pointwise_model(2, 16, 16, 128, 64, "NONE", residual=False)
    x = np.random.default_rng(4).standard_normal([2, 16, 16, 128]).astype(np.float32)
    got, kernels = gpu_run(model, x, "F32")
    assert not any("_gemm" in k for k in kernels), kernels
    assert rel_l2(got, run_tflite_gpu(model, [x], reference=True)[0]) <= 1e-5
