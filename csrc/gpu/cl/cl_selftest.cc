// cl_selftest: standalone check of the OpenCL runtime layer.
//   g++ -std=c++17 -O1 -Wall -Wextra -Icsrc/include -Icsrc csrc/gpu/cl/*.cc csrc/runtime/env.cc -ldl -o /tmp/cl_selftest
//   /tmp/cl_selftest [device spec]        (spec as for SelectDevice: index, name substring, cpu/gpu)
// Loads OpenCL, lists devices, picks one, runs a float vector add and a vload_half/vstore_half
// kernel, checks results, exercises events (passive/active waits, profiling), a failing build
// (log in the status), and the program cache on disk twice (the second pass must load the
// binary). Prints "N passed, N failed"; exit status 0 only when nothing failed.
// When TFLITE_GPU_SITE_PACKAGES is unset it asks python3 for the site-packages folders so the
// pyopencl-bundled loader and PoCL are found as they would be from the Python package.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <dirent.h>
#include <unistd.h>

#include "gpu/cl/cl_api.h"
#include "gpu/cl/device.h"
#include "gpu/cl/program_cache.h"
#include "gpu/cl/runtime.h"
#include "ops/half.h"
#include "runtime/env.h"

namespace tcl = tflite_gpu::cl;
using tflite_gpu::FloatToHalf;
using tflite_gpu::HalfToFloat;
using tflite_gpu::Status;

namespace {

int g_passed = 0;
int g_failed = 0;

void Check(bool ok, const std::string& what, const std::string& detail = "") {
  if (ok) ++g_passed;
  else ++g_failed;
  std::printf("[%s] %s%s%s\n", ok ? "PASS" : "FAIL", what.c_str(), detail.empty() ? "" : ": ", detail.c_str());
}

bool CheckStatus(const Status& st, const std::string& what) {
  Check(st.ok(), what, st.message());
  return st.ok();
}

void SetSitePackagesFromPython() {
  if (!tflite_gpu::env::SitePackages().empty()) return;
  FILE* p = popen("python3 -c \"import site,sys; sys.stdout.write(':'.join(site.getsitepackages()))\" 2>/dev/null", "r");
  if (!p) return;
  char buf[4096] = {0};
  size_t n = std::fread(buf, 1, sizeof(buf) - 1, p);
  pclose(p);
  if (n > 0) setenv("TFLITE_GPU_SITE_PACKAGES", buf, 1);
}

// Removes a flat directory of files (the cache directory has no subfolders).
void RemoveDir(const std::string& dir) {
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != "..") unlink((dir + "/" + n).c_str());
    }
    closedir(d);
  }
  rmdir(dir.c_str());
}

const char* kAddSource = R"CL(
__kernel void vadd(__global const float* a, __global const float* b, __global float* c,
                   int n, float scale, int4 pad) {
  int i = get_global_id(0);
  if (i < n) c[i] = (a[i] + b[i]) * scale + (float)pad.w;
}
)CL";

const char* kHalfSource = R"CL(
__kernel void half_axpy(__global const half* x, __global half* y, float alpha, int n) {
  int i = get_global_id(0);
  if (i >= n) return;
  float v = alpha * vload_half(i, x) + vload_half(i, y);
  vstore_half(v, i, y);
}
)CL";

