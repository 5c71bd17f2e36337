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
// Buffer binding (TfLiteGpuDelegateBindBufferToTensor / TFLGpuDelegateBindMetalBufferToTensor,
// after ModifyGraphWithDelegate as Metal's): a user's cl_mem on the delegate's context replaces the
// host copy of a partition input (a graph input no CPU node reads) or output. Checked at bind
// time: the tensor is a partition boundary, its type can be bound (FLOAT32, FLOAT16, or a
// quantized activation bound as its dequantized float values), the buffer is a buffer of the
// delegate's context and holds the whole tensor (4 bytes per value, 2 for float16, which needs
// precision loss allowed). A rebuild after a resize drops the bindings; the next invoke then
// fails saying so until the tensor is bound again or unbound. While bound, the tensor's
// buffer_handle is set (TFLite's rule: its data comes from the handle), so host writes to it
// (set_tensor, TfLiteTensorCopyFromBuffer) are refused and tensor() views are read-only.
// Outputs left on the device: graph outputs no CPU node reads are not read back at invoke when
// the interpreter allows buffer-handle outputs (SetAllowBufferHandleOutput) — bound or not;
// they are marked stale and CopyToHost reads them on request.
// Precision: F32 unless precision loss is allowed (is_precision_loss_allowed, or a first
// non-AUTO priority of MIN_LATENCY / MIN_MEMORY_USAGE); then F16 where the device has
// cl_khr_fp16, else F32_F16. Both fp16 modes store tensors and weights in half and compute in
// float, so accumulations never overflow in fp16.
#include "tflite_gpu/gpu_delegate.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include "gpu/cl/device.h"
#include "gpu/cl/program_cache.h"
#include "gpu/cl/runtime.h"
#include "gpu/cuda_graph.h"
#include "gpu/gpu_op.h"
#include "gpu/partition_model.h"
#include "gpu/partition_runtime.h"
#include "gpu/serialization.h"
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
class GpuDelegateKernel;

// The kernels a delegate made, so that a bind call finds the partition of a tensor. Shared by the
// delegate and its kernels: a kernel may outlive the delegate (or the reverse) without a dangling
// pointer.
struct KernelRegistry {
  std::mutex mu;
  std::vector<GpuDelegateKernel*> kernels;
  Subgraph* subgraph = nullptr;  // of the latest Partition (the interpreter bind calls refer to)
  bool applied = false;
};

class GpuDelegateKernel : public DelegateKernel {
 public:
  GpuDelegateKernel(GpuDelegate* d, std::vector<int> nodes);
  ~GpuDelegateKernel() override;
  Status Build(Subgraph& sg, int* failed_node);
  // Buffer binding of tensor `t` (mem null: unbind). NotFound when t is no boundary of this partition.
  Status Bind(int t, cl_mem mem, bool half);
  Subgraph* subgraph() const { return sg_; }
  Status Prepare(Subgraph& sg) override;
  Status Eval(Subgraph& sg) override;
  Status CopyToHost(Subgraph& sg, int index) override;
  std::string name() const override { return "TfLiteGpuDelegateV2"; }
  std::vector<KernelTime> DeviceTimes() const override {
    std::vector<KernelTime> out;
    if (runtime_)
      for (auto& k : runtime_->kernel_times()) out.push_back({k.node, k.name, k.us, k.kernel});
    return out;
  }
  PartitionRuntime& runtime() { return *runtime_; }
  uint8_t* HostMemory(int tensor, size_t bytes) override;
  // Adds this partition's CUDA graph runs to *runs; sets *refused (when empty) to why it was
  // refused, and *programmatic when its graph uses programmatic dependent launches.
  void CudaGraphState(uint64_t* runs, std::string* refused, bool* programmatic);

