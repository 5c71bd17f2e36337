// Quantized kernels of the conv family: CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, BATCH_MATMUL.
//
// Types (as LiteRT 2.3 accepts them):
//   int8  activations, int8 weights (per-tensor or per-channel, zero point 0 except FULLY_CONNECTED
//         which honours a weight zero point as TFLite's filter_offset), int32 bias;
//   uint8 activations and weights, per-tensor (legacy asymmetric), int32 bias;
//   int16 activations (zero point 0) with int8 weights ("16x8"), int64 or int32 bias.
// Output: the input's type. Fused activations clamp to the quantized range
// (quant::QuantizedActivationRange).
//
// Which rounding, per op. The oracle is LiteRT's builtin resolver (optimized kernels); its
// reference kernels (BUILTIN_REF) use gemmlowp's double rounding everywhere, its optimized ones
// do not. We follow the builtin path, as measured on tie-heavy cases (tests/op_cases/conv.py
// q*-ties cases, which fail for every other variant):
//   CONV_2D int8/uint8, FULLY_CONNECTED int8/uint8 (and int16 with int32 bias), DEPTHWISE_CONV_2D
//     int8 (on whole 8-channel chunks; Double on the remaining channels of a pixel): HalfUp (ruy's x86 kernels / TFLite's NEON-on-SSE output stages: both roundings half
//     up). The reference kernels' double rounding differs on negative ties.
//   DEPTHWISE_CONV_2D uint8, BATCH_MATMUL int8: Double (gemmlowp, ties away from zero in the
//     shift), the scalar output stage those kernels use.
//   int16x8 CONV_2D / DEPTHWISE_CONV_2D / BATCH_MATMUL: Reduced64 (TFLite's int64-accumulator
//     MultiplyByQuantizedMultiplier with a 16-bit multiplier; the builtin path runs the reference
//     kernels for 16x8).
//   FULLY_CONNECTED int16 with int64 bias: Away64; with int32 bias or none: HalfUp (one rounding of the full multiplier,
//     ties away from zero), as measured.
// Multipliers are formed as the TFLite kernel forms them (qgemm::ScaleProduct).
//
// Fast kernels: 8-bit types run on qgemm (int8 x int8 with weight offset 0 and a HalfUp output stage,
// and the hybrid kernels: AVX-512 VNNI vpdpbusd with the requantization fused in registers, where the
// CPU has it; otherwise int16-widened operands, AVX2 madd); int16x8 runs a
// threaded int64 loop (TFLite itself has only reference kernels for 16x8). Reference kernels
// (eval_ref) are plain loops with int64 sums over the original tensors.
#include "ops/conv/quantized.h"

#include <cstring>
#include <type_traits>

#include "ops/conv/qgemm.h"
#include "ops/simd.h"
#include "ops/quant_common.h"

namespace tflite_gpu {
namespace qconv {
namespace {

using qgemm::OutputStage;
using qgemm::Rounding;
using qgemm::ScaleProduct;
using quant::QuantRule;
using quant::TensorQuant;

// Quantization of one conv-like node: types, offsets, output stage.
struct QCommon {
  DType type = DType::kInt8;       // activation type
  DType wtype = DType::kInt8;
  int32_t in_offset = 0, w_offset = 0;  // -zero points (w_offset per-tensor only)
  OutputStage os;
  bool has_bias = false;
  DType bias_type = DType::kInt32;
  int channels = 0;
};

// What a kernel needs to know to validate its tensors.
struct QSpec {
  int in_index = 0, w_index = 1, b_index = 2;
  int w_channel_axis = 0;        // per-channel axis of the weights
  bool w_zero_point_any = false;  // int8 weights may have a zero point (FULLY_CONNECTED)
  bool w_per_channel = true;     // int8 weights may be per-channel
  ScaleProduct per_tensor = ScaleProduct::kDouble, per_channel = ScaleProduct::kDouble;
  bool check_bias_scale_u8 = false;  // TFLite's GetQuantizedConvolutionMultipler bias-scale check
  bool check_bias_scale_pt = false;  // ... also for int8 per-tensor weights
  Rounding r8 = Rounding::kHalfUp, r16 = Rounding::kReduced64, r16_b32 = Rounding::kReduced64;
  // int16x8 with an INT32 bias: FULLY_CONNECTED only. (LiteRT's DEPTHWISE_CONV_2D refuses it; its CONV_2D
  // accepts it but its results match no reading of the bias we could find, so we refuse it too.)
  bool i16_bias32 = false;
  bool i16_w16 = false;  // BATCH_MATMUL int16: both operands INT16
  bool bias_required = false;  // TFLite's int8/uint8 CONV_2D needs the bias
  bool packed_weights = false;  // INT4 / INT2 weights (held unpacked as int8) stand for INT8: FULLY_CONNECTED, CONV_2D, DEPTHWISE_CONV_2D
};

// INT4 / INT2 weights are held unpacked, one sign-extended byte an element: where an op takes them
// (FULLY_CONNECTED v10 / v13 / v14), they run the INT8-weight kernels.
inline DType WeightKind(DType t, bool packed_ok) {
  return packed_ok && (t == DType::kInt4 || t == DType::kInt2) ? DType::kInt8 : t;
}

const char* TypeMixHelp() {
  return "supported: INT8 input with INT8 weights and INT32 bias, UINT8 input with UINT8 weights and INT32 bias, "
         "INT16 input with INT8 weights and INT64/INT32 bias";
}

Status SetupQuant(OpContext& ctx, const QSpec& spec, int channels, int act, QCommon* q) {
  const Tensor& in = ctx.input(spec.in_index);
  const Tensor& w = ctx.input(spec.w_index);
  const Tensor& out = ctx.output(0);
  q->type = in.type;
  const DType wt = WeightKind(w.type, spec.packed_weights);
  q->wtype = wt;
  q->channels = channels;
  const bool ok_types = (in.type == DType::kInt8 && wt == DType::kInt8) ||
                        (in.type == DType::kUInt8 && wt == DType::kUInt8) ||
                        (in.type == DType::kInt16 && wt == (spec.i16_w16 ? DType::kInt16 : DType::kInt8));
  if (!ok_types)
    return ctx.Error(std::string("input type ") + DTypeName(in.type) + " with weights type " + DTypeName(w.type) +
                     " is not supported (" + TypeMixHelp() +
                     (spec.packed_weights ? "; INT4 / INT2 weights wherever INT8 ones are" : "") + ")");
  if (out.type != in.type)
    return ctx.Error(std::string("output has type ") + DTypeName(out.type) + "; expected " + DTypeName(in.type) +
                     " (the input's type)");
  const bool i16 = in.type == DType::kInt16;
  TensorQuant iq, wq, oq;
  QuantRule act_rule;
  act_rule.zero_point_zero = i16;
  TFG_RETURN_IF_ERROR(quant::ReadQuant(ctx, in, "input", act_rule, &iq));
  TFG_RETURN_IF_ERROR(quant::ReadQuant(ctx, out, "output", act_rule, &oq));
  QuantRule wr;
  wr.allow_per_channel = wt == DType::kInt8 && spec.w_per_channel;
  wr.channel_axis = spec.w_channel_axis;
  wr.zero_point_zero = (wt == DType::kInt8 && !(spec.w_zero_point_any && !i16)) || wt == DType::kInt16;
  TFG_RETURN_IF_ERROR(quant::ReadQuant(ctx, w, "weights", wr, &wq));
  if (wq.per_channel() && int(wq.channels()) != channels)
    return ctx.Error(quant::TensorLabel("weights", w) + " has " + std::to_string(wq.channels()) +
                     " per-channel scales for " + std::to_string(channels) + " output channels");
  q->in_offset = -iq.ZeroPoint();
  q->w_offset = -wq.ZeroPoint();
  // Bias.
  q->has_bias = ctx.has_input(spec.b_index);
  if (!q->has_bias && spec.bias_required)
    return ctx.Error(std::string("the ") + DTypeName(in.type) + " kernel needs a bias tensor (as TFLite's)");
  if (q->has_bias) {
    const Tensor& b = ctx.input(spec.b_index);
    const bool bias_ok = i16 ? (b.type == DType::kInt64 || (spec.i16_bias32 && b.type == DType::kInt32)) : b.type == DType::kInt32;
    if (!bias_ok)
      return ctx.Error(quant::TensorLabel("bias", b) + " has type " + DTypeName(b.type) + "; " + DTypeName(in.type) +
                       " kernels take " + (i16 ? (spec.i16_bias32 ? "INT64 or INT32" : "INT64") : "INT32") + " bias");
    if (b.num_elements() != channels)
      return ctx.Error(quant::TensorLabel("bias", b) + " has " + std::to_string(b.num_elements()) + " elements, expected " +
                       std::to_string(channels));
    QuantRule br;
    br.required = false;
    br.allow_per_channel = true;
    TensorQuant bq;
    TFG_RETURN_IF_ERROR(quant::ReadQuant(ctx, b, "bias", br, &bq));
    q->bias_type = b.type;
    const bool check = (in.type == DType::kUInt8 && spec.check_bias_scale_u8) ||
                       (in.type == DType::kInt8 && !wq.per_channel() && spec.check_bias_scale_pt);
    if (check && !b.quant.scale.empty()) {
      // TFLite: |input_scale * filter_scale - bias_scale| <= 1e-6 * min(both), else it refuses.
      const double ips = double(iq.Scale() * wq.Scale());
      const double bs = double(bq.Scale());
      if (!(std::abs(ips - bs) <= 1e-6 * std::min(ips, bs)))
        return ctx.Error(quant::TensorLabel("bias", b) + " scale " + std::to_string(bs) +
                         " differs from input scale * weights scale " + std::to_string(ips));
    }
  }
  // Output stage.
  qgemm::SetMultipliers(&q->os, wq.per_channel() ? spec.per_channel : spec.per_tensor, iq.Scale(), wq, oq.Scale(),
                        channels);
  q->os.zp = oq.ZeroPoint();
  TFG_RETURN_IF_ERROR(quant::QuantizedActivationRange(ctx, act, out.type, oq.Scale(), oq.ZeroPoint(), &q->os.lo, &q->os.hi));
  q->os.rounding = !i16 ? spec.r8 : (q->has_bias && q->bias_type == DType::kInt64 ? spec.r16 : spec.r16_b32);
  q->os.bias.assign(channels, 0);
  return OkStatus();
}

// Copies the bias into the output stage (at every eval: the bias may be a runtime tensor).
void LoadBias(OpContext& ctx, int b_index, QCommon* q) {
  q->os.shift32.assign(q->os.shift.begin(), q->os.shift.end());
  q->os.bias32.assign(q->channels, 0);
  if (!q->has_bias) return;
  const Tensor& b = ctx.input(b_index);
  if (b.type == DType::kInt64) {
    const int64_t* p = b.as<int64_t>();
    for (int c = 0; c < q->channels; ++c) q->os.bias[c] = p[c];
  } else {
    const int32_t* p = b.as<int32_t>();
    for (int c = 0; c < q->channels; ++c) q->os.bias[c] = p[c];
  }
  for (int c = 0; c < q->channels; ++c) q->os.bias32[c] = int32_t(uint32_t(uint64_t(q->os.bias[c])));
}

template <typename T>
inline T OutputOf(const OutputStage& os, DType type, int64_t raw, int c) {
  // 8-bit: int32 accumulator and bias wrap as TFLite's; int16x8: int64 sums.
  if (type == DType::kInt16) return os.Apply<T>(raw + os.bias[c], c);
  return os.Apply32<T>(int32_t(uint32_t(uint64_t(raw))), c);
}

// ======================================================================= hybrid (dynamic range)
//
// Float activations, int8 weights (per-tensor or per-channel, zero point 0), float bias, float
// output. As TFLite's hybrid kernels: each batch's input is quantized on the fly to int8
// (symmetric: scale = max|x| / 127, values round(x * 127 / max|x|) clamped to +-127; asymmetric:
// TFLite's AsymmetricQuantizeFloats, scale and nudged zero point from [min(0, lo), max(0, hi)] in
// double), the int8 products are summed exactly in int32 (for asymmetric inputs the sum of
// (q - zero_point) * w, i.e. TFLite's dotprod - offset * row_sum), and the float result is
// FULLY_CONNECTED: bias + acc * (input_scale * weight_scale), CONV_2D: acc * weight_scale *
// input_scale + bias, then the fused activation clamp.


struct HybridIn {
  std::vector<int8_t> q;
  std::vector<float> scale;
  std::vector<int32_t> zp;
};

// quant::QuantizeFloatRow over `batches` rows of n floats.
void QuantizeBatches(const float* x, int64_t batches, int64_t n, bool asymmetric, HybridIn* h) {
  h->q.resize(size_t(batches * n));
  h->scale.resize(size_t(batches));
  h->zp.resize(size_t(batches));
  for (int64_t b = 0; b < batches; ++b)
    quant::QuantizeFloatRow(x + b * n, n, asymmetric, h->q.data() + b * n, &h->scale[size_t(b)], &h->zp[size_t(b)]);
}

struct HybridCommon {
  std::vector<float> wscale;  // per output channel
  float lo = 0, hi = 0;
  bool asymmetric = false;
  HybridIn in;
};

Status SetupHybrid(OpContext& ctx, int w_index, int b_index, int w_axis, int channels, int act, HybridCommon* h,
                   bool packed_weights = false) {
  const Tensor& in = ctx.input(0);
  const Tensor& w = ctx.input(w_index);
  const Tensor& out = ctx.output(0);
  if (in.type != DType::kFloat32 || WeightKind(w.type, packed_weights) != DType::kInt8)
    return ctx.Error(std::string("input type ") + DTypeName(in.type) + " with weights type " + DTypeName(w.type) +
                     " is not supported (" + TypeMixHelp() + "; hybrid: FLOAT32 input with INT8 weights" +
                     (packed_weights ? " (or INT4 / INT2)" : "") + ")");
  if (out.type != DType::kFloat32)
    return ctx.Error(std::string("output has type ") + DTypeName(out.type) + "; a hybrid kernel (FLOAT32 input, INT8 weights) "
                     "produces FLOAT32");
  QuantRule wr;
  wr.allow_per_channel = true;
  wr.channel_axis = w_axis;
  wr.zero_point_zero = true;
  TensorQuant wq;
  TFG_RETURN_IF_ERROR(quant::ReadQuant(ctx, w, "weights", wr, &wq));
  if (wq.per_channel() && int(wq.channels()) != channels)
    return ctx.Error(quant::TensorLabel("weights", w) + " has " + std::to_string(wq.channels()) +
                     " per-channel scales for " + std::to_string(channels) + " output channels");
  h->wscale.resize(channels);
  for (int c = 0; c < channels; ++c) h->wscale[c] = wq.Scale(c);
  if (ctx.has_input(b_index)) {
    const Tensor& b = ctx.input(b_index);
    if (b.type != DType::kFloat32)
      return ctx.Error(quant::TensorLabel("bias", b) + " has type " + DTypeName(b.type) + "; the hybrid kernel takes FLOAT32 bias");
    if (b.num_elements() != channels)
      return ctx.Error(quant::TensorLabel("bias", b) + " has " + std::to_string(b.num_elements()) + " elements, expected " +
                       std::to_string(channels));
  }
  if (!ActivationBounds(act, &h->lo, &h->hi)) return ctx.Error("unsupported fused activation " + std::to_string(act));
  return OkStatus();
}


// ======================================================================= CONV_2D

struct QConvState {
  QCommon q;
  bool hybrid = false;
  HybridCommon h;
  int batch = 0, in_h = 0, in_w = 0, in_c = 0, out_h = 0, out_w = 0, out_c = 0, k_h = 0, k_w = 0;
  int pad_t = 0, pad_l = 0, sh = 1, sw = 1, dh = 1, dw = 1;
  qgemm::PackedB packed;
  conv::PackKey key;
  bool packed_valid = false;
  qgemm::PackedB8 packed8;  // the VNNI path's weights (UseVnni)
  qgemm::Requant8 rq8;
};

template <typename T>
void PackWeights(const Tensor& w, int N, int K, int32_t offset, qgemm::PackedB* out) {
  qgemm::PackB(N, K, w.as<T>(), K, 1, offset, out);
}

// The AVX-512 VNNI GEMM applies: int8 activations and weights, weight offset 0, HalfUp output stage
// on every channel (or a hybrid kernel: int8 x int8 with a per-row offset and a float output).
bool UseVnni(const QCommon& q) {
  return qgemm::HaveVnni() && q.type == DType::kInt8 && q.wtype == DType::kInt8 && q.w_offset == 0 &&
         q.os.rounding == Rounding::kHalfUp && q.os.body_end >= q.channels;
}

// As EnsurePacked, for the VNNI layout (int8 weights, offset 0).
Status EnsurePacked8(OpContext& ctx, int w_index, int N, int K, qgemm::PackedB8* packed, conv::PackKey* key,
                     bool* valid, bool at_eval, int kq_align = 1) {
  const Tensor& w = ctx.input(w_index);
  const bool constant = ctx.IsConstantOrPersistent(w);
  if (!constant && !at_eval) {
    *valid = false;
    return OkStatus();
  }
  conv::PackKey k{w.data, nullptr, w.shape, -int64_t(K) - 1};
  if (constant && *valid && *key == k) return OkStatus();
  qgemm::PackB8(N, K, w.as<int8_t>(), packed, kq_align);
  *key = k;
  *valid = constant;
  return OkStatus();
}

Status EnsurePacked(OpContext& ctx, int w_index, int N, int K, int32_t w_offset, qgemm::PackedB* packed,
                    conv::PackKey* key, bool* valid, bool at_eval) {
  const Tensor& w = ctx.input(w_index);
  const bool constant = ctx.IsConstantOrPersistent(w);
  if (!constant && !at_eval) {
    *valid = false;
    return OkStatus();
  }
  conv::PackKey k{w.data, nullptr, w.shape, K};
  if (constant && *valid && *key == k) return OkStatus();
  if (w.type == DType::kUInt8) PackWeights<uint8_t>(w, N, K, w_offset, packed);
  else PackWeights<int8_t>(w, N, K, w_offset, packed);
  *key = k;
  *valid = constant;
  return OkStatus();
}

}  // namespace

Status PrepareConv2D(OpContext& ctx, const conv::WindowParams& p) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 3, 1, 1));
  const Tensor& in = ctx.input(0);
  const Tensor& f = ctx.input(1);
  TFG_RETURN_IF_ERROR(conv::CheckRank(ctx, in, 4, "input"));
  TFG_RETURN_IF_ERROR(conv::CheckRank(ctx, f, 4, "filter"));
  TFG_RETURN_IF_ERROR(conv::CheckWindow(ctx, p.padding, p.stride_w, p.stride_h, p.dil_w, p.dil_h));
  if (!ctx.node().user_data) ctx.node().user_data = std::make_shared<QConvState>();
  QConvState* s = ctx.node().U<QConvState>();
  s->rq8.built_for = 0;  // the output stage may change: rebuild the VNNI / AMX vectors
  s->batch = in.shape[0];
  s->in_h = in.shape[1];
  s->in_w = in.shape[2];
  s->in_c = in.shape[3];
  s->out_c = f.shape[0];
  s->k_h = f.shape[1];
  s->k_w = f.shape[2];
  if (s->k_h <= 0 || s->k_w <= 0 || f.shape[3] <= 0)
    return ctx.Error("filter shape " + conv::Str(f.shape) + " has an empty spatial or channel dimension");
  if (f.shape[3] != s->in_c)
    return ctx.Error("filter shape " + conv::Str(f.shape) + " does not match the input's " + std::to_string(s->in_c) +
                     " channels (grouped convolution is not supported for quantized types)");
  TFG_RETURN_IF_ERROR(conv::CheckSize(ctx, int64_t(s->k_h) * s->k_w * s->in_c, "filter size"));
  s->sh = p.stride_h;
  s->sw = p.stride_w;
  s->dh = p.dil_h;
  s->dw = p.dil_w;
  conv::WindowOutput(p.padding, s->in_h, s->in_w, s->k_h, s->k_w, p.stride_h, p.stride_w, p.dil_h, p.dil_w, &s->out_h,
                     &s->out_w, &s->pad_t, &s->pad_l);
  // INT4 weights (CONV_2D v7+) run the INT8-weight kernels; LiteRT 2.3 refuses INT2 ones.
  if (f.type == DType::kInt2)
    return ctx.Error("INT2 weights are not supported (LiteRT refuses them for CONV_2D; INT4 weights are)");
  s->hybrid = in.type == DType::kFloat32;
  if (s->hybrid) {
    TFG_RETURN_IF_ERROR(SetupHybrid(ctx, 1, 2, 0, s->out_c, p.act, &s->h, /*packed_weights=*/true));
    // TFLite's hybrid CONV_2D: per-channel weights quantize the input asymmetrically (EvalHybridPerChannel),
    // per-tensor weights symmetrically (EvalHybrid). A per-channel vector whose scales are all equal runs
    // as per-tensor in LiteRT 2.3 (measured: its output equals the per-tensor model's bit for bit).
    {
      const auto& sc = ctx.input(1).quant.scale;
      bool all_equal = true;
      for (size_t i = 1; i < sc.size(); ++i) all_equal = all_equal && sc[i] == sc[0];
      s->h.asymmetric = sc.size() > 1 && !all_equal;
    }
    TFG_RETURN_IF_ERROR(ctx.SetOutputShape(0, {s->batch, s->out_h, s->out_w, s->out_c}));
    if (qgemm::HaveVnni())
      return EnsurePacked8(ctx, 1, s->out_c, s->k_h * s->k_w * s->in_c, &s->packed8, &s->key, &s->packed_valid, false);
    return EnsurePacked(ctx, 1, s->out_c, s->k_h * s->k_w * s->in_c, 0, &s->packed, &s->key, &s->packed_valid, false);
  }
  QSpec spec;
  spec.packed_weights = true;  // CONV_2D v7+: INT4 weights (LiteRT 2.3 runs int8, int16x8 and hybrid)
  spec.w_channel_axis = 0;
  spec.per_tensor = ScaleProduct::kDouble;  // PopulateConvolutionQuantizationParams (int8, int16)
  if (in.type == DType::kUInt8) spec.per_tensor = ScaleProduct::kFloatThenDouble;  // GetQuantizedConvolutionMultipler
  spec.check_bias_scale_u8 = true;
  spec.bias_required = true;
  TFG_RETURN_IF_ERROR(SetupQuant(ctx, spec, s->out_c, p.act, &s->q));
  TFG_RETURN_IF_ERROR(ctx.SetOutputShape(0, {s->batch, s->out_h, s->out_w, s->out_c}));
  if (UseVnni(s->q))
    return EnsurePacked8(ctx, 1, s->out_c, s->k_h * s->k_w * s->in_c, &s->packed8, &s->key, &s->packed_valid, false,
                         qgemm::KqAlign());
  if (s->q.type != DType::kInt16)
    TFG_RETURN_IF_ERROR(EnsurePacked(ctx, 1, s->out_c, s->k_h * s->k_w * s->in_c, s->q.w_offset, &s->packed, &s->key,
                                     &s->packed_valid, false));
  return OkStatus();
}

