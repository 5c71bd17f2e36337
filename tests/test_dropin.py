"""tflite_gpu.interpreter as a drop-in for ai_edge_litert.interpreter (issue 9).

Each user-style script below is run twice, once with `ai_edge_litert.interpreter` (the oracle,
LiteRT 2.3) and once with `tflite_gpu.interpreter`, with only the module swapped. Every returned
structure is compared key by key and type by type (numpy dtypes and values included), and when
LiteRT raises, ours must raise an instance of the same exception type.
"""
import gc
import inspect
import sys
import warnings

import numpy as np
import pytest

import ai_edge_litert.interpreter as litert_mod
import tflite_gpu.interpreter as ours_mod
from misuse_util import custom_op_model
from tflite_gpu.testing.builder import ModelBuilder

NONE = dict(fused_activation_function="NONE")
NO_DEFAULT = "BUILTIN_WITHOUT_DEFAULT_DELEGATES"


# ------------------------------------------------------------------ models
def add_model(signature=True, dynamic_batch=False):
    b = ModelBuilder()
    shape = [1, 4, 4, 3]
    sig = [-1, 4, 4, 3] if dynamic_batch else None
    x = b.add_input(shape, name="x", shape_signature=sig)
    y = b.add_input(shape, name="y", shape_signature=sig)
    z = b.add_tensor(shape, name="z", shape_signature=sig)
    b.add_op("ADD", [x, y], [z], options=dict(fused_activation_function="RELU"))
    b.mark_output(z)
    if signature:
        b.add_signature("serving_default", {"x": x, "y": y}, {"z": z})
    return b.build()


def chain_model():
    """x -> RELU -> a -> ADD(a,a) -> b -> MUL(b,b) -> c: a and c could share memory."""
    b = ModelBuilder()
    x = b.add_input([2, 3], name="x")
    a = b.add_tensor([2, 3], name="a")
    t = b.add_tensor([2, 3], name="b")
    c = b.add_tensor([2, 3], name="c")
    b.add_op("RELU", [x], [a])
    b.add_op("ADD", [a, a], [t], options=NONE)
    b.add_op("MUL", [t, t], [c], options=NONE)
    b.mark_output(c)
    return b.build()


def two_signature_model():
    b = ModelBuilder()
    x = b.add_input([2], name="x")
    y = b.add_tensor([2], name="y")
    b.add_op("RELU", [x], [y])
    b.mark_output(y)
    b.add_signature("relu", {"in": x}, {"out": y})
    b.add_signature("other", {"a": x}, {"b": y})
    return b.build()


def quant_model():
    b = ModelBuilder()
    x = b.add_input([1, 4], np.int8, name="x", quant=dict(scale=[0.5], zero_point=[3]))
    w = b.add_tensor([2, 4], np.int8, name="w", data=np.arange(8, dtype=np.int8).reshape(2, 4),
                     quant=dict(scale=[0.1, 0.2], zero_point=[0, 0], quantized_dimension=0))
    bias = b.add_tensor([2], np.int32, name="bias", data=np.array([3, -4], np.int32),
                        quant=dict(scale=[0.05, 0.1], zero_point=[0, 0]))
    y = b.add_tensor([1, 2], np.int8, name="y", quant=dict(scale=[0.7], zero_point=[-1]))
    b.add_op("FULLY_CONNECTED", [x, w, bias], [y], options=NONE)
    b.mark_output(y)
    return b.build()


def sparse_model(block=False):
    b = ModelBuilder()
    x = b.add_input([4, 4], name="x")
    if block:
        sp = b.add_tensor([4, 4], name="w", data=np.arange(8, dtype=np.float32), sparsity=dict(
            traversal_order=[0, 1, 2, 3], block_map=[0, 1], dim_metadata=[
                dict(format="DENSE", dense_size=2),
                dict(format="SPARSE_CSR", array_segments=np.array([0, 1, 2], np.int32),
                     array_indices=np.array([0, 1], np.int32)),
                dict(format="DENSE", dense_size=2), dict(format="DENSE", dense_size=2)]))
    else:
        dense = np.array([[1, 0, 0, 2], [0, 0, 0, 0], [0, 3, 4, 0], [0, 0, 0, 5]], np.float32)
        rows, cols = np.nonzero(dense)
        segs = np.concatenate([[0], np.cumsum((dense != 0).sum(1))]).astype(np.int32)
        sp = b.add_tensor([4, 4], name="w", data=dense[rows, cols], sparsity=dict(
            traversal_order=[0, 1], dim_metadata=[
                dict(format="DENSE", dense_size=4),
                dict(format="SPARSE_CSR", array_segments=segs.astype(np.uint8), array_indices=cols.astype(np.uint16))]))
    d = b.add_tensor([4, 4], name="dense")
    b.add_op("DENSIFY", [sp], [d])
    y = b.add_tensor([4, 4], name="y")
    b.add_op("ADD", [x, d], [y], options=NONE)
    b.mark_output(y)
    return b.build()


