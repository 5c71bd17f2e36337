// CONV_3D and CONV_3D_TRANSPOSE (float32, NDHWC), TFLite semantics.
//
// CONV_3D: input [N, D, H, W, Cin], filter [KD, KH, KW, Cin, Cout], optional bias [Cout];
// output [N, OD, OH, OW, Cout] with CONV_2D's output size and leading pad per spatial dim
// (stride, dilation, SAME/VALID); out = act(bias + sum x[od*s - pad + kd*dil, ...] * w).
// CONV_3D_TRANSPOSE: inputs output_shape [5] INT32, filter [KD, KH, KW, Cout, Cin], input
// [N, D, H, W, Cin], optional bias [Cout]. The output shape is output_shape (dynamic output when
// it is not constant); the forward conv of that shape must give the input's spatial dims; each
// input element scatters into out[d*s - pad + kd*dil, ...], then bias and activation.
// Options (Conv3DOptions): padding, stride_d/w/h, fused activation, dilation_d/w/h. The fused
// activation clamps as TFLite's CalculateActivationRange (RELU family; others [lowest, max]).
// Fast kernels: the innermost loop runs over contiguous filter channels, output rows split over
// threads. Reference kernels: plain loops in TFLite's order.
#include <algorithm>
#include <cstring>

#include "ops/op_registry.h"
#include "runtime/thread_pool.h"

