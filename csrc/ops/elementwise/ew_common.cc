#include "ops/elementwise/ew_common.h"

#include <string>

namespace tflite_gpu {
namespace ew {

Status ParseFusedActivation(int v, Activation* out) {
  // ActivationFunctionType: NONE, RELU, RELU_N1_TO_1, RELU6, TANH, SIGN_BIT. (TFLite maps values
  // outside the enum to NONE; we refuse them as a malformed model.)
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

}  // namespace ew
}  // namespace tflite_gpu
