// GATHER_ND, SCATTER_ND, ONE_HOT, EMBEDDING_LOOKUP, DYNAMIC_UPDATE_SLICE, SPARSE_TO_DENSE:
// index-driven copies. Every index read from a tensor is range-checked (an out-of-range index is
// an invoke error, as in TFLite, never an out-of-bounds access).
#include <climits>
#include <cmath>

#include "ops/half.h"
#include "ops/shape/shape_common.h"

namespace tflite_gpu {
namespace {

using namespace shape_ops;

constexpr int64_t kMaxElements = int64_t(1) << 34;

bool IndexType(DType t) { return t == DType::kInt32 || t == DType::kInt64 || t == DType::kInt16; }

// ---------------------------------------------------------------------------------------------
// GATHER_ND: params, indices [..., nd] -> indices.shape[:-1] + params.shape[nd:].
// ---------------------------------------------------------------------------------------------
Status GatherNdShape(OpContext& ctx, Dims* os, int* nd) {
  const Tensor& p = ctx.input(0);
  const Tensor& ix = ctx.input(1);
  if (p.shape.empty()) return ctx.Error("params must have rank >= 1");
  if (ix.shape.empty()) return ctx.Error("indices must have rank >= 1");
  const int k = ix.shape.back();
  if (k == 0) return ctx.Error("indices with an empty last dimension are not supported (as in TFLite)");
  if (k > int(p.shape.size()))
    return ctx.Error("index depth " + std::to_string(k) + " exceeds the params rank " + std::to_string(p.shape.size()));
  os->assign(ix.shape.begin(), ix.shape.end() - 1);
  for (size_t i = size_t(k); i < p.shape.size(); ++i) os->push_back(p.shape[i]);
  if (os->size() > 8) return ctx.Error("output rank exceeds 8");
  *nd = k;
  return OkStatus();
}

Status GatherNdPrepare(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 2, 1, 1));
  if (!ctx.has_input(0) || !ctx.has_input(1)) return ctx.Error("missing input");
  const Tensor& p = ctx.input(0);
  const Tensor& ix = ctx.input(1);
  TFG_RETURN_IF_ERROR(CheckMovable(ctx, p, "params"));
  TFG_RETURN_IF_ERROR(CheckSameType(ctx, ctx.output(0), p, "output", "params"));
  if (!IndexType(ix.type))
    return ctx.Error(std::string("indices have type ") + DTypeName(ix.type) + " (INT16, INT32 or INT64)");
  Dims os;
  int nd = 0;
  TFG_RETURN_IF_ERROR(GatherNdShape(ctx, &os, &nd));
  return ctx.SetOutputShape(0, os);
}

Status GatherNdEval(OpContext& ctx) {
  const Tensor& p = ctx.input(0);
  Dims os;
  int nd = 0;
  TFG_RETURN_IF_ERROR(GatherNdShape(ctx, &os, &nd));
  TFG_RETURN_IF_ERROR(CheckHasData(ctx, p, "params"));
  std::vector<int64_t> idx;
  TFG_RETURN_IF_ERROR(ReadInts(ctx, ctx.input(1), "indices", &idx, true));
  Tensor& out = ctx.output(0);
  const int64_t es = int64_t(DTypeSize(p.type));
  const int64_t slice = Prod(p.shape, nd, int(p.shape.size())) * es;
  const std::vector<int64_t> st = Strides(p.shape);
  const int64_t n = int64_t(idx.size()) / nd;
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (int j = 0; j < nd; ++j) {
      int64_t v = idx[i * nd + j];
      if (v < 0 || v >= p.shape[j])
        return ctx.Error("index " + std::to_string(v) + " out of range [0, " + std::to_string(p.shape[j]) +
                         ") in dimension " + std::to_string(j));
      off += v * st[j];
    }
    Copy(out.data + i * slice, p.data + off * es, size_t(slice));
  }
  return OkStatus();
}

