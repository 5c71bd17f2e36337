// Helpers shared by the pooling family's files.
#pragma once
#include <cstdint>
#include <limits>
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
