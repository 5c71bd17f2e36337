// FULLY_CONNECTED (v1-12), float32: weights [units, input_size] (weights_format DEFAULT only),
// optional bias, input of any rank flattened to [batch, input_size] as TFLite does;
// keep_num_dims keeps the input's leading dimensions. Fused activation NONE/RELU/RELU_N1_TO_1/
// RELU6 (TFLite rejects the others for this op).
//
// Fast path: constant weights (and bias) are packed once for the GEMM; a non-constant weight
// matrix is packed into scratch at every invoke.
#include "ops/conv/conv_common.h"
#include "ops/conv/gemm.h"
#include "ops/conv/quantized.h"

namespace tflite_gpu {
namespace {

struct FcParams {
  int act = 0, weights_format = 0;
  bool keep_num_dims = false;
  bool asymmetric_quantize_inputs = false;  // hybrid kernels
};

struct FcState {
  int64_t batch = 0;
  int units = 0, input_size = 0;
  float lo = 0, hi = 0;
  conv::PackKey key;
  conv::AlignedFloats packed;
  bool packed_valid = false;
};

Status Parse(const OptionsView& raw, Node& node) {
  OptionsView o = conv::Opts(raw, conv::kFullyConnectedOptions);
  auto p = std::make_shared<FcParams>();
  p->act = o.Get<int8_t>(0, 0);
  p->weights_format = o.Get<int8_t>(1, 0);
  p->keep_num_dims = o.GetBool(2, false);
  p->asymmetric_quantize_inputs = o.GetBool(3, false);
  node.params = p;
  return OkStatus();
}

Status Prepare(OpContext& ctx) {
  const FcParams& p = ctx.node().P<FcParams>();
  if (p.weights_format != 0)
    return ctx.Error(p.weights_format == 1
                         ? std::string("weights_format SHUFFLED4x16INT8 (shuffled int8 weights) is not supported; "
                                       "only DEFAULT float32 weights are")
                         : "unknown weights_format " + std::to_string(p.weights_format));
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 3, 1, 1));
  if (qconv::IsQuantized(ctx)) return qconv::PrepareFullyConnected(ctx, p.act, p.keep_num_dims, p.asymmetric_quantize_inputs);
  const Tensor& in = ctx.input(0);
  const Tensor& w = ctx.input(1);
  TFG_RETURN_IF_ERROR(conv::CheckFloat(ctx, in, "input"));
  TFG_RETURN_IF_ERROR(conv::CheckFloat(ctx, w, "weights"));
  TFG_RETURN_IF_ERROR(conv::CheckRank(ctx, w, 2, "weights"));
  if (!ctx.node().user_data) ctx.node().user_data = std::make_shared<FcState>();
  FcState* s = ctx.node().U<FcState>();
  if (p.act < 0 || p.act > 3)
    return ctx.Error(std::string("unsupported fused activation ") + ActivationName(p.act) +
                     " (FULLY_CONNECTED takes NONE, RELU, RELU_N1_TO_1 or RELU6)");
  ActivationBounds(p.act, &s->lo, &s->hi);
  s->units = w.shape[0];
  s->input_size = w.shape[1];
  if (s->input_size <= 0) return ctx.Error("weights shape " + conv::Str(w.shape) + " has no input columns");
  if (ctx.has_input(2)) {
    const Tensor& b = ctx.input(2);
    TFG_RETURN_IF_ERROR(conv::CheckFloat(ctx, b, "bias"));
    if (b.num_elements() != s->units)
      return ctx.Error("bias has " + std::to_string(b.num_elements()) + " elements, expected " + std::to_string(s->units));
  }
  const int64_t total = in.num_elements();
  if (total % s->input_size != 0)
    return ctx.Error("input shape " + conv::Str(in.shape) + " (" + std::to_string(total) +
                     " elements) is not a multiple of the weights' input size " + std::to_string(s->input_size));
  s->batch = total / s->input_size;
  Dims out_shape;
  if (p.keep_num_dims) {
    if (in.shape.empty() || in.shape.back() != s->input_size)
      return ctx.Error("keep_num_dims: the input's last dimension (shape " + conv::Str(in.shape) +
                       ") must equal the weights' input size " + std::to_string(s->input_size));
    out_shape = in.shape;
    out_shape.back() = s->units;
  } else {
    if (s->batch > std::numeric_limits<int32_t>::max()) return ctx.Error("input too large");
    out_shape = {int32_t(s->batch), s->units};
  }
  TFG_RETURN_IF_ERROR(conv::CheckOutputFloat(ctx));
  TFG_RETURN_IF_ERROR(ctx.SetOutputShape(0, out_shape));
  const bool constant = ctx.IsConstantOrPersistent(w) && (!ctx.has_input(2) || ctx.IsConstantOrPersistent(ctx.input(2)));
  if (constant) {
    const Tensor* b = ctx.optional_input(2);
    conv::PackKey key{w.data, b ? b->data : nullptr, w.shape, 0};
    if (!s->packed_valid || !(s->key == key)) {
      float* dst = s->packed.Resize(gemm::PackedFloats(s->input_size, s->units));
      if (!dst) return ctx.Error("packed weights cannot be allocated");
      gemm::PackB(s->input_size, s->units, w.as<float>(), 1, s->input_size, b ? b->as<float>() : nullptr, dst);
      s->key = key;
      s->packed_valid = true;
    }
  } else {
    s->packed_valid = false;
    ctx.RequestScratch(gemm::PackedFloats(s->input_size, s->units) * sizeof(float));
  }
  return OkStatus();
}

