// QUANTIZE and DEQUANTIZE, as TensorFlow Lite's kernels.
//
// DEQUANTIZE: INT8 / UINT8 and the packed INT4 / UINT4 / INT2 (held unpacked, one byte an element;
//   per-tensor or per-channel), INT16 (per-tensor, zero point 0) and FLOAT16 -> FLOAT32; out = (q - zero_point) * scale, rounded once to float. Folded at
//   allocation when the input is constant (fp16 / int8 weights).
// QUANTIZE:
//   * FLOAT32 -> INT8 / UINT8 / INT16 (per-tensor or per-channel) and INT4 / UINT4 (per-tensor; held
//     unpacked, clamped to [-8, 7] / [0, 15]; TFLite quantizes these with its reference rule below
//     for every element, no vector body). TFLite's reference rule is
//       q = clamp(int32(round_half_away(x / scale)) + zero_point).
//     TFLite's optimized per-tensor kernel (the one its builtin resolver runs, NEON or NEON_2_SSE
//     on x86) differs in its vector body: the first floor(n / 8) * 8 elements use
//     round_half_even(x * (1 / scale)) in float; the remaining tail round_half_away(x / scale) with
//     the division in double. We reproduce both, so results match TFLite bit for bit (they differ
//     from the reference rule only at ties and where the last ulp of x / scale differs).
//     Per-channel uses the reference rule (float division) everywhere. A rounded value outside the int32 range (and NaN) converts to INT32_MIN,
//     as TFLite does on x86 (cvtps2dq / cvttss2si);
//   * requantization INT8/UINT8 -> INT8/UINT8/INT16, INT16 -> INT8/INT16/INT32,
//     INT32 -> INT8/INT16 (per-tensor): TFLite's fixed-point multiplier of in_scale / out_scale
//     (QuantizeMultiplier + MultiplyByQuantizedMultiplier, double rounding, ties away from zero).
//     For INT8/UINT8 -> INT8/UINT8 TFLite's vector body (the first floor(n / 16) * 16 elements)
//     rounds both steps half up (vqrdmulh + vrshl); reproduced likewise.
#include "ops/elementwise/ew_common.h"
#include "ops/quant_common.h"

