// SOFTMAX (float32, any rank >= 1, over the last axis): y = exp((x - max) * beta) / sum, as
// TFLite computes it (the max is subtracted before beta is applied; beta defaults to 0).
// Quantized INT8 -> INT8 and UINT8 -> UINT8, as TFLite's builtin (optimized) kernel: a 256-entry
// float table t[255 - k] = expf(-in_scale * beta * k) (PopulateSoftmaxLookupTable); per row, the
// sum of t[255 - max + q] in float, in order; out = round(t[..] / (sum * out_scale)) + zp, where
// int8 rounds with std::round and uint8 with (int)(v + 0.5f) (TFLite's x86 QuantizeSoftmaxOutput).
// TFLite requires the output grid scale 1/256 (+-0.1%) with zero point -128 (int8) / 0 (uint8).
// TFLite's reference kernels (BUILTIN_REF) use a fixed-point exp instead; we follow the builtin.
// Quantized INT16 -> INT16 (rank >= 1, zero points 0, output scale 1/32768 +-0.1%), TFLite's
// SoftmaxInt16 (both its resolvers run it): per element, d = (q - max) rescaled by
// MultiplyByQuantizedMultiplier(in_scale * beta / (10 / 65535)) so [-65535, 0] spans [-10, 0],
// + 32767, saturated, looked up in a 513-entry exp table (quant::PopulateLutInt16 over [-10, 0],
// Q0.15); the int32 sum of those, normalised by its leading zeros and looked up in a 1 / (1 + x)
// table over [0, 1]; out = (exp * reciprocal + round) >> (31 - clz(sum)), clamped to [0, 32767].
#include <cmath>
#include <limits>
#include <type_traits>

#include "ops/half.h"
#include "ops/op_registry.h"
#include "ops/quant_common.h"
#include "ops/pooling/pool_common.h"
#include "ops/pooling/vec_math.h"
#include "runtime/thread_pool.h"

namespace tflite_gpu {
namespace {

constexpr uint8_t kSoftmaxOptions = 9;

struct SoftmaxParams {
  float beta = 0.f;
};

Status ParseSoftmax(const OptionsView& opts, Node& node) {
  fb::Table t = pooling::OptionsTable(opts, kSoftmaxOptions);
  auto p = std::make_shared<SoftmaxParams>();
  p->beta = t.Scalar<float>(0, 0.f);
  node.params = p;
  return OkStatus();
}

struct QSoftmax {
  float table[256];
  float out_scale = 0.f;
  int32_t zp = 0;
  // INT16
  int16_t exp_lut[513];
  int16_t recip_lut[513];
  int32_t mult = 0;
  int shift = 0;
};

Status PrepareSoftmaxInt16(OpContext& ctx) {
  const Tensor& in = ctx.input(0);
  const Tensor& out = ctx.output(0);
  if (out.type != DType::kInt16)
    return ctx.Error(std::string("output type ") + DTypeName(out.type) + " is not supported for INT16 input (supported: INT16)");
  if (in.shape.empty()) return ctx.Error("input must have rank >= 1, got a scalar");
  quant::QuantRule rule;
  rule.zero_point_zero = true;
  quant::TensorQuant qi, qo;
  TFG_RETURN_IF_ERROR(quant::ReadQuant(ctx, in, "input", rule, &qi));
  TFG_RETURN_IF_ERROR(quant::ReadQuant(ctx, out, "output", rule, &qo));
  if (std::fabs(qo.Scale() - 1.f / 32768) > 0.001f * 1.f / 32768)
    return ctx.Error("INT16 output scale must be 1/32768, got " + std::to_string(qo.Scale()));
  auto d = std::make_shared<QSoftmax>();
  const double range = 65535.0;
  quant::PopulateLutInt16(10.0 / range, 32767, 2.0 / range, 0, [](double v) { return std::exp(v); }, d->exp_lut);
  quant::PopulateLutInt16(1.0 / range, -32768, 2.0 / range, 0, [](double v) { return 1.0 / (1.0 + v); }, d->recip_lut);
  const double rescale = double(qi.Scale()) * double(ctx.node().P<SoftmaxParams>().beta) / (10.0 / 65535.0);
  quant::QuantizeMultiplier(rescale, &d->mult, &d->shift);
  d->out_scale = qo.Scale();
  ctx.node().user_data = d;
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, DType::kInt16));
  return ctx.SetOutputShape(0, in.shape);
}

