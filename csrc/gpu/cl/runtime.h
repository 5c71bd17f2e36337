// runtime.h: RAII wrappers over the OpenCL objects the delegate needs. No op knowledge here:
// kernel generators produce source text and argument lists; this layer compiles, binds and
// launches.
//
// Ownership: every wrapper is move-only and releases its handle in the destructor. OpenCL
// reference counting keeps parents alive (a cl_mem retains its context, a cl_kernel its
// program), so a Buffer or Kernel may outlive the Program it came from; they must not outlive
// the process-wide OpenCL loader, which is never unloaded. Calls that enqueue work take the
// Context explicitly (its in-order queue is the only queue we use).
//
// Waiting: WaitMode::kPassive blocks in the driver (clWaitForEvents / clFinish), which sleeps;
// WaitMode::kActive flushes then spins on clGetEventInfo(CL_EVENT_COMMAND_EXECUTION_STATUS),
// trading a CPU core for lower wake-up latency on short inferences.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gpu/cl/cl_api.h"
#include "gpu/cl/device.h"
#include "tflite_gpu/status.h"

namespace tflite_gpu {
namespace cl {

enum class WaitMode { kPassive, kActive };

// Profiling timestamps of one command, in device nanoseconds.
struct EventTimes {
  uint64_t queued = 0, submit = 0, start = 0, end = 0;
  uint64_t DurationNs() const { return end > start ? end - start : 0; }
};

class Event {
 public:
  Event() = default;
  Event(const ClApi* api, cl_event event) : api_(api), event_(event) {}  // adopts one reference
  ~Event() { Reset(); }
  Event(Event&& o) noexcept { *this = std::move(o); }
  Event& operator=(Event&& o) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  bool valid() const { return event_ != nullptr; }
  cl_event get() const { return event_; }
  void Reset();

  Status Wait(WaitMode mode = WaitMode::kPassive) const;
  StatusOr<bool> IsComplete() const;
  // Needs a queue created with profiling; FailedPrecondition otherwise.
  StatusOr<EventTimes> Times() const;

 private:
  const ClApi* api_ = nullptr;
  cl_event event_ = nullptr;
};

// Host<->device transfers enqueued through Buffer::Write / Buffer::Read on a context
// (clEnqueueWriteBuffer / clEnqueueReadBuffer commands and their bytes). Buffers created with
// initial contents (constants, at init) are not counted: this measures the per-invoke traffic.
struct TransferStats {
  uint64_t host_to_device = 0, device_to_host = 0;
  uint64_t host_to_device_bytes = 0, device_to_host_bytes = 0;
  uint64_t host_buffers = 0, host_buffer_bytes = 0;  // HostBuffers alive now (pinned host memory)
};

// A context on one device plus one in-order command queue.
class Context {
 public:
  static StatusOr<std::unique_ptr<Context>> Create(const DeviceInfo& device, bool profiling = false);
  // Adopts handles made elsewhere (pyopencl: ctx.int_ptr, queue.int_ptr). Both are retained,
  // the caller keeps its own references. queue may be null: we create one (profiling as asked).
  // The queue must belong to the context; profiling() reflects the queue's real properties.
  static StatusOr<std::unique_ptr<Context>> FromRaw(void* cl_context_handle, void* cl_queue_handle,
                                                    bool profiling_if_created = false);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const ClApi* api() const { return api_; }
  cl_context context() const { return context_; }
  cl_command_queue queue() const { return queue_.load(std::memory_order_acquire); }
  cl_device_id device_id() const { return device_.device; }
  const DeviceInfo& device() const { return device_; }
  // Whether the queue is ours (Create, or FromRaw without a queue) rather than a caller's.
  bool owns_queue() const { return owns_queue_; }
  bool profiling() const { return profiling_.load(std::memory_order_acquire); }
  // A context that made its own queue keeps two: a plain one and, made on first need, one with
  // CL_QUEUE_PROFILING_ENABLE (device timestamps for work-group tuning and op profiling). Invokes
  // run on the plain one: NVIDIA's driver spends more host time per enqueue on a profiling queue
  // even when no event is asked for. UseProfiling(on) finishes the active queue and makes the other
  // one active. On an adopted queue (the caller's, FromRaw) it changes nothing: work ordered on the
  // caller's queue must stay there. Callers switch between invokes, not while another thread
  // enqueues on this context.
  Status UseProfiling(bool on);