 private:
  std::vector<Dims> InputShapes(Subgraph& sg) const;
  GpuDelegate* delegate_;
  std::shared_ptr<KernelRegistry> registry_;
  std::shared_ptr<cl::Context> ctx_;  // the delegate's (host_ unmaps on its queue)
  Subgraph* sg_ = nullptr;
  // Pinned host memory of boundary tensors (HostMemory), per tensor; kept across rebuilds while
  // large enough, freed with the kernel, i.e. with the interpreter's subgraph.
  std::map<int, std::unique_ptr<cl::HostBuffer>> host_;
  std::unique_ptr<PartitionRuntime> runtime_;
  std::vector<Dims> built_shapes_;
  std::vector<bool> host_needed_;  // per output: a node outside the partition reads it
  std::vector<bool> read_back_;    // Eval's per-output flags (a member: no allocation per invoke)
  std::mutex mu_;                  // bind vs invoke / rebuild
  struct BindingInfo { bool input; int boundary; bool half; };
  std::map<int, BindingInfo> bound_;     // tensor -> binding
  std::map<int, std::string> dropped_;   // tensor -> why its binding was dropped (resize)
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

  GpuDelegateInfo info() const;
  std::shared_ptr<cl::Context> context() { return ctx_; }
  const std::shared_ptr<KernelRegistry>& registry() const { return registry_; }
  Status BindBuffer(int tensor, cl_mem mem, bool half);
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
  ModelSerializer* serializer() { return serializer_.get(); }  // null: serialization off
  GpuSerializationStats serialization_stats() const {
    GpuSerializationStats s = serializer_ ? serializer_->stats() : GpuSerializationStats();
    s.disabled_reason = serialization_disabled_;
    return s;
  }

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
  std::shared_ptr<KernelRegistry> registry_ = std::make_shared<KernelRegistry>();
  std::unique_ptr<ModelSerializer> serializer_;
  std::string serialization_disabled_;
};

