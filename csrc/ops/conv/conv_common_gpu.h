// GPU helpers shared by the conv family's generators (*_gpu.cc next to each op's CPU kernel:
// conv2d_gpu.cc, depthwise_gpu.cc, fully_connected_gpu.cc, transpose_conv_gpu.cc,
// batch_matmul_gpu.cc).
//
// Convolution-like ops (CONV_2D, FULLY_CONNECTED, TRANSPOSE_CONV, Convolution2DTransposeBias and
// BATCH_MATMUL with a constant rhs) share one generator (EmitConv). Weights are packed on the host as
//   [item group g][ky][kx][src slice s][j < ST][i < 4] float4
// where an item group is ST consecutive destination slices and the float4 holds the weights of
// the 4 output lanes for input lane i, so the inner loop does, per source slice,
//   acc += in.x * w0 + in.y * w1 + in.z * w2 + in.w * w3
// for ST destination slices x XT output positions per work item (all loads float4; the lanes of
// a warp share g, so weight loads are uniform). Positions are flattened over B x H x W. When the
// grid would be small (little spatial size), the source-slice loop is split over KSPLIT items of
// a work group and reduced in local memory. Tile choices (ST, XT, KSPLIT) were tuned on an H200
// with MobileNet v1/v2 at batch 1 and 32.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "gpu/gpu_op.h"
#include "ops/conv/conv_common.h"

