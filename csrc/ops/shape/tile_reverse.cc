// TILE, BROADCAST_TO, REVERSE_V2, REVERSE_SEQUENCE: type-generic copies with repeated or
// reversed index maps.
#include <climits>

#include "ops/shape/shape_common.h"

namespace tflite_gpu {
namespace {

using namespace shape_ops;

constexpr int kMaxRank = 8;
constexpr int64_t kMaxElements = int64_t(1) << 34;

// ---------------------------------------------------------------------------------------------
// Shared repeat kernel: output dim i = in[i] * mult[i]; output(o) = input(o mod in) per dim.
// Fast version: builds the innermost rows by block copies and then replicates whole blocks.
// ---------------------------------------------------------------------------------------------
struct Repeat {
  Dims in;                     // input shape (rank r)
  std::vector<int64_t> mult;   // per-dim repeat count
  Dims out;
};

int64_t RepeatRec(const Repeat& r, const std::vector<int64_t>& in_stride_bytes, const uint8_t* src, uint8_t* dst,
                  int d, size_t es) {
  const int rank = int(r.in.size());
  int64_t block = 0;
  if (d == rank - 1) {
    block = int64_t(r.in[d]) * int64_t(es);
    Copy(dst, src, size_t(block));
  } else {
    for (int64_t i = 0; i < r.in[d]; ++i)
      block += RepeatRec(r, in_stride_bytes, src + i * in_stride_bytes[d], dst + block, d + 1, es);
  }
  for (int64_t m = 1; m < r.mult[d]; ++m) Copy(dst + m * block, dst, size_t(block));
  return block * r.mult[d];
}

void RepeatFast(const Repeat& r, const uint8_t* src, uint8_t* dst, size_t es) {
  const int rank = int(r.in.size());
  if (NumElements(r.out) == 0) return;
  if (rank == 0) {
    Copy(dst, src, es);
    return;
  }
  std::vector<int64_t> st = Strides(r.in);
  for (auto& s : st) s *= int64_t(es);
  RepeatRec(r, st, src, dst, 0, es);
}

void RepeatRef(const Repeat& r, const uint8_t* src, uint8_t* dst, size_t es) {
  const int rank = int(r.in.size());
  const int64_t total = NumElements(r.out);
  std::vector<int64_t> is = Strides(r.in);
  for (int64_t o = 0; o < total; ++o) {
    int64_t rem = o, s = 0;
    for (int i = rank - 1; i >= 0; --i) {
      int64_t c = rem % r.out[i];
      rem /= r.out[i];
      s += (c % r.in[i]) * is[i];
    }
    std::memcpy(dst + o * int64_t(es), src + s * int64_t(es), es);
  }
}

Status SetOutDims(const OpContext& ctx, Repeat* r) {
  r->out.clear();
  int64_t n = 1;
  for (size_t i = 0; i < r->in.size(); ++i) {
    int64_t d = int64_t(r->in[i]) * r->mult[i];
    if (d > INT32_MAX) return ctx.Error("output dimension " + std::to_string(i) + " overflows int32");
    n *= d;
    if (n > kMaxElements) return ctx.Error("output is too large");
    r->out.push_back(int32_t(d));
  }
  return OkStatus();
}

// ---------------------------------------------------------------------------------------------
// TILE: input, multiples (1-D INT32/INT64, one per input dim, >= 0).
// ---------------------------------------------------------------------------------------------
Status TileResolve(OpContext& ctx, Repeat* r) {
  const Tensor& in = ctx.input(0);
  std::vector<int64_t> m;
  TFG_RETURN_IF_ERROR(ReadInts(ctx, ctx.input(1), "multiples", &m));
  if (m.size() != in.shape.size())
    return ctx.Error("multiples has " + std::to_string(m.size()) + " values for an input of rank " +
                     std::to_string(in.shape.size()));
  for (int64_t v : m)
    if (v < 0) return ctx.Error("multiples must be non-negative, got " + std::to_string(v));
  r->in = in.shape;
  r->mult = m;
  return SetOutDims(ctx, r);
}

Status TilePrepare(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 2, 1, 1));
  if (!ctx.has_input(0) || !ctx.has_input(1)) return ctx.Error("missing input");
  const Tensor& in = ctx.input(0);
  const Tensor& m = ctx.input(1);
  TFG_RETURN_IF_ERROR(CheckMovable(ctx, in, "input"));
  TFG_RETURN_IF_ERROR(CheckSameType(ctx, ctx.output(0), in, "output", "input"));
  if (m.type != DType::kInt32 && m.type != DType::kInt64)
    return ctx.Error(std::string("multiples has type ") + DTypeName(m.type) + ", expected INT32 or INT64");
  if (m.shape.size() != 1) return ctx.Error("multiples must be 1-D, got shape " + DimsToString(m.shape));
  if (in.shape.size() > size_t(kMaxRank)) return ctx.Error("input rank exceeds 8");
  if (!ctx.IsConstantOrPersistent(m)) {
    ctx.SetOutputDynamic(0);
    return OkStatus();
  }
  Repeat r;
  TFG_RETURN_IF_ERROR(TileResolve(ctx, &r));
  return ctx.SetOutputShape(0, r.out);
}

