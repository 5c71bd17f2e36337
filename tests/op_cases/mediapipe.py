"""MediaPipe custom ops MaxPoolingWithArgmax2D and MaxUnpooling2D (semantics from MediaPipe's
public mediapipe/util/tflite/operations/max_pool_argmax.cc and max_unpooling.cc). LiteRT cannot
run them, so the oracle is an independent numpy/loop computation written from those definitions.
Options: a TfLitePoolParams struct (padding 1=SAME 2=VALID, stride_w, stride_h, filter_w,
filter_h, activation, 4 computed-padding ints) as custom_options.
"""
import struct

import numpy as np

from fp16_emulation import half
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
    ("ties_first_wins", (1, 6, 6, 5), dict(filt=(3, 3), stride=(1, 1))),
]


def _argmax_inputs(shape, ties):
    """Distinct values on a 1/8 grid (exact in fp16 storage, so the GPU's F32_F16 run sees the same
    order and no rounding creates ties), or for `ties` small integers (many equal maxima: the first
    in (y, x) order must win)."""
    def make(rng):
        n = int(np.prod(shape))
        if ties:
            return [rng.integers(-2, 3, shape).astype(F32)]
        return [((rng.permutation(n) - n // 2) / 8.0).reshape(shape).astype(F32)]
    return make


CASES = []
for _name, _shape, _kw in _ARGMAX:
    _a = dict(padding="SAME", stride=(2, 2), filt=(2, 2), act=0)
    _a.update(_kw)
    CASES.append(OpCase("MaxPoolingWithArgmax2D", _name, (lambda s=_shape, a=_a: argmax_model(s, **a)),
                        _argmax_inputs(_shape, _name.startswith("ties")),
                        oracle="numpy", ref_fn=(lambda x, a=_a: argmax_ref(x, **a)), tol=0.0))


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
                        tol=0.0))


# ------------------------------------------------------------------ Landmarks2TransformMatrix
# Semantics from MediaPipe's public landmarks_to_transform_matrix.cc (versions 1 and 2, one custom
# code); options a FlexBuffer map with typed int vectors (builder.flex_options). Oracle: float64
# numpy from those formulas.
from tflite_gpu.testing.builder import flex_options  # noqa: E402


def _pairs(idx):
    """MediaPipe reads subset lists in pairs; an odd count pairs the last index with itself."""
    idx = list(idx)
    return idx + [idx[-1]] if len(idx) % 2 else idx


def _rot2(a):
    return np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])


def l2tm_v1_ref(lm, input_hw, output_hw, landmarks_range, bbox_size_multiplier, left_rotation_idx,
                right_rotation_idx, subset, dimensions=3):
    p = lm.reshape(-1, 3).astype(np.float64)
    lx, ly = p[left_rotation_idx, :2]
    rx, ry = p[right_rotation_idx, :2]
    with np.errstate(divide="ignore", invalid="ignore"):
        a = -np.arctan((ry - ly) / (rx - lx))
    q = p[_pairs(subset), :2] @ _rot2(a).T
    hi = np.maximum(q.max(0), -100000.0)  # MediaPipe starts its max/min at -1e5 / 1e5
    lo = np.minimum(q.min(0), 100000.0)
    size = (hi - lo) * bbox_size_multiplier
    mid = _rot2(-a) @ ((hi + lo) / 2)
    rng_ = float(landmarks_range)
    scale = np.diag([size[0] / rng_, size[1] / rng_, 1.0])
    rot = np.eye(3)
    rot[:2, :2] = _rot2(-a)
    rot[:2, 2] = mid / rng_ * 2 - 1
    (ih, iw), (oh, ow) = input_hw, output_hw
    to_rel = np.array([[2 / (ow - 1), 0, -1], [0, 2 / (oh - 1), -1], [0, 0, 1]])
    to_abs = np.array([[(iw - 1) / 2, 0, (iw - 1) / 2], [0, (ih - 1) / 2, (ih - 1) / 2], [0, 0, 1]])
    t = to_abs @ rot @ scale @ to_rel
    out = np.array([[t[0, 0], t[0, 1], 0, t[0, 2]], [t[1, 0], t[1, 1], 0, t[1, 2]],
                    [t[2, 0], t[2, 1], t[2, 2], 0], [0, 0, 0, 1]])
    return [out.reshape(1, 4, 4).astype(F32)]


