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

// The output store of one float4 accumulator: output position op (flattened over B x H x W, PB of
// them, P per batch) and slice os, both OpenCL expressions; inside the output, bias, the fused
// activation and WRITE_dst. Shared by the GEMM, split-K and direct kernels' epilogues.
std::string StoreOutput(const ConvCore& c, const std::string& acc, const std::string& op, const std::string& os,
                        const std::string& sPB, const std::string& sP) {
  std::string e = "{\nconst int op = " + op + ", os = " + os + ";\n";
  e += "if (op < " + sPB + " && os < dst_S) {\n";
  e += "float4 r = " + acc + ";\n";
  if (c.bias) e += "r += LOADW4_bias(os);\n";
  e += ActivationCode(c.act, "r");
  e += "const int ob = op / " + sP + ", oq = op % " + sP + ";\n";
  e += "WRITE_dst(r, ob, oq / dst_W, oq % dst_W, os);\n}\n}\n";
  return e;
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
    for (int q = 0; q < RN; ++q)
      b += StoreOutput(c, "a" + I(r) + "_" + I(q), "m0 + lx + " + I(16 * r), "n0 + ly + " + I(16 * q), sPB, sP);
  kb.body = b;
  kb.local = {16, 16, 1};
  kb.grid = {size_t(CeilDiv(PB, TM) * 16), size_t(GN) * 16, 1};
  return OkStatus();
}

// 1x1, stride-1 convolutions at small M (batch 1: a few hundred positions or fewer), where the
// tiled GEMM has less than one wave of work groups: a work group of WG items computes a tile of
// TM positions x TN destination slices, and splits the source-slice loop over KS groups of items
// (KS = WG / (PM * PN)), whose partial sums it adds in local memory before the epilogue. Item lid
// = (kp * PN + pn) * PM + pm owns positions m0 + pm + r * PM (r < RM) and slices n0 + pn + q * PN
// (q < RN), RM x RN float4 accumulators, and source slices kp, kp + KS, ... Lanes of a warp
// share kp: their reads of the input are consecutive float4s of one slice (PHWC4), those of the
// weights consecutive float4s of one row. Weights are packed [input channel k][slice n] float4
// (4 output channels), N padded to the tile; no local staging: each item reads its operands from
// global memory (L1) directly.
//
// A computed input (a DEPTHWISE_CONV_2D or pooling computed here, GpuInlineFn) is staged: the work
// group first computes its TM positions x all source slices into local memory (each value once
// per work group: ceil(dS / TN) times in all), then the split loop reads them there.
struct SplitKTile {
  int tm = 0, tn = 0, rm = 0, rn = 0, ks = 0;
  int unroll = 2;  // of the source-slice loop
};

// Items per work group of the split-K kernel, and the most partial sums one keeps in local memory.
constexpr int kSplitKWg = 256;
constexpr int kSplitKMaxKs = 32;
constexpr int kSplitKMaxRed = 32768;  // bytes of float4 partial sums (WG x RM x RN x 16)
// Staged (computed) input: at most this many bytes of local memory (SS x (TM + 1) float4), and
// each computed value computed by at most this many work groups (ceil(dS / TN)).
constexpr int kSplitKMaxStage = 32768;
constexpr int kSplitKMaxRecompute = 16;
// The rule's limits (ChooseSplitK): output items per work group (PM x PN) and source slices.
constexpr int kSplitKMinItems = 16;
constexpr int kSplitKMinSlices = 16;
// ChooseSplitKSmall: layers of fewer source slices keep the direct kernel; layers of at most this
// many positions take its estimate even where the rule's tiles fill the device.
constexpr int kSplitKSmallMinSlices = 4;
constexpr int64_t kSplitKSmallMaxPositions = 256;

