"""Every op of the table against TensorFlow Lite, through our fast and our reference kernels."""
import zlib

import numpy as np
import pytest

import tflite_gpu
from harness import all_cases, assert_close, oracle_outputs, run_tflite_gpu

CASES = all_cases()


def test_every_op_in_the_table_has_cases():
    covered = {c.op for c in CASES}
    missing = [op["name"] for op in tflite_gpu.supported_ops() if op["name"] not in covered]
    assert not missing, f"ops in the table without test cases: {missing}"


def test_case_ids_are_unique():
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
@pytest.mark.parametrize("kernels", ["fast", "reference"])
def test_op_matches_oracle(case, kernels):
    rng = np.random.default_rng(zlib.crc32(case.id.encode()))
    inputs = list(case.inputs(rng))
    want = oracle_outputs(case, inputs)
    got = run_tflite_gpu(case.model(), inputs, reference=(kernels == "reference"))
    assert_close(got, want, case.tol, f"{case.id} [{kernels}]")
