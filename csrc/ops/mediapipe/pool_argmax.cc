// MediaPipe's custom ops MaxPoolingWithArgmax2D and MaxUnpooling2D (hand/selfie models), float32.
//
// Options: custom_options hold a TfLitePoolParams struct (little-endian int32 fields, in order:
// padding (1 SAME, 2 VALID), stride_width, stride_height, filter_width, filter_height, activation,
// then computed padding values that are ignored); at least the first 6 fields must be present.
//
// MaxPoolingWithArgmax2D: input [N, H, W, C] -> output, indices (both float32, same shape):
// max pooling with TensorFlow's output sizes (SAME: ceil(H / s); VALID: (H - f + s) / s) and
// TFLite's padding ((out - 1) * s + f - H) / 2 clamped at 0. The window is clipped to the input;
// the first maximum in (y, x) order wins; output = activation(max); indices = the winner's
// position inside the filter window, fy * filter_width + fx, plus 0.1 (so a float->int
// truncation recovers it).
// MaxUnpooling2D: input, indices [N, H, W, C] -> output [N, H * filter_height, W * filter_width, C],
// zero except: each input value is written at (y * s - pad + idx / fw, x * s - pad + idx % fw),
// idx = int(indices), pad computed as above with the roles of input and output swapped; later
// writes win; positions outside the output are skipped.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "ops/mediapipe/mp_params.h"
#include "ops/op_registry.h"

namespace tflite_gpu {
namespace {

using mp::MpPoolParams;

Status ParseMpPool(const OptionsView& o, Node& n) {
  const char* op = n.op ? n.op->name : "op";
  if (!o.custom || o.custom_size < 24)
    return InvalidArgument(std::string(op) + ": custom_options must hold a TfLitePoolParams (at least 6 int32: padding, "
                           "stride_width, stride_height, filter_width, filter_height, activation), got " +
                           std::to_string(o.custom ? o.custom_size : 0) + " bytes");
  int32_t v[6];
  std::memcpy(v, o.custom, sizeof(v));
  auto p = std::make_shared<MpPoolParams>();
  p->padding = v[0];
  p->stride_w = v[1];
  p->stride_h = v[2];
  p->filter_w = v[3];
  p->filter_h = v[4];
  if (p->padding != 1 && p->padding != 2)
    return InvalidArgument(std::string(op) + ": padding " + std::to_string(p->padding) + " (expected 1 = SAME or 2 = VALID)");
  for (int x : {p->stride_w, p->stride_h, p->filter_w, p->filter_h})
    if (x < 1 || x > (1 << 16))
      return InvalidArgument(std::string(op) + ": strides and filter sizes must be in 1..65536, got stride " +
                             std::to_string(p->stride_w) + "x" + std::to_string(p->stride_h) + ", filter " +
                             std::to_string(p->filter_w) + "x" + std::to_string(p->filter_h));
  if (v[5] < 0 || v[5] > 3)
    return InvalidArgument(std::string(op) + ": unsupported activation " + std::to_string(v[5]));
  p->act = static_cast<Activation>(v[5]);
  n.params = p;
  return OkStatus();
}

int PadFor(int stride, int in, int filter, int out) {
  int64_t pad = (int64_t(out) - 1) * stride + filter - in;
  pad /= 2;
  return pad > 0 ? int(std::min<int64_t>(pad, INT32_MAX)) : 0;
}

Status CheckFloat4D(OpContext& ctx, const Tensor& t, const char* what) {
  TFG_RETURN_IF_ERROR(ctx.CheckType(t, DType::kFloat32, what));
  if (t.shape.size() != 4) return ctx.Error(std::string(what) + " must have rank 4, got " + DimsToString(t.shape));
  return OkStatus();
}

Status PrepareArgmax(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(1, 1, 2, 2));
  if (!ctx.has_input(0)) return ctx.Error("the input is omitted");
  const Tensor& in = ctx.input(0);
  TFG_RETURN_IF_ERROR(CheckFloat4D(ctx, in, "the input"));
  MpPoolParams& p = *static_cast<MpPoolParams*>(ctx.node().params.get());
  int h = in.shape[1], w = in.shape[2];
  auto out_size = [&](int n, int f, int s) {
    return p.padding == 1 ? int((int64_t(n) + s - 1) / s) : int((int64_t(n) - f + s) / s);
  };
  int oh = out_size(h, p.filter_h, p.stride_h), ow = out_size(w, p.filter_w, p.stride_w);
  if (oh < 0 || ow < 0) return ctx.Error("the filter is larger than the input (VALID padding)");
  p.pad_h = PadFor(p.stride_h, h, p.filter_h, oh);
  p.pad_w = PadFor(p.stride_w, w, p.filter_w, ow);
  for (int i = 0; i < 2; ++i) {
    TFG_RETURN_IF_ERROR(ctx.SetOutputType(i, DType::kFloat32));
    TFG_RETURN_IF_ERROR(ctx.SetOutputShape(i, {in.shape[0], oh, ow, in.shape[3]}));
  }
  return OkStatus();
}

Status EvalArgmax(OpContext& ctx) {
  const MpPoolParams& p = ctx.node().P<MpPoolParams>();
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  Tensor& idx = ctx.output(1);
  const int n = in.shape[0], h = in.shape[1], w = in.shape[2], c = in.shape[3];
  const int oh = out.shape[1], ow = out.shape[2];
  const float* x = in.as<float>();
  float* y = out.as<float>();
  float* ix = idx.as<float>();
  const float lo = ActivationMin(p.act), hi = ActivationMax(p.act);
  for (int b = 0; b < n; ++b)
    for (int oy = 0; oy < oh; ++oy)
      for (int ox = 0; ox < ow; ++ox) {
        const int y0 = oy * p.stride_h - p.pad_h, x0 = ox * p.stride_w - p.pad_w;
        const int fy0 = std::max(0, -y0), fy1 = std::min(p.filter_h, h - y0);
        const int fx0 = std::max(0, -x0), fx1 = std::min(p.filter_w, w - x0);
        for (int ch = 0; ch < c; ++ch) {
          float best = std::numeric_limits<float>::lowest();
          int by = 0, bx = 0;
          for (int fy = fy0; fy < fy1; ++fy)
            for (int fx = fx0; fx < fx1; ++fx) {
              float v = x[((size_t(b) * h + size_t(y0 + fy)) * w + size_t(x0 + fx)) * c + size_t(ch)];
              if (v > best) {
                best = v;
                by = fy;
                bx = fx;
              }
            }
          size_t o = ((size_t(b) * oh + size_t(oy)) * ow + size_t(ox)) * c + size_t(ch);
          y[o] = std::min(std::max(best, lo), hi);
          ix[o] = float(by * p.filter_w + bx) + 0.1f;
        }
      }
  return OkStatus();
}

Status PrepareUnpool(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 2, 1, 1));
  if (!ctx.has_input(0) || !ctx.has_input(1)) return ctx.Error("an input is omitted");
  const Tensor& in = ctx.input(0);
  const Tensor& ind = ctx.input(1);
  TFG_RETURN_IF_ERROR(CheckFloat4D(ctx, in, "the input"));
  TFG_RETURN_IF_ERROR(CheckFloat4D(ctx, ind, "the indices"));
  if (ind.shape != in.shape)
    return ctx.Error("the indices have shape " + DimsToString(ind.shape) + ", the input " + DimsToString(in.shape));
  MpPoolParams& p = *static_cast<MpPoolParams*>(ctx.node().params.get());
  int64_t oh = int64_t(in.shape[1]) * p.filter_h, ow = int64_t(in.shape[2]) * p.filter_w;
  if (oh > INT32_MAX || ow > INT32_MAX) return ctx.Error("the output size overflows");
  p.pad_h = PadFor(p.stride_h, int(oh), p.filter_h, in.shape[1]);
  p.pad_w = PadFor(p.stride_w, int(ow), p.filter_w, in.shape[2]);
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, DType::kFloat32));
  return ctx.SetOutputShape(0, {in.shape[0], int(oh), int(ow), in.shape[3]});
}