// ---------------------------------------------------------------------------------------------
// SCATTER_ND: indices [..., nd], updates, shape -> zeros of `shape` plus the updates summed at
// the indexed slices (BOOL: or). Dynamic unless shape is constant.
// ---------------------------------------------------------------------------------------------
Status ScatterNdResolve(OpContext& ctx, Dims* os) {
  std::vector<int64_t> s;
  TFG_RETURN_IF_ERROR(ReadInts(ctx, ctx.input(2), "shape", &s));
  const Tensor& ix = ctx.input(0);
  const Tensor& up = ctx.input(1);
  os->clear();
  int64_t n = 1;
  for (int64_t d : s) {
    if (d < 0 || d > INT32_MAX) return ctx.Error("invalid dimension " + std::to_string(d) + " in shape");
    n *= d;
    if (n > kMaxElements) return ctx.Error("shape is too large");
    os->push_back(int32_t(d));
  }
  if (s.empty() || s.size() > 8) return ctx.Error("shape must have 1..8 dimensions");
  if (ix.shape.empty()) return ctx.Error("indices must have rank >= 1");
  const int k = ix.shape.back();
  if (k > int(s.size())) return ctx.Error("index depth " + std::to_string(k) + " exceeds the output rank");
  // updates.shape must be indices.shape[:-1] + shape[k:]
  Dims want(ix.shape.begin(), ix.shape.end() - 1);
  for (size_t i = size_t(k); i < s.size(); ++i) want.push_back(int32_t(s[i]));
  if (up.shape != want)
    return ctx.Error("updates shape " + DimsToString(up.shape) + " must be " + DimsToString(want));
  return OkStatus();
}

Status ScatterNdPrepare(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(3, 3, 1, 1));
  for (int i = 0; i < 3; ++i)
    if (!ctx.has_input(i)) return ctx.Error("missing input");
  const Tensor& ix = ctx.input(0);
  const Tensor& up = ctx.input(1);
  const Tensor& s = ctx.input(2);
  if (ix.type != DType::kInt32)
    return ctx.Error(std::string("indices have type ") + DTypeName(ix.type) + ", expected INT32 (as TFLite)");
  if (s.type != ix.type) return ctx.Error("shape and indices must have the same type");
  if (s.shape.size() != 1) return ctx.Error("shape must be 1-D");
  const DType t = up.type;
  if (t != DType::kFloat32 && t != DType::kInt32 && t != DType::kInt64 && t != DType::kInt8 && t != DType::kUInt8 &&
      t != DType::kBool && t != DType::kInt16 && t != DType::kFloat16)
    return ctx.Error(std::string("updates of type ") + DTypeName(t) + " are not supported");
  TFG_RETURN_IF_ERROR(CheckSameType(ctx, ctx.output(0), up, "output", "updates"));
  if (!ctx.IsConstantOrPersistent(s)) {
    ctx.SetOutputDynamic(0);
    return OkStatus();
  }
  Dims os;
  TFG_RETURN_IF_ERROR(ScatterNdResolve(ctx, &os));
  return ctx.SetOutputShape(0, os);
}

uint16_t HalfAdd(uint16_t a, uint16_t b);

template <typename T>
void AddInto(T* dst, const T* src, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = T(dst[i] + src[i]);
}

