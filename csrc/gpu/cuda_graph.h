// cuda_graph.h: NVIDIA launch path. A partition's kernels, compiled by NVIDIA's OpenCL driver,
// replayed as one CUDA graph through the CUDA driver API (libcuda.so.1, loaded at run time).
//
// Why: on NVIDIA's OpenCL driver every dependent kernel costs ~3.5 us of device time before it
// computes anything (an H100, driver 580: 30 empty kernels behind a spin kernel take 106 us, with
// or without flushes, on in-order or out-of-order queues, whatever the arguments or grid), and
// OpenCL there has no command buffers. The same GPU replays a CUDA graph at ~1.2 us per kernel
// (a CUDA stream: ~1.9 us). At batch 1 a model is a chain of 30-60 small kernels, so the launch
// floor is half its time (benchmarks/gpu_b1_floor.py).
//
// How: NVIDIA's OpenCL program binaries are PTX text. Each kernel's PTX is loaded with
// cuModuleLoadData after one rewrite: the OpenCL driver passes work-item offsets, group counts and
// the work dimension in environment registers (%envreg0-2: group offset, 3-5: work-item offset,
// 6-8: groups per dimension, 9: work dimension), which a CUDA launch leaves unset; they become 0,
// %nctaid.x/y/z and 3 (our kernels launch three-dimensional ranges, no offsets). Kernels whose
// PTX uses any other environment register, or takes __local pointer arguments, are refused (the
// partition stays on OpenCL). OpenCL's memory lives in another CUDA context, invisible to ours,
// so the runner holds its own copy of every buffer (constants copied once at build, activations
// zeroed) in the device's primary context, and per invoke: input copies, one graph launch, output
// copies, one wait. The graph is the same kernels with the same arguments and launch sizes, so
// the results are bit-identical to the OpenCL path's.
//
// On compute capability 9.0+ the graph's kernels are programmatic dependent launches: each kernel
// after the first may be launched while its predecessor finishes, and waits for it
// (griddepcontrol.wait, inserted as its first PTX instruction) before touching memory; the
// implicit trigger at the predecessor's exit keeps the waiting work groups off the SMs until
// then. H100, graph device time: v1 146.5 -> 137.8 us, v2 228.6 -> 215.0, outputs unchanged; an
// early trigger (launch_dependents at kernel start) was slower (v1 162 us).
//
// Host memory: CUDA copies OpenCL's pinned memory as pageable (bounce-buffered: 62 us for a
// 224x224x3 float input instead of 21 us), so the delegate's pinned host buffers are also
// registered with CUDA (RegisterHost, portable) for their whole life.
//
// TFLITE_GPU_CUDA_GRAPH=0 turns the path off, =serial drops the programmatic launches (env.h).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tflite_gpu/status.h"

namespace tflite_gpu {
namespace cl {
class Context;
}
namespace gpu::cuda {

// The CUDA device (ordinal) that is this OpenCL context's device, or a status saying why there is
// none: not NVIDIA's platform, the path is off, libcuda missing, no matching PCI address.
StatusOr<int> DeviceOf(const cl::Context& ctx);

// Pins [p, p + bytes) for CUDA copies (cuMemHostRegister, portable) when ctx's device has a CUDA
// twin: returns that CUDA device, or -1 when not (the memory then stays usable, CUDA copies bounce
// it). Pair with UnregisterHost(device, p) before the memory is unmapped; it drops the
// registration in the same device's context (a CUDA call needs a current context, and a
// registration left behind would keep pinning pages another allocation may reuse the address of).
int RegisterHost(const cl::Context& ctx, void* p, size_t bytes);
void UnregisterHost(int device, void* p);

class GraphRunner {
 public:
  struct Kernel {
    std::string ptx;           // the OpenCL program's binary (PTX text), entry "main_function"
    std::vector<int> args;     // buffer index per kernel argument (all arguments are buffers)
    unsigned grid[3], block[3];
  };
  struct Copy {
    int buffer;
    void* host;
    size_t bytes;
  };
  // buffers[i]: size of buffer i; init[i]: its initial bytes (empty: zeros).
  static StatusOr<std::unique_ptr<GraphRunner>> Create(int device, const std::vector<size_t>& buffers,
                                                       const std::vector<std::vector<uint8_t>>& init,
                                                       const std::vector<Kernel>& kernels);
  ~GraphRunner();
  GraphRunner(const GraphRunner&) = delete;
  GraphRunner& operator=(const GraphRunner&) = delete;
  // Copies `in` to the device, replays the graph, copies `out` back, waits (spin: polls the
  // stream instead of blocking).
  Status Run(const std::vector<Copy>& in, const std::vector<Copy>& out, bool spin);
  // Whether the graph's kernels are programmatic dependent launches (compute capability 9.0+).
  bool programmatic() const;

 private:
  GraphRunner() = default;
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace gpu::cuda
}  // namespace tflite_gpu
