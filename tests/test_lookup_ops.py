"""Lookup family beyond the one-invoke op cases (tests/op_cases/lookup.py): bad models and bad
data give a clear error naming the op (LiteRT BUILTIN_WITHOUT_DEFAULT_DELEGATES refuses them too
where it says so), never a crash; hashtables over several invokes and from a CALL_ONCE init
subgraph (vs LiteRT); STRING tensors through the Python API (as LiteRT: details dtype bytes_,
object arrays of bytes out, bytes/str arrays in); the GPU delegate leaves these ops on the CPU
with a reason."""
import numpy as np
import pytest

import tflite_gpu
from harness import assert_refused, invoke_step, litert_interpreter, litert_refuses, our_interpreter
from op_cases.lookup import els_model, hashtable_model, hl_model, lsh_model, skip_gram_model
from tflite_gpu.testing.builder import ModelBuilder

F32, I32 = np.float32, np.int32


def _model(op, ins, out, options=None):
    """ins: (shape, dtype) graph inputs or ndarray constants; out: (shape, dtype)."""
    mb = ModelBuilder()
    idx = [mb.add_const(x) if isinstance(x, np.ndarray) else mb.add_input(list(x[0]), x[1]) for x in ins]
    y = mb.add_tensor(list(out[0]), out[1])
    mb.add_op(op, idx, [y], options=options)
    mb.mark_output(y)
    return mb.build()


H = np.ones((2, 3), F32)
BAD_MODELS = [
    # name, model, words in our message, LiteRT refuses it too
    ("lsh_unknown_type", lsh_model(0, 2, 3, (3, 2)), ["projection type"], True),
    ("lsh_33_bits", lsh_model("DENSE", 2, 33, (3, 2)), ["32 bits"], True),
    ("lsh_hash_1d", _model("LSH_PROJECTION", [np.ones(3, F32), ((3, 2), F32)], ((3,), I32), dict(type="DENSE")),
     ["2-D"], True),
    ("lsh_zero_rows", _model("LSH_PROJECTION", [H, ((0, 2), F32)], ((2,), I32), dict(type="SPARSE")),
     ["at least one row"], True),
    ("lsh_scalar_input", _model("LSH_PROJECTION", [H, ((), F32)], ((2,), I32), dict(type="SPARSE")),
     ["at least one dimension"], True),
    ("lsh_weight_rows", _model("LSH_PROJECTION", [H, ((3, 2), F32), np.ones(4, F32)], ((2,), I32),
                               dict(type="SPARSE")), ["weight", "rows"], True),
    ("lsh_weight_2d", _model("LSH_PROJECTION", [H, ((3, 2), F32), np.ones((3, 1), F32)], ((2,), I32),
                             dict(type="SPARSE")), ["1-D"], True),
    ("lsh_one_input", _model("LSH_PROJECTION", [H], ((2,), I32), dict(type="SPARSE")), ["inputs"], True),
    ("lsh_output_float", _model("LSH_PROJECTION", [H, ((3, 2), F32)], ((2,), F32), dict(type="SPARSE")),
     ["INT32"], False),
    ("els_four_inputs", _model("EMBEDDING_LOOKUP_SPARSE", [((2,), I32), ((2, 2), I32), np.array([3, 2], I32),
                                                           ((2,), F32)], ((3,), F32)), ["inputs"], True),
    ("els_ids_2d", _model("EMBEDDING_LOOKUP_SPARSE", [((2, 1), I32), ((2, 2), I32), np.array([3, 2], I32),
                                                      ((2,), F32), ((5, 2), F32)], ((3, 2), F32)), ["ids", "1-D"], True),
    ("els_ids_float", _model("EMBEDDING_LOOKUP_SPARSE", [((2,), F32), ((2, 2), I32), np.array([3, 2], I32),
                                                         ((2,), F32), ((5, 2), F32)], ((3, 2), F32)), ["ids"], True),
    ("els_count_mismatch", _model("EMBEDDING_LOOKUP_SPARSE", [((2,), I32), ((3, 2), I32), np.array([3, 2], I32),
                                                              ((2,), F32), ((5, 2), F32)], ((3, 2), F32)),
     ["same number"], True),
    ("els_params_1d", _model("EMBEDDING_LOOKUP_SPARSE", [((2,), I32), ((2, 2), I32), np.array([3, 2], I32),
                                                         ((2,), F32), ((5,), F32)], ((3,), F32)), ["params"], True),
]


