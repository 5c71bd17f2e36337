// Placeholder registrations: replaced by the family's real kernels.
#include "ops/op_registry.h"

namespace tflite_gpu {
const OpImpl kOp_CONCATENATION = {};
const OpImpl kOp_DEPTH_TO_SPACE = {};
const OpImpl kOp_RESHAPE = {};
const OpImpl kOp_SPACE_TO_DEPTH = {};
const OpImpl kOp_PAD = {};
const OpImpl kOp_GATHER = {};
const OpImpl kOp_TRANSPOSE = {};
const OpImpl kOp_STRIDED_SLICE = {};
const OpImpl kOp_SPLIT = {};
const OpImpl kOp_PADV2 = {};
const OpImpl kOp_SLICE = {};
const OpImpl kOp_SHAPE = {};
const OpImpl kOp_PACK = {};
const OpImpl kOp_UNPACK = {};
const OpImpl kOp_MIRROR_PAD = {};
const OpImpl kOp_DENSIFY = {};
}  // namespace tflite_gpu
