// Broadcast binary ops: ADD, SUB, MUL, DIV (fused activation), MAXIMUM, MINIMUM,
// SQUARED_DIFFERENCE, LOGICAL_AND, PRELU. Quantized ADD / SUB / MUL / DIV / SQUARED_DIFFERENCE /
// PRELU: quant_binary.cc.
//
// Semantics follow TensorFlow Lite's kernels:
//  * the fused activation of ADD/SUB/MUL/DIV is a clamp to CalculateActivationRange: RELU [0, max],
//    RELU6 [0, 6], RELU_N1_TO_1 [-1, 1], and NONE/TANH/SIGN_BIT to the finite range of the type
//    (TFLite ignores TANH/SIGN_BIT on these ops, and +-inf results become +-max); NaN stays NaN;
//  * integer arithmetic wraps on overflow (two's complement), int32 DIV truncates toward zero,
//    fails on a zero divisor and saturates INT_MIN / -1;
//  * MAXIMUM is a > b ? a : b and MINIMUM a < b ? a : b (so a NaN in b wins, a NaN in a loses);
//  * PRELU is x >= 0 ? x : x * alpha with alpha broadcast to the input's shape.
#include <complex>

#include "ops/elementwise/ew_common.h"
#include "ops/elementwise/quant_ew.h"
#include "ops/quant_common.h"

namespace tflite_gpu {
namespace {

using ew::BcastPlan;

struct ActParams {
  Activation act = Activation::kNone;
  bool pot_scale_int16 = true;  // AddOptions / SubOptions field 1
};

struct BinaryData {
  BcastPlan plan;
};

bool IsQuantizedType(DType t) { return t == DType::kInt8 || t == DType::kUInt8 || t == DType::kInt16; }

// Field 0 of AddOptions / SubOptions / MulOptions / DivOptions is fused_activation_function.
Status ParseAct(const OptionsView& opts, Node& node) {
  auto p = std::make_shared<ActParams>();
  TFG_RETURN_IF_ERROR(ew::ParseFusedActivation(opts.Get<int8_t>(0, 0), &p->act));
  if (opts.type == 11 || opts.type == 28) p->pot_scale_int16 = opts.GetBool(1, true);  // Add / SubOptions
  node.params = p;
  return OkStatus();
}

// Checks arity and types, sets the output's type and broadcast shape and stores the loop plan.
// `allowed` lists the accepted types (quantized int8/uint8/int16 arithmetic is refused with a
// message saying so). PRELU's output is the input's shape: alpha must broadcast into it.
Status PrepareBinary(OpContext& ctx, std::initializer_list<DType> allowed, bool output_is_input1_shape = false) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 2, 1, 1));
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.type != b.type)
    return ctx.Error(std::string("input types differ: ") + DTypeName(a.type) + " and " + DTypeName(b.type));
  bool ok = false;
  for (DType t : allowed) ok |= (t == a.type);
  if (!ok) {
    std::string list;
    for (DType t : allowed) list += std::string(list.empty() ? "" : ", ") + DTypeName(t);
    if (IsQuantizedType(a.type))
      return ctx.Error(std::string("quantized ") + DTypeName(a.type) + " inputs are not supported yet (supported: " + list + ")");
    return ctx.Error(std::string("unsupported input type ") + DTypeName(a.type) + " (supported: " + list + ")");
  }
  Dims out;
  TFG_RETURN_IF_ERROR(ew::BroadcastShape(ctx, a.shape, b.shape, &out));
  if (output_is_input1_shape && out != a.shape)
    return ctx.Error("alpha of shape " + DimsToString(b.shape) + " does not broadcast to the input shape " +
                     DimsToString(a.shape));
  auto data = std::make_shared<BinaryData>();
  data->plan = ew::MakeBcastPlan(a.shape, b.shape, out);
  if (data->plan.dims.size() > 64) return ctx.Error("broadcast pattern too complex (rank " + std::to_string(out.size()) + ")");
  ctx.node().user_data = data;
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, a.type));
  return ctx.SetOutputShape(0, out);
}

// ---- the element operations ----

// Unsigned type at least 32 bits wide: wrapping arithmetic without int promotion.
template <typename T>
using U = typename std::conditional<(sizeof(T) < 4), uint32_t, typename std::make_unsigned<T>::type>::type;

enum class Op { kAdd, kSub, kMul, kDiv, kMax, kMin, kSqDiff };

