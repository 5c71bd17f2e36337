// Runs a GpuPartitionModel: creates its buffers (one per memory slot, one per constant, one
// staging buffer per boundary tensor), compiles each kernel through the program cache, binds
// arguments once, and per invoke uploads inputs, enqueues the kernels and reads outputs.
// Nothing here knows about ops.
//
// Bound user buffers (buffer binding): a boundary may be bound to a user's cl_mem holding the
// tensor in BHWC float32/float16. A bound input's conversion kernel reads the user buffer (no
// upload); a bound output's conversion kernel writes it (no read). A direct boundary (see
// GpuKernelDesc::source) bound to a float32 buffer has no conversion kernel: the model's kernels
// read or write the user's buffer in place. An output is read to host
// memory at Run only when the caller asks (read_back); otherwise it stays on the device until
// CopyOutputToHost (for a bound output, its host-typed conversion then runs first).
#pragma once
#include <memory>
#include <vector>

#include "gpu/cl/program_cache.h"
#include "gpu/cl/runtime.h"
#include "gpu/cuda_graph.h"
#include "gpu/partition_model.h"

namespace tflite_gpu {
class Subgraph;
namespace gpu {

class PartitionRuntime {
 public:
  // On a kernel compile failure, *failed_node names the node (or -1).
  Status Init(std::shared_ptr<cl::Context> ctx, cl::ProgramCache* cache, GpuPartitionModel model, int* failed_node);
  // wait: kPassive/kActive; defer: leave outputs in flight (DO_NOT_WAIT), finished by Sync().
  // read_back[j]: read output j to host memory now (empty: every output).
  Status Run(Subgraph& sg, cl::WaitMode wait, bool defer, bool profile, const std::vector<bool>& read_back = {});
  Status Sync(cl::WaitMode wait);
  // Binds boundary `index` of the inputs (is_input) or outputs to `user` (already checked for
  // context and size), compiling its conversion kernel through `cache`. Unbind restores the
  // host path.
  Status Bind(bool is_input, int index, cl::Buffer user, bool half, cl::ProgramCache* cache);
  void Unbind(bool is_input, int index);
  // Output j's values into its host tensor (blocking); a no-op when they are there already.
  Status CopyOutputToHost(Subgraph& sg, int j, cl::WaitMode wait);
  bool output_on_host(int j) const { return size_t(j) >= out_state_.size() || out_state_[j] == kOutHost; }
  Status CheckSentinels();  // debug mode: out-of-bounds writes past any buffer
  // Work-group tuning (inference_preference SUSTAINED_SPEED): times each kernel with a few
  // local sizes on the device (profiling events, best of 3) and keeps the fastest. Changes
  // only launch sizes, never results (kernels bounds-check their ids).
  Status TuneWorkGroups(size_t max_wg);
  bool pending() const { return pending_; }
  const GpuPartitionModel& model() const { return model_; }
  // NVIDIA launch path (cuda_graph.h): invokes that ran as one CUDA graph, and why this partition
  // stays on OpenCL launches when the path was refused ("" otherwise).
  uint64_t cuda_graph_runs() const { return cuda_runs_; }
  const std::string& cuda_graph_refused() const { return cuda_refused_; }
  bool cuda_graph_programmatic() const { return cuda_ && cuda_->programmatic(); }
  // Per kernel: (node, name, device microseconds) of the last profiled run.
  struct KernelTime { int node; std::string name; double us; std::string kernel; };  // kernel: the generator's name
  const std::vector<KernelTime>& kernel_times() const { return times_; }

 private:
  std::shared_ptr<cl::Context> ctx_;
  GpuPartitionModel model_;
  std::vector<cl::Buffer> slots_, consts_, staging_;
  std::vector<std::shared_ptr<const cl::Program>> programs_;
  std::vector<cl::Kernel> kernels_;
  // Kernel entry i is a direct boundary's (empty source): nothing to launch.
  bool Direct(size_t i) const { return i < model_.kernels.size() && model_.kernels[i].source.empty(); }
  // Sets every model kernel argument that names staging buffer `staging` (a direct boundary's) to `buffer`.
  Status PointStaging(int staging, const cl::Buffer& buffer);
  // Where output j's BHWC values are read from: its in-place bound buffer, else its staging buffer.
  const cl::Buffer& OutputBuffer(size_t j) const {
    return j < bound_out_.size() && bound_out_[j] && bound_out_[j]->in_place ? bound_out_[j]->buffer
                                                                             : staging_[size_t(model_.outputs[j].staging)];
  }
  // Launch sizes per kernel (global rounded up to the work group), computed once: invoke does
  // no allocation per kernel.
  std::vector<std::vector<size_t>> launch_global_, launch_local_;
  void ComputeLaunchSizes();
  struct Bound {
    cl::Buffer buffer;  // retained user cl_mem
    bool in_place = false;  // a direct boundary's float32 buffer: the model's kernels use it (no kernel here)
    std::shared_ptr<const cl::Program> program;
    cl::Kernel kernel;
  };
  std::vector<std::unique_ptr<Bound>> bound_in_, bound_out_;
  // Where output j's latest values are: read (or being read) to host, converted into its staging
  // buffer but not read, or only in the device tensor (bound output, not read back).
  // (Plain ints: a std::vector of an enum would export its instantiation from the library.)
  static constexpr int kOutHost = 0, kOutStaging = 1, kOutDevice = 2;
  std::vector<int> out_state_;
  void SizeIoState();  // sizes the three vectors above to the model (whatever path built it)
  cl::Event last_event_;  // deferred runs only: the last output read (Sync waits for it)
  std::vector<KernelTime> times_;
  bool pending_ = false;
  // Buffer i of the unified numbering the CUDA graph copies: slots, then constants, then staging.
  int ArgBuffer(const GpuKernelArg& a) const;
  const cl::Buffer& BufferAt(int i) const;
  // The CUDA graph path: built at the first invoke that may take it (cuda_state_ 0: not tried,
  // 1: built, -1: refused or failed, cuda_refused_ says why); an invoke takes it when nothing
  // needs the OpenCL queue (no bound buffers, profiling, deferred or device-kept outputs, debug
  // sentinels) and the queue is ours.
  bool CudaEligible(bool defer, bool profile, const std::vector<bool>& read_back) const;
  Status BuildCuda();
  Status RunCuda(Subgraph& sg, cl::WaitMode wait);
  std::unique_ptr<cuda::GraphRunner> cuda_;
  int cuda_state_ = 0;
  std::string cuda_refused_;
  uint64_t cuda_runs_ = 0;
  std::vector<cuda::GraphRunner::Copy> cuda_in_, cuda_out_;  // reused per invoke
};

}  // namespace gpu
}  // namespace tflite_gpu
