// REDUCE_WINDOW (builtin 205): the TFLite form of StableHLO's reduce_window, no padding and no base
// dilation. As LiteRT's kernel (stablehlo_reduce_window.cc, TFLite semantic):
//   inputs: input (rank 1..6; BOOL, INT8, INT16, INT32, INT64, UINT8, FLOAT32, FLOAT64),
//     init_value (same type; its first element), window_shape, window_strides, window_dilations
//     (constant INT64, one value per input dimension); options: ReduceWindowOptions in
//     builtin_options_2, reduce_function ADD / MUL / MINIMUM / MAXIMUM / ALL / ANY.
//   Output dimension d: 0 if in[d] < dilated window (w[d] - 1) * dil[d] + 1, else
//     (in[d] - dilated) / stride[d] + 1. Each output element starts at init and folds in the
//     window's elements in row-major window order: accu = f(accu, x), with MAXIMUM
//     accu >= x ? accu : x, MINIMUM accu <= x ? accu : x (so NaN handling follows that order),
//     ALL / ANY the logical and / or stored as 0 / 1 in the element type, ADD / MUL in the element
//     type (integers wrap).
// Refused where LiteRT's kernel reads out of bounds or divides by zero: window vectors with fewer
// or more values than the rank, and window sizes, strides or dilations < 1.
#include <climits>
#include <cstring>
#include <functional>

#include "ops/op_registry.h"
#include "runtime/thread_pool.h"

