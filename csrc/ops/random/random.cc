// Random family: RANDOM_UNIFORM, RANDOM_STANDARD_NORMAL, MULTINOMIAL. CPU only (TFLite's GPU
// delegate does not take them), no quantized kernels.
//
// Semantics (TFLite's random ops, LiteRT 2.3):
//  * The generator is Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
//    3", SC 2011) as TensorFlow seeds it: key = seed (low, high 32 bits), counter words 2 and 3 =
//    seed2 (low, high), counter words 0 and 1 = 0. Each call returns 4 uint32 and adds one to the
//    128-bit counter.
//  * The generator is (re)seeded at prepare (allocate_tensors, a resize, or a re-prepare at invoke
//    when the shape input is dynamic) and advances across invokes: consecutive invokes give new
//    numbers, the same sequence as LiteRT for the same nonzero seeds. The options' int64 seeds
//    are cut to int32 (sign-extended) as TFLite's params struct does. When seed and seed2 are
//    both 0 (after that cut), the seeds come from the OS entropy source (nondeterministic, as in
//    TFLite).
//  * RANDOM_UNIFORM(shape [n] INT32) -> FLOAT32 of that shape in [0, 1): one uint32 per value,
//    its low 23 bits as the mantissa of a float in [1, 2), minus 1.
//  * RANDOM_STANDARD_NORMAL(shape) -> FLOAT32: Box-Muller on pairs of uint32 (u1 clamped to 1e-7,
//    r = sqrt(-2 log u1), angle 2 pi u2; sin then cos). For an odd count the last pair's cosine is
//    dropped (LiteRT writes it one element past the end of the buffer; we do not).
//  * MULTINOMIAL(logits [batch, classes] FLOAT32, num_samples INT32 scalar) -> [batch,
//    num_samples] INT64 or INT32: per row the cumulative sum (double) of exp(logit - max finite
//    logit) over the finite logits; each sample is upper_bound(cdf, u * total) with u a double in
//    [0, 1) from two uint32 (20 + 32 mantissa bits). The samples come from a copy of the
//    generator; the generator itself skips batch * round4(num_samples) * 512 calls per invoke.
//  * The output is dynamic when the shape (or logits / num_samples) is not constant.
// Bit-exact with LiteRT for fixed nonzero seeds (tests/test_random_ops.py checks every value over
// several invokes); seeds 0/0 are checked by distribution statistics only.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <random>
#include <vector>

#include "ops/op_registry.h"
#include "runtime/subgraph.h"

namespace tflite_gpu {
namespace {

constexpr int kMaxRank = 8;
constexpr int64_t kMaxElements = int64_t(1) << 34;  // generated outputs: refuse absurd sizes

class Philox4x32 {
 public:
  using Block = std::array<uint32_t, 4>;
  Philox4x32() = default;
  Philox4x32(uint64_t seed, uint64_t seed2) {
    key_[0] = uint32_t(seed);
    key_[1] = uint32_t(seed >> 32);
    ctr_ = {0u, 0u, uint32_t(seed2), uint32_t(seed2 >> 32)};
  }
  Block Next() {
    Block c = ctr_;
    uint32_t k0 = key_[0], k1 = key_[1];
    for (int r = 0; r < 10; ++r) {
      if (r) {
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
      }
      const uint64_t p0 = uint64_t(0xD2511F53u) * c[0];
      const uint64_t p1 = uint64_t(0xCD9E8D57u) * c[2];
      c = {uint32_t(p1 >> 32) ^ c[1] ^ k0, uint32_t(p1), uint32_t(p0 >> 32) ^ c[3] ^ k1, uint32_t(p0)};
    }
    Skip(1);
    return c;
  }
  // Adds n to the 128-bit counter (word 0 least significant).
  void Skip(uint64_t n) {
    uint64_t lo = (uint64_t(ctr_[1]) << 32) | ctr_[0];
    const uint64_t sum = lo + n;
    ctr_[0] = uint32_t(sum);
    ctr_[1] = uint32_t(sum >> 32);
    if (sum < lo && ++ctr_[2] == 0) ++ctr_[3];
  }