// Completes a tile (TM, TN, RM, RN) with its KS; {} when the tile does not fit the device or the layer.
SplitKTile SplitKOf(int tm, int tn, int rm, int rn, int SS, size_t max_wg, int force_ks = 0) {
  if (tm <= 0 || tn <= 0 || rm <= 0 || rn <= 0 || tm % rm || tn % rn) return {};
  const int pm = tm / rm, pn = tn / rn;
  const int wg = int(std::min<size_t>(kSplitKWg, max_wg));
  if (pm * pn > wg) return {};
  int ks = 1;
  // At least 2 source slices per item (1 when the layer has fewer than 4).
  while (pm * pn * ks * 2 <= wg && ks * 2 <= kSplitKMaxKs && SS >= ks * 4) ks *= 2;
  if (force_ks > 0) {  // a forced split (measurements): up to the device's work-group size
    if (size_t(pm) * pn * force_ks > max_wg || force_ks > kSplitKMaxKs) return {};
    ks = force_ks;
  }
  if (size_t(pm) * pn * ks * rm * rn * 16 > size_t(kSplitKMaxRed)) return {};
  return {tm, tn, rm, rn, ks};
}

// The per-item register tile of a work-group tile: 2 slices and 2-4 positions where the tile has them.
SplitKTile SplitKDefault(int tm, int tn, int SS, size_t max_wg) {
  const int rn = std::min(tn, 2), rm = tm >= 32 ? 4 : (tm >= 2 ? 2 : 1);
  return SplitKOf(tm, tn, rm, rn, SS, max_wg);
}

// The split-K tile for M positions x dS destination slices x SS source slices, or {} (then the
// existing choices: the GEMM or the direct kernel). TFLITE_GPU_CONV_SPLITK: "0" off; "all" also
// where the GEMM would run; "TMxTNxRMxRN" forces that tile on every 1x1 layer it fits
// ("TMxTNxRMxRNxKS" also the split, up to the device's work-group size; KS 0: the generator's;
// "TMxTNxRMxRNxKSxU" also the unroll of the source-slice loop, default 2). Rule: among tiles of
// 8+ positions, 2-8 slices and 16+ output items per work group (KS <= 16), on layers of 16+
// source slices, the largest tile that gives 2.5 work groups per compute unit; least padding,
// then fewest float4 reads per source slice (TM + 4 TN), among equals. Fewer work groups than
// that, fewer than 16 source slices, or at most 256 positions: ChooseSplitKSmall's tile on layers
// of 4+ source slices, else {}. "nosmall" (measurements): without ChooseSplitKSmall, the largest
// tile that gives one work group per compute unit, else {}.
// Measured on an NVIDIA H100 (v1/v2 batch 1, every tile forced per layer, gpusk-1/2 sweeps):
// tiles of < 16 items (KS 32) and layers of K < 64 lost to the direct kernel (v2 7x7x960->160:
// 12 -> 17 us); v1's 14x14x512->512 went 22-24 -> 16.5-18.5 us with 16x8 tiles and to 11.7-12.9
// us with 8x8 tiles and aligned float4 loads (every kernel's since partition_model.cc's
// VectorAccess; this kernel's own flat float4 path is gone: per layer it was 0.8 us faster or
// 1.2 us slower than READ_src, CUPTI, H100), 14x14x256->512 10.2 -> 7.6, 28x28x128/256->256
// (16x8, float4) 10.6 / 13.7 -> 6.6 / 9.3, 7x7x1024->1024 24.9 -> 17.1-17.3 (16x4 or 8x8);
// unroll 2 beat 1, 4 and 8. A computed input (the fused depthwise) takes the rule without those
// limits (the alternative there is no fusion): layers too small for one wave take the tile with
// the most work groups.
bool SplitKForced() {
  int a, b, c, d;
  return std::sscanf(env::ConvSplitK().c_str(), "%dx%dx%dx%d", &a, &b, &c, &d) == 4;
}