Status ScatterNdEval(OpContext& ctx) {
  Dims os;
  TFG_RETURN_IF_ERROR(ScatterNdResolve(ctx, &os));
  TFG_RETURN_IF_ERROR(SetOrCheckShape(ctx, 0, os));
  const Tensor& up = ctx.input(1);
  TFG_RETURN_IF_ERROR(CheckHasData(ctx, up, "updates"));
  std::vector<int64_t> idx;
  TFG_RETURN_IF_ERROR(ReadInts(ctx, ctx.input(0), "indices", &idx));
  Tensor& out = ctx.output(0);
  const int k = ctx.input(0).shape.back();
  const int64_t slice = Prod(os, k, int(os.size()));
  const int64_t n = Prod(ctx.input(0).shape, 0, int(ctx.input(0).shape.size()) - 1);
  const size_t es = DTypeSize(out.type);
  std::memset(out.data, 0, size_t(out.num_elements()) * es);
  const std::vector<int64_t> st = Strides(os);
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (int j = 0; j < k; ++j) {
      int64_t v = idx[i * k + j];
      if (v < 0 || v >= os[j])
        return ctx.Error("index " + std::to_string(v) + " out of range [0, " + std::to_string(os[j]) +
                         ") in dimension " + std::to_string(j));
      off += v * st[j];
    }
    const int64_t src = i * slice;
    switch (out.type) {
      case DType::kFloat32: AddInto(out.as<float>() + off, up.as<float>() + src, slice); break;
      case DType::kInt32: AddInto(out.as<int32_t>() + off, up.as<int32_t>() + src, slice); break;
      case DType::kInt64: AddInto(out.as<int64_t>() + off, up.as<int64_t>() + src, slice); break;
      case DType::kInt16: AddInto(out.as<int16_t>() + off, up.as<int16_t>() + src, slice); break;
      case DType::kInt8: AddInto(out.as<int8_t>() + off, up.as<int8_t>() + src, slice); break;
      case DType::kUInt8: AddInto(out.as<uint8_t>() + off, up.as<uint8_t>() + src, slice); break;
      case DType::kBool:
        for (int64_t q = 0; q < slice; ++q) out.data[off + q] = uint8_t(out.data[off + q] | up.data[src + q]);
        break;
      default:  // FLOAT16
        for (int64_t q = 0; q < slice; ++q) {
          uint16_t* d = out.as<uint16_t>() + off + q;
          *d = HalfAdd(*d, up.as<uint16_t>()[src + q]);
        }
        break;
    }
  }
  return OkStatus();
}

// fp16 add through float (round to nearest even).
uint16_t HalfAdd(uint16_t a, uint16_t b) { return FloatToHalf(HalfToFloat(a) + HalfToFloat(b)); }

// ---------------------------------------------------------------------------------------------
// ONE_HOT: indices (INT32/INT64), depth (scalar INT32), on_value, off_value (scalars of the
// output type); axis inserts the depth dimension (-1: last). Dynamic unless depth is constant.
// ---------------------------------------------------------------------------------------------
struct OneHotParams {
  int axis = -1;
};

Status OneHotParse(const OptionsView& opts, Node& node) {
  auto p = std::make_shared<OneHotParams>();
  p->axis = opts.Get<int32_t>(0, 0);  // schema default 0 (absent options: 0 too)
  node.params = p;
  return OkStatus();
}

Status OneHotResolve(OpContext& ctx, Dims* os, int* axis, int64_t* depth) {
  const Tensor& ix = ctx.input(0);
  const int rank = int(ix.shape.size());
  int a = ctx.node().P<OneHotParams>().axis;
  if (a == -1) a = rank;
  if (a < 0 || a > rank)
    return ctx.Error("axis " + std::to_string(ctx.node().P<OneHotParams>().axis) + " out of range for indices rank " +
                     std::to_string(rank));
  std::vector<int64_t> d;
  TFG_RETURN_IF_ERROR(ReadInts(ctx, ctx.input(1), "depth", &d));
  if (d.size() != 1) return ctx.Error("depth must be a scalar");
  if (d[0] < 0 || d[0] > INT32_MAX) return ctx.Error("depth must be non-negative, got " + std::to_string(d[0]));
  *os = ix.shape;
  os->insert(os->begin() + a, int32_t(d[0]));
  if (NumElements(*os) > kMaxElements) return ctx.Error("output is too large");
  *axis = a;
  *depth = d[0];
  return OkStatus();
}

