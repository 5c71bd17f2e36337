"""Bad models and bad data for NON_MAX_SUPPRESSION_V4/V5, FAKE_QUANT, BITWISE_XOR, RIGHT_SHIFT, BITCAST, the signal ops (RFFT2D, COMPLEX_ABS,
REAL, IMAG), CONV_3D, CONV_3D_TRANSPOSE and L2_POOL_2D. Each case is checked to fail in LiteRT
(BUILTIN_WITHOUT_DEFAULT_DELEGATES) too where LiteRT checks it, and ours must fail with a clear
exception naming the op and what is wrong: ValueError at allocate_tensors for bad models,
RuntimeError at invoke for bad data. Nothing crashes."""
import numpy as np
import pytest

import tflite_gpu
from harness import assert_refused, litert_refuses
from tflite_gpu.testing.builder import ModelBuilder

F32, I32, C64 = np.float32, np.int32, np.complex64


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


def _c3(x=(1, 4, 4, 4, 2), f=(2, 2, 2, 2, 3), b=3, **opt):
    o = dict(padding="VALID", stride_d=1, stride_h=1, stride_w=1)
    o.update(opt)
    rng = np.random.default_rng(0)
    ins = [(x, F32), rng.normal(0, 1, f).astype(F32)] + ([np.zeros(b, F32)] if b else [])
    return op_model("CONV_3D", ins, [((1, 3, 3, 3, 3), F32)], options=o)


def _c3t(x=(1, 3, 3, 3, 2), f=(2, 2, 2, 3, 2), out=(1, 4, 4, 4, 3), **opt):
    o = dict(padding="VALID", stride_d=1, stride_h=1, stride_w=1)
    o.update(opt)
    rng = np.random.default_rng(0)
    ins = [np.array(out, I32), rng.normal(0, 1, f).astype(F32), (x, F32)]
    return op_model("CONV_3D_TRANSPOSE", ins, [(out, F32)], options=o)


def _l2(x=(1, 4, 4, 2), dt=F32, **opt):
    o = dict(padding="VALID", stride_h=1, stride_w=1, filter_height=2, filter_width=2)
    o.update(opt)
    return op_model("L2_POOL_2D", [(x, dt)], [((1, 3, 3, 2), dt)], options=o)


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
    ("conv3d_channels", lambda: _c3(x=(1, 4, 4, 4, 5)), "CONV_3D: input has 5 channels but the filter expects 2",
     False, True),
    ("conv3d_rank4_input", lambda: _c3(x=(1, 4, 4, 2)), r"CONV_3D: input must be 5-D", False, True),
    ("conv3d_bias_size", lambda: _c3(b=4), "bias has 4 elements, expected 3", False, True),
    ("conv3d_dilation_0", lambda: _c3(dilation_h_factor=0), "dilation_h_factor must be positive", False, False),
    ("conv3d_stride_0", lambda: _c3(stride_w=0), "stride_w must be positive", False, False),
    ("conv3dt_output_shape_mismatch", lambda: _c3t(out=(1, 5, 4, 4, 3)),
     "CONV_3D_TRANSPOSE: output_shape .* does not match the input shape", False, True),
    ("conv3dt_output_shape_len", lambda: op_model("CONV_3D_TRANSPOSE", [np.array([1, 4, 4, 3], I32),
                                                  np.zeros((2, 2, 2, 3, 2), F32), ((1, 3, 3, 3, 2), F32)],
                                                  [((1, 4, 4, 4, 3), F32)], options=dict(padding="VALID", stride_d=1,
                                                                                       stride_h=1, stride_w=1)),
     r"output_shape must have shape \[5\]", False, True),
    ("conv3dt_channels", lambda: _c3t(x=(1, 3, 3, 3, 4)), "input has 4 channels but the filter expects 2", False, True),
    ("l2pool_int8", lambda: _l2(dt=np.int8), "L2_POOL_2D: input has type INT8, expected FLOAT32", False, True),
    ("l2pool_filter_0", lambda: _l2(filter_width=0), "filter size must be positive", False, False),
    ("l2pool_rank3", lambda: op_model("L2_POOL_2D", [((4, 4, 2), F32)], [((3, 3, 2), F32)],
                                      options=dict(padding="VALID", stride_h=1, stride_w=1, filter_height=2,
                                                   filter_width=2)), "input must be 4-D", False, True),
    ("fake_quant_narrow_range", lambda: op_model("FAKE_QUANT", [((4,), F32)], [((4,), F32)],
                                                 options=dict(min=-1.0, max=1.0, num_bits=8, narrow_range=True)),
     "FAKE_QUANT: narrow_range is not supported", False, True),
    ("fake_quant_bits_0", lambda: op_model("FAKE_QUANT", [((4,), F32)], [((4,), F32)],
                                           options=dict(min=-1.0, max=1.0, num_bits=0)),
     r"num_bits must be in 1\.\.16, got 0", False, False),
    ("fake_quant_min_max", lambda: op_model("FAKE_QUANT", [((4,), F32)], [((4,), F32)],
                                            options=dict(min=1.0, max=1.0, num_bits=8)),
     "min must be below max", False, False),
    ("xor_float", lambda: op_model("BITWISE_XOR", [((4,), F32), ((4,), F32)], [((4,), F32)]),
     "BITWISE_XOR: unsupported input type FLOAT32", False, True),
    ("right_shift_mixed_types", lambda: op_model("RIGHT_SHIFT", [((4,), I32), ((4,), np.int8)], [((4,), I32)]),
     "RIGHT_SHIFT: input types differ: INT32 and INT8", False, True),
    ("xor_bad_broadcast", lambda: op_model("BITWISE_XOR", [((3,), I32), ((4,), I32)], [((4,), I32)]),
     r"BITWISE_XOR: shapes \[3\] and \[4\] are not broadcastable", False, True),
    ("bitcast_last_dim", lambda: op_model("BITCAST", [((6, 3), np.uint8)], [((6,), F32)]),
     "BITCAST: bitcast from UINT8 to FLOAT32 needs a last input dim of 4", False, True),
    ("bitcast_scalar_to_wider", lambda: op_model("BITCAST", [((), np.int16)], [((), I32)]),
     "needs a last input dim of 2", False, True),
    ("nms_sigma_negative", lambda: _nms(soft=True, sigma=np.array(-0.5, F32)), "soft_nms_sigma must be >= 0", True, True),
]


