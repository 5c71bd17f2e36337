#include <string>
#include <unordered_map>

#include "ops/op_registry.h"

namespace tflite_gpu {

const std::vector<OpInfo>& AllOps() {
  static const std::vector<OpInfo> kOps = {
#define TFG_BUILTIN(NAME, CODE, MAXV, FAMILY, QUANT) {#NAME, CODE, nullptr, MAXV, #FAMILY, &kOp_##NAME, &kGpu_##NAME, QUANT},
#define TFG_CUSTOM(NAME, CUSTOM, MAXV, FAMILY, QUANT) {#NAME, 32, CUSTOM, MAXV, #FAMILY, &kOp_##NAME, &kGpu_##NAME, QUANT},
#include "ops/op_list.inc"
#undef TFG_BUILTIN
#undef TFG_CUSTOM
  };
  return kOps;
}

const OpInfo* FindBuiltinOp(int code) {
  for (const OpInfo& op : AllOps())
    if (!op.custom_code && op.builtin_code == code) return &op;
  return nullptr;
}

const OpInfo* FindCustomOp(const std::string& custom_code) {
  for (const OpInfo& op : AllOps())
    if (op.custom_code && custom_code == op.custom_code) return &op;
  // Other custom codes MediaPipe's models use for the same ops, as TFLite's GPU delegate accepts
  // them (its MediaPipe custom parsers: "TransformTensor" for version 1 of
  // TransformTensorBilinear, "Landmarks2TransformMatrixV2").
  static const struct { const char* alias; const char* code; } kAliases[] = {
      {"TransformTensor", "TransformTensorBilinear"},
      {"Landmarks2TransformMatrixV2", "Landmarks2TransformMatrix"},
  };
  for (const auto& a : kAliases)
    if (custom_code == a.alias) return FindCustomOp(a.code);
  return nullptr;
}

std::string BuiltinName(int code) {
  // Names of TFLite builtin operator codes (public schema), for error messages.
  static const char* const kNames[] = {
      "ADD", "AVERAGE_POOL_2D", "CONCATENATION", "CONV_2D", "DEPTHWISE_CONV_2D", "DEPTH_TO_SPACE",
      "DEQUANTIZE", "EMBEDDING_LOOKUP", "FLOOR", "FULLY_CONNECTED", "HASHTABLE_LOOKUP",
      "L2_NORMALIZATION", "L2_POOL_2D", "LOCAL_RESPONSE_NORMALIZATION", "LOGISTIC", "LSH_PROJECTION",
      "LSTM", "MAX_POOL_2D", "MUL", "RELU", "RELU_N1_TO_1", "RELU6", "RESHAPE", "RESIZE_BILINEAR",
      "RNN", "SOFTMAX", "SPACE_TO_DEPTH", "SVDF", "TANH", "CONCAT_EMBEDDINGS", "SKIP_GRAM", "CALL",
      "CUSTOM", "EMBEDDING_LOOKUP_SPARSE", "PAD", "UNIDIRECTIONAL_SEQUENCE_RNN", "GATHER",
      "BATCH_TO_SPACE_ND", "SPACE_TO_BATCH_ND", "TRANSPOSE", "MEAN", "SUB", "DIV", "SQUEEZE",
      "UNIDIRECTIONAL_SEQUENCE_LSTM", "STRIDED_SLICE", "BIDIRECTIONAL_SEQUENCE_RNN", "EXP", "TOPK_V2",
      "SPLIT", "LOG_SOFTMAX", "DELEGATE", "BIDIRECTIONAL_SEQUENCE_LSTM", "CAST", "PRELU", "MAXIMUM",
      "ARG_MAX", "MINIMUM", "LESS", "NEG", "PADV2", "GREATER", "GREATER_EQUAL", "LESS_EQUAL", "SELECT",
      "SLICE", "SIN", "TRANSPOSE_CONV", "SPARSE_TO_DENSE", "TILE", "EXPAND_DIMS", "EQUAL", "NOT_EQUAL",
      "LOG", "SUM", "SQRT", "RSQRT", "SHAPE", "POW", "ARG_MIN", "FAKE_QUANT", "REDUCE_PROD",
      "REDUCE_MAX", "PACK", "LOGICAL_OR", "ONE_HOT", "LOGICAL_AND", "LOGICAL_NOT", "UNPACK",
      "REDUCE_MIN", "FLOOR_DIV", "REDUCE_ANY", "SQUARE", "ZEROS_LIKE", "FILL", "FLOOR_MOD", "RANGE",
      "RESIZE_NEAREST_NEIGHBOR", "LEAKY_RELU", "SQUARED_DIFFERENCE", "MIRROR_PAD", "ABS", "SPLIT_V",
      "UNIQUE", "CEIL", "REVERSE_V2", "ADD_N", "GATHER_ND", "COS", "WHERE", "RANK", "ELU",
      "REVERSE_SEQUENCE", "MATRIX_DIAG", "QUANTIZE", "MATRIX_SET_DIAG", "ROUND", "HARD_SWISH", "IF",
      "WHILE", "NON_MAX_SUPPRESSION_V4", "NON_MAX_SUPPRESSION_V5", "SCATTER_ND", "SELECT_V2",
      "DENSIFY", "SEGMENT_SUM", "BATCH_MATMUL", "PLACEHOLDER_FOR_GREATER_OP_CODES", "CUMSUM",
      "CALL_ONCE", "BROADCAST_TO", "RFFT2D", "CONV_3D", "IMAG", "REAL", "COMPLEX_ABS", "HASHTABLE",
      "HASHTABLE_FIND", "HASHTABLE_IMPORT", "HASHTABLE_SIZE", "REDUCE_ALL", "CONV_3D_TRANSPOSE",
      "VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE", "BROADCAST_ARGS", "RANDOM_STANDARD_NORMAL",
      "BUCKETIZE", "RANDOM_UNIFORM", "MULTINOMIAL", "GELU", "DYNAMIC_UPDATE_SLICE", "RELU_0_TO_1",
      "UNSORTED_SEGMENT_PROD", "UNSORTED_SEGMENT_MAX", "UNSORTED_SEGMENT_SUM", "ATAN2",
      "UNSORTED_SEGMENT_MIN", "SIGN", "BITCAST", "BITWISE_XOR", "RIGHT_SHIFT"};
  constexpr int n = int(sizeof(kNames) / sizeof(kNames[0]));
  if (code >= 0 && code < n) return kNames[code];
  if (code == 203) return "DILATE";  // after the STABLEHLO_* block (162..)
  if (code == 205) return "REDUCE_WINDOW";
  return "BUILTIN_" + std::to_string(code);
}

}  // namespace tflite_gpu
