// GPU side of TransformTensorBilinear (transform_tensor_bilinear.cc has the semantics): one work
// item per output pixel and 4-channel slice. The sample point is computed from the 8 matrix
// values the op reads (the matrix is a device tensor, usually made by Landmarks2TransformMatrix
// in the same partition) in the CPU kernel's order: tx = m0 x + m1 y + m2 0 + m3 1 (so a NaN or
// inf entry lands outside as on the CPU), version 2's half-pixel correction first (in float; the
// CPU adds it in double, a last-bit difference). Outside [0, W-1] x [0, H-1] (or NaN) writes
// zeros; inside, the four neighbours are read with those past the last row / column as 0.
#include "ops/mediapipe/mp_gpu_common.h"
#include "ops/mediapipe/mp_params.h"

namespace tflite_gpu {
namespace {

using gpu::GpuBuildContext;
using gpu::GpuCheckContext;

Status CheckTtb(const GpuCheckContext& c) {
  TFG_RETURN_IF_ERROR(gpu::ExpectArity(c, 2, 1));
  const Tensor& in = c.input(0);
  TFG_RETURN_IF_ERROR(mp::CheckFloat32(in, "the data"));
  TFG_RETURN_IF_ERROR(mp::CheckFloat32(c.output(0), "the output"));
  if (in.shape.size() != 4 || in.shape[0] != 1) return Unimplemented("the data must have shape [1, H, W, C]");
  return mp::CheckMatrixInput(c, 1);
}

Status BuildTtb(GpuBuildContext& ctx) {
  const auto& p = ctx.node().P<mp::TtbParams>();
  auto in = ctx.input(0), mat = ctx.input(1), out = ctx.output(0);
  auto& kb = ctx.NewKernel("transform_tensor_bilinear");
  kb.AddInput("src", in);
  kb.AddInput("mat", mat);
  kb.AddOutput("dst", out);
  kb.grid = {size_t(out.shape.w), size_t(out.shape.h), size_t(out.shape.slices())};
  std::string b =
      "int x = get_global_id(0), y = get_global_id(1), s = get_global_id(2);\n"
      "if (x >= dst_W || y >= dst_H || s >= dst_S) return;\n";
  for (int k = 0; k < 8; ++k) b += "float m" + std::to_string(k) + " = " + mp::FlatElement("mat", mat.shape, k) + ";\n";
  if (p.version == 2)
    b += "m3 += m0 * 0.5f + m1 * 0.5f - 0.5f;\n"
         "m7 += m4 * 0.5f + m5 * 0.5f - 0.5f;\n";
  b += "float fxo = (float)x, fyo = (float)y;\n"
       "float tx = m0 * fxo + m1 * fyo + m2 * 0.0f + m3 * 1.0f;\n"
       "float ty = m4 * fxo + m5 * fyo + m6 * 0.0f + m7 * 1.0f;\n"
       "if (!(tx >= 0.0f && tx <= (float)(src_W - 1) && ty >= 0.0f && ty <= (float)(src_H - 1))) {\n"
       "  WRITE_dst((float4)(0.0f), 0, y, x, s);\n"
       "  return;\n"
       "}\n"
       "float flx = floor(tx), fly = floor(ty);\n"
       "int x0 = (int)flx, y0 = (int)fly;\n"
       "float rw = tx - flx, lw = ty - fly;\n"
       "float4 q11 = READ_src(0, y0, x0, s);\n"
       "float4 q21 = x0 + 1 < src_W ? READ_src(0, y0, x0 + 1, s) : (float4)(0.0f);\n"
       "float4 q12 = y0 + 1 < src_H ? READ_src(0, y0 + 1, x0, s) : (float4)(0.0f);\n"
       "float4 q22 = (x0 + 1 < src_W && y0 + 1 < src_H) ? READ_src(0, y0 + 1, x0 + 1, s) : (float4)(0.0f);\n"
       "float4 upper = (1.0f - rw) * q11 + rw * q21;\n"
       "float4 lower = (1.0f - rw) * q12 + rw * q22;\n"
       "WRITE_dst(lw * lower + (1.0f - lw) * upper, 0, y, x, s);\n";
  kb.body = b;
  return OkStatus();
}

}  // namespace

const GpuOpSupport kGpu_TransformTensorBilinear = {CheckTtb, BuildTtb, nullptr, false};

}  // namespace tflite_gpu
