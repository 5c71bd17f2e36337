// LSH_PROJECTION and EMBEDDING_LOOKUP_SPARSE (lookup family). CPU only: TFLite's GPU delegate
// takes neither. Neither is a hot op; each has one plain kernel, which is also its reference
// kernel (eval_ref nullptr).
//
// Semantics (TFLite's lsh_projection.cc / embedding_lookup_sparse.cc, LiteRT 2.3):
//  * LSH_PROJECTION(hash [num_hash, num_bits] FLOAT32, input [n, ...], weight [n] FLOAT32
//    optional) -> INT32. For each seed (one hash entry) the sign bit is
//    (sum over the n input rows of weight[i] * double(Fingerprint64(seed bytes ++ row bytes)) > 0),
//    the sum in double, the fingerprint read as int64. DENSE writes every bit
//    ([num_hash * num_bits]); SPARSE packs each hash's bits MSB first into an int32 and adds
//    i << num_bits ([num_hash]). num_bits <= 32, n >= 1; the shift of 1 << 32 wraps as x86's does (the
//    count mod 32), which is what LiteRT computes there. The input's bytes are hashed as they are:
//    its type does not matter (a STRING input: its serialized buffer, runtime/string_tensor.h).
//  * Fingerprint64 is farmhash's Fingerprint64 (farmhashna::Hash64, the public FarmHash
//    algorithm by Geoff Pike), written here from its definition; tests compare every output bit
//    with LiteRT.
//  * EMBEDDING_LOOKUP_SPARSE(ids [N] INT32, indices [N, r] INT32, dense_shape [r] INT32,
//    weights [N] FLOAT32, params [rows, ...] FLOAT32, combiner) -> FLOAT32 of shape
//    dense_shape[:-1] ++ params.shape[1:] (dynamic, as in TFLite). Entry i adds
//    weights[i] * params[ids[i]] to the output bucket given by indices[i][:-1]; when the bucket
//    changes from one entry to the next the finished run is divided by its total weight (MEAN) or
//    by sqrt of its summed squared weights (SQRTN), as TFLite does (a bucket split over two runs is
//    divided per run); a combiner value outside the enum acts as SUM, as in TFLite. An id outside [0, rows) is an error (as in LiteRT); so is an index that
//    puts the bucket outside dense_shape (LiteRT writes out of bounds there; we refuse).
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "ops/op_registry.h"
#include "runtime/subgraph.h"

