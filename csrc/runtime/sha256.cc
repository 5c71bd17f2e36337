// SHA-256: portable block function plus an x86-64 SHA-NI one selected at run time.
#include "runtime/sha256.h"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TFG_SHA_NI 1
#include <cpuid.h>
#include <immintrin.h>
#endif

#include "tflite_gpu/serialization.h"

namespace tflite_gpu {
namespace {

alignas(16) constexpr uint32_t kK[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

inline uint32_t Rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

void BlocksPortable(uint32_t h[8], const uint8_t* p, size_t nblocks) {
  uint32_t w[64];
  for (; nblocks; --nblocks, p += 64) {
    for (int i = 0; i < 16; ++i)
      w[i] = uint32_t(p[4 * i]) << 24 | uint32_t(p[4 * i + 1]) << 16 | uint32_t(p[4 * i + 2]) << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; ++i) {
      uint32_t s0 = Rotr(w[i - 15], 7) ^ Rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      uint32_t s1 = Rotr(w[i - 2], 17) ^ Rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int i = 0; i < 64; ++i) {
      uint32_t t1 = hh + (Rotr(e, 6) ^ Rotr(e, 11) ^ Rotr(e, 25)) + ((e & f) ^ (~e & g)) + kK[i] + w[i];
      uint32_t t2 = (Rotr(a, 2) ^ Rotr(a, 13) ^ Rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      hh = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
  }
}

#ifdef TFG_SHA_NI
bool CpuHasShaNi() {
  unsigned a, b, c, d;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  if (!(b & (1u << 29))) return false;  // SHA
  if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
  return (c & (1u << 19)) && (c & (1u << 9));  // SSE4.1, SSSE3
}

// The state lives in two registers as the instructions want it: ABEF and CDGH.
__attribute__((target("sha,sse4.1,ssse3"))) void BlocksShaNi(uint32_t h[8], const uint8_t* p, size_t nblocks) {
  const __m128i mask = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);  // big-endian words
  __m128i tmp = _mm_shuffle_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h)), 0xB1);      // B A D C
  __m128i st1 = _mm_shuffle_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + 4)), 0x1B);  // H G F E
  __m128i st0 = _mm_alignr_epi8(tmp, st1, 8);    // ABEF
  st1 = _mm_blend_epi16(st1, tmp, 0xF0);         // CDGH
  for (; nblocks; --nblocks, p += 64) {
    const __m128i save0 = st0, save1 = st1;
    __m128i w[4];
    for (int g = 0; g < 16; ++g) {
      __m128i x;
      if (g < 4) {
        x = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * g)), mask);
      } else {
        // W[t..t+3] from W[t-16..t-13] (w[g&3]), W[t-12..t-9], W[t-7..t-4] and W[t-4..t-1].
        __m128i m = _mm_sha256msg1_epu32(w[g & 3], w[(g - 3) & 3]);
        m = _mm_add_epi32(m, _mm_alignr_epi8(w[(g - 1) & 3], w[(g - 2) & 3], 4));
        x = _mm_sha256msg2_epu32(m, w[(g - 1) & 3]);
      }
      w[g & 3] = x;
      __m128i k = _mm_add_epi32(x, _mm_load_si128(reinterpret_cast<const __m128i*>(kK + 4 * g)));
      st1 = _mm_sha256rnds2_epu32(st1, st0, k);
      st0 = _mm_sha256rnds2_epu32(st0, st1, _mm_shuffle_epi32(k, 0x0E));
    }
    st0 = _mm_add_epi32(st0, save0);
    st1 = _mm_add_epi32(st1, save1);
  }
  tmp = _mm_shuffle_epi32(st0, 0x1B);   // F E B A
  st1 = _mm_shuffle_epi32(st1, 0xB1);   // D C H G
  st0 = _mm_blend_epi16(tmp, st1, 0xF0);  // D C B A -> A B C D in memory
  st1 = _mm_alignr_epi8(st1, tmp, 8);     // H G F E -> E F G H in memory
  _mm_storeu_si128(reinterpret_cast<__m128i*>(h), st0);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(h + 4), st1);
}
#endif

}  // namespace

bool Sha256::HardwareAvailable() {
#ifdef TFG_SHA_NI
  static const bool has = CpuHasShaNi();
  return has;
#else
  return false;
#endif
}

Sha256::Sha256(bool allow_hw) : hw_(allow_hw && HardwareAvailable()) {
  static const uint32_t kInit[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::memcpy(h_, kInit, sizeof(h_));
}

void Sha256::Blocks(const uint8_t* p, size_t nblocks) {
#ifdef TFG_SHA_NI
  if (hw_) return BlocksShaNi(h_, p, nblocks);
#endif
  BlocksPortable(h_, p, nblocks);
}

void Sha256::Update(const void* data, size_t size) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  total_ += size;
  if (buf_len_) {
    size_t take = std::min(size, 64 - buf_len_);
    std::memcpy(buf_ + buf_len_, p, take);
    buf_len_ += take;
    p += take;
    size -= take;
    if (buf_len_ < 64) return;
    Blocks(buf_, 1);
    buf_len_ = 0;
  }
  if (size >= 64) {
    Blocks(p, size / 64);
    p += size / 64 * 64;
    size %= 64;
  }
  if (size) {
    std::memcpy(buf_, p, size);
    buf_len_ = size;
  }
}

std::array<uint8_t, 32> Sha256::Final() {
  uint64_t bits = total_ * 8;
  uint8_t pad[72] = {0x80};
  size_t padlen = (buf_len_ < 56 ? 56 : 120) - buf_len_;
  for (int i = 0; i < 8; ++i) pad[padlen + i] = uint8_t(bits >> (56 - 8 * i));
  Update(pad, padlen + 8);
  std::array<uint8_t, 32> out;
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 4; ++j) out[4 * i + j] = uint8_t(h_[i] >> (24 - 8 * j));
  return out;
}

std::array<uint8_t, 32> Sha256::Hash(const void* data, size_t size, bool allow_hw) {
  Sha256 s(allow_hw);
  s.Update(data, size);
  return s.Final();
}

std::string Sha256::Hex(const std::array<uint8_t, 32>& d) {
  static const char* kHex = "0123456789abcdef";
  std::string s(64, '0');
  for (size_t i = 0; i < 32; ++i) {
    s[2 * i] = kHex[d[i] >> 4];
    s[2 * i + 1] = kHex[d[i] & 15];
  }
  return s;
}

std::string Sha256Hex(const void* data, size_t size, bool allow_hw) {
  return Sha256::Hex(Sha256::Hash(data, size, allow_hw));
}

bool Sha256UsesHardware() { return Sha256::HardwareAvailable(); }

}  // namespace tflite_gpu
