"""MaxPoolingWithArgmax2D / MaxUnpooling2D: malformed TfLitePoolParams options and bad shapes are
clear ValueErrors at load/allocate."""
import struct

import pytest

import tflite_gpu
from op_cases.mediapipe import argmax_model, unpool_model
from tflite_gpu.testing.builder import ModelBuilder


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
