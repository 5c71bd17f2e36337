"""Conv family, quantized: hostile quantization parameters and type mixes are a ValueError at
allocate_tensors naming the op and the tensor (never a crash or garbage). Where LiteRT also refuses
the model, the test checks that too (so the refusal is TFLite's rule, not ours)."""
import math

import numpy as np
import pytest

import tflite_gpu
from harness import assert_refused, litert_refuses
from tflite_gpu.testing.builder import ModelBuilder

I8, U8, I16 = np.int8, np.uint8, np.int16


def _q(scale, zp=0, axis=None):
    d = dict(scale=list(np.atleast_1d(scale).astype(float)), zero_point=list(np.atleast_1d(zp).astype(int)))
    if axis is not None:
        d["quantized_dimension"] = axis
    return d


def _model(op="CONV_2D", dt=I8, wt=None, bt=None, ot=None, xq=None, wq=None, bq=None, yq=None, cout=4,
           act="NONE", w_shape=None, bias=True):
    """A small quantized conv-family model whose every quantization field can be replaced."""
    wt = wt or (U8 if dt == U8 else I8)
    bt = bt or (np.int64 if dt == I16 else np.int32)
    ot = ot or dt
    rng = np.random.default_rng(0)
    mb = ModelBuilder()
    if op == "FULLY_CONNECTED":
        x_shape, w_shape, y_shape, opts = [2, 8], w_shape or [cout, 8], [2, cout], dict(fused_activation_function=act)
    elif op == "DEPTHWISE_CONV_2D":
        x_shape, w_shape, y_shape = [1, 4, 4, cout], w_shape or [1, 3, 3, cout], [1, 4, 4, cout]
        opts = dict(padding="SAME", stride_w=1, stride_h=1, depth_multiplier=1, fused_activation_function=act)
    else:
        x_shape, w_shape, y_shape = [1, 4, 4, 3], w_shape or [cout, 3, 3, 3], [1, 4, 4, cout]
        opts = dict(padding="SAME", stride_w=1, stride_h=1, fused_activation_function=act)
    zp0 = 128 if dt == U8 else 0
    x = mb.add_input(x_shape, dt, name="x", quant=_q(0.05, zp0) if xq is None else xq)
    info = np.iinfo(wt)
    w = mb.add_const(rng.integers(info.min, info.max + 1, w_shape).astype(wt), name="w",
                     quant=_q(0.01, 128 if wt == U8 else 0) if wq is None else wq)
    ins = [x, w]
    if bias:
        n = cout
        ins.append(mb.add_const(np.zeros(n, bt), name="b", quant=_q(0.0005) if bq is None else bq))
    y = mb.add_tensor(y_shape, ot, name="y", quant=_q(0.1, zp0) if yq is None else yq)
    mb.add_op(op, ins, [y], options=opts)
    mb.mark_output(y)
    return mb.build()


def _alloc(model):
    it = tflite_gpu.Interpreter(model_content=model, num_threads=1)
    it.allocate_tensors()
    return it


