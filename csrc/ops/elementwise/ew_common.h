// Shared helpers of the elementwise family: broadcasting plans, activation ranges, vectorisable transcendental approximations and the parallel loop drivers.
#pragma once
// The kernels below are plain loops written for the auto-vectoriser. GCC keeps FP selects
// (x > 0 ? x : a * x) as branches under its default -ftrapping-math, which blocks vectorisation;
// these kernels never rely on FP exception flags, so this family's files opt out. (IEEE results
// are unchanged: this only permits if-conversion, no value-changing transformation.)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/half.h"
#include "ops/op_registry.h"
#include "ops/simd.h"
#include "runtime/thread_pool.h"

namespace tflite_gpu {
namespace ew {

// Functions defined between TFG_TARGET_AVX2_BEGIN and TFG_TARGET_END (ops/simd.h) are compiled
// for AVX2+FMA (the library itself targets the x86-64 baseline); call them only when UseAvx2():
// simd::ActiveIsa() is AVX2 or wider (the CPU has AVX2 and FMA, and TFLITE_GPU_CPU_ISA does not
// lower it).
inline bool UseAvx2() { return simd::ActiveIsa() >= simd::Isa::kAvx2; }

// ---- small utilities ----

template <typename To, typename From>
inline To BitCast(From v) {
  static_assert(sizeof(To) == sizeof(From), "size mismatch");
  To r;
  std::memcpy(&r, &v, sizeof(r));
  return r;
}

// Elements per parallel chunk (runtime/thread_pool.h's cost rule): a cheap memory-bound op costs
// one work unit per element, a transcendental one (exp, tanh, log...) about eight.
inline const int64_t kCheapChunk = MinChunkFor(1);
inline const int64_t kCostlyChunk = MinChunkFor(8);

// ---- fused activation (TFLite CalculateActivationRange) ----
// TFLite's float/int kernels clamp to [lo, hi] for every activation: NONE (and TANH, SIGN_BIT,
// which ADD/SUB/MUL/DIV ignore) clamps to the finite range of the type, so +-inf become +-max:
// ActivationRangeOfType<T> (ops/activation.h).
Status ParseFusedActivation(int v, Activation* out);

// max/min that keep a NaN in x (as TFLite's std::min(std::max(x, lo), hi)).
template <typename T> inline T MaxKeep(T x, T lo) { return x < lo ? lo : x; }
template <typename T> inline T MinKeep(T x, T hi) { return hi < x ? hi : x; }
template <typename T> inline T Clamp(T x, T lo, T hi) { return MinKeep(MaxKeep(x, lo), hi); }

// ---- broadcasting ----

// Numpy/TFLite broadcast of two shapes (right-aligned; equal dims or one of them 1).
Status BroadcastShape(const OpContext& ctx, const Dims& a, const Dims& b, Dims* out);

// A compressed loop nest over the output: level 0 outermost. Input strides are in elements,
// 0 where that input is broadcast along the level.
struct BcastPlan {
  std::vector<int64_t> dims, sa, sb;
  int64_t total = 0;
};
// `out` must be the broadcast of a and b.
BcastPlan MakeBcastPlan(const Dims& a, const Dims& b, const Dims& out);

// Offset in an input of shape `in` of the output element with multi-index `idx` (output rank).
inline int64_t BroadcastOffset(const Dims& in, const Dims& out, const std::vector<int64_t>& idx) {
  int64_t off = 0;
  size_t shift = out.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d) off = off * in[d] + (in[d] == 1 ? 0 : idx[d + shift]);
  return off;
}

// ---- the plain loops, built twice: for the baseline and (x86) for AVX2+FMA ----
// mode: 0 both inputs contiguous, 1 a is a scalar, 2 b is a scalar, 3 both scalars.
#define TFG_EW_ROW_KERNELS(SUFFIX)                                                                 \
  template <typename TA, typename TB, typename TO, typename Op>                                   \
  void BinaryRow##SUFFIX(const TA* __restrict pa, const TB* __restrict pb, TO* __restrict po,     \
                         int64_t cnt, int mode, Op op) {                                           \
    if (mode == 0) {                                                                               \
      for (int64_t i = 0; i < cnt; ++i) po[i] = op(pa[i], pb[i]);                                  \
    } else if (mode == 1) {                                                                        \
      const TA av = pa[0];                                                                         \
      for (int64_t i = 0; i < cnt; ++i) po[i] = op(av, pb[i]);                                     \
    } else if (mode == 2) {                                                                        \
      const TB bv = pb[0];                                                                         \
      for (int64_t i = 0; i < cnt; ++i) po[i] = op(pa[i], bv);                                     \
    } else {                                                                                       \
      const TO v = op(pa[0], pb[0]);                                                               \
      for (int64_t i = 0; i < cnt; ++i) po[i] = v;                                                 \
    }                                                                                              \
  }                                                                                                \
  template <typename TI, typename TO, typename Op>                                                \
  void UnaryRow##SUFFIX(const TI* __restrict pi, TO* __restrict po, int64_t n, Op op) {           \
    for (int64_t i = 0; i < n; ++i) po[i] = op(pi[i]);                                             \
  }

