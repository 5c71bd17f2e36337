// THE home of quantization arithmetic (every quantized kernel includes this; add here rather than
// writing a second copy).
//
// TFLite computes `real = int32_acc * real_multiplier` with a fixed-point multiplier
// (QuantizeMultiplier: real_multiplier = qm * 2^(shift - 31), qm in [2^30, 2^31)) and rounds in one of
// several ways depending on which kernel runs. The variants here, by name:
//
//   MultiplyByQuantizedMultiplier            gemmlowp "double rounding", TFLite's default build
//       (TFLITE_SINGLE_ROUNDING undefined): x << left_shift, SaturatingRoundingDoublingHighMul
//       (round half up, i.e. toward +inf, saturating only INT32_MIN * INT32_MIN), then
//       RoundingDivideByPOT (round half away from zero). Used by TFLite's reference kernels and by
//       the scalar output stages of its optimized kernels (e.g. depthwise int8, elementwise).
//   MultiplyByQuantizedMultiplierHalfUp      the NEON form (vqrdmulh + vrshl): both steps round half
//       up. TFLite's NEON bodies run on x86 through NEON_2_SSE (e.g. QUANTIZE's requantization).
//   MultiplyByQuantizedMultiplierSingleRounding  ruy's multiplier (and TFLITE_SINGLE_ROUNDING):
//       (x * qm + 2^(30 - shift)) >> (31 - shift) in int64, one rounding, half up. The optimized
//       GEMM path (cpu_backend_gemm -> ruy) of CONV_2D / FULLY_CONNECTED / BATCH_MATMUL uses it.
//   MultiplyByQuantizedMultiplier64          the int64-accumulator overload (16x8 kernels with int64
//       bias): the multiplier reduced to 16 bits, (x * ((qm + 2^15) >> 16) + 2^(14 - shift)) >>
//       (15 - shift), truncated to int32 as TFLite's implicit conversion does.
//   MultiplyByQuantizedMultiplierAway64      one rounding of x * qm / 2^(31 - shift), ties away from
//       zero (int16 FULLY_CONNECTED with int64 bias, as measured against LiteRT's builtin kernel).
//
// Plus the shared helpers: the integer range of a type, saturating casts, TFLite's quantized
// activation range, and reading / validating a tensor's quantization parameters (per-tensor or
// per-channel) with errors that name the tensor.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "ops/op_registry.h"

namespace tflite_gpu {
namespace quant {

// ---------------------------------------------------------------- multipliers

// TFLite's QuantizeMultiplier: m = qm * 2^(shift - 31), qm a Q31 value in [2^30, 2^31) (0 for m == 0).
// Like TFLite, a multiplier below 2^-32 becomes 0. TFLite's default build does not clamp shift > 30
// (only its single-rounding build does); we clamp it always, since a left shift of 31 or more is
// undefined in every variant below. Such multipliers (>= 2^30) do not occur in a sane model.
inline void QuantizeMultiplier(double m, int32_t* qm, int* shift) {
  if (m == 0.0 || !std::isfinite(m)) {
    *qm = 0;
    *shift = 0;
    return;
  }
  int s = 0;
  const double q = std::frexp(m, &s);
  int64_t qf = int64_t(std::round(q * double(1LL << 31)));
  if (qf == (1LL << 31)) {
    qf /= 2;
    ++s;
  }
  if (s < -31) {
    s = 0;
    qf = 0;
  }
  if (s > 30) {
    s = 30;
    qf = (1LL << 31) - 1;
  }
  *qm = int32_t(qf);
  *shift = s;
}

// gemmlowp's SaturatingRoundingDoublingHighMul: round(a * b / 2^31), ties toward +inf.
inline int32_t SaturatingRoundingDoublingHighMul(int32_t a, int32_t b) {
  const bool overflow = a == b && a == std::numeric_limits<int32_t>::min();
  const int64_t ab = int64_t(a) * int64_t(b);
  const int32_t nudge = ab >= 0 ? (1 << 30) : (1 - (1 << 30));
  const int32_t r = int32_t((ab + nudge) / (1LL << 31));
  return overflow ? std::numeric_limits<int32_t>::max() : r;
}

// gemmlowp's RoundingDivideByPOT: round(x / 2^e), ties away from zero. 0 <= e <= 31.
inline int32_t RoundingDivideByPOT(int32_t x, int e) {
  const int32_t mask = int32_t((int64_t(1) << e) - 1);
  const int32_t remainder = x & mask;
  const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> e) + (remainder > threshold ? 1 : 0);
}

// Double rounding (TFLite default build, reference kernels).
inline int32_t MultiplyByQuantizedMultiplier(int32_t x, int32_t qm, int shift) {
  const int left = shift > 0 ? shift : 0;
  const int right = shift > 0 ? 0 : -shift;
  const int32_t xs = int32_t(uint32_t(x) << left);  // wraps like TFLite's x * (1 << left)
  return RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(xs, qm), right);
}

