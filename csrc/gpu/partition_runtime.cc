#include "gpu/partition_runtime.h"

#include <cstdlib>
#include <cstring>

#include "ops/half.h"
#include "runtime/env.h"
#include "runtime/subgraph.h"

namespace tflite_gpu::gpu {

namespace {
constexpr size_t kSentinelBytes = 256;
constexpr uint8_t kSentinel = 0xA5;

Status FillSentinel(const cl::Context& c, const cl::Buffer& b, size_t offset) {
  std::vector<uint8_t> pat(kSentinelBytes, kSentinel);
  return b.Write(c, pat.data(), pat.size(), offset, true);
}

Status CheckSentinel(const cl::Context& c, const cl::Buffer& b, size_t offset, const std::string& what) {
  std::vector<uint8_t> got(kSentinelBytes);
  TFG_RETURN_IF_ERROR(b.Read(c, got.data(), got.size(), offset, true));
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != kSentinel)
      return Internal("GPU out-of-bounds write detected past the end of " + what + " (byte " + std::to_string(i) + ")");
  return OkStatus();
}

// A partition boundary tensor must have host memory to copy from or into (every launch path).
Status HostDataCheck(const Tensor& t, int tensor, const char* role) {
  if (t.data) return OkStatus();
  return FailedPrecondition(std::string("GPU partition ") + role + " tensor " + std::to_string(tensor) + " has no data");
}

}  // namespace

Status PartitionRuntime::CheckSentinels() {
  if (!model_.debug_sentinels) return OkStatus();
  const cl::Context& c = *ctx_;
  for (size_t i = 0; i < slots_.size(); ++i) {
    std::string who = "buffer slot " + std::to_string(i);
    for (size_t k = 0; k < model_.kernels.size(); ++k)
      for (auto& a : model_.kernels[k].args)
        if (a.kind == GpuKernelArg::kTensor && model_.tensor_slot[a.index] == int(i))
          who = "tensor " + std::to_string(a.index) + " (written by kernel '" + model_.kernels[k].name + "')";
    TFG_RETURN_IF_ERROR(CheckSentinel(c, slots_[i], model_.slot_bytes[i], who));
  }
  for (size_t i = 0; i < staging_.size(); ++i)
    TFG_RETURN_IF_ERROR(CheckSentinel(c, staging_[i], std::max<size_t>(model_.staging_bytes[i], 16),
                                      "staging buffer " + std::to_string(i)));
  return OkStatus();
}

