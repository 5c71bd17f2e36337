"""STRING tensors beyond the one-invoke op cases (tests/op_cases/strings.py):

* the ops LiteRT 2.3's builtin kernels refuse on strings are refused here too, with an error that
  names the op, the position and STRING (LiteRT BUILTIN_WITHOUT_DEFAULT_DELEGATES refuses each
  model at allocate_tensors or at invoke);
* the rules of the ops that do run on strings (GATHER takes 1-D STRING params only; EQUAL needs
  two STRING inputs; a STRING input needs a STRING output) give clear errors;
* strings set before allocate_tensors() is called again are kept (as in LiteRT);
* the GPU delegate leaves string ops on the CPU with a reason.
The C API's string buffers are tested from C in tests/test_cpp_example.py (tests/c/c_api_strings.c).
"""
import numpy as np
import pytest

import tflite_gpu
from harness import assert_refused, invoke_step, litert_interpreter, litert_refuses, our_interpreter
from tflite_gpu.testing.builder import ModelBuilder

I32, F32, BOOL = np.int32, np.float32, np.bool_
S = "STRING"


def _model(op, ins, outs, options=None, version=1):
    """ins: (shape, dtype) graph inputs or ndarray constants; outs: (shape, dtype)."""
    mb = ModelBuilder()
    idx = []
    for x in ins:
        if isinstance(x, np.ndarray):
            idx.append(mb.add_const(x, dtype=S) if x.dtype == object else mb.add_const(x))
        else:
            idx.append(mb.add_input(list(x[0]), x[1]))
    o = [mb.add_tensor(list(s), d) for s, d in outs]
    for t in o:
        mb.mark_output(t)
    mb.add_op(op, idx, o, options=options, version=version)
    return mb.build()


def _strings(shape):
    n = int(np.prod(shape))
    return np.array([f"s{i}".encode() * (i % 3) for i in range(n)], dtype=object).reshape(shape)


def _inputs(model):
    """Data for each graph input of the model: strings for STRING inputs, small ints otherwise."""
    it = tflite_gpu.Interpreter(model_content=model)
    out = []
    for d in it.get_input_details():
        if d["dtype"] == np.bytes_:
            out.append(_strings(d["shape"]))
        elif d["dtype"] == np.bool_:
            out.append(np.ones(d["shape"], BOOL))
        else:
            out.append(np.zeros(d["shape"], d["dtype"]))
    return out


