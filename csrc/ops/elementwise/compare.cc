// Comparisons and logic: EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER, GREATER_EQUAL (broadcast,
// BOOL output), LOGICAL_OR, LOGICAL_NOT, SELECT, SELECT_V2 and WHERE. Semantics as TensorFlow
// Lite's kernels (comparisons.cc, logical.cc, select.cc, where.cc):
//  * both comparison inputs have the same type; float compares follow IEEE (NaN != NaN);
//  * SELECT (v1): x and y have the same shape; the condition has that shape, is a scalar (picks
//    all of x or all of y) or is 1-D with x's first dimension (picks whole rows);
//  * SELECT_V2: condition, x and y broadcast together (numpy rules);
//  * both SELECTs: when the condition, x, y and the declared output all hold one element, the
//    output keeps its declared shape (TFLite's "scalar data" rule);
//  * WHERE: INT64 coordinates [num_true, rank] of the non-zero elements in row-major order; the
//    output is dynamic unless the condition is constant.
#include "ops/elementwise/ew_common.h"
#include "ops/quant_common.h"

namespace tflite_gpu {
namespace {

struct BinData {
  ew::BcastPlan plan;
  // Quantized int8/uint8 comparisons: TFLite's per-input rescaling (ComparisonWithScaling).
  bool quantized = false;
  int32_t off1 = 0, off2 = 0, m1 = 0, m2 = 0;
  int s1 = 0, s2 = 0;
};

enum class Cmp { kEq, kNe, kLt, kLe, kGt, kGe };

template <Cmp C, typename T>
struct CmpOp {
  uint8_t operator()(T a, T b) const {
    switch (C) {
      case Cmp::kEq: return a == b;
      case Cmp::kNe: return a != b;
      case Cmp::kLt: return a < b;
      case Cmp::kLe: return a <= b;
      case Cmp::kGt: return a > b;
      case Cmp::kGe: return a >= b;
    }
    return 0;
  }
};

std::string TypeList(std::initializer_list<DType> l) {
  std::string s;
  for (DType t : l) s += std::string(s.empty() ? "" : ", ") + DTypeName(t);
  return s;
}

// Two inputs of one type from `allowed`, broadcast together; output of type `out_type`.
Status PrepareBroadcast2(OpContext& ctx, std::initializer_list<DType> allowed, DType out_type) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 2, 1, 1));
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.type != b.type)
    return ctx.Error(std::string("input types differ: ") + DTypeName(a.type) + " and " + DTypeName(b.type));
  bool ok = false;
  for (DType t : allowed) ok |= t == a.type;
  if (!ok)
    return ctx.Error(std::string("unsupported input type ") + DTypeName(a.type) + " (supported: " + TypeList(allowed) + ")");
  Dims out;
  TFG_RETURN_IF_ERROR(ew::BroadcastShape(ctx, a.shape, b.shape, &out));
  auto data = std::make_shared<BinData>();
  data->plan = ew::MakeBcastPlan(a.shape, b.shape, out);
  if (data->plan.dims.size() > 64) return ctx.Error("broadcast pattern too complex");
  ctx.node().user_data = data;
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, out_type));
  return ctx.SetOutputShape(0, out);
}

template <typename TI, typename TO, typename F>
Status RunBin(OpContext& ctx, bool ref, const F& f) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  Tensor& o = ctx.output(0);
  if (ref)
    ew::RunBinaryRef(a.shape, a.as<TI>(), b.shape, b.as<TI>(), o.shape, o.as<TO>(), f);
  else
    ew::RunBinary(ctx.pool(), ctx.node().U<BinData>()->plan, a.as<TI>(), b.as<TI>(), o.as<TO>(), f);
  return OkStatus();
}

// ---- comparisons ----

bool Quantized(const Tensor& t) {
  return (t.type == DType::kInt8 || t.type == DType::kUInt8) && !t.quant.scale.empty();
}