def blockwise_model(block=32, zp_tensor=False, scales=None, zero_points=None):
    """FULLY_CONNECTED whose int8 weights carry the schema's BlockwiseQuantization details (scales
    in a float16 tensor), written with LiteRT's own flatbuffer tools."""
    from ai_edge_litert import schema_py_generated as S
    from ai_edge_litert.tools import flatbuffer_utils as fu
    b = ModelBuilder()
    x = b.add_input([1, 64], name="x")
    w = b.add_const(np.ones((4, 64), np.int8), name="w")
    sc = b.add_const(np.full((4, 2), 0.5, np.float16), name="w_scales")
    zp = b.add_const(np.arange(8, dtype=np.int32).reshape(4, 2), name="w_zp") if zp_tensor else -1
    y = b.add_tensor([1, 4], name="y")
    b.add_op("FULLY_CONNECTED", [x, w, -1], [y], options=NONE)
    b.mark_output(y)
    m = fu.convert_bytearray_to_object(bytearray(b.build()))
    q = S.QuantizationParametersT()
    q.detailsType = S.QuantizationDetails.BlockwiseQuantization
    q.details = S.BlockwiseQuantizationT()
    q.details.scales = sc if scales is None else scales
    q.details.zeroPoints = zp if zero_points is None else zero_points
    q.details.blockSize = block
    m.subgraphs[0].tensors[w].quantization = q
    return bytes(fu.convert_object_to_bytearray(m))


def bad_version_model():
    b = ModelBuilder()
    x = b.add_input([2])
    y = b.add_tensor([2])
    b.add_op("RELU", [x], [y], version=99)
    b.mark_output(y)
    return b.build()


X = np.linspace(-2, 2, 48, dtype=np.float32).reshape(1, 4, 4, 3)


# ------------------------------------------------------------------ the comparison machinery
def _run(script, mod):
    # LiteRT's Delegate.__del__ raises AttributeError on a half-built object (load_delegate of a
    # missing library); such objects are freed here with the unraisable hook muted.
    hook = sys.unraisablehook
    sys.unraisablehook = lambda *a: None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                return "ok", script(mod)
            except Exception as e:  # the exception itself is the result compared
                e.__traceback__ = None
                return "raise", e
    finally:
        gc.collect()
        sys.unraisablehook = hook


def _same(a, b, path="result"):
    """a: LiteRT's structure, b: ours. Same keys, same types, same dtypes, same values."""
    if isinstance(a, dict):
        assert isinstance(b, dict), f"{path}: {type(b).__name__} instead of dict"
        assert list(a.keys()) == list(b.keys()), f"{path}: keys {list(b.keys())} instead of {list(a.keys())}"
        for k in a:
            _same(a[k], b[k], f"{path}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b), f"{path}: {type(b).__name__} instead of {type(a).__name__}"
        assert len(a) == len(b), f"{path}: length {len(b)} instead of {len(a)}"
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{path}[{i}]")
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray), f"{path}: {type(b).__name__} instead of ndarray"
        assert a.dtype == b.dtype, f"{path}: dtype {b.dtype} instead of {a.dtype}"
        assert a.shape == b.shape, f"{path}: shape {b.shape} instead of {a.shape}"
        if a.dtype.kind == "f":
            np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-6, err_msg=path)
        else:
            np.testing.assert_array_equal(b, a, err_msg=path)
    elif isinstance(a, type):
        assert a is b, f"{path}: {b} instead of {a}"
    elif isinstance(a, float):
        assert type(b) is float, f"{path}: {type(b).__name__} instead of float"
        assert abs(a - b) <= 1e-6 * max(1.0, abs(a)), f"{path}: {b} instead of {a}"
    else:
        assert type(a) is type(b), f"{path}: {type(b).__name__} ({b!r}) instead of {type(a).__name__} ({a!r})"
        assert a == b, f"{path}: {b!r} instead of {a!r}"


def check_same(script):
    ref_kind, ref = _run(script, litert_mod)
    kind, got = _run(script, ours_mod)
    if ref_kind == "raise":
        assert kind == "raise", f"LiteRT raises {type(ref).__name__}: {ref}; ours returned {got!r}"
        assert isinstance(got, type(ref)), (f"LiteRT raises {type(ref).__name__} ({ref}); ours raises "
                                            f"{type(got).__name__} ({got})")
        assert str(got), "our exception has no message"
        return ref, got
    assert kind == "ok", f"LiteRT returns {ref!r}; ours raises {type(got).__name__}: {got}"
    _same(ref, got)
    return ref, got


