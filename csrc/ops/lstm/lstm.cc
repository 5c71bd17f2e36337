// LSTM family, float32, hybrid (INT8 weights) and full-integer (INT8 / INT16 cell state; see the
// "integer (FULL)" section), TFLite semantics (lstm.cc / unidirectional_sequence_lstm.cc /
// lstm_eval.cc):
//
// UNIDIRECTIONAL_SEQUENCE_LSTM and LSTM (kernel_type FULL): 20 or 24 inputs
//    0 input                       [batch, time, in] / [time, batch, in] (sequence), [batch, in] (LSTM)
//    1..4  input_to_{input,forget,cell,output} weights  [cell, in]   (input gate: -1 for CIFG)
//    5..8  recurrent_to_{i,f,c,o} weights               [cell, out]  ([cell] when diagonal)
//    9..11 cell_to_{i,f,o} peephole weights             [cell]       (optional)
//   12..15 {input,forget,cell,output} gate biases       [cell]       (input bias absent for CIFG)
//   16, 17 projection weights [out, cell] and bias [out]             (optional)
//   18, 19 output_state [batch, out] and cell_state [batch, cell]: variable tensors, updated in
//          place, persisting across invokes
//   20..23 layer norm coefficients of the 4 gates [cell]             (optional, 24-input form)
// Per step (old h, c):
//   gate = bias + W_x x + W_h h (+ p .* c)       (layer norm: normalise the sum, * coeff + bias)
//   i, f = sigmoid(gate);  g = act(gate)          (i = 1 - f for CIFG)
//   c = f * c + i * g (clip to +-cell_clip if > 0)
//   o = sigmoid(bias + W_x x + W_h h (+ p .* c_new))
//   h = o * act(c)  -- with activation NONE TFLite's ApplyActivationToVector writes nothing, so
//                      the product uses the scratch that still holds g: h = o * g. Reproduced.
//   h = proj_w h + proj_b (clip to +-proj_clip if > 0) when projecting
//
// LSTM kernel_type BASIC (5 inputs, 4 outputs): concat_temp = [input, prev_activation];
// activation_temp = weights concat + biases (gates i, g, f, o); state = sigmoid(i) tanh(g) +
// sigmoid(f) prev_state; activation = sigmoid(o) tanh(state). Activation and clips are ignored
// there, as in TFLite.
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "ops/conv/gemm.h"
#include "ops/lstm/seq_common.h"
#include "ops/op_registry.h"
#include "ops/pooling/vec_math.h"
#include "ops/quant_common.h"  // exp / logistic / tanh arrays (~2 ulp)
#include "runtime/subgraph.h"     // intermediate tensors (integer LSTM)
#include "runtime/thread_pool.h"

namespace tflite_gpu {
namespace {

constexpr uint8_t kLSTMOptions = 14;
constexpr uint8_t kUnidirectionalSequenceLSTMOptions = 71;

struct LstmParams {
  bool has_options = false;
  int activation = 0;
  float cell_clip = 0.f, proj_clip = 0.f;
  int kernel_type = 0;  // 0 FULL, 1 BASIC
  bool time_major = false;
  bool diagonal = false;
  bool sequence = false;
  bool merge_outputs = false;  // BIDIRECTIONAL_SEQUENCE_LSTM
  bool asymmetric = false;     // hybrid kernel: asymmetric_quantize_inputs
};

enum In {
  kInput = 0,
  kInToIn = 1, kInToForget, kInToCell, kInToOut,
  kRecToIn = 5, kRecToForget, kRecToCell, kRecToOut,
  kCellToIn = 9, kCellToForget, kCellToOut,
  kInBias = 12, kForgetBias, kCellBias, kOutBias,
  kProjW = 16, kProjB = 17,
  kOutState = 18, kCellState = 19,
  kInLN = 20, kForgetLN, kCellLN, kOutLN,
};

Status ParseSequence(const OptionsView& opts, Node& node) {
  auto p = std::make_shared<LstmParams>();
  fb::Table t = opts.type == kUnidirectionalSequenceLSTMOptions ? opts.table : fb::Table();
  p->has_options = t.valid();
  p->activation = t.Scalar<int8_t>(0, 0);
  p->cell_clip = t.Scalar<float>(1, 0.f);
  p->proj_clip = t.Scalar<float>(2, 0.f);
  p->time_major = t.Bool(3, false);
  p->asymmetric = t.Bool(4, false);
  p->diagonal = t.Bool(5, false);
  p->sequence = true;
  node.params = p;
  return OkStatus();
}

Status ParseLstm(const OptionsView& opts, Node& node) {
  auto p = std::make_shared<LstmParams>();
  fb::Table t = opts.type == kLSTMOptions ? opts.table : fb::Table();
  p->has_options = t.valid();
  p->activation = t.Scalar<int8_t>(0, 0);
  p->cell_clip = t.Scalar<float>(1, 0.f);
  p->proj_clip = t.Scalar<float>(2, 0.f);
  p->kernel_type = t.Scalar<int8_t>(3, 0);
  p->asymmetric = t.Bool(4, false);
  p->time_major = true;
  p->sequence = false;
  node.params = p;
  return OkStatus();
}

// Geometry of a FULL / sequence LSTM node, read from the tensor shapes (checked in prepare).
struct Geo {
  int n_batch = 0, max_time = 1, n_input = 0, n_cell = 0, n_output = 0;
  bool cifg = false, peephole = false, projection = false, layer_norm = false;
  bool hybrid = false;  // INT8 weights, FLOAT32 activations (TFLite's hybrid LSTM)
};

inline float Sigmoid(float x) { return 1.f / (1.f + std::exp(-x)); }

template <bool kFast = false>
void ApplySigmoid(float* v, int n) {
  if (kFast) vmath::Logistic(v, n);
  else for (int i = 0; i < n; ++i) v[i] = Sigmoid(v[i]);
}

// TFLite's MeanStddevNormalization for one row.
void Normalize(float* v, int n) {
  float sum = 0.f;
  for (int i = 0; i < n; ++i) sum += v[i];
  const float mean = sum / n;
  float sq = 0.f;
  for (int i = 0; i < n; ++i) {
    const float d = v[i] - mean;
    sq += d * d;
  }
  const float variance = sq / n;
  const float inv = 1.f / std::sqrt(variance + 1e-8f);
  for (int i = 0; i < n; ++i) v[i] = (v[i] - mean) * inv;
}

const float* Data(OpContext& ctx, int i) { return ctx.has_input(i) ? ctx.input(i).as<float>() : nullptr; }

// ------------------------------------------------------------------------------ prepare (FULL)
// A hybrid weight (INT8, one scale, zero point 0: TFLite's hybrid LSTM reads params.scale and the
// raw int8 values).
Status CheckHybridWeight(OpContext& ctx, int i, const std::string& what) {
  const Tensor& t = ctx.input(i);
  if (t.type != DType::kInt8)
    return ctx.Error(what + " (input " + std::to_string(i) + ") has type " + DTypeName(t.type) +
                     ", expected INT8 like input_to_output_weights (hybrid LSTM: every weight INT8)");
  quant::QuantRule rule;
  rule.zero_point_zero = true;
  const std::string label = what + " (input " + std::to_string(i) + ")";
  return quant::ValidateQuant(ctx, t, label.c_str(), rule);
}

Status CheckVec(OpContext& ctx, int i, int n, const std::string& what, bool hybrid_weight = false) {
  const Tensor& t = ctx.input(i);
  if (hybrid_weight) {
    TFG_RETURN_IF_ERROR(CheckHybridWeight(ctx, i, what));
  } else if (t.type != DType::kFloat32)
    return ctx.Error(what + " (input " + std::to_string(i) + ") has type " + DTypeName(t.type) +
                     ", expected FLOAT32");
  if (t.shape.size() != 1 || t.shape[0] != n)
    return ctx.Error(what + " (input " + std::to_string(i) + ") must have shape [" + std::to_string(n) +
                     "], got " + DimsToString(t.shape));
  return OkStatus();
}
Status CheckMat(OpContext& ctx, int i, int rows, int cols, const std::string& what, bool hybrid = false) {
  const Tensor& t = ctx.input(i);
  if (hybrid) {
    TFG_RETURN_IF_ERROR(CheckHybridWeight(ctx, i, what));
  } else if (t.type != DType::kFloat32) {
    return ctx.Error(what + " (input " + std::to_string(i) + ") has type " + DTypeName(t.type) +
                     (t.type == DType::kInt8 ? ", expected FLOAT32 like input_to_output_weights (hybrid LSTM: every weight INT8)"
                                             : ", expected FLOAT32"));
  }
  if (t.shape.size() != 2 || t.shape[0] != rows || t.shape[1] != cols)
    return ctx.Error(what + " (input " + std::to_string(i) + ") must have shape [" + std::to_string(rows) +
                     ", " + std::to_string(cols) + "], got " + DimsToString(t.shape));
  return OkStatus();
}

// The weight-derived part of Geo for the direction whose inputs 1..17 sit at 1 + off .. 17 + off
// (BIDIRECTIONAL_SEQUENCE_LSTM: off 0 forward, 17 backward).
Status GetGeoDir(OpContext& ctx, bool diagonal, int off, const std::string& pre, Geo* g) {
  if (!ctx.has_input(kInToOut + off) || !ctx.has_input(kRecToOut + off))
    return ctx.Error(pre + "input_to_output_weights and " + pre + "recurrent_to_output_weights (inputs " +
                     std::to_string(kInToOut + off) + ", " + std::to_string(kRecToOut + off) + ") are required");
  const Tensor& w = ctx.input(kInToOut + off);
  if (w.shape.size() != 2) return ctx.Error(pre + "input_to_output_weights must be 2-D, got " + DimsToString(w.shape));
  g->n_cell = w.shape[0];
  const Tensor& r = ctx.input(kRecToOut + off);
  if (diagonal) {
    if (r.shape.size() != 1) return ctx.Error("diagonal recurrent_to_output_weights must be 1-D, got " + DimsToString(r.shape));
    g->n_output = g->n_cell;
  } else {
    if (r.shape.size() != 2) return ctx.Error(pre + "recurrent_to_output_weights must be 2-D, got " + DimsToString(r.shape));
    g->n_output = r.shape[1];
  }
  g->cifg = !ctx.has_input(kInToIn + off);
  g->peephole = ctx.has_input(kCellToForget + off) || ctx.has_input(kCellToOut + off) || ctx.has_input(kCellToIn + off);
  g->projection = ctx.has_input(kProjW + off);
  g->layer_norm = false;
  g->hybrid = w.type == DType::kInt8;
  // LiteRT 2.3 takes UINT8 weights into its hybrid kernel too but reads them through int8_t pointers
  // (every value >= 128 becomes value - 256, the zero point is ignored): not a computation to copy.
  if (w.type == DType::kUInt8 && ctx.input(kInput).type == DType::kFloat32)
    return ctx.Error(pre + "input_to_output_weights has type UINT8: hybrid LSTM weights must be INT8 (LiteRT runs "
                     "UINT8 weights through its INT8 hybrid kernel, reinterpreting them; not supported)");
  return OkStatus();
}

Status GetGeo(OpContext& ctx, Geo* g) {
  const LstmParams& p = ctx.node().P<LstmParams>();
  const Tensor& in = ctx.input(kInput);
  if (p.sequence) {
    if (in.shape.size() != 3) return ctx.Error("input must be 3-D, got shape " + DimsToString(in.shape));
    g->max_time = p.time_major ? in.shape[0] : in.shape[1];
    g->n_batch = p.time_major ? in.shape[1] : in.shape[0];
    g->n_input = in.shape[2];
  } else {
    if (in.shape.size() != 2) return ctx.Error("input must be 2-D [batch, input], got shape " + DimsToString(in.shape));
    g->max_time = 1;
    g->n_batch = in.shape[0];
    g->n_input = in.shape[1];
  }
  TFG_RETURN_IF_ERROR(GetGeoDir(ctx, p.diagonal, 0, "", g));
  g->layer_norm = ctx.num_inputs() == 24 && ctx.has_input(kForgetLN);
  return OkStatus();
}

Status CheckDir(OpContext& ctx, const LstmParams& p, const Geo& g, int off, const std::string& pre) {
  const int nc = g.n_cell, ni = g.n_input, no = g.n_output;
  if (g.cifg != !ctx.has_input(kRecToIn + off))
    return ctx.Error("input_to_input_weights and recurrent_to_input_weights must be both present or both absent");
  const bool hy = g.hybrid;
  // LiteRT 2.3's hybrid kernel reads INT8 diagonal recurrent weights through a float pointer
  // (lstm_eval.cc EvalHybrid: GetTensorData<float>(recurrent_to_*_weights)): garbage, and past the tensor.
  if (hy && p.diagonal)
    return ctx.Error("diagonal recurrent weights with INT8 (hybrid) weights are not supported (LiteRT reads the int8 "
                     "diagonal as float32, past the tensor)");
  if (!g.cifg) TFG_RETURN_IF_ERROR(CheckMat(ctx, kInToIn + off, nc, ni, pre + "input_to_input_weights", hy));
  TFG_RETURN_IF_ERROR(CheckMat(ctx, kInToForget + off, nc, ni, pre + "input_to_forget_weights", hy));
  TFG_RETURN_IF_ERROR(CheckMat(ctx, kInToCell + off, nc, ni, pre + "input_to_cell_weights", hy));
  TFG_RETURN_IF_ERROR(CheckMat(ctx, kInToOut + off, nc, ni, pre + "input_to_output_weights", hy));
  const char* rec_names[4] = {"recurrent_to_input_weights", "recurrent_to_forget_weights", "recurrent_to_cell_weights",
                              "recurrent_to_output_weights"};
  for (int k = g.cifg ? 1 : 0; k < 4; ++k) {
    if (p.diagonal) TFG_RETURN_IF_ERROR(CheckVec(ctx, kRecToIn + off + k, nc, pre + rec_names[k]));
    else TFG_RETURN_IF_ERROR(CheckMat(ctx, kRecToIn + off + k, nc, no, pre + rec_names[k], hy));
  }
  // Peepholes: all or none (the input one is absent with CIFG).
  const bool pi = ctx.has_input(kCellToIn + off), pf = ctx.has_input(kCellToForget + off), po = ctx.has_input(kCellToOut + off);
  const bool all_or_none = ((pi || g.cifg) && pf && po) || (!pi && !pf && !po);
  if (!all_or_none) return ctx.Error("peephole weights (inputs 9-11) must be all present or all absent");
  if (g.cifg && pi) return ctx.Error("cell_to_input_weights must be absent for a CIFG LSTM");
  if (pi) TFG_RETURN_IF_ERROR(CheckVec(ctx, kCellToIn + off, nc, pre + "cell_to_input_weights", hy));
  if (pf) TFG_RETURN_IF_ERROR(CheckVec(ctx, kCellToForget + off, nc, pre + "cell_to_forget_weights", hy));
  if (po) TFG_RETURN_IF_ERROR(CheckVec(ctx, kCellToOut + off, nc, pre + "cell_to_output_weights", hy));
  if (g.cifg) {
    if (ctx.has_input(kInBias + off)) return ctx.Error("input_gate_bias must be absent for a CIFG LSTM");
  } else {
    if (!ctx.has_input(kInBias + off)) return ctx.Error("input_gate_bias (input 12) is missing");
    TFG_RETURN_IF_ERROR(CheckVec(ctx, kInBias + off, nc, pre + "input_gate_bias"));
  }
  TFG_RETURN_IF_ERROR(CheckVec(ctx, kForgetBias + off, nc, pre + "forget_gate_bias"));
  TFG_RETURN_IF_ERROR(CheckVec(ctx, kCellBias + off, nc, pre + "cell_gate_bias"));
  TFG_RETURN_IF_ERROR(CheckVec(ctx, kOutBias + off, nc, pre + "output_gate_bias"));
  if (g.projection) {
    TFG_RETURN_IF_ERROR(CheckMat(ctx, kProjW + off, no, nc, pre + "projection_weights", hy));
    if (ctx.has_input(kProjB + off)) TFG_RETURN_IF_ERROR(CheckVec(ctx, kProjB + off, no, pre + "projection_bias"));
  } else {
    if (ctx.has_input(kProjB + off)) return ctx.Error("projection_bias is given without projection_weights");
    if (no != nc)
      return ctx.Error("without projection the output size (" + std::to_string(no) + ") must equal the cell size (" +
                       std::to_string(nc) + ")");
  }
  return OkStatus();
}

Status CheckStates(OpContext& ctx, const Geo& g, int hs_idx, int cs_idx, const std::string& pre) {
  // State tensors: variables, updated in place.
  const char* state_names[2] = {"output_state", "cell_state"};
  const int64_t want[2] = {int64_t(g.n_batch) * g.n_output, int64_t(g.n_batch) * g.n_cell};
  for (int k = 0; k < 2; ++k) {
    const Tensor& s = ctx.input(k == 0 ? hs_idx : cs_idx);
    if (!s.is_variable)
      return ctx.Error((pre + state_names[k]) + " (input " + std::to_string(k == 0 ? hs_idx : cs_idx) +
                       ") must be a variable tensor");
    if (s.type != DType::kFloat32)
      return ctx.Error((pre + state_names[k]) + " has type " + DTypeName(s.type) + ", expected FLOAT32");
    if (s.num_elements() != want[k] || s.bytes < size_t(want[k]) * sizeof(float) || (want[k] > 0 && !s.data))
      return ctx.Error((pre + state_names[k]) + " must hold batch x " + (k == 0 ? "output" : "cell") + " = " +
                       std::to_string(want[k]) + " elements, got shape " + DimsToString(s.shape));
  }
  return OkStatus();
}

Status PrepareFast(OpContext& ctx, const Geo& g);  // scratch and packed weights of the fast kernel
Status PrepareInteger(OpContext& ctx, const Geo& g);  // full-integer (INT8 input) kernel
Status EvalInteger(OpContext& ctx, const Geo& g);
size_t HybridWorkBytes(const Geo& g, int n_aux);    // scratch of the hybrid kernel

Status PrepareFull(OpContext& ctx) {
  const LstmParams& p = ctx.node().P<LstmParams>();
  if (ctx.num_inputs() != 20 && ctx.num_inputs() != 24)
    return ctx.Error("expects 20 or 24 inputs, got " + std::to_string(ctx.num_inputs()));
  TFG_RETURN_IF_ERROR(ctx.CheckArity(20, 24, 1, 1));
  if (p.activation < 0 || p.activation > 5)
    return ctx.Error("unsupported fused activation function " + std::to_string(p.activation));
  if (!(p.cell_clip >= 0.f)) return ctx.Error("cell_clip must be >= 0, got " + std::to_string(p.cell_clip));
  if (!(p.proj_clip >= 0.f)) return ctx.Error("proj_clip must be >= 0, got " + std::to_string(p.proj_clip));
  for (int i : {kInput, kInToForget, kInToCell, kInToOut, kRecToForget, kRecToCell, kRecToOut, kForgetBias,
                kCellBias, kOutBias, kOutState, kCellState})
    if (!ctx.has_input(i)) return ctx.Error("required input " + std::to_string(i) + " is missing");
  const Tensor& in = ctx.input(kInput);
  if (in.type != DType::kFloat32 && in.type != DType::kInt8)
    return ctx.Error(std::string("input type ") + DTypeName(in.type) + " is not supported (FLOAT32, or INT8: full-integer)");
  Geo g;
  TFG_RETURN_IF_ERROR(GetGeo(ctx, &g));
  if (in.type == DType::kInt8) return PrepareInteger(ctx, g);
  const int nc = g.n_cell, no = g.n_output;
  TFG_RETURN_IF_ERROR(CheckDir(ctx, p, g, 0, ""));
  if (g.layer_norm) {
    if (g.cifg) {
      if (ctx.has_input(kInLN)) return ctx.Error("input_layer_norm_coefficients must be absent for a CIFG LSTM");
    } else {
      if (!ctx.has_input(kInLN)) return ctx.Error("input_layer_norm_coefficients (input 20) is missing");
      TFG_RETURN_IF_ERROR(CheckVec(ctx, kInLN, nc, "input_layer_norm_coefficients"));
    }
    TFG_RETURN_IF_ERROR(CheckVec(ctx, kForgetLN, nc, "forget_layer_norm_coefficients"));
    if (!ctx.has_input(kCellLN) || !ctx.has_input(kOutLN))
      return ctx.Error("layer norm coefficients (inputs 20-23) must be all present or all absent");
    TFG_RETURN_IF_ERROR(CheckVec(ctx, kCellLN, nc, "cell_layer_norm_coefficients"));
    TFG_RETURN_IF_ERROR(CheckVec(ctx, kOutLN, nc, "output_layer_norm_coefficients"));
  } else if (ctx.num_inputs() == 24 && (ctx.has_input(kInLN) || ctx.has_input(kCellLN) || ctx.has_input(kOutLN))) {
    return ctx.Error("layer norm coefficients (inputs 20-23) must be all present or all absent");
  }
  TFG_RETURN_IF_ERROR(CheckStates(ctx, g, kOutState, kCellState, ""));
  Dims out_shape = in.shape;
  out_shape.back() = no;
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, DType::kFloat32));
  TFG_RETURN_IF_ERROR(ctx.SetOutputShape(0, out_shape));
  if (g.hybrid) {
    ctx.node().user_data.reset();
    ctx.RequestScratch(HybridWorkBytes(g, 0));
    return OkStatus();
  }
  return PrepareFast(ctx, g);
}

