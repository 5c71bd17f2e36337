// Micro-kernels of the 8-bit integer GEMM (qgemm.h).
#include "ops/conv/qgemm.h"

#include <atomic>
#include <cstring>
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
inline void MicroAvx2Core(const int16_t* A, int64_t lda, int rows, const int16_t* panel, int kpairs,
                          __m256i (&acc)[kMr][2]) {
  if (rows == 1) {  // one row (a GEMV: FULLY_CONNECTED batch 1): two K-pairs per step on 4 chains
    __m256i s0 = _mm256_setzero_si256(), s1 = s0, s2 = s0, s3 = s0;
    int kk = 0;
    int32_t v;
    for (; kk + 2 <= kpairs; kk += 2) {
      std::memcpy(&v, A + 2 * kk, 4);
      const __m256i av = _mm256_set1_epi32(v);
      s0 = _mm256_add_epi32(s0, _mm256_madd_epi16(av, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + kk * 32))));
      s1 = _mm256_add_epi32(s1, _mm256_madd_epi16(av, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + kk * 32 + 16))));
      std::memcpy(&v, A + 2 * kk + 2, 4);
      const __m256i aw = _mm256_set1_epi32(v);
      s2 = _mm256_add_epi32(s2, _mm256_madd_epi16(aw, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + kk * 32 + 32))));
      s3 = _mm256_add_epi32(s3, _mm256_madd_epi16(aw, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + kk * 32 + 48))));
    }
    if (kk < kpairs) {
      std::memcpy(&v, A + 2 * kk, 4);
      const __m256i av = _mm256_set1_epi32(v);
      s0 = _mm256_add_epi32(s0, _mm256_madd_epi16(av, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + kk * 32))));
      s1 = _mm256_add_epi32(s1, _mm256_madd_epi16(av, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + kk * 32 + 16))));
    }
    acc[0][0] = _mm256_add_epi32(s0, s2);
    acc[0][1] = _mm256_add_epi32(s1, s3);
    return;
  }
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
  acc[0][0] = c00, acc[0][1] = c01, acc[1][0] = c10, acc[1][1] = c11;
  acc[2][0] = c20, acc[2][1] = c21, acc[3][0] = c30, acc[3][1] = c31;
}

void MicroAvx2(const int16_t* A, int64_t lda, int rows, const int16_t* panel, int kpairs, int32_t* C) {
  __m256i acc[kMr][2];
  MicroAvx2Core(A, lda, rows, panel, kpairs, acc);
  __m256i* out = reinterpret_cast<__m256i*>(C);
  for (int r = 0; r < rows; ++r) {
    _mm256_storeu_si256(out + 2 * r, acc[r][0]);
    _mm256_storeu_si256(out + 2 * r + 1, acc[r][1]);
  }
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

// MicroAvx2Core, then RequantLanes' arithmetic on the registers: the per-channel vectors of the
// panel's 16 columns are loaded and derived once for all rows (not per row as through write).
void MicroAvx2Fused8(const int16_t* A, int64_t lda, int rows, const int16_t* panel, int kpairs, const Fused8& f,
                     int n0, uint8_t* out) {
  __m256i acc[kMr][2];
  MicroAvx2Core(A, lda, rows, panel, kpairs, acc);
  const __m256i zero = _mm256_setzero_si256(), one = _mm256_set1_epi32(1);
  const __m256i round = _mm256_set1_epi64x(int64_t(1) << 30);
  const __m256i vzp = _mm256_set1_epi32(f.zp), vlo = _mm256_set1_epi32(f.lo), vhi = _mm256_set1_epi32(f.hi);
  __m256i bias[2], m[2], mo[2], left[2], right[2], r1[2], has_right[2];
  for (int v = 0; v < 2; ++v) {
    bias[v] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(f.bias + n0 + 8 * v));
    m[v] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(f.mult + n0 + 8 * v));
    mo[v] = _mm256_srli_epi64(m[v], 32);
    const __m256i sh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(f.shift + n0 + 8 * v));
    left[v] = _mm256_max_epi32(sh, zero);
    right[v] = _mm256_max_epi32(_mm256_sub_epi32(zero, sh), zero);
    r1[v] = _mm256_max_epi32(_mm256_sub_epi32(right[v], one), zero);
    has_right[v] = _mm256_cmpgt_epi32(right[v], zero);
  }
  for (int r = 0; r < rows; ++r) {
    __m128i w[2];
    for (int v = 0; v < 2; ++v) {
      const __m256i xs = _mm256_sllv_epi32(_mm256_add_epi32(acc[r][v], bias[v]), left[v]);
      const __m256i pe = _mm256_add_epi64(_mm256_mul_epi32(xs, m[v]), round);
      const __m256i po = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(xs, 32), mo[v]), round);
      const __m256i h = _mm256_blend_epi32(_mm256_srli_epi64(pe, 31), _mm256_slli_epi64(_mm256_srli_epi64(po, 31), 32), 0xAA);
      const __m256i bit = _mm256_and_si256(_mm256_srav_epi32(h, r1[v]), one);
      const __m256i q = _mm256_add_epi32(_mm256_srav_epi32(h, right[v]), _mm256_and_si256(bit, has_right[v]));
      w[v] = Narrow16(_mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi32(q, vzp), vlo), vhi));
    }
    const __m128i b = f.u8 ? _mm_packus_epi16(w[0], w[1]) : _mm_packs_epi16(w[0], w[1]);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + r * f.ldc), b);
  }
}
// n (>= 8) values widened to int16 plus the offset: 16 or 8 at a time, the last chunk overlapping
// the one before it (same values rewritten) so no read passes src + n.
template <typename T>
inline void WidenAvx2(const T* src, int n, __m256i off16, int16_t* dst) {
  auto w16 = [&](int j) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + j));
    const __m256i y = std::is_signed<T>::value ? _mm256_cvtepi8_epi16(x) : _mm256_cvtepu8_epi16(x);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + j), _mm256_add_epi16(y, off16));
  };
  auto w8 = [&](int j) {
    const __m128i x = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(src + j));
    const __m128i y = std::is_signed<T>::value ? _mm_cvtepi8_epi16(x) : _mm_cvtepu8_epi16(x);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + j), _mm_add_epi16(y, _mm256_castsi256_si128(off16)));
  };
  if (n >= 16) {
    int j = 0;
    for (; j + 16 <= n; j += 16) w16(j);
    if (j < n) w16(n - 16);
  } else {
    w8(0);
    if (n > 8) w8(n - 8);
  }
}

