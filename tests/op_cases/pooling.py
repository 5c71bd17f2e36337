"""Pooling family: AVERAGE_POOL_2D, MAX_POOL_2D, RESIZE_BILINEAR, RESIZE_NEAREST_NEIGHBOR,
SOFTMAX, MEAN, SUM, ARG_MAX."""
import numpy as np

from harness import OpCase
from tflite_gpu.testing.builder import ModelBuilder, single_op_model


def _f32(shape, scale=1.0):
    return lambda rng: [(scale * rng.standard_normal(shape)).astype(np.float32)]


def _same(n, s):
    return (n + s - 1) // s


def _valid(n, f, s):
    return (n - f + s) // s if n >= f else 0


CASES = []

# ---------------------------------------------------------------- pooling
_POOLS = [
    # name, in shape, filter (h, w), stride (h, w), padding, activation
    ("2x2s2_valid", [1, 8, 8, 3], (2, 2), (2, 2), "VALID", "NONE"),
    ("3x3s2_same", [2, 9, 7, 5], (3, 3), (2, 2), "SAME", "NONE"),
    ("3x3s1_same_relu6", [1, 6, 6, 4], (3, 3), (1, 1), "SAME", "RELU6"),
    ("2x3s1x2_same_relu", [1, 7, 10, 3], (2, 3), (1, 2), "SAME", "RELU"),
    ("3x2s3x1_valid_relu1", [3, 10, 5, 2], (3, 2), (3, 1), "VALID", "RELU_N1_TO_1"),
    ("global_7x7", [2, 7, 7, 33], (7, 7), (2, 2), "VALID", "NONE"),
    ("1x1", [1, 1, 1, 1], (1, 1), (1, 1), "SAME", "NONE"),
    ("filter_gt_input_same", [1, 3, 3, 2], (5, 5), (1, 1), "SAME", "NONE"),
    ("big_stride_same", [1, 5, 5, 1], (1, 1), (4, 4), "SAME", "TANH"),
    ("wide_channels", [1, 5, 5, 600], (3, 3), (2, 2), "SAME", "NONE"),
    ("odd_stride_same", [1, 11, 13, 7], (4, 5), (3, 2), "SAME", "RELU6"),
    # 8-float vector path of the fast MAX_POOL_2D (depth >= 8): whole vectors, and vectors + tail
    ("vec16_2x2s2", [1, 10, 10, 16], (2, 2), (2, 2), "VALID", "NONE"),
    ("vec12_3x3s2_same_relu6", [2, 7, 9, 12], (3, 3), (2, 2), "SAME", "RELU6"),
]
for op in ("AVERAGE_POOL_2D", "MAX_POOL_2D"):
    for name, shape, (fh, fw), (sh, sw), pad, act in _POOLS:
        n, h, w, c = shape
        oh = _same(h, sh) if pad == "SAME" else _valid(h, fh, sh)
        ow = _same(w, sw) if pad == "SAME" else _valid(w, fw, sw)
        opts = dict(padding=pad, stride_w=sw, stride_h=sh, filter_width=fw, filter_height=fh,
                    fused_activation_function=act)
        CASES.append(OpCase(op, name, (lambda op=op, s=shape, o=[n, oh, ow, c], opts=opts:
                                       single_op_model(op, [s], [o], options=opts)),
                            _f32(shape, 3.0)))
    CASES.append(OpCase(op, "inf_input_clamps_to_flt_max",
                        lambda op=op: single_op_model(op, [[1, 2, 4, 1]], [[1, 1, 2, 1]], options=dict(
                            padding="VALID", stride_w=2, stride_h=2, filter_width=2, filter_height=2)),
                        lambda rng: [np.array([1, np.inf, 2, 3, -np.inf, 4, 5, -1],
                                              np.float32).reshape(1, 2, 4, 1)]))
    CASES.append(OpCase(op, "v2", lambda op=op: single_op_model(
        op, [[1, 4, 4, 3]], [[1, 2, 2, 3]], version=2, options=dict(
            padding="VALID", stride_w=2, stride_h=2, filter_width=2, filter_height=2)),
        _f32([1, 4, 4, 3])))


