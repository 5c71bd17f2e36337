// GPU side of the pooling family: AVERAGE_POOL_2D, MAX_POOL_2D, RESIZE_BILINEAR,
// RESIZE_NEAREST_NEIGHBOR, SOFTMAX, MEAN, SUM, REDUCE_MAX, REDUCE_MIN, REDUCE_PROD (float32, rank <= 4). ARG_MAX is refused (its
// output is an integer tensor; GPU tensors hold floats).
//
// Numerics follow the CPU kernels (csrc/ops/pooling/*.cc): the average divides by the in-bounds
// count, the fused activation clamps to [lowest, max] unless it is a RELU (so +-inf become
// +-FLT_MAX and NaN stays NaN); resize source indices and weights are computed on the host by
// the CPU kernels' own functions and uploaded exactly (float, even in fp16 modes); softmax and
// reductions accumulate in float, with a work-group reduction when one output reads many
// elements.
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "gpu/gpu_op.h"
#include "ops/pooling/pool_common.h"

namespace tflite_gpu {
namespace {

using gpu::BHWC;
using gpu::GpuBuildContext;
using gpu::GpuCheckContext;
using gpu::KernelBuilder;

std::string I(int64_t v) { return std::to_string(v); }

std::string F(float v) { return gpu::FloatLiteral(v); }

using gpu::NextPow2;

// Largest power of two <= the device's work-group limit, capped at `cap`.
size_t WorkGroupCap(const gpu::GpuDeviceCaps& caps, size_t cap) {
  size_t p = 1;
  while (p * 2 <= caps.max_work_group_size && p * 2 <= cap) p *= 2;
  return p;
}

Status NonEmpty(const Tensor& t, const char* what) {
  if (t.num_elements() <= 0) return Unimplemented(std::string(what) + " is empty; the GPU takes non-empty tensors");
  return OkStatus();
}

// ------------------------------------------------------------------ work-group reduction helper
// Emits code that reduces the float4 `acc` (op "+" or "max") over the LSZ work items of dim 0;
// afterwards every work item holds the total in `acc`. Must run at the same point for every
// work item of the group.
std::string GroupReduce(const std::string& lds, const std::string& acc, bool max) {
  std::string comb = max ? lds + "[lid] = fmax(" + lds + "[lid], " + lds + "[lid + st])"
                         : lds + "[lid] += " + lds + "[lid + st]";
  return lds + "[lid] = " + acc + ";\n"
         "barrier(CLK_LOCAL_MEM_FENCE);\n"
         "for (int st = LSZ / 2; st > 0; st >>= 1) {\n"
         "  if (lid < st) " + comb + ";\n"
         "  barrier(CLK_LOCAL_MEM_FENCE);\n"
         "}\n" +
         acc + " = " + lds + "[0];\n"
         "barrier(CLK_LOCAL_MEM_FENCE);\n";
}

// The same with a combine macro RCOMB(a, b) the kernel defines (REDUCE_MAX / MIN / PROD).
std::string GroupReduceComb(const std::string& lds, const std::string& acc) {
  return lds + "[lid] = " + acc + ";\n"
         "barrier(CLK_LOCAL_MEM_FENCE);\n"
         "for (int st = LSZ / 2; st > 0; st >>= 1) {\n"
         "  if (lid < st) " + lds + "[lid] = RCOMB(" + lds + "[lid], " + lds + "[lid + st]);\n"
         "  barrier(CLK_LOCAL_MEM_FENCE);\n"
         "}\n" +
         acc + " = " + lds + "[0];\n"
         "barrier(CLK_LOCAL_MEM_FENCE);\n";
}

// ------------------------------------------------------------------ AVERAGE / MAX POOL
Status CheckPool(const GpuCheckContext& c) {
  TFG_RETURN_IF_ERROR(c.InputsFloat32({0}));
  TFG_RETURN_IF_ERROR(c.OutputsFloat32());
  if (c.input(0).shape.size() != 4) return Unimplemented("input must be 4-D (NHWC)");
  TFG_RETURN_IF_ERROR(NonEmpty(c.input(0), "the input"));
  TFG_RETURN_IF_ERROR(NonEmpty(c.output(0), "the output"));
  return OkStatus();
}

template <bool kMax>
Status BuildPool(GpuBuildContext& ctx) {
  int padding, sh, sw, fh, fw, act;
  pooling::Pool2DParamsOf(ctx.node(), &padding, &sh, &sw, &fh, &fw, &act);
  const BHWC in = ctx.input(0).shape;
  auto out_ref = ctx.output(0);
  const BHWC o = out_ref.shape;
  Padding pad = static_cast<Padding>(padding);
  const int ph = ConvPadBefore(pad, in.h, fh, sh, 1, o.h);
  const int pw = ConvPadBefore(pad, in.w, fw, sw, 1, o.w);
  float lo, hi;
  pooling::FloatActivationRange(act, &lo, &hi);
  auto& kb = ctx.NewKernel(kMax ? "max_pool_2d" : "average_pool_2d");
  kb.AddInput("src", ctx.input(0));
  kb.AddOutput("dst", out_ref);
  const std::string init = kMax ? F(std::numeric_limits<float>::lowest()) : std::string("0.0f");
  const std::string combine = kMax ? "acc = fmax(acc, v);" : "acc += v;";
  const int64_t window = int64_t(fh) * fw;
  const size_t L = window >= 32 ? std::min(WorkGroupCap(ctx.caps(), 128), std::max<size_t>(32, NextPow2(size_t(window)) / 2))
                                : 1;
  std::string b;
  if (L <= 1) {
    // One work item per output slice, looping over the in-bounds window.
    b = gpu::PerSliceGrid(kb, o);
  } else {
    // Large windows (global pooling): a work group of LSZ items per output slice.
    kb.AddDefine("#define LSZ " + I(int64_t(L)));
    kb.grid = {L, size_t(o.w) * o.h, size_t(o.slices()) * o.b};
    kb.local = {L, 1, 1};
    b = "__local float4 red_[LSZ];\n"
        "int lid = get_local_id(0), xy = get_global_id(1), bs = get_global_id(2);\n"
        "if (xy >= dst_W * dst_H || bs >= dst_S * dst_B) return;\n"  // uniform over the group
        "int x = xy % dst_W, y = xy / dst_W, s = bs % dst_S, b = bs / dst_S;\n";
  }
  b += "int iy0 = y * " + I(sh) + " - " + I(ph) + ", ix0 = x * " + I(sw) + " - " + I(pw) + ";\n"
       "int fy0 = max(0, -iy0), fy1 = min(" + I(fh) + ", src_H - iy0);\n"
       "int fx0 = max(0, -ix0), fx1 = min(" + I(fw) + ", src_W - ix0);\n"
       "float4 acc = (float4)(" + init + ");\n";
  if (L <= 1) {
    b += "for (int fy = fy0; fy < fy1; ++fy) {\n"
         "  for (int fx = fx0; fx < fx1; ++fx) {\n"
         "    float4 v = READ_src(b, iy0 + fy, ix0 + fx, s);\n    " + combine + "\n"
         "  }\n}\n";
  } else {
    b += "int nw = fx1 - fx0, nk = (fy1 - fy0) * nw;\n"
         "for (int k = lid; k < nk; k += LSZ) {\n"
         "  int fy = fy0 + k / nw, fx = fx0 + k % nw;\n"
         "  float4 v = READ_src(b, iy0 + fy, ix0 + fx, s);\n  " + combine + "\n"
         "}\n" + GroupReduce("red_", "acc", kMax);
  }
  if (!kMax) b += "acc = acc / (float)((fy1 - fy0) * (fx1 - fx0));\n";
  // NaN-preserving clamp, as std::min(std::max(v, lo), hi).
  b += "acc = select(acc, (float4)(" + F(lo) + "), acc < (float4)(" + F(lo) + "));\n"
       "acc = select(acc, (float4)(" + F(hi) + "), acc > (float4)(" + F(hi) + "));\n";
  if (L > 1) b += "if (lid == 0) ";
  b += "WRITE_dst(acc, b, y, x, s);\n";
  kb.body = b;
  return OkStatus();
}

// (defined with MEAN / SUM below)
Status ReducedAxes(const Tensor& in, const Tensor& axes, bool red[4]);

// A global average (output 1x1, the window covering the whole input from its origin) computed by
// its reader (GpuInlineFn: the 1x1 conv / FULLY_CONNECTED classifier after it), one slice at a
// time; `count` values (the clipped window), clamped to [lo, hi].
std::string GlobalAverageBody(const std::string& X, const BHWC& in, float lo, float hi) {
  std::string b = "float4 acc_ = (float4)(0.0f);\n";
  b += "for (int yy_ = 0; yy_ < " + I(in.h) + "; ++yy_)\n";
  b += "  for (int xx_ = 0; xx_ < " + I(in.w) + "; ++xx_) acc_ += READ_" + X + "(b, yy_, xx_, s);\n";
  b += "r_ = acc_ / " + F(float(int64_t(in.h) * in.w)) + ";\n";
  if (lo > -std::numeric_limits<float>::infinity()) b += "r_ = select(r_, (float4)(" + F(lo) + "), r_ < (float4)(" + F(lo) + "));\n";
  if (hi < std::numeric_limits<float>::infinity()) b += "r_ = select(r_, (float4)(" + F(hi) + "), r_ > (float4)(" + F(hi) + "));\n";
  return b;
}

Status InlinePool(GpuBuildContext& ctx, KernelBuilder& kb, const std::string& P, std::string* body, int64_t* macs) {
  int padding, sh, sw, fh, fw, act;
  pooling::Pool2DParamsOf(ctx.node(), &padding, &sh, &sw, &fh, &fw, &act);
  const BHWC in = ctx.input(0).shape;
  BHWC o;
  gpu::ToBHWC(ctx.cpu_output(0).shape, &o);
  Padding pad = static_cast<Padding>(padding);
  if (o.h != 1 || o.w != 1 || fh < in.h || fw < in.w || ConvPadBefore(pad, in.h, fh, sh, 1, o.h) != 0 ||
      ConvPadBefore(pad, in.w, fw, sw, 1, o.w) != 0)
    return Unimplemented("not a global average");
  float lo, hi;
  pooling::FloatActivationRange(act, &lo, &hi);
  kb.AddInput(P + "x", ctx.input(0));
  *body = GlobalAverageBody(P + "x", in, lo, hi);
  *macs = int64_t(in.h) * in.w * 4;
  return OkStatus();
}

Status InlineMean(GpuBuildContext& ctx, KernelBuilder& kb, const std::string& P, std::string* body, int64_t* macs) {
  bool red[4];
  TFG_RETURN_IF_ERROR(ReducedAxes(ctx.cpu_input(0), ctx.cpu_input(1), red));
  const BHWC in = ctx.input(0).shape;
  BHWC o;
  gpu::ToBHWC(ctx.cpu_output(0).shape, &o);
  if (red[0] || red[3] || o.b != in.b || o.h != 1 || o.w != 1 || o.c != in.c) return Unimplemented("not a mean over H and W");
  kb.AddInput(P + "x", ctx.input(0));
  *body = GlobalAverageBody(P + "x", in, -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::infinity());
  *macs = int64_t(in.h) * in.w * 4;
  return OkStatus();
}

// ------------------------------------------------------------------ RESIZE
template <bool kBilinear>
Status CheckResize(const GpuCheckContext& c) {
  if (c.num_inputs() != 2) return Unimplemented("expects 2 inputs");
  TFG_RETURN_IF_ERROR(c.InputsFloat32({0}));
  TFG_RETURN_IF_ERROR(c.OutputsFloat32());
  if (c.input(0).shape.size() != 4) return Unimplemented("input must be 4-D (NHWC)");
  TFG_RETURN_IF_ERROR(c.Constant(1, "the size input"));
  TFG_RETURN_IF_ERROR(NonEmpty(c.input(0), "the input"));
  TFG_RETURN_IF_ERROR(NonEmpty(c.output(0), "the output"));
  if (c.output(0).shape.size() != 4) return Unimplemented("output must be 4-D (NHWC)");
  return OkStatus();
}

template <bool kBilinear>
Status BuildResize(GpuBuildContext& ctx) {
  bool ac, hp;
  pooling::ResizeParamsOf(ctx.node(), &ac, &hp);
  const BHWC in = ctx.input(0).shape;
  auto out_ref = ctx.output(0);
  const BHWC o = out_ref.shape;
  auto& kb = ctx.NewKernel(kBilinear ? "resize_bilinear" : "resize_nearest");
  kb.AddInput("src", ctx.input(0));
  kb.AddOutput("dst", out_ref);
  std::string b = gpu::PerSliceGrid(kb, o);
  if (kBilinear) {
    // Per output column / row: (lo, hi, frac, 0), exact floats.
    // INT8 / INT16 inputs: TFLite's integer kernel's source positions (10-bit fixed-point scales),
    // so the float view interpolates where the integer kernel does (UINT8: the float positions).
    const DType qt = ctx.cpu_input(0).type;
    const bool int_coords = qt == DType::kInt8 || qt == DType::kInt16;
    auto source = int_coords ? pooling::ResizeBilinearSourceInt : pooling::ResizeBilinearSource;
    std::vector<float> xs(size_t(o.w) * 4, 0.f), ys(size_t(o.h) * 4, 0.f);
    for (int i = 0; i < o.w; ++i) {
      int l, h;
      float f;
      source(i, in.w, o.w, ac, hp, &l, &h, &f);
      xs[i * 4] = float(l), xs[i * 4 + 1] = float(h), xs[i * 4 + 2] = f;
    }
    for (int i = 0; i < o.h; ++i) {
      int l, h;
      float f;
      source(i, in.h, o.h, ac, hp, &l, &h, &f);
      ys[i * 4] = float(l), ys[i * 4 + 1] = float(h), ys[i * 4 + 2] = f;
    }
    kb.AddConstBuffer("xs", std::move(xs), /*exact=*/true);
    kb.AddConstBuffer("ys", std::move(ys), /*exact=*/true);
    b += "float4 cx = LOADW4_xs(x), cy = LOADW4_ys(y);\n"
         "int x0 = (int)cx.x, x1 = (int)cx.y, y0 = (int)cy.x, y1 = (int)cy.y;\n"
         "float dx = cx.z, dy = cy.z, rx = 1.0f - dx, ry = 1.0f - dy;\n"
         "float4 v = READ_src(b, y0, x0, s) * (ry * rx) + READ_src(b, y1, x0, s) * (dy * rx) +\n"
         "           READ_src(b, y0, x1, s) * (ry * dx) + READ_src(b, y1, x1, s) * (dy * dx);\n"
         "WRITE_dst(v, b, y, x, s);\n";
  } else {
    std::vector<float> xs(size_t(o.w)), ys(size_t(o.h));
    for (int i = 0; i < o.w; ++i) xs[i] = float(pooling::ResizeNearestSource(i, in.w, o.w, ac, hp));
    for (int i = 0; i < o.h; ++i) ys[i] = float(pooling::ResizeNearestSource(i, in.h, o.h, ac, hp));
    kb.AddConstBuffer("xs", std::move(xs), /*exact=*/true);
    kb.AddConstBuffer("ys", std::move(ys), /*exact=*/true);
    b += "int ix = (int)LOADW_xs(x), iy = (int)LOADW_ys(y);\n"
         "WRITE_dst(READ_src(b, iy, ix, s), b, y, x, s);\n";
  }
  kb.body = b;
  return OkStatus();
}

// ------------------------------------------------------------------ SOFTMAX
Status CheckSoftmax(const GpuCheckContext& c) {
  TFG_RETURN_IF_ERROR(c.InputsFloat32({0}));
  TFG_RETURN_IF_ERROR(c.OutputsFloat32());
  TFG_RETURN_IF_ERROR(c.Rank4OrLess(c.input(0), "input"));
  if (c.input(0).shape.empty()) return Unimplemented("scalar input");
  TFG_RETURN_IF_ERROR(NonEmpty(c.input(0), "the input"));
  return OkStatus();
}

Status BuildSoftmax(GpuBuildContext& ctx) {
  const float beta = pooling::SoftmaxBetaOf(ctx.node());
  auto in_ref = ctx.input(0);
  auto out_ref = ctx.output(0);
  const BHWC o = out_ref.shape;
  const int S = o.slices();
  auto& kb = ctx.NewKernel("softmax");
  kb.AddInput("src", in_ref);
  kb.AddOutput("dst", out_ref);
  // Padding lanes of the last slice: excluded from the max (set to lowest) and the sum (0).
  std::string mask_max, mask_sum;
  for (int l = o.c % 4 == 0 ? 4 : o.c % 4; l < 4; ++l) {
    mask_max += std::string(" v.") + "xyzw"[l] + " = " + F(std::numeric_limits<float>::lowest()) + ";";
    mask_sum += std::string(" e.") + "xyzw"[l] + " = 0.0f;";
  }
  if (!mask_max.empty()) {
    mask_max = "if (s == " + I(S - 1) + ") {" + mask_max + " }\n";
    mask_sum = "if (s == " + I(S - 1) + ") {" + mask_sum + " }\n";
  }
  kb.AddDefine("#define BETA " + F(beta));
  std::string b;
  std::string loop_begin, loop_end = "}\n";
  const size_t L = S >= 16 ? std::min(WorkGroupCap(ctx.caps(), 128), NextPow2(size_t(S)) / 2) : 1;
  if (L <= 1) {
    // One work item per pixel.
    kb.grid = {size_t(o.w), size_t(o.h), size_t(o.b)};
    b = "int x = get_global_id(0), y = get_global_id(1), b = get_global_id(2);\n"
        "if (x >= dst_W || y >= dst_H || b >= dst_B) return;\n";
    loop_begin = "for (int s = 0; s < dst_S; ++s) {\n";
  } else {
    // A work group of LSZ items per pixel, striding over the slices.
    kb.AddDefine("#define LSZ " + I(int64_t(L)));
    kb.grid = {L, size_t(o.w), size_t(o.h) * o.b};
    kb.local = {L, 1, 1};
    b = "__local float4 red_[LSZ];\n"
        "int lid = get_local_id(0), x = get_global_id(1), hb = get_global_id(2);\n"
        "if (x >= dst_W || hb >= dst_H * dst_B) return;\n"  // uniform over the group
        "int y = hb % dst_H, b = hb / dst_H;\n";
    loop_begin = "for (int s = lid; s < dst_S; s += LSZ) {\n";
  }
  b += "float4 m4 = (float4)(" + F(std::numeric_limits<float>::lowest()) + ");\n" + loop_begin +
       "  float4 v = READ_src(b, y, x, s);\n  " + mask_max + "  m4 = fmax(m4, v);\n" + loop_end;
  if (L > 1) b += GroupReduce("red_", "m4", true);
  b += "float m = fmax(fmax(m4.x, m4.y), fmax(m4.z, m4.w));\n"
       "float4 sum4 = (float4)(0.0f);\n" + loop_begin +
       "  float4 e = exp((READ_src(b, y, x, s) - m) * BETA);\n  " + mask_sum + "  sum4 += e;\n" + loop_end;
  if (L > 1) b += GroupReduce("red_", "sum4", false);
  b += "float inv = 1.0f / ((sum4.x + sum4.y) + (sum4.z + sum4.w));\n" + loop_begin +
       "  float4 e = exp((READ_src(b, y, x, s) - m) * BETA) * inv;\n"
       "  WRITE_dst(e, b, y, x, s);\n" + loop_end;
  kb.body = b;
  return OkStatus();
}

// ------------------------------------------------------------------ MEAN / SUM
// The reduced BHWC axes of a node, or a reason.
Status ReducedAxes(const Tensor& in, const Tensor& axes, bool red[4]) {
  const int rank = int(in.shape.size());
  for (int i = 0; i < 4; ++i) red[i] = false;
  if (axes.type != DType::kInt32 && axes.type != DType::kInt64) return Unimplemented("axis tensor must be INT32 or INT64");
  const int64_t n = axes.num_elements();
  if (n > 0 && !axes.data) return Unimplemented("the axis tensor has no data");
  for (int64_t i = 0; i < n; ++i) {
    int64_t a = axes.type == DType::kInt32 ? int64_t(axes.as<int32_t>()[i]) : axes.as<int64_t>()[i];
    if (a < -rank || a >= rank) return Unimplemented("axis " + std::to_string(a) + " is out of range");
    int g = gpu::AxisToBHWC(int(a), rank);
    if (g < 0) return Unimplemented("axis does not map to BHWC");
    red[g] = true;
  }
  return OkStatus();
}

Status CheckReduce(const GpuCheckContext& c) {
  if (c.num_inputs() != 2) return Unimplemented("expects 2 inputs");
  TFG_RETURN_IF_ERROR(c.InputsFloat32({0}));
  TFG_RETURN_IF_ERROR(c.OutputsFloat32());
  TFG_RETURN_IF_ERROR(c.Rank4OrLess(c.input(0), "input"));
  TFG_RETURN_IF_ERROR(c.Rank4OrLess(c.output(0), "output"));
  TFG_RETURN_IF_ERROR(c.Constant(1, "the axis input"));
  TFG_RETURN_IF_ERROR(NonEmpty(c.input(0), "the input"));
  TFG_RETURN_IF_ERROR(NonEmpty(c.output(0), "the output"));
  bool red[4];
  TFG_RETURN_IF_ERROR(ReducedAxes(c.input(0), c.input(1), red));
  BHWC in, out;
  gpu::ToBHWC(c.input(0).shape, &in);
  gpu::ToBHWC(c.output(0).shape, &out);
  int64_t kept = 1;
  const int dims[4] = {in.b, in.h, in.w, in.c};
  for (int i = 0; i < 4; ++i)
    if (!red[i]) kept *= dims[i];
  if (kept != int64_t(out.b) * out.h * out.w * out.c) return Unimplemented("output size does not match the reduction");
  return OkStatus();
}

// kOp: 0 SUM, 1 MEAN, 2 REDUCE_MAX, 3 REDUCE_MIN, 4 REDUCE_PROD. The accumulator starts at the
// CPU kernels' init value (lowest / max / 1) and combines with RCOMB; MAX/MIN use fmax/fmin, which
// ignore a NaN operand as TFLite's "v > acc ? v : acc" does. Channel reductions of MAX/MIN/PROD
// mask the padding lanes of the last slice to the init value.
template <int kOp>
Status BuildReduce(GpuBuildContext& ctx) {
  constexpr bool kMean = kOp == 1;
  const bool mask = kOp >= 2;
  const char* init = kOp == 2 ? "-FLT_MAX" : kOp == 3 ? "FLT_MAX" : kOp == 4 ? "1.0f" : "0.0f";
  const char* comb = kOp == 2 ? "fmax(a, b)" : kOp == 3 ? "fmin(a, b)" : kOp == 4 ? "((a) * (b))" : "((a) + (b))";
  bool red[4];
  TFG_RETURN_IF_ERROR(ReducedAxes(ctx.cpu_input(0), ctx.cpu_input(1), red));
  auto in_ref = ctx.input(0);
  auto out_ref = ctx.output(0);
  const BHWC in = in_ref.shape, o = out_ref.shape;
  // N: the input with the reduced axes set to 1. The output holds N's elements in the same
  // (row-major) order, but its BHWC mapping may differ (keep_dims=false changes the rank).
  BHWC n = in;
  if (red[0]) n.b = 1;
  if (red[1]) n.h = 1;
  if (red[2]) n.w = 1;
  if (red[3]) n.c = 1;
  const bool aligned = (n == o);
  const int64_t count = (red[0] ? in.b : 1) * int64_t(red[1] ? in.h : 1) * (red[2] ? in.w : 1) * (red[3] ? in.c : 1);
  // Reduction domain per output slice (channels reduced: all input slices).
  const int DB = red[0] ? in.b : 1, DH = red[1] ? in.h : 1, DW = red[2] ? in.w : 1, DS = red[3] ? in.slices() : 1;
  const int64_t dom = int64_t(DB) * DH * DW * DS;

  static const char* const kNames[] = {"sum", "mean", "reduce_max", "reduce_min", "reduce_prod"};
  auto& kb = ctx.NewKernel(kNames[kOp]);
  kb.AddInput("src", in_ref);
  kb.AddOutput("dst", out_ref);
  kb.AddDefine("#define DB " + I(DB) + "\n#define DH " + I(DH) + "\n#define DW " + I(DW) + "\n#define DS " + I(DS) +
               "\n#define DOM " + I(dom) +
               "\n#define RINIT " + init + "\n#define RCOMB(a, b) " + comb);
  const size_t L = dom > 32 ? std::min(WorkGroupCap(ctx.caps(), 256), std::max<size_t>(32, NextPow2(size_t(dom)) / 4))
                            : 1;
  std::string b;
  if (L <= 1) {
    kb.grid = {size_t(o.w), size_t(o.h), size_t(o.slices()) * o.b};
    b = "int x = get_global_id(0), y = get_global_id(1), bs = get_global_id(2);\n"
        "if (x >= dst_W || y >= dst_H || bs >= dst_S * dst_B) return;\n"
        "int s = bs % dst_S, b = bs / dst_S;\n"
        "const int lid = 0;\n#define LSZ 1\n";
  } else {
    kb.AddDefine("#define LSZ " + I(int64_t(L)));
    kb.grid = {L, size_t(o.w) * o.h, size_t(o.slices()) * o.b};
    kb.local = {L, 1, 1};
    b = "__local float4 red_[LSZ];\n"
        "int lid = get_local_id(0), xy = get_global_id(1), bs = get_global_id(2);\n"
        "if (xy >= dst_W * dst_H || bs >= dst_S * dst_B) return;\n"  // uniform over the group
        "int x = xy % dst_W, y = xy / dst_W, s = bs % dst_S, b = bs / dst_S;\n";
  }
  auto coord = [&](int axis, const std::string& reduced, const std::string& kept) {
    return red[axis] ? reduced : kept;
  };
  b += "float4 acc = (float4)(RINIT);\n";
  // Padding lanes of input slice `sl` replaced by the init value (channel reductions only).
  auto masked = [&](const std::string& v, const std::string& sl) {
    if (!mask || !red[3]) return v;
    return "select(" + v + ", (float4)(RINIT), (int4)((" + sl + ") * 4) + (int4)(0, 1, 2, 3) >= (int4)(src_C))";
  };
  const std::string decode =
      "  int rx = k % DW, t_ = k / DW; int ry = t_ % DH; t_ = t_ / DH; int rs = t_ % DS, rb = t_ / DS;\n"
      "  (void)rx; (void)ry; (void)rs; (void)rb;\n";
  if (aligned) {
    // Output slice s reads input slice s (or, channels reduced, every slice: lanes summed at the end).
    b += "for (int k = lid; k < DOM; k += LSZ) {\n" + decode + "  acc = RCOMB(acc, " + masked("READ_src(" + coord(0, "rb", "b") + ", " +
         coord(1, "ry", "y") + ", " + coord(2, "rx", "x") + ", " + coord(3, "rs", "s") + ")", coord(3, "rs", "s")) +
         ");\n}\n";
    if (L > 1) b += GroupReduceComb("red_", "acc");
    if (red[3]) b += "acc = (float4)(RCOMB(RCOMB(acc.x, acc.y), RCOMB(acc.z, acc.w)), 0.0f, 0.0f, 0.0f);\n";
  } else {
    // Lane by lane: output element -> flat index -> coordinates in N.
    b += "int nb_[4], ny_[4], nx_[4], nc_[4];\n"
         "for (int l = 0; l < 4; ++l) {\n"
         "  int oc = min(s * 4 + l, dst_C - 1);\n"
         "  int f = ((b * dst_H + y) * dst_W + x) * dst_C + oc;\n"
         "  nc_[l] = f % " + I(n.c) + "; f /= " + I(n.c) + "; nx_[l] = f % " + I(n.w) + "; f /= " + I(n.w) +
         "; ny_[l] = f % " + I(n.h) + "; nb_[l] = f / " + I(n.h) + ";\n"
         "}\n"
         "float a_[4] = {RINIT, RINIT, RINIT, RINIT};\n"
         "for (int k = lid; k < DOM; k += LSZ) {\n" + decode +
         "  for (int l = 0; l < 4; ++l) {\n"
         "    float4 v = READ_src(" + coord(0, "rb", "nb_[l]") + ", " + coord(1, "ry", "ny_[l]") + ", " +
         coord(2, "rx", "nx_[l]") + ", " + coord(3, "rs", "nc_[l] / 4") + ");\n";
    if (red[3]) {
      b += "    v = " + masked("v", "rs") + ";\n"
           "    a_[l] = RCOMB(a_[l], RCOMB(RCOMB(v.x, v.y), RCOMB(v.z, v.w)));\n";
    } else {
      b += "    int c4 = nc_[l] % 4;\n"
           "    a_[l] = RCOMB(a_[l], c4 == 0 ? v.x : c4 == 1 ? v.y : c4 == 2 ? v.z : v.w);\n";
    }
    b += "  }\n}\nacc = (float4)(a_[0], a_[1], a_[2], a_[3]);\n";
    if (L > 1) b += GroupReduceComb("red_", "acc");
  }
  if (kMean) b += "acc = acc / " + F(float(count)) + ";\n";
  if (L > 1) b += "if (lid == 0) ";
  b += "WRITE_dst(acc, b, y, x, s);\n";
  kb.body = b;
  return OkStatus();
}

// ------------------------------------------------------------------ ARG_MAX
Status CheckArgMax(const GpuCheckContext&) {
  return Unimplemented("ARG_MAX produces integer indices; GPU tensors hold floats, so it stays on the CPU");
}
Status BuildRefused(GpuBuildContext&) { return Unimplemented("not supported on the GPU"); }

}  // namespace

const GpuOpSupport kGpu_AVERAGE_POOL_2D = {CheckPool, BuildPool<false>, nullptr, false, nullptr, nullptr, InlinePool};
const GpuOpSupport kGpu_MAX_POOL_2D = {CheckPool, BuildPool<true>, nullptr, false};
const GpuOpSupport kGpu_RESIZE_BILINEAR = {CheckResize<true>, BuildResize<true>, nullptr, false};
const GpuOpSupport kGpu_RESIZE_NEAREST_NEIGHBOR = {CheckResize<false>, BuildResize<false>, nullptr, false};
const GpuOpSupport kGpu_SOFTMAX = {CheckSoftmax, BuildSoftmax, nullptr, false};
const GpuOpSupport kGpu_MEAN = {CheckReduce, BuildReduce<1>, nullptr, false, nullptr, nullptr, InlineMean};
const GpuOpSupport kGpu_SUM = {CheckReduce, BuildReduce<0>, nullptr, false};
const GpuOpSupport kGpu_REDUCE_MAX = {CheckReduce, BuildReduce<2>, nullptr, false};
const GpuOpSupport kGpu_REDUCE_MIN = {CheckReduce, BuildReduce<3>, nullptr, false};
const GpuOpSupport kGpu_REDUCE_PROD = {CheckReduce, BuildReduce<4>, nullptr, false};
const GpuOpSupport kGpu_ARG_MAX = {CheckArgMax, BuildRefused, nullptr, false};

}  // namespace tflite_gpu