namespace tflite_gpu {
namespace {

using quant::MultiplyByQuantizedMultiplier;
using quant::QuantizeMultiplier;
using quant::TypeRange;
// TFLite's NEON MultiplyByQuantizedMultiplier4Rows (vqrdmulh + vrshl) is quant's HalfUp variant.
using quant::MultiplyByQuantizedMultiplierHalfUp;

// Per-tensor or per-channel affine parameters of one tensor laid out as [outer, channels, inner].
struct Affine {
  std::vector<float> scale;
  std::vector<int32_t> zp;
  int64_t outer = 1, channels = 1, inner = 1;
  bool per_channel() const { return scale.size() > 1; }
};

Status ReadAffine(const OpContext& ctx, const Tensor& t, const char* what, bool allow_per_channel, bool allow_empty,
                  Affine* a) {
  const QuantParams& q = t.quant;
  const size_t ns = q.scale.size();
  a->scale.clear();
  a->zp.clear();
  a->outer = t.num_elements();
  a->channels = 1;
  a->inner = 1;
  if (ns == 0) {
    if (!allow_empty) return ctx.Error(std::string(what) + " has no quantization parameters");
    a->scale.push_back(0.f);  // TFLite reads an unquantized tensor as scale 0, zero point 0
    a->zp.push_back(0);
    return OkStatus();
  }
  if (!q.zero_point.empty() && q.zero_point.size() != ns)
    return ctx.Error(std::string(what) + " has " + std::to_string(ns) + " scales but " +
                     std::to_string(q.zero_point.size()) + " zero points");
  for (size_t i = 0; i < ns; ++i) {
    int64_t z = q.zero_point.empty() ? 0 : q.zero_point[i];
    if (z < std::numeric_limits<int32_t>::min() || z > std::numeric_limits<int32_t>::max())
      return ctx.Error(std::string(what) + " zero point " + std::to_string(z) + " is out of the int32 range");
    a->scale.push_back(q.scale[i]);
    a->zp.push_back(int32_t(z));
  }
  if (ns > 1) {
    if (!allow_per_channel)
      return ctx.Error(std::string(what) + ": per-channel quantization (" + std::to_string(ns) +
                       " scales) is not supported for " + DTypeName(t.type) + " here");
    const int rank = int(t.shape.size());
    const int qd = q.quantized_dimension;
    if (qd < 0 || qd >= rank)
      return ctx.Error(std::string(what) + ": quantized_dimension " + std::to_string(qd) + " is out of range for shape " +
                       DimsToString(t.shape));
    if (int64_t(t.shape[qd]) != int64_t(ns))
      return ctx.Error(std::string(what) + ": " + std::to_string(ns) + " per-channel scales for dimension " +
                       std::to_string(qd) + " of size " + std::to_string(t.shape[qd]));
    a->outer = 1;
    a->inner = 1;
    for (int d = 0; d < qd; ++d) a->outer *= t.shape[d];
    for (int d = qd + 1; d < rank; ++d) a->inner *= t.shape[d];
    a->channels = int64_t(ns);
  }
  return OkStatus();
}

// Calls fn(begin, end, channel) over contiguous runs sharing one channel, in parallel.
template <typename F>
void ForEachChannelRun(ThreadPool* pool, const Affine& a, int64_t chunk, const F& fn) {
  if (!a.per_channel()) {
    ParallelFor(pool, a.outer, [&](int64_t b, int64_t e) { fn(b, e, 0); }, chunk);
    return;
  }
  const int64_t rows = a.outer * a.channels;
  const int64_t min_rows = std::max<int64_t>(1, chunk / std::max<int64_t>(1, a.inner));
  ParallelFor(
      pool, rows,
      [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) fn(r * a.inner, (r + 1) * a.inner, r % a.channels);
      },
      min_rows);
}

// Per-channel with the channel innermost (inner == 1, e.g. depthwise weights [1, H, W, C] on
// dimension 3): calls fn(begin_row, end_row) over rows of `channels` elements, in parallel.
template <typename F>
void ForEachChannelRow(ThreadPool* pool, const Affine& a, int64_t chunk, const F& fn) {
  ParallelFor(pool, a.outer, fn, std::max<int64_t>(1, chunk / std::max<int64_t>(1, a.channels)));
}

inline int64_t ChannelOf(const Affine& a, int64_t i) {
  return a.per_channel() ? (i / a.inner) % a.channels : 0;
}

// ================================ DEQUANTIZE ================================

struct DequantData {
  Affine q;
};

Status PrepareDequantize(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(1, 1, 1, 1));
  const Tensor& x = ctx.input(0);
  auto data = std::make_shared<DequantData>();
  switch (x.type) {
    case DType::kFloat16:
      data->q.outer = x.num_elements();
      break;
    case DType::kInt8: case DType::kUInt8: case DType::kInt4: case DType::kUInt4: case DType::kInt2:
      TFG_RETURN_IF_ERROR(ReadAffine(ctx, x, "input", /*per_channel=*/true, /*empty=*/true, &data->q));
      break;
    case DType::kInt16:
      TFG_RETURN_IF_ERROR(ReadAffine(ctx, x, "input", /*per_channel=*/false, /*empty=*/true, &data->q));
      if (data->q.zp[0] != 0)
        return ctx.Error("INT16 input needs zero point 0, got " + std::to_string(data->q.zp[0]));
      break;
    default:
      return ctx.Error(std::string("unsupported input type ") + DTypeName(x.type) +
                       " (supported: INT8, UINT8, INT16, FLOAT16, INT4, UINT4, INT2)");
  }
  ctx.node().user_data = data;
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, DType::kFloat32));
  return ctx.SetOutputShape(0, x.shape);
}

