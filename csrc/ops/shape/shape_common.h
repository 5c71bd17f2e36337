// Helpers shared by the shape family (type-generic data movement ops).
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ops/op_registry.h"
#include "runtime/thread_pool.h"

namespace tflite_gpu {
namespace shape_ops {

// Element sizes the data movement kernels handle (1, 2, 4 or 8 bytes: every numeric type but
// complex128; strings/resources have DTypeSize 0). The packed types (INT4 / UINT4 / INT2, held
// one byte an element) move like 1-byte types but only where an op lists them (PackedOk), as
// LiteRT's kernels take them only there.
enum PackedOk : unsigned { kNoPacked = 0, kPackedInt4 = 1, kPackedUInt4 = 2, kPackedInt2 = 4 };
inline bool MovableType(DType t, unsigned packed_ok = kNoPacked) {
  switch (t) {
    case DType::kInt4: return (packed_ok & kPackedInt4) != 0;
    case DType::kUInt4: return (packed_ok & kPackedUInt4) != 0;
    case DType::kInt2: return (packed_ok & kPackedInt2) != 0;
    default: break;
  }
  size_t s = DTypeSize(t);
  return s == 1 || s == 2 || s == 4 || s == 8;
}

inline Status CheckMovable(const OpContext& ctx, const Tensor& t, const char* what, unsigned packed_ok = kNoPacked) {
  if (!MovableType(t.type, packed_ok))
    return ctx.Error(std::string(what) + " has unsupported type " + DTypeName(t.type));
  return OkStatus();
}

inline Status CheckSameType(const OpContext& ctx, const Tensor& a, const Tensor& b, const char* what_a,
                            const char* what_b) {
  if (a.type != b.type)
    return ctx.Error(std::string(what_a) + " has type " + DTypeName(a.type) + " but " + what_b + " has type " +
                     DTypeName(b.type));
  return OkStatus();
}

// Calls fn(T{}) with an unsigned integer type of `es` bytes (es in {1,2,4,8}).
template <typename Fn>
auto BySize(size_t es, Fn&& fn) {
  switch (es) {
    case 1: return fn(uint8_t());
    case 2: return fn(uint16_t());
    case 4: return fn(uint32_t());
    default: return fn(uint64_t());
  }
}

inline int64_t Prod(const Dims& d, int from, int to) {
  int64_t p = 1;
  for (int i = from; i < to; ++i) p *= d[i];
  return p;
}

// TFLite's "legacy" per-tensor quantization (scale, zero_point): set only for one-scale tensors.
struct LegacyQuant {
  float scale = 0.f;
  int32_t zero_point = 0;
};
inline LegacyQuant Legacy(const Tensor& t) {
  LegacyQuant q;
  if (t.quant.scale.size() == 1) {
    q.scale = t.quant.scale[0];
    q.zero_point = t.quant.zero_point.empty() ? 0 : int32_t(t.quant.zero_point[0]);
  }
  return q;
}
inline bool IsQuantized(const Tensor& t) { return !t.quant.scale.empty(); }
inline bool SameLegacyQuant(const Tensor& a, const Tensor& b) {
  LegacyQuant x = Legacy(a), y = Legacy(b);
  return x.scale == y.scale && x.zero_point == y.zero_point;
}

// Checks that a tensor holds data for all its elements.
inline Status CheckHasData(const OpContext& ctx, const Tensor& t, const char* what) {
  int64_t n = t.num_elements();
  if (n < 0) return ctx.Error(std::string(what) + " has an invalid shape " + DimsToString(t.shape));
  size_t need = size_t(n) * DTypeSize(t.type);
  if (need > 0 && (!t.data || t.bytes < need))
    return ctx.Error(std::string(what) + " has no data (" + std::to_string(t.bytes) + " bytes for shape " +
                     DimsToString(t.shape) + ")");
  return OkStatus();
}

// Reads an integer tensor (int32 or int64; int16/int8 when allow_small) into int64 values.
inline Status ReadInts(const OpContext& ctx, const Tensor& t, const char* what, std::vector<int64_t>* out,
                       bool allow_small = false) {
  out->clear();
  bool ok = t.type == DType::kInt32 || t.type == DType::kInt64 ||
            (allow_small && (t.type == DType::kInt16 || t.type == DType::kInt8));
  if (!ok) return ctx.Error(std::string(what) + " has type " + DTypeName(t.type) + ", expected INT32 or INT64");
  TFG_RETURN_IF_ERROR(CheckHasData(ctx, t, what));
  int64_t n = t.num_elements();
  out->resize(size_t(n));
  for (int64_t i = 0; i < n; ++i) {
    switch (t.type) {
      case DType::kInt32: (*out)[i] = t.as<int32_t>()[i]; break;
      case DType::kInt64: (*out)[i] = t.as<int64_t>()[i]; break;
      case DType::kInt16: (*out)[i] = t.as<int16_t>()[i]; break;
      default: (*out)[i] = t.as<int8_t>()[i]; break;
    }
  }
  return OkStatus();
}

// Row-major strides (in elements) of a shape.
inline std::vector<int64_t> Strides(const Dims& d) {
  std::vector<int64_t> s(d.size(), 1);
  for (int i = int(d.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * d[i + 1];
  return s;
}

// ParallelFor's min_chunk for items that each write `bytes_per_item` bytes (a copy): one work unit
// per 4 bytes (runtime/thread_pool.h's cost rule).
inline int64_t MinChunk(int64_t bytes_per_item) { return MinChunkFor((bytes_per_item + 3) / 4); }

inline void Copy(void* dst, const void* src, size_t bytes) {
  if (bytes) std::memcpy(dst, src, bytes);
}

// Sets the output shape when the output is dynamic, otherwise checks it matches.
inline Status SetOrCheckShape(OpContext& ctx, int i, const Dims& shape) {
  Tensor& o = ctx.output(i);
  if (o.alloc == Allocation::kDynamic || o.alloc == Allocation::kNone) return ctx.SetOutputShape(i, shape);
  if (o.shape != shape)
    return ctx.Error("output " + std::to_string(i) + " shape " + DimsToString(o.shape) + " differs from the computed " +
                     DimsToString(shape));
  return OkStatus();
}

// Parsed params for the GPU kernels (csrc/ops/shape/*_gpu.cc); defined at the end of the
// CPU .cc files.
int ConcatAxisOf(const Node& node);                          // CONCATENATION: raw axis
int ConcatActivationOf(const Node& node);                    // CONCATENATION: fused activation
int PackAxisOf(const Node& node);                            // PACK / UNPACK: raw axis
int MirrorPadModeOf(const Node& node);                       // MIRROR_PAD: 0 REFLECT, 1 SYMMETRIC
void GatherParamsOf(const Node& node, int* axis, int* batch_dims);  // GATHER: raw values
// STRIDED_SLICE: the resolved effective dims, 5 values each: size, start, stride, count, shrink.
Status StridedSliceDimsOf(OpContext& ctx, std::vector<int64_t>* dims);
int OneHotAxisOf(const Node& node);                          // ONE_HOT: raw axis (-1: last)

}  // namespace shape_ops
}  // namespace tflite_gpu
