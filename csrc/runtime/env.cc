#include "runtime/env.h"

#include <cstdlib>

namespace tflite_gpu {
namespace env {
std::string Get(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

std::string Device() { return Get("TFLITE_GPU_DEVICE"); }
std::string OpFilter() { return Get("TFLITE_GPU_OP_FILTER"); }
std::string CacheDir() { return Get("TFLITE_GPU_CACHE_DIR"); }
std::string OpenClLibrary() { return Get("TFLITE_GPU_OPENCL_LIBRARY"); }
std::string OpenClVendors() { return Get("TFLITE_GPU_OPENCL_VENDORS"); }
std::string SitePackages() { return Get("TFLITE_GPU_SITE_PACKAGES"); }
std::string CpuIsa() { return Get("TFLITE_GPU_CPU_ISA"); }
std::string CpuSplit() { return Get("TFLITE_GPU_CPU_SPLIT"); }
std::string DebugBreakKernel() { return Get("TFLITE_GPU_DEBUG_BREAK_KERNEL"); }

size_t MaxLoopTensorBytes() {
  std::string s = Get("TFLITE_GPU_MAX_LOOP_TENSOR_BYTES");
  if (s.empty()) return 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  return (end && *end == 0 && v > 0) ? size_t(v) : 0;
}

uint64_t MaxWhileIterations() {
  std::string s = Get("TFLITE_GPU_MAX_WHILE_ITERATIONS");
  if (s.empty()) return 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  return (end && *end == 0) ? uint64_t(v) : 0;
}

namespace {
// The variable as a non-negative decimal integer (digits only, at most 18), or -1 when unset or
// malformed.
int64_t Digits(const char* var) {
  const std::string v = Get(var);
  if (v.empty() || v.size() > 18) return -1;
  int64_t r = 0;
  for (char c : v) {
    if (c < '0' || c > '9') return -1;
    r = r * 10 + (c - '0');
  }
  return r;
}
}  // namespace

int64_t SpinUs() {
  const int64_t v = Digits("TFLITE_GPU_SPIN_US");
  return v < 0 ? 200 : v > 100000 ? 100000 : v;
}

int64_t MinParallelWork(int64_t dflt) {
  const int64_t v = Digits("TFLITE_GPU_MIN_PARALLEL_WORK");
  return v > 0 ? v : dflt;
}

bool Fp16AllHalf() {
  std::string s = Get("TFLITE_GPU_FP16_ALL_HALF");
  return !s.empty() && s != "0";
}

bool PinnedHost() { return Get("TFLITE_GPU_PINNED_HOST") != "0"; }
int CudaGraph() {
  const std::string v = Get("TFLITE_GPU_CUDA_GRAPH");
  return v == "0" ? 0 : v == "serial" ? 1 : 2;
}
bool CpuFusion() { return Get("TFLITE_GPU_CPU_FUSION") != "0"; }

int CopyThreads() {
  const int64_t v = Digits("TFLITE_GPU_COPY_THREADS");
  return v >= 1 && v <= 64 ? int(v) : 4;
}

bool DebugSentinels() {
  std::string s = Get("TFLITE_GPU_DEBUG_SENTINELS");
  return !s.empty() && s != "0";
}

static bool ListHas(const char* var, const char* lever) {
  const std::string v = Get(var);
  size_t i = 0;
  while (i <= v.size()) {
    size_t j = v.find(',', i);
    if (j == std::string::npos) j = v.size();
    std::string tok = v.substr(i, j - i);
    while (!tok.empty() && tok.front() == ' ') tok.erase(tok.begin());
    while (!tok.empty() && tok.back() == ' ') tok.pop_back();
    if (tok == lever || tok == "all") return true;
    i = j + 1;
  }
  return false;
}

bool FusionDisabled(const char* lever) {
  if (ListHas("TFLITE_GPU_DISABLE_FUSION", lever)) return true;
  const std::string l = lever;
  if (l == "tail") return !ListHas("TFLITE_GPU_ENABLE_FUSION", lever);  // opt-in (env.h)
  return false;
}

std::string ConvGemm() { return Get("TFLITE_GPU_CONV_GEMM"); }
std::string ConvMma() { return Get("TFLITE_GPU_CONV_MMA"); }
std::string ConvSplitK() { return Get("TFLITE_GPU_CONV_SPLITK"); }
bool Vload() { return Get("TFLITE_GPU_VLOAD") == "1"; }

int DwRows() {
  const std::string v = Get("TFLITE_GPU_DW_ROWS");
  return v == "1" ? 1 : v == "2" ? 2 : v == "4" ? 4 : 0;
}

int64_t FusionDwPwMaxMacs(int64_t dflt) {
  const int64_t v = Digits("TFLITE_GPU_FUSION_DWPW_MAX_MACS");
  return v < 0 ? dflt : v;
}
int64_t FusionDwPwMaxTimes(int64_t dflt) {
  const int64_t v = Digits("TFLITE_GPU_FUSION_DWPW_MAX_TIMES");
  return v < 0 ? dflt : v;
}

}  // namespace env
}  // namespace tflite_gpu