// ---------------------------------------------------------------- fixed-point reciprocal (DIV)

// Leading zeros of a uint32 (32 for 0), and TFLite's CountLeadingSignBits for int32 (31 for 0).
inline int CountLeadingZeros32(uint32_t x) { return x == 0 ? 32 : __builtin_clz(x); }
inline int CountLeadingSignBits32(int32_t x) {
  return x == 0 ? 31 : CountLeadingZeros32(uint32_t(x ^ (x >> 31))) - 1;
}

// gemmlowp's SaturatingRoundingMultiplyByPOT<e> for e >= 1: x * 2^e, saturated to int32.
inline int32_t SaturatingShiftLeft32(int32_t x, int e) {
  const int32_t threshold = int32_t((int64_t(1) << (31 - e)) - 1);
  if (x > threshold) return std::numeric_limits<int32_t>::max();
  if (x < -threshold) return std::numeric_limits<int32_t>::min();
  return int32_t(uint32_t(x) << e);
}

// gemmlowp's one_over_one_plus_x_for_x_in_0_1: 1 / (1 + a) for a in [0, 1) in Q0.31 (a's raw
// value), by three Newton-Raphson steps from 48/17 - 32/17 * d in Q2.29, d = (1 + a) / 2.
inline int32_t OneOverOnePlusX(int32_t a) {
  auto mul = [](int32_t x, int32_t y) { return SaturatingRoundingDoublingHighMul(x, y); };
  const int64_t sum = int64_t(a) + int64_t(std::numeric_limits<int32_t>::max());  // a + One (Q0.31)
  const int32_t half_denominator = int32_t((sum + (sum >= 0 ? 1 : -1)) / 2);   // RoundingHalfSum
  const int32_t k48_17 = 1515870810, kneg32_17 = -1010580540, one_q2 = 1 << 29;
  int32_t x = int32_t(uint32_t(k48_17) + uint32_t(mul(half_denominator, kneg32_17)));
  for (int i = 0; i < 3; ++i) {
    const int32_t hdx = mul(half_denominator, x);                          // Q2.29
    const int32_t one_minus = int32_t(uint32_t(one_q2) - uint32_t(hdx));  // Q2.29
    const int32_t prod = mul(x, one_minus);                                // Q4.27
    x = int32_t(uint32_t(x) + uint32_t(SaturatingShiftLeft32(prod, 2)));   // Rescale<2>
  }
  return SaturatingShiftLeft32(x, 1);  // ExactMulByPot<-1> then Rescale<0>: Q1.30 -> Q0.31
}

// TFLite's GetReciprocal(x, 31, &shift) for x > 0: 1 / x = result * 2^-shift, result in Q0.31.
inline int32_t GetReciprocal31(int32_t x, int* num_bits_over_unit) {
  const int headroom_plus_one = CountLeadingZeros32(uint32_t(x));
  *num_bits_over_unit = 31 - headroom_plus_one;
  const int32_t shifted_minus_one = int32_t((uint32_t(x) << headroom_plus_one) - (uint32_t(1) << 31));
  return OneOverOnePlusX(shifted_minus_one);
}

// NEON form (vqrdmulh then vrshl): both roundings half up.
inline int32_t MultiplyByQuantizedMultiplierHalfUp(int32_t x, int32_t qm, int shift) {
  const int left = shift > 0 ? shift : 0;
  const int right = shift > 0 ? 0 : -shift;
  const int32_t xs = int32_t(uint32_t(x) << left);
  const bool overflow = xs == qm && xs == std::numeric_limits<int32_t>::min();
  int64_t h = overflow ? int64_t(std::numeric_limits<int32_t>::max()) : ((int64_t(xs) * qm + (int64_t(1) << 30)) >> 31);
  if (right > 0) h = (h + (int64_t(1) << (right - 1))) >> right;
  return int32_t(h);
}

// Single rounding (ruy, TFLITE_SINGLE_ROUNDING): (x * qm + 2^(30 - shift)) >> (31 - shift), half up.
// The result is truncated to int32 (a multiplier > 1 can overflow it; ruy's kernels wrap too).
inline int32_t MultiplyByQuantizedMultiplierSingleRounding(int32_t x, int32_t qm, int shift) {
  const int total = 31 - shift;  // shift <= 30 (QuantizeMultiplier) => total >= 1
  const int64_t r = (int64_t(x) * int64_t(qm) + (int64_t(1) << (total - 1))) >> total;
  return int32_t(uint32_t(uint64_t(r)));
}

