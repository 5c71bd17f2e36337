"""Shape family, second part: EXPAND_DIMS, SQUEEZE, RANK, BROADCAST_ARGS, ZEROS_LIKE, FILL, RANGE,
TILE, BROADCAST_TO, REVERSE_V2, REVERSE_SEQUENCE, SPLIT_V, SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND,
GATHER_ND, SCATTER_ND, ONE_HOT, EMBEDDING_LOOKUP, MATRIX_DIAG, MATRIX_SET_DIAG, DYNAMIC_UPDATE_SLICE,
SPARSE_TO_DENSE, BUCKETIZE, SEGMENT_SUM, UNSORTED_SEGMENT_*, TOPK_V2, UNIQUE.

Oracle: LiteRT (BUILTIN_WITHOUT_DEFAULT_DELEGATES) for every dtype its kernel accepts (the LITERT_*
sets below were probed against ai-edge-litert 2.3); numpy (np.tile, np.flip, ...) for the dtypes
it refuses, with that reason in the note. Inputs given a fixed `value` are graph inputs whose data
decides the output shape: the op's output is then dynamic, as in TFLite."""
import numpy as np

from harness import OpCase
from op_cases.shape import ALL_TYPES, BOOL, F16, F32, I8, I16, I32, I64, U8, In, build, gen, rand, tname

CASES = []
NOT_IN_LITERT = "LiteRT's kernel refuses this dtype; numpy oracle"


def add(op, name, ins, outs, options=None, version=1, ref=None, **kw):
    kwargs = dict(kw)
    graph_ins = [x for x in ins if isinstance(x, In)]
    static = all(x.value is None for x in graph_ins)
    f32 = all(np.dtype(x.dt) == np.float32 for x in graph_ins) and all(np.dtype(o[1]) == np.float32 for o in outs)
    kwargs.setdefault("gpu", False)
    if ref is not None:
        kwargs.update(oracle="numpy", ref_fn=ref)
        kwargs.setdefault("note", NOT_IN_LITERT)
    CASES.append(OpCase(op, name, lambda: build(op, ins, outs, options, version), gen(ins), **kwargs))
    return static and f32


def dts(names):
    return {np.dtype(n) for n in names}


def pick(dt, litert_set, fn):
    """None (LiteRT oracle) when LiteRT takes dt, else the numpy reference fn."""
    return None if np.dtype(dt) in litert_set else fn


EXTRA_TYPES = ALL_TYPES + [np.uint16, np.uint32, np.float64]

# ================================================================ EXPAND_DIMS
for name, shape, axis in [("axis0", [2, 3], 0), ("axis_mid", [2, 3], 1), ("axis_end", [2, 3], 2),
                          ("axis_neg1", [2, 3, 4], -1), ("axis_neg_all", [2, 3], -3), ("scalar_in", [], 0),
                          ("empty", [0, 3], 1)]:
    oshape = list(shape)
    ax = axis if axis >= 0 else axis + len(shape) + 1
    oshape.insert(ax, 1)
    add("EXPAND_DIMS", name, [In(shape), np.array(axis, np.int32)], [(oshape, F32)])
add("EXPAND_DIMS", "axis_1elem_int64", [In([2, 3]), np.array([1], np.int64)], [([2, 1, 3], F32)])
add("EXPAND_DIMS", "dynamic_axis", [In([2, 3]), In([], I32, value=np.array(-1, np.int32))], [([2, 3, 1], F32)])
for dt in EXTRA_TYPES:
    add("EXPAND_DIMS", "type_" + tname(dt), [In([2, 3], dt), np.array(0, np.int32)], [([1, 2, 3], dt)])

# ================================================================ SQUEEZE
for name, shape, dims, oshape in [("all", [1, 2, 1, 3, 1], [], [2, 3]), ("one", [1, 2, 1, 3], [2], [1, 2, 3]),
                                  ("neg", [2, 1, 3, 1], [-1, 1], [2, 3]), ("to_scalar", [1, 1], [], []),
                                  ("none_to_drop", [2, 3], [], [2, 3]), ("empty", [0, 1, 2], [1], [0, 2]),
                                  ("repeated", [1, 2], [0, -2], [2])]:
    add("SQUEEZE", name, [In(shape)], [(oshape, F32)], dict(squeeze_dims=dims))
add("SQUEEZE", "no_options", [In([1, 3, 1])], [([3], F32)])
for dt in EXTRA_TYPES:
    add("SQUEEZE", "type_" + tname(dt), [In([1, 2, 1, 3], dt)], [([2, 3], dt)], dict(squeeze_dims=[0, 2]),
        version=2)

# ================================================================ RANK
for name, shape, dt in [("4d", [1, 2, 3, 4], F32), ("scalar", [], I32), ("empty", [0, 5], F32),
                        ("bool", [2, 2, 2], BOOL), ("int8", [3], I8)]:
    add("RANK", name, [In(shape, dt)], [([], I32)])

