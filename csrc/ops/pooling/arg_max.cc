// ARG_MAX and ARG_MIN, TFLite semantics: the axis tensor (int32 or int64, one element) may be negative;
// the output drops that dimension and has type output_type (INT32 or INT64; the option is
// required, as in TFLite); ties give the first index (strict '>' comparison, so NaN is never
// picked unless it is first; ARG_MIN likewise with a strict '<'). Inputs: FLOAT32, INT32, UINT8, INT8, BOOL. A non-constant axis
// makes the output dynamic.
#include <vector>

#include "ops/op_registry.h"
#include "ops/quant_common.h"
#include "ops/pooling/pool_common.h"
#include "runtime/thread_pool.h"

namespace tflite_gpu {
namespace {

constexpr uint8_t kArgMaxOptions = 40;
constexpr uint8_t kArgMinOptions = 57;

// Strict comparison: v beats the best so far (ties keep the first index).
template <bool kMin, typename T>
inline bool Beats(T v, T best) { return kMin ? v < best : v > best; }

struct ArgMaxParams {
  int output_type = 0;
};

template <bool kMin>
Status ParseArgMax(const OptionsView& opts, Node& node) {
  fb::Table t = pooling::OptionsTable(opts, kMin ? kArgMinOptions : kArgMaxOptions);
  auto p = std::make_shared<ArgMaxParams>();
  p->output_type = t.Scalar<int8_t>(0, 0);
  node.params = p;
  return OkStatus();
}

Status ReadAxis(OpContext& ctx, int* axis) {
  const Tensor& in = ctx.input(0);
  const Tensor& ax = ctx.input(1);
  if (!ax.data) return ctx.Error("axis tensor has no data");
  int64_t a = ax.type == DType::kInt32 ? int64_t(ax.as<int32_t>()[0]) : ax.as<int64_t>()[0];
  const int rank = int(in.shape.size());
  if (a < -rank || a >= rank)
    return ctx.Error("axis " + std::to_string(a) + " is out of range for an input of rank " + std::to_string(rank));
  if (a < 0) a += rank;
  if (in.shape[a] == 0 && in.num_elements() == 0) {
    Dims o;
    for (int i = 0; i < rank; ++i)
      if (i != a) o.push_back(in.shape[i]);
    if (NumElements(o) > 0) return ctx.Error("cannot take the arg max/min over an empty axis");
  }
  *axis = int(a);
  return OkStatus();
}

Status ShapeOutput(OpContext& ctx, int* axis) {
  TFG_RETURN_IF_ERROR(ReadAxis(ctx, axis));
  const Dims& s = ctx.input(0).shape;
  Dims o;
  for (int i = 0; i < int(s.size()); ++i)
    if (i != *axis) o.push_back(s[i]);
  return ctx.SetOutputShape(0, o);
}

Status PrepareArgMax(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(quant::ValidateNodeQuant(ctx));
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 2, 1, 1));
  const ArgMaxParams& p = ctx.node().P<ArgMaxParams>();
  const Tensor& in = ctx.input(0);
  const Tensor& ax = ctx.input(1);
  switch (in.type) {
    case DType::kFloat32: case DType::kInt32: case DType::kUInt8: case DType::kInt8: case DType::kBool: break;
    default:
      return ctx.Error(std::string("input type ") + DTypeName(in.type) +
                       " is not supported (FLOAT32, INT32, UINT8, INT8, BOOL)");
  }
  DType ot = static_cast<DType>(p.output_type);
  if (ot != DType::kInt32 && ot != DType::kInt64)
    return ctx.Error("output_type must be INT32 or INT64, got " +
                     std::string(DTypeKnown(p.output_type) ? DTypeName(ot) : std::to_string(p.output_type).c_str()));
  if (ax.type != DType::kInt32 && ax.type != DType::kInt64)
    return ctx.Error(std::string("axis tensor must be INT32 or INT64, got ") + DTypeName(ax.type));
  if (ax.num_elements() != 1)
    return ctx.Error("axis tensor must hold exactly one element, got shape " + DimsToString(ax.shape));
  if (in.shape.empty()) return ctx.Error("input must have rank >= 1");
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, ot));
  if (ctx.IsConstantOrPersistent(ax)) {
    int axis;
    return ShapeOutput(ctx, &axis);
  }
  ctx.SetOutputDynamic(0);
  return OkStatus();
}

