/* Exercises the rest of the C API from C11 (tests/test_cpp_example.py builds and runs it):
 * signature runners, resize, quantization parameters, the error reporter and NULL handling.
 *   c_api_signatures MODEL  -> prints one line per check; exit 0 when every call behaved. */
#include <stdio.h>
#include <string.h>

#include "tflite_gpu/c_api.h"

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
  CHECK(argc == 2);
  CHECK(TfLiteModelCreateFromFile("/nonexistent/model.tflite") == NULL);
  TfLiteModel* model = TfLiteModelCreateFromFile(argv[1]);
  CHECK(model != NULL);
  TfLiteInterpreterOptions* options = TfLiteInterpreterOptionsCreate();
  TfLiteInterpreterOptionsSetErrorReporter(options, report, NULL);
  TfLiteInterpreter* it = TfLiteInterpreterCreate(model, options);
  TfLiteInterpreterOptionsDelete(options);
  TfLiteModelDelete(model); /* the interpreter keeps what it needs */
  CHECK(it != NULL);

  /* plain interpreter calls, dynamic batch: resize input 0 and 1 to [2, 3] */
  CHECK(TfLiteInterpreterGetInputTensorCount(it) == 2);
  CHECK(TfLiteInterpreterGetOutputTensorCount(it) == 1);
  CHECK(TfLiteInterpreterGetInputTensor(it, 5) == NULL);
  int dims[2] = {2, 3};
  CHECK(TfLiteInterpreterResizeInputTensor(it, 0, dims, 2) == kTfLiteOk);
  CHECK(TfLiteInterpreterResizeInputTensor(it, 1, dims, 2) == kTfLiteOk);
  int bad[2] = {2, -3};
  int before = errors_reported;
  CHECK(TfLiteInterpreterResizeInputTensor(it, 0, bad, 2) == kTfLiteError);
  CHECK(errors_reported == before + 1);
  CHECK(TfLiteInterpreterAllocateTensors(it) == kTfLiteOk);
  TfLiteTensor* a = TfLiteInterpreterGetInputTensor(it, 0);
  TfLiteTensor* b = TfLiteInterpreterGetInputTensor(it, 1);
  CHECK(TfLiteTensorType(a) == kTfLiteFloat32);
  CHECK(TfLiteTensorNumDims(a) == 2 && TfLiteTensorDim(a, 0) == 2 && TfLiteTensorDim(a, 1) == 3);
  CHECK(TfLiteTensorDim(a, 7) == -1);
  CHECK(TfLiteTensorByteSize(a) == 24);
  CHECK(strcmp(TfLiteTensorName(a), "x") == 0);
  TfLiteQuantizationParams q = TfLiteTensorQuantizationParams(a);
  CHECK(q.scale == 0.0f && q.zero_point == 0);
  float x[6] = {1, -2, 3, -4, 5, -6}, y[6] = {10, 20, 30, 40, 50, 60}, z[6];
  CHECK(TfLiteTensorCopyFromBuffer(a, x, 5 * sizeof(float)) == kTfLiteError); /* wrong size */
  CHECK(TfLiteTensorCopyFromBuffer(a, x, sizeof x) == kTfLiteOk);
  CHECK(TfLiteTensorCopyFromBuffer(b, y, sizeof y) == kTfLiteOk);
  CHECK(TfLiteInterpreterInvoke(it) == kTfLiteOk);
  const TfLiteTensor* out = TfLiteInterpreterGetOutputTensor(it, 0);
  CHECK(TfLiteTensorCopyToBuffer(out, z, sizeof z) == kTfLiteOk);
  for (int i = 0; i < 6; ++i) CHECK(z[i] == x[i] + y[i]);
  printf("interpreter ok\n");

  /* signature runner */
  CHECK(TfLiteInterpreterGetSignatureCount(it) == 1);
  CHECK(strcmp(TfLiteInterpreterGetSignatureKey(it, 0), "serving_default") == 0);
  CHECK(TfLiteInterpreterGetSignatureKey(it, 1) == NULL);
  CHECK(TfLiteInterpreterGetSignatureRunner(it, "nope") == NULL);
  TfLiteSignatureRunner* r = TfLiteInterpreterGetSignatureRunner(it, "serving_default");
  CHECK(r != NULL);
  CHECK(TfLiteSignatureRunnerGetInputCount(r) == 2 && TfLiteSignatureRunnerGetOutputCount(r) == 1);
  CHECK(strcmp(TfLiteSignatureRunnerGetInputName(r, 0), "lhs") == 0);
  CHECK(strcmp(TfLiteSignatureRunnerGetInputName(r, 1), "rhs") == 0);
  CHECK(strcmp(TfLiteSignatureRunnerGetOutputName(r, 0), "sum") == 0);
  int one[2] = {1, 3};
  CHECK(TfLiteSignatureRunnerResizeInputTensor(r, "lhs", one, 2) == kTfLiteOk);
  CHECK(TfLiteSignatureRunnerResizeInputTensor(r, "rhs", one, 2) == kTfLiteOk);
  CHECK(TfLiteSignatureRunnerResizeInputTensor(r, "nope", one, 2) == kTfLiteError);
  CHECK(TfLiteSignatureRunnerAllocateTensors(r) == kTfLiteOk);
  CHECK(TfLiteSignatureRunnerGetInputTensor(r, "nope") == NULL);
  CHECK(TfLiteTensorCopyFromBuffer(TfLiteSignatureRunnerGetInputTensor(r, "lhs"), x, 3 * sizeof(float)) == kTfLiteOk);
  CHECK(TfLiteTensorCopyFromBuffer(TfLiteSignatureRunnerGetInputTensor(r, "rhs"), y, 3 * sizeof(float)) == kTfLiteOk);
  CHECK(TfLiteSignatureRunnerInvoke(r) == kTfLiteOk);
  CHECK(TfLiteTensorCopyToBuffer(TfLiteSignatureRunnerGetOutputTensor(r, "sum"), z, 3 * sizeof(float)) == kTfLiteOk);
  for (int i = 0; i < 3; ++i) CHECK(z[i] == x[i] + y[i]);
  TfLiteSignatureRunnerDelete(r);
  printf("signature runner ok\n");

  /* a resized input's storage follows at AllocateTensors: copying the new size in or out before
   * that is refused (it used to write past the old storage) */
  int four[2] = {4, 3};
  float big[12] = {0};
  CHECK(TfLiteInterpreterResizeInputTensor(it, 0, four, 2) == kTfLiteOk);
  CHECK(TfLiteTensorCopyFromBuffer(TfLiteInterpreterGetInputTensor(it, 0), big, sizeof big) == kTfLiteError);
  CHECK(TfLiteTensorCopyToBuffer(TfLiteInterpreterGetInputTensor(it, 0), big, sizeof big) == kTfLiteError);
  CHECK(TfLiteInterpreterAllocateTensors(it) == kTfLiteOk);
  CHECK(TfLiteTensorCopyFromBuffer(TfLiteInterpreterGetInputTensor(it, 0), big, sizeof big) == kTfLiteOk);
  printf("resize before allocate ok\n");

  /* NULL handles are refused, never dereferenced */
  CHECK(TfLiteInterpreterAllocateTensors(NULL) == kTfLiteError);
  CHECK(TfLiteInterpreterInvoke(NULL) == kTfLiteError);
  CHECK(TfLiteInterpreterGetInputTensorCount(NULL) == 0);
  CHECK(TfLiteTensorByteSize(NULL) == 0 && TfLiteTensorData(NULL) == NULL);
  CHECK(TfLiteInterpreterCreate(NULL, NULL) == NULL);
  CHECK(strcmp(TfLiteTypeGetName(kTfLiteInt8), "INT8") == 0);
  TfLiteInterpreterDelete(it);
  printf("all ok, %d errors reported as expected\n", errors_reported);
  return 0;
}