template <bool kRef>
Status TileEval(OpContext& ctx) {
  Repeat r;
  TFG_RETURN_IF_ERROR(TileResolve(ctx, &r));
  TFG_RETURN_IF_ERROR(SetOrCheckShape(ctx, 0, r.out));
  const Tensor& in = ctx.input(0);
  TFG_RETURN_IF_ERROR(CheckHasData(ctx, in, "input"));
  const size_t es = DTypeSize(in.type);
  if (kRef) RepeatRef(r, in.data, ctx.output(0).data, es);
  else RepeatFast(r, in.data, ctx.output(0).data, es);
  return OkStatus();
}

// ---------------------------------------------------------------------------------------------
// BROADCAST_TO: input, shape (1-D INT32/INT64); numpy broadcasting of input to shape.
// ---------------------------------------------------------------------------------------------
Status BroadcastToResolve(OpContext& ctx, Repeat* r) {
  const Tensor& in = ctx.input(0);
  std::vector<int64_t> s;
  TFG_RETURN_IF_ERROR(ReadInts(ctx, ctx.input(1), "shape", &s));
  const size_t orank = s.size(), irank = in.shape.size();
  if (orank > size_t(kMaxRank)) return ctx.Error("output rank " + std::to_string(orank) + " exceeds 8");
  if (orank < irank)
    return ctx.Error("output rank " + std::to_string(orank) + " is lower than the input rank " + std::to_string(irank));
  r->in.assign(orank, 1);
  r->mult.assign(orank, 1);
  for (size_t i = 0; i < orank; ++i) {
    if (s[i] < 0 || s[i] > INT32_MAX) return ctx.Error("invalid dimension " + std::to_string(s[i]) + " in shape");
    int64_t d = i + irank >= orank ? in.shape[i + irank - orank] : 1;
    r->in[i] = int32_t(d);
    if (d == s[i]) continue;
    if (d != 1)
      return ctx.Error("input " + DimsToString(in.shape) + " cannot be broadcast to the shape (dimension " +
                       std::to_string(d) + " vs " + std::to_string(s[i]) + ")");
    r->mult[i] = s[i];
  }
  return SetOutDims(ctx, r);
}

Status BroadcastToPrepare(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 2, 1, 1));
  if (!ctx.has_input(0) || !ctx.has_input(1)) return ctx.Error("missing input");
  const Tensor& in = ctx.input(0);
  const Tensor& s = ctx.input(1);
  TFG_RETURN_IF_ERROR(CheckMovable(ctx, in, "input"));
  TFG_RETURN_IF_ERROR(CheckSameType(ctx, ctx.output(0), in, "output", "input"));
  if (s.type != DType::kInt32 && s.type != DType::kInt64)
    return ctx.Error(std::string("shape has type ") + DTypeName(s.type) + ", expected INT32 or INT64");
  if (s.shape.size() != 1) return ctx.Error("shape must be 1-D, got " + DimsToString(s.shape));
  if (in.shape.size() > size_t(kMaxRank)) return ctx.Error("input rank exceeds 8");
  if (!ctx.IsConstantOrPersistent(s)) {
    ctx.SetOutputDynamic(0);
    return OkStatus();
  }
  Repeat r;
  TFG_RETURN_IF_ERROR(BroadcastToResolve(ctx, &r));
  return ctx.SetOutputShape(0, r.out);
}

