// AVERAGE_POOL_2D and MAX_POOL_2D (float32, NHWC), TFLite semantics:
//   * output size and leading pad as for CONV_2D (dilation 1);
//   * the average divides by the number of in-bounds elements of the window;
//   * the fused activation only clamps for the RELU family; the clamp range is
//     [lowest, max] otherwise, so +-inf becomes +-FLT_MAX as in TFLite.
// Quantized (INT8 / UINT8 / INT16, per-tensor), as TFLite's builtin kernels: the window works on the
// raw integers (TFLite only DCHECKs that input and output share scale and zero point, so a file where
// they differ gets the raw result, as in TFLite); the average rounds half away from zero,
// (sum +- count / 2) / count in integers (reference_integer_ops and the optimized kernels agree);
// the fused activation clamps to CalculateActivationRangeQuantized of the output (TANH / SIGN_BIT
// refused, as TFLite does). INT16 needs zero points 0 (TFLite: TF_LITE_ENSURE_EQ).
#include <algorithm>
#include <limits>

#include "ops/op_registry.h"
#include "ops/quant_common.h"
#include "ops/simd.h"
#include "ops/pooling/pool_common.h"
#include "runtime/thread_pool.h"

namespace tflite_gpu {
namespace {

using PoolParams = pooling::Pool2DParams;

struct PoolGeom {
  int batches, in_h, in_w, depth, out_h, out_w, pad_h, pad_w;
  float act_lo, act_hi;
  int32_t qact_lo = 0, qact_hi = 0;  // quantized activation range
};

struct QuantPoolData {
  int32_t act_lo = 0, act_hi = 0;
};

Status PreparePool(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(1, 1, 1, 1));
  const PoolParams& p = ctx.node().P<PoolParams>();
  Padding pad;
  TFG_RETURN_IF_ERROR(pooling::CheckPool2D(ctx, p, &pad));
  const Tensor& in = ctx.input(0);
  if (in.type != DType::kFloat32 && !quant::IsQuantizedIntType(in.type))
    return ctx.Error(std::string("input type ") + DTypeName(in.type) +
                     " is not supported (FLOAT32, INT8, UINT8, INT16)");
  if (in.shape.size() != 4) return ctx.Error("input must be 4-D (NHWC), got shape " + DimsToString(in.shape));
  if (quant::IsQuantizedIntType(in.type)) {
    const Tensor& out = ctx.output(0);
    if (out.type != in.type)
      return ctx.Error(std::string("output type ") + DTypeName(out.type) + " differs from the input type " +
                       DTypeName(in.type));
    quant::QuantRule rule;
    rule.zero_point_zero = in.type == DType::kInt16;
    quant::TensorQuant qi, qo;
    TFG_RETURN_IF_ERROR(quant::ReadQuant(ctx, in, "input", rule, &qi));
    TFG_RETURN_IF_ERROR(quant::ReadQuant(ctx, out, "output", rule, &qo));
    auto d = std::make_shared<QuantPoolData>();
    TFG_RETURN_IF_ERROR(quant::QuantizedActivationRange(ctx, p.activation, out.type, qo.Scale(), qo.ZeroPoint(),
                                                        &d->act_lo, &d->act_hi));
    ctx.node().user_data = d;
  }
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, in.type));
  return ctx.SetOutputShape(0, pooling::Pool2DOutputShape(p, pad, in.shape));
}

PoolGeom Geometry(OpContext& ctx) {
  const PoolParams& p = ctx.node().P<PoolParams>();
  const Tensor& in = ctx.input(0);
  const Tensor& out = ctx.output(0);
  PoolGeom g;
  g.batches = in.shape[0];
  g.in_h = in.shape[1];
  g.in_w = in.shape[2];
  g.depth = in.shape[3];
  g.out_h = out.shape[1];
  g.out_w = out.shape[2];
  pooling::Pool2DPads(p, g.in_h, g.in_w, g.out_h, g.out_w, &g.pad_h, &g.pad_w);
  pooling::FloatActivationRange(p.activation, &g.act_lo, &g.act_hi);
  if (const QuantPoolData* d = ctx.node().U<QuantPoolData>()) {
    g.qact_lo = d->act_lo;
    g.qact_hi = d->act_hi;
  }
  return g;
}


// ---- quantized kernels (INT8 / UINT8 / INT16) ----
// TFLite's rounding of the average: half away from zero.
inline int32_t RoundedAverage(int32_t sum, int32_t count) {
  return sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
}