namespace tflite_gpu {
namespace {

constexpr uint8_t kConv3DOptions = 106;

struct Conv3DParams {
  int padding = 0, stride[3] = {0, 0, 0}, dil[3] = {1, 1, 1}, act = 0;  // stride/dil: d, h, w
};

Status ParseConv3D(const OptionsView& opts, Node& node) {
  fb::Table t = opts.type == kConv3DOptions ? opts.table : fb::Table();
  auto p = std::make_shared<Conv3DParams>();
  p->padding = t.Scalar<int8_t>(0, 0);
  p->stride[0] = t.Scalar<int32_t>(1, 0);
  p->stride[2] = t.Scalar<int32_t>(2, 0);
  p->stride[1] = t.Scalar<int32_t>(3, 0);
  p->act = t.Scalar<int8_t>(4, 0);
  p->dil[0] = t.Scalar<int32_t>(5, 1);
  p->dil[2] = t.Scalar<int32_t>(6, 1);
  p->dil[1] = t.Scalar<int32_t>(7, 1);
  node.params = p;
  return OkStatus();
}

struct Geom {
  int n, in[3], cin, out[3], cout, k[3], stride[3], dil[3], pad[3];
  float lo, hi;
};

Status CheckParams(const OpContext& ctx, const Conv3DParams& p, Padding* pad) {
  if (!CheckPadding(p.padding, pad).ok()) return ctx.Error("unknown padding " + std::to_string(p.padding));
  static const char* kAxis[3] = {"d", "h", "w"};
  for (int i = 0; i < 3; ++i) {
    if (p.stride[i] <= 0) return ctx.Error(std::string("stride_") + kAxis[i] + " must be positive, got " + std::to_string(p.stride[i]));
    if (p.dil[i] <= 0)
      return ctx.Error(std::string("dilation_") + kAxis[i] + "_factor must be positive, got " + std::to_string(p.dil[i]));
  }
  if (p.act < 0 || p.act > 5) return ctx.Error("unsupported fused activation function " + std::to_string(p.act));
  return OkStatus();
}

// Input [N, D, H, W, Cin], filter and output FLOAT32 of the right ranks, the filter's input
// channels (axis 3 of CONV_3D's [KD, KH, KW, Cin, Cout], axis 4 of CONV_3D_TRANSPOSE's
// [KD, KH, KW, Cout, Cin]) matching the input's, and the optional bias: FLOAT32 with one value per
// output channel (the filter's other channel axis).
Status CheckTensors(OpContext& ctx, const Tensor& in, const Tensor& f, int bias_index, bool transpose) {
  TFG_RETURN_IF_ERROR(ctx.CheckType(in, DType::kFloat32, "input"));
  TFG_RETURN_IF_ERROR(ctx.CheckType(f, DType::kFloat32, "filter"));
  TFG_RETURN_IF_ERROR(ctx.CheckType(ctx.output(0), DType::kFloat32, "output"));
  if (in.shape.size() != 5) return ctx.Error("input must be 5-D (NDHWC), got shape " + DimsToString(in.shape));
  if (f.shape.size() != 5)
    return ctx.Error(std::string("filter must be 5-D ") + (transpose ? "[KD, KH, KW, Cout, Cin]" : "[KD, KH, KW, Cin, Cout]") +
                     ", got shape " + DimsToString(f.shape));
  const int cin_axis = transpose ? 4 : 3, cout = f.shape[transpose ? 3 : 4];
  if (in.shape[4] != f.shape[cin_axis])
    return ctx.Error("input has " + std::to_string(in.shape[4]) + " channels but the filter expects " +
                     std::to_string(f.shape[cin_axis]));
  if (!ctx.has_input(bias_index)) return OkStatus();
  const Tensor& b = ctx.input(bias_index);
  TFG_RETURN_IF_ERROR(ctx.CheckType(b, DType::kFloat32, "bias"));
  if (b.num_elements() != cout)
    return ctx.Error("bias has " + std::to_string(b.num_elements()) + " elements, expected " + std::to_string(cout) +
                     " (output channels)");
  return OkStatus();
}

// The kernels' geometry: in [N, D, H, W, Cin], filter [KD, KH, KW, ..], out [N, OD, OH, OW, Cout],
// the leading pad of each spatial dim.
Geom MakeGeom(const Conv3DParams& p, const Dims& in, const Dims& f, const Dims& out, const int pad[3]) {
  Geom g;
  g.n = in[0];
  g.cin = in[4];
  g.cout = out[4];
  for (int i = 0; i < 3; ++i) {
    g.in[i] = in[i + 1];
    g.out[i] = out[i + 1];
    g.k[i] = f[i];
    g.stride[i] = p.stride[i];
    g.dil[i] = p.dil[i];
    g.pad[i] = pad[i];
  }
  ActivationRangeOfType<float>(p.act, &g.lo, &g.hi);
  return g;
}

// ---------------------------------------------------------------------------------------------
// CONV_3D
// ---------------------------------------------------------------------------------------------
Status Conv3DPrepare(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 3, 1, 1));
  if (!ctx.has_input(0) || !ctx.has_input(1)) return ctx.Error("missing input or filter");
  const Conv3DParams& p = ctx.node().P<Conv3DParams>();
  Padding pad;
  TFG_RETURN_IF_ERROR(CheckParams(ctx, p, &pad));
  const Tensor& in = ctx.input(0);
  const Tensor& f = ctx.input(1);
  TFG_RETURN_IF_ERROR(CheckTensors(ctx, in, f, 2, false));
  Dims out = {in.shape[0], 0, 0, 0, f.shape[4]};
  for (int i = 0; i < 3; ++i) out[i + 1] = ConvOutputSize(pad, in.shape[i + 1], f.shape[i], p.stride[i], p.dil[i]);
  return ctx.SetOutputShape(0, out);
}

Geom Conv3DGeom(OpContext& ctx) {
  const Conv3DParams& p = ctx.node().P<Conv3DParams>();
  const Tensor& in = ctx.input(0);
  const Tensor& f = ctx.input(1);
  const Tensor& o = ctx.output(0);
  int pad[3];
  for (int i = 0; i < 3; ++i)
    pad[i] = ConvPadBefore(static_cast<Padding>(p.padding), in.shape[i + 1], f.shape[i], p.stride[i], p.dil[i],
                           o.shape[i + 1]);
  return MakeGeom(p, in.shape, f.shape, o.shape, pad);
}