# ================================================================ BROADCAST_ARGS
for name, a, b in [("same", [2, 3], [2, 3]), ("ones", [1, 3, 1], [4, 1, 5]), ("ranks", [5], [2, 3, 1]),
                   ("empty_shape", [], [4, 2]), ("zero_dim", [0, 1], [1, 7])]:
    for st in (I32, I64):
        a_ = np.array(a, st)
        b_ = np.array(b, st)
        add("BROADCAST_ARGS", f"{name}_{tname(st)}", [In([len(a)], st, value=a_), In([len(b)], st, value=b_)],
            [([max(len(a), len(b))], st)])
add("BROADCAST_ARGS", "const", [np.array([3, 1], np.int32), np.array([1, 4], np.int32)], [([2], I32)])

# ================================================================ ZEROS_LIKE
_LITERT_ZEROS = dts(["float32", "int32", "int64"])
for dt in EXTRA_TYPES:
    add("ZEROS_LIKE", "type_" + tname(dt), [In([2, 3, 4], dt)], [([2, 3, 4], dt)],
        ref=pick(dt, _LITERT_ZEROS, lambda x: [np.zeros_like(x)]))
add("ZEROS_LIKE", "empty", [In([3, 0])], [([3, 0], F32)])
add("ZEROS_LIKE", "scalar", [In([], I64)], [([], I64)])

# ================================================================ FILL
for name, dims, dt in [("2d_f32", [2, 3], F32), ("scalar_out", [], I32), ("4d_i64", [1, 2, 3, 2], I64),
                       ("empty", [3, 0], F32)]:
    for st in (I32, I64):
        add("FILL", f"{name}_{tname(st)}", [np.array(dims, st), In([], dt)], [(dims, dt)])
for dt in EXTRA_TYPES:
    add("FILL", "type_" + tname(dt), [np.array([3, 2], np.int32), In([], dt)], [([3, 2], dt)], version=4)
add("FILL", "dynamic_dims", [In([3], I32, value=np.array([2, 4, 1], np.int32)), In([], F32)], [([2, 4, 1], F32)])
add("FILL", "dynamic_dims_int64", [In([2], I64, value=np.array([5, 3], np.int64)), In([], I8)], [([5, 3], I8)])
_qf = dict(scale=[0.25], zero_point=[-3])
add("FILL", "int8_quant", [np.array([2, 3], np.int32), In([], I8, quant=_qf)], [([2, 3], I8, _qf)], version=3)
add("FILL", "int16_quant", [np.array([4], np.int32), In([], I16, quant=dict(scale=[0.5], zero_point=[0]))],
    [([4], I16, dict(scale=[0.5], zero_point=[0]))], version=4)

# ================================================================ RANGE
for name, s, l, d, dt in [("int_up", 0, 10, 3, I32), ("int_down", 10, -4, -3, I32), ("int_exact", 2, 8, 2, I32),
                          ("int_empty", 5, 5, 1, I32), ("i64", -7, 30, 4, I64), ("float", 0.5, 3.2, 0.3, F32),
                          ("float_down", 1.0, -2.0, -0.25, F32), ("float_empty", 1.0, 1.0, 0.5, F32)]:
    vals = [np.array(v, dt) for v in (s, l, d)]
    n = len(np.arange(s, l, d, dtype=np.float64)) if dt == F32 else len(range(s, l, d))
    # LiteRT's Python get_tensor fails on an empty dynamic output ("Invalid tensor size"): numpy oracle there.
    ref = (lambda *a, dt=dt: [np.zeros([0], dt)]) if n == 0 else None
    kw = dict(note="empty dynamic output: LiteRT's get_tensor cannot read it; numpy oracle") if n == 0 else {}
    add("RANGE", name, [In([], dt, value=v) for v in vals], [([n], dt)], version=2 if dt == I64 else 1, ref=ref, **kw)
    add("RANGE", name + "_const", vals, [([n], dt)], version=2 if dt == I64 else 1, ref=ref, **kw)

# ================================================================ TILE
for name, shape, mult in [("2d", [2, 3], [2, 3]), ("4d", [1, 2, 3, 2], [2, 1, 2, 3]), ("ones", [3, 4], [1, 1]),
                          ("1d", [5], [4]), ("zero_mult", [2, 3], [0, 2]), ("empty_in", [0, 3], [3, 2]),
                          ("inner_only", [2, 2, 4], [1, 1, 5]), ("outer_only", [2, 2, 4], [3, 1, 1]),
                          ("scalar", [], [])]:
    oshape = [a * b for a, b in zip(shape, mult)]
    for mt in (I32, I64):
        add("TILE", f"{name}_{tname(mt)}", [In(shape), np.array(mult, mt)], [(oshape, F32)],
            gpu=(mt == I32 and 0 not in oshape and len(shape) > 0))
