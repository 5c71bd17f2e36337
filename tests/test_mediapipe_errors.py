"""MediaPipe custom ops: malformed options (TfLitePoolParams for MaxPoolingWithArgmax2D /
MaxUnpooling2D; FlexBuffer maps for Landmarks2TransformMatrix, TransformLandmarks,
TransformTensorBilinear) and bad shapes/types are clear ValueErrors at load/allocate naming the op
and the problem."""
import struct

import numpy as np
import pytest
from flatbuffers import flexbuffers

import tflite_gpu
from gpu_util import delegate, require_gpu
from harness import _run, run_tflite_gpu
from op_cases.mediapipe import (_V1, _V2, argmax_model, l2tm_model, resampler_model, tl_model, ttb_model,
                                unpool_model)
from tflite_gpu.testing.builder import ModelBuilder, flex_options


def _argmax_with(raw):
    mb = ModelBuilder()
    x = mb.add_input([1, 4, 4, 2])
    y, i = mb.add_tensor([1, 2, 2, 2]), mb.add_tensor([1, 2, 2, 2])
    mb.add_op(("CUSTOM", "MaxPoolingWithArgmax2D"), [x], [y, i], custom_options=raw)
    mb.mark_output(y)
    mb.mark_output(i)
    return mb.build()


@pytest.mark.parametrize("raw,match", [
    (None, "must hold a TfLitePoolParams"),
    (struct.pack("<5i", 1, 2, 2, 2, 2), "got 20 bytes"),
    (struct.pack("<6i", 0, 2, 2, 2, 2, 0), "padding 0"),
    (struct.pack("<6i", 1, 0, 2, 2, 2, 0), "strides and filter sizes"),
    (struct.pack("<6i", 1, 2, 2, -3, 2, 0), "strides and filter sizes"),
    (struct.pack("<6i", 1, 2, 2, 2, 2, 9), "unsupported activation 9"),
])
def test_bad_pool_params(raw, match):
    with pytest.raises(ValueError, match=match):
        tflite_gpu.Interpreter(model_content=_argmax_with(raw)).allocate_tensors()


def test_unpool_indices_shape_must_match():
    it = tflite_gpu.Interpreter(model_content=unpool_model((1, 3, 3, 2)))
    it.resize_tensor_input(it.get_input_details()[1]["index"], [1, 3, 2, 2])
    with pytest.raises(ValueError, match="the indices have shape"):
        it.allocate_tensors()


def test_argmax_rank_must_be_4():
    it = tflite_gpu.Interpreter(model_content=argmax_model((1, 4, 4, 2)))
    it.resize_tensor_input(0, [4, 4, 2])
    with pytest.raises(ValueError, match="must have rank 4"):
        it.allocate_tensors()


# ------------------------------------------------------------------ Landmarks2TransformMatrix
def _load(model):
    tflite_gpu.Interpreter(model_content=model).allocate_tensors()


def _v1(**kw):
    o = dict(_V1, **kw)
    return flex_options({k: v for k, v in o.items() if v is not None})


def _v2(**kw):
    o = dict(_V2, **kw)
    return flex_options({k: v for k, v in o.items() if v is not None})


@pytest.mark.parametrize("version,raw,match", [
    (1, None, "custom options .* are missing"),
    (2, b"\x01\x02", "malformed flexbuffer"),
    (2, flexbuffers.Dumps([1, 2, 3]), "the root is not a map"),
    (1, _v1(input_hw=None), "'input_hw' is missing"),
    (1, _v1(input_hw=[192]), "input_hw has 1 elements"),
    (1, _v1(output_hw=[0, 5]), r"output_hw\[0\] = 0"),
    (1, _v1(input_hw=3), "'input_hw' is not a vector of integers"),
    (1, _v1(dimensions=2), "dimensions = 2"),
    (1, _v1(landmarks_range=0), "landmarks_range = 0"),
    (1, _v1(bbox_size_multiplier=0.0), "bbox_size_multiplier must not be 0"),
    (1, _v1(bbox_size_multiplier="big"), "'bbox_size_multiplier' is not a number"),
    (1, _v1(left_rotation_idx=-1), "left_rotation_idx = -1"),
    (1, _v1(subset=[]), "subset has 0 elements"),
    (1, _v1(subset=[1, -4]), r"subset\[1\] = -4"),
    (1, _v1(subset=[1.5, 2.5]), "'subset' is not a vector of integers"),
    (2, _v2(subset_idxs=None), "'subset_idxs' is missing"),
    (2, _v2(subset_idxs=[]), "subset_idxs has 0 elements"),
    (2, _v2(right_rotation_idx=None), "'right_rotation_idx' is missing"),
    (2, _v2(output_height=0), "output_height = 0"),
    (2, _v2(output_width=None), "'output_width' is missing"),
    (2, _v2(scale_x=0.0), "scale_x and scale_y must be > 0"),
    (2, _v2(scale_y=-1.0), "scale_x and scale_y must be > 0"),
    (2, _v2(target_rotation_radians="up"), "'target_rotation_radians' is not a number"),
    (2, _v2(target_rotation_radians=float("nan")), "target_rotation_radians is not a finite float32"),
])
def test_l2tm_bad_options(version, raw, match):
    shape = (1, 1, 1, 60) if version == 1 else (1, 478, 3)
    with pytest.raises(ValueError, match="Landmarks2TransformMatrix.*" + match):
        _load(l2tm_model(shape, raw, version))


