#include "ops/simd.h"

#include <string>

#include "runtime/env.h"

namespace tflite_gpu {
namespace simd {

const char* IsaName(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return "scalar";
    case Isa::kSse2: return "sse2";
    case Isa::kAvx2: return "avx2";
    case Isa::kAvx512: return "avx512";
  }
  return "?";
}

static Isa DetectIsa() {
  Isa best = Isa::kScalar;
#if TFG_X86
  best = Isa::kSse2;
#if defined(__GNUC__) || defined(__clang__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) best = Isa::kAvx2;
  if (best == Isa::kAvx2 && __builtin_cpu_supports("avx512f")) best = Isa::kAvx512;
#endif
#endif
  std::string s = env::CpuIsa();
  if (!s.empty()) {
    Isa want = best;
    if (s == "scalar") want = Isa::kScalar;
    else if (s == "sse2") want = Isa::kSse2;
    else if (s == "avx2") want = Isa::kAvx2;
    else if (s == "avx512" || s == "avx512vnni") want = Isa::kAvx512;
    if (int(want) < int(best)) best = want;  // can only lower what the CPU has
  }
  return best;
}

Isa ActiveIsa() {
  static const Isa isa = DetectIsa();
  return isa;
}

bool HaveAvx512Vnni() {
  static const bool vnni = [] {
    if (ActiveIsa() < Isa::kAvx512) return false;
#if TFG_X86 && (defined(__GNUC__) || defined(__clang__))
    if (!(__builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
          __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vnni")))
      return false;
    return env::CpuIsa() != "avx512";
#else
    return false;
#endif
  }();
  return vnni;
}

}  // namespace simd
}  // namespace tflite_gpu