Status GpuDelegate::InitLocked() {
  std::unique_ptr<cl::Context> ctx;
  if (opts_.cl_context) {
    TFG_ASSIGN_OR_RETURN(ctx, cl::Context::FromRaw(opts_.cl_context, opts_.cl_queue,
                                                   /*profiling_if_created=*/opts_.enable_profiling != 0));
  } else {
    auto dev = cl::SelectDevice(device_spec_);
    if (!dev.ok()) return Unavailable("GPU delegate unavailable: " + dev.status().message());
    // A plain queue unless the delegate profiles every invoke: the context switches to a profiling
    // queue of its own for work-group tuning and for invokes under op profiling (benchmark
    // --enable_op_profiling), and back (cl::Context::UseProfiling). Measured on an H100, b1 fp32,
    // interleaved in one process: MobileNet v1/v2 and the six real-shaped zoo models 0.89-0.97x the
    // wall of an always-profiling queue (geomean 0.93x): the driver's enqueue costs less there.
    auto c = cl::Context::Create(dev.value(), /*profiling=*/opts_.enable_profiling != 0);
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
  caps_.compute_units = int(d.compute_units);
  caps_.is_gpu = d.type == cl::DeviceType::kGpu;
  caps_.vendor = d.vendor;
  caps_.nv_compute_capability = d.nv_compute_capability;
  // Invokes on a caller's queue always launch through OpenCL (PartitionRuntime::CudaEligible).
  caps_.cuda_graph = ctx_->owns_queue() && cuda::DeviceOf(*ctx_).ok();
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
  serializer_ = MakeModelSerializer(opts_, serialization_dir_, model_token_, op_filter_, precision_, caps_, d,
                                    cache_->refused_reason(), &serialization_disabled_);
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
  for (const std::vector<int32_t>* v : {&n.inputs, &n.outputs})
    for (int t : *v)
      if (t >= 0 && sg.tensor(t).type == DType::kString) return "STRING tensors run on the CPU";
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
    {
      std::lock_guard<std::mutex> l(registry_->mu);
      registry_->subgraph = &sg;
      registry_->applied = true;
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
  // Serialization (serialization.h): a stored entry replaces codegen, compilation, weight
  // transformation and tuning; an entry the runtime cannot use is rejected and rebuilt.
  ModelSerializer* ser = delegate_->serializer();
  std::string key, why;
  if (ser) key = ser->PartitionKey(sg, nodes, &why);
  std::unique_ptr<PartitionRuntime> rt;
  for (int attempt = 0; attempt < 2 && !rt; ++attempt) {
    GpuPartitionModel model;
    bool tuned = false;
    bool loaded = attempt == 0 && !key.empty() && ser->Load(key, sg, nodes, delegate_->cache(), &model, &tuned);
    if (!loaded)
      TFG_RETURN_IF_ERROR(BuildPartitionModel(sg, nodes, delegate_->precision(), delegate_->caps(), &model, failed_node));
    inputs.clear();
    outputs.clear();
    for (auto& b : model.inputs) inputs.push_back(b.cpu_tensor);
    for (auto& b : model.outputs) outputs.push_back(b.cpu_tensor);
    auto r = std::make_unique<PartitionRuntime>();
    Status st = r->Init(delegate_->context(), delegate_->cache(), std::move(model), failed_node);
    if (st.ok() && delegate_->sustained_speed() && !tuned) st = r->TuneWorkGroups(delegate_->caps().max_work_group_size);
    if (!st.ok() && loaded) {
      ser->RejectLoaded(key, "the runtime refused it: " + st.message());
      *failed_node = -1;
      continue;
    }
    TFG_RETURN_IF_ERROR(st);
    if (!loaded && !key.empty()) ser->Save(key, r->model(), delegate_->sustained_speed(), delegate_->cache());
    rt = std::move(r);
  }
  runtime_ = std::move(rt);
  built_shapes_ = InputShapes(sg);
  sg_ = &sg;
  std::set<int> mine(nodes.begin(), nodes.end());
  host_needed_.assign(outputs.size(), false);
  for (const Node& n : sg.nodes()) {
    if (mine.count(n.index) || n.folded) continue;
    for (size_t j = 0; j < outputs.size(); ++j)
      if (std::find(n.inputs.begin(), n.inputs.end(), outputs[j]) != n.inputs.end()) host_needed_[j] = true;
  }
  for (size_t j = 0; j < outputs.size(); ++j)
    if (std::find(sg.outputs().begin(), sg.outputs().end(), outputs[j]) == sg.outputs().end()) host_needed_[j] = true;
  return OkStatus();
}

GpuDelegateKernel::GpuDelegateKernel(GpuDelegate* d, std::vector<int> nodes)
    : delegate_(d), registry_(d->registry()), ctx_(d->context()) {
  this->nodes = std::move(nodes);
  std::lock_guard<std::mutex> l(registry_->mu);
  registry_->kernels.push_back(this);
}

GpuDelegateKernel::~GpuDelegateKernel() {
  {
    std::lock_guard<std::mutex> l(registry_->mu);
    auto& v = registry_->kernels;
    v.erase(std::remove(v.begin(), v.end(), this), v.end());
  }
  // A deferred run (DO_NOT_WAIT), or one that failed half-way, may still be moving data between
  // the device and host memory: finish everything before that memory (host_, or the arena, which
  // the subgraph frees after its kernels) goes away.
  if (ctx_) (void)ctx_->Finish();
  host_.clear();
}

GpuDelegateInfo GpuDelegate::info() const {
  GpuDelegateInfo i = info_;
  i.profiling_queue = ctx_ && ctx_->profiling();
  std::lock_guard<std::mutex> l(registry_->mu);
  for (GpuDelegateKernel* k : registry_->kernels)
    k->CudaGraphState(&i.cuda_graph_runs, &i.cuda_graph_refused, &i.cuda_graph_programmatic);
  return i;
}

void GpuDelegateKernel::CudaGraphState(uint64_t* runs, std::string* refused, bool* programmatic) {
  std::lock_guard<std::mutex> l(mu_);
  if (!runtime_) return;
  *runs += runtime_->cuda_graph_runs();
  *programmatic = *programmatic || runtime_->cuda_graph_programmatic();
  if (refused->empty()) *refused = runtime_->cuda_graph_refused();
}

uint8_t* GpuDelegateKernel::HostMemory(int t, size_t bytes) {
  std::lock_guard<std::mutex> l(mu_);
  if (!ctx_ || bytes == 0 || !env::PinnedHost()) {
    host_.erase(t);
    return nullptr;
  }
  auto it = host_.find(t);
  if (it != host_.end() && it->second->size() >= bytes) return it->second->data();
  if (it != host_.end()) host_.erase(it);
  auto h = cl::HostBuffer::Create(ctx_, bytes);
  // Not fatal: the tensor goes to the arena (pageable memory, staged copies).
  if (!h.ok() || reinterpret_cast<uintptr_t>(h.value()->data()) % 64 != 0) return nullptr;
  uint8_t* p = h.value()->data();
  host_[t] = std::move(h.value());
  return p;
}

Status GpuDelegateKernel::Bind(int t, cl_mem mem, bool half) {
  std::lock_guard<std::mutex> l(mu_);
  bool is_input = false;
  int boundary = -1;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i] == t) { is_input = true; boundary = int(i); }
  for (size_t j = 0; j < outputs.size() && boundary < 0; ++j)
    if (outputs[j] == t) boundary = int(j);
  if (boundary < 0) return NotFound("not a boundary of this partition");
  const Tensor& tensor = sg_->tensor(t);
  const std::string who = "tensor " + std::to_string(t) + " ('" + tensor.name + "')";
  if (!mem) {  // unbind
    runtime_->Unbind(is_input, boundary);
    bound_.erase(t);
    dropped_.erase(t);
    sg_->tensor(t).buffer_handle = -1;
    return OkStatus();
  }
  if (is_input) {
    if (std::find(sg_->inputs().begin(), sg_->inputs().end(), t) == sg_->inputs().end())
      return InvalidArgument("cannot bind " + who + ": it is a GPU partition input computed by a CPU node, not a "
                             "model input (binding it would replace the CPU node's result)");
    std::set<int> mine(nodes.begin(), nodes.end());
    for (const Node& n : sg_->nodes())
      if (!mine.count(n.index) && !n.folded && std::find(n.inputs.begin(), n.inputs.end(), t) != n.inputs.end())
        return InvalidArgument("cannot bind " + who + ": node " + std::to_string(n.index) + " (" +
                               (n.op ? n.op->name : "?") + "), outside the GPU partition, reads it from host memory");
  }
  const bool quant = IsQuantizedActivation(tensor);
  if (tensor.type != DType::kFloat32 && tensor.type != DType::kFloat16 && !quant)
    return InvalidArgument("cannot bind " + who + ": its type " + DTypeName(tensor.type) +
                           " cannot be bound (FLOAT32, FLOAT16 and quantized tensors can; quantized ones as their "
                           "dequantized float values)");
  if (half && delegate_->precision() == Precision::kF32)
    return InvalidArgument("cannot bind a float16 buffer to " + who + ": the delegate computes in F32; allow precision "
                           "loss (is_precision_loss_allowed / allow_precision_loss) to bind float16 buffers, or bind "
                           "a float32 buffer");
  const size_t need = size_t(std::max<int64_t>(0, tensor.num_elements())) * (half ? 2 : 4);
  auto buf = cl::Buffer::Adopt(*delegate_->context(), mem);
  if (!buf.ok()) return Status(buf.status().code(), "cannot bind " + who + ": " + buf.status().message());
  if (buf.value().size() < need)
    return InvalidArgument("cannot bind " + who + ": the buffer has " + std::to_string(buf.value().size()) +
                           " bytes, the tensor " + DimsToString(tensor.shape) + " needs " + std::to_string(need) +
                           " (BHWC " + (half ? "float16" : "float32") + ")");
  TFG_RETURN_IF_ERROR(runtime_->Bind(is_input, boundary, std::move(buf.value()), half, delegate_->cache()));
  bound_[t] = {is_input, boundary, half};
  dropped_.erase(t);
  // TFLite's rule: a tensor with a buffer handle takes its data from the handle. Host writes to it
  // (set_tensor, TfLiteTensorCopyFromBuffer) are refused while bound instead of being ignored.
  sg_->tensor(t).buffer_handle = t;
  return OkStatus();
}