Status OneHotPrepare(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(4, 4, 1, 1));
  for (int i = 0; i < 4; ++i)
    if (!ctx.has_input(i)) return ctx.Error("missing input");
  const Tensor& ix = ctx.input(0);
  const Tensor& depth = ctx.input(1);
  const Tensor& on = ctx.input(2);
  const Tensor& off = ctx.input(3);
  if (ix.type != DType::kInt32 && ix.type != DType::kInt64)
    return ctx.Error(std::string("indices have type ") + DTypeName(ix.type) + ", expected INT32 or INT64");
  if (depth.type != DType::kInt32) return ctx.Error(std::string("depth has type ") + DTypeName(depth.type) + ", expected INT32");
  if (depth.num_elements() != 1) return ctx.Error("depth must be a scalar");
  TFG_RETURN_IF_ERROR(CheckMovable(ctx, on, "on_value"));
  TFG_RETURN_IF_ERROR(CheckSameType(ctx, off, on, "off_value", "on_value"));
  TFG_RETURN_IF_ERROR(CheckSameType(ctx, ctx.output(0), on, "output", "on_value"));
  if (on.num_elements() != 1 || off.num_elements() != 1) return ctx.Error("on_value and off_value must be scalars");
  if (ix.shape.size() >= 8) return ctx.Error("indices rank must be below 8");
  if (!ctx.IsConstantOrPersistent(depth)) {
    ctx.SetOutputDynamic(0);
    return OkStatus();
  }
  Dims os;
  int axis = 0;
  int64_t d = 0;
  TFG_RETURN_IF_ERROR(OneHotResolve(ctx, &os, &axis, &d));
  return ctx.SetOutputShape(0, os);
}

Status OneHotEval(OpContext& ctx) {
  Dims os;
  int axis = 0;
  int64_t depth = 0;
  TFG_RETURN_IF_ERROR(OneHotResolve(ctx, &os, &axis, &depth));
  TFG_RETURN_IF_ERROR(SetOrCheckShape(ctx, 0, os));
  std::vector<int64_t> idx;
  TFG_RETURN_IF_ERROR(ReadInts(ctx, ctx.input(0), "indices", &idx));
  TFG_RETURN_IF_ERROR(CheckHasData(ctx, ctx.input(2), "on_value"));
  TFG_RETURN_IF_ERROR(CheckHasData(ctx, ctx.input(3), "off_value"));
  const Tensor& ix = ctx.input(0);
  Tensor& out = ctx.output(0);
  const size_t es = DTypeSize(out.type);
  const int64_t prefix = Prod(ix.shape, 0, axis), suffix = Prod(ix.shape, axis, int(ix.shape.size()));
  const uint8_t* on = ctx.input(2).data;
  const uint8_t* off = ctx.input(3).data;
  int64_t o = 0;
  for (int64_t i = 0; i < prefix; ++i)
    for (int64_t d = 0; d < depth; ++d)
      for (int64_t j = 0; j < suffix; ++j, ++o)
        std::memcpy(out.data + o * es, idx[i * suffix + j] == d ? on : off, es);
  return OkStatus();
}

// ---------------------------------------------------------------------------------------------
// EMBEDDING_LOOKUP: ids (1-D INT32), value (rank >= 2) -> rows of value. A quantized INT8/UINT8
// (or INT4 / INT2, v5+) value table with a FLOAT32 output is dequantized (hybrid: row * scale, per-row scale for
// per-channel tables along dimension 0).
// ---------------------------------------------------------------------------------------------
Status EmbeddingPrepare(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 2, 1, 1));
  if (!ctx.has_input(0) || !ctx.has_input(1)) return ctx.Error("missing input");
  const Tensor& ids = ctx.input(0);
  const Tensor& v = ctx.input(1);
  Tensor& out = ctx.output(0);
  if (ids.type != DType::kInt32) return ctx.Error(std::string("ids have type ") + DTypeName(ids.type) + ", expected INT32");
  if (ids.shape.size() != 1) return ctx.Error("ids must be 1-D, got " + DimsToString(ids.shape));
  if (v.shape.size() < 2) return ctx.Error("value must have rank >= 2, got " + DimsToString(v.shape));
  // INT4 / INT2 tables (held unpacked, one sign-extended byte a value) are looked up as INT8 ones, into
  // FLOAT32 only (LiteRT 2.3 runs that; with an INT8 output it copies packed bytes).
  const bool packed = v.type == DType::kInt4 || v.type == DType::kInt2;
  if (!packed) TFG_RETURN_IF_ERROR(CheckMovable(ctx, v, "value"));
  else if (out.type != DType::kFloat32)
    return ctx.Error(std::string("the value table is ") + DTypeName(v.type) +
                     ": it needs a FLOAT32 output (the hybrid lookup), got " + DTypeName(out.type));
  if (packed) {
    // LiteRT finds a row at byte id * row * bits / 8 of the packed buffer: rows that do not start on
    // a byte give values unlike the table's (measured: a [7, 3, 5] INT4 table), so they are refused.
    const int64_t bits = v.type == DType::kInt4 ? 4 : 2;
    if (Prod(v.shape, 1, int(v.shape.size())) * bits % 8 != 0)
      return ctx.Error(std::string("a ") + DTypeName(v.type) + " value table whose rows do not fill whole bytes (" +
                       std::to_string(Prod(v.shape, 1, int(v.shape.size()))) + " values a row) is not supported");
  }
  const bool hybrid = (v.type == DType::kInt8 || v.type == DType::kUInt8 || packed) && out.type == DType::kFloat32;
  if (hybrid) {
    if (v.quant.scale.empty()) return ctx.Error("quantized value table has no scale");
    if (v.quant.scale.size() != 1 && (v.quant.quantized_dimension != 0 || int64_t(v.quant.scale.size()) != v.shape[0]))
      return ctx.Error("per-channel value table needs one scale per row (quantized_dimension 0)");
  } else {
    TFG_RETURN_IF_ERROR(CheckSameType(ctx, out, v, "output", "value"));
  }
  Dims os = v.shape;
  os[0] = ids.shape[0];
  return ctx.SetOutputShape(0, os);
}

