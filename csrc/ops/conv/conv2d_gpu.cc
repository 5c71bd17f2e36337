// GPU side of CONV_2D (the convolution-like generator EmitConv, conv_common_gpu.cc)
// CPU kernel: conv2d.cc.
#include "ops/conv/conv_common_gpu.h"
#include "runtime/env.h"

namespace tflite_gpu {
namespace {

using namespace conv_gpu;  // NOLINT

// ------------------------------------------------------------------ CONV_2D

// The node's geometry (conv::Conv2DGeometry, the CPU prepare's); unusable options or shapes
// keep the node on the CPU.
Status Geometry(const gpu::GpuCheckContext& c, conv::ConvGeometry* g) {
  Status s = conv::Conv2DGeometryOf(c.node(), c.input(0).shape, c.input(1).shape, g);
  return s.ok() ? s : Unimplemented(s.message());
}

Status CheckConv2D(const GpuCheckContext& c) {
  TFG_RETURN_IF_ERROR(c.InputsFloat32({0, 1, 2}));
  TFG_RETURN_IF_ERROR(c.OutputsFloat32());
  TFG_RETURN_IF_ERROR(c.Constant(1, "filter"));
  TFG_RETURN_IF_ERROR(CheckNonEmpty(c));
  conv::ConvGeometry g;
  TFG_RETURN_IF_ERROR(Geometry(c, &g));
  TFG_RETURN_IF_ERROR(CheckConstBias(c, 2, g.out_c));
  if (g.groups > 1 && !(g.f_c % 4 == 0 && (g.out_c / g.groups) % 4 == 0) &&
      int64_t(g.out_c) * g.k_h * g.k_w * g.in_c > (int64_t(1) << 26))
    return Unimplemented("grouped convolution whose groups are not 4-channel aligned is too large for the GPU");
  return OkStatus();
}

Status BuildConv2D(GpuBuildContext& ctx) {
  conv::ConvGeometry g;
  Status gs = conv::Conv2DGeometryOf(ctx.node(), ctx.cpu_input(0).shape, ctx.cpu_input(1).shape, &g);
  if (!gs.ok()) return Internal("CONV_2D: " + gs.message());
  GpuTensorRef src = ctx.input(0), dst = ctx.output(0);
  if (dst.shape.h != g.out_h || dst.shape.w != g.out_w || dst.shape.c != g.out_c || dst.shape.b != src.shape.b)
    return Internal("CONV_2D output shape differs from the geometry");
  ConvCore c = CoreOf(g);
  const float* fw = ctx.const_input(1).data();
  const int fc = g.f_c, kh = g.k_h, kw = g.k_w;
  c.W = [fw, fc, kh, kw](int oc, int ky, int kx, int ic) {
    return fw[((int64_t(oc) * kh + ky) * kw + kx) * fc + ic % fc];
  };
  c.bias = ctx.has_input(2) ? ctx.const_input(2).data() : nullptr;
  return EmitConv(ctx, "conv2d", src, dst, c);
}

// A 1x1, stride-1 convolution may compute its input (a DEPTHWISE_CONV_2D, see GpuInlineFn): each
// of its ceil(slices / FusedSliceTile) item groups computes every input value of its positions.
int64_t AcceptInline(GpuBuildContext& ctx, int input) {
  if (input != 0) return 0;
  conv::ConvGeometry g;
  if (!conv::Conv2DGeometryOf(ctx.node(), ctx.cpu_input(0).shape, ctx.cpu_input(1).shape, &g).ok()) return 0;
  if (g.k_h != 1 || g.k_w != 1 || g.stride_h != 1 || g.stride_w != 1 || g.pad_t != 0 || g.pad_l != 0 || g.groups != 1)
    return 0;
  const int dS = (g.out_c + 3) / 4;
  // The split-K kernel stages the computed values per work group; where it would not run (layers
  // the GEMM serves), the pair keeps two kernels. TFLITE_GPU_CONV_SPLITK=0: the direct fused kernel.
  if (env::ConvSplitK() != "0")
    return SplitKComputedTimes(ctx, int64_t(g.batch) * g.out_h * g.out_w, dS, (g.in_c + 3) / 4);
  return CeilDiv(dS, FusedSliceTile(dS));
}

}  // namespace

const GpuOpSupport kGpu_CONV_2D = {CheckConv2D, BuildConv2D, nullptr, false, nullptr, nullptr, nullptr, AcceptInline};

}  // namespace tflite_gpu
