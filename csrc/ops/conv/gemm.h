// Blocked, packed single-precision GEMM for the CPU kernels (CONV_2D, FULLY_CONNECTED,
// BATCH_MATMUL, TRANSPOSE_CONV; usable by any op).
//
//   C[m, n] = clamp(sum_k A[m, k] * B[k, n] + bias[n], lo, hi)
//
// B (usually constant weights) is packed once with PackB into panels of Nr(N) columns: each
// panel holds its Nr bias values followed by K rows of Nr values (zero-padded past N). A is read
// in place (row stride lda) or produced block by block through a fill callback (im2col). C is
// written with row stride ldc. A register-blocked micro-kernel (MR x NR floats, FMA) computes
// each tile; the ISA (AVX-512 / AVX2+FMA / SSE2 / scalar) is chosen at run time.
// Work is split into (row block x panel group) tasks run on the pool.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>

namespace tflite_gpu {
class ThreadPool;
namespace gemm {

// Panel width used for a B with N columns (depends on the active ISA).
int Nr(int N);
// Floats written by PackB for a K x N matrix.
size_t PackedFloats(int K, int N);
// Packs B: element (k, n) is src[k * stride_k + n * stride_n]. bias: N floats or null (zeros).
// E.g. TFLite weights [N, K] (OHWI flattened): stride_k = 1, stride_n = K.
void PackB(int K, int N, const float* src, int64_t stride_k, int64_t stride_n, const float* bias,
           float* dst);

// C = clamp(A * B + bias). A: M x K, row stride lda. `packed` from PackB(K, N, ...).
void Gemm(int64_t M, int N, int K, const float* A, int64_t lda, const float* packed, float* C,
          int64_t ldc, float lo, float hi, ThreadPool* pool);

// Same, with A produced on demand: fill(m0, rows, dst) writes rows [m0, m0 + rows) of A into
// dst (row stride K). `scratch` holds FillScratchFloats(M, N, K, threads) floats, where
// threads is the pool's thread count (1 without a pool).
using FillFn = std::function<void(int64_t m0, int rows, float* dst)>;
size_t FillScratchFloats(int64_t M, int N, int K, int threads);
void GemmFill(int64_t M, int N, int K, const FillFn& fill, const float* packed, float* C, int64_t ldc,
              float lo, float hi, ThreadPool* pool, float* scratch);

// Runs fn(task, slot) for task in [0, ntasks) on the pool, tasks handed out dynamically;
// slot in [0, NumSlots(pool)) is unique among concurrently running calls (for per-thread scratch).
int NumSlots(ThreadPool* pool);
void ParallelTasks(ThreadPool* pool, int64_t ntasks, const std::function<void(int64_t task, int slot)>& fn);

// Name of the active micro-kernel ("avx512 8x32", ...), for logs and benchmarks.
const char* KernelName();

}  // namespace gemm
}  // namespace tflite_gpu