template <bool kRef>
Status Conv3DEval(OpContext& ctx) {
  const Geom g = Conv3DGeom(ctx);
  const float* x = ctx.input(0).as<float>();
  const float* w = ctx.input(1).as<float>();
  const float* bias = ctx.has_input(2) ? ctx.input(2).as<float>() : nullptr;
  float* y = ctx.output(0).as<float>();
  const int64_t rows = int64_t(g.n) * g.out[0] * g.out[1];  // (b, od, oh) rows of OW x Cout
  auto in_at = [&](int b, int d, int h, int wi) {
    return x + (((int64_t(b) * g.in[0] + d) * g.in[1] + h) * g.in[2] + wi) * g.cin;
  };
  if (kRef) {
    for (int b = 0; b < g.n; ++b)
      for (int od = 0; od < g.out[0]; ++od)
        for (int oh = 0; oh < g.out[1]; ++oh)
          for (int ow = 0; ow < g.out[2]; ++ow)
            for (int co = 0; co < g.cout; ++co) {
              float acc = 0.f;
              for (int kd = 0; kd < g.k[0]; ++kd) {
                const int64_t id = int64_t(od) * g.stride[0] - g.pad[0] + int64_t(kd) * g.dil[0];
                if (id < 0 || id >= g.in[0]) continue;
                for (int kh = 0; kh < g.k[1]; ++kh) {
                  const int64_t ih = int64_t(oh) * g.stride[1] - g.pad[1] + int64_t(kh) * g.dil[1];
                  if (ih < 0 || ih >= g.in[1]) continue;
                  for (int kw = 0; kw < g.k[2]; ++kw) {
                    const int64_t iw = int64_t(ow) * g.stride[2] - g.pad[2] + int64_t(kw) * g.dil[2];
                    if (iw < 0 || iw >= g.in[2]) continue;
                    for (int ci = 0; ci < g.cin; ++ci)
                      acc += in_at(b, int(id), int(ih), int(iw))[ci] *
                             w[((((int64_t(kd) * g.k[1] + kh) * g.k[2] + kw) * g.cin + ci) * g.cout) + co];
                  }
                }
              }
              if (bias) acc += bias[co];
              y[((((int64_t(b) * g.out[0] + od) * g.out[1] + oh) * g.out[2] + ow) * g.cout) + co] =
                  std::min(std::max(acc, g.lo), g.hi);
            }
    return OkStatus();
  }
  ParallelFor(ctx.pool(), rows, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int oh = int(r % g.out[1]);
      const int od = int((r / g.out[1]) % g.out[0]);
      const int b = int(r / (int64_t(g.out[1]) * g.out[0]));
      float* yr = y + r * int64_t(g.out[2]) * g.cout;
      for (int ow = 0; ow < g.out[2]; ++ow) {
        float* acc = yr + int64_t(ow) * g.cout;
        if (bias) std::memcpy(acc, bias, sizeof(float) * size_t(g.cout));
        else std::fill(acc, acc + g.cout, 0.f);
        for (int kd = 0; kd < g.k[0]; ++kd) {
          const int64_t id = int64_t(od) * g.stride[0] - g.pad[0] + int64_t(kd) * g.dil[0];
          if (id < 0 || id >= g.in[0]) continue;
          for (int kh = 0; kh < g.k[1]; ++kh) {
            const int64_t ih = int64_t(oh) * g.stride[1] - g.pad[1] + int64_t(kh) * g.dil[1];
            if (ih < 0 || ih >= g.in[1]) continue;
            for (int kw = 0; kw < g.k[2]; ++kw) {
              const int64_t iw = int64_t(ow) * g.stride[2] - g.pad[2] + int64_t(kw) * g.dil[2];
              if (iw < 0 || iw >= g.in[2]) continue;
              const float* xi = in_at(b, int(id), int(ih), int(iw));
              const float* wt = w + ((int64_t(kd) * g.k[1] + kh) * g.k[2] + kw) * g.cin * g.cout;
              for (int ci = 0; ci < g.cin; ++ci) {
                const float v = xi[ci];
                const float* wc = wt + int64_t(ci) * g.cout;
                for (int co = 0; co < g.cout; ++co) acc[co] += v * wc[co];
              }
            }
          }
        }
        for (int co = 0; co < g.cout; ++co) acc[co] = std::min(std::max(acc[co], g.lo), g.hi);
      }
    }
  });
  return OkStatus();
}

