"""Bad models and bad data for NON_MAX_SUPPRESSION_V4/V5, the signal ops (RFFT2D, COMPLEX_ABS,
REAL, IMAG), CONV_3D, CONV_3D_TRANSPOSE and L2_POOL_2D. Each case is checked to fail in LiteRT
(BUILTIN_WITHOUT_DEFAULT_DELEGATES) too where LiteRT checks it, and ours must fail with a clear
exception naming the op and what is wrong: ValueError at allocate_tensors for bad models,
RuntimeError at invoke for bad data. Nothing crashes."""
import numpy as np
import pytest

import tflite_gpu
from tflite_gpu.testing.builder import ModelBuilder

F32, I32, C64 = np.float32, np.int32, np.complex64


def litert_fails(model, values):
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    try:
        it = Interpreter(model_content=model,
                         experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
        it.allocate_tensors()
        for d, v in zip(it.get_input_details(), values):
            it.set_tensor(d["index"], v)
        it.invoke()
    except (RuntimeError, ValueError):
        return True
    return False


def ours_fails(model, values, match, at_invoke):
    it = tflite_gpu.Interpreter(model_content=model)
    if not at_invoke:
        with pytest.raises(ValueError, match=match):
            it.allocate_tensors()
        return
    it.allocate_tensors()
    for d, v in zip(it.get_input_details(), values):
        it.set_tensor(d["index"], v)
    with pytest.raises(RuntimeError, match=match):
        it.invoke()


def op_model(op, inputs, outputs, options=None):
    """inputs: (shape, dtype) for graph inputs or ndarrays for constants; outputs: (shape, dtype)."""
    mb = ModelBuilder()
    ins = []
    for x in inputs:
        if isinstance(x, np.ndarray):
            ins.append(mb.add_const(x))
        else:
            ins.append(mb.add_input(list(x[0]), x[1]))
    outs = [mb.add_tensor(list(s), dt) for s, dt in outputs]
    mb.add_op(op, ins, outs, options=options)
    for t in outs:
        mb.mark_output(t)
    return mb.build()


def _nms(soft=False, boxes=(8, 4), scores=(8,), mos=np.array(4, I32), iou=np.array(0.5, F32),
         thr=np.array(0.0, F32), sigma=np.array(0.5, F32), n_out=None):
    ins = [(boxes, F32), (scores, F32), mos, iou, thr] + ([sigma] if soft else [])
    outs = [((4,), I32)] + ([((4,), F32)] if soft else []) + [((), I32)]
    if n_out is not None:
        outs = outs[:n_out]
    return op_model("NON_MAX_SUPPRESSION_V5" if soft else "NON_MAX_SUPPRESSION_V4", ins, outs)


def _vals(model):
    it = tflite_gpu.Interpreter(model_content=model)
    rng = np.random.default_rng(0)
    return [rng.uniform(0, 1, d["shape"]).astype(d["dtype"]) for d in it.get_input_details()]


BAD = [  # id, model builder, match, fails at invoke, LiteRT checks it too
    ("nms_boxes_not_n_by_4", lambda: _nms(boxes=(8, 3)), r"NON_MAX_SUPPRESSION_V4: boxes must have shape", False, True),
    ("nms_scores_length", lambda: _nms(scores=(7,)), r"scores must have shape \[8\]", False, True),
    ("nms_max_output_negative", lambda: _nms(mos=np.array(-1, I32)), "max_output_size must be >= 0", False, True),
    ("nms_max_output_not_scalar", lambda: _nms(mos=np.array([4], I32)), "max_output_size must be a scalar", False, True),
    ("nms_max_output_float", lambda: _nms(mos=np.array(4.0, F32)), "max_output_size has type FLOAT32", False, True),
    ("nms_iou_not_scalar", lambda: _nms(iou=np.array([0.5], F32)), "iou_threshold must be a scalar", False, True),
    ("nms_v4_three_outputs", lambda: _nms(soft=True, n_out=2),
     "NON_MAX_SUPPRESSION_V5: expects 3 outputs", False, True),
    ("rfft_not_power_of_two", lambda: op_model("RFFT2D", [((4, 6), F32), np.array([4, 6], I32)], [((4, 4), C64)]),
     r"RFFT2D: fft_length must be two powers of two, got \[4, 6\]", False, True),
    ("rfft_length_shape", lambda: op_model("RFFT2D", [((4, 4), F32), np.array([4, 4, 4], I32)], [((4, 3), C64)]),
     r"fft_length must have shape \[2\]", False, True),
    ("rfft_rank_1", lambda: op_model("RFFT2D", [((8,), F32), np.array([4, 4], I32)], [((4, 3), C64)]),
     "input must have rank >= 2", False, True),
    ("rfft_int_input", lambda: op_model("RFFT2D", [((4, 4), I32), np.array([4, 4], I32)], [((4, 3), C64)]),
     "input has type INT32, expected FLOAT32", False, True),
    ("rfft_dynamic_length_bad", lambda: op_model("RFFT2D", [((4, 4), F32), ((2,), I32)], [((4, 3), C64)]),
     "fft_length must be two powers of two", True, True),
    ("complex_abs_float_input", lambda: op_model("COMPLEX_ABS", [((3,), F32)], [((3,), F32)]),
     "COMPLEX_ABS: input has type FLOAT32, expected COMPLEX64", False, True),
    ("real_output_f64_for_c64", lambda: op_model("REAL", [((3,), C64)], [((3,), np.float64)]),
     r"REAL: output \(for a COMPLEX64 input\) has type FLOAT64", False, True),
    ("nms_sigma_negative", lambda: _nms(soft=True, sigma=np.array(-0.5, F32)), "soft_nms_sigma must be >= 0", True, True),
]


@pytest.mark.parametrize("name,build,match,at_invoke,litert_checks", BAD, ids=[b[0] for b in BAD])
def test_bad_model(name, build, match, at_invoke, litert_checks):
    model = build()
    vals = _vals(model) if at_invoke else []
    if litert_checks:
        assert litert_fails(model, vals or _vals(model)), f"{name}: LiteRT accepts this model"
    ours_fails(model, vals, match, at_invoke)
