// DEPTHWISE_CONV_2D (v1-7), float32: NHWC input, filter [1, KH, KW, C_out], optional bias,
// SAME/VALID padding, strides, dilation, fused activation. As TFLite, the depth multiplier is
// derived from the shapes (C_out / C_in); the option value is not trusted.
//
// Fast path (multiplier 1): a direct NHWC kernel vectorised over channels (depthwise_kernel.inc,
// AVX-512 / AVX2 / SSE2 chosen at run time) with a 3x3 specialisation keeping the weights in
// registers and a 5x5 / generic interior kernel computing several pixels per weight load; rows
// are spread over the pool. Multiplier > 1 uses a plain loop nest on the pool.
#include "ops/conv/conv_common.h"
#include "ops/conv/gemm.h"
#include "ops/conv/quantized.h"
#include "ops/simd.h"

namespace tflite_gpu {
namespace {

struct DwArgs {
  const float* in;
  const float* w;
  const float* bias;
  float* out;
  int in_h, in_w, c;
  int out_h, out_w;
  int k_h, k_w;
  int sh, sw, dh, dw;
  int pad_t, pad_l;
  float lo, hi;
  bool clamp;
};

namespace dw_scalar {
using V = simd::Scalar;
#include "ops/conv/depthwise_kernel.inc"
}  // namespace dw_scalar
#if TFG_X86
namespace dw_sse2 {
using V = simd::Sse2;
#include "ops/conv/depthwise_kernel.inc"
}  // namespace dw_sse2
#endif
}  // namespace
}  // namespace tflite_gpu

#if TFG_X86
TFG_TARGET_AVX2_BEGIN
namespace tflite_gpu {
namespace dw_avx2 {
using V = simd::Avx2;
#include "ops/conv/depthwise_kernel.inc"
}  // namespace dw_avx2
}  // namespace tflite_gpu
TFG_TARGET_END
TFG_TARGET_AVX512_BEGIN
namespace tflite_gpu {
namespace dw_avx512 {
using V = simd::Avx512;
#include "ops/conv/depthwise_kernel.inc"
}  // namespace dw_avx512
}  // namespace tflite_gpu
TFG_TARGET_END
#endif

namespace tflite_gpu {
namespace {

using DwRowsFn = void (*)(const DwArgs&, int64_t, int64_t);

DwRowsFn ActiveDwRows() {
  switch (simd::ActiveIsa()) {
#if TFG_X86
    case simd::Isa::kAvx512: return dw_avx512::DwRows;
    case simd::Isa::kAvx2: return dw_avx2::DwRows;
    case simd::Isa::kSse2: return dw_sse2::DwRows;
#endif
    default: return dw_scalar::DwRows;
  }
}

struct DwParams : conv::WindowParams {
  int depth_multiplier = 0;
};

using DwState = conv::ConvGeometry;  // the node state: the convolution's geometry

Status Parse(const OptionsView& raw, Node& node) {
  OptionsView o = conv::Opts(raw, conv::kDepthwiseConv2DOptions);
  auto p = std::make_shared<DwParams>();
  conv::ReadWindow(o, /*act_field=*/4, /*dil_w_field=*/5, p.get());
  p->depth_multiplier = o.Get<int32_t>(3, 0);
  node.params = p;
  return OkStatus();
}

Status Prepare(OpContext& ctx) {
  const DwParams& p = ctx.node().P<DwParams>();
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 3, 1, 1));
  if (qconv::IsQuantized(ctx)) return qconv::PrepareDepthwise(ctx, p);
  const Tensor& in = ctx.input(0);
  const Tensor& f = ctx.input(1);
  TFG_RETURN_IF_ERROR(conv::CheckFloat(ctx, in, "input"));
  TFG_RETURN_IF_ERROR(conv::CheckFloat(ctx, f, "filter"));
  if (!ctx.node().user_data) ctx.node().user_data = std::make_shared<DwState>();
  DwState* s = ctx.node().U<DwState>();
  Status gs = conv::DepthwiseGeometry(p, in.shape, f.shape, s);
  if (!gs.ok()) return ctx.Error(gs.message());
  TFG_RETURN_IF_ERROR(conv::CheckBias(ctx, s->out_c));
  TFG_RETURN_IF_ERROR(conv::CheckOutputFloat(ctx));
  return ctx.SetOutputShape(0, {s->batch, s->out_h, s->out_w, s->out_c});
}

