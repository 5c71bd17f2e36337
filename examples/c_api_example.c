/* The seed's C example (TensorFlow Lite's C API with the GPU delegate), for tflite_gpu.
 * Plain C11: built by examples/CMakeLists.txt against the installed package's CMake config.
 *
 *   c_api_example MODEL INPUT.bin OUTPUT.bin [--gpu]
 *
 * Reads input 0's bytes from INPUT.bin, runs the model (on the GPU delegate with --gpu), and
 * writes output 0's bytes to OUTPUT.bin. Exit status 0 on success, 1 on any error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tflite_gpu/c_api.h"
#include "tflite_gpu/gpu_delegate.h"

static void report(void* user_data, const char* format, va_list args) {
  (void)user_data;
  fprintf(stderr, "tflite: ");
  vfprintf(stderr, format, args);
  fprintf(stderr, "\n");
}

static void* read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  void* buf = malloc(n > 0 ? (size_t)n : 1);
  if (buf && n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  *size = n > 0 ? (size_t)n : 0;
  return buf;
}

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s MODEL INPUT.bin OUTPUT.bin [--gpu]\n", argv[0]);
    return 1;
  }
  int use_gpu = argc > 4 && strcmp(argv[4], "--gpu") == 0;
  int rc = 1;
  void* input_data = NULL;
  void* output_data = NULL;
  TfLiteDelegate* delegate = NULL;
  TfLiteInterpreter* interpreter = NULL;

  /* Initialize model */
  TfLiteModel* model = TfLiteModelCreateFromFile(argv[1]);
  if (!model) return 1;

  /* Initialize interpreter with GPU delegate */
  TfLiteInterpreterOptions* options = TfLiteInterpreterOptionsCreate();
  TfLiteInterpreterOptionsSetErrorReporter(options, report, NULL);
  TfLiteInterpreterOptionsSetNumThreads(options, 2);
  if (use_gpu) {
    TfLiteGpuDelegateOptionsV2 gpu_options = TfLiteGpuDelegateOptionsV2Default();
    gpu_options.is_precision_loss_allowed = 0;  /* fp32 */
    delegate = TfLiteGpuDelegateV2Create(&gpu_options);
    TfLiteInterpreterOptionsAddDelegate(options, delegate);
  }
  interpreter = TfLiteInterpreterCreate(model, options);
  TfLiteInterpreterOptionsDelete(options);
  if (!interpreter) goto done;

  if (TfLiteInterpreterAllocateTensors(interpreter) != kTfLiteOk) goto done;

  TfLiteTensor* input = TfLiteInterpreterGetInputTensor(interpreter, 0);
  size_t input_size = 0;
  input_data = read_file(argv[2], &input_size);
  if (!input_data) {
    fprintf(stderr, "cannot read %s\n", argv[2]);
    goto done;
  }
  printf("input '%s' %s [", TfLiteTensorName(input), TfLiteTypeGetName(TfLiteTensorType(input)));
  for (int32_t d = 0; d < TfLiteTensorNumDims(input); ++d) printf(d ? ", %d" : "%d", (int)TfLiteTensorDim(input, d));
  printf("] %zu bytes\n", TfLiteTensorByteSize(input));

  /* Run inference */
  if (TfLiteTensorCopyFromBuffer(input, input_data, input_size) != kTfLiteOk) goto done;
  if (TfLiteInterpreterInvoke(interpreter) != kTfLiteOk) goto done;
  const TfLiteTensor* output = TfLiteInterpreterGetOutputTensor(interpreter, 0);
  size_t output_size = TfLiteTensorByteSize(output);
  output_data = malloc(output_size ? output_size : 1);
  if (TfLiteTensorCopyToBuffer(output, output_data, output_size) != kTfLiteOk) goto done;

  FILE* f = fopen(argv[3], "wb");
  if (!f || fwrite(output_data, 1, output_size, f) != output_size) {
    fprintf(stderr, "cannot write %s\n", argv[3]);
    if (f) fclose(f);
    goto done;
  }
  fclose(f);
  printf("output '%s' %zu bytes, %d signature(s), %s\n", TfLiteTensorName(output), output_size,
         (int)TfLiteInterpreterGetSignatureCount(interpreter), use_gpu ? "GPU delegate" : "CPU");
  rc = 0;

done:
  /* Clean up */
  TfLiteInterpreterDelete(interpreter);
  if (delegate) TfLiteGpuDelegateV2Delete(delegate);
  TfLiteModelDelete(model);
  free(input_data);
  free(output_data);
  return rc;
}
