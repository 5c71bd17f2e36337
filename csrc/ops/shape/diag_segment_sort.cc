// MATRIX_DIAG, MATRIX_SET_DIAG, BUCKETIZE, SEGMENT_SUM, UNSORTED_SEGMENT_{SUM,PROD,MAX,MIN},
// TOPK_V2, UNIQUE.
#include <algorithm>
#include <climits>
#include <limits>
#include <map>
#include <numeric>
#include <unordered_map>

#include "ops/shape/shape_common.h"

namespace tflite_gpu {
namespace {

using namespace shape_ops;

// ---------------------------------------------------------------------------------------------
// MATRIX_DIAG: [..., N] -> [..., N, N] with the input on the diagonal, zeros elsewhere.
// ---------------------------------------------------------------------------------------------
Status MatrixDiagPrepare(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(1, 1, 1, 1));
  if (!ctx.has_input(0)) return ctx.Error("missing input");
  const Tensor& in = ctx.input(0);
  TFG_RETURN_IF_ERROR(CheckMovable(ctx, in, "input"));
  TFG_RETURN_IF_ERROR(CheckSameType(ctx, ctx.output(0), in, "output", "input"));
  if (in.shape.empty()) return ctx.Error("input must have rank >= 1");
  if (in.shape.size() >= 8) return ctx.Error("input rank must be below 8");
  Dims os = in.shape;
  os.push_back(in.shape.back());
  if (NumElements(os) > (int64_t(1) << 34)) return ctx.Error("output is too large");
  return ctx.SetOutputShape(0, os);
}

Status MatrixDiagEval(OpContext& ctx) {
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  const size_t es = DTypeSize(in.type);
  const int64_t n = in.shape.back();
  const int64_t batches = n == 0 ? 0 : in.num_elements() / n;
  std::memset(out.data, 0, size_t(out.num_elements()) * es);
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t i = 0; i < n; ++i)
      std::memcpy(out.data + ((b * n + i) * n + i) * int64_t(es), in.data + (b * n + i) * int64_t(es), es);
  return OkStatus();
}

// ---------------------------------------------------------------------------------------------
// MATRIX_SET_DIAG: input [..., M, N], diagonal [..., min(M, N)] -> input with its main diagonal
// replaced.
// ---------------------------------------------------------------------------------------------
Status MatrixSetDiagPrepare(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 2, 1, 1));
  if (!ctx.has_input(0) || !ctx.has_input(1)) return ctx.Error("missing input");
  const Tensor& in = ctx.input(0);
  const Tensor& d = ctx.input(1);
  TFG_RETURN_IF_ERROR(CheckMovable(ctx, in, "input"));
  TFG_RETURN_IF_ERROR(CheckSameType(ctx, d, in, "diagonal", "input"));
  TFG_RETURN_IF_ERROR(CheckSameType(ctx, ctx.output(0), in, "output", "input"));
  const int r = int(in.shape.size());
  if (r < 2) return ctx.Error("input must have rank >= 2");
  Dims want(in.shape.begin(), in.shape.end() - 2);
  want.push_back(std::min(in.shape[r - 2], in.shape[r - 1]));
  if (d.shape != want)
    return ctx.Error("diagonal shape " + DimsToString(d.shape) + " must be " + DimsToString(want));
  return ctx.SetOutputShape(0, in.shape);
}

Status MatrixSetDiagEval(OpContext& ctx) {
  const Tensor& in = ctx.input(0);
  const Tensor& d = ctx.input(1);
  Tensor& out = ctx.output(0);
  const size_t es = DTypeSize(in.type);
  const int r = int(in.shape.size());
  const int64_t m = in.shape[r - 2], n = in.shape[r - 1], k = std::min(m, n);
  const int64_t batches = Prod(in.shape, 0, r - 2);
  if (out.data != in.data) Copy(out.data, in.data, size_t(in.num_elements()) * es);
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t i = 0; i < k; ++i)
      std::memcpy(out.data + ((b * m + i) * n + i) * int64_t(es), d.data + (b * k + i) * int64_t(es), es);
  return OkStatus();
}