// Quantized int8/uint8 inputs: TFLite compares (x - zero_point) << 8, each scaled by its own
// input scale as a Q31 multiplier below one (QuantizeMultiplierSmallerThanOneExp, then
// RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(.))), so both sides land on one scale up
// to rounding. TFLite aborts on a scale outside (0, 1); we refuse it at prepare.
Status PrepareQuantCompare(OpContext& ctx, BinData* d) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (!Quantized(a) && !Quantized(b)) return OkStatus();
  if (!Quantized(a) || !Quantized(b))
    return ctx.Error("both inputs must carry quantization parameters, or neither");
  const Tensor* ts[2] = {&a, &b};
  for (int i = 0; i < 2; ++i) {
    const Tensor& t = *ts[i];
    if (t.quant.scale.size() != 1)
      return ctx.Error("input " + std::to_string(i) + ": per-channel quantization is not supported for comparisons");
    const double sc = t.quant.scale[0];
    if (!(sc > 0.0 && sc < 1.0))
      return ctx.Error("input " + std::to_string(i) + " scale " + std::to_string(sc) +
                       " is outside (0, 1), which TFLite's quantized comparison requires");
    const int64_t zp = t.quant.zero_point.empty() ? 0 : t.quant.zero_point[0];
    int32_t lo, hi;
    quant::TypeRange(t.type, &lo, &hi);
    if (zp < lo || zp > hi) return ctx.Error("input " + std::to_string(i) + " zero point " + std::to_string(zp) + " is out of range");
    int32_t m;
    int sh;
    quant::QuantizeMultiplier(sc, &m, &sh);
    if (i == 0) { d->off1 = int32_t(-zp); d->m1 = m; d->s1 = sh; }
    else { d->off2 = int32_t(-zp); d->m2 = m; d->s2 = sh; }
  }
  d->quantized = true;
  return OkStatus();
}

template <Cmp C>
Status PrepareCompare(OpContext& ctx) {
  if (C == Cmp::kEq || C == Cmp::kNe)
    TFG_RETURN_IF_ERROR(PrepareBroadcast2(ctx, {DType::kFloat32, DType::kInt32, DType::kInt64, DType::kBool,
                                                DType::kInt16, DType::kInt8, DType::kUInt8},
                                          DType::kBool));
  else
    TFG_RETURN_IF_ERROR(PrepareBroadcast2(ctx, {DType::kFloat32, DType::kInt32, DType::kInt64, DType::kInt16,
                                                DType::kInt8, DType::kUInt8},
                                          DType::kBool));
  return PrepareQuantCompare(ctx, ctx.node().U<BinData>());
}

template <Cmp C, typename T>
struct ScaledCmp {
  int32_t off1, off2, m1, m2;
  int s1, s2;
  uint8_t operator()(T a, T b) const {
    const int32_t x = quant::MultiplyByQuantizedMultiplier((off1 + int32_t(a)) * 256, m1, s1);
    const int32_t y = quant::MultiplyByQuantizedMultiplier((off2 + int32_t(b)) * 256, m2, s2);
    return CmpOp<C, int32_t>()(x, y);
  }
};

template <Cmp C>
Status EvalCompareImpl(OpContext& ctx, bool ref) {
  const Tensor& a = ctx.input(0);
  switch (a.type) {
    case DType::kFloat32: return RunBin<float, uint8_t>(ctx, ref, CmpOp<C, float>());
    case DType::kInt32: return RunBin<int32_t, uint8_t>(ctx, ref, CmpOp<C, int32_t>());
    case DType::kInt64: return RunBin<int64_t, uint8_t>(ctx, ref, CmpOp<C, int64_t>());
    case DType::kInt16: return RunBin<int16_t, uint8_t>(ctx, ref, CmpOp<C, int16_t>());
    case DType::kBool: return RunBin<uint8_t, uint8_t>(ctx, ref, CmpOp<C, bool>());
    case DType::kInt8:
    case DType::kUInt8:
      if (ctx.node().U<BinData>()->quantized) {
        const BinData& d = *ctx.node().U<BinData>();
        if (a.type == DType::kInt8)
          return RunBin<int8_t, uint8_t>(ctx, ref, ScaledCmp<C, int8_t>{d.off1, d.off2, d.m1, d.m2, d.s1, d.s2});
        return RunBin<uint8_t, uint8_t>(ctx, ref, ScaledCmp<C, uint8_t>{d.off1, d.off2, d.m1, d.m2, d.s1, d.s2});
      }
      if (a.type == DType::kInt8) return RunBin<int8_t, uint8_t>(ctx, ref, CmpOp<C, int8_t>());
      return RunBin<uint8_t, uint8_t>(ctx, ref, CmpOp<C, uint8_t>());
    default: return ctx.Error("unsupported input type");
  }
}
template <Cmp C> Status EvalCompare(OpContext& ctx) { return EvalCompareImpl<C>(ctx, false); }
template <Cmp C> Status EvalCompareRef(OpContext& ctx) { return EvalCompareImpl<C>(ctx, true); }