def test_l2tm_version_3_is_refused():
    with pytest.raises(ValueError, match="Landmarks2TransformMatrix.*version 3 is not supported"):
        _load(l2tm_model((1, 478, 3), _v2(), 3))


@pytest.mark.parametrize("version,shape,dtype,match", [
    (1, (1, 60), np.float32, r"version 1 takes landmarks of shape \[1, 1, 1, 3 \* K\]"),
    (1, (1, 2, 1, 30), np.float32, r"version 1 takes landmarks of shape"),
    (2, (1, 1, 1, 1434), np.float32, "version 2 takes landmarks of rank 3"),
    (2, (1, 478, 3), np.int32, "the landmarks"),
    (1, (1, 1, 1, 30), np.float32, r"landmark index 14 \(options\) is out of range: .* holds 10 landmarks"),
    (2, (1, 400, 3), np.float32, "landmark index 454 .* holds 400 landmarks"),
    (2, (1, 478, 0), np.float32, "landmark index 454 .* holds 0 landmarks"),
])
def test_l2tm_bad_input(version, shape, dtype, match):
    opts = _v1() if version == 1 else _v2()
    with pytest.raises(ValueError, match="Landmarks2TransformMatrix.*" + match):
        _load(l2tm_model(shape, opts, version, dtype=dtype))


# ------------------------------------------------------------------ TransformLandmarks
@pytest.mark.parametrize("raw,match", [
    (b"\x05\x05\x05", "malformed flexbuffer"),
    (flex_options(dict(dimensions=4)), "dimensions = 4"),
    (flex_options(dict(dimensions=1)), "dimensions = 1"),
    (flex_options(dict(dimensions="3")), "'dimensions' is not a number"),
    (flex_options(dict(scale=0.0)), "scale must not be 0"),
    (flex_options(dict(scale=[1.0])), "'scale' is not a number"),
])
def test_tl_bad_options(raw, match):
    with pytest.raises(ValueError, match="TransformLandmarks.*" + match):
        _load(tl_model((1, 1, 1, 30), 1, raw))


@pytest.mark.parametrize("version,shape,opts,kw,match", [
    (1, (1, 1, 1, 31), None, {}, "last dimension 31 is not a multiple of dimensions = 3"),
    (1, (1, 1, 1, 9), dict(dimensions=2), {}, "last dimension 9 is not a multiple of dimensions = 2"),
    (1, (1, 30), None, {}, r"version 1 takes landmarks of shape \[1, H, W, C\]"),
    (1, (2, 1, 1, 30), None, {}, r"version 1 takes landmarks of shape"),
    (2, (1, 10, 4), None, {}, r"version 2 takes landmarks of shape \[1, N, 2 or 3\], got \[1, 10, 4\]"),
    (2, (1, 1, 10, 3), None, {}, "version 2 takes landmarks of shape"),
    (2, (3, 10, 3), None, {}, "version 2 takes landmarks of shape"),
    (2, (1, 10, 3), None, dict(mat_shape=(1, 3, 3)), r"the matrix must hold 16 values .* got shape \[1, 3, 3\]"),
    (2, (1, 10, 3), None, dict(dtype=np.int32), "the landmarks"),
])
def test_tl_bad_input(version, shape, opts, kw, match):
    with pytest.raises(ValueError, match="TransformLandmarks.*" + match):
        _load(tl_model(shape, version, opts, **kw))


def test_tl_version_3_is_refused():
    with pytest.raises(ValueError, match="TransformLandmarks.*version 3 is not supported"):
        _load(tl_model((1, 10, 3), 3))


# ------------------------------------------------------------------ TransformTensorBilinear
@pytest.mark.parametrize("version,raw,match", [
    (2, None, "custom options .* are missing"),
    (2, b"\x00\x00", "malformed flexbuffer"),
    (2, flex_options(dict(output_width=8)), "'output_height' is missing"),
    (2, flex_options(dict(output_height=8, output_width=0)), "output_width = 0"),
    (2, flex_options(dict(output_height=8.5, output_width="8")), "'output_width' is not a number"),
    (1, flex_options(dict(output_size=[8, 8], mode="nearest")), "mode 'nearest' is not supported"),
    (1, flex_options(dict(output_size=[8, 8], mode=3)), "'mode' is not a string"),
    (1, flex_options(dict(mode="bilinear")), "'output_size' is missing"),
    (1, flex_options(dict(output_size=[8])), "output_size has 1 elements"),
    (1, flex_options(dict(output_size=[8, -2])), r"output_size\[1\] = -2"),
    (1, flex_options(dict(output_size=[8.0, 8.0])), "'output_size' is not a vector of integers"),
])
def test_ttb_bad_options(version, raw, match):
    with pytest.raises(ValueError, match="TransformTensorBilinear.*" + match):
        _load(ttb_model((1, 8, 8, 3), version, raw, out_shape=[1, 8, 8, 3]))


