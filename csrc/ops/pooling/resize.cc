// RESIZE_BILINEAR (float32) and RESIZE_NEAREST_NEIGHBOR (any 1/2/4-byte element type: the
// kernel only moves data), NHWC, TFLite semantics:
//   * the size input is an int32 tensor [new_height, new_width]; a constant one fixes the output
//     shape at prepare, otherwise the output is dynamic and shaped at eval;
//   * scale = in / out, or (in - 1) / (out - 1) with align_corners (out > 1);
//   * bilinear: source y = (y + 0.5) * scale - 0.5 with half_pixel_centers, else y * scale;
//     y0 = max(floor(y), 0), y1 = min(ceil(y), in - 1) (TFLite's ComputeInterpolationValues);
//     align_corners together with half_pixel_centers is rejected, sizes must be positive;
//   * nearest: min(align_corners ? round((y + offset) * scale) : floor((y + offset) * scale),
//     in - 1), then max(.., 0) with half_pixel_centers (offset 0.5), in float as TFLite.
// Quantized bilinear (the raw integers are interpolated; the output keeps the input's grid, and
// TFLite checks no quantization parameters beyond what every quantized tensor must satisfy), as
// LiteRT 2.3's builtin kernel computes it (measured against it: tests/op_cases/pooling.py):
//   * INT8, INT16: TFLite's ResizeBilinearInteger: scales in 10-bit fixed point,
//     round(2^10 * in / out) (align_corners: (in - 1) / (out - 1)) by integer division with
//     + divisor / 2; source y = v * s (half_pixel_centers: v * s + s / 2 - 2^9); y0 = max(y / 2^10, 0),
//     y1 = min((y + 2^10 - 1) / 2^10, in - 1) (C division, truncating); the four products summed in
//     int64 with 20 fraction bits and rounded half away from zero ((sum +- 2^19) / 2^20).
//   * UINT8: TFLite's optimized ResizeBilinearGenericSmallChannel: the float source coordinates
//     and weights of the float kernel, the four terms summed in float in the order (y0,x0),
//     (y0,x1), (y1,x0), (y1,x1), + 0.5, truncated.
#include <cmath>
#include <cstring>
#include <vector>

#include "ops/op_registry.h"
#include "ops/quant_common.h"
#include "ops/pooling/pool_common.h"
#include "runtime/thread_pool.h"

namespace tflite_gpu {
namespace {

constexpr uint8_t kResizeBilinearOptions = 15;
constexpr uint8_t kResizeNearestNeighborOptions = 74;

struct ResizeParams {
  bool align_corners = false, half_pixel_centers = false, bilinear = true;
};

Status ParseBilinear(const OptionsView& opts, Node& node) {
  fb::Table t = pooling::OptionsTable(opts, kResizeBilinearOptions);
  auto p = std::make_shared<ResizeParams>();
  p->align_corners = t.Bool(2, false);
  p->half_pixel_centers = t.Bool(3, false);
  p->bilinear = true;
  node.params = p;
  return OkStatus();
}

Status ParseNearest(const OptionsView& opts, Node& node) {
  fb::Table t = pooling::OptionsTable(opts, kResizeNearestNeighborOptions);
  auto p = std::make_shared<ResizeParams>();
  p->align_corners = t.Bool(0, false);
  p->half_pixel_centers = t.Bool(1, false);
  p->bilinear = false;
  node.params = p;
  return OkStatus();
}

// Reads and checks the size tensor, then shapes the output.
Status ShapeOutput(OpContext& ctx) {
  const ResizeParams& p = ctx.node().P<ResizeParams>();
  const Tensor& in = ctx.input(0);
  const Tensor& size = ctx.input(1);
  const int32_t* s = size.as<int32_t>();
  if (!s) return ctx.Error("size tensor has no data");
  if (p.bilinear ? (s[0] <= 0 || s[1] <= 0) : (s[0] < 0 || s[1] < 0))
    return ctx.Error("output size must be " + std::string(p.bilinear ? "positive" : "non-negative") + ", got [" +
                     std::to_string(s[0]) + ", " + std::to_string(s[1]) + "]");
  return ctx.SetOutputShape(0, {in.shape[0], s[0], s[1], in.shape[3]});
}

Status PrepareResize(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 2, 1, 1));
  TFG_RETURN_IF_ERROR(quant::ValidateNodeQuant(ctx));
  const ResizeParams& p = ctx.node().P<ResizeParams>();
  const Tensor& in = ctx.input(0);
  const Tensor& size = ctx.input(1);
  if (p.bilinear) {
    if (in.type != DType::kFloat32 && !quant::IsQuantizedIntType(in.type))
      return ctx.Error(std::string("input type ") + DTypeName(in.type) + " is not supported (FLOAT32, INT8, UINT8, INT16)");
    if (quant::IsQuantizedIntType(in.type)) {
      quant::TensorQuant qi, qo;
      TFG_RETURN_IF_ERROR(quant::ReadQuant(ctx, in, "input", quant::QuantRule(), &qi));
      TFG_RETURN_IF_ERROR(quant::ReadQuant(ctx, ctx.output(0), "output", quant::QuantRule(), &qo));
      if (ctx.output(0).type != in.type)
        return ctx.Error(std::string("output type ") + DTypeName(ctx.output(0).type) + " differs from the input type " +
                         DTypeName(in.type));
    }
    if (p.align_corners && p.half_pixel_centers)
      return ctx.Error("if half_pixel_centers is true, align_corners must be false");
  } else {
    switch (in.type) {
      case DType::kFloat32: case DType::kInt32: case DType::kUInt8: case DType::kInt8: case DType::kInt16: break;
      default:
        return ctx.Error(std::string("input type ") + DTypeName(in.type) +
                         " is not supported (FLOAT32, INT32, UINT8, INT8, INT16)");
    }
  }
  if (in.shape.size() != 4) return ctx.Error("input must be 4-D (NHWC), got shape " + DimsToString(in.shape));
  if (size.type != DType::kInt32) return ctx.Error(std::string("size tensor must be INT32, got ") + DTypeName(size.type));
  if (size.shape.size() != 1 || size.shape[0] != 2)
    return ctx.Error("size tensor must have shape [2], got " + DimsToString(size.shape));
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, in.type));
  if (ctx.IsConstantOrPersistent(size)) return ShapeOutput(ctx);
  ctx.SetOutputDynamic(0);
  return OkStatus();
}