// The split-K tile of layers too small for 2.5 work groups of the rule below per compute unit,
// where the tile's parallelism and reads decide. Estimated device time in microseconds, fitted to
// every 1x1 layer of MobileNet v1 and v2 at batch 1 on an NVIDIA H100 (CUDA graph launches, each
// kernel's time from CUPTI, 15 tile settings forced per layer, fitted on the 8 of the family below,
// sweep of 2026-11-27):
//   2.0 + 0.017 x (float4 reads per item: ceil(SS / KS) x (RM + 4 RN))
//       + 0.387 x (thousands of distinct float4 reads per compute unit: ceil(groups / CU) x (TM + 4 TN) x SS).
// The candidates are the measured family: 4 positions per item row (PM = 4) in tiles of 8 or 16
// positions x 2, 4 or 8 slices, and 1 position x 2 slices split 32 ways (a 64-item work group, for
// the classifier's single position). Measured there against the previous choices (the direct
// kernel, or split-K tiles of >= 16 items with one work group per compute unit): v2's 7x7 and
// 14x14 projections 9.4 -> 3.9 us (14x14x576->96), 5.0 -> 2.7 (14x14x384->64), 8.8 -> 5.1
// (7x7x960->320); v1's 7x7x1024->1024 10.5 -> 7.9; the 1x1 classifiers 6.1 -> 4.0 (v1) and
// 7.6 -> 5.7 (v2); every 1x1 layer of both: 247 -> 200 us in all, the best tile per layer 192.
double SplitKEstimateUs(const SplitKTile& t, int64_t M, int dS, int SS, int64_t cu) {
  const int64_t groups = CeilDiv(M, t.tm) * CeilDiv(dS, t.tn);
  const double per_item = double(CeilDiv(SS, t.ks)) * (t.rm + 4 * t.rn);
  const double distinct = double(CeilDiv(groups, cu)) * (t.tm + 4 * t.tn) * SS / 1000.0;
  return 2.0 + 0.017 * per_item + 0.387 * distinct;
}

SplitKTile ChooseSplitKSmall(int64_t M, int dS, int SS, size_t max_wg, int64_t cu) {
  struct Cand { int tm, tn, rm, rn, ks; };
  static constexpr Cand kCands[] = {{16, 4, 4, 2, 0}, {16, 4, 4, 1, 0}, {16, 2, 4, 1, 0}, {8, 4, 2, 2, 0},
                                    {8, 2, 2, 1, 0},  {16, 8, 4, 2, 0}, {8, 8, 2, 2, 0},  {1, 2, 1, 1, 32}};
  if (SS < kSplitKSmallMinSlices) return {};
  SplitKTile best;
  double best_us = 0;
  for (const Cand& c : kCands) {
    int ks = c.ks;  // a forced split: at most the layer's source slices
    while (ks > 1 && ks > SS) ks /= 2;
    SplitKTile t = SplitKOf(c.tm, c.tn, c.rm, c.rn, SS, max_wg, ks);
    if (t.tm == 0) continue;
    const double us = SplitKEstimateUs(t, M, dS, SS, cu);
    if (best.tm == 0 || us < best_us) {
      best = t;
      best_us = us;
    }
  }
  return best;
}

bool StageFits(int tm, int SS) { return int64_t(SS) * (tm + 1) * 16 <= kSplitKMaxStage; }

