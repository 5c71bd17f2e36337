// Helpers shared by the conv family (CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, TRANSPOSE_CONV,
// BATCH_MATMUL, Convolution2DTransposeBias).
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "ops/op_registry.h"
#include "runtime/thread_pool.h"

namespace tflite_gpu {
namespace conv {

// TFLite BuiltinOptions union ids of the tables this family reads.
constexpr uint8_t kConv2DOptions = 1;
constexpr uint8_t kDepthwiseConv2DOptions = 2;
constexpr uint8_t kFullyConnectedOptions = 8;
constexpr uint8_t kTransposeConvOptions = 49;
constexpr uint8_t kBatchMatMulOptions = 101;

// The options table when it has the expected type; otherwise an empty view (schema defaults),
// as TFLite's builtin_options_as_X() returns null for another table type.
inline OptionsView Opts(const OptionsView& o, uint8_t expected) {
  if (o.type == expected) return o;
  OptionsView empty;
  empty.custom = o.custom;
  empty.custom_size = o.custom_size;
  return empty;
}

// Fused activations: ActivationBounds / ActivationName (ops/activation.h).

// min(max(v, lo), hi) with NaN passing through, as TFLite's ActivationFunctionWithMinMax.
inline float Clamp(float v, float lo, float hi) {
  float x = v < lo ? lo : v;
  return hi < x ? hi : x;
}

inline std::string Str(const Dims& d) { return DimsToString(d); }

// A data-dependent failure at invoke (RuntimeError in Python), naming the op.
inline Status EvalError(const OpContext& ctx, const std::string& msg) {
  const Node& n = ctx.node();
  return Status(StatusCode::kFailedPrecondition, std::string(n.op ? n.op->name : "op") + ": " + msg);
}

inline Status CheckFloat(const OpContext& ctx, const Tensor& t, const char* what) {
  if (t.type != DType::kFloat32)
    return ctx.Error(std::string(what) + " has type " + DTypeName(t.type) +
                     "; only FLOAT32 is supported (quantized/hybrid kernels are not implemented)");
  return OkStatus();
}

// TFLite requires the model's output tensor to be FLOAT32 for these float kernels.
inline Status CheckOutputFloat(OpContext& ctx) {
  const Tensor& o = ctx.output(0);
  if (o.type != DType::kFloat32)
    return ctx.Error(std::string("output has type ") + DTypeName(o.type) + ", expected FLOAT32");
  return OkStatus();
}

inline Status CheckRank(const OpContext& ctx, const Tensor& t, int rank, const char* what) {
  if (int(t.shape.size()) != rank)
    return ctx.Error(std::string(what) + " must have rank " + std::to_string(rank) + ", got shape " + Str(t.shape));
  return OkStatus();
}

// Optional bias (input 2) of a conv-like op: FLOAT32 with one value per output channel.
inline Status CheckBias(OpContext& ctx, int64_t out_c) {
  if (!ctx.has_input(2)) return OkStatus();
  const Tensor& b = ctx.input(2);
  TFG_RETURN_IF_ERROR(CheckFloat(ctx, b, "bias"));
  if (b.num_elements() != out_c)
    return ctx.Error("bias has " + std::to_string(b.num_elements()) + " elements, expected " + std::to_string(out_c));
  return OkStatus();
}

// Output size and leading padding of a windowed op, TFLite's rules.
inline void WindowOutput(int padding, int in_h, int in_w, int k_h, int k_w, int stride_h, int stride_w, int dil_h,
                         int dil_w, int* out_h, int* out_w, int* pad_t, int* pad_l) {
  Padding pad = padding == 0 ? Padding::kSame : Padding::kValid;
  *out_h = ConvOutputSize(pad, in_h, k_h, stride_h, dil_h);
  *out_w = ConvOutputSize(pad, in_w, k_w, stride_w, dil_w);
  *pad_t = ConvPadBefore(pad, in_h, k_h, stride_h, dil_h, *out_h);
  *pad_l = ConvPadBefore(pad, in_w, k_w, stride_w, dil_w, *out_w);
}

// Padding, strides and dilation of a windowed op (CONV_2D, DEPTHWISE_CONV_2D): the reason they
// are unusable, or "".
inline std::string WindowError(int padding, int stride_w, int stride_h, int dil_w, int dil_h) {
  if (padding != 0 && padding != 1) return "unknown padding " + std::to_string(padding);
  if (stride_w <= 0 || stride_h <= 0)
    return "strides must be positive, got stride_w=" + std::to_string(stride_w) + " stride_h=" + std::to_string(stride_h);
  if (dil_w <= 0 || dil_h <= 0)
    return "dilation factors must be positive, got dilation_w_factor=" + std::to_string(dil_w) +
           " dilation_h_factor=" + std::to_string(dil_h);
  return std::string();
}
inline Status CheckWindow(const OpContext& ctx, int padding, int stride_w, int stride_h, int dil_w, int dil_h) {
  std::string e = WindowError(padding, stride_w, stride_h, dil_w, dil_h);
  return e.empty() ? OkStatus() : ctx.Error(e);
}

// Product of dims as int64 (dims are validated non-negative by the interpreter).
inline int64_t Prod(const Dims& d, size_t from = 0, size_t to = SIZE_MAX) {
  int64_t p = 1;
  for (size_t i = from; i < d.size() && i < to; ++i) p *= d[i];
  return p;
}

// Rejects a size that would overflow the kernels' int arithmetic or ask for absurd memory
// (hostile shapes): `v` must lie in [0, 2^31).
inline Status CheckSize(const OpContext& ctx, int64_t v, const char* what) {
  if (v < 0 || v > int64_t(std::numeric_limits<int32_t>::max()))
    return ctx.Error(std::string(what) + " is too large (" + std::to_string(v) + ")");
  return OkStatus();
}

// 64-byte aligned float storage for packed weights (kept in node.user_data).
class AlignedFloats {
 public:
  // Returns null when the memory cannot be had.
  float* Resize(size_t n) {
    if (n > cap_) {
      raw_.reset(new (std::nothrow) float[n + 16]);
      if (!raw_) {
        cap_ = size_ = 0;
        data_ = nullptr;
        return nullptr;
      }
      uintptr_t p = reinterpret_cast<uintptr_t>(raw_.get());
      data_ = reinterpret_cast<float*>((p + 63) / 64 * 64);
      cap_ = n;
    }
    size_ = n;
    return data_;
  }
  float* data() { return data_; }
  const float* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  std::unique_ptr<float[]> raw_;
  float* data_ = nullptr;
  size_t size_ = 0, cap_ = 0;
};

// Identity of constant weights already packed, to skip repacking on a re-prepare.
struct PackKey {
  const void* w = nullptr;
  const void* b = nullptr;
  Dims wshape;
  int64_t extra = 0;
  bool operator==(const PackKey& o) const { return w == o.w && b == o.b && wshape == o.wshape && extra == o.extra; }
};

// Scratch layout helper: consecutive 64-byte aligned float regions.
struct ScratchLayout {
  size_t floats = 0;
  size_t Add(size_t n) {
    size_t off = floats;
    floats += (n + 15) / 16 * 16;
    return off;
  }
  size_t bytes() const { return floats * sizeof(float); }
};

inline int PoolThreads(ThreadPool* pool) { return pool ? std::max(1, pool->num_threads()) : 1; }

// Parsed options for the GPU kernels (*_gpu.cc); each accessor is defined at the end of its
// op's CPU .cc file. Fields an op does not have keep their defaults.
struct GpuConvOptions {
  int padding = 0;  // 0 SAME, 1 VALID (schema numbering); -1 unknown
  int stride_w = 1, stride_h = 1, dil_w = 1, dil_h = 1, act = 0;
  bool keep_num_dims = false;  // FULLY_CONNECTED
  int weights_format = 0;      // FULLY_CONNECTED
  bool adj_x = false, adj_y = false;  // BATCH_MATMUL
  bool custom_ok = true;       // Convolution2DTransposeBias: custom options well formed
};
// Window options shared by CONV_2D and DEPTHWISE_CONV_2D. Both options tables hold padding (0),
// stride_w (1), stride_h (2); the activation and the two dilation fields sit at op-specific ids.
struct WindowParams {
  int padding = 0, stride_w = 0, stride_h = 0, act = 0, dil_w = 1, dil_h = 1;
};
inline void ReadWindow(const OptionsView& o, int act_field, int dil_w_field, WindowParams* p) {
  p->padding = o.Get<int8_t>(0, 0);
  p->stride_w = o.Get<int32_t>(1, 0);
  p->stride_h = o.Get<int32_t>(2, 0);
  p->act = o.Get<int8_t>(act_field, 0);
  p->dil_w = o.Get<int32_t>(dil_w_field, 1);
  p->dil_h = o.Get<int32_t>(dil_w_field + 1, 1);
}
inline GpuConvOptions GpuOptionsOf(const WindowParams& p) {
  GpuConvOptions o;
  o.padding = p.padding;
  o.stride_w = p.stride_w;
  o.stride_h = p.stride_h;
  o.dil_w = p.dil_w;
  o.dil_h = p.dil_h;
  o.act = p.act;
  return o;
}

// One CONV_2D / DEPTHWISE_CONV_2D convolution, described once. Conv2DGeometry / DepthwiseGeometry
// compute it from the window options and the input / filter shapes (TFLite's output size and
// padding rules); the CPU prepare keeps it in the node state for its kernels, and the GPU check and
// builder (conv2d_gpu.cc, depthwise_gpu.cc) take the same struct from the same function.
struct ConvGeometry {
  int batch = 0, in_h = 0, in_w = 0, in_c = 0;
  int out_h = 0, out_w = 0, out_c = 0;
  int k_h = 0, k_w = 0;
  int f_c = 1;     // filter channels per group (CONV_2D); 1 for DEPTHWISE_CONV_2D
  int groups = 1;  // CONV_2D: in_c / f_c
  int mult = 1;    // DEPTHWISE_CONV_2D: depth multiplier out_c / in_c (from the shapes, as TFLite)
  int stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1;
  int pad_t = 0, pad_l = 0;
  int act = 0;
  float lo = 0.f, hi = 0.f;  // the fused activation's clamp
};
// InvalidArgument with the reason when the options or shapes are unusable (the CPU prepare
// prefixes the op name; the GPU check reports the reason as unsupported). The bias is checked by
// the caller. Defined in conv2d.cc and depthwise.cc.
Status Conv2DGeometry(const WindowParams& p, const Dims& in, const Dims& filter, ConvGeometry* g);
Status DepthwiseGeometry(const WindowParams& p, const Dims& in, const Dims& filter, ConvGeometry* g);
// The same from a parsed node (the GPU side has no access to the op's params type).
Status Conv2DGeometryOf(const Node& n, const Dims& in, const Dims& filter, ConvGeometry* g);
Status DepthwiseGeometryOf(const Node& n, const Dims& in, const Dims& filter, ConvGeometry* g);

GpuConvOptions Conv2DOptionsOf(const Node& n);
GpuConvOptions DepthwiseOptionsOf(const Node& n);
GpuConvOptions FullyConnectedOptionsOf(const Node& n);
GpuConvOptions TransposeConvOptionsOf(const Node& n);  // TRANSPOSE_CONV and Convolution2DTransposeBias
GpuConvOptions BatchMatMulOptionsOf(const Node& n);

}  // namespace conv
}  // namespace tflite_gpu
