// Run-time selected SIMD for the CPU kernels: the one instruction-set dispatcher (ActiveIsa) and
// the conv family's vector traits. The elementwise family uses ActiveIsa and the target regions
// below through ew_common.h (UseAvx2).
//
// The library is compiled for the x86-64 baseline (SSE2). Wider paths live in functions compiled
// with a target attribute (TFG_TARGET_AVX2 / TFG_TARGET_AVX512 regions below) and are only called
// after a cpu feature check, so one binary runs on any x86-64. Non-x86 builds use the scalar
// traits only.
//
// Each traits struct V offers: T (vector type), W (floats per vector), Load/Store (unaligned),
// Set1, Zero, Fma(a, b, c) = a*b + c, Add, Mul, Min, Max. Max(lo, x) / Min(hi, x) keep NaN in x.
// Prelu(x, a) = x >= 0 ? x : x * a (PRELU's float kernel, lane for lane).
#pragma once
#include <cstdint>
#include <cstring>

#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__)
#define TFG_X86 1
#include <immintrin.h>
#else
#define TFG_X86 0
#endif

// TFG_UNROLL(n): unroll the next loop whole (clang) / up to n times (GCC), so that accumulators
// indexed by the loop variable stay in registers.
#define TFG_PRAGMA_(x) _Pragma(#x)
#if defined(__clang__)
#define TFG_UNROLL(n) TFG_PRAGMA_(unroll)
#elif defined(__GNUC__)
#define TFG_UNROLL(n) TFG_PRAGMA_(GCC unroll n)
#else
#define TFG_UNROLL(n)
#endif

#if TFG_X86 && defined(__clang__)
#define TFG_TARGET_AVX2_BEGIN _Pragma("clang attribute push(__attribute__((target(\"avx2,fma\"))), apply_to = function)")
#define TFG_TARGET_AVX512_BEGIN _Pragma("clang attribute push(__attribute__((target(\"avx512f,avx2,fma\"))), apply_to = function)")
#define TFG_TARGET_AVX512VNNI_BEGIN \
  _Pragma("clang attribute push(__attribute__((target(\"avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma\"))), apply_to = function)")
#define TFG_TARGET_END _Pragma("clang attribute pop")
#elif TFG_X86 && defined(__GNUC__)
#define TFG_TARGET_AVX2_BEGIN _Pragma("GCC push_options") _Pragma("GCC target(\"avx2,fma\")")
#define TFG_TARGET_AVX512_BEGIN _Pragma("GCC push_options") _Pragma("GCC target(\"avx512f,avx2,fma\")")
#define TFG_TARGET_AVX512VNNI_BEGIN \
  _Pragma("GCC push_options") _Pragma("GCC target(\"avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma\")")
#define TFG_TARGET_END _Pragma("GCC pop_options")
#endif

// AMX-INT8 regions (qgemm.cc): 64-bit x86 with GCC >= 11 or Clang >= 12 (their tile intrinsics).
#if TFG_X86 && (defined(__x86_64__) || defined(_M_X64)) && \
    ((defined(__clang__) && __clang_major__ >= 12) || (!defined(__clang__) && defined(__GNUC__) && __GNUC__ >= 11))
#define TFG_AMX 1
#if defined(__clang__)
#define TFG_TARGET_AMX_BEGIN \
  _Pragma("clang attribute push(__attribute__((target(\"amx-tile,amx-int8,avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma\"))), apply_to = function)")
#else
#define TFG_TARGET_AMX_BEGIN \
  _Pragma("GCC push_options") _Pragma("GCC target(\"amx-tile,amx-int8,avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma\")")
#endif
#else
#define TFG_AMX 0
#endif