namespace tflite_gpu {
namespace {

// ---------------------------------------------------------------- FarmHash Fingerprint64
namespace farm {

constexpr uint64_t k0 = 0xc3a5c85c97cb3127ULL;
constexpr uint64_t k1 = 0xb492b66fbe98f273ULL;
constexpr uint64_t k2 = 0x9ae16a3b2f90404fULL;

inline uint64_t Load64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];  // little endian whatever the host
  return v;
}
inline uint64_t Load32(const uint8_t* p) {
  return uint64_t(p[0]) | uint64_t(p[1]) << 8 | uint64_t(p[2]) << 16 | uint64_t(p[3]) << 24;
}
inline uint64_t Rot(uint64_t v, int s) { return s == 0 ? v : (v >> s) | (v << (64 - s)); }
inline uint64_t Mix47(uint64_t v) { return v ^ (v >> 47); }

inline uint64_t Len16(uint64_t u, uint64_t v, uint64_t mul) {
  uint64_t a = Mix47((u ^ v) * mul);
  uint64_t b = Mix47((v ^ a) * mul);
  return b * mul;
}

uint64_t Upto16(const uint8_t* s, size_t n) {
  if (n >= 8) {
    const uint64_t mul = k2 + n * 2;
    const uint64_t a = Load64(s) + k2, b = Load64(s + n - 8);
    return Len16(Rot(b, 37) * mul + a, (Rot(a, 25) + b) * mul, mul);
  }
  if (n >= 4) {
    const uint64_t mul = k2 + n * 2;
    return Len16(n + (Load32(s) << 3), Load32(s + n - 4), mul);
  }
  if (n > 0) {
    const uint32_t y = uint32_t(s[0]) + (uint32_t(s[n >> 1]) << 8);
    const uint32_t z = uint32_t(n) + (uint32_t(s[n - 1]) << 2);
    return Mix47(y * k2 ^ z * k0) * k2;
  }
  return k2;
}

uint64_t Upto32(const uint8_t* s, size_t n) {
  const uint64_t mul = k2 + n * 2;
  const uint64_t a = Load64(s) * k1, b = Load64(s + 8);
  const uint64_t c = Load64(s + n - 8) * mul, d = Load64(s + n - 16) * k2;
  return Len16(Rot(a + b, 43) + Rot(c, 30) + d, a + Rot(b + k2, 18) + c, mul);
}

uint64_t Upto64(const uint8_t* s, size_t n) {
  const uint64_t mul = k2 + n * 2;
  const uint64_t a = Load64(s) * k2, b = Load64(s + 8);
  const uint64_t c = Load64(s + n - 8) * mul, d = Load64(s + n - 16) * k2;
  const uint64_t y = Rot(a + b, 43) + Rot(c, 30) + d;
  const uint64_t z = Len16(y, a + Rot(b + k2, 18) + c, mul);
  const uint64_t e = Load64(s + 16) * mul, f = Load64(s + 24);
  const uint64_t g = (y + Load64(s + n - 32)) * mul, h = (z + Load64(s + n - 24)) * mul;
  return Len16(Rot(e + f, 43) + Rot(g, 30) + h, e + Rot(f + a, 18) + g, mul);
}

// Two 64-bit lanes from 32 bytes and two seeds.
inline std::pair<uint64_t, uint64_t> Weak32(const uint8_t* s, uint64_t a, uint64_t b) {
  const uint64_t w = Load64(s), x = Load64(s + 8), y = Load64(s + 16), z = Load64(s + 24);
  a += w;
  b = Rot(b + a + z, 21);
  const uint64_t c = a;
  a += x + y;
  b += Rot(a, 44);
  return {a + z, b + c};
}

uint64_t Fingerprint64(const uint8_t* s, size_t n) {
  if (n <= 16) return Upto16(s, n);
  if (n <= 32) return Upto32(s, n);
  if (n <= 64) return Upto64(s, n);
  const uint64_t seed = 81;
  uint64_t x = seed, y = seed * k1 + 113, z = Mix47(y * k2 + 113) * k2;
  std::pair<uint64_t, uint64_t> v{0, 0}, w{0, 0};
  x = x * k2 + Load64(s);
  const uint8_t* end = s + ((n - 1) / 64) * 64;
  const uint8_t* last = s + n - 64;
  for (; s != end; s += 64) {
    x = Rot(x + y + v.first + Load64(s + 8), 37) * k1;
    y = Rot(y + v.second + Load64(s + 48), 42) * k1;
    x ^= w.second;
    y += v.first + Load64(s + 40);
    z = Rot(z + w.first, 33) * k1;
    v = Weak32(s, v.second * k1, x + w.first);
    w = Weak32(s + 32, z + w.second, y + Load64(s + 16));
    std::swap(z, x);
  }
  const uint64_t mul = k1 + ((z & 0xff) << 1);
  s = last;
  w.first += (n - 1) & 63;
  v.first += w.first;
  w.first += v.first;
  x = Rot(x + y + v.first + Load64(s + 8), 37) * mul;
  y = Rot(y + v.second + Load64(s + 48), 42) * mul;
  x ^= w.second * 9;
  y += v.first * 9 + Load64(s + 40);
  z = Rot(z + w.first, 33) * mul;
  v = Weak32(s, v.second * mul, x + w.first);
  w = Weak32(s + 32, z + w.second, y + Load64(s + 16));
  std::swap(z, x);
  return Len16(Len16(v.first, w.first, mul) + Mix47(y) * k0 + z, Len16(v.second, w.second, mul) + x, mul);
}

}  // namespace farm

