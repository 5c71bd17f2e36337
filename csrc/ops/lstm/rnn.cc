// Basic RNN family, TFLite semantics (basic_rnn.cc, unidirectional_sequence_rnn.cc,
// bidirectional_sequence_rnn.cc, kernel_utils' RnnBatchStep):
//
//   RNN                          inputs: input [batch, in], weights [units, in], recurrent_weights
//                                [units, units], bias [units], hidden_state [batch, units] (variable)
//   UNIDIRECTIONAL_SEQUENCE_RNN  same, input [batch, time, in] or [time, batch, in] (time_major)
//   BIDIRECTIONAL_SEQUENCE_RNN   12 inputs: input, fw {weights, recurrent, bias, hidden_state},
//                                bw {...}, aux_input, fw_aux_weights, bw_aux_weights (optional);
//                                outputs fw, bw (one output [.., fw_units + bw_units] with
//                                merge_outputs)
// One step for a row:  out = act(bias + W x (+ W_aux aux) + R h);  h = out.
// Float: each product a dot product in order added to the running sum, as TFLite's portable
// MatrixBatchVectorMultiplyAccumulate. Hybrid (int8 weights with one scale, float activations,
// versions 2-3): each row of x, aux and h quantized on the fly (symmetric: scale max|v| / 127;
// asymmetric_quantize_inputs: TFLite's AsymmetricQuantizeFloats), the int32 dot product (minus
// zero_point * row sum of the weights when asymmetric) times row scale * weight scale added to
// the float sum. Activation NONE writes nothing, as TFLite's ApplyActivationToVector.
//
// BIDIRECTIONAL_SEQUENCE_RNN reproduces LiteRT 2.3's observable behaviour (each checked against
// it in tests/op_cases/rnn.py): aux_input without aux weights feeds the backward cell instead of input ("non-stacking" mode) only in the
// time-major layout (the batch-major loop reads `input`); the hybrid time-major kernel runs the
// whole sequence max_time times (an outer loop over t around the loop over steps), so the state
// advances max_time * max_time steps per invoke. Inputs for which LiteRT would read out of
// bounds (aux sizes that differ from the input's) are refused at prepare.
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <vector>

#include "ops/lstm/seq_common.h"
#include "ops/op_registry.h"
#include "ops/quant_common.h"

