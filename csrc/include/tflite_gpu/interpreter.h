// Interpreter and InterpreterBuilder, mirroring tflite::Interpreter / tflite::InterpreterBuilder.
//
//   auto model = tflite_gpu::FlatBufferModel::BuildFromFile("model.tflite");
//   tflite_gpu::ops::builtin::BuiltinOpResolver resolver;
//   std::unique_ptr<tflite_gpu::Interpreter> interpreter;
//   tflite_gpu::InterpreterBuilder(*model, resolver)(&interpreter);
//   interpreter->AllocateTensors();
//   float* in = interpreter->typed_input_tensor<float>(0);  ...
//   interpreter->Invoke();
//   float* out = interpreter->typed_output_tensor<float>(0);
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tflite_gpu/c_common.h"
#include "tflite_gpu/model.h"
#include "tflite_gpu/status.h"
#include "tflite_gpu/types.h"

namespace tflite_gpu {

namespace ops::builtin {
// Every op in the engine's table is built in; the resolver exists for source parity with TFLite.
class BuiltinOpResolver {};
}  // namespace ops::builtin

// A custom op implemented by the host program (the Python binding uses it for custom ops
// written in Python). A model's CUSTOM op whose custom_code names no op of the engine is run
// by the HostCustomOp of that name. Both callbacks see the node's tensors through this context.
class TFLITE_GPU_API HostOpContext {
 public:
  virtual ~HostOpContext() = default;
  virtual int num_inputs() const = 0;
  virtual const Tensor* input(int i) const = 0;  // nullptr for an omitted optional input
  virtual int num_outputs() const = 0;
  virtual Tensor* output(int i) = 0;
  // Sets output i's shape; at invoke it (re)allocates the output's storage.
  virtual Status SetOutputShape(int i, const Dims& shape) = 0;
};
struct HostCustomOp {
  std::string name;
  // Optional, called at AllocateTensors: set every output's shape. Without it the outputs are
  // dynamic and `eval` sets their shapes at every invoke (before writing them).
  std::function<Status(HostOpContext&)> prepare;
  std::function<Status(HostOpContext&)> eval;
};

struct InterpreterOptions {
  int num_threads = -1;            // -1: the number of hardware threads
  bool use_reference_kernels = false;  // run the plain scalar kernels (the test oracle)
  // Every tensor keeps its own memory and its value after Invoke (no sharing by the memory
  // planner), so intermediate tensors can be read (TFLite's experimental_preserve_all_tensors).
  bool preserve_all_tensors = false;
  std::vector<std::shared_ptr<HostCustomOp>> host_custom_ops;
};

// What the delegates applied to the primary subgraph took: the same figures as Python's
// Interpreter.delegation_report(). total_nodes counts the nodes that run at invoke (not those
// folded into constants at allocation); unsupported lists, per applied delegate in order, the
// nodes it refused (node index, op name, op version, reason), which stay on the CPU kernels.
struct DelegationReport {
  int delegated_nodes = 0, total_nodes = 0, partitions = 0;
  struct Unsupported { int node; std::string op; int version; std::string reason; };
  std::vector<Unsupported> unsupported;
};

// One node of a subgraph, for listings (TFLite's node_and_registration + the Python
// _get_ops_details()). The model's nodes come first, in model order; after a delegate is applied,
// one more entry per delegate kernel follows (op_name "DELEGATE", builtin_code 51), whose
// inputs/outputs are the partition's, as in TFLite.
struct NodeInfo {
  int index = 0;
  std::string op_name;       // "CONV_2D", a custom op's custom_code, "DELEGATE"
  int builtin_code = -1;     // the schema's BuiltinOperator (32: CUSTOM, 51: DELEGATE)
  int version = 1;
  std::vector<int> inputs, outputs;  // tensor indices; -1 for an omitted optional input
  bool delegated = false;    // replaced by a delegate kernel
  bool folded = false;       // constant-folded at allocation (runs nowhere at invoke)
  bool delegate_kernel = false;  // this entry is a delegate kernel (a "DELEGATE" node)
  std::string unresolved;    // why the node cannot run ("" when it can)
};

// One step of the last profiled invoke (SetProfiling(true)).
struct ProfileEntry {
  int step = 0;
  std::string name;    // op name, or the delegate kernel's name
  std::string device;  // "cpu" / the delegate
  double us = 0;
  std::vector<int> nodes;
};
// Device-side time of one kernel of a delegate partition (OpenCL profiling events).
struct DelegateKernelTime {
  int node = -1;
  std::string name;
  double us = 0;
  std::string kernel;  // the generator's kernel name (e.g. "conv2d_gemm8x2"), for tests and tuning
};

class TFLITE_GPU_API Interpreter {
 public:
  ~Interpreter();
  Status AllocateTensors();
  Status Invoke();

