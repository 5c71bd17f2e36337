"""The Python Interpreter API against tf.lite's (ai-edge-litert) behaviour and the error cases."""
import threading

import numpy as np
import pytest

import tflite_gpu
from tflite_gpu.testing.builder import ModelBuilder

NONE = dict(fused_activation_function="NONE")


def add_model(shape=(1, 4, 4, 3), signature=True, dynamic_batch=False):
    b = ModelBuilder()
    sig = [-1] + list(shape[1:]) if dynamic_batch else None
    x = b.add_input(list(shape), name="x", shape_signature=sig)
    y = b.add_input(list(shape), name="y", shape_signature=sig)
    z = b.add_tensor(list(shape), name="z", shape_signature=sig)
    b.add_op("ADD", [x, y], [z], options=dict(fused_activation_function="RELU"))
    b.mark_output(z)
    if signature:
        b.add_signature("serving_default", {"x": x, "y": y}, {"z": z})
    b.add_metadata("min_runtime_version", b"1.5.0")
    return b.build()


def litert(model):
    from ai_edge_litert.interpreter import Interpreter
    return Interpreter(model_content=model)


def test_details_match_litert():
    m = add_model()
    ours, ref = tflite_gpu.Interpreter(model_content=m), litert(m)
    for a, b in [(ours.get_input_details(), ref.get_input_details()),
                 (ours.get_output_details(), ref.get_output_details())]:
        assert len(a) == len(b)
        for da, db in zip(a, b):
            assert set(db) <= set(da), set(db) - set(da)
            for k in ("name", "index", "dtype", "quantization"):
                assert da[k] == db[k], k
            np.testing.assert_array_equal(da["shape"], db["shape"])
            np.testing.assert_array_equal(da["shape_signature"], db["shape_signature"])
    assert len(ours.get_tensor_details()) == 3
    assert ours.get_signature_list() == ref.get_signature_list()


def test_invoke_and_tensor_view():
    m = add_model()
    it = tflite_gpu.Interpreter(model_content=m, num_threads=2)
    it.allocate_tensors()
    a = np.random.default_rng(0).standard_normal((1, 4, 4, 3)).astype(np.float32)
    it.set_tensor(0, a)
    it.set_tensor(1, a * 2)
    it.invoke()
    out = it.get_tensor(2)
    np.testing.assert_allclose(out, np.maximum(a * 3, 0), rtol=1e-6)
    view = it.tensor(2)
    np.testing.assert_array_equal(view(), out)
    out[...] = 99  # get_tensor returns a copy
    assert not np.any(it.get_tensor(2) == 99)
    view()[...] = 7  # tensor() is a view of the buffer
    assert np.all(it.get_tensor(2) == 7)


def test_errors():
    it = tflite_gpu.Interpreter(model_content=add_model())
    with pytest.raises(RuntimeError, match="allocate_tensors"):
        it.invoke()
    with pytest.raises(ValueError, match="allocate_tensors"):
        it.get_tensor(2)
    it.allocate_tensors()
    with pytest.raises(ValueError, match="type"):
        it.set_tensor(0, np.zeros((1, 4, 4, 3), np.float64))
    with pytest.raises(ValueError, match="Dimension mismatch"):
        it.set_tensor(0, np.zeros((1, 4, 4, 2), np.float32))
    with pytest.raises(ValueError, match="Dimension mismatch"):
        it.set_tensor(0, np.zeros((4, 4, 3), np.float32))
    with pytest.raises(ValueError, match="out of range"):
        it.set_tensor(17, np.zeros((1,), np.float32))
    with pytest.raises(ValueError, match="out of range"):
        it.get_tensor(-1)
    with pytest.raises(ValueError):
        tflite_gpu.Interpreter()
    with pytest.raises(ValueError):
        tflite_gpu.Interpreter(model_path="/nonexistent/model.tflite")
    with pytest.raises(ValueError, match="not an input"):
        it.resize_tensor_input(2, [1, 2, 2, 3])


def test_resize_and_strict():
    m = add_model(dynamic_batch=True)
    it = tflite_gpu.Interpreter(model_content=m)
    it.resize_tensor_input(0, [3, 4, 4, 3], strict=True)
    it.resize_tensor_input(1, [3, 4, 4, 3], strict=True)
    with pytest.raises(ValueError, match="strict"):
        it.resize_tensor_input(0, [3, 5, 4, 3], strict=True)
    it.allocate_tensors()
    a = np.ones((3, 4, 4, 3), np.float32)
    it.set_tensor(0, a)
    it.set_tensor(1, a)
    it.invoke()
    assert it.get_tensor(2).shape == (3, 4, 4, 3)
    it.resize_tensor_input(0, [2, 4, 4, 3])
    with pytest.raises(RuntimeError, match="allocate_tensors"):
        it.invoke()