template <bool kRef>
Status BroadcastToEval(OpContext& ctx) {
  Repeat r;
  TFG_RETURN_IF_ERROR(BroadcastToResolve(ctx, &r));
  TFG_RETURN_IF_ERROR(SetOrCheckShape(ctx, 0, r.out));
  const Tensor& in = ctx.input(0);
  TFG_RETURN_IF_ERROR(CheckHasData(ctx, in, "input"));
  const size_t es = DTypeSize(in.type);
  if (kRef) RepeatRef(r, in.data, ctx.output(0).data, es);
  else RepeatFast(r, in.data, ctx.output(0).data, es);
  return OkStatus();
}

// ---------------------------------------------------------------------------------------------
// REVERSE_V2: input, axis (1-D INT32/INT64, distinct axes, negative counted from the end).
// ---------------------------------------------------------------------------------------------
Status ReverseAxes(OpContext& ctx, std::vector<bool>* rev) {
  const Tensor& in = ctx.input(0);
  const int rank = int(in.shape.size());
  std::vector<int64_t> a;
  TFG_RETURN_IF_ERROR(ReadInts(ctx, ctx.input(1), "axis", &a));
  rev->assign(rank, false);
  for (int64_t v : a) {
    int64_t x = v < 0 ? v + rank : v;
    if (x < 0 || x >= rank)
      return ctx.Error("axis " + std::to_string(v) + " out of range for input rank " + std::to_string(rank));
    if ((*rev)[x]) return ctx.Error("axis " + std::to_string(v) + " is given twice");
    (*rev)[x] = true;
  }
  return OkStatus();
}

Status ReversePrepare(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 2, 1, 1));
  if (!ctx.has_input(0) || !ctx.has_input(1)) return ctx.Error("missing input");
  const Tensor& in = ctx.input(0);
  const Tensor& a = ctx.input(1);
  TFG_RETURN_IF_ERROR(CheckMovable(ctx, in, "input"));
  TFG_RETURN_IF_ERROR(CheckSameType(ctx, ctx.output(0), in, "output", "input"));
  if (a.type != DType::kInt32 && a.type != DType::kInt64)
    return ctx.Error(std::string("axis has type ") + DTypeName(a.type) + ", expected INT32 or INT64");
  if (a.shape.size() != 1) return ctx.Error("axis must be 1-D, got shape " + DimsToString(a.shape));
  if (in.shape.size() > size_t(kMaxRank)) return ctx.Error("input rank exceeds 8");
  if (ctx.IsConstantOrPersistent(a)) {
    std::vector<bool> rev;
    TFG_RETURN_IF_ERROR(ReverseAxes(ctx, &rev));
  }
  return ctx.SetOutputShape(0, in.shape);
}

template <bool kRef>
Status ReverseEval(OpContext& ctx) {
  std::vector<bool> rev;
  TFG_RETURN_IF_ERROR(ReverseAxes(ctx, &rev));
  const Tensor& in = ctx.input(0);
  TFG_RETURN_IF_ERROR(CheckHasData(ctx, in, "input"));
  Tensor& out = ctx.output(0);
  const int rank = int(in.shape.size());
  const int64_t es = int64_t(DTypeSize(in.type));
  const int64_t total = in.num_elements();
  if (total == 0) return OkStatus();
  std::vector<int64_t> st = Strides(in.shape);
  // Contiguous run: the trailing dims after the last reversed axis (1 element in the reference).
  int last = -1;
  for (int i = 0; i < rank; ++i)
    if (rev[i]) last = i;
  const int64_t run = kRef ? 1 : Prod(in.shape, last + 1, rank);
  const int outer_rank = kRef ? rank : last + 1;
  auto body = [&](int64_t b, int64_t e) {
    for (int64_t q = b; q < e; ++q) {
      int64_t rem = q, s = 0;
      for (int i = outer_rank - 1; i >= 0; --i) {
        int64_t c = rem % in.shape[i];
        rem /= in.shape[i];
        if (rev[i]) c = in.shape[i] - 1 - c;
        s += c * st[i];
      }
      Copy(out.data + q * run * es, in.data + s * es, size_t(run * es));
    }
  };
  if (kRef) body(0, total / run);
  else ParallelFor(ctx.pool(), total / run, body, MinChunk(run * es));
  return OkStatus();
}

