// GPU side of Resampler (resampler.cc has the semantics), as TFLite's GPU delegate takes it: data
// [B, H, W, C] and warp [B, H', W', 2] (rank 4), output [B, H', W', C]. One work item per output
// pixel and 4-channel slice: the point (x, y) is read from the warp, a point outside
// (-1, W) x (-1, H) (or NaN) writes zeros, otherwise the four neighbours (those outside the image
// as 0) are weighted as on the CPU: dx dy, (1 - dx)(1 - dy), dx (1 - dy), (1 - dx) dy, summed in
// the CPU kernel's order.
#include "ops/mediapipe/mp_gpu_common.h"

namespace tflite_gpu {
namespace {

using gpu::GpuBuildContext;
using gpu::GpuCheckContext;

Status CheckResampler(const GpuCheckContext& c) {
  if (c.num_inputs() != 2 || !c.has_input(0) || !c.has_input(1)) return Unimplemented("expects 2 inputs");
  const Tensor& data = c.input(0);
  const Tensor& warp = c.input(1);
  if (data.type != DType::kFloat32 || warp.type != DType::kFloat32 || c.output(0).type != DType::kFloat32)
    return Unimplemented("the data, the warp and the output must be FLOAT32");
  if (data.shape.size() != 4) return Unimplemented("the data must have shape [B, H, W, C]");
  if (warp.shape.size() != 4 || warp.shape[3] != 2)
    return Unimplemented("the warp must have shape [B, H', W', 2] (the GPU takes a 2-D grid of points)");
  return OkStatus();
}

Status BuildResampler(GpuBuildContext& ctx) {
  auto src = ctx.input(0), warp = ctx.input(1), out = ctx.output(0);
  auto& kb = ctx.NewKernel("resampler");
  kb.AddInput("src", src);
  kb.AddInput("warp", warp);
  kb.AddOutput("dst", out);
  kb.grid = {size_t(out.shape.w), size_t(out.shape.h), size_t(out.shape.slices()) * size_t(out.shape.b)};
  kb.body =
      "int x = get_global_id(0), y = get_global_id(1), bs = get_global_id(2);\n"
      "if (x >= dst_W || y >= dst_H || bs >= dst_S * dst_B) return;\n"
      "int s = bs % dst_S, b = bs / dst_S;\n"
      "float px = LD_warp(b, y, x, 0), py = LD_warp(b, y, x, 1);\n"
      "if (!(px > -1.0f && py > -1.0f && px < (float)src_W && py < (float)src_H)) {\n"
      "  WRITE_dst((float4)(0.0f), b, y, x, s);\n"
      "  return;\n"
      "}\n"
      "int fx = (int)floor(px), fy = (int)floor(py);\n"
      "int cx = fx + 1, cy = fy + 1;\n"
      "float dx = (float)cx - px, dy = (float)cy - py;\n"
      "bool fxin = fx >= 0, fyin = fy >= 0, cxin = cx < src_W, cyin = cy < src_H;\n"
      "float4 ff = (fxin && fyin) ? READ_src(b, fy, fx, s) : (float4)(0.0f);\n"
      "float4 cc = (cxin && cyin) ? READ_src(b, cy, cx, s) : (float4)(0.0f);\n"
      "float4 fc = (fxin && cyin) ? READ_src(b, cy, fx, s) : (float4)(0.0f);\n"
      "float4 cf = (cxin && fyin) ? READ_src(b, fy, cx, s) : (float4)(0.0f);\n"
      "float4 v = (dx * dy) * ff + ((1.0f - dx) * (1.0f - dy)) * cc + (dx * (1.0f - dy)) * fc +\n"
      "           ((1.0f - dx) * dy) * cf;\n"
      "WRITE_dst(v, b, y, x, s);\n";
  return OkStatus();
}

}  // namespace

const GpuOpSupport kGpu_Resampler = {CheckResampler, BuildResampler, nullptr, false};

}  // namespace tflite_gpu