 private:
  uint32_t key_[2] = {0, 0};
  Block ctr_ = {0, 0, 0, 0};
};

float Uint32ToUnitFloat(uint32_t x) {
  const uint32_t bits = (127u << 23) | (x & 0x7fffffu);
  float f;
  std::memcpy(&f, &bits, 4);
  return f - 1.0f;
}

double Uint64ToUnitDouble(uint32_t hi, uint32_t lo) {
  const uint64_t bits = (uint64_t(1023) << 52) | (uint64_t(hi & 0xfffffu) << 32) | lo;
  double d;
  std::memcpy(&d, &bits, 8);
  return d - 1.0;
}

void BoxMuller(uint32_t x0, uint32_t x1, float* f0, float* f1) {
  float u1 = Uint32ToUnitFloat(x0);
  if (u1 < 1.0e-7f) u1 = 1.0e-7f;
  const float angle = float(2.0f * M_PI * Uint32ToUnitFloat(x1));
  const float r = std::sqrt(-2.0f * std::log(u1));
  float s, c;
  ::sincosf(angle, &s, &c);
  *f0 = s * r;
  *f1 = c * r;
}

struct RandomParams {
  int64_t seed = 0, seed2 = 0;
};

struct RngState {
  Philox4x32 gen;
};

Status ParseRandom(const OptionsView& o, Node& n) {
  auto p = std::make_shared<RandomParams>();
  if (o.table.valid()) {
    // The schema fields are int64 but TFLite keeps them in int fields (TfLiteRandomParams): only
    // the low 32 bits count, sign-extended (measured against LiteRT 2.3: seed 2^32 acts as 0).
    p->seed = int32_t(uint32_t(uint64_t(o.Get<int64_t>(0, 0))));
    p->seed2 = int32_t(uint32_t(uint64_t(o.Get<int64_t>(1, 0))));
  }
  n.params = p;
  return OkStatus();
}

uint64_t EntropySeed() {
  static std::mutex mu;
  static std::mt19937_64 gen{std::random_device("/dev/urandom")()};
  std::lock_guard<std::mutex> lock(mu);
  return gen();
}

// TFLite seeds at Prepare, and its AllocateTensors skips Prepare when the graph is already
// allocated and no input was resized: the stream then goes on. Our AllocateTensors prepares every
// time, so an allocate of an already-allocated subgraph keeps the generator (measured against
// LiteRT 2.3: allocate_tensors() between invokes does not restart the numbers). A re-prepare at
// invoke (dynamic shape input) seeds again, as TFLite's Prepare there does.
void Seed(OpContext& ctx) {
  Subgraph& sg = ctx.subgraph();
  if (ctx.node().user_data && sg.allocated() && !sg.invoking()) return;
  const RandomParams& p = ctx.node().P<RandomParams>();
  uint64_t s = uint64_t(p.seed), s2 = uint64_t(p.seed2);
  if (s == 0 && s2 == 0) {
    s = EntropySeed();
    s2 = EntropySeed();
  }
  auto st = std::make_shared<RngState>();
  st->gen = Philox4x32(s, s2);
  ctx.node().user_data = st;
}

Status ReadShape(OpContext& ctx, Dims* out) {
  const Tensor& t = ctx.input(0);
  const int64_t n = t.num_elements();
  if (n > kMaxRank)
    return ctx.Error("the shape input has " + std::to_string(n) + " dimensions (at most " + std::to_string(kMaxRank) + ")");
  if (n > 0 && (!t.data || t.bytes < size_t(n) * 4)) return ctx.Error("the shape input has no data");
  out->clear();
  int64_t total = 1;
  for (int64_t i = 0; i < n; ++i) {
    const int32_t d = t.as<int32_t>()[i];
    if (d < 0) return ctx.Error("the shape input has a negative dimension " + std::to_string(d));
    total *= d;
    if (total > kMaxElements) return ctx.Error("the shape input describes a tensor that is too large");
    out->push_back(d);
  }
  return OkStatus();
}

Status PrepareRandom(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(1, 1, 1, 1));
  if (!ctx.has_input(0)) return ctx.Error("the shape input is omitted");
  const Tensor& shape = ctx.input(0);
  TFG_RETURN_IF_ERROR(ctx.CheckType(shape, DType::kInt32, "the shape input"));
  if (shape.shape.size() != 1) return ctx.Error("the shape input must be 1-D, got shape " + DimsToString(shape.shape));
  if (ctx.output(0).type != DType::kFloat32)
    return ctx.Error(std::string("the output has type ") + DTypeName(ctx.output(0).type) + ", only FLOAT32 is supported");
  Seed(ctx);
  if (!ctx.IsConstantOrPersistent(shape)) {
    ctx.SetOutputDynamic(0);
    return OkStatus();
  }
  Dims os;
  TFG_RETURN_IF_ERROR(ReadShape(ctx, &os));
  return ctx.SetOutputShape(0, os);
}

Status OutputFromShape(OpContext& ctx, float** data, size_t* n) {
  Tensor& out = ctx.output(0);
  if (out.alloc == Allocation::kDynamic) {
    Dims os;
    TFG_RETURN_IF_ERROR(ReadShape(ctx, &os));
    TFG_RETURN_IF_ERROR(ctx.SetOutputShape(0, os));
  }
  const int64_t count = out.num_elements();
  if (count < 0) return ctx.Error("the output has an invalid shape " + DimsToString(out.shape));
  if (count > 0 && (!out.data || out.bytes < size_t(count) * 4)) return ctx.Error("the output has no storage");
  *data = out.as<float>();
  *n = size_t(count);
  return OkStatus();
}

Status EvalUniform(OpContext& ctx) {
  float* y = nullptr;
  size_t n = 0;
  TFG_RETURN_IF_ERROR(OutputFromShape(ctx, &y, &n));
  Philox4x32& g = ctx.node().U<RngState>()->gen;
  for (size_t i = 0; i < n; i += 4) {
    const auto b = g.Next();
    for (size_t j = 0; j < 4 && i + j < n; ++j) y[i + j] = Uint32ToUnitFloat(b[j]);
  }
  return OkStatus();
}

Status EvalNormal(OpContext& ctx) {
  float* y = nullptr;
  size_t n = 0;
  TFG_RETURN_IF_ERROR(OutputFromShape(ctx, &y, &n));
  Philox4x32& g = ctx.node().U<RngState>()->gen;
  for (size_t i = 0; i < n; i += 4) {
    const auto b = g.Next();
    for (size_t j = 0; j < 4 && i + j < n; j += 2) {
      float a, c;
      BoxMuller(b[j], b[j + 1], &a, &c);
      y[i + j] = a;
      if (i + j + 1 < n) y[i + j + 1] = c;
    }
  }
  return OkStatus();
}

Status ReadNumSamples(OpContext& ctx, int32_t* out) {
  const Tensor& t = ctx.input(1);
  if (!t.shape.empty()) return ctx.Error("num_samples must be a scalar, got shape " + DimsToString(t.shape));
  if (!t.data || t.bytes < 4) return ctx.Error("num_samples has no data");
  *out = *t.as<int32_t>();
  if (*out < 0) return ctx.Error("num_samples must be >= 0, got " + std::to_string(*out));
  const int64_t batch = ctx.input(0).shape[0];
  if (batch * int64_t(*out) > kMaxElements) return ctx.Error("the output [batch, num_samples] is too large");
  return OkStatus();
}

Status PrepareMultinomial(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 2, 1, 1));
  if (!ctx.has_input(0) || !ctx.has_input(1)) return ctx.Error("an input is omitted");
  const Tensor& logits = ctx.input(0);
  const Tensor& ns = ctx.input(1);
  TFG_RETURN_IF_ERROR(ctx.CheckType(logits, DType::kFloat32, "logits"));
  TFG_RETURN_IF_ERROR(ctx.CheckType(ns, DType::kInt32, "num_samples"));
  if (logits.shape.size() != 2)
    return ctx.Error("logits must be 2-D [batch, num_classes], got shape " + DimsToString(logits.shape));
  if (logits.shape[1] <= 0) return ctx.Error("logits must have at least one class, got shape " + DimsToString(logits.shape));
  const DType ot = ctx.output(0).type;
  if (ot != DType::kInt64 && ot != DType::kInt32)
    return ctx.Error(std::string("the output has type ") + DTypeName(ot) + ", expected INT64 or INT32");
  Seed(ctx);
  int32_t n = 0;
  if (ctx.IsConstantOrPersistent(ns)) TFG_RETURN_IF_ERROR(ReadNumSamples(ctx, &n));
  if (!ctx.IsConstantOrPersistent(logits) || !ctx.IsConstantOrPersistent(ns)) {
    ctx.SetOutputDynamic(0);
    return OkStatus();
  }
  return ctx.SetOutputShape(0, Dims{logits.shape[0], n});
}