namespace tflite_gpu {
namespace {

constexpr uint8_t kRNNOptions = 7;
constexpr uint8_t kSequenceRNNOptions = 31;
constexpr uint8_t kBidirectionalSequenceRNNOptions = 70;

enum class Kind { kRnn, kUni, kBidi };

struct RnnParams {
  Kind kind = Kind::kRnn;
  int activation = 0;
  bool time_major = false;
  bool merge_outputs = false;
  bool asymmetric = false;
};

Status ParseRnn(const OptionsView& opts, Node& node) {
  auto p = std::make_shared<RnnParams>();
  fb::Table t = opts.type == kRNNOptions ? opts.table : fb::Table();
  p->kind = Kind::kRnn;
  p->activation = t.Scalar<int8_t>(0, 0);
  p->asymmetric = t.Bool(1, false);
  node.params = p;
  return OkStatus();
}
Status ParseUni(const OptionsView& opts, Node& node) {
  auto p = std::make_shared<RnnParams>();
  fb::Table t = opts.type == kSequenceRNNOptions ? opts.table : fb::Table();
  p->kind = Kind::kUni;
  p->time_major = t.Bool(0, false);
  p->activation = t.Scalar<int8_t>(1, 0);
  p->asymmetric = t.Bool(2, false);
  node.params = p;
  return OkStatus();
}
Status ParseBidi(const OptionsView& opts, Node& node) {
  auto p = std::make_shared<RnnParams>();
  fb::Table t = opts.type == kBidirectionalSequenceRNNOptions ? opts.table : fb::Table();
  p->kind = Kind::kBidi;
  p->time_major = t.Bool(0, false);
  p->activation = t.Scalar<int8_t>(1, 0);
  p->merge_outputs = t.Bool(2, false);
  p->asymmetric = t.Bool(3, false);
  node.params = p;
  return OkStatus();
}

// One direction's weights. Float: w/aux_w/r; hybrid: wq/aux_wq/rq with one scale each.
struct Dir {
  int units = 0, in = 0, aux_in = 0;
  const float* bias = nullptr;
  const float *w = nullptr, *aux_w = nullptr, *r = nullptr;
  const int8_t *wq = nullptr, *aux_wq = nullptr, *rq = nullptr;
  float ws = 1.f, aux_ws = 1.f, rs = 1.f;
  std::vector<int32_t> sum_w, sum_aux, sum_r;  // row sums (asymmetric inputs)
  bool refill = true;  // some weight or bias is computed by the graph: FillDir again every invoke
};

struct Scratch {
  int8_t* q;
  float* scale;
  int32_t* zp;
};

// Float: out[j] += dot(W[j], x) (in order for the reference kernel, 8 partial sums otherwise).
template <bool kRef>
inline float DotF(const float* a, const float* b, int n) {
  if (kRef) {
    float d = 0.f;
    for (int i = 0; i < n; ++i) d += a[i] * b[i];
    return d;
  }
  return seq::Dot8(a, b, n);
}

// Adds W v_k to out row k for nb rows (v rows contiguous, n wide).
template <bool kRef>
void AccF(const float* W, int units, int n, const float* v, int nb, float* out, int ld) {
  for (int k = 0; k < nb; ++k)
    for (int j = 0; j < units; ++j) out[int64_t(k) * ld + j] += DotF<kRef>(W + int64_t(j) * n, v + int64_t(k) * n, n);
}
void AccQ(const int8_t* W, float wscale, const std::vector<int32_t>& sums, bool asym, int units, int n,
          const float* v, int nb, float* out, int ld, Scratch& s) {
  for (int k = 0; k < nb; ++k) {
    quant::QuantizeFloatRow(v + int64_t(k) * n, n, asym, s.q + int64_t(k) * n, &s.scale[k], &s.zp[k]);
    s.scale[k] *= wscale;
  }
  for (int k = 0; k < nb; ++k)
    seq::HybridMatVecAccumulate(W, units, n, s.q + int64_t(k) * n, s.scale[k], s.zp[k], asym ? sums.data() : nullptr,
                                out + int64_t(k) * ld, 1);
}

// kernel_utils::RnnBatchStep: nb rows; x rows `in` apart, aux rows `aux_in` apart, h rows `units`
// apart, output rows `ld` apart.
template <bool kRef>
void Step(const Dir& d, const RnnParams& p, int nb, const float* x, const float* aux, float* h, float* out, int ld,
          Scratch& s) {
  const int U = d.units;
  for (int k = 0; k < nb; ++k) std::memcpy(out + int64_t(k) * ld, d.bias, sizeof(float) * U);
  if (d.wq) {
    AccQ(d.wq, d.ws, d.sum_w, p.asymmetric, U, d.in, x, nb, out, ld, s);
    if (aux && d.aux_in > 0) AccQ(d.aux_wq, d.aux_ws, d.sum_aux, p.asymmetric, U, d.aux_in, aux, nb, out, ld, s);
    AccQ(d.rq, d.rs, d.sum_r, p.asymmetric, U, U, h, nb, out, ld, s);
  } else {
    AccF<kRef>(d.w, U, d.in, x, nb, out, ld);
    if (aux && d.aux_in > 0) AccF<kRef>(d.aux_w, U, d.aux_in, aux, nb, out, ld);
    AccF<kRef>(d.r, U, U, h, nb, out, ld);
  }
  for (int k = 0; k < nb; ++k) {
    float* o = out + int64_t(k) * ld;
    seq::ApplyActivationToVector(p.activation, o, U, o);
    std::memcpy(h + int64_t(k) * U, o, sizeof(float) * U);
  }
}

// ------------------------------------------------------------------------------ prepare
std::string In(int i, const char* what) { return std::string(what) + " (input " + std::to_string(i) + ")"; }

// Checks one weight matrix [rows, cols], float32 or (hybrid) int8 with one scale and zero point 0.
Status CheckWeights(OpContext& ctx, int i, const char* what, int rows, int cols, DType want) {
  const Tensor& t = ctx.input(i);
  if (t.type != want)
    return ctx.Error(In(i, what) + " has type " + DTypeName(t.type) + ", expected " + DTypeName(want) +
                     (want == DType::kFloat32 ? " (or INT8 for the hybrid kernel, with every weight INT8)"
                                              : " like the input weights"));
  if (t.shape.size() != 2 || t.shape[0] != rows || t.shape[1] != cols)
    return ctx.Error(In(i, what) + " must have shape [" + std::to_string(rows) + ", " + std::to_string(cols) +
                     "], got " + DimsToString(t.shape));
  if (t.type == DType::kInt8) {
    if (t.quant.scale.size() != 1)
      return ctx.Error(In(i, what) + ": hybrid INT8 weights need exactly one (per-tensor) scale, got " +
                       std::to_string(t.quant.scale.size()));
    if (!(t.quant.scale[0] > 0.f) || !std::isfinite(t.quant.scale[0]))
      return ctx.Error(In(i, what) + ": scale must be positive and finite");
    if (!t.quant.zero_point.empty() && t.quant.zero_point[0] != 0)
      return ctx.Error(In(i, what) + ": hybrid INT8 weights must be symmetric (zero point 0)");
  }
  return OkStatus();
}

Status CheckBias(OpContext& ctx, int i, const char* what, int units) {
  const Tensor& t = ctx.input(i);
  if (t.type != DType::kFloat32) return ctx.Error(In(i, what) + " has type " + DTypeName(t.type) + ", expected FLOAT32");
  if (t.shape.size() != 1 || t.shape[0] != units)
    return ctx.Error(In(i, what) + " must have shape [" + std::to_string(units) + "], got " + DimsToString(t.shape));
  return OkStatus();
}

Status CheckState(OpContext& ctx, int i, const char* what, int batch, int units) {
  const Tensor& s = ctx.input(i);
  if (!s.is_variable) return ctx.Error(In(i, what) + " must be a variable tensor");
  if (s.type != DType::kFloat32) return ctx.Error(In(i, what) + " has type " + DTypeName(s.type) + ", expected FLOAT32");
  if (s.shape.size() != 2 || s.shape[0] != batch || s.shape[1] != units)
    return ctx.Error(In(i, what) + " must have shape [" + std::to_string(batch) + ", " + std::to_string(units) +
                     "] (batch, units), got " + DimsToString(s.shape));
  if (s.bytes < size_t(batch) * units * sizeof(float) || (int64_t(batch) * units > 0 && !s.data))
    return ctx.Error(In(i, what) + " has no storage");
  return OkStatus();
}

struct Geo {
  int batch = 0, time = 1, in = 0, aux_in = 0;
  bool aux = false;       // aux_input present
  bool aux_w = false;     // aux weights present (stacking with cross links)
  bool hybrid = false;
};

Status CheckCommon(OpContext& ctx, const RnnParams& p) {
  if (p.activation < 0 || p.activation > 5)
    return ctx.Error("unsupported fused activation function " + std::to_string(p.activation));
  const Tensor& in = ctx.input(0);
  if (in.type != DType::kFloat32)
    return ctx.Error(std::string("input has type ") + DTypeName(in.type) +
                     ", expected FLOAT32 (hybrid kernels take FLOAT32 activations with INT8 weights)");
  return OkStatus();
}

Status GetGeo(OpContext& ctx, const RnnParams& p, Geo* g) {
  const Tensor& in = ctx.input(0);
  if (p.kind == Kind::kRnn) {
    if (in.shape.size() != 2) return ctx.Error("input must be 2-D [batch, input_size], got " + DimsToString(in.shape));
    g->batch = in.shape[0];
    g->in = in.shape[1];
  } else {
    if (in.shape.size() != 3)
      return ctx.Error(std::string("input must be 3-D ") + (p.time_major ? "[time, batch, input_size]" : "[batch, time, input_size]") +
                       ", got " + DimsToString(in.shape));
    g->time = p.time_major ? in.shape[0] : in.shape[1];
    g->batch = p.time_major ? in.shape[1] : in.shape[0];
    g->in = in.shape[2];
  }
  g->hybrid = ctx.input(1).type == DType::kInt8;
  return OkStatus();
}

Status PrepareDir(OpContext& ctx, const Geo& g, int w, int r, int b, int h, int aux_w, const char* prefix, int* units) {
  const Tensor& wt = ctx.input(w);
  const std::string pre(prefix);
  if (wt.shape.size() != 2)
    return ctx.Error(In(w, (pre + "weights").c_str()) + " must be 2-D [units, input_size], got " + DimsToString(wt.shape));
  const int U = wt.shape[0];
  *units = U;
  const DType wtype = wt.type == DType::kInt8 ? DType::kInt8 : DType::kFloat32;
  if (g.hybrid != (wtype == DType::kInt8))
    return ctx.Error(In(w, (pre + "weights").c_str()) + " has type " + DTypeName(wt.type) +
                     ": the forward and backward weights must all be FLOAT32 or all INT8");
  TFG_RETURN_IF_ERROR(CheckWeights(ctx, w, (pre + "weights").c_str(), U, g.in, wtype));
  TFG_RETURN_IF_ERROR(CheckWeights(ctx, r, (pre + "recurrent_weights").c_str(), U, U, wtype));
  TFG_RETURN_IF_ERROR(CheckBias(ctx, b, (pre + "bias").c_str(), U));
  TFG_RETURN_IF_ERROR(CheckState(ctx, h, (pre + "hidden_state").c_str(), g.batch, U));
  if (aux_w >= 0 && g.aux_w) TFG_RETURN_IF_ERROR(CheckWeights(ctx, aux_w, (pre + "aux_weights").c_str(), U, g.aux_in, wtype));
  return OkStatus();
}

void FillDir(OpContext& ctx, const RnnParams& p, const Geo& g, int w, int r, int b, int aux_w, Dir* d) {
  d->units = ctx.input(w).shape[0];
  d->in = g.in;
  d->aux_in = (aux_w >= 0 && g.aux_w) ? g.aux_in : 0;
  d->bias = ctx.input(b).as<float>();
  auto rowsums = [&](const int8_t* m, int rows, int cols, std::vector<int32_t>* out) {
    out->assign(size_t(rows), 0);
    if (!p.asymmetric) return;
    for (int j = 0; j < rows; ++j)
      for (int i = 0; i < cols; ++i) (*out)[j] += m[int64_t(j) * cols + i];
  };
  if (g.hybrid) {
    d->wq = ctx.input(w).as<int8_t>();
    d->rq = ctx.input(r).as<int8_t>();
    d->ws = ctx.input(w).quant.scale[0];
    d->rs = ctx.input(r).quant.scale[0];
    rowsums(d->wq, d->units, d->in, &d->sum_w);
    rowsums(d->rq, d->units, d->units, &d->sum_r);
    if (d->aux_in) {
      d->aux_wq = ctx.input(aux_w).as<int8_t>();
      d->aux_ws = ctx.input(aux_w).quant.scale[0];
      rowsums(d->aux_wq, d->units, d->aux_in, &d->sum_aux);
    }
  } else {
    d->w = ctx.input(w).as<float>();
    d->r = ctx.input(r).as<float>();
    if (d->aux_in) d->aux_w = ctx.input(aux_w).as<float>();
  }
}

// Whether every present input among `idx` is constant (its data fixed at prepare).
bool AllConstant(OpContext& ctx, std::initializer_list<int> idx) {
  for (int i : idx)
    if (i >= 0 && ctx.has_input(i) && !ctx.IsConstantOrPersistent(ctx.input(i))) return false;
  return true;
}

size_t ScratchBytes(const Geo& g, int max_units) {
  const int64_t width = std::max<int64_t>({int64_t(g.in), int64_t(g.aux_in), int64_t(max_units), 1});
  return size_t(int64_t(g.batch) * width + 64) + size_t(g.batch + 1) * (sizeof(float) + sizeof(int32_t)) + 64;
}
Scratch GetScratch(OpContext& ctx, const Geo& g, int max_units) {
  const int64_t width = std::max<int64_t>({int64_t(g.in), int64_t(g.aux_in), int64_t(max_units), 1});
  uint8_t* base = static_cast<uint8_t*>(ctx.scratch());
  Scratch s;
  s.scale = reinterpret_cast<float*>(base);
  s.zp = reinterpret_cast<int32_t*>(base + size_t(g.batch + 1) * sizeof(float));
  s.q = reinterpret_cast<int8_t*>(base + size_t(g.batch + 1) * (sizeof(float) + sizeof(int32_t)) + 64);
  (void)width;
  return s;
}

// ------------------------------------------------------------------------------ RNN / UNI
Status PrepareUni(OpContext& ctx) {
  const RnnParams& p = ctx.node().P<RnnParams>();
  TFG_RETURN_IF_ERROR(ctx.CheckArity(5, 5, 1, 1));
  for (int i = 0; i < 5; ++i)
    if (!ctx.has_input(i)) return ctx.Error("required input " + std::to_string(i) + " is missing");
  TFG_RETURN_IF_ERROR(CheckCommon(ctx, p));
  Geo g;
  TFG_RETURN_IF_ERROR(GetGeo(ctx, p, &g));
  int U = 0;
  TFG_RETURN_IF_ERROR(PrepareDir(ctx, g, 1, 2, 3, 4, -1, "", &U));
  Dims out = ctx.input(0).shape;
  out.back() = U;
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, DType::kFloat32));
  TFG_RETURN_IF_ERROR(ctx.SetOutputShape(0, out));
  ctx.RequestScratch(ScratchBytes(g, U));
  auto d = std::make_shared<Dir>();
  FillDir(ctx, p, g, 1, 2, 3, -1, d.get());
  d->refill = !AllConstant(ctx, {1, 2, 3});
  ctx.node().user_data = d;
  return OkStatus();
}

