"""STRING data through the builtin ops that LiteRT 2.3's builtin kernels run on strings: RESHAPE,
SQUEEZE, EXPAND_DIMS, GATHER (1-D params), GATHER_ND, SLICE, STRIDED_SLICE, TILE, FILL, EQUAL,
NOT_EQUAL, SHAPE and RANK (found by running single-op string models in LiteRT
BUILTIN_WITHOUT_DEFAULT_DELEGATES; the ops it refuses on strings are refused here too:
tests/test_string_ops.py). Oracle: LiteRT BUILTIN_WITHOUT_DEFAULT_DELEGATES, exact (tol 0; STRING
outputs are object arrays of bytes compared element by element).

Here these ops run their INT32 kernels on ids standing for the strings (runtime/string_tensor.h),
the same path for the fast and the reference kernels. CPU only: the GPU delegate takes no STRING
tensor.
"""
import numpy as np

from harness import OpCase
from tflite_gpu.testing.builder import ModelBuilder

I32, I64, BOOL = np.int32, np.int64, np.bool_
S = "STRING"

# Words with repeats (the comparisons need equal strings), the empty string, multi-byte UTF-8,
# embedded NUL and a long one.
_VOCAB = [b"", b"a", b"ab", b"abc", b"ba", "gr\u00fc\u00df".encode(), "\u65e5\u672c".encode(), b"x\x00y",
          b" lead", b"tail ", b"z" * 300]


def words(rng, shape):
    n = int(np.prod(shape))
    pick = rng.integers(0, len(_VOCAB), n)
    return np.array([_VOCAB[i] for i in pick], dtype=object).reshape(shape)


class Str:
    """A STRING graph input (model shape; optional data shape to resize to, fixed value)."""

    def __init__(self, shape, data_shape=None, value=None):
        self.shape = list(shape)
        self.data_shape = list(shape) if data_shape is None else list(data_shape)
        self.value = value


class Arr:
    """A non-string graph input with a fixed value (an index / shape tensor fed at invoke)."""

    def __init__(self, value):
        self.value = np.asarray(value)


def build(op, ins, outs, options=None, version=1):
    """ins: Str / Arr graph inputs, ndarray constants (object arrays: STRING constants);
    outs: (shape, dtype) tuples."""
    mb = ModelBuilder()
    idx = []
    for x in ins:
        if isinstance(x, Str):
            idx.append(mb.add_input(x.shape, S))
        elif isinstance(x, Arr):
            idx.append(mb.add_input(list(x.value.shape), x.value.dtype.type))
        elif isinstance(x, np.ndarray) and x.dtype == object:
            idx.append(mb.add_const(x, dtype=S))
        else:
            idx.append(mb.add_const(np.asarray(x)))
    o = []
    for shape, dt in outs:
        t = mb.add_tensor(list(shape), dt)
        mb.mark_output(t)
        o.append(t)
    mb.add_op(op, idx, o, options=options, version=version)
    return mb.build()


def gen(ins):
    def f(rng):
        out = []
        for x in ins:
            if isinstance(x, Str):
                out.append(x.value if x.value is not None else words(rng, x.data_shape))
            elif isinstance(x, Arr):
                out.append(x.value)
        return out
    return f


CASES = []


def add(op, name, ins, outs, options=None, version=1, **kw):
    kw.setdefault("note", "STRING data: CPU only")
    CASES.append(OpCase(op, "string_" + name, lambda: build(op, ins, outs, options, version), gen(ins),
                        tol=0.0, gpu=False, **kw))


# ---------------------------------------------------------------- RESHAPE / SQUEEZE / EXPAND_DIMS
add("RESHAPE", "shape_tensor", [Str([2, 3]), np.array([3, 2], I32)], [([3, 2], S)])
add("RESHAPE", "options", [Str([2, 3])], [([6], S)], dict(new_shape=[6]))
add("RESHAPE", "stretch", [Str([2, 2, 3]), np.array([-1, 2], I32)], [([6, 2], S)])
add("RESHAPE", "dynamic_shape", [Str([4, 3]), Arr(np.array([2, 6], I32))], [([2, 6], S)])
add("RESHAPE", "resized_input", [Str([2, 3], data_shape=[4, 3]), np.array([-1], I32)], [([6], S)])
add("RESHAPE", "empty", [Str([0, 3]), np.array([3, 0], I32)], [([3, 0], S)])
add("SQUEEZE", "dims", [Str([1, 3, 1, 2])], [([3, 2], S)], dict(squeeze_dims=[0, 2]))
add("SQUEEZE", "all", [Str([1, 4, 1])], [([4], S)])
add("EXPAND_DIMS", "axis0", [Str([3, 2]), np.array(0, I32)], [([1, 3, 2], S)])
add("EXPAND_DIMS", "axis_neg1", [Str([3]), np.array([-1], I64)], [([3, 1], S)])

