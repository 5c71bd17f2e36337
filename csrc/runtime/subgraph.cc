#include "runtime/subgraph.h"
#include "runtime/string_tensor.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstring>
#include <string_view>
#include <unordered_map>

#include "ops/elementwise/ew_common.h"
#include "runtime/env.h"
#include "runtime/thread_pool.h"

namespace tflite_gpu {

namespace {
constexpr size_t kAlign = 64;
size_t AlignUp(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }
size_t TensorBytes(const Tensor& t) {
  int64_t n = t.num_elements();
  return n < 0 ? 0 : size_t(n) * DTypeSize(t.type);
}

// Which of a node's inputs / outputs are STRING tensors (bit i: position i; bit 31 also stands
// for every position past 30).
uint32_t StringMask(const std::vector<Tensor>& tensors, const std::vector<int32_t>& idx) {
  uint32_t m = 0;
  for (size_t i = 0; i < idx.size(); ++i)
    if (idx[i] >= 0 && tensors[idx[i]].type == DType::kString) m |= 1u << std::min<size_t>(i, 31);
  return m;
}
int LowestBit(uint32_t m) {
  int i = 0;
  while (!(m & (1u << i))) ++i;
  return i;
}
}  // namespace

// A node whose op runs on strings through its INT32 kernel (StringShim, runtime/string_tensor.h):
// while the kernel prepares or runs, its STRING inputs are INT32 tensors of ids (an id per
// element: its position among the node's strings, or for comparisons the same id for equal
// strings) and its STRING outputs INT32 tensors; afterwards the inputs are restored and each
// output id becomes the string it stands for.
class Subgraph::StringIds {
 public:
  StringIds(Subgraph* sg, const Node& node, const StringShim& shim) : sg_(sg), node_(node), shim_(shim) {}
  ~StringIds() { Restore(); }

  Status Swap(bool at_eval) {
    std::unordered_map<std::string_view, int32_t> canon;
    for (size_t i = 0; i < node_.inputs.size(); ++i) {
      const int ti = node_.inputs[i];
      if (ti < 0 || sg_->tensors_[ti].type != DType::kString) continue;
      Tensor& t = sg_->tensors_[ti];
      ins_.push_back({ti, t.data, t.bytes});
      const int64_t n = t.num_elements();
      ids_.emplace_back();
      std::vector<int32_t>& ids = ids_.back();
      if (at_eval || t.is_const) {
        if (n < 0 || StringCount(t) != n)
          return InvalidArgument("input " + std::to_string(i) + " holds " +
                                 std::to_string(StringCount(t)) + " strings but its shape " + DimsToString(t.shape) +
                                 " has " + std::to_string(n) + " elements");
        ids.resize(size_t(n) + 1);
        for (int64_t j = 0; j < n; ++j) {
          const std::string_view v = StringAt(t, j);
          if (shim_.canonical) {
            auto it = canon.emplace(v, int32_t(table_.size()));
            if (it.second) table_.push_back(v);
            ids[size_t(j)] = it.first->second;
          } else {
            ids[size_t(j)] = int32_t(table_.size());
            table_.push_back(v);
          }
        }
        t.data = reinterpret_cast<uint8_t*>(ids.data());
        t.bytes = size_t(n) * 4;
      } else {  // a graph input, prepared before it has data: the kernel may read only its shape
        t.data = nullptr;
        t.bytes = 0;
      }
      t.type = DType::kInt32;
    }
    for (size_t i = 0; i < node_.outputs.size(); ++i) {
      const int ti = node_.outputs[i];
      if (ti < 0 || sg_->tensors_[ti].type != DType::kString) continue;
      sg_->tensors_[ti].type = DType::kInt32;
      outs_.push_back(ti);
      if (at_eval) {
        if (sg_->tensors_[ti].alloc != Allocation::kDynamic)
          return Internal("STRING output " + std::to_string(i) + " has no heap storage");
        TFG_RETURN_IF_ERROR(sg_->SetTensorShape(ti, sg_->tensors_[ti].shape));  // int32 room for the ids
      }
    }
    return OkStatus();
  }

  // After a successful eval: the outputs' ids become strings.
  Status WriteOutputs() {
    for (size_t k = 0; k < outs_.size(); ++k) {
      Tensor& t = sg_->tensors_[outs_[k]];
      const int64_t n = t.num_elements();
      std::vector<std::string_view> v(size_t(std::max<int64_t>(n, 0)));
      for (int64_t j = 0; j < n; ++j) {
        const int32_t id = t.as<int32_t>()[j];
        if (id < 0 || size_t(id) >= table_.size())
          return Internal("string id " + std::to_string(id) + " out of range");
        v[size_t(j)] = table_[size_t(id)];
      }
      t.type = DType::kString;
      TFG_RETURN_IF_ERROR(WriteStrings(t, v));
    }
    outs_.clear();
    return OkStatus();
  }

 private:
  void Restore() {
    for (const In& in : ins_) {
      Tensor& t = sg_->tensors_[in.t];
      t.type = DType::kString;
      t.data = in.data;
      t.bytes = in.bytes;
    }
    ins_.clear();
    for (int ti : outs_) {  // not written: a valid buffer of empty strings wherever it has storage
      Tensor& t = sg_->tensors_[ti];
      t.type = DType::kString;
      if (t.alloc == Allocation::kDynamic) {
        if (!WriteEmptyStrings(t, std::max<int64_t>(t.num_elements(), 0)).ok()) {
          t.data = nullptr;
          t.bytes = 0;
        }
      }
    }
    outs_.clear();
  }