def l2tm_v2_ref(lm, subset_idxs, left_rotation_idx, right_rotation_idx, output_height, output_width,
                scale_x, scale_y, target_rotation_radians=0.0):
    p = lm.reshape(-1, 3).astype(np.float64)
    lx, ly = p[left_rotation_idx, :2]
    rx, ry = p[right_rotation_idx, :2]
    r = target_rotation_radians - np.arctan2(ry - ly, rx - lx)
    q = p[_pairs(subset_idxs), :2] @ _rot2(r).T
    hi, lo = q.max(0), q.min(0)
    w, h = hi - lo
    cx, cy = _rot2(-r) @ ((hi + lo) / 2)

    def affine(a2, t):
        m = np.eye(4)
        m[:2, :2] = a2
        m[:2, 3] = t
        return m
    m = (affine(np.eye(2), [cx, cy]) @ affine(_rot2(-r), [0, 0])
         @ affine(np.diag([scale_x * w / output_width, scale_y * h / output_height]), [0, 0])
         @ affine(np.eye(2), [-output_width / 2, -output_height / 2]))
    return [m.reshape(1, 4, 4).astype(F32)]


def l2tm_model(in_shape, opts, version, out_shape=(1, 4, 4), dtype=F32, code="Landmarks2TransformMatrix"):
    mb = ModelBuilder()
    x = mb.add_input(list(in_shape), dtype, name="landmarks")
    y = mb.add_tensor(list(out_shape), name="matrix")
    mb.add_op(("CUSTOM", code), [x], [y], version=version,
              custom_options=opts if isinstance(opts, (bytes, bytearray, type(None))) else flex_options(opts))
    mb.mark_output(y)
    return mb.build()


def _landmarks(shape, scale, tweak=None):
    def make(rng):
        x = (rng.random(shape) * scale).astype(F32)
        if tweak:
            tweak(x.reshape(-1, 3))
        return [x]
    return make


def _same_x(i, j):  # the rotation landmarks on one vertical line: atan of +-inf
    def f(p):
        p[j, 0] = p[i, 0]
    return f


def _collapse(idx):  # every subset landmark at one point: a zero-size crop (zero-scale matrix)
    def f(p):
        p[list(idx)] = p[idx[0]]
    return f


_V1 = dict(input_hw=[192, 160], output_hw=[32, 48], dimensions=3, landmarks_range=192,
           bbox_size_multiplier=1.5, left_rotation_idx=3, right_rotation_idx=7,
           subset=[0, 1, 2, 5, 9, 10, 11, 14])
_L2TM_V1 = [
    ("v1_basic", 20, {}, None),
    ("v1_odd_subset", 16, dict(subset=[4, 8, 15], bbox_size_multiplier=0.75, landmarks_range=256), None),
    ("v1_square_io", 12, dict(input_hw=[64, 64], output_hw=[16, 16], left_rotation_idx=0,
                              right_rotation_idx=11, subset=[0, 11, 5, 6]), None),
    ("v1_vertical_eye_line", 20, {}, _same_x(3, 7)),
]
for _name, _k, _kw, _tw in _L2TM_V1:
    _o = dict(_V1, **_kw)
    CASES.append(OpCase("Landmarks2TransformMatrix", _name,
                        (lambda k=_k, o=_o: l2tm_model((1, 1, 1, 3 * k), o, 1)),
                        _landmarks((1, 1, 1, 3 * _k), 192.0, _tw), oracle="numpy",
                        ref_fn=(lambda x, o=_o: l2tm_v1_ref(x, **o))))

_V2 = dict(subset_idxs=[33, 133, 263, 362, 61, 291, 10, 152, 234, 454], left_rotation_idx=33,
           right_rotation_idx=263, target_rotation_radians=0.0, output_height=64, output_width=64,
           scale_x=1.5, scale_y=1.5)