@pytest.mark.parametrize("name,build,match,at_invoke,litert_checks", BAD, ids=[b[0] for b in BAD])
def test_bad_model(name, build, match, at_invoke, litert_checks):
    model = build()
    vals = _vals(model) if at_invoke else []
    if litert_checks:
        assert litert_refuses(model, vals or _vals(model)), f"{name}: LiteRT accepts this model"
    assert_refused(model, vals, match=match, at_invoke=at_invoke)


def test_gpu_delegate_partitions_around_l2_pool_and_rfft():
    """ADD -> L2_POOL_2D -> MUL -> RFFT2D -> COMPLEX_ABS on PoCL: the delegate takes ADD and MUL (two
    partitions), L2_POOL_2D / RFFT2D / COMPLEX_ABS stay on the CPU with the reason; the result equals
    our reference kernels on the CPU."""
    from gpu_util import delegate
    from harness import run_tflite_gpu
    mb = ModelBuilder()
    x = mb.add_input([1, 8, 8, 2], F32)
    t1 = mb.add_tensor([1, 8, 8, 2], F32)
    mb.add_op("ADD", [x, mb.add_const(np.full([1, 1, 1, 2], 0.5, F32))], [t1])
    t2 = mb.add_tensor([1, 4, 4, 2], F32)
    mb.add_op("L2_POOL_2D", [t1], [t2], options=dict(padding="VALID", stride_h=2, stride_w=2, filter_height=2,
                                                      filter_width=2))
    t3 = mb.add_tensor([1, 4, 4, 2], F32)
    mb.add_op("MUL", [t2, mb.add_const(np.full([1, 1, 1, 2], 1.5, F32))], [t3])
    t4 = mb.add_tensor([1, 4, 4, 2], C64)
    mb.add_op("RFFT2D", [t3, mb.add_const(np.array([4, 2], I32))], [t4])
    t5 = mb.add_tensor([1, 4, 4, 2], F32)
    mb.add_op("COMPLEX_ABS", [t4], [t5])
    mb.mark_output(t5)
    model = mb.build()
    d = delegate("F32", max_delegated_partitions=4)
    xv = np.random.default_rng(1).normal(0, 1, (1, 8, 8, 2)).astype(F32)
    it = tflite_gpu.Interpreter(model_content=model, experimental_delegates=[d])
    it.allocate_tensors()
    rep = it.delegation_report()
    assert rep["delegated_nodes"] == 2 and rep["partitions"] == 2, rep
    refused = {u[1]: u[3] for u in rep["unsupported"]}
    assert set(refused) == {"L2_POOL_2D", "RFFT2D", "COMPLEX_ABS"} and all(refused.values()), refused
    it.set_tensor(it.get_input_details()[0]["index"], xv)
    it.invoke()
    got = it.get_tensor(it.get_output_details()[0]["index"])
    want = run_tflite_gpu(model, [xv], reference=True)[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
