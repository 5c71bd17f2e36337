// MEAN and SUM over the axes given by an int32 (or int64) tensor, TFLite semantics:
//   * negative axes count from the end, repeated axes count once, out-of-range axes are errors;
//   * keep_dims keeps reduced dimensions as 1, otherwise they are removed (rank 0 possible);
//   * a non-constant axis tensor makes the output dynamic (shaped at eval);
//   * float32 accumulates in float and MEAN divides the sums by the element count (0/0 is NaN
//     as in TFLite's optimized kernel); SUM of int32/int64 wraps like TFLite's; MEAN of
//     int32/int64 sums in (wrapping) int64 and divides with truncation.
// Quantized INT8 / UINT8 / INT16 as TFLite's builtin kernels:
//   * MEAN of a 4-D input over axes {1, 2} with keep_dims (global average pooling), INT8 / UINT8: TFLite's
//     optimized Mean: bias = out_zp - round_half_away(in_zp * in_scale / out_scale) (float),
//     multiplier of in_scale / (count * out_scale); out = MBQM(sum) + bias, where the channels of
//     each 16-channel block take the NEON rounding (both steps half up) and the remaining channels
//     the scalar double rounding;
//   * otherwise reference_ops::QuantizedMeanOrSum: int32 sums, minus in_zp * count, times the
//     multiplier of in_scale / out_scale with 1 / count folded into it (TFLite's way), double
//     rounding, + out_zp.
//   * SUM (INT8, UINT8, INT16; LiteRT 2.3 rescales even when the scales agree): TFLite's
//     QuantizedMeanOrSum sum branch, in float: scale = in_scale / out_scale, bias = -in_zp * scale
//     * count (float, in that order); out = clamp(round_half_away(float(int32 sum) * scale + bias)
//     + out_zp) (measured against LiteRT builtin; the integer multiplier rule differs by a step).
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "ops/op_registry.h"
#include "ops/quant_common.h"
#include "ops/pooling/pool_common.h"
#include "runtime/thread_pool.h"

namespace tflite_gpu {
namespace {

constexpr uint8_t kReducerOptions = 27;

struct ReduceParams {
  bool keep_dims = false;
  bool mean = false;
};

template <bool kMean>
Status ParseReduce(const OptionsView& opts, Node& node) {
  fb::Table t = pooling::OptionsTable(opts, kReducerOptions);
  auto p = std::make_shared<ReduceParams>();
  p->keep_dims = t.Bool(0, false);
  p->mean = kMean;
  node.params = p;
  return OkStatus();
}

// Reads the axis tensor into a sorted-by-appearance, de-duplicated list of dimensions.
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
  const ReduceParams& p = ctx.node().P<ReduceParams>();
  const Dims& s = ctx.input(0).shape;
  Dims out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (!(*reduced)[i]) out.push_back(s[i]);
    else if (p.keep_dims) out.push_back(1);
  }
  return ctx.SetOutputShape(0, out);
}

struct QReduce {
  quant::TensorQuant in, out;
  int32_t mult = 0;
  int shift = 0;
};

