"""Signal family: RFFT2D, COMPLEX_ABS, REAL, IMAG (oracle: LiteRT BUILTIN_WITHOUT_DEFAULT_DELEGATES).

RFFT2D is computed in double by both engines and rounded once to complex64; the cases compare the
(re, im) pairs by rel-L2 (tolerance 1e-6: float rounding of the outputs only). Cropping and
zero-padding to fft_length, batch dims, a dynamic fft_length and a spectrogram-like chain
(RFFT2D -> COMPLEX_ABS) are covered. The complex accessors are exact.
"""
import numpy as np

from harness import OpCase, normal_inputs
from tflite_gpu.testing.builder import ModelBuilder, single_op_model

F32, F64, I32, C64, C128 = np.float32, np.float64, np.int32, np.complex64, np.complex128


def rfft_model(shape, fft, dynamic=False, then_abs=False):
    mb = ModelBuilder()
    x = mb.add_input(list(shape), F32, name="x")
    ln = mb.add_input([2], I32, name="fft_length") if dynamic else mb.add_const(np.array(fft, I32), name="fft_length")
    oshape = list(shape[:-2]) + [fft[0], fft[1] // 2 + 1]
    y = mb.add_tensor(oshape, C64, name="spectrum")
    mb.add_op("RFFT2D", [x, ln], [y])
    if then_abs:
        a = mb.add_tensor(oshape, F32, name="magnitude")
        mb.add_op("COMPLEX_ABS", [y], [a])
        y = a
    mb.mark_output(y)
    return mb.build()


_RFFT = [  # name, input shape, fft_length
    ("4x8", (4, 8), (4, 8)),
    ("batch_pad_to_8x8", (2, 3, 5, 6), (8, 8)),
    ("crop_16x16_to_8x4", (1, 16, 16), (8, 4)),
    ("pad_6x10_to_16x16", (6, 10), (16, 16)),
    ("tall_32x2", (3, 32, 2), (32, 2)),
    ("1x64", (2, 1, 64), (1, 64)),
]

CASES = []
for _n, _s, _f in _RFFT:
    CASES.append(OpCase("RFFT2D", _n, (lambda s=_s, f=_f: rfft_model(s, f)), normal_inputs(_s), tol=1e-6, gpu=False))
CASES.append(OpCase("RFFT2D", "dynamic_fft_length", lambda: rfft_model((2, 8, 8), (1, 1), dynamic=True),
                    normal_inputs((2, 8, 8), extra=(np.array([4, 16], I32),)), tol=1e-6, gpu=False))
CASES.append(OpCase("RFFT2D", "then_complex_abs", lambda: rfft_model((2, 16, 12), (16, 16), then_abs=True),
                    normal_inputs((2, 16, 12)), tol=1e-6, gpu=False))


def complex_inputs(shape, dt):
    def make(rng):
        z = rng.normal(0.0, 2.0, shape) + 1j * rng.normal(0.0, 2.0, shape)
        return [z.astype(dt)]
    return make


for _op in ("COMPLEX_ABS", "REAL", "IMAG"):
    for _name, _shape, _dt, _odt in [("c64_3d", (2, 3, 5), C64, F32), ("c64_scalar", (), C64, F32),
                                      ("c64_empty", (0, 4), C64, F32), ("c128", (7, 2), C128, F64)]:
        CASES.append(OpCase(_op, _name,
                            (lambda op=_op, s=_shape, dt=_dt, odt=_odt: single_op_model(op, [(s, dt)], [(s, odt)])),
                            complex_inputs(_shape, _dt), tol=0.0 if _op != "COMPLEX_ABS" else 1e-7, gpu=False))
