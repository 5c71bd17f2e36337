// Helpers shared by the pooling family's files.
#pragma once
#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "ops/op_registry.h"

namespace tflite_gpu {
namespace pooling {

// The options table, or an empty one (every field at its schema default) when the model stores
// none or a table of another type (TFLite's builtin_options_as_X() returns null then).
inline fb::Table OptionsTable(const OptionsView& o, uint8_t expected_type) {
  return o.type == expected_type ? o.table : fb::Table();
}

// TFLite's CalculateActivationRange for float: only the RELU family clamps; every other
// activation (NONE, TANH, SIGN_BIT) gives [lowest, max], which still maps +-inf to +-FLT_MAX.
inline void FloatActivationRange(int act, float* lo, float* hi) { ActivationRangeOfType<float>(act, lo, hi); }
inline float Clamp(float v, float lo, float hi) { return std::min(std::max(v, lo), hi); }

inline std::string Str(const Dims& d) { return DimsToString(d); }

// Pool2DOptions (AVERAGE_POOL_2D, MAX_POOL_2D, L2_POOL_2D): parsed, checked, and the window
// geometry (output size and leading pad as CONV_2D with dilation 1).
constexpr uint8_t kPool2DOptions = 5;
struct Pool2DParams {
  int padding = 0, stride_w = 0, stride_h = 0, filter_w = 0, filter_h = 0, activation = 0;
};
inline Status ParsePool2D(const OptionsView& opts, Node& node) {
  fb::Table t = OptionsTable(opts, kPool2DOptions);
  auto p = std::make_shared<Pool2DParams>();
  p->padding = t.Scalar<int8_t>(0, 0);
  p->stride_w = t.Scalar<int32_t>(1, 0);
  p->stride_h = t.Scalar<int32_t>(2, 0);
  p->filter_w = t.Scalar<int32_t>(3, 0);
  p->filter_h = t.Scalar<int32_t>(4, 0);
  p->activation = t.Scalar<int8_t>(5, 0);
  node.params = p;
  return OkStatus();
}
// Padding, activation, strides and filter size; *pad gets the padding.
inline Status CheckPool2D(const OpContext& ctx, const Pool2DParams& p, Padding* pad) {
  if (!CheckPadding(p.padding, pad).ok()) return ctx.Error("unknown padding " + std::to_string(p.padding));
  if (p.activation < 0 || p.activation > 5)
    return ctx.Error("unsupported fused activation function " + std::to_string(p.activation));
  if (p.stride_w <= 0 || p.stride_h <= 0)
    return ctx.Error("strides must be positive, got stride_h " + std::to_string(p.stride_h) + ", stride_w " +
                     std::to_string(p.stride_w));
  if (p.filter_w <= 0 || p.filter_h <= 0)
    return ctx.Error("filter size must be positive, got " + std::to_string(p.filter_h) + "x" + std::to_string(p.filter_w));
  return OkStatus();
}
// The output shape [N, OH, OW, C] for a 4-D NHWC input shape.
inline Dims Pool2DOutputShape(const Pool2DParams& p, Padding pad, const Dims& in) {
  return {in[0], ConvOutputSize(pad, in[1], p.filter_h, p.stride_h, 1),
          ConvOutputSize(pad, in[2], p.filter_w, p.stride_w, 1), in[3]};
}
// The window's leading pads for an input / output size pair.
inline void Pool2DPads(const Pool2DParams& p, int in_h, int in_w, int out_h, int out_w, int* pad_h, int* pad_w) {
  const Padding pad = static_cast<Padding>(p.padding);
  *pad_h = ConvPadBefore(pad, in_h, p.filter_h, p.stride_h, 1, out_h);
  *pad_w = ConvPadBefore(pad, in_w, p.filter_w, p.stride_w, 1, out_w);
}

// GPU-side accessors of the parsed params and of the CPU kernels' own index math (defined at
// the end of the CPU .cc files).
void Pool2DParamsOf(const Node& n, int* padding, int* stride_h, int* stride_w, int* filter_h, int* filter_w, int* activation);
float SoftmaxBetaOf(const Node& n);
void ResizeParamsOf(const Node& n, bool* align_corners, bool* half_pixel_centers);
void ResizeBilinearSource(int value, int in_size, int out_size, bool align_corners, bool half_pixel, int* lo, int* hi, float* frac);
// The same from TFLite's integer kernel (INT8 / INT16 inputs): 10-bit fixed-point scale and position.
void ResizeBilinearSourceInt(int value, int in_size, int out_size, bool align_corners, bool half_pixel, int* lo, int* hi, float* frac);
int ResizeNearestSource(int value, int in_size, int out_size, bool align_corners, bool half_pixel);

}  // namespace pooling
}  // namespace tflite_gpu
