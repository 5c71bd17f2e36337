// CONV_2D (v1-8), float32: NHWC input, OHWI filter, optional bias, SAME/VALID padding, strides,
// dilation, fused activation, grouped convolution (input channels = groups * filter channels).
//
// Fast path: the filter (and bias) is packed once per group for the GEMM (gemm.h). A 1x1,
// stride-1 convolution is a GEMM straight over the NHWC input; any other is an implicit GEMM
// (gemm::Conv) reading the input in place, skipping padding taps. Non-constant filters are
// packed into scratch at every invoke.
//
// Fusion (node.fuse, set by Subgraph::FuseCpuNodes): the conv writes
// prelu(clamp_add(clamp_conv(conv + bias) + residual)) into the fused chain's output tensor, the
// residual and PRELU applied in the GEMM micro-kernel's output stage (gemm::Residual). Its own
// output tensor is not written.
#include <cstring>

#include "ops/conv/conv_common.h"
#include "ops/conv/gemm.h"
#include "ops/conv/quantized.h"
#include "runtime/subgraph.h"

namespace tflite_gpu {
namespace {

using ConvParams = conv::WindowParams;

struct ConvState {
  conv::PackKey key;
  conv::AlignedFloats packed;  // groups consecutive packed matrices
  size_t group_floats = 0;
  bool packed_valid = false;
  conv::ConvGeometry g;
  size_t scratch_pack_off = 0;
  bool direct = false;  // 1x1 stride 1 without padding: A is the input itself
};

Status Parse(const OptionsView& raw, Node& node) {
  OptionsView o = conv::Opts(raw, conv::kConv2DOptions);
  auto p = std::make_shared<ConvParams>();
  conv::ReadWindow(o, /*act_field=*/3, /*dil_w_field=*/4, p.get());
  node.params = p;
  return OkStatus();
}

Status ComputeGeom(OpContext& ctx, conv::ConvGeometry* g) {
  const ConvParams& p = ctx.node().P<ConvParams>();
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 3, 1, 1));
  const Tensor& in = ctx.input(0);
  const Tensor& f = ctx.input(1);
  TFG_RETURN_IF_ERROR(conv::CheckFloat(ctx, in, "input"));
  TFG_RETURN_IF_ERROR(conv::CheckFloat(ctx, f, "filter"));
  Status gs = conv::Conv2DGeometry(p, in.shape, f.shape, g);
  if (!gs.ok()) return ctx.Error(gs.message());
  TFG_RETURN_IF_ERROR(conv::CheckBias(ctx, g->out_c));
  TFG_RETURN_IF_ERROR(conv::CheckOutputFloat(ctx));
  return ctx.SetOutputShape(0, {g->batch, g->out_h, g->out_w, g->out_c});
}

bool WeightsConstant(OpContext& ctx) {
  return ctx.IsConstantOrPersistent(ctx.input(1)) && (!ctx.has_input(2) || ctx.IsConstantOrPersistent(ctx.input(2)));
}

// Packs every group's filter slice (K = k_h*k_w*f_c, N = out_c/groups) and bias.
void PackFilter(const conv::ConvGeometry& g, const float* f, const float* bias, float* dst, size_t group_floats) {
  const int K = g.k_h * g.k_w * g.f_c, N = g.out_c / g.groups;
  for (int gi = 0; gi < g.groups; ++gi)
    gemm::PackB(K, N, f + int64_t(gi) * N * K, 1, K, bias ? bias + gi * N : nullptr, dst + gi * group_floats);
}

Status Prepare(OpContext& ctx) {
  if (ctx.num_inputs() >= 2 && qconv::IsQuantized(ctx)) return qconv::PrepareConv2D(ctx, ctx.node().P<ConvParams>());
  conv::ConvGeometry g;
  TFG_RETURN_IF_ERROR(ComputeGeom(ctx, &g));
  Node& node = ctx.node();
  if (!node.user_data) node.user_data = std::make_shared<ConvState>();
  ConvState* st = node.U<ConvState>();
  st->g = g;
  const int K = g.k_h * g.k_w * g.f_c, N = g.out_c / g.groups;
  st->group_floats = gemm::PackedFloats(K, N);
  st->direct = g.k_h == 1 && g.k_w == 1 && g.stride_h == 1 && g.stride_w == 1 && g.pad_t == 0 && g.pad_l == 0;
  conv::ScratchLayout sl;
  if (WeightsConstant(ctx)) {
    const Tensor& f = ctx.input(1);
    const Tensor* b = ctx.optional_input(2);
    conv::PackKey key{f.data, b ? b->data : nullptr, f.shape, g.in_c};
    if (!st->packed_valid || !(st->key == key)) {
      float* dst = st->packed.Resize(st->group_floats * g.groups);
      if (!dst) return ctx.Error("packed filter cannot be allocated");
      PackFilter(g, f.as<float>(), b ? b->as<float>() : nullptr, dst, st->group_floats);
      st->key = key;
      st->packed_valid = true;
    }
  } else {
    st->packed_valid = false;
    st->scratch_pack_off = sl.Add(st->group_floats * g.groups);
  }
  ctx.RequestScratch(sl.bytes());
  return OkStatus();
}