SplitKTile ChooseSplitK(int64_t M, int dS, int SS, bool gemm_chosen, bool computed, const gpu::GpuDeviceCaps& caps) {
  const std::string v = env::ConvSplitK();
  if (v == "0") return {};
  const size_t max_wg = caps.max_work_group_size;
  int tm = 0, tn = 0, rm = 0, rn = 0, ks = 0, unroll = 0;
  if (std::sscanf(v.c_str(), "%dx%dx%dx%dx%dx%d", &tm, &tn, &rm, &rn, &ks, &unroll) >= 4) {
    if (computed && (!StageFits(tm, SS) || CeilDiv(dS, tn) > kSplitKMaxRecompute)) return {};
    SplitKTile t = SplitKOf(tm, tn, rm, rn, SS, max_wg, ks);
    if (unroll > 0) t.unroll = std::min(unroll, 64);
    return t;
  }
  if (gemm_chosen && v != "all") return {};
  const int64_t cu = caps.compute_units > 0 ? caps.compute_units : 16;
  const bool small = v != "nosmall";  // "nosmall": the rule's tiles only (the choice before 2026-11-27)
  if (!computed && SS < kSplitKMinSlices) return small ? ChooseSplitKSmall(M, dS, SS, max_wg, cu) : SplitKTile{};
  SplitKTile best;
  int64_t best_area = 0, best_reads = 0, best_pad = 0, best_groups = 0;
  int best_level = -1;  // 2: 2.5+ work groups per compute unit, 1: one or more, 0: fewer
  for (int ctm : {64, 32, 16, 8, 4, 2, 1}) {
    if (ctm > 1 && ctm / 2 >= M) continue;  // at most one power of two past the layer's positions
    if (!computed && ctm < 8) continue;     // 8+ positions per weight load
    for (int ctn : {16, 8, 4, 2, 1}) {
      if (ctn > 1 && ctn / 2 >= dS) continue;
      if (!computed && (ctn > 8 || ctn < 2)) continue;  // the measured shapes
      if (computed && (!StageFits(ctm, SS) || CeilDiv(dS, ctn) > kSplitKMaxRecompute)) continue;
      const SplitKTile t = SplitKDefault(ctm, ctn, SS, max_wg);
      if (t.tm == 0) continue;
      if (!computed && (t.tm / t.rm) * (t.tn / t.rn) < kSplitKMinItems) continue;
      const int64_t groups = CeilDiv(M, ctm) * CeilDiv(dS, ctn);
      const int64_t area = int64_t(ctm) * ctn, reads = ctm + 4 * ctn;
      const int64_t pad = groups * area;
      const int level = computed ? (groups >= cu ? 1 : 0) : (2 * groups >= 5 * cu ? 2 : (groups >= cu ? 1 : 0));
      bool better;
      if (best.tm == 0) better = true;
      else if (level != best_level) better = level > best_level;
      else if (level == 0) better = groups > best_groups || (groups == best_groups && reads < best_reads);
      else if (area != best_area) better = area > best_area;
      else if (computed && reads != best_reads) better = reads < best_reads;
      else if (pad != best_pad) better = pad < best_pad;
      else better = reads < best_reads;
      if (better) {
        best = t;
        best_area = area;
        best_reads = reads;
        best_pad = pad;
        best_groups = groups;
        best_level = level;
      }
    }
  }
  // Up to 256 positions (batch-1 layers of 16x16 and less) the estimate decides even where the
  // rule's tile fills the device: v1's 14x14x512->512 layers 8x8x2x2 (the rule) 7.3 us ->
  // 16x8x4x2 (the estimate) 6.8, 14x14x256->512 4.5 -> 4.3 (H100, CUPTI, fp32; fp16 storage
  // 6.8 / 4.3, where the tensor cores took 8.5 / 5.5).
  if (computed || (best_level == 2 && M > kSplitKSmallMaxPositions)) return best;
  if (!small) return best_level >= 1 ? best : SplitKTile{};  // the rule's tile wherever it has one
  // Less than 2.5 work groups per compute unit (batch-1 layers of 28x28 and less, narrow layers,
  // the classifier): the tile of least estimated time (SplitKEstimateUs).
  return ChooseSplitKSmall(M, dS, SS, max_wg, cu);
}

