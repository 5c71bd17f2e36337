"""BITWISE_XOR and RIGHT_SHIFT against LiteRT BUILTIN_WITHOUT_DEFAULT_DELEGATES (exact): every
integer type LiteRT registers, broadcasting, shift amounts that are negative or reach the bit
width (clamped as TFLite does), negative values (arithmetic shift)."""
import numpy as np

from harness import OpCase
from tflite_gpu.testing.builder import single_op_model


def bit_inputs(dt, sa, sb, shift):
    def make(rng):
        info = np.iinfo(dt)
        a = rng.integers(info.min, int(info.max) + 1, sa, dtype=np.int64).astype(dt)
        if shift:
            bits = np.dtype(dt).itemsize * 8
            lo = -3 if info.min < 0 else 0
            b = rng.integers(lo, bits + 4, sb, dtype=np.int64).astype(dt)
        else:
            b = rng.integers(info.min, int(info.max) + 1, sb, dtype=np.int64).astype(dt)
        return [a, b]
    return make


def _out(sa, sb):
    return tuple(np.broadcast_shapes(sa, sb))


CASES = []
for _op, _shift in (("BITWISE_XOR", False), ("RIGHT_SHIFT", True)):
    for _dt in (np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32):
        for _name, _sa, _sb in (("same", (3, 17), (3, 17)), ("bcast", (2, 1, 5), (4, 1))):
            _n = f"{np.dtype(_dt).name}_{_name}"
            CASES.append(OpCase(_op, _n,
                                (lambda op=_op, dt=_dt, sa=_sa, sb=_sb: single_op_model(
                                    op, [(sa, dt), (sb, dt)], [(_out(sa, sb), dt)])),
                                bit_inputs(_dt, _sa, _sb, _shift), gpu=False))
