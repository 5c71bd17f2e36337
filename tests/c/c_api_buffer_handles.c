/* Buffer-handle outputs through the C API from C11 (tests/test_cpp_example.py builds and runs it):
 * TfLiteInterpreterSetAllowBufferHandleOutput keeps a GPU output on the device at Invoke,
 * TfLiteTensorCopyToBuffer refuses the stale tensor, TfLiteInterpreterEnsureTensorDataIsReadable
 * copies it; binding before the delegate is applied, or a NULL delegate, is an error.
 *   c_api_buffer_handles MODEL OUTPUT_TENSOR_INDEX  (MODEL: z = x + y, [1, 3] float32, on the GPU) */
#include <stdio.h>
#include <stdlib.h>

#include "tflite_gpu/c_api.h"
#include "tflite_gpu/gpu_delegate.h"

static int errors_reported = 0;
static void report(void* user_data, const char* format, va_list args) {
  (void)user_data;
  ++errors_reported;
  fprintf(stderr, "reported: ");
  vfprintf(stderr, format, args);
  fprintf(stderr, "\n");
}

#define CHECK(cond)                                              \
  do {                                                           \
    if (!(cond)) {                                               \
      fprintf(stderr, "FAILED line %d: %s\n", __LINE__, #cond); \
      return 1;                                                  \
    }                                                            \
  } while (0)

int main(int argc, char** argv) {
  CHECK(argc == 3);
  int out_index = atoi(argv[2]);
  TfLiteGpuDelegateOptionsV2 opts = TfLiteGpuDelegateOptionsV2Default();
  TfLiteDelegate* delegate = TfLiteGpuDelegateV2Create(&opts);
  CHECK(delegate != NULL);
  /* Before the delegate is applied: an error (the reason goes to the log), not a crash. */
  CHECK(TfLiteGpuDelegateBindBufferToTensor(delegate, NULL, 0) == kTfLiteError);
  CHECK(!TFLGpuDelegateBindMetalBufferToTensor(delegate, 0, NULL));
  CHECK(TfLiteGpuDelegateBindBufferToTensor(NULL, NULL, 0) == kTfLiteError);

  TfLiteModel* model = TfLiteModelCreateFromFile(argv[1]);
  CHECK(model != NULL);
  TfLiteInterpreterOptions* options = TfLiteInterpreterOptionsCreate();
  TfLiteInterpreterOptionsSetErrorReporter(options, report, NULL);
  TfLiteInterpreterOptionsAddDelegate(options, delegate);
  TfLiteInterpreter* it = TfLiteInterpreterCreate(model, options);
  TfLiteInterpreterOptionsDelete(options);
  TfLiteModelDelete(model);
  CHECK(it != NULL);
  CHECK(TfLiteInterpreterAllocateTensors(it) == kTfLiteOk);
  float x[3] = {1, -2, 3}, y[3] = {10, 20, 30}, z[3] = {0, 0, 0};
  CHECK(TfLiteTensorCopyFromBuffer(TfLiteInterpreterGetInputTensor(it, 0), x, sizeof(x)) == kTfLiteOk);
  CHECK(TfLiteTensorCopyFromBuffer(TfLiteInterpreterGetInputTensor(it, 1), y, sizeof(y)) == kTfLiteOk);

  CHECK(TfLiteInterpreterSetAllowBufferHandleOutput(it, true) == kTfLiteOk);
  CHECK(TfLiteInterpreterInvoke(it) == kTfLiteOk);
  const TfLiteTensor* out = TfLiteInterpreterGetOutputTensor(it, 0); /* no copy: allowed to stay */
  CHECK(out != NULL);
  CHECK(TfLiteTensorCopyToBuffer(out, z, sizeof(z)) == kTfLiteError); /* stale: refused */
  CHECK(TfLiteInterpreterEnsureTensorDataIsReadable(it, out_index) == kTfLiteOk);
  CHECK(TfLiteTensorCopyToBuffer(out, z, sizeof(z)) == kTfLiteOk);
  for (int i = 0; i < 3; ++i) CHECK(z[i] == x[i] + y[i]);

  /* Default again: the output is read at Invoke. */
  x[0] = 100;
  CHECK(TfLiteTensorCopyFromBuffer(TfLiteInterpreterGetInputTensor(it, 0), x, sizeof(x)) == kTfLiteOk);
  CHECK(TfLiteInterpreterSetAllowBufferHandleOutput(it, false) == kTfLiteOk);
  CHECK(TfLiteInterpreterInvoke(it) == kTfLiteOk);
  CHECK(TfLiteTensorCopyToBuffer(TfLiteInterpreterGetOutputTensor(it, 0), z, sizeof(z)) == kTfLiteOk);
  CHECK(z[0] == 110);
  CHECK(TfLiteInterpreterEnsureTensorDataIsReadable(it, 9999) == kTfLiteError);
  CHECK(TfLiteInterpreterSetAllowBufferHandleOutput(NULL, true) == kTfLiteError);

  TfLiteInterpreterDelete(it);
  TfLiteGpuDelegateV2Delete(delegate);
  printf("all ok, %d errors reported as expected\n", errors_reported);
  return 0;
}
