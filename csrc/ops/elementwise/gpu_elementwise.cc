// GPU side of the elementwise family: every op here is a snippet on the float4 `value`, fused
// into the kernel that produces its first input, or run as a standalone kernel.
#include "gpu/gpu_op.h"
#include "ops/elementwise/ew_common.h"

namespace tflite_gpu {
namespace {

using gpu::GpuBuildContext;
using gpu::GpuCheckContext;
using gpu::KernelBuilder;

Status CheckUnary(const GpuCheckContext& c) {
  TFG_RETURN_IF_ERROR(c.InputsFloat32({0}));
  TFG_RETURN_IF_ERROR(c.OutputsFloat32());
  return c.Rank4OrLess(c.input(0), "input");
}

Status CheckBinary(const GpuCheckContext& c) {
  if (c.num_inputs() != 2) return Unimplemented("expects 2 inputs");
  TFG_RETURN_IF_ERROR(c.InputsFloat32({0, 1}));
  TFG_RETURN_IF_ERROR(c.OutputsFloat32());
  for (int i = 0; i < 2; ++i) TFG_RETURN_IF_ERROR(c.Rank4OrLess(c.input(i), "input"));
  TFG_RETURN_IF_ERROR(c.Rank4OrLess(c.output(0), "output"));
  // The output carries the full broadcast shape; each input broadcasts along its size-1 dims.
  gpu::BHWC o, a;
  gpu::ToBHWC(c.output(0).shape, &o);
  for (int i = 0; i < 2; ++i) {
    gpu::ToBHWC(c.input(i).shape, &a);
    // Rank alignment differs between numpy broadcasting and the BHWC mapping for mixed ranks;
    // accept equal ranks, scalars and per-channel vectors.
    bool scalar_or_channel = c.input(i).shape.size() <= 1;
    if (!scalar_or_channel && c.input(i).shape.size() != c.output(0).shape.size())
      return Unimplemented("broadcasting between ranks " + std::to_string(c.input(i).shape.size()) + " and " +
                           std::to_string(c.output(0).shape.size()) + " is not supported on the GPU");
    if ((a.b != 1 && a.b != o.b) || (a.h != 1 && a.h != o.h) || (a.w != 1 && a.w != o.w) || (a.c != 1 && a.c != o.c))
      return Unimplemented("unsupported broadcast");
  }
  return OkStatus();
}

std::string ActivationCode(Activation a, const std::string& v) {
  switch (a) {
    case Activation::kRelu: return v + " = fmax(" + v + ", (float4)(0.0f));";
    case Activation::kRelu6: return v + " = clamp(" + v + ", (float4)(0.0f), (float4)(6.0f));";
    case Activation::kReluN1To1: return v + " = clamp(" + v + ", (float4)(-1.0f), (float4)(1.0f));";
    default: return "";
  }
}

// Reads the other operand of a binary op at the output coordinates.
std::string Other(GpuBuildContext& ctx, KernelBuilder& kb, const std::string& prefix) {
  int other = ctx.chain_input() == 1 ? 0 : 1;
  std::string name = prefix + "b";
  kb.AddInput(name, ctx.input(other));
  gpu::BHWC out;
  gpu::ToBHWC(ctx.cpu_output(0).shape, &out);
  return kb.ReadBroadcast(name, out);
}

template <int kOp>
Status BinarySnippet(GpuBuildContext& ctx, KernelBuilder& kb, const std::string& v, const std::string& prefix,
                     std::string* code) {
  std::string b = Other(ctx, kb, prefix);
  // For non-commutative ops the chain is always input 0 (the framework guarantees it).
  switch (kOp) {
    case 0: *code = v + " = " + v + " + " + b + ";"; break;
    case 1: *code = v + " = " + v + " - " + b + ";"; break;
    case 2: *code = v + " = " + v + " * " + b + ";"; break;
    case 3: *code = v + " = " + v + " / " + b + ";"; break;
    case 4: *code = v + " = fmax(" + v + ", " + b + ");"; break;
    case 5: *code = v + " = fmin(" + v + ", " + b + ");"; break;
    case 6: *code = "{ float4 d_ = " + v + " - " + b + "; " + v + " = d_ * d_; }"; break;
    case 7: *code = v + " = select((float4)(0.0f), (float4)(1.0f), isnotequal(" + v + ", (float4)(0.0f)) && isnotequal(" + b + ", (float4)(0.0f)));"; break;
  }
  if (kOp <= 3) *code += " " + ActivationCode(ew::FusedActivationOf(ctx.node()), v);
  return OkStatus();
}

template <int kOp>
Status UnarySnippet(GpuBuildContext& ctx, KernelBuilder& kb, const std::string& v, const std::string& prefix,
                    std::string* code) {
  switch (kOp) {
    case 0: *code = v + " = fmax(" + v + ", (float4)(0.0f));"; break;
    case 1: *code = v + " = clamp(" + v + ", (float4)(0.0f), (float4)(6.0f));"; break;
    case 2: *code = v + " = clamp(" + v + ", (float4)(-1.0f), (float4)(1.0f));"; break;
    case 3: *code = v + " = 1.0f / (1.0f + exp(-" + v + "));"; break;
    case 4: *code = v + " = tanh(" + v + ");"; break;
    case 5: *code = v + " = exp(" + v + ");"; break;
    case 6: *code = v + " = " + v + " * clamp(" + v + " + 3.0f, (float4)(0.0f), (float4)(6.0f)) * (1.0f / 6.0f);"; break;
    case 7: *code = v + " = sqrt(" + v + ");"; break;
    case 8: *code = v + " = rsqrt(" + v + ");"; break;
    case 9: {
      std::string a = std::to_string(ew::LeakyAlphaOf(ctx.node()));
      *code = v + " = select(" + v + " * " + a + "f, " + v + ", " + v + " > (float4)(0.0f));";
      break;
    }
    case 10: {  // PRELU: alpha broadcast to the input
      std::string name = prefix + "alpha";
      kb.AddInput(name, ctx.input(1));
      gpu::BHWC out;
      gpu::ToBHWC(ctx.cpu_output(0).shape, &out);
      *code = v + " = select(" + v + " * " + kb.ReadBroadcast(name, out) + ", " + v + ", " + v + " >= (float4)(0.0f));";
      break;
    }
  }
  return OkStatus();
}

Status CheckPrelu(const GpuCheckContext& c) {
  TFG_RETURN_IF_ERROR(CheckBinary(c));
  if (c.output(0).shape != c.input(0).shape) return Unimplemented("alpha larger than the input");
  return OkStatus();
}

Status CheckLogicalAnd(const GpuCheckContext& c) {
  return Unimplemented("bool tensors stay on the CPU");
}

}  // namespace

const GpuOpSupport kGpu_ADD = {CheckBinary, nullptr, BinarySnippet<0>, true};
const GpuOpSupport kGpu_SUB = {CheckBinary, nullptr, BinarySnippet<1>, false};
const GpuOpSupport kGpu_MUL = {CheckBinary, nullptr, BinarySnippet<2>, true};
const GpuOpSupport kGpu_DIV = {CheckBinary, nullptr, BinarySnippet<3>, false};
const GpuOpSupport kGpu_MAXIMUM = {CheckBinary, nullptr, BinarySnippet<4>, true};
const GpuOpSupport kGpu_MINIMUM = {CheckBinary, nullptr, BinarySnippet<5>, true};
const GpuOpSupport kGpu_SQUARED_DIFFERENCE = {CheckBinary, nullptr, BinarySnippet<6>, true};
const GpuOpSupport kGpu_LOGICAL_AND = {CheckLogicalAnd, nullptr, BinarySnippet<7>, true};
const GpuOpSupport kGpu_RELU = {CheckUnary, nullptr, UnarySnippet<0>, false};
const GpuOpSupport kGpu_RELU6 = {CheckUnary, nullptr, UnarySnippet<1>, false};
const GpuOpSupport kGpu_RELU_N1_TO_1 = {CheckUnary, nullptr, UnarySnippet<2>, false};
const GpuOpSupport kGpu_LOGISTIC = {CheckUnary, nullptr, UnarySnippet<3>, false};
const GpuOpSupport kGpu_TANH = {CheckUnary, nullptr, UnarySnippet<4>, false};
const GpuOpSupport kGpu_EXP = {CheckUnary, nullptr, UnarySnippet<5>, false};
const GpuOpSupport kGpu_HARD_SWISH = {CheckUnary, nullptr, UnarySnippet<6>, false};
const GpuOpSupport kGpu_SQRT = {CheckUnary, nullptr, UnarySnippet<7>, false};
const GpuOpSupport kGpu_RSQRT = {CheckUnary, nullptr, UnarySnippet<8>, false};
const GpuOpSupport kGpu_LEAKY_RELU = {CheckUnary, nullptr, UnarySnippet<9>, false};
const GpuOpSupport kGpu_PRELU = {CheckPrelu, nullptr, UnarySnippet<10>, false};

}  // namespace tflite_gpu
