// Quantized ADD, SUB, MUL (INT8, UINT8; MUL also INT16) as TensorFlow Lite's builtin kernels
// (add.cc / sub.cc / mul.cc with optimized_integer_ops / optimized_ops) compute them.
//
// MUL: out = clamp(out_zp + MultiplyByQuantizedMultiplier((a - a_zp) * (b - b_zp),
//   a_scale * b_scale / out_scale)). TFLite's NEON body (vqrdmulh + RoundingDivideByPOT) is the same
//   arithmetic as its scalar loop, so every element follows that one rule.
//
// ADD / SUB (TFLite's "left shift 20" scheme): each input is rescaled to twice the larger input
//   scale: x_i = (q_i - zp_i) << 20, times m_i = scale_i / (2 * max_scale); the sum (SUB: the
//   difference) times m_out = 2 * max_scale / (2^20 * out_scale), + out_zp, clamped. TFLite's
//   builtin kernel rounds this differently in its vector bodies and its scalar tails, and splits
//   the tensor as its broadcast dispatch does; both are reproduced here so results match it bit for
//   bit:
//   * elementwise (the flat sizes agree, or after TFLite's five-fold broadcast split, each inner
//     run of y4 > 1 elements): the first floor(n / 16) * 16 elements of a run take the vector rule
//     "(x << (20 + shift_i)) then one rounding high-mul" per input; the rest the scalar rule
//     "(x << 20), rounding high-mul, rounding right shift by -shift_i" (uint8 ADD: 8-element body
//     with the scalar-broadcast rule below, TFLite's older uint8 kernel);
//   * scalar broadcast runs (y4 == 1): the first floor(n / 8) * 8 elements take "(x << 20),
//     rounding high-mul, truncating (floor) right shift by -shift_i"; the rest the scalar rule;
//   * TFLite's "generic" broadcast category: the scalar rule everywhere.
//   Output stage everywhere: rounding high-mul by m_out, RoundingDivideByPOT (ties away), + zp.
//   TFLite's reference kernels (BUILTIN_REF) use the scalar rule everywhere; we follow the builtin
//   (optimized) path, the oracle of the tests. SUB runs the same scheme with the second input's
//   multiplier negated, as TFLite's optimized SUB does.
// The reference kernel here runs the same split with plain per-element code (single thread); the
// fast kernel parallelises the non-broadcast case over 16-element-aligned chunks.
#include <cmath>
#include <memory>
#include <type_traits>

#include "ops/elementwise/ew_common.h"
#include "ops/elementwise/quant_ew.h"
#include "ops/quant_common.h"
#include "ops/simd.h"