float Scale(int in, int out, bool align_corners) {
  if (align_corners && out > 1) return float(in - 1) / float(out - 1);
  return float(in) / float(out);
}

// TFLite's ComputeInterpolationValues.
void Interp(int value, float scale, bool half_pixel, int in_size, float* scaled, int* lo, int* hi) {
  if (half_pixel) *scaled = (float(value) + 0.5f) * scale - 0.5f;
  else *scaled = float(value) * scale;
  float fl = std::floor(*scaled);
  *lo = std::max(static_cast<int32_t>(fl), 0);
  *hi = std::min(static_cast<int32_t>(std::ceil(*scaled)), in_size - 1);
}

// TFLite's GetNearestNeighbor.
int32_t Nearest(int value, int in_size, int out_size, bool align_corners, bool half_pixel) {
  const float scale = (align_corners && out_size > 1) ? (in_size - 1) / static_cast<float>(out_size - 1)
                                                      : in_size / static_cast<float>(out_size);
  const float offset = half_pixel ? 0.5f : 0.0f;
  int32_t v = std::min(align_corners ? static_cast<int32_t>(std::round((value + offset) * scale))
                                     : static_cast<int32_t>(std::floor((value + offset) * scale)),
                       in_size - 1);
  if (half_pixel) v = std::max(static_cast<int32_t>(0), v);
  return v;
}

Status MaybeShape(OpContext& ctx) {
  if (ctx.output(0).alloc == Allocation::kDynamic) return ShapeOutput(ctx);
  return OkStatus();
}

// ---- bilinear ----
Status EvalBilinearQuant(OpContext& ctx, bool ref);

