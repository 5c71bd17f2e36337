// The seed document's C++ GPU example on tflite_gpu: the minimal example plus the GPU lines
// (create the delegate, ModifyGraphWithDelegate, Invoke, delete the delegate).
//
//   gpu_delegate MODEL.tflite INPUT.bin OUTPUT.bin [fp16]
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <vector>

#include "tflite_gpu/gpu_delegate.h"
#include "tflite_gpu/interpreter.h"

using namespace tflite_gpu;

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s MODEL.tflite INPUT.bin OUTPUT.bin [fp16]\n", argv[0]);
    return 2;
  }
  // Set up interpreter.
  auto model = FlatBufferModel::BuildFromFile(argv[1]);
  if (!model) return 1;
  ops::builtin::BuiltinOpResolver op_resolver;
  std::unique_ptr<Interpreter> interpreter;
  InterpreterBuilder(*model, op_resolver)(&interpreter);

  // NEW: Prepare GPU delegate.
  TfLiteGpuDelegateOptionsV2 options = TfLiteGpuDelegateOptionsV2Default();
  if (argc > 4 && std::strcmp(argv[4], "fp16") == 0) options.is_precision_loss_allowed = 1;
  auto* delegate = TfLiteGpuDelegateV2Create(&options);
  Status st = interpreter->ModifyGraphWithDelegate(delegate);
  if (st != kTfLiteOk) {
    std::fprintf(stderr, "ModifyGraphWithDelegate: %s\n", st.message().c_str());
    TfLiteGpuDelegateV2Delete(delegate);
    return 3;
  }
  DelegationReport report = interpreter->delegation_report();
  GpuDelegateInfo info = GetGpuDelegateInfo(delegate);
  std::printf("device: %s, precision %s, delegated %d/%d nodes in %d partition(s)\n", info.device_name.c_str(),
              info.precision.c_str(), report.delegated_nodes, report.total_nodes, report.partitions);
  for (const DelegationReport::Unsupported& u : report.unsupported)
    std::printf("unsupported: node %d %s v%d: %s\n", u.node, u.op.c_str(), u.version, u.reason.c_str());

  // Run inference.
  std::ifstream in(argv[2], std::ios::binary);
  std::vector<char> input((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Tensor* t = interpreter->input_tensor(0);
  if (input.size() != t->bytes) {
    std::fprintf(stderr, "input file has %zu bytes, input tensor needs %zu\n", input.size(), t->bytes);
    return 1;
  }
  std::memcpy(interpreter->typed_input_tensor<float>(0), input.data(), input.size());
  if (interpreter->Invoke() != kTfLiteOk) return 1;
  const Tensor* out = interpreter->output_tensor(0);
  std::ofstream(argv[3], std::ios::binary)
      .write(reinterpret_cast<const char*>(interpreter->typed_output_tensor<float>(0)), std::streamsize(out->bytes));

  // NEW: Clean up.
  TfLiteGpuDelegateV2Delete(delegate);
  return 0;
}
