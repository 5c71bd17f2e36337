// Integer GEMM for the conv family's 8-bit quantized kernels (CONV_2D, FULLY_CONNECTED,
// TRANSPOSE_CONV, BATCH_MATMUL, and the int8 core of the hybrid kernels).
//
//   acc[m, n] = sum_k (A[m, k] + a_offset) * (B[n, k] + b_offset)      (int32, wrapping like TFLite)
//
// Both operands are widened to int16 with their offsets applied (|value| <= 255), so every product
// pair fits int32 and the sums are exact int32 arithmetic: the same integers TFLite's int32
// accumulators hold, whatever the order. B (weights, [N, K] row-major as TFLite stores them) is
// packed once into panels of 16 columns holding K-pairs interleaved; A rows are produced per block
// by a caller functor (im2col of a conv window, an FC input row, ...) into int16 with the offset
// applied and padding taps as 0. The micro-kernel (AVX2: _mm256_madd_epi16, 4 rows x 16 columns;
// scalar otherwise, chosen at run time as the float GEMM's ISA) hands each finished tile to a
// caller writer (requantization, or the float rescale of the hybrid kernels).
#pragma once
#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "ops/conv/gemm.h"
#include "ops/quant_common.h"

namespace tflite_gpu {
namespace qgemm {

constexpr int kNr = 16;  // columns per packed panel
constexpr int kMr = 4;   // rows per micro tile

struct PackedB {
  std::vector<int16_t> data;  // panels x (Kp / 2) x 32
  int N = 0, K = 0, Kp = 0;   // Kp = K rounded up to even
  int panels() const { return (N + kNr - 1) / kNr; }
  const int16_t* panel(int p) const { return data.data() + size_t(p) * (Kp / 2) * 32; }
};

// Packs B[n, k] = src[n * stride_n + k * stride_k] + offset.
template <typename T>
void PackB(int N, int K, const T* src, int64_t stride_n, int64_t stride_k, int32_t offset, PackedB* out) {
  out->N = N;
  out->K = K;
  out->Kp = (K + 1) / 2 * 2;
  const int panels = (N + kNr - 1) / kNr;
  out->data.assign(size_t(panels) * (out->Kp / 2) * 32, 0);
  for (int p = 0; p < panels; ++p) {
    int16_t* d = out->data.data() + size_t(p) * (out->Kp / 2) * 32;
    for (int kk = 0; kk < out->Kp / 2; ++kk)
      for (int c = 0; c < kNr; ++c) {
        const int n = p * kNr + c;
        if (n >= N) continue;
        for (int j = 0; j < 2; ++j) {
          const int k = 2 * kk + j;
          if (k >= K) continue;
          // cols 0..7 in the first 16 int16, 8..15 in the second, each as (k, k+1) pairs
          d[kk * 32 + (c / 8) * 16 + (c % 8) * 2 + j] = int16_t(int32_t(src[n * stride_n + k * stride_k]) + offset);
        }
      }
  }
}

// 8 lanes of the HalfUp requantization: out = clamp(HalfUp(acc + bias, mult, shift) + zp, lo, hi).
// Returns false (nothing done) when the CPU has no AVX2.
bool RequantHalfUp8(const int32_t* acc, const int32_t* bias, const int32_t* mult, const int32_t* shift, int32_t zp,
                    int32_t lo, int32_t hi, int32_t* out);
// The same over n values (n a multiple of 8), narrowed to the output type in the vector registers
// ([lo, hi] lies inside the type's range): returns n, or 0 (nothing done) without AVX2.
int RequantHalfUpRow(const int32_t* acc, const int32_t* bias, const int32_t* mult, const int32_t* shift, int32_t zp,
                     int32_t lo, int32_t hi, int n, int8_t* out);
int RequantHalfUpRow(const int32_t* acc, const int32_t* bias, const int32_t* mult, const int32_t* shift, int32_t zp,
                     int32_t lo, int32_t hi, int n, uint8_t* out);
int RequantHalfUpRow(const int32_t* acc, const int32_t* bias, const int32_t* mult, const int32_t* shift, int32_t zp,
                     int32_t lo, int32_t hi, int n, int16_t* out);
bool HaveAvx2();

// C[r, 0..15] = sum over the K-pairs of A row r (rows <= kMr, row stride lda int16) times the panel.
void MicroKernel(const int16_t* A, int64_t lda, int rows, const int16_t* panel, int kpairs, int32_t* C);

// The HalfUp output stage of an 8-bit op (int32 bias, every channel HalfUp) for Run to apply in the
// micro-kernel's registers: out[m * ldc + n] = clamp(HalfUp(acc + bias[n], mult[n], shift[n]) + zp).
struct Fused8 {
  const int32_t* bias;
  const int32_t* mult;
  const int32_t* shift;
  int32_t zp, lo, hi;  // [lo, hi] inside the output type
  bool u8;             // uint8 output, else int8
  uint8_t* out;
  int64_t ldc;
};
// rows (<= kMr) of A times a full 16-column panel with that output stage, written at out (row
// stride ldc). Returns false (nothing done) without AVX2.
bool MicroKernelFused8(const int16_t* A, int64_t lda, int rows, const int16_t* panel, int kpairs, const Fused8& f,
                       int n0, uint8_t* out);

// Drives the GEMM: M rows in blocks; fill(m0, rows, dst) writes rows m0..m0+rows-1 of A, each Kp
// int16 (offset applied, zero past K) at dst + r * Kp; write(m, n0, ncols, acc) gets ncols int32
// sums of row m, columns n0... Blocks run in parallel on the pool. With `fused` (AVX2), full
// 16-column panels take its output stage in registers instead of write.
template <typename Fill, typename Write>
void Run(int64_t M, const PackedB& B, const Fill& fill, const Write& write, ThreadPool* pool,
         const Fused8* fused = nullptr) {
  if (M <= 0 || B.N <= 0) return;
  const int Kp = B.Kp;
  // ~64 KiB of A per block, at least kMr rows.
  int64_t mb = std::max<int64_t>(kMr, (int64_t(32768) / std::max(1, Kp)) / kMr * kMr);
  mb = std::min<int64_t>(mb, 256);
  const int slots = gemm::NumSlots(pool);
  if (slots > 1) mb = std::max<int64_t>(kMr, std::min<int64_t>(mb, ((M + 2 * slots - 1) / (2 * slots) + kMr - 1) / kMr * kMr));
  const int64_t blocks = (M + mb - 1) / mb;
  gemm::ParallelTasks(pool, blocks, [&](int64_t blk, int) {
    thread_local std::vector<int16_t> abuf;
    const int64_t m0 = blk * mb;
    const int rows = int(std::min<int64_t>(mb, M - m0));
    const size_t need = size_t(rows + kMr) * Kp;
    if (abuf.size() < need) abuf.resize(need);
    fill(m0, rows, abuf.data());
    int32_t tile[kMr * kNr];
    for (int p = 0; p < B.panels(); ++p) {
      const int n0 = p * kNr;
      const int ncols = std::min(kNr, B.N - n0);
      for (int r0 = 0; r0 < rows; r0 += kMr) {
        const int rr = std::min(kMr, rows - r0);
        if (fused && ncols == kNr &&
            MicroKernelFused8(abuf.data() + size_t(r0) * Kp, Kp, rr, B.panel(p), Kp / 2, *fused, n0,
                              fused->out + (m0 + r0) * fused->ldc + n0))
          continue;
        MicroKernel(abuf.data() + size_t(r0) * Kp, Kp, rr, B.panel(p), Kp / 2, tile);
        for (int r = 0; r < rr; ++r) write(m0 + r0 + r, n0, ncols, tile + r * kNr);
      }
    }
  });
}

// im2col of npx consecutive conv windows wholly inside the input (dilation 1 along x) for Run:
// window p's kh rows of row_len contiguous values at src + p * px_step + ky * row_step go, widened
// with the offset applied, to dst + p * Kp + ky * row_len; the rest of each dst row up to Kp is
// zeroed. AVX2 where the CPU has it (reads never pass a source row's end).
void Im2colRun16(const int8_t* src, int64_t px_step, int npx, int64_t row_step, int kh, int row_len, int32_t offset,
                 int16_t* dst, int Kp);
void Im2colRun16(const uint8_t* src, int64_t px_step, int npx, int64_t row_step, int kh, int row_len, int32_t offset,
                 int16_t* dst, int Kp);

// Fills one A row from `src` (K values) with the offset applied, zero-padded to Kp.
template <typename T>
inline void WidenRow(const T* src, int K, int Kp, int32_t offset, int16_t* dst) {
  for (int k = 0; k < K; ++k) dst[k] = int16_t(int32_t(src[k]) + offset);
  for (int k = K; k < Kp; ++k) dst[k] = 0;
}

// ---------------------------------------------------------------- AVX-512 VNNI path
//
// int8 x int8 with a zero weight offset (TFLite's int8 CONV_2D / FULLY_CONNECTED / the hybrid
// kernels): vpdpbusd multiplies unsigned by signed bytes, so A is stored as x + 128 (x ^ 0x80) and
//   sum_k (x + a_off) * w = sum_k (x + 128) * w + (a_off - 128) * colsum(w)
// exactly modulo 2^32 (TFLite's int32 accumulators wrap the same way). The column sums are taken
// once at packing; (a_off - 128) * colsum folds into the bias of the fused output stage (or is added
// per row for per-row offsets). B panels: 32 columns (the last one 16 when N % 32 is 1..16), laid
// out [K/4][columns][4 bytes], zero past K. A: rows of Kq * 4 bytes (any value past K).

constexpr int kMr8 = 8;    // rows per VNNI micro tile
constexpr int kNr8 = 32;   // columns per VNNI panel

bool HaveVnni();
// A process-wide unique, nonzero number per packing (PackB8 / PackDw8 stamp their gen with it).
uint64_t NewPackGeneration();
// AMX-INT8 tiles (simd::HaveAmxInt8): the fused GEMM runs 32 x 32 blocks of tdpbusd on the same
// packed panels (a panel's K/4 rows of 4 bytes per column are the B tiles' rows) when Kq is a
// multiple of 16 (PackB8 with KqAlign()) and there are at least kAmxMinRows rows.
bool HaveAmx();
int KqAlign();  // 16 with AMX (K padded to 64-byte tile rows), else 1
constexpr int kMrAmx = 32;       // rows per AMX block
constexpr int kAmxMinRows = 16;  // fewer rows: the VNNI kernel

struct PackedB8 {
  std::vector<int8_t> data;
  std::vector<int32_t> colsum;  // per column, padded to Np
  std::vector<int64_t> offset;  // byte offset of each panel
  std::vector<int> width;       // 16 or 32
  int N = 0, K = 0, Kq = 0, Np = 0;
  uint64_t gen = 0;             // NewPackGeneration() of the last packing (Requant8::built_for)
  int panels() const { return int(width.size()); }
};
// Packs B[n, k] = src[n * K + k] (int8, weight offset 0); Kq rounded up to a multiple of kq_align.
void PackB8(int N, int K, const int8_t* src, PackedB8* out, int kq_align = 1);

// Per-column vectors of the fused HalfUp requantization (padded to Np): the bias with the offset
// correction folded in, multiplier, left shift, right shift, max(right - 1, 0), right > 0.
struct Requant8 {
  std::vector<int32_t> bias, mult, left, right, r1, rbit;
  // The bias for int8 A read as it is (Amx8FusedS8: tdpbssd): the offset correction a_off * colsum
  // instead of (a_off - 128) * colsum. Built by BuildRequant8 only.
  std::vector<int32_t> bias_s8;
  // The rounding as one 64-bit add and shift (qgemm.cc Requant16): per 16 channels, 8 int64 for the
  // even channels then 8 for the odd ones: 2^30 + [right > 0] 2^(30 + right), and 31 + right.
  std::vector<int64_t> k64, s64;
  int32_t zp = 0, lo = 0, hi = 0;
  bool any_left = false;  // some lane has a left shift (Finish64)
  // The packing (PackedB8 / DwPacked8 gen) these vectors were built for; 0: none. Ops reset it in
  // prepare (new output stage) and rebuild when it differs from their packing's.
  uint64_t built_for = 0;
  // n lanes, all zero (lanes no channel maps to stay so).
  void Reset(int n) {
    for (auto* v : {&bias, &mult, &left, &right, &r1, &rbit}) v->assign(size_t(n), 0);
  }
  // Lane i: the channel's int32 bias (offset correction folded in), multiplier and TFLite shift.
  void SetLane(int i, int32_t b, int32_t m, int shift) {
    bias[i] = b;
    mult[i] = m;
    left[i] = shift > 0 ? shift : 0;
    right[i] = shift > 0 ? 0 : -shift;
    r1[i] = std::max(right[i] - 1, 0);
    rbit[i] = right[i] > 0 ? 1 : 0;
  }
  // zero point and clamp from `zp_`, `lo_`, `hi_`, then the 64-bit rounding vectors.
  void Finish(int32_t zp_, int32_t lo_, int32_t hi_) {
    zp = zp_;
    lo = lo_;
    hi = hi_;
    Finish64();
  }
  void Finish64() {
    const size_t n = right.size();
    any_left = false;
    for (int32_t l : left) any_left = any_left || l != 0;
    k64.assign(n, 0);
    s64.assign(n, 31);
    for (size_t i = 0; i < n; ++i) {
      const size_t g = i / 16 * 16, j = i % 16, at = g + (j % 2) * 8 + j / 2;
      const int r = right[i];
      if (r >= 32) {  // |rounded product| < 2^31: the result is 0; keep the sum positive and below 2^63
        k64[at] = int64_t(1) << 62;
        s64[at] = 63;
        continue;
      }
      k64[at] = (int64_t(1) << 30) + (r > 0 ? (int64_t(1) << (30 + r)) : 0);
      s64[at] = 31 + r;
    }
  }
};

// A block: rows m0.. of A at `a` (row stride lda bytes), `rows` <= any; runs every panel in
// [p0, p1). Fused: writes clamp(HalfUp(acc + bias) + zp) as int8 (or uint8 when u8) at
// out + m * ldc + n. Raw: acc + corr[r] * colsum[n] into tile (rows x 32 int32 per kMr8 rows) and
// calls back per tile. Both return false without VNNI.
void Vnni8Fused(const uint8_t* a, int64_t lda, int rows, const PackedB8& B, int p0, int p1, const Requant8& rq,
                void* out, int64_t ldc, bool u8);
// The same on AMX tiles (HaveAmx(), B.Kq % 16 == 0): A must be readable for rows rounded up to
// kMrAmx (rows past `rows` are computed and dropped).
void Amx8Fused(const uint8_t* a, int64_t lda, int rows, const PackedB8& B, int p0, int p1, const Requant8& rq,
               void* out, int64_t ldc, bool u8);
// AMX with A read in place: int8 rows at `a` (row stride lda bytes, any lda >= K) times the panels
// by tdpbssd (signed x signed, so no x ^ 0x80 copy), the output stage with rq.bias_s8. A tile reads
// 64-byte chunks up to Kq * 4 bytes into each row (the bytes past K meet zero weights); a 32-row
// block whose reads would pass `avail` bytes from `a` (the end of the tensor) is copied first.
void Amx8FusedS8(const int8_t* a, int64_t lda, int rows, int64_t avail, const PackedB8& B, int p0, int p1,
                 const Requant8& rq, void* out, int64_t ldc);
// Raw tile: rows (<= kMr8) x panel p; C gets rows x 32 int32 (row stride 32), corrected by corr[r]*colsum.
void Vnni8Tile(const uint8_t* a, int64_t lda, int rows, const PackedB8& B, int p, const int32_t* corr, int32_t* C);

// Copies n int8 values as x ^ 0x80 (uint8 x + 128) and pads to np with 0x80.
void XorRow(const int8_t* src, int n, int np, uint8_t* dst);
// im2col of npx consecutive conv windows lying wholly inside the input (dilation 1 along x):
// window p's kh rows of row_bytes contiguous int8 each, at src + p * px_step + ky * row_step, go as
// x ^ 0x80 to dst + p * lda + ky * row_bytes. Bytes past kh * row_bytes in each dst row are left
// undefined (they meet zero weights), and up to 64 bytes past the last window's data may be
// written: dst must have that slack (Run8's A block has it).
void Im2colRun8(const int8_t* src, int64_t px_step, int npx, int64_t row_step, int kh, int row_bytes, uint8_t* dst,
                int64_t lda);

// How many row blocks / panel groups to split an M x N x K VNNI GEMM into.
struct Split8 {
  int64_t mb;   // rows per block (multiple of mr)
  int pg;       // panels per group
};
Split8 PlanSplit8(int64_t M, const PackedB8& B, int slots, int mr = kMr8);

// Drives the VNNI GEMM: fill(m0, rows, dst) writes rows m0..m0+rows-1 of A (Kq*4 bytes each, row
// stride Kq*4). Fused output (rq, out, ldc) when rq is not null; else write(m, n0, ncols, acc) per
// row with the true sums, corr(m) = a_off(m) - 128.
template <typename Fill, typename Corr, typename Write>
void Run8(int64_t M, const PackedB8& B, const Fill& fill, const Requant8* rq, void* out, int64_t ldc, bool u8,
          const Corr& corr, const Write& write, ThreadPool* pool) {
  if (M <= 0 || B.N <= 0) return;
  const int lda = B.Kq * 4;
  const bool amx = rq && M >= kAmxMinRows && B.Kq % 16 == 0 && HaveAmx();
  const Split8 sp = PlanSplit8(M, B, pool ? gemm::NumSlots(pool) : 1, amx ? kMrAmx : kMr8);
  const int64_t mblocks = (M + sp.mb - 1) / sp.mb;
  const int ngroups = (B.panels() + sp.pg - 1) / sp.pg;
  auto task = [&](int64_t t, int) {
    thread_local std::vector<uint8_t> abuf;
    const int64_t mbi = t / ngroups;
    const int g = int(t % ngroups);
    const int64_t m0 = mbi * sp.mb;
    const int rows = int(std::min<int64_t>(sp.mb, M - m0));
    const size_t need = size_t(amx ? (rows + kMrAmx - 1) / kMrAmx * kMrAmx : rows) * lda + 64;
    if (abuf.size() < need) abuf.resize(need);
    fill(m0, rows, abuf.data());
    const int p0 = g * sp.pg, p1 = std::min(B.panels(), p0 + sp.pg);
    if (amx) {
      Amx8Fused(abuf.data(), lda, rows, B, p0, p1, *rq, static_cast<char*>(out) + m0 * ldc, ldc, u8);
      return;
    }
    if (rq) {
      Vnni8Fused(abuf.data(), lda, rows, B, p0, p1, *rq, static_cast<char*>(out) + m0 * ldc, ldc, u8);
      return;
    }
    int32_t tile[kMr8 * kNr8];
    int32_t cr[kMr8];
    for (int p = p0; p < p1; ++p) {
      const int n0 = p * kNr8;
      const int ncols = std::min(B.width[p], B.N - n0);
      for (int r0 = 0; r0 < rows; r0 += kMr8) {
        const int rr = std::min(kMr8, rows - r0);
        for (int r = 0; r < rr; ++r) cr[r] = corr(m0 + r0 + r);
        Vnni8Tile(abuf.data() + size_t(r0) * lda, lda, rr, B, p, cr, tile);
        for (int r = 0; r < rr; ++r) write(m0 + r0 + r, n0, ncols, tile + r * kNr8);
      }
    }
  };
  const int64_t ntasks = mblocks * ngroups;
  if (ntasks == 1 || !pool) {
    for (int64_t t = 0; t < ntasks; ++t) task(t, 0);
    return;
  }
  gemm::ParallelTasks(pool, ntasks, task);
}

// Whether RunAmxDirect applies to an M-row GEMM on B (HaveAmx, Kq a multiple of 16, M >= kAmxMinRows).
inline bool UseAmxDirect(int64_t M, const PackedB8& B) { return M >= kAmxMinRows && B.Kq % 16 == 0 && HaveAmx(); }

// The fused GEMM on AMX over int8 A rows read in place (a pointwise conv's input, an FC's rows):
// M rows at `a`, row stride lda; out row stride ldc. rq built by BuildRequant8 for the op's a_off.
inline void RunAmxDirect(int64_t M, const int8_t* a, int64_t lda, const PackedB8& B, const Requant8& rq, int8_t* out,
                         int64_t ldc, ThreadPool* pool) {
  if (M <= 0 || B.N <= 0) return;
  const Split8 sp = PlanSplit8(M, B, pool ? gemm::NumSlots(pool) : 1, kMrAmx);
  const int64_t mblocks = (M + sp.mb - 1) / sp.mb;
  const int ngroups = (B.panels() + sp.pg - 1) / sp.pg;
  auto task = [&](int64_t t, int) {
    const int64_t m0 = (t / ngroups) * sp.mb;
    const int g = int(t % ngroups);
    const int rows = int(std::min<int64_t>(sp.mb, M - m0));
    const int p0 = g * sp.pg, p1 = std::min(B.panels(), p0 + sp.pg);
    Amx8FusedS8(a + m0 * lda, lda, rows, (M - m0) * lda, B, p0, p1, rq, out + m0 * ldc, ldc);
  };
  const int64_t ntasks = mblocks * ngroups;
  if (ntasks == 1 || !pool) {
    for (int64_t t = 0; t < ntasks; ++t) task(t, 0);
    return;
  }
  gemm::ParallelTasks(pool, ntasks, task);
}

// ---------------------------------------------------------------- output stage

enum class Rounding : uint8_t {
  kHalfUp,     // quant::MultiplyByQuantizedMultiplierHalfUp (ruy's x86 kernels, NEON bodies)
  kDouble,     // quant::MultiplyByQuantizedMultiplier (gemmlowp, reference kernels)
  kReduced64,  // quant::MultiplyByQuantizedMultiplier64 (int64 accumulators, reference kernels)
  kAway64,     // quant::MultiplyByQuantizedMultiplierAway64 (int16 FULLY_CONNECTED with int64 bias)
};

inline int32_t Rescale(Rounding r, int64_t acc, int32_t m, int s) {
  switch (r) {
    case Rounding::kHalfUp: return quant::MultiplyByQuantizedMultiplierHalfUp(int32_t(acc), m, s);
    case Rounding::kDouble: return quant::MultiplyByQuantizedMultiplier(int32_t(acc), m, s);
    case Rounding::kReduced64: return quant::MultiplyByQuantizedMultiplier64(acc, m, s);
    case Rounding::kAway64: return quant::MultiplyByQuantizedMultiplierAway64(acc, m, s);
  }
  return 0;
}

// Requantization of one op's output: per output channel multiplier/shift, zero point, clamp.
struct OutputStage {
  std::vector<int32_t> mult;
  std::vector<int> shift;
  std::vector<int64_t> bias;  // per channel (zeros when absent)
  std::vector<int32_t> bias32, shift32;  // the same as int32 (8-bit kernels' vector path)
  int32_t zp = 0, lo = 0, hi = 0;
  Rounding rounding = Rounding::kHalfUp;
  // Channels from body_end on use tail_rounding (a vector body with a scalar tail, as TFLite's
  // int8 depthwise output stage: 8-channel NEON chunks, then scalar).
  int body_end = 1 << 30;
  Rounding tail_rounding = Rounding::kDouble;
  template <typename T>
  inline T Apply(int64_t acc, int c) const {
    const int32_t v = Rescale(c < body_end ? rounding : tail_rounding, acc, mult[c], shift[c]);
    const int32_t z = int32_t(uint32_t(v) + uint32_t(zp));
    return T(quant::Clamp32(z, lo, hi));
  }
  // A run of n channels from c0 (8-bit accumulators): the rounding switch hoisted out of the loop.
  template <typename T>
  void Row(const int32_t* acc, int c0, int n, T* out) const {
    const int body = std::max(0, std::min(n, body_end - c0));
    int done = 0;
    if (rounding == Rounding::kHalfUp && body >= 8 && int(bias32.size()) >= c0 + n)
      done = RequantHalfUpRow(acc, bias32.data() + c0, mult.data() + c0, shift32.data() + c0, zp, lo, hi, body / 8 * 8,
                              out);
    acc += done;
    out += done;
    c0 += done;
    n -= done;
    const int rest = body - done;
    switch (rounding) {
      case Rounding::kHalfUp: RowWith<T, Rounding::kHalfUp>(acc, c0, rest, out); break;
      case Rounding::kDouble: RowWith<T, Rounding::kDouble>(acc, c0, rest, out); break;
      default: for (int j = 0; j < rest; ++j) out[j] = Apply32<T>(acc[j], c0 + j); break;
    }
    for (int j = rest; j < n; ++j) out[j] = Apply32<T>(acc[j], c0 + j);
  }
  template <typename T, Rounding R>
  void RowWith(const int32_t* __restrict acc, int c0, int n, T* __restrict out) const {
    const int32_t* m = mult.data() + c0;
    const int* sh = shift.data() + c0;
    const int64_t* b = bias.data() + c0;
    for (int j = 0; j < n; ++j) {
      const int32_t a = int32_t(uint32_t(acc[j]) + uint32_t(int32_t(b[j])));
      const int32_t v = Rescale(R, a, m[j], sh[j]);
      out[j] = T(quant::Clamp32(int32_t(uint32_t(v) + uint32_t(zp)), lo, hi));
    }
  }
  // One value with an explicit rounding (scalar tails of TFLite's vectorised output stages).
  template <typename T>
  inline T ApplyWith(Rounding r, int32_t acc, int c) const {
    const int32_t a = int32_t(uint32_t(acc) + uint32_t(int32_t(bias[c])));
    const int32_t v = Rescale(r, a, mult[c], shift[c]);
    return T(quant::Clamp32(int32_t(uint32_t(v) + uint32_t(zp)), lo, hi));
  }
  // 8-bit kernels: int32 accumulator + int32 bias, wrapping as TFLite's.
  template <typename T>
  inline T Apply32(int32_t acc, int c) const {
    return Apply<T>(int32_t(uint32_t(acc) + uint32_t(int32_t(bias[c]))), c);
  }
};

// The fused VNNI output stage of `os` (HalfUp, int32 bias) for activations offset by a_off.
inline void BuildRequant8(const OutputStage& os, const PackedB8& B, int32_t a_off, Requant8* rq) {
  rq->Reset(B.Np);
  rq->bias_s8.assign(size_t(B.Np), 0);
  const uint32_t corr = uint32_t(a_off - 128);
  for (int n = 0; n < B.N; ++n) {
    rq->SetLane(n, int32_t(uint32_t(os.bias32[n]) + corr * uint32_t(B.colsum[n])), os.mult[n], os.shift[n]);
    rq->bias_s8[n] = int32_t(uint32_t(os.bias32[n]) + uint32_t(a_off) * uint32_t(B.colsum[n]));
  }
  rq->Finish(os.zp, os.lo, os.hi);
}

// ---------------------------------------------------------------- VNNI depthwise (multiplier 1)
//
// int8 input and weights (offset 0), HalfUp output stage on every channel (C % 8 == 0). Per output
// pixel and 64-channel block, the taps (all k_h * k_w of them; taps outside the input point at a
// row of the input zero point, which contributes 0 after the offset, as TFLite's padding does;
// the list is padded to a multiple of 4 with zero weights) are taken 4 at a time: their bytes
// (x ^ 0x80) are interleaved by two levels of unpacks into 4 zmm holding (x_t0, x_t1, x_t2, x_t3)
// per channel, and vpdpbusd adds the 4 products per int32 lane. The lanes hold the channels in the
// unpacks' order (accumulator k, lane j: channel 16 * (j / 4) + 4 * k + j % 4); the weights and the
// output stage vectors are packed in that order, and two levels of packs (packssdw, packsswb)
// restore the natural order while narrowing. Sum: (x + 128) * w + (a_off - 128) * sum_t w, exact
// modulo 2^32 as TFLite's int32 accumulators.
struct DwPacked8 {
  std::vector<int8_t> w;       // [cblocks][groups][4][64]
  std::vector<int32_t> wsum;   // per channel, natural order
  int C = 0, cblocks = 0, groups = 0, taps = 0;
  uint64_t gen = 0;            // NewPackGeneration() of the last packing
};
void PackDw8(const int8_t* f, int taps, int C, DwPacked8* out);
// Output stage vectors in the kernel's channel order (cblocks * 64 entries).
void BuildRequantDw8(const OutputStage& os, const DwPacked8& W, int32_t a_off, Requant8* rq);
// npx (<= 8) consecutive output pixels: ptrs[p * groups * 4 + t] is the int8 address of tap t's
// channel 0 for pixel p; out: the first pixel's output, pixels C bytes apart.
void DwVnni8(const int8_t* const* ptrs, int npx, const DwPacked8& W, const Requant8& rq, int8_t* out);

// How the multiplier of (input scale, weight scale, output scale) is formed, as each TFLite kernel
// does it (the result can differ in the last bit of the fixed-point multiplier).
enum class ScaleProduct : uint8_t {
  kDouble,       // double(si) * double(sw) / double(so)   (PopulateConvolutionQuantizationParams)
  kFloatThenDouble,  // double(si * sw) / double(so)      (GetQuantizedConvolutionMultipler)
  kFloat,        // double(si * sw / so)                   (BATCH_MATMUL)
};
inline double EffectiveScale(ScaleProduct p, float si, float sw, float so) {
  switch (p) {
    case ScaleProduct::kDouble: return double(si) * double(sw) / double(so);
    case ScaleProduct::kFloatThenDouble: return double(si * sw) / double(so);
    case ScaleProduct::kFloat: return double(si * sw / so);
  }
  return 0;
}

// Fills mult/shift for `channels` output channels (weight scales per channel or one per tensor).
inline void SetMultipliers(OutputStage* os, ScaleProduct p, float si, const quant::TensorQuant& w, float so,
                           int channels) {
  os->mult.resize(channels);
  os->shift.resize(channels);
  for (int c = 0; c < channels; ++c)
    quant::QuantizeMultiplier(EffectiveScale(p, si, w.Scale(c), so), &os->mult[c], &os->shift[c]);
}

}  // namespace qgemm
}  // namespace tflite_gpu