template <typename T>
void DequantRun(ThreadPool* pool, const Affine& a, const T* in, float* out) {
  if (a.per_channel() && a.inner == 1) {
    const int64_t C = a.channels;
    const float* scale = a.scale.data();
    const int32_t* zp = a.zp.data();
    ForEachChannelRow(pool, a, ew::kCheapChunk, [=](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const T* __restrict pi = in + r * C;
        float* __restrict po = out + r * C;
        for (int64_t c = 0; c < C; ++c) po[c] = float(int32_t(pi[c]) - zp[c]) * scale[c];
      }
    });
    return;
  }
  ForEachChannelRun(pool, a, ew::kCheapChunk, [&](int64_t b, int64_t e, int64_t c) {
    const float s = a.scale[c];
    const int32_t z = a.zp[c];
    ew::MapLoop(in + b, out + b, e - b, [s, z](T v) { return float(int32_t(v) - z) * s; });
  });
}

Status EvalDequantize(OpContext& ctx) {
  const Tensor& x = ctx.input(0);
  float* out = ctx.output(0).as<float>();
  const Affine& a = ctx.node().U<DequantData>()->q;
  switch (x.type) {
    case DType::kFloat16:
      ew::RunUnary(ctx.pool(), x.num_elements(), x.as<uint16_t>(), out, [](uint16_t h) { return HalfToFloat(h); });
      return OkStatus();
    case DType::kInt8: case DType::kInt4: case DType::kInt2:
      DequantRun(ctx.pool(), a, x.as<int8_t>(), out);
      return OkStatus();
    case DType::kUInt8: case DType::kUInt4: DequantRun(ctx.pool(), a, x.as<uint8_t>(), out); return OkStatus();
    case DType::kInt16: DequantRun(ctx.pool(), a, x.as<int16_t>(), out); return OkStatus();
    default: return ctx.Error(std::string("unsupported input type ") + DTypeName(x.type));
  }
}

// Reference: plain per-element loop; fp16 decoded through ldexp.
float HalfToFloatRef(uint16_t h) {
  const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  const float sign = (h & 0x8000) ? -1.f : 1.f;
  if (e == 0x1f) return m ? std::numeric_limits<float>::quiet_NaN() : sign * std::numeric_limits<float>::infinity();
  if (e == 0) return sign * std::ldexp(float(m), -24);
  return sign * std::ldexp(float(m + 1024), e - 25);
}

template <typename T>
void DequantRef(const Affine& a, int64_t n, const T* in, float* out) {
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = ChannelOf(a, i);
    out[i] = float(double(int32_t(in[i]) - a.zp[c]) * double(a.scale[c]));
  }
}

Status EvalDequantizeRef(OpContext& ctx) {
  const Tensor& x = ctx.input(0);
  float* out = ctx.output(0).as<float>();
  const Affine& a = ctx.node().U<DequantData>()->q;
  const int64_t n = x.num_elements();
  switch (x.type) {
    case DType::kFloat16:
      for (int64_t i = 0; i < n; ++i) out[i] = HalfToFloatRef(x.as<uint16_t>()[i]);
      return OkStatus();
    case DType::kInt8: case DType::kInt4: case DType::kInt2: DequantRef(a, n, x.as<int8_t>(), out); return OkStatus();
    case DType::kUInt8: case DType::kUInt4: DequantRef(a, n, x.as<uint8_t>(), out); return OkStatus();
    case DType::kInt16: DequantRef(a, n, x.as<int16_t>(), out); return OkStatus();
    default: return ctx.Error(std::string("unsupported input type ") + DTypeName(x.type));
  }
}

// ================================ QUANTIZE ================================

// int32(v) as x86 converts out-of-range values and NaN: INT32_MIN. `away` selects round half away
// from zero (std::round), otherwise round half to even (cvtps2dq). Exact for every float.
inline int32_t RoundToInt32(float v, bool away) {
  const bool in_range = v >= -2147483648.0f && v < 2147483648.0f;  // false for NaN
  const float vc = in_range ? v : 0.f;
  int32_t t = int32_t(vc);  // truncation toward zero; vc - t is exact
  const float frac = vc - float(t);
  const int32_t tie = away ? 1 : (t & 1);
  t += int32_t(frac > 0.5f) - int32_t(frac < -0.5f) + (int32_t(frac == 0.5f) - int32_t(frac == -0.5f)) * tie;
  return in_range ? t : std::numeric_limits<int32_t>::min();
}

