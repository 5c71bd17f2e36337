"""Bad inputs for what the newest op versions add (tests/op_cases/versions.py): packed INT4 / UINT4
/ INT2 buffers of the wrong size, packed values out of range, type mixes LiteRT's kernels refuse.
Each is a ValueError naming the tensor or the op (at model load or allocate_tensors), or a
RuntimeError at invoke for bad data; never a crash.
Where LiteRT (builtin kernels) refuses the same model, the test says so (harness.litert_refuses)."""
import numpy as np
import pytest

import tflite_gpu
from harness import assert_refused, litert_refuses
from tflite_gpu.testing.builder import ModelBuilder, pack_bits

F32 = np.float32


def _deq_model(t, shape, data, quant=dict(scale=[0.5], zero_point=[0])):
    mb = ModelBuilder()
    x = mb.add_tensor(shape, t, name="packed_w", data=data, quant=quant)
    y = mb.add_tensor(shape, F32)
    mb.mark_output(y)
    mb.add_op("DEQUANTIZE", [x], [y], version=9)
    return mb.build()


@pytest.mark.parametrize("t,shape,nbytes,need", [("INT4", [5], 2, 3), ("INT4", [4], 3, 2), ("UINT4", [3, 3], 4, 5),
                                                ("INT2", [9], 2, 3), ("INT2", [4], 4, 1)])
def test_packed_buffer_of_wrong_size(t, shape, nbytes, need):
    m = _deq_model(t, shape, bytes(nbytes))
    with pytest.raises(ValueError, match="packed_w") as e:
        tflite_gpu.Interpreter(model_content=m)
    msg = str(e.value)
    assert f"needs {need} bytes" in msg and f"{t} packs" in msg and f"has {nbytes}" in msg, msg


def test_packed_variable_is_refused():
    mb = ModelBuilder()
    v = mb.add_tensor([4], "INT4", name="state", data=pack_bits([1, 2, 3, 4], 4), is_variable=True)
    y = mb.add_tensor([4], F32)
    mb.mark_output(y)
    mb.add_op("DEQUANTIZE", [v], [y])
    with pytest.raises(ValueError, match="state.*variable INT4"):
        tflite_gpu.Interpreter(model_content=mb.build())


def _int4_input_model(t="INT4"):
    mb = ModelBuilder()
    x = mb.add_input([6], t, name="q4", quant=dict(scale=[0.25], zero_point=[1 if t != "UINT4" else 8]))
    y = mb.add_tensor([6], F32)
    mb.mark_output(y)
    mb.add_op("DEQUANTIZE", [x], [y], version=9)
    return mb.build()


@pytest.mark.parametrize("t,np_t,good,bad", [("INT4", np.int8, [-8, 7, 0, 1, -1, 3], 8),
                                             ("UINT4", np.uint8, [0, 15, 8, 1, 2, 3], 16),
                                             ("INT2", np.int8, [-2, 1, 0, -1, 1, 0], 2)])
def test_packed_graph_input(t, np_t, good, bad):
    """LiteRT's Python API cannot feed a packed input (set_tensor copies one byte per element into a
    packed buffer of half / a quarter the size), so this checks against numpy: ours holds packed
    tensors one value a byte, takes them as int8 / uint8 arrays in range, refuses values outside."""
    print(f"\n{t} graph input: checked against numpy (LiteRT's Python API cannot set packed tensors)")
    it = tflite_gpu.Interpreter(model_content=_int4_input_model(t))
    it.allocate_tensors()
    d = it.get_input_details()[0]
    assert d["dtype"] == np_t
    x = np.array(good, np_t)
    it.set_tensor(d["index"], x)
    it.invoke()
    zp = 8 if t == "UINT4" else 1
    np.testing.assert_array_equal(it.get_tensor(it.get_output_details()[0]["index"]),
                                  ((x.astype(np.int32) - zp) * np.float32(0.25)).astype(F32))
    x[2] = bad if np_t == np.uint8 else np.int8(bad)
    with pytest.raises(ValueError, match=f"q4.*value {int(x[2])} at flat index 2 is out of the {t} range"):
        it.set_tensor(d["index"], x)
    if t != "UINT4":
        x[2] = -bad - 1
        with pytest.raises(ValueError, match="out of the"):
            it.set_tensor(d["index"], x)