// ---------------------------------------------------------------------------------------------
// BUCKETIZE: boundaries (sorted floats, option) -> INT32 index of the bucket of each value: the
// number of boundaries <= x (std::upper_bound with C++'s mixed-type comparison, as TFLite).
// ---------------------------------------------------------------------------------------------
struct BucketizeParams {
  std::vector<float> boundaries;
};

Status BucketizeParse(const OptionsView& opts, Node& node) {
  auto p = std::make_shared<BucketizeParams>();
  p->boundaries = opts.table.Vector(0, 4, "boundaries").ToVector<float>();
  for (size_t i = 1; i < p->boundaries.size(); ++i)
    if (!(p->boundaries[i - 1] <= p->boundaries[i]))
      return InvalidArgument("BUCKETIZE: boundaries must be sorted in ascending order");
  node.params = p;
  return OkStatus();
}

Status BucketizePrepare(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(1, 1, 1, 1));
  if (!ctx.has_input(0)) return ctx.Error("missing input");
  const DType t = ctx.input(0).type;
  if (t != DType::kFloat32 && t != DType::kFloat64 && t != DType::kInt32 && t != DType::kInt64)
    return ctx.Error(std::string("input type ") + DTypeName(t) + " is not supported (FLOAT32, FLOAT64, INT32, INT64)");
  if (ctx.output(0).type != DType::kInt32)
    return ctx.Error(std::string("output must be INT32, got ") + DTypeName(ctx.output(0).type));
  return ctx.SetOutputShape(0, ctx.input(0).shape);
}

template <typename T>
void BucketizeT(const std::vector<float>& b, const T* x, int32_t* o, int64_t n) {
  for (int64_t i = 0; i < n; ++i) o[i] = int32_t(std::upper_bound(b.begin(), b.end(), x[i]) - b.begin());
}

Status BucketizeEval(OpContext& ctx) {
  const auto& b = ctx.node().P<BucketizeParams>().boundaries;
  const Tensor& in = ctx.input(0);
  int32_t* o = ctx.output(0).as<int32_t>();
  const int64_t n = in.num_elements();
  switch (in.type) {
    case DType::kFloat32: BucketizeT(b, in.as<float>(), o, n); break;
    case DType::kFloat64: BucketizeT(b, in.as<double>(), o, n); break;
    case DType::kInt32: BucketizeT(b, in.as<int32_t>(), o, n); break;
    default: BucketizeT(b, in.as<int64_t>(), o, n); break;
  }
  return OkStatus();
}

// ---------------------------------------------------------------------------------------------
// SEGMENT_SUM: data, segment_ids (1-D INT32, sorted, one per data row) -> [max_id + 1, ...].
// UNSORTED_SEGMENT_*: data, segment_ids (INT32, a prefix of data's shape), num_segments (INT32
// scalar) -> [num_segments, data.shape[ids.rank:]]. Negative ids are skipped; empty segments hold
// the reduction's identity (0, 1, lowest, highest). Dynamic unless the ids (and num_segments)
// are constant.
// ---------------------------------------------------------------------------------------------
enum class SegKind { kSum, kProd, kMax, kMin };

struct SegGeom {
  int64_t rows = 0, inner = 1, segments = 0;
  Dims out;
};

