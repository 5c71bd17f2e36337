#include "tflite_gpu/interpreter.h"

#include <cstdlib>
#include <cstring>
#include <system_error>
#include <thread>

#include "model/model_internals.h"
#include "runtime/env.h"
#include "runtime/subgraph.h"
#include "runtime/thread_pool.h"

#include <algorithm>

namespace tflite_gpu {

// Hidden like every internal type (nested in an exported class it would be exported otherwise).
struct __attribute__((visibility("hidden"))) Interpreter::Impl {
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
  Subgraph* sg(int i) const {
    return (i >= 0 && size_t(i) < subgraphs.size()) ? subgraphs[size_t(i)].get() : nullptr;
  }
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
  const ModelDef& def = ModelInternals::def(model_);
  impl.shared.subgraphs = &impl.subgraphs;
  if (size_t cap = env::MaxLoopTensorBytes()) impl.shared.max_loop_tensor_bytes = cap;
  impl.shared.max_while_iterations = env::MaxWhileIterations();
  impl.shared.model_data = model_.data();
  impl.shared.model_size = model_.size();
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

size_t Interpreter::subgraphs_size() const { return impl_->subgraphs.size(); }
bool Interpreter::has_subgraph(int i) const { return impl_->sg(i) != nullptr; }
const FlatBufferModel& Interpreter::model() const { return *impl_->model; }

// The primary-subgraph calls are the indexed ones at index 0 (a model always has subgraph 0).
Status Interpreter::AllocateTensors() { return AllocateTensors(0); }
Status Interpreter::Invoke() { return Invoke(0); }
const std::vector<int>& Interpreter::inputs() const { return inputs(0); }
const std::vector<int>& Interpreter::outputs() const { return outputs(0); }
size_t Interpreter::tensors_size() const { return tensors_size(0); }
size_t Interpreter::nodes_size() const { return impl_->subgraphs[0]->nodes().size(); }
Tensor* Interpreter::tensor(int index) { return tensor(0, index); }
const Tensor* Interpreter::tensor(int index) const { return tensor(0, index); }
Status Interpreter::ResizeInputTensor(int index, const Dims& dims, bool strict) {
  return ResizeInputTensor(0, index, dims, strict);
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
bool Interpreter::allocated() const { return allocated(0); }

Status Interpreter::ModifyGraphWithDelegate(Delegate* delegate) {
  if (!delegate) return InvalidArgument("ModifyGraphWithDelegate: delegate is null");
  if (delegate->deleted()) return FailedPrecondition("ModifyGraphWithDelegate: the delegate was already deleted");
  for (auto& g : impl_->subgraphs)
    if (g->invoking())
      return FailedPrecondition("ModifyGraphWithDelegate called while the interpreter is running (a re-entrant "
                                "call from a custom op or callback)");
  Subgraph& sg = *impl_->subgraphs[0];
  // The delegate partitions a prepared graph: shapes and types must be known.
  TFG_RETURN_IF_ERROR(sg.AllocateTensors());
  std::vector<std::unique_ptr<DelegateKernel>> kernels;
  TFG_RETURN_IF_ERROR(delegate->Partition(sg, &kernels));
  for (auto& k : kernels) TFG_RETURN_IF_ERROR(sg.ReplaceNodesWithKernel(std::move(k)));
  impl_->delegates.push_back(delegate);
  for (auto& u : delegate->Refused()) impl_->report.unsupported.push_back(u);
  return sg.AllocateTensors();
}

Status Interpreter::SetAllowBufferHandleOutput(bool allow) {
  impl_->subgraphs[0]->allow_buffer_handle_output = allow;
  return OkStatus();
}

Status Interpreter::EnsureTensorDataIsReadable(int index) {
  Subgraph& sg = *impl_->subgraphs[0];
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
int Interpreter::signature_subgraph_index(const std::string& key) const {
  auto it = impl_->signatures.find(key);
  return it == impl_->signatures.end() || !impl_->sg(it->second.subgraph) ? -1 : it->second.subgraph;
}
const std::map<std::string, int>* Interpreter::signature_inputs(const std::string& key) const {
  auto it = impl_->signatures.find(key);
  return it == impl_->signatures.end() ? nullptr : &it->second.inputs;
}
const std::map<std::string, int>* Interpreter::signature_outputs(const std::string& key) const {
  auto it = impl_->signatures.find(key);
  return it == impl_->signatures.end() ? nullptr : &it->second.outputs;
}

// ---- every subgraph by index ----
static Status NoSubgraph(int i, size_t n) {
  return OutOfRange("subgraph " + std::to_string(i) + " out of range (the model has " + std::to_string(n) +
                    " subgraph(s))");
}
Status Interpreter::AllocateTensors(int i) {
  Subgraph* g = impl_->sg(i);
  return g ? g->AllocateTensors() : NoSubgraph(i, impl_->subgraphs.size());
}
Status Interpreter::Invoke(int i) {
  Subgraph* g = impl_->sg(i);
  ThreadPool::InvokeScope hot(impl_->pool.get());  // workers stay awake between this invoke's ops
  return g ? g->Invoke() : NoSubgraph(i, impl_->subgraphs.size());
}
bool Interpreter::allocated(int i) const {
  Subgraph* g = impl_->sg(i);
  return g && g->allocated();
}
Status Interpreter::ResizeInputTensor(int i, int tensor_index, const Dims& dims, bool strict) {
  Subgraph* g = impl_->sg(i);
  return g ? g->ResizeInputTensor(tensor_index, dims, strict) : NoSubgraph(i, impl_->subgraphs.size());
}
static const std::vector<int>& EmptyIndices() {
  static const std::vector<int> empty;
  return empty;
}
const std::vector<int>& Interpreter::inputs(int i) const {
  Subgraph* g = impl_->sg(i);
  return g ? g->inputs() : EmptyIndices();
}
const std::vector<int>& Interpreter::outputs(int i) const {
  Subgraph* g = impl_->sg(i);
  return g ? g->outputs() : EmptyIndices();
}
size_t Interpreter::tensors_size(int i) const {
  Subgraph* g = impl_->sg(i);
  return g ? g->tensors_size() : 0;
}
Tensor* Interpreter::tensor(int i, int index) {
  Subgraph* g = impl_->sg(i);
  return (g && index >= 0 && size_t(index) < g->tensors_size()) ? &g->tensor(index) : nullptr;
}
const Tensor* Interpreter::tensor(int i, int index) const {
  const Subgraph* g = impl_->sg(i);
  return (g && index >= 0 && size_t(index) < g->tensors_size()) ? &g->tensor(index) : nullptr;
}
size_t Interpreter::arena_bytes(int i) const {
  Subgraph* g = impl_->sg(i);
  return g ? g->arena_bytes() : 0;
}

std::vector<NodeInfo> Interpreter::node_details(int i) const {
  std::vector<NodeInfo> out;
  Subgraph* g = impl_->sg(i);
  if (!g) return out;
  const ModelDef& def = ModelInternals::def(*impl_->model);
  for (const Node& n : g->nodes()) {
    NodeInfo d;
    d.index = n.index;
    d.version = n.version;
    d.inputs.assign(n.inputs.begin(), n.inputs.end());
    d.outputs.assign(n.outputs.begin(), n.outputs.end());
    d.delegated = n.delegated;
    d.folded = n.folded;
    d.unresolved = g->unresolved(n.index);
    if (n.op) {
      d.op_name = n.op->name;
      d.builtin_code = n.op->builtin_code;
    } else {
      // An op the engine lacks: the model's builtin name or custom code.
      d.op_name = "UNRESOLVED";
      if (size_t(i) < def.subgraphs.size() && n.index >= 0 && size_t(n.index) < def.subgraphs[i].operators.size()) {
        uint32_t oc = def.subgraphs[i].operators[n.index].opcode_index;
        if (oc < def.operator_codes.size()) {
          const OperatorCodeDef& c = def.operator_codes[oc];
          d.builtin_code = c.builtin_code;
          d.op_name = c.builtin_code == 32 ? c.custom_code : BuiltinName(c.builtin_code);
        }
      }
    }
    out.push_back(std::move(d));
  }
  // TFLite appends one node per delegate kernel (registration builtin_code kTfLiteBuiltinDelegate).
  int next = int(g->nodes().size());
  for (const auto& k : g->delegate_kernels()) {
    NodeInfo d;
    d.index = next++;
    d.op_name = "DELEGATE";
    d.builtin_code = 51;
    d.inputs = k->inputs;
    d.outputs = k->outputs;
    d.delegate_kernel = true;
    out.push_back(std::move(d));
  }
  return out;
}

void Interpreter::SetProfiling(bool on) { impl_->subgraphs[0]->profiling = on; }
std::vector<ProfileEntry> Interpreter::last_profile(int i) const {
  std::vector<ProfileEntry> out;
  Subgraph* g = impl_->sg(i);
  if (!g) return out;
  for (const auto& e : g->last_profile) {
    ProfileEntry p;
    p.step = e.step;
    p.name = e.name;
    p.device = e.device;
    p.us = e.us;
    p.nodes = e.nodes;
    out.push_back(std::move(p));
  }
  return out;
}
std::vector<DelegateKernelTime> Interpreter::delegate_kernel_times() const {
  std::vector<DelegateKernelTime> out;
  for (const auto& k : impl_->subgraphs[0]->delegate_kernels())
    for (const auto& t : k->DeviceTimes()) out.push_back({t.node, t.name, t.us, t.kernel});
  return out;
}

void CopyTensorData(void* dst, const void* src, size_t bytes) {
  constexpr size_t kMin = size_t(8) << 20, kChunk = size_t(2) << 20;
  size_t n = bytes >= kMin ? size_t(env::CopyThreads()) : 1;
  n = std::min({n, bytes / kChunk, size_t(std::max(1u, std::thread::hardware_concurrency()))});
  if (n <= 1) {
    if (bytes) std::memcpy(dst, src, bytes);
    return;
  }
  // Chunks of whole 64-byte lines; the caller's thread copies the last one.
  const size_t per = (bytes / n + 63) / 64 * 64;
  std::vector<std::thread> ts;
  ts.reserve(n - 1);
  size_t off = 0;
  for (size_t i = 0; i + 1 < n && off < bytes; ++i, off += per) {
    const size_t len = std::min(per, bytes - off);
    try {
      ts.emplace_back([=] { std::memcpy(static_cast<uint8_t*>(dst) + off, static_cast<const uint8_t*>(src) + off, len); });
    } catch (const std::system_error&) {  // no thread to be had: copy it here
      std::memcpy(static_cast<uint8_t*>(dst) + off, static_cast<const uint8_t*>(src) + off, len);
    }
  }
  if (off < bytes) std::memcpy(static_cast<uint8_t*>(dst) + off, static_cast<const uint8_t*>(src) + off, bytes - off);
  for (auto& t : ts) t.join();
}

}  // namespace tflite_gpu
