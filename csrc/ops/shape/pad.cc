// PAD, PADV2 (constant padding) and MIRROR_PAD (REFLECT / SYMMETRIC).
#include <climits>
#include <limits>

#include "ops/quant_common.h"
#include "ops/shape/shape_common.h"

namespace tflite_gpu {
namespace {

using namespace shape_ops;

constexpr int kMaxPadRank = 8;

// Reads and validates the [rank, 2] paddings tensor.
Status ReadPaddings(OpContext& ctx, const Tensor& paddings, int rank, std::vector<int64_t>* before,
                    std::vector<int64_t>* after) {
  if (paddings.shape.size() != 2 || paddings.shape[1] != 2 || paddings.shape[0] != rank)
    return ctx.Error("paddings must have shape [" + std::to_string(rank) + ", 2], got " + DimsToString(paddings.shape));
  std::vector<int64_t> v;
  TFG_RETURN_IF_ERROR(ReadInts(ctx, paddings, "paddings", &v, /*allow_small=*/true));
  before->assign(rank, 0);
  after->assign(rank, 0);
  for (int i = 0; i < rank; ++i) {
    int64_t l = v[2 * i], r = v[2 * i + 1];
    if (l < 0 || r < 0)
      return ctx.Error("paddings of dimension " + std::to_string(i) + " are negative (" + std::to_string(l) + ", " +
                       std::to_string(r) + ")");
    if (l > INT32_MAX || r > INT32_MAX) return ctx.Error("paddings of dimension " + std::to_string(i) + " overflow int32");
    (*before)[i] = l;
    (*after)[i] = r;
  }
  return OkStatus();
}

Status PaddedShape(OpContext& ctx, const Dims& in, const std::vector<int64_t>& l, const std::vector<int64_t>& r,
                   Dims* out) {
  out->resize(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    int64_t d = int64_t(in[i]) + l[i] + r[i];
    if (d > INT32_MAX) return ctx.Error("padded dimension " + std::to_string(i) + " overflows int32");
    (*out)[i] = int32_t(d);
  }
  return OkStatus();
}

// ---------------------------------------------------------------------------------------------
// PAD / PADV2
// ---------------------------------------------------------------------------------------------
const Tensor* ConstantValues(OpContext& ctx) { return ctx.num_inputs() >= 3 ? ctx.optional_input(2) : nullptr; }

// Whether TFLite pads this tensor with its quantization zero point (its EvalInt path).
bool PadsWithZeroPoint(const Tensor& in) {
  return in.type == DType::kUInt8 || ((in.type == DType::kInt8 || in.type == DType::kInt16) && IsQuantized(in));
}

Status PadPrepare(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(quant::ValidateNodeQuant(ctx));
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 3, 1, 1));
  if (!ctx.has_input(0) || !ctx.has_input(1)) return ctx.Error("missing input");
  const Tensor& in = ctx.input(0);
  const Tensor& paddings = ctx.input(1);
  Tensor& out = ctx.output(0);
  TFG_RETURN_IF_ERROR(CheckMovable(ctx, in, "input"));
  TFG_RETURN_IF_ERROR(CheckSameType(ctx, out, in, "output", "input"));
  const int rank = int(in.shape.size());
  if (rank > kMaxPadRank) return ctx.Error("input rank " + std::to_string(rank) + " exceeds " + std::to_string(kMaxPadRank));
  if (paddings.type != DType::kInt32 && paddings.type != DType::kInt64 && paddings.type != DType::kInt16 &&
      paddings.type != DType::kInt8)
    return ctx.Error(std::string("paddings has type ") + DTypeName(paddings.type) + ", expected INT32 or INT64");
  if (paddings.shape.size() != 2 || paddings.shape[1] != 2 || paddings.shape[0] != rank)
    return ctx.Error("paddings must have shape [" + std::to_string(rank) + ", 2], got " + DimsToString(paddings.shape));
  if (const Tensor* cv = ConstantValues(ctx)) {
    TFG_RETURN_IF_ERROR(CheckSameType(ctx, *cv, in, "constant_values", "input"));
    if (cv->num_elements() != 1)
      return ctx.Error("constant_values must hold exactly one value, got shape " + DimsToString(cv->shape));
    if (PadsWithZeroPoint(in) && !SameLegacyQuant(*cv, out))
      return ctx.Error("constant_values quantization differs from the output's (scale and zero point must match)");
  } else if (PadsWithZeroPoint(in)) {
    int32_t zp = Legacy(out).zero_point;
    int32_t lo = in.type == DType::kUInt8 ? 0 : in.type == DType::kInt8 ? -128 : -32768;
    int32_t hi = in.type == DType::kUInt8 ? 255 : in.type == DType::kInt8 ? 127 : 32767;
    if (zp < lo || zp > hi) return ctx.Error("output zero point " + std::to_string(zp) + " is outside the type's range");
  }
  if (!ctx.IsConstantOrPersistent(paddings)) {
    ctx.SetOutputDynamic(0);
    return OkStatus();
  }
  std::vector<int64_t> l, r;
  TFG_RETURN_IF_ERROR(ReadPaddings(ctx, paddings, rank, &l, &r));
  Dims os;
  TFG_RETURN_IF_ERROR(PaddedShape(ctx, in.shape, l, r, &os));
  return ctx.SetOutputShape(0, os);
}