Status SegResolve(OpContext& ctx, bool sorted, SegGeom* g, std::vector<int64_t>* ids) {
  const Tensor& data = ctx.input(0);
  const Tensor& sid = ctx.input(1);
  TFG_RETURN_IF_ERROR(ReadInts(ctx, sid, "segment_ids", ids));
  const int ir = int(sid.shape.size());
  g->rows = sid.num_elements();
  g->inner = Prod(data.shape, ir, int(data.shape.size()));
  int64_t max_id = -1;
  for (size_t i = 0; i < ids->size(); ++i) max_id = std::max(max_id, (*ids)[i]);
  if (sorted) {
    for (size_t i = 0; i < ids->size(); ++i) {
      if ((*ids)[i] < 0) return ctx.Error("segment ids must be non-negative, got " + std::to_string((*ids)[i]));
      // TFLite: consecutive ids differ by 0 or 1 (sorted, no gaps).
      if (i > 0 && (*ids)[i] != (*ids)[i - 1] && (*ids)[i] != (*ids)[i - 1] + 1)
        return ctx.Error("segment ids must be sorted with steps of 0 or 1 (as TFLite), got " +
                         std::to_string((*ids)[i - 1]) + " then " + std::to_string((*ids)[i]));
    }
    g->segments = max_id + 1;
  } else {
    std::vector<int64_t> ns;
    TFG_RETURN_IF_ERROR(ReadInts(ctx, ctx.input(2), "num_segments", &ns));
    if (ns.size() != 1) return ctx.Error("num_segments must be a scalar");
    if (ns[0] < 0) return ctx.Error("num_segments must be non-negative, got " + std::to_string(ns[0]));
    if (max_id >= ns[0])
      return ctx.Error("segment id " + std::to_string(max_id) + " is not below num_segments " + std::to_string(ns[0]));
    g->segments = ns[0];
  }
  if (g->segments > INT32_MAX || g->segments * g->inner > (int64_t(1) << 34)) return ctx.Error("output is too large");
  g->out.assign(1, int32_t(g->segments));
  for (size_t i = size_t(ir); i < data.shape.size(); ++i) g->out.push_back(data.shape[i]);
  return OkStatus();
}

Status SegPrepareImpl(OpContext& ctx, bool sorted) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(sorted ? 2 : 3, sorted ? 2 : 3, 1, 1));
  for (int i = 0; i < ctx.num_inputs(); ++i)
    if (!ctx.has_input(i)) return ctx.Error("missing input");
  const Tensor& data = ctx.input(0);
  const Tensor& sid = ctx.input(1);
  if (data.type != DType::kFloat32 && data.type != DType::kInt32)
    return ctx.Error(std::string("data type ") + DTypeName(data.type) + " is not supported (FLOAT32 or INT32)");
  TFG_RETURN_IF_ERROR(CheckSameType(ctx, ctx.output(0), data, "output", "data"));
  if (sid.type != DType::kInt32) return ctx.Error(std::string("segment_ids have type ") + DTypeName(sid.type) + ", expected INT32");
  if (sorted) {
    if (sid.shape.size() != 1 || data.shape.empty() || sid.shape[0] != data.shape[0])
      return ctx.Error("segment_ids must be 1-D with one id per data row (data " + DimsToString(data.shape) + ", ids " +
                       DimsToString(sid.shape) + ")");
  } else {
    if (sid.shape.size() > data.shape.size()) return ctx.Error("segment_ids rank exceeds the data rank");
    for (size_t i = 0; i < sid.shape.size(); ++i)
      if (sid.shape[i] != data.shape[i])
        return ctx.Error("segment_ids shape " + DimsToString(sid.shape) + " is not a prefix of the data shape " +
                         DimsToString(data.shape));
    const Tensor& ns = ctx.input(2);
    if (ns.type != DType::kInt32) return ctx.Error(std::string("num_segments has type ") + DTypeName(ns.type) + ", expected INT32");
    if (!(ns.shape.empty() || (ns.shape.size() == 1 && ns.shape[0] == 1)))
      return ctx.Error("num_segments must be a scalar, got shape " + DimsToString(ns.shape));
  }
  bool known = ctx.IsConstantOrPersistent(sid) && (sorted || ctx.IsConstantOrPersistent(ctx.input(2)));
  if (!known) {
    ctx.SetOutputDynamic(0);
    return OkStatus();
  }
  SegGeom g;
  std::vector<int64_t> ids;
  TFG_RETURN_IF_ERROR(SegResolve(ctx, sorted, &g, &ids));
  return ctx.SetOutputShape(0, g.out);
}

