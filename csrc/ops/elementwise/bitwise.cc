// BITWISE_XOR and RIGHT_SHIFT: broadcast binary ops on INT8/INT16/INT32/UINT8/UINT16/UINT32 (both
// inputs and the output of one type), as TFLite: x ^ y; x >> y with the shift clamped to
// [0, bits - 1] (arithmetic shift for signed types).
#include <algorithm>

#include "ops/elementwise/ew_common.h"

namespace tflite_gpu {
namespace {

struct BitData {
  ew::BcastPlan plan;
};

Status PrepareBitwise(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 2, 1, 1));
  if (!ctx.has_input(0) || !ctx.has_input(1)) return ctx.Error("missing input");
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.type != b.type)
    return ctx.Error(std::string("input types differ: ") + DTypeName(a.type) + " and " + DTypeName(b.type));
  switch (a.type) {
    case DType::kInt8: case DType::kInt16: case DType::kInt32:
    case DType::kUInt8: case DType::kUInt16: case DType::kUInt32: break;
    default:
      return ctx.Error(std::string("unsupported input type ") + DTypeName(a.type) +
                       " (supported: INT8, INT16, INT32, UINT8, UINT16, UINT32)");
  }
  TFG_RETURN_IF_ERROR(ctx.CheckType(ctx.output(0), a.type, "output"));
  Dims out;
  TFG_RETURN_IF_ERROR(ew::BroadcastShape(ctx, a.shape, b.shape, &out));
  auto data = std::make_shared<BitData>();
  data->plan = ew::MakeBcastPlan(a.shape, b.shape, out);
  if (data->plan.dims.size() > 64) return ctx.Error("broadcast pattern too complex");
  ctx.node().user_data = data;
  return ctx.SetOutputShape(0, out);
}

template <typename T>
struct Xor {
  T operator()(T x, T y) const { return T(x ^ y); }
};
template <typename T>
struct Shr {
  T operator()(T x, T y) const {
    constexpr T kMax = T(sizeof(T) * 8 - 1);
    const T s = y < T(0) ? T(0) : (y > kMax ? kMax : y);
    return T(x >> s);
  }
};

template <template <typename> class Op, typename T>
Status RunT(OpContext& ctx, bool ref) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  Tensor& o = ctx.output(0);
  if (ref)
    ew::RunBinaryRef(a.shape, a.as<T>(), b.shape, b.as<T>(), o.shape, o.as<T>(), Op<T>());
  else
    ew::RunBinary(ctx.pool(), ctx.node().U<BitData>()->plan, a.as<T>(), b.as<T>(), o.as<T>(), Op<T>());
  return OkStatus();
}

template <template <typename> class Op, bool kRef>
Status EvalBitwise(OpContext& ctx) {
  switch (ctx.input(0).type) {
    case DType::kInt8: return RunT<Op, int8_t>(ctx, kRef);
    case DType::kInt16: return RunT<Op, int16_t>(ctx, kRef);
    case DType::kInt32: return RunT<Op, int32_t>(ctx, kRef);
    case DType::kUInt8: return RunT<Op, uint8_t>(ctx, kRef);
    case DType::kUInt16: return RunT<Op, uint16_t>(ctx, kRef);
    default: return RunT<Op, uint32_t>(ctx, kRef);
  }
}

}  // namespace

const OpImpl kOp_BITWISE_XOR = {nullptr, PrepareBitwise, EvalBitwise<Xor, false>, EvalBitwise<Xor, true>, false};
const OpImpl kOp_RIGHT_SHIFT = {nullptr, PrepareBitwise, EvalBitwise<Shr, false>, EvalBitwise<Shr, true>, false};

}  // namespace tflite_gpu
