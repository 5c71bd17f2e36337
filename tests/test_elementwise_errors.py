"""Bad inputs for the elementwise family: bad model parameters fail allocate_tensors (or model
loading) with a ValueError naming the op; bad data (an int32 division by zero) fails invoke with a
RuntimeError. Never a crash."""
import numpy as np
import pytest

import tflite_gpu
from tflite_gpu.testing.builder import ModelBuilder, single_op_model

F32 = np.float32


def _alloc(model):
    it = tflite_gpu.Interpreter(model_content=model)
    it.allocate_tensors()
    return it


def _bin(op, s1, s2, out, dt1=F32, dt2=None, options=None, out_dt=None):
    dt2 = dt2 or dt1
    return single_op_model(op, [(s1, dt1), (s2, dt2)], [(out, out_dt or dt1)], options=options)


@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL", "DIV", "MAXIMUM", "MINIMUM",
                                "SQUARED_DIFFERENCE"])
def test_binary_not_broadcastable(op):
    with pytest.raises(ValueError, match=op) as e:
        _alloc(_bin(op, [2, 3], [4, 3], [2, 3]))
    assert "broadcastable" in str(e.value)


@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL", "DIV", "MAXIMUM", "MINIMUM",
                                "SQUARED_DIFFERENCE", "LOGICAL_AND", "PRELU"])
def test_binary_mixed_types(op):
    with pytest.raises(ValueError, match=op) as e:
        _alloc(_bin(op, [2, 3], [2, 3], [2, 3], dt1=F32, dt2=np.int32))
    assert "differ" in str(e.value)


# (INT16 ADD / MUL without quantization parameters are plain integer kernels: ADD v5, MUL v7.)
@pytest.mark.parametrize("op,dt", [("ADD", np.int8), ("ADD", np.uint8), ("SUB", np.int16),
                                   ("SUB", np.int8), ("MUL", np.int8), ("DIV", np.uint8),
                                   ("SQUARED_DIFFERENCE", np.int8), ("PRELU", np.int8)])
def test_quantized_arithmetic_is_refused(op, dt):
    m = _bin(op, [4], [4], [4], dt1=dt)
    with pytest.raises(ValueError, match=op) as e:
        _alloc(m)
    # No quantization parameters (ADD/SUB/MUL have quantized kernels), or a kernel not there yet.
    assert "no quantization parameters" in str(e.value) or (
        "quantized" in str(e.value) and "not supported yet" in str(e.value))


@pytest.mark.parametrize("op,dt", [("DIV", np.int64), ("SQUARED_DIFFERENCE", np.int64),
                                   ("SUB", np.float16), ("MAXIMUM", np.bool_),
                                   ("LOGICAL_AND", F32), ("ADD", np.bool_)])
def test_binary_unsupported_type(op, dt):
    with pytest.raises(ValueError, match=op) as e:
        _alloc(_bin(op, [4], [4], [4], dt1=dt))
    name = {np.int64: "INT64", np.float16: "FLOAT16", np.bool_: "BOOL", F32: "FLOAT32"}[dt]
    assert f"unsupported input type {name}" in str(e.value)


def test_binary_wrong_arity():
    m = single_op_model("ADD", [[4]], [[4]], options=dict(fused_activation_function="NONE"))
    with pytest.raises(ValueError, match="ADD.*inputs"):
        _alloc(m)


@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL", "DIV"])
def test_unknown_fused_activation(op):
    with pytest.raises(ValueError, match=f"{op}.*activation"):
        _alloc(_bin(op, [4], [4], [4], options=dict(fused_activation_function=9)))


def test_int32_division_by_zero_fails_at_invoke():
    it = _alloc(_bin("DIV", [4], [4], [4], dt1=np.int32))
    d = it.get_input_details()
    it.set_tensor(d[0]["index"], np.array([1, 2, 3, 4], np.int32))
    it.set_tensor(d[1]["index"], np.array([1, 0, 3, 4], np.int32))
    with pytest.raises(RuntimeError, match="DIV.*division by zero"):
        it.invoke()
    # Fine data afterwards works.
    it.set_tensor(d[1]["index"], np.array([1, 2, 3, -4], np.int32))
    it.invoke()
    np.testing.assert_array_equal(it.get_tensor(it.get_output_details()[0]["index"]), [1, 1, 1, -1])


