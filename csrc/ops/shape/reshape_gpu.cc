// GPU side of RESHAPE, SHAPE (refused), DEPTH_TO_SPACE, SPACE_TO_DEPTH:
// generators of the data movement kernels (CPU kernels: reshape.cc;
// shared kernel shapes: shape_common_gpu.h).
#include "ops/shape/shape_common_gpu.h"

namespace tflite_gpu {
namespace {

using namespace shape_gpu;  // NOLINT

// ------------------------------------------------------------------------------ RESHAPE
Status CheckReshape(const GpuCheckContext& c) { return CheckData(c, {0}); }

Status BuildReshape(GpuBuildContext& ctx) {
  const BHWC in = Shape(ctx.cpu_input(0)), o = Shape(ctx.cpu_output(0));
  KernelBuilder& kb = ctx.NewKernel("reshape");
  kb.AddInput("src", ctx.input(0));
  kb.AddOutput("dst", ctx.output(0));
  if (in == o) {
    SliceKernel(kb, o, "v = READ_src(b, y, x, s);");
  } else if (in.c == o.c) {
    // Only batch / height / width regroup: whole pixels move.
    SliceKernel(kb, o,
                "int p_ = (b * dst_H + y) * dst_W + x;\n"
                "int ix_ = p_ % src_W, iy_ = (p_ / src_W) % src_H, ib_ = p_ / (src_W * src_H);\n"
                "v = READ_src(ib_, iy_, ix_, s);");
  } else {
    LinearKernel(ctx, kb, o, "IL = L;", in.c % 4 == 0 && o.c % 4 == 0);
  }
  return OkStatus();
}

// Same BHWC shape: the output is the input under another name (no kernel).
bool ReshapeView(GpuBuildContext& ctx, gpu::GpuReadView*) {
  return Shape(ctx.cpu_input(0)) == Shape(ctx.cpu_output(0));
}

// ------------------------------------------------------------------------------ DEPTH_TO_SPACE / SPACE_TO_DEPTH
Status CheckBlock(const GpuCheckContext& c) {
  TFG_RETURN_IF_ERROR(CheckData(c, {0}));
  if (c.input(0).shape.size() != 4) return Unimplemented("input must be 4-D");
  return OkStatus();
}

Status BuildDepthToSpace(GpuBuildContext& ctx) {
  const BHWC in = Shape(ctx.cpu_input(0)), o = Shape(ctx.cpu_output(0));
  const int bs = o.h / in.h;
  KernelBuilder& kb = ctx.NewKernel("depth_to_space");
  kb.AddInput("src", ctx.input(0));
  kb.AddOutput("dst", ctx.output(0));
  const std::string B = Str(bs);
  const std::string head = "int iy = y / " + B + ", ix = x / " + B + ";\nint blk = (y % " + B + ") * " + B + " + x % " + B + ";\n";
  if (o.c % 4 == 0) {
    SliceKernel(kb, o, head + "v = READ_src(b, iy, ix, blk * " + Str(o.c / 4) + " + s);");
  } else {
    LaneKernel(kb, o, head + "e = LD_src(b, iy, ix, blk * " + Str(o.c) + " + c);");
  }
  return OkStatus();
}

Status BuildSpaceToDepth(GpuBuildContext& ctx) {
  const BHWC in = Shape(ctx.cpu_input(0)), o = Shape(ctx.cpu_output(0));
  const int bs = in.h / o.h;
  KernelBuilder& kb = ctx.NewKernel("space_to_depth");
  kb.AddInput("src", ctx.input(0));
  kb.AddOutput("dst", ctx.output(0));
  const std::string B = Str(bs), C = Str(in.c);
  if (in.c % 4 == 0) {
    SliceKernel(kb, o,
                "int q = (s * 4) / " + C + ", is = ((s * 4) % " + C + ") / 4;\n"
                "v = READ_src(b, y * " + B + " + q / " + B + ", x * " + B + " + q % " + B + ", is);");
  } else {
    LaneKernel(kb, o,
               "int q = c / " + C + ";\n"
               "e = LD_src(b, y * " + B + " + q / " + B + ", x * " + B + " + q % " + B + ", c % " + C + ");");
  }
  return OkStatus();
}

// ------------------------------------------------------------------------------ refused
Status CheckShape(const GpuCheckContext&) {
  return Unimplemented("int output: SHAPE produces INT32/INT64 (and is constant folded when shapes are static)");
}

}  // namespace

const GpuOpSupport kGpu_RESHAPE = {CheckReshape, BuildReshape, nullptr, false, ReshapeView};
const GpuOpSupport kGpu_SHAPE = {CheckShape, NoBuild, nullptr, false};
const GpuOpSupport kGpu_DEPTH_TO_SPACE = {CheckBlock, BuildDepthToSpace, nullptr, false};
const GpuOpSupport kGpu_SPACE_TO_DEPTH = {CheckBlock, BuildSpaceToDepth, nullptr, false};

}  // namespace tflite_gpu