def test_signature_runner_matches_litert():
    m = add_model(dynamic_batch=True)
    a = np.random.default_rng(1).standard_normal((2, 4, 4, 3)).astype(np.float32)
    ours = tflite_gpu.Interpreter(model_content=m).get_signature_runner()(x=a, y=-a / 2)
    ref = litert(m).get_signature_runner()(x=a, y=-a / 2)
    assert set(ours) == set(ref) == {"z"}
    np.testing.assert_allclose(ours["z"], ref["z"], rtol=1e-6)
    r = tflite_gpu.Interpreter(model_content=m).get_signature_runner("serving_default")
    with pytest.raises(ValueError):
        r(x=a)
    with pytest.raises(ValueError):
        tflite_gpu.Interpreter(model_content=m).get_signature_runner("nope")


def test_model_path_and_metadata(tmp_path):
    p = tmp_path / "m.tflite"
    p.write_bytes(add_model())
    it = tflite_gpu.Interpreter(model_path=str(p))
    it.allocate_tensors()
    assert it.get_metadata()["min_runtime_version"] == b"1.5.0"


def test_unknown_op_fails_naming_op_version_node():
    # As LiteRT: a builtin op (or version) the engine lacks fails when the interpreter is built
    # (ValueError); an unknown custom op fails at allocate_tensors (RuntimeError; ours is also a
    # ValueError). tests/test_dropin.py checks the exception types against LiteRT itself.
    b = ModelBuilder()
    x = b.add_input([4])
    y = b.add_tensor([4])
    z = b.add_tensor([4])
    b.add_op("RELU", [x], [y])
    b.add_op(250, [y], [z])
    b.mark_output(z)
    with pytest.raises(ValueError, match=r"node 1: op BUILTIN_250 version 1 is not supported"):
        tflite_gpu.Interpreter(model_content=b.build())
    b = ModelBuilder()
    x = b.add_input([4])
    y = b.add_tensor([4])
    b.add_op("RELU", [x], [y], version=9)
    b.mark_output(y)
    with pytest.raises(ValueError, match=r"RELU version 9 .*supported versions: 1\.\.3"):
        tflite_gpu.Interpreter(model_content=b.build())
    b = ModelBuilder()
    x = b.add_input([4])
    y = b.add_tensor([4])
    b.add_op(("CUSTOM", "MyOp"), [x], [y])
    b.mark_output(y)
    it = tflite_gpu.Interpreter(model_content=b.build())
    with pytest.raises(RuntimeError, match="custom op 'MyOp'") as e:
        it.allocate_tensors()
    assert isinstance(e.value, ValueError)


def test_interpreters_in_threads_run_concurrently_and_correctly():
    from tflite_gpu.testing import zoo
    m = zoo.mobilenet_v1(input_size=96, alpha=0.25, num_classes=10, seed=3)
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((1, 96, 96, 3)).astype(np.float32) for _ in range(4)]
    expect = []
    for x in xs:
        it = tflite_gpu.Interpreter(model_content=m, num_threads=1)
        it.allocate_tensors()
        it.set_tensor(it.get_input_details()[0]["index"], x)
        it.invoke()
        expect.append(it.get_tensor(it.get_output_details()[0]["index"]))
    results = [None] * 4
    errors = []

    def work(i):
        try:
            it = tflite_gpu.Interpreter(model_content=m, num_threads=1)
            it.allocate_tensors()
            for _ in range(3):
                it.set_tensor(it.get_input_details()[0]["index"], xs[i])
                it.invoke()
            results[i] = it.get_tensor(it.get_output_details()[0]["index"])
        except Exception as e:  # pragma: no cover
            errors.append(e)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    assert not errors
    for r, e in zip(results, expect):
        np.testing.assert_array_equal(r, e)


def test_supported_ops_table():
    ops = tflite_gpu.supported_ops()
    names = [o["name"] for o in ops]
    assert len(names) == len(set(names))
    assert {"CONV_2D", "LSTM", "Convolution2DTransposeBias", "DENSIFY"} <= set(names)
    assert all(o["has_cpu_kernel"] for o in ops), [o["name"] for o in ops if not o["has_cpu_kernel"]]


def test_reference_kernels_selectable():
    m = add_model()
    it = tflite_gpu.Interpreter(model_content=m, experimental_op_resolver_type=tflite_gpu.OpResolverType.BUILTIN_REF)
    it.allocate_tensors()
    a = np.full((1, 4, 4, 3), -1, np.float32)
    it.set_tensor(0, a)
    it.set_tensor(1, -a * 3)
    it.invoke()
    np.testing.assert_array_equal(it.get_tensor(2), np.full((1, 4, 4, 3), 2, np.float32))
