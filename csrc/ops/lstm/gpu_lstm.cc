// GPU side of the LSTM family: the BASIC LSTM kernel (TFLite's "basic LSTM cell", kernel_type
// BASIC: 5 inputs, 4 outputs). Three kernels:
//   lstm_concat  concat_temp = [input, prev_activation]
//   lstm_fc      activation_temp = weights x [input, prev_activation] + biases (4 gate rows per
//                work item, weights packed as float4 columns, reads the two inputs directly)
//   lstm_state   state = sigmoid(i) tanh(g) + sigmoid(f) prev_state, activation = sigmoid(o)
//                tanh(state), gates in the order i, g, f, o of activation_temp (as lstm.cc)
// The FULL kernel and UNIDIRECTIONAL_SEQUENCE_LSTM keep their state in variable tensors updated
// in place across invokes: they stay on the CPU.
#include "gpu/gpu_op.h"

namespace tflite_gpu {
namespace {

using gpu::BHWC;
using gpu::GpuBuildContext;
using gpu::GpuCheckContext;
using gpu::KernelBuilder;

std::string Str(int64_t v) { return std::to_string(v); }

Status Shape2(const Tensor& t, int d0, int d1, const char* what) {
  if (t.shape.size() != 2 || t.shape[0] != d0 || t.shape[1] != d1)
    return Unimplemented(std::string(what) + " has an unexpected shape " + DimsToString(t.shape));
  return OkStatus();
}

Status CheckLstm(const GpuCheckContext& c) {
  if (c.num_inputs() != 5 || c.num_outputs() != 4)
    return Unimplemented(
        "only the BASIC LSTM kernel runs on the GPU; the FULL kernel keeps its state in variable tensors updated in "
        "place across invokes");
  for (int i = 0; i < 5; ++i)
    if (!c.has_input(i)) return Unimplemented("input " + Str(i) + " is missing");
  for (int i = 0; i < 5; ++i)
    if (c.input(i).type != DType::kFloat32)
      return Unimplemented("input " + Str(i) + " has type " + DTypeName(c.input(i).type) +
                           "; the GPU LSTM takes FLOAT32 (a quantized LSTM's gate intermediates have grids of their own "
                           "that the float GPU kernel does not reproduce, so it stays on the CPU)");
  for (int i = 0; i < c.num_outputs(); ++i)
    if (c.output(i).type != DType::kFloat32)
      return Unimplemented("output " + Str(i) + " has type " + DTypeName(c.output(i).type) + "; the GPU LSTM produces FLOAT32");
  TFG_RETURN_IF_ERROR(c.Constant(2, "weights"));
  TFG_RETURN_IF_ERROR(c.Constant(3, "biases"));
  const Tensor& x = c.input(0);
  if (x.shape.size() != 2) return Unimplemented("input must be 2-D");
  const int nb = x.shape[0], ni = x.shape[1];
  const Tensor& h = c.input(1);
  if (h.shape.size() != 2) return Unimplemented("prev_activation must be 2-D");
  const int nu = h.shape[1];
  if (nb <= 0 || ni <= 0 || nu <= 0) return Unimplemented("zero-sized tensors stay on the CPU");
  TFG_RETURN_IF_ERROR(Shape2(h, nb, nu, "prev_activation"));
  TFG_RETURN_IF_ERROR(Shape2(c.input(2), 4 * nu, ni + nu, "weights"));
  if (c.input(3).shape.size() != 1 || c.input(3).shape[0] != 4 * nu) return Unimplemented("biases have an unexpected shape");
  TFG_RETURN_IF_ERROR(Shape2(c.input(4), nb, nu, "prev_state"));
  TFG_RETURN_IF_ERROR(Shape2(c.output(0), nb, nu, "output 0"));
  TFG_RETURN_IF_ERROR(Shape2(c.output(1), nb, nu, "output 1"));
  TFG_RETURN_IF_ERROR(Shape2(c.output(2), nb, ni + nu, "output 2"));
  TFG_RETURN_IF_ERROR(Shape2(c.output(3), nb, 4 * nu, "output 3"));
  return OkStatus();
}

Status BuildLstm(GpuBuildContext& ctx) {
  const Tensor& xt = ctx.cpu_input(0);
  const int nb = xt.shape[0], ni = xt.shape[1], nu = ctx.cpu_input(1).shape[1];
  const int sx = (ni + 3) / 4, sh = (nu + 3) / 4, su = sh, total = ni + nu;
  const float* wt = ctx.const_input(2).data();
  const float* bias = ctx.const_input(3).data();

  // concat_temp = [input, prev_activation]
  {
    KernelBuilder& kb = ctx.NewKernel("lstm_concat");
    kb.AddInput("xin", ctx.input(0));
    kb.AddInput("hin", ctx.input(1));
    kb.AddOutput("dst", ctx.output(2));
    const int cs = (total + 3) / 4;
    kb.grid = {size_t(cs), size_t(nb), 1};
    std::string body = "int s = get_global_id(0), b = get_global_id(1);\nif (s >= dst_S || b >= dst_B) return;\n";
    if (ni % 4 == 0) {
      body += "float4 v = s < " + Str(sx) + " ? READ_xin(b, 0, 0, s) : READ_hin(b, 0, 0, s - " + Str(sx) + ");\n";
    } else {
      body += "float r_[4] = {0.0f, 0.0f, 0.0f, 0.0f};\n"
              "for (int l = 0; l < 4; ++l) {\n"
              "int c = s * 4 + l;\n"
              "if (c >= " + Str(total) + ") break;\n"
              "r_[l] = c < " + Str(ni) + " ? LD_xin(b, 0, 0, c) : LD_hin(b, 0, 0, c - " + Str(ni) + ");\n"
              "}\n"
              "float4 v = (float4)(r_[0], r_[1], r_[2], r_[3]);\n";
    }
    body += "WRITE_dst(v, b, 0, 0, s);\n";
    kb.body = body;
  }

  // activation_temp = W [x, h] + bias; work item = 4 gate rows (one slice) of one batch row.
  {
    KernelBuilder& kb = ctx.NewKernel("lstm_fc");
    kb.AddInput("xin", ctx.input(0));
    kb.AddInput("hin", ctx.input(1));
    kb.AddOutput("dst", ctx.output(3));
    const int rows = 4 * nu, rs = rows / 4, K = sx + sh;
    // w[((js * K + k) * 4 + l)] = float4 of W[4 js + 0..3][column of lane l of input slice k]
    std::vector<float> w(size_t(rs) * K * 16, 0.f);
    for (int js = 0; js < rs; ++js)
      for (int k = 0; k < K; ++k)
        for (int l = 0; l < 4; ++l) {
          int col;
          if (k < sx) col = 4 * k + l < ni ? 4 * k + l : -1;
          else col = 4 * (k - sx) + l < nu ? ni + 4 * (k - sx) + l : -1;
          if (col < 0) continue;
          for (int q = 0; q < 4; ++q)
            w[((size_t(js) * K + k) * 4 + l) * 4 + q] = wt[size_t(4 * js + q) * total + col];
        }
    kb.AddConstBuffer("w", std::move(w));
    kb.AddConstBuffer("bias", std::vector<float>(bias, bias + rows));
    kb.grid = {size_t(rs), size_t(nb), 1};
    kb.body = "int js = get_global_id(0), b = get_global_id(1);\n"
              "if (js >= dst_S || b >= dst_B) return;\n"
              "float4 acc = LOADW4_bias(js);\n"
              "int wi = js * " + Str(4 * K) + ";\n"
              "for (int k = 0; k < " + Str(sx) + "; ++k, wi += 4) {\n"
              "float4 v = READ_xin(b, 0, 0, k);\n"
              "acc += LOADW4_w(wi) * v.x + LOADW4_w(wi + 1) * v.y + LOADW4_w(wi + 2) * v.z + LOADW4_w(wi + 3) * v.w;\n"
              "}\n"
              "for (int k = 0; k < " + Str(sh) + "; ++k, wi += 4) {\n"
              "float4 v = READ_hin(b, 0, 0, k);\n"
              "acc += LOADW4_w(wi) * v.x + LOADW4_w(wi + 1) * v.y + LOADW4_w(wi + 2) * v.z + LOADW4_w(wi + 3) * v.w;\n"
              "}\n"
              "WRITE_dst(acc, b, 0, 0, js);\n";
  }

  // state and activation from the gates.
  {
    KernelBuilder& kb = ctx.NewKernel("lstm_state");
    kb.AddInput("at", ctx.output(3));
    kb.AddInput("ps", ctx.input(4));
    kb.AddOutput("dst", ctx.output(0));
    kb.AddOutput("state", ctx.output(1));
    kb.grid = {size_t(su), size_t(nb), 1};
    std::string body = "int s = get_global_id(0), b = get_global_id(1);\nif (s >= dst_S || b >= dst_B) return;\n";
    if (nu % 4 == 0) {
      body += "float4 gi = READ_at(b, 0, 0, s), gg = READ_at(b, 0, 0, s + " + Str(su) + ");\n"
              "float4 gf = READ_at(b, 0, 0, s + " + Str(2 * su) + "), go = READ_at(b, 0, 0, s + " + Str(3 * su) + ");\n";
    } else {
      body += "float g_[4][4] = {{0.0f, 0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 0.0f}, "
              "{0.0f, 0.0f, 0.0f, 0.0f}};\n"
              "for (int l = 0; l < 4; ++l) {\n"
              "int c = s * 4 + l;\n"
              "if (c >= " + Str(nu) + ") break;\n"
              "for (int q = 0; q < 4; ++q) g_[q][l] = LD_at(b, 0, 0, q * " + Str(nu) + " + c);\n"
              "}\n"
              "float4 gi = (float4)(g_[0][0], g_[0][1], g_[0][2], g_[0][3]);\n"
              "float4 gg = (float4)(g_[1][0], g_[1][1], g_[1][2], g_[1][3]);\n"
              "float4 gf = (float4)(g_[2][0], g_[2][1], g_[2][2], g_[2][3]);\n"
              "float4 go = (float4)(g_[3][0], g_[3][1], g_[3][2], g_[3][3]);\n";
    }
    body += "float4 st = tanh(gg) / (1.0f + exp(-gi)) + READ_ps(b, 0, 0, s) / (1.0f + exp(-gf));\n"
            "float4 ac = tanh(st) / (1.0f + exp(-go));\n"
            "WRITE_dst(ac, b, 0, 0, s);\n"
            "WRITE_state(st, b, 0, 0, s);\n";
    kb.body = body;
  }
  return OkStatus();
}

Status CheckSequenceLstm(const GpuCheckContext&) {
  return Unimplemented(
      "the output and cell states are variable tensors updated in place across invokes; the GPU delegate does not "
      "keep variable tensors");
}
Status NoBuild(GpuBuildContext&) { return Unimplemented("no GPU kernel"); }

}  // namespace

const GpuOpSupport kGpu_LSTM = {CheckLstm, BuildLstm, nullptr, false};
const GpuOpSupport kGpu_UNIDIRECTIONAL_SEQUENCE_LSTM = {CheckSequenceLstm, NoBuild, nullptr, false};

}  // namespace tflite_gpu
