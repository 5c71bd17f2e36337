// FAKE_QUANT (float32), TFLite semantics: the [min, max] range is nudged so that zero is exactly
// representable on the grid of 2^num_bits - 1 steps (zero point rounded half away from zero and
// clamped to the grid), then every value is clamped to the nudged range and rounded to the grid:
//   scale = (max - min) / (2^bits - 1), zp = clamp(round(-min / scale), 0, 2^bits - 1),
//   lo = -zp * scale, hi = (2^bits - 1 - zp) * scale,
//   y = round((clamp(x, lo, hi) - lo) * (1 / scale)) * scale + lo.
// Version 2 adds narrow_range, which TFLite's runtime refuses at prepare ("narrow_range FakeQuant
// is not currently supported at runtime"); we refuse it the same way, so v2 models load exactly as
// far as in LiteRT. num_bits must be 1..16 and min < max (TFLite only DCHECKs these).
#include <cmath>

#include "ops/op_registry.h"

namespace tflite_gpu {
namespace {

constexpr uint8_t kFakeQuantOptions = 58;

struct FakeQuantParams {
  float min = 0.f, max = 0.f;
  int num_bits = 0;
  bool narrow_range = false;
};

Status ParseFakeQuant(const OptionsView& opts, Node& node) {
  fb::Table t = opts.type == kFakeQuantOptions ? opts.table : fb::Table();
  auto p = std::make_shared<FakeQuantParams>();
  p->min = t.Scalar<float>(0, 0.f);
  p->max = t.Scalar<float>(1, 0.f);
  p->num_bits = t.Scalar<int32_t>(2, 0);
  p->narrow_range = t.Bool(3, false);
  node.params = p;
  return OkStatus();
}

Status PrepareFakeQuant(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(1, 1, 1, 1));
  if (!ctx.has_input(0)) return ctx.Error("missing input");
  const FakeQuantParams& p = ctx.node().P<FakeQuantParams>();
  if (p.narrow_range)
    return ctx.Error("narrow_range is not supported at runtime (as in TFLite: it is meant for weights only)");
  if (p.num_bits < 1 || p.num_bits > 16) return ctx.Error("num_bits must be in 1..16, got " + std::to_string(p.num_bits));
  if (!(p.min < p.max))
    return ctx.Error("min must be below max, got min " + std::to_string(p.min) + ", max " + std::to_string(p.max));
  const Tensor& in = ctx.input(0);
  TFG_RETURN_IF_ERROR(ctx.CheckType(in, DType::kFloat32, "input"));
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, DType::kFloat32));
  return ctx.SetOutputShape(0, in.shape);
}

Status EvalFakeQuant(OpContext& ctx) {
  const FakeQuantParams& p = ctx.node().P<FakeQuantParams>();
  const float qmin = 0.f, qmax = float((1 << p.num_bits) - 1);
  const float scale = (p.max - p.min) / (qmax - qmin);
  const float zp_from_min = qmin - p.min / scale;
  float zp;
  if (zp_from_min < qmin) zp = qmin;
  else if (zp_from_min > qmax) zp = qmax;
  else zp = float(uint16_t(std::round(zp_from_min)));
  const float lo = (qmin - zp) * scale, hi = (qmax - zp) * scale;
  const float inv = 1.0f / scale;
  const Tensor& in = ctx.input(0);
  const float* x = in.as<float>();
  float* y = ctx.output(0).as<float>();
  const int64_t n = in.num_elements();
  for (int64_t i = 0; i < n; ++i) {
    const float c = std::min(hi, std::max(lo, x[i]));
    y[i] = std::round((c - lo) * inv) * scale + lo;
  }
  return OkStatus();
}

}  // namespace

const OpImpl kOp_FAKE_QUANT = {ParseFakeQuant, PrepareFakeQuant, EvalFakeQuant, nullptr, false};

}  // namespace tflite_gpu
