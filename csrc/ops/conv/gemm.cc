#include "ops/conv/gemm.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include "ops/conv/simd.h"
#include "runtime/thread_pool.h"

namespace tflite_gpu {

namespace simd {

const char* IsaName(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return "scalar";
    case Isa::kSse2: return "sse2";
    case Isa::kAvx2: return "avx2";
    case Isa::kAvx512: return "avx512";
  }
  return "?";
}

static Isa DetectIsa() {
  Isa best = Isa::kScalar;
#if TFG_X86
  best = Isa::kSse2;
#if defined(__GNUC__) || defined(__clang__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) best = Isa::kAvx2;
  if (best == Isa::kAvx2 && __builtin_cpu_supports("avx512f")) best = Isa::kAvx512;
#endif
#endif
  if (const char* env = std::getenv("TFLITE_GPU_CPU_ISA")) {
    std::string s(env);
    Isa want = best;
    if (s == "scalar") want = Isa::kScalar;
    else if (s == "sse2") want = Isa::kSse2;
    else if (s == "avx2") want = Isa::kAvx2;
    else if (s == "avx512") want = Isa::kAvx512;
    if (int(want) < int(best)) best = want;  // can only lower what the CPU has
  }
  return best;
}

Isa ActiveIsa() {
  static const Isa isa = DetectIsa();
  return isa;
}

}  // namespace simd

