// GPU side of CONCATENATION, SPLIT, PACK, UNPACK:
// generators of the data movement kernels (CPU kernels: concat_split.cc;
// shared kernel shapes: shape_common_gpu.h).
#include "ops/shape/shape_common_gpu.h"

namespace tflite_gpu {
namespace {

using namespace shape_gpu;  // NOLINT

// ------------------------------------------------------------------------------ CONCATENATION
int ConcatAxis(const Node& n, int rank) {
  int a = shape_ops::ConcatAxisOf(n);
  return a < 0 ? a + rank : a;
}

Status CheckConcat(const GpuCheckContext& c) {
  for (int i = 0; i < c.num_inputs(); ++i) TFG_RETURN_IF_ERROR(CheckData(c, {i}));
  TFG_RETURN_IF_ERROR(CheckData(c, {}));
  const int rank = int(c.input(0).shape.size());
  if (rank == 0) return Unimplemented("scalar inputs (constant folded on the CPU)");
  if (gpu::AxisToBHWC(ConcatAxis(c.node(), rank), rank) < 0) return Unimplemented("axis out of range");
  for (int i = 0; i < c.num_inputs(); ++i)
    if (int(c.input(i).shape.size()) != rank) return Unimplemented("inputs of different ranks");
  return OkStatus();
}

// Each input written at its offset along the axis by its producer; channel offsets whole slices.
bool ConcatPlace(GpuBuildContext& ctx, std::vector<gpu::GpuReadView>* at) {
  if (shape_ops::ConcatActivationOf(ctx.node()) != 0) return false;
  const int n = int(ctx.node().inputs.size());
  const int rank = int(ctx.cpu_input(0).shape.size());
  const int a = gpu::AxisToBHWC(ConcatAxis(ctx.node(), rank), rank);
  if (a < 0) return false;
  int64_t off = 0;
  at->assign(size_t(n), gpu::GpuReadView());
  for (int i = 0; i < n; ++i) {
    const int64_t size = Dim(Shape(ctx.cpu_input(i)), a);
    if (a == 3 && i + 1 < n && size % 4 != 0) return false;
    (*at)[i].before[a] = off;
    off += size;
  }
  return true;
}

Status BuildConcat(GpuBuildContext& ctx) {
  const int n = int(ctx.node().inputs.size());
  const int rank = int(ctx.cpu_input(0).shape.size());
  const int a = gpu::AxisToBHWC(ConcatAxis(ctx.node(), rank), rank);
  const BHWC o = Shape(ctx.cpu_output(0));
  KernelBuilder& kb = ctx.NewKernel("concatenation");
  std::vector<BHWC> in;
  for (int i = 0; i < n; ++i) {
    kb.AddInput("src" + Str(i), ctx.input(i));
    in.push_back(Shape(ctx.cpu_input(i)));
  }
  kb.AddOutput("dst", ctx.output(0));
  bool slices = true;
  if (a == 3)
    for (int i = 0; i + 1 < n; ++i) slices = slices && in[i].c % 4 == 0;
  static const char* kVar[4] = {"b", "y", "x", "c"};
  std::string var = (slices && a == 3) ? "s" : kVar[a];
  std::string code;
  int64_t off = 0;
  for (int i = 0; i < n; ++i) {
    const int64_t size = Dim(in[i], a);
    AxisMap m = Identity();
    m[a].off = -off;
    std::string read = (slices ? "v = " : "e = ") + Read("src" + Str(i), m, slices) + ";";
    const int64_t end = (slices && a == 3) ? (off + size) / 4 : off + size;
    if (i + 1 < n) code += (i ? "else if (" : "if (") + var + " < " + Str(end) + ") { " + read + " }\n";
    else code += (i ? "else { " : "{ ") + read + " }\n";
    off += size;
  }
  if (slices) SliceKernel(kb, o, code);
  else LaneKernel(kb, o, code);
  return OkStatus();
}

// ------------------------------------------------------------------------------ SPLIT
Status SplitAxis(const Tensor& axis, const Tensor& in, int* a) {
  std::vector<int64_t> v;
  if (!ConstInts(axis, &v) || v.empty()) return Unimplemented("axis must be a constant integer tensor on the GPU");
  const int rank = int(in.shape.size());
  *a = gpu::AxisToBHWC(int(v[0]), rank);
  if (*a < 0) return Unimplemented("axis out of range");
  return OkStatus();
}

Status CheckSplit(const GpuCheckContext& c) {
  TFG_RETURN_IF_ERROR(CheckData(c, {1}));
  TFG_RETURN_IF_ERROR(c.Constant(0, "axis"));
  int a;
  return SplitAxis(c.input(0), c.input(1), &a);
}

Status BuildSplit(GpuBuildContext& ctx) {
  int a;
  TFG_RETURN_IF_ERROR(SplitAxis(ctx.cpu_input(0), ctx.cpu_input(1), &a));
  const int n = int(ctx.node().outputs.size());
  for (int k = 0; k < n; ++k) {
    const BHWC o = Shape(ctx.cpu_output(k));
    KernelBuilder& kb = ctx.NewKernel("split");
    kb.AddInput("src", ctx.input(1));
    kb.AddOutput("dst", ctx.output(k));
    AxisMap m = Identity();
    m[a].off = int64_t(k) * Dim(o, a);
    AffineKernel(ctx, kb, o, m);
  }
  return OkStatus();
}

// ------------------------------------------------------------------------------ PACK / UNPACK
Status CheckPack(const GpuCheckContext& c) {
  for (int i = 0; i < c.num_inputs(); ++i) TFG_RETURN_IF_ERROR(CheckData(c, {i}));
  return CheckData(c, {});
}

Status BuildPack(GpuBuildContext& ctx) {
  const int n = int(ctx.node().inputs.size());
  const int rank = int(ctx.cpu_input(0).shape.size()), orank = rank + 1;
  int ax = shape_ops::PackAxisOf(ctx.node());
  if (ax < 0) ax += orank;
  const BHWC o = Shape(ctx.cpu_output(0));
  KernelBuilder& kb = ctx.NewKernel("pack");
  for (int i = 0; i < n; ++i) kb.AddInput("src" + Str(i), ctx.input(i));
  kb.AddOutput("dst", ctx.output(0));
  AxisMap m;
  for (int a = 0; a < 4; ++a) m[a] = Affine{-1, 0, 0};
  for (int j = 0, d = 0; d < orank; ++d) {
    if (d == ax) continue;
    m[gpu::AxisToBHWC(j++, rank)] = Affine{gpu::AxisToBHWC(d, orank), 0, 1};
  }
  const int sel = gpu::AxisToBHWC(ax, orank);
  const bool slices = Aligned(m) && sel != 3;
  static const char* kVar[4] = {"b", "y", "x", "c"};
  std::string code;
  for (int i = 0; i < n; ++i) {
    code += std::string(i ? "else " : "") + "if (" + kVar[sel] + " == " + Str(i) + ") " + (slices ? "v = " : "e = ") +
            Read("src" + Str(i), m, slices) + ";\n";
  }
  if (slices) SliceKernel(kb, o, code);
  else LaneKernel(kb, o, code);
  return OkStatus();
}

Status CheckUnpack(const GpuCheckContext& c) { return CheckData(c, {0}); }

Status BuildUnpack(GpuBuildContext& ctx) {
  const int rank = int(ctx.cpu_input(0).shape.size()), orank = rank - 1;
  int ax = shape_ops::PackAxisOf(ctx.node());
  if (ax < 0) ax += rank;
  const int n = int(ctx.node().outputs.size());
  for (int k = 0; k < n; ++k) {
    const BHWC o = Shape(ctx.cpu_output(k));
    KernelBuilder& kb = ctx.NewKernel("unpack");
    kb.AddInput("src", ctx.input(0));
    kb.AddOutput("dst", ctx.output(k));
    AxisMap m;
    for (int a = 0; a < 4; ++a) m[a] = Affine{-1, 0, 0};
    for (int j = 0, d = 0; d < rank; ++d) {
      if (d == ax) m[gpu::AxisToBHWC(d, rank)] = Affine{-1, k, 0};
      else m[gpu::AxisToBHWC(d, rank)] = Affine{gpu::AxisToBHWC(j++, orank), 0, 1};
    }
    AffineKernel(ctx, kb, o, m);
  }
  return OkStatus();
}

}  // namespace

const GpuOpSupport kGpu_CONCATENATION = {CheckConcat, BuildConcat, nullptr, false, nullptr, ConcatPlace};
const GpuOpSupport kGpu_SPLIT = {CheckSplit, BuildSplit, nullptr, false};
const GpuOpSupport kGpu_PACK = {CheckPack, BuildPack, nullptr, false};
const GpuOpSupport kGpu_UNPACK = {CheckUnpack, BuildUnpack, nullptr, false};

}  // namespace tflite_gpu
