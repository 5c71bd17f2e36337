// GPU side of PAD, PADV2, MIRROR_PAD:
// generators of the data movement kernels (CPU kernels: pad.cc;
// shared kernel shapes: shape_common_gpu.h).
#include "ops/shape/shape_common_gpu.h"

namespace tflite_gpu {
namespace {

using namespace shape_gpu;  // NOLINT

// ------------------------------------------------------------------------------ PAD / PADV2
struct PadSpec {
  int64_t l[4] = {0, 0, 0, 0}, r[4] = {0, 0, 0, 0};
};

Status ReadPads(const Tensor& in, const Tensor& paddings, PadSpec* p) {
  std::vector<int64_t> v;
  if (!ConstInts(paddings, &v)) return Unimplemented("paddings must be a constant integer tensor on the GPU");
  const int rank = int(in.shape.size());
  if (int(v.size()) != 2 * rank) return Unimplemented("paddings do not match the input rank");
  for (int i = 0; i < rank; ++i) {
    const int a = gpu::AxisToBHWC(i, rank);
    if (v[2 * i] < 0 || v[2 * i + 1] < 0) return Unimplemented("negative paddings");
    p->l[a] = v[2 * i];
    p->r[a] = v[2 * i + 1];
  }
  return OkStatus();
}

Status CheckPad(const GpuCheckContext& c) {
  TFG_RETURN_IF_ERROR(CheckData(c, {0}));
  TFG_RETURN_IF_ERROR(c.Constant(1, "paddings"));
  PadSpec p;
  TFG_RETURN_IF_ERROR(ReadPads(c.input(0), c.input(1), &p));
  if (c.num_inputs() >= 3 && c.has_input(2)) {
    const Tensor& cv = c.input(2);
    TFG_RETURN_IF_ERROR(c.Constant(2, "constant_values"));
    if (cv.num_elements() != 1 || !cv.data) return Unimplemented("constant_values must be one value");
    TFG_RETURN_IF_ERROR(c.RealTensor(cv, "constant_values"));
  }
  return OkStatus();
}

Status BuildPad(GpuBuildContext& ctx) {
  const BHWC o = Shape(ctx.cpu_output(0));
  PadSpec p;
  TFG_RETURN_IF_ERROR(ReadPads(ctx.cpu_input(0), ctx.cpu_input(1), &p));
  float value = 0.f;
  if (ctx.node().inputs.size() >= 3 && ctx.has_input(2)) value = ctx.const_input(2)[0];
  KernelBuilder& kb = ctx.NewKernel("pad");
  kb.AddInput("src", ctx.input(0));
  kb.AddOutput("dst", ctx.output(0));
  const bool slices = p.l[3] == 0 && (p.r[3] == 0 || value == 0.f);
  static const char* kVar[4] = {"b", "y", "x", "c"};
  static const char* kIn[4] = {"ib", "iy", "ix", "ic"};
  static const char* kDim[4] = {"src_B", "src_H", "src_W", "src_C"};
  std::string decl = "int ", cond;
  for (int a = 0; a < (slices ? 3 : 4); ++a) {
    decl += std::string(a ? ", " : "") + kIn[a] + " = " + kVar[a] + " - " + Str(p.l[a]);
    if (p.l[a] || p.r[a])
      cond += std::string(cond.empty() ? "" : " && ") + "(" + kIn[a] + " >= 0 && " + kIn[a] + " < " + kDim[a] + ")";
  }
  decl += ";\n";
  if (slices && p.r[3]) cond += std::string(cond.empty() ? "" : " && ") + "s < src_S";
  if (cond.empty()) cond = "1";
  const std::string val = FloatLit(value);
  if (slices) {
    SliceKernel(kb, o, decl + "if (" + cond + ") v = READ_src(ib, iy, ix, s); else v = (float4)(" + val + ");");
  } else {
    LaneKernel(kb, o, decl + "if (" + cond + ") e = LD_src(ib, iy, ix, ic); else e = " + val + ";");
  }
  return OkStatus();
}

// Zero padding with whole slices before the channels: consumers read the input in place.
bool PadView(GpuBuildContext& ctx, gpu::GpuReadView* v) {
  PadSpec p;
  if (!ReadPads(ctx.cpu_input(0), ctx.cpu_input(1), &p).ok()) return false;
  if (ctx.node().inputs.size() >= 3 && ctx.has_input(2) && ctx.const_input(2)[0] != 0.f) return false;
  if (p.l[3] % 4 != 0) return false;
  for (int a = 0; a < 4; ++a) v->before[a] = p.l[a];
  return true;
}

// ------------------------------------------------------------------------------ MIRROR_PAD
Status CheckMirrorPad(const GpuCheckContext& c) {
  TFG_RETURN_IF_ERROR(CheckData(c, {0}));
  TFG_RETURN_IF_ERROR(c.Constant(1, "paddings"));
  PadSpec p;
  return ReadPads(c.input(0), c.input(1), &p);
}

Status BuildMirrorPad(GpuBuildContext& ctx) {
  const BHWC in = Shape(ctx.cpu_input(0)), o = Shape(ctx.cpu_output(0));
  PadSpec p;
  TFG_RETURN_IF_ERROR(ReadPads(ctx.cpu_input(0), ctx.cpu_input(1), &p));
  const int64_t off = shape_ops::MirrorPadModeOf(ctx.node()) == 0 ? 1 : 0;  // REFLECT skips the border
  KernelBuilder& kb = ctx.NewKernel("mirror_pad");
  kb.AddInput("src", ctx.input(0));
  kb.AddOutput("dst", ctx.output(0));
  const bool slices = p.l[3] == 0 && p.r[3] == 0;
  static const char* kVar[4] = {"b", "y", "x", "c"};
  std::string e[4];
  for (int a = 0; a < 4; ++a) {
    std::string v = (a == 3 && slices) ? "s" : kVar[a];
    if (!p.l[a] && !p.r[a]) { e[a] = v; continue; }
    const int64_t l = p.l[a], d = Dim(in, a);
    // c < l: l - c - 1 + off; inside: c - l; after: d - 1 - off - (c - l - d)
    e[a] = "(" + v + " < " + Str(l) + " ? " + Str(l - 1 + off) + " - " + v + " : (" + v + " < " + Str(l + d) + " ? " + v +
           " - " + Str(l) + " : " + Str(2 * d - 1 - off + l) + " - " + v + "))";
  }
  if (slices) {
    SliceKernel(kb, o, "v = READ_src(" + e[0] + ", " + e[1] + ", " + e[2] + ", s);");
  } else {
    LaneKernel(kb, o, "e = LD_src(" + e[0] + ", " + e[1] + ", " + e[2] + ", " + e[3] + ");");
  }
  return OkStatus();
}

}  // namespace

const GpuOpSupport kGpu_PAD = {CheckPad, BuildPad, nullptr, false, PadView};
const GpuOpSupport kGpu_PADV2 = {CheckPad, BuildPad, nullptr, false, PadView};
const GpuOpSupport kGpu_MIRROR_PAD = {CheckMirrorPad, BuildMirrorPad, nullptr, false};

}  // namespace tflite_gpu
