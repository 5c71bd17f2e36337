// SVDF (TFLite svdf.cc + reference svdf.h): a fully connected layer factored through a memory of
// past feature activations.
//   inputs: 0 input [batch, in], 1 weights_feature [filters, in], 2 weights_time [filters, memory],
//           3 bias [units] (optional), 4 state [batch, memory * filters] (variable)
//   output: [batch, units], units = filters / rank
// Per invoke: the state (rows of `memory` values per batch and filter) shifts left by one; the
// newest column gets weights_feature . x; scratch[f] = weights_time[f] . state[f];
// out[u] = sum_r scratch[u * rank + r] + bias[u]; then the fused activation (NONE writes nothing).
//   float    (v1)   as above, dot products in order.
//   hybrid   (v2/4) int8 weights_feature/weights_time (one scale each), float input/bias/state/
//                   output: x quantized per batch row (symmetric, or asymmetric with
//                   asymmetric_quantize_inputs), newest column = (int dot - zp * row sum) *
//                   (row scale * weight scale); weights_time dequantized to float once.
//   integer  (v3)   int8 input/output, int8 weights_feature, int16 weights_time and state, int32
//                   bias: newest = clamp16(MBQM(sum w (x - in_zp), in*wf/state scale)); the time
//                   dot in int32; out = clamp8(MBQM(bias + sum, state*wt/out scale) + out_zp).
//                   TFLite requires activation RELU there and applies no other clamp.
#include <cmath>
#include <cstring>
#include <vector>

#include "ops/lstm/seq_common.h"
#include "ops/op_registry.h"
#include "ops/quant_common.h"