template <bool kMax, typename T>
Status QuantPoolRef(OpContext& ctx) {
  const PoolParams& p = ctx.node().P<PoolParams>();
  PoolGeom g = Geometry(ctx);
  const T* x = ctx.input(0).as<T>();
  T* y = ctx.output(0).as<T>();
  for (int b = 0; b < g.batches; ++b)
    for (int oy = 0; oy < g.out_h; ++oy)
      for (int ox = 0; ox < g.out_w; ++ox)
        for (int c = 0; c < g.depth; ++c) {
          const int iy0 = oy * p.stride_h - g.pad_h, ix0 = ox * p.stride_w - g.pad_w;
          const int fy0 = std::max(0, -iy0), fy1 = std::min(p.filter_h, g.in_h - iy0);
          const int fx0 = std::max(0, -ix0), fx1 = std::min(p.filter_w, g.in_w - ix0);
          int32_t acc = kMax ? int32_t(std::numeric_limits<T>::lowest()) : 0;
          int32_t count = 0;
          for (int fy = fy0; fy < fy1; ++fy)
            for (int fx = fx0; fx < fx1; ++fx) {
              const int32_t v = x[((int64_t(b) * g.in_h + iy0 + fy) * g.in_w + ix0 + fx) * g.depth + c];
              acc = kMax ? std::max(acc, v) : acc + v;
              ++count;
            }
          if (!kMax) {
            if (count == 0) return ctx.Error("a pooling window lies entirely in the padding");
            acc = RoundedAverage(acc, count);
          }
          y[((int64_t(b) * g.out_h + oy) * g.out_w + ox) * g.depth + c] = T(quant::Clamp32(acc, g.qact_lo, g.qact_hi));
        }
  return OkStatus();
}

template <bool kMax, typename T>
Status QuantPoolFast(OpContext& ctx) {
  const PoolParams& p = ctx.node().P<PoolParams>();
  PoolGeom g = Geometry(ctx);
  const T* x = ctx.input(0).as<T>();
  T* y = ctx.output(0).as<T>();
  const int64_t rows = int64_t(g.batches) * g.out_h;
  if (rows == 0 || g.out_w == 0 || g.depth == 0) return OkStatus();
  const int64_t work_per_row =
      int64_t(g.out_w) * g.depth * std::min(p.filter_h, g.in_h) * std::min(p.filter_w, g.in_w);
  const int64_t min_chunk = MinChunkFor(work_per_row / 2);  // a window tap: half a work unit
  bool empty_window = false;
  ParallelFor(ctx.pool(), rows, [&](int64_t r0, int64_t r1) {
    constexpr int kBlock = 512;
    int32_t acc[kBlock];
    for (int64_t r = r0; r < r1; ++r) {
      const int b = int(r / g.out_h), oy = int(r % g.out_h);
      const int iy0 = oy * p.stride_h - g.pad_h;
      const int fy0 = std::max(0, -iy0), fy1 = std::min(p.filter_h, g.in_h - iy0);
      for (int ox = 0; ox < g.out_w; ++ox) {
        const int ix0 = ox * p.stride_w - g.pad_w;
        const int fx0 = std::max(0, -ix0), fx1 = std::min(p.filter_w, g.in_w - ix0);
        const int32_t count = std::max(0, fy1 - fy0) * std::max(0, fx1 - fx0);
        if (!kMax && count == 0) {
          empty_window = true;
          continue;
        }
        T* out = y + ((int64_t(b) * g.out_h + oy) * g.out_w + ox) * g.depth;
        for (int c0 = 0; c0 < g.depth; c0 += kBlock) {
          const int n = std::min(kBlock, g.depth - c0);
          const int32_t init = kMax ? int32_t(std::numeric_limits<T>::lowest()) : 0;
          for (int c = 0; c < n; ++c) acc[c] = init;
          for (int fy = fy0; fy < fy1; ++fy) {
            const T* row = x + ((int64_t(b) * g.in_h + iy0 + fy) * g.in_w) * g.depth + c0;
            for (int fx = fx0; fx < fx1; ++fx) {
              const T* __restrict v = row + int64_t(ix0 + fx) * g.depth;
              if (kMax) {
                for (int c = 0; c < n; ++c) acc[c] = acc[c] < int32_t(v[c]) ? int32_t(v[c]) : acc[c];
              } else {
                for (int c = 0; c < n; ++c) acc[c] += int32_t(v[c]);
              }
            }
          }
          const int32_t lo = g.qact_lo, hi = g.qact_hi;
          if (kMax) {
            for (int c = 0; c < n; ++c) out[c0 + c] = T(std::min(std::max(acc[c], lo), hi));
          } else {
            const int32_t half = count / 2;
            for (int c = 0; c < n; ++c) {
              const int32_t a = acc[c];
              const int32_t q = (a > 0 ? a + half : a - half) / count;
              out[c0 + c] = T(std::min(std::max(q, lo), hi));
            }
          }
        }
      }
    }
  }, min_chunk);
  if (empty_window) return ctx.Error("a pooling window lies entirely in the padding");
  return OkStatus();
}

template <bool kMax, bool kRef>
Status EvalPoolAny(OpContext& ctx);

