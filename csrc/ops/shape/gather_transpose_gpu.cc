// GPU side of GATHER, TRANSPOSE:
// generators of the data movement kernels (CPU kernels: gather_transpose.cc;
// shared kernel shapes: shape_common_gpu.h).
#include "ops/shape/shape_common_gpu.h"

namespace tflite_gpu {
namespace {

using namespace shape_gpu;  // NOLINT

// ------------------------------------------------------------------------------ TRANSPOSE
Status TransposeMap(const Tensor& in, const Tensor& perm, AxisMap* m) {
  std::vector<int64_t> p;
  if (!ConstInts(perm, &p)) return Unimplemented("perm must be a constant integer tensor on the GPU");
  const int rank = int(in.shape.size());
  if (int(p.size()) != rank) return Unimplemented("perm does not match the input rank");
  for (int a = 0; a < 4; ++a) (*m)[a] = Affine{-1, 0, 0};
  for (int i = 0; i < rank; ++i) {
    int64_t q = p[i] < 0 ? p[i] + rank : p[i];
    if (q < 0 || q >= rank) return Unimplemented("perm out of range");
    (*m)[gpu::AxisToBHWC(int(q), rank)] = Affine{gpu::AxisToBHWC(i, rank), 0, 1};
  }
  return OkStatus();
}

Status CheckTranspose(const GpuCheckContext& c) {
  TFG_RETURN_IF_ERROR(CheckData(c, {0}));
  TFG_RETURN_IF_ERROR(c.Constant(1, "perm"));
  AxisMap m;
  return TransposeMap(c.input(0), c.input(1), &m);
}

Status BuildTranspose(GpuBuildContext& ctx) {
  AxisMap m;
  TFG_RETURN_IF_ERROR(TransposeMap(ctx.cpu_input(0), ctx.cpu_input(1), &m));
  return BuildAffine(ctx, "transpose", m);
}

// ------------------------------------------------------------------------------ GATHER
struct GatherGeo {
  int64_t outer = 1, axis_size = 0, inner = 1, coords = 1;
  std::vector<int64_t> idx;
};

Status GatherGeometry(const Node& node, const Tensor& in, const Tensor& pos, GatherGeo* g) {
  if (!ConstInts(pos, &g->idx)) return Unimplemented("indices must be a constant integer tensor on the GPU");
  int axis, bd;
  shape_ops::GatherParamsOf(node, &axis, &bd);
  const int rank = int(in.shape.size()), prank = int(pos.shape.size());
  if (axis < 0) axis += rank;
  if (bd < 0) bd += prank;
  if (axis < 0 || axis >= rank || bd < 0 || bd > axis || bd > prank) return Unimplemented("invalid axis / batch_dims");
  g->outer = shape_ops::Prod(in.shape, bd, axis);  // per batch
  g->axis_size = in.shape[axis];
  g->inner = shape_ops::Prod(in.shape, axis + 1, rank);
  g->coords = shape_ops::Prod(pos.shape, bd, prank);
  // Out-of-range indices (an invoke error on the CPU) are clamped so the kernel never reads
  // outside the input; the check does not refuse them because a later resize may make them valid.
  for (int64_t& v : g->idx) v = std::max<int64_t>(0, std::min<int64_t>(v, g->axis_size - 1));
  return OkStatus();
}

Status CheckGather(const GpuCheckContext& c) {
  TFG_RETURN_IF_ERROR(CheckData(c, {0}));
  TFG_RETURN_IF_ERROR(c.Constant(1, "indices"));
  GatherGeo g;
  return GatherGeometry(c.node(), c.input(0), c.input(1), &g);
}

Status BuildGather(GpuBuildContext& ctx) {
  GatherGeo g;
  TFG_RETURN_IF_ERROR(GatherGeometry(ctx.node(), ctx.cpu_input(0), ctx.cpu_input(1), &g));
  const BHWC in = Shape(ctx.cpu_input(0)), o = Shape(ctx.cpu_output(0));
  KernelBuilder& kb = SrcDstKernel(ctx, "gather");
  std::vector<float> idx(g.idx.begin(), g.idx.end());
  kb.AddConstBuffer("idx", idx, /*exact=*/true);
  // L = ((batch * outer + o) * coords + i) * inner + j
  const std::string map = "int j_ = L % " + Str(g.inner) + ", t_ = L / " + Str(g.inner) + ";\n"
                          "int i_ = t_ % " + Str(g.coords) + ", bo_ = t_ / " + Str(g.coords) + ";\n"
                          "int k_ = (int)LOADW_idx((bo_ / " + Str(g.outer) + ") * " + Str(g.coords) + " + i_);\n"
                          "IL = (bo_ * " + Str(g.axis_size) + " + k_) * " + Str(g.inner) + " + j_;";
  LinearKernel(ctx, kb, o, map, g.inner % 4 == 0 && in.c % 4 == 0 && o.c % 4 == 0);
  return OkStatus();
}

}  // namespace

const GpuOpSupport kGpu_TRANSPOSE = {CheckTranspose, BuildTranspose, nullptr, false};
const GpuOpSupport kGpu_GATHER = {CheckGather, BuildGather, nullptr, false};

}  // namespace tflite_gpu