# ---------------------------------------------------------------- GATHER / GATHER_ND
add("GATHER", "1d", [Str([6]), np.array([5, 0, 3, 3], I32)], [([4], S)], dict(axis=0))
add("GATHER", "2d_indices", [Str([5]), np.array([[4, 0], [1, 1], [2, 3]], I32)], [([3, 2], S)], dict(axis=0))
add("GATHER", "int64_indices", [Str([4]), np.array([3, 1], I64)], [([2], S)], dict(axis=0))
add("GATHER", "axis_neg1", [Str([4]), np.array([2, 0], I32)], [([2], S)], dict(axis=-1))
add("GATHER", "dynamic_indices", [Str([7]), Arr(np.array([6, 2, 2, 0, 5], I32))], [([5], S)], dict(axis=0))
add("GATHER", "const_params", [np.array([b"zero", b"one", b"two"], dtype=object), Arr(np.array([2, 0, 2], I32))],
    [([3], S)], dict(axis=0))
add("GATHER_ND", "elements", [Str([3, 2]), np.array([[1, 1], [2, 0], [0, 1]], I32)], [([3], S)])
add("GATHER_ND", "rows", [Str([3, 2]), np.array([[2], [0]], I32)], [([2, 2], S)])
add("GATHER_ND", "3d_params", [Str([2, 3, 4]), np.array([[[1, 2], [0, 0]]], I32)], [([1, 2, 4], S)])
add("GATHER_ND", "scalar_out", [Str([3, 2]), np.array([2, 1], I64)], [([], S)])

# ---------------------------------------------------------------- SLICE / STRIDED_SLICE
add("SLICE", "2d", [Str([3, 4]), np.array([1, 1], I32), np.array([2, 2], I32)], [([2, 2], S)])
add("SLICE", "size_minus1_int64", [Str([3, 4, 2]), np.array([0, 2, 1], I64), np.array([-1, 2, 1], I64)],
    [([3, 2, 1], S)])
add("STRIDED_SLICE", "stride2", [Str([3, 5]), np.array([0, 1], I32), np.array([3, 5], I32), np.array([2, 2], I32)],
    [([2, 2], S)])
add("STRIDED_SLICE", "negative_stride", [Str([6]), np.array([-1], I32), np.array([0], I32), np.array([-2], I32)],
    [([3], S)])
add("STRIDED_SLICE", "masks_shrink", [Str([4, 3, 2]), np.array([1, 0, 1], I32), np.array([0, 2, 2], I32),
                                      np.array([1, 1, 1], I32)], [([2], S)],
    dict(begin_mask=2, end_mask=1, shrink_axis_mask=1))
add("STRIDED_SLICE", "ellipsis_new_axis", [Str([2, 3, 4]), np.array([0, 0, 1], I32), np.array([0, 0, 3], I32),
                                           np.array([1, 1, 1], I32)], [([2, 3, 1, 2], S)],
    dict(ellipsis_mask=1, new_axis_mask=2))

# ---------------------------------------------------------------- TILE / FILL
add("TILE", "2d", [Str([2, 2]), np.array([2, 3], I32)], [([4, 6], S)])
add("TILE", "3d_int64", [Str([2, 1, 3]), np.array([1, 4, 2], I64)], [([2, 4, 6], S)])
add("TILE", "dynamic_multiples", [Str([3]), Arr(np.array([2], I32))], [([6], S)])
add("FILL", "const_value", [np.array([2, 3], I32), np.array(b"fill me", dtype=object)], [([2, 3], S)])
add("FILL", "empty_string", [np.array([4], I32), np.array(b"", dtype=object)], [([4], S)])
add("FILL", "dynamic_dims", [Arr(np.array([3, 1, 2], I32)), np.array("gr\u00fc\u00df".encode(), dtype=object)],
    [([3, 1, 2], S)])

