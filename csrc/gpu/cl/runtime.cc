// runtime.cc: see runtime.h.
#include "gpu/cl/runtime.h"

#include <cstdio>
#include <thread>
#include <utility>

#include "gpu/cuda_graph.h"

namespace tflite_gpu {
namespace cl {
namespace {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

// The function table for a handle made outside our loader (see OpenCl::ApiForForeignObject).
StatusOr<const ClApi*> ApiForHandle(const void* handle) {
  StatusOr<const OpenCl*> ocl = LoadOpenCl();
  if (ocl.ok()) return ocl.value()->ApiForForeignObject(handle);
  // No loader of ours (e.g. the caller's loader is outside our search path): trust the object's
  // own ICD dispatch table. Leaked on purpose, like the loader.
  TFG_ASSIGN_OR_RETURN(ClApi api, ClApi::FromDispatch(handle));
  return static_cast<const ClApi*>(new ClApi(api));
}

Status SpinUntilComplete(const ClApi* api, cl_event event) {
  cl_command_queue queue = nullptr;
  if (api->clGetEventInfo(event, CL_EVENT_COMMAND_QUEUE, sizeof(queue), &queue, nullptr) == CL_SUCCESS && queue)
    TFG_RETURN_IF_ERROR(ClStatus(api->clFlush(queue), "clFlush"));
  for (;;) {
    cl_int status = CL_QUEUED;
    TFG_RETURN_IF_ERROR(ClStatus(api->clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status),
                                                     &status, nullptr),
                                 "clGetEventInfo"));
    if (status == CL_COMPLETE) return OkStatus();
    if (status < 0) return Internal("OpenCL command failed: " + ClErrorName(status));
    CpuRelax();
  }
}

Status CheckLaunchSizes(const std::vector<size_t>& global, const std::vector<size_t>& local) {
  if (global.empty() || global.size() > 3) return InvalidArgument("kernel launch needs 1 to 3 dimensions");
  if (!local.empty() && local.size() != global.size())
    return InvalidArgument("local work size rank differs from global work size rank");
  for (size_t i = 0; i < global.size(); ++i) {
    if (global[i] == 0) return InvalidArgument("kernel launch with a zero global size");
    if (!local.empty() && (local[i] == 0 || global[i] % local[i] != 0))
      return InvalidArgument("global size " + std::to_string(global[i]) + " is not a multiple of local size " +
                             std::to_string(local.empty() ? 0 : local[i]) + " in dimension " + std::to_string(i));
  }
  return OkStatus();
}

// Reads `event_out` into *event when the caller asked for it, else releases it.
void HandOver(const ClApi* api, cl_event raw, Event* event) {
  if (event) *event = Event(api, raw);
  else if (raw) api->clReleaseEvent(raw);
}

}  // namespace

// ------------------------------------------------------------------------------- Event ----

Event& Event::operator=(Event&& o) noexcept {
  if (this != &o) {
    Reset();
    std::swap(api_, o.api_);
    std::swap(event_, o.event_);
  }
  return *this;
}

void Event::Reset() {
  if (event_) api_->clReleaseEvent(event_);
  event_ = nullptr;
}

Status Event::Wait(WaitMode mode) const {
  if (!event_) return FailedPrecondition("waiting on an empty OpenCL event");
  if (mode == WaitMode::kActive) return SpinUntilComplete(api_, event_);
  return ClStatus(api_->clWaitForEvents(1, &event_), "clWaitForEvents");
}

StatusOr<bool> Event::IsComplete() const {
  if (!event_) return FailedPrecondition("querying an empty OpenCL event");
  cl_int status = CL_QUEUED;
  TFG_RETURN_IF_ERROR(ClStatus(api_->clGetEventInfo(event_, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status,
                                                    nullptr),
                               "clGetEventInfo"));
  if (status < 0) return Internal("OpenCL command failed: " + ClErrorName(status));
  return status == CL_COMPLETE;
}

