// CONCATENATION, SPLIT, PACK, UNPACK: copies of [outer, axis, inner] blocks.
#include <climits>
#include <cmath>

#include "ops/quant_common.h"
#include "ops/shape/shape_common.h"

namespace tflite_gpu {
namespace {

using namespace shape_ops;

// ---------------------------------------------------------------------------------------------
// CONCATENATION
// ---------------------------------------------------------------------------------------------
struct ConcatParams {
  int axis = 0;
  int activation = 0;
};

Status ConcatParse(const OptionsView& opts, Node& node) {
  auto p = std::make_shared<ConcatParams>();
  p->axis = opts.Get<int32_t>(0, 0);
  p->activation = opts.Get<int8_t>(1, 0);
  node.params = p;
  return OkStatus();
}

// uint8 inputs whose (scale, zero_point) differ from the output's are requantized, like TFLite's
// ConcatenationWithScaling.
bool ConcatNeedsRescale(const Tensor& in, const Tensor& out) {
  return in.type == DType::kUInt8 && !SameLegacyQuant(in, out);
}

uint8_t ConcatRequant(uint8_t v, const LegacyQuant& iq, const LegacyQuant& oq) {
  const float inverse_output_scale = 1.f / oq.scale;
  const float scale = iq.scale * inverse_output_scale;
  const float bias = -iq.zero_point * scale;
  int32_t value = static_cast<int32_t>(std::round(v * scale + bias)) + oq.zero_point;
  return static_cast<uint8_t>(std::max<int32_t>(std::min<int32_t>(255, value), 0));
}

Status ConcatPrepare(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(quant::ValidateNodeQuant(ctx));
  const auto& p = ctx.node().P<ConcatParams>();
  TFG_RETURN_IF_ERROR(ctx.CheckArity(1, INT_MAX, 1, 1));
  for (int i = 0; i < ctx.num_inputs(); ++i)
    if (!ctx.has_input(i)) return ctx.Error("input " + std::to_string(i) + " is missing");
  if (p.activation != 0)
    return ctx.Error("fused activation function " + std::to_string(p.activation) +
                     " is not supported (TensorFlow Lite rejects a fused activation on CONCATENATION)");
  const Tensor& t0 = ctx.input(0);
  Tensor& out = ctx.output(0);
  TFG_RETURN_IF_ERROR(CheckMovable(ctx, t0, "input 0", kPackedInt4));  // INT4: CONCATENATION v7
  TFG_RETURN_IF_ERROR(CheckSameType(ctx, out, t0, "output", "input 0"));
  const int rank = int(t0.shape.size());
  const int n = ctx.num_inputs();
  for (int i = 1; i < n; ++i) {
    const Tensor& t = ctx.input(i);
    TFG_RETURN_IF_ERROR(CheckSameType(ctx, t, t0, ("input " + std::to_string(i)).c_str(), "input 0"));
    if (int(t.shape.size()) != rank)
      return ctx.Error("input " + std::to_string(i) + " has rank " + std::to_string(t.shape.size()) + ", input 0 has rank " +
                       std::to_string(rank));
  }
  int axis = p.axis;
  if (axis < 0) axis += rank;
  if (rank == 0) {
    // TFLite concatenates constant scalars into a vector; non-constant scalars are rejected.
    bool all_const = true;
    for (int i = 0; i < n; ++i) all_const = all_const && ctx.IsConstantOrPersistent(ctx.input(i));
    if (axis != 0 || !all_const) return ctx.Error("cannot concatenate scalars (only constant scalars along axis 0)");
    return ctx.SetOutputShape(0, Dims{n});
  }
  if (axis < 0 || axis >= rank)
    return ctx.Error("axis " + std::to_string(p.axis) + " out of range for rank " + std::to_string(rank));
  int64_t sum = 0;
  for (int i = 0; i < n; ++i) {
    const Tensor& t = ctx.input(i);
    for (int d = 0; d < rank; ++d) {
      if (d == axis) continue;
      if (t.shape[d] != t0.shape[d])
        return ctx.Error("input " + std::to_string(i) + " shape " + DimsToString(t.shape) + " does not match input 0 shape " +
                         DimsToString(t0.shape) + " outside axis " + std::to_string(axis));
    }
    sum += t.shape[axis];
    if (sum > INT32_MAX) return ctx.Error("concatenated axis is too large");
  }
  if (t0.type == DType::kInt8) {
    for (int i = 0; i < n; ++i)
      if (!SameLegacyQuant(ctx.input(i), out))
        return ctx.Error("int8 input " + std::to_string(i) + " has quantization different from the output (TFLite requires equal scale and zero point)");
  }
  if (t0.type == DType::kUInt8) {
    const float os = Legacy(out).scale;
    for (int i = 0; i < n; ++i)
      if (ConcatNeedsRescale(ctx.input(i), out) && !(os > 0.f && std::isfinite(os)))
        return ctx.Error("uint8 inputs need requantizing but the output scale is " + std::to_string(os));
  }
  if (t0.type == DType::kInt16) {
    for (int i = 0; i < n; ++i)
      if (Legacy(ctx.input(i)).zero_point != 0) return ctx.Error("int16 input " + std::to_string(i) + " has a non-zero zero point");
    if (Legacy(out).zero_point != 0) return ctx.Error("int16 output has a non-zero zero point");
  }
  Dims os = t0.shape;
  os[axis] = int32_t(sum);
  return ctx.SetOutputShape(0, os);
}

struct ConcatGeom {
  int64_t outer = 1, inner_bytes = 1;
  int axis = 0;
  std::vector<int64_t> chunk;  // bytes per outer row, per input
  int64_t row = 0;             // output bytes per outer row
};

ConcatGeom ConcatGeometry(OpContext& ctx) {
  const auto& p = ctx.node().P<ConcatParams>();
  const Tensor& out = ctx.output(0);
  const size_t es = DTypeSize(out.type);
  ConcatGeom g;
  const Tensor& t0 = ctx.input(0);
  const int rank = int(t0.shape.size());
  if (rank == 0) {  // constant scalars -> vector
    g.outer = 1;
    g.inner_bytes = int64_t(es);
    for (int i = 0; i < ctx.num_inputs(); ++i) g.chunk.push_back(int64_t(es));
    g.row = int64_t(es) * ctx.num_inputs();
    return g;
  }
  g.axis = p.axis < 0 ? p.axis + rank : p.axis;
  g.outer = Prod(out.shape, 0, g.axis);
  g.inner_bytes = Prod(out.shape, g.axis + 1, rank) * int64_t(es);
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    g.chunk.push_back(int64_t(ctx.input(i).shape[g.axis]) * g.inner_bytes);
    g.row += g.chunk.back();
  }
  return g;
}

Status ConcatEval(OpContext& ctx) {
  Tensor& out = ctx.output(0);
  ConcatGeom g = ConcatGeometry(ctx);
  const int n = ctx.num_inputs();
  std::vector<const uint8_t*> src(n);
  std::vector<bool> rescale(n);
  std::vector<LegacyQuant> q(n);
  const LegacyQuant oq = Legacy(out);
  for (int i = 0; i < n; ++i) {
    src[i] = ctx.input(i).as<uint8_t>();
    rescale[i] = ConcatNeedsRescale(ctx.input(i), out);
    q[i] = Legacy(ctx.input(i));
  }
  uint8_t* dst = out.as<uint8_t>();
  ParallelFor(ctx.pool(), g.outer, [&](int64_t b, int64_t e) {
    for (int64_t o = b; o < e; ++o) {
      uint8_t* d = dst + o * g.row;
      for (int i = 0; i < n; ++i) {
        const int64_t c = g.chunk[i];
        const uint8_t* s = src[i] + o * c;
        if (rescale[i]) {
          for (int64_t j = 0; j < c; ++j) d[j] = ConcatRequant(s[j], q[i], oq);
        } else {
          Copy(d, s, size_t(c));
        }
        d += c;
      }
    }
  }, MinChunk(g.row));
  return OkStatus();
}

// Plain kernel: every output element looks up its source input.
Status ConcatEvalRef(OpContext& ctx) {
  Tensor& out = ctx.output(0);
  const size_t es = DTypeSize(out.type);
  ConcatGeom g = ConcatGeometry(ctx);
  const int n = ctx.num_inputs();
  const LegacyQuant oq = Legacy(out);
  const int64_t total = out.num_elements();
  if (total == 0) return OkStatus();
  const int64_t inner = g.inner_bytes / int64_t(es);
  std::vector<int64_t> axis_len(n);
  int64_t out_axis = 0;
  for (int i = 0; i < n; ++i) {
    const Tensor& t = ctx.input(i);
    axis_len[i] = t.shape.empty() ? 1 : t.shape[g.axis];
    out_axis += axis_len[i];
  }
  for (int64_t idx = 0; idx < total; ++idx) {
    int64_t in_idx = idx % inner;
    int64_t a = (idx / inner) % out_axis;
    int64_t o = idx / inner / out_axis;
    int i = 0;
    while (a >= axis_len[i]) { a -= axis_len[i]; ++i; }
    const Tensor& t = ctx.input(i);
    int64_t s = (o * axis_len[i] + a) * inner + in_idx;
    if (ConcatNeedsRescale(t, out))
      out.as<uint8_t>()[idx] = ConcatRequant(t.as<uint8_t>()[s], Legacy(t), oq);
    else
      std::memcpy(out.data + idx * es, t.data + s * es, es);
  }
  return OkStatus();
}

// ---------------------------------------------------------------------------------------------
// SPLIT
// ---------------------------------------------------------------------------------------------
struct SplitParams {
  int num_splits = 0;
};

Status SplitParse(const OptionsView& opts, Node& node) {
  auto p = std::make_shared<SplitParams>();
  p->num_splits = opts.Get<int32_t>(0, 0);
  node.params = p;
  return OkStatus();
}

// Resolves the axis tensor and the output shape; data of the axis tensor must be available.
Status SplitResolve(OpContext& ctx, int* axis_out, Dims* out_shape) {
  const auto& p = ctx.node().P<SplitParams>();
  std::vector<int64_t> a;
  TFG_RETURN_IF_ERROR(ReadInts(ctx, ctx.input(0), "axis", &a));
  if (a.empty()) return ctx.Error("axis tensor is empty");
  const Tensor& in = ctx.input(1);
  const int rank = int(in.shape.size());
  int64_t axis = a[0];
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank)
    return ctx.Error("axis " + std::to_string(a[0]) + " out of range for input rank " + std::to_string(rank));
  if (in.shape[axis] % p.num_splits != 0)
    return ctx.Error("dimension " + std::to_string(in.shape[axis]) + " of axis " + std::to_string(axis) +
                     " is not divisible into " + std::to_string(p.num_splits) + " splits (not an even split)");
  *axis_out = int(axis);
  *out_shape = in.shape;
  (*out_shape)[axis] = in.shape[axis] / p.num_splits;
  return OkStatus();
}

