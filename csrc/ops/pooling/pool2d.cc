// AVERAGE_POOL_2D and MAX_POOL_2D (float32, NHWC), TFLite semantics:
//   * output size and leading pad as for CONV_2D (dilation 1);
//   * the average divides by the number of in-bounds elements of the window;
//   * the fused activation only clamps for the RELU family; the clamp range is
//     [lowest, max] otherwise, so +-inf becomes +-FLT_MAX as in TFLite.
#include <algorithm>
#include <limits>

#include "ops/op_registry.h"
#include "ops/pooling/pool_common.h"
#include "runtime/thread_pool.h"

namespace tflite_gpu {
namespace {

constexpr uint8_t kPool2DOptions = 5;

struct PoolParams {
  int padding = 0, stride_w = 0, stride_h = 0, filter_w = 0, filter_h = 0, activation = 0;
};

struct PoolGeom {
  int batches, in_h, in_w, depth, out_h, out_w, pad_h, pad_w;
  float act_lo, act_hi;
};

Status ParsePool(const OptionsView& opts, Node& node) {
  fb::Table t = pooling::OptionsTable(opts, kPool2DOptions);
  auto p = std::make_shared<PoolParams>();
  p->padding = t.Scalar<int8_t>(0, 0);
  p->stride_w = t.Scalar<int32_t>(1, 0);
  p->stride_h = t.Scalar<int32_t>(2, 0);
  p->filter_w = t.Scalar<int32_t>(3, 0);
  p->filter_h = t.Scalar<int32_t>(4, 0);
  p->activation = t.Scalar<int8_t>(5, 0);
  node.params = p;
  return OkStatus();
}

Status PreparePool(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(1, 1, 1, 1));
  const PoolParams& p = ctx.node().P<PoolParams>();
  Padding pad;
  if (!CheckPadding(p.padding, &pad).ok()) return ctx.Error("unknown padding " + std::to_string(p.padding));
  if (p.activation < 0 || p.activation > 5)
    return ctx.Error("unsupported fused activation function " + std::to_string(p.activation));
  if (p.stride_w <= 0 || p.stride_h <= 0)
    return ctx.Error("strides must be positive, got stride_h " + std::to_string(p.stride_h) + ", stride_w " +
                     std::to_string(p.stride_w));
  if (p.filter_w <= 0 || p.filter_h <= 0)
    return ctx.Error("filter size must be positive, got " + std::to_string(p.filter_h) + "x" + std::to_string(p.filter_w));
  const Tensor& in = ctx.input(0);
  if (in.type != DType::kFloat32)
    return ctx.Error(std::string("input type ") + DTypeName(in.type) + " is not supported (only FLOAT32)");
  if (in.shape.size() != 4) return ctx.Error("input must be 4-D (NHWC), got shape " + DimsToString(in.shape));
  int oh = ConvOutputSize(pad, in.shape[1], p.filter_h, p.stride_h, 1);
  int ow = ConvOutputSize(pad, in.shape[2], p.filter_w, p.stride_w, 1);
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, DType::kFloat32));
  return ctx.SetOutputShape(0, {in.shape[0], oh, ow, in.shape[3]});
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
  Padding pad = static_cast<Padding>(p.padding);
  g.pad_h = ConvPadBefore(pad, g.in_h, p.filter_h, p.stride_h, 1, g.out_h);
  g.pad_w = ConvPadBefore(pad, g.in_w, p.filter_w, p.stride_w, 1, g.out_w);
  pooling::FloatActivationRange(p.activation, &g.act_lo, &g.act_hi);
  return g;
}

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
  const int64_t min_chunk = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, work_per_row));
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

}  // namespace

const OpImpl kOp_AVERAGE_POOL_2D = {ParsePool, PreparePool, EvalPool<false>, EvalPoolRef<false>, false};
const OpImpl kOp_MAX_POOL_2D = {ParsePool, PreparePool, EvalPool<true>, EvalPoolRef<true>, false};

void pooling::Pool2DParamsOf(const Node& n, int* padding, int* stride_h, int* stride_w, int* filter_h, int* filter_w, int* activation) { const PoolParams& p = n.P<PoolParams>(); *padding = p.padding; *stride_h = p.stride_h; *stride_w = p.stride_w; *filter_h = p.filter_h; *filter_w = p.filter_w; *activation = p.activation; }

}  // namespace tflite_gpu