// int64 accumulator (TFLite default build): 16-bit reduced multiplier, one rounding.
inline int32_t MultiplyByQuantizedMultiplier64(int64_t x, int32_t qm, int shift) {
  const int32_t reduced = qm < 0x7FFF0000 ? ((qm + (1 << 15)) >> 16) : 0x7FFF;
  const int total = 15 - shift;
  if (total <= 0) return int32_t(uint32_t(uint64_t(x) * uint64_t(int64_t(reduced)) << -total));
  // x is within +-2^47 for any real model; wrap (not UB) otherwise.
  const uint64_t prod = uint64_t(x) * uint64_t(int64_t(reduced)) + (uint64_t(1) << (total - 1));
  return int32_t(uint32_t(uint64_t(int64_t(prod) >> total)));
}

// One rounding, ties away from zero, full 31-bit multiplier, int64 accumulator: what LiteRT 2.3's
// builtin int16 FULLY_CONNECTED with an int64 bias computes (measured against it: tests/op_cases/conv.py).
inline int32_t MultiplyByQuantizedMultiplierAway64(int64_t x, int32_t qm, int shift) {
  const int total = 31 - shift;  // >= 1
  const bool neg = x < 0;
  const unsigned __int128 ax = neg ? (unsigned __int128)(-(__int128)x) : (unsigned __int128)x;
  const unsigned __int128 r = (ax * (unsigned __int128)(uint32_t)qm + ((unsigned __int128)1 << (total - 1))) >> total;
  const uint64_t v = uint64_t(r);
  return int32_t(uint32_t(neg ? uint64_t(0) - v : v));
}

// ---------------------------------------------------------------- 16-bit fixed point (gemmlowp)
// The int16 forms TFLite's HARD_SWISH uses.

// round(a * b / 2^15), ties toward +inf; saturates only INT16_MIN * INT16_MIN.
inline int16_t SaturatingRoundingDoublingHighMul16(int16_t a, int16_t b) {
  if (a == b && a == std::numeric_limits<int16_t>::min()) return std::numeric_limits<int16_t>::max();
  const int32_t ab = int32_t(a) * int32_t(b);
  const int32_t nudge = ab >= 0 ? (1 << 14) : (1 - (1 << 14));
  return int16_t((ab + nudge) / (1 << 15));
}
// a * b / 2^15 truncated toward zero (gemmlowp's SaturatingDoublingHighMul as TFLite's reference
// kernels write it); saturates only INT16_MIN * INT16_MIN.
inline int16_t SaturatingDoublingHighMul16(int16_t a, int16_t b) {
  if (a == b && a == std::numeric_limits<int16_t>::min()) return std::numeric_limits<int16_t>::max();
  return int16_t((int32_t(a) * int32_t(b)) / (1 << 15));
}
// round(x / 2^e), ties away from zero, in 16 bits.
inline int16_t RoundingDivideByPOT16(int16_t x, int e) {
  const int16_t mask = int16_t((1 << e) - 1);
  const int16_t remainder = int16_t(x & mask);
  const int16_t threshold = int16_t((mask >> 1) + (x < 0 ? 1 : 0));
  return int16_t((x >> e) + (remainder > threshold ? 1 : 0));
}
inline int16_t SaturatingLeftShift16(int16_t x, int e) {
  const int32_t v = int32_t(x) * (1 << e);
  return int16_t(v < -32768 ? -32768 : (v > 32767 ? 32767 : v));
}
// TFLite's DownScaleInt32ToInt16Multiplier: the Q31 multiplier rounded to Q15.
inline int16_t DownScaleInt32ToInt16Multiplier(int32_t m) {
  constexpr int32_t kRound = 1 << 15;
  if (m >= std::numeric_limits<int32_t>::max() - kRound) return std::numeric_limits<int16_t>::max();
  return int16_t((m + kRound) >> 16);
}