  Status Flush() const;
  Status Finish() const;
  // Waits until everything enqueued so far has completed. kPassive: clFinish. kActive: enqueue
  // a marker and spin on it (falls back to clFinish when the driver lacks clEnqueueMarker).
  Status WaitIdle(WaitMode mode = WaitMode::kPassive) const;

  TransferStats transfers() const;
  void CountTransfer(bool to_device, size_t bytes) const;
  void CountHostBuffer(int sign, size_t bytes) const;

 private:
  Context() = default;
  mutable std::atomic<uint64_t> writes_{0}, reads_{0}, write_bytes_{0}, read_bytes_{0};
  mutable std::atomic<uint64_t> host_buffers_{0}, host_buffer_bytes_{0};
  const ClApi* api_ = nullptr;
  cl_context context_ = nullptr;
  std::atomic<cl_command_queue> queue_{nullptr};
  cl_command_queue other_queue_ = nullptr;  // the inactive one of an owned pair (null until needed)
  bool owns_queue_ = false;
  std::mutex switch_mu_;
  DeviceInfo device_;
  std::atomic<bool> profiling_{false};
};

class Buffer {
 public:
  // host_data, when given, initialises the buffer (CL_MEM_COPY_HOST_PTR is added to flags).
  static StatusOr<Buffer> Create(const Context& ctx, size_t bytes, cl_mem_flags flags = CL_MEM_READ_WRITE,
                                 const void* host_data = nullptr);
  // A buffer made elsewhere (a user's cl_mem to bind to a tensor), checked and retained (the
  // wrapper releases its own reference; the caller keeps its own). Fails with InvalidArgument,
  // never crashes, for: a null handle, an object the driver does not know as a memory object
  // (CL_INVALID_MEM_OBJECT: released, or not a cl_mem), an image, a buffer of another context.
  // A pointer to freed memory cannot be detected by any OpenCL call: the caller must not pass one.
  static StatusOr<Buffer> Adopt(const Context& ctx, cl_mem mem);
  Buffer() = default;
  ~Buffer() { Reset(); }
  Buffer(Buffer&& o) noexcept { *this = std::move(o); }
  Buffer& operator=(Buffer&& o) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  // With blocking=false the host memory must stay valid (and, for Write, unchanged) until the
  // returned event (or a later WaitIdle/Finish) completes.
  Status Write(const Context& ctx, const void* src, size_t bytes, size_t offset = 0, bool blocking = true,
               Event* event = nullptr) const;
  Status Read(const Context& ctx, void* dst, size_t bytes, size_t offset = 0, bool blocking = true,
              Event* event = nullptr) const;
  Status CopyTo(const Context& ctx, const Buffer& dst, size_t bytes, size_t src_offset = 0,
                size_t dst_offset = 0) const;

  bool valid() const { return mem_ != nullptr; }
  cl_mem get() const { return mem_; }
  size_t size() const { return size_; }
  void Reset();

 private:
  const ClApi* api_ = nullptr;
  cl_mem mem_ = nullptr;
  size_t size_ = 0;
};

// Host memory the OpenCL driver allocates for fast transfers: a CL_MEM_ALLOC_HOST_PTR buffer,
// mapped once for reading and writing for its whole life. On a discrete GPU the driver backs it
// with page-locked (pinned) memory, so clEnqueueWriteBuffer / clEnqueueReadBuffer of another
// buffer with data() as the host pointer run as direct DMA instead of being staged through the
// driver's bounce buffer (NVIDIA's OpenCL: the "pinned, direct" transfer mode); on a CPU device
// (PoCL) it is plain host memory. The buffer itself is never given to a kernel (mapped all along).
// Holds the Context: the destructor unmaps on its queue (after everything enqueued before) and
// waits, so a HostBuffer may outlive the delegate that made it. On an NVIDIA device with a CUDA
// twin the memory is also registered with CUDA for its whole life (cuda_graph.h: the CUDA graph
// path's copies are then direct DMA too).
class HostBuffer {
 public:
  // Fails (never crashes) when the driver cannot allocate or map it; callers fall back to malloc.
  static StatusOr<std::unique_ptr<HostBuffer>> Create(std::shared_ptr<const Context> ctx, size_t bytes);
  ~HostBuffer();
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  uint8_t* data() const { return ptr_; }
  size_t size() const { return buffer_.size(); }