Status GpuDelegate::BindBuffer(int t, cl_mem mem, bool half) {
  if (deleted_) return FailedPrecondition("the GPU delegate was already deleted (TfLiteGpuDelegateV2Delete / close())");
  std::lock_guard<std::mutex> l(registry_->mu);
  if (!registry_->applied || !registry_->subgraph)
    return FailedPrecondition("bind buffers after ModifyGraphWithDelegate (modify_graph_with_delegate, or the "
                              "interpreter's experimental_delegates): this delegate has not been applied to a model yet");
  Subgraph& sg = *registry_->subgraph;
  if (t < 0 || size_t(t) >= sg.tensors_size())
    return OutOfRange("tensor index " + std::to_string(t) + " out of range (the model has " +
                      std::to_string(sg.tensors_size()) + " tensors)");
  for (GpuDelegateKernel* k : registry_->kernels) {
    if (k->subgraph() != &sg) continue;
    Status st = k->Bind(t, mem, half);
    if (st.code() != StatusCode::kNotFound) return st;
  }
  const Tensor& tensor = sg.tensor(t);
  std::string who = "tensor " + std::to_string(t) + " ('" + tensor.name + "')";
  if (!mem) return OkStatus();  // unbinding a tensor that was never bound
  std::string why = "it is read and written by CPU nodes only";
  if (tensor.is_const) why = "it is a constant";
  for (GpuDelegateKernel* k : registry_->kernels)
    for (int n : k->nodes)
      for (int o : sg.nodes()[n].outputs)
        if (o == t) why = "it is internal to a GPU partition (it lives in GPU memory in the delegate's own layout)";
  if (registry_->kernels.empty()) why = "the delegate took no node of this model";
  return InvalidArgument("cannot bind " + who + ": it is not an input or output of a GPU-delegated partition (" + why + ")");
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
    std::lock_guard<std::mutex> l(mu_);
    int failed = -1;
    Status st = Build(sg, &failed);
    if (!st.ok()) return Status(st.code(), "GPU delegate: rebuilding after a resize failed: " + st.message());
    for (auto& b : bound_)
      dropped_[b.first] = "the OpenCL buffer bound to tensor " + std::to_string(b.first) + " ('" + sg.tensor(b.first).name +
                          "') was unbound when the graph was re-prepared after a resize (its shape is now " +
                          DimsToString(sg.tensor(b.first).shape) +
                          "): bind a buffer of the new size (bind_buffer_to_tensor) or unbind it (None) before invoking";
    for (auto& b : bound_) sg.tensor(b.first).buffer_handle = -1;
    bound_.clear();
  }
  return OkStatus();
}

