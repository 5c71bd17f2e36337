// cl_api.h: our own minimal declaration of the OpenCL 1.2 C API, and the run-time loader.
//
// Why our own declarations: the Khronos headers are not guaranteed to be present when the pip
// package is built, and we never link against libOpenCL. Everything below (handle types, enum
// values, function signatures, the order of the cl_khr_icd vendor dispatch table) is taken from
// the public OpenCL 1.2 specification and the cl_khr_icd extension; these values are ABI and
// never change.
//
// ---------------------------------------------------------------------------------------------
// How OpenCL is found (LoadOpenCl(), done once per process, result cached, failure included)
// ---------------------------------------------------------------------------------------------
// 1. The ICD loader (libOpenCL), first one that dlopen()s and exports clGetPlatformIDs:
//    a. env TFLITE_GPU_OPENCL_LIBRARY: a path or soname. The value "none" skips the loader
//       search altogether (then only step 3 can give platforms; used to test that path).
//    b. the loader bundled in an installed pyopencl wheel: <site>/pyopencl/.libs/libOpenCL*.so*
//       or <site>/pyopencl.libs/libOpenCL*.so*, for each <site> in env TFLITE_GPU_SITE_PACKAGES
//       (colon-separated; the Python side sets it from site.getsitepackages()).
//    c. the system loader: "libOpenCL.so.1", "libOpenCL.so", then the copies that CUDA and ROCm
//       install outside the linker path (/usr/local/cuda/lib64, /opt/rocm/lib).
//    Preferring pyopencl's copy means a Python process that also uses pyopencl has exactly one
//    loader, so cl_context/cl_command_queue handles can be shared both ways.
//
// 2. PoCL from the pyopencl wheel. (Found by inspecting pyopencl 2026.1 + pocl-binary-
//    distribution 3.0: the latter is only an empty marker package; PoCL itself ships inside the
//    pyopencl wheel.) pyopencl/.libs/ holds a patched ocl-icd loader, libpocl-<hash>.so and
//    pocl.icd whose one line is the RELATIVE name "libpocl-<hash>.so". pyopencl/__init__.py sets
//    env PYOPENCL_HOME=<site>/pyopencl before loading; the patched ocl-icd additionally scans
//    $PYOPENCL_HOME/.libs for *.icd. The relative name then dlopen()s only because pyopencl's
//    _cl*.so carries DT_RPATH $ORIGIN/.libs and is the loader's parent in the link chain.
//    We reproduce both facts: when the chosen loader lives in <pkg>/.libs we set PYOPENCL_HOME
//    (if unset; the patched loader also dereferences it unconditionally when OCL_ICD_VENDORS is
//    set, and crashes if it is missing) and we pre-dlopen every library named by a *.icd in that
//    folder by its absolute path; glibc then satisfies the loader's dlopen("libpocl-<hash>.so")
//    by SONAME match with the already-loaded object.
//
// 3. Vendor drivers installed but not registered by an ICD file (e.g. GPU machines where
//    libnvidia-opencl.so.1 exists but /etc/OpenCL/vendors has no nvidia.icd). Candidates are
//    env TFLITE_GPU_OPENCL_VENDORS (colon-separated paths/sonames) then libnvidia-opencl.so.1,
//    libamdocl64.so, libigdrcl.so. A candidate is "unregistered" when no *.icd in the loader's
//    effective vendor folder(s) names it, and "present" when it dlopen()s. Two mechanisms:
//    a. Before the loader's first clGetPlatformIDs (the loader reads its vendor list once, at
//       that call), if the loader was not already resident in the process: create a temporary
//       folder holding copies of the effective *.icd files (OCL_ICD_VENDORS as a folder, as a
//       single .icd file or as a library name; else OPENCL_VENDOR_PATH; else /etc/OpenCL/vendors)
//       plus one <stem>.icd per present unregistered vendor, point OCL_ICD_VENDORS at it (both
//       ocl-icd and the Khronos loader read it as a folder), call clGetPlatformIDs, then restore
//       the old OCL_ICD_VENDORS value and delete the folder. PYOPENCL_HOME is set to that folder for
//       the call when unset: pyopencl's patched ocl-icd crashes on OCL_ICD_VENDORS without it.
//       Verified on an H200 host: CUDA's Khronos loader + unregistered libnvidia-opencl.so.1 +
//       a registered pocl.icd give both devices.
//    b. If afterwards no platform offers a GPU (loader already initialised by someone else,
//       a loader that ignored the variable, or no loader at all), call each present vendor
//       directly: its clIcdGetPlatformIDsKHR (dlsym, else via its clGetExtensionFunctionAddress,
//       the only route for NVIDIA's and PoCL's libraries, which do not export it)
//       returns ICD platform objects whose first word points at the vendor's dispatch table; we
//       fill a ClApi from that table (ClApi::FromDispatch) and use it for every object of that
//       platform. Platforms already listed through the loader (same handle) are skipped.
//
// Not thread-safe against other threads calling setenv/getenv while the first LoadOpenCl() runs;
// LoadOpenCl itself is serialised by a mutex.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tflite_gpu/status.h"