// ---- reference kernels: TFLite's reference_ops loops, one element at a time ----
template <bool kMax>
Status EvalPoolRef(OpContext& ctx) {
  const PoolParams& p = ctx.node().P<PoolParams>();
  PoolGeom g = Geometry(ctx);
  const float* x = ctx.input(0).as<float>();
  float* y = ctx.output(0).as<float>();
  for (int b = 0; b < g.batches; ++b)
    for (int oy = 0; oy < g.out_h; ++oy)
      for (int ox = 0; ox < g.out_w; ++ox)
        for (int c = 0; c < g.depth; ++c) {
          const int iy0 = oy * p.stride_h - g.pad_h, ix0 = ox * p.stride_w - g.pad_w;
          const int fy0 = std::max(0, -iy0), fy1 = std::min(p.filter_h, g.in_h - iy0);
          const int fx0 = std::max(0, -ix0), fx1 = std::min(p.filter_w, g.in_w - ix0);
          float acc = kMax ? std::numeric_limits<float>::lowest() : 0.f;
          int count = 0;
          for (int fy = fy0; fy < fy1; ++fy)
            for (int fx = fx0; fx < fx1; ++fx) {
              float v = x[((int64_t(b) * g.in_h + iy0 + fy) * g.in_w + ix0 + fx) * g.depth + c];
              if (kMax) acc = std::max(acc, v); else acc += v;
              ++count;
            }
          if (!kMax) {
            if (count == 0) return ctx.Error("a pooling window lies entirely in the padding");
            acc = acc / float(count);
          }
          y[((int64_t(b) * g.out_h + oy) * g.out_w + ox) * g.depth + c] = pooling::Clamp(acc, g.act_lo, g.act_hi);
        }
  return OkStatus();
}

}  // namespace
}  // namespace tflite_gpu

#if TFG_X86
// MAX_POOL_2D float rows [r0, r1) with 8-float vectors: per output pixel each channel vector is
// the max over the in-bounds taps, taken as max(v, acc) (= acc < v ? v : acc, so a NaN tap is
// skipped exactly as in the plain loop), then clamped. Channels past the last full vector run the
// plain loop.
TFG_TARGET_AVX2_BEGIN
namespace tflite_gpu {
namespace {
void MaxPoolRowsAvx2(const float* x, float* y, const PoolGeom& g, const pooling::Pool2DParams& p, int64_t r0,
                     int64_t r1) {
  const float lowest = std::numeric_limits<float>::lowest();
  const __m256 vlo = _mm256_set1_ps(g.act_lo), vhi = _mm256_set1_ps(g.act_hi);
  const int D = g.depth;
  for (int64_t r = r0; r < r1; ++r) {
    const int b = int(r / g.out_h), oy = int(r % g.out_h);
    const int iy0 = oy * p.stride_h - g.pad_h;
    const int fy0 = std::max(0, -iy0), fy1 = std::min(p.filter_h, g.in_h - iy0);
    const float* img = x + int64_t(b) * g.in_h * g.in_w * D;
    for (int ox = 0; ox < g.out_w; ++ox) {
      const int ix0 = ox * p.stride_w - g.pad_w;
      const int fx0 = std::max(0, -ix0), fx1 = std::min(p.filter_w, g.in_w - ix0);
      float* out = y + ((int64_t(b) * g.out_h + oy) * g.out_w + ox) * D;
      int c = 0;
      for (; c + 8 <= D; c += 8) {
        __m256 acc = _mm256_set1_ps(lowest);
        for (int fy = fy0; fy < fy1; ++fy) {
          const float* row = img + (int64_t(iy0 + fy) * g.in_w + ix0) * D + c;
          for (int fx = fx0; fx < fx1; ++fx) acc = _mm256_max_ps(_mm256_loadu_ps(row + int64_t(fx) * D), acc);
        }
        _mm256_storeu_ps(out + c, _mm256_min_ps(vhi, _mm256_max_ps(vlo, acc)));
      }
      for (; c < D; ++c) {
        float acc = lowest;
        for (int fy = fy0; fy < fy1; ++fy)
          for (int fx = fx0; fx < fx1; ++fx) {
            const float v = img[(int64_t(iy0 + fy) * g.in_w + ix0 + fx) * D + c];
            acc = acc < v ? v : acc;
          }
        out[c] = pooling::Clamp(acc, g.act_lo, g.act_hi);
      }
    }
  }
}
}  // namespace
}  // namespace tflite_gpu
TFG_TARGET_END
#endif