  struct In {
    int t;
    uint8_t* data;
    size_t bytes;
  };
  Subgraph* sg_;
  const Node& node_;
  const StringShim& shim_;
  std::vector<In> ins_;
  std::vector<int> outs_;
  std::vector<std::vector<int32_t>> ids_;
  std::vector<std::string_view> table_;
};

const StringShim* Subgraph::NodeStringShim(const Node& node) const {
  if (OpTakesStrings(node.op)) return nullptr;
  if (!StringMask(tensors_, node.inputs) && !StringMask(tensors_, node.outputs)) return nullptr;
  return FindStringShim(node.op);
}

Status Subgraph::CheckStrings(const Node& node) const {
  if (OpTakesStrings(node.op)) return OkStatus();
  const uint32_t sin = StringMask(tensors_, node.inputs), sout = StringMask(tensors_, node.outputs);
  if (!sin && !sout) return OkStatus();
  const StringShim* sh = FindStringShim(node.op);
  auto pos = [](int i) { return i == 31 ? std::string("31 or later") : std::to_string(i); };
  if (!sh) {
    if (sin)
      return Unimplemented(NodeName(node) + ": input " + pos(LowestBit(sin)) +
                           " is a STRING tensor, which this op does not take");
    return Unimplemented(NodeName(node) + ": output " + pos(LowestBit(sout)) +
                         " is a STRING tensor, which this op does not write");
  }
  if (uint32_t bad = sin & ~sh->string_inputs)
    return Unimplemented(NodeName(node) + ": input " + pos(LowestBit(bad)) +
                         " is a STRING tensor, which this op does not take (it takes STRING data as input " +
                         std::to_string(LowestBit(sh->string_inputs)) + ")");
  if (sin && sin != sh->string_inputs) {
    const int missing = LowestBit(sh->string_inputs & ~sin);
    const int32_t ti = missing < int(node.inputs.size()) ? node.inputs[missing] : -1;
    return InvalidArgument(NodeName(node) + ": input " + std::to_string(LowestBit(sin)) + " is STRING but input " +
                           std::to_string(missing) + " is " +
                           (ti >= 0 ? std::string(DTypeName(tensors_[ti].type)) : std::string("absent")) +
                           " (both must be STRING)");
  }
  const uint32_t want_out = (sin && sh->output_string) ? 1u : 0u;
  if (uint32_t bad = sout & ~want_out)
    return Unimplemented(NodeName(node) + ": output " + pos(LowestBit(bad)) +
                         " is a STRING tensor, which this op does not write" +
                         (sin ? std::string() : std::string(" from a non-STRING input")));
  if (want_out && !(sout & 1u)) {
    const int32_t ti = node.outputs.empty() ? -1 : node.outputs[0];
    return InvalidArgument(NodeName(node) + ": input " + std::to_string(LowestBit(sin)) +
                           " is STRING, so output 0 must be STRING too (it is " +
                           (ti >= 0 ? std::string(DTypeName(tensors_[ti].type)) : std::string("absent")) + ")");
  }
  if (std::strcmp(sh->op, "GATHER") == 0 && tensors_[node.inputs[0]].shape.size() != 1)
    return InvalidArgument(NodeName(node) + ": STRING params must be 1-D (as in TFLite), got shape " +
                           DimsToString(tensors_[node.inputs[0]].shape));
  return OkStatus();
}

void AlignedBuffer::Resize(size_t n) {
  if (n <= size && raw) return;
  if (n > SIZE_MAX - kAlign) throw std::bad_alloc();
  uint8_t* m = static_cast<uint8_t*>(std::malloc(n + kAlign));
  if (!m) throw std::bad_alloc();
  raw.reset(m);
  uintptr_t p = reinterpret_cast<uintptr_t>(raw.get());
  ptr = reinterpret_cast<uint8_t*>((p + kAlign - 1) / kAlign * kAlign);
  size = n;
}

std::string Subgraph::NodeName(const Node& n) const {
  std::string s = "node " + std::to_string(n.index) + " (";
  s += n.op ? n.op->name : "unknown op";
  return s + " v" + std::to_string(n.version) + ")";
}

Status Subgraph::Build(const ModelDef& model, int index) {
  const SubgraphDef& d = model.subgraphs[index];
  name_ = d.name;
  inputs_.assign(d.inputs.begin(), d.inputs.end());
  outputs_.assign(d.outputs.begin(), d.outputs.end());
  tensors_.resize(d.tensors.size());
  for (size_t i = 0; i < d.tensors.size(); ++i) {
    const TensorDef& td = d.tensors[i];
    Tensor& t = tensors_[i];
    t.name = td.name;
    t.type = td.type;
    t.shape = td.shape;
    t.shape_signature = td.shape_signature.empty() ? td.shape : td.shape_signature;
    t.quant = td.quant;
    t.sparsity = td.sparsity;
    t.is_variable = td.is_variable;
    const BufferDef* b = (td.buffer != 0 && td.buffer < model.buffers.size()) ? &model.buffers[td.buffer] : nullptr;
    bool has_data = b && b->data && b->size > 0;
    if (has_data && !td.is_variable && DTypePackedBits(t.type)) {
      // Packed INT4 / UINT4 / INT2 constants are unpacked once, one byte per element (the model
      // reader checked that the buffer holds exactly the packed bytes of the shape).
      t.is_const = true;
      const int64_t n = std::max<int64_t>(0, t.num_elements());
      t.alloc = Allocation::kOwned;
      t.owned.assign(size_t(n), 0);
      UnpackPackedType(t.type, b->data, uint64_t(n), t.owned.data());
      t.data = t.owned.data();
      t.bytes = size_t(n);
    } else if (has_data && !td.is_variable) {
      t.is_const = true;
      size_t es = std::max<size_t>(1, DTypeSize(t.type));
      if (reinterpret_cast<uintptr_t>(b->data) % std::min<size_t>(es, 8) == 0) {
        t.alloc = Allocation::kConstant;
        t.data = const_cast<uint8_t*>(b->data);  // read-only by contract: kernels never write inputs
      } else {
        t.alloc = Allocation::kOwned;
        t.owned.assign(b->data, b->data + b->size);
        t.data = t.owned.data();
      }
      t.bytes = b->size;
    } else if (td.is_variable) {
      size_t bytes = TensorBytes(t);
      t.alloc = Allocation::kOwned;
      // TFLite starts a variable tensor as ResetVariableTensors leaves it: zeros, or an INT8
      // tensor's zero point (real 0; the integer LSTM's output state relies on it).
      uint8_t fill = 0;
      if (t.type == DType::kInt8 && t.quant.zero_point.size() == 1)
        fill = uint8_t(int8_t(std::max<int64_t>(-128, std::min<int64_t>(127, t.quant.zero_point[0]))));
      try {
        t.owned.assign(bytes, fill);
      } catch (const std::bad_alloc&) {
        return InvalidArgument("variable tensor " + std::to_string(i) + " ('" + t.name + "') of shape " +
                               DimsToString(t.shape) + " needs " + std::to_string(bytes) +
                               " bytes, which cannot be allocated");
      }
      if (has_data && b->size == bytes) std::memcpy(t.owned.data(), b->data, bytes);
      t.data = t.owned.data();
      t.bytes = bytes;
    }
  }
  nodes_.resize(d.operators.size());
  unresolved_.assign(d.operators.size(), "");
  for (size_t i = 0; i < d.operators.size(); ++i) {
    const OperatorDef& od = d.operators[i];
    const OperatorCodeDef& oc = model.operator_codes[od.opcode_index];
    Node& n = nodes_[i];
    n.index = int(i);
    n.version = oc.version;
    n.inputs = od.inputs;
    n.outputs = od.outputs;
    n.intermediates = od.intermediates;
    const OpInfo* info = oc.builtin_code == 32 ? FindCustomOp(oc.custom_code) : FindBuiltinOp(oc.builtin_code);
    if (!info && oc.builtin_code == 32 && host_ops_) {
      for (const auto& h : *host_ops_) {
        if (!h || h->name != oc.custom_code) continue;
        // A per-subgraph OpInfo: the op runs on the CPU only (no GPU kernel), any version.
        auto oi = std::make_unique<OpInfo>(OpInfo{h->name.c_str(), 32, h->name.c_str(), INT_MAX, "host",
                                                  &kHostCustomOpImpl, nullptr, 0});
        n.params = h;
        info = oi.get();
        host_op_infos_.push_back(std::move(oi));
        break;
      }
    }
    std::string opname = oc.builtin_code == 32 ? "custom op '" + oc.custom_code + "'" : BuiltinName(oc.builtin_code);
    if (!info) {
      unresolved_[i] = "node " + std::to_string(i) + ": op " + opname + " version " + std::to_string(oc.version) +
                       " is not supported by tflite_gpu (the op is not implemented)";
      continue;
    }
    n.op = info;
    if (oc.version < 1 || oc.version > info->max_version) {
      unresolved_[i] = "node " + std::to_string(i) + ": op " + opname + " version " + std::to_string(oc.version) +
                       " is not supported by tflite_gpu (supported versions: 1.." + std::to_string(info->max_version) + ")";
      continue;
    }
    if (info->impl->parse) {
      OptionsView ov{od.options, od.options_type, od.custom_options, od.custom_options_size, od.options2,
                     od.options2_type};
      Status st;
      try {
        st = info->impl->parse(ov, n);
      } catch (const fb::FbError& e) {
        st = InvalidArgument(std::string("malformed options: ") + e.what());
      }
      if (!st.ok()) return InvalidArgument(NodeName(n) + ": " + st.message());
    }
    for (int t : n.outputs)
      if (tensors_[t].is_const)
        return InvalidArgument(NodeName(n) + ": output tensor " + std::to_string(t) + " is a constant");
  }
  TFG_RETURN_IF_ERROR(CheckDataflow());
  for (int i = 0; i < int(nodes_.size()); ++i) plan_.push_back(Step{i, nullptr});
  return OkStatus();
}

// The execution plan runs nodes in file order and sizes each tensor from the shape its producer
// gives it. That is only sound when every tensor has at most one writer, graph inputs have none,
// and no node reads a tensor that a later node writes (a reader prepared with the file's shape
// would then run against storage sized for another shape). Hostile files break each of these.
Status Subgraph::CheckDataflow() const {
  constexpr int kNone = -1, kGraphInput = -2;
  std::vector<int> writer(tensors_.size(), kNone);
  for (int t : inputs_) writer[size_t(t)] = kGraphInput;
  auto tname = [&](int t) { return "tensor " + std::to_string(t) + " ('" + tensors_[size_t(t)].name + "')"; };
  for (const Node& n : nodes_) {
    for (int t : n.outputs) {
      int w = writer[size_t(t)];
      if (w == kGraphInput)
        return InvalidArgument(NodeName(n) + ": output " + tname(t) + " is a graph input; graph inputs are written by the caller only");
      if (w != kNone)
        return InvalidArgument(NodeName(n) + ": output " + tname(t) + " is already written by node " + std::to_string(w) +
                               "; every tensor has at most one producer");
      writer[size_t(t)] = n.index;
    }
  }
  for (const Node& n : nodes_) {
    for (int t : n.inputs) {
      if (t < 0 || tensors_[size_t(t)].is_variable) continue;
      int w = writer[size_t(t)];
      if (w >= n.index)
        return InvalidArgument(NodeName(n) + ": input " + tname(t) + " is produced by node " + std::to_string(w) +
                               (w == n.index ? " itself (a cycle)" : ", which runs later (the operators are not in execution order)"));
    }
  }
  return OkStatus();
}

// A host callback (a HostCustomOp, a Python custom op through the binding) may call back into its
// interpreter while a subgraph runs: re-planning or resizing that subgraph then would free the
// memory its running nodes use, so it is refused.
static Status RunningError(int index, const std::string& name, const char* what) {
  return FailedPrecondition(std::string(what) + " called on subgraph " + std::to_string(index) + " ('" + name +
                            "') while it is running (a re-entrant call from a custom op or callback)");
}

Status Subgraph::ResizeInputTensor(int index, const Dims& dims, bool strict) {
  if (invoking_) return RunningError(index_, name_, "ResizeInputTensor");
  if (std::find(inputs_.begin(), inputs_.end(), index) == inputs_.end())
    return InvalidArgument("tensor " + std::to_string(index) + " is not an input of the graph; only inputs can be resized");
  for (int d : dims)
    if (d < 0) return InvalidArgument("cannot resize input " + std::to_string(index) + " to " + DimsToString(dims) + ": negative dimension");
  Tensor& t = tensors_[index];
  if (strict) {
    if (dims.size() != t.shape_signature.size())
      return InvalidArgument("strict resize of input " + std::to_string(index) + ": rank " + std::to_string(dims.size()) +
                             " differs from the signature " + DimsToString(t.shape_signature));
    for (size_t i = 0; i < dims.size(); ++i)
      if (t.shape_signature[i] != -1 && t.shape_signature[i] != dims[i])
        return InvalidArgument("strict resize of input " + std::to_string(index) + ": dimension " + std::to_string(i) +
                               " is fixed to " + std::to_string(t.shape_signature[i]) + " in the signature " +
                               DimsToString(t.shape_signature));
  }
  if (t.shape != dims) {
    t.shape = dims;
    allocated_ = false;
  }
  return OkStatus();
}

Status Subgraph::SetTensorShape(int index, const Dims& shape) {
  Tensor& t = tensors_[index];
  for (int d : shape)
    if (d < 0) return InvalidArgument("tensor " + std::to_string(index) + ": negative dimension in " + DimsToString(shape));
  if (t.alloc == Allocation::kOwned || t.alloc == Allocation::kConstant) {
    // Fixed storage (a variable written as an op output): it cannot grow.
    int64_t n = NumElements(shape);
    if (n < 0 || size_t(n) * DTypeSize(t.type) > t.bytes)
      return InvalidArgument("tensor " + std::to_string(index) + " ('" + t.name + "') has fixed storage of " +
                             std::to_string(t.bytes) + " bytes and cannot take the shape " + DimsToString(shape));
  }
  t.shape = shape;
  if (t.alloc == Allocation::kDynamic) {
    size_t bytes = TensorBytes(t);
    try {
      if (t.owned.size() < bytes + 1) t.owned.resize(bytes + 1);  // +1: never a null pointer
    } catch (const std::bad_alloc&) {
      return InvalidArgument("tensor " + std::to_string(index) + " ('" + t.name + "') of shape " + DimsToString(shape) +
                             " cannot be allocated");
    }
    t.data = t.owned.data();
    t.bytes = bytes;
  }
  return OkStatus();
}

void Subgraph::ResetPlan() {
  for (Tensor& t : tensors_) {
    if (t.alloc == Allocation::kArena || t.alloc == Allocation::kDynamic || t.alloc == Allocation::kDelegate) {
      t.alloc = Allocation::kNone;
      t.data = nullptr;
      t.bytes = 0;
    }
  }
}

Status Subgraph::PrepareNode(Node& node, bool* outputs_dynamic) {
  OpContext ctx(this, &node, pool_);
  TFG_RETURN_IF_ERROR(CheckStrings(node));  // STRING tensors: runtime/string_tensor.h
  Status st;
  if (const StringShim* shim = NodeStringShim(node)) {
    StringIds ids(this, node, *shim);
    st = ids.Swap(/*at_eval=*/false);
    if (st.ok()) st = node.op->impl->prepare ? node.op->impl->prepare(ctx) : OkStatus();
  } else {
    st = node.op->impl->prepare ? node.op->impl->prepare(ctx) : OkStatus();
  }
  // An absent input the op read explains whatever prepare said about the placeholder; an absent
  // input it never asked about is refused once prepare is otherwise happy.
  if (!st.ok() && ctx.missing_input() < 0 && ctx.missing_output() < 0)
    return Status(st.code(), NodeName(node) + ": " + st.message());
  TFG_RETURN_IF_ERROR(CheckNodeIndexUse(node, ctx));
  *outputs_dynamic = false;
  for (int t : node.outputs)
    if (tensors_[t].alloc == Allocation::kDynamic) *outputs_dynamic = true;
  return OkStatus();
}

Status Subgraph::CheckNodeIndexUse(const Node& node, const OpContext& ctx) const {
  auto pos = [](int i) { return i == INT32_MAX ? std::string("(negative position)") : std::to_string(i); };
  if (ctx.missing_input() >= 0) {
    int i = ctx.missing_input();
    bool absent = i != INT32_MAX && i < int(node.inputs.size());
    return InvalidArgument(NodeName(node) + ": input " + pos(i) +
                           (absent ? " is required by the op but the model marks it absent (tensor index -1)"
                                   : " is required by the op but the node has only " + std::to_string(node.inputs.size()) +
                                         " inputs"));
  }
  if (ctx.missing_output() >= 0)
    return InvalidArgument(NodeName(node) + ": output " + pos(ctx.missing_output()) +
                           " is required by the op but the node has only " + std::to_string(node.outputs.size()) + " outputs");
  if (uint64_t bad = ctx.UnacknowledgedAbsentInputs()) {
    int i = 0;
    while (!(bad & (uint64_t(1) << i))) ++i;
    return InvalidArgument(NodeName(node) + ": input " + std::to_string(i) +
                           " is absent (tensor index -1) but it is not an optional input of this op");
  }
  return OkStatus();
}

Status Subgraph::EvalNode(Node& node) {
  OpContext ctx(this, &node, pool_);
  EvalFn fn = (use_reference_ && node.op->impl->eval_ref) ? node.op->impl->eval_ref : node.op->impl->eval;
  if (!fn) return Internal(NodeName(node) + ": no kernel");
  Status st;
  if (const StringShim* shim = NodeStringShim(node)) {
    StringIds ids(this, node, *shim);
    st = ids.Swap(/*at_eval=*/true);
    if (st.ok()) st = fn(ctx);
    if (st.ok()) st = ids.WriteOutputs();
  } else {
    st = fn(ctx);
  }
  if (ctx.missing_input() >= 0 || ctx.missing_output() >= 0) TFG_RETURN_IF_ERROR(CheckNodeIndexUse(node, ctx));
  if (!st.ok()) return Status(st.code(), NodeName(node) + ": " + st.message());
  return OkStatus();
}

Status Subgraph::AllocateTensors() {
  if (invoking_) return RunningError(index_, name_, "AllocateTensors");
  for (const std::string& u : unresolved_)
    if (!u.empty()) return Unimplemented(u);
  for (size_t i = 0; i < tensors_.size(); ++i)
    if (tensors_[i].quant.block_size > 0)
      return FailedPrecondition("tensor " + std::to_string(i) + " ('" + tensors_[i].name +
                                "') is blockwise-quantized (block_size " + std::to_string(tensors_[i].quant.block_size) +
                                ", scales in tensor " + std::to_string(tensors_[i].quant.blockwise_scales) +
                                "): tflite_gpu has no kernel for blockwise-quantized tensors");
  ResetPlan();
  for (Node& n : nodes_) {
    n.fuse = Node::CpuFusion{};
    n.fused_into = -1;
  }
  for (int t : inputs_) {
    Tensor& in = tensors_[t];
    if (in.is_const || in.is_variable) continue;
    if (NumElements(in.shape) < 0) return InvalidArgument("input " + std::to_string(t) + " has an unknown shape");
  }
  std::vector<bool> dyn(tensors_.size(), false);
  dynamic_inputs_.assign(plan_.size(), false);
  std::vector<Step> plan;
  for (size_t s = 0; s < plan_.size(); ++s) {
    Step& step = plan_[s];
    if (step.kernel) {
      TFG_RETURN_IF_ERROR(step.kernel->Prepare(*this));
      plan.push_back(step);
      continue;
    }
    Node& node = nodes_[step.node];
    bool has_dyn = false;
    for (int t : node.inputs)
      if (t >= 0 && dyn[t]) has_dyn = true;
    if (has_dyn) {
      for (int t : node.outputs) {
        dyn[t] = true;
        tensors_[t].alloc = Allocation::kDynamic;
      }
      dynamic_inputs_[plan.size()] = true;
      plan.push_back(step);
      continue;
    }
    bool out_dyn = false;
    TFG_RETURN_IF_ERROR(PrepareNode(node, &out_dyn));
    for (int t : node.outputs)
      if (tensors_[t].alloc == Allocation::kDynamic) dyn[t] = true;
    bool all_const = !node.inputs.empty();
    for (int t : node.inputs)
      if (t >= 0 && !tensors_[t].is_const) all_const = false;
    for (int t : node.outputs)  // a STRING output lives in heap storage written at invoke
      if (t >= 0 && tensors_[t].type == DType::kString) all_const = false;
    if (node.op->impl->fold_constants && all_const && !out_dyn) {
      // Evaluate once now; the outputs become owned constants and the node leaves the plan.
      for (int t : node.outputs) {
        Tensor& o = tensors_[t];
        size_t bytes = TensorBytes(o);
        try {
          o.owned.assign(bytes + 1, 0);
        } catch (const std::bad_alloc&) {
          return InvalidArgument(NodeName(node) + ": constant output of " + std::to_string(bytes) +
                                 " bytes cannot be allocated");
        }
        o.data = o.owned.data();
        o.bytes = bytes;
        o.alloc = Allocation::kOwned;
      }
      TFG_RETURN_IF_ERROR(ResizeScratch(std::max<size_t>(node.scratch_bytes, 1)));
      TFG_RETURN_IF_ERROR(EvalNode(node));
      for (int t : node.outputs) tensors_[t].is_const = true;
      node.folded = true;
      continue;
    }
    plan.push_back(step);
  }
  plan_ = std::move(plan);
  dynamic_inputs_.resize(plan_.size());
  FuseCpuNodes();
  TFG_RETURN_IF_ERROR(PlanMemory());
  allocated_ = true;
  return OkStatus();
}

void Subgraph::FuseCpuNodes() {
  if (use_reference_ || preserve_all_ || !env::CpuFusion()) return;
  const int n = int(plan_.size());
  // Per tensor: how many reads the plan makes of it (any step, any position), the step that
  // writes it (-1: none: a graph input or a constant), the last step reading it, and whether it
  // is a graph output.
  std::vector<int> reads(tensors_.size(), 0), writer(tensors_.size(), -1), reader(tensors_.size(), -1);
  std::vector<bool> graph_out(tensors_.size(), false);
  auto valid = [&](int t) { return t >= 0 && size_t(t) < tensors_.size(); };
  for (int t : outputs_)
    if (valid(t)) graph_out[size_t(t)] = true;
  auto count = [&](const std::vector<int>& ins, const std::vector<int>& outs, int s) {
    for (int t : ins)
      if (valid(t)) ++reads[size_t(t)], reader[size_t(t)] = s;
    for (int t : outs)
      if (valid(t)) writer[size_t(t)] = s;
  };
  for (int s = 0; s < n; ++s) {
    const Step& st = plan_[s];
    if (st.kernel) {
      count(st.kernel->inputs, st.kernel->outputs, s);
    } else {
      const Node& nd = nodes_[st.node];
      count(nd.inputs, nd.outputs, s);
      count(nd.intermediates, {}, s);  // conservative: an intermediate counts as a read
    }
  }
  auto is_f32 = [&](int t) { return valid(t) && tensors_[t].type == DType::kFloat32; };
  auto is_cpu = [&](int s, const OpImpl& op) {  // step s runs op (kOp_NAME of the op table) on the CPU
    if (s < 0 || s >= n) return false;
    const Step& st = plan_[s];
    if (st.kernel || dynamic_inputs_[s]) return false;
    const Node& nd = nodes_[st.node];
    return nd.op && nd.op->impl == &op && !nd.delegated && nd.fused_into < 0;
  };
  // A tensor the next op of a chain may absorb: read once, by a later step, not a graph output,
  // storage known at prepare.
  auto single_use = [&](int t, int after) {
    return !graph_out[size_t(t)] && reads[size_t(t)] == 1 && reader[size_t(t)] > after &&
           tensors_[t].alloc != Allocation::kDynamic && !tensors_[t].is_variable;
  };
  auto plain_out = [&](int t, const Dims& shape) {  // an op output the conv may write instead
    return is_f32(t) && tensors_[t].shape == shape && tensors_[t].alloc != Allocation::kDynamic && !tensors_[t].is_variable;
  };
  for (int s = 0; s < n; ++s) {
    if (!is_cpu(s, kOp_CONV_2D)) continue;
    Node& c = nodes_[plan_[s].node];
    if (c.inputs.size() < 2 || c.outputs.size() != 1 || !c.user_data) continue;
    const int co = c.outputs[0];
    // The float kernel: float input, filter, bias and output (not the quantized / hybrid paths).
    if (!is_f32(c.inputs[0]) || !is_f32(c.inputs[1]) || !is_f32(co) || tensors_[co].shape.size() != 4) continue;
    if (c.inputs.size() >= 3 && c.inputs[2] >= 0 && !is_f32(c.inputs[2])) continue;
    // The fused conv runs at a later step than its own: an input a step in between could update in
    // place (a variable) would be read changed.
    if (tensors_[c.inputs[0]].is_variable || tensors_[c.inputs[1]].is_variable) continue;
    const Dims& shape = tensors_[co].shape;
    Node::CpuFusion f;
    int cur = co, last = s;  // the chain's output so far and the step producing it
    // A residual ADD: same shape, no broadcast, no variables. The fused node runs at the chain's
    // last step (the conv's is skipped), where the residual has been written (even when its
    // producer runs after the conv, as a shortcut's MAX_POOL_2D / PAD) and the conv's inputs still
    // hold their values (single producers; PlanMemory keeps them alive up to that step).
    if (single_use(cur, last) && is_cpu(reader[size_t(cur)], kOp_ADD)) {
      const int sa = reader[size_t(cur)];
      const Node& a = nodes_[plan_[sa].node];
      if (a.inputs.size() == 2 && a.outputs.size() == 1 && a.params && a.inputs[0] != a.inputs[1]) {
        const int r = a.inputs[0] == cur ? a.inputs[1] : a.inputs[0];
        const int out = a.outputs[0];
        if (is_f32(r) && tensors_[r].shape == shape && tensors_[r].alloc != Allocation::kDynamic &&
            !tensors_[r].is_variable && writer[size_t(r)] < sa && plain_out(out, shape)) {
          f.add_node = a.index;
          f.residual = r;
          ActivationRangeOfType<float>(int(ew::FusedActivationOf(a)), &f.lo, &f.hi);
          cur = out;
          last = sa;
          // The residual made by a channel PAD (zeros after the last channel only) that only this
          // ADD reads: the conv reads the PAD's input and adds zeros past its channels (one
          // group only: the residual's columns are then the output channels).
          const int sp = writer[size_t(r)];
          const bool one_group = tensors_[c.inputs[0]].shape.size() == 4 && tensors_[c.inputs[1]].shape.size() == 4 &&
                                 tensors_[c.inputs[0]].shape[3] == tensors_[c.inputs[1]].shape[3];
          if (one_group && single_use(r, sp) && is_cpu(sp, kOp_PAD)) {
            const Node& pd = nodes_[plan_[sp].node];
            const int x = pd.inputs.size() == 2 ? pd.inputs[0] : -1, pp = pd.inputs.size() == 2 ? pd.inputs[1] : -1;
            if (pd.outputs.size() == 1 && is_f32(x) && valid(pp) && tensors_[x].shape.size() == 4 &&
                tensors_[x].alloc != Allocation::kDynamic && !tensors_[x].is_variable) {
              const Tensor &xt = tensors_[x], &pt = tensors_[pp];
              const int cin = xt.shape[3];
              bool ok = xt.shape[0] == shape[0] && xt.shape[1] == shape[1] && xt.shape[2] == shape[2] && cin > 0 &&
                        cin < shape[3] && pt.is_const && pt.data && pt.shape == Dims{4, 2} &&
                        (pt.type == DType::kInt32 || pt.type == DType::kInt64) &&
                        pt.bytes >= size_t(8) * DTypeSize(pt.type);
              for (int i = 0; ok && i < 8; ++i) {
                const int64_t v = pt.type == DType::kInt32 ? int64_t(pt.as<int32_t>()[i]) : pt.as<int64_t>()[i];
                ok = v == (i == 7 ? int64_t(shape[3] - cin) : 0);
              }
              if (ok) {
                f.pad_node = pd.index;
                f.residual = x;
                f.res_c = cin;
              }
            }
          }
        }
      }
    }
    // A PRELU with a constant per-channel alpha (out_c floats: shape [..., out_c], other dims 1).
    if (single_use(cur, last) && is_cpu(reader[size_t(cur)], kOp_PRELU)) {
      const int sp = reader[size_t(cur)];
      const Node& p = nodes_[plan_[sp].node];
      if (p.inputs.size() == 2 && p.outputs.size() == 1 && p.inputs[0] == cur && p.inputs[1] != cur) {
        const int al = p.inputs[1];
        bool per_channel = is_f32(al) && tensors_[al].is_const && tensors_[al].data &&
                           !tensors_[al].shape.empty() && tensors_[al].shape.back() == shape[3] &&
                           tensors_[al].num_elements() == shape[3] && tensors_[al].bytes >= size_t(shape[3]) * 4;
        if (per_channel && plain_out(p.outputs[0], shape)) {
          f.prelu_node = p.index;
          f.alpha = al;
          cur = p.outputs[0];
          last = sp;
        }
      }
    }
    if (last == s) continue;
    f.out = cur;
    f.run_at = plan_[last].node;
    c.fuse = f;
    if (f.add_node >= 0) nodes_[f.add_node].fused_into = c.index;
    if (f.prelu_node >= 0) nodes_[f.prelu_node].fused_into = c.index;
    if (f.pad_node >= 0) nodes_[f.pad_node].fused_into = c.index;
  }
}

Status Subgraph::PlanMemory() {
  const int n = int(plan_.size());
  std::vector<int> first(tensors_.size(), INT_MAX), last(tensors_.size(), -1);
  auto touch = [&](int t, int s) {
    if (t < 0) return;
    first[t] = std::min(first[t], s);
    last[t] = std::max(last[t], s);
  };
  for (int t : inputs_) { touch(t, -1); touch(t, n); }
  if (preserve_all_) {
    // experimental_preserve_all_tensors: every tensor a step touches lives for the whole plan,
    // so no two tensors share memory and each keeps the value its step wrote.
    std::vector<int> all;
    for (int s = 0; s < n; ++s) {
      const Step& st = plan_[s];
      if (st.kernel) {
        all.insert(all.end(), st.kernel->inputs.begin(), st.kernel->inputs.end());
        all.insert(all.end(), st.kernel->outputs.begin(), st.kernel->outputs.end());
      } else {
        const Node& nd = nodes_[st.node];
        all.insert(all.end(), nd.inputs.begin(), nd.inputs.end());
        all.insert(all.end(), nd.outputs.begin(), nd.outputs.end());
        all.insert(all.end(), nd.intermediates.begin(), nd.intermediates.end());
      }
    }
    for (int t : all) { touch(t, -1); touch(t, n); }
  }
  for (int s = 0; s < n; ++s) {
    const Step& st = plan_[s];
    if (st.kernel) {
      for (int t : st.kernel->inputs) touch(t, s);
      for (int t : st.kernel->outputs) touch(t, s);
    } else {
      const Node& nd = nodes_[st.node];
      if (nd.fuse.run_at >= 0) continue;  // a fused conv runs at its chain's last step
      if (nd.fused_into >= 0) {
        // The chain's last step runs the conv: the tensors of every node of the chain live there
        // (the unwritten intermediate outputs too, so that they have storage); the other
        // absorbed steps run nothing.
        const Node& c = nodes_[nd.fused_into];
        if (c.fuse.run_at != nd.index) continue;
        for (int m : {c.index, c.fuse.add_node, c.fuse.pad_node, c.fuse.prelu_node}) {
          if (m < 0) continue;
          for (int t : nodes_[m].inputs) touch(t, s);
          for (int t : nodes_[m].outputs) touch(t, s);
          for (int t : nodes_[m].intermediates) touch(t, s);
        }
        continue;
      }
      for (int t : nd.inputs) touch(t, s);
      for (int t : nd.outputs) touch(t, s);
      for (int t : nd.intermediates) touch(t, s);
    }
  }
  for (int t : outputs_) touch(t, n);
  // RESOURCE tensors (a 4-byte resource id each) that a step uses keep their own arena slot for the
  // whole plan and are zeroed below: one that no op writes (an unset input, a handle no HASHTABLE
  // produces) then reads as id 0 at every invoke, never as another tensor's bytes or stale memory.
  for (int t = 0; t < int(tensors_.size()); ++t)
    if (tensors_[t].type == DType::kResource && !tensors_[t].is_const && first[t] != INT_MAX) {
      touch(t, -1);
      touch(t, n);
    }
  // Boundary tensors of delegate partitions live in host memory their kernel offers (the GPU
  // delegate's pinned memory, which its device copies from and to at full speed) instead of the
  // arena; the first kernel to offer memory for a tensor shared by two partitions gets it.
  for (const Step& st : plan_) {
    if (!st.kernel) continue;
    for (const std::vector<int>* v : {&st.kernel->inputs, &st.kernel->outputs})
      for (int t : *v) {
        if (t < 0 || size_t(t) >= tensors_.size()) continue;
        Tensor& ten = tensors_[t];
        if (ten.is_const || ten.alloc != Allocation::kNone || ten.type == DType::kString || NumElements(ten.shape) <= 0)
          continue;
        const size_t bytes = TensorBytes(ten);
        uint8_t* p = st.kernel->HostMemory(t, bytes);
        if (!p) continue;
        ten.alloc = Allocation::kDelegate;
        ten.arena_offset = 0;
        ten.data = p;
        ten.bytes = bytes;
      }
  }
  struct Item { int t; size_t off, size; int a, b; };
  std::vector<Item> items;
  for (int t = 0; t < int(tensors_.size()); ++t) {
    Tensor& ten = tensors_[t];
    if (ten.is_const || ten.alloc != Allocation::kNone) continue;
    if (NumElements(ten.shape) < 0)
      return InvalidArgument("tensor " + std::to_string(t) + " ('" + ten.name + "') has an invalid or too large shape " +
                             DimsToString(ten.shape));
    if (ten.type == DType::kString) {  // heap storage sized by each write; n empty strings until then
      ten.alloc = Allocation::kDynamic;
      // Strings written before (set_tensor, then allocate_tensors again) are kept while their count
      // still matches the shape, as TFLite keeps a dynamic tensor's data across AllocateTensors.
      const int64_t n = NumElements(ten.shape);
      const size_t have = ten.owned.size();
      if (have >= 4 && uint64_t(n) + 2 <= have / 4 && LoadI32(ten.owned.data()) == n) {
        const int32_t end = LoadI32(ten.owned.data() + 4 * (n + 1));
        if (end >= 0 && size_t(end) <= have && CheckStringBuffer(ten.owned.data(), size_t(end), n).empty()) {
          ten.data = ten.owned.data();
          ten.bytes = size_t(end);
          continue;
        }
      }
      TFG_RETURN_IF_ERROR(WriteEmptyStrings(ten, n));
      continue;
    }
    if (first[t] == INT_MAX) continue;  // read and written by no step (e.g. inside a delegated partition)
    items.push_back({t, 0, AlignUp(std::max<size_t>(TensorBytes(ten), 1)), first[t], last[t]});
  }
  std::vector<size_t> order(items.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return items[x].size > items[y].size; });
  std::vector<size_t> placed;
  size_t total = 0;
  for (size_t oi : order) {
    Item& it = items[oi];
    std::vector<std::pair<size_t, size_t>> busy;
    for (size_t pi : placed) {
      const Item& p = items[pi];
      if (p.a <= it.b && it.a <= p.b) busy.emplace_back(p.off, p.off + p.size);
    }
    std::sort(busy.begin(), busy.end());
    size_t off = 0;
    for (auto& b : busy) {
      if (off + it.size <= b.first) break;
      off = std::max(off, b.second);
    }
    it.off = off;
    total = std::max(total, off + it.size);
    placed.push_back(oi);
  }
  try {
    arena_.Resize(std::max<size_t>(total, kAlign));
  } catch (const std::bad_alloc&) {
    return InvalidArgument("the model needs a " + std::to_string(total) + "-byte tensor arena, which cannot be allocated");
  }
  for (const Item& it : items) {
    Tensor& ten = tensors_[it.t];
    ten.alloc = Allocation::kArena;
    ten.arena_offset = it.off;
    ten.data = arena_.ptr + it.off;
    ten.bytes = TensorBytes(ten);
    if (ten.type == DType::kResource) std::memset(ten.data, 0, ten.bytes);
  }
  size_t scratch = 1;
  for (const Step& st : plan_)
    if (!st.kernel) scratch = std::max(scratch, nodes_[st.node].scratch_bytes);
  return ResizeScratch(scratch);
}

