// The TFLITE_GPU_* environment variables: every one the library reads is read here, through a
// typed accessor, at the moment the caller asks (nothing is cached here). README.md lists them
// (section "Environment variables"); add a variable here and there together.
//
// Readers are plain getenv: a variable set to the empty string counts as unset.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace tflite_gpu {
namespace env {

// Any variable's value, "" when unset (the accessors below use it; so do the OpenCL loader's
// reads of the ICD loader's own variables, OCL_ICD_VENDORS and the like).
std::string Get(const char* name);

// TFLITE_GPU_DEVICE: the OpenCL device the GPU delegate picks when its options name none: an
// index, a device-name substring, or "gpu"/"cpu" (default: the first GPU, else the first device).
std::string Device();

// TFLITE_GPU_OP_FILTER: comma-separated op names the GPU delegate leaves on the CPU, added to the
// options' op_filter (default: none).
std::string OpFilter();

// TFLITE_GPU_CACHE_DIR: folder of the on-disk compiled OpenCL program cache (default: no disk
// cache; the in-memory cache is always on).
std::string CacheDir();

// TFLITE_GPU_OPENCL_LIBRARY: the OpenCL ICD loader to load first (a path or soname); "none" skips
// loaders and uses vendor drivers directly (default: search pyopencl's bundled loader, then the
// system libOpenCL.so.1).
std::string OpenClLibrary();

// TFLITE_GPU_OPENCL_VENDORS: extra vendor OpenCL drivers (colon-separated paths or sonames) tried
// besides the registered ICDs; "none" turns the search for unregistered drivers off (default:
// libnvidia-opencl.so.1, libamdocl64.so, libigdrcl.so).
std::string OpenClVendors();

// TFLITE_GPU_SITE_PACKAGES: colon-separated Python site-packages folders searched for pyopencl's
// bundled loader and PoCL (the Python package sets it; C++ hosts may).
std::string SitePackages();

// TFLITE_GPU_CPU_ISA: caps the instruction set of the CPU kernels: scalar, sse2, avx2 or avx512
// (default: the best the CPU has; a value above it, or unknown, changes nothing).
std::string CpuIsa();

// TFLITE_GPU_CPU_SPLIT: how the float CONV_2D / DEPTHWISE_CONV_2D / GEMM kernels split work
// among threads: "affine" (each thread first runs its own contiguous share of the output rows, the
// same share in every op, then helps with the rest) or "dynamic" (tasks handed out in any order,
// small-K GEMMs also split over output channels; for comparisons). Default: affine.
std::string CpuSplit();

// TFLITE_GPU_CPU_FUSION: "0" turns off the CPU graph fusions (Subgraph::FuseCpuNodes: a float
// CONV_2D computing the residual ADD and / or per-channel PRELU that alone read its output, in its
// output stage). Read at every allocate_tensors (for A/B measurements; default on).
bool CpuFusion();

// TFLITE_GPU_MAX_LOOP_TENSOR_BYTES: largest tensor (bytes) a WHILE loop may grow, a positive
// integer; 0 when unset or not a positive integer (then the interpreter's default applies).
size_t MaxLoopTensorBytes();

// TFLITE_GPU_MAX_WHILE_ITERATIONS: most iterations of one WHILE node per invoke, for hosts that
// run untrusted models; 0 (also when unset or not an integer): unbounded, as TFLite.
uint64_t MaxWhileIterations();

// TFLITE_GPU_FP16_ALL_HALF: any value but "0" stores every GPU tensor as half in the fp16 modes,
// turning off the mixed-storage plan that keeps tensors expected past fp16's range in float
// (gpu/precision_plan.h; tests and measurements; default off).
bool Fp16AllHalf();

// TFLITE_GPU_DEBUG_SENTINELS: any value but "0" pads every GPU buffer with a sentinel pattern
// checked after each run (tests; default off).
bool DebugSentinels();

// TFLITE_GPU_DEBUG_BREAK_KERNEL: an op name whose GPU kernels are made to fail to compile, as a
// broken driver would (fault-injection tests; default none).
std::string DebugBreakKernel();

// TFLITE_GPU_DISABLE_FUSION: comma-separated kernel-count levers of the GPU delegate to turn off
// (for measuring each one): "dwpw" (DEPTHWISE_CONV_2D computed inside the following 1x1
// CONV_2D), "tail" (a global AVERAGE_POOL_2D / MEAN computed inside the 1x1 CONV_2D /
// FULLY_CONNECTED classifier after it), "elementwise" (elementwise ops linked into their producer's kernel), "view" (zero PAD
// / RESHAPE read in place), "place" (CONCATENATION written in place by its producers), "boundary"
// (float32 partition inputs read and outputs written by the model's kernels in the host's BHWC
// layout, with no conversion kernels), "all".
// "tail" is opt-in: off unless TFLITE_GPU_ENABLE_FUSION names it (or "all") and
// TFLITE_GPU_DISABLE_FUSION does not. Measured on an NVIDIA H100 (gpu_compare, batch 1, fp32): with
// dwpw and tail on, MobileNet v1 0.716 ms (18 kernels) vs 0.410 ms (32 kernels) with both off -- the
// fused kernels' recomputation and lower parallelism cost more than the launches they save. dwpw
// defaults on since its pairs stage the depthwise values per work group (split-K kernel) and are
// limited to those whose values are computed at most twice (TFLITE_GPU_FUSION_DWPW_MAX_TIMES). The
// others default on.
bool FusionDisabled(const char* lever);

// TFLITE_GPU_FUSION_DWPW_MAX_MACS: most extra multiply-adds (depthwise values recomputed by the
// 1x1 conv's work items) one DEPTHWISE_CONV_2D + CONV_2D fusion may cost; larger pairs keep two
// kernels. A non-negative integer; unset or malformed: `dflt`.
int64_t FusionDwPwMaxMacs(int64_t dflt);

// TFLITE_GPU_FUSION_DWPW_MAX_TIMES: most times the 1x1 conv's kernel may compute each depthwise
// value (its work groups along the output channels) in a DEPTHWISE_CONV_2D + CONV_2D fusion; 0
// fuses none. A non-negative integer; unset or malformed: `dflt` (0 where partitions launch as
// CUDA graphs, see partition_model.cc; else 2: measured on an NVIDIA H100 with OpenCL launches,
// batch 1 fp32, interleaved in one process, vs no dwpw fusion: MobileNet v1 1.02x (noise), v2 0.93x,
// the six real-shaped zoo models 0.84-0.98x, geomean 0.94x; 4 gave 0.93x but hand_landmark 1.09x;
// 16 (the earlier limit) 1.02x with v1 1.53x; batch 32 unchanged: its 1x1 layers run the GEMM).
int64_t FusionDwPwMaxTimes(int64_t dflt);

// TFLITE_GPU_CONV_GEMM: the tiled-GEMM kernel of 1x1 convolutions (conv_common_gpu.cc): "0" turns
// it off (the direct kernel runs), "RMxRN" (e.g. "8x2") forces that register tile where the
// layer allows it; unset: the generator's choice. For measuring; part of the serialization key.
std::string ConvGemm();

// TFLITE_GPU_CONV_MMA: 1x1 convolutions on NVIDIA tensor cores (mma.sync through inline PTX, fp16
// storage modes on compute capability 8.0+, conv_mma_gpu.cc): "0" turns it off, "1" takes it for
// every 1x1 layer it can run, "plain" forces the kernel's scalar path on any device (tests); unset:
// the generator's choice. For measuring; part of the serialization key.
std::string ConvMma();

// TFLITE_GPU_CONV_SPLITK: the split-K kernel of 1x1 convolutions at small M (conv_common_gpu.cc,
// EmitPointwiseSplitK; a work group splits the input-channel loop and adds its partial sums in
// local memory): "0" turns it off (the GEMM / direct choice above runs), "all" lets its rule
// take also the layers the GEMM would take, "TMxTNxRMxRN" (e.g. "16x8x2x2": positions x
// destination slices per work group, per item) forces that tile on every 1x1 layer it fits, and
// "TMxTNxRMxRNxKSxU" also the K split (0: the generator's) and the loop's unroll, "nosmall" drops
// the small-layer tiles (ChooseSplitKSmall: those layers keep the direct kernel, as before
// 2026-11-27); unset: the rule (layers the GEMM declines). For measuring; part of the
// serialization key.
std::string ConvSplitK();

// TFLITE_GPU_DW_ROWS: output rows per work item of the DEPTHWISE_CONV_2D kernel (1, 2 or 4;
// depthwise_gpu.cc); unset or other values: the generator's choice. For measuring; part of the
// serialization key.
int DwRows();

// TFLITE_GPU_VLOAD=1: tensors and weights are read and written through OpenCL's vload4 /
// vload_half4 (and the stores alike) instead of aligned vector loads (partition_model.cc); for
// measuring the difference; part of the serialization key.
bool Vload();

// TFLITE_GPU_SPIN_US: how long (microseconds) an idle worker of the CPU thread pool spins before it
// blocks, after the last job of an invoke (during an invoke it spins throughout); 0 blocks at once.
// A non-negative integer, capped at 100000; unset or malformed: 200. Read when a pool starts.
int64_t SpinUs();

// TFLITE_GPU_MIN_PARALLEL_WORK: the CPU kernels' threshold for splitting an op over threads, in
// the work units of runtime/thread_pool.h (an op of fewer than twice this runs on one thread). A
// positive integer; unset or malformed: `dflt`. For measuring the rule; read once per process.
int64_t MinParallelWork(int64_t dflt);

// TFLITE_GPU_PINNED_HOST: "0" keeps the GPU delegate's boundary tensors (partition inputs and
// outputs) in the interpreter's arena instead of pinned host memory the delegate allocates
// (CL_MEM_ALLOC_HOST_PTR, mapped), which NVIDIA's driver copies to and from by direct DMA rather
// than through a bounce buffer. Read at every allocate_tensors (for A/B measurements; default on).
bool PinnedHost();

// TFLITE_GPU_CUDA_GRAPH: "0" keeps NVIDIA GPUs on the OpenCL launch path. By default a GPU
// partition on NVIDIA's OpenCL platform, invoked without bound buffers, profiling or deferred
// outputs, replays its kernels (the OpenCL driver's PTX) as one CUDA graph through libcuda when
// that is present (gpu/cuda_graph.h: the launch floor per kernel falls from ~3.5 to ~1.2 us), with
// programmatic dependent launches on compute capability 9.0+; "serial" keeps the graph but drops
// those (A/B). Anything that stops the path leaves the partition on OpenCL. Read when a partition
// is built. Returns 0 (off), 1 (serial) or 2 (default).
int CudaGraph();

// TFLITE_GPU_COPY_THREADS: most threads one tensor-data copy of 8 MB or more uses (CopyTensorData:
// Python set_tensor / get_tensor); a positive integer up to 64; unset or malformed: 4. Read per copy.
int CopyThreads();

}  // namespace env
}  // namespace tflite_gpu
