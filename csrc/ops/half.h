// IEEE 754 binary16 (float16) <-> float, the one implementation of the library: CPU kernels
// (CAST, DEQUANTIZE, SCATTER_ND's fp16 add, ...), the GPU delegate's fp16 uploads and tests.
// Header-only and self-contained (the standalone cl_selftest uses it too); plain arithmetic on
// the bits, without branches, so loops over it vectorise.
#pragma once
#include <cstdint>
#include <cstring>

namespace tflite_gpu {
namespace half_detail {

template <typename To, typename From>
inline To Bits(From v) {
  static_assert(sizeof(To) == sizeof(From), "size mismatch");
  To r;
  std::memcpy(&r, &v, sizeof(r));
  return r;
}

}  // namespace half_detail

// IEEE half -> float, exact (subnormals, +-inf and NaN payloads included).
inline float HalfToFloat(uint16_t h) {
  using half_detail::Bits;
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t em = h & 0x7fffu;
  // Normal and subnormal halves: shift into float position and rescale by 2^112.
  float mag = Bits<float>(em << 13) * 0x1p112f;
  uint32_t bits = Bits<uint32_t>(mag);
  bits = em >= 0x7c00u ? ((em << 13) | 0x7f800000u) : bits;  // inf / nan
  return Bits<float>(bits | sign);
}

// float -> IEEE half, round to nearest even (subnormal halves included); overflow -> inf; NaN
// stays a quiet NaN keeping the top payload bits. Needs the default FP rounding mode.
inline uint16_t FloatToHalf(float f) {
  using half_detail::Bits;
  const uint32_t x = Bits<uint32_t>(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t ax = x & 0x7fffffffu;
  // Normal halves: rebias the exponent (-112 << 23) and round the 13 dropped bits to even.
  const uint32_t normal = (ax + 0xC8000FFFu + ((ax >> 13) & 1u)) >> 13;
  // Subnormal halves (|f| < 2^-14): adding 0.5 lines the half's unit 2^-24 up with the last
  // mantissa bit, and the FPU rounds to even; 1024 units is the smallest normal, encoded alike.
  const uint32_t sub = Bits<uint32_t>(Bits<float>(ax) + 0.5f) - 0x3f000000u;
  uint32_t h = ax < 0x38800000u ? sub : normal;
  h = ax >= 0x477ff000u ? 0x7c00u : h;                             // >= 65520 rounds to inf
  h = ax > 0x7f800000u ? (0x7e00u | ((ax >> 13) & 0x3ffu)) : h;    // NaN (quiet)
  return uint16_t(h | sign);
}

}  // namespace tflite_gpu