def resolver(mod, name=NO_DEFAULT):
    return getattr(mod.OpResolverType, name)


# ------------------------------------------------------------------ user-style scripts returning structures
def s_details(model):
    def script(tfl):
        it = tfl.Interpreter(model_content=model)
        return {"inputs": it.get_input_details(), "outputs": it.get_output_details(),
                "tensors": it.get_tensor_details(), "tensors_sg0": it.get_tensor_details(subgraph_index=0),
                "signatures": it.get_signature_list(), "full": it._get_full_signature_list(),
                "num_subgraphs": it.num_subgraphs(), "t0": it._get_tensor_details(0, 0)}
    return script


@pytest.mark.parametrize("name,model", [("add", add_model), ("dynamic", lambda: add_model(dynamic_batch=True)),
                                        ("quant", quant_model), ("sparse", sparse_model),
                                        ("block_sparse", lambda: sparse_model(block=True)),
                                        ("two_signatures", two_signature_model),
                                        ("blockwise", blockwise_model),
                                        ("blockwise_zero_points", lambda: blockwise_model(zp_tensor=True))])
def test_details_same_as_litert(name, model):
    check_same(s_details(model()))


def test_run_and_read_same_as_litert():
    m = add_model()

    def script(tfl):
        it = tfl.Interpreter(model_content=m, num_threads=2)
        it.allocate_tensors()
        it.set_tensor(0, X)
        it.set_tensor(1, X * 0.5)
        r = it.invoke()
        view = it.tensor(2)()
        out = {"invoke": r, "z": it.get_tensor(2), "z_sg": it.get_tensor(2, subgraph_index=0), "view": np.array(view)}
        # LiteRT refuses allocate_tensors() while a view is alive; ours (tests/test_misuse.py) also
        # reset_all_variables(), so the view goes first.
        del view
        out["reset"] = it.reset_all_variables()
        out["alloc_again"] = it.allocate_tensors()
        return out
    check_same(script)


def test_ops_details_same_as_litert():
    m = chain_model()

    def script(tfl):
        it = tfl.Interpreter(model_content=m, experimental_op_resolver_type=resolver(tfl))
        it.allocate_tensors()
        return {"ops": it._get_ops_details(), "op1": it._get_op_details(1)}
    check_same(script)


def test_ops_details_after_delegation_same_as_litert():
    """LiteRT applies XNNPACK by default and then lists one "DELEGATE" node (the partition's inputs
    and outputs) after the model's nodes; ours lists the GPU delegate's partition the same way."""
    from gpu_util import require_gpu
    require_gpu()
    m = chain_model()
    ref = litert_mod.Interpreter(model_content=m)  # AUTO: XNNPACK takes the whole graph
    ref.allocate_tensors()
    it = ours_mod.Interpreter(model_content=m,
                              experimental_delegates=[ours_mod.load_delegate("libtensorflowlite_gpu_delegate.so")])
    it.allocate_tensors()
    want, got = ref._get_ops_details(), it._get_ops_details()
    assert [o["op_name"] for o in want] == ["RELU", "ADD", "MUL", "DELEGATE"]
    _same(want, got)
    _same(ref._get_op_details(3), it._get_op_details(3))
    with pytest.raises(ValueError):
        it._get_op_details(4)


def test_blockwise_quantization_reported_and_refused_at_allocate():
    """block_size and the scale/zero-point tensors' values are reported as LiteRT reports them
    (test_details_same_as_litert); running such a model is refused at allocate_tensors() with the
    reason (LiteRT 2.3 runs it and returns zeros: silent garbage)."""
    it = ours_mod.Interpreter(model_content=blockwise_model())
    assert it.get_tensor_details()[1]["quantization_parameters"]["block_size"] == 32
    with pytest.raises(RuntimeError, match=r"tensor 1 \('w'\) is blockwise-quantized \(block_size 32"):
        it.allocate_tensors()


@pytest.mark.parametrize("kw,match", [(dict(block=0), "block_size 0"), (dict(block=-4), "block_size -4"),
                                      (dict(scales=99), "scales tensor 99 out of range"),
                                      (dict(scales=-1), "scales tensor -1 out of range"),
                                      (dict(zero_points=7), "zero_points tensor 7 out of range")])
def test_blockwise_quantization_bad_details_refused_at_load(kw, match):
    with pytest.raises(ValueError, match=match):
        ours_mod.Interpreter(model_content=blockwise_model(**kw))