Status EvalBilinearRef(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(MaybeShape(ctx));
  if (quant::IsQuantizedIntType(ctx.input(0).type)) return EvalBilinearQuant(ctx, true);
  const ResizeParams& p = ctx.node().P<ResizeParams>();
  const Tensor& in = ctx.input(0);
  const Tensor& out = ctx.output(0);
  const int B = in.shape[0], IH = in.shape[1], IW = in.shape[2], C = in.shape[3];
  const int OH = out.shape[1], OW = out.shape[2];
  if (int64_t(B) * OH * OW * C == 0) return OkStatus();
  const float hs = Scale(IH, OH, p.align_corners), ws = Scale(IW, OW, p.align_corners);
  const float* x = in.as<float>();
  float* y = ctx.output(0).as<float>();
  auto at = [&](int b, int yy, int xx, int c) { return x[((int64_t(b) * IH + yy) * IW + xx) * C + c]; };
  for (int b = 0; b < B; ++b)
    for (int oy = 0; oy < OH; ++oy) {
      float iy; int y0, y1;
      Interp(oy, hs, p.half_pixel_centers, IH, &iy, &y0, &y1);
      for (int ox = 0; ox < OW; ++ox) {
        float ix; int x0, x1;
        Interp(ox, ws, p.half_pixel_centers, IW, &ix, &x0, &x1);
        for (int c = 0; c < C; ++c) {
          float v = at(b, y0, x0, c) * (1 - (iy - y0)) * (1 - (ix - x0)) +
                    at(b, y1, x0, c) * (iy - y0) * (1 - (ix - x0)) +
                    at(b, y0, x1, c) * (1 - (iy - y0)) * (ix - x0) +
                    at(b, y1, x1, c) * (iy - y0) * (ix - x0);
          y[((int64_t(b) * OH + oy) * OW + ox) * C + c] = v;
        }
      }
    }
  return OkStatus();
}

// TFLite's ComputeInterpolationValuesInteger (10 fraction bits).
void InterpInt(int32_t v, int32_t scale10, bool half_pixel, int32_t in_size, int32_t* scaled, int32_t* lo, int32_t* hi) {
  *scaled = half_pixel ? v * scale10 + scale10 / 2 - (1 << 9) : v * scale10;
  *lo = std::max(*scaled / (1 << 10), int32_t(0));
  *hi = std::min((*scaled + (1 << 10) - 1) / (1 << 10), in_size - 1);
}

int32_t Scale10(int in, int out, bool align_corners) {
  if (align_corners && out > 1) return ((1 << 10) * (in - 1) + (out - 1) / 2) / (out - 1);
  return ((1 << 10) * in + out / 2) / out;
}

// INT8 / INT16 (integer interpolation); rows [r0, r1) of the B * OH output rows.
template <typename T>
void BilinearIntRows(const ResizeParams& p, const T* x, T* y, int IH, int IW, int C, int OH, int OW, int64_t r0,
                     int64_t r1) {
  const int32_t hs = Scale10(IH, OH, p.align_corners), ws = Scale10(IW, OW, p.align_corners);
  for (int64_t r = r0; r < r1; ++r) {
    const int b = int(r / OH), oy = int(r % OH);
    int32_t iy, y0, y1;
    InterpInt(oy, hs, p.half_pixel_centers, IH, &iy, &y0, &y1);
    const int64_t dy = iy - (1 << 10) * y0, ry = (1 << 10) - dy;
    const T* row0 = x + (int64_t(b) * IH + y0) * IW * C;
    const T* row1 = x + (int64_t(b) * IH + y1) * IW * C;
    T* o = y + r * OW * C;
    for (int ox = 0; ox < OW; ++ox, o += C) {
      int32_t ix, x0, x1;
      InterpInt(ox, ws, p.half_pixel_centers, IW, &ix, &x0, &x1);
      const int64_t dx = ix - (1 << 10) * x0, rx = (1 << 10) - dx;
      const T* a = row0 + int64_t(x0) * C;
      const T* bb = row1 + int64_t(x0) * C;
      const T* c2 = row0 + int64_t(x1) * C;
      const T* d = row1 + int64_t(x1) * C;
      for (int c = 0; c < C; ++c) {
        const int64_t v = int64_t(a[c]) * ry * rx + int64_t(bb[c]) * dy * rx + int64_t(c2[c]) * ry * dx +
                          int64_t(d[c]) * dy * dx;
        const int64_t round = v > 0 ? (int64_t(1) << 19) : -(int64_t(1) << 19);
        o[c] = T((v + round) / (int64_t(1) << 20));
      }
    }
  }
}