template <typename T>
void Sample(Philox4x32& rng, int batch, const float* logits, int classes, T* out, int num_samples) {
  Philox4x32 draw = rng;
  rng.Skip(uint64_t(batch) * ((uint64_t(num_samples) + 3) / 4 * 4) * 2 * 256);
  Philox4x32::Block block{};
  int used = 4;
  std::vector<double> cdf(static_cast<size_t>(classes));
  for (int b = 0; b < batch; ++b) {
    const float* row = logits + int64_t(b) * classes;
    float mx = std::numeric_limits<float>::lowest();
    for (int i = 0; i < classes; ++i)
      if (std::isfinite(row[i])) mx = std::max(mx, row[i]);
    double total = 0.0;
    for (int i = 0; i < classes; ++i) {
      if (std::isfinite(row[i])) total += std::exp(double(row[i]) - double(mx));
      cdf[size_t(i)] = total;
    }
    for (int j = 0; j < num_samples; ++j) {
      if (used == 4) {
        block = draw.Next();
        used = 0;
      }
      const double u = Uint64ToUnitDouble(block[size_t(used)], block[size_t(used) + 1]);
      used += 2;
      out[int64_t(b) * num_samples + j] = T(std::upper_bound(cdf.begin(), cdf.end(), u * total) - cdf.begin());
    }
  }
}

