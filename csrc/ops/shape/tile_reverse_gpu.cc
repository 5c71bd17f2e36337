// GPU side of TILE:
// generators of the data movement kernels (CPU kernels: tile_reverse.cc;
// shared kernel shapes: shape_common_gpu.h).
#include "ops/shape/shape_common_gpu.h"

namespace tflite_gpu {
namespace {

using namespace shape_gpu;  // NOLINT

// ------------------------------------------------------------------------------ TILE
// Constant multiples: output (b, y, x, c) reads input (b % B, y % H, x % W, c % C); whole slices
// when the input channels are a multiple of 4 (or the channel axis is not tiled).
Status CheckTile(const GpuCheckContext& c) {
  TFG_RETURN_IF_ERROR(CheckData(c, {0}));
  TFG_RETURN_IF_ERROR(c.Constant(1, "multiples"));
  std::vector<int64_t> m;
  if (!ConstInts(c.input(1), &m)) return Unimplemented("multiples must be a constant integer tensor on the GPU");
  if (c.input(0).shape.empty()) return Unimplemented("scalar input");
  return OkStatus();
}

Status BuildTile(GpuBuildContext& ctx) {
  const BHWC in = Shape(ctx.cpu_input(0)), o = Shape(ctx.cpu_output(0));
  KernelBuilder& kb = ctx.NewKernel("tile");
  kb.AddInput("src", ctx.input(0));
  kb.AddOutput("dst", ctx.output(0));
  const std::string bhw = "b % src_B, y % src_H, x % src_W, ";
  if (in.c == o.c || in.c % 4 == 0) {
    SliceKernel(kb, o, "v = READ_src(" + bhw + "s % src_S);");
  } else {
    LaneKernel(kb, o, "e = LD_src(" + bhw + "c % src_C);");
  }
  return OkStatus();
}

}  // namespace

const GpuOpSupport kGpu_TILE = {CheckTile, BuildTile, nullptr, false};

}  // namespace tflite_gpu
