// Quantized unary ops as TensorFlow Lite's builtin kernels (activations.cc) compute them:
//   RELU / RELU6 / RELU_N1_TO_1 (INT8, UINT8, INT16; RELU_N1_TO_1 8-bit only): QuantizedReluX,
//     out = clamp(out_zp + MultiplyByQuantizedMultiplier(x - in_zp, in_scale / out_scale)) with the
//     clamp bounds out_zp + roundf(bound / out_scale) inside the type range (double rounding: the
//     builtin kernel's scalar ReluX loop; BUILTIN_REF agrees).
//   LEAKY_RELU (INT8, UINT8, INT16): QuantizeLeakyRelu, identity multiplier in_scale / out_scale
//     for x >= in_zp, alpha * in_scale / out_scale below.
//   LOGISTIC / TANH (INT8, UINT8): TFLite's builtin (optimized) kernel looks the value up in a
//     256-entry table made by LUTPopulate: round(f(in_scale * (q - in_zp)) / out_scale) + out_zp in
//     float, f in float (1 / (1 + expf(-x)), tanhf). Followed here; TFLite's reference kernels
//     (BUILTIN_REF) compute a fixed-point approximation instead and can differ by a step.
//     LOGISTIC needs output scale 1/256 (any zero point), as TFLite checks.
//   LOGISTIC / TANH (INT16, symmetric): TFLite's builtin kernel, general input scale (its
//     reference_integer_ops::Logistic / Tanh, which the builtin kernel runs whenever the input
//     multiplier is set): x = (q * m + round) >> s with m = in_scale * 3 * 4096 doubled s times
//     until > 32767 / 2 (input rescaled to 1 / (3 * 4096)), then linear interpolation in the
//     256-entry sigmoid table (quant::SigmoidTableU16) on |x| (LOGISTIC: 9 fraction bits, TANH: 8),
//     mirrored for negative x. Output grid 2^-15, zero point 0 (LOGISTIC: exactly 1/32768).
//     Power-of-two input scales (2^-12; TANH also 2^-11) take TFLite's gemmlowp fixed-point path
//     instead and are refused here (not implemented).
//   EXP (INT8): the same 256-entry float table as LOGISTIC / TANH (LUTPopulate with expf), any
//     output grid (TFLite's exp.cc; UINT8 refused, as LiteRT).
//   EXP (INT16): TFLite's 513-entry interpolated table (LUTPopulate<int16_t> -> LUTPopulateInt16 in
//     float with expf), looked up with quant::LutLookupInt16; zero points 0, as LiteRT 2.3's exp.cc
//     checks (newer TFLite sources bake zero points into the table). exp.cc is TFLite's only EXP
//     kernel (builtin = reference).
//   HARD_SWISH (INT8, UINT8): reference_ops::HardSwish's 16-bit fixed point (hires input scale
//     in_scale / 128, "reluish" multiplier on the 3/32768 scale, SaturatingDoublingHighMul); the
//     builtin NEON kernel is bit-exact with it.
// Fast kernels: 8-bit inputs use a 256-entry table built at prepare from the same scalar
// arithmetic the reference kernel runs per element; INT16 runs the scalar arithmetic in parallel.
#include <cmath>
#include <memory>
#include <vector>

#include "ops/elementwise/ew_common.h"
#include "ops/elementwise/quant_ew.h"
#include "ops/quant_common.h"

