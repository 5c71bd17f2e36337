#include "gpu/precision_plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "gpu/gpu_op.h"
#include "ops/conv/conv_common.h"
#include "ops/elementwise/ew_common.h"
#include "runtime/subgraph.h"

namespace tflite_gpu::gpu {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

bool RealType(const Tensor& t) {
  return t.type == DType::kFloat32 || t.type == DType::kFloat16 || IsQuantizedActivation(t);
}

struct Est {
  double s = 1.0, lo = -kInf, hi = kInf;
  // Weighted averages (soft-argmax, attention): the tensor is w * p with p = x / SUM(x) (x >= 0,
  // so p sums to 1 over that SUM's axes) and |w| <= wsum; a SUM over the same axes is then bounded
  // by wsum. `norm` is that SUM node (nullptr: none).
  const Node* norm = nullptr;
  double wsum = kInf;
};

// RMS gain of a weighted op for uncorrelated inputs of equal RMS: the RMS over outputs of each
// output's filter L2 norm, sqrt(sum(w^2) / outputs). (The largest norm instead would compound
// layer by layer: a net whose channels differ 2x in gain would gain 2^depth.)
double RmsGain(const std::vector<float>& w, int64_t outs) {
  if (outs <= 0 || w.empty()) return 0.0;
  double ss = 0.0;
  for (float x : w) ss += double(x) * x;
  return std::sqrt(ss / double(outs));
}

double Rms(const std::vector<float>& v) {
  if (v.empty()) return 0.0;
  double ss = 0.0;
  for (float x : v) ss += double(x) * x;
  return std::sqrt(ss / double(v.size()));
}

void ApplyActivation(int act, Est* e) {
  switch (act) {
    case 1:  // RELU
      e->s /= std::sqrt(2.0);
      e->lo = std::max(e->lo, 0.0);
      break;
    case 2:  // RELU_N1_TO_1
      e->s = std::min(e->s, 1.0);
      e->lo = std::max(e->lo, -1.0);
      e->hi = std::min(e->hi, 1.0);
      break;
    case 3:  // RELU6: the positive half passes (as for RELU), each value at most 6, so the RMS is
             // at most min(S, 6) / sqrt(2). (Not min(S / sqrt(2), 6): that has every value at 6, which
             // makes a hard-sigmoid gate relu6(x + 3) / 6 of a large input always open, RMS 1, where
             // it is open about half the time, RMS 0.71; through MobileNet v3's squeeze-and-excite
             // blocks, whose next convolution's gain restores what the gate took, the difference
             // compounded x1.7 per block and kept 11 of its 127 tensors in float that peak below 20.)
      e->s = std::min(e->s, 6.0) / std::sqrt(2.0);
      e->lo = std::max(e->lo, 0.0);
      e->hi = std::min(e->hi, 6.0);
      break;
    default: break;
  }
}

class Planner {
 public:
  explicit Planner(const Subgraph& sg) : sg_(sg) {
    const size_t n = sg.tensors_size();
    est_.assign(n, Est());
    is_const_.assign(n, false);
    for (size_t t = 0; t < n; ++t) Init(int(t));
  }

  void Run() {
    for (const Node& n : sg_.nodes()) {
      if (n.folded || !n.op || n.outputs.empty()) continue;
      Est e = Node1(n);
      for (int o : n.outputs) {
        if (o < 0 || size_t(o) >= sg_.tensors_size() || is_const_[size_t(o)]) continue;
        Est eo = e;
        const Tensor& t = sg_.tensor(o);
        if (IsQuantizedActivation(t)) {  // the grid bounds what the tensor can hold
          double lo, hi;
          Grid(t, &lo, &hi);
          eo.lo = std::max(eo.lo, lo);
          eo.hi = std::min(eo.hi, hi);
        }
        if (!(eo.s >= 0)) eo.s = kInf;  // NaN from inf * 0 and the like: unknown
        est_[size_t(o)] = eo;
        producer_[o] = &n;
      }
    }
  }