Status PartitionRuntime::Init(std::shared_ptr<cl::Context> ctx, cl::ProgramCache* cache, GpuPartitionModel model,
                              int* failed_node) {
  ctx_ = std::move(ctx);
  model_ = std::move(model);
  *failed_node = -1;
  const cl::Context& c = *ctx_;
  const size_t pad = model_.debug_sentinels ? kSentinelBytes : 0;
  for (size_t bytes : model_.slot_bytes) {
    TFG_ASSIGN_OR_RETURN(cl::Buffer b, cl::Buffer::Create(c, bytes + pad));
    if (pad) TFG_RETURN_IF_ERROR(FillSentinel(c, b, bytes));
    slots_.push_back(std::move(b));
  }
  for (size_t i = 0; i < model_.consts.size(); ++i) {
    const std::vector<float>& d = model_.consts[i];
    bool exact = model_.const_exact[i] || model_.precision == Precision::kF32;
    size_t n = std::max<size_t>(d.size(), 4);
    if (exact) {
      std::vector<float> tmp(n, 0.f);
      std::copy(d.begin(), d.end(), tmp.begin());
      TFG_ASSIGN_OR_RETURN(cl::Buffer b, cl::Buffer::Create(c, n * 4, cl::CL_MEM_READ_ONLY | cl::CL_MEM_COPY_HOST_PTR, tmp.data()));
      consts_.push_back(std::move(b));
    } else {
      std::vector<uint16_t> h(n, 0);
      for (size_t k = 0; k < d.size(); ++k) h[k] = FloatToHalf(d[k]);
      TFG_ASSIGN_OR_RETURN(cl::Buffer b, cl::Buffer::Create(c, n * 2, cl::CL_MEM_READ_ONLY | cl::CL_MEM_COPY_HOST_PTR, h.data()));
      consts_.push_back(std::move(b));
    }
  }
  for (size_t bytes : model_.staging_bytes) {
    TFG_ASSIGN_OR_RETURN(cl::Buffer b, cl::Buffer::Create(c, std::max<size_t>(bytes, 16) + pad));
    if (pad) TFG_RETURN_IF_ERROR(FillSentinel(c, b, std::max<size_t>(bytes, 16)));
    staging_.push_back(std::move(b));
  }
  // Fault injection for tests: TFLITE_GPU_DEBUG_BREAK_KERNEL=<OP> makes that op's kernels fail
  // to compile, as a broken driver would.
  const std::string broken = env::DebugBreakKernel();
  for (const GpuKernelDesc& k : model_.kernels) {
    if (k.source.empty()) {  // a direct boundary's entry: nothing to launch
      programs_.push_back(nullptr);
      kernels_.emplace_back();
      continue;
    }
    bool inject = !broken.empty() && k.op == broken;
    auto prog = cache->GetOrBuild(inject ? k.source + "\n#error injected compile failure\n" : k.source, "");
    if (!prog.ok()) {
      *failed_node = k.node;
      return Status(StatusCode::kInternal, "kernel '" + k.name + "' failed to compile: " + prog.status().message());
    }
    programs_.push_back(prog.value());
    auto kern = cl::Kernel::Create(*prog.value(), "main_function");
    if (!kern.ok()) {
      *failed_node = k.node;
      return kern.status();
    }
    cl::Kernel kk = std::move(kern.value());
    for (uint32_t i = 0; i < k.args.size(); ++i) {
      const int b = ArgBuffer(k.args[i]);
      if (b < 0) return Internal("GPU tensor " + std::to_string(k.args[i].index) + " has no buffer");
      TFG_RETURN_IF_ERROR(kk.SetBuffer(i, BufferAt(b)));
    }
    kernels_.push_back(std::move(kk));
  }
  ComputeLaunchSizes();
  return OkStatus();
}

int PartitionRuntime::ArgBuffer(const GpuKernelArg& a) const {
  if (a.kind == GpuKernelArg::kTensor) {
    const int slot = model_.tensor_slot[a.index];
    if (slot >= 0) return slot;
    const int ci = model_.tensors[a.index].const_index;
    return ci < 0 ? -1 : int(slots_.size()) + ci;
  }
  if (a.kind == GpuKernelArg::kConst) return int(slots_.size()) + a.index;
  return int(slots_.size() + consts_.size()) + a.index;
}

const cl::Buffer& PartitionRuntime::BufferAt(int i) const {
  const size_t u = size_t(i);
  if (u < slots_.size()) return slots_[u];
  if (u < slots_.size() + consts_.size()) return consts_[u - slots_.size()];
  return staging_[u - slots_.size() - consts_.size()];
}

bool PartitionRuntime::CudaEligible(bool defer, bool profile, const std::vector<bool>& read_back) const {
  if (cuda_state_ < 0 || defer || profile || model_.debug_sentinels || !ctx_->owns_queue()) return false;
  for (const auto& b : bound_in_)
    if (b) return false;
  for (const auto& b : bound_out_)
    if (b) return false;
  for (bool r : read_back)
    if (!r) return false;
  return true;
}