StatusOr<EventTimes> Event::Times() const {
  if (!event_) return FailedPrecondition("profiling an empty OpenCL event");
  EventTimes t;
  const std::pair<cl_profiling_info, uint64_t*> fields[] = {{CL_PROFILING_COMMAND_QUEUED, &t.queued},
                                                            {CL_PROFILING_COMMAND_SUBMIT, &t.submit},
                                                            {CL_PROFILING_COMMAND_START, &t.start},
                                                            {CL_PROFILING_COMMAND_END, &t.end}};
  for (const auto& f : fields) {
    cl_ulong v = 0;
    cl_int err = api_->clGetEventProfilingInfo(event_, f.first, sizeof(v), &v, nullptr);
    if (err == CL_PROFILING_INFO_NOT_AVAILABLE)
      return FailedPrecondition("profiling info not available (queue created without profiling, or command not done)");
    TFG_RETURN_IF_ERROR(ClStatus(err, "clGetEventProfilingInfo"));
    *f.second = v;
  }
  return t;
}

// ----------------------------------------------------------------------------- Context ----

StatusOr<std::unique_ptr<Context>> Context::Create(const DeviceInfo& device, bool profiling) {
  if (!device.api || !device.device) return InvalidArgument("Context::Create needs a device from ListDevices()");
  std::unique_ptr<Context> ctx(new Context());
  ctx->api_ = device.api;
  ctx->device_ = device;
  ctx->profiling_ = profiling;
  ctx->owns_queue_ = true;
  const cl_context_properties props[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(device.platform), 0};
  cl_int err = CL_SUCCESS;
  ctx->context_ = device.api->clCreateContext(props, 1, &device.device, nullptr, nullptr, &err);
  TFG_RETURN_IF_ERROR(ClStatus(err, "clCreateContext on " + device.name));
  ctx->queue_ = device.api->clCreateCommandQueue(ctx->context_, device.device, profiling ? CL_QUEUE_PROFILING_ENABLE : 0,
                                                 &err);
  TFG_RETURN_IF_ERROR(ClStatus(err, "clCreateCommandQueue on " + device.name));
  return ctx;
}

StatusOr<std::unique_ptr<Context>> Context::FromRaw(void* context_handle, void* queue_handle,
                                                    bool profiling_if_created) {
  if (!context_handle) return InvalidArgument("Context::FromRaw needs a cl_context");
  TFG_ASSIGN_OR_RETURN(const ClApi* api, ApiForHandle(context_handle));
  std::unique_ptr<Context> ctx(new Context());
  ctx->api_ = api;
  ctx->context_ = static_cast<cl_context>(context_handle);
  TFG_RETURN_IF_ERROR(ClStatus(api->clRetainContext(ctx->context_), "clRetainContext"));
  cl_device_id device = nullptr;
  if (queue_handle) {
    cl_command_queue q = static_cast<cl_command_queue>(queue_handle);
    ctx->queue_ = q;
    TFG_RETURN_IF_ERROR(ClStatus(api->clRetainCommandQueue(q), "clRetainCommandQueue"));
    cl_context owner = nullptr;
    TFG_RETURN_IF_ERROR(ClStatus(api->clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof(owner), &owner, nullptr),
                                 "clGetCommandQueueInfo(CL_QUEUE_CONTEXT)"));
    if (owner != ctx->context_) return InvalidArgument("the command queue does not belong to the given context");
    TFG_RETURN_IF_ERROR(ClStatus(api->clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof(device), &device, nullptr),
                                 "clGetCommandQueueInfo(CL_QUEUE_DEVICE)"));
    cl_command_queue_properties qp = 0;
    TFG_RETURN_IF_ERROR(ClStatus(api->clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof(qp), &qp, nullptr),
                                 "clGetCommandQueueInfo(CL_QUEUE_PROPERTIES)"));
    if (qp & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
      return InvalidArgument("an out-of-order command queue cannot be shared (the runtime relies on in-order execution)");
    ctx->profiling_ = (qp & CL_QUEUE_PROFILING_ENABLE) != 0;
  } else {
    TFG_RETURN_IF_ERROR(ClStatus(api->clGetContextInfo(ctx->context_, CL_CONTEXT_DEVICES, sizeof(device), &device, nullptr),
                                 "clGetContextInfo(CL_CONTEXT_DEVICES)"));
    cl_int err = CL_SUCCESS;
    ctx->queue_ = api->clCreateCommandQueue(ctx->context_, device, profiling_if_created ? CL_QUEUE_PROFILING_ENABLE : 0, &err);
    TFG_RETURN_IF_ERROR(ClStatus(err, "clCreateCommandQueue"));
    ctx->profiling_ = profiling_if_created;
    ctx->owns_queue_ = true;
  }
  TFG_ASSIGN_OR_RETURN(ctx->device_, QueryDeviceInfo(api, device, "foreign context"));
  return ctx;
}