Status Eval(OpContext& ctx) {
  if (qconv::IsQuantized(ctx)) return qconv::EvalConv2D(ctx, false);
  ConvState* st = ctx.node().U<ConvState>();
  const conv::ConvGeometry& g = st->g;
  const float* in = ctx.input(0).as<float>();
  const Node::CpuFusion& fz = ctx.node().fuse;
  float* out = fz.run_at >= 0 ? ctx.subgraph().tensor(fz.out).as<float>() : ctx.output(0).as<float>();
  const gemm::Residual res{fz.add_node >= 0 ? ctx.subgraph().tensor(fz.residual).as<float>() : nullptr, fz.lo, fz.hi,
                           fz.prelu_node >= 0 ? ctx.subgraph().tensor(fz.alpha).as<float>() : nullptr};
  float* scratch = static_cast<float*>(ctx.scratch());
  const int K = g.k_h * g.k_w * g.f_c, N = g.out_c / g.groups;
  const int64_t M = int64_t(g.batch) * g.out_h * g.out_w;
  if (M == 0 || N == 0) return OkStatus();
  const float* packed = st->packed.data();
  if (!st->packed_valid) {
    const Tensor* b = ctx.optional_input(2);
    float* dst = scratch + st->scratch_pack_off;
    PackFilter(g, ctx.input(1).as<float>(), b ? b->as<float>() : nullptr, dst, st->group_floats);
    packed = dst;
  }
  for (int gi = 0; gi < g.groups; ++gi) {
    const float* pg = packed + gi * st->group_floats;
    float* og = out + gi * N;
    // A channel-padded residual (fz.res_c channels, row stride res_c) only with one group.
    const gemm::Residual rg{res.r ? res.r + (fz.res_c > 0 ? 0 : gi * N) : nullptr, res.lo, res.hi,
                            res.alpha ? res.alpha + gi * N : nullptr, fz.res_c > 0 ? fz.res_c : g.out_c,
                            fz.res_c > 0 ? fz.res_c : N};
    const gemm::Residual* rp = (res.r || res.alpha) ? &rg : nullptr;
    if (st->direct) {
      gemm::Gemm(M, N, K, in + gi * g.f_c, g.in_c, pg, og, g.out_c, g.lo, g.hi, ctx.pool(), rp);
      continue;
    }
    gemm::ConvShape cs;
    cs.batch = g.batch;
    cs.in_h = g.in_h;
    cs.in_w = g.in_w;
    cs.in_c = g.in_c;
    cs.c_off = gi * g.f_c;
    cs.fc = g.f_c;
    cs.out_h = g.out_h;
    cs.out_w = g.out_w;
    cs.k_h = g.k_h;
    cs.k_w = g.k_w;
    cs.sh = g.stride_h;
    cs.sw = g.stride_w;
    cs.dh = g.dil_h;
    cs.dw = g.dil_w;
    cs.pad_t = g.pad_t;
    cs.pad_l = g.pad_l;
    gemm::Conv(cs, in, N, pg, og, g.out_c, g.lo, g.hi, ctx.pool(), rp);
  }
  return OkStatus();
}

