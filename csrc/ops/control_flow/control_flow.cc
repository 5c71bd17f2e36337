// Control flow and resource variables: IF, WHILE, CALL_ONCE, VAR_HANDLE, READ_VARIABLE,
// ASSIGN_VARIABLE. They run on the CPU only; the subgraphs they call are separate Subgraph
// objects of the same interpreter, each with its own memory plan (arena), allocated on first use
// and re-planned only when a value's shape changes.
//
// Semantics (TFLite's):
//  * IF: inputs (cond, args...), cond a single BOOL; runs then_subgraph or else_subgraph with
//    args; its outputs are the branch's outputs. Outputs are static when both branches give the
//    same static shapes (or cond is constant), dynamic otherwise.
//  * WHILE: n inputs = n outputs = the loop variables. Repeats: cond_subgraph(vars) -> BOOL;
//    stop when false; vars = body_subgraph(vars). Outputs are static when the body maps every
//    input shape to itself, else dynamic: shapes may change between iterations, then the body
//    and cond are re-planned for the new input shapes (their arenas only grow, so tensors are
//    reused across iterations). A loop-carried value larger than SharedState's cap (1 GiB, or
//    TFLITE_GPU_MAX_LOOP_TENSOR_BYTES) stops the loop with an error. No bound on the number of
//    iterations (TFLite has none) unless TFLITE_GPU_MAX_WHILE_ITERATIONS is set.
//  * CALL_ONCE: runs init_subgraph (no inputs, no outputs) the first time any node of this
//    interpreter calls it; later calls do nothing.
//  * VAR_HANDLE(container, shared_name) -> a RESOURCE tensor holding the int32 id of that
//    variable (one id per (container, shared_name) per interpreter).
//  * ASSIGN_VARIABLE(resource, value): the variable takes value's type, shape and data.
//  * READ_VARIABLE(resource) -> a copy of the variable (dynamic output). Reading a variable that
//    was never assigned is an error.
// IF and WHILE pass STRING values too (as LiteRT does): the whole serialized buffer
// (runtime/string_tensor.h) is copied into the child's input / the output's heap storage.
#include <cstring>

#include "ops/op_registry.h"
#include "runtime/string_tensor.h"
#include "runtime/subgraph.h"