// ---- LOGICAL_OR / LOGICAL_NOT ----

struct OrOp {
  uint8_t operator()(uint8_t a, uint8_t b) const { return uint8_t((a != 0) | (b != 0)); }
};
Status PrepareOr(OpContext& ctx) { return PrepareBroadcast2(ctx, {DType::kBool}, DType::kBool); }
Status EvalOr(OpContext& ctx) { return RunBin<uint8_t, uint8_t>(ctx, false, OrOp()); }
Status EvalOrRef(OpContext& ctx) { return RunBin<uint8_t, uint8_t>(ctx, true, OrOp()); }

Status PrepareNot(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(1, 1, 1, 1));
  const Tensor& x = ctx.input(0);
  if (x.type != DType::kBool) return ctx.Error(std::string("input must be BOOL, got ") + DTypeName(x.type));
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, DType::kBool));
  return ctx.SetOutputShape(0, x.shape);
}
Status EvalNot(OpContext& ctx) {
  const Tensor& x = ctx.input(0);
  ew::RunUnary(ctx.pool(), x.num_elements(), x.as<uint8_t>(), ctx.output(0).as<uint8_t>(),
               [](uint8_t v) { return uint8_t(v == 0); });
  return OkStatus();
}
Status EvalNotRef(OpContext& ctx) {
  const Tensor& x = ctx.input(0);
  const uint8_t* p = x.as<uint8_t>();
  uint8_t* o = ctx.output(0).as<uint8_t>();
  for (int64_t i = 0; i < x.num_elements(); ++i) o[i] = p[i] ? 0 : 1;
  return OkStatus();
}

// ---- SELECT / SELECT_V2 ----

struct SelectData {
  enum Mode { kSame, kScalarCond, kRowCond, kBroadcast } mode = kSame;
  Dims out;
};

template <bool kV2>
Status PrepareSelect(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(3, 3, 1, 1));
  const Tensor& c = ctx.input(0);
  const Tensor& x = ctx.input(1);
  const Tensor& y = ctx.input(2);
  if (c.type != DType::kBool) return ctx.Error(std::string("condition must be BOOL, got ") + DTypeName(c.type));
  if (x.type != y.type)
    return ctx.Error(std::string("x and y types differ: ") + DTypeName(x.type) + " and " + DTypeName(y.type));
  switch (x.type) {
    case DType::kFloat32: case DType::kInt32: case DType::kInt64: case DType::kInt16: case DType::kInt8:
    case DType::kUInt8: case DType::kBool: case DType::kUInt32: break;
    default: return ctx.Error(std::string("unsupported type ") + DTypeName(x.type));
  }
  auto d = std::make_shared<SelectData>();
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, x.type));
  if (c.num_elements() == 1 && x.num_elements() == 1 && y.num_elements() == 1 &&
      ctx.output(0).shape.size() <= 8 && NumElements(ctx.output(0).shape) == 1) {
    d->mode = SelectData::kSame;
    d->out = ctx.output(0).shape;
  } else if (c.shape == x.shape && x.shape == y.shape) {
    d->mode = SelectData::kSame;
    d->out = x.shape;
  } else if (!kV2) {
    if (c.shape.empty()) d->mode = SelectData::kScalarCond;
    else if (c.shape.size() == 1 && !x.shape.empty() && c.shape[0] == x.shape[0]) d->mode = SelectData::kRowCond;
    else
      return ctx.Error("condition of shape " + DimsToString(c.shape) + " must match x " + DimsToString(x.shape) +
                       ", be a scalar, or be 1-D with x's first dimension");
    if (x.shape != y.shape)
      return ctx.Error("x " + DimsToString(x.shape) + " and y " + DimsToString(y.shape) + " must have the same shape");
    d->out = x.shape;
  } else {
    Dims cx;
    TFG_RETURN_IF_ERROR(ew::BroadcastShape(ctx, c.shape, x.shape, &cx));
    TFG_RETURN_IF_ERROR(ew::BroadcastShape(ctx, cx, y.shape, &d->out));
    if (d->out.size() > 5) return ctx.Error("SELECT_V2 broadcasts up to rank 5, got rank " + std::to_string(d->out.size()));
    d->mode = SelectData::kBroadcast;
  }
  ctx.node().user_data = d;
  return ctx.SetOutputShape(0, d->out);
}