// ------------------------------------------------------------------------------ eval (FULL)
struct Weights {
  const float* wx[4];   // input_to_{i,f,c,o}
  const float* wh[4];   // recurrent_to_{i,f,c,o}
  const float* peep[4]; // cell_to_{i,f,-,o}
  const float* bias[4];
  const float* ln[4];
  const float* proj_w;
  const float* proj_b;
  const float* aux[4] = {nullptr, nullptr, nullptr, nullptr};  // aux_input_to_{i,f,c,o} (bidirectional)
};

// off: 0, or 17 for the backward direction of BIDIRECTIONAL_SEQUENCE_LSTM (no layer norm there).
Weights GetWeights(OpContext& ctx, const Geo& g, int off = 0) {
  Weights w;
  for (int k = 0; k < 4; ++k) {
    w.wx[k] = Data(ctx, kInToIn + off + k);
    w.wh[k] = Data(ctx, kRecToIn + off + k);
    w.bias[k] = Data(ctx, kInBias + off + k);
    w.ln[k] = (off == 0 && g.layer_norm && ctx.num_inputs() == 24) ? Data(ctx, kInLN + k) : nullptr;
  }
  w.peep[0] = Data(ctx, kCellToIn + off);
  w.peep[1] = Data(ctx, kCellToForget + off);
  w.peep[2] = nullptr;
  w.peep[3] = Data(ctx, kCellToOut + off);
  w.proj_w = g.projection ? Data(ctx, kProjW + off) : nullptr;
  w.proj_b = g.projection ? Data(ctx, kProjB + off) : nullptr;
  return w;
}

// Row (batch b, step t) of the input / output.
inline int64_t RowIndex(bool time_major, int n_batch, int max_time, int b, int t) {
  return time_major ? int64_t(t) * n_batch + b : int64_t(b) * max_time + t;
}

// The plain kernel: TFLite's LstmStepFloat for one batch row at a time, dot products in order.
// One direction over the sequence (backward: steps T-1 .. 0); aux (n_aux wide, with w.aux) is
// BIDIRECTIONAL_SEQUENCE_LSTM's auxiliary input; output rows are y_ld apart (merged outputs).
// work: RefWorkFloats(g) floats (the node's scratch).
size_t RefWorkFloats(const Geo& g) { return 5 * size_t(g.n_cell); }
void RefSequence(const LstmParams& p, const Geo& g, const Weights& w, const float* x, const float* aux, int n_aux,
                 float* y, int y_ld, bool forward, float* hs, float* cs, float* work) {
  const int nc = g.n_cell, ni = g.n_input, no = g.n_output;
  float* gate = work;              // 4 gates of nc
  float* scratch = work + 4 * nc;  // o * act(c), nc
  const bool time_major = p.time_major || !p.sequence;
  for (int b = 0; b < g.n_batch; ++b) {
    float* h = hs + int64_t(b) * no;
    float* c = cs + int64_t(b) * nc;
    for (int step = 0; step < g.max_time; ++step) {
      const int t = forward ? step : g.max_time - 1 - step;
      const int64_t row = RowIndex(time_major, g.n_batch, g.max_time, b, t);
      const float* xt = x + row * ni;
      const float* at = aux ? aux + row * n_aux : nullptr;
      float* yt = y + row * y_ld;
      auto calc_gate = [&](int k, const float* cell, bool sigmoid) {
        float* gk = gate + k * nc;
        for (int j = 0; j < nc; ++j) gk[j] = w.ln[k] ? 0.f : w.bias[k][j];
        for (int j = 0; j < nc; ++j) {
          float d = 0.f;
          for (int i = 0; i < ni; ++i) d += w.wx[k][int64_t(j) * ni + i] * xt[i];
          gk[j] += d;
        }
        if (at && w.aux[k]) {
          for (int j = 0; j < nc; ++j) {
            float d = 0.f;
            for (int i = 0; i < n_aux; ++i) d += w.aux[k][int64_t(j) * n_aux + i] * at[i];
            gk[j] += d;
          }
        }
        if (p.diagonal) {
          for (int j = 0; j < nc; ++j) gk[j] += w.wh[k][j] * h[j];
        } else {
          for (int j = 0; j < nc; ++j) {
            float d = 0.f;
            for (int i = 0; i < no; ++i) d += w.wh[k][int64_t(j) * no + i] * h[i];
            gk[j] += d;
          }
        }
        if (w.peep[k])
          for (int j = 0; j < nc; ++j) gk[j] += w.peep[k][j] * cell[j];
        if (w.ln[k]) {
          Normalize(gk, nc);
          for (int j = 0; j < nc; ++j) gk[j] = gk[j] * w.ln[k][j];
          for (int j = 0; j < nc; ++j) gk[j] = gk[j] + w.bias[k][j];
        }
        if (sigmoid) ApplySigmoid(gk, nc); else seq::ApplyActivationToVector(p.activation, gk, nc, gk);
      };
      if (!g.cifg) calc_gate(0, c, true);
      calc_gate(1, c, true);
      calc_gate(2, c, false);
      float* ig = gate;
      float* fg = gate + nc;
      float* cg = gate + 2 * nc;
      float* og = gate + 3 * nc;
      for (int j = 0; j < nc; ++j) c[j] = fg[j] * c[j];
      if (g.cifg) {
        for (int j = 0; j < nc; ++j) fg[j] = 1.f - fg[j];
        for (int j = 0; j < nc; ++j) c[j] += cg[j] * fg[j];
      } else {
        for (int j = 0; j < nc; ++j) c[j] += cg[j] * ig[j];
      }
      if (p.cell_clip > 0.f)
        for (int j = 0; j < nc; ++j) c[j] = std::max(-p.cell_clip, std::min(p.cell_clip, c[j]));
      calc_gate(3, c, true);
      // Output: the activation writes into the cell-gate scratch (nothing for NONE).
      seq::ApplyActivationToVector(p.activation, c, nc, cg);
      for (int j = 0; j < nc; ++j) scratch[j] = og[j] * cg[j];
      if (w.proj_w) {
        for (int j = 0; j < no; ++j) h[j] = w.proj_b ? w.proj_b[j] : 0.f;
        for (int j = 0; j < no; ++j) {
          float d = 0.f;
          for (int i = 0; i < nc; ++i) d += w.proj_w[int64_t(j) * nc + i] * scratch[i];
          h[j] += d;
        }
        if (p.proj_clip > 0.f)
          for (int j = 0; j < no; ++j) h[j] = std::max(-p.proj_clip, std::min(p.proj_clip, h[j]));
      } else {
        for (int j = 0; j < no; ++j) h[j] = scratch[j];
      }
      std::memcpy(yt, h, sizeof(float) * no);
    }
  }
}

Status EvalFullHybrid(OpContext& ctx, const Geo& g);

Status EvalFullRef(OpContext& ctx) {
  const LstmParams& p = ctx.node().P<LstmParams>();
  Geo g;
  TFG_RETURN_IF_ERROR(GetGeo(ctx, &g));
  if (ctx.input(kInput).type == DType::kInt8) return EvalInteger(ctx, g);
  if (g.hybrid) return EvalFullHybrid(ctx, g);
  const Weights w = GetWeights(ctx, g);
  RefSequence(p, g, w, ctx.input(kInput).as<float>(), nullptr, 0, ctx.output(0).as<float>(), g.n_output, true,
              ctx.input(kOutState).as<float>(), ctx.input(kCellState).as<float>(), static_cast<float*>(ctx.scratch()));
  return OkStatus();
}

// ------------------------------------------------------------------------------ hybrid (FULL)
// TFLite's hybrid LSTM (lstm_eval.cc EvalHybrid / LstmStepHybrid; its builtin and reference
// registrations run the same code): INT8 weights with one scale each (input, recurrent, aux,
// peephole, projection), FLOAT32 activations, biases, layer norm coefficients and states. Per
// step and batch row: the input, aux input and previous output state rows are quantized on the fly
// (quant::QuantizeFloatRow: symmetric, or asymmetric_quantize_inputs); each gate starts from its
// bias (0 with layer norm) and accumulates float(int32 dot - row_sum * zp) * (row scale * weight
// scale) per weight matrix (seq::HybridMatVecAccumulate), in TFLite's order input, aux, recurrent;
// peepholes use the weights recovered in float (scale * w); layer norm, the cell update and the
// output are the float kernel's, the sigmoid / tanh LiteRT's Eigen ones (namespace eig below, with
// the packet / scalar split of its buffers); the projection quantizes o * act(c) per row the same
// way; the asymmetric row scale is computed in float (quant::QuantizeFloatRow). Bit-exact against LiteRT 2.3
// builtin (tests/test_lstm_int8.py). Fast and reference kernels are this one plain kernel (TFLite has
// no other).
struct HybridWeights {
  const int8_t* wx[4] = {};
  const int8_t* wh[4] = {};
  const int8_t* aux[4] = {};
  const int8_t* proj = nullptr;
  float sx[4] = {}, sh[4] = {}, saux[4] = {}, sproj = 0.f;
  const int8_t* peep[4] = {};
  float speep[4] = {};
  const float* bias[4] = {};
  const float* ln[4] = {};
  const float* proj_b = nullptr;
};