def test_signature_runner_same_as_litert():
    m = add_model(dynamic_batch=True)

    def script(tfl):
        it = tfl.Interpreter(model_content=m)
        run = it.get_signature_runner()
        same = it.get_signature_runner("serving_default")
        out = run(x=np.concatenate([X, X]), y=np.ones((2, 4, 4, 3), np.float32))
        return {"out": out, "in": run.get_input_details(), "outd": run.get_output_details(),
                "again": same(x=X, y=X), "direct": tfl.SignatureRunner(it, "serving_default")(x=X, y=-X)}
    check_same(script)


@pytest.mark.parametrize("kind", ["BUILTIN_REF", NO_DEFAULT])
def test_preserve_all_tensors_keeps_intermediates_as_litert(kind):
    m = chain_model()
    x = np.array([[1, -2, 3], [0.5, -1, 2]], np.float32)

    def script(tfl):
        it = tfl.Interpreter(model_content=m, experimental_preserve_all_tensors=True,
                             experimental_op_resolver_type=resolver(tfl, kind))
        it.allocate_tensors()
        it.set_tensor(0, x)
        it.invoke()
        return [it.get_tensor(i) for i in range(4)]
    ref, got = check_same(script)
    # Independent numpy check of the intermediates (a = relu(x), b = 2a, c = b*b).
    a = np.maximum(x, 0)
    np.testing.assert_array_equal(got[1], a)
    np.testing.assert_array_equal(got[2], 2 * a)
    np.testing.assert_array_equal(got[3], 4 * a * a)


def test_preserve_all_tensors_off_shares_memory():
    # The point of the flag: without it the planner reuses a's memory for c (so a is overwritten).
    m = chain_model()
    x = np.array([[1, -2, 3], [0.5, -1, 2]], np.float32)
    sizes = {}
    for preserve in (False, True):
        it = ours_mod.Interpreter(model_content=m, experimental_preserve_all_tensors=preserve)
        it.allocate_tensors()
        it.set_tensor(0, x)
        it.invoke()
        sizes[preserve] = it.arena_bytes()
    assert sizes[True] > sizes[False]


def test_variables_and_reset_same_as_litert():
    from tflite_gpu.testing import zoo
    m = zoo.lstm_model()

    def script(tfl):
        it = tfl.Interpreter(model_content=m, experimental_op_resolver_type=resolver(tfl))
        it.allocate_tensors()
        d = it.get_input_details()[0]
        x = np.random.default_rng(3).standard_normal(d["shape"]).astype(np.float32)
        o = it.get_output_details()[0]["index"]
        outs = []
        for _ in range(2):
            it.set_tensor(d["index"], x)
            it.invoke()
            outs.append(it.get_tensor(o))
        it.reset_all_variables()
        it.set_tensor(d["index"], x)
        it.invoke()
        outs.append(it.get_tensor(o))
        return outs
    ref, got = _run(script, litert_mod), _run(script, ours_mod)
    assert ref[0] == got[0] == "ok", (ref, got)
    for a, b in zip(ref[1], got[1]):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
    assert not np.allclose(got[1][0], got[1][1])            # the state carried over
    np.testing.assert_allclose(got[1][2], got[1][0], rtol=1e-6)  # and was reset


def test_model_content_types_and_num_threads():
    m = add_model()
    # bytes and num_threads=None/True/4: both accept.
    for kw in (dict(), dict(num_threads=None), dict(num_threads=True), dict(num_threads=4)):
        check_same(lambda tfl: tfl.Interpreter(model_content=m, **kw).get_input_details())
    # LiteRT takes only bytes; ours documents bytearray / memoryview / numpy buffers as well.
    for content in (bytearray(m), memoryview(m), np.frombuffer(m, np.uint8)):
        it = ours_mod.Interpreter(model_content=content)
        it.allocate_tensors()
        it.set_tensor(0, X)
        it.set_tensor(1, X)
        it.invoke()
        np.testing.assert_array_equal(it.get_tensor(2), np.maximum(2 * X, 0))
    with pytest.raises(TypeError, match="model_path"):
        ours_mod.Interpreter(model_content="model.tflite")


def test_model_path_pathlike(tmp_path):
    p = tmp_path / "m.tflite"
    p.write_bytes(add_model())
    check_same(lambda tfl: tfl.Interpreter(model_path=p).get_signature_list())
    check_same(lambda tfl: tfl.Interpreter(model_path=str(p)).get_input_details())


# ------------------------------------------------------------------ the same mistakes, the same exception types
def _allocated(tfl, m=None, **kw):
    it = tfl.Interpreter(model_content=m or add_model(), **kw)
    it.allocate_tensors()
    return it


