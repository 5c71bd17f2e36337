// The parsed, verified content of a .tflite file (schema v3). Plain data; constant buffers
// point into the model bytes (memory-mapped file or caller's bytes), which outlive this.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "model/flatbuffer.h"
#include "tflite_gpu/types.h"

namespace tflite_gpu {

struct OperatorCodeDef {
  int32_t builtin_code = 0;
  std::string custom_code;
  int32_t version = 1;
};

struct OperatorDef {
  uint32_t opcode_index = 0;
  std::vector<int32_t> inputs, outputs, intermediates;
  uint8_t options_type = 0;
  fb::Table options;  // builtin options table (may be invalid if absent)
  uint8_t options2_type = 0;  // builtin_options_2 (BuiltinOptions2 union: StableHLO-derived ops)
  fb::Table options2;
  const uint8_t* custom_options = nullptr;
  size_t custom_options_size = 0;
};

struct TensorDef {
  std::string name;
  DType type = DType::kFloat32;
  Dims shape, shape_signature;
  uint32_t buffer = 0;
  QuantParams quant;
  std::shared_ptr<SparsityParams> sparsity;
  bool is_variable = false;
};

struct SubgraphDef {
  std::string name;
  std::vector<TensorDef> tensors;
  std::vector<int32_t> inputs, outputs;
  std::vector<OperatorDef> operators;
};

struct BufferDef {
  const uint8_t* data = nullptr;
  size_t size = 0;
};

struct SignatureDefT {
  std::string key;
  uint32_t subgraph_index = 0;
  std::vector<std::pair<std::string, int32_t>> inputs, outputs;
};

struct ModelDef {
  uint32_t version = 0;
  std::string description;
  std::vector<OperatorCodeDef> operator_codes;
  std::vector<SubgraphDef> subgraphs;
  std::vector<BufferDef> buffers;
  std::vector<std::pair<std::string, std::string>> metadata;  // name -> bytes
  std::vector<SignatureDefT> signatures;
};

}  // namespace tflite_gpu