def test_int32_division_by_broadcast_zero_fails_at_invoke():
    it = _alloc(_bin("DIV", [4], [1], [4], dt1=np.int32))
    d = it.get_input_details()
    it.set_tensor(d[0]["index"], np.array([1, 2, 3, 4], np.int32))
    it.set_tensor(d[1]["index"], np.array([0], np.int32))
    with pytest.raises(RuntimeError, match="DIV"):
        it.invoke()


def test_prelu_alpha_must_broadcast_to_input():
    m = _bin("PRELU", [2, 1], [1, 3], [2, 3])
    with pytest.raises(ValueError, match="PRELU.*alpha"):
        _alloc(m)


@pytest.mark.parametrize("op", ["EXP", "LOGISTIC", "TANH", "RELU", "RELU6", "RELU_N1_TO_1",
                                "HARD_SWISH", "LEAKY_RELU", "RSQRT", "SQRT"])
@pytest.mark.parametrize("dt,msg", [(np.int8, "quantiz"), (np.int32, "INT32")])  # int8: no quantization parameters
def test_unary_bad_type(op, dt, msg):
    m = single_op_model(op, [([4], dt)], [([4], dt)])
    with pytest.raises(ValueError, match=op) as e:
        _alloc(m)
    assert msg in str(e.value)


@pytest.mark.parametrize("op", ["EXP", "RELU", "TANH"])
def test_unary_wrong_arity(op):
    m = single_op_model(op, [[4], [4]], [[4]])
    with pytest.raises(ValueError, match=op):
        _alloc(m)


@pytest.mark.parametrize("src,dst", [(F32, np.complex128), (np.uint64, F32), (F32, np.uint64)])
def test_cast_unsupported(src, dst):
    m = single_op_model("CAST", [([4], src)], [([4], dst)])
    with pytest.raises(ValueError, match="CAST.*unsupported"):
        _alloc(m)


def _q(op, in_dt, out_dt, shape=(2, 3), qin=None, qout=None):
    mb = ModelBuilder()
    x = mb.add_input(list(shape), dtype=in_dt, name="x", quant=qin)
    y = mb.add_tensor(list(shape), dtype=out_dt, name="y", quant=qout)
    mb.add_op(op, [x], [y])
    mb.mark_output(y)
    return mb.build()


PT = dict(scale=[0.1], zero_point=[0])


@pytest.mark.parametrize("what,kw,msg", [
    ("int32_input", dict(in_dt=np.int32, qin=PT), "INT32"),
    ("float_input", dict(in_dt=F32), "FLOAT32"),
    ("int16_zero_point", dict(in_dt=np.int16, qin=dict(scale=[0.1], zero_point=[3])), "zero point"),
    ("int16_per_channel", dict(in_dt=np.int16, qin=dict(scale=[0.1, 0.2], zero_point=[0, 0],
                                                      quantized_dimension=0)), "per-channel"),
    ("per_channel_count", dict(in_dt=np.int8, qin=dict(scale=[0.1, 0.2, 0.3], zero_point=[0, 0, 0],
                                                     quantized_dimension=0)), "per-channel"),
    ("per_channel_dim", dict(in_dt=np.int8, qin=dict(scale=[0.1, 0.2], zero_point=[0, 0],
                                                   quantized_dimension=5)), "quantized_dimension"),
    ("zero_point_count", dict(in_dt=np.int8, qin=dict(scale=[0.1, 0.2], zero_point=[0],
                                                    quantized_dimension=0)), "zero"),
])
def test_dequantize_bad_model(what, kw, msg):
    m = _q("DEQUANTIZE", kw["in_dt"], F32, qin=kw.get("qin"))
    # Inconsistent per-channel parameters are already refused by the model reader.
    with pytest.raises(ValueError, match="DEQUANTIZE|malformed") as e:
        _alloc(m)
    assert msg in str(e.value)