Status EvalUnpool(OpContext& ctx) {
  const MpPoolParams& p = ctx.node().P<MpPoolParams>();
  const Tensor& in = ctx.input(0);
  const Tensor& ind = ctx.input(1);
  Tensor& out = ctx.output(0);
  const int n = in.shape[0], h = in.shape[1], w = in.shape[2], c = in.shape[3];
  const int oh = out.shape[1], ow = out.shape[2];
  const float* x = in.as<float>();
  const float* ix = ind.as<float>();
  float* y = out.as<float>();
  std::memset(y, 0, size_t(std::max<int64_t>(0, out.num_elements())) * sizeof(float));
  for (int b = 0; b < n; ++b)
    for (int iy = 0; iy < h; ++iy)
      for (int ixx = 0; ixx < w; ++ixx)
        for (int ch = 0; ch < c; ++ch) {
          size_t i = ((size_t(b) * h + size_t(iy)) * w + size_t(ixx)) * c + size_t(ch);
          float fv = ix[i];
          // int(idx) truncates toward zero (C++ / and % as MediaPipe); NaN or huge indices decode
          // to no position instead of an undefined conversion.
          if (!(fv > -1e9f && fv < 1e9f)) continue;
          int64_t id = int64_t(fv);
          int64_t mx = id % p.filter_w, my = id / p.filter_w;
          int64_t oy = int64_t(iy) * p.stride_h - p.pad_h + my;
          int64_t ox = int64_t(ixx) * p.stride_w - p.pad_w + mx;
          if (oy < 0 || oy >= oh || ox < 0 || ox >= ow) continue;
          y[((size_t(b) * oh + size_t(oy)) * ow + size_t(ox)) * c + size_t(ch)] = x[i];
        }
  return OkStatus();
}

}  // namespace

const OpImpl kOp_MaxPoolingWithArgmax2D = {ParseMpPool, PrepareArgmax, EvalArgmax, nullptr, false};
const OpImpl kOp_MaxUnpooling2D = {ParseMpPool, PrepareUnpool, EvalUnpool, nullptr, false};

}  // namespace tflite_gpu
