"""Every op case the GPU delegate takes, through the delegate (fp32 and fp16 storage) against
our plain reference CPU kernels on the same single-op models. Runs on PoCL in CI.

Tolerances: F32 rel-L2 <= 1e-5. F32_F16 / F16 store tensors and weights in half (11-bit
mantissa, relative rounding 2^-11 ~ 4.9e-4 per stored value) and compute in float; a value that
passes through k roundings has rel error ~ sqrt(k) * 2.8e-4, so 5e-3 holds for single ops with
headroom; a case may state its own gpu_tol with a reason, or give fp16_ref, a numpy emulation of
fp16 storage on its graph (fp16_emulation.py): the bound per output is then 2 x the emulation's
rel-L2 + 1e-5, what fp16 storage must cost there rather than a number picked to pass.
"""
import os
import zlib

import numpy as np
import pytest

from gpu_util import delegate, require_gpu
from fp16_emulation import emulation_bound
from harness import all_cases, assert_close, run_tflite_gpu

CASES = [c for c in all_cases() if c.gpu]


def _sample(cases, per_op, keep=lambda c: False):
    """Every op's first `per_op` cases (plus those `keep` selects). CI runs this sample, which covers
    every GPU op in both precisions, because PoCL compiles each program with LLVM and a cold cache
    makes the whole sweep take over 30 minutes on 2 cores; TFLITE_GPU_TEST_FULL=1 runs all cases
    (about 4 minutes once PoCL's kernel cache is warm)."""
    if os.environ.get("TFLITE_GPU_TEST_FULL"):
        return list(cases)
    seen, out = {}, []
    for c in cases:
        seen[c.op] = seen.get(c.op, 0) + 1
        if seen[c.op] <= per_op or keep(c):
            out.append(c)
    return out


F32_CASES = _sample(CASES, 10)
FP16_CASES = _sample(CASES, 3, keep=lambda c: c.gpu_tol is not None or c.fp16_ref is not None)
PARAMS = [pytest.param(c, "F32", id=f"F32-{c.id}") for c in F32_CASES] + \
         [pytest.param(c, "F32_F16", id=f"F32_F16-{c.id}") for c in FP16_CASES]


def test_samples_cover_every_gpu_op_in_both_precisions():
    ops = {c.op for c in CASES}
    assert {c.op for c in F32_CASES} == ops and {c.op for c in FP16_CASES} == ops


def _structurally_refused(it):
    """Nodes the partitioner must refuse whatever the op: a tensor of rank > 4 or with no elements."""
    for t in it.get_tensor_details():
        shape = list(t["shape"])
        if len(shape) > 4 or (shape and min(shape) == 0):
            return True
    return False


@pytest.mark.parametrize("case,precision", PARAMS)
def test_gpu_op_matches_reference(case, precision):
    require_gpu()
    if precision != "F32" and not case.gpu_fp16:
        pytest.skip(f"{case.id}: values outside fp16 storage range ({case.note})")
    rng = np.random.default_rng(zlib.crc32(case.id.encode()))
    inputs = list(case.inputs(rng))
    want = run_tflite_gpu(case.model(), inputs, reference=True)
    import tflite_gpu
    d = delegate(precision)
    it = tflite_gpu.Interpreter(model_content=case.model(), experimental_delegates=[d], num_threads=1)
    for det, x in zip(it.get_input_details(), inputs):
        if list(det["shape"]) != list(x.shape):
            it.resize_tensor_input(det["index"], list(x.shape))
    it.allocate_tensors()
    report = it.delegation_report()
    if _structurally_refused(it):
        # Refused with a reason, and the CPU fallback gives the reference result.
        assert report["delegated_nodes"] < report["total_nodes"] and report["unsupported"], report
        assert all(u[3] for u in report["unsupported"])
    else:
        assert report["delegated_nodes"] == report["total_nodes"], \
            f"{case.id}: the delegate refused nodes: {report['unsupported']}"
    for det, x in zip(it.get_input_details(), inputs):
        it.set_tensor(det["index"], x)
    it.invoke()
    got = [it.get_tensor(det["index"]) for det in it.get_output_details()]
    tol = 1e-5 if precision == "F32" else (case.gpu_tol or 5e-3)
    if precision != "F32":
        # fp16 storage saturates: magnitudes above 65504 are stored as inf of the same sign, unless
        # the mixed-storage plan (gpu/precision_plan.h) kept that tensor in float: where the
        # delegate returned inf, the want is inf; elsewhere the exact value.
        want = [np.where((np.abs(w) > 65504) & ~np.isfinite(g), np.copysign(np.inf, w), w).astype(w.dtype)
                if np.issubdtype(w.dtype, np.floating) and np.shape(g) == np.shape(w) else w
                for g, w in zip(got, want)]
    if precision != "F32" and case.fp16_ref is not None:
        emul = case.fp16_ref(*inputs)
        assert len(emul) == len(want), f"{case.id}: fp16_ref gives {len(emul)} outputs"
        for i, (g, w, e) in enumerate(zip(got, want, emul)):
            b = emulation_bound(e, w)
            print(f"{case.id} output {i}: fp16 emulation bound {b:.3g}")
            assert_close([g], [w], b, f"{case.id} [GPU {precision}, output {i}, 2 x fp16 emulation + 1e-5]")
        return
    assert_close(got, want, tol, f"{case.id} [GPU {precision}]")
