"""The GPU delegate on quantized single-op models: every quantized case of the op harness
(tests/op_cases, OpCase.quant set) through the delegate against LiteRT's builtin kernels
(OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES, the cases' oracle), on PoCL in CI.

The delegate runs TFLite's "floating-point view" of a quantized model (constants dequantized
once, partition inputs dequantized and outputs quantized on the device, every quantized output
snapped to its grid after its op), so it reproduces the integer kernels up to rounding ties:
bound 1 quantization step on integer outputs (measured: 0 on most cases, 1 on the tie-heavy
conv/FC cases), rel-L2 1e-6 on float outputs (DEQUANTIZE) in F32. In fp16 storage (F32_F16)
a real value keeps 11 significant bits, which for int8/uint8 grids (<= 256 levels) is well under
half a step, so the same 1-step bound holds; int16 grids need F32 and are refused there with that
reason (checked: refused, and the CPU result is unchanged).

CI runs a sample (the first case of each op and kind, plus the int8 rounding-tie cases, in F32;
the first int8 case of each GPU op and one int16 refusal in F32_F16); TFLITE_GPU_TEST_FULL=1 runs every case.
"""
import os
import zlib

import numpy as np
import pytest

import tflite_gpu
from gpu_util import delegate, require_gpu
from harness import all_cases, oracle_outputs, rel_l2

QCASES = [c for c in all_cases() if c.quant in ("int8", "uint8", "int16x8")]
# Ops the GPU runs at all (their float cases go through the delegate, and QUANTIZE/DEQUANTIZE, whose
# cases are all quantized); the others (e.g. ARG_MAX, whose integer indices the float GPU tensors
# cannot hold) stay on the CPU quantized or not.
GPU_OPS = {c.op for c in all_cases() if c.gpu} | {"QUANTIZE", "DEQUANTIZE"}
# What the GPU refuses of quantized graphs, each with its reason: per-channel quantized activations
# (as TFLite's GPU delegate), integer tensors without quantization parameters or of types it does
# not hold (int32 activations), zero points outside the type's range (legal for LiteRT's QUANTIZE
# kernel, not a grid the float view can snap to).
GPU_QUANT_LIMITS = ("non-constant per-channel quantized tensor", "without quantization parameters",
                    "takes FLOAT32 or quantized tensors", "zero point outside its type's range")
# Where the float view and TFLite's CPU integer conversion part ways by design (TFLite's own GPU
# delegate quantizes the same way): inputs beyond the int32 range (inf, 1e10: the CPU's
# float -> int32 conversion overflows to INT_MIN on x86, the GPU saturates to the nearer end), and
# exact .5 ties in QUANTIZE's scalar tail (the CPU rounds those half away from zero; its vector
# body and the GPU round half to even). These cases are checked against numpy applying the GPU's
# documented rule, q = clamp(rint(x * (1 / scale)) + zero_point) in float32, NaN -> the type's
# minimum (OpenCL clamp = fmin(fmax(x, lo), hi)).
# int16 ops whose TFLite kernels are table approximations (checked against the exact function).
TABLE_APPROX = {"LOGISTIC", "TANH", "SOFTMAX", "EXP"}
GPU_RULE_CASES = {"QUANTIZE-specials", "QUANTIZE-specials_negzp", "QUANTIZE-large_values"}


def gpu_quantize_rule(x, model):
    from ai_edge_litert.interpreter import Interpreter
    out = Interpreter(model_content=model).get_output_details()[0]
    scale, zp = out["quantization"]
    info = np.iinfo(out["dtype"])
    v = np.rint(x.astype(np.float32) * np.float32(1.0 / np.float32(scale))) + np.float32(zp)
    v = np.where(np.isnan(v), info.min, v)
    return np.clip(v, info.min, info.max).astype(out["dtype"])


def _sample(cases, keep):
    if os.environ.get("TFLITE_GPU_TEST_FULL"):
        return list(cases)
    seen, out = set(), []
    for c in cases:
        key = (c.op, c.quant)
        if key not in seen or keep(c):
            out.append(c)
        seen.add(key)
    return out


F32 = _sample(QCASES, keep=lambda c: "ties" in c.name and c.quant == "int8" and c.op in GPU_OPS)
FP16 = _sample([c for c in QCASES if c.quant == "int8" and c.op in GPU_OPS], keep=lambda c: False) + \
    _sample([c for c in QCASES if c.quant == "int16x8" and c.op in GPU_OPS], keep=lambda c: False)[:1]
PARAMS = [pytest.param(c, "F32", id=f"F32-{c.id}") for c in F32] + \
         [pytest.param(c, "F32_F16", id=f"F32_F16-{c.id}") for c in FP16]