Status GpuDelegateKernel::Eval(Subgraph& sg) {
  std::lock_guard<std::mutex> l(mu_);
  if (!dropped_.empty()) return FailedPrecondition(dropped_.begin()->second);
  bool defer = delegate_->defer_outputs();
  // Outputs a node outside the partition reads are always read back; graph outputs stay on the
  // device when the interpreter allows buffer-handle outputs.
  std::vector<bool>& read_back = read_back_;
  read_back.resize(outputs.size());
  bool feeds_cpu = false;
  for (size_t j = 0; j < outputs.size(); ++j) {
    read_back[j] = host_needed_[j] || !sg.allow_buffer_handle_output;
    feeds_cpu = feeds_cpu || host_needed_[j];
  }
  TFG_RETURN_IF_ERROR(runtime_->Run(sg, delegate_->wait_mode(), defer, delegate_->profiling() || sg.profiling, read_back));
  // Only graph outputs may stay in flight; anything a later CPU node reads must be ready.
  if (defer && feeds_cpu) TFG_RETURN_IF_ERROR(runtime_->Sync(delegate_->wait_mode()));
  for (size_t j = 0; j < outputs.size(); ++j)
    sg.tensor(outputs[j]).data_is_stale = !read_back[j] || (defer && !feeds_cpu);
  return OkStatus();
}