// The pad value as raw bytes of the element type.
uint64_t PadValueBits(OpContext& ctx) {
  const Tensor& in = ctx.input(0);
  const size_t es = DTypeSize(in.type);
  uint64_t bits = 0;
  if (const Tensor* cv = ConstantValues(ctx)) {
    std::memcpy(&bits, cv->data, es);
  } else if (PadsWithZeroPoint(in)) {
    int32_t zp = Legacy(ctx.output(0)).zero_point;
    if (in.type == DType::kUInt8) { uint8_t v = uint8_t(zp); std::memcpy(&bits, &v, 1); }
    else if (in.type == DType::kInt8) { int8_t v = int8_t(zp); std::memcpy(&bits, &v, 1); }
    else { int16_t v = int16_t(zp); std::memcpy(&bits, &v, 2); }
  }
  return bits;
}

struct PadSetup {
  std::vector<int64_t> l, r;
  uint64_t value = 0;
};

Status PadResolve(OpContext& ctx, PadSetup* s) {
  const Tensor& in = ctx.input(0);
  TFG_RETURN_IF_ERROR(ReadPaddings(ctx, ctx.input(1), int(in.shape.size()), &s->l, &s->r));
  if (const Tensor* cv = ConstantValues(ctx)) TFG_RETURN_IF_ERROR(CheckHasData(ctx, *cv, "constant_values"));
  Dims os;
  TFG_RETURN_IF_ERROR(PaddedShape(ctx, in.shape, s->l, s->r, &os));
  TFG_RETURN_IF_ERROR(SetOrCheckShape(ctx, 0, os));
  s->value = PadValueBits(ctx);
  return OkStatus();
}

template <typename T>
void Fill(uint8_t* dst, int64_t n, uint64_t bits) {
  T v;
  std::memcpy(&v, &bits, sizeof(T));
  T* d = reinterpret_cast<T*>(dst);
  for (int64_t i = 0; i < n; ++i) d[i] = v;
}

void FillBytes(uint8_t* dst, int64_t n, size_t es, uint64_t bits) {
  if (n <= 0) return;
  if (bits == 0) { std::memset(dst, 0, size_t(n) * es); return; }
  BySize(es, [&](auto t) { Fill<decltype(t)>(dst, n, bits); return 0; });
}

Status PadEval(OpContext& ctx) {
  PadSetup s;
  TFG_RETURN_IF_ERROR(PadResolve(ctx, &s));
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  const size_t es = DTypeSize(in.type);
  const int rank = int(in.shape.size());
  if (out.num_elements() == 0) return OkStatus();
  if (rank == 0) { std::memcpy(out.data, in.data, es); return OkStatus(); }
  // Fold every dimension without padding into its predecessor: rows get longer, loops shallower.
  std::vector<int64_t> d, l, r;
  for (int i = 0; i < rank; ++i) {
    if (i > 0 && s.l[i] == 0 && s.r[i] == 0) {
      d.back() *= in.shape[i];
      l.back() *= in.shape[i];
      r.back() *= in.shape[i];
    } else {
      d.push_back(in.shape[i]);
      l.push_back(s.l[i]);
      r.push_back(s.r[i]);
    }
  }
  const int n = int(d.size());
  std::vector<int64_t> od(n);
  for (int i = 0; i < n; ++i) od[i] = l[i] + d[i] + r[i];
  const int64_t row_out = od[n - 1], row_in = d[n - 1];
  int64_t rows = 1;
  for (int i = 0; i < n - 1; ++i) rows *= od[i];
  std::vector<int64_t> in_strides(n, 1);
  for (int i = n - 2; i >= 0; --i) in_strides[i] = in_strides[i + 1] * d[i + 1];
  const uint8_t* src = in.as<uint8_t>();
  uint8_t* dst = out.as<uint8_t>();
  const uint64_t value = s.value;
  ParallelFor(ctx.pool(), rows, [&](int64_t b, int64_t e) {
    for (int64_t row = b; row < e; ++row) {
      uint8_t* o = dst + row * row_out * int64_t(es);
      int64_t rem = row, src_off = 0;
      bool inside = true;
      for (int i = n - 2; i >= 0; --i) {
        int64_t c = rem % od[i];
        rem /= od[i];
        int64_t ic = c - l[i];
        if (ic < 0 || ic >= d[i]) { inside = false; break; }
        src_off += ic * in_strides[i];
      }
      if (!inside) { FillBytes(o, row_out, es, value); continue; }
      FillBytes(o, l[n - 1], es, value);
      Copy(o + l[n - 1] * int64_t(es), src + src_off * int64_t(es), size_t(row_in) * es);
      FillBytes(o + (l[n - 1] + row_in) * int64_t(es), r[n - 1], es, value);
    }
  }, MinChunk(row_out * int64_t(es)));
  return OkStatus();
}

