// GPU side of SPLIT_V:
// generators of the data movement kernels (CPU kernels: split_v_space_batch.cc;
// shared kernel shapes: shape_common_gpu.h).
#include "ops/shape/shape_common_gpu.h"

namespace tflite_gpu {
namespace {

using namespace shape_gpu;  // NOLINT

// ------------------------------------------------------------------------------ SPLIT_V
// Constant size_splits and axis: each output is an offset copy along the axis.
Status SplitVSpec(const Tensor& in, const Tensor& sizes, const Tensor& axis, int n_out, int* a,
                  std::vector<int64_t>* sz) {
  std::vector<int64_t> av;
  if (!ConstInts(axis, &av) || av.size() != 1) return Unimplemented("axis must be a constant integer on the GPU");
  if (!ConstInts(sizes, sz) || int(sz->size()) != n_out)
    return Unimplemented("size_splits must be a constant integer tensor on the GPU");
  const int rank = int(in.shape.size());
  const int64_t ax = av[0] < 0 ? av[0] + rank : av[0];
  *a = gpu::AxisToBHWC(int(ax), rank);
  if (*a < 0) return Unimplemented("axis out of range");
  int64_t known = 0, minus = -1;
  for (size_t i = 0; i < sz->size(); ++i) {
    if ((*sz)[i] == -1) minus = int64_t(i);
    else known += (*sz)[i];
  }
  if (minus >= 0) (*sz)[size_t(minus)] = in.shape[size_t(ax)] - known;
  return OkStatus();
}

Status CheckSplitV(const GpuCheckContext& c) {
  TFG_RETURN_IF_ERROR(CheckData(c, {0}));
  TFG_RETURN_IF_ERROR(c.Constant(1, "size_splits"));
  TFG_RETURN_IF_ERROR(c.Constant(2, "axis"));
  int a;
  std::vector<int64_t> sz;
  return SplitVSpec(c.input(0), c.input(1), c.input(2), c.num_outputs(), &a, &sz);
}

Status BuildSplitV(GpuBuildContext& ctx) {
  int a;
  std::vector<int64_t> sz;
  const int n = int(ctx.node().outputs.size());
  TFG_RETURN_IF_ERROR(SplitVSpec(ctx.cpu_input(0), ctx.cpu_input(1), ctx.cpu_input(2), n, &a, &sz));
  int64_t off = 0;
  for (int k = 0; k < n; ++k) {
    const BHWC o = Shape(ctx.cpu_output(k));
    KernelBuilder& kb = ctx.NewKernel("split_v");
    kb.AddInput("src", ctx.input(0));
    kb.AddOutput("dst", ctx.output(k));
    AxisMap m = Identity();
    m[a].off = off;
    AffineKernel(ctx, kb, o, m);
    off += sz[size_t(k)];
  }
  return OkStatus();
}

}  // namespace

const GpuOpSupport kGpu_SPLIT_V = {CheckSplitV, BuildSplitV, nullptr, false};

}  // namespace tflite_gpu
