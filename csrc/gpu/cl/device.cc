// device.cc: see device.h.
#include "gpu/cl/device.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "runtime/env.h"

namespace tflite_gpu {
namespace cl {
namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool Contains(const std::string& haystack, const std::string& needle) {
  return Lower(haystack).find(Lower(needle)) != std::string::npos;
}

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\0' || std::isspace(static_cast<unsigned char>(s.back())))) s.pop_back();
  size_t start = 0;
  while (start < s.size() && std::isspace(static_cast<unsigned char>(s[start]))) ++start;
  return s.substr(start);
}

StatusOr<std::string> PlatformString(const ClApi* api, cl_platform_id p, cl_platform_info what) {
  size_t size = 0;
  TFG_RETURN_IF_ERROR(ClStatus(api->clGetPlatformInfo(p, what, 0, nullptr, &size), "clGetPlatformInfo"));
  std::string s(size, '\0');
  TFG_RETURN_IF_ERROR(ClStatus(api->clGetPlatformInfo(p, what, size, &s[0], nullptr), "clGetPlatformInfo"));
  return Trim(s);
}

StatusOr<std::string> DeviceString(const ClApi* api, cl_device_id d, cl_device_info what) {
  size_t size = 0;
  TFG_RETURN_IF_ERROR(ClStatus(api->clGetDeviceInfo(d, what, 0, nullptr, &size), "clGetDeviceInfo"));
  std::string s(size, '\0');
  TFG_RETURN_IF_ERROR(ClStatus(api->clGetDeviceInfo(d, what, size, &s[0], nullptr), "clGetDeviceInfo"));
  return Trim(s);
}

template <typename T>
T DeviceScalar(const ClApi* api, cl_device_id d, cl_device_info what) {
  T v{};
  if (api->clGetDeviceInfo(d, what, sizeof(T), &v, nullptr) != CL_SUCCESS) return T{};
  return v;
}

DeviceType ToDeviceType(cl_device_type t) {
  if (t & CL_DEVICE_TYPE_GPU) return DeviceType::kGpu;
  if (t & CL_DEVICE_TYPE_CPU) return DeviceType::kCpu;
  if (t & CL_DEVICE_TYPE_ACCELERATOR) return DeviceType::kAccelerator;
  return DeviceType::kOther;
}

Status FillPlatformFields(DeviceInfo* info) {
  TFG_ASSIGN_OR_RETURN(info->platform_name, PlatformString(info->api, info->platform, CL_PLATFORM_NAME));
  TFG_ASSIGN_OR_RETURN(info->platform_vendor, PlatformString(info->api, info->platform, CL_PLATFORM_VENDOR));
  TFG_ASSIGN_OR_RETURN(info->platform_version, PlatformString(info->api, info->platform, CL_PLATFORM_VERSION));
  return OkStatus();
}

Status FillDeviceStrings(DeviceInfo* info) {
  const ClApi* api = info->api;
  cl_device_id d = info->device;
  TFG_ASSIGN_OR_RETURN(info->name, DeviceString(api, d, CL_DEVICE_NAME));
  TFG_ASSIGN_OR_RETURN(info->vendor, DeviceString(api, d, CL_DEVICE_VENDOR));
  TFG_ASSIGN_OR_RETURN(info->driver_version, DeviceString(api, d, CL_DRIVER_VERSION));
  TFG_ASSIGN_OR_RETURN(info->device_version, DeviceString(api, d, CL_DEVICE_VERSION));
  TFG_ASSIGN_OR_RETURN(info->extensions, DeviceString(api, d, CL_DEVICE_EXTENSIONS));
  StatusOr<std::string> c_version = DeviceString(api, d, CL_DEVICE_OPENCL_C_VERSION);  // 1.1+ only
  info->opencl_c_version = c_version.ok() ? c_version.value() : "OpenCL C 1.0";
  return OkStatus();
}

void FillDeviceScalars(DeviceInfo* info) {
  const ClApi* api = info->api;
  cl_device_id d = info->device;
  info->type = ToDeviceType(DeviceScalar<cl_device_type>(api, d, CL_DEVICE_TYPE));
  info->compute_units = DeviceScalar<cl_uint>(api, d, CL_DEVICE_MAX_COMPUTE_UNITS);
  info->max_clock_mhz = DeviceScalar<cl_uint>(api, d, CL_DEVICE_MAX_CLOCK_FREQUENCY);
  info->global_mem_bytes = DeviceScalar<cl_ulong>(api, d, CL_DEVICE_GLOBAL_MEM_SIZE);
  info->max_alloc_bytes = DeviceScalar<cl_ulong>(api, d, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
  info->local_mem_bytes = DeviceScalar<cl_ulong>(api, d, CL_DEVICE_LOCAL_MEM_SIZE);
  info->max_work_group_size = DeviceScalar<size_t>(api, d, CL_DEVICE_MAX_WORK_GROUP_SIZE);
  info->fp16 = info->HasExtension("cl_khr_fp16");
  if (info->HasExtension("cl_nv_device_attribute_query")) {
    constexpr cl_device_info kCcMajorNv = 0x4000, kCcMinorNv = 0x4001;  // CL_DEVICE_COMPUTE_CAPABILITY_*_NV
    info->nv_compute_capability =
        int(DeviceScalar<cl_uint>(api, d, kCcMajorNv)) * 10 + int(DeviceScalar<cl_uint>(api, d, kCcMinorNv));
  }
}

StatusOr<std::vector<cl_device_id>> PlatformDevices(const PlatformEntry& p) {
  cl_uint n = 0;
  cl_int err = p.api->clGetDeviceIDs(p.id, CL_DEVICE_TYPE_ALL, 0, nullptr, &n);
  if (err == CL_DEVICE_NOT_FOUND || n == 0) return std::vector<cl_device_id>();
  TFG_RETURN_IF_ERROR(ClStatus(err, "clGetDeviceIDs"));
  std::vector<cl_device_id> ids(n);
  TFG_RETURN_IF_ERROR(ClStatus(p.api->clGetDeviceIDs(p.id, CL_DEVICE_TYPE_ALL, n, ids.data(), nullptr), "clGetDeviceIDs"));
  return ids;
}

bool IsNumber(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

const DeviceInfo* FirstOfType(const std::vector<DeviceInfo>& devices, DeviceType t) {
  for (const DeviceInfo& d : devices) {
    if (d.type == t) return &d;
  }
  return nullptr;
}

std::string Names(const std::vector<DeviceInfo>& devices) {
  std::string s;
  for (const DeviceInfo& d : devices) s += (s.empty() ? "" : ", ") + ("[" + std::to_string(d.index) + "] " + d.name);
  return s;
}

}  // namespace

const char* DeviceTypeName(DeviceType t) {
  switch (t) {
    case DeviceType::kGpu: return "GPU";
    case DeviceType::kCpu: return "CPU";
    case DeviceType::kAccelerator: return "accelerator";
    default: return "other";
  }
}

bool DeviceInfo::HasExtension(const std::string& ext) const {
  std::istringstream ss(extensions);
  std::string word;
  while (ss >> word) {
    if (word == ext) return true;
  }
  return false;
}

std::string DeviceInfo::Summary() const {
  char mem[32];
  std::snprintf(mem, sizeof(mem), "%.1f GiB", static_cast<double>(global_mem_bytes) / (1024.0 * 1024.0 * 1024.0));
  return "[" + std::to_string(index) + "] " + name + " (" + DeviceTypeName(type) + ", " + platform_name +
         ", driver " + driver_version + ", " + std::to_string(compute_units) + " CU, " + mem +
         (fp16 ? ", fp16" : "") + ")";
}

StatusOr<DeviceInfo> QueryDeviceInfo(const ClApi* api, cl_device_id device, const std::string& source) {
  DeviceInfo info;
  info.api = api;
  info.device = device;
  info.platform_source = source;
  TFG_RETURN_IF_ERROR(ClStatus(api->clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof(cl_platform_id), &info.platform, nullptr),
                               "clGetDeviceInfo(CL_DEVICE_PLATFORM)"));
  TFG_RETURN_IF_ERROR(FillPlatformFields(&info));
  TFG_RETURN_IF_ERROR(FillDeviceStrings(&info));
  FillDeviceScalars(&info);
  return info;
}

StatusOr<std::vector<DeviceInfo>> ListDevices() {
  TFG_ASSIGN_OR_RETURN(const OpenCl* ocl, LoadOpenCl());
  std::vector<DeviceInfo> out;
  for (const PlatformEntry& p : ocl->platforms()) {
    StatusOr<std::vector<cl_device_id>> ids = PlatformDevices(p);
    if (!ids.ok()) continue;  // one broken platform must not hide the others
    for (cl_device_id id : ids.value()) {
      StatusOr<DeviceInfo> info = QueryDeviceInfo(p.api, id, p.source);
      if (!info.ok()) continue;
      info->platform = p.id;  // keep the handle we enumerated with
      info->index = static_cast<int>(out.size());
      out.push_back(std::move(info.value()));
    }
  }
  if (out.empty()) return Unavailable("OpenCL is available but no OpenCL device was found");
  return out;
}

StatusOr<DeviceInfo> SelectFrom(const std::vector<DeviceInfo>& devices, const std::string& spec_in) {
  if (devices.empty()) return Unavailable("no OpenCL device to select from");
  std::string spec = Lower(Trim(spec_in));
  if (spec.empty()) {
    if (const DeviceInfo* d = FirstOfType(devices, DeviceType::kGpu)) return *d;
    if (const DeviceInfo* d = FirstOfType(devices, DeviceType::kCpu)) return *d;
    return devices.front();
  }
  if (IsNumber(spec)) {
    size_t i = std::strtoul(spec.c_str(), nullptr, 10);
    if (i >= devices.size())
      return InvalidArgument("OpenCL device index " + spec + " out of range; devices: " + Names(devices));
    return devices[i];
  }
  if (spec == "gpu" || spec == "cpu") {
    const DeviceInfo* d = FirstOfType(devices, spec == "gpu" ? DeviceType::kGpu : DeviceType::kCpu);
    if (!d) return Unavailable("no OpenCL " + spec + " device; devices: " + Names(devices));
    return *d;
  }
  for (const DeviceInfo& d : devices) {
    if (Contains(d.name, spec)) return d;
  }
  for (const DeviceInfo& d : devices) {
    if (Contains(d.platform_name, spec) || Contains(d.platform_vendor, spec) || Contains(d.vendor, spec)) return d;
  }
  return InvalidArgument("no OpenCL device matches '" + spec_in + "'; devices: " + Names(devices));
}

StatusOr<DeviceInfo> SelectDevice(const std::string& spec) {
  TFG_ASSIGN_OR_RETURN(std::vector<DeviceInfo> devices, ListDevices());
  std::string effective = spec;
  if (Trim(effective).empty()) {
    std::string from_env = env::Device();
    if (!from_env.empty()) effective = from_env;
  }
  return SelectFrom(devices, effective);
}

}  // namespace cl
}  // namespace tflite_gpu