def _cast(src, dst, data=None):
    mb = ModelBuilder()
    if data is None:
        x = mb.add_input([4], src)
    else:
        x = mb.add_tensor([4], src, data=data)
    y = mb.add_tensor([4], dst)
    mb.mark_output(y)
    mb.add_op("CAST", [x], [y], version=9)
    return mb.build()


@pytest.mark.parametrize("src,dst", [("INT4", np.int32), ("INT2", np.int8), ("UINT4", np.float16),
                                     (np.int32, "INT4"), (np.float16, "UINT4"), ("INT4", "INT4")])
def test_cast_packed_only_with_float32(src, dst):
    data = np.array([1, 0, -1, 1]) if isinstance(src, str) else None
    m = _cast(src, dst, data)
    assert litert_refuses(m, [] if data is not None else None)
    assert_refused(m, match="CAST", words=("unsupported cast", "only to or from FLOAT32"))


def _quantize_to(t, quant):
    mb = ModelBuilder()
    x = mb.add_input([2, 3], F32)
    y = mb.add_tensor([2, 3], t, quant=quant)
    z = mb.add_tensor([2, 3], F32)
    mb.mark_output(z)
    mb.add_op("QUANTIZE", [x], [y], version=6)
    mb.add_op("DEQUANTIZE", [y], [z], version=9)
    return mb.build()


def test_quantize_to_int2_is_refused():
    m = _quantize_to("INT2", dict(scale=[0.5], zero_point=[0]))
    assert litert_refuses(m)
    assert_refused(m, match="QUANTIZE", words=("unsupported quantization from FLOAT32 to INT2",))


def test_quantize_to_int4_per_channel_is_refused():
    m = _quantize_to("INT4", dict(scale=[0.5, 0.25], zero_point=[0, 0], quantized_dimension=0))
    assert litert_refuses(m)
    assert_refused(m, match="QUANTIZE", words=("per-channel quantization to INT4",))


def _fc(in_t, w_t):
    mb = ModelBuilder()
    iq = None if in_t == "FLOAT32" else dict(scale=[0.1], zero_point=[0])
    x = mb.add_input([2, 4], in_t, quant=iq)
    w = mb.add_tensor([3, 4], w_t, name="w", data=np.ones((3, 4), np.int64), quant=dict(scale=[0.1], zero_point=[0]))
    y = mb.add_tensor([2, 3], in_t, quant=iq)
    mb.mark_output(y)
    mb.add_op("FULLY_CONNECTED", [x, w, -1], [y], options={}, version=14)
    return mb.build()


@pytest.mark.parametrize("in_t", ["FLOAT32", "INT8", "INT16"])
def test_fully_connected_uint4_weights_are_refused(in_t):
    m = _fc(in_t, "UINT4")
    assert litert_refuses(m)
    assert_refused(m, match="FULLY_CONNECTED", words=("weights type UINT4 is not supported",))


def test_fully_connected_int4_weights_with_uint8_input_are_refused():
    # LiteRT runs this model, reading the packed INT4 buffer as if it held one UINT8 weight a byte
    # (past its end: garbage results); there is no UINT8-activation kernel for INT4 weights.
    print("\nUINT8 x INT4 FULLY_CONNECTED: LiteRT reads the packed weights as UINT8 (garbage); refused here")
    m = _fc("UINT8", "INT4")
    assert_refused(m, match="FULLY_CONNECTED", words=("input type UINT8 with weights type INT4",))


def test_packed_types_refused_where_litert_refuses_them():
    """PAD and STRIDED_SLICE of INT4, GATHER of UINT4: LiteRT's kernels refuse them; so do ours."""
    q = dict(scale=[0.5], zero_point=[0])
    for op, t, extra, opts in (("PAD", "INT4", lambda mb: [mb.add_const(np.array([[1, 0], [0, 1]], np.int32))], None),
                               ("GATHER", "UINT4", lambda mb: [mb.add_const(np.array([1], np.int32))], dict(axis=0))):
        mb = ModelBuilder()
        x = mb.add_tensor([2, 2], t, data=np.ones((2, 2), np.int64), quant=q)
        o = mb.add_tensor([3, 3] if op == "PAD" else [1, 2], t, quant=q)
        y = mb.add_tensor([3, 3] if op == "PAD" else [1, 2], F32)
        mb.mark_output(y)
        mb.add_op(op, [x] + extra(mb), [o], options=opts)
        mb.add_op("DEQUANTIZE", [o], [y], version=9)
        m = mb.build()
        assert litert_refuses(m, [])
        assert_refused(m, match=op, words=(f"unsupported type {t}",))