for dt in EXTRA_TYPES:
    add("TILE", "type_" + tname(dt), [In([2, 1, 3], dt), np.array([2, 3, 1], np.int32)], [([4, 3, 3], dt)],
        version=3 if dt in (I8, I16) else 1)
add("TILE", "dynamic_multiples", [In([2, 3]), In([2], I32, value=np.array([3, 2], np.int32))], [([6, 6], F32)])
add("TILE", "large", [In([1, 32, 32, 8]), np.array([2, 2, 2, 1], np.int32)], [([2, 64, 64, 8], F32)], gpu=True)

# ================================================================ BROADCAST_TO
for name, shape, to in [("row", [1, 3], [4, 3]), ("col", [3, 1], [3, 5]), ("rank_up", [3], [2, 4, 3]),
                        ("scalar", [], [2, 2]), ("same", [2, 3], [2, 3]), ("4d_mixed", [2, 1, 3, 1], [2, 4, 3, 5]),
                        ("to_zero", [1, 3], [0, 3]), ("5d", [1, 2, 1, 1, 2], [2, 2, 3, 1, 2])]:
    for st in (I32, I64):
        add("BROADCAST_TO", f"{name}_{tname(st)}", [In(shape), np.array(to, st)], [(to, F32)], version=2)
for dt in EXTRA_TYPES:
    add("BROADCAST_TO", "type_" + tname(dt), [In([2, 1], dt), np.array([3, 2, 4], np.int32)], [([3, 2, 4], dt)],
        version=3)
add("BROADCAST_TO", "dynamic_shape", [In([1, 3]), In([3], I32, value=np.array([2, 2, 3], np.int32))],
    [([2, 2, 3], F32)], version=2)
for v in (2, 3, 4):
    add("BROADCAST_TO", f"v{v}", [In([3]), np.array([2, 3], np.int32)], [([2, 3], F32)], version=v)

# ================================================================ REVERSE_V2
_LITERT_REV = dts(["float32", "float16", "int32", "int64", "uint8", "int8", "int16", "bool"])
for name, shape, axes in [("axis0", [3, 4], [0]), ("axis_last", [2, 3, 5], [2]), ("axis_mid", [2, 3, 5], [1]),
                          ("neg", [2, 3, 5], [-2]), ("two_consecutive", [2, 3, 4], [1, 2]),
                          ("4d", [2, 3, 4, 2], [3]), ("empty", [0, 3], [1])]:
    # GPU kernel (constant axes, rank <= 4, not empty): newer TFLite GPU delegates take REVERSE_V2.
    add("REVERSE_V2", name, [In(shape), np.array(axes, np.int32)], [(shape, F32)], version=3 if len(axes) > 1 else 1,
        gpu=0 not in shape)
add("REVERSE_V2", "non_consecutive", [In([2, 3, 4]), np.array([0, 2], np.int32)], [([2, 3, 4], F32)],
    ref=lambda x: [np.flip(x, (0, 2))], note="LiteRT reverses consecutive axes only; numpy oracle", gpu=True)
add("REVERSE_V2", "all_axes_4d", [In([2, 3, 5, 6]), np.array([0, 1, 2, 3], np.int32)], [([2, 3, 5, 6], F32)],
    version=3, gpu=True)
add("REVERSE_V2", "no_axes", [In([2, 3]), np.zeros([0], np.int32)], [([2, 3], F32)], ref=lambda x: [x],
    note="LiteRT 2.3 crashes (segfault) on an empty axis list; numpy oracle", gpu=True)
add("REVERSE_V2", "dynamic_axis", [In([3, 4]), In([1], I32, value=np.array([1], np.int32))], [([3, 4], F32)])
for dt in EXTRA_TYPES:
    add("REVERSE_V2", "type_" + tname(dt), [In([3, 4], dt), np.array([1], np.int32)], [([3, 4], dt)],
        version=2, ref=pick(dt, _LITERT_REV, lambda x: [np.flip(x, 1)]))

# ================================================================ REVERSE_SEQUENCE
_LITERT_REVSEQ = dts(["float32", "int32", "int64", "uint8", "int16"])


def np_revseq(x, lens, sd, bd):
    y = x.copy()
    for b, n in enumerate(lens):
        src = np.take(x, b, axis=bd)
        dst_slice = [slice(None)] * x.ndim
        dst_slice[bd] = b
        sd2 = sd if sd < bd else sd - 1
        part = np.take(src, range(n), axis=sd2)
        idx = [slice(None)] * src.ndim
        idx[sd2] = slice(0, n)
        sub = src.copy()
        sub[tuple(idx)] = np.flip(part, sd2)
        y[tuple(dst_slice)] = sub
    return y


for name, shape, lens, sd, bd in [("seq1_batch0", [3, 5, 2], [5, 2, 0], 1, 0), ("seq0_batch1", [4, 3], [1, 4, 2], 0, 1),
                                  ("seq2_batch0", [2, 3, 4], [3, 4], 2, 0)]:
    for lt in (I32, I64):
        add("REVERSE_SEQUENCE", f"{name}_{tname(lt)}", [In(shape), np.array(lens, lt)], [(shape, F32)],
            dict(seq_dim=sd, batch_dim=bd))
