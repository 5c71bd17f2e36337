"""TFLite_Detection_PostProcess: hostile custom options (FlexBuffer) and shapes give clear
ValueErrors (never a crash); the op-harness cases in tests/op_cases/detection.py detect things."""
import numpy as np
import pytest
import zlib
from flatbuffers import flexbuffers

import tflite_gpu
from harness import run_tflite_gpu
from op_cases.detection import CASES, anchors_grid, dpp_inputs, dpp_model
from tflite_gpu.testing.builder import ModelBuilder

F32 = np.float32


def _model_with_options(raw, num_boxes=32):
    mb = ModelBuilder()
    enc = mb.add_input([1, num_boxes, 4])
    cls = mb.add_input([1, num_boxes, 4])
    anc = mb.add_const(anchors_grid())
    outs = [mb.add_tensor([1, 10, 4]), mb.add_tensor([1, 10]), mb.add_tensor([1, 10]), mb.add_tensor([1])]
    mb.add_op(("CUSTOM", "TFLite_Detection_PostProcess"), [enc, cls, anc], outs, custom_options=raw)
    for t in outs:
        mb.mark_output(t)
    return mb.build()


def _good(**kw):
    o = dict(max_detections=10, max_classes_per_detection=1, num_classes=3, nms_score_threshold=0.3,
             nms_iou_threshold=0.5, y_scale=10.0, x_scale=10.0, h_scale=5.0, w_scale=5.0)
    o.update(kw)
    return {k: v for k, v in o.items() if v is not None}


def test_cases_detect_something():
    # The harness cases would be weak if every case produced no detections.
    counts = []
    dpp = [c for c in CASES if c.id.startswith("TFLite_Detection_PostProcess")]   # not the NMS ops
    assert dpp
    for c in dpp:
        rng = np.random.default_rng(zlib.crc32(c.id.encode()))
        out = run_tflite_gpu(c.model(), list(c.inputs(rng)))
        counts.append(int(out[3][0]))
    assert sum(1 for n in counts if n >= 3) >= len(dpp) - 2, counts


@pytest.mark.parametrize("raw,match", [
    (b"", "custom options .* are missing"),
    (b"\x01\x02", "malformed flexbuffer"),
    (flexbuffers.Dumps([1, 2, 3]), "the root is not a map"),
    (flexbuffers.Dumps(_good(max_detections=None)), "'max_detections' is missing"),
    (flexbuffers.Dumps(_good(max_detections=0)), "max_detections = 0"),
    (flexbuffers.Dumps(_good(nms_iou_threshold=1.5)), r"nms_iou_threshold must be in \[0, 1\]"),
    (flexbuffers.Dumps(_good(y_scale="ten")), "'y_scale' is not a number"),
    (flexbuffers.Dumps(_good(max_detections=1 << 20, max_classes_per_detection=1 << 10)), "over the limit"),
])
def test_bad_options(raw, match):
    with pytest.raises(ValueError, match=match):
        it = tflite_gpu.Interpreter(model_content=_model_with_options(raw))
        it.allocate_tensors()


def test_truncated_and_corrupted_options_never_crash():
    raw = flexbuffers.Dumps(_good())
    rng = np.random.default_rng(0)
    variants = [raw[:k] for k in range(0, len(raw), 3)]
    for _ in range(150):
        b = bytearray(raw)
        for _ in range(3):
            b[int(rng.integers(len(b)))] = int(rng.integers(256))
        variants.append(bytes(b))
    for v in variants:
        try:
            it = tflite_gpu.Interpreter(model_content=_model_with_options(v))
            it.allocate_tensors()
            ins = dpp_inputs()(rng)
            for d, x in zip(it.get_input_details(), ins):
                it.set_tensor(d["index"], x)
            it.invoke()
        except ValueError as e:
            assert "TFLite_Detection_PostProcess" in str(e)


def test_bad_shapes():
    m = dpp_model(num_boxes=32)
    it = tflite_gpu.Interpreter(model_content=m)
    it.resize_tensor_input(it.get_input_details()[0]["index"], [1, 31, 4])
    with pytest.raises(ValueError, match="class_predictions must have shape"):
        it.allocate_tensors()