const int8_t* Data8(OpContext& ctx, int i, float* scale) {
  if (!ctx.has_input(i)) return nullptr;
  *scale = ctx.input(i).quant.scale.empty() ? 0.f : ctx.input(i).quant.scale[0];
  return ctx.input(i).as<int8_t>();
}

HybridWeights GetHybridWeights(OpContext& ctx, const Geo& g, int off, int aux_base) {
  HybridWeights w;
  for (int k = 0; k < 4; ++k) {
    w.wx[k] = Data8(ctx, kInToIn + off + k, &w.sx[k]);
    w.wh[k] = Data8(ctx, kRecToIn + off + k, &w.sh[k]);
    w.bias[k] = Data(ctx, kInBias + off + k);
    w.ln[k] = (off == 0 && g.layer_norm && ctx.num_inputs() == 24) ? Data(ctx, kInLN + k) : nullptr;
    if (aux_base >= 0) w.aux[k] = Data8(ctx, aux_base + k, &w.saux[k]);
  }
  w.peep[0] = Data8(ctx, kCellToIn + off, &w.speep[0]);
  w.peep[1] = Data8(ctx, kCellToForget + off, &w.speep[1]);
  w.peep[3] = Data8(ctx, kCellToOut + off, &w.speep[3]);
  w.proj = g.projection ? Data8(ctx, kProjW + off, &w.sproj) : nullptr;
  w.proj_b = g.projection ? Data(ctx, kProjB + off) : nullptr;
  return w;
}

// Scratch of one direction: floats (4 gates, o * act(c), 3 recovered peephole vectors), int32 row
// sums (12 weight matrices of n_cell rows + the projection's), int8 quantized rows.
size_t HybridWorkBytes(const Geo& g, int n_aux) {
  const size_t nc = size_t(g.n_cell);
  return (8 * nc) * sizeof(float) + (12 * nc + size_t(g.n_output)) * sizeof(int32_t) +
         size_t(g.n_input) + size_t(n_aux) + size_t(g.n_output) + nc + 64;
}

void RowSums(const int8_t* w, int rows, int cols, int32_t* out) {
  for (int j = 0; j < rows; ++j) {
    int32_t s = 0;
    for (int i = 0; i < cols; ++i) s += w[int64_t(j) * cols + i];
    out[j] = s;
  }
}

// LiteRT 2.3's float activations in its LSTM kernels (tensor_utils ApplySigmoidToVector /
// ApplyTanhToVector, used by lstm_eval.cc's float and hybrid paths) are Eigen array expressions,
// built for SSE (Packet4f, no FMA): logistic() and tanh() of Eigen's current sources
// (UnaryFunctors.h scalar_logistic_op<float>, GenericPacketMathFunctions.h ptanh_float). Eigen's
// assignment loop runs a scalar head up to the first 16-byte aligned destination element, 4-wide
// packets, then a scalar tail; tanh is the same rational function either way, logistic is not
// (packets: its own exp by range reduction and a degree-5 polynomial; scalars: expf). Measured:
// LiteRT's TANH and LOGISTIC ops equal these bit for bit on 16387 inputs (libm tanhf / expf differ
// on ~50-60% of them), and the split matches its 7-, 9- and 13-element outputs.
namespace eig {
__attribute__((optimize("fp-contract=off"))) inline float Tanh(float a) {
  const float c = 7.90738964080810547f;
  const float x = std::max(std::min(a, c), -c);
  static const float alpha[4] = {1.394553628e-8f, 2.102733560e-5f, 3.520756727e-3f, 1.340216100e-1f};
  static const float beta[5] = {8.015776984e-7f, 3.326951409e-4f, 2.597254514e-2f, 4.673548340e-1f, 1.0f};
  const float x2 = x * x;
  const float x3 = x2 * x;
  float p = alpha[0];
  for (int i = 1; i < 4; ++i) p = p * x2 + alpha[i];
  float q = beta[0];
  for (int i = 1; i < 5; ++i) q = q * x2 + beta[i];
  p = x3 * p + x;
  return p / q;
}
__attribute__((optimize("fp-contract=off"))) inline float LogisticPacket(float a) {
  if (a < -104.f) return 0.f;
  float x = std::min(a, 16.6355324f) * 0.5f;
  const float m = std::floor(x * 1.44269504088896341f + 0.5f);
  float r = m * -0.693359375f + x;
  r = m * 2.12194440e-4f + r;
  const float r2 = r * r;
  const float p_even = r2 * 4.1898667812347412109375e-2f + 0.49999141693115234375f;
  const float p_odd = r2 * 8.33471305668354034423828125e-3f + 0.16666877269744873046875f;
  const float p_low = r + 1.f;
  float pe = r * p_odd + p_even;
  pe = r2 * pe + p_low;
  float e = std::ldexp(pe, int(m));  // pldexp_fast: exact scaling by 2^m
  e = e * e;
  return e / (1.f + e);
}
inline float LogisticScalar(float a) {
  const float e = std::exp(std::min(a, 16.6355324f));
  return e / (1.0f + e);
}
// Where one of our rows sits in LiteRT's activation call: the call's destination offset in floats
// from a 16-byte aligned base (its scratch tensors are 64-byte aligned), its length, and the row's
// first element within it.
struct Span {
  int64_t start = 0, size = 0, first = 0;
  bool InPacket(int64_t e) const {
    int64_t a0 = (4 - start % 4) % 4;
    if (a0 > size) a0 = size;
    const int64_t a1 = a0 + (size - a0) / 4 * 4;
    return e >= a0 && e < a1;
  }
};
inline void SigmoidRow(float* v, int n, const Span& s) {
  for (int j = 0; j < n; ++j) v[j] = s.InPacket(s.first + j) ? LogisticPacket(v[j]) : LogisticScalar(v[j]);
}
// ApplyActivationToVector with the fused activation (TANH is Eigen's; the others plain loops).
inline void ActivationRow(int act, const float* in, int n, float* out) {
  if (act == 4) {
    for (int j = 0; j < n; ++j) out[j] = Tanh(in[j]);
    return;
  }
  seq::ApplyActivationToVector(act, in, n, out);
}
}  // namespace eig

void HybridSequence(const LstmParams& p, const Geo& g, const HybridWeights& w, const float* x, const float* aux,
                    int n_aux, float* y, int y_ld, bool forward, float* hs, float* cs, void* work) {
  const int nc = g.n_cell, ni = g.n_input, no = g.n_output;
  const bool asym = p.asymmetric;
  float* gate = static_cast<float*>(work);  // 4 gates of nc
  float* scratch = gate + 4 * nc;           // o * act(c)
  float* peep = scratch + nc;               // recovered peephole weights (i, f, o)
  int32_t* sums = reinterpret_cast<int32_t*>(peep + 3 * nc);  // wx[4], aux[4], wh[4] (nc each), proj (no)
  int8_t* qx = reinterpret_cast<int8_t*>(sums + 12 * nc + no);
  int8_t* qa = qx + ni;
  int8_t* qh = qa + n_aux;
  int8_t* qs = qh + no;
  float* peep_k[4] = {nullptr, nullptr, nullptr, nullptr};
  for (int k : {0, 1, 3}) {
    if (!w.peep[k]) continue;
    peep_k[k] = peep + (k == 3 ? 2 : k) * nc;
    for (int j = 0; j < nc; ++j) peep_k[k][j] = w.speep[k] * float(w.peep[k][j]);  // VectorScalarMultiply
  }
  const int32_t* rs_x[4] = {};
  const int32_t* rs_a[4] = {};
  const int32_t* rs_h[4] = {};
  const int32_t* rs_p = nullptr;
  if (asym) {
    for (int k = 0; k < 4; ++k) {
      if (w.wx[k]) RowSums(w.wx[k], nc, ni, sums + k * nc), rs_x[k] = sums + k * nc;
      if (w.aux[k]) RowSums(w.aux[k], nc, n_aux, sums + (4 + k) * nc), rs_a[k] = sums + (4 + k) * nc;
      if (w.wh[k]) RowSums(w.wh[k], nc, no, sums + (8 + k) * nc), rs_h[k] = sums + (8 + k) * nc;
    }
    if (w.proj) RowSums(w.proj, no, nc, sums + 12 * nc), rs_p = sums + 12 * nc;
  }
  const bool time_major = p.time_major || !p.sequence;
  // LiteRT's gate buffers: consecutive n_cell x n_batch blocks of its scratch tensor, in the order
  // input, cell, forget, output (CIFG: cell, forget, output); time-major (and LSTM) steps activate a
  // whole block at once, batch-major ones one row (n_batch 1) at a time.
  auto span = [&](int k, int b) {
    static const int order[4] = {0, 2, 1, 3}, order_cifg[4] = {-1, 1, 0, 2};
    const int64_t blk = int64_t(g.n_batch) * nc;
    eig::Span s;
    s.start = (g.cifg ? order_cifg[k] : order[k]) * blk + (time_major ? 0 : int64_t(b) * nc);
    s.size = time_major ? blk : nc;
    s.first = time_major ? int64_t(b) * nc : 0;
    return s;
  };
  for (int b = 0; b < g.n_batch; ++b) {
    float* h = hs + int64_t(b) * no;
    float* c = cs + int64_t(b) * nc;
    for (int step = 0; step < g.max_time; ++step) {
      const int t = forward ? step : g.max_time - 1 - step;
      const int64_t row = RowIndex(time_major, g.n_batch, g.max_time, b, t);
      float sx = 1.f, sa = 1.f, sh = 1.f;
      int32_t zx = 0, za = 0, zh = 0;
      quant::QuantizeFloatRow(x + row * ni, ni, asym, qx, &sx, &zx);
      const bool use_aux = aux && w.aux[1];
      if (use_aux) quant::QuantizeFloatRow(aux + row * n_aux, n_aux, asym, qa, &sa, &za);
      quant::QuantizeFloatRow(h, no, asym, qh, &sh, &zh);
      auto calc_gate = [&](int k, const float* cell, bool sigmoid) {
        float* gk = gate + k * nc;
        for (int j = 0; j < nc; ++j) gk[j] = w.ln[k] ? 0.f : w.bias[k][j];
        seq::HybridMatVecAccumulate(w.wx[k], nc, ni, qx, sx * w.sx[k], zx, rs_x[k], gk, 1);
        if (use_aux) seq::HybridMatVecAccumulate(w.aux[k], nc, n_aux, qa, sa * w.saux[k], za, rs_a[k], gk, 1);
        seq::HybridMatVecAccumulate(w.wh[k], nc, no, qh, sh * w.sh[k], zh, rs_h[k], gk, 1);
        if (peep_k[k])
          for (int j = 0; j < nc; ++j) gk[j] += peep_k[k][j] * cell[j];
        if (w.ln[k]) {
          Normalize(gk, nc);
          for (int j = 0; j < nc; ++j) gk[j] = gk[j] * w.ln[k][j];
          for (int j = 0; j < nc; ++j) gk[j] = gk[j] + w.bias[k][j];
        }
        if (sigmoid) eig::SigmoidRow(gk, nc, span(k, b)); else eig::ActivationRow(p.activation, gk, nc, gk);
      };
      if (!g.cifg) calc_gate(0, c, true);
      calc_gate(1, c, true);
      calc_gate(2, c, false);
      float* ig = gate;
      float* fg = gate + nc;
      float* cg = gate + 2 * nc;
      float* og = gate + 3 * nc;
      for (int j = 0; j < nc; ++j) c[j] = fg[j] * c[j];
      if (g.cifg) {
        for (int j = 0; j < nc; ++j) fg[j] = 1.f - fg[j];
        for (int j = 0; j < nc; ++j) c[j] += cg[j] * fg[j];
      } else {
        for (int j = 0; j < nc; ++j) c[j] += cg[j] * ig[j];
      }
      if (p.cell_clip > 0.f)
        for (int j = 0; j < nc; ++j) c[j] = std::max(-p.cell_clip, std::min(p.cell_clip, c[j]));
      calc_gate(3, c, true);
      eig::ActivationRow(p.activation, c, nc, cg);  // nothing for NONE: o * g, as TFLite
      for (int j = 0; j < nc; ++j) scratch[j] = og[j] * cg[j];
      if (w.proj) {
        for (int j = 0; j < no; ++j) h[j] = w.proj_b ? w.proj_b[j] : 0.f;
        float ss = 1.f;
        int32_t zs = 0;
        quant::QuantizeFloatRow(scratch, nc, asym, qs, &ss, &zs);
        seq::HybridMatVecAccumulate(w.proj, no, nc, qs, ss * w.sproj, zs, rs_p, h, 1);
        if (p.proj_clip > 0.f)
          for (int j = 0; j < no; ++j) h[j] = std::max(-p.proj_clip, std::min(p.proj_clip, h[j]));
      } else {
        for (int j = 0; j < no; ++j) h[j] = scratch[j];
      }
      std::memcpy(y + row * y_ld, h, sizeof(float) * no);
    }
  }
}

Status EvalFullHybrid(OpContext& ctx, const Geo& g) {
  const LstmParams& p = ctx.node().P<LstmParams>();
  const HybridWeights w = GetHybridWeights(ctx, g, 0, -1);
  HybridSequence(p, g, w, ctx.input(kInput).as<float>(), nullptr, 0, ctx.output(0).as<float>(), g.n_output, true,
                 ctx.input(kOutState).as<float>(), ctx.input(kCellState).as<float>(), ctx.scratch());
  return OkStatus();
}

