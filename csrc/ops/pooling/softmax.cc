// SOFTMAX (float32, any rank >= 1, over the last axis): y = exp((x - max) * beta) / sum, as
// TFLite computes it (the max is subtracted before beta is applied; beta defaults to 0).
// Quantized INT8 -> INT8 and UINT8 -> UINT8, as TFLite's builtin (optimized) kernel: a 256-entry
// float table t[255 - k] = expf(-in_scale * beta * k) (PopulateSoftmaxLookupTable); per row, the
// sum of t[255 - max + q] in float, in order; out = round(t[..] / (sum * out_scale)) + zp, where
// int8 rounds with std::round and uint8 with (int)(v + 0.5f) (TFLite's x86 QuantizeSoftmaxOutput).
// TFLite requires the output grid scale 1/256 (+-0.1%) with zero point -128 (int8) / 0 (uint8).
// TFLite's reference kernels (BUILTIN_REF) use a fixed-point exp instead; we follow the builtin.
#include <cmath>
#include <limits>
#include <type_traits>

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
};

Status PrepareSoftmax(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(1, 1, 1, 1));
  const Tensor& in = ctx.input(0);
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
  if (in.type != DType::kFloat32)
    return ctx.Error(std::string("input type ") + DTypeName(in.type) + " is not supported (FLOAT32, INT8, UINT8)");
  if (in.shape.empty()) return ctx.Error("input must have rank >= 1, got a scalar");
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, DType::kFloat32));
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
  }, std::max<int64_t>(1, 8192 / std::max(1, d)));
  return OkStatus();
}

Status EvalSoftmaxRef(OpContext& ctx) {
  if (ctx.input(0).type == DType::kInt8) return QuantSoftmax<int8_t>(ctx, true);
  if (ctx.input(0).type == DType::kUInt8) return QuantSoftmax<uint8_t>(ctx, true);
  const float beta = ctx.node().P<SoftmaxParams>().beta;
  int64_t rows; int d;
  Rows(ctx, &rows, &d);
  const float* x = ctx.input(0).as<float>();
  float* y = ctx.output(0).as<float>();
  for (int64_t r = 0; r < rows; ++r) {
    const float* xi = x + r * d;
    float* yi = y + r * d;
    float mx = std::numeric_limits<float>::lowest();
    for (int i = 0; i < d; ++i) mx = std::max(mx, xi[i]);
    float sum = 0.f;
    for (int i = 0; i < d; ++i) sum += std::exp((xi[i] - mx) * beta);
    for (int i = 0; i < d; ++i) yi[i] = std::exp((xi[i] - mx) * beta) / sum;
  }
  return OkStatus();
}

Status EvalSoftmax(OpContext& ctx) {
  if (ctx.input(0).type == DType::kInt8) return QuantSoftmax<int8_t>(ctx, false);
  if (ctx.input(0).type == DType::kUInt8) return QuantSoftmax<uint8_t>(ctx, false);
  const float beta = ctx.node().P<SoftmaxParams>().beta;
  int64_t rows; int d;
  Rows(ctx, &rows, &d);
  const float* x = ctx.input(0).as<float>();
  float* y = ctx.output(0).as<float>();
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
  }, std::max<int64_t>(1, 8192 / std::max(1, d)));
  return OkStatus();
}

}  // namespace

const OpImpl kOp_SOFTMAX = {ParseSoftmax, PrepareSoftmax, EvalSoftmax, EvalSoftmaxRef, false};

float pooling::SoftmaxBetaOf(const Node& n) { return n.P<SoftmaxParams>().beta; }

}  // namespace tflite_gpu