Status PartitionRuntime::BuildCuda() {
  TFG_ASSIGN_OR_RETURN(const int device, cuda::DeviceOf(*ctx_));
  const size_t n = slots_.size() + consts_.size() + staging_.size();
  std::vector<size_t> bytes(n);
  std::vector<std::vector<uint8_t>> init(n);
  for (size_t i = 0; i < n; ++i) bytes[i] = BufferAt(int(i)).size();
  for (size_t i = 0; i < consts_.size(); ++i) {  // constants as the OpenCL buffers hold them
    auto& h = init[slots_.size() + i];
    h.resize(consts_[i].size());
    TFG_RETURN_IF_ERROR(consts_[i].Read(*ctx_, h.data(), h.size(), 0, /*blocking=*/true));
  }
  std::vector<cuda::GraphRunner::Kernel> ks;
  for (size_t k = 0; k < kernels_.size(); ++k) {
    if (Direct(k)) continue;
    TFG_ASSIGN_OR_RETURN(std::vector<uint8_t> bin, programs_[k]->Binary());
    cuda::GraphRunner::Kernel kd;
    kd.ptx.assign(bin.begin(), bin.end());
    while (!kd.ptx.empty() && kd.ptx.back() == 0) kd.ptx.pop_back();
    if (kd.ptx.find(".entry main_function") == std::string::npos)
      return Status(StatusCode::kUnimplemented, "kernel '" + model_.kernels[k].name + "': its binary is no PTX");
    for (const GpuKernelArg& a : model_.kernels[k].args) kd.args.push_back(ArgBuffer(a));
    for (int d = 0; d < 3; ++d) {
      kd.block[d] = unsigned(launch_local_[k][d]);
      kd.grid[d] = unsigned(launch_global_[k][d] / launch_local_[k][d]);
    }
    ks.push_back(std::move(kd));
  }
  TFG_ASSIGN_OR_RETURN(cuda_, cuda::GraphRunner::Create(device, bytes, init, ks));
  return OkStatus();
}

Status PartitionRuntime::RunCuda(Subgraph& sg, cl::WaitMode wait) {
  const int staging0 = int(slots_.size() + consts_.size());
  cuda_in_.clear();
  cuda_out_.clear();
  for (const auto& b : model_.inputs) {
    Tensor& t = sg.tensor(b.cpu_tensor);
    TFG_RETURN_IF_ERROR(HostDataCheck(t, b.cpu_tensor, "input"));
    cuda_in_.push_back({staging0 + b.staging, t.data, model_.staging_bytes[b.staging]});
  }
  for (const auto& b : model_.outputs) {
    Tensor& t = sg.tensor(b.cpu_tensor);
    TFG_RETURN_IF_ERROR(HostDataCheck(t, b.cpu_tensor, "output"));
    cuda_out_.push_back({staging0 + b.staging, t.data, model_.staging_bytes[b.staging]});
  }
  TFG_RETURN_IF_ERROR(cuda_->Run(cuda_in_, cuda_out_, wait == cl::WaitMode::kActive));
  for (const auto& c : cuda_in_) ctx_->CountTransfer(true, c.bytes);
  for (const auto& c : cuda_out_) ctx_->CountTransfer(false, c.bytes);
  for (int& st : out_state_) st = kOutHost;
  ++cuda_runs_;
  return OkStatus();
}

void PartitionRuntime::SizeIoState() {
  if (bound_in_.size() != model_.inputs.size()) bound_in_.resize(model_.inputs.size());
  if (bound_out_.size() != model_.outputs.size()) bound_out_.resize(model_.outputs.size());
  if (out_state_.size() != model_.outputs.size()) out_state_.assign(model_.outputs.size(), kOutHost);
}

Status PartitionRuntime::PointStaging(int staging, const cl::Buffer& buffer) {
  for (size_t k = 0; k < kernels_.size(); ++k) {
    if (Direct(k)) continue;
    const auto& args = model_.kernels[k].args;
    for (uint32_t i = 0; i < args.size(); ++i)
      if (args[i].kind == GpuKernelArg::kStaging && args[i].index == staging) TFG_RETURN_IF_ERROR(kernels_[k].SetBuffer(i, buffer));
  }
  return OkStatus();
}