for dt in EXTRA_TYPES:
    add("REVERSE_SEQUENCE", "type_" + tname(dt), [In([2, 4], dt), np.array([3, 1], np.int32)], [([2, 4], dt)],
        dict(seq_dim=1, batch_dim=0),
        ref=pick(dt, _LITERT_REVSEQ, lambda x: [np_revseq(x, [3, 1], 1, 0)]))

# ================================================================ SPLIT_V
_LITERT_SPLITV = dts(["float32", "int32", "int64", "uint8", "int8", "int16"])
for name, shape, sizes, axis in [("axis1", [2, 7], [2, 5], 1), ("minus1", [6, 3], [1, -1, 2], 0),
                                 ("neg_axis", [2, 3, 6], [3, 2, 1], -1), ("zero_part", [4, 3], [0, 4], 0),
                                 ("single", [3, 2], [3], 0), ("4d_c", [1, 3, 3, 10], [4, 4, 2], 3)]:
    ax = axis % len(shape)
    sz = list(sizes)
    if -1 in sz:
        sz[sz.index(-1)] = shape[ax] - sum(s for s in sz if s >= 0)
    outs = []
    for s in sz:
        o = list(shape)
        o[ax] = s
        outs.append((o, F32))
    for st in (I32, I64):
        add("SPLIT_V", f"{name}_{tname(st)}", [In(shape), np.array(sizes, st), np.array(axis, np.int32)], outs,
            dict(num_splits=len(sizes)), gpu=(st == I32 and 0 not in sz))
add("SPLIT_V", "dynamic_sizes", [In([2, 6]), In([2], I32, value=np.array([4, 2], np.int32)), np.array(1, np.int32)],
    [([2, 4], F32), ([2, 2], F32)], dict(num_splits=2))
add("SPLIT_V", "dynamic_axis", [In([4, 6]), np.array([1, 3], np.int32), In([], I32, value=np.array(0, np.int32))],
    [([1, 6], F32), ([3, 6], F32)], dict(num_splits=2))
for dt in EXTRA_TYPES:
    add("SPLIT_V", "type_" + tname(dt), [In([2, 5], dt), np.array([2, 3], np.int32), np.array(1, np.int32)],
        [([2, 2], dt), ([2, 3], dt)], dict(num_splits=2), version=2,
        ref=pick(dt, _LITERT_SPLITV, lambda x: np.split(x, [2], axis=1)))


# ================================================================ SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND
def s2b_shape(shape, block, pads):
    o = list(shape)
    o[0] = shape[0] * int(np.prod(block))
    for i, b in enumerate(block):
        o[1 + i] = (shape[1 + i] + pads[i][0] + pads[i][1]) // b
    return o


def b2s_shape(shape, block, crops):
    o = list(shape)
    o[0] = shape[0] // int(np.prod(block))
    for i, b in enumerate(block):
        o[1 + i] = shape[1 + i] * b - crops[i][0] - crops[i][1]
    return o


for name, shape, block, pads in [("4d_2x2", [1, 4, 4, 3], [2, 2], [[0, 0], [0, 0]]),
                                 ("4d_pad", [2, 3, 5, 2], [2, 3], [[1, 0], [0, 1]]),
                                 ("4d_block1", [1, 2, 2, 1], [1, 1], [[0, 0], [0, 0]]),
                                 ("3d", [2, 5, 3], [3], [[1, 0]])]:
    for st in (I32,):
        add("SPACE_TO_BATCH_ND", f"{name}_{tname(st)}", [In(shape), np.array(block, st), np.array(pads, st)],
            [(s2b_shape(shape, block, pads), F32)])
for name, shape, block, crops in [("4d_2x2", [4, 2, 2, 3], [2, 2], [[0, 0], [0, 0]]),
                                  ("4d_crop", [12, 2, 2, 2], [2, 3], [[1, 0], [0, 2]]),
                                  ("3d", [6, 2, 3], [3], [[1, 2]])]:
    for st in (I32,):
        add("BATCH_TO_SPACE_ND", f"{name}_{tname(st)}", [In(shape), np.array(block, st), np.array(crops, st)],
            [(b2s_shape(shape, block, crops), F32)])
for dt in EXTRA_TYPES:
    add("SPACE_TO_BATCH_ND", "type_" + tname(dt),
        [In([1, 4, 2, 2], dt), np.array([2, 2], np.int32), np.array([[0, 0], [1, 1]], np.int32)],
        [([4, 2, 2, 2], dt)], version=2)
    add("BATCH_TO_SPACE_ND", "type_" + tname(dt),
        [In([4, 2, 2, 2], dt), np.array([2, 2], np.int32), np.array([[0, 1], [1, 0]], np.int32)],
        [([1, 3, 3, 2], dt)], version=2)