template <Op OP, typename T, bool kFloat = std::is_floating_point<T>::value>
struct Raw;
template <Op OP, typename T>
struct Raw<OP, T, true> {
  static T F(T a, T b) {
    switch (OP) {
      case Op::kAdd: return a + b;
      case Op::kSub: return a - b;
      case Op::kMul: return a * b;
      case Op::kDiv: return a / b;
      case Op::kMax: return a > b ? a : b;
      case Op::kMin: return a < b ? a : b;
      case Op::kSqDiff: { T d = a - b; return d * d; }
    }
    return T(0);
  }
};
template <Op OP, typename T>
struct Raw<OP, T, false> {
  // Wrapping two's-complement arithmetic (TFLite's int kernels overflow the same way).
  static T F(T a, T b) {
    switch (OP) {
      case Op::kAdd: return T(U<T>(a) + U<T>(b));
      case Op::kSub: return T(U<T>(a) - U<T>(b));
      case Op::kMul: return T(U<T>(a) * U<T>(b));
      case Op::kDiv: return T(0);  // handled by IntDivOp
      case Op::kMax: return a > b ? a : b;
      case Op::kMin: return a < b ? a : b;
      case Op::kSqDiff: { U<T> d = U<T>(a) - U<T>(b); return T(d * d); }
    }
    return T(0);
  }
};

template <Op OP, typename T>
struct ClampedOp {
  T lo, hi;
  T operator()(T a, T b) const { return ew::Clamp(Raw<OP, T>::F(a, b), lo, hi); }
};
template <Op OP, typename T>
struct PlainOp {
  T operator()(T a, T b) const { return Raw<OP, T>::F(a, b); }
};
// int32 division: truncation toward zero in 64 bits, then the activation clamp (which also
// saturates INT_MIN / -1). Divisors are checked for zero before.
struct IntDivOp {
  int32_t lo, hi;
  int32_t operator()(int32_t a, int32_t b) const {
    int64_t q = int64_t(a) / int64_t(b);
    return int32_t(std::min<int64_t>(std::max<int64_t>(q, lo), hi));
  }
};
struct AndOp {
  uint8_t operator()(uint8_t a, uint8_t b) const { return uint8_t((a != 0) & (b != 0)); }
};
struct PreluOp {
  float operator()(float x, float alpha) const { return x >= 0.f ? x : x * alpha; }
};
// FLOAT16 ADD / MUL (ADD v6, MUL v8): each element in float, clamped to the activation range within
// the half range [-65504, 65504] (so an overflow gives +-65504, as TFLite), rounded to half.
template <Op OP>
struct HalfOp {
  float lo, hi;
  uint16_t operator()(uint16_t a, uint16_t b) const {
    return FloatToHalf(ew::Clamp(Raw<OP, float>::F(HalfToFloat(a), HalfToFloat(b)), lo, hi));
  }
};
struct ComplexMulOp {  // COMPLEX64 MUL (v6): the complex product; no activation
  std::complex<float> operator()(std::complex<float> a, std::complex<float> b) const { return a * b; }
};

template <typename T, typename F>
Status Run(OpContext& ctx, bool ref, const F& f) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  Tensor& o = ctx.output(0);
  if (ref) {
    ew::RunBinaryRef(a.shape, a.as<T>(), b.shape, b.as<T>(), o.shape, o.as<T>(), f);
  } else {
    ew::RunBinary(ctx.pool(), ctx.node().U<BinaryData>()->plan, a.as<T>(), b.as<T>(), o.as<T>(), f);
  }
  return OkStatus();
}

template <Op OP, typename T>
Status RunClamped(OpContext& ctx, bool ref) {
  ClampedOp<OP, T> f;
  ActivationRangeOfType<T>(int(ctx.node().P<ActParams>().act), &f.lo, &f.hi);
  return Run<T>(ctx, ref, f);
}

// ---- ADD / SUB / MUL / DIV ----

// ADD (v5) and MUL (v7) take INT16 without quantization parameters as plain integers (wrapping,
// then the activation clamp); with parameters INT16 is the quantized kernel.
template <Op OP>
bool PlainInt16(OpContext& ctx) {
  return (OP == Op::kAdd || OP == Op::kMul) && ctx.input(0).type == DType::kInt16 && ctx.input(0).quant.scale.empty() &&
         (ctx.num_inputs() < 2 || !ctx.has_input(1) || ctx.input(1).quant.scale.empty()) &&
         ctx.output(0).quant.scale.empty();
}

