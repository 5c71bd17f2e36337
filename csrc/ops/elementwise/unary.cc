// Float unary ops: EXP, LOGISTIC, TANH, RELU, RELU6, RELU_N1_TO_1, HARD_SWISH, LEAKY_RELU, RSQRT,
// SQRT (and SQRT's quantized INT8 / INT16 kernel, v2). Semantics as TensorFlow Lite's float kernels:
//   RELU max(x, 0), RELU6 min(max(x, 0), 6), RELU_N1_TO_1 min(max(x, -1), 1) (NaN stays NaN),
//   HARD_SWISH x * relu6(x + 3) / 6, LEAKY_RELU x > 0 ? x : alpha * x, RSQRT 1 / sqrt(x).
// The fast EXP/LOGISTIC/TANH use vectorisable approximations (a few ulp); the reference kernels
// use the C library.
#include "ops/elementwise/ew_common.h"
#include "ops/elementwise/quant_ew.h"
#include "ops/quant_common.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tflite_gpu {
namespace {

Status PrepareUnaryFloat(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(1, 1, 1, 1));
  const Tensor& x = ctx.input(0);
  if (x.type != DType::kFloat32) {
    if (x.type == DType::kInt8 || x.type == DType::kUInt8 || x.type == DType::kInt16)
      return ctx.Error(std::string("quantized ") + DTypeName(x.type) + " input is not supported yet (supported: FLOAT32)");
    return ctx.Error(std::string("unsupported input type ") + DTypeName(x.type) + " (supported: FLOAT32)");
  }
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, DType::kFloat32));
  return ctx.SetOutputShape(0, x.shape);
}

template <typename F>
Status Map(OpContext& ctx, const F& f, int64_t chunk = ew::kCheapChunk) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  ew::RunUnary(ctx.pool(), x.num_elements(), x.as<float>(), y.as<float>(), f, chunk);
  return OkStatus();
}
template <typename F>
Status MapRef(OpContext& ctx, const F& f) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const float* px = x.as<float>();
  float* py = y.as<float>();
  const int64_t n = x.num_elements();
  for (int64_t i = 0; i < n; ++i) py[i] = f(px[i]);
  return OkStatus();
}

// ---- EXP / LOGISTIC / TANH ----
// Compute-bound: ew::RunUnary runs its AVX2+FMA build of the loop when the CPU has it.

Status EvalExp(OpContext& ctx) { return Map(ctx, [](float v) { return ew::ExpApprox(v); }, ew::kCostlyChunk); }
Status EvalExpRef(OpContext& ctx) { return MapRef(ctx, [](float v) { return std::exp(v); }); }
Status EvalLogistic(OpContext& ctx) {
  return Map(ctx, [](float v) { return ew::LogisticApprox(v); }, ew::kCostlyChunk);
}
Status EvalLogisticRef(OpContext& ctx) {
  return MapRef(ctx, [](float v) { return float(1.0 / (1.0 + std::exp(-double(v)))); });
}
Status EvalTanh(OpContext& ctx) { return Map(ctx, [](float v) { return ew::TanhApprox(v); }, ew::kCostlyChunk); }
Status EvalTanhRef(OpContext& ctx) { return MapRef(ctx, [](float v) { return std::tanh(v); }); }

// ---- RELU family / HARD_SWISH ----

Status EvalRelu(OpContext& ctx) { return Map(ctx, [](float v) { return ew::MaxKeep(v, 0.f); }); }
Status EvalRelu6(OpContext& ctx) { return Map(ctx, [](float v) { return ew::Clamp(v, 0.f, 6.f); }); }
Status EvalReluN1To1(OpContext& ctx) { return Map(ctx, [](float v) { return ew::Clamp(v, -1.f, 1.f); }); }
Status EvalHardSwish(OpContext& ctx) {
  // (x * relu6(x + 3)) * (1/6), the order TFLite's kernel rounds in.
  return Map(ctx, [](float v) { return (v * ew::Clamp(v + 3.f, 0.f, 6.f)) * (1.0f / 6.0f); });
}

// ---- LEAKY_RELU ----

struct LeakyParams {
  float alpha = 0.f;
};
Status ParseLeaky(const OptionsView& opts, Node& node) {
  auto p = std::make_shared<LeakyParams>();
  p->alpha = opts.Get<float>(0, 0.f);  // LeakyReluOptions.alpha
  node.params = p;
  return OkStatus();
}
Status EvalLeaky(OpContext& ctx) {
  const float alpha = ctx.node().P<LeakyParams>().alpha;
  return Map(ctx, [alpha](float v) { return v > 0.f ? v : v * alpha; });
}