Status SplitPrepare(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(quant::ValidateNodeQuant(ctx));
  const auto& p = ctx.node().P<SplitParams>();
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 2, 1, INT_MAX));
  if (!ctx.has_input(0) || !ctx.has_input(1)) return ctx.Error("missing input");
  if (p.num_splits <= 0) return ctx.Error("num_splits must be positive, got " + std::to_string(p.num_splits));
  if (ctx.num_outputs() != p.num_splits)
    return ctx.Error("num_splits is " + std::to_string(p.num_splits) + " but the op has " + std::to_string(ctx.num_outputs()) +
                     " outputs");
  const Tensor& axis = ctx.input(0);
  const Tensor& in = ctx.input(1);
  if (axis.type != DType::kInt32 && axis.type != DType::kInt64)
    return ctx.Error(std::string("axis has type ") + DTypeName(axis.type) + ", expected INT32");
  TFG_RETURN_IF_ERROR(CheckMovable(ctx, in, "input"));
  for (int i = 0; i < ctx.num_outputs(); ++i) TFG_RETURN_IF_ERROR(ctx.SetOutputType(i, in.type));
  if (!ctx.IsConstantOrPersistent(axis)) {
    for (int i = 0; i < ctx.num_outputs(); ++i) ctx.SetOutputDynamic(i);
    return OkStatus();
  }
  int ax;
  Dims os;
  TFG_RETURN_IF_ERROR(SplitResolve(ctx, &ax, &os));
  for (int i = 0; i < ctx.num_outputs(); ++i) TFG_RETURN_IF_ERROR(ctx.SetOutputShape(i, os));
  return OkStatus();
}

