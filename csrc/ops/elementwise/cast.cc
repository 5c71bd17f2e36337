// CAST between FLOAT32, FLOAT16, BFLOAT16, FLOAT64, INT8, INT16, INT32, INT64, UINT8, UINT16,
// UINT32, BOOL, COMPLEX64, and FLOAT32 <-> INT4 / UINT4 / INT2 (held unpacked, one byte an
// element), as TensorFlow Lite's CAST kernel does it:
//   * float -> integer truncates toward zero and saturates to the integer's range; NaN gives the
//     maximum;
//   * integer -> integer wraps (two's complement); anything -> bool is x != 0; bool -> number 0/1;
//   * -> float16 / bfloat16 converts to float, then rounds to nearest even (overflow to inf);
//   * complex64 -> real types takes the real part (then as from float); real -> complex64 is
//     (float(x), 0);
//   * FLOAT32 -> INT4 / UINT4 / INT2 truncates and saturates to [-8, 7] / [0, 15] / [-2, 1] (NaN
//     gives the maximum), as float -> integer; only FLOAT32 is cast to or from the packed types
//     (LiteRT's CAST takes no other pair).
// The output type is the output tensor's type in the model (the options are informational).
#include <complex>

#include "ops/elementwise/ew_common.h"

namespace tflite_gpu {
namespace {

struct Half { uint16_t bits; };
struct BF16 { uint16_t bits; };
struct Bool8 { uint8_t v; };
using Complex = std::complex<float>;
// The packed types, one byte an element: value range [Lo, Hi].
template <typename S, int Lo, int Hi> struct Packed { S v; };
using Int4 = Packed<int8_t, -8, 7>;
using UInt4 = Packed<uint8_t, 0, 15>;
using Int2 = Packed<int8_t, -2, 1>;
template <typename T> struct IsPacked : std::false_type {};
template <typename S, int Lo, int Hi> struct IsPacked<Packed<S, Lo, Hi>> : std::true_type {};

inline float BF16ToFloat(uint16_t b) {
  uint32_t u = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint16_t FloatToBF16(float f) {  // round to nearest even; NaN stays a (quiet) NaN
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if (std::isnan(f)) return uint16_t((u >> 16) | 0x0040);
  u += 0x7fff + ((u >> 16) & 1);
  return uint16_t(u >> 16);
}

bool CastTypeSupported(DType t) {
  switch (t) {
    case DType::kFloat32: case DType::kFloat16: case DType::kFloat64: case DType::kInt8:
    case DType::kInt16: case DType::kInt32: case DType::kInt64: case DType::kUInt8:
    case DType::kUInt16: case DType::kUInt32: case DType::kBool: case DType::kBFloat16:
    case DType::kComplex64:
      return true;
    default:
      return false;
  }
}
bool IsPackedType(DType t) { return DTypePackedBits(t) != 0; }

template <typename P> constexpr int32_t LoOf();
template <typename P> constexpr int32_t HiOf();
template <> constexpr int32_t LoOf<Packed<int8_t, -8, 7>>() { return -8; }
template <> constexpr int32_t HiOf<Packed<int8_t, -8, 7>>() { return 7; }
template <> constexpr int32_t LoOf<Packed<uint8_t, 0, 15>>() { return 0; }
template <> constexpr int32_t HiOf<Packed<uint8_t, 0, 15>>() { return 15; }
template <> constexpr int32_t LoOf<Packed<int8_t, -2, 1>>() { return -2; }
template <> constexpr int32_t HiOf<Packed<int8_t, -2, 1>>() { return 1; }

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
  } else if constexpr (std::is_same<From, BF16>::value) {
    if constexpr (std::is_same<To, BF16>::value) return x;
    else return Conv<To, float>(BF16ToFloat(x.bits));
  } else if constexpr (IsPacked<From>::value) {
    return Conv<To, int32_t>(int32_t(x.v));
  } else if constexpr (std::is_same<From, Complex>::value) {
    if constexpr (std::is_same<To, Complex>::value) return x;
    else return Conv<To, float>(x.real());
  } else if constexpr (std::is_same<From, Bool8>::value) {
    return Conv<To, uint8_t>(uint8_t(x.v != 0));
  } else if constexpr (std::is_same<To, Bool8>::value) {
    return Bool8{uint8_t(x != From(0))};
  } else if constexpr (std::is_same<To, Complex>::value) {
    return Complex(static_cast<float>(x), 0.f);
  } else if constexpr (IsPacked<To>::value) {
    // float -> packed: truncate, saturate; NaN gives the maximum (as float -> integer).
    using S = decltype(To::v);
    if (std::isnan(double(x))) return To{S(HiOf<To>())};
    const double t = std::trunc(double(x));
    return To{S(t >= HiOf<To>() ? HiOf<To>() : (t <= LoOf<To>() ? LoOf<To>() : int32_t(t)))};
  } else if constexpr (std::is_same<To, BF16>::value) {
    return BF16{FloatToBF16(static_cast<float>(x))};
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
    case DType::kBFloat16: CastLoop<BF16, From>(pool, n, in, out); break;
    case DType::kComplex64: CastLoop<Complex, From>(pool, n, in, out); break;
    default:
      if constexpr (std::is_same<From, float>::value) {
        switch (to) {
          case DType::kInt4: CastLoop<Int4, From>(pool, n, in, out); return OkStatus();
          case DType::kUInt4: CastLoop<UInt4, From>(pool, n, in, out); return OkStatus();
          case DType::kInt2: CastLoop<Int2, From>(pool, n, in, out); return OkStatus();
          default: break;
        }
      }
      return ctx.Error(std::string("unsupported output type ") + DTypeName(to));
  }
  return OkStatus();
}

Status PrepareCast(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(1, 1, 1, 1));
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.output(0);
  const bool packed_pair = (IsPackedType(x.type) && y.type == DType::kFloat32) ||
                           (x.type == DType::kFloat32 && IsPackedType(y.type));
  if (!packed_pair && (!CastTypeSupported(x.type) || !CastTypeSupported(y.type)))
    return ctx.Error(std::string("unsupported cast from ") + DTypeName(x.type) + " to " + DTypeName(y.type) +
                     (IsPackedType(x.type) || IsPackedType(y.type)
                          ? " (INT4 / UINT4 / INT2 are cast only to or from FLOAT32)"
                          : ""));
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
    case DType::kBFloat16: return CastFrom<BF16>(ctx, y.type, n, in, out);
    case DType::kComplex64: return CastFrom<Complex>(ctx, y.type, n, in, out);
    case DType::kInt4: CastLoop<float, Int4>(ctx.pool(), n, in, out); return OkStatus();
    case DType::kUInt4: CastLoop<float, UInt4>(ctx.pool(), n, in, out); return OkStatus();
    case DType::kInt2: CastLoop<float, Int2>(ctx.pool(), n, in, out); return OkStatus();
    default: return ctx.Error(std::string("unsupported input type ") + DTypeName(x.type));
  }
}

}  // namespace

const OpImpl kOp_CAST = {nullptr, PrepareCast, EvalCast, nullptr, false};

}  // namespace tflite_gpu
