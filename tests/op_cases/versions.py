"""What the newest versions of existing ops add (issue 8, LiteRT 2.3's version ranges), op by op:

* packed weights and activations, held unpacked one byte an element (TFLite's buffer layout:
  tflite_gpu.testing.builder.pack_bits): DEQUANTIZE of INT4 / UINT4 / INT2 (per-tensor and
  per-channel), FULLY_CONNECTED with INT4 / INT2 weights (hybrid float, int8 and int16x8
  activations), QUANTIZE float -> INT4 / UINT4, CAST FLOAT32 <-> INT4 / UINT4 / INT2, and the data
  movement of INT4 (TRANSPOSE also UINT4) through TRANSPOSE, GATHER, SLICE, CONCATENATION;
* BFLOAT16 through CAST and the shape ops (CONCATENATION, PAD, PADV2, GATHER, TRANSPOSE, SLICE,
  UNPACK), COMPLEX64 through CAST and MUL;
* FLOAT16 ADD / MUL / SOFTMAX, plain (unquantized) INT16 ADD / MUL, UINT32 MUL;
* quantized INT8 / INT16 SQRT.

Packed tensors cannot be fed or read through LiteRT's Python API (it hands out the packed bytes),
so packed values enter as constants and leave through DEQUANTIZE or CAST to FLOAT32. Everything is
checked against LiteRT's builtin kernels (BUILTIN_WITHOUT_DEFAULT_DELEGATES). None of these run on
the GPU delegate (their tensor types are not FLOAT32 or quantized 8/16-bit): gpu=False.
"""
import ml_dtypes
import numpy as np

from harness import OpCase
from tflite_gpu.testing.builder import ModelBuilder

F32, F16, BF16 = np.float32, np.float16, ml_dtypes.bfloat16
CASES = []

RANGES = {"INT4": (-8, 7), "UINT4": (0, 15), "INT2": (-2, 1)}


def _packed_values(t, shape, seed):
    lo, hi = RANGES[t]
    v = np.random.default_rng(seed).integers(lo, hi + 1, size=shape)
    flat = v.reshape(-1)
    flat[:2] = [lo, hi][:flat.size]  # the ends of the range
    return v


def add(op, name, model, inputs=lambda rng: [], **kw):
    CASES.append(OpCase(op, name, model, inputs, gpu=False, **kw))


# ------------------------------------------------------------------ DEQUANTIZE (v6 INT4, v7+ UINT4 / INT2)
def _deq_model(t, shape, q, seed=1):
    def model():
        mb = ModelBuilder()
        x = mb.add_tensor(shape, t, data=_packed_values(t, shape, seed), quant=q)
        y = mb.add_tensor(shape, F32)
        mb.mark_output(y)
        mb.add_op("DEQUANTIZE", [x], [y], version=9)
        return mb.build()
    return model


for t in ("INT4", "UINT4", "INT2"):
    zp = {"INT4": -3, "UINT4": 8, "INT2": 1}[t]
    add("DEQUANTIZE", f"{t.lower()}_per_tensor", _deq_model(t, [3, 5], dict(scale=[0.37], zero_point=[zp])))
    add("DEQUANTIZE", f"{t.lower()}_odd_count", _deq_model(t, [7], dict(scale=[1.5], zero_point=[0]), seed=2))
    add("DEQUANTIZE", f"{t.lower()}_per_channel_axis1",
        _deq_model(t, [2, 3, 5], dict(scale=[0.5, 0.25, 2.0], zero_point=[0, 0, 0], quantized_dimension=1), seed=3))
add("DEQUANTIZE", "int4_per_channel_axis0",
    _deq_model("INT4", [4, 3], dict(scale=[0.1, 0.2, 0.3, 0.4], zero_point=[0] * 4, quantized_dimension=0), seed=4))


