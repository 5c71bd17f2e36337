/* TensorFlow Lite's C API (tensorflow/lite/c/c_api.h) for C hosts, with TFLite's names and
 * semantics, backed by tflite_gpu. Includable from C (C99 or later) and C++.
 *
 *   TfLiteModel* model = TfLiteModelCreateFromFile("model.tflite");
 *   TfLiteInterpreterOptions* options = TfLiteInterpreterOptionsCreate();
 *   TfLiteDelegate* delegate = TfLiteGpuDelegateV2Create(NULL);      // gpu_delegate.h
 *   TfLiteInterpreterOptionsAddDelegate(options, delegate);
 *   TfLiteInterpreter* interpreter = TfLiteInterpreterCreate(model, options);
 *   TfLiteInterpreterOptionsDelete(options);
 *   TfLiteInterpreterAllocateTensors(interpreter);
 *   TfLiteTensorCopyFromBuffer(TfLiteInterpreterGetInputTensor(interpreter, 0), in, in_bytes);
 *   TfLiteInterpreterInvoke(interpreter);
 *   TfLiteTensorCopyToBuffer(TfLiteInterpreterGetOutputTensor(interpreter, 0), out, out_bytes);
 *   TfLiteInterpreterDelete(interpreter);
 *   TfLiteGpuDelegateV2Delete(delegate);
 *   TfLiteModelDelete(model);
 *
 * Every call accepts NULL handles and returns NULL / kTfLiteError / 0 for them; errors are
 * reported through the options' error reporter (default: stderr) naming what is wrong. */
#ifndef TFLITE_GPU_C_API_H_
#define TFLITE_GPU_C_API_H_

#include <stdarg.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif
#include <stddef.h>
#include <stdint.h>

#include "tflite_gpu/c_common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct TfLiteModel TfLiteModel;
typedef struct TfLiteInterpreterOptions TfLiteInterpreterOptions;
typedef struct TfLiteInterpreter TfLiteInterpreter;
typedef struct TfLiteSignatureRunner TfLiteSignatureRunner;
/* A tensor of an interpreter; valid while the interpreter lives. */
typedef struct TfLiteTensor TfLiteTensor;

/* The version of this library ("0.1.0"). */
TFLITE_GPU_API const char* TfLiteVersion(void);
/* "FLOAT32", "INT8", ... ("NOTYPE" for an unknown value). */
TFLITE_GPU_API const char* TfLiteTypeGetName(TfLiteType type);

/* ---- model ---- */
/* A model from the bytes of a .tflite file (copied: the buffer may be freed afterwards), or NULL. */
TFLITE_GPU_API TfLiteModel* TfLiteModelCreate(const void* model_data, size_t model_size);
/* A model memory-mapped from a file, or NULL (the reason goes to stderr). */
TFLITE_GPU_API TfLiteModel* TfLiteModelCreateFromFile(const char* model_path);
/* Interpreters created from the model keep what they need: the model may be deleted first. */
TFLITE_GPU_API void TfLiteModelDelete(TfLiteModel* model);

/* ---- interpreter options ---- */
TFLITE_GPU_API TfLiteInterpreterOptions* TfLiteInterpreterOptionsCreate(void);
TFLITE_GPU_API void TfLiteInterpreterOptionsDelete(TfLiteInterpreterOptions* options);
/* CPU threads; -1 (the default): one per hardware thread. */
TFLITE_GPU_API void TfLiteInterpreterOptionsSetNumThreads(TfLiteInterpreterOptions* options, int32_t num_threads);
/* Applied, in order, when the interpreter is created. Not owned: delete the delegate after the
 * interpreter (TfLiteGpuDelegateV2Delete). */
TFLITE_GPU_API void TfLiteInterpreterOptionsAddDelegate(TfLiteInterpreterOptions* options, TfLiteDelegate* delegate);
/* Where error messages go (default: stderr). */
TFLITE_GPU_API void TfLiteInterpreterOptionsSetErrorReporter(TfLiteInterpreterOptions* options,
                                              void (*reporter)(void* user_data, const char* format, va_list args),
                                              void* user_data);

/* ---- interpreter ---- */
/* NULL when the model cannot be run (an op or op version the engine lacks, a delegate that
 * cannot be applied): the error reporter says why. `optional_options` may be NULL and may be
 * deleted right after this call. */
TFLITE_GPU_API TfLiteInterpreter* TfLiteInterpreterCreate(const TfLiteModel* model, const TfLiteInterpreterOptions* optional_options);
TFLITE_GPU_API void TfLiteInterpreterDelete(TfLiteInterpreter* interpreter);

TFLITE_GPU_API int32_t TfLiteInterpreterGetInputTensorCount(const TfLiteInterpreter* interpreter);
/* NULL when the index is out of range. */
TFLITE_GPU_API TfLiteTensor* TfLiteInterpreterGetInputTensor(const TfLiteInterpreter* interpreter, int32_t input_index);
/* Needs TfLiteInterpreterAllocateTensors afterwards. */
TFLITE_GPU_API TfLiteStatus TfLiteInterpreterResizeInputTensor(TfLiteInterpreter* interpreter, int32_t input_index,
                                                const int* input_dims, int32_t input_dims_size);