  F32StoragePlan Result() const {
    F32StoragePlan p;
    const size_t n = est_.size();
    p.rms.resize(n);
    p.lo.resize(n);
    p.hi.resize(n);
    for (size_t t = 0; t < n; ++t) {
      p.rms[t] = est_[t].s;
      p.lo[t] = est_[t].lo;
      p.hi[t] = est_[t].hi;
    }
    for (size_t t = 0; t < n; ++t) {
      const Tensor& ten = sg_.tensor(int(t));
      if (!RealType(ten)) continue;
      const double peak = p.Peak(int(t));
      if (!(peak <= kHalfMax)) {
        auto it = producer_.find(int(t));
        char buf[64];
        std::snprintf(buf, sizeof(buf), "%.3g", peak);
        std::string why = is_const_[t] ? "constant" : it != producer_.end() ? std::string(it->second->op->name) + " output"
                                                                             : "input";
        p.keep[int(t)] = why + " '" + ten.name + "': estimated peak |x| " + buf + " > 65504";
      }
    }
    return p;
  }

 private:
  static void Grid(const Tensor& t, double* lo, double* hi) {
    double qmin = -32768, qmax = 32767;
    if (t.type == DType::kInt8) qmin = -128, qmax = 127;
    if (t.type == DType::kUInt8) qmin = 0, qmax = 255;
    const double s = t.quant.scale[0], z = t.quant.zero_point.empty() ? 0.0 : double(t.quant.zero_point[0]);
    *lo = (qmin - z) * s;
    *hi = (qmax - z) * s;
  }

  void Init(int t) {
    const Tensor& ten = sg_.tensor(t);
    Est& e = est_[size_t(t)];
    if (ten.is_const && ten.data) {
      std::vector<float> v;
      if (DequantizeConst(ten, &v).ok() && !v.empty()) {
        is_const_[size_t(t)] = true;
        double lo = kInf, hi = -kInf;
        for (float x : v) {
          lo = std::min(lo, double(x));
          hi = std::max(hi, double(x));
        }
        e.lo = lo;
        e.hi = hi;
        e.s = std::max(std::fabs(lo), std::fabs(hi));
        return;
      }
    }
    if (IsQuantizedActivation(ten) && !ten.quant.scale.empty() && ten.quant.scale[0] > 0) {
      Grid(ten, &e.lo, &e.hi);
      e.s = std::max(std::fabs(e.lo), std::fabs(e.hi)) / kPeakFactor;
    }
  }

  bool Valid(int t) const { return t >= 0 && size_t(t) < sg_.tensors_size(); }
  Est In(const Node& n, int i) const {
    if (i >= int(n.inputs.size()) || !Valid(n.inputs[i])) return Est();
    return est_[size_t(n.inputs[i])];
  }
  bool Const(const Node& n, int i) const { return i < int(n.inputs.size()) && Valid(n.inputs[i]) && is_const_[size_t(n.inputs[i])]; }
  const std::vector<float>& Values(int t) {
    auto it = values_.find(t);
    if (it != values_.end()) return it->second;
    std::vector<float> v;
    if (!DequantizeConst(sg_.tensor(t), &v).ok()) v.clear();
    return values_.emplace(t, std::move(v)).first->second;
  }
  int64_t Elements(int t) const { return Valid(t) ? std::max<int64_t>(1, sg_.tensor(t).num_elements()) : 1; }

  // Weighted ops: data input `x`, weights `w` (outputs along `w_out_axis` of its shape, or the last
  // axis for depthwise), bias `b` (-1: none).
  Est Weighted(const Node& n, int x, int w, int b, bool depthwise, int act) {
    Est e;
    const Est in = In(n, x);
    double g;
    if (Const(n, w)) {
      const int wt = n.inputs[w];
      auto it = gain_.find(wt);
      if (it == gain_.end()) {
        const Tensor& wten = sg_.tensor(wt);
        const std::vector<float>& v = Values(wt);
        int64_t outs = 1;
        if (!wten.shape.empty()) outs = depthwise ? wten.shape.back() : wten.shape[0];
        it = gain_.emplace(wt, RmsGain(v, outs)).first;
      }
      g = it->second;
    } else {
      // Weights computed at run time: S_w per weight times sqrt(fan-in).
      const int64_t fan = Valid(n.inputs.size() > size_t(w) ? n.inputs[w] : -1) ? Elements(n.inputs[w]) : 1;
      g = In(n, w).s * std::sqrt(double(fan));
    }
    double bias = 0.0;
    if (b >= 0 && Const(n, b)) bias = Rms(Values(n.inputs[b]));
    else if (b >= 0 && b < int(n.inputs.size()) && Valid(n.inputs[b])) bias = In(n, b).s;
    e.s = std::sqrt(in.s * g * in.s * g + bias * bias);
    ApplyActivation(act, &e);
    return e;
  }

