// Serialization of the GPU delegate's prepared model (TFLITE_GPU_EXPERIMENTAL_FLAGS_ENABLE_SERIALIZATION
// + serialization_dir + model_token): state for tools/tests, and the SHA-256 the cache keys use.
// C++ only. README.md ("Serialization") has the user-facing rules; gpu/serialization.h the format.
#ifndef TFLITE_GPU_SERIALIZATION_H_
#define TFLITE_GPU_SERIALIZATION_H_
#ifdef __cplusplus
#include <cstddef>
#include <string>
#include <vector>

#include "tflite_gpu/c_common.h"
#include "tflite_gpu/export.h"

namespace tflite_gpu {

// Lowercase hex SHA-256 of the bytes. allow_hw=false forces the portable code (tests).
TFLITE_GPU_API std::string Sha256Hex(const void* data, size_t size, bool allow_hw = true);
// Whether the SHA extensions of the CPU are used.
TFLITE_GPU_API bool Sha256UsesHardware();

struct GpuSerializationStats {
  bool enabled = false;        // flag + serialization_dir + model_token, and the directory is usable
  std::string dir;             // the directory entries go to ("" when disabled)
  std::string disabled_reason; // why serialization is off although the flag is set ("" otherwise)
  int hits = 0;                // partitions loaded from an entry
  int misses = 0;              // partitions built (no entry, or a rejected one)
  int writes = 0;              // entries written
  int write_errors = 0;        // entries that could not be written (read-only or full directory, ...)
  int rejected = 0;            // entries that existed but were not used
  std::vector<std::string> reject_reasons;  // one line per rejected entry
  std::vector<std::string> files;           // entry paths used or written, in partition order
};
// The serialization state of a delegate made by TfLiteGpuDelegateV2Create; false for another delegate.
TFLITE_GPU_API bool GpuDelegateSerializationState(TfLiteDelegate* delegate, GpuSerializationStats* out);

}  // namespace tflite_gpu

#endif  // __cplusplus
#endif  // TFLITE_GPU_SERIALIZATION_H_
