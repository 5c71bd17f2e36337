// Internal (not installed): the library's access to a FlatBufferModel's parsed model.
#pragma once
#include "model/model_def.h"
#include "tflite_gpu/model.h"

namespace tflite_gpu {

struct ModelInternals {
  static const ModelDef& def(const FlatBufferModel& model);
};

}  // namespace tflite_gpu