namespace tflite_gpu {
namespace simd {

enum class Isa : int { kScalar = 0, kSse2 = 1, kAvx2 = 2, kAvx512 = 3 };
const char* IsaName(Isa isa);
// The widest ISA this CPU (and OS) supports, lowered by the environment variable
// TFLITE_GPU_CPU_ISA=scalar|sse2|avx2|avx512 (for testing every path on one machine). Chosen once.
Isa ActiveIsa();
// The 8-bit integer kernels' AVX-512 level: ActiveIsa() is kAvx512 and the CPU also has AVX512BW,
// AVX512VL, AVX512DQ and AVX512_VNNI (vpdpbusd / vpdpwssd). TFLITE_GPU_CPU_ISA=avx512 turns it off
// (AVX-512 without VNNI: the int8 kernels take their AVX2 path); =avx512vnni (or unset) leaves it on.
bool HaveAvx512Vnni();
// AMX-INT8 tiles (tdpbusd) for the 8-bit GEMM: HaveAvx512Vnni(), the CPU has AMX-TILE and AMX-INT8,
// and the OS granted this process the tile data state (Linux arch_prctl ARCH_REQ_XCOMP_PERM).
// TFLITE_GPU_CPU_ISA=avx512vnni (or any lower level) turns it off; =amx (or unset) leaves it on.
bool HaveAmxInt8();

struct Scalar {
  using T = float;
  static constexpr int W = 1;
  static inline T Load(const float* p) { return *p; }
  static inline void Store(float* p, T v) { *p = v; }
  static inline T Set1(float v) { return v; }
  static inline T Zero() { return 0.f; }
  static inline T Fma(T a, T b, T c) { return a * b + c; }
  static inline T Add(T a, T b) { return a + b; }
  static inline T Mul(T a, T b) { return a * b; }
  static inline T Max(T lo, T x) { return x < lo ? lo : x; }
  static inline T Min(T hi, T x) { return hi < x ? hi : x; }
  static inline T Prelu(T x, T a) { return x >= 0.f ? x : x * a; }
};

#if TFG_X86
struct Sse2 {
  using T = __m128;
  static constexpr int W = 4;
  static inline T Load(const float* p) { return _mm_loadu_ps(p); }
  static inline void Store(float* p, T v) { _mm_storeu_ps(p, v); }
  static inline T Set1(float v) { return _mm_set1_ps(v); }
  static inline T Zero() { return _mm_setzero_ps(); }
  static inline T Fma(T a, T b, T c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }
  static inline T Add(T a, T b) { return _mm_add_ps(a, b); }
  static inline T Mul(T a, T b) { return _mm_mul_ps(a, b); }
  static inline T Max(T lo, T x) { return _mm_max_ps(lo, x); }
  static inline T Min(T hi, T x) { return _mm_min_ps(hi, x); }
  static inline T Prelu(T x, T a) {
    const T ge = _mm_cmpge_ps(x, _mm_setzero_ps());  // false for NaN: NaN * a
    return _mm_or_ps(_mm_and_ps(ge, x), _mm_andnot_ps(ge, _mm_mul_ps(x, a)));
  }
};
#endif

}  // namespace simd
}  // namespace tflite_gpu

#if TFG_X86
TFG_TARGET_AVX2_BEGIN
namespace tflite_gpu {
namespace simd {
struct Avx2 {
  using T = __m256;
  static constexpr int W = 8;
  static inline T Load(const float* p) { return _mm256_loadu_ps(p); }
  static inline void Store(float* p, T v) { _mm256_storeu_ps(p, v); }
  static inline T Set1(float v) { return _mm256_set1_ps(v); }
  static inline T Zero() { return _mm256_setzero_ps(); }
  static inline T Fma(T a, T b, T c) { return _mm256_fmadd_ps(a, b, c); }
  static inline T Add(T a, T b) { return _mm256_add_ps(a, b); }
  static inline T Mul(T a, T b) { return _mm256_mul_ps(a, b); }
  static inline T Max(T lo, T x) { return _mm256_max_ps(lo, x); }
  static inline T Min(T hi, T x) { return _mm256_min_ps(hi, x); }
  static inline T Prelu(T x, T a) {
    return _mm256_blendv_ps(_mm256_mul_ps(x, a), x, _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GE_OQ));
  }
};
}  // namespace simd
}  // namespace tflite_gpu
TFG_TARGET_END

TFG_TARGET_AVX512_BEGIN
namespace tflite_gpu {
namespace simd {
struct Avx512 {
  using T = __m512;
  static constexpr int W = 16;
  static inline T Load(const float* p) { return _mm512_loadu_ps(p); }
  static inline void Store(float* p, T v) { _mm512_storeu_ps(p, v); }
  static inline T Set1(float v) { return _mm512_set1_ps(v); }
  static inline T Zero() { return _mm512_setzero_ps(); }
  static inline T Fma(T a, T b, T c) { return _mm512_fmadd_ps(a, b, c); }
  static inline T Add(T a, T b) { return _mm512_add_ps(a, b); }
  static inline T Mul(T a, T b) { return _mm512_mul_ps(a, b); }
  static inline T Max(T lo, T x) { return _mm512_mask_max_ps(x, __mmask16(0xFFFF), lo, x); }
  static inline T Min(T hi, T x) { return _mm512_mask_min_ps(x, __mmask16(0xFFFF), hi, x); }
  static inline T Prelu(T x, T a) {
    return _mm512_mask_mul_ps(x, _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_NGE_UQ), x, a);  // not >= 0 (NaN too): x * a
  }
};
}  // namespace simd
}  // namespace tflite_gpu
TFG_TARGET_END
#endif
