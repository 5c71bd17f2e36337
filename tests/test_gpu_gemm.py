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

The split-K kernel of 1x1 convolutions at small M (EmitPointwiseSplitK, TFLITE_GPU_CONV_SPLITK)
is checked the same way: every per-item tile shape forced (TMxTNxRMxRN, incl. 1 position x 1
slice, a source-slice loop the split does not divide, K and N not multiples of 4, M = 1, a
fused residual ADD), its rule over every 1x1 layer ("all"), and its default choice on layers too
small for the rule's tiles (ChooseSplitKSmall: the classifier row, 7x7 and 14x14 projections).

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


def checked_runs(shapes, precision, seed, tile):
    """Each (batch, H, W, in, out, activation) of shapes as pointwise_model (a fused residual ADD on
    the even ones) on seeded inputs through the delegate, checked against our reference kernels
    (F32 rel-L2 <= 1e-5, fp16 storage 5e-3); yields (index, (b, h, w, ci, co), the kernels run)."""
    tol = 1e-5 if precision == "F32" else 5e-3
    rng = np.random.default_rng(seed)
    for i, (b, h, w, ci, co, act) in enumerate(shapes):
        model = pointwise_model(b, h, w, ci, co, act, residual=(i % 2 == 0))
        x = rng.standard_normal([b, h, w, ci]).astype(np.float32)
        want = run_tflite_gpu(model, [x], reference=True)[0]
        got, kernels = gpu_run(model, x, precision)
        assert got.shape == want.shape
        assert rel_l2(got, want) <= tol, (tile, precision, (b, h, w, ci, co), rel_l2(got, want), kernels)
        yield i, (b, h, w, ci, co), kernels


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
    for i, _, kernels in checked_runs(shapes, precision, 3, tile):
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


# (batch, H, W, in channels, out channels, activation): M = 1 (a classifier row), odd K and N.
SPLITK_SHAPES = SHAPES + [(1, 1, 1, 37, 10, "RELU"), (1, 1, 1, 300, 1001, "NONE"), (1, 14, 14, 128, 256, "RELU6")]


@pytest.mark.parametrize("tile", ["16x8x2x2", "32x8x4x2", "8x2x2x2", "1x1x1x1", "4x16x1x2", "64x4x4x1", "16x8x2x2x2",
                                  "16x8x2x2x0x4", "all"])
@pytest.mark.parametrize("precision", ["F32", "F32_F16"])
def test_pointwise_splitk_matches_reference(tile, precision, monkeypatch):
    require_gpu()
    monkeypatch.setenv("TFLITE_GPU_CONV_SPLITK", tile)
    monkeypatch.delenv("TFLITE_GPU_CONV_GEMM", raising=False)
    full = os.environ.get("TFLITE_GPU_TEST_FULL") == "1"
    if not full and precision != "F32" and tile not in ("all", "16x8x2x2"):
        pytest.skip("sampled: fp16 storage runs the rule and 16x8x2x2 (TFLITE_GPU_TEST_FULL=1: all)")
    shapes = SPLITK_SHAPES if full or tile == "all" else [SPLITK_SHAPES[i] for i in (0, 2, 5, 6)]
    for i, shape, kernels in checked_runs(shapes, precision, 5, tile):
        # Forced tiles fit every layer here (at most 8 float4 partial sums per item): every conv of
        # the case runs the split-K kernel. The rule ("all": also where the GEMM would run) takes
        # layers of 16+ source slices and a tile of 16+ items filling the device (PoCL: 2 units,
        # an H100: 132), here the 14x14x128 -> 256 case (in F32: in fp16 storage NVIDIA's tensor-core kernel
        # takes layers of 128+ positions first).
        splitk = [k for k in kernels if "_splitk" in k]
        if tile != "all" or (shape == (1, 14, 14, 128, 256) and precision == "F32"):
            assert len(splitk) == (2 if i % 2 == 0 else 1), (tile, kernels)
        if tile != "all":
            # Named _splitkTMxTNxRMxRNxKS (KS: the split the generator gave the tile).
            want_tile = "x".join(tile.split("x")[:4])
            assert all(k.rsplit("x", 1)[0].endswith("_splitk" + want_tile) for k in splitk), kernels
            if tile.count("x") >= 4 and tile.split("x")[4] != "0":
                assert all(k.endswith("x" + tile.split("x")[4]) for k in splitk), kernels