template <typename T>
void Im2colRun16Avx2(const T* src, int64_t px_step, int npx, int64_t row_step, int kh, int row_len, int32_t offset,
                     int16_t* dst, int Kp) {
  const __m256i off16 = _mm256_set1_epi16(int16_t(offset));
  for (int p = 0; p < npx; ++p) {
    const T* s0 = src + p * px_step;
    int16_t* d = dst + int64_t(p) * Kp;
    for (int ky = 0; ky < kh; ++ky, s0 += row_step, d += row_len) {
      if (row_len >= 8) {
        WidenAvx2(s0, row_len, off16, d);
      } else {
        for (int j = 0; j < row_len; ++j) d[j] = int16_t(int32_t(s0[j]) + offset);
      }
    }
    for (int k = kh * row_len; k < Kp; ++k) dst[int64_t(p) * Kp + k] = 0;
  }
}
TFG_TARGET_END
#endif

template <typename T>
void Im2colRun16Any(const T* src, int64_t px_step, int npx, int64_t row_step, int kh, int row_len, int32_t offset,
                    int16_t* dst, int Kp) {
#if TFG_X86
  if (HaveAvx2()) return Im2colRun16Avx2(src, px_step, npx, row_step, kh, row_len, offset, dst, Kp);
#endif
  for (int p = 0; p < npx; ++p) {
    int16_t* d = dst + int64_t(p) * Kp;
    for (int ky = 0; ky < kh; ++ky)
      for (int j = 0; j < row_len; ++j) d[ky * row_len + j] = int16_t(int32_t(src[p * px_step + ky * row_step + j]) + offset);
    for (int k = kh * row_len; k < Kp; ++k) d[k] = 0;
  }
}

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

void Im2colRun16(const int8_t* src, int64_t px_step, int npx, int64_t row_step, int kh, int row_len, int32_t offset,
                 int16_t* dst, int Kp) {
  Im2colRun16Any(src, px_step, npx, row_step, kh, row_len, offset, dst, Kp);
}
void Im2colRun16(const uint8_t* src, int64_t px_step, int npx, int64_t row_step, int kh, int row_len, int32_t offset,
                 int16_t* dst, int Kp) {
  Im2colRun16Any(src, px_step, npx, row_step, kh, row_len, offset, dst, Kp);
}

