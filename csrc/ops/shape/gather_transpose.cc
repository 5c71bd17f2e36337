// GATHER and TRANSPOSE.
#include <climits>

#include "ops/quant_common.h"
#include "ops/shape/shape_common.h"

namespace tflite_gpu {
namespace {

using namespace shape_ops;

// ---------------------------------------------------------------------------------------------
// GATHER
// ---------------------------------------------------------------------------------------------
struct GatherParams {
  int axis = 0;
  int batch_dims = 0;
};

Status GatherParse(const OptionsView& opts, Node& node) {
  auto p = std::make_shared<GatherParams>();
  p->axis = opts.Get<int32_t>(0, 0);
  p->batch_dims = opts.Get<int32_t>(1, 0);
  node.params = p;
  return OkStatus();
}

struct GatherGeom {
  int axis = 0, batch_dims = 0;
  int64_t batch = 1, outer = 1, axis_size = 0, inner = 1, coords = 1;
};

Status GatherResolve(OpContext& ctx, GatherGeom* g, Dims* out_shape) {
  const auto& p = ctx.node().P<GatherParams>();
  const Tensor& in = ctx.input(0);
  const Tensor& pos = ctx.input(1);
  const int rank = int(in.shape.size()), prank = int(pos.shape.size());
  int axis = p.axis < 0 ? p.axis + rank : p.axis;
  if (axis < 0 || axis >= rank)
    return ctx.Error("axis " + std::to_string(p.axis) + " out of range for input rank " + std::to_string(rank));
  int bd = p.batch_dims < 0 ? p.batch_dims + prank : p.batch_dims;
  if (bd < 0 || bd >= rank || bd > prank || bd > axis)
    return ctx.Error("batch_dims " + std::to_string(p.batch_dims) + " invalid (axis " + std::to_string(axis) +
                     ", input rank " + std::to_string(rank) + ", indices rank " + std::to_string(prank) + ")");
  for (int i = 0; i < bd; ++i)
    if (in.shape[i] != pos.shape[i])
      return ctx.Error("batch dimension " + std::to_string(i) + " differs between input " + DimsToString(in.shape) +
                       " and indices " + DimsToString(pos.shape));
  g->axis = axis;
  g->batch_dims = bd;
  g->batch = Prod(in.shape, 0, bd);
  g->outer = Prod(in.shape, bd, axis);
  g->axis_size = in.shape[axis];
  g->inner = Prod(in.shape, axis + 1, rank);
  g->coords = Prod(pos.shape, bd, prank);
  out_shape->clear();
  for (int i = 0; i < axis; ++i) out_shape->push_back(in.shape[i]);
  for (int i = bd; i < prank; ++i) out_shape->push_back(pos.shape[i]);
  for (int i = axis + 1; i < rank; ++i) out_shape->push_back(in.shape[i]);
  return OkStatus();
}

Status GatherPrepare(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(quant::ValidateNodeQuant(ctx));
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 2, 1, 1));
  if (!ctx.has_input(0) || !ctx.has_input(1)) return ctx.Error("missing input");
  const Tensor& in = ctx.input(0);
  const Tensor& pos = ctx.input(1);
  if (pos.type != DType::kInt32 && pos.type != DType::kInt64 && pos.type != DType::kInt16)
    return ctx.Error(std::string("indices of type ") + DTypeName(pos.type) + " are not supported (INT16, INT32 or INT64)");
  TFG_RETURN_IF_ERROR(CheckMovable(ctx, in, "input", kPackedInt4));  // INT4: GATHER v7
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, in.type));
  GatherGeom g;
  Dims os;
  TFG_RETURN_IF_ERROR(GatherResolve(ctx, &g, &os));
  return ctx.SetOutputShape(0, os);
}

// Reads and range-checks the indices (TFLite fails the invoke on any index outside [0, axis)).
Status GatherIndices(OpContext& ctx, const GatherGeom& g, std::vector<int64_t>* idx) {
  const Tensor& pos = ctx.input(1);
  TFG_RETURN_IF_ERROR(ReadInts(ctx, pos, "indices", idx, /*allow_small=*/true));
  for (size_t i = 0; i < idx->size(); ++i) {
    int64_t v = (*idx)[i];
    if (v < 0 || v >= g.axis_size)
      return ctx.Error("gather index " + std::to_string(v) + " (position " + std::to_string(i) + ") is out of range [0, " +
                       std::to_string(g.axis_size) + ")");
  }
  return OkStatus();
}

