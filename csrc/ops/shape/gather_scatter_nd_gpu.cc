// GPU side of ONE_HOT:
// generators of the data movement kernels (CPU kernels: gather_scatter_nd.cc;
// shared kernel shapes: shape_common_gpu.h).
#include "ops/shape/shape_common_gpu.h"

namespace tflite_gpu {
namespace {

using namespace shape_gpu;  // NOLINT

// ------------------------------------------------------------------------------ ONE_HOT
// Constant indices, depth, on and off values, axis -1 (the depth is the channel axis): the
// indices are baked into the kernel as an exact float buffer (one per output pixel).
Status CheckOneHot(const GpuCheckContext& c) {
  TFG_RETURN_IF_ERROR(CheckData(c, {}));
  for (int i = 0; i < 4; ++i)
    TFG_RETURN_IF_ERROR(c.Constant(i, i == 0 ? "indices" : i == 1 ? "depth" : i == 2 ? "on_value" : "off_value"));
  const int rank = int(c.input(0).shape.size());
  const int axis = shape_ops::OneHotAxisOf(c.node());
  if (axis != -1 && axis != rank) return Unimplemented("only the last axis (the channel axis on the GPU)");
  std::vector<int64_t> v;
  if (!ConstInts(c.input(0), &v)) return Unimplemented("indices must be a constant integer tensor");
  for (int64_t x : v)
    if (x < -(int64_t(1) << 24) || x > (int64_t(1) << 24)) return Unimplemented("indices beyond 2^24 are not exact in float");
  if (c.input(2).type != DType::kFloat32 || c.input(3).type != DType::kFloat32)
    return Unimplemented("on/off values must be FLOAT32");
  return OkStatus();
}

Status BuildOneHot(GpuBuildContext& ctx) {
  const BHWC o = Shape(ctx.cpu_output(0));
  std::vector<int64_t> v;
  ConstInts(ctx.cpu_input(0), &v);
  std::vector<float> idx(v.begin(), v.end());
  const float on = ctx.cpu_input(2).as<float>()[0], off = ctx.cpu_input(3).as<float>()[0];
  KernelBuilder& kb = ctx.NewKernel("one_hot");
  kb.AddConstBuffer("ids", idx, /*exact=*/true);
  kb.AddOutput("dst", ctx.output(0));
  LaneKernel(kb, o, "int id_ = (int)ids[(b * dst_H + y) * dst_W + x];\ne = (id_ == c) ? " + FloatLit(on) + " : " +
                        FloatLit(off) + ";");
  return OkStatus();
}

}  // namespace

const GpuOpSupport kGpu_ONE_HOT = {CheckOneHot, BuildOneHot, nullptr, false};

}  // namespace tflite_gpu
