#include "tflite_gpu/status.h"
#include "tflite_gpu/types.h"

namespace tflite_gpu {

std::string Status::ToString() const {
  static const char* kNames[] = {"OK", "INVALID_ARGUMENT", "NOT_FOUND", "UNIMPLEMENTED",
                                 "FAILED_PRECONDITION", "UNAVAILABLE", "INTERNAL", "OUT_OF_RANGE"};
  return ok() ? "OK" : std::string(kNames[int(code_)]) + ": " + msg_;
}

size_t DTypeSize(DType t) {
  switch (t) {
    case DType::kFloat32: case DType::kInt32: case DType::kUInt32: return 4;
    case DType::kResource: return 4;  // a resource tensor holds its int32 resource id, as in TFLite
    case DType::kFloat16: case DType::kInt16: case DType::kUInt16: case DType::kBFloat16: return 2;
    case DType::kUInt8: case DType::kInt8: case DType::kBool: return 1;
    case DType::kInt4: case DType::kUInt4: case DType::kInt2: return 1;  // held unpacked
    case DType::kInt64: case DType::kFloat64: case DType::kUInt64: case DType::kComplex64: return 8;
    case DType::kComplex128: return 16;
    default: return 0;
  }
}

const char* DTypeName(DType t) {
  static const char* kNames[] = {"FLOAT32", "FLOAT16", "INT32", "UINT8", "INT64", "STRING", "BOOL",
                                 "INT16", "COMPLEX64", "INT8", "FLOAT64", "COMPLEX128", "UINT64",
                                 "RESOURCE", "VARIANT", "UINT32", "UINT16", "INT4", "BFLOAT16",
                                 "INT2", "UINT4", "FLOAT8_E4M3FN", "FLOAT8_E5M2"};
  int v = int(t);
  return (v >= 0 && v <= 22) ? kNames[v] : "UNKNOWN";
}

bool DTypeKnown(int v) { return v >= 0 && v <= 22; }

int DTypePackedBits(DType t) {
  switch (t) {
    case DType::kInt4: case DType::kUInt4: return 4;
    case DType::kInt2: return 2;
    default: return 0;
  }
}

uint64_t DTypeFileBytes(DType t, uint64_t n) {
  const int bits = DTypePackedBits(t);
  if (bits) return (n * uint64_t(bits) + 7) / 8;
  return n * DTypeSize(t);
}

void UnpackPackedType(DType t, const uint8_t* src, uint64_t n, uint8_t* dst) {
  const int bits = DTypePackedBits(t);
  if (!bits) return;
  const int per = 8 / bits;
  const unsigned mask = (1u << bits) - 1;
  const bool is_signed = t != DType::kUInt4;
  for (uint64_t i = 0; i < n; ++i) {
    unsigned v = (src[i / per] >> ((i % per) * bits)) & mask;
    if (is_signed && (v & (1u << (bits - 1)))) v |= ~mask;  // sign-extend
    dst[i] = uint8_t(v);
  }
}

int64_t NumElements(const Dims& d) {
  int64_t n = 1;
  for (int32_t x : d) {
    if (x < 0) return -1;
    n *= x;
    if (n > (int64_t(1) << 40)) return -1;  // absurd sizes are treated as invalid
  }
  return n;
}

std::string DimsToString(const Dims& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

}  // namespace tflite_gpu