// Output rows [r0, r1) (row = b * out_h + oy), any multiplier, scalar.
void DwGenericRows(const DwState& s, const DwParams& p, const float* in, const float* f, const float* bias,
                   float* out, int64_t r0, int64_t r1) {
  std::vector<float> acc(s.out_c);
  for (int64_t row = r0; row < r1; ++row) {
    const int64_t b = row / s.out_h;
    const int oy = int(row % s.out_h);
    for (int ox = 0; ox < s.out_w; ++ox) {
      for (int oc = 0; oc < s.out_c; ++oc) acc[oc] = 0.f;
      for (int ky = 0; ky < s.k_h; ++ky) {
        const int iy = oy * p.stride_h - s.pad_t + ky * p.dil_h;
        if (iy < 0 || iy >= s.in_h) continue;
        for (int kx = 0; kx < s.k_w; ++kx) {
          const int ix = ox * p.stride_w - s.pad_l + kx * p.dil_w;
          if (ix < 0 || ix >= s.in_w) continue;
          const float* ip = in + ((b * s.in_h + iy) * s.in_w + ix) * int64_t(s.in_c);
          const float* fp = f + (int64_t(ky) * s.k_w + kx) * s.out_c;
          for (int ic = 0; ic < s.in_c; ++ic) {
            const float v = ip[ic];
            for (int m = 0; m < s.mult; ++m) acc[ic * s.mult + m] += v * fp[ic * s.mult + m];
          }
        }
      }
      float* op = out + ((b * s.out_h + oy) * s.out_w + ox) * int64_t(s.out_c);
      for (int oc = 0; oc < s.out_c; ++oc) op[oc] = conv::Clamp(acc[oc] + (bias ? bias[oc] : 0.f), s.lo, s.hi);
    }
  }
}

Status Eval(OpContext& ctx) {
  if (qconv::IsQuantized(ctx)) return qconv::EvalDepthwise(ctx, false);
  const DwParams& p = ctx.node().P<DwParams>();
  const DwState& s = *ctx.node().U<DwState>();
  const float* in = ctx.input(0).as<float>();
  const float* f = ctx.input(1).as<float>();
  const Tensor* bt = ctx.optional_input(2);
  const float* bias = bt ? bt->as<float>() : nullptr;
  float* out = ctx.output(0).as<float>();
  const int64_t rows = int64_t(s.batch) * s.out_h;
  if (rows == 0 || s.out_w == 0 || s.out_c == 0) return OkStatus();
  // Tasks of ~256K multiply-adds (tens of microseconds), at least two per thread.
  const int64_t work = rows * s.out_w * s.out_c * s.k_h * s.k_w;
  const int64_t tasks = work < (1 << 17) ? 1 : std::max<int64_t>(2 * gemm::NumSlots(ctx.pool()), work >> 18);
  if (s.mult != 1) {
    gemm::ParallelRanges(ctx.pool(), rows, tasks,
                         [&](int64_t r0, int64_t r1) { DwGenericRows(s, p, in, f, bias, out, r0, r1); }, /*affine=*/true);
    return OkStatus();
  }
  DwArgs a;
  a.in = in;
  a.w = f;
  a.bias = bias;
  a.out = out;
  a.in_h = s.in_h;
  a.in_w = s.in_w;
  a.c = s.in_c;
  a.out_h = s.out_h;
  a.out_w = s.out_w;
  a.k_h = s.k_h;
  a.k_w = s.k_w;
  a.sh = p.stride_h;
  a.sw = p.stride_w;
  a.dh = p.dil_h;
  a.dw = p.dil_w;
  a.pad_t = s.pad_t;
  a.pad_l = s.pad_l;
  a.lo = s.lo;
  a.hi = s.hi;
  a.clamp = s.lo > -std::numeric_limits<float>::infinity() || s.hi < std::numeric_limits<float>::infinity();
  static const DwRowsFn fn = ActiveDwRows();
  gemm::ParallelRanges(ctx.pool(), rows, tasks, [&](int64_t r0, int64_t r1) { fn(a, r0, r1); }, /*affine=*/true);
  return OkStatus();
}