namespace tflite_gpu {
namespace {

// Nested subgraph calls (WHILE inside IF inside ...) deeper than this are refused, so a
// hostile chain of thousands of subgraphs cannot exhaust the C++ stack.
constexpr int kMaxCallDepth = 64;
thread_local int g_call_depth = 0;

struct DepthGuard {
  DepthGuard() { ++g_call_depth; }
  ~DepthGuard() { --g_call_depth; }
  bool ok() const { return g_call_depth <= kMaxCallDepth; }
};

struct CfParams {
  int a = 0, b = 0;  // IF: then, else; WHILE: cond, body; CALL_ONCE: init
};

struct VarParams {
  std::string container, shared_name;
};

// One loop variable of WHILE, held between iterations (reused across iterations and invokes).
struct Carry {
  DType type = DType::kFloat32;
  Dims shape;
  std::vector<uint8_t> data;
  size_t bytes = 0;  // of data in use
};
struct WhileState {
  std::vector<Carry> vars;
};

size_t ValueBytes(DType t, const Dims& shape) {
  int64_t n = NumElements(shape);
  return n < 0 ? 0 : size_t(n) * DTypeSize(t);
}
// Bytes of a tensor's value: a STRING tensor's serialized buffer, else elements x size.
size_t TensorValueBytes(const Tensor& t) {
  if (t.type == DType::kString) return t.data ? t.bytes : 0;
  return ValueBytes(t.type, t.shape);
}

// A STRING value (serialized buffer of `bytes`) into a STRING tensor's heap storage.
Status StoreString(OpContext& ctx, Tensor& dst, const uint8_t* src, size_t bytes, const char* what) {
  if (dst.alloc != Allocation::kDynamic)
    return ctx.Error(std::string(what) + " is a STRING tensor without heap storage");
  if (!src || bytes < 8)
    return ctx.Error(std::string(what) + ": the STRING value holds no string buffer");
  if (dst.data == src) return OkStatus();
  dst.owned.assign(src, src + bytes);
  dst.owned.push_back(0);
  dst.data = dst.owned.data();
  dst.bytes = bytes;
  return OkStatus();
}

// The type of output i as its value's: STRING outputs keep their declared type (which must be
// STRING), others take the value's type.
Status SetTypeOf(OpContext& ctx, int i, DType t) {
  if (t != DType::kString && ctx.output(i).type != DType::kString) return ctx.SetOutputType(i, t);
  if (ctx.output(i).type != t)
    return ctx.Error("output " + std::to_string(i) + " has type " + DTypeName(ctx.output(i).type) + " but its value has type " +
                     DTypeName(t));
  return OkStatus();
}

Status ChildOf(OpContext& ctx, int index, const char* role, Subgraph** out) {
  SharedState* sh = ctx.subgraph().shared();
  Subgraph* g = sh ? sh->subgraph(index) : nullptr;
  if (!g) return ctx.Error(std::string(role) + " subgraph " + std::to_string(index) + " does not exist");
  if (g == &ctx.subgraph() || g->invoking())
    return ctx.Error(std::string(role) + " subgraph " + std::to_string(index) + " is already running (recursion)");
  *out = g;
  return OkStatus();
}

Status CheckArityOf(OpContext& ctx, const Subgraph& g, const char* role, size_t n_in, size_t n_out) {
  if (g.inputs().size() != n_in || g.outputs().size() != n_out)
    return ctx.Error(std::string(role) + " subgraph " + std::to_string(g.index()) + " has " +
                     std::to_string(g.inputs().size()) + " inputs and " + std::to_string(g.outputs().size()) +
                     " outputs; expected " + std::to_string(n_in) + " and " + std::to_string(n_out));
  for (int t : g.inputs()) {
    if (t < 0 || size_t(t) >= g.tensors_size()) return ctx.Error(std::string(role) + " subgraph input index out of range");
    const Tensor& ti = g.tensor(t);
    if (ti.is_const || ti.is_variable)
      return ctx.Error(std::string(role) + " subgraph " + std::to_string(g.index()) + ": input tensor " +
                       std::to_string(t) + " is a constant or variable tensor and cannot take a value");
  }
  for (int t : g.outputs())
    if (t < 0 || size_t(t) >= g.tensors_size())
      return ctx.Error(std::string(role) + " subgraph output index out of range");
  return OkStatus();
}

// A value to pass into a subgraph: type, shape and (at eval) data.
struct Value {
  DType type;
  const Dims* shape;
  const uint8_t* data;
  size_t bytes;
};
Value ValueOf(const Tensor& t) { return Value{t.type, &t.shape, t.data, TensorValueBytes(t)}; }
Value ValueOf(const Carry& c) { return Value{c.type, &c.shape, c.data.data(), c.bytes}; }

// Gives the child's inputs the values' shapes (re-planning the child when one changed) and, when
// `copy`, their data.
Status FeedChild(OpContext& ctx, Subgraph& g, const char* role, const std::vector<Value>& vals, bool copy) {
  for (size_t i = 0; i < vals.size(); ++i) {
    int ti = g.inputs()[i];
    Tensor& in = g.tensor(ti);
    if (DTypeSize(vals[i].type) == 0 && vals[i].type != DType::kString) return ctx.Error(std::string("value ") + std::to_string(i) + " has type " + DTypeName(vals[i].type) + ", which cannot be passed to a subgraph");
    if (in.type != vals[i].type)
      return ctx.Error(std::string(role) + " subgraph " + std::to_string(g.index()) + " input " + std::to_string(i) +
                       " has type " + DTypeName(in.type) + ", but the value passed has type " + DTypeName(vals[i].type));
    if (in.shape != *vals[i].shape) TFG_RETURN_IF_ERROR(g.ResizeInputTensor(ti, *vals[i].shape, false));
  }
  if (!g.allocated()) {
    Status st = g.AllocateTensors();
    if (!st.ok())
      return Status(st.code(), std::string(ctx.node().op->name) + ": " + role + " subgraph " + std::to_string(g.index()) + ": " + st.message());
  }
  if (!copy) return OkStatus();
  for (size_t i = 0; i < vals.size(); ++i) {
    Tensor& in = g.tensor(g.inputs()[i]);
    if (vals[i].type == DType::kString) {
      TFG_RETURN_IF_ERROR(StoreString(ctx, in, vals[i].data, vals[i].bytes, "a subgraph input"));
      continue;
    }
    size_t bytes = ValueBytes(vals[i].type, *vals[i].shape);
    if (bytes && in.data != vals[i].data) std::memmove(in.data, vals[i].data, bytes);
  }
  return OkStatus();
}

Status InvokeChild(OpContext& ctx, Subgraph& g, const char* role) {
  Status st = g.Invoke();
  if (!st.ok())
    return Status(st.code(), std::string(ctx.node().op->name) + ": " + role + " subgraph " + std::to_string(g.index()) + ": " + st.message());
  return OkStatus();
}

Status WriteOutput(OpContext& ctx, int i, const Value& v) {
  Tensor& o = ctx.output(i);
  if (o.type != v.type)
    return ctx.Error("output " + std::to_string(i) + " has type " + DTypeName(o.type) + ", the value " + DTypeName(v.type));
  if (o.alloc == Allocation::kDynamic) {
    TFG_RETURN_IF_ERROR(ctx.SetOutputShape(i, *v.shape));
  } else if (o.shape != *v.shape) {
    return ctx.Error("output " + std::to_string(i) + " was planned with shape " + DimsToString(o.shape) +
                     " but the subgraph produced " + DimsToString(*v.shape));
  }
  if (v.type == DType::kString) return StoreString(ctx, o, v.data, v.bytes, ("output " + std::to_string(i)).c_str());
  size_t bytes = ValueBytes(v.type, *v.shape);
  if (bytes && o.data != v.data) std::memmove(o.data, v.data, bytes);
  return OkStatus();
}

bool ReadBool(const Tensor& t) {
  return t.data && t.num_elements() > 0 && t.as<uint8_t>()[0] != 0;
}

// ---------------------------------------------------------------------------------------------
// IF
// ---------------------------------------------------------------------------------------------

Status ParseIf(const OptionsView& o, Node& n) {
  auto p = std::make_shared<CfParams>();
  p->a = o.Get<int32_t>(0, 0);
  p->b = o.Get<int32_t>(1, 0);
  n.subgraph_refs = {p->a, p->b};
  n.params = p;
  return OkStatus();
}

Status PrepareIf(OpContext& ctx) {
  DepthGuard depth;
  if (!depth.ok()) return ctx.Error("subgraph calls nested deeper than " + std::to_string(kMaxCallDepth));
  const CfParams& p = ctx.node().P<CfParams>();
  if (ctx.num_inputs() < 1 || !ctx.has_input(0)) return ctx.Error("expects a condition input");
  for (int i = 1; i < ctx.num_inputs(); ++i)
    if (!ctx.has_input(i)) return ctx.Error("input " + std::to_string(i) + " is omitted");
  Tensor& cond = ctx.input(0);
  TFG_RETURN_IF_ERROR(ctx.CheckType(cond, DType::kBool, "the condition"));
  if (cond.num_elements() != 1)
    return ctx.Error("the condition must have exactly one element, it has shape " + DimsToString(cond.shape));
  Subgraph* br[2];
  TFG_RETURN_IF_ERROR(ChildOf(ctx, p.a, "then", &br[0]));
  TFG_RETURN_IF_ERROR(ChildOf(ctx, p.b, "else", &br[1]));
  const char* roles[2] = {"then", "else"};
  size_t n_in = size_t(ctx.num_inputs() - 1), n_out = size_t(ctx.num_outputs());
  for (int b = 0; b < 2; ++b) TFG_RETURN_IF_ERROR(CheckArityOf(ctx, *br[b], roles[b], n_in, n_out));
  std::vector<Value> vals;
  for (int i = 1; i < ctx.num_inputs(); ++i) vals.push_back(ValueOf(ctx.input(i)));
  bool prepared[2] = {true, true};
  if (cond.is_const && cond.data) {  // only the branch that will run
    bool c = ReadBool(cond);
    prepared[c ? 1 : 0] = false;
  }
  for (int b = 0; b < 2; ++b)
    if (prepared[b]) TFG_RETURN_IF_ERROR(FeedChild(ctx, *br[b], roles[b], vals, false));
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    const Tensor* outs[2] = {nullptr, nullptr};
    for (int b = 0; b < 2; ++b)
      if (prepared[b]) outs[b] = &br[b]->tensor(br[b]->outputs()[size_t(i)]);
    const Tensor* first = outs[0] ? outs[0] : outs[1];
    if (outs[0] && outs[1] && outs[0]->type != outs[1]->type)
      return ctx.Error("output " + std::to_string(i) + " has type " + DTypeName(outs[0]->type) + " in the then branch and " +
                       DTypeName(outs[1]->type) + " in the else branch");
    TFG_RETURN_IF_ERROR(SetTypeOf(ctx, i, first->type));
    bool dynamic = false;
    for (int b = 0; b < 2; ++b)
      if (outs[b] && (outs[b]->alloc == Allocation::kDynamic || outs[b]->shape != first->shape)) dynamic = true;
    if (dynamic)
      ctx.SetOutputDynamic(i);
    else
      TFG_RETURN_IF_ERROR(ctx.SetOutputShape(i, first->shape));
  }
  return OkStatus();
}

Status EvalIf(OpContext& ctx) {
  DepthGuard depth;
  if (!depth.ok()) return ctx.Error("subgraph calls nested deeper than " + std::to_string(kMaxCallDepth));
  const CfParams& p = ctx.node().P<CfParams>();
  bool c = ReadBool(ctx.input(0));
  const char* role = c ? "then" : "else";
  Subgraph* g = nullptr;
  TFG_RETURN_IF_ERROR(ChildOf(ctx, c ? p.a : p.b, role, &g));
  std::vector<Value> vals;
  for (int i = 1; i < ctx.num_inputs(); ++i) vals.push_back(ValueOf(ctx.input(i)));
  TFG_RETURN_IF_ERROR(FeedChild(ctx, *g, role, vals, true));
  TFG_RETURN_IF_ERROR(InvokeChild(ctx, *g, role));
  for (int i = 0; i < ctx.num_outputs(); ++i)
    TFG_RETURN_IF_ERROR(WriteOutput(ctx, i, ValueOf(g->tensor(g->outputs()[size_t(i)]))));
  return OkStatus();
}

// ---------------------------------------------------------------------------------------------
// WHILE
// ---------------------------------------------------------------------------------------------

Status ParseWhile(const OptionsView& o, Node& n) {
  auto p = std::make_shared<CfParams>();
  p->a = o.Get<int32_t>(0, 0);
  p->b = o.Get<int32_t>(1, 0);
  n.subgraph_refs = {p->a, p->b};
  n.params = p;
  return OkStatus();
}

Status PrepareWhile(OpContext& ctx) {
  DepthGuard depth;
  if (!depth.ok()) return ctx.Error("subgraph calls nested deeper than " + std::to_string(kMaxCallDepth));
  const CfParams& p = ctx.node().P<CfParams>();
  if (ctx.num_inputs() != ctx.num_outputs())
    return ctx.Error("has " + std::to_string(ctx.num_inputs()) + " inputs and " + std::to_string(ctx.num_outputs()) +
                     " outputs; they must be the same loop variables");
  for (int i = 0; i < ctx.num_inputs(); ++i)
    if (!ctx.has_input(i)) return ctx.Error("input " + std::to_string(i) + " is omitted");
  Subgraph *cond = nullptr, *body = nullptr;
  TFG_RETURN_IF_ERROR(ChildOf(ctx, p.a, "cond", &cond));
  TFG_RETURN_IF_ERROR(ChildOf(ctx, p.b, "body", &body));
  size_t n = size_t(ctx.num_inputs());
  TFG_RETURN_IF_ERROR(CheckArityOf(ctx, *cond, "cond", n, 1));
  TFG_RETURN_IF_ERROR(CheckArityOf(ctx, *body, "body", n, n));
  std::vector<Value> vals;
  for (int i = 0; i < ctx.num_inputs(); ++i) vals.push_back(ValueOf(ctx.input(i)));
  TFG_RETURN_IF_ERROR(FeedChild(ctx, *cond, "cond", vals, false));
  const Tensor& c = cond->tensor(cond->outputs()[0]);
  if (c.type != DType::kBool)
    return ctx.Error(std::string("cond subgraph output has type ") + DTypeName(c.type) + ", expected BOOL");
  TFG_RETURN_IF_ERROR(FeedChild(ctx, *body, "body", vals, false));
  bool dynamic = false;
  for (size_t i = 0; i < n; ++i) {
    const Tensor& bo = body->tensor(body->outputs()[i]);
    if (bo.type != vals[i].type)
      return ctx.Error("body output " + std::to_string(i) + " has type " + DTypeName(bo.type) + " but loop variable " +
                       std::to_string(i) + " has type " + DTypeName(vals[i].type));
    if (bo.alloc == Allocation::kDynamic || bo.shape != *vals[i].shape) dynamic = true;
  }
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    TFG_RETURN_IF_ERROR(SetTypeOf(ctx, i, vals[size_t(i)].type));
    if (dynamic)
      ctx.SetOutputDynamic(i);
    else
      TFG_RETURN_IF_ERROR(ctx.SetOutputShape(i, *vals[size_t(i)].shape));
  }
  if (!ctx.node().user_data) ctx.node().user_data = std::make_shared<WhileState>();
  return OkStatus();
}