# Ops LiteRT 2.3 BUILTIN refuses with STRING data (at prepare or at invoke).
REFUSED = [
    ("CONCATENATION", _model("CONCATENATION", [((2,), S), ((3,), S)], [((5,), S)], dict(axis=0))),
    ("PACK", _model("PACK", [((2,), S), ((2,), S)], [((2, 2), S)], dict(values_count=2, axis=0))),
    ("UNPACK", _model("UNPACK", [((2, 2), S)], [((2,), S), ((2,), S)], dict(num=2, axis=0))),
    ("SPLIT", _model("SPLIT", [np.array(0, I32), ((4,), S)], [((2,), S), ((2,), S)], dict(num_splits=2))),
    ("SPLIT_V", _model("SPLIT_V", [((4,), S), np.array([1, 3], I32), np.array(0, I32)], [((1,), S), ((3,), S)],
                       dict(num_splits=2))),
    ("TRANSPOSE", _model("TRANSPOSE", [((2, 3), S), np.array([1, 0], I32)], [((3, 2), S)])),
    ("BROADCAST_TO", _model("BROADCAST_TO", [((1, 3), S), np.array([2, 3], I32)], [((2, 3), S)], version=2)),
    ("REVERSE_V2", _model("REVERSE_V2", [((4,), S), np.array([0], I32)], [((4,), S)])),
    ("REVERSE_SEQUENCE", _model("REVERSE_SEQUENCE", [((2, 3), S), np.array([1, 2], I32)], [((2, 3), S)],
                                dict(seq_dim=1, batch_dim=0))),
    ("PAD", _model("PAD", [((2,), S), np.array([[1, 1]], I32)], [((4,), S)])),
    ("MIRROR_PAD", _model("MIRROR_PAD", [((3,), S), np.array([[1, 1]], I32)], [((5,), S)], dict(mode="REFLECT"))),
    ("LESS", _model("LESS", [((3,), S), ((3,), S)], [((3,), BOOL)])),
    ("GREATER_EQUAL", _model("GREATER_EQUAL", [((3,), S), ((3,), S)], [((3,), BOOL)])),
    ("SELECT", _model("SELECT", [((3,), BOOL), ((3,), S), ((3,), S)], [((3,), S)])),
    ("SELECT_V2", _model("SELECT_V2", [((3,), BOOL), ((3,), S), ((3,), S)], [((3,), S)])),
    ("ZEROS_LIKE", _model("ZEROS_LIKE", [((4,), S)], [((4,), S)])),
    ("CAST", _model("CAST", [((2,), S)], [((2,), I32)])),
    ("ADD", _model("ADD", [((2,), S), ((2,), S)], [((2,), S)])),
    ("WHERE", _model("WHERE", [((3,), S)], [((3, 1), np.int64)])),
    ("SCATTER_ND", _model("SCATTER_ND", [np.array([[1]], I32), ((1,), S), np.array([3], I32)], [((3,), S)])),
    ("SPARSE_TO_DENSE", _model("SPARSE_TO_DENSE", [np.array([[1]], I32), np.array([4], I32), ((1,), S), ((), S)],
                               [((4,), S)])),
    ("DYNAMIC_UPDATE_SLICE", _model("DYNAMIC_UPDATE_SLICE", [((4,), S), ((2,), S), np.array([1], I32)],
                                    [((4,), S)])),
    ("DEPTH_TO_SPACE", _model("DEPTH_TO_SPACE", [((1, 1, 1, 4), S)], [((1, 2, 2, 1), S)], dict(block_size=2))),
    ("BATCH_TO_SPACE_ND", _model("BATCH_TO_SPACE_ND", [((2, 1, 1, 1), S), np.array([2, 1], I32),
                                                       np.array([[0, 0], [0, 0]], I32)], [((1, 2, 1, 1), S)])),
]


@pytest.mark.parametrize("op,model", REFUSED, ids=[r[0] for r in REFUSED])
def test_op_litert_refuses_on_strings_is_refused(op, model):
    assert litert_refuses(model, _inputs(model)), f"LiteRT runs {op} on strings: it belongs in op_cases/strings.py"
    msg = assert_refused(model, words=[op, "STRING"])
    assert "does not take" in msg or "does not write" in msg, msg


def test_embedding_lookup_of_strings_is_refused():
    # LiteRT 2.3 crashes (SIGSEGV) on STRING values in EMBEDDING_LOOKUP, so it is not run here.
    m = _model("EMBEDDING_LOOKUP", [np.array([1, 0], I32), ((3, 2), S)], [((2, 2), S)])
    assert_refused(m, words=["EMBEDDING_LOOKUP", "input 1", "STRING"])