@pytest.mark.parametrize("name,model,words,litert", BAD_MODELS, ids=[b[0] for b in BAD_MODELS])
def test_bad_model_is_a_clear_error(name, model, words, litert):
    # litert True: LiteRT refuses it at allocate_tensors too; False: LiteRT accepts the model (it
    # writes int32 bits into a float tensor); we refuse.
    if litert:
        assert litert_refuses(model)
    msg = assert_refused(model, words=words)
    assert ("LSH_PROJECTION" in msg) or ("EMBEDDING_LOOKUP_SPARSE" in msg), msg


P = np.arange(10, dtype=F32).reshape(5, 2)


def test_els_bad_data_is_a_runtime_error():
    m = els_model(2, 2, (3, 2), (5, 2), "SUM")
    bad_id = [np.array([0, 5], I32), np.array([[0, 0], [1, 0]], I32), np.ones(2, F32), P]
    assert litert_refuses(m, bad_id)
    assert_refused(m, bad_id, words=["index out of bounds", "Got 5"], at_invoke=True)
    neg_id = [np.array([-1, 0], I32), np.array([[0, 0], [1, 0]], I32), np.ones(2, F32), P]
    assert litert_refuses(m, neg_id)
    assert_refused(m, neg_id, words=["index out of bounds"], at_invoke=True)
    # An index past dense_shape: LiteRT writes outside its output there (no error); we refuse.
    for bad in ([[0, 0], [7, 0]], [[0, 0], [-1, 0]]):
        assert_refused(m, [np.array([0, 1], I32), np.array(bad, I32), np.ones(2, F32), P],
                       words=["outside dense_shape"], at_invoke=True)
    m = _model("EMBEDDING_LOOKUP_SPARSE", [((2,), I32), ((2, 2), I32), ((3,), I32), ((2,), F32), ((5, 2), F32)],
               ((3, 2), F32))
    ins = [np.array([0, 1], I32), np.zeros((2, 2), I32), np.array([3, 2, 1], I32), np.ones(2, F32), P]
    assert litert_refuses(m, ins)
    assert_refused(m, ins, words=["dense_shape has 3 entries"], at_invoke=True)
    m = els_model(2, 3, (3, 2, 2), (5, 2), "SUM", const_meta=False)
    ins = [np.array([0, 1], I32), np.zeros((2, 3), I32), np.array([-3, 2, 1], I32), np.ones(2, F32), P]
    assert litert_refuses(m, ins)
    assert_refused(m, ins, words=["negative dimension"], at_invoke=True)


def test_els_unknown_combiner_acts_as_sum_as_in_litert():
    m = els_model(3, 2, (3, 2), (5, 2), 7)
    ins = [np.array([0, 1, 4], I32), np.array([[0, 0], [0, 1], [2, 0]], I32), np.array([2, 3, 0.5], F32), P]
    want = invoke_step(litert_interpreter(m), ins)[0]
    got = invoke_step(our_interpreter(m), ins)[0]
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(want, [[2 * P[0, 0] + 3 * P[1, 0], 2 * P[0, 1] + 3 * P[1, 1]], [0, 0], 0.5 * P[4]])


