// EXPAND_DIMS, SQUEEZE, RANK, BROADCAST_ARGS, ZEROS_LIKE, FILL, RANGE: shape-only ops and
// generators (their output is either a copy of the input under a new shape, or made from scalars).
#include <cmath>
#include <climits>

#include "ops/shape/shape_common.h"

namespace tflite_gpu {
namespace {

using namespace shape_ops;

constexpr int kMaxRank = 8;
constexpr int64_t kMaxElements = int64_t(1) << 34;  // generated outputs: refuse absurd sizes

Status CheckDims(const OpContext& ctx, const std::vector<int64_t>& v, const char* what, Dims* out) {
  out->clear();
  if (v.size() > size_t(kMaxRank))
    return ctx.Error(std::string(what) + " has " + std::to_string(v.size()) + " dimensions (at most " +
                     std::to_string(kMaxRank) + ")");
  int64_t n = 1;
  for (int64_t d : v) {
    if (d < 0 || d > INT32_MAX)
      return ctx.Error(std::string(what) + " has an invalid dimension " + std::to_string(d));
    n *= d;
    if (n > kMaxElements) return ctx.Error(std::string(what) + " describes a tensor that is too large");
    out->push_back(int32_t(d));
  }
  return OkStatus();
}

Status CopyInput(OpContext& ctx) {
  const Tensor& in = ctx.input(0);
  TFG_RETURN_IF_ERROR(CheckHasData(ctx, in, "input"));
  Tensor& out = ctx.output(0);
  if (out.data != in.data) Copy(out.data, in.data, size_t(in.num_elements()) * DTypeSize(in.type));
  return OkStatus();
}

// ---------------------------------------------------------------------------------------------
// EXPAND_DIMS: input, axis (scalar or 1-element INT32/INT64); axis in [-rank-1, rank].
// ---------------------------------------------------------------------------------------------
Status ExpandDimsResolve(OpContext& ctx, Dims* os) {
  const Tensor& in = ctx.input(0);
  std::vector<int64_t> a;
  TFG_RETURN_IF_ERROR(ReadInts(ctx, ctx.input(1), "axis", &a));
  if (a.size() != 1) return ctx.Error("axis must hold one value, got " + std::to_string(a.size()));
  const int rank = int(in.shape.size());
  int64_t axis = a[0] < 0 ? a[0] + rank + 1 : a[0];
  if (axis < 0 || axis > rank)
    return ctx.Error("axis " + std::to_string(a[0]) + " out of range [" + std::to_string(-rank - 1) + ", " +
                     std::to_string(rank) + "]");
  if (rank + 1 > kMaxRank) return ctx.Error("output rank exceeds " + std::to_string(kMaxRank));
  *os = in.shape;
  os->insert(os->begin() + axis, 1);
  return OkStatus();
}

Status ExpandDimsPrepare(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 2, 1, 1));
  if (!ctx.has_input(0) || !ctx.has_input(1)) return ctx.Error("missing input");
  const Tensor& in = ctx.input(0);
  TFG_RETURN_IF_ERROR(CheckMovable(ctx, in, "input"));
  TFG_RETURN_IF_ERROR(CheckSameType(ctx, ctx.output(0), in, "output", "input"));
  const Tensor& axis = ctx.input(1);
  if (axis.type != DType::kInt32 && axis.type != DType::kInt64)
    return ctx.Error(std::string("axis has type ") + DTypeName(axis.type) + ", expected INT32 or INT64");
  if (!ctx.IsConstantOrPersistent(axis)) {
    ctx.SetOutputDynamic(0);
    return OkStatus();
  }
  Dims os;
  TFG_RETURN_IF_ERROR(ExpandDimsResolve(ctx, &os));
  return ctx.SetOutputShape(0, os);
}

Status ExpandDimsEval(OpContext& ctx) {
  Dims os;
  TFG_RETURN_IF_ERROR(ExpandDimsResolve(ctx, &os));
  TFG_RETURN_IF_ERROR(SetOrCheckShape(ctx, 0, os));
  return CopyInput(ctx);
}

// ---------------------------------------------------------------------------------------------
// SQUEEZE: squeeze_dims (empty: every size-1 dimension); each listed dim must have size 1.
// ---------------------------------------------------------------------------------------------
struct SqueezeParams {
  std::vector<int32_t> dims;
};

Status SqueezeParse(const OptionsView& opts, Node& node) {
  auto p = std::make_shared<SqueezeParams>();
  p->dims = opts.GetInts(0);
  if (p->dims.size() > size_t(kMaxRank))
    return InvalidArgument("SQUEEZE: squeeze_dims has " + std::to_string(p->dims.size()) + " entries (at most 8)");
  node.params = p;
  return OkStatus();
}