namespace {

// One conv output value from the original tensors: sum over taps (int64), TFLite's reference loop.
template <typename TI, typename TW>
int64_t ConvDot(const QConvState& s, const TI* in, const TW* f, int b, int oy, int ox, int oc) {
  int64_t acc = 0;
  for (int ky = 0; ky < s.k_h; ++ky) {
    const int iy = oy * s.sh - s.pad_t + ky * s.dh;
    if (iy < 0 || iy >= s.in_h) continue;
    for (int kx = 0; kx < s.k_w; ++kx) {
      const int ix = ox * s.sw - s.pad_l + kx * s.dw;
      if (ix < 0 || ix >= s.in_w) continue;
      const TI* ip = in + ((int64_t(b) * s.in_h + iy) * s.in_w + ix) * s.in_c;
      const TW* fp = f + ((int64_t(oc) * s.k_h + ky) * s.k_w + kx) * s.in_c;
      for (int ic = 0; ic < s.in_c; ++ic)
        acc += (int64_t(ip[ic]) + s.q.in_offset) * (int64_t(fp[ic]) + s.q.w_offset);
    }
  }
  return acc;
}

template <typename TI, typename TW>
void ConvLoops(const QConvState& s, const TI* in, const TW* f, TI* out, ThreadPool* pool) {
  const int64_t pixels = int64_t(s.batch) * s.out_h * s.out_w;
  auto body = [&](int64_t b0, int64_t b1) {
    for (int64_t px = b0; px < b1; ++px) {
      const int b = int(px / (int64_t(s.out_h) * s.out_w));
      const int oy = int(px / s.out_w % s.out_h), ox = int(px % s.out_w);
      for (int oc = 0; oc < s.out_c; ++oc)
        out[px * s.out_c + oc] = OutputOf<TI>(s.q.os, s.q.type, ConvDot(s, in, f, b, oy, ox, oc), oc);
    }
  };
  if (pool) gemm::ParallelRanges(pool, pixels, 4 * gemm::NumSlots(pool), body);
  else body(0, pixels);
}

// The AVX2 GEMM's in-register output stage for an 8-bit op whose stage is HalfUp on every channel
// with int32 biases (qgemm::Fused8); null where it does not apply (the tile then goes through write).
template <typename TI>
const qgemm::Fused8* Fused8For(const OutputStage& os, int channels, TI* out, int64_t ldc, qgemm::Fused8* f) {
  if (os.rounding != qgemm::Rounding::kHalfUp || os.body_end < channels || int(os.bias32.size()) < channels ||
      int(os.shift32.size()) < channels || int(os.mult.size()) < channels)
    return nullptr;
  *f = qgemm::Fused8{os.bias32.data(), os.mult.data(), os.shift32.data(), os.zp, os.lo, os.hi,
                     std::is_same<TI, uint8_t>::value, reinterpret_cast<uint8_t*>(out), ldc};
  return f;
}

template <typename TI>
void ConvFast(const QConvState& s, const TI* in, TI* out, ThreadPool* pool) {
  const int K = s.k_h * s.k_w * s.in_c, Kp = s.packed.Kp;
  const int64_t hw = int64_t(s.out_h) * s.out_w;
  const int32_t off = s.q.in_offset;
  const bool pointwise = s.k_h == 1 && s.k_w == 1 && s.sh == 1 && s.sw == 1 && s.pad_t == 0 && s.pad_l == 0;
  // 8-bit inputs: windows wholly inside the input along x (ox in [ox_in0, ox_in1], dilation 1) go
  // through qgemm::Im2colRun16 in runs
  const bool runs = sizeof(TI) == 1 && s.dw == 1;
  const int ox_in0 = (s.pad_l + s.sw - 1) / s.sw;
  const int ox_in1 = s.in_w - s.k_w + s.pad_l >= 0 ? (s.in_w - s.k_w + s.pad_l) / s.sw : -1;
  auto fill = [&](int64_t m0, int rows, int16_t* dst) {
    if (pointwise) {  // the block's rows one after another in the input
      qgemm::Im2colRun16(in + m0 * s.in_c, s.in_c, rows, 0, 1, s.in_c, off, dst, Kp);
      return;
    }
    for (int r = 0; r < rows; ++r) {
      const int64_t m = m0 + r;
      int16_t* d = dst + int64_t(r) * Kp;
      const int b = int(m / hw), oy = int(m / s.out_w % s.out_h), ox = int(m % s.out_w);
      const int iy0 = oy * s.sh - s.pad_t;
      if constexpr (sizeof(TI) == 1) {
        if (runs && ox >= ox_in0 && ox <= ox_in1 && iy0 >= 0 && iy0 + (s.k_h - 1) * s.dh < s.in_h) {
          const int n = std::min(std::min(ox_in1, s.out_w - 1) - ox + 1, rows - r);
          qgemm::Im2colRun16(in + ((int64_t(b) * s.in_h + iy0) * s.in_w + ox * s.sw - s.pad_l) * s.in_c,
                             int64_t(s.sw) * s.in_c, n, int64_t(s.dh) * s.in_w * s.in_c, s.k_h, s.k_w * s.in_c, off, d,
                             Kp);
          r += n - 1;
          continue;
        }
      }
      int16_t* dp = d;
      for (int ky = 0; ky < s.k_h; ++ky) {
        const int iy = oy * s.sh - s.pad_t + ky * s.dh;
        for (int kx = 0; kx < s.k_w; ++kx, dp += s.in_c) {
          const int ix = ox * s.sw - s.pad_l + kx * s.dw;
          if (iy < 0 || iy >= s.in_h || ix < 0 || ix >= s.in_w) {
            std::memset(dp, 0, sizeof(int16_t) * s.in_c);  // padding: the input zero point, i.e. 0 after the offset
            continue;
          }
          const TI* ip = in + ((int64_t(b) * s.in_h + iy) * s.in_w + ix) * s.in_c;
          for (int c = 0; c < s.in_c; ++c) dp[c] = int16_t(int32_t(ip[c]) + off);
        }
      }
      for (int k = K; k < Kp; ++k) d[k] = 0;
    }
  };
  const OutputStage& os = s.q.os;
  auto write = [&](int64_t m, int n0, int ncols, const int32_t* acc) { os.Row<TI>(acc, n0, ncols, out + m * s.out_c + n0); };
  qgemm::Fused8 f8;
  qgemm::Run(int64_t(s.batch) * hw, s.packed, fill, write, pool, Fused8For(os, s.out_c, out, s.out_c, &f8));
}

// im2col rows for the VNNI GEMM: x ^ 0x80 (x + 128 as uint8), padding taps the input zero point
// (0 after the offset, as TFLite's), K padded to Kq * 4. qin: int8 input, a_off its offset.
void FillConv8(const QConvState& s, const int8_t* qin, int32_t a_off, int64_t m0, int rows, uint8_t* dst) {
  const int lda = s.packed8.Kq * 4;
  const int64_t hw = int64_t(s.out_h) * s.out_w;
  const bool pointwise = s.k_h == 1 && s.k_w == 1 && s.sh == 1 && s.sw == 1 && s.pad_t == 0 && s.pad_l == 0;
  if (pointwise) {
    if (lda == s.in_c) {  // the block's rows are contiguous in the input: one pass
      qgemm::XorRow(qin + m0 * s.in_c, rows * s.in_c, rows * s.in_c, dst);
      return;
    }
    for (int r = 0; r < rows; ++r) qgemm::XorRow(qin + (m0 + r) * s.in_c, s.in_c, lda, dst + int64_t(r) * lda);
    return;
  }
  const int K = s.k_h * s.k_w * s.in_c;
  const uint8_t pad = uint8_t(uint8_t(int8_t(-a_off)) ^ 0x80);
  const int row_bytes = s.k_w * s.in_c;
  // windows wholly inside the input along x: ox in [ox_in0, ox_in1] (dilation 1)
  const int ox_in0 = (s.pad_l + s.sw - 1) / s.sw;
  const int ox_in1 = s.in_w - s.k_w + s.pad_l >= 0 ? (s.in_w - s.k_w + s.pad_l) / s.sw : -1;
  const int64_t row_step = int64_t(s.dh) * s.in_w * s.in_c;
  // output coordinates of row m0, then stepped row by row (no divisions per row)
  int b = int(m0 / hw), oy = int(m0 / s.out_w % s.out_h), ox = int(m0 % s.out_w) - 1;
  for (int r = 0; r < rows; ++r) {
    if (++ox == s.out_w) {
      ox = 0;
      if (++oy == s.out_h) {
        oy = 0;
        ++b;
      }
    }
    const int iy0 = oy * s.sh - s.pad_t;
    if (s.dw == 1 && ox >= ox_in0 && ox <= ox_in1 && iy0 >= 0 && iy0 + (s.k_h - 1) * s.dh < s.in_h) {
      // a run of windows wholly inside the input, to the end of the inside span, the output row or the block
      const int n = std::min(std::min(ox_in1, s.out_w - 1) - ox + 1, rows - r);
      qgemm::Im2colRun8(qin + ((int64_t(b) * s.in_h + iy0) * s.in_w + ox * s.sw - s.pad_l) * s.in_c,
                        int64_t(s.sw) * s.in_c, n, row_step, s.k_h, row_bytes, dst + int64_t(r) * lda, lda);
      r += n - 1;
      ox += n - 1;
      continue;
    }
    uint8_t* d = dst + int64_t(r) * lda;
    const int ix0 = ox * s.sw - s.pad_l;
    // dilation 1 and the whole filter row inside: its k_w taps are k_w * in_c contiguous bytes
    const bool row_inside = s.dw == 1 && ix0 >= 0 && ix0 + s.k_w <= s.in_w;
    uint8_t* dp = d;
    for (int ky = 0; ky < s.k_h; ++ky) {
      const int iy = oy * s.sh - s.pad_t + ky * s.dh;
      if (row_inside && iy >= 0 && iy < s.in_h) {
        qgemm::XorRow(qin + ((int64_t(b) * s.in_h + iy) * s.in_w + ix0) * s.in_c, row_bytes, row_bytes, dp);
        dp += row_bytes;
        continue;
      }
      for (int kx = 0; kx < s.k_w; ++kx, dp += s.in_c) {
        const int ix = ox * s.sw - s.pad_l + kx * s.dw;
        if (iy < 0 || iy >= s.in_h || ix < 0 || ix >= s.in_w) {
          std::memset(dp, pad, size_t(s.in_c));
          continue;
        }
        const int8_t* ip = qin + ((int64_t(b) * s.in_h + iy) * s.in_w + ix) * s.in_c;
        for (int c = 0; c < s.in_c; ++c) dp[c] = uint8_t(ip[c]) ^ 0x80;
      }
    }
    for (int k = K; k < lda; ++k) d[k] = 0x80;
  }
}

void ConvFast8(QConvState& s, const int8_t* in, int8_t* out, ThreadPool* pool) {
  const int32_t off = s.q.in_offset;
  if (s.rq8.built_for != s.packed8.gen) {
    qgemm::BuildRequant8(s.q.os, s.packed8, off, &s.rq8);
    s.rq8.built_for = s.packed8.gen;
  }
  const int64_t M = int64_t(s.batch) * s.out_h * s.out_w;
  const bool pointwise = s.k_h == 1 && s.k_w == 1 && s.sh == 1 && s.sw == 1 && s.pad_t == 0 && s.pad_l == 0;
  if (pointwise && qgemm::UseAmxDirect(M, s.packed8)) {  // A is the input itself: no copy
    qgemm::RunAmxDirect(M, in, s.in_c, s.packed8, s.rq8, out, s.out_c, pool);
    return;
  }
  auto fill = [&](int64_t m0, int rows, uint8_t* dst) { FillConv8(s, in, off, m0, rows, dst); };
  auto corr = [](int64_t) { return 0; };
  auto write = [](int64_t, int, int, const int32_t*) {};
  qgemm::Run8(M, s.packed8, fill, &s.rq8, out, s.out_c, false, corr, write, pool);
}


// Hybrid CONV_2D: out = float(acc) * weight_scale[c] * input_scale[b] + bias[c], clamped. Padding
// taps hold the input's zero point (contribute 0).
Status EvalHybridConv(OpContext& ctx, QConvState* s, bool ref) {
  if (int64_t(s->batch) * s->out_h * s->out_w * s->out_c == 0) return OkStatus();
  const float* x = ctx.input(0).as<float>();
  const Tensor* bt = ctx.optional_input(2);
  const float* bias = bt ? bt->as<float>() : nullptr;
  float* out = ctx.output(0).as<float>();
  HybridCommon& h = s->h;
  const int64_t img = int64_t(s->in_h) * s->in_w * s->in_c;
  QuantizeBatches(x, s->batch, img, h.asymmetric, &h.in);
  const int64_t hw = int64_t(s->out_h) * s->out_w;
  auto finish = [&](int64_t px, int c, int32_t acc) {
    const int64_t b = px / hw;
    const float v = float(acc) * h.wscale[c] * h.in.scale[b] + (bias ? bias[c] : 0.f);
    out[px * s->out_c + c] = conv::Clamp(v, h.lo, h.hi);
  };
  if (ref) {
    const int8_t* w = ctx.input(1).as<int8_t>();
    QConvState t = *s;  // ConvDot reads offsets from q
    for (int64_t px = 0; px < int64_t(s->batch) * hw; ++px) {
      const int b = int(px / hw), oy = int(px / s->out_w % s->out_h), ox = int(px % s->out_w);
      t.q.in_offset = -h.in.zp[b];
      t.q.w_offset = 0;
      for (int c = 0; c < s->out_c; ++c)
        finish(px, c, int32_t(uint32_t(uint64_t(ConvDot(t, h.in.q.data(), w, b, oy, ox, c)))));
    }
    return OkStatus();
  }
  if (qgemm::HaveVnni()) {
    TFG_RETURN_IF_ERROR(
        EnsurePacked8(ctx, 1, s->out_c, s->k_h * s->k_w * s->in_c, &s->packed8, &s->key, &s->packed_valid, true));
    const int8_t* qin = h.in.q.data();
    auto fill = [&](int64_t m0, int rows, uint8_t* dst) {
      // one batch's offset per row; FillConv8 takes it for the padding value, so split at batches
      for (int r = 0; r < rows;) {
        const int64_t b = (m0 + r) / hw;
        const int n = int(std::min<int64_t>(rows - r, (b + 1) * hw - (m0 + r)));
        FillConv8(*s, qin, -h.in.zp[b], m0 + r, n, dst + int64_t(r) * s->packed8.Kq * 4);
        r += n;
      }
    };
    auto corr = [&](int64_t m) { return -h.in.zp[m / hw] - 128; };
    auto write = [&](int64_t m, int n0, int ncols, const int32_t* acc) {
      for (int j = 0; j < ncols; ++j) finish(m, n0 + j, acc[j]);
    };
    qgemm::Run8(int64_t(s->batch) * hw, s->packed8, fill, nullptr, nullptr, 0, false, corr, write, ctx.pool());
    return OkStatus();
  }
  TFG_RETURN_IF_ERROR(EnsurePacked(ctx, 1, s->out_c, s->k_h * s->k_w * s->in_c, 0, &s->packed, &s->key, &s->packed_valid, true));
  const int K = s->k_h * s->k_w * s->in_c, Kp = s->packed.Kp;
  const int8_t* qin = h.in.q.data();
  auto fill = [&](int64_t m0, int rows, int16_t* dst) {
    for (int r = 0; r < rows; ++r) {
      const int64_t m = m0 + r;
      int16_t* d = dst + int64_t(r) * Kp;
      const int b = int(m / hw), oy = int(m / s->out_w % s->out_h), ox = int(m % s->out_w);
      const int32_t off = -h.in.zp[b];
      int16_t* dp = d;
      for (int ky = 0; ky < s->k_h; ++ky) {
        const int iy = oy * s->sh - s->pad_t + ky * s->dh;
        for (int kx = 0; kx < s->k_w; ++kx, dp += s->in_c) {
          const int ix = ox * s->sw - s->pad_l + kx * s->dw;
          if (iy < 0 || iy >= s->in_h || ix < 0 || ix >= s->in_w) {
            std::memset(dp, 0, sizeof(int16_t) * s->in_c);
            continue;
          }
          const int8_t* ip = qin + ((int64_t(b) * s->in_h + iy) * s->in_w + ix) * s->in_c;
          for (int c = 0; c < s->in_c; ++c) dp[c] = int16_t(int32_t(ip[c]) + off);
        }
      }
      for (int k = K; k < Kp; ++k) d[k] = 0;
    }
  };
  auto write = [&](int64_t m, int n0, int ncols, const int32_t* acc) {
    for (int j = 0; j < ncols; ++j) finish(m, n0 + j, acc[j]);
  };
  qgemm::Run(int64_t(s->batch) * hw, s->packed, fill, write, ctx.pool());
  return OkStatus();
}
}  // namespace