Status PartitionRuntime::Bind(bool is_input, int index, cl::Buffer user, bool half, cl::ProgramCache* cache) {
  SizeIoState();
  auto& slots = is_input ? bound_in_ : bound_out_;
  const auto& boundaries = is_input ? model_.inputs : model_.outputs;
  if (index < 0 || size_t(index) >= boundaries.size()) return Internal("bind: boundary index out of range");
  const int gpu_tensor = boundaries[index].gpu_tensor;
  const int staging = boundaries[index].staging;
  const bool linear = Direct(is_input ? size_t(index) : kernels_.size() - boundaries.size() + size_t(index));
  auto b = std::make_unique<Bound>();
  b->buffer = std::move(user);
  TFG_RETURN_IF_ERROR(Sync(cl::WaitMode::kPassive));  // the previous buffer may still be in use
  if (linear && !half) {
    // A direct boundary bound to a float32 buffer: the model's kernels read or write the user's
    // buffer itself (no conversion kernel, no copy).
    TFG_RETURN_IF_ERROR(PointStaging(staging, b->buffer));
    b->in_place = true;
    slots[index] = std::move(b);
    return OkStatus();
  }
  std::string src = BoundConversionSource(model_.tensor_precision(gpu_tensor), model_.tensors[gpu_tensor].shape, is_input, half,
                                          TypedHalfReads(ctx_->device().nv_compute_capability), boundaries[index].snap,
                                          linear);
  TFG_ASSIGN_OR_RETURN(b->program, cache->GetOrBuild(src, ""));
  TFG_ASSIGN_OR_RETURN(b->kernel, cl::Kernel::Create(*b->program, "main_function"));
  const int slot = model_.tensor_slot[size_t(gpu_tensor)];
  if (!linear && slot < 0) return Internal("bind: the GPU tensor of the boundary has no buffer");
  const cl::Buffer& dev = linear ? staging_[size_t(staging)] : slots_[size_t(slot)];
  TFG_RETURN_IF_ERROR(b->kernel.SetBuffer(0, is_input ? b->buffer : dev));
  TFG_RETURN_IF_ERROR(b->kernel.SetBuffer(1, is_input ? dev : b->buffer));
  if (linear) TFG_RETURN_IF_ERROR(PointStaging(staging, dev));  // after an in-place binding
  slots[index] = std::move(b);
  return OkStatus();
}

void PartitionRuntime::Unbind(bool is_input, int index) {
  SizeIoState();
  auto& slots = is_input ? bound_in_ : bound_out_;
  if (index < 0 || size_t(index) >= slots.size() || !slots[index]) return;
  (void)Sync(cl::WaitMode::kPassive);
  if (slots[index]->in_place) {
    const int staging = (is_input ? model_.inputs : model_.outputs)[size_t(index)].staging;
    (void)PointStaging(staging, staging_[size_t(staging)]);
  }
  slots[index].reset();
}

Status PartitionRuntime::CopyOutputToHost(Subgraph& sg, int j, cl::WaitMode wait) {
  SizeIoState();
  TFG_RETURN_IF_ERROR(Sync(wait));
  if (out_state_[j] == kOutHost) return OkStatus();
  const auto& b = model_.outputs[j];
  const size_t k = kernels_.size() - model_.outputs.size() + size_t(j);
  if (out_state_[j] == kOutDevice && !Direct(k))  // a direct output's staging buffer holds it already
    TFG_RETURN_IF_ERROR(kernels_[k].Launch(*ctx_, launch_global_[k], launch_local_[k]));
  Tensor& t = sg.tensor(b.cpu_tensor);
  TFG_RETURN_IF_ERROR(HostDataCheck(t, b.cpu_tensor, "output"));
  TFG_RETURN_IF_ERROR(OutputBuffer(size_t(j)).Read(*ctx_, t.data, model_.staging_bytes[b.staging], 0, /*blocking=*/true));
  out_state_[j] = kOutHost;
  return OkStatus();
}

void PartitionRuntime::ComputeLaunchSizes() {
  launch_global_.assign(model_.kernels.size(), std::vector<size_t>(3));
  launch_local_.assign(model_.kernels.size(), std::vector<size_t>(3));
  for (size_t i = 0; i < model_.kernels.size(); ++i) {
    const GpuKernelDesc& k = model_.kernels[i];
    for (int d = 0; d < 3; ++d) {
      size_t l = std::max<size_t>(1, k.local[d]);
      launch_local_[i][d] = l;
      launch_global_[i][d] = (std::max<size_t>(1, k.global[d]) + l - 1) / l * l;
    }
  }
}

