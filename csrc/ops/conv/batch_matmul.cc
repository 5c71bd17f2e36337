// BATCH_MATMUL (v1-4), float32 (integer and hybrid kernels: quantized.cc): lhs [..., M, K] (or [..., K, M] with adj_x), rhs [..., K, N]
// (or [..., N, K] with adj_y), ranks 2..5, batch dimensions broadcast (numpy rules, shorter
// shape padded with leading 1s). Output [broadcast batch..., M, N].
//
// Fast path: each rhs batch matrix is packed for the GEMM (once in Prepare when rhs is
// constant); adj_x lhs matrices are transposed into scratch. Many batches run in parallel, one
// GEMM per task; few batches run one after the other, each GEMM on the pool.
#include "ops/conv/conv_common.h"
#include "ops/conv/gemm.h"
#include "ops/conv/quantized.h"

namespace tflite_gpu {
namespace {

struct BmmParams {
  bool adj_x = false, adj_y = false;
  bool asymmetric_quantize_inputs = false;  // hybrid kernel: quantize each lhs row asymmetrically
};

struct BmmState {
  int M = 0, N = 0, K = 0;
  std::vector<int64_t> lhs_of, rhs_of;  // per output batch: lhs / rhs batch index
  int64_t rhs_batches = 0;
  size_t packed_floats = 0;  // per rhs batch
  conv::PackKey key;
  conv::AlignedFloats packed;
  bool packed_valid = false;
  size_t scratch_pack_off = 0, scratch_tr_off = 0, tr_floats = 0;
  bool quantized = false;
  std::shared_ptr<void> qstate;  // quantized kernels (quantized.cc)
};

qconv::BmmGeom GeomOf(const BmmState& s, const BmmParams& p) {
  return qconv::BmmGeom{s.M, s.N, s.K, &s.lhs_of, &s.rhs_of, s.rhs_batches, p.adj_x, p.adj_y,
                        p.asymmetric_quantize_inputs};
}

Status Parse(const OptionsView& raw, Node& node) {
  OptionsView o = conv::Opts(raw, conv::kBatchMatMulOptions);
  auto p = std::make_shared<BmmParams>();
  p->adj_x = o.GetBool(0, false);
  p->adj_y = o.GetBool(1, false);
  p->asymmetric_quantize_inputs = o.GetBool(2, false);
  node.params = p;
  return OkStatus();
}

void PackRhs(const BmmParams& p, const BmmState& s, const float* rhs, float* dst) {
  const int64_t mat = int64_t(s.K) * s.N;
  for (int64_t rb = 0; rb < s.rhs_batches; ++rb) {
    const float* src = rhs + rb * mat;
    if (p.adj_y)
      gemm::PackB(s.K, s.N, src, 1, s.K, nullptr, dst + rb * s.packed_floats);
    else
      gemm::PackB(s.K, s.N, src, s.N, 1, nullptr, dst + rb * s.packed_floats);
  }
}

Status Prepare(OpContext& ctx) {
  const BmmParams& p = ctx.node().P<BmmParams>();
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 2, 1, 1));
  const Tensor& lhs = ctx.input(0);
  const Tensor& rhs = ctx.input(1);
  const bool quantized = lhs.type != DType::kFloat32 || rhs.type != DType::kFloat32;
  if (!quantized) {
    TFG_RETURN_IF_ERROR(conv::CheckFloat(ctx, lhs, "lhs"));
    TFG_RETURN_IF_ERROR(conv::CheckFloat(ctx, rhs, "rhs"));
  }
  const int lr = int(lhs.shape.size()), rr = int(rhs.shape.size());
  if (lr < 2 || lr > 5 || rr < 2 || rr > 5)
    return ctx.Error("operands must have rank 2 to 5, got shapes " + conv::Str(lhs.shape) + " and " + conv::Str(rhs.shape));
  if (!ctx.node().user_data) ctx.node().user_data = std::make_shared<BmmState>();
  BmmState* s = ctx.node().U<BmmState>();
  const int lhs_rows = lhs.shape[lr - 2], lhs_cols = lhs.shape[lr - 1];
  const int rhs_rows = rhs.shape[rr - 2], rhs_cols = rhs.shape[rr - 1];
  s->M = p.adj_x ? lhs_cols : lhs_rows;
  s->K = p.adj_x ? lhs_rows : lhs_cols;
  const int rk = p.adj_y ? rhs_cols : rhs_rows;
  s->N = p.adj_y ? rhs_rows : rhs_cols;
  if (rk != s->K)
    return ctx.Error("contraction dimensions differ: lhs " + conv::Str(lhs.shape) + (p.adj_x ? " (adj_x)" : "") + " and rhs " +
                     conv::Str(rhs.shape) + (p.adj_y ? " (adj_y)" : ""));
  const int orank = std::max(lr, rr);
  const int nbd = orank - 2;
  Dims out_shape(orank);
  std::vector<int> ld(nbd, 1), rd(nbd, 1);
  for (int i = 0; i < nbd; ++i) {
    int li = i - (orank - lr), ri = i - (orank - rr);
    ld[i] = li >= 0 ? lhs.shape[li] : 1;
    rd[i] = ri >= 0 ? rhs.shape[ri] : 1;
    if (ld[i] != rd[i] && ld[i] != 1 && rd[i] != 1)
      return ctx.Error("batch dimensions of " + conv::Str(lhs.shape) + " and " + conv::Str(rhs.shape) + " do not broadcast");
    out_shape[i] = ld[i] == 1 ? rd[i] : ld[i];
  }
  out_shape[orank - 2] = s->M;
  out_shape[orank - 1] = s->N;
  if (!quantized) TFG_RETURN_IF_ERROR(conv::CheckOutputFloat(ctx));
  TFG_RETURN_IF_ERROR(ctx.SetOutputShape(0, out_shape));
  // Batch index maps (none needed when the output is empty).
  int64_t nout = conv::Prod(out_shape, 0, nbd);
  if (int64_t(s->M) * s->N == 0) nout = 0;
  TFG_RETURN_IF_ERROR(conv::CheckSize(ctx, nout, "number of batch matrices"));
  TFG_RETURN_IF_ERROR(conv::CheckSize(ctx, int64_t(s->M) * s->K, "lhs matrix"));
  TFG_RETURN_IF_ERROR(conv::CheckSize(ctx, int64_t(s->K) * s->N, "rhs matrix"));
  s->rhs_batches = conv::Prod(rhs.shape, 0, rr - 2);
  s->lhs_of.assign(nout, 0);
  s->rhs_of.assign(nout, 0);
  std::vector<int> idx(nbd, 0);
  for (int64_t ob = 0; ob < nout; ++ob) {
    int64_t l = 0, r = 0;
    for (int i = 0; i < nbd; ++i) {
      l = l * ld[i] + (ld[i] == 1 ? 0 : idx[i]);
      r = r * rd[i] + (rd[i] == 1 ? 0 : idx[i]);
    }
    s->lhs_of[ob] = l;
    s->rhs_of[ob] = r;
    for (int i = nbd - 1; i >= 0; --i) {
      if (++idx[i] < out_shape[i]) break;
      idx[i] = 0;
    }
  }
  s->quantized = quantized;
  if (quantized) return qconv::PrepareBatchMatMul(ctx, GeomOf(*s, p), &s->qstate);
  s->packed_floats = gemm::PackedFloats(s->K, s->N);
  conv::ScratchLayout sl;
  if (ctx.IsConstantOrPersistent(rhs)) {
    conv::PackKey key{rhs.data, nullptr, rhs.shape, (p.adj_y ? 1 : 0)};
    if (!s->packed_valid || !(s->key == key)) {
      float* dst = s->packed.Resize(s->packed_floats * s->rhs_batches);
      if (!dst) return ctx.Error("packed rhs cannot be allocated");
      PackRhs(p, *s, rhs.as<float>(), dst);
      s->key = key;
      s->packed_valid = true;
    }
  } else {
    s->packed_valid = false;
    s->scratch_pack_off = sl.Add(s->packed_floats * s->rhs_batches);
  }
  s->tr_floats = p.adj_x ? (size_t(s->M) * s->K + 15) / 16 * 16 : 0;
  s->scratch_tr_off = sl.Add(s->tr_floats * gemm::NumSlots(ctx.pool()));
  ctx.RequestScratch(sl.bytes());
  return OkStatus();
}