Context::~Context() {
  if (cl_command_queue q = queue_.load()) api_->clReleaseCommandQueue(q);
  if (other_queue_) api_->clReleaseCommandQueue(other_queue_);
  if (context_) api_->clReleaseContext(context_);
}

Status Context::UseProfiling(bool on) {
  std::lock_guard<std::mutex> l(switch_mu_);
  if (on == profiling_.load() || !owns_queue_) return OkStatus();
  if (!other_queue_) {
    cl_int err = CL_SUCCESS;
    cl_command_queue q = api_->clCreateCommandQueue(context_, device_.device, on ? CL_QUEUE_PROFILING_ENABLE : 0, &err);
    TFG_RETURN_IF_ERROR(ClStatus(err, std::string("clCreateCommandQueue (") + (on ? "profiling" : "plain") + " queue)"));
    other_queue_ = q;
  }
  TFG_RETURN_IF_ERROR(Finish());  // the active queue's work precedes what goes to the other
  other_queue_ = queue_.exchange(other_queue_);
  profiling_.store(on);
  return OkStatus();
}

Status Context::Flush() const { return ClStatus(api_->clFlush(queue()), "clFlush"); }

Status Context::Finish() const { return ClStatus(api_->clFinish(queue()), "clFinish"); }

Status Context::WaitIdle(WaitMode mode) const {
  if (mode == WaitMode::kPassive || !api_->clEnqueueMarker) return Finish();
  cl_event raw = nullptr;
  TFG_RETURN_IF_ERROR(ClStatus(api_->clEnqueueMarker(queue(), &raw), "clEnqueueMarker"));
  Event marker(api_, raw);
  return marker.Wait(WaitMode::kActive);
}

TransferStats Context::transfers() const {
  TransferStats t;
  t.host_to_device = writes_.load();
  t.device_to_host = reads_.load();
  t.host_to_device_bytes = write_bytes_.load();
  t.device_to_host_bytes = read_bytes_.load();
  t.host_buffers = host_buffers_.load();
  t.host_buffer_bytes = host_buffer_bytes_.load();
  return t;
}

void Context::CountHostBuffer(int sign, size_t bytes) const {
  if (sign > 0) {
    host_buffers_.fetch_add(1);
    host_buffer_bytes_.fetch_add(bytes);
  } else {
    host_buffers_.fetch_sub(1);
    host_buffer_bytes_.fetch_sub(bytes);
  }
}

void Context::CountTransfer(bool to_device, size_t bytes) const {
  (to_device ? writes_ : reads_).fetch_add(1);
  (to_device ? write_bytes_ : read_bytes_).fetch_add(bytes);
}

// ------------------------------------------------------------------------------ Buffer ----

StatusOr<Buffer> Buffer::Adopt(const Context& ctx, cl_mem mem) {
  if (!mem) return InvalidArgument("the OpenCL buffer handle is null");
  const ClApi* api = ctx.api();
  cl_uint type = 0;
  cl_int err = api->clGetMemObjectInfo(mem, CL_MEM_TYPE, sizeof(type), &type, nullptr);
  if (err == CL_INVALID_MEM_OBJECT)
    return InvalidArgument("the handle is not a valid OpenCL memory object (CL_INVALID_MEM_OBJECT): was the buffer "
                           "released?");
  TFG_RETURN_IF_ERROR(ClStatus(err, "clGetMemObjectInfo(CL_MEM_TYPE)"));
  if (type != CL_MEM_OBJECT_BUFFER) {
    char hex[16];
    std::snprintf(hex, sizeof(hex), "0x%X", unsigned(type));
    if (type > CL_MEM_OBJECT_BUFFER && type <= CL_MEM_OBJECT_BUFFER + 7)
      return InvalidArgument(std::string("the OpenCL memory object is an image or pipe (CL_MEM_TYPE ") + hex +
                             "), not a buffer");
    return InvalidArgument(std::string("the handle is not an OpenCL buffer (CL_MEM_TYPE query gave ") + hex +
                           "): is it another kind of OpenCL object, or a released one?");
  }
  cl_context owner = nullptr;
  TFG_RETURN_IF_ERROR(ClStatus(api->clGetMemObjectInfo(mem, CL_MEM_CONTEXT, sizeof(owner), &owner, nullptr),
                               "clGetMemObjectInfo(CL_MEM_CONTEXT)"));
  if (owner != ctx.context())
    return InvalidArgument("the OpenCL buffer belongs to another OpenCL context than the delegate's (share one: "
                           "create the delegate with the context/queue that made the buffer)");
  size_t size = 0;
  TFG_RETURN_IF_ERROR(ClStatus(api->clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof(size), &size, nullptr),
                               "clGetMemObjectInfo(CL_MEM_SIZE)"));
  TFG_RETURN_IF_ERROR(ClStatus(api->clRetainMemObject(mem), "clRetainMemObject"));
  Buffer b;
  b.api_ = api;
  b.mem_ = mem;
  b.size_ = size;
  return b;
}