Status Eval(OpContext& ctx) {
  if (qconv::IsQuantized(ctx)) return qconv::EvalFullyConnected(ctx, false);
  FcState* s = ctx.node().U<FcState>();
  if (s->batch == 0 || s->units == 0) return OkStatus();
  const float* packed = s->packed.data();
  if (!s->packed_valid) {
    const Tensor* b = ctx.optional_input(2);
    float* dst = static_cast<float*>(ctx.scratch());
    gemm::PackB(s->input_size, s->units, ctx.input(1).as<float>(), 1, s->input_size, b ? b->as<float>() : nullptr, dst);
    packed = dst;
  }
  gemm::Gemm(s->batch, s->units, s->input_size, ctx.input(0).as<float>(), s->input_size, packed,
             ctx.output(0).as<float>(), s->units, s->lo, s->hi, ctx.pool());
  return OkStatus();
}

// Plain reference kernel (TFLite reference_ops::FullyConnected).
Status EvalRef(OpContext& ctx) {
  if (qconv::IsQuantized(ctx)) return qconv::EvalFullyConnected(ctx, true);
  const FcState* s = ctx.node().U<FcState>();
  const float* in = ctx.input(0).as<float>();
  const float* w = ctx.input(1).as<float>();
  const Tensor* bt = ctx.optional_input(2);
  const float* bias = bt ? bt->as<float>() : nullptr;
  float* out = ctx.output(0).as<float>();
  for (int64_t b = 0; b < s->batch; ++b)
    for (int u = 0; u < s->units; ++u) {
      float total = 0.f;
      for (int k = 0; k < s->input_size; ++k) total += in[b * s->input_size + k] * w[int64_t(u) * s->input_size + k];
      if (bias) total += bias[u];
      out[b * s->units + u] = conv::Clamp(total, s->lo, s->hi);
    }
  return OkStatus();
}

}  // namespace

const OpImpl kOp_FULLY_CONNECTED = {Parse, Prepare, Eval, EvalRef, /*fold_constants*/ false};

conv::GpuConvOptions conv::FullyConnectedOptionsOf(const Node& n) { const FcParams& p = n.P<FcParams>(); conv::GpuConvOptions o; o.act = p.act; o.weights_format = p.weights_format; o.keep_num_dims = p.keep_num_dims; return o; }

}  // namespace tflite_gpu