bool MicroKernelFused8(const int16_t* A, int64_t lda, int rows, const int16_t* panel, int kpairs, const Fused8& f,
                       int n0, uint8_t* out) {
#if TFG_X86
  if (HaveAvx2()) {
    MicroAvx2Fused8(A, lda, rows, panel, kpairs, f, n0, out);
    return true;
  }
#endif
  (void)A, (void)lda, (void)rows, (void)panel, (void)kpairs, (void)f, (void)n0, (void)out;
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

// ======================================================================= AVX-512 VNNI

namespace tflite_gpu {
namespace qgemm {

bool HaveVnni() { return simd::HaveAvx512Vnni(); }
bool HaveAmx() {
#if TFG_AMX
  return simd::HaveAmxInt8();
#else
  return false;
#endif
}
int KqAlign() { return HaveAmx() ? 16 : 1; }
uint64_t NewPackGeneration() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

void PackB8(int N, int K, const int8_t* src, PackedB8* out, int kq_align) {
  out->N = N;
  out->K = K;
  out->Kq = ((K + 3) / 4 + kq_align - 1) / kq_align * kq_align;
  out->gen = NewPackGeneration();
  const int full = N / kNr8, rem = N % kNr8;
  out->width.assign(full, kNr8);
  if (rem) out->width.push_back(rem <= 16 ? 16 : kNr8);
  out->Np = 0;
  out->offset.clear();
  int64_t bytes = 0;
  for (int w : out->width) {
    out->offset.push_back(bytes);
    bytes += int64_t(out->Kq) * w * 4;
    out->Np += w;
  }
  out->data.assign(size_t(bytes), 0);
  out->colsum.assign(size_t(out->Np), 0);
  for (int p = 0; p < out->panels(); ++p) {
    const int w = out->width[p];
    int8_t* d = out->data.data() + out->offset[p];
    for (int c = 0; c < w; ++c) {
      const int n = p * kNr8 + c;
      if (n >= N) continue;
      uint32_t sum = 0;
      for (int k = 0; k < K; ++k) {
        const int8_t v = src[int64_t(n) * K + k];
        d[(int64_t(k / 4) * w + c) * 4 + k % 4] = v;
        sum += uint32_t(int32_t(v));
      }
      out->colsum[n] = int32_t(sum);
    }
  }
}

Split8 PlanSplit8(int64_t M, const PackedB8& B, int slots, int mr) {
  const int lda = B.Kq * 4;
  // A block ~32 KiB (stays in L1 while the panels stream through), at least one tile.
  int64_t mb = std::max<int64_t>(mr, int64_t(32768) / std::max(1, lda) / mr * mr);
  mb = std::min<int64_t>(mb, 512);
  Split8 sp{std::min<int64_t>(mb, (M + mr - 1) / mr * mr), B.panels()};
  const double macs = double(M) * B.Np * B.Kq * 4;
  if (slots <= 1 || macs < 400000.0) return sp;  // small layers: one thread, no hand-off
  // ~3 tasks per slot so the dynamic hand-out evens out; split the rows first, then the panels.
  const int64_t want = 3 * int64_t(slots);
  const int64_t mtiles = (M + mr - 1) / mr;
  const int64_t mblocks = std::min<int64_t>(mtiles, std::max<int64_t>((M + sp.mb - 1) / sp.mb, want));
  sp.mb = (mtiles + mblocks - 1) / mblocks * mr;
  const int64_t have = (M + sp.mb - 1) / sp.mb;
  if (have < want) {
    const int groups = int(std::min<int64_t>(B.panels(), (want + have - 1) / have));
    sp.pg = (B.panels() + groups - 1) / groups;
  }
  return sp;
}

#if TFG_X86
#if defined(__GNUC__) && !defined(__clang__)
// GCC 12's AVX-512 headers trip -W(maybe-)uninitialized on their own _mm512_undefined_* temporaries.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
TFG_TARGET_AVX512VNNI_BEGIN
namespace {

// kMr8 rows x NV zmm columns of vpdpbusd accumulators over kq steps of 4 bytes (named registers in
// the loop: an array of __m512i there made GCC shuffle them through the stack every step).
template <int NV>
inline void VnniCore(const uint8_t* a, int64_t lda, int rows, const int8_t* b, int kq, __m512i (&acc)[kMr8][2],
                     __m512i init0 = _mm512_setzero_si512(), __m512i init1 = _mm512_setzero_si512()) {
  const uint8_t* a0 = a;
  const uint8_t* a1 = a + (rows > 1 ? 1 : 0) * lda;  // short tiles repeat the last row
  const uint8_t* a2 = a + (rows > 2 ? 2 : rows - 1) * lda;
  const uint8_t* a3 = a + (rows > 3 ? 3 : rows - 1) * lda;
  const uint8_t* a4 = a + (rows > 4 ? 4 : rows - 1) * lda;
  const uint8_t* a5 = a + (rows > 5 ? 5 : rows - 1) * lda;
  const uint8_t* a6 = a + (rows > 6 ? 6 : rows - 1) * lda;
  const uint8_t* a7 = a + (rows > 7 ? 7 : rows - 1) * lda;
  __m512i c00 = init0, c01 = init1, c10 = c00, c11 = c01, c20 = c00, c21 = c01, c30 = c00, c31 = c01;
  __m512i c40 = c00, c41 = c01, c50 = c00, c51 = c01, c60 = c00, c61 = c01, c70 = c00, c71 = c01;
  for (int kk = 0; kk < kq; ++kk) {
    const __m512i b0 = _mm512_loadu_si512(b);
    const __m512i b1 = NV > 1 ? _mm512_loadu_si512(b + 64) : b0;
    b += 64 * NV;
#define TFG_VNNI_ROW(R)                                                  \
  {                                                                      \
    int32_t v;                                                           \
    std::memcpy(&v, a##R + 4 * kk, 4);                                   \
    const __m512i av = _mm512_set1_epi32(v);                             \
    c##R##0 = _mm512_dpbusd_epi32(c##R##0, av, b0);                      \
    if (NV > 1) c##R##1 = _mm512_dpbusd_epi32(c##R##1, av, b1);          \
  }
    TFG_VNNI_ROW(0) TFG_VNNI_ROW(1) TFG_VNNI_ROW(2) TFG_VNNI_ROW(3)
    TFG_VNNI_ROW(4) TFG_VNNI_ROW(5) TFG_VNNI_ROW(6) TFG_VNNI_ROW(7)
#undef TFG_VNNI_ROW
  }
  acc[0][0] = c00, acc[0][1] = c01, acc[1][0] = c10, acc[1][1] = c11, acc[2][0] = c20, acc[2][1] = c21;
  acc[3][0] = c30, acc[3][1] = c31, acc[4][0] = c40, acc[4][1] = c41, acc[5][0] = c50, acc[5][1] = c51;
  acc[6][0] = c60, acc[6][1] = c61, acc[7][0] = c70, acc[7][1] = c71;
}

// One row (a GEMV: FULLY_CONNECTED with batch 1) against a panel: the K-quads split over 4
// independent accumulator chains (vpdpbusd's latency, not its throughput, bounds a single chain),
// summed at the end (int32 wrapping sums, the same integers in any order).
template <int NV>
inline void GemvCore(const uint8_t* a, const int8_t* b, int kq, __m512i (&acc)[kMr8][2],
                     __m512i init0 = _mm512_setzero_si512(), __m512i init1 = _mm512_setzero_si512()) {
  const __m512i z = _mm512_setzero_si512();
  __m512i s00 = init0, s01 = z, s02 = z, s03 = z;
  __m512i s10 = init1, s11 = z, s12 = z, s13 = z;
  int kk = 0;
#define TFG_GEMV_STEP(J)                                                   \
  {                                                                        \
    int32_t v;                                                             \
    std::memcpy(&v, a + 4 * (kk + J), 4);                                  \
    const __m512i av = _mm512_set1_epi32(v);                               \
    const int8_t* bj = b + int64_t(kk + J) * 64 * NV;                      \
    s0##J = _mm512_dpbusd_epi32(s0##J, av, _mm512_loadu_si512(bj));        \
    if (NV > 1) s1##J = _mm512_dpbusd_epi32(s1##J, av, _mm512_loadu_si512(bj + 64)); \
  }
  for (; kk + 4 <= kq; kk += 4) {
    TFG_GEMV_STEP(0) TFG_GEMV_STEP(1) TFG_GEMV_STEP(2) TFG_GEMV_STEP(3)
  }
  for (; kk < kq; ++kk) TFG_GEMV_STEP(0)
#undef TFG_GEMV_STEP
  acc[0][0] = _mm512_add_epi32(_mm512_add_epi32(s00, s01), _mm512_add_epi32(s02, s03));
  acc[0][1] = _mm512_add_epi32(_mm512_add_epi32(s10, s11), _mm512_add_epi32(s12, s13));
}

// HalfUp requantization of 16 lanes: HalfUp(x, m, shift) = round_half_up(round_half_up(xs * m / 2^31) / 2^r)
// with xs = x << left, r = right. Both roundings are floors of (value + half), and
// floor((floor(a / 2^31) + c) / 2^r) = floor((a + c * 2^31) / 2^(31 + r)) for integers, so it is one
// 64-bit add and arithmetic shift per lane: (xs * m + 2^30 + [r > 0] 2^(30 + r)) >> (31 + r)
// (|xs * m| < 2^62, the constant <= 2^30 + 2^61: no overflow). Even and odd lanes via vpmuldq, the
// per-channel constant and shift as int64 vectors (Requant8::k64 / s64).
struct Rq16 {
  __m512i bias, m, mo, left, ke, ko, se, so;
};
inline Rq16 LoadRq(const Requant8& rq, int n) {
  Rq16 q;
  q.bias = _mm512_loadu_si512(rq.bias.data() + n);
  q.m = _mm512_loadu_si512(rq.mult.data() + n);
  q.mo = _mm512_srli_epi64(q.m, 32);
  q.left = _mm512_loadu_si512(rq.left.data() + n);
  q.ke = _mm512_loadu_si512(rq.k64.data() + n);
  q.ko = _mm512_loadu_si512(rq.k64.data() + n + 8);
  q.se = _mm512_loadu_si512(rq.s64.data() + n);
  q.so = _mm512_loadu_si512(rq.s64.data() + n + 8);
  return q;
}
inline __m512i Requant16(__m512i acc, const Rq16& q, __m512i vzp, __m512i vlo, __m512i vhi) {
  const __m512i x = _mm512_sllv_epi32(_mm512_add_epi32(acc, q.bias), q.left);
  const __m512i qe = _mm512_srav_epi64(_mm512_add_epi64(_mm512_mul_epi32(x, q.m), q.ke), q.se);
  const __m512i qo = _mm512_srav_epi64(_mm512_add_epi64(_mm512_mul_epi32(_mm512_shuffle_epi32(x, _MM_PERM_CDAB), q.mo), q.ko), q.so);
  // odd lanes from qo's even dwords
  const __m512i v = _mm512_mask_shuffle_epi32(qe, __mmask16(0xAAAA), qo, _MM_PERM_CDAB);
  return _mm512_min_epi32(_mm512_max_epi32(_mm512_add_epi32(v, vzp), vlo), vhi);
}

// Requant16 for accumulators that already hold the bias; LEFT: some channel has a left shift. The
// result before the clamp: v = rounded + zp (int32, wrapping as TFLite's); the caller narrows with
// saturation and clamps the bytes ([lo, hi] lies inside the output type, so clamp(sat(v)) = clamp(v)).
template <bool LEFT>
inline __m512i Rescale16(__m512i acc, const Rq16& q, __m512i vzp) {
  const __m512i x = LEFT ? _mm512_sllv_epi32(acc, q.left) : acc;
  const __m512i qe = _mm512_srav_epi64(_mm512_add_epi64(_mm512_mul_epi32(x, q.m), q.ke), q.se);
  const __m512i qo = _mm512_srav_epi64(_mm512_add_epi64(_mm512_mul_epi32(_mm512_shuffle_epi32(x, _MM_PERM_CDAB), q.mo), q.ko), q.so);
  return _mm512_add_epi32(_mm512_mask_shuffle_epi32(qe, __mmask16(0xAAAA), qo, _MM_PERM_CDAB), vzp);
}

// packs_epi32 then packs_epi16 (or packus) of 4 vectors leave, in 128-bit lane L, dword k = vector
// k's int32 lanes 4L..4L+3 as bytes; this dword permutation puts vector k's 16 bytes in lane k.
inline __m512i NarrowIndex() { return _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15); }
template <bool U8>
inline __m512i Narrow4(__m512i y0, __m512i y1, __m512i y2, __m512i y3, __m512i idx, __m512i lo8, __m512i hi8) {
  const __m512i a = _mm512_packs_epi32(y0, y1), b = _mm512_packs_epi32(y2, y3);
  __m512i p = _mm512_permutexvar_epi32(idx, U8 ? _mm512_packus_epi16(a, b) : _mm512_packs_epi16(a, b));
  return U8 ? _mm512_min_epu8(_mm512_max_epu8(p, lo8), hi8) : _mm512_min_epi8(_mm512_max_epi8(p, lo8), hi8);
}

// The fused panel: bias in the accumulators, 4 vectors narrowed and clamped at a time (NV = 2: two
// rows of 32 columns; NV = 1: four rows of 16), stored with the panel's column mask.
template <int NV, bool LEFT, bool U8>
void FusedPanelN(const uint8_t* a, int64_t lda, int rows, const int8_t* panel, int kq, int n0, int ncols,
                 const Requant8& rq, uint8_t* out, int64_t ldc) {
  const __m512i vzp = _mm512_set1_epi32(rq.zp);
  const int32_t tlo = U8 ? 0 : -128, thi = U8 ? 255 : 127;  // [lo, hi] as the output type's bytes
  const __m512i lo8 = _mm512_set1_epi8(char(std::min(std::max(rq.lo, tlo), thi)));
  const __m512i hi8 = _mm512_set1_epi8(char(std::min(std::max(rq.hi, tlo), thi)));
  const __m512i idx = NarrowIndex();
  const Rq16 q0 = LoadRq(rq, n0);
  const Rq16 q1 = NV > 1 ? LoadRq(rq, n0 + 16) : q0;
  const __mmask32 mk = ncols >= 32 ? ~__mmask32(0) : (__mmask32(1) << ncols) - 1;
  for (int r0 = 0; r0 < rows; r0 += kMr8) {
    const int rr = std::min(kMr8, rows - r0);
    __m512i acc[kMr8][2];
    if (rr == 1) GemvCore<NV>(a + r0 * lda, panel, kq, acc, q0.bias, q1.bias);
    else VnniCore<NV>(a + r0 * lda, lda, rr, panel, kq, acc, q0.bias, q1.bias);
    uint8_t* o = out + r0 * ldc + n0;
    if (NV == 2) {
      for (int r = 0; r < rr; r += 2) {
        const __m512i p = Narrow4<U8>(Rescale16<LEFT>(acc[r][0], q0, vzp), Rescale16<LEFT>(acc[r][1], q1, vzp),
                                      Rescale16<LEFT>(acc[r + 1][0], q0, vzp), Rescale16<LEFT>(acc[r + 1][1], q1, vzp),
                                      idx, lo8, hi8);
        _mm256_mask_storeu_epi8(o + r * ldc, mk, _mm512_castsi512_si256(p));
        if (r + 1 < rr) _mm256_mask_storeu_epi8(o + (r + 1) * ldc, mk, _mm512_extracti64x4_epi64(p, 1));
      }
    } else {
      const __mmask16 m16 = __mmask16(mk);
      for (int r = 0; r < rr; r += 4) {
        const __m512i p = Narrow4<U8>(Rescale16<LEFT>(acc[r][0], q0, vzp), Rescale16<LEFT>(acc[r + 1][0], q0, vzp),
                                      Rescale16<LEFT>(acc[r + 2][0], q0, vzp), Rescale16<LEFT>(acc[r + 3][0], q0, vzp),
                                      idx, lo8, hi8);
        _mm_mask_storeu_epi8(o + r * ldc, m16, _mm512_castsi512_si128(p));
        if (r + 1 < rr) _mm_mask_storeu_epi8(o + (r + 1) * ldc, m16, _mm512_extracti32x4_epi32(p, 1));
        if (r + 2 < rr) _mm_mask_storeu_epi8(o + (r + 2) * ldc, m16, _mm512_extracti32x4_epi32(p, 2));
        if (r + 3 < rr) _mm_mask_storeu_epi8(o + (r + 3) * ldc, m16, _mm512_extracti32x4_epi32(p, 3));
      }
    }
  }
}

template <int NV>
void RawTile(const uint8_t* a, int64_t lda, int rows, const int8_t* panel, int kq, const int32_t* colsum,
             const int32_t* corr, int32_t* C) {
  __m512i acc[kMr8][2];
  VnniCore<NV>(a, lda, rows, panel, kq, acc);
  for (int v = 0; v < NV; ++v) {
    const __m512i cs = _mm512_loadu_si512(colsum + 16 * v);
    for (int r = 0; r < rows; ++r)
      _mm512_storeu_si512(C + r * kNr8 + 16 * v,
                          _mm512_add_epi32(acc[r][v], _mm512_mullo_epi32(cs, _mm512_set1_epi32(corr[r]))));
  }
}

void XorRowAvx512(const int8_t* src, int n, int np, uint8_t* dst) {
  const __m512i flip = _mm512_set1_epi8(char(0x80));
  int i = 0;
  for (; i + 64 <= n; i += 64)
    _mm512_storeu_si512(dst + i, _mm512_xor_si512(_mm512_loadu_si512(src + i), flip));
  if (i < n) {
    const __mmask64 mk = (~uint64_t(0)) >> (64 - (n - i));
    _mm512_mask_storeu_epi8(dst + i, mk, _mm512_xor_si512(_mm512_maskz_loadu_epi8(mk, src + i), flip));
  }
  for (int k = n; k < np; ++k) dst[k] = 0x80;
}

void Im2colRunAvx512(const int8_t* src, int64_t px_step, int npx, int64_t row_step, int kh, int row_bytes,
                     uint8_t* dst, int64_t lda) {
  const __m512i flip = _mm512_set1_epi8(char(0x80));
  const int tail = row_bytes % 64;
  const int full = row_bytes - tail;
  const __mmask64 mk = tail ? (~uint64_t(0)) >> (64 - tail) : 0;
  for (int p = 0; p < npx; ++p) {
    const int8_t* s0 = src + p * px_step;
    uint8_t* d = dst + p * lda;
    for (int ky = 0; ky < kh; ++ky, s0 += row_step, d += row_bytes) {
      for (int j = 0; j < full; j += 64)
        _mm512_storeu_si512(d + j, _mm512_xor_si512(_mm512_loadu_si512(s0 + j), flip));
      // the tail read masked (never past the input), written whole: the next row's or window's
      // bytes are written after it, the block's slack takes the last one
      if (tail) _mm512_storeu_si512(d + full, _mm512_xor_si512(_mm512_maskz_loadu_epi8(mk, s0 + full), flip));
    }
  }
}

// 4 taps' bytes x0..x3 (64 channels each) -> 4 zmm of (x_t0..x_t3) ^ 0x80 per channel, unpack order.
inline void Interleave4(__m512i x0, __m512i x1, __m512i x2, __m512i x3, __m512i (&q)[4]) {
  const __m512i flip = _mm512_set1_epi8(char(0x80));
  x0 = _mm512_xor_si512(x0, flip);
  x1 = _mm512_xor_si512(x1, flip);
  x2 = _mm512_xor_si512(x2, flip);
  x3 = _mm512_xor_si512(x3, flip);
  const __m512i l01 = _mm512_unpacklo_epi8(x0, x1), h01 = _mm512_unpackhi_epi8(x0, x1);
  const __m512i l23 = _mm512_unpacklo_epi8(x2, x3), h23 = _mm512_unpackhi_epi8(x2, x3);
  q[0] = _mm512_unpacklo_epi16(l01, l23);
  q[1] = _mm512_unpackhi_epi16(l01, l23);
  q[2] = _mm512_unpacklo_epi16(h01, h23);
  q[3] = _mm512_unpackhi_epi16(h01, h23);
}
// 32 channels of pixel a in the low half, 32 of pixel b in the high half (C == 32 pair mode).
inline __m512i LoadPair(const int8_t* a, const int8_t* b) {
  return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a))),
                            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b)), 1);
}