// The handle structs are global, as in CL/cl.h, so that a cl_mem of the public header
// (tflite_gpu/gpu_delegate.h) and of this file are one type.
struct _cl_platform_id;
struct _cl_device_id;
struct _cl_context;
struct _cl_command_queue;
struct _cl_mem;
struct _cl_program;
struct _cl_kernel;
struct _cl_event;

namespace tflite_gpu {
namespace cl {

// ---- Scalar and handle types (OpenCL 1.2, cl_platform.h / cl.h) ----
using cl_int = int32_t;
using cl_uint = uint32_t;
using cl_long = int64_t;
using cl_ulong = uint64_t;
using cl_bool = cl_uint;
using cl_bitfield = cl_ulong;
using cl_device_type = cl_bitfield;
using cl_platform_info = cl_uint;
using cl_device_info = cl_uint;
using cl_context_info = cl_uint;
using cl_context_properties = intptr_t;
using cl_command_queue_properties = cl_bitfield;
using cl_command_queue_info = cl_uint;
using cl_mem_flags = cl_bitfield;
using cl_mem_info = cl_uint;
using cl_map_flags = cl_bitfield;
using cl_program_info = cl_uint;
using cl_program_build_info = cl_uint;
using cl_kernel_info = cl_uint;
using cl_kernel_work_group_info = cl_uint;
using cl_event_info = cl_uint;
using cl_profiling_info = cl_uint;

using cl_platform_id = struct _cl_platform_id*;
using cl_device_id = struct _cl_device_id*;
using cl_context = struct _cl_context*;
using cl_command_queue = struct _cl_command_queue*;
using cl_mem = struct _cl_mem*;
using cl_program = struct _cl_program*;
using cl_kernel = struct _cl_kernel*;
using cl_event = struct _cl_event*;

// ---- Constants ----
constexpr cl_bool CL_FALSE = 0;
constexpr cl_bool CL_TRUE = 1;

// Error codes.
constexpr cl_int CL_SUCCESS = 0;
constexpr cl_int CL_DEVICE_NOT_FOUND = -1;
constexpr cl_int CL_DEVICE_NOT_AVAILABLE = -2;
constexpr cl_int CL_COMPILER_NOT_AVAILABLE = -3;
constexpr cl_int CL_MEM_OBJECT_ALLOCATION_FAILURE = -4;
constexpr cl_int CL_OUT_OF_RESOURCES = -5;
constexpr cl_int CL_OUT_OF_HOST_MEMORY = -6;
constexpr cl_int CL_PROFILING_INFO_NOT_AVAILABLE = -7;
constexpr cl_int CL_BUILD_PROGRAM_FAILURE = -11;
constexpr cl_int CL_INVALID_VALUE = -30;
constexpr cl_int CL_INVALID_DEVICE = -33;
constexpr cl_int CL_INVALID_CONTEXT = -34;
constexpr cl_int CL_INVALID_COMMAND_QUEUE = -36;
constexpr cl_int CL_INVALID_MEM_OBJECT = -38;
constexpr cl_int CL_INVALID_BINARY = -42;
constexpr cl_int CL_INVALID_BUILD_OPTIONS = -43;
constexpr cl_int CL_INVALID_PROGRAM = -44;
constexpr cl_int CL_INVALID_PROGRAM_EXECUTABLE = -45;
constexpr cl_int CL_INVALID_KERNEL_NAME = -46;
constexpr cl_int CL_INVALID_KERNEL = -48;
constexpr cl_int CL_INVALID_ARG_INDEX = -49;
constexpr cl_int CL_INVALID_ARG_VALUE = -50;
constexpr cl_int CL_INVALID_ARG_SIZE = -51;
constexpr cl_int CL_INVALID_KERNEL_ARGS = -52;
constexpr cl_int CL_INVALID_WORK_DIMENSION = -53;
constexpr cl_int CL_INVALID_WORK_GROUP_SIZE = -54;
constexpr cl_int CL_INVALID_WORK_ITEM_SIZE = -55;
constexpr cl_int CL_INVALID_EVENT = -58;
constexpr cl_int CL_INVALID_OPERATION = -59;
constexpr cl_int CL_INVALID_BUFFER_SIZE = -61;
constexpr cl_int CL_INVALID_GLOBAL_WORK_SIZE = -63;
constexpr cl_int CL_PLATFORM_NOT_FOUND_KHR = -1001;

// Platform info.
constexpr cl_platform_info CL_PLATFORM_PROFILE = 0x0900;
constexpr cl_platform_info CL_PLATFORM_VERSION = 0x0901;
constexpr cl_platform_info CL_PLATFORM_NAME = 0x0902;
constexpr cl_platform_info CL_PLATFORM_VENDOR = 0x0903;
constexpr cl_platform_info CL_PLATFORM_EXTENSIONS = 0x0904;

// Device types.
constexpr cl_device_type CL_DEVICE_TYPE_DEFAULT = 1u << 0;
constexpr cl_device_type CL_DEVICE_TYPE_CPU = 1u << 1;
constexpr cl_device_type CL_DEVICE_TYPE_GPU = 1u << 2;
constexpr cl_device_type CL_DEVICE_TYPE_ACCELERATOR = 1u << 3;
constexpr cl_device_type CL_DEVICE_TYPE_ALL = 0xFFFFFFFFu;

// Device info.
constexpr cl_device_info CL_DEVICE_TYPE = 0x1000;
constexpr cl_device_info CL_DEVICE_MAX_COMPUTE_UNITS = 0x1002;
constexpr cl_device_info CL_DEVICE_MAX_WORK_GROUP_SIZE = 0x1004;
constexpr cl_device_info CL_DEVICE_MAX_CLOCK_FREQUENCY = 0x100C;
constexpr cl_device_info CL_DEVICE_MAX_MEM_ALLOC_SIZE = 0x1010;
constexpr cl_device_info CL_DEVICE_GLOBAL_MEM_SIZE = 0x101F;
constexpr cl_device_info CL_DEVICE_LOCAL_MEM_SIZE = 0x1023;
constexpr cl_device_info CL_DEVICE_AVAILABLE = 0x1027;
constexpr cl_device_info CL_DEVICE_NAME = 0x102B;
constexpr cl_device_info CL_DEVICE_VENDOR = 0x102C;
constexpr cl_device_info CL_DRIVER_VERSION = 0x102D;
constexpr cl_device_info CL_DEVICE_VERSION = 0x102F;
constexpr cl_device_info CL_DEVICE_EXTENSIONS = 0x1030;
constexpr cl_device_info CL_DEVICE_PLATFORM = 0x1031;
constexpr cl_device_info CL_DEVICE_OPENCL_C_VERSION = 0x103D;

// Context.
constexpr cl_context_info CL_CONTEXT_DEVICES = 0x1081;
constexpr cl_context_properties CL_CONTEXT_PLATFORM = 0x1084;

// Command queue.
constexpr cl_command_queue_properties CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE = 1u << 0;
constexpr cl_command_queue_properties CL_QUEUE_PROFILING_ENABLE = 1u << 1;
constexpr cl_command_queue_info CL_QUEUE_CONTEXT = 0x1090;
constexpr cl_command_queue_info CL_QUEUE_DEVICE = 0x1091;
constexpr cl_command_queue_info CL_QUEUE_PROPERTIES = 0x1093;

// Memory.
constexpr cl_mem_flags CL_MEM_READ_WRITE = 1u << 0;
constexpr cl_mem_flags CL_MEM_WRITE_ONLY = 1u << 1;
constexpr cl_mem_flags CL_MEM_READ_ONLY = 1u << 2;
constexpr cl_mem_flags CL_MEM_USE_HOST_PTR = 1u << 3;
constexpr cl_mem_flags CL_MEM_ALLOC_HOST_PTR = 1u << 4;
constexpr cl_mem_flags CL_MEM_COPY_HOST_PTR = 1u << 5;
constexpr cl_mem_info CL_MEM_TYPE = 0x1100;
constexpr cl_mem_info CL_MEM_SIZE = 0x1102;
constexpr cl_mem_info CL_MEM_CONTEXT = 0x1106;
constexpr cl_uint CL_MEM_OBJECT_BUFFER = 0x10F0;
constexpr cl_map_flags CL_MAP_READ = 1u << 0;
constexpr cl_map_flags CL_MAP_WRITE = 1u << 1;

// Program.
constexpr cl_program_info CL_PROGRAM_NUM_DEVICES = 0x1162;
constexpr cl_program_info CL_PROGRAM_DEVICES = 0x1163;
constexpr cl_program_info CL_PROGRAM_BINARY_SIZES = 0x1165;
constexpr cl_program_info CL_PROGRAM_BINARIES = 0x1166;
constexpr cl_program_build_info CL_PROGRAM_BUILD_STATUS = 0x1181;
constexpr cl_program_build_info CL_PROGRAM_BUILD_OPTIONS = 0x1182;
constexpr cl_program_build_info CL_PROGRAM_BUILD_LOG = 0x1183;

// Kernel.
constexpr cl_kernel_info CL_KERNEL_FUNCTION_NAME = 0x1190;
constexpr cl_kernel_info CL_KERNEL_NUM_ARGS = 0x1191;
constexpr cl_kernel_work_group_info CL_KERNEL_WORK_GROUP_SIZE = 0x11B0;
constexpr cl_kernel_work_group_info CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE = 0x11B3;

// Events and profiling.
constexpr cl_event_info CL_EVENT_COMMAND_QUEUE = 0x11D0;
constexpr cl_event_info CL_EVENT_COMMAND_EXECUTION_STATUS = 0x11D3;
constexpr cl_int CL_COMPLETE = 0x0;
constexpr cl_int CL_RUNNING = 0x1;
constexpr cl_int CL_SUBMITTED = 0x2;
constexpr cl_int CL_QUEUED = 0x3;
constexpr cl_profiling_info CL_PROFILING_COMMAND_QUEUED = 0x1280;
constexpr cl_profiling_info CL_PROFILING_COMMAND_SUBMIT = 0x1281;
constexpr cl_profiling_info CL_PROFILING_COMMAND_START = 0x1282;
constexpr cl_profiling_info CL_PROFILING_COMMAND_END = 0x1283;

// ---- Entry points ----
// X(name, index in the cl_khr_icd dispatch table, return type, parameter list). The index is
// the slot of the function in the vendor dispatch table (KHRicdVendorDispatch / cl_icd_dispatch),
// which starts with the OpenCL 1.0 API in cl.h order.
using cl_build_notify = void (*)(cl_program, void*);
using cl_context_notify = void (*)(const char*, const void*, size_t, void*);

#define TFG_CL_FUNCTIONS(X)                                                                     \
  X(clGetPlatformIDs, 0, cl_int, (cl_uint, cl_platform_id*, cl_uint*))                          \
  X(clGetPlatformInfo, 1, cl_int, (cl_platform_id, cl_platform_info, size_t, void*, size_t*))   \
  X(clGetDeviceIDs, 2, cl_int, (cl_platform_id, cl_device_type, cl_uint, cl_device_id*, cl_uint*)) \
  X(clGetDeviceInfo, 3, cl_int, (cl_device_id, cl_device_info, size_t, void*, size_t*))         \
  X(clCreateContext, 4, cl_context,                                                             \
    (const cl_context_properties*, cl_uint, const cl_device_id*, cl_context_notify, void*, cl_int*)) \
  X(clRetainContext, 6, cl_int, (cl_context))                                                   \
  X(clReleaseContext, 7, cl_int, (cl_context))                                                  \
  X(clGetContextInfo, 8, cl_int, (cl_context, cl_context_info, size_t, void*, size_t*))         \
  X(clCreateCommandQueue, 9, cl_command_queue,                                                  \
    (cl_context, cl_device_id, cl_command_queue_properties, cl_int*))                           \
  X(clRetainCommandQueue, 10, cl_int, (cl_command_queue))                                       \
  X(clReleaseCommandQueue, 11, cl_int, (cl_command_queue))                                      \
  X(clGetCommandQueueInfo, 12, cl_int,                                                          \
    (cl_command_queue, cl_command_queue_info, size_t, void*, size_t*))                          \
  X(clCreateBuffer, 14, cl_mem, (cl_context, cl_mem_flags, size_t, void*, cl_int*))             \
  X(clRetainMemObject, 17, cl_int, (cl_mem))                                                    \
  X(clReleaseMemObject, 18, cl_int, (cl_mem))                                                   \
  X(clGetMemObjectInfo, 20, cl_int, (cl_mem, cl_mem_info, size_t, void*, size_t*))              \
  X(clCreateProgramWithSource, 26, cl_program,                                                  \
    (cl_context, cl_uint, const char**, const size_t*, cl_int*))                                \
  X(clCreateProgramWithBinary, 27, cl_program,                                                  \
    (cl_context, cl_uint, const cl_device_id*, const size_t*, const unsigned char**, cl_int*,   \
     cl_int*))                                                                                  \
  X(clRetainProgram, 28, cl_int, (cl_program))                                                  \
  X(clReleaseProgram, 29, cl_int, (cl_program))                                                 \
  X(clBuildProgram, 30, cl_int,                                                                 \
    (cl_program, cl_uint, const cl_device_id*, const char*, cl_build_notify, void*))            \
  X(clGetProgramInfo, 32, cl_int, (cl_program, cl_program_info, size_t, void*, size_t*))        \
  X(clGetProgramBuildInfo, 33, cl_int,                                                          \
    (cl_program, cl_device_id, cl_program_build_info, size_t, void*, size_t*))                  \
  X(clCreateKernel, 34, cl_kernel, (cl_program, const char*, cl_int*))                          \
  X(clRetainKernel, 36, cl_int, (cl_kernel))                                                    \
  X(clReleaseKernel, 37, cl_int, (cl_kernel))                                                   \
  X(clSetKernelArg, 38, cl_int, (cl_kernel, cl_uint, size_t, const void*))                      \
  X(clGetKernelInfo, 39, cl_int, (cl_kernel, cl_kernel_info, size_t, void*, size_t*))           \
  X(clGetKernelWorkGroupInfo, 40, cl_int,                                                       \
    (cl_kernel, cl_device_id, cl_kernel_work_group_info, size_t, void*, size_t*))               \
  X(clWaitForEvents, 41, cl_int, (cl_uint, const cl_event*))                                    \
  X(clGetEventInfo, 42, cl_int, (cl_event, cl_event_info, size_t, void*, size_t*))              \
  X(clRetainEvent, 43, cl_int, (cl_event))                                                      \
  X(clReleaseEvent, 44, cl_int, (cl_event))                                                     \
  X(clGetEventProfilingInfo, 45, cl_int, (cl_event, cl_profiling_info, size_t, void*, size_t*)) \
  X(clFlush, 46, cl_int, (cl_command_queue))                                                    \
  X(clFinish, 47, cl_int, (cl_command_queue))                                                   \
  X(clEnqueueReadBuffer, 48, cl_int,                                                            \
    (cl_command_queue, cl_mem, cl_bool, size_t, size_t, void*, cl_uint, const cl_event*,        \
     cl_event*))                                                                                \
  X(clEnqueueWriteBuffer, 49, cl_int,                                                           \
    (cl_command_queue, cl_mem, cl_bool, size_t, size_t, const void*, cl_uint, const cl_event*,  \
     cl_event*))                                                                                \
  X(clEnqueueCopyBuffer, 50, cl_int,                                                            \
    (cl_command_queue, cl_mem, cl_mem, size_t, size_t, size_t, cl_uint, const cl_event*,        \
     cl_event*))                                                                                \
  X(clEnqueueMapBuffer, 56, void*,                                                              \
    (cl_command_queue, cl_mem, cl_bool, cl_map_flags, size_t, size_t, cl_uint, const cl_event*, \
     cl_event*, cl_int*))                                                                       \
  X(clEnqueueUnmapMemObject, 58, cl_int,                                                        \
    (cl_command_queue, cl_mem, void*, cl_uint, const cl_event*, cl_event*))                     \
  X(clEnqueueNDRangeKernel, 59, cl_int,                                                         \
    (cl_command_queue, cl_kernel, cl_uint, const size_t*, const size_t*, const size_t*,         \
     cl_uint, const cl_event*, cl_event*))                                                      \
  X(clEnqueueMarker, 62, cl_int, (cl_command_queue, cl_event*))

// The function table. Every wrapper object keeps a `const ClApi*` and calls through it, so
// objects of a loader platform and of a directly-called vendor platform work the same way.
struct ClApi {
#define TFG_CL_DECLARE_MEMBER(name, index, ret, params) ret(*name) params = nullptr;
  TFG_CL_FUNCTIONS(TFG_CL_DECLARE_MEMBER)
#undef TFG_CL_DECLARE_MEMBER