// UINT8 (float weights, TFLite's optimized generic kernel).
void BilinearU8Rows(const ResizeParams& p, const uint8_t* x, uint8_t* y, int IH, int IW, int C, int OH, int OW,
                    int64_t r0, int64_t r1) {
  const float hs = Scale(IH, OH, p.align_corners), ws = Scale(IW, OW, p.align_corners);
  for (int64_t r = r0; r < r1; ++r) {
    const int b = int(r / OH), oy = int(r % OH);
    float iy; int y0, y1;
    Interp(oy, hs, p.half_pixel_centers, IH, &iy, &y0, &y1);
    const uint8_t* row0 = x + (int64_t(b) * IH + y0) * IW * C;
    const uint8_t* row1 = x + (int64_t(b) * IH + y1) * IW * C;
    uint8_t* o = y + r * OW * C;
    for (int ox = 0; ox < OW; ++ox, o += C) {
      float ix; int x0, x1;
      Interp(ox, ws, p.half_pixel_centers, IW, &ix, &x0, &x1);
      const float s0 = (1 - (iy - y0)) * (1 - (ix - x0)), s1 = (1 - (iy - y0)) * (ix - x0);
      const float s2 = (iy - y0) * (1 - (ix - x0)), s3 = (iy - y0) * (ix - x0);
      const uint8_t* a = row0 + int64_t(x0) * C;
      const uint8_t* c2 = row0 + int64_t(x1) * C;
      const uint8_t* bb = row1 + int64_t(x0) * C;
      const uint8_t* d = row1 + int64_t(x1) * C;
      for (int c = 0; c < C; ++c) {
        float v = float(a[c]) * s0;
        v = v + float(c2[c]) * s1;
        v = v + float(bb[c]) * s2;
        v = v + float(d[c]) * s3;
        o[c] = uint8_t(int32_t(v + 0.5f));
      }
    }
  }
}

Status EvalBilinearQuant(OpContext& ctx, bool ref) {
  const ResizeParams& p = ctx.node().P<ResizeParams>();
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  const int B = in.shape[0], IH = in.shape[1], IW = in.shape[2], C = in.shape[3];
  const int OH = out.shape[1], OW = out.shape[2];
  if (int64_t(B) * OH * OW * C == 0) return OkStatus();
  if (int64_t(IH) * IW == 0) return ctx.Error("cannot resize an empty input to a non-empty output");
  const int64_t rows = int64_t(B) * OH;
  auto run = [&](int64_t r0, int64_t r1) {
    switch (in.type) {
      case DType::kInt8: BilinearIntRows(p, in.as<int8_t>(), out.as<int8_t>(), IH, IW, C, OH, OW, r0, r1); break;
      case DType::kInt16: BilinearIntRows(p, in.as<int16_t>(), out.as<int16_t>(), IH, IW, C, OH, OW, r0, r1); break;
      default: BilinearU8Rows(p, in.as<uint8_t>(), out.as<uint8_t>(), IH, IW, C, OH, OW, r0, r1); break;
    }
  };
  if (ref) run(0, rows);
  else ParallelFor(ctx.pool(), rows, run, MinChunkFor(int64_t(OW) * C));
  return OkStatus();
}

Status EvalBilinear(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(MaybeShape(ctx));
  if (quant::IsQuantizedIntType(ctx.input(0).type)) return EvalBilinearQuant(ctx, false);
  const ResizeParams& p = ctx.node().P<ResizeParams>();
  const Tensor& in = ctx.input(0);
  const Tensor& out = ctx.output(0);
  const int B = in.shape[0], IH = in.shape[1], IW = in.shape[2], C = in.shape[3];
  const int OH = out.shape[1], OW = out.shape[2];
  if (int64_t(B) * OH * OW * C == 0) return OkStatus();
  const float hs = Scale(IH, OH, p.align_corners), ws = Scale(IW, OW, p.align_corners);
  // Per-column source indices and weights, computed once.
  std::vector<int> xs0(OW), xs1(OW);
  std::vector<float> wx(OW);
  for (int ox = 0; ox < OW; ++ox) {
    float ix;
    Interp(ox, ws, p.half_pixel_centers, IW, &ix, &xs0[ox], &xs1[ox]);
    wx[ox] = ix - xs0[ox];
  }
  const float* x = in.as<float>();
  float* y = ctx.output(0).as<float>();
  const int64_t rows = int64_t(B) * OH;
  const int64_t min_chunk = MinChunkFor(int64_t(OW) * C);
  ParallelFor(ctx.pool(), rows, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int b = int(r / OH), oy = int(r % OH);
      float iy; int y0, y1;
      Interp(oy, hs, p.half_pixel_centers, IH, &iy, &y0, &y1);
      const float dy = iy - y0, ry = 1 - dy;
      const float* row0 = x + (int64_t(b) * IH + y0) * IW * C;
      const float* row1 = x + (int64_t(b) * IH + y1) * IW * C;
      float* o = y + r * OW * C;
      for (int ox = 0; ox < OW; ++ox, o += C) {
        const float dx = wx[ox], rx = 1 - dx;
        const float w00 = ry * rx, w10 = dy * rx, w01 = ry * dx, w11 = dy * dx;
        const float* a = row0 + int64_t(xs0[ox]) * C;
        const float* bb = row1 + int64_t(xs0[ox]) * C;
        const float* c2 = row0 + int64_t(xs1[ox]) * C;
        const float* d = row1 + int64_t(xs1[ox]) * C;
        for (int c = 0; c < C; ++c) o[c] = a[c] * w00 + bb[c] * w10 + c2[c] * w01 + d[c] * w11;
      }
    }
  }, min_chunk);
  return OkStatus();
}

