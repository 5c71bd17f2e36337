"""Shape family: type-generic data movement. CONCATENATION, DEPTH_TO_SPACE, SPACE_TO_DEPTH,
RESHAPE, PAD, PADV2, MIRROR_PAD, GATHER, TRANSPOSE, STRIDED_SLICE, SLICE, SPLIT, PACK, UNPACK,
SHAPE, DENSIFY.

Types litert's builtin kernel lacks (e.g. bool SPLIT) are checked against a numpy reference."""
import itertools

import numpy as np

from harness import OpCase
from tflite_gpu.testing.builder import ModelBuilder

CASES = []

F32, F16, I32, I64, U8, I8, I16, BOOL = (np.float32, np.float16, np.int32, np.int64, np.uint8,
                                         np.int8, np.int16, np.bool_)
ALL_TYPES = [F32, F16, I32, I64, U8, I8, I16, BOOL]


def rand(rng, shape, dt):
    dt = np.dtype(dt)
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(dt, np.floating):
        return rng.standard_normal(shape).astype(dt)
    info = np.iinfo(dt)
    lo, hi = max(info.min, -1000), min(info.max, 1000)
    return rng.integers(lo, hi, size=shape, endpoint=True).astype(dt)


class In:
    """A graph input of the op: shape, dtype, an optional fixed value (for index tensors) and an
    optional data shape different from the model's (the harness then resizes the input)."""

    def __init__(self, shape, dt=F32, value=None, quant=None, data_shape=None):
        self.shape, self.dt, self.value, self.quant = list(shape), dt, value, quant
        self.data_shape = list(shape) if data_shape is None else list(data_shape)


def build(op, ins, outs, options=None, version=1):
    """ins: In (graph input), ndarray (constant), (ndarray, quant) or None (omitted);
    outs: (shape, dtype[, quant]) tuples."""
    mb = ModelBuilder()
    idx = []
    for x in ins:
        if x is None:
            idx.append(-1)
        elif isinstance(x, In):
            idx.append(mb.add_input(x.shape, x.dt, quant=x.quant))
        elif isinstance(x, tuple):
            idx.append(mb.add_const(x[0], quant=x[1]))
        else:
            idx.append(mb.add_const(np.asarray(x)))
    o = []
    for spec in outs:
        shape, dt = spec[0], spec[1]
        q = spec[2] if len(spec) > 2 else None
        t = mb.add_tensor(list(shape), dt, quant=q)
        mb.mark_output(t)
        o.append(t)
    mb.add_op(op, idx, o, options=options, version=version)
    return mb.build()


def gen(ins):
    """Input generator for the In entries of `ins`."""
    def f(rng):
        return [x.value if x.value is not None else rand(rng, x.data_shape, x.dt)
                for x in ins if isinstance(x, In)]
    return f


def add(op, name, ins, outs, options=None, version=1, ref=None, **kw):
    """ref: numpy function of the graph inputs -> list of outputs; makes the case numpy-checked."""
    kwargs = dict(kw)
    # The GPU delegate is expected only for float32 data with static shapes.
    graph_ins = [x for x in ins if isinstance(x, In)]
    static = all(x.value is None for x in graph_ins)
    f32 = all(np.dtype(x.dt) == np.float32 for x in graph_ins) and all(np.dtype(o[1]) == np.float32 for o in outs)
    kwargs.setdefault("gpu", static and f32)
    if ref is not None:
        kwargs.update(oracle="numpy", ref_fn=ref)
    CASES.append(OpCase(op, name, lambda: build(op, ins, outs, options, version), gen(ins), **kwargs))


def tname(dt):
    return np.dtype(dt).name


# ================================================================ CONCATENATION
for name, shapes, axis in [
    ("axis0", [[2, 3], [1, 3], [4, 3]], 0),
    ("axis1_4d", [[2, 3, 4, 5], [2, 1, 4, 5]], 1),
    ("axis_last", [[1, 4, 4, 3], [1, 4, 4, 5], [1, 4, 4, 1]], 3),
    ("axis_neg1", [[2, 3, 7], [2, 3, 1]], -1),
    ("axis_neg3", [[2, 3, 7], [5, 3, 7]], -3),
    ("1d", [[5], [1], [3], [2]], 0),
    ("single_input", [[3, 4]], 1),
    ("odd_channels_batch", [[3, 5, 5, 3], [3, 5, 5, 7]], -1),
    ("zero_size_part", [[2, 0, 3], [2, 4, 3]], 1),
    ("rank6", [[2, 1, 2, 3, 1, 2], [2, 1, 2, 3, 2, 2]], 4),
]:
    ax = axis % len(shapes[0])
    oshape = list(shapes[0])
    oshape[ax] = sum(s[ax] for s in shapes)
    ins = [In(s) for s in shapes]
    add("CONCATENATION", name, ins, [(oshape, F32)], dict(axis=axis))
for dt in ALL_TYPES + [np.uint32]:
    ins = [In([2, 3, 2], dt), In([2, 1, 2], dt), In([2, 4, 2], dt)]
    add("CONCATENATION", "type_" + tname(dt), ins, [([2, 8, 2], dt)], dict(axis=1))
for v in (1, 2, 3, 4):
    add("CONCATENATION", f"v{v}", [In([1, 2, 2, 3]), In([1, 2, 2, 2])], [([1, 2, 2, 5], F32)],
        dict(axis=3), version=v)
_q8 = dict(scale=[0.5], zero_point=[3])
add("CONCATENATION", "int8_quant", [In([2, 3], I8, quant=_q8), In([2, 2], I8, quant=_q8)],
    [([2, 5], I8, _q8)], dict(axis=1), version=2)
add("CONCATENATION", "uint8_requantize",
    [In([2, 3], U8, quant=dict(scale=[0.5], zero_point=[10])),
     In([2, 2], U8, quant=dict(scale=[0.25], zero_point=[128])),
     In([2, 1], U8, quant=dict(scale=[1.0], zero_point=[0]))],
    [([2, 6], U8, dict(scale=[0.75], zero_point=[20]))], dict(axis=1))
add("CONCATENATION", "int16_quant",
    [In([3, 2], I16, quant=dict(scale=[0.1], zero_point=[0])), In([3, 2], I16, quant=dict(scale=[0.1], zero_point=[0]))],
    [([3, 4], I16, dict(scale=[0.1], zero_point=[0]))], dict(axis=1), version=3)
add("CONCATENATION", "const_and_input",
    [np.arange(12, dtype=np.float32).reshape(2, 2, 3), In([2, 2, 4])], [([2, 2, 7], F32)], dict(axis=2))
add("CONCATENATION", "const_scalars",
    [np.float32(1.5).reshape(()), np.float32(-2.0).reshape(()), np.float32(7.0).reshape(())],
    [([3], F32)], dict(axis=0))
add("CONCATENATION", "all_const_folded",
    [np.arange(6, dtype=np.int32).reshape(2, 3), np.arange(4, dtype=np.int32).reshape(2, 2)],
    [([2, 5], I32)], dict(axis=1))
add("CONCATENATION", "large_rows", [In([4, 64, 64, 16]), In([4, 64, 64, 8])], [([4, 64, 64, 24], F32)],
    dict(axis=3))


