// GPU side of RELU_0_TO_1 (unary_math.cc), ADD_N (binary_math.cc), SELECT (compare.cc) and CAST
// (cast.cc) where TFLite's GPU delegate takes them (its model_builder lists all four).
//
// RELU_0_TO_1: the clamp to [0, 1] that keeps NaN (x < 0 ? 0 : x, then > 1 ? 1), as the CPU.
// ADD_N: float32, inputs of one shape, summed in input order (input 0 + input 1 + ...), as the
// CPU; a snippet, so it fuses into the producer of input 0.
// SELECT (v1): float32 x, y of one shape; the BOOL condition (held as 0/1 on the device) has
// that shape, is a scalar, or is 1-D with x's first dimension (picks whole rows: x's first
// dimension is the device's batch). The one-element rule (output keeps a declared shape that
// differs from x's) stays on the CPU, as for SELECT_V2.
// CAST: BOOL -> FLOAT32 (the delegate's logical op -> CAST -> float pattern: the 0/1 already are
// the values), FLOAT32 -> BOOL (x != 0, so NaN is true as on the CPU) and FLOAT32 -> FLOAT32.
// Integer types stay on the CPU: the device holds tensors as float (fp16 storage keeps 11
// significant bits), which would round INT32 values.
#include "gpu/gpu_op.h"
#include "ops/elementwise/ew_common.h"

