// GPU side of TILE and REVERSE_V2 (REVERSE_V2: taken by newer TFLite GPU delegates, ML Drift):
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

// ------------------------------------------------------------------------------ REVERSE_V2
// Constant axes: output (b, y, x, c) reads the input at the mirrored coordinate of every reversed
// BHWC axis (n - 1 - i); whole slices unless the channel axis is reversed (then lane by lane).
Status ReversedBHWC(const Tensor& in, const Tensor& axes, std::array<bool, 4>* rev) {
  std::vector<int64_t> a;
  if (!ConstInts(axes, &a)) return Unimplemented("the axes must be a constant integer tensor on the GPU");
  const int rank = int(in.shape.size());
  rev->fill(false);
  for (int64_t v : a) {
    const int g = (v < -rank || v >= rank) ? -1 : gpu::AxisToBHWC(int(v), rank);
    if (g < 0) return Unimplemented("axis " + Str(v) + " does not map to BHWC");
    (*rev)[size_t(g)] = true;
  }
  return OkStatus();
}

Status CheckReverse(const GpuCheckContext& c) {
  if (c.num_inputs() != 2) return Unimplemented("expects 2 inputs");
  TFG_RETURN_IF_ERROR(CheckData(c, {0}));
  TFG_RETURN_IF_ERROR(c.Constant(1, "the axes"));
  if (c.input(0).shape.empty()) return Unimplemented("scalar input");
  std::array<bool, 4> rev;
  return ReversedBHWC(c.input(0), c.input(1), &rev);
}

Status BuildReverse(GpuBuildContext& ctx) {
  std::array<bool, 4> rev;
  TFG_RETURN_IF_ERROR(ReversedBHWC(ctx.cpu_input(0), ctx.cpu_input(1), &rev));
  const BHWC o = Shape(ctx.cpu_output(0));
  KernelBuilder& kb = ctx.NewKernel("reverse");
  kb.AddInput("src", ctx.input(0));
  kb.AddOutput("dst", ctx.output(0));
  const std::string bhw = std::string(rev[0] ? "src_B - 1 - b" : "b") + ", " + (rev[1] ? "src_H - 1 - y" : "y") +
                          ", " + (rev[2] ? "src_W - 1 - x" : "x") + ", ";
  if (!rev[3])
    SliceKernel(kb, o, "v = READ_src(" + bhw + "s);");
  else
    LaneKernel(kb, o, "e = LD_src(" + bhw + "src_C - 1 - c);");
  return OkStatus();
}

}  // namespace

const GpuOpSupport kGpu_TILE = {CheckTile, BuildTile, nullptr, false};
const GpuOpSupport kGpu_REVERSE_V2 = {CheckReverse, BuildReverse, nullptr, false};

}  // namespace tflite_gpu