TFG_EW_ROW_KERNELS()
#if TFG_X86
TFG_TARGET_AVX2_BEGIN
TFG_EW_ROW_KERNELS(Avx2)
TFG_TARGET_END
#endif
#undef TFG_EW_ROW_KERNELS

template <typename TA, typename TB, typename TO, typename Op>
using BinaryRowFn = void (*)(const TA*, const TB*, TO*, int64_t, int, Op);
template <typename TA, typename TB, typename TO, typename Op>
BinaryRowFn<TA, TB, TO, Op> PickBinaryRow() {
#if TFG_X86
  if (UseAvx2()) return &BinaryRowAvx2<TA, TB, TO, Op>;
#endif
  return &BinaryRow<TA, TB, TO, Op>;
}

// out[i] = op(in[i]) for i in [0, n), on the calling thread (AVX2 build when available).
template <typename TI, typename TO, typename Op>
void MapLoop(const TI* in, TO* out, int64_t n, const Op& op) {
#if TFG_X86
  if (UseAvx2()) return UnaryRowAvx2<TI, TO, Op>(in, out, n, op);
#endif
  UnaryRow<TI, TO, Op>(in, out, n, op);
}

// Runs `op` over the output of a broadcast binary op. op(a, b) -> out element.
// The inner level runs as one of the row loops above. When the inner level is short (a channel
// broadcast over few channels) and the next level repeats one input's row, that row is tiled
// into a buffer so several rows run as one long contiguous loop.
template <typename TA, typename TB, typename TO, typename Op>
void RunBinary(ThreadPool* pool, const BcastPlan& plan, const TA* a, const TB* b, TO* o, const Op& op,
               int64_t min_chunk = kCheapChunk) {
  if (plan.total <= 0) return;
  const BinaryRowFn<TA, TB, TO, Op> row = PickBinaryRow<TA, TB, TO, Op>();
  const int n = int(plan.dims.size());
  const int64_t inner = plan.dims[n - 1];
  const int64_t ia = plan.sa[n - 1], ib = plan.sb[n - 1];
  const int mode = (ia == 0 ? 1 : 0) + (ib == 0 ? 2 : 0);
  constexpr int64_t kTile = 256;  // elements per tiled run (at least)
  // tile_b: a runs on contiguously across rows, b's row repeats; tile_a the other way round.
  const bool small = n >= 2 && mode == 0 && inner < 64;
  const bool tile_b = small && plan.sa[n - 2] == inner && plan.sb[n - 2] == 0;
  const bool tile_a = small && plan.sb[n - 2] == inner && plan.sa[n - 2] == 0;
  auto range = [&](int64_t begin, int64_t end) {
    int64_t idx[64];
    int64_t rem = begin, oa = 0, ob = 0;
    for (int k = n - 1; k >= 0; --k) {
      idx[k] = rem % plan.dims[k];
      rem /= plan.dims[k];
      oa += idx[k] * plan.sa[k];
      ob += idx[k] * plan.sb[k];
    }
    auto carry = [&](int k) {
      for (; k > 0 && idx[k] == plan.dims[k]; --k) {
        idx[k] = 0;
        oa -= plan.dims[k] * plan.sa[k];
        ob -= plan.dims[k] * plan.sb[k];
        ++idx[k - 1];
        oa += plan.sa[k - 1];
        ob += plan.sb[k - 1];
      }
    };
    // Tiled row buffer (only used when tile_a / tile_b).
    const int64_t reps = (tile_a || tile_b) ? (kTile + inner - 1) / inner : 0;
    alignas(64) unsigned char tile_mem[(kTile + 64) * 8];
    int64_t tiled_from = -1;
    int64_t pos = begin;
    while (pos < end) {
      if ((tile_a || tile_b) && idx[n - 1] == 0) {
        const int64_t rows = std::min(std::min(reps, plan.dims[n - 2] - idx[n - 2]), (end - pos) / inner);
        if (rows >= 2) {
          const int64_t len = rows * inner;
          if (tile_b) {
            TB* t = reinterpret_cast<TB*>(tile_mem);
            if (tiled_from != ob) {
              for (int64_t r = 0; r < reps; ++r) std::memcpy(t + r * inner, b + ob, size_t(inner) * sizeof(TB));
              tiled_from = ob;
            }
            row(a + oa, t, o + pos, len, 0, op);
          } else {
            TA* t = reinterpret_cast<TA*>(tile_mem);
            if (tiled_from != oa) {
              for (int64_t r = 0; r < reps; ++r) std::memcpy(t + r * inner, a + oa, size_t(inner) * sizeof(TA));
              tiled_from = oa;
            }
            row(t, b + ob, o + pos, len, 0, op);
          }
          pos += len;
          idx[n - 2] += rows;
          oa += rows * plan.sa[n - 2];
          ob += rows * plan.sb[n - 2];
          carry(n - 2);
          continue;
        }
      }
      const int64_t cnt = std::min(inner - idx[n - 1], end - pos);
      row(a + oa, b + ob, o + pos, cnt, mode, op);
      pos += cnt;
      idx[n - 1] += cnt;
      oa += cnt * ia;
      ob += cnt * ib;
      carry(n - 1);
    }
  };
  ParallelFor(pool, plan.total, range, min_chunk);
}

