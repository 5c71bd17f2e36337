// 1x1 convolutions on NVIDIA tensor cores: the GEMM C[position][out channel] = sum_k A[position][k]
// * W[k][out channel] (positions flattened over B x H x W, K = input channels) with PTX's
// mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32, issued through inline assembly, which
// NVIDIA's OpenCL compiler accepts (PTX ISA "Warp-level matrix multiply-accumulate"; compute
// capability 8.0+). Only in the fp16 storage modes: the operands are the half values the tensors
// and weights already hold there, products are exact and sums are kept in fp32, so the results
// are those of the fp32-arithmetic kernels up to summation order.
//
// Fragments (PTX ISA, m16n8k16 with .f16 operands; lane = 4 * g + t): A (16 x 16, row major) gives
// lane the pairs (row g, k 2t..2t+1), (row g+8, same k), (row g, k 2t+8..), (row g+8, k 2t+8..),
// one 32-bit register each; B (16 x 8, "col") the pairs (k 2t..2t+1, col g) and (k 2t+8.., col g);
// C/D (16 x 8, f32) (row g, cols 2t, 2t+1) and (row g+8, cols 2t, 2t+1). In PHWC4 the two halves
// of an A pair are adjacent (channels 2t, 2t+1 of one slice), so each A register is one 32-bit
// load. W is packed on the host in the B fragment order: [n tile of 8][k step of 16][lane][4
// halves], one 64-bit load per lane and step, coalesced over the warp.
//
// A work group is 4 warps (2 x 2), each computing WM x WN outputs (WM / 16 x WN / 8 mma tiles)
// from registers, with the next k step's fragments loaded while the current one multiplies. The
// epilogue swaps half of each D fragment with the neighbour lane (shfl.sync.bfly) so that every
// lane holds 4 consecutive channels of one position, then adds the bias, applies the activation and
// stores through WRITE_ (the fused ops and the quantization snap run there as for every kernel).
//
// The raw loads need the input and the weights stored as half. Storage is fixed after the
// generators ran (precision_plan.h keeps a tensor in float where it expects values past fp16's
// range), so the kernel also carries a plain path, compiled instead when HALF_src or HALF_w is 0:
// the same outputs from scalar LD_/LOADW_ reads (slow, correct). TFLITE_GPU_CONV_MMA=plain forces
// that path on any device and precision (for tests: PoCL has no tensor cores); "1" takes the
// tensor cores for every 1x1 layer the device and precision allow, whatever its size; "0" never.
#include "ops/conv/conv_common_gpu.h"

#include <cstring>

#include "runtime/env.h"