void DwVnni8Impl(const int8_t* const* ptrs, int npx, const DwPacked8& W, const Requant8& rq, int8_t* out) {
  const int C = W.C, G = W.groups, T4 = 4 * G;
  const __m512i vzp = _mm512_set1_epi32(rq.zp), vlo = _mm512_set1_epi32(rq.lo), vhi = _mm512_set1_epi32(rq.hi);
  // C == 32: two pixels share a 64-lane block (weights and output stage packed twice), and their
  // outputs are adjacent, so one 64-byte store writes both.
  const bool pair = C == 32;
  const int units = pair ? (npx + 1) / 2 : npx;
  alignas(64) int32_t accbuf[8][64];
  for (int cb = 0; cb < W.cblocks; ++cb) {
    const int c0 = cb * 64;
    const int nc = std::min(64, C - c0);
    const __mmask64 mk = nc == 64 ? ~__mmask64(0) : (__mmask64(1) << nc) - 1;
    const int8_t* wb = W.w.data() + int64_t(cb) * G * 256;
    for (int u = 0; u < units; ++u) {
      const int p = pair ? 2 * u : u;
      const bool two = pair && p + 1 < npx;
      const int8_t* const* tp = ptrs + p * T4;
      const int8_t* const* tq = ptrs + (two ? p + 1 : p) * T4;
      __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
      for (int g = 0; g < G; ++g) {
        __m512i q[4];
        const int t = 4 * g;
        if (two)
          Interleave4(LoadPair(tp[t], tq[t]), LoadPair(tp[t + 1], tq[t + 1]), LoadPair(tp[t + 2], tq[t + 2]),
                      LoadPair(tp[t + 3], tq[t + 3]), q);
        else
          Interleave4(_mm512_maskz_loadu_epi8(mk, tp[t] + c0), _mm512_maskz_loadu_epi8(mk, tp[t + 1] + c0),
                      _mm512_maskz_loadu_epi8(mk, tp[t + 2] + c0), _mm512_maskz_loadu_epi8(mk, tp[t + 3] + c0), q);
        const int8_t* wg = wb + g * 256;
        a0 = _mm512_dpbusd_epi32(a0, q[0], _mm512_loadu_si512(wg));
        a1 = _mm512_dpbusd_epi32(a1, q[1], _mm512_loadu_si512(wg + 64));
        a2 = _mm512_dpbusd_epi32(a2, q[2], _mm512_loadu_si512(wg + 128));
        a3 = _mm512_dpbusd_epi32(a3, q[3], _mm512_loadu_si512(wg + 192));
      }
      _mm512_store_si512(accbuf[u], a0);
      _mm512_store_si512(accbuf[u] + 16, a1);
      _mm512_store_si512(accbuf[u] + 32, a2);
      _mm512_store_si512(accbuf[u] + 48, a3);
    }
    for (int k = 0; k < 4; ++k) {
      const Rq16 q = LoadRq(rq, c0 + 16 * k);
      for (int u = 0; u < units; ++u)
        _mm512_store_si512(accbuf[u] + 16 * k, Requant16(_mm512_load_si512(accbuf[u] + 16 * k), q, vzp, vlo, vhi));
    }
    for (int u = 0; u < units; ++u) {
      const int p = pair ? 2 * u : u;
      const __mmask64 sm = pair && p + 1 < npx ? ~__mmask64(0) : mk;
      const __m512i s01 = _mm512_packs_epi32(_mm512_load_si512(accbuf[u]), _mm512_load_si512(accbuf[u] + 16));
      const __m512i s23 = _mm512_packs_epi32(_mm512_load_si512(accbuf[u] + 32), _mm512_load_si512(accbuf[u] + 48));
      _mm512_mask_storeu_epi8(out + int64_t(p) * C + c0, sm, _mm512_packs_epi16(s01, s23));
    }
  }
}

}  // namespace
TFG_TARGET_END
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif

#if TFG_X86 && TFG_AMX
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
TFG_TARGET_AMX_BEGIN
namespace {

// Palette 1: tiles 0..3 the 32 x 32 int32 block (2 x 2 of 16 x 16), 4..5 two A tiles (16 rows of
// 64 bytes), 6..7 two B tiles (16 K-quads x 16 columns x 4 bytes). A constant in memory: ldtilecfg
// reads all 64 bytes.
struct alignas(64) TileConfig {
  uint8_t palette, start_row, reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
};
const TileConfig kAmxConfig = {1, 0, {}, {64, 64, 64, 64, 64, 64, 64, 64}, {16, 16, 16, 16, 16, 16, 16, 16}};

// C (32 rows x 16 * NB int32, row stride 32) = A rows [0, 32) (stride lda) x the panel's columns,
// kc chunks of 64 bytes of K. The panel's K-quad rows are 64 * NB bytes apart; the second 16
// columns start 64 bytes in.
template <int NB, bool S8 = false>
inline void AmxBlock(const void* av, int64_t lda, const int8_t* panel, int kc, int32_t* C) {
  const uint8_t* a = static_cast<const uint8_t*>(av);
  const int64_t bs = 64 * NB;
  _tile_zero(0);
  _tile_zero(2);
  if (NB == 2) {
    _tile_zero(1);
    _tile_zero(3);
  }
  for (int k = 0; k < kc; ++k) {
    const int8_t* b = panel + int64_t(k) * 16 * bs;
    _tile_loadd(4, a + 64 * k, lda);
    _tile_loadd(6, b, bs);
    _tile_loadd(5, a + 16 * lda + 64 * k, lda);
    if (S8) {
      _tile_dpbssd(0, 4, 6);
      _tile_dpbssd(2, 5, 6);
    } else {
      _tile_dpbusd(0, 4, 6);
      _tile_dpbusd(2, 5, 6);
    }
    if (NB == 2) {
      _tile_loadd(7, b + 64, bs);
      if (S8) {
        _tile_dpbssd(1, 4, 7);
        _tile_dpbssd(3, 5, 7);
      } else {
        _tile_dpbusd(1, 4, 7);
        _tile_dpbusd(3, 5, 7);
      }
    }
  }
  _tile_stored(0, C, 128);
  _tile_stored(2, C + 16 * 32, 128);
  if (NB == 2) {
    _tile_stored(1, C + 16, 128);
    _tile_stored(3, C + 16 * 32 + 16, 128);
  }
}

// S8: A is int8 read in place (tdpbssd, rq.bias_s8), rows copied into a padded buffer where a
// block's tile reads would pass `avail` bytes; else A is the x ^ 0x80 copy (tdpbusd, rq.bias).
template <bool S8>
void Amx8FusedImpl(const uint8_t* a, int64_t lda, int rows, int64_t avail, const PackedB8& B, int p0, int p1,
                   const Requant8& rq, uint8_t* out, int64_t ldc, bool u8) {
  _tile_loadconfig(&kAmxConfig);
  alignas(64) int32_t C[kMrAmx * 32];
  const int kc = B.Kq / 16;
  const int64_t kbytes = int64_t(B.Kq) * 4;
  const __m512i vzp = _mm512_set1_epi32(rq.zp), vlo = _mm512_set1_epi32(rq.lo), vhi = _mm512_set1_epi32(rq.hi);
  thread_local std::vector<uint8_t> tail;
  for (int r0 = 0; r0 < rows; r0 += kMrAmx) {
    const int rr = std::min(kMrAmx, rows - r0);
    const uint8_t* ab = a + r0 * lda;
    int64_t ld = lda;
    if (S8 && int64_t(r0 + kMrAmx - 1) * lda + kbytes > avail) {
      // the tensor's last rows: copy them (zeros past K and past the rows) so no read leaves it
      tail.assign(size_t(kMrAmx * kbytes), 0);
      const int64_t kk = std::min<int64_t>(B.K, lda);
      for (int r = 0; r < rr; ++r) std::memcpy(tail.data() + r * kbytes, ab + r * lda, size_t(kk));
      ab = tail.data();
      ld = kbytes;
    }
    for (int p = p0; p < p1; ++p) {
      const int n0 = p * kNr8, w = B.width[p], ncols = std::min(w, B.N - n0);
      const int8_t* panel = B.data.data() + B.offset[p];
      if (w == kNr8) AmxBlock<2, S8>(ab, ld, panel, kc, C);
      else AmxBlock<1, S8>(ab, ld, panel, kc, C);
      for (int v = 0; v < w / 16; ++v) {
        const int nc = std::min(16, ncols - 16 * v);
        if (nc <= 0) break;
        const __mmask16 mk = __mmask16((1u << nc) - 1);
        Rq16 q = LoadRq(rq, n0 + 16 * v);
        if (S8) q.bias = _mm512_loadu_si512(rq.bias_s8.data() + n0 + 16 * v);
        uint8_t* o = out + r0 * ldc + n0 + 16 * v;
        for (int r = 0; r < rr; ++r) {
          const __m512i y = Requant16(_mm512_load_si512(C + r * 32 + 16 * v), q, vzp, vlo, vhi);
          const __m128i b8 = u8 ? _mm512_cvtusepi32_epi8(y) : _mm512_cvtsepi32_epi8(y);
          _mm_mask_storeu_epi8(o + r * ldc, mk, b8);
        }
      }
    }
  }
  _tile_release();
}

}  // namespace
TFG_TARGET_END
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif

void Amx8Fused(const uint8_t* a, int64_t lda, int rows, const PackedB8& B, int p0, int p1, const Requant8& rq,
               void* out, int64_t ldc, bool u8) {
#if TFG_X86 && TFG_AMX
  Amx8FusedImpl<false>(a, lda, rows, 0, B, p0, p1, rq, static_cast<uint8_t*>(out), ldc, u8);
#else
  Vnni8Fused(a, lda, rows, B, p0, p1, rq, out, ldc, u8);
#endif
}

void Amx8FusedS8(const int8_t* a, int64_t lda, int rows, int64_t avail, const PackedB8& B, int p0, int p1,
                 const Requant8& rq, void* out, int64_t ldc) {
#if TFG_X86 && TFG_AMX
  Amx8FusedImpl<true>(reinterpret_cast<const uint8_t*>(a), lda, rows, avail, B, p0, p1, rq,
                      static_cast<uint8_t*>(out), ldc, false);
#else
  (void)a, (void)lda, (void)rows, (void)avail, (void)B, (void)p0, (void)p1, (void)rq, (void)out, (void)ldc;
#endif
}

void Vnni8Fused(const uint8_t* a, int64_t lda, int rows, const PackedB8& B, int p0, int p1, const Requant8& rq,
                void* out, int64_t ldc, bool u8) {
#if TFG_X86
  // Row blocks of up to 64 rows against each panel: the panel stays in L1 while its rows pass.
  for (int rb = 0; rb < rows; rb += 64) {
    const int nr = std::min(64, rows - rb);
    for (int p = p0; p < p1; ++p) {
      const int n0 = p * kNr8, ncols = std::min(B.width[p], B.N - n0);
      const int8_t* panel = B.data.data() + B.offset[p];
      uint8_t* o = static_cast<uint8_t*>(out) + rb * ldc;
      const uint8_t* ab = a + rb * lda;
      const int code = (B.width[p] == kNr8 ? 4 : 0) + (rq.any_left ? 2 : 0) + (u8 ? 1 : 0);
      switch (code) {
        case 0: FusedPanelN<1, false, false>(ab, lda, nr, panel, B.Kq, n0, ncols, rq, o, ldc); break;
        case 1: FusedPanelN<1, false, true>(ab, lda, nr, panel, B.Kq, n0, ncols, rq, o, ldc); break;
        case 2: FusedPanelN<1, true, false>(ab, lda, nr, panel, B.Kq, n0, ncols, rq, o, ldc); break;
        case 3: FusedPanelN<1, true, true>(ab, lda, nr, panel, B.Kq, n0, ncols, rq, o, ldc); break;
        case 4: FusedPanelN<2, false, false>(ab, lda, nr, panel, B.Kq, n0, ncols, rq, o, ldc); break;
        case 5: FusedPanelN<2, false, true>(ab, lda, nr, panel, B.Kq, n0, ncols, rq, o, ldc); break;
        case 6: FusedPanelN<2, true, false>(ab, lda, nr, panel, B.Kq, n0, ncols, rq, o, ldc); break;
        default: FusedPanelN<2, true, true>(ab, lda, nr, panel, B.Kq, n0, ncols, rq, o, ldc); break;
      }
    }
  }
#else
  (void)a, (void)lda, (void)rows, (void)B, (void)p0, (void)p1, (void)rq, (void)out, (void)ldc, (void)u8;
#endif
}