// ---------------------------------------------------------------------------------------------
// CONV_3D_TRANSPOSE
// ---------------------------------------------------------------------------------------------
Status ResolveTransposeShape(OpContext& ctx, Dims* out, int pads[3]) {
  const Conv3DParams& p = ctx.node().P<Conv3DParams>();
  const Tensor& os = ctx.input(0);
  const Tensor& f = ctx.input(1);
  const Tensor& in = ctx.input(2);
  if (!os.data || os.bytes < 5 * sizeof(int32_t)) return ctx.Error("output_shape has no data");
  const int32_t* s = os.as<int32_t>();
  *out = Dims(s, s + 5);
  for (int i = 0; i < 5; ++i)
    if (s[i] < 0) return ctx.Error("output_shape " + DimsToString(*out) + " has a negative dimension");
  if (s[0] != in.shape[0])
    return ctx.Error("output_shape batch " + std::to_string(s[0]) + " differs from the input batch " +
                     std::to_string(in.shape[0]));
  if (s[4] != f.shape[3])
    return ctx.Error("output_shape has " + std::to_string(s[4]) + " channels but the filter has " +
                     std::to_string(f.shape[3]) + " output channels");
  const Padding pad = static_cast<Padding>(p.padding);
  for (int i = 0; i < 3; ++i) {
    const int fwd = ConvOutputSize(pad, s[i + 1], f.shape[i], p.stride[i], p.dil[i]);
    if (fwd != in.shape[i + 1])
      return ctx.Error("output_shape " + DimsToString(*out) + " does not match the input shape " +
                       DimsToString(in.shape) + " (spatial dim " + std::to_string(i) + " of a conv on that shape gives " +
                       std::to_string(fwd) + ")");
    pads[i] = ConvPadBefore(pad, s[i + 1], f.shape[i], p.stride[i], p.dil[i], in.shape[i + 1]);
  }
  return OkStatus();
}

Status Conv3DTPrepare(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(3, 4, 1, 1));
  for (int i = 0; i < 3; ++i)
    if (!ctx.has_input(i)) return ctx.Error("input " + std::to_string(i) + " is missing");
  const Conv3DParams& p = ctx.node().P<Conv3DParams>();
  Padding pad;
  TFG_RETURN_IF_ERROR(CheckParams(ctx, p, &pad));
  const Tensor& os = ctx.input(0);
  const Tensor& f = ctx.input(1);
  const Tensor& in = ctx.input(2);
  TFG_RETURN_IF_ERROR(ctx.CheckType(os, DType::kInt32, "output_shape"));
  if (os.shape.size() != 1 || os.shape[0] != 5)
    return ctx.Error("output_shape must have shape [5], got " + DimsToString(os.shape));
  TFG_RETURN_IF_ERROR(CheckTensors(ctx, in, f, 3, true));
  if (!ctx.IsConstantOrPersistent(os)) {
    ctx.SetOutputDynamic(0);
    return OkStatus();
  }
  Dims out;
  int pads[3];
  TFG_RETURN_IF_ERROR(ResolveTransposeShape(ctx, &out, pads));
  return ctx.SetOutputShape(0, out);
}

