"""Tests for tflite_gpu.testing.builder / zoo against ai-edge-litert."""

import struct

import numpy as np
import pytest

from tflite_gpu.testing import zoo
from tflite_gpu.testing.builder import (BUILTIN_CODES, OP_OPTIONS,
                                        OPTIONS_TABLES, TENSOR_TYPES,
                                        ModelBuilder, single_op_model,
                                        tensor_type)

litert = pytest.importorskip("ai_edge_litert.interpreter")
Interpreter = litert.Interpreter

F32 = np.float32


def run(model, *inputs, delegates=True):
    kw = {} if delegates else dict(
        experimental_op_resolver_type=(
            litert.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES))
    it = Interpreter(model_content=model, **kw)
    it.allocate_tensors()
    ins = it.get_input_details()
    assert len(ins) == len(inputs)
    for d, x in zip(ins, inputs):
        it.set_tensor(d["index"], np.asarray(x, dtype=d["dtype"]))
    it.invoke()
    outs = [it.get_tensor(d["index"]) for d in it.get_output_details()]
    for o in outs:
        if o.dtype.kind == "f":
            assert np.isfinite(o).all()
    return outs


def rnd(*shape, seed=0, lo=-1.0, hi=1.0):
    return np.random.default_rng(seed).uniform(lo, hi, shape).astype(F32)


# ---------------------------------------------------------------------------
# single-op cases: name -> () -> (model, inputs, expected outputs | None)
# ---------------------------------------------------------------------------

def _unary(op, fn, x, options=None):
    m = single_op_model(op, [x.shape], [x.shape], options=options)
    return m, [x], [fn(x)]


def _binary(op, fn, a, b, out_dtype=F32, options=None):
    out = fn(a, b)
    m = single_op_model(op, [(a.shape, a.dtype), (b.shape, b.dtype)],
                        [(out.shape, out_dtype)], options=options)
    return m, [a, b], [out]


def _relu6(x):
    return np.clip(x, 0, 6)


def case_add():
    a, b = rnd(2, 3, 4, seed=1), rnd(2, 3, 4, seed=2)
    return _binary("ADD", lambda a, b: a + b, a, b,
                   options=dict(fused_activation_function="NONE"))


def case_sub_relu():
    a, b = rnd(2, 3, 4, seed=1), rnd(1, 1, 4, seed=2)
    return _binary("SUB", lambda a, b: np.maximum(a - b, 0), a, b,
                   options=dict(fused_activation_function="RELU"))


def case_mul_relu6():
    a, b = rnd(2, 8, seed=1, hi=5), rnd(2, 8, seed=2, hi=5)
    return _binary("MUL", lambda a, b: _relu6(a * b), a, b,
                   options=dict(fused_activation_function="RELU6"))


def case_div_relu_n1_to_1():
    # NB: litert does not apply a fused TANH on ADD/SUB/MUL/DIV (only the
    # clamp-style activations NONE/RELU/RELU_N1_TO_1/RELU6).
    a, b = rnd(2, 8, seed=1), rnd(2, 8, seed=2, lo=0.5, hi=2)
    return _binary("DIV", lambda a, b: np.clip(a / b, -1, 1), a, b,
                   options=dict(fused_activation_function="RELU_N1_TO_1"))


def case_avg_pool():
    x = rnd(1, 4, 6, 3)
    exp = x.reshape(1, 2, 2, 3, 2, 3).mean(axis=(2, 4))
    m = single_op_model("AVERAGE_POOL_2D", [x.shape], [exp.shape], options=dict(
        padding="VALID", stride_w=2, stride_h=2, filter_width=2,
        filter_height=2, fused_activation_function="NONE"))
    return m, [x], [exp]


def case_max_pool():
    x = rnd(1, 4, 6, 3)
    exp = x.reshape(1, 2, 2, 3, 2, 3).max(axis=(2, 4))
    m = single_op_model("MAX_POOL_2D", [x.shape], [exp.shape], options=dict(
        padding="SAME", stride_w=2, stride_h=2, filter_width=2,
        filter_height=2))
    return m, [x], [exp]


def case_concatenation():
    a, b = rnd(1, 2, 3, 2, seed=1), rnd(1, 2, 3, 5, seed=2)
    exp = np.concatenate([a, b], -1)
    # NB: litert's float CONCATENATION kernel ignores a fused activation
    # (checked: RELU is written to the options table but not applied).
    m = single_op_model("CONCATENATION", [a.shape, b.shape], [exp.shape],
                        options=dict(axis=-1, fused_activation_function="NONE"))
    return m, [a, b], [exp]


def case_conv_1x1_matmul():
    x, w, b = rnd(1, 5, 5, 8, seed=1), rnd(6, 1, 1, 8, seed=2), rnd(6, seed=3)
    exp = (x.reshape(-1, 8) @ w.reshape(6, 8).T + b).reshape(1, 5, 5, 6)
    m = single_op_model("CONV_2D", [x.shape], [exp.shape], consts=[w, b],
                        options=dict(padding="SAME", stride_w=1, stride_h=1))
    return m, [x], [exp]