namespace tflite_gpu {
namespace ew {
namespace {

enum class Cat { kNone, kFirstFast, kSecondFast, kGeneric };

struct QBinData {
  QBinary kind = QBinary::kAdd;
  DType type = DType::kInt8;
  int32_t off1 = 0, off2 = 0, out_off = 0;  // TFLite's offsets: -zp for inputs, +zp for the output
  int32_t m1 = 0, m2 = 0, mo = 0;
  int s1 = 0, s2 = 0, so = 0;
  int left_shift = 20;
  int32_t act_min = 0, act_max = 0;
  Cat cat = Cat::kNone;
  int64_t y[5] = {1, 1, 1, 1, 1};  // TFLite's five-fold broadcast shape
  Dims sa, sb, so_shape;
};

// ---- per-element rules ----

inline int32_t ShiftLeftOrFloor(int32_t x, int s) {  // NEON vshl by a signed amount
  return s >= 0 ? int32_t(uint32_t(x) << s) : (x >> (-s));
}

inline int32_t OutputStage(const QBinData& d, int32_t sum) {
  const int32_t r = quant::RoundingDivideByPOT(quant::SaturatingRoundingDoublingHighMul(sum, d.mo), -d.so);
  return r;
}

// Scalar rule (TFLite's scalar loops, reference kernels).
inline int32_t AddScalarRule(const QBinData& d, int32_t a, int32_t b) {
  const int32_t x1 = quant::RoundingDivideByPOT(
      quant::SaturatingRoundingDoublingHighMul(int32_t(uint32_t(a + d.off1) << d.left_shift), d.m1), -d.s1);
  const int32_t x2 = quant::RoundingDivideByPOT(
      quant::SaturatingRoundingDoublingHighMul(int32_t(uint32_t(b + d.off2) << d.left_shift), d.m2), -d.s2);
  const int32_t raw = OutputStage(d, int32_t(uint32_t(x1) + uint32_t(x2))) + d.out_off;
  return std::min(std::max(raw, d.act_min), d.act_max);
}

// Vector-body output stage: narrow to 16 bits (truncating), add the offset in 16 bits, saturate.
inline int32_t VectorOut(const QBinData& d, int32_t sum) {
  const int16_t n = int16_t(OutputStage(d, sum));
  const int16_t w = int16_t(uint16_t(n) + uint16_t(d.out_off));
  return std::min(std::max(int32_t(w), d.act_min), d.act_max);
}

// Elementwise vector body.
inline int32_t AddBodyElementwise(const QBinData& d, int32_t a, int32_t b) {
  const int32_t x1 = quant::SaturatingRoundingDoublingHighMul(ShiftLeftOrFloor(a + d.off1, d.left_shift + d.s1), d.m1);
  const int32_t x2 = quant::SaturatingRoundingDoublingHighMul(ShiftLeftOrFloor(b + d.off2, d.left_shift + d.s2), d.m2);
  return VectorOut(d, int32_t(uint32_t(x1) + uint32_t(x2)));
}

inline int32_t AddBodyElementwise16(const QBinData& d, int32_t a, int32_t b) {
  const int32_t x1 = quant::SaturatingRoundingDoublingHighMul(ShiftLeftOrFloor(a + d.off1, d.left_shift + d.s1), d.m1);
  const int32_t x2 = quant::SaturatingRoundingDoublingHighMul(ShiftLeftOrFloor(b + d.off2, d.left_shift + d.s2), d.m2);
  const int32_t r = OutputStage(d, int32_t(uint32_t(x1) + uint32_t(x2))) + d.out_off;
  return std::min(std::max(r, d.act_min), d.act_max);
}

// Scalar-broadcast vector body.
inline int32_t AddBodyScalarBcast(const QBinData& d, int32_t a, int32_t b) {
  const int32_t x1 = ShiftLeftOrFloor(
      quant::SaturatingRoundingDoublingHighMul(int32_t(uint32_t(a + d.off1) << d.left_shift), d.m1), d.s1);
  const int32_t x2 = ShiftLeftOrFloor(
      quant::SaturatingRoundingDoublingHighMul(int32_t(uint32_t(b + d.off2) << d.left_shift), d.m2), d.s2);
  return VectorOut(d, int32_t(uint32_t(x1) + uint32_t(x2)));
}

inline int32_t MulRule(const QBinData& d, int32_t a, int32_t b) {
  const int32_t raw = d.out_off + quant::MultiplyByQuantizedMultiplier((a + d.off1) * (b + d.off2), d.mo, d.so);
  return std::min(std::max(raw, d.act_min), d.act_max);
}

#if TFG_X86
TFG_TARGET_AVX2_BEGIN
// AddBodyElementwise on 8 int8 lanes at a time (n a multiple of 8), the same integers: the
// rounding high-mul floor((x * m + 2^30) / 2^31) is gemmlowp's SaturatingRoundingDoublingHighMul
// (its nudge and truncating division come to that for every product; the saturating case
// INT32_MIN * INT32_MIN cannot occur, the multipliers are in +-[2^30, 2^31)).
inline __m256i HighMul(__m256i x, __m256i m) {
  const __m256i round = _mm256_set1_epi64x(int64_t(1) << 30);
  const __m256i pe = _mm256_add_epi64(_mm256_mul_epi32(x, m), round);
  const __m256i po = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(x, 32), m), round);
  return _mm256_blend_epi32(_mm256_srli_epi64(pe, 31), _mm256_slli_epi64(_mm256_srli_epi64(po, 31), 32), 0xAA);
}
inline __m256i ShiftLeftOrFloorV(__m256i x, int s) {
  return s >= 0 ? _mm256_sll_epi32(x, _mm_cvtsi32_si128(s)) : _mm256_sra_epi32(x, _mm_cvtsi32_si128(-s));
}
void AddBodyInt8Avx2(const QBinData& p, int64_t n, const int8_t* a, const int8_t* b, int8_t* o) {
  const __m256i off1 = _mm256_set1_epi32(p.off1), off2 = _mm256_set1_epi32(p.off2);
  const __m256i m1 = _mm256_set1_epi32(p.m1), m2 = _mm256_set1_epi32(p.m2), mo = _mm256_set1_epi32(p.mo);
  const int sh1 = p.left_shift + p.s1, sh2 = p.left_shift + p.s2, e = -p.so;
  const __m256i mask = _mm256_set1_epi32(int32_t((int64_t(1) << e) - 1));
  const __m256i half = _mm256_set1_epi32(int32_t(((int64_t(1) << e) - 1) >> 1));
  const __m128i ecount = _mm_cvtsi32_si128(e);
  const __m256i zp = _mm256_set1_epi32(p.out_off);
  const __m256i lo = _mm256_set1_epi32(p.act_min), hi = _mm256_set1_epi32(p.act_max);
  for (int64_t i = 0; i < n; i += 8) {
    const __m256i va = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(a + i)));
    const __m256i vb = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(b + i)));
    const __m256i x1 = HighMul(ShiftLeftOrFloorV(_mm256_add_epi32(va, off1), sh1), m1);
    const __m256i x2 = HighMul(ShiftLeftOrFloorV(_mm256_add_epi32(vb, off2), sh2), m2);
    const __m256i h = HighMul(_mm256_add_epi32(x1, x2), mo);
    // RoundingDivideByPOT(h, e): ties away from zero.
    const __m256i rem = _mm256_and_si256(h, mask);
    const __m256i thr = _mm256_add_epi32(half, _mm256_srli_epi32(h, 31));
    const __m256i r = _mm256_sub_epi32(_mm256_sra_epi32(h, ecount), _mm256_cmpgt_epi32(rem, thr));
    // VectorOut: truncate to 16 bits, add the zero point in 16 bits, clamp.
    const __m256i n16 = _mm256_srai_epi32(_mm256_slli_epi32(r, 16), 16);
    const __m256i w16 = _mm256_srai_epi32(_mm256_slli_epi32(_mm256_add_epi32(n16, zp), 16), 16);
    const __m256i v = _mm256_min_epi32(_mm256_max_epi32(w16, lo), hi);
    const __m128i v16 = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(o + i), _mm_packs_epi16(v16, v16));
  }
}
TFG_TARGET_END

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
TFG_TARGET_AVX512_BEGIN
// AddBodyInt8Avx2 on 16 lanes (AVX-512F), the same integers step for step.
inline __m512i HighMul16(__m512i x, __m512i m, __m512i round) {
  const __m512i pe = _mm512_add_epi64(_mm512_mul_epi32(x, m), round);
  const __m512i po = _mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(x, 32), m), round);
  return _mm512_mask_blend_epi32(__mmask16(0xAAAA), _mm512_srli_epi64(pe, 31), _mm512_slli_epi64(_mm512_srli_epi64(po, 31), 32));
}
inline __m512i ShiftLeftOrFloor16(__m512i x, int s) {
  return s >= 0 ? _mm512_sll_epi32(x, _mm_cvtsi32_si128(s)) : _mm512_sra_epi32(x, _mm_cvtsi32_si128(-s));
}
void AddBodyInt8Avx512(const QBinData& p, int64_t n, const int8_t* a, const int8_t* b, int8_t* o) {
  const __m512i off1 = _mm512_set1_epi32(p.off1), off2 = _mm512_set1_epi32(p.off2);
  const __m512i m1 = _mm512_set1_epi32(p.m1), m2 = _mm512_set1_epi32(p.m2), mo = _mm512_set1_epi32(p.mo);
  const __m512i round = _mm512_set1_epi64(int64_t(1) << 30);
  const int sh1 = p.left_shift + p.s1, sh2 = p.left_shift + p.s2, e = -p.so;
  const __m512i mask = _mm512_set1_epi32(int32_t((int64_t(1) << e) - 1));
  const __m512i half = _mm512_set1_epi32(int32_t(((int64_t(1) << e) - 1) >> 1));
  const __m128i ecount = _mm_cvtsi32_si128(e);
  const __m512i one = _mm512_set1_epi32(1);
  const __m512i zp = _mm512_set1_epi32(p.out_off);
  const __m512i lo = _mm512_set1_epi32(p.act_min), hi = _mm512_set1_epi32(p.act_max);
  for (int64_t i = 0; i < n; i += 16) {
    const __m512i va = _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i)));
    const __m512i vb = _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i)));
    const __m512i x1 = HighMul16(ShiftLeftOrFloor16(_mm512_add_epi32(va, off1), sh1), m1, round);
    const __m512i x2 = HighMul16(ShiftLeftOrFloor16(_mm512_add_epi32(vb, off2), sh2), m2, round);
    const __m512i h = HighMul16(_mm512_add_epi32(x1, x2), mo, round);
    // RoundingDivideByPOT(h, e): ties away from zero (+1 where the remainder passes the threshold).
    const __m512i rem = _mm512_and_si512(h, mask);
    const __m512i thr = _mm512_add_epi32(half, _mm512_srli_epi32(h, 31));
    const __m512i q = _mm512_sra_epi32(h, ecount);
    const __m512i r = _mm512_mask_add_epi32(q, _mm512_cmpgt_epi32_mask(rem, thr), q, one);
    // VectorOut: truncate to 16 bits, add the zero point in 16 bits, clamp.
    const __m512i n16 = _mm512_srai_epi32(_mm512_slli_epi32(r, 16), 16);
    const __m512i w16 = _mm512_srai_epi32(_mm512_slli_epi32(_mm512_add_epi32(n16, zp), 16), 16);
    const __m512i v = _mm512_min_epi32(_mm512_max_epi32(w16, lo), hi);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(o + i), _mm512_cvtsepi32_epi8(v));
  }
}
TFG_TARGET_END
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif

// Runs over contiguous element runs, as TFLite's AddElementwise / AddScalarBroadcast. `p` holds the
// (possibly switched) parameters. `fast`: the int8 ADD / SUB body may take the AVX2 kernel (same
// integers); the reference kernel passes false.
template <typename T>
void ElementwiseRun(const QBinData& p, int64_t n, const T* a, const T* b, T* o, bool fast = false) {
  (void)fast;
  if (p.kind == QBinary::kMul) {
    for (int64_t i = 0; i < n; ++i) o[i] = T(MulRule(p, a[i], b[i]));
    return;
  }
  if (std::is_same<T, uint8_t>::value && p.kind == QBinary::kAdd) {
    // uint8 ADD: TFLite's older 8-wide NEON body (optimized_ops::AddElementwise), rounded as the
    // scalar-broadcast body. (uint8 SUB goes through the 16-wide form, as int8.)
    const int64_t body = n / 8 * 8;
    for (int64_t i = 0; i < body; ++i) o[i] = T(AddBodyScalarBcast(p, a[i], b[i]));
    for (int64_t i = body; i < n; ++i) o[i] = T(AddScalarRule(p, a[i], b[i]));
    return;
  }
  const int64_t body = n / 16 * 16;
  if (std::is_same<T, int16_t>::value) {
    // int16 (AddElementwiseInt16): the same 16-wide body, the output stage in 32 bits.
    for (int64_t i = 0; i < body; ++i) o[i] = T(AddBodyElementwise16(p, a[i], b[i]));
  } else {
    int64_t i = 0;
#if TFG_X86
    static const bool avx2 = simd::ActiveIsa() >= simd::Isa::kAvx2;
    static const bool avx512 = simd::ActiveIsa() >= simd::Isa::kAvx512;
    if (std::is_same<T, int8_t>::value && fast && avx512 && -p.so <= 31) {
      AddBodyInt8Avx512(p, body, reinterpret_cast<const int8_t*>(a), reinterpret_cast<const int8_t*>(b),
                        reinterpret_cast<int8_t*>(o));
      i = body;
    } else if (std::is_same<T, int8_t>::value && fast && avx2 && -p.so <= 31) {
      AddBodyInt8Avx2(p, body, reinterpret_cast<const int8_t*>(a), reinterpret_cast<const int8_t*>(b),
                      reinterpret_cast<int8_t*>(o));
      i = body;
    }
#endif
    for (; i < body; ++i) o[i] = T(AddBodyElementwise(p, a[i], b[i]));
  }
  for (int64_t i = body; i < n; ++i) o[i] = T(AddScalarRule(p, a[i], b[i]));
}
template <typename T>
void ScalarBcastRun(const QBinData& p, int64_t n, T a, const T* b, T* o) {
  if (p.kind == QBinary::kMul) {
    for (int64_t i = 0; i < n; ++i) o[i] = T(MulRule(p, a, b[i]));
    return;
  }
  const int64_t body = n / 8 * 8;
  for (int64_t i = 0; i < body; ++i) o[i] = T(AddBodyScalarBcast(p, a, b[i]));
  for (int64_t i = body; i < n; ++i) o[i] = T(AddScalarRule(p, a, b[i]));
}