Status Eval(OpContext& ctx) {
  const BmmParams& p = ctx.node().P<BmmParams>();
  BmmState* s = ctx.node().U<BmmState>();
  if (s->quantized) return qconv::EvalBatchMatMul(ctx, GeomOf(*s, p), &s->qstate, false);
  const int64_t nout = int64_t(s->lhs_of.size());
  if (nout == 0 || s->M == 0 || s->N == 0) return OkStatus();
  float* scratch = static_cast<float*>(ctx.scratch());
  const float* packed = s->packed.data();
  if (!s->packed_valid) {
    float* dst = scratch + s->scratch_pack_off;
    PackRhs(p, *s, ctx.input(1).as<float>(), dst);
    packed = dst;
  }
  const float* lhs = ctx.input(0).as<float>();
  float* out = ctx.output(0).as<float>();
  const int M = s->M, N = s->N, K = s->K;
  const int64_t lmat = int64_t(M) * K, omat = int64_t(M) * N;
  auto one = [&](int64_t ob, int slot, ThreadPool* pool) {
    const float* a = lhs + s->lhs_of[ob] * lmat;
    if (p.adj_x) {  // lhs batch is [K, M]: transpose to [M, K]
      float* t = scratch + s->scratch_tr_off + slot * s->tr_floats;
      for (int m = 0; m < M; ++m)
        for (int k = 0; k < K; ++k) t[int64_t(m) * K + k] = a[int64_t(k) * M + m];
      a = t;
    }
    gemm::Gemm(M, N, K, a, K, packed + s->rhs_of[ob] * s->packed_floats, out + ob * omat, N,
               -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::infinity(), pool);
  };
  if (nout >= gemm::NumSlots(ctx.pool()) && nout > 1) {
    gemm::ParallelTasks(ctx.pool(), nout, [&](int64_t ob, int slot) { one(ob, slot, nullptr); });
  } else {
    for (int64_t ob = 0; ob < nout; ++ob) one(ob, 0, ctx.pool());
  }
  return OkStatus();
}