def test_lsh_state_free_over_invokes():
    m = lsh_model("SPARSE", 4, 9, (5, 3), weight_input=True)
    lite = litert_interpreter(m)
    ours = tflite_gpu.Interpreter(model_content=m)
    ours.allocate_tensors()
    rng = np.random.default_rng(3)
    for step in range(3):
        ins = [rng.normal(0, 1, (5, 3)).astype(F32), rng.uniform(-1, 1, 5).astype(F32)]
        np.testing.assert_array_equal(invoke_step(ours, ins)[0], invoke_step(lite, ins)[0], err_msg=f"invoke {step}")


@pytest.mark.parametrize("model", [lsh_model("DENSE", 3, 4, (4, 2)), els_model(4, 2, (3, 2), (5, 2), "MEAN")],
                         ids=["lsh", "els"])
def test_gpu_delegate_leaves_them_on_the_cpu(model):
    from gpu_util import delegate
    d = delegate("F32")
    it = tflite_gpu.Interpreter(model_content=model, experimental_delegates=[d])
    it.allocate_tensors()
    rep = it.delegation_report()
    assert rep["delegated_nodes"] == 0 and rep["unsupported"] and all(u[3] for u in rep["unsupported"]), rep
    rng = np.random.default_rng(0)
    ins = []
    for x in it.get_input_details():
        if x["dtype"] == np.int32:
            ins.append(np.zeros(x["shape"], I32))
        else:
            ins.append(rng.uniform(0.5, 1.0, x["shape"]).astype(x["dtype"]))
    want = invoke_step(litert_interpreter(model), ins)[0]
    np.testing.assert_array_equal(invoke_step(it, ins)[0], want)


# ------------------------------------------------------------------ STRING tensors, hashtables
S = "STRING"


def test_string_io_matches_litert_python_api():
    m = skip_gram_model(2, 1, True)
    lite, ours = litert_interpreter(m), our_interpreter(m)
    assert ours.get_input_details()[0]["dtype"] is lite.get_input_details()[0]["dtype"] is np.bytes_
    assert ours.get_output_details()[0]["dtype"] is np.bytes_
    for value in (np.array([b"a b c"]), np.array(["x y z w"]), np.array(["gr\u00fc\u00dfe x"], dtype=object)):
        want, got = invoke_step(lite, [value])[0], invoke_step(ours, [value])[0]
        assert got.dtype == want.dtype == object and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="STRING"):
        ours.set_tensor(ours.get_input_details()[0]["index"], np.array([1], I32))
    with pytest.raises(ValueError, match="Dimension mismatch"):
        ours.set_tensor(ours.get_input_details()[0]["index"], np.array([b"a", b"b"]))
    with pytest.raises(ValueError, match="bytes or str"):
        ours.set_tensor(ours.get_input_details()[0]["index"], np.array([3.5], dtype=object))
    with pytest.raises(ValueError, match="STRING"):
        ours.tensor(ours.get_input_details()[0]["index"])()


def test_string_input_resize_matches_litert():
    mb = ModelBuilder()
    lk = mb.add_input([2], I32)
    k = mb.add_const(np.array([1, 2, 3], I32))
    v = mb.add_input([3], S)
    o = mb.add_tensor([2], S)
    h = mb.add_tensor([2], np.uint8)
    mb.add_op("HASHTABLE_LOOKUP", [lk, k, v], [o, h])
    mb.mark_output(o)
    mb.mark_output(h)
    m = mb.build()
    lite, ours = litert_interpreter(m), our_interpreter(m)
    for it in (lite, ours):
        it.resize_tensor_input(0, [4])
        it.allocate_tensors()
    ins = [np.array([3, 0, 1, 2], I32), np.array([b"one", b"two", b"three"], dtype=object)]
    for step in range(2):
        w, g = invoke_step(lite, ins), invoke_step(ours, ins)
        for a, b in zip(g, w):
            np.testing.assert_array_equal(a, b)