template <bool kRef>
Status EvalUni(OpContext& ctx) {
  const RnnParams& p = ctx.node().P<RnnParams>();
  Geo g;
  TFG_RETURN_IF_ERROR(GetGeo(ctx, p, &g));
  Dir& d = *ctx.node().U<Dir>();
  if (d.refill) FillDir(ctx, p, g, 1, 2, 3, -1, &d);  // weights computed by the graph: read them again
  const int U = d.units, I = g.in, B = g.batch, T = g.time;
  const float* x = ctx.input(0).as<float>();
  float* h = ctx.input(4).as<float>();
  float* y = ctx.output(0).as<float>();
  Scratch s = GetScratch(ctx, g, U);
  if (p.kind == Kind::kRnn || p.time_major) {
    for (int t = 0; t < T; ++t)
      Step<kRef>(d, p, B, x + int64_t(t) * B * I, nullptr, h, y + int64_t(t) * B * U, U, s);
  } else {
    for (int b = 0; b < B; ++b)
      for (int t = 0; t < T; ++t)
        Step<kRef>(d, p, 1, x + (int64_t(b) * T + t) * I, nullptr, h + int64_t(b) * U, y + (int64_t(b) * T + t) * U, U, s);
  }
  return OkStatus();
}

// ------------------------------------------------------------------------------ BIDI
enum BiIn { kFwW = 1, kFwR, kFwB, kFwH, kBwW, kBwR, kBwB, kBwH, kAux, kFwAuxW, kBwAuxW };

