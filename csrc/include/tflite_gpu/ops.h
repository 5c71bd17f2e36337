// The engine's op table, for listings and tools (tflite_gpu.supported_ops() in Python).
#pragma once
#include <string>
#include <vector>

#include "tflite_gpu/export.h"

namespace tflite_gpu {

struct OpDescription {
  std::string name;          // "CONV_2D", or the custom op's name
  int builtin_code = 0;      // the schema's BuiltinOperator; 32 (CUSTOM) for custom ops
  bool is_custom = false;
  std::string custom_code;   // custom ops only
  int max_version = 1;
  std::string family;        // "conv", "elementwise", ...
  bool has_cpu_kernel = false, has_reference_kernel = false, has_gpu_kernel = false;
  std::vector<std::string> quantized_kernels;  // "int8", "uint8", "int16x8", "hybrid"
};

// Every op of the engine, in table order.
TFLITE_GPU_API std::vector<OpDescription> SupportedOps();
// The name of any TFLite builtin code (also those the engine lacks): "ADD", "BUILTIN_137".
TFLITE_GPU_API std::string BuiltinOpName(int builtin_code);

}  // namespace tflite_gpu