template <typename T>
void SelectRun(OpContext& ctx, bool ref) {
  const SelectData& d = *ctx.node().U<SelectData>();
  const Tensor& c = ctx.input(0);
  const Tensor& x = ctx.input(1);
  const Tensor& y = ctx.input(2);
  Tensor& o = ctx.output(0);
  const uint8_t* pc = c.as<uint8_t>();
  const T* px = x.as<T>();
  const T* py = y.as<T>();
  T* po = o.as<T>();
  const int64_t n = o.num_elements();
  switch (d.mode) {
    case SelectData::kSame:
      if (ref) {
        for (int64_t i = 0; i < n; ++i) po[i] = pc[i] ? px[i] : py[i];
      } else {
        ParallelFor(ctx.pool(), n, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) po[i] = pc[i] ? px[i] : py[i];
        }, ew::kCheapChunk);
      }
      return;
    case SelectData::kScalarCond: {
      const T* src = pc[0] ? px : py;
      for (int64_t i = 0; i < n; ++i) po[i] = src[i];
      return;
    }
    case SelectData::kRowCond: {
      const int64_t rows = c.shape[0];
      const int64_t inner = rows == 0 ? 0 : n / rows;
      for (int64_t r = 0; r < rows; ++r) {
        const T* src = (pc[r] ? px : py) + r * inner;
        for (int64_t i = 0; i < inner; ++i) po[r * inner + i] = src[i];
      }
      return;
    }
    case SelectData::kBroadcast: {
      const Dims& so = d.out;
      std::vector<int64_t> idx(so.size(), 0);
      for (int64_t i = 0; i < n; ++i) {
        po[i] = pc[ew::BroadcastOffset(c.shape, so, idx)] ? px[ew::BroadcastOffset(x.shape, so, idx)]
                                                           : py[ew::BroadcastOffset(y.shape, so, idx)];
        for (int k = int(so.size()) - 1; k >= 0; --k) {
          if (++idx[k] < so[k]) break;
          idx[k] = 0;
        }
      }
      return;
    }
  }
}

template <bool kRef>
Status EvalSelect(OpContext& ctx) {
  switch (DTypeSize(ctx.input(1).type)) {
    case 1: SelectRun<uint8_t>(ctx, kRef); break;
    case 2: SelectRun<uint16_t>(ctx, kRef); break;
    case 4: SelectRun<uint32_t>(ctx, kRef); break;
    case 8: SelectRun<uint64_t>(ctx, kRef); break;
    default: return ctx.Error("unsupported type");
  }
  return OkStatus();
}

// ---- WHERE ----

