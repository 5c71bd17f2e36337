// device.h: OpenCL platform/device enumeration and device selection.
//
// Devices are numbered in one flat list: platforms in the order LoadOpenCl() reports them
// (loader platforms first, then platforms reached directly through an unregistered vendor
// driver), and within a platform in clGetDeviceIDs(CL_DEVICE_TYPE_ALL) order.
//
// Selection (SelectDevice):
//   spec ""       -> env TFLITE_GPU_DEVICE if set, else the default: first GPU, else first CPU
//                    (PoCL), else the first device of any type.
//   spec "3"      -> device index 3 of the flat list (InvalidArgument when out of range).
//   spec "gpu"    -> first GPU; "cpu" -> first CPU (case-insensitive).
//   anything else -> first device whose name contains spec (case-insensitive), else the first
//                    whose platform name or vendor contains it ("nvidia", "pocl").
// The env variable accepts the same forms; an explicit spec wins over the env variable.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "gpu/cl/cl_api.h"
#include "tflite_gpu/status.h"

namespace tflite_gpu {
namespace cl {

enum class DeviceType { kGpu, kCpu, kAccelerator, kOther };
const char* DeviceTypeName(DeviceType t);

struct DeviceInfo {
  int index = -1;  // position in ListDevices()
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  const ClApi* api = nullptr;  // the function table for every object of this platform
  std::string platform_source;  // PlatformEntry::source

  std::string platform_name, platform_vendor, platform_version;
  std::string name, vendor, driver_version;
  std::string device_version;    // "OpenCL 3.0 CUDA"
  std::string opencl_c_version;  // "OpenCL C 1.2 ..."
  std::string extensions;        // space separated
  DeviceType type = DeviceType::kOther;
  uint32_t compute_units = 0;
  uint32_t max_clock_mhz = 0;
  uint64_t global_mem_bytes = 0;
  uint64_t max_alloc_bytes = 0;
  uint64_t local_mem_bytes = 0;
  size_t max_work_group_size = 0;
  bool fp16 = false;  // cl_khr_fp16: half arithmetic; vload_half/vstore_half need no extension
  // NVIDIA's compute capability (major * 10 + minor) from cl_nv_device_attribute_query; 0 elsewhere.
  int nv_compute_capability = 0;

  bool HasExtension(const std::string& ext) const;
  // One line: "[0] NVIDIA H100 (GPU, NVIDIA CUDA, driver 550.54, 132 CU, 79.1 GiB, fp16)".
  std::string Summary() const;
};

// Queries every field of DeviceInfo for one device (used by ListDevices and by Context when it
// adopts a foreign cl_command_queue). index is left at -1.
StatusOr<DeviceInfo> QueryDeviceInfo(const ClApi* api, cl_device_id device, const std::string& source);

// All devices of all platforms; Unavailable when OpenCL cannot be loaded or has no device.
StatusOr<std::vector<DeviceInfo>> ListDevices();

// Picks from `devices` per the rules above (pure function; testable without OpenCL).
StatusOr<DeviceInfo> SelectFrom(const std::vector<DeviceInfo>& devices, const std::string& spec);

// ListDevices() + SelectFrom(spec, with TFLITE_GPU_DEVICE as the fallback spec).
StatusOr<DeviceInfo> SelectDevice(const std::string& spec = "");

}  // namespace cl
}  // namespace tflite_gpu
