"""Bad quantization parameters for the issue-7 kernels added after the first pass (int16 LOGISTIC /
TANH / SOFTMAX / PRELU, quantized RESIZE_BILINEAR, DIV, SQUARED_DIFFERENCE, EXP, SUM, hybrid
BATCH_MATMUL): each is a ValueError at allocate naming the op and what is wrong, and LiteRT's builtin
kernels (BUILTIN_WITHOUT_DEFAULT_DELEGATES) refuse the same model, unless the case says it is a
limitation of ours (LiteRT runs it, we refuse it with a clear message)."""
import numpy as np
import pytest

from harness import assert_refused, litert_refuses
from tflite_gpu.testing import quant as Q

I8, U8, I16 = np.int8, np.uint8, np.int16


def _unary(op, dt, qi, qo, shape=(2, 8), version=3, options=None):
    m = Q.single_op_model_q(op, [(list(shape), dt, qi)], [(list(shape), dt, qo)], options=options, version=version)
    return m, [np.zeros(shape, dt)]


def _prelu16(alpha_dt):
    s = [2, 5]
    m = Q.single_op_model_q("PRELU", [(s, I16, Q.QParams(0.001, 0)), ([5], alpha_dt, Q.QParams(0.005, 0))],
                            [(s, I16, Q.QParams(0.001, 0))])
    return m, [np.zeros(s, I16), np.zeros([5], alpha_dt)]


OUT16 = Q.QParams(1 / 32768, 0)


def _resize(dt_in, dt_out, qi, qo):
    m = Q.single_op_model_q("RESIZE_BILINEAR", [([1, 3, 3, 2], dt_in, qi)], [([1, 5, 5, 2], dt_out, qo)],
                            options=dict(align_corners=False, half_pixel_centers=False), version=4,
                            consts=[np.array([5, 5], np.int32)])
    return m, [np.zeros([1, 3, 3, 2], dt_in)]


def _binary(op, dt, q1, q2, qo, s1=(2, 5), s2=(2, 5), so=(2, 5), options=None, version=2):
    m = Q.single_op_model_q(op, [(list(s1), dt, q1), (list(s2), dt, q2)], [(list(so), dt, qo)], options=options,
                            version=version)
    return m, [np.ones(s1, dt), np.ones(s2, dt)]


_DIV = dict(fused_activation_function="NONE")
_PC = Q.QParams([0.1, 0.2, 0.3, 0.1, 0.1], [0, 0, 0, 0, 0], axis=1)

BOTH_REFUSE = [
    ("exp16_in_zero_point", lambda: _unary("EXP", I16, Q.QParams(0.001, 5), Q.QParams(0.002, 0), version=2),
     ["EXP", "in0", "zero point"]),
    ("exp16_out_zero_point", lambda: _unary("EXP", I16, Q.QParams(0.001, 0), Q.QParams(0.002, -3), version=2),
     ["EXP", "out0", "zero point"]),
    ("sqdiff_uint8", lambda: _binary("SQUARED_DIFFERENCE", U8, Q.QParams(0.1, 128), Q.QParams(0.1, 128),
                                     Q.QParams(0.1, 128)), ["SQUARED_DIFFERENCE", "UINT8"]),
    ("sqdiff_int16", lambda: _binary("SQUARED_DIFFERENCE", I16, Q.QParams(0.1, 0), Q.QParams(0.1, 0),
                                     Q.QParams(0.1, 0)), ["SQUARED_DIFFERENCE", "INT16"]),
    ("div_per_channel_divisor", lambda: _binary("DIV", I8, Q.QParams(0.1, 0), _PC, Q.QParams(0.1, 0), options=_DIV),
     ["DIV", "in1", "per-channel"]),
    ("div_type_mix", lambda: (Q.single_op_model_q("DIV", [([2, 5], I8, Q.QParams(0.1, 0)),
                                                          ([2, 5], U8, Q.QParams(0.1, 128))],
                                                  [([2, 5], I8, Q.QParams(0.1, 0))], options=_DIV, version=2),
                              [np.ones([2, 5], I8), np.ones([2, 5], U8)]), ["DIV", "types"]),
    ("exp_uint8", lambda: _unary("EXP", U8, Q.QParams(0.05, 128), Q.QParams(0.1, 0), version=2), ["EXP", "UINT8"]),
    ("logistic_out_scale", lambda: _unary("LOGISTIC", I16, Q.QParams(0.001, 0), Q.QParams(1 / 16384, 0)),
     ["LOGISTIC", "1/32768"]),
    ("logistic_out_zero_point", lambda: _unary("LOGISTIC", I16, Q.QParams(0.001, 0), Q.QParams(1 / 32768, 5)),
     ["LOGISTIC", "out0", "zero point"]),
    ("logistic_in_zero_point", lambda: _unary("LOGISTIC", I16, Q.QParams(0.001, 3), OUT16), ["LOGISTIC", "in0", "zero point"]),
    ("tanh_out_scale", lambda: _unary("TANH", I16, Q.QParams(0.001, 0), Q.QParams(0.001, 0)), ["TANH", "2^-15"]),
    ("tanh_in_zero_point", lambda: _unary("TANH", I16, Q.QParams(0.001, -1), OUT16), ["TANH", "in0", "zero point"]),
    ("softmax16_out_scale", lambda: _unary("SOFTMAX", I16, Q.QParams(0.001, 0), Q.QParams(1 / 256, 0),
                                           options=dict(beta=1.0)), ["SOFTMAX", "1/32768"]),
    ("softmax16_out_zero_point", lambda: _unary("SOFTMAX", I16, Q.QParams(0.001, 0), Q.QParams(1 / 32768, 7),
                                                options=dict(beta=1.0)), ["SOFTMAX", "out0", "zero point"]),
    ("softmax16_in_zero_point", lambda: _unary("SOFTMAX", I16, Q.QParams(0.001, 9), OUT16, options=dict(beta=1.0)),
     ["SOFTMAX", "in0", "zero point"]),
]