// ------------------------------------------------------------------------------ integer (FULL)
// Full-integer LSTM, TFLite's lstm_eval.cc EvalInteger8x8_16 (LSTM and UNIDIRECTIONAL_SEQUENCE_LSTM
// with an INT8 input and 5 intermediates; LiteRT's builtin and reference registrations run the same
// portable tensor_utils code, so fast and reference kernels here are this one plain kernel):
//   types   input, output_state, output, weights, projection INT8; cell_state INT16 with a
//           power-of-two scale 2^k (k in [-15, -9]: tanh(c) reads it as Q(15 + k)); peepholes and
//           layer norm coefficients INT16; gate and projection biases INT32 (raw).
//   scales  (lstm.cc PopulateQuantizedLstmParams8x8_16) intermediates 0..3 are the scales of the
//           four gate pre-activations with layer norm (else Q3.12, 2^-12); intermediate 4 is the
//           hidden o * tanh(c) before the projection. Effective multipliers: W_x x -> w * s_x / s_gate,
//           W_h h -> w * s_h / s_gate, peephole -> 2^k * w / s_gate, hidden 2^-30 / s_hidden,
//           projection w * s_hidden / s_h, layer norm its coefficients' scale.
//   biases  -zp_x * rowsum(W_x) (+ the gate bias without layer norm), -zp_h * rowsum(W_h),
//           projection: -zp_hidden * rowsum(W_p) + its bias.
// Per step and batch row, each gate is int16: sat16(MBQM(W_x x + b_x)), + MBQM(W_h h + b_h)
// (saturated after each), + MBQM(p * c) (peephole), then the integer layer norm
// (ApplyLayerNorm: mean and variance in int64, 1 / stddev by GetInvSqrtQuantizedMultiplierExp,
// * coefficient + bias, / 1024 rounded away, MBQM(scale, shift + 12)), then gemmlowp's int16
// logistic (Q3.12 in) or tanh (cell gate, Q3.12 in) to Q0.15. The fused activation option is
// ignored (TFLite: "the activation is always Tanh"). Cell: c = (f * c) >> 15 rounded, + (i * g) >>
// (30 + k) rounded (int16 casts, no saturation: CwiseMul), sum saturated (CwiseAdd), clipped to
// +-trunc(cell_clip / 2^k). Output: tanh(c) with 15 + k integer bits, hidden = clamp8(MBQM(o * t)
// + zp_hidden), projection clamp8(MBQM(W_p hidden + bias) + zp_h), clipped to
// +-trunc(proj_clip / s_output); without projection h = hidden. MBQM is TFLite's double-rounding
// MultiplyByQuantizedMultiplier throughout. The zero-point signs of the hidden state are the ones
// LiteRT 2.3's builtin kernel shows (measured: tests/op_cases/lstm.py int8_projection_hidden_zp;
// some TFLite sources subtract it), as is the peephole quirk in EvalInteger. LiteRT starts an INT8
// variable tensor at its zero point (Subgraph's load does the same).
// The 12-intermediate "8x8_8" variant of LSTM: section "integer 8x8_8" below. Not supported (refused
// at prepare): diagonal recurrent weights.
struct IntLstm {
  bool gate[4] = {};          // present (input gate absent for CIFG)
  bool peep = false, ln = false, proj = false;
  std::vector<int32_t> bx[4], bh[4], bp;  // effective biases
  int32_t mx[4] = {}, mh[4] = {}, mc[4] = {}, mln[4] = {}, guard[4] = {};
  int sx[4] = {}, sh[4] = {}, sc[4] = {}, sln[4] = {};
  int32_t mhid = 0, mproj = 0;
  int shid = 0, sproj = 0;
  int32_t hidden_zp = 0, out_zp = 0;
  int cell_scale = -11;
  int16_t cell_clip = 0;
  int8_t proj_clip = 0;
  std::vector<const void*> key;
  // The 12-intermediate "8x8_8" form (LSTM only; see the section "integer 8x8_8"): forget, cell and
  // output gate (index 1..3). zx8 / zh8: int8 zero points of the W_x x / W_h h outputs; ma / sa:
  // the two-gate add's multipliers (x part, h part); ln_f: the layer norm scale as the float kernel
  // rebuilds it from its quantized multiplier.
  bool v8 = false;
  int32_t zx8[4] = {}, zh8[4] = {};
  int32_t ma[4][2] = {}, sa[4][2] = {};
  float ln_f[4] = {};
  int32_t in_zp = 0;
};

// Reads and checks one tensor's type and (per-tensor) quantization; `symmetric`: zero point 0.
Status IntTensorQuant(OpContext& ctx, const Tensor& t, const std::string& what, DType want, bool symmetric,
                      float* scale, int32_t* zp) {
  if (t.type != want)
    return ctx.Error(what + " has type " + DTypeName(t.type) + ", expected " + DTypeName(want) +
                     " (full-integer LSTM: INT8 activations and weights, INT16 cell state, peepholes and layer norm "
                     "coefficients, INT32 biases)");
  quant::QuantRule rule;
  rule.zero_point_zero = symmetric;
  quant::TensorQuant q;
  TFG_RETURN_IF_ERROR(quant::ReadQuant(ctx, t, what.c_str(), rule, &q));
  if (scale) *scale = q.Scale();
  if (zp) *zp = q.ZeroPoint();
  return OkStatus();
}

Status IntShape(OpContext& ctx, const Tensor& t, const std::string& what, const Dims& want) {
  if (t.shape != want)
    return ctx.Error(what + " must have shape " + DimsToString(want) + ", got " + DimsToString(t.shape));
  return OkStatus();
}

void RowSumsTimes(const int8_t* w, int rows, int cols, int32_t zp, const int32_t* bias, std::vector<int32_t>* out) {
  out->assign(rows, 0);
  for (int j = 0; j < rows; ++j) {
    int32_t s = 0;
    for (int i = 0; i < cols; ++i) s += w[int64_t(j) * cols + i];
    (*out)[j] = int32_t(uint32_t(bias ? bias[j] : 0) + uint32_t(s) * uint32_t(zp));  // int32 wrapping as TFLite's
  }
}

const char* const kGateNames[4] = {"input", "forget", "cell", "output"};

// Scale and zero point of intermediate tensor i of the node (per-tensor, finite scale > 0, zero
// point in [zlo, zhi]); `what` names it in errors.
Status ReadIntermediate(OpContext& ctx, int i, const std::string& what, int64_t zlo, int64_t zhi, float* scale,
                        int32_t* zp) {
  const int ti = ctx.node().intermediates[i];
  if (ti < 0 || ti >= int(ctx.subgraph().tensors().size()))
    return ctx.Error(what + " is missing (tensor index " + std::to_string(ti) + ")");
  const Tensor& t = ctx.subgraph().tensor(ti);
  if (t.quant.scale.empty()) return ctx.Error(quant::TensorLabel(what.c_str(), t) + " has no quantization parameters");
  if (t.quant.scale.size() != 1)
    return ctx.Error(quant::TensorLabel(what.c_str(), t) + " must have one scale (per-tensor), got " +
                     std::to_string(t.quant.scale.size()));
  const float s = t.quant.scale[0];
  const int64_t z = t.quant.zero_point.empty() ? 0 : t.quant.zero_point[0];
  if (!(std::isfinite(s) && s > 0.f))
    return ctx.Error(quant::TensorLabel(what.c_str(), t) + " has scale " + std::to_string(s) +
                     "; a scale must be finite and > 0");
  if (z < zlo || z > zhi)
    return ctx.Error(quant::TensorLabel(what.c_str(), t) + " has zero point " + std::to_string(z) + ", outside [" +
                     std::to_string(zlo) + ", " + std::to_string(zhi) + "]");
  *scale = s;
  *zp = int32_t(z);
  return OkStatus();
}

Status Build8x8_8(OpContext& ctx, const Geo& g, IntLstm* L);

// Checks the node and computes the parameters (biases need the weights' data).
Status BuildIntLstm(OpContext& ctx, const Geo& g, IntLstm* L) {
  const LstmParams& p = ctx.node().P<LstmParams>();
  const int nc = g.n_cell, ni = g.n_input, no = g.n_output;
  if (p.diagonal) return ctx.Error("diagonal recurrent weights are not supported with an INT8 input (full-integer LSTM)");
  const std::vector<int32_t>& inter = ctx.node().intermediates;
  if (inter.size() == 12) {
    if (p.sequence)
      return ctx.Error("the 12-intermediate (8x8_8) integer form is LSTM-only: a full-integer "
                       "UNIDIRECTIONAL_SEQUENCE_LSTM takes 5 intermediate tensors (8x8_16), as LiteRT 2.3's prepare "
                       "requires");
    return Build8x8_8(ctx, g, L);
  }
  if (inter.size() != 5)
    return ctx.Error("a full-integer LSTM (INT8 input) needs 5 intermediate tensors (the 4 gate pre-activations and "
                     "the hidden state, whose scales TFLite uses), got " + std::to_string(inter.size()));
  L->ln = g.layer_norm;
  L->peep = g.peephole;
  L->proj = g.projection;
  float sx, sh;
  int32_t zx, zh;
  TFG_RETURN_IF_ERROR(IntTensorQuant(ctx, ctx.input(kInput), "input (input 0)", DType::kInt8, false, &sx, &zx));
  TFG_RETURN_IF_ERROR(IntTensorQuant(ctx, ctx.input(kOutState), "output_state (input 18)", DType::kInt8, false, &sh, &zh));
  float scs;
  TFG_RETURN_IF_ERROR(IntTensorQuant(ctx, ctx.input(kCellState), "cell_state (input 19)", DType::kInt16, true, &scs, nullptr));
  int k2 = 0;
  if (!quant::CheckedLog2(scs, &k2) || k2 > -9 || k2 < -15)
    return ctx.Error("cell_state (input 19) has scale " + std::to_string(scs) +
                     "; a full-integer LSTM needs a power-of-two cell state scale 2^k with -15 <= k <= -9");
  L->cell_scale = k2;
  L->out_zp = zh;
  // Intermediates: 0..3 only read with layer norm (TFLite), 4 always.
  float inter_scale[5];
  int32_t inter_zp[5];
  for (int i = 0; i < 5; ++i) {
    inter_scale[i] = 1.f / 4096.f;
    inter_zp[i] = 0;
    if (i < 4 && !L->ln) continue;
    if (i < 4 && g.cifg && i == 0) continue;
    const std::string what = "intermediate " + std::to_string(i) + (i == 4 ? " (hidden state)" : std::string(" (") + kGateNames[i] + " gate)");
    // The zero point range is the one of the type the converter gives it (INT16 gates, INT8 hidden).
    const int64_t zlo = i == 4 ? -128 : -32768, zhi = i == 4 ? 127 : 32767;
    TFG_RETURN_IF_ERROR(ReadIntermediate(ctx, i, what, zlo, zhi, &inter_scale[i], &inter_zp[i]));
  }
  L->hidden_zp = inter_zp[4];
  // Weights, biases, peepholes, layer norm.
  const char* rec[4] = {"recurrent_to_input_weights", "recurrent_to_forget_weights", "recurrent_to_cell_weights",
                        "recurrent_to_output_weights"};
  const char* inw[4] = {"input_to_input_weights", "input_to_forget_weights", "input_to_cell_weights",
                        "input_to_output_weights"};
  const char* peep_names[4] = {"cell_to_input_weights", "cell_to_forget_weights", nullptr, "cell_to_output_weights"};
  const char* bias_names[4] = {"input_gate_bias", "forget_gate_bias", "cell_gate_bias", "output_gate_bias"};
  const char* ln_names[4] = {"input_layer_norm_coefficients", "forget_layer_norm_coefficients",
                             "cell_layer_norm_coefficients", "output_layer_norm_coefficients"};
  auto name = [](const char* n, int i) { return std::string(n) + " (input " + std::to_string(i) + ")"; };
  const int k0 = g.cifg ? 1 : 0;
  for (int k = 0; k < 4; ++k) L->gate[k] = k >= k0;
  for (int k = k0; k < 4; ++k) {
    float swx, swh;
    const Tensor& wx = ctx.input(kInToIn + k);
    const Tensor& wh = ctx.input(kRecToIn + k);
    TFG_RETURN_IF_ERROR(IntTensorQuant(ctx, wx, name(inw[k], kInToIn + k), DType::kInt8, true, &swx, nullptr));
    TFG_RETURN_IF_ERROR(IntShape(ctx, wx, name(inw[k], kInToIn + k), {nc, ni}));
    TFG_RETURN_IF_ERROR(IntTensorQuant(ctx, wh, name(rec[k], kRecToIn + k), DType::kInt8, true, &swh, nullptr));
    TFG_RETURN_IF_ERROR(IntShape(ctx, wh, name(rec[k], kRecToIn + k), {nc, no}));
    if (!ctx.has_input(kInBias + k)) return ctx.Error(name(bias_names[k], kInBias + k) + " is missing");
    const Tensor& b = ctx.input(kInBias + k);
    if (b.type != DType::kInt32)
      return ctx.Error(name(bias_names[k], kInBias + k) + " has type " + DTypeName(b.type) +
                       ", expected INT32 (full-integer LSTM)");
    TFG_RETURN_IF_ERROR(IntShape(ctx, b, name(bias_names[k], kInBias + k), {nc}));
    float sp = 1.f;
    if (L->peep && k != 2) {
      const Tensor& pw = ctx.input(kCellToIn + k - (k == 3 ? 1 : 0));
      const int pi = kCellToIn + k - (k == 3 ? 1 : 0);
      TFG_RETURN_IF_ERROR(IntTensorQuant(ctx, pw, name(peep_names[k], pi), DType::kInt16, true, &sp, nullptr));
      TFG_RETURN_IF_ERROR(IntShape(ctx, pw, name(peep_names[k], pi), {nc}));
    }
    float sln = 1.f;
    if (L->ln) {
      const Tensor& lt = ctx.input(kInLN + k);
      TFG_RETURN_IF_ERROR(IntTensorQuant(ctx, lt, name(ln_names[k], kInLN + k), DType::kInt16, true, &sln, nullptr));
      TFG_RETURN_IF_ERROR(IntShape(ctx, lt, name(ln_names[k], kInLN + k), {nc}));
    }
    // TFLite's float arithmetic for the effective scales (pow(2, k) ones in double).
    const float eff_x = swx * sx / inter_scale[k];
    const float eff_h = swh * sh / inter_scale[k];
    const float eff_c = float(std::pow(2.0, k2) * double(sp) / double(inter_scale[k]));
    quant::QuantizeMultiplier(eff_x, &L->mx[k], &L->sx[k]);
    quant::QuantizeMultiplier(eff_h, &L->mh[k], &L->sh[k]);
    quant::QuantizeMultiplier(L->peep ? eff_c : 1.0, &L->mc[k], &L->sc[k]);
    quant::QuantizeMultiplier(sln, &L->mln[k], &L->sln[k]);
    const float guard = 10000.f * sln;  // TFLite: max(1, int32(10000 * scale))
    L->guard[k] = guard >= 2147483647.f ? std::numeric_limits<int32_t>::max() : std::max(1, int32_t(guard));
    if (wx.data && wh.data && b.data) {
      RowSumsTimes(wx.as<int8_t>(), nc, ni, -zx, L->ln ? nullptr : b.as<int32_t>(), &L->bx[k]);
      RowSumsTimes(wh.as<int8_t>(), nc, no, -zh, nullptr, &L->bh[k]);
    }
  }
  const float eff_hidden = float(std::pow(2.0, -15) / double(inter_scale[4]) * std::pow(2.0, -15));
  quant::QuantizeMultiplier(eff_hidden, &L->mhid, &L->shid);
  if (L->proj) {
    float spw;
    const Tensor& pw = ctx.input(kProjW);
    TFG_RETURN_IF_ERROR(IntTensorQuant(ctx, pw, name("projection_weights", kProjW), DType::kInt8, true, &spw, nullptr));
    TFG_RETURN_IF_ERROR(IntShape(ctx, pw, name("projection_weights", kProjW), {no, nc}));
    const int32_t* pb = nullptr;
    if (ctx.has_input(kProjB)) {
      const Tensor& b = ctx.input(kProjB);
      if (b.type != DType::kInt32)
        return ctx.Error(name("projection_bias", kProjB) + " has type " + DTypeName(b.type) +
                         ", expected INT32 (full-integer LSTM)");
      TFG_RETURN_IF_ERROR(IntShape(ctx, b, name("projection_bias", kProjB), {no}));
      pb = b.as<int32_t>();
    }
    const float eff_proj = spw * inter_scale[4] / sh;
    quant::QuantizeMultiplier(eff_proj, &L->mproj, &L->sproj);
    if (pw.data) RowSumsTimes(pw.as<int8_t>(), no, nc, -L->hidden_zp, pb, &L->bp);
  } else if (ctx.has_input(kProjB)) {
    return ctx.Error("projection_bias is given without projection_weights");
  }
  if (p.cell_clip > 0.f)
    L->cell_clip = int16_t(std::min(std::max(p.cell_clip / scs, -32768.0f), 32767.0f));
  if (p.proj_clip > 0.f && L->proj) {
    const Tensor& out = ctx.output(0);
    if (out.quant.scale.empty() || !(out.quant.scale[0] > 0.f) || !std::isfinite(out.quant.scale[0]))
      return ctx.Error("output (a full-integer LSTM with proj_clip) needs a finite scale > 0, the projection clip's grid");
    L->proj_clip = int8_t(std::min(std::max(p.proj_clip / out.quant.scale[0], -128.0f), 127.0f));
  }
  return OkStatus();
}

