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


# BITCAST (byte reinterpretation; exact vs LiteRT builtin): same size, wider -> narrower (new
# trailing dim) and narrower -> wider (last dim consumed).
def _bc_inputs(shape, dt):
    def make(rng):
        raw = rng.integers(0, 256, int(np.prod(shape)) * np.dtype(dt).itemsize, dtype=np.uint8)
        x = raw.view(dt).reshape(shape)
        if np.dtype(dt).kind == "f":
            x = np.where(np.isfinite(x), x, 0).astype(dt)
        return [x]
    return make


for _name, _shape, _din, _dout, _oshape in [
        ("f32_to_i32", (3, 5), np.float32, np.int32, (3, 5)),
        ("f32_to_u8", (2, 3), np.float32, np.uint8, (2, 3, 4)),
        ("u8_to_f32", (6, 4), np.uint8, np.float32, (6,)),
        ("i16_to_i8", (7,), np.int16, np.int8, (7, 2)),
        ("i64_to_u32", (2, 2), np.int64, np.uint32, (2, 2, 2)),
        ("u16_to_i64", (3, 4), np.uint16, np.int64, (3,))]:
    CASES.append(OpCase("BITCAST", _name,
                        (lambda s=_shape, a=_din, b=_dout, o=_oshape: single_op_model("BITCAST", [(s, a)], [(o, b)])),
                        _bc_inputs(_shape, _din), gpu=False))
