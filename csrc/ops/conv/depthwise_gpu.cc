// GPU side of DEPTHWISE_CONV_2D.
//
// Depthwise convolution is a direct kernel per slice and x, computing YT vertically adjacent
// outputs that share their input rows (generated unrolled code).
// CPU kernel: depthwise.cc.
#include "ops/conv/conv_common_gpu.h"

#include "runtime/env.h"

namespace tflite_gpu {
namespace {

using namespace conv_gpu;  // NOLINT

// Depthwise weights [1, KH, KW, OC] packed as [slice][ky][kx] float4 (zero padding lanes), shared
// by the kernel and by the inline (computed-by-reader) form.
std::vector<float> PackDepthwiseWeights(const float* fw, int KH, int KW, int OC) {
  const int dS = (OC + 3) / 4;
  std::vector<float> w(size_t(dS) * KH * KW * 4, 0.f);
  for (int ky = 0; ky < KH; ++ky)
    for (int kx = 0; kx < KW; ++kx)
      for (int oc = 0; oc < OC; ++oc)
        w[((size_t(oc / 4) * KH + ky) * KW + kx) * 4 + oc % 4] = fw[(int64_t(ky) * KW + kx) * OC + oc];
  return w;
}

// ------------------------------------------------------------------ DEPTHWISE_CONV_2D

Status CheckDepthwise(const GpuCheckContext& c) {
  TFG_RETURN_IF_ERROR(c.InputsFloat32({0, 1, 2}));
  TFG_RETURN_IF_ERROR(c.OutputsFloat32());
  TFG_RETURN_IF_ERROR(c.Constant(1, "filter"));
  TFG_RETURN_IF_ERROR(CheckNonEmpty(c));
  conv::ConvGeometry g;
  Status gs = conv::DepthwiseGeometryOf(c.node(), c.input(0).shape, c.input(1).shape, &g);
  if (!gs.ok()) return Unimplemented(gs.message());
  return CheckConstBias(c, 2, g.out_c);
}

Status BuildDepthwise(GpuBuildContext& ctx) {
  conv::ConvGeometry g;
  Status gs = conv::DepthwiseGeometryOf(ctx.node(), ctx.cpu_input(0).shape, ctx.cpu_input(1).shape, &g);
  if (!gs.ok()) return Internal("DEPTHWISE_CONV_2D: " + gs.message());
  const int KH = g.k_h, KW = g.k_w, OC = g.out_c, mult = g.mult;
  const int out_h = g.out_h, out_w = g.out_w, PT = g.pad_t, PL = g.pad_l;
  GpuTensorRef src = ctx.input(0), dst = ctx.output(0);
  const BHWC& si = src.shape;
  const BHWC& so = dst.shape;
  if (so.h != out_h || so.w != out_w || so.c != OC || so.b != si.b) return Internal("DEPTHWISE_CONV_2D output shape differs");
  const int dS = so.slices();
  const int SH = g.stride_h, SW = g.stride_w, DH = g.dil_h, DW = g.dil_w;
  // Weights [slice][ky][kx] float4, bias [slice] float4.
  std::vector<float> w = PackDepthwiseWeights(ctx.const_input(1).data(), KH, KW, OC);
  KernelBuilder& kb = ctx.NewKernel("depthwise_conv2d");
  kb.AddInput("src", src);
  kb.AddOutput("dst", dst);
  kb.AddConstBuffer("w", std::move(w));
  const bool has_bias = ctx.has_input(2);
  if (has_bias) {
    kb.AddConstBuffer("bias", PaddedBias(ctx.const_input(2).data(), OC, size_t(dS) * 4));
  }
  // Rows per item: YT vertically adjacent outputs share the input rows they read (and the
  // weights); lanes of a warp take adjacent x, so reads stay coalesced. Several x per item
  // (sharing columns) measured slower on an H200.
  int YT = std::min(so.h, 4);
  while (YT > 1 && int64_t(so.w) * CeilDiv(so.h, YT) * dS * so.b < kDwTargetItems) YT /= 2;
  if (env::DwRows() > 0) YT = std::min(so.h, env::DwRows());
  const int64_t max_y = CeilDiv(so.h, YT) * YT - 1;
  const bool need_y = PT > 0 || max_y * SH - PT + int64_t(KH - 1) * DH >= si.h;
  const bool need_x = PL > 0 || int64_t(so.w - 1) * SW - PL + int64_t(KW - 1) * DW >= si.w;
  std::string b;
  b += "const int x = get_global_id(0), gy = get_global_id(1), z = get_global_id(2);\n";
  b += "if (x >= dst_W || gy * " + I(YT) + " >= dst_H || z >= dst_S * dst_B) return;\n";
  b += "const int s = z % dst_S, b = z / dst_S;\n";
  b += "const int y0 = gy * " + I(YT) + ";\n";
  for (int t = 0; t < YT; ++t) b += "float4 a" + I(t) + " = (float4)(0.0f);\n";
  b += "const int xb = x * " + I(SW) + " - " + I(PL) + ", yb = y0 * " + I(SH) + " - " + I(PT) + ";\n";
  b += "const int wi = s * " + I(KH * KW) + ";\n";
  if (mult != 1) {
    // Output lane l (channel 4s+l) reads input channel (4s+l)/mult. Input slice boundaries fall on
    // output channels 4k*mult, multiples of 4, so the 4 lanes read one input slice.
    kb.AddDefine("float lane4_(float4 v, int k) { return k == 0 ? v.x : (k == 1 ? v.y : (k == 2 ? v.z : v.w)); }\n");
    b += "const int ic0 = min((4 * s) / " + I(mult) + ", src_C - 1);\n";
    b += "const int sa = ic0 / 4;\n";
    for (int l = 0; l < 4; ++l)
      b += "const int li" + I(l) + " = min((4 * s + " + I(l) + ") / " + I(mult) + ", src_C - 1) - 4 * sa;\n";
  }
  for (int kx = 0; kx < KW; ++kx) {
    std::string ix = "(xb + " + I(kx * DW) + ")";
    b += "const bool okx" + I(kx) + " = " + (need_x ? ix + " >= 0 && " + ix + " < src_W" : std::string("true")) + ";\n";
  }
  // Distinct input rows t*SH + ky*DH: each is read once (KW columns) and feeds every (t, ky)
  // that lands on it.
  std::vector<int> rows;
  for (int t = 0; t < YT; ++t)
    for (int ky = 0; ky < KH; ++ky) {
      int r = t * SH + ky * DH;
      if (std::find(rows.begin(), rows.end(), r) == rows.end()) rows.push_back(r);
    }
  std::sort(rows.begin(), rows.end());
  for (int r : rows) {
    b += "{\nconst int iy = yb + " + I(r) + ";\n";
    b += need_y ? "if (iy >= 0 && iy < src_H) {\n" : "{\n";
    for (int kx = 0; kx < KW; ++kx) {
      std::string ix = "xb + " + I(kx * DW), c = "c" + I(kx);
      if (mult == 1) {
        std::string rd = "READ_src(b, iy, " + ix + ", s)";
        b += "const float4 " + c + " = " + (need_x ? "okx" + I(kx) + " ? " + rd + " : (float4)(0.0f)" : rd) + ";\n";
      } else {
        b += "float4 " + c + " = (float4)(0.0f);\n";
        b += "if (okx" + I(kx) + ") {\n";
        b += "const float4 va = READ_src(b, iy, " + ix + ", sa);\n";
        b += c + " = (float4)(lane4_(va, li0), lane4_(va, li1), lane4_(va, li2), lane4_(va, li3));\n}\n";
      }
    }
    for (int t = 0; t < YT; ++t)
      for (int ky = 0; ky < KH; ++ky) {
        if (t * SH + ky * DH != r) continue;
        for (int kx = 0; kx < KW; ++kx)
          b += "a" + I(t) + " += c" + I(kx) + " * LOADW4_w(wi + " + I(ky * KW + kx) + ");\n";
      }
    b += "}\n}\n";
  }
  for (int t = 0; t < YT; ++t) {
    b += "if (y0 + " + I(t) + " < dst_H) {\nfloat4 r = a" + I(t) + ";\n";
    if (has_bias) b += "r += LOADW4_bias(s);\n";
    b += ActivationCode(g.act, "r");
    b += "WRITE_dst(r, b, y0 + " + I(t) + ", x, s);\n}\n";
  }
  kb.body = b;
  kb.grid = {size_t(so.w), size_t(CeilDiv(so.h, YT)), size_t(dS) * so.b};
  return OkStatus();
}

// Computed by its reader (GpuInlineFn; depth multiplier 1): the value at (b, y, x, s) from the
// input slice s, taps unrolled, bounds checks only where the window can leave the input.
Status InlineDepthwise(GpuBuildContext& ctx, KernelBuilder& kb, const std::string& P, std::string* body, int64_t* macs) {
  conv::ConvGeometry g;
  TFG_RETURN_IF_ERROR(conv::DepthwiseGeometryOf(ctx.node(), ctx.cpu_input(0).shape, ctx.cpu_input(1).shape, &g));
  if (g.mult != 1) return Unimplemented("depth multiplier other than 1");
  GpuTensorRef src = ctx.input(0);
  if (src.shape.h != g.in_h || src.shape.w != g.in_w || src.shape.c != g.in_c) return Internal("input shape differs");
  const int KH = g.k_h, KW = g.k_w, OC = g.out_c, dS = (OC + 3) / 4;
  std::vector<float> w = PackDepthwiseWeights(ctx.const_input(1).data(), KH, KW, OC);
  const std::string X = P + "x", Wn = P + "w", Bn = P + "bias";
  kb.AddInput(X, src);
  kb.AddConstBuffer(Wn, std::move(w));
  const bool has_bias = ctx.has_input(2);
  if (has_bias) {
    kb.AddConstBuffer(Bn, PaddedBias(ctx.const_input(2).data(), OC, size_t(dS) * 4));
  }
  const bool need_y = g.pad_t > 0 || int64_t(g.out_h - 1) * g.stride_h - g.pad_t + int64_t(KH - 1) * g.dil_h >= g.in_h;
  const bool need_x = g.pad_l > 0 || int64_t(g.out_w - 1) * g.stride_w - g.pad_l + int64_t(KW - 1) * g.dil_w >= g.in_w;
  std::string b;
  b += "const int wi_ = s * " + I(KH * KW) + ";\n";
  b += "const int yb_ = y * " + I(g.stride_h) + " - " + I(g.pad_t) + ", xb_ = x * " + I(g.stride_w) + " - " + I(g.pad_l) + ";\n";
  for (int kx = 0; kx < KW; ++kx) {
    const std::string ix = "(xb_ + " + I(kx * g.dil_w) + ")";
    b += "const bool okx" + I(kx) + "_ = " + (need_x ? ix + " >= 0 && " + ix + " < " + X + "_W" : std::string("true")) + ";\n";
  }
  for (int ky = 0; ky < KH; ++ky) {
    b += "{\nconst int iy_ = yb_ + " + I(ky * g.dil_h) + ";\n";
    b += need_y ? "if (iy_ >= 0 && iy_ < " + X + "_H) {\n" : "{\n";
    for (int kx = 0; kx < KW; ++kx) {
      const std::string rd = "READ_" + X + "(b, iy_, xb_ + " + I(kx * g.dil_w) + ", s)";
      const std::string wv = "LOADW4_" + Wn + "(wi_ + " + I(ky * KW + kx) + ")";
      b += need_x ? "if (okx" + I(kx) + "_) r_ += " + rd + " * " + wv + ";\n" : "r_ += " + rd + " * " + wv + ";\n";
    }
    b += "}\n}\n";
  }
  if (has_bias) b += "r_ += LOADW4_" + Bn + "(s);\n";
  b += ActivationCode(g.act, "r_");
  *body = b;
  *macs = int64_t(KH) * KW * 4;
  return OkStatus();
}

}  // namespace

const GpuOpSupport kGpu_DEPTHWISE_CONV_2D = {CheckDepthwise, BuildDepthwise, nullptr, false, nullptr, nullptr,
                                             InlineDepthwise};

}  // namespace tflite_gpu
