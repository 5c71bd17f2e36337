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

// SQRT: float only. TFLite's quantized SQRT (v2) truncates when requantizing; the GPU's quantized
// view rounds to the grid, so quantized SQRT stays on the CPU.
Status CheckSqrt(const GpuCheckContext& c) {
  if (c.input(0).type != DType::kFloat32)
    return Unimplemented(std::string("SQRT of ") + DTypeName(c.input(0).type) +
                         " stays on the CPU (TFLite's quantized SQRT truncates on requantizing; the GPU rounds)");
  return CheckUnary(c);
}

Status CheckBinary(const GpuCheckContext& c) {
  if (c.num_inputs() != 2) return Unimplemented("expects 2 inputs");
  TFG_RETURN_IF_ERROR(c.InputsFloat32({0, 1}));
  TFG_RETURN_IF_ERROR(c.OutputsFloat32());
  for (int i = 0; i < 2; ++i) TFG_RETURN_IF_ERROR(c.Rank4OrLess(c.input(i), "input"));
  TFG_RETURN_IF_ERROR(c.Rank4OrLess(c.output(0), "output"));
  // Numpy broadcasting (the CPU prepare already checked it); the kernel reads each input at the
  // output coordinates with ReadBroadcastDims, so any ranks <= 4 work.
  return OkStatus();
}

// TFLite's float activation is a clamp that keeps NaN (x < lo ? lo : x), and NONE clamps to the
// finite float range, so +-inf become +-FLT_MAX.
std::string Clamp(const std::string& v, const char* lo, const char* hi) {
  std::string out;
  if (lo) out += v + " = select(" + v + ", (float4)(" + lo + "), " + v + " < (float4)(" + lo + ")); ";
  if (hi) out += v + " = select(" + v + ", (float4)(" + hi + "), " + v + " > (float4)(" + hi + ")); ";
  return out;
}

// Reads the other operand of a binary op at the output coordinates.
std::string Other(GpuBuildContext& ctx, KernelBuilder& kb, const std::string& prefix) {
  int other = ctx.chain_input() == 1 ? 0 : 1;
  std::string name = prefix + "b";
  kb.AddInput(name, ctx.input(other));
  return kb.ReadBroadcastDims(name, ctx.cpu_input(other).shape, ctx.cpu_output(0).shape);
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
    case 4: *code = "{ float4 o_ = " + b + "; " + v + " = select(o_, " + v + ", " + v + " > o_); }"; break;
    case 5: *code = "{ float4 o_ = " + b + "; " + v + " = select(o_, " + v + ", " + v + " < o_); }"; break;
    case 6: *code = "{ float4 d_ = " + v + " - " + b + "; " + v + " = d_ * d_; }"; break;
    case 7: *code = v + " = select((float4)(0.0f), (float4)(1.0f), isnotequal(" + v + ", (float4)(0.0f)) && isnotequal(" + b + ", (float4)(0.0f)));"; break;
  }
  if (kOp <= 3) *code += " " + ActivationClampCode(int(ew::FusedActivationOf(ctx.node())), v, /*finite_range=*/true);
  return OkStatus();
}

template <int kOp>
Status UnarySnippet(GpuBuildContext& ctx, KernelBuilder& kb, const std::string& v, const std::string& prefix,
                    std::string* code) {
  switch (kOp) {
    case 0: *code = Clamp(v, "0.0f", nullptr); break;
    case 1: *code = Clamp(v, "0.0f", "6.0f"); break;
    case 2: *code = Clamp(v, "-1.0f", "1.0f"); break;
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
      *code = v + " = select(" + v + " * " + kb.ReadBroadcastDims(name, ctx.cpu_input(1).shape, ctx.cpu_output(0).shape) +
              ", " + v + ", " + v + " >= (float4)(0.0f));";
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

// BOOL tensors live on the device as float 0/1 (converted at partition boundaries); only
// LOGICAL_AND takes them, so a bool tensor never reaches an op that expects real values.
Status CheckLogicalAnd(const GpuCheckContext& c) {
  if (c.num_inputs() != 2) return Unimplemented("expects 2 inputs");
  for (int i = 0; i < 2; ++i) {
    if (c.input(i).type != DType::kBool) return Unimplemented("LOGICAL_AND on the GPU takes BOOL inputs");
    TFG_RETURN_IF_ERROR(c.Rank4OrLess(c.input(i), "input"));
    if (c.input(i).is_const) return Unimplemented("constant BOOL operands stay on the CPU");
  }
  if (c.output(0).type != DType::kBool) return Unimplemented("LOGICAL_AND output must be BOOL");
  return c.Rank4OrLess(c.output(0), "output");
}

// DEQUANTIZE and QUANTIZE with ENABLE_QUANT / enable_quantization (as in TFLite): the device
// holds quantized tensors as their real values (gpu_op.h), so DEQUANTIZE (int8/uint8/int16, or
// FLOAT16) passes the value through, and QUANTIZE (from float, or requantizing from another
// grid) passes it through too: the framework snaps every quantized output to its grid.
// Constant weights never get here (DEQUANTIZE of constants is folded at allocation).
Status CheckDequantize(const GpuCheckContext& c) {
  TFG_RETURN_IF_ERROR(c.OutputsFloat32());
  TFG_RETURN_IF_ERROR(c.Rank4OrLess(c.input(0), "input"));
  if (!c.caps().enable_quant)
    return Unimplemented("quantized tensors need ENABLE_QUANT (enable_quantization) in the delegate options");
  if (c.input(0).type == DType::kFloat16) return OkStatus();
  return c.InputsFloat32({0});  // quantized, per tensor (the reason names what is not)
}

Status CheckQuantize(const GpuCheckContext& c) {
  TFG_RETURN_IF_ERROR(c.Rank4OrLess(c.input(0), "input"));
  if (c.output(0).type == DType::kFloat16) return Unimplemented("QUANTIZE to FLOAT16 stays on the CPU");
  if (!c.caps().enable_quant)
    return Unimplemented("quantized tensors need ENABLE_QUANT (enable_quantization) in the delegate options");
  TFG_RETURN_IF_ERROR(c.InputsFloat32({0}));
  TFG_RETURN_IF_ERROR(c.OutputsFloat32());  // names per-channel outputs, missing parameters
  if (!gpu::IsQuantizedActivation(c.output(0)))
    return Unimplemented(std::string("QUANTIZE output of type ") + DTypeName(c.output(0).type) +
                         " is not a quantized int8/uint8/int16 tensor");
  return OkStatus();
}

Status PassThroughSnippet(GpuBuildContext&, KernelBuilder&, const std::string&, const std::string&, std::string* code) {
  *code = "";
  return OkStatus();
}

}  // namespace

const GpuOpSupport kGpu_DEQUANTIZE = {CheckDequantize, nullptr, PassThroughSnippet, false};
const GpuOpSupport kGpu_QUANTIZE = {CheckQuantize, nullptr, PassThroughSnippet, false};
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
const GpuOpSupport kGpu_SQRT = {CheckSqrt, nullptr, UnarySnippet<7>, false};
const GpuOpSupport kGpu_RSQRT = {CheckUnary, nullptr, UnarySnippet<8>, false};
const GpuOpSupport kGpu_LEAKY_RELU = {CheckUnary, nullptr, UnarySnippet<9>, false};
const GpuOpSupport kGpu_PRELU = {CheckPrelu, nullptr, UnarySnippet<10>, false};

}  // namespace tflite_gpu
