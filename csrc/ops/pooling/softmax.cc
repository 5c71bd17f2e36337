// SOFTMAX (float32, any rank >= 1, over the last axis): y = exp((x - max) * beta) / sum, as
// TFLite computes it (the max is subtracted before beta is applied; beta defaults to 0).
#include <cmath>
#include <limits>

#include "ops/op_registry.h"
#include "ops/pooling/pool_common.h"
#include "ops/pooling/vec_math.h"
#include "runtime/thread_pool.h"

namespace tflite_gpu {
namespace {

constexpr uint8_t kSoftmaxOptions = 9;

struct SoftmaxParams {
  float beta = 0.f;
};

Status ParseSoftmax(const OptionsView& opts, Node& node) {
  fb::Table t = pooling::OptionsTable(opts, kSoftmaxOptions);
  auto p = std::make_shared<SoftmaxParams>();
  p->beta = t.Scalar<float>(0, 0.f);
  node.params = p;
  return OkStatus();
}

Status PrepareSoftmax(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(1, 1, 1, 1));
  const Tensor& in = ctx.input(0);
  if (in.type != DType::kFloat32)
    return ctx.Error(std::string("input type ") + DTypeName(in.type) + " is not supported (only FLOAT32)");
  if (in.shape.empty()) return ctx.Error("input must have rank >= 1, got a scalar");
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, DType::kFloat32));
  return ctx.SetOutputShape(0, in.shape);
}

void Rows(OpContext& ctx, int64_t* rows, int* depth) {
  const Tensor& in = ctx.input(0);
  *depth = in.shape.back();
  *rows = *depth == 0 ? 0 : in.num_elements() / *depth;
}

Status EvalSoftmaxRef(OpContext& ctx) {
  const float beta = ctx.node().P<SoftmaxParams>().beta;
  int64_t rows; int d;
  Rows(ctx, &rows, &d);
  const float* x = ctx.input(0).as<float>();
  float* y = ctx.output(0).as<float>();
  for (int64_t r = 0; r < rows; ++r) {
    const float* xi = x + r * d;
    float* yi = y + r * d;
    float mx = std::numeric_limits<float>::lowest();
    for (int i = 0; i < d; ++i) mx = std::max(mx, xi[i]);
    float sum = 0.f;
    for (int i = 0; i < d; ++i) sum += std::exp((xi[i] - mx) * beta);
    for (int i = 0; i < d; ++i) yi[i] = std::exp((xi[i] - mx) * beta) / sum;
  }
  return OkStatus();
}

Status EvalSoftmax(OpContext& ctx) {
  const float beta = ctx.node().P<SoftmaxParams>().beta;
  int64_t rows; int d;
  Rows(ctx, &rows, &d);
  const float* x = ctx.input(0).as<float>();
  float* y = ctx.output(0).as<float>();
  ParallelFor(ctx.pool(), rows, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* xi = x + r * d;
      float* yi = y + r * d;
      float part[8];
      for (float& m : part) m = std::numeric_limits<float>::lowest();
      int i = 0;
      for (; i + 8 <= d; i += 8)
        for (int k = 0; k < 8; ++k) part[k] = part[k] < xi[i + k] ? xi[i + k] : part[k];
      float mx = std::numeric_limits<float>::lowest();
      for (float m : part) mx = std::max(mx, m);
      for (; i < d; ++i) mx = std::max(mx, xi[i]);
      vmath::ExpShifted(xi, yi, d, mx, beta);
      float sum = 0.f;
      for (i = 0; i < d; ++i) sum += yi[i];
      const float inv = 1.f / sum;
      for (int i = 0; i < d; ++i) yi[i] *= inv;
    }
  }, std::max<int64_t>(1, 8192 / std::max(1, d)));
  return OkStatus();
}

}  // namespace

const OpImpl kOp_SOFTMAX = {ParseSoftmax, PrepareSoftmax, EvalSoftmax, EvalSoftmaxRef, false};

float pooling::SoftmaxBetaOf(const Node& n) { return n.P<SoftmaxParams>().beta; }

}  // namespace tflite_gpu