Status PrepareInteger(OpContext& ctx, const Geo& g) {
  // Presence rules shared with the float kernel (CIFG, peepholes all-or-none, layer norm sets).
  if (g.cifg != !ctx.has_input(kRecToIn))
    return ctx.Error("input_to_input_weights and recurrent_to_input_weights must be both present or both absent");
  const bool pi = ctx.has_input(kCellToIn), pf = ctx.has_input(kCellToForget), po = ctx.has_input(kCellToOut);
  if (!(((pi || g.cifg) && pf && po) || (!pi && !pf && !po)))
    return ctx.Error("peephole weights (inputs 9-11) must be all present or all absent");
  if (g.cifg && pi) return ctx.Error("cell_to_input_weights must be absent for a CIFG LSTM");
  if (g.cifg && ctx.has_input(kInBias)) return ctx.Error("input_gate_bias must be absent for a CIFG LSTM");
  if (ctx.num_inputs() == 24) {
    const bool any = ctx.has_input(kInLN) || ctx.has_input(kForgetLN) || ctx.has_input(kCellLN) || ctx.has_input(kOutLN);
    const bool all = (ctx.has_input(kInLN) || g.cifg) && ctx.has_input(kForgetLN) && ctx.has_input(kCellLN) &&
                     ctx.has_input(kOutLN);
    if (any && !all) return ctx.Error("layer norm coefficients (inputs 20-23) must be all present or all absent");
    if (g.cifg && ctx.has_input(kInLN)) return ctx.Error("input_layer_norm_coefficients must be absent for a CIFG LSTM");
  }
  if (!g.projection && g.n_output != g.n_cell)
    return ctx.Error("without projection the output size (" + std::to_string(g.n_output) +
                     ") must equal the cell size (" + std::to_string(g.n_cell) + ")");
  const bool v8 = ctx.node().intermediates.size() == 12;
  if (g.peephole && g.n_output > g.n_cell && !v8)
    return ctx.Error("peephole weights with a projection wider than the cell (output " + std::to_string(g.n_output) +
                     " > cell " + std::to_string(g.n_cell) +
                     ") are not supported: TFLite's integer LSTM applies the peephole over n_output entries and "
                     "reads past the cell-sized weights");
  const char* state_names[2] = {"output_state", "cell_state"};
  const int64_t want[2] = {int64_t(g.n_batch) * g.n_output, int64_t(g.n_batch) * g.n_cell};
  for (int k = 0; k < 2; ++k) {
    const Tensor& s = ctx.input(k == 0 ? kOutState : kCellState);
    if (!s.is_variable) return ctx.Error(std::string(state_names[k]) + " must be a variable tensor");
    if (s.num_elements() != want[k] || (want[k] > 0 && !s.data))
      return ctx.Error(std::string(state_names[k]) + " must hold " + std::to_string(want[k]) + " elements, got shape " +
                       DimsToString(s.shape));
  }
  auto L = std::make_shared<IntLstm>();
  TFG_RETURN_IF_ERROR(BuildIntLstm(ctx, g, L.get()));
  for (int i = kInToIn; i < ctx.num_inputs() && !L->v8; ++i) {  // 8x8_8 reads the weights at eval
    if (i == kOutState || i == kCellState || !ctx.has_input(i)) continue;
    if (!ctx.IsConstantOrPersistent(ctx.input(i)))
      return ctx.Error("input " + std::to_string(i) + " of a full-integer LSTM must be constant (TFLite folds the zero "
                       "points into the biases at prepare)");
  }
  Dims out_shape = ctx.input(kInput).shape;
  out_shape.back() = g.n_output;
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, DType::kInt8));
  TFG_RETURN_IF_ERROR(ctx.SetOutputShape(0, out_shape));
  const size_t nc = size_t(g.n_cell);
  ctx.RequestScratch(4 * nc * sizeof(int16_t) + nc * sizeof(int16_t) + nc + 64);
  ctx.node().user_data = L;
  return OkStatus();
}

// TFLite's ApplyLayerNorm (integer) on one row of n values, in place.
void IntLayerNorm(int16_t* v, const int16_t* w, const int32_t* bias, int32_t m, int s, int32_t guard, int n) {
  int64_t sum = 0, sum_sq = 0;
  for (int j = 0; j < n; ++j) {
    const int32_t x = v[j];
    sum += x;
    sum_sq += x * x;
  }
  const int32_t mean = int32_t(sum * 1024 / n);
  const int32_t temp = (1 << 20) / n;
  const int64_t variance = sum_sq * temp - int64_t(mean) * int64_t(mean);
  int32_t variance2 = int32_t(variance / (1 << 20));
  if (variance2 < 1) variance2 = guard;
  int32_t inv_m;
  int inv_s;
  quant::InvSqrtMultiplierExp(variance2, &inv_m, &inv_s);
  for (int j = 0; j < n; ++j) {
    const int32_t shifted = 1024 * int32_t(v[j]) - mean;
    const int32_t rescaled = quant::MultiplyByQuantizedMultiplier(shifted, inv_m, inv_s);
    const int64_t val3 = int32_t(uint32_t(rescaled) * uint32_t(int32_t(w[j])) + uint32_t(bias[j]));  // int32 as TFLite
    const int32_t val4 = int32_t((val3 > 0 ? val3 + 512 : val3 - 512) / 1024);
    const int32_t val5 = quant::MultiplyByQuantizedMultiplier(val4, m, s + 12);
    v[j] = int16_t(std::min(32767, std::max(-32768, val5)));
  }
}

inline int16_t Sat16(int32_t v) { return int16_t(v < -32768 ? -32768 : (v > 32767 ? 32767 : v)); }

// bias + a . b with TFLite's int32 accumulator, wrapping (not undefined) past 2^31.
inline int32_t DotWrap(int32_t bias, const int8_t* a, const int8_t* b, int n) {
  int64_t acc = bias;
  for (int i = 0; i < n; ++i) acc += int32_t(a[i]) * int32_t(b[i]);
  return int32_t(uint32_t(uint64_t(acc)));
}

Status EvalInteger8x8_8(OpContext& ctx, const Geo& g, const IntLstm* L);

Status EvalInteger(OpContext& ctx, const Geo& g) {
  const LstmParams& p = ctx.node().P<LstmParams>();
  const IntLstm* L = ctx.node().U<IntLstm>();
  if (!L) return ctx.Error("integer LSTM parameters missing (prepare did not run)");
  if (L->v8) return EvalInteger8x8_8(ctx, g, L);
  const int nc = g.n_cell, ni = g.n_input, no = g.n_output;
  if (nc == 0 || g.n_batch == 0 || g.max_time == 0) return OkStatus();
  const int8_t* x = ctx.input(kInput).as<int8_t>();
  int8_t* y = ctx.output(0).as<int8_t>();
  int8_t* hs = ctx.input(kOutState).as<int8_t>();
  int16_t* cs = ctx.input(kCellState).as<int16_t>();
  const int8_t* wx[4] = {};
  const int8_t* wh[4] = {};
  const int16_t* pw[4] = {};
  const int16_t* lnw[4] = {};
  const int32_t* bias[4] = {};
  for (int k = 0; k < 4; ++k) {
    if (!L->gate[k]) continue;
    wx[k] = ctx.input(kInToIn + k).as<int8_t>();
    wh[k] = ctx.input(kRecToIn + k).as<int8_t>();
    bias[k] = ctx.input(kInBias + k).as<int32_t>();
    if (L->peep && k != 2) pw[k] = ctx.input(kCellToIn + k - (k == 3 ? 1 : 0)).as<int16_t>();
    if (L->ln) lnw[k] = ctx.input(kInLN + k).as<int16_t>();
  }
  const int8_t* proj = L->proj ? ctx.input(kProjW).as<int8_t>() : nullptr;
  int16_t* gate = static_cast<int16_t*>(ctx.scratch());  // 4 x nc
  int16_t* tc = gate + 4 * nc;                            // tanh(c)
  int8_t* hidden = reinterpret_cast<int8_t*>(tc + nc);
  const bool time_major = p.time_major || !p.sequence;
  const int ib_cell = 15 + L->cell_scale;
  for (int b = 0; b < g.n_batch; ++b) {
    int8_t* h = hs + int64_t(b) * no;
    int16_t* c = cs + int64_t(b) * nc;
    // TFLite's peephole product (VectorBatchVectorCwiseProductAccumulate) is called with v_size =
    // n_output: over the flattened [batch, cell] gate of one call it covers the first
    // calls x n_output entries, weight index (flat position mod n_output). One call holds all batch
    // rows when time-major (and for LSTM), one row otherwise. Equal to the plain peephole when
    // n_output == n_cell; n_output > n_cell is refused at prepare (it reads past the weights).
    const int64_t peep_base = time_major ? int64_t(b) * nc : 0;
    const int64_t peep_end = time_major ? int64_t(g.n_batch) * no : no;
    for (int t = 0; t < g.max_time; ++t) {
      const int64_t row = RowIndex(time_major, g.n_batch, g.max_time, b, t);
      const int8_t* xt = x + row * ni;
      auto calc_gate = [&](int k) {
        int16_t* gk = gate + k * nc;
        for (int j = 0; j < nc; ++j) {
          const int8_t* wr = wx[k] + int64_t(j) * ni;
          const int32_t v1 = Sat16(quant::MultiplyByQuantizedMultiplier(DotWrap(L->bx[k][j], xt, wr, ni), L->mx[k], L->sx[k]));
          const int8_t* hr = wh[k] + int64_t(j) * no;
          const int32_t ah = DotWrap(L->bh[k][j], h, hr, no);
          int32_t v = Sat16(quant::MultiplyByQuantizedMultiplier(ah, L->mh[k], L->sh[k]) + v1);
          if (pw[k] && peep_base + j < peep_end) {
            const int16_t wj = pw[k][(peep_base + j) % no];
            const int32_t prod = quant::MultiplyByQuantizedMultiplier(int32_t(wj) * int32_t(c[j]), L->mc[k], L->sc[k]);
            v = Sat16(prod + v);
          }
          gk[j] = int16_t(v);
        }
        if (lnw[k]) IntLayerNorm(gk, lnw[k], bias[k], L->mln[k], L->sln[k], L->guard[k], nc);
        if (k == 2) for (int j = 0; j < nc; ++j) gk[j] = quant::fx16::Tanh(gk[j], 3);
        else for (int j = 0; j < nc; ++j) gk[j] = quant::fx16::Logistic(gk[j], 3);
      };
      calc_gate(1);
      calc_gate(2);
      if (L->gate[0]) calc_gate(0);
      int16_t* ig = gate;
      int16_t* fg = gate + nc;
      int16_t* cg = gate + 2 * nc;
      int16_t* og = gate + 3 * nc;
      for (int j = 0; j < nc; ++j) {
        const int16_t fc = int16_t(quant::RoundingDivideByPOT(int32_t(fg[j]) * int32_t(c[j]), 15));
        const int16_t i_ = L->gate[0] ? ig[j] : int16_t(32767 - fg[j]);
        const int16_t icg = int16_t(quant::RoundingDivideByPOT(int32_t(i_) * int32_t(cg[j]), 30 + L->cell_scale));
        int16_t cn = Sat16(int32_t(fc) + int32_t(icg));
        if (L->cell_clip > 0) cn = std::max<int16_t>(int16_t(-L->cell_clip), std::min<int16_t>(L->cell_clip, cn));
        c[j] = cn;
      }
      calc_gate(3);
      for (int j = 0; j < nc; ++j) {
        tc[j] = quant::fx16::Tanh(c[j], ib_cell);
        int32_t v = quant::MultiplyByQuantizedMultiplier(int32_t(og[j]) * int32_t(tc[j]), L->mhid, L->shid);
        v += L->hidden_zp;
        hidden[j] = int8_t(std::min(127, std::max(-128, v)));
      }
      if (proj) {
        for (int j = 0; j < no; ++j) {
          const int32_t acc = DotWrap(L->bp[j], hidden, proj + int64_t(j) * nc, nc);
          int32_t v = quant::MultiplyByQuantizedMultiplier(acc, L->mproj, L->sproj) + L->out_zp;
          v = std::min(127, std::max(-128, v));
          if (L->proj_clip > 0) v = std::max<int32_t>(-L->proj_clip, std::min<int32_t>(L->proj_clip, v));
          h[j] = int8_t(v);
        }
      } else {
        std::memcpy(h, hidden, size_t(no));
      }
      std::memcpy(y + row * no, h, size_t(no));
    }
  }
  return OkStatus();
}