BAD = [
    # (id, model kwargs, fragments of the message)
    ("in_scale_zero", dict(xq=_q(0.0)), ["input 'x'", "scale"]),
    ("in_scale_negative", dict(xq=_q(-0.5)), ["input 'x'", "scale"]),
    ("in_scale_nan", dict(xq=_q(math.nan)), ["input 'x'", "scale"]),
    ("out_scale_inf", dict(yq=_q(math.inf)), ["output 'y'", "scale"]),
    ("w_scale_zero_channel", dict(wq=_q([0.01, 0.0, 0.01, 0.01], [0] * 4, 0)), ["weights 'w'", "scale", "channel 1"]),
    ("in_zp_out_of_range", dict(xq=_q(0.05, 200)), ["input 'x'", "zero point 200"]),
    ("out_zp_out_of_range_u8", dict(dt=U8, yq=_q(0.1, -1)), ["output 'y'", "zero point -1"]),
    ("i16_in_zp", dict(dt=I16, xq=_q(0.05, 3)), ["input 'x'", "zero point"]),
    ("per_channel_wrong_length", dict(wq=_q([0.01] * 3, [0] * 3, 0)), ["tensor 1", "3 scales"]),
    ("per_channel_wrong_axis", dict(wq=_q([0.01] * 3, [0] * 3, 3)), ["weights 'w'", "dimension 3"]),
    ("per_channel_axis_outside", dict(wq=_q([0.01] * 4, [0] * 4, 7)), ["tensor 1", "quantized_dimension 7"]),
    ("zp_count_mismatch", dict(wq=dict(scale=[0.01] * 4, zero_point=[0, 0], quantized_dimension=0)), ["tensor 1", "zero_point"]),
    ("i8_weights_zp", dict(wq=_q(0.01, 5)), ["weights 'w'", "zero point 5"]),
    ("i8_in_u8_w", dict(wt=U8, wq=_q(0.01, 128)), ["INT8", "UINT8", "not supported"]),
    ("u8_in_i8_w", dict(dt=U8, wt=I8, wq=_q(0.01, 0)), ["UINT8", "INT8", "not supported"]),
    ("out_type_mismatch", dict(ot=U8, yq=_q(0.1, 128)), ["output", "UINT8"]),
    ("bias_type", dict(bt=np.int64), ["bias 'b'", "INT64"]),
    ("i16_bias_i32_conv", dict(dt=I16, bt=np.int32), ["bias 'b'", "INT32"]),
    ("no_quant_params", dict(xq={}), ["input 'x'", "no quantization parameters"]),
    ("u8_bias_scale", dict(dt=U8, bq=_q(0.7)), ["bias 'b'", "scale"]),
    ("fc_tanh_activation", dict(op="FULLY_CONNECTED", act="TANH"), ["activation", "TANH"]),
    ("no_bias", dict(bias=False), ["bias"]),
    ("dw_weights_zp", dict(op="DEPTHWISE_CONV_2D", wq=_q(0.01, 3)), ["weights 'w'", "zero point 3"]),
    ("dw_wrong_axis", dict(op="DEPTHWISE_CONV_2D", wq=_q([0.01] * 3, [0] * 3, 1)), ["weights 'w'", "dimension 1"]),
    ("dw_i16_bias_i32", dict(op="DEPTHWISE_CONV_2D", dt=I16, bt=np.int32), ["bias 'b'", "INT32"]),
    ("dw_u8_zp_out_of_range", dict(op="DEPTHWISE_CONV_2D", dt=U8, xq=_q(0.05, 256)), ["input 'x'", "zero point 256"]),
    ("hyb_bias_int32", dict(dt=np.float32, wt=I8, xq={}, yq={}, bt=np.int32, bq={}), ["bias 'b'", "FLOAT32"]),
    ("hyb_out_int8", dict(dt=np.float32, wt=I8, xq={}, ot=I8, yq=_q(0.1)), ["output", "FLOAT32"]),
    ("hyb_weights_zp", dict(op="FULLY_CONNECTED", dt=np.float32, wt=I8, xq={}, yq={}, bt=np.float32, bq={}, wq=_q(0.01, 4)), ["weights 'w'", "zero point 4"]),
    ("hyb_u8_weights", dict(op="FULLY_CONNECTED", dt=np.float32, wt=U8, xq={}, yq={}, bt=np.float32, bq={}, wq=_q(0.01, 128)), ["FLOAT32", "UINT8"]),
    ("fc_per_channel_wrong_length", dict(op="FULLY_CONNECTED", wq=_q([0.01] * 3, [0] * 3, 0)), ["tensor 1", "per-channel"]),
    ("fc_scale_nan", dict(op="FULLY_CONNECTED", yq=_q(math.nan)), ["output 'y'", "scale"]),
    ("fc_i8_in_u8_w", dict(op="FULLY_CONNECTED", wt=U8, wq=_q(0.01, 128)), ["not supported"]),
    ("fc_u8_per_channel", dict(op="FULLY_CONNECTED", dt=U8, wq=_q([0.01] * 4, [128] * 4, 0)), ["weights 'w'", "per-channel"]),
]


