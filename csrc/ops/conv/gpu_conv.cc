// GPU side of the conv family: CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, TRANSPOSE_CONV,
// Convolution2DTransposeBias, BATCH_MATMUL.
//
// Convolution-like ops (CONV_2D, FULLY_CONNECTED, TRANSPOSE_CONV, Convolution2DTransposeBias and
// BATCH_MATMUL with a constant rhs) share one generator (EmitConv). Weights are packed on the host as
//   [item group g][ky][kx][src slice s][j < ST][i < 4] float4
// where an item group is ST consecutive destination slices and the float4 holds the weights of
// the 4 output lanes for input lane i, so the inner loop does, per source slice,
//   acc += in.x * w0 + in.y * w1 + in.z * w2 + in.w * w3
// for ST destination slices x XT output positions per work item (all loads float4; the lanes of
// a warp share g, so weight loads are uniform). Positions are flattened over B x H x W. When the
// grid would be small (little spatial size), the source-slice loop is split over KSPLIT items of
// a work group and reduced in local memory. Tile choices (ST, XT, KSPLIT) were tuned on an H200
// with MobileNet v1/v2 at batch 1 and 32.
//
// Depthwise convolution is a direct kernel per slice and x, computing YT vertically adjacent
// outputs that share their input rows (generated unrolled code).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>

#include "gpu/gpu_op.h"
#include "ops/conv/conv_common.h"