# ---------------------------------------------------------------- resize
def _resize_model(op, in_shape, size, const_size=True, version=1, **opts):
    if const_size:
        return single_op_model(op, [in_shape], [[in_shape[0], size[0], size[1], in_shape[3]]],
                               options=opts, version=version, consts=[np.array(size, np.int32)])
    return single_op_model(op, [in_shape, ([2], np.int32)],
                           [[in_shape[0], size[0], size[1], in_shape[3]]], options=opts,
                           version=version)


_RESIZES = [
    # name, in shape, size, options
    ("up2x", [1, 4, 4, 3], [8, 8], {}),
    ("up_odd", [2, 3, 5, 2], [7, 11], {}),
    ("down", [1, 9, 10, 4], [4, 3], {}),
    ("align_corners", [1, 4, 5, 3], [7, 9], dict(align_corners=True)),
    ("align_corners_down", [1, 9, 7, 2], [4, 3], dict(align_corners=True)),
    ("half_pixel", [1, 4, 5, 3], [8, 13], dict(half_pixel_centers=True)),
    ("half_pixel_down", [2, 9, 6, 3], [4, 4], dict(half_pixel_centers=True)),
    ("to_1x1", [1, 5, 4, 2], [1, 1], dict(align_corners=True)),
    ("from_1x1", [1, 1, 1, 3], [3, 4], {}),
    ("same_size", [1, 6, 6, 5], [6, 6], dict(half_pixel_centers=True)),
    ("wide_channels", [1, 5, 6, 130], [9, 11], dict(half_pixel_centers=True)),
]
for name, shape, size, opts in _RESIZES:
    for op in ("RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR"):
        v = 3 if opts.get("half_pixel_centers") else 1
        CASES.append(OpCase(op, name, (lambda op=op, s=shape, z=size, o=opts, v=v:
                                       _resize_model(op, s, z, version=v, **o)), _f32(shape)))

for op in ("RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR"):
    CASES.append(OpCase(op, "dynamic_size", lambda op=op: _resize_model(op, [1, 4, 5, 3], [6, 9], const_size=False),
                        lambda rng: [rng.standard_normal((1, 4, 5, 3)).astype(np.float32),
                                     np.array([6, 9], np.int32)]))
    CASES.append(OpCase(op, "dynamic_size_hp", lambda op=op: _resize_model(
        op, [2, 7, 5, 3], [3, 8], const_size=False, version=3, half_pixel_centers=True),
        lambda rng: [rng.standard_normal((2, 7, 5, 3)).astype(np.float32), np.array([3, 8], np.int32)]))
    CASES.append(OpCase(op, "v4", lambda op=op: _resize_model(op, [1, 3, 3, 2], [5, 7], version=4,
                                                             half_pixel_centers=True), _f32([1, 3, 3, 2])))

CASES.append(OpCase("RESIZE_NEAREST_NEIGHBOR", "align_and_half_pixel", lambda: _resize_model(
    "RESIZE_NEAREST_NEIGHBOR", [1, 5, 7, 2], [9, 4], version=3, align_corners=True,
    half_pixel_centers=True), _f32([1, 5, 7, 2])))
# Rounding corner cases: scales where (x + 0.5) * scale lands exactly on .5 / integers.
for name, shape, size, opts in [("exact_half_ac", [1, 3, 3, 1], [5, 5], dict(align_corners=True)),
                                ("exact_half_hp", [1, 2, 6, 1], [4, 4], dict(half_pixel_centers=True)),
                                ("third_scale", [1, 3, 9, 1], [9, 3], {}),
                                ("hp_ac_exact", [1, 4, 4, 1], [7, 7], dict(align_corners=True,
                                                                           half_pixel_centers=True))]:
    CASES.append(OpCase("RESIZE_NEAREST_NEIGHBOR", name, (lambda s=shape, z=size, o=opts: _resize_model(
        "RESIZE_NEAREST_NEIGHBOR", s, z, version=3, **o)), _f32(shape)))
