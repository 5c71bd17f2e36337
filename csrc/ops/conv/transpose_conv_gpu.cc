// GPU side of TRANSPOSE_CONV and Convolution2DTransposeBias (EmitConv, conv_common_gpu.cc)
// CPU kernel: transpose_conv.cc.
#include "ops/conv/conv_common_gpu.h"

namespace tflite_gpu {
namespace {

using namespace conv_gpu;  // NOLINT

// ------------------------------------------------------------------ TRANSPOSE_CONV

Status TransposeGeometry(const conv::GpuConvOptions& o, const Dims& x, const Dims& w, const Dims& out, ConvCore* c) {
  if (x.size() != 4 || w.size() != 4 || out.size() != 4) return Unimplemented("input, weights and output must have rank 4");
  if (o.padding != 0 && o.padding != 1) return Unimplemented("unknown padding");
  if (o.stride_w <= 0 || o.stride_h <= 0) return Unimplemented("strides must be positive");
  TFG_RETURN_IF_ERROR(CheckAct(o.act));
  if (w[3] != x[3] || w[0] != out[3] || out[0] != x[0] || w[1] <= 0 || w[2] <= 0)
    return Unimplemented("weights shape does not match the input/output");
  Padding pad = o.padding == 0 ? Padding::kSame : Padding::kValid;
  if (ConvOutputSize(pad, out[1], w[1], o.stride_h, 1) != x[1] || ConvOutputSize(pad, out[2], w[2], o.stride_w, 1) != x[2])
    return Unimplemented("output shape inconsistent with the input");
  c->KH = w[1];
  c->KW = w[2];
  c->SH = o.stride_h;
  c->SW = o.stride_w;
  c->PT = ConvPadBefore(pad, out[1], w[1], o.stride_h, 1, x[1]);
  c->PL = ConvPadBefore(pad, out[2], w[2], o.stride_w, 1, x[2]);
  c->OC = w[0];
  c->IC = w[3];
  c->act = o.act;
  c->transposed = true;
  return OkStatus();
}

// Inputs: x, w, bias (or -1) indices.
Status CheckTransposeCommon(const GpuCheckContext& c, int xi, int wi, int bi) {
  TFG_RETURN_IF_ERROR(c.InputsFloat32({xi, wi, bi}));
  TFG_RETURN_IF_ERROR(c.OutputsFloat32());
  TFG_RETURN_IF_ERROR(c.Constant(wi, "weights"));
  TFG_RETURN_IF_ERROR(CheckNonEmpty(c));
  if (c.input(xi).num_elements() == 0 || c.output(0).num_elements() == 0) return Unimplemented("empty tensor");
  ConvCore core;
  TFG_RETURN_IF_ERROR(TransposeGeometry(conv::TransposeConvOptionsOf(c.node()), c.input(xi).shape, c.input(wi).shape,
                                        c.output(0).shape, &core));
  return CheckConstBias(c, bi, core.OC);
}

Status CheckTransposeConv(const GpuCheckContext& c) {
  if (c.num_inputs() < 3) return Unimplemented("expects output_shape, weights, input");
  TFG_RETURN_IF_ERROR(c.Constant(0, "output_shape"));
  return CheckTransposeCommon(c, 2, 1, 3);
}

Status CheckTransposeBias(const GpuCheckContext& c) {
  if (c.num_inputs() != 3) return Unimplemented("expects input, weights, bias");
  const conv::GpuConvOptions o = conv::TransposeConvOptionsOf(c.node());
  if (!o.custom_ok || o.padding < 0) return Unimplemented("malformed custom options");
  return CheckTransposeCommon(c, 0, 1, 2);
}

Status BuildTransposeCommon(GpuBuildContext& ctx, int xi, int wi, int bi) {
  ConvCore c;
  const Tensor& w = ctx.cpu_input(wi);
  TFG_RETURN_IF_ERROR(TransposeGeometry(conv::TransposeConvOptionsOf(ctx.node()), ctx.cpu_input(xi).shape, w.shape,
                                        ctx.cpu_output(0).shape, &c));
  const float* wp = ctx.const_input(wi).data();
  const int kh = c.KH, kw = c.KW, ic_n = c.IC;
  c.W = [wp, kh, kw, ic_n](int oc, int ky, int kx, int ic) { return wp[((int64_t(oc) * kh + ky) * kw + kx) * ic_n + ic]; };
  c.bias = ctx.has_input(bi) ? ctx.const_input(bi).data() : nullptr;
  return EmitConv(ctx, "transpose_conv", ctx.input(xi), ctx.output(0), c);
}

Status BuildTransposeConv(GpuBuildContext& ctx) { return BuildTransposeCommon(ctx, 2, 1, 3); }
Status BuildTransposeBias(GpuBuildContext& ctx) { return BuildTransposeCommon(ctx, 0, 1, 2); }

}  // namespace

const GpuOpSupport kGpu_TRANSPOSE_CONV = {CheckTransposeConv, BuildTransposeConv, nullptr, false};
const GpuOpSupport kGpu_Convolution2DTransposeBias = {CheckTransposeBias, BuildTransposeBias, nullptr, false};

}  // namespace tflite_gpu
