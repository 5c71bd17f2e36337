// The seed document's C++ GPU example on tflite_gpu: the minimal example plus the GPU lines
// (create the delegate, ModifyGraphWithDelegate, Invoke, delete the delegate).
//
//   gpu_delegate MODEL.tflite INPUT.bin OUTPUT.bin [fp16] [bind]
//
// With "bind", the input and output live in OpenCL buffers bound to the tensors
// (TfLiteGpuDelegateBindBufferToTensor / TFLGpuDelegateBindMetalBufferToTensor, after
// ModifyGraphWithDelegate as Metal's) and Invoke moves no data between host and device. The host
// calls OpenCL itself (here through dlopen of the ICD loader: TFLITE_GPU_OPENCL_LIBRARY, else
// libOpenCL.so.1) on the delegate's context (TfLiteGpuDelegateGetClContext).
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <vector>

#include "tflite_gpu/gpu_delegate.h"
#include "tflite_gpu/interpreter.h"

using namespace tflite_gpu;

namespace {

// The few OpenCL calls the host needs (signatures as in CL/cl.h).
struct HostCl {
  using CreateBuffer = cl_mem (*)(void*, uint64_t, size_t, void*, int32_t*);
  using EnqueueWrite = int32_t (*)(void*, cl_mem, uint32_t, size_t, size_t, const void*, uint32_t, const void*, void*);
  using EnqueueRead = int32_t (*)(void*, cl_mem, uint32_t, size_t, size_t, void*, uint32_t, const void*, void*);
  using Release = int32_t (*)(cl_mem);
  CreateBuffer create = nullptr;
  EnqueueWrite write = nullptr;
  EnqueueRead read = nullptr;
  Release release = nullptr;
  bool Load() {
    const char* env = std::getenv("TFLITE_GPU_OPENCL_LIBRARY");
    void* lib = nullptr;
    for (const char* name : {env, "libOpenCL.so.1", "libOpenCL.so"})
      if (name && *name && (lib = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
    if (!lib) return false;
    create = reinterpret_cast<CreateBuffer>(dlsym(lib, "clCreateBuffer"));
    write = reinterpret_cast<EnqueueWrite>(dlsym(lib, "clEnqueueWriteBuffer"));
    read = reinterpret_cast<EnqueueRead>(dlsym(lib, "clEnqueueReadBuffer"));
    release = reinterpret_cast<Release>(dlsym(lib, "clReleaseMemObject"));
    return create && write && read && release;
  }
};

// Runs the model with its first input and output bound to OpenCL buffers. Returns the exit code.
int RunBound(Interpreter& interpreter, TfLiteDelegate* delegate, const std::vector<char>& input, const char* out_path) {
  HostCl cl;
  if (!cl.Load()) {
    std::fprintf(stderr, "bind: cannot load the OpenCL ICD loader (set TFLITE_GPU_OPENCL_LIBRARY)\n");
    return 4;
  }
  void* context = nullptr;
  void* queue = nullptr;
  if (TfLiteGpuDelegateGetClContext(delegate, &context, &queue) != kTfLiteOk) return 4;
  const int in_index = interpreter.inputs()[0], out_index = interpreter.outputs()[0];
  const size_t out_bytes = interpreter.output_tensor(0)->bytes;
  int32_t err = 0;
  cl_mem in_buf = cl.create(context, /*CL_MEM_READ_WRITE*/ 1, input.size(), nullptr, &err);
  cl_mem out_buf = err == 0 ? cl.create(context, 1, out_bytes, nullptr, &err) : nullptr;
  if (err != 0) {
    std::fprintf(stderr, "bind: clCreateBuffer failed (%d)\n", err);
    return 4;
  }
  // The host fills the input buffer itself (in an application a GPU stage would produce it).
  if (cl.write(queue, in_buf, 1, 0, input.size(), input.data(), 0, nullptr, nullptr) != 0) return 4;
  if (TfLiteGpuDelegateBindBufferToTensor(delegate, in_buf, in_index) != kTfLiteOk ||
      !TFLGpuDelegateBindMetalBufferToTensor(delegate, out_index, out_buf)) {
    std::fprintf(stderr, "bind: binding failed (see the log above)\n");
    return 4;
  }
  interpreter.SetAllowBufferHandleOutput(true);  // the output stays in out_buf
  GpuTransferStats before, after;
  GpuDelegateTransferStats(delegate, &before);
  if (interpreter.Invoke() != kTfLiteOk) return 1;
  GpuDelegateTransferStats(delegate, &after);
  std::printf("bound invoke: %llu host->device, %llu device->host transfers\n",
              static_cast<unsigned long long>(after.host_to_device - before.host_to_device),
              static_cast<unsigned long long>(after.device_to_host - before.device_to_host));
  std::vector<char> out(out_bytes);
  if (cl.read(queue, out_buf, 1, 0, out_bytes, out.data(), 0, nullptr, nullptr) != 0) return 4;
  std::ofstream(out_path, std::ios::binary).write(out.data(), std::streamsize(out.size()));
  // The host copy on request (Interpreter::EnsureTensorDataIsReadable) holds the same values.
  if (interpreter.EnsureTensorDataIsReadable(out_index) != kTfLiteOk) return 1;
  bool same = std::memcmp(out.data(), interpreter.output_tensor(0)->data, out_bytes) == 0;
  std::printf("EnsureTensorDataIsReadable: host copy %s the bound buffer\n", same ? "matches" : "DIFFERS FROM");
  TfLiteGpuDelegateBindBufferToTensor(delegate, nullptr, in_index);  // unbind (the delegate releases its reference)
  TfLiteGpuDelegateBindBufferToTensor(delegate, nullptr, out_index);
  cl.release(in_buf);
  cl.release(out_buf);
  return same ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s MODEL.tflite INPUT.bin OUTPUT.bin [fp16] [bind]\n", argv[0]);
    return 2;
  }
  bool fp16 = false, bind = false;
  for (int i = 4; i < argc; ++i) {
    fp16 = fp16 || std::strcmp(argv[i], "fp16") == 0;
    bind = bind || std::strcmp(argv[i], "bind") == 0;
  }
  // Set up interpreter.
  auto model = FlatBufferModel::BuildFromFile(argv[1]);
  if (!model) return 1;
  ops::builtin::BuiltinOpResolver op_resolver;
  std::unique_ptr<Interpreter> interpreter;
  InterpreterBuilder(*model, op_resolver)(&interpreter);

  // NEW: Prepare GPU delegate.
  TfLiteGpuDelegateOptionsV2 options = TfLiteGpuDelegateOptionsV2Default();
  if (fp16) options.is_precision_loss_allowed = 1;
  auto* delegate = TfLiteGpuDelegateV2Create(&options);
  Status st = interpreter->ModifyGraphWithDelegate(delegate);
  if (st != kTfLiteOk) {
    std::fprintf(stderr, "ModifyGraphWithDelegate: %s\n", st.message().c_str());
    TfLiteGpuDelegateV2Delete(delegate);
    return 3;
  }
  DelegationReport report = interpreter->delegation_report();
  GpuDelegateInfo info = GetGpuDelegateInfo(delegate);
  std::printf("device: %s, precision %s, delegated %d/%d nodes in %d partition(s)\n", info.device_name.c_str(),
              info.precision.c_str(), report.delegated_nodes, report.total_nodes, report.partitions);
  for (const DelegationReport::Unsupported& u : report.unsupported)
    std::printf("unsupported: node %d %s v%d: %s\n", u.node, u.op.c_str(), u.version, u.reason.c_str());

  // Run inference.
  std::ifstream in(argv[2], std::ios::binary);
  std::vector<char> input((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Tensor* t = interpreter->input_tensor(0);
  if (input.size() != t->bytes) {
    std::fprintf(stderr, "input file has %zu bytes, input tensor needs %zu\n", input.size(), t->bytes);
    return 1;
  }
  if (bind) {
    int rc = RunBound(*interpreter, delegate, input, argv[3]);
    interpreter.reset();  // the interpreter goes before its delegate
    TfLiteGpuDelegateV2Delete(delegate);
    return rc;
  }
  std::memcpy(interpreter->typed_input_tensor<float>(0), input.data(), input.size());
  if (interpreter->Invoke() != kTfLiteOk) return 1;
  const Tensor* out = interpreter->output_tensor(0);
  std::ofstream(argv[3], std::ios::binary)
      .write(reinterpret_cast<const char*>(interpreter->typed_output_tensor<float>(0)), std::streamsize(out->bytes));

  // NEW: Clean up.
  TfLiteGpuDelegateV2Delete(delegate);
  return 0;
}