for dt, name, v in [(np.int8, "int8", 2), (np.uint8, "uint8", 1), (np.int16, "int16", 4),
                    (np.int32, "int32", 1)]:
    CASES.append(OpCase("RESIZE_NEAREST_NEIGHBOR", name, (lambda dt=dt, v=v: single_op_model(
        "RESIZE_NEAREST_NEIGHBOR", [([1, 3, 4, 2], dt)], [([1, 5, 7, 2], dt)], version=v,
        options=dict(half_pixel_centers=True), consts=[np.array([5, 7], np.int32)])),
        (lambda rng, dt=dt: [rng.integers(-100 if dt != np.uint8 else 0, 100, (1, 3, 4, 2)).astype(dt)])))

# ---------------------------------------------------------------- softmax
for name, shape, beta in [("2d", [3, 10], 1.0), ("4d", [2, 3, 4, 17], 1.0), ("1d", [5], 1.0),
                          ("beta_half", [4, 1001], 0.5), ("beta_2", [2, 5, 8], 2.0),
                          ("3d_wide", [1, 2, 3000], 1.0), ("single_class", [4, 1], 1.0),
                          ("5d", [2, 1, 2, 3, 6], 1.3), ("neg_beta", [3, 7], -0.7)]:
    CASES.append(OpCase("SOFTMAX", name, (lambda s=shape, b=beta: single_op_model(
        "SOFTMAX", [s], [s], options=dict(beta=b))), _f32(shape, 4.0)))
CASES.append(OpCase("SOFTMAX", "large_logits", lambda: single_op_model(
    "SOFTMAX", [[2, 6]], [[2, 6]], options=dict(beta=1.0)), _f32([2, 6], 300.0)))
CASES.append(OpCase("SOFTMAX", "no_options_beta0", lambda: single_op_model(
    "SOFTMAX", [[2, 6]], [[2, 6]], options=None), _f32([2, 6])))
CASES.append(OpCase("SOFTMAX", "v2", lambda: single_op_model(
    "SOFTMAX", [[2, 6]], [[2, 6]], options=dict(beta=1.0), version=2), _f32([2, 6])))


# ---------------------------------------------------------------- MEAN / SUM
def _out_shape(shape, axes, keep):
    r = len(shape)
    ax = {a % r for a in axes}
    return [1 if i in ax else d for i, d in enumerate(shape) if keep or i not in ax]


def _np_reduce(op, axes, keep, dtype):
    def f(x, *rest):
        ax = tuple(sorted({int(a) % x.ndim for a in np.ravel(axes)}))
        if op == "SUM":
            y = np.sum(x, axis=ax, keepdims=keep, dtype=dtype)
        else:
            y = np.mean(x, axis=ax, keepdims=keep, dtype=np.float64).astype(dtype)
        return [np.asarray(y, dtype)]
    return f


