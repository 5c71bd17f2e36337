"""Bad GpuDelegateOptions values and hostile names (issue 12, item 5): each gets a TypeError or
ValueError naming the option or field, raised before anything reaches C (no pybind cast error,
no AttributeError, no silently cut string, no UnicodeDecodeError)."""
import numpy as np
import pytest

import tflite_gpu
from tflite_gpu.testing.builder import ModelBuilder

BAD = [
    (dict(max_delegated_partitions=2**40), ValueError, "max_delegated_partitions"),
    (dict(max_delegated_partitions=0), ValueError, "max_delegated_partitions"),
    (dict(max_delegated_partitions=1.5), TypeError, "max_delegated_partitions"),
    (dict(max_delegated_partitions="2"), TypeError, "max_delegated_partitions"),
    (dict(experimental_flags=2**70), ValueError, "experimental_flags"),
    (dict(experimental_flags=-1), ValueError, "experimental_flags"),
    (dict(experimental_flags=None), TypeError, "experimental_flags"),
    (dict(serialization_dir=123), TypeError, "serialization_dir"),
    (dict(serialization_dir="a\x00b"), ValueError, "serialization_dir"),
    (dict(serialization_dir="\udcff"), ValueError, "serialization_dir"),
    (dict(model_token=["t"]), TypeError, "model_token"),
    (dict(device="\x00gpu"), ValueError, "device"),
    (dict(device=-1), ValueError, "device"),
    (dict(device=2**40), ValueError, "device"),
    (dict(device=True), TypeError, "device"),
    (dict(device=3.0), ValueError, "device"),
    (dict(op_filter="ADD"), TypeError, "op_filter"),
    (dict(op_filter=[1]), TypeError, "op_filter"),
    (dict(op_filter=["ADD,MUL"]), ValueError, "op_filter"),
    (dict(is_precision_loss_allowed="yes"), TypeError, "is_precision_loss_allowed"),
    (dict(enable_profiling=2), TypeError, "enable_profiling"),
    (dict(inference_preference=2**40), ValueError, "inference_preference"),
    (dict(inference_priority1=7), ValueError, "InferencePriority"),
    (dict(wait_type="x"), TypeError, "wait_type"),
]


@pytest.mark.parametrize("kw,exc,field", BAD, ids=[f"{list(k)[0]}={list(k.values())[0]!r}" for k, _, _ in BAD])
def test_bad_option_names_the_field(kw, exc, field):
    with pytest.raises(exc, match=field):
        tflite_gpu.GpuDelegateOptions(**kw)
    with pytest.raises(exc, match=field):  # the keyword form of GpuDelegate too
        tflite_gpu.GpuDelegate(**kw)


def test_fields_assigned_after_construction_are_checked():
    o = tflite_gpu.GpuDelegateOptions()
    o.serialization_dir = 123
    with pytest.raises(TypeError, match="serialization_dir"):
        tflite_gpu.GpuDelegate(o)


@pytest.mark.parametrize("arg", ["cpu", 0, {"device": "cpu"}])
def test_positional_non_options_is_a_type_error(arg):
    with pytest.raises(TypeError, match="GpuDelegateOptions"):
        tflite_gpu.GpuDelegate(arg)


def test_core_binding_checks_too():
    """The C++ binding refuses the same values when called directly (defence in depth)."""
    from tflite_gpu import _core
    with pytest.raises(ValueError, match="max_delegated_partitions"):
        _core.GpuDelegate({"max_delegated_partitions": 2**40})
    with pytest.raises(ValueError, match="experimental_flags"):
        _core.GpuDelegate({"experimental_flags": 2**70})
    with pytest.raises(TypeError, match="serialization_dir"):
        _core.GpuDelegate({"serialization_dir": 123})
    with pytest.raises(ValueError, match="device"):
        _core.GpuDelegate({"device": "\x00gpu"})


def test_pathlike_serialization_dir_is_accepted(tmp_path):
    o = tflite_gpu.GpuDelegateOptions(serialization_dir=tmp_path / "c")
    assert o.serialization_dir == str(tmp_path / "c")


def _model_with_names(tensor_name: bytes, sig_name: bytes = b"x"):
    from ai_edge_litert import schema_py_generated as S
    import flatbuffers
    b = ModelBuilder()
    x = b.add_input([1, 4], name="x")
    y = b.add_tensor([1, 4], name="y")
    b.add_op("RELU", [x], [y])
    b.mark_output(y)
    b.add_signature("sig", {"x": x}, {"y": y})
    m = S.ModelT.InitFromPackedBuf(b.build(), 0)
    m.subgraphs[0].tensors[0].name = tensor_name
    m.signatureDefs[0].inputs[0].name = sig_name
    fb = flatbuffers.Builder(1024)
    fb.Finish(m.Pack(fb), file_identifier=b"TFL3")
    return bytes(fb.Output())


@pytest.mark.parametrize("name", [b"\xff\xfe", b"ab\xc3", b"\xed\xa0\x80", b"\xc0\x80"],
                         ids=["ff", "truncated", "surrogate", "overlong"])
def test_invalid_utf8_names_are_refused_at_load(name):
    with pytest.raises(ValueError, match="tensor name is not valid UTF-8"):
        tflite_gpu.Interpreter(model_content=_model_with_names(name))
    with pytest.raises(ValueError, match="tensor map name is not valid UTF-8"):
        tflite_gpu.Interpreter(model_content=_model_with_names(b"x", name))


def test_valid_utf8_names_round_trip():
    name = "tënsör \u4e2d \U0001F600"
    it = tflite_gpu.Interpreter(model_content=_model_with_names(name.encode()))
    assert it.get_input_details()[0]["name"] == name
    it.allocate_tensors()
    it.set_tensor(0, np.array([[-1, 2, -3, 4]], np.float32))
    it.invoke()
    np.testing.assert_array_equal(it.get_tensor(it.get_output_details()[0]["index"]), [[0, 2, 0, 4]])
