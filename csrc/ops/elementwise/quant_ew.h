// Quantized elementwise kernels (issue 7): the entry points unary.cc / binary.cc dispatch to when
// the input is INT8 / UINT8 / INT16. Arithmetic from ops/quant_common.h.
#pragma once
#include "ops/op_registry.h"

namespace tflite_gpu {
namespace ew {

enum class QUnary { kRelu, kRelu6, kReluN1To1, kLeakyRelu, kLogistic, kTanh, kHardSwish, kExp };

inline bool IsQuantizedType(DType t) { return t == DType::kInt8 || t == DType::kUInt8 || t == DType::kInt16; }

// Prepares a quantized unary node (types, parameter checks as TFLite's, tables); `alpha` is
// LEAKY_RELU's.
Status PrepareQuantUnary(OpContext& ctx, QUnary kind, float alpha);
// ref: the plain per-element arithmetic; otherwise 8-bit inputs go through a 256-entry table
// built from that same arithmetic at prepare.
Status EvalQuantUnary(OpContext& ctx, bool ref);

}  // namespace ew
}  // namespace tflite_gpu

namespace tflite_gpu {
namespace ew {

enum class QBinary { kAdd, kSub, kMul };

// Quantized ADD / SUB / MUL (fused activation `act`, TFLite's ActivationFunctionType value).
Status PrepareQuantBinary(OpContext& ctx, QBinary kind, int act, bool pot_scale_int16 = true);
Status EvalQuantBinary(OpContext& ctx, bool ref);

}  // namespace ew
}  // namespace tflite_gpu

namespace tflite_gpu {
namespace ew {

// Quantized PRELU (input and alpha of one type, alpha broadcast to the input).
Status PrepareQuantPrelu(OpContext& ctx);
Status EvalQuantPrelu(OpContext& ctx, bool ref);

}  // namespace ew
}  // namespace tflite_gpu

namespace tflite_gpu {
namespace ew {

// Quantized DIV (INT8, UINT8, INT16; fused activation `act`) and SQUARED_DIFFERENCE (INT8).
Status PrepareQuantDiv(OpContext& ctx, int act);
Status EvalQuantDiv(OpContext& ctx, bool ref);
Status PrepareQuantSqDiff(OpContext& ctx);
Status EvalQuantSqDiff(OpContext& ctx, bool ref);

}  // namespace ew
}  // namespace tflite_gpu