// ---------------------------------------------------------------- gemmlowp int16 fixed point
// gemmlowp's FixedPoint<int16_t, IntBits> functions as TFLite's integer LSTM calls them
// (tensor_utils ApplySigmoid / ApplyTanh: gemmlowp::logistic and gemmlowp::tanh on int16 raws).
// A value is an int16 raw with `ib` integer bits (15 - ib fractional); + and - wrap in 16 bits;
// * is SaturatingRoundingDoublingHighMul16 (integer bits add up); constants are gemmlowp's int32
// ones rounded to 16 bits (RescaleConstantInitializer: RoundingDivideByPOT(c, 16)).
namespace fx16 {
inline int16_t Wrap(int32_t v) { return int16_t(uint16_t(uint32_t(v))); }
inline int16_t Add(int16_t a, int16_t b) { return Wrap(int32_t(a) + int32_t(b)); }
inline int16_t Sub(int16_t a, int16_t b) { return Wrap(int32_t(a) - int32_t(b)); }
inline int16_t Neg(int16_t a) { return Wrap(-int32_t(a)); }
inline int16_t Mul(int16_t a, int16_t b) { return SaturatingRoundingDoublingHighMul16(a, b); }
inline int16_t SatAdd(int16_t a, int16_t b) {
  const int32_t s = int32_t(a) + int32_t(b);
  return int16_t(s < -32768 ? -32768 : (s > 32767 ? 32767 : s));
}
inline int16_t Const(int32_t c) { return int16_t(RoundingDivideByPOT(c, 16)); }
// SaturatingRoundingMultiplyByPOT<e>: e > 0 a saturating left shift, e < 0 a rounding right shift.
inline int16_t MulPOT(int16_t x, int e) {
  if (e == 0) return x;
  if (e < 0) return RoundingDivideByPOT16(x, -e);
  const int32_t threshold = (1 << (15 - e)) - 1;
  if (x > threshold) return 32767;
  if (x < -threshold) return -32768;
  return Wrap(int32_t(x) * (1 << e));
}
inline int16_t RoundingHalfSum(int16_t a, int16_t b) {
  const int32_t s = int32_t(a) + int32_t(b);
  return int16_t((s + (s >= 0 ? 1 : -1)) / 2);
}
// exp on [-1/4, 0), a in Q0.15: Taylor expansion around -1/8.
inline int16_t ExpQuarter(int16_t a) {
  const int16_t constant_term = Const(1895147668), one_third = Const(715827883);
  const int16_t x = Add(a, int16_t(1 << 12));
  const int16_t x2 = Mul(x, x), x3 = Mul(x2, x), x4 = Mul(x2, x2);
  const int16_t x4_over_4 = MulPOT(x4, -2);
  const int16_t poly = MulPOT(Add(Mul(Add(x4_over_4, x3), one_third), x2), -1);
  return SatAdd(constant_term, Mul(constant_term, Add(x, poly)));
}
// exp(a) for a <= 0 with ib integer bits (1..7 here); result Q0.15.
inline int16_t ExpOnNegative(int16_t a, int ib) {
  const int fb = 15 - ib;
  const int16_t one_quarter = int16_t(1 << (fb - 2));
  const int16_t mask = int16_t(one_quarter - 1);
  const int16_t a_mod = Sub(int16_t(a & mask), one_quarter);
  int16_t result = ExpQuarter(MulPOT(a_mod, ib));
  const int16_t remainder = Sub(a_mod, a);
  static const int32_t kMult[7] = {1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242};
  for (int e = -2; e <= 4; ++e) {
    if (ib > e && (remainder & int16_t(1 << (fb + e)))) result = Mul(result, Const(kMult[e + 2]));
  }
  if (ib > 5 && a < Const(-(int32_t(1) << (36 - ib)))) result = 0;
  return a == 0 ? int16_t(32767) : result;
}
// Newton-Raphson 1 / (1 + x) and (1 - x) / (1 + x) for x in [0, 1) (Q0.15), via Q2.13.
inline int16_t NewtonReciprocal(int16_t a, bool one_minus) {
  const int16_t half_den = RoundingHalfSum(a, 32767);
  int16_t x = Add(Const(1515870810), Mul(half_den, Const(-1010580540)));
  for (int i = 0; i < 3; ++i) {
    const int16_t one_minus_hdx = Sub(int16_t(1 << 13), Mul(half_den, x));
    x = Add(x, MulPOT(Mul(x, one_minus_hdx), 2));
  }
  return one_minus ? MulPOT(Sub(x, int16_t(1 << 13)), 2) : MulPOT(x, 1);
}
// gemmlowp::logistic: input with ib integer bits, output Q0.15.
inline int16_t Logistic(int16_t a, int ib) {
  if (a == 0) return Const(1 << 30);
  const int16_t abs_a = a > 0 ? a : Neg(a);
  const int16_t pos = NewtonReciprocal(ExpOnNegative(Neg(abs_a), ib), false);
  return a > 0 ? pos : Sub(int16_t(32767), pos);
}
// gemmlowp::tanh: input with ib integer bits, output Q0.15.
inline int16_t Tanh(int16_t a, int ib) {
  if (a == 0) return 0;
  const int16_t n = a < 0 ? a : Neg(a);
  const int16_t t = NewtonReciprocal(ExpOnNegative(n, ib + 1), true);
  return a < 0 ? Neg(t) : t;
}
}  // namespace fx16

