// The GPU delegate: device set-up, the partitioner, and the delegate kernel.
//
// Partitioning (what runs where, decided once per ModifyGraphWithDelegate):
//  * each CPU node of the plan is asked the one GPU support check of its op (or refused with
//    a reason when its op has no GPU kernel or the op filter names it);
//  * the supported nodes form partitions = maximal contiguous runs of the execution plan, so a
//    partition's inputs are always ready when it starts and results never flow back into it;
//  * the largest `max_delegated_partitions` partitions (by node count) are built; if a kernel
//    of a partition fails to compile on this driver, its node is refused with the compiler's
//    message and partitioning is redone, so a driver problem costs speed, not the model;
//  * every refused node is logged as the seeds show:
//      WARNING: op code #<builtin code> cannot be handled by this delegate. (<OP> v<n>, node <i>: <reason>)
// Inference preference: SUSTAINED_SPEED spends init time tuning each kernel's work-group size
// on the device; FAST_SINGLE_ANSWER (default) and BALANCED use the default sizes.
// Precision: F32 unless precision loss is allowed (is_precision_loss_allowed, or a first
// non-AUTO priority of MIN_LATENCY / MIN_MEMORY_USAGE); then F16 where the device has
// cl_khr_fp16, else F32_F16. Both fp16 modes store tensors and weights in half and compute in
// float, so accumulations never overflow in fp16.
#include "tflite_gpu/gpu_delegate.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <sstream>

#include "gpu/cl/device.h"
#include "gpu/cl/program_cache.h"
#include "gpu/cl/runtime.h"
#include "gpu/gpu_op.h"
#include "gpu/partition_model.h"
#include "gpu/partition_runtime.h"
#include "runtime/env.h"
#include "runtime/subgraph.h"

namespace tflite_gpu {

namespace {
std::mutex g_log_mu;
LogSink g_sink = nullptr;
void* g_sink_user = nullptr;
}  // namespace

void SetLogSink(LogSink sink, void* user) {
  std::lock_guard<std::mutex> l(g_log_mu);
  g_sink = sink;
  g_sink_user = user;
}

void Log(int level, const std::string& message) {
  LogSink sink;
  void* user;
  {
    std::lock_guard<std::mutex> l(g_log_mu);
    sink = g_sink;
    user = g_sink_user;
  }
  if (sink) {
    sink(level, message.c_str(), user);
  } else {
    std::fprintf(stderr, "%s\n", message.c_str());
  }
}

namespace gpu {
namespace {

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s + ",") {
    if (c == ',' || c == ' ') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  return out;
}

class GpuDelegate;

class GpuDelegateKernel : public DelegateKernel {
 public:
  GpuDelegateKernel(GpuDelegate* d, std::vector<int> nodes) : delegate_(d) { this->nodes = std::move(nodes); }
  Status Build(Subgraph& sg, int* failed_node);
  Status Prepare(Subgraph& sg) override;
  Status Eval(Subgraph& sg) override;
  Status CopyToHost(Subgraph& sg, int index) override;
  std::string name() const override { return "TfLiteGpuDelegateV2"; }
  std::vector<KernelTime> DeviceTimes() const override {
    std::vector<KernelTime> out;
    if (runtime_)
      for (auto& k : runtime_->kernel_times()) out.push_back({k.node, k.name, k.us});
    return out;
  }
  PartitionRuntime& runtime() { return *runtime_; }

 private:
  std::vector<Dims> InputShapes(Subgraph& sg) const;
  GpuDelegate* delegate_;
  std::unique_ptr<PartitionRuntime> runtime_;
  std::vector<Dims> built_shapes_;
};

class GpuDelegate : public Delegate {
 public:
  explicit GpuDelegate(const TfLiteGpuDelegateOptionsV2& o) : opts_(o) {
    if (o.serialization_dir) serialization_dir_ = o.serialization_dir;
    if (o.model_token) model_token_ = o.model_token;
    if (o.device) device_spec_ = o.device;
    std::string filter = o.op_filter ? o.op_filter : "";
    std::string env_filter = env::OpFilter();
    if (!env_filter.empty()) filter += "," + env_filter;
    for (auto& s : SplitList(filter)) op_filter_.push_back(s);
    opts_.serialization_dir = nullptr;
    opts_.model_token = nullptr;
    opts_.device = nullptr;
    opts_.op_filter = nullptr;
  }