// TFLite's ProcessBroadcastShapes.
void ProcessBroadcast(const Dims& s0, const Dims& s1, QBinData* d) {
  const int n = int(std::max(s0.size(), s1.size()));
  std::vector<int64_t> e0(n, 1), e1(n, 1);
  for (size_t i = 0; i < s0.size(); ++i) e0[n - s0.size() + i] = s0[i];
  for (size_t i = 0; i < s1.size(); ++i) e1[n - s1.size() + i] = s1[i];
  for (int k = 0; k < 5; ++k) d->y[k] = 1;
  if (e0 == e1) {
    d->cat = Cat::kNone;
    return;
  }
  d->cat = Cat::kGeneric;
  for (int i = n - 1; i >= 0; --i) {
    if (e0[i] == e1[i]) continue;
    if (e0[i] == 1) d->cat = Cat::kFirstFast;
    else if (e1[i] == 1) d->cat = Cat::kSecondFast;
    else d->cat = Cat::kGeneric;
    break;
  }
  if (d->cat == Cat::kGeneric) return;
  const bool swap = d->cat == Cat::kSecondFast;
  const std::vector<int64_t>& a = swap ? e1 : e0;
  const std::vector<int64_t>& b = swap ? e0 : e1;
  int i = n - 1;
  while (i >= 0 && a[i] == b[i]) d->y[4] *= b[i--];
  while (i >= 0 && a[i] == 1) d->y[3] *= b[i--];
  while (i >= 0 && a[i] == b[i]) d->y[2] *= a[i--];
  while (i >= 0 && b[i] == 1) d->y[1] *= a[i--];
  while (i >= 0 && a[i] == b[i]) d->y[0] *= b[i--];
  if (i >= 0) d->cat = Cat::kGeneric;
}

template <typename T>
void RunAll(const QBinData& d, const T* in1, const T* in2, T* out, ThreadPool* pool, bool fast) {
  if (d.cat == Cat::kNone) {
    const int64_t n = NumElements(d.so_shape);
    if (pool == nullptr) {
      ElementwiseRun(d, n, in1, in2, out, fast);
      return;
    }
    // Chunks of whole 16-element blocks keep TFLite's body / tail split (the tail is < 16). The
    // int8 vector body costs about a work unit an element, the other paths about four
    // (runtime/thread_pool.h's cost rule; measured on the H100 host, 2 threads: 14x14x64 int8 ADD
    // split 0.018 ms vs XNNPACK's 0.004).
    const int64_t body = n / 16 * 16;
    const int64_t min_blocks = MinChunkFor(std::is_same<T, int8_t>::value && fast ? 16 : 64);
    ParallelFor(pool, body / 16, [&](int64_t b, int64_t e) {
      ElementwiseRun(d, (e - b) * 16, in1 + b * 16, in2 + b * 16, out + b * 16, fast);
    }, min_blocks);
    ElementwiseRun(d, n - body, in1 + body, in2 + body, out + body, fast);
    return;
  }
  if (d.cat == Cat::kGeneric) {
    const Dims& so = d.so_shape;
    const int64_t total = NumElements(so);
    std::vector<int64_t> idx(so.size());
    for (int64_t i = 0; i < total; ++i) {
      int64_t rem = i;
      for (int k = int(so.size()) - 1; k >= 0; --k) {
        idx[k] = rem % so[k];
        rem /= so[k];
      }
      const int32_t a = in1[BroadcastOffset(d.sa, so, idx)], b = in2[BroadcastOffset(d.sb, so, idx)];
      out[i] = T(d.kind == QBinary::kMul ? MulRule(d, a, b) : AddScalarRule(d, a, b));
    }
    return;
  }
  // Five-fold: input 1 of the loops is the one that broadcasts fast.
  QBinData p = d;
  const T* i1 = in1;
  const T* i2 = in2;
  if (d.cat == Cat::kSecondFast) {
    std::swap(p.off1, p.off2);
    std::swap(p.m1, p.m2);
    std::swap(p.s1, p.s2);
    std::swap(i1, i2);
  }
  const int64_t y0 = d.y[0], y1 = d.y[1], y2 = d.y[2], y3 = d.y[3], y4 = d.y[4];
  T* op = out;
  const T* p1 = i1;
  const T* reset2 = i2;
  if (y4 > 1) {
    for (int64_t a0 = 0; a0 < y0; ++a0) {
      const T* p2 = nullptr;
      for (int64_t a1 = 0; a1 < y1; ++a1) {
        p2 = reset2;
        for (int64_t a2 = 0; a2 < y2; ++a2) {
          for (int64_t a3 = 0; a3 < y3; ++a3) {
            ElementwiseRun(p, y4, p1, p2, op, fast);
            p2 += y4;
            op += y4;
          }
          p1 += y4;
        }
      }
      reset2 = p2;
    }
  } else {
    for (int64_t a0 = 0; a0 < y0; ++a0) {
      const T* p2 = nullptr;
      for (int64_t a1 = 0; a1 < y1; ++a1) {
        p2 = reset2;
        for (int64_t a2 = 0; a2 < y2; ++a2) {
          ScalarBcastRun(p, y3, *p1, p2, op);
          p2 += y3;
          op += y3;
          p1 += 1;
        }
      }
      reset2 = p2;
    }
  }
}

}  // namespace

// TFLite's CheckedLog2: whether x is a power of two (to 1e-3 in log2).
bool IsPot(float x) {
  const float l = std::log(x) * (1.0f / std::log(2.0f));
  return std::fabs(l - std::round(l)) < 1e-3f;
}

