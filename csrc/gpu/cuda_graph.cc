#include "gpu/cuda_graph.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>

#include "gpu/cl/runtime.h"
#include "runtime/env.h"

namespace tflite_gpu::gpu::cuda {
namespace {

// The CUDA driver API as we call it (public ABI of libcuda: handle types are pointers,
// CUdeviceptr is 64-bit, CUresult an int with 0 = success).
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using Handle = void*;

struct Api {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuGetErrorName)(CUresult, const char**);
  CUresult (*cuDeviceGetCount)(int*);
  CUresult (*cuDeviceGet)(CUdevice*, int);
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(Handle*, CUdevice);
  CUresult (*cuCtxPushCurrent)(Handle);
  CUresult (*cuCtxPopCurrent)(Handle*);
  CUresult (*cuModuleLoadData)(Handle*, const void*);
  CUresult (*cuModuleUnload)(Handle);
  CUresult (*cuModuleGetFunction)(Handle*, Handle, const char*);
  CUresult (*cuMemAlloc)(CUdeviceptr*, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, size_t);
  CUresult (*cuMemsetD8)(CUdeviceptr, unsigned char, size_t);
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void*, size_t, Handle);
  CUresult (*cuMemcpyDtoHAsync)(void*, CUdeviceptr, size_t, Handle);
  CUresult (*cuMemHostRegister)(void*, size_t, unsigned);
  CUresult (*cuMemHostUnregister)(void*);
  CUresult (*cuStreamCreate)(Handle*, unsigned);
  CUresult (*cuStreamDestroy)(Handle);
  CUresult (*cuStreamSynchronize)(Handle);
  CUresult (*cuStreamQuery)(Handle);
  CUresult (*cuStreamBeginCapture)(Handle, int);
  CUresult (*cuStreamEndCapture)(Handle, Handle*);
  CUresult (*cuGraphInstantiateWithFlags)(Handle*, Handle, unsigned long long);
  CUresult (*cuGraphLaunch)(Handle, Handle);
  CUresult (*cuGraphExecDestroy)(Handle);
  CUresult (*cuGraphDestroy)(Handle);
  CUresult (*cuLaunchKernelEx)(const void*, Handle, void**, void**);  // optional (CUDA 12+)
  CUresult (*cuLaunchKernel)(Handle, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, Handle,
                             void**, void**);
};

constexpr CUresult kNotReady = 600;              // CUDA_ERROR_NOT_READY
constexpr int kAttrPciBus = 33, kAttrPciDevice = 34, kAttrPciDomain = 50, kAttrCcMajor = 75;
constexpr int kLaunchAttrProgrammaticSerialization = 6;  // CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION

// cuLaunchKernelEx's CUlaunchConfig and CUlaunchAttribute (64-byte value union).
struct LaunchAttr {
  int id;
  char pad[4];
  union {
    char bytes[64];
    int value;
  } v;
};
struct LaunchConfig {
  unsigned grid[3], block[3], shared;
  Handle stream;
  LaunchAttr* attrs;
  unsigned num_attrs;
};
constexpr unsigned kStreamNonBlocking = 1;       // CU_STREAM_NON_BLOCKING
constexpr int kCaptureRelaxed = 2;               // CU_STREAM_CAPTURE_MODE_RELAXED
constexpr unsigned kHostRegisterPortable = 1;    // CU_MEMHOSTREGISTER_PORTABLE
// cl_nv_device_attribute_query
constexpr uint32_t kClPciBusNv = 0x4008, kClPciSlotNv = 0x4009, kClPciDomainNv = 0x400A;

std::string ErrorText(const Api* a, CUresult r) {
  const char* name = nullptr;
  if (a && a->cuGetErrorName && a->cuGetErrorName(r, &name) == 0 && name) return std::string(name) + " (" + std::to_string(r) + ")";
  return "CUresult " + std::to_string(r);
}

Status Check(const Api* a, CUresult r, const std::string& what) {
  return r == 0 ? OkStatus() : Internal("CUDA graph: " + what + " failed: " + ErrorText(a, r));
}