Status EvalWhile(OpContext& ctx) {
  DepthGuard depth;
  if (!depth.ok()) return ctx.Error("subgraph calls nested deeper than " + std::to_string(kMaxCallDepth));
  const CfParams& p = ctx.node().P<CfParams>();
  Subgraph *cond = nullptr, *body = nullptr;
  TFG_RETURN_IF_ERROR(ChildOf(ctx, p.a, "cond", &cond));
  TFG_RETURN_IF_ERROR(ChildOf(ctx, p.b, "body", &body));
  const size_t cap = ctx.subgraph().shared()->max_loop_tensor_bytes;
  WhileState* st = ctx.node().U<WhileState>();
  if (!st) return ctx.Error("not prepared");
  const size_t n = size_t(ctx.num_inputs());
  st->vars.resize(n);
  auto set_var = [&](size_t i, const Tensor& t) -> Status {
    size_t bytes = TensorValueBytes(t);
    if (bytes > cap)
      return ctx.Error("loop variable " + std::to_string(i) + " grew to shape " + DimsToString(t.shape) + " (" +
                       std::to_string(bytes) + " bytes), over the cap of " + std::to_string(cap) +
                       " bytes for a loop-carried value (TFLITE_GPU_MAX_LOOP_TENSOR_BYTES)");
    Carry& c = st->vars[i];
    c.type = t.type;
    c.shape = t.shape;
    if (c.data.size() < bytes + 1) c.data.resize(bytes + 1);  // grows only: reused across iterations
    if (bytes) std::memcpy(c.data.data(), t.data, bytes);
    c.bytes = bytes;
    return OkStatus();
  };
  for (size_t i = 0; i < n; ++i) TFG_RETURN_IF_ERROR(set_var(i, ctx.input(int(i))));
  std::vector<Value> vals(n);
  const uint64_t max_iterations = ctx.subgraph().shared()->max_while_iterations;
  for (uint64_t iteration = 0;; ++iteration) {
    for (size_t i = 0; i < n; ++i) vals[i] = ValueOf(st->vars[i]);
    TFG_RETURN_IF_ERROR(FeedChild(ctx, *cond, "cond", vals, true));
    TFG_RETURN_IF_ERROR(InvokeChild(ctx, *cond, "cond"));
    if (!ReadBool(cond->tensor(cond->outputs()[0]))) break;
    if (max_iterations && iteration >= max_iterations)
      return ctx.Error("the loop did not stop after " + std::to_string(max_iterations) +
                       " iterations (TFLITE_GPU_MAX_WHILE_ITERATIONS)");
    TFG_RETURN_IF_ERROR(FeedChild(ctx, *body, "body", vals, true));
    TFG_RETURN_IF_ERROR(InvokeChild(ctx, *body, "body"));
    for (size_t i = 0; i < n; ++i) TFG_RETURN_IF_ERROR(set_var(i, body->tensor(body->outputs()[i])));
  }
  for (size_t i = 0; i < n; ++i) TFG_RETURN_IF_ERROR(WriteOutput(ctx, int(i), ValueOf(st->vars[i])));
  return OkStatus();
}

