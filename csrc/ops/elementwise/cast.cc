// CAST between FLOAT32, FLOAT16, FLOAT64, INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, BOOL,
// as TensorFlow Lite's CAST kernel does it:
//   * float -> integer truncates toward zero and saturates to the integer's range; NaN gives the
//     maximum;
//   * integer -> integer wraps (two's complement); anything -> bool is x != 0; bool -> number 0/1;
//   * -> float16 converts to float, then rounds to nearest even (overflow to inf).
// The output type is the output tensor's type in the model (the options are informational).
#include "ops/elementwise/ew_common.h"

namespace tflite_gpu {
namespace {

struct Half { uint16_t bits; };
struct Bool8 { uint8_t v; };

bool CastTypeSupported(DType t) {
  switch (t) {
    case DType::kFloat32: case DType::kFloat16: case DType::kFloat64: case DType::kInt8:
    case DType::kInt16: case DType::kInt32: case DType::kInt64: case DType::kUInt8:
    case DType::kUInt16: case DType::kUInt32: case DType::kBool:
      return true;
    default:
      return false;
  }
}

template <typename To, typename F>
inline To SaturateFloat(F x) {
  // F is float or double. F(max) may round up (2^31 for INT32_MAX), which is still right: every
  // value below it truncates into range. NaN gives the maximum (as TFLite).
  constexpr To kMax = std::numeric_limits<To>::max(), kMin = std::numeric_limits<To>::lowest();
  const bool hi = !(x < F(kMax));  // also NaN
  const bool lo = x <= F(kMin);
  const F xc = (hi || lo) ? F(0) : x;
  const To t = To(xc);
  return hi ? kMax : (lo ? kMin : t);
}

template <typename To, typename From>
inline To Conv(From x) {
  if constexpr (std::is_same<From, Half>::value) {
    if constexpr (std::is_same<To, Half>::value) return x;
    else return Conv<To, float>(HalfToFloat(x.bits));
  } else if constexpr (std::is_same<From, Bool8>::value) {
    return Conv<To, uint8_t>(uint8_t(x.v != 0));
  } else if constexpr (std::is_same<To, Bool8>::value) {
    return Bool8{uint8_t(x != From(0))};
  } else if constexpr (std::is_same<To, Half>::value) {
    // Through float first, as TFLite (a double is rounded twice: to float, then to half).
    return Half{FloatToHalf(static_cast<float>(x))};
  } else if constexpr (std::is_floating_point<From>::value && std::is_integral<To>::value) {
    return SaturateFloat<To>(x);
  } else {
    return static_cast<To>(x);
  }
}

template <typename To, typename From>
void CastLoop(ThreadPool* pool, int64_t n, const void* in, void* out) {
  const From* src = static_cast<const From*>(in);
  To* dst = static_cast<To*>(out);
  ew::RunUnary(pool, n, src, dst, [](From v) { return Conv<To, From>(v); });
}

template <typename From>
Status CastFrom(OpContext& ctx, DType to, int64_t n, const void* in, void* out) {
  ThreadPool* pool = ctx.pool();
  switch (to) {
    case DType::kFloat32: CastLoop<float, From>(pool, n, in, out); break;
    case DType::kFloat16: CastLoop<Half, From>(pool, n, in, out); break;
    case DType::kFloat64: CastLoop<double, From>(pool, n, in, out); break;
    case DType::kInt8: CastLoop<int8_t, From>(pool, n, in, out); break;
    case DType::kInt16: CastLoop<int16_t, From>(pool, n, in, out); break;
    case DType::kInt32: CastLoop<int32_t, From>(pool, n, in, out); break;
    case DType::kInt64: CastLoop<int64_t, From>(pool, n, in, out); break;
    case DType::kUInt8: CastLoop<uint8_t, From>(pool, n, in, out); break;
    case DType::kUInt16: CastLoop<uint16_t, From>(pool, n, in, out); break;
    case DType::kUInt32: CastLoop<uint32_t, From>(pool, n, in, out); break;
    case DType::kBool: CastLoop<Bool8, From>(pool, n, in, out); break;
    default: return ctx.Error(std::string("unsupported output type ") + DTypeName(to));
  }
  return OkStatus();
}

Status PrepareCast(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(1, 1, 1, 1));
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.output(0);
  if (!CastTypeSupported(x.type) || !CastTypeSupported(y.type))
    return ctx.Error(std::string("unsupported cast from ") + DTypeName(x.type) + " to " + DTypeName(y.type));
  return ctx.SetOutputShape(0, x.shape);
}

Status EvalCast(OpContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const int64_t n = x.num_elements();
  const void* in = x.data;
  void* out = y.data;
  if (x.type == y.type && x.type != DType::kBool) {
    if (n > 0) std::memcpy(out, in, size_t(n) * DTypeSize(x.type));
    return OkStatus();
  }
  switch (x.type) {
    case DType::kFloat32: return CastFrom<float>(ctx, y.type, n, in, out);
    case DType::kFloat16: return CastFrom<Half>(ctx, y.type, n, in, out);
    case DType::kFloat64: return CastFrom<double>(ctx, y.type, n, in, out);
    case DType::kInt8: return CastFrom<int8_t>(ctx, y.type, n, in, out);
    case DType::kInt16: return CastFrom<int16_t>(ctx, y.type, n, in, out);
    case DType::kInt32: return CastFrom<int32_t>(ctx, y.type, n, in, out);
    case DType::kInt64: return CastFrom<int64_t>(ctx, y.type, n, in, out);
    case DType::kUInt8: return CastFrom<uint8_t>(ctx, y.type, n, in, out);
    case DType::kUInt16: return CastFrom<uint16_t>(ctx, y.type, n, in, out);
    case DType::kUInt32: return CastFrom<uint32_t>(ctx, y.type, n, in, out);
    case DType::kBool: return CastFrom<Bool8>(ctx, y.type, n, in, out);
    default: return ctx.Error(std::string("unsupported input type ") + DTypeName(x.type));
  }
}

}  // namespace

const OpImpl kOp_CAST = {nullptr, PrepareCast, EvalCast, nullptr, false};

}  // namespace tflite_gpu