void TestVectorAdd(const tcl::Context& ctx, tcl::ProgramCache* cache) {
  const int n = 1000;
  std::vector<float> a(n), b(n), c(n, -1.f);
  for (int i = 0; i < n; ++i) {
    a[i] = static_cast<float>(i);
    b[i] = 0.5f * static_cast<float>(i);
  }
  auto program = cache->GetOrBuild(kAddSource, "-cl-fast-relaxed-math");
  if (!CheckStatus(program.status(), "build vadd")) return;
  auto kernel = tcl::Kernel::Create(**program, "vadd");
  if (!CheckStatus(kernel.status(), "create kernel vadd")) return;
  auto ba = tcl::Buffer::Create(ctx, n * sizeof(float), tcl::CL_MEM_READ_ONLY, a.data());
  auto bb = tcl::Buffer::Create(ctx, n * sizeof(float), tcl::CL_MEM_READ_ONLY);
  auto bc = tcl::Buffer::Create(ctx, n * sizeof(float));
  if (!CheckStatus(ba.ok() ? (bb.ok() ? bc.status() : bb.status()) : ba.status(), "create buffers")) return;
  tcl::Event write_ev;
  CheckStatus(bb->Write(ctx, b.data(), n * sizeof(float), 0, /*blocking=*/false, &write_ev), "non-blocking write");
  CheckStatus(write_ev.Wait(tcl::WaitMode::kPassive), "passive wait on write event");
  tcl::Kernel& k = kernel.value();
  CheckStatus(k.SetBuffer(0, *ba), "set arg buffer");
  k.SetBuffer(1, *bb);
  k.SetBuffer(2, *bc);
  k.SetInt(3, n);
  k.SetFloat(4, 2.0f);
  CheckStatus(k.SetInt4(5, tcl::Int4{0, 0, 0, 3}), "set arg int4");
  tcl::Event ev;
  CheckStatus(k.Launch(ctx, {1024}, {64}, &ev), "launch vadd 1024/64");
  CheckStatus(ev.Wait(tcl::WaitMode::kActive), "active wait on kernel event");
  auto times = ev.Times();
  Check(times.ok() && times->end >= times->start, "profiling times",
        times.ok() ? std::to_string(times->DurationNs()) + " ns" : times.status().message());
  CheckStatus(bc->Read(ctx, c.data(), n * sizeof(float)), "blocking read");
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += std::fabs(c[i] - ((a[i] + b[i]) * 2.0f + 3.0f)) > 1e-3f;
  Check(bad == 0, "vadd results", std::to_string(bad) + " mismatches");
  Check(!k.Launch(ctx, {1000}, {64}).ok(), "non-multiple local size rejected");
}

void TestHalf(const tcl::Context& ctx, tcl::ProgramCache* cache) {
  const int n = 256;
  std::vector<uint16_t> x(n), y(n), out(n);
  for (int i = 0; i < n; ++i) {
    x[i] = FloatToHalf(static_cast<float>(i % 32));
    y[i] = FloatToHalf(0.25f * static_cast<float>(i % 16));
  }
  auto program = cache->GetOrBuild(kHalfSource, "");
  if (!CheckStatus(program.status(), "build half_axpy (vload_half/vstore_half)")) return;
  auto kernel = tcl::Kernel::Create(**program, "half_axpy");
  auto bx = tcl::Buffer::Create(ctx, n * 2, tcl::CL_MEM_READ_ONLY, x.data());
  auto by = tcl::Buffer::Create(ctx, n * 2, tcl::CL_MEM_READ_WRITE, y.data());
  if (!CheckStatus(kernel.ok() ? (bx.ok() ? by.status() : bx.status()) : kernel.status(), "half kernel + buffers")) return;
  kernel->SetBuffer(0, *bx);
  kernel->SetBuffer(1, *by);
  kernel->SetFloat(2, 2.0f);
  kernel->SetInt(3, n);
  CheckStatus(kernel->Launch(ctx, {static_cast<size_t>(n)}), "launch half_axpy (driver-chosen local size)");
  CheckStatus(ctx.WaitIdle(tcl::WaitMode::kActive), "WaitIdle active (marker spin)");
  CheckStatus(by->Read(ctx, out.data(), n * 2), "read halves");
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    float want = 2.0f * static_cast<float>(i % 32) + 0.25f * static_cast<float>(i % 16);
    bad += std::fabs(HalfToFloat(out[i]) - want) > 1e-2f;
  }
  Check(bad == 0, "half results", std::to_string(bad) + " mismatches");
}

void TestBuildError(const tcl::Context& ctx) {
  auto p = tcl::Program::Build(ctx, "__kernel void broken(__global float* x) { x[0] = undefined_symbol; }", "");
  bool has_log = !p.ok() && p.status().message().find("undefined_symbol") != std::string::npos;
  Check(!p.ok() && has_log, "build failure carries the build log",
        p.ok() ? "unexpectedly built" : p.status().message().substr(0, 160));
}