def _tc(xq=None, wq=None, bt=np.int32, const_shape=True):
    mb = ModelBuilder()
    rng = np.random.default_rng(0)
    if const_shape:
        os_ = mb.add_const(np.array([1, 8, 8, 4], np.int32), name="output_shape")
    else:
        os_ = mb.add_input([4], np.int32, name="output_shape")
    w = mb.add_const(rng.integers(-127, 128, (4, 3, 3, 3)).astype(I8), name="w", quant=wq or _q(0.01))
    x = mb.add_input([1, 4, 4, 3], I8, name="x", quant=xq or _q(0.05))
    b = mb.add_const(np.zeros(4, bt), name="b", quant=_q(0.0005))
    y = mb.add_tensor([1, 8, 8, 4], I8, name="y", quant=_q(0.1))
    mb.add_op("TRANSPOSE_CONV", [os_, w, x, b], [y], options=dict(padding="SAME", stride_w=2, stride_h=2), version=3)
    mb.mark_output(y)
    return mb.build()


@pytest.mark.parametrize("kw,frags", [
    (dict(xq=_q(-1.0)), ["input 'x'", "scale"]),
    (dict(wq=_q(0.01, 9)), ["weights 'w'", "zero point 9"]),
    (dict(wq=_q([0.01] * 3, [0] * 3, 3)), ["weights 'w'", "dimension 3"]),
    (dict(bt=np.int64), ["bias 'b'", "INT64"]),
    (dict(const_shape=False), ["constant output_shape"]),
], ids=["in_scale_negative", "weights_zp", "per_channel_axis", "bias_type", "dynamic_shape"])
def test_transpose_conv_bad_quantization(kw, frags):
    _check(_tc(**kw), "TRANSPOSE_CONV", frags)


def _check(model, op, frags):
    assert_refused(model, words=[op, *frags], num_threads=1)


def _bmm(dt=I8, aq=None, bq=None, oq=None, ot=None):
    mb = ModelBuilder()
    a = mb.add_input([2, 3, 4], dt, name="a", quant=aq or _q(0.05))
    b = mb.add_input([2, 4, 5], dt, name="b", quant=bq or _q(0.05))
    y = mb.add_tensor([2, 3, 5], ot or dt, name="y", quant=oq or _q(0.1))
    mb.add_op("BATCH_MATMUL", [a, b], [y], options=dict(adj_x=False, adj_y=False))
    mb.mark_output(y)
    return mb.build()


@pytest.mark.parametrize("kw,frags", [
    (dict(aq=_q(0.0)), ["input 'a'", "scale"]),
    (dict(bq=_q([0.05] * 5, [0] * 5, 2)), ["weights 'b'", "per-channel"]),
    (dict(dt=I16, bq=_q(0.05, 2)), ["weights 'b'", "zero point"]),
    (dict(oq=_q(0.1, 300)), ["output 'y'", "zero point 300"]),
    (dict(ot=I16), ["output", "INT16"]),
    (dict(dt=U8, aq=_q(0.05, 128), bq=_q(0.05, 128), oq=_q(0.1, 128)), ["UINT8"]),
], ids=["scale_zero", "per_channel_rhs", "i16_zp", "out_zp", "out_type", "uint8"])
def test_batch_matmul_bad_quantization(kw, frags):
    _check(_bmm(**kw), "BATCH_MATMUL", frags)


@pytest.mark.parametrize("kw,frags", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_quantization_is_value_error(kw, frags):
    model = _model(**kw)
    op = kw.get("op", "CONV_2D")
    with pytest.raises(ValueError) as e:
        _alloc(model)
    msg = str(e.value)
    # the model loader refuses some of these already (naming the tensor), the op's prepare the rest
    assert op in msg or "malformed .tflite model" in msg, msg
    for f in frags:
        assert f in msg, msg


# The type mixes and parameters TFLite itself refuses: LiteRT must refuse them as well. (LiteRT
# accepts some that we refuse: FULLY_CONNECTED int8 input with UINT8 weights, which it reads as int8.)
@pytest.mark.parametrize("name", ["i8_in_u8_w", "i8_weights_zp", "no_bias", "u8_bias_scale", "fc_tanh_activation", "dw_i16_bias_i32"])
def test_litert_refuses_the_same(name):
    kw = next(b[1] for b in BAD if b[0] == name)
    assert litert_refuses(_model(**kw)), f"LiteRT accepts {name}"