// The scalar tail of TFLite's optimized per-tensor kernel: std::round(x / scale) in double.
inline int32_t RoundAwayDoubleToInt32(double v) {
  const double r = std::round(v);
  return (r >= -2147483648.0 && r <= 2147483647.0) ? int32_t(r) : std::numeric_limits<int32_t>::min();
}

inline int32_t AddZeroPointAndClamp(int32_t q, int32_t zp, int32_t qmin, int32_t qmax) {
  q = int32_t(uint32_t(q) + uint32_t(zp));  // wraps as TFLite's int32 add
  return std::min(std::max(q, qmin), qmax);
}

// The same two rules with the zero point and the clamp done in float (all-float SIMD), valid when
// |zero_point| <= 2^16: then every in-range sum that is not exact is far outside [qmin, qmax].
// Out-of-range values (and NaN) give `oor` = clamp(INT32_MIN + zero_point), as the int path.
struct FloatQuant {
  float zp, lo, hi;
  int32_t oor;
};
inline FloatQuant MakeFloatQuant(int32_t zp, int32_t qmin, int32_t qmax) {
  return {float(zp), float(qmin), float(qmax),
          AddZeroPointAndClamp(std::numeric_limits<int32_t>::min(), zp, qmin, qmax)};
}
inline bool FloatQuantValid(int32_t zp) { return zp >= -65536 && zp <= 65536; }
inline int32_t QuantizeEvenF(float v, const FloatQuant& q) {
  const bool in_range = v >= -2147483648.0f && v < 2147483648.0f;
  const float vc = in_range ? v : 0.f;
  // Round half to even by the 1.5 * 2^23 trick; from 2^22 on, v is far beyond any clamp bound.
  const float r = std::fabs(vc) < 4194304.f ? (vc + 12582912.f) - 12582912.f : vc;
  const float f = ew::MinKeep(ew::MaxKeep(r + q.zp, q.lo), q.hi);
  return in_range ? int32_t(f) : q.oor;
}
inline int32_t QuantizeAwayF(float v, const FloatQuant& q) {
  const bool in_range = v >= -2147483648.0f && v < 2147483648.0f;
  const float vc = in_range ? v : 0.f;
  const float t = float(int32_t(vc));  // truncation; vc - t is exact
  const float frac = vc - t;
  const float r = t + float(frac >= 0.5f) - float(frac <= -0.5f);
  const float f = ew::MinKeep(ew::MaxKeep(r + q.zp, q.lo), q.hi);
  return in_range ? int32_t(f) : q.oor;
}

enum class QMode { kFromFloat, kRequant };

struct QuantData {
  QMode mode = QMode::kFromFloat;
  Affine out;          // output parameters (per-channel allowed from float)
  float inv_scale = 0.f;  // 1 / scale (per-tensor from float: TFLite's vector body)
  int32_t in_zp = 0;   // requantization
  int32_t multiplier = 0;
  int shift = 0;
  bool neon_body = false;  // requantization with TFLite's 16-wide vector body
  bool reference_rule = false;  // INT4 / UINT4 outputs: TFLite's reference rule for every element
  int32_t qmin = 0, qmax = 0;
};

constexpr int64_t kQuantBody = 8;     // TFLite's AffineQuantize vector width
constexpr int64_t kRequantBody = 16;  // TFLite's Requantize vector width

bool QuantOutputAllowed(DType in, DType out) {
  switch (in) {
    case DType::kFloat32:  // INT4 / UINT4 outputs are held unpacked (one byte an element)
      return out == DType::kInt8 || out == DType::kUInt8 || out == DType::kInt16 || out == DType::kInt4 ||
             out == DType::kUInt4;
    case DType::kInt8: case DType::kUInt8:
      return out == DType::kInt8 || out == DType::kUInt8 || out == DType::kInt16;
    case DType::kInt16: return out == DType::kInt8 || out == DType::kInt16 || out == DType::kInt32;
    case DType::kInt32: return out == DType::kInt8 || out == DType::kInt16;
    default: return false;
  }
}