template <Op OP>
Status PrepareArith(OpContext& ctx) {
  // Quantized ADD / SUB / MUL / DIV: quant_binary.cc.
  if (OP == Op::kDiv && ctx.num_inputs() == 2 && ctx.has_input(0) && IsQuantizedType(ctx.input(0).type))
    return ew::PrepareQuantDiv(ctx, int(ctx.node().P<ActParams>().act));
  if (OP != Op::kDiv && ctx.num_inputs() == 2 && ctx.has_input(0) && IsQuantizedType(ctx.input(0).type) &&
      !PlainInt16<OP>(ctx))
    return ew::PrepareQuantBinary(ctx, OP == Op::kAdd ? ew::QBinary::kAdd : OP == Op::kSub ? ew::QBinary::kSub : ew::QBinary::kMul,
                                  int(ctx.node().P<ActParams>().act), ctx.node().P<ActParams>().pot_scale_int16);
  if (OP == Op::kDiv) return PrepareBinary(ctx, {DType::kFloat32, DType::kInt32});
  if (OP == Op::kAdd)
    return PrepareBinary(ctx, {DType::kFloat32, DType::kInt32, DType::kInt64, DType::kFloat16, DType::kInt16});
  if (OP == Op::kMul) {
    if (ctx.num_inputs() >= 1 && ctx.has_input(0) && ctx.input(0).type == DType::kComplex64 &&
        ctx.node().P<ActParams>().act != Activation::kNone)
      return ctx.Error("a fused activation is not allowed for COMPLEX64 inputs (as TFLite)");
    return PrepareBinary(ctx, {DType::kFloat32, DType::kInt32, DType::kInt64, DType::kFloat16, DType::kInt16,
                               DType::kUInt32, DType::kComplex64});
  }
  return PrepareBinary(ctx, {DType::kFloat32, DType::kInt32, DType::kInt64});
}

template <Op OP>
Status RunHalf(OpContext& ctx, bool ref) {
  HalfOp<OP> f;
  ActivationRangeOfType<float>(int(ctx.node().P<ActParams>().act), &f.lo, &f.hi);
  f.lo = std::max(f.lo, -65504.f);
  f.hi = std::min(f.hi, 65504.f);
  return Run<uint16_t>(ctx, ref, f);
}

template <Op OP>
Status EvalArithImpl(OpContext& ctx, bool ref) {
  if (IsQuantizedType(ctx.input(0).type) && !PlainInt16<OP>(ctx))
    return OP == Op::kDiv ? ew::EvalQuantDiv(ctx, ref) : ew::EvalQuantBinary(ctx, ref);
  switch (ctx.input(0).type) {
    case DType::kFloat32: return RunClamped<OP, float>(ctx, ref);
    case DType::kFloat16:
      if constexpr (OP == Op::kAdd || OP == Op::kMul) return RunHalf<OP>(ctx, ref);
      break;
    case DType::kInt16:
      if constexpr (OP == Op::kAdd || OP == Op::kMul) return RunClamped<OP, int16_t>(ctx, ref);
      break;
    case DType::kUInt32:
      if constexpr (OP == Op::kMul) return RunClamped<OP, uint32_t>(ctx, ref);
      break;
    case DType::kComplex64:
      if constexpr (OP == Op::kMul) return Run<std::complex<float>>(ctx, ref, ComplexMulOp());
      break;
    case DType::kInt32:
      if (OP == Op::kDiv) {
        const Tensor& b = ctx.input(1);
        const int32_t* pb = b.as<int32_t>();
        const int64_t nb = b.num_elements();
        for (int64_t i = 0; i < nb; ++i)
          if (pb[i] == 0) return ctx.Error("division by zero (int32 divisor element " + std::to_string(i) + ")");
        IntDivOp f;
        ActivationRangeOfType<int32_t>(int(ctx.node().P<ActParams>().act), &f.lo, &f.hi);
        return Run<int32_t>(ctx, ref, f);
      }
      return RunClamped<OP, int32_t>(ctx, ref);
    case DType::kInt64: return RunClamped<OP, int64_t>(ctx, ref);
    default: break;
  }
  return ctx.Error(std::string("unsupported type ") + DTypeName(ctx.input(0).type));
}
template <Op OP> Status EvalArith(OpContext& ctx) { return EvalArithImpl<OP>(ctx, false); }
template <Op OP> Status EvalArithRef(OpContext& ctx) { return EvalArithImpl<OP>(ctx, true); }

// ---- MAXIMUM / MINIMUM / SQUARED_DIFFERENCE ----

template <Op OP>
Status PreparePlain(OpContext& ctx) {
  if (OP == Op::kSqDiff) {
    // Quantized SQUARED_DIFFERENCE (INT8): quant_binary.cc.
    if (ctx.num_inputs() == 2 && ctx.has_input(0) && IsQuantizedType(ctx.input(0).type))
      return ew::PrepareQuantSqDiff(ctx);
    return PrepareBinary(ctx, {DType::kFloat32, DType::kInt32});
  }
  // Maximum/minimum compare raw values, so the quantized types are plain integers here (TFLite
  // checks no quantization parameters); bad ones in the file are still refused.
  TFG_RETURN_IF_ERROR(quant::ValidateNodeQuant(ctx));
  return PrepareBinary(ctx, {DType::kFloat32, DType::kInt32, DType::kInt64, DType::kInt8, DType::kUInt8,
                             DType::kInt16});
}