Status SqueezePrepare(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(1, 1, 1, 1));
  if (!ctx.has_input(0)) return ctx.Error("missing input");
  const Tensor& in = ctx.input(0);
  TFG_RETURN_IF_ERROR(CheckMovable(ctx, in, "input"));
  TFG_RETURN_IF_ERROR(CheckSameType(ctx, ctx.output(0), in, "output", "input"));
  const int rank = int(in.shape.size());
  const auto& p = ctx.node().P<SqueezeParams>();
  std::vector<bool> drop(rank, false);
  if (p.dims.empty()) {
    for (int i = 0; i < rank; ++i) drop[i] = in.shape[i] == 1;
  } else {
    for (int32_t d : p.dims) {
      int a = d < 0 ? d + rank : d;
      if (a < 0 || a >= rank)
        return ctx.Error("squeeze dim " + std::to_string(d) + " out of range for input rank " + std::to_string(rank));
      if (in.shape[a] != 1)
        return ctx.Error("cannot squeeze dim " + std::to_string(d) + " of size " + std::to_string(in.shape[a]) +
                         " (input " + DimsToString(in.shape) + ")");
      drop[a] = true;
    }
  }
  Dims os;
  for (int i = 0; i < rank; ++i)
    if (!drop[i]) os.push_back(in.shape[i]);
  return ctx.SetOutputShape(0, os);
}

Status SqueezeEval(OpContext& ctx) { return CopyInput(ctx); }

// ---------------------------------------------------------------------------------------------
// RANK: INT32 scalar.
// ---------------------------------------------------------------------------------------------
Status RankPrepare(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(1, 1, 1, 1));
  if (!ctx.has_input(0)) return ctx.Error("missing input");
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, DType::kInt32));
  return ctx.SetOutputShape(0, Dims{});
}

Status RankEval(OpContext& ctx) {
  ctx.output(0).as<int32_t>()[0] = int32_t(ctx.input(0).shape.size());
  return OkStatus();
}

// ---------------------------------------------------------------------------------------------
// BROADCAST_ARGS: two 1-D shapes (INT32 or INT64, same type) -> their broadcast shape.
// ---------------------------------------------------------------------------------------------
Status BroadcastArgsPrepare(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 2, 1, 1));
  if (!ctx.has_input(0) || !ctx.has_input(1)) return ctx.Error("missing input");
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.type != DType::kInt32 && a.type != DType::kInt64)
    return ctx.Error(std::string("shapes must be INT32 or INT64, got ") + DTypeName(a.type));
  TFG_RETURN_IF_ERROR(CheckSameType(ctx, b, a, "s1", "s0"));
  TFG_RETURN_IF_ERROR(CheckSameType(ctx, ctx.output(0), a, "output", "s0"));
  if (a.shape.size() != 1 || b.shape.size() != 1)
    return ctx.Error("shapes must be 1-D, got " + DimsToString(a.shape) + " and " + DimsToString(b.shape));
  return ctx.SetOutputShape(0, Dims{std::max(a.shape[0], b.shape[0])});
}

Status BroadcastArgsEval(OpContext& ctx) {
  std::vector<int64_t> a, b;
  TFG_RETURN_IF_ERROR(ReadInts(ctx, ctx.input(0), "s0", &a));
  TFG_RETURN_IF_ERROR(ReadInts(ctx, ctx.input(1), "s1", &b));
  const size_t n = std::max(a.size(), b.size());
  Tensor& out = ctx.output(0);
  for (size_t i = 0; i < n; ++i) {
    // Right-aligned; a missing dimension counts as 1.
    int64_t x = i + a.size() >= n ? a[i + a.size() - n] : 1;
    int64_t y = i + b.size() >= n ? b[i + b.size() - n] : 1;
    int64_t r;
    if (x == y || y == 1) r = x;
    else if (x == 1) r = y;
    else
      return ctx.Error("shapes are not broadcastable: dimension " + std::to_string(x) + " vs " + std::to_string(y));
    if (out.type == DType::kInt32) out.as<int32_t>()[i] = int32_t(r);
    else out.as<int64_t>()[i] = r;
  }
  return OkStatus();
}

