// STRIDED_SLICE and SLICE.
#include <climits>
#include <functional>

#include "ops/quant_common.h"
#include "ops/shape/shape_common.h"

namespace tflite_gpu {
namespace {

using namespace shape_ops;

// ---------------------------------------------------------------------------------------------
// STRIDED_SLICE (TFLite's strided_slice.cc: ellipsis and new axes are expanded into an
// "effective" input shape; each effective dim then has a start, stop and stride)
// ---------------------------------------------------------------------------------------------
struct StridedSliceParams {
  int32_t begin_mask = 0, end_mask = 0, ellipsis_mask = 0, new_axis_mask = 0, shrink_axis_mask = 0;
  bool offset = false;
};

Status StridedSliceParse(const OptionsView& opts, Node& node) {
  auto p = std::make_shared<StridedSliceParams>();
  p->begin_mask = opts.Get<int32_t>(0, 0);
  p->end_mask = opts.Get<int32_t>(1, 0);
  p->ellipsis_mask = opts.Get<int32_t>(2, 0);
  p->new_axis_mask = opts.Get<int32_t>(3, 0);
  p->shrink_axis_mask = opts.Get<int32_t>(4, 0);
  p->offset = opts.GetBool(5, false);
  node.params = p;
  return OkStatus();
}

struct SliceDim {
  int64_t size = 1;    // effective input dim
  int64_t start = 0;   // first input coordinate
  int64_t stride = 1;  // step along the input coordinate
  int64_t count = 1;   // number of output positions
  bool shrink = false;
};

inline bool Bit(uint64_t mask, int i) { return i >= 0 && i < 64 && ((mask >> i) & 1u); }

inline int64_t Clamp(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : (v > hi ? hi : v); }

// Output size of one axis as TFLite computes it from (end - begin) and the stride.
inline int64_t AxisLength(int64_t dim_shape, int64_t stride) {
  if ((dim_shape < 0) != (stride < 0)) return 0;
  if (stride < 0) return (dim_shape + 1) / stride + 1;
  return dim_shape == 0 ? 0 : (dim_shape - 1) / stride + 1;
}

Status StridedSliceResolve(OpContext& ctx, std::vector<SliceDim>* dims, Dims* out_shape) {
  const auto& p = ctx.node().P<StridedSliceParams>();
  const Tensor& in = ctx.input(0);
  std::vector<int64_t> begin, end, strides;
  TFG_RETURN_IF_ERROR(ReadInts(ctx, ctx.input(1), "begin", &begin));
  TFG_RETURN_IF_ERROR(ReadInts(ctx, ctx.input(2), "end", &end));
  TFG_RETURN_IF_ERROR(ReadInts(ctx, ctx.input(3), "strides", &strides));
  const int bc = int(begin.size());
  if (int(end.size()) != bc || int(strides.size()) != bc)
    return ctx.Error("begin, end and strides must have the same length (" + std::to_string(begin.size()) + ", " +
                     std::to_string(end.size()) + ", " + std::to_string(strides.size()) + ")");
  // Mask bits beyond the slice spec carry no meaning; TFLite may read past the spec for them.
  const uint64_t spec = bc >= 64 ? ~0ull : ((1ull << bc) - 1);
  const uint64_t begin_mask = uint32_t(p.begin_mask) & spec, end_mask = uint32_t(p.end_mask) & spec;
  const uint64_t ellipsis_mask = uint32_t(p.ellipsis_mask) & spec, new_axis_mask = uint32_t(p.new_axis_mask) & spec;
  const uint64_t shrink_mask = uint32_t(p.shrink_axis_mask) & spec;
  if (ellipsis_mask & (ellipsis_mask - 1)) return ctx.Error("more than one ellipsis in ellipsis_mask");
  const int input_dims = int(in.shape.size());
  int num_add_axis = 0;
  for (int i = 0; i < bc; ++i)
    if (!Bit(ellipsis_mask, i) && Bit(new_axis_mask, i)) ++num_add_axis;
  const int effective_dims = input_dims + num_add_axis;
  if (effective_dims > 63) return ctx.Error("too many dimensions");
  uint64_t eff_ellipsis = 0, eff_new_axis = 0;
  int ellipsis_start = effective_dims, expanded = 0;
  for (int i = 0; i < effective_dims;) {
    if (Bit(ellipsis_mask, i)) {
      ellipsis_start = i;
      int ellipsis_end = std::max(i + 1, std::min(i + 1 + num_add_axis + input_dims - bc, effective_dims));
      expanded = ellipsis_end - ellipsis_start - 1;
      for (; i < ellipsis_end; ++i) eff_ellipsis |= 1ull << i;
      continue;
    }
    if (Bit(new_axis_mask, i - expanded)) eff_new_axis |= 1ull << i;
    ++i;
  }
  dims->assign(effective_dims, SliceDim());
  std::vector<int64_t> stop(effective_dims, 0);
  std::vector<int> orig(effective_dims, -1);
  uint64_t bmask = 0, emask = 0, smask = 0;
  int added_ellipsis = 0, added_axes = 0;
  for (int i = 0; i < effective_dims; ++i) {
    SliceDim& d = (*dims)[i];
    auto input_dim = [&](int k) -> int64_t { return (k >= 0 && k < input_dims) ? in.shape[k] : -1; };
    if (Bit(eff_ellipsis, i)) {
      added_ellipsis = std::max(0, i - ellipsis_start);
      bmask |= 1ull << i;
      emask |= 1ull << i;
      d.size = input_dim(i - added_axes);
    } else if (Bit(eff_new_axis, i)) {
      d.start = 0;
      stop[i] = 1;
      d.size = 1;
      ++added_axes;
    } else if (i >= bc + expanded) {
      bmask |= 1ull << i;
      emask |= 1ull << i;
      d.size = input_dim(i - added_axes);
    } else {
      const int o = i - added_ellipsis;
      if (o < 0 || o >= bc) return ctx.Error("slice spec does not match the input rank");
      orig[i] = o;
      d.start = begin[o];
      stop[i] = end[o];
      d.stride = strides[o];
      if (Bit(begin_mask, o)) bmask |= 1ull << i;
      if (Bit(end_mask, o)) emask |= 1ull << i;
      if (Bit(shrink_mask, o)) smask |= 1ull << i;
      d.size = input_dim(i - added_axes);
    }
    if (d.size < 0)
      return ctx.Error("slice spec has more dimensions than the input " + DimsToString(in.shape));
  }
  out_shape->clear();
  for (int i = 0; i < effective_dims; ++i) {
    SliceDim& d = (*dims)[i];
    if (d.stride == 0) return ctx.Error("stride value has to be non-zero");
    if (d.stride < INT32_MIN + 1 || d.stride > INT32_MAX) return ctx.Error("stride value out of range");
    const int64_t size = d.size;
    // StartForAxis
    int64_t start = d.start;
    if (start < 0) start += size;
    start = d.stride > 0 ? Clamp(start, 0, size) : Clamp(start, -1, size - 1);
    if (Bit(bmask, i)) start = d.stride > 0 ? 0 : size - 1;
    d.shrink = Bit(smask, i);
    if (d.shrink) {
      // TFLite takes the element at `start`; out of range it would leave the output unwritten.
      if (start < 0 || start >= size)
        return ctx.Error("shrink index " + std::to_string(d.start) + " out of range for dimension " + std::to_string(i) +
                         " of size " + std::to_string(size));
      d.start = start;
      d.count = 1;
      continue;
    }
    // EndForAxis
    int64_t e = stop[i];
    if (p.offset) e += start;
    if (e < 0) e += size;
    e = d.stride > 0 ? Clamp(e, 0, size) : Clamp(e, -1, size - 1);
    if (Bit(emask, i)) e = d.stride > 0 ? size : -1;
    d.start = start;
    d.count = AxisLength(e - start, d.stride);
    if (p.offset && orig[i] >= 0) {
      // TFLite sizes this axis from the raw `end` value (the slice size); the data it then writes
      // comes from the clamped range. Refuse when the two disagree. (TFLite indexes `end` by the
      // effective dim, past the spec when an ellipsis or new axis precedes; we use the spec entry.)
      if (AxisLength(end[orig[i]], d.stride) != d.count)
        return ctx.Error("offset slice of dimension " + std::to_string(i) + " does not fit in the input " +
                         DimsToString(in.shape));
    }
    if (d.count > INT32_MAX) return ctx.Error("output dimension overflows int32");
    out_shape->push_back(int32_t(d.count));
  }
  return OkStatus();
}

Status StridedSlicePrepare(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(quant::ValidateNodeQuant(ctx));
  TFG_RETURN_IF_ERROR(ctx.CheckArity(4, 4, 1, 1));
  for (int i = 0; i < 4; ++i)
    if (!ctx.has_input(i)) return ctx.Error("input " + std::to_string(i) + " is missing");
  const Tensor& in = ctx.input(0);
  TFG_RETURN_IF_ERROR(CheckMovable(ctx, in, "input"));
  TFG_RETURN_IF_ERROR(CheckSameType(ctx, ctx.output(0), in, "output", "input"));
  const char* names[] = {"", "begin", "end", "strides"};
  for (int i = 1; i < 4; ++i) {
    const Tensor& t = ctx.input(i);
    if (t.shape.size() != 1) return ctx.Error(std::string(names[i]) + " must be a vector, got shape " + DimsToString(t.shape));
    if (t.type != DType::kInt32 && t.type != DType::kInt64)
      return ctx.Error(std::string(names[i]) + " has type " + DTypeName(t.type) + ", expected INT32");
  }
  if (ctx.input(1).shape[0] != ctx.input(2).shape[0] || ctx.input(1).shape[0] != ctx.input(3).shape[0])
    return ctx.Error("begin, end and strides must have the same length");
  if (ctx.input(1).shape[0] > 31) return ctx.Error("StridedSlice supports up to 31 indices");
  bool known = true;
  for (int i = 1; i < 4; ++i) known = known && ctx.IsConstantOrPersistent(ctx.input(i));
  if (!known) {
    ctx.SetOutputDynamic(0);
    return OkStatus();
  }
  std::vector<SliceDim> dims;
  Dims os;
  TFG_RETURN_IF_ERROR(StridedSliceResolve(ctx, &dims, &os));
  return ctx.SetOutputShape(0, os);
}

Status StridedSliceSetup(OpContext& ctx, std::vector<SliceDim>* dims) {
  Dims os;
  TFG_RETURN_IF_ERROR(StridedSliceResolve(ctx, dims, &os));
  TFG_RETURN_IF_ERROR(SetOrCheckShape(ctx, 0, os));
  return CheckHasData(ctx, ctx.input(0), "input");
}

template <typename T>
void StridedCopy(ThreadPool* pool, const T* src, T* dst, const std::vector<int64_t>& count, int64_t base,
                 const std::vector<int64_t>& step) {
  // count/step per dim (elements), base = starting input offset. Rows = all dims but the last.
  const int n = int(count.size());
  const int64_t inner = count[n - 1], istep = step[n - 1];
  int64_t rows = 1;
  for (int i = 0; i < n - 1; ++i) rows *= count[i];
  ParallelFor(pool, rows, [&](int64_t b, int64_t e) {
    for (int64_t row = b; row < e; ++row) {
      int64_t rem = row, s = base;
      for (int i = n - 2; i >= 0; --i) {
        s += (rem % count[i]) * step[i];
        rem /= count[i];
      }
      T* o = dst + row * inner;
      const T* p = src + s;
      if (istep == 1) {
        Copy(o, p, size_t(inner) * sizeof(T));
      } else {
        for (int64_t j = 0; j < inner; ++j) o[j] = p[j * istep];
      }
    }
  }, MinChunk(inner * int64_t(sizeof(T))));
}

Status StridedSliceEval(OpContext& ctx) {
  std::vector<SliceDim> dims;
  TFG_RETURN_IF_ERROR(StridedSliceSetup(ctx, &dims));
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  if (out.num_elements() == 0) return OkStatus();
  const size_t es = DTypeSize(in.type);
  // Drop single-position dims into the base offset.
  const int n = int(dims.size());
  std::vector<int64_t> is(n, 1);
  for (int i = n - 2; i >= 0; --i) is[i] = is[i + 1] * dims[i + 1].size;
  int64_t base = 0;
  std::vector<int64_t> count, step;
  for (int i = 0; i < n; ++i) {
    base += dims[i].start * is[i];
    if (dims[i].count == 1) continue;
    count.push_back(dims[i].count);
    step.push_back(dims[i].stride * is[i]);
  }
  if (count.empty()) {
    std::memcpy(out.data, in.data + base * int64_t(es), es);
    return OkStatus();
  }
  BySize(es, [&](auto t) {
    using T = decltype(t);
    StridedCopy<T>(ctx.pool(), in.as<T>(), out.as<T>(), count, base, step);
    return 0;
  });
  return OkStatus();
}

// Plain kernel: TFLite's reference recursion over the effective dims.
Status StridedSliceEvalRef(OpContext& ctx) {
  std::vector<SliceDim> dims;
  TFG_RETURN_IF_ERROR(StridedSliceSetup(ctx, &dims));
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  const size_t es = DTypeSize(in.type);
  const int n = int(dims.size());
  std::vector<int64_t> is(n, 1);
  for (int i = n - 2; i >= 0; --i) is[i] = is[i + 1] * dims[i + 1].size;
  int64_t written = 0;
  std::function<void(int, int64_t)> walk = [&](int axis, int64_t index) {
    if (axis == n) {
      std::memcpy(out.data + written * es, in.data + index * es, es);
      ++written;
      return;
    }
    const SliceDim& d = dims[axis];
    for (int64_t k = 0; k < d.count; ++k) walk(axis + 1, index + (d.start + k * d.stride) * is[axis]);
  };
  walk(0, 0);
  return OkStatus();
}

// ---------------------------------------------------------------------------------------------
// SLICE
// ---------------------------------------------------------------------------------------------
Status SliceResolve(OpContext& ctx, std::vector<int64_t>* begin, std::vector<int64_t>* size, Dims* os) {
  const Tensor& in = ctx.input(0);
  TFG_RETURN_IF_ERROR(ReadInts(ctx, ctx.input(1), "begin", begin));
  TFG_RETURN_IF_ERROR(ReadInts(ctx, ctx.input(2), "size", size));
  const int rank = int(in.shape.size());
  if (int(begin->size()) != rank || int(size->size()) != rank)
    return ctx.Error("begin and size must have one value per input dimension");
  os->resize(rank);
  for (int i = 0; i < rank; ++i) {
    int64_t b = (*begin)[i], s = (*size)[i], d = in.shape[i];
    if (b < 0 || b > d) return ctx.Error("invalid begin " + std::to_string(b) + " for dimension " + std::to_string(i) + " of size " + std::to_string(d));
    if (s < 0) {
      if (s != -1) return ctx.Error("invalid size " + std::to_string(s) + " for dimension " + std::to_string(i));
      s = d - b;
    } else if (d - b < s) {
      return ctx.Error("begin " + std::to_string(b) + " + size " + std::to_string(s) + " exceeds dimension " +
                       std::to_string(i) + " of size " + std::to_string(d));
    }
    (*size)[i] = s;
    (*os)[i] = int32_t(s);
  }
  return OkStatus();
}

Status SlicePrepare(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(quant::ValidateNodeQuant(ctx));
  TFG_RETURN_IF_ERROR(ctx.CheckArity(3, 3, 1, 1));
  for (int i = 0; i < 3; ++i)
    if (!ctx.has_input(i)) return ctx.Error("input " + std::to_string(i) + " is missing");
  const Tensor& in = ctx.input(0);
  const Tensor& begin = ctx.input(1);
  const Tensor& size = ctx.input(2);
  TFG_RETURN_IF_ERROR(CheckMovable(ctx, in, "input", kPackedInt4));  // INT4: SLICE v7
  TFG_RETURN_IF_ERROR(CheckSameType(ctx, ctx.output(0), in, "output", "input"));
  if (begin.type != DType::kInt32 && begin.type != DType::kInt64)
    return ctx.Error(std::string("begin has type ") + DTypeName(begin.type) + ", expected INT32 or INT64");
  TFG_RETURN_IF_ERROR(CheckSameType(ctx, size, begin, "size", "begin"));
  const int rank = int(in.shape.size());
  if (begin.shape.size() != 1 || begin.shape[0] != rank || size.shape.size() != 1 || size.shape[0] != rank)
    return ctx.Error("begin and size must be vectors of " + std::to_string(rank) + " values, got " +
                     DimsToString(begin.shape) + " and " + DimsToString(size.shape));
  if (!ctx.IsConstantOrPersistent(begin) || !ctx.IsConstantOrPersistent(size)) {
    ctx.SetOutputDynamic(0);
    return OkStatus();
  }
  std::vector<int64_t> b, s;
  Dims os;
  TFG_RETURN_IF_ERROR(SliceResolve(ctx, &b, &s, &os));
  return ctx.SetOutputShape(0, os);
}

Status SliceSetup(OpContext& ctx, std::vector<int64_t>* b, std::vector<int64_t>* s) {
  Dims os;
  TFG_RETURN_IF_ERROR(SliceResolve(ctx, b, s, &os));
  TFG_RETURN_IF_ERROR(SetOrCheckShape(ctx, 0, os));
  return CheckHasData(ctx, ctx.input(0), "input");
}

Status SliceEval(OpContext& ctx) {
  std::vector<int64_t> b, s;
  TFG_RETURN_IF_ERROR(SliceSetup(ctx, &b, &s));
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  const size_t es = DTypeSize(in.type);
  const int64_t total = out.num_elements();
  if (total == 0) return OkStatus();
  const int rank = int(in.shape.size());
  if (rank == 0) { std::memcpy(out.data, in.data, es); return OkStatus(); }
  // Merge every fully-taken dim into its predecessor so rows are as long as possible.
  std::vector<int64_t> d, bb, ss;
  for (int i = 0; i < rank; ++i) {
    if (i > 0 && b[i] == 0 && s[i] == in.shape[i]) {
      d.back() *= in.shape[i];
      bb.back() *= in.shape[i];
      ss.back() *= in.shape[i];
    } else {
      d.push_back(in.shape[i]);
      bb.push_back(b[i]);
      ss.push_back(s[i]);
    }
  }
  const int n = int(d.size());
  std::vector<int64_t> is(n, 1);
  for (int i = n - 2; i >= 0; --i) is[i] = is[i + 1] * d[i + 1];
  const int64_t row = ss[n - 1] * int64_t(es);
  const int64_t rows = total / ss[n - 1];
  const uint8_t* src = in.as<uint8_t>();
  uint8_t* dst = out.as<uint8_t>();
  ParallelFor(ctx.pool(), rows, [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      int64_t rem = r, off = bb[n - 1];
      for (int i = n - 2; i >= 0; --i) {
        off += (bb[i] + rem % ss[i]) * is[i];
        rem /= ss[i];
      }
      Copy(dst + r * row, src + off * int64_t(es), size_t(row));
    }
  }, MinChunk(row));
  return OkStatus();
}

Status SliceEvalRef(OpContext& ctx) {
  std::vector<int64_t> b, s;
  TFG_RETURN_IF_ERROR(SliceSetup(ctx, &b, &s));
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  const size_t es = DTypeSize(in.type);
  const int rank = int(in.shape.size());
  std::vector<int64_t> is = Strides(in.shape);
  const int64_t total = out.num_elements();
  for (int64_t o = 0; o < total; ++o) {
    int64_t rem = o, src = 0;
    for (int i = rank - 1; i >= 0; --i) {
      src += (b[i] + rem % s[i]) * is[i];
      rem /= s[i];
    }
    std::memcpy(out.data + o * es, in.data + src * es, es);
  }
  return OkStatus();
}

}  // namespace

// Like TFLite, a strided slice of constants is computed once at allocation.
const OpImpl kOp_STRIDED_SLICE = {StridedSliceParse, StridedSlicePrepare, StridedSliceEval, StridedSliceEvalRef, true};
const OpImpl kOp_SLICE = {nullptr, SlicePrepare, SliceEval, SliceEvalRef, false};

Status shape_ops::StridedSliceDimsOf(OpContext& ctx, std::vector<int64_t>* dims) { std::vector<SliceDim> d; Dims os; TFG_RETURN_IF_ERROR(StridedSliceResolve(ctx, &d, &os)); dims->clear(); for (const SliceDim& s : d) dims->insert(dims->end(), {s.size, s.start, s.stride, s.count, int64_t(s.shrink)}); return OkStatus(); }
}  // namespace tflite_gpu
