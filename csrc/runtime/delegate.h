// Internal (not installed). The delegate seam of the interpreter (what TfLiteDelegate + ReplaceNodeSubsetsWithDelegateKernels
// are in TensorFlow Lite). A delegate looks at the prepared graph (shapes and types known),
// picks node subsets it can run, and hands back one DelegateKernel per subset; the interpreter
// replaces those nodes by the kernel in its execution plan. Nodes it leaves run on the CPU.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "tflite_gpu/interpreter.h"  // DelegationReport
#include "tflite_gpu/status.h"
#include "tflite_gpu/types.h"

namespace tflite_gpu {

class Subgraph;

// A delegated partition. inputs/outputs are tensor indices of the subgraph.
class DelegateKernel {
 public:
  virtual ~DelegateKernel() = default;
  // Called at every allocate (shapes may have changed); sets output shapes on the subgraph.
  virtual Status Prepare(Subgraph& sg) = 0;
  virtual Status Eval(Subgraph& sg) = 0;
  // Copies tensor `index` (a partition output kept on the device) to its CPU buffer.
  virtual Status CopyToHost(Subgraph&, int /*index*/) { return OkStatus(); }
  virtual std::string name() const = 0;
  // Device-side timings of the last profiled Eval (OpenCL profiling events), per kernel.
  struct KernelTime { int node; std::string name; double us; std::string kernel; };
  virtual std::vector<KernelTime> DeviceTimes() const { return {}; }
  // Host memory for boundary tensor `tensor` (one of inputs/outputs), `bytes` bytes, 64-byte
  // aligned, that the delegate transfers from/to faster than from the interpreter's arena (the
  // GPU delegate: pinned memory); nullptr lets the arena place the tensor. Asked by the memory
  // planner at every allocation, after Prepare. The memory is the tensor's for every node that
  // reads or writes it (CPU nodes included) and must stay valid until the next allocation asks
  // again or the kernel is destroyed (the subgraph destroys its kernels before its arena).
  virtual uint8_t* HostMemory(int /*tensor*/, size_t /*bytes*/) { return nullptr; }
  std::vector<int> nodes;    // node indices it replaced
  std::vector<int> inputs;   // tensors read
  std::vector<int> outputs;  // tensors written
};

class Delegate {
 public:
  virtual ~Delegate() = default;
  // Inspect `sg` (already prepared) and return the kernels for the partitions it takes.
  virtual Status Partition(Subgraph& sg, std::vector<std::unique_ptr<DelegateKernel>>* kernels) = 0;
  virtual std::string name() const = 0;
  // True once TfLiteGpuDelegateV2Delete / close() ran; using it then is an error.
  virtual bool deleted() const { return false; }
  // The nodes the latest Partition() refused, with the reasons (for DelegationReport).
  virtual std::vector<DelegationReport::Unsupported> Refused() const { return {}; }
};

}  // namespace tflite_gpu