BAD = [
    # name, model, words in our message, LiteRT refuses it too
    ("gather_2d_params", _model("GATHER", [((4, 2), S), np.array([1], I32)], [((1, 2), S)], dict(axis=0)),
     ["GATHER", "1-D", "[4, 2]"], True),
    ("equal_string_int", _model("EQUAL", [((3,), S), ((3,), I32)], [((3,), BOOL)]),
     ["EQUAL", "input 1 is INT32", "both must be STRING"], True),
    ("equal_int_string", _model("EQUAL", [((3,), I32), ((3,), S)], [((3,), BOOL)]),
     ["EQUAL", "input 0 is INT32", "both must be STRING"], True),
    ("reshape_shape_is_string", _model("RESHAPE", [((2,), I32), ((1,), S)], [((2,), I32)]),
     ["RESHAPE", "input 1 is a STRING tensor"], True),
    ("fill_dims_string", _model("FILL", [((1,), S), np.array(b"x", dtype=object)], [((1,), S)]),
     ["FILL", "input 0 is a STRING tensor"], True),
    ("gather_indices_string", _model("GATHER", [((4,), S), ((2,), S)], [((2,), S)], dict(axis=0)),
     ["GATHER", "input 1 is a STRING tensor"], True),
    # LiteRT accepts a float output for STRING data and writes into it what it writes; refused here.
    ("reshape_string_to_float", _model("RESHAPE", [((2,), S), np.array([2], I32)], [((2,), F32)]),
     ["RESHAPE", "output 0 must be STRING too (it is FLOAT32)"], None),
    ("reshape_float_to_string", _model("RESHAPE", [((2,), F32), np.array([2], I32)], [((2,), S)]),
     ["RESHAPE", "output 0 is a STRING tensor", "non-STRING input"], None),
    ("tile_output_string_from_int", _model("TILE", [((2,), I32), np.array([2], I32)], [((4,), S)]),
     ["TILE", "output 0 is a STRING tensor"], None),
]


@pytest.mark.parametrize("name,model,words,litert", BAD, ids=[b[0] for b in BAD])
def test_bad_string_model_is_a_clear_error(name, model, words, litert):
    if litert:
        assert litert_refuses(model, _inputs(model))
    assert_refused(model, words=words)


def test_gather_of_strings_out_of_range_is_a_runtime_error():
    m = _model("GATHER", [((3,), S), ((2,), I32)], [((2,), S)], dict(axis=0))
    data = [_strings([3]), np.array([0, 3], I32)]
    assert litert_refuses(m, data)
    assert_refused(m, data, words=["GATHER"], at_invoke=True)


def test_string_input_count_must_match_the_shape_at_invoke():
    # A string input resized without allocate_tensors is refused at invoke (as any resized input).
    m = _model("RESHAPE", [((2,), S), np.array([-1], I32)], [((2,), S)])
    it = our_interpreter(m)
    it.resize_tensor_input(0, [3])
    with pytest.raises(RuntimeError):
        it.invoke()


def _reshape_chain():
    """x STRING [2, 3] -> RESHAPE [3, 2] -> GATHER_ND rows [[2], [0]] -> EQUAL against y [2, 2]."""
    mb = ModelBuilder()
    x = mb.add_input([2, 3], S, name="x")
    y = mb.add_input([2, 2], S, name="y")
    r = mb.add_tensor([3, 2], S)
    mb.add_op("RESHAPE", [x, mb.add_const(np.array([3, 2], I32))], [r])
    g = mb.add_tensor([2, 2], S)
    mb.add_op("GATHER_ND", [r, mb.add_const(np.array([[2], [0]], I32))], [g])
    e = mb.add_tensor([2, 2], BOOL)
    mb.add_op("EQUAL", [g, y], [e])
    mb.mark_output(g)
    mb.mark_output(e)
    return mb.build()


@pytest.mark.parametrize("reference", [False, True], ids=["fast", "reference"])
def test_string_chain_over_invokes_vs_litert(reference):
    m = _reshape_chain()
    lit, ours = litert_interpreter(m), our_interpreter(m, reference=reference)
    for k in range(3):
        x = np.array([f"w{(i * 7 + k) % 4}".encode() for i in range(6)], dtype=object).reshape(2, 3)
        y = np.array([b"w0", b"w1", f"w{k}".encode(), b""], dtype=object).reshape(2, 2)
        want = invoke_step(lit, [x, y])
        got = invoke_step(ours, [x, y])
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_array_equal(g, w)


