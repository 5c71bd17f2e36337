// Quantized kernels of the conv family (quantized.cc): the float ops' Prepare/Eval hand over here
// when the input or the weights are integer.
#pragma once
#include "ops/conv/conv_common.h"

namespace tflite_gpu {
namespace qconv {

// True when the op's integer kernels apply: input 0 or the weights (input `weights`) not FLOAT32.
inline bool IsQuantized(OpContext& ctx, int weights = 1) {
  return ctx.input(0).type != DType::kFloat32 || (ctx.has_input(weights) && ctx.input(weights).type != DType::kFloat32);
}

Status PrepareConv2D(OpContext& ctx, const conv::WindowParams& p);
Status EvalConv2D(OpContext& ctx, bool ref);

Status PrepareFullyConnected(OpContext& ctx, int act, bool keep_num_dims, bool asymmetric_quantize_inputs);
Status EvalFullyConnected(OpContext& ctx, bool ref);

Status PrepareDepthwise(OpContext& ctx, const conv::WindowParams& p);
Status EvalDepthwise(OpContext& ctx, bool ref);

Status PrepareBatchMatMul(OpContext& ctx, bool adj_x, bool adj_y);
Status EvalBatchMatMul(OpContext& ctx, bool ref);

}  // namespace qconv
}  // namespace tflite_gpu