Status PrepareReduce(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 2, 1, 1));
  const Tensor& in = ctx.input(0);
  const Tensor& ax = ctx.input(1);
  switch (in.type) {
    case DType::kFloat32: case DType::kInt32: case DType::kInt64: break;
    case DType::kInt8: case DType::kUInt8: case DType::kInt16: {
      const Tensor& out = ctx.output(0);
      if (out.type != in.type)
        return ctx.Error(std::string("output type ") + DTypeName(out.type) + " differs from the input type " +
                         DTypeName(in.type));
      quant::QuantRule rule;
      rule.zero_point_zero = in.type == DType::kInt16;
      auto q = std::make_shared<QReduce>();
      TFG_RETURN_IF_ERROR(quant::ReadQuant(ctx, in, "input", rule, &q->in));
      TFG_RETURN_IF_ERROR(quant::ReadQuant(ctx, out, "output", rule, &q->out));
      quant::QuantizeMultiplier(double(q->in.Scale()) / double(q->out.Scale()), &q->mult, &q->shift);
      ctx.node().user_data = q;
      break;
    }
    default:
      return ctx.Error(std::string("input type ") + DTypeName(in.type) +
                       " is not supported (FLOAT32, INT32, INT64, INT8, UINT8, INT16)");
  }
  if (ax.type != DType::kInt32 && ax.type != DType::kInt64)
    return ctx.Error(std::string("axis tensor must be INT32 or INT64, got ") + DTypeName(ax.type));
  if (ax.shape.size() > 1) return ctx.Error("axis tensor must be a scalar or 1-D, got shape " + DimsToString(ax.shape));
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, in.type));
  if (ctx.IsConstantOrPersistent(ax)) {
    std::vector<bool> red;
    return ShapeOutput(ctx, &red);
  }
  ctx.SetOutputDynamic(0);
  return OkStatus();
}

Status AxesForEval(OpContext& ctx, std::vector<bool>* reduced) {
  if (ctx.output(0).alloc == Allocation::kDynamic) return ShapeOutput(ctx, reduced);
  return ResolveAxes(ctx, reduced);
}

int64_t CountReduced(const Dims& s, const std::vector<bool>& red) {
  int64_t n = 1;
  for (size_t i = 0; i < s.size(); ++i)
    if (red[i]) n *= s[i];
  return n;
}

// ---- reference: walk the input in order, adding each element to its output ----
template <typename T, typename A>
void ReduceRef(const Tensor& in, const std::vector<bool>& red, A* acc, int64_t num_out) {
  const Dims& s = in.shape;
  const int rank = int(s.size());
  std::vector<int64_t> ost(rank, 0);
  int64_t st = 1;
  for (int i = rank - 1; i >= 0; --i)
    if (!red[i]) { ost[i] = st; st *= s[i]; }
  for (int64_t i = 0; i < num_out; ++i) acc[i] = A(0);
  const int64_t total = in.num_elements();
  std::vector<int32_t> idx(rank, 0);
  const T* x = in.as<T>();
  for (int64_t f = 0; f < total; ++f) {
    int64_t o = 0;
    for (int d = 0; d < rank; ++d) o += idx[d] * ost[d];
    acc[o] = acc[o] + A(x[f]);
    for (int d = rank - 1; d >= 0; --d) {
      if (++idx[d] < s[d]) break;
      idx[d] = 0;
    }
  }
}

// ---- fast: merged dimension groups, recursion down to a contiguous innermost loop ----
template <typename T, typename A>
struct GroupReducer {
  std::vector<int64_t> size, ist, ost;
  std::vector<bool> red;
  const T* x = nullptr;
  A* acc = nullptr;
  int m = 0;
  int64_t g0_lo = 0, g0_hi = 0, c_lo = 0, c_hi = 0;  // ranges of the first / last group

  void Rec(int g, int64_t ioff, int64_t ooff) const {
    int64_t lo = 0, hi = size[g];
    if (g == 0) { lo = g0_lo; hi = g0_hi; }
    if (g == m - 1) {
      lo = std::max(lo, c_lo);
      hi = std::min(hi, c_hi);
      const T* ip = x + ioff;
      A* op = acc + ooff;
      if (red[g]) {
        A s = op[0];
        int64_t i = lo;
        if (std::is_floating_point<A>::value && hi - lo >= 32) {
          A part[8] = {0, 0, 0, 0, 0, 0, 0, 0};
          for (; i + 8 <= hi; i += 8)
            for (int k = 0; k < 8; ++k) part[k] += A(ip[i + k]);
          s += ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
        }
        for (; i < hi; ++i) s += A(ip[i]);
        op[0] = s;
      } else {
        for (int64_t i = lo; i < hi; ++i) op[i] += A(ip[i]);
      }
      return;
    }
    for (int64_t i = lo; i < hi; ++i) Rec(g + 1, ioff + i * ist[g], ooff + i * ost[g]);
  }
};