  Status Init() {
    std::lock_guard<std::mutex> l(mu_);
    if (inited_) return init_status_;
    inited_ = true;
    init_status_ = InitLocked();
    info_.available = init_status_.ok();
    if (!init_status_.ok()) info_.unavailable_reason = init_status_.message();
    return init_status_;
  }

  Status Partition(Subgraph& sg, std::vector<std::unique_ptr<DelegateKernel>>* kernels) override;
  std::string name() const override { return "TfLiteGpuDelegateV2"; }
  bool deleted() const override { return deleted_; }
  std::vector<DelegationReport::Unsupported> Refused() const override {
    std::vector<DelegationReport::Unsupported> out;
    for (const auto& r : info_.refused) out.push_back({r.node, r.op, r.version, r.reason});
    return out;
  }
  void MarkDeleted() { deleted_ = true; }

  const GpuDelegateInfo& info() const { return info_; }
  std::shared_ptr<cl::Context> context() { return ctx_; }
  cl::ProgramCache* cache() { return cache_.get(); }
  Precision precision() const { return precision_; }
  const GpuDeviceCaps& caps() const { return caps_; }
  cl::WaitMode wait_mode() const {
    return (opts_.wait_type == TFLGpuDelegateWaitTypeActive || opts_.wait_type == TFLGpuDelegateWaitTypeAggressive)
               ? cl::WaitMode::kActive : cl::WaitMode::kPassive;
  }
  bool defer_outputs() const { return opts_.wait_type == TFLGpuDelegateWaitTypeDoNotWait; }
  bool profiling() const { return opts_.enable_profiling != 0; }
  bool sustained_speed() const { return opts_.inference_preference == TFLITE_GPU_INFERENCE_PREFERENCE_SUSTAINED_SPEED; }
  std::string CheckNodePublic(Subgraph& sg, const Node& n) const { return CheckNode(sg, n); }

 private:
  Status InitLocked();
  std::string CheckNode(Subgraph& sg, const Node& n) const;