Status EmbeddingEval(OpContext& ctx) {
  const Tensor& v = ctx.input(1);
  Tensor& out = ctx.output(0);
  TFG_RETURN_IF_ERROR(CheckHasData(ctx, v, "value"));
  std::vector<int64_t> ids;
  TFG_RETURN_IF_ERROR(ReadInts(ctx, ctx.input(0), "ids", &ids));
  const int64_t row = Prod(v.shape, 1, int(v.shape.size()));
  const bool hybrid = out.type == DType::kFloat32 && v.type != DType::kFloat32;
  const size_t es = DTypeSize(v.type);
  for (size_t i = 0; i < ids.size(); ++i) {
    const int64_t id = ids[i];
    if (id < 0 || id >= v.shape[0])
      return ctx.Error("embedding id " + std::to_string(id) + " out of range [0, " + std::to_string(v.shape[0]) + ")");
    if (!hybrid) {
      Copy(out.data + int64_t(i) * row * int64_t(es), v.data + id * row * int64_t(es), size_t(row) * es);
      continue;
    }
    const float scale = v.quant.scale.size() == 1 ? v.quant.scale[0] : v.quant.scale[size_t(id)];
    float* o = out.as<float>() + int64_t(i) * row;
    // TFLite's hybrid lookup reads the table bytes as int8 for both INT8 and UINT8 tables.
    const int8_t* s = reinterpret_cast<const int8_t*>(v.data) + id * row;
    for (int64_t k = 0; k < row; ++k) o[k] = scale * float(s[k]);
  }
  return OkStatus();
}

// ---------------------------------------------------------------------------------------------
// DYNAMIC_UPDATE_SLICE: operand, update (same rank, dims <= operand's), start_indices (1-D
// INT32/INT64, one per dim, clamped to [0, operand - update]) -> operand with update written in.
// ---------------------------------------------------------------------------------------------
Status DusPrepare(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(3, 3, 1, 1));
  for (int i = 0; i < 3; ++i)
    if (!ctx.has_input(i)) return ctx.Error("missing input");
  const Tensor& op = ctx.input(0);
  const Tensor& up = ctx.input(1);
  const Tensor& st = ctx.input(2);
  TFG_RETURN_IF_ERROR(CheckMovable(ctx, op, "operand"));
  TFG_RETURN_IF_ERROR(CheckSameType(ctx, up, op, "update", "operand"));
  TFG_RETURN_IF_ERROR(CheckSameType(ctx, ctx.output(0), op, "output", "operand"));
  if (st.type != DType::kInt32 && st.type != DType::kInt64)
    return ctx.Error(std::string("start_indices have type ") + DTypeName(st.type) + ", expected INT32 or INT64");
  if (up.shape.size() != op.shape.size())
    return ctx.Error("update rank " + std::to_string(up.shape.size()) + " differs from the operand rank " +
                     std::to_string(op.shape.size()));
  if (st.shape.size() != 1 || st.shape[0] != int32_t(op.shape.size()))
    return ctx.Error("start_indices must be 1-D with " + std::to_string(op.shape.size()) + " values");
  for (size_t i = 0; i < op.shape.size(); ++i)
    if (up.shape[i] > op.shape[i])
      return ctx.Error("update " + DimsToString(up.shape) + " is larger than the operand " + DimsToString(op.shape));
  return ctx.SetOutputShape(0, op.shape);
}