// ------------------------------------------------------------------------------ integer 8x8_8
// The 12-intermediate full-integer LSTM: LiteRT 2.3 builtin's lstm.cc (PopulateQuantizedLstmParams8x8_8)
// and lstm_eval.cc EvalInteger8x8_8 / LstmStepInteger8x8_8, for the LSTM op only (its
// UNIDIRECTIONAL_SEQUENCE_LSTM prepare requires 5 intermediates). The builtin and reference
// registrations run the same portable tensor_utils code. What LiteRT runs, as measured with models
// our builder writes (tests/test_lstm_int8.py): layer norm, a projection AND a projection bias are
// required -- without any of them its kernel dereferences a null pointer (segfault), so we refuse
// those with a ValueError. The kernel always runs the CIFG form: with input-gate weights present
// they are ignored (i = 1 - f), as are peepholes and the fused activation. Reproduced as is.
//   types   input, output_state, output, weights INT8; cell_state INT16 with scale exactly 2^-15;
//           layer norm INT16; biases INT32; intermediates: 3g = the int16 sum of gate g (scale only),
//           3g + 1 = W_x x (int8: scale, zero point), 3g + 2 = W_h h (g = input, forget, cell, output).
//   gate    (forget, cell, output) a = clamp8(MBQM(sum (x - zp_x) w_x, w_x s_x / s[3g+1]) + zp[3g+1]),
//           b = same for h with s[3g+2]; sum = sat16(MBQM(b - zp, s[3g+2] / s[3g]) +
//           MBQM(a - zp, s[3g+1] / s[3g])); then the FLOAT layer norm (ApplyLayerNormFloat: float mean /
//           variance, 1 / sqrt, * coeff * ln_scale + bias * ln_scale / 1024, round to Q3.12) and FLOAT
//           sigmoid / tanh (expf / tanhf, * 2^15 truncated). LiteRT quirk reproduced: the output gate's
//           W_h h part uses intermediate 7's zero point (the cell gate's W_x x) and, as the two-gate
//           add's multiplier / shift, LiteRT reads intermediate_scale_a[11] -- past that 8-entry array,
//           i.e. intermediate_scale_b[3] (the shift of s[5] / s[3]) -- and intermediate_scale_b[7].
//   cell    c = (f * c) >> 15 + ((32767 - f) * g) >> 15 (rounded, int16 casts), saturated; clipped to
//           +-trunc(cell_clip * 2^15) only when 0 < cell_clip < 1.
//   output  t = float tanh(c * 2^-15) * 2^15 truncated; hidden = (o * t) >> 15 rounded (Q0.15);
//           h = clamp8(MBQM64(bias + sum hidden * w_p, w_p 2^-15 / s_h) + zp_h), clipped to
//           +-trunc(proj_clip / s_output); output = h.
// MBQM is TFLite's double-rounding MultiplyByQuantizedMultiplier, MBQM64 its int64 overload.
Status Build8x8_8(OpContext& ctx, const Geo& g, IntLstm* L) {
  const LstmParams& p = ctx.node().P<LstmParams>();
  const int nc = g.n_cell, ni = g.n_input, no = g.n_output;
  const std::string why = " (LiteRT 2.3's 8x8_8 kernel dereferences the missing tensor and crashes)";
  if (!g.layer_norm)
    return ctx.Error("the 12-intermediate (8x8_8) integer LSTM needs layer norm coefficients (inputs 20-23)" + why);
  if (!g.projection)
    return ctx.Error("the 12-intermediate (8x8_8) integer LSTM needs projection_weights (input 16)" + why);
  if (!ctx.has_input(kProjB))
    return ctx.Error("the 12-intermediate (8x8_8) integer LSTM needs projection_bias (input 17)" + why);
  L->v8 = true;
  L->ln = true;
  L->proj = true;
  L->peep = g.peephole;
  float sx, sh, scs;
  int32_t zx, zh;
  TFG_RETURN_IF_ERROR(IntTensorQuant(ctx, ctx.input(kInput), "input (input 0)", DType::kInt8, false, &sx, &zx));
  TFG_RETURN_IF_ERROR(IntTensorQuant(ctx, ctx.input(kOutState), "output_state (input 18)", DType::kInt8, false, &sh, &zh));
  TFG_RETURN_IF_ERROR(IntTensorQuant(ctx, ctx.input(kCellState), "cell_state (input 19)", DType::kInt16, true, &scs, nullptr));
  if (double(scs) != 1.0 / 32768)
    return ctx.Error("cell_state (input 19) has scale " + std::to_string(scs) +
                     "; the 12-intermediate (8x8_8) integer LSTM needs exactly 2^-15 (TFLite's prepare checks it; "
                     "its kernel assumes Q0.15)");
  L->cell_scale = -15;
  L->in_zp = zx;
  L->out_zp = zh;
  static const char* const kPart[3] = {"sum", "W_x x", "W_h h"};
  float is[12];
  int32_t iz[12];
  for (int i = 0; i < 12; ++i) {
    const std::string what = "intermediate " + std::to_string(i) + " (" + kGateNames[i / 3] + " gate " +
                             kPart[i % 3] + ")";
    // the W x outputs are int8 (TFLite passes their zero points as int8_t); the sums' zero points are unused
    const bool w_out = i % 3 != 0;
    TFG_RETURN_IF_ERROR(ReadIntermediate(ctx, i, what, w_out ? -128 : -32768, w_out ? 127 : 32767, &is[i], &iz[i]));
  }
  const char* rec[4] = {"recurrent_to_input_weights", "recurrent_to_forget_weights", "recurrent_to_cell_weights",
                        "recurrent_to_output_weights"};
  const char* inw[4] = {"input_to_input_weights", "input_to_forget_weights", "input_to_cell_weights",
                        "input_to_output_weights"};
  const char* peep_names[4] = {"cell_to_input_weights", "cell_to_forget_weights", nullptr, "cell_to_output_weights"};
  const char* bias_names[4] = {"input_gate_bias", "forget_gate_bias", "cell_gate_bias", "output_gate_bias"};
  const char* ln_names[4] = {"input_layer_norm_coefficients", "forget_layer_norm_coefficients",
                             "cell_layer_norm_coefficients", "output_layer_norm_coefficients"};
  auto name = [](const char* n, int i) { return std::string(n) + " (input " + std::to_string(i) + ")"; };
  // Every present tensor is checked as TFLite's prepare types it (the input gate's and the peepholes'
  // are then unused by the kernel).
  float w_sx[4] = {}, w_sh[4] = {};
  int32_t ln_m[4] = {};
  int ln_s[4] = {};
  for (int k = g.cifg ? 1 : 0; k < 4; ++k) {
    const Tensor& wx = ctx.input(kInToIn + k);
    const Tensor& wh = ctx.input(kRecToIn + k);
    TFG_RETURN_IF_ERROR(IntTensorQuant(ctx, wx, name(inw[k], kInToIn + k), DType::kInt8, true, &w_sx[k], nullptr));
    TFG_RETURN_IF_ERROR(IntShape(ctx, wx, name(inw[k], kInToIn + k), {nc, ni}));
    TFG_RETURN_IF_ERROR(IntTensorQuant(ctx, wh, name(rec[k], kRecToIn + k), DType::kInt8, true, &w_sh[k], nullptr));
    TFG_RETURN_IF_ERROR(IntShape(ctx, wh, name(rec[k], kRecToIn + k), {nc, no}));
    if (!ctx.has_input(kInBias + k)) return ctx.Error(name(bias_names[k], kInBias + k) + " is missing");
    const Tensor& b = ctx.input(kInBias + k);
    if (b.type != DType::kInt32)
      return ctx.Error(name(bias_names[k], kInBias + k) + " has type " + DTypeName(b.type) +
                       ", expected INT32 (full-integer LSTM)");
    TFG_RETURN_IF_ERROR(IntShape(ctx, b, name(bias_names[k], kInBias + k), {nc}));
    if (L->peep && k != 2) {
      const int pi = kCellToIn + k - (k == 3 ? 1 : 0);
      TFG_RETURN_IF_ERROR(IntTensorQuant(ctx, ctx.input(pi), name(peep_names[k], pi), DType::kInt16, true, nullptr, nullptr));
      TFG_RETURN_IF_ERROR(IntShape(ctx, ctx.input(pi), name(peep_names[k], pi), {nc}));
    }
    float sln = 1.f;
    const Tensor& lt = ctx.input(kInLN + k);
    TFG_RETURN_IF_ERROR(IntTensorQuant(ctx, lt, name(ln_names[k], kInLN + k), DType::kInt16, true, &sln, nullptr));
    TFG_RETURN_IF_ERROR(IntShape(ctx, lt, name(ln_names[k], kInLN + k), {nc}));
    quant::QuantizeMultiplier(sln, &ln_m[k], &ln_s[k]);
  }
  for (int k = 1; k < 4; ++k) {
    // TFLite's float arithmetic: effective scales w * s / s_intermediate and the two-gate ratios.
    const float eff_x = w_sx[k] * sx / is[3 * k + 1];
    const float eff_h = w_sh[k] * sh / is[3 * k + 2];
    quant::QuantizeMultiplier(eff_x, &L->mx[k], &L->sx[k]);
    quant::QuantizeMultiplier(eff_h, &L->mh[k], &L->sh[k]);
    quant::QuantizeMultiplier(is[3 * k + 1] / is[3 * k], &L->ma[k][0], &L->sa[k][0]);
    quant::QuantizeMultiplier(is[3 * k + 2] / is[3 * k], &L->ma[k][1], &L->sa[k][1]);
    L->zx8[k] = iz[3 * k + 1];
    L->zh8[k] = iz[3 * k + 2];
    L->ln_f[k] = float(ln_m[k] * std::pow(2.0, double(ln_s[k] - 31)));
  }
  // The output gate's W_h h quirk (see above): zero point of intermediate 7, multiplier = the shift
  // of the forget gate's h ratio, shift = the output gate's own.
  L->zh8[3] = iz[7];
  L->ma[3][1] = L->sa[1][1];
  float spw;
  const Tensor& pw = ctx.input(kProjW);
  TFG_RETURN_IF_ERROR(IntTensorQuant(ctx, pw, name("projection_weights", kProjW), DType::kInt8, true, &spw, nullptr));
  TFG_RETURN_IF_ERROR(IntShape(ctx, pw, name("projection_weights", kProjW), {no, nc}));
  const Tensor& pb = ctx.input(kProjB);
  if (pb.type != DType::kInt32)
    return ctx.Error(name("projection_bias", kProjB) + " has type " + DTypeName(pb.type) +
                     ", expected INT32 (full-integer LSTM)");
  TFG_RETURN_IF_ERROR(IntShape(ctx, pb, name("projection_bias", kProjB), {no}));
  const float eff_proj = float(double(spw) * std::pow(2.0, -15) / double(sh));
  quant::QuantizeMultiplier(eff_proj, &L->mproj, &L->sproj);
  if (p.cell_clip > 0.f && p.cell_clip < 1.f)
    L->cell_clip = int16_t(std::min(std::max(p.cell_clip / scs, -32768.0f), 32767.0f));
  if (p.proj_clip > 0.f) {
    const Tensor& out = ctx.output(0);
    if (out.quant.scale.empty() || !(out.quant.scale[0] > 0.f) || !std::isfinite(out.quant.scale[0]))
      return ctx.Error("output (a full-integer LSTM with proj_clip) needs a finite scale > 0, the projection clip's grid");
    L->proj_clip = int8_t(std::min(std::max(p.proj_clip / out.quant.scale[0], -128.0f), 127.0f));
  }
  return OkStatus();
}

// static_cast<int32_t> of a float / double as x86 does it (cvtt: NaN and out-of-range give INT32_MIN),
// without the undefined behaviour.
inline int32_t TruncToInt32(double v) {
  if (!(v > -2147483649.0 && v < 2147483648.0)) return std::numeric_limits<int32_t>::min();
  return int32_t(v);
}

// TFLite's PortableApplyLayerNormFloat on one row (in place), its float operations in its order.
__attribute__((optimize("fp-contract=off"))) void LayerNormFloatRow(int16_t* v, const int16_t* w, float ln_scale,
                                                                   const int32_t* bias, int n) {
  const float bias_scale = float(std::pow(2.0, -10)) * ln_scale;
  float sum = 0.f, sum_sq = 0.f;
  for (int i = 0; i < n; ++i) {
    const float x = float(v[i]);
    sum += x;
    sum_sq += x * x;
  }
  const float mean = sum / float(n);
  const float variance = sum_sq / float(n) - mean * mean;
  const float stddev_inv = variance == 0.f ? 1.0f / std::sqrt(1e-8f) : 1.0f / std::sqrt(variance);
  for (int i = 0; i < n; ++i) {
    const float normalized = (float(v[i]) - mean) * stddev_inv;
    const float weighted = normalized * float(w[i]) * ln_scale + float(bias[i]) * bias_scale;
    const int32_t q = TruncToInt32(std::round(double(weighted * 4096.0f)));
    v[i] = int16_t(std::min(32767, std::max(-32768, q)));
  }
}

// PortableApplySigmoidFloat (Q3.12 in, Q0.15 out) and PortableApplyTanhFloat (2^integer_bits in).
void SigmoidFloatRow(int16_t* v, int n) {
  for (int i = 0; i < n; ++i) {
    const float x = float(v[i]) * (1.0f / 4096.0f);
    const float y = 1.0f / (1.0f + std::exp(-x));
    v[i] = int16_t(std::min(32767, std::max(-32768, TruncToInt32(y * 32768.0f))));
  }
}
void TanhFloatRow(const int16_t* in, int integer_bits, int16_t* out, int n) {
  const double f = std::pow(2.0, double(integer_bits));
  for (int i = 0; i < n; ++i) {
    const float x = float(double(in[i]) * f);
    const float y = std::tanh(x);
    out[i] = int16_t(std::min(32767, std::max(-32768, TruncToInt32(y * 32768.0f))));
  }
}

// PortableMatrixBatchVectorMultiply (int8 in, int8 out) for one row: clamp8(MBQM(sum (x - zp) w) + out_zp).
void MatVec8(const int8_t* x, int32_t zp, const int8_t* w, int32_t m, int s, int rows, int cols, int32_t out_zp,
             int8_t* out) {
  for (int j = 0; j < rows; ++j) {
    const int8_t* wr = w + int64_t(j) * cols;
    uint32_t acc = 0;  // TFLite's int32 accumulator, wrapping
    for (int i = 0; i < cols; ++i) acc += uint32_t((int32_t(x[i]) - zp) * int32_t(wr[i]));
    const int32_t v = quant::MultiplyByQuantizedMultiplier(int32_t(acc), m, s) + out_zp;
    out[j] = int8_t(std::min(127, std::max(-128, v)));
  }
}

Status EvalInteger8x8_8(OpContext& ctx, const Geo& g, const IntLstm* L) {
  const int nc = g.n_cell, ni = g.n_input, no = g.n_output;
  if (nc == 0 || g.n_batch == 0) return OkStatus();
  const int8_t* x = ctx.input(kInput).as<int8_t>();
  int8_t* y = ctx.output(0).as<int8_t>();
  int8_t* hs = ctx.input(kOutState).as<int8_t>();
  int16_t* cs = ctx.input(kCellState).as<int16_t>();
  const int8_t* proj = ctx.input(kProjW).as<int8_t>();
  const int32_t* pbias = ctx.input(kProjB).as<int32_t>();
  int16_t* gate = static_cast<int16_t*>(ctx.scratch());  // forget, cell, output: 3 x nc
  int16_t* hid = gate + 3 * nc;                           // tanh(c), then o * tanh(c)
  int8_t* s0 = reinterpret_cast<int8_t*>(hid + nc);       // W_x x
  int8_t* s1 = s0 + nc;                                   // W_h h
  // Every step of LiteRT's kernel is per batch row (matmuls, layer norm) or elementwise, so one row
  // at a time gives its results; the output state row is read by the three gates, then rewritten.
  for (int b = 0; b < g.n_batch; ++b) {
    const int8_t* xb = x + int64_t(b) * ni;
    int8_t* h = hs + int64_t(b) * no;
    int16_t* c = cs + int64_t(b) * nc;
    for (int k = 1; k < 4; ++k) {
      int16_t* gk = gate + (k - 1) * nc;
      MatVec8(xb, L->in_zp, ctx.input(kInToIn + k).as<int8_t>(), L->mx[k], L->sx[k], nc, ni, L->zx8[k], s0);
      MatVec8(h, L->out_zp, ctx.input(kRecToIn + k).as<int8_t>(), L->mh[k], L->sh[k], nc, no, L->zh8[k], s1);
      // PortableTwoGateSaturatingAdd: its zero points are int8_t parameters.
      const int32_t zxk = int8_t(L->zx8[k]), zhk = int8_t(L->zh8[k]);
      for (int j = 0; j < nc; ++j) {
        const int32_t xs = quant::MultiplyByQuantizedMultiplier(int32_t(s0[j]) - zxk, L->ma[k][0], L->sa[k][0]);
        const int32_t hs_ = quant::MultiplyByQuantizedMultiplier(int32_t(s1[j]) - zhk, L->ma[k][1], L->sa[k][1]);
        gk[j] = Sat16(hs_ + xs);
      }
      LayerNormFloatRow(gk, ctx.input(kInLN + k).as<int16_t>(), L->ln_f[k], ctx.input(kInBias + k).as<int32_t>(), nc);
      if (k == 2) TanhFloatRow(gk, -12, gk, nc);
      else SigmoidFloatRow(gk, nc);
    }
    const int16_t* fg = gate;
    const int16_t* cg = gate + nc;
    const int16_t* og = gate + 2 * nc;
    // UpdateLstmCellInteger, CIFG form, cell scale 2^-15 (CwiseMul shifts 15 and 30 - 15).
    for (int j = 0; j < nc; ++j) {
      const int16_t fc = int16_t(quant::RoundingDivideByPOT(int32_t(fg[j]) * int32_t(c[j]), 15));
      const int16_t i_ = int16_t(32767 - fg[j]);
      const int16_t icg = int16_t(quant::RoundingDivideByPOT(int32_t(i_) * int32_t(cg[j]), 15));
      int16_t cn = Sat16(int32_t(fc) + int32_t(icg));
      if (L->cell_clip > 0) cn = std::max<int16_t>(int16_t(-L->cell_clip), std::min<int16_t>(L->cell_clip, cn));
      c[j] = cn;
    }
    // CalculateLstmOutputInteger8x8_8.
    TanhFloatRow(c, -15, hid, nc);
    for (int j = 0; j < nc; ++j) hid[j] = int16_t(quant::RoundingDivideByPOT(int32_t(og[j]) * int32_t(hid[j]), 15));
    for (int r = 0; r < no; ++r) {
      const int8_t* wr = proj + int64_t(r) * nc;
      int64_t acc = pbias[r];
      for (int j = 0; j < nc; ++j) acc += int32_t(hid[j]) * int32_t(wr[j]);
      int32_t v = quant::MultiplyByQuantizedMultiplier64(acc, L->mproj, L->sproj) + L->out_zp;
      v = std::min(127, std::max(-128, v));
      if (L->proj_clip > 0) v = std::max<int32_t>(-L->proj_clip, std::min<int32_t>(L->proj_clip, v));
      h[r] = int8_t(v);
    }
    std::memcpy(y + int64_t(b) * no, h, size_t(no));
  }
  return OkStatus();
}

