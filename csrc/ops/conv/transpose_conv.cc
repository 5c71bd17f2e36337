// TRANSPOSE_CONV (v1-5) and MediaPipe's custom Convolution2DTransposeBias, float32.
//
// TRANSPOSE_CONV inputs: output_shape (int32 [4]), weights OHWI [C_out, KH, KW, C_in], input NHWC,
// optional bias [C_out] (v3+). Options: padding, strides, fused activation (v4+). As TFLite, the
// padding is the one of the forward convolution from the output to the input, and the output
// shape must be consistent with the input (ComputeOutSize(padding, out, k, stride) == in).
// A non-constant output_shape makes the output dynamic (validated at invoke).
//
// Convolution2DTransposeBias inputs: input, weights OHWI, bias; custom_options: three
// little-endian int32 (padding in TfLitePadding numbering 1=SAME 2=VALID, stride_width,
// stride_height). No output_shape input: the output tensor's declared shape is used when it is
// consistent with the input (as the XNNPACK delegate, which runs this op in TFLite, does);
// otherwise it is computed (SAME: in*stride, VALID: (in-1)*stride + k). Same kernels as
// TRANSPOSE_CONV with the bias.
//
// Fast path: GEMM [pixels, C_in] x [C_in, KH*KW*C_out] per block of input rows (weights packed
// once when constant), then a gather-add of the columns into the output, parallel over output
// rows, then bias + activation.
#include <cstring>

#include "ops/conv/conv_common.h"
#include "ops/conv/gemm.h"
#include "ops/conv/quantized.h"