# ================================================================ DEPTH_TO_SPACE / SPACE_TO_DEPTH
def np_d2s(x, bs):
    n, h, w, c = x.shape
    oc = c // (bs * bs)
    y = x.reshape(n, h, w, bs, bs, oc).transpose(0, 1, 3, 2, 4, 5)
    return y.reshape(n, h * bs, w * bs, oc)


def np_s2d(x, bs):
    n, h, w, c = x.shape
    y = x.reshape(n, h // bs, bs, w // bs, bs, c).transpose(0, 1, 3, 2, 4, 5)
    return y.reshape(n, h // bs, w // bs, bs * bs * c)


_LITERT_D2S = {np.dtype(t) for t in (F32, U8, I8, I32, I64, np.uint16)}
for name, shape, bs in [("bs2", [1, 2, 3, 8], 2), ("bs3_batch", [2, 3, 2, 27], 3), ("bs1", [1, 2, 2, 3], 1),
                        ("bs2_odd_depth", [3, 1, 1, 20], 2), ("bs4", [1, 3, 3, 32], 4)]:
    n, h, w, c = shape
    add("DEPTH_TO_SPACE", name, [In(shape)], [([n, h * bs, w * bs, c // (bs * bs)], F32)], dict(block_size=bs))
for dt in ALL_TYPES:
    ref = None if np.dtype(dt) in _LITERT_D2S else (lambda x: [np_d2s(x, 2)])
    add("DEPTH_TO_SPACE", "type_" + tname(dt), [In([2, 2, 3, 12], dt)], [([2, 4, 6, 3], dt)], dict(block_size=2),
        version=2, ref=ref)
for name, shape, bs in [("bs2", [1, 4, 6, 3], 2), ("bs3_batch", [2, 6, 3, 5], 3), ("bs1", [1, 2, 2, 3], 1),
                        ("bs2_depth1", [3, 2, 8, 1], 2)]:
    n, h, w, c = shape
    add("SPACE_TO_DEPTH", name, [In(shape)], [([n, h // bs, w // bs, c * bs * bs], F32)], dict(block_size=bs))
for dt in ALL_TYPES:
    ref = None if np.dtype(dt) in _LITERT_D2S - {np.dtype(np.uint16)} else (lambda x: [np_s2d(x, 2)])
    add("SPACE_TO_DEPTH", "type_" + tname(dt), [In([2, 4, 6, 3], dt)], [([2, 2, 3, 12], dt)], dict(block_size=2),
        version=2, ref=ref)

# ================================================================ RESHAPE
add("RESHAPE", "const_shape", [In([2, 3, 4]), np.array([4, 6], np.int32)], [([4, 6], F32)])
add("RESHAPE", "const_shape_minus1", [In([2, 3, 4]), np.array([-1, 2], np.int32)], [([12, 2], F32)])
add("RESHAPE", "options_only", [In([2, 3, 4])], [([3, 8], F32)], dict(new_shape=[3, -1]))
add("RESHAPE", "options_and_const", [In([6]), np.array([2, 3], np.int32)], [([2, 3], F32)], dict(new_shape=[2, 3]))
add("RESHAPE", "shape_tensor_wins", [In([2, 6]), np.array([3, 4], np.int32)], [([3, 4], F32)],
    dict(new_shape=[12]))
add("RESHAPE", "int64_shape_uses_options", [In([2, 6]), np.array([3, 4], np.int64)], [([4, 3], F32)],
    dict(new_shape=[4, 3]))
add("RESHAPE", "2d_shape_uses_options", [In([2, 6]), np.array([[3, 4]], np.int32)], [([12], F32)],
    dict(new_shape=[12]))
add("RESHAPE", "dynamic_shape", [In([2, 3, 4]), In([3], I32, value=np.array([4, -1, 3], np.int32))],
    [([4, 2, 3], F32)])
add("RESHAPE", "legacy_scalar", [In([1, 1, 1])], [([], F32)], dict(new_shape=[0]))
add("RESHAPE", "to_scalar_empty_shape", [In([1]), np.zeros([0], np.int32)], [([], F32)], dict(new_shape=[]))
add("RESHAPE", "zero_elements", [In([0, 4])], [([4, 0], F32)], dict(new_shape=[-1, 0]))
add("RESHAPE", "flatten_batch", [In([3, 2, 2, 5])], [([3, 20], F32)], dict(new_shape=[3, -1]))
add("RESHAPE", "const_input_folded", [np.arange(24, dtype=np.float32).reshape(2, 12), np.array([4, 6], np.int32)],
    [([4, 6], F32)])
for dt in ALL_TYPES:
    add("RESHAPE", "type_" + tname(dt), [In([2, 3, 2], dt), np.array([3, 4], np.int32)], [([3, 4], dt)])

# ================================================================ PAD / PADV2


def padded(shape, pads):
    return [d + a + b for d, (a, b) in zip(shape, pads)]


for name, shape, pads in [
    ("4d_hw", [1, 4, 5, 3], [[0, 0], [1, 2], [2, 1], [0, 0]]),
    ("4d_all", [2, 3, 3, 2], [[1, 0], [0, 2], [1, 1], [3, 1]]),
    ("1d", [5], [[2, 3]]),
    ("2d_zero", [3, 4], [[0, 0], [0, 0]]),
    ("3d_channels", [2, 3, 5], [[0, 0], [0, 0], [1, 4]]),
    ("5d", [1, 2, 2, 3, 2], [[0, 1], [1, 0], [0, 0], [2, 1], [0, 1]]),
    ("1x1_big", [1, 1, 1, 1], [[0, 0], [5, 5], [5, 5], [0, 0]]),
    ("zero_dim", [2, 0, 3], [[0, 0], [1, 1], [0, 0]]),
]:
    for pt in (np.int32, np.int64):
        add("PAD", f"{name}_{tname(pt)}", [In(shape), np.array(pads, pt)], [(padded(shape, pads), F32)])
_pads4 = [[0, 1], [1, 1], [2, 0], [0, 1]]
for dt in ALL_TYPES:
    add("PAD", "type_" + tname(dt), [In([2, 2, 3, 2], dt), np.array(_pads4, np.int32)],
        [(padded([2, 2, 3, 2], _pads4), dt)], version=2)
add("PAD", "uint8_zero_point", [In([1, 2, 2, 1], U8, quant=dict(scale=[0.1], zero_point=[77])),
                                np.array(_pads4, np.int32)],
    [(padded([1, 2, 2, 1], _pads4), U8, dict(scale=[0.1], zero_point=[77]))])
add("PAD", "int8_zero_point", [In([1, 2, 2, 1], I8, quant=dict(scale=[0.1], zero_point=[-5])),
                               np.array(_pads4, np.int32)],
    [(padded([1, 2, 2, 1], _pads4), I8, dict(scale=[0.1], zero_point=[-5]))], version=3)
add("PAD", "dynamic_paddings", [In([2, 3, 4]), In([3, 2], I32, value=np.array([[1, 0], [0, 2], [3, 1]], np.int32))],
    [([3, 5, 8], F32)])
add("PAD", "rank0", [In([]), np.zeros([0, 2], np.int32)], [([], F32)])
add("PAD", "large", [In([1, 64, 64, 16]), np.array([[0, 0], [2, 2], [2, 2], [0, 0]], np.int32)],
    [([1, 68, 68, 16], F32)])
for v in (1, 2, 3, 4):
    add("PAD", f"v{v}", [In([1, 3, 3, 2]), np.array(_pads4, np.int32)], [(padded([1, 3, 3, 2], _pads4), F32)],
        version=v)

for name, shape, pads, cv in [
    ("4d", [1, 3, 4, 2], [[0, 0], [1, 2], [2, 1], [0, 0]], 3.5),
    ("2d_neg", [3, 2], [[1, 1], [0, 3]], -7.25),
    ("1d", [4], [[3, 0]], 1e10),
]:
    add("PADV2", name, [In(shape), np.array(pads, np.int32), np.array([cv], np.float32)],
        [(padded(shape, pads), F32)])
add("PADV2", "scalar_cv", [In([2, 3]), np.array([[1, 1], [2, 0]], np.int32), np.array(9.0, np.float32)],
    [([4, 5], F32)])
add("PADV2", "int64_paddings", [In([2, 3]), np.array([[1, 1], [2, 0]], np.int64), np.array([2.0], np.float32)],
    [([4, 5], F32)])
add("PADV2", "omitted_cv", [In([2, 3]), np.array([[1, 1], [2, 0]], np.int32), None], [([4, 5], F32)])
for dt in ALL_TYPES:
    cv = np.array([1], dt) if dt != BOOL else np.array([True])
    add("PADV2", "type_" + tname(dt), [In([2, 3, 2], dt), np.array([[1, 0], [0, 2], [1, 1]], np.int32), cv],
        [([3, 5, 4], dt)], version=2)
_qu = dict(scale=[0.5], zero_point=[100])
add("PADV2", "uint8_quant", [In([1, 2, 3, 1], U8, quant=_qu), np.array(_pads4, np.int32),
                             (np.array([7], U8), _qu)], [(padded([1, 2, 3, 1], _pads4), U8, _qu)])
add("PADV2", "dynamic_paddings", [In([2, 3]), In([2, 2], I32, value=np.array([[0, 2], [1, 1]], np.int32)),
                                  np.array([4.0], np.float32)], [([4, 5], F32)])

# ================================================================ MIRROR_PAD
for mode in ("REFLECT", "SYMMETRIC"):
    m = 1 if mode == "REFLECT" else 0
    for name, shape, pads in [
        ("4d_hw", [1, 4, 5, 3], [[0, 0], [2, 3], [1, 4 - m], [0, 0]]),
        ("2d", [3, 4], [[2 - m + 1, 1], [3 - m, 3 - m]]),
        ("1d", [6], [[5 - m + 1, 4]]),
        ("3d_all", [3, 3, 3], [[1, 2 - m + 1], [2 - m + 1, 1], [1, 1]]),
        ("no_pad", [2, 3], [[0, 0], [0, 0]]),
        ("inner_only", [2, 3, 4], [[0, 0], [0, 0], [2, 3 - m]]),
        ("batch", [3, 5, 5, 2], [[0, 0], [4 - m, 4 - m], [1, 1], [0, 0]]),
    ]:
        add("MIRROR_PAD", f"{mode.lower()}_{name}", [In(shape), np.array(pads, np.int32)],
            [(padded(shape, pads), F32)], dict(mode=mode))
    if mode == "SYMMETRIC":
        add("MIRROR_PAD", "symmetric_zero_dim", [In([2, 0, 3]), np.array([[1, 1], [0, 0], [1, 2]], np.int32)],
            [([4, 0, 6], F32)], dict(mode=mode))
    add("MIRROR_PAD", f"{mode.lower()}_int64_paddings", [In([3, 4]), np.array([[1, 1], [2, 2]], np.int64)],
        [([5, 8], F32)], dict(mode=mode))
    add("MIRROR_PAD", f"{mode.lower()}_dynamic", [In([3, 4]), In([2, 2], I32, value=np.array([[2, 0], [1, 2]], np.int32))],
        [([5, 7], F32)], dict(mode=mode))
    for dt in ALL_TYPES:
        add("MIRROR_PAD", f"{mode.lower()}_type_{tname(dt)}", [In([2, 3, 4], dt), np.array([[1, 1], [2, 1], [1, 2]], np.int32)],
            [([4, 6, 7], dt)], dict(mode=mode), version=2)
for v in (1, 2, 3):
    add("MIRROR_PAD", f"v{v}", [In([2, 3]), np.array([[1, 1], [1, 1]], np.int32)], [([4, 5], F32)],
        dict(mode="SYMMETRIC"), version=v)


# ================================================================ GATHER
def gather_shape(shape, ishape, axis, bd=0):
    axis %= len(shape)
    bd = bd % len(ishape) if bd < 0 else bd
    return shape[:axis] + ishape[bd:] + shape[axis + 1:]


for name, shape, idx, axis, bd in [
    ("axis0", [5, 3], np.array([4, 0, 2, 2], np.int32), 0, 0),
    ("axis1", [2, 6, 3], np.array([[5, 1], [0, 3]], np.int32), 1, 0),
    ("axis_neg1", [2, 3, 7], np.array([6, 0, 3], np.int32), -1, 0),
    ("scalar_index", [4, 3], np.array(2, np.int32), 0, 0),
    ("int64_indices", [5, 4], np.array([1, 3, 0], np.int64), 1, 0),
    ("int16_indices", [5, 4], np.array([3, 3, 0], np.int16), 0, 0),
    ("batch_dims1", [2, 5, 3], np.array([[0, 4], [2, 2]], np.int32), 1, 1),
    ("batch_dims_neg", [2, 3, 5, 2], np.array([[[4, 0], [1, 1], [2, 3]], [[0, 0], [4, 4], [3, 2]]], np.int32), 2, -1),
    ("batch_dims1_axis2", [2, 3, 4], np.array([[3, 0, 1], [2, 2, 2]], np.int32), 2, 1),
    ("empty_indices", [4, 3], np.zeros([0], np.int32), 0, 0),
    ("big_inner", [6, 64, 64], np.array([5, 0, 3, 3, 1], np.int32), 0, 0),
]:
    opts = dict(axis=axis, batch_dims=bd)
    oshape = gather_shape(shape, list(idx.shape), axis, bd)
    add("GATHER", name, [In(shape), idx], [(oshape, F32)], opts)
    add("GATHER", name + "_dynamic_idx", [In(shape), In(list(idx.shape), idx.dtype.type, value=idx)],
        [(oshape, F32)], opts)
for dt in ALL_TYPES:
    add("GATHER", "type_" + tname(dt), [In([4, 3, 2], dt), np.array([3, 1, 1], np.int32)], [([3, 3, 2], dt)],
        dict(axis=0))
add("GATHER", "const_input_dynamic_idx", [np.arange(20, dtype=np.float32).reshape(5, 4),
                                          In([3], I32, value=np.array([4, 1, 2], np.int32))],
    [([3, 4], F32)], dict(axis=0))
add("GATHER", "all_const_folded", [np.arange(20, dtype=np.int64).reshape(5, 4), np.array([3, 1], np.int32)],
    [([5, 2], I64)], dict(axis=1))
for v in range(1, 8):
    add("GATHER", f"v{v}", [In([4, 3]), np.array([2, 0], np.int32)], [([2, 3], F32)], dict(axis=0), version=v)

# ================================================================ TRANSPOSE
_rng = np.random.default_rng(1234)
for name, shape, perm in [
    ("2d", [3, 5], [1, 0]),
    ("nhwc_to_nchw", [2, 4, 5, 3], [0, 3, 1, 2]),
    ("nchw_to_nhwc", [2, 3, 4, 5], [0, 2, 3, 1]),
    ("identity", [2, 3, 4], [0, 1, 2]),
    ("1d", [7], [0]),
    ("3d_rev", [2, 3, 4], [2, 1, 0]),
    ("keep_last", [3, 4, 5], [1, 0, 2]),
    ("negative_perm", [2, 3, 4], [-1, 0, -2]),
    ("size1_dims", [1, 5, 1, 3], [3, 2, 1, 0]),
    ("5d", [2, 3, 2, 4, 3], [4, 2, 0, 3, 1]),
    ("6d", [2, 1, 3, 2, 2, 3], [5, 0, 3, 1, 4, 2]),
    ("large_2d", [300, 257], [1, 0]),
    ("large_4d", [1, 96, 80, 32], [0, 3, 1, 2]),
]:
    perm_v = [p % len(shape) for p in perm]
    oshape = [shape[p] for p in perm_v]
    add("TRANSPOSE", name, [In(shape), np.array(perm, np.int32)], [(oshape, F32)])
for dt in ALL_TYPES:
    add("TRANSPOSE", "type_" + tname(dt), [In([2, 3, 4], dt), np.array([1, 2, 0], np.int32)], [([3, 4, 2], dt)],
        version=2)
add("TRANSPOSE", "dynamic_perm", [In([2, 3, 4]), In([3], I32, value=np.array([2, 0, 1], np.int32))],
    [([4, 2, 3], F32)])
for v in range(1, 7):
    add("TRANSPOSE", f"v{v}", [In([2, 3]), np.array([1, 0], np.int32)], [([3, 2], F32)], version=v)


# ================================================================ STRIDED_SLICE
def ss(name, shape, begin, end, strides, oshape, dt=F32, version=1, dynamic=False, **masks):
    opts = dict(begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0)
    opts.update(masks)
    vals = [np.array(v, np.int32) for v in (begin, end, strides)]
    if dynamic:
        ins = [In(shape, dt)] + [In(list(v.shape), I32, value=v) for v in vals]
    else:
        ins = [In(shape, dt)] + vals
    add("STRIDED_SLICE", name, ins, [(oshape, dt)], opts, version=version)


ss("basic_1d", [10], [2], [7], [1], [5])
ss("stride2", [10], [1], [10], [2], [5])
ss("negative_begin_end", [10], [-7], [-2], [1], [5])
ss("negative_stride", [10], [8], [1], [-2], [4])
ss("negative_stride_full_masks", [6], [0], [0], [-1], [6], begin_mask=1, end_mask=1)
ss("clamp_out_of_range", [5], [-100], [100], [1], [5])
ss("clamp_neg_stride", [5], [100], [-100], [-1], [5])
ss("empty_result", [5], [3], [1], [1], [0])
ss("2d_masks", [4, 6], [1, 2], [3, 5], [1, 1], [4, 3], begin_mask=1, end_mask=1)
ss("4d_hw_crop", [2, 8, 8, 3], [0, 1, 2, 0], [2, 7, 6, 3], [1, 2, 1, 1], [2, 3, 4, 3])
ss("shrink_axis0", [3, 4], [1, 0], [2, 4], [1, 1], [4], shrink_axis_mask=1)
ss("shrink_negative", [3, 4], [0, -1], [3, 0], [1, 1], [3], shrink_axis_mask=2)
ss("shrink_all", [3, 4], [2, 3], [3, 4], [1, 1], [], shrink_axis_mask=3)
ss("ellipsis_front", [2, 3, 4, 5], [0, 1], [0, 3], [1, 1], [2, 3, 4, 2], ellipsis_mask=1)
ss("ellipsis_middle", [2, 3, 4, 5], [1, 0, 1], [2, 0, 5], [1, 1, 2], [1, 3, 4, 2], ellipsis_mask=2)
ss("ellipsis_end", [2, 3, 4], [1, 0], [2, 0], [1, 1], [1, 3, 4], ellipsis_mask=2)
ss("new_axis_front", [3, 4], [0, 0, 1], [1, 3, 3], [1, 1, 1], [1, 3, 2], new_axis_mask=1)
ss("new_axis_middle", [3, 4], [0, 0, 0], [3, 0, 4], [1, 1, 2], [3, 1, 2], new_axis_mask=2)
ss("new_axis_and_shrink", [3, 4], [1, 0, 0], [2, 0, 4], [1, 1, 1], [1, 4], new_axis_mask=2, shrink_axis_mask=1)
ss("ellipsis_new_axis", [2, 3, 4], [0, 0], [0, 0], [1, 1], [2, 3, 4, 1], ellipsis_mask=1, new_axis_mask=2)
ss("partial_spec", [4, 5, 6], [1], [3], [1], [2, 5, 6])
ss("5d", [2, 3, 4, 3, 2], [0, 1, 0, 2, 0], [2, 3, 4, 0, 2], [1, 1, 3, 1, 1], [2, 2, 2, 0, 2])
ss("5d_neg", [2, 3, 4, 3, 2], [1, 2, 3, 2, 1], [0, 0, 0, 0, 0], [-1, -1, -2, -1, -1], [2, 3, 2, 2, 1],
   end_mask=0b11)
ss("6d", [2, 2, 3, 2, 3, 2], [0, 0, 1, 0, 0, 1], [2, 2, 3, 2, 3, 2], [1, 1, 1, 1, 2, 1], [2, 2, 2, 2, 2, 1])
ss("dynamic_indices", [4, 6], [1, -1], [4, 0], [2, -2], [2, 3], dynamic=True)
ss("offset", [5, 6], [1, 2], [3, 2], [1, 1], [3, 2], version=8, offset=True)
ss("offset_neg_begin", [5, 6], [-3, 0], [2, 6], [1, 2], [2, 3], version=8, offset=True)
ss("shrink_clamped_begin", [4, 5], [-7, 0], [0, 5], [1, 1], [5], shrink_axis_mask=1)
ss("spec_longer_than_rank", [4, 5], [1, 1, 0], [3, 4, 1], [1, 1, 1], [2, 3])
ss("ellipsis_only", [4, 5], [0], [0], [1], [4, 5], ellipsis_mask=1)
ss("shrink_and_new_axis_same_bit", [4, 5], [1], [2], [1], [1, 4, 5], new_axis_mask=1, shrink_axis_mask=1)
ss("ellipsis_and_new_axis_same_bit", [4, 5], [0, 1], [0, 2], [1, 1], [4, 1], ellipsis_mask=1, new_axis_mask=1)
ss("rank0", [], [], [], [], [])
# litert reads past `end` here (and crashes): checked against numpy.
add("STRIDED_SLICE", "offset_partial_spec", [In([4, 5]), np.array([1], np.int32), np.array([2], np.int32),
                                              np.array([1], np.int32)], [([2, 5], F32)], dict(offset=True),
    version=8, ref=lambda v: [v[1:3]])
for dt in ALL_TYPES:
    ss("type_" + tname(dt), [3, 4, 5], [0, 1, 4], [3, 4, 0], [2, 1, -2], [2, 3, 2], dt=dt, version=4)
for v in range(1, 9):
    ss(f"v{v}", [4, 4], [1, 0], [3, 4], [1, 2], [2, 2], version=v)
ss("large_rows", [2, 64, 64, 32], [0, 4, 4, 0], [2, 60, 60, 32], [1, 1, 1, 1], [2, 56, 56, 32])
add("STRIDED_SLICE", "all_const_folded",
    [np.arange(24, dtype=np.float32).reshape(4, 6), np.array([1, 1], np.int32), np.array([3, 5], np.int32),
     np.array([1, 2], np.int32)], [([2, 2], F32)], dict())

# ================================================================ SLICE
for name, shape, begin, size in [
    ("2d", [4, 6], [1, 2], [2, 3]),
    ("minus1", [4, 6], [1, 2], [-1, -1]),
    ("4d", [2, 5, 5, 3], [0, 1, 2, 0], [2, 3, 2, -1]),
    ("full", [3, 4], [0, 0], [3, 4]),
    ("empty", [3, 4], [1, 4], [2, 0]),
    ("1d", [9], [4], [5]),
    ("5d", [2, 3, 2, 4, 3], [1, 0, 1, 1, 0], [1, 3, 1, -1, 2]),
    ("6d", [2, 3, 2, 2, 3, 2], [1, 1, 0, 1, 0, 0], [1, -1, 2, 1, 2, 1]),
    ("large", [1, 128, 128, 16], [0, 10, 10, 0], [1, 100, 100, 16]),
]:
    oshape = [d - b if s == -1 else s for d, b, s in zip(shape, begin, size)]
    for it in (np.int32, np.int64):
        add("SLICE", f"{name}_{tname(it)}", [In(shape), np.array(begin, it), np.array(size, it)], [(oshape, F32)])
add("SLICE", "dynamic", [In([4, 6]), In([2], I32, value=np.array([1, 0], np.int32)),
                         In([2], I32, value=np.array([3, -1], np.int32))], [([3, 6], F32)])
for dt in ALL_TYPES:
    add("SLICE", "type_" + tname(dt), [In([3, 4, 5], dt), np.array([1, 0, 2], np.int32),
                                       np.array([2, -1, 2], np.int32)], [([2, 4, 2], dt)], version=4)
for v in range(1, 7):
    add("SLICE", f"v{v}", [In([3, 3]), np.array([1, 1], np.int32), np.array([2, 1], np.int32)], [([2, 1], F32)],
        version=v)

# ================================================================ SPLIT
_LITERT_SPLIT = {np.dtype(t) for t in (F32, U8, I8, I16, I32, I64)}
for name, shape, axis, n in [
    ("axis0", [6, 3], 0, 3),
    ("axis_last", [2, 3, 8], 2, 4),
    ("axis_neg", [2, 4, 3], -2, 2),
    ("one", [3, 4], 1, 1),
    ("4d_channels", [2, 5, 5, 6], 3, 3),
]:
    ax = axis % len(shape)
    oshape = list(shape)
    oshape[ax] //= n
    add("SPLIT", name, [np.array([axis], np.int32), In(shape)], [(oshape, F32)] * n, dict(num_splits=n))
add("SPLIT", "scalar_axis", [np.array(1, np.int32), In([2, 4])], [([2, 2], F32)] * 2, dict(num_splits=2))
add("SPLIT", "dynamic_axis", [In([1], I32, value=np.array([1], np.int32)), In([2, 6])], [([2, 3], F32)] * 2,
    dict(num_splits=2))
for dt in ALL_TYPES:
    ref = None if np.dtype(dt) in _LITERT_SPLIT else (lambda x: np.split(x, 3, axis=1))
    add("SPLIT", "type_" + tname(dt), [np.array([1], np.int32), In([2, 6, 2], dt)], [([2, 2, 2], dt)] * 3,
        dict(num_splits=3), version=3, ref=ref)
for v in range(1, 5):
    add("SPLIT", f"v{v}", [np.array([0], np.int32), In([4, 2])], [([2, 2], F32)] * 2, dict(num_splits=2), version=v)

# ================================================================ PACK / UNPACK
_LITERT_PACK = {np.dtype(t) for t in (F32, I32, U8, np.uint32, I8, I16, np.uint16, I64)}
for name, shape, n, axis in [("axis0", [3, 4], 3, 0), ("axis1", [3, 4], 2, 1), ("axis_last", [2, 3], 4, 2),
                             ("axis_neg", [2, 3, 2], 2, -1), ("single", [5], 1, 0), ("scalars", [], 3, 0)]:
    ax = axis % (len(shape) + 1)
    oshape = shape[:ax] + [n] + shape[ax:]
    add("PACK", name, [In(shape) for _ in range(n)], [(oshape, F32)], dict(values_count=n, axis=axis))
for dt in ALL_TYPES:
    ref = None if np.dtype(dt) in _LITERT_PACK else (lambda a, b: [np.stack([a, b], axis=1)])
    add("PACK", "type_" + tname(dt), [In([2, 3], dt), In([2, 3], dt)], [([2, 2, 3], dt)],
        dict(values_count=2, axis=1), version=3, ref=ref)
for v in range(1, 5):
    add("PACK", f"v{v}", [In([2]), In([2])], [([2, 2], F32)], dict(values_count=2, axis=0), version=v)

_LITERT_UNPACK = {np.dtype(t) for t in (F32, F16, I32, U8, I8, I16, BOOL)}
for name, shape, axis in [("axis0", [3, 4], 0), ("axis1", [3, 4, 2], 1), ("axis_last", [2, 3, 4], 2),
                          ("axis_neg", [2, 5, 3], -2), ("1d", [4], 0), ("one", [1, 3], 0)]:
    ax = axis % len(shape)
    n = shape[ax]
    oshape = shape[:ax] + shape[ax + 1:]
    add("UNPACK", name, [In(shape)], [(oshape, F32)] * n, dict(num=n, axis=axis))
for dt in ALL_TYPES:
    ref = None if np.dtype(dt) in _LITERT_UNPACK else (lambda x: [x[:, i] for i in range(3)])
    add("UNPACK", "type_" + tname(dt), [In([2, 3, 2], dt)], [([2, 2], dt)] * 3, dict(num=3, axis=1), version=3,
        ref=ref)
for v in range(1, 5):
    add("UNPACK", f"v{v}", [In([2, 3])], [([3], F32)] * 2, dict(num=2, axis=0), version=v)

# ================================================================ SHAPE
for name, shape, ot in [("4d_int32", [1, 5, 3, 2], I32), ("2d_int64", [7, 3], I64), ("1d", [9], I32),
                        ("zero_dim", [3, 0], I32)]:
    add("SHAPE", name, [In(shape)], [([len(shape)], ot)], dict(out_type="INT32" if ot == I32 else "INT64"))
add("SHAPE", "int8_input", [In([2, 3], I8)], [([2], I32)], dict(out_type="INT32"))


# ================================================================ DENSIFY
def to_sparse(dense, order, fmts, block_size=(), block_map=(), idx_dtype=np.int32):
    """Encodes `dense` like TFLite's FormatConverter::DenseToSparse: returns (values, sparsity)."""
    dense = np.asarray(dense)
    rank, k = dense.ndim, len(block_map)
    blocked = list(dense.shape)
    for b, d in enumerate(block_map):
        blocked[d] //= block_size[b]
    ext = blocked + list(block_size)
    total = rank + k

    def value(coords):  # coords per expanded dim
        orig = list(coords[:rank])
        for b, d in enumerate(block_map):
            orig[d] = orig[d] * block_size[b] + coords[rank + b]
        return dense[tuple(orig)]

    def subtree_nonzero(level, coords):
        rest = [range(ext[order[l]]) for l in range(level, total)]
        for tail in itertools.product(*rest):
            c = list(coords)
            for l, v in zip(range(level, total), tail):
                c[order[l]] = v
            if value(c) != 0:
                return True
        return False

    indices = [[] for _ in range(total)]
    counts = [dict() for _ in range(total)]
    values = []

    def walk(level, pid, coords):
        if level == total:
            values.append(value(coords))
            return
        e = ext[order[level]]
        for i in range(e):
            c = list(coords)
            c[order[level]] = i
            if fmts[level] == "DENSE":
                walk(level + 1, pid * e + i, c)
            elif subtree_nonzero(level + 1, c):
                child = len(indices[level])
                indices[level].append(i)
                counts[level][pid] = counts[level].get(pid, 0) + 1
                walk(level + 1, child, c)

    walk(0, 0, [0] * total)
    meta = []
    parents = 1
    for level in range(total):
        e = ext[order[level]]
        if fmts[level] == "DENSE":
            meta.append(dict(format="DENSE", dense_size=e))
            parents *= e
        else:
            seg = [0]
            for p in range(parents):
                seg.append(seg[-1] + counts[level].get(p, 0))
            meta.append(dict(format="SPARSE_CSR", array_segments=np.array(seg, idx_dtype),
                             array_indices=np.array(indices[level], idx_dtype)))
            parents = len(indices[level])
    sp = dict(traversal_order=list(order), block_map=list(block_map), dim_metadata=meta)
    return np.array(values, dense.dtype), sp


def sparse_dense(rng, shape, dt, density=0.3, block=None):
    x = rand(rng, shape, dt)
    if block is None:
        mask = rng.random(shape) < density
    else:
        bm = rng.random([s // b for s, b in zip(shape, block)]) < density
        mask = np.kron(bm, np.ones(block)).astype(bool)
    return np.where(mask, x, np.zeros_like(x))


def densify_model(dense, order, fmts, block_size=(), block_map=(), idx_dtype=np.int32):
    values, sp = to_sparse(dense, order, fmts, block_size, block_map, idx_dtype)
    mb = ModelBuilder()
    w = mb.add_tensor(list(dense.shape), dense.dtype, data=values, sparsity=sp, name="sparse_w")
    y = mb.add_tensor(list(dense.shape), dense.dtype, name="dense_w")
    mb.add_op("DENSIFY", [w], [y])
    mb.mark_output(y)
    return mb.build()


def add_densify(name, shape, order, fmts, dt=F32, block_size=(), block_map=(), idx_dtype=np.int32, block=None,
                density=0.3, seed=0):
    dense = sparse_dense(np.random.default_rng(seed), shape, dt, density, block)
    CASES.append(OpCase("DENSIFY", name, lambda: densify_model(dense, order, fmts, block_size, block_map, idx_dtype),
                        lambda rng: [], gpu=False))


add_densify("csr_2d", [4, 6], [0, 1], ["DENSE", "SPARSE_CSR"])
add_densify("both_sparse", [5, 7], [0, 1], ["SPARSE_CSR", "SPARSE_CSR"], density=0.2)
add_densify("all_dense", [3, 4], [0, 1], ["DENSE", "DENSE"])
add_densify("transposed_order", [4, 5], [1, 0], ["DENSE", "SPARSE_CSR"])
add_densify("3d", [2, 3, 4], [0, 1, 2], ["DENSE", "SPARSE_CSR", "SPARSE_CSR"])
add_densify("block_2x2", [4, 6], [0, 1, 2, 3], ["DENSE", "SPARSE_CSR", "DENSE", "DENSE"],
            block_size=(2, 2), block_map=(0, 1), block=(2, 2), density=0.5)
add_densify("block_1x4", [3, 8], [0, 1, 2], ["DENSE", "SPARSE_CSR", "DENSE"], block_size=(4,), block_map=(1,),
            block=(1, 4), density=0.5)
add_densify("block_4x1_uint8_index", [8, 3], [0, 1, 2], ["DENSE", "SPARSE_CSR", "DENSE"], block_size=(4,),
            block_map=(0,), block=(4, 1), density=0.5, idx_dtype=np.uint8)
add_densify("uint16_index", [6, 10], [0, 1], ["DENSE", "SPARSE_CSR"], idx_dtype=np.uint16)
add_densify("very_sparse", [6, 10], [0, 1], ["SPARSE_CSR", "SPARSE_CSR"], density=0.05)
add_densify("int8", [4, 6], [0, 1], ["DENSE", "SPARSE_CSR"], dt=I8)
add_densify("float16", [4, 6], [0, 1], ["DENSE", "SPARSE_CSR"], dt=F16)
add_densify("fc_weights_16x32", [16, 32], [0, 1, 2], ["DENSE", "SPARSE_CSR", "DENSE"], block_size=(4,),
            block_map=(1,), block=(1, 4), density=0.4)


# ================================================================ resized inputs and op chains
add("CONCATENATION", "resized_inputs", [In([1, 3], data_shape=[4, 3]), In([1, 2], data_shape=[4, 2])],
    [([1, 5], F32)], dict(axis=1))
add("GATHER", "resized_input", [In([2, 3], data_shape=[5, 7]), np.array([1, 0, 4], np.int32)], [([3, 3], F32)],
    dict(axis=1))
add("PAD", "resized_input", [In([1, 2, 2, 1], data_shape=[2, 5, 3, 4]), np.array(_pads4, np.int32)],
    [(padded([1, 2, 2, 1], _pads4), F32)])
add("TRANSPOSE", "resized_input", [In([1, 2, 3], data_shape=[3, 4, 5]), np.array([2, 0, 1], np.int32)],
    [([3, 1, 2], F32)])
add("STRIDED_SLICE", "resized_input", [In([4, 4], data_shape=[6, 9]), np.array([1, -1], np.int32),
                                       np.array([-1, 0], np.int32), np.array([1, -2], np.int32)], [([2, 2], F32)])
add("RESHAPE", "resized_input_minus1", [In([2, 6], data_shape=[5, 6])], [([12, 1], F32)], dict(new_shape=[-1, 3]))
add("SHAPE", "resized_input", [In([1, 2], data_shape=[7, 3])], [([2], I32)], dict(out_type="INT32"))


def chain_shape_reshape_transpose():
    """SHAPE(x) feeds a RESHAPE whose output (dynamic) feeds TRANSPOSE, then CONCATENATION."""
    mb = ModelBuilder()
    x = mb.add_input([2, 3, 4], name="x")
    y = mb.add_input([24], name="y")
    s = mb.add_tensor([3], np.int32, name="shape")
    mb.add_op("SHAPE", [x], [s], options=dict(out_type="INT32"))
    r = mb.add_tensor([2, 3, 4], name="reshaped")
    mb.add_op("RESHAPE", [y, s], [r])
    t = mb.add_tensor([4, 2, 3], name="transposed")
    mb.add_op("TRANSPOSE", [r, mb.add_const(np.array([2, 0, 1], np.int32))], [t])
    c = mb.add_tensor([4, 4, 3], name="concat")
    mb.add_op("CONCATENATION", [t, t], [c], options=dict(axis=1))
    p = mb.add_tensor([6, 4, 3], name="padded")
    mb.add_op("PAD", [c, mb.add_const(np.array([[1, 1], [0, 0], [0, 0]], np.int32))], [p])
    mb.mark_output(p)
    return mb.build()


CASES.append(OpCase("RESHAPE", "chain_from_shape_dynamic", chain_shape_reshape_transpose,
                    lambda rng: [rand(rng, [2, 3, 4], F32), rand(rng, [24], F32)], gpu=False))


def chain_folded_constants():
    """Constant weights reshaped, gathered and sliced (all folded once), then joined to an input."""
    mb = ModelBuilder()
    w = mb.add_const(np.arange(48, dtype=np.float32).reshape(6, 8))
    r = mb.add_tensor([8, 6])
    mb.add_op("RESHAPE", [w, mb.add_const(np.array([8, 6], np.int32))], [r])
    g = mb.add_tensor([3, 6])
    mb.add_op("GATHER", [r, mb.add_const(np.array([7, 0, 3], np.int32))], [g], options=dict(axis=0))
    sl = mb.add_tensor([3, 3])
    mb.add_op("STRIDED_SLICE", [g] + [mb.add_const(np.array(v, np.int32)) for v in ([0, 0], [3, 6], [1, 2])], [sl],
              options=dict())
    x = mb.add_input([2, 3])
    c = mb.add_tensor([5, 3])
    mb.add_op("CONCATENATION", [sl, x], [c], options=dict(axis=0))
    mb.mark_output(c)
    return mb.build()


CASES.append(OpCase("GATHER", "chain_folded_constants", chain_folded_constants,
                    lambda rng: [rand(rng, [2, 3], F32)], gpu=False))


# ================================================================ GPU delegate (the *_gpu.cc generators)
# Cases the GPU delegate legitimately refuses (or never sees), and layout cases for its kernel
# paths: slice kernels (channels line up on multiples of 4) and lane kernels.
_GPU_REFUSED = {
    "CONCATENATION-const_scalars": "constant folded at allocation: no node reaches the delegate",
    "CONCATENATION-rank6": "rank 6: the GPU takes rank <= 4",
    "CONCATENATION-zero_size_part": "a zero-sized input: zero-sized tensors stay on the CPU",
    "GATHER-empty_indices": "zero-sized output",
    "PAD-5d_int32": "rank 5", "PAD-5d_int64": "rank 5",
    "PAD-zero_dim_int32": "zero-sized tensors", "PAD-zero_dim_int64": "zero-sized tensors",
    "PADV2-1d": "pad value 1e10 overflows the fp16 storage of the F32_F16 mode (PADV2-1d_fp16_range covers it)",
    "RESHAPE-const_input_folded": "constant folded at allocation",
    "RESHAPE-to_scalar_empty_shape": "the zero-element shape tensor makes the CPU output dynamic",
    "RESHAPE-zero_elements": "zero-sized tensors",
    "SLICE-5d_int32": "rank 5", "SLICE-5d_int64": "rank 5", "SLICE-6d_int32": "rank 6", "SLICE-6d_int64": "rank 6",
    "SLICE-empty_int32": "zero-sized output", "SLICE-empty_int64": "zero-sized output",
    "STRIDED_SLICE-5d": "rank 5", "STRIDED_SLICE-5d_neg": "rank 5", "STRIDED_SLICE-6d": "rank 6",
    "STRIDED_SLICE-all_const_folded": "constant folded at allocation",
    "STRIDED_SLICE-empty_result": "zero-sized output",
    "TRANSPOSE-5d": "rank 5", "TRANSPOSE-6d": "rank 6",
    "PAD-rank0": "the zero-element paddings tensor makes the CPU output dynamic",
    "STRIDED_SLICE-rank0": "the zero-element index tensors make the CPU output dynamic",
    "MIRROR_PAD-symmetric_zero_dim": "zero-sized input",
}
for _c in CASES:
    if _c.id in _GPU_REFUSED:
        _c.gpu = False
        _c.note = "GPU: " + _GPU_REFUSED[_c.id]

add("PADV2", "1d_fp16_range", [In([4]), np.array([[3, 0]], np.int32), np.array([1e3], np.float32)], [([7], F32)])
add("PADV2", "gpu_channels_value", [In([1, 3, 2, 5]), np.array([[0, 0], [1, 0], [0, 1], [2, 3]], np.int32),
                                    np.array([2.5], np.float32)], [([1, 4, 3, 10], F32)])
add("PADV2", "gpu_channels_right_value", [In([1, 2, 2, 4]), np.array([[0, 0], [0, 0], [1, 0], [0, 3]], np.int32),
                                          np.array([-1.5], np.float32)], [([1, 2, 3, 7], F32)])
add("PAD", "gpu_channels_right_zero", [In([2, 3, 3, 5]), np.array([[1, 0], [0, 0], [0, 0], [0, 6]], np.int32)],
    [([3, 3, 3, 11], F32)])
add("PAD", "gpu_channels_left4", [In([1, 2, 3, 6]), np.array([[0, 0], [0, 1], [0, 0], [4, 0]], np.int32)],
    [([1, 3, 3, 10], F32)])
add("MIRROR_PAD", "gpu_reflect_channels", [In([1, 3, 4, 6]), np.array([[0, 0], [1, 1], [0, 2], [2, 3]], np.int32)],
    [([1, 5, 6, 11], F32)], dict(mode="REFLECT"))
add("MIRROR_PAD", "gpu_symmetric_batch", [In([3, 2, 2, 8]), np.array([[2, 3], [0, 0], [1, 0], [0, 0]], np.int32)],
    [([8, 2, 3, 8], F32)], dict(mode="SYMMETRIC"))
add("DEPTH_TO_SPACE", "gpu_aligned", [In([2, 2, 3, 32])], [([2, 4, 6, 8], F32)], dict(block_size=2))
add("SPACE_TO_DEPTH", "gpu_aligned", [In([2, 4, 6, 8])], [([2, 2, 3, 32], F32)], dict(block_size=2))
add("SPACE_TO_DEPTH", "gpu_bs3_c6", [In([1, 6, 3, 6])], [([1, 2, 1, 54], F32)], dict(block_size=3))
add("RESHAPE", "gpu_vec4", [In([2, 4, 8]), np.array([4, 16], np.int32)], [([4, 16], F32)])
add("RESHAPE", "gpu_pixels", [In([1, 8, 8, 6]), np.array([2, 32, 6], np.int32)], [([2, 32, 6], F32)])
add("RESHAPE", "gpu_lanes", [In([2, 3, 5]), np.array([5, 2, 3], np.int32)], [([5, 2, 3], F32)])
add("RESHAPE", "gpu_logits", [In([1, 1, 1, 1001]), np.array([1, 1001], np.int32)], [([1, 1001], F32)])
add("CONCATENATION", "gpu_channels_aligned", [In([1, 2, 3, 4]), In([1, 2, 3, 8]), In([1, 2, 3, 3])],
    [([1, 2, 3, 15], F32)], dict(axis=3))
add("CONCATENATION", "gpu_width_odd", [In([2, 3, 2, 5]), In([2, 3, 4, 5]), In([2, 3, 1, 5])], [([2, 3, 7, 5], F32)],
    dict(axis=2))
add("CONCATENATION", "gpu_batch_2d", [In([2, 6]), In([3, 6])], [([5, 6], F32)], dict(axis=0))
for _name, _shape, _perm in [("gpu_swap_hw", [2, 3, 5, 6], [0, 2, 1, 3]), ("gpu_c_to_b", [2, 3, 4, 5], [3, 1, 2, 0]),
                             ("gpu_pairs", [2, 3, 4, 5], [1, 0, 3, 2]), ("gpu_3d", [3, 4, 6], [1, 2, 0])]:
    add("TRANSPOSE", _name, [In(_shape), np.array(_perm, np.int32)], [([_shape[p] for p in _perm], F32)])
ss("gpu_channels_aligned", [1, 4, 4, 12], [0, 1, 0, 4], [1, 4, 4, 12], [1, 2, 1, 1], [1, 2, 4, 8])
ss("gpu_channels_neg", [2, 3, 4, 7], [0, 2, 0, 6], [2, 0, 4, 0], [1, -1, 3, -2], [2, 2, 2, 3], begin_mask=1, end_mask=1)
ss("gpu_shrink_middle", [2, 3, 8], [0, 1, 0], [2, 2, 8], [1, 1, 1], [2, 8], shrink_axis_mask=2)
ss("gpu_shrink_new_axis", [3, 5, 6], [1, 0, 0, 2], [2, 0, 5, 6], [1, 1, 1, 2], [1, 5, 2], shrink_axis_mask=1,
   new_axis_mask=2)
add("SLICE", "gpu_channels_aligned", [In([2, 3, 4, 16]), np.array([1, 0, 1, 8], np.int32),
                                      np.array([1, 3, 2, 5], np.int32)], [([1, 3, 2, 5], F32)])
add("SPLIT", "gpu_channels_aligned", [np.array([3], np.int32), In([1, 3, 3, 16])], [([1, 3, 3, 8], F32)] * 2,
    dict(num_splits=2))
add("SPLIT", "gpu_height", [np.array([1], np.int32), In([2, 6, 3, 5])], [([2, 2, 3, 5], F32)] * 3, dict(num_splits=3))
add("GATHER", "gpu_vec4", [In([3, 5, 8]), np.array([4, 0, 2, 2], np.int32)], [([3, 4, 8], F32)], dict(axis=1))
add("GATHER", "gpu_channels", [In([2, 3, 7]), np.array([6, 1], np.int32)], [([2, 3, 2], F32)], dict(axis=2))
add("PACK", "gpu_4d_out", [In([2, 3, 5]) for _ in range(3)], [([2, 3, 3, 5], F32)], dict(values_count=3, axis=2))
add("UNPACK", "gpu_4d_in", [In([2, 3, 4, 5])], [([2, 3, 5], F32)] * 4, dict(num=4, axis=2))

# ================================================================ quantized tensors (issue 7)
# Data movement on int8 / uint8 / int16 tensors carrying quantization parameters, against LiteRT's
# builtin kernels; each case names the quantized kernel it covers (OpCase.quant). Zero points at
# the type's edges; int16 symmetric (TFLite's 16x8 activations).
from tflite_gpu.testing.quant import quant_kind  # noqa: E402

_QT = [(I8, dict(scale=[0.05], zero_point=[-128])), (I8, dict(scale=[0.2], zero_point=[7])),
       (U8, dict(scale=[0.1], zero_point=[255])), (U8, dict(scale=[0.03], zero_point=[128])),
       (I16, dict(scale=[0.001], zero_point=[0]))]


def qadd(op, name, ins, outs, options=None, version=1, **kw):
    dt = next(x.dt for x in ins if isinstance(x, In) and x.quant is not None)
    add(op, f"q_{name}", ins, outs, options, version, quant=quant_kind(dt), gpu=False, **kw)


for i, (dt, q) in enumerate(_QT):
    t, v = f"{tname(dt)}_{i}", 2 if dt != I16 else 3
    qadd("RESHAPE", t, [In([2, 3, 4], dt, quant=q), np.array([4, 6], np.int32)], [([4, 6], dt, q)])
    qadd("TRANSPOSE", t, [In([2, 3, 4, 5], dt, quant=q), np.array([0, 3, 1, 2], np.int32)], [([2, 5, 3, 4], dt, q)],
         version=v)
    qadd("SLICE", t, [In([3, 4, 5], dt, quant=q), np.array([1, 0, 2], np.int32), np.array([2, -1, 2], np.int32)],
         [([2, 4, 2], dt, q)], version=v)
    ins = [In([2, 8, 8, 3], dt, quant=q)] + [np.array(a, np.int32) for a in ([0, 1, 2, 0], [2, 7, 6, 3], [1, 2, 1, 1])]
    qadd("STRIDED_SLICE", t, ins, [([2, 3, 4, 3], dt, q)], dict(begin_mask=0, end_mask=0), version=v)
    qadd("GATHER", t, [In([5, 3, 4], dt, quant=q), np.array([4, 0, 2, 2], np.int32)], [([4, 3, 4], dt, q)],
         dict(axis=0), version=v)
    qadd("SPLIT", t, [np.array([3], np.int32), In([1, 3, 3, 6], dt, quant=q)], [([1, 3, 3, 2], dt, q)] * 3,
         dict(num_splits=3), version=v)
    qadd("PACK", t, [In([2, 3], dt, quant=q), In([2, 3], dt, quant=q)], [([2, 2, 3], dt, q)],
         dict(values_count=2, axis=1), version=v)
    qadd("UNPACK", t, [In([2, 3, 2], dt, quant=q)], [([2, 2], dt, q)] * 3, dict(num=3, axis=1), version=v)
    qadd("CONCATENATION", t, [In([1, 4, 4, 3], dt, quant=q), In([1, 4, 4, 5], dt, quant=q)],
         [([1, 4, 4, 8], dt, q)], dict(axis=3), version=v)
    qadd("PAD", t, [In([1, 3, 3, 2], dt, quant=q), np.array(_pads4, np.int32)],
         [(padded([1, 3, 3, 2], _pads4), dt, q)], version=v)
    qadd("PADV2", t, [In([1, 3, 3, 2], dt, quant=q), np.array(_pads4, np.int32), (np.array([5], dt), q)],
         [(padded([1, 3, 3, 2], _pads4), dt, q)], version=v)
    for mode in ("REFLECT", "SYMMETRIC"):
        qadd("MIRROR_PAD", f"{t}_{mode.lower()}", [In([2, 3, 4], dt, quant=q),
                                                  np.array([[1, 1], [2, 1], [1, 2]], np.int32)],
             [([4, 6, 7], dt, q)], dict(mode=mode), version=2)
    if dt != I16:
        qadd("SPACE_TO_DEPTH", t, [In([2, 4, 6, 3], dt, quant=q)], [([2, 2, 3, 12], dt, q)], dict(block_size=2),
             version=2)
        qadd("DEPTH_TO_SPACE", t, [In([2, 2, 3, 12], dt, quant=q)], [([2, 4, 6, 3], dt, q)], dict(block_size=2),
             version=2)

# CONCATENATION rescales each uint8 input whose (scale, zero point) differs from the output's; for
# int8 / int16 TFLite requires them equal (refused at prepare: tests/test_quant_errors.py).
qadd("CONCATENATION", "rescale_uint8",
     [In([2, 3, 2], U8, quant=q) for q in [dict(scale=[0.5], zero_point=[10]), dict(scale=[0.25], zero_point=[128]),
                                           dict(scale=[1.0], zero_point=[0]), dict(scale=[0.01], zero_point=[255])]],
     [([2, 12, 2], U8, dict(scale=[0.75], zero_point=[20]))], dict(axis=1), version=2)