def case_conv_3x3_s2_dilated():
    x, w, b = rnd(1, 9, 9, 3, seed=1), rnd(4, 3, 3, 3, seed=2), rnd(4, seed=3)
    m = single_op_model("CONV_2D", [x.shape], [(1, 5, 5, 4)], consts=[w, b],
                        options=dict(padding="SAME", stride_w=2, stride_h=2,
                                     fused_activation_function="RELU6",
                                     dilation_w_factor=1, dilation_h_factor=1))
    return m, [x], None


def case_depthwise_valid():
    x, w, b = rnd(1, 5, 6, 4, seed=1), rnd(1, 3, 3, 4, seed=2), rnd(4, seed=3)
    exp = np.zeros((1, 3, 4, 4), F32)
    for i in range(3):
        for j in range(4):
            exp[0, i, j] = (x[0, i:i + 3, j:j + 3] * w[0]).sum((0, 1)) + b
    m = single_op_model("DEPTHWISE_CONV_2D", [x.shape], [exp.shape],
                        consts=[w, b], options=dict(
                            padding="VALID", stride_w=1, stride_h=1,
                            depth_multiplier=1,
                            fused_activation_function="NONE"))
    return m, [x], [exp]


def case_fully_connected_keep_dims():
    x, w, b = rnd(2, 3, 4, seed=1), rnd(5, 4, seed=2), rnd(5, seed=3)
    exp = x @ w.T + b
    m = single_op_model("FULLY_CONNECTED", [x.shape], [exp.shape],
                        consts=[w, b], options=dict(
                            fused_activation_function="NONE",
                            weights_format="DEFAULT", keep_num_dims=True))
    return m, [x], [exp]


def case_fully_connected_no_bias():
    x, w = rnd(3, 4, seed=1), rnd(5, 4, seed=2)
    m = single_op_model("FULLY_CONNECTED", [x.shape], [(3, 5)],
                        consts=[w, None],
                        options=dict(fused_activation_function="RELU"))
    return m, [x], [np.maximum(x @ w.T, 0)]


def case_softmax_beta():
    x = rnd(2, 7, hi=3)
    e = np.exp(0.5 * x)
    return _unary("SOFTMAX", lambda _: e / e.sum(-1, keepdims=True), x,
                  options=dict(beta=0.5))


def case_resize_bilinear_align_corners():
    x = np.arange(4, dtype=F32).reshape(1, 2, 2, 1)
    exp = np.array([[0, .5, 1], [1, 1.5, 2], [2, 2.5, 3]], F32)
    m = single_op_model("RESIZE_BILINEAR", [x.shape], [(1, 3, 3, 1)],
                        consts=[np.array([3, 3], np.int32)],
                        options=dict(align_corners=True))
    return m, [x], [exp.reshape(1, 3, 3, 1)]


def case_resize_bilinear_half_pixel():
    x = rnd(1, 4, 4, 3)
    m = single_op_model("RESIZE_BILINEAR", [x.shape], [(1, 8, 8, 3)],
                        consts=[np.array([8, 8], np.int32)], version=3,
                        options=dict(half_pixel_centers=True))
    return m, [x], None


def case_resize_nearest():
    x = rnd(1, 3, 4, 2)
    exp = x.repeat(2, 1).repeat(2, 2)
    m = single_op_model("RESIZE_NEAREST_NEIGHBOR", [x.shape], [exp.shape],
                        consts=[np.array([6, 8], np.int32)],
                        options=dict(align_corners=False))
    return m, [x], [exp]


def case_reshape():
    x = rnd(2, 3, 4)
    m = single_op_model("RESHAPE", [x.shape], [(4, 6)],
                        consts=[np.array([4, -1], np.int32)],
                        options=dict(new_shape=[4, 6]))
    return m, [x], [x.reshape(4, 6)]


def case_strided_slice_masks():
    x = rnd(3, 4, 5)
    exp = x[1:, ::2, 1]
    m = single_op_model("STRIDED_SLICE", [x.shape], [exp.shape], consts=[
        np.array([1, 0, 1], np.int32), np.array([0, 0, 2], np.int32),
        np.array([1, 2, 1], np.int32)], options=dict(
            begin_mask=0b010, end_mask=0b011, ellipsis_mask=0,
            new_axis_mask=0, shrink_axis_mask=0b100, offset=False))
    return m, [x], [exp]


def case_transpose_conv():
    x, w, b = rnd(1, 4, 4, 8, seed=1), rnd(3, 3, 3, 8, seed=2), rnd(3, seed=3)
    mb = ModelBuilder()
    xi = mb.add_input(x.shape)
    oshape = mb.add_const(np.array([1, 8, 8, 3], np.int32))
    y = mb.add_tensor([1, 8, 8, 3])
    mb.add_op("TRANSPOSE_CONV", [oshape, mb.add_const(w), xi, mb.add_const(b)],
              [y], options=dict(padding="SAME", stride_w=2, stride_h=2),
              version=3)
    mb.mark_output(y)
    return mb.build(), [x], None