namespace tflite_gpu {
namespace {

constexpr uint8_t kSVDFOptions = 6;

struct SvdfParams {
  int rank = 0;
  int activation = 0;
  bool asymmetric = false;
};

Status Parse(const OptionsView& opts, Node& node) {
  auto p = std::make_shared<SvdfParams>();
  fb::Table t = opts.type == kSVDFOptions ? opts.table : fb::Table();
  p->rank = t.Scalar<int32_t>(0, 0);
  p->activation = t.Scalar<int8_t>(1, 0);
  p->asymmetric = t.Bool(2, false);
  node.params = p;
  return OkStatus();
}

enum class Mode { kFloat, kHybrid, kInteger };

struct SvdfState {
  Mode mode = Mode::kFloat;
  int batch = 0, in = 0, filters = 0, units = 0, memory = 0;
  std::vector<float> wt_float;        // hybrid: dequantized weights_time
  std::vector<int32_t> row_sums;      // hybrid asymmetric
  int32_t m1 = 0, m2 = 0;             // integer multipliers
  int s1 = 0, s2 = 0;
  int32_t in_zp = 0, out_zp = 0;
};

std::string In(int i, const char* what) { return std::string(what) + " (input " + std::to_string(i) + ")"; }

Status OneScale(OpContext& ctx, const Tensor& t, int i, const char* what, bool symmetric) {
  if (t.quant.scale.size() != 1 || !(t.quant.scale[0] > 0.f) || !std::isfinite(t.quant.scale[0]))
    return ctx.Error(In(i, what) + " needs one positive per-tensor scale");
  if (symmetric && !t.quant.zero_point.empty() && t.quant.zero_point[0] != 0)
    return ctx.Error(In(i, what) + " must be symmetric (zero point 0)");
  return OkStatus();
}

Status Prepare(OpContext& ctx) {
  const SvdfParams& p = ctx.node().P<SvdfParams>();
  TFG_RETURN_IF_ERROR(ctx.CheckArity(5, 5, 1, 1));
  for (int i : {0, 1, 2, 4})
    if (!ctx.has_input(i)) return ctx.Error("required input " + std::to_string(i) + " is missing");
  if (p.activation < 0 || p.activation > 5)
    return ctx.Error("unsupported fused activation function " + std::to_string(p.activation));
  const Tensor& in = ctx.input(0);
  const Tensor& wf = ctx.input(1);
  const Tensor& wt = ctx.input(2);
  const Tensor& st = ctx.input(4);
  const Tensor* bias = ctx.optional_input(3);
  auto sp = std::make_shared<SvdfState>();
  SvdfState& s = *sp;
  if (in.type == DType::kFloat32) {
    s.mode = wf.type == DType::kInt8 ? Mode::kHybrid : Mode::kFloat;
  } else if (in.type == DType::kInt8) {
    s.mode = Mode::kInteger;
  } else {
    return ctx.Error(std::string("input has type ") + DTypeName(in.type) +
                     ", expected FLOAT32 (float or hybrid) or INT8 (integer)");
  }
  if (in.shape.size() != 2) return ctx.Error("input must be 2-D [batch, input_size], got " + DimsToString(in.shape));
  if (wf.shape.size() != 2) return ctx.Error(In(1, "weights_feature") + " must be 2-D [filters, input_size], got " + DimsToString(wf.shape));
  if (wt.shape.size() != 2) return ctx.Error(In(2, "weights_time") + " must be 2-D [filters, memory_size], got " + DimsToString(wt.shape));
  s.batch = in.shape[0];
  s.in = in.shape[1];
  s.filters = wf.shape[0];
  s.memory = wt.shape[1];
  if (p.rank <= 0) return ctx.Error("rank must be positive, got " + std::to_string(p.rank));
  if (s.filters % p.rank != 0)
    return ctx.Error("the number of filters (" + std::to_string(s.filters) + ") must be a multiple of rank (" +
                     std::to_string(p.rank) + ")");
  s.units = s.filters / p.rank;
  if (wf.shape[1] != s.in)
    return ctx.Error(In(1, "weights_feature") + " has " + std::to_string(wf.shape[1]) + " columns, the input has " +
                     std::to_string(s.in));
  if (wt.shape[0] != s.filters)
    return ctx.Error(In(2, "weights_time") + " has " + std::to_string(wt.shape[0]) + " rows, expected filters = " +
                     std::to_string(s.filters));
  if (s.memory <= 0) return ctx.Error("memory_size (weights_time dimension 1) must be positive");
  if (bias && (bias->shape.size() != 1 || bias->shape[0] != s.units))
    return ctx.Error(In(3, "bias") + " must have shape [" + std::to_string(s.units) + "], got " + DimsToString(bias->shape));
  if (!st.is_variable) return ctx.Error(In(4, "state") + " must be a variable tensor");
  const int64_t want = int64_t(s.memory) * s.filters;
  if (st.shape.size() != 2 || st.shape[0] != s.batch || st.shape[1] != want)
    return ctx.Error(In(4, "state") + " must have shape [" + std::to_string(s.batch) + ", " + std::to_string(want) +
                     "] (batch, memory_size * filters), got " + DimsToString(st.shape));
  DType wf_t = DType::kFloat32, wt_t = DType::kFloat32, b_t = DType::kFloat32, st_t = DType::kFloat32,
        out_t = DType::kFloat32;
  if (s.mode == Mode::kHybrid) wf_t = wt_t = DType::kInt8;
  if (s.mode == Mode::kInteger) {
    wf_t = DType::kInt8;
    wt_t = DType::kInt16;
    b_t = DType::kInt32;
    st_t = DType::kInt16;
    out_t = DType::kInt8;
  }
  const char* mode = s.mode == Mode::kFloat ? "float" : (s.mode == Mode::kHybrid ? "hybrid" : "integer");
  auto type_err = [&](int i, const char* what, const Tensor& t, DType w) {
    return ctx.Error(In(i, what) + " has type " + DTypeName(t.type) + ", the " + mode + " SVDF needs " + DTypeName(w));
  };
  if (wf.type != wf_t) return type_err(1, "weights_feature", wf, wf_t);
  if (wt.type != wt_t) return type_err(2, "weights_time", wt, wt_t);
  if (bias && bias->type != b_t) return type_err(3, "bias", *bias, b_t);
  if (st.type != st_t) return type_err(4, "state", st, st_t);
  if (st.bytes < size_t(s.batch) * size_t(want) * DTypeSize(st_t) || (s.batch * want > 0 && !st.data))
    return ctx.Error(In(4, "state") + " has no storage");
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, out_t));
  if (s.mode == Mode::kHybrid) {
    if (!ctx.IsConstantOrPersistent(wf) || !ctx.IsConstantOrPersistent(wt))
      return ctx.Error("the hybrid SVDF needs constant INT8 weights_feature and weights_time");
    TFG_RETURN_IF_ERROR(OneScale(ctx, wf, 1, "weights_feature", true));
    TFG_RETURN_IF_ERROR(OneScale(ctx, wt, 2, "weights_time", true));
    const float sc = wt.quant.scale[0];
    s.wt_float.resize(size_t(wt.num_elements()));
    for (size_t i = 0; i < s.wt_float.size(); ++i) s.wt_float[i] = float(wt.as<int8_t>()[i]) * sc;
    s.row_sums.assign(size_t(s.filters), 0);
    for (int f = 0; f < s.filters; ++f)
      for (int i = 0; i < s.in; ++i) s.row_sums[f] += wf.as<int8_t>()[int64_t(f) * s.in + i];
  } else if (s.mode == Mode::kInteger) {
    if (p.activation != 1)
      return ctx.Error("the integer SVDF supports only the RELU activation (as TFLite), got " + std::to_string(p.activation));
    const Tensor& out = ctx.output(0);
    TFG_RETURN_IF_ERROR(OneScale(ctx, in, 0, "input", false));
    TFG_RETURN_IF_ERROR(OneScale(ctx, wf, 1, "weights_feature", true));
    TFG_RETURN_IF_ERROR(OneScale(ctx, wt, 2, "weights_time", true));
    TFG_RETURN_IF_ERROR(OneScale(ctx, st, 4, "state", true));
    if (out.quant.scale.size() != 1 || !(out.quant.scale[0] > 0.f) || !std::isfinite(out.quant.scale[0]))
      return ctx.Error("output needs one positive per-tensor scale");
    s.in_zp = in.quant.zero_point.empty() ? 0 : int32_t(in.quant.zero_point[0]);
    s.out_zp = out.quant.zero_point.empty() ? 0 : int32_t(out.quant.zero_point[0]);
    if (s.in_zp < -128 || s.in_zp > 127 || s.out_zp < -128 || s.out_zp > 127)
      return ctx.Error("input/output zero points must be in the int8 range");
    // TFLite computes these in float (float operands), then converts to double.
    const float e1 = in.quant.scale[0] * wf.quant.scale[0] / st.quant.scale[0];
    const float e2 = st.quant.scale[0] * wt.quant.scale[0] / out.quant.scale[0];
    quant::QuantizeMultiplier(double(e1), &s.m1, &s.s1);
    quant::QuantizeMultiplier(double(e2), &s.m2, &s.s2);
  }
  TFG_RETURN_IF_ERROR(ctx.SetOutputShape(0, {s.batch, s.units}));
  const size_t scratch = size_t(s.batch) * s.filters * 4 + size_t(s.batch) * s.in + size_t(s.batch) * 8 + 64;
  ctx.RequestScratch(scratch);
  ctx.node().user_data = sp;
  return OkStatus();
}

