#include <climits>
#include <cmath>
#include <cstdint>

#include "ops/op_registry.h"
#include "runtime/subgraph.h"

namespace tflite_gpu {

Tensor& OpContext::input(int i) {
  if (i >= 0 && i < num_inputs()) {
    int t = node_->inputs[i];
    if (i < 64) asked_ |= uint64_t(1) << i;
    if (t >= 0 && size_t(t) < sg_->tensors_size()) return sg_->tensor(t);
  }
  return Missing(i, true);
}
Tensor& OpContext::output(int i) {
  if (i >= 0 && i < num_outputs()) {
    int t = node_->outputs[i];
    if (t >= 0 && size_t(t) < sg_->tensors_size()) return sg_->tensor(t);
  }
  return Missing(i, false);
}

Tensor& OpContext::Missing(int i, bool is_input) {
  // One placeholder per thread, reset on every use (a kernel may have written to the last one).
  static thread_local Tensor placeholder;
  placeholder = Tensor();
  placeholder.name = "<absent>";
  placeholder.shape = {0};
  placeholder.shape_signature = {0};
  int& slot = is_input ? missing_input_ : missing_output_;
  if (slot < 0) slot = i < 0 ? INT32_MAX : i;
  return placeholder;
}

uint64_t OpContext::UnacknowledgedAbsentInputs() const {
  uint64_t out = 0;
  for (int i = 0; i < num_inputs() && i < 64; ++i)
    if (node_->inputs[i] < 0 && !(asked_ & (uint64_t(1) << i))) out |= uint64_t(1) << i;
  return out;
}

Status OpContext::SetOutputShape(int i, const Dims& shape) {
  if (i < 0 || i >= num_outputs() || node_->outputs[i] < 0) {
    Missing(i, false);
    return Error("output " + std::to_string(i) + " does not exist (the node has " + std::to_string(num_outputs()) +
                 " outputs)");
  }
  return sg_->SetTensorShape(node_->outputs[i], shape);
}

Status OpContext::SetOutputType(int i, DType t) {
  Tensor& o = output(i);
  if (DTypeSize(t) == 0) return Error(std::string("unsupported output type ") + DTypeName(t));
  o.type = t;
  return OkStatus();
}
void OpContext::SetOutputDynamic(int i) { output(i).alloc = Allocation::kDynamic; }
bool OpContext::IsConstantOrPersistent(const Tensor& t) const { return t.is_const; }
void* OpContext::scratch() { return sg_->scratch(); }

Status OpContext::Error(const std::string& msg) const {
  return InvalidArgument(std::string(node_->op ? node_->op->name : "op") + ": " + msg);
}

Status OpContext::CheckArity(int min_in, int max_in, int min_out, int max_out) const {
  int ni = num_inputs(), no = num_outputs();
  if (ni < min_in || ni > max_in)
    return Error("expects " + (min_in == max_in ? std::to_string(min_in) : std::to_string(min_in) + ".." + std::to_string(max_in)) +
                 " inputs, got " + std::to_string(ni));
  if (no < min_out || no > max_out)
    return Error("expects " + (min_out == max_out ? std::to_string(min_out) : std::to_string(min_out) + ".." + std::to_string(max_out)) +
                 " outputs, got " + std::to_string(no));
  return OkStatus();
}

Status OpContext::CheckType(const Tensor& t, DType expect, const char* what) const {
  if (t.type != expect)
    return Error(std::string(what) + " has type " + DTypeName(t.type) + ", expected " + DTypeName(expect));
  return OkStatus();
}

Status CheckActivation(int v, Activation* out) {
  if (v < 0 || v > 4) return InvalidArgument("unsupported fused activation function " + std::to_string(v));
  *out = static_cast<Activation>(v);
  return OkStatus();
}

Status CheckPadding(int v, Padding* out) {
  if (v != 0 && v != 1) return InvalidArgument("unknown padding " + std::to_string(v));
  *out = static_cast<Padding>(v);
  return OkStatus();
}

int ConvOutputSize(Padding p, int in, int filter, int stride, int dilation) {
  int64_t eff = (int64_t(filter) - 1) * dilation + 1;  // int64: hostile sizes must not overflow
  if (stride <= 0) return 0;
  if (p == Padding::kSame) return int((int64_t(in) + stride - 1) / stride);
  return in >= eff ? int((in - eff + stride) / stride) : 0;
}

int ConvPadBefore(Padding p, int in, int filter, int stride, int dilation, int out) {
  if (p == Padding::kValid) return 0;
  int64_t eff = (int64_t(filter) - 1) * dilation + 1;
  int64_t total = std::max<int64_t>(0, (int64_t(out) - 1) * stride + eff - in);
  return int(std::min<int64_t>(total / 2, INT32_MAX));
}

}  // namespace tflite_gpu
