// Helpers shared by the GPU generators of the MediaPipe custom ops (*_gpu.cc in this folder).
#pragma once
#include <string>

#include "gpu/gpu_op.h"

namespace tflite_gpu::mp {

// OpenCL expression reading element k (row-major over the tensor's own shape) of input `arg`
// through LD_<arg>: the BHWC mapping of ranks <= 4 keeps row-major order, so the flat index
// splits into (b, y, x, c) of the device shape.
inline std::string FlatElement(const std::string& arg, const gpu::BHWC& s, int64_t k) {
  const int64_t c = k % s.c, x = (k / s.c) % s.w, y = (k / s.c / s.w) % s.h, b = k / s.c / s.w / s.h;
  return "LD_" + arg + "(" + std::to_string(b) + ", " + std::to_string(y) + ", " + std::to_string(x) + ", " +
         std::to_string(c) + ")";
}

// Tensor `t` is FLOAT32 (and 4-D NHWC when rank4).
inline Status CheckFloat32(const Tensor& t, const std::string& what, bool rank4 = false) {
  if (t.type != DType::kFloat32) return Unimplemented(what + " must be FLOAT32");
  if (rank4 && t.shape.size() != 4) return Unimplemented(what + " must be 4-D (NHWC)");
  return OkStatus();
}

// The 4x4 matrix input of TransformLandmarks / TransformTensorBilinear: FLOAT32, 16 values.
inline Status CheckMatrixInput(const gpu::GpuCheckContext& c, int i) {
  const Tensor& m = c.input(i);
  if (m.type != DType::kFloat32) return Unimplemented("the matrix must be FLOAT32");
  if (m.num_elements() != 16) return Unimplemented("the matrix must hold 16 values");
  return c.Rank4OrLess(m, "the matrix");
}

}  // namespace tflite_gpu::mp