_REDUCES = [
    # name, shape, axes, keep_dims
    ("hw_nhwc_keep", [2, 7, 7, 64], [1, 2], True),
    ("hw_nhwc_batch1", [1, 12, 12, 320], [1, 2], True),
    ("hw_nhwc_nokeep", [3, 5, 6, 7], [1, 2], False),
    ("last_axis", [4, 5, 33], [-1], False),
    ("first_axis", [6, 3, 4], [0], True),
    ("all_axes", [3, 4, 5], [0, 1, 2], False),
    ("neg_repeated", [2, 3, 4, 5], [-1, 3, 1, -3], False),
    ("middle", [4, 9, 5], [1], True),
    ("alt_axes", [3, 4, 5, 6, 2], [0, 2, 4], False),
    ("size1_dims", [1, 5, 1, 4], [2, 3], False),
    ("1d", [17], [0], False),
    ("1d_keep", [17], [0], True),
    ("big_hw", [2, 64, 64, 40], [1, 2], True),
    ("big_rows", [64, 4096], [1], False),
    ("big_cols", [4096, 64], [0], False),
]
for op in ("MEAN", "SUM"):
    for name, shape, axes, keep in _REDUCES:
        CASES.append(OpCase(op, name, (lambda op=op, s=shape, a=axes, k=keep: single_op_model(
            op, [s], [_out_shape(s, a, k)], options=dict(keep_dims=k),
            consts=[np.array(a, np.int32)])), _f32(shape)))
    CASES.append(OpCase(op, "scalar_axis", lambda op=op: single_op_model(
        op, [[3, 4]], [[3]], options=dict(keep_dims=False), consts=[np.array(1, np.int32)]),
        _f32([3, 4])))
    CASES.append(OpCase(op, "empty_axis_list", lambda op=op: single_op_model(
        op, [[3, 4]], [[3, 4]], options=dict(keep_dims=False), consts=[np.zeros([0], np.int32)]),
        _f32([3, 4])))
    CASES.append(OpCase(op, "no_options", lambda op=op: single_op_model(
        op, [[3, 4, 2]], [[3, 2]], options=None, consts=[np.array([1], np.int32)]), _f32([3, 4, 2])))
    CASES.append(OpCase(op, "dynamic_axis", lambda op=op: single_op_model(
        op, [[2, 3, 4, 5], ([2], np.int32)], [[2, 5]], options=dict(keep_dims=False)),
        lambda rng: [rng.standard_normal((2, 3, 4, 5)).astype(np.float32), np.array([2, -3], np.int32)]))
    CASES.append(OpCase(op, "dynamic_axis_keep", lambda op=op: single_op_model(
        op, [[2, 3, 4], ([1], np.int32)], [[2, 3, 1]], options=dict(keep_dims=True)),
        lambda rng: [rng.standard_normal((2, 3, 4)).astype(np.float32), np.array([-1], np.int32)]))
    CASES.append(OpCase(op, "empty_reduction", lambda op=op: single_op_model(
        op, [[2, 0, 3]], [[2, 3]], options=dict(keep_dims=False), consts=[np.array([1], np.int32)]),
        lambda rng: [np.zeros((2, 0, 3), np.float32)]))
    for dt, nm in [(np.int32, "int32"), (np.int64, "int64")]:
        CASES.append(OpCase(op, nm, (lambda op=op, dt=dt: single_op_model(
            op, [([3, 5, 4], dt)], [([3, 4], dt)], options=dict(keep_dims=False),
            consts=[np.array([1], np.int32)])),
            (lambda rng, dt=dt: [rng.integers(-1000, 1000, (3, 5, 4)).astype(dt)])))
        CASES.append(OpCase(op, nm + "_all", (lambda op=op, dt=dt: single_op_model(
            op, [([3, 5, 4], dt)], [([1, 1, 1], dt)], options=dict(keep_dims=True),
            consts=[np.array([0, 1, 2], np.int32)])),
            (lambda rng, dt=dt: [rng.integers(-1000, 1000, (3, 5, 4)).astype(dt)])))
    # int64 axis tensors: TFLite's kernels only take int32 axes, so these use a numpy oracle.
    CASES.append(OpCase(op, "int64_axis", lambda op=op: single_op_model(
        op, [[2, 3, 4, 5]], [[2, 1, 1, 5]], options=dict(keep_dims=True),
        consts=[np.array([1, -2], np.int64)]), _f32([2, 3, 4, 5]), oracle="numpy",
        ref_fn=_np_reduce(op, [1, -2], True, np.float32)))
CASES.append(OpCase("SUM", "int32_wraps", lambda: single_op_model(
    "SUM", [([2, 3], np.int32)], [([2], np.int32)], options=dict(keep_dims=False),
    consts=[np.array([1], np.int32)]),
    lambda rng: [np.array([[2**31 - 1, 2, 2], [-2**31, -2, 5]], np.int32)]))
CASES.append(OpCase("MEAN", "int32_truncates", lambda: single_op_model(
    "MEAN", [([2, 3], np.int32)], [([2], np.int32)], options=dict(keep_dims=False),
    consts=[np.array([1], np.int32)]),
    lambda rng: [np.array([[1, 2, 2], [-1, -2, -2]], np.int32)]))