def test_hashtable_state_over_invokes_matches_litert():
    m = hashtable_model("INT64", [1, 2, 3], [b"a", b"b", b"c"], b"?", (3,))
    lite, ours = litert_interpreter(m), our_interpreter(m)
    for step, keys in enumerate(([1, 5, 3], [2, 2, 9], [3, 1, 0])):
        x = [np.array(keys, np.int64)]
        w, g = invoke_step(lite, x), invoke_step(ours, x)
        for a, b in zip(g, w):
            np.testing.assert_array_equal(a, b, err_msg=f"invoke {step}")
    ours.reset_all_variables()  # tables are not variable tensors: they stay (as in LiteRT)
    lite.reset_all_variables()
    x = [np.array([1, 2, 3], np.int64)]
    for a, b in zip(invoke_step(ours, x), invoke_step(lite, x)):
        np.testing.assert_array_equal(a, b)


def _call_once_table_model():
    """As the converter writes a lookup table: a CALL_ONCE init subgraph creates and imports
    table 7 (STRING -> INT64); the main subgraph finds keys in it and reports its size."""
    mb = ModelBuilder()
    isg = mb.add_subgraph("init")
    h = isg.add_tensor([1], "RESOURCE")
    isg.add_op("HASHTABLE", [], [h], options=dict(table_id=7, key_dtype=S, value_dtype="INT64"))
    k = isg.add_const(np.array([b"cat", b"dog", b"emu"], dtype=object))
    v = isg.add_const(np.array([10, 20, 30], np.int64))
    isg.add_op("HASHTABLE_IMPORT", [h, k, v], [])
    mb.add_op("CALL_ONCE", [], [], options=dict(init_subgraph_index=isg.index))
    h0 = mb.add_tensor([1], "RESOURCE")
    mb.add_op("HASHTABLE", [], [h0], options=dict(table_id=7, key_dtype=S, value_dtype="INT64"))
    q = mb.add_input([4], S, name="words")
    d = mb.add_const(np.array([-1], np.int64))
    o = mb.add_tensor([4], np.int64)
    mb.add_op("HASHTABLE_FIND", [h0, q, d], [o])
    n = mb.add_tensor([1], np.int64)
    mb.add_op("HASHTABLE_SIZE", [h0], [n])
    mb.mark_output(o)
    mb.mark_output(n)
    return mb.build()


@pytest.mark.parametrize("reference", [False, True])
def test_hashtable_from_call_once_init_matches_litert(reference):
    m = _call_once_table_model()
    lite, ours = litert_interpreter(m), our_interpreter(m, reference=reference)
    for words in ([b"dog", b"cow", b"emu", b"cat"], [b"", b"cat", b"cat", b"Dog"]):
        x = [np.array(words, dtype=object)]
        for a, b in zip(invoke_step(ours, x), invoke_step(lite, x)):
            np.testing.assert_array_equal(a, b)


def _table_op_model(ops):
    """ops: list of (op, [input specs], [output specs], options); a spec is ('t', name) for a
    tensor made earlier, or (shape, dtype) for a new graph input / output, or an ndarray constant."""
    mb = ModelBuilder()
    named = {}
    for op, ins, outs, opts in ops:
        ii = []
        for x in ins:
            if isinstance(x, np.ndarray):
                ii.append(mb.add_const(x))
            elif x[0] == "t":
                ii.append(named[x[1]])
            else:
                ii.append(mb.add_input(list(x[0]), x[1]))
        oo = []
        for name, shape, dt in outs:
            named[name] = mb.add_tensor(list(shape), dt)
            oo.append(named[name])
            if name.startswith("out"):
                mb.mark_output(named[name])
        mb.add_op(op, ii, oo, options=opts)
    return mb.build()


def _ht(key=S, value="INT64", tid=1, out_type="RESOURCE", shape=(1,)):
    return ("HASHTABLE", [], [("h", shape, out_type)], dict(table_id=tid, key_dtype=key, value_dtype=value))


