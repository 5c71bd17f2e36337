"""CONV_3D, CONV_3D_TRANSPOSE (NDHWC float32) and L2_POOL_2D (NHWC float32) against LiteRT
BUILTIN_WITHOUT_DEFAULT_DELEGATES: strides, dilations, SAME/VALID, bias or none, fused
activations, a non-constant output_shape (dynamic output). The GPU delegate takes none of them
(TFLite's GPU delegate does not either): they stay on the CPU with the reason reported."""
import numpy as np

from harness import OpCase, normal_inputs
from tflite_gpu.testing.builder import ModelBuilder

F32, I32 = np.float32, np.int32


def _conv_out(pad, n, k, s, d):
    eff = (k - 1) * d + 1
    return -(-n // s) if pad == "SAME" else (n - eff + s) // s


def conv3d_model(in_shape, fshape, pad, strides, dil=(1, 1, 1), act="NONE", bias=True, seed=0):
    rng = np.random.default_rng(seed)
    mb = ModelBuilder()
    x = mb.add_input(list(in_shape), F32, name="x")
    w = mb.add_const(rng.normal(0, 0.5, fshape).astype(F32), name="filter")
    ins = [x, w]
    if bias:
        ins.append(mb.add_const(rng.normal(0, 0.5, fshape[4]).astype(F32), name="bias"))
    out = [in_shape[0]] + [_conv_out(pad, in_shape[i + 1], fshape[i], strides[i], dil[i]) for i in range(3)] + [fshape[4]]
    y = mb.add_tensor(out, F32, name="y")
    mb.add_op("CONV_3D", ins, [y], options=dict(
        padding=pad, stride_d=strides[0], stride_h=strides[1], stride_w=strides[2], fused_activation_function=act,
        dilation_d_factor=dil[0], dilation_h_factor=dil[1], dilation_w_factor=dil[2]))
    mb.mark_output(y)
    return mb.build()


def conv3dt_model(in_shape, fshape, out_shape, pad, strides, dil=(1, 1, 1), act="NONE", bias=True, dynamic=False,
                  seed=0):
    rng = np.random.default_rng(seed)
    mb = ModelBuilder()
    os_ = mb.add_input([5], I32, name="output_shape") if dynamic else \
        mb.add_const(np.array(out_shape, I32), name="output_shape")
    w = mb.add_const(rng.normal(0, 0.5, fshape).astype(F32), name="filter")
    x = mb.add_input(list(in_shape), F32, name="x")
    ins = [os_, w, x]
    if bias:
        ins.append(mb.add_const(rng.normal(0, 0.5, fshape[3]).astype(F32), name="bias"))
    y = mb.add_tensor(list(out_shape), F32, name="y")
    mb.add_op("CONV_3D_TRANSPOSE", ins, [y], options=dict(
        padding=pad, stride_d=strides[0], stride_h=strides[1], stride_w=strides[2], fused_activation_function=act,
        dilation_d_factor=dil[0], dilation_h_factor=dil[1], dilation_w_factor=dil[2]))
    mb.mark_output(y)
    return mb.build()


def l2pool_model(in_shape, pad, filt, strides, act="NONE"):
    mb = ModelBuilder()
    x = mb.add_input(list(in_shape), F32, name="x")
    out = [in_shape[0], _conv_out(pad, in_shape[1], filt[0], strides[0], 1),
           _conv_out(pad, in_shape[2], filt[1], strides[1], 1), in_shape[3]]
    y = mb.add_tensor(out, F32, name="y")
    mb.add_op("L2_POOL_2D", [x], [y], options=dict(padding=pad, filter_height=filt[0], filter_width=filt[1],
                                                   stride_h=strides[0], stride_w=strides[1],
                                                   fused_activation_function=act))
    mb.mark_output(y)
    return mb.build()


CASES = []
_C3 = [  # name, input, filter [KD, KH, KW, Cin, Cout], padding, strides, dilations, activation, bias
    ("valid_s1_bias", (1, 4, 5, 6, 3), (2, 3, 2, 3, 4), "VALID", (1, 1, 1), (1, 1, 1), "NONE", True),
    ("same_s2_relu", (2, 5, 6, 7, 2), (3, 3, 3, 2, 3), "SAME", (2, 2, 2), (1, 1, 1), "RELU", True),
    ("same_dilated_relu6", (1, 6, 6, 6, 2), (2, 2, 2, 2, 2), "SAME", (1, 1, 1), (2, 1, 2), "RELU6", True),
    ("valid_s121_no_bias_relu1", (1, 3, 7, 4, 5), (1, 3, 2, 5, 2), "VALID", (1, 2, 1), (1, 1, 1), "RELU_N1_TO_1", False),
    ("same_mixed_strides_dilations", (1, 7, 5, 6, 3), (3, 2, 3, 3, 4), "SAME", (2, 1, 3), (1, 2, 1), "NONE", True),
]
for _n, _i, _f, _p, _s, _d, _a, _b in _C3:
    CASES.append(OpCase("CONV_3D", _n, (lambda i=_i, f=_f, p=_p, s=_s, d=_d, a=_a, b=_b: conv3d_model(i, f, p, s, d, a, b)),
                        normal_inputs(_i), gpu=False))

_C3T = [  # name, input, filter [KD, KH, KW, Cout, Cin], output shape, padding, strides, dilations, activation, bias
    ("same_s2_bias", (1, 3, 3, 3, 2), (3, 3, 3, 3, 2), (1, 6, 6, 6, 3), "SAME", (2, 2, 2), (1, 1, 1), "NONE", True),
    ("valid_s1_relu", (2, 3, 4, 2, 2), (2, 2, 2, 4, 2), (2, 4, 5, 3, 4), "VALID", (1, 1, 1), (1, 1, 1), "RELU", True),
    ("valid_dilated_no_bias", (1, 3, 3, 3, 1), (2, 2, 2, 2, 1), (1, 5, 5, 5, 2), "VALID", (1, 1, 1), (2, 2, 2), "NONE", False),
    ("same_s212_odd_out_relu6", (1, 3, 4, 3, 3), (3, 2, 3, 2, 3), (1, 5, 4, 5, 2), "SAME", (2, 1, 2), (1, 1, 1), "RELU6", True),
    ("valid_s2_k3", (1, 2, 3, 2, 2), (3, 3, 3, 2, 2), (1, 5, 7, 5, 2), "VALID", (2, 2, 2), (1, 1, 1), "NONE", True),
]
for _n, _i, _f, _o, _p, _s, _d, _a, _b in _C3T:
    CASES.append(OpCase("CONV_3D_TRANSPOSE", _n,
                        (lambda i=_i, f=_f, o=_o, p=_p, s=_s, d=_d, a=_a, b=_b: conv3dt_model(i, f, o, p, s, d, a, b)),
                        normal_inputs(_i), gpu=False))
CASES.append(OpCase("CONV_3D_TRANSPOSE", "dynamic_output_shape",
                    lambda: conv3dt_model((1, 3, 3, 3, 2), (3, 3, 3, 3, 2), (1, 1, 1, 1, 3), "SAME", (2, 2, 2),
                                          dynamic=True),
                    lambda rng: [np.array([1, 6, 5, 6, 3], I32), rng.normal(0, 1, (1, 3, 3, 3, 2)).astype(F32)],
                    gpu=False))

_L2 = [  # name, input, padding, filter, strides, activation
    ("valid_2x2_s2", (1, 4, 6, 3), "VALID", (2, 2), (2, 2), "NONE"),
    ("same_3x3_s1_relu6", (2, 5, 5, 4), "SAME", (3, 3), (1, 1), "RELU6"),
    ("same_3x2_s2", (1, 7, 5, 2), "SAME", (3, 2), (2, 2), "NONE"),
    ("valid_1x3_s13_relu1", (1, 3, 9, 5), "VALID", (1, 3), (1, 3), "RELU_N1_TO_1"),
]
for _n, _i, _p, _f, _s, _a in _L2:
    CASES.append(OpCase("L2_POOL_2D", _n, (lambda i=_i, p=_p, f=_f, s=_s, a=_a: l2pool_model(i, p, f, s, a)),
                        normal_inputs(_i), gpu=False))