# ---------------------------------------------------------------- EQUAL / NOT_EQUAL
for _op in ("EQUAL", "NOT_EQUAL"):
    _p = _op.lower()
    add(_op, "same_shape", [Str([12]), Str([12])], [([12], BOOL)])
    add(_op, "broadcast", [Str([3, 1]), Str([1, 4])], [([3, 4], BOOL)])
    add(_op, "const_scalar", [Str([2, 5]), np.array(b"ab", dtype=object)], [([2, 5], BOOL)])
    add(_op, "4d_broadcast", [Str([2, 1, 3, 1]), Str([1, 2, 1, 2])], [([2, 2, 3, 2], BOOL)])

# ---------------------------------------------------------------- SHAPE / RANK (read only the shape)
add("SHAPE", "int32", [Str([2, 5, 1])], [([3], I32)], dict(out_type="INT32"))
add("SHAPE", "int64", [Str([4])], [([1], I64)], dict(out_type="INT64"))
add("RANK", "3d", [Str([2, 1, 3])], [([], I32)])


# ---------------------------------------------------------------- IF / WHILE (pass STRING values)
def if_strings_model():
    """p ? RESHAPE(x, [2, 2]) : GATHER(x, [3, 1, 1, 0]) -> RESHAPE [2, 2]; x STRING [4]."""
    mb = ModelBuilder()
    t = mb.add_subgraph("then")
    a = t.add_input([4], S)
    o = t.add_tensor([2, 2], S)
    t.add_op("RESHAPE", [a, t.add_const(np.array([2, 2], I32))], [o])
    t.mark_output(o)
    e = mb.add_subgraph("else")
    a = e.add_input([4], S)
    g = e.add_tensor([4], S)
    e.add_op("GATHER", [a, e.add_const(np.array([3, 1, 1, 0], I32))], [g], options=dict(axis=0))
    o = e.add_tensor([2, 2], S)
    e.add_op("RESHAPE", [g, e.add_const(np.array([2, 2], I32))], [o])
    e.mark_output(o)
    p = mb.add_input([], BOOL)
    x = mb.add_input([4], S)
    y = mb.add_tensor([2, 2], S)
    mb.add_op("IF", [p, x], [y], options=dict(then_subgraph_index=t.index, else_subgraph_index=e.index))
    mb.mark_output(y)
    return mb.build()


def while_strings_model():
    """(i, s): while i < 3: i += 1; s = TILE(s, [2]) (the string value grows every iteration)."""
    mb = ModelBuilder()
    cond = mb.add_subgraph("cond")
    i = cond.add_input([], I32)
    cond.add_input([2], S)
    r = cond.add_tensor([], BOOL)
    cond.add_op("LESS", [i, cond.add_const(np.array(3, I32))], [r])
    cond.mark_output(r)
    body = mb.add_subgraph("body")
    i = body.add_input([], I32)
    s = body.add_input([2], S)
    i2 = body.add_tensor([], I32)
    body.add_op("ADD", [i, body.add_const(np.array(1, I32))], [i2])
    s2 = body.add_tensor([4], S)
    body.add_op("TILE", [s, body.add_const(np.array([2], I32))], [s2])
    body.mark_output(i2)
    body.mark_output(s2)
    i0 = mb.add_input([], I32)
    x = mb.add_input([2], S)
    io = mb.add_tensor([], I32)
    xo = mb.add_tensor([2], S, shape_signature=[-1])
    mb.add_op("WHILE", [i0, x], [io, xo], options=dict(cond_subgraph_index=cond.index, body_subgraph_index=body.index))
    mb.mark_output(io)
    mb.mark_output(xo)
    return mb.build()


for _p in (True, False):
    CASES.append(OpCase("IF", f"string_{'then' if _p else 'else'}", if_strings_model,
                        (lambda rng, p=_p: [np.array(p), words(rng, [4])]), tol=0.0, gpu=False,
                        note="STRING values through IF: CPU only"))
for _i0 in (0, 2, 5):
    CASES.append(OpCase("WHILE", f"string_grows_from_{_i0}", while_strings_model,
                        (lambda rng, i0=_i0: [np.array(i0, I32), words(rng, [2])]), tol=0.0, gpu=False,
                        note="STRING values through WHILE, shape changing per iteration: CPU only"))
