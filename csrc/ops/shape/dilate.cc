// DILATE (builtin 203, from StableHLO's interior padding): scatters the input into a larger tensor
// with `dilations[d] - 1` copies of the padding value between neighbouring elements of dimension d.
// Output dimension d is (in[d] - 1) * dilations[d] + 1; out[i0 * d0, ..., iN * dN] = in[i0, ..., iN],
// every other element is the padding value. As TFLite's kernel:
//   inputs: input (any fixed-size type), dilations (INT32, [rank], each >= 1), padding_value (same
//   type as input, its first element is used); options: DilateOptions (builtin_options_2, empty).
//   A non-constant dilations tensor makes the output dynamic (shape at invoke).
#include <climits>

#include "ops/shape/shape_common.h"

namespace tflite_gpu {
namespace {

using namespace shape_ops;

constexpr int kMaxDilateRank = 8;

// Reads and checks the dilations; fills the output shape.
Status DilatedShape(OpContext& ctx, const Tensor& in, const Tensor& dil, std::vector<int64_t>* d, Dims* out) {
  const int rank = int(in.shape.size());
  if (dil.type != DType::kInt32)
    return ctx.Error(std::string("dilations has type ") + DTypeName(dil.type) + ", expected INT32");
  if (dil.shape.size() != 1 || dil.shape[0] != rank)
    return ctx.Error("dilations must have shape [" + std::to_string(rank) + "] (one factor per input dimension), got " +
                     DimsToString(dil.shape));
  TFG_RETURN_IF_ERROR(ReadInts(ctx, dil, "dilations", d));
  out->resize(rank);
  for (int i = 0; i < rank; ++i) {
    const int64_t f = (*d)[i];
    if (f < 1) return ctx.Error("dilations[" + std::to_string(i) + "] is " + std::to_string(f) + "; it must be >= 1");
    const int64_t n = in.shape[i] == 0 ? 0 : (int64_t(in.shape[i]) - 1) * f + 1;
    if (n > INT32_MAX) return ctx.Error("dilated dimension " + std::to_string(i) + " overflows int32");
    (*out)[i] = int32_t(n);
  }
  return OkStatus();
}

Status DilatePrepare(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(3, 3, 1, 1));
  for (int i = 0; i < 3; ++i)
    if (!ctx.has_input(i)) return ctx.Error("input " + std::to_string(i) + " is missing");
  const Tensor& in = ctx.input(0);
  const Tensor& dil = ctx.input(1);
  const Tensor& pad = ctx.input(2);
  TFG_RETURN_IF_ERROR(CheckMovable(ctx, in, "input"));
  TFG_RETURN_IF_ERROR(CheckSameType(ctx, ctx.output(0), in, "output", "input"));
  TFG_RETURN_IF_ERROR(CheckSameType(ctx, pad, in, "padding_value", "input"));
  if (in.shape.empty()) return ctx.Error("input must have rank >= 1 (got a scalar)");
  if (in.shape.size() > size_t(kMaxDilateRank))
    return ctx.Error("input rank " + std::to_string(in.shape.size()) + " exceeds " + std::to_string(kMaxDilateRank));
  if (pad.num_elements() < 1) return ctx.Error("padding_value is empty (shape " + DimsToString(pad.shape) + ")");
  if (!ctx.IsConstantOrPersistent(dil)) {
    if (dil.type != DType::kInt32)
      return ctx.Error(std::string("dilations has type ") + DTypeName(dil.type) + ", expected INT32");
    ctx.SetOutputDynamic(0);
    return OkStatus();
  }
  std::vector<int64_t> d;
  Dims os;
  TFG_RETURN_IF_ERROR(DilatedShape(ctx, in, dil, &d, &os));
  return ctx.SetOutputShape(0, os);
}

// Fills the output with the padding value, then scatters the input rows (the innermost dimension
// strided by its dilation).
template <typename T>
void DilateRun(const Tensor& in, const std::vector<int64_t>& d, const Dims& os, T pad, T* out, ThreadPool* pool) {
  const int64_t total = NumElements(os);
  ParallelFor(pool, total, [&](int64_t b, int64_t e) { std::fill(out + b, out + e, pad); }, MinChunk(sizeof(T)));
  const int rank = int(in.shape.size());
  const int64_t n_in = in.num_elements();
  if (n_in == 0) return;
  const std::vector<int64_t> ost = Strides(os);
  const int64_t inner = in.shape[rank - 1];
  const int64_t rows = n_in / inner;
  const int64_t step = d[rank - 1];
  const T* src = in.as<T>();
  ParallelFor(
      pool, rows,
      [&](int64_t rb, int64_t re) {
        for (int64_t r = rb; r < re; ++r) {
          // output offset of row r: its multi-index over the leading dims, scaled by the dilations
          int64_t off = 0, rem = r;
          for (int k = rank - 2; k >= 0; --k) {
            const int64_t i = rem % in.shape[k];
            rem /= in.shape[k];
            off += i * d[k] * ost[k];
          }
          const T* s = src + r * inner;
          T* o = out + off;
          for (int64_t j = 0; j < inner; ++j) o[j * step] = s[j];
        }
      },
      std::max<int64_t>(1, MinChunk(sizeof(T) * inner)));
}

Status DilateEval(OpContext& ctx) {
  const Tensor& in = ctx.input(0);
  std::vector<int64_t> d;
  Dims os;
  TFG_RETURN_IF_ERROR(DilatedShape(ctx, in, ctx.input(1), &d, &os));
  TFG_RETURN_IF_ERROR(ctx.SetOutputShape(0, os));
  Tensor& out = ctx.output(0);
  const Tensor& pad = ctx.input(2);
  return BySize(DTypeSize(in.type), [&](auto z) {
    using T = decltype(z);
    T pv;
    std::memcpy(&pv, pad.data, sizeof(T));
    DilateRun<T>(in, d, os, pv, out.as<T>(), ctx.pool());
    return OkStatus();
  });
}

// Reference: every output element from its own multi-index.
Status DilateEvalRef(OpContext& ctx) {
  const Tensor& in = ctx.input(0);
  std::vector<int64_t> d;
  Dims os;
  TFG_RETURN_IF_ERROR(DilatedShape(ctx, in, ctx.input(1), &d, &os));
  TFG_RETURN_IF_ERROR(ctx.SetOutputShape(0, os));
  Tensor& out = ctx.output(0);
  const size_t es = DTypeSize(in.type);
  const int rank = int(os.size());
  const std::vector<int64_t> ist = Strides(in.shape);
  const int64_t total = NumElements(os);
  const uint8_t* src = in.as<uint8_t>();
  const uint8_t* pv = ctx.input(2).as<uint8_t>();
  uint8_t* dst = out.as<uint8_t>();
  for (int64_t o = 0; o < total; ++o) {
    int64_t rem = o, src_off = 0;
    bool on_grid = true;
    for (int k = rank - 1; k >= 0; --k) {
      const int64_t i = rem % os[k];
      rem /= os[k];
      if (i % d[k] != 0) on_grid = false;
      src_off += (i / d[k]) * ist[k];
    }
    std::memcpy(dst + o * es, on_grid ? src + src_off * es : pv, es);
  }
  return OkStatus();
}

}  // namespace

const OpImpl kOp_DILATE = {nullptr, DilatePrepare, DilateEval, DilateEvalRef, false};

}  // namespace tflite_gpu