  TfLiteGpuDelegateOptionsV2 opts_;
  std::string serialization_dir_, model_token_, device_spec_;
  std::vector<std::string> op_filter_;
  std::mutex mu_;
  bool inited_ = false, deleted_ = false;
  Status init_status_;
  std::shared_ptr<cl::Context> ctx_;
  std::unique_ptr<cl::ProgramCache> cache_;
  GpuDeviceCaps caps_;
  Precision precision_ = Precision::kF32;
  GpuDelegateInfo info_;
};

Status GpuDelegate::InitLocked() {
  std::unique_ptr<cl::Context> ctx;
  if (opts_.cl_context) {
    TFG_ASSIGN_OR_RETURN(ctx, cl::Context::FromRaw(opts_.cl_context, opts_.cl_queue, /*profiling_if_created=*/true));
  } else {
    auto dev = cl::SelectDevice(device_spec_);
    if (!dev.ok()) return Unavailable("GPU delegate unavailable: " + dev.status().message());
    // The queue is always profiling-capable: events are only requested when profiling, and
    // op profiling (benchmark --enable_op_profiling) needs device timestamps.
    auto c = cl::Context::Create(dev.value(), /*profiling=*/true);
    if (!c.ok()) return Unavailable("GPU delegate unavailable: could not create an OpenCL context on '" +
                                    dev.value().name + "': " + c.status().message());
    ctx = std::move(c.value());
  }
  const cl::DeviceInfo& d = ctx->device();
  ctx_ = std::shared_ptr<cl::Context>(std::move(ctx));
  std::string cache_dir;
  if ((opts_.experimental_flags & TFLITE_GPU_EXPERIMENTAL_FLAGS_ENABLE_SERIALIZATION) && !serialization_dir_.empty())
    cache_dir = serialization_dir_;
  else
    cache_dir = cl::ProgramCache::DefaultCacheDir();
  cache_.reset(new cl::ProgramCache(ctx_.get(), cache_dir));
  caps_.fp16 = d.fp16;
  caps_.enable_quant = (opts_.experimental_flags & TFLITE_GPU_EXPERIMENTAL_FLAGS_ENABLE_QUANT) != 0;
  caps_.max_work_group_size = d.max_work_group_size;
  caps_.is_gpu = d.type == cl::DeviceType::kGpu;
  caps_.vendor = d.vendor;
  bool loss = opts_.is_precision_loss_allowed != 0;
  for (int p : {opts_.inference_priority1, opts_.inference_priority2, opts_.inference_priority3}) {
    if (p == TFLITE_GPU_INFERENCE_PRIORITY_AUTO) continue;
    if (p == TFLITE_GPU_INFERENCE_PRIORITY_MIN_LATENCY || p == TFLITE_GPU_INFERENCE_PRIORITY_MIN_MEMORY_USAGE) loss = true;
    break;
  }
  precision_ = !loss ? Precision::kF32 : (d.fp16 ? Precision::kF16 : Precision::kF32F16);
  caps_.fp16_storage = precision_ != Precision::kF32;
  info_.device_name = d.name;
  info_.device_vendor = d.vendor;
  info_.platform_name = d.platform_name;
  info_.driver_version = d.driver_version;
  info_.device_is_gpu = caps_.is_gpu;
  info_.fp16 = d.fp16;
  info_.precision = precision_ == Precision::kF32 ? "F32" : precision_ == Precision::kF16 ? "F16" : "F32_F16";
  return OkStatus();
}

std::string GpuDelegate::CheckNode(Subgraph& sg, const Node& n) const {
  if (!n.op) return "unresolved op";
  for (const std::string& f : op_filter_)
    if (f == n.op->name) return "forced to the CPU by the op filter";
  if (std::string(n.op->family) == "control_flow")
    return "control flow and resource variables run on the CPU (the delegate partitions the primary "
           "subgraph only; the subgraphs these ops call run on CPU kernels)";
  const GpuOpSupport* g = n.op->gpu;
  if (!g || !g->check) return "the GPU delegate has no kernel for this op";
  for (int t : n.inputs)
    if (t >= 0 && sg.tensor(t).alloc == Allocation::kDynamic) return "an input shape is only known at invoke (dynamic)";
  for (int t : n.outputs)
    if (sg.tensor(t).alloc == Allocation::kDynamic) return "the output shape is only known at invoke (dynamic)";
  for (int t : n.inputs) {
    if (t < 0) continue;
    const Tensor& tt = sg.tensor(t);
    if (tt.shape.size() > 4 && !tt.is_const) return "an input has rank " + std::to_string(tt.shape.size()) + " (the GPU takes rank <= 4)";
    if (tt.num_elements() == 0) return "an input is empty (zero elements)";
  }
  for (int t : n.outputs) {
    const Tensor& tt = sg.tensor(t);
    if (tt.shape.size() > 4) return "the output has rank " + std::to_string(tt.shape.size()) + " (the GPU takes rank <= 4)";
    if (tt.num_elements() == 0) return "the output is empty (zero elements)";
  }
  GpuCheckContext ctx(sg, n, caps_);
  Status st = g->check(ctx);
  return st.ok() ? std::string() : st.message();
}

Status GpuDelegate::Partition(Subgraph& sg, std::vector<std::unique_ptr<DelegateKernel>>* kernels) {
  if (deleted_) return FailedPrecondition("the GPU delegate was already deleted (TfLiteGpuDelegateV2Delete / close())");
  TFG_RETURN_IF_ERROR(Init());
  std::vector<int> plan = sg.PlanNodes();
  std::vector<std::string> reason(sg.nodes().size());
  for (int ni : plan) reason[ni] = CheckNode(sg, sg.nodes()[ni]);
  int max_parts = opts_.max_delegated_partitions <= 0 ? 1 : opts_.max_delegated_partitions;
  for (int attempt = 0; attempt <= int(plan.size()); ++attempt) {
    std::vector<std::vector<int>> runs;
    std::vector<int> cur;
    for (int ni : plan) {
      if (reason[ni].empty()) {
        cur.push_back(ni);
      } else if (!cur.empty()) {
        runs.push_back(cur);
        cur.clear();
      }
    }
    if (!cur.empty()) runs.push_back(cur);
    std::vector<size_t> order(runs.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return runs[a].size() > runs[b].size(); });
    if (order.size() > size_t(max_parts)) order.resize(size_t(max_parts));
    std::sort(order.begin(), order.end());
    kernels->clear();
    bool retry = false;
    for (size_t ri : order) {
      auto k = std::make_unique<GpuDelegateKernel>(this, runs[ri]);
      int failed = -1;
      Status st = k->Build(sg, &failed);
      if (!st.ok()) {
        if (failed < 0) return st;
        reason[failed] = st.message();
        retry = true;
        break;
      }
      kernels->push_back(std::move(k));
    }
    if (retry) continue;
    info_.refused.clear();
    for (int ni : plan) {
      if (reason[ni].empty()) continue;
      const Node& n = sg.nodes()[ni];
      int code = n.op ? n.op->builtin_code : -1;
      info_.refused.push_back({ni, code, n.op ? n.op->name : "?", n.version, reason[ni]});
      Log(1, "WARNING: op code #" + std::to_string(code) + " cannot be handled by this delegate. (" +
                 (n.op ? n.op->name : "?") + " v" + std::to_string(n.version) + ", node " + std::to_string(ni) + ": " +
                 reason[ni] + ")");
    }
    info_.partitions = int(kernels->size());
    info_.partition_sizes.clear();
    for (auto& k : *kernels) info_.partition_sizes.push_back(int(k->nodes.size()));
    if (runs.size() > order.size())
      Log(0, "INFO: " + std::to_string(runs.size()) + " GPU-capable partitions; delegating the largest " +
                 std::to_string(order.size()) + " (max_delegated_partitions)");
    return OkStatus();
  }
  return Internal("GPU partitioning did not converge");
}

std::vector<Dims> GpuDelegateKernel::InputShapes(Subgraph& sg) const {
  std::vector<Dims> out;
  for (int t : inputs) out.push_back(sg.tensor(t).shape);
  return out;
}

Status GpuDelegateKernel::Build(Subgraph& sg, int* failed_node) {
  GpuPartitionModel model;
  TFG_RETURN_IF_ERROR(BuildPartitionModel(sg, nodes, delegate_->precision(), delegate_->caps(), &model, failed_node));
  inputs.clear();
  outputs.clear();
  for (auto& b : model.inputs) inputs.push_back(b.cpu_tensor);
  for (auto& b : model.outputs) outputs.push_back(b.cpu_tensor);
  auto rt = std::make_unique<PartitionRuntime>();
  TFG_RETURN_IF_ERROR(rt->Init(delegate_->context(), delegate_->cache(), std::move(model), failed_node));
  if (delegate_->sustained_speed()) TFG_RETURN_IF_ERROR(rt->TuneWorkGroups(delegate_->caps().max_work_group_size));
  runtime_ = std::move(rt);
  built_shapes_ = InputShapes(sg);
  return OkStatus();
}

Status GpuDelegateKernel::Prepare(Subgraph& sg) {
  for (int n : nodes) TFG_RETURN_IF_ERROR(sg.PrepareDelegatedNode(n));
  if (InputShapes(sg) != built_shapes_) {
    // New shapes: the support check is the only gate, so it runs again before the rebuild.
    for (int n : nodes) {
      std::string why = delegate_->CheckNodePublic(sg, sg.nodes()[n]);
      if (!why.empty())
        return Unimplemented("GPU delegate: after the resize, node " + std::to_string(n) + " (" +
                             sg.nodes()[n].op->name + ") can no longer run on the GPU: " + why +
                             "; resize before ModifyGraphWithDelegate to let it fall back to the CPU");
    }
    int failed = -1;
    Status st = Build(sg, &failed);
    if (!st.ok()) return Status(st.code(), "GPU delegate: rebuilding after a resize failed: " + st.message());
  }
  return OkStatus();
}

Status GpuDelegateKernel::Eval(Subgraph& sg) {
  bool defer = delegate_->defer_outputs();
  TFG_RETURN_IF_ERROR(runtime_->Run(sg, delegate_->wait_mode(), defer, delegate_->profiling() || sg.profiling));
  if (defer) {
    // Only graph outputs may stay in flight; anything a later CPU node reads must be ready.
    bool feeds_cpu = false;
    for (int o : outputs)
      if (std::find(sg.outputs().begin(), sg.outputs().end(), o) == sg.outputs().end()) feeds_cpu = true;
    if (feeds_cpu) {
      TFG_RETURN_IF_ERROR(runtime_->Sync(delegate_->wait_mode()));
    } else {
      for (int o : outputs) sg.tensor(o).data_is_stale = true;
    }
  }
  return OkStatus();
}

Status GpuDelegateKernel::CopyToHost(Subgraph& sg, int) {
  TFG_RETURN_IF_ERROR(runtime_->Sync(delegate_->wait_mode()));
  for (int o : outputs) sg.tensor(o).data_is_stale = false;
  return OkStatus();
}

}  // namespace
}  // namespace gpu