# ---------------------------------------------------------------- ARG_MAX
def _argmax_model(shape, axis, in_dt=np.float32, out_dt=np.int32, axis_dt=np.int32, const=True,
                  version=1):
    r = len(shape)
    a = axis % r
    oshape = [d for i, d in enumerate(shape) if i != a]
    otype = "INT32" if out_dt == np.int32 else "INT64"
    if const:
        return single_op_model("ARG_MAX", [(shape, in_dt)], [(oshape, out_dt)],
                               options=dict(output_type=otype), version=version,
                               consts=[np.array([axis], axis_dt)])
    return single_op_model("ARG_MAX", [(shape, in_dt), ([1], axis_dt)], [(oshape, out_dt)],
                           options=dict(output_type=otype), version=version)


for name, shape, axis in [("last", [3, 10], -1), ("first", [7, 4, 3], 0), ("middle", [2, 9, 5], 1),
                          ("4d_channels", [2, 4, 4, 21], 3), ("4d_h", [2, 4, 5, 3], 1), ("1d", [13], 0),
                          ("long_row", [3, 5000], 1), ("big_middle", [4, 300, 100], 1)]:
    CASES.append(OpCase("ARG_MAX", name, (lambda s=shape, a=axis: _argmax_model(s, a)), _f32(shape)))
CASES.append(OpCase("ARG_MAX", "int64_out_int64_axis", lambda: _argmax_model(
    [4, 6], 1, out_dt=np.int64, axis_dt=np.int64), _f32([4, 6])))
CASES.append(OpCase("ARG_MAX", "ties_first_index", lambda: _argmax_model([4, 8], 1),
                    lambda rng: [rng.integers(0, 3, (4, 8)).astype(np.float32)]))
CASES.append(OpCase("ARG_MAX", "ties_first_index_middle", lambda: _argmax_model([3, 6, 5], 1),
                    lambda rng: [rng.integers(0, 2, (3, 6, 5)).astype(np.float32)]))
CASES.append(OpCase("ARG_MAX", "dynamic_axis", lambda: _argmax_model([3, 4, 5], 0, const=False),
                    lambda rng: [rng.standard_normal((3, 4, 5)).astype(np.float32),
                                 np.array([-2], np.int32)]))
for dt, nm, v in [(np.int32, "int32", 1), (np.uint8, "uint8", 1), (np.int8, "int8", 2)]:
    lo = 0 if dt == np.uint8 else -50
    CASES.append(OpCase("ARG_MAX", nm, (lambda dt=dt, v=v: _argmax_model([5, 7], 1, in_dt=dt, version=v)),
                        (lambda rng, dt=dt, lo=lo: [rng.integers(lo, 50, (5, 7)).astype(dt)])))
CASES.append(OpCase("ARG_MAX", "bool", lambda: _argmax_model([5, 7], 1, in_dt=np.bool_, out_dt=np.int64),
                    lambda rng: [rng.integers(0, 2, (5, 7)).astype(np.bool_)]))


# GPU-specific shapes: MobileNet's head (mean over 7x7, softmax over 1001 classes), channel
# reductions on 4-D tensors (kept and dropped: the output's BHWC mapping moves W into C).
for _op in ("MEAN", "SUM"):
    for _name, _shape, _axes, _keep in [("gpu_mobilenet_head", [1, 7, 7, 1024], [1, 2], False),
                                        ("gpu_channels_keep_4d", [2, 3, 5, 37], [3], True),
                                        ("gpu_channels_nokeep_4d", [1, 6, 6, 300], [-1], False),
                                        ("gpu_hwc_nokeep", [2, 9, 8, 6], [1, 2, 3], False)]:
        CASES.append(OpCase(_op, _name, (lambda op=_op, s=_shape, a=_axes, k=_keep: single_op_model(
            op, [s], [_out_shape(s, a, k)], options=dict(keep_dims=k),
            consts=[np.array(a, np.int32)])), _f32(_shape)))
# Large windows run as a work-group reduction on the GPU (partial windows at the edges too).
for _op in ("AVERAGE_POOL_2D", "MAX_POOL_2D"):
    for _name, _shape, _f, _st, _pad, _out in [("gpu_global_mobilenet", [1, 7, 7, 1024], 7, 1, "VALID", [1, 1, 1, 1024]),
                                               ("gpu_big_window_same", [2, 10, 11, 6], 8, 3, "SAME", [2, 4, 4, 6])]:
        CASES.append(OpCase(_op, _name, (lambda op=_op, s=_shape, f=_f, st=_st, pad=_pad, o=_out: single_op_model(
            op, [s], [o], options=dict(padding=pad, stride_w=st, stride_h=st, filter_width=f, filter_height=f,
                                       fused_activation_function="RELU6"))), _f32(_shape, 3.0)))