def case_pad():
    x = rnd(2, 3)
    p = np.array([[0, 1], [2, 0]], np.int32)
    m = single_op_model("PAD", [x.shape], [(3, 5)], consts=[p], options={})
    return m, [x], [np.pad(x, p)]


def case_padv2():
    x = rnd(2, 3)
    p = np.array([[1, 1], [0, 2]], np.int32)
    m = single_op_model("PADV2", [x.shape], [(4, 5)],
                        consts=[p, np.array([7.0], F32)])
    return m, [x], [np.pad(x, p, constant_values=7.0)]


@pytest.mark.parametrize("mode", ["REFLECT", "SYMMETRIC"])
def test_mirror_pad(mode):
    x = rnd(1, 4, 5, 2)
    p = np.array([[0, 0], [2, 1], [1, 2], [0, 0]], np.int32)
    exp = np.pad(x, p, mode=mode.lower())
    m = single_op_model("MIRROR_PAD", [x.shape], [exp.shape], consts=[p],
                        options=dict(mode=mode))
    np.testing.assert_allclose(run(m, x)[0], exp)


def case_space_to_depth():
    x = rnd(1, 4, 6, 3)
    exp = x.reshape(1, 2, 2, 3, 2, 3).transpose(0, 1, 3, 2, 4, 5).reshape(
        1, 2, 3, 12)
    m = single_op_model("SPACE_TO_DEPTH", [x.shape], [exp.shape],
                        options=dict(block_size=2))
    return m, [x], [exp]


def case_depth_to_space():
    y = rnd(1, 4, 6, 3)   # depth_to_space(space_to_depth(y)) == y
    x = y.reshape(1, 2, 2, 3, 2, 3).transpose(0, 1, 3, 2, 4, 5).reshape(
        1, 2, 3, 12)
    m = single_op_model("DEPTH_TO_SPACE", [x.shape], [y.shape],
                        options=dict(block_size=2))
    return m, [x], [y]


def case_gather():
    x = rnd(3, 5, 2)
    idx = np.array([4, 0, 2], np.int32)
    m = single_op_model("GATHER", [x.shape], [(3, 3, 2)], consts=[idx],
                        options=dict(axis=1, batch_dims=0))
    return m, [x], [np.take(x, idx, axis=1)]


def case_mean_keep_dims():
    x = rnd(2, 4, 5, 3)
    m = single_op_model("MEAN", [x.shape], [(2, 1, 1, 3)],
                        consts=[np.array([1, 2], np.int32)],
                        options=dict(keep_dims=True))
    return m, [x], [x.mean((1, 2), keepdims=True)]


def case_sum():
    x = rnd(2, 4, 3)
    m = single_op_model("SUM", [x.shape], [(2, 3)],
                        consts=[np.array([1], np.int32)],
                        options=dict(keep_dims=False))
    return m, [x], [x.sum(1)]


def case_split():
    x = rnd(2, 6)
    mb = ModelBuilder()
    axis = mb.add_const(np.array(1, np.int32))
    xi = mb.add_input(x.shape)
    outs = [mb.add_tensor([2, 2]) for _ in range(3)]
    mb.add_op("SPLIT", [axis, xi], outs, options=dict(num_splits=3))
    for o in outs:
        mb.mark_output(o)
    return mb.build(), [x], np.split(x, 3, axis=1)


def case_pack():
    a, b = rnd(3, 4, seed=1), rnd(3, 4, seed=2)
    m = single_op_model("PACK", [a.shape, b.shape], [(3, 2, 4)],
                        options=dict(values_count=2, axis=1))
    return m, [a, b], [np.stack([a, b], 1)]


def case_unpack():
    x = rnd(3, 4)
    m = single_op_model("UNPACK", [x.shape], [(4,)] * 3,
                        options=dict(num=3, axis=0))
    return m, [x], list(x)


def case_cast():
    x = np.array([[1.7, -2.7, 3.2]], F32)
    m = single_op_model("CAST", [x.shape], [(x.shape, np.int32)],
                        options=dict(in_data_type="FLOAT32",
                                     out_data_type="INT32"))
    return m, [x], [np.array([[1, -2, 3]], np.int32)]


def case_shape():
    x = rnd(2, 3, 4)
    m = single_op_model("SHAPE", [x.shape], [((3,), np.int32)],
                        options=dict(out_type="INT32"))
    return m, [x], [np.array([2, 3, 4], np.int32)]


def case_arg_max():
    x = rnd(3, 7)
    m = single_op_model("ARG_MAX", [x.shape], [((3,), np.int32)],
                        consts=[np.array([1], np.int32)],
                        options=dict(output_type="INT32"))
    return m, [x], [x.argmax(1).astype(np.int32)]


def case_leaky_relu():
    return _unary("LEAKY_RELU", lambda x: np.where(x > 0, x, 0.2 * x),
                  rnd(3, 5), options=dict(alpha=0.2))


def case_batch_matmul_adj_y():
    a, b = rnd(2, 3, 4, seed=1), rnd(2, 5, 4, seed=2)
    return _binary("BATCH_MATMUL", lambda a, b: a @ b.swapaxes(-1, -2), a, b,
                   options=dict(adj_x=False, adj_y=True))


