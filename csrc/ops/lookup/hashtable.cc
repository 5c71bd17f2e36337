// HASHTABLE, HASHTABLE_IMPORT, HASHTABLE_FIND, HASHTABLE_SIZE (lookup family): TFLite's static
// hashtable resource. CPU only (TFLite's GPU delegate takes none); one plain kernel each, which
// is also the reference kernel (eval_ref nullptr: not hot ops).
//
// Semantics (TFLite's hashtable*.cc and its StaticHashtable, LiteRT 2.3):
//  * HASHTABLE(table_id, key_dtype, value_dtype) -> RESOURCE [1] holding table_id. At eval it
//    creates table table_id of this interpreter unless it exists. Only INT64 -> STRING and
//    STRING -> INT64 tables exist (checked at prepare, as in LiteRT).
//  * HASHTABLE_IMPORT(table, keys, values): the first import fills the table (for a key given
//    twice the first value stays); every later import of that table does nothing (a static
//    table). keys and values must have the same shape.
//  * HASHTABLE_FIND(table, keys, default_value) -> values of the keys' shape: each key's value,
//    or default_value's first element where the key is absent.
//  * HASHTABLE_SIZE(table) -> INT64 [1]: the number of entries.
//  * Tables live in the interpreter's SharedState (runtime/shared_state.h): shared by all its
//    subgraphs (a CALL_ONCE init subgraph usually imports), kept across invokes and signature
//    runners. A table id that no HASHTABLE created, or a table used with other key/value types
//    than it was created with, is an error at invoke (as in LiteRT). TFLite keeps tables and
//    resource variables in one id space; we keep them apart (a model mixing both under one id is
//    undefined in TFLite).
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "ops/op_registry.h"
#include "runtime/string_tensor.h"
#include "runtime/subgraph.h"

namespace tflite_gpu {

struct HashtableResource {
  DType key = DType::kInt64, value = DType::kString;
  bool initialized = false;
  std::unordered_map<int64_t, std::string> int_to_str;
  std::unordered_map<std::string, int64_t> str_to_int;
  size_t size() const { return key == DType::kInt64 ? int_to_str.size() : str_to_int.size(); }
};

namespace {

struct TableParams {
  int32_t table_id = 0;
  DType key = DType::kFloat32, value = DType::kFloat32;
};

bool ValidPair(DType k, DType v) {
  return (k == DType::kInt64 && v == DType::kString) || (k == DType::kString && v == DType::kInt64);
}

Status ParseHashtable(const OptionsView& o, Node& n) {
  auto p = std::make_shared<TableParams>();
  int k = 0, v = 0;
  if (o.table.valid()) {
    p->table_id = o.Get<int32_t>(0, 0);
    k = o.Get<int8_t>(1, 0);
    v = o.Get<int8_t>(2, 0);
  }
  p->key = DTypeKnown(k) ? DType(k) : DType::kFloat32;
  p->value = DTypeKnown(v) ? DType(v) : DType::kFloat32;
  n.params = p;
  return OkStatus();
}

Status PrepareHashtable(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(0, 0, 1, 1));
  const TableParams& p = ctx.node().P<TableParams>();
  if (!ValidPair(p.key, p.value))
    return ctx.Error(std::string("a table of ") + DTypeName(p.key) + " keys and " + DTypeName(p.value) +
                     " values: only INT64 -> STRING and STRING -> INT64 tables exist");
  TFG_RETURN_IF_ERROR(ctx.CheckType(ctx.output(0), DType::kResource, "the table handle"));
  return ctx.SetOutputShape(0, Dims{1});
}

Status EvalHashtable(OpContext& ctx) {
  const TableParams& p = ctx.node().P<TableParams>();
  *ctx.output(0).as<int32_t>() = p.table_id;
  auto& tables = ctx.subgraph().shared()->hashtables;
  if (!tables.count(p.table_id)) {
    auto t = std::make_shared<HashtableResource>();
    t->key = p.key;
    t->value = p.value;
    tables.emplace(p.table_id, std::move(t));
  }
  return OkStatus();
}

Status CheckHandle(OpContext& ctx) {
  if (!ctx.has_input(0)) return ctx.Error("the table handle is omitted");
  const Tensor& h = ctx.input(0);
  TFG_RETURN_IF_ERROR(ctx.CheckType(h, DType::kResource, "the table handle"));
  if (h.shape.size() != 1 || h.shape[0] != 1)
    return ctx.Error("the table handle must have shape [1], got " + DimsToString(h.shape));
  return OkStatus();
}

// The table the handle (input 0) names, whatever its types.
Status FindTable(OpContext& ctx, HashtableResource** out, int32_t* id_out) {
  const Tensor& h = ctx.input(0);
  if (!h.data) return ctx.Error("the table handle holds no table id");
  const int32_t id = *h.as<int32_t>();
  auto& tables = ctx.subgraph().shared()->hashtables;
  auto it = tables.find(id);
  if (it == tables.end()) return ctx.Error("no hashtable has id " + std::to_string(id) + " (no HASHTABLE op created it)");
  *out = it->second.get();
  *id_out = id;
  return OkStatus();
}

Status GetTable(OpContext& ctx, DType key, DType value, HashtableResource** out) {
  HashtableResource* t = nullptr;
  int32_t id = 0;
  TFG_RETURN_IF_ERROR(FindTable(ctx, &t, &id));
  if (t->key != key || t->value != value)
    return ctx.Error("hashtable " + std::to_string(id) + " maps " + DTypeName(t->key) + " to " + DTypeName(t->value) +
                     " but the op uses " + DTypeName(key) + " keys and " + DTypeName(value) + " values");
  *out = t;
  return OkStatus();
}

// HASHTABLE_IMPORT / HASHTABLE_FIND: (table handle, keys, values or default value) -> `outputs`.
Status CheckTableOp(OpContext& ctx, int outputs, const char* third) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(3, 3, outputs, outputs));
  TFG_RETURN_IF_ERROR(CheckHandle(ctx));
  if (!ctx.has_input(1) || !ctx.has_input(2)) return ctx.Error(std::string("the keys or ") + third + " are omitted");
  return OkStatus();
}

