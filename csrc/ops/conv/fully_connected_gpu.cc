// GPU side of FULLY_CONNECTED (EmitConv, conv_common_gpu.cc)
// CPU kernel: fully_connected.cc.
#include "ops/conv/conv_common_gpu.h"
#include "runtime/env.h"

namespace tflite_gpu {
namespace {

using namespace conv_gpu;  // NOLINT

// ------------------------------------------------------------------ FULLY_CONNECTED

// How the input maps onto rows of [batch, input_size].
enum class FcMap { kPerPixel, kPerPixelRemap, kWindow, kNone };

FcMap FcMapping(const BHWC& in, const BHWC& out, int input_size, std::string* why) {
  if (in.c == input_size) {
    if (int64_t(in.b) * in.h * in.w != int64_t(out.b) * out.h * out.w) {
      *why = "output rows differ from input rows";
      return FcMap::kNone;
    }
    if (in.b == out.b && in.h == out.h && in.w == out.w) return FcMap::kPerPixel;
    return FcMap::kPerPixelRemap;
  }
  if (int64_t(in.h) * in.w * in.c == input_size && out.b == in.b && out.h == 1 && out.w == 1) return FcMap::kWindow;
  *why = "input rows of " + I(input_size) + " values do not map onto whole pixels of the GPU layout";
  return FcMap::kNone;
}

Status CheckFullyConnected(const GpuCheckContext& c) {
  TFG_RETURN_IF_ERROR(c.InputsFloat32({0, 1, 2}));
  TFG_RETURN_IF_ERROR(c.OutputsFloat32());
  TFG_RETURN_IF_ERROR(c.Constant(1, "weights"));
  TFG_RETURN_IF_ERROR(CheckNonEmpty(c));
  const conv::GpuConvOptions o = conv::FullyConnectedOptionsOf(c.node());
  if (o.weights_format != 0) return Unimplemented("only DEFAULT weights_format");
  if (o.act < 0 || o.act > 3) return Unimplemented("unsupported fused activation");
  const Dims& w = c.input(1).shape;
  if (w.size() != 2 || w[1] <= 0) return Unimplemented("weights must be [units, input_size]");
  TFG_RETURN_IF_ERROR(c.Rank4OrLess(c.input(0), "input"));
  TFG_RETURN_IF_ERROR(c.Rank4OrLess(c.output(0), "output"));
  TFG_RETURN_IF_ERROR(CheckConstBias(c, 2, w[0]));
  BHWC in, out;
  gpu::ToBHWC(c.input(0).shape, &in);
  gpu::ToBHWC(c.output(0).shape, &out);
  if (out.c != w[0]) return Unimplemented("output channels differ from the units");
  std::string why;
  if (FcMapping(in, out, w[1], &why) == FcMap::kNone) return Unimplemented(why);
  return OkStatus();
}

Status BuildFullyConnected(GpuBuildContext& ctx) {
  const conv::GpuConvOptions o = conv::FullyConnectedOptionsOf(ctx.node());
  const Tensor& wt = ctx.cpu_input(1);
  const int units = wt.shape[0], input_size = wt.shape[1];
  GpuTensorRef src = ctx.input(0), dst = ctx.output(0);
  std::string why;
  FcMap m = FcMapping(src.shape, dst.shape, input_size, &why);
  if (m == FcMap::kNone) return Internal("FULLY_CONNECTED: " + why);
  ConvCore c;
  c.OC = units;
  c.IC = src.shape.c;
  c.act = o.act;
  const float* wp = ctx.const_input(1).data();
  if (m == FcMap::kWindow) {
    c.KH = src.shape.h;
    c.KW = src.shape.w;
    const int kw = c.KW, ic = c.IC;
    c.W = [wp, input_size, kw, ic](int oc, int ky, int kx, int i) {
      return wp[int64_t(oc) * input_size + (int64_t(ky) * kw + kx) * ic + i];
    };
  } else {
    c.remap = m == FcMap::kPerPixelRemap;
    c.W = [wp, input_size](int oc, int, int, int i) { return wp[int64_t(oc) * input_size + i]; };
  }
  c.bias = ctx.has_input(2) ? ctx.const_input(2).data() : nullptr;
  return EmitConv(ctx, "fully_connected", src, dst, c);
}

// Rows that are whole pixels, same pixels in and out (a classifier after a global average): the
// input may be computed here (GpuInlineFn), by each of the ceil(slices / FusedSliceTile) item groups.
int64_t AcceptInline(GpuBuildContext& ctx, int input) {
  if (input != 0 || ctx.cpu_input(1).shape.size() != 2) return 0;
  BHWC in, out;
  gpu::ToBHWC(ctx.cpu_input(0).shape, &in);
  gpu::ToBHWC(ctx.cpu_output(0).shape, &out);
  std::string why;
  if (FcMapping(in, out, ctx.cpu_input(1).shape[1], &why) != FcMap::kPerPixel) return 0;
  if (env::ConvSplitK() != "0")  // as CONV_2D's (conv2d_gpu.cc)
    return SplitKComputedTimes(ctx, int64_t(out.b) * out.h * out.w, out.slices(), in.slices());
  return CeilDiv(out.slices(), FusedSliceTile(out.slices()));
}

}  // namespace

const GpuOpSupport kGpu_FULLY_CONNECTED = {CheckFullyConnected, BuildFullyConnected, nullptr, false,
                                           nullptr, nullptr, nullptr, AcceptInline};

}  // namespace tflite_gpu