Status Subgraph::ResizeScratch(size_t bytes) {
  try {
    scratch_.Resize(bytes);
  } catch (const std::bad_alloc&) {
    return InvalidArgument("the model needs " + std::to_string(bytes) + " bytes of kernel scratch memory, which cannot be allocated");
  }
  return OkStatus();
}

void Subgraph::ResetVariableTensors() {
  for (Tensor& t : tensors_) {
    if (!t.is_variable || t.is_const || !t.data) continue;
    int v = 0;
    if (t.type == DType::kInt8 && t.quant.zero_point.size() == 1) v = int(t.quant.zero_point[0]);
    std::memset(t.data, v, t.bytes);
  }
}

Status Subgraph::Invoke() {
  if (!allocated_)
    return FailedPrecondition("invoke() called before allocate_tensors() (or after a resize without re-allocating)");
  if (invoking_)
    return FailedPrecondition("subgraph " + std::to_string(index_) + " ('" + name_ +
                              "') is invoked while it is already running (recursion between subgraphs, or a re-entrant "
                              "call from a custom op or callback)");
  invoking_ = true;
  struct Clear { bool* f; ~Clear() { *f = false; } } clear{&invoking_};
  if (profiling) last_profile.clear();
  for (size_t s = 0; s < plan_.size(); ++s) {
    const Step& st = plan_[s];
    auto t0 = std::chrono::steady_clock::now();
    if (st.kernel) {
      if (pool_) pool_->Rest();  // no CPU job while the delegate runs: the workers need not spin
      TFG_RETURN_IF_ERROR(st.kernel->Eval(*this));
    } else {
      const Node& sn = nodes_[st.node];
      if (sn.fuse.run_at >= 0) continue;  // a fused conv: runs at its chain's last step
      // A node absorbed by a conv: the chain's last one runs the conv (writing its output).
      if (sn.fused_into >= 0 && nodes_[sn.fused_into].fuse.run_at != sn.index) continue;
      Node& node = sn.fused_into >= 0 ? nodes_[sn.fused_into] : nodes_[st.node];
      if (dynamic_inputs_[s]) {
        bool od = false;
        TFG_RETURN_IF_ERROR(PrepareNode(node, &od));
        if (node.scratch_bytes > scratch_.size) TFG_RETURN_IF_ERROR(ResizeScratch(node.scratch_bytes));
      }
      TFG_RETURN_IF_ERROR(EvalNode(node));
    }
    if (profiling) {
      double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      if (st.kernel)
        last_profile.push_back({int(s), st.kernel->name(), "GPU", us, st.kernel->nodes});
      else if (nodes_[st.node].fused_into >= 0) {  // a fused chain ran: "CONV_2D+ADD+PRELU", its nodes
        const Node& c = nodes_[nodes_[st.node].fused_into];
        if (c.fuse.run_at != st.node) continue;
        std::string name = c.op->name;
        std::vector<int> nodes{c.index};
        for (int m : {c.fuse.add_node, c.fuse.pad_node, c.fuse.prelu_node})
          if (m >= 0) {
            name += std::string("+") + nodes_[m].op->name;
            nodes.push_back(m);
          }
        last_profile.push_back({int(s), name, "CPU", us, nodes});
      }
      else
        last_profile.push_back({int(s), nodes_[st.node].op->name, "CPU", us, {st.node}});
    }
  }
  return OkStatus();
}