// Plain reference kernel (TFLite reference_ops::DepthwiseConv).
Status EvalRef(OpContext& ctx) {
  if (qconv::IsQuantized(ctx)) return qconv::EvalDepthwise(ctx, true);
  const DwParams& p = ctx.node().P<DwParams>();
  const DwState& s = *ctx.node().U<DwState>();
  const float* in = ctx.input(0).as<float>();
  const float* f = ctx.input(1).as<float>();
  const Tensor* bt = ctx.optional_input(2);
  const float* bias = bt ? bt->as<float>() : nullptr;
  float* out = ctx.output(0).as<float>();
  for (int b = 0; b < s.batch; ++b)
    for (int oy = 0; oy < s.out_h; ++oy)
      for (int ox = 0; ox < s.out_w; ++ox)
        for (int ic = 0; ic < s.in_c; ++ic)
          for (int m = 0; m < s.mult; ++m) {
            const int oc = ic * s.mult + m;
            float total = 0.f;
            for (int ky = 0; ky < s.k_h; ++ky) {
              const int iy = oy * p.stride_h - s.pad_t + ky * p.dil_h;
              if (iy < 0 || iy >= s.in_h) continue;
              for (int kx = 0; kx < s.k_w; ++kx) {
                const int ix = ox * p.stride_w - s.pad_l + kx * p.dil_w;
                if (ix < 0 || ix >= s.in_w) continue;
                total += in[((int64_t(b) * s.in_h + iy) * s.in_w + ix) * s.in_c + ic] *
                         f[(int64_t(ky) * s.k_w + kx) * s.out_c + oc];
              }
            }
            if (bias) total += bias[oc];
            out[((int64_t(b) * s.out_h + oy) * s.out_w + ox) * s.out_c + oc] = conv::Clamp(total, s.lo, s.hi);
          }
  return OkStatus();
}

}  // namespace

const OpImpl kOp_DEPTHWISE_CONV_2D = {Parse, Prepare, Eval, EvalRef, /*fold_constants*/ false};

conv::GpuConvOptions conv::DepthwiseOptionsOf(const Node& n) { return conv::GpuOptionsOf(n.P<DwParams>()); }

// Rank-4 input and filter [1, KH, KW, C_out], C_out a multiple of C_in.
Status conv::DepthwiseGeometry(const WindowParams& p, const Dims& in, const Dims& f, ConvGeometry* s) {
  if (in.size() != 4) return InvalidArgument("input must have rank 4, got shape " + Str(in));
  if (f.size() != 4) return InvalidArgument("filter must have rank 4, got shape " + Str(f));
  std::string we = WindowError(p.padding, p.stride_w, p.stride_h, p.dil_w, p.dil_h);
  if (!we.empty()) return InvalidArgument(we);
  if (!ActivationBounds(p.act, &s->lo, &s->hi)) return InvalidArgument("unsupported fused activation " + std::to_string(p.act));
  if (f[0] != 1) return InvalidArgument("filter shape " + Str(f) + " must have 1 as its first dimension");
  s->act = p.act;
  s->stride_h = p.stride_h;
  s->stride_w = p.stride_w;
  s->dil_h = p.dil_h;
  s->dil_w = p.dil_w;
  s->batch = in[0];
  s->in_h = in[1];
  s->in_w = in[2];
  s->in_c = in[3];
  s->k_h = f[1];
  s->k_w = f[2];
  s->out_c = f[3];
  s->f_c = 1;
  s->groups = 1;
  if (s->k_h <= 0 || s->k_w <= 0) return InvalidArgument("filter shape " + Str(f) + " has an empty spatial dimension");
  if (s->in_c <= 0 || s->out_c % s->in_c != 0)
    return InvalidArgument("filter channels (" + std::to_string(s->out_c) + ") must be a multiple of the input channels (" +
                           std::to_string(s->in_c) + ")");
  s->mult = s->out_c / s->in_c;
  WindowOutput(p.padding, s->in_h, s->in_w, s->k_h, s->k_w, p.stride_h, p.stride_w, p.dil_h, p.dil_w, &s->out_h,
               &s->out_w, &s->pad_t, &s->pad_l);
  return OkStatus();
}

Status conv::DepthwiseGeometryOf(const Node& n, const Dims& in, const Dims& f, ConvGeometry* g) {
  return DepthwiseGeometry(n.P<DwParams>(), in, f, g);
}

}  // namespace tflite_gpu