Status EvalMultinomial(OpContext& ctx) {
  const Tensor& logits = ctx.input(0);
  int32_t n = 0;
  TFG_RETURN_IF_ERROR(ReadNumSamples(ctx, &n));
  const int batch = logits.shape[0], classes = logits.shape[1];
  Tensor& out = ctx.output(0);
  if (out.alloc == Allocation::kDynamic) TFG_RETURN_IF_ERROR(ctx.SetOutputShape(0, Dims{batch, n}));
  if (out.shape != Dims{batch, n})
    return ctx.Error("output shape " + DimsToString(out.shape) + ", expected " + DimsToString(Dims{batch, n}));
  if (int64_t(batch) * classes > 0 && (!logits.data || logits.bytes < size_t(batch) * size_t(classes) * 4))
    return ctx.Error("logits has no data");
  Philox4x32& g = ctx.node().U<RngState>()->gen;
  if (out.type == DType::kInt64)
    Sample(g, batch, logits.as<float>(), classes, out.as<int64_t>(), n);
  else
    Sample(g, batch, logits.as<float>(), classes, out.as<int32_t>(), n);
  return OkStatus();
}

}  // namespace

const OpImpl kOp_RANDOM_UNIFORM = {ParseRandom, PrepareRandom, EvalUniform, nullptr, false};
const OpImpl kOp_RANDOM_STANDARD_NORMAL = {ParseRandom, PrepareRandom, EvalNormal, nullptr, false};
const OpImpl kOp_MULTINOMIAL = {ParseRandom, PrepareMultinomial, EvalMultinomial, nullptr, false};

}  // namespace tflite_gpu