namespace tflite_gpu {
namespace {

using gpu::BHWC;
using gpu::GpuBuildContext;
using gpu::GpuCheckContext;
using gpu::GpuTensorRef;
using gpu::KernelBuilder;

std::string I(int64_t v) { return std::to_string(v); }

// The fused activation as TFLite's float conv kernels apply it: a clamp for RELU, RELU6 and
// RELU_N1_TO_1 (NaN passes through, as conv::Clamp); NONE, TANH and SIGN_BIT do nothing.
std::string ActivationCode(int act, const std::string& v) { return ActivationClampCode(act, v, false); }

Status CheckAct(int act) {
  float lo, hi;
  if (!ActivationBounds(act, &lo, &hi)) return Unimplemented("unsupported fused activation " + I(act));
  return OkStatus();
}

Status CheckNonEmpty(const GpuCheckContext& c) {
  for (int i = 0; i < c.num_outputs(); ++i)
    if (c.output(i).num_elements() == 0) return Unimplemented("empty output");
  if (c.has_input(0) && c.input(0).num_elements() == 0) return Unimplemented("empty input");
  // Kernels index tensors with 32-bit ints.
  for (int i = 0; i < c.num_inputs(); ++i)
    if (c.has_input(i) && c.input(i).num_elements() > (int64_t(1) << 29)) return Unimplemented("tensor too large");
  for (int i = 0; i < c.num_outputs(); ++i)
    if (c.output(i).num_elements() > (int64_t(1) << 29)) return Unimplemented("tensor too large");
  return OkStatus();
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Work items (threads) the generators aim at: below, they trade per-item reuse (several outputs
// per item) for parallelism, and split the source-slice loop of convolutions over a work group.
constexpr int64_t kTargetItems = 131072;
constexpr int kMaxXT = 4;  // positions per item (8 measured slower on an H200)
constexpr int kMaxSplit = 16;
constexpr int kMinSplitWork = 8;  // source slices x taps per item when the loop is split
constexpr int64_t kDwTargetItems = 16384;

// ------------------------------------------------------------------ convolution-like generator

struct ConvCore {
  int KH = 1, KW = 1, SH = 1, SW = 1, DH = 1, DW = 1, PT = 0, PL = 0;
  int OC = 0, IC = 0;  // channels of the dense weight view
  int groups = 1;      // conv groups: W(oc, ., ., ic) is zero unless ic is in oc's group
  int act = 0;
  bool transposed = false;  // TRANSPOSE_CONV gather
  bool remap = false;       // 1x1 where output pixel r (row-major over B, H, W) reads input pixel r
  bool allow_xt = true;
  std::function<float(int, int, int, int)> W;  // dense weights (oc, ky, kx, ic)
  const float* bias = nullptr;                  // [OC] or nullptr
};

Status EmitConv(GpuBuildContext& ctx, const std::string& name, const GpuTensorRef& src, const GpuTensorRef& dst,
                const ConvCore& c) {
  const BHWC& si = src.shape;
  const BHWC& so = dst.shape;
  const int dS = so.slices(), sS = si.slices();
  if (so.c != c.OC || si.c != c.IC) return Internal("channel mismatch in the conv generator");
  if (c.remap && int64_t(si.b) * si.h * si.w != int64_t(so.b) * so.h * so.w)
    return Internal("remap: pixel counts differ");
  // Grouped: when every destination slice lies in one group and groups are slice aligned, each
  // item loops over its group's source slices only; otherwise the dense (zero-filled) weights.
  bool gslices = false;
  const int per_group = c.OC / c.groups, fc = c.IC / c.groups;
  int ST = std::min(4, dS);
  if (c.groups > 1 && fc % 4 == 0 && per_group % 4 == 0) {
    gslices = true;
    ST = (per_group / 4) % 4 == 0 && dS >= 4 ? 4 : ((per_group / 4) % 2 == 0 && dS >= 2 ? 2 : 1);
  }
  const int SS = gslices ? fc / 4 : sS;  // source slices each item loops over
  const int taps = c.KH * c.KW;
  // Output positions are flattened over B x H x W (PB of them, P per batch); an item computes XT
  // of them, p = tile + t * NT, and ST destination slices.
  const int64_t P = int64_t(so.h) * so.w, PB = P * so.b;
  int XT = (c.transposed || c.remap || !c.allow_xt) ? 1 : int(std::min<int64_t>(kMaxXT, PB));
  int KSPLIT = 1;
  const size_t max_wg = std::max<size_t>(1, std::min<size_t>(256, ctx.caps().max_work_group_size));
  auto tiles = [&]() { return CeilDiv(PB, XT) * CeilDiv(dS, ST); };
  auto choose_split = [&]() {
    KSPLIT = 1;
    while (KSPLIT * 2 <= kMaxSplit && size_t(KSPLIT * 2) <= max_wg && SS % (KSPLIT * 2) == 0 &&
           (SS / (KSPLIT * 2)) * taps >= kMinSplitWork && tiles() * KSPLIT * 2 <= kTargetItems)
      KSPLIT *= 2;
  };
  choose_split();
  while (tiles() * KSPLIT < kTargetItems / 4 && (XT > 1 || ST > 1)) {
    if (XT > 2)
      XT = XT > 4 ? 4 : 2;
    else if (ST > 2 || (ST == 2 && XT == 1))
      ST = ST >= 4 ? 2 : 1;
    else
      XT = 1;
    choose_split();
  }
  if (gslices && (per_group / 4) % ST != 0) ST = 1;
  const int64_t NT = CeilDiv(PB, XT);   // position tiles
  const int G = int(CeilDiv(dS, ST));   // item groups of ST slices
  size_t LX = 1;
  while (LX < size_t(NT) && LX * 2 * KSPLIT <= max_wg && LX < 64) LX *= 2;

  // Packed weights.
  const int64_t per_tap = int64_t(SS) * ST * 4;  // float4s per (g, ky, kx)
  const int64_t per_g = int64_t(taps) * per_tap;
  std::vector<float> w(size_t(G * per_g * 4), 0.f);
  for (int g = 0; g < G; ++g) {
    int sb = gslices ? (g * ST * 4 / per_group) * (fc / 4) : 0;
    for (int ky = 0; ky < c.KH; ++ky)
      for (int kx = 0; kx < c.KW; ++kx)
        for (int s = 0; s < SS; ++s)
          for (int j = 0; j < ST; ++j)
            for (int i = 0; i < 4; ++i) {
              int ic = (sb + s) * 4 + i;
              if (ic >= c.IC) continue;
              float* d = &w[size_t((g * per_g + (int64_t(ky) * c.KW + kx) * per_tap + int64_t(s) * ST * 4 + j * 4 + i) * 4)];
              for (int l = 0; l < 4; ++l) {
                int oc = (g * ST + j) * 4 + l;
                if (oc >= c.OC) continue;
                if (c.groups > 1 && ic / fc != oc / per_group) continue;
                d[l] = c.W(oc, ky, kx, ic);
              }
            }
  }
  KernelBuilder& kb = ctx.NewKernel(name);
  kb.AddInput("src", src);
  kb.AddOutput("dst", dst);
  kb.AddConstBuffer("w", std::move(w));
  if (c.bias) {
    std::vector<float> bias(size_t(G) * ST * 4, 0.f);
    for (int oc = 0; oc < c.OC; ++oc) bias[oc] = c.bias[oc];
    kb.AddConstBuffer("bias", std::move(bias));
  }
  const std::string sST = I(ST), sG = I(G), sK = I(KSPLIT), sNT = I(NT), sP = I(P), sPB = I(PB);
  std::string b;
  b += "const int tile = get_global_id(0), z = get_global_id(2);\n";
  if (KSPLIT > 1) {
    b += "const int lx = get_local_id(0), kp = get_local_id(1);\n";
    b += "const bool live = tile < " + sNT + " && z < " + sG + ";\n";
    b += "const int g = live ? z : 0;\n";
  } else {
    b += "if (tile >= " + sNT + " || z >= " + sG + ") return;\n";
    b += "const int g = z;\n";
  }
  for (int j = 0; j < ST; ++j)
    for (int t = 0; t < XT; ++t) b += "float4 a" + I(j) + "_" + I(t) + " = (float4)(0.0f);\n";
  b += "const int wg = g * " + I(per_g) + ";\n";
  if (gslices)
    b += "const int sb = (g * " + I(ST * 4) + " / " + I(per_group) + ") * " + I(fc / 4) + ";\n";
  else
    b += "const int sb = 0;\n";
  // Positions (clamped: tail items compute a valid position and do not write it).
  for (int t = 0; t < XT; ++t) {
    std::string T = I(t);
    b += "const int p" + T + " = min(tile + " + I(int64_t(t) * NT) + ", " + I(PB - 1) + ");\n";
    if (so.b > 1)
      b += "const int b" + T + " = p" + T + " / " + sP + ", q" + T + " = p" + T + " % " + sP + ";\n";
    else
      b += "const int b" + T + " = 0, q" + T + " = p" + T + ";\n";
    b += "const int y" + T + " = q" + T + " / dst_W, x" + T + " = q" + T + " % dst_W;\n";
  }
  // The loop over source slices for one tap (a constant trip count; split: slices kp + i * KSPLIT,
  // KSPLIT divides SS): reads v<t>, then the FMAs.
  auto inner = [&](const std::vector<std::string>& read_t) {
    std::string s;
    s += "for (int i_ = 0; i_ < " + I(SS / KSPLIT) + "; ++i_) {\n";
    s += KSPLIT > 1 ? "  const int s = kp + i_ * " + sK + ";\n" : "  const int s = i_;\n";
    for (int t = 0; t < XT; ++t) s += "  const float4 v" + I(t) + " = " + read_t[t] + ";\n";
    s += "  const int wi = wk + s * " + I(ST * 4) + ";\n";
    for (int j = 0; j < ST; ++j) {
      s += "  {\n";
      for (int i = 0; i < 4; ++i) s += "    const float4 w" + I(i) + " = LOADW4_w(wi + " + I(j * 4 + i) + ");\n";
      for (int t = 0; t < XT; ++t) {
        std::string a = "a" + I(j) + "_" + I(t), v = "v" + I(t);
        s += "    " + a + " += " + v + ".x * w0; " + a + " += " + v + ".y * w1; " + a + " += " + v + ".z * w2; " + a +
             " += " + v + ".w * w3;\n";
      }
      s += "  }\n";
    }
    s += "}\n";
    return s;
  };
  const bool pointwise = !c.remap && !c.transposed && taps == 1 && c.SH == 1 && c.SW == 1 && c.PT == 0 && c.PL == 0 &&
                         si.h == so.h && si.w == so.w && ctx.flat_readable(src);
  if (pointwise) {
    // Same pixel in and out: the PHWC4 offset of (y, x) is y * W + x = p.
    b += "{\nconst int wk = wg;\n";
    std::vector<std::string> reads;
    for (int t = 0; t < XT; ++t) reads.push_back("READ_src(b" + I(t) + ", 0, q" + I(t) + ", sb + s)");
    b += inner(reads);
    b += "}\n";
  } else if (c.remap) {
    b += "const int rx = p0 % src_W, rt_ = p0 / src_W;\n";
    b += "const int ry = rt_ % src_H, rb = rt_ / src_H;\n";
    b += "{\nconst int wk = wg;\n";
    b += inner({"READ_src(rb, ry, rx, sb + s)"});
    b += "}\n";
  } else if (!c.transposed) {
    // Direct convolution. Bounds checks only where the window can leave the input.
    const bool need_y = c.PT > 0 || int64_t(so.h - 1) * c.SH - c.PT + int64_t(c.KH - 1) * c.DH >= si.h;
    const bool need_x = c.PL > 0 || int64_t(so.w - 1) * c.SW - c.PL + int64_t(c.KW - 1) * c.DW >= si.w;
    b += "for (int ky = 0; ky < " + I(c.KH) + "; ++ky) {\n";
    for (int t = 0; t < XT; ++t)
      b += "const int iy" + I(t) + " = y" + I(t) + " * " + I(c.SH) + " - " + I(c.PT) + " + ky * " + I(c.DH) + ";\n";
    if (need_y && XT == 1) b += "if (iy0 < 0 || iy0 >= src_H) continue;\n";
    b += "for (int kx = 0; kx < " + I(c.KW) + "; ++kx) {\n";
    std::vector<std::string> reads;
    for (int t = 0; t < XT; ++t) {
      std::string T = I(t), ix = "ix" + T;
      b += "const int " + ix + " = x" + T + " * " + I(c.SW) + " - " + I(c.PL) + " + kx * " + I(c.DW) + ";\n";
      std::string cond;
      if (need_y && XT > 1) cond = "iy" + T + " >= 0 && iy" + T + " < src_H";
      if (need_x) cond += std::string(cond.empty() ? "" : " && ") + ix + " >= 0 && " + ix + " < src_W";
      std::string rd = "READ_src(b" + T + ", iy" + T + ", " + ix + ", sb + s)";
      if (!cond.empty()) {
        b += "const bool ok" + T + " = " + cond + ";\n";
        reads.push_back("ok" + T + " ? " + rd + " : (float4)(0.0f)");
      } else {
        reads.push_back(rd);
      }
    }
    b += "const int wk = wg + (ky * " + I(c.KW) + " + kx) * " + I(per_tap) + ";\n";
    b += inner(reads);
    b += "}\n}\n";
  } else {
    // Transposed convolution as a gather: output (y, x) takes input (iy, ix) through tap
    // (ky, kx) when y + PT = iy * SH + ky (same for x).
    b += "const int ty = y0 + " + I(c.PT) + ", tx = x0 + " + I(c.PL) + ";\n";
    b += "for (int ky = ty % " + I(c.SH) + "; ky < " + I(c.KH) + "; ky += " + I(c.SH) + ") {\n";
    b += "const int dy = ty - ky;\nif (dy < 0) break;\n";
    b += "const int iy = dy / " + I(c.SH) + ";\nif (iy >= src_H) continue;\n";
    b += "for (int kx = tx % " + I(c.SW) + "; kx < " + I(c.KW) + "; kx += " + I(c.SW) + ") {\n";
    b += "const int dx = tx - kx;\nif (dx < 0) break;\n";
    b += "const int ix = dx / " + I(c.SW) + ";\nif (ix >= src_W) continue;\n";
    b += "const int wk = wg + (ky * " + I(c.KW) + " + kx) * " + I(per_tap) + ";\n";
    b += inner({"READ_src(b0, iy, ix, sb + s)"});
    b += "}\n}\n";
  }
  // Epilogue: bias, activation, write.
  auto epilogue = [&](const std::string& acc, const std::string& j, const std::string& t) {
    std::string s = "{\nfloat4 r = " + acc + ";\n";
    s += "const int os = g * " + sST + " + " + j + ", op = tile + " + t + " * " + sNT + ";\n";
    s += "if (os < dst_S && op < " + sPB + ") {\n";
    if (c.bias) s += "r += LOADW4_bias(os);\n";
    s += ActivationCode(c.act, "r");
    s += "const int ob = op / " + sP + ", oq = op % " + sP + ";\n";
    s += "WRITE_dst(r, ob, oq / dst_W, oq % dst_W, os);\n}\n}\n";
    return s;
  };
  if (KSPLIT == 1) {
    for (int j = 0; j < ST; ++j)
      for (int t = 0; t < XT; ++t) b += epilogue("a" + I(j) + "_" + I(t), I(j), I(t));
  } else {
    const int n = ST * XT;
    const std::string sLX = I(int64_t(LX)), sn = I(n);
    b += "__local float4 red[" + I(int64_t(n) * KSPLIT * int64_t(LX)) + "];\n";
    for (int j = 0; j < ST; ++j)
      for (int t = 0; t < XT; ++t)
        b += "red[(kp * " + sn + " + " + I(j * XT + t) + ") * " + sLX + " + lx] = a" + I(j) + "_" + I(t) + ";\n";
    b += "barrier(CLK_LOCAL_MEM_FENCE);\n";
    b += "if (live) for (int jt = kp; jt < " + sn + "; jt += " + sK + ") {\n";
    b += "float4 sum = (float4)(0.0f);\n";
    b += "for (int k = 0; k < " + sK + "; ++k) sum += red[(k * " + sn + " + jt) * " + sLX + " + lx];\n";
    b += "const int j = jt / " + I(XT) + ", t = jt % " + I(XT) + ";\n";
    b += epilogue("sum", "j", "t");
    b += "}\n";
  }
  kb.body = b;
  kb.local = {LX, size_t(KSPLIT), 1};
  kb.grid = {size_t(CeilDiv(NT, int64_t(LX)) * int64_t(LX)), size_t(KSPLIT), size_t(G)};
  return OkStatus();
}

// ------------------------------------------------------------------ CONV_2D

struct ConvShape {
  int in_h, in_w, in_c, out_h, out_w, out_c, k_h, k_w, f_c, groups, pad_t, pad_l;
};

Status ConvGeometry(const conv::GpuConvOptions& o, const Dims& in, const Dims& f, ConvShape* g) {
  if (in.size() != 4 || f.size() != 4) return Unimplemented("input and filter must have rank 4");
  if (o.padding != 0 && o.padding != 1) return Unimplemented("unknown padding");
  if (o.stride_w <= 0 || o.stride_h <= 0 || o.dil_w <= 0 || o.dil_h <= 0)
    return Unimplemented("strides and dilations must be positive");
  TFG_RETURN_IF_ERROR(CheckAct(o.act));
  g->in_h = in[1];
  g->in_w = in[2];
  g->in_c = in[3];
  g->out_c = f[0];
  g->k_h = f[1];
  g->k_w = f[2];
  g->f_c = f[3];
  if (g->k_h <= 0 || g->k_w <= 0 || g->f_c <= 0 || g->in_c <= 0 || g->in_c % g->f_c != 0)
    return Unimplemented("filter shape does not match the input");
  g->groups = g->in_c / g->f_c;
  if (g->out_c <= 0 || g->out_c % g->groups != 0) return Unimplemented("output channels not divisible by groups");
  Padding pad = o.padding == 0 ? Padding::kSame : Padding::kValid;
  g->out_h = ConvOutputSize(pad, g->in_h, g->k_h, o.stride_h, o.dil_h);
  g->out_w = ConvOutputSize(pad, g->in_w, g->k_w, o.stride_w, o.dil_w);
  g->pad_t = ConvPadBefore(pad, g->in_h, g->k_h, o.stride_h, o.dil_h, g->out_h);
  g->pad_l = ConvPadBefore(pad, g->in_w, g->k_w, o.stride_w, o.dil_w, g->out_w);
  return OkStatus();
}

Status CheckConstBias(const GpuCheckContext& c, int i, int n) {
  if (!c.has_input(i)) return OkStatus();
  TFG_RETURN_IF_ERROR(c.Constant(i, "bias"));
  if (c.input(i).num_elements() != n) return Unimplemented("bias size differs from the output channels");
  return OkStatus();
}

Status CheckConv2D(const GpuCheckContext& c) {
  TFG_RETURN_IF_ERROR(c.InputsFloat32({0, 1, 2}));
  TFG_RETURN_IF_ERROR(c.OutputsFloat32());
  TFG_RETURN_IF_ERROR(c.Constant(1, "filter"));
  TFG_RETURN_IF_ERROR(CheckNonEmpty(c));
  ConvShape g;
  TFG_RETURN_IF_ERROR(ConvGeometry(conv::Conv2DOptionsOf(c.node()), c.input(0).shape, c.input(1).shape, &g));
  TFG_RETURN_IF_ERROR(CheckConstBias(c, 2, g.out_c));
  if (g.groups > 1 && !(g.f_c % 4 == 0 && (g.out_c / g.groups) % 4 == 0) &&
      int64_t(g.out_c) * g.k_h * g.k_w * g.in_c > (int64_t(1) << 26))
    return Unimplemented("grouped convolution whose groups are not 4-channel aligned is too large for the GPU");
  return OkStatus();
}

Status BuildConv2D(GpuBuildContext& ctx) {
  const conv::GpuConvOptions o = conv::Conv2DOptionsOf(ctx.node());
  const Tensor& f = ctx.cpu_input(1);
  ConvShape g;
  TFG_RETURN_IF_ERROR(ConvGeometry(o, ctx.cpu_input(0).shape, f.shape, &g));
  GpuTensorRef src = ctx.input(0), dst = ctx.output(0);
  if (dst.shape.h != g.out_h || dst.shape.w != g.out_w || dst.shape.c != g.out_c || dst.shape.b != src.shape.b)
    return Internal("CONV_2D output shape differs from the geometry");
  ConvCore c;
  c.KH = g.k_h;
  c.KW = g.k_w;
  c.SH = o.stride_h;
  c.SW = o.stride_w;
  c.DH = o.dil_h;
  c.DW = o.dil_w;
  c.PT = g.pad_t;
  c.PL = g.pad_l;
  c.OC = g.out_c;
  c.IC = g.in_c;
  c.groups = g.groups;
  c.act = o.act;
  const float* fw = ctx.const_input(1).data();
  const int fc = g.f_c, kh = g.k_h, kw = g.k_w;
  c.W = [fw, fc, kh, kw](int oc, int ky, int kx, int ic) {
    return fw[((int64_t(oc) * kh + ky) * kw + kx) * fc + ic % fc];
  };
  c.bias = ctx.has_input(2) ? ctx.const_input(2).data() : nullptr;
  return EmitConv(ctx, "conv2d", src, dst, c);
}

// ------------------------------------------------------------------ DEPTHWISE_CONV_2D

Status CheckDepthwise(const GpuCheckContext& c) {
  TFG_RETURN_IF_ERROR(c.InputsFloat32({0, 1, 2}));
  TFG_RETURN_IF_ERROR(c.OutputsFloat32());
  TFG_RETURN_IF_ERROR(c.Constant(1, "filter"));
  TFG_RETURN_IF_ERROR(CheckNonEmpty(c));
  const conv::GpuConvOptions o = conv::DepthwiseOptionsOf(c.node());
  const Dims& in = c.input(0).shape;
  const Dims& f = c.input(1).shape;
  if (in.size() != 4 || f.size() != 4 || f[0] != 1) return Unimplemented("input and filter must have rank 4, filter [1, KH, KW, C]");
  if (o.padding != 0 && o.padding != 1) return Unimplemented("unknown padding");
  if (o.stride_w <= 0 || o.stride_h <= 0 || o.dil_w <= 0 || o.dil_h <= 0)
    return Unimplemented("strides and dilations must be positive");
  TFG_RETURN_IF_ERROR(CheckAct(o.act));
  if (in[3] <= 0 || f[3] % in[3] != 0 || f[1] <= 0 || f[2] <= 0) return Unimplemented("filter shape does not match the input");
  return CheckConstBias(c, 2, f[3]);
}

Status BuildDepthwise(GpuBuildContext& ctx) {
  const conv::GpuConvOptions o = conv::DepthwiseOptionsOf(ctx.node());
  const Tensor& f = ctx.cpu_input(1);
  const Dims& in = ctx.cpu_input(0).shape;
  const int KH = f.shape[1], KW = f.shape[2], OC = f.shape[3], IC = in[3];
  const int mult = OC / IC;
  Padding pad = o.padding == 0 ? Padding::kSame : Padding::kValid;
  const int out_h = ConvOutputSize(pad, in[1], KH, o.stride_h, o.dil_h);
  const int out_w = ConvOutputSize(pad, in[2], KW, o.stride_w, o.dil_w);
  const int PT = ConvPadBefore(pad, in[1], KH, o.stride_h, o.dil_h, out_h);
  const int PL = ConvPadBefore(pad, in[2], KW, o.stride_w, o.dil_w, out_w);
  GpuTensorRef src = ctx.input(0), dst = ctx.output(0);
  const BHWC& si = src.shape;
  const BHWC& so = dst.shape;
  if (so.h != out_h || so.w != out_w || so.c != OC || so.b != si.b) return Internal("DEPTHWISE_CONV_2D output shape differs");
  const int dS = so.slices();
  const int SH = o.stride_h, SW = o.stride_w, DH = o.dil_h, DW = o.dil_w;
  // Weights [slice][ky][kx] float4, bias [slice] float4.
  std::vector<float> w(size_t(dS) * KH * KW * 4, 0.f);
  const float* fw = ctx.const_input(1).data();
  for (int ky = 0; ky < KH; ++ky)
    for (int kx = 0; kx < KW; ++kx)
      for (int oc = 0; oc < OC; ++oc)
        w[((size_t(oc / 4) * KH + ky) * KW + kx) * 4 + oc % 4] = fw[(int64_t(ky) * KW + kx) * OC + oc];
  KernelBuilder& kb = ctx.NewKernel("depthwise_conv2d");
  kb.AddInput("src", src);
  kb.AddOutput("dst", dst);
  kb.AddConstBuffer("w", std::move(w));
  const bool has_bias = ctx.has_input(2);
  if (has_bias) {
    std::vector<float> bias(size_t(dS) * 4, 0.f);
    const float* bp = ctx.const_input(2).data();
    for (int oc = 0; oc < OC; ++oc) bias[oc] = bp[oc];
    kb.AddConstBuffer("bias", std::move(bias));
  }
  // Rows per item: YT vertically adjacent outputs share the input rows they read (and the
  // weights); lanes of a warp take adjacent x, so reads stay coalesced. Several x per item
  // (sharing columns) measured slower on an H200.
  int YT = std::min(so.h, 4);
  while (YT > 1 && int64_t(so.w) * CeilDiv(so.h, YT) * dS * so.b < kDwTargetItems) YT /= 2;
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
    b += ActivationCode(o.act, "r");
    b += "WRITE_dst(r, b, y0 + " + I(t) + ", x, s);\n}\n";
  }
  kb.body = b;
  kb.grid = {size_t(so.w), size_t(CeilDiv(so.h, YT)), size_t(dS) * so.b};
  return OkStatus();
}

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

// ------------------------------------------------------------------ BATCH_MATMUL

// Ranks 2..4 (the GPU layout has no rank 5). A constant rhs without batch (all its batch dims 1,
// rank <= lhs rank) and no adj_x is a 1x1 convolution over the lhs (adj_y folded into the packed
// weights); anything else runs a generic kernel reading both operands as tensors (adjoints by
// lane gathers: slower, but exact).
struct BmmPlan {
  bool as_conv = false;
  int M = 0, K = 0, N = 0;
  std::string why;
};

bool BatchDimsOne(const Dims& d) {
  for (size_t i = 0; i + 2 < d.size(); ++i)
    if (d[i] != 1) return false;
  return true;
}

BmmPlan PlanBmm(const conv::GpuConvOptions& o, const Tensor& lhs, const Tensor& rhs, const Tensor& out) {
  BmmPlan p;
  const Dims& l = lhs.shape;
  const Dims& r = rhs.shape;
  const int lr = int(l.size()), rr = int(r.size()), orank = int(out.shape.size());
  if (lr < 2 || lr > 4 || rr < 2 || rr > 4 || orank > 4) {
    p.why = "operands of rank 2 to 4 only (the GPU layout has at most 4 dimensions)";
    return p;
  }
  p.M = o.adj_x ? l[lr - 1] : l[lr - 2];
  p.K = o.adj_x ? l[lr - 2] : l[lr - 1];
  p.N = o.adj_y ? r[rr - 2] : r[rr - 1];
  const int rk = o.adj_y ? r[rr - 1] : r[rr - 2];
  if (rk != p.K || p.M <= 0 || p.K <= 0 || p.N <= 0) {
    p.why = "shapes do not match";
    return p;
  }
  p.as_conv = rhs.is_const && BatchDimsOne(r) && rr <= lr && !o.adj_x;
  return p;
}

Status CheckBatchMatMul(const GpuCheckContext& c) {
  if (c.num_inputs() != 2) return Unimplemented("expects 2 inputs");
  TFG_RETURN_IF_ERROR(c.InputsFloat32({0, 1}));
  TFG_RETURN_IF_ERROR(c.OutputsFloat32());
  TFG_RETURN_IF_ERROR(CheckNonEmpty(c));
  if (c.input(0).num_elements() == 0 || c.input(1).num_elements() == 0 || c.output(0).num_elements() == 0)
    return Unimplemented("empty tensor");
  BmmPlan p = PlanBmm(conv::BatchMatMulOptionsOf(c.node()), c.input(0), c.input(1), c.output(0));
  if (!p.why.empty()) return Unimplemented(p.why);
  return OkStatus();
}

// The BHWC coordinates of (output batch indices ob0/ob1, row, slice) for an operand of shape d
// when the output has rank R (batch dims aligned to the right; size-1 dims read index 0).
std::string OperandCoords(const Dims& d, int R, const std::string& row, const std::string& slice) {
  const int r = int(d.size());
  auto bi = [&](int i) {
    if (d[i] == 1) return std::string("0");
    return std::string("ob") + I(i + (R - r));
  };
  if (r == 2) return row + ", 0, 0, " + slice;
  if (r == 3) return bi(0) + ", 0, " + row + ", " + slice;
  return bi(0) + ", " + bi(1) + ", " + row + ", " + slice;
}

Status BuildBatchMatMul(GpuBuildContext& ctx) {
  const conv::GpuConvOptions o = conv::BatchMatMulOptionsOf(ctx.node());
  const Tensor& lhs = ctx.cpu_input(0);
  const Tensor& rhs = ctx.cpu_input(1);
  BmmPlan p = PlanBmm(o, lhs, rhs, ctx.cpu_output(0));
  if (!p.why.empty()) return Internal("BATCH_MATMUL: " + p.why);
  if (p.as_conv) {
    ConvCore c;
    c.OC = p.N;
    c.IC = p.K;
    const float* rp = ctx.const_input(1).data();
    const int N = p.N, K = p.K;
    if (o.adj_y)
      c.W = [rp, K](int n, int, int, int k) { return rp[int64_t(n) * K + k]; };
    else
      c.W = [rp, N](int n, int, int, int k) { return rp[int64_t(k) * N + n]; };
    GpuTensorRef src = ctx.input(0), dst = ctx.output(0);
    if (src.shape.b != dst.shape.b || src.shape.h != dst.shape.h || src.shape.w != dst.shape.w)
      return Internal("BATCH_MATMUL: lhs/output layouts differ");
    return EmitConv(ctx, "batch_matmul", src, dst, c);
  }
  const Dims& os = ctx.cpu_output(0).shape;
  const int R = int(os.size());
  GpuTensorRef a = ctx.input(0), bt = ctx.input(1), dst = ctx.output(0);
  KernelBuilder& kb = ctx.NewKernel("batch_matmul");
  kb.AddInput("lhs", a);
  kb.AddInput("rhs", bt);
  kb.AddOutput("dst", dst);
  if (o.adj_x)
    kb.AddDefine("float lane4_(float4 v, int k) { return k == 0 ? v.x : (k == 1 ? v.y : (k == 2 ? v.z : v.w)); }\n");
  // Grid: x = row m, y = output batch (flattened), z = output slice.
  const int OB0 = R >= 3 ? os[0] : 1, OB1 = R == 4 ? os[1] : 1;
  const int M = p.M, K = p.K, N = p.N, dS = dst.shape.slices();
  const char* lanes = "xyzw";
  std::string b;
  b += "const int m = get_global_id(0), ob = get_global_id(1), s = get_global_id(2);\n";
  b += "if (m >= " + I(M) + " || ob >= " + I(int64_t(OB0) * OB1) + " || s >= " + I(dS) + ") return;\n";
  b += "const int ob0 = ob / " + I(OB1) + ", ob1 = ob % " + I(OB1) + ";\n(void)ob0; (void)ob1;\n";
  b += "float4 acc = (float4)(0.0f);\n";
  // One block of nk (<= 4) contraction indices starting at 4 * ks.
  auto block = [&](const std::string& ks, int nk) {
    std::string c = "{\nfloat4 av = (float4)(0.0f);\n";
    if (!o.adj_x) {
      c += "av = READ_lhs(" + OperandCoords(lhs.shape, R, "m", ks) + ");\n";  // padding lanes are zero
    } else {
      for (int i = 0; i < nk; ++i)
        c += "av." + std::string(1, lanes[i]) + " = lane4_(READ_lhs(" +
             OperandCoords(lhs.shape, R, "4 * " + ks + " + " + I(i), "m >> 2") + "), m & 3);\n";
    }
    if (!o.adj_y) {
      for (int i = 0; i < nk; ++i)
        c += "acc += av." + std::string(1, lanes[i]) + " * READ_rhs(" +
             OperandCoords(rhs.shape, R, "4 * " + ks + " + " + I(i), "s") + ");\n";
    } else {
      // rhs rows are n: 4 rows of this output slice, each a float4 over k (padding lanes zero).
      c += "acc += (float4)(";
      for (int l = 0; l < 4; ++l)
        c += std::string(l ? ", " : "") + "dot(av, READ_rhs(" +
             OperandCoords(rhs.shape, R, "min(4 * s + " + I(l) + ", " + I(N - 1) + ")", ks) + "))";
      c += ");\n";
    }
    c += "}\n";
    return c;
  };
  const int KF = K / 4, KR = K % 4;
  if (KF > 0) b += "for (int ks = 0; ks < " + I(KF) + "; ++ks) " + block("ks", 4);
  if (KR) b += block(I(KF), KR);
  std::string out_coords = R == 2 ? "m, 0, 0, s" : (R == 3 ? "ob0, 0, m, s" : "ob0, ob1, m, s");
  b += "WRITE_dst(acc, " + out_coords + ");\n";
  kb.body = b;
  kb.grid = {size_t(M), size_t(OB0) * OB1, size_t(dS)};
  return OkStatus();
}

}  // namespace

const GpuOpSupport kGpu_CONV_2D = {CheckConv2D, BuildConv2D, nullptr, false};
const GpuOpSupport kGpu_DEPTHWISE_CONV_2D = {CheckDepthwise, BuildDepthwise, nullptr, false};
const GpuOpSupport kGpu_FULLY_CONNECTED = {CheckFullyConnected, BuildFullyConnected, nullptr, false};
const GpuOpSupport kGpu_TRANSPOSE_CONV = {CheckTransposeConv, BuildTransposeConv, nullptr, false};
const GpuOpSupport kGpu_Convolution2DTransposeBias = {CheckTransposeBias, BuildTransposeBias, nullptr, false};
const GpuOpSupport kGpu_BATCH_MATMUL = {CheckBatchMatMul, BuildBatchMatMul, nullptr, false};

}  // namespace tflite_gpu
