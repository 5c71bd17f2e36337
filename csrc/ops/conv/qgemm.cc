// Micro-kernels of the 8-bit integer GEMM (qgemm.h).
#include "ops/conv/qgemm.h"

#include <type_traits>

#include "ops/simd.h"

namespace tflite_gpu {
namespace qgemm {
namespace {

// Plain kernel: same packed layout, int32 wrapping sums (unsigned arithmetic, no UB).
void MicroScalar(const int16_t* A, int64_t lda, int rows, const int16_t* panel, int kpairs, int32_t* C) {
  for (int r = 0; r < rows; ++r) {
    uint32_t acc[kNr] = {0};
    const int16_t* a = A + r * lda;
    for (int kk = 0; kk < kpairs; ++kk) {
      const int32_t a0 = a[2 * kk], a1 = a[2 * kk + 1];
      const int16_t* b = panel + kk * 32;
      for (int c = 0; c < kNr; ++c) {
        const int16_t* bc = b + (c / 8) * 16 + (c % 8) * 2;
        acc[c] += uint32_t(a0 * int32_t(bc[0]) + a1 * int32_t(bc[1]));
      }
    }
    for (int c = 0; c < kNr; ++c) C[r * kNr + c] = int32_t(acc[c]);
  }
}

#if TFG_X86
TFG_TARGET_AVX2_BEGIN
void MicroAvx2(const int16_t* A, int64_t lda, int rows, const int16_t* panel, int kpairs, int32_t* C) {
  __m256i c00 = _mm256_setzero_si256(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00, c31 = c00;
  const int16_t* a0 = A;
  const int16_t* a1 = A + (rows > 1 ? lda : 0);
  const int16_t* a2 = A + (rows > 2 ? 2 * lda : 0);
  const int16_t* a3 = A + (rows > 3 ? 3 * lda : 0);
  for (int kk = 0; kk < kpairs; ++kk) {
    const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + kk * 32));
    const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + kk * 32 + 16));
    int32_t v;
    std::memcpy(&v, a0 + 2 * kk, 4);
    __m256i av = _mm256_set1_epi32(v);
    c00 = _mm256_add_epi32(c00, _mm256_madd_epi16(av, b0));
    c01 = _mm256_add_epi32(c01, _mm256_madd_epi16(av, b1));
    std::memcpy(&v, a1 + 2 * kk, 4);
    av = _mm256_set1_epi32(v);
    c10 = _mm256_add_epi32(c10, _mm256_madd_epi16(av, b0));
    c11 = _mm256_add_epi32(c11, _mm256_madd_epi16(av, b1));
    std::memcpy(&v, a2 + 2 * kk, 4);
    av = _mm256_set1_epi32(v);
    c20 = _mm256_add_epi32(c20, _mm256_madd_epi16(av, b0));
    c21 = _mm256_add_epi32(c21, _mm256_madd_epi16(av, b1));
    std::memcpy(&v, a3 + 2 * kk, 4);
    av = _mm256_set1_epi32(v);
    c30 = _mm256_add_epi32(c30, _mm256_madd_epi16(av, b0));
    c31 = _mm256_add_epi32(c31, _mm256_madd_epi16(av, b1));
  }
  __m256i* out = reinterpret_cast<__m256i*>(C);
  _mm256_storeu_si256(out + 0, c00);
  _mm256_storeu_si256(out + 1, c01);
  if (rows > 1) { _mm256_storeu_si256(out + 2, c10); _mm256_storeu_si256(out + 3, c11); }
  if (rows > 2) { _mm256_storeu_si256(out + 4, c20); _mm256_storeu_si256(out + 5, c21); }
  if (rows > 3) { _mm256_storeu_si256(out + 6, c30); _mm256_storeu_si256(out + 7, c31); }
}
TFG_TARGET_END
#endif

#if TFG_X86
TFG_TARGET_AVX2_BEGIN
void RequantAvx2(const int32_t* acc, const int32_t* bias, const int32_t* mult, const int32_t* shift, int32_t zp,
                 int32_t lo, int32_t hi, int32_t* out) {
  const __m256i a = _mm256_add_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc)),
                                     _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bias)));
  const __m256i sh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(shift));
  const __m256i m = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(mult));
  const __m256i zero = _mm256_setzero_si256();
  const __m256i left = _mm256_max_epi32(sh, zero);
  const __m256i right = _mm256_max_epi32(_mm256_sub_epi32(zero, sh), zero);
  const __m256i xs = _mm256_sllv_epi32(a, left);  // wraps like TFLite's x * (1 << left)
  // (xs * m + 2^30) >> 31 per lane (m >= 0, so the INT32_MIN * INT32_MIN saturation cannot occur)
  const __m256i round = _mm256_set1_epi64x(int64_t(1) << 30);
  const __m256i pe = _mm256_add_epi64(_mm256_mul_epi32(xs, m), round);
  const __m256i po = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(xs, 32), _mm256_srli_epi64(m, 32)), round);
  const __m256i he = _mm256_srli_epi64(pe, 31);                     // low 32 bits = even lanes
  const __m256i ho = _mm256_slli_epi64(_mm256_srli_epi64(po, 31), 32);  // odd lanes in the high halves
  const __m256i h = _mm256_blend_epi32(he, ho, 0xAA);
  // round half up by 2^right without overflow: (h >> r) + ((h >> (r - 1)) & 1), r >= 1
  const __m256i one = _mm256_set1_epi32(1);
  const __m256i r1 = _mm256_max_epi32(_mm256_sub_epi32(right, one), zero);
  const __m256i bit = _mm256_and_si256(_mm256_srav_epi32(h, r1), one);
  const __m256i has_right = _mm256_cmpgt_epi32(right, zero);
  const __m256i q = _mm256_add_epi32(_mm256_srav_epi32(h, right), _mm256_and_si256(bit, has_right));
  __m256i v = _mm256_add_epi32(q, _mm256_set1_epi32(zp));
  v = _mm256_min_epi32(_mm256_max_epi32(v, _mm256_set1_epi32(lo)), _mm256_set1_epi32(hi));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), v);
}