@pytest.mark.parametrize("case", BOTH_REFUSE, ids=[c[0] for c in BOTH_REFUSE])
def test_bad_params_refused_like_litert(case):
    _, build, words = case
    model, inputs = build()
    assert litert_refuses(model, inputs), "LiteRT builtin runs this model; the case is wrong"
    assert_refused(model, words=words)


# Our limitations (LiteRT runs these): a clear ValueError, never a wrong result.
# The SQUARED_DIFFERENCE ones are not run through LiteRT: its TFLITE_CHECK on the output multiplier
# aborts the process (a tiny output scale, or no parameters: scale 0 gives a NaN multiplier).
OURS_ONLY = [
    ("sqdiff_out_scale_too_small", lambda: _binary("SQUARED_DIFFERENCE", I8, Q.QParams(0.5, 0), Q.QParams(0.5, 0),
                                                   Q.QParams(1e-5, 0)), ["SQUARED_DIFFERENCE", "output scale"]),
    ("sqdiff_no_quant", lambda: _binary("SQUARED_DIFFERENCE", I8, None, Q.QParams(0.5, 0), Q.QParams(0.1, 0)),
     ["SQUARED_DIFFERENCE", "in0", "no quantization"]),
    ("sqdiff_rank5_broadcast", lambda: _binary("SQUARED_DIFFERENCE", I8, Q.QParams(0.1, 0), Q.QParams(0.1, 0),
                                               Q.QParams(0.1, 0), s1=(2, 1, 3, 1, 2), s2=(1, 2, 1, 3, 1),
                                               so=(2, 2, 3, 3, 2)), ["SQUARED_DIFFERENCE", "4-D"]),
    # LiteRT reads a NaN / zero scale into its multiplier and runs.
    ("div_nan_scale", lambda: _binary("DIV", I8, Q.QParams(float("nan"), 0), Q.QParams(0.1, 0), Q.QParams(0.1, 0),
                                      options=_DIV), ["DIV", "in0", "scale"]),
    ("div_zero_out_scale", lambda: _binary("DIV", U8, Q.QParams(0.1, 3), Q.QParams(0.1, 3), Q.QParams(0.0, 3),
                                           options=_DIV), ["DIV", "out0", "scale"]),
    ("div_no_quant", lambda: _binary("DIV", I16, Q.QParams(0.1, 0), None, Q.QParams(0.1, 0), options=_DIV),
     ["DIV", "in1", "no quantization"]),
    # LiteRT builds its int16 EXP table from a NaN / zero scale and runs.
    ("exp16_nan_in_scale", lambda: _unary("EXP", I16, Q.QParams(float("nan"), 0), Q.QParams(0.002, 0), version=2),
     ["EXP", "in0", "scale"]),
    ("exp16_zero_out_scale", lambda: _unary("EXP", I16, Q.QParams(0.001, 0), Q.QParams(0.0, 0), version=2),
     ["EXP", "out0", "scale"]),
    ("sum_nan_scale", lambda: (Q.single_op_model_q("SUM", [([2, 5], I8, Q.QParams(float("nan"), 0))],
                                                   [([2], I8, Q.QParams(0.1, 0))], options=dict(keep_dims=False),
                                                   version=2, consts=[np.array([1], np.int32)]), None),
     ["SUM", "in0", "scale"]),
    # LiteRT runs an int8 -> uint8 RESIZE_BILINEAR (it checks no output type); refused here.
    ("resize_type_mix", lambda: _resize(I8, U8, Q.QParams(0.1, 0), Q.QParams(0.1, 128)), ["RESIZE_BILINEAR", "type"]),
    # LiteRT's RESIZE_BILINEAR reads no quantization parameters; a NaN / zero scale is refused here.
    ("resize_nan_scale", lambda: _resize(I8, I8, Q.QParams(float("nan"), 0), Q.QParams(0.1, 0)),
     ["RESIZE_BILINEAR", "in0", "scale"]),
    ("resize_zero_out_scale", lambda: _resize(U8, U8, Q.QParams(0.1, 3), Q.QParams(0.0, 3)),
     ["RESIZE_BILINEAR", "out0", "scale"]),
    # LiteRT 2.3's int16 PRELU reads the alpha buffer as int8 whatever its type (measured: an int16
    # alpha's low bytes act as the alphas), so an int16 alpha gives garbage there; refused here.
    ("prelu16_int16_alpha", lambda: _prelu16(I16), ["PRELU", "INT8 alpha"]),
    ("prelu16_uint8_alpha", lambda: _prelu16(U8), ["PRELU", "INT8 alpha"]),
    # LiteRT reads the missing parameters as scale 0 and runs; we refuse an int16 tensor without them.
    ("logistic16_no_quant", lambda: _unary("LOGISTIC", I16, None, OUT16), ["LOGISTIC", "in0", "no quantization"]),
    ("logistic16_pot_scale", lambda: _unary("LOGISTIC", I16, Q.QParams(2.0 ** -12, 0), OUT16),
     ["LOGISTIC", "power of two", "not supported yet"]),
    ("tanh16_pot_scale", lambda: _unary("TANH", I16, Q.QParams(2.0 ** -11, 0), OUT16),
     ["TANH", "power of two", "not supported yet"]),
]