MISTAKES = {
    "num_threads=-1": lambda tfl: tfl.Interpreter(model_content=add_model(), num_threads=-1),
    "num_threads=0": lambda tfl: tfl.Interpreter(model_content=add_model(), num_threads=0),
    "num_threads=2.0": lambda tfl: tfl.Interpreter(model_content=add_model(), num_threads=2.0),
    "no model": lambda tfl: tfl.Interpreter(),
    "path and content": lambda tfl: tfl.Interpreter(model_path="x.tflite", model_content=add_model()),
    "bad resolver": lambda tfl: tfl.Interpreter(model_content=add_model(), experimental_op_resolver_type=5),
    "missing file": lambda tfl: tfl.Interpreter(model_path="/nonexistent/model.tflite"),
    "not a model": lambda tfl: tfl.Interpreter(model_content=b"1234" * 16),
    "builtin version": lambda tfl: tfl.Interpreter(model_content=bad_version_model()),
    "unresolved custom op": lambda tfl: _allocated(tfl, custom_op_model()),
    "invoke before allocate": lambda tfl: tfl.Interpreter(model_content=add_model()).invoke(),
    "get before allocate": lambda tfl: tfl.Interpreter(model_content=add_model()).get_tensor(2),
    "get_tensor(99)": lambda tfl: _allocated(tfl).get_tensor(99),
    "get_tensor(-1)": lambda tfl: _allocated(tfl).get_tensor(-1),
    "get_tensor('a')": lambda tfl: _allocated(tfl).get_tensor("a"),
    "get_tensor(0, 0.5)": lambda tfl: _allocated(tfl).get_tensor(0, 0.5),
    "get_tensor subgraph 3": lambda tfl: _allocated(tfl).get_tensor(0, subgraph_index=3),
    "tensor details subgraph 2": lambda tfl: _allocated(tfl).get_tensor_details(subgraph_index=2),
    "tensor(99)()": lambda tfl: _allocated(tfl).tensor(99)(),
    "set_tensor dtype": lambda tfl: _allocated(tfl).set_tensor(0, X.astype(np.int32)),
    "set_tensor rank": lambda tfl: _allocated(tfl).set_tensor(0, X[0]),
    "set_tensor shape": lambda tfl: _allocated(tfl).set_tensor(0, np.zeros((1, 4, 4, 2), np.float32)),
    "set_tensor(99)": lambda tfl: _allocated(tfl).set_tensor(99, X),
    "resize negative": lambda tfl: _allocated(tfl).resize_tensor_input(0, [1, -2, 2, 3]),
    "strict resize of a fixed dim": lambda tfl: _allocated(tfl).resize_tensor_input(0, [1, 2, 2, 3], strict=True),
    "resize then invoke": lambda tfl: (lambda it: (it.resize_tensor_input(0, [2, 4, 4, 3]), it.invoke()))(_allocated(tfl)),
    "signature key": lambda tfl: tfl.Interpreter(model_content=add_model()).get_signature_runner("nope"),
    "signature None of two": lambda tfl: tfl.Interpreter(model_content=two_signature_model()).get_signature_runner(),
    "signature missing input": lambda tfl: tfl.Interpreter(model_content=add_model()).get_signature_runner()(x=X),
    "signature wrong name": lambda tfl: tfl.Interpreter(model_content=add_model()).get_signature_runner()(x=X, q=X),
    "SignatureRunner(None)": lambda tfl: tfl.SignatureRunner(None, "k"),
    "op details 99": lambda tfl: _allocated(tfl)._get_op_details(99),
    "load missing library": lambda tfl: tfl.load_delegate("libdoes_not_exist_tflite_gpu_test.so"),
    "load a non-delegate library": lambda tfl: tfl.load_delegate("libm.so.6"),
}


@pytest.mark.parametrize("name", sorted(MISTAKES))
def test_same_exception_type_as_litert(name):
    ref, got = check_same(MISTAKES[name])
    assert isinstance(ref, BaseException), f"LiteRT does not raise for {name!r}: the case is wrong"


def test_our_messages_name_the_problem():
    with pytest.raises(RuntimeError, match="custom op 'MyOp'"):
        _allocated(ours_mod, custom_op_model())
    with pytest.raises(ValueError, match="RELU version 99"):
        ours_mod.Interpreter(model_content=bad_version_model())
    with pytest.raises(RuntimeError, match="negative dimension"):
        _allocated(ours_mod).resize_tensor_input(0, [1, -2, 2, 3])
    with pytest.raises(ValueError, match="expected 2 vs provided 1; inputs are"):
        ours_mod.Interpreter(model_content=add_model()).get_signature_runner()(x=X)