Status SplitSetup(OpContext& ctx, int* axis) {
  Dims os;
  TFG_RETURN_IF_ERROR(SplitResolve(ctx, axis, &os));
  for (int i = 0; i < ctx.num_outputs(); ++i) TFG_RETURN_IF_ERROR(SetOrCheckShape(ctx, i, os));
  return OkStatus();
}

Status SplitEval(OpContext& ctx) {
  int axis;
  TFG_RETURN_IF_ERROR(SplitSetup(ctx, &axis));
  const Tensor& in = ctx.input(1);
  const int n = ctx.num_outputs();
  const size_t es = DTypeSize(in.type);
  const int rank = int(in.shape.size());
  const int64_t outer = Prod(in.shape, 0, axis);
  const int64_t slice = int64_t(in.shape[axis] / n) * Prod(in.shape, axis + 1, rank) * int64_t(es);
  std::vector<uint8_t*> dst(n);
  for (int k = 0; k < n; ++k) dst[k] = ctx.output(k).as<uint8_t>();
  const uint8_t* src = in.as<uint8_t>();
  ParallelFor(ctx.pool(), outer, [&](int64_t b, int64_t e) {
    for (int64_t o = b; o < e; ++o)
      for (int k = 0; k < n; ++k) Copy(dst[k] + o * slice, src + (o * n + k) * slice, size_t(slice));
  }, MinChunk(slice * n));
  return OkStatus();
}