StatusOr<Buffer> Buffer::Create(const Context& ctx, size_t bytes, cl_mem_flags flags, const void* host_data) {
  if (bytes == 0) return InvalidArgument("OpenCL buffers cannot be empty");
  if (host_data) flags |= CL_MEM_COPY_HOST_PTR;
  cl_int err = CL_SUCCESS;
  cl_mem mem = ctx.api()->clCreateBuffer(ctx.context(), flags, bytes, const_cast<void*>(host_data), &err);
  TFG_RETURN_IF_ERROR(ClStatus(err, "clCreateBuffer(" + std::to_string(bytes) + " bytes)"));
  Buffer b;
  b.api_ = ctx.api();
  b.mem_ = mem;
  b.size_ = bytes;
  return b;
}

Buffer& Buffer::operator=(Buffer&& o) noexcept {
  if (this != &o) {
    Reset();
    std::swap(api_, o.api_);
    std::swap(mem_, o.mem_);
    std::swap(size_, o.size_);
  }
  return *this;
}

void Buffer::Reset() {
  if (mem_) api_->clReleaseMemObject(mem_);
  mem_ = nullptr;
  size_ = 0;
}

Status Buffer::Write(const Context& ctx, const void* src, size_t bytes, size_t offset, bool blocking,
                     Event* event) const {
  if (offset + bytes > size_) return OutOfRange("buffer write past the end");
  cl_event raw = nullptr;
  TFG_RETURN_IF_ERROR(ClStatus(api_->clEnqueueWriteBuffer(ctx.queue(), mem_, blocking ? CL_TRUE : CL_FALSE, offset,
                                                          bytes, src, 0, nullptr, event ? &raw : nullptr),
                               "clEnqueueWriteBuffer"));
  ctx.CountTransfer(true, bytes);
  HandOver(api_, raw, event);
  return OkStatus();
}

Status Buffer::Read(const Context& ctx, void* dst, size_t bytes, size_t offset, bool blocking, Event* event) const {
  if (offset + bytes > size_) return OutOfRange("buffer read past the end");
  cl_event raw = nullptr;
  TFG_RETURN_IF_ERROR(ClStatus(api_->clEnqueueReadBuffer(ctx.queue(), mem_, blocking ? CL_TRUE : CL_FALSE, offset,
                                                         bytes, dst, 0, nullptr, event ? &raw : nullptr),
                               "clEnqueueReadBuffer"));
  ctx.CountTransfer(false, bytes);
  HandOver(api_, raw, event);
  return OkStatus();
}

Status Buffer::CopyTo(const Context& ctx, const Buffer& dst, size_t bytes, size_t src_offset, size_t dst_offset) const {
  if (src_offset + bytes > size_ || dst_offset + bytes > dst.size_) return OutOfRange("buffer copy past the end");
  return ClStatus(api_->clEnqueueCopyBuffer(ctx.queue(), mem_, dst.mem_, src_offset, dst_offset, bytes, 0, nullptr,
                                            nullptr),
                  "clEnqueueCopyBuffer");
}

// -------------------------------------------------------------------------- HostBuffer ----