# ------------------------------------------------------------------ no public name of LiteRT's is missing
def _public(obj):
    return {n for n in dir(obj) if not n.startswith("_")}


def _module_api(mod):
    return {n for n, v in vars(mod).items() if not n.startswith("_") and (inspect.isclass(v) or inspect.isfunction(v))
            and getattr(v, "__module__", "") == mod.__name__}


# Private names LiteRT users call anyway (examples, tools, the TF docs).
USED_PRIVATE = {"_get_ops_details", "_get_op_details", "_get_tensor_details", "_get_full_signature_list"}


def test_no_public_name_of_litert_is_missing():
    missing = _module_api(litert_mod) - set(dir(ours_mod))
    assert not missing, f"tflite_gpu.interpreter lacks {sorted(missing)}"
    for cls in ("Interpreter", "InterpreterWithCustomOps", "SignatureRunner", "Delegate"):
        ref, ours = getattr(litert_mod, cls), getattr(ours_mod, cls)
        lack = (_public(ref) | (USED_PRIVATE & set(dir(ref)))) - set(dir(ours))
        assert not lack, f"{cls} lacks {sorted(lack)}"
        # every keyword argument of LiteRT's constructor and methods is accepted by ours
        for name in ["__init__"] + sorted(_public(ref)):
            f = getattr(ref, name)
            if not callable(f):
                continue
            want = [p for p in inspect.signature(f).parameters if p not in ("self", "kwargs")]
            have = inspect.signature(getattr(ours, name)).parameters
            assert all(p in have for p in want), f"{cls}.{name}{inspect.signature(getattr(ours, name))} lacks " \
                                                 f"some of {want}"
    assert [m.name for m in litert_mod.OpResolverType] == [m.name for m in ours_mod.OpResolverType]
    assert [m.value for m in litert_mod.OpResolverType] == [m.value for m in ours_mod.OpResolverType]
    for f in ("load_delegate",):
        assert list(inspect.signature(getattr(litert_mod, f)).parameters) == \
            list(inspect.signature(getattr(ours_mod, f)).parameters)


def test_experimental_keywords_accepted():
    m = add_model()
    kw = dict(experimental_disable_delegate_clustering=True, experimental_default_delegate_latest_features=True,
              experimental_compress_quantization_zero_points=True, experimental_disable_delegate_node_fusion=True,
              experimental_force_delegate_node_profiling=True)

    def script(tfl):
        it = tfl.Interpreter(model_content=m, **kw)
        it.allocate_tensors()
        it.set_tensor(0, X)
        it.set_tensor(1, X)
        it.invoke()
        return {"z": it.get_tensor(2), "czp": it.experimental_compress_quantization_zero_points}
    check_same(script)


# ------------------------------------------------------------------ custom ops written in Python (ours only)
def _x():
    return np.array([[1, -2, 3], [-0.5, 4, -6]], np.float32)


def test_python_custom_op_with_shape_function_matches_numpy():
    calls = []

    def my_op(a):
        calls.append(a.copy())
        return np.tanh(a) * 2

    it = ours_mod.InterpreterWithCustomOps(model_content=custom_op_model(), custom_op_registerers=[
        ours_mod.CustomOp("MyOp", my_op, shape_fn=lambda s: [s])])
    it.allocate_tensors()
    x = _x()
    it.set_tensor(0, x)
    it.invoke()
    np.testing.assert_allclose(it.get_tensor(3), np.tanh(np.maximum(x, 0)) * 2 + x, rtol=1e-6)
    np.testing.assert_array_equal(calls[0], np.maximum(x, 0))
    assert [o["op_name"] for o in it._get_ops_details()] == ["RELU", "MyOp", "ADD"]


def test_python_custom_op_dynamic_shapes_from_the_call():
    # Without a shape function the output takes the shape of what the function returns; here the
    # op returns a (2, 3) array computed in float32.
    it = ours_mod.InterpreterWithCustomOps(model_content=custom_op_model(),
                                           custom_ops={"MyOp": lambda a: (a * a).astype(np.float32)})
    it.allocate_tensors()
    for k in range(2):
        x = _x() + k
        it.set_tensor(0, x)
        it.invoke()
        np.testing.assert_allclose(it.get_tensor(3), np.maximum(x, 0) ** 2 + x, rtol=1e-6)