Status SplitEvalRef(OpContext& ctx) {
  int axis;
  TFG_RETURN_IF_ERROR(SplitSetup(ctx, &axis));
  const Tensor& in = ctx.input(1);
  const int n = ctx.num_outputs();
  const size_t es = DTypeSize(in.type);
  const int rank = int(in.shape.size());
  const int64_t inner = Prod(in.shape, axis + 1, rank);
  const int64_t part = in.shape[axis] / n;
  for (int k = 0; k < n; ++k) {
    Tensor& o = ctx.output(k);
    const int64_t total = o.num_elements();
    for (int64_t idx = 0; idx < total; ++idx) {
      int64_t i = idx % inner, a = (idx / inner) % part, b = idx / inner / part;
      int64_t s = (b * in.shape[axis] + k * part + a) * inner + i;
      std::memcpy(o.data + idx * es, in.data + s * es, es);
    }
  }
  return OkStatus();
}

// ---------------------------------------------------------------------------------------------
// PACK
// ---------------------------------------------------------------------------------------------
struct PackParams {
  int count = 0;  // values_count / num
  int axis = 0;
};

Status PackParse(const OptionsView& opts, Node& node) {
  auto p = std::make_shared<PackParams>();
  p->count = opts.Get<int32_t>(0, 0);
  p->axis = opts.Get<int32_t>(1, 0);
  node.params = p;
  return OkStatus();
}

int PackAxis(OpContext& ctx) {
  const auto& p = ctx.node().P<PackParams>();
  int rank = int(ctx.input(0).shape.size());
  return p.axis < 0 ? p.axis + rank + 1 : p.axis;
}

