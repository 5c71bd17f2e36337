// SPLIT_V, SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND.
#include <climits>

#include "ops/shape/shape_common.h"

namespace tflite_gpu {
namespace {

using namespace shape_ops;

// ---------------------------------------------------------------------------------------------
// SPLIT_V: input, size_splits (1-D INT32/INT64, one -1 may be inferred), axis (scalar INT32/64).
// Outputs are dynamic unless size_splits and axis are constant.
// ---------------------------------------------------------------------------------------------
struct SplitVParams {
  int num_splits = 0;
};

Status SplitVParse(const OptionsView& opts, Node& node) {
  auto p = std::make_shared<SplitVParams>();
  p->num_splits = opts.Get<int32_t>(0, 0);
  node.params = p;
  return OkStatus();
}

Status SplitVResolve(OpContext& ctx, int* axis_out, std::vector<int64_t>* sizes) {
  const Tensor& in = ctx.input(0);
  const int rank = int(in.shape.size());
  std::vector<int64_t> a;
  TFG_RETURN_IF_ERROR(ReadInts(ctx, ctx.input(2), "axis", &a));
  if (a.size() != 1) return ctx.Error("axis must hold one value");
  int64_t axis = a[0] < 0 ? a[0] + rank : a[0];
  if (axis < 0 || axis >= rank)
    return ctx.Error("axis " + std::to_string(a[0]) + " out of range for input rank " + std::to_string(rank));
  TFG_RETURN_IF_ERROR(ReadInts(ctx, ctx.input(1), "size_splits", sizes));
  if (int(sizes->size()) != ctx.num_outputs())
    return ctx.Error("size_splits has " + std::to_string(sizes->size()) + " values for " +
                     std::to_string(ctx.num_outputs()) + " outputs");
  int minus = -1;
  int64_t sum = 0;
  for (size_t i = 0; i < sizes->size(); ++i) {
    int64_t v = (*sizes)[i];
    if (v == -1) {
      if (minus >= 0) return ctx.Error("size_splits has more than one -1");
      minus = int(i);
    } else if (v < 0) {
      return ctx.Error("invalid split size " + std::to_string(v));
    } else {
      sum += v;
    }
  }
  const int64_t dim = in.shape[axis];
  if (minus >= 0) {
    if (sum > dim)
      return ctx.Error("split sizes sum to " + std::to_string(sum) + ", more than the axis size " + std::to_string(dim));
    (*sizes)[minus] = dim - sum;
  } else if (sum != dim) {
    return ctx.Error("split sizes sum to " + std::to_string(sum) + " but the axis size is " + std::to_string(dim));
  }
  *axis_out = int(axis);
  return OkStatus();
}

Status SplitVPrepare(OpContext& ctx) {
  const auto& p = ctx.node().P<SplitVParams>();
  TFG_RETURN_IF_ERROR(ctx.CheckArity(3, 3, 1, INT32_MAX));
  for (int i = 0; i < 3; ++i)
    if (!ctx.has_input(i)) return ctx.Error("missing input");
  if (p.num_splits != ctx.num_outputs())
    return ctx.Error("num_splits " + std::to_string(p.num_splits) + " differs from the number of outputs " +
                     std::to_string(ctx.num_outputs()));
  const Tensor& in = ctx.input(0);
  TFG_RETURN_IF_ERROR(CheckMovable(ctx, in, "input"));
  for (int i = 0; i < ctx.num_outputs(); ++i) TFG_RETURN_IF_ERROR(CheckSameType(ctx, ctx.output(i), in, "output", "input"));
  const Tensor& ss = ctx.input(1);
  const Tensor& ax = ctx.input(2);
  if (ss.type != DType::kInt32 && ss.type != DType::kInt64)
    return ctx.Error(std::string("size_splits has type ") + DTypeName(ss.type) + ", expected INT32 or INT64");
  if (ss.shape.size() != 1) return ctx.Error("size_splits must be 1-D, got shape " + DimsToString(ss.shape));
  if (ax.type != DType::kInt32 && ax.type != DType::kInt64)
    return ctx.Error(std::string("axis has type ") + DTypeName(ax.type) + ", expected INT32");
  if (!ctx.IsConstantOrPersistent(ss) || !ctx.IsConstantOrPersistent(ax)) {
    for (int i = 0; i < ctx.num_outputs(); ++i) ctx.SetOutputDynamic(i);
    return OkStatus();
  }
  int axis = 0;
  std::vector<int64_t> sizes;
  TFG_RETURN_IF_ERROR(SplitVResolve(ctx, &axis, &sizes));
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    Dims os = in.shape;
    os[axis] = int32_t(sizes[i]);
    TFG_RETURN_IF_ERROR(ctx.SetOutputShape(i, os));
  }
  return OkStatus();
}

template <bool kRef>
Status SplitVEval(OpContext& ctx) {
  int axis = 0;
  std::vector<int64_t> sizes;
  TFG_RETURN_IF_ERROR(SplitVResolve(ctx, &axis, &sizes));
  const Tensor& in = ctx.input(0);
  TFG_RETURN_IF_ERROR(CheckHasData(ctx, in, "input"));
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    Dims os = in.shape;
    os[axis] = int32_t(sizes[i]);
    TFG_RETURN_IF_ERROR(SetOrCheckShape(ctx, i, os));
  }
  const int rank = int(in.shape.size());
  const int64_t es = int64_t(DTypeSize(in.type));
  const int64_t outer = Prod(in.shape, 0, axis), inner = Prod(in.shape, axis + 1, rank) * es;
  const int64_t dim = in.shape[axis];
  int64_t off = 0;
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    uint8_t* dst = ctx.output(i).data;
    const int64_t n = sizes[i];
    if (kRef) {
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t k = 0; k < n; ++k)
          for (int64_t b = 0; b < inner; ++b) dst[(o * n + k) * inner + b] = in.data[(o * dim + off + k) * inner + b];
    } else {
      const int64_t row = n * inner;
      const uint8_t* src = in.data + off * inner;
      ParallelFor(ctx.pool(), outer, [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o) Copy(dst + o * row, src + o * dim * inner, size_t(row));
      }, MinChunk(row));
    }
    off += n;
  }
  return OkStatus();
}