def test_quantized_cases_exist_for_the_gpu_sample():
    assert {(c.op, c.quant) for c in F32} == {(c.op, c.quant) for c in QCASES}


def _run(model, inputs, delegates):
    it = tflite_gpu.Interpreter(model_content=model, experimental_delegates=delegates, num_threads=1)
    for det, x in zip(it.get_input_details(), inputs):
        if list(det["shape"]) != list(x.shape):
            it.resize_tensor_input(det["index"], list(x.shape))
    it.allocate_tensors()
    for det, x in zip(it.get_input_details(), inputs):
        it.set_tensor(det["index"], x)
    it.invoke()
    return it, [it.get_tensor(det["index"]) for det in it.get_output_details()]


def _structural(it):
    for t in it.get_tensor_details():
        shape = list(t["shape"])
        if len(shape) > 4 or (shape and min(shape) == 0):
            return True
    return False


@pytest.mark.parametrize("case,precision", PARAMS)
def test_gpu_quantized_op_matches_litert_builtin(case, precision):
    require_gpu()
    rng = np.random.default_rng(zlib.crc32(case.id.encode()))
    inputs = list(case.inputs(rng))
    want = oracle_outputs(case, inputs)
    if case.id in GPU_RULE_CASES:
        want = [gpu_quantize_rule(inputs[0], case.model())]
    it, got = _run(case.model(), inputs, [delegate(precision)])
    rep = it.delegation_report()
    if precision != "F32" and case.quant == "int16x8":
        assert rep["delegated_nodes"] < rep["total_nodes"], rep
        assert any("F32 precision" in u[3] for u in rep["unsupported"]), rep["unsupported"]
        _, cpu = _run(case.model(), inputs, None)
        for g, c in zip(got, cpu):
            np.testing.assert_array_equal(g, c)
        return
    if _structural(it) or case.op not in GPU_OPS:
        assert rep["unsupported"] and all(u[3] for u in rep["unsupported"]), rep
    else:
        # Everything is taken except what the GPU documents it refuses (TFLite's GPU delegate
        # refuses the same): per-channel quantized activations, integers without quantization.
        # A case marked gpu=False (its note says why, e.g. the FULL LSTM's variable state) may stay
        # on the CPU with its reason.
        for u in rep["unsupported"]:
            assert any(r in u[3] for r in GPU_QUANT_LIMITS) or (not case.gpu and u[3]), f"{case.id}: refused {u}"
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape and g.dtype == w.dtype, (i, g.shape, w.shape, g.dtype, w.dtype)
        if np.issubdtype(w.dtype, np.floating):
            e = rel_l2(g, w)
            assert e <= (1e-6 if precision == "F32" else 5e-3), f"{case.id} output {i}: rel-L2 {e:.3g}"
        elif (g.size and case.quant == "int16x8" and case.op in TABLE_APPROX and case.ref_fn is not None
              and rep["delegated_nodes"] == rep["total_nodes"]):
            # TFLite's int16 LOGISTIC / TANH / SOFTMAX / EXP approximate the function with tables
            # (sigmoid table interpolation; exp and 1 / (1 + x) tables); the float view evaluates it. The
            # oracle is the exact function (numpy, the case's ref_fn): the GPU is <= 1 step from it.
            # (Its distance from LiteRT is then at most LiteRT's own error + 1: that follows, so it
            # is reported, not asserted a second time.)
            exact = case.ref_fn(*inputs)[i].astype(np.int64)
            d_exact = int(np.abs(g.astype(np.int64) - exact).max())
            litert_err = int(np.abs(w.astype(np.int64) - exact).max())
            d = int(np.abs(g.astype(np.int64) - w.astype(np.int64)).max())
            assert d_exact <= 1, (f"{case.id} output {i}: {d_exact} steps from the exact function "
                                  f"({d} from LiteRT builtin, whose own error is {litert_err})")
        elif g.size:
            d = int(np.abs(g.astype(np.int64) - w.astype(np.int64)).max())
            assert d <= 1, f"{case.id} output {i}: {d} steps from LiteRT builtin"


def test_enable_quantization_off_refuses_quantized_nodes_with_the_reason():
    require_gpu()
    case = next(c for c in QCASES if c.op == "CONV_2D" and c.quant == "int8")
    rng = np.random.default_rng(1)
    inputs = list(case.inputs(rng))
    it, got = _run(case.model(), inputs, [delegate(enable_quantization=False)])
    rep = it.delegation_report()
    assert rep["delegated_nodes"] == 0
    assert [u[1] for u in rep["unsupported"]] == ["CONV_2D"]
    assert "ENABLE_QUANT" in rep["unsupported"][0][3] and "quantized" in rep["unsupported"][0][3]
    _, cpu = _run(case.model(), inputs, None)
    np.testing.assert_array_equal(got[0], cpu[0])
