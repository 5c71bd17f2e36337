// Unary math ops: ABS, NEG, SQUARE, SIGN (float32 and integer types where TFLite has them), LOG,
// SIN, COS, FLOOR, CEIL, ROUND, ELU, GELU, RELU_0_TO_1 (float32). Semantics as TensorFlow Lite's
// kernels:
//   ROUND rounds half to even (TFLite's RoundToNearest); SIGN is (0 < x) - (x < 0) (NaN stays NaN);
//   ELU is x < 0 ? expm1(x) : x; GELU is 0.5 x (1 + erf(x / sqrt 2)), or with approximate=true
//   0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))); RELU_0_TO_1 is min(max(x, 0), 1) keeping NaN;
//   integer ABS/NEG wrap (INT_MIN stays INT_MIN), as two's-complement arithmetic does.
// The fast kernels run the same per-element functions in parallel chunks (the cheap ones
// vectorise); the reference kernels are plain loops.
#include "ops/elementwise/ew_common.h"
#include "ops/pooling/pool_common.h"

namespace tflite_gpu {
namespace {

std::string TypeList(const std::vector<DType>& l) {
  std::string s;
  for (DType t : l) s += std::string(s.empty() ? "" : ", ") + DTypeName(t);
  return s;
}

Status PrepareUnaryTyped(OpContext& ctx, const std::vector<DType>& allowed) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(1, 1, 1, 1));
  const Tensor& x = ctx.input(0);
  bool ok = false;
  for (DType t : allowed) ok |= t == x.type;
  if (!ok) {
    const bool q = x.type == DType::kInt8 || x.type == DType::kUInt8 || x.type == DType::kInt16;
    return ctx.Error(std::string(q ? "quantized " : "unsupported ") + DTypeName(x.type) + " input is not supported (supported: " +
                     TypeList(allowed) + ")");
  }
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, x.type));
  return ctx.SetOutputShape(0, x.shape);
}

Status PrepareFloat(OpContext& ctx) { return PrepareUnaryTyped(ctx, {DType::kFloat32}); }

template <typename T, typename F>
Status MapT(OpContext& ctx, bool ref, const F& f, int64_t chunk = ew::kCheapChunk) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const int64_t n = x.num_elements();
  const T* px = x.as<T>();
  T* py = y.as<T>();
  if (ref) {
    for (int64_t i = 0; i < n; ++i) py[i] = f(px[i]);
  } else {
    ew::RunUnary(ctx.pool(), n, px, py, f, chunk);
  }
  return OkStatus();
}

// ---- ABS / NEG / SQUARE / SIGN ----

struct AbsF {
  float operator()(float v) const { return std::fabs(v); }
  int32_t operator()(int32_t v) const { return v < 0 ? int32_t(0u - uint32_t(v)) : v; }
  int64_t operator()(int64_t v) const { return v < 0 ? int64_t(0ull - uint64_t(v)) : v; }
};
struct NegF {
  float operator()(float v) const { return -v; }
  int32_t operator()(int32_t v) const { return int32_t(0u - uint32_t(v)); }
  int64_t operator()(int64_t v) const { return int64_t(0ull - uint64_t(v)); }
};
struct SignF {
  // NaN stays NaN (v != v only for NaN).
  template <typename T> T operator()(T v) const { return v != v ? v : T(int(T(0) < v) - int(v < T(0))); }
};

template <typename F>
Status EvalIntFloat(OpContext& ctx, bool ref) {
  switch (ctx.input(0).type) {
    case DType::kFloat32: return MapT<float>(ctx, ref, [](float v) { return F()(v); });
    case DType::kInt32: return MapT<int32_t>(ctx, ref, [](int32_t v) { return F()(v); });
    case DType::kInt64: return MapT<int64_t>(ctx, ref, [](int64_t v) { return F()(v); });
    case DType::kFloat64: return MapT<double>(ctx, ref, [](double v) { return SignF()(v); });
    default: return ctx.Error("unsupported type");
  }
}
template <typename F> Status EvalIF(OpContext& ctx) { return EvalIntFloat<F>(ctx, false); }
template <typename F> Status EvalIFRef(OpContext& ctx) { return EvalIntFloat<F>(ctx, true); }

Status PrepareAbs(OpContext& ctx) { return PrepareUnaryTyped(ctx, {DType::kFloat32, DType::kInt32}); }
Status PrepareNeg(OpContext& ctx) { return PrepareUnaryTyped(ctx, {DType::kFloat32, DType::kInt32, DType::kInt64}); }
Status PrepareSign(OpContext& ctx) { return PrepareUnaryTyped(ctx, {DType::kFloat32, DType::kFloat64, DType::kInt32}); }

// ---- float-only ops ----

inline float RoundHalfEven(float v) {
  const float f = std::floor(v);
  const float diff = v - f;
  if (diff < 0.5f) return f;
  if (diff == 0.5f) return std::fmod(f, 2.0f) == 0.f ? f : f + 1.0f;
  return f + 1.0f;
}

