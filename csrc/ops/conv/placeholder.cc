// Placeholder registrations: replaced by the family's real kernels.
#include "ops/op_registry.h"

namespace tflite_gpu {
const OpImpl kOp_CONV_2D = {};
const OpImpl kOp_DEPTHWISE_CONV_2D = {};
const OpImpl kOp_FULLY_CONNECTED = {};
const OpImpl kOp_TRANSPOSE_CONV = {};
const OpImpl kOp_BATCH_MATMUL = {};
const OpImpl kOp_Convolution2DTransposeBias = {};
}  // namespace tflite_gpu
