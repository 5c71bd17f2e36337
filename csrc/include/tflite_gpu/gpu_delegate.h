// The GPU delegate over OpenCL, with TensorFlow Lite's C API names:
//   TfLiteGpuDelegateOptionsV2 opts = TfLiteGpuDelegateOptionsV2Default();
//   TfLiteDelegate* d = TfLiteGpuDelegateV2Create(&opts);   // or (nullptr) for defaults
//   interpreter->ModifyGraphWithDelegate(d);
//   ...
//   TfLiteGpuDelegateV2Delete(d);
// and the Metal-named TFLGpuDelegateCreate / TFLGpuDelegateDelete (backed by OpenCL here).
//
// Buffer binding (zero copy), after ModifyGraphWithDelegate as Metal's:
//   TfLiteGpuDelegateBindBufferToTensor(d, my_cl_mem, interpreter->inputs()[0]);
//   interpreter->SetAllowBufferHandleOutput(true);  // outputs stay on the device at Invoke
// The cl_mem must be a buffer of the delegate's OpenCL context (share yours through
// options.cl_context / cl_queue, or take the delegate's with TfLiteGpuDelegateGetClContext)
// holding the whole tensor in BHWC float32 (quantized tensors: their dequantized values).
// Invoke reads a bound input straight from it and writes a bound output straight into it; work
// the host enqueued on another queue must be finished first (sharing the queue orders it).
// The delegate retains the cl_mem while bound (pass a live one: freed memory is undefined behaviour). Bind NULL to
// unbind. TfLiteTensorCopyFromBuffer on a bound tensor fails. A resize drops the bindings (Invoke then says so).
// Includable from C (TfLiteDelegate is then an opaque type); the tflite_gpu:: part is C++ only.
#ifndef TFLITE_GPU_GPU_DELEGATE_H_
#define TFLITE_GPU_GPU_DELEGATE_H_
#include <stdint.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif

#include "tflite_gpu/c_common.h"

#if !defined(__OPENCL_CL_H) && !defined(TFLITE_GPU_CL_MEM_DEFINED)
#define TFLITE_GPU_CL_MEM_DEFINED
typedef struct _cl_mem* cl_mem;  // as OpenCL's CL/cl.h declares it
#endif

// Enum values are TensorFlow Lite's.
enum TfLiteGpuInferenceUsage {
  TFLITE_GPU_INFERENCE_PREFERENCE_FAST_SINGLE_ANSWER = 0,
  TFLITE_GPU_INFERENCE_PREFERENCE_SUSTAINED_SPEED = 1,
  TFLITE_GPU_INFERENCE_PREFERENCE_BALANCED = 2,
};
enum TfLiteGpuInferencePriority {
  TFLITE_GPU_INFERENCE_PRIORITY_AUTO = 0,
  TFLITE_GPU_INFERENCE_PRIORITY_MAX_PRECISION = 1,
  TFLITE_GPU_INFERENCE_PRIORITY_MIN_LATENCY = 2,
  TFLITE_GPU_INFERENCE_PRIORITY_MIN_MEMORY_USAGE = 3,
};
enum TfLiteGpuExperimentalFlags {
  TFLITE_GPU_EXPERIMENTAL_FLAGS_NONE = 0,
  TFLITE_GPU_EXPERIMENTAL_FLAGS_ENABLE_QUANT = 1 << 0,
  TFLITE_GPU_EXPERIMENTAL_FLAGS_CL_ONLY = 1 << 1,
  TFLITE_GPU_EXPERIMENTAL_FLAGS_GL_ONLY = 1 << 2,
  TFLITE_GPU_EXPERIMENTAL_FLAGS_ENABLE_SERIALIZATION = 1 << 3,
};
typedef enum TfLiteGpuInferenceUsage TfLiteGpuInferenceUsage;
typedef enum TfLiteGpuInferencePriority TfLiteGpuInferencePriority;
typedef enum TfLiteGpuExperimentalFlags TfLiteGpuExperimentalFlags;
// Metal-style wait types (TFLGpuDelegateWaitType).
enum TFLGpuDelegateWaitType {
  TFLGpuDelegateWaitTypePassive = 0,     // block on the driver
  TFLGpuDelegateWaitTypeActive = 1,      // spin until the GPU is done
  TFLGpuDelegateWaitTypeDoNotWait = 2,   // return at once; outputs sync when read
  TFLGpuDelegateWaitTypeAggressive = 3,  // spin, and keep the device busy (treated as active)
};
typedef enum TFLGpuDelegateWaitType TFLGpuDelegateWaitType;