// ---------------------------------------------------------------- LSH_PROJECTION
struct LshParams {
  int type = 0;  // LSHProjectionType: 1 SPARSE, 2 DENSE
};

Status ParseLsh(const OptionsView& o, Node& n) {
  auto p = std::make_shared<LshParams>();
  if (o.table.valid()) p->type = o.Get<int8_t>(0, 0);
  n.params = p;
  return OkStatus();
}

Status PrepareLsh(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 3, 1, 1));
  const int type = ctx.node().P<LshParams>().type;
  if (type != 1 && type != 2)
    return ctx.Error("projection type " + std::to_string(type) + " is not SPARSE (1) or DENSE (2)");
  if (!ctx.has_input(0) || !ctx.has_input(1)) return ctx.Error("the hash or input tensor is omitted");
  const Tensor& hash = ctx.input(0);
  const Tensor& in = ctx.input(1);
  TFG_RETURN_IF_ERROR(ctx.CheckType(hash, DType::kFloat32, "the hash seeds"));
  if (hash.shape.size() != 2) return ctx.Error("the hash seeds must be 2-D, got shape " + DimsToString(hash.shape));
  if (hash.shape[1] > 32) return ctx.Error("at most 32 bits per hash, got " + std::to_string(hash.shape[1]));
  if (in.shape.empty()) return ctx.Error("the input must have at least one dimension");
  if (in.shape[0] < 1) return ctx.Error("the input must have at least one row, got shape " + DimsToString(in.shape));
  if (in.type != DType::kString && (DTypeSize(in.type) == 0 || DTypePackedBits(in.type) || in.type == DType::kResource))
    return ctx.Error(std::string("input type ") + DTypeName(in.type) + " is not supported");
  if (const Tensor* w = ctx.optional_input(2)) {
    TFG_RETURN_IF_ERROR(ctx.CheckType(*w, DType::kFloat32, "the weight"));
    if (w->shape.size() != 1) return ctx.Error("the weight must be 1-D, got shape " + DimsToString(w->shape));
    if (w->shape[0] != in.shape[0])
      return ctx.Error("the weight has " + std::to_string(w->shape[0]) + " entries but the input has " +
                       std::to_string(in.shape[0]) + " rows");
  }
  TFG_RETURN_IF_ERROR(ctx.CheckType(ctx.output(0), DType::kInt32, "the output"));
  const int64_t n = ctx.node().P<LshParams>().type == 1 ? int64_t(hash.shape[0])
                                                         : int64_t(hash.shape[0]) * hash.shape[1];
  if (n > std::numeric_limits<int32_t>::max()) return ctx.Error("the output is too large");
  return ctx.SetOutputShape(0, Dims{int32_t(n)});
}

int SignBit(const uint8_t* in, int64_t rows, size_t row_bytes, const float* weight, float seed, uint8_t* key) {
  std::memcpy(key, &seed, sizeof(float));
  double score = 0.0;
  for (int64_t i = 0; i < rows; ++i) {
    if (row_bytes) std::memcpy(key + sizeof(float), in + size_t(i) * row_bytes, row_bytes);
    const double v = double(int64_t(farm::Fingerprint64(key, sizeof(float) + row_bytes)));
    score += weight ? double(weight[i]) * v : v;
  }
  return score > 0 ? 1 : 0;
}

