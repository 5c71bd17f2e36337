"""Conv family, quantized kernels: CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, TRANSPOSE_CONV,
BATCH_MATMUL with int8 (per-tensor / per-channel weights), uint8 (legacy asymmetric) and int16x8
activations, and the dynamic-range ("hybrid") kernels (float activations, int8 weights).

Oracle: LiteRT's builtin kernels (BUILTIN_WITHOUT_DEFAULT_DELEGATES); integer outputs must match
exactly (the harness compares integer outputs with assert_array_equal). Hybrid outputs are float
and compared with a tight rel-L2 bound.

The `ties` cases use scales whose multiplier is an exact power of two and small integer inputs, so
that many accumulators sit exactly on a rounding tie: they tell the rounding variants of
quant_common.h apart (each of them fails for every variant but the one LiteRT's builtin kernel
uses; measured when they were written).
"""
import numpy as np

from harness import OpCase
from tflite_gpu.testing import quant as Q
from tflite_gpu.testing.builder import ModelBuilder

I8, U8, I16 = np.int8, np.uint8, np.int16
KIND = {I8: "int8", U8: "uint8", I16: "int16x8"}


def _out_size(padding, n, k, s, d=1):
    eff = (k - 1) * d + 1
    if padding == "SAME":
        return (n + s - 1) // s
    return max(0, (n - eff + s) // s)


class Spec:
    """Quantization of one single-op model: activation type, input/output params, weights."""

    def __init__(self, dtype=I8, in_qp=None, out_qp=None, per_channel=True, w_zp=0, w_range=None,
                 bias="const", bias_dtype=None, bias_range=None, in_range=None, w_scale=None):
        self.dtype = dtype
        self.in_qp = in_qp
        self.out_qp = out_qp
        self.per_channel = per_channel
        self.w_zp = w_zp
        self.w_range = w_range
        self.bias = bias            # 'const' | 'absent'
        self.bias_dtype = bias_dtype or (np.int64 if dtype == I16 else np.int32)
        self.bias_range = bias_range
        self.in_range = in_range    # (lo, hi) of the random inputs (default: whole type)
        self.w_scale = w_scale      # fixed weight scale(s) (ties cases)

    def weights(self, rng, shape, axis):
        wt = U8 if self.dtype == U8 else I8
        lo, hi = self.w_range or ((0, 255) if wt == U8 else (-127, 127))
        w = rng.integers(lo, hi + 1, size=shape).astype(wt)
        n = shape[axis]
        if self.w_scale is not None:
            s = np.broadcast_to(np.asarray(self.w_scale, np.float32), (n,)) if self.per_channel else self.w_scale
        else:
            s = rng.uniform(0.002, 0.02, n).astype(np.float32) if self.per_channel else 0.01
        if self.per_channel:
            qp = Q.QParams([float(v) for v in s], [0] * n, axis)
        else:
            qp = Q.QParams(float(s), int(self.w_zp))
        return w, qp

    def bias_tensor(self, mb, rng, n, w_qp):
        if self.bias != "const":
            return -1
        s_in = float(self.in_qp.scales()[0])
        ws = w_qp.scales()
        lo, hi = self.bias_range or (-(1 << 12), 1 << 12)
        b = rng.integers(lo, hi + 1, size=n).astype(self.bias_dtype)
        if w_qp.per_channel:
            bq = dict(scale=[float(np.float32(s_in) * np.float32(v)) for v in ws], zero_point=[0] * n)
        else:
            bq = dict(scale=[float(np.float32(s_in) * np.float32(ws[0]))], zero_point=[0])
        return mb.add_const(b, name="b", quant=bq)

    def inputs(self, *shapes):
        def gen(rng):
            lo, hi = self.in_range or (None, None)
            return [Q.random_q(rng, s, self.dtype, lo, hi) for s in shapes]
        return gen


def _spec(dtype, **kw):
    """Defaults per type: output scale chosen so outputs spread over the range (some saturate)."""
    if dtype == I8:
        kw.setdefault("in_qp", Q.QParams(0.05, 3))
        kw.setdefault("out_qp", Q.QParams(0.35, -5))
    elif dtype == U8:
        kw.setdefault("in_qp", Q.QParams(0.05, 131))
        kw.setdefault("out_qp", Q.QParams(0.4, 120))
        kw.setdefault("per_channel", False)
        kw.setdefault("w_zp", 127)
    else:
        kw.setdefault("in_qp", Q.QParams(0.0005, 0))
        kw.setdefault("out_qp", Q.QParams(0.004, 0))
    return Spec(dtype, **kw)


def _ties(dtype, out_den=8.0, **kw):
    """Multiplier exactly 2^-k and small inputs: many rounding ties."""
    zp = 128 if dtype == U8 else 0
    kw.setdefault("per_channel", dtype != U8)
    return Spec(dtype, in_qp=Q.QParams(1.0, zp), out_qp=Q.QParams(out_den, zp), w_scale=1.0,
                w_zp=zp if dtype == U8 else 0, in_range=(zp - 4, zp + 4),
                w_range=(zp - 3, zp + 3), bias_range=(-20, 20), **kw)


# ---------------------------------------------------------------------------------------------
# CONV_2D
# ---------------------------------------------------------------------------------------------

def qconv_model(spec, in_shape, cout, k=(3, 3), stride=(1, 1), dil=(1, 1), padding="SAME", act="NONE", seed=0):
    rng = np.random.default_rng(seed)
    n, h, w, cin = in_shape
    wt, wqp = spec.weights(rng, (cout, k[0], k[1], cin), 0)
    mb = ModelBuilder()
    x = mb.add_input(list(in_shape), spec.dtype, name="x", quant=Q.quant_dict(spec.in_qp))
    wi = mb.add_const(wt, name="w", quant=Q.quant_dict(wqp))
    b = spec.bias_tensor(mb, rng, cout, wqp)
    oh = _out_size(padding, h, k[0], stride[0], dil[0])
    ow = _out_size(padding, w, k[1], stride[1], dil[1])
    y = mb.add_tensor([n, oh, ow, cout], spec.dtype, name="y", quant=Q.quant_dict(spec.out_qp))
    ins = [x, wi] + ([b] if b != -1 else [])
    mb.add_op("CONV_2D", ins, [y], version=4 if spec.dtype == I16 else 3, options=dict(
        padding=padding, stride_h=stride[0], stride_w=stride[1], dilation_h_factor=dil[0],
        dilation_w_factor=dil[1], fused_activation_function=act))
    mb.mark_output(y)
    return mb.build()


def _qconv(name, spec, in_shape, cout, **kw):
    return OpCase("CONV_2D", name, lambda: qconv_model(spec, in_shape, cout, **kw), spec.inputs(in_shape),
                  tol=0.0, gpu=False, quant=KIND[spec.dtype])


CONV_CASES = [
    _qconv("i8_pc_same_b2", _spec(I8), (2, 7, 6, 5), 9),
    _qconv("i8_pt_valid_s2", _spec(I8, per_channel=False), (1, 9, 8, 6), 7, stride=(2, 2), padding="VALID"),
    _qconv("i8_pc_relu", _spec(I8, out_qp=Q.QParams(0.2, -100)), (1, 6, 6, 4), 8, act="RELU"),
    _qconv("i8_pc_relu6", _spec(I8, out_qp=Q.QParams(0.03, -128)), (1, 6, 6, 4), 8, act="RELU6"),
    _qconv("i8_pc_tanh_is_none", _spec(I8, out_qp=Q.QParams(0.1, 0)), (1, 5, 5, 4), 8, act="TANH"),
    _qconv("i8_pc_relu_n1", _spec(I8, out_qp=Q.QParams(0.01, 10)), (1, 6, 6, 4), 8, act="RELU_N1_TO_1"),
    _qconv("i8_pc_dil2_s2_same", _spec(I8), (1, 11, 10, 3), 5, stride=(2, 1), dil=(2, 2)),
    _qconv("i8_pc_1x1", _spec(I8), (2, 5, 5, 24), 17, k=(1, 1)),
    _qconv("i8_pc_1x1_s2", _spec(I8), (1, 6, 6, 8), 16, k=(1, 1), stride=(2, 2)),
    _qconv("i8_zp_min", _spec(I8, in_qp=Q.QParams(0.05, -128), out_qp=Q.QParams(0.3, 127)), (1, 5, 5, 4), 6),
    _qconv("i8_zp_max", _spec(I8, in_qp=Q.QParams(0.05, 127), out_qp=Q.QParams(0.3, -128)), (1, 5, 5, 4), 6),
    _qconv("i8_saturate", _spec(I8, out_qp=Q.QParams(0.01, 0)), (1, 5, 5, 8), 6),
    _qconv("i8_big_k", _spec(I8, out_qp=Q.QParams(1.2, 0)), (1, 6, 6, 96), 40),
    _qconv("i8_ties", _ties(I8), (2, 6, 6, 8), 16, padding="VALID"),
    _qconv("i8_ties_pt", _ties(I8, 4.0, per_channel=False), (1, 6, 6, 8), 16),
    # The AVX-512 VNNI GEMM: im2col rows copied whole (k_w * in_c contiguous bytes) with a zero point
    # at the padding; K not a multiple of 4; a 16-wide last panel partly used (N = 40 = 32 + 8).
    _qconv("i8_3x3_s2_c3_zp", _spec(I8, in_qp=Q.QParams(0.05, 37)), (2, 11, 10, 3), 40, stride=(2, 2)),
    _qconv("i8_1x1_k27_n48", _spec(I8), (1, 5, 7, 27), 48, k=(1, 1)),
    # The AMX tile GEMM (>= 16 rows, K padded to 64-byte tile rows): several 32-row blocks with a
    # partial last one (M = 2 * 9 * 11 = 198), K = 136 (two tile chunks, the second partly padding),
    # N = 80 = 2 * 32 + 16 (a 16-wide last panel), per-tensor and per-channel, with RELU6 clamping.
    _qconv("i8_amx_1x1_m198_k136", _spec(I8, in_qp=Q.QParams(0.05, -7)), (2, 9, 11, 136), 80, k=(1, 1)),
    # AMX reading the input in place (pointwise): K = 64 exactly and M = 64, so the last block's
    # tile reads end exactly at the tensor's end (no tail copy); zero points at the extremes.
    _qconv("i8_amx_1x1_exact_m64_k64", _spec(I8, in_qp=Q.QParams(0.05, -128), out_qp=Q.QParams(0.4, 127)),
           (1, 8, 8, 64), 48, k=(1, 1)),
    _qconv("i8_amx_3x3_pt_relu6", _spec(I8, per_channel=False, out_qp=Q.QParams(0.03, -128)), (1, 12, 9, 24), 33,
           act="RELU6"),
    # The VNNI GEMM's packed output stage (4 vectors narrowed together: two rows of a 32-wide panel or
    # four of a 16-wide one, row counts not a multiple of those), pointwise blocks copied in one pass,
    # a multiplier > 1 (left shift), and im2col runs of whole-inside windows (stride 2, padding only at
    # the far edges, across the batch; rows of k_w * in_c = 216 bytes; dilation along y).
    _qconv("i8_1x1_n16_m63_relu6", _spec(I8, out_qp=Q.QParams(0.03, -128)), (1, 7, 9, 32), 16, k=(1, 1), act="RELU6"),
    _qconv("i8_1x1_n24_left_shift", _spec(I8, per_channel=False, out_qp=Q.QParams(0.0002, 3)), (1, 5, 5, 16), 24,
           k=(1, 1)),
    _qconv("i8_3x3_s2_c3_runs_relu6", _spec(I8, in_qp=Q.QParams(0.05, -9), out_qp=Q.QParams(0.03, -128)),
           (2, 16, 18, 3), 32, stride=(2, 2), act="RELU6"),
    _qconv("i8_3x3_c72", _spec(I8, out_qp=Q.QParams(1.5, 0)), (1, 6, 7, 72), 20),
    _qconv("i8_3x3_dil_y2", _spec(I8), (1, 9, 8, 8), 16, dil=(2, 1)),
    _qconv("u8_same", _spec(U8), (2, 6, 7, 5), 6),
    _qconv("u8_zp0_255", _spec(U8, in_qp=Q.QParams(0.05, 0), out_qp=Q.QParams(0.4, 255), w_zp=255), (1, 5, 5, 4), 6),
    _qconv("u8_zp255_0_relu", _spec(U8, in_qp=Q.QParams(0.05, 255), out_qp=Q.QParams(0.3, 0), w_zp=0), (1, 5, 5, 4), 6,
           act="RELU"),
    _qconv("u8_s2_valid", _spec(U8), (1, 9, 9, 3), 4, stride=(2, 2), padding="VALID"),
    _qconv("u8_ties", _ties(U8, 8.0), (1, 6, 6, 8), 16, padding="VALID"),
    _qconv("i16_pc", _spec(I16), (2, 6, 6, 4), 6),
    _qconv("i16_pt_relu6", _spec(I16, per_channel=False, out_qp=Q.QParams(0.0003, 0)), (1, 6, 6, 4), 6, act="RELU6"),
    _qconv("i16_ties", _ties(I16, 8.0), (1, 6, 6, 8), 16, padding="VALID"),
]


# ---------------------------------------------------------------------------------------------
# FULLY_CONNECTED
# ---------------------------------------------------------------------------------------------

def qfc_model(spec, in_shape, units, act="NONE", keep_num_dims=False, seed=0):
    rng = np.random.default_rng(seed)
    depth = in_shape[-1]
    wt, wqp = spec.weights(rng, (units, depth), 0)
    mb = ModelBuilder()
    x = mb.add_input(list(in_shape), spec.dtype, name="x", quant=Q.quant_dict(spec.in_qp))
    wi = mb.add_const(wt, name="w", quant=Q.quant_dict(wqp))
    b = spec.bias_tensor(mb, rng, units, wqp)  # -1: omitted optional input
    out_shape = list(in_shape[:-1]) + [units] if keep_num_dims else [int(np.prod(in_shape[:-1])), units]
    y = mb.add_tensor(out_shape, spec.dtype, name="y", quant=Q.quant_dict(spec.out_qp))
    mb.add_op("FULLY_CONNECTED", [x, wi, b], [y], version=7 if spec.dtype == I16 else 4,
              options=dict(fused_activation_function=act, keep_num_dims=keep_num_dims))
    mb.mark_output(y)
    return mb.build()


def _qfc(name, spec, in_shape, units, **kw):
    return OpCase("FULLY_CONNECTED", name, lambda: qfc_model(spec, in_shape, units, **kw), spec.inputs(in_shape),
                  tol=0.0, gpu=False, quant=KIND[spec.dtype])


FC_CASES = [
    _qfc("i8_pc", _spec(I8, out_qp=Q.QParams(0.6, 2)), (3, 40), 19),
    _qfc("i8_pt", _spec(I8, per_channel=False, out_qp=Q.QParams(0.6, 2)), (4, 33), 16),
    _qfc("i8_pt_wzp", _spec(I8, per_channel=False, w_zp=7, out_qp=Q.QParams(0.6, 2)), (2, 20), 8),
    _qfc("i8_relu_keepdims", _spec(I8, out_qp=Q.QParams(0.3, -60)), (2, 3, 24), 10, act="RELU", keep_num_dims=True),
    _qfc("i8_relu6", _spec(I8, out_qp=Q.QParams(0.03, -128)), (5, 16), 12, act="RELU6"),
    _qfc("i8_relu_n1", _spec(I8, out_qp=Q.QParams(0.01, 0)), (5, 16), 12, act="RELU_N1_TO_1"),
    _qfc("i8_zp_edges", _spec(I8, in_qp=Q.QParams(0.05, -128), out_qp=Q.QParams(0.5, 127)), (3, 30), 9),
    _qfc("i8_flatten", _spec(I8, out_qp=Q.QParams(0.6, 2)), (2, 3, 4, 8), 7),
    _qfc("i8_ties", _ties(I8), (4, 64), 16),
    # batch >= 16: the AMX tile GEMM where the CPU has it (K = 300: padded to 320; N = 50)
    # batch 1 (the VNNI GEMV: 4 accumulator chains over K-quads; K = 301 leaves a remainder)
    _qfc("i8_gemv_k301", _spec(I8, in_qp=Q.QParams(0.05, -20), out_qp=Q.QParams(0.5, 4)), (1, 301), 70),
    _qfc("i8_amx_batch40", _spec(I8, in_qp=Q.QParams(0.05, 11), out_qp=Q.QParams(0.6, -3)), (40, 300), 50),
    _qfc("u8", _spec(U8, out_qp=Q.QParams(0.6, 128)), (3, 40), 10),
    _qfc("u8_edges_relu", _spec(U8, in_qp=Q.QParams(0.05, 255), out_qp=Q.QParams(0.3, 0), w_zp=0), (3, 20), 9,
         act="RELU"),
    _qfc("u8_ties", _ties(U8), (4, 64), 16),
    _qfc("i16_pc", _spec(I16, out_qp=Q.QParams(0.01, 0)), (3, 40), 11),
    _qfc("i16_pt_b32", _spec(I16, per_channel=False, bias_dtype=np.int32, out_qp=Q.QParams(0.01, 0)), (3, 40), 11),
    _qfc("i16_ties", _ties(I16), (4, 64), 16),
    _qfc("i16_ties_b32", _ties(I16, bias_dtype=np.int32), (4, 64), 16),
    _qfc("i16_no_bias", _ties(I16, bias="absent"), (4, 64), 16),
    _qfc("i8_no_bias", _ties(I8, bias="absent"), (4, 64), 16),
    _qfc("u8_no_bias", _spec(U8, bias="absent", out_qp=Q.QParams(0.6, 128)), (3, 40), 10),
]


# ---------------------------------------------------------------------------------------------
# DEPTHWISE_CONV_2D
# ---------------------------------------------------------------------------------------------

def qdw_model(spec, in_shape, mult=1, k=(3, 3), stride=(1, 1), dil=(1, 1), padding="SAME", act="NONE", seed=0):
    rng = np.random.default_rng(seed)
    n, h, w, cin = in_shape
    cout = cin * mult
    wt, wqp = spec.weights(rng, (1, k[0], k[1], cout), 3)
    mb = ModelBuilder()
    x = mb.add_input(list(in_shape), spec.dtype, name="x", quant=Q.quant_dict(spec.in_qp))
    wi = mb.add_const(wt, name="w", quant=Q.quant_dict(wqp))
    b = spec.bias_tensor(mb, rng, cout, wqp)
    oh = _out_size(padding, h, k[0], stride[0], dil[0])
    ow = _out_size(padding, w, k[1], stride[1], dil[1])
    y = mb.add_tensor([n, oh, ow, cout], spec.dtype, name="y", quant=Q.quant_dict(spec.out_qp))
    mb.add_op("DEPTHWISE_CONV_2D", [x, wi, b], [y], version=5 if spec.dtype == I16 else 3, options=dict(
        padding=padding, stride_h=stride[0], stride_w=stride[1], depth_multiplier=mult,
        dilation_h_factor=dil[0], dilation_w_factor=dil[1], fused_activation_function=act))
    mb.mark_output(y)
    return mb.build()


def _qdw(name, spec, in_shape, **kw):
    return OpCase("DEPTHWISE_CONV_2D", name, lambda: qdw_model(spec, in_shape, **kw), spec.inputs(in_shape),
                  tol=0.0, gpu=False, quant=KIND[spec.dtype])


def _dw_spec(dtype, **kw):
    if dtype == I8:
        kw.setdefault("out_qp", Q.QParams(0.08, -3))
    elif dtype == U8:
        kw.setdefault("out_qp", Q.QParams(0.1, 125))
    else:
        kw.setdefault("out_qp", Q.QParams(0.001, 0))
    return _spec(dtype, **kw)


DW_CASES = [
    _qdw("i8_pc_same_b2", _dw_spec(I8), (2, 7, 6, 20)),
    _qdw("i8_pt_valid_s2", _dw_spec(I8, per_channel=False), (1, 9, 8, 16), stride=(2, 2), padding="VALID"),
    _qdw("i8_mult2", _dw_spec(I8), (1, 6, 6, 5), mult=2),
    _qdw("i8_relu6", _dw_spec(I8, out_qp=Q.QParams(0.03, -128)), (1, 6, 6, 12), act="RELU6"),
    _qdw("i8_relu_n1_dil2", _dw_spec(I8, out_qp=Q.QParams(0.01, 5)), (1, 9, 9, 8), dil=(2, 2), act="RELU_N1_TO_1"),
    _qdw("i8_zp_edges_5x5", _dw_spec(I8, in_qp=Q.QParams(0.05, -128), out_qp=Q.QParams(0.2, 127)), (1, 8, 8, 9),
         k=(5, 5)),
    _qdw("i8_saturate", _dw_spec(I8, out_qp=Q.QParams(0.005, 0)), (1, 5, 5, 8)),
    # The AVX2 taps kernel: 16-channel blocks, then 8-channel blocks ending at C (overlapping),
    # fewer than 8 channels on the plain loop.
    _qdw("i8_c37_relu6", _dw_spec(I8, out_qp=Q.QParams(0.03, -128)), (1, 7, 9, 37), act="RELU6"),
    _qdw("i8_c4", _dw_spec(I8), (1, 6, 7, 4)),
    _qdw("i8_5x5_s2_c40", _dw_spec(I8), (1, 11, 12, 40), k=(5, 5), stride=(2, 2)),
    # The AVX-512 VNNI depthwise: C = 32 (two pixels per 64-lane block; odd pixel counts), C = 96 (a
    # full and a half block), input zero point -128 at the padding.
    _qdw("i8_c32_pairs_b2", _dw_spec(I8, in_qp=Q.QParams(0.05, -128)), (2, 7, 5, 32)),
    _qdw("i8_c96_s2", _dw_spec(I8), (1, 9, 9, 96), stride=(2, 2)),
    # Big enough to split over threads (ranges that start mid-row and cross a batch boundary)
    _qdw("i8_split_b2_c64", _dw_spec(I8, in_qp=Q.QParams(0.05, 9)), (2, 20, 17, 64)),
    _qdw("u8_5x5_c27", _dw_spec(U8, w_zp=131), (1, 9, 8, 27), k=(5, 5)),
    _qdw("i8_ties", _ties(I8), (2, 6, 6, 16), padding="VALID"),
    _qdw("i8_ties_tail", _ties(I8), (1, 6, 6, 13), padding="VALID"),
    _qdw("i8_ties_mult3", _ties(I8), (1, 6, 6, 5), mult=3, padding="VALID"),
    # The AVX2 tap-pairs kernel (C % 16 == 0, windows wholly inside): 25 taps (an odd last one),
    # and uint8 with both offsets at 255 (input and weights -255 after them: the largest pair sums).
    _qdw("i8_5x5_c48_pairs", _dw_spec(I8, in_qp=Q.QParams(0.05, -128)), (1, 9, 10, 48), k=(5, 5)),
    _qdw("u8_pairs_c32_offsets_255", _dw_spec(U8, in_qp=Q.QParams(0.05, 255), out_qp=Q.QParams(3.0, 128), w_zp=255),
         (1, 6, 7, 32), act="RELU6"),
    _qdw("u8_same", _dw_spec(U8), (2, 6, 6, 10)),
    _qdw("u8_edges_relu_s2", _dw_spec(U8, in_qp=Q.QParams(0.05, 0), out_qp=Q.QParams(0.05, 255), w_zp=255), (1, 7, 7, 8),
         stride=(2, 2), act="RELU"),
    _qdw("u8_ties", _ties(U8), (1, 6, 6, 16), padding="VALID"),
    _qdw("i16_pc", _dw_spec(I16), (2, 6, 6, 8)),
    _qdw("i16_pt_mult2", _dw_spec(I16, per_channel=False), (1, 5, 5, 4), mult=2),
    _qdw("i16_ties", _ties(I16), (1, 6, 6, 16), padding="VALID"),
]


# ---------------------------------------------------------------------------------------------
# Hybrid (dynamic range): float input / bias / output, int8 weights
# ---------------------------------------------------------------------------------------------

HYB_TOL = 1e-5  # float rounding order only: the int8 dot products are exact


def _hyb_weights(rng, shape, axis, per_channel):
    w = rng.integers(-127, 128, size=shape).astype(I8)
    n = shape[axis]
    if per_channel:
        return w, Q.QParams([float(v) for v in rng.uniform(0.002, 0.02, n)], [0] * n, axis)
    return w, Q.QParams(0.01, 0)


def hconv_model(in_shape, cout, per_channel=True, k=(3, 3), stride=(1, 1), padding="SAME", act="NONE", seed=0,
                equal_scales=False):
    rng = np.random.default_rng(seed)
    n, h, w, cin = in_shape
    wt, wqp = _hyb_weights(rng, (cout, k[0], k[1], cin), 0, per_channel)
    if equal_scales:  # a per-channel vector whose scales are all the same
        wqp = Q.QParams([0.05] * cout, [0] * cout, 0)
    mb = ModelBuilder()
    x = mb.add_input(list(in_shape), name="x")
    wi = mb.add_const(wt, name="w", quant=Q.quant_dict(wqp))
    b = mb.add_const(rng.standard_normal(cout).astype(np.float32), name="b")
    oh = _out_size(padding, h, k[0], stride[0])
    ow = _out_size(padding, w, k[1], stride[1])
    y = mb.add_tensor([n, oh, ow, cout], name="y")
    mb.add_op("CONV_2D", [x, wi, b], [y], version=2, options=dict(
        padding=padding, stride_h=stride[0], stride_w=stride[1], fused_activation_function=act))
    mb.mark_output(y)
    return mb.build()


def hfc_model(in_shape, units, per_channel=False, asymmetric=False, act="NONE", keep_num_dims=False, seed=0):
    rng = np.random.default_rng(seed)
    wt, wqp = _hyb_weights(rng, (units, in_shape[-1]), 0, per_channel)
    mb = ModelBuilder()
    x = mb.add_input(list(in_shape), name="x")
    wi = mb.add_const(wt, name="w", quant=Q.quant_dict(wqp))
    b = mb.add_const(rng.standard_normal(units).astype(np.float32), name="b")
    out_shape = list(in_shape[:-1]) + [units] if keep_num_dims else [int(np.prod(in_shape[:-1])), units]
    y = mb.add_tensor(out_shape, name="y")
    mb.add_op("FULLY_CONNECTED", [x, wi, b], [y], version=3, options=dict(
        fused_activation_function=act, keep_num_dims=keep_num_dims, asymmetric_quantize_inputs=asymmetric))
    mb.mark_output(y)
    return mb.build()


def hdw_model(in_shape, mult=1, per_channel=True, k=(3, 3), stride=(1, 1), padding="SAME", act="NONE", seed=0):
    rng = np.random.default_rng(seed)
    n, h, w, cin = in_shape
    cout = cin * mult
    wt, wqp = _hyb_weights(rng, (1, k[0], k[1], cout), 3, per_channel)
    mb = ModelBuilder()
    x = mb.add_input(list(in_shape), name="x")
    wi = mb.add_const(wt, name="w", quant=Q.quant_dict(wqp))
    b = mb.add_const(rng.standard_normal(cout).astype(np.float32), name="b")
    y = mb.add_tensor([n, _out_size(padding, h, k[0], stride[0]), _out_size(padding, w, k[1], stride[1]), cout], name="y")
    mb.add_op("DEPTHWISE_CONV_2D", [x, wi, b], [y], version=6, options=dict(
        padding=padding, stride_h=stride[0], stride_w=stride[1], depth_multiplier=mult, fused_activation_function=act))
    mb.mark_output(y)
    return mb.build()


def _finp(*shapes, shift=0.0):
    return lambda rng: [(rng.standard_normal(s) + shift).astype(np.float32) for s in shapes]


def _h(op, name, model, shape, shift=0.0):
    return OpCase(op, name, model, _finp(shape, shift=shift), tol=HYB_TOL, gpu=False, quant="hybrid")


HYB_CASES = [
    _h("CONV_2D", "hyb_pc", lambda: hconv_model((2, 7, 6, 5), 9), (2, 7, 6, 5), shift=0.7),
    # LiteRT runs per-channel weights whose scales are all equal as per-tensor ones (symmetric input
    # quantization, EvalHybrid): its output equals the per-tensor model's exactly (measured)
    _h("CONV_2D", "hyb_pc_equal_scales", lambda: hconv_model((1, 5, 5, 4), 3, padding="VALID", equal_scales=True),
       (1, 5, 5, 4)),
    _h("CONV_2D", "hyb_pt_s2_relu", lambda: hconv_model((1, 8, 8, 4), 6, per_channel=False, stride=(2, 2), act="RELU"),
       (1, 8, 8, 4)),
    _h("CONV_2D", "hyb_pc_valid_relu6", lambda: hconv_model((1, 6, 6, 8), 8, padding="VALID", act="RELU6"), (1, 6, 6, 8),
       shift=-0.5),
    _h("DEPTHWISE_CONV_2D", "hyb_pc", lambda: hdw_model((2, 7, 6, 12)), (2, 7, 6, 12), shift=0.7),
    _h("DEPTHWISE_CONV_2D", "hyb_pc_s2_relu6_mult2", lambda: hdw_model((1, 9, 9, 5), mult=2, stride=(2, 2), act="RELU6"),
       (1, 9, 9, 5), shift=-0.4),
    _h("FULLY_CONNECTED", "hyb_pt", lambda: hfc_model((3, 40), 17), (3, 40)),
    _h("FULLY_CONNECTED", "hyb_pc", lambda: hfc_model((3, 40), 17, per_channel=True), (3, 40)),
    _h("FULLY_CONNECTED", "hyb_asym", lambda: hfc_model((4, 33), 10, asymmetric=True), (4, 33), shift=0.8),
    _h("FULLY_CONNECTED", "hyb_asym_pc_relu_keepdims",
       lambda: hfc_model((2, 3, 24), 12, per_channel=True, asymmetric=True, act="RELU", keep_num_dims=True), (2, 3, 24),
       shift=-0.6),
]


# ---------------------------------------------------------------------------------------------
# TRANSPOSE_CONV
# ---------------------------------------------------------------------------------------------

def _tc_out(padding, n, k, s):
    return n * s if padding == "SAME" else (n - 1) * s + k


def qtc_model(spec, in_shape, cout, k=(3, 3), stride=(2, 2), padding="SAME", act="NONE", seed=0):
    rng = np.random.default_rng(seed)
    n, h, w, cin = in_shape
    wt, wqp = spec.weights(rng, (cout, k[0], k[1], cin), 0)
    oh, ow = _tc_out(padding, h, k[0], stride[0]), _tc_out(padding, w, k[1], stride[1])
    mb = ModelBuilder()
    os_ = mb.add_const(np.array([n, oh, ow, cout], np.int32), name="output_shape")
    wi = mb.add_const(wt, name="w", quant=Q.quant_dict(wqp))
    x = mb.add_input(list(in_shape), spec.dtype, name="x", quant=Q.quant_dict(spec.in_qp))
    b = spec.bias_tensor(mb, rng, cout, wqp)
    y = mb.add_tensor([n, oh, ow, cout], spec.dtype, name="y", quant=Q.quant_dict(spec.out_qp))
    opts = dict(padding=padding, stride_w=stride[1], stride_h=stride[0])
    if act != "NONE":
        opts["fused_activation_function"] = act
    mb.add_op("TRANSPOSE_CONV", [os_, wi, x, b], [y], version=4 if act != "NONE" else 3, options=opts)
    mb.mark_output(y)
    return mb.build()


def _qtc(name, spec, in_shape, cout, **kw):
    return OpCase("TRANSPOSE_CONV", name, lambda: qtc_model(spec, in_shape, cout, **kw), spec.inputs(in_shape),
                  tol=0.0, gpu=False, quant=KIND[spec.dtype])


def _tc_spec(dtype, **kw):
    if dtype == I8:
        kw.setdefault("out_qp", Q.QParams(0.15, 4))
    elif dtype == U8:
        kw.setdefault("out_qp", Q.QParams(0.15, 130))
    else:
        kw.setdefault("out_qp", Q.QParams(0.002, 0))
    return _spec(dtype, **kw)


TC_CASES = [
    _qtc("i8_pc_same_s2_b2", _tc_spec(I8), (2, 5, 4, 6), 7),
    _qtc("i8_pt_valid_s1", _tc_spec(I8, per_channel=False), (1, 5, 5, 4), 5, stride=(1, 1), padding="VALID"),
    _qtc("i8_relu6_s3", _tc_spec(I8, out_qp=Q.QParams(0.03, -128)), (1, 4, 4, 4), 6, k=(4, 4), stride=(3, 3), act="RELU6"),
    _qtc("i8_ties", _ties(I8), (1, 5, 5, 4), 8, padding="VALID", stride=(1, 1)),
    _qtc("i8_ties_tail", _ties(I8), (1, 5, 5, 4), 13, padding="VALID", stride=(1, 1)),
    _qtc("u8_same", _tc_spec(U8), (1, 5, 5, 4), 6),
    _qtc("u8_ties_tail", _ties(U8), (1, 5, 5, 4), 13, padding="VALID", stride=(1, 1)),
    _qtc("u8_ties", _ties(U8), (1, 5, 5, 4), 8, padding="VALID", stride=(1, 1)),
    _qtc("i16_pc", _tc_spec(I16), (1, 5, 5, 4), 6),
    _qtc("i16_ties", _ties(I16), (1, 5, 5, 4), 8, padding="VALID", stride=(1, 1)),
]


# ---------------------------------------------------------------------------------------------
# BATCH_MATMUL
# ---------------------------------------------------------------------------------------------

def qbmm_model(dtype, a_shape, b_shape, aq, bq, oq, adj_x=False, adj_y=False, const_b=True, seed=0):
    rng = np.random.default_rng(seed)
    mb = ModelBuilder()
    a = mb.add_input(list(a_shape), dtype, name="a", quant=Q.quant_dict(aq))
    if const_b:
        b = mb.add_const(Q.random_q(rng, b_shape, dtype), name="b", quant=Q.quant_dict(bq))
    else:
        b = mb.add_input(list(b_shape), dtype, name="b", quant=Q.quant_dict(bq))
    M = a_shape[-1] if adj_x else a_shape[-2]
    N = b_shape[-2] if adj_y else b_shape[-1]
    batch = list(np.broadcast_shapes(tuple(a_shape[:-2]), tuple(b_shape[:-2])))
    y = mb.add_tensor(batch + [M, N], dtype, name="y", quant=Q.quant_dict(oq))
    mb.add_op("BATCH_MATMUL", [a, b], [y], version=4 if dtype == I16 else 2, options=dict(adj_x=adj_x, adj_y=adj_y))
    mb.mark_output(y)
    return mb.build()


def _qbmm(name, dtype, a_shape, b_shape, aq, bq, oq, const_b=True, rng_range=None, **kw):
    lo, hi = rng_range or (None, None)
    shapes = [a_shape] if const_b else [a_shape, b_shape]
    return OpCase("BATCH_MATMUL", name, lambda: qbmm_model(dtype, a_shape, b_shape, aq, bq, oq, const_b=const_b, **kw),
                  lambda rng: [Q.random_q(rng, s, dtype, lo, hi) for s in shapes], tol=0.0, gpu=False,
                  quant=KIND[dtype])


BMM_CASES = [
    _qbmm("i8_const", I8, (2, 4, 16), (2, 16, 8), Q.QParams(0.05, 3), Q.QParams(0.02, 0), Q.QParams(0.3, -2)),
    _qbmm("i8_inputs_bzp_adj", I8, (2, 16, 4), (1, 8, 16), Q.QParams(0.05, -7), Q.QParams(0.02, 5), Q.QParams(0.4, 1),
          const_b=False, adj_x=True, adj_y=True),
    _qbmm("i8_ties", I8, (2, 4, 16), (2, 16, 8), Q.QParams(1.0, 0), Q.QParams(1.0, 0), Q.QParams(8.0, 0),
          rng_range=(-4, 4)),
    _qbmm("i16_const", I16, (2, 4, 16), (2, 16, 8), Q.QParams(0.001, 0), Q.QParams(0.002, 0), Q.QParams(0.05, 0)),
    _qbmm("i16_ties", I16, (3, 4, 16), (16, 8), Q.QParams(1.0, 0), Q.QParams(1.0, 0), Q.QParams(8.0, 0),
          const_b=False, rng_range=(-4, 4)),
]

CASES = CONV_CASES + FC_CASES + DW_CASES + HYB_CASES + TC_CASES + BMM_CASES


# Hybrid BATCH_MATMUL (issue 7): float lhs, int8 rhs (per-tensor or per-channel along N, zero point
# 0), float output; each lhs row quantized on the fly (symmetric, or asymmetric_quantize_inputs).
# TFLite's per-element float arithmetic is reproduced (exact vs LiteRT builtin with symmetric inputs).
def hbmm_model(a_shape, b_shape, per_channel=False, asymmetric=False, adj_x=False, adj_y=False, const_b=True, seed=0):
    rng = np.random.default_rng(seed)
    N = b_shape[-2] if adj_y else b_shape[-1]
    axis = len(b_shape) - (2 if adj_y else 1)
    wt, wqp = _hyb_weights(rng, tuple(b_shape), axis, per_channel)
    mb = ModelBuilder()
    a = mb.add_input(list(a_shape), name="a")
    if const_b:
        b = mb.add_const(wt, name="b", quant=Q.quant_dict(wqp))
    else:
        b = mb.add_input(list(b_shape), I8, name="b", quant=Q.quant_dict(wqp))
    M = a_shape[-1] if adj_x else a_shape[-2]
    batch = list(np.broadcast_shapes(tuple(a_shape[:-2]), tuple(b_shape[:-2])))
    y = mb.add_tensor(batch + [M, N], name="y")
    mb.add_op("BATCH_MATMUL", [a, b], [y], version=4,
              options=dict(adj_x=adj_x, adj_y=adj_y, asymmetric_quantize_inputs=asymmetric))
    mb.mark_output(y)
    return mb.build()


def _hbmm(name, a_shape, b_shape, shift=0.0, **kw):
    const_b = kw.get("const_b", True)
    # Symmetric inputs: exact. asymmetric_quantize_inputs: some rows' scales come out 1 ulp off
    # LiteRT's (its asymmetric row scale is computed differently from quant::QuantizeFloatRow's
    # double form, which the other hybrid kernels' cases use too): HYB_TOL as those.
    tol = HYB_TOL if kw.get("asymmetric") else 0.0

    def inputs(rng):
        a = (rng.standard_normal(a_shape) + shift).astype(np.float32)
        return [a] if const_b else [a, rng.integers(-127, 128, size=b_shape).astype(I8)]
    return OpCase("BATCH_MATMUL", name, lambda: hbmm_model(a_shape, b_shape, **kw), inputs, tol=tol, gpu=False,
                  quant="hybrid")


HYB_BMM_CASES = [
    _hbmm("hyb_pt", (2, 4, 16), (2, 16, 8)),
    _hbmm("hyb_pc", (3, 5, 24), (24, 10), per_channel=True, shift=0.4),
    _hbmm("hyb_asym", (2, 3, 33), (33, 7), asymmetric=True, shift=0.8),
    _hbmm("hyb_asym_pc_adj_y", (2, 4, 20), (2, 9, 20), per_channel=True, asymmetric=True, adj_y=True, shift=-0.6),
    _hbmm("hyb_adj_x", (2, 20, 4), (20, 6), adj_x=True),
    _hbmm("hyb_asym_adj_xy", (2, 20, 4), (1, 6, 20), adj_x=True, adj_y=True, asymmetric=True, shift=0.3),
    _hbmm("hyb_bcast4d", (2, 1, 3, 12), (1, 3, 12, 5), per_channel=True),
    _hbmm("hyb_rhs_one", (2, 3, 4, 12), (1, 12, 5), asymmetric=True, shift=1.0),
    _hbmm("hyb_asym_bigK", (1, 3, 2000), (2000, 4), asymmetric=True, shift=2.0),
    _hbmm("hyb_bigK_pc", (2, 6, 1500), (1500, 40), per_channel=True, shift=0.5),
    _hbmm("hyb_rank5", (2, 1, 2, 3, 8), (1, 3, 1, 8, 4)),
    _hbmm("hyb_input_rhs", (2, 4, 16), (16, 8), const_b=False, asymmetric=True, shift=0.5),
]
CASES += HYB_BMM_CASES
