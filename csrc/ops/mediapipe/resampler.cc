// Custom op "Resampler" (TensorFlow contrib / Addons resampler, which TFLite's GPU delegate takes
// as a custom op), float32. Semantics from its public definition (tf.contrib.resampler /
// tfa.image.resampler): bilinear sampling of data [B, H, W, C] at the points of warp
// [B, d1, ..., dn, 2], each point (x, y) in pixel units (x along W, y along H). Output
// [B, d1, ..., dn, C].
//
// For a point (x, y) strictly inside (-1, W) x (-1, H) (so a NaN point is outside): with
// fx = floor(x), fy = floor(y), cx = fx + 1, cy = fy + 1, dx = cx - x, dy = cy - y,
//   out = dx dy p(fx, fy) + (1 - dx)(1 - dy) p(cx, cy) + dx (1 - dy) p(fx, cy) + (1 - dx) dy p(cx, fy)
// summed in that order (each weight the product of its two factors, then times the pixel), where
// p reads 0 outside the image (the data is zero-padded by one pixel, so the sampled signal fades
// to 0 across the border). Any other point gives 0 in every channel. The batch of data and warp
// must agree. Custom options are not read (the op has none).
//
// The fast kernel computes each point's four weights once and runs over the channels; the
// reference kernel evaluates the formula per channel as written. Same float operations in the
// same order: identical results.
#include <cmath>
#include <cstring>

#include "ops/op_registry.h"
#include "runtime/thread_pool.h"

namespace tflite_gpu {
namespace {

Status ParseResampler(const OptionsView&, Node&) { return OkStatus(); }

Status PrepareResampler(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 2, 1, 1));
  if (!ctx.has_input(0) || !ctx.has_input(1)) return ctx.Error("an input is omitted");
  const Tensor& data = ctx.input(0);
  const Tensor& warp = ctx.input(1);
  TFG_RETURN_IF_ERROR(ctx.CheckType(data, DType::kFloat32, "the data input"));
  TFG_RETURN_IF_ERROR(ctx.CheckType(warp, DType::kFloat32, "the warp input"));
  TFG_RETURN_IF_ERROR(ctx.CheckType(ctx.output(0), DType::kFloat32, "the output"));
  if (data.shape.size() != 4)
    return ctx.Error("the data input must have shape [batch, height, width, channels], got " + DimsToString(data.shape));
  if (warp.shape.size() < 2 || warp.shape.back() != 2)
    return ctx.Error("the warp input must have shape [batch, ..., 2] ((x, y) points), got " + DimsToString(warp.shape));
  if (warp.shape[0] != data.shape[0])
    return ctx.Error("the data batch (" + std::to_string(data.shape[0]) + ") and the warp batch (" +
                     std::to_string(warp.shape[0]) + ") differ");
  Dims os(warp.shape.begin(), warp.shape.end() - 1);
  os.push_back(data.shape[3]);
  if (NumElements(os) < 0) return ctx.Error("the output " + DimsToString(os) + " is too large");
  return ctx.SetOutputShape(0, os);
}

struct Geometry {
  int64_t points;  // B * d1 * ... * dn
  int64_t per_batch;
  int h, w, c;
};

Geometry Geom(OpContext& ctx) {
  const Tensor& data = ctx.input(0);
  Geometry g;
  g.points = ctx.input(1).num_elements() / 2;
  g.per_batch = data.shape[0] > 0 ? g.points / data.shape[0] : 0;
  g.h = data.shape[1];
  g.w = data.shape[2];
  g.c = data.shape[3];
  return g;
}

inline bool Inside(float x, float y, int w, int h) {
  return x > -1.0f && y > -1.0f && x < float(w) && y < float(h);
}

Status EvalResampler(OpContext& ctx) {
  const Geometry g = Geom(ctx);
  const float* data = ctx.input(0).as<float>();
  const float* warp = ctx.input(1).as<float>();
  float* out = ctx.output(0).as<float>();
  const size_t c = size_t(g.c);
  const size_t batch_stride = size_t(g.h) * size_t(g.w) * c;
  ParallelFor(ctx.pool(), g.points, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      float* o = out + size_t(p) * c;
      const float x = warp[2 * p], y = warp[2 * p + 1];
      if (!Inside(x, y, g.w, g.h)) {
        if (c) std::memset(o, 0, c * sizeof(float));
        continue;
      }
      const float* img = data + size_t(p / g.per_batch) * batch_stride;
      const int fx = int(std::floor(x)), fy = int(std::floor(y));
      const int cx = fx + 1, cy = fy + 1;
      const float dx = float(cx) - x, dy = float(cy) - y;
      const float w_ff = dx * dy, w_cc = (1.0f - dx) * (1.0f - dy);
      const float w_fc = dx * (1.0f - dy), w_cf = (1.0f - dx) * dy;
      // The four corners: a null row pointer stands for a pixel outside (reads 0).
      auto px = [&](int xx, int yy) -> const float* {
        return (xx >= 0 && yy >= 0 && xx < g.w && yy < g.h) ? img + (size_t(yy) * size_t(g.w) + size_t(xx)) * c
                                                             : nullptr;
      };
      const float* ff = px(fx, fy);
      const float* cc = px(cx, cy);
      const float* fc = px(fx, cy);
      const float* cf = px(cx, fy);
      for (size_t ch = 0; ch < c; ++ch) {
        const float a = w_ff * (ff ? ff[ch] : 0.0f);
        const float b = w_cc * (cc ? cc[ch] : 0.0f);
        const float d = w_fc * (fc ? fc[ch] : 0.0f);
        const float e = w_cf * (cf ? cf[ch] : 0.0f);
        o[ch] = a + b + d + e;
      }
    }
  }, MinChunkFor(4 * int64_t(g.c)));  // four taps a channel
  return OkStatus();
}

Status EvalResamplerRef(OpContext& ctx) {
  const Geometry g = Geom(ctx);
  const float* data = ctx.input(0).as<float>();
  const float* warp = ctx.input(1).as<float>();
  float* out = ctx.output(0).as<float>();
  for (int64_t p = 0; p < g.points; ++p) {
    const int64_t b = p / g.per_batch;
    auto point = [&](int xx, int yy, int ch) -> float {
      const bool in = xx >= 0 && yy >= 0 && xx <= g.w - 1 && yy <= g.h - 1;
      return in ? data[((b * g.h + yy) * g.w + xx) * g.c + ch] : 0.0f;
    };
    const float x = warp[2 * p], y = warp[2 * p + 1];
    for (int ch = 0; ch < g.c; ++ch) {
      float v = 0.0f;
      if (x > -1.0f && y > -1.0f && x < float(g.w) && y < float(g.h)) {
        const int fx = int(std::floor(x)), fy = int(std::floor(y));
        const int cx = fx + 1, cy = fy + 1;
        const float dx = float(cx) - x, dy = float(cy) - y;
        const float img_fxfy = dx * dy * point(fx, fy, ch);
        const float img_cxcy = (1.0f - dx) * (1.0f - dy) * point(cx, cy, ch);
        const float img_fxcy = dx * (1.0f - dy) * point(fx, cy, ch);
        const float img_cxfy = (1.0f - dx) * dy * point(cx, fy, ch);
        v = img_fxfy + img_cxcy + img_fxcy + img_cxfy;
      }
      out[p * g.c + ch] = v;
    }
  }
  return OkStatus();
}

}  // namespace

const OpImpl kOp_Resampler = {ParseResampler, PrepareResampler, EvalResampler, EvalResamplerRef, false};

}  // namespace tflite_gpu