// RequantAvx2's arithmetic on 8 lanes, the result in a register.
inline __m256i RequantLanes(const int32_t* acc, const int32_t* bias, const int32_t* mult, const int32_t* shift,
                            __m256i vzp, __m256i vlo, __m256i vhi) {
  const __m256i a = _mm256_add_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc)),
                                     _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bias)));
  const __m256i sh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(shift));
  const __m256i m = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(mult));
  const __m256i zero = _mm256_setzero_si256();
  const __m256i left = _mm256_max_epi32(sh, zero);
  const __m256i right = _mm256_max_epi32(_mm256_sub_epi32(zero, sh), zero);
  const __m256i xs = _mm256_sllv_epi32(a, left);
  const __m256i round = _mm256_set1_epi64x(int64_t(1) << 30);
  const __m256i pe = _mm256_add_epi64(_mm256_mul_epi32(xs, m), round);
  const __m256i po = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(xs, 32), _mm256_srli_epi64(m, 32)), round);
  const __m256i he = _mm256_srli_epi64(pe, 31);
  const __m256i ho = _mm256_slli_epi64(_mm256_srli_epi64(po, 31), 32);
  const __m256i h = _mm256_blend_epi32(he, ho, 0xAA);
  const __m256i one = _mm256_set1_epi32(1);
  const __m256i r1 = _mm256_max_epi32(_mm256_sub_epi32(right, one), zero);
  const __m256i bit = _mm256_and_si256(_mm256_srav_epi32(h, r1), one);
  const __m256i has_right = _mm256_cmpgt_epi32(right, zero);
  const __m256i q = _mm256_add_epi32(_mm256_srav_epi32(h, right), _mm256_and_si256(bit, has_right));
  const __m256i v = _mm256_add_epi32(q, vzp);
  return _mm256_min_epi32(_mm256_max_epi32(v, vlo), vhi);
}

// 8 int32 lanes (already inside the output type's range) -> 8 int16 in order.
inline __m128i Narrow16(__m256i v) { return _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)); }

template <typename T>
int RequantRowAvx2(const int32_t* acc, const int32_t* bias, const int32_t* mult, const int32_t* shift, int32_t zp,
                   int32_t lo, int32_t hi, int n, T* out) {
  const __m256i vzp = _mm256_set1_epi32(zp), vlo = _mm256_set1_epi32(lo), vhi = _mm256_set1_epi32(hi);
  for (int j = 0; j < n; j += 8) {
    const __m128i w = Narrow16(RequantLanes(acc + j, bias + j, mult + j, shift + j, vzp, vlo, vhi));
    if (sizeof(T) == 2) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + j), w);
    } else {
      const __m128i b = std::is_signed<T>::value ? _mm_packs_epi16(w, w) : _mm_packus_epi16(w, w);
      _mm_storel_epi64(reinterpret_cast<__m128i*>(out + j), b);
    }
  }
  return n;
}
TFG_TARGET_END
#endif

template <typename T>
int RequantRow(const int32_t* acc, const int32_t* bias, const int32_t* mult, const int32_t* shift, int32_t zp,
               int32_t lo, int32_t hi, int n, T* out) {
#if TFG_X86
  if (HaveAvx2()) return RequantRowAvx2(acc, bias, mult, shift, zp, lo, hi, n, out);
#endif
  (void)acc, (void)bias, (void)mult, (void)shift, (void)zp, (void)lo, (void)hi, (void)n, (void)out;
  return 0;
}

}  // namespace

int RequantHalfUpRow(const int32_t* acc, const int32_t* bias, const int32_t* mult, const int32_t* shift, int32_t zp,
                     int32_t lo, int32_t hi, int n, int8_t* out) {
  return RequantRow(acc, bias, mult, shift, zp, lo, hi, n, out);
}
int RequantHalfUpRow(const int32_t* acc, const int32_t* bias, const int32_t* mult, const int32_t* shift, int32_t zp,
                     int32_t lo, int32_t hi, int n, uint8_t* out) {
  return RequantRow(acc, bias, mult, shift, zp, lo, hi, n, out);
}
int RequantHalfUpRow(const int32_t* acc, const int32_t* bias, const int32_t* mult, const int32_t* shift, int32_t zp,
                     int32_t lo, int32_t hi, int n, int16_t* out) {
  return RequantRow(acc, bias, mult, shift, zp, lo, hi, n, out);
}

bool HaveAvx2() {
#if TFG_X86
  static const bool avx2 = simd::ActiveIsa() >= simd::Isa::kAvx2;
  return avx2;
#else
  return false;
#endif
}

bool RequantHalfUp8(const int32_t* acc, const int32_t* bias, const int32_t* mult, const int32_t* shift, int32_t zp,
                    int32_t lo, int32_t hi, int32_t* out) {
#if TFG_X86
  if (HaveAvx2()) {
    RequantAvx2(acc, bias, mult, shift, zp, lo, hi, out);
    return true;
  }
#endif
  return false;
}

void MicroKernel(const int16_t* A, int64_t lda, int rows, const int16_t* panel, int kpairs, int32_t* C) {
#if TFG_X86
  static const bool avx2 = simd::ActiveIsa() >= simd::Isa::kAvx2;
  if (avx2) return MicroAvx2(A, lda, rows, panel, kpairs, C);
#endif
  MicroScalar(A, lda, rows, panel, kpairs, C);
}

}  // namespace qgemm
}  // namespace tflite_gpu