_L2TM_V2 = [
    ("v2_face_mesh_like", 478, {}, None),
    ("v2_target_rotation_odd_subset", 478, dict(target_rotation_radians=0.3, subset_idxs=[1, 5, 9, 200, 477],
                                                output_height=48, output_width=80, scale_x=1.2, scale_y=2.0), None),
    ("v2_no_target_key", 40, dict(target_rotation_radians=None, subset_idxs=[0, 39, 7, 20],
                                  left_rotation_idx=2, right_rotation_idx=30), None),
    ("v2_zero_size_crop", 40, dict(subset_idxs=[4, 5, 6, 7], left_rotation_idx=1, right_rotation_idx=2),
     _collapse([4, 5, 6, 7])),
    ("v2_vertical_eye_line", 40, dict(subset_idxs=[4, 5, 6, 7], left_rotation_idx=1, right_rotation_idx=2),
     _same_x(1, 2)),
]
for _name, _k, _kw, _tw in _L2TM_V2:
    _o = dict(_V2, **_kw)
    _r = {k: v for k, v in _o.items() if v is not None}  # None: the key is left out
    CASES.append(OpCase("Landmarks2TransformMatrix", _name,
                        (lambda k=_k, o=_r: l2tm_model((1, k, 3), o, 2)),
                        _landmarks((1, _k, 3), 1.0, _tw), oracle="numpy",
                        ref_fn=(lambda x, o=_r: l2tm_v2_ref(x, **o))))


# ------------------------------------------------------------------ TransformLandmarks
# Semantics from MediaPipe's public transform_landmarks.cc: (x, y) of each landmark through the
# upper 2x4 block of a 4x4 matrix (version 1: translation times `scale`), z copied.
def tl_ref(lm, mat, dims, scale=1.0):
    p = lm.reshape(-1, dims).astype(np.float64)
    m = mat.reshape(4, 4).astype(np.float64)
    out = p.copy()
    for r in range(2):
        out[:, r] = m[r, 0] * p[:, 0] + m[r, 1] * p[:, 1] + m[r, 3] * scale
    return [out.reshape(lm.shape).astype(F32)]


def tl_model(shape, version, opts=None, mat_shape=(1, 4, 4), dtype=F32):
    mb = ModelBuilder()
    x = mb.add_input(list(shape), dtype, name="landmarks")
    m = mb.add_input(list(mat_shape), name="matrix")
    y = mb.add_tensor(list(shape), name="out")
    raw = opts if isinstance(opts, (bytes, bytearray, type(None))) else flex_options(opts)
    mb.add_op(("CUSTOM", "TransformLandmarks"), [x, m], [y], version=version, custom_options=raw)
    mb.mark_output(y)
    return mb.build()


def _affine_matrix(rng, zero_scale=False):
    a = rng.uniform(-np.pi, np.pi)
    s = 0.0 if zero_scale else rng.uniform(0.5, 3.0)
    m = np.eye(4, dtype=F32)
    m[:2, :2] = s * np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    m[:2, 3] = rng.uniform(-50, 50, 2)
    m[2, :2] = rng.standard_normal(2)  # rows 2-3 and column 2 are not read: noise there must not matter
    m[:2, 2] = rng.standard_normal(2)
    return m.reshape(1, 4, 4)


def _tl_inputs(shape, zero_scale=False):
    def make(rng):
        return [(rng.random(shape) * 192).astype(F32), _affine_matrix(rng, zero_scale)]
    return make


_TL = [
    # name, version, landmarks shape, options (v1), dims
    ("v2_478x3", 2, (1, 478, 3), None, 3),
    ("v2_80x2", 2, (1, 80, 2), None, 2),
    ("v2_zero_scale", 2, (1, 30, 3), None, 3),
    ("v1_defaults_no_options", 1, (1, 1, 1, 60), None, 3),
    ("v1_dims2_scale", 1, (1, 2, 3, 8), dict(dimensions=2, scale=0.5), 2),
    ("v1_dims3_scale", 1, (1, 3, 1, 12), dict(dimensions=3, scale=-2.0), 3),
]
for _name, _v, _shape, _o, _d in _TL:
    _s = (_o or {}).get("scale", 1.0)
    CASES.append(OpCase("TransformLandmarks", _name,
                        (lambda sh=_shape, v=_v, o=_o: tl_model(sh, v, o)),
                        _tl_inputs(_shape, "zero_scale" in _name), oracle="numpy",
                        ref_fn=(lambda x, m, d=_d, s=_s: tl_ref(x, m, d, s))))