def case_transpose():
    x = rnd(2, 3, 4)
    m = single_op_model("TRANSPOSE", [x.shape], [(4, 2, 3)],
                        consts=[np.array([2, 0, 1], np.int32)])
    return m, [x], [x.transpose(2, 0, 1)]


def case_slice():
    x = rnd(4, 5)
    m = single_op_model("SLICE", [x.shape], [(2, 3)], consts=[
        np.array([1, 2], np.int32), np.array([2, -1], np.int32)])
    return m, [x], [x[1:3, 2:]]


def case_squared_difference():
    return _binary("SQUARED_DIFFERENCE", lambda a, b: (a - b) ** 2,
                   rnd(3, 4, seed=1), rnd(3, 4, seed=2))


def case_maximum():
    return _binary("MAXIMUM", np.maximum, rnd(3, 4, seed=1),
                   rnd(1, 4, seed=2))


def case_minimum():
    return _binary("MINIMUM", np.minimum, rnd(3, 4, seed=1),
                   rnd(3, 4, seed=2))


def case_logical_and():
    a = np.array([True, True, False, False])
    b = np.array([True, False, True, False])
    return _binary("LOGICAL_AND", np.logical_and, a, b, out_dtype=np.bool_)


def case_exp():
    return _unary("EXP", np.exp, rnd(3, 4))


def case_logistic():
    return _unary("LOGISTIC", lambda x: 1 / (1 + np.exp(-x)), rnd(3, 4, hi=4))


def case_relu():
    return _unary("RELU", lambda x: np.maximum(x, 0), rnd(3, 4))


def case_relu6():
    return _unary("RELU6", _relu6, rnd(3, 4, lo=-8, hi=8))


def case_relu_n1_to_1():
    return _unary("RELU_N1_TO_1", lambda x: np.clip(x, -1, 1),
                  rnd(3, 4, lo=-3, hi=3))


def case_tanh():
    return _unary("TANH", np.tanh, rnd(3, 4, lo=-3, hi=3))


def case_hard_swish():
    return _unary("HARD_SWISH", lambda x: x * _relu6(x + 3) / 6,
                  rnd(3, 4, lo=-5, hi=5))


def case_prelu():
    x, alpha = rnd(1, 3, 3, 4, seed=1), rnd(1, 1, 4, seed=2, lo=0, hi=0.5)
    m = single_op_model("PRELU", [x.shape], [x.shape], consts=[alpha])
    return m, [x], [np.where(x >= 0, x, alpha * x)]


def case_rsqrt():
    return _unary("RSQRT", lambda x: 1 / np.sqrt(x), rnd(3, 4, lo=.1, hi=4))


def case_sqrt():
    return _unary("SQRT", np.sqrt, rnd(3, 4, lo=0, hi=4))


def case_dequantize_int8():
    q = np.array([-128, -1, 0, 5, 127], np.int8)
    mb = ModelBuilder()
    x = mb.add_input(q.shape, np.int8,
                     quant=dict(scale=[0.5], zero_point=[-1]))
    y = mb.add_tensor(q.shape)
    mb.add_op("DEQUANTIZE", [x], [y], version=2)
    mb.mark_output(y)
    return mb.build(), [q], [(q.astype(F32) + 1) * 0.5]


def case_dequantize_fp16_const():
    w = rnd(3, 4).astype(np.float16)
    mb = ModelBuilder()
    x = mb.add_input([3, 4])
    c = mb.add_const(w)
    wd = mb.add_tensor([3, 4])
    mb.add_op("DEQUANTIZE", [c], [wd], version=3)
    y = mb.add_tensor([3, 4])
    mb.add_op("ADD", [x, wd], [y])
    mb.mark_output(y)
    xv = rnd(3, 4, seed=5)
    return mb.build(), [xv], [xv + w.astype(F32)]


def case_quantize_int8():
    x = np.array([-3.0, -0.26, 0.0, 0.24, 1.0, 100.0], F32)
    scale, zp = 0.25, 3
    exp = np.clip(np.round(x / scale) + zp, -128, 127).astype(np.int8)
    mb = ModelBuilder()
    xi = mb.add_input(x.shape)
    y = mb.add_tensor(x.shape, np.int8,
                      quant=dict(scale=[scale], zero_point=[zp]))
    mb.add_op("QUANTIZE", [xi], [y], version=2)
    mb.mark_output(y)
    return mb.build(), [x], [exp]