def _hbmm_bad(zp=0, per_channel_axis=None, out_dt=np.float32):
    from tflite_gpu.testing.builder import ModelBuilder
    mb = ModelBuilder()
    a = mb.add_input([2, 3, 4], name="a")
    q = dict(scale=[0.02], zero_point=[zp])
    if per_channel_axis is not None:
        q = dict(scale=[0.02] * 4, zero_point=[0] * 4, quantized_dimension=per_channel_axis)
    b = mb.add_const(np.ones([4, 4], I8), name="b", quant=q)
    y = mb.add_tensor([2, 3, 4], out_dt, name="y",
                      quant=None if out_dt == np.float32 else dict(scale=[0.1], zero_point=[0]))
    mb.add_op("BATCH_MATMUL", [a, b], [y], version=4)
    mb.mark_output(y)
    return mb.build(), None


def _hlstm_bad(mutate):
    """A hybrid UNIDIRECTIONAL_SEQUENCE_LSTM whose input_to_forget_weights `mutate` rewrites."""
    import op_cases.lstm as L
    from tflite_gpu.testing import builder
    orig = L._weight
    calls = []

    def weight(mb, v, hybrid):
        calls.append(1)
        if len(calls) == 2:  # input_to_forget_weights
            return mutate(mb, v)
        return orig(mb, v, hybrid)
    L._weight = weight
    try:
        return L.lstm_model(hybrid=True, version=2), None
    finally:
        L._weight = orig


OURS_ONLY += [
    # LiteRT's hybrid kernels read the raw int8 values: a weight zero point would be ignored there.
    ("bmm_hybrid_rhs_zero_point", lambda: _hbmm_bad(zp=3), ["BATCH_MATMUL", "b", "zero point"]),
    ("bmm_hybrid_per_channel_wrong_axis", lambda: _hbmm_bad(per_channel_axis=0), ["BATCH_MATMUL", "b", "dimension"]),
    ("bmm_hybrid_int8_output", lambda: _hbmm_bad(out_dt=np.int8), ["BATCH_MATMUL", "FLOAT32"]),
    ("lstm_hybrid_weight_zero_point", lambda: _hlstm_bad(
        lambda mb, v: mb.add_const(np.ones(v.shape, I8), quant=dict(scale=[0.1], zero_point=[4]))),
     ["UNIDIRECTIONAL_SEQUENCE_LSTM", "input_to_forget_weights", "zero point"]),
    ("lstm_hybrid_nan_scale", lambda: _hlstm_bad(
        lambda mb, v: mb.add_const(np.ones(v.shape, I8), quant=dict(scale=[float("nan")], zero_point=[0]))),
     ["UNIDIRECTIONAL_SEQUENCE_LSTM", "input_to_forget_weights", "scale"]),
    ("lstm_hybrid_mixed_float_weight", lambda: _hlstm_bad(lambda mb, v: mb.add_const(v)),
     ["UNIDIRECTIONAL_SEQUENCE_LSTM", "input_to_forget_weights", "INT8"]),
]


@pytest.mark.parametrize("case", OURS_ONLY, ids=[c[0] for c in OURS_ONLY])
def test_unsupported_params_are_a_clear_error(case):
    _, build, words = case
    model, _ = build()
    assert_refused(model, words=words)