// ---------------------------------------------------------------------------------------------
// CALL_ONCE
// ---------------------------------------------------------------------------------------------

Status ParseCallOnce(const OptionsView& o, Node& n) {
  auto p = std::make_shared<CfParams>();
  p->a = o.Get<int32_t>(0, 0);
  n.subgraph_refs = {p->a};
  n.params = p;
  return OkStatus();
}

Status PrepareCallOnce(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(0, 0, 0, 0));
  Subgraph* g = nullptr;
  TFG_RETURN_IF_ERROR(ChildOf(ctx, ctx.node().P<CfParams>().a, "init", &g));
  return CheckArityOf(ctx, *g, "init", 0, 0);
}

Status EvalCallOnce(OpContext& ctx) {
  DepthGuard depth;
  if (!depth.ok()) return ctx.Error("subgraph calls nested deeper than " + std::to_string(kMaxCallDepth));
  int idx = ctx.node().P<CfParams>().a;
  SharedState* sh = ctx.subgraph().shared();
  if (sh->initialized_subgraphs.count(idx)) return OkStatus();
  Subgraph* g = nullptr;
  TFG_RETURN_IF_ERROR(ChildOf(ctx, idx, "init", &g));
  TFG_RETURN_IF_ERROR(FeedChild(ctx, *g, "init", {}, false));
  TFG_RETURN_IF_ERROR(InvokeChild(ctx, *g, "init"));
  sh->initialized_subgraphs.insert(idx);
  return OkStatus();
}

