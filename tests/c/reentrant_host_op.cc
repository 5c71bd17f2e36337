// Re-entrancy from a C++ host (issue 12): a HostCustomOp whose eval calls back into the running
// interpreter (AllocateTensors, ResizeInputTensor, Invoke, ModifyGraphWithDelegate) gets an error
// for each call, and the outer Invoke still computes the right result (checked here against the
// model's definition: y = 2 * relu(x) + x, the custom op doubling its input).
//   usage: reentrant_host_op MODEL.tflite   (the model: RELU -> CUSTOM "MyOp" -> ADD(., x))
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "tflite_gpu/gpu_delegate.h"
#include "tflite_gpu/interpreter.h"

using namespace tflite_gpu;

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  Status st;
  auto model = FlatBufferModel::BuildFromFile(argv[1], &st);
  if (!model) {
    std::fprintf(stderr, "load: %s\n", st.message().c_str());
    return 1;
  }
  Interpreter* self = nullptr;
  // Never null; a missing OpenCL device would only show when it partitions, after the check.
  TfLiteDelegate* gpu = TfLiteGpuDelegateV2Create(nullptr);
  std::vector<std::string> refused;
  int calls = 0;
  auto op = std::make_shared<HostCustomOp>();
  op->name = "MyOp";
  op->prepare = [](HostOpContext& ctx) { return ctx.SetOutputShape(0, ctx.input(0)->shape); };
  op->eval = [&](HostOpContext& ctx) -> Status {
    ++calls;
    const std::vector<std::pair<const char*, Status>> results = {
        {"AllocateTensors", self->AllocateTensors()},
        {"ResizeInputTensor", self->ResizeInputTensor(self->inputs()[0], {2, 3})},
        {"Invoke", self->Invoke()},
        {"ModifyGraphWithDelegate", self->ModifyGraphWithDelegate(gpu)},
    };
    for (auto& r : results) {
      if (r.second.ok()) {
        std::fprintf(stderr, "%s ran from inside Invoke\n", r.first);
        return Internal("re-entrant call ran");
      }
      refused.push_back(std::string(r.first) + ": " + r.second.message());
    }
    const Tensor* in = ctx.input(0);
    Tensor* out = ctx.output(0);
    for (int64_t i = 0; i < in->num_elements(); ++i)
      reinterpret_cast<float*>(out->data)[i] = 2 * reinterpret_cast<const float*>(in->data)[i];
    return OkStatus();
  };
  InterpreterOptions opts;
  opts.num_threads = 1;
  opts.host_custom_ops.push_back(op);
  std::unique_ptr<Interpreter> interp;
  st = InterpreterBuilder(*model, ops::builtin::BuiltinOpResolver(), opts)(&interp);
  if (!st.ok()) {
    std::fprintf(stderr, "build: %s\n", st.message().c_str());
    return 1;
  }
  self = interp.get();
  if (!(st = interp->AllocateTensors()).ok()) {
    std::fprintf(stderr, "allocate: %s\n", st.message().c_str());
    return 1;
  }
  const float x[6] = {1, -2, 3, -0.5f, 4, -6};
  for (int round = 0; round < 2; ++round) {
    float* in = interp->typed_input_tensor<float>(0);
    for (int i = 0; i < 6; ++i) in[i] = x[i] * float(round + 1);
    if (!(st = interp->Invoke()).ok()) {
      std::fprintf(stderr, "invoke: %s\n", st.message().c_str());
      return 1;
    }
    const float* y = interp->typed_output_tensor<float>(0);
    for (int i = 0; i < 6; ++i) {
      float v = x[i] * float(round + 1);
      float want = 2 * (v > 0 ? v : 0) + v;
      if (std::fabs(y[i] - want) > 1e-6f) {
        std::fprintf(stderr, "round %d y[%d] = %g, want %g\n", round, i, y[i], want);
        return 1;
      }
    }
  }
  TfLiteGpuDelegateV2Delete(gpu);
  if (calls != 2 || refused.size() != 8) {
    std::fprintf(stderr, "calls %d refused %zu\n", calls, refused.size());
    return 1;
  }
  for (size_t i = 0; i < 4; ++i) std::printf("%s\n", refused[i].c_str());
  std::printf("ok\n");
  return 0;
}