def _hl(keys, values, out_dtype, lookup_shape=(2,), hits=np.uint8):
    mb = ModelBuilder()
    lk = mb.add_input(list(lookup_shape), I32)
    k = mb.add_const(keys)
    v = mb.add_const(values)
    o = mb.add_tensor([2], out_dtype)
    h = mb.add_tensor([2], hits)
    mb.add_op("HASHTABLE_LOOKUP", [lk, k, v], [o, h])
    mb.mark_output(o)
    return mb.build()


_SK = np.array([b"a", b"b"], dtype=object)
_IV = np.array([1, 2], np.int64)
BAD_STRING_MODELS = [
    ("hashtable_float_keys", _table_op_model([_ht(key="FLOAT32", value="INT64"),
                                              ("HASHTABLE_SIZE", [("t", "h")], [("out", (1,), np.int64)], None)]),
     ["INT64 -> STRING"], True),
    ("hashtable_int64_to_int64", _table_op_model([_ht(key="INT64", value="INT64"),
                                                  ("HASHTABLE_SIZE", [("t", "h")], [("out", (1,), np.int64)], None)]),
     ["only INT64 -> STRING"], True),
    ("hashtable_handle_not_resource", _table_op_model([_ht(out_type=I32),
                                                       ("HASHTABLE_SIZE", [("t", "h")], [("out", (1,), np.int64)], None)]),
     ["RESOURCE"], True),
    ("import_shape_mismatch", _table_op_model([_ht(), ("HASHTABLE_IMPORT", [("t", "h"), _SK, np.array([1, 2, 3], np.int64)],
                                                                      [], None),
                                               ("HASHTABLE_SIZE", [("t", "h")], [("out", (1,), np.int64)], None)]),
     ["same shape"], True),
    ("import_wrong_types", _table_op_model([_ht(), ("HASHTABLE_IMPORT", [("t", "h"), _SK, np.array([1, 2], I32)], [], None),
                                            ("HASHTABLE_SIZE", [("t", "h")], [("out", (1,), np.int64)], None)]),
     ["only INT64 -> STRING"], True),
    ("find_default_type", _table_op_model([_ht(), ("HASHTABLE_FIND", [("t", "h"), ((2,), S), np.array([0], I32)],
                                                   [("out", (2,), np.int64)], None)]), ["default value"], True),
    ("find_float_keys", _table_op_model([_ht(), ("HASHTABLE_FIND", [("t", "h"), ((2,), F32), np.array([0], np.int64)],
                                                 [("out", (2,), np.int64)], None)]), ["only INT64 -> STRING"], True),
    ("size_output_int32", _table_op_model([_ht(), ("HASHTABLE_SIZE", [("t", "h")], [("out", (1,), I32)], None)]),
     ["INT64"], True),
    ("size_handle_2d", _table_op_model([_ht(), ("RESHAPE", [("t", "h"), np.array([1, 1], I32)], [("h2", (1, 1), "RESOURCE")],
                                                None),
                                        ("HASHTABLE_SIZE", [("t", "h2")], [("out", (1,), np.int64)], None)]),
     None, True),
    ("skip_gram_int_input", _model("SKIP_GRAM", [((1,), I32)], ((1,), S), dict(ngram_size=2)), ["STRING"], True),
    ("skip_gram_int_output", _model("SKIP_GRAM", [((1,), S)], ((1,), I32), dict(ngram_size=2)), ["STRING"], True),
    ("hl_keys_float", _hl(np.array([1.0, 2.0], F32), np.ones(2, F32), F32), ["keys", "INT32"], True),
    ("hl_lookup_2d", _hl(np.array([1, 2], I32), np.ones(2, F32), F32, lookup_shape=(1, 2)), ["1-D"], True),
    ("hl_key_value_rows", _hl(np.array([1, 2], I32), np.ones(3, F32), F32), ["value rows"], True),
    ("hl_output_type", _hl(np.array([1, 2], I32), np.ones(2, F32), I32), ["output has type INT32"], True),
    ("hl_hits_type", _hl(np.array([1, 2], I32), np.ones(2, F32), F32, hits=I32), ["hits"], True),
    # An op that takes no STRING data (LiteRT refuses it too); the ops LiteRT runs on strings
    # (RESHAPE, GATHER, ...) are in tests/op_cases/strings.py, the refused ones in test_string_ops.py.
    ("string_into_other_op", _model("TRANSPOSE", [((2, 1), S), np.array([1, 0], I32)], ((1, 2), S)),
     ["TRANSPOSE", "input 0 is a STRING tensor"], True),
]