# ------------------------------------------------------------------ FULLY_CONNECTED (v10 int8 x int4, v13 int16 x int4, v14 int2)
def _fc_model(in_t, w_t, units, depth, per_channel, bias=True, keep_num_dims=False, in_shape=None,
              asymmetric=False, act="NONE"):
    in_shape = in_shape or [3, depth]
    lo, hi = RANGES[w_t]
    ws = [0.05 + 0.01 * i for i in range(units)] if per_channel else [0.07]
    out_shape = list(in_shape[:-1]) + [units] if keep_num_dims else [int(np.prod(in_shape)) // depth, units]

    def model():
        mb = ModelBuilder()
        iq = None if in_t == "FLOAT32" else dict(scale=[0.04], zero_point=[0 if in_t == "INT16" else -5])
        x = mb.add_input(in_shape, in_t, quant=iq)
        wv = np.random.default_rng(11).integers(lo, hi + 1, size=(units, depth))
        w = mb.add_tensor([units, depth], w_t, data=wv,
                          quant=dict(scale=ws, zero_point=[0] * len(ws), quantized_dimension=0))
        ins = [x, w]
        if bias:
            if in_t == "FLOAT32":
                ins.append(mb.add_const(np.linspace(-1, 1, units).astype(F32)))
            else:
                bt = np.int64 if in_t == "INT16" else np.int32
                bq = dict(scale=[0.04 * s for s in ws], zero_point=[0] * len(ws))
                ins.append(mb.add_tensor([units], bt, data=np.arange(-units, units, 2)[:units].astype(bt) * 7, quant=bq))
        else:
            ins.append(-1)
        oq = None if in_t == "FLOAT32" else dict(scale=[0.3], zero_point=[0 if in_t == "INT16" else 4])
        y = mb.add_tensor(out_shape, in_t, quant=oq)
        mb.mark_output(y)
        mb.add_op("FULLY_CONNECTED", ins, [y], version=14,
                  options=dict(fused_activation_function=act, keep_num_dims=keep_num_dims,
                               asymmetric_quantize_inputs=asymmetric))
        return mb.build()

    def inputs(rng):
        if in_t == "FLOAT32":
            return [rng.normal(0, 1, in_shape).astype(F32)]
        info = np.iinfo(np.int8 if in_t == "INT8" else np.int16)
        lim = 127 if in_t == "INT8" else 3000
        return [rng.integers(max(info.min, -lim), lim, in_shape).astype(info.dtype)]
    return model, inputs


for w_t in ("INT4", "INT2"):
    for in_t in ("FLOAT32", "INT8", "INT16"):
        for pc in (False, True):
            m, i = _fc_model(in_t, w_t, 5, 19, pc)
            add("FULLY_CONNECTED", f"{in_t.lower()}_x_{w_t.lower()}{'_per_channel' if pc else ''}", m, i)
    m, i = _fc_model("INT8", w_t, 4, 8, True, bias=False, keep_num_dims=True, in_shape=[2, 3, 8], act="RELU")
    add("FULLY_CONNECTED", f"int8_x_{w_t.lower()}_keep_dims_no_bias_relu", m, i)
    m, i = _fc_model("FLOAT32", w_t, 6, 33, True, asymmetric=True)
    add("FULLY_CONNECTED", f"hybrid_asymmetric_{w_t.lower()}", m, i)
m, i = _fc_model("INT16", "INT4", 3, 64, True, in_shape=[2, 2, 64], keep_num_dims=True)
add("FULLY_CONNECTED", "int16_x_int4_keep_dims", m, i)


# ------------------------------------------------------------------ QUANTIZE float -> INT4 / UINT4 (v4+)
def _quant_packed(t, zp, n):
    def model():
        mb = ModelBuilder()
        x = mb.add_input([n], F32)
        q = mb.add_tensor([n], t, quant=dict(scale=[0.5], zero_point=[zp]))
        y = mb.add_tensor([n], F32)
        mb.mark_output(y)
        mb.add_op("QUANTIZE", [x], [q], version=6)
        mb.add_op("DEQUANTIZE", [q], [y], version=9)
        return mb.build()

    def inputs(rng):
        x = rng.uniform(-6, 6, n).astype(F32)
        # ties in the vector body and in the scalar tail, out-of-range values, NaN
        special = [0.25, 0.75, -0.25, -1.25, 100.0, -100.0, 1.75, 2.25, 0.25, -0.75, 3.25]
        x[:len(special)] = special
        x[-1] = 0.75
        return [x]
    return model, inputs


for t, zp in (("INT4", 0), ("INT4", 2), ("UINT4", 8), ("UINT4", 0)):
    m, i = _quant_packed(t, zp, 19)
    add("QUANTIZE", f"float_to_{t.lower()}_zp{zp}", m, i)


# ------------------------------------------------------------------ CAST (v7+: INT4 / UINT4 / INT2 <-> FLOAT32, BFLOAT16, COMPLEX64)
def _cast_roundtrip(t):
    """FLOAT32 -> packed -> FLOAT32 (LiteRT casts packed types only to and from FLOAT32)."""
    def model():
        mb = ModelBuilder()
        x = mb.add_input([16], F32)
        p = mb.add_tensor([16], t)
        y = mb.add_tensor([16], F32)
        mb.mark_output(y)
        mb.add_op("CAST", [x], [p], version=9)
        mb.add_op("CAST", [p], [y], version=9)
        return mb.build()

    def inputs(rng):
        x = rng.uniform(-20, 20, 16).astype(F32)
        x[:8] = [7.9, -8.5, -0.6, 0.5, np.nan, np.inf, -np.inf, 1.5]
        return [x]
    return model, inputs


def _cast_from_const(t):
    def model():
        mb = ModelBuilder()
        x = mb.add_tensor([2, 5], t, data=_packed_values(t, [2, 5], 5))
        y = mb.add_tensor([2, 5], F32)
        mb.mark_output(y)
        mb.add_op("CAST", [x], [y], version=9)
        return mb.build()
    return model


for t in ("INT4", "UINT4", "INT2"):
    m, i = _cast_roundtrip(t)
    add("CAST", f"float32_to_{t.lower()}_and_back", m, i)
    add("CAST", f"{t.lower()}_const_to_float32", _cast_from_const(t))

_REAL = {"FLOAT32": F32, "FLOAT16": F16, "FLOAT64": np.float64, "INT8": np.int8, "UINT8": np.uint8,
         "INT16": np.int16, "UINT16": np.uint16, "INT32": np.int32, "UINT32": np.uint32, "INT64": np.int64,
         "BOOL": np.bool_}


def _cast_case(src, dst, src_np, gen):
    def model():
        mb = ModelBuilder()
        x = mb.add_input([3, 4], src)
        y = mb.add_tensor([3, 4], dst)
        mb.mark_output(y)
        mb.add_op("CAST", [x], [y], version=9)
        return mb.build()

    def inputs(rng):
        return [gen(rng).astype(src_np)]
    return model, inputs


def _float_values(rng):
    x = rng.uniform(-300, 300, (3, 4))
    x.reshape(-1)[:6] = [1.00390625, 1.01171875, -2.5, 3e38, np.nan, 255.9]
    return x


def _complex_values(rng):
    x = rng.uniform(-300, 300, (3, 4)) + 1j * rng.uniform(-5, 5, (3, 4))
    x.reshape(-1)[:3] = [0 + 2j, 3e9 + 1j, np.nan]
    return x


for dst in list(_REAL) + ["COMPLEX64"]:
    m, i = _cast_case("BFLOAT16", dst, BF16, _float_values)
    add("CAST", f"bfloat16_to_{dst.lower()}", m, i)
    m, i = _cast_case("COMPLEX64", dst, np.complex64, _complex_values)
    add("CAST", f"complex64_to_{dst.lower()}", m, i)
for src in _REAL:
    gen = (lambda rng: rng.random((3, 4)) < 0.5) if src == "BOOL" else (
        _float_values if src.startswith("FLOAT") else (lambda rng: rng.integers(0, 120, (3, 4))))
    m, i = _cast_case(src, "BFLOAT16", _REAL[src], gen)
    add("CAST", f"{src.lower()}_to_bfloat16", m, i)
    m, i = _cast_case(src, "COMPLEX64", _REAL[src], gen)
    add("CAST", f"{src.lower()}_to_complex64", m, i)


# ------------------------------------------------------------------ shape ops: INT4 / UINT4 data movement
def _packed_chain(op, t, in_shape, out_shape, extra, options=None, version=1, nout=1):
    """A packed constant through `op`, each output DEQUANTIZEd to float (LiteRT cannot hand out
    packed tensors). `extra(mb)` appends the op's other inputs."""
    q = dict(scale=[0.5], zero_point=[0])

    def model():
        mb = ModelBuilder()
        x = mb.add_tensor(in_shape, t, data=_packed_values(t, in_shape, 9), quant=q)
        outs = [mb.add_tensor(out_shape, t, quant=q) for _ in range(nout)]
        mb.add_op(op, [x] + extra(mb), outs, options=options, version=version)
        for o in outs:
            y = mb.add_tensor(out_shape, F32)
            mb.mark_output(y)
            mb.add_op("DEQUANTIZE", [o], [y], version=9)
        return mb.build()
    return model


add("TRANSPOSE", "int4_3d", _packed_chain("TRANSPOSE", "INT4", [3, 5, 2], [2, 3, 5],
                                          lambda mb: [mb.add_const(np.array([2, 0, 1], np.int32))], version=9))
add("TRANSPOSE", "uint4_2d_odd", _packed_chain("TRANSPOSE", "UINT4", [3, 5], [5, 3],
                                               lambda mb: [mb.add_const(np.array([1, 0], np.int32))], version=9))
add("GATHER", "int4_axis0", _packed_chain("GATHER", "INT4", [4, 6], [3, 6],
                                          lambda mb: [mb.add_const(np.array([3, 1, 1], np.int32))],
                                          options=dict(axis=0), version=8))
add("GATHER", "int4_axis1_even_slices", _packed_chain("GATHER", "INT4", [2, 3, 4], [2, 2, 4],
                                                      lambda mb: [mb.add_const(np.array([2, 0], np.int32))],
                                                      options=dict(axis=1), version=8))


def _gather_int4_numpy():
    print("\nGATHER INT4 with slices of an odd number of elements: checked against numpy. LiteRT's kernel "
          "copies whole bytes of the packed buffer and returns values of the wrong elements there.")
    return [np.take(_packed_values("INT4", [3, 5], 9), [4, 0, 2, 2], axis=1).astype(F32) * F32(0.5)]


add("GATHER", "int4_odd_slices_numpy", _packed_chain("GATHER", "INT4", [3, 5], [3, 4],
                                                     lambda mb: [mb.add_const(np.array([4, 0, 2, 2], np.int32))],
                                                     options=dict(axis=1), version=8),
    oracle="numpy", ref_fn=_gather_int4_numpy,
    note="LiteRT's INT4 GATHER is wrong for slices that are not whole bytes (it copies packed bytes)")
add("SLICE", "int4", _packed_chain("SLICE", "INT4", [4, 5], [2, 3],
                                   lambda mb: [mb.add_const(np.array([1, 2], np.int32)),
                                               mb.add_const(np.array([2, 3], np.int32))], version=8))


def _concat_int4():
    q = dict(scale=[0.5], zero_point=[0])
    mb = ModelBuilder()
    a = mb.add_tensor([2, 3], "INT4", data=_packed_values("INT4", [2, 3], 1), quant=q)
    b = mb.add_tensor([2, 5], "INT4", data=_packed_values("INT4", [2, 5], 2), quant=q)
    c = mb.add_tensor([2, 8], "INT4", quant=q)
    y = mb.add_tensor([2, 8], F32)
    mb.mark_output(y)
    mb.add_op("CONCATENATION", [a, b], [c], options=dict(axis=1), version=7)
    mb.add_op("DEQUANTIZE", [c], [y], version=9)
    return mb.build()


add("CONCATENATION", "int4_axis1", _concat_int4)


# ------------------------------------------------------------------ shape ops: BFLOAT16
def _bf16(rng, shape):
    return rng.normal(0, 3, shape).astype(BF16)


def _one(op, name, in_shapes, out_shapes, consts=(), options=None, version=1, dt="BFLOAT16", npt=BF16):
    def model():
        mb = ModelBuilder()
        xs = [mb.add_input(s, dt) for s in in_shapes]
        cs = [mb.add_const(c) if not isinstance(c, tuple) else mb.add_const(c[0], dtype=c[1]) for c in consts]
        ys = [mb.add_tensor(s, dt) for s in out_shapes]
        for y in ys:
            mb.mark_output(y)
        mb.add_op(op, xs + cs, ys, options=options, version=version)
        return mb.build()

    def inputs(rng):
        return [rng.normal(0, 3, s).astype(npt) for s in in_shapes]
    add(op, name, model, inputs)


_one("CONCATENATION", "bfloat16", [[2, 3], [2, 2]], [[2, 5]], options=dict(axis=1), version=7)
_one("PAD", "bfloat16", [[2, 3]], [[3, 6]], consts=[np.array([[1, 0], [2, 1]], np.int32)], version=6)
_one("PADV2", "bfloat16", [[2, 3]], [[3, 6]], consts=[np.array([[1, 0], [2, 1]], np.int32),
                                                       (np.array([1.5], np.float32).astype(BF16), "BFLOAT16")],
     version=6)
_one("GATHER", "bfloat16", [[4, 3]], [[2, 3]], consts=[np.array([3, 1], np.int32)], options=dict(axis=0), version=8)
_one("TRANSPOSE", "bfloat16", [[2, 3, 4]], [[4, 2, 3]], consts=[np.array([2, 0, 1], np.int32)], version=9)
_one("SLICE", "bfloat16", [[3, 4]], [[2, 2]], consts=[np.array([1, 1], np.int32), np.array([2, 2], np.int32)],
     version=8)
_one("UNPACK", "bfloat16", [[2, 3]], [[3], [3]], options=dict(num=2, axis=0), version=6)


# ------------------------------------------------------------------ ADD (v5/v6) / MUL (v6-v8): FLOAT16, plain INT16, UINT32, COMPLEX64
def _binary(op, name, dt, npt, s1, s2, act="NONE", gen=None, version=8):
    out = list(np.broadcast_shapes(tuple(s1), tuple(s2)))

    def model():
        mb = ModelBuilder()
        a = mb.add_input(s1, dt)
        b = mb.add_input(s2, dt)
        y = mb.add_tensor(out, dt)
        mb.mark_output(y)
        mb.add_op(op, [a, b], [y], options=dict(fused_activation_function=act), version=version)
        return mb.build()

    def inputs(rng):
        return [gen(rng, s1).astype(npt), gen(rng, s2).astype(npt)]
    add(op, name, model, inputs)


def _f16_gen(rng, s):
    x = rng.normal(0, 4, s)
    x.reshape(-1)[:4] = [60000, -60000, np.inf, np.nan][:x.size]
    return x


def _i16_gen(rng, s):
    x = rng.integers(-300, 300, s)
    x.reshape(-1)[:2] = [30000, -30000][:x.size]
    return x


def _u32_gen(rng, s):
    x = rng.integers(0, 100000, s)
    x.reshape(-1)[:1] = [4000000000]
    return x


for op, ver in (("ADD", 6), ("MUL", 8)):
    for act in ("NONE", "RELU", "RELU6", "RELU_N1_TO_1"):
        _binary(op, f"float16_{act.lower()}", "FLOAT16", F16, [3, 8], [3, 8], act, _f16_gen, ver)
        _binary(op, f"int16_plain_{act.lower()}", "INT16", np.int16, [3, 8], [3, 8], act, _i16_gen, ver)
    _binary(op, "float16_broadcast_5d", "FLOAT16", F16, [2, 1, 3, 2, 4], [3, 1, 4], "NONE", _f16_gen, ver)
    _binary(op, "int16_plain_broadcast", "INT16", np.int16, [4, 1, 5], [1, 6, 1], "NONE", _i16_gen, ver)
for act in ("NONE", "RELU6"):
    _binary("MUL", f"uint32_{act.lower()}", "UINT32", np.uint32, [2, 7], [2, 7], act, _u32_gen)
_binary("MUL", "complex64", "COMPLEX64", np.complex64, [3, 4], [4], "NONE",
        lambda rng, s: rng.normal(0, 2, s) + 1j * rng.normal(0, 2, s))


# ------------------------------------------------------------------ SOFTMAX (v4): FLOAT16
# LiteRT's FLOAT16 softmax keeps some intermediate in half precision that we could not pin down
# (its results differ from the float32 softmax rounded to half by 1-2 half ulps in ~10-20% of the
# elements); ours computes in float and rounds the output once. tol is fp16 precision: a half ulp
# is 2^-11 ~ 4.9e-4 relative.
def _softmax_f16(name, shape, beta):
    def model():
        mb = ModelBuilder()
        x = mb.add_input(shape, "FLOAT16")
        y = mb.add_tensor(shape, "FLOAT16")
        mb.mark_output(y)
        mb.add_op("SOFTMAX", [x], [y], options=dict(beta=beta), version=4)
        return mb.build()
    add("SOFTMAX", name, model, lambda rng: [rng.normal(0, 3, shape).astype(F16)], tol=2e-3,
        note="fp16 output; LiteRT's half-precision intermediates differ by 1-2 half ulps")


_softmax_f16("float16", [4, 13], 1.0)
_softmax_f16("float16_beta", [2, 3, 40], 0.7)


# ------------------------------------------------------------------ SQRT (v2): quantized INT8 / INT16
def _qsqrt(name, dt, npt, in_q, out_q, shape, lo, hi, quant):
    def model():
        mb = ModelBuilder()
        x = mb.add_input(shape, dt, quant=dict(scale=[in_q[0]], zero_point=[in_q[1]]))
        y = mb.add_tensor(shape, dt, quant=dict(scale=[out_q[0]], zero_point=[out_q[1]]))
        mb.mark_output(y)
        mb.add_op("SQRT", [x], [y], version=2)
        return mb.build()

    def inputs(rng):
        x = rng.integers(lo, hi + 1, shape)
        x.reshape(-1)[:2] = [lo, hi]
        return [x.astype(npt)]
    add("SQRT", name, model, inputs, quant=quant,
        note="quantized SQRT stays on the CPU under the GPU delegate (TFLite truncates on requantizing)")


_qsqrt("int8", "INT8", np.int8, (0.05, -128), (0.013, -100), [4, 64], -128, 127, "int8")
_qsqrt("int8_zero_point", "INT8", np.int8, (0.37, -20), (0.09, 5), [300], -20, 127, "int8")
_qsqrt("int16", "INT16", np.int16, (0.001, 0), (0.0007, 0), [5, 400], 0, 32767, "int16x8")
_qsqrt("int16_wide", "INT16", np.int16, (0.01, 0), (0.00031, 0), [2000], 0, 32767, "int16x8")


# ------------------------------------------------------------------ CONV_2D (v7+) / DEPTHWISE_CONV_2D (v7): INT4 weights
# LiteRT 2.3 runs INT4 filters for CONV_2D with INT8, INT16 and FLOAT32 (hybrid) input and for
# DEPTHWISE_CONV_2D with INT8 input (probed; it refuses INT2 filters and hybrid INT4 depthwise, and
# its INT16 x INT4 depthwise gives results unlike the INT4 values': refused here, see
# test_versions_errors.py). The packed weights are held unpacked and run the INT8-weight kernels.
def _conv_int4(op, in_t, per_channel, shape=(1, 7, 6, 5), k=3, out_c=4, stride=1, padding="SAME", w_t="INT4"):
    n, h, w_, c = shape
    dw = op == "DEPTHWISE_CONV_2D"
    units = c if dw else out_c
    wshape = [1, k, k, c] if dw else [out_c, k, k, c]
    oh = (h + stride - 1) // stride if padding == "SAME" else (h - k + stride) // stride
    ow = (w_ + stride - 1) // stride if padding == "SAME" else (w_ - k + stride) // stride
    ws = [0.03 + 0.01 * i for i in range(units)] if per_channel else [0.05]

    def model():
        mb = ModelBuilder()
        iq = None if in_t == "FLOAT32" else dict(scale=[0.04], zero_point=[-5 if in_t == "INT8" else 0])
        x = mb.add_input(list(shape), in_t, quant=iq)
        lo, hi = RANGES[w_t]
        wv = np.random.default_rng(21).integers(lo, hi + 1, size=wshape)
        wt = mb.add_tensor(wshape, w_t, data=wv, quant=dict(scale=ws, zero_point=[0] * len(ws),
                                                               quantized_dimension=3 if dw else 0))
        if in_t == "FLOAT32":
            b = mb.add_const(np.linspace(-1, 1, units).astype(F32))
        else:
            bt = np.int64 if in_t == "INT16" else np.int32
            bs = ws if per_channel else ws * units
            b = mb.add_tensor([units], bt, data=(np.arange(units) * 37 - 50).astype(bt),
                              quant=dict(scale=[0.04 * s for s in bs], zero_point=[0] * units))
        oq = None if in_t == "FLOAT32" else dict(scale=[0.25], zero_point=[0 if in_t == "INT16" else 3])
        y = mb.add_tensor([n, oh, ow, units], in_t, quant=oq)
        mb.mark_output(y)
        opts = dict(padding=padding, stride_w=stride, stride_h=stride)
        if dw:
            opts["depth_multiplier"] = 1
        mb.add_op(op, [x, wt, b], [y], version=8 if op == "CONV_2D" else 7, options=opts)
        return mb.build()

    def inputs(rng):
        if in_t == "FLOAT32":
            return [rng.normal(0, 1, shape).astype(F32)]
        info = np.iinfo(np.int8 if in_t == "INT8" else np.int16)
        lim = 127 if in_t == "INT8" else 3000
        return [rng.integers(max(info.min, -lim), lim, shape).astype(info.dtype)]
    return model, inputs


for _pc in (False, True):
    for _in in ("INT8", "INT16", "FLOAT32"):
        m, i = _conv_int4("CONV_2D", _in, _pc)
        add("CONV_2D", f"{_in.lower()}_x_int4{'_per_channel' if _pc else ''}", m, i)
    m, i = _conv_int4("DEPTHWISE_CONV_2D", "INT8", _pc, stride=2, padding="VALID")
    add("DEPTHWISE_CONV_2D", f"int8_x_int4{'_per_channel' if _pc else ''}", m, i)



# ------------------------------------------------------------------ EMBEDDING_LOOKUP (v5): INT4 / INT2 tables
# LiteRT 2.3 looks INT4 and INT2 tables up into FLOAT32 (dequantized, per-tensor or one scale per
# row); with an INT8 output it copies packed bytes and UINT4 it misreads: both refused here
# (test_versions_errors.py).
def _emb_packed(w_t, per_row, rows=7, dims=(3, 4), n_ids=6):
    def model():
        mb = ModelBuilder()
        ids = mb.add_input([n_ids], np.int32)
        lo, hi = RANGES[w_t]
        q = (dict(scale=[0.1 + 0.05 * r for r in range(rows)], zero_point=[0] * rows, quantized_dimension=0)
             if per_row else dict(scale=[0.25], zero_point=[0]))
        w = mb.add_tensor([rows, *dims], w_t, data=np.random.default_rng(7).integers(lo, hi + 1, (rows, *dims)), quant=q)
        y = mb.add_tensor([n_ids, *dims], F32)
        mb.add_op("EMBEDDING_LOOKUP", [ids, w], [y], version=5)
        mb.mark_output(y)
        return mb.build()

    def inputs(rng):
        return [rng.integers(0, rows, n_ids).astype(np.int32)]
    return model, inputs


for _t in ("INT4", "INT2"):
    for _pr in (False, True):
        m, i = _emb_packed(_t, _pr)
        add("EMBEDDING_LOOKUP", f"{_t.lower()}_to_float32{'_per_row' if _pr else ''}", m, i)