Status GetBidiGeo(OpContext& ctx, const RnnParams& p, Geo* g) {
  TFG_RETURN_IF_ERROR(GetGeo(ctx, p, g));
  g->aux = ctx.has_input(kAux);
  const bool fa = ctx.has_input(kFwAuxW), ba = ctx.has_input(kBwAuxW);
  if (fa != ba) return ctx.Error("fw_aux_weights and bw_aux_weights (inputs 10, 11) must be both present or both absent");
  g->aux_w = fa;
  if (g->aux_w && !g->aux) return ctx.Error("aux weights are given without aux_input (input 9)");
  if (g->aux) {
    const Tensor& a = ctx.input(kAux);
    const Tensor& in = ctx.input(0);
    if (a.type != DType::kFloat32) return ctx.Error(std::string("aux_input has type ") + DTypeName(a.type) + ", expected FLOAT32");
    if (a.shape.size() != 3 || a.shape[0] != in.shape[0] || a.shape[1] != in.shape[1])
      return ctx.Error("aux_input must be 3-D with the input's first two dimensions " + DimsToString(in.shape) +
                       ", got " + DimsToString(a.shape));
    g->aux_in = a.shape[2];
    // LiteRT steps through aux_input with the input's row size (time-major float and every
    // hybrid layout; as the backward cell's input without aux weights): other sizes would be
    // read out of bounds there.
    if (a.shape[2] != in.shape[2] && (!g->aux_w || p.time_major || g->hybrid))
      return ctx.Error("aux_input's last dimension (" + std::to_string(a.shape[2]) + ") must equal the input's (" +
                       std::to_string(in.shape[2]) + ")" +
                       (g->aux_w ? " in this layout (TFLite reads aux_input rows with the input's size)"
                                 : " when it feeds the backward cell (no aux weights)"));
  }
  return OkStatus();
}

