// STRING tensors, in TFLite's layout (the same bytes in a .tflite buffer, in memory and in what
// an op reads): int32 count n, then n + 1 int32 offsets from the start of the buffer (offset[i]
// is where string i starts, offset[n] the end of the buffer), then the string bytes. All int32
// little endian. A tensor of shape S holds NumElements(S) strings.
//
// Constant string tensors are checked once when the model is loaded (CheckStringBuffer); every
// other string tensor is written by WriteStrings (an op's output, or the Python/C input setter),
// so readers (StringAt) trust the layout. Non-constant string tensors are never in the arena:
// the memory planner makes them dynamic (heap, resized by each write) and fills them with n
// empty strings until something writes them.
//
// The ops listed by OpTakesStrings read or write them with their own kernels. The ops that
// LiteRT 2.3's builtin kernels run on strings by moving or comparing whole elements (FindStringShim:
// RESHAPE, SQUEEZE, EXPAND_DIMS, GATHER (1-D params), GATHER_ND, SLICE, STRIDED_SLICE, TILE, FILL,
// EQUAL, NOT_EQUAL, and SHAPE / RANK, which read only the shape) run their integer kernels on
// INT32 ids standing for the strings (the subgraph swaps the tensors around prepare and eval:
// runtime/subgraph.cc), so every shape rule and error is the integer op's. Any other op with a
// STRING input or output is refused at prepare with an error naming it and the position.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "tflite_gpu/status.h"
#include "tflite_gpu/types.h"

namespace tflite_gpu {

struct OpInfo;

// True for the ops that handle STRING tensors (lookup family: HASHTABLE_LOOKUP, SKIP_GRAM,
// LSH_PROJECTION (hashes the raw bytes), HASHTABLE_FIND / HASHTABLE_IMPORT; IF and WHILE pass
// STRING values to and from their subgraphs).
bool OpTakesStrings(const OpInfo* op);

// An op that runs on STRING tensors through its INT32 kernel (see above).
struct StringShim {
  const char* op;
  uint32_t string_inputs;  // the inputs that are STRING (all of them or none)
  bool output_string;      // output 0 is STRING exactly when those inputs are
  bool canonical;          // equal strings get equal ids (comparisons); otherwise ids are positions
};
// nullptr when the op does not run on strings this way.
const StringShim* FindStringShim(const OpInfo* op);

// Checks a serialized string buffer of `bytes` bytes meant to hold `n` strings. Empty `why`: ok.
std::string CheckStringBuffer(const uint8_t* data, size_t bytes, int64_t n);

inline int32_t LoadI32(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
// Number of strings in a written string tensor (0 when it holds no buffer yet).
inline int64_t StringCount(const Tensor& t) { return (t.data && t.bytes >= 4) ? LoadI32(t.data) : 0; }
// String i of a written (or load-checked) string tensor; i < StringCount(t).
inline std::string_view StringAt(const Tensor& t, int64_t i) {
  const int32_t a = LoadI32(t.data + 4 * (i + 1)), b = LoadI32(t.data + 4 * (i + 2));
  return std::string_view(reinterpret_cast<const char*>(t.data) + a, size_t(b - a));
}
// Serializes `v` into a dynamic or owned tensor's heap storage (t.owned; data/bytes updated).
// Fails when the buffer would pass 2 GiB (int32 offsets).
Status WriteStrings(Tensor& t, const std::vector<std::string_view>& v);
// n empty strings.
Status WriteEmptyStrings(Tensor& t, int64_t n);

}  // namespace tflite_gpu
