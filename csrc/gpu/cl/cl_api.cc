// cl_api.cc: the run-time OpenCL loader. The search order and the vendor-driver discovery are
// documented in cl_api.h; this file only implements them.
#include "gpu/cl/cl_api.h"

#include <dirent.h>
#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "runtime/env.h"

namespace tflite_gpu {
namespace cl {
namespace {

// ---------------------------------------------------------------- small file/env helpers ----


std::vector<std::string> SplitColon(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ':')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

bool IsDir(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool IsFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string Basename(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string Dirname(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Sorted names in `dir` that pass `keep`.
template <typename Pred>
std::vector<std::string> ListDir(const std::string& dir, Pred keep) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (!d) return names;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != ".." && keep(n)) names.push_back(n);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> IcdFilesIn(const std::string& dir) {
  std::vector<std::string> paths;
  for (const std::string& n : ListDir(dir, [](const std::string& s) { return EndsWith(s, ".icd"); }))
    paths.push_back(dir + "/" + n);
  return paths;
}

// An .icd file holds one library name or path on its first line.
std::string ReadIcdLine(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\n'))
    line.pop_back();
  return line;
}

bool WriteText(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::trunc);
  f << text << "\n";
  return static_cast<bool>(f);
}

// "libnvidia-opencl.so.1" -> "nvidia-opencl": what an .icd line naming this library contains.
std::string LibraryStem(const std::string& lib) {
  std::string b = Basename(lib);
  if (b.rfind("lib", 0) == 0) b = b.substr(3);
  size_t so = b.find(".so");
  return so == std::string::npos ? b : b.substr(0, so);
}

// The full path the dynamic linker resolved for an open handle (falls back to `name`).
std::string ResolvedPath(void* handle, const std::string& name) {
  link_map* lm = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && lm->l_name[0])
    return lm->l_name;
  return name;
}

std::string DlError() {
  const char* e = dlerror();
  return e ? std::string(e) : std::string("unknown dlopen error");
}

// ------------------------------------------------------------------------ error names ----

struct ErrorName {
  cl_int code;
  const char* name;
};
constexpr ErrorName kErrorNames[] = {
    {0, "CL_SUCCESS"}, {-1, "CL_DEVICE_NOT_FOUND"}, {-2, "CL_DEVICE_NOT_AVAILABLE"},
    {-3, "CL_COMPILER_NOT_AVAILABLE"}, {-4, "CL_MEM_OBJECT_ALLOCATION_FAILURE"},
    {-5, "CL_OUT_OF_RESOURCES"}, {-6, "CL_OUT_OF_HOST_MEMORY"},
    {-7, "CL_PROFILING_INFO_NOT_AVAILABLE"}, {-8, "CL_MEM_COPY_OVERLAP"},
    {-11, "CL_BUILD_PROGRAM_FAILURE"}, {-12, "CL_MAP_FAILURE"},
    {-14, "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST"}, {-30, "CL_INVALID_VALUE"},
    {-31, "CL_INVALID_DEVICE_TYPE"}, {-32, "CL_INVALID_PLATFORM"}, {-33, "CL_INVALID_DEVICE"},
    {-34, "CL_INVALID_CONTEXT"}, {-35, "CL_INVALID_QUEUE_PROPERTIES"},
    {-36, "CL_INVALID_COMMAND_QUEUE"}, {-37, "CL_INVALID_HOST_PTR"},
    {-38, "CL_INVALID_MEM_OBJECT"}, {-42, "CL_INVALID_BINARY"}, {-43, "CL_INVALID_BUILD_OPTIONS"},
    {-44, "CL_INVALID_PROGRAM"}, {-45, "CL_INVALID_PROGRAM_EXECUTABLE"},
    {-46, "CL_INVALID_KERNEL_NAME"}, {-47, "CL_INVALID_KERNEL_DEFINITION"},
    {-48, "CL_INVALID_KERNEL"}, {-49, "CL_INVALID_ARG_INDEX"}, {-50, "CL_INVALID_ARG_VALUE"},
    {-51, "CL_INVALID_ARG_SIZE"}, {-52, "CL_INVALID_KERNEL_ARGS"},
    {-53, "CL_INVALID_WORK_DIMENSION"}, {-54, "CL_INVALID_WORK_GROUP_SIZE"},
    {-55, "CL_INVALID_WORK_ITEM_SIZE"}, {-56, "CL_INVALID_GLOBAL_OFFSET"},
    {-57, "CL_INVALID_EVENT_WAIT_LIST"}, {-58, "CL_INVALID_EVENT"},
    {-59, "CL_INVALID_OPERATION"}, {-61, "CL_INVALID_BUFFER_SIZE"},
    {-63, "CL_INVALID_GLOBAL_WORK_SIZE"}, {-64, "CL_INVALID_PROPERTY"},
    {-1001, "CL_PLATFORM_NOT_FOUND_KHR"},
};

// Entries a driver may legitimately lack: clGetPlatformIDs in a vendor dispatch table (the
// loader owns it) and the deprecated clEnqueueMarker.
bool IsOptional(const char* name, bool from_dispatch) {
  if (std::strcmp(name, "clEnqueueMarker") == 0) return true;
  return from_dispatch && std::strcmp(name, "clGetPlatformIDs") == 0;
}

using IcdGetPlatformIDsFn = cl_int (*)(cl_uint, cl_platform_id*, cl_uint*);
using GetExtensionFunctionAddressFn = void* (*)(const char*);

}  // namespace

// ------------------------------------------------------------------------- ClApi ----

StatusOr<ClApi> ClApi::FromLibrary(void* dl_handle) {
  ClApi api;
#define TFG_CL_LOAD_SYM(name, index, ret, params)                                    \
  api.name = reinterpret_cast<ret(*) params>(dlsym(dl_handle, #name));               \
  if (!api.name && !IsOptional(#name, false))                                        \
    return Unavailable("OpenCL library lacks the entry point " #name);
  TFG_CL_FUNCTIONS(TFG_CL_LOAD_SYM)
#undef TFG_CL_LOAD_SYM
  return api;
}

StatusOr<ClApi> ClApi::FromDispatch(const void* icd_object) {
  if (!icd_object) return InvalidArgument("null OpenCL object");
  void* const* table = *static_cast<void* const* const*>(icd_object);
  if (!table) return Unavailable("OpenCL object has no ICD dispatch table");
  ClApi api;
#define TFG_CL_LOAD_SLOT(name, index, ret, params)                                   \
  api.name = reinterpret_cast<ret(*) params>(table[index]);                          \
  if (!api.name && !IsOptional(#name, true))                                         \
    return Unavailable("OpenCL driver dispatch table lacks " #name);
  TFG_CL_FUNCTIONS(TFG_CL_LOAD_SLOT)
#undef TFG_CL_LOAD_SLOT
  return api;
}

std::string ClErrorName(cl_int err) {
  for (const ErrorName& e : kErrorNames) {
    if (e.code == err) return std::string(e.name) + " (" + std::to_string(err) + ")";
  }
  return "CL error " + std::to_string(err);
}

Status ClStatus(cl_int err, const std::string& what) {
  if (err == CL_SUCCESS) return OkStatus();
  return Internal(what + " failed: " + ClErrorName(err));
}

StatusOr<const ClApi*> OpenCl::ApiForForeignObject(const void* icd_object) const {
  if (loader_api_) return static_cast<const ClApi*>(loader_api_.get());
  if (!icd_object) return InvalidArgument("null OpenCL object");
  const void* table = *static_cast<const void* const*>(icd_object);
  std::lock_guard<std::mutex> lock(foreign_mu_);
  auto it = foreign_apis_.find(table);
  if (it != foreign_apis_.end()) return static_cast<const ClApi*>(it->second.get());
  TFG_ASSIGN_OR_RETURN(ClApi api, ClApi::FromDispatch(icd_object));
  auto owned = std::make_unique<ClApi>(api);
  const ClApi* raw = owned.get();
  foreign_apis_[table] = std::move(owned);
  return raw;
}

// ------------------------------------------------------------------------ the loader ----

// One vendor library that dlopen()ed.
struct VendorLib {
  std::string name;  // as asked for
  std::string path;  // as resolved by the dynamic linker
  void* handle = nullptr;
  bool registered = false;  // named by an .icd file the loader reads
};

class OpenClLoader {
 public:
  explicit OpenClLoader(OpenCl* out) : out_(out) {}
  Status Run();

 private:
  std::vector<std::string> LoaderCandidates() const;
  void FindLoader();
  void PrepareBundledLoader();
  std::vector<std::string> EffectiveIcdFiles() const;
  void FindVendors();
  bool NeedsVendorFolder() const;
  std::vector<cl_platform_id> QueryLoaderPlatforms();
  std::vector<cl_platform_id> QueryWithVendorFolder();
  bool AnyGpu() const;
  void AddDirectPlatforms(const VendorLib& lib);
  void Log(const std::string& line) { out_->log_.push_back(line); }

  OpenCl* out_;
  void* loader_handle_ = nullptr;
  bool loader_was_resident_ = false;
  std::string bundled_dir_;            // the loader's folder when it came from a wheel
  std::vector<std::string> extra_icd_libs_;  // wheel ICDs the loader will not scan by itself
  std::vector<std::string> tried_loaders_;
  std::vector<std::string> tried_vendors_;
  std::vector<VendorLib> vendors_;
};

std::vector<std::string> OpenClLoader::LoaderCandidates() const {
  std::vector<std::string> c;
  std::string lib = env::OpenClLibrary();
  if (lib == "none") return c;
  if (!lib.empty()) c.push_back(lib);
  auto is_loader = [](const std::string& n) { return n.rfind("libOpenCL", 0) == 0 && n.find(".so") != std::string::npos; };
  for (const std::string& site : SplitColon(env::SitePackages())) {
    for (const char* sub : {"/pyopencl/.libs", "/pyopencl.libs"}) {
      std::string dir = site + sub;
      for (const std::string& n : ListDir(dir, is_loader)) c.push_back(dir + "/" + n);
    }
  }
  for (const char* sys : {"libOpenCL.so.1", "libOpenCL.so", "/usr/local/cuda/lib64/libOpenCL.so.1",
                          "/opt/rocm/lib/libOpenCL.so.1"})
    c.push_back(sys);
  return c;
}

void OpenClLoader::FindLoader() {
  for (const std::string& name : LoaderCandidates()) {
    bool resident = dlopen(name.c_str(), RTLD_NOW | RTLD_NOLOAD) != nullptr;
    void* h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      tried_loaders_.push_back(name + " (" + DlError() + ")");
      continue;
    }
    StatusOr<ClApi> api = ClApi::FromLibrary(h);
    if (!api.ok()) {
      tried_loaders_.push_back(name + " (" + api.status().message() + ")");
      continue;
    }
    loader_handle_ = h;
    loader_was_resident_ = resident;
    out_->loader_path_ = ResolvedPath(h, name);
    out_->loader_api_ = std::make_unique<ClApi>(api.value());
    Log("ICD loader: " + out_->loader_path_ + (resident ? " (already loaded in process)" : ""));
    return;
  }
}

// See cl_api.h, step 2: make the ICDs that ship next to a wheel's loader loadable.
void OpenClLoader::PrepareBundledLoader() {
  std::string dir = Dirname(out_->loader_path_);
  std::string base = Basename(dir);
  if (base != ".libs" && !EndsWith(base, ".libs")) return;
  bundled_dir_ = dir;
  // <site>/pyopencl/.libs -> <site>/pyopencl ; <site>/pyopencl.libs -> <site>/pyopencl
  std::string home = base == ".libs" ? Dirname(dir) : Dirname(dir) + "/" + base.substr(0, base.size() - 5);
  if (env::Get("PYOPENCL_HOME").empty()) {
    setenv("PYOPENCL_HOME", home.c_str(), 1);
    Log("set PYOPENCL_HOME=" + home + " for the wheel's ocl-icd");
  }
  bool scanned_natively = base == ".libs";
  for (const std::string& icd : IcdFilesIn(dir)) {
    std::string lib = ReadIcdLine(icd);
    std::string abs = lib.empty() || lib[0] == '/' ? lib : dir + "/" + lib;
    if (abs.empty() || !IsFile(abs)) continue;
    if (dlopen(abs.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      Log("pre-loaded wheel ICD " + abs + " (named by " + Basename(icd) + ")");
      if (!scanned_natively) extra_icd_libs_.push_back(abs);
    } else {
      Log("could not pre-load wheel ICD " + abs + ": " + DlError());
    }
  }
}

// The .icd files the loader will read if we do nothing (used to decide "registered").
std::vector<std::string> OpenClLoader::EffectiveIcdFiles() const {
  std::vector<std::string> files;
  std::string vendors = env::Get("OCL_ICD_VENDORS");
  if (!vendors.empty()) {
    if (IsDir(vendors)) files = IcdFilesIn(vendors);
    else files.push_back(vendors);  // an .icd file, or a library name (checked by stem below)
  } else {
    std::string sys = env::Get("OPENCL_VENDOR_PATH");
    files = IcdFilesIn(sys.empty() ? "/etc/OpenCL/vendors" : sys);
  }
  if (!bundled_dir_.empty()) {
    for (const std::string& f : IcdFilesIn(bundled_dir_)) files.push_back(f);
  }
  return files;
}

void OpenClLoader::FindVendors() {
  // TFLITE_GPU_OPENCL_VENDORS: extra vendor libraries (colon-separated), or "none" to turn off
  // the search for unregistered vendor drivers entirely.
  std::string vendors_env = env::OpenClVendors();
  if (vendors_env == "none") return;
  std::vector<std::string> names = SplitColon(vendors_env);
  for (const char* d : {"libnvidia-opencl.so.1", "libamdocl64.so", "libigdrcl.so"}) names.push_back(d);
  std::vector<std::string> icd_lines;
  for (const std::string& f : EffectiveIcdFiles())
    icd_lines.push_back(EndsWith(f, ".icd") ? ReadIcdLine(f) : f);
  for (const std::string& name : names) {
    VendorLib v;
    v.name = name;
    std::string stem = LibraryStem(name);
    for (const std::string& line : icd_lines) {
      if (Basename(line).find(stem) != std::string::npos) v.registered = true;
    }
    v.handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!v.handle) {
      tried_vendors_.push_back(name + " (not found)");
      (void)dlerror();
      continue;
    }
    v.path = ResolvedPath(v.handle, name);
    tried_vendors_.push_back(v.path + (v.registered ? " (registered)" : " (unregistered)"));
    Log("vendor driver " + v.path + (v.registered ? " is registered by an .icd file"
                                                  : " is present but not registered"));
    vendors_.push_back(v);
  }
}

bool OpenClLoader::NeedsVendorFolder() const {
  if (!loader_handle_ || loader_was_resident_) return false;
  if (!extra_icd_libs_.empty()) return true;
  for (const VendorLib& v : vendors_) {
    if (!v.registered) return true;
  }
  return false;
}

std::vector<cl_platform_id> OpenClLoader::QueryLoaderPlatforms() {
  const ClApi* api = out_->loader_api_.get();
  cl_uint n = 0;
  cl_int err = api->clGetPlatformIDs(0, nullptr, &n);
  if (err != CL_SUCCESS || n == 0) {
    Log("loader clGetPlatformIDs: " + ClErrorName(err) + ", " + std::to_string(n) + " platform(s)");
    return {};
  }
  std::vector<cl_platform_id> ids(n);
  if (api->clGetPlatformIDs(n, ids.data(), nullptr) != CL_SUCCESS) return {};
  return ids;
}

// See cl_api.h, step 3a.
std::vector<cl_platform_id> OpenClLoader::QueryWithVendorFolder() {
  std::string tmp = env::Get("TMPDIR");
  std::string templ = (tmp.empty() ? std::string("/tmp") : tmp) + "/tflite_gpu_icd_XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) {
    Log("could not create a temporary ICD folder; vendor drivers only reachable directly");
    return QueryLoaderPlatforms();
  }
  std::string dir = buf.data();
  std::vector<std::string> written;
  auto add = [&](const std::string& file, const std::string& lib) {
    std::string path = dir + "/" + file;
    if (WriteText(path, lib)) written.push_back(path);
  };
  bool had_prev = std::getenv("OCL_ICD_VENDORS") != nullptr;
  std::string prev = env::Get("OCL_ICD_VENDORS");
  int i = 0;
  for (const std::string& f : EffectiveIcdFiles()) {
    if (!bundled_dir_.empty() && Dirname(f) == bundled_dir_) continue;  // loader scans it itself
    std::string lib = EndsWith(f, ".icd") ? ReadIcdLine(f) : f;
    if (!lib.empty()) add("existing" + std::to_string(i++) + "_" + LibraryStem(lib) + ".icd", lib);
  }
  for (const std::string& lib : extra_icd_libs_) add("wheel_" + LibraryStem(lib) + ".icd", lib);
  for (const VendorLib& v : vendors_) {
    if (!v.registered) add("tflite_gpu_" + LibraryStem(v.name) + ".icd", v.path);
  }
  setenv("OCL_ICD_VENDORS", dir.c_str(), 1);
  // pyopencl's patched ocl-icd dereferences PYOPENCL_HOME whenever OCL_ICD_VENDORS is set; give
  // it a harmless value (it then also scans <dir>/.libs, which does not exist) for this call.
  bool set_home = std::getenv("PYOPENCL_HOME") == nullptr;
  if (set_home) setenv("PYOPENCL_HOME", dir.c_str(), 1);
  Log("OCL_ICD_VENDORS=" + dir + " (" + std::to_string(written.size()) + " .icd file(s)) for the first clGetPlatformIDs");
  std::vector<cl_platform_id> ids = QueryLoaderPlatforms();
  if (had_prev) setenv("OCL_ICD_VENDORS", prev.c_str(), 1);
  else unsetenv("OCL_ICD_VENDORS");
  if (set_home) unsetenv("PYOPENCL_HOME");
  for (const std::string& p : written) unlink(p.c_str());
  rmdir(dir.c_str());
  return ids;
}

bool OpenClLoader::AnyGpu() const {
  for (const PlatformEntry& p : out_->platforms_) {
    cl_uint n = 0;
    if (p.api->clGetDeviceIDs(p.id, CL_DEVICE_TYPE_GPU, 0, nullptr, &n) == CL_SUCCESS && n > 0) return true;
  }
  return false;
}

// See cl_api.h, step 3b.
void OpenClLoader::AddDirectPlatforms(const VendorLib& lib) {
  auto get_ids = reinterpret_cast<IcdGetPlatformIDsFn>(dlsym(lib.handle, "clIcdGetPlatformIDsKHR"));
  if (!get_ids) {
    auto gefa = reinterpret_cast<GetExtensionFunctionAddressFn>(dlsym(lib.handle, "clGetExtensionFunctionAddress"));
    if (gefa) get_ids = reinterpret_cast<IcdGetPlatformIDsFn>(gefa("clIcdGetPlatformIDsKHR"));
  }
  if (!get_ids) {
    Log(lib.path + ": no clIcdGetPlatformIDsKHR entry, cannot call it directly");
    return;
  }
  cl_uint n = 0;
  cl_int err = get_ids(0, nullptr, &n);
  std::vector<cl_platform_id> ids(n);
  if (err == CL_SUCCESS && n > 0) err = get_ids(n, ids.data(), nullptr);
  if (err != CL_SUCCESS || n == 0) {
    Log(lib.path + ": clIcdGetPlatformIDsKHR gave " + ClErrorName(err) + ", " + std::to_string(n) + " platform(s)");
    return;
  }
  for (cl_platform_id id : ids) {
    bool dup = std::any_of(out_->platforms_.begin(), out_->platforms_.end(),
                           [&](const PlatformEntry& p) { return p.id == id; });
    if (dup) continue;
    StatusOr<ClApi> api = ClApi::FromDispatch(id);
    if (!api.ok()) {
      Log(lib.path + ": " + api.status().message());
      continue;
    }
    out_->direct_apis_.push_back(std::make_unique<ClApi>(api.value()));
    out_->platforms_.push_back({id, out_->direct_apis_.back().get(), "direct:" + lib.path});
    Log("platform reached directly through " + lib.path);
  }
}

static std::string JoinList(const std::vector<std::string>& items) {
  std::string s;
  for (const std::string& i : items) s += (s.empty() ? "" : "; ") + i;
  return s.empty() ? "nothing" : s;
}

Status OpenClLoader::Run() {
  FindLoader();
  if (loader_handle_) PrepareBundledLoader();
  FindVendors();
  if (loader_handle_) {
    std::vector<cl_platform_id> ids = NeedsVendorFolder() ? QueryWithVendorFolder() : QueryLoaderPlatforms();
    for (cl_platform_id id : ids)
      out_->platforms_.push_back({id, out_->loader_api_.get(), "loader:" + out_->loader_path_});
  }
  if (!AnyGpu()) {
    for (const VendorLib& v : vendors_) {
      if (!loader_handle_ || !v.registered) AddDirectPlatforms(v);
    }
  }
  if (!out_->platforms_.empty()) return OkStatus();
  if (!loader_handle_ && out_->direct_apis_.empty()) {
    return Unavailable("OpenCL is not available: no ICD loader found (tried " + JoinList(tried_loaders_) +
                       "; vendor drivers tried: " + JoinList(tried_vendors_) + ")");
  }
  return Unavailable("OpenCL is not available: no OpenCL platform found (ICD loader " +
                     (loader_handle_ ? out_->loader_path_ : std::string("none")) +
                     "; vendor drivers tried: " + JoinList(tried_vendors_) + ")");
}

StatusOr<const OpenCl*> LoadOpenCl() {
  static std::mutex mu;
  static OpenCl* instance = nullptr;  // intentionally leaked: drivers dislike unloading
  static Status* failure = nullptr;
  std::lock_guard<std::mutex> lock(mu);
  if (instance) return static_cast<const OpenCl*>(instance);
  if (failure) return *failure;
  auto* ocl = new OpenCl();
  OpenClLoader loader(ocl);
  Status st = loader.Run();
  if (!st.ok()) {
    failure = new Status(st);
    delete ocl;
    return st;
  }
  instance = ocl;
  return static_cast<const OpenCl*>(instance);
}

}  // namespace cl
}  // namespace tflite_gpu
