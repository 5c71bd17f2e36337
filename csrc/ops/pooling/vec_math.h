// Array versions of exp / logistic / tanh for the pooling (SOFTMAX) and LSTM kernels: SSE2
// four floats at a time (the x86-64 baseline), the elementwise family's scalar approximations
// (ew::ExpApprox / LogisticApprox / TanhApprox, ~2 ulp) for the tails and other CPUs. The vector
// code is the same arithmetic as the scalar one, so both give the same values.
// (Plain loops over the scalar functions do not vectorise: with -ftrapping-math GCC keeps the
// float compares of the clamps as branches.)
#pragma once
#include <cmath>
#include <cstdint>

#include "ops/elementwise/ew_common.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tflite_gpu {
namespace vmath {

#if defined(__SSE2__)
// exp of 4 floats, as ew::ExpApprox (NaN propagates, -104 -> 0, above 88.8 -> inf).
inline __m128 Exp4(__m128 x) {
  // max(lo, x) / min(hi, x): MAXPS/MINPS return the second operand when either is NaN.
  __m128 xc = _mm_max_ps(_mm_set1_ps(-104.0f), x);
  xc = _mm_min_ps(_mm_set1_ps(88.8f), xc);
  const __m128 magic = _mm_set1_ps(12582912.0f);
  __m128 t = _mm_add_ps(_mm_mul_ps(xc, _mm_set1_ps(1.44269504088896341f)), magic);
  __m128i n = _mm_sub_epi32(_mm_castps_si128(t), _mm_castps_si128(magic));
  __m128 fn = _mm_sub_ps(t, magic);
  __m128 r = _mm_sub_ps(xc, _mm_mul_ps(fn, _mm_set1_ps(0.693359375f)));
  r = _mm_sub_ps(r, _mm_mul_ps(fn, _mm_set1_ps(-2.12194440e-4f)));
  __m128 z = _mm_mul_ps(r, r);
  __m128 p = _mm_set1_ps(1.9875691500E-4f);
  p = _mm_add_ps(_mm_mul_ps(p, r), _mm_set1_ps(1.3981999507E-3f));
  p = _mm_add_ps(_mm_mul_ps(p, r), _mm_set1_ps(8.3334519073E-3f));
  p = _mm_add_ps(_mm_mul_ps(p, r), _mm_set1_ps(4.1665795894E-2f));
  p = _mm_add_ps(_mm_mul_ps(p, r), _mm_set1_ps(1.6666665459E-1f));
  p = _mm_add_ps(_mm_mul_ps(p, r), _mm_set1_ps(5.0000001201E-1f));
  p = _mm_add_ps(_mm_add_ps(_mm_mul_ps(p, z), r), _mm_set1_ps(1.0f));
  __m128i n1 = _mm_srai_epi32(n, 1);
  __m128i n2 = _mm_sub_epi32(n, n1);
  const __m128i bias = _mm_set1_epi32(127);
  __m128 s1 = _mm_castsi128_ps(_mm_slli_epi32(_mm_add_epi32(n1, bias), 23));
  __m128 s2 = _mm_castsi128_ps(_mm_slli_epi32(_mm_add_epi32(n2, bias), 23));
  return _mm_mul_ps(_mm_mul_ps(p, s1), s2);
}

inline __m128 Abs4(__m128 x) { return _mm_andnot_ps(_mm_set1_ps(-0.0f), x); }
inline __m128 Select4(__m128 mask, __m128 a, __m128 b) {  // mask ? a : b
  return _mm_or_ps(_mm_and_ps(mask, a), _mm_andnot_ps(mask, b));
}

// As ew::LogisticApprox.
inline __m128 Logistic4(__m128 x) {
  const __m128 e = Exp4(_mm_sub_ps(_mm_setzero_ps(), Abs4(x)));
  const __m128 r = _mm_div_ps(_mm_set1_ps(1.0f), _mm_add_ps(_mm_set1_ps(1.0f), e));
  return Select4(_mm_cmplt_ps(x, _mm_setzero_ps()), _mm_mul_ps(e, r), r);
}

// As ew::TanhApprox.
inline __m128 Tanh4(__m128 x) {
  const __m128 ax = Abs4(x);
  const __m128 z = _mm_mul_ps(x, x);
  __m128 s = _mm_set1_ps(-5.70498872745E-3f);
  s = _mm_add_ps(_mm_mul_ps(s, z), _mm_set1_ps(2.06390887954E-2f));
  s = _mm_sub_ps(_mm_mul_ps(s, z), _mm_set1_ps(5.37397155531E-2f));
  s = _mm_add_ps(_mm_mul_ps(s, z), _mm_set1_ps(1.33314422036E-1f));
  s = _mm_sub_ps(_mm_mul_ps(s, z), _mm_set1_ps(3.33332819422E-1f));
  s = _mm_add_ps(_mm_mul_ps(_mm_mul_ps(s, z), x), x);
  const __m128 e = Exp4(_mm_mul_ps(_mm_set1_ps(2.0f), ax));
  __m128 big = _mm_sub_ps(_mm_set1_ps(1.0f), _mm_div_ps(_mm_set1_ps(2.0f), _mm_add_ps(e, _mm_set1_ps(1.0f))));
  const __m128 sign = _mm_set1_ps(-0.0f);
  big = _mm_or_ps(_mm_andnot_ps(sign, big), _mm_and_ps(sign, x));  // copysign(big, x)
  return Select4(_mm_cmplt_ps(ax, _mm_set1_ps(0.625f)), s, big);
}
#endif

// y[i] = exp((x[i] - sub) * scale)
inline void ExpShifted(const float* x, float* y, int n, float sub, float scale) {
  int i = 0;
#if defined(__SSE2__)
  const __m128 vs = _mm_set1_ps(sub), vk = _mm_set1_ps(scale);
  for (; i + 4 <= n; i += 4)
    _mm_storeu_ps(y + i, Exp4(_mm_mul_ps(_mm_sub_ps(_mm_loadu_ps(x + i), vs), vk)));
#endif
  for (; i < n; ++i) y[i] = ew::ExpApprox((x[i] - sub) * scale);
}

// In place.
inline void Logistic(float* v, int n) {
  int i = 0;
#if defined(__SSE2__)
  for (; i + 4 <= n; i += 4) _mm_storeu_ps(v + i, Logistic4(_mm_loadu_ps(v + i)));
#endif
  for (; i < n; ++i) v[i] = ew::LogisticApprox(v[i]);
}

inline void Tanh(const float* x, float* y, int n) {
  int i = 0;
#if defined(__SSE2__)
  for (; i + 4 <= n; i += 4) _mm_storeu_ps(y + i, Tanh4(_mm_loadu_ps(x + i)));
#endif
  for (; i < n; ++i) y[i] = ew::TanhApprox(x[i]);
}

}  // namespace vmath
}  // namespace tflite_gpu
