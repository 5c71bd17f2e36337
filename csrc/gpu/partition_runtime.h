// Runs a GpuPartitionModel: creates its buffers (one per memory slot, one per constant, one
// staging buffer per boundary tensor), compiles each kernel through the program cache, binds
// arguments once, and per invoke uploads inputs, enqueues the kernels and reads outputs.
// Nothing here knows about ops.
#pragma once
#include <memory>
#include <vector>

#include "gpu/cl/program_cache.h"
#include "gpu/cl/runtime.h"
#include "gpu/partition_model.h"

namespace tflite_gpu {
class Subgraph;
namespace gpu {

class PartitionRuntime {
 public:
  // On a kernel compile failure, *failed_node names the node (or -1).
  Status Init(std::shared_ptr<cl::Context> ctx, cl::ProgramCache* cache, GpuPartitionModel model, int* failed_node);
  // wait: kPassive/kActive; defer: leave outputs in flight (DO_NOT_WAIT), finished by Sync().
  Status Run(Subgraph& sg, cl::WaitMode wait, bool defer, bool profile);
  Status Sync(cl::WaitMode wait);
  Status CheckSentinels();  // debug mode: out-of-bounds writes past any buffer
  // Work-group tuning (inference_preference SUSTAINED_SPEED): times each kernel with a few
  // local sizes on the device (profiling events, best of 3) and keeps the fastest. Changes
  // only launch sizes, never results (kernels bounds-check their ids).
  Status TuneWorkGroups(size_t max_wg);
  bool pending() const { return pending_; }
  const GpuPartitionModel& model() const { return model_; }
  // Per kernel: (node, name, device microseconds) of the last profiled run.
  struct KernelTime { int node; std::string name; double us; };
  const std::vector<KernelTime>& kernel_times() const { return times_; }

 private:
  std::shared_ptr<cl::Context> ctx_;
  GpuPartitionModel model_;
  std::vector<cl::Buffer> slots_, consts_, staging_;
  std::vector<std::shared_ptr<const cl::Program>> programs_;
  std::vector<cl::Kernel> kernels_;
  // Launch sizes per kernel (global rounded up to the work group), computed once: invoke does
  // no allocation per kernel.
  std::vector<std::vector<size_t>> launch_global_, launch_local_;
  void ComputeLaunchSizes();
  std::vector<cl::Event> out_events_;
  std::vector<KernelTime> times_;
  bool pending_ = false;
};

}  // namespace gpu
}  // namespace tflite_gpu
