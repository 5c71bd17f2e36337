#include "ops/conv/gemm.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "ops/simd.h"
#include "runtime/env.h"
#include "runtime/thread_pool.h"

namespace tflite_gpu {

namespace gemm {
namespace {

// One K segment of a micro-kernel call (see gemm_ukernel.inc).
struct Seg {
  const float* a;
  int64_t w_row;
  int kc;
};

// The fused output stage of one micro-kernel call (see gemm_ukernel.inc; Residual per panel).
struct Epi {
  const float* r;  // residual rows at the panel's first column, or null
  int64_t ldr;     // its row stride
  int rn;          // its columns in this panel (0..nc; the rest add zeros)
  float lo, hi;    // clamp after the add
  const float* alpha;  // the panel's PRELU slopes, or null
};

using UkFn = void (*)(int nc, int nseg, const Seg* segs, int64_t lda, const float* w, const float* bias, float* c,
                      int64_t ldc, float lo, float hi, int clamp, const Epi* e);
constexpr int kMaxMr = 14;

struct KernelSet {
  int mr = 0;
  int nr = 0;
  UkFn fns[kMaxMr + 1] = {};  // fns[r]: kernel for exactly r rows (1 <= r <= mr)
};

namespace k_scalar {
using V = simd::Scalar;
#include "ops/conv/gemm_ukernel.inc"
}  // namespace k_scalar

#if TFG_X86
namespace k_sse2 {
using V = simd::Sse2;
#include "ops/conv/gemm_ukernel.inc"
}  // namespace k_sse2
}  // namespace
}  // namespace gemm
}  // namespace tflite_gpu

TFG_TARGET_AVX2_BEGIN
namespace tflite_gpu {
namespace gemm {
namespace k_avx2 {
using V = simd::Avx2;
#include "ops/conv/gemm_ukernel.inc"
}  // namespace k_avx2
}  // namespace gemm
}  // namespace tflite_gpu
TFG_TARGET_END

TFG_TARGET_AVX512_BEGIN
namespace tflite_gpu {
namespace gemm {
namespace k_avx512 {
using V = simd::Avx512;
#include "ops/conv/gemm_ukernel.inc"
}  // namespace k_avx512
}  // namespace gemm
}  // namespace tflite_gpu
TFG_TARGET_END