// ---------------------------------------------------------------------------------------------
// REVERSE_SEQUENCE: input, seq_lengths (1-D INT32/INT64, one per batch entry); for batch b the
// first seq_lengths[b] entries along seq_dim are reversed, the rest copied.
// ---------------------------------------------------------------------------------------------
struct RevSeqParams {
  int seq_dim = 0, batch_dim = 0;
};

Status RevSeqParse(const OptionsView& opts, Node& node) {
  auto p = std::make_shared<RevSeqParams>();
  p->seq_dim = opts.Get<int32_t>(0, 0);
  p->batch_dim = opts.Get<int32_t>(1, 0);
  node.params = p;
  return OkStatus();
}

Status RevSeqPrepare(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 2, 1, 1));
  if (!ctx.has_input(0) || !ctx.has_input(1)) return ctx.Error("missing input");
  const Tensor& in = ctx.input(0);
  const Tensor& len = ctx.input(1);
  const auto& p = ctx.node().P<RevSeqParams>();
  TFG_RETURN_IF_ERROR(CheckMovable(ctx, in, "input"));
  TFG_RETURN_IF_ERROR(CheckSameType(ctx, ctx.output(0), in, "output", "input"));
  if (len.type != DType::kInt32 && len.type != DType::kInt64)
    return ctx.Error(std::string("seq_lengths has type ") + DTypeName(len.type) + ", expected INT32 or INT64");
  const int rank = int(in.shape.size());
  if (p.seq_dim < 0 || p.seq_dim >= rank || p.batch_dim < 0 || p.batch_dim >= rank)
    return ctx.Error("seq_dim " + std::to_string(p.seq_dim) + " / batch_dim " + std::to_string(p.batch_dim) +
                     " out of range for input rank " + std::to_string(rank));
  if (p.seq_dim == p.batch_dim) return ctx.Error("seq_dim and batch_dim must differ");
  if (len.shape.size() != 1 || len.shape[0] != in.shape[p.batch_dim])
    return ctx.Error("seq_lengths must be 1-D with " + std::to_string(in.shape[p.batch_dim]) + " values, got shape " +
                     DimsToString(len.shape));
  return ctx.SetOutputShape(0, in.shape);
}

Status RevSeqEval(OpContext& ctx) {
  const auto& p = ctx.node().P<RevSeqParams>();
  const Tensor& in = ctx.input(0);
  TFG_RETURN_IF_ERROR(CheckHasData(ctx, in, "input"));
  std::vector<int64_t> len;
  TFG_RETURN_IF_ERROR(ReadInts(ctx, ctx.input(1), "seq_lengths", &len));
  const int64_t sd = in.shape[p.seq_dim];
  for (int64_t l : len)
    if (l < 0 || l > sd)
      return ctx.Error("seq_lengths value " + std::to_string(l) + " out of range [0, " + std::to_string(sd) + "]");
  Tensor& out = ctx.output(0);
  const int rank = int(in.shape.size());
  const size_t es = DTypeSize(in.type);
  const int64_t total = in.num_elements();
  std::vector<int64_t> st = Strides(in.shape);
  for (int64_t o = 0; o < total; ++o) {
    int64_t rem = o, s = 0, b = 0, q = 0;
    std::vector<int64_t> c(rank);
    for (int i = rank - 1; i >= 0; --i) {
      c[i] = rem % in.shape[i];
      rem /= in.shape[i];
    }
    b = c[p.batch_dim];
    q = c[p.seq_dim];
    if (q < len[b]) c[p.seq_dim] = len[b] - 1 - q;
    for (int i = 0; i < rank; ++i) s += c[i] * st[i];
    std::memcpy(out.data + o * int64_t(es), in.data + s * int64_t(es), es);
  }
  return OkStatus();
}

}  // namespace

const OpImpl kOp_TILE = {nullptr, TilePrepare, TileEval<false>, TileEval<true>, false};
const OpImpl kOp_BROADCAST_TO = {nullptr, BroadcastToPrepare, BroadcastToEval<false>, BroadcastToEval<true>, false};
const OpImpl kOp_REVERSE_V2 = {nullptr, ReversePrepare, ReverseEval<false>, ReverseEval<true>, false};
const OpImpl kOp_REVERSE_SEQUENCE = {RevSeqParse, RevSeqPrepare, RevSeqEval, nullptr, false};

}  // namespace tflite_gpu