typedef struct TfLiteGpuDelegateOptionsV2 {
  int32_t is_precision_loss_allowed;
  int32_t inference_preference;
  int32_t inference_priority1;
  int32_t inference_priority2;
  int32_t inference_priority3;
  int64_t experimental_flags;
  int32_t max_delegated_partitions;
  const char* serialization_dir;
  const char* model_token;
  // tflite_gpu additions (zero-initialised defaults are fine):
  int32_t wait_type;             // TFLGpuDelegateWaitType
  const char* device;            // "", an index, "gpu"/"cpu", or a name substring
  const char* op_filter;         // comma-separated op names forced to the CPU (also env TFLITE_GPU_OP_FILTER)
  void* cl_context;              // share a cl_context (and cl_queue) the caller owns
  void* cl_queue;
  int32_t enable_profiling;      // OpenCL profiling events per kernel
} TfLiteGpuDelegateOptionsV2;

#ifdef __cplusplus
extern "C" {
#endif

TFLITE_GPU_API TfLiteGpuDelegateOptionsV2 TfLiteGpuDelegateOptionsV2Default(void);
// Never returns null: a device problem is reported by ModifyGraphWithDelegate.
TFLITE_GPU_API TfLiteDelegate* TfLiteGpuDelegateV2Create(const TfLiteGpuDelegateOptionsV2* options);
TFLITE_GPU_API void TfLiteGpuDelegateV2Delete(TfLiteDelegate* delegate);

typedef struct TFLGpuDelegateOptions {
  bool allow_precision_loss;
  int wait_type;                 // TFLGpuDelegateWaitType
  bool enable_quantization;
} TFLGpuDelegateOptions;
TFLITE_GPU_API TFLGpuDelegateOptions TFLGpuDelegateOptionsDefault(void);
TFLITE_GPU_API TfLiteDelegate* TFLGpuDelegateCreate(const TFLGpuDelegateOptions* options);
TFLITE_GPU_API void TFLGpuDelegateDelete(TfLiteDelegate* delegate);

// Binds a cl_mem holding tensor `tensor_index` in BHWC float32 (see above); kTfLiteError, with
// the reason on the log sink, when the buffer or the tensor cannot be bound.
TFLITE_GPU_API TfLiteStatus TfLiteGpuDelegateBindBufferToTensor(TfLiteDelegate* delegate, cl_mem buffer,
                                                                int tensor_index);
// The same with the buffer's element type: kTfLiteFloat32, or kTfLiteFloat16 when the delegate
// allows precision loss.
TFLITE_GPU_API TfLiteStatus TfLiteGpuDelegateBindBufferToTensorWithType(TfLiteDelegate* delegate, cl_mem buffer,
                                                                        int tensor_index, TfLiteType type);
// Metal's name and argument order (the buffer is a cl_mem here); true on success.
TFLITE_GPU_API bool TFLGpuDelegateBindMetalBufferToTensor(TfLiteDelegate* delegate, int tensor_index, void* buffer);
// The delegate's cl_context and in-order cl_command_queue (borrowed; initialises the device if
// needed), for hosts that create the buffers they bind.
TFLITE_GPU_API TfLiteStatus TfLiteGpuDelegateGetClContext(TfLiteDelegate* delegate, void** cl_context,
                                                          void** cl_command_queue);

#ifdef __cplusplus
}  // extern "C"

#include <string>
#include <vector>

#include "tflite_gpu/status.h"