// TFLite's GetInvSqrtQuantizedMultiplierExp(input, reverse_shift = -1): 1 / sqrt(input) as a Q0.31
// multiplier and a left shift, by 5 Newton-Raphson steps in gemmlowp Q3.28 (integer layer norm).
inline void InvSqrtMultiplierExp(int32_t input, int32_t* multiplier, int* shift) {
  if (input <= 1) {
    *multiplier = std::numeric_limits<int32_t>::max();
    *shift = 0;
    return;
  }
  int s = 11;
  while (input >= (1 << 29)) {
    input /= 4;
    ++s;
  }
  const unsigned max_left_shift_bits = unsigned(CountLeadingZeros32(uint32_t(input))) - 1;
  const unsigned left_shift_bit_pairs = max_left_shift_bits / 2 - 1;
  s -= int(left_shift_bit_pairs);
  input <<= 2 * left_shift_bit_pairs;
  auto mul = [](int32_t a, int32_t b) { return SaturatingRoundingDoublingHighMul(a, b); };
  const int32_t fx_input = input >> 1;                    // Q3.28
  const int32_t half_input = RoundingDivideByPOT(fx_input, 1);
  const int32_t half_three = (1 << 28) + (1 << 27);
  int32_t x = 1 << 28;                                    // 1.0
  for (int i = 0; i < 5; ++i) {
    const int32_t x3 = SaturatingShiftLeft32(mul(mul(x, x), x), 6);  // Q9 -> Q3
    const int32_t d = int32_t(uint32_t(mul(half_three, x)) - uint32_t(mul(half_input, x3)));
    x = SaturatingShiftLeft32(d, 3);                                   // Q6 -> Q3
  }
  x = mul(x, 1518500250);  // * sqrt(2) / 2
  if (s < 0) {
    x = int32_t(uint32_t(x) << -s);
    s = 0;
  }
  *multiplier = x;
  *shift = -s;
}

// ---------------------------------------------------------------- int16 lookup tables
// TFLite's int16 LOGISTIC / TANH (general input scale) interpolate this table: sigmoid(i / 24) in
// unsigned 0.16 fixed point, i = 0..255 (TFLite's sigmoid_table_uint16; tanh(x) = 2 sigmoid(2x) - 1
// shares it). The values are TFLite's (not all equal to round(65536 * sigmoid(i / 24))).
inline const uint16_t* SigmoidTableU16() {
  static const uint16_t kTable[256] = {
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149, 40794, 41432, 42064, 42688,
    43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369, 47911, 48443, 48964, 49475, 49975, 50464, 50942, 51409,
    51865, 52311, 52745, 53169, 53581, 53983, 54374, 54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433,
    57724, 58007, 58280, 58544, 58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370, 60565, 60753, 60935, 61110,
    61279, 61441, 61599, 61750, 61896, 62036, 62172, 62302, 62428, 62549, 62666, 62778, 62886, 62990, 63090, 63186,
    63279, 63368, 63454, 63536, 63615, 63691, 63765, 63835, 63903, 63968, 64030, 64090, 64148, 64204, 64257, 64308,
    64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652, 64687, 64721, 64754, 64786, 64816, 64845, 64873, 64900,
    64926, 64950, 64974, 64997, 65019, 65039, 65060, 65079, 65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208,
    65221, 65234, 65246, 65258, 65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360, 65367,
    65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433, 65438, 65442, 65445, 65449,
    65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474, 65476, 65479, 65481, 65483, 65485, 65488, 65489, 65491,
    65493, 65495, 65497, 65498, 65500, 65501, 65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513,
    65514, 65515, 65516, 65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522, 65523, 65523, 65524, 65524,
    65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528, 65528, 65528, 65529, 65529, 65529, 65529, 65530, 65530,
    65530, 65530, 65531, 65531, 65531, 65531, 65531, 65532, 65532, 65532, 65532, 65532, 65532, 65533, 65533, 65533,
    65533, 65533, 65533, 65533, 65533, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65535,
  };
  return kTable;
}

// TFLite's CheckedLog2: whether x is a power of two (|log2 x - round| < 1e-3); *log2_rounded gets
// the rounded exponent.
inline bool CheckedLog2(float x, int* log2_rounded) {
  const float l = std::log(x) * (1.0f / std::log(2.0f));
  const float r = std::round(l);
  *log2_rounded = int(r);
  return std::fabs(l - r) < 1e-3f;
}