CASES.append(OpCase("SOFTMAX", "gpu_mobilenet_1001", lambda: single_op_model(
    "SOFTMAX", [[1, 1001]], [[1, 1001]], options=dict(beta=1.0)), _f32([1, 1001], 4.0)))
CASES.append(OpCase("SOFTMAX", "gpu_4d_wide", lambda: single_op_model(
    "SOFTMAX", [[2, 3, 2, 70]], [[2, 3, 2, 70]], options=dict(beta=1.0)), _f32([2, 3, 2, 70], 4.0)))


# ---------------------------------------------------------------- GPU delegate coverage
# Cases the GPU delegate refuses by design (tests/test_gpu_ops.py runs every other case).
_GPU_DYNAMIC = "the output shape is only known at invoke (dynamic); the GPU takes static shapes"
_GPU_INT = "integer tensors stay on the CPU (GPU tensors hold floats)"
_GPU_REFUSED = {
    "RESIZE_BILINEAR-dynamic_size": _GPU_DYNAMIC,
    "RESIZE_BILINEAR-dynamic_size_hp": _GPU_DYNAMIC,
    "RESIZE_NEAREST_NEIGHBOR-dynamic_size": _GPU_DYNAMIC,
    "RESIZE_NEAREST_NEIGHBOR-dynamic_size_hp": _GPU_DYNAMIC,
    "SOFTMAX-5d": "rank 5: the GPU takes rank <= 4",
    "MAX_POOL_2D-inf_input_clamps_to_flt_max":
        "+inf clamps to FLT_MAX, which fp16 storage (F32_F16) cannot hold (it becomes inf); passes at F32",
}
for _dt in ("int8", "uint8", "int16", "int32"):
    _GPU_REFUSED["RESIZE_NEAREST_NEIGHBOR-" + _dt] = _GPU_INT
for _op in ("MEAN", "SUM"):
    _GPU_REFUSED[_op + "-alt_axes"] = "rank 5: the GPU takes rank <= 4"
    _GPU_REFUSED[_op + "-dynamic_axis"] = _GPU_DYNAMIC
    _GPU_REFUSED[_op + "-dynamic_axis_keep"] = _GPU_DYNAMIC
    _GPU_REFUSED[_op + "-empty_reduction"] = "zero-sized input: the GPU takes non-empty tensors"
    # A 0-element constant axis tensor has no data, so prepare treats it as non-constant and
    # makes the output dynamic.
    _GPU_REFUSED[_op + "-empty_axis_list"] = _GPU_DYNAMIC
    for _nm in ("int32", "int32_all", "int64", "int64_all"):
        _GPU_REFUSED[_op + "-" + _nm] = _GPU_INT
_GPU_REFUSED["SUM-int32_wraps"] = _GPU_INT
_GPU_REFUSED["MEAN-int32_truncates"] = _GPU_INT
for _c in CASES:
    if _c.op == "ARG_MAX":
        _c.gpu, _c.note = False, "ARG_MAX outputs integer indices; the GPU delegate refuses it"
    elif _c.id in _GPU_REFUSED:
        _c.gpu, _c.note = False, _GPU_REFUSED[_c.id]


# ---------------------------------------------------------------- quantized (issue 7)
# int8 / uint8 / int16 tensors vs LiteRT's builtin kernels, exact; OpCase.quant names the kernel.
from tflite_gpu.testing import quant as Q  # noqa: E402

_QP = {np.dtype(np.int8): [Q.QParams(0.05, -128), Q.QParams(0.1, 5), Q.QParams(0.02, 127)],
       np.dtype(np.uint8): [Q.QParams(0.1, 0), Q.QParams(0.05, 128), Q.QParams(0.2, 255)],
       np.dtype(np.int16): [Q.QParams(0.001, 0), Q.QParams(0.0003, 0)]}