Status PrepareQuantBinary(OpContext& ctx, QBinary kind, int act, bool pot_scale_int16) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 2, 1, 1));
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  const Tensor& y = ctx.output(0);
  const char* name = kind == QBinary::kAdd ? "ADD" : kind == QBinary::kSub ? "SUB" : "MUL";
  if (a.type != b.type || y.type != a.type)
    return ctx.Error(std::string("input and output types must match, got ") + DTypeName(a.type) + ", " +
                     DTypeName(b.type) + " -> " + DTypeName(y.type));
  quant::QuantRule rule;
  rule.zero_point_zero = a.type == DType::kInt16;
  quant::TensorQuant q1, q2, qo;
  TFG_RETURN_IF_ERROR(quant::ReadQuant(ctx, a, "input 1", rule, &q1));
  TFG_RETURN_IF_ERROR(quant::ReadQuant(ctx, b, "input 2", rule, &q2));
  TFG_RETURN_IF_ERROR(quant::ReadQuant(ctx, y, "output", rule, &qo));
  if (a.type == DType::kInt16 && kind != QBinary::kMul && pot_scale_int16 && IsPot(q1.Scale()) && IsPot(q2.Scale()) &&
      IsPot(qo.Scale()))
    return ctx.Error(std::string("quantized INT16 ") + name +
                     " with power-of-two scales (pot_scale_int16) is not supported yet");
  auto d = std::make_shared<QBinData>();
  d->kind = kind;
  d->type = a.type;
  d->off1 = -q1.ZeroPoint();
  d->off2 = -q2.ZeroPoint();
  d->out_off = qo.ZeroPoint();
  if (a.type == DType::kInt16) d->left_shift = 15;  // TFLite: 15 for int16 outputs, 20 otherwise
  if (kind == QBinary::kMul) {
    quant::QuantizeMultiplier(double(q1.Scale()) * double(q2.Scale()) / double(qo.Scale()), &d->mo, &d->so);
  } else {
    const double twice_max = 2.0 * std::max(double(q1.Scale()), double(q2.Scale()));
    quant::QuantizeMultiplier(double(q1.Scale()) / twice_max, &d->m1, &d->s1);
    quant::QuantizeMultiplier(double(q2.Scale()) / twice_max, &d->m2, &d->s2);
    quant::QuantizeMultiplier(twice_max / (double(1 << d->left_shift) * double(qo.Scale())), &d->mo, &d->so);
    if (d->so > 0 || d->s1 > 0 || d->s2 > 0)
      return ctx.Error("output scale " + std::to_string(qo.Scale()) + " is too small for the input scales (TFLite "
                       "needs 2 * max(input scales) / (2^20 * output scale) < 1)");
    if (kind == QBinary::kSub) d->m2 = -d->m2;
  }
  TFG_RETURN_IF_ERROR(quant::QuantizedActivationRange(ctx, act, y.type, qo.Scale(), qo.ZeroPoint(), &d->act_min,
                                                      &d->act_max));
  Dims out;
  TFG_RETURN_IF_ERROR(ew::BroadcastShape(ctx, a.shape, b.shape, &out));
  d->sa = a.shape;
  d->sb = b.shape;
  d->so_shape = out;
  ProcessBroadcast(a.shape, b.shape, d.get());
  // int16 ADD / SUB with broadcasting: TFLite's reference BroadcastAdd6DSlow (the scalar rule).
  if (a.type == DType::kInt16 && kind != QBinary::kMul && d->cat != Cat::kNone) d->cat = Cat::kGeneric;
  ctx.node().user_data = d;
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, a.type));
  return ctx.SetOutputShape(0, out);
}

Status EvalQuantBinary(OpContext& ctx, bool ref) {
  const QBinData& d = *ctx.node().U<QBinData>();
  ThreadPool* pool = ref ? nullptr : ctx.pool();
  switch (d.type) {
    case DType::kInt8: RunAll(d, ctx.input(0).as<int8_t>(), ctx.input(1).as<int8_t>(), ctx.output(0).as<int8_t>(), pool, !ref); break;
    case DType::kUInt8: RunAll(d, ctx.input(0).as<uint8_t>(), ctx.input(1).as<uint8_t>(), ctx.output(0).as<uint8_t>(), pool, !ref); break;
    case DType::kInt16: RunAll(d, ctx.input(0).as<int16_t>(), ctx.input(1).as<int16_t>(), ctx.output(0).as<int16_t>(), pool, !ref); break;
    default: return ctx.Error(std::string("unsupported type ") + DTypeName(d.type));
  }
  return OkStatus();
}

}  // namespace ew
}  // namespace tflite_gpu

// PRELU (INT8, UINT8, and INT16 input with INT8 alpha), TFLite's prelu kernel (activations.cc):
// x = q - in_zp; x >= 0 ? MBQM(x, in_scale / out_scale) : MBQM(x * (alpha_q - alpha_zp), in_scale *
// alpha_scale / out_scale); + out_zp, clamped to the type. Double rounding (the builtin kernel's
// scalar loops). INT16 is TFLite's 16x8 form: int16 input and output, int8 alpha (LiteRT 2.3 reads
// the alpha buffer as int8 whatever its type, so an INT16 alpha gives garbage there: refused here).
namespace tflite_gpu {
namespace ew {
namespace {

struct QPreluData {
  DType type = DType::kInt8;
  int32_t in_zp = 0, alpha_zp = 0, out_zp = 0, qmin = 0, qmax = 0;
  int32_t m1 = 0, m2 = 0;
  int s1 = 0, s2 = 0;
  Dims in_shape, alpha_shape;
  int64_t alpha_period = 0;  // > 0: alpha index = i % period (alpha's dims are the input's trailing dims)
};

inline int32_t PreluRule(const QPreluData& d, int32_t q, int32_t a) {
  const int32_t x = q - d.in_zp;
  const int32_t v = x >= 0 ? quant::MultiplyByQuantizedMultiplier(x, d.m1, d.s1)
                           : quant::MultiplyByQuantizedMultiplier(x * (a - d.alpha_zp), d.m2, d.s2);
  return std::min(std::max(v + d.out_zp, d.qmin), d.qmax);
}

template <typename T, typename A>
void PreluRun(const QPreluData& d, const T* x, const A* alpha, T* y, ThreadPool* pool) {
  const int64_t n = NumElements(d.in_shape);
  if (pool != nullptr && d.alpha_period > 0) {
    const int64_t per = d.alpha_period;
    ParallelFor(pool, n, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) y[i] = T(PreluRule(d, x[i], alpha[i % per]));
    }, kCheapChunk);
    return;
  }
  std::vector<int64_t> idx(d.in_shape.size());
  for (int64_t i = 0; i < n; ++i) {
    int64_t rem = i;
    for (int k = int(d.in_shape.size()) - 1; k >= 0; --k) {
      idx[k] = rem % d.in_shape[k];
      rem /= d.in_shape[k];
    }
    y[i] = T(PreluRule(d, x[i], alpha[BroadcastOffset(d.alpha_shape, d.in_shape, idx)]));
  }
}

}  // namespace