# Layers below 2.5 work groups of the rule's tiles per compute unit (ChooseSplitKSmall): the
# classifier row (1 position: the 1x2x1x1 tile, split 32 ways), a 7x7 projection and a 14x14 one,
# and a layer of 3 source slices (12 channels), which keeps the direct kernel.
SMALL_SHAPES = [(1, 1, 1, 300, 1001, "NONE"), (1, 7, 7, 256, 320, "RELU6"), (1, 14, 14, 96, 64, "NONE"),
                (1, 6, 6, 12, 40, "RELU")]


@pytest.mark.parametrize("precision", ["F32", "F32_F16"])
def test_splitk_small_layers(precision, monkeypatch):
    require_gpu()
    monkeypatch.delenv("TFLITE_GPU_CONV_SPLITK", raising=False)
    # The GEMM declines these layers on a GPU of many compute units (an H100: fewer than 2 waves of
    # its tiles); on a device of few (PoCL: 2) it would take them first.
    monkeypatch.setenv("TFLITE_GPU_CONV_GEMM", "0")
    monkeypatch.setenv("TFLITE_GPU_CONV_MMA", "0")  # NVIDIA's fp16 storage would take the 14x14 layer
    for i, shape, kernels in checked_runs(SMALL_SHAPES, precision, 8, "rule"):
        splitk = [k for k in kernels if "_splitk" in k]
        if shape[3] < 16:  # fewer than 4 source slices
            assert not splitk, (shape, kernels)
            continue
        assert len(splitk) == (2 if i % 2 == 0 else 1), (shape, kernels)
        if shape[1:3] == (1, 1):  # the classifier: 1 position x 2 slices per work group, K split 32 ways
            assert all("_splitk1x2x1x1x32" in k for k in splitk), kernels


def test_splitk_estimate_decides_up_to_256_positions(monkeypatch):
    """Layers of at most 256 positions take ChooseSplitKSmall's estimate even where the rule's tiles
    fill the device: on an H100 (132 compute units, where the estimate was fitted) MobileNet v1's
    14x14x512 -> 512 runs 16x8x4x2 (the rule's 8x8x2x2 before), also in fp16 storage, where the
    tensor cores no longer take it (more than 128 input channels at <= 256 positions)."""
    require_gpu()
    monkeypatch.delenv("TFLITE_GPU_CONV_SPLITK", raising=False)
    monkeypatch.delenv("TFLITE_GPU_CONV_GEMM", raising=False)
    monkeypatch.delenv("TFLITE_GPU_CONV_MMA", raising=False)
    name = tflite_gpu.GpuDelegate().info()["device_name"]
    units = {d["name"]: d["compute_units"] for d in tflite_gpu._core.list_devices()}.get(name, 0)
    if units < 100:
        pytest.skip(f"the tile estimate is fitted to an H100's 132 compute units; {name} has {units}")
    for precision in ("F32", "F32_F16"):
        for _, shape, kernels in checked_runs([(1, 14, 14, 512, 512, "RELU6")], precision, 10, "rule"):
            assert any("_splitk16x8x4x2x16" in k for k in kernels), (precision, kernels)
            assert not any("_mma" in k for k in kernels), (precision, kernels)


def test_splitk_nosmall_keeps_the_direct_kernel(monkeypatch):
    """TFLITE_GPU_CONV_SPLITK=nosmall (measurements) drops the small-layer tiles: the classifier row
    runs the direct kernel, as before them, with the same results; a layer the rule's tiles fill
    (14x14x512 -> 512 on any device: 400+ work groups of them) keeps the rule's split-K tile, also
    at <= 256 positions, where the default now asks the estimate."""
    require_gpu()
    monkeypatch.setenv("TFLITE_GPU_CONV_SPLITK", "nosmall")
    monkeypatch.setenv("TFLITE_GPU_CONV_GEMM", "0")
    monkeypatch.setenv("TFLITE_GPU_CONV_MMA", "0")
    for _, _, kernels in checked_runs(SMALL_SHAPES[:1], "F32", 9, "nosmall"):
        assert not any("_splitk" in k for k in kernels), kernels
    for _, _, kernels in checked_runs([(1, 14, 14, 512, 512, "NONE")], "F32", 9, "nosmall"):
        assert kernels and all("_splitk" in k for k in kernels), kernels