 private:
  HostBuffer() = default;
  std::shared_ptr<const Context> ctx_;
  Buffer buffer_;
  uint8_t* ptr_ = nullptr;
  int cuda_device_ = -1;  // the CUDA device the memory is registered with (cuda_graph.h), or -1
};

class Program {
 public:
  // clCreateProgramWithSource + clBuildProgram. A failed build returns Internal with the
  // options and the device's build log in the message.
  static StatusOr<Program> Build(const Context& ctx, const std::string& source, const std::string& options = "");
  // clCreateProgramWithBinary + clBuildProgram (the spec requires the build step for binaries
  // too). InvalidArgument when the driver rejects the binary, so callers can fall back to source.
  static StatusOr<Program> FromBinary(const Context& ctx, const std::vector<uint8_t>& binary,
                                      const std::string& options = "");
  Program() = default;
  ~Program() { Reset(); }
  Program(Program&& o) noexcept { *this = std::move(o); }
  Program& operator=(Program&& o) noexcept;
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  // The device binary (CL_PROGRAM_BINARIES) for the program's single device.
  StatusOr<std::vector<uint8_t>> Binary() const;
  std::string BuildLog() const;
  bool valid() const { return program_ != nullptr; }
  cl_program get() const { return program_; }
  const ClApi* api() const { return api_; }
  void Reset();

 private:
  Status BuildFor(const Context& ctx, const std::string& options);
  const ClApi* api_ = nullptr;
  cl_program program_ = nullptr;
  cl_device_id device_ = nullptr;
};

// Plain 16-byte structs matching OpenCL int4 / float4 argument layout.
struct Int4 {
  int32_t x = 0, y = 0, z = 0, w = 0;
};
struct Float4 {
  float x = 0, y = 0, z = 0, w = 0;
};
static_assert(sizeof(Int4) == 16 && sizeof(Float4) == 16, "vector argument layout");

class Kernel {
 public:
  static StatusOr<Kernel> Create(const Program& program, const std::string& name);
  Kernel() = default;
  ~Kernel() { Reset(); }
  Kernel(Kernel&& o) noexcept { *this = std::move(o); }
  Kernel& operator=(Kernel&& o) noexcept;
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;

  Status SetBuffer(uint32_t index, const Buffer& buffer);
  Status SetInt(uint32_t index, int32_t v) { return SetBytes(index, &v, sizeof(v)); }
  Status SetFloat(uint32_t index, float v) { return SetBytes(index, &v, sizeof(v)); }
  Status SetInt4(uint32_t index, const Int4& v) { return SetBytes(index, &v, sizeof(v)); }
  Status SetFloat4(uint32_t index, const Float4& v) { return SetBytes(index, &v, sizeof(v)); }
  // Any by-value argument (structs, half, vectors): raw bytes, size must match the kernel's.
  Status SetBytes(uint32_t index, const void* data, size_t size);
  // A __local pointer argument of `bytes` bytes.
  Status SetLocalMemory(uint32_t index, size_t bytes);

  // 1-3 dimensions. local empty = let the driver choose; otherwise same rank as global and
  // each global[i] must be a multiple of local[i] (OpenCL 1.2 rule; callers round up).
  // event, when given, receives the launch's event (profiling times need a profiling queue).
  Status Launch(const Context& ctx, const std::vector<size_t>& global, const std::vector<size_t>& local = {},
                Event* event = nullptr) const;

  StatusOr<size_t> MaxWorkGroupSize(const Context& ctx) const;
  const std::string& name() const { return name_; }
  cl_kernel get() const { return kernel_; }
  void Reset();

 private:
  const ClApi* api_ = nullptr;
  cl_kernel kernel_ = nullptr;
  std::string name_;
};

}  // namespace cl
}  // namespace tflite_gpu