  // Largest / smallest of a constant input.
  bool ConstRange(const Node& n, int i, double* lo, double* hi) {
    if (!Const(n, i)) return false;
    *lo = est_[size_t(n.inputs[i])].lo;
    *hi = est_[size_t(n.inputs[i])].hi;
    return true;
  }

  // Whether tensor `t` is a reduction of tensor `of` by the op named `op` (SUB(x, REDUCE_MAX(x)),
  // DIV(x, SUM(x))).
  bool ReductionOf(int t, int of, const char* op) const {
    auto it = producer_.find(t);
    if (it == producer_.end()) return false;
    const Node& p = *it->second;
    return std::strcmp(p.op->name, op) == 0 && !p.inputs.empty() && p.inputs[0] == of;
  }

  // Two SUM nodes reducing tensors of one shape over the same axes.
  bool SameReduction(const Node& a, const Node& b) {
    if (a.inputs.size() < 2 || b.inputs.size() < 2 || !Valid(a.inputs[0]) || !Valid(b.inputs[0])) return false;
    if (sg_.tensor(a.inputs[0]).shape != sg_.tensor(b.inputs[0]).shape) return false;
    if (!Valid(a.inputs[1]) || !Valid(b.inputs[1]) || !sg_.tensor(a.inputs[1]).is_const || !sg_.tensor(b.inputs[1]).is_const)
      return false;
    const int r = int(sg_.tensor(a.inputs[0]).shape.size());
    auto axes = [&](const Tensor& t) {
      std::vector<int64_t> v;
      for (int64_t i = 0; i < t.num_elements() && t.data; ++i)
        v.push_back(t.type == DType::kInt64 ? t.as<int64_t>()[i] : t.type == DType::kInt32 ? t.as<int32_t>()[i] : -r - 1);
      return v;
    };
    std::vector<int64_t> x = axes(sg_.tensor(a.inputs[1])), y = axes(sg_.tensor(b.inputs[1]));
    for (auto* v : {&x, &y}) {
      for (int64_t& f : *v)
        if (f < 0) f += r;
      std::sort(v->begin(), v->end());
      v->erase(std::unique(v->begin(), v->end()), v->end());
    }
    return !x.empty() && x == y;
  }

