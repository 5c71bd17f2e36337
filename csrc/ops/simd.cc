#include "ops/simd.h"

#include <string>

#if defined(__linux__) && (defined(__x86_64__) || defined(_M_X64))
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#define TFG_AMX_DETECT 1
#endif

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
    else if (s == "avx512" || s == "avx512vnni" || s == "amx") want = Isa::kAvx512;
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

bool HaveAmxInt8() {
  static const bool amx = [] {
    if (!HaveAvx512Vnni()) return false;
    const std::string want = env::CpuIsa();
    if (!want.empty() && want != "amx") return false;
#ifdef TFG_AMX_DETECT
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
    if (!((d >> 24) & 1) || !((d >> 25) & 1)) return false;  // AMX-TILE, AMX-INT8
    // Linux >= 5.16 hands out the 8 KiB tile data state (XFEATURE 18) on request, per process.
    constexpr long kReqXcompPerm = 0x1023, kGetXcompPerm = 0x1022, kXtileData = 18;
    if (syscall(SYS_arch_prctl, kReqXcompPerm, kXtileData) != 0) return false;
    unsigned long perm = 0;
    if (syscall(SYS_arch_prctl, kGetXcompPerm, &perm) != 0) return false;
    return ((perm >> kXtileData) & 1) != 0;
#else
    return false;
#endif
  }();
  return amx;
}

}  // namespace simd
}  // namespace tflite_gpu
