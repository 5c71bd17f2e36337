// Broadcast binary math ops: POW, FLOOR_DIV, FLOOR_MOD, ATAN2, and ADD_N (n same-shape inputs).
// Semantics as TensorFlow Lite's kernels:
//  * POW: float std::pow; int32 as std::pow in double truncated to int32 (out of range: INT_MIN,
//    as x86 LiteRT gives), a negative exponent is an error;
//  * FLOOR_DIV: floor(double(a) / double(b)) converted back to the type; an integer zero divisor
//    is an error;
//  * FLOOR_MOD: the truncated remainder (fmod for float), moved to the divisor's sign when the
//    two signs differ; an integer zero divisor is an error;
//  * ATAN2: std::atan2(a, b), same-shape inputs only (no broadcasting);
//  * ADD_N: the inputs summed in input order (integers wrap).
#include "ops/elementwise/ew_common.h"

namespace tflite_gpu {
namespace {

struct BinData {
  ew::BcastPlan plan;
};

Status PrepareB(OpContext& ctx, std::initializer_list<DType> allowed) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 2, 1, 1));
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.type != b.type)
    return ctx.Error(std::string("input types differ: ") + DTypeName(a.type) + " and " + DTypeName(b.type));
  bool ok = false;
  std::string list;
  for (DType t : allowed) {
    ok |= t == a.type;
    list += std::string(list.empty() ? "" : ", ") + DTypeName(t);
  }
  if (!ok) return ctx.Error(std::string("unsupported input type ") + DTypeName(a.type) + " (supported: " + list + ")");
  Dims out;
  TFG_RETURN_IF_ERROR(ew::BroadcastShape(ctx, a.shape, b.shape, &out));
  auto data = std::make_shared<BinData>();
  data->plan = ew::MakeBcastPlan(a.shape, b.shape, out);
  if (data->plan.dims.size() > 64) return ctx.Error("broadcast pattern too complex");
  ctx.node().user_data = data;
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, a.type));
  return ctx.SetOutputShape(0, out);
}

template <typename T, typename F>
Status RunB(OpContext& ctx, bool ref, const F& f, int64_t chunk = ew::kCheapChunk) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  Tensor& o = ctx.output(0);
  if (ref)
    ew::RunBinaryRef(a.shape, a.as<T>(), b.shape, b.as<T>(), o.shape, o.as<T>(), f);
  else
    ew::RunBinary(ctx.pool(), ctx.node().U<BinData>()->plan, a.as<T>(), b.as<T>(), o.as<T>(), f, chunk);
  return OkStatus();
}

template <typename T>
Status CheckNoZero(OpContext& ctx, int input, const char* what) {
  const Tensor& t = ctx.input(input);
  const T* p = t.as<T>();
  for (int64_t i = 0; i < t.num_elements(); ++i)
    if (p[i] == T(0)) return ctx.Error(std::string(what) + " (element " + std::to_string(i) + " is 0)");
  return OkStatus();
}

// ---- POW ----

// TFLite computes std::pow in double and converts to int32; on x86 (cvttsd2si) a result outside
// the int32 range becomes INT_MIN.
struct IntPow {
  int32_t operator()(int32_t base, int32_t e) const {
    const double r = std::pow(double(base), double(e));
    if (!(r < 2147483648.0 && r > -2147483649.0)) return std::numeric_limits<int32_t>::min();
    return int32_t(r);
  }
};

Status PreparePow(OpContext& ctx) { return PrepareB(ctx, {DType::kFloat32, DType::kInt32}); }
template <bool kRef>
Status EvalPow(OpContext& ctx) {
  if (ctx.input(0).type == DType::kInt32) {
    const Tensor& e = ctx.input(1);
    for (int64_t i = 0; i < e.num_elements(); ++i)
      if (e.as<int32_t>()[i] < 0) return ctx.Error("integers to negative integer powers are not allowed");
    return RunB<int32_t>(ctx, kRef, IntPow());
  }
  return RunB<float>(ctx, kRef, [](float a, float b) { return std::pow(a, b); }, ew::kCostlyChunk);
}

// ---- FLOOR_DIV / FLOOR_MOD ----

template <typename T>
struct FloorDivF {
  T operator()(T a, T b) const { return T(std::floor(double(a) / double(b))); }
};

inline float TruncMod(float a, float b) { return std::fmod(a, b); }
// a % -1 is 0 (avoids the INT_MIN % -1 trap).
template <typename T>
inline T TruncMod(T a, T b) { return b == T(-1) ? T(0) : T(a % b); }

template <typename T>
struct FloorModF {
  T operator()(T a, T b) const {
    const T m = TruncMod(a, b);
    return (m != T(0)) && ((b < T(0)) != (m < T(0))) ? T(m + b) : m;
  }
};

Status PrepareFloorDiv(OpContext& ctx) {
  return PrepareB(ctx, {DType::kFloat32, DType::kInt32, DType::kInt16, DType::kInt8});
}
template <bool kRef>
Status EvalFloorDiv(OpContext& ctx) {
  switch (ctx.input(0).type) {
    case DType::kFloat32: return RunB<float>(ctx, kRef, FloorDivF<float>());
    case DType::kInt32:
      TFG_RETURN_IF_ERROR(CheckNoZero<int32_t>(ctx, 1, "division by zero"));
      return RunB<int32_t>(ctx, kRef, FloorDivF<int32_t>());
    case DType::kInt16:
      TFG_RETURN_IF_ERROR(CheckNoZero<int16_t>(ctx, 1, "division by zero"));
      return RunB<int16_t>(ctx, kRef, FloorDivF<int16_t>());
    case DType::kInt8:
      TFG_RETURN_IF_ERROR(CheckNoZero<int8_t>(ctx, 1, "division by zero"));
      return RunB<int8_t>(ctx, kRef, FloorDivF<int8_t>());
    default: return ctx.Error("unsupported type");
  }
}

