// Placeholder registrations: replaced by the family's real kernels.
#include "ops/op_registry.h"

namespace tflite_gpu {
const OpImpl kOp_ADD = {};
const OpImpl kOp_DEQUANTIZE = {};
const OpImpl kOp_LOGISTIC = {};
const OpImpl kOp_MUL = {};
const OpImpl kOp_RELU = {};
const OpImpl kOp_RELU_N1_TO_1 = {};
const OpImpl kOp_RELU6 = {};
const OpImpl kOp_TANH = {};
const OpImpl kOp_SUB = {};
const OpImpl kOp_DIV = {};
const OpImpl kOp_EXP = {};
const OpImpl kOp_CAST = {};
const OpImpl kOp_PRELU = {};
const OpImpl kOp_MAXIMUM = {};
const OpImpl kOp_MINIMUM = {};
const OpImpl kOp_SQRT = {};
const OpImpl kOp_RSQRT = {};
const OpImpl kOp_LOGICAL_AND = {};
const OpImpl kOp_LEAKY_RELU = {};
const OpImpl kOp_SQUARED_DIFFERENCE = {};
const OpImpl kOp_QUANTIZE = {};
const OpImpl kOp_HARD_SWISH = {};
}  // namespace tflite_gpu