namespace tflite_gpu {
namespace gemm {
namespace {
#endif  // TFG_X86

// A kernel set: UkernelEntry<r, NV> of namespace NS for r = 1..MR.
#define TFG_KE(NS, R, MR, NV) ((R) <= (MR) ? &NS::UkernelEntry<((R) <= (MR) ? (R) : 1), NV> : nullptr)
#define TFG_KSET(NS, MR, NV, W)                                                                        \
  [] {                                                                                                 \
    static_assert((MR) >= 1 && (MR) <= kMaxMr, "MR out of range");                                    \
    KernelSet k;                                                                                       \
    k.mr = MR;                                                                                         \
    k.nr = (NV) * (W);                                                                                 \
    const UkFn all[kMaxMr + 1] = {nullptr,                 TFG_KE(NS, 1, MR, NV),  TFG_KE(NS, 2, MR, NV),   \
                                  TFG_KE(NS, 3, MR, NV),   TFG_KE(NS, 4, MR, NV),  TFG_KE(NS, 5, MR, NV),   \
                                  TFG_KE(NS, 6, MR, NV),   TFG_KE(NS, 7, MR, NV),  TFG_KE(NS, 8, MR, NV),   \
                                  TFG_KE(NS, 9, MR, NV),   TFG_KE(NS, 10, MR, NV), TFG_KE(NS, 11, MR, NV),  \
                                  TFG_KE(NS, 12, MR, NV),  TFG_KE(NS, 13, MR, NV), TFG_KE(NS, 14, MR, NV)}; \
    for (int i = 0; i <= kMaxMr; ++i) k.fns[i] = all[i];                                               \
    return k;                                                                                          \
  }()

struct Kernels {
  KernelSet wide, narrow;  // narrow: for B with at most narrow.nr columns
  std::string name;
};

#ifndef TFG_AVX512_MR
#define TFG_AVX512_MR 8
#define TFG_AVX512_NV 2
#endif

const Kernels& Active() {
  static const Kernels k = [] {
    Kernels r;
    switch (simd::ActiveIsa()) {
#if TFG_X86
      case simd::Isa::kAvx512:
        r.wide = TFG_KSET(k_avx512, TFG_AVX512_MR, TFG_AVX512_NV, 16);
        r.narrow = TFG_KSET(k_avx512, 8, 1, 16);
        break;
      case simd::Isa::kAvx2:
        r.wide = TFG_KSET(k_avx2, 6, 2, 8);
        r.narrow = TFG_KSET(k_avx2, 6, 1, 8);
        break;
      case simd::Isa::kSse2:
        r.wide = TFG_KSET(k_sse2, 4, 2, 4);
        r.narrow = TFG_KSET(k_sse2, 4, 1, 4);
        break;
#endif
      default:
        r.wide = TFG_KSET(k_scalar, 4, 4, 1);
        r.narrow = TFG_KSET(k_scalar, 4, 2, 1);
        break;
    }
    r.name = std::string(simd::IsaName(simd::ActiveIsa())) + " " + std::to_string(r.wide.mr) + "x" +
             std::to_string(r.wide.nr);
    return r;
  }();
  return k;
}

const KernelSet& SetFor(int N) {
  const Kernels& k = Active();
  return N <= k.narrow.nr ? k.narrow : k.wide;
}

// TFLITE_GPU_CPU_SPLIT=dynamic: the previous split (tasks in any order; small-K GEMMs split over
// output channels too), kept for comparisons. Read once per process.
bool AffineSplit() {
  static const bool affine = env::CpuSplit() != "dynamic";
  return affine;
}

// Cache blocking.
constexpr int64_t kABlockBytes = 160 * 1024;      // rows of A kept hot (L2) while panels stream by
constexpr int64_t kMOuterMaxBBytes = 128 * 1024;  // B this small stays hot: loop M tiles outside
constexpr int64_t kTaskMacs = 1 << 21;            // target work per parallel task
constexpr int64_t kMinParallelMacs = 1 << 18;     // below this an op runs on the calling thread

struct Plan {
  const KernelSet* ks;
  int N, K;
  int mr, nr;
  int panels;
  int64_t units;     // M rows (GEMM) or output rows (convolution)
  int64_t mb;        // units per M block
  int nb;            // panels per N block
  int64_t m_blocks;
  int n_blocks;
  bool m_outer;      // loop order inside a block (see RunTiles)
};

// unit_bytes: bytes of A one unit reads (one row: K floats; one output row of a convolution:
// out_w * K floats).
// align: units per micro-kernel tile (M rows of a GEMM: mr; convolution rows: 1).
Plan MakePlan(int64_t units, int64_t unit_bytes, int N, int K, int threads, int64_t align) {
  Plan p;
  p.ks = &SetFor(N);
  p.N = N;
  p.K = K;
  p.mr = p.ks->mr;
  p.nr = p.ks->nr;
  p.units = units;
  p.panels = (N + p.nr - 1) / p.nr;
  int64_t mb = std::max<int64_t>(1, std::min<int64_t>(units, kABlockBytes / std::max<int64_t>(1, unit_bytes)));
  if (mb < units && mb > p.mr) mb = mb / p.mr * p.mr;
  int64_t m_blocks = (units + mb - 1) / mb;
  int n_blocks = 1;
  const int64_t macs = units * (unit_bytes / 4) * N;
  if (macs < kMinParallelMacs) threads = 1;  // waking a worker costs more than it saves
  if (threads > 1) {
    // Enough tasks for the threads to balance, and small ones (~kTaskMacs each): a thread that
    // the OS preempts in the middle of a task delays the whole op by what is left of it. A
    // multiple of the threads, so that the affine shares (ParallelTasksAffine) are equal.
    int64_t want = std::max<int64_t>(int64_t(threads) * 3, std::min<int64_t>(256, macs / kTaskMacs));
    if (AffineSplit()) want = (want + threads - 1) / threads * threads;
    const bool b_small = int64_t(p.panels) * p.nr * (K + 1) * 4 <= kMOuterMaxBBytes;
    if (AffineSplit() && m_blocks < want && b_small && units >= want * align) {
      // B stays in cache whatever the row blocks: split the rows only, so that each thread
      // writes whole output rows (all channels of its pixels), which the next op reads.
      mb = (units + want - 1) / want;
      mb = (mb + align - 1) / align * align;
      m_blocks = (units + mb - 1) / mb;
    } else if (m_blocks < want) {
      n_blocks = int(std::min<int64_t>(p.panels, (want + m_blocks - 1) / m_blocks));
      if (m_blocks * n_blocks < want) {
        const int64_t mblocks_want = (want + n_blocks - 1) / n_blocks;
        mb = std::max<int64_t>(1, (units + mblocks_want - 1) / mblocks_want);
        m_blocks = (units + mb - 1) / mb;
      }
    }
  }
  p.mb = mb;
  p.m_blocks = std::max<int64_t>(1, m_blocks);
  p.nb = (p.panels + n_blocks - 1) / std::max(1, n_blocks);
  p.n_blocks = p.nb > 0 ? (p.panels + p.nb - 1) / p.nb : 1;
  p.m_outer = int64_t(p.nb) * p.nr * (K + 1) * 4 <= kMOuterMaxBBytes;
  return p;
}

bool NeedsClamp(float lo, float hi) {
  return lo > -std::numeric_limits<float>::infinity() || hi < std::numeric_limits<float>::infinity();
}

int PoolThreads(ThreadPool* pool) { return pool ? std::max(1, pool->num_threads()) : 1; }

// A tile: `rows` rows of C starting at c (row stride ldc), A given as segments with row stride lda;
// r: the same rows of the residual (Residual), or null.
struct Tile {
  int rows;
  int64_t lda;
  float* c;
  int nseg;
  const Seg* segs;
  const float* r = nullptr;
};

// Runs tiles x panels [p0, p1) in the plan's loop order.
void RunTiles(const Plan& p, const Tile* tiles, size_t ntiles, int p0, int p1, const float* packed, int64_t ldc,
              float lo, float hi, bool clamp, const Residual* res) {
  const int nr = p.nr;
  // The fused stage of (tile, panel): the residual's columns in the panel (rc of them in all).
  const int rc = res ? (res->rc > 0 ? res->rc : p.N) : 0;
  auto epi = [&](Epi* e, const Tile& tl, int pi, int nc) -> const Epi* {
    if (!res) return nullptr;
    e->rn = std::max(0, std::min(nc, rc - pi * nr));
    // A panel past a channel-padded residual's columns reads none of it (its base row stands in).
    e->r = tl.r ? (e->rn > 0 ? tl.r + int64_t(pi) * nr : tl.r) : nullptr;
    e->ldr = res->ldr > 0 ? res->ldr : ldc;
    e->lo = res->lo;
    e->hi = res->hi;
    e->alpha = res->alpha ? res->alpha + int64_t(pi) * nr : nullptr;
    return e;
  };
  Epi ep;
  const int64_t panel_floats = int64_t(nr) * (p.K + 1);
  if (p.m_outer) {
    for (size_t t = 0; t < ntiles; ++t) {
      const Tile& tl = tiles[t];
      for (int pi = p0; pi < p1; ++pi) {
        const float* panel = packed + pi * panel_floats;
        const int nc = std::min(nr, p.N - pi * nr);
        p.ks->fns[tl.rows](nc, tl.nseg, tl.segs, tl.lda, panel + nr, panel, tl.c + int64_t(pi) * nr, ldc, lo, hi,
                           clamp, epi(&ep, tl, pi, nc));
      }
    }
  } else {
    for (int pi = p0; pi < p1; ++pi) {
      const float* panel = packed + pi * panel_floats;
      const int nc = std::min(nr, p.N - pi * nr);
      for (size_t t = 0; t < ntiles; ++t) {
        const Tile& tl = tiles[t];
        p.ks->fns[tl.rows](nc, tl.nseg, tl.segs, tl.lda, panel + nr, panel, tl.c + int64_t(pi) * nr, ldc, lo, hi,
                           clamp, epi(&ep, tl, pi, nc));
      }
    }
  }
}

}  // namespace

int NumSlots(ThreadPool* pool) { return PoolThreads(pool); }

void ParallelTasks(ThreadPool* pool, int64_t ntasks, FnRef<void(int64_t, int)> fn) {
  if (ntasks <= 0) return;
  int slots = int(std::min<int64_t>(NumSlots(pool), ntasks));
  if (slots <= 1) {
    for (int64_t t = 0; t < ntasks; ++t) fn(t, 0);
    return;
  }
  std::atomic<int64_t> next{0};
  ParallelFor(
      pool, slots,
      [&](int64_t s0, int64_t s1) {
        for (int64_t s = s0; s < s1; ++s) {
          for (;;) {
            int64_t t = next.fetch_add(1, std::memory_order_relaxed);
            if (t >= ntasks) break;
            fn(t, int(s));
          }
        }
      },
      1);
}

namespace {

// Tasks [front, back) of one share, claimed from the front by its owner and from the back by
// the others: both ends in one word so that one compare-and-swap claims a task.
struct alignas(64) Share {
  std::atomic<uint64_t> ends{0};
  static uint64_t Pack(uint32_t front, uint32_t back) { return uint64_t(back) << 32 | front; }
  void Set(int64_t front, int64_t back) { ends.store(Pack(uint32_t(front), uint32_t(back)), std::memory_order_relaxed); }
  int64_t ClaimFront() {
    uint64_t v = ends.load(std::memory_order_relaxed);
    for (;;) {
      const uint32_t f = uint32_t(v), b = uint32_t(v >> 32);
      if (f >= b) return -1;
      if (ends.compare_exchange_weak(v, Pack(f + 1, b), std::memory_order_relaxed)) return f;
    }
  }
  int64_t ClaimBack() {
    uint64_t v = ends.load(std::memory_order_relaxed);
    for (;;) {
      const uint32_t f = uint32_t(v), b = uint32_t(v >> 32);
      if (f >= b) return -1;
      if (ends.compare_exchange_weak(v, Pack(f, b - 1), std::memory_order_relaxed)) return b - 1;
    }
  }
};

}  // namespace

void ParallelTasksAffine(ThreadPool* pool, int64_t ntasks, FnRef<void(int64_t, int)> fn) {
  if (ntasks <= 0) return;
  const int slots = int(std::min<int64_t>(NumSlots(pool), ntasks));
  if (slots <= 1 || ntasks > int64_t(std::numeric_limits<uint32_t>::max()) || !AffineSplit()) {
    ParallelTasks(pool, ntasks, fn);
    return;
  }
  constexpr int kInline = 8;  // no heap allocation per op for up to 8 threads
  Share inline_shares[kInline];
  std::unique_ptr<Share[]> heap_shares(slots > kInline ? new Share[size_t(slots)] : nullptr);
  Share* shares = slots > kInline ? heap_shares.get() : inline_shares;
  for (int i = 0; i < slots; ++i) shares[i].Set(ntasks * i / slots, ntasks * (i + 1) / slots);
  const std::thread::id caller = std::this_thread::get_id();
  ParallelFor(
      pool, slots,
      [&](int64_t s0, int64_t s1) {
        // Home share: the caller's is 0, a worker's follows its index in the pool (1..threads-1),
        // the same in every op, so each thread keeps reading the rows it wrote.
        int home = 0;
        if (std::this_thread::get_id() != caller) home = 1 + (std::max(1, ThreadPool::CurrentThreadIndex()) - 1) % (slots - 1);
        for (int64_t s = s0; s < s1; ++s) {
          for (int64_t t; (t = shares[home].ClaimFront()) >= 0;) fn(t, int(s));
          for (int i = 1; i < slots; ++i) {
            Share& other = shares[(home + i) % slots];
            for (int64_t t; (t = other.ClaimBack()) >= 0;) fn(t, int(s));
          }
        }
      },
      1);
}

void ParallelRanges(ThreadPool* pool, int64_t n, int64_t tasks, RangeFn fn,
                    bool affine) {
  if (n <= 0) return;
  const int slots = NumSlots(pool);
  tasks = std::max<int64_t>(1, std::min(tasks, n));
  if (slots <= 1) {
    fn(0, n);
    return;
  }
  // A multiple of the threads where n allows, sizes differing by at most one with the larger
  // ranges first: the threads, taking ranges in order, finish together (14 rows in 4 tasks:
  // 4 4 3 3, 7 rows a thread, where ceil-sized ranges 4 4 4 2 left one thread 8).
  if (tasks > 1) tasks = std::min(n, (tasks + slots - 1) / slots * slots);
  const int64_t q = n / tasks, r = n % tasks;
  auto run = [&](int64_t t, int) {
    const int64_t b = t * q + std::min(t, r);
    fn(b, b + q + (t < r ? 1 : 0));
  };
  if (affine)
    ParallelTasksAffine(pool, tasks, run);
  else
    ParallelTasks(pool, tasks, run);
}

const char* KernelName() { return Active().name.c_str(); }

int Nr(int N) { return SetFor(N).nr; }

size_t PackedFloats(int K, int N) {
  const int nr = Nr(N);
  const size_t panels = (size_t(std::max(N, 0)) + nr - 1) / nr;
  return panels * nr * (size_t(std::max(K, 0)) + 1);
}

void PackB(int K, int N, const float* src, int64_t stride_k, int64_t stride_n, const float* bias, float* dst) {
  const int nr = Nr(N);
  const int panels = (N + nr - 1) / nr;
  for (int p = 0; p < panels; ++p) {
    float* d = dst + int64_t(p) * nr * (K + 1);
    const int n0 = p * nr;
    const int nc = std::min(nr, N - n0);
    for (int j = 0; j < nr; ++j) d[j] = (j < nc && bias) ? bias[n0 + j] : 0.f;
    d += nr;
    for (int k = 0; k < K; ++k) {
      const float* s = src + int64_t(k) * stride_k + int64_t(n0) * stride_n;
      float* dk = d + int64_t(k) * nr;
      int j = 0;
      if (stride_n == 1) {
        std::memcpy(dk, s, sizeof(float) * nc);
        j = nc;
      } else {
        for (; j < nc; ++j) dk[j] = s[j * stride_n];
      }
      for (; j < nr; ++j) dk[j] = 0.f;
    }
  }
}

void Gemm(int64_t M, int N, int K, const float* A, int64_t lda, const float* packed, float* C, int64_t ldc,
          float lo, float hi, ThreadPool* pool, const Residual* res) {
  if (M <= 0 || N <= 0) return;
  const Plan p = MakePlan(M, int64_t(std::max(K, 1)) * 4, N, K, PoolThreads(pool), SetFor(N).mr);
  const bool clamp = NeedsClamp(lo, hi);
  ParallelTasksAffine(pool, p.m_blocks * p.n_blocks, [&](int64_t t, int) {
    const int64_t mbi = t / p.n_blocks;
    const int nbi = int(t % p.n_blocks);
    const int64_t m0 = mbi * p.mb;
    const int64_t rows = std::min(p.mb, M - m0);
    const int p0 = nbi * p.nb, p1 = std::min(p.panels, p0 + p.nb);
    const int64_t ntiles = (rows + p.mr - 1) / p.mr;
    std::vector<Seg> segs(ntiles);
    std::vector<Tile> tiles(ntiles);
    for (int64_t i = 0; i < ntiles; ++i) {
      const int64_t m = m0 + i * p.mr;
      segs[i] = Seg{A + m * lda, 0, K};
      tiles[i] = Tile{int(std::min<int64_t>(p.mr, M - m)), lda, C + m * ldc, 1, &segs[i], res && res->r ? res->r + m * (res->ldr > 0 ? res->ldr : ldc) : nullptr};
    }
    RunTiles(p, tiles.data(), tiles.size(), p0, p1, packed, ldc, lo, hi, clamp, res);
  });
}

void Conv(const ConvShape& s, const float* input, int N, const float* packed, float* out, int64_t ldc, float lo,
          float hi, ThreadPool* pool, const Residual* res) {
  const int64_t out_rows = int64_t(s.batch) * s.out_h;
  if (out_rows <= 0 || s.out_w <= 0 || N <= 0) return;
  const int K = s.k_h * s.k_w * s.fc;
  const Plan p = MakePlan(out_rows, int64_t(s.out_w) * std::max(K, 1) * 4, N, K, PoolThreads(pool), 1);
  const bool clamp = NeedsClamp(lo, hi);
  const int C = s.in_c;
  // Output columns whose taps all lie inside the input row.
  int x_lo = s.pad_l <= 0 ? 0 : (s.pad_l + s.sw - 1) / s.sw;
  const int num = s.in_w - 1 - (s.k_w - 1) * s.dw + s.pad_l;
  int x_hi = num < 0 ? 0 : num / s.sw + 1;
  x_lo = std::min(x_lo, s.out_w);
  x_hi = std::max(x_lo, std::min(x_hi, s.out_w));
  // One segment per filter row when a row of taps is contiguous in memory, else one per tap.
  const bool row_runs = s.dw == 1 && s.fc == C;
  ParallelTasksAffine(pool, p.m_blocks * p.n_blocks, [&](int64_t t, int) {
    const int64_t mbi = t / p.n_blocks;
    const int nbi = int(t % p.n_blocks);
    const int64_t r0 = mbi * p.mb, r1 = std::min(out_rows, r0 + p.mb);
    const int p0 = nbi * p.nb, p1 = std::min(p.panels, p0 + p.nb);
    std::vector<Seg> segs;
    std::vector<Tile> tiles;
    std::vector<size_t> first_seg;
    segs.reserve(size_t(r1 - r0) * ((s.out_w + p.mr - 1) / p.mr + 4) * s.k_h * (row_runs ? 1 : s.k_w));
    for (int64_t row = r0; row < r1; ++row) {
      const int64_t b = row / s.out_h;
      const int oy = int(row % s.out_h);
      const float* in_b = input + b * s.in_h * s.in_w * int64_t(C) + s.c_off;
      float* out_row = out + row * s.out_w * ldc;
      const int64_t ldr = res && res->ldr > 0 ? res->ldr : ldc;
      const float* res_row = res && res->r ? res->r + row * s.out_w * ldr : nullptr;
      auto res_at = [&](int ox) { return res_row ? res_row + int64_t(ox) * ldr : nullptr; };
      auto add_pixel = [&](int ox) {  // a border pixel: only the taps inside the input
        first_seg.push_back(segs.size());
        for (int ky = 0; ky < s.k_h; ++ky) {
          const int iy = oy * s.sh - s.pad_t + ky * s.dh;
          if (iy < 0 || iy >= s.in_h) continue;
          if (row_runs) {  // the taps inside the input row are contiguous: one segment (same order)
            const int ix0 = ox * s.sw - s.pad_l;
            const int kx0 = std::max(0, -ix0), kx1 = std::min(s.k_w, s.in_w - ix0);
            if (kx0 < kx1)
              segs.push_back(Seg{in_b + (int64_t(iy) * s.in_w + ix0 + kx0) * C, int64_t(ky * s.k_w + kx0) * s.fc,
                                 (kx1 - kx0) * s.fc});
            continue;
          }
          for (int kx = 0; kx < s.k_w; ++kx) {
            const int ix = ox * s.sw - s.pad_l + kx * s.dw;
            if (ix < 0 || ix >= s.in_w) continue;
            segs.push_back(Seg{in_b + (int64_t(iy) * s.in_w + ix) * C, int64_t(ky * s.k_w + kx) * s.fc, s.fc});
          }
        }
        tiles.push_back(Tile{1, 0, out_row + int64_t(ox) * ldc, 0, nullptr, res_at(ox)});
      };
      for (int ox = 0; ox < x_lo; ++ox) add_pixel(ox);
      for (int ox = x_lo; ox < x_hi; ox += p.mr) {
        const int rows = std::min(p.mr, x_hi - ox);
        first_seg.push_back(segs.size());
        const int ix0 = ox * s.sw - s.pad_l;
        for (int ky = 0; ky < s.k_h; ++ky) {
          const int iy = oy * s.sh - s.pad_t + ky * s.dh;
          if (iy < 0 || iy >= s.in_h) continue;
          const float* rp = in_b + int64_t(iy) * s.in_w * C;
          if (row_runs) {
            segs.push_back(Seg{rp + int64_t(ix0) * C, int64_t(ky) * s.k_w * s.fc, s.k_w * s.fc});
          } else {
            for (int kx = 0; kx < s.k_w; ++kx)
              segs.push_back(Seg{rp + int64_t(ix0 + kx * s.dw) * C, int64_t(ky * s.k_w + kx) * s.fc, s.fc});
          }
        }
        tiles.push_back(Tile{rows, int64_t(s.sw) * C, out_row + int64_t(ox) * ldc, 0, nullptr, res_at(ox)});
      }
      for (int ox = x_hi; ox < s.out_w; ++ox) add_pixel(ox);
    }
    first_seg.push_back(segs.size());
    for (size_t i = 0; i < tiles.size(); ++i) {
      tiles[i].segs = segs.data() + first_seg[i];
      tiles[i].nseg = int(first_seg[i + 1] - first_seg[i]);
    }
    RunTiles(p, tiles.data(), tiles.size(), p0, p1, packed, ldc, lo, hi, clamp, res);
  });
}

}  // namespace gemm
}  // namespace tflite_gpu
