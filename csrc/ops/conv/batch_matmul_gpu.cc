// GPU side of BATCH_MATMUL (constant rhs: EmitConv, conv_common_gpu.cc)
// CPU kernel: batch_matmul.cc.
#include "ops/conv/conv_common_gpu.h"

namespace tflite_gpu {
namespace {

using namespace conv_gpu;  // NOLINT

// ------------------------------------------------------------------ BATCH_MATMUL

// Ranks 2..4 (the GPU layout has no rank 5). A constant rhs without batch (all its batch dims 1,
// rank <= lhs rank) and no adj_x is a 1x1 convolution over the lhs (adj_y folded into the packed
// weights); anything else runs a generic kernel reading both operands as tensors (adjoints by
// lane gathers: slower, but exact).
struct BmmPlan {
  bool as_conv = false;
  int M = 0, K = 0, N = 0;
  std::string why;
};

bool BatchDimsOne(const Dims& d) {
  for (size_t i = 0; i + 2 < d.size(); ++i)
    if (d[i] != 1) return false;
  return true;
}

BmmPlan PlanBmm(const conv::GpuConvOptions& o, const Tensor& lhs, const Tensor& rhs, const Tensor& out) {
  BmmPlan p;
  const Dims& l = lhs.shape;
  const Dims& r = rhs.shape;
  const int lr = int(l.size()), rr = int(r.size()), orank = int(out.shape.size());
  if (lr < 2 || lr > 4 || rr < 2 || rr > 4 || orank > 4) {
    p.why = "operands of rank 2 to 4 only (the GPU layout has at most 4 dimensions)";
    return p;
  }
  p.M = o.adj_x ? l[lr - 1] : l[lr - 2];
  p.K = o.adj_x ? l[lr - 2] : l[lr - 1];
  p.N = o.adj_y ? r[rr - 2] : r[rr - 1];
  const int rk = o.adj_y ? r[rr - 1] : r[rr - 2];
  if (rk != p.K || p.M <= 0 || p.K <= 0 || p.N <= 0) {
    p.why = "shapes do not match";
    return p;
  }
  p.as_conv = rhs.is_const && BatchDimsOne(r) && rr <= lr && !o.adj_x;
  return p;
}

Status CheckBatchMatMul(const GpuCheckContext& c) {
  if (c.num_inputs() != 2) return Unimplemented("expects 2 inputs");
  TFG_RETURN_IF_ERROR(c.InputsFloat32({0, 1}));
  TFG_RETURN_IF_ERROR(c.OutputsFloat32());
  TFG_RETURN_IF_ERROR(CheckNonEmpty(c));
  if (c.input(0).num_elements() == 0 || c.input(1).num_elements() == 0 || c.output(0).num_elements() == 0)
    return Unimplemented("empty tensor");
  BmmPlan p = PlanBmm(conv::BatchMatMulOptionsOf(c.node()), c.input(0), c.input(1), c.output(0));
  if (!p.why.empty()) return Unimplemented(p.why);
  return OkStatus();
}

// The BHWC coordinates of (output batch indices ob0/ob1, row, slice) for an operand of shape d
// when the output has rank R (batch dims aligned to the right; size-1 dims read index 0).
std::string OperandCoords(const Dims& d, int R, const std::string& row, const std::string& slice) {
  const int r = int(d.size());
  auto bi = [&](int i) {
    if (d[i] == 1) return std::string("0");
    return std::string("ob") + I(i + (R - r));
  };
  if (r == 2) return row + ", 0, 0, " + slice;
  if (r == 3) return bi(0) + ", 0, " + row + ", " + slice;
  return bi(0) + ", " + bi(1) + ", " + row + ", " + slice;
}

Status BuildBatchMatMul(GpuBuildContext& ctx) {
  const conv::GpuConvOptions o = conv::BatchMatMulOptionsOf(ctx.node());
  const Tensor& lhs = ctx.cpu_input(0);
  const Tensor& rhs = ctx.cpu_input(1);
  BmmPlan p = PlanBmm(o, lhs, rhs, ctx.cpu_output(0));
  if (!p.why.empty()) return Internal("BATCH_MATMUL: " + p.why);
  if (p.as_conv) {
    ConvCore c;
    c.OC = p.N;
    c.IC = p.K;
    const float* rp = ctx.const_input(1).data();
    const int N = p.N, K = p.K;
    if (o.adj_y)
      c.W = [rp, K](int n, int, int, int k) { return rp[int64_t(n) * K + k]; };
    else
      c.W = [rp, N](int n, int, int, int k) { return rp[int64_t(k) * N + n]; };
    GpuTensorRef src = ctx.input(0), dst = ctx.output(0);
    if (src.shape.b != dst.shape.b || src.shape.h != dst.shape.h || src.shape.w != dst.shape.w)
      return Internal("BATCH_MATMUL: lhs/output layouts differ");
    return EmitConv(ctx, "batch_matmul", src, dst, c);
  }
  const Dims& os = ctx.cpu_output(0).shape;
  const int R = int(os.size());
  GpuTensorRef a = ctx.input(0), bt = ctx.input(1), dst = ctx.output(0);
  KernelBuilder& kb = ctx.NewKernel("batch_matmul");
  kb.AddInput("lhs", a);
  kb.AddInput("rhs", bt);
  kb.AddOutput("dst", dst);
  if (o.adj_x)
    kb.AddDefine("float lane4_(float4 v, int k) { return k == 0 ? v.x : (k == 1 ? v.y : (k == 2 ? v.z : v.w)); }\n");
  // Grid: x = row m, y = output batch (flattened), z = output slice.
  const int OB0 = R >= 3 ? os[0] : 1, OB1 = R == 4 ? os[1] : 1;
  const int M = p.M, K = p.K, N = p.N, dS = dst.shape.slices();
  const char* lanes = "xyzw";
  std::string b;
  b += "const int m = get_global_id(0), ob = get_global_id(1), s = get_global_id(2);\n";
  b += "if (m >= " + I(M) + " || ob >= " + I(int64_t(OB0) * OB1) + " || s >= " + I(dS) + ") return;\n";
  b += "const int ob0 = ob / " + I(OB1) + ", ob1 = ob % " + I(OB1) + ";\n(void)ob0; (void)ob1;\n";
  b += "float4 acc = (float4)(0.0f);\n";
  // One block of nk (<= 4) contraction indices starting at 4 * ks.
  auto block = [&](const std::string& ks, int nk) {
    std::string c = "{\nfloat4 av = (float4)(0.0f);\n";
    if (!o.adj_x) {
      c += "av = READ_lhs(" + OperandCoords(lhs.shape, R, "m", ks) + ");\n";  // padding lanes are zero
    } else {
      for (int i = 0; i < nk; ++i)
        c += "av." + std::string(1, lanes[i]) + " = lane4_(READ_lhs(" +
             OperandCoords(lhs.shape, R, "4 * " + ks + " + " + I(i), "m >> 2") + "), m & 3);\n";
    }
    if (!o.adj_y) {
      for (int i = 0; i < nk; ++i)
        c += "acc += av." + std::string(1, lanes[i]) + " * READ_rhs(" +
             OperandCoords(rhs.shape, R, "4 * " + ks + " + " + I(i), "s") + ");\n";
    } else {
      // rhs rows are n: 4 rows of this output slice, each a float4 over k (padding lanes zero).
      c += "acc += (float4)(";
      for (int l = 0; l < 4; ++l)
        c += std::string(l ? ", " : "") + "dot(av, READ_rhs(" +
             OperandCoords(rhs.shape, R, "min(4 * s + " + I(l) + ", " + I(N - 1) + ")", ks) + "))";
      c += ");\n";
    }
    c += "}\n";
    return c;
  };
  const int KF = K / 4, KR = K % 4;
  if (KF > 0) b += "for (int ks = 0; ks < " + I(KF) + "; ++ks) " + block("ks", 4);
  if (KR) b += block(I(KF), KR);
  std::string out_coords = R == 2 ? "m, 0, 0, s" : (R == 3 ? "ob0, 0, m, s" : "ob0, ob1, m, s");
  b += "WRITE_dst(acc, " + out_coords + ");\n";
  kb.body = b;
  kb.grid = {size_t(M), size_t(OB0) * OB1, size_t(dS)};
  return OkStatus();
}

}  // namespace

const GpuOpSupport kGpu_BATCH_MATMUL = {CheckBatchMatMul, BuildBatchMatMul, nullptr, false};

}  // namespace tflite_gpu