Status EvalConv2D(OpContext& ctx, bool ref) {
  QConvState* s = ctx.node().U<QConvState>();
  if (s->hybrid) return EvalHybridConv(ctx, s, ref);
  LoadBias(ctx, 2, &s->q);
  const Tensor& in = ctx.input(0);
  const Tensor& f = ctx.input(1);
  Tensor& out = ctx.output(0);
  if (int64_t(s->batch) * s->out_h * s->out_w * s->out_c == 0) return OkStatus();
  ThreadPool* pool = ref ? nullptr : ctx.pool();
  if (ref || s->q.type == DType::kInt16) {
    switch (s->q.type) {
      case DType::kInt8: ConvLoops(*s, in.as<int8_t>(), f.as<int8_t>(), out.as<int8_t>(), pool); break;
      case DType::kUInt8: ConvLoops(*s, in.as<uint8_t>(), f.as<uint8_t>(), out.as<uint8_t>(), pool); break;
      case DType::kInt16: ConvLoops(*s, in.as<int16_t>(), f.as<int8_t>(), out.as<int16_t>(), pool); break;
      default: return ctx.Error("unsupported type");
    }
    return OkStatus();
  }
  if (UseVnni(s->q)) {
    TFG_RETURN_IF_ERROR(
        EnsurePacked8(ctx, 1, s->out_c, s->k_h * s->k_w * s->in_c, &s->packed8, &s->key, &s->packed_valid, true,
                          qgemm::KqAlign()));
    ConvFast8(*s, in.as<int8_t>(), out.as<int8_t>(), pool);
    return OkStatus();
  }
  TFG_RETURN_IF_ERROR(EnsurePacked(ctx, 1, s->out_c, s->k_h * s->k_w * s->in_c, s->q.w_offset, &s->packed, &s->key,
                                   &s->packed_valid, true));
  if (s->q.type == DType::kInt8) ConvFast(*s, in.as<int8_t>(), out.as<int8_t>(), pool);
  else ConvFast(*s, in.as<uint8_t>(), out.as<uint8_t>(), pool);
  return OkStatus();
}