@pytest.mark.parametrize("shape,kw,match", [
    ((1, 8, 8), {}, r"the data input must have shape \[1, H, W, C\], got \[1, 8, 8\]"),
    ((2, 8, 8, 3), {}, r"the data input must have shape \[1, H, W, C\], got \[2, 8, 8, 3\]"),
    ((1, 8, 8, 3), dict(mat_shape=(1, 8)), r"the matrix must hold 16 values .* got shape \[1, 8\]"),
    ((1, 8, 8, 3), dict(dtype=np.int32), "the data input"),
])
def test_ttb_bad_input(shape, kw, match):
    with pytest.raises(ValueError, match="TransformTensorBilinear.*" + match):
        _load(ttb_model(shape, 2, dict(output_height=4, output_width=4), out_shape=[1, 4, 4, 3], **kw))


def test_ttb_huge_output_is_refused():
    opts = dict(output_height=1 << 24, output_width=1 << 24)
    with pytest.raises(ValueError, match="TransformTensorBilinear.*is too large"):
        _load(ttb_model((1, 8, 8, 3), 2, opts, out_shape=[1, 4, 4, 3]))


def test_transform_tensor_bilinear_gpu_refusal_names_its_reason():
    """TransformTensorBilinear runs on the GPU (tests/test_gpu_ops.py); a node the delegate cannot
    take (here a rank-5 matrix, which the CPU accepts: 16 values) is refused with its reason and
    runs on the CPU with the CPU's results."""
    require_gpu()
    model = ttb_model((1, 8, 8, 3), 2, dict(output_height=5, output_width=5), mat_shape=(1, 1, 1, 4, 4))
    rng = np.random.default_rng(3)
    x = [rng.standard_normal((1, 8, 8, 3)).astype(np.float32), np.eye(4, dtype=np.float32).reshape(1, 1, 1, 4, 4)]
    want = run_tflite_gpu(model, x)
    it = tflite_gpu.Interpreter(model_content=model, experimental_delegates=[delegate()])
    got = _run(it, x)
    rep = it.delegation_report()
    assert [u[1] for u in rep["unsupported"]] == ["TransformTensorBilinear"]
    assert "rank 5" in rep["unsupported"][0][3]
    np.testing.assert_array_equal(got[0], want[0])


@pytest.mark.parametrize("data,warp,kw,match", [
    ((1, 4, 4), (1, 2, 2, 2), dict(out_shape=[1, 2, 2, 1]), r"the data input must have shape \[batch, height, width, channels\], got \[1, 4, 4\]"),
    ((1, 4, 4, 3), (1, 2, 3), {}, r"the warp input must have shape \[batch, \.\.\., 2\] .*got \[1, 2, 3\]"),
    ((1, 4, 4, 3), (2,), dict(out_shape=[3]), r"the warp input must have shape"),
    ((2, 4, 4, 3), (1, 2, 2, 2), {}, r"the data batch \(2\) and the warp batch \(1\) differ"),
    ((1, 4, 4, 3), (1, 2, 2, 2), dict(dtype=np.int32), "the data input has type INT32"),
    ((1, 4, 4, 3), (1, 2, 2, 2), dict(warp_dtype=np.int32), "the warp input has type INT32"),
])
def test_resampler_bad_input(data, warp, kw, match):
    with pytest.raises(ValueError, match="Resampler.*" + match):
        _load(resampler_model(data, warp, **kw))


def test_resampler_one_input_is_refused():
    mb = ModelBuilder()
    x = mb.add_input([1, 4, 4, 2])
    y = mb.add_tensor([1, 4, 4, 2])
    mb.add_op(("CUSTOM", "Resampler"), [x], [y])
    mb.mark_output(y)
    with pytest.raises(ValueError, match="Resampler.*expects 2 inputs, got 1"):
        _load(mb.build())


def test_resampler_gpu_refusal_names_its_reason():
    """Resampler runs on the GPU for a rank-4 warp (tests/test_gpu_ops.py); a rank-3 warp, which
    the CPU takes, stays on the CPU with the reason and the CPU's results."""
    require_gpu()
    model = resampler_model((1, 5, 5, 3), (1, 7, 2))
    rng = np.random.default_rng(5)
    x = [rng.standard_normal((1, 5, 5, 3)).astype(np.float32), rng.uniform(-1, 5, (1, 7, 2)).astype(np.float32)]
    want = run_tflite_gpu(model, x)
    it = tflite_gpu.Interpreter(model_content=model, experimental_delegates=[delegate()])
    got = _run(it, x)
    rep = it.delegation_report()
    assert [u[1] for u in rep["unsupported"]] == ["Resampler"]
    assert "[B, H', W', 2]" in rep["unsupported"][0][3]
    np.testing.assert_array_equal(got[0], want[0])