_qs = dict(scale=[0.5], zero_point=[-7])
add("SPACE_TO_BATCH_ND", "int8_zero_point_pad",
    [In([1, 2, 2, 1], I8, quant=_qs), np.array([2, 2], np.int32), np.array([[1, 1], [0, 2]], np.int32)],
    [([4, 2, 2, 1], I8, _qs)], version=2)
add("SPACE_TO_BATCH_ND", "uint8_zero_point_pad",
    [In([1, 3, 1, 2], U8, quant=dict(scale=[0.1], zero_point=[128])), np.array([2, 1], np.int32),
     np.array([[0, 1], [0, 0]], np.int32)],
    [([2, 2, 1, 2], U8, dict(scale=[0.1], zero_point=[128]))], version=1)
add("SPACE_TO_BATCH_ND", "dynamic_paddings",
    [In([1, 4, 4, 1]), np.array([2, 2], np.int32), In([2, 2], I32, value=np.array([[0, 2], [2, 0]], np.int32))],
    [([4, 3, 3, 1], F32)])
add("BATCH_TO_SPACE_ND", "dynamic_block",
    [In([4, 2, 2, 1]), In([2], I32, value=np.array([2, 2], np.int32)), np.array([[0, 0], [0, 0]], np.int32)],
    [([1, 4, 4, 1], F32)])

# ================================================================ GATHER_ND
_LITERT_GND = dts(["float32", "float16", "int32", "int64", "uint8", "int8", "int16", "bool"])
for name, shape, idx in [("full", [3, 4], [[0, 1], [2, 3], [1, 0]]), ("rows", [3, 4, 2], [[2], [0]]),
                         ("batch_idx", [4, 3, 2], [[[0, 1], [3, 2]], [[1, 1], [2, 0]]]),
                         ("scalar_out", [5], [[4]])]:
    idx = np.array(idx, np.int32)
    oshape = list(idx.shape[:-1]) + shape[idx.shape[-1]:]
    for it in (I32, I64, I16):
        add("GATHER_ND", f"{name}_{tname(it)}", [In(shape), idx.astype(it)], [(oshape, F32)],
            version=5 if it == I16 else 1)
add("GATHER_ND", "dynamic_indices", [In([3, 4]), In([2, 2], I32, value=np.array([[2, 3], [0, 0]], np.int32))],
    [([2], F32)])
for dt in EXTRA_TYPES:
    add("GATHER_ND", "type_" + tname(dt), [In([3, 4], dt), np.array([[1], [0], [2]], np.int32)], [([3, 4], dt)],
        version=4, ref=pick(dt, _LITERT_GND, lambda x: [x[[1, 0, 2]]]))

# ================================================================ SCATTER_ND
_LITERT_SND = dts(["float32", "int32", "int64", "uint8", "int8", "bool"])


def np_scatter(idx, upd, shape):
    out = np.zeros(shape, upd.dtype)
    k = idx.shape[-1]
    for i, u in zip(idx.reshape(-1, k), upd.reshape((-1,) + tuple(shape[k:]))):
        if out.dtype == np.bool_:
            out[tuple(i)] |= u
        else:
            out[tuple(i)] += u
    return out


for name, idx, shape in [("elements", [[0, 1], [2, 3], [1, 0]], [3, 4]), ("rows", [[2], [0]], [3, 4]),
                         ("duplicates", [[1], [1], [0], [1]], [3, 2]), ("3d_slices", [[[0, 1]], [[2, 0]]], [3, 2, 5])]:
    idx = np.array(idx, np.int32)
    ushape = list(idx.shape[:-1]) + shape[idx.shape[-1]:]
    for it in (I32,):  # LiteRT: INT32 indices only
        add("SCATTER_ND", f"{name}_{tname(it)}", [idx.astype(it), In(ushape), np.array(shape, it)], [(shape, F32)])
add("SCATTER_ND", "dynamic_shape", [np.array([[1], [3]], np.int32), In([2, 2]),
                                    In([2], I32, value=np.array([4, 2], np.int32))], [([4, 2], F32)])
add("SCATTER_ND", "dynamic_indices", [In([3, 1], I32, value=np.array([[2], [0], [2]], np.int32)), In([3]),
                                      np.array([4], np.int32)], [([4], F32)])
for dt in EXTRA_TYPES:
    _i = np.array([[1], [1], [3]], np.int32)
    if np.dtype(dt) not in {np.dtype(t) for t in (F32, F16, I32, I64, U8, I8, I16, BOOL)}:
        continue  # SCATTER_ND sums: arithmetic types only (and BOOL as or)
    add("SCATTER_ND", "type_" + tname(dt), [_i, In([3, 2], dt), np.array([4, 2], np.int32)], [([4, 2], dt)],
        ref=pick(dt, _LITERT_SND, lambda u, _i=_i: [np_scatter(_i, u, [4, 2])]))