template <typename T>
void SegReduce(SegKind k, const T* x, T* o, const std::vector<int64_t>& ids, const SegGeom& g) {
  T init = k == SegKind::kSum ? T(0) : k == SegKind::kProd ? T(1)
         : k == SegKind::kMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
  for (int64_t i = 0; i < g.segments * g.inner; ++i) o[i] = init;
  for (int64_t r = 0; r < g.rows; ++r) {
    const int64_t s = ids[r];
    if (s < 0) continue;
    T* dst = o + s * g.inner;
    const T* src = x + r * g.inner;
    for (int64_t j = 0; j < g.inner; ++j) {
      switch (k) {
        case SegKind::kSum: dst[j] = T(dst[j] + src[j]); break;
        case SegKind::kProd: dst[j] = T(dst[j] * src[j]); break;
        case SegKind::kMax: dst[j] = std::max(dst[j], src[j]); break;
        case SegKind::kMin: dst[j] = std::min(dst[j], src[j]); break;
      }
    }
  }
}

template <SegKind K, bool kSorted>
Status SegEval(OpContext& ctx) {
  SegGeom g;
  std::vector<int64_t> ids;
  TFG_RETURN_IF_ERROR(SegResolve(ctx, kSorted, &g, &ids));
  TFG_RETURN_IF_ERROR(SetOrCheckShape(ctx, 0, g.out));
  const Tensor& data = ctx.input(0);
  TFG_RETURN_IF_ERROR(CheckHasData(ctx, data, "data"));
  Tensor& out = ctx.output(0);
  if (data.type == DType::kFloat32) SegReduce<float>(K, data.as<float>(), out.as<float>(), ids, g);
  else SegReduce<int32_t>(K, data.as<int32_t>(), out.as<int32_t>(), ids, g);
  return OkStatus();
}

Status SegmentSumPrepare(OpContext& ctx) { return SegPrepareImpl(ctx, true); }
Status UnsortedPrepare(OpContext& ctx) { return SegPrepareImpl(ctx, false); }

// ---------------------------------------------------------------------------------------------
// TOPK_V2: input [..., n], k (INT32/INT16 scalar) -> values [..., k], indices [..., k] (INT32 or
// INT16). Largest first; equal values keep the lower index first. Dynamic unless k is constant.
// ---------------------------------------------------------------------------------------------
Status TopKResolve(OpContext& ctx, int64_t* k, Dims* os) {
  std::vector<int64_t> kv;
  TFG_RETURN_IF_ERROR(ReadInts(ctx, ctx.input(1), "k", &kv, true));
  if (kv.size() != 1) return ctx.Error("k must be a scalar");
  const Tensor& in = ctx.input(0);
  const int64_t n = in.shape.back();
  if (kv[0] < 0 || kv[0] > n)
    return ctx.Error("k " + std::to_string(kv[0]) + " out of range [0, " + std::to_string(n) + "]");
  *k = kv[0];
  *os = in.shape;
  os->back() = int32_t(kv[0]);
  return OkStatus();
}

Status TopKPrepare(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 2, 2, 2));
  if (!ctx.has_input(0) || !ctx.has_input(1)) return ctx.Error("missing input");
  const Tensor& in = ctx.input(0);
  const Tensor& k = ctx.input(1);
  const DType t = in.type;
  if (t != DType::kFloat32 && t != DType::kUInt8 && t != DType::kInt8 && t != DType::kInt16 && t != DType::kInt32 &&
      t != DType::kInt64)
    return ctx.Error(std::string("input type ") + DTypeName(t) + " is not supported");
  if (in.shape.empty()) return ctx.Error("input must have rank >= 1");
  if (k.type != DType::kInt32 && k.type != DType::kInt16)
    return ctx.Error(std::string("k has type ") + DTypeName(k.type) + ", expected INT32 or INT16");
  if (k.num_elements() != 1) return ctx.Error("k must be a scalar");
  TFG_RETURN_IF_ERROR(CheckSameType(ctx, ctx.output(0), in, "values", "input"));
  const DType it = ctx.output(1).type;
  if (it != DType::kInt32 && it != DType::kInt16)
    return ctx.Error(std::string("indices output has type ") + DTypeName(it) + ", expected INT32 or INT16");
  if (!ctx.IsConstantOrPersistent(k)) {
    ctx.SetOutputDynamic(0);
    ctx.SetOutputDynamic(1);
    return OkStatus();
  }
  int64_t kk = 0;
  Dims os;
  TFG_RETURN_IF_ERROR(TopKResolve(ctx, &kk, &os));
  TFG_RETURN_IF_ERROR(ctx.SetOutputShape(0, os));
  return ctx.SetOutputShape(1, os);
}

