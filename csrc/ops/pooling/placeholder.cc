// Placeholder registrations: replaced by the family's real kernels.
#include "ops/op_registry.h"

namespace tflite_gpu {
const OpImpl kOp_AVERAGE_POOL_2D = {};
const OpImpl kOp_MAX_POOL_2D = {};
const OpImpl kOp_RESIZE_BILINEAR = {};
const OpImpl kOp_SOFTMAX = {};
const OpImpl kOp_MEAN = {};
const OpImpl kOp_ARG_MAX = {};
const OpImpl kOp_SUM = {};
const OpImpl kOp_RESIZE_NEAREST_NEIGHBOR = {};
}  // namespace tflite_gpu