namespace gemm {
namespace {

using UkFn = void (*)(int nc, int kc, const float* a, int64_t lda, const float* w, const float* bias,
                      float* c, int64_t ldc, float lo, float hi, int clamp);
constexpr int kMaxMr = 8;

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

#define TFG_KSET(NS, MR, NV, W)                                                                   \
  [] {                                                                                            \
    KernelSet k;                                                                                  \
    k.mr = MR;                                                                                    \
    k.nr = (NV) * (W);                                                                            \
    UkFn all[kMaxMr + 1] = {nullptr,                    &NS::UkernelEntry<1, NV>,                  \
                            (MR) >= 2 ? &NS::UkernelEntry<2, NV> : nullptr,                       \
                            (MR) >= 3 ? &NS::UkernelEntry<3, NV> : nullptr,                       \
                            (MR) >= 4 ? &NS::UkernelEntry<4, NV> : nullptr,                       \
                            (MR) >= 5 ? &NS::UkernelEntry<5, NV> : nullptr,                       \
                            (MR) >= 6 ? &NS::UkernelEntry<6, NV> : nullptr,                       \
                            (MR) >= 7 ? &NS::UkernelEntry<7, NV> : nullptr,                       \
                            (MR) >= 8 ? &NS::UkernelEntry<8, NV> : nullptr};                      \
    for (int i = 0; i <= kMaxMr; ++i) k.fns[i] = all[i];                                          \
    return k;                                                                                     \
  }()

struct Kernels {
  KernelSet wide, narrow;  // narrow: for B with few columns
  std::string name;
};

const Kernels& Active() {
  static const Kernels k = [] {
    Kernels r;
    switch (simd::ActiveIsa()) {
#if TFG_X86
      case simd::Isa::kAvx512:
        r.wide = TFG_KSET(k_avx512, 8, 2, 16);
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

// Cache blocking.
constexpr int64_t kABlockBytes = 160 * 1024;  // rows of A kept hot (L2) while panels stream by
constexpr int kMaxKc = 1 << 30;                // K blocking (off)
int64_t kMOuterMaxBBytes = [] {
  const char* e = std::getenv("TFG_MOUTER");
  return e ? atoll(e) : int64_t(128 * 1024);
}();

struct Plan {
  const KernelSet* ks;
  int64_t M;
  int N, K;
  int mr, nr;
  int64_t tiles_m;
  int panels;
  int64_t mb;  // rows per M block (multiple of mr)
  int nb;      // panels per N block
  int64_t m_blocks;
  int n_blocks;
  int kc;
  bool m_outer;  // loop order inside a block (see RunBlock)
};

Plan MakePlan(int64_t M, int N, int K, int threads) {
  Plan p;
  p.ks = &SetFor(N);
  p.M = M;
  p.N = N;
  p.K = K;
  p.mr = p.ks->mr;
  p.nr = p.ks->nr;
  p.tiles_m = (M + p.mr - 1) / p.mr;
  p.panels = (N + p.nr - 1) / p.nr;
  p.kc = std::max(1, std::min(K, kMaxKc));
  int64_t row_bytes = int64_t(std::max(1, p.kc)) * 4 * p.mr;
  int64_t mb_tiles = std::max<int64_t>(1, std::min<int64_t>(p.tiles_m, kABlockBytes / row_bytes));
  int64_t m_blocks = (p.tiles_m + mb_tiles - 1) / mb_tiles;
  int n_blocks = 1;
  if (threads > 1) {
    int64_t want = int64_t(threads) * 3;
    if (m_blocks < want) {
      n_blocks = int(std::min<int64_t>(p.panels, (want + m_blocks - 1) / m_blocks));
      if (m_blocks * n_blocks < want) {
        int64_t mblocks_want = (want + n_blocks - 1) / n_blocks;
        mb_tiles = std::max<int64_t>(1, (p.tiles_m + mblocks_want - 1) / mblocks_want);
        m_blocks = (p.tiles_m + mb_tiles - 1) / mb_tiles;
      }
    }
  }
  p.mb = mb_tiles * p.mr;
  p.m_blocks = std::max<int64_t>(1, m_blocks);
  p.nb = (p.panels + n_blocks - 1) / std::max(1, n_blocks);
  p.n_blocks = p.nb > 0 ? (p.panels + p.nb - 1) / p.nb : 1;
  const int64_t b_block_bytes = int64_t(p.nb) * p.nr * (p.kc + 1) * 4;
  p.m_outer = b_block_bytes <= kMOuterMaxBBytes;
  return p;
}

// Rows [0, rows) of A (row stride lda) times panels [p0, p1) into C rows (row stride ldc).
void RunBlock(const Plan& p, const float* A, int64_t lda, int64_t rows, int p0, int p1, const float* packed,
              float* C, int64_t ldc, float lo, float hi, bool clamp) {
  const int mr = p.mr, nr = p.nr, K = p.K;
  const int64_t panel_floats = int64_t(nr) * (K + 1);
  const int nkb = K == 0 ? 1 : (K + p.kc - 1) / p.kc;
  for (int kb = 0; kb < nkb; ++kb) {
    const int k0 = kb * p.kc;
    const int kc = std::min(p.kc, K - k0);
    const bool last = kb == nkb - 1;
    if (p.m_outer) {
      // B of the block is small (stays in L1/L2): walk M tiles outside, so each tile of A stays
      // in L1 while all panels pass and C rows are written contiguously.
      for (int64_t m = 0; m < rows; m += mr) {
        const int r = int(std::min<int64_t>(mr, rows - m));
        for (int pi = p0; pi < p1; ++pi) {
          const float* panel = packed + pi * panel_floats;
          const int nc = std::min(nr, p.N - pi * nr);
          p.ks->fns[r](nc, kc, A + m * lda + k0, lda, panel + nr + int64_t(k0) * nr, kb == 0 ? panel : nullptr,
                       C + int64_t(pi) * nr + m * ldc, ldc, lo, hi, last && clamp);
        }
      }
      continue;
    }
    for (int pi = p0; pi < p1; ++pi) {
      const float* panel = packed + pi * panel_floats;
      const int nc = std::min(nr, p.N - pi * nr);
      const float* w = panel + nr + int64_t(k0) * nr;
      const float* bias = kb == 0 ? panel : nullptr;
      float* cp = C + int64_t(pi) * nr;
      for (int64_t m = 0; m < rows; m += mr) {
        const int r = int(std::min<int64_t>(mr, rows - m));
        p.ks->fns[r](nc, kc, A + m * lda + k0, lda, w, bias, cp + m * ldc, ldc, lo, hi, last && clamp);
      }
    }
  }
}

bool NeedsClamp(float lo, float hi) {
  return lo > -std::numeric_limits<float>::infinity() || hi < std::numeric_limits<float>::infinity();
}

int PoolThreads(ThreadPool* pool) { return pool ? std::max(1, pool->num_threads()) : 1; }

size_t SlotFloats(const Plan& p) { return size_t((p.mb * int64_t(std::max(p.K, 1)) + 15) / 16 * 16); }

}  // namespace

int NumSlots(ThreadPool* pool) { return PoolThreads(pool); }

void ParallelTasks(ThreadPool* pool, int64_t ntasks, const std::function<void(int64_t, int)>& fn) {
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
          float lo, float hi, ThreadPool* pool) {
  if (M <= 0 || N <= 0) return;
  const Plan p = MakePlan(M, N, K, PoolThreads(pool));
  const bool clamp = NeedsClamp(lo, hi);
  ParallelTasks(pool, p.m_blocks * p.n_blocks, [&](int64_t t, int) {
    const int64_t mbi = t / p.n_blocks;
    const int nbi = int(t % p.n_blocks);
    const int64_t m0 = mbi * p.mb;
    const int64_t rows = std::min(p.mb, M - m0);
    const int p0 = nbi * p.nb, p1 = std::min(p.panels, p0 + p.nb);
    RunBlock(p, A + m0 * lda, lda, rows, p0, p1, packed, C + m0 * ldc, ldc, lo, hi, clamp);
  });
}

size_t FillScratchFloats(int64_t M, int N, int K, int threads) {
  if (M <= 0 || N <= 0) return 0;
  const Plan p = MakePlan(M, N, K, std::max(1, threads));
  return SlotFloats(p) * size_t(std::max(1, threads));
}

void GemmFill(int64_t M, int N, int K, const FillFn& fill, const float* packed, float* C, int64_t ldc, float lo,
              float hi, ThreadPool* pool, float* scratch) {
  if (M <= 0 || N <= 0) return;
  const Plan p = MakePlan(M, N, K, PoolThreads(pool));
  const bool clamp = NeedsClamp(lo, hi);
  const size_t slot_floats = SlotFloats(p);
  ParallelTasks(pool, p.m_blocks * p.n_blocks, [&](int64_t t, int slot) {
    const int64_t mbi = t / p.n_blocks;
    const int nbi = int(t % p.n_blocks);
    const int64_t m0 = mbi * p.mb;
    const int64_t rows = std::min(p.mb, M - m0);
    const int p0 = nbi * p.nb, p1 = std::min(p.panels, p0 + p.nb);
    float* buf = scratch + slot * slot_floats;
    fill(m0, int(rows), buf);
    RunBlock(p, buf, K, rows, p0, p1, packed, C + m0 * ldc, ldc, lo, hi, clamp);
  });
}

}  // namespace gemm
}  // namespace tflite_gpu