Status PrepareFloorMod(OpContext& ctx) {
  return PrepareB(ctx, {DType::kFloat32, DType::kInt32, DType::kInt64, DType::kInt16, DType::kInt8});
}
template <bool kRef>
Status EvalFloorMod(OpContext& ctx) {
  switch (ctx.input(0).type) {
    case DType::kFloat32: return RunB<float>(ctx, kRef, FloorModF<float>());
    case DType::kInt32:
      TFG_RETURN_IF_ERROR(CheckNoZero<int32_t>(ctx, 1, "division by zero"));
      return RunB<int32_t>(ctx, kRef, FloorModF<int32_t>());
    case DType::kInt64:
      TFG_RETURN_IF_ERROR(CheckNoZero<int64_t>(ctx, 1, "division by zero"));
      return RunB<int64_t>(ctx, kRef, FloorModF<int64_t>());
    case DType::kInt16:
      TFG_RETURN_IF_ERROR(CheckNoZero<int16_t>(ctx, 1, "division by zero"));
      return RunB<int16_t>(ctx, kRef, FloorModF<int16_t>());
    case DType::kInt8:
      TFG_RETURN_IF_ERROR(CheckNoZero<int8_t>(ctx, 1, "division by zero"));
      return RunB<int8_t>(ctx, kRef, FloorModF<int8_t>());
    default: return ctx.Error("unsupported type");
  }
}

// ---- ATAN2 ----

// TFLite's ATAN2 does not broadcast: y and x have one shape.
Status PrepareAtan2(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(PrepareB(ctx, {DType::kFloat32}));
  if (ctx.input(0).shape != ctx.input(1).shape)
    return ctx.Error("y " + DimsToString(ctx.input(0).shape) + " and x " + DimsToString(ctx.input(1).shape) +
                     " must have the same shape (ATAN2 does not broadcast)");
  return OkStatus();
}
template <bool kRef>
Status EvalAtan2(OpContext& ctx) {
  return RunB<float>(ctx, kRef, [](float a, float b) { return std::atan2(a, b); }, ew::kCostlyChunk);
}

// ---- ADD_N ----

Status PrepareAddN(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 1 << 16, 1, 1));
  const Tensor& a = ctx.input(0);
  if (a.type != DType::kFloat32 && a.type != DType::kInt32)
    return ctx.Error(std::string("unsupported input type ") + DTypeName(a.type) + " (supported: FLOAT32, INT32)");
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    const Tensor& b = ctx.input(i);
    if (b.type != a.type)
      return ctx.Error("input " + std::to_string(i) + " has type " + DTypeName(b.type) + ", input 0 " + DTypeName(a.type));
    if (b.shape != a.shape)
      return ctx.Error("input " + std::to_string(i) + " has shape " + DimsToString(b.shape) + ", input 0 " +
                       DimsToString(a.shape));
  }
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, a.type));
  return ctx.SetOutputShape(0, a.shape);
}

template <typename T>
void AddN(OpContext& ctx, bool ref) {
  const int n_in = ctx.num_inputs();
  T* o = ctx.output(0).as<T>();
  const int64_t n = ctx.output(0).num_elements();
  using A = typename std::conditional<std::is_integral<T>::value, uint32_t, T>::type;
  auto range = [&](int64_t b, int64_t e) {
    const T* p0 = ctx.input(0).as<T>();
    for (int64_t i = b; i < e; ++i) o[i] = p0[i];
    for (int k = 1; k < n_in; ++k) {
      const T* p = ctx.input(k).as<T>();
      for (int64_t i = b; i < e; ++i) o[i] = T(A(o[i]) + A(p[i]));
    }
  };
  if (ref) range(0, n);
  else ParallelFor(ctx.pool(), n, range, ew::kCheapChunk);
}

template <bool kRef>
Status EvalAddN(OpContext& ctx) {
  if (ctx.input(0).type == DType::kInt32) AddN<int32_t>(ctx, kRef);
  else AddN<float>(ctx, kRef);
  return OkStatus();
}

}  // namespace

const OpImpl kOp_POW = {nullptr, PreparePow, EvalPow<false>, EvalPow<true>, false};
const OpImpl kOp_FLOOR_DIV = {nullptr, PrepareFloorDiv, EvalFloorDiv<false>, EvalFloorDiv<true>, false};
const OpImpl kOp_FLOOR_MOD = {nullptr, PrepareFloorMod, EvalFloorMod<false>, EvalFloorMod<true>, false};
const OpImpl kOp_ATAN2 = {nullptr, PrepareAtan2, EvalAtan2<false>, EvalAtan2<true>, false};
const OpImpl kOp_ADD_N = {nullptr, PrepareAddN, EvalAddN<false>, EvalAddN<true>, false};

}  // namespace tflite_gpu