// ---------------------------------------------------------------------------------------------
// ZEROS_LIKE: zeros of the input's type and shape.
// ---------------------------------------------------------------------------------------------
Status ZerosLikePrepare(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(1, 1, 1, 1));
  if (!ctx.has_input(0)) return ctx.Error("missing input");
  const Tensor& in = ctx.input(0);
  TFG_RETURN_IF_ERROR(CheckMovable(ctx, in, "input"));
  TFG_RETURN_IF_ERROR(CheckSameType(ctx, ctx.output(0), in, "output", "input"));
  return ctx.SetOutputShape(0, in.shape);
}

Status ZerosLikeEval(OpContext& ctx) {
  Tensor& out = ctx.output(0);
  const size_t bytes = size_t(out.num_elements()) * DTypeSize(out.type);
  if (bytes) std::memset(out.data, 0, bytes);
  return OkStatus();
}

// ---------------------------------------------------------------------------------------------
// FILL: dims (1-D INT32/INT64), value (scalar) -> tensor of shape dims filled with value. The
// output is dynamic unless dims is constant. Quantized values need the output's quantization.
// ---------------------------------------------------------------------------------------------
Status FillResolve(OpContext& ctx, Dims* os) {
  std::vector<int64_t> d;
  TFG_RETURN_IF_ERROR(ReadInts(ctx, ctx.input(0), "dims", &d));
  return CheckDims(ctx, d, "dims", os);
}

Status FillPrepare(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 2, 1, 1));
  if (!ctx.has_input(0) || !ctx.has_input(1)) return ctx.Error("missing input");
  const Tensor& dims = ctx.input(0);
  const Tensor& value = ctx.input(1);
  if (dims.type != DType::kInt32 && dims.type != DType::kInt64)
    return ctx.Error(std::string("dims has type ") + DTypeName(dims.type) + ", expected INT32 or INT64");
  if (dims.shape.size() != 1) return ctx.Error("dims must be 1-D, got shape " + DimsToString(dims.shape));
  if (!value.shape.empty()) return ctx.Error("value must be a scalar, got shape " + DimsToString(value.shape));
  TFG_RETURN_IF_ERROR(CheckMovable(ctx, value, "value"));
  TFG_RETURN_IF_ERROR(CheckSameType(ctx, ctx.output(0), value, "output", "value"));
  if ((value.type == DType::kInt8 || value.type == DType::kInt16 || value.type == DType::kUInt8) &&
      (IsQuantized(value) || IsQuantized(ctx.output(0))) && !SameLegacyQuant(value, ctx.output(0)))
    return ctx.Error("quantized value and output must have the same scale and zero point");
  if (!ctx.IsConstantOrPersistent(dims)) {
    ctx.SetOutputDynamic(0);
    return OkStatus();
  }
  Dims os;
  TFG_RETURN_IF_ERROR(FillResolve(ctx, &os));
  return ctx.SetOutputShape(0, os);
}

Status FillEval(OpContext& ctx) {
  Dims os;
  TFG_RETURN_IF_ERROR(FillResolve(ctx, &os));
  TFG_RETURN_IF_ERROR(SetOrCheckShape(ctx, 0, os));
  const Tensor& value = ctx.input(1);
  TFG_RETURN_IF_ERROR(CheckHasData(ctx, value, "value"));
  Tensor& out = ctx.output(0);
  const size_t es = DTypeSize(out.type);
  const int64_t n = out.num_elements();
  BySize(es, [&](auto t) {
    using T = decltype(t);
    T v;
    std::memcpy(&v, value.data, sizeof(T));
    T* o = out.as<T>();
    for (int64_t i = 0; i < n; ++i) o[i] = v;
    return 0;
  });
  return OkStatus();
}

// ---------------------------------------------------------------------------------------------
// RANGE: start, limit, delta (scalars of one type: INT32, INT64, FLOAT32) -> 1-D sequence
// start, start+delta, ... (accumulated, as TFLite does). Dynamic unless all inputs are constant.
// ---------------------------------------------------------------------------------------------
template <typename T>
Status RangeSize(OpContext& ctx, int64_t* size) {
  const T start = ctx.input(0).as<T>()[0], limit = ctx.input(1).as<T>()[0], delta = ctx.input(2).as<T>()[0];
  if (delta == T(0)) return ctx.Error("delta must not be zero");
  if ((start > limit && delta > T(0)) || (start < limit && delta < T(0)))
    return ctx.Error("the sign of delta does not lead from start to limit");
  double n;
  if (std::is_integral<T>::value) {
    // |limit - start| may overflow T; compute in long double-free integer steps.
    const __int128 span = __int128(limit) - __int128(start);
    const __int128 d = __int128(delta);
    const __int128 as = span < 0 ? -span : span, ad = d < 0 ? -d : d;
    n = double((as + ad - 1) / ad);
  } else {
    n = std::ceil(std::fabs((double(limit) - double(start)) / double(delta)));
    if (!std::isfinite(n)) return ctx.Error("range size is not finite");
  }
  if (n > double(kMaxElements)) return ctx.Error("range of " + std::to_string(n) + " elements is too large");
  *size = int64_t(n);
  return OkStatus();
}