// ---------------------------------------------------------------------------------------------
// Resource variables
// ---------------------------------------------------------------------------------------------

Status ParseVarHandle(const OptionsView& o, Node& n) {
  auto p = std::make_shared<VarParams>();
  if (o.table.valid()) {
    p->container = o.table.String(0, "VarHandleOptions.container");
    p->shared_name = o.table.String(1, "VarHandleOptions.shared_name");
  }
  n.params = p;
  return OkStatus();
}

Status PrepareVarHandle(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(0, 0, 1, 1));
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, DType::kResource));
  const Tensor& o = ctx.output(0);
  return ctx.SetOutputShape(0, o.num_elements() == 1 ? o.shape : Dims{});
}

Status EvalVarHandle(OpContext& ctx) {
  const VarParams& p = ctx.node().P<VarParams>();
  SharedState* sh = ctx.subgraph().shared();
  auto key = std::make_pair(p.container, p.shared_name);
  auto it = sh->resource_ids.find(key);
  int32_t id;
  if (it == sh->resource_ids.end()) {
    id = int32_t(sh->resource_ids.size());
    sh->resource_ids.emplace(key, id);
  } else {
    id = it->second;
  }
  *ctx.output(0).as<int32_t>() = id;
  return OkStatus();
}

Status ResourceId(OpContext& ctx, int32_t* id) {
  const Tensor& h = ctx.input(0);
  TFG_RETURN_IF_ERROR(ctx.CheckType(h, DType::kResource, "the resource input"));
  if (!h.data || h.num_elements() < 1) return ctx.Error("the resource input holds no resource id");
  *id = *h.as<int32_t>();
  return OkStatus();
}