  const std::vector<int>& inputs() const;
  const std::vector<int>& outputs() const;
  size_t tensors_size() const;
  size_t nodes_size() const;
  Tensor* tensor(int index);
  const Tensor* tensor(int index) const;
  Tensor* input_tensor(size_t i) { return tensor(inputs()[i]); }
  Tensor* output_tensor(size_t i) { return tensor(outputs()[i]); }
  template <typename T> T* typed_tensor(int index) {
    Tensor* t = tensor(index);
    return t ? reinterpret_cast<T*>(t->data) : nullptr;
  }
  template <typename T> T* typed_input_tensor(int i) { return typed_tensor<T>(inputs()[i]); }
  template <typename T> T* typed_output_tensor(int i) { return typed_tensor<T>(outputs()[i]); }

  Status ResizeInputTensor(int tensor_index, const Dims& dims, bool strict = false);
  // TFLite's ResetVariableTensors: every is_variable tensor of every subgraph back to zero.
  // Resource variables and CALL_ONCE state persist (as in LiteRT 2.3).
  Status ResetVariableTensors();
  void SetNumThreads(int num_threads);
  int num_threads() const;
  bool allocated() const;

  // Delegates (TfLiteGpuDelegateV2Create / TFLGpuDelegateCreate make one; TfLiteDelegate is
  // opaque). Applies to the primary subgraph.
  Status ModifyGraphWithDelegate(TfLiteDelegate* delegate);
  Status SetAllowBufferHandleOutput(bool allow);
  Status EnsureTensorDataIsReadable(int tensor_index);
  DelegationReport delegation_report() const;

  // Signatures. Signature subgraphs are allocated/invoked like the primary one, by index.
  std::vector<std::string> signature_keys() const;
  // The subgraph a signature runs, or -1 if no such key.
  int signature_subgraph_index(const std::string& key) const;
  const std::map<std::string, int>* signature_inputs(const std::string& key) const;
  const std::map<std::string, int>* signature_outputs(const std::string& key) const;

  // ---- Every subgraph by index: 0 is the primary subgraph (what the calls above use);
  // signature and control-flow bodies follow. An index out of range gives OutOfRange /
  // nullptr / an empty result. ----
  size_t subgraphs_size() const;
  bool has_subgraph(int subgraph_index) const;
  Status AllocateTensors(int subgraph_index);
  Status Invoke(int subgraph_index);
  bool allocated(int subgraph_index) const;
  Status ResizeInputTensor(int subgraph_index, int tensor_index, const Dims& dims, bool strict);
  const std::vector<int>& inputs(int subgraph_index) const;
  const std::vector<int>& outputs(int subgraph_index) const;
  size_t tensors_size(int subgraph_index) const;
  Tensor* tensor(int subgraph_index, int tensor_index);
  const Tensor* tensor(int subgraph_index, int tensor_index) const;
  std::vector<NodeInfo> node_details(int subgraph_index) const;
  size_t arena_bytes(int subgraph_index) const;  // bytes of the subgraph's memory-planned arena

  // Op profiling of the primary subgraph: per-step times of the next invokes.
  void SetProfiling(bool on);
  std::vector<ProfileEntry> last_profile(int subgraph_index = 0) const;
  std::vector<DelegateKernelTime> delegate_kernel_times() const;

  const FlatBufferModel& model() const;

 private:
  friend class InterpreterBuilder;
  Interpreter();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class TFLITE_GPU_API InterpreterBuilder {
 public:
  InterpreterBuilder(const FlatBufferModel& model,
                     const ops::builtin::BuiltinOpResolver& resolver = ops::builtin::BuiltinOpResolver(),
                     InterpreterOptions options = InterpreterOptions());
  // Builds the interpreter: resolves every op (an unknown op or version fails here, naming the
  // op, its version and the node), parses options. Tensors are allocated by AllocateTensors().
  Status operator()(std::unique_ptr<Interpreter>* interpreter);
  void SetNumThreads(int n) { options_.num_threads = n; }

 private:
  const FlatBufferModel& model_;
  InterpreterOptions options_;
};

// memcpy for tensor data (the Python set_tensor / get_tensor copies): a copy of 8 MB or more is
// split over up to TFLITE_GPU_COPY_THREADS threads (default 4; "1": one plain memcpy), since one
// core moves only ~12 GB/s on a server (a 19 MB batch-32 input: 1.65 ms on the H100 host).
TFLITE_GPU_API void CopyTensorData(void* dst, const void* src, size_t bytes);

}  // namespace tflite_gpu