Status EmitPointwiseSplitK(GpuBuildContext& ctx, const std::string& name, const GpuTensorRef& src,
                           const GpuTensorRef& dst, const ConvCore& c, SplitKTile t) {
  const BHWC& si = src.shape;
  const BHWC& so = dst.shape;
  const int dS = so.slices(), SS = si.slices();
  const int TM = t.tm, TN = t.tn, RM = t.rm, RN = t.rn, KS = t.ks;
  const int PM = TM / RM, PN = TN / RN, PO = PM * PN, WG = PO * KS;
  const bool staged = ctx.computed(src);
  const int TMP = TM + 1;  // staged rows of TM positions, padded (local memory banks)
  const int64_t P = int64_t(so.h) * so.w, PB = P * so.b;
  const int GN = int(CeilDiv(dS, TN)), NPS = GN * TN;  // padded destination slices
  std::vector<float> w(size_t(SS) * 4 * NPS * 4, 0.f);
  for (int k = 0; k < c.IC; ++k)
    for (int oc = 0; oc < c.OC; ++oc) w[size_t(k) * NPS * 4 + oc] = c.W(oc, 0, 0, k);
  KernelBuilder& kb = ctx.NewKernel(name + "_splitk" + I(TM) + "x" + I(TN) + "x" + I(RM) + "x" + I(RN) + "x" + I(KS));
  kb.AddInput("src", src);
  kb.AddOutput("dst", dst);
  kb.AddConstBuffer("w", std::move(w));
  if (c.bias) kb.AddConstBuffer("bias", PaddedBias(c.bias, c.OC, size_t(NPS) * 4));
  const std::string sP = I(P), sPB = I(PB), sPM = I(PM), sPN = I(PN), sPO = I(PO), sNPS = I(NPS);
  std::string b;
  b += "const int lid = get_local_id(0);\n";
  b += "const int pm = lid % " + sPM + ", pn = (lid / " + sPM + ") % " + sPN + ", kp = lid / " + sPO + ";\n";
  b += "const int m0 = get_group_id(0) * " + I(TM) + ", n0 = get_group_id(1) * " + I(TN) + ";\n";
  for (int r = 0; r < RM; ++r) {
    const std::string R = I(r);
    // Positions past the end read the last one (valid) and are not written.
    b += "const int p" + R + " = min(m0 + pm + " + I(r * PM) + ", " + I(PB - 1) + ");\n";
    if (so.b > 1)
      b += "const int b" + R + " = p" + R + " / " + sP + ", q" + R + " = p" + R + " % " + sP + ";\n";
    else
      b += "const int b" + R + " = 0, q" + R + " = p" + R + ";\n";
  }
  for (int r = 0; r < RM; ++r)
    for (int q = 0; q < RN; ++q) b += "float4 a" + I(r) + "_" + I(q) + " = (float4)(0.0f);\n";
  b += "const int wn = n0 + pn;\n";
  const int64_t red_n = KS > 1 ? int64_t(WG) * RM * RN : 0, stage_n = staged ? int64_t(SS) * TMP : 0;
  if (red_n + stage_n > 0) b += "__local float4 lds[" + I(std::max(red_n, stage_n)) + "];\n";
  if (staged) {
    // Each computed value of the tile once (true coordinates: a computed input is not flat readable).
    b += "for (int e = lid; e < " + I(int64_t(SS) * TM) + "; e += " + I(WG) + ") {\n";
    b += "  const int sl = e / " + I(TM) + ", mi = e % " + I(TM) + ";\n";
    b += "  const int pp = min(m0 + mi, " + I(PB - 1) + "), pb = pp / " + sP + ", pq = pp % " + sP + ";\n";
    b += "  lds[sl * " + I(TMP) + " + mi] = READ_src(pb, pq / src_W, pq % src_W, sl);\n";
    b += "}\n";
    b += "barrier(CLK_LOCAL_MEM_FENCE);\n";
  }
  const int NI = int(CeilDiv(SS, KS));
  const bool ragged = SS % KS != 0;
  b += "#pragma unroll " + I(t.unroll) + "\n";
  b += "for (int i_ = 0; i_ < " + I(NI) + "; ++i_) {\n";
  b += "  const int s = kp + i_ * " + I(KS) + ";\n";
  if (ragged) b += "  if (s >= " + I(SS) + ") break;\n";
  for (int r = 0; r < RM; ++r) {
    if (staged)
      b += "  const float4 v" + I(r) + " = lds[s * " + I(TMP) + " + pm + " + I(r * PM) + "];\n";
    else
      b += "  const float4 v" + I(r) + " = READ_src(b" + I(r) + ", 0, q" + I(r) + ", s);\n";
  }
  b += "  const int wi = s * " + I(4 * NPS) + " + wn;\n";
  for (int q = 0; q < RN; ++q) {
    b += "  {\n";
    for (int i = 0; i < 4; ++i)
      b += "    const float4 w" + I(i) + " = LOADW4_w(wi + " + I(i * NPS + q * PN) + ");\n";
    for (int r = 0; r < RM; ++r) {
      const std::string a = "a" + I(r) + "_" + I(q), v = "v" + I(r);
      b += "    " + a + " += " + v + ".x * w0; " + a + " += " + v + ".y * w1; " + a + " += " + v + ".z * w2; " + a +
           " += " + v + ".w * w3;\n";
    }
    b += "  }\n";
  }
  b += "}\n";
  auto epilogue = [&](const std::string& acc, const std::string& op, const std::string& os) {
    return StoreOutput(c, acc, op, os, sPB, sP);
  };
  if (KS == 1) {
    for (int r = 0; r < RM; ++r)
      for (int q = 0; q < RN; ++q)
        b += epilogue("a" + I(r) + "_" + I(q), "m0 + pm + " + I(r * PM), "n0 + pn + " + I(q * PN));
  } else {
    // Partial sums [j = q * RM + r][kp][pn * PM + pm]; then the WG items sum KS of them per output.
    if (staged) b += "barrier(CLK_LOCAL_MEM_FENCE);\n";  // lds held the staged input
    for (int r = 0; r < RM; ++r)
      for (int q = 0; q < RN; ++q) b += "lds[" + I((q * RM + r) * WG) + " + lid] = a" + I(r) + "_" + I(q) + ";\n";
    b += "barrier(CLK_LOCAL_MEM_FENCE);\n";
    b += "for (int o = lid; o < " + I(PO * RM * RN) + "; o += " + I(WG) + ") {\n";
    b += "const int j = o / " + sPO + ", tt = o % " + sPO + ";\n";
    b += "float4 sum = lds[j * " + I(WG) + " + tt];\n";
    b += "for (int k = 1; k < " + I(KS) + "; ++k) sum += lds[j * " + I(WG) + " + k * " + sPO + " + tt];\n";
    b += epilogue("sum", "m0 + tt % " + sPM + " + (j % " + I(RM) + ") * " + sPM,
                  "n0 + tt / " + sPM + " + (j / " + I(RM) + ") * " + sPN);
    b += "}\n";
  }
  kb.body = b;
  kb.local = {size_t(WG), 1, 1};
  kb.grid = {size_t(CeilDiv(PB, TM) * WG), size_t(GN), 1};
  return OkStatus();
}

}  // namespace