template <typename T, typename A>
void ReduceFast(ThreadPool* pool, const Tensor& in, const std::vector<bool>& red_dims, A* acc, int64_t num_out) {
  for (int64_t i = 0; i < num_out; ++i) acc[i] = A(0);
  const int64_t total = in.num_elements();
  if (total == 0) return;
  GroupReducer<T, A> r;
  r.x = in.as<T>();
  r.acc = acc;
  // Merge adjacent dims of the same kind, dropping size-1 dims.
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
  if (r.m == 0) {  // a single element
    acc[0] = A(r.x[0]);
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
  r.g0_lo = 0; r.g0_hi = r.size[0];
  r.c_lo = 0; r.c_hi = r.size[r.m - 1];
  const int threads = pool ? pool->num_threads() : 1;
  const bool first_kept = !r.red[0], last_kept = !r.red[r.m - 1];
  if (threads <= 1 || total < 32768 || r.m == 1) {
    r.Rec(0, 0, 0);
    return;
  }
  if (first_kept && (r.size[0] >= threads || !last_kept)) {
    const int64_t per = total / r.size[0];
    ParallelFor(pool, r.size[0], [&](int64_t a, int64_t b) {
      GroupReducer<T, A> w = r;
      w.g0_lo = a; w.g0_hi = b;
      w.Rec(0, 0, 0);
    }, MinChunkFor(per));
  } else if (last_kept) {
    const int64_t cols = r.size[r.m - 1];
    const int64_t per = total / cols;
    ParallelFor(pool, cols, [&](int64_t a, int64_t b) {
      GroupReducer<T, A> w = r;
      w.c_lo = a; w.c_hi = b;
      w.Rec(0, 0, 0);
    }, std::max<int64_t>(16, MinChunkFor(per)));
  } else {
    r.Rec(0, 0, 0);
  }
}

template <typename T, typename A>
Status Run(OpContext& ctx, const std::vector<bool>& red, bool ref) {
  const ReduceParams& p = ctx.node().P<ReduceParams>();
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  const int64_t num_out = out.num_elements();
  const int64_t n = CountReduced(in.shape, red);
  T* y = out.as<T>();
  if (std::is_same<T, float>::value) {
    A* acc = reinterpret_cast<A*>(y);  // float accumulates in place
    if (ref) ReduceRef<T, A>(in, red, acc, num_out); else ReduceFast<T, A>(ctx.pool(), in, red, acc, num_out);
    if (p.mean)
      for (int64_t i = 0; i < num_out; ++i) y[i] = acc[i] / float(n);
    return OkStatus();
  }
  std::vector<A> acc(std::max<int64_t>(num_out, 1));
  if (ref) ReduceRef<T, A>(in, red, acc.data(), num_out); else ReduceFast<T, A>(ctx.pool(), in, red, acc.data(), num_out);
  for (int64_t i = 0; i < num_out; ++i) {
    if (p.mean) y[i] = n > 0 ? T(int64_t(acc[i]) / n) : T(0);
    else y[i] = T(acc[i]);
  }
  return OkStatus();
}

template <typename T>
Status RunQuant(OpContext& ctx, const std::vector<bool>& red, bool ref) {
  const ReduceParams& p = ctx.node().P<ReduceParams>();
  const QReduce& q = *ctx.node().U<QReduce>();
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  const int64_t num_out = out.num_elements();
  T* y = out.as<T>();
  const int32_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  std::vector<int64_t> acc(std::max<int64_t>(num_out, 1));
  if (ref) ReduceRef<T, int64_t>(in, red, acc.data(), num_out);
  else ReduceFast<T, int64_t>(ctx.pool(), in, red, acc.data(), num_out);
  for (int64_t i = 0; i < num_out; ++i) y[i] = T(0);
  for (int64_t d : in.shape)
    if (d == 0) return OkStatus();
  const int64_t n = CountReduced(in.shape, red);
  if (n == 0) return OkStatus();
  const bool spatial =
      p.mean && p.keep_dims && sizeof(T) == 1 && in.shape.size() == 4 && !red[0] && red[1] && red[2] && !red[3];
  if (spatial) {
    const float in_scale = q.in.Scale(), out_scale = q.out.Scale();
    float t = float(q.in.ZeroPoint()) * in_scale / out_scale;
    t = t > 0 ? t + 0.5f : t - 0.5f;
    const int32_t bias = q.out.ZeroPoint() - int32_t(t);
    const float real_scale = in_scale / (float(n) * out_scale);
    int32_t m;
    int s;
    quant::QuantizeMultiplier(double(real_scale), &m, &s);
    const int64_t depth = in.shape[3];
    const int64_t vec = depth / 16 * 16;
    for (int64_t i = 0; i < num_out; ++i) {
      const int32_t sum = int32_t(acc[i]);
      const int32_t v = (i % depth) < vec ? quant::MultiplyByQuantizedMultiplierHalfUp(sum, m, s)
                                          : quant::MultiplyByQuantizedMultiplier(sum, m, s);
      y[i] = T(std::min(std::max(v + bias, lo), hi));
    }
    return OkStatus();
  }
  if (!p.mean) {
    const float scale = q.in.Scale() / q.out.Scale();
    const float bias = float(-q.in.ZeroPoint()) * scale * float(n);
    for (int64_t i = 0; i < num_out; ++i) {
      const float v = float(int32_t(acc[i])) * scale + bias;
      const int32_t r = quant::RoundAwayToInt32(v) + q.out.ZeroPoint();
      y[i] = T(std::min(std::max(r, lo), hi));
    }
    return OkStatus();
  }
  int32_t m = q.mult;
  int s = q.shift;
  if (p.mean) {
    int sh = 63 - __builtin_clzll(uint64_t(n));
    sh = std::min(sh, 32);
    sh = std::min(sh, 31 + s);
    m = int32_t((int64_t(m) << sh) / n);
    s -= sh;
  }
  const int32_t zp_n = int32_t(uint32_t(q.in.ZeroPoint()) * uint32_t(uint64_t(n)));
  for (int64_t i = 0; i < num_out; ++i) {
    const int32_t shifted = int32_t(uint32_t(int32_t(acc[i])) - uint32_t(zp_n));
    const int32_t v = quant::MultiplyByQuantizedMultiplier(shifted, m, s) + q.out.ZeroPoint();
    y[i] = T(std::min(std::max(v, lo), hi));
  }
  return OkStatus();
}

template <bool kRef>
Status EvalReduce(OpContext& ctx) {
  std::vector<bool> red;
  TFG_RETURN_IF_ERROR(AxesForEval(ctx, &red));
  const ReduceParams& p = ctx.node().P<ReduceParams>();
  switch (ctx.input(0).type) {
    case DType::kFloat32: return Run<float, float>(ctx, red, kRef);
    case DType::kInt32:
      return p.mean ? Run<int32_t, uint64_t>(ctx, red, kRef) : Run<int32_t, uint32_t>(ctx, red, kRef);
    case DType::kInt64:
      return p.mean ? Run<int64_t, uint64_t>(ctx, red, kRef) : Run<int64_t, uint64_t>(ctx, red, kRef);
    case DType::kInt8: return RunQuant<int8_t>(ctx, red, kRef);
    case DType::kUInt8: return RunQuant<uint8_t>(ctx, red, kRef);
    case DType::kInt16: return RunQuant<int16_t>(ctx, red, kRef);
    default: return ctx.Error("unsupported input type");
  }
}

}  // namespace

const OpImpl kOp_MEAN = {ParseReduce<true>, PrepareReduce, EvalReduce<false>, EvalReduce<true>, false};
const OpImpl kOp_SUM = {ParseReduce<false>, PrepareReduce, EvalReduce<false>, EvalReduce<true>, false};

}  // namespace tflite_gpu