def test_python_custom_op_errors_are_clear():
    def run(fn, shape_fn=None, alloc_only=False):
        it = ours_mod.InterpreterWithCustomOps(model_content=custom_op_model(),
                                               custom_op_registerers=[ours_mod.CustomOp("MyOp", fn, shape_fn)])
        it.allocate_tensors()
        if not alloc_only:
            it.set_tensor(0, _x())
            it.invoke()

    with pytest.raises(RuntimeError, match=r"custom op 'MyOp' raised .*ZeroDivisionError"):
        run(lambda a: 1 / 0)
    with pytest.raises(RuntimeError, match=r"custom op 'MyOp': output 0 has dtype float64 but the model declares float32"):
        run(lambda a: a.astype(np.float64))
    with pytest.raises(RuntimeError, match=r"returned 2 arrays; the node has 1 outputs"):
        run(lambda a: (a, a))
    with pytest.raises(RuntimeError, match=r"shape \[2, 2\] but the shape function said \[2, 3\]"):
        run(lambda a: a[:, :2].copy(), shape_fn=lambda s: [s])
    with pytest.raises(RuntimeError, match=r"shape function returned 2 shapes for 1 outputs"):
        run(lambda a: a, shape_fn=lambda s: [s, s], alloc_only=True)
    with pytest.raises(RuntimeError, match=r"shape function raised .*KeyError"):
        run(lambda a: a, shape_fn=lambda s: {}["k"], alloc_only=True)
    # an op that is not registered stays unresolved, with LiteRT's exception type
    with pytest.raises(RuntimeError, match="custom op 'MyOp'"):
        ours_mod.InterpreterWithCustomOps(model_content=custom_op_model(),
                                          custom_ops={"Other": lambda a: a}).allocate_tensors()
    # LiteRT-style registerers name a TFLite C++ symbol: missing -> LiteRT's ValueError
    with pytest.raises(ValueError, match="Looking up symbol 'NoSuchRegisterer'"):
        ours_mod.InterpreterWithCustomOps(model_content=custom_op_model(), custom_op_registerers=["NoSuchRegisterer"])
    with pytest.raises(ValueError, match="Looking up symbol 'NoSuchRegisterer'"):
        litert_mod.InterpreterWithCustomOps(model_content=custom_op_model(), custom_op_registerers=["NoSuchRegisterer"])


def test_python_custom_op_with_gpu_delegate_runs_on_cpu():
    from gpu_util import require_gpu
    require_gpu()
    # RELU before the Python op and ADD after it: two partitions, allowed by the option.
    d = ours_mod.load_delegate("libtensorflowlite_gpu_delegate.so", {"max_delegated_partitions": "2"})
    it = ours_mod.InterpreterWithCustomOps(model_content=custom_op_model(), experimental_delegates=[d],
                                           custom_ops={"MyOp": (lambda a: a * 3, lambda s: [s])})
    it.allocate_tensors()
    x = _x()
    it.set_tensor(0, x)
    it.invoke()
    np.testing.assert_allclose(it.get_tensor(3), 3 * np.maximum(x, 0) + x, rtol=1e-6)
    rep = it.delegation_report()
    assert rep["total_nodes"] == 3 and rep["delegated_nodes"] == 2 and rep["partitions"] == 2, rep


# ------------------------------------------------------------------ load_delegate and the external-delegate keys
def test_load_delegate_parses_the_documented_keys():
    from tflite_gpu.delegate import ExperimentalFlags, GpuDelegateOptions, InferencePreference, InferencePriority, WaitType
    o = GpuDelegateOptions.from_external_options({
        "gpu_precision_loss_allowed": "1", "gpu_inference_preference": "SUSTAINED_SPEED",
        "gpu_inference_priority1": "MIN_LATENCY", "inference_priority2": "3", "gpu_inference_priority3": 1,
        "gpu_experimental_enable_quant": "false", "serialization_dir": "/tmp/x", "model_token": "tok",
        "max_delegated_partitions": "2", "wait_type": "do_not_wait"})
    assert o.is_precision_loss_allowed is True
    assert o.inference_preference == InferencePreference.SUSTAINED_SPEED
    assert (o.inference_priority1, o.inference_priority2, o.inference_priority3) == (
        InferencePriority.MIN_LATENCY, InferencePriority.MIN_MEMORY_USAGE, InferencePriority.MAX_PRECISION)
    assert not (o.experimental_flags & ExperimentalFlags.ENABLE_QUANT)
    assert (o.serialization_dir, o.model_token, o.max_delegated_partitions) == ("/tmp/x", "tok", 2)
    assert o.wait_type == WaitType.DO_NOT_WAIT
    o = GpuDelegateOptions.from_external_options({"is_precision_loss_allowed": "0",
                                                  "experimental_flags": "ENABLE_QUANT|CL_ONLY"})
    assert o.is_precision_loss_allowed is False
    assert o.experimental_flags == ExperimentalFlags.ENABLE_QUANT | ExperimentalFlags.CL_ONLY
    d = GpuDelegateOptions.from_external_options(None)
    assert d == GpuDelegateOptions()