Status GatherSetup(OpContext& ctx, GatherGeom* g, std::vector<int64_t>* idx) {
  Dims os;
  TFG_RETURN_IF_ERROR(GatherResolve(ctx, g, &os));
  TFG_RETURN_IF_ERROR(SetOrCheckShape(ctx, 0, os));
  TFG_RETURN_IF_ERROR(CheckHasData(ctx, ctx.input(0), "input"));
  return GatherIndices(ctx, *g, idx);
}

Status GatherEval(OpContext& ctx) {
  GatherGeom g;
  std::vector<int64_t> idx;
  TFG_RETURN_IF_ERROR(GatherSetup(ctx, &g, &idx));
  const size_t es = DTypeSize(ctx.input(0).type);
  const int64_t chunk = g.inner * int64_t(es);
  const uint8_t* src = ctx.input(0).as<uint8_t>();
  uint8_t* dst = ctx.output(0).as<uint8_t>();
  const int64_t items = g.batch * g.outer * g.coords;
  ParallelFor(ctx.pool(), items, [&](int64_t b, int64_t e) {
    for (int64_t it = b; it < e; ++it) {
      int64_t i = it % g.coords;
      int64_t bo = it / g.coords;  // batch * outer + outer index
      int64_t batch = bo / g.outer;
      Copy(dst + it * chunk, src + (bo * g.axis_size + idx[batch * g.coords + i]) * chunk, size_t(chunk));
    }
  }, MinChunk(chunk));
  return OkStatus();
}

Status GatherEvalRef(OpContext& ctx) {
  GatherGeom g;
  std::vector<int64_t> idx;
  TFG_RETURN_IF_ERROR(GatherSetup(ctx, &g, &idx));
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  const size_t es = DTypeSize(in.type);
  const int64_t total = out.num_elements();
  for (int64_t o = 0; o < total; ++o) {
    int64_t j = o % g.inner;
    int64_t i = (o / g.inner) % g.coords;
    int64_t outer = (o / g.inner / g.coords) % g.outer;
    int64_t batch = o / g.inner / g.coords / g.outer;
    int64_t a = idx[batch * g.coords + i];
    int64_t s = ((batch * g.outer + outer) * g.axis_size + a) * g.inner + j;
    std::memcpy(out.data + o * es, in.data + s * es, es);
  }
  return OkStatus();
}

// ---------------------------------------------------------------------------------------------
// TRANSPOSE
// ---------------------------------------------------------------------------------------------
constexpr int kMaxTransposeRank = 8;

Status TransposeResolve(OpContext& ctx, std::vector<int>* perm, Dims* os) {
  const Tensor& in = ctx.input(0);
  const Tensor& p = ctx.input(1);
  const int rank = int(in.shape.size());
  if (p.shape.size() != 1 || p.shape[0] != rank)
    return ctx.Error("perm must be a vector of " + std::to_string(rank) + " values, got shape " + DimsToString(p.shape));
  std::vector<int64_t> v;
  TFG_RETURN_IF_ERROR(ReadInts(ctx, p, "perm", &v));
  perm->assign(rank, 0);
  std::vector<bool> seen(rank, false);
  for (int i = 0; i < rank; ++i) {
    int64_t x = v[i];
    if (x < -rank || x >= rank)
      return ctx.Error("perm value " + std::to_string(x) + " out of range for rank " + std::to_string(rank));
    if (x < 0) x += rank;
    if (seen[x]) return ctx.Error("perm " + std::to_string(x) + " appears twice (perm must be a permutation)");
    seen[x] = true;
    (*perm)[i] = int(x);
  }
  os->resize(rank);
  for (int i = 0; i < rank; ++i) (*os)[i] = in.shape[(*perm)[i]];
  return OkStatus();
}