StatusOr<std::unique_ptr<HostBuffer>> HostBuffer::Create(std::shared_ptr<const Context> ctx, size_t bytes) {
  if (!ctx) return InvalidArgument("HostBuffer::Create needs a context");
  std::unique_ptr<HostBuffer> h(new HostBuffer());
  TFG_ASSIGN_OR_RETURN(h->buffer_, Buffer::Create(*ctx, bytes, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR));
  cl_int err = CL_SUCCESS;
  void* p = ctx->api()->clEnqueueMapBuffer(ctx->queue(), h->buffer_.get(), CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                           bytes, 0, nullptr, nullptr, &err);
  TFG_RETURN_IF_ERROR(ClStatus(err, "clEnqueueMapBuffer(" + std::to_string(bytes) + " bytes)"));
  if (!p) return Internal("clEnqueueMapBuffer returned a null pointer");
  h->ptr_ = static_cast<uint8_t*>(p);
  h->cuda_device_ = gpu::cuda::RegisterHost(*ctx, p, bytes);
  h->ctx_ = std::move(ctx);
  h->ctx_->CountHostBuffer(+1, bytes);
  return h;
}

HostBuffer::~HostBuffer() {
  if (!ptr_) return;
  const ClApi* api = ctx_->api();
  if (cuda_device_ >= 0) gpu::cuda::UnregisterHost(cuda_device_, ptr_);
  // In-order queue: the unmap runs after every command enqueued before it (a read still landing
  // in this memory included); the wait makes the memory's release follow the unmap.
  if (api->clEnqueueUnmapMemObject(ctx_->queue(), buffer_.get(), ptr_, 0, nullptr, nullptr) == CL_SUCCESS)
    api->clFinish(ctx_->queue());
  ctx_->CountHostBuffer(-1, buffer_.size());
}

// ----------------------------------------------------------------------------- Program ----

StatusOr<Program> Program::Build(const Context& ctx, const std::string& source, const std::string& options) {
  const char* text = source.c_str();
  size_t length = source.size();
  cl_int err = CL_SUCCESS;
  Program p;
  p.api_ = ctx.api();
  p.device_ = ctx.device_id();
  p.program_ = ctx.api()->clCreateProgramWithSource(ctx.context(), 1, &text, &length, &err);
  TFG_RETURN_IF_ERROR(ClStatus(err, "clCreateProgramWithSource"));
  TFG_RETURN_IF_ERROR(p.BuildFor(ctx, options));
  return p;
}

StatusOr<Program> Program::FromBinary(const Context& ctx, const std::vector<uint8_t>& binary, const std::string& options) {
  if (binary.empty()) return InvalidArgument("empty OpenCL program binary");
  const unsigned char* data = binary.data();
  size_t length = binary.size();
  cl_int binary_status = CL_SUCCESS;
  cl_int err = CL_SUCCESS;
  cl_device_id device = ctx.device_id();
  Program p;
  p.api_ = ctx.api();
  p.device_ = device;
  p.program_ = ctx.api()->clCreateProgramWithBinary(ctx.context(), 1, &device, &length, &data, &binary_status, &err);
  if (err != CL_SUCCESS || binary_status != CL_SUCCESS)
    return InvalidArgument("OpenCL driver rejected the program binary: " +
                           ClErrorName(err != CL_SUCCESS ? err : binary_status));
  Status built = p.BuildFor(ctx, options);
  if (!built.ok()) return InvalidArgument("OpenCL program binary did not build: " + built.message());
  return p;
}

Status Program::BuildFor(const Context& ctx, const std::string& options) {
  cl_device_id device = ctx.device_id();
  cl_int err = api_->clBuildProgram(program_, 1, &device, options.c_str(), nullptr, nullptr);
  if (err == CL_SUCCESS) return OkStatus();
  return Internal("OpenCL program build failed: " + ClErrorName(err) + " (options: '" + options + "', device: " +
                  ctx.device().name + ")\nbuild log:\n" + BuildLog());
}

Program& Program::operator=(Program&& o) noexcept {
  if (this != &o) {
    Reset();
    std::swap(api_, o.api_);
    std::swap(program_, o.program_);
    std::swap(device_, o.device_);
  }
  return *this;
}

void Program::Reset() {
  if (program_) api_->clReleaseProgram(program_);
  program_ = nullptr;
}

