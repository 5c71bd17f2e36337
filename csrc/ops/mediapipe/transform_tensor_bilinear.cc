// MediaPipe's custom op TransformTensorBilinear (face mesh with attention), float32: resamples an
// image through an affine matrix (semantics from MediaPipe's public
// mediapipe/util/tflite/operations/transform_tensor_bilinear.cc and the GPU delegate's option
// parser). Inputs: data [1, H, W, C], matrix (16 float32 values, MediaPipe's [1, 4, 4],
// row-major). Output [1, out_h, out_w, C].
//
// For every output pixel (x, y): (tx, ty) = (m0 x + m1 y + m2 0 + m3, m4 x + m5 y + m6 0 + m7).
// A point outside [0, W - 1] x [0, H - 1] gives 0 in every channel; otherwise bilinear
// interpolation of the four neighbours at floor(tx), floor(tx) + 1 (rows likewise), a neighbour
// outside the image reading as 0:
//   upper = (1 - fx) q(y0, x0) + fx q(y0, x0 + 1), lower likewise on row y0 + 1,
//   out = fy lower + (1 - fy) upper,   fx = tx - floor(tx), fy = ty - floor(ty).
// Version 1 (align_corners false): the matrix as given. Options: output_size [h, w]; mode, when
// present, must be "bilinear".
// Version 2 (align_corners true): the half-pixel correction m3 += 0.5 m0 + 0.5 m1 - 0.5,
// m7 += 0.5 m4 + 0.5 m5 - 0.5 (computed in double, as MediaPipe). Options: output_height,
// output_width.
// MediaPipe's CPU kernel reads the output size from the model's output tensor; the options name
// the same size (the GPU delegate reads them), so the options decide here. A NaN sample point is
// outside (MediaPipe's float -> int conversion of it is undefined). A batch other than 1 is
// refused (MediaPipe reads batch 0 only).
#include <cmath>
#include <cstring>

#include "ops/mediapipe/mp_options.h"
#include "ops/mediapipe/mp_params.h"
#include "runtime/thread_pool.h"

namespace tflite_gpu {
namespace {

constexpr const char* kOp = "TransformTensorBilinear";

using mp::TtbParams;

Status ParseTtb(const OptionsView& o, Node& n) {
  mp::Options m(kOp, o);
  TFG_RETURN_IF_ERROR(m.Open(true));
  auto p = std::make_shared<TtbParams>();
  p->version = n.version;
  if (p->version == 1) {
    std::string mode;
    bool has_mode = false;
    TFG_RETURN_IF_ERROR(m.String("mode", &has_mode, &mode));
    if (has_mode && mode != "bilinear") return m.Err("mode '" + mode + "' is not supported (only 'bilinear')");
    std::vector<int> hw;
    TFG_RETURN_IF_ERROR(m.IntVector("output_size", 2, 1, 1 << 24, &hw));
    p->out_h = hw[0];
    p->out_w = hw[1];
  } else {
    TFG_RETURN_IF_ERROR(m.Int("output_height", true, 1, 1 << 24, 0, &p->out_h));
    TFG_RETURN_IF_ERROR(m.Int("output_width", true, 1, 1 << 24, 0, &p->out_w));
  }
  n.params = p;
  return OkStatus();
}

Status PrepareTtb(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 2, 1, 1));
  if (!ctx.has_input(0) || !ctx.has_input(1)) return ctx.Error("an input is omitted");
  const TtbParams& p = ctx.node().P<TtbParams>();
  const Tensor& in = ctx.input(0);
  const Tensor& m = ctx.input(1);
  TFG_RETURN_IF_ERROR(ctx.CheckType(in, DType::kFloat32, "the data input"));
  if (in.shape.size() != 4 || in.shape[0] != 1)
    return ctx.Error("the data input must have shape [1, H, W, C], got " + DimsToString(in.shape));
  TFG_RETURN_IF_ERROR(ctx.CheckType(m, DType::kFloat32, "the matrix"));
  if (m.num_elements() != 16)
    return ctx.Error("the matrix must hold 16 values (a 4x4 matrix, [1, 4, 4]), got shape " + DimsToString(m.shape));
  if (int64_t(p.out_h) * p.out_w * std::max(1, in.shape[3]) > (int64_t(1) << 31))
    return ctx.Error("the output [1, " + std::to_string(p.out_h) + ", " + std::to_string(p.out_w) + ", " +
                     std::to_string(in.shape[3]) + "] is too large");
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, DType::kFloat32));
  return ctx.SetOutputShape(0, {1, p.out_h, p.out_w, in.shape[3]});
}

Status EvalTtb(OpContext& ctx) {
  const TtbParams& p = ctx.node().P<TtbParams>();
  const Tensor& in = ctx.input(0);
  const int ih = in.shape[1], iw = in.shape[2], c = in.shape[3];
  const float* src = in.as<float>();
  const float* m = ctx.input(1).as<float>();
  float* dst = ctx.output(0).as<float>();
  float xr[4] = {m[0], m[1], m[2], m[3]};
  float yr[4] = {m[4], m[5], m[6], m[7]};
  if (p.version == 2) {
    xr[3] += xr[0] * 0.5 + xr[1] * 0.5 - 0.5;
    yr[3] += yr[0] * 0.5 + yr[1] * 0.5 - 0.5;
  }
  const int oh = p.out_h, ow = p.out_w;
  const float xmax = float(iw - 1), ymax = float(ih - 1);
  auto read = [&](int64_t y, int64_t x, int ch) -> float {
    return (y < 0 || x < 0 || y >= ih || x >= iw) ? 0.f : src[(size_t(y) * size_t(iw) + size_t(x)) * size_t(c) + size_t(ch)];
  };
  ParallelFor(ctx.pool(), oh, [&](int64_t y0, int64_t y1) {
    for (int64_t oy = y0; oy < y1; ++oy)
      for (int ox = 0; ox < ow; ++ox) {
        const float fx_out = float(ox), fy_out = float(oy);
        const float tx = xr[0] * fx_out + xr[1] * fy_out + xr[2] * 0.f + xr[3] * 1.f;
        const float ty = yr[0] * fx_out + yr[1] * fy_out + yr[2] * 0.f + yr[3] * 1.f;
        float* o = dst + (size_t(oy) * size_t(ow) + size_t(ox)) * size_t(c);
        // Written so that NaN lands outside.
        if (!(tx >= 0.f && tx <= xmax && ty >= 0.f && ty <= ymax)) {
          std::memset(o, 0, size_t(c) * sizeof(float));
          continue;
        }
        const float flx = std::floor(tx), fly = std::floor(ty);
        const int64_t x0 = int64_t(flx), y0i = int64_t(fly);
        const float right = tx - flx, lower_w = ty - fly;
        for (int ch = 0; ch < c; ++ch) {
          const float q11 = read(y0i, x0, ch), q21 = read(y0i, x0 + 1, ch);
          const float q12 = read(y0i + 1, x0, ch), q22 = read(y0i + 1, x0 + 1, ch);
          const float upper = (1.0 - right) * q11 + right * q21;
          const float lower = (1.0 - right) * q12 + right * q22;
          o[ch] = lower_w * lower + (1.0 - lower_w) * upper;
        }
      }
  }, MinChunkFor(4 * int64_t(ow) * c));  // four taps an output value
  return OkStatus();
}

}  // namespace

const OpImpl kOp_TransformTensorBilinear = {ParseTtb, PrepareTtb, EvalTtb, nullptr, false};

}  // namespace tflite_gpu