// TFLite's 513-entry int16 table (LUTPopulate<int16_t>): f sampled at 512 steps over the input
// range of (in_scale, in_zp), with TFLite's midpoint bias correction, in the output grid
// (out_scale, out_zp) scaled to 65536 levels. FloatT is the arithmetic type of TFLite's
// LUTPopulateInt16<FloatT>: double for SOFTMAX int16 (its deprecated double overload), float for
// the ops that pass float (*)(float) (EXP int16); f takes and returns FloatT.
template <typename FloatT = double, typename F>
inline void PopulateLutInt16(FloatT in_scale, int32_t in_zp, FloatT out_scale, int32_t out_zp, F f, int16_t* lut) {
  const FloatT in_min = in_scale * FloatT(-32768 - in_zp), in_max = in_scale * FloatT(32767 - in_zp);
  const FloatT out_min = out_scale * FloatT(-32768 - out_zp), out_max = out_scale * FloatT(32767 - out_zp);
  const int steps = 512;
  const FloatT step = (in_max - in_min) / FloatT(steps), half = step / FloatT(2);
  const FloatT inv = FloatT(65536) / (out_max - out_min);
  auto clamp16 = [](FloatT v) { return int16_t(std::min<FloatT>(std::max<FloatT>(v, FloatT(-32768)), FloatT(32767))); };
  for (int i = 0; i < steps; ++i) {
    const FloatT v = f(in_min + FloatT(i) * step), vm = f(in_min + FloatT(i) * step + half),
                 vn = f(in_min + FloatT(i + 1) * step);
    const FloatT sample = std::round(v * inv);
    const FloatT interp = std::round((vn * inv + std::round(v * inv)) / FloatT(2));
    const FloatT mid = std::round(vm * inv);
    const FloatT bias = std::round((interp - mid) / FloatT(2));
    lut[i] = clamp16(sample - bias);
  }
  lut[steps] = clamp16(std::round(f(in_max) * inv));
}

// TFLite's int16 table lookup (LUTLookup): 512 segments of 128 input steps, linear interpolation
// with the slope taken in int16, rounded (+64) >> 7.
inline int16_t LutLookupInt16(int16_t value, const int16_t* lut) {
  const int index = 256 + (value >> 7);
  const int16_t offset = int16_t(value & 0x7f);
  const int16_t base = lut[index];
  const int16_t slope = int16_t(lut[index + 1] - lut[index]);
  const int32_t delta = (int32_t(slope) * offset + 64) >> 7;
  return int16_t(base + delta);
}

// ---------------------------------------------------------------- integer types

inline bool IsQuantizedIntType(DType t) {
  return t == DType::kInt8 || t == DType::kUInt8 || t == DType::kInt16;
}

// [lo, hi] of an integer type (int32 for anything else).
inline void TypeRange(DType t, int32_t* lo, int32_t* hi) {
  switch (t) {
    case DType::kInt8: *lo = -128; *hi = 127; return;
    case DType::kUInt8: *lo = 0; *hi = 255; return;
    case DType::kInt16: *lo = -32768; *hi = 32767; return;
    case DType::kInt4: *lo = -8; *hi = 7; return;
    case DType::kUInt4: *lo = 0; *hi = 15; return;
    case DType::kInt2: *lo = -2; *hi = 1; return;
    default: *lo = std::numeric_limits<int32_t>::min(); *hi = std::numeric_limits<int32_t>::max(); return;
  }
}
inline void TypeRange64(DType t, int64_t* lo, int64_t* hi) {
  if (t == DType::kInt64) {
    *lo = std::numeric_limits<int64_t>::min();
    *hi = std::numeric_limits<int64_t>::max();
    return;
  }
  int32_t l, h;
  TypeRange(t, &l, &h);
  *lo = l;
  *hi = h;
}

template <typename T>
inline T SaturateCast(int32_t v) {
  const int32_t lo = int32_t(std::numeric_limits<T>::min()), hi = int32_t(std::numeric_limits<T>::max());
  return T(v < lo ? lo : (v > hi ? hi : v));
}
template <>
inline int32_t SaturateCast<int32_t>(int32_t v) { return v; }

inline int32_t Clamp32(int32_t v, int32_t lo, int32_t hi) { return v < lo ? lo : (v > hi ? hi : v); }

// float -> int32 as TFLite's static_cast<int32_t>(std::round(f)) behaves on x86: half away from zero,
// out-of-range values and NaN give INT32_MIN (cvttss2si).
inline int32_t RoundAwayToInt32(float v) {
  const float r = std::round(v);
  return (r >= -2147483648.0f && r < 2147483648.0f) ? int32_t(r) : std::numeric_limits<int32_t>::min();
}

// ---------------------------------------------------------------- hybrid (dynamic-range) inputs