namespace tflite_gpu {
namespace ew {
namespace {

struct QUnaryData {
  QUnary kind = QUnary::kRelu;
  DType type = DType::kInt8;
  float in_scale = 0.f, out_scale = 0.f;
  int32_t in_zp = 0, out_zp = 0, qmin = 0, qmax = 0;
  // RELU family / LEAKY_RELU
  int32_t mult = 0, mult_alpha = 0;
  int shift = 0, shift_alpha = 0;
  int32_t act_min = 0, act_max = 0;
  // HARD_SWISH
  int16_t hs_out_mult = 0, hs_relu_mult = 0;
  int hs_out_exp = 0, hs_relu_exp = 0;
  uint8_t lut[256] = {};  // 8-bit types: output bit pattern by input bit pattern
  // int16 LOGISTIC / TANH
  int32_t i16_mult = 0;
  int i16_shift = 0;
  std::vector<int16_t> lut16;  // 65536 entries, indexed by uint16_t(q) (fast kernel)
  int16_t lut513[513] = {};     // int16 EXP: TFLite's interpolated table
};

// The int16 LOGISTIC / TANH input rescaled to the table's 1 / (3 * 4096) grid:
// (q * multiplier + round) >> shift, in TFLite's wrapping int32 arithmetic.
int32_t Int16TableInput(const QUnaryData& d, int32_t q) {
  const int32_t round = d.i16_shift > 0 ? (1 << (d.i16_shift - 1)) : 0;
  return int32_t(uint32_t(q) * uint32_t(d.i16_mult) + uint32_t(round)) >> d.i16_shift;
}

// TFLite's int16 LOGISTIC with a general input scale.
int32_t Int16Logistic(const QUnaryData& d, int32_t q) {
  const int32_t x = Int16TableInput(d, q);
  const uint32_t ax = x < 0 ? 0u - uint32_t(x) : uint32_t(x);
  const uint32_t uh = ax >> 9;
  uint32_t r;
  if (uh >= 255) {
    r = 0x7FFFu << 10;
  } else {
    const uint32_t ua = quant::SigmoidTableU16()[uh], ub = quant::SigmoidTableU16()[uh + 1];
    r = (ua << 9) + (ax & 0x1ff) * (ub - ua);
  }
  r = x >= 0 ? r + (1u << 9) : (1u << 25) - r + (1u << 9) - 1;
  return int32_t(int16_t(uint16_t(r >> 10)));
}

// TFLite's int16 TANH with a general input scale.
int32_t Int16Tanh(const QUnaryData& d, int32_t q) {
  const int32_t x = Int16TableInput(d, q);
  const uint32_t ax = x < 0 ? 0u - uint32_t(x) : uint32_t(x);
  const uint32_t uh = ax >> 8;
  int32_t r;
  if (uh >= 255) {
    r = 0xFFFF << 8;
  } else {
    const uint32_t ua = quant::SigmoidTableU16()[uh], ub = quant::SigmoidTableU16()[uh + 1];
    r = int32_t((ua << 8) + (ax & 0xff) * (ub - ua));
  }
  r = x >= 0 ? r - (1 << 23) + (1 << 7) : -r + (1 << 23) + (1 << 7) - 1;
  return int32_t(int16_t(r >> 8));
}

int32_t Scalar(const QUnaryData& d, int32_t q) {
  switch (d.kind) {
    case QUnary::kRelu: case QUnary::kRelu6: case QUnary::kReluN1To1: {
      const int32_t v = d.out_zp + quant::MultiplyByQuantizedMultiplier(q - d.in_zp, d.mult, d.shift);
      return std::min(std::max(v, d.act_min), d.act_max);
    }
    case QUnary::kLeakyRelu: {
      const int32_t x = q - d.in_zp;
      const int32_t v = d.out_zp + (x >= 0 ? quant::MultiplyByQuantizedMultiplier(x, d.mult, d.shift)
                                           : quant::MultiplyByQuantizedMultiplier(x, d.mult_alpha, d.shift_alpha));
      return std::min(std::max(v, d.qmin), d.qmax);
    }
    case QUnary::kLogistic: case QUnary::kTanh: case QUnary::kExp: {
      if (d.type == DType::kInt16) {
        if (d.kind == QUnary::kExp) return quant::LutLookupInt16(int16_t(q), d.lut513);
        return d.kind == QUnary::kLogistic ? Int16Logistic(d, q) : Int16Tanh(d, q);
      }
      const float deq = d.in_scale * float(q - d.in_zp);
      const float f = d.kind == QUnary::kLogistic ? 1.0f / (1.0f + std::exp(-deq))
                      : d.kind == QUnary::kExp    ? std::exp(deq)
                                                  : std::tanh(deq);
      const float inv = 1.0f / d.out_scale;
      const float rescaled = std::round(f * inv);
      const int32_t v = int32_t(rescaled + float(d.out_zp));
      return std::min(std::max(v, d.qmin), d.qmax);
    }
    case QUnary::kHardSwish: {
      const int16_t x = int16_t(q - d.in_zp);
      const int16_t hires = int16_t(x * (1 << 7));
      const int16_t preshift = quant::SaturatingRoundingDoublingHighMul16(hires, d.hs_out_mult);
      int16_t r = hires;
      if (d.hs_relu_exp > 0) r = quant::SaturatingLeftShift16(r, d.hs_relu_exp - 1);
      r = quant::SaturatingRoundingDoublingHighMul16(r, d.hs_relu_mult);
      if (d.hs_relu_exp > 0) r = quant::SaturatingLeftShift16(r, 1);
      if (d.hs_relu_exp < 0) r = quant::RoundingDivideByPOT16(r, -d.hs_relu_exp);
      r = int16_t((int32_t(r) + (1 << 15)) >> 1);
      const int16_t pre = quant::SaturatingDoublingHighMul16(r, preshift);
      int16_t out = quant::RoundingDivideByPOT16(pre, -d.hs_out_exp);
      int32_t v = int32_t(out) + d.out_zp;
      return std::min(std::max(v, d.qmin), d.qmax);
    }
  }
  return 0;
}

const char* KindName(QUnary k) {
  switch (k) {
    case QUnary::kRelu: return "RELU";
    case QUnary::kRelu6: return "RELU6";
    case QUnary::kReluN1To1: return "RELU_N1_TO_1";
    case QUnary::kLeakyRelu: return "LEAKY_RELU";
    case QUnary::kLogistic: return "LOGISTIC";
    case QUnary::kTanh: return "TANH";
    case QUnary::kHardSwish: return "HARD_SWISH";
    case QUnary::kExp: return "EXP";
  }
  return "?";
}

template <typename T>
void RunRef(const QUnaryData& d, const T* in, T* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = T(Scalar(d, int32_t(in[i])));
}

// TFLite's int16 LOGISTIC / TANH prepare (activations.cc): zero points 0, output scale 2^-15
// (LOGISTIC: exactly 1/32768), the input multiplier for the table path.
Status PrepareInt16Sigmoid(const OpContext& ctx, QUnary kind, QUnaryData* d) {
  const bool logistic = kind == QUnary::kLogistic;
  int out_log2 = 0;
  if (logistic && d->out_scale != 1.0f / 32768)
    return ctx.Error("INT16 output scale must be 1/32768, got " + std::to_string(d->out_scale));
  if (!quant::CheckedLog2(d->out_scale, &out_log2) || out_log2 != -15)
    return ctx.Error("INT16 output scale must be 2^-15 (1/32768), got " + std::to_string(d->out_scale));
  int in_log2 = 0;
  const bool pot = quant::CheckedLog2(d->in_scale, &in_log2);
  const int pot_shift = 12 + in_log2;
  if (pot && (pot_shift == 0 || (!logistic && pot_shift == 1)))
    return ctx.Error("INT16 input scale " + std::to_string(d->in_scale) +
                     " is a power of two that takes TFLite's gemmlowp fixed-point path; not supported yet "
                     "(any other input scale is)");
  double m = double(d->in_scale) * 4096.0 * 3.0;
  int shift = 0;
  while (m <= 32767.0 / 2.0 && shift <= 30) {
    ++shift;
    m *= 2.0;
  }
  if (!(m < 2147483648.0))
    return ctx.Error("INT16 input scale " + std::to_string(d->in_scale) + " is too large (its table multiplier "
                     "overflows int32)");
  d->i16_mult = int32_t(m);
  d->i16_shift = shift;
  return OkStatus();
}

}  // namespace

Status PrepareQuantUnary(OpContext& ctx, QUnary kind, float alpha) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(1, 1, 1, 1));
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.output(0);
  const bool is16 = x.type == DType::kInt16;
  if (is16 && (kind == QUnary::kReluN1To1 || kind == QUnary::kHardSwish))
    return ctx.Error(std::string("INT16 input is not supported (TFLite's ") + KindName(kind) +
                     " kernel takes FLOAT32, INT8, UINT8)");
  if (kind == QUnary::kExp && x.type != DType::kInt8 && x.type != DType::kInt16)
    return ctx.Error(std::string(DTypeName(x.type)) +
                     " input is not supported for quantized EXP (supported: FLOAT32, INT8, INT16)");
  if (y.type != x.type)
    return ctx.Error(std::string("output type ") + DTypeName(y.type) + " differs from the input type " +
                     DTypeName(x.type));
  quant::QuantRule rule;
  rule.zero_point_zero = is16;  // TFLite: int16 activations are symmetric (LiteRT 2.3's EXP checks it too)
  quant::TensorQuant qi, qo;
  TFG_RETURN_IF_ERROR(quant::ReadQuant(ctx, x, "input", rule, &qi));
  TFG_RETURN_IF_ERROR(quant::ReadQuant(ctx, y, "output", rule, &qo));
  auto d = std::make_shared<QUnaryData>();
  d->kind = kind;
  d->type = x.type;
  d->in_scale = qi.Scale();
  d->out_scale = qo.Scale();
  d->in_zp = qi.ZeroPoint();
  d->out_zp = qo.ZeroPoint();
  quant::TypeRange(x.type, &d->qmin, &d->qmax);
  switch (kind) {
    case QUnary::kRelu: case QUnary::kRelu6: case QUnary::kReluN1To1: {
      quant::QuantizeMultiplier(double(d->in_scale) / double(d->out_scale), &d->mult, &d->shift);
      const float lo = kind == QUnary::kReluN1To1 ? -1.f : 0.f;
      d->act_min = std::max(d->qmin, d->out_zp + int32_t(std::round(lo / d->out_scale)));
      d->act_max = kind == QUnary::kRelu ? d->qmax
                                         : std::min(d->qmax, d->out_zp + int32_t(std::round(
                                                                 (kind == QUnary::kRelu6 ? 6.f : 1.f) / d->out_scale)));
      break;
    }
    case QUnary::kLeakyRelu:
      quant::QuantizeMultiplier(double(d->in_scale) * double(alpha) / double(d->out_scale), &d->mult_alpha,
                                &d->shift_alpha);
      quant::QuantizeMultiplier(double(d->in_scale) / double(d->out_scale), &d->mult, &d->shift);
      break;
    case QUnary::kLogistic: case QUnary::kTanh:
      if (is16) {
        TFG_RETURN_IF_ERROR(PrepareInt16Sigmoid(ctx, kind, d.get()));
        break;
      }
      // TFLite checks the scale only (activations.cc: output scale == 1/256), any zero point.
      if (kind == QUnary::kLogistic && d->out_scale != 1.0f / 256)
        return ctx.Error("output scale must be 1/256, got " + std::to_string(d->out_scale));
      break;
    case QUnary::kExp:
      if (is16)
        quant::PopulateLutInt16<float>(d->in_scale, d->in_zp, d->out_scale, d->out_zp,
                                       [](float v) { return std::exp(v); }, d->lut513);
      break;
    case QUnary::kHardSwish: {
      const float hires = (1.0f / 128.0f) * d->in_scale;
      int32_t m32 = 0;
      quant::QuantizeMultiplier(double(hires / d->out_scale), &m32, &d->hs_out_exp);
      d->hs_out_mult = quant::DownScaleInt32ToInt16Multiplier(m32);
      if (d->hs_out_exp > 0)
        return ctx.Error("output scale " + std::to_string(d->out_scale) + " is too small for the input scale " +
                         std::to_string(d->in_scale) + " (TFLite requires in_scale / 128 < out_scale)");
      quant::QuantizeMultiplier(double(hires / (3.0f / 32768.0f)), &m32, &d->hs_relu_exp);
      d->hs_relu_mult = quant::DownScaleInt32ToInt16Multiplier(m32);
      break;
    }
  }
  if (is16 && (kind == QUnary::kLogistic || kind == QUnary::kTanh)) {
    d->lut16.resize(65536);
    for (int v = -32768; v <= 32767; ++v) d->lut16[uint16_t(int16_t(v))] = int16_t(Scalar(*d, v));
  }
  if (!is16) {
    for (int v = 0; v < 256; ++v) {
      const int32_t q = x.type == DType::kInt8 ? int32_t(int8_t(uint8_t(v))) : v;
      d->lut[v] = uint8_t(Scalar(*d, q));
    }
  }
  ctx.node().user_data = d;
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, x.type));
  return ctx.SetOutputShape(0, x.shape);
}

