#include "ops/elementwise/ew_common.h"

namespace tflite_gpu {
namespace ew {

Status ParseFusedActivation(int v, Activation* out) {
  // ActivationFunctionType: NONE, RELU, RELU_N1_TO_1, RELU6, TANH, SIGN_BIT.
  if (v < 0 || v > 5) return InvalidArgument("unknown fused activation function " + std::to_string(v));
  *out = static_cast<Activation>(v);
  return OkStatus();
}

Status BroadcastShape(const OpContext& ctx, const Dims& a, const Dims& b, Dims* out) {
  const size_t rank = std::max(a.size(), b.size());
  Dims r(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    // i counts from the innermost dimension.
    int32_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    int32_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    int32_t d;
    if (da == db || db == 1) d = da;
    else if (da == 1) d = db;
    else
      return ctx.Error("shapes " + DimsToString(a) + " and " + DimsToString(b) + " are not broadcastable");
    r[rank - 1 - i] = d;
  }
  *out = std::move(r);
  return OkStatus();
}

BcastPlan MakeBcastPlan(const Dims& a, const Dims& b, const Dims& out) {
  // Walk from the innermost dimension out; drop extent-1 levels; merge neighbours in which each
  // input is either contiguous in both or broadcast in both.
  struct Level { int64_t ext; bool fa, fb; };
  std::vector<Level> lv;  // innermost first
  const size_t rank = out.size();
  for (size_t i = 0; i < rank; ++i) {
    int64_t d = out[rank - 1 - i];
    if (d == 1) continue;
    bool fa = i < a.size() && a[a.size() - 1 - i] != 1;
    bool fb = i < b.size() && b[b.size() - 1 - i] != 1;
    if (!lv.empty() && lv.back().fa == fa && lv.back().fb == fb) {
      lv.back().ext *= d;
    } else {
      lv.push_back({d, fa, fb});
    }
  }
  if (lv.empty()) lv.push_back({1, true, true});
  BcastPlan p;
  const size_t n = lv.size();
  p.dims.resize(n);
  p.sa.resize(n);
  p.sb.resize(n);
  int64_t stride_a = 1, stride_b = 1;
  p.total = 1;
  for (size_t j = 0; j < n; ++j) {
    const Level& l = lv[j];
    size_t k = n - 1 - j;  // plan levels are outermost first
    p.dims[k] = l.ext;
    p.sa[k] = l.fa ? stride_a : 0;
    p.sb[k] = l.fb ? stride_b : 0;
    if (l.fa) stride_a *= l.ext;
    if (l.fb) stride_b *= l.ext;
    p.total *= l.ext;
  }
  return p;
}

uint16_t DoubleToHalf(double x) {
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  if (std::isnan(x)) return sign | 0x7e00;
  const double a = std::fabs(x);
  if (a >= 65520.0) return sign | 0x7c00;  // 65504 is the largest half; 65520 rounds up to inf
  if (a < 0x1p-14) {
    // Subnormal (or zero): units of 2^-24; 1024 units is the smallest normal, encoded alike.
    double m = std::nearbyint(a * 0x1p24);
    return uint16_t(sign | uint16_t(m));
  }
  int e = 0;
  std::frexp(a, &e);  // a = f * 2^e, f in [0.5, 1)
  int E = e - 1;      // a in [2^E, 2^(E+1))
  double m = std::nearbyint(std::ldexp(a, 10 - E));  // in [1024, 2048]
  if (m >= 2048.0) {
    m = 1024.0;
    ++E;
  }
  if (E > 15) return sign | 0x7c00;
  return uint16_t(sign | uint16_t((E + 15) << 10) | uint16_t(int(m) - 1024));
}

}  // namespace ew
}  // namespace tflite_gpu