def case_densify():
    dense = np.array([[1, 0, 0, 2], [0, 0, 0, 0], [0, 3, 4, 0],
                      [0, 0, 0, 5]], F32)
    rows, cols = np.nonzero(dense)
    segs = np.concatenate([[0], np.cumsum((dense != 0).sum(1))]).astype(
        np.int32)
    mb = ModelBuilder()
    x = mb.add_input([4, 4])
    sp = mb.add_tensor([4, 4], data=dense[rows, cols], sparsity=dict(
        traversal_order=[0, 1], dim_metadata=[
            dict(format="DENSE", dense_size=4),
            dict(format="SPARSE_CSR", array_segments=segs.astype(np.uint8),
                 array_indices=cols.astype(np.uint16))]))
    d = mb.add_tensor([4, 4])
    mb.add_op("DENSIFY", [sp], [d])
    y = mb.add_tensor([4, 4])
    mb.add_op("ADD", [x, d], [y])
    mb.mark_output(y)
    xv = rnd(4, 4)
    return mb.build(), [xv], [xv + dense]


def case_full_lstm_cell():
    """Non-sequence LSTM op, full kernel, CIFG + peephole + projection."""
    rng = np.random.default_rng(0)
    b, ni, nc, no = 2, 3, 4, 2
    mb = ModelBuilder()

    def c(*shape):
        return mb.add_const(rng.uniform(-.5, .5, shape).astype(F32))

    x = mb.add_input([b, ni])
    ins = [x, -1, c(nc, ni), c(nc, ni), c(nc, ni),
           -1, c(nc, no), c(nc, no), c(nc, no),
           -1, c(nc), c(nc),
           -1, c(nc), c(nc), c(nc),
           c(no, nc), -1,
           mb.add_tensor([b, no], is_variable=True),
           mb.add_tensor([b, nc], is_variable=True)]
    y = mb.add_tensor([b, no])
    mb.add_op("LSTM", ins, [y], options=dict(
        fused_activation_function="TANH", cell_clip=3.0, proj_clip=2.0,
        kernel_type="FULL"))
    mb.mark_output(y)
    return mb.build(), [rnd(b, ni)], None


CASES = {k[5:]: v for k, v in dict(globals()).items()
         if k.startswith("case_")}