def test_complex_mul_with_activation_is_refused():
    mb = ModelBuilder()
    a = mb.add_input([3], np.complex64)
    b = mb.add_input([3], np.complex64)
    y = mb.add_tensor([3], np.complex64)
    mb.mark_output(y)
    mb.add_op("MUL", [a, b], [y], options=dict(fused_activation_function="RELU"), version=8)
    m = mb.build()
    assert litert_refuses(m)
    assert_refused(m, match="MUL", words=("activation is not allowed for COMPLEX64",))


def _qsqrt_model():
    mb = ModelBuilder()
    x = mb.add_input([4], np.int8, name="x", quant=dict(scale=[0.1], zero_point=[-10]))
    y = mb.add_tensor([4], np.int8, quant=dict(scale=[0.1], zero_point=[0]))
    mb.mark_output(y)
    mb.add_op("SQRT", [x], [y], version=2)
    return mb.build()


def test_quantized_sqrt_of_a_negative_value_fails_at_invoke():
    m = _qsqrt_model()
    bad = [np.array([0, 5, -11, 3], np.int8)]
    assert litert_refuses(m, bad)
    assert_refused(m, bad, at_invoke=True, match="SQRT", words=("below its zero point -10", "non-negative"))
    it = tflite_gpu.Interpreter(model_content=m)  # values at / above the zero point are fine
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], np.array([-10, 0, 5, 100], np.int8))
    it.invoke()


@pytest.mark.parametrize("op,in_t,w_t,litert_too", [
    ("CONV_2D", "INT8", "INT2", True), ("CONV_2D", "INT16", "INT2", True),
    ("CONV_2D", "FLOAT32", "INT2", False),           # LiteRT runs it but reads the packed bytes (garbage)
    ("DEPTHWISE_CONV_2D", "INT8", "INT2", True), ("DEPTHWISE_CONV_2D", "FLOAT32", "INT4", True),
    ("DEPTHWISE_CONV_2D", "INT16", "INT4", False),   # LiteRT's results differ from the INT4 values'
])
def test_conv_packed_weights_refused(op, in_t, w_t, litert_too):
    """INT4 filters run (op_cases/versions.py); the other packed mixes are refused with the op and
    the weight type named."""
    from op_cases.versions import _conv_int4
    m = _conv_int4(op, in_t, True, w_t=w_t)[0]()
    assert litert_refuses(m) == litert_too
    assert_refused(m, words=[op, w_t])


def test_embedding_lookup_packed_tables_refused_where_litert_misreads():
    """INT4 / INT2 tables look up into FLOAT32 (op_cases/versions.py); into INT8 LiteRT copies the
    packed bytes, a UINT4 table and rows that do not fill whole bytes it misreads: refused with the
    reason."""
    for w_t, out_t, row, words in (("INT4", np.int8, 4, ["INT4", "FLOAT32 output"]), ("UINT4", F32, 4, ["UINT4"]),
                                   ("INT4", F32, 3, ["INT4", "whole bytes"]), ("INT2", F32, 6, ["INT2", "whole bytes"])):
        mb = ModelBuilder()
        ids = mb.add_input([2], np.int32)
        w = mb.add_tensor([4, row], w_t, data=np.ones((4, row), np.int64), quant=dict(scale=[0.5], zero_point=[0]))
        y = mb.add_tensor([2, row], out_t, quant=None if out_t == F32 else dict(scale=[0.5], zero_point=[0]))
        mb.add_op("EMBEDDING_LOOKUP", [ids, w], [y], version=5)
        mb.mark_output(y)
        assert_refused(mb.build(), words=["EMBEDDING_LOOKUP"] + words)
