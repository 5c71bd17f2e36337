"""Lookup family beyond the one-invoke op cases (tests/op_cases/lookup.py): bad models and bad
data give a clear error naming the op (LiteRT BUILTIN_WITHOUT_DEFAULT_DELEGATES refuses them too
where it says so), never a crash, and the GPU delegate leaves these ops on the CPU with a reason."""
import numpy as np
import pytest

import tflite_gpu
from harness import assert_refused, invoke_step, litert_interpreter, litert_refuses, our_interpreter
from op_cases.lookup import els_model, lsh_model
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