# ================================================================ ONE_HOT
_LITERT_ONEHOT = dts(["float32", "int32", "int64", "uint8", "int8", "bool"])


def np_onehot(idx, depth, on, off, axis):
    out = np.where(np.expand_dims(idx, -1) == np.arange(depth), on, off)
    return np.moveaxis(out, -1, axis if axis >= 0 else idx.ndim)


for name, idx, depth, axis in [("1d", [0, 2, 1, 5, -1], 4, -1), ("2d_axis0", [[0, 1], [2, 3]], 3, 0),
                               ("2d_axis1", [[0, 1, 2], [2, 0, 1]], 3, 1), ("scalar", 2, 3, -1),
                               ("depth0", [1, 2], 0, -1)]:
    idx = np.array(idx, np.int32)
    oshape = list(idx.shape)
    oshape.insert(axis if axis >= 0 else idx.ndim, depth)
    for it in (I32, I64):
        add("ONE_HOT", f"{name}_{tname(it)}", [idx.astype(it), np.array(depth, np.int32), In([], F32), In([], F32)],
            [(oshape, F32)], dict(axis=axis))
add("ONE_HOT", "dynamic_indices", [In([4], I32, value=np.array([3, 0, 1, 7], np.int32)), np.array(4, np.int32),
                                   np.array(1.0, np.float32), np.array(0.0, np.float32)], [([4, 4], F32)],
    dict(axis=-1))
add("ONE_HOT", "dynamic_depth", [np.array([0, 2], np.int32), In([], I32, value=np.array(3, np.int32)),
                                 np.array(5.0, np.float32), np.array(-1.0, np.float32)], [([2, 3], F32)],
    dict(axis=-1))
add("ONE_HOT", "gpu_4d", [np.array([[0, 1, 3], [2, 2, 1]], np.int32), np.array(5, np.int32),
                          np.array(1.0, np.float32), np.array(0.0, np.float32)], [([2, 3, 5], F32)], dict(axis=-1),
    gpu=True)
for dt in EXTRA_TYPES:
    _ix = np.array([0, 3, 1], np.int32)
    add("ONE_HOT", "type_" + tname(dt), [_ix, np.array(4, np.int32), In([], dt), In([], dt)], [([3, 4], dt)],
        dict(axis=-1), ref=pick(dt, _LITERT_ONEHOT, lambda on, off, _ix=_ix: [np_onehot(_ix, 4, on, off, -1)]))

# ================================================================ EMBEDDING_LOOKUP
for name, ids, vshape in [("2d", [1, 0, 2, 1], [3, 4]), ("3d", [2, 2], [4, 2, 3]), ("empty_ids", [], [3, 2])]:
    add("EMBEDDING_LOOKUP", name, [np.array(ids, np.int32), In(vshape)], [([len(ids)] + vshape[1:], F32)])
add("EMBEDDING_LOOKUP", "dynamic_ids", [In([3], I32, value=np.array([2, 0, 2], np.int32)), In([3, 5])],
    [([3, 5], F32)])
for dt in EXTRA_TYPES:
    add("EMBEDDING_LOOKUP", "type_" + tname(dt), [np.array([2, 0], np.int32), In([3, 4], dt)], [([2, 4], dt)],
        version=3 if dt == I8 else 1)
add("EMBEDDING_LOOKUP", "hybrid_int8", [np.array([1, 2, 0], np.int32),
                                        (np.arange(-6, 6, dtype=np.int8).reshape(3, 4), dict(scale=[0.5], zero_point=[0]))],
    [([3, 4], F32)], version=2)
add("EMBEDDING_LOOKUP", "hybrid_uint8", [np.array([2, 0], np.int32),
                                         (np.arange(0, 120, 10, dtype=np.uint8).reshape(3, 4),
                                          dict(scale=[0.25], zero_point=[0]))], [([2, 4], F32)], version=2)
add("EMBEDDING_LOOKUP", "hybrid_per_row", [np.array([1, 2, 0], np.int32),
                                           (np.arange(-6, 6, dtype=np.int8).reshape(3, 4),
                                            dict(scale=[0.5, 0.25, 2.0], zero_point=[0, 0, 0], quantized_dimension=0))],
    [([3, 4], F32)], version=4)

# ================================================================ DYNAMIC_UPDATE_SLICE
for name, oshape, ushape, start in [("2d", [4, 5], [2, 3], [1, 1]), ("clamped", [4, 5], [2, 3], [3, -2]),
                                    ("full", [2, 3], [2, 3], [0, 0]), ("3d", [2, 4, 3], [1, 2, 3], [1, 2, 0]),
                                    ("empty_update", [3, 3], [0, 2], [1, 1])]:
    for st in (I32, I64):
        add("DYNAMIC_UPDATE_SLICE", f"{name}_{tname(st)}", [In(oshape), In(ushape), np.array(start, st)],
            [(oshape, F32)], version=2 if st == I64 else 1)
