#include "runtime/string_tensor.h"

#include <limits>
#include <new>

#include "ops/op_registry.h"

namespace tflite_gpu {

bool OpTakesStrings(const OpInfo* op) {
  if (!op || op->custom_code) return false;
  static const char* const kOps[] = {"HASHTABLE_LOOKUP", "SKIP_GRAM", "LSH_PROJECTION", "HASHTABLE_FIND",
                                     "HASHTABLE_IMPORT", "IF", "WHILE"};
  for (const char* n : kOps)
    if (std::strcmp(op->name, n) == 0) return true;
  return false;
}

const StringShim* FindStringShim(const OpInfo* op) {
  if (!op || op->custom_code) return nullptr;
  // Measured against LiteRT 2.3 BUILTIN_WITHOUT_DEFAULT_DELEGATES: these run with STRING data;
  // CONCATENATION, PACK, UNPACK, SPLIT, SPLIT_V, TRANSPOSE, BROADCAST_TO, REVERSE_V2, PAD,
  // MIRROR_PAD, SELECT(_V2), LESS and the other comparisons, CAST, ZEROS_LIKE, SCATTER_ND, ...
  // refuse them (tests/test_string_ops.py).
  static const StringShim kShims[] = {
      {"RESHAPE", 1u, true, false},       {"SQUEEZE", 1u, true, false},   {"EXPAND_DIMS", 1u, true, false},
      {"GATHER", 1u, true, false},        {"GATHER_ND", 1u, true, false}, {"SLICE", 1u, true, false},
      {"STRIDED_SLICE", 1u, true, false}, {"TILE", 1u, true, false},      {"FILL", 2u, true, false},
      {"EQUAL", 3u, false, true},         {"NOT_EQUAL", 3u, false, true}, {"SHAPE", 1u, false, false},
      {"RANK", 1u, false, false},
  };
  for (const StringShim& s : kShims)
    if (std::strcmp(op->name, s.op) == 0) return &s;
  return nullptr;
}

std::string CheckStringBuffer(const uint8_t* data, size_t bytes, int64_t n) {
  if (n < 0) return "has an invalid shape";
  if (!data || bytes < 4) return "has a string buffer of " + std::to_string(bytes) + " bytes (at least 4 needed)";
  const int32_t count = LoadI32(data);
  if (count != n)
    return "holds " + std::to_string(count) + " strings but its shape has " + std::to_string(n) + " elements";
  const uint64_t header = 4 * (uint64_t(count) + 2);
  if (header > bytes)
    return "has a string buffer of " + std::to_string(bytes) + " bytes, too small for the offsets of " +
           std::to_string(count) + " strings";
  int64_t prev = int64_t(header);
  for (int64_t i = 0; i <= count; ++i) {
    const int32_t off = LoadI32(data + 4 * (i + 1));
    if (off < prev || uint64_t(off) > bytes)
      return "has a corrupt string buffer (offset " + std::to_string(i) + " is " + std::to_string(off) + ")";
    prev = off;
  }
  if (uint64_t(prev) != bytes)
    return "has a corrupt string buffer (the last offset " + std::to_string(prev) + " is not its size " +
           std::to_string(bytes) + ")";
  return std::string();
}

namespace {
Status Serialize(Tensor& t, size_t n, const std::string_view* v) {
  uint64_t total = 4 * (uint64_t(n) + 2);
  for (size_t i = 0; i < n; ++i) total += v ? v[i].size() : 0;
  if (total > uint64_t(std::numeric_limits<int32_t>::max()))
    return InvalidArgument("string tensor '" + t.name + "' would need " + std::to_string(total) +
                           " bytes (the STRING layout's int32 offsets allow 2 GiB)");
  try {
    t.owned.resize(size_t(total) + 1);
  } catch (const std::bad_alloc&) {
    return InvalidArgument("string tensor '" + t.name + "' of " + std::to_string(total) + " bytes cannot be allocated");
  }
  uint8_t* p = t.owned.data();
  auto put = [&](size_t at, int32_t x) { std::memcpy(p + at, &x, 4); };
  put(0, int32_t(n));
  int32_t off = int32_t(4 * (n + 2));
  for (size_t i = 0; i < n; ++i) {
    put(4 * (i + 1), off);
    if (v && !v[i].empty()) std::memcpy(p + off, v[i].data(), v[i].size());
    off += int32_t(v ? v[i].size() : 0);
  }
  put(4 * (n + 1), off);
  t.data = p;
  t.bytes = size_t(total);
  return OkStatus();
}
}  // namespace

Status WriteStrings(Tensor& t, const std::vector<std::string_view>& v) { return Serialize(t, v.size(), v.data()); }

Status WriteEmptyStrings(Tensor& t, int64_t n) {
  if (n < 0) return InvalidArgument("string tensor '" + t.name + "' has an invalid shape");
  return Serialize(t, size_t(n), nullptr);
}

}  // namespace tflite_gpu