@pytest.mark.parametrize("delegates", [True, False],
                         ids=["xnnpack", "builtin"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_single_op(name, delegates):
    model, inputs, expected = CASES[name]()
    outs = run(model, *inputs, delegates=delegates)
    if expected is not None:
        assert len(outs) == len(expected)
        for o, e in zip(outs, expected):
            e = np.asarray(e)
            assert o.shape == e.shape, (o.shape, e.shape)
            if e.dtype.kind == "f":
                np.testing.assert_allclose(o, e, rtol=1e-5, atol=1e-5)
            else:
                np.testing.assert_array_equal(o, e)


def test_options_none_writes_no_table_and_add_defaults():
    a, b = rnd(4, seed=1), rnd(4, seed=2)
    m = single_op_model("ADD", [a.shape, b.shape], [a.shape], options=None)
    np.testing.assert_allclose(run(m, a, b)[0], a + b)


# ---------------------------------------------------------------------------
# structure: codes, signatures, metadata, large buffers, custom ops
# ---------------------------------------------------------------------------

def test_tables():
    assert set(range(127)) <= set(BUILTIN_CODES.values())
    assert BUILTIN_CODES["BATCH_MATMUL"] == 126
    assert BUILTIN_CODES["DENSIFY"] == 124
    assert BUILTIN_CODES["HARD_SWISH"] == 117
    for k, v in dict(FLOAT32=0, FLOAT16=1, INT32=2, UINT8=3, INT64=4,
                     STRING=5, BOOL=6, INT16=7, COMPLEX64=8, INT8=9,
                     FLOAT64=10).items():
        assert TENSOR_TYPES[k] == v
    assert tensor_type(np.int8) == 9 and tensor_type(np.bool_) == 6
    assert tensor_type("INT64") == 4
    for op, table in OP_OPTIONS.items():
        assert op in BUILTIN_CODES and table in OPTIONS_TABLES
    with pytest.raises(KeyError):
        ModelBuilder().add_op("ADD", [0, 1], [2], options=dict(bogus=1))


def _schema():
    return pytest.importorskip("ai_edge_litert.schema_py_generated")


def _conv_model(large=False, with_extras=True):
    mb = ModelBuilder()
    x = mb.add_input([1, 4, 4, 3], name="x")
    w = mb.add_const(rnd(5, 1, 1, 3, seed=3), name="w")
    b = mb.add_const(rnd(5, seed=4), name="b")
    y = mb.add_tensor([1, 4, 4, 5], name="y")
    mb.add_op("CONV_2D", [x, w, b], [y], options=dict(
        padding="SAME", stride_w=1, stride_h=1))
    z = mb.add_tensor([1, 4, 4, 5], name="z")
    mb.add_op("BATCH_MATMUL", [y, y], [z], options=dict(adj_y=True))
    mb.mark_output(y)
    if with_extras:
        mb.add_signature("serving_default", {"image": x}, {"features": y})
        mb.add_metadata("min_runtime_version", b"1.5.0\0")
        mb.add_metadata("tflite_gpu_note", b"hello")
    return mb


def test_signature_and_metadata():
    mb = _conv_model()
    m = mb.build()
    it = Interpreter(model_content=m)
    sigs = it.get_signature_list()
    assert sigs == {"serving_default": {"inputs": ["image"],
                                        "outputs": ["features"]}}
    runner = it.get_signature_runner("serving_default")
    out = runner(image=rnd(1, 4, 4, 3))
    assert out["features"].shape == (1, 4, 4, 5)

    s = _schema()
    model = s.Model.GetRootAs(m, 0)
    assert m[4:8] == b"TFL3"
    assert model.Version() == 3
    names = {model.Metadata(i).Name().decode(): model.Metadata(i).Buffer()
             for i in range(model.MetadataLength())}
    assert set(names) == {"min_runtime_version", "tflite_gpu_note"}
    buf = model.Buffers(names["tflite_gpu_note"])
    assert bytes(buf.DataAsNumpy()) == b"hello"
    assert model.Buffers(0).DataLength() == 0
    codes = [model.OperatorCodes(i) for i in range(model.OperatorCodesLength())]
    assert [(c.BuiltinCode(), c.DeprecatedBuiltinCode(), c.Version())
            for c in codes] == [(3, 3, 1), (126, 126, 1)]


def test_high_builtin_code_uses_placeholder():
    mb = ModelBuilder()
    x = mb.add_input([3])
    y = mb.add_tensor([3])
    mb.add_op("GELU", [x], [y], options=dict(approximate=False))
    mb.mark_output(y)
    m = mb.build()
    s = _schema()
    c = s.Model.GetRootAs(m, 0).OperatorCodes(0)
    assert c.BuiltinCode() == 150 and c.DeprecatedBuiltinCode() == 127
    out = run(m, np.array([-1.0, 0.0, 2.0], F32))[0]
    assert out[1] == 0 and abs(out[2] - 1.9545) < 1e-3


def test_large_buffers_same_outputs():
    mb = _conv_model()
    small, large = mb.build(), mb.build(large_buffers=True)
    x = rnd(1, 4, 4, 3, seed=9)
    np.testing.assert_array_equal(run(small, x)[0], run(large, x)[0])
    s = _schema()
    model = s.Model.GetRootAs(large, 0)
    assert model.Buffers(0).DataLength() == 0
    assert model.Buffers(0).Offset() == 0
    w_buf = model.Buffers(model.Subgraphs(0).Tensors(1).Buffer())
    assert w_buf.DataLength() == 0 and w_buf.Offset() > 0
    off, size = w_buf.Offset(), w_buf.Size()
    assert size == 5 * 3 * 4
    np.testing.assert_array_equal(
        np.frombuffer(large[off:off + size], F32),
        rnd(5, 1, 1, 3, seed=3).ravel())


def test_large_buffers_mobilenet():
    kw = dict(input_size=96, alpha=0.25, num_classes=10)
    m_small = zoo.mobilenet_v1(**kw)
    m_large = zoo.mobilenet_v1(large_buffers=True, **kw)
    assert m_large != m_small
    x = rnd(1, 96, 96, 3, seed=2)
    np.testing.assert_array_equal(run(m_large, x)[0], run(m_small, x)[0])


def test_shape_signature_and_quant_params_visible():
    mb = ModelBuilder()
    x = mb.add_input([1, 4], shape_signature=[-1, 4], name="x")
    w = mb.add_const(np.array([[1, -2, 3, 4], [5, 6, -7, 8]], np.int8),
                     quant=dict(scale=[0.1, 0.2], zero_point=[0, 0],
                                quantized_dimension=0))
    y = mb.add_tensor([1, 2], shape_signature=[-1, 2], name="y")
    mb.add_op("FULLY_CONNECTED", [x, w, -1], [y],
              options=dict(fused_activation_function="NONE"), version=1)
    mb.mark_output(y)
    it = Interpreter(model_content=mb.build())
    d = it.get_input_details()[0]
    assert list(d["shape_signature"]) == [-1, 4]
    wd = [t for t in it.get_tensor_details() if t["index"] == w][0]
    qp = wd["quantization_parameters"]
    np.testing.assert_allclose(qp["scales"], [0.1, 0.2])
    assert qp["quantized_dimension"] == 0 and wd["dtype"] == np.int8


def test_custom_op_bytes_written():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((1, 4, 4, 2)).astype(F32)
    W = rng.standard_normal((3, 3, 3, 2)).astype(F32)
    Bv = rng.standard_normal(3).astype(F32)
    opts = struct.pack("<iii", 1, 2, 2)   # TfLitePadding SAME=1, stride 2x2

    def make(custom):
        mb = ModelBuilder()
        x = mb.add_input([1, 4, 4, 2])
        w, b = mb.add_const(W), mb.add_const(Bv)
        y = mb.add_tensor([1, 8, 8, 3])
        if custom:
            mb.add_op(("CUSTOM", "Convolution2DTransposeBias"), [x, w, b],
                      [y], custom_options=opts)
        else:
            shp = mb.add_const(np.array([1, 8, 8, 3], np.int32))
            mb.add_op("TRANSPOSE_CONV", [shp, w, x, b], [y], version=3,
                      options=dict(padding="SAME", stride_w=2, stride_h=2))
        mb.mark_output(y)
        return mb.build()

    m = make(True)
    s = _schema()
    model = s.Model.GetRootAs(m, 0)
    code = model.OperatorCodes(0)
    assert code.BuiltinCode() == 32 and code.DeprecatedBuiltinCode() == 32
    assert code.CustomCode() == b"Convolution2DTransposeBias"
    op = model.Subgraphs(0).Operators(0)
    assert bytes(op.CustomOptionsAsNumpy()) == opts
    # litert's default XNNPACK delegate implements this MediaPipe custom op:
    # it must match the builtin TRANSPOSE_CONV with bias.
    np.testing.assert_allclose(run(m, X)[0], run(make(False), X)[0],
                               rtol=1e-5, atol=1e-5)
    # Without delegates the op is unresolved, and the error names it.
    with pytest.raises(Exception, match="Convolution2DTransposeBias"):
        it = Interpreter(
            model_content=m,
            experimental_op_resolver_type=(
                litert.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES))
        it.allocate_tensors()


# ---------------------------------------------------------------------------
# zoo
# ---------------------------------------------------------------------------

def _run_random(model, seed=0):
    it = Interpreter(model_content=model)
    it.allocate_tensors()
    rng = np.random.default_rng(seed)
    for d in it.get_input_details():
        it.set_tensor(d["index"],
                      rng.standard_normal(d["shape"]).astype(d["dtype"]))
    it.invoke()
    outs = [it.get_tensor(d["index"]) for d in it.get_output_details()]
    for o in outs:
        assert np.isfinite(o).all()
    return outs


@pytest.mark.parametrize("name", sorted(zoo.ZOO))
def test_zoo_runs(name):
    outs = _run_random(zoo.ZOO[name]())
    for o in outs:
        assert o.std() > 1e-4, "degenerate (constant) output"


def test_mobilenet_shapes_and_softmax():
    for fn in (zoo.mobilenet_v1, zoo.mobilenet_v2):
        m = fn(input_size=224, num_classes=1001)
        (p,) = _run_random(m)
        assert p.shape == (1, 1001)
        np.testing.assert_allclose(p.sum(), 1.0, rtol=1e-4)
        assert p.max() > 5.0 / 1001          # not a flat distribution


def test_mobilenet_fp16_close_to_fp32_and_layout():
    kw = dict(input_size=128, alpha=0.5, num_classes=100, batch=2)
    m32 = zoo.mobilenet_v2(**kw)
    m16 = zoo.mobilenet_v2(weights_dtype="float16", **kw)
    assert len(m16) < 0.6 * len(m32)
    (p32,), (p16,) = _run_random(m32), _run_random(m16)
    assert p32.shape == (2, 100)
    np.testing.assert_allclose(p16, p32, rtol=0.05, atol=1e-3)
    s = _schema()
    model = s.Model.GetRootAs(m16, 0)
    codes = {model.OperatorCodes(i).BuiltinCode()
             for i in range(model.OperatorCodesLength())}
    assert BUILTIN_CODES["DEQUANTIZE"] in codes
    sg = model.Subgraphs(0)
    n_fp16 = sum(sg.Tensors(i).Type() == TENSOR_TYPES["FLOAT16"]
                 for i in range(sg.TensorsLength()))
    assert n_fp16 > 50


def test_mobilenet_fc_classifier_and_batch():
    m = zoo.mobilenet_v1(input_size=64, alpha=0.25, num_classes=7, batch=3,
                         classifier="fc")
    (p,) = _run_random(m)
    assert p.shape == (3, 7)
    np.testing.assert_allclose(p.sum(1), 1.0, rtol=1e-5)


def test_encoder_decoder_outputs():
    seg, mask = _run_random(zoo.encoder_decoder())
    assert seg.shape == (1, 64, 64, 4) and mask.shape == (1, 64, 64, 1)
    np.testing.assert_allclose(seg.sum(-1), 1.0, rtol=1e-5)
    assert ((mask > 0) & (mask < 1)).all()


def test_lstm_state_is_carried():
    it = Interpreter(model_content=zoo.lstm_model())
    it.allocate_tensors()
    d = it.get_input_details()[0]
    x = rnd(*d["shape"], seed=3)
    it.set_tensor(d["index"], x)
    it.invoke()
    o1 = it.get_tensor(it.get_output_details()[0]["index"])
    it.set_tensor(d["index"], x)
    it.invoke()
    o2 = it.get_tensor(it.get_output_details()[0]["index"])
    assert o1.shape == (1, 8, 10)
    assert not np.allclose(o1, o2)   # variable state tensors persist
    it.reset_all_variables()
    it.set_tensor(d["index"], x)
    it.invoke()
    np.testing.assert_allclose(
        it.get_tensor(it.get_output_details()[0]["index"]), o1, rtol=1e-5)


def test_basic_lstm_matches_numpy():
    ni, nc = 8, 16
    m = zoo.basic_lstm_model(input_size=ni, num_units=nc)
    s = _schema()
    model = s.Model.GetRootAs(m, 0)
    sg = model.Subgraphs(0)

    def const(name):
        for i in range(sg.TensorsLength()):
            t = sg.Tensors(i)
            if t.Name() == name:
                return np.frombuffer(model.Buffers(t.Buffer()).DataAsNumpy()
                                     .tobytes(), F32)
    W = const(b"weights").reshape(4 * nc, ni + nc)
    B = const(b"biases")
    x, h, c = rnd(1, ni, seed=1), rnd(1, nc, seed=2), rnd(1, nc, seed=3)
    it = Interpreter(model_content=m)
    it.allocate_tensors()
    by_name = {d["name"]: d["index"] for d in it.get_input_details()}
    it.set_tensor(by_name["input"], x)
    it.set_tensor(by_name["prev_activation"], h)
    it.set_tensor(by_name["prev_state"], c)
    it.invoke()
    act, state = [it.get_tensor(d["index"])
                  for d in it.get_output_details()]
    g = np.concatenate([x, h], 1) @ W.T + B
    i, j, f, o = np.split(g, 4, axis=1)   # TF BasicLSTMCell gate order

    def sig(v):
        return 1 / (1 + np.exp(-v))
    new_c = sig(f) * c + sig(i) * np.tanh(j)
    new_h = sig(o) * np.tanh(new_c)
    np.testing.assert_allclose(state, new_c, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(act, new_h, rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------------------
# Multi-subgraph models (control flow), checked by LiteRT against numpy
# ---------------------------------------------------------------------------

def _while_double_until(limit):
    """x -> while (sum(x) < limit) x = x * 2, counting iterations."""
    mb = ModelBuilder()
    cond = mb.add_subgraph("cond")
    body = mb.add_subgraph("body")
    # cond: (i, x) -> sum(x) < limit
    ci = cond.add_input([], np.int32, name="i")
    cx = cond.add_input([3], name="x")
    ax = cond.add_const(np.array([0], np.int32), name="axis")
    s = cond.add_tensor([], name="s")
    cond.add_op("SUM", [cx, ax], [s], options=dict(keep_dims=False))
    lim = cond.add_const(np.array(limit, F32), name="limit")
    c = cond.add_tensor([], np.bool_, name="c")
    cond.add_op("LESS", [s, lim], [c])
    cond.mark_output(c)
    del ci
    # body: (i, x) -> (i + 1, x * 2)
    bi = body.add_input([], np.int32, name="i")
    bx = body.add_input([3], name="x")
    one = body.add_const(np.array(1, np.int32), name="one")
    two = body.add_const(np.array(2, F32), name="two")
    bi2 = body.add_tensor([], np.int32, name="i2")
    bx2 = body.add_tensor([3], name="x2")
    body.add_op("ADD", [bi, one], [bi2])
    body.add_op("MUL", [bx, two], [bx2])
    body.mark_output(bi2)
    body.mark_output(bx2)
    # main
    i0 = mb.add_const(np.array(0, np.int32), name="i0")
    x = mb.add_input([3], name="x")
    io = mb.add_tensor([], np.int32, name="iters")
    xo = mb.add_tensor([3], name="y")
    mb.add_op("WHILE", [i0, x], [io, xo],
              options=dict(cond_subgraph_index=cond.index,
                           body_subgraph_index=body.index))
    mb.mark_output(io)
    mb.mark_output(xo)
    return mb


def test_multi_subgraph_while_runs_in_litert():
    mb = _while_double_until(100.0)
    assert mb.num_subgraphs == 3
    x = np.array([1.0, 2.0, 0.5], F32)
    iters, y = run(mb.build(), x, delegates=False)
    # numpy oracle
    ref, n = x.copy(), 0
    while ref.sum() < 100.0:
        ref, n = ref * 2, n + 1
    assert int(iters) == n == 5
    np.testing.assert_array_equal(y, ref)


def test_multi_subgraph_if_and_shared_buffers():
    mb = ModelBuilder()
    then_sg = mb.add_subgraph("then")
    else_sg = mb.add_subgraph("else")
    for sg, op in ((then_sg, "ADD"), (else_sg, "SUB")):
        a = sg.add_input([2], name="a")
        k = sg.add_const(np.array([10.0, 20.0], F32), name="k")
        o = sg.add_tensor([2], name="o")
        sg.add_op(op, [a, k], [o])
        sg.mark_output(o)
    p = mb.add_input([], np.bool_, name="p")
    a = mb.add_input([2], name="a")
    o = mb.add_tensor([2], name="o")
    mb.add_op("IF", [p, a], [o],
              options=dict(then_subgraph_index=then_sg.index,
                           else_subgraph_index=else_sg.index))
    mb.mark_output(o)
    model = mb.build()
    # ADD/SUB opcodes of the subgraphs are entries in one shared table.
    assert len(mb._opcodes) == 3
    av = np.array([1.0, 2.0], F32)
    (yt,) = run(model, np.array(True), av, delegates=False)
    (ye,) = run(model, np.array(False), av, delegates=False)
    np.testing.assert_array_equal(yt, av + [10.0, 20.0])
    np.testing.assert_array_equal(ye, av - [10.0, 20.0])