Status PackPrepare(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(quant::ValidateNodeQuant(ctx));
  const auto& p = ctx.node().P<PackParams>();
  TFG_RETURN_IF_ERROR(ctx.CheckArity(1, INT_MAX, 1, 1));
  if (ctx.num_inputs() != p.count)
    return ctx.Error("values_count is " + std::to_string(p.count) + " but the op has " + std::to_string(ctx.num_inputs()) +
                     " inputs");
  for (int i = 0; i < ctx.num_inputs(); ++i)
    if (!ctx.has_input(i)) return ctx.Error("input " + std::to_string(i) + " is missing");
  const Tensor& t0 = ctx.input(0);
  Tensor& out = ctx.output(0);
  TFG_RETURN_IF_ERROR(CheckMovable(ctx, t0, "input 0"));
  const int rank = int(t0.shape.size());
  const int axis = PackAxis(ctx);
  if (axis < 0 || axis > rank)
    return ctx.Error("axis " + std::to_string(p.axis) + " out of range for inputs of rank " + std::to_string(rank));
  for (int i = 1; i < p.count; ++i) {
    const Tensor& t = ctx.input(i);
    TFG_RETURN_IF_ERROR(CheckSameType(ctx, t, t0, ("input " + std::to_string(i)).c_str(), "input 0"));
    if (t.shape != t0.shape)
      return ctx.Error("input " + std::to_string(i) + " shape " + DimsToString(t.shape) + " differs from input 0 shape " +
                       DimsToString(t0.shape));
  }
  TFG_RETURN_IF_ERROR(CheckSameType(ctx, out, t0, "output", "input 0"));
  for (int i = 0; i < p.count; ++i)
    if (!SameLegacyQuant(ctx.input(i), out))
      return ctx.Error("input " + std::to_string(i) + " quantization differs from the output's (packing does not requantize)");
  Dims os;
  for (int d = 0, j = 0; d <= rank; ++d) os.push_back(d == axis ? p.count : t0.shape[j++]);
  return ctx.SetOutputShape(0, os);
}

Status PackEval(OpContext& ctx) {
  const Tensor& t0 = ctx.input(0);
  const int n = ctx.num_inputs();
  const int axis = PackAxis(ctx);
  const size_t es = DTypeSize(t0.type);
  const int rank = int(t0.shape.size());
  const int64_t outer = Prod(t0.shape, 0, axis);
  const int64_t chunk = Prod(t0.shape, axis, rank) * int64_t(es);
  uint8_t* dst = ctx.output(0).as<uint8_t>();
  std::vector<const uint8_t*> src(n);
  for (int i = 0; i < n; ++i) src[i] = ctx.input(i).as<uint8_t>();
  ParallelFor(ctx.pool(), outer, [&](int64_t b, int64_t e) {
    for (int64_t o = b; o < e; ++o)
      for (int i = 0; i < n; ++i) Copy(dst + (o * n + i) * chunk, src[i] + o * chunk, size_t(chunk));
  }, MinChunk(chunk * n));
  return OkStatus();
}

Status PackEvalRef(OpContext& ctx) {
  const Tensor& t0 = ctx.input(0);
  Tensor& out = ctx.output(0);
  const int n = ctx.num_inputs();
  const int axis = PackAxis(ctx);
  const size_t es = DTypeSize(t0.type);
  const int64_t inner = Prod(t0.shape, axis, int(t0.shape.size()));
  const int64_t total = out.num_elements();
  for (int64_t idx = 0; idx < total; ++idx) {
    int64_t j = idx % inner, i = (idx / inner) % n, o = idx / inner / n;
    std::memcpy(out.data + idx * es, ctx.input(int(i)).data + (o * inner + j) * es, es);
  }
  return OkStatus();
}

// ---------------------------------------------------------------------------------------------
// UNPACK
// ---------------------------------------------------------------------------------------------
int UnpackAxis(OpContext& ctx) {
  const auto& p = ctx.node().P<PackParams>();
  int rank = int(ctx.input(0).shape.size());
  return p.axis < 0 ? p.axis + rank : p.axis;
}

