#include "tflite_gpu/interpreter.h"

#include <cstdlib>
#include <thread>

#include "model/model_def.h"
#include "runtime/env.h"
#include "runtime/subgraph.h"
#include "runtime/thread_pool.h"

#include <algorithm>

namespace tflite_gpu {

struct Interpreter::Impl {
  const FlatBufferModel* model = nullptr;
  InterpreterOptions options;
  std::vector<std::unique_ptr<Subgraph>> subgraphs;
  SharedState shared;
  std::unique_ptr<ThreadPool> pool;
  struct Sig {
    int subgraph;
    std::map<std::string, int> inputs, outputs;
  };
  std::map<std::string, Sig> signatures;
  std::vector<std::string> signature_order;
  std::vector<Delegate*> delegates;
  DelegationReport report;
};

Interpreter::Interpreter() : impl_(new Impl) {}
Interpreter::~Interpreter() = default;

static int ResolveThreads(int n) {
  if (n > 0) return n;
  unsigned hw = std::thread::hardware_concurrency();
  return hw ? int(hw) : 1;
}

InterpreterBuilder::InterpreterBuilder(const FlatBufferModel& model, const ops::builtin::BuiltinOpResolver&,
                                       InterpreterOptions options)
    : model_(model), options_(options) {}

Status InterpreterBuilder::operator()(std::unique_ptr<Interpreter>* out) {
  std::unique_ptr<Interpreter> interp(new Interpreter);
  auto& impl = *interp->impl_;
  impl.model = &model_;
  impl.options = options_;
  impl.pool.reset(new ThreadPool(ResolveThreads(options_.num_threads)));
  const ModelDef& def = model_.def();
  impl.shared.subgraphs = &impl.subgraphs;
  if (size_t cap = env::MaxLoopTensorBytes()) impl.shared.max_loop_tensor_bytes = cap;
  impl.shared.max_while_iterations = env::MaxWhileIterations();
  for (size_t i = 0; i < def.subgraphs.size(); ++i) {
    auto sg = std::make_unique<Subgraph>();
    sg->set_shared(&impl.shared, int(i));
    sg->set_host_custom_ops(&impl.options.host_custom_ops);
    Status st = sg->Build(def, int(i));
    if (!st.ok())
      return Status(st.code(), def.subgraphs.size() > 1 ? "subgraph " + std::to_string(i) + ": " + st.message() : st.message());
    // As TFLite's InterpreterBuilder: a builtin op (or op version) the engine lacks fails here;
    // an unknown custom op fails at AllocateTensors (it may be resolved before then in TFLite).
    for (size_t n = 0; n < def.subgraphs[i].operators.size(); ++n) {
      const std::string& why = sg->unresolved(int(n));
      if (why.empty()) continue;
      const OperatorDef& od = def.subgraphs[i].operators[n];
      if (od.opcode_index < def.operator_codes.size() && def.operator_codes[od.opcode_index].builtin_code != 32)
        return Unimplemented((i ? "subgraph " + std::to_string(i) + ", " : std::string()) + why);
    }
    sg->set_pool(impl.pool.get());
    sg->set_use_reference_kernels(options_.use_reference_kernels);
    sg->set_preserve_all_tensors(options_.preserve_all_tensors);
    impl.subgraphs.push_back(std::move(sg));
  }
  // Control flow: every subgraph a node calls must exist, and no subgraph may (indirectly) call
  // itself (TFLite has no recursion; a cycle would re-enter a running subgraph).
  const int nsg = int(impl.subgraphs.size());
  std::vector<std::vector<int>> calls(static_cast<size_t>(nsg));
  for (int g = 0; g < nsg; ++g)
    for (const Node& n : impl.subgraphs[size_t(g)]->nodes())
      for (int r : n.subgraph_refs) {
        if (r < 0 || r >= nsg)
          return InvalidArgument("subgraph " + std::to_string(g) + " node " + std::to_string(n.index) + " (" +
                                 (n.op ? n.op->name : "?") + ") refers to subgraph " + std::to_string(r) +
                                 ", but the model has " + std::to_string(nsg) + " subgraph(s)");
        calls[size_t(g)].push_back(r);
      }
  // Iterative depth-first search (a hostile model may chain many subgraphs).
  std::vector<int> color(size_t(nsg), 0);
  std::vector<std::pair<int, size_t>> stack;  // (subgraph, next call to follow)
  std::string cycle;
  auto find_cycle = [&](int root) {
    stack.assign(1, {root, 0});
    color[size_t(root)] = 1;
    while (!stack.empty()) {
      auto& top = stack.back();
      const std::vector<int>& c = calls[size_t(top.first)];
      if (top.second == c.size()) {
        color[size_t(top.first)] = 2;
        stack.pop_back();
        continue;
      }
      int r = c[top.second++];
      if (color[size_t(r)] == 1) {
        size_t k = 0;
        while (stack[k].first != r) ++k;
        for (; k < stack.size(); ++k) cycle += std::to_string(stack[k].first) + " -> ";
        cycle += std::to_string(r);
        return true;
      }
      if (color[size_t(r)] == 0) {
        color[size_t(r)] = 1;
        stack.push_back({r, 0});
      }
    }
    return false;
  };
  for (int g = 0; g < nsg; ++g)
    if (color[size_t(g)] == 0 && find_cycle(g))
      return InvalidArgument("recursion between subgraphs (control-flow ops call " + cycle +
                             "); TFLite models may not call a subgraph from itself");
  for (const SignatureDefT& s : def.signatures) {
    Interpreter::Impl::Sig sig;
    sig.subgraph = int(s.subgraph_index);
    for (auto& kv : s.inputs) sig.inputs[kv.first] = kv.second;
    for (auto& kv : s.outputs) sig.outputs[kv.first] = kv.second;
    if (!impl.signatures.count(s.key)) impl.signature_order.push_back(s.key);
    impl.signatures[s.key] = std::move(sig);
  }
  *out = std::move(interp);
  return OkStatus();
}

Subgraph& Interpreter::primary_subgraph() { return *impl_->subgraphs[0]; }
Subgraph* Interpreter::subgraph(int i) {
  return (i >= 0 && size_t(i) < impl_->subgraphs.size()) ? impl_->subgraphs[i].get() : nullptr;
}
size_t Interpreter::subgraphs_size() const { return impl_->subgraphs.size(); }
const FlatBufferModel& Interpreter::model() const { return *impl_->model; }

Status Interpreter::AllocateTensors() { return primary_subgraph().AllocateTensors(); }
Status Interpreter::Invoke() { return primary_subgraph().Invoke(); }
const std::vector<int>& Interpreter::inputs() const { return impl_->subgraphs[0]->inputs(); }
const std::vector<int>& Interpreter::outputs() const { return impl_->subgraphs[0]->outputs(); }
size_t Interpreter::tensors_size() const { return impl_->subgraphs[0]->tensors_size(); }
size_t Interpreter::nodes_size() const { return impl_->subgraphs[0]->nodes().size(); }
Tensor* Interpreter::tensor(int index) {
  Subgraph& sg = *impl_->subgraphs[0];
  return (index >= 0 && size_t(index) < sg.tensors_size()) ? &sg.tensor(index) : nullptr;
}
const Tensor* Interpreter::tensor(int index) const {
  const Subgraph& sg = *impl_->subgraphs[0];
  return (index >= 0 && size_t(index) < sg.tensors_size()) ? &sg.tensor(index) : nullptr;
}
Status Interpreter::ResizeInputTensor(int index, const Dims& dims, bool strict) {
  return primary_subgraph().ResizeInputTensor(index, dims, strict);
}
Status Interpreter::ResetVariableTensors() {
  for (auto& sg : impl_->subgraphs) sg->ResetVariableTensors();
  return OkStatus();
}
void Interpreter::SetNumThreads(int n) {
  impl_->pool.reset(new ThreadPool(ResolveThreads(n)));
  for (auto& sg : impl_->subgraphs) sg->set_pool(impl_->pool.get());
}
int Interpreter::num_threads() const { return impl_->pool->num_threads(); }
bool Interpreter::allocated() const { return impl_->subgraphs[0]->allocated(); }

Status Interpreter::ModifyGraphWithDelegate(Delegate* delegate) {
  if (!delegate) return InvalidArgument("ModifyGraphWithDelegate: delegate is null");
  if (delegate->deleted()) return FailedPrecondition("ModifyGraphWithDelegate: the delegate was already deleted");
  Subgraph& sg = primary_subgraph();
  // The delegate partitions a prepared graph: shapes and types must be known.
  TFG_RETURN_IF_ERROR(sg.AllocateTensors());
  std::vector<std::unique_ptr<DelegateKernel>> kernels;
  TFG_RETURN_IF_ERROR(delegate->Partition(sg, &kernels));
  for (auto& k : kernels) TFG_RETURN_IF_ERROR(sg.ReplaceNodesWithKernel(std::move(k)));
  impl_->delegates.push_back(delegate);
  return sg.AllocateTensors();
}

Status Interpreter::SetAllowBufferHandleOutput(bool allow) {
  primary_subgraph().allow_buffer_handle_output = allow;
  return OkStatus();
}

Status Interpreter::EnsureTensorDataIsReadable(int index) {
  Subgraph& sg = primary_subgraph();
  if (index < 0 || size_t(index) >= sg.tensors_size())
    return OutOfRange("tensor index " + std::to_string(index) + " out of range");
  Tensor& t = sg.tensor(index);
  if (!t.data_is_stale) return OkStatus();
  for (auto& k : sg.delegate_kernels())
    for (int o : k->outputs)
      if (o == index) {
        TFG_RETURN_IF_ERROR(k->CopyToHost(sg, index));
        t.data_is_stale = false;
        return OkStatus();
      }
  return OkStatus();
}

DelegationReport Interpreter::delegation_report() const {
  DelegationReport r = impl_->report;
  const Subgraph& sg = *impl_->subgraphs[0];
  r.total_nodes = 0;
  r.delegated_nodes = 0;
  for (const Node& n : sg.nodes()) {
    if (n.folded) continue;  // evaluated once at allocation: runs nowhere at invoke
    r.total_nodes++;
    if (n.delegated) r.delegated_nodes++;
  }
  r.partitions = int(sg.delegate_kernels().size());
  return r;
}

std::vector<std::string> Interpreter::signature_keys() const { return impl_->signature_order; }
Subgraph* Interpreter::signature_subgraph(const std::string& key) {
  auto it = impl_->signatures.find(key);
  return it == impl_->signatures.end() ? nullptr : subgraph(it->second.subgraph);
}
const std::map<std::string, int>* Interpreter::signature_inputs(const std::string& key) const {
  auto it = impl_->signatures.find(key);
  return it == impl_->signatures.end() ? nullptr : &it->second.inputs;
}
const std::map<std::string, int>* Interpreter::signature_outputs(const std::string& key) const {
  auto it = impl_->signatures.find(key);
  return it == impl_->signatures.end() ? nullptr : &it->second.outputs;
}

}  // namespace tflite_gpu