Status CheckScales(const OpContext& ctx, const Affine& a, const char* what) {
  for (float s : a.scale)
    if (!(s > 0.f) || !std::isfinite(s))
      return ctx.Error(std::string(what) + " scale " + std::to_string(s) + " is not a positive finite number");
  return OkStatus();
}

Status PrepareQuantize(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(1, 1, 1, 1));
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.output(0);
  if (!QuantOutputAllowed(x.type, y.type))
    return ctx.Error(std::string("unsupported quantization from ") + DTypeName(x.type) + " to " + DTypeName(y.type));
  auto data = std::make_shared<QuantData>();
  TypeRange(y.type, &data->qmin, &data->qmax);
  if (x.type == DType::kFloat32) {
    data->mode = QMode::kFromFloat;
    TFG_RETURN_IF_ERROR(ReadAffine(ctx, y, "output", /*per_channel=*/true, /*empty=*/false, &data->out));
    TFG_RETURN_IF_ERROR(CheckScales(ctx, data->out, "output"));
    if (DTypePackedBits(y.type) && data->out.per_channel())
      return ctx.Error(std::string("per-channel quantization to ") + DTypeName(y.type) +
                       " is not supported (per-tensor only, as TFLite)");
    data->inv_scale = 1.0f / data->out.scale[0];
    data->reference_rule = DTypePackedBits(y.type) != 0;
  } else {
    data->mode = QMode::kRequant;
    Affine in;
    TFG_RETURN_IF_ERROR(ReadAffine(ctx, x, "input", /*per_channel=*/false, /*empty=*/false, &in));
    TFG_RETURN_IF_ERROR(ReadAffine(ctx, y, "output", /*per_channel=*/false, /*empty=*/false, &data->out));
    TFG_RETURN_IF_ERROR(CheckScales(ctx, in, "input"));
    TFG_RETURN_IF_ERROR(CheckScales(ctx, data->out, "output"));
    data->in_zp = in.zp[0];
    if (x.type == DType::kInt16 && y.type == DType::kInt16 && (in.zp[0] != 0 || data->out.zp[0] != 0))
      return ctx.Error("INT16 to INT16 requantization needs zero points 0, got " + std::to_string(in.zp[0]) +
                       " and " + std::to_string(data->out.zp[0]));
    QuantizeMultiplier(double(in.scale[0]) / double(data->out.scale[0]), &data->multiplier, &data->shift);
    auto is8 = [](DType t) { return t == DType::kInt8 || t == DType::kUInt8; };
    data->neon_body = is8(x.type) && is8(y.type);
  }
  ctx.node().user_data = data;
  return ctx.SetOutputShape(0, x.shape);
}