def test_splitk_off_keeps_the_old_choice(monkeypatch):
    require_gpu()
    monkeypatch.setenv("TFLITE_GPU_CONV_SPLITK", "0")
    model = pointwise_model(1, 1, 1, 37, 10, "RELU", residual=False)
    x = np.random.default_rng(6).standard_normal([1, 1, 1, 37]).astype(np.float32)
    got, kernels = gpu_run(model, x, "F32")
    assert not any("_splitk" in k for k in kernels), kernels
    assert rel_l2(got, run_tflite_gpu(model, [x], reference=True)[0]) <= 1e-5


def dwpw_model(b, h, w, ci, co, act, stride):
    net = _Net(12, "float32", "depthwise + pointwise")
    x = net.mb.add_input([b, h, w, ci], name="x")
    d = net.dwconv(x, k=3, stride=stride, act="RELU6", gain=1.0)
    y = net.conv(d, co, k=1, act=act, gain=1.0, prefix="pw")
    z = net.conv(y, co, k=1, act="NONE", gain=1.0, prefix="pw2")
    return net.finish({"x": x}, {"y": net.binary("ADD", z, y)})


@pytest.mark.parametrize("tile", ["16x8x2x2", "32x4x4x2", "4x16x1x2x4", "all"])
@pytest.mark.parametrize("precision", ["F32", "F32_F16"])
def test_splitk_computes_depthwise_input(tile, precision, monkeypatch):
    """The split-K kernel with a computed input (DEPTHWISE_CONV_2D fused in, the dwpw lever): each
    work group stages its positions' depthwise values in local memory."""
    require_gpu()
    monkeypatch.setenv("TFLITE_GPU_CONV_SPLITK", tile)
    monkeypatch.setenv("TFLITE_GPU_FUSION_DWPW_MAX_TIMES", "1000")  # forced tiles may recompute more
    monkeypatch.delenv("TFLITE_GPU_DISABLE_FUSION", raising=False)
    monkeypatch.delenv("TFLITE_GPU_CONV_GEMM", raising=False)
    if os.environ.get("TFLITE_GPU_TEST_FULL") != "1" and precision != "F32" and tile != "16x8x2x2":
        pytest.skip("sampled: fp16 storage runs 16x8x2x2 (TFLITE_GPU_TEST_FULL=1: all)")
    tol = 1e-5 if precision == "F32" else 5e-3
    rng = np.random.default_rng(8)
    # (batch, H, W, in, out, act, depthwise stride): odd K / N, batch 2, stride 2, M below one tile.
    for b, h, w, ci, co, act, st in [(1, 9, 7, 40, 72, "RELU", 1), (2, 10, 9, 17, 33, "NONE", 2), (1, 3, 2, 64, 20, "RELU6", 1)]:
        model = dwpw_model(b, h, w, ci, co, act, st)
        x = rng.standard_normal([b, h, w, ci]).astype(np.float32)
        want = run_tflite_gpu(model, [x], reference=True)[0]
        got, kernels = gpu_run(model, x, precision)
        assert rel_l2(got, want) <= tol, (tile, precision, (b, h, w, ci, co), rel_l2(got, want), kernels)
        # The depthwise runs no kernel of its own; both 1x1 layers run the split-K kernel (with
        # "all", the rule's limits may leave the second, whose input is not computed, to another).
        assert not any(k.startswith("depthwise") for k in kernels), kernels
        layers = [k for k in kernels if k not in ("to_phwc4", "from_phwc4")]  # (boundaries: direct or not)
        assert len(layers) == 2, kernels
        assert sum("_splitk" in k for k in layers) == 2 or (tile == "all" and "_splitk" in layers[0]), kernels