// ---- nearest neighbour (a pure copy of elements) ----
template <typename T>
void NearestCopy(ThreadPool* pool, const ResizeParams& p, const Tensor& in, Tensor& out, bool ref) {
  const int B = in.shape[0], IH = in.shape[1], IW = in.shape[2], C = in.shape[3];
  const int OH = out.shape[1], OW = out.shape[2];
  const T* x = in.as<T>();
  T* y = out.as<T>();
  if (ref) {
    for (int b = 0; b < B; ++b)
      for (int oy = 0; oy < OH; ++oy) {
        int iy = Nearest(oy, IH, OH, p.align_corners, p.half_pixel_centers);
        for (int ox = 0; ox < OW; ++ox) {
          int ix = Nearest(ox, IW, OW, p.align_corners, p.half_pixel_centers);
          for (int c = 0; c < C; ++c)
            y[((int64_t(b) * OH + oy) * OW + ox) * C + c] = x[((int64_t(b) * IH + iy) * IW + ix) * C + c];
        }
      }
    return;
  }
  std::vector<int> xs(OW);
  for (int ox = 0; ox < OW; ++ox) xs[ox] = Nearest(ox, IW, OW, p.align_corners, p.half_pixel_centers);
  const int64_t rows = int64_t(B) * OH;
  ParallelFor(pool, rows, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int b = int(r / OH), oy = int(r % OH);
      const int iy = Nearest(oy, IH, OH, p.align_corners, p.half_pixel_centers);
      const T* src = x + (int64_t(b) * IH + iy) * IW * C;
      T* dst = y + r * OW * C;
      for (int ox = 0; ox < OW; ++ox) std::memcpy(dst + int64_t(ox) * C, src + int64_t(xs[ox]) * C, sizeof(T) * C);
    }
  }, MinChunkFor(std::max<int64_t>(1, int64_t(OW) * C / 4)));  // memcpy runs: a quarter unit a value
}

template <bool kRef>
Status EvalNearest(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(MaybeShape(ctx));
  const ResizeParams& p = ctx.node().P<ResizeParams>();
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  if (out.num_elements() == 0) return OkStatus();
  if (in.num_elements() == 0) return ctx.Error("cannot resize an empty input to a non-empty output");
  switch (DTypeSize(in.type)) {
    case 1: NearestCopy<uint8_t>(ctx.pool(), p, in, out, kRef); break;
    case 2: NearestCopy<uint16_t>(ctx.pool(), p, in, out, kRef); break;
    case 4: NearestCopy<uint32_t>(ctx.pool(), p, in, out, kRef); break;
    default: return ctx.Error("unsupported element size");
  }
  return OkStatus();
}

}  // namespace

const OpImpl kOp_RESIZE_BILINEAR = {ParseBilinear, PrepareResize, EvalBilinear, EvalBilinearRef, false};
const OpImpl kOp_RESIZE_NEAREST_NEIGHBOR = {ParseNearest, PrepareResize, EvalNearest<false>, EvalNearest<true>, false};

void pooling::ResizeParamsOf(const Node& n, bool* align_corners, bool* half_pixel_centers) { const ResizeParams& p = n.P<ResizeParams>(); *align_corners = p.align_corners; *half_pixel_centers = p.half_pixel_centers; }
void pooling::ResizeBilinearSource(int v, int in, int out, bool ac, bool hp, int* lo, int* hi, float* frac) { float s; Interp(v, Scale(in, out, ac), hp, in, &s, lo, hi); *frac = s - float(*lo); }
void pooling::ResizeBilinearSourceInt(int v, int in, int out, bool ac, bool hp, int* lo, int* hi, float* frac) {
  int32_t s, l, h;
  InterpInt(v, Scale10(in, out, ac), hp, in, &s, &l, &h);
  *lo = l;
  *hi = h;
  *frac = float(s - (1 << 10) * l) / 1024.0f;
}
int pooling::ResizeNearestSource(int v, int in, int out, bool ac, bool hp) { return Nearest(v, in, out, ac, hp); }

}  // namespace tflite_gpu
