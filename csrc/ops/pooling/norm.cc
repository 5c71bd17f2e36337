// Normalisations along the last axis and CUMSUM, float32 (CUMSUM also int32/int64), TFLite
// semantics:
//   LOG_SOFTMAX y = x - max - log(sum(exp(x - max)));
//   L2_NORMALIZATION y = x / max(sqrt(sum x^2), 1e-6) over the last axis;
//   LOCAL_RESPONSE_NORMALIZATION (4-D) y = x * (bias + alpha * sum_{|k-c| <= radius} x_k^2)^-beta;
//   CUMSUM along `axis` (an int32 scalar tensor, negative counts from the end), optionally
//   exclusive (starts at 0) and/or reverse (sums from the end); integer sums wrap.
#include <cmath>
#include <limits>
#include <vector>

#include "ops/op_registry.h"
#include "ops/pooling/pool_common.h"
#include "runtime/thread_pool.h"

namespace tflite_gpu {
namespace {

constexpr uint8_t kL2NormOptions = 12;
constexpr uint8_t kLrnOptions = 13;
constexpr uint8_t kCumsumOptions = 102;

Status PrepareLastAxisFloat(OpContext& ctx, int max_rank) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(1, 1, 1, 1));
  const Tensor& in = ctx.input(0);
  if (in.type != DType::kFloat32)
    return ctx.Error(std::string("input type ") + DTypeName(in.type) + " is not supported (only FLOAT32)");
  if (in.shape.empty()) return ctx.Error("input must have rank >= 1, got a scalar");
  if (int(in.shape.size()) > max_rank)
    return ctx.Error("input rank " + std::to_string(in.shape.size()) + " is above " + std::to_string(max_rank));
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, DType::kFloat32));
  return ctx.SetOutputShape(0, in.shape);
}

void Rows(OpContext& ctx, int64_t* rows, int64_t* depth) {
  const Tensor& in = ctx.input(0);
  *depth = in.shape.back();
  *rows = *depth == 0 ? 0 : in.num_elements() / *depth;
}

template <typename F>
void ForRows(OpContext& ctx, bool ref, const F& row_fn) {
  int64_t rows, d;
  Rows(ctx, &rows, &d);
  if (ref) {
    row_fn(0, rows, d);
    return;
  }
  ParallelFor(ctx.pool(), rows, [&](int64_t b, int64_t e) { row_fn(b, e, d); },
              MinChunkFor(2 * d));
}

// ---- LOG_SOFTMAX ----

Status PrepareLogSoftmax(OpContext& ctx) { return PrepareLastAxisFloat(ctx, 1 << 20); }
template <bool kRef>
Status EvalLogSoftmax(OpContext& ctx) {
  const float* x = ctx.input(0).as<float>();
  float* y = ctx.output(0).as<float>();
  ForRows(ctx, kRef, [&](int64_t r0, int64_t r1, int64_t d) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* xi = x + r * d;
      float* yi = y + r * d;
      float mx = std::numeric_limits<float>::lowest();
      for (int64_t i = 0; i < d; ++i) mx = std::max(mx, xi[i]);
      float sum = 0.f;
      for (int64_t i = 0; i < d; ++i) sum += std::exp(xi[i] - mx);
      const float ls = std::log(sum);
      for (int64_t i = 0; i < d; ++i) yi[i] = xi[i] - mx - ls;
    }
  });
  return OkStatus();
}

// ---- L2_NORMALIZATION ----

struct L2Params {
  int act = 0;
};
Status ParseL2(const OptionsView& opts, Node& node) {
  fb::Table t = pooling::OptionsTable(opts, kL2NormOptions);
  auto p = std::make_shared<L2Params>();
  p->act = t.Scalar<int8_t>(0, 0);
  if (p->act < 0 || p->act > 5) return InvalidArgument("L2_NORMALIZATION: unknown fused activation " + std::to_string(p->act));
  node.params = p;
  return OkStatus();
}
Status PrepareL2(OpContext& ctx) { return PrepareLastAxisFloat(ctx, 1 << 20); }
template <bool kRef>
Status EvalL2(OpContext& ctx) {
  const float* x = ctx.input(0).as<float>();
  float* y = ctx.output(0).as<float>();
  ForRows(ctx, kRef, [&](int64_t r0, int64_t r1, int64_t d) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* xi = x + r * d;
      float* yi = y + r * d;
      float sq = 0.f;
      for (int64_t i = 0; i < d; ++i) sq += xi[i] * xi[i];
      const float norm = std::max(std::sqrt(sq), 1e-6f);
      for (int64_t i = 0; i < d; ++i) yi[i] = xi[i] / norm;
    }
  });
  return OkStatus();
}

// ---- LOCAL_RESPONSE_NORMALIZATION ----

