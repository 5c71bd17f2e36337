// GPU side of TransformLandmarks (transform_landmarks.cc has the semantics): one work item per
// 4-channel output slice; each lane c belongs to landmark c / dims, component c % dims: x' and y'
// from the landmark's (x, y) and the matrix's upper 2x4 block in the CPU kernel's order
// (m0 x + m1 y + m2 0 + (m3 s) 1), z copied. Landmarks may straddle slices (version 1 packs them
// along channels), so lanes read scalars (LD_).
#include "ops/mediapipe/mp_gpu_common.h"
#include "ops/mediapipe/mp_params.h"

namespace tflite_gpu {
namespace {

using gpu::GpuBuildContext;
using gpu::GpuCheckContext;

Status CheckTl(const GpuCheckContext& c) {
  TFG_RETURN_IF_ERROR(gpu::ExpectArity(c, 2, 1));
  TFG_RETURN_IF_ERROR(mp::CheckFloat32(c.input(0), "the landmarks"));
  TFG_RETURN_IF_ERROR(mp::CheckFloat32(c.output(0), "the output"));
  TFG_RETURN_IF_ERROR(c.Rank4OrLess(c.input(0), "the landmarks"));
  return mp::CheckMatrixInput(c, 1);
}

Status BuildTl(GpuBuildContext& ctx) {
  const auto& p = ctx.node().P<mp::TlParams>();
  const Dims& shape = ctx.cpu_input(0).shape;
  const int dims = p.version == 2 ? shape.back() : p.dims;
  auto in = ctx.input(0), mat = ctx.input(1), out = ctx.output(0);
  auto& kb = ctx.NewKernel("transform_landmarks");
  kb.AddInput("lm", in);
  kb.AddInput("mat", mat);
  kb.AddOutput("dst", out);
  std::string b = gpu::PerSliceGrid(kb, out.shape);
  const int rows[2][4] = {{0, 1, 2, 3}, {4, 5, 6, 7}};
  for (int r = 0; r < 2; ++r)
    for (int k = 0; k < 4; ++k) {
      std::string e = mp::FlatElement("mat", mat.shape, rows[r][k]);
      if (k == 3) e = "(" + e + " * " + gpu::FloatLiteral(p.scale) + ")";  // m3 * scale, as the CPU's r[3]
      b += "float r" + std::to_string(r) + std::to_string(k) + " = " + e + ";\n";
    }
  b += "float res[4];\n"
       "for (int k = 0; k < 4; ++k) {\n"
       "  int c = s * 4 + k;\n"
       "  if (c >= dst_C) { res[k] = 0.0f; continue; }\n"
       "  int j = c / DIMS, comp = c - j * DIMS;\n"
       "  if (comp == 2) { res[k] = LD_lm(b, y, x, c); continue; }\n"
       "  float lx = LD_lm(b, y, x, j * DIMS), ly = LD_lm(b, y, x, j * DIMS + 1);\n"
       "  res[k] = comp == 0 ? r00 * lx + r01 * ly + r02 * 0.0f + r03 * 1.0f\n"
       "                     : r10 * lx + r11 * ly + r12 * 0.0f + r13 * 1.0f;\n"
       "}\n"
       "WRITE_dst((float4)(res[0], res[1], res[2], res[3]), b, y, x, s);\n";
  kb.AddDefine("#define DIMS " + std::to_string(dims));
  kb.body = b;
  return OkStatus();
}

}  // namespace

const GpuOpSupport kGpu_TransformLandmarks = {CheckTl, BuildTl, nullptr, false};

}  // namespace tflite_gpu
