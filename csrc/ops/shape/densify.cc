// DENSIFY: expands a sparse constant (TFLite SparsityParameters: traversal_order, block_map,
// dim_metadata DENSE / SPARSE_CSR, block sparsity) into its dense tensor. Folded once at
// allocation. Every piece of metadata is checked against the shape and the buffer first, so a
// hostile model gets an error, never an out-of-bounds access.
#include <climits>
#include <functional>

#include "ops/shape/shape_common.h"

namespace tflite_gpu {
namespace {

using namespace shape_ops;

struct DensifyPlan {
  int rank = 0, total = 0;
  std::vector<int> order;            // traversal_order
  std::vector<int> block_map;
  std::vector<int64_t> block_size;   // per block dim
  std::vector<int64_t> extent;       // per level: positions along the traversed dim
  std::vector<bool> sparse;          // per level
  int64_t num_values = 0;            // values stored in the buffer
};

Status BuildPlan(OpContext& ctx, DensifyPlan* pl) {
  const Tensor& in = ctx.input(0);
  if (!in.sparsity) return ctx.Error("input has no sparsity parameters");
  const SparsityParams& sp = *in.sparsity;
  const int rank = int(in.shape.size());
  const int k = int(sp.block_map.size());
  const int total = rank + k;
  pl->rank = rank;
  pl->total = total;
  if (int(sp.traversal_order.size()) != total)
    return ctx.Error("traversal_order has " + std::to_string(sp.traversal_order.size()) + " entries, expected " +
                     std::to_string(total) + " (rank " + std::to_string(rank) + " + " + std::to_string(k) + " block dims)");
  if (int(sp.dim_metadata.size()) != total)
    return ctx.Error("dim_metadata has " + std::to_string(sp.dim_metadata.size()) + " entries, expected " + std::to_string(total));
  pl->order.assign(sp.traversal_order.begin(), sp.traversal_order.end());
  std::vector<bool> seen(total, false);
  for (int l = 0; l < total; ++l) {
    int d = pl->order[l];
    bool ok = l < rank ? (d >= 0 && d < rank) : (d >= rank && d < total);
    if (!ok || seen[d])
      return ctx.Error("traversal_order must list the dims 0.." + std::to_string(rank - 1) +
                       " then the block dims; got an invalid entry " + std::to_string(d) + " at " + std::to_string(l));
    seen[d] = true;
  }
  pl->block_map.assign(sp.block_map.begin(), sp.block_map.end());
  for (int b = 0; b < k; ++b) {
    int d = pl->block_map[b];
    if (d < 0 || d >= rank || (b > 0 && d <= pl->block_map[b - 1]))
      return ctx.Error("block_map must hold increasing dims in [0, " + std::to_string(rank) + "), got " + std::to_string(d));
  }
  // Block sizes as TFLite reads them: dense_size of dim_metadata[traversal_order[rank + b]].
  pl->block_size.assign(k, 0);
  std::vector<int64_t> blocked(in.shape.begin(), in.shape.end());
  for (int b = 0; b < k; ++b) {
    const DimensionMetadata& m = sp.dim_metadata[pl->order[rank + b]];
    if (m.format != 0 || m.dense_size <= 0)
      return ctx.Error("block dimension " + std::to_string(b) + " must be DENSE with a positive dense_size");
    int64_t bs = m.dense_size, d = in.shape[pl->block_map[b]];
    if (d % bs != 0)
      return ctx.Error("block size " + std::to_string(bs) + " does not divide dimension " +
                       std::to_string(pl->block_map[b]) + " of size " + std::to_string(d));
    pl->block_size[b] = bs;
    blocked[pl->block_map[b]] = d / bs;
  }
  pl->extent.assign(total, 0);
  pl->sparse.assign(total, false);
  for (int l = 0; l < total; ++l) {
    const int d = pl->order[l];
    const int64_t ext = d < rank ? blocked[d] : pl->block_size[d - rank];
    const DimensionMetadata& m = sp.dim_metadata[l];
    pl->extent[l] = ext;
    if (m.format == 0) {
      if (m.dense_size != ext)
        return ctx.Error("dim_metadata[" + std::to_string(l) + "] dense_size " + std::to_string(m.dense_size) +
                         " does not match the extent " + std::to_string(ext) + " of its dimension");
    } else if (m.format == 1) {
      pl->sparse[l] = true;
      const auto& seg = m.array_segments;
      const auto& idx = m.array_indices;
      if (seg.empty()) return ctx.Error("dim_metadata[" + std::to_string(l) + "] is SPARSE_CSR without array_segments");
      for (size_t i = 0; i < seg.size(); ++i) {
        if (seg[i] < 0 || size_t(seg[i]) > idx.size() || (i > 0 && seg[i] < seg[i - 1]))
          return ctx.Error("dim_metadata[" + std::to_string(l) + "] array_segments must be non-decreasing within [0, " +
                           std::to_string(idx.size()) + "]");
      }
      for (int32_t v : idx)
        if (v < 0 || v >= ext)
          return ctx.Error("dim_metadata[" + std::to_string(l) + "] array_indices value " + std::to_string(v) +
                           " out of range [0, " + std::to_string(ext) + ")");
    } else {
      return ctx.Error("dim_metadata[" + std::to_string(l) + "] has unknown format " + std::to_string(m.format));
    }
  }
  const size_t es = DTypeSize(in.type);
  pl->num_values = (in.data && es) ? int64_t(in.bytes / es) : 0;
  return OkStatus();
}

Status DensifyPrepare(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(1, 1, 1, 1));
  if (!ctx.has_input(0)) return ctx.Error("input is missing");
  const Tensor& in = ctx.input(0);
  if (!ctx.IsConstantOrPersistent(in)) return ctx.Error("input must be a constant sparse tensor");
  if (!in.sparsity) return ctx.Error("input has no sparsity parameters");
  TFG_RETURN_IF_ERROR(CheckMovable(ctx, in, "input"));
  if (in.num_elements() < 0) return ctx.Error("input has an invalid shape " + DimsToString(in.shape));
  DensifyPlan pl;
  TFG_RETURN_IF_ERROR(BuildPlan(ctx, &pl));
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, in.type));
  return ctx.SetOutputShape(0, in.shape);
}