@pytest.mark.parametrize("name,model,words,litert", BAD_STRING_MODELS, ids=[b[0] for b in BAD_STRING_MODELS])
def test_bad_string_and_table_model_is_a_clear_error(name, model, words, litert):
    if litert:
        assert litert_refuses(model)
    assert_refused(model, words=words or ())


def test_find_on_a_table_nobody_created_is_a_runtime_error():
    # HASHTABLE_SIZE of a handle nobody writes (a RESOURCE input left unset): no HASHTABLE op made
    # a table. RESOURCE tensors start zeroed at allocation, so the error names id 0, not garbage.
    mb = ModelBuilder()
    h = mb.add_input([1], "RESOURCE", name="handle")
    n = mb.add_tensor([1], np.int64)
    mb.add_op("HASHTABLE_SIZE", [h], [n])
    mb.mark_output(n)
    m = mb.build()
    it = our_interpreter(m)
    for _ in range(2):
        with pytest.raises(RuntimeError, match=r"no hashtable has id 0 \(no HASHTABLE op created it\)"):
            it.invoke()


@pytest.mark.parametrize("reference", [False, True])
def test_resource_tensor_no_op_writes_reads_as_id_0(reference):
    """A RESOURCE intermediate that no op produces, read after two float ADDs: it must not share
    arena memory with them (their bytes would read as a garbage table id) nor hold stale memory."""
    none = dict(fused_activation_function="NONE")
    mb = ModelBuilder()
    x = mb.add_input([1], np.float32, name="x")
    a = mb.add_tensor([1], np.float32, name="a")
    b = mb.add_tensor([1], np.float32, name="b")
    h = mb.add_tensor([1], "RESOURCE", name="h")
    n = mb.add_tensor([1], np.int64, name="n")
    mb.add_op("ADD", [x, x], [a], options=none)
    mb.add_op("ADD", [a, a], [b], options=none)
    mb.add_op("HASHTABLE_SIZE", [h], [n])
    mb.mark_output(b)
    mb.mark_output(n)
    it = our_interpreter(mb.build(), reference=reference)
    for v in (1.2345, -7.5):
        it.set_tensor(it.get_input_details()[0]["index"], np.array([v], np.float32))
        with pytest.raises(RuntimeError, match=r"no hashtable has id 0 \(no HASHTABLE op created it\)"):
            it.invoke()


def test_table_used_with_other_types_is_a_runtime_error():
    m = _table_op_model([_ht(key="INT64", value=S, tid=4),
                         ("HASHTABLE", [], [("h2", (1,), "RESOURCE")], dict(table_id=4, key_dtype=S, value_dtype="INT64")),
                         ("HASHTABLE_FIND", [("t", "h2"), ((2,), S), np.array([0], np.int64)], [("out", (2,), np.int64)],
                          None)])
    ins = [np.array([b"a", b"b"], dtype=object)]
    assert litert_refuses(m, ins)
    assert_refused(m, ins, words=["maps INT64 to STRING"], at_invoke=True)