void Int16SoftmaxRow(const QSoftmax& q, const int16_t* x, int16_t* y, int d) {
  int16_t mx = std::numeric_limits<int16_t>::min();
  for (int j = 0; j < d; ++j) mx = std::max(mx, x[j]);
  int32_t sum = 0;
  for (int j = 0; j < d; ++j) {
    const int32_t diff = int32_t(x[j]) - int32_t(mx);
    const int32_t scaled = quant::MultiplyByQuantizedMultiplier(diff, q.mult, q.shift);
    const int32_t sym = std::min(std::max(scaled + 32767, int32_t(-32768)), int32_t(32767));
    y[j] = quant::LutLookupInt16(int16_t(sym), q.exp_lut);  // y holds the exps until the last loop
    sum = int32_t(uint32_t(sum) + uint32_t(int32_t(y[j])));
  }
  const int headroom_plus_one = sum == 0 ? 32 : __builtin_clz(uint32_t(sum));
  const int32_t shifted = int32_t(((int64_t(sum) << (headroom_plus_one - 1)) + (1 << 13)) >> 14);
  const int32_t sym_sum = shifted - ((1 << 15) + (1 << 16));
  const int16_t recip =
      quant::LutLookupInt16(int16_t(std::min(std::max(sym_sum, int32_t(-32768)), int32_t(32767))), q.recip_lut);
  const int right = 31 - headroom_plus_one;
  const int64_t round = right > 0 ? (int64_t(1) << (right - 1)) : 0;
  for (int j = 0; j < d; ++j) {
    const int64_t p = int64_t(y[j]) * int64_t(recip) + round;
    const int32_t r = int32_t(right > 0 ? (p >> right) : p);
    y[j] = int16_t(std::min(std::max(r, int32_t(0)), int32_t(32767)));
  }
}

Status PrepareSoftmax(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(1, 1, 1, 1));
  const Tensor& in = ctx.input(0);
  if (in.type == DType::kInt16) return PrepareSoftmaxInt16(ctx);
  if (in.type == DType::kInt8 || in.type == DType::kUInt8) {
    if (in.shape.empty()) return ctx.Error("input must have rank >= 1, got a scalar");
    const Tensor& out = ctx.output(0);
    if (out.type != in.type)
      return ctx.Error(std::string("output type ") + DTypeName(out.type) + " is not supported for " + DTypeName(in.type) +
                       " input (supported: the input type)");
    quant::TensorQuant qi, qo;
    TFG_RETURN_IF_ERROR(quant::ReadQuant(ctx, in, "input", quant::QuantRule(), &qi));
    TFG_RETURN_IF_ERROR(quant::ReadQuant(ctx, out, "output", quant::QuantRule(), &qo));
    const int32_t want_zp = in.type == DType::kInt8 ? -128 : 0;
    if (qo.ZeroPoint() != want_zp)
      return ctx.Error("output zero point must be " + std::to_string(want_zp) + ", got " + std::to_string(qo.ZeroPoint()));
    if (std::fabs(qo.Scale() - 1.f / 256) > 0.001f * 1.f / 256)
      return ctx.Error("output scale must be 1/256, got " + std::to_string(qo.Scale()));
    auto d = std::make_shared<QSoftmax>();
    const float scale = -qi.Scale() * ctx.node().P<SoftmaxParams>().beta;
    for (int v = 0; v <= 255; ++v) d->table[255 - v] = std::exp(scale * float(v));
    d->out_scale = qo.Scale();
    d->zp = qo.ZeroPoint();
    ctx.node().user_data = d;
    TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, in.type));
    return ctx.SetOutputShape(0, in.shape);
  }
  if (in.type != DType::kFloat32 && in.type != DType::kFloat16)
    return ctx.Error(std::string("input type ") + DTypeName(in.type) +
                     " is not supported (FLOAT32, FLOAT16, INT8, UINT8, INT16)");
  if (in.shape.empty()) return ctx.Error("input must have rank >= 1, got a scalar");
  if (in.type == DType::kFloat16) {
    // FLOAT16: computed in float (the FLOAT32 kernel on a float copy), output rounded to half.
    const int64_t n = std::max<int64_t>(0, in.num_elements());
    ctx.RequestScratch(size_t(n) * 2 * sizeof(float));
  }
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, in.type));
  return ctx.SetOutputShape(0, in.shape);
}

