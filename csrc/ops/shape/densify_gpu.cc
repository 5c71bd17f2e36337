// GPU side of DENSIFY (refused: constant folded on the CPU):
// generators of the data movement kernels (CPU kernels: densify.cc;
// shared kernel shapes: shape_common_gpu.h).
#include "ops/shape/shape_common_gpu.h"

namespace tflite_gpu {
namespace {

using namespace shape_gpu;  // NOLINT

// ------------------------------------------------------------------------------ refused
Status CheckDensify(const GpuCheckContext&) {
  return Unimplemented("constant folded: DENSIFY expands constant weights once at allocation on the CPU");
}

}  // namespace

const GpuOpSupport kGpu_DENSIFY = {CheckDensify, NoBuild, nullptr, false};

}  // namespace tflite_gpu
