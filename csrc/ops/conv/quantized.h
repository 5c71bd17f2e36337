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

// BATCH_MATMUL: geometry computed by the float op; the quantized state lives in *qstate.
struct BmmGeom {
  int M, N, K;
  const std::vector<int64_t>* lhs_of;
  const std::vector<int64_t>* rhs_of;
  int64_t rhs_batches;
  bool adj_x, adj_y;
  bool asymmetric_quantize_inputs;  // hybrid (FLOAT32 lhs, INT8 rhs) only
};
Status PrepareBatchMatMul(OpContext& ctx, const BmmGeom& g, std::shared_ptr<void>* qstate);
Status EvalBatchMatMul(OpContext& ctx, const BmmGeom& g, std::shared_ptr<void>* qstate, bool ref);

// TRANSPOSE_CONV (inputs: output_shape, weights, input, bias): geometry computed by the float op.
struct TConvGeom {
  int batch, in_h, in_w, in_c, out_h, out_w, out_c, k_h, k_w, sh, sw, pad_t, pad_l;
};
Status PrepareTransposeConv(OpContext& ctx, const TConvGeom& g, int act);
Status EvalTransposeConv(OpContext& ctx, bool ref);

}  // namespace qconv
}  // namespace tflite_gpu
