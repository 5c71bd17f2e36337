// Blocked, packed single-precision GEMM for the CPU kernels (CONV_2D, FULLY_CONNECTED,
// BATCH_MATMUL, TRANSPOSE_CONV; usable by any op).
//
//   C[m, n] = clamp(sum_k A[m, k] * B[k, n] + bias[n], lo, hi)
//
// B (usually constant weights) is packed once with PackB into panels of Nr(N) columns: each
// panel holds its Nr bias values followed by K rows of Nr values (zero-padded past N). A is read
// in place (row stride lda); C is written with row stride ldc. A register-blocked micro-kernel
// computes each MR x NR tile with FMAs (AVX-512 8x32, AVX2+FMA 6x16, SSE2 4x8, scalar 4x4;
// half-width panels when N is small), the ISA chosen once at run time (simd.h). Convolutions
// use the same kernel as an implicit GEMM (Conv below). Work is split into (row block x panel
// group) tasks of ~2M multiply-adds, handed out dynamically on the pool; inside a block the loop
// order keeps either the A rows (large B) or all of B (small B) hot in cache.
#pragma once
#include <cstddef>
#include <cstdint>

#include "runtime/thread_pool.h"

namespace tflite_gpu {
namespace gemm {

// Panel width used for a B with N columns (depends on the active ISA).
int Nr(int N);
// Floats written by PackB for a K x N matrix.
size_t PackedFloats(int K, int N);
// Packs B: element (k, n) is src[k * stride_k + n * stride_n]. bias: N floats or null (zeros).
// E.g. TFLite weights [N, K] (OHWI flattened): stride_k = 1, stride_n = K.
void PackB(int K, int N, const float* src, int64_t stride_k, int64_t stride_n, const float* bias,
           float* dst);

// Output stage of a convolution with the ops after it fused (Subgraph::FuseCpuNodes), applied
// while the micro-kernel's tile is still in registers: v = clamp(A * B + bias, lo, hi); with r,
// v = clamp(v + R, res.lo, res.hi), R[m, n] = r[m * ldc + n] (C's layout; a residual ADD); with
// alpha, v = v >= 0 ? v : v * alpha[n] (PRELU per column). A residual with fewer columns than C
// (a channel PAD's input: rc > 0 columns, row stride ldr) adds zeros past them.
struct Residual {
  const float* r;
  float lo, hi;
  const float* alpha = nullptr;
  int64_t ldr = 0;  // the residual's row stride (0: ldc)
  int rc = 0;       // its columns (0: N)
};

// C = clamp(A * B + bias). A: M x K, row stride lda. `packed` from PackB(K, N, ...).
void Gemm(int64_t M, int N, int K, const float* A, int64_t lda, const float* packed, float* C,
          int64_t ldc, float lo, float hi, ThreadPool* pool, const Residual* res = nullptr);

// Convolution as an implicit GEMM (no im2col): out[pixel, n] = clamp(sum over the taps inside
// the input of in[tap pixel, c_off + c] * B[(ky*k_w + kx)*fc + c, n] + bias[n]). NHWC input with
// in_c channels, of which the fc channels from c_off are read (one group); output pixels have row
// stride ldc. `packed` from PackB(k_h*k_w*fc, N, ...) of the OHWI filter (rows (ky, kx, c)).
// Tiles of consecutive output pixels of one row read the input in place (row stride
// stride_w * in_c); padding taps are skipped.
struct ConvShape {
  int batch, in_h, in_w, in_c;
  int c_off, fc;
  int out_h, out_w;
  int k_h, k_w, sh, sw, dh, dw, pad_t, pad_l;
};
void Conv(const ConvShape& s, const float* input, int N, const float* packed, float* out, int64_t ldc, float lo,
          float hi, ThreadPool* pool, const Residual* res = nullptr);

// Runs fn(task, slot) for task in [0, ntasks) on the pool, tasks handed out dynamically;
// slot in [0, NumSlots(pool)) is unique among concurrently running calls (for per-thread scratch).
int NumSlots(ThreadPool* pool);
void ParallelTasks(ThreadPool* pool, int64_t ntasks, FnRef<void(int64_t task, int slot)> fn);

// As ParallelTasks, but thread i of the op first runs the i-th contiguous share of [0, ntasks) in
// order (the calling thread the first share, each pool worker always the same one of the others,
// by a rank it keeps for its life; with more than two threads two workers may draw the same one)
// and then takes what is left of the other shares from their ends. Consecutive ops that split their output rows
// the same way then find the rows the previous op wrote on the same core, in its L2.
void ParallelTasksAffine(ThreadPool* pool, int64_t ntasks, FnRef<void(int64_t task, int slot)> fn);

// Splits [0, n) into about `tasks` contiguous ranges run by ParallelTasks (ParallelTasksAffine
// when `affine`): fn(begin, end).
void ParallelRanges(ThreadPool* pool, int64_t n, int64_t tasks, RangeFn fn,
                    bool affine = false);

// Name of the active micro-kernel ("avx512 8x32", ...), for logs and benchmarks.
const char* KernelName();

}  // namespace gemm
}  // namespace tflite_gpu