std::string Program::BuildLog() const {
  if (!program_) return "";
  size_t size = 0;
  if (api_->clGetProgramBuildInfo(program_, device_, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) != CL_SUCCESS) return "";
  std::string log(size, '\0');
  if (size && api_->clGetProgramBuildInfo(program_, device_, CL_PROGRAM_BUILD_LOG, size, &log[0], nullptr) != CL_SUCCESS)
    return "";
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

StatusOr<std::vector<uint8_t>> Program::Binary() const {
  if (!program_) return FailedPrecondition("no program");
  cl_uint num_devices = 0;
  TFG_RETURN_IF_ERROR(ClStatus(api_->clGetProgramInfo(program_, CL_PROGRAM_NUM_DEVICES, sizeof(num_devices),
                                                      &num_devices, nullptr),
                               "clGetProgramInfo(CL_PROGRAM_NUM_DEVICES)"));
  if (num_devices != 1) return Internal("expected a single-device program, got " + std::to_string(num_devices));
  size_t size = 0;
  TFG_RETURN_IF_ERROR(ClStatus(api_->clGetProgramInfo(program_, CL_PROGRAM_BINARY_SIZES, sizeof(size), &size, nullptr),
                               "clGetProgramInfo(CL_PROGRAM_BINARY_SIZES)"));
  if (size == 0) return Unavailable("the OpenCL driver exposes no program binary");
  std::vector<uint8_t> binary(size);
  unsigned char* ptr = binary.data();
  TFG_RETURN_IF_ERROR(ClStatus(api_->clGetProgramInfo(program_, CL_PROGRAM_BINARIES, sizeof(ptr), &ptr, nullptr),
                               "clGetProgramInfo(CL_PROGRAM_BINARIES)"));
  return binary;
}

// ------------------------------------------------------------------------------ Kernel ----

StatusOr<Kernel> Kernel::Create(const Program& program, const std::string& name) {
  if (!program.valid()) return FailedPrecondition("Kernel::Create on an empty program");
  cl_int err = CL_SUCCESS;
  cl_kernel k = program.api()->clCreateKernel(program.get(), name.c_str(), &err);
  TFG_RETURN_IF_ERROR(ClStatus(err, "clCreateKernel('" + name + "')"));
  Kernel kernel;
  kernel.api_ = program.api();
  kernel.kernel_ = k;
  kernel.name_ = name;
  return kernel;
}

Kernel& Kernel::operator=(Kernel&& o) noexcept {
  if (this != &o) {
    Reset();
    std::swap(api_, o.api_);
    std::swap(kernel_, o.kernel_);
    std::swap(name_, o.name_);
  }
  return *this;
}

void Kernel::Reset() {
  if (kernel_) api_->clReleaseKernel(kernel_);
  kernel_ = nullptr;
}

Status Kernel::SetBytes(uint32_t index, const void* data, size_t size) {
  return ClStatus(api_->clSetKernelArg(kernel_, index, size, data),
                  "clSetKernelArg(" + name_ + ", arg " + std::to_string(index) + ", " + std::to_string(size) + " bytes)");
}

Status Kernel::SetBuffer(uint32_t index, const Buffer& buffer) {
  cl_mem mem = buffer.get();
  return SetBytes(index, &mem, sizeof(mem));
}

Status Kernel::SetLocalMemory(uint32_t index, size_t bytes) {
  return ClStatus(api_->clSetKernelArg(kernel_, index, bytes, nullptr),
                  "clSetKernelArg(" + name_ + ", local arg " + std::to_string(index) + ")");
}

Status Kernel::Launch(const Context& ctx, const std::vector<size_t>& global, const std::vector<size_t>& local,
                      Event* event) const {
  TFG_RETURN_IF_ERROR(CheckLaunchSizes(global, local));
  cl_event raw = nullptr;
  cl_int err = api_->clEnqueueNDRangeKernel(ctx.queue(), kernel_, static_cast<cl_uint>(global.size()), nullptr,
                                            global.data(), local.empty() ? nullptr : local.data(), 0, nullptr,
                                            event ? &raw : nullptr);
  if (err != CL_SUCCESS) return ClStatus(err, "clEnqueueNDRangeKernel(" + name_ + ")");
  HandOver(api_, raw, event);
  return OkStatus();
}

StatusOr<size_t> Kernel::MaxWorkGroupSize(const Context& ctx) const {
  size_t size = 0;
  TFG_RETURN_IF_ERROR(ClStatus(api_->clGetKernelWorkGroupInfo(kernel_, ctx.device_id(), CL_KERNEL_WORK_GROUP_SIZE,
                                                              sizeof(size), &size, nullptr),
                               "clGetKernelWorkGroupInfo"));
  return size;
}

}  // namespace cl
}  // namespace tflite_gpu