Status ShapeWhere(OpContext& ctx) {
  const Tensor& c = ctx.input(0);
  if (c.shape.empty()) return ctx.Error("the condition must have rank >= 1, got a scalar");
  const int64_t n = c.num_elements();
  const size_t es = DTypeSize(c.type);
  const uint8_t* p = static_cast<const uint8_t*>(c.data);
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) {
    bool nz = false;
    for (size_t k = 0; k < es; ++k) nz |= p[i * es + k] != 0;
    if (c.type == DType::kFloat32) nz = c.as<float>()[i] != 0.f;  // -0.0 is zero
    count += nz;
  }
  return ctx.SetOutputShape(0, Dims{int32_t(count), int32_t(c.shape.size())});
}

Status PrepareWhere(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(1, 1, 1, 1));
  const Tensor& c = ctx.input(0);
  switch (c.type) {
    case DType::kBool: case DType::kFloat32: case DType::kInt32: case DType::kInt64: case DType::kInt8:
    case DType::kUInt8: case DType::kUInt32: break;
    default: return ctx.Error(std::string("unsupported condition type ") + DTypeName(c.type));
  }
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, DType::kInt64));
  if (ctx.IsConstantOrPersistent(c)) return ShapeWhere(ctx);
  ctx.SetOutputDynamic(0);
  return OkStatus();
}

Status EvalWhere(OpContext& ctx) {
  if (ctx.output(0).alloc == Allocation::kDynamic) TFG_RETURN_IF_ERROR(ShapeWhere(ctx));
  const Tensor& c = ctx.input(0);
  const int rank = int(c.shape.size());
  const int64_t n = c.num_elements();
  const size_t es = DTypeSize(c.type);
  const uint8_t* p = static_cast<const uint8_t*>(c.data);
  int64_t* o = ctx.output(0).as<int64_t>();
  std::vector<int64_t> idx(rank, 0);
  int64_t row = 0;
  for (int64_t i = 0; i < n; ++i) {
    bool nz = false;
    for (size_t k = 0; k < es; ++k) nz |= p[i * es + k] != 0;
    if (c.type == DType::kFloat32) nz = c.as<float>()[i] != 0.f;
    if (nz) {
      for (int d = 0; d < rank; ++d) o[row * rank + d] = idx[d];
      ++row;
    }
    for (int d = rank - 1; d >= 0; --d) {
      if (++idx[d] < c.shape[d]) break;
      idx[d] = 0;
    }
  }
  return OkStatus();
}

}  // namespace

const OpImpl kOp_EQUAL = {nullptr, PrepareCompare<Cmp::kEq>, EvalCompare<Cmp::kEq>, EvalCompareRef<Cmp::kEq>, false};
const OpImpl kOp_NOT_EQUAL = {nullptr, PrepareCompare<Cmp::kNe>, EvalCompare<Cmp::kNe>, EvalCompareRef<Cmp::kNe>, false};
const OpImpl kOp_LESS = {nullptr, PrepareCompare<Cmp::kLt>, EvalCompare<Cmp::kLt>, EvalCompareRef<Cmp::kLt>, false};
const OpImpl kOp_LESS_EQUAL = {nullptr, PrepareCompare<Cmp::kLe>, EvalCompare<Cmp::kLe>, EvalCompareRef<Cmp::kLe>, false};
const OpImpl kOp_GREATER = {nullptr, PrepareCompare<Cmp::kGt>, EvalCompare<Cmp::kGt>, EvalCompareRef<Cmp::kGt>, false};
const OpImpl kOp_GREATER_EQUAL = {nullptr, PrepareCompare<Cmp::kGe>, EvalCompare<Cmp::kGe>, EvalCompareRef<Cmp::kGe>,
                                  false};
const OpImpl kOp_LOGICAL_OR = {nullptr, PrepareOr, EvalOr, EvalOrRef, false};
const OpImpl kOp_LOGICAL_NOT = {nullptr, PrepareNot, EvalNot, EvalNotRef, false};
const OpImpl kOp_SELECT = {nullptr, PrepareSelect<false>, EvalSelect<false>, EvalSelect<true>, false};
const OpImpl kOp_SELECT_V2 = {nullptr, PrepareSelect<true>, EvalSelect<false>, EvalSelect<true>, false};
const OpImpl kOp_WHERE = {nullptr, PrepareWhere, EvalWhere, nullptr, false};

}  // namespace tflite_gpu