std::vector<int> Subgraph::PlanNodes() const {
  std::vector<int> out;
  for (const Step& st : plan_)
    if (!st.kernel) out.push_back(st.node);
  return out;
}

Status Subgraph::PrepareDelegatedNode(int node_index) {
  bool dyn = false;
  TFG_RETURN_IF_ERROR(PrepareNode(nodes_[node_index], &dyn));
  nodes_[node_index].user_data.reset();  // CPU-side packed weights are never used for it
  nodes_[node_index].scratch_bytes = 0;
  if (dyn) return Unimplemented(NodeName(nodes_[node_index]) + ": dynamic output shape inside a delegated partition");
  return OkStatus();
}

Status Subgraph::ReplaceNodesWithKernel(std::unique_ptr<DelegateKernel> kernel) {
  std::vector<bool> take(nodes_.size(), false);
  for (int n : kernel->nodes) {
    if (n < 0 || size_t(n) >= nodes_.size()) return InvalidArgument("delegate named node " + std::to_string(n) + " out of range");
    take[n] = true;
  }
  std::vector<Step> plan;
  bool inserted = false;
  for (const Step& st : plan_) {
    if (!st.kernel && take[st.node]) {
      nodes_[st.node].delegated = true;
      if (!inserted) { plan.push_back(Step{-1, kernel.get()}); inserted = true; }
      continue;
    }
    plan.push_back(st);
  }
  if (!inserted) return InvalidArgument("delegate kernel replaced no node of the plan");
  plan_ = std::move(plan);
  kernels_.push_back(std::move(kernel));
  allocated_ = false;
  return OkStatus();
}

}  // namespace tflite_gpu