Status PrepareQuantPrelu(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 2, 1, 1));
  const Tensor& x = ctx.input(0);
  const Tensor& a = ctx.input(1);
  const Tensor& y = ctx.output(0);
  if (x.type == DType::kInt16 && a.type != DType::kInt8)
    return ctx.Error(std::string("INT16 input needs an INT8 alpha (TFLite's 16x8 PRELU), got alpha type ") +
                     DTypeName(a.type));
  if ((x.type != DType::kInt16 && a.type != x.type) || y.type != x.type)
    return ctx.Error(std::string("input, alpha and output types must match, got ") + DTypeName(x.type) + ", " +
                     DTypeName(a.type) + " -> " + DTypeName(y.type));
  quant::QuantRule rule;
  quant::TensorQuant qi, qa, qo;
  TFG_RETURN_IF_ERROR(quant::ReadQuant(ctx, x, "input", rule, &qi));
  TFG_RETURN_IF_ERROR(quant::ReadQuant(ctx, a, "alpha", rule, &qa));
  TFG_RETURN_IF_ERROR(quant::ReadQuant(ctx, y, "output", rule, &qo));
  Dims out;
  TFG_RETURN_IF_ERROR(ew::BroadcastShape(ctx, x.shape, a.shape, &out));
  if (out != x.shape)
    return ctx.Error("alpha of shape " + DimsToString(a.shape) + " does not broadcast to the input shape " +
                     DimsToString(x.shape));
  auto d = std::make_shared<QPreluData>();
  d->type = x.type;
  d->in_zp = qi.ZeroPoint();
  d->alpha_zp = qa.ZeroPoint();
  d->out_zp = qo.ZeroPoint();
  quant::TypeRange(x.type, &d->qmin, &d->qmax);
  // In float, as TFLite writes it (params.scale are floats): the ratio's float rounding decides ties.
  quant::QuantizeMultiplier(double(qi.Scale() / qo.Scale()), &d->m1, &d->s1);
  quant::QuantizeMultiplier(double(qi.Scale() * qa.Scale() / qo.Scale()), &d->m2, &d->s2);
  d->in_shape = x.shape;
  d->alpha_shape = a.shape;
  // alpha's dims (leading 1s dropped) equal to the input's trailing dims: a periodic index.
  size_t lead = 0;
  while (lead < a.shape.size() && a.shape[lead] == 1) ++lead;
  bool periodic = true;
  int64_t period = 1;
  for (size_t k = lead; k < a.shape.size(); ++k) {
    const size_t xi = x.shape.size() - (a.shape.size() - k);
    periodic &= a.shape[k] == x.shape[xi];
    period *= a.shape[k];
  }
  d->alpha_period = periodic ? period : 0;
  ctx.node().user_data = d;
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, x.type));
  return ctx.SetOutputShape(0, x.shape);
}

Status EvalQuantPrelu(OpContext& ctx, bool ref) {
  const QPreluData& d = *ctx.node().U<QPreluData>();
  ThreadPool* pool = ref ? nullptr : ctx.pool();
  switch (d.type) {
    case DType::kInt8: PreluRun(d, ctx.input(0).as<int8_t>(), ctx.input(1).as<int8_t>(), ctx.output(0).as<int8_t>(), pool); break;
    case DType::kUInt8: PreluRun(d, ctx.input(0).as<uint8_t>(), ctx.input(1).as<uint8_t>(), ctx.output(0).as<uint8_t>(), pool); break;
    case DType::kInt16: PreluRun(d, ctx.input(0).as<int16_t>(), ctx.input(1).as<int8_t>(), ctx.output(0).as<int16_t>(), pool); break;
    default: return ctx.Error(std::string("unsupported type ") + DTypeName(d.type));
  }
  return OkStatus();
}

}  // namespace ew
}  // namespace tflite_gpu