// ======================================================================= FULLY_CONNECTED

namespace {
struct QFcState {
  QCommon q;
  bool hybrid = false;
  HybridCommon h;
  int64_t batch = 0;
  int units = 0, depth = 0;
  qgemm::PackedB packed;
  conv::PackKey key;
  bool packed_valid = false;
  qgemm::PackedB8 packed8;
  qgemm::Requant8 rq8;
};
}  // namespace

Status PrepareFullyConnected(OpContext& ctx, int act, bool keep_num_dims, bool asymmetric) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 3, 1, 1));
  const Tensor& in = ctx.input(0);
  const Tensor& w = ctx.input(1);
  TFG_RETURN_IF_ERROR(conv::CheckRank(ctx, w, 2, "weights"));
  if (!ctx.node().user_data) ctx.node().user_data = std::make_shared<QFcState>();
  QFcState* s = ctx.node().U<QFcState>();
  s->rq8.built_for = 0;
  s->units = w.shape[0];
  s->depth = w.shape[1];
  if (s->depth <= 0) return ctx.Error("weights shape " + conv::Str(w.shape) + " has no input columns");
  const int64_t total = in.num_elements();
  if (total % s->depth != 0)
    return ctx.Error("input shape " + conv::Str(in.shape) + " (" + std::to_string(total) +
                     " elements) is not a multiple of the weights' input size " + std::to_string(s->depth));
  s->batch = total / s->depth;
  Dims out_shape;
  if (keep_num_dims) {
    if (in.shape.empty() || in.shape.back() != s->depth)
      return ctx.Error("keep_num_dims: the input's last dimension (shape " + conv::Str(in.shape) +
                       ") must equal the weights' input size " + std::to_string(s->depth));
    out_shape = in.shape;
    out_shape.back() = s->units;
  } else {
    if (s->batch > std::numeric_limits<int32_t>::max()) return ctx.Error("input too large");
    out_shape = {int32_t(s->batch), s->units};
  }
  if (act < 0 || act > 3)
    return ctx.Error(std::string("unsupported fused activation ") + ActivationName(act) +
                     " (FULLY_CONNECTED takes NONE, RELU, RELU_N1_TO_1 or RELU6)");
  s->hybrid = in.type == DType::kFloat32;
  if (s->hybrid) {
    s->h.asymmetric = asymmetric;
    TFG_RETURN_IF_ERROR(SetupHybrid(ctx, 1, 2, 0, s->units, act, &s->h, /*packed_weights=*/true));
    TFG_RETURN_IF_ERROR(ctx.SetOutputShape(0, out_shape));
    if (qgemm::HaveVnni())
      return EnsurePacked8(ctx, 1, s->units, s->depth, &s->packed8, &s->key, &s->packed_valid, false);
    return EnsurePacked(ctx, 1, s->units, s->depth, 0, &s->packed, &s->key, &s->packed_valid, false);
  }
  QSpec spec;
  spec.packed_weights = true;
  spec.w_channel_axis = 0;
  spec.w_zero_point_any = true;  // TFLite's int8 FULLY_CONNECTED applies filter_offset
  spec.per_tensor = ScaleProduct::kFloatThenDouble;  // GetQuantizedConvolutionMultipler
  spec.per_channel = ScaleProduct::kDouble;
  spec.check_bias_scale_u8 = true;
  spec.check_bias_scale_pt = true;
  spec.r16 = Rounding::kAway64;
  spec.r16_b32 = Rounding::kHalfUp;
  spec.i16_bias32 = true;
  TFG_RETURN_IF_ERROR(SetupQuant(ctx, spec, s->units, act, &s->q));
  TFG_RETURN_IF_ERROR(ctx.SetOutputShape(0, out_shape));
  if (UseVnni(s->q)) return EnsurePacked8(ctx, 1, s->units, s->depth, &s->packed8, &s->key, &s->packed_valid, false,
                         qgemm::KqAlign());
  if (s->q.type != DType::kInt16)
    TFG_RETURN_IF_ERROR(EnsurePacked(ctx, 1, s->units, s->depth, s->q.w_offset, &s->packed, &s->key, &s->packed_valid, false));
  return OkStatus();
}

namespace {
template <typename TI, typename TW>
void FcLoops(const QFcState& s, const TI* in, const TW* w, TI* out, ThreadPool* pool) {
  auto body = [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b)
      for (int u = 0; u < s.units; ++u) {
        int64_t acc = 0;
        const TI* x = in + b * s.depth;
        const TW* wr = w + int64_t(u) * s.depth;
        for (int k = 0; k < s.depth; ++k) acc += (int64_t(x[k]) + s.q.in_offset) * (int64_t(wr[k]) + s.q.w_offset);
        out[b * s.units + u] = OutputOf<TI>(s.q.os, s.q.type, acc, u);
      }
  };
  if (pool) gemm::ParallelRanges(pool, s.batch, 4 * gemm::NumSlots(pool), body);
  else body(0, s.batch);
}

template <typename TI>
void FcFast(const QFcState& s, const TI* in, TI* out, ThreadPool* pool) {
  const int Kp = s.packed.Kp;
  auto fill = [&](int64_t m0, int rows, int16_t* dst) {
    for (int r = 0; r < rows; ++r) qgemm::WidenRow(in + (m0 + r) * s.depth, s.depth, Kp, s.q.in_offset, dst + int64_t(r) * Kp);
  };
  const OutputStage& os = s.q.os;
  auto write = [&](int64_t m, int n0, int ncols, const int32_t* acc) { os.Row<TI>(acc, n0, ncols, out + m * s.units + n0); };
  qgemm::Fused8 f8;
  qgemm::Run(s.batch, s.packed, fill, write, pool, Fused8For(os, s.units, out, s.units, &f8));
}

void FcFast8(QFcState& s, const int8_t* in, int8_t* out, ThreadPool* pool) {
  const int lda = s.packed8.Kq * 4;
  if (s.rq8.built_for != s.packed8.gen) {
    qgemm::BuildRequant8(s.q.os, s.packed8, s.q.in_offset, &s.rq8);
    s.rq8.built_for = s.packed8.gen;
  }
  if (qgemm::UseAmxDirect(s.batch, s.packed8)) {  // A is the input itself: no copy
    qgemm::RunAmxDirect(s.batch, in, s.depth, s.packed8, s.rq8, out, s.units, pool);
    return;
  }
  auto fill = [&](int64_t m0, int rows, uint8_t* dst) {
    for (int r = 0; r < rows; ++r) qgemm::XorRow(in + (m0 + r) * s.depth, s.depth, lda, dst + int64_t(r) * lda);
  };
  auto corr = [](int64_t) { return 0; };
  auto write = [](int64_t, int, int, const int32_t*) {};
  qgemm::Run8(s.batch, s.packed8, fill, &s.rq8, out, s.units, false, corr, write, pool);
}

// Hybrid FULLY_CONNECTED: out = bias + float(acc) * (input_scale[b] * weight_scale[u]), clamped.
Status EvalHybridFc(OpContext& ctx, QFcState* s, bool ref) {
  if (s->batch == 0 || s->units == 0) return OkStatus();
  const float* x = ctx.input(0).as<float>();
  const Tensor* bt = ctx.optional_input(2);
  const float* bias = bt ? bt->as<float>() : nullptr;
  float* out = ctx.output(0).as<float>();
  HybridCommon& h = s->h;
  QuantizeBatches(x, s->batch, s->depth, h.asymmetric, &h.in);
  auto finish = [&](int64_t b, int u, int32_t acc) {
    const float v = (bias ? bias[u] : 0.f) + float(acc) * (h.in.scale[b] * h.wscale[u]);
    out[b * s->units + u] = conv::Clamp(v, h.lo, h.hi);
  };
  if (ref) {
    const int8_t* w = ctx.input(1).as<int8_t>();
    for (int64_t b = 0; b < s->batch; ++b)
      for (int u = 0; u < s->units; ++u) {
        int64_t acc = 0;
        for (int k = 0; k < s->depth; ++k)
          acc += (int64_t(h.in.q[b * s->depth + k]) - h.in.zp[b]) * int64_t(w[int64_t(u) * s->depth + k]);
        finish(b, u, int32_t(uint32_t(uint64_t(acc))));
      }
    return OkStatus();
  }
  if (qgemm::HaveVnni()) {
    TFG_RETURN_IF_ERROR(EnsurePacked8(ctx, 1, s->units, s->depth, &s->packed8, &s->key, &s->packed_valid, true));
    const int lda = s->packed8.Kq * 4;
    auto fill = [&](int64_t m0, int rows, uint8_t* dst) {
      for (int r = 0; r < rows; ++r)
        qgemm::XorRow(h.in.q.data() + (m0 + r) * s->depth, s->depth, lda, dst + int64_t(r) * lda);
    };
    auto corr = [&](int64_t m) { return -h.in.zp[m] - 128; };
    auto write = [&](int64_t m, int n0, int ncols, const int32_t* acc) {
      for (int j = 0; j < ncols; ++j) finish(m, n0 + j, acc[j]);
    };
    qgemm::Run8(s->batch, s->packed8, fill, nullptr, nullptr, 0, false, corr, write, ctx.pool());
    return OkStatus();
  }
  TFG_RETURN_IF_ERROR(EnsurePacked(ctx, 1, s->units, s->depth, 0, &s->packed, &s->key, &s->packed_valid, true));
  const int Kp = s->packed.Kp;
  auto fill = [&](int64_t m0, int rows, int16_t* dst) {
    for (int r = 0; r < rows; ++r)
      qgemm::WidenRow(h.in.q.data() + (m0 + r) * s->depth, s->depth, Kp, -h.in.zp[m0 + r], dst + int64_t(r) * Kp);
  };
  auto write = [&](int64_t m, int n0, int ncols, const int32_t* acc) {
    for (int j = 0; j < ncols; ++j) finish(m, n0 + j, acc[j]);
  };
  qgemm::Run(s->batch, s->packed, fill, write, ctx.pool());
  return OkStatus();
}
}  // namespace

Status EvalFullyConnected(OpContext& ctx, bool ref) {
  QFcState* s = ctx.node().U<QFcState>();
  if (s->hybrid) return EvalHybridFc(ctx, s, ref);
  LoadBias(ctx, 2, &s->q);
  if (s->batch == 0 || s->units == 0) return OkStatus();
  const Tensor& in = ctx.input(0);
  const Tensor& w = ctx.input(1);
  Tensor& out = ctx.output(0);
  ThreadPool* pool = ref ? nullptr : ctx.pool();
  if (ref || s->q.type == DType::kInt16) {
    switch (s->q.type) {
      case DType::kInt8: FcLoops(*s, in.as<int8_t>(), w.as<int8_t>(), out.as<int8_t>(), pool); break;
      case DType::kUInt8: FcLoops(*s, in.as<uint8_t>(), w.as<uint8_t>(), out.as<uint8_t>(), pool); break;
      case DType::kInt16: FcLoops(*s, in.as<int16_t>(), w.as<int8_t>(), out.as<int16_t>(), pool); break;
      default: return ctx.Error("unsupported type");
    }
    return OkStatus();
  }
  if (UseVnni(s->q)) {
    TFG_RETURN_IF_ERROR(EnsurePacked8(ctx, 1, s->units, s->depth, &s->packed8, &s->key, &s->packed_valid, true,
                          qgemm::KqAlign()));
    FcFast8(*s, in.as<int8_t>(), out.as<int8_t>(), pool);
    return OkStatus();
  }
  TFG_RETURN_IF_ERROR(EnsurePacked(ctx, 1, s->units, s->depth, s->q.w_offset, &s->packed, &s->key, &s->packed_valid, true));
  if (s->q.type == DType::kInt8) FcFast(*s, in.as<int8_t>(), out.as<int8_t>(), pool);
  else FcFast(*s, in.as<uint8_t>(), out.as<uint8_t>(), pool);
  return OkStatus();
}

}  // namespace qconv
}  // namespace tflite_gpu

// ======================================================================= DEPTHWISE_CONV_2D

