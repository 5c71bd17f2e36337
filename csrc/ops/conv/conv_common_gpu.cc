// The convolution-like generator (EmitConv) shared by CONV_2D, FULLY_CONNECTED, TRANSPOSE_CONV,
// Convolution2DTransposeBias and BATCH_MATMUL (constant rhs); see conv_common_gpu.h.
#include "ops/conv/conv_common_gpu.h"

#include "runtime/env.h"

namespace tflite_gpu {
namespace conv_gpu {

namespace {

// 1x1, stride-1 convolutions (and the pointwise layers of MobileNets) as a tiled GEMM:
// C[position][out channel] = sum_k A[position][k] * W[k][out channel], positions flattened over
// B x H x W (M of them), K = input channels, N = output channels. A work group of 16 x 16 items
// computes a tile of TM = 16 * RM positions x NS = 16 * RN destination slices (64 * RN channels);
// item (lx, ly) owns positions lx + 16 r (r < RM) and slices ly + 16 c (c < RN), RM x RN float4
// accumulators. The K loop takes 8 source slices (32 channels) per step: the work group stages
// the A tile (8 slices x TM positions, as scalars per channel) and the W tile (32 channels x NS
// float4) in local memory, then each item does 32 x RM x RN float4 multiply-adds from RM scalar
// and RN float4 local loads. Weights are packed [k][n] (K padded to 32, N to the tile), as float4
// over 4 output channels. Items along lx take consecutive positions, so the global reads of A and
// the writes of C are coalesced float4 rows of one slice.
struct GemmTile { int rm = 0, rn = 0; };

// The tile for M positions x dS destination slices. Measured on an NVIDIA H100 (MobileNet v1 at
// batch 32, every tile forced per layer, TFLITE_GPU_CONV_GEMM): the 8x2 tile (128 positions x
// 128 channels) is the fastest per work group but runs one group per compute unit, so it wins
// from two full waves on; with one to two waves of it, 4x2 (two groups per unit) is faster
// (14x14x512->512: 109 vs 125 us); a tile wider than the layer's channels wastes its padding.
// Below one wave of the smallest tile the direct kernel, with its split K loop, serves better
// (batch-1 layers of 14x14 and less). TFLITE_GPU_CONV_GEMM = "0" turns the GEMM off, "RMxRN"
// forces a tile.
GemmTile ChooseGemmTile(int64_t M, int dS, const gpu::GpuDeviceCaps& caps) {
  const std::string env_v = env::ConvGemm();
  if (env_v == "0") return {};
  if (caps.max_work_group_size < 256) return {};
  if (dS < 8) return {};
  auto groups = [&](int rm, int rn) { return CeilDiv(M, 16 * rm) * CeilDiv(dS, 16 * rn); };
  int frm = 0, frn = 0;
  if (std::sscanf(env_v.c_str(), "%dx%d", &frm, &frn) == 2 && (frm == 1 || frm == 2 || frm == 4 || frm == 8) &&
      (frn == 1 || frn == 2 || frn == 4))
    return {frm, frn};
  const int64_t cu = caps.compute_units > 0 ? caps.compute_units : 16;
  for (int rn = dS >= 32 ? 2 : 1; rn >= 1; --rn) {  // 16 * rn slices per tile, at most the layer's
    if (groups(8, rn) >= 2 * cu) return {8, rn};
    if (groups(4, rn) >= cu) return {4, rn};
    if (groups(2, rn) >= cu) return {2, rn};
  }
  return {};
}

Status EmitPointwiseGemm(GpuBuildContext& ctx, const std::string& name, const GpuTensorRef& src,
                         const GpuTensorRef& dst, const ConvCore& c, GemmTile tile) {
  const BHWC& si = src.shape;
  const BHWC& so = dst.shape;
  const int dS = so.slices(), SS = si.slices();
  const int RM = tile.rm, RN = tile.rn, TM = 16 * RM, NS = 16 * RN;
  const int64_t P = int64_t(so.h) * so.w, PB = P * so.b;
  const int GN = int(CeilDiv(dS, NS));          // work groups along N
  const int NPS = GN * NS;                       // padded destination slices
  const int KP = int(CeilDiv(SS, 8)) * 32;       // padded input channels (K steps of 32)
  std::vector<float> w(size_t(KP) * NPS * 4, 0.f);
  for (int k = 0; k < c.IC; ++k)
    for (int oc = 0; oc < c.OC; ++oc) w[size_t(k) * NPS * 4 + oc] = c.W(oc, 0, 0, k);
  KernelBuilder& kb = ctx.NewKernel(name + "_gemm" + I(RM) + "x" + I(RN));
  kb.AddInput("src", src);
  kb.AddOutput("dst", dst);
  kb.AddConstBuffer("w", std::move(w));
  if (c.bias) {
    kb.AddConstBuffer("bias", PaddedBias(c.bias, c.OC, size_t(NPS) * 4));
  }
  const std::string sTM = I(TM), sNS = I(NS), sP = I(P), sPB = I(PB);
  std::string b;
  // K steps of KS = 8 source slices (32 channels). Software pipelining: the global loads of step
  // k + 1 go to registers while step k computes from local memory, so the load latency hides
  // behind the multiply-adds even with one work group per compute unit.
  const int KS = 8, KC = 4 * KS;
  const int NA = int(CeilDiv(int64_t(KS) * TM, 256)), NW = KC * NS / 256;
  b += "const int lx = get_local_id(0), ly = get_local_id(1), lid = ly * 16 + lx;\n";
  b += "const int m0 = get_group_id(0) * " + sTM + ", n0 = get_group_id(1) * " + sNS + ";\n";
  b += "__local float As[" + I(KC * TM) + "];\n";
  b += "__local float4 Ws[" + I(KC * NS) + "];\n";
  for (int r = 0; r < RM; ++r)
    for (int q = 0; q < RN; ++q) b += "float4 a" + I(r) + "_" + I(q) + " = (float4)(0.0f);\n";
  for (int j = 0; j < NA; ++j) b += "float4 pa" + I(j) + ";\n";
  for (int j = 0; j < NW; ++j) b += "float4 pw" + I(j) + ";\n";
  auto load = [&](const std::string& k0) {
    std::string t;
    for (int j = 0; j < NA; ++j) {
      const std::string J = I(j), i = "(lid + " + I(256 * j) + ")";
      t += "{ const int sl = " + i + " / " + sTM + ", q = m0 + " + i + " % " + sTM + ", s = " + k0 + " + sl;\n";
      t += "  pa" + J + " = (sl < " + I(KS) + " && q < " + sPB + " && s < " + I(SS) + ") ? READ_src(q / " + sP +
           ", 0, q % " + sP + ", s) : (float4)(0.0f); }\n";
    }
    for (int j = 0; j < NW; ++j) {
      const std::string i = "(lid + " + I(256 * j) + ")";
      t += "pw" + I(j) + " = LOADW4_w((" + k0 + " * 4 + " + i + " / " + sNS + ") * " + I(NPS) + " + n0 + " + i + " % " +
           sNS + ");\n";
    }
    return t;
  };
  b += load("0");
  b += "for (int k0 = 0; k0 < " + I(SS) + "; k0 += " + I(KS) + ") {\n";
  for (int j = 0; j < NA; ++j) {
    const std::string J = I(j), i = "(lid + " + I(256 * j) + ")";
    b += "  if (" + i + " < " + I(KS * TM) + ") { const int sl = " + i + " / " + sTM + ", m = " + i + " % " + sTM + ";\n";
    b += "    As[(sl * 4) * " + sTM + " + m] = pa" + J + ".x; As[(sl * 4 + 1) * " + sTM + " + m] = pa" + J + ".y;\n";
    b += "    As[(sl * 4 + 2) * " + sTM + " + m] = pa" + J + ".z; As[(sl * 4 + 3) * " + sTM + " + m] = pa" + J + ".w; }\n";
  }
  for (int j = 0; j < NW; ++j) b += "  Ws[lid + " + I(256 * j) + "] = pw" + I(j) + ";\n";
  b += "  barrier(CLK_LOCAL_MEM_FENCE);\n";
  b += "  if (k0 + " + I(KS) + " < " + I(SS) + ") {\n" + load("(k0 + " + I(KS) + ")") + "  }\n";
  b += "  #pragma unroll 8\n";
  b += "  for (int kk = 0; kk < " + I(KC) + "; ++kk) {\n";
  for (int r = 0; r < RM; ++r) b += "    const float x" + I(r) + " = As[kk * " + sTM + " + lx + " + I(16 * r) + "];\n";
  for (int q = 0; q < RN; ++q) b += "    const float4 w" + I(q) + " = Ws[kk * " + sNS + " + ly + " + I(16 * q) + "];\n";
  for (int r = 0; r < RM; ++r)
    for (int q = 0; q < RN; ++q) b += "    a" + I(r) + "_" + I(q) + " += x" + I(r) + " * w" + I(q) + ";\n";
  b += "  }\n";
  b += "  barrier(CLK_LOCAL_MEM_FENCE);\n";
  b += "}\n";
  for (int r = 0; r < RM; ++r)
    for (int q = 0; q < RN; ++q) {
      b += "{\nconst int op = m0 + lx + " + I(16 * r) + ", os = n0 + ly + " + I(16 * q) + ";\n";
      b += "if (op < " + sPB + " && os < dst_S) {\n";
      b += "float4 r = a" + I(r) + "_" + I(q) + ";\n";
      if (c.bias) b += "r += LOADW4_bias(os);\n";
      b += ActivationCode(c.act, "r");
      b += "const int ob = op / " + sP + ", oq = op % " + sP + ";\n";
      b += "WRITE_dst(r, ob, oq / dst_W, oq % dst_W, os);\n}\n}\n";
    }
  kb.body = b;
  kb.local = {16, 16, 1};
  kb.grid = {size_t(CeilDiv(PB, TM) * 16), size_t(GN) * 16, 1};
  return OkStatus();
}

}  // namespace

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
  // A computed input (a depthwise conv recomputed here, see FusedSliceTile): each item group of ST
  // destination slices recomputes the values it reads, so ST stays at its fused size.
  const bool computed = ctx.computed(src);
  if (!computed && !c.remap && !c.transposed && c.groups == 1 && c.KH == 1 && c.KW == 1 && c.SH == 1 && c.SW == 1 &&
      c.PT == 0 && c.PL == 0 && si.h == so.h && si.w == so.w && si.b == so.b && ctx.flat_readable(src)) {
    if (WantMma(ctx, src, dst)) return EmitPointwiseMma(ctx, name, src, dst, c);
    const GemmTile t = ChooseGemmTile(int64_t(so.b) * so.h * so.w, dS, ctx.caps());
    if (t.rm > 0) return EmitPointwiseGemm(ctx, name, src, dst, c, t);
  }
  if (computed) ST = FusedSliceTile(dS);
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
  if (computed) XT = std::min(XT, kMaxFusedXT);
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
  while (tiles() * KSPLIT < kTargetItems / 4 && (XT > 1 || (ST > 1 && !computed))) {
    if (computed)
      XT = XT > 2 ? 2 : 1;
    else if (XT > 2)
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
    kb.AddConstBuffer("bias", PaddedBias(c.bias, c.OC, size_t(G) * ST * 4));
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

}  // namespace conv_gpu
}  // namespace tflite_gpu