TFLITE_GPU_API TfLiteStatus TfLiteInterpreterAllocateTensors(TfLiteInterpreter* interpreter);
TFLITE_GPU_API TfLiteStatus TfLiteInterpreterInvoke(TfLiteInterpreter* interpreter);
TFLITE_GPU_API int32_t TfLiteInterpreterGetOutputTensorCount(const TfLiteInterpreter* interpreter);
/* Copies an output a delegate kept on its device to host memory first, unless
 * TfLiteInterpreterSetAllowBufferHandleOutput(interpreter, true) was called. */
TFLITE_GPU_API const TfLiteTensor* TfLiteInterpreterGetOutputTensor(const TfLiteInterpreter* interpreter, int32_t output_index);
/* TensorFlow Lite's c_api_experimental calls (Interpreter::SetAllowBufferHandleOutput /
 * EnsureTensorDataIsReadable): with allow true, delegate outputs no CPU node reads stay on the
 * device at Invoke (bound buffers hold them); EnsureTensorDataIsReadable copies one to host memory. */
TFLITE_GPU_API TfLiteStatus TfLiteInterpreterSetAllowBufferHandleOutput(const TfLiteInterpreter* interpreter,
                                                                        bool allow_buffer_handle_output);
TFLITE_GPU_API TfLiteStatus TfLiteInterpreterEnsureTensorDataIsReadable(TfLiteInterpreter* interpreter, int tensor_index);

/* ---- tensors ---- */
TFLITE_GPU_API TfLiteType TfLiteTensorType(const TfLiteTensor* tensor);
TFLITE_GPU_API int32_t TfLiteTensorNumDims(const TfLiteTensor* tensor);
/* -1 when dim_index is out of range. */
TFLITE_GPU_API int32_t TfLiteTensorDim(const TfLiteTensor* tensor, int32_t dim_index);
/* STRING tensors: the size of their buffer in TFLite's string layout (int32 count, count + 1 int32
 * offsets from the buffer start, the last one the buffer size, then the string bytes), which is
 * what TfLiteTensorData points to and TfLiteTensorCopyToBuffer copies. */
TFLITE_GPU_API size_t TfLiteTensorByteSize(const TfLiteTensor* tensor);
/* NULL until the tensors are allocated. */
TFLITE_GPU_API void* TfLiteTensorData(const TfLiteTensor* tensor);
TFLITE_GPU_API const char* TfLiteTensorName(const TfLiteTensor* tensor);
/* scale 0 and zero_point 0 when the tensor is not per-tensor quantized. */
TFLITE_GPU_API TfLiteQuantizationParams TfLiteTensorQuantizationParams(const TfLiteTensor* tensor);
/* kTfLiteError unless input_data_size equals TfLiteTensorByteSize and the tensor is allocated and not bound.
 * A STRING tensor takes a buffer of any size in TFLite's string layout whose count equals the
 * tensor's element count (checked: offsets in order, inside the buffer, the last one its size). */
TFLITE_GPU_API TfLiteStatus TfLiteTensorCopyFromBuffer(TfLiteTensor* tensor, const void* input_data, size_t input_data_size);
/* kTfLiteError also when the tensor's data is stale (a delegate output kept on the device). */
TFLITE_GPU_API TfLiteStatus TfLiteTensorCopyToBuffer(const TfLiteTensor* output_tensor, void* output_data, size_t output_data_size);

/* ---- signatures ---- */
TFLITE_GPU_API int32_t TfLiteInterpreterGetSignatureCount(const TfLiteInterpreter* interpreter);
TFLITE_GPU_API const char* TfLiteInterpreterGetSignatureKey(const TfLiteInterpreter* interpreter, int32_t signature_index);
/* NULL for an unknown key. Delete with TfLiteSignatureRunnerDelete, before the interpreter. */
TFLITE_GPU_API TfLiteSignatureRunner* TfLiteInterpreterGetSignatureRunner(const TfLiteInterpreter* interpreter,
                                                           const char* signature_key);
TFLITE_GPU_API size_t TfLiteSignatureRunnerGetInputCount(const TfLiteSignatureRunner* signature_runner);
TFLITE_GPU_API const char* TfLiteSignatureRunnerGetInputName(const TfLiteSignatureRunner* signature_runner, int32_t input_index);
TFLITE_GPU_API TfLiteStatus TfLiteSignatureRunnerResizeInputTensor(TfLiteSignatureRunner* signature_runner, const char* input_name,
                                                    const int* input_dims, int32_t input_dims_size);
TFLITE_GPU_API TfLiteStatus TfLiteSignatureRunnerAllocateTensors(TfLiteSignatureRunner* signature_runner);
TFLITE_GPU_API TfLiteTensor* TfLiteSignatureRunnerGetInputTensor(TfLiteSignatureRunner* signature_runner, const char* input_name);
TFLITE_GPU_API TfLiteStatus TfLiteSignatureRunnerInvoke(TfLiteSignatureRunner* signature_runner);
TFLITE_GPU_API size_t TfLiteSignatureRunnerGetOutputCount(const TfLiteSignatureRunner* signature_runner);
TFLITE_GPU_API const char* TfLiteSignatureRunnerGetOutputName(const TfLiteSignatureRunner* signature_runner, int32_t output_index);
TFLITE_GPU_API const TfLiteTensor* TfLiteSignatureRunnerGetOutputTensor(const TfLiteSignatureRunner* signature_runner,
                                                         const char* output_name);
TFLITE_GPU_API void TfLiteSignatureRunnerDelete(TfLiteSignatureRunner* signature_runner);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif  /* TFLITE_GPU_C_API_H_ */