@pytest.mark.parametrize("what,kw,msg", [
    ("no_output_quant", dict(in_dt=F32, out_dt=np.int8), "no quantization"),
    ("zero_scale", dict(in_dt=F32, out_dt=np.int8, qout=dict(scale=[0.0], zero_point=[0])), "scale"),
    ("negative_scale", dict(in_dt=F32, out_dt=np.uint8, qout=dict(scale=[-0.5], zero_point=[0])),
     "scale"),
    ("float_to_int32", dict(in_dt=F32, out_dt=np.int32, qout=PT), "INT32"),
    ("float_to_float16", dict(in_dt=F32, out_dt=np.float16, qout=PT), "FLOAT16"),
    ("int16_to_uint8", dict(in_dt=np.int16, out_dt=np.uint8, qin=PT, qout=PT), "UINT8"),
    ("int8_to_int32", dict(in_dt=np.int8, out_dt=np.int32, qin=PT, qout=PT), "INT32"),
    ("int16_to_int16_zero_point", dict(in_dt=np.int16, out_dt=np.int16, qin=PT,
                                       qout=dict(scale=[0.2], zero_point=[4])), "zero points 0"),
    ("requant_no_input_quant", dict(in_dt=np.int8, out_dt=np.int8, qout=PT), "no quantization"),
    ("requant_per_channel", dict(in_dt=np.int8, out_dt=np.int8, qin=PT,
                                 qout=dict(scale=[0.1, 0.2], zero_point=[0, 0],
                                           quantized_dimension=0)), "per-channel"),
    ("per_channel_count", dict(in_dt=F32, out_dt=np.int8,
                               qout=dict(scale=[0.1, 0.2, 0.3, 0.4], zero_point=[0] * 4,
                                         quantized_dimension=0)), "per-channel"),
    ("zero_point_range", dict(in_dt=F32, out_dt=np.int8,
                              qout=dict(scale=[0.1], zero_point=[2**40])),
     "zero_point 1099511627776"),  # refused by the loader now: outside int32
])
def test_quantize_bad_model(what, kw, msg):
    m = _q("QUANTIZE", kw["in_dt"], kw["out_dt"], qin=kw.get("qin"), qout=kw.get("qout"))
    with pytest.raises(ValueError, match="QUANTIZE|malformed") as e:
        _alloc(m)
    assert msg in str(e.value)


def test_per_channel_dequantize_after_resize():
    # The channel count is checked again when a resize changes the quantized dimension.
    m = _q("DEQUANTIZE", np.int8, F32, shape=(2, 3),
           qin=dict(scale=[0.1, 0.2], zero_point=[0, 0], quantized_dimension=0))
    it = tflite_gpu.Interpreter(model_content=m)
    it.resize_tensor_input(it.get_input_details()[0]["index"], [4, 3])
    with pytest.raises(ValueError, match="DEQUANTIZE.*per-channel"):
        it.allocate_tensors()


def test_hostile_values_do_not_crash():
    # Out-of-range conversions and INT_MIN / -1 have defined results.
    it = _alloc(_bin("DIV", [2], [2], [2], dt1=np.int32))
    d = it.get_input_details()
    it.set_tensor(d[0]["index"], np.array([-2**31, 7], np.int32))
    it.set_tensor(d[1]["index"], np.array([-1, -2], np.int32))
    it.invoke()
    np.testing.assert_array_equal(it.get_tensor(it.get_output_details()[0]["index"]), [2**31 - 1, -3])
    it = _alloc(single_op_model("CAST", [([4], F32)], [([4], np.int32)]))
    it.set_tensor(it.get_input_details()[0]["index"], np.array([np.nan, np.inf, -np.inf, 3e9], F32))
    it.invoke()
    np.testing.assert_array_equal(it.get_tensor(it.get_output_details()[0]["index"]),
                                  [2**31 - 1, 2**31 - 1, -2**31, 2**31 - 1])