template <typename TO>
void QuantFromFloat(ThreadPool* pool, const QuantData& d, int64_t n, const float* in, TO* out) {
  const int32_t qmin = d.qmin, qmax = d.qmax;
  if (d.out.per_channel() && d.out.inner == 1) {
    const int64_t C = d.out.channels;
    const float* scale = d.out.scale.data();
    const int32_t* zp = d.out.zp.data();
    ForEachChannelRow(pool, d.out, ew::kCheapChunk, [=](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const float* __restrict pi = in + r * C;
        TO* __restrict po = out + r * C;
        for (int64_t c = 0; c < C; ++c)
          po[c] = TO(AddZeroPointAndClamp(RoundToInt32(pi[c] / scale[c], true), zp[c], qmin, qmax));
      }
    });
    return;
  }
  if (d.out.per_channel() || d.reference_rule) {  // round_half_away(x / scale), float division
    ForEachChannelRun(pool, d.out, ew::kCheapChunk, [&](int64_t b, int64_t e, int64_t c) {
      const float s = d.out.scale[c];
      const int32_t z = d.out.zp[c], lo = qmin, hi = qmax;
      if (FloatQuantValid(z)) {
        const FloatQuant fq = MakeFloatQuant(z, lo, hi);
        ew::MapLoop(in + b, out + b, e - b, [s, fq](float v) { return TO(QuantizeAwayF(v / s, fq)); });
      } else {
        ew::MapLoop(in + b, out + b, e - b,
                    [s, z, lo, hi](float v) { return TO(AddZeroPointAndClamp(RoundToInt32(v / s, true), z, lo, hi)); });
      }
    });
    return;
  }
  const float s = d.out.scale[0], inv = d.inv_scale;
  const int32_t z = d.out.zp[0];
  const int64_t body = n / kQuantBody * kQuantBody;
  if (FloatQuantValid(z)) {
    const FloatQuant fq = MakeFloatQuant(z, qmin, qmax);
    ew::RunUnary(pool, body, in, out, [inv, fq](float v) { return TO(QuantizeEvenF(v * inv, fq)); });
  } else {
    ew::RunUnary(pool, body, in, out, [inv, z, qmin, qmax](float v) {
      return TO(AddZeroPointAndClamp(RoundToInt32(v * inv, false), z, qmin, qmax));
    });
  }
  for (int64_t i = body; i < n; ++i)  // the scalar tail: fewer than 8 elements
    out[i] = TO(AddZeroPointAndClamp(RoundAwayDoubleToInt32(double(in[i]) / double(s)), z, qmin, qmax));
}

template <typename TI, typename TO>
void Requant(ThreadPool* pool, int64_t n, const QuantData& d, const TI* in, TO* out) {
  const int32_t in_zp = d.in_zp, out_zp = d.out.zp[0], qm = d.multiplier, qmin = d.qmin, qmax = d.qmax;
  const int shift = d.shift;
  const int64_t body = d.neon_body ? n / kRequantBody * kRequantBody : 0;
  if (sizeof(TI) == 1 && n >= 256) {
    // 8-bit input: two 256-entry tables (vector body, scalar tail).
    TO lut[2][256];
    for (int v = 0; v < 256; ++v) {
      const TI in_v = TI(v);  // every bit pattern of TI
      const int32_t x = int32_t(uint32_t(int32_t(in_v)) - uint32_t(in_zp));
      lut[0][uint8_t(in_v)] = TO(AddZeroPointAndClamp(MultiplyByQuantizedMultiplierHalfUp(x, qm, shift), out_zp, qmin, qmax));
      lut[1][uint8_t(in_v)] = TO(AddZeroPointAndClamp(MultiplyByQuantizedMultiplier(x, qm, shift), out_zp, qmin, qmax));
    }
    ParallelFor(
        pool, n,
        [&lut, in, out, body](int64_t b, int64_t e) {
          const int64_t m = std::min(e, std::max(b, body));
          for (int64_t i = b; i < m; ++i) out[i] = lut[0][uint8_t(in[i])];
          for (int64_t i = m; i < e; ++i) out[i] = lut[1][uint8_t(in[i])];
        },
        ew::kCheapChunk);
    return;
  }
  ParallelFor(
      pool, n,
      [=](int64_t b, int64_t e) {
        const int64_t m = std::min(e, std::max(b, body));
        for (int64_t i = b; i < m; ++i) {
          const int32_t x = int32_t(uint32_t(int32_t(in[i])) - uint32_t(in_zp));
          out[i] = TO(AddZeroPointAndClamp(MultiplyByQuantizedMultiplierHalfUp(x, qm, shift), out_zp, qmin, qmax));
        }
        for (int64_t i = m; i < e; ++i) {
          const int32_t x = int32_t(uint32_t(int32_t(in[i])) - uint32_t(in_zp));
          out[i] = TO(AddZeroPointAndClamp(MultiplyByQuantizedMultiplier(x, qm, shift), out_zp, qmin, qmax));
        }
      },
      ew::kCheapChunk);
}