# ------------------------------------------------------------------ TransformTensorBilinear
# Semantics from MediaPipe's public transform_tensor_bilinear.cc: output pixel (x, y) samples the
# input at (m0 x + m1 y + m3, m4 x + m5 y + m7) bilinearly; a point outside [0, W-1] x [0, H-1]
# (or NaN) gives 0, a neighbour outside reads 0. Version 2 first applies the half-pixel
# correction m3 += (m0 + m1 - 1) / 2, m7 += (m4 + m5 - 1) / 2.
def ttb_ref(img, mat, out_hw, version):
    _, ih, iw, c = img.shape
    oh, ow = out_hw
    m = mat.reshape(-1)[:8].astype(np.float64)
    if version == 2:
        m[3] += m[0] * 0.5 + m[1] * 0.5 - 0.5
        m[7] += m[4] * 0.5 + m[5] * 0.5 - 0.5
    oy, ox = np.meshgrid(np.arange(oh, dtype=np.float64), np.arange(ow, dtype=np.float64), indexing="ij")
    with np.errstate(invalid="ignore"):
        tx = m[0] * ox + m[1] * oy + m[2] * 0 + m[3]
        ty = m[4] * ox + m[5] * oy + m[6] * 0 + m[7]
        inside = (tx >= 0) & (tx <= iw - 1) & (ty >= 0) & (ty <= ih - 1)
    tx, ty = np.where(inside, tx, 0), np.where(inside, ty, 0)
    x0, y0 = np.floor(tx).astype(np.int64), np.floor(ty).astype(np.int64)
    fx, fy = (tx - x0)[..., None], (ty - y0)[..., None]
    pad = np.zeros((ih + 1, iw + 1, c))  # the neighbour one past the last row/column reads 0
    pad[:ih, :iw] = img[0]
    upper = (1 - fx) * pad[y0, x0] + fx * pad[y0, x0 + 1]
    lower = (1 - fx) * pad[y0 + 1, x0] + fx * pad[y0 + 1, x0 + 1]
    out = np.where(inside[..., None], fy * lower + (1 - fy) * upper, 0.0)
    return [out[None].astype(F32)]


def ttb_model(in_shape, version, opts, mat_shape=(1, 4, 4), out_shape=None, dtype=F32, code="TransformTensorBilinear"):
    mb = ModelBuilder()
    x = mb.add_input(list(in_shape), dtype, name="image")
    m = mb.add_input(list(mat_shape), name="matrix")
    if out_shape is None:
        hw = opts.get("output_size") or [opts.get("output_height", 1), opts.get("output_width", 1)]
        out_shape = [1, hw[0], hw[1], in_shape[3]]
    y = mb.add_tensor(list(out_shape), name="out")
    raw = opts if isinstance(opts, (bytes, bytearray, type(None))) else flex_options(opts)
    mb.add_op(("CUSTOM", code), [x, m], [y], version=version, custom_options=raw)
    mb.mark_output(y)
    return mb.build()


def _crop_matrix(kind, in_hw, out_hw):
    """A matrix for the case: `affine` a random rotation/scale/shift whose samples fall partly outside
    the image; `identity`; `zero_scale` (every pixel samples one point); `outside` (all samples
    out of the image); `hostile` (NaN and inf entries)."""
    def make(rng):
        ih, iw = in_hw
        m = np.eye(4, dtype=F32)
        if kind == "affine":
            a, s = rng.uniform(-np.pi, np.pi), rng.uniform(0.4, 1.6)
            m[:2, :2] = s * np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
            # the output's centre lands near the image's: most samples inside, the corners outside
            oc = np.array([out_hw[1] - 1, out_hw[0] - 1]) / 2
            m[:2, 3] = np.array([iw - 1, ih - 1]) / 2 - m[:2, :2] @ oc + rng.uniform(-0.3, 0.3, 2) * [iw, ih]
            m[2:, :] = rng.standard_normal((2, 4))  # rows 2-3 are not read
        elif kind == "zero_scale":
            m[:2, :2] = 0
            m[:2, 3] = [rng.uniform(0, iw - 1), rng.uniform(0, ih - 1)]
        elif kind == "outside":
            m[:2, 3] = [-3.0 * iw, 2.0 * ih]
        elif kind == "hostile":
            m[0, 0], m[1, 3] = np.nan, np.inf
        return m.reshape(1, 4, 4)
    return make


