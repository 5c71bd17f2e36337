// REDUCE_MAX, REDUCE_MIN, REDUCE_PROD, REDUCE_ANY, REDUCE_ALL over the axes given by an int32 (or
// int64) tensor, TFLite semantics (reduce.cc):
//   * negative axes count from the end, repeated axes count once, out-of-range axes are errors;
//   * keep_dims keeps reduced dimensions as 1; a non-constant axis tensor makes the output dynamic;
//   * the accumulator starts at TFLite's init value: lowest() for MAX (so an empty reduction
//     gives -FLT_MAX, not -inf), max() for MIN, 1 for PROD, false for ANY, true for ALL; MAX/MIN
//     keep the current value unless the new one compares greater/less (NaN never enters);
//     integer PROD wraps.
//   * int8/uint8/int16 MAX/MIN compare raw values (the output shares the input's quantization).
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "ops/op_registry.h"
#include "ops/pooling/pool_common.h"
#include "runtime/thread_pool.h"

namespace tflite_gpu {
namespace {

constexpr uint8_t kReducerOptions = 27;

enum class R { kMax, kMin, kProd, kAny, kAll };

struct Params {
  bool keep_dims = false;
};

Status Parse(const OptionsView& opts, Node& node) {
  fb::Table t = pooling::OptionsTable(opts, kReducerOptions);
  auto p = std::make_shared<Params>();
  p->keep_dims = t.Bool(0, false);
  node.params = p;
  return OkStatus();
}

Status ResolveAxes(OpContext& ctx, std::vector<bool>* reduced) {
  const Tensor& in = ctx.input(0);
  const Tensor& ax = ctx.input(1);
  const int rank = int(in.shape.size());
  reduced->assign(rank, false);
  const int64_t n = ax.num_elements();
  if (n > 0 && !ax.data) return ctx.Error("axis tensor has no data");
  for (int64_t i = 0; i < n; ++i) {
    int64_t a = ax.type == DType::kInt32 ? int64_t(ax.as<int32_t>()[i]) : ax.as<int64_t>()[i];
    if (a < -rank || a >= rank)
      return ctx.Error("axis " + std::to_string(a) + " is out of range for an input of rank " + std::to_string(rank));
    if (a < 0) a += rank;
    (*reduced)[a] = true;
  }
  return OkStatus();
}

Status ShapeOutput(OpContext& ctx, std::vector<bool>* reduced) {
  TFG_RETURN_IF_ERROR(ResolveAxes(ctx, reduced));
  const Dims& s = ctx.input(0).shape;
  Dims out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (!(*reduced)[i]) out.push_back(s[i]);
    else if (ctx.node().P<Params>().keep_dims) out.push_back(1);
  }
  return ctx.SetOutputShape(0, out);
}

template <R K>
Status Prepare(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 2, 1, 1));
  const Tensor& in = ctx.input(0);
  const Tensor& ax = ctx.input(1);
  bool ok;
  const char* list;
  if (K == R::kAny || K == R::kAll) {
    ok = in.type == DType::kBool;
    list = "BOOL";
  } else if (K == R::kProd) {
    ok = in.type == DType::kFloat32 || in.type == DType::kInt32 || in.type == DType::kInt64;
    list = "FLOAT32, INT32, INT64";
  } else {
    ok = in.type == DType::kFloat32 || in.type == DType::kInt32 || in.type == DType::kInt64 ||
         in.type == DType::kInt8 || in.type == DType::kUInt8 || in.type == DType::kInt16;
    list = "FLOAT32, INT32, INT64, INT8, UINT8, INT16";
  }
  if (!ok) return ctx.Error(std::string("input type ") + DTypeName(in.type) + " is not supported (" + list + ")");
  if (ax.type != DType::kInt32 && ax.type != DType::kInt64)
    return ctx.Error(std::string("axis tensor must be INT32 or INT64, got ") + DTypeName(ax.type));
  if (ax.shape.size() > 1) return ctx.Error("axis tensor must be a scalar or 1-D, got shape " + DimsToString(ax.shape));
  const Tensor& out = ctx.output(0);
  if ((in.type == DType::kInt8 || in.type == DType::kUInt8 || in.type == DType::kInt16) && !in.quant.scale.empty() &&
      !out.quant.scale.empty() &&
      (in.quant.scale[0] != out.quant.scale[0] ||
       (in.quant.zero_point.empty() ? 0 : in.quant.zero_point[0]) != (out.quant.zero_point.empty() ? 0 : out.quant.zero_point[0])))
    return ctx.Error("quantized input and output must share scale and zero point");
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, in.type));
  if (ctx.IsConstantOrPersistent(ax)) {
    std::vector<bool> red;
    return ShapeOutput(ctx, &red);
  }
  ctx.SetOutputDynamic(0);
  return OkStatus();
}

