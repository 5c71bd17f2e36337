// MediaPipe's custom op TransformLandmarks (face mesh with attention), float32: applies the upper
// 2x4 block of a 4x4 matrix to landmark (x, y) pairs (semantics from MediaPipe's public
// mediapipe/util/tflite/operations/transform_landmarks.cc). Inputs: landmarks, matrix (16 float32
// values, MediaPipe's [1, 4, 4], row-major). Output: the landmarks' shape.
//
//   x' = m0 * x + m1 * y + m2 * 0 + m3 * s,   y' = m4 * x + m5 * y + m6 * 0 + m7 * s,
//   z (when present) copied.
//
// Version 1: landmarks [1, H, W, C], C a multiple of `dimensions`; every (h, w) row holds
// C / dimensions landmarks. Options (FlexBuffer map, both optional as in MediaPipe):
// dimensions (2 or 3, default 3), scale s (!= 0, default 1).
// Version 2: landmarks [1, N, D], D (2 or 3) is the dimensions; no options (s = 1).
// A batch other than 1 is refused (MediaPipe transforms batch 0 only and leaves the rest unset).
#include <cstring>

#include "ops/mediapipe/mp_options.h"
#include "ops/mediapipe/mp_params.h"

namespace tflite_gpu {
namespace {

constexpr const char* kOp = "TransformLandmarks";

using mp::TlParams;

Status ParseTl(const OptionsView& o, Node& n) {
  auto p = std::make_shared<TlParams>();
  p->version = n.version;
  if (p->version == 1) {
    mp::Options m(kOp, o);
    TFG_RETURN_IF_ERROR(m.Open(false));
    TFG_RETURN_IF_ERROR(m.Int("dimensions", false, 2, 3, 3, &p->dims));
    TFG_RETURN_IF_ERROR(m.Float("scale", false, 1.f, &p->scale));
    if (p->scale == 0.f) return m.Err("scale must not be 0");
  }
  n.params = p;
  return OkStatus();
}

Status CheckMatrix(OpContext& ctx, const Tensor& m) {
  TFG_RETURN_IF_ERROR(ctx.CheckType(m, DType::kFloat32, "the matrix"));
  if (m.num_elements() != 16)
    return ctx.Error("the matrix must hold 16 values (a 4x4 matrix, [1, 4, 4]), got shape " + DimsToString(m.shape));
  return OkStatus();
}

Status PrepareTl(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 2, 1, 1));
  if (!ctx.has_input(0) || !ctx.has_input(1)) return ctx.Error("an input is omitted");
  TlParams& p = *static_cast<TlParams*>(ctx.node().params.get());
  const Tensor& in = ctx.input(0);
  TFG_RETURN_IF_ERROR(ctx.CheckType(in, DType::kFloat32, "the landmarks"));
  TFG_RETURN_IF_ERROR(CheckMatrix(ctx, ctx.input(1)));
  if (p.version == 1) {
    if (in.shape.size() != 4 || in.shape[0] != 1)
      return ctx.Error("version 1 takes landmarks of shape [1, H, W, C], got " + DimsToString(in.shape));
    if (in.shape[3] % p.dims != 0)
      return ctx.Error("the landmarks' last dimension " + std::to_string(in.shape[3]) + " is not a multiple of dimensions = " +
                       std::to_string(p.dims));
  } else {
    if (in.shape.size() != 3 || in.shape[0] != 1 || (in.shape[2] != 2 && in.shape[2] != 3))
      return ctx.Error("version 2 takes landmarks of shape [1, N, 2 or 3], got " + DimsToString(in.shape));
    p.dims = in.shape[2];
  }
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, DType::kFloat32));
  return ctx.SetOutputShape(0, in.shape);
}

Status EvalTl(OpContext& ctx) {
  const TlParams& p = ctx.node().P<TlParams>();
  const Tensor& in = ctx.input(0);
  const float* x = in.as<float>();
  const float* m = ctx.input(1).as<float>();
  float* y = ctx.output(0).as<float>();
  const float r0[4] = {m[0], m[1], m[2], m[3] * p.scale};
  const float r1[4] = {m[4], m[5], m[6], m[7] * p.scale};
  const int64_t count = std::max<int64_t>(0, in.num_elements()) / p.dims;
  for (int64_t i = 0; i < count; ++i) {
    const float* l = x + i * p.dims;
    float* o = y + i * p.dims;
    const float lx = l[0], ly = l[1];
    const float tx = r0[0] * lx + r0[1] * ly + r0[2] * 0.f + r0[3] * 1.f;
    const float ty = r1[0] * lx + r1[1] * ly + r1[2] * 0.f + r1[3] * 1.f;
    o[0] = tx;
    o[1] = ty;
    if (p.dims == 3) o[2] = l[2];
  }
  return OkStatus();
}

}  // namespace

const OpImpl kOp_TransformLandmarks = {ParseTl, PrepareTl, EvalTl, nullptr, false};

}  // namespace tflite_gpu