void Vnni8Tile(const uint8_t* a, int64_t lda, int rows, const PackedB8& B, int p, const int32_t* corr, int32_t* C) {
#if TFG_X86
  const int8_t* panel = B.data.data() + B.offset[p];
  const int32_t* cs = B.colsum.data() + p * kNr8;
  if (B.width[p] == kNr8) RawTile<2>(a, lda, rows, panel, B.Kq, cs, corr, C);
  else RawTile<1>(a, lda, rows, panel, B.Kq, cs, corr, C);
#else
  (void)a, (void)lda, (void)rows, (void)B, (void)p, (void)corr, (void)C;
#endif
}

void PackDw8(const int8_t* f, int taps, int C, DwPacked8* out) {
  out->C = C;
  out->taps = taps;
  out->groups = (taps + 3) / 4;
  out->cblocks = (C + 63) / 64;
  out->gen = NewPackGeneration();
  out->w.assign(size_t(out->cblocks) * out->groups * 256, 0);
  out->wsum.assign(size_t(C), 0);
  for (int cb = 0; cb < out->cblocks; ++cb)
    for (int g = 0; g < out->groups; ++g)
      for (int k = 0; k < 4; ++k)
        for (int byte = 0; byte < 64; ++byte) {
          const int j = byte / 4, t = 4 * g + byte % 4;
          int c = cb * 64 + 16 * (j / 4) + 4 * k + j % 4;
          if (C == 32) c %= 32;  // pair mode (DwVnni8Impl): the block holds two pixels' 32 channels
          if (t < taps && c < C) out->w[((size_t(cb) * out->groups + g) * 4 + k) * 64 + byte] = f[int64_t(t) * C + c];
        }
  for (int t = 0; t < taps; ++t)
    for (int c = 0; c < C; ++c) out->wsum[c] = int32_t(uint32_t(out->wsum[c]) + uint32_t(int32_t(f[int64_t(t) * C + c])));
}