int64_t SplitKComputedTimes(const GpuBuildContext& ctx, int64_t M, int dS, int SS) {
  const SplitKTile k = ChooseSplitK(M, dS, SS, ChooseGemmTile(M, dS, ctx.caps()).rm > 0, true, ctx.caps());
  return k.tm > 0 ? CeilDiv(dS, k.tn) : 0;
}

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
  if (!c.remap && !c.transposed && c.groups == 1 && c.KH == 1 && c.KW == 1 && c.SH == 1 && c.SW == 1 && c.PT == 0 &&
      c.PL == 0 && si.h == so.h && si.w == so.w && si.b == so.b && (computed || ctx.flat_readable(src))) {
    // A forced split-K tile wins over the tensor-core kernel (as a forced GEMM tile does).
    if (!computed && !SplitKForced() && WantMma(ctx, src, dst)) return EmitPointwiseMma(ctx, name, src, dst, c);
    const int64_t M = int64_t(so.b) * so.h * so.w;
    const GemmTile t = computed ? GemmTile{} : ChooseGemmTile(M, dS, ctx.caps());
    const SplitKTile k = ChooseSplitK(M, dS, sS, computed ? ChooseGemmTile(M, dS, ctx.caps()).rm > 0 : t.rm > 0,
                                      computed, ctx.caps());
    if (k.tm > 0) return EmitPointwiseSplitK(ctx, name, src, dst, c, k);
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
    return StoreOutput(c, acc, "tile + " + t + " * " + sNT, "g * " + sST + " + " + j, sPB, sP);
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