Status EvalLsh(OpContext& ctx) {
  const Tensor& hash = ctx.input(0);
  const Tensor& in = ctx.input(1);
  const Tensor* w = ctx.optional_input(2);
  const int64_t rows = in.shape[0];
  const int64_t in_elems = in.num_elements();
  // A STRING input is hashed as its serialized buffer (count, offsets, bytes) cut into rows of
  // bytes / rows bytes, as TFLite reads input->bytes; the same layout here gives the same keys.
  const size_t row_bytes = in.type == DType::kString ? in.bytes / size_t(rows)
                                                     : size_t(in_elems / rows) * DTypeSize(in.type);
  const int num_hash = hash.shape[0], num_bits = hash.shape[1];
  std::vector<uint8_t> key(sizeof(float) + row_bytes);
  const float* seeds = hash.as<float>();
  const float* wp = w ? w->as<float>() : nullptr;
  int32_t* out = ctx.output(0).as<int32_t>();
  const bool sparse = ctx.node().P<LshParams>().type == 1;
  for (int i = 0; i < num_hash; ++i) {
    uint32_t sig = 0;
    for (int j = 0; j < num_bits; ++j) {
      const int bit = SignBit(in.data, rows, row_bytes, wp, seeds[int64_t(i) * num_bits + j], key.data());
      if (sparse)
        sig = (sig << 1) | uint32_t(bit);
      else
        *out++ = bit;
    }
    // i * (1 << num_bits) in int32 arithmetic as x86 computes it (shift count mod 32, wrapping).
    if (sparse) *out++ = int32_t(sig + uint32_t(i) * (uint32_t(1) << (num_bits & 31)));
  }
  return OkStatus();
}

// ---------------------------------------------------------------- EMBEDDING_LOOKUP_SPARSE
struct ElsParams {
  int combiner = 0;  // CombinerType: 0 SUM, 1 MEAN, 2 SQRTN
};

Status ParseEls(const OptionsView& o, Node& n) {
  auto p = std::make_shared<ElsParams>();
  // An unknown combiner value reads as SUM, as TFLite's option parser maps it (measured).
  if (o.table.valid()) p->combiner = o.Get<int8_t>(0, 0);
  if (p->combiner < 0 || p->combiner > 2) p->combiner = 0;
  n.params = p;
  return OkStatus();
}

Status PrepareEls(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(5, 5, 1, 1));
  for (int i = 0; i < 5; ++i)
    if (!ctx.has_input(i)) return ctx.Error("input " + std::to_string(i) + " is omitted");
  const Tensor& ids = ctx.input(0);
  const Tensor& idx = ctx.input(1);
  const Tensor& shape = ctx.input(2);
  const Tensor& w = ctx.input(3);
  const Tensor& params = ctx.input(4);
  TFG_RETURN_IF_ERROR(ctx.CheckType(ids, DType::kInt32, "ids"));
  TFG_RETURN_IF_ERROR(ctx.CheckType(idx, DType::kInt32, "indices"));
  TFG_RETURN_IF_ERROR(ctx.CheckType(shape, DType::kInt32, "dense_shape"));
  TFG_RETURN_IF_ERROR(ctx.CheckType(w, DType::kFloat32, "weights"));
  TFG_RETURN_IF_ERROR(ctx.CheckType(params, DType::kFloat32, "params"));
  TFG_RETURN_IF_ERROR(ctx.CheckType(ctx.output(0), DType::kFloat32, "the output"));
  if (ids.shape.size() != 1) return ctx.Error("ids must be 1-D, got shape " + DimsToString(ids.shape));
  if (idx.shape.size() != 2) return ctx.Error("indices must be 2-D, got shape " + DimsToString(idx.shape));
  if (shape.shape.size() != 1) return ctx.Error("dense_shape must be 1-D, got shape " + DimsToString(shape.shape));
  if (w.shape.size() != 1) return ctx.Error("weights must be 1-D, got shape " + DimsToString(w.shape));
  if (idx.shape[0] != ids.shape[0] || w.shape[0] != ids.shape[0])
    return ctx.Error("ids " + DimsToString(ids.shape) + ", indices " + DimsToString(idx.shape) + " and weights " +
                     DimsToString(w.shape) + " must have the same number of entries");
  if (params.shape.size() < 2) return ctx.Error("params must have at least 2 dimensions, got shape " + DimsToString(params.shape));
  ctx.SetOutputDynamic(0);
  return OkStatus();
}