namespace tflite_gpu {
namespace qconv {
namespace {

struct QDwState {
  QCommon q;
  bool hybrid = false;
  HybridCommon h;
  int batch = 0, in_h = 0, in_w = 0, in_c = 0, out_h = 0, out_w = 0, out_c = 0, k_h = 0, k_w = 0, mult = 1;
  int pad_t = 0, pad_l = 0, sh = 1, sw = 1, dh = 1, dw = 1;
  std::vector<int32_t> w32;  // weights + offset, [k_h * k_w][out_c]
  std::vector<int16_t> w16p;  // w32 as tap pairs for TapsPairsAvx2 (PackTapPairs), empty where unused
  std::vector<int32_t> rq_vec;  // DwFast's DwRq8 shift vectors (left, right, r1, hr; C each)
  qgemm::DwPacked8 dw8;      // the VNNI kernel's weights (UseVnniDw)
  conv::PackKey key8;
  bool dw8_valid = false;
  conv::PackKey key32;       // w32 / w16p: built for these weights (and ISA); valid across invokes
  bool w32_valid = false;    // when the weights are constant
  qgemm::Requant8 rq8;
  std::vector<int8_t> zpbuf;  // a row of the input zero point (padding taps)
};

bool UseVnniDw(const QDwState& s) {
  return qgemm::HaveVnni() && s.mult == 1 && UseVnni(s.q) && s.in_c % 8 == 0;
}

void DwFast8(OpContext& ctx, QDwState& s, const int8_t* in, int8_t* out, ThreadPool* pool) {
  const Tensor& f = ctx.input(1);
  const bool constant = ctx.IsConstantOrPersistent(f);
  conv::PackKey k{f.data, nullptr, f.shape, 8};
  if (!(constant && s.dw8_valid && s.key8 == k)) {
    qgemm::PackDw8(f.as<int8_t>(), s.k_h * s.k_w, s.out_c, &s.dw8);
    s.key8 = k;
    s.dw8_valid = constant;
  }
  const int32_t off = s.q.in_offset;
  if (s.rq8.built_for != s.dw8.gen) {
    qgemm::BuildRequantDw8(s.q.os, s.dw8, off, &s.rq8);
    s.zpbuf.assign(size_t(s.dw8.cblocks) * 64, int8_t(-off));
    s.rq8.built_for = s.dw8.gen;
  }
  const int T4 = s.dw8.groups * 4, C = s.out_c;
  const int64_t pixels = int64_t(s.batch) * s.out_h * s.out_w;
  const int8_t* zp = s.zpbuf.data();
  auto body = [&](int64_t b0, int64_t b1) {
    const int8_t* ptrs[8 * 64];
    std::vector<const int8_t*> big;
    const int8_t** pp = ptrs;
    if (T4 > 64) {
      big.resize(size_t(8) * T4);
      pp = big.data();
    }
    // Geometry in locals (the pointer stores below could alias anything read through s or the
    // captured pointers, which made the compiler reload them per tap).
    const int8_t* const src = in;
    const int8_t* const zrow = zp;
    const int KH = s.k_h, KW = s.k_w, IH = s.in_h, IW = s.in_w, OH = s.out_h, OW = s.out_w;
    const int SH = s.sh, SW = s.sw, PT = s.pad_t, PL = s.pad_l, DH = s.dh, DW = s.dw;
    const int64_t IC = s.in_c;
    const int T = KH * KW;
    int64_t toff[64];  // interior pixels: tap t at base + toff[t] (T <= 64 there)
    for (int t = 0; t < std::min(T, 64); ++t) toff[t] = (int64_t(t / KW) * DH * IW + int64_t(t % KW) * DW) * IC;
    // output coordinates of pixel b0, then stepped pixel by pixel (no divisions per pixel)
    int b = int(b0 / (int64_t(OH) * OW));
    int oy = int(b0 / OW % OH), ox = int(b0 % OW);
    for (int64_t px0 = b0; px0 < b1; px0 += 8) {
      const int n = int(std::min<int64_t>(8, b1 - px0));
      for (int p = 0; p < n; ++p, ++ox) {
        if (ox == OW) {
          ox = 0;
          if (++oy == OH) {
            oy = 0;
            ++b;
          }
        }
        const int8_t** tp = pp + p * T4;
        const int iy0 = oy * SH - PT, ix0 = ox * SW - PL;
        if (T <= 64 && iy0 >= 0 && iy0 + (KH - 1) * DH < IH && ix0 >= 0 && ix0 + (KW - 1) * DW < IW) {
          const int8_t* base = src + ((int64_t(b) * IH + iy0) * IW + ix0) * IC;
          for (int t = 0; t < T; ++t) tp[t] = base + toff[t];
        } else {
          int t = 0;
          for (int ky = 0; ky < KH; ++ky) {
            const int iy = iy0 + ky * DH;
            const bool row_in = iy >= 0 && iy < IH;
            for (int kx = 0; kx < KW; ++kx, ++t) {
              const int ix = ix0 + kx * DW;
              tp[t] = row_in && ix >= 0 && ix < IW ? src + ((int64_t(b) * IH + iy) * IW + ix) * IC : zrow;
            }
          }
        }
        for (int t = T; t < T4; ++t) tp[t] = zrow;
      }
      qgemm::DwVnni8(pp, n, s.dw8, s.rq8, out + px0 * C);
    }
  };
  const double work = double(pixels) * C * s.k_h * s.k_w;
  const int slots = pool ? gemm::NumSlots(pool) : 1;
  if (slots <= 1 || work < 300000.0) {
    body(0, pixels);
    return;
  }
  // ~3 ranges per thread, whole 8-pixel chunks
  const int64_t chunks = (pixels + 7) / 8;
  const int64_t tasks = std::min<int64_t>(chunks, 3 * slots);
  const int64_t per = (chunks + tasks - 1) / tasks * 8;
  gemm::ParallelTasks(pool, (pixels + per - 1) / per,
                      [&](int64_t t, int) { body(t * per, std::min(pixels, (t + 1) * per)); });
}

// The HalfUp output stage of the depthwise pairs kernel (TapsPairsRequantAvx2): int32 bias, multiplier
// and the shift split as RequantRowAvx2 derives it, per channel.
struct DwRq8 {
  const int32_t *bias, *mult, *left, *right, *r1, *hr;  // C each; hr: right > 0 ? -1 : 0
  int32_t zp, lo, hi;
};

// Multiplier 1, one output pixel: acc[c] = sum over its taps t inside the input of
// (ips[t][c] + off) * wps[t][c], int32 wrapping as TFLite's (the sum is taken modulo 2^32, so the
// order of the taps does not change it). The plain loop is the portable kernel; the AVX2 one keeps
// 16 channels of accumulators in registers over all the taps.
template <typename T>
void TapsPlain(const T* const* ips, const int32_t* const* wps, int ntaps, int C, int32_t off, int32_t* acc) {
  for (int c = 0; c < C; ++c) acc[c] = 0;
  for (int t = 0; t < ntaps; ++t) {
    const T* __restrict ip = ips[t];
    const int32_t* __restrict w = wps[t];
    for (int c = 0; c < C; ++c) acc[c] = int32_t(uint32_t(acc[c]) + uint32_t((int32_t(ip[c]) + off) * w[c]));
  }
}
#if TFG_X86
TFG_TARGET_AVX2_BEGIN
inline __m256i Widen8(const int8_t* p) { return _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))); }
inline __m256i Widen8(const uint8_t* p) { return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))); }
template <typename T>
void TapsAvx2(const T* const* ips, const int32_t* const* wps, int ntaps, int C, int32_t off, int32_t* acc) {
  if (C < 8) return TapsPlain(ips, wps, ntaps, C, off, acc);
  const __m256i voff = _mm256_set1_epi32(off);
  int c = 0;
  for (; c + 16 <= C; c += 16) {
    __m256i a0 = _mm256_setzero_si256(), a1 = _mm256_setzero_si256();
    for (int t = 0; t < ntaps; ++t) {
      const T* ip = ips[t] + c;
      const int32_t* wp = wps[t] + c;
      const __m256i x0 = _mm256_add_epi32(Widen8(ip), voff), x1 = _mm256_add_epi32(Widen8(ip + 8), voff);
      a0 = _mm256_add_epi32(a0, _mm256_mullo_epi32(x0, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wp))));
      a1 = _mm256_add_epi32(a1, _mm256_mullo_epi32(x1, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wp + 8))));
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + c), a0);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + c + 8), a1);
  }
  // The rest in blocks of 8, the last one ending at C (it may overlap: the same sums again).
  for (; c < C; c += 8) {
    const int c0 = std::min(c, C - 8);
    __m256i a0 = _mm256_setzero_si256();
    for (int t = 0; t < ntaps; ++t) {
      const __m256i x0 = _mm256_add_epi32(Widen8(ips[t] + c0), voff);
      a0 = _mm256_add_epi32(a0, _mm256_mullo_epi32(x0, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wps[t] + c0))));
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + c0), a0);
  }
}
// Multiplier 1, C % 16 == 0, every tap inside the input (ips[t] for all ntaps taps, in order): the
// taps two at a time by vpmaddwd -- the pair's inputs (+ offset, |x| <= 255) widened to int16 and
// interleaved by unpacklo/hi, times weight pairs packed in that order (PackTapPairs; an odd last tap
// is paired with itself and zero weights): each product pair fits int32, the sums wrap as TFLite's.
// unpacklo holds channels 0-3 and 8-11 of a 16-channel block, unpackhi 4-7 and 12-15.
template <typename T>
inline __m128i Load16(const T* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }
inline __m256i Widen16(const int8_t* p) { return _mm256_cvtepi8_epi16(Load16(p)); }
inline __m256i Widen16(const uint8_t* p) { return _mm256_cvtepu8_epi16(Load16(p)); }
// One 16-channel block from c of the pairs kernel: the sums of the pairs taps (pairs = (ntaps + 1) / 2,
// from the caller, once per pixel) of channels c..c+7 (*s0) and c+8..c+15 (*s1), in channel order. Force-inlined so both callers keep the sums in registers.
// (The AVX2 regions are GCC/Clang only: see simd.h.)
template <typename T>
__attribute__((always_inline)) inline void TapPairsBlock(const T* const* ips, const int16_t* w16p, int pairs, int ntaps,
                                                         int C, int c, __m256i off16, __m256i* s0, __m256i* s1) {
  __m256i lo = _mm256_setzero_si256(), hi = lo;
  for (int tp = 0; tp < pairs; ++tp) {
    const int t0 = 2 * tp, t1 = std::min(2 * tp + 1, ntaps - 1);
    const __m256i x0 = _mm256_add_epi16(Widen16(ips[t0] + c), off16);
    const __m256i x1 = _mm256_add_epi16(Widen16(ips[t1] + c), off16);
    const int16_t* w = w16p + (int64_t(tp) * C + c) * 2;
    lo = _mm256_add_epi32(lo, _mm256_madd_epi16(_mm256_unpacklo_epi16(x0, x1),
                                                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w))));
    hi = _mm256_add_epi32(hi, _mm256_madd_epi16(_mm256_unpackhi_epi16(x0, x1),
                                                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 16))));
  }
  *s0 = _mm256_permute2x128_si256(lo, hi, 0x20);
  *s1 = _mm256_permute2x128_si256(lo, hi, 0x31);
}
template <typename T>
void TapsPairsAvx2(const T* const* ips, const int16_t* w16p, int ntaps, int C, int32_t off, int32_t* acc) {
  const __m256i off16 = _mm256_set1_epi16(int16_t(off));
  const int pairs = (ntaps + 1) / 2;
  for (int c = 0; c < C; c += 16) {
    __m256i s0, s1;
    TapPairsBlock(ips, w16p, pairs, ntaps, C, c, off16, &s0, &s1);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + c), s0);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + c + 8), s1);
  }
}
// TapsPairsAvx2 with the HalfUp output stage applied in the registers (RequantRowAvx2's arithmetic,
// lane for lane, with the per-channel shift vectors derived once per eval: DwRq8) and the bytes
// stored at out, instead of the int32 sums through OutputStage::Row.
inline __m256i Ld32(const int32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
// 8 channels from c: RequantLanes' arithmetic with q's vectors, narrowed to 8 int16 (inside [lo, hi]).
inline __m128i DwRequant8(__m256i acc, const DwRq8& q, int c, __m256i one, __m256i round, __m256i vzp, __m256i vlo,
                          __m256i vhi) {
  const __m256i m = Ld32(q.mult + c);
  const __m256i xs = _mm256_sllv_epi32(_mm256_add_epi32(acc, Ld32(q.bias + c)), Ld32(q.left + c));
  const __m256i pe = _mm256_add_epi64(_mm256_mul_epi32(xs, m), round);
  const __m256i po = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(xs, 32), _mm256_srli_epi64(m, 32)), round);
  const __m256i h = _mm256_blend_epi32(_mm256_srli_epi64(pe, 31), _mm256_slli_epi64(_mm256_srli_epi64(po, 31), 32), 0xAA);
  const __m256i bit = _mm256_and_si256(_mm256_srav_epi32(h, Ld32(q.r1 + c)), one);
  const __m256i r = _mm256_add_epi32(_mm256_srav_epi32(h, Ld32(q.right + c)), _mm256_and_si256(bit, Ld32(q.hr + c)));
  const __m256i v = _mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi32(r, vzp), vlo), vhi);
  return _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
}
template <typename T>
void TapsPairsRequantAvx2(const T* const* ips, const int16_t* w16p, int ntaps, int C, int32_t off, const DwRq8& q,
                          T* out) {
  const __m256i off16 = _mm256_set1_epi16(int16_t(off));
  const __m256i one = _mm256_set1_epi32(1), round = _mm256_set1_epi64x(int64_t(1) << 30);
  const __m256i vzp = _mm256_set1_epi32(q.zp), vlo = _mm256_set1_epi32(q.lo), vhi = _mm256_set1_epi32(q.hi);
  const int pairs = (ntaps + 1) / 2;
  for (int c = 0; c < C; c += 16) {
    __m256i s0, s1;
    TapPairsBlock(ips, w16p, pairs, ntaps, C, c, off16, &s0, &s1);
    const __m128i w0 = DwRequant8(s0, q, c, one, round, vzp, vlo, vhi);
    const __m128i w1 = DwRequant8(s1, q, c + 8, one, round, vzp, vlo, vhi);
    const __m128i b = std::is_signed<T>::value ? _mm_packs_epi16(w0, w1) : _mm_packus_epi16(w0, w1);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + c), b);
  }
}
TFG_TARGET_END
#endif