namespace tflite_gpu {
namespace {

// ---- fast kernels: channel vectors innermost, rows of the output spread over the threads ----
template <bool kMax>
Status EvalPool(OpContext& ctx) {
  const PoolParams& p = ctx.node().P<PoolParams>();
  PoolGeom g = Geometry(ctx);
  const float* x = ctx.input(0).as<float>();
  float* y = ctx.output(0).as<float>();
  const int64_t rows = int64_t(g.batches) * g.out_h;
  const int64_t work_per_row =
      int64_t(g.out_w) * g.depth * std::min(p.filter_h, g.in_h) * std::min(p.filter_w, g.in_w);
  if (rows == 0 || g.out_w == 0 || g.depth == 0) return OkStatus();
  const int64_t min_chunk = MinChunkFor(work_per_row / 2);  // a window tap: half a work unit
#if TFG_X86
  if (kMax && g.depth >= 8 && simd::ActiveIsa() >= simd::Isa::kAvx2) {
    ParallelFor(ctx.pool(), rows, [&](int64_t r0, int64_t r1) { MaxPoolRowsAvx2(x, y, g, p, r0, r1); }, min_chunk);
    return OkStatus();
  }
#endif
  ParallelFor(ctx.pool(), rows, [&](int64_t r0, int64_t r1) {
    constexpr int kBlock = 512;
    float acc[kBlock];
    for (int64_t r = r0; r < r1; ++r) {
      const int b = int(r / g.out_h), oy = int(r % g.out_h);
      const int iy0 = oy * p.stride_h - g.pad_h;
      const int fy0 = std::max(0, -iy0), fy1 = std::min(p.filter_h, g.in_h - iy0);
      for (int ox = 0; ox < g.out_w; ++ox) {
        const int ix0 = ox * p.stride_w - g.pad_w;
        const int fx0 = std::max(0, -ix0), fx1 = std::min(p.filter_w, g.in_w - ix0);
        const int count = std::max(0, fy1 - fy0) * std::max(0, fx1 - fx0);
        float* out = y + ((int64_t(b) * g.out_h + oy) * g.out_w + ox) * g.depth;
        for (int c0 = 0; c0 < g.depth; c0 += kBlock) {
          const int n = std::min(kBlock, g.depth - c0);
          const float init = kMax ? std::numeric_limits<float>::lowest() : 0.f;
          for (int c = 0; c < n; ++c) acc[c] = init;
          for (int fy = fy0; fy < fy1; ++fy) {
            const float* row = x + ((int64_t(b) * g.in_h + iy0 + fy) * g.in_w) * g.depth + c0;
            for (int fx = fx0; fx < fx1; ++fx) {
              const float* v = row + int64_t(ix0 + fx) * g.depth;
              if (kMax) {
                // std::max(acc, v) written as a select, so it vectorises (maxps(v, acc)).
                for (int c = 0; c < n; ++c) acc[c] = acc[c] < v[c] ? v[c] : acc[c];
              } else {
                for (int c = 0; c < n; ++c) acc[c] += v[c];
              }
            }
          }
          if (kMax) {
            for (int c = 0; c < n; ++c) out[c0 + c] = pooling::Clamp(acc[c], g.act_lo, g.act_hi);
          } else {
            const float fc = float(count);  // count >= 1 for any positive stride and filter
            for (int c = 0; c < n; ++c) out[c0 + c] = pooling::Clamp(acc[c] / fc, g.act_lo, g.act_hi);
          }
        }
      }
    }
  }, min_chunk);
  return OkStatus();
}

template <bool kMax, bool kRef>
Status EvalPoolAny(OpContext& ctx) {
  switch (ctx.input(0).type) {
    case DType::kInt8: return kRef ? QuantPoolRef<kMax, int8_t>(ctx) : QuantPoolFast<kMax, int8_t>(ctx);
    case DType::kUInt8: return kRef ? QuantPoolRef<kMax, uint8_t>(ctx) : QuantPoolFast<kMax, uint8_t>(ctx);
    case DType::kInt16: return kRef ? QuantPoolRef<kMax, int16_t>(ctx) : QuantPoolFast<kMax, int16_t>(ctx);
    default: return kRef ? EvalPoolRef<kMax>(ctx) : EvalPool<kMax>(ctx);
  }
}

}  // namespace

const OpImpl kOp_AVERAGE_POOL_2D = {pooling::ParsePool2D, PreparePool, EvalPoolAny<false, false>, EvalPoolAny<false, true>, false};
const OpImpl kOp_MAX_POOL_2D = {pooling::ParsePool2D, PreparePool, EvalPoolAny<true, false>, EvalPoolAny<true, true>, false};

void pooling::Pool2DParamsOf(const Node& n, int* padding, int* stride_h, int* stride_w, int* filter_h, int* filter_w, int* activation) { const PoolParams& p = n.P<PoolParams>(); *padding = p.padding; *stride_h = p.stride_h; *stride_w = p.stride_w; *filter_h = p.filter_h; *filter_w = p.filter_w; *activation = p.activation; }

}  // namespace tflite_gpu
