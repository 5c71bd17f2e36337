// GPU side of MaxPoolingWithArgmax2D and MaxUnpooling2D (pool_argmax.cc has the semantics).
//
// MaxPoolingWithArgmax2D: one work item per output pixel and 4-channel slice, scanning the
// in-bounds window in (y, x) order; a lane takes a value only when it is greater than its best so
// far, so the first maximum wins and NaN never does, as on the CPU. Both outputs are written by
// the one kernel (indices = fy * filter_w + fx + 0.1 as float).
//
// MaxUnpooling2D is a scatter on the CPU (each input value written where its index points, later
// writes winning); here it is a gather that gives the same result for every index, valid or not:
// output (oy, ox) of a lane takes the value of the last input element, in the CPU's (y, x)
// order, whose index decodes to it. An index decodes to a column offset idx % fw in (-fw, fw)
// (C's truncating division, int(idx) as the CPU converts it), so only the input columns within
// (ox + pad - fw, ox + pad + fw) / stride can reach ox; the row offset idx / fw is unbounded, so
// every input row is a candidate. The scan runs from the last candidate backwards and stops once
// every lane has found its writer (for an output no index points to, it reads the whole column).
// NaN and |idx| >= 1e9 write nothing, as on the CPU.
#include <limits>

#include "ops/mediapipe/mp_gpu_common.h"
#include "ops/mediapipe/mp_params.h"

namespace tflite_gpu {
namespace {

using gpu::GpuBuildContext;
using gpu::GpuCheckContext;

std::string I(int64_t v) { return std::to_string(v); }

Status Check4DFloat(const Tensor& t, const char* what) { return mp::CheckFloat32(t, what, /*rank4=*/true); }

Status CheckArgmax(const GpuCheckContext& c) {
  TFG_RETURN_IF_ERROR(gpu::ExpectArity(c, 1, 2));
  TFG_RETURN_IF_ERROR(Check4DFloat(c.input(0), "the input"));
  TFG_RETURN_IF_ERROR(Check4DFloat(c.output(0), "the output"));
  return Check4DFloat(c.output(1), "the indices output");
}

Status BuildArgmax(GpuBuildContext& ctx) {
  const auto& p = ctx.node().P<mp::MpPoolParams>();
  auto in = ctx.input(0), out = ctx.output(0), ind = ctx.output(1);
  auto& kb = ctx.NewKernel("max_pool_with_argmax");
  kb.AddInput("src", in);
  kb.AddOutput("dst", out);
  kb.AddOutput("ind", ind);
  kb.body =
      gpu::PerSliceGrid(kb, out.shape) +
      "int iy0 = y * " + I(p.stride_h) + " - " + I(p.pad_h) + ", ix0 = x * " + I(p.stride_w) + " - " + I(p.pad_w) + ";\n"
      "int fy0 = max(0, -iy0), fy1 = min(" + I(p.filter_h) + ", src_H - iy0);\n"
      "int fx0 = max(0, -ix0), fx1 = min(" + I(p.filter_w) + ", src_W - ix0);\n"
      "float4 best = (float4)(" + gpu::FloatLiteral(std::numeric_limits<float>::lowest()) + ");\n"
      "int4 bi = (int4)(0);\n"
      "for (int fy = fy0; fy < fy1; ++fy) {\n"
      "  for (int fx = fx0; fx < fx1; ++fx) {\n"
      "    float4 v = READ_src(b, iy0 + fy, ix0 + fx, s);\n"
      "    int4 gt = isgreater(v, best);\n"
      "    best = select(best, v, gt);\n"
      "    bi = select(bi, (int4)(fy * " + I(p.filter_w) + " + fx), gt);\n"
      "  }\n"
      "}\n"
      "WRITE_dst(fmin(fmax(best, (float4)(" + gpu::FloatLiteral(ActivationMin(p.act)) + ")), (float4)(" +
      gpu::FloatLiteral(ActivationMax(p.act)) + ")), b, y, x, s);\n"
      "WRITE_ind(convert_float4(bi) + 0.1f, b, y, x, s);\n";
  return OkStatus();
}

Status CheckUnpool(const GpuCheckContext& c) {
  TFG_RETURN_IF_ERROR(gpu::ExpectArity(c, 2, 1));
  TFG_RETURN_IF_ERROR(Check4DFloat(c.input(0), "the input"));
  TFG_RETURN_IF_ERROR(Check4DFloat(c.input(1), "the indices"));
  TFG_RETURN_IF_ERROR(Check4DFloat(c.output(0), "the output"));
  // Decoded positions are computed in int: keep every term far from overflow.
  const Dims& s = c.input(0).shape;
  const auto& p = c.node().P<mp::MpPoolParams>();
  if (int64_t(s[1]) * p.stride_h + p.filter_h >= (int64_t(1) << 30) ||
      int64_t(s[2]) * p.stride_w + p.filter_w >= (int64_t(1) << 30))
    return Unimplemented("input size times stride is too large for the GPU kernel's int arithmetic");
  return OkStatus();
}

Status BuildUnpool(GpuBuildContext& ctx) {
  const auto& p = ctx.node().P<mp::MpPoolParams>();
  auto in = ctx.input(0), ind = ctx.input(1), out = ctx.output(0);
  auto& kb = ctx.NewKernel("max_unpooling");
  kb.AddInput("src", in);
  kb.AddInput("idx", ind);
  kb.AddOutput("dst", out);
  const std::string fw = I(p.filter_w), sw = I(p.stride_w), sh = I(p.stride_h), pw = I(p.pad_w), ph = I(p.pad_h);
  kb.body =
      gpu::PerSliceGrid(kb, out.shape) +
      // Padding lanes of the last slice need no writer.
      "int nl = dst_C - s * 4;\n"
      "int4 found = (int4)(nl > 0 ? 0 : -1, nl > 1 ? 0 : -1, nl > 2 ? 0 : -1, nl > 3 ? 0 : -1);\n"
      "float4 acc = (float4)(0.0f);\n"
      "int ixa = max(0, (x + " + pw + " - " + fw + ") / " + sw + ");\n"
      "int ixb = min(src_W - 1, (x + " + pw + " + " + fw + ") / " + sw + ");\n"
      "for (int iy = src_H - 1; iy >= 0 && !all(found); --iy) {\n"
      "  for (int ix = ixb; ix >= ixa; --ix) {\n"
      "    float4 fv = READ_idx(b, iy, ix, s);\n"
      "    int4 ok = isgreater(fv, (float4)(-1e9f)) & isless(fv, (float4)(1e9f));\n"
      "    int4 id = convert_int4(select((float4)(0.0f), fv, ok));\n"
      "    int4 my = id / " + fw + ", mx = id - my * " + fw + ";\n"
      "    int4 hit = ok & ~found & ((int4)(iy * " + sh + " - " + ph + ") + my == (int4)(y)) &\n"
      "               ((int4)(ix * " + sw + " - " + pw + ") + mx == (int4)(x));\n"
      "    if (any(hit)) {\n"
      "      acc = select(acc, READ_src(b, iy, ix, s), hit);\n"
      "      found |= hit;\n"
      "    }\n"
      "  }\n"
      "}\n"
      "WRITE_dst(acc, b, y, x, s);\n";
  return OkStatus();
}

}  // namespace

const GpuOpSupport kGpu_MaxPoolingWithArgmax2D = {CheckArgmax, BuildArgmax, nullptr, false};
const GpuOpSupport kGpu_MaxUnpooling2D = {CheckUnpool, BuildUnpool, nullptr, false};

}  // namespace tflite_gpu
