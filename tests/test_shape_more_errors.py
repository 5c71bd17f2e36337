"""Bad models and bad data for the second shape group (tests/op_cases/shape_more.py): each case is
checked to fail in LiteRT (BUILTIN_WITHOUT_DEFAULT_DELEGATES) too, and ours must fail with a clear
exception naming the op: ValueError at allocate_tensors for bad models, RuntimeError at invoke for
bad data (out-of-range indices, ...). Nothing crashes."""
import numpy as np
import pytest

from harness import assert_refused, litert_refuses
from op_cases.shape import In, build

F32, I32, I64, I8 = np.float32, np.int32, np.int64, np.int8


# (op, inputs, outputs, options, version, graph-input values, fails at invoke)
BAD = [
    ("EXPAND_DIMS", [In([2, 3]), np.array(3, np.int32)], [([2, 3, 1], F32)], None, 1, None, False),
    ("EXPAND_DIMS", [In([2, 3]), np.array(-4, np.int32)], [([1, 2, 3], F32)], None, 1, None, False),
    ("EXPAND_DIMS", [In([2, 3]), In([], I32, value=np.array(5, np.int32))], [([2, 3, 1], F32)], None, 1, None, True),
    ("SQUEEZE", [In([2, 1])], [([2], F32)], dict(squeeze_dims=[0]), 1, None, False),
    ("SQUEEZE", [In([2, 1])], [([2], F32)], dict(squeeze_dims=[2]), 1, None, False),
    ("FILL", [np.array([2, -1], np.int32), In([])], [([2, 1], F32)], None, 1, None, False),
    ("FILL", [In([2], I32, value=np.array([3, -2], np.int32)), In([])], [([3, 2], F32)], None, 1, None, True),
    ("RANGE", [np.array(0, np.int32), np.array(5, np.int32), np.array(0, np.int32)], [([5], I32)], None, 1, None, False),
    ("RANGE", [np.array(5, np.int32), np.array(0, np.int32), np.array(1, np.int32)], [([5], I32)], None, 1, None, False),
    ("RANGE", [In([], I32, value=np.array(0, np.int32)), np.array(4, np.int32), np.array(-1, np.int32)],
     [([4], I32)], None, 1, None, True),
    ("RANGE", [np.array(0, np.int32), np.array(5.0, np.float32), np.array(1, np.int32)], [([5], I32)], None, 1, None,
     False),
    ("TILE", [In([2, 3]), np.array([2], np.int32)], [([4, 3], F32)], None, 1, None, False),
    ("BROADCAST_TO", [In([2, 3]), np.array([4, 3], np.int32)], [([4, 3], F32)], None, 2, None, False),
    ("BROADCAST_TO", [In([2, 3]), np.array([3], np.int32)], [([3], F32)], None, 2, None, False),
    ("REVERSE_V2", [In([2, 3]), np.array([2], np.int32)], [([2, 3], F32)], None, 1, None, False),
    ("SPLIT_V", [In([2, 5]), np.array([2, 2], np.int32), np.array(1, np.int32)], [([2, 2], F32), ([2, 2], F32)],
     dict(num_splits=2), 1, None, False),
    ("SPLIT_V", [In([2, 5]), np.array([-1, -1], np.int32), np.array(1, np.int32)], [([2, 2], F32), ([2, 3], F32)],
     dict(num_splits=2), 1, None, False),
    ("SPLIT_V", [In([2, 5]), np.array([2, 3], np.int32), np.array(2, np.int32)], [([2, 2], F32), ([2, 3], F32)],
     dict(num_splits=2), 1, None, False),
    ("SPACE_TO_BATCH_ND", [In([1, 5, 4, 1]), np.array([2, 2], np.int32), np.array([[0, 0], [0, 0]], np.int32)],
     [([4, 2, 2, 1], F32)], None, 1, None, False),
    ("BATCH_TO_SPACE_ND", [In([3, 2, 2, 1]), np.array([2, 2], np.int32), np.array([[0, 0], [0, 0]], np.int32)],
     [([1, 4, 4, 1], F32)], None, 1, None, False),
    ("GATHER_ND", [In([3, 4]), In([2, 2], I32, value=np.array([[0, 4], [1, 1]], np.int32))], [([2], F32)], None, 1,
     None, True),
    ("GATHER_ND", [In([3, 4]), np.array([[0, 1, 2]], np.int32)], [([1], F32)], None, 1, None, False),
    ("SCATTER_ND", [In([2, 1], I32, value=np.array([[0], [3]], np.int32)), In([2]), np.array([3], np.int32)],
     [([3], F32)], None, 1, None, True),
    ("SCATTER_ND", [np.array([[0], [1]], np.int32), In([3]), np.array([3], np.int32)], [([3], F32)], None, 1, None,
     False),
    ("EMBEDDING_LOOKUP", [In([2], I32, value=np.array([0, 3], np.int32)), In([3, 2])], [([2, 2], F32)], None, 1,
     None, True),
    ("ONE_HOT", [np.array([0, 1], np.int32), np.array(3, np.int32), In([]), In([])], [([2, 3], F32)],
     dict(axis=3), 1, None, False),
    ("DYNAMIC_UPDATE_SLICE", [In([2, 3]), In([3, 1]), np.array([0, 0], np.int32)], [([2, 3], F32)], None, 1, None,
     False),
    ("SPARSE_TO_DENSE", [In([2, 2], I32, value=np.array([[0, 0], [3, 1]], np.int32)), np.array([3, 2], np.int32),
                         In([2]), In([])], [([3, 2], F32)], dict(validate_indices=True), 1, None, True),
    ("SEGMENT_SUM", [In([3, 2]), In([3], I32, value=np.array([0, 2, 2], np.int32))], [([3, 2], F32)], None, 1, None,
     True),
    ("UNSORTED_SEGMENT_SUM", [In([3]), In([3], I32, value=np.array([0, 3, 1], np.int32)), np.array(3, np.int32)],
     [([3], F32)], None, 1, None, True),
    ("TOPK_V2", [In([2, 3]), np.array(4, np.int32)], [([2, 4], F32), ([2, 4], I32)], None, 1, None, False),
]


# Bad cases that abort LiteRT 2.3's process (so only ours is run): incompatible BROADCAST_ARGS
# shapes (numpy's broadcasting rule makes them an error).
CRASH_LITERT = [
    ("BROADCAST_ARGS", [In([2], I32, value=np.array([2, 3], np.int32)), In([1], I32, value=np.array([4], np.int32))],
     [([2], I32)], None, 1, None, True),
]


@pytest.mark.parametrize("case", CRASH_LITERT, ids=[f"{c[0]}-{i}" for i, c in enumerate(CRASH_LITERT)])
def test_bad_case_that_aborts_litert(case):
    op, ins, outs, options, version, _, at_invoke = case
    values = [x.value for x in ins if isinstance(x, In)]
    assert_refused(build(op, ins, outs, options, version), values, match=op, at_invoke=at_invoke)


@pytest.mark.parametrize("case", BAD, ids=[f"{c[0]}-{i}" for i, c in enumerate(BAD)])
def test_bad_case_fails_like_litert(case):
    op, ins, outs, options, version, _, at_invoke = case
    model = build(op, ins, outs, options, version)
    rng = np.random.default_rng(0)
    values = [x.value if x.value is not None else rng.standard_normal(x.shape).astype(x.dt)
              for x in ins if isinstance(x, In)]
    assert litert_refuses(model, values), "LiteRT accepts this case; it does not belong in this list"
    assert_refused(model, values, match=op, at_invoke=at_invoke)