template <bool kRef>
Status Conv3DTEval(OpContext& ctx) {
  const Conv3DParams& p = ctx.node().P<Conv3DParams>();
  Dims oshape;
  int pads[3];
  TFG_RETURN_IF_ERROR(ResolveTransposeShape(ctx, &oshape, pads));
  if (!ctx.IsConstantOrPersistent(ctx.input(0))) TFG_RETURN_IF_ERROR(ctx.SetOutputShape(0, oshape));
  const Tensor& f = ctx.input(1);
  const Tensor& in = ctx.input(2);
  Tensor& o = ctx.output(0);
  if (o.shape != oshape) return ctx.Error("output shape " + DimsToString(o.shape) + ", expected " + DimsToString(oshape));
  const Geom g = MakeGeom(p, in.shape, f.shape, oshape, pads);  // oshape[4] == the filter's Cout (checked)
  const float* x = in.as<float>();
  const float* w = f.as<float>();
  const float* bias = ctx.has_input(3) ? ctx.input(3).as<float>() : nullptr;
  float* y = o.as<float>();
  const int64_t total = o.num_elements();
  std::fill(y, y + total, 0.f);
  auto out_at = [&](int b, int d, int h, int wi) {
    return y + (((int64_t(b) * g.out[0] + d) * g.out[1] + h) * g.out[2] + wi) * g.cout;
  };
  auto scatter_batch = [&](int b) {
    for (int id = 0; id < g.in[0]; ++id)
      for (int ih = 0; ih < g.in[1]; ++ih)
        for (int iw = 0; iw < g.in[2]; ++iw) {
          const float* xi = x + (((int64_t(b) * g.in[0] + id) * g.in[1] + ih) * g.in[2] + iw) * g.cin;
          for (int kd = 0; kd < g.k[0]; ++kd) {
            const int64_t od = int64_t(id) * g.stride[0] - g.pad[0] + int64_t(kd) * g.dil[0];
            if (od < 0 || od >= g.out[0]) continue;
            for (int kh = 0; kh < g.k[1]; ++kh) {
              const int64_t oh = int64_t(ih) * g.stride[1] - g.pad[1] + int64_t(kh) * g.dil[1];
              if (oh < 0 || oh >= g.out[1]) continue;
              for (int kw = 0; kw < g.k[2]; ++kw) {
                const int64_t ow = int64_t(iw) * g.stride[2] - g.pad[2] + int64_t(kw) * g.dil[2];
                if (ow < 0 || ow >= g.out[2]) continue;
                float* yo = out_at(b, int(od), int(oh), int(ow));
                const float* wt = w + ((int64_t(kd) * g.k[1] + kh) * g.k[2] + kw) * g.cout * g.cin;
                for (int co = 0; co < g.cout; ++co) {
                  const float* wc = wt + int64_t(co) * g.cin;
                  if (kRef) {
                    for (int ci = 0; ci < g.cin; ++ci) yo[co] += xi[ci] * wc[ci];
                  } else {
                    float s = 0.f;
                    for (int ci = 0; ci < g.cin; ++ci) s += xi[ci] * wc[ci];
                    yo[co] += s;
                  }
                }
              }
            }
          }
        }
  };
  if (kRef) {
    for (int b = 0; b < g.n; ++b) scatter_batch(b);
  } else {
    ParallelFor(ctx.pool(), g.n, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) scatter_batch(int(b));
    });
  }
  const int64_t pix = g.cout > 0 ? total / g.cout : 0;
  for (int64_t i = 0; i < pix; ++i)
    for (int co = 0; co < g.cout; ++co) {
      float v = y[i * g.cout + co] + (bias ? bias[co] : 0.f);
      y[i * g.cout + co] = std::min(std::max(v, g.lo), g.hi);
    }
  return OkStatus();
}

}  // namespace

const OpImpl kOp_CONV_3D = {ParseConv3D, Conv3DPrepare, Conv3DEval<false>, Conv3DEval<true>, false};
const OpImpl kOp_CONV_3D_TRANSPOSE = {ParseConv3D, Conv3DTPrepare, Conv3DTEval<false>, Conv3DTEval<true>, false};

}  // namespace tflite_gpu