def qcase(op, name, ins, outs, options=None, version=1, consts=None, gen=None, **kw):
    """ins/outs: (shape, dtype, QParams); random integers over each input's whole range."""
    dt = np.dtype(ins[0][1])

    def model():
        return Q.single_op_model_q(op, ins, outs, options=options, version=version, consts=consts)

    def inputs(rng):
        if gen is not None:
            return gen(rng)
        return [Q.random_q(rng, s, d) for s, d, _ in ins]
    CASES.append(OpCase(op, f"q_{name}", model, inputs, gpu=False, quant=Q.quant_kind(dt), **kw))


for op in ("AVERAGE_POOL_2D", "MAX_POOL_2D"):
    for dt, qps in _QP.items():
        v = 3 if dt == np.int16 else 2
        for k, (name, shape, (fh, fw), (sh, sw), pad, act) in enumerate(_POOLS):
            if act in ("TANH", "SIGN_BIT"):
                act = "NONE"  # refused by TFLite's quantized kernels
            n, h, w, c = shape
            oh = _same(h, sh) if pad == "SAME" else _valid(h, fh, sh)
            ow = _same(w, sw) if pad == "SAME" else _valid(w, fw, sw)
            qp = qps[k % len(qps)]
            opts = dict(padding=pad, stride_w=sw, stride_h=sh, filter_width=fw, filter_height=fh,
                        fused_activation_function=act)
            qcase(op, f"{dt.name}_{name}", [(shape, dt, qp)], [([n, oh, ow, c], dt, qp)], opts, version=v)

for dt, qps in _QP.items():
    for k, (name, shape, size, opts) in enumerate(_RESIZES[:8]):
        qp = qps[k % len(qps)]
        v = 4 if dt == np.int16 else (3 if opts.get("half_pixel_centers") else 2)
        qcase("RESIZE_NEAREST_NEIGHBOR", f"{dt.name}_{name}", [(shape, dt, qp)],
              [([shape[0], size[0], size[1], shape[3]], dt, qp)], opts, version=v,
              consts=[np.array(size, np.int32)])
# RESIZE_BILINEAR quantized (issue 7): every float resize case per type (up/down, odd sizes,
# align_corners, half_pixel_centers, 1x1, batch 2, 130 channels) plus 8x and 2x upsampling and a
# large tensor for the threaded kernel; int8/int16 follow TFLite's integer interpolation, uint8 its
# float-weight generic kernel.
for dt, qps in _QP.items():
    for k, (name, shape, size, opts) in enumerate(_RESIZES + [
            ("up8x_half_pixel", [1, 3, 3, 4], [24, 24], dict(half_pixel_centers=True)),
            ("up2x_half_pixel", [2, 5, 4, 8], [10, 8], dict(half_pixel_centers=True)),
            ("big", [1, 30, 40, 16], [75, 60], dict(half_pixel_centers=True))]):
        qp = qps[k % len(qps)]
        v = 4 if dt == np.int16 else (3 if opts.get("half_pixel_centers") else 2)
        qcase("RESIZE_BILINEAR", f"{dt.name}_{name}", [(shape, dt, qp)],
              [([shape[0], size[0], size[1], shape[3]], dt, qp)], opts, version=v,
              consts=[np.array(size, np.int32)])
for dt in (np.int8, np.uint8):
    for name, shape, axis in [("last", [3, 10], -1), ("first", [7, 4, 3], 0), ("4d_channels", [2, 4, 4, 21], 3)]:
        a = axis % len(shape)
        qcase("ARG_MAX", f"{np.dtype(dt).name}_{name}", [(shape, dt, _QP[np.dtype(dt)][1])],
              [([d for i, d in enumerate(shape) if i != a], np.int32, None)], dict(output_type="INT32"),
              version=2, consts=[np.array([axis], np.int32)])
    # ties: the first index wins
    qcase("ARG_MAX", f"{np.dtype(dt).name}_ties", [([4, 8], dt, _QP[np.dtype(dt)][0])], [([4], np.int32, None)],
          dict(output_type="INT32"), version=2, consts=[np.array([1], np.int32)],
          gen=lambda rng, dt=dt: [rng.integers(0, 3, (4, 8)).astype(dt)])

