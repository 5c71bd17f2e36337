"""Bad models and bad data for the comparison / math / reduction ops of issue 8. Each case is one
LiteRT (BUILTIN_WITHOUT_DEFAULT_DELEGATES) also refuses; we must refuse it too: a ValueError naming
the op at allocate_tensors for a bad model, a RuntimeError naming the op at invoke for bad data.
Never a crash or silent garbage."""
import numpy as np
import pytest

from harness import assert_refused, litert_refuses
from tflite_gpu.testing.builder import single_op_model

F32 = np.float32
I32 = np.int32


# (id, model, inputs, phase, op, message fragment)
BAD_MODELS = [
    ("equal_mixed_types", single_op_model("EQUAL", [([3], F32), ([3], I32)], [([3], np.bool_)]), "EQUAL", "differ"),
    ("less_not_broadcastable", single_op_model("LESS", [([2, 3], F32), ([4, 3], F32)], [([2, 3], np.bool_)]),
     "LESS", "broadcastable"),
    ("greater_bool", single_op_model("GREATER", [([3], np.bool_), ([3], np.bool_)], [([3], np.bool_)]), "GREATER",
     "BOOL"),
    ("logical_or_float", single_op_model("LOGICAL_OR", [([3], F32), ([3], F32)], [([3], np.bool_)]), "LOGICAL_OR",
     "FLOAT32"),
    ("logical_not_float", single_op_model("LOGICAL_NOT", [([3], F32)], [([3], np.bool_)]), "LOGICAL_NOT", "BOOL"),
    ("select_bad_cond", single_op_model("SELECT", [([3], np.bool_), ([2, 3], F32), ([2, 3], F32)], [([2, 3], F32)]),
     "SELECT", "condition"),
    ("select_xy_differ", single_op_model("SELECT", [([2, 3], np.bool_), ([2, 3], F32), ([2, 3], I32)],
                                         [([2, 3], F32)]), "SELECT", "differ"),
    ("select_cond_float", single_op_model("SELECT_V2", [([3], F32), ([3], F32), ([3], F32)], [([3], F32)]),
     "SELECT_V2", "BOOL"),
    ("select_v2_not_broadcastable", single_op_model("SELECT_V2", [([2], np.bool_), ([3], F32), ([3], F32)],
                                                    [([3], F32)]), "SELECT_V2", "broadcastable"),
    ("atan2_shapes", single_op_model("ATAN2", [([2, 3], F32), ([3], F32)], [([2, 3], F32)]), "ATAN2", "shape"),
    ("add_n_shapes", single_op_model("ADD_N", [([2, 3], F32), ([3], F32)], [([2, 3], F32)]), "ADD_N", "shape"),
    ("lrn_rank3", single_op_model("LOCAL_RESPONSE_NORMALIZATION", [[2, 3, 4]], [[2, 3, 4]],
                                  options=dict(radius=1, bias=1.0, alpha=1.0, beta=0.5)),
     "LOCAL_RESPONSE_NORMALIZATION", "4-D"),
    ("reduce_max_axis_range", single_op_model("REDUCE_MAX", [[2, 3]], [[2]], options=dict(keep_dims=False),
                                              consts=[np.array([2], I32)]), "REDUCE_MAX", "out of range"),
    ("reduce_any_float", single_op_model("REDUCE_ANY", [[2, 3]], [[2]], options=dict(keep_dims=False),
                                         consts=[np.array([1], I32)]), "REDUCE_ANY", "BOOL"),
    ("cumsum_bool", single_op_model("CUMSUM", [([2, 3], np.bool_)], [([2, 3], np.bool_)],
                                    consts=[np.array(1, I32)]), "CUMSUM", "BOOL"),
]


@pytest.mark.parametrize("name,model,op,msg", BAD_MODELS, ids=[c[0] for c in BAD_MODELS])
def test_bad_model_refused_at_allocate(name, model, op, msg):
    assert litert_refuses(model), f"{name}: LiteRT accepts this model"
    assert_refused(model, match=op, words=[msg])


BAD_DATA = [
    ("floor_div_int_zero", single_op_model("FLOOR_DIV", [([4], I32), ([4], I32)], [([4], I32)]),
     [np.array([1, 2, 3, 4], I32), np.array([1, 0, 2, 2], I32)], "FLOOR_DIV", "zero"),
    ("floor_mod_int_zero", single_op_model("FLOOR_MOD", [([4], I32), ([1], I32)], [([4], I32)]),
     [np.array([1, 2, 3, 4], I32), np.array([0], I32)], "FLOOR_MOD", "zero"),
    ("pow_negative_int_exponent", single_op_model("POW", [([3], I32), ([3], I32)], [([3], I32)]),
     [np.array([2, 3, 4], I32), np.array([1, -1, 2], I32)], "POW", "negative"),
    ("cumsum_axis_range", single_op_model("CUMSUM", [[2, 3], ([], I32)], [[2, 3]]),
     [np.ones((2, 3), F32), np.array(2, I32)], "CUMSUM", "out of range"),
    ("where_scalar", single_op_model("WHERE", [([], np.bool_)], [([1, 0], np.int64)]),
     [np.array(True)], "WHERE", "rank"),
    ("reduce_min_dynamic_axis_range", single_op_model("REDUCE_MIN", [[2, 3], ([1], I32)], [[2]],
                                                      options=dict(keep_dims=False)),
     [np.ones((2, 3), F32), np.array([-3], I32)], "REDUCE_MIN", "out of range"),
]


@pytest.mark.parametrize("name,model,inputs,op,msg", BAD_DATA, ids=[c[0] for c in BAD_DATA])
def test_bad_data_fails_at_invoke(name, model, inputs, op, msg):
    assert litert_refuses(model, inputs), f"{name}: LiteRT accepts this data"
    assert_refused(model, inputs, match=op, words=[msg], at_invoke=True)

