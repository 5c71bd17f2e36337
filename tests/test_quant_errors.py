"""Hostile quantization parameters in a file: each is a ValueError at allocate that names the
tensor, never a crash or garbage (issue 7). Models built by tflite_gpu.testing.quant."""
import numpy as np
import pytest

import tflite_gpu
from tflite_gpu.testing import quant as Q

I8, U8, I16 = np.int8, np.uint8, np.int16
GOOD = dict(scale=[0.1], zero_point=[3])

BAD = [
    ("zero_scale", dict(scale=[0.0], zero_point=[0]), "scale"),
    ("negative_scale", dict(scale=[-0.5], zero_point=[0]), "scale"),
    ("nan_scale", dict(scale=[float("nan")], zero_point=[0]), "scale"),
    ("inf_scale", dict(scale=[float("inf")], zero_point=[0]), "scale"),
    ("zero_point_above", dict(scale=[0.1], zero_point=[128]), "zero point"),
    ("zero_point_below", dict(scale=[0.1], zero_point=[-129]), "zero point"),
]


def _allocate(model):
    it = tflite_gpu.Interpreter(model_content=model)
    it.allocate_tensors()
    return it


# One single-input op per family; the bad parameters sit on the input tensor 'in0'.
def _models(q_in):
    yield "RESHAPE", Q.single_op_model_q("RESHAPE", [([2, 3], I8, q_in)], [([6], I8, GOOD)],
                                         consts=[np.array([6], np.int32)])
    yield "TRANSPOSE", Q.single_op_model_q("TRANSPOSE", [([2, 3], I8, q_in)], [([3, 2], I8, GOOD)],
                                           consts=[np.array([1, 0], np.int32)])
    yield "PAD", Q.single_op_model_q("PAD", [([2, 3], I8, q_in)], [([4, 3], I8, GOOD)],
                                     consts=[np.array([[1, 1], [0, 0]], np.int32)])
    yield "SLICE", Q.single_op_model_q("SLICE", [([2, 3], I8, q_in)], [([1, 3], I8, GOOD)],
                                       consts=[np.array([0, 0], np.int32), np.array([1, 3], np.int32)])


@pytest.mark.parametrize("bad", BAD, ids=[b[0] for b in BAD])
def test_bad_input_quantization_is_a_value_error_naming_the_tensor(bad):
    _, q, word = bad
    for op, model in _models(q):
        with pytest.raises(ValueError) as e:
            _allocate(model)
        msg = str(e.value)
        assert "in0" in msg and word in msg and op in msg, f"{op}: {msg}"


def test_bad_output_quantization_and_uint8_range():
    m = Q.single_op_model_q("RESHAPE", [([2, 3], U8, dict(scale=[0.1], zero_point=[0]))],
                            [([6], U8, dict(scale=[0.1], zero_point=[256]))], consts=[np.array([6], np.int32)])
    with pytest.raises(ValueError, match="out0.*zero point 256"):
        _allocate(m)
    m = Q.single_op_model_q("RESHAPE", [([2, 3], I16, dict(scale=[0.1], zero_point=[40000]))],
                            [([6], I16, dict(scale=[0.1], zero_point=[0]))], consts=[np.array([6], np.int32)])
    with pytest.raises(ValueError, match="in0.*zero point 40000"):
        _allocate(m)


def test_mismatched_scale_and_zero_point_counts():
    m = Q.single_op_model_q("RESHAPE", [([2, 3], I8, dict(scale=[0.1, 0.2], zero_point=[0, 0, 0],
                                                        quantized_dimension=0))],
                            [([6], I8, GOOD)], consts=[np.array([6], np.int32)])
    with pytest.raises(ValueError):
        _allocate(m)


def test_int8_concatenation_with_different_scales_is_refused_as_tflite_does():
    # TFLite (concatenation.cc) requires equal scale and zero point for int8 / int16 inputs.
    m = Q.single_op_model_q("CONCATENATION", [([2, 3], I8, dict(scale=[0.1], zero_point=[0])),
                                              ([2, 3], I8, dict(scale=[0.2], zero_point=[0]))],
                            [([2, 6], I8, dict(scale=[0.1], zero_point=[0]))], options=dict(axis=1), version=2)
    with pytest.raises(ValueError, match="CONCATENATION"):
        _allocate(m)


@pytest.mark.parametrize("dt,q_out", [(I8, dict(scale=[1 / 128], zero_point=[-128])),
                                      (U8, dict(scale=[0.01], zero_point=[0]))])
def test_logistic_output_grid_is_checked_as_tflite_does(dt, q_out):
    from harness import run_litert
    m = Q.single_op_model_q("LOGISTIC", [([4], dt, dict(scale=[0.1], zero_point=[0]))], [([4], dt, q_out)])
    with pytest.raises(RuntimeError):  # LiteRT refuses it too
        run_litert(m, [np.zeros(4, dt)])
    with pytest.raises(ValueError, match="LOGISTIC.*output"):
        _allocate(m)


def test_int16_activation_needs_zero_point_0():
    m = Q.single_op_model_q("RELU", [([4], I16, dict(scale=[0.1], zero_point=[3]))],
                            [([4], I16, dict(scale=[0.1], zero_point=[0]))])
    with pytest.raises(ValueError, match="RELU.*in0.*zero point 3"):
        _allocate(m)


def test_add_output_scale_too_small_is_refused():
    # TFLite's ADD needs 2 * max(input scales) / (2^20 * output scale) < 1.
    m = Q.single_op_model_q("ADD", [([4], I8, dict(scale=[1.0], zero_point=[0])),
                                    ([4], I8, dict(scale=[1.0], zero_point=[0]))],
                            [([4], I8, dict(scale=[1e-7], zero_point=[0]))], options=dict(fused_activation_function="NONE"))
    with pytest.raises(ValueError, match="ADD.*output scale"):
        _allocate(m)


def test_mul_mixed_types_refused():
    m = Q.single_op_model_q("MUL", [([4], I8, dict(scale=[0.1], zero_point=[0])),
                                    ([4], U8, dict(scale=[0.1], zero_point=[0]))],
                            [([4], I8, dict(scale=[0.1], zero_point=[0]))], options=dict(fused_activation_function="NONE"))
    with pytest.raises(ValueError, match="MUL"):
        _allocate(m)