def _ttb_inputs(in_shape, out_hw, kind):
    """The matrix is rounded to fp16-representable values: the GPU's F32_F16 run stores it in half,
    and a translation of ~20 px rounded to 11 bits moves every sample by ~0.01 px, which on this
    white-noise image is ~1% of the output by itself; with an exact matrix the F32_F16 bound checks
    the kernel's interpolation (the chain case below keeps its device-made matrix)."""
    mk = _crop_matrix(kind, in_shape[1:3], out_hw)

    def make(rng):
        return [rng.standard_normal(in_shape).astype(F32), mk(rng).astype(np.float16).astype(F32)]
    return make


_TTB = [
    # name, version, input shape, output (h, w), matrix kind, v1 with a mode key
    ("v2_affine", 2, (1, 20, 24, 3), (16, 12), "affine", False),
    ("v2_identity", 2, (1, 9, 7, 2), (9, 7), "identity", False),
    ("v2_zero_scale", 2, (1, 8, 8, 4), (5, 6), "zero_scale", False),
    ("v2_all_outside", 2, (1, 8, 8, 1), (4, 4), "outside", False),
    ("v2_nan_inf_matrix", 2, (1, 6, 6, 2), (4, 5), "hostile", False),
    ("v2_wide_channels", 2, (1, 12, 10, 17), (7, 9), "affine", False),
    ("v1_affine_mode", 1, (1, 20, 24, 3), (16, 12), "affine", True),
    ("v1_identity_no_mode", 1, (1, 9, 7, 2), (6, 5), "identity", False),
]
for _name, _v, _ish, _ohw, _kind, _mode in _TTB:
    if _v == 1:
        _o = dict(output_size=list(_ohw))
        if _mode:
            _o["mode"] = "bilinear"
    else:
        _o = dict(output_height=_ohw[0], output_width=_ohw[1])
    CASES.append(OpCase("TransformTensorBilinear", _name,
                        (lambda sh=_ish, v=_v, o=_o: ttb_model(sh, v, o)),
                        _ttb_inputs(_ish, _ohw, _kind), oracle="numpy",
                        ref_fn=(lambda x, m, hw=_ohw, v=_v: ttb_ref(x, m, hw, v))))


# Custom codes TFLite's GPU delegate also maps to these ops (its MediaPipe custom parsers):
# "TransformTensor" (version 1 of TransformTensorBilinear) and "Landmarks2TransformMatrixV2".
CASES.append(OpCase("TransformTensorBilinear", "alias_TransformTensor_v1",
                    (lambda: ttb_model((1, 20, 24, 3), 1, dict(output_size=[16, 12]), code="TransformTensor")),
                    _ttb_inputs((1, 20, 24, 3), (16, 12), "affine"), oracle="numpy",
                    ref_fn=(lambda x, m: ttb_ref(x, m, (16, 12), 1))))
CASES.append(OpCase("Landmarks2TransformMatrix", "alias_Landmarks2TransformMatrixV2",
                    (lambda: l2tm_model((1, 478, 3), _V2, 2, code="Landmarks2TransformMatrixV2")),
                    _landmarks((1, 478, 3), 1.0), oracle="numpy", ref_fn=(lambda x: l2tm_v2_ref(x, **_V2))))