void Rows(OpContext& ctx, int64_t* rows, int* depth) {
  const Tensor& in = ctx.input(0);
  *depth = in.shape.back();
  *rows = *depth == 0 ? 0 : in.num_elements() / *depth;
}

// One row of the quantized kernel (shared by the fast and the reference kernel: the float sum runs
// in TFLite's order, so only the rows are spread over threads).
template <typename T>
void QuantSoftmaxRow(const QSoftmax& q, const T* x, T* y, int d) {
  int32_t mx = std::numeric_limits<T>::min();
  for (int j = 0; j < d; ++j) mx = std::max(mx, int32_t(x[j]));
  const float* t = q.table + (255 - mx);
  float sum = 0.f;
  for (int j = 0; j < d; ++j) sum += t[x[j]];
  const float inv = 1.0f / (sum * q.out_scale);
  for (int j = 0; j < d; ++j) {
    const float p = t[x[j]] * inv;
    const int32_t r = std::is_same<T, uint8_t>::value ? int32_t(p + 0.5f) : int32_t(std::round(p));
    y[j] = T(std::min(std::max(r + q.zp, int32_t(std::numeric_limits<T>::min())), int32_t(std::numeric_limits<T>::max())));
  }
}

// INT16 rows: TFLite's SoftmaxInt16 (the exp / reciprocal tables), not the 8-bit float table.
inline void QuantSoftmaxRow(const QSoftmax& q, const int16_t* x, int16_t* y, int d) { Int16SoftmaxRow(q, x, y, d); }

// The quantized kernels (INT8, UINT8, INT16) row by row.
template <typename T>
Status QuantSoftmax(OpContext& ctx, bool ref) {
  const QSoftmax& q = *ctx.node().U<QSoftmax>();
  int64_t rows; int d;
  Rows(ctx, &rows, &d);
  const T* x = ctx.input(0).as<T>();
  T* y = ctx.output(0).as<T>();
  if (ref) {
    for (int64_t r = 0; r < rows; ++r) QuantSoftmaxRow(q, x + r * d, y + r * d, d);
    return OkStatus();
  }
  ParallelFor(ctx.pool(), rows, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) QuantSoftmaxRow(q, x + r * d, y + r * d, d);
  }, MinChunkFor(2 * int64_t(d)));
  return OkStatus();
}

// FLOAT16 in / out: the float kernel `run(x, y)` on float copies in the node's scratch.
template <typename F>
Status HalfSoftmax(OpContext& ctx, const F& run) {
  const Tensor& in = ctx.input(0);
  const int64_t n = in.num_elements();
  float* xs = static_cast<float*>(ctx.scratch());
  float* ys = xs + n;
  const uint16_t* hx = in.as<uint16_t>();
  uint16_t* hy = ctx.output(0).as<uint16_t>();
  for (int64_t i = 0; i < n; ++i) xs[i] = HalfToFloat(hx[i]);
  run(xs, ys);
  for (int64_t i = 0; i < n; ++i) hy[i] = FloatToHalf(ys[i]);
  return OkStatus();
}

