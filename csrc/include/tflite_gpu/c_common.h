/* Types shared by TensorFlow Lite's C API (c_api.h), the GPU delegate header (gpu_delegate.h)
 * and the C++ API, with TensorFlow Lite's names and values. Includable from C and C++. */
#ifndef TFLITE_GPU_C_COMMON_H_
#define TFLITE_GPU_C_COMMON_H_

#include <stddef.h>
#include <stdint.h>

#include "tflite_gpu/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum TfLiteStatus {
  kTfLiteOk = 0,
  kTfLiteError = 1,
  kTfLiteDelegateError = 2,
  kTfLiteApplicationError = 3,
  kTfLiteDelegateDataNotFound = 4,
  kTfLiteDelegateDataWriteError = 5,
  kTfLiteDelegateDataReadError = 6,
  kTfLiteUnresolvedOps = 7,
  kTfLiteCancelled = 8,
} TfLiteStatus;

/* Element types (TfLiteType values, which differ from the .tflite schema's TensorType ids). */
typedef enum TfLiteType {
  kTfLiteNoType = 0,
  kTfLiteFloat32 = 1,
  kTfLiteInt32 = 2,
  kTfLiteUInt8 = 3,
  kTfLiteInt64 = 4,
  kTfLiteString = 5,
  kTfLiteBool = 6,
  kTfLiteInt16 = 7,
  kTfLiteComplex64 = 8,
  kTfLiteInt8 = 9,
  kTfLiteFloat16 = 10,
  kTfLiteFloat64 = 11,
  kTfLiteComplex128 = 12,
  kTfLiteUInt64 = 13,
  kTfLiteResource = 14,
  kTfLiteVariant = 15,
  kTfLiteUInt32 = 16,
  kTfLiteUInt16 = 17,
  kTfLiteInt4 = 18,
  kTfLiteBFloat16 = 19,
} TfLiteType;

/* Per-tensor (affine) quantization: real = scale * (quantized - zero_point). */
typedef struct TfLiteQuantizationParams {
  float scale;
  int32_t zero_point;
} TfLiteQuantizationParams;

#ifdef __cplusplus
}  /* extern "C" */
/* An opaque handle in C and C++ alike, only passed by pointer (TfLiteGpuDelegateV2Create makes
 * one). In C++ it names the engine's internal delegate class, which is not part of the API. */
namespace tflite_gpu { class Delegate; }
typedef tflite_gpu::Delegate TfLiteDelegate;
#else
typedef struct TfLiteDelegate TfLiteDelegate;
#endif

#endif  /* TFLITE_GPU_C_COMMON_H_ */