Status DensifyEval(OpContext& ctx) {
  DensifyPlan pl;
  TFG_RETURN_IF_ERROR(BuildPlan(ctx, &pl));
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  TFG_RETURN_IF_ERROR(SetOrCheckShape(ctx, 0, in.shape));
  const SparsityParams& sp = *in.sparsity;
  const size_t es = DTypeSize(in.type);
  const int64_t n = out.num_elements();
  if (n > 0) std::memset(out.data, 0, size_t(n) * es);
  if (n == 0) return OkStatus();
  const std::vector<int64_t> strides = Strides(in.shape);
  std::vector<int64_t> coord(pl.total, 0), orig(pl.rank, 0);
  int64_t src = 0;
  Status err;
  std::function<bool(int, int64_t)> populate = [&](int level, int64_t prev) -> bool {
    if (level == pl.total) {
      for (int l = 0; l < pl.rank; ++l) orig[pl.order[l]] = coord[l];
      for (int l = pl.rank; l < pl.total; ++l) {
        int b = pl.order[l] - pl.rank;
        int d = pl.block_map[b];
        orig[d] = orig[d] * pl.block_size[b] + coord[l];
      }
      int64_t flat = 0;
      for (int d = 0; d < pl.rank; ++d) flat += orig[d] * strides[d];
      if (src >= pl.num_values) {
        err = ctx.Error("the sparse buffer holds " + std::to_string(pl.num_values) + " values but the metadata addresses more");
        return false;
      }
      std::memcpy(out.data + flat * int64_t(es), in.data + src * int64_t(es), es);
      ++src;
      return true;
    }
    if (!pl.sparse[level]) {
      const int64_t ext = pl.extent[level];
      for (int64_t i = 0; i < ext; ++i) {
        coord[level] = i;
        if (!populate(level + 1, prev * ext + i)) return false;
      }
      return true;
    }
    const auto& seg = sp.dim_metadata[level].array_segments;
    const auto& idx = sp.dim_metadata[level].array_indices;
    if (prev < 0 || prev + 1 >= int64_t(seg.size())) return true;  // TFLite skips such a parent
    for (int64_t i = seg[prev]; i < seg[prev + 1]; ++i) {
      coord[level] = idx[i];
      if (!populate(level + 1, i)) return false;
    }
    return true;
  };
  populate(0, 0);
  return err;
}

}  // namespace

const OpImpl kOp_DENSIFY = {nullptr, DensifyPrepare, DensifyEval, nullptr, true};

}  // namespace tflite_gpu