  Est Node1(const Node& n) {
    const std::string op = n.op->name;
    const int nin = int(n.inputs.size());
    if (op == "CONV_2D") return Weighted(n, 0, 1, 2, false, conv::Conv2DOptionsOf(n).act);
    if (op == "DEPTHWISE_CONV_2D") return Weighted(n, 0, 1, 2, true, conv::DepthwiseOptionsOf(n).act);
    if (op == "FULLY_CONNECTED") return Weighted(n, 0, 1, 2, false, conv::FullyConnectedOptionsOf(n).act);
    if (op == "TRANSPOSE_CONV") return Weighted(n, 2, 1, nin > 3 ? 3 : -1, false, conv::TransposeConvOptionsOf(n).act);
    if (op == "Convolution2DTransposeBias") return Weighted(n, 0, 1, 2, false, 0);
    Est a = In(n, 0), b = In(n, 1), e;
    double clo, chi;
    if (op == "ADD" || op == "SUB") {
      const bool sub = op == "SUB";
      // RMS(a + b) <= RMS(a) + RMS(b) (a constant's S is its max |value|). Not the quadrature sum:
      // a residual ADD adds a branch correlated with its shortcut (both rectified features).
      e.s = a.s + b.s;
      e.lo = sub ? a.lo - b.hi : a.lo + b.lo;
      e.hi = sub ? a.hi - b.lo : a.hi + b.hi;
      // x - max(x) <= 0 (the max-subtracted exponent of a softmax).
      if (sub && nin > 1 && (ReductionOf(n.inputs[1], n.inputs[0], "REDUCE_MAX") ||
                             ReductionOf(n.inputs[1], n.inputs[0], "MAX_POOL_2D")))
        e.hi = std::min(e.hi, 0.0);
      ApplyActivation(int(ew::FusedActivationOf(n)), &e);
      return e;
    }
    if (op == "MUL") {
      e.s = a.s * b.s;
      for (int i = 0; i < 2 && nin > 1; ++i) {  // a weighted average's weights times a bounded tensor
        const Est& p = i == 0 ? a : b;
        const Est& w = i == 0 ? b : a;
        const double bw = std::max(std::fabs(w.lo), std::fabs(w.hi));
        if (p.norm && std::isfinite(bw)) {
          e.norm = p.norm;
          e.wsum = p.wsum * bw;
        }
      }
      if (std::isfinite(a.lo) && std::isfinite(a.hi) && std::isfinite(b.lo) && std::isfinite(b.hi)) {
        const double p[4] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
        e.lo = *std::min_element(p, p + 4);
        e.hi = *std::max_element(p, p + 4);
      }
      ApplyActivation(int(ew::FusedActivationOf(n)), &e);
      return e;
    }
    if (op == "DIV") {
      if (ConstRange(n, 1, &clo, &chi)) {
        const double m = (clo <= 0 && chi >= 0) ? 0.0 : std::min(std::fabs(clo), std::fabs(chi));
        e.s = m > 0 ? a.s / m : kInf;
      } else if (nin > 1 && a.lo >= 0 && ReductionOf(n.inputs[1], n.inputs[0], "SUM")) {
        // p = x / sum(x) with x >= 0: p in [0, 1] and sum(p^2) <= 1 over the k summed elements, so
        // RMS(p) <= 1 / sqrt(k).
        const Node& z = *producer_.at(n.inputs[1]);
        const double k = double(Elements(z.inputs[0])) / double(Elements(z.outputs[0]));
        e.s = 1.0 / std::sqrt(std::max(k, 1.0));
        e.lo = 0.0;
        e.hi = 1.0;
        e.norm = &z;
        e.wsum = 1.0;
      } else {
        e.s = a.s;  // division by a run-time normalizer
      }
      ApplyActivation(int(ew::FusedActivationOf(n)), &e);
      return e;
    }
    if (op == "SQUARE") {
      e.s = a.s * a.s;
      e.lo = 0.0;
      return e;
    }
    if (op == "SQUARED_DIFFERENCE") {
      e.s = (a.s + b.s) * (a.s + b.s);
      e.lo = 0.0;
      return e;
    }
    if (op == "EXP") {
      const double peak = std::min(kPeakFactor * a.s, a.hi);
      e.s = std::exp(peak) / kPeakFactor;
      e.lo = 0.0;
      e.hi = std::exp(a.hi);
      return e;
    }
    if (op == "POW") {
      double ex = b.s;
      if (ConstRange(n, 1, &clo, &chi)) ex = std::max(std::fabs(clo), std::fabs(chi));
      e.s = std::pow(std::max(a.s, 1.0), std::max(ex, 1.0));
      return e;
    }
    if (op == "SUM" || op == "REDUCE_PROD") {
      const double k = nin > 0 && !n.outputs.empty() ? double(Elements(n.inputs[0])) / double(Elements(n.outputs[0])) : 1.0;
      if (op == "SUM") {
        e.s = a.s * k;
        e.lo = a.lo >= 0 ? 0.0 : a.lo * k;
        e.hi = a.hi <= 0 ? 0.0 : a.hi * k;
        if (a.norm && SameReduction(n, *a.norm)) {
          e.lo = std::max(e.lo, -a.wsum);
          e.hi = std::min(e.hi, a.wsum);
        }
      } else {
        e.s = std::pow(std::max(a.s, 1.0), k);
      }
      return e;
    }
    if (op == "LOGISTIC") return Est{std::min(a.s, 1.0), 0.0, 1.0};
    if (op == "TANH") return Est{std::min(a.s, 1.0), -1.0, 1.0};
    if (op == "SOFTMAX") return Est{1.0, 0.0, 1.0};
    if (op == "LOG_SOFTMAX") return Est{2.0 * a.s + 1.0, -kInf, 0.0};
    if (op == "RELU" || op == "RELU6" || op == "RELU_N1_TO_1" || op == "RELU_0_TO_1") {
      e = a;
      if (op == "RELU_0_TO_1") {
        e.s = std::min(e.s, 1.0);
        e.lo = std::max(e.lo, 0.0);
        e.hi = std::min(e.hi, 1.0);
      } else {
        ApplyActivation(op == "RELU" ? 1 : op == "RELU6" ? 3 : 2, &e);
      }
      return e;
    }
    if (op == "SQRT") return Est{std::sqrt(a.s), 0.0, a.hi >= 0 ? std::sqrt(a.hi) : kInf};
    if (op == "RSQRT") return Est{std::max(1.0, 1.0 / std::sqrt(a.s)), 0.0, kInf};
    if (op == "LOG") return Est{std::max(1.0, std::log(kPeakFactor * a.s + 1.0)), -kInf, kInf};
    if (op == "ABS") return Est{a.s, 0.0, std::max(std::fabs(a.lo), std::fabs(a.hi))};
    if (op == "NEG") return Est{a.s, -a.hi, -a.lo};
    if (op == "MINIMUM" || op == "MAXIMUM") {
      e.s = std::max(a.s, b.s);
      if (op == "MINIMUM") {
        e.lo = std::min(a.lo, b.lo);
        e.hi = std::min(a.hi, b.hi);
      } else {
        e.lo = std::max(a.lo, b.lo);
        e.hi = std::max(a.hi, b.hi);
      }
      return e;
    }
    // Everything else moves, selects, pools or averages its real-valued inputs (RESHAPE,
    // CONCATENATION, PAD, RESIZE_*, MEAN, MAX_POOL_2D, GATHER, PRELU, HARD_SWISH, ...): the output
    // is as large as the largest of them.
    bool any = false;
    e = Est{0.0, kInf, -kInf};
    for (int i = 0; i < nin; ++i) {
      if (!Valid(n.inputs[i]) || !RealType(sg_.tensor(n.inputs[i]))) continue;
      const Est& x = est_[size_t(n.inputs[i])];
      e.s = std::max(e.s, x.s);
      e.lo = std::min(e.lo, x.lo);
      e.hi = std::max(e.hi, x.hi);
      any = true;
    }
    if (!any) return Est();
    // Rectifier-like activations of input 0 (zero-mean inputs assumed, as for RELU): the positive
    // half passes (at most), the negative half is bounded (HARD_SWISH >= -0.375, ELU >= -1, GELU
    // >= -0.17) or scaled by alpha (PRELU, LEAKY_RELU). Without these the RMS estimate would not
    // shrink where the activations do, and would compound through deep nets.
    if (op == "HARD_SWISH" || op == "ELU" || op == "GELU") {
      const double neg = op == "ELU" ? 1.0 : op == "HARD_SWISH" ? 0.375 : 0.17;
      return Est{std::sqrt(a.s * a.s / 2 + neg * neg), std::max(a.lo, -neg), a.hi};
    }
    if (op == "PRELU" || op == "LEAKY_RELU") {
      double alpha = op == "LEAKY_RELU" ? std::fabs(ew::LeakyAlphaOf(n)) : 1.0;
      if (op == "PRELU" && ConstRange(n, 1, &clo, &chi)) alpha = std::max(std::fabs(clo), std::fabs(chi));
      return Est{a.s * std::sqrt((1.0 + alpha * alpha) / 2.0), -kInf, kInf};
    }
    return e;
  }

  const Subgraph& sg_;
  std::vector<Est> est_;
  std::vector<bool> is_const_;
  std::map<int, const Node*> producer_;
  std::map<int, std::vector<float>> values_;
  std::map<int, double> gain_;
};

}  // namespace

double F32StoragePlan::Peak(int t) const {
  if (t < 0 || size_t(t) >= rms.size()) return 0.0;
  const double bound = std::max(std::fabs(lo[size_t(t)]), std::fabs(hi[size_t(t)]));
  return std::min(kPeakFactor * rms[size_t(t)], bound);
}

F32StoragePlan PlanF32Storage(const Subgraph& sg) {
  Planner p(sg);
  p.Run();
  return p.Result();
}

}  // namespace tflite_gpu::gpu