# ------------------------------------------------------------------ the three together
# Face mesh with attention's pattern: Landmarks2TransformMatrix (v2) turns landmarks into a crop
# matrix that TransformTensorBilinear (v2) crops the image with and TransformLandmarks (v2) maps
# landmarks with. Also a fuzz seed (tests/fuzzlib.py): mutations reach the FlexBuffer options.
_CHAIN = dict(subset_idxs=[0, 3, 7, 11, 19, 23], left_rotation_idx=3, right_rotation_idx=19,
              target_rotation_radians=0.0, output_height=10, output_width=12, scale_x=1.3, scale_y=1.3)


def attention_chain_model():
    mb = ModelBuilder()
    lm = mb.add_input([1, 24, 3], name="landmarks")
    img = mb.add_input([1, 16, 20, 3], name="image")
    mat = mb.add_tensor([1, 4, 4], name="matrix")
    crop = mb.add_tensor([1, 10, 12, 3], name="crop")
    lm2 = mb.add_tensor([1, 24, 3], name="landmarks_out")
    mb.add_op(("CUSTOM", "Landmarks2TransformMatrix"), [lm], [mat], version=2, custom_options=flex_options(_CHAIN))
    mb.add_op(("CUSTOM", "TransformTensorBilinear"), [img, mat], [crop], version=2,
              custom_options=flex_options(dict(output_height=10, output_width=12)))
    mb.add_op(("CUSTOM", "TransformLandmarks"), [lm, mat], [lm2], version=2)
    mb.mark_output(crop)
    mb.mark_output(lm2)
    return mb.build()


def _chain_ref(lm, img):
    m = l2tm_v2_ref(lm, **_CHAIN)[0]
    return [ttb_ref(img, m, (10, 12), 2)[0], tl_ref(lm, m, 3)[0]]


def _chain_inputs(rng):
    # landmarks in pixels of the 20x16 image, so the crop lies mostly inside it
    lm = (rng.random((1, 24, 3)) * [20, 16, 1]).astype(F32)
    return [lm, rng.standard_normal((1, 16, 20, 3)).astype(F32)]


def _chain_fp16(lm, img):
    """fp16 storage of the chain: the inputs, the matrix (made in float from half landmarks) and
    both outputs rounded to half; the three ops compute in float, as the delegate's kernels do."""
    lm, img = half(lm), half(img)
    m = half(l2tm_v2_ref(lm, **_CHAIN)[0])
    return [half(ttb_ref(img, m, (10, 12), 2)[0]), half(tl_ref(lm, m, 3)[0])]


# F32_F16: the matrix is made on the device from fp16-stored landmarks (up to 20 px, rounded to
# 11 bits) and stored in half itself, so each crop sample moves by up to ~0.02 px of an image of
# unit white noise: ~1e-2 rel-L2 from that alone. The bound is the fp16 emulation's error (x2);
# on PoCL the delegate's error equals the emulation's to 3 digits (9.3e-3 crop, 7.6e-4 landmarks).
CASES.append(OpCase("TransformTensorBilinear", "attention_chain", attention_chain_model, _chain_inputs,
                    oracle="numpy", ref_fn=_chain_ref, fp16_ref=_chain_fp16))


# ------------------------------------------------------------------ Resampler
# TensorFlow's resampler (tf.contrib.resampler / tfa.image.resampler) as the custom op "Resampler"
# that TFLite's GPU delegate takes: bilinear samples of data [B, H, W, C] at the (x, y) points of
# warp [B, ..., 2], the data zero-padded by one pixel, 0 for points outside (-1, W) x (-1, H).
# Oracle: numpy written from that definition (a padded image and the usual bilinear weights, in
# float64). LiteRT has no kernel for it.
def resampler_ref(data, warp):
    b, h, w, c = data.shape
    pts = warp.reshape(b, -1, 2).astype(np.float64)
    x, y = pts[..., 0], pts[..., 1]
    with np.errstate(invalid="ignore"):
        inside = (x > -1) & (y > -1) & (x < w) & (y < h)
    xs, ys = np.where(inside, x, 0.0), np.where(inside, y, 0.0)
    x0, y0 = np.floor(xs), np.floor(ys)
    wx, wy = (xs - x0)[..., None], (ys - y0)[..., None]
    pad = np.zeros((b, h + 2, w + 2, c))
    pad[:, 1:h + 1, 1:w + 1] = data
    bi = np.arange(b)[:, None]
    xi, yi = x0.astype(np.int64) + 1, y0.astype(np.int64) + 1  # padded coordinates
    val = ((1 - wx) * (1 - wy) * pad[bi, yi, xi] + wx * (1 - wy) * pad[bi, yi, xi + 1] +
           (1 - wx) * wy * pad[bi, yi + 1, xi] + wx * wy * pad[bi, yi + 1, xi + 1])
    out = np.where(inside[..., None], val, 0.0)
    return [out.reshape(tuple(warp.shape[:-1]) + (c,)).astype(F32)]