struct GeluParams {
  bool approximate = false;
};
constexpr uint8_t kGeluOptions = 116;
Status ParseGelu(const OptionsView& opts, Node& node) {
  fb::Table t = pooling::OptionsTable(opts, kGeluOptions);
  auto p = std::make_shared<GeluParams>();
  p->approximate = t.Bool(0, false);
  node.params = p;
  return OkStatus();
}
inline float GeluExact(float x) { return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752440f)); }
inline float GeluTanh(float x) {
  return 0.5f * x * (1.0f + std::tanh(0.79788456080286535588f * (x + 0.044715f * x * x * x)));
}

enum class UF { kSquare, kLog, kSin, kCos, kFloor, kCeil, kRound, kElu, kRelu01, kGelu };

template <UF K>
Status EvalFloatImpl(OpContext& ctx, bool ref) {
  switch (K) {
    case UF::kSquare: return MapT<float>(ctx, ref, [](float v) { return v * v; });
    case UF::kLog: return MapT<float>(ctx, ref, [](float v) { return std::log(v); }, ew::kCostlyChunk);
    case UF::kSin: return MapT<float>(ctx, ref, [](float v) { return std::sin(v); }, ew::kCostlyChunk);
    case UF::kCos: return MapT<float>(ctx, ref, [](float v) { return std::cos(v); }, ew::kCostlyChunk);
    case UF::kFloor: return MapT<float>(ctx, ref, [](float v) { return std::floor(v); });
    case UF::kCeil: return MapT<float>(ctx, ref, [](float v) { return std::ceil(v); });
    case UF::kRound: return MapT<float>(ctx, ref, [](float v) { return RoundHalfEven(v); });
    case UF::kElu: return MapT<float>(ctx, ref, [](float v) { return v < 0.f ? std::expm1(v) : v; }, ew::kCostlyChunk);
    case UF::kRelu01: return MapT<float>(ctx, ref, [](float v) { return ew::Clamp(v, 0.f, 1.f); });
    case UF::kGelu:
      if (ctx.node().P<GeluParams>().approximate)
        return MapT<float>(ctx, ref, [](float v) { return GeluTanh(v); }, ew::kCostlyChunk);
      return MapT<float>(ctx, ref, [](float v) { return GeluExact(v); }, ew::kCostlyChunk);
  }
  return OkStatus();
}
template <UF K> Status EvalFloat(OpContext& ctx) { return EvalFloatImpl<K>(ctx, false); }
template <UF K> Status EvalFloatRef(OpContext& ctx) { return EvalFloatImpl<K>(ctx, true); }

}  // namespace

const OpImpl kOp_ABS = {nullptr, PrepareAbs, EvalIF<AbsF>, EvalIFRef<AbsF>, false};
const OpImpl kOp_NEG = {nullptr, PrepareNeg, EvalIF<NegF>, EvalIFRef<NegF>, false};
const OpImpl kOp_SIGN = {nullptr, PrepareSign, EvalIF<SignF>, EvalIFRef<SignF>, false};
const OpImpl kOp_SQUARE = {nullptr, PrepareFloat, EvalFloat<UF::kSquare>, EvalFloatRef<UF::kSquare>, false};
const OpImpl kOp_LOG = {nullptr, PrepareFloat, EvalFloat<UF::kLog>, EvalFloatRef<UF::kLog>, false};
const OpImpl kOp_SIN = {nullptr, PrepareFloat, EvalFloat<UF::kSin>, EvalFloatRef<UF::kSin>, false};
const OpImpl kOp_COS = {nullptr, PrepareFloat, EvalFloat<UF::kCos>, EvalFloatRef<UF::kCos>, false};
const OpImpl kOp_FLOOR = {nullptr, PrepareFloat, EvalFloat<UF::kFloor>, EvalFloatRef<UF::kFloor>, false};
const OpImpl kOp_CEIL = {nullptr, PrepareFloat, EvalFloat<UF::kCeil>, EvalFloatRef<UF::kCeil>, false};
const OpImpl kOp_ROUND = {nullptr, PrepareFloat, EvalFloat<UF::kRound>, EvalFloatRef<UF::kRound>, false};
const OpImpl kOp_ELU = {nullptr, PrepareFloat, EvalFloat<UF::kElu>, EvalFloatRef<UF::kElu>, false};
const OpImpl kOp_RELU_0_TO_1 = {nullptr, PrepareFloat, EvalFloat<UF::kRelu01>, EvalFloatRef<UF::kRelu01>, false};
const OpImpl kOp_GELU = {ParseGelu, PrepareFloat, EvalFloat<UF::kGelu>, EvalFloatRef<UF::kGelu>, false};

namespace ew {
bool GeluApproximateOf(const Node& node) { return node.P<GeluParams>().approximate; }
}  // namespace ew

}  // namespace tflite_gpu