Status PrepareReadVariable(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(1, 1, 1, 1));
  if (!ctx.has_input(0)) return ctx.Error("the resource input is omitted");
  TFG_RETURN_IF_ERROR(ctx.CheckType(ctx.input(0), DType::kResource, "the resource input"));
  if (DTypeSize(ctx.output(0).type) == 0)
    return ctx.Error(std::string("unsupported output type ") + DTypeName(ctx.output(0).type));
  ctx.SetOutputDynamic(0);
  return OkStatus();
}

Status EvalReadVariable(OpContext& ctx) {
  int32_t id = 0;
  TFG_RETURN_IF_ERROR(ResourceId(ctx, &id));
  SharedState* sh = ctx.subgraph().shared();
  auto it = sh->variables.find(id);
  if (it == sh->variables.end() || !it->second.initialized)
    return ctx.Error("the variable (resource id " + std::to_string(id) + ") is read before any ASSIGN_VARIABLE wrote it");
  const ResourceVariable& v = it->second;
  if (v.type != ctx.output(0).type)
    return ctx.Error(std::string("the variable holds ") + DTypeName(v.type) + " but the output has type " +
                     DTypeName(ctx.output(0).type));
  TFG_RETURN_IF_ERROR(ctx.SetOutputShape(0, v.shape));
  size_t bytes = ValueBytes(v.type, v.shape);
  if (bytes) std::memcpy(ctx.output(0).data, v.data.data(), bytes);
  return OkStatus();
}