# SOFTMAX int8 / uint8: TFLite's output grid is fixed (scale 1/256, zero point -128 / 0).
for dt, zp in [(np.int8, -128), (np.uint8, 0)]:
    for k, (name, shape, beta) in enumerate([("2d", [3, 10], 1.0), ("4d", [2, 3, 4, 17], 1.0), ("logits", [2, 1001], 1.0),
                                             ("beta_half", [4, 33], 0.5), ("beta_2", [2, 5, 8], 2.0),
                                             ("single_class", [4, 1], 1.0)]):
        qi = _QP[np.dtype(dt)][k % 3]
        qcase("SOFTMAX", f"{np.dtype(dt).name}_{name}", [(shape, dt, qi)], [(shape, dt, Q.QParams(1 / 256, zp))],
              dict(beta=beta), version=2)

def _exact_softmax16(x, s, beta):
    """Exact softmax of the dequantized input on the 1/32768 grid (numpy; the GPU's float view)."""
    v = x.astype(np.float64) * s * beta
    e = np.exp(v - v.max(axis=-1, keepdims=True))
    return np.clip(np.round(e / e.sum(axis=-1, keepdims=True) * 32768.0), -32768, 32767).astype(np.int16)


# SOFTMAX int16 (issue 7): TFLite's SoftmaxInt16 (exp and 1/(1+x) tables), rank 1..5, betas, input
# scales from coarse to fine (the exp table's [-10, 0] range clipped or not reached).
for k, (name, shape, beta, s) in enumerate([("2d", [3, 10], 1.0, 0.001), ("4d", [2, 3, 4, 17], 1.0, 0.0003),
                                            ("logits", [2, 1001], 1.0, 0.0005), ("beta_half", [4, 33], 0.5, 0.002),
                                            ("beta_2", [2, 5, 8], 2.0, 0.001), ("single_class", [4, 1], 1.0, 0.001),
                                            ("1d_coarse", [7], 1.0, 0.01), ("fine", [3, 300], 1.0, 1e-5),
                                            ("5d", [2, 1, 3, 2, 9], 1.0, 0.001)]):
    qcase("SOFTMAX", f"int16_{name}", [(shape, np.int16, Q.QParams(s, 0))], [(shape, np.int16, Q.QParams(1 / 32768, 0))],
          dict(beta=beta), version=3, ref_fn=lambda x, s=s, beta=beta: [_exact_softmax16(x, s, beta)])

# MEAN / SUM on quantized tensors: global average pooling (4-D over {1, 2}) and other axes.
for op in ("MEAN", "SUM"):
    for dt, qps in _QP.items():
        for k, (name, shape, axes, keep) in enumerate([
                ("hw_keep", [2, 7, 7, 40], [1, 2], True), ("hw", [1, 5, 6, 19], [2, 1], False),
                ("hw_big", [1, 14, 14, 96], [1, 2], True), ("last", [3, 4, 10], [-1], False),
                ("first", [6, 5], [0], True), ("all", [2, 3, 4], [0, 1, 2], False), ("c", [1, 3, 3, 8], [3], True)]):
            qi = qps[k % len(qps)]
            qo = qps[(k + 1) % len(qps)]
            if op == "SUM":
                qo = Q.QParams(qo.scale * 8, qo.zero_point)
            r = len(shape)
            ax = {a % r for a in axes}
            oshape = [1 if i in ax else d for i, d in enumerate(shape) if keep or i not in ax]
            qcase(op, f"{dt.name}_{name}", [(shape, dt, qi)], [(oshape, dt, qo)], dict(keep_dims=keep),
                  version=2 if dt != np.int16 or op == "SUM" else 3, consts=[np.array(axes, np.int32)])
    if op == "SUM":  # same scale (LiteRT still rescales) and saturating sums
        for dt, qps in _QP.items():
            qcase(op, f"{dt.name}_same_scale_saturate", [([3, 4, 10], dt, qps[0])], [([3, 4], dt, qps[0])],
                  dict(keep_dims=False), version=2, consts=[np.array([2], np.int32)])