Status CheckPairTypes(OpContext& ctx, DType key, DType value) {
  if (ValidPair(key, value)) return OkStatus();
  return ctx.Error(std::string("keys of type ") + DTypeName(key) + " and values of type " + DTypeName(value) +
                   ": only INT64 -> STRING and STRING -> INT64 tables exist");
}

Status PrepareImport(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(CheckTableOp(ctx, 0, "values"));
  const Tensor& k = ctx.input(1);
  const Tensor& v = ctx.input(2);
  TFG_RETURN_IF_ERROR(CheckPairTypes(ctx, k.type, v.type));
  if (k.shape != v.shape)
    return ctx.Error("the keys " + DimsToString(k.shape) + " and values " + DimsToString(v.shape) +
                     " must have the same shape");
  return OkStatus();
}

Status EvalImport(OpContext& ctx) {
  const Tensor& k = ctx.input(1);
  const Tensor& v = ctx.input(2);
  HashtableResource* t = nullptr;
  TFG_RETURN_IF_ERROR(GetTable(ctx, k.type, v.type, &t));
  if (t->initialized) return OkStatus();
  const int64_t n = k.num_elements();
  if (k.type == DType::kInt64) {
    if (StringCount(v) != n) return ctx.Error("the values hold no strings");
    const int64_t* kp = k.as<int64_t>();
    for (int64_t i = 0; i < n; ++i) t->int_to_str.emplace(kp[i], std::string(StringAt(v, i)));
  } else {
    if (StringCount(k) != n) return ctx.Error("the keys hold no strings");
    const int64_t* vp = v.as<int64_t>();
    for (int64_t i = 0; i < n; ++i) t->str_to_int.emplace(std::string(StringAt(k, i)), vp[i]);
  }
  t->initialized = true;
  return OkStatus();
}

Status PrepareFind(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(CheckTableOp(ctx, 1, "default value"));
  const Tensor& k = ctx.input(1);
  const Tensor& d = ctx.input(2);
  const Tensor& o = ctx.output(0);
  if (o.type != d.type)
    return ctx.Error(std::string("the output has type ") + DTypeName(o.type) + " but the default value has type " +
                     DTypeName(d.type));
  TFG_RETURN_IF_ERROR(CheckPairTypes(ctx, k.type, o.type));
  return ctx.SetOutputShape(0, k.shape);
}

Status EvalFind(OpContext& ctx) {
  const Tensor& k = ctx.input(1);
  const Tensor& d = ctx.input(2);
  Tensor& o = ctx.output(0);
  HashtableResource* t = nullptr;
  TFG_RETURN_IF_ERROR(GetTable(ctx, k.type, o.type, &t));
  const int64_t n = k.num_elements();
  if (k.type == DType::kInt64) {
    if (StringCount(d) < 1) return ctx.Error("the default value holds no string");
    const std::string_view dflt = StringAt(d, 0);
    const int64_t* kp = k.as<int64_t>();
    std::vector<std::string_view> out(size_t(n), dflt);
    for (int64_t i = 0; i < n; ++i) {
      auto it = t->int_to_str.find(kp[i]);
      if (it != t->int_to_str.end()) out[size_t(i)] = it->second;
    }
    TFG_RETURN_IF_ERROR(ctx.SetOutputShape(0, k.shape));
    return WriteStrings(o, out);
  }
  if (d.num_elements() < 1) return ctx.Error("the default value is empty");
  if (StringCount(k) != n) return ctx.Error("the keys hold no strings");
  const int64_t dflt = *d.as<int64_t>();
  int64_t* op = o.as<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    auto it = t->str_to_int.find(std::string(StringAt(k, i)));
    op[i] = it != t->str_to_int.end() ? it->second : dflt;
  }
  return OkStatus();
}

Status PrepareSize(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(1, 1, 1, 1));
  TFG_RETURN_IF_ERROR(CheckHandle(ctx));
  TFG_RETURN_IF_ERROR(ctx.CheckType(ctx.output(0), DType::kInt64, "the output"));
  return ctx.SetOutputShape(0, Dims{1});
}

Status EvalSize(OpContext& ctx) {
  HashtableResource* t = nullptr;
  int32_t id = 0;
  TFG_RETURN_IF_ERROR(FindTable(ctx, &t, &id));
  *ctx.output(0).as<int64_t>() = int64_t(t->size());
  return OkStatus();
}

}  // namespace

const OpImpl kOp_HASHTABLE = {ParseHashtable, PrepareHashtable, EvalHashtable, nullptr, false};
const OpImpl kOp_HASHTABLE_FIND = {nullptr, PrepareFind, EvalFind, nullptr, false};
const OpImpl kOp_HASHTABLE_IMPORT = {nullptr, PrepareImport, EvalImport, nullptr, false};
const OpImpl kOp_HASHTABLE_SIZE = {nullptr, PrepareSize, EvalSize, nullptr, false};

}  // namespace tflite_gpu