namespace tflite_gpu {

// Where delegate messages go ("WARNING: op code #42 cannot be handled by this delegate. ...").
// Default: stderr. level: 0 info, 1 warning, 2 error.
using LogSink = void (*)(int level, const char* message, void* user);
TFLITE_GPU_API void SetLogSink(LogSink sink, void* user);
TFLITE_GPU_API void Log(int level, const std::string& message);

struct GpuDelegateInfo {
  bool available = false;
  std::string unavailable_reason;
  std::string device_name, device_vendor, platform_name, driver_version;
  bool device_is_gpu = false, fp16 = false;
  std::string precision;  // "F32", "F32_F16", "F16"
  struct Refusal { int node; int builtin_code; std::string op; int version; std::string reason; };
  std::vector<Refusal> refused;
  int partitions = 0;
  std::vector<int> partition_sizes;
  // Whether the OpenCL queue now in use records device timestamps (CL_QUEUE_PROFILING_ENABLE): with
  // enable_profiling, during op profiling and work-group tuning; invokes otherwise use a plain queue.
  bool profiling_queue = false;
  // NVIDIA launch path (TFLITE_GPU_CUDA_GRAPH): invokes of this delegate's partitions that ran as
  // one CUDA graph each, and why a partition stayed on OpenCL launches ("" when none was refused).
  uint64_t cuda_graph_runs = 0;
  std::string cuda_graph_refused;
  bool cuda_graph_programmatic = false;  // a partition's graph uses programmatic dependent launches
};
// Details of a delegate created by TfLiteGpuDelegateV2Create (for reports and tools).
TFLITE_GPU_API GpuDelegateInfo GetGpuDelegateInfo(const TfLiteDelegate* delegate);
// Initialises the device now; returns why the delegate cannot be used, if it cannot.
TFLITE_GPU_API Status GpuDelegateInit(TfLiteDelegate* delegate);
// Marks the delegate deleted without freeing it (interpreters that use it keep it alive): applying
// it again is then refused. TfLiteGpuDelegateV2Delete does this and frees it.
TFLITE_GPU_API void GpuDelegateMarkDeleted(TfLiteDelegate* delegate);
// The delegate's compiled-program cache: its directory, why a directory was refused ("" if not),
// and counts {memory_hits, disk_hits, source_builds, disk_writes, disk_rejects, disk_write_errors}.
// False when the delegate has no cache state yet.
TFLITE_GPU_API bool GpuDelegateCacheState(TfLiteDelegate* delegate, std::string* dir, std::string* refused,
                                          int counts[6]);

// Host<->device transfers the delegate enqueued so far (clEnqueueWriteBuffer / ReadBuffer
// commands and bytes; constants uploaded at creation are not counted). False before the device
// is initialised.
struct GpuTransferStats {
  uint64_t host_to_device = 0, device_to_host = 0;
  uint64_t host_to_device_bytes = 0, device_to_host_bytes = 0;
  // Pinned host memory the delegate holds now for partition inputs/outputs (buffers, bytes).
  uint64_t pinned_host_buffers = 0, pinned_host_bytes = 0;
};
TFLITE_GPU_API bool GpuDelegateTransferStats(TfLiteDelegate* delegate, GpuTransferStats* stats);
// TfLiteGpuDelegateBindBufferToTensorWithType with the reason in the Status.
TFLITE_GPU_API Status GpuDelegateBindBuffer(TfLiteDelegate* delegate, int tensor_index, void* cl_buffer,
                                            TfLiteType type = kTfLiteFloat32);
TFLITE_GPU_API Status GpuDelegateGetClContext(TfLiteDelegate* delegate, void** cl_context, void** cl_command_queue);

// The OpenCL devices this machine offers, in the order device indices refer to.
struct GpuDeviceDescription {
  int index = -1;
  std::string platform, platform_version, name, vendor;
  std::string type;  // "GPU", "CPU", "ACCELERATOR", ...
  std::string driver_version, device_version;
  bool fp16 = false;
  uint64_t global_mem_bytes = 0;
  uint32_t compute_units = 0;
  size_t max_work_group_size = 0;
  std::string source;  // where the OpenCL platform library was found
};
TFLITE_GPU_API Status ListGpuDevices(std::vector<GpuDeviceDescription>* devices);
// The device index the delegate would use for `spec` ("" / an index / "gpu" / "cpu" / a name
// substring; TFLITE_GPU_DEVICE is the fallback spec).
TFLITE_GPU_API Status SelectGpuDevice(const std::string& spec, int* index);

}  // namespace tflite_gpu

#endif  // __cplusplus
#endif  // TFLITE_GPU_GPU_DELEGATE_H_