// libcuda.so.1 and cuInit, once per process; null with *why when unavailable.
const Api* LoadApi(std::string* why) {
  static std::once_flag once;
  static Api api;
  static const Api* loaded = nullptr;
  static std::string reason;
  std::call_once(once, [] {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      reason = "libcuda.so.1 could not be opened";
      return;
    }
    bool ok = true;
    auto sym = [&](auto& fn, const char* name) {
      void* p = dlsym(lib, name);
      if (!p) ok = false;
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
    };
    sym(api.cuInit, "cuInit");
    sym(api.cuGetErrorName, "cuGetErrorName");
    sym(api.cuDeviceGetCount, "cuDeviceGetCount");
    sym(api.cuDeviceGet, "cuDeviceGet");
    sym(api.cuDeviceGetAttribute, "cuDeviceGetAttribute");
    sym(api.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    sym(api.cuCtxPushCurrent, "cuCtxPushCurrent_v2");
    sym(api.cuCtxPopCurrent, "cuCtxPopCurrent_v2");
    sym(api.cuModuleLoadData, "cuModuleLoadData");
    sym(api.cuModuleUnload, "cuModuleUnload");
    sym(api.cuModuleGetFunction, "cuModuleGetFunction");
    sym(api.cuMemAlloc, "cuMemAlloc_v2");
    sym(api.cuMemFree, "cuMemFree_v2");
    sym(api.cuMemcpyHtoD, "cuMemcpyHtoD_v2");
    sym(api.cuMemsetD8, "cuMemsetD8_v2");
    sym(api.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
    sym(api.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
    sym(api.cuMemHostRegister, "cuMemHostRegister_v2");
    sym(api.cuMemHostUnregister, "cuMemHostUnregister");
    sym(api.cuStreamCreate, "cuStreamCreate");
    sym(api.cuStreamDestroy, "cuStreamDestroy_v2");
    sym(api.cuStreamSynchronize, "cuStreamSynchronize");
    sym(api.cuStreamQuery, "cuStreamQuery");
    sym(api.cuStreamBeginCapture, "cuStreamBeginCapture_v2");
    sym(api.cuStreamEndCapture, "cuStreamEndCapture");
    sym(api.cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags");
    sym(api.cuGraphLaunch, "cuGraphLaunch");
    sym(api.cuGraphExecDestroy, "cuGraphExecDestroy");
    sym(api.cuGraphDestroy, "cuGraphDestroy");
    sym(api.cuLaunchKernel, "cuLaunchKernel");
    api.cuLaunchKernelEx = reinterpret_cast<decltype(api.cuLaunchKernelEx)>(dlsym(lib, "cuLaunchKernelEx"));
    if (!ok) {
      reason = "libcuda.so.1 lacks a CUDA 12 driver API function";
      return;
    }
    CUresult r = api.cuInit(0);
    if (r != 0) {
      reason = "cuInit failed: " + ErrorText(&api, r);
      return;
    }
    loaded = &api;
  });
  if (!loaded && why) *why = reason;
  return loaded;
}

// The device's primary context made current for a scope (pushed, then popped: a caller's own
// CUDA context, e.g. PyTorch's, is current again afterwards).
class Scope {
 public:
  Scope(const Api* a, Handle ctx) : a_(a) { ok_ = a_->cuCtxPushCurrent(ctx) == 0; }
  ~Scope() {
    Handle old = nullptr;
    if (ok_) a_->cuCtxPopCurrent(&old);
  }
  bool ok() const { return ok_; }

 private:
  const Api* a_;
  bool ok_ = false;
};

// Primary contexts we retained, per device (released at exit by the driver's own teardown).
Handle PrimaryContext(const Api* a, int device, std::string* why) {
  static std::mutex mu;
  static std::map<int, Handle> ctxs;
  std::lock_guard<std::mutex> l(mu);
  auto it = ctxs.find(device);
  if (it != ctxs.end()) return it->second;
  CUdevice d = 0;
  Handle ctx = nullptr;
  CUresult r = a->cuDeviceGet(&d, device);
  if (r == 0) r = a->cuDevicePrimaryCtxRetain(&ctx, d);
  if (r != 0) {
    if (why) *why = "the CUDA device's primary context: " + ErrorText(a, r);
    return nullptr;
  }
  ctxs[device] = ctx;
  return ctx;
}

bool Enabled() { return env::CudaGraph() != 0; }

}  // namespace

StatusOr<int> DeviceOf(const cl::Context& ctx) {
  if (!Enabled()) return Status(StatusCode::kUnavailable, "TFLITE_GPU_CUDA_GRAPH=0");
  const cl::DeviceInfo& info = ctx.device();
  if (info.platform_name.find("NVIDIA") == std::string::npos)
    return Status(StatusCode::kUnavailable, "not NVIDIA's OpenCL platform");
  static std::mutex mu;
  static std::map<cl::cl_device_id, StatusOr<int>> cache;
  std::lock_guard<std::mutex> l(mu);
  auto it = cache.find(ctx.device_id());
  if (it != cache.end()) return it->second;
  StatusOr<int> result = Status(StatusCode::kUnavailable, "no CUDA device");
  std::string why;
  const Api* a = LoadApi(&why);
  if (!a) {
    result = Status(StatusCode::kUnavailable, why);
  } else {
    int count = 0;
    a->cuDeviceGetCount(&count);
    uint32_t bus = 0, slot = 0, domain = 0;
    const bool pci = ctx.api()->clGetDeviceInfo(ctx.device_id(), kClPciBusNv, 4, &bus, nullptr) == 0 &&
                     ctx.api()->clGetDeviceInfo(ctx.device_id(), kClPciSlotNv, 4, &slot, nullptr) == 0 &&
                     ctx.api()->clGetDeviceInfo(ctx.device_id(), kClPciDomainNv, 4, &domain, nullptr) == 0;
    int found = -1;
    for (int i = 0; i < count && pci; ++i) {
      CUdevice d = 0;
      int b = -1, dv = -1, dm = -1;
      if (a->cuDeviceGet(&d, i) != 0) continue;
      a->cuDeviceGetAttribute(&b, kAttrPciBus, d);
      a->cuDeviceGetAttribute(&dv, kAttrPciDevice, d);
      a->cuDeviceGetAttribute(&dm, kAttrPciDomain, d);
      if (uint32_t(b) == bus && uint32_t(dm) == domain && (uint32_t(dv) == slot || uint32_t(dv) == (slot >> 3))) found = i;
    }
    if (found < 0 && !pci && count == 1) found = 0;  // no PCI query: only one device to be
    if (found >= 0) result = found;
    else result = Status(StatusCode::kUnavailable, "no CUDA device at the OpenCL device's PCI address");
  }
  cache.emplace(ctx.device_id(), result);
  return result;
}

int RegisterHost(const cl::Context& ctx, void* p, size_t bytes) {
  auto dev = DeviceOf(ctx);
  if (!dev.ok() || !p || bytes == 0) return -1;
  const Api* a = LoadApi(nullptr);
  Handle pc = PrimaryContext(a, dev.value(), nullptr);
  if (!pc) return -1;
  Scope s(a, pc);
  return s.ok() && a->cuMemHostRegister(p, bytes, kHostRegisterPortable) == 0 ? dev.value() : -1;
}

void UnregisterHost(int device, void* p) {
  const Api* a = LoadApi(nullptr);
  Handle pc = a && p ? PrimaryContext(a, device, nullptr) : nullptr;
  if (!pc) return;
  Scope s(a, pc);
  if (s.ok()) a->cuMemHostUnregister(p);
}

struct GraphRunner::State {
  const Api* a = nullptr;
  Handle ctx = nullptr;
  Handle stream = nullptr, graph = nullptr, exec = nullptr;
  std::vector<Handle> modules;
  std::vector<CUdeviceptr> buffers;
  std::vector<size_t> sizes;  // bytes of each buffer
  bool programmatic = false;
  ~State() {
    if (!a || !ctx) return;
    Scope s(a, ctx);
    if (stream) a->cuStreamSynchronize(stream);
    if (exec) a->cuGraphExecDestroy(exec);
    if (graph) a->cuGraphDestroy(graph);
    if (stream) a->cuStreamDestroy(stream);
    for (Handle m : modules) a->cuModuleUnload(m);
    for (CUdeviceptr b : buffers)
      if (b) a->cuMemFree(b);
  }
};

GraphRunner::~GraphRunner() = default;

namespace {
// Programmatic dependent launch (compute capability 9.0+, see the header): griddepcontrol.wait
// as the kernel's first instruction (after the entry's leading declarations), so that the kernel
// may be launched before the one it depends on has finished and touches memory only after it.
Status InsertGridDepWait(std::string* ptx) {
  const size_t entry = ptx->find(".entry main_function");
  size_t at = entry == std::string::npos ? entry : ptx->find("\n{", entry);
  if (at == std::string::npos) return Status(StatusCode::kUnimplemented, "no main_function body in the PTX");
  at += 2;
  for (;;) {  // at: the end of the line last kept before the insertion point
    const size_t eol = ptx->find('\n', at + 1);
    if (eol == std::string::npos) return Status(StatusCode::kUnimplemented, "the PTX entry body ends early");
    size_t b = at + 1;
    while (b < eol && ((*ptx)[b] == ' ' || (*ptx)[b] == '\t')) ++b;
    const std::string line = ptx->substr(b, eol - b);
    if (!(line.empty() || line.rfind(".reg", 0) == 0 || line.rfind(".local", 0) == 0 || line.rfind(".shared", 0) == 0 ||
          line.rfind("//", 0) == 0))
      break;
    at = eol;
  }
  ptx->insert(at, "\n\tgriddepcontrol.wait;");
  return OkStatus();
}

// NVIDIA OpenCL's environment registers -> what they hold for our launches (see the header).
Status RewritePtx(const std::string& in, std::string* out) {
  if (in.find(".ptr .shared") != std::string::npos)
    return Status(StatusCode::kUnimplemented, "a __local pointer argument");
  static const char kReg[] = "%envreg";
  out->clear();
  out->reserve(in.size());
  size_t last = 0, at = 0;
  while ((at = in.find(kReg, last)) != std::string::npos) {
    size_t end = at + sizeof(kReg) - 1;
    int n = 0, digits = 0;
    while (end < in.size() && in[end] >= '0' && in[end] <= '9' && digits < 4) n = n * 10 + (in[end++] - '0'), ++digits;
    const char* with = nullptr;
    if (digits == 0) return Status(StatusCode::kUnimplemented, "an unnamed environment register");
    if (n <= 5) with = "0";
    else if (n == 6) with = "%nctaid.x";
    else if (n == 7) with = "%nctaid.y";
    else if (n == 8) with = "%nctaid.z";
    else if (n == 9) with = "3";
    else return Status(StatusCode::kUnimplemented, "environment register %envreg" + std::to_string(n));
    out->append(in, last, at - last);
    out->append(with);
    last = end;
  }
  out->append(in, last, std::string::npos);
  return OkStatus();
}
}  // namespace

StatusOr<std::unique_ptr<GraphRunner>> GraphRunner::Create(int device, const std::vector<size_t>& buffers,
                                                           const std::vector<std::vector<uint8_t>>& init,
                                                           const std::vector<Kernel>& kernels) {
  std::string why;
  const Api* a = LoadApi(&why);
  if (!a) return Status(StatusCode::kUnavailable, why);
  std::unique_ptr<GraphRunner> g(new GraphRunner());
  g->s_ = std::make_unique<State>();
  State& s = *g->s_;
  s.a = a;
  s.ctx = PrimaryContext(a, device, &why);
  if (!s.ctx) return Status(StatusCode::kUnavailable, why);
  Scope scope(a, s.ctx);
  if (!scope.ok()) return Internal("CUDA graph: cannot make the device's context current");
  auto check = [a](CUresult r, const std::string& what) { return Check(a, r, what); };
  for (size_t i = 0; i < buffers.size(); ++i) {
    CUdeviceptr p = 0;
    const size_t bytes = std::max<size_t>(buffers[i], 4);
    TFG_RETURN_IF_ERROR(check(a->cuMemAlloc(&p, bytes), "cuMemAlloc(" + std::to_string(bytes) + ")"));
    s.buffers.push_back(p);
    s.sizes.push_back(bytes);
    if (i < init.size() && !init[i].empty())
      TFG_RETURN_IF_ERROR(check(a->cuMemcpyHtoD(p, init[i].data(), std::min(bytes, init[i].size())), "cuMemcpyHtoD"));
    else
      TFG_RETURN_IF_ERROR(check(a->cuMemsetD8(p, 0, bytes), "cuMemsetD8"));
  }
  // Programmatic dependent launches where the device has them (and TFLITE_GPU_CUDA_GRAPH is not
  // "serial"): each kernel after the first may launch while its predecessor finishes.
  int cc_major = 0;
  {
    CUdevice d = 0;
    if (a->cuDeviceGet(&d, device) == 0) a->cuDeviceGetAttribute(&cc_major, kAttrCcMajor, d);
  }
  const bool pdl = env::CudaGraph() == 2 && cc_major >= 9 && a->cuLaunchKernelEx;
  s.programmatic = pdl;
  // One module per distinct PTX (kernels of one cached program share it).
  std::map<std::string, Handle> funcs;
  std::vector<Handle> fn(kernels.size(), nullptr);
  for (size_t k = 0; k < kernels.size(); ++k) {
    auto f = funcs.find(kernels[k].ptx);
    if (f == funcs.end()) {
      std::string ptx;
      Status st = RewritePtx(kernels[k].ptx, &ptx);
      if (st.ok() && pdl) st = InsertGridDepWait(&ptx);
      if (!st.ok()) return Status(st.code(), "CUDA graph: kernel " + std::to_string(k) + ": " + st.message());
      Handle m = nullptr;
      TFG_RETURN_IF_ERROR(check(a->cuModuleLoadData(&m, ptx.c_str()), "cuModuleLoadData (kernel " + std::to_string(k) + ")"));
      s.modules.push_back(m);
      Handle h = nullptr;
      TFG_RETURN_IF_ERROR(check(a->cuModuleGetFunction(&h, m, "main_function"), "cuModuleGetFunction"));
      f = funcs.emplace(kernels[k].ptx, h).first;
    }
    fn[k] = f->second;
    for (int b : kernels[k].args)
      if (b < 0 || size_t(b) >= s.buffers.size()) return Internal("CUDA graph: kernel argument names no buffer");
  }
  TFG_RETURN_IF_ERROR(check(a->cuStreamCreate(&s.stream, kStreamNonBlocking), "cuStreamCreate"));
  TFG_RETURN_IF_ERROR(check(a->cuStreamBeginCapture(s.stream, kCaptureRelaxed), "cuStreamBeginCapture"));
  Status launched = OkStatus();
  for (size_t k = 0; k < kernels.size() && launched.ok(); ++k) {
    const Kernel& kd = kernels[k];
    std::vector<CUdeviceptr> vals(kd.args.size());
    std::vector<void*> params(kd.args.size());
    for (size_t i = 0; i < kd.args.size(); ++i) {
      vals[i] = s.buffers[size_t(kd.args[i])];
      params[i] = &vals[i];
    }
    if (pdl && k > 0) {
      LaunchAttr attr;
      std::memset(&attr, 0, sizeof(attr));
      attr.id = kLaunchAttrProgrammaticSerialization;
      attr.v.value = 1;
      LaunchConfig cfg{{kd.grid[0], kd.grid[1], kd.grid[2]}, {kd.block[0], kd.block[1], kd.block[2]}, 0, s.stream, &attr, 1};
      launched = check(a->cuLaunchKernelEx(&cfg, fn[k], params.empty() ? nullptr : params.data(), nullptr),
                       "cuLaunchKernelEx (kernel " + std::to_string(k) + ")");
    } else {
      launched = check(a->cuLaunchKernel(fn[k], kd.grid[0], kd.grid[1], kd.grid[2], kd.block[0], kd.block[1],
                                         kd.block[2], 0, s.stream, params.empty() ? nullptr : params.data(), nullptr),
                       "cuLaunchKernel (kernel " + std::to_string(k) + ")");
    }
  }
  CUresult end = a->cuStreamEndCapture(s.stream, &s.graph);
  TFG_RETURN_IF_ERROR(launched);
  TFG_RETURN_IF_ERROR(check(end, "cuStreamEndCapture"));
  TFG_RETURN_IF_ERROR(check(a->cuGraphInstantiateWithFlags(&s.exec, s.graph, 0), "cuGraphInstantiateWithFlags"));
  return g;
}

bool GraphRunner::programmatic() const { return s_->programmatic; }

Status GraphRunner::Run(const std::vector<Copy>& in, const std::vector<Copy>& out, bool spin) {
  State& s = *s_;
  const Api* a = s.a;
  // Every copy is checked before anything is enqueued: an early return must not leave a copy in
  // flight into or out of the caller's memory.
  for (const auto* list : {&in, &out})
    for (const Copy& c : *list)
      if (c.buffer < 0 || size_t(c.buffer) >= s.buffers.size() || c.bytes > s.sizes[size_t(c.buffer)])
        return Internal("CUDA graph: a copy names no buffer or overruns it");
  Scope scope(a, s.ctx);
  if (!scope.ok()) return Internal("CUDA graph: cannot make the device's context current");
  Status st = OkStatus();
  for (size_t i = 0; i < in.size() && st.ok(); ++i)
    st = Check(a, a->cuMemcpyHtoDAsync(s.buffers[size_t(in[i].buffer)], in[i].host, in[i].bytes, s.stream),
               "cuMemcpyHtoDAsync");
  if (st.ok()) st = Check(a, a->cuGraphLaunch(s.exec, s.stream), "cuGraphLaunch");
  for (size_t i = 0; i < out.size() && st.ok(); ++i)
    st = Check(a, a->cuMemcpyDtoHAsync(out[i].host, s.buffers[size_t(out[i].buffer)], out[i].bytes, s.stream),
               "cuMemcpyDtoHAsync");
  // Whatever was enqueued finishes before the host memory is the caller's again.
  CUresult r = 0;
  if (spin) {
    while ((r = a->cuStreamQuery(s.stream)) == kNotReady) {
    }
  } else {
    r = a->cuStreamSynchronize(s.stream);
  }
  TFG_RETURN_IF_ERROR(st);
  return Check(a, r, "waiting for the stream");
}

}  // namespace tflite_gpu::gpu::cuda
