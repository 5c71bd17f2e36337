// FlatBufferModel: a verified .tflite model, memory-mapped from a file or held from bytes.
// Mirrors tflite::FlatBufferModel. Constant tensors are used in place from these bytes.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tflite_gpu/status.h"

namespace tflite_gpu {

class TFLITE_GPU_API FlatBufferModel {
 public:
  // Memory-maps `path`. Returns nullptr on failure and, if `status` is given, why.
  static std::unique_ptr<FlatBufferModel> BuildFromFile(const char* path, Status* status = nullptr);
  // Uses `data` in place: the caller keeps it alive and unchanged while the model is used.
  static std::unique_ptr<FlatBufferModel> BuildFromBuffer(const char* data, size_t size, Status* status = nullptr);
  // Takes a copy of the bytes.
  static std::unique_ptr<FlatBufferModel> BuildFromBytes(std::string bytes, Status* status = nullptr);
  ~FlatBufferModel();

  const uint8_t* data() const;
  size_t size() const;
  // The model's description string and its metadata entries (name -> the referenced buffer's bytes).
  const std::string& description() const;
  const std::vector<std::pair<std::string, std::string>>& metadata() const;

  struct Impl;  // opaque; defined inside the library

 private:
  friend struct ModelInternals;  // the library's own access to the parsed model
  FlatBufferModel();
  std::unique_ptr<Impl> impl_;
};

}  // namespace tflite_gpu