template <typename T, bool kWide = std::is_integral<T>::value && (sizeof(T) >= 4)>
struct Wrap { using type = T; };
template <typename T>
struct Wrap<T, true> { using type = typename std::make_unsigned<T>::type; };

template <R K, typename T>
struct Op {
  using U = typename Wrap<T>::type;  // integer PROD wraps
  static T Init() {
    switch (K) {
      case R::kMax: return std::numeric_limits<T>::lowest();
      case R::kMin: return std::numeric_limits<T>::max();
      case R::kProd: return T(1);
      case R::kAny: return T(0);
      case R::kAll: return T(1);
    }
    return T(0);
  }
  static T F(T acc, T v) {
    switch (K) {
      case R::kMax: return v > acc ? v : acc;
      case R::kMin: return v < acc ? v : acc;
      case R::kProd: return T(U(acc) * U(v));
      case R::kAny: return T(acc || v);
      case R::kAll: return T(acc && v);
    }
    return acc;
  }
};

// Reference: walk the input in order, folding each element into its output.
template <R K, typename T>
void ReduceRef(const Tensor& in, const std::vector<bool>& red, T* out, int64_t num_out) {
  const Dims& s = in.shape;
  const int rank = int(s.size());
  std::vector<int64_t> ost(rank, 0);
  int64_t st = 1;
  for (int i = rank - 1; i >= 0; --i)
    if (!red[i]) { ost[i] = st; st *= s[i]; }
  for (int64_t i = 0; i < num_out; ++i) out[i] = Op<K, T>::Init();
  const int64_t total = in.num_elements();
  std::vector<int32_t> idx(rank, 0);
  const T* x = in.as<T>();
  for (int64_t f = 0; f < total; ++f) {
    int64_t o = 0;
    for (int d = 0; d < rank; ++d) o += idx[d] * ost[d];
    out[o] = Op<K, T>::F(out[o], x[f]);
    for (int d = rank - 1; d >= 0; --d) {
      if (++idx[d] < s[d]) break;
      idx[d] = 0;
    }
  }
}

// Fast: adjacent dims of the same kind merged, size-1 dims dropped, then a loop nest whose
// innermost level is contiguous; parallel over the outermost kept group.
template <R K, typename T>
struct Nest {
  std::vector<int64_t> size, ist, ost;
  std::vector<bool> red;
  const T* x = nullptr;
  T* out = nullptr;
  int m = 0;
  void Rec(int g, int64_t lo, int64_t hi, int64_t ioff, int64_t ooff) const {
    if (g == m - 1) {
      const T* ip = x + ioff;
      T* op = out + ooff;
      if (red[g]) {
        T a = op[0];
        for (int64_t i = lo; i < hi; ++i) a = Op<K, T>::F(a, ip[i]);
        op[0] = a;
      } else {
        for (int64_t i = lo; i < hi; ++i) op[i] = Op<K, T>::F(op[i], ip[i]);
      }
      return;
    }
    for (int64_t i = lo; i < hi; ++i) Rec(g + 1, 0, size[g + 1], ioff + i * ist[g], ooff + i * ost[g]);
  }
};