void Finalize(int combiner, int count, float total_w, float squares_w, int64_t size, float* out) {
  if (combiner == 0 || count == 0) return;
  const float m = combiner == 1 ? total_w : std::sqrt(squares_w);
  for (int64_t k = 0; k < size; ++k) out[k] /= m;
}

Status EvalEls(OpContext& ctx) {
  const Tensor& ids = ctx.input(0);
  const Tensor& idx = ctx.input(1);
  const Tensor& shape = ctx.input(2);
  const Tensor& params = ctx.input(4);
  const int r = idx.shape[1];
  const int n = ids.shape[0];
  const int rows = params.shape[0];
  if (shape.shape[0] != r)
    return ctx.Error("dense_shape has " + std::to_string(shape.shape[0]) + " entries but indices have rank " +
                     std::to_string(r));
  if (r < 1) return ctx.Error("indices must have at least one column");
  const int32_t* ds = shape.as<int32_t>();
  Dims os;
  int64_t lookups = 1, emb = 1;
  for (int i = 0; i + 1 < r; ++i) {
    if (ds[i] < 0) return ctx.Error("dense_shape has a negative dimension " + std::to_string(ds[i]));
    lookups *= ds[i];
    if (lookups > std::numeric_limits<int32_t>::max()) return ctx.Error("Lookup size overflowed.");
    os.push_back(ds[i]);
  }
  for (size_t i = 1; i < params.shape.size(); ++i) {
    emb *= params.shape[i];
    if (emb > std::numeric_limits<int32_t>::max()) return ctx.Error("Total embedding size overflowed.");
    os.push_back(params.shape[i]);
  }
  if (lookups * emb > std::numeric_limits<int32_t>::max()) return ctx.Error("the output is too large");
  TFG_RETURN_IF_ERROR(ctx.SetOutputShape(0, os));
  float* out = ctx.output(0).as<float>();
  const int64_t total = lookups * emb;
  for (int64_t k = 0; k < total; ++k) out[k] = 0.0f;
  const int32_t* id = ids.as<int32_t>();
  const int32_t* ix = idx.as<int32_t>();
  const float* wt = ctx.input(3).as<float>();
  const float* pv = params.as<float>();
  const int combiner = ctx.node().P<ElsParams>().combiner;
  int64_t cur = 0;
  float total_w = 0.0f, squares_w = 0.0f;
  int count = 0;
  for (int i = 0; i < n; ++i) {
    const int32_t row = id[i];
    if (row < 0 || row >= rows)
      return ctx.Error("Embedding Lookup Sparse: index out of bounds. Got " + std::to_string(row) +
                       ", and bounds are [0, " + std::to_string(rows - 1) + "]");
    int64_t bucket = 0, stride = 1;
    for (int k = r - 2; k >= 0; --k) {
      const int32_t v = ix[int64_t(i) * r + k];
      if (v < 0 || v >= ds[k])
        return ctx.Error("entry " + std::to_string(i) + ": index " + std::to_string(v) + " in column " +
                         std::to_string(k) + " is outside dense_shape " + std::to_string(ds[k]));
      bucket += v * stride;
      stride *= ds[k];
    }
    const int64_t off = bucket * emb;
    if (off != cur) {
      Finalize(combiner, count, total_w, squares_w, emb, out + cur);
      count = 0;
      total_w = squares_w = 0.0f;
      cur = off;
    }
    ++count;
    const float w = wt[i];
    squares_w += w * w;
    total_w += w;
    const float* src = pv + int64_t(row) * emb;
    for (int64_t k = 0; k < emb; ++k) out[cur + k] += src[k] * w;
  }
  if (total > 0) Finalize(combiner, count, total_w, squares_w, emb, out + cur);
  return OkStatus();
}

}  // namespace

const OpImpl kOp_LSH_PROJECTION = {ParseLsh, PrepareLsh, EvalLsh, nullptr, false};
const OpImpl kOp_EMBEDDING_LOOKUP_SPARSE = {ParseEls, PrepareEls, EvalEls, nullptr, false};

}  // namespace tflite_gpu