// Plain reference loop over a broadcast binary op (index arithmetic per element).
template <typename TA, typename TB, typename TO, typename Op>
void RunBinaryRef(const Dims& sa, const TA* a, const Dims& sb, const TB* b, const Dims& so, TO* o,
                  const Op& op) {
  int64_t total = NumElements(so);
  std::vector<int64_t> idx(so.size());
  for (int64_t i = 0; i < total; ++i) {
    int64_t rem = i;
    for (int d = int(so.size()) - 1; d >= 0; --d) {
      idx[d] = rem % so[d];
      rem /= so[d];
    }
    o[i] = op(a[BroadcastOffset(sa, so, idx)], b[BroadcastOffset(sb, so, idx)]);
  }
}

// Runs out[i] = op(in[i]) over n elements in parallel chunks.
template <typename TI, typename TO, typename Op>
void RunUnary(ThreadPool* pool, int64_t n, const TI* in, TO* out, const Op& op, int64_t min_chunk = kCheapChunk) {
  ParallelFor(
      pool, n, [&](int64_t b, int64_t e) { MapLoop(in + b, out + b, e - b, op); }, min_chunk);
}

// ---- transcendental approximations (plain arithmetic, vectorisable) ----

// exp(x) for float, within ~2 ulp of the correctly rounded result over the whole range,
// including the subnormal results and overflow to +inf; NaN propagates.
inline float ExpApprox(float x) {
  // Clamp (NaN passes through): below -104 the result is 0, above 88.8 it is inf.
  float xc = MinKeep(MaxKeep(x, -104.0f), 88.8f);
  // n = round(x / ln2) with the 1.5*2^23 trick, read back from the bits (no float->int cast).
  const float kMagic = 12582912.0f;  // 1.5 * 2^23
  float t = xc * 1.44269504088896341f + kMagic;
  int32_t n = int32_t(BitCast<uint32_t>(t) - BitCast<uint32_t>(kMagic));
  float fn = t - kMagic;
  // r = x - n*ln2 (Cody-Waite, two constants).
  float r = xc - fn * 0.693359375f;
  r = r - fn * -2.12194440e-4f;
  float z = r * r;
  float p = 1.9875691500E-4f;
  p = p * r + 1.3981999507E-3f;
  p = p * r + 8.3334519073E-3f;
  p = p * r + 4.1665795894E-2f;
  p = p * r + 1.6666665459E-1f;
  p = p * r + 5.0000001201E-1f;
  p = p * z + r + 1.0f;
  // Scale by 2^n in two steps so subnormal results and overflow round correctly.
  int32_t n1 = n >> 1;
  int32_t n2 = n - n1;
  float s1 = BitCast<float>(uint32_t(n1 + 127) << 23);
  float s2 = BitCast<float>(uint32_t(n2 + 127) << 23);
  return (p * s1) * s2;
}

// 1 / (1 + exp(-x)), evaluated as r = 1 / (1 + e) with e = exp(-|x|) <= 1, and e * r for x < 0
// (accurate down to the subnormal results, no overflow).
inline float LogisticApprox(float x) {
  const float e = ExpApprox(-std::fabs(x));
  const float r = 1.0f / (1.0f + e);
  return x < 0.f ? e * r : r;
}

// tanh(x): odd polynomial near 0, 1 - 2/(exp(2|x|)+1) elsewhere.
inline float TanhApprox(float x) {
  float ax = std::fabs(x);
  float z = x * x;
  float small = ((((-5.70498872745E-3f * z + 2.06390887954E-2f) * z - 5.37397155531E-2f) * z +
                  1.33314422036E-1f) * z - 3.33332819422E-1f) * z * x + x;
  float e = ExpApprox(2.0f * ax);
  float big = 1.0f - 2.0f / (e + 1.0f);
  big = std::copysign(big, x);
  return ax < 0.625f ? small : big;
}

// For the GPU side of the family (gpu_elementwise.cc): parsed params of a node.
Activation FusedActivationOf(const Node& node);  // ADD / SUB / MUL / DIV
float LeakyAlphaOf(const Node& node);            // LEAKY_RELU

}  // namespace ew
}  // namespace tflite_gpu