// w32 ([ntaps][C], C % 16 == 0) as TapsPairsAvx2's weight pairs: per tap pair and 16-channel block,
// 16 int16 for unpacklo's lanes then 16 for unpackhi's, each (tap 2tp, tap 2tp + 1) per channel.
void PackTapPairs(const std::vector<int32_t>& w32, int ntaps, int C, std::vector<int16_t>* out) {
  const int pairs = (ntaps + 1) / 2;
  out->assign(size_t(pairs) * C * 2, 0);
  for (int tp = 0; tp < pairs; ++tp)
    for (int c = 0; c < C; c += 16)
      for (int v = 0; v < 2; ++v)
        for (int j = 0; j < 16; ++j) {
          const int q = j / 2, tap = 2 * tp + j % 2;
          const int ch = c + (q / 4) * 8 + v * 4 + q % 4;
          if (tap < ntaps) (*out)[(size_t(tp) * C + c) * 2 + v * 16 + j] = int16_t(w32[size_t(tap) * C + ch]);
        }
}

template <typename T>
using TapsFn = void (*)(const T* const*, const int32_t* const*, int, int, int32_t, int32_t*);
template <typename T>
TapsFn<T> ActiveTaps() {
#if TFG_X86
  if (simd::ActiveIsa() >= simd::Isa::kAvx2) return TapsAvx2<T>;
#endif
  return TapsPlain<T>;
}

template <typename TI, typename TW>
int64_t DwDot(const QDwState& s, const TI* in, const TW* f, int b, int oy, int ox, int oc) {
  int64_t acc = 0;
  const int ic = oc / s.mult;
  for (int ky = 0; ky < s.k_h; ++ky) {
    const int iy = oy * s.sh - s.pad_t + ky * s.dh;
    if (iy < 0 || iy >= s.in_h) continue;
    for (int kx = 0; kx < s.k_w; ++kx) {
      const int ix = ox * s.sw - s.pad_l + kx * s.dw;
      if (ix < 0 || ix >= s.in_w) continue;
      const int64_t xv = int64_t(in[((int64_t(b) * s.in_h + iy) * s.in_w + ix) * s.in_c + ic]) + s.q.in_offset;
      const int64_t wv = int64_t(f[(int64_t(ky) * s.k_w + kx) * s.out_c + oc]) + s.q.w_offset;
      acc += xv * wv;
    }
  }
  return acc;
}

template <typename TI, typename TW>
void DwLoops(const QDwState& s, const TI* in, const TW* f, TI* out, ThreadPool* pool) {
  const int64_t pixels = int64_t(s.batch) * s.out_h * s.out_w;
  auto body = [&](int64_t b0, int64_t b1) {
    for (int64_t px = b0; px < b1; ++px) {
      const int b = int(px / (int64_t(s.out_h) * s.out_w));
      const int oy = int(px / s.out_w % s.out_h), ox = int(px % s.out_w);
      for (int oc = 0; oc < s.out_c; ++oc)
        out[px * s.out_c + oc] = OutputOf<TI>(s.q.os, s.q.type, DwDot(s, in, f, b, oy, ox, oc), oc);
    }
  };
  if (pool) gemm::ParallelRanges(pool, pixels, 4 * gemm::NumSlots(pool), body);
  else body(0, pixels);
}

// 8-bit fast path: per output pixel an int32 accumulator row over the channels: multiplier 1
// through the taps kernel (all the pixel's taps per channel block), the generic channel loop
// otherwise.
template <typename TI, typename OffsetOf, typename Finish>
void DwRun(const QDwState& s, const TI* in, const OffsetOf& offset_of, const Finish& finish, ThreadPool* pool,
           const int16_t* w16p = nullptr, const DwRq8* rq = nullptr, TI* out = nullptr) {
  const int64_t pixels = int64_t(s.batch) * s.out_h * s.out_w;
  const int C = s.out_c;
  static const TapsFn<TI> taps_fn = ActiveTaps<TI>();
  const int ntaps_max = s.k_h * s.k_w;
  auto body = [&](int64_t b0, int64_t b1) {
    thread_local std::vector<int32_t> acc_tls;
    thread_local std::vector<const void*> ptr_tls;
    acc_tls.resize(C);
    int32_t* acc = acc_tls.data();  // one TLS lookup per range
    ptr_tls.resize(2 * size_t(ntaps_max));
    const TI** ips = reinterpret_cast<const TI**>(ptr_tls.data());
    const int32_t** wps = reinterpret_cast<const int32_t**>(ptr_tls.data() + ntaps_max);
    // output coordinates of pixel b0, then stepped pixel by pixel (no divisions per pixel)
    int b = int(b0 / (int64_t(s.out_h) * s.out_w)), oy = int(b0 / s.out_w % s.out_h), ox = int(b0 % s.out_w) - 1;
    for (int64_t px = b0; px < b1; ++px) {
      if (++ox == s.out_w) {
        ox = 0;
        if (++oy == s.out_h) {
          oy = 0;
          ++b;
        }
      }
      const int32_t off = offset_of(b);
      if (s.mult == 1) {
        int nt = 0;
        for (int ky = 0; ky < s.k_h; ++ky) {
          const int iy = oy * s.sh - s.pad_t + ky * s.dh;
          if (iy < 0 || iy >= s.in_h) continue;
          for (int kx = 0; kx < s.k_w; ++kx) {
            const int ix = ox * s.sw - s.pad_l + kx * s.dw;
            if (ix < 0 || ix >= s.in_w) continue;
            ips[nt] = in + ((int64_t(b) * s.in_h + iy) * s.in_w + ix) * s.in_c;
            wps[nt++] = s.w32.data() + (int64_t(ky) * s.k_w + kx) * C;
          }
        }
#if TFG_X86
        if (w16p && nt == ntaps_max) {  // every tap inside: the pairs kernel (weights in tap order)
          if (rq) {  // with the output stage
            TapsPairsRequantAvx2<TI>(ips, w16p, nt, C, off, *rq, out + px * C);
            continue;
          }
          TapsPairsAvx2<TI>(ips, w16p, nt, C, off, acc);
          finish(px, acc);
          continue;
        }
#endif
        taps_fn(ips, wps, nt, C, off, acc);
        finish(px, acc);
        continue;
      }
      std::fill(acc, acc + C, 0);
      for (int ky = 0; ky < s.k_h; ++ky) {
        const int iy = oy * s.sh - s.pad_t + ky * s.dh;
        if (iy < 0 || iy >= s.in_h) continue;
        for (int kx = 0; kx < s.k_w; ++kx) {
          const int ix = ox * s.sw - s.pad_l + kx * s.dw;
          if (ix < 0 || ix >= s.in_w) continue;
          const TI* ip = in + ((int64_t(b) * s.in_h + iy) * s.in_w + ix) * s.in_c;
          const int32_t* wp = s.w32.data() + (int64_t(ky) * s.k_w + kx) * C;
          for (int oc = 0; oc < C; ++oc)
            acc[oc] = int32_t(uint32_t(acc[oc]) + uint32_t((int32_t(ip[oc / s.mult]) + off) * wp[oc]));
        }
      }
      finish(px, acc);
    }
  };
  if (pool) gemm::ParallelRanges(pool, pixels, 4 * gemm::NumSlots(pool), body);
  else body(0, pixels);
}

template <typename TI>
void DwFast(QDwState& s, const TI* in, TI* out, ThreadPool* pool) {
  const int32_t off = s.q.in_offset;
  const OutputStage& os = s.q.os;
  const int C = s.out_c;
  // the pairs kernel's in-register output stage where every channel is HalfUp with an int32 bias
  DwRq8 rq;
  const bool fuse = !s.w16p.empty() && os.rounding == qgemm::Rounding::kHalfUp && os.body_end >= C &&
                    int(os.bias32.size()) >= C && int(os.shift32.size()) >= C && int(os.mult.size()) >= C;
  if (fuse) {
    s.rq_vec.resize(size_t(4) * C);
    int32_t* left = s.rq_vec.data();
    int32_t *right = left + C, *r1 = right + C, *hr = r1 + C;
    for (int c = 0; c < C; ++c) {
      const int32_t sh = os.shift32[c];
      left[c] = std::max(sh, 0);
      right[c] = std::max(-sh, 0);
      r1[c] = std::max(right[c] - 1, 0);
      hr[c] = right[c] > 0 ? -1 : 0;
    }
    rq = DwRq8{os.bias32.data(), os.mult.data(), left, right, r1, hr, os.zp, os.lo, os.hi};
  }
  DwRun(s, in, [off](int) { return off; },
        [&](int64_t px, const int32_t* acc) { os.Row<TI>(acc, 0, C, out + px * C); }, pool,
        s.w16p.empty() ? nullptr : s.w16p.data(), fuse ? &rq : nullptr, out);
}

void FillW32(const Tensor& f, int32_t w_offset, std::vector<int32_t>* w32) {
  const int64_t nw = f.num_elements();
  w32->resize(nw);
  if (f.type == DType::kUInt8)
    for (int64_t i = 0; i < nw; ++i) (*w32)[i] = int32_t(f.as<uint8_t>()[i]) + w_offset;
  else
    for (int64_t i = 0; i < nw; ++i) (*w32)[i] = int32_t(f.as<int8_t>()[i]) + w_offset;
}

// Hybrid DEPTHWISE_CONV_2D: out = float(acc) * weight_scale[c] * input_scale[b] + bias[c], clamped.
Status EvalHybridDw(OpContext& ctx, QDwState* s, bool ref) {
  if (int64_t(s->batch) * s->out_h * s->out_w * s->out_c == 0) return OkStatus();
  const float* x = ctx.input(0).as<float>();
  const Tensor* bt = ctx.optional_input(2);
  const float* bias = bt ? bt->as<float>() : nullptr;
  float* out = ctx.output(0).as<float>();
  HybridCommon& h = s->h;
  QuantizeBatches(x, s->batch, int64_t(s->in_h) * s->in_w * s->in_c, h.asymmetric, &h.in);
  const int64_t hw = int64_t(s->out_h) * s->out_w;
  auto finish = [&](int64_t px, const int32_t* acc) {
    const float sb = h.in.scale[px / hw];
    float* o = out + px * s->out_c;
    for (int c = 0; c < s->out_c; ++c)
      o[c] = conv::Clamp(float(acc[c]) * h.wscale[c] * sb + (bias ? bias[c] : 0.f), h.lo, h.hi);
  };
  if (ref) {
    const int8_t* w = ctx.input(1).as<int8_t>();
    QDwState t = *s;
    std::vector<int32_t> acc(s->out_c);
    for (int64_t px = 0; px < int64_t(s->batch) * hw; ++px) {
      const int b = int(px / hw), oy = int(px / s->out_w % s->out_h), ox = int(px % s->out_w);
      t.q.in_offset = -h.in.zp[b];
      t.q.w_offset = 0;
      for (int c = 0; c < s->out_c; ++c) acc[c] = int32_t(uint32_t(uint64_t(DwDot(t, h.in.q.data(), w, b, oy, ox, c))));
      finish(px, acc.data());
    }
    return OkStatus();
  }
  FillW32(ctx.input(1), 0, &s->w32);
  DwRun(*s, h.in.q.data(), [&](int b) { return -h.in.zp[b]; }, finish, ctx.pool());
  return OkStatus();
}

}  // namespace

Status PrepareDepthwise(OpContext& ctx, const conv::WindowParams& p) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 3, 1, 1));
  const Tensor& in = ctx.input(0);
  const Tensor& f = ctx.input(1);
  TFG_RETURN_IF_ERROR(conv::CheckRank(ctx, in, 4, "input"));
  TFG_RETURN_IF_ERROR(conv::CheckRank(ctx, f, 4, "filter"));
  TFG_RETURN_IF_ERROR(conv::CheckWindow(ctx, p.padding, p.stride_w, p.stride_h, p.dil_w, p.dil_h));
  if (!ctx.node().user_data) ctx.node().user_data = std::make_shared<QDwState>();
  QDwState* s = ctx.node().U<QDwState>();
  s->rq8.built_for = 0;
  if (f.shape[0] != 1) return ctx.Error("filter shape " + conv::Str(f.shape) + " must have 1 as its first dimension");
  s->batch = in.shape[0];
  s->in_h = in.shape[1];
  s->in_w = in.shape[2];
  s->in_c = in.shape[3];
  s->k_h = f.shape[1];
  s->k_w = f.shape[2];
  s->out_c = f.shape[3];
  if (s->k_h <= 0 || s->k_w <= 0) return ctx.Error("filter shape " + conv::Str(f.shape) + " has an empty spatial dimension");
  if (s->in_c <= 0 || s->out_c % s->in_c != 0)
    return ctx.Error("filter channels (" + std::to_string(s->out_c) + ") must be a multiple of the input channels (" +
                     std::to_string(s->in_c) + ")");
  TFG_RETURN_IF_ERROR(conv::CheckSize(ctx, int64_t(s->k_h) * s->k_w * s->out_c, "filter size"));
  s->mult = s->out_c / s->in_c;
  s->sh = p.stride_h;
  s->sw = p.stride_w;
  s->dh = p.dil_h;
  s->dw = p.dil_w;
  conv::WindowOutput(p.padding, s->in_h, s->in_w, s->k_h, s->k_w, p.stride_h, p.stride_w, p.dil_h, p.dil_w, &s->out_h,
                     &s->out_w, &s->pad_t, &s->pad_l);
  // INT4 weights (DEPTHWISE_CONV_2D v7) with INT8 activations run the INT8-weight kernel. LiteRT 2.3
  // refuses INT2 and hybrid INT4; with INT16 activations it runs INT4 but its results are not those
  // of the INT4 values (they differ from the same values as INT8 weights), so that is refused too.
  if (f.type == DType::kInt2 || (f.type == DType::kInt4 && in.type != DType::kInt8))
    return ctx.Error(std::string("input type ") + DTypeName(in.type) + " with " + DTypeName(f.type) +
                     " weights is not supported (DEPTHWISE_CONV_2D takes INT4 weights with INT8 input only)");
  s->hybrid = in.type == DType::kFloat32;
  if (s->hybrid) {
    TFG_RETURN_IF_ERROR(SetupHybrid(ctx, 1, 2, 3, s->out_c, p.act, &s->h));
    // TFLite's hybrid depthwise (EvalHybridPerChannel) quantizes the input asymmetrically.
    s->h.asymmetric = true;
    return ctx.SetOutputShape(0, {s->batch, s->out_h, s->out_w, s->out_c});
  }
  QSpec spec;
  spec.packed_weights = true;  // DEPTHWISE_CONV_2D v7: INT4 weights (LiteRT 2.3: int8, int16x8; not hybrid)
  spec.w_channel_axis = 3;
  spec.per_tensor = in.type == DType::kUInt8 ? ScaleProduct::kFloatThenDouble : ScaleProduct::kDouble;
  spec.check_bias_scale_u8 = true;
  // LiteRT's optimized depthwise kernels: int8 output stage rounds HalfUp, uint8 Double (measured).
  spec.r8 = in.type == DType::kUInt8 ? Rounding::kDouble : Rounding::kHalfUp;
  TFG_RETURN_IF_ERROR(SetupQuant(ctx, spec, s->out_c, p.act, &s->q));
  // int8: the output stage rounds HalfUp over whole 8-channel chunks of each pixel and Double on the
  // remaining channels (TFLite's NEON-on-SSE chunks then its scalar tail; measured: i8_pc_same_b2, C=20).
  if (in.type == DType::kInt8) s->q.os.body_end = s->out_c / 8 * 8;
  return ctx.SetOutputShape(0, {s->batch, s->out_h, s->out_w, s->out_c});
}