template <Op OP>
Status EvalPlainImpl(OpContext& ctx, bool ref) {
  if (OP == Op::kSqDiff && ctx.input(0).type == DType::kInt8) return ew::EvalQuantSqDiff(ctx, ref);
  switch (ctx.input(0).type) {
    case DType::kFloat32: return Run<float>(ctx, ref, PlainOp<OP, float>());
    case DType::kInt32: return Run<int32_t>(ctx, ref, PlainOp<OP, int32_t>());
    case DType::kInt64: return Run<int64_t>(ctx, ref, PlainOp<OP, int64_t>());
    case DType::kInt8: return Run<int8_t>(ctx, ref, PlainOp<OP, int8_t>());
    case DType::kUInt8: return Run<uint8_t>(ctx, ref, PlainOp<OP, uint8_t>());
    case DType::kInt16: return Run<int16_t>(ctx, ref, PlainOp<OP, int16_t>());
    default: return ctx.Error(std::string("unsupported type ") + DTypeName(ctx.input(0).type));
  }
}
template <Op OP> Status EvalPlain(OpContext& ctx) { return EvalPlainImpl<OP>(ctx, false); }
template <Op OP> Status EvalPlainRef(OpContext& ctx) { return EvalPlainImpl<OP>(ctx, true); }

// ---- LOGICAL_AND ----

Status PrepareAnd(OpContext& ctx) { return PrepareBinary(ctx, {DType::kBool}); }
Status EvalAnd(OpContext& ctx) { return Run<uint8_t>(ctx, false, AndOp()); }
Status EvalAndRef(OpContext& ctx) { return Run<uint8_t>(ctx, true, AndOp()); }

// ---- PRELU ----

Status PreparePrelu(OpContext& ctx) {
  if (ctx.num_inputs() == 2 && ctx.has_input(0) && IsQuantizedType(ctx.input(0).type)) return ew::PrepareQuantPrelu(ctx);
  return PrepareBinary(ctx, {DType::kFloat32}, /*output_is_input1_shape=*/true);
}
Status EvalPrelu(OpContext& ctx) {
  if (IsQuantizedType(ctx.input(0).type)) return ew::EvalQuantPrelu(ctx, false);
  return Run<float>(ctx, false, PreluOp());
}
Status EvalPreluRef(OpContext& ctx) {
  if (IsQuantizedType(ctx.input(0).type)) return ew::EvalQuantPrelu(ctx, true);
  return Run<float>(ctx, true, PreluOp());
}

}  // namespace

const OpImpl kOp_ADD = {ParseAct, PrepareArith<Op::kAdd>, EvalArith<Op::kAdd>, EvalArithRef<Op::kAdd>, false};
const OpImpl kOp_SUB = {ParseAct, PrepareArith<Op::kSub>, EvalArith<Op::kSub>, EvalArithRef<Op::kSub>, false};
const OpImpl kOp_MUL = {ParseAct, PrepareArith<Op::kMul>, EvalArith<Op::kMul>, EvalArithRef<Op::kMul>, false};
const OpImpl kOp_DIV = {ParseAct, PrepareArith<Op::kDiv>, EvalArith<Op::kDiv>, EvalArithRef<Op::kDiv>, false};
const OpImpl kOp_MAXIMUM = {nullptr, PreparePlain<Op::kMax>, EvalPlain<Op::kMax>, EvalPlainRef<Op::kMax>, false};
const OpImpl kOp_MINIMUM = {nullptr, PreparePlain<Op::kMin>, EvalPlain<Op::kMin>, EvalPlainRef<Op::kMin>, false};
const OpImpl kOp_SQUARED_DIFFERENCE = {nullptr, PreparePlain<Op::kSqDiff>, EvalPlain<Op::kSqDiff>,
                                       EvalPlainRef<Op::kSqDiff>, false};
const OpImpl kOp_LOGICAL_AND = {nullptr, PrepareAnd, EvalAnd, EvalAndRef, false};
const OpImpl kOp_PRELU = {nullptr, PreparePrelu, EvalPrelu, EvalPreluRef, false};

namespace ew {
Activation FusedActivationOf(const Node& node) { return node.P<ActParams>().act; }
}  // namespace ew

}  // namespace tflite_gpu