namespace tflite_gpu {
namespace conv_gpu {

using gpu::BHWC;
using gpu::GpuBuildContext;
using gpu::GpuCheckContext;
using gpu::GpuTensorRef;
using gpu::KernelBuilder;

inline std::string I(int64_t v) { return std::to_string(v); }

// The fused activation as TFLite's float conv kernels apply it: a clamp for RELU, RELU6 and
// RELU_N1_TO_1 (NaN passes through, as conv::Clamp); NONE, TANH and SIGN_BIT do nothing.
inline std::string ActivationCode(int act, const std::string& v) { return ActivationClampCode(act, v, false); }

inline Status CheckAct(int act) {
  float lo, hi;
  if (!ActivationBounds(act, &lo, &hi)) return Unimplemented("unsupported fused activation " + I(act));
  return OkStatus();
}

inline Status CheckNonEmpty(const GpuCheckContext& c) {
  for (int i = 0; i < c.num_outputs(); ++i)
    if (c.output(i).num_elements() == 0) return Unimplemented("empty output");
  if (c.has_input(0) && c.input(0).num_elements() == 0) return Unimplemented("empty input");
  // Kernels index tensors with 32-bit ints.
  for (int i = 0; i < c.num_inputs(); ++i)
    if (c.has_input(i) && c.input(i).num_elements() > (int64_t(1) << 29)) return Unimplemented("tensor too large");
  for (int i = 0; i < c.num_outputs(); ++i)
    if (c.output(i).num_elements() > (int64_t(1) << 29)) return Unimplemented("tensor too large");
  return OkStatus();
}

inline int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Work items (threads) the generators aim at: below, they trade per-item reuse (several outputs
// per item) for parallelism, and split the source-slice loop of convolutions over a work group.
constexpr int64_t kTargetItems = 131072;
constexpr int kMaxXT = 4;  // positions per item (8 measured slower on an H200)
constexpr int kMaxSplit = 16;
constexpr int kMinSplitWork = 8;  // source slices x taps per item when the loop is split
// DEPTHWISE_CONV_2D halves its rows per item (4, 2, 1) while it has fewer items than this.
// Measured on an NVIDIA H100 (MobileNet v1/v2 batch 1, CUDA graph, each kernel's time from CUPTI,
// rows forced per layer, TFLITE_GPU_DW_ROWS): the fastest row count gave each layer 37K-56K items
// where it could, else the most (112x112x32 4 -> 2 rows: 4.6 -> 3.7 us; 56x56x96 stride 2: 6.3 ->
// 5.2; 28x28x192 2 -> 1: 3.3 -> 2.7); 16384 (before) stopped at 12K-28K.
constexpr int64_t kDwTargetItems = 32768;
// A 1x1 conv computing its depthwise input (DEPTHWISE_CONV_2D + CONV_2D fusion): destination
// slices per item (each item group recomputes the depthwise values it reads, so the fused work is
// pointwise x (1 + taps / (4 * ST))), and at most this many positions per item (ST x XT float4
// accumulators, as the unfused 4 x 4). Not tuned on a GPU yet.
constexpr int kFusedST = 8;
constexpr int kMaxFusedXT = 2;
inline int FusedSliceTile(int dst_slices) { return std::min(kFusedST, dst_slices); }

// ------------------------------------------------------------------ convolution-like generator

struct ConvCore {
  int KH = 1, KW = 1, SH = 1, SW = 1, DH = 1, DW = 1, PT = 0, PL = 0;
  int OC = 0, IC = 0;  // channels of the dense weight view
  int groups = 1;      // conv groups: W(oc, ., ., ic) is zero unless ic is in oc's group
  int act = 0;
  bool transposed = false;  // TRANSPOSE_CONV gather
  bool remap = false;       // 1x1 where output pixel r (row-major over B, H, W) reads input pixel r
  bool allow_xt = true;
  std::function<float(int, int, int, int)> W;  // dense weights (oc, ky, kx, ic)
  const float* bias = nullptr;                  // [OC] or nullptr
};

// The generator's view of a CONV_2D geometry (weights and bias set by the caller).
inline ConvCore CoreOf(const conv::ConvGeometry& g) {
  ConvCore c;
  c.KH = g.k_h;
  c.KW = g.k_w;
  c.SH = g.stride_h;
  c.SW = g.stride_w;
  c.DH = g.dil_h;
  c.DW = g.dil_w;
  c.PT = g.pad_t;
  c.PL = g.pad_l;
  c.OC = g.out_c;
  c.IC = g.in_c;
  c.groups = g.groups;
  c.act = g.act;
  return c;
}

// A bias (or other per-channel constant) zero-padded to `padded` floats (a whole number of slices
// or of the kernel's channel tile); nullptr gives zeros.
inline std::vector<float> PaddedBias(const float* b, int n, size_t padded) {
  std::vector<float> out(padded, 0.f);
  if (b)
    for (int i = 0; i < n; ++i) out[i] = b[i];
  return out;
}

inline Status CheckConstBias(const GpuCheckContext& c, int i, int n) {
  if (!c.has_input(i)) return OkStatus();
  TFG_RETURN_IF_ERROR(c.Constant(i, "bias"));
  if (c.input(i).num_elements() != n) return Unimplemented("bias size differs from the output channels");
  return OkStatus();
}

// A 1x1, stride-1 layer of M positions, dS destination and SS source slices whose input is computed
// (GpuInlineFn): how many times the split-K kernel computes each input value (its work groups along
// N), or 0 when it would not run there (then the old fused kernel / no fusion, see AcceptInline).
int64_t SplitKComputedTimes(const GpuBuildContext& ctx, int64_t M, int dS, int SS);

Status EmitConv(GpuBuildContext& ctx, const std::string& name, const GpuTensorRef& src, const GpuTensorRef& dst,
                const ConvCore& c);

// 1x1 stride-1 convolutions on NVIDIA tensor cores (conv_mma_gpu.cc): whether the device and the
// precision allow it for this input (fp16 storage, compute capability 8.0+, a plain input tensor;
// TFLITE_GPU_CONV_MMA=0 turns it off), and the generator (EmitConv calls it for such layers).
bool WantMma(GpuBuildContext& ctx, const GpuTensorRef& src, const GpuTensorRef& dst);
Status EmitPointwiseMma(GpuBuildContext& ctx, const std::string& name, const GpuTensorRef& src,
                        const GpuTensorRef& dst, const ConvCore& c);

}  // namespace conv_gpu
}  // namespace tflite_gpu