Status PadEvalRef(OpContext& ctx) {
  PadSetup s;
  TFG_RETURN_IF_ERROR(PadResolve(ctx, &s));
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  const size_t es = DTypeSize(in.type);
  const int rank = int(in.shape.size());
  const int64_t total = out.num_elements();
  std::vector<int64_t> is = Strides(in.shape);
  for (int64_t idx = 0; idx < total; ++idx) {
    int64_t rem = idx, src = 0;
    bool inside = true;
    for (int i = rank - 1; i >= 0; --i) {
      int64_t c = rem % out.shape[i];
      rem /= out.shape[i];
      int64_t ic = c - s.l[i];
      if (ic < 0 || ic >= in.shape[i]) inside = false;
      else src += ic * is[i];
    }
    if (inside) std::memcpy(out.data + idx * es, in.data + src * es, es);
    else std::memcpy(out.data + idx * es, &s.value, es);
  }
  return OkStatus();
}

// ---------------------------------------------------------------------------------------------
// MIRROR_PAD
// ---------------------------------------------------------------------------------------------
struct MirrorPadParams {
  int mode = 0;  // 0 REFLECT, 1 SYMMETRIC
};

Status MirrorPadParse(const OptionsView& opts, Node& node) {
  auto p = std::make_shared<MirrorPadParams>();
  // Without MirrorPadOptions TFLite's mode is "unknown" and the op fails to prepare.
  p->mode = opts.table.valid() ? opts.Get<int8_t>(0, 0) : -1;
  node.params = p;
  return OkStatus();
}

Status MirrorResolve(OpContext& ctx, std::vector<int64_t>* l, std::vector<int64_t>* r, Dims* os) {
  const auto& p = ctx.node().P<MirrorPadParams>();
  const Tensor& in = ctx.input(0);
  const int rank = int(in.shape.size());
  TFG_RETURN_IF_ERROR(ReadPaddings(ctx, ctx.input(1), rank, l, r));
  const int offset = p.mode == 0 ? 1 : 0;  // REFLECT excludes the border element
  for (int i = 0; i < rank; ++i) {
    int64_t limit = int64_t(in.shape[i]) - offset;  // as TFLite: REFLECT of an empty dim fails
    if ((*l)[i] > limit || (*r)[i] > limit)
      return ctx.Error("paddings (" + std::to_string((*l)[i]) + ", " + std::to_string((*r)[i]) + ") of dimension " +
                       std::to_string(i) + " exceed what " + (p.mode == 0 ? "REFLECT" : "SYMMETRIC") +
                       " mode allows for size " + std::to_string(in.shape[i]) + " (at most " +
                       std::to_string(limit) + ")");
  }
  return PaddedShape(ctx, in.shape, *l, *r, os);
}

Status MirrorPadPrepare(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(quant::ValidateNodeQuant(ctx));
  const auto& p = ctx.node().P<MirrorPadParams>();
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 2, 1, 1));
  if (!ctx.has_input(0) || !ctx.has_input(1)) return ctx.Error("missing input");
  if (p.mode == -1) return ctx.Error("MirrorPadOptions are missing (mode must be REFLECT or SYMMETRIC)");
  if (p.mode != 0 && p.mode != 1) return ctx.Error("unknown mirror pad mode " + std::to_string(p.mode));
  const Tensor& in = ctx.input(0);
  const Tensor& paddings = ctx.input(1);
  Tensor& out = ctx.output(0);
  TFG_RETURN_IF_ERROR(CheckMovable(ctx, in, "input"));
  TFG_RETURN_IF_ERROR(CheckSameType(ctx, out, in, "output", "input"));
  const int rank = int(in.shape.size());
  if (rank > kMaxPadRank) return ctx.Error("input rank " + std::to_string(rank) + " exceeds " + std::to_string(kMaxPadRank));
  if (paddings.type != DType::kInt32 && paddings.type != DType::kInt64)
    return ctx.Error(std::string("paddings has type ") + DTypeName(paddings.type) + ", expected INT32 or INT64");
  if (paddings.shape.size() != 2 || paddings.shape[1] != 2 || paddings.shape[0] != rank)
    return ctx.Error("paddings must have shape [" + std::to_string(rank) + ", 2], got " + DimsToString(paddings.shape));
  if (in.type == DType::kUInt8 || in.type == DType::kInt8 || in.type == DType::kInt16) {
    if (!SameLegacyQuant(in, out)) return ctx.Error("input and output quantization differ");
    if (in.type == DType::kInt16 && Legacy(in).zero_point != 0) return ctx.Error("int16 zero point must be 0");
  }
  if (!ctx.IsConstantOrPersistent(paddings)) {
    ctx.SetOutputDynamic(0);
    return OkStatus();
  }
  std::vector<int64_t> l, r;
  Dims os;
  TFG_RETURN_IF_ERROR(MirrorResolve(ctx, &l, &r, &os));
  return ctx.SetOutputShape(0, os);
}