Status RangeResolve(OpContext& ctx, Dims* os) {
  for (int i = 0; i < 3; ++i) {
    TFG_RETURN_IF_ERROR(CheckHasData(ctx, ctx.input(i), i == 0 ? "start" : i == 1 ? "limit" : "delta"));
    if (ctx.input(i).num_elements() != 1) return ctx.Error("start, limit and delta must be scalars");
  }
  int64_t n = 0;
  switch (ctx.input(0).type) {
    case DType::kInt32: TFG_RETURN_IF_ERROR(RangeSize<int32_t>(ctx, &n)); break;
    case DType::kInt64: TFG_RETURN_IF_ERROR(RangeSize<int64_t>(ctx, &n)); break;
    default: TFG_RETURN_IF_ERROR(RangeSize<float>(ctx, &n)); break;
  }
  if (n > INT32_MAX) return ctx.Error("range is too large");
  *os = Dims{int32_t(n)};
  return OkStatus();
}

Status RangePrepare(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(3, 3, 1, 1));
  for (int i = 0; i < 3; ++i)
    if (!ctx.has_input(i)) return ctx.Error("missing input");
  const DType t = ctx.input(0).type;
  if (t != DType::kInt32 && t != DType::kInt64 && t != DType::kFloat32)
    return ctx.Error(std::string("unsupported type ") + DTypeName(t) + " (INT32, INT64 or FLOAT32)");
  TFG_RETURN_IF_ERROR(CheckSameType(ctx, ctx.input(1), ctx.input(0), "limit", "start"));
  TFG_RETURN_IF_ERROR(CheckSameType(ctx, ctx.input(2), ctx.input(0), "delta", "start"));
  for (int i = 0; i < 3; ++i)
    if (!ctx.input(i).shape.empty() && ctx.input(i).num_elements() != 1)
      return ctx.Error("start, limit and delta must be scalars, got shape " + DimsToString(ctx.input(i).shape));
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, t));
  if (!ctx.IsConstantOrPersistent(ctx.input(0)) || !ctx.IsConstantOrPersistent(ctx.input(1)) ||
      !ctx.IsConstantOrPersistent(ctx.input(2))) {
    ctx.SetOutputDynamic(0);
    return OkStatus();
  }
  Dims os;
  TFG_RETURN_IF_ERROR(RangeResolve(ctx, &os));
  return ctx.SetOutputShape(0, os);
}

template <typename T>
void RangeFill(OpContext& ctx) {
  T v = ctx.input(0).as<T>()[0];
  const T d = ctx.input(2).as<T>()[0];
  T* o = ctx.output(0).as<T>();
  const int64_t n = ctx.output(0).num_elements();
  for (int64_t i = 0; i < n; ++i) {
    o[i] = v;
    v = T(v + d);
  }
}

Status RangeEval(OpContext& ctx) {
  Dims os;
  TFG_RETURN_IF_ERROR(RangeResolve(ctx, &os));
  TFG_RETURN_IF_ERROR(SetOrCheckShape(ctx, 0, os));
  switch (ctx.input(0).type) {
    case DType::kInt32: RangeFill<int32_t>(ctx); break;
    case DType::kInt64: RangeFill<int64_t>(ctx); break;
    default: RangeFill<float>(ctx); break;
  }
  return OkStatus();
}

}  // namespace

const OpImpl kOp_EXPAND_DIMS = {nullptr, ExpandDimsPrepare, ExpandDimsEval, nullptr, false};
const OpImpl kOp_SQUEEZE = {SqueezeParse, SqueezePrepare, SqueezeEval, nullptr, false};
const OpImpl kOp_RANK = {nullptr, RankPrepare, RankEval, nullptr, false};
const OpImpl kOp_BROADCAST_ARGS = {nullptr, BroadcastArgsPrepare, BroadcastArgsEval, nullptr, false};
const OpImpl kOp_ZEROS_LIKE = {nullptr, ZerosLikePrepare, ZerosLikeEval, nullptr, false};
const OpImpl kOp_FILL = {nullptr, FillPrepare, FillEval, nullptr, false};
const OpImpl kOp_RANGE = {nullptr, RangePrepare, RangeEval, nullptr, false};

}  // namespace tflite_gpu