GpuDelegateInfo GetGpuDelegateInfo(const TfLiteDelegate* d) {
  auto* g = dynamic_cast<const gpu::GpuDelegate*>(d);
  return g ? g->info() : GpuDelegateInfo();
}

Status GpuDelegateInit(TfLiteDelegate* d) {
  auto* g = dynamic_cast<gpu::GpuDelegate*>(d);
  if (!g) return InvalidArgument("not a GPU delegate");
  return g->Init();
}

void GpuDelegateMarkDeleted(TfLiteDelegate* d) {
  if (auto* g = dynamic_cast<gpu::GpuDelegate*>(d)) g->MarkDeleted();
}

bool GpuDelegateCacheState(TfLiteDelegate* d, std::string* dir, std::string* refused, int counts[6]) {
  auto* g = dynamic_cast<gpu::GpuDelegate*>(d);
  if (!g || !g->cache()) return false;
  const cl::ProgramCache& c = *g->cache();
  *dir = c.disk_dir();
  *refused = c.refused_reason();
  const cl::ProgramCacheStats& s = c.stats();
  int v[6] = {s.memory_hits, s.disk_hits, s.source_builds, s.disk_writes, s.disk_rejects, s.disk_write_errors};
  for (int i = 0; i < 6; ++i) counts[i] = v[i];
  return true;
}