Status DusEval(OpContext& ctx) {
  const Tensor& op = ctx.input(0);
  const Tensor& up = ctx.input(1);
  Tensor& out = ctx.output(0);
  TFG_RETURN_IF_ERROR(CheckHasData(ctx, op, "operand"));
  TFG_RETURN_IF_ERROR(CheckHasData(ctx, up, "update"));
  std::vector<int64_t> s;
  TFG_RETURN_IF_ERROR(ReadInts(ctx, ctx.input(2), "start_indices", &s));
  const int rank = int(op.shape.size());
  for (int i = 0; i < rank; ++i) s[i] = std::min<int64_t>(std::max<int64_t>(s[i], 0), op.shape[i] - up.shape[i]);
  const size_t es = DTypeSize(op.type);
  if (out.data != op.data) Copy(out.data, op.data, size_t(op.num_elements()) * es);
  const int64_t n = up.num_elements();
  if (n == 0) return OkStatus();
  const std::vector<int64_t> ost = Strides(op.shape);
  const int64_t run = rank == 0 ? 1 : up.shape[rank - 1];
  for (int64_t r = 0; r < n / run; ++r) {
    int64_t rem = r, off = rank == 0 ? 0 : s[rank - 1];
    for (int i = rank - 2; i >= 0; --i) {
      off += (rem % up.shape[i] + s[i]) * ost[i];
      rem /= up.shape[i];
    }
    Copy(out.data + off * int64_t(es), up.data + r * run * int64_t(es), size_t(run) * es);
  }
  return OkStatus();
}

// ---------------------------------------------------------------------------------------------
// SPARSE_TO_DENSE: indices (scalar, [N] or [N, rank]; INT32/INT64), output_shape (1-D), values
// (scalar or [N]), default_value (scalar). Dynamic unless output_shape is constant.
// ---------------------------------------------------------------------------------------------
Status StdResolve(OpContext& ctx, Dims* os) {
  std::vector<int64_t> s;
  TFG_RETURN_IF_ERROR(ReadInts(ctx, ctx.input(1), "output_shape", &s));
  if (s.size() > 8) return ctx.Error("output_shape has more than 8 dimensions");
  os->clear();
  int64_t n = 1;
  for (int64_t d : s) {
    if (d < 0 || d > INT32_MAX) return ctx.Error("invalid dimension " + std::to_string(d) + " in output_shape");
    n *= d;
    if (n > kMaxElements) return ctx.Error("output_shape is too large");
    os->push_back(int32_t(d));
  }
  return OkStatus();
}

