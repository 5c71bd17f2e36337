"""Conv family: CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, TRANSPOSE_CONV, BATCH_MATMUL and
MediaPipe's Convolution2DTransposeBias (float32).

Weights are generated inside the model builders from fixed seeds, so the oracle and our engine
see the same model. Where litert rejects a form our engine supports (CONV_2D / DEPTHWISE_CONV_2D
without bias), the oracle is litert on the same model with an explicit zero bias.
"""
import struct

import numpy as np

from harness import OpCase, run_litert
from tflite_gpu.testing.builder import ModelBuilder

F32 = np.float32


def _rand(rng, shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(F32)


def _inp(*shapes, scale=1.0):
    return lambda rng: [_rand(rng, s, scale) for s in shapes]


def _out_size(padding, n, k, s, d=1):
    eff = (k - 1) * d + 1
    if padding == "SAME":
        return (n + s - 1) // s
    return max(0, (n - eff + s) // s) if n >= eff else 0


# ---------------------------------------------------------------------------------------------
# CONV_2D
# ---------------------------------------------------------------------------------------------

def conv_model(in_shape, cout, k=(3, 3), stride=(1, 1), dil=(1, 1), padding="SAME", act="NONE",
               bias="const", weights="const", groups=1, version=1, seed=0):
    """bias: 'const' | 'none' (-1) | 'absent' (2 inputs) | 'zeros' | 'input'; weights: 'const' | 'input'."""
    rng = np.random.default_rng(seed)
    n, h, w, cin = in_shape
    kh, kw = k
    fc = cin // groups
    wt = _rand(rng, (cout, kh, kw, fc), 1.0 / np.sqrt(kh * kw * fc))
    b = _rand(rng, (cout,), 0.5)
    mb = ModelBuilder()
    x = mb.add_input(list(in_shape), name="x")
    wi = mb.add_input(list(wt.shape), name="w") if weights == "input" else mb.add_const(wt, name="w")
    ins = [x, wi]
    if bias == "const":
        ins.append(mb.add_const(b, name="b"))
    elif bias == "zeros":
        ins.append(mb.add_const(np.zeros(cout, F32), name="b"))
    elif bias == "input":
        ins.append(mb.add_input([cout], name="b"))
    elif bias == "none":
        ins.append(-1)
    oh = _out_size(padding, h, kh, stride[0], dil[0])
    ow = _out_size(padding, w, kw, stride[1], dil[1])
    y = mb.add_tensor([n, oh, ow, cout], name="y")
    mb.add_op("CONV_2D", ins, [y], version=version, options=dict(
        padding=padding, stride_h=stride[0], stride_w=stride[1], dilation_h_factor=dil[0],
        dilation_w_factor=dil[1], fused_activation_function=act))
    mb.mark_output(y)
    return mb.build()


def conv_weights(in_shape, cout, k=(3, 3), groups=1, seed=0):
    rng = np.random.default_rng(seed)
    kh, kw = k
    fc = in_shape[3] // groups
    wt = _rand(rng, (cout, kh, kw, fc), 1.0 / np.sqrt(kh * kw * fc))
    b = _rand(rng, (cout,), 0.5)
    return wt, b


def _conv(name, in_shape, cout, inputs=None, tol=1e-5, gpu=True, oracle="litert", ref_fn=None, **kw):
    return OpCase("CONV_2D", name, lambda: conv_model(in_shape, cout, **kw),
                  inputs or _inp(in_shape), tol=tol, gpu=gpu, oracle=oracle, ref_fn=ref_fn)


def _conv_zero_bias_oracle(in_shape, cout, **kw):
    """Oracle for bias-less convs: litert on the same conv with a zero bias constant."""
    def ref(*xs):
        return run_litert(conv_model(in_shape, cout, bias="zeros", **kw), list(xs))
    return ref


def _conv_nonconst_inputs(in_shape, cout, k, groups=1, with_bias=True):
    def gen(rng):
        wt, b = conv_weights(in_shape, cout, k, groups)
        xs = [_rand(rng, in_shape), wt]
        if with_bias:
            xs.append(b)
        return xs
    return gen


CONV_CASES = [
    _conv("3x3_same_relu6", [1, 8, 8, 3], 16, act="RELU6"),
    _conv("3x3_valid_s2", [1, 9, 9, 4], 8, padding="VALID", stride=(2, 2)),
    _conv("3x3_same_s2_batch2", [2, 10, 7, 5], 6, stride=(2, 2), act="RELU"),
    _conv("1x1_odd_channels", [2, 5, 7, 7], 13, k=(1, 1)),
    _conv("1x1_stride2", [1, 9, 8, 6], 10, k=(1, 1), stride=(2, 2)),
    _conv("1x1_valid_wide", [1, 14, 14, 64], 96, k=(1, 1), padding="VALID", act="RELU6"),
    _conv("1x1_tail_panels", [1, 7, 7, 96], 37, k=(1, 1)),
    _conv("3x3_wide", [1, 28, 28, 32], 48, act="RELU6"),
    _conv("5x3_s2x1_valid", [1, 11, 9, 3], 5, k=(5, 3), stride=(2, 1), padding="VALID"),
    _conv("dilation2_same", [1, 12, 12, 4], 6, dil=(2, 2), version=2),
    _conv("dilation_2x3_valid", [1, 13, 14, 3], 4, dil=(2, 3), padding="VALID", version=2),
    _conv("relu_n1_to_1", [1, 6, 6, 3], 4, act="RELU_N1_TO_1"),
    _conv("tanh_ignored", [1, 6, 6, 3], 4, act="TANH"),
    _conv("sign_bit_ignored", [1, 5, 5, 2], 3, act="SIGN_BIT"),
    _conv("1x1_input", [1, 1, 1, 8], 16, k=(1, 1)),
    _conv("3x3_on_1x1_same", [1, 1, 1, 8], 4),
    _conv("filter_covers_input", [3, 4, 5, 2], 7, k=(4, 5), padding="VALID"),
    _conv("input_smaller_than_filter_valid", [1, 2, 2, 4], 3, padding="VALID", gpu=False),
    _conv("grouped_4", [1, 6, 6, 8], 12, groups=4, version=6),
    _conv("grouped_2_1x1", [2, 5, 5, 6], 4, k=(1, 1), groups=2, version=6),
    _conv("grouped_3_s2", [1, 9, 9, 9], 6, groups=3, stride=(2, 2), version=6),
    _conv("weights_input", [1, 7, 7, 5], 6, weights="input", bias="input", gpu=False,
          inputs=_conv_nonconst_inputs([1, 7, 7, 5], 6, (3, 3))),
    _conv("weights_input_1x1", [2, 4, 4, 9], 11, k=(1, 1), weights="input", bias="input", gpu=False,
          inputs=_conv_nonconst_inputs([2, 4, 4, 9], 11, (1, 1))),
    _conv("no_bias", [1, 7, 7, 3], 8, bias="none", oracle="numpy", act="RELU",
          ref_fn=_conv_zero_bias_oracle([1, 7, 7, 3], 8, act="RELU")),
    _conv("absent_bias_1x1", [1, 4, 4, 5], 6, k=(1, 1), bias="absent", oracle="numpy",
          ref_fn=_conv_zero_bias_oracle([1, 4, 4, 5], 6, k=(1, 1))),
    _conv("mobilenet_stem", [1, 224, 224, 3], 32, stride=(2, 2), act="RELU6"),
    _conv("batch3_s3", [3, 10, 10, 4], 8, stride=(3, 3), act="RELU"),
    _conv("big_k", [1, 56, 56, 64], 64, k=(1, 1), act="RELU6"),
    _conv("7x7_s2_same", [1, 23, 19, 5], 8, k=(7, 7), stride=(2, 2)),
    _conv("dilation4_small_input", [1, 5, 5, 3], 3, dil=(4, 4), version=2),
    _conv("grouped_dilated", [1, 10, 10, 6], 9, groups=3, dil=(2, 2), version=6),
    _conv("row_tail_37", [2, 3, 37, 16], 20, act="RELU"),
    _conv("2x2_s3_valid", [1, 10, 11, 4], 5, k=(2, 2), stride=(3, 3), padding="VALID"),
    _conv("width1", [1, 9, 1, 4], 3),
    _conv("3x3_c64_wide_out", [1, 14, 14, 64], 96, act="RELU"),
]


# ---------------------------------------------------------------------------------------------
# DEPTHWISE_CONV_2D
# ---------------------------------------------------------------------------------------------

def dw_model(in_shape, mult=1, k=(3, 3), stride=(1, 1), dil=(1, 1), padding="SAME", act="NONE",
             bias="const", weights="const", opt_mult=None, version=1, seed=0):
    rng = np.random.default_rng(seed)
    n, h, w, cin = in_shape
    cout = cin * mult
    kh, kw = k
    wt = _rand(rng, (1, kh, kw, cout), 1.0 / np.sqrt(kh * kw))
    b = _rand(rng, (cout,), 0.5)
    mb = ModelBuilder()
    x = mb.add_input(list(in_shape), name="x")
    wi = mb.add_input(list(wt.shape), name="w") if weights == "input" else mb.add_const(wt, name="w")
    ins = [x, wi]
    if bias == "const":
        ins.append(mb.add_const(b, name="b"))
    elif bias == "zeros":
        ins.append(mb.add_const(np.zeros(cout, F32), name="b"))
    elif bias == "none":
        ins.append(-1)
    oh = _out_size(padding, h, kh, stride[0], dil[0])
    ow = _out_size(padding, w, kw, stride[1], dil[1])
    y = mb.add_tensor([n, oh, ow, cout], name="y")
    mb.add_op("DEPTHWISE_CONV_2D", ins, [y], version=version, options=dict(
        padding=padding, stride_h=stride[0], stride_w=stride[1], dilation_h_factor=dil[0],
        dilation_w_factor=dil[1], fused_activation_function=act,
        depth_multiplier=mult if opt_mult is None else opt_mult))
    mb.mark_output(y)
    return mb.build()


def _dw(name, in_shape, inputs=None, gpu=True, oracle="litert", ref_fn=None, **kw):
    return OpCase("DEPTHWISE_CONV_2D", name, lambda: dw_model(in_shape, **kw), inputs or _inp(in_shape),
                  gpu=gpu, oracle=oracle, ref_fn=ref_fn)


def _dw_nonconst_inputs(in_shape, mult, k):
    def gen(rng):
        wt = _rand(np.random.default_rng(7), (1, k[0], k[1], in_shape[3] * mult))
        return [_rand(rng, in_shape), wt]
    return gen


DW_CASES = [
    _dw("3x3_s1_c32_relu6", [1, 16, 16, 32], act="RELU6"),
    _dw("3x3_s2_c19_batch2", [2, 15, 12, 19], stride=(2, 2), act="RELU"),
    _dw("3x3_s2_even", [1, 16, 16, 48], stride=(2, 2), act="RELU6"),
    _dw("3x3_valid_c16", [1, 9, 10, 16], padding="VALID"),
    _dw("3x3_dilation2", [1, 12, 12, 24], dil=(2, 2), version=2),
    _dw("3x3_dilation_valid", [1, 13, 11, 8], dil=(3, 2), padding="VALID", version=2),
    _dw("5x5_c24", [1, 14, 14, 24], k=(5, 5), act="RELU6"),
    # 5x5 interior kernel (kDwPix pixels at once): channel counts that leave a partial last
    # vector block (overlapping block), fewer channels than a vector, stride 2, VALID, dilation.
    _dw("5x5_c28_w19", [1, 11, 19, 28], k=(5, 5)),
    _dw("5x5_c42_relu", [1, 9, 13, 42], k=(5, 5), act="RELU"),
    _dw("5x5_c5", [1, 10, 10, 5], k=(5, 5)),
    _dw("5x5_s2_c36", [1, 17, 18, 36], k=(5, 5), stride=(2, 2), act="RELU6"),
    _dw("5x5_valid_c20", [1, 12, 14, 20], k=(5, 5), padding="VALID"),
    _dw("5x5_dil2_c12", [1, 16, 16, 12], k=(5, 5), dil=(2, 2), version=2),
    # 5x5 register-reuse kernel (DwKRows<5, S>): batch 2 with 8-, 4- and 1-pixel runs, stride 2
    # with an odd width and a partial last channel block, a row narrower than one run.
    _dw("5x5_s1_c32_b2_w21", [2, 9, 21, 32], k=(5, 5), act="RELU"),
    _dw("5x5_s2_c40_w23", [1, 11, 23, 40], k=(5, 5), stride=(2, 2)),
    _dw("5x5_s1_c16_w6", [1, 7, 6, 16], k=(5, 5), act="RELU6"),
    _dw("3x3_c28_tail", [1, 10, 21, 28], act="RELU6"),
    # 3x3 register-reuse kernel (stride 1 or 2 along the row): many channels (one-block tiles,
    # partial last block), interior runs leaving 4..7 and 1..3 pixels, VALID, mixed strides.
    _dw("3x3_c520_w30", [1, 4, 30, 520], act="RELU6"),
    _dw("3x3_s2_valid_w23_c24", [1, 9, 23, 24], stride=(2, 2), padding="VALID"),
    _dw("3x3_s2x1_c20", [1, 11, 14, 20], stride=(2, 1)),
    _dw("3x3_s1x2_c36_relu", [1, 7, 17, 36], stride=(1, 2), act="RELU"),
    _dw("3x5_s1x2_c7", [1, 9, 13, 7], k=(3, 5), stride=(1, 2)),
    _dw("1x1_c33", [1, 5, 5, 33], k=(1, 1)),
    _dw("mult2", [1, 8, 8, 4], mult=2, act="RELU"),
    _dw("mult3_s2_valid", [2, 9, 9, 5], mult=3, stride=(2, 2), padding="VALID"),
    _dw("option_mult_ignored", [1, 6, 6, 4], mult=2, opt_mult=1),
    _dw("tanh_ignored", [1, 6, 6, 8], act="TANH"),
    _dw("relu_n1_to_1", [1, 6, 6, 8], act="RELU_N1_TO_1"),
    _dw("3x3_on_1x1", [1, 1, 1, 16]),
    _dw("3x3_on_2x2_s2", [1, 2, 2, 40], stride=(2, 2), act="RELU6"),
    _dw("c1", [1, 7, 7, 1]),
    _dw("mobilenet_112_c32", [1, 112, 112, 32], act="RELU6"),
    _dw("mobilenet_s2_c144", [1, 56, 56, 144], stride=(2, 2), act="RELU6"),
    _dw("row_tail_37_c40", [2, 3, 37, 40], act="RELU"),
    _dw("7x7_s3_c20", [1, 17, 15, 20], k=(7, 7), stride=(3, 3)),
    _dw("3x3_s2_dil2_c16", [1, 15, 15, 16], stride=(2, 2), dil=(2, 2), version=2),
    _dw("width1_c16", [1, 9, 1, 16]),
    _dw("filter_input", [1, 8, 8, 12], weights="input", bias="none", oracle="numpy", gpu=False,
        inputs=_dw_nonconst_inputs([1, 8, 8, 12], 1, (3, 3)),
        ref_fn=lambda x, w: run_litert(_dw_const_filter_model([1, 8, 8, 12], w), [x])),
    _dw("no_bias", [1, 9, 9, 20], bias="none", act="RELU6", oracle="numpy",
        ref_fn=lambda x: run_litert(dw_model([1, 9, 9, 20], bias="zeros", act="RELU6"), [x])),
]


def _dw_const_filter_model(in_shape, wt):
    mb = ModelBuilder()
    x = mb.add_input(list(in_shape), name="x")
    wi = mb.add_const(np.asarray(wt, F32), name="w")
    b = mb.add_const(np.zeros(wt.shape[3], F32), name="b")
    y = mb.add_tensor(list(in_shape[:3]) + [wt.shape[3]], name="y")
    mb.add_op("DEPTHWISE_CONV_2D", [x, wi, b], [y], options=dict(
        padding="SAME", stride_h=1, stride_w=1, depth_multiplier=wt.shape[3] // in_shape[3]))
    mb.mark_output(y)
    return mb.build()


# ---------------------------------------------------------------------------------------------
# FULLY_CONNECTED
# ---------------------------------------------------------------------------------------------

def fc_model(in_shape, units, act="NONE", keep_num_dims=False, bias="const", weights="const",
             version=1, seed=0, options=True):
    rng = np.random.default_rng(seed)
    in_size = in_shape[-1]
    wt = _rand(rng, (units, in_size), 1.0 / np.sqrt(in_size))
    b = _rand(rng, (units,), 0.5)
    mb = ModelBuilder()
    x = mb.add_input(list(in_shape), name="x")
    wi = mb.add_input(list(wt.shape), name="w") if weights == "input" else mb.add_const(wt, name="w")
    ins = [x, wi]
    if bias == "const":
        ins.append(mb.add_const(b, name="b"))
    elif bias == "none":
        ins.append(-1)
    elif bias == "input":
        ins.append(mb.add_input([units], name="b"))
    if keep_num_dims:
        oshape = list(in_shape[:-1]) + [units]
    else:
        oshape = [int(np.prod(in_shape)) // in_size, units]
    y = mb.add_tensor(oshape, name="y")
    opts = dict(fused_activation_function=act, keep_num_dims=keep_num_dims) if options else None
    mb.add_op("FULLY_CONNECTED", ins, [y], version=version, options=opts)
    mb.mark_output(y)
    return mb.build()


def _fc(name, in_shape, units, inputs=None, gpu=True, **kw):
    return OpCase("FULLY_CONNECTED", name, lambda: fc_model(in_shape, units, **kw), inputs or _inp(in_shape),
                  gpu=gpu)


def _fc_nonconst_inputs(in_shape, units, with_bias):
    def gen(rng):
        r = np.random.default_rng(5)
        xs = [_rand(rng, in_shape), _rand(r, (units, in_shape[-1]), 0.3)]
        if with_bias:
            xs.append(_rand(r, (units,)))
        return xs
    return gen


FC_CASES = [
    _fc("2d_relu", [3, 10], 7, act="RELU"),
    _fc("2d_relu6_odd", [5, 33], 37, act="RELU6"),
    _fc("relu_n1_to_1", [2, 8], 5, act="RELU_N1_TO_1"),
    _fc("gemv_1024_1001", [1, 1024], 1001),
    _fc("batch16_256_128", [16, 256], 128, act="RELU"),
    _fc("keep_num_dims_3d", [2, 3, 12], 9, keep_num_dims=True, version=5),
    _fc("keep_num_dims_4d", [2, 2, 3, 6], 4, keep_num_dims=True, version=5),
    _fc("flatten_4d", [2, 3, 4, 5], 6),
    _fc("1d_input", [12], 5),
    _fc("1d_input_keep", [12], 5, keep_num_dims=True, version=5),
    _fc("no_bias_minus1", [4, 9], 6, bias="none"),
    _fc("no_bias_absent", [4, 9], 6, bias="absent"),
    _fc("no_options", [2, 6], 3, options=False),
    _fc("weights_input", [3, 17], 11, weights="input", bias="input", gpu=False,
        inputs=_fc_nonconst_inputs([3, 17], 11, True)),
    _fc("weights_input_no_bias", [4, 16], 8, weights="input", bias="none", gpu=False,
        inputs=_fc_nonconst_inputs([4, 16], 8, False)),
    _fc("batch0", [0, 4], 3, gpu=False),
    _fc("units1", [3, 20], 1),
]


# ---------------------------------------------------------------------------------------------
# TRANSPOSE_CONV
# ---------------------------------------------------------------------------------------------

def tc_out(padding, n, k, s):
    return n * s if padding == "SAME" else (n - 1) * s + k


def tc_model(in_shape, cout, k=(3, 3), stride=(2, 2), padding="SAME", act=None, bias="const",
             out_hw=None, shape_input=False, weights="const", version=3, seed=0):
    rng = np.random.default_rng(seed)
    n, h, w, cin = in_shape
    kh, kw = k
    oh, ow = out_hw or (tc_out(padding, h, kh, stride[0]), tc_out(padding, w, kw, stride[1]))
    oshape = [n, oh, ow, cout]
    wt = _rand(rng, (cout, kh, kw, cin), 1.0 / np.sqrt(kh * kw * cin / (stride[0] * stride[1])))
    b = _rand(rng, (cout,), 0.5)
    mb = ModelBuilder()
    if shape_input:
        s = mb.add_input([4], np.int32, name="output_shape")
    else:
        s = mb.add_const(np.asarray(oshape, np.int32), name="output_shape")
    wi = mb.add_input(list(wt.shape), name="w") if weights == "input" else mb.add_const(wt, name="w")
    x = mb.add_input(list(in_shape), name="x")
    ins = [s, wi, x]
    if bias == "const":
        ins.append(mb.add_const(b, name="b"))
    elif bias == "none":
        ins.append(-1)
    y = mb.add_tensor(oshape, name="y")
    opts = dict(padding=padding, stride_h=stride[0], stride_w=stride[1])
    if act is not None:
        opts["fused_activation_function"] = act
    mb.add_op("TRANSPOSE_CONV", ins, [y], version=version, options=opts)
    mb.mark_output(y)
    return mb.build()


def _tc(name, in_shape, cout, inputs=None, gpu=True, **kw):
    return OpCase("TRANSPOSE_CONV", name, lambda: tc_model(in_shape, cout, **kw), inputs or _inp(in_shape),
                  gpu=gpu)


TC_CASES = [
    _tc("same_s2_k3", [1, 4, 4, 3], 2),
    _tc("same_s2_k4_wide", [1, 8, 8, 32], 16),
    _tc("valid_s2_k3", [1, 5, 6, 4], 3, padding="VALID"),
    _tc("same_s1_k3", [1, 6, 6, 5], 4, stride=(1, 1)),
    _tc("same_s2_k2", [2, 7, 5, 6], 8, k=(2, 2)),
    _tc("valid_s3_k2_gaps", [1, 4, 4, 3], 5, k=(2, 2), stride=(3, 3), padding="VALID"),
    _tc("same_s2x1_k3x5", [1, 5, 6, 3], 4, k=(3, 5), stride=(2, 1)),
    _tc("same_odd_out_9", [1, 5, 5, 3], 2, out_hw=(9, 9)),
    _tc("no_bias_v1", [1, 4, 4, 3], 2, bias="absent", version=1),
    _tc("bias_minus1", [1, 4, 4, 3], 2, bias="none"),
    _tc("relu_v4", [1, 5, 5, 4], 6, act="RELU", version=4),
    _tc("relu6_v4", [1, 5, 5, 4], 6, act="RELU6", version=4),
    _tc("tanh_ignored_v4", [1, 4, 4, 4], 3, act="TANH", version=4),
    _tc("1x1_s1", [1, 3, 3, 7], 5, k=(1, 1), stride=(1, 1)),
    _tc("big_k4_s2", [1, 16, 16, 64], 32, k=(4, 4)),
    _tc("dynamic_output_shape", [1, 4, 4, 3], 2, shape_input=True, gpu=False,
        inputs=lambda rng: [np.asarray([1, 8, 8, 2], np.int32), _rand(rng, (1, 4, 4, 3))]),
    _tc("weights_input", [1, 4, 4, 3], 2, weights="input", gpu=False,
        inputs=lambda rng: [_rand(np.random.default_rng(3), (2, 3, 3, 3)), _rand(rng, (1, 4, 4, 3))]),
]


# ---------------------------------------------------------------------------------------------
# BATCH_MATMUL
# ---------------------------------------------------------------------------------------------

def bmm_model(a_shape, b_shape, adj_x=False, adj_y=False, const_b=False, seed=0, options=True):
    mb = ModelBuilder()
    a = mb.add_input(list(a_shape), name="a")
    if const_b:
        b = mb.add_const(_rand(np.random.default_rng(seed), b_shape), name="b")
    else:
        b = mb.add_input(list(b_shape), name="b")
    A = np.zeros(a_shape, F32)
    B = np.zeros(b_shape, F32)
    if adj_x:
        A = np.swapaxes(A, -1, -2)
    if adj_y:
        B = np.swapaxes(B, -1, -2)
    y = mb.add_tensor(list(np.matmul(A, B).shape), name="y")
    mb.add_op("BATCH_MATMUL", [a, b], [y], options=dict(adj_x=adj_x, adj_y=adj_y) if options else None)
    mb.mark_output(y)
    return mb.build()


def _bmm(name, a_shape, b_shape, gpu=True, **kw):
    inputs = _inp(a_shape) if kw.get("const_b") else _inp(a_shape, b_shape)
    return OpCase("BATCH_MATMUL", name, lambda: bmm_model(a_shape, b_shape, **kw), inputs, gpu=gpu)


BMM_CASES = [
    _bmm("3d", [2, 3, 4], [2, 4, 5]),
    _bmm("2d", [7, 9], [9, 6]),
    _bmm("adj_x", [2, 4, 3], [2, 4, 5], adj_x=True),
    _bmm("adj_y", [2, 3, 4], [2, 5, 4], adj_y=True),
    _bmm("adj_both", [3, 6, 5], [3, 7, 6], adj_x=True, adj_y=True),
    _bmm("broadcast_lhs_batch1", [1, 3, 4], [3, 4, 5]),
    _bmm("broadcast_4d_3d", [2, 1, 3, 4], [3, 4, 5]),
    _bmm("broadcast_rank2_rank3", [3, 4], [2, 4, 5]),
    _bmm("broadcast_both", [2, 1, 5, 8], [1, 3, 8, 6], adj_y=False),
    _bmm("rank5", [1, 2, 3, 4, 5], [5, 6], gpu=False),  # GPU: rank 5 has no BHWC layout (refused)
    _bmm("const_rhs", [2, 3, 16], [16, 24], const_b=True),
    _bmm("const_rhs_batched_adj_y", [2, 5, 16], [2, 12, 16], const_b=True, adj_y=True),
    _bmm("large", [4, 33, 65], [4, 65, 47]),
    _bmm("many_batches", [12, 16, 32], [12, 32, 16], adj_y=False),
    _bmm("k0", [2, 3, 0], [2, 0, 5], gpu=False),
    _bmm("m0", [2, 0, 4], [2, 4, 5], gpu=False),
    _bmm("no_options", [2, 3, 4], [2, 4, 5], options=False),
]


# ---------------------------------------------------------------------------------------------
# Convolution2DTransposeBias (MediaPipe custom op; oracle: litert with its XNNPACK delegate)
# ---------------------------------------------------------------------------------------------

def tcb_model(in_shape, cout, k=(3, 3), stride=(2, 2), padding="SAME", out_hw=None, seed=0):
    rng = np.random.default_rng(seed)
    n, h, w, cin = in_shape
    kh, kw = k
    oh, ow = out_hw or (tc_out(padding, h, kh, stride[0]), tc_out(padding, w, kw, stride[1]))
    wt = _rand(rng, (cout, kh, kw, cin), 1.0 / np.sqrt(kh * kw * cin / (stride[0] * stride[1])))
    b = _rand(rng, (cout,), 0.5)
    mb = ModelBuilder()
    x = mb.add_input(list(in_shape), name="x")
    wi = mb.add_const(wt, name="w")
    bi = mb.add_const(b, name="b")
    y = mb.add_tensor([n, oh, ow, cout], name="y")
    pad = {"SAME": 1, "VALID": 2}[padding]
    mb.add_op(("CUSTOM", "Convolution2DTransposeBias"), [x, wi, bi], [y],
              custom_options=struct.pack("<iii", pad, stride[1], stride[0]))
    mb.mark_output(y)
    return mb.build()


def tcb_equivalent_tc_model(in_shape, cout, k=(3, 3), stride=(2, 2), padding="SAME", out_hw=None, seed=0):
    """The same computation as TRANSPOSE_CONV (v3, with bias)."""
    return tc_model(in_shape, cout, k=k, stride=stride, padding=padding, out_hw=out_hw, seed=seed, bias="const",
                    version=3)


TCB_PARAMS = [
    ("same_s2_k3", [1, 4, 4, 3], 2, {}),
    ("same_s2_k4_c16", [1, 8, 8, 16], 8, dict(k=(4, 4))),
    ("same_s2_k2", [1, 6, 5, 5], 7, dict(k=(2, 2))),
    ("valid_s2_k2", [1, 5, 5, 4], 3, dict(k=(2, 2), padding="VALID")),
    ("valid_s2_k3", [2, 4, 6, 3], 4, dict(padding="VALID")),
    ("same_declared_odd_9", [1, 5, 5, 3], 2, dict(out_hw=(9, 9))),
    ("same_s1_k3", [1, 6, 6, 8], 4, dict(stride=(1, 1))),
]

TCB_CASES = [
    OpCase("Convolution2DTransposeBias", name, (lambda s=shape, c=cout, kw=kw: tcb_model(s, c, **kw)), _inp(shape),
           oracle="litert_xnnpack")
    for name, shape, cout, kw in TCB_PARAMS
]


CASES = CONV_CASES + DW_CASES + FC_CASES + TC_CASES + BMM_CASES + TCB_CASES


# ---------------------------------------------------------------------------------------------
# GPU-specific cases: shapes that reach the GPU generator's other code paths (several x positions
# and 4 output slices per work item, split source-slice loops, slice-aligned groups, FULLY_CONNECTED
# over a whole H x W x C window, constant-rhs BATCH_MATMUL as a 1x1 convolution).
# ---------------------------------------------------------------------------------------------

def _fc_window_model(in_shape, units, act="NONE", seed=0):
    """FULLY_CONNECTED whose weights take each batch's whole H*W*C as one row."""
    rng = np.random.default_rng(seed)
    in_size = int(np.prod(in_shape[1:]))
    wt = _rand(rng, (units, in_size), 1.0 / np.sqrt(in_size))
    b = _rand(rng, (units,), 0.5)
    mb = ModelBuilder()
    x = mb.add_input(list(in_shape), name="x")
    y = mb.add_tensor([in_shape[0], units], name="y")
    mb.add_op("FULLY_CONNECTED", [x, mb.add_const(wt, name="w"), mb.add_const(b, name="b")], [y],
              options=dict(fused_activation_function=act))
    mb.mark_output(y)
    return mb.build()


GPU_CASES = [
    _conv("gpu_1x1_large_xt2", [1, 128, 128, 16], 64, k=(1, 1), act="RELU6"),
    _conv("gpu_3x3_large_xt2", [1, 128, 128, 8], 32, act="RELU"),
    _conv("gpu_3x3_s2_large_odd", [1, 255, 253, 5], 30, stride=(2, 2)),
    _conv("gpu_1x1_split_k", [1, 7, 7, 256], 130, k=(1, 1), act="RELU6"),
    _conv("gpu_3x3_split_k", [2, 4, 5, 96], 20),
    _conv("gpu_grouped_aligned", [1, 6, 6, 16], 16, groups=2, version=6),
    _conv("gpu_grouped_aligned_1x1", [1, 5, 5, 32], 64, k=(1, 1), groups=4, version=6),
    _dw("gpu_mult3_c5", [1, 7, 9, 5], mult=3, act="RELU6"),
    _dw("gpu_large_s1", [1, 130, 129, 24], act="RELU6"),
    _dw("gpu_dilated_wide", [1, 40, 40, 8], k=(3, 3), dil=(4, 4), version=2),
    OpCase("FULLY_CONNECTED", "gpu_window_4d", lambda: _fc_window_model([2, 3, 4, 5], 6, act="RELU"),
           _inp([2, 3, 4, 5])),
    OpCase("FULLY_CONNECTED", "gpu_window_3d", lambda: _fc_window_model([3, 5, 8], 7), _inp([3, 5, 8])),
    _fc("gpu_gemv_2048_1000", [1, 2048], 1000),
    _bmm("gpu_const_rhs_adj_y", [2, 5, 16], [12, 16], const_b=True, adj_y=True),
    _bmm("gpu_const_rhs_2d", [9, 33], [33, 17], const_b=True),
    _bmm("gpu_adj_y_4d", [2, 3, 5, 9], [2, 3, 6, 9], adj_y=True),
]

CASES += GPU_CASES
