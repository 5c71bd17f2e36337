// GPU side of Landmarks2TransformMatrix (landmarks_to_matrix.cc has the semantics, both versions):
// a single work item reads the landmarks it needs and writes the 4x4 matrix as four rows (the
// [1, 4, 4] output is (1, 1, 4, 4) on the device), so that a face-mesh-with-attention graph keeps
// Landmarks2TransformMatrix -> TransformTensorBilinear / TransformLandmarks in one partition.
// Arithmetic is float in the CPU kernel's order; sub-expressions that depend only on the
// options (the to_relative / to_absolute entries, the crop translation) are computed on the host
// exactly as the CPU computes them and inlined. atan / atan2 / sin / cos are OpenCL's (a few ulp
// from the host libm's).
#include "ops/mediapipe/mp_gpu_common.h"
#include "ops/mediapipe/mp_params.h"

namespace tflite_gpu {
namespace {

using gpu::GpuBuildContext;
using gpu::GpuCheckContext;

std::string F(float v) { return gpu::FloatLiteral(v); }

Status CheckL2tm(const GpuCheckContext& c) {
  TFG_RETURN_IF_ERROR(gpu::ExpectArity(c, 1, 1));
  TFG_RETURN_IF_ERROR(mp::CheckFloat32(c.input(0), "the landmarks"));
  TFG_RETURN_IF_ERROR(mp::CheckFloat32(c.output(0), "the output"));
  TFG_RETURN_IF_ERROR(c.Rank4OrLess(c.input(0), "the landmarks"));
  if (c.input(0).num_elements() >= (int64_t(1) << 30)) return Unimplemented("the landmarks tensor is too large");
  if (c.output(0).num_elements() != 16) return Unimplemented("the output must hold 16 values");
  return OkStatus();
}

Status BuildL2tm(GpuBuildContext& ctx) {
  const auto& p = ctx.node().P<mp::L2tmParams>();
  auto in = ctx.input(0), out = ctx.output(0);
  auto& kb = ctx.NewKernel("landmarks_to_transform_matrix");
  kb.AddInput("lm", in);
  kb.AddOutput("dst", out);
  kb.grid = {1, 1, 1};
  kb.local = {1, 1, 1};
  // Flat element k of the landmarks through LD_ (row-major = the device's BHWC order).
  kb.AddDefine("#define LMF(k) LD_lm((k) / (lm_C * lm_W * lm_H), ((k) / (lm_C * lm_W)) % lm_H, ((k) / lm_C) % lm_W, (k) % lm_C)");
  std::string subset;
  for (size_t i = 0; i < p.subset.size(); ++i) subset += (i ? ", " : "") + std::to_string(p.subset[i]);
  const std::string n_sub = std::to_string(p.subset.size());
  std::string b =
      "if (get_global_id(0) != 0) return;\n"
      "const int subset_[" + n_sub + "] = {" + subset + "};\n"
      "float lx = LMF(" + std::to_string(p.left * 3) + "), ly = LMF(" + std::to_string(p.left * 3 + 1) + ");\n"
      "float rx = LMF(" + std::to_string(p.right * 3) + "), ry = LMF(" + std::to_string(p.right * 3 + 1) + ");\n";
  if (p.version == 1) {
    const float range = float(p.landmarks_range);
    const float trx = 2.f / (float(p.out_w) - 1.f), try_ = 2.f / (float(p.out_h) - 1.f);
    const float hw = (float(p.in_w) - 1.f) / 2.f, hh = (float(p.in_h) - 1.f) / 2.f;
    b += "float a = -atan((ry - ly) / (rx - lx));\n"
         "float ca = cos(a), sa = sin(a);\n"
         "float maxx = -100000.0f, maxy = -100000.0f, minx = 100000.0f, miny = 100000.0f;\n"
         "for (int i = 0; i < " + n_sub + "; ++i) {\n"
         "  int idx = subset_[i];\n"
         "  float x = LMF(idx * 3), y = LMF(idx * 3 + 1);\n"
         "  float u = x * ca - y * sa, v = x * sa + y * ca;\n"
         "  maxx = (maxx < u) ? u : maxx; maxy = (maxy < v) ? v : maxy;\n"
         "  minx = (u < minx) ? u : minx; miny = (v < miny) ? v : miny;\n"
         "}\n"
         "float range = " + F(range) + ";\n"
         "float bw = (maxx - minx) * " + F(p.bbox_mult) + ", bh = (maxy - miny) * " + F(p.bbox_mult) + ";\n"
         "float mx = (maxx + minx) / 2.0f, my = (maxy + miny) / 2.0f;\n"
         "float cn = cos(-a), sn = sin(-a);\n"
         "float rmx = mx * cn - my * sn, rmy = mx * sn + my * cn;\n"
         "float S[3][3] = {{bw / range, 0.0f, 0.0f}, {0.0f, bh / range, 0.0f}, {0.0f, 0.0f, 1.0f}};\n"
         "float R[3][3] = {{cn, -sn, (rmx / range) * 2.0f - 1.0f}, {sn, cn, (rmy / range) * 2.0f - 1.0f}, {0.0f, 0.0f, 1.0f}};\n"
         "float TR[3][3] = {{" + F(trx) + ", 0.0f, -1.0f}, {0.0f, " + F(try_) + ", -1.0f}, {0.0f, 0.0f, 1.0f}};\n"
         "float T[3][3] = {{" + F(hw) + ", 0.0f, " + F(hw) + "}, {0.0f, " + F(hh) + ", " + F(hh) + "}, {0.0f, 0.0f, 1.0f}};\n"
         "float U[3][3];\n"
         "#define MUL3(A, B) for (int i = 0; i < 3; ++i) for (int j = 0; j < 3; ++j) { float s_ = 0.0f; "
         "for (int k = 0; k < 3; ++k) s_ += A[i][k] * B[k][j]; U[i][j] = s_; } "
         "for (int i = 0; i < 3; ++i) for (int j = 0; j < 3; ++j) T[i][j] = U[i][j];\n"
         "MUL3(T, R)\n"
         "MUL3(T, S)\n"
         "MUL3(T, TR)\n"
         "#undef MUL3\n"
         "WRITE_dst((float4)(T[0][0], T[0][1], 0.0f, T[0][2]), 0, 0, 0, 0);\n"
         "WRITE_dst((float4)(T[1][0], T[1][1], 0.0f, T[1][2]), 0, 0, 1, 0);\n"
         "WRITE_dst((float4)(T[2][0], T[2][1], T[2][2], 0.0f), 0, 0, 2, 0);\n"
         "WRITE_dst((float4)(0.0f, 0.0f, 0.0f, 1.0f), 0, 0, 3, 0);\n";
  } else {
    const float tx = -1.f * (float(p.output_width) / 2.f), ty = -1.f * (float(p.output_height) / 2.f);
    b += "float r = " + F(p.target_rot) + " - atan2(ry - ly, rx - lx);\n"
         "float c = cos(r), s = sin(r);\n"
         "float maxx = 0.0f, maxy = 0.0f, minx = 0.0f, miny = 0.0f;\n"
         "for (int i = 0; i < " + n_sub + "; ++i) {\n"
         "  int idx = subset_[i];\n"
         "  float x = LMF(idx * 3), y = LMF(idx * 3 + 1);\n"
         "  float u = c * x + -s * y + 0.0f * 1.0f, v = s * x + c * y + 0.0f * 1.0f;\n"
         "  if (i == 0) { maxx = minx = u; maxy = miny = v; continue; }\n"
         "  if (maxx < u) maxx = u;\n"
         "  if (maxy < v) maxy = v;\n"
         "  if (minx > u) minx = u;\n"
         "  if (miny > v) miny = v;\n"
         "}\n"
         "float crop_w = maxx - minx, crop_h = maxy - miny;\n"
         "float mx = (minx + maxx) / 2.0f, my = (miny + maxy) / 2.0f;\n"
         "float ci = cos(-r), si = sin(-r);\n"
         "float cx = ci * mx + -si * my + 0.0f * 1.0f, cy = si * mx + ci * my + 0.0f * 1.0f;\n"
         "float rn = -r;\n"
         "float cr = cos(rn), sr = sin(rn);\n"
         "float sx = " + F(p.scale_x) + " * crop_w / " + F(float(p.output_width)) + ";\n"
         "float sy = " + F(p.scale_y) + " * crop_h / " + F(float(p.output_height)) + ";\n"
         "float M[4][4] = {{1.0f, 0.0f, 0.0f, cx}, {0.0f, 1.0f, 0.0f, cy}, {0.0f, 0.0f, 1.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 1.0f}};\n"
         "float B1[4][4] = {{cr, -sr, 0.0f, 0.0f}, {sr, cr, 0.0f, 0.0f}, {0.0f, 0.0f, 1.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 1.0f}};\n"
         "float B2[4][4] = {{sx, 0.0f, 0.0f, 0.0f}, {0.0f, sy, 0.0f, 0.0f}, {0.0f, 0.0f, 1.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 1.0f}};\n"
         "float B3[4][4] = {{1.0f, 0.0f, 0.0f, " + F(tx) + "}, {0.0f, 1.0f, 0.0f, " + F(ty) + "}, {0.0f, 0.0f, 1.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 1.0f}};\n"
         "float U[4][4];\n"
         "#define MUL4(B) for (int i = 0; i < 4; ++i) for (int j = 0; j < 4; ++j) { float acc = 0.0f; "
         "for (int k = 0; k < 4; ++k) acc += M[i][k] * B[k][j]; U[i][j] = acc; } "
         "for (int i = 0; i < 4; ++i) for (int j = 0; j < 4; ++j) M[i][j] = U[i][j];\n"
         "MUL4(B1)\n"
         "MUL4(B2)\n"
         "MUL4(B3)\n"
         "#undef MUL4\n"
         "for (int i = 0; i < 4; ++i) WRITE_dst((float4)(M[i][0], M[i][1], M[i][2], M[i][3]), 0, 0, i, 0);\n";
  }
  kb.body = b;
  return OkStatus();
}

}  // namespace

const GpuOpSupport kGpu_Landmarks2TransformMatrix = {CheckL2tm, BuildL2tm, nullptr, false};

}  // namespace tflite_gpu