Status TransposePrepare(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(quant::ValidateNodeQuant(ctx));
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 2, 1, 1));
  if (!ctx.has_input(0) || !ctx.has_input(1)) return ctx.Error("missing input");
  const Tensor& in = ctx.input(0);
  const Tensor& p = ctx.input(1);
  TFG_RETURN_IF_ERROR(CheckMovable(ctx, in, "input", kPackedInt4 | kPackedUInt4));  // TRANSPOSE v7 / v9
  TFG_RETURN_IF_ERROR(CheckSameType(ctx, ctx.output(0), in, "output", "input"));
  if (in.shape.size() > size_t(kMaxTransposeRank))
    return ctx.Error("input rank " + std::to_string(in.shape.size()) + " exceeds " + std::to_string(kMaxTransposeRank));
  if (p.type != DType::kInt32 && p.type != DType::kInt64)
    return ctx.Error(std::string("perm has type ") + DTypeName(p.type) + ", expected INT32");
  if (!ctx.IsConstantOrPersistent(p)) {
    ctx.SetOutputDynamic(0);
    return OkStatus();
  }
  std::vector<int> perm;
  Dims os;
  TFG_RETURN_IF_ERROR(TransposeResolve(ctx, &perm, &os));
  return ctx.SetOutputShape(0, os);
}

template <typename T>
void TransposeTiled(ThreadPool* pool, const T* src, T* dst, const std::vector<int64_t>& d, const std::vector<int>& perm) {
  // d: input dims after simplification; perm[last] != last. A = last output axis (strided in the
  // input), B = output axis holding the input's last dim (contiguous in the input).
  const int r = int(d.size());
  std::vector<int64_t> is(r, 1), od(r), os(r, 1);
  for (int i = r - 2; i >= 0; --i) is[i] = is[i + 1] * d[i + 1];
  for (int i = 0; i < r; ++i) od[i] = d[perm[i]];
  for (int i = r - 2; i >= 0; --i) os[i] = os[i + 1] * od[i + 1];
  const int A = r - 1;
  int B = 0;
  for (int i = 0; i < r; ++i)
    if (perm[i] == r - 1) B = i;
  const int64_t nA = od[A], nB = od[B], sA = is[perm[A]], oB = os[B];
  std::vector<int> rest;
  int64_t rest_count = 1;
  for (int i = 0; i < r; ++i)
    if (i != A && i != B) { rest.push_back(i); rest_count *= od[i]; }
  constexpr int64_t kTile = 16;
  const int64_t tilesB = (nB + kTile - 1) / kTile;
  ParallelFor(pool, rest_count * tilesB, [&](int64_t b, int64_t e) {
    for (int64_t it = b; it < e; ++it) {
      int64_t tb = it % tilesB, rem = it / tilesB;
      int64_t base_i = 0, base_o = 0;
      for (int k = int(rest.size()) - 1; k >= 0; --k) {
        int j = rest[k];
        int64_t c = rem % od[j];
        rem /= od[j];
        base_i += c * is[perm[j]];
        base_o += c * os[j];
      }
      const int64_t b0 = tb * kTile, b1 = std::min(nB, b0 + kTile);
      for (int64_t a0 = 0; a0 < nA; a0 += kTile) {
        const int64_t a1 = std::min(nA, a0 + kTile);
        for (int64_t bb = b0; bb < b1; ++bb) {
          T* o = dst + base_o + bb * oB;
          const T* s = src + base_i + bb;
          for (int64_t a = a0; a < a1; ++a) o[a] = s[a * sA];
        }
      }
    }
  }, std::max<int64_t>(1, MinChunk(kTile * nA * int64_t(sizeof(T)))));
}