template <typename TI>
Status RequantFrom(OpContext& ctx, bool ref, const QuantData& d) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  ThreadPool* pool = ref ? nullptr : ctx.pool();
  const int64_t n = x.num_elements();
  switch (y.type) {
    case DType::kInt8: Requant(pool, n, d, x.as<TI>(), y.as<int8_t>()); break;
    case DType::kUInt8: Requant(pool, n, d, x.as<TI>(), y.as<uint8_t>()); break;
    case DType::kInt16: Requant(pool, n, d, x.as<TI>(), y.as<int16_t>()); break;
    case DType::kInt32: Requant(pool, n, d, x.as<TI>(), y.as<int32_t>()); break;
    default: return ctx.Error(std::string("unsupported output type ") + DTypeName(y.type));
  }
  return OkStatus();
}

// Reference: the same rules written with the C library's rounding functions.
template <typename TO>
void QuantFromFloatRef(const QuantData& d, int64_t n, const float* in, TO* out) {
  const bool ref_rule = d.out.per_channel() || d.reference_rule;
  const int64_t body = ref_rule ? 0 : n / kQuantBody * kQuantBody;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = ChannelOf(d.out, i);
    double r;
    if (ref_rule) r = std::round(in[i] / d.out.scale[c]);                                   // float division
    else if (i < body) r = std::nearbyint(in[i] * (1.0f / d.out.scale[c]));                // vector body
    else r = std::round(double(in[i]) / double(d.out.scale[c]));                            // scalar tail
    int32_t q = (r >= -2147483648.0 && r <= 2147483647.0) ? int32_t(r) : std::numeric_limits<int32_t>::min();
    int64_t w = int64_t(q) + d.out.zp[c];
    q = int32_t(uint32_t(uint64_t(w)));
    out[i] = TO(std::min(std::max(q, d.qmin), d.qmax));
  }
}

Status EvalQuantizeImpl(OpContext& ctx, bool ref) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const QuantData& d = *ctx.node().U<QuantData>();
  if (d.mode == QMode::kFromFloat) {
    const float* in = x.as<float>();
    const int64_t n = x.num_elements();
    switch (y.type) {
      case DType::kInt8: case DType::kInt4:
        ref ? QuantFromFloatRef(d, n, in, y.as<int8_t>()) : QuantFromFloat(ctx.pool(), d, n, in, y.as<int8_t>());
        return OkStatus();
      case DType::kUInt8: case DType::kUInt4:
        ref ? QuantFromFloatRef(d, n, in, y.as<uint8_t>()) : QuantFromFloat(ctx.pool(), d, n, in, y.as<uint8_t>());
        return OkStatus();
      case DType::kInt16:
        ref ? QuantFromFloatRef(d, n, in, y.as<int16_t>()) : QuantFromFloat(ctx.pool(), d, n, in, y.as<int16_t>());
        return OkStatus();
      default: return ctx.Error(std::string("unsupported output type ") + DTypeName(y.type));
    }
  }
  switch (x.type) {
    case DType::kInt8: return RequantFrom<int8_t>(ctx, ref, d);
    case DType::kUInt8: return RequantFrom<uint8_t>(ctx, ref, d);
    case DType::kInt16: return RequantFrom<int16_t>(ctx, ref, d);
    case DType::kInt32: return RequantFrom<int32_t>(ctx, ref, d);
    default: return ctx.Error(std::string("unsupported input type ") + DTypeName(x.type));
  }
}
Status EvalQuantize(OpContext& ctx) { return EvalQuantizeImpl(ctx, false); }
Status EvalQuantizeRef(OpContext& ctx) { return EvalQuantizeImpl(ctx, true); }

}  // namespace

const OpImpl kOp_DEQUANTIZE = {nullptr, PrepareDequantize, EvalDequantize, EvalDequantizeRef,
                               /*fold_constants=*/true};
const OpImpl kOp_QUANTIZE = {nullptr, PrepareQuantize, EvalQuantize, EvalQuantizeRef, false};

}  // namespace tflite_gpu
