// The seed document's C++ example, on tflite_gpu: build the model from a file, create the
// interpreter, allocate, write the input, invoke, read the output.
//
//   minimal MODEL.tflite INPUT.bin OUTPUT.bin [num_threads]
// INPUT.bin holds the raw bytes of input 0; OUTPUT.bin receives the raw bytes of output 0.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <vector>

#include "tflite_gpu/interpreter.h"

using namespace tflite_gpu;

static bool WriteToInputTensor(Tensor* t, const std::vector<char>& bytes) {
  if (bytes.size() != t->bytes) {
    std::fprintf(stderr, "input file has %zu bytes, input tensor needs %zu\n", bytes.size(), t->bytes);
    return false;
  }
  std::memcpy(t->data, bytes.data(), bytes.size());
  return true;
}

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s MODEL.tflite INPUT.bin OUTPUT.bin [num_threads]\n", argv[0]);
    return 2;
  }
  const char* model_path = argv[1];

  // Set up interpreter.
  Status status;
  auto model = FlatBufferModel::BuildFromFile(model_path, &status);
  if (!model) {
    std::fprintf(stderr, "%s\n", status.message().c_str());
    return 1;
  }
  ops::builtin::BuiltinOpResolver op_resolver;
  std::unique_ptr<Interpreter> interpreter;
  InterpreterBuilder builder(*model, op_resolver);
  if (argc > 4) builder.SetNumThreads(std::atoi(argv[4]));
  if (builder(&interpreter) != kTfLiteOk) return 1;
  status = interpreter->AllocateTensors();
  if (!status.ok()) {
    std::fprintf(stderr, "AllocateTensors: %s\n", status.message().c_str());
    return 1;
  }

  // Run inference.
  std::ifstream in(argv[2], std::ios::binary);
  std::vector<char> input((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!WriteToInputTensor(interpreter->input_tensor(0), input)) return 1;
  status = interpreter->Invoke();
  if (status != kTfLiteOk) {
    std::fprintf(stderr, "Invoke: %s\n", status.message().c_str());
    return 1;
  }
  const Tensor* out = interpreter->output_tensor(0);
  std::ofstream(argv[3], std::ios::binary).write(reinterpret_cast<const char*>(out->data), std::streamsize(out->bytes));
  std::printf("ok: output 0 %s, %zu bytes\n", DimsToString(out->shape).c_str(), out->bytes);
  return 0;
}