// ---------------------------------------------------------------------------------------------
// SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND: input [B, spatial (M dims), rest], block_shape (M),
// paddings/crops [M, 2]. Output dynamic unless block_shape and paddings/crops are constant.
// Quantized: the padding value is the zero point; input and output quantization must agree.
// ---------------------------------------------------------------------------------------------
struct SpaceGeom {
  std::vector<int64_t> block, before;  // per spatial dim; before = pad before (S2B) / crop start (B2S)
  Dims out;
  int64_t blocks = 1;
};

Status SpaceResolve(OpContext& ctx, bool to_batch, SpaceGeom* g) {
  const Tensor& in = ctx.input(0);
  const int rank = int(in.shape.size());
  std::vector<int64_t> bs, pad;
  TFG_RETURN_IF_ERROR(ReadInts(ctx, ctx.input(1), "block_shape", &bs));
  TFG_RETURN_IF_ERROR(ReadInts(ctx, ctx.input(2), to_batch ? "paddings" : "crops", &pad));
  const int m = int(bs.size());
  const char* what = to_batch ? "paddings" : "crops";
  if (m != rank - 2)
    return ctx.Error("block_shape has " + std::to_string(m) + " values for an input of rank " + std::to_string(rank) +
                     " (expected " + std::to_string(rank - 2) + ")");
  if (pad.size() != size_t(2 * m))
    return ctx.Error(std::string(what) + " must have shape [" + std::to_string(m) + ", 2]");
  g->block = bs;
  g->before.assign(m, 0);
  g->out = in.shape;
  g->blocks = 1;
  for (int i = 0; i < m; ++i) {
    if (bs[i] < 1) return ctx.Error("block_shape values must be >= 1, got " + std::to_string(bs[i]));
    g->blocks *= bs[i];
    if (g->blocks > INT32_MAX) return ctx.Error("block_shape is too large");
    const int64_t a = pad[2 * i], b = pad[2 * i + 1];
    if (a < 0 || b < 0) return ctx.Error(std::string(what) + " must be non-negative");
    g->before[i] = a;
    const int64_t d = in.shape[1 + i];
    if (to_batch) {
      const int64_t p = d + a + b;
      if (p % bs[i] != 0)
        return ctx.Error("padded spatial dim " + std::to_string(i) + " (" + std::to_string(p) +
                         ") is not a multiple of the block size " + std::to_string(bs[i]));
      g->out[1 + i] = int32_t(p / bs[i]);
    } else {
      const int64_t full = d * bs[i];
      if (a + b > full)
        return ctx.Error("crops of spatial dim " + std::to_string(i) + " exceed its size " + std::to_string(full));
      if (full - a - b > INT32_MAX) return ctx.Error("output too large");
      g->out[1 + i] = int32_t(full - a - b);
    }
  }
  if (to_batch) {
    const int64_t ob = int64_t(in.shape[0]) * g->blocks;
    if (ob > INT32_MAX) return ctx.Error("output batch too large");
    g->out[0] = int32_t(ob);
  } else {
    if (in.shape[0] % g->blocks != 0)
      return ctx.Error("input batch " + std::to_string(in.shape[0]) + " is not a multiple of the block count " +
                       std::to_string(g->blocks));
    g->out[0] = int32_t(in.shape[0] / g->blocks);
  }
  return OkStatus();
}

