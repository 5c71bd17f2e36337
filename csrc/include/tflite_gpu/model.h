// FlatBufferModel: a verified .tflite model, memory-mapped from a file or held from bytes.
// Mirrors tflite::FlatBufferModel. Constant tensors are used in place from these bytes.
#pragma once
#include <memory>
#include <string>

#include "tflite_gpu/status.h"

namespace tflite_gpu {

struct ModelDef;

class FlatBufferModel {
 public:
  // Memory-maps `path`. Returns nullptr on failure and, if `status` is given, why.
  static std::unique_ptr<FlatBufferModel> BuildFromFile(const char* path, Status* status = nullptr);
  // Uses `data` in place: the caller keeps it alive and unchanged while the model is used.
  static std::unique_ptr<FlatBufferModel> BuildFromBuffer(const char* data, size_t size, Status* status = nullptr);
  // Takes a copy of the bytes.
  static std::unique_ptr<FlatBufferModel> BuildFromBytes(std::string bytes, Status* status = nullptr);
  ~FlatBufferModel();

  const ModelDef& def() const;
  const uint8_t* data() const;
  size_t size() const;

  struct Impl;  // opaque

 private:
  FlatBufferModel();
  std::unique_ptr<Impl> impl_;
};

}  // namespace tflite_gpu