// DIV (INT8, UINT8, INT16) as TFLite's div.cc: both the builtin (optimized) and the reference
// registration run reference_ops::Div / BroadcastDivSlow for quantized types, the same rule per
// element (so BUILTIN and BUILTIN_REF agree; XNNPACK has no quantized DIV):
//   a = q1 - zp1, b = q2 - zp2 (b != 0: a divisor equal to its zero point is an error at invoke,
//   as TFLite's CheckNonZero); signs moved so b > 0; 1 / b = inv * 2^-rs by gemmlowp's fixed-point
//   Newton-Raphson (quant::GetReciprocal31); h = leading sign bits of a;
//   quotient = SaturatingRoundingDoublingHighMul(a << h, inv);
//   out = zp_out + RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(quotient, M), rs + h - shift)
//   with M * 2^shift = s1 / (s2 * s_out) (in float, as TFLite), clamped to the activation range.
// Deviation, on purpose: when the quotient is far below one output step, rs + h - shift exceeds
// 31. TFLite's shift by 32 or more is undefined behaviour in C++; LiteRT's x86 build then shifts
// by the count mod 32 and returns values unrelated to the quotient (measured with LiteRT 2.3:
// 0 / x and small / large quotients come out as out_zp + 1, or saturated). We round as the
// arithmetic means: such a quotient is below half a step, so the rounded shift gives 0 (out_zp).
// A negative count (a multiplier M * 2^shift above 2^headroom, only with extreme scales) is a
// saturating left shift here (TFLite: undefined as well). The tests compare exactly with LiteRT
// on scales whose counts stay within [0, 31] for every input pair and check the other region
// against numpy. LiteRT 2.3's int16 path is this fixed-point rule too (newer LiteRT sources
// divide non-broadcast int16 in float instead; measured: 2.3 does not).
// Fast kernel: for 8-bit divisors the reciprocal and its shift come from a 256-entry table made at
// prepare with the same arithmetic; the broadcast loops run in parallel. Reference: the plain rule
// per element on one thread.
namespace tflite_gpu {
namespace ew {
namespace {

struct QDivData {
  DType type = DType::kInt8;
  int32_t off1 = 0, off2 = 0, out_off = 0, act_min = 0, act_max = 0;
  int32_t mult = 0;
  int shift = 0;
  int32_t inv[256] = {};   // 8-bit divisors (fast kernel): Q0.31 reciprocal of |q2 - zp2| ...
  int8_t rshift[256] = {};  // ... its shift, by the divisor's bit pattern
  ew::BcastPlan plan;
};

// round(x / 2^e) with ties away from zero for any e (e < 0: a saturating left shift).
inline int32_t RoundingDivideByPOTAny(int32_t x, int e) {
  if (e < 0) {
    const int64_t v = int64_t(x) * (int64_t(1) << std::min(-e, 32));
    return int32_t(std::min<int64_t>(std::max<int64_t>(v, std::numeric_limits<int32_t>::min()),
                                     std::numeric_limits<int32_t>::max()));
  }
  if (e > 31) return (x == std::numeric_limits<int32_t>::min() && e == 32) ? -1 : 0;
  return quant::RoundingDivideByPOT(x, e);
}

inline int32_t DivFinish(const QDivData& d, int32_t a, int32_t inv, int rs) {
  const int h = quant::CountLeadingSignBits32(a);
  const int32_t quotient = quant::SaturatingRoundingDoublingHighMul(int32_t(uint32_t(a) << h), inv);
  const int32_t r = RoundingDivideByPOTAny(quant::SaturatingRoundingDoublingHighMul(quotient, d.mult), rs + h - d.shift);
  const int32_t v = int32_t(uint32_t(r) + uint32_t(d.out_off));
  return std::min(std::max(v, d.act_min), d.act_max);
}

// The plain rule (reference kernel, int16 fast kernel).
inline int32_t DivRule(const QDivData& d, int32_t q1, int32_t q2) {
  int32_t a = q1 + d.off1, b = q2 + d.off2;
  if (b < 0) {
    a = -a;
    b = -b;
  }
  int rs = 0;
  const int32_t inv = quant::GetReciprocal31(b, &rs);
  return DivFinish(d, a, inv, rs);
}

template <typename T>
struct DivRef {
  const QDivData* d;
  T operator()(T a, T b) const { return T(DivRule(*d, a, b)); }
};
template <typename T>
struct DivTable {  // 8-bit fast kernel
  const QDivData* d;
  T operator()(T q1, T q2) const {
    const int idx = int(uint8_t(q2));
    const int32_t a = int32_t(q1) + d->off1;
    return T(DivFinish(*d, int32_t(q2) + d->off2 < 0 ? -a : a, d->inv[idx], d->rshift[idx]));
  }
};

template <typename T>
Status RunDiv(OpContext& ctx, const QDivData& d, bool ref) {
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.input(1);
  Tensor& o = ctx.output(0);
  const T* py = y.as<T>();
  const int64_t ny = y.num_elements();
  for (int64_t i = 0; i < ny; ++i)
    if (int32_t(py[i]) + d.off2 == 0)
      return ctx.Error("division by zero (divisor element " + std::to_string(i) + " equals input 2's zero point " +
                       std::to_string(-d.off2) + ")");
  if (ref) {
    ew::RunBinaryRef(x.shape, x.as<T>(), y.shape, py, o.shape, o.as<T>(), DivRef<T>{&d});
  } else if (sizeof(T) == 1) {
    ew::RunBinary(ctx.pool(), d.plan, x.as<T>(), py, o.as<T>(), DivTable<T>{&d}, 1024);
  } else {
    ew::RunBinary(ctx.pool(), d.plan, x.as<T>(), py, o.as<T>(), DivRef<T>{&d}, 1024);
  }
  return OkStatus();
}

}  // namespace

Status PrepareQuantDiv(OpContext& ctx, int act) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 2, 1, 1));
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  const Tensor& y = ctx.output(0);
  if (a.type != b.type || y.type != a.type)
    return ctx.Error(std::string("input and output types must match, got ") + DTypeName(a.type) + ", " +
                     DTypeName(b.type) + " -> " + DTypeName(y.type));
  quant::QuantRule rule;  // TFLite: per-tensor (CheckNonZero refuses a per-channel divisor), any zero point
  quant::TensorQuant q1, q2, qo;
  TFG_RETURN_IF_ERROR(quant::ReadQuant(ctx, a, "input 1", rule, &q1));
  TFG_RETURN_IF_ERROR(quant::ReadQuant(ctx, b, "input 2", rule, &q2));
  TFG_RETURN_IF_ERROR(quant::ReadQuant(ctx, y, "output", rule, &qo));
  auto d = std::make_shared<QDivData>();
  d->type = a.type;
  d->off1 = -q1.ZeroPoint();
  d->off2 = -q2.ZeroPoint();
  d->out_off = qo.ZeroPoint();
  // In float, as TFLite's Prepare writes it (params.scale are floats).
  const float real = q1.Scale() / (q2.Scale() * qo.Scale());
  if (!std::isfinite(real) || real <= 0.f)
    return ctx.Error("input 1 scale / (input 2 scale * output scale) = " + std::to_string(real) +
                     " is not a finite positive multiplier");
  quant::QuantizeMultiplier(double(real), &d->mult, &d->shift);
  TFG_RETURN_IF_ERROR(quant::QuantizedActivationRange(ctx, act, y.type, qo.Scale(), qo.ZeroPoint(), &d->act_min,
                                                      &d->act_max));
  if (a.type != DType::kInt16) {
    for (int v = 0; v < 256; ++v) {
      const int32_t q = a.type == DType::kInt8 ? int32_t(int8_t(uint8_t(v))) : v;
      const int32_t den = q + d->off2;
      if (den == 0) continue;  // refused at invoke
      int rs = 0;
      d->inv[v] = quant::GetReciprocal31(den < 0 ? -den : den, &rs);
      d->rshift[v] = int8_t(rs);
    }
  }
  Dims out;
  TFG_RETURN_IF_ERROR(ew::BroadcastShape(ctx, a.shape, b.shape, &out));
  d->plan = ew::MakeBcastPlan(a.shape, b.shape, out);
  ctx.node().user_data = d;
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, a.type));
  return ctx.SetOutputShape(0, out);
}

Status EvalQuantDiv(OpContext& ctx, bool ref) {
  const QDivData& d = *ctx.node().U<QDivData>();
  switch (d.type) {
    case DType::kInt8: return RunDiv<int8_t>(ctx, d, ref);
    case DType::kUInt8: return RunDiv<uint8_t>(ctx, d, ref);
    case DType::kInt16: return RunDiv<int16_t>(ctx, d, ref);
    default: return ctx.Error(std::string("unsupported type ") + DTypeName(d.type));
  }
}

}  // namespace ew
}  // namespace tflite_gpu