struct BidiState {
  Dir fw, bw;
};

Status PrepareBidi(OpContext& ctx) {
  const RnnParams& p = ctx.node().P<RnnParams>();
  if (ctx.num_inputs() != 12) return ctx.Error("expects 12 inputs, got " + std::to_string(ctx.num_inputs()));
  TFG_RETURN_IF_ERROR(seq::CheckBidiOutputs(ctx, p.merge_outputs));
  for (int i = 0; i <= kBwH; ++i)
    if (!ctx.has_input(i)) return ctx.Error("required input " + std::to_string(i) + " is missing");
  TFG_RETURN_IF_ERROR(CheckCommon(ctx, p));
  Geo g;
  TFG_RETURN_IF_ERROR(GetBidiGeo(ctx, p, &g));
  int fu = 0, bu = 0;
  TFG_RETURN_IF_ERROR(PrepareDir(ctx, g, kFwW, kFwR, kFwB, kFwH, kFwAuxW, "fw_", &fu));
  TFG_RETURN_IF_ERROR(PrepareDir(ctx, g, kBwW, kBwR, kBwB, kBwH, kBwAuxW, "bw_", &bu));
  const int T = g.time, B = g.batch;
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, DType::kFloat32));
  TFG_RETURN_IF_ERROR(ctx.SetOutputShape(0, {p.time_major ? T : B, p.time_major ? B : T, p.merge_outputs ? fu + bu : fu}));
  if (!p.merge_outputs) {
    TFG_RETURN_IF_ERROR(ctx.SetOutputType(1, DType::kFloat32));
    TFG_RETURN_IF_ERROR(ctx.SetOutputShape(1, {p.time_major ? T : B, p.time_major ? B : T, bu}));
  }
  ctx.RequestScratch(ScratchBytes(g, std::max(fu, bu)));
  auto st = std::make_shared<BidiState>();
  FillDir(ctx, p, g, kFwW, kFwR, kFwB, kFwAuxW, &st->fw);
  FillDir(ctx, p, g, kBwW, kBwR, kBwB, kBwAuxW, &st->bw);
  st->fw.refill = st->bw.refill = !AllConstant(ctx, {kFwW, kFwR, kFwB, kBwW, kBwR, kBwB, kFwAuxW, kBwAuxW});
  ctx.node().user_data = st;
  return OkStatus();
}