// Plain reference kernel.
Status EvalRef(OpContext& ctx) {
  const BmmParams& p = ctx.node().P<BmmParams>();
  BmmState* s = ctx.node().U<BmmState>();
  if (s->quantized) return qconv::EvalBatchMatMul(ctx, GeomOf(*s, p), &s->qstate, true);
  const float* lhs = ctx.input(0).as<float>();
  const float* rhs = ctx.input(1).as<float>();
  float* out = ctx.output(0).as<float>();
  const int M = s->M, N = s->N, K = s->K;
  for (size_t ob = 0; ob < s->lhs_of.size(); ++ob) {
    const float* a = lhs + s->lhs_of[ob] * int64_t(M) * K;
    const float* b = rhs + s->rhs_of[ob] * int64_t(K) * N;
    float* o = out + int64_t(ob) * M * N;
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) {
        float total = 0.f;
        for (int k = 0; k < K; ++k) {
          float av = p.adj_x ? a[int64_t(k) * M + m] : a[int64_t(m) * K + k];
          float bv = p.adj_y ? b[int64_t(n) * K + k] : b[int64_t(k) * N + n];
          total += av * bv;
        }
        o[int64_t(m) * N + n] = total;
      }
  }
  return OkStatus();
}

}  // namespace

const OpImpl kOp_BATCH_MATMUL = {Parse, Prepare, Eval, EvalRef, /*fold_constants*/ false};

conv::GpuConvOptions conv::BatchMatMulOptionsOf(const Node& n) { const BmmParams& p = n.P<BmmParams>(); conv::GpuConvOptions o; o.adj_x = p.adj_x; o.adj_y = p.adj_y; return o; }

}  // namespace tflite_gpu