template <typename T>
void TopKT(const T* x, T* vals, Tensor& idx_out, int64_t rows, int64_t n, int64_t k) {
  std::vector<int32_t> order(static_cast<size_t>(n));
  for (int64_t r = 0; r < rows; ++r) {
    const T* row = x + r * n;
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int32_t a, int32_t b) {
      return row[a] > row[b] || (!(row[b] > row[a]) && a < b);
    });
    for (int64_t j = 0; j < k; ++j) {
      vals[r * k + j] = row[order[j]];
      if (idx_out.type == DType::kInt32) idx_out.as<int32_t>()[r * k + j] = order[j];
      else idx_out.as<int16_t>()[r * k + j] = int16_t(order[j]);
    }
  }
}

Status TopKEval(OpContext& ctx) {
  int64_t k = 0;
  Dims os;
  TFG_RETURN_IF_ERROR(TopKResolve(ctx, &k, &os));
  TFG_RETURN_IF_ERROR(SetOrCheckShape(ctx, 0, os));
  TFG_RETURN_IF_ERROR(SetOrCheckShape(ctx, 1, os));
  const Tensor& in = ctx.input(0);
  TFG_RETURN_IF_ERROR(CheckHasData(ctx, in, "input"));
  const int64_t n = in.shape.back();
  if (ctx.output(1).type == DType::kInt16 && n > 32768) return ctx.Error("INT16 indices cannot address the input");
  const int64_t rows = n == 0 ? 0 : in.num_elements() / n;
  Tensor& idx = ctx.output(1);
  switch (in.type) {
    case DType::kFloat32: TopKT(in.as<float>(), ctx.output(0).as<float>(), idx, rows, n, k); break;
    case DType::kUInt8: TopKT(in.as<uint8_t>(), ctx.output(0).as<uint8_t>(), idx, rows, n, k); break;
    case DType::kInt8: TopKT(in.as<int8_t>(), ctx.output(0).as<int8_t>(), idx, rows, n, k); break;
    case DType::kInt16: TopKT(in.as<int16_t>(), ctx.output(0).as<int16_t>(), idx, rows, n, k); break;
    case DType::kInt32: TopKT(in.as<int32_t>(), ctx.output(0).as<int32_t>(), idx, rows, n, k); break;
    default: TopKT(in.as<int64_t>(), ctx.output(0).as<int64_t>(), idx, rows, n, k); break;
  }
  return OkStatus();
}

// ---------------------------------------------------------------------------------------------
// UNIQUE: 1-D input -> y (unique values in order of first appearance; dynamic), idx (position of
// each input value in y; INT32 or INT64 per idx_out_type).
// ---------------------------------------------------------------------------------------------
struct UniqueParams {
  int idx_type = 2;
};

Status UniqueParse(const OptionsView& opts, Node& node) {
  auto p = std::make_shared<UniqueParams>();
  p->idx_type = opts.Get<int8_t>(0, 2);
  node.params = p;
  return OkStatus();
}

Status UniquePrepare(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(1, 1, 2, 2));
  if (!ctx.has_input(0)) return ctx.Error("missing input");
  const Tensor& in = ctx.input(0);
  const DType t = in.type;
  if (t != DType::kFloat32 && t != DType::kUInt8 && t != DType::kInt8 && t != DType::kInt16 && t != DType::kInt32 &&
      t != DType::kInt64)
    return ctx.Error(std::string("input type ") + DTypeName(t) + " is not supported");
  if (in.shape.size() != 1) return ctx.Error("input must be 1-D, got " + DimsToString(in.shape));
  TFG_RETURN_IF_ERROR(CheckSameType(ctx, ctx.output(0), in, "output", "input"));
  const DType it = ctx.output(1).type;
  if (it != DType::kInt32 && it != DType::kInt64)
    return ctx.Error(std::string("idx output has type ") + DTypeName(it) + ", expected INT32 or INT64");
  ctx.SetOutputDynamic(0);
  return ctx.SetOutputShape(1, in.shape);
}