template <R K, typename T>
void ReduceFast(ThreadPool* pool, const Tensor& in, const std::vector<bool>& red_dims, T* out, int64_t num_out) {
  for (int64_t i = 0; i < num_out; ++i) out[i] = Op<K, T>::Init();
  const int64_t total = in.num_elements();
  if (total == 0) return;
  Nest<K, T> r;
  r.x = in.as<T>();
  r.out = out;
  for (size_t i = 0; i < in.shape.size(); ++i) {
    if (in.shape[i] == 1) continue;
    if (!r.size.empty() && r.red.back() == bool(red_dims[i])) {
      r.size.back() *= in.shape[i];
    } else {
      r.size.push_back(in.shape[i]);
      r.red.push_back(red_dims[i]);
    }
  }
  r.m = int(r.size.size());
  if (r.m == 0) {
    out[0] = Op<K, T>::F(out[0], r.x[0]);
    return;
  }
  r.ist.assign(r.m, 0);
  r.ost.assign(r.m, 0);
  int64_t is = 1, os = 1;
  for (int g = r.m - 1; g >= 0; --g) {
    r.ist[g] = is;
    is *= r.size[g];
    if (!r.red[g]) { r.ost[g] = os; os *= r.size[g]; }
  }
  if (!r.red[0] && total >= 32768 && pool && pool->num_threads() > 1) {
    const int64_t per = total / r.size[0];
    ParallelFor(pool, r.size[0], [&](int64_t a, int64_t b) { r.Rec(0, a, b, 0, 0); },
                MinChunkFor(per));
  } else {
    r.Rec(0, 0, r.size[0], 0, 0);
  }
}

template <R K, typename T>
void Run(OpContext& ctx, const std::vector<bool>& red, bool ref) {
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  if (ref) ReduceRef<K, T>(in, red, out.as<T>(), out.num_elements());
  else ReduceFast<K, T>(ctx.pool(), in, red, out.as<T>(), out.num_elements());
}

template <R K, bool kRef>
Status Eval(OpContext& ctx) {
  std::vector<bool> red;
  if (ctx.output(0).alloc == Allocation::kDynamic) TFG_RETURN_IF_ERROR(ShapeOutput(ctx, &red));
  else TFG_RETURN_IF_ERROR(ResolveAxes(ctx, &red));
  switch (ctx.input(0).type) {
    case DType::kFloat32: Run<K, float>(ctx, red, kRef); break;
    case DType::kInt32: Run<K, int32_t>(ctx, red, kRef); break;
    case DType::kInt64: Run<K, int64_t>(ctx, red, kRef); break;
    case DType::kInt8: Run<K, int8_t>(ctx, red, kRef); break;
    case DType::kUInt8: Run<K, uint8_t>(ctx, red, kRef); break;
    case DType::kBool: Run<K, uint8_t>(ctx, red, kRef); break;
    case DType::kInt16: Run<K, int16_t>(ctx, red, kRef); break;
    default: return ctx.Error("unsupported input type");
  }
  return OkStatus();
}

}  // namespace

const OpImpl kOp_REDUCE_MAX = {Parse, Prepare<R::kMax>, Eval<R::kMax, false>, Eval<R::kMax, true>, false};
const OpImpl kOp_REDUCE_MIN = {Parse, Prepare<R::kMin>, Eval<R::kMin, false>, Eval<R::kMin, true>, false};
const OpImpl kOp_REDUCE_PROD = {Parse, Prepare<R::kProd>, Eval<R::kProd, false>, Eval<R::kProd, true>, false};
const OpImpl kOp_REDUCE_ANY = {Parse, Prepare<R::kAny>, Eval<R::kAny, false>, Eval<R::kAny, true>, false};
const OpImpl kOp_REDUCE_ALL = {Parse, Prepare<R::kAll>, Eval<R::kAll, false>, Eval<R::kAll, true>, false};

namespace pooling {
bool ReduceKeepDimsOf(const Node& n) { return n.P<Params>().keep_dims; }
}  // namespace pooling

}  // namespace tflite_gpu
