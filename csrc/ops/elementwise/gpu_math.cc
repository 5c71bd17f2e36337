// GPU side of the comparison / math ops (compare.cc, unary_math.cc, binary_math.cc) and CUMSUM
// (pooling/norm.cc): the ops TFLite's GPU delegate takes, and CEIL / ROUND / ATAN2, which newer
// TFLite GPU delegates (ML Drift) take. Elementwise ones are snippets on the
// float4 `value`, fused into their producer or run standalone; CUMSUM is its own kernel.
//
// BOOL tensors live on the device as float 0/1 (converted at partition boundaries), so the
// comparisons write 0/1 and LOGICAL_OR / LOGICAL_NOT / SELECT_V2's condition read them as
// "!= 0". Numerics follow the CPU kernels: SIGN keeps NaN; FLOOR_DIV is
// the floor of the exact quotient; FLOOR_MOD moves fmod's remainder to the divisor's sign; ELU uses expm1; GELU
// erf or the tanh approximation.
#include "gpu/gpu_op.h"
#include "ops/elementwise/ew_common.h"

namespace tflite_gpu {
namespace ew {
bool GeluApproximateOf(const Node& node);  // unary_math.cc
}  // namespace ew
namespace pooling {
void CumsumParamsOf(const Node& n, bool* exclusive, bool* reverse);  // pooling/norm.cc
}  // namespace pooling

namespace {

using gpu::GpuBuildContext;
using gpu::GpuCheckContext;
using gpu::KernelBuilder;

Status CheckUnaryF(const GpuCheckContext& c) {
  TFG_RETURN_IF_ERROR(c.InputsFloat32({0}));
  TFG_RETURN_IF_ERROR(c.OutputsFloat32());
  return c.Rank4OrLess(c.input(0), "input");
}

Status CheckBinaryF(const GpuCheckContext& c) {
  if (c.num_inputs() != 2) return Unimplemented("expects 2 inputs");
  TFG_RETURN_IF_ERROR(c.InputsFloat32({0, 1}));
  TFG_RETURN_IF_ERROR(c.OutputsFloat32());
  for (int i = 0; i < 2; ++i) TFG_RETURN_IF_ERROR(c.Rank4OrLess(c.input(i), "input"));
  return c.Rank4OrLess(c.output(0), "output");
}

// BOOL operand: held as float 0/1 on the device; constants stay on the CPU (the boundary
// conversion handles graph tensors only), as LOGICAL_AND does.
Status CheckBoolOperand(const GpuCheckContext& c, int i) {
  if (c.input(i).type != DType::kBool) return Unimplemented("expects a BOOL input");
  if (c.input(i).is_const) return Unimplemented("constant BOOL operands stay on the CPU");
  return c.Rank4OrLess(c.input(i), "input");
}

Status CheckCompare(const GpuCheckContext& c) {
  if (c.num_inputs() != 2) return Unimplemented("expects 2 inputs");
  TFG_RETURN_IF_ERROR(c.InputsFloat32({0, 1}));
  for (int i = 0; i < 2; ++i) TFG_RETURN_IF_ERROR(c.Rank4OrLess(c.input(i), "input"));
  if (c.output(0).type != DType::kBool) return Unimplemented("the output must be BOOL");
  return c.Rank4OrLess(c.output(0), "output");
}

Status CheckLogicalOr(const GpuCheckContext& c) {
  if (c.num_inputs() != 2) return Unimplemented("expects 2 inputs");
  for (int i = 0; i < 2; ++i) TFG_RETURN_IF_ERROR(CheckBoolOperand(c, i));
  if (c.output(0).type != DType::kBool) return Unimplemented("the output must be BOOL");
  return c.Rank4OrLess(c.output(0), "output");
}

Status CheckLogicalNot(const GpuCheckContext& c) {
  TFG_RETURN_IF_ERROR(CheckBoolOperand(c, 0));
  if (c.output(0).type != DType::kBool) return Unimplemented("the output must be BOOL");
  return OkStatus();
}

Status CheckSelectV2(const GpuCheckContext& c) {
  if (c.num_inputs() != 3) return Unimplemented("expects 3 inputs");
  TFG_RETURN_IF_ERROR(CheckBoolOperand(c, 0));
  TFG_RETURN_IF_ERROR(c.InputsFloat32({1, 2}));
  TFG_RETURN_IF_ERROR(c.OutputsFloat32());
  for (int i = 1; i < 3; ++i) TFG_RETURN_IF_ERROR(c.Rank4OrLess(c.input(i), "input"));
  TFG_RETURN_IF_ERROR(c.Rank4OrLess(c.output(0), "output"));
  // The one-element rule (output keeps its declared shape) is a CPU-only corner.
  Dims cx;
  const Dims& a = c.input(0).shape;
  const Dims& x = c.input(1).shape;
  const Dims& y = c.input(2).shape;
  size_t r = std::max(a.size(), std::max(x.size(), y.size()));
  Dims out(r, 1);
  for (size_t i = 0; i < r; ++i) {
    for (const Dims* d : {&a, &x, &y})
      if (i < d->size() && (*d)[d->size() - 1 - i] != 1) out[r - 1 - i] = (*d)[d->size() - 1 - i];
  }
  if (out != c.output(0).shape) return Unimplemented("the output shape is not the broadcast of the inputs");
  return OkStatus();
}

// The other operand of a binary op at the output coordinates (the chain is input 0 for the
// non-commutative ops here; for the commutative ones the framework may enter through input 1).
std::string Other(GpuBuildContext& ctx, KernelBuilder& kb, const std::string& prefix) {
  int other = ctx.chain_input() == 1 ? 0 : 1;
  std::string name = prefix + "b";
  kb.AddInput(name, ctx.input(other));
  return kb.ReadBroadcastDims(name, ctx.cpu_input(other).shape, ctx.cpu_output(0).shape);
}

std::string Bool(const std::string& cond) { return "select((float4)(0.0f), (float4)(1.0f), " + cond + ")"; }

// Comparisons (kOp 0..5: == != < <= > >=), LOGICAL_OR (6), FLOOR_DIV (7), FLOOR_MOD (8), POW (9),
// ATAN2 (10: atan2(input 0, input 1), as the CPU's std::atan2(y, x)).
template <int kOp>
Status BinarySnippet(GpuBuildContext& ctx, KernelBuilder& kb, const std::string& v, const std::string& prefix,
                     std::string* code) {
  const std::string b = Other(ctx, kb, prefix);
  // Non-commutative comparisons: the chain is input 0 (commutative=false below).
  static const char* const kRel[] = {"isequal", "isnotequal", "isless", "islessequal", "isgreater",
                                     "isgreaterequal"};
  if (kOp <= 5) {
    *code = "{ float4 o_ = " + b + "; " + v + " = " + Bool(std::string(kRel[kOp]) + "(" + v + ", o_)") + "; }";
  } else if (kOp == 6) {
    *code = "{ float4 o_ = " + b + "; " + v + " = " +
            Bool("isnotequal(" + v + ", (float4)(0.0f)) || isnotequal(o_, (float4)(0.0f))") + "; }";
  } else if (kOp == 7) {
    // floor(a / b) of the exact quotient (as the CPU's double division gives): the float
    // quotient's floor, corrected by the sign and size of the remainder a - f * b (one fma).
    *code = "{ float4 o_ = " + b + "; float4 f_ = floor(" + v + " / o_); float4 r_ = fma(-f_, o_, " + v + "); " +
            "f_ = select(f_, f_ - 1.0f, isnotequal(r_, (float4)(0.0f)) && ((r_ < (float4)(0.0f)) != (o_ < (float4)(0.0f)))); " +
            "r_ = fma(-f_, o_, " + v + "); f_ = select(f_, f_ + 1.0f, isgreaterequal(fabs(r_), fabs(o_))); " + v +
            " = f_; }";
  } else if (kOp == 8) {
    *code = "{ float4 o_ = " + b + "; float4 m_ = fmod(" + v + ", o_); " + v + " = select(m_, m_ + o_, " +
            "isnotequal(m_, (float4)(0.0f)) && ((o_ < (float4)(0.0f)) != (m_ < (float4)(0.0f)))); }";
  } else if (kOp == 9) {
    *code = v + " = pow(" + v + ", " + b + ");";
  } else {
    *code = v + " = atan2(" + v + ", " + b + ");";
  }
  return OkStatus();
}

// ABS 0, NEG 1, SQUARE 2, LOG 3, SIN 4, COS 5, FLOOR 6, SIGN 7, ELU 8, GELU 9, LOGICAL_NOT 10,
// CEIL 11, ROUND 12 (halves to even, as TFLite's RoundToNearest: OpenCL's rint).
template <int kOp>
Status UnarySnippet(GpuBuildContext& ctx, KernelBuilder&, const std::string& v, const std::string&,
                    std::string* code) {
  switch (kOp) {
    case 0: *code = v + " = fabs(" + v + ");"; break;
    case 1: *code = v + " = -" + v + ";"; break;
    case 2: *code = v + " = " + v + " * " + v + ";"; break;
    case 3: *code = v + " = log(" + v + ");"; break;
    case 4: *code = v + " = sin(" + v + ");"; break;
    case 5: *code = v + " = cos(" + v + ");"; break;
    case 6: *code = v + " = floor(" + v + ");"; break;
    case 7: *code = v + " = select(sign(" + v + ") + 0.0f, " + v + ", isnan(" + v + "));"; break;
    case 8: *code = v + " = select(" + v + ", expm1(" + v + "), " + v + " < (float4)(0.0f));"; break;
    case 9:
      if (ew::GeluApproximateOf(ctx.node()))
        *code = v + " = 0.5f * " + v + " * (1.0f + tanh(0.7978845608028654f * (" + v + " + 0.044715f * " + v + " * " +
                v + " * " + v + ")));";
      else
        *code = v + " = 0.5f * " + v + " * (1.0f + erf(" + v + " * 0.7071067811865476f));";
      break;
    case 10: *code = v + " = " + Bool("isequal(" + v + ", (float4)(0.0f))") + ";"; break;
    case 11: *code = v + " = ceil(" + v + ");"; break;
    case 12: *code = v + " = rint(" + v + ");"; break;
  }
  return OkStatus();
}

Status SelectV2Snippet(GpuBuildContext& ctx, KernelBuilder& kb, const std::string& v, const std::string& prefix,
                       std::string* code) {
  kb.AddInput(prefix + "x", ctx.input(1));
  kb.AddInput(prefix + "y", ctx.input(2));
  const Dims& out = ctx.cpu_output(0).shape;
  const std::string x = kb.ReadBroadcastDims(prefix + "x", ctx.cpu_input(1).shape, out);
  const std::string y = kb.ReadBroadcastDims(prefix + "y", ctx.cpu_input(2).shape, out);
  *code = v + " = select(" + y + ", " + x + ", isnotequal(" + v + ", (float4)(0.0f)));";
  return OkStatus();
}

// ---- CUMSUM: one work item per output slice, a sequential scan along the axis ----

Status CheckCumsum(const GpuCheckContext& c) {
  if (c.num_inputs() != 2) return Unimplemented("expects 2 inputs");
  TFG_RETURN_IF_ERROR(c.InputsFloat32({0}));
  TFG_RETURN_IF_ERROR(c.OutputsFloat32());
  TFG_RETURN_IF_ERROR(c.Rank4OrLess(c.input(0), "input"));
  TFG_RETURN_IF_ERROR(c.Constant(1, "the axis input"));
  const Tensor& ax = c.input(1);
  if (ax.type != DType::kInt32 || ax.num_elements() != 1 || !ax.data) return Unimplemented("axis must be one INT32");
  const int rank = int(c.input(0).shape.size());
  int a = ax.as<int32_t>()[0];
  if (a < 0) a += rank;
  if (a < 0 || a >= rank) return Unimplemented("axis out of range");
  if (gpu::AxisToBHWC(a, rank) < 0) return Unimplemented("axis does not map to BHWC");
  return OkStatus();
}

Status BuildCumsum(GpuBuildContext& ctx) {
  bool excl, rev;
  pooling::CumsumParamsOf(ctx.node(), &excl, &rev);
  const int rank = int(ctx.cpu_input(0).shape.size());
  int a = ctx.cpu_input(1).as<int32_t>()[0];
  if (a < 0) a += rank;
  const int g = gpu::AxisToBHWC(a, rank);  // 0 B, 1 H, 2 W, 3 C
  auto in_ref = ctx.input(0);
  auto out_ref = ctx.output(0);
  const gpu::BHWC o = out_ref.shape;
  auto& kb = ctx.NewKernel("cumsum");
  kb.AddInput("src", in_ref);
  kb.AddOutput("dst", out_ref);
  kb.grid = {size_t(o.w), size_t(o.h), size_t(o.slices()) * o.b};
  std::string b =
      "int x = get_global_id(0), y = get_global_id(1), bs = get_global_id(2);\n"
      "if (x >= dst_W || y >= dst_H || bs >= dst_S * dst_B) return;\n"
      "int s = bs % dst_S, bb = bs / dst_S;\n";
  if (g != 3) {
    static const char* const kIdx[] = {"bb", "y", "x"};
    static const char* const kExt[] = {"dst_B", "dst_H", "dst_W"};
    const std::string idx = kIdx[g], ext = kExt[g];
    auto read = [&](const std::string& k) {
      std::string bb = g == 0 ? k : "bb", yy = g == 1 ? k : "y", xx = g == 2 ? k : "x";
      return "READ_src(" + bb + ", " + yy + ", " + xx + ", s)";
    };
    b += "float4 acc = (float4)(0.0f);\n";
    if (!rev)
      b += "for (int k = 0; k < " + idx + "; ++k) acc += " + read("k") + ";\n";
    else
      b += "for (int k = " + ext + " - 1; k > " + idx + "; --k) acc += " + read("k") + ";\n";
    if (!excl) b += "acc += " + read(idx) + ";\n";
    b += "WRITE_dst(acc, bb, y, x, s);\n";
  } else {
    // Channels: whole slices before (after) this one, then the lanes of this slice in order.
    b += "float tot = 0.0f;\n";
    if (!rev) {
      b += "for (int k = 0; k < s; ++k) { float4 v = READ_src(bb, y, x, k); tot += v.x; tot += v.y; tot += v.z; "
           "tot += v.w; }\n"
           "float4 v = READ_src(bb, y, x, s);\n"
           "float4 r;\n";
      if (excl)
        b += "r.x = tot; tot += v.x; r.y = tot; tot += v.y; r.z = tot; tot += v.z; r.w = tot;\n";
      else
        b += "tot += v.x; r.x = tot; tot += v.y; r.y = tot; tot += v.z; r.z = tot; tot += v.w; r.w = tot;\n";
    } else {
      // Padding lanes of the last slice are zeros, so summing them changes nothing.
      b += "for (int k = dst_S - 1; k > s; --k) { float4 v = READ_src(bb, y, x, k); tot += v.w; tot += v.z; "
           "tot += v.y; tot += v.x; }\n"
           "float4 v = READ_src(bb, y, x, s);\n"
           "float4 r;\n";
      if (excl)
        b += "r.w = tot; tot += v.w; r.z = tot; tot += v.z; r.y = tot; tot += v.y; r.x = tot;\n";
      else
        b += "tot += v.w; r.w = tot; tot += v.z; r.z = tot; tot += v.y; r.y = tot; tot += v.x; r.x = tot;\n";
    }
    b += "WRITE_dst(r, bb, y, x, s);\n";
  }
  kb.body = b;
  return OkStatus();
}

}  // namespace

const GpuOpSupport kGpu_EQUAL = {CheckCompare, nullptr, BinarySnippet<0>, false};
const GpuOpSupport kGpu_NOT_EQUAL = {CheckCompare, nullptr, BinarySnippet<1>, false};
const GpuOpSupport kGpu_LESS = {CheckCompare, nullptr, BinarySnippet<2>, false};
const GpuOpSupport kGpu_LESS_EQUAL = {CheckCompare, nullptr, BinarySnippet<3>, false};
const GpuOpSupport kGpu_GREATER = {CheckCompare, nullptr, BinarySnippet<4>, false};
const GpuOpSupport kGpu_GREATER_EQUAL = {CheckCompare, nullptr, BinarySnippet<5>, false};
const GpuOpSupport kGpu_LOGICAL_OR = {CheckLogicalOr, nullptr, BinarySnippet<6>, true};
const GpuOpSupport kGpu_FLOOR_DIV = {CheckBinaryF, nullptr, BinarySnippet<7>, false};
const GpuOpSupport kGpu_FLOOR_MOD = {CheckBinaryF, nullptr, BinarySnippet<8>, false};
const GpuOpSupport kGpu_POW = {CheckBinaryF, nullptr, BinarySnippet<9>, false};
const GpuOpSupport kGpu_ATAN2 = {CheckBinaryF, nullptr, BinarySnippet<10>, false};
const GpuOpSupport kGpu_ABS = {CheckUnaryF, nullptr, UnarySnippet<0>, false};
const GpuOpSupport kGpu_NEG = {CheckUnaryF, nullptr, UnarySnippet<1>, false};
const GpuOpSupport kGpu_SQUARE = {CheckUnaryF, nullptr, UnarySnippet<2>, false};
const GpuOpSupport kGpu_LOG = {CheckUnaryF, nullptr, UnarySnippet<3>, false};
const GpuOpSupport kGpu_SIN = {CheckUnaryF, nullptr, UnarySnippet<4>, false};
const GpuOpSupport kGpu_COS = {CheckUnaryF, nullptr, UnarySnippet<5>, false};
const GpuOpSupport kGpu_FLOOR = {CheckUnaryF, nullptr, UnarySnippet<6>, false};
const GpuOpSupport kGpu_SIGN = {CheckUnaryF, nullptr, UnarySnippet<7>, false};
const GpuOpSupport kGpu_ELU = {CheckUnaryF, nullptr, UnarySnippet<8>, false};
const GpuOpSupport kGpu_GELU = {CheckUnaryF, nullptr, UnarySnippet<9>, false};
const GpuOpSupport kGpu_LOGICAL_NOT = {CheckLogicalNot, nullptr, UnarySnippet<10>, false};
const GpuOpSupport kGpu_CEIL = {CheckUnaryF, nullptr, UnarySnippet<11>, false};
const GpuOpSupport kGpu_ROUND = {CheckUnaryF, nullptr, UnarySnippet<12>, false};
const GpuOpSupport kGpu_SELECT_V2 = {CheckSelectV2, nullptr, SelectV2Snippet, false};
const GpuOpSupport kGpu_CUMSUM = {CheckCumsum, BuildCumsum, nullptr, false};

}  // namespace tflite_gpu