// ---- SQRT / RSQRT ----
// std::sqrt keeps errno semantics and does not auto-vectorise; the SSE2 path is the same
// correctly rounded IEEE operation.

template <bool kRsqrt>
Status EvalSqrtT(OpContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const float* px = x.as<float>();
  float* py = y.as<float>();
  ParallelFor(
      ctx.pool(), x.num_elements(),
      [&](int64_t b, int64_t e) {
        int64_t i = b;
#if defined(__SSE2__)
        const __m128 one = _mm_set1_ps(1.f);
        for (; i + 4 <= e; i += 4) {
          __m128 s = _mm_sqrt_ps(_mm_loadu_ps(px + i));
          _mm_storeu_ps(py + i, kRsqrt ? _mm_div_ps(one, s) : s);
        }
#endif
        for (; i < e; ++i) py[i] = kRsqrt ? 1.f / std::sqrt(px[i]) : std::sqrt(px[i]);
      },
      ew::kCheapChunk);
  return OkStatus();
}
Status EvalSqrtRef(OpContext& ctx) { return MapRef(ctx, [](float v) { return std::sqrt(v); }); }

// ---- quantized SQRT (v2): INT8 / INT16, per-tensor ----
// As TFLite's kernel: y = sqrtf((q - zp_in) * scale_in) in float, then
// q_out = clamp(int(y / scale_out) + zp_out) (truncated, not rounded). A value below the input
// zero point (a negative real value) is an error at invoke, as in TFLite.
struct QSqrt {
  float in_scale = 0.f, out_scale = 0.f;
  int32_t in_zp = 0, out_zp = 0, lo = 0, hi = 0;
};

Status ReadOneQuant(OpContext& ctx, const Tensor& t, const char* what, float* scale, int32_t* zp) {
  if (t.quant.scale.size() != 1)
    return ctx.Error(std::string(what) + " '" + t.name + "' (" + DTypeName(t.type) + ") needs one quantization scale, has " +
                     std::to_string(t.quant.scale.size()));
  *scale = t.quant.scale[0];
  if (!(*scale > 0.f) || !std::isfinite(*scale))
    return ctx.Error(std::string(what) + " '" + t.name + "' scale " + std::to_string(*scale) +
                     " is not a positive finite number");
  const int64_t z = t.quant.zero_point.empty() ? 0 : t.quant.zero_point[0];
  int32_t lo, hi;
  quant::TypeRange(t.type, &lo, &hi);
  if (z < lo || z > hi)
    return ctx.Error(std::string(what) + " '" + t.name + "' zero point " + std::to_string(z) + " is outside the " +
                     DTypeName(t.type) + " range");
  *zp = int32_t(z);
  return OkStatus();
}

Status PrepareSqrt(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(1, 1, 1, 1));
  const Tensor& x = ctx.input(0);
  if (x.type != DType::kInt8 && x.type != DType::kInt16) return PrepareUnaryFloat(ctx);
  const Tensor& y = ctx.output(0);
  if (y.type != x.type)
    return ctx.Error(std::string("output has type ") + DTypeName(y.type) + " but input has type " + DTypeName(x.type));
  auto q = std::make_shared<QSqrt>();
  TFG_RETURN_IF_ERROR(ReadOneQuant(ctx, x, "input", &q->in_scale, &q->in_zp));
  TFG_RETURN_IF_ERROR(ReadOneQuant(ctx, y, "output", &q->out_scale, &q->out_zp));
  quant::TypeRange(x.type, &q->lo, &q->hi);
  ctx.node().user_data = q;
  return ctx.SetOutputShape(0, x.shape);
}

inline int32_t QSqrtOne(const QSqrt& q, int32_t v) {
  const float y = std::sqrt(float(v - q.in_zp) * q.in_scale);
  const int32_t r = int32_t(y / q.out_scale) + q.out_zp;  // y / scale is far inside int32 range
  return std::min(std::max(r, q.lo), q.hi);
}