template <typename T>
void ShiftLeft(T* state, int64_t n) {
  if (n > 1) std::memmove(state, state + 1, size_t(n - 1) * sizeof(T));
}

Status Eval(OpContext& ctx) {
  const SvdfParams& p = ctx.node().P<SvdfParams>();
  const SvdfState& s = *ctx.node().U<SvdfState>();
  const int B = s.batch, I = s.in, F = s.filters, M = s.memory, U = s.units, R = p.rank;
  const Tensor* bias = ctx.optional_input(3);
  uint8_t* scratch = static_cast<uint8_t*>(ctx.scratch());
  if (s.mode == Mode::kInteger) {
    const int8_t* x = ctx.input(0).as<int8_t>();
    const int8_t* wf = ctx.input(1).as<int8_t>();
    const int16_t* wt = ctx.input(2).as<int16_t>();
    int16_t* st = ctx.input(4).as<int16_t>();
    int8_t* y = ctx.output(0).as<int8_t>();
    ShiftLeft(st, int64_t(B) * F * M);
    for (int b = 0; b < B; ++b)
      for (int f = 0; f < F; ++f) {
        int32_t d = 0;
        for (int i = 0; i < I; ++i) d += int32_t(wf[int64_t(f) * I + i]) * (int32_t(x[int64_t(b) * I + i]) - s.in_zp);
        d = quant::MultiplyByQuantizedMultiplier(d, s.m1, s.s1);
        st[(int64_t(b) * F + f) * M + M - 1] = int16_t(std::min(32767, std::max(-32768, d)));
      }
    for (int b = 0; b < B; ++b)
      for (int u = 0; u < U; ++u) {
        int32_t acc = bias ? bias->as<int32_t>()[u] : 0;
        for (int r = 0; r < R; ++r) {
          const int f = u * R + r;
          int32_t d = 0;
          for (int m = 0; m < M; ++m) d += int32_t(wt[int64_t(f) * M + m]) * int32_t(st[(int64_t(b) * F + f) * M + m]);
          acc += d;
        }
        const int32_t v = quant::MultiplyByQuantizedMultiplier(acc, s.m2, s.s2) + s.out_zp;
        y[int64_t(b) * U + u] = int8_t(std::min(127, std::max(-128, v)));
      }
    return OkStatus();
  }
  const float* x = ctx.input(0).as<float>();
  float* st = ctx.input(4).as<float>();
  float* y = ctx.output(0).as<float>();
  const float* wt = s.mode == Mode::kHybrid ? s.wt_float.data() : ctx.input(2).as<float>();
  ShiftLeft(st, int64_t(B) * F * M);
  if (s.mode == Mode::kFloat) {
    const float* wf = ctx.input(1).as<float>();
    for (int b = 0; b < B; ++b)
      for (int f = 0; f < F; ++f) {
        float d = 0.f;
        for (int i = 0; i < I; ++i) d += wf[int64_t(f) * I + i] * x[int64_t(b) * I + i];
        st[(int64_t(b) * F + f) * M + M - 1] = d;
      }
  } else {
    const int8_t* wf = ctx.input(1).as<int8_t>();
    const float wscale = ctx.input(1).quant.scale[0];
    float* scale = reinterpret_cast<float*>(scratch);
    int32_t* zp = reinterpret_cast<int32_t*>(scratch + size_t(B) * 4);
    int8_t* q = reinterpret_cast<int8_t*>(scratch + size_t(B) * 8 + 32);
    for (int b = 0; b < B; ++b) {
      quant::QuantizeFloatRow(x + int64_t(b) * I, I, p.asymmetric, q + int64_t(b) * I, &scale[b], &zp[b]);
      scale[b] *= wscale;
      // The newest column of each filter's memory (M apart), zeroed then accumulated: 0 + product.
      float* newest = st + int64_t(b) * F * M + (M - 1);
      for (int f = 0; f < F; ++f) newest[int64_t(f) * M] = 0.f;
      seq::HybridMatVecAccumulate(wf, F, I, q + int64_t(b) * I, scale[b], zp[b],
                                  p.asymmetric ? s.row_sums.data() : nullptr, newest, M);
    }
  }
  for (int b = 0; b < B; ++b) {
    float* yb = y + int64_t(b) * U;
    for (int u = 0; u < U; ++u) {
      float sum = 0.f;
      for (int r = 0; r < R; ++r) {
        const int f = u * R + r;
        float d = 0.f;
        const float* sv = st + (int64_t(b) * F + f) * M;
        for (int m = 0; m < M; ++m) d += wt[int64_t(f) * M + m] * sv[m];
        sum += d;
      }
      yb[u] = bias ? sum + bias->as<float>()[u] : sum;
    }
    seq::ApplyActivationToVector(p.activation, yb, U, yb);
  }
  return OkStatus();
}

}  // namespace

const OpImpl kOp_SVDF = {Parse, Prepare, Eval, nullptr, false};

}  // namespace tflite_gpu
