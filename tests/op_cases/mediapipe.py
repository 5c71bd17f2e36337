"""MediaPipe custom ops MaxPoolingWithArgmax2D and MaxUnpooling2D (semantics from MediaPipe's
public mediapipe/util/tflite/operations/max_pool_argmax.cc and max_unpooling.cc). LiteRT cannot
run them, so the oracle is an independent numpy/loop computation written from those definitions.
Options: a TfLitePoolParams struct (padding 1=SAME 2=VALID, stride_w, stride_h, filter_w,
filter_h, activation, 4 computed-padding ints) as custom_options.
"""
import struct

import numpy as np

from harness import OpCase
from tflite_gpu.testing.builder import ModelBuilder

F32 = np.float32


def pool_params(padding="SAME", stride=(2, 2), filt=(2, 2), act=0):
    pad = {"SAME": 1, "VALID": 2}[padding]
    return struct.pack("<10i", pad, stride[1], stride[0], filt[1], filt[0], act, 0, 0, 0, 0)


def _out(padding, n, f, s):
    return (n + s - 1) // s if padding == "SAME" else (n - f + s) // s


def _pad(stride, n_in, f, n_out):
    return max(0, ((n_out - 1) * stride + f - n_in) // 2)


def argmax_ref(x, padding, stride, filt, act):
    n, h, w, c = x.shape
    sh, sw = stride
    fh, fw = filt
    oh, ow = _out(padding, h, fh, sh), _out(padding, w, fw, sw)
    ph, pw = _pad(sh, h, fh, oh), _pad(sw, w, fw, ow)
    y = np.zeros((n, oh, ow, c), F32)
    idx = np.zeros((n, oh, ow, c), F32)
    lo, hi = {0: (-np.inf, np.inf), 1: (0, np.inf), 2: (-1, 1), 3: (0, 6)}[act]
    for b in range(n):
        for oy in range(oh):
            for ox in range(ow):
                y0, x0 = oy * sh - ph, ox * sw - pw
                for ch in range(c):
                    best, by, bx = np.finfo(F32).min, 0, 0
                    for fy in range(max(0, -y0), min(fh, h - y0)):
                        for fx in range(max(0, -x0), min(fw, w - x0)):
                            v = x[b, y0 + fy, x0 + fx, ch]
                            if v > best:
                                best, by, bx = v, fy, fx
                    y[b, oy, ox, ch] = min(max(best, lo), hi)
                    idx[b, oy, ox, ch] = np.float32(by * fw + bx) + np.float32(0.1)
    return [y, idx]


def unpool_ref(x, ind, stride, filt):
    n, h, w, c = x.shape
    sh, sw = stride
    fh, fw = filt
    oh, ow = h * fh, w * fw
    ph, pw = _pad(sh, oh, fh, h), _pad(sw, ow, fw, w)
    y = np.zeros((n, oh, ow, c), F32)
    for b in range(n):
        for iy in range(h):
            for ix in range(w):
                for ch in range(c):
                    k = int(ind[b, iy, ix, ch])  # truncation toward zero, as C++
                    my, mx = int(k / fw), k - int(k / fw) * fw
                    oy, ox = iy * sh - ph + my, ix * sw - pw + mx
                    if 0 <= oy < oh and 0 <= ox < ow:
                        y[b, oy, ox, ch] = x[b, iy, ix, ch]
    return [y]


def argmax_model(shape, padding="SAME", stride=(2, 2), filt=(2, 2), act=0):
    n, h, w, c = shape
    oh, ow = _out(padding, h, filt[0], stride[0]), _out(padding, w, filt[1], stride[1])
    mb = ModelBuilder()
    x = mb.add_input(list(shape), name="x")
    y = mb.add_tensor([n, oh, ow, c], name="y")
    i = mb.add_tensor([n, oh, ow, c], name="indices")
    mb.add_op(("CUSTOM", "MaxPoolingWithArgmax2D"), [x], [y, i],
              custom_options=pool_params(padding, stride, filt, act))
    mb.mark_output(y)
    mb.mark_output(i)
    return mb.build()


def unpool_model(shape, stride=(2, 2), filt=(2, 2)):
    n, h, w, c = shape
    mb = ModelBuilder()
    x = mb.add_input(list(shape), name="x")
    i = mb.add_input(list(shape), name="indices")
    y = mb.add_tensor([n, h * filt[0], w * filt[1], c], name="y")
    mb.add_op(("CUSTOM", "MaxUnpooling2D"), [x, i], [y], custom_options=pool_params("SAME", stride, filt))
    mb.mark_output(y)
    return mb.build()


_ARGMAX = [
    ("same_2x2_s2", (1, 6, 6, 3), dict()),
    ("same_3x3_s2_odd", (2, 7, 5, 4), dict(filt=(3, 3))),
    ("valid_3x2_s1", (1, 6, 7, 2), dict(padding="VALID", filt=(3, 2), stride=(1, 1))),
    ("same_2x2_s2_relu6", (1, 4, 6, 5), dict(act=3)),
    ("same_3x3_s1_relu", (1, 5, 5, 3), dict(filt=(3, 3), stride=(1, 1), act=1)),
]

CASES = []
for _name, _shape, _kw in _ARGMAX:
    _a = dict(padding="SAME", stride=(2, 2), filt=(2, 2), act=0)
    _a.update(_kw)
    CASES.append(OpCase("MaxPoolingWithArgmax2D", _name, (lambda s=_shape, a=_a: argmax_model(s, **a)),
                        (lambda rng, s=_shape: [(rng.standard_normal(s) * 3).astype(F32)]),
                        oracle="numpy", ref_fn=(lambda x, a=_a: argmax_ref(x, **a)), tol=0.0, gpu=False))


def _unpool_inputs(shape, filt, hostile=False):
    def make(rng):
        x = rng.standard_normal(shape).astype(F32)
        ind = (rng.integers(0, filt[0] * filt[1], shape) + 0.1).astype(F32)
        if hostile:  # out-of-window, negative, huge and NaN indices: skipped or written in bounds
            ind.flat[::3] = rng.integers(-9, 20, ind.size)[::3]
            ind.flat[1] = np.nan
            ind.flat[2] = 3e9
        return [x, ind]
    return make


_UNPOOL = [
    ("2x2_s2", (1, 3, 4, 2), (2, 2), (2, 2), False),
    ("3x3_s2_padded", (2, 3, 3, 3), (2, 2), (3, 3), False),
    ("2x2_s1_overlapping", (1, 4, 3, 2), (1, 1), (2, 2), False),
    ("hostile_indices", (1, 4, 4, 3), (2, 2), (2, 2), True),
]
for _name, _shape, _stride, _filt, _h in _UNPOOL:
    CASES.append(OpCase("MaxUnpooling2D", _name, (lambda s=_shape, st=_stride, f=_filt: unpool_model(s, st, f)),
                        _unpool_inputs(_shape, _filt, _h), oracle="numpy",
                        ref_fn=(lambda x, i, st=_stride, f=_filt: unpool_ref(x, np.nan_to_num(i, nan=1e10), st, f)),
                        tol=0.0, gpu=False))