void FloatSoftmaxRef(OpContext& ctx, const float* x, float* y);
void FloatSoftmaxFast(OpContext& ctx, const float* x, float* y);

Status EvalSoftmaxRef(OpContext& ctx) {
  if (ctx.input(0).type == DType::kInt16) return QuantSoftmax<int16_t>(ctx, true);
  if (ctx.input(0).type == DType::kInt8) return QuantSoftmax<int8_t>(ctx, true);
  if (ctx.input(0).type == DType::kUInt8) return QuantSoftmax<uint8_t>(ctx, true);
  if (ctx.input(0).type == DType::kFloat16)
    return HalfSoftmax(ctx, [&](const float* x, float* y) { FloatSoftmaxRef(ctx, x, y); });
  FloatSoftmaxRef(ctx, ctx.input(0).as<float>(), ctx.output(0).as<float>());
  return OkStatus();
}

void FloatSoftmaxRef(OpContext& ctx, const float* x, float* y) {
  const float beta = ctx.node().P<SoftmaxParams>().beta;
  int64_t rows; int d;
  Rows(ctx, &rows, &d);
  for (int64_t r = 0; r < rows; ++r) {
    const float* xi = x + r * d;
    float* yi = y + r * d;
    float mx = std::numeric_limits<float>::lowest();
    for (int i = 0; i < d; ++i) mx = std::max(mx, xi[i]);
    float sum = 0.f;
    for (int i = 0; i < d; ++i) sum += std::exp((xi[i] - mx) * beta);
    for (int i = 0; i < d; ++i) yi[i] = std::exp((xi[i] - mx) * beta) / sum;
  }
}

Status EvalSoftmax(OpContext& ctx) {
  if (ctx.input(0).type == DType::kInt16) return QuantSoftmax<int16_t>(ctx, false);
  if (ctx.input(0).type == DType::kInt8) return QuantSoftmax<int8_t>(ctx, false);
  if (ctx.input(0).type == DType::kUInt8) return QuantSoftmax<uint8_t>(ctx, false);
  if (ctx.input(0).type == DType::kFloat16)
    return HalfSoftmax(ctx, [&](const float* x, float* y) { FloatSoftmaxFast(ctx, x, y); });
  FloatSoftmaxFast(ctx, ctx.input(0).as<float>(), ctx.output(0).as<float>());
  return OkStatus();
}

void FloatSoftmaxFast(OpContext& ctx, const float* x, float* y) {
  const float beta = ctx.node().P<SoftmaxParams>().beta;
  int64_t rows; int d;
  Rows(ctx, &rows, &d);
  ParallelFor(ctx.pool(), rows, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* xi = x + r * d;
      float* yi = y + r * d;
      float part[8];
      for (float& m : part) m = std::numeric_limits<float>::lowest();
      int i = 0;
      for (; i + 8 <= d; i += 8)
        for (int k = 0; k < 8; ++k) part[k] = part[k] < xi[i + k] ? xi[i + k] : part[k];
      float mx = std::numeric_limits<float>::lowest();
      for (float m : part) mx = std::max(mx, m);
      for (; i < d; ++i) mx = std::max(mx, xi[i]);
      vmath::ExpShifted(xi, yi, d, mx, beta);
      float sum = 0.f;
      for (i = 0; i < d; ++i) sum += yi[i];
      const float inv = 1.f / sum;
      for (int i = 0; i < d; ++i) yi[i] *= inv;
    }
  }, MinChunkFor(2 * int64_t(d)));
}

}  // namespace

const OpImpl kOp_SOFTMAX = {ParseSoftmax, PrepareSoftmax, EvalSoftmax, EvalSoftmaxRef, false};

float pooling::SoftmaxBetaOf(const Node& n) { return n.P<SoftmaxParams>().beta; }

}  // namespace tflite_gpu