// TFLite's SymmetricQuantizeFloats / AsymmetricQuantizeFloats on one row of n floats: how every
// hybrid kernel (FULLY_CONNECTED, CONV_2D, DEPTHWISE_CONV_2D, the RNN family, SVDF) quantizes its
// float input per batch row on the fly.
//   symmetric:  scale = max|v| / 127, q = round(v * 127 / max|v|) clamped to +-127, zero point 0;
//   asymmetric (asymmetric_quantize_inputs): scale and nudged zero point from
//               [min(0, lo), max(0, hi)] in double, q = round(zp + v / scale) clamped to [-128, 127].
// A zero range gives q = 0, scale 1, zero point 0. Rounding half away from zero.
inline void QuantizeFloatRow(const float* v, int64_t n, bool asymmetric, int8_t* q, float* scale, int32_t* zp) {
  float lo = n ? v[0] : 0.f, hi = lo;
  for (int64_t i = 1; i < n; ++i) {
    lo = v[i] < lo ? v[i] : lo;
    hi = v[i] > hi ? v[i] : hi;
  }
  *zp = 0;
  if (!asymmetric) {
    const float range = std::max(std::abs(lo), std::abs(hi));
    if (range == 0.f) {
      std::memset(q, 0, size_t(n));
      *scale = 1.f;
      return;
    }
    *scale = range / 127.f;
    const float inv = 127.f / range;
    for (int64_t i = 0; i < n; ++i) q[i] = int8_t(std::min(127, std::max(-127, RoundAwayToInt32(v[i] * inv))));
    return;
  }
  const double rmin = double(std::min(0.f, lo)), rmax = double(std::max(0.f, hi));
  if (rmin == rmax) {
    std::memset(q, 0, size_t(n));
    *scale = 1.f;
    return;
  }
  const double qmin = -128.0, qmax = 127.0;
  const double s = (rmax - rmin) / (qmax - qmin);
  const double zp_from_min = qmin - rmin / s, zp_from_max = qmax - rmax / s;
  const double err_min = std::abs(qmin) + std::abs(rmin / s), err_max = std::abs(qmax) + std::abs(rmax / s);
  const double zpd = err_min < err_max ? zp_from_min : zp_from_max;
  *zp = zpd <= qmin ? -128 : (zpd >= qmax ? 127 : int32_t(std::round(zpd)));
  // The scale in float: LiteRT 2.3's builtin output (hybrid FULLY_CONNECTED, BATCH_MATMUL, LSTMs)
  // matches (max(0, hi) - min(0, lo)) / 255 computed in float bit for bit; the double quotient its
  // AsymmetricQuantizeFloats source shows differs from it by 1 ulp on many rows (measured).
  *scale = (std::max(0.f, hi) - std::min(0.f, lo)) / 255.f;
  const float inv = 1.0f / *scale;
  for (int64_t i = 0; i < n; ++i)
    q[i] = int8_t(std::min(127, std::max(-128, RoundAwayToInt32(float(*zp) + v[i] * inv))));
}

// TFLite's CalculateActivationRangeQuantized for an output of `type` with (scale, zero_point):
// NONE -> the type range; RELU, RELU6, RELU_N1_TO_1 -> the quantized bounds intersected with it.
// TANH and SIGN_BIT clamp to the type range like NONE, as TFLite's (its else branch); ops that refuse
// them (FULLY_CONNECTED) check before. Values outside the enum are refused.
inline Status QuantizedActivationRange(const OpContext& ctx, int act, DType type, float scale, int32_t zero_point,
                                       int32_t* act_min, int32_t* act_max) {
  int32_t qmin, qmax;
  TypeRange(type, &qmin, &qmax);
  auto q = [&](float f) {
    const int64_t v = int64_t(zero_point) + RoundAwayToInt32(f / scale);
    return int32_t(uint32_t(uint64_t(v)));  // int32 add, wrapping as TFLite's
  };
  float lo, hi;  // the float bounds (ops/activation.h), quantized
  if (!ActivationBounds(act, &lo, &hi))
    return ctx.Error("fused activation " + std::to_string(act) + " is not a TFLite fused activation");
  *act_min = std::isinf(lo) ? qmin : std::max(qmin, q(lo));
  *act_max = std::isinf(hi) ? qmax : std::min(qmax, q(hi));
  return OkStatus();
}

// ---------------------------------------------------------------- parameters of a tensor

// Quantization parameters of one tensor, read and validated: one (scale, zero point) per channel
// along `axis` (a single entry when per-tensor).
struct TensorQuant {
  std::vector<float> scale;
  std::vector<int32_t> zero_point;
  int axis = -1;  // quantized dimension when per-channel, -1 when per-tensor
  bool per_channel() const { return axis >= 0; }
  size_t channels() const { return scale.size(); }
  float Scale(size_t c = 0) const { return scale[per_channel() ? c : 0]; }
  int32_t ZeroPoint(size_t c = 0) const { return zero_point[per_channel() ? c : 0]; }
};

// What a kernel accepts for one tensor.
struct QuantRule {
  bool required = true;        // the tensor must carry quantization parameters
  bool allow_per_channel = false;
  int channel_axis = -1;       // when per-channel is allowed: the axis it must be on (-1: any)
  bool zero_point_zero = false;  // symmetric (int16 activations, int8 weights of 16x8, ...)
  bool check_scale = true;     // scale finite and > 0
};

inline std::string TensorLabel(const char* what, const Tensor& t) {
  return std::string(what) + (t.name.empty() ? std::string() : " '" + t.name + "'");
}