namespace tflite_gpu {
namespace {

struct TcParams {
  int padding = 0;  // 0 SAME, 1 VALID (schema numbering)
  int stride_w = 0, stride_h = 0, act = 0;
  bool custom_ok = true;  // Convolution2DTransposeBias: custom options were well formed
  int custom_padding = 0;
};

struct TcGeom {
  int batch, in_h, in_w, in_c, out_h, out_w, out_c, k_h, k_w, sh, sw, pad_t, pad_l;
  float lo, hi;
};

struct TcState {
  TcGeom g{};
  conv::PackKey key;
  conv::AlignedFloats packed;
  bool packed_valid = false;
  bool dynamic = false;  // output_shape known only at invoke
  int chunk_rows = 1;
  size_t col_off = 0, pack_off = 0, tmp_off = 0, scratch_floats = 0;
  conv::AlignedFloats dyn_scratch;  // scratch of a dynamic-shape node (sized at invoke)
};

constexpr int64_t kColBudgetFloats = 1 << 20;  // columns buffer per chunk of input rows

Status ParseBuiltin(const OptionsView& raw, Node& node) {
  OptionsView o = conv::Opts(raw, conv::kTransposeConvOptions);
  auto p = std::make_shared<TcParams>();
  p->padding = o.Get<int8_t>(0, 0);
  p->stride_w = o.Get<int32_t>(1, 0);
  p->stride_h = o.Get<int32_t>(2, 0);
  p->act = o.Get<int8_t>(3, 0);
  node.params = p;
  return OkStatus();
}

Status ParseCustom(const OptionsView& o, Node& node) {
  auto p = std::make_shared<TcParams>();
  if (o.custom && o.custom_size >= 12) {
    int32_t v[3];
    std::memcpy(v, o.custom, sizeof(v));  // little-endian hosts only (x86-64, arm64)
    p->custom_padding = v[0];
    p->stride_w = v[1];
    p->stride_h = v[2];
    p->padding = v[0] == 1 ? 0 : (v[0] == 2 ? 1 : -1);
  } else {
    p->custom_ok = false;
  }
  node.params = p;
  return OkStatus();
}

// Checks the weights/input/bias and fills everything of g but the output size and padding.
Status CommonGeom(OpContext& ctx, const TcParams& p, const Tensor& w, const Tensor& x, const Tensor* bias, TcGeom* g,
                  bool quantized = false) {
  if (!quantized) {
    TFG_RETURN_IF_ERROR(conv::CheckFloat(ctx, x, "input"));
    TFG_RETURN_IF_ERROR(conv::CheckFloat(ctx, w, "weights"));
  }
  TFG_RETURN_IF_ERROR(conv::CheckRank(ctx, x, 4, "input"));
  TFG_RETURN_IF_ERROR(conv::CheckRank(ctx, w, 4, "weights"));
  if (p.stride_w <= 0 || p.stride_h <= 0)
    return ctx.Error("strides must be positive, got stride_w=" + std::to_string(p.stride_w) +
                     " stride_h=" + std::to_string(p.stride_h));
  if (!ActivationBounds(p.act, &g->lo, &g->hi))
    return ctx.Error("unsupported fused activation " + std::to_string(p.act));
  g->batch = x.shape[0];
  g->in_h = x.shape[1];
  g->in_w = x.shape[2];
  g->in_c = x.shape[3];
  g->out_c = w.shape[0];
  g->k_h = w.shape[1];
  g->k_w = w.shape[2];
  g->sh = p.stride_h;
  g->sw = p.stride_w;
  if (g->k_h <= 0 || g->k_w <= 0) return ctx.Error("weights shape " + conv::Str(w.shape) + " has an empty spatial dimension");
  if (w.shape[3] != g->in_c)
    return ctx.Error("input channels (" + std::to_string(g->in_c) + ") differ from the weights' input channels (shape " +
                     conv::Str(w.shape) + ")");
  TFG_RETURN_IF_ERROR(conv::CheckSize(ctx, int64_t(g->k_h) * g->k_w * g->out_c * std::max(g->in_c, 1), "weights"));
  TFG_RETURN_IF_ERROR(conv::CheckSize(ctx, int64_t(g->k_h) * g->k_w * g->out_c * std::max(g->in_w, 1), "column buffer row"));
  if (bias && !quantized) {
    TFG_RETURN_IF_ERROR(conv::CheckFloat(ctx, *bias, "bias"));
    if (bias->num_elements() != g->out_c)
      return ctx.Error("bias has " + std::to_string(bias->num_elements()) + " elements, expected " + std::to_string(g->out_c));
  }
  return OkStatus();
}

// Empty string when `out` is a valid output shape for g (and sets out size + padding in g).
std::string CheckOutShape(const Dims& out, Padding pad, TcGeom* g) {
  if (out.size() != 4) return "output shape " + conv::Str(out) + " must have 4 dimensions";
  if (out[0] != g->batch)
    return "output batch " + std::to_string(out[0]) + " differs from the input batch " + std::to_string(g->batch);
  if (out[3] != g->out_c)
    return "output channels " + std::to_string(out[3]) + " differ from the weights' output channels " + std::to_string(g->out_c);
  if (out[1] <= 0 || out[2] <= 0) return "output shape " + conv::Str(out) + " has a non-positive spatial dimension";
  const int ch = ConvOutputSize(pad, out[1], g->k_h, g->sh, 1);
  const int cw = ConvOutputSize(pad, out[2], g->k_w, g->sw, 1);
  if (ch != g->in_h || cw != g->in_w)
    return "output shape " + conv::Str(out) + " is inconsistent with the input size " + std::to_string(g->in_h) + "x" +
           std::to_string(g->in_w) + " (it implies " + std::to_string(ch) + "x" + std::to_string(cw) + ")";
  g->out_h = out[1];
  g->out_w = out[2];
  g->pad_t = ConvPadBefore(pad, out[1], g->k_h, g->sh, 1, g->in_h);
  g->pad_l = ConvPadBefore(pad, out[2], g->k_w, g->sw, 1, g->in_w);
  return "";
}

// Packed B for the column GEMM: K = C_in, N = KH*KW*C_out, column (ky*KW + kx)*C_out + oc.
size_t PackedFloats(const TcGeom& g) { return gemm::PackedFloats(g.in_c, g.k_h * g.k_w * g.out_c); }
void PackWeights(const TcGeom& g, const float* w, float* tmp, float* dst) {
  const int K = g.in_c, N = g.k_h * g.k_w * g.out_c, taps = g.k_h * g.k_w;
  for (int oc = 0; oc < g.out_c; ++oc)
    for (int t = 0; t < taps; ++t)
      std::memcpy(tmp + (int64_t(t) * g.out_c + oc) * K, w + (int64_t(oc) * taps + t) * K, sizeof(float) * K);
  gemm::PackB(K, N, tmp, 1, K, nullptr, dst);
}

// Scratch and packing, once the geometry is known (prepare, or eval for a dynamic output).
Status PlanState(OpContext& ctx, TcState* st, const Tensor& w, bool weights_const) {
  const TcGeom& g = st->g;
  const int64_t ncols = int64_t(g.k_h) * g.k_w * g.out_c;
  const int64_t row_floats = std::max<int64_t>(1, int64_t(g.in_w) * ncols);
  st->chunk_rows = int(std::max<int64_t>(1, std::min<int64_t>(std::max(g.in_h, 1), kColBudgetFloats / row_floats)));
  conv::ScratchLayout sl;
  st->col_off = sl.Add(size_t(st->chunk_rows) * row_floats);
  if (weights_const) {
    conv::PackKey key{w.data, nullptr, w.shape, 0};
    if (!st->packed_valid || !(st->key == key)) {
      std::vector<float> tmp(size_t(g.in_c) * ncols + 1);
      float* dst = st->packed.Resize(PackedFloats(g));
      if (!dst) return conv::EvalError(ctx, "packed weights cannot be allocated");
      PackWeights(g, w.as<float>(), tmp.data(), dst);
      st->key = key;
      st->packed_valid = true;
    }
  } else {
    st->packed_valid = false;
    st->pack_off = sl.Add(PackedFloats(g));
    st->tmp_off = sl.Add(size_t(g.in_c) * ncols);
  }
  st->scratch_floats = sl.floats;
  if (!st->dynamic) ctx.RequestScratch(sl.bytes());
  return OkStatus();
}

Status RunFast(OpContext& ctx, TcState* st, const float* x, const float* w, const float* bias, float* out) {
  const TcGeom& g = st->g;
  float* scratch = st->dynamic ? st->dyn_scratch.Resize(st->scratch_floats + 16) : static_cast<float*>(ctx.scratch());
  if (!scratch) return conv::EvalError(ctx, "scratch memory cannot be allocated");
  const int K = g.in_c, taps = g.k_h * g.k_w;
  const int N = taps * g.out_c;
  const int64_t out_pixels = int64_t(g.batch) * g.out_h * g.out_w;
  std::memset(out, 0, sizeof(float) * out_pixels * g.out_c);
  const float* packed = st->packed.data();
  if (!st->packed_valid) {
    PackWeights(g, w, scratch + st->tmp_off, scratch + st->pack_off);
    packed = scratch + st->pack_off;
  }
  float* col = scratch + st->col_off;
  const float inf = std::numeric_limits<float>::infinity();
  const int oc_n = g.out_c;
  for (int b = 0; b < g.batch; ++b) {
    for (int y0 = 0; y0 < g.in_h; y0 += st->chunk_rows) {
      const int rows = std::min(st->chunk_rows, g.in_h - y0);
      const int64_t M = int64_t(rows) * g.in_w;
      gemm::Gemm(M, N, K, x + ((int64_t(b) * g.in_h + y0) * g.in_w) * K, K, packed, col, N, -inf, inf, ctx.pool());
      const int oy_lo = std::max(0, y0 * g.sh - g.pad_t);
      const int oy_hi = std::min(g.out_h, (y0 + rows - 1) * g.sh - g.pad_t + g.k_h);
      if (oy_hi <= oy_lo) continue;
      ParallelFor(
          ctx.pool(), oy_hi - oy_lo,
          [&](int64_t r0, int64_t r1) {
            for (int oy = oy_lo + int(r0); oy < oy_lo + int(r1); ++oy) {
              float* orow = out + (int64_t(b) * g.out_h + oy) * g.out_w * oc_n;
              for (int ky = 0; ky < g.k_h; ++ky) {
                const int t = oy + g.pad_t - ky;
                if (t < 0 || t % g.sh != 0) continue;
                const int iy = t / g.sh;
                if (iy < y0 || iy >= y0 + rows) continue;
                const float* crow = col + int64_t(iy - y0) * g.in_w * N;
                for (int ix = 0; ix < g.in_w; ++ix) {
                  const float* cp = crow + int64_t(ix) * N + int64_t(ky) * g.k_w * oc_n;
                  for (int kx = 0; kx < g.k_w; ++kx) {
                    const int ox = ix * g.sw - g.pad_l + kx;
                    if (ox < 0 || ox >= g.out_w) continue;
                    float* o = orow + int64_t(ox) * oc_n;
                    const float* c = cp + int64_t(kx) * oc_n;
                    for (int oc = 0; oc < oc_n; ++oc) o[oc] += c[oc];
                  }
                }
              }
            }
          },
          1);
    }
  }
  const bool clamp = g.lo > -inf || g.hi < inf;
  if (bias || clamp) {
    ParallelFor(
        ctx.pool(), out_pixels,
        [&](int64_t p0, int64_t p1) {
          for (int64_t px = p0; px < p1; ++px) {
            float* o = out + px * oc_n;
            if (bias)
              for (int oc = 0; oc < oc_n; ++oc) o[oc] += bias[oc];
            if (clamp)
              for (int oc = 0; oc < oc_n; ++oc) o[oc] = conv::Clamp(o[oc], g.lo, g.hi);
          }
        },
        256);
  }
  return OkStatus();
}

// TFLite reference_ops::TransposeConv (scatter), then bias and activation.
void RunRef(const TcGeom& g, const float* x, const float* w, const float* bias, float* out) {
  const int64_t out_size = int64_t(g.batch) * g.out_h * g.out_w * g.out_c;
  for (int64_t i = 0; i < out_size; ++i) out[i] = 0.f;
  for (int b = 0; b < g.batch; ++b)
    for (int iy = 0; iy < g.in_h; ++iy)
      for (int ix = 0; ix < g.in_w; ++ix)
        for (int ic = 0; ic < g.in_c; ++ic) {
          const int ox0 = ix * g.sw - g.pad_l, oy0 = iy * g.sh - g.pad_t;
          const float iv = x[((int64_t(b) * g.in_h + iy) * g.in_w + ix) * g.in_c + ic];
          for (int ky = 0; ky < g.k_h; ++ky)
            for (int kx = 0; kx < g.k_w; ++kx)
              for (int oc = 0; oc < g.out_c; ++oc) {
                const int ox = ox0 + kx, oy = oy0 + ky;
                if (ox < 0 || ox >= g.out_w || oy < 0 || oy >= g.out_h) continue;
                out[((int64_t(b) * g.out_h + oy) * g.out_w + ox) * g.out_c + oc] +=
                    iv * w[((int64_t(oc) * g.k_h + ky) * g.k_w + kx) * g.in_c + ic];
              }
        }
  for (int64_t px = 0; px < int64_t(g.batch) * g.out_h * g.out_w; ++px)
    for (int oc = 0; oc < g.out_c; ++oc) {
      float& o = out[px * g.out_c + oc];
      o = conv::Clamp(o + (bias ? bias[oc] : 0.f), g.lo, g.hi);
    }
}

// ---- TRANSPOSE_CONV ----

Status PrepareBuiltin(OpContext& ctx) {
  const TcParams& p = ctx.node().P<TcParams>();
  TFG_RETURN_IF_ERROR(ctx.CheckArity(3, 4, 1, 1));
  const Tensor& os = ctx.input(0);
  const Tensor& w = ctx.input(1);
  const Tensor& x = ctx.input(2);
  const Tensor* bias = ctx.optional_input(3);
  if (os.type != DType::kInt32) return ctx.Error(std::string("output_shape has type ") + DTypeName(os.type) + ", expected INT32");
  if (os.shape.size() != 1 || os.shape[0] != 4)
    return ctx.Error("output_shape must be a vector of 4 values, got shape " + conv::Str(os.shape));
  if (p.padding != 0 && p.padding != 1) return ctx.Error("unknown padding " + std::to_string(p.padding));
  if (x.type != DType::kFloat32 || w.type != DType::kFloat32) {
    // Integer kernels (quantized.cc): the output shape must be known at prepare.
    if (!ctx.IsConstantOrPersistent(os))
      return ctx.Error("a quantized TRANSPOSE_CONV needs a constant output_shape");
    TcGeom g{};
    TFG_RETURN_IF_ERROR(CommonGeom(ctx, p, w, x, bias, &g, /*quantized=*/true));
    const int32_t* v = os.as<int32_t>();
    std::string err = CheckOutShape({v[0], v[1], v[2], v[3]}, p.padding == 0 ? Padding::kSame : Padding::kValid, &g);
    if (!err.empty()) return ctx.Error(err);
    TFG_RETURN_IF_ERROR(ctx.SetOutputShape(0, {v[0], v[1], v[2], v[3]}));
    qconv::TConvGeom qg{g.batch, g.in_h, g.in_w, g.in_c, g.out_h, g.out_w, g.out_c, g.k_h, g.k_w, g.sh, g.sw, g.pad_t, g.pad_l};
    return qconv::PrepareTransposeConv(ctx, qg, p.act);
  }
  if (!ctx.node().user_data) ctx.node().user_data = std::make_shared<TcState>();
  TcState* st = ctx.node().U<TcState>();
  TFG_RETURN_IF_ERROR(CommonGeom(ctx, p, w, x, bias, &st->g));
  TFG_RETURN_IF_ERROR(conv::CheckOutputFloat(ctx));
  const bool wconst = ctx.IsConstantOrPersistent(w);
  if (ctx.IsConstantOrPersistent(os)) {
    const int32_t* v = os.as<int32_t>();
    std::string err = CheckOutShape({v[0], v[1], v[2], v[3]}, p.padding == 0 ? Padding::kSame : Padding::kValid, &st->g);
    if (!err.empty()) return ctx.Error(err);
    st->dynamic = false;
    TFG_RETURN_IF_ERROR(ctx.SetOutputShape(0, {v[0], v[1], v[2], v[3]}));
    TFG_RETURN_IF_ERROR(PlanState(ctx, st, w, wconst));
  } else {
    st->dynamic = true;
    ctx.SetOutputDynamic(0);
  }
  return OkStatus();
}

// Resolves a dynamic output shape at invoke.
Status ResolveDynamic(OpContext& ctx, TcState* st) {
  if (!st->dynamic) return OkStatus();
  const TcParams& p = ctx.node().P<TcParams>();
  const int32_t* v = ctx.input(0).as<int32_t>();
  std::string err = CheckOutShape({v[0], v[1], v[2], v[3]}, p.padding == 0 ? Padding::kSame : Padding::kValid, &st->g);
  if (!err.empty()) return conv::EvalError(ctx, err);
  TFG_RETURN_IF_ERROR(ctx.SetOutputShape(0, {v[0], v[1], v[2], v[3]}));
  TFG_RETURN_IF_ERROR(PlanState(ctx, st, ctx.input(1), ctx.IsConstantOrPersistent(ctx.input(1))));
  return OkStatus();
}

Status EvalBuiltin(OpContext& ctx) {
  if (ctx.input(2).type != DType::kFloat32 || ctx.input(1).type != DType::kFloat32) return qconv::EvalTransposeConv(ctx, false);
  TcState* st = ctx.node().U<TcState>();
  TFG_RETURN_IF_ERROR(ResolveDynamic(ctx, st));
  const Tensor* bias = ctx.optional_input(3);
  return RunFast(ctx, st, ctx.input(2).as<float>(), ctx.input(1).as<float>(), bias ? bias->as<float>() : nullptr,
                 ctx.output(0).as<float>());
}

Status EvalRefBuiltin(OpContext& ctx) {
  if (ctx.input(2).type != DType::kFloat32 || ctx.input(1).type != DType::kFloat32) return qconv::EvalTransposeConv(ctx, true);
  TcState* st = ctx.node().U<TcState>();
  TFG_RETURN_IF_ERROR(ResolveDynamic(ctx, st));
  const Tensor* bias = ctx.optional_input(3);
  RunRef(st->g, ctx.input(2).as<float>(), ctx.input(1).as<float>(), bias ? bias->as<float>() : nullptr,
         ctx.output(0).as<float>());
  return OkStatus();
}

// ---- Convolution2DTransposeBias ----

Status PrepareCustom(OpContext& ctx) {
  const TcParams& p = ctx.node().P<TcParams>();
  TFG_RETURN_IF_ERROR(ctx.CheckArity(3, 3, 1, 1));
  if (!p.custom_ok)
    return ctx.Error("custom_options must hold 3 int32 (padding, stride_width, stride_height)");
  if (p.padding < 0)
    return ctx.Error("unknown padding " + std::to_string(p.custom_padding) + " (expected 1 = SAME or 2 = VALID)");
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  const Tensor& bias = ctx.input(2);
  if (!ctx.node().user_data) ctx.node().user_data = std::make_shared<TcState>();
  TcState* st = ctx.node().U<TcState>();
  TFG_RETURN_IF_ERROR(CommonGeom(ctx, p, w, x, &bias, &st->g));
  TFG_RETURN_IF_ERROR(conv::CheckRank(ctx, bias, 1, "bias"));
  const Padding pad = p.padding == 0 ? Padding::kSame : Padding::kValid;
  TcGeom& g = st->g;
  Dims declared = ctx.output(0).shape;
  if (!CheckOutShape(declared, pad, &g).empty()) {
    const int oh = pad == Padding::kSame ? g.in_h * g.sh : (g.in_h - 1) * g.sh + g.k_h;
    const int ow = pad == Padding::kSame ? g.in_w * g.sw : (g.in_w - 1) * g.sw + g.k_w;
    std::string err = CheckOutShape({g.batch, oh, ow, g.out_c}, pad, &g);
    if (!err.empty()) return ctx.Error(err);
  }
  st->dynamic = false;
  TFG_RETURN_IF_ERROR(conv::CheckOutputFloat(ctx));
  TFG_RETURN_IF_ERROR(ctx.SetOutputShape(0, {g.batch, g.out_h, g.out_w, g.out_c}));
  TFG_RETURN_IF_ERROR(PlanState(ctx, st, w, ctx.IsConstantOrPersistent(w)));
  return OkStatus();
}

Status EvalCustom(OpContext& ctx) {
  TcState* st = ctx.node().U<TcState>();
  return RunFast(ctx, st, ctx.input(0).as<float>(), ctx.input(1).as<float>(), ctx.input(2).as<float>(),
                 ctx.output(0).as<float>());
}

Status EvalRefCustom(OpContext& ctx) {
  TcState* st = ctx.node().U<TcState>();
  RunRef(st->g, ctx.input(0).as<float>(), ctx.input(1).as<float>(), ctx.input(2).as<float>(), ctx.output(0).as<float>());
  return OkStatus();
}

}  // namespace

const OpImpl kOp_TRANSPOSE_CONV = {ParseBuiltin, PrepareBuiltin, EvalBuiltin, EvalRefBuiltin,
                                   /*fold_constants*/ false};
const OpImpl kOp_Convolution2DTransposeBias = {ParseCustom, PrepareCustom, EvalCustom, EvalRefCustom,
                                               /*fold_constants*/ false};

conv::GpuConvOptions conv::TransposeConvOptionsOf(const Node& n) { const TcParams& p = n.P<TcParams>(); conv::GpuConvOptions o; o.padding = p.padding; o.stride_w = p.stride_w; o.stride_h = p.stride_h; o.act = p.act; o.custom_ok = p.custom_ok; return o; }

}  // namespace tflite_gpu