template <bool kMin, typename T, typename I>
void ArgMaxKernel(ThreadPool* pool, const T* x, I* y, int64_t outer, int64_t n, int64_t inner, bool ref) {
  if (ref) {
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        T best = x[o * n * inner + i];
        I idx = 0;
        for (int64_t a = 1; a < n; ++a) {
          T v = x[(o * n + a) * inner + i];
          if (Beats<kMin>(v, best)) { best = v; idx = I(a); }
        }
        y[o * inner + i] = idx;
      }
    return;
  }
  if (inner == 1) {
    ParallelFor(pool, outer, [&](int64_t o0, int64_t o1) {
      for (int64_t o = o0; o < o1; ++o) {
        const T* row = x + o * n;
        T best = row[0];
        int64_t idx = 0;
        for (int64_t a = 1; a < n; ++a)
          if (Beats<kMin>(row[a], best)) { best = row[a]; idx = a; }
        y[o] = I(idx);
      }
    }, MinChunkFor(n));
    return;
  }
  // Axis in the middle: keep a row of running maxima over the contiguous inner dimension.
  ParallelFor(pool, outer, [&](int64_t o0, int64_t o1) {
    std::vector<T> best(inner);
    for (int64_t o = o0; o < o1; ++o) {
      const T* base = x + o * n * inner;
      I* out = y + o * inner;
      for (int64_t i = 0; i < inner; ++i) { best[i] = base[i]; out[i] = 0; }
      for (int64_t a = 1; a < n; ++a) {
        const T* row = base + a * inner;
        for (int64_t i = 0; i < inner; ++i)
          if (Beats<kMin>(row[i], best[i])) { best[i] = row[i]; out[i] = I(a); }
      }
    }
  }, MinChunkFor(n * inner));
}

template <bool kMin, typename T>
void Dispatch(OpContext& ctx, int64_t outer, int64_t n, int64_t inner, bool ref) {
  const T* x = ctx.input(0).as<T>();
  Tensor& out = ctx.output(0);
  if (out.type == DType::kInt32)
    ArgMaxKernel<kMin, T, int32_t>(ctx.pool(), x, out.as<int32_t>(), outer, n, inner, ref);
  else
    ArgMaxKernel<kMin, T, int64_t>(ctx.pool(), x, out.as<int64_t>(), outer, n, inner, ref);
}

template <bool kMin, bool kRef>
Status EvalArgMax(OpContext& ctx) {
  int axis;
  if (ctx.output(0).alloc == Allocation::kDynamic) {
    TFG_RETURN_IF_ERROR(ShapeOutput(ctx, &axis));
  } else {
    TFG_RETURN_IF_ERROR(ReadAxis(ctx, &axis));
  }
  const Tensor& in = ctx.input(0);
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i) outer *= in.shape[i];
  for (int i = axis + 1; i < int(in.shape.size()); ++i) inner *= in.shape[i];
  const int64_t n = in.shape[axis];
  if (outer * inner == 0) return OkStatus();
  if (n == 0) return ctx.Error("cannot take the arg max/min over an empty axis");
  switch (in.type) {
    case DType::kFloat32: Dispatch<kMin, float>(ctx, outer, n, inner, kRef); break;
    case DType::kInt32: Dispatch<kMin, int32_t>(ctx, outer, n, inner, kRef); break;
    case DType::kUInt8: Dispatch<kMin, uint8_t>(ctx, outer, n, inner, kRef); break;
    case DType::kInt8: Dispatch<kMin, int8_t>(ctx, outer, n, inner, kRef); break;
    case DType::kBool: Dispatch<kMin, uint8_t>(ctx, outer, n, inner, kRef); break;
    default: return ctx.Error("unsupported input type");
  }
  return OkStatus();
}

}  // namespace

const OpImpl kOp_ARG_MAX = {ParseArgMax<false>, PrepareArgMax, EvalArgMax<false, false>, EvalArgMax<false, true>, false};
const OpImpl kOp_ARG_MIN = {ParseArgMax<true>, PrepareArgMax, EvalArgMax<true, false>, EvalArgMax<true, true>, false};

}  // namespace tflite_gpu