template <bool kRef>
Status EvalBidi(OpContext& ctx) {
  const RnnParams& p = ctx.node().P<RnnParams>();
  Geo g;
  TFG_RETURN_IF_ERROR(GetBidiGeo(ctx, p, &g));
  BidiState& st = *ctx.node().U<BidiState>();
  if (st.fw.refill) {  // weights computed by the graph: read them again
    FillDir(ctx, p, g, kFwW, kFwR, kFwB, kFwAuxW, &st.fw);
    FillDir(ctx, p, g, kBwW, kBwR, kBwB, kBwAuxW, &st.bw);
  }
  const Dir &fw = st.fw, &bw = st.bw;
  const int I = g.in, B = g.batch, T = g.time, FU = fw.units, BU = bw.units;
  const float* x = ctx.input(0).as<float>();
  const float* aux_t = g.aux ? ctx.input(kAux).as<float>() : nullptr;
  const bool non_stacking = g.aux && !g.aux_w;
  const float* bw_x = non_stacking ? aux_t : x;
  const float* aux = non_stacking ? nullptr : aux_t;
  const int AI = aux ? g.aux_in : 0;
  float* fh = ctx.input(kFwH).as<float>();
  float* bh = ctx.input(kBwH).as<float>();
  float* fy = ctx.output(0).as<float>();
  const int fstep = p.merge_outputs ? FU + BU : FU, bstep = p.merge_outputs ? FU + BU : BU;
  float* by = p.merge_outputs ? fy + FU : ctx.output(1).as<float>();
  Scratch s = GetScratch(ctx, g, std::max(FU, BU));
  if (p.time_major) {
    const int reps = g.hybrid ? T : 1;  // LiteRT's hybrid time-major outer loop
    for (int rep = 0; rep < reps; ++rep) {
      for (int t = 0; t < T; ++t)
        Step<kRef>(fw, p, B, x + int64_t(t) * I * B, aux ? aux + int64_t(t) * I * B : nullptr, fh,
                   fy + int64_t(t) * fstep * B, fstep, s);
      for (int t = T - 1; t >= 0; --t)
        Step<kRef>(bw, p, B, bw_x + int64_t(t) * I * B, aux ? aux + int64_t(t) * I * B : nullptr, bh,
                   by + int64_t(t) * bstep * B, bstep, s);
    }
  } else {
    // LiteRT's batch-major loops read `input` for the backward cell; the hybrid kernel steps
    // through aux_input with the input's size (equal here, checked at prepare).
    for (int b = 0; b < B; ++b) {
      for (int t = 0; t < T; ++t)
        Step<kRef>(fw, p, 1, x + (int64_t(b) * T + t) * I, aux ? aux + (int64_t(b) * T + t) * AI : nullptr,
                   fh + int64_t(b) * FU, fy + int64_t(b) * fstep * T + int64_t(t) * fstep, fstep, s);
      for (int t = T - 1; t >= 0; --t)
        Step<kRef>(bw, p, 1, x + (int64_t(b) * T + t) * I, aux ? aux + (int64_t(b) * T + t) * AI : nullptr,
                   bh + int64_t(b) * BU, by + int64_t(b) * bstep * T + int64_t(t) * bstep, bstep, s);
    }
  }
  return OkStatus();
}

}  // namespace

const OpImpl kOp_RNN = {ParseRnn, PrepareUni, EvalUni<false>, EvalUni<true>, false};
const OpImpl kOp_UNIDIRECTIONAL_SEQUENCE_RNN = {ParseUni, PrepareUni, EvalUni<false>, EvalUni<true>, false};
const OpImpl kOp_BIDIRECTIONAL_SEQUENCE_RNN = {ParseBidi, PrepareBidi, EvalBidi<false>, EvalBidi<true>, false};

}  // namespace tflite_gpu