// Plain reference kernel (TFLite reference_ops::Conv with groups).
Status EvalRef(OpContext& ctx) {
  if (qconv::IsQuantized(ctx)) return qconv::EvalConv2D(ctx, true);
  const ConvState* st = ctx.node().U<ConvState>();
  const conv::ConvGeometry& g = st->g;
  const float* in = ctx.input(0).as<float>();
  const float* f = ctx.input(1).as<float>();
  const Tensor* bt = ctx.optional_input(2);
  const float* bias = bt ? bt->as<float>() : nullptr;
  const Node::CpuFusion& fz = ctx.node().fuse;  // fused only off the reference path; kept exact here too
  float* out = fz.run_at >= 0 ? ctx.subgraph().tensor(fz.out).as<float>() : ctx.output(0).as<float>();
  const float* res = fz.add_node >= 0 ? ctx.subgraph().tensor(fz.residual).as<float>() : nullptr;
  const float* alpha = fz.prelu_node >= 0 ? ctx.subgraph().tensor(fz.alpha).as<float>() : nullptr;
  const int per_group = g.out_c / g.groups;
  for (int b = 0; b < g.batch; ++b)
    for (int oy = 0; oy < g.out_h; ++oy)
      for (int ox = 0; ox < g.out_w; ++ox)
        for (int oc = 0; oc < g.out_c; ++oc) {
          const int grp = oc / per_group;
          float total = 0.f;
          for (int ky = 0; ky < g.k_h; ++ky) {
            const int iy = oy * g.stride_h - g.pad_t + ky * g.dil_h;
            if (iy < 0 || iy >= g.in_h) continue;
            for (int kx = 0; kx < g.k_w; ++kx) {
              const int ix = ox * g.stride_w - g.pad_l + kx * g.dil_w;
              if (ix < 0 || ix >= g.in_w) continue;
              for (int ic = 0; ic < g.f_c; ++ic) {
                float iv = in[((int64_t(b) * g.in_h + iy) * g.in_w + ix) * g.in_c + grp * g.f_c + ic];
                float fv = f[((int64_t(oc) * g.k_h + ky) * g.k_w + kx) * g.f_c + ic];
                total += iv * fv;
              }
            }
          }
          if (bias) total += bias[oc];
          const int64_t o = ((int64_t(b) * g.out_h + oy) * g.out_w + ox) * g.out_c + oc;
          float v = conv::Clamp(total, g.lo, g.hi);
          if (res) {
            const int rcn = fz.res_c > 0 ? fz.res_c : g.out_c;  // a channel-padded residual: zeros past rcn
            const float rv = oc < rcn ? res[(o / g.out_c) * rcn + oc] : 0.f;
            v = conv::Clamp(v + rv, fz.lo, fz.hi);
          }
          if (alpha && !(v >= 0.f)) v = v * alpha[oc];
          out[o] = v;
        }
  return OkStatus();
}

}  // namespace

const OpImpl kOp_CONV_2D = {Parse, Prepare, Eval, EvalRef, /*fold_constants*/ false};

conv::GpuConvOptions conv::Conv2DOptionsOf(const Node& n) { return conv::GpuOptionsOf(n.P<ConvParams>()); }

// Rank-4 input and OHWI filter with f_c channels per group (in_c = groups * f_c).
Status conv::Conv2DGeometry(const WindowParams& p, const Dims& in, const Dims& f, ConvGeometry* g) {
  if (in.size() != 4) return InvalidArgument("input must have rank 4, got shape " + Str(in));
  if (f.size() != 4) return InvalidArgument("filter must have rank 4, got shape " + Str(f));
  std::string we = WindowError(p.padding, p.stride_w, p.stride_h, p.dil_w, p.dil_h);
  if (!we.empty()) return InvalidArgument(we);
  if (!ActivationBounds(p.act, &g->lo, &g->hi)) return InvalidArgument("unsupported fused activation " + std::to_string(p.act));
  g->act = p.act;
  g->stride_h = p.stride_h;
  g->stride_w = p.stride_w;
  g->dil_h = p.dil_h;
  g->dil_w = p.dil_w;
  g->batch = in[0];
  g->in_h = in[1];
  g->in_w = in[2];
  g->in_c = in[3];
  g->out_c = f[0];
  g->k_h = f[1];
  g->k_w = f[2];
  g->f_c = f[3];
  g->mult = 1;
  if (g->k_h <= 0 || g->k_w <= 0 || g->f_c <= 0)
    return InvalidArgument("filter shape " + Str(f) + " has an empty spatial or channel dimension");
  if (g->in_c <= 0 || g->in_c % g->f_c != 0)
    return InvalidArgument("input channels (" + std::to_string(g->in_c) +
                           ") must be a positive multiple of the filter's input channels (" + std::to_string(g->f_c) + ")");
  const int64_t fsize = int64_t(g->k_h) * g->k_w * g->f_c;
  if (fsize > int64_t(std::numeric_limits<int32_t>::max()))
    return InvalidArgument("filter size is too large (" + std::to_string(fsize) + ")");
  g->groups = g->in_c / g->f_c;
  if (g->out_c % g->groups != 0)
    return InvalidArgument("output channels (" + std::to_string(g->out_c) + ") must be divisible by the number of groups (" +
                           std::to_string(g->groups) + ")");
  WindowOutput(p.padding, g->in_h, g->in_w, g->k_h, g->k_w, p.stride_h, p.stride_w, p.dil_h, p.dil_w, &g->out_h,
               &g->out_w, &g->pad_t, &g->pad_l);
  return OkStatus();
}

Status conv::Conv2DGeometryOf(const Node& n, const Dims& in, const Dims& f, ConvGeometry* g) {
  return Conv2DGeometry(n.P<ConvParams>(), in, f, g);
}

}  // namespace tflite_gpu