namespace tflite_gpu {
namespace {

constexpr int kMaxRank = 6;
enum Fn : int32_t { kUnsupported = 0, kAdd = 1, kMul = 2, kMin = 3, kMax = 4, kAll = 5, kAny = 6 };
const char* FnName(int32_t f) {
  static const char* const kNames[] = {"UNSUPPORTED", "ADD", "MUL", "MINIMUM", "MAXIMUM", "ALL", "ANY"};
  return f >= 0 && f <= 6 ? kNames[f] : "unknown";
}

struct RwParams {
  int32_t fn = kUnsupported;
  bool has_options = false;
};

struct RwGeom {
  int rank = 0;
  int64_t in_shape[kMaxRank] = {}, window[kMaxRank] = {}, stride[kMaxRank] = {}, dil[kMaxRank] = {};
  int64_t out_shape[kMaxRank] = {};
  int64_t in_strides[kMaxRank] = {};
};

Status RwParse(const OptionsView& o, Node& node) {
  auto p = std::make_shared<RwParams>();
  // ReduceWindowOptions is member 20 of the BuiltinOptions2 union.
  if (o.type2 == 20 && o.table2.valid()) {
    p->has_options = true;
    p->fn = o.table2.Scalar<int32_t>(0, 0);
  } else if (o.type2 != 0) {
    return InvalidArgument("REDUCE_WINDOW: builtin_options_2 has union type " + std::to_string(o.type2) +
                           ", expected ReduceWindowOptions (20)");
  }
  node.params = p;  // the function is checked at prepare (allocate_tensors), as LiteRT refuses it there
  return OkStatus();
}

bool RwType(DType t) {
  switch (t) {
    case DType::kBool: case DType::kInt8: case DType::kInt16: case DType::kInt32: case DType::kInt64:
    case DType::kUInt8: case DType::kFloat32: case DType::kFloat64:
      return true;
    default:
      return false;
  }
}

Status ReadWindowVector(OpContext& ctx, int idx, const char* what, int rank, int64_t* out) {
  const Tensor& t = ctx.input(idx);
  if (!ctx.IsConstantOrPersistent(t)) return ctx.Error(std::string(what) + " must be a constant tensor");
  if (t.type != DType::kInt64)
    return ctx.Error(std::string(what) + " has type " + DTypeName(t.type) + ", expected INT64");
  if (t.num_elements() != rank || !t.data)
    return ctx.Error(std::string(what) + " has " + std::to_string(t.num_elements()) + " values (shape " +
                     DimsToString(t.shape) + "), expected one per input dimension (" + std::to_string(rank) + ")");
  for (int i = 0; i < rank; ++i) {
    out[i] = t.as<int64_t>()[i];
    if (out[i] < 1)
      return ctx.Error(std::string(what) + "[" + std::to_string(i) + "] is " + std::to_string(out[i]) +
                       "; it must be >= 1");
  }
  return OkStatus();
}

Status Resolve(OpContext& ctx, RwGeom* g) {
  const Tensor& in = ctx.input(0);
  g->rank = int(in.shape.size());
  const int rank = g->rank;
  TFG_RETURN_IF_ERROR(ReadWindowVector(ctx, 2, "window_shape", rank, g->window));
  TFG_RETURN_IF_ERROR(ReadWindowVector(ctx, 3, "window_strides", rank, g->stride));
  TFG_RETURN_IF_ERROR(ReadWindowVector(ctx, 4, "window_dilations", rank, g->dil));
  for (int i = 0; i < rank; ++i) {
    g->in_shape[i] = in.shape[i];
    const int64_t dw = (g->window[i] - 1) * g->dil[i] + 1;
    if (g->window[i] > INT32_MAX || g->dil[i] > INT32_MAX || dw > INT32_MAX)
      return ctx.Error("the dilated window of dimension " + std::to_string(i) + " overflows int32");
    g->out_shape[i] = g->in_shape[i] < dw ? 0 : (g->in_shape[i] - dw) / g->stride[i] + 1;
  }
  g->in_strides[rank - 1] = 1;
  for (int i = rank - 2; i >= 0; --i) g->in_strides[i] = g->in_strides[i + 1] * g->in_shape[i + 1];
  return OkStatus();
}

Status RwPrepare(OpContext& ctx) {
  const RwParams& p = ctx.node().P<RwParams>();
  if (p.fn < kAdd || p.fn > kAny)
    return ctx.Error("reduce_function " + std::string(FnName(p.fn)) + " (" + std::to_string(p.fn) +
                     ") is not supported (ADD, MUL, MINIMUM, MAXIMUM, ALL or ANY)" +
                     (p.has_options ? "" : "; the operator has no ReduceWindowOptions"));
  TFG_RETURN_IF_ERROR(ctx.CheckArity(5, 5, 1, 1));
  for (int i = 0; i < 5; ++i)
    if (!ctx.has_input(i)) return ctx.Error("input " + std::to_string(i) + " is missing");
  const Tensor& in = ctx.input(0);
  const Tensor& init = ctx.input(1);
  if (!RwType(in.type))
    return ctx.Error(std::string("input type ") + DTypeName(in.type) +
                     " is not supported (BOOL, INT8, INT16, INT32, INT64, UINT8, FLOAT32 or FLOAT64)");
  if (ctx.output(0).type != in.type)
    return ctx.Error(std::string("output has type ") + DTypeName(ctx.output(0).type) + " but input has type " +
                     DTypeName(in.type));
  if (init.type != in.type)
    return ctx.Error(std::string("init_value has type ") + DTypeName(init.type) + " but input has type " +
                     DTypeName(in.type));
  if (init.num_elements() < 1) return ctx.Error("init_value is empty (shape " + DimsToString(init.shape) + ")");
  if (in.shape.empty() || in.shape.size() > size_t(kMaxRank))
    return ctx.Error("input rank " + std::to_string(in.shape.size()) + " is not in 1.." + std::to_string(kMaxRank));
  RwGeom g;
  TFG_RETURN_IF_ERROR(Resolve(ctx, &g));
  return ctx.SetOutputShape(0, Dims(g.out_shape, g.out_shape + g.rank));
}

template <typename T> struct OpAdd { T operator()(T a, T b) const { return T(a + b); } };
template <typename T> struct OpMul { T operator()(T a, T b) const { return T(a * b); } };
template <typename T> struct OpMin { T operator()(T a, T b) const { return a <= b ? a : b; } };
template <typename T> struct OpMax { T operator()(T a, T b) const { return a >= b ? a : b; } };
template <typename T> struct OpAll { T operator()(T a, T b) const { return T(a && b); } };
template <typename T> struct OpAny { T operator()(T a, T b) const { return T(a || b); } };

// Fast kernel: the window is walked with precomputed element offsets (row-major window order).
template <typename T, typename Op>
void RunFast(const RwGeom& g, const T* in, T init, T* out, ThreadPool* pool) {
  const int rank = g.rank;
  int64_t n_out = 1, n_win = 1;
  for (int i = 0; i < rank; ++i) {
    n_out *= g.out_shape[i];
    n_win *= g.window[i];
  }
  if (n_out == 0) return;
  std::vector<int64_t> win_off(static_cast<size_t>(n_win));
  for (int64_t w = 0; w < n_win; ++w) {
    int64_t rem = w, off = 0;
    for (int i = rank - 1; i >= 0; --i) {
      off += (rem % g.window[i]) * g.dil[i] * g.in_strides[i];
      rem /= g.window[i];
    }
    win_off[size_t(w)] = off;
  }
  const Op op;
  ParallelFor(
      pool, n_out,
      [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o) {
          int64_t rem = o, base = 0;
          for (int i = rank - 1; i >= 0; --i) {
            base += (rem % g.out_shape[i]) * g.stride[i] * g.in_strides[i];
            rem /= g.out_shape[i];
          }
          const T* p = in + base;
          T acc = init;
          for (int64_t w = 0; w < n_win; ++w) acc = op(acc, p[win_off[size_t(w)]]);
          out[o] = acc;
        }
      },
      MinChunkFor(4 * n_win));  // index arithmetic per output: ~4 units a window element
}

// Reference: nested loops over output index and window index, each element addressed from its
// full multi-index.
template <typename T, typename Op>
void RunRef(const RwGeom& g, const T* in, T init, T* out) {
  const int rank = g.rank;
  int64_t n_out = 1, n_win = 1;
  for (int i = 0; i < rank; ++i) {
    n_out *= g.out_shape[i];
    n_win *= g.window[i];
  }
  const Op op;
  for (int64_t o = 0; o < n_out; ++o) {
    int64_t oi[kMaxRank];
    int64_t rem = o;
    for (int i = rank - 1; i >= 0; --i) {
      oi[i] = rem % g.out_shape[i];
      rem /= g.out_shape[i];
    }
    T acc = init;
    for (int64_t w = 0; w < n_win; ++w) {
      int64_t wi[kMaxRank];
      int64_t r2 = w;
      for (int i = rank - 1; i >= 0; --i) {
        wi[i] = r2 % g.window[i];
        r2 /= g.window[i];
      }
      int64_t flat = 0;
      for (int i = 0; i < rank; ++i) flat = flat * g.in_shape[i] + (oi[i] * g.stride[i] + wi[i] * g.dil[i]);
      acc = op(acc, in[flat]);
    }
    out[o] = acc;
  }
}

template <typename T>
void Dispatch(int32_t fn, const RwGeom& g, const T* in, T init, T* out, ThreadPool* pool, bool ref) {
  switch (fn) {
    case kAdd: ref ? RunRef<T, OpAdd<T>>(g, in, init, out) : RunFast<T, OpAdd<T>>(g, in, init, out, pool); return;
    case kMul: ref ? RunRef<T, OpMul<T>>(g, in, init, out) : RunFast<T, OpMul<T>>(g, in, init, out, pool); return;
    case kMin: ref ? RunRef<T, OpMin<T>>(g, in, init, out) : RunFast<T, OpMin<T>>(g, in, init, out, pool); return;
    case kMax: ref ? RunRef<T, OpMax<T>>(g, in, init, out) : RunFast<T, OpMax<T>>(g, in, init, out, pool); return;
    case kAll: ref ? RunRef<T, OpAll<T>>(g, in, init, out) : RunFast<T, OpAll<T>>(g, in, init, out, pool); return;
    default: ref ? RunRef<T, OpAny<T>>(g, in, init, out) : RunFast<T, OpAny<T>>(g, in, init, out, pool); return;
  }
}

template <typename T>
void RunTyped(OpContext& ctx, const RwGeom& g, bool ref) {
  T init;
  std::memcpy(&init, ctx.input(1).data, sizeof(T));
  Dispatch<T>(ctx.node().P<RwParams>().fn, g, ctx.input(0).as<T>(), init, ctx.output(0).as<T>(),
              ref ? nullptr : ctx.pool(), ref);
}

Status RwEvalImpl(OpContext& ctx, bool ref) {
  RwGeom g;
  TFG_RETURN_IF_ERROR(Resolve(ctx, &g));
  switch (ctx.input(0).type) {
    case DType::kBool: case DType::kInt8: RunTyped<int8_t>(ctx, g, ref); break;  // BOOL as int8, as TFLite
    case DType::kInt16: RunTyped<int16_t>(ctx, g, ref); break;
    case DType::kInt32: RunTyped<int32_t>(ctx, g, ref); break;
    case DType::kInt64: RunTyped<int64_t>(ctx, g, ref); break;
    case DType::kUInt8: RunTyped<uint8_t>(ctx, g, ref); break;
    case DType::kFloat32: RunTyped<float>(ctx, g, ref); break;
    case DType::kFloat64: RunTyped<double>(ctx, g, ref); break;
    default: return ctx.Error(std::string("unsupported input type ") + DTypeName(ctx.input(0).type));
  }
  return OkStatus();
}

Status RwEval(OpContext& ctx) { return RwEvalImpl(ctx, false); }
Status RwEvalRef(OpContext& ctx) { return RwEvalImpl(ctx, true); }

}  // namespace

const OpImpl kOp_REDUCE_WINDOW = {RwParse, RwPrepare, RwEval, RwEvalRef, false};

}  // namespace tflite_gpu
