// L2_POOL_2D (float32, NHWC), TFLite semantics: out = act(sqrt(sum of squares / count)) over the
// window clipped to the input (count = in-bounds elements), output size and leading pad as
// CONV_2D with dilation 1; the fused activation clamps as TFLite's CalculateActivationRange.
#include <algorithm>
#include <cmath>

#include "ops/op_registry.h"
#include "ops/pooling/pool_common.h"
#include "runtime/thread_pool.h"

namespace tflite_gpu {
namespace {

Status PrepareL2(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(1, 1, 1, 1));
  if (!ctx.has_input(0)) return ctx.Error("missing input");
  const pooling::Pool2DParams& p = ctx.node().P<pooling::Pool2DParams>();
  Padding pad;
  TFG_RETURN_IF_ERROR(pooling::CheckPool2D(ctx, p, &pad));
  const Tensor& in = ctx.input(0);
  TFG_RETURN_IF_ERROR(ctx.CheckType(in, DType::kFloat32, "input"));
  TFG_RETURN_IF_ERROR(ctx.CheckType(ctx.output(0), DType::kFloat32, "output"));
  if (in.shape.size() != 4) return ctx.Error("input must be 4-D (NHWC), got shape " + DimsToString(in.shape));
  return ctx.SetOutputShape(0, pooling::Pool2DOutputShape(p, pad, in.shape));
}

template <bool kRef>
Status EvalL2(OpContext& ctx) {
  const pooling::Pool2DParams& p = ctx.node().P<pooling::Pool2DParams>();
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  const int n = in.shape[0], ih = in.shape[1], iw = in.shape[2], c = in.shape[3];
  const int oh = out.shape[1], ow = out.shape[2];
  int ph, pw;
  pooling::Pool2DPads(p, ih, iw, oh, ow, &ph, &pw);
  float lo, hi;
  pooling::FloatActivationRange(p.activation, &lo, &hi);
  const float* x = in.as<float>();
  float* y = out.as<float>();
  auto rows = [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {  // r = b * oh + oy
      const int b = int(r / oh), oy = int(r % oh);
      const int64_t y0 = int64_t(oy) * p.stride_h - ph;
      const int64_t fy0 = std::max<int64_t>(0, -y0), fy1 = std::min<int64_t>(p.filter_h, ih - y0);
      for (int ox = 0; ox < ow; ++ox) {
        const int64_t x0 = int64_t(ox) * p.stride_w - pw;
        const int64_t fx0 = std::max<int64_t>(0, -x0), fx1 = std::min<int64_t>(p.filter_w, iw - x0);
        float* yo = y + ((int64_t(b) * oh + oy) * ow + ox) * c;
        if (kRef) {
          for (int ch = 0; ch < c; ++ch) {
            float sum = 0.f;
            int count = 0;
            for (int64_t fy = fy0; fy < fy1; ++fy)
              for (int64_t fx = fx0; fx < fx1; ++fx) {
                const float v = x[((int64_t(b) * ih + (y0 + fy)) * iw + (x0 + fx)) * c + ch];
                sum += v * v;
                ++count;
              }
            yo[ch] = pooling::Clamp(std::sqrt(sum / float(count)), lo, hi);
          }
        } else {
          // The output pixel's channels accumulate the sums of squares in place.
          std::fill(yo, yo + c, 0.f);
          const int64_t count = std::max<int64_t>(0, fy1 - fy0) * std::max<int64_t>(0, fx1 - fx0);
          for (int64_t fy = fy0; fy < fy1; ++fy)
            for (int64_t fx = fx0; fx < fx1; ++fx) {
              const float* xp = x + ((int64_t(b) * ih + (y0 + fy)) * iw + (x0 + fx)) * c;
              for (int ch = 0; ch < c; ++ch) yo[ch] += xp[ch] * xp[ch];
            }
          for (int ch = 0; ch < c; ++ch) yo[ch] = pooling::Clamp(std::sqrt(yo[ch] / float(count)), lo, hi);
        }
      }
    }
  };
  if (kRef) rows(0, int64_t(n) * oh);
  else ParallelFor(ctx.pool(), int64_t(n) * oh, rows, MinChunkFor(int64_t(ow) * c * p.filter_h * p.filter_w));
  return OkStatus();
}

}  // namespace

const OpImpl kOp_L2_POOL_2D = {pooling::ParsePool2D, PrepareL2, EvalL2<false>, EvalL2<true>, false};

}  // namespace tflite_gpu