Status SpacePrepare(OpContext& ctx, bool to_batch) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(3, 3, 1, 1));
  for (int i = 0; i < 3; ++i)
    if (!ctx.has_input(i)) return ctx.Error("missing input");
  const Tensor& in = ctx.input(0);
  TFG_RETURN_IF_ERROR(CheckMovable(ctx, in, "input"));
  TFG_RETURN_IF_ERROR(CheckSameType(ctx, ctx.output(0), in, "output", "input"));
  const int rank = int(in.shape.size());
  if (rank < 3 || rank > 4) return ctx.Error("input must be 3-D or 4-D, got " + DimsToString(in.shape));
  if ((IsQuantized(in) || IsQuantized(ctx.output(0))) && in.type != DType::kFloat32 &&
      !SameLegacyQuant(in, ctx.output(0)))
    return ctx.Error("input and output quantization must be the same");
  for (int i = 1; i < 3; ++i) {
    const Tensor& t = ctx.input(i);
    if (t.type != DType::kInt32)
      return ctx.Error(std::string(i == 1 ? "block_shape" : (to_batch ? "paddings" : "crops")) + " has type " +
                       DTypeName(t.type) + ", expected INT32");
  }
  if (ctx.input(1).shape.size() != 1) return ctx.Error("block_shape must be 1-D");
  if (ctx.input(2).shape.size() != 2) return ctx.Error(std::string(to_batch ? "paddings" : "crops") + " must be 2-D");
  if (!ctx.IsConstantOrPersistent(ctx.input(1)) || !ctx.IsConstantOrPersistent(ctx.input(2))) {
    ctx.SetOutputDynamic(0);
    return OkStatus();
  }
  SpaceGeom g;
  TFG_RETURN_IF_ERROR(SpaceResolve(ctx, to_batch, &g));
  return ctx.SetOutputShape(0, g.out);
}

Status S2BPrepare(OpContext& ctx) { return SpacePrepare(ctx, true); }
Status B2SPrepare(OpContext& ctx) { return SpacePrepare(ctx, false); }