Status ListGpuDevices(std::vector<GpuDeviceDescription>* out) {
  out->clear();
  auto devs = cl::ListDevices();
  if (!devs.ok()) return devs.status();
  for (const cl::DeviceInfo& d : devs.value()) {
    GpuDeviceDescription x;
    x.index = d.index;
    x.platform = d.platform_name;
    x.platform_version = d.platform_version;
    x.name = d.name;
    x.vendor = d.vendor;
    x.type = cl::DeviceTypeName(d.type);
    x.driver_version = d.driver_version;
    x.device_version = d.device_version;
    x.fp16 = d.fp16;
    x.global_mem_bytes = d.global_mem_bytes;
    x.compute_units = d.compute_units;
    x.max_work_group_size = d.max_work_group_size;
    x.source = d.platform_source;
    out->push_back(std::move(x));
  }
  return OkStatus();
}

Status SelectGpuDevice(const std::string& spec, int* index) {
  auto d = cl::SelectDevice(spec);
  if (!d.ok()) return d.status();
  *index = d.value().index;
  return OkStatus();
}

}  // namespace tflite_gpu

TfLiteGpuDelegateOptionsV2 TfLiteGpuDelegateOptionsV2Default() {
  TfLiteGpuDelegateOptionsV2 o{};
  o.is_precision_loss_allowed = 0;
  o.inference_preference = TFLITE_GPU_INFERENCE_PREFERENCE_FAST_SINGLE_ANSWER;
  o.inference_priority1 = TFLITE_GPU_INFERENCE_PRIORITY_MAX_PRECISION;
  o.inference_priority2 = TFLITE_GPU_INFERENCE_PRIORITY_AUTO;
  o.inference_priority3 = TFLITE_GPU_INFERENCE_PRIORITY_AUTO;
  o.experimental_flags = TFLITE_GPU_EXPERIMENTAL_FLAGS_ENABLE_QUANT;
  o.max_delegated_partitions = 1;
  o.wait_type = TFLGpuDelegateWaitTypePassive;
  return o;
}

TfLiteDelegate* TfLiteGpuDelegateV2Create(const TfLiteGpuDelegateOptionsV2* options) {
  TfLiteGpuDelegateOptionsV2 o = options ? *options : TfLiteGpuDelegateOptionsV2Default();
  return new tflite_gpu::gpu::GpuDelegate(o);
}

void TfLiteGpuDelegateV2Delete(TfLiteDelegate* delegate) { delete delegate; }

TFLGpuDelegateOptions TFLGpuDelegateOptionsDefault() {
  TFLGpuDelegateOptions o{};
  o.allow_precision_loss = false;
  o.wait_type = TFLGpuDelegateWaitTypePassive;
  o.enable_quantization = true;
  return o;
}

TfLiteDelegate* TFLGpuDelegateCreate(const TFLGpuDelegateOptions* options) {
  TFLGpuDelegateOptions m = options ? *options : TFLGpuDelegateOptionsDefault();
  TfLiteGpuDelegateOptionsV2 o = TfLiteGpuDelegateOptionsV2Default();
  o.is_precision_loss_allowed = m.allow_precision_loss ? 1 : 0;
  o.wait_type = m.wait_type;
  if (!m.enable_quantization) o.experimental_flags &= ~int64_t(TFLITE_GPU_EXPERIMENTAL_FLAGS_ENABLE_QUANT);
  return TfLiteGpuDelegateV2Create(&o);
}

void TFLGpuDelegateDelete(TfLiteDelegate* delegate) { delete delegate; }
