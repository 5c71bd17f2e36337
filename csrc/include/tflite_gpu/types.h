// Core value types shared by the model reader, the interpreter, the kernels and the delegate.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tflite_gpu/export.h"

namespace tflite_gpu {

// Values are TFLite's TensorType ids (schema field `Tensor.type`).
enum class DType : int8_t {
  kFloat32 = 0, kFloat16 = 1, kInt32 = 2, kUInt8 = 3, kInt64 = 4, kString = 5, kBool = 6,
  kInt16 = 7, kComplex64 = 8, kInt8 = 9, kFloat64 = 10, kComplex128 = 11, kUInt64 = 12,
  kResource = 13, kVariant = 14, kUInt32 = 15, kUInt16 = 16, kInt4 = 17, kBFloat16 = 18,
  kInt2 = 19, kUInt4 = 20, kFloat8E4M3FN = 21, kFloat8E5M2 = 22,
};
// Bytes per element of the engine's storage, or 0 for types the engine cannot hold (string,
// variant, float8). A RESOURCE tensor holds an int32 resource id (4 bytes). The packed types
// INT4 / UINT4 / INT2 are held unpacked, one byte per element (int8 sign-extended for INT4 / INT2,
// uint8 for UINT4): the model file packs them (DTypePackedBits), the model loader unpacks constant
// buffers, and the kernels that take them read plain int8 / uint8 values.
TFLITE_GPU_API size_t DTypeSize(DType t);
// Bits per element in a .tflite buffer for the packed types (INT4 / UINT4: 4, INT2: 2), 0 otherwise.
// TFLite's layout: element i of the flattened tensor sits in byte i / (8 / bits), at bit
// (i % (8 / bits)) * bits (lowest bits first); a buffer holds ceil(n * bits / 8) bytes.
TFLITE_GPU_API int DTypePackedBits(DType t);
// Bytes of the model-file buffer of a tensor of `n` elements of type t (packed types: packed).
TFLITE_GPU_API uint64_t DTypeFileBytes(DType t, uint64_t n);
// Unpacks `n` packed elements of a packed type from `src` into one byte each at `dst`
// (sign-extended for INT4 / INT2).
TFLITE_GPU_API void UnpackPackedType(DType t, const uint8_t* src, uint64_t n, uint8_t* dst);
TFLITE_GPU_API const char* DTypeName(DType t);  // "FLOAT32", ...
TFLITE_GPU_API bool DTypeKnown(int v);

using Dims = std::vector<int32_t>;
TFLITE_GPU_API int64_t NumElements(const Dims& d);  // -1 if any dim is negative
TFLITE_GPU_API std::string DimsToString(const Dims& d);

struct QuantParams {
  std::vector<float> scale;
  std::vector<int64_t> zero_point;
  int32_t quantized_dimension = 0;
  std::vector<float> min, max;
  // Blockwise quantization (the schema's QuantizationDetails BlockwiseQuantization): block_size > 0
  // marks it; the scales and zero points are then tensors of the subgraph (indices, -1: none).
  int32_t block_size = 0;
  int32_t blockwise_scales = -1, blockwise_zero_points = -1;
  bool empty() const { return scale.empty() && zero_point.empty(); }
};

struct DimensionMetadata {
  int format = 0;  // 0 DENSE, 1 SPARSE_CSR
  int dense_size = 0;
  std::vector<int32_t> array_segments, array_indices;
};
struct SparsityParams {
  std::vector<int32_t> traversal_order, block_map;
  std::vector<DimensionMetadata> dim_metadata;
};

enum class Allocation : int8_t {
  kNone,      // not yet placed
  kConstant,  // points into the model buffer (read-only, used in place)
  kOwned,     // owned heap copy (misaligned constants, folded constants, variables)
  kArena,     // placed in the interpreter's arena by the memory planner
  kDynamic,   // shape known only at invoke; heap-allocated when the kernel resizes it
  kDelegate,  // delegate-boundary tensor in host memory a delegate kernel owns (pinned for transfers)
};

struct Tensor {
  std::string name;
  DType type = DType::kFloat32;
  Dims shape;
  Dims shape_signature;
  QuantParams quant;
  std::shared_ptr<SparsityParams> sparsity;
  bool is_variable = false;
  bool is_const = false;          // has data in the model (or was folded at allocation)
  Allocation alloc = Allocation::kNone;
  uint8_t* data = nullptr;
  size_t bytes = 0;
  std::vector<uint8_t, std::allocator<uint8_t>> owned;  // kOwned / kDynamic storage
  size_t arena_offset = 0;
  // Delegate hooks: a delegate may keep the live copy of a tensor on its device.
  int buffer_handle = -1;
  bool data_is_stale = false;

  int64_t num_elements() const { return NumElements(shape); }
  template <typename T> T* as() { return reinterpret_cast<T*>(data); }
  template <typename T> const T* as() const { return reinterpret_cast<const T*>(data); }
};

}  // namespace tflite_gpu