// One kernel for both directions: walks the space-side tensor (S2B: the padded input seen from
// the output; B2S: the output) and copies `rest` runs between it and the batch-side tensor.
template <bool kRef>
Status SpaceEval(OpContext& ctx, bool to_batch) {
  SpaceGeom g;
  TFG_RETURN_IF_ERROR(SpaceResolve(ctx, to_batch, &g));
  TFG_RETURN_IF_ERROR(SetOrCheckShape(ctx, 0, g.out));
  const Tensor& in = ctx.input(0);
  TFG_RETURN_IF_ERROR(CheckHasData(ctx, in, "input"));
  Tensor& out = ctx.output(0);
  const int rank = int(in.shape.size());
  const int m = int(g.block.size());
  const int64_t es = int64_t(DTypeSize(in.type));
  const Dims& bshape = to_batch ? out.shape : in.shape;   // batch side
  const Dims& sshape = to_batch ? in.shape : out.shape;   // space side
  const int64_t rest = Prod(bshape, 1 + m, rank) * es;
  const int64_t sbatch = sshape[0];
  // Pad byte pattern: zero point for quantized 1-byte types, else zero.
  uint8_t pad_byte = 0;
  if (to_batch && IsQuantized(in) && es == 1) pad_byte = uint8_t(Legacy(out).zero_point);
  const int64_t total = Prod(bshape, 0, 1 + m);  // batch-side rows
  auto body = [&](int64_t b, int64_t e) {
    std::vector<int64_t> c(m);
    for (int64_t r = b; r < e; ++r) {
      // r -> (ob, spatial coords on the batch side)
      int64_t rem = r;
      for (int i = m - 1; i >= 0; --i) {
        c[i] = rem % bshape[1 + i];
        rem /= bshape[1 + i];
      }
      const int64_t ob = rem;
      const int64_t sb = ob % sbatch;
      int64_t blk = ob / sbatch;
      bool inside = true;
      int64_t srow = sb;
      // block offsets, row-major over block dims
      std::vector<int64_t> off(m);
      for (int i = m - 1; i >= 0; --i) {
        off[i] = blk % g.block[i];
        blk /= g.block[i];
      }
      for (int i = 0; i < m; ++i) {
        int64_t sc = c[i] * g.block[i] + off[i] - g.before[i];
        if (sc < 0 || sc >= sshape[1 + i]) inside = false;
        srow = srow * sshape[1 + i] + (inside ? sc : 0);
      }
      uint8_t* bptr = (to_batch ? out.data : in.data) + r * rest;
      if (to_batch) {
        if (inside) {
          if (kRef) for (int64_t k = 0; k < rest; ++k) bptr[k] = in.data[srow * rest + k];
          else Copy(bptr, in.data + srow * rest, size_t(rest));
        } else {
          std::memset(bptr, pad_byte, size_t(rest));
        }
      } else if (inside) {
        if (kRef) for (int64_t k = 0; k < rest; ++k) out.data[srow * rest + k] = bptr[k];
        else Copy(out.data + srow * rest, bptr, size_t(rest));
      }
    }
  };
  if (kRef) body(0, total);
  else ParallelFor(ctx.pool(), total, body, MinChunk(rest));
  return OkStatus();
}

template <bool kRef> Status S2BEval(OpContext& ctx) { return SpaceEval<kRef>(ctx, true); }
template <bool kRef> Status B2SEval(OpContext& ctx) { return SpaceEval<kRef>(ctx, false); }

}  // namespace

const OpImpl kOp_SPLIT_V = {SplitVParse, SplitVPrepare, SplitVEval<false>, SplitVEval<true>, false};
const OpImpl kOp_SPACE_TO_BATCH_ND = {nullptr, S2BPrepare, S2BEval<false>, S2BEval<true>, false};
const OpImpl kOp_BATCH_TO_SPACE_ND = {nullptr, B2SPrepare, B2SEval<false>, B2SEval<true>, false};

}  // namespace tflite_gpu