void BuildRequantDw8(const OutputStage& os, const DwPacked8& W, int32_t a_off, Requant8* rq) {
  const int Np = W.cblocks * 64;
  rq->Reset(Np);
  const uint32_t corr = uint32_t(a_off - 128);
  for (int i = 0; i < Np; ++i) {
    const int cb = i / 64, k = (i % 64) / 16, j = i % 16;
    int c = cb * 64 + 16 * (j / 4) + 4 * k + j % 4;
    if (W.C == 32) c %= 32;  // pair mode
    if (c >= W.C) continue;
    rq->SetLane(i, int32_t(uint32_t(os.bias32[c]) + corr * uint32_t(W.wsum[c])), os.mult[c], os.shift[c]);
  }
  rq->Finish(os.zp, os.lo, os.hi);
}

void DwVnni8(const int8_t* const* ptrs, int npx, const DwPacked8& W, const Requant8& rq, int8_t* out) {
#if TFG_X86
  DwVnni8Impl(ptrs, npx, W, rq, out);
#else
  (void)ptrs, (void)npx, (void)W, (void)rq, (void)out;
#endif
}

void Im2colRun8(const int8_t* src, int64_t px_step, int npx, int64_t row_step, int kh, int row_bytes, uint8_t* dst,
                int64_t lda) {
#if TFG_X86
  if (HaveVnni()) return Im2colRunAvx512(src, px_step, npx, row_step, kh, row_bytes, dst, lda);
#endif
  for (int p = 0; p < npx; ++p)
    for (int ky = 0; ky < kh; ++ky)
      for (int j = 0; j < row_bytes; ++j)
        dst[p * lda + ky * row_bytes + j] = uint8_t(src[p * px_step + ky * row_step + j]) ^ 0x80;
}

void XorRow(const int8_t* src, int n, int np, uint8_t* dst) {
#if TFG_X86
  if (HaveVnni()) return XorRowAvx512(src, n, np, dst);
#endif
  for (int k = 0; k < n; ++k) dst[k] = uint8_t(src[k]) ^ 0x80;
  for (int k = n; k < np; ++k) dst[k] = 0x80;
}

}  // namespace qgemm
}  // namespace tflite_gpu
