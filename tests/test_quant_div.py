"""Quantized DIV where LiteRT's builtin kernel is undefined, and its divide-by-zero error.

TFLite's quantized DIV (reference_ops::Div, run by both the builtin and the reference registration)
ends with RoundingDivideByPOT(x, e), e = rs + h - shift (rs: the divisor's reciprocal shift, h: the
dividend's leading sign bits, shift: the output multiplier's exponent). For quotients far below one
output step e exceeds 31, which is undefined in C++; LiteRT's x86 build then shifts by e mod 32
and returns values unrelated to the quotient. Ours rounds as the arithmetic says (to the zero
point). Here: every int8 pair with a small multiplier (s1 / (s2 * s_out) = 10); ours equals LiteRT
builtin wherever e <= 31 and is within one step of the exact quotient (numpy, float64) everywhere.
"""
import numpy as np
import pytest

from harness import assert_refused, litert_refuses, run_litert, run_tflite_gpu
from tflite_gpu.testing import quant as Q


def _model(dt, q1, q2, qo, shape):
    return Q.single_op_model_q("DIV", [(shape, dt, q1), (shape, dt, q2)], [(shape, dt, qo)],
                               options=dict(fused_activation_function="NONE"), version=2)


def _clrsb(a):
    """Leading redundant sign bits of int32 values (31 for 0)."""
    a = a.astype(np.int64)
    m = np.where(a < 0, ~a, a)
    bits = np.where(m > 0, np.floor(np.log2(np.maximum(m, 1))).astype(np.int64) + 1, 0)
    return 31 - bits


@pytest.mark.parametrize("kernels", ["fast", "reference"])
def test_div_int8_small_quotients(kernels):
    s1, s2, so, zp1, zp2, zpo = 0.1, 0.1, 0.1, 5, -3, 2
    q1, q2, qo = Q.QParams(s1, zp1), Q.QParams(s2, zp2), Q.QParams(so, zpo)
    v = np.arange(-128, 128)
    d = v[v != zp2]
    a = np.tile(v, (255, 1)).astype(np.int8)
    b = np.repeat(d[:, None], 256, axis=1).astype(np.int8)
    model = _model(np.int8, q1, q2, qo, [255, 256])
    ours = run_tflite_gpu(model, [a, b], reference=(kernels == "reference"))[0].astype(np.int64)
    lite = run_litert(model, [a, b])[0].astype(np.int64)
    # Exact quotient in the output grid.
    num = (a.astype(np.int64) - zp1) * np.float64(np.float32(s1))
    den = (b.astype(np.int64) - zp2) * np.float64(np.float32(s2))
    exact = np.clip(num / den / np.float64(np.float32(so)) + zpo, -128, 127)
    assert np.abs(ours - exact).max() <= 1.0, "more than one step from the exact quotient"
    # TFLite's rounding-shift count, per element (divisor sign moved to the dividend).
    x, y = a.astype(np.int64) - zp1, b.astype(np.int64) - zp2
    x = np.where(y < 0, -x, x)
    rs = np.floor(np.log2(np.abs(y))).astype(np.int64)
    shift = np.frexp(np.float32(s1) / (np.float32(s2) * np.float32(so)))[1]
    e = rs + _clrsb(x) - shift
    defined = e <= 31
    assert defined.sum() > 60000 and (~defined).sum() > 500
    np.testing.assert_array_equal(ours[defined], lite[defined])
    # Where LiteRT's shift is undefined the quotient is below half a step: ours is the zero point.
    assert np.all(ours[~defined] == zpo)
    assert np.any(lite[~defined] != zpo), "LiteRT no longer differs here: make these cases exact"


@pytest.mark.parametrize("dt,zp", [(np.int8, -7), (np.uint8, 128), (np.int16, 0)])
def test_div_by_zero_point_is_an_error_at_invoke(dt, zp):
    q = Q.QParams(0.05, zp)
    model = _model(dt, q, q, Q.QParams(0.05, zp), [2, 3])
    b = np.full([2, 3], zp + 1, dt)
    b[1, 2] = zp
    inputs = [np.zeros([2, 3], dt), b]
    assert litert_refuses(model, inputs)
    assert_refused(model, inputs, at_invoke=True, words=["DIV", "division by zero", "element 5"])