Status EvalDepthwise(OpContext& ctx, bool ref) {
  QDwState* s = ctx.node().U<QDwState>();
  if (s->hybrid) return EvalHybridDw(ctx, s, ref);
  LoadBias(ctx, 2, &s->q);
  const Tensor& in = ctx.input(0);
  const Tensor& f = ctx.input(1);
  Tensor& out = ctx.output(0);
  if (int64_t(s->batch) * s->out_h * s->out_w * s->out_c == 0) return OkStatus();
  ThreadPool* pool = ref ? nullptr : ctx.pool();
  if (ref || s->q.type == DType::kInt16) {
    switch (s->q.type) {
      case DType::kInt8: DwLoops(*s, in.as<int8_t>(), f.as<int8_t>(), out.as<int8_t>(), pool); break;
      case DType::kUInt8: DwLoops(*s, in.as<uint8_t>(), f.as<uint8_t>(), out.as<uint8_t>(), pool); break;
      case DType::kInt16: DwLoops(*s, in.as<int16_t>(), f.as<int8_t>(), out.as<int16_t>(), pool); break;
      default: return ctx.Error("unsupported type");
    }
    return OkStatus();
  }
  if (s->q.type == DType::kInt8 && UseVnniDw(*s)) {
    DwFast8(ctx, *s, in.as<int8_t>(), out.as<int8_t>(), pool);
    return OkStatus();
  }
  // The offset weights (and their tap pairs) once for constant weights, as DwFast8 packs its own.
  const conv::PackKey k{f.data, nullptr, f.shape, int64_t(simd::ActiveIsa())};
  if (!(s->w32_valid && s->key32 == k)) {
    FillW32(f, s->q.w_offset, &s->w32);
    s->w16p.clear();
    if (s->mult == 1 && s->out_c % 16 == 0 && simd::ActiveIsa() >= simd::Isa::kAvx2)
      PackTapPairs(s->w32, s->k_h * s->k_w, s->out_c, &s->w16p);
    s->key32 = k;
    s->w32_valid = ctx.IsConstantOrPersistent(f);
  }
  if (s->q.type == DType::kInt8) DwFast(*s, in.as<int8_t>(), out.as<int8_t>(), pool);
  else DwFast(*s, in.as<uint8_t>(), out.as<uint8_t>(), pool);
  return OkStatus();
}

}  // namespace qconv
}  // namespace tflite_gpu

// ======================================================================= TRANSPOSE_CONV
//
// out[b, oy, ox, oc] = sum over (iy, ix, ky, kx, ic) with oy = iy * sh - pad_t + ky (and likewise x)
// of (x + in_offset) * w[oc, ky, kx, ic]: for each output pixel a gather of the input taps that
// reach it, so the fast path is the conv GEMM (qgemm) over the same OHWI weights. Rounding: int8
// HalfUp on whole 8-channel chunks and Double on the remaining channels; uint8 HalfUp except the
// last (n % 16) values of the flattened output (Double); int16x8
// Reduced64 (LiteRT builtin, measured by the *ties cases).

namespace tflite_gpu {
namespace qconv {
namespace {

struct QTcState {
  QCommon q;
  int64_t flat_tail_from = std::numeric_limits<int64_t>::max();  // uint8: Double from this flat index on
  TConvGeom g{};
  qgemm::PackedB packed;
  conv::PackKey key;
  bool packed_valid = false;
};

// Input pixel feeding output coordinate o through kernel tap k, or -1.
inline int TcSource(int o, int k, int pad, int stride, int in) {
  const int t = o + pad - k;
  if (t < 0 || t % stride != 0) return -1;
  const int i = t / stride;
  return i < in ? i : -1;
}

template <typename TI, typename TW>
void TcLoops(const QTcState& s, const TI* in, const TW* w, TI* out, ThreadPool* pool) {
  const TConvGeom& g = s.g;
  const int64_t pixels = int64_t(g.batch) * g.out_h * g.out_w;
  auto body = [&](int64_t p0, int64_t p1) {
    for (int64_t px = p0; px < p1; ++px) {
      const int b = int(px / (int64_t(g.out_h) * g.out_w)), oy = int(px / g.out_w % g.out_h), ox = int(px % g.out_w);
      for (int oc = 0; oc < g.out_c; ++oc) {
        int64_t acc = 0;
        for (int ky = 0; ky < g.k_h; ++ky) {
          const int iy = TcSource(oy, ky, g.pad_t, g.sh, g.in_h);
          if (iy < 0) continue;
          for (int kx = 0; kx < g.k_w; ++kx) {
            const int ix = TcSource(ox, kx, g.pad_l, g.sw, g.in_w);
            if (ix < 0) continue;
            const TI* ip = in + ((int64_t(b) * g.in_h + iy) * g.in_w + ix) * g.in_c;
            const TW* wp = w + ((int64_t(oc) * g.k_h + ky) * g.k_w + kx) * g.in_c;
            for (int ic = 0; ic < g.in_c; ++ic) acc += (int64_t(ip[ic]) + s.q.in_offset) * (int64_t(wp[ic]) + s.q.w_offset);
          }
        }
        const int64_t idx = px * g.out_c + oc;
        out[idx] = idx >= s.flat_tail_from ? s.q.os.ApplyWith<TI>(Rounding::kDouble, int32_t(uint32_t(uint64_t(acc))), oc)
                                           : OutputOf<TI>(s.q.os, s.q.type, acc, oc);
      }
    }
  };
  if (pool) gemm::ParallelRanges(pool, pixels, 4 * gemm::NumSlots(pool), body);
  else body(0, pixels);
}

template <typename TI>
void TcFast(const QTcState& s, const TI* in, TI* out, ThreadPool* pool) {
  const TConvGeom& g = s.g;
  const int K = g.k_h * g.k_w * g.in_c, Kp = s.packed.Kp;
  const int64_t hw = int64_t(g.out_h) * g.out_w;
  const int32_t off = s.q.in_offset;
  auto fill = [&](int64_t m0, int rows, int16_t* dst) {
    for (int r = 0; r < rows; ++r) {
      const int64_t m = m0 + r;
      int16_t* d = dst + int64_t(r) * Kp;
      const int b = int(m / hw), oy = int(m / g.out_w % g.out_h), ox = int(m % g.out_w);
      int16_t* dp = d;
      for (int ky = 0; ky < g.k_h; ++ky) {
        const int iy = TcSource(oy, ky, g.pad_t, g.sh, g.in_h);
        for (int kx = 0; kx < g.k_w; ++kx, dp += g.in_c) {
          const int ix = iy < 0 ? -1 : TcSource(ox, kx, g.pad_l, g.sw, g.in_w);
          if (ix < 0) {
            std::memset(dp, 0, sizeof(int16_t) * g.in_c);
            continue;
          }
          const TI* ip = in + ((int64_t(b) * g.in_h + iy) * g.in_w + ix) * g.in_c;
          for (int c = 0; c < g.in_c; ++c) dp[c] = int16_t(int32_t(ip[c]) + off);
        }
      }
      for (int k = K; k < Kp; ++k) d[k] = 0;
    }
  };
  const OutputStage& os = s.q.os;
  const int64_t tail = s.flat_tail_from;
  auto write = [&](int64_t m, int n0, int ncols, const int32_t* acc) {
    TI* o = out + m * g.out_c + n0;
    os.Row<TI>(acc, n0, ncols, o);
    for (int j = 0; j < ncols; ++j)
      if (m * g.out_c + n0 + j >= tail) o[j] = os.ApplyWith<TI>(Rounding::kDouble, acc[j], n0 + j);
  };
  qgemm::Run(int64_t(g.batch) * hw, s.packed, fill, write, pool);
}

}  // namespace

Status PrepareTransposeConv(OpContext& ctx, const TConvGeom& g, int act) {
  if (!ctx.node().user_data) ctx.node().user_data = std::make_shared<QTcState>();
  QTcState* s = ctx.node().U<QTcState>();
  s->g = g;
  const Tensor& in = ctx.input(2);
  QSpec spec;
  spec.in_index = 2;
  spec.w_index = 1;
  spec.b_index = 3;
  spec.w_channel_axis = 0;
  spec.per_tensor = in.type == DType::kUInt8 ? ScaleProduct::kFloatThenDouble : ScaleProduct::kDouble;
  spec.check_bias_scale_u8 = true;
  TFG_RETURN_IF_ERROR(SetupQuant(ctx, spec, g.out_c, act, &s->q));
  // int8: TFLite's output stage (optimized_ops::Quantize) rounds HalfUp on 8-channel NEON chunks and
  // Double on the remaining channels, as DEPTHWISE_CONV_2D (measured: i8_pt_valid_s1 with 5 channels).
  if (in.type == DType::kInt8) s->q.os.body_end = g.out_c / 8 * 8;
  // uint8: HalfUp over the flattened output in 16-value NEON blocks, Double on the last n % 16 values
  // (measured: u8_ties_tail, where only the last pixel's values round as Double).
  const int64_t total = int64_t(g.batch) * g.out_h * g.out_w * g.out_c;
  s->flat_tail_from = in.type == DType::kUInt8 ? total / 16 * 16 : std::numeric_limits<int64_t>::max();
  if (s->q.type != DType::kInt16)
    TFG_RETURN_IF_ERROR(EnsurePacked(ctx, 1, g.out_c, g.k_h * g.k_w * g.in_c, s->q.w_offset, &s->packed, &s->key,
                                     &s->packed_valid, false));
  return OkStatus();
}

Status EvalTransposeConv(OpContext& ctx, bool ref) {
  QTcState* s = ctx.node().U<QTcState>();
  LoadBias(ctx, 3, &s->q);
  const TConvGeom& g = s->g;
  if (int64_t(g.batch) * g.out_h * g.out_w * g.out_c == 0) return OkStatus();
  const Tensor& in = ctx.input(2);
  const Tensor& w = ctx.input(1);
  Tensor& out = ctx.output(0);
  ThreadPool* pool = ref ? nullptr : ctx.pool();
  if (ref || s->q.type == DType::kInt16) {
    switch (s->q.type) {
      case DType::kInt8: TcLoops(*s, in.as<int8_t>(), w.as<int8_t>(), out.as<int8_t>(), pool); break;
      case DType::kUInt8: TcLoops(*s, in.as<uint8_t>(), w.as<uint8_t>(), out.as<uint8_t>(), pool); break;
      case DType::kInt16: TcLoops(*s, in.as<int16_t>(), w.as<int8_t>(), out.as<int16_t>(), pool); break;
      default: return ctx.Error("unsupported type");
    }
    return OkStatus();
  }
  TFG_RETURN_IF_ERROR(EnsurePacked(ctx, 1, g.out_c, g.k_h * g.k_w * g.in_c, s->q.w_offset, &s->packed, &s->key,
                                   &s->packed_valid, true));
  if (s->q.type == DType::kInt8) TcFast(*s, in.as<int8_t>(), out.as<int8_t>(), pool);
  else TcFast(*s, in.as<uint8_t>(), out.as<uint8_t>(), pool);
  return OkStatus();
}

}  // namespace qconv
}  // namespace tflite_gpu

// ======================================================================= BATCH_MATMUL
//
// int8 (per-tensor, both zero points applied) and int16 (zero points 0). Multiplier formed in float
// (lhs_scale * rhs_scale / out_scale, as TFLite's batch_matmul.cc). Rounding (LiteRT builtin,
// measured): int8 Double, int16 Reduced64. No fused activation: the output type's range.
//
// Hybrid (FLOAT32 lhs, INT8 rhs, FLOAT32 output), as TFLite's EvalHybrid + reference_ops::BatchMatMul
// (its only kernel: builtin = reference): every lhs row (K values; adj_x rows are the transposed
// lhs's) is quantized on the fly by quant::QuantizeFloatRow, symmetric or with
// asymmetric_quantize_inputs; rhs weights per-tensor or per-channel along the N axis, zero point 0
// (TFLite reads the raw int8 values: a zero point would be ignored there, so it is refused). Per
// element, in TFLite's arithmetic: total = sum_k q[m,k] * w[n,k] in int32, then
// t = int32(float(total) - float(row_sum[n]) * float(input_zp)) (its float subtraction, truncated),
// out = (input_scale * weight_scale[n]) * float(t). TFLite computes the weight row sums once
// (first invoke); for a non-constant rhs we recompute them every invoke (LiteRT's stale sums
// differ from ours on later invokes with asymmetric inputs only). Fast kernel: the weights packed
// for qgemm once (constant rhs), each lhs batch's quantized rows run as (q - zp) in the int16 GEMM
// and total is recovered exactly as acc + zp * row_sum; reference: plain loops.