Status EvalQuantUnary(OpContext& ctx, bool ref) {
  const QUnaryData& d = *ctx.node().U<QUnaryData>();
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const int64_t n = x.num_elements();
  switch (x.type) {
    case DType::kInt8:
      if (ref) RunRef(d, x.as<int8_t>(), y.as<int8_t>(), n);
      else ew::RunUnary(ctx.pool(), n, x.as<uint8_t>(), y.as<uint8_t>(), [&d](uint8_t v) { return d.lut[v]; });
      return OkStatus();
    case DType::kUInt8:
      if (ref) RunRef(d, x.as<uint8_t>(), y.as<uint8_t>(), n);
      else ew::RunUnary(ctx.pool(), n, x.as<uint8_t>(), y.as<uint8_t>(), [&d](uint8_t v) { return d.lut[v]; });
      return OkStatus();
    case DType::kInt16:
      if (ref) RunRef(d, x.as<int16_t>(), y.as<int16_t>(), n);
      else if (!d.lut16.empty())
        ew::RunUnary(ctx.pool(), n, x.as<int16_t>(), y.as<int16_t>(), [&d](int16_t v) { return d.lut16[uint16_t(v)]; });
      else ew::RunUnary(ctx.pool(), n, x.as<int16_t>(), y.as<int16_t>(), [&d](int16_t v) { return int16_t(Scalar(d, v)); });
      return OkStatus();
    default: return ctx.Error(std::string("unsupported input type ") + DTypeName(x.type));
  }
}

}  // namespace ew
}  // namespace tflite_gpu
