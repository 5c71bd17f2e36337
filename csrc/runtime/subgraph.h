// One executable subgraph: its tensors, nodes, execution plan and memory arena.
//
// Memory plan (decided in AllocateTensors, re-decided after any resize):
//   * constants point into the model bytes (kConstant) or, when misaligned or folded, into an
//     owned copy (kOwned); variables are owned and persist across invokes;
//   * every other tensor with a shape known at prepare time goes in one arena. Each tensor
//     lives from the step that writes it to the last step that reads it; graph inputs and
//     outputs live for the whole plan (so inputs survive invoke, as in TFLite). Tensors are
//     placed greedily by size, largest first, at the lowest 64-byte-aligned offset that does
//     not overlap a placed tensor whose lifetime intersects its own;
//   * tensors whose shape depends on data (dynamic) get their own heap storage at invoke;
//   * one scratch area, the largest any node asked for, is shared by all nodes in turn.
#pragma once
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "model/model_def.h"
#include "ops/op_registry.h"
#include "runtime/shared_state.h"
#include "runtime/delegate.h"
#include "tflite_gpu/interpreter.h"
#include "tflite_gpu/status.h"
#include "tflite_gpu/types.h"

namespace tflite_gpu {

class ThreadPool;
struct StringShim;

struct AlignedBuffer {
  // malloc'd, not new[]: under ASan (allocator_may_return_null=1) an impossible size then comes
  // back as null and is reported as std::bad_alloc -> a clear error, where new[] aborts the process.
  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  std::unique_ptr<uint8_t, Free> raw;
  uint8_t* ptr = nullptr;
  size_t size = 0;
  void Resize(size_t n);  // contents not preserved
};

class Subgraph {
 public:
  Subgraph() = default;
  // Builds tensors and nodes from the model; unknown ops are recorded and reported by
  // AllocateTensors.
  Status Build(const ModelDef& model, int index);

  Status AllocateTensors();
  Status Invoke();
  Status ResizeInputTensor(int tensor, const Dims& dims, bool strict);

  Tensor& tensor(int i) { return tensors_[i]; }
  const Tensor& tensor(int i) const { return tensors_[i]; }
  size_t tensors_size() const { return tensors_.size(); }
  std::vector<Tensor>& tensors() { return tensors_; }
  std::vector<Node>& nodes() { return nodes_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<int>& inputs() const { return inputs_; }
  const std::vector<int>& outputs() const { return outputs_; }
  const std::string& name() const { return name_; }
  bool allocated() const { return allocated_; }
  void set_pool(ThreadPool* p) { pool_ = p; }
  ThreadPool* pool() const { return pool_; }
  void set_use_reference_kernels(bool v) { use_reference_ = v; }
  bool use_reference_kernels() const { return use_reference_; }

  // Multi-subgraph models: the interpreter-wide state (other subgraphs, resource variables).
  void set_shared(SharedState* s, int index) { shared_ = s; index_ = index; }
  SharedState* shared() const { return shared_; }
  int index() const { return index_; }
  // True while this subgraph's Invoke runs: a control-flow op calling a subgraph that is
  // already running (recursion the load-time check missed) fails instead of re-entering.
  bool invoking() const { return invoking_; }
  // reset_all_variables(): is_variable tensors back to zero (the zero point for int8), as TFLite.
  void ResetVariableTensors();
  // Every tensor gets memory of its own that lives for the whole plan (set before Build).
  void set_preserve_all_tensors(bool v) { preserve_all_ = v; }
  // Custom ops the host implements (looked up by custom_code when the engine has none; set before Build).
  void set_host_custom_ops(const std::vector<std::shared_ptr<HostCustomOp>>* ops) { host_ops_ = ops; }
  // Why node i cannot run ("" when it can): an op or op version the engine lacks.
  const std::string& unresolved(int i) const { return unresolved_[i]; }

  // Delegation: replace `kernel->nodes` by `kernel` in the plan. Called after a prepare pass.
  Status ReplaceNodesWithKernel(std::unique_ptr<DelegateKernel> kernel);
  const std::vector<std::unique_ptr<DelegateKernel>>& delegate_kernels() const { return kernels_; }
  bool allow_buffer_handle_output = false;

  // For delegates: the CPU nodes of the execution plan, in order; and a node's prepare (shape
  // inference) run on behalf of a delegate kernel that replaced it.
  std::vector<int> PlanNodes() const;
  Status PrepareDelegatedNode(int node_index);

  // Called by OpContext.
  Status SetTensorShape(int index, const Dims& shape);  // (re)allocates dynamic tensors
  void* scratch() { return scratch_.ptr; }
  size_t arena_bytes() const { return arena_.size; }
  std::string NodeName(const Node& n) const;

  // Per-node timing for op profiling (microseconds of the last invoke), when enabled.
  bool profiling = false;
  struct ProfileEntry { int step; std::string name; std::string device; double us; std::vector<int> nodes; };
  std::vector<ProfileEntry> last_profile;

 private:
  struct Step {
    int node = -1;                  // a CPU node
    DelegateKernel* kernel = nullptr;  // or a delegate partition
  };
  Status PrepareNode(Node& node, bool* outputs_dynamic);
  Status EvalNode(Node& node);
  // Absent (-1) or out-of-range inputs/outputs an op used or did not declare optional.
  Status CheckNodeIndexUse(const Node& node, const OpContext& ctx) const;
  // STRING tensors of a node: allowed where its op takes them (runtime/string_tensor.h); the
  // ops that run on strings through their INT32 kernels (StringShim) get them as ids.
  Status CheckStrings(const Node& node) const;
  const StringShim* NodeStringShim(const Node& node) const;
  class StringIds;
  Status PlanMemory();
  // CPU graph fusion over plan_ (after the prepare pass, before PlanMemory; node.fuse /
  // node.fused_into, reset at every AllocateTensors): a float CONV_2D whose output only a
  // same-shape float ADD reads absorbs that ADD, and a PRELU with a per-channel constant alpha
  // that alone reads the chain's output. Off with the reference kernels, with
  // preserve_all_tensors and with TFLITE_GPU_CPU_FUSION=0.
  void FuseCpuNodes();
  Status CheckDataflow() const;  // one producer per tensor, none for graph inputs, producers first
  void ResetPlan();

  std::string name_;
  std::vector<Tensor> tensors_;
  std::vector<Node> nodes_;
  std::vector<std::string> unresolved_;  // per node: why it cannot run ("" if fine)
  std::vector<int> inputs_, outputs_;
  std::vector<Step> plan_;
  std::vector<bool> dynamic_inputs_;  // per step: re-prepare at invoke
  AlignedBuffer arena_, scratch_;
  // Declared after the arena so that it is destroyed first: a kernel's destructor finishes its
  // device work (an output read may still be landing in the arena) and frees the host memory it
  // gave boundary tensors (DelegateKernel::HostMemory).
  std::vector<std::unique_ptr<DelegateKernel>> kernels_;
  Status ResizeScratch(size_t bytes);  // an InvalidArgument when the allocation fails
  ThreadPool* pool_ = nullptr;
  bool allocated_ = false;
  bool use_reference_ = false;
  bool invoking_ = false;
  SharedState* shared_ = nullptr;
  int index_ = 0;
  bool preserve_all_ = false;
  const std::vector<std::shared_ptr<HostCustomOp>>* host_ops_ = nullptr;
  std::vector<std::unique_ptr<OpInfo>> host_op_infos_;
};

}  // namespace tflite_gpu