namespace tflite_gpu {
namespace qconv {
namespace {

struct QBmmState {
  QCommon q;
  std::vector<qgemm::PackedB> packed;  // per rhs batch (8-bit)
  conv::PackKey key;
  bool packed_valid = false;
  // hybrid
  bool hybrid = false, asymmetric = false;
  std::vector<float> wscale;       // per N
  std::vector<int32_t> row_sums;   // per rhs batch x N
  std::vector<float> lhs_rows;     // adj_x: the transposed lhs ([batches, M, K])
  HybridIn in;                     // quantized lhs rows, per (lhs batch, m)
};



template <typename T>
void PackRhsQ(const BmmGeom& g, const T* rhs, int32_t off, std::vector<qgemm::PackedB>* out) {
  out->resize(g.rhs_batches);
  const int64_t mat = int64_t(g.K) * g.N;
  for (int64_t rb = 0; rb < g.rhs_batches; ++rb) {
    if (g.adj_y) qgemm::PackB(g.N, g.K, rhs + rb * mat, g.K, 1, off, &(*out)[rb]);  // rhs [N, K]
    else qgemm::PackB(g.N, g.K, rhs + rb * mat, 1, g.N, off, &(*out)[rb]);           // rhs [K, N]
  }
}

template <typename T>
void BmmLoops(const BmmGeom& g, const QBmmState& s, const T* lhs, const T* rhs, T* out, ThreadPool* pool) {
  const int M = g.M, N = g.N, K = g.K;
  const int64_t nout = int64_t(g.lhs_of->size());
  auto body = [&](int64_t o0, int64_t o1) {
    for (int64_t ob = o0; ob < o1; ++ob) {
      const T* a = lhs + (*g.lhs_of)[ob] * int64_t(M) * K;
      const T* b = rhs + (*g.rhs_of)[ob] * int64_t(K) * N;
      T* o = out + ob * int64_t(M) * N;
      for (int m = 0; m < M; ++m)
        for (int n = 0; n < N; ++n) {
          int64_t acc = 0;
          for (int k = 0; k < K; ++k) {
            const int64_t av = int64_t(g.adj_x ? a[int64_t(k) * M + m] : a[int64_t(m) * K + k]) + s.q.in_offset;
            const int64_t bv = int64_t(g.adj_y ? b[int64_t(n) * K + k] : b[int64_t(k) * N + n]) + s.q.w_offset;
            acc += av * bv;
          }
          o[int64_t(m) * N + n] = OutputOf<T>(s.q.os, s.q.type, acc, 0);
        }
    }
  };
  if (pool) gemm::ParallelRanges(pool, nout, 4 * gemm::NumSlots(pool), body);
  else body(0, nout);
}

template <typename T>
void BmmFast(const BmmGeom& g, const QBmmState& s, const T* lhs, T* out, ThreadPool* pool) {
  const int M = g.M, N = g.N, K = g.K;
  const int64_t nout = int64_t(g.lhs_of->size());
  const OutputStage& os = s.q.os;
  for (int64_t ob = 0; ob < nout; ++ob) {
    const qgemm::PackedB& B = s.packed[(*g.rhs_of)[ob]];
    const T* a = lhs + (*g.lhs_of)[ob] * int64_t(M) * K;
    T* o = out + ob * int64_t(M) * N;
    const int Kp = B.Kp;
    auto fill = [&](int64_t m0, int rows, int16_t* dst) {
      for (int r = 0; r < rows; ++r) {
        int16_t* d = dst + int64_t(r) * Kp;
        const int64_t m = m0 + r;
        if (g.adj_x) {
          for (int k = 0; k < K; ++k) d[k] = int16_t(int32_t(a[int64_t(k) * M + m]) + s.q.in_offset);
          for (int k = K; k < Kp; ++k) d[k] = 0;
        } else {
          qgemm::WidenRow(a + m * K, K, Kp, s.q.in_offset, d);
        }
      }
    };
    auto write = [&](int64_t m, int n0, int ncols, const int32_t* acc) {
      for (int j = 0; j < ncols; ++j) o[m * N + n0 + j] = os.Apply32<T>(acc[j], 0);
    };
    qgemm::Run(M, B, fill, write, pool);
  }
}

// The rhs (weights) viewed as [N, K] per rhs batch: element (rb, n, k).
inline int64_t RhsIndex(const BmmGeom& g, int64_t rb, int n, int k) {
  return rb * int64_t(g.K) * g.N + (g.adj_y ? int64_t(n) * g.K + k : int64_t(k) * g.N + n);
}

void HybridRowSums(const BmmGeom& g, const int8_t* w, QBmmState* s) {
  s->row_sums.assign(size_t(g.rhs_batches) * g.N, 0);
  for (int64_t rb = 0; rb < g.rhs_batches; ++rb)
    for (int n = 0; n < g.N; ++n) {
      int32_t sum = 0;
      for (int k = 0; k < g.K; ++k) sum += w[RhsIndex(g, rb, n, k)];
      s->row_sums[size_t(rb * g.N + n)] = sum;
    }
}

// TFLite's per-element finish: the offset correction in float, truncated, then scaled.
inline float HybridOut(int32_t total, int32_t row_sum, int32_t zp, float in_scale, float w_scale) {
  const int32_t t = int32_t(float(total) - float(row_sum) * float(zp));
  return (in_scale * w_scale) * float(t);
}

Status PrepareHybridBmm(OpContext& ctx, const BmmGeom& g, QBmmState* s) {
  const Tensor& rhs = ctx.input(1);
  const Tensor& out = ctx.output(0);
  if (rhs.type != DType::kInt8)
    return ctx.Error(std::string("FLOAT32 lhs with ") + DTypeName(rhs.type) +
                     " rhs is not supported (hybrid BATCH_MATMUL takes an INT8 rhs)");
  if (out.type != DType::kFloat32)
    return ctx.Error(std::string("output has type ") + DTypeName(out.type) +
                     "; hybrid BATCH_MATMUL (FLOAT32 lhs, INT8 rhs) produces FLOAT32");
  QuantRule wr;
  wr.allow_per_channel = true;
  wr.channel_axis = int(rhs.shape.size()) - (g.adj_y ? 2 : 1);  // the N axis
  wr.zero_point_zero = true;
  TensorQuant wq;
  TFG_RETURN_IF_ERROR(quant::ReadQuant(ctx, rhs, "rhs", wr, &wq));
  s->hybrid = true;
  s->asymmetric = g.asymmetric_quantize_inputs;
  s->wscale.resize(size_t(g.N));
  for (int n = 0; n < g.N; ++n) s->wscale[size_t(n)] = wq.Scale(size_t(n));
  if (ctx.IsConstantOrPersistent(rhs)) {
    conv::PackKey key{rhs.data, nullptr, rhs.shape, g.adj_y ? 1 : 0};
    if (!s->packed_valid || !(s->key == key)) {
      PackRhsQ(g, rhs.as<int8_t>(), 0, &s->packed);
      HybridRowSums(g, rhs.as<int8_t>(), s);
      s->key = key;
      s->packed_valid = true;
    }
  } else {
    s->packed_valid = false;
  }
  return OkStatus();
}

Status EvalHybridBmm(OpContext& ctx, const BmmGeom& g, QBmmState* s, bool ref) {
  const Tensor& lhs = ctx.input(0);
  const int8_t* w = ctx.input(1).as<int8_t>();
  float* out = ctx.output(0).as<float>();
  const int M = g.M, N = g.N, K = g.K;
  const int64_t lhs_batches = lhs.num_elements() / std::max<int64_t>(1, int64_t(M) * K);
  const float* rows = lhs.as<float>();
  if (g.adj_x) {  // lhs batch [K, M] -> [M, K]
    s->lhs_rows.resize(size_t(lhs_batches * M * K));
    for (int64_t b = 0; b < lhs_batches; ++b)
      for (int m = 0; m < M; ++m)
        for (int k = 0; k < K; ++k)
          s->lhs_rows[size_t((b * M + m) * K + k)] = rows[(b * K + k) * M + m];
    rows = s->lhs_rows.data();
  }
  QuantizeBatches(rows, lhs_batches * M, K, s->asymmetric, &s->in);
  if (ref || !s->packed_valid) HybridRowSums(g, w, s);
  const int64_t nout = int64_t(g.lhs_of->size());
  if (ref) {
    for (int64_t ob = 0; ob < nout; ++ob) {
      const int64_t lb = (*g.lhs_of)[ob], rb = (*g.rhs_of)[ob];
      for (int m = 0; m < M; ++m) {
        const int64_t row = lb * M + m;
        const int8_t* q = s->in.q.data() + row * K;
        for (int n = 0; n < N; ++n) {
          int32_t total = 0;
          for (int k = 0; k < K; ++k) total += int32_t(q[k]) * int32_t(w[RhsIndex(g, rb, n, k)]);
          out[(ob * M + m) * N + n] = HybridOut(total, s->row_sums[size_t(rb * N + n)], s->in.zp[size_t(row)],
                                                s->in.scale[size_t(row)], s->wscale[size_t(n)]);
        }
      }
    }
    return OkStatus();
  }
  if (!s->packed_valid) PackRhsQ(g, w, 0, &s->packed);
  for (int64_t ob = 0; ob < nout; ++ob) {
    const int64_t lb = (*g.lhs_of)[ob], rb = (*g.rhs_of)[ob];
    const qgemm::PackedB& B = s->packed[size_t(rb)];
    const int Kp = B.Kp;
    auto fill = [&](int64_t m0, int nrows, int16_t* dst) {
      for (int r = 0; r < nrows; ++r) {
        const int64_t row = lb * M + m0 + r;
        qgemm::WidenRow(s->in.q.data() + row * K, K, Kp, -s->in.zp[size_t(row)], dst + int64_t(r) * Kp);
      }
    };
    auto write = [&](int64_t m, int n0, int ncols, const int32_t* acc) {
      const int64_t row = lb * M + m;
      const int32_t zp = s->in.zp[size_t(row)];
      const float sc = s->in.scale[size_t(row)];
      for (int j = 0; j < ncols; ++j) {
        const int n = n0 + j;
        const int32_t rs = s->row_sums[size_t(rb * N + n)];
        const int32_t total = int32_t(uint32_t(acc[j]) + uint32_t(zp) * uint32_t(rs));  // sum of q * w
        out[(ob * M + m) * N + n] = HybridOut(total, rs, zp, sc, s->wscale[size_t(n)]);
      }
    };
    qgemm::Run(M, B, fill, write, ctx.pool());
  }
  return OkStatus();
}

}  // namespace

Status PrepareBatchMatMul(OpContext& ctx, const BmmGeom& g, std::shared_ptr<void>* qstate) {
  if (!*qstate) *qstate = std::make_shared<QBmmState>();
  QBmmState* s = static_cast<QBmmState*>(qstate->get());
  const Tensor& lhs = ctx.input(0);
  if (lhs.type == DType::kFloat32) return PrepareHybridBmm(ctx, g, s);
  if (lhs.type == DType::kUInt8)
    return ctx.Error("UINT8 BATCH_MATMUL is not supported (TFLite has no uint8 kernel for it)");
  QSpec spec;
  spec.b_index = 99;  // no bias input
  spec.w_per_channel = false;
  spec.w_zero_point_any = true;
  spec.i16_w16 = true;
  spec.per_tensor = ScaleProduct::kFloat;
  spec.r8 = Rounding::kDouble;
  spec.r16 = spec.r16_b32 = Rounding::kReduced64;
  TFG_RETURN_IF_ERROR(SetupQuant(ctx, spec, 1, /*act=*/0, &s->q));
  s->q.os.bias32.assign(1, 0);
  s->q.os.shift32.assign(s->q.os.shift.begin(), s->q.os.shift.end());
  const Tensor& rhs = ctx.input(1);
  if (s->q.type == DType::kInt8 && ctx.IsConstantOrPersistent(rhs)) {
    conv::PackKey key{rhs.data, nullptr, rhs.shape, g.adj_y ? 1 : 0};
    if (!s->packed_valid || !(s->key == key)) {
      PackRhsQ(g, rhs.as<int8_t>(), s->q.w_offset, &s->packed);
      s->key = key;
      s->packed_valid = true;
    }
  } else {
    s->packed_valid = false;
  }
  return OkStatus();
}

Status EvalBatchMatMul(OpContext& ctx, const BmmGeom& g, std::shared_ptr<void>* qstate, bool ref) {
  QBmmState* s = static_cast<QBmmState*>(qstate->get());
  if (g.lhs_of->empty() || g.M == 0 || g.N == 0) return OkStatus();
  if (s->hybrid) return EvalHybridBmm(ctx, g, s, ref);
  ThreadPool* pool = ref ? nullptr : ctx.pool();
  const Tensor& lhs = ctx.input(0);
  const Tensor& rhs = ctx.input(1);
  Tensor& out = ctx.output(0);
  if (ref || s->q.type == DType::kInt16) {
    if (s->q.type == DType::kInt16) BmmLoops(g, *s, lhs.as<int16_t>(), rhs.as<int16_t>(), out.as<int16_t>(), pool);
    else BmmLoops(g, *s, lhs.as<int8_t>(), rhs.as<int8_t>(), out.as<int8_t>(), pool);
    return OkStatus();
  }
  if (!s->packed_valid) PackRhsQ(g, rhs.as<int8_t>(), s->q.w_offset, &s->packed);
  BmmFast(g, *s, lhs.as<int8_t>(), out.as<int8_t>(), pool);
  return OkStatus();
}

}  // namespace qconv
}  // namespace tflite_gpu