@pytest.mark.parametrize("opts,match", [
    ({"definitely_not_an_option": "1"}, r"unknown GPU delegate option 'definitely_not_an_option'"),
    ({"is_precision_loss_allowed": "maybe"}, r"bad value 'maybe' for GPU delegate option 'is_precision_loss_allowed'"),
    ({"gpu_inference_priority1": "FASTEST"}, r"'gpu_inference_priority1'.*MIN_LATENCY"),
    ({"inference_preference": "7"}, r"'inference_preference'"),
    ({"experimental_flags": "0x100"}, r"'experimental_flags'"),
    ({"max_delegated_partitions": "-1"}, r"'max_delegated_partitions'"),
    ({"gpu_backend": "gl"}, r"'gpu_backend'.*OpenCL"),
])
def test_load_delegate_rejects_bad_keys_and_values(opts, match):
    with pytest.raises(ValueError, match="Failed to load delegate from libtensorflowlite_gpu_delegate.so") as e:
        ours_mod.load_delegate("libtensorflowlite_gpu_delegate.so", opts)
    assert e.match(match)


def test_load_delegate_gpu_runs_like_litert_cpu():
    from gpu_util import require_gpu
    require_gpu()
    from harness import run_litert
    m = add_model()
    for lib in ("libtensorflowlite_gpu_delegate.so", "/opt/lib/libtensorflowlite_gpu_delegate_v2.so",
                ours_mod.__file__):
        d = ours_mod.load_delegate(lib, {"gpu_precision_loss_allowed": "0", "gpu_inference_priority1": "MAX_PRECISION"})
        assert isinstance(d, ours_mod.Delegate) and d.gpu_delegate is not None
        it = ours_mod.Interpreter(model_content=m, experimental_delegates=[d])
        it.allocate_tensors()
        it.set_tensor(0, X)
        it.set_tensor(1, -0.5 * X)
        it.invoke()
        np.testing.assert_allclose(it.get_tensor(2), run_litert(m, [X, -0.5 * X])[0], rtol=1e-6, atol=1e-6)
        rep = it.delegation_report()
        assert rep["delegated_nodes"] == 1 and rep["precision"] == "F32", rep
    d = ours_mod.load_delegate("libtensorflowlite_gpu_delegate.so", {"gpu_precision_loss_allowed": "true"})
    it = ours_mod.Interpreter(model_content=m, experimental_delegates=[d])
    assert it.delegation_report()["precision"] != "F32"


def test_litert_delegate_object_is_refused_clearly():
    class Foreign:  # e.g. a LiteRT Delegate: a TfLiteDelegate* this engine cannot apply
        def _get_native_delegate_pointer(self):
            return 0
    with pytest.raises(ValueError, match="not a tflite_gpu delegate"):
        ours_mod.Interpreter(model_content=add_model(), experimental_delegates=[Foreign()])


def test_type_stubs_ship_with_the_package_and_match_the_modules():
    import ast
    import importlib
    import os
    import tflite_gpu
    pkg = os.path.dirname(tflite_gpu.__file__)
    assert os.path.isfile(os.path.join(pkg, "py.typed"))
    for modname in ("interpreter", "delegate"):
        mod = importlib.import_module(f"tflite_gpu.{modname}")
        tree = ast.parse(open(os.path.join(pkg, f"{modname}.pyi")).read())
        for node in tree.body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
                assert hasattr(mod, node.name), f"{modname}.pyi declares {node.name}, the module lacks it"
            if isinstance(node, ast.ClassDef):
                cls = getattr(mod, node.name)
                for m in node.body:
                    if isinstance(m, ast.FunctionDef):
                        assert hasattr(cls, m.name), f"{modname}.pyi: {node.name}.{m.name} missing in the module"
                        if m.name != "__init__" and not isinstance(getattr(cls, m.name), property):
                            want = [x.arg for x in m.args.args + m.args.kwonlyargs]
                            want += [x.arg for x in (m.args.vararg, m.args.kwarg) if x is not None]
                            have = list(inspect.signature(getattr(cls, m.name)).parameters)
                            if isinstance(inspect.getattr_static(cls, m.name), classmethod):
                                have = ["cls"] + have
                            assert want == have, f"{modname}.{node.name}.{m.name}: stub {want} vs {have}"
        if modname == "interpreter":
            stub = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
            assert stub == set(mod.__all__), stub ^ set(mod.__all__)