Status UnpackPrepare(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(quant::ValidateNodeQuant(ctx));
  const auto& p = ctx.node().P<PackParams>();
  TFG_RETURN_IF_ERROR(ctx.CheckArity(1, 1, 0, INT_MAX));
  if (!ctx.has_input(0)) return ctx.Error("input is missing");
  if (ctx.num_outputs() != p.count)
    return ctx.Error("num is " + std::to_string(p.count) + " but the op has " + std::to_string(ctx.num_outputs()) + " outputs");
  const Tensor& in = ctx.input(0);
  TFG_RETURN_IF_ERROR(CheckMovable(ctx, in, "input"));
  if (in.num_elements() <= 0) return ctx.Error("input " + DimsToString(in.shape) + " has no elements");
  const int rank = int(in.shape.size());
  const int axis = UnpackAxis(ctx);
  if (axis < 0 || axis >= rank)
    return ctx.Error("axis " + std::to_string(p.axis) + " out of range for input rank " + std::to_string(rank));
  if (p.count != in.shape[axis])
    return ctx.Error("num " + std::to_string(p.count) + " differs from dimension " + std::to_string(axis) + " of the input " +
                     DimsToString(in.shape));
  Dims os;
  for (int d = 0; d < rank; ++d)
    if (d != axis) os.push_back(in.shape[d]);
  for (int i = 0; i < p.count; ++i) {
    Tensor& o = ctx.output(i);
    TFG_RETURN_IF_ERROR(CheckSameType(ctx, o, in, ("output " + std::to_string(i)).c_str(), "input"));
    if (!SameLegacyQuant(in, o))
      return ctx.Error("output " + std::to_string(i) + " quantization differs from the input's (unpacking does not requantize)");
    TFG_RETURN_IF_ERROR(ctx.SetOutputShape(i, os));
  }
  return OkStatus();
}

Status UnpackEval(OpContext& ctx) {
  const Tensor& in = ctx.input(0);
  const int n = ctx.num_outputs();
  const int axis = UnpackAxis(ctx);
  const size_t es = DTypeSize(in.type);
  const int rank = int(in.shape.size());
  const int64_t outer = Prod(in.shape, 0, axis);
  const int64_t chunk = Prod(in.shape, axis + 1, rank) * int64_t(es);
  const uint8_t* src = in.as<uint8_t>();
  std::vector<uint8_t*> dst(n);
  for (int i = 0; i < n; ++i) dst[i] = ctx.output(i).as<uint8_t>();
  ParallelFor(ctx.pool(), outer, [&](int64_t b, int64_t e) {
    for (int64_t o = b; o < e; ++o)
      for (int i = 0; i < n; ++i) Copy(dst[i] + o * chunk, src + (o * n + i) * chunk, size_t(chunk));
  }, MinChunk(chunk * n));
  return OkStatus();
}

Status UnpackEvalRef(OpContext& ctx) {
  const Tensor& in = ctx.input(0);
  const int n = ctx.num_outputs();
  const int axis = UnpackAxis(ctx);
  const size_t es = DTypeSize(in.type);
  const int64_t inner = Prod(in.shape, axis + 1, int(in.shape.size()));
  for (int i = 0; i < n; ++i) {
    Tensor& o = ctx.output(i);
    const int64_t total = o.num_elements();
    for (int64_t idx = 0; idx < total; ++idx) {
      int64_t j = idx % inner, b = idx / inner;
      std::memcpy(o.data + idx * es, in.data + ((b * n + i) * inner + j) * es, es);
    }
  }
  return OkStatus();
}

}  // namespace

// Like TFLite, a concatenation of constants is computed once at allocation.
const OpImpl kOp_CONCATENATION = {ConcatParse, ConcatPrepare, ConcatEval, ConcatEvalRef, true};
const OpImpl kOp_SPLIT = {SplitParse, SplitPrepare, SplitEval, SplitEvalRef, false};
const OpImpl kOp_PACK = {PackParse, PackPrepare, PackEval, PackEvalRef, false};
const OpImpl kOp_UNPACK = {PackParse, UnpackPrepare, UnpackEval, UnpackEvalRef, false};

int shape_ops::ConcatAxisOf(const Node& node) { return node.P<ConcatParams>().axis; }
int shape_ops::ConcatActivationOf(const Node& node) { return node.P<ConcatParams>().activation; }
int shape_ops::PackAxisOf(const Node& node) { return node.P<PackParams>().axis; }
}  // namespace tflite_gpu