def test_strings_set_before_allocate_tensors_are_kept():
    # LiteRT keeps a string input's value across a second allocate_tensors() (and a resize to the
    # same shape); before, ours reset it to empty strings.
    m = _model("RESHAPE", [((2, 2), S), np.array([4], I32)], [((4,), S)])
    x = np.array([[b"a", b"bb"], [b"", "\u00fc".encode()]], dtype=object)
    results = []
    for it in (litert_interpreter(m), our_interpreter(m)):
        it.set_tensor(it.get_input_details()[0]["index"], x)
        it.allocate_tensors()
        kept = it.get_tensor(it.get_input_details()[0]["index"])
        it.resize_tensor_input(it.get_input_details()[0]["index"], [2, 2])
        it.allocate_tensors()
        it.invoke()
        results.append((kept, it.get_tensor(it.get_output_details()[0]["index"])))
    (lk, lo), (ok, oo) = results
    np.testing.assert_array_equal(ok, lk)
    np.testing.assert_array_equal(ok, x)
    np.testing.assert_array_equal(oo, lo)
    # A resize to the same element count keeps them too; to another count the old strings do not
    # fit: n empty strings (LiteRT keeps the old buffer and reads None past its end).
    m = _model("RESHAPE", [((2, 2), S), np.array([-1], I32)], [((4,), S)])
    it = our_interpreter(m)
    it.set_tensor(0, x)
    it.resize_tensor_input(0, [1, 4])
    it.allocate_tensors()
    np.testing.assert_array_equal(it.get_tensor(0), x.reshape(1, 4))
    it.resize_tensor_input(0, [1, 3])
    it.allocate_tensors()
    np.testing.assert_array_equal(it.get_tensor(0), np.array([[b""] * 3], dtype=object))
    it.invoke()
    np.testing.assert_array_equal(it.get_tensor(it.get_output_details()[0]["index"]), np.array([b""] * 3, dtype=object))


def test_gpu_delegate_leaves_string_data_on_the_cpu():
    from gpu_util import delegate
    m = _model("RESHAPE", [((2, 3), S), np.array([6], I32)], [((6,), S)])
    it = tflite_gpu.Interpreter(model_content=m, experimental_delegates=[delegate("F32")])
    it.allocate_tensors()
    rep = it.delegation_report()
    assert rep["delegated_nodes"] == 0, rep
    assert any("STRING" in str(u) for u in rep["unsupported"]), rep
    x = _strings([2, 3])
    it.set_tensor(0, x)
    it.invoke()
    np.testing.assert_array_equal(it.get_tensor(it.get_output_details()[0]["index"]), x.reshape(6))


def test_string_resource_variable_is_refused():
    # LiteRT 2.3 crashes (SIGSEGV) assigning a STRING value to a resource variable, so it is not
    # run here; ours refuses the model naming the op.
    mb = ModelBuilder()
    h = mb.add_tensor([], "RESOURCE", name="h")
    mb.add_op("VAR_HANDLE", [], [h], options=dict(container="", shared_name="v"))
    x = mb.add_input([2], S)
    mb.add_op("ASSIGN_VARIABLE", [h, x], [])
    r = mb.add_tensor([2], S)
    mb.add_op("READ_VARIABLE", [h], [r])
    mb.mark_output(r)
    assert_refused(mb.build(), words=["ASSIGN_VARIABLE", "input 1", "STRING"])


def test_if_branch_output_string_vs_int_is_refused():
    mb = ModelBuilder()
    t = mb.add_subgraph("then")
    a = t.add_input([2], S)
    t.mark_output(a)
    e = mb.add_subgraph("else")
    e.add_input([2], S)
    o = e.add_const(np.array([1, 2], I32))
    e.mark_output(o)
    p = mb.add_input([], BOOL)
    x = mb.add_input([2], S)
    y = mb.add_tensor([2], S)
    mb.add_op("IF", [p, x], [y], options=dict(then_subgraph_index=t.index, else_subgraph_index=e.index))
    mb.mark_output(y)
    # LiteRT 2.3 does not compare the branches' types: it runs the then branch, and the else
    # branch returns int32 values of uninitialised memory through the STRING output. Refused here.
    assert_refused(mb.build(), words=["IF", "STRING", "INT32"])