add("DYNAMIC_UPDATE_SLICE", "dynamic_start", [In([4, 4]), In([2, 2]), In([2], I32, value=np.array([2, 1], np.int32))],
    [([4, 4], F32)])
for dt in EXTRA_TYPES:
    add("DYNAMIC_UPDATE_SLICE", "type_" + tname(dt), [In([3, 4], dt), In([2, 2], dt), np.array([1, 2], np.int32)],
        [([3, 4], dt)], version=6)

# ================================================================ SPARSE_TO_DENSE
_LITERT_STD = dts(["float32", "int32", "int64", "uint8", "int8"])


def np_std(idx, shape, vals, dflt):
    out = np.full(shape, dflt, vals.dtype)
    idx = np.asarray(idx).reshape(len(np.atleast_1d(vals)) if np.ndim(vals) else -1, -1)
    for i, row in enumerate(idx):
        out[tuple(row)] = vals if np.ndim(vals) == 0 else vals[i]
    return out


for name, idx, shape, nvals in [("2d", [[0, 1], [2, 3], [1, 0]], [3, 4], 3), ("1d", [0, 3, 4], [6], 3),
                                ("scalar_value", [[0, 0], [1, 2]], [2, 3], 0), ("3d", [[0, 1, 1], [1, 0, 2]], [2, 2, 3], 2)]:
    for it in (I32, I64):
        vals = In([nvals]) if nvals else In([])
        add("SPARSE_TO_DENSE", f"{name}_{tname(it)}", [np.array(idx, it), np.array(shape, it), vals, In([])],
            [(shape, F32)], dict(validate_indices=False), version=2 if it == I64 else 1)
add("SPARSE_TO_DENSE", "dynamic_shape", [np.array([[0, 1], [1, 0]], np.int32),
                                         In([2], I32, value=np.array([2, 3], np.int32)), In([2]), In([])],
    [([2, 3], F32)], dict(validate_indices=False))
for dt in EXTRA_TYPES:
    _ix = np.array([[0, 1], [2, 0]], np.int32)
    add("SPARSE_TO_DENSE", "type_" + tname(dt), [_ix, np.array([3, 2], np.int32), In([2], dt), In([], dt)],
        [([3, 2], dt)], dict(validate_indices=False), version=3,
        ref=pick(dt, _LITERT_STD, lambda v, d, _ix=_ix: [np_std(_ix, [3, 2], v, d)]))


# ================================================================ helpers for the second group
_LITERT_DIAG = dts(["float32", "int32", "int64", "uint8", "int8"])  # bool: LiteRT writes garbage
_LITERT_SETDIAG = dts(["float32", "int32", "int64", "uint8", "int8"])  # bool: LiteRT writes garbage
_LITERT_TOPK = dts(["float32", "uint8", "int8", "int16", "int32", "int64"])
_LITERT_UNIQUE = dts(["float32", "int32", "int64", "int8", "uint8", "int16"])


def np_topk(x, k):
    idx = np.argsort(-x.astype(np.float64), axis=-1, kind="stable")[..., :k].astype(np.int32)
    return [np.take_along_axis(x, idx, -1), idx]


def np_unique(x, it):
    y, first, inv = np.unique(x, return_index=True, return_inverse=True)
    order = np.argsort(first)
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return [y[order], rank[inv.ravel()].astype(it)]

# ================================================================ MATRIX_DIAG / MATRIX_SET_DIAG
def np_diag(x):
    out = np.zeros(x.shape + x.shape[-1:], x.dtype)
    n = x.shape[-1]
    out[..., np.arange(n), np.arange(n)] = x
    return out


def np_set_diag(x, d):
    y = x.copy()
    k = min(x.shape[-2:])
    y[..., np.arange(k), np.arange(k)] = d
    return y


for name, shape in [("1d", [4]), ("2d", [2, 3]), ("3d", [2, 2, 3]), ("empty", [0, 3]), ("n0", [2, 0])]:
    add("MATRIX_DIAG", name, [In(shape)], [(shape + shape[-1:], F32)])
for name, shape in [("square", [3, 3]), ("wide", [2, 3, 5]), ("tall", [4, 2]), ("batch", [2, 2, 3, 3])]:
    k = min(shape[-2:])
    add("MATRIX_SET_DIAG", name, [In(shape), In(shape[:-2] + [k])], [(shape, F32)])
for dt in EXTRA_TYPES:
    add("MATRIX_DIAG", "type_" + tname(dt), [In([2, 3], dt)], [([2, 3, 3], dt)],
        ref=pick(dt, _LITERT_DIAG, lambda x: [np_diag(x)]))
    add("MATRIX_SET_DIAG", "type_" + tname(dt), [In([2, 3], dt), In([2], dt)], [([2, 3], dt)],
        ref=pick(dt, _LITERT_SETDIAG, lambda x, d: [np_set_diag(x, d)]))