void TestDiskCache(const tcl::Context& ctx, const std::string& dir) {
  RemoveDir(dir);
  {
    tcl::ProgramCache first(&ctx, dir);
    TestVectorAdd(ctx, &first);
    TestHalf(ctx, &first);
    auto again = first.GetOrBuild(kAddSource, "-cl-fast-relaxed-math");
    Check(again.ok() && first.stats().memory_hits == 1, "memory hit on repeat");
    Check(first.stats().source_builds == 2 && first.stats().disk_writes == 2, "pass 1 built and wrote 2 programs",
          "builds=" + std::to_string(first.stats().source_builds) + " writes=" + std::to_string(first.stats().disk_writes));
  }
  {
    tcl::ProgramCache second(&ctx, dir);
    TestVectorAdd(ctx, &second);
    TestHalf(ctx, &second);
    Check(second.stats().disk_hits == 2 && second.stats().source_builds == 0, "pass 2 loaded both binaries from disk",
          "disk_hits=" + std::to_string(second.stats().disk_hits) + " builds=" + std::to_string(second.stats().source_builds));
  }
  {
    // Corrupt one file (truncate it): must be ignored and rebuilt, not fatal.
    tcl::ProgramCache third(&ctx, dir);
    std::string path = third.DiskPath(tcl::ProgramCache::Digest(third.KeyMaterial(kAddSource, "-cl-fast-relaxed-math")));
    Check(truncate(path.c_str(), 40) == 0, "truncate cache file");
    auto p = third.GetOrBuild(kAddSource, "-cl-fast-relaxed-math");
    Check(p.ok() && third.stats().disk_rejects == 1 && third.stats().source_builds == 1 && third.stats().disk_writes == 1,
          "short file ignored, rebuilt and rewritten");
    tcl::ProgramCache fourth(&ctx, dir);
    auto q = fourth.GetOrBuild(kAddSource, "-cl-fast-relaxed-math");
    Check(q.ok() && fourth.stats().disk_hits == 1, "rewritten file loads again");
  }
}

void TestForeignContext(const tcl::Context& ctx) {
  auto shared = tcl::Context::FromRaw(ctx.context(), ctx.queue());
  if (!CheckStatus(shared.status(), "adopt raw cl_context/cl_command_queue")) return;
  Check((*shared)->device().name == ctx.device().name && (*shared)->profiling() == ctx.profiling(),
        "adopted context reports the same device and profiling flag");
  tcl::ProgramCache cache(shared->get());
  auto p = cache.GetOrBuild(kAddSource, "");
  CheckStatus(p.status(), "build on the adopted context");
}

}  // namespace

int main(int argc, char** argv) {
  SetSitePackagesFromPython();
  auto ocl = tcl::LoadOpenCl();
  if (!CheckStatus(ocl.status(), "load OpenCL")) {
    std::printf("%d passed, %d failed\n", g_passed, g_failed);
    return 1;
  }
  for (const std::string& line : (*ocl)->log()) std::printf("  loader: %s\n", line.c_str());
  auto devices = tcl::ListDevices();
  if (!CheckStatus(devices.status(), "list devices")) {
    std::printf("%d passed, %d failed\n", g_passed, g_failed);
    return 1;
  }
  for (const tcl::DeviceInfo& d : devices.value())
    std::printf("  device %s\n    via %s; %s; %s\n", d.Summary().c_str(), d.platform_source.c_str(),
                d.device_version.c_str(), d.opencl_c_version.c_str());
  Check(!tcl::SelectFrom(devices.value(), "99").ok(), "out-of-range index rejected");
  Check(tcl::SelectFrom(devices.value(), "0").ok(), "index spec");
  auto dev = tcl::SelectDevice(argc > 1 ? argv[1] : "");
  if (!CheckStatus(dev.status(), "select device")) {
    std::printf("%d passed, %d failed\n", g_passed, g_failed);
    return 1;
  }
  std::printf("  selected %s\n", dev->Summary().c_str());
  auto ctx = tcl::Context::Create(dev.value(), /*profiling=*/true);
  if (CheckStatus(ctx.status(), "create context + profiling queue")) {
    std::string dir = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/tflite_gpu_cl_selftest_cache." +
                      std::to_string(getpid());
    TestBuildError(**ctx);
    TestDiskCache(**ctx, dir);
    TestForeignContext(**ctx);
    RemoveDir(dir);
  }
  std::printf("%d passed, %d failed\n", g_passed, g_failed);
  return g_failed == 0 ? 0 : 1;
}