Status TransposeEval(OpContext& ctx) {
  std::vector<int> perm;
  Dims os;
  TFG_RETURN_IF_ERROR(TransposeResolve(ctx, &perm, &os));
  TFG_RETURN_IF_ERROR(SetOrCheckShape(ctx, 0, os));
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  const size_t es = DTypeSize(in.type);
  const int64_t total = out.num_elements();
  if (total == 0) return OkStatus();
  const int rank = int(in.shape.size());
  // Drop size-1 dims, then merge input dims that stay adjacent and in order in the output.
  std::vector<int> keep_index(rank, -1);
  std::vector<int64_t> d1;
  for (int i = 0; i < rank; ++i)
    if (in.shape[i] != 1) { keep_index[i] = int(d1.size()); d1.push_back(in.shape[i]); }
  std::vector<int> p1;
  for (int i = 0; i < rank; ++i)
    if (keep_index[perm[i]] >= 0) p1.push_back(keep_index[perm[i]]);
  // Groups of output positions whose input dims are consecutive.
  std::vector<std::vector<int>> groups;
  for (size_t j = 0; j < p1.size(); ++j) {
    if (!groups.empty() && groups.back().back() + 1 == p1[j]) groups.back().push_back(p1[j]);
    else groups.push_back({p1[j]});
  }
  // New input dim index of each group = rank of its first input dim among group starts.
  std::vector<int> order(groups.size());
  for (size_t g = 0; g < groups.size(); ++g) order[g] = int(g);
  std::sort(order.begin(), order.end(), [&](int x, int y) { return groups[x][0] < groups[y][0]; });
  std::vector<int64_t> d(groups.size());
  std::vector<int> pg(groups.size());
  for (size_t k = 0; k < order.size(); ++k) {
    int g = order[k];
    int64_t sz = 1;
    for (int x : groups[g]) sz *= d1[x];
    d[k] = sz;
    pg[g] = int(k);
  }
  const int r = int(d.size());
  if (r <= 1 || pg[r - 1] == r - 1) {
    // Identity after simplification, or the innermost run is contiguous: copy runs.
    const int64_t run = r == 0 ? 1 : d[r - 1];
    if (r <= 1 || std::is_sorted(pg.begin(), pg.end())) {
      Copy(out.data, in.data, size_t(total) * es);
      return OkStatus();
    }
    std::vector<int64_t> is(r, 1), od(r);
    for (int i = r - 2; i >= 0; --i) is[i] = is[i + 1] * d[i + 1];
    for (int i = 0; i < r; ++i) od[i] = d[pg[i]];
    const int64_t runs = total / run;
    const int64_t bytes = run * int64_t(es);
    const uint8_t* src = in.as<uint8_t>();
    uint8_t* dst = out.as<uint8_t>();
    ParallelFor(ctx.pool(), runs, [&](int64_t b, int64_t e) {
      for (int64_t q = b; q < e; ++q) {
        int64_t rem = q, s = 0;
        for (int i = r - 2; i >= 0; --i) {
          s += (rem % od[i]) * is[pg[i]];
          rem /= od[i];
        }
        Copy(dst + q * bytes, src + s * int64_t(es), size_t(bytes));
      }
    }, MinChunk(bytes));
    return OkStatus();
  }
  BySize(es, [&](auto t) {
    using T = decltype(t);
    TransposeTiled<T>(ctx.pool(), in.as<T>(), out.as<T>(), d, pg);
    return 0;
  });
  return OkStatus();
}

Status TransposeEvalRef(OpContext& ctx) {
  std::vector<int> perm;
  Dims os;
  TFG_RETURN_IF_ERROR(TransposeResolve(ctx, &perm, &os));
  TFG_RETURN_IF_ERROR(SetOrCheckShape(ctx, 0, os));
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  const size_t es = DTypeSize(in.type);
  const int rank = int(in.shape.size());
  std::vector<int64_t> is = Strides(in.shape);
  const int64_t total = out.num_elements();
  for (int64_t o = 0; o < total; ++o) {
    int64_t rem = o, s = 0;
    for (int i = rank - 1; i >= 0; --i) {
      s += (rem % os[i]) * is[perm[i]];
      rem /= os[i];
    }
    std::memcpy(out.data + o * es, in.data + s * es, es);
  }
  return OkStatus();
}

}  // namespace

// Like TFLite, a gather from constants is computed once at allocation.
const OpImpl kOp_GATHER = {GatherParse, GatherPrepare, GatherEval, GatherEvalRef, true};
const OpImpl kOp_TRANSPOSE = {nullptr, TransposePrepare, TransposeEval, TransposeEvalRef, false};

void shape_ops::GatherParamsOf(const Node& node, int* axis, int* batch_dims) { *axis = node.P<GatherParams>().axis; *batch_dims = node.P<GatherParams>().batch_dims; }
}  // namespace tflite_gpu