Status StdPrepare(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(4, 4, 1, 1));
  for (int i = 0; i < 4; ++i)
    if (!ctx.has_input(i)) return ctx.Error("missing input");
  const Tensor& ix = ctx.input(0);
  const Tensor& shp = ctx.input(1);
  const Tensor& val = ctx.input(2);
  const Tensor& dflt = ctx.input(3);
  if (ix.type != DType::kInt32 && ix.type != DType::kInt64)
    return ctx.Error(std::string("indices have type ") + DTypeName(ix.type) + ", expected INT32 or INT64");
  if (shp.type != DType::kInt32 && shp.type != DType::kInt64)
    return ctx.Error(std::string("output_shape has type ") + DTypeName(shp.type) + ", expected INT32 or INT64");
  if (ix.shape.size() > 2) return ctx.Error("indices must have rank <= 2");
  if (shp.shape.size() != 1) return ctx.Error("output_shape must be 1-D");
  if (val.shape.size() > 1) return ctx.Error("values must be a scalar or 1-D");
  TFG_RETURN_IF_ERROR(CheckMovable(ctx, val, "values"));
  TFG_RETURN_IF_ERROR(CheckSameType(ctx, dflt, val, "default_value", "values"));
  TFG_RETURN_IF_ERROR(CheckSameType(ctx, ctx.output(0), val, "output", "values"));
  if (dflt.num_elements() != 1) return ctx.Error("default_value must be a scalar");
  const int64_t n = ix.shape.empty() ? 1 : ix.shape[0];
  if (val.shape.size() == 1 && val.shape[0] != n)
    return ctx.Error("values has " + std::to_string(val.shape[0]) + " entries for " + std::to_string(n) + " indices");
  if (!ctx.IsConstantOrPersistent(shp)) {
    ctx.SetOutputDynamic(0);
    return OkStatus();
  }
  Dims os;
  TFG_RETURN_IF_ERROR(StdResolve(ctx, &os));
  return ctx.SetOutputShape(0, os);
}

Status StdEval(OpContext& ctx) {
  Dims os;
  TFG_RETURN_IF_ERROR(StdResolve(ctx, &os));
  TFG_RETURN_IF_ERROR(SetOrCheckShape(ctx, 0, os));
  const Tensor& ix = ctx.input(0);
  const Tensor& val = ctx.input(2);
  TFG_RETURN_IF_ERROR(CheckHasData(ctx, val, "values"));
  TFG_RETURN_IF_ERROR(CheckHasData(ctx, ctx.input(3), "default_value"));
  std::vector<int64_t> idx;
  TFG_RETURN_IF_ERROR(ReadInts(ctx, ix, "indices", &idx));
  const int rank = int(os.size());
  const int64_t n = ix.shape.empty() ? 1 : ix.shape[0];
  const int64_t k = ix.shape.size() == 2 ? ix.shape[1] : 1;
  if (k != rank && !(rank == 0 && n == 0))
    return ctx.Error("indices have " + std::to_string(k) + " coordinates for an output of rank " + std::to_string(rank));
  Tensor& out = ctx.output(0);
  const size_t es = DTypeSize(out.type);
  const int64_t total = out.num_elements();
  for (int64_t i = 0; i < total; ++i) std::memcpy(out.data + i * int64_t(es), ctx.input(3).data, es);
  const std::vector<int64_t> st = Strides(os);
  const bool scalar_val = val.shape.empty();
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (int j = 0; j < rank; ++j) {
      int64_t v = idx[i * k + j];
      if (v < 0 || v >= os[j])
        return ctx.Error("index " + std::to_string(v) + " out of range [0, " + std::to_string(os[j]) +
                         ") in dimension " + std::to_string(j));
      off += v * st[j];
    }
    std::memcpy(out.data + off * int64_t(es), val.data + (scalar_val ? 0 : i) * int64_t(es), es);
  }
  return OkStatus();
}

}  // namespace

const OpImpl kOp_GATHER_ND = {nullptr, GatherNdPrepare, GatherNdEval, nullptr, false};
const OpImpl kOp_SCATTER_ND = {nullptr, ScatterNdPrepare, ScatterNdEval, nullptr, false};
const OpImpl kOp_ONE_HOT = {OneHotParse, OneHotPrepare, OneHotEval, nullptr, false};
const OpImpl kOp_EMBEDDING_LOOKUP = {nullptr, EmbeddingPrepare, EmbeddingEval, nullptr, false};
const OpImpl kOp_DYNAMIC_UPDATE_SLICE = {nullptr, DusPrepare, DusEval, nullptr, false};
const OpImpl kOp_SPARSE_TO_DENSE = {nullptr, StdPrepare, StdEval, nullptr, false};

int shape_ops::OneHotAxisOf(const Node& node) { return node.P<OneHotParams>().axis; }

}  // namespace tflite_gpu