// SQUARED_DIFFERENCE (INT8) as TFLite's squared_difference.cc (its only kernel, reference
// integer code): each input rescaled to twice the larger input scale with left shift 7,
//   x_i = MultiplyByQuantizedMultiplier((q_i - zp_i) << 7, s_i / (2 max_s)),
//   out = zp_out + MultiplyByQuantizedMultiplier((x_1 - x_2)^2, (2 max_s)^2 / (2^14 s_out)),
// clamped to [-128, 127] (no fused activation). TFLite aborts the process (TFLITE_CHECK) when
// that output multiplier is >= 1 (output scale <= max_s^2 / 4096); refused here at prepare.
// TFLite's broadcast form is 4-D (BroadcastBinaryFunction4DSlow); inputs of higher rank that
// broadcast are refused as well. UINT8 / INT16 are not TFLite kernels (LiteRT: "only supports
// FLOAT32 and INT32"). Fast kernel: a 256-entry table of x_2 by input-2 bit pattern and one of
// x_1, parallel broadcast loops; reference: the plain rule per element on one thread.
namespace tflite_gpu {
namespace ew {
namespace {

struct QSqDiffData {
  int32_t off1 = 0, off2 = 0, out_off = 0;
  int32_t m1 = 0, m2 = 0, mo = 0;
  int s1 = 0, s2 = 0, so = 0;
  int32_t x1[256] = {}, x2[256] = {};  // rescaled inputs by bit pattern (fast kernel)
  ew::BcastPlan plan;
};

inline int32_t SqDiffScale(int32_t v, int32_t m, int s) {
  return quant::MultiplyByQuantizedMultiplier(int32_t(uint32_t(v) << 7), m, s);
}
inline int8_t SqDiffOut(const QSqDiffData& d, int32_t x1, int32_t x2) {
  const int32_t diff = x1 - x2;
  const int32_t sq = int32_t(uint32_t(diff) * uint32_t(diff));
  const int32_t v = quant::MultiplyByQuantizedMultiplier(sq, d.mo, d.so) + d.out_off;
  return int8_t(std::min(127, std::max(-128, v)));
}

struct SqDiffRef {
  const QSqDiffData* d;
  int8_t operator()(int8_t a, int8_t b) const {
    return SqDiffOut(*d, SqDiffScale(a + d->off1, d->m1, d->s1), SqDiffScale(b + d->off2, d->m2, d->s2));
  }
};
struct SqDiffTable {
  const QSqDiffData* d;
  int8_t operator()(int8_t a, int8_t b) const { return SqDiffOut(*d, d->x1[uint8_t(a)], d->x2[uint8_t(b)]); }
};

}  // namespace

Status PrepareQuantSqDiff(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 2, 1, 1));
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  const Tensor& y = ctx.output(0);
  if (a.type != b.type)
    return ctx.Error(std::string("input types differ: ") + DTypeName(a.type) + " and " + DTypeName(b.type));
  if (a.type != DType::kInt8)
    return ctx.Error(std::string("quantized ") + DTypeName(a.type) +
                     " inputs are not supported (TFLite's SQUARED_DIFFERENCE takes FLOAT32, INT32 and INT8)");
  if (y.type != a.type)
    return ctx.Error(std::string("output type ") + DTypeName(y.type) + " differs from the input type INT8");
  quant::QuantRule rule;
  quant::TensorQuant q1, q2, qo;
  TFG_RETURN_IF_ERROR(quant::ReadQuant(ctx, a, "input 1", rule, &q1));
  TFG_RETURN_IF_ERROR(quant::ReadQuant(ctx, b, "input 2", rule, &q2));
  TFG_RETURN_IF_ERROR(quant::ReadQuant(ctx, y, "output", rule, &qo));
  auto d = std::make_shared<QSqDiffData>();
  d->off1 = -q1.ZeroPoint();
  d->off2 = -q2.ZeroPoint();
  d->out_off = qo.ZeroPoint();
  // As TFLite writes it: the larger scale doubled in float, the rest in double.
  const double twice_max = double(2 * std::max(q1.Scale(), q2.Scale()));
  const double real_out = (twice_max * twice_max) / double(float(1 << 14) * qo.Scale());
  if (!(real_out < 1.0))
    return ctx.Error("output scale " + std::to_string(qo.Scale()) + " is too small for the input scales: TFLite "
                     "needs (2 * max input scale)^2 / (2^14 * output scale) < 1, got " + std::to_string(real_out));
  quant::QuantizeMultiplier(double(q1.Scale()) / twice_max, &d->m1, &d->s1);
  quant::QuantizeMultiplier(double(q2.Scale()) / twice_max, &d->m2, &d->s2);
  quant::QuantizeMultiplier(real_out, &d->mo, &d->so);
  for (int v = 0; v < 256; ++v) {
    const int32_t q = int32_t(int8_t(uint8_t(v)));
    d->x1[v] = SqDiffScale(q + d->off1, d->m1, d->s1);
    d->x2[v] = SqDiffScale(q + d->off2, d->m2, d->s2);
  }
  Dims out;
  TFG_RETURN_IF_ERROR(ew::BroadcastShape(ctx, a.shape, b.shape, &out));
  if (a.shape != b.shape && out.size() > 4)
    return ctx.Error("broadcasting INT8 inputs of rank " + std::to_string(out.size()) +
                     " is not supported (TFLite's quantized kernel broadcasts up to 4-D)");
  d->plan = ew::MakeBcastPlan(a.shape, b.shape, out);
  ctx.node().user_data = d;
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, a.type));
  return ctx.SetOutputShape(0, out);
}

Status EvalQuantSqDiff(OpContext& ctx, bool ref) {
  const QSqDiffData& d = *ctx.node().U<QSqDiffData>();
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  Tensor& o = ctx.output(0);
  if (ref) ew::RunBinaryRef(a.shape, a.as<int8_t>(), b.shape, b.as<int8_t>(), o.shape, o.as<int8_t>(), SqDiffRef{&d});
  else ew::RunBinary(ctx.pool(), d.plan, a.as<int8_t>(), b.as<int8_t>(), o.as<int8_t>(), SqDiffTable{&d});
  return OkStatus();
}

}  // namespace ew
}  // namespace tflite_gpu
