#pragma once
#include "model/model_def.h"
#include "tflite_gpu/status.h"

namespace tflite_gpu {
// Parses and verifies a .tflite flatbuffer. The bytes must stay alive while `out` is used.
// Checks: file identifier, every table/vtable/vector/string bound, tensor indices of
// subgraph inputs/outputs/operators, opcode indices, buffer indices and ranges (including the
// offset/size form for large models), constant sizes against shapes, quantization vectors.
// `reader` must outlive `out` (option tables keep a pointer to it).
Status ReadModel(const fb::Reader* reader, ModelDef* out);
}  // namespace tflite_gpu