// Reads and validates `t`'s quantization: scales finite and > 0; zero points inside the type's range
// (int32 range for INT32/INT64 tensors such as biases); as many zero points as scales; per-channel
// vectors only where allowed, on an axis inside the shape (and the expected one), with as many
// entries as that dimension has. Errors are ValueErrors naming the op and the tensor.
inline Status ReadQuant(const OpContext& ctx, const Tensor& t, const char* what, const QuantRule& rule,
                        TensorQuant* out) {
  const std::string label = TensorLabel(what, t);
  const QuantParams& q = t.quant;
  const size_t ns = q.scale.size();
  out->scale.clear();
  out->zero_point.clear();
  out->axis = -1;
  if (ns == 0) {
    if (rule.required)
      return ctx.Error(label + " (" + DTypeName(t.type) + ") has no quantization parameters");
    out->scale.push_back(0.f);
    out->zero_point.push_back(0);
    return OkStatus();
  }
  if (!q.zero_point.empty() && q.zero_point.size() != ns)
    return ctx.Error(label + " has " + std::to_string(ns) + " scales but " + std::to_string(q.zero_point.size()) +
                     " zero points");
  int64_t lo, hi;
  TypeRange64(t.type, &lo, &hi);
  if (t.type == DType::kInt64) {
    lo = std::numeric_limits<int32_t>::min();
    hi = std::numeric_limits<int32_t>::max();
  }
  for (size_t i = 0; i < ns; ++i) {
    const float s = q.scale[i];
    if (rule.check_scale && !(std::isfinite(s) && s > 0.f))
      return ctx.Error(label + " has scale " + std::to_string(s) + (ns > 1 ? " (channel " + std::to_string(i) + ")" : "") +
                       "; a scale must be finite and > 0");
    const int64_t z = q.zero_point.empty() ? 0 : q.zero_point[i];
    if (z < lo || z > hi)
      return ctx.Error(label + " has zero point " + std::to_string(z) + ", outside the " + DTypeName(t.type) +
                       " range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    if (rule.zero_point_zero && z != 0)
      return ctx.Error(label + " (" + DTypeName(t.type) + ") must be symmetric (zero point 0), got zero point " +
                       std::to_string(z));
    out->scale.push_back(s);
    out->zero_point.push_back(int32_t(z));
  }
  if (ns > 1) {
    if (!rule.allow_per_channel)
      return ctx.Error(label + " has per-channel quantization (" + std::to_string(ns) +
                       " scales); only per-tensor quantization is supported here");
    const int rank = int(t.shape.size());
    const int qd = q.quantized_dimension;
    if (qd < 0 || qd >= rank)
      return ctx.Error(label + " has quantized_dimension " + std::to_string(qd) + ", outside its shape " +
                       DimsToString(t.shape));
    if (rule.channel_axis >= 0 && qd != rule.channel_axis)
      return ctx.Error(label + " is quantized per channel along dimension " + std::to_string(qd) + "; expected dimension " +
                       std::to_string(rule.channel_axis));
    if (int64_t(t.shape[qd]) != int64_t(ns))
      return ctx.Error(label + " has " + std::to_string(ns) + " per-channel scales but dimension " + std::to_string(qd) +
                       " has size " + std::to_string(t.shape[qd]));
    out->axis = qd;
  }
  return OkStatus();
}

// Validation only (the same rules).
inline Status ValidateQuant(const OpContext& ctx, const Tensor& t, const char* what, const QuantRule& rule) {
  TensorQuant tmp;
  return ReadQuant(ctx, t, what, rule, &tmp);
}


// Validates the parameters of every INT8 / UINT8 / INT16 input and output of the node that carries
// quantization parameters (per-tensor or per-channel), by ReadQuant's rules. For ops that move
// quantized data without arithmetic (reshape, slice, pad, ...): a file with a zero, negative, NaN or
// infinite scale or an out-of-range zero point is refused at allocate, naming the tensor.
inline Status ValidateNodeQuant(OpContext& ctx) {
  QuantRule rule;
  rule.required = false;
  rule.allow_per_channel = true;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) continue;
    const Tensor& t = ctx.input(i);
    if (IsQuantizedIntType(t.type) && !t.quant.scale.empty())
      TFG_RETURN_IF_ERROR(ValidateQuant(ctx, t, ("input " + std::to_string(i)).c_str(), rule));
  }
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    const Tensor& t = ctx.output(i);
    if (IsQuantizedIntType(t.type) && !t.quant.scale.empty())
      TFG_RETURN_IF_ERROR(ValidateQuant(ctx, t, ("output " + std::to_string(i)).c_str(), rule));
  }
  return OkStatus();
}

}  // namespace quant
}  // namespace tflite_gpu