Status PartitionRuntime::Run(Subgraph& sg, cl::WaitMode wait, bool defer, bool profile,
                             const std::vector<bool>& read_back) {
  const cl::Context& c = *ctx_;
  TFG_RETURN_IF_ERROR(Sync(wait));
  // Events (and so device timestamps) only when profiling: then the profiling queue, else the plain one.
  if (profile != c.profiling()) TFG_RETURN_IF_ERROR(ctx_->UseProfiling(profile));
  SizeIoState();
  if (CudaEligible(defer, profile, read_back)) {
    if (cuda_state_ == 0) {
      Status st = BuildCuda();
      cuda_state_ = st.ok() ? 1 : -1;
      if (!st.ok()) cuda_refused_ = st.message();
    }
    if (cuda_state_ == 1) {
      // A missing host tensor (FailedPrecondition, checked before anything runs) is the caller's
      // error on either path; a CUDA failure leaves this partition on OpenCL from now on, and
      // this invoke runs there.
      Status st = RunCuda(sg, wait);
      if (st.ok()) return OkStatus();
      if (st.code() == StatusCode::kFailedPrecondition) return st;
      cuda_.reset();
      cuda_state_ = -1;
      cuda_refused_ = st.message();
    }
  }
  const size_t n_in = model_.inputs.size(), n_out = model_.outputs.size();
  const size_t first_out = kernels_.size() - n_out;
  // Per invoke: only enqueue calls, non-blocking, and one wait at the end (no events unless
  // profiling or deferring). Host tensors are usually the delegate's pinned memory (HostMemory), so
  // the writes and reads are direct DMA.
  size_t last_write = n_in;
  for (size_t i = 0; i < n_in; ++i)
    if (!bound_in_[i]) last_write = i;
  cl::Event input_done;  // defer only: the last upload, waited for before returning
  for (size_t i = 0; i < n_in; ++i) {
    if (bound_in_[i]) continue;  // its conversion kernel reads the user's buffer
    const auto& b = model_.inputs[i];
    Tensor& t = sg.tensor(b.cpu_tensor);
    TFG_RETURN_IF_ERROR(HostDataCheck(t, b.cpu_tensor, "input"));
    TFG_RETURN_IF_ERROR(staging_[b.staging].Write(c, t.data, model_.staging_bytes[b.staging], 0, /*blocking=*/false,
                                                  defer && i == last_write ? &input_done : nullptr));
  }
  std::vector<cl::Event> evs(profile ? kernels_.size() : 0);
  for (size_t i = 0; i < kernels_.size(); ++i) {
    cl::Event* ev = profile ? &evs[i] : nullptr;
    if (i < n_in && bound_in_[i]) {
      if (!bound_in_[i]->in_place) TFG_RETURN_IF_ERROR(bound_in_[i]->kernel.Launch(c, launch_global_[i], launch_local_[i], ev));
    } else if (i >= first_out) {
      const size_t j = i - first_out;
      const bool host = read_back.empty() || read_back[j];
      if (bound_out_[j] && !bound_out_[j]->in_place)
        TFG_RETURN_IF_ERROR(bound_out_[j]->kernel.Launch(c, launch_global_[i], launch_local_[i], host ? nullptr : ev));
      if ((!bound_out_[j] || host) && !Direct(i))
        TFG_RETURN_IF_ERROR(kernels_[i].Launch(c, launch_global_[i], launch_local_[i], ev));
      out_state_[j] = host ? kOutHost : bound_out_[j] ? kOutDevice : kOutStaging;
    } else if (!Direct(i)) {
      TFG_RETURN_IF_ERROR(kernels_[i].Launch(c, launch_global_[i], launch_local_[i], ev));
    }
  }
  last_event_.Reset();
  size_t last_read = n_out;
  for (size_t j = 0; j < n_out; ++j)
    if (out_state_[j] == kOutHost) last_read = j;
  for (size_t j = 0; j < n_out; ++j) {
    if (out_state_[j] != kOutHost) continue;
    const auto& b = model_.outputs[j];
    Tensor& t = sg.tensor(b.cpu_tensor);
    TFG_RETURN_IF_ERROR(HostDataCheck(t, b.cpu_tensor, "output"));
    TFG_RETURN_IF_ERROR(OutputBuffer(j).Read(c, t.data, model_.staging_bytes[b.staging], 0, /*blocking=*/false,
                                             defer && j == last_read ? &last_event_ : nullptr));
  }
  pending_ = true;
  if (!defer) TFG_RETURN_IF_ERROR(Sync(wait));
  // Deferred: the outputs stay in flight, but the inputs' host memory is the caller's again when
  // invoke returns (set_tensor may rewrite it at once), so their upload must have finished.
  if (input_done.valid()) TFG_RETURN_IF_ERROR(input_done.Wait(wait));
  if (model_.debug_sentinels) {
    TFG_RETURN_IF_ERROR(Sync(wait));
    TFG_RETURN_IF_ERROR(CheckSentinels());
  }
  if (profile) {
    TFG_RETURN_IF_ERROR(Sync(cl::WaitMode::kPassive));
    times_.clear();
    for (size_t i = 0; i < evs.size(); ++i) {
      if (!evs[i].valid()) continue;  // a direct boundary (nothing launched)
      auto tm = evs[i].Times();
      double us = tm.ok() ? double(tm.value().DurationNs()) / 1000.0 : 0.0;
      const GpuKernelDesc& k = model_.kernels[i];
      times_.push_back({k.node, k.label.empty() ? k.name : k.label, us, k.name});
    }
  }
  return OkStatus();
}