namespace tflite_gpu {
namespace {

using gpu::GpuBuildContext;
using gpu::GpuCheckContext;
using gpu::KernelBuilder;

Status FloatOnly(const Tensor& t, const char* what) {
  if (t.type != DType::kFloat32)
    return Unimplemented(std::string(what) + " has type " + DTypeName(t.type) + "; the GPU kernel takes FLOAT32");
  return OkStatus();
}

Status BoolOperand(const GpuCheckContext& c, int i) {
  if (c.input(i).type != DType::kBool) return Unimplemented("expects a BOOL input");
  if (c.input(i).is_const) return Unimplemented("constant BOOL operands stay on the CPU");
  return c.Rank4OrLess(c.input(i), "input");
}

// ---- RELU_0_TO_1
Status CheckRelu01(const GpuCheckContext& c) {
  TFG_RETURN_IF_ERROR(FloatOnly(c.input(0), "input 0"));
  TFG_RETURN_IF_ERROR(FloatOnly(c.output(0), "the output"));
  return c.Rank4OrLess(c.input(0), "input");
}

Status Relu01Snippet(GpuBuildContext&, KernelBuilder&, const std::string& v, const std::string&, std::string* code) {
  *code = v + " = select(" + v + ", (float4)(0.0f), " + v + " < (float4)(0.0f)); " + v + " = select(" + v +
          ", (float4)(1.0f), " + v + " > (float4)(1.0f));";
  return OkStatus();
}

// ---- ADD_N
Status CheckAddN(const GpuCheckContext& c) {
  if (c.num_inputs() < 1) return Unimplemented("expects at least 1 input");
  for (int i = 0; i < c.num_inputs(); ++i) {
    if (!c.has_input(i)) return Unimplemented("an input is omitted");
    TFG_RETURN_IF_ERROR(FloatOnly(c.input(i), "an input"));
    if (c.input(i).shape != c.output(0).shape) return Unimplemented("the inputs must have the output's shape");
  }
  TFG_RETURN_IF_ERROR(FloatOnly(c.output(0), "the output"));
  return c.Rank4OrLess(c.output(0), "the output");
}

Status AddNSnippet(GpuBuildContext& ctx, KernelBuilder& kb, const std::string& v, const std::string& prefix,
                   std::string* code) {
  const int n = int(ctx.node().inputs.size());
  std::string out;
  for (int i = 1; i < n; ++i) {
    const std::string name = prefix + "n" + std::to_string(i);
    kb.AddInput(name, ctx.input(i));
    out += v + " = " + v + " + " + kb.ReadBroadcastDims(name, ctx.cpu_input(i).shape, ctx.cpu_output(0).shape) + "; ";
  }
  *code = out;
  return OkStatus();
}

// ---- SELECT (v1)
enum class SelMode { kSame, kScalar, kRow };

Status SelectModeOf(const GpuCheckContext& c, SelMode* m) {
  const Dims& cs = c.input(0).shape;
  const Dims& x = c.input(1).shape;
  if (x != c.input(2).shape || x != c.output(0).shape)
    return Unimplemented("x, y and the output must have one shape (the one-element rule stays on the CPU)");
  if (cs == x) *m = SelMode::kSame;
  else if (cs.empty()) *m = SelMode::kScalar;
  else if (cs.size() == 1 && !x.empty() && cs[0] == x[0]) *m = SelMode::kRow;
  else return Unimplemented("condition shape " + DimsToString(cs) + " is not x's, a scalar or x's first dimension");
  return OkStatus();
}

Status CheckSelect(const GpuCheckContext& c) {
  if (c.num_inputs() != 3) return Unimplemented("expects 3 inputs");
  TFG_RETURN_IF_ERROR(BoolOperand(c, 0));
  for (int i = 1; i < 3; ++i) {
    TFG_RETURN_IF_ERROR(FloatOnly(c.input(i), i == 1 ? "x" : "y"));
    TFG_RETURN_IF_ERROR(c.Rank4OrLess(c.input(i), "input"));
  }
  TFG_RETURN_IF_ERROR(FloatOnly(c.output(0), "the output"));
  SelMode m;
  return SelectModeOf(c, &m);
}

Status BuildSelect(GpuBuildContext& ctx) {
  const Dims& cs = ctx.cpu_input(0).shape;
  const Dims& xs = ctx.cpu_input(1).shape;
  auto out = ctx.output(0);
  auto& kb = ctx.NewKernel("select");
  kb.AddInput("cnd", ctx.input(0));
  kb.AddInput("xa", ctx.input(1));
  kb.AddInput("ya", ctx.input(2));
  kb.AddOutput("dst", out);
  const gpu::BHWC o = out.shape;
  kb.grid = {size_t(o.w), size_t(o.h), size_t(o.slices()) * o.b};
  std::string cond;
  if (cs == xs) cond = "READ_cnd(b, y, x, s)";
  else if (cs.empty()) cond = "(float4)(LD_cnd(0, 0, 0, 0))";
  else cond = "(float4)(LD_cnd(0, 0, 0, b))";  // 1-D: x's first dimension is the batch
  kb.body =
      "int x = get_global_id(0), y = get_global_id(1), bs = get_global_id(2);\n"
      "if (x >= dst_W || y >= dst_H || bs >= dst_S * dst_B) return;\n"
      "int s = bs % dst_S, b = bs / dst_S;\n"
      "float4 c = " + cond + ";\n"
      "WRITE_dst(select(READ_ya(b, y, x, s), READ_xa(b, y, x, s), isnotequal(c, (float4)(0.0f))), b, y, x, s);\n";
  return OkStatus();
}

// ---- CAST
Status CheckCast(const GpuCheckContext& c) {
  const DType in = c.input(0).type, out = c.output(0).type;
  TFG_RETURN_IF_ERROR(c.Rank4OrLess(c.input(0), "input"));
  if (in == DType::kBool && out == DType::kFloat32) return BoolOperand(c, 0);
  if (in == DType::kFloat32 && (out == DType::kBool || out == DType::kFloat32)) return OkStatus();
  return Unimplemented(std::string("CAST ") + DTypeName(in) + " -> " + DTypeName(out) +
                       " stays on the CPU (the GPU takes BOOL -> FLOAT32, FLOAT32 -> BOOL and FLOAT32 -> FLOAT32: "
                       "device tensors hold floats, which would round integers)");
}

Status CastSnippet(GpuBuildContext& ctx, KernelBuilder&, const std::string& v, const std::string&, std::string* code) {
  if (ctx.cpu_output(0).type == DType::kBool)
    *code = v + " = select((float4)(0.0f), (float4)(1.0f), isnotequal(" + v + ", (float4)(0.0f)));";
  else
    *code = "";
  return OkStatus();
}

}  // namespace

const GpuOpSupport kGpu_RELU_0_TO_1 = {CheckRelu01, nullptr, Relu01Snippet, false};
const GpuOpSupport kGpu_ADD_N = {CheckAddN, nullptr, AddNSnippet, false};
const GpuOpSupport kGpu_SELECT = {CheckSelect, BuildSelect, nullptr, false};
const GpuOpSupport kGpu_CAST = {CheckCast, nullptr, CastSnippet, false};

}  // namespace tflite_gpu