// Weights packed for gemm::Gemm: the present gates side by side (column gate * n_cell + j; the
// input gate is left out for CIFG), the input part with the gate biases (none with layer norm:
// the bias comes after the normalisation), the recurrent part, and the projection with its bias.
struct PackedLstm {
  int G = 4;                  // gates present
  std::vector<float> x, h, proj;
  std::vector<const void*> key;  // what was packed: sizes and weight pointers (re-prepare reuses it)
};

std::vector<const void*> PackKey(OpContext& ctx, const Geo& g) {
  std::vector<const void*> k = {reinterpret_cast<const void*>(intptr_t(g.n_input)),
                                reinterpret_cast<const void*>(intptr_t(g.n_cell)),
                                reinterpret_cast<const void*>(intptr_t(g.n_output)),
                                reinterpret_cast<const void*>(intptr_t(ctx.node().P<LstmParams>().diagonal))};
  for (int i = kInToIn; i < ctx.num_inputs(); ++i)
    if (i != kOutState && i != kCellState) k.push_back(ctx.has_input(i) ? ctx.input(i).data : nullptr);
  return k;
}

void PackLstm(OpContext& ctx, const Geo& g, const Weights& w, bool diagonal, PackedLstm* pk) {
  const int nc = g.n_cell, ni = g.n_input, no = g.n_output, k0 = g.cifg ? 1 : 0;
  pk->G = 4 - k0;
  const int N = pk->G * nc;
  std::vector<float> m(size_t(N) * std::max(ni, no)), bias(N, 0.f);
  for (int k = k0; k < 4; ++k) {
    std::memcpy(m.data() + size_t(k - k0) * nc * ni, w.wx[k], sizeof(float) * size_t(nc) * ni);
    if (!w.ln[k]) std::memcpy(bias.data() + size_t(k - k0) * nc, w.bias[k], sizeof(float) * nc);
  }
  pk->x.assign(gemm::PackedFloats(ni, N), 0.f);
  gemm::PackB(ni, N, m.data(), 1, ni, bias.data(), pk->x.data());
  pk->h.clear();
  if (!diagonal) {
    for (int k = k0; k < 4; ++k)
      std::memcpy(m.data() + size_t(k - k0) * nc * no, w.wh[k], sizeof(float) * size_t(nc) * no);
    pk->h.assign(gemm::PackedFloats(no, N), 0.f);
    gemm::PackB(no, N, m.data(), 1, no, nullptr, pk->h.data());
  }
  pk->proj.clear();
  if (w.proj_w) {
    pk->proj.assign(gemm::PackedFloats(nc, no), 0.f);
    gemm::PackB(nc, no, w.proj_w, 1, nc, w.proj_b, pk->proj.data());
  }
}

bool WeightsConstant(OpContext& ctx) {
  for (int i = kInToIn; i < kOutState; ++i)
    if (ctx.has_input(i) && !ctx.IsConstantOrPersistent(ctx.input(i))) return false;
  for (int i = kInLN; i < ctx.num_inputs(); ++i)
    if (ctx.has_input(i) && !ctx.IsConstantOrPersistent(ctx.input(i))) return false;
  return true;
}

// Floats of scratch the fast kernel uses: input projections of a block of steps, the gates of
// one step, one row of cell outputs per batch.
int64_t StepBlock(const Geo& g) {
  const int64_t gates = int64_t(g.n_batch) * 4 * g.n_cell;
  return std::max<int64_t>(1, std::min<int64_t>(g.max_time, (1 << 20) / std::max<int64_t>(1, gates)));
}
size_t FastScratchBytes(const Geo& g) {
  const int64_t gates = int64_t(g.n_batch) * 4 * g.n_cell;
  return size_t(StepBlock(g) * gates + gates + int64_t(g.n_batch) * g.n_cell + 16) * sizeof(float);
}

Status PrepareFast(OpContext& ctx, const Geo& g) {
  ctx.RequestScratch(std::max(FastScratchBytes(g), RefWorkFloats(g) * sizeof(float)));  // fast or plain kernel
  if (!WeightsConstant(ctx)) {
    ctx.node().user_data.reset();
    return OkStatus();
  }
  std::vector<const void*> key = PackKey(ctx, g);
  const PackedLstm* old = ctx.node().U<PackedLstm>();
  if (old && old->key == key) return OkStatus();
  auto pk = std::make_shared<PackedLstm>();
  PackLstm(ctx, g, GetWeights(ctx, g), ctx.node().P<LstmParams>().diagonal, pk.get());
  pk->key = std::move(key);
  ctx.node().user_data = pk;
  return OkStatus();
}

// The fast kernel: the input projections (bias + W_x x) of a block of steps as one GEMM, then per
// step one GEMM for the recurrent products of all batch rows and one for the projection; the
// gate nonlinearities with vectorisable exp/tanh.
Status EvalFull(OpContext& ctx) {
  const LstmParams& p = ctx.node().P<LstmParams>();
  Geo g;
  TFG_RETURN_IF_ERROR(GetGeo(ctx, &g));
  if (ctx.input(kInput).type == DType::kInt8) return EvalInteger(ctx, g);
  if (g.hybrid) return EvalFullHybrid(ctx, g);
  const Weights w = GetWeights(ctx, g);
  const int nc = g.n_cell, ni = g.n_input, no = g.n_output, nb = g.n_batch, T = g.max_time;
  if (nb == 0 || T == 0) return OkStatus();
  PackedLstm local;
  const PackedLstm* pk = ctx.node().U<PackedLstm>();
  if (!pk) {  // weights computed by the graph: pack them for this invoke
    PackLstm(ctx, g, w, p.diagonal, &local);
    pk = &local;
  }
  const int G = pk->G, k0 = 4 - G, N = G * nc;
  const float* x = ctx.input(kInput).as<float>();
  float* y = ctx.output(0).as<float>();
  float* hs = ctx.input(kOutState).as<float>();
  float* cs = ctx.input(kCellState).as<float>();
  const bool time_major = p.time_major || !p.sequence;
  const int64_t block = StepBlock(g);
  float* xproj = static_cast<float*>(ctx.scratch());  // [block][batch][N] or [batch][block][N]
  float* gate = xproj + block * int64_t(nb) * N;       // [batch][N]
  float* outs = gate + int64_t(nb) * N;                // [batch][cell]
  ThreadPool* pool = ctx.pool();
  const float inf = std::numeric_limits<float>::infinity();
  ThreadPool* rec_pool = int64_t(nb) * N * no >= 65536 ? pool : nullptr;
  ThreadPool* proj_pool = int64_t(nb) * no * nc >= 65536 ? pool : nullptr;

  for (int t0 = 0; t0 < T; t0 += int(block)) {
    const int tn = int(std::min<int64_t>(block, T - t0));
    // Input projections of steps [t0, t0 + tn).
    if (time_major) {
      gemm::Gemm(int64_t(tn) * nb, N, ni, x + int64_t(t0) * nb * ni, ni, pk->x.data(), xproj, N, -inf, inf, pool);
    } else if (tn == T) {
      gemm::Gemm(int64_t(nb) * T, N, ni, x, ni, pk->x.data(), xproj, N, -inf, inf, pool);
    } else {
      for (int b = 0; b < nb; ++b)
        gemm::Gemm(tn, N, ni, x + (int64_t(b) * T + t0) * ni, ni, pk->x.data(), xproj + int64_t(b) * tn * N, N,
                   -inf, inf, pool);
    }
    for (int tl = 0; tl < tn; ++tl) {
      const int t = t0 + tl;
      auto xrow = [&](int b) {
        return xproj + (time_major ? int64_t(tl) * nb + b : int64_t(b) * tn + tl) * N;
      };
      // gate = W_h h (all gates, all batch rows) + the input projection.
      if (p.diagonal) {
        for (int b = 0; b < nb; ++b) {
          const float* h = hs + int64_t(b) * no;
          const float* xp = xrow(b);
          float* gb = gate + int64_t(b) * N;
          for (int k = k0; k < 4; ++k)
            for (int j = 0; j < nc; ++j) gb[(k - k0) * nc + j] = xp[(k - k0) * nc + j] + w.wh[k][j] * h[j];
        }
      } else {
        gemm::Gemm(nb, N, no, hs, no, pk->h.data(), gate, N, -inf, inf, rec_pool);
        for (int b = 0; b < nb; ++b) {
          const float* xp = xrow(b);
          float* gb = gate + int64_t(b) * N;
          for (int n = 0; n < N; ++n) gb[n] = xp[n] + gb[n];
        }
      }
      for (int b = 0; b < nb; ++b) {
        float* gb = gate + int64_t(b) * N;
        float* c = cs + int64_t(b) * nc;
        auto gk_of = [&](int k) { return gb + (k - k0) * nc; };
        auto finish_gate = [&](int k, bool sigmoid) {
          float* gk = gk_of(k);
          if (w.peep[k])
            for (int j = 0; j < nc; ++j) gk[j] += w.peep[k][j] * c[j];
          if (w.ln[k]) {
            Normalize(gk, nc);
            for (int j = 0; j < nc; ++j) gk[j] = gk[j] * w.ln[k][j] + w.bias[k][j];
          }
          if (sigmoid) ApplySigmoid<true>(gk, nc); else seq::ApplyActivationToVector<true>(p.activation, gk, nc, gk);
        };
        if (!g.cifg) finish_gate(0, true);
        finish_gate(1, true);
        finish_gate(2, false);
        const float* fg = gk_of(1);
        float* cg = gk_of(2);
        if (g.cifg) {
          for (int j = 0; j < nc; ++j) c[j] = fg[j] * c[j] + cg[j] * (1.f - fg[j]);
        } else {
          const float* ig = gk_of(0);
          for (int j = 0; j < nc; ++j) c[j] = fg[j] * c[j] + cg[j] * ig[j];
        }
        if (p.cell_clip > 0.f)
          for (int j = 0; j < nc; ++j) c[j] = std::max(-p.cell_clip, std::min(p.cell_clip, c[j]));
        finish_gate(3, true);
        const float* og = gk_of(3);
        seq::ApplyActivationToVector<true>(p.activation, c, nc, cg);  // NONE leaves g in place (TFLite's quirk)
        float* o = outs + int64_t(b) * nc;
        for (int j = 0; j < nc; ++j) o[j] = og[j] * cg[j];
      }
      // New h (projected when there is a projection): the state, and the output row.
      if (w.proj_w) {
        const float clip = p.proj_clip > 0.f ? p.proj_clip : inf;
        gemm::Gemm(nb, no, nc, outs, nc, pk->proj.data(), hs, no, -clip, clip, proj_pool);
      } else {
        std::memcpy(hs, outs, sizeof(float) * size_t(nb) * no);
      }
      for (int b = 0; b < nb; ++b)
        std::memcpy(y + RowIndex(time_major, nb, T, b, t) * no, hs + int64_t(b) * no, sizeof(float) * no);
    }
  }
  return OkStatus();
}

// ------------------------------------------------------------------------------ BASIC
Status PrepareBasic(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(5, 5, 4, 4));
  const char* names[5] = {"input", "prev_activation", "weights", "biases", "prev_state"};
  for (int i = 0; i < 5; ++i) {
    if (!ctx.has_input(i)) return ctx.Error(std::string(names[i]) + " (input " + std::to_string(i) + ") is missing");
    const Tensor& t = ctx.input(i);
    if (t.type != DType::kFloat32)
      return ctx.Error(std::string(names[i]) + " has type " + DTypeName(t.type) +
                       ", only FLOAT32 is supported by the BASIC LSTM kernel");
  }
  const Tensor& in = ctx.input(0);
  const Tensor& pa = ctx.input(1);
  const Tensor& wt = ctx.input(2);
  const Tensor& bs = ctx.input(3);
  const Tensor& ps = ctx.input(4);
  if (in.shape.size() != 2) return ctx.Error("input must be 2-D, got " + DimsToString(in.shape));
  const int nb = in.shape[0], ni = in.shape[1];
  if (pa.shape.size() != 2 || pa.shape[0] != nb)
    return ctx.Error("prev_activation must be [" + std::to_string(nb) + ", depth], got " + DimsToString(pa.shape));
  const int nd = pa.shape[1];
  const int64_t total = int64_t(ni) + nd;
  if (wt.shape.size() != 2 || wt.shape[0] != int64_t(4) * nd || wt.shape[1] != total)
    return ctx.Error("weights must be [" + std::to_string(4 * int64_t(nd)) + ", " + std::to_string(total) + "], got " +
                     DimsToString(wt.shape));
  if (bs.shape.size() != 1 || bs.shape[0] != int64_t(4) * nd)
    return ctx.Error("biases must be [" + std::to_string(4 * int64_t(nd)) + "], got " + DimsToString(bs.shape));
  if (ps.shape.size() != 2 || ps.shape[0] != nb || ps.shape[1] != nd)
    return ctx.Error("prev_state must be [" + std::to_string(nb) + ", " + std::to_string(nd) + "], got " +
                     DimsToString(ps.shape));
  for (int i = 0; i < 4; ++i) TFG_RETURN_IF_ERROR(ctx.SetOutputType(i, DType::kFloat32));
  TFG_RETURN_IF_ERROR(ctx.SetOutputShape(0, pa.shape));
  TFG_RETURN_IF_ERROR(ctx.SetOutputShape(1, ps.shape));
  TFG_RETURN_IF_ERROR(ctx.SetOutputShape(2, {nb, int32_t(total)}));
  return ctx.SetOutputShape(3, {nb, 4 * nd});
}