def test_corrupt_constant_string_buffer_is_refused_at_load():
    mb = ModelBuilder()
    lk = mb.add_input([2], I32)
    k = mb.add_const(np.array([1, 2], I32))
    bad = np.array([2, 16, 17, 99], "<i4").tobytes() + b"ab"  # offsets past the end
    v = mb.add_tensor([2], S, data=bad)
    o = mb.add_tensor([2], S)
    h = mb.add_tensor([2], np.uint8)
    mb.add_op("HASHTABLE_LOOKUP", [lk, k, v], [o, h])
    mb.mark_output(o)
    with pytest.raises(ValueError, match="corrupt string buffer"):
        tflite_gpu.Interpreter(model_content=mb.build())


def test_skip_gram_negative_ngram_is_refused():
    assert_refused(skip_gram_model(-1, 0, False), words=["ngram_size is negative"])


@pytest.mark.parametrize("model", [hashtable_model("INT64", [1], [b"a"], b"?", (2,)), skip_gram_model(2, 1, False)],
                         ids=["hashtable", "skip_gram"])
def test_gpu_delegate_leaves_string_ops_on_the_cpu(model):
    from gpu_util import delegate
    it = tflite_gpu.Interpreter(model_content=model, experimental_delegates=[delegate("F32")])
    it.allocate_tensors()
    rep = it.delegation_report()
    assert rep["delegated_nodes"] == 0 and rep["unsupported"] and all(u[3] for u in rep["unsupported"]), rep


def test_string_input_hostile_python_calls():
    """STRING inputs through hostile Python calls (the fuzz helper's API probe): a resized string
    input is neither read nor written before allocate_tensors() (ValueError naming it; a resize
    to [2**31 - 1] then get_tensor used to build 2**31 empty strings: MemoryError), a str that
    UTF-8 cannot encode is a ValueError naming the tensor (was a bare UnicodeEncodeError), and
    after allocate_tensors() the resized input runs (vs LiteRT)."""
    m = _call_once_table_model()
    it = tflite_gpu.Interpreter(model_content=m)
    it.allocate_tensors()
    i = it.get_input_details()[0]["index"]
    with pytest.raises(ValueError, match="'words'.*cannot be encoded as UTF-8"):
        it.set_tensor(i, np.array(["ok", "\ud800", "x", "y"]))
    values = {6: np.array([b"cat"] * 6, dtype=object), 0: np.zeros(0, dtype=object),
              None: np.array(b"cat", dtype=object)}
    for shape in ([2**31 - 1], [6], [0], []):
        it.resize_tensor_input(i, shape)
        with pytest.raises(ValueError, match=r"\('words'\) was resized to .* call allocate_tensors\(\) first"):
            it.get_tensor(i)
        v = values.get(shape[0] if shape else None)
        if v is not None:
            with pytest.raises(ValueError, match=r"\('words'\) was resized to"):
                it.set_tensor(i, v)
    it.resize_tensor_input(i, [6])
    it.allocate_tensors()
    lite = litert_interpreter(m)
    lite.resize_tensor_input(i, [6])
    lite.allocate_tensors()
    x = [np.array([b"dog", b"cow", b"", b"emu", b"cat", b"cat"], dtype=object)]
    for a, b in zip(invoke_step(it, x), invoke_step(lite, x)):
        np.testing.assert_array_equal(a, b)


def test_skip_gram_search_is_bounded():
    """SKIP_GRAM's search visits partial n-grams that may never complete: ngram_size 35 over a
    40-word sentence with max_skip_size 100 walks ~2^40 states (LiteRT runs the same search, for
    hours) to emit C(40, 35) grams. Bounded at 2^28 steps: a RuntimeError naming the op and its
    parameters, not an endless invoke (found reviewing the op for the fuzz pass). The output's
    2 GiB STRING layout is checked as the grams are written (not after building them all)."""
    it = our_interpreter(skip_gram_model(35, 100, False))
    x = [np.array([" ".join(f"w{i}" for i in range(40)).encode()], dtype=object)]
    with pytest.raises(RuntimeError, match=r"SKIP_GRAM.*40 words \(ngram_size 35, max_skip_size 100\) passed 2\^28 steps"):
        invoke_step(it, x)