# ================================================================ BUCKETIZE
_bounds = [-1.5, 0.0, 0.0, 2.5, 10.0]
for dt in (F32, np.float64, I32, I64):
    add("BUCKETIZE", "type_" + tname(dt), [In([3, 5], dt)], [([3, 5], I32)], dict(boundaries=_bounds))
add("BUCKETIZE", "exact_boundaries", [In([6], F32, value=np.array([-1.5, 0.0, 2.5, 10.0, -100, 11], np.float32))],
    [([6], I32)], dict(boundaries=_bounds))
add("BUCKETIZE", "no_boundaries", [In([4], F32)], [([4], I32)], dict(boundaries=[]))
add("BUCKETIZE", "empty", [In([0, 2], F32)], [([0, 2], I32)], dict(boundaries=[1.0]))

# ================================================================ SEGMENT_SUM / UNSORTED_SEGMENT_*
for name, shape, ids in [("rows", [5, 3], [0, 0, 1, 2, 2]), ("1d", [4], [0, 1, 1, 2]), ("single", [3, 2, 2], [0, 0, 0])]:
    for dt in (F32, I32):
        add("SEGMENT_SUM", f"{name}_{tname(dt)}", [In(shape, dt), np.array(ids, np.int32)],
            [([max(ids) + 1] + shape[1:], dt)])
add("SEGMENT_SUM", "dynamic_ids", [In([4, 2]), In([4], I32, value=np.array([0, 1, 1, 2], np.int32))], [([3, 2], F32)])
for op in ("UNSORTED_SEGMENT_SUM", "UNSORTED_SEGMENT_PROD", "UNSORTED_SEGMENT_MAX", "UNSORTED_SEGMENT_MIN"):
    for name, shape, ids, ns in [("rows", [5, 3], [2, 0, 2, 1, 0], 4), ("2d_ids", [2, 3, 2], [[0, 1, 0], [2, 2, 1]], 3),
                                 ("negative_id", [4], [1, -1, 0, 1], 2), ("1d", [6], [3, 3, 0, 1, 0, 3], 4)]:
        ids = np.array(ids, np.int32)
        for dt in (F32, I32):
            add(op, f"{name}_{tname(dt)}", [In(shape, dt), ids, np.array(ns, np.int32)],
                [([ns] + shape[ids.ndim:], dt)])
    add(op, "dynamic_ids", [In([4, 2]), In([4], I32, value=np.array([1, 0, 1, 2], np.int32)), np.array(3, np.int32)],
        [([3, 2], F32)])

# ================================================================ TOPK_V2
for name, shape, k in [("1d", [7], 3), ("2d", [3, 6], 2), ("k_all", [2, 5], 5), ("k0", [2, 4], 0), ("3d", [2, 3, 8], 4)]:
    add("TOPK_V2", name, [In(shape), np.array(k, np.int32)], [(shape[:-1] + [k], F32), (shape[:-1] + [k], I32)])
add("TOPK_V2", "ties", [In([2, 6], I32, value=np.array([[3, 1, 3, 3, 0, 1], [5, 5, 5, 5, 5, 5]], np.int32)),
                        np.array(4, np.int32)], [([2, 4], I32), ([2, 4], I32)])
add("TOPK_V2", "dynamic_k", [In([3, 5]), In([], I32, value=np.array(2, np.int32))], [([3, 2], F32), ([3, 2], I32)])
for dt in (F32, U8, I8, I16, I32, I64):
    add("TOPK_V2", "type_" + tname(dt), [In([3, 6], dt), np.array(3, np.int32)], [([3, 3], dt), ([3, 3], I32)],
        version=2 if dt in (I8, I16) else 1, ref=pick(dt, _LITERT_TOPK, lambda x: np_topk(x, 3)))
add("TOPK_V2", "int16_k_and_indices", [In([2, 5]), np.array(2, np.int16)], [([2, 2], F32), ([2, 2], I16)], version=3)

# ================================================================ UNIQUE
for name, vals in [("ints", [1, 1, 2, 4, 4, 4, 7, 8, 8]), ("all_same", [3, 3, 3]), ("distinct", [5, 4, 3, 2])]:
    for dt in (F32, I32, I64, I8, U8, I16):
        for it in (I32, I64):
            add("UNIQUE", f"{name}_{tname(dt)}_{tname(it)}", [In([len(vals)], dt, value=np.array(vals, dt))],
                [([len(vals)], dt), ([len(vals)], it)], dict(idx_out_type=tname(it).upper()),
                ref=pick(dt, _LITERT_UNIQUE, lambda x, it=it: np_unique(x, it)))
add("UNIQUE", "random_f32", [In([20], F32)], [([20], F32), ([20], I32)], dict(idx_out_type="INT32"))
add("UNIQUE", "random_small_ints", [In([30], I32, value=np.random.default_rng(3).integers(0, 6, 30).astype(np.int32))],
    [([30], I32), ([30], I32)], dict(idx_out_type="INT32"))