// Input coordinate of output coordinate c along one dimension.
inline int64_t MirrorIndex(int64_t c, int64_t l, int64_t d, int offset) {
  if (c < l) return l - c - 1 + offset;
  c -= l;
  if (c < d) return c;
  return d - 1 - offset - (c - d);
}

Status MirrorPadEval(OpContext& ctx) {
  const int offset = ctx.node().P<MirrorPadParams>().mode == 0 ? 1 : 0;
  std::vector<int64_t> l, r;
  Dims os;
  TFG_RETURN_IF_ERROR(MirrorResolve(ctx, &l, &r, &os));
  TFG_RETURN_IF_ERROR(SetOrCheckShape(ctx, 0, os));
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  const size_t es = DTypeSize(in.type);
  const int rank = int(in.shape.size());
  if (out.num_elements() == 0) return OkStatus();
  // P: the last padded dimension; everything after it is copied as one block.
  int P = -1;
  for (int i = 0; i < rank; ++i)
    if (l[i] || r[i]) P = i;
  if (P < 0) {
    Copy(out.data, in.data, size_t(out.num_elements()) * es);
    return OkStatus();
  }
  const int64_t block = Prod(in.shape, P + 1, rank) * int64_t(es);
  int64_t rows = Prod(os, 0, P);
  std::vector<int64_t> is = Strides(in.shape);
  const int64_t dP = in.shape[P], oP = os[P];
  const uint8_t* src = in.as<uint8_t>();
  uint8_t* dst = out.as<uint8_t>();
  ParallelFor(ctx.pool(), rows, [&](int64_t b, int64_t e) {
    for (int64_t row = b; row < e; ++row) {
      int64_t rem = row, src_off = 0;
      for (int i = P - 1; i >= 0; --i) {
        int64_t c = rem % os[i];
        rem /= os[i];
        src_off += MirrorIndex(c, l[i], in.shape[i], offset) * is[i];
      }
      const uint8_t* s = src + src_off * int64_t(es);
      uint8_t* o = dst + row * oP * block;
      for (int64_t j = 0; j < l[P]; ++j) Copy(o + j * block, s + MirrorIndex(j, l[P], dP, offset) * block, size_t(block));
      Copy(o + l[P] * block, s, size_t(dP * block));
      for (int64_t j = l[P] + dP; j < oP; ++j)
        Copy(o + j * block, s + MirrorIndex(j, l[P], dP, offset) * block, size_t(block));
    }
  }, MinChunk(oP * block));
  return OkStatus();
}

Status MirrorPadEvalRef(OpContext& ctx) {
  const int offset = ctx.node().P<MirrorPadParams>().mode == 0 ? 1 : 0;
  std::vector<int64_t> l, r;
  Dims os;
  TFG_RETURN_IF_ERROR(MirrorResolve(ctx, &l, &r, &os));
  TFG_RETURN_IF_ERROR(SetOrCheckShape(ctx, 0, os));
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  const size_t es = DTypeSize(in.type);
  const int rank = int(in.shape.size());
  const int64_t total = out.num_elements();
  std::vector<int64_t> is = Strides(in.shape);
  for (int64_t idx = 0; idx < total; ++idx) {
    int64_t rem = idx, src = 0;
    for (int i = rank - 1; i >= 0; --i) {
      int64_t c = rem % os[i];
      rem /= os[i];
      src += MirrorIndex(c, l[i], in.shape[i], offset) * is[i];
    }
    std::memcpy(out.data + idx * es, in.data + src * es, es);
  }
  return OkStatus();
}

}  // namespace

const OpImpl kOp_PAD = {nullptr, PadPrepare, PadEval, PadEvalRef, false};
const OpImpl kOp_PADV2 = {nullptr, PadPrepare, PadEval, PadEvalRef, false};
const OpImpl kOp_MIRROR_PAD = {MirrorPadParse, MirrorPadPrepare, MirrorPadEval, MirrorPadEvalRef, false};

int shape_ops::MirrorPadModeOf(const Node& node) { return node.P<MirrorPadParams>().mode; }
}  // namespace tflite_gpu