namespace tflite_gpu {
namespace conv_gpu {

namespace {

struct MmaTile { int wm = 0, wn = 0; };  // per warp; the work group covers 2 wm x 2 wn
constexpr int64_t kMmaMinPositions = 128;
constexpr int64_t kMmaProjMinPositions = 2048;  // f16, more input than output channels
constexpr int64_t kMmaLongKMaxPositions = 256;  // f16, more than 128 input channels
constexpr int64_t kTf32MinPositions = 1024;

// Round to TF32 (10 mantissa bits) to nearest, ties away from zero, as PTX cvt.rna.tf32.f32.
float Tf32(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  if ((u & 0x7f800000u) == 0x7f800000u) return x;  // inf / NaN
  u = (u + 0x1000u) & 0xffffe000u;
  std::memcpy(&x, &u, 4);
  return x;
}

// The largest warp tile that still gives every compute unit a work group; else the smallest.
MmaTile ChooseMmaTile(int64_t M, int N, const gpu::GpuDeviceCaps& caps) {
  const int64_t cu = caps.compute_units > 0 ? caps.compute_units : 16;
  const MmaTile tiles[] = {{32, 32}, {16, 32}, {16, 16}};
  for (const MmaTile& t : tiles)
    if (CeilDiv(M, 2 * t.wm) * CeilDiv(N, 2 * t.wn) >= cu) return t;
  return tiles[2];
}

// 3xTF32 on layers with at least 128 output channels: 16x64 warp tiles (a work group covers 32
// positions x 128 channels), when the channels pad to 128 with at most 1/8 wasted and every compute
// unit still gets a work group; else the rule above. Measured on an H100 (MobileNets at batch 32,
// profiled per layer, against 32x32 tiles): v1 56x56x128 54 -> 46 us, 56x56 128 -> 128 89 -> 71,
// 28x28x256 72 -> 63, 7x7x1024 80 -> 61, 14x14x512 74 -> 64; v2 7x7 160 -> 960 18 -> 16. Channels
// that pad further lose: v2 56x56 24 -> 144 (to 256) 36 -> 43 us, 28x28 32 -> 192 16 -> 20; v1
// 112x112 32 -> 64 (half of each work group idle) 74 -> 114.
MmaTile ChooseTf32Tile(int64_t M, int N, const gpu::GpuDeviceCaps& caps) {
  const int64_t cu = caps.compute_units > 0 ? caps.compute_units : 16;
  const int64_t padded = CeilDiv(N, 128) * 128;
  if (N >= 128 && padded * 8 <= int64_t(N) * 9 && CeilDiv(M, 32) * CeilDiv(N, 128) >= cu) return {16, 64};
  return ChooseMmaTile(M, N, caps);
}

}  // namespace

bool WantMma(GpuBuildContext& ctx, const GpuTensorRef& src, const GpuTensorRef& dst) {
  const std::string e = env::ConvMma();
  if (e == "0") return false;
  if (e == "plain") return ctx.plain(src);  // tests: the kernel's plain path on any device
  if (ctx.caps().nv_compute_capability < 80) return false;
  if (ctx.precision() == gpu::Precision::kF32 && e == "f16") return false;
  if (!ctx.plain(src)) return false;
  // 32-bit indexing of the flattened positions and of the packed weights.
  if (src.shape.elements4() >= (int64_t(1) << 30) || dst.shape.elements4() >= (int64_t(1) << 30)) return false;
  if (e == "1") return true;
  // A forced GEMM tile (TFLITE_GPU_CONV_GEMM=RMxRN) wins: it is there to measure that kernel.
  if (env::ConvGemm().find('x') != std::string::npos) return false;
  // Few positions: the work groups walk the whole K loop with one or two tiles each, and the direct
  // kernel (which splits K over its items) is faster. Measured on an H100 (MobileNet v1/v2, fp16,
  // batch 1): 14x14 layers (196 positions) 22 -> 13 us, 28x28 17 -> 8 us; 7x7 (49) 17 -> 31 us,
  // the 1x1 classifier (1) 8 -> 17 us.
  // Fewer input than output channels, or many positions: otherwise (projections of up to ~2K
  // positions) a work group walks the whole K loop for few output channels, and the split-K
  // kernel, which splits that loop, is faster. Measured on an H100 (fp16 storage, batch 1, CUDA
  // graph launches, CUPTI kernel times, with the aligned half loads of partition_model.cc):
  // v2 14x14x384->64+ADD 8.7 -> 2.7 us, 14x14x576->96+ADD 7.4 -> 4.5, 28x28x192->32+ADD
  // 4.2 -> 2.7, 28x28x144->32 3.4 -> 2.8; but 56x56x96->24 (3136 positions) 2.8 on the tensor
  // cores vs 3.2 split, and expansions keep them (28x28x32->192 1.7 vs 2.2).
  const int64_t M = int64_t(dst.shape.b) * dst.shape.h * dst.shape.w;
  // Up to 256 positions, also more than 128 input channels (a long K loop per work group) leave
  // them: v1's 14x14x512->512 8.5 -> 6.8 us (split-K 16x8x4x2), 14x14x256->512 5.5 -> 4.3; v2's
  // 14x14x96->576 keeps them (2.5 vs 2.9).
  if (ctx.precision() != gpu::Precision::kF32)
    return M >= kMmaProjMinPositions ||
           (M >= kMmaMinPositions && src.shape.c <= dst.shape.c && (M > kMmaLongKMaxPositions || src.shape.c <= 128));
  // 3xTF32 issues three mma per tile and reads float operands: it wins where the fp32 kernels are
  // compute-bound, i.e. many positions and at least as many output as input channels. Measured on an
  // H100 (MobileNets, batch 32, fp32): 14x14x512->512 109 -> 74 us, 7x7x1024 143 -> 81, v2 expansions
  // (K = 64..160, N = 6K) 21 -> 15 / 29 -> 17 us; but projections (N = K / 6, fused ADD) 25 -> 38 /
  // 56 -> 84 us, and batch-1 14x14 layers 24 -> 31 us.
  return M >= kTf32MinPositions && src.shape.c <= dst.shape.c;
}

Status EmitPointwiseMma(GpuBuildContext& ctx, const std::string& name, const GpuTensorRef& src,
                        const GpuTensorRef& dst, const ConvCore& c) {
  const bool tf = ctx.precision() == gpu::Precision::kF32;  // 3xTF32 on float storage, else f16
  const int KSTEP = tf ? 8 : 16;
  const BHWC& si = src.shape;
  const BHWC& so = dst.shape;
  const int SS = si.slices();
  const int64_t P = int64_t(so.h) * so.w, PB = P * so.b;
  const MmaTile tile = tf ? ChooseTf32Tile(PB, c.OC, ctx.caps()) : ChooseMmaTile(PB, c.OC, ctx.caps());
  // The 16x64 tiles double-buffer through two register sets taken in turn (the k loop unrolled by
  // two); the others copy the prefetched set into the working one (fewer registers).
  const bool unroll = tf && tile.wn == 64;
  const int WM = tile.wm, WN = tile.wn, MT = WM / 16, NT = WN / 8, TMG = 2 * WM, TNG = 2 * WN;
  const int KSTEPS = int(CeilDiv(c.IC, KSTEP));
  const int NP = int(CeilDiv(c.OC, TNG)) * TNG;  // padded output channels
  // W in B-fragment order, [n tile j][k step][lane][4] with n = 8 j + lane / 4:
  //   f16:   (k0, n), (k0 + 1, n), (k0 + 8, n), (k0 + 9, n) with k0 = 16 step + 2 (lane % 4);
  //   tf32:  hi(k0, n), hi(k0 + 4, n), lo(k0, n), lo(k0 + 4, n) with k0 = 8 step + lane % 4, where
  //          hi = tf32(w) and lo = tf32(w - hi) (the 3xTF32 split: w = hi + lo to ~22 bits).
  std::vector<float> w(size_t(NP / 8) * KSTEPS * 32 * 4, 0.f);
  for (int j = 0; j < NP / 8; ++j)
    for (int ks = 0; ks < KSTEPS; ++ks)
      for (int l = 0; l < 32; ++l) {
        const int n = 8 * j + l / 4;
        float* o = &w[((size_t(j) * KSTEPS + ks) * 32 + l) * 4];
        if (n >= c.OC) continue;
        if (tf) {
          const int k0 = 8 * ks + l % 4;
          for (int e = 0; e < 2; ++e) {
            const float v = k0 + 4 * e < c.IC ? c.W(n, 0, 0, k0 + 4 * e) : 0.f;
            o[e] = Tf32(v);
            o[2 + e] = Tf32(v - o[e]);
          }
        } else {
          const int k0 = 16 * ks + 2 * (l % 4);
          const int ks4[4] = {k0, k0 + 1, k0 + 8, k0 + 9};
          for (int e = 0; e < 4; ++e)
            if (ks4[e] < c.IC) o[e] = c.W(n, 0, 0, ks4[e]);
        }
      }
  KernelBuilder& kb = ctx.NewKernel(name + (tf ? "_mmatf" : "_mma") + I(WM) + "x" + I(WN));
  kb.AddDefine(std::string("#define MMA_PLAIN ") + (env::ConvMma() == "plain" ? "1" : "0"));
  kb.AddInput("src", src);
  kb.AddOutput("dst", dst);
  kb.AddConstBuffer("w", std::move(w), /*exact=*/tf);
  if (c.bias) kb.AddConstBuffer("bias", PaddedBias(c.bias, c.OC, size_t(NP)));
  const std::string sP = I(P), sPB = I(PB), sKS = I(KSTEPS);
  std::string b;
  b += "const int lid = get_local_id(0), lane = lid & 31, warp = lid >> 5, g = lane >> 2, t = lane & 3;\n";
  b += "const int m0 = get_group_id(0) * " + I(TMG) + " + (warp & 1) * " + I(WM) + ";\n";
  b += "const int j0 = (get_group_id(1) * " + I(TNG) + " + (warp >> 1) * " + I(WN) + ") / 8;\n";
  for (int i = 0; i < MT; ++i)
    for (int j = 0; j < NT; ++j)
      for (int e = 0; e < 4; ++e) b += "float c" + I(i) + "_" + I(j) + "_" + I(e) + " = 0.0f;\n";
  // The fast path needs the storage it was written for: half input and weights (f16), float (tf32).
  kb.AddDefine(std::string("#define MMA_FAST (") + (tf ? "!HALF_src && !HALF_w" : "HALF_src && HALF_w") + " && !MMA_PLAIN)");
  b += "#if MMA_FAST\n";
  // A element types: f16 pairs as one uint, tf32 single floats; B: 4 halves (uint2) / 4 floats.
  const std::string AT = tf ? "float" : "uint", BT = tf ? "float4" : "uint2";
  b += "__global const " + AT + "* A_ = (__global const " + AT + "*)src;\n";
  b += "__global const " + BT + "* B_ = (__global const " + BT + "*)w;\n";
  // Per fragment row: its offset at slice 0 in A_ units (rows past the end read the last row; not
  // stored). f16: (t >> 1) picks the slice of channels 2t..2t+1, (t & 1) the pair in it; tf32: lane t.
  const int64_t slice = tf ? 4 * P : 2 * P;
  for (int i = 0; i < MT; ++i)
    for (int h = 0; h < 2; ++h) {
      const std::string r = I(2 * i + h);
      b += "int r" + r + "; { const int m = min(m0 + " + I(16 * i + 8 * h) + " + g, " + I(PB - 1) + "); r" + r +
           " = ((m / " + sP + ") * " + I(int64_t(SS) * P) + " + m % " + sP + ") * " + (tf ? "4 + t" : "2 + (t >> 1) * " + I(2 * P) + " + (t & 1)") + "; }\n";
    }
  // Slices per k step: 4 (f16), 2 (tf32); the last step may pass the last slice.
  const int SPK = KSTEP / 4;
  const bool guard = SS % SPK != 0;
  auto loads = [&](const std::string& ks, const std::string& pre) {
    std::string s;
    for (int i = 0; i < MT; ++i)
      for (int q = 0; q < 4; ++q) {  // a0: row g, low k; a1: row g+8, low; a2: row g, high k; a3: row g+8, high
        const int h = q & 1, hi = q >> 1;
        const std::string sl = "(" + ks + " * " + I(SPK) + " + " + I(tf ? hi : 2 * hi) + ")";
        std::string ld = "A_[r" + I(2 * i + h) + " + " + sl + " * " + I(slice) + "]";
        if (guard) ld = "(" + sl + (tf ? "" : " + (t >> 1)") + " < " + I(SS) + " ? " + ld + (tf ? " : 0.0f)" : " : 0u)");
        s += pre + "a" + I(i) + "_" + I(q) + " = " + ld + ";\n";
      }
    for (int j = 0; j < NT; ++j)
      s += pre + "b" + I(j) + " = B_[((j0 + " + I(j) + ") * " + sKS + " + " + ks + ") * 32 + lane];\n";
    return s;
  };
  for (int i = 0; i < MT; ++i) b += AT + " a" + I(i) + "_0, a" + I(i) + "_1, a" + I(i) + "_2, a" + I(i) + "_3;\n";
  for (int j = 0; j < NT; ++j) b += BT + " b" + I(j) + ";\n";
  for (int i = 0; i < MT; ++i) b += AT + " na" + I(i) + "_0, na" + I(i) + "_1, na" + I(i) + "_2, na" + I(i) + "_3;\n";
  for (int j = 0; j < NT; ++j) b += BT + " nb" + I(j) + ";\n";
  auto mma = [&](const std::string& C, const std::string& a, const std::string& b0, const std::string& b1) {
    const std::string shape = tf ? "m16n8k8.row.col.f32.tf32.tf32.f32" : "m16n8k16.row.col.f32.f16.f16.f32";
    return "  { float d0, d1, d2, d3;\n    asm volatile(\"mma.sync.aligned." + shape +
           " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};\" : \"=f\"(d0), \"=f\"(d1), \"=f\"(d2), "
           "\"=f\"(d3) : \"r\"(" + a + "0), \"r\"(" + a + "1), \"r\"(" + a + "2), \"r\"(" + a + "3), \"r\"(" + b0 +
           "), \"r\"(" + b1 + "), \"f\"(" + C + "0), \"f\"(" + C + "1), \"f\"(" + C + "2), \"f\"(" + C + "3));\n    " +
           C + "0 = d0; " + C + "1 = d1; " + C + "2 = d2; " + C + "3 = d3; }\n";
  };
  // One k step on the fragments of register set `pa` / `pb` ("" or the prefetched "n").
  auto step = [&](const std::string& pa, const std::string& pb) {
    std::string s = "  {\n";
    if (tf)  // split each A value: hi = tf32(a), lo = tf32(a - hi)
      for (int i = 0; i < MT; ++i)
        for (int q = 0; q < 4; ++q) {
          const std::string A = pa + "a" + I(i) + "_" + I(q), H = "ah" + I(i) + "_" + I(q), L = "al" + I(i) + "_" + I(q);
          s += "  uint " + H + ", " + L + ";\n  asm(\"cvt.rna.tf32.f32 %0, %1;\" : \"=r\"(" + H + ") : \"f\"(" + A + "));\n";
          s += "  { const float r_ = " + A + " - as_float(" + H + "); asm(\"cvt.rna.tf32.f32 %0, %1;\" : \"=r\"(" + L +
               ") : \"f\"(r_)); }\n";
        }
    for (int i = 0; i < MT; ++i)
      for (int j = 0; j < NT; ++j) {
        const std::string C = "c" + I(i) + "_" + I(j) + "_", B = pb + "b" + I(j);
        if (tf) {  // small terms first: lo x hi, hi x lo, then hi x hi
          s += mma(C, "al" + I(i) + "_", "as_uint(" + B + ".x)", "as_uint(" + B + ".y)");
          s += mma(C, "ah" + I(i) + "_", "as_uint(" + B + ".z)", "as_uint(" + B + ".w)");
          s += mma(C, "ah" + I(i) + "_", "as_uint(" + B + ".x)", "as_uint(" + B + ".y)");
        } else {
          s += mma(C, pa + "a" + I(i) + "_", B + ".x", B + ".y");
        }
      }
    return s + "  }\n";
  };
  if (unroll) {
    b += loads("0", "");
    b += "for (int ks = 0; ks < " + sKS + "; ks += 2) {\n";
    b += "  if (ks + 1 < " + sKS + ") {\n" + loads("(ks + 1)", "  n") + "  }\n";
    b += step("", "");
    b += "  if (ks + 1 < " + sKS + ") {\n";
    b += "  if (ks + 2 < " + sKS + ") {\n" + loads("(ks + 2)", "  ") + "  }\n";
    b += step("n", "n");
    b += "  }\n";
  } else {
    b += loads("0", "n");
    b += "for (int ks = 0; ks < " + sKS + "; ++ks) {\n";
    for (int i = 0; i < MT; ++i)
      for (int q = 0; q < 4; ++q) b += "  a" + I(i) + "_" + I(q) + " = na" + I(i) + "_" + I(q) + ";\n";
    for (int j = 0; j < NT; ++j) b += "  b" + I(j) + " = nb" + I(j) + ";\n";
    b += "  if (ks + 1 < " + sKS + ") {\n" + loads("(ks + 1)", "  n") + "  }\n";
    b += step("", "");
  }
  b += "}\n";
  b += "#endif\n";
  // Epilogue: even lanes take (row g, channels 2t..2t+3), odd lanes (row g+8, channels 2t-2..2t+1)
  // of each tile: the mma path swaps half of its D fragment with the neighbour lane; the plain path
  // computes those four values from scalar reads.
  for (int i = 0; i < MT; ++i)
    for (int j = 0; j < NT; ++j) {
      const std::string C = "c" + I(i) + "_" + I(j) + "_";
      b += "{ const int odd = t & 1;\n";
      b += "  const int m = m0 + " + I(16 * i) + " + g + 8 * odd, os = ((j0 + " + I(j) + ") * 8 + 2 * t - 2 * odd) >> 2;\n";
      b += "  float4 v;\n";
      b += "#if MMA_FAST\n";
      b += "  { const uint s0_ = as_uint(odd ? " + C + "0 : " + C + "2), s1_ = as_uint(odd ? " + C + "1 : " + C + "3);\n";
      b += "    uint x0_, x1_;\n";
      b += "    asm volatile(\"shfl.sync.bfly.b32 %0, %1, 1, 0x1f, 0xffffffff;\" : \"=r\"(x0_) : \"r\"(s0_));\n";
      b += "    asm volatile(\"shfl.sync.bfly.b32 %0, %1, 1, 0x1f, 0xffffffff;\" : \"=r\"(x1_) : \"r\"(s1_));\n";
      b += "    v = odd ? (float4)(as_float(x0_), as_float(x1_), " + C + "2, " + C + "3) : (float4)(" + C + "0, " + C +
           "1, as_float(x0_), as_float(x1_)); }\n";
      b += "#else\n";
      b += "  { const int mr = min(m, " + I(PB - 1) + "), mb = mr / " + sP + ", mp = mr % " + sP + ";\n";
      b += "    float r_[4] = {0.0f, 0.0f, 0.0f, 0.0f};\n";
      b += "    for (int e = 0; e < 4; ++e) {\n";
      b += "      const int n = os * 4 + e;\n";
      b += "      for (int k = 0; k < " + I(c.IC) + "; ++k) {\n";
      if (tf) {
        b += "        const int kk = k & 7, wi = (((n >> 3) * " + sKS + " + (k >> 3)) * 32 + (n & 7) * 4 + (kk & 3)) * 4 + (kk >> 2);\n";
        b += "        r_[e] += LD_src(mb, 0, mp, k) * (LOADW_w(wi) + LOADW_w(wi + 2));\n";
      } else {
        b += "        const int kk = k & 15, lg = (n & 7) * 4 + ((kk & 7) >> 1), q = ((kk >> 3) << 1) + (kk & 1);\n";
        b += "        r_[e] += LD_src(mb, 0, mp, k) * LOADW_w((((n >> 3) * " + sKS + " + (k >> 4)) * 32 + lg) * 4 + q);\n";
      }
      b += "      }\n    }\n";
      b += "    v = (float4)(r_[0], r_[1], r_[2], r_[3]); }\n";
      b += "#endif\n";
      b += "  if (m < " + sPB + " && os < dst_S) {\n";
      if (c.bias) b += "    v += LOADW4_bias(os);\n";
      b += "    " + ActivationCode(c.act, "v");
      b += "    const int ob = m / " + sP + ", oq = m % " + sP + ";\n";
      b += "    WRITE_dst(v, ob, oq / dst_W, oq % dst_W, os);\n  }\n}\n";
    }
  kb.body = b;
  kb.local = {128, 1, 1};
  kb.grid = {size_t(CeilDiv(PB, TMG) * 128), size_t(NP / TNG), 1};
  return OkStatus();
}

}  // namespace conv_gpu
}  // namespace tflite_gpu