def resampler_model(data_shape, warp_shape, out_shape=None, dtype=F32, warp_dtype=F32, code="Resampler"):
    mb = ModelBuilder()
    x = mb.add_input(list(data_shape), dtype, name="data")
    p = mb.add_input(list(warp_shape), warp_dtype, name="warp")
    if out_shape is None:
        out_shape = list(warp_shape[:-1]) + [data_shape[3]]
    y = mb.add_tensor(list(out_shape), name="out")
    mb.add_op(("CUSTOM", code), [x, p], [y])
    mb.mark_output(y)
    return mb.build()


def _resampler_inputs(data_shape, warp_shape, kind):
    """`spread`: points over (-1.5, W + 0.5) x (-1.5, H + 0.5) (inside, the faded border and
    outside); `grid`: whole and half pixel points, among them the corners -1, 0, W - 1, W;
    `hostile`: NaN / inf / huge coordinates among ordinary ones. The points are fp16-representable
    (the F32_F16 GPU run stores the warp in half; rounding them there would move the samples)."""
    def make(rng):
        _, h, w, _ = data_shape
        data = rng.standard_normal(data_shape).astype(F32)
        n = int(np.prod(warp_shape[:-1]))
        if kind == "grid":
            xs = rng.choice(np.arange(-1.0, w + 0.5, 0.5), n)
            ys = rng.choice(np.arange(-1.0, h + 0.5, 0.5), n)
        else:
            xs = rng.uniform(-1.5, w + 0.5, n)
            ys = rng.uniform(-1.5, h + 0.5, n)
        pts = np.stack([xs, ys], -1).astype(np.float16).astype(F32)
        if kind == "hostile":
            bad = np.array([np.nan, np.inf, -np.inf, 1e30, -1e30, -1.0, float(w), float(h)], F32)
            k = min(n, 12)
            pts[:k, 0] = rng.choice(bad, k)
            pts[:k, 1] = rng.choice(np.concatenate([bad, [0.5, 1.25]]).astype(F32), k)
        return [data, pts.reshape(warp_shape)]
    return make


_RESAMPLER = [
    # name, data shape, warp shape, points, GPU (rank-4 warp, non-empty)
    ("spread", (1, 6, 7, 3), (1, 4, 5, 2), "spread", True),
    ("batch2", (2, 5, 5, 4), (2, 3, 6, 2), "spread", True),
    ("grid_points", (1, 4, 5, 2), (1, 6, 6, 2), "grid", True),
    ("hostile_points", (1, 5, 4, 1), (1, 4, 4, 2), "hostile", True),
    ("wide_channels", (1, 6, 6, 17), (1, 3, 4, 2), "spread", True),
    ("one_pixel_image", (1, 1, 1, 2), (1, 3, 3, 2), "spread", True),
    ("warp_rank3", (2, 5, 6, 3), (2, 10, 2), "spread", False),
    ("warp_rank5", (1, 4, 4, 2), (1, 2, 3, 2, 2), "spread", False),
    ("empty_warp", (1, 4, 4, 2), (1, 0, 3, 2), "spread", False),
]
for _name, _ds, _ws, _kind, _gpu in _RESAMPLER:
    CASES.append(OpCase("Resampler", _name, (lambda d=_ds, w=_ws: resampler_model(d, w)),
                        _resampler_inputs(_ds, _ws, _kind), oracle="numpy", ref_fn=resampler_ref, gpu=_gpu,
                        note="" if _gpu else "the GPU takes a rank-4, non-empty warp [B, H', W', 2]"))