Status GpuDelegateKernel::CopyToHost(Subgraph& sg, int index) {
  std::lock_guard<std::mutex> l(mu_);
  for (size_t j = 0; j < outputs.size(); ++j)
    if (outputs[j] == index) TFG_RETURN_IF_ERROR(runtime_->CopyOutputToHost(sg, int(j), delegate_->wait_mode()));
  TFG_RETURN_IF_ERROR(runtime_->Sync(delegate_->wait_mode()));
  for (size_t j = 0; j < outputs.size(); ++j)
    if (runtime_->output_on_host(int(j))) sg.tensor(outputs[j]).data_is_stale = false;
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

bool GpuDelegateTransferStats(TfLiteDelegate* d, GpuTransferStats* out) {
  auto* g = dynamic_cast<gpu::GpuDelegate*>(d);
  if (!g || !out || !g->context()) return false;
  cl::TransferStats t = g->context()->transfers();
  out->host_to_device = t.host_to_device;
  out->device_to_host = t.device_to_host;
  out->host_to_device_bytes = t.host_to_device_bytes;
  out->device_to_host_bytes = t.device_to_host_bytes;
  out->pinned_host_buffers = t.host_buffers;
  out->pinned_host_bytes = t.host_buffer_bytes;
  return true;
}

Status GpuDelegateBindBuffer(TfLiteDelegate* d, int tensor_index, void* cl_buffer, TfLiteType type) {
  auto* g = dynamic_cast<gpu::GpuDelegate*>(d);
  if (!g) return InvalidArgument("not a GPU delegate (TfLiteGpuDelegateV2Create / TFLGpuDelegateCreate make one)");
  if (type != kTfLiteFloat32 && type != kTfLiteFloat16)
    return InvalidArgument("a bound buffer holds float32 or float16 values (type " + std::to_string(int(type)) +
                           " given)");
  return g->BindBuffer(tensor_index, static_cast<cl::cl_mem>(cl_buffer), type == kTfLiteFloat16);
}

Status GpuDelegateGetClContext(TfLiteDelegate* d, void** context, void** queue) {
  auto* g = dynamic_cast<gpu::GpuDelegate*>(d);
  if (!g) return InvalidArgument("not a GPU delegate");
  TFG_RETURN_IF_ERROR(g->Init());
  if (context) *context = g->context()->context();
  if (queue) *queue = g->context()->queue();
  return OkStatus();
}

bool GpuDelegateSerializationState(TfLiteDelegate* d, GpuSerializationStats* out) {
  auto* g = dynamic_cast<gpu::GpuDelegate*>(d);
  if (!g) return false;
  *out = g->serialization_stats();
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

TfLiteStatus TfLiteGpuDelegateBindBufferToTensorWithType(TfLiteDelegate* delegate, cl_mem buffer, int tensor_index,
                                                         TfLiteType type) {
  tflite_gpu::Status st = tflite_gpu::GpuDelegateBindBuffer(delegate, tensor_index, buffer, type);
  if (st.ok()) return kTfLiteOk;
  tflite_gpu::Log(2, "ERROR: TfLiteGpuDelegateBindBufferToTensor: " + st.message());
  return kTfLiteError;
}

TfLiteStatus TfLiteGpuDelegateBindBufferToTensor(TfLiteDelegate* delegate, cl_mem buffer, int tensor_index) {
  return TfLiteGpuDelegateBindBufferToTensorWithType(delegate, buffer, tensor_index, kTfLiteFloat32);
}

bool TFLGpuDelegateBindMetalBufferToTensor(TfLiteDelegate* delegate, int tensor_index, void* buffer) {
  tflite_gpu::Status st = tflite_gpu::GpuDelegateBindBuffer(delegate, tensor_index, buffer, kTfLiteFloat32);
  if (!st.ok()) tflite_gpu::Log(2, "ERROR: TFLGpuDelegateBindMetalBufferToTensor: " + st.message());
  return st.ok();
}

TfLiteStatus TfLiteGpuDelegateGetClContext(TfLiteDelegate* delegate, void** cl_context, void** cl_command_queue) {
  tflite_gpu::Status st = tflite_gpu::GpuDelegateGetClContext(delegate, cl_context, cl_command_queue);
  if (st.ok()) return kTfLiteOk;
  tflite_gpu::Log(2, "ERROR: TfLiteGpuDelegateGetClContext: " + st.message());
  return kTfLiteError;
}