struct LrnParams {
  int radius = 0;
  float bias = 0.f, alpha = 0.f, beta = 0.f;
};
Status ParseLrn(const OptionsView& opts, Node& node) {
  fb::Table t = pooling::OptionsTable(opts, kLrnOptions);
  auto p = std::make_shared<LrnParams>();
  p->radius = t.Scalar<int32_t>(0, 0);
  p->bias = t.Scalar<float>(1, 0.f);
  p->alpha = t.Scalar<float>(2, 0.f);
  p->beta = t.Scalar<float>(3, 0.f);
  if (p->radius < 0) return InvalidArgument("LOCAL_RESPONSE_NORMALIZATION: negative radius " + std::to_string(p->radius));
  node.params = p;
  return OkStatus();
}
Status PrepareLrn(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(PrepareLastAxisFloat(ctx, 4));
  if (ctx.input(0).shape.size() != 4)
    return ctx.Error("input must be 4-D, got shape " + DimsToString(ctx.input(0).shape));
  return OkStatus();
}
template <bool kRef>
Status EvalLrn(OpContext& ctx) {
  const LrnParams& p = ctx.node().P<LrnParams>();
  const float* x = ctx.input(0).as<float>();
  float* y = ctx.output(0).as<float>();
  ForRows(ctx, kRef, [&](int64_t r0, int64_t r1, int64_t d) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* xi = x + r * d;
      float* yi = y + r * d;
      for (int64_t c = 0; c < d; ++c) {
        const int64_t lo = std::max<int64_t>(0, c - p.radius);
        const int64_t hi = std::min<int64_t>(d - 1, c + p.radius);
        float acc = 0.f;
        for (int64_t k = lo; k <= hi; ++k) acc += xi[k] * xi[k] * p.alpha;
        yi[c] = xi[c] * std::pow(p.bias + acc, -p.beta);
      }
    }
  });
  return OkStatus();
}

// ---- CUMSUM ----

struct CumsumParams {
  bool exclusive = false, reverse = false;
};
Status ParseCumsum(const OptionsView& opts, Node& node) {
  fb::Table t = pooling::OptionsTable(opts, kCumsumOptions);
  auto p = std::make_shared<CumsumParams>();
  p->exclusive = t.Bool(0, false);
  p->reverse = t.Bool(1, false);
  node.params = p;
  return OkStatus();
}
Status PrepareCumsum(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 2, 1, 1));
  const Tensor& in = ctx.input(0);
  const Tensor& ax = ctx.input(1);
  if (in.type != DType::kFloat32 && in.type != DType::kInt32 && in.type != DType::kInt64)
    return ctx.Error(std::string("input type ") + DTypeName(in.type) + " is not supported (FLOAT32, INT32, INT64)");
  if (ax.type != DType::kInt32) return ctx.Error(std::string("axis must be INT32, got ") + DTypeName(ax.type));
  if (ax.num_elements() != 1) return ctx.Error("axis must hold one element, got shape " + DimsToString(ax.shape));
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, in.type));
  return ctx.SetOutputShape(0, in.shape);
}

template <typename T, bool kInt = std::is_integral<T>::value>
struct Acc { using type = T; };
template <typename T>
struct Acc<T, true> { using type = typename std::make_unsigned<T>::type; };  // integer sums wrap

template <typename T>
void Cumsum(ThreadPool* pool, const T* x, T* y, int64_t outer, int64_t n, int64_t inner, bool excl, bool rev, bool ref) {
  using A = typename Acc<T>::type;
  auto range = [&](int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; ++o) {
      const T* xb = x + o * n * inner;
      T* yb = y + o * n * inner;
      for (int64_t i = 0; i < inner; ++i) {
        A acc = A(0);
        for (int64_t k = 0; k < n; ++k) {
          const int64_t a = rev ? n - 1 - k : k;
          if (excl) {
            yb[a * inner + i] = T(acc);
            acc = A(acc + A(xb[a * inner + i]));
          } else {
            acc = A(acc + A(xb[a * inner + i]));
            yb[a * inner + i] = T(acc);
          }
        }
      }
    }
  };
  if (ref || !pool) range(0, outer);
  else ParallelFor(pool, outer, range, MinChunkFor(n * inner));
}

template <bool kRef>
Status EvalCumsum(OpContext& ctx) {
  const CumsumParams& p = ctx.node().P<CumsumParams>();
  const Tensor& in = ctx.input(0);
  const int rank = int(in.shape.size());
  int64_t axis = ctx.input(1).as<int32_t>()[0];
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank)
    return ctx.Error("axis " + std::to_string(ctx.input(1).as<int32_t>()[0]) + " is out of range for an input of rank " +
                     std::to_string(rank));
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i) outer *= in.shape[i];
  for (int i = int(axis) + 1; i < rank; ++i) inner *= in.shape[i];
  const int64_t n = in.shape[axis];
  if (outer * n * inner == 0) return OkStatus();
  switch (in.type) {
    case DType::kFloat32:
      Cumsum<float>(ctx.pool(), in.as<float>(), ctx.output(0).as<float>(), outer, n, inner, p.exclusive, p.reverse, kRef);
      break;
    case DType::kInt32:
      Cumsum<int32_t>(ctx.pool(), in.as<int32_t>(), ctx.output(0).as<int32_t>(), outer, n, inner, p.exclusive, p.reverse,
                      kRef);
      break;
    default:
      Cumsum<int64_t>(ctx.pool(), in.as<int64_t>(), ctx.output(0).as<int64_t>(), outer, n, inner, p.exclusive, p.reverse,
                      kRef);
  }
  return OkStatus();
}

}  // namespace

const OpImpl kOp_LOG_SOFTMAX = {nullptr, PrepareLogSoftmax, EvalLogSoftmax<false>, EvalLogSoftmax<true>, false};
const OpImpl kOp_L2_NORMALIZATION = {ParseL2, PrepareL2, EvalL2<false>, EvalL2<true>, false};
const OpImpl kOp_LOCAL_RESPONSE_NORMALIZATION = {ParseLrn, PrepareLrn, EvalLrn<false>, EvalLrn<true>, false};
const OpImpl kOp_CUMSUM = {ParseCumsum, PrepareCumsum, EvalCumsum<false>, EvalCumsum<true>, false};

namespace pooling {
void CumsumParamsOf(const Node& n, bool* exclusive, bool* reverse) {
  *exclusive = n.P<CumsumParams>().exclusive;
  *reverse = n.P<CumsumParams>().reverse;
}
}  // namespace pooling

}  // namespace tflite_gpu
