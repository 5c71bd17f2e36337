// Fused activations (TFLite's ActivationFunctionType), in one place: the enum, the names, the
// float clamp bounds every kernel derives its range from (CPU float and integer kernels, the
// quantized bounds in quant_common.h, the GPU kernels), and the OpenCL clamp snippet.
#pragma once
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>

namespace tflite_gpu {

enum class Activation : int8_t { kNone = 0, kRelu = 1, kReluN1To1 = 2, kRelu6 = 3, kTanh = 4, kSignBit = 5 };

// The schema name of a fused activation value ("unknown" outside the enum).
inline const char* ActivationName(int act) {
  switch (act) {
    case 0: return "NONE";
    case 1: return "RELU";
    case 2: return "RELU_N1_TO_1";
    case 3: return "RELU6";
    case 4: return "TANH";
    case 5: return "SIGN_BIT";
    default: return "unknown";
  }
}

// Float clamp bounds as TFLite's CalculateActivationRange computes them: RELU [0, inf), RELU6
// [0, 6], RELU_N1_TO_1 [-1, 1]; NONE, TANH and SIGN_BIT (-inf, inf) (TFLite's kernels with a fused
// activation ignore TANH/SIGN_BIT). Returns false for a value outside the enum (bounds (-inf, inf)).
inline bool ActivationBounds(int act, float* lo, float* hi) {
  const float inf = std::numeric_limits<float>::infinity();
  *lo = -inf;
  *hi = inf;
  switch (act) {
    case 0: case 4: case 5: return true;
    case 1: *lo = 0.f; return true;
    case 2: *lo = -1.f; *hi = 1.f; return true;
    case 3: *lo = 0.f; *hi = 6.f; return true;
    default: return false;
  }
}
inline float ActivationMin(Activation a) {
  float lo, hi;
  ActivationBounds(int(a), &lo, &hi);
  return lo;
}
inline float ActivationMax(Activation a) {
  float lo, hi;
  ActivationBounds(int(a), &lo, &hi);
  return hi;
}

// The bounds in type T with an unbounded side at the type's finite range (lowest / max), as
// TFLite's CalculateActivationRange<T>: for floats, NONE still maps +-inf to +-FLT_MAX.
template <typename T>
inline void ActivationRangeOfType(int act, T* lo, T* hi) {
  float flo, fhi;
  ActivationBounds(act, &flo, &fhi);
  *lo = flo == -std::numeric_limits<float>::infinity() ? std::numeric_limits<T>::lowest() : T(flo);
  *hi = fhi == std::numeric_limits<float>::infinity() ? std::numeric_limits<T>::max() : T(fhi);
}

// OpenCL statements clamping the float4 variable `v` to the activation's bounds, keeping NaN
// (select on v < lo / v > hi). An unbounded side clamps to -+FLT_MAX when `finite_range` (the
// elementwise ops, as ActivationRangeOfType<float>) and is left out otherwise (conv, as TFLite's
// float conv kernels). Empty for a value outside the enum.
inline std::string ActivationClampCode(int act, const std::string& v, bool finite_range) {
  float lo, hi;
  if (!ActivationBounds(act, &lo, &hi)) return "";
  auto lit = [](float f) {
    if (f == std::numeric_limits<float>::infinity()) return std::string("FLT_MAX");
    if (f == -std::numeric_limits<float>::infinity()) return std::string("-FLT_MAX");
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", f);
    std::string s = buf;
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    return s + "f";
  };
  const float inf = std::numeric_limits<float>::infinity();
  std::string c;
  if (finite_range || lo != -inf)
    c += v + " = select(" + v + ", (float4)(" + lit(lo) + "), " + v + " < (float4)(" + lit(lo) + "));\n";
  if (finite_range || hi != inf)
    c += v + " = select(" + v + ", (float4)(" + lit(hi) + "), " + v + " > (float4)(" + lit(hi) + "));\n";
  return c;
}

}  // namespace tflite_gpu