  // Fills every entry with dlsym(handle, name). Fails naming the first missing symbol.
  static StatusOr<ClApi> FromLibrary(void* dl_handle);
  // Fills every entry from an ICD object's dispatch table (the pointer stored in the first word
  // of any cl_platform_id/cl_device_id/cl_context/... created by an ICD-compliant driver).
  static StatusOr<ClApi> FromDispatch(const void* icd_object);
};

// One platform as we reach it: through the loader or directly through a vendor library.
struct PlatformEntry {
  cl_platform_id id = nullptr;
  const ClApi* api = nullptr;  // owned by OpenCl, lives for the process
  std::string source;          // "loader:<path>" or "direct:<vendor lib>"
};

// The process-wide result of loading OpenCL. Never destroyed (drivers dislike dlclose).
class OpenCl {
 public:
  const std::vector<PlatformEntry>& platforms() const { return platforms_; }
  const std::string& loader_path() const { return loader_path_; }  // "" when none
  const ClApi* loader_api() const { return loader_api_.get(); }     // nullptr when none
  // Human-readable lines on what was tried and decided (for error messages and --verbose).
  const std::vector<std::string>& log() const { return log_; }
  // The table to use for a handle that came from elsewhere (e.g. pyopencl): the loader's table
  // when we have a loader, else one built from the object's own dispatch table.
  StatusOr<const ClApi*> ApiForForeignObject(const void* icd_object) const;

 private:
  friend class OpenClLoader;
  std::string loader_path_;
  std::unique_ptr<ClApi> loader_api_;
  std::vector<std::unique_ptr<ClApi>> direct_apis_;
  std::vector<PlatformEntry> platforms_;
  std::vector<std::string> log_;
  mutable std::mutex foreign_mu_;
  mutable std::map<const void*, std::unique_ptr<ClApi>> foreign_apis_;
};

// Loads OpenCL once (see the search order above). Unavailable when neither a loader nor a
// vendor library could be opened, or when no platform was found at all.
StatusOr<const OpenCl*> LoadOpenCl();

// "CL_INVALID_VALUE (-30)" and the like.
std::string ClErrorName(cl_int err);
// Internal("<what> failed: CL_... (-n)"), or OkStatus() when err == CL_SUCCESS.
Status ClStatus(cl_int err, const std::string& what);
// The same for a literal: no string is built unless the call failed (per-invoke enqueue calls).
inline Status ClStatus(cl_int err, const char* what) {
  if (err == CL_SUCCESS) return OkStatus();
  return ClStatus(err, std::string(what));
}

}  // namespace cl
}  // namespace tflite_gpu