Status PartitionRuntime::TuneWorkGroups(size_t device_max_wg) {
  const cl::Context& c = *ctx_;
  const bool was_profiling = c.profiling();
  // No timestamps to tune by (an adopted queue without profiling, or no profiling queue to be had):
  // the generators' work groups stay, as before tuning existed.
  if (!ctx_->UseProfiling(true).ok() || !c.profiling()) return OkStatus();
  static const size_t kCand[][3] = {{8, 4, 1}, {16, 4, 1}, {32, 2, 1}, {32, 4, 1}, {8, 8, 1}, {16, 8, 1},
                                    {16, 16, 1}, {64, 1, 1}, {128, 1, 1}, {4, 4, 4}, {8, 1, 8}, {1, 1, 64}, {4, 4, 1}};
  for (size_t i = 0; i < kernels_.size(); ++i) {
    GpuKernelDesc& k = model_.kernels[i];
    if (!k.tunable) continue;  // its generator fixed the work group (local-memory reductions)
    size_t max_wg = device_max_wg;
    auto kmax = kernels_[i].MaxWorkGroupSize(c);
    if (kmax.ok()) max_wg = std::min(max_wg, kmax.value());
    std::vector<std::array<size_t, 3>> cands = {k.local};
    for (auto& c3 : kCand) {
      std::array<size_t, 3> l{c3[0], c3[1], c3[2]};
      if (l[0] * l[1] * l[2] > max_wg) continue;
      // Skip sizes that would more than double the launched grid in some dimension.
      bool wasteful = false;
      for (int d = 0; d < 3; ++d)
        if (l[d] > 1 && l[d] > 2 * std::max<size_t>(1, k.global[d])) wasteful = true;
      if (!wasteful) cands.push_back(l);
    }
    double best_us = 1e300;
    std::array<size_t, 3> best = k.local;
    for (auto& l : cands) {
      std::vector<size_t> global(3), local(l.begin(), l.end());
      for (int d = 0; d < 3; ++d) global[d] = (std::max<size_t>(1, k.global[d]) + l[d] - 1) / l[d] * l[d];
      double t = 1e300;
      bool ok = true;
      for (int rep = 0; rep < 3 && ok; ++rep) {
        cl::Event ev;
        if (!kernels_[i].Launch(c, global, local, &ev).ok() || !ev.Wait().ok()) { ok = false; break; }
        auto tm = ev.Times();
        if (!tm.ok()) { ok = false; break; }
        t = std::min(t, double(tm.value().DurationNs()) / 1000.0);
      }
      if (ok && t < best_us) { best_us = t; best = l; }
    }
    k.local = best;
  }
  ComputeLaunchSizes();
  cuda_.reset();  // built again with the tuned launch sizes
  if (cuda_state_ == 1) cuda_state_ = 0;
  TFG_RETURN_IF_ERROR(ctx_->Finish());
  return ctx_->UseProfiling(was_profiling);
}

Status PartitionRuntime::Sync(cl::WaitMode wait) {
  if (!pending_) return OkStatus();
  // The last output read of a deferred run when there is one (work the caller enqueued on a
  // shared queue after it is not waited for); else everything enqueued so far (in-order queue).
  if (last_event_.valid()) TFG_RETURN_IF_ERROR(last_event_.Wait(wait));
  else TFG_RETURN_IF_ERROR(ctx_->WaitIdle(wait));
  last_event_.Reset();
  pending_ = false;
  return OkStatus();
}

}  // namespace tflite_gpu::gpu