Status PrepareAssignVariable(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 2, 0, 0));
  if (!ctx.has_input(0) || !ctx.has_input(1)) return ctx.Error("an input is omitted");
  TFG_RETURN_IF_ERROR(ctx.CheckType(ctx.input(0), DType::kResource, "the resource input"));
  if (DTypeSize(ctx.input(1).type) == 0)
    return ctx.Error(std::string("values of type ") + DTypeName(ctx.input(1).type) + " cannot be stored");
  return OkStatus();
}

Status EvalAssignVariable(OpContext& ctx) {
  int32_t id = 0;
  TFG_RETURN_IF_ERROR(ResourceId(ctx, &id));
  const Tensor& val = ctx.input(1);
  ResourceVariable& v = ctx.subgraph().shared()->variables[id];
  size_t bytes = ValueBytes(val.type, val.shape);
  v.type = val.type;
  v.shape = val.shape;
  if (v.data.size() != bytes) v.data.resize(bytes);
  if (bytes) std::memcpy(v.data.data(), val.data, bytes);
  v.initialized = true;
  return OkStatus();
}

}  // namespace

const OpImpl kOp_IF = {ParseIf, PrepareIf, EvalIf, nullptr, false};
const OpImpl kOp_WHILE = {ParseWhile, PrepareWhile, EvalWhile, nullptr, false};
const OpImpl kOp_CALL_ONCE = {ParseCallOnce, PrepareCallOnce, EvalCallOnce, nullptr, false};
const OpImpl kOp_VAR_HANDLE = {ParseVarHandle, PrepareVarHandle, EvalVarHandle, nullptr, false};
const OpImpl kOp_READ_VARIABLE = {nullptr, PrepareReadVariable, EvalReadVariable, nullptr, false};
const OpImpl kOp_ASSIGN_VARIABLE = {nullptr, PrepareAssignVariable, EvalAssignVariable, nullptr, false};

}  // namespace tflite_gpu