template <typename T>
Status EvalQSqrtT(OpContext& ctx, bool ref) {
  const QSqrt& q = *ctx.node().U<QSqrt>();
  const Tensor& x = ctx.input(0);
  const T* px = x.as<T>();
  T* py = ctx.output(0).as<T>();
  const int64_t n = x.num_elements();
  for (int64_t i = 0; i < n; ++i)
    if (int32_t(px[i]) < q.in_zp)
      return ctx.Error("input '" + x.name + "' holds " + std::to_string(int32_t(px[i])) + " at flat index " +
                       std::to_string(i) + ", below its zero point " + std::to_string(q.in_zp) +
                       ": SQRT is only defined for non-negative values");
  if (ref || sizeof(T) != 1) {
    ParallelFor(ref ? nullptr : ctx.pool(), n, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) py[i] = T(QSqrtOne(q, px[i]));
    }, ew::kCostlyChunk);
    return OkStatus();
  }
  T lut[256];
  for (int v = -128; v < 128; ++v) lut[uint8_t(v)] = v >= q.in_zp ? T(QSqrtOne(q, v)) : T(0);
  ParallelFor(ctx.pool(), n, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) py[i] = lut[uint8_t(px[i])];
  }, ew::kCheapChunk);
  return OkStatus();
}

template <bool kRef>
Status EvalSqrtAny(OpContext& ctx) {
  switch (ctx.input(0).type) {
    case DType::kInt8: return EvalQSqrtT<int8_t>(ctx, kRef);
    case DType::kInt16: return EvalQSqrtT<int16_t>(ctx, kRef);
    default: return kRef ? EvalSqrtRef(ctx) : EvalSqrtT<false>(ctx);
  }
}
Status EvalRsqrtRef(OpContext& ctx) { return MapRef(ctx, [](float v) { return 1.f / std::sqrt(v); }); }


// Quantized inputs (INT8 / UINT8 / INT16) go to quant_unary.cc.
template <ew::QUnary K>
Status PrepareQ(OpContext& ctx) {
  if (ctx.num_inputs() >= 1 && ctx.has_input(0) && ew::IsQuantizedType(ctx.input(0).type))
    return ew::PrepareQuantUnary(ctx, K, K == ew::QUnary::kLeakyRelu ? ctx.node().P<LeakyParams>().alpha : 0.f);
  return PrepareUnaryFloat(ctx);
}
template <EvalFn kFloat, bool kRef>
Status EvalQ(OpContext& ctx) {
  if (ew::IsQuantizedType(ctx.input(0).type)) return ew::EvalQuantUnary(ctx, kRef);
  return kFloat(ctx);
}

}  // namespace

const OpImpl kOp_EXP = {nullptr, PrepareQ<ew::QUnary::kExp>, EvalQ<EvalExp, false>, EvalQ<EvalExpRef, true>, false};
const OpImpl kOp_LOGISTIC = {nullptr, PrepareQ<ew::QUnary::kLogistic>, EvalQ<EvalLogistic, false>,
                             EvalQ<EvalLogisticRef, true>, false};
const OpImpl kOp_TANH = {nullptr, PrepareQ<ew::QUnary::kTanh>, EvalQ<EvalTanh, false>, EvalQ<EvalTanhRef, true>, false};
const OpImpl kOp_RELU = {nullptr, PrepareQ<ew::QUnary::kRelu>, EvalQ<EvalRelu, false>, EvalQ<EvalRelu, true>, false};
const OpImpl kOp_RELU6 = {nullptr, PrepareQ<ew::QUnary::kRelu6>, EvalQ<EvalRelu6, false>, EvalQ<EvalRelu6, true>,
                          false};
const OpImpl kOp_RELU_N1_TO_1 = {nullptr, PrepareQ<ew::QUnary::kReluN1To1>, EvalQ<EvalReluN1To1, false>,
                                 EvalQ<EvalReluN1To1, true>, false};
const OpImpl kOp_HARD_SWISH = {nullptr, PrepareQ<ew::QUnary::kHardSwish>, EvalQ<EvalHardSwish, false>,
                               EvalQ<EvalHardSwish, true>, false};
const OpImpl kOp_LEAKY_RELU = {ParseLeaky, PrepareQ<ew::QUnary::kLeakyRelu>, EvalQ<EvalLeaky, false>,
                               EvalQ<EvalLeaky, true>, false};
const OpImpl kOp_SQRT = {nullptr, PrepareSqrt, EvalSqrtAny<false>, EvalSqrtAny<true>, false};
const OpImpl kOp_RSQRT = {nullptr, PrepareUnaryFloat, EvalSqrtT<true>, EvalRsqrtRef, false};

namespace ew {
float LeakyAlphaOf(const Node& node) { return node.P<LeakyParams>().alpha; }
}  // namespace ew

}  // namespace tflite_gpu
