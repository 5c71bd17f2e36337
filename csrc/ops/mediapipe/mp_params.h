// Parsed options of the MediaPipe custom ops, shared by their CPU kernels (csrc/ops/mediapipe/*.cc)
// and GPU generators (*_gpu.cc next to them).
#pragma once
#include <vector>

#include "ops/activation.h"

namespace tflite_gpu::mp {

// MaxPoolingWithArgmax2D / MaxUnpooling2D (pool_argmax.cc).
struct MpPoolParams {
  int padding = 0, stride_w = 1, stride_h = 1, filter_w = 1, filter_h = 1;
  Activation act = Activation::kNone;
  int pad_h = 0, pad_w = 0;  // computed at prepare
};

// Landmarks2TransformMatrix (landmarks_to_matrix.cc).
struct L2tmParams {
  int version = 1;
  // v1
  int in_h = 0, in_w = 0, out_h = 0, out_w = 0, landmarks_range = 0;
  float bbox_mult = 0.f;
  // v2
  float target_rot = 0.f, scale_x = 0.f, scale_y = 0.f;
  int output_height = 0, output_width = 0;
  // both
  int left = 0, right = 0;
  std::vector<int> subset;  // flattened pairs (odd count: the last index paired with itself)
  int max_idx = 0;          // largest landmark index used
};

// TransformLandmarks (transform_landmarks.cc).
struct TlParams {
  int version = 1;
  int dims = 3;  // version 1: from the options; version 2: set at prepare
  float scale = 1.f;
};

// TransformTensorBilinear (transform_tensor_bilinear.cc).
struct TtbParams {
  int version = 2;
  int out_h = 0, out_w = 0;
};

}  // namespace tflite_gpu::mp
