"""FAKE_QUANT (float32) against LiteRT BUILTIN_WITHOUT_DEFAULT_DELEGATES: ranges that contain zero,
ranges whose zero point nudges (min not on the grid), 2..16 bits, values outside the range (clamped)
and exact grid midpoints (round half away from zero)."""
import numpy as np

from harness import OpCase
from tflite_gpu.testing.builder import single_op_model

F32 = np.float32


def fq_model(shape, mn, mx, bits):
    return single_op_model("FAKE_QUANT", [(shape, F32)], [(shape, F32)],
                           options=dict(min=mn, max=mx, num_bits=bits, narrow_range=False), version=1)


def fq_inputs(shape, mn, mx, bits, midpoints=False):
    def make(rng):
        x = rng.uniform(mn - 0.5 * (mx - mn), mx + 0.5 * (mx - mn), shape)
        if midpoints:  # exact halfway points of the (un-nudged) grid
            step = (mx - mn) / ((1 << bits) - 1)
            k = rng.integers(0, (1 << bits) - 1, shape)
            x = mn + (k + 0.5) * step
        return [x.astype(F32)]
    return make


_FQ = [  # name, shape, min, max, bits, midpoints
    ("8bit_sym", (2, 3, 17), -6.0, 6.0, 8, False),
    ("8bit_nudged_zero", (64,), -0.37, 2.9, 8, False),
    ("4bit_midpoints", (5, 7), -1.0, 3.0, 4, True),
    ("2bit", (33,), -0.5, 1.5, 2, False),
    ("16bit", (4, 9), -10.0, 5.0, 16, False),
    ("positive_min_nudged_to_0", (20,), 0.2, 4.0, 8, False),
]
CASES = [OpCase("FAKE_QUANT", _n, (lambda s=_s, a=_a, b=_b, n=_bits: fq_model(s, a, b, n)),
                fq_inputs(_s, _a, _b, _bits, _m), gpu=False)
         for _n, _s, _a, _b, _bits, _m in _FQ]