template <bool kRef>
Status EvalBasic(OpContext& ctx) {
  const Tensor& in = ctx.input(0);
  const int nb = in.shape[0], ni = in.shape[1], nd = ctx.input(1).shape[1], total = ni + nd;
  const float* x = in.as<float>();
  const float* pa = ctx.input(1).as<float>();
  const float* wt = ctx.input(2).as<float>();
  const float* bs = ctx.input(3).as<float>();
  const float* ps = ctx.input(4).as<float>();
  float* act = ctx.output(0).as<float>();
  float* state = ctx.output(1).as<float>();
  float* concat = ctx.output(2).as<float>();
  float* at = ctx.output(3).as<float>();
  for (int b = 0; b < nb; ++b) {
    std::memcpy(concat + int64_t(b) * total, x + int64_t(b) * ni, sizeof(float) * ni);
    std::memcpy(concat + int64_t(b) * total + ni, pa + int64_t(b) * nd, sizeof(float) * nd);
  }
  auto fc = [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int b = int(r / (4 * nd)), j = int(r % (4 * nd));
      const float* cb = concat + int64_t(b) * total;
      const float* wr = wt + int64_t(j) * total;
      float d;
      if (kRef) {
        d = 0.f;
        for (int i = 0; i < total; ++i) d += wr[i] * cb[i];
      } else {
        d = seq::Dot8(wr, cb, total);
      }
      at[r] = d + bs[j];
    }
  };
  const int64_t rows = int64_t(nb) * 4 * nd;
  if (kRef) fc(0, rows);
  else ParallelFor(ctx.pool(), rows, fc, std::max<int64_t>(16, MinChunkFor(total)));
  for (int b = 0; b < nb; ++b) {
    const float* a = at + int64_t(b) * 4 * nd;
    for (int c = 0; c < nd; ++c) {
      const float ig = Sigmoid(a[c]);
      const float ni_ = std::tanh(a[nd + c]);
      const float fg = Sigmoid(a[2 * nd + c]);
      const float og = Sigmoid(a[3 * nd + c]);
      const float s = ig * ni_ + fg * ps[int64_t(b) * nd + c];
      state[int64_t(b) * nd + c] = s;
      act[int64_t(b) * nd + c] = og * std::tanh(s);
    }
  }
  return OkStatus();
}

// ------------------------------------------------------------------------------ LSTM dispatch
Status PrepareLstm(OpContext& ctx) {
  const LstmParams& p = ctx.node().P<LstmParams>();
  if (!p.has_options) return ctx.Error("the LSTM options table is missing (TFLite: no valid LSTM builtin options)");
  if (p.kernel_type == 1) return PrepareBasic(ctx);
  if (p.kernel_type != 0) return ctx.Error("unknown kernel_type " + std::to_string(p.kernel_type));
  return PrepareFull(ctx);
}
Status EvalLstm(OpContext& ctx) {
  return ctx.node().P<LstmParams>().kernel_type == 1 ? EvalBasic<false>(ctx) : EvalFull(ctx);
}
Status EvalLstmRef(OpContext& ctx) {
  return ctx.node().P<LstmParams>().kernel_type == 1 ? EvalBasic<true>(ctx) : EvalFullRef(ctx);
}

// ------------------------------------------------------------------------------ BIDIRECTIONAL
// BIDIRECTIONAL_SEQUENCE_LSTM (TFLite bidirectional_sequence_lstm.cc, float32): 48 inputs
//    0 input [time, batch, in] (time_major, the default) or [batch, time, in]
//    1..17  forward cell weights, laid out as inputs 1..17 of the unidirectional LSTM
//   18..34  backward cell weights (same layout)
//   35, 36  fw output_state [batch, fw_out], cell_state [batch, fw_cell]: variable tensors
//   37, 38  bw output_state, cell_state
//   39      aux_input (optional) [.., .., aux]
//   40..43  fw aux_input_to_{i,f,c,o} weights [fw_cell, aux] (optional), 44..47 bw
// Outputs: fw [.., .., fw_out] and bw [.., .., bw_out]; merge_outputs: one [.., .., fw_out + bw_out]
// (bw columns after the fw ones). The backward cell runs the steps in reverse. aux_input with
// aux weights adds W_aux aux to every gate of both cells; aux_input without aux weights is the
// backward cell's input (TFLite's "non-stacking" mode) and input feeds only the forward cell.
// Only the plain kernel (RefSequence; HybridSequence for INT8 weights, TFLite's hybrid path,
// asymmetric_quantize_inputs = option field 5); no layer norm.
// LiteRT 2.3 with merge_outputs in the batch-major layout offsets the output state of batch b by
// b * (fw_out + bw_out) instead of b * out (lstm_eval's output_batch_leading_dim), reading and
// writing past the state tensor for b > 0 (its results are garbage there); we compute what the
// op defines: the unmerged outputs side by side.
constexpr uint8_t kBidirectionalSequenceLSTMOptions = 69;
constexpr int kBwOff = 17, kFwHs = 35, kFwCs = 36, kBwHs = 37, kBwCs = 38, kAuxIn = 39, kFwAux = 40, kBwAux = 44;

Status ParseBidi(const OptionsView& opts, Node& node) {
  auto p = std::make_shared<LstmParams>();
  fb::Table t = opts.type == kBidirectionalSequenceLSTMOptions ? opts.table : fb::Table();
  p->has_options = t.valid();
  p->activation = t.Scalar<int8_t>(0, 0);
  p->cell_clip = t.Scalar<float>(1, 0.f);
  p->proj_clip = t.Scalar<float>(2, 0.f);
  p->merge_outputs = t.Bool(3, false);
  p->time_major = t.valid() ? t.Bool(4, true) : false;  // schema default true; no table: zeroed params
  p->asymmetric = t.Bool(5, false);
  p->sequence = true;
  node.params = p;
  return OkStatus();
}

struct BidiGeo {
  Geo fw, bw;
  bool aux = false, aux_w = false;
  int n_aux = 0;
};

Status GetBidiGeo(OpContext& ctx, BidiGeo* bg) {
  const LstmParams& p = ctx.node().P<LstmParams>();
  const Tensor& in = ctx.input(kInput);
  if (in.shape.size() != 3) return ctx.Error("input must be 3-D, got shape " + DimsToString(in.shape));
  const int T = p.time_major ? in.shape[0] : in.shape[1], B = p.time_major ? in.shape[1] : in.shape[0];
  bg->aux = ctx.has_input(kAuxIn);
  bg->aux_w = ctx.has_input(kFwAux + 3);  // fw aux_input_to_output_weights
  int bw_in = in.shape[2];
  if (bg->aux) {
    const Tensor& a = ctx.input(kAuxIn);
    if (a.type != DType::kFloat32) return ctx.Error(std::string("aux_input has type ") + DTypeName(a.type) + ", expected FLOAT32");
    if (a.shape.size() != 3 || a.shape[0] != in.shape[0] || a.shape[1] != in.shape[1])
      return ctx.Error("aux_input must be 3-D with the input's first two dimensions " + DimsToString(in.shape) +
                       ", got " + DimsToString(a.shape));
    bg->n_aux = a.shape[2];
    if (!bg->aux_w) bw_in = a.shape[2];  // non-stacking: aux_input is the backward cell's input
  }
  TFG_RETURN_IF_ERROR(GetGeoDir(ctx, false, 0, "fw_", &bg->fw));
  TFG_RETURN_IF_ERROR(GetGeoDir(ctx, false, kBwOff, "bw_", &bg->bw));
  for (Geo* g : {&bg->fw, &bg->bw}) {
    g->n_batch = B;
    g->max_time = T;
  }
  bg->fw.n_input = in.shape[2];
  bg->bw.n_input = bw_in;
  // TFLite checks both cells against the forward cell's sizes and the input's width.
  if (bg->bw.n_cell != bg->fw.n_cell || bg->bw.n_output != bg->fw.n_output)
    return ctx.Error("the backward cell (" + std::to_string(bg->bw.n_cell) + " cells, " + std::to_string(bg->bw.n_output) +
                     " outputs) must have the forward cell's sizes (" + std::to_string(bg->fw.n_cell) + ", " +
                     std::to_string(bg->fw.n_output) + ")");
  if (bw_in != in.shape[2])
    return ctx.Error("aux_input without aux weights feeds the backward cell and must have the input's width " +
                     std::to_string(in.shape[2]) + ", got " + std::to_string(bw_in));
  return OkStatus();
}

Status PrepareBidi(OpContext& ctx) {
  const LstmParams& p = ctx.node().P<LstmParams>();
  if (ctx.num_inputs() != 48) return ctx.Error("expects 48 inputs, got " + std::to_string(ctx.num_inputs()));
  TFG_RETURN_IF_ERROR(seq::CheckBidiOutputs(ctx, p.merge_outputs));
  if (p.activation < 0 || p.activation > 5)
    return ctx.Error("unsupported fused activation function " + std::to_string(p.activation));
  if (!(p.cell_clip >= 0.f)) return ctx.Error("cell_clip must be >= 0, got " + std::to_string(p.cell_clip));
  if (!(p.proj_clip >= 0.f)) return ctx.Error("proj_clip must be >= 0, got " + std::to_string(p.proj_clip));
  for (int off : {0, kBwOff})
    for (int i : {kInToForget, kInToCell, kInToOut, kRecToForget, kRecToCell, kRecToOut, kForgetBias, kCellBias, kOutBias})
      if (!ctx.has_input(i + off)) return ctx.Error("required input " + std::to_string(i + off) + " is missing");
  for (int i : {int(kInput), kFwHs, kFwCs, kBwHs, kBwCs})
    if (!ctx.has_input(i)) return ctx.Error("required input " + std::to_string(i) + " is missing");
  const Tensor& in = ctx.input(kInput);
  if (in.type != DType::kFloat32)
    return ctx.Error(std::string("input type ") + DTypeName(in.type) + " is not supported (only FLOAT32)");
  BidiGeo bg;
  TFG_RETURN_IF_ERROR(GetBidiGeo(ctx, &bg));
  TFG_RETURN_IF_ERROR(CheckDir(ctx, p, bg.fw, 0, "fw_"));
  TFG_RETURN_IF_ERROR(CheckDir(ctx, p, bg.bw, kBwOff, "bw_"));
  TFG_RETURN_IF_ERROR(CheckStates(ctx, bg.fw, kFwHs, kFwCs, "fw_"));
  TFG_RETURN_IF_ERROR(CheckStates(ctx, bg.bw, kBwHs, kBwCs, "bw_"));
  const char* gates[4] = {"input", "forget", "cell", "output"};
  for (int d = 0; d < 2; ++d) {
    const Geo& g = d == 0 ? bg.fw : bg.bw;
    const int base = d == 0 ? kFwAux : kBwAux;
    const std::string pre = d == 0 ? "fw_" : "bw_";
    for (int k = 0; k < 4; ++k) {
      const bool want = bg.aux_w && !(k == 0 && g.cifg);
      if (ctx.has_input(base + k) != want)
        return ctx.Error(pre + "aux_input_to_" + gates[k] + "_weights (input " + std::to_string(base + k) + ") must be " +
                         (want ? "present" : "absent") +
                         " (aux weights: all or none for both cells, without the input gate's for CIFG, and only with aux_input)");
      if (want)
        TFG_RETURN_IF_ERROR(CheckMat(ctx, base + k, g.n_cell, bg.n_aux, pre + "aux_input_to_" + gates[k] + "_weights", g.hybrid));
    }
  }
  if (bg.aux_w && !bg.aux) return ctx.Error("aux weights are given without aux_input (input 39)");
  if (bg.fw.hybrid != bg.bw.hybrid)
    return ctx.Error("the forward and backward cells must both have FLOAT32 or both INT8 (hybrid) weights");
  const int T = bg.fw.max_time, B = bg.fw.n_batch, fo = bg.fw.n_output, bo = bg.bw.n_output;
  if (bg.fw.hybrid)
    ctx.RequestScratch(std::max(HybridWorkBytes(bg.fw, bg.n_aux), HybridWorkBytes(bg.bw, bg.n_aux)));
  else
    ctx.RequestScratch(std::max(RefWorkFloats(bg.fw), RefWorkFloats(bg.bw)) * sizeof(float));
  auto shape = [&](int n) { return Dims{p.time_major ? T : B, p.time_major ? B : T, n}; };
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, DType::kFloat32));
  TFG_RETURN_IF_ERROR(ctx.SetOutputShape(0, shape(p.merge_outputs ? fo + bo : fo)));
  if (!p.merge_outputs) {
    TFG_RETURN_IF_ERROR(ctx.SetOutputType(1, DType::kFloat32));
    TFG_RETURN_IF_ERROR(ctx.SetOutputShape(1, shape(bo)));
  }
  return OkStatus();
}

Status EvalBidi(OpContext& ctx) {
  const LstmParams& p = ctx.node().P<LstmParams>();
  BidiGeo bg;
  TFG_RETURN_IF_ERROR(GetBidiGeo(ctx, &bg));
  const float* x = ctx.input(kInput).as<float>();
  const float* a = bg.aux ? ctx.input(kAuxIn).as<float>() : nullptr;
  const float* bw_x = (bg.aux && !bg.aux_w) ? a : x;
  const float* aux = bg.aux_w ? a : nullptr;
  if (bg.fw.hybrid) {
    const HybridWeights hf = GetHybridWeights(ctx, bg.fw, 0, aux ? kFwAux : -1);
    const HybridWeights hb = GetHybridWeights(ctx, bg.bw, kBwOff, aux ? kBwAux : -1);
    const int fo = bg.fw.n_output, bo = bg.bw.n_output;
    float* fy = ctx.output(0).as<float>();
    float* by = p.merge_outputs ? fy + fo : ctx.output(1).as<float>();
    const int ld = fo + bo;
    HybridSequence(p, bg.fw, hf, x, aux, bg.n_aux, fy, p.merge_outputs ? ld : fo, true, ctx.input(kFwHs).as<float>(),
                   ctx.input(kFwCs).as<float>(), ctx.scratch());
    HybridSequence(p, bg.bw, hb, bw_x, aux, bg.n_aux, by, p.merge_outputs ? ld : bo, false,
                   ctx.input(kBwHs).as<float>(), ctx.input(kBwCs).as<float>(), ctx.scratch());
    return OkStatus();
  }
  Weights fw = GetWeights(ctx, bg.fw, 0), bw = GetWeights(ctx, bg.bw, kBwOff);
  if (aux)
    for (int k = 0; k < 4; ++k) {
      fw.aux[k] = Data(ctx, kFwAux + k);
      bw.aux[k] = Data(ctx, kBwAux + k);
    }
  const int fo = bg.fw.n_output, bo = bg.bw.n_output;
  float* fy = ctx.output(0).as<float>();
  float* by = p.merge_outputs ? fy + fo : ctx.output(1).as<float>();
  const int ld = p.merge_outputs ? fo + bo : 0;
  float* work = static_cast<float*>(ctx.scratch());  // the cells run one after the other
  RefSequence(p, bg.fw, fw, x, aux, bg.n_aux, fy, p.merge_outputs ? ld : fo, true, ctx.input(kFwHs).as<float>(),
              ctx.input(kFwCs).as<float>(), work);
  RefSequence(p, bg.bw, bw, bw_x, aux, bg.n_aux, by, p.merge_outputs ? ld : bo, false, ctx.input(kBwHs).as<float>(),
              ctx.input(kBwCs).as<float>(), work);
  return OkStatus();
}

}  // namespace

const OpImpl kOp_BIDIRECTIONAL_SEQUENCE_LSTM = {ParseBidi, PrepareBidi, EvalBidi, nullptr, false};
const OpImpl kOp_LSTM = {ParseLstm, PrepareLstm, EvalLstm, EvalLstmRef, false};
const OpImpl kOp_UNIDIRECTIONAL_SEQUENCE_LSTM = {ParseSequence, PrepareFull, EvalFull, EvalFullRef, false};

}  // namespace tflite_gpu