template <typename T>
int64_t UniqueT(const T* x, int64_t n, T* y, Tensor& idx) {
  // Keyed by the value's bytes, so -0.0/0.0 and NaNs compare as TFLite's std::map<T> does: by
  // value (operator<). NaN never equals itself, so every NaN is a new entry.
  std::map<T, int64_t> seen;
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) {
    int64_t pos;
    const T v = x[i];
    if (v != v) {
      pos = count;
      y[count++] = v;
    } else {
      auto it = seen.find(v);
      if (it == seen.end()) {
        pos = count;
        seen.emplace(v, count);
        y[count++] = v;
      } else {
        pos = it->second;
      }
    }
    if (idx.type == DType::kInt32) idx.as<int32_t>()[i] = int32_t(pos);
    else idx.as<int64_t>()[i] = pos;
  }
  return count;
}

Status UniqueEval(OpContext& ctx) {
  const Tensor& in = ctx.input(0);
  TFG_RETURN_IF_ERROR(CheckHasData(ctx, in, "input"));
  TFG_RETURN_IF_ERROR(SetOrCheckShape(ctx, 1, in.shape));
  const int64_t n = in.num_elements();
  const size_t es = DTypeSize(in.type);
  std::vector<uint8_t> tmp(size_t(n) * es + 1);
  int64_t count = 0;
  Tensor& idx = ctx.output(1);
  switch (in.type) {
    case DType::kFloat32: count = UniqueT(in.as<float>(), n, reinterpret_cast<float*>(tmp.data()), idx); break;
    case DType::kUInt8: count = UniqueT(in.as<uint8_t>(), n, tmp.data(), idx); break;
    case DType::kInt8: count = UniqueT(in.as<int8_t>(), n, reinterpret_cast<int8_t*>(tmp.data()), idx); break;
    case DType::kInt16: count = UniqueT(in.as<int16_t>(), n, reinterpret_cast<int16_t*>(tmp.data()), idx); break;
    case DType::kInt32: count = UniqueT(in.as<int32_t>(), n, reinterpret_cast<int32_t*>(tmp.data()), idx); break;
    default: count = UniqueT(in.as<int64_t>(), n, reinterpret_cast<int64_t*>(tmp.data()), idx); break;
  }
  TFG_RETURN_IF_ERROR(SetOrCheckShape(ctx, 0, Dims{int32_t(count)}));
  Copy(ctx.output(0).data, tmp.data(), size_t(count) * es);
  return OkStatus();
}

}  // namespace

const OpImpl kOp_MATRIX_DIAG = {nullptr, MatrixDiagPrepare, MatrixDiagEval, nullptr, false};
const OpImpl kOp_MATRIX_SET_DIAG = {nullptr, MatrixSetDiagPrepare, MatrixSetDiagEval, nullptr, false};
const OpImpl kOp_BUCKETIZE = {BucketizeParse, BucketizePrepare, BucketizeEval, nullptr, false};
const OpImpl kOp_SEGMENT_SUM = {nullptr, SegmentSumPrepare, SegEval<SegKind::kSum, true>, nullptr, false};
const OpImpl kOp_UNSORTED_SEGMENT_SUM = {nullptr, UnsortedPrepare, SegEval<SegKind::kSum, false>, nullptr, false};
const OpImpl kOp_UNSORTED_SEGMENT_PROD = {nullptr, UnsortedPrepare, SegEval<SegKind::kProd, false>, nullptr, false};
const OpImpl kOp_UNSORTED_SEGMENT_MAX = {nullptr, UnsortedPrepare, SegEval<SegKind::kMax, false>, nullptr, false};
const OpImpl kOp_UNSORTED_SEGMENT_MIN = {nullptr, UnsortedPrepare, SegEval<SegKind::kMin, false>, nullptr, false};
const OpImpl kOp_TOPK_V2 = {nullptr, TopKPrepare, TopKEval, nullptr, false};
const OpImpl kOp_UNIQUE = {UniqueParse, UniquePrepare, UniqueEval, nullptr, false};

}  // namespace tflite_gpu
