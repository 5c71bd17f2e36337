// Placeholder registrations: replaced by the family's real kernels.
#include "ops/op_registry.h"

namespace tflite_gpu {
const OpImpl kOp_LSTM = {};
const OpImpl kOp_UNIDIRECTIONAL_SEQUENCE_LSTM = {};
}  // namespace tflite_gpu
