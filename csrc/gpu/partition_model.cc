#include "gpu/partition_model.h"

#include "gpu/precision_plan.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

#include "runtime/env.h"
#include "runtime/subgraph.h"
#include "tflite_gpu/gpu_delegate.h"  // Log

namespace tflite_gpu::gpu {
namespace {

// The vector reads and writes of tensors and weights. Each is a buffer of its own (no sub-buffers),
// and every LOAD4/STORE4 index counts whole float4 / half4 elements from its base, so the address is
// aligned to the vector: floats are read through a float4*, instead of vload4, which the OpenCL
// built-in may only assume element-aligned; on NVIDIA (TypedHalfReads) also 4 halves through a
// uint2* (converted in registers by vload_half4 from private memory), instead of vload_half4. NVIDIA's compiler turns
// vload4 into 4 ld.global.f32 and vload_half4 into 4 ld.global.u16 (PTX read on an H100), the typed
// reads into one ld.global.v4.f32 / ld.global.u64. Measured on an H100 (CUDA graph launches, CUPTI
// kernel times, batch 1): MobileNet v1 fp32 130.4 -> 124.9 us of kernels (the depthwise kernels
// 79.2 -> 69.8), v2 171.0 -> 164.0; fp16 storage v1 141.1 -> 121.5, v2 195.7 -> 184.7. On PoCL
// (this project's CI device, 2 CPU cores; batch 1 wall, interleaved): fp32 0.76x geomean (v1,
// v2, face_mesh, selfie), but the half path 1.10x (face_mesh, selfie, v2 in fp16 storage), so
// other devices keep vload_half4. TFLITE_GPU_VLOAD=1 keeps the built-ins (measuring).
std::string VectorAccess(bool typed_half) {
  std::string h;
  if (env::Vload() || !typed_half)
    h = "#define TFG_LH4_(p, i) vload_half4((i), (p))\n#define TFG_SH4_(p, i, v) vstore_half4((v), (i), (p))\n";
  else
    h = "float4 tfg_lh4_(__global const half* p, long i) { uint2 u = ((__global const uint2*)p)[i]; "
        "return vload_half4(0, (__private const half*)&u); }\n"
        "void tfg_sh4_(__global half* p, long i, float4 v) { uint2 u; vstore_half4(v, 0, (__private half*)&u); "
        "((__global uint2*)p)[i] = u; }\n"
        "#define TFG_LH4_(p, i) tfg_lh4_((p), (i))\n#define TFG_SH4_(p, i, v) tfg_sh4_((p), (i), (v))\n";
  if (env::Vload())
    return h + "#define TFG_LF4_(p, i) vload4((i), (p))\n#define TFG_SF4_(p, i, v) vstore4((v), (i), (p))\n";
  return h + "#define TFG_LF4_(p, i) (((__global const float4*)(p))[(i)])\n"
             "#define TFG_SF4_(p, i, v) (((__global float4*)(p))[(i)] = (v))\n";
}

// typed_half: VectorAccess's uint2 reads of halves (TypedHalfReads).
std::string PrecisionHeader(Precision p, bool typed_half) {
  if (p == Precision::kF32)
    return VectorAccess(typed_half) +
           "#define STORAGE float\n#define LOAD4(p, i) TFG_LF4_(p, i)\n#define STORE4(p, i, v) TFG_SF4_(p, i, v)\n"
           "#define LOAD1(p, i) ((p)[(i)])\n";
  return VectorAccess(typed_half) +
         "#define STORAGE half\n#define LOAD4(p, i) TFG_LH4_(p, i)\n#define STORE4(p, i, v) TFG_SH4_(p, i, v)\n"
         "#define LOAD1(p, i) vload_half((i), (p))\n";
}

// Per-tensor access macros of the model kernels (mixed storage): suffix F for a float tensor,
// H for a half one.
const char kAccessMacros[] =
    "#define LOAD4F(p, i) TFG_LF4_(p, i)\n#define STORE4F(p, i, v) TFG_SF4_(p, i, v)\n"
    "#define LOAD1F(p, i) ((p)[(i)])\n"
    "#define LOAD4H(p, i) TFG_LH4_(p, i)\n#define STORE4H(p, i, v) TFG_SH4_(p, i, v)\n"
    "#define LOAD1H(p, i) vload_half((i), (p))\n";

std::string Join(const std::string& code) {
  std::string out;
  for (char c : code) out += (c == '\n') ? ' ' : c;
  return out;
}

// How a host tensor type crosses a partition boundary (staging buffer <-> float on the device).
// Quantized tensors are dequantized on the way in and quantized on the way out (TFLite's
// QUANTIZE rounding: half to even of x * (1 / scale), saturating), so the device holds real
// values; integers without quantization parameters are held exactly.
struct BoundaryType {
  std::string cl_type;
  DType type;
  bool quant = false;
  float scale = 1.f, zp = 0.f;
  std::string Read(const std::string& i) const {
    switch (type) {
      case DType::kBool: return "(float)(src[" + i + "] != 0)";
      case DType::kFloat16: return "vload_half(" + i + ", src)";
      case DType::kFloat32: return "src[" + i + "]";
      default:
        if (quant) return "(((float)(src[" + i + "]) - " + FloatLiteral(zp) + ") * " + FloatLiteral(scale) + ")";
        return "(float)(src[" + i + "])";
    }
  }
  std::string Write(const std::string& i, const std::string& v) const {
    switch (type) {
      case DType::kBool: return "dst[" + i + "] = (uchar)(" + v + " != 0.0f)";
      case DType::kFloat16: return "vstore_half(" + v + ", " + i + ", dst)";
      case DType::kFloat32: return "dst[" + i + "] = " + v;
      default:
        if (quant)
          return "dst[" + i + "] = convert_" + cl_type + "_sat(rint(" + v + " * " + FloatLiteral(1.0f / scale) + ") + " +
                 FloatLiteral(zp) + ")";
        return "dst[" + i + "] = convert_" + cl_type + "_sat_rte(" + v + ")";
    }
  }
};

BoundaryType BoundaryTypeOf(const Tensor& tensor) {
  const DType t = tensor.type;
  BoundaryType b;
  switch (t) {
    case DType::kBool: b = {"uchar", t}; break;
    case DType::kInt8: b = {"char", t}; break;
    case DType::kUInt8: b = {"uchar", t}; break;
    case DType::kInt16: b = {"short", t}; break;
    case DType::kFloat16: b = {"half", t}; break;
    default: return {"float", DType::kFloat32};
  }
  if (IsQuantizedActivation(tensor)) {
    b.quant = true;
    b.scale = tensor.quant.scale[0];
    b.zp = tensor.quant.zero_point.empty() ? 0.f : float(tensor.quant.zero_point[0]);
  }
  return b;
}

// A boundary the host holds as plain float32 (no quantization): the only kind that can be direct
// (DirectBoundaries), its staging buffer holding the values the kernels compute on.
bool HostFloat32(const Tensor& t) { return t.type == DType::kFloat32 && !IsQuantizedActivation(t); }

// Boundary conversion kernels: BHWC host-typed `src` -> PHWC4 device tensor, and back. One item per
// (x, y, slice of a batch); `base` is the BHWC offset of the slice's first channel.
std::string ConversionHead(const BHWC& s, const std::string& params) {
  return "__kernel void main_function(" + params + ") {\n"
         "int x = get_global_id(0), y = get_global_id(1), bs = get_global_id(2);\n"
         "const int W = " + std::to_string(s.w) + ", H = " + std::to_string(s.h) + ", C = " + std::to_string(s.c) +
         ", S = " + std::to_string(s.slices()) + ", B = " + std::to_string(s.b) + ";\n"
         "if (x >= W || y >= H || bs >= S * B) return;\n"
         "int s = bs % S, b = bs / S;\n"
         "int base = ((b * H + y) * W + x) * C + s * 4;\n";
}

std::string ToDeviceSource(Precision p, bool typed_half, const BHWC& s, const BoundaryType& bt,
                           const std::string& snap) {
  auto lane = [&](int l) { return bt.Read("base + " + std::to_string(l)); };
  return PrecisionHeader(p, typed_half) +
         ConversionHead(s, "__global const " + bt.cl_type + "* src, __global STORAGE* dst") +
         "float4 v = (float4)(0.0f);\n"
         "if (s * 4 + 0 < C) v.x = " + lane(0) + ";\n if (s * 4 + 1 < C) v.y = " + lane(1) + ";\n"
         "if (s * 4 + 2 < C) v.z = " + lane(2) + ";\n if (s * 4 + 3 < C) v.w = " + lane(3) + ";\n" +
         (snap.empty() ? std::string() : snap + "\n") +
         "STORE4(dst, ((b * S + s) * H + y) * W + x, v);\n}\n";
}

std::string FromDeviceSource(Precision p, bool typed_half, const BHWC& s, const BoundaryType& bt) {
  return PrecisionHeader(p, typed_half) +
         ConversionHead(s, "__global const STORAGE* src, __global " + bt.cl_type + "* dst") +
         "float4 v = LOAD4(src, ((b * S + s) * H + y) * W + x);\n"
         "if (s * 4 + 0 < C) " + bt.Write("base + 0", "v.x") + ";\n if (s * 4 + 1 < C) " + bt.Write("base + 1", "v.y") + ";\n"
         "if (s * 4 + 2 < C) " + bt.Write("base + 2", "v.z") + ";\n if (s * 4 + 3 < C) " + bt.Write("base + 3", "v.w") + ";\n}\n";
}

// The coordinates a read at (b, y, x, s) takes in a tensor of `dims` (b, h, w, slices) when
// shifted by `off` (slices on the last axis), and (cond, unless null) where it must stay inside
// dims: shifted axes, and those on which the reading shape `view` is larger.
void ShiftedCoords(const int64_t off[4], const BHWC& view, const int64_t dims[4], std::string c[4], std::string* cond) {
  static const char* kCoord[4] = {"(b)", "(y)", "(x)", "(s)"};
  for (int ax = 0; ax < 4; ++ax) {
    c[ax] = off[ax] ? "(" + std::string(kCoord[ax]) + " - (" + std::to_string(off[ax]) + "))" : kCoord[ax];
    const int64_t vd = ax == 0 ? view.b : ax == 1 ? view.h : ax == 2 ? view.w : view.slices();
    if (cond && (off[ax] || vd > dims[ax]))
      *cond += std::string(cond->empty() ? "" : " && ") + "(uint)" + c[ax] + " < " + std::to_string(dims[ax]) + "u";
  }
}

// A placed output (TryPlace): its shift into the larger tensor (negative offsets, slices on the
// last axis), and its WRITE_ chain, where the ops fused before placement see the kernel's own
// coordinates and those after it (and the store) the larger tensor's.
void PlacedOffsets(const KernelBuilder::Arg& a, int64_t off[4]) {
  for (int ax = 0; ax < 4; ++ax) off[ax] = -(ax == 3 ? a.at[3] / 4 : a.at[ax]);
}
std::string PlacedPostOps(const KernelBuilder::Arg& a, const std::string& post_ops) {
  static const char* kW[4] = {"wb_", "wy_", "wx_", "ws_"};
  std::string shift;
  for (int ax = 0; ax < 4; ++ax) {
    const int64_t o = ax == 3 ? a.at[3] / 4 : a.at[ax];
    if (o) shift += std::string(kW[ax]) + " += " + std::to_string(o) + "; ";
  }
  const size_t split = std::min(a.post_split, post_ops.size());
  return post_ops.substr(0, split) + shift + post_ops.substr(split);
}

class Builder : public GpuBuildContext {
 public:
  Builder(Subgraph& sg, Precision p, const GpuDeviceCaps& caps, GpuPartitionModel* m)
      : sg_(sg), precision_(p), caps_(caps), m_(m) {
    if (p != Precision::kF32 && !env::Fp16AllHalf()) plan_ = PlanF32Storage(sg);
  }

  Status Run(const std::vector<int>& nodes, int* failed_node);

  // GpuBuildContext
  const Node& node() const override { return *node_; }
  const Tensor& cpu_input(int i) const override { return sg_.tensor(node_->inputs[i]); }
  const Tensor& cpu_output(int i) const override { return sg_.tensor(node_->outputs[i]); }
  bool has_input(int i) const override { return i < int(node_->inputs.size()) && node_->inputs[i] >= 0; }
  GpuTensorRef input(int i) override { return TensorFor(node_->inputs[i]); }
  GpuTensorRef output(int i) override { return TensorFor(node_->outputs[i]); }
  const std::vector<float>& const_input(int i) override {
    static const std::vector<float> kNone;
    if (!has_input(i)) return kNone;
    const int t = node_->inputs[i];
    auto it = const_values_.find(t);
    if (it != const_values_.end()) return it->second;
    std::vector<float> v;
    Status st = DequantizeConst(sg_.tensor(t), &v);
    if (!st.ok()) {
      // The support check refused such tensors already; a generator reading one gets zeros of
      // the right size rather than reading out of bounds.
      v.assign(size_t(std::max<int64_t>(0, sg_.tensor(t).num_elements())), 0.f);
    }
    return const_values_.emplace(t, std::move(v)).first->second;
  }
  KernelBuilder& NewKernel(const std::string& name) override {
    kbs_.emplace_back(new KernelBuilder(name));
    kb_node_.push_back(node_->index);
    return *kbs_.back();
  }
  GpuTensorRef NewTemp(const BHWC& shape) override {
    m_->tensors.push_back({shape, -1, -1});
    return {int(m_->tensors.size()) - 1, shape};
  }
  Precision precision() const override { return precision_; }
  const GpuDeviceCaps& caps() const override { return caps_; }
  int chain_input() const override { return chain_input_; }
  bool flat_readable(const GpuTensorRef& t) const override {
    if (inlined_.count(t.id)) return false;
    auto it = views_.find(t.id);
    if (it == views_.end()) return true;
    const BHWC& bs = m_->tensors[it->second.base].shape;
    return !it->second.off[1] && !it->second.off[2] && bs.h == t.shape.h && bs.w == t.shape.w;
  }
  bool computed(const GpuTensorRef& t) const override { return inlined_.count(t.id) > 0; }
  bool plain(const GpuTensorRef& t) const override {
    if (inlined_.count(t.id) || views_.count(t.id)) return false;
    if (!linear_in_.count(t.id)) return true;
    // A generator wants a direct boundary candidate's raw PHWC4 buffer (the tensor-core kernel,
    // float4 GEMM loads): BuildPartitionModel builds again with that input converted.
    plain_refused_.insert(m_->tensors[size_t(t.id)].cpu_tensor);
    return false;
  }
  mutable std::set<int> plain_refused_;  // interpreter tensors
  std::set<int> no_direct_;              // interpreter tensors kept in PHWC4 (second build)
  int chain_input_ = 0;

 private:
  GpuTensorRef TensorFor(int cpu) {
    auto it = gpu_of_cpu_.find(cpu);
    if (it != gpu_of_cpu_.end()) return {it->second, m_->tensors[it->second].shape};
    const Tensor& t = sg_.tensor(cpu);
    BHWC s;
    ToBHWC(t.shape, &s);
    GpuTensorDesc d{s, cpu, -1};
    if (t.is_const) {
      // Constant operand: convert BHWC (dequantized) -> PHWC4 once, on the host.
      std::vector<float> data(size_t(s.elements4()), 0.f);
      std::vector<float> values;
      if (!DequantizeConst(t, &values).ok()) values.assign(size_t(std::max<int64_t>(0, t.num_elements())), 0.f);
      const float* src = values.data();
      for (int b = 0; b < s.b; ++b)
        for (int y = 0; y < s.h; ++y)
          for (int x = 0; x < s.w; ++x)
            for (int c = 0; c < s.c; ++c)
              data[((size_t(b * s.slices() + c / 4) * s.h + y) * s.w + x) * 4 + c % 4] =
                  src[((size_t(b) * s.h + y) * s.w + x) * s.c + c];
      m_->consts.push_back(std::move(data));
      m_->const_exact.push_back(false);
      d.const_index = int(m_->consts.size()) - 1;
    }
    m_->tensors.push_back(d);
    int id = int(m_->tensors.size()) - 1;
    gpu_of_cpu_[cpu] = id;
    return {id, s};
  }

  bool FuseElementwise(const Node& n, const GpuOpSupport* g);
  bool TryView(const Node& n, const GpuOpSupport* g);
  bool TryPlace(const Node& n, const GpuOpSupport* g);
  bool TryInline(const Node& n, const GpuOpSupport* g);
  bool TrySnapAtInput(const Node& n);
  Status LinkInlined(size_t first_kb);
  // The tensor a GPU tensor's reads resolve to (itself unless it is a read view).
  int BaseOf(int gpu) const {
    auto it = views_.find(gpu);
    return it == views_.end() ? gpu : it->second.base;
  }
  void SnapOutputs(const Node& n, int chain_kb);
  Status Assemble();
  void PlanMemory();
  void ChooseStorage();
  std::string Source(KernelBuilder& kb, std::vector<GpuKernelArg>* args);

  Subgraph& sg_;
  Precision precision_;
  const GpuDeviceCaps& caps_;
  GpuPartitionModel* m_;
  F32StoragePlan plan_;  // fp16 modes: the tensors to store as float (precision_plan.h)
  const Node* node_ = nullptr;
  std::map<int, int> gpu_of_cpu_;
  std::map<int, std::vector<float>> const_values_;  // const_input cache (stable addresses)
  std::vector<std::unique_ptr<KernelBuilder>> kbs_;
  std::vector<int> kb_node_;
  std::map<int, int> producer_kb_;   // cpu tensor -> kernel builder whose first output it is
  std::map<int, int> consumers_;     // cpu tensor -> number of readers in the whole graph
  std::set<int> in_partition_outputs_;
  // Read views (see GpuReadView): view GPU tensor -> the tensor it reads, and the offsets
  // (channel offset in slices). Views have no buffer; Source binds their readers to the base.
  struct View {
    int base;
    int64_t off[4];
  };
  std::map<int, View> views_;
  // Computed tensors (GpuInlineFn): GPU tensor -> the node that makes it (no kernel, no buffer);
  // each kernel reading one computes it through a function: (kernel, arg name) -> the function's
  // parameters (the args the producer added) and its body.
  std::map<int, int> inlined_;
  struct InlineUse {
    std::vector<std::string> params;
    std::string body;
  };
  std::map<std::pair<const KernelBuilder*, std::string>, InlineUse> inline_uses_;
  // Direct boundaries (see DirectBoundaries): float32 partition inputs are built as candidates
  // (generators read them through the macros only: plain() is false), and the GPU tensors finally
  // kept in the host's BHWC layout in their boundary's staging buffer, tensor -> staging index.
  std::set<int> linear_in_;
  std::map<int, int> linear_;
  std::set<int> linear_half_;  // direct boundaries of tensors the fp16 modes would store as half
  void DirectBoundaries();
  bool IsLinear(int gpu) const { return linear_.count(gpu) > 0; }
};

// Extra multiply-adds one DEPTHWISE_CONV_2D + CONV_2D fusion may cost by default: MobileNet's
// pairs at batch 1 need 7-15M (224x224); at batch 32 they keep two kernels.
constexpr int64_t kDefaultInlineMacs = int64_t(1) << 25;
// Most times one depthwise value may be computed by the 1x1 conv's work groups (see TryInline and
// env.h's TFLITE_GPU_FUSION_DWPW_MAX_TIMES for the measurement) where kernels launch through
// OpenCL. Where they launch as a CUDA graph (GpuDeviceCaps::cuda_graph) the launch a fusion saves
// costs less than its recomputation: 0 there. Measured on an NVIDIA H100 (batch 1, interleaved in
// one process, two interpreters per setting, with ChooseSplitKSmall's tiles): CUDA graph, no
// fusion vs 2: geomean 0.94x fp32 and fp16 over v1, v2 and the six real-shaped zoo models
// (face_detector 0.89x, selfie 0.90x, hand 0.91-0.93x, v1 unchanged: no pair within 2); OpenCL
// launches (TFLITE_GPU_CUDA_GRAPH=0): 1.03-1.06x, so 2 stays there.
constexpr int64_t kDefaultDwPwMaxTimes = 2;
constexpr int64_t kDefaultDwPwMaxTimesCudaGraph = 0;

// A producer with GpuInlineFn whose only reader is a consumer that accepts computing it: no kernel,
// the consumer's kernel computes each value it reads, within the recomputation budget.
bool Builder::TryInline(const Node& n, const GpuOpSupport* g) {
  if (!g->inline_read) return false;
  // Levers: "dwpw" for the depthwise + 1x1 conv pairs, "tail" for a global average computed by
  // the classifier after it.
  const bool dwpw = std::string(n.op->name) == "DEPTHWISE_CONV_2D";
  if (env::FusionDisabled(dwpw ? "dwpw" : "tail")) return false;
  if (n.outputs.size() != 1 || n.outputs[0] < 0 || n.inputs.empty() || n.inputs[0] < 0) return false;
  const int t = n.outputs[0];
  if (consumers_[t] != 1 || in_partition_outputs_.count(t) || gpu_of_cpu_.count(t)) return false;
  // The reader, looking through RESHAPEs that keep the BHWC layout (aliases, see TryView).
  auto reader_of = [&](int tensor, int* input) -> const Node* {
    const Node* r = nullptr;
    for (int ni : m_->nodes) {
      const Node& c = sg_.nodes()[size_t(ni)];
      for (int i = 0; i < int(c.inputs.size()); ++i)
        if (c.inputs[i] == tensor) {
          r = &c;
          *input = i;
        }
    }
    return r;
  };
  int input = -1;
  const Node* reader = reader_of(t, &input);
  BHWC ts;
  if (!ToBHWC(sg_.tensor(t).shape, &ts)) return false;
  for (int hops = 0; hops < 4 && reader && reader->op->gpu && input == 0 && reader->outputs.size() == 1 &&
                     std::string(reader->op->name) == "RESHAPE" && !env::FusionDisabled("view");
       ++hops) {
    const int ro = reader->outputs[0];
    BHWC rs;
    if (ro < 0 || consumers_[ro] != 1 || in_partition_outputs_.count(ro) || !ToBHWC(sg_.tensor(ro).shape, &rs) || rs != ts ||
        IsQuantizedActivation(sg_.tensor(ro)) || IsQuantizedActivation(sg_.tensor(t)))
      return false;
    reader = reader_of(ro, &input);
  }
  if (!reader || reader->index <= n.index || !reader->op->gpu || !reader->op->gpu->accept_inline) return false;
  node_ = reader;
  const int64_t times = reader->op->gpu->accept_inline(*this, input);
  node_ = &n;
  if (times <= 0) return false;
  if (dwpw && times > env::FusionDwPwMaxTimes(caps_.cuda_graph ? kDefaultDwPwMaxTimesCudaGraph : kDefaultDwPwMaxTimes))
    return false;
  KernelBuilder probe("probe");
  std::string body;
  int64_t macs = 0;
  if (!g->inline_read(*this, probe, "p_", &body, &macs).ok() || macs <= 0) return false;
  BHWC s;
  if (!ToBHWC(sg_.tensor(t).shape, &s)) return false;
  const int64_t values = int64_t(s.b) * s.h * s.w * s.slices();
  const int64_t budget = env::FusionDwPwMaxMacs(kDefaultInlineMacs);
  if (values * macs > budget / times) return false;  // (times) x (macs per value) x values
  const GpuTensorRef out = output(0);
  inlined_[out.id] = n.index;
  return true;
}

// Kernels built since first_kb that read a computed tensor get its producer's code: the
// producer's inputs and constants join the kernel under a prefix, and READ_/LD_ of the computed
// input call a function (see Source).
Status Builder::LinkInlined(size_t first_kb) {
  const Node* self = node_;
  for (size_t k = first_kb; k < kbs_.size(); ++k) {
    KernelBuilder& kb = *kbs_[k];
    std::vector<std::pair<std::string, int>> reads;
    for (const auto& a : kb.args())
      if (a.kind == KernelBuilder::Arg::kIn && inlined_.count(a.tensor)) reads.push_back({a.name, a.tensor});
    for (const auto& r : reads) {
      const Node& prod = sg_.nodes()[size_t(inlined_[r.second])];
      node_ = &prod;
      const size_t before = kb.args().size();
      InlineUse use;
      int64_t macs = 0;
      const std::string prefix = "in_" + r.first + "_";
      Status st = prod.op->gpu->inline_read(*this, kb, prefix, &use.body, &macs);
      node_ = self;
      if (!st.ok()) return Status(st.code(), std::string(prod.op->name) + " computed in its reader: " + st.message());
      for (size_t i = before; i < kb.args().size(); ++i) use.params.push_back(kb.args()[i].name);
      // The output's quantization snap, then zero padding lanes (as WRITE_ leaves them).
      const Tensor& tt = sg_.tensor(prod.outputs[0]);
      if (IsQuantizedActivation(tt)) use.body += SnapCode(tt, "r_") + "\n";
      BHWC s;
      ToBHWC(tt.shape, &s);
      if (s.c % 4) {
        use.body += "if (s == " + std::to_string(s.slices() - 1) + ") {";
        for (int l = s.c % 4; l < 4; ++l) use.body += std::string(" r_.") + "xyzw"[l] + " = 0.0f;";
        use.body += " }\n";
      }
      inline_uses_[{&kb, r.first}] = std::move(use);
      kb.inlined_ops.push_back(prod.op->name);
    }
  }
  node_ = self;
  return OkStatus();
}

// A node whose inputs the kernels making them can write straight into its output (no kernel):
// each input must be the first output of exactly one kernel of this partition, read by nothing
// else, on the same quantization grid as the output.
bool Builder::TryPlace(const Node& n, const GpuOpSupport* g) {
  if (!g->place || env::FusionDisabled("place") || n.outputs.size() != 1 || n.outputs[0] < 0 || n.inputs.empty())
    return false;
  const Tensor& to = sg_.tensor(n.outputs[0]);
  std::vector<std::pair<int, KernelBuilder::Arg*>> targets;
  std::set<int> kernels;
  for (int t : n.inputs) {
    if (t < 0 || consumers_[t] != 1 || in_partition_outputs_.count(t)) return false;
    auto p = producer_kb_.find(t);
    auto gt = gpu_of_cpu_.find(t);
    if (p == producer_kb_.end() || gt == gpu_of_cpu_.end() || views_.count(gt->second)) return false;
    if (!kernels.insert(p->second).second) return false;
    const Tensor& ti = sg_.tensor(t);
    if (IsQuantizedActivation(ti) != IsQuantizedActivation(to)) return false;
    if (IsQuantizedActivation(to) && (ti.quant.scale != to.quant.scale || ti.quant.zero_point != to.quant.zero_point))
      return false;
    KernelBuilder::Arg* first = nullptr;
    for (auto& a : kbs_[p->second]->mutable_args())
      if (a.kind == KernelBuilder::Arg::kOut) {
        first = &a;
        break;
      }
    if (!first || first->tensor != gt->second || first->placed) return false;
    targets.push_back({p->second, first});
  }
  node_ = &n;
  std::vector<GpuReadView> at;
  if (!g->place(*this, &at) || at.size() != n.inputs.size()) return false;
  GpuTensorRef out = output(0);
  for (size_t i = 0; i < targets.size(); ++i) {
    if (at[i].before[3] % 4 != 0) return false;
    const BHWC& ls = targets[i].second->shape;
    const int64_t end[4] = {at[i].before[0] + ls.b, at[i].before[1] + ls.h, at[i].before[2] + ls.w, at[i].before[3] + ls.c};
    const int64_t lim[4] = {out.shape.b, out.shape.h, out.shape.w, out.shape.c};
    for (int a = 0; a < 4; ++a)
      if (at[i].before[a] < 0 || end[a] > lim[a]) return false;
  }
  for (size_t i = 0; i < targets.size(); ++i) {
    KernelBuilder::Arg& a = *targets[i].second;
    a.tensor = out.id;
    a.placed = true;
    for (int ax = 0; ax < 4; ++ax) a.at[ax] = at[i].before[ax];
    a.post_split = kbs_[targets[i].first]->post_ops.size();
    producer_kb_.erase(n.inputs[i]);
  }
  return true;
}

// A data-movement node whose output can be read in place (no kernel). Not for partition or graph
// outputs (the boundary conversion reads a real buffer) nor when the quantization grid changes.
bool Builder::TryView(const Node& n, const GpuOpSupport* g) {
  if (!g->view || env::FusionDisabled("view")) return false;
  if (n.outputs.size() != 1 || n.inputs.empty() || n.inputs[0] < 0 || n.outputs[0] < 0) return false;
  const int in = n.inputs[0], out = n.outputs[0];
  if (consumers_[out] >= 100 || in_partition_outputs_.count(out)) return false;
  const Tensor& ti = sg_.tensor(in);
  const Tensor& to = sg_.tensor(out);
  if (IsQuantizedActivation(ti) != IsQuantizedActivation(to)) return false;
  if (IsQuantizedActivation(to) && (ti.quant.scale != to.quant.scale || ti.quant.zero_point != to.quant.zero_point))
    return false;
  node_ = &n;
  GpuReadView v;
  if (!g->view(*this, &v)) return false;
  if (v.before[3] % 4 != 0) return false;
  for (int a = 0; a < 4; ++a)
    if (v.before[a] < 0) return false;
  GpuTensorRef src = input(0);
  BHWC os;
  if (!ToBHWC(to.shape, &os)) return false;
  const bool alias = os == src.shape && !v.before[0] && !v.before[1] && !v.before[2] && !v.before[3];
  if (alias) {
    gpu_of_cpu_[out] = src.id;
    // The alias keeps the producer's kernel, so elementwise ops on it can still fuse there.
    auto p = producer_kb_.find(in);
    if (p != producer_kb_.end() && consumers_[in] == 1) {
      producer_kb_[out] = p->second;
      producer_kb_.erase(p);
    }
    return true;
  }
  View view{src.id, {v.before[0], v.before[1], v.before[2], v.before[3] / 4}};
  auto b = views_.find(src.id);
  if (b != views_.end()) {  // a view of a view reads the first one's base (zero padding composes)
    view.base = b->second.base;
    for (int a = 0; a < 4; ++a) view.off[a] += b->second.off[a];
  }
  m_->tensors.push_back({os, out, -1});
  const int id = int(m_->tensors.size()) - 1;
  gpu_of_cpu_[out] = id;
  views_[id] = view;
  return true;
}

// A QUANTIZE of a float partition input that nothing else reads (a float-I/O integer model's first
// op): the input's conversion kernel snaps the values to the output's grid as it stores them, and
// the QUANTIZE output is the same GPU tensor -- no kernel and no pass over the tensor of its own.
// Bound inputs convert through the same snap (Boundary::snap).
bool Builder::TrySnapAtInput(const Node& n) {
  if (env::FusionDisabled("elementwise") || std::string(n.op->name) != "QUANTIZE") return false;
  if (n.inputs.empty() || n.outputs.size() != 1 || n.inputs[0] < 0 || n.outputs[0] < 0) return false;
  const int in = n.inputs[0], out = n.outputs[0];
  if (consumers_[in] != 1 || consumers_[out] >= 100 || in_partition_outputs_.count(out) || gpu_of_cpu_.count(out))
    return false;
  auto b = std::find_if(m_->inputs.begin(), m_->inputs.end(),
                        [&](const GpuPartitionModel::Boundary& x) { return x.cpu_tensor == in; });
  if (b == m_->inputs.end() || !b->snap.empty()) return false;
  const Tensor& ti = sg_.tensor(in);
  const Tensor& to = sg_.tensor(out);
  if (ti.type != DType::kFloat32 || IsQuantizedActivation(ti) || !IsQuantizedActivation(to)) return false;
  BHWC os;
  if (!ToBHWC(to.shape, &os) || !(os == m_->tensors[b->gpu_tensor].shape)) return false;
  b->snap = SnapCode(to, "v");
  gpu_of_cpu_[out] = b->gpu_tensor;
  return true;
}

bool Builder::FuseElementwise(const Node& n, const GpuOpSupport* g) {
  if (n.outputs.size() != 1) return false;
  int candidates = g->commutative ? 2 : 1;
  for (int ci = 0; ci < candidates && ci < int(n.inputs.size()); ++ci) {
    int t = n.inputs[ci];
    if (t < 0) continue;
    auto p = producer_kb_.find(t);
    if (p == producer_kb_.end() || consumers_[t] != 1) continue;
    const Tensor& tt = sg_.tensor(t);
    const Tensor& out = sg_.tensor(n.outputs[0]);
    if (tt.shape != out.shape) continue;
    int kbi = p->second;
    bool ok = true;
    for (int j = 0; j < int(n.inputs.size()); ++j) {
      if (j == ci || n.inputs[j] < 0) continue;
      int u = n.inputs[j];
      if (u == t) { ok = false; break; }  // x op x: not a chain
      // The other operand must be ready when the producer kernel runs (a view or alias is ready
      // when the tensor it reads is).
      auto gu = gpu_of_cpu_.find(u);
      const int ubase = gu == gpu_of_cpu_.end() ? -2 : BaseOf(gu->second);
      for (size_t k = 0; k < kbs_.size(); ++k)
        for (auto& a : kbs_[k]->args())
          if (a.kind == KernelBuilder::Arg::kOut && a.tensor >= 0 &&
              (m_->tensors[a.tensor].cpu_tensor == u || a.tensor == ubase) && int(k) >= kbi)
            ok = false;
    }
    if (!ok) continue;
    KernelBuilder& kb = *kbs_[kbi];
    node_ = &n;
    chain_input_ = ci;
    std::string code;
    std::string prefix = "n" + std::to_string(n.index) + "_";
    if (!g->elementwise(*this, kb, "wr_", prefix, &code).ok()) return false;
    kb.post_ops += Join(code) + " ";
    kb.fused_ops.push_back(n.op->name);
    int old_gpu = gpu_of_cpu_[t];
    GpuTensorRef o = output(0);
    for (auto& a : kb.mutable_args())
      if (a.kind == KernelBuilder::Arg::kOut && a.tensor == old_gpu) { a.tensor = o.id; a.shape = o.shape; break; }
    producer_kb_.erase(t);
    producer_kb_[n.outputs[0]] = kbi;
    SnapOutputs(n, kbi);
    return true;
  }
  return false;
}

// After node n: every quantized output is snapped to its grid by the kernel(s) that write it.
// An elementwise node (fused into kernel `chain_kb`, or run as its own kernel there) computes in
// that kernel's post_ops chain, so its snap follows its code there; a node with its own generator
// gets the snap as the first thing WRITE_ does for that output (Arg::post), before any elementwise
// op fused into the kernel later.
void Builder::SnapOutputs(const Node& n, int chain_kb) {
  for (size_t oi = 0; oi < n.outputs.size(); ++oi) {
    const int t = n.outputs[oi];
    if (t < 0 || !IsQuantizedActivation(sg_.tensor(t))) continue;
    auto it = gpu_of_cpu_.find(t);
    if (it == gpu_of_cpu_.end()) continue;
    const std::string code = SnapCode(sg_.tensor(t), "wr_") + " ";
    if (chain_kb >= 0 && oi == 0) {
      kbs_[chain_kb]->post_ops += code;
      continue;
    }
    for (auto& kb : kbs_)
      for (auto& a : kb->mutable_args())
        if (a.kind == KernelBuilder::Arg::kOut && a.tensor == it->second) a.post += code;
  }
}

Status Builder::Run(const std::vector<int>& nodes, int* failed_node) {
  std::set<int> in_part(nodes.begin(), nodes.end());
  for (const Node& n : sg_.nodes()) {
    if (n.delegated && !in_part.count(n.index)) continue;
    for (int t : n.inputs)
      if (t >= 0) consumers_[t]++;
  }
  for (int t : sg_.outputs()) consumers_[t] += 100;  // graph outputs must stay visible
  m_->nodes = nodes;
  m_->precision = precision_;
  // Partition outputs: produced here, read outside (or graph outputs).
  std::set<int> produced;
  for (int ni : nodes)
    for (int t : sg_.nodes()[ni].outputs) produced.insert(t);
  std::map<int, int> inside_reads;
  for (int ni : nodes)
    for (int t : sg_.nodes()[ni].inputs)
      if (t >= 0) inside_reads[t]++;
  for (int t : produced)
    if (consumers_[t] > inside_reads[t]) in_partition_outputs_.insert(t);
  // Outputs read outside must not be fused away.
  for (int t : in_partition_outputs_) consumers_[t] += 100;

  // Inputs: non-constant tensors read here and produced elsewhere.
  std::vector<int> inputs;
  for (int ni : nodes)
    for (int t : sg_.nodes()[ni].inputs)
      if (t >= 0 && !produced.count(t) && !sg_.tensor(t).is_const &&
          std::find(inputs.begin(), inputs.end(), t) == inputs.end())
        inputs.push_back(t);
  std::vector<std::unique_ptr<KernelBuilder>> pre;
  for (int t : inputs) {
    GpuTensorRef g = TensorFor(t);
    m_->staging_bytes.push_back(size_t(NumElements(sg_.tensor(t).shape)) * DTypeSize(sg_.tensor(t).type));
    m_->inputs.push_back({t, g.id, int(m_->staging_bytes.size()) - 1, std::string()});
    if (HostFloat32(sg_.tensor(t)) && !env::FusionDisabled("boundary") && !no_direct_.count(t)) linear_in_.insert(g.id);
  }

  for (int ni : nodes) {
    const Node& n = sg_.nodes()[ni];
    node_ = &n;
    const GpuOpSupport* g = n.op->gpu;
    if (TrySnapAtInput(n)) continue;
    if (g->elementwise && !env::FusionDisabled("elementwise") && FuseElementwise(n, g)) continue;
    if (TryView(n, g) || TryPlace(n, g) || TryInline(n, g)) continue;
    node_ = &n;
    size_t before = kbs_.size();
    Status st;
    if (g->build) {
      chain_input_ = -1;
      st = g->build(*this);
    } else {
      // Standalone elementwise kernel: value = input 0 broadcast to the output, then the snippet.
      chain_input_ = 0;
      GpuTensorRef out = output(0);
      KernelBuilder& kb = NewKernel(std::string(n.op->name));
      kb.AddInput("src", input(0));
      kb.AddOutput("dst", out);
      std::string code;
      st = g->elementwise(*this, kb, "wr_", "n" + std::to_string(n.index) + "_", &code);
      kb.post_ops = Join(code) + " ";
      const BHWC& s = out.shape;
      kb.grid = {size_t(s.w), size_t(s.h), size_t(s.slices()) * s.b};
      kb.body = "int x = get_global_id(0), y = get_global_id(1), bs = get_global_id(2);\n"
                "if (x >= dst_W || y >= dst_H || bs >= dst_S * dst_B) return;\n"
                "int s = bs % dst_S, b = bs / dst_S;\n"
                "float4 v = " + kb.ReadBroadcastDims("src", cpu_input(0).shape, cpu_output(0).shape, "b", "y", "x", "s") + ";\n"
                "WRITE_dst(v, b, y, x, s);\n";
    }
    if (st.ok()) st = LinkInlined(before);
    if (!st.ok()) {
      *failed_node = n.index;
      return Status(st.code(), std::string(n.op->name) + " GPU kernel: " + st.message());
    }
    SnapOutputs(n, g->build ? -1 : int(kbs_.size()) - 1);
    // A later elementwise op may fuse into the kernel that writes this output, but only when a
    // single kernel writes it (fusing into one of several writers would miss the others' part).
    if (n.outputs.size() == 1) {
      auto it = gpu_of_cpu_.find(n.outputs[0]);
      int writer = -1, writers = 0;
      for (size_t k = before; k < kbs_.size() && it != gpu_of_cpu_.end(); ++k)
        for (auto& a : kbs_[k]->args())
          if (a.kind == KernelBuilder::Arg::kOut && a.tensor == it->second) {
            writer = int(k);
            ++writers;
            break;
          }
      if (writers == 1) producer_kb_[n.outputs[0]] = writer;
    }
  }
  for (int t : in_partition_outputs_) {
    auto it = gpu_of_cpu_.find(t);
    if (it == gpu_of_cpu_.end()) return Internal("partition output tensor " + std::to_string(t) + " has no GPU kernel");
    m_->staging_bytes.push_back(size_t(NumElements(sg_.tensor(t).shape)) * DTypeSize(sg_.tensor(t).type));
    m_->outputs.push_back({t, it->second, int(m_->staging_bytes.size()) - 1, std::string()});
  }
  DirectBoundaries();
  ChooseStorage();
  TFG_RETURN_IF_ERROR(Assemble());
  PlanMemory();
  return OkStatus();
}

// Direct boundaries: a float32 partition input or output whose GPU tensor only the model's kernels
// touch, through READ_/LD_/WRITE_, is kept in the host's BHWC layout in its staging buffer: the
// kernels that read or write it index that buffer (Source), and its conversion kernel is a no-op
// entry (Assemble) -- one launch fewer per boundary. An output that a RESHAPE kernel makes from a
// tensor only that RESHAPE reads is written by that tensor's producer straight into the staging
// buffer (the same bytes in BHWC order), so the RESHAPE's kernel goes too.
void Builder::DirectBoundaries() {
  if (env::FusionDisabled("boundary")) {
    linear_in_.clear();
    return;
  }
  // Every kernel argument naming GPU tensor t, directly or as the base of a read view.
  auto refs = [&](int t) {
    std::vector<std::pair<size_t, KernelBuilder::Arg*>> r;
    for (size_t k = 0; k < kbs_.size(); ++k)
      for (auto& a : kbs_[k]->mutable_args())
        if (a.kind != KernelBuilder::Arg::kConst && (a.tensor == t || BaseOf(a.tensor) == t)) r.push_back({k, &a});
    return r;
  };
  auto boundaries_of = [&](int t) {
    int n = 0;
    for (const auto* list : {&m_->inputs, &m_->outputs})
      for (const auto& b : *list) n += b.gpu_tensor == t;
    return n;
  };
  for (const auto& b : m_->inputs) {
    const int t = b.gpu_tensor;
    if (!linear_in_.count(t) || !b.snap.empty() || boundaries_of(t) != 1) continue;  // (candidates: HostFloat32)
    bool ok = true;
    for (auto& [k, a] : refs(t)) ok = ok && a->kind == KernelBuilder::Arg::kIn && !inline_uses_.count({kbs_[k].get(), a->name});
    if (ok) linear_[t] = b.staging;
  }
  for (auto& b : m_->outputs) {
    int t = b.gpu_tensor;
    if (!HostFloat32(sg_.tensor(b.cpu_tensor)) || boundaries_of(t) != 1 || views_.count(t) || inlined_.count(t) ||
        m_->tensors[size_t(t)].const_index >= 0)
      continue;
    auto r = refs(t);
    // RESHAPE kernel -> output (or -> its contiguous part of a CONCATENATION output, placed): the
    // RESHAPE's input's single producer writes those bytes instead, and the RESHAPE runs no kernel.
    for (size_t pass = 0; pass < r.size() && !env::FusionDisabled("view");) {
      KernelBuilder::Arg* out = r[pass].second;
      const size_t rk = r[pass].first;
      ++pass;
      if (out->kind != KernelBuilder::Arg::kOut || out->tensor != t || std::string(sg_.nodes()[size_t(kb_node_[rk])].op->name) != "RESHAPE" ||
          !kbs_[rk]->post_ops.empty() || !out->post.empty())
        continue;
      KernelBuilder::Arg* in = nullptr;
      int ins = 0;
      for (auto& a : kbs_[rk]->mutable_args())
        if (a.kind == KernelBuilder::Arg::kIn) {
          in = &a;
          ++ins;
        }
      const int src = ins == 1 && in->tensor == BaseOf(in->tensor) ? in->tensor : -1;
      if (src < 0 || inlined_.count(src) || m_->tensors[size_t(src)].const_index >= 0 || boundaries_of(src) || linear_in_.count(src))
        continue;
      KernelBuilder::Arg* w = nullptr;
      size_t wk = kbs_.size();
      int writers = 0, readers = 0;
      for (auto& [k, a] : refs(src)) {
        if (a->kind == KernelBuilder::Arg::kOut && a->tensor == src && !a->placed && a->flat < 0 && k != rk) {
          w = a;
          wk = k;
          ++writers;
        } else if (a != in) {
          ++readers;
        }
      }
      const BHWC& ss = m_->tensors[size_t(src)].shape;
      const BHWC& ts = m_->tensors[size_t(t)].shape;
      const BHWC& ps = out->placed ? out->shape : ts;  // the part the RESHAPE writes
      const int64_t per_batch = int64_t(ss.h) * ss.w * ss.c;
      if (writers != 1 || readers != 0 || wk >= rk || ss.b * per_batch != int64_t(ps.b) * ps.h * ps.w * ps.c ||
          (out->placed && ss.b != ps.b))
        continue;
      if (!out->placed) {
        w->tensor = t;  // keeps its shape (w->shape): the kernel computes src's shape
      } else {
        // Contiguous in each batch of the output: whole channels, and one row or whole rows.
        if (out->at[0] || out->at[3] || ps.c != ts.c || (ps.h != 1 && ps.w != ts.w)) continue;
        w->tensor = t;
        w->flat = (out->at[1] * ts.w + out->at[2]) * int64_t(ts.c);
      }
      kbs_.erase(kbs_.begin() + std::ptrdiff_t(rk));
      kb_node_.erase(kb_node_.begin() + std::ptrdiff_t(rk));
      r = refs(t);
      pass = 0;
    }
    bool ok = !r.empty();
    for (auto& [k, a] : r) ok = ok && a->kind == KernelBuilder::Arg::kOut && a->tensor == t;  // placed parts too
    if (ok) linear_[t] = b.staging;
  }
  linear_in_.clear();
}

// Mixed storage: a GPU tensor is stored as float when the plan keeps any interpreter tensor it
// holds (aliases share one GPU tensor); a constant also when one of its values is past fp16's range.
void Builder::ChooseStorage() {
  m_->tensor_f32.assign(m_->tensors.size(), 0);
  if (precision_ == Precision::kF32) return;
  for (const auto& [cpu, gpu] : gpu_of_cpu_)
    if (plan_.keep.count(cpu)) m_->tensor_f32[size_t(gpu)] = 1;
  // A direct boundary's buffer holds the host's float32; where the tensor would be stored as half,
  // its readers and writers round through half (Source), as the conversion kernels would.
  for (const auto& [gpu, staging] : linear_) {
    if (!m_->tensor_f32[size_t(gpu)]) linear_half_.insert(gpu);
    m_->tensor_f32[size_t(gpu)] = 1;
  }
  for (size_t t = 0; t < m_->tensors.size(); ++t) {
    const int c = m_->tensors[t].const_index;
    if (c < 0) continue;
    bool big = false;
    for (float v : m_->consts[size_t(c)]) big = big || !(std::fabs(v) <= float(kHalfMax));
    if (big) m_->tensor_f32[t] = 1;
    if (m_->tensor_f32[t]) m_->const_exact[size_t(c)] = true;
  }
  std::string names;
  int kept = 0, total = 0;
  for (size_t t = 0; t < m_->tensors.size(); ++t) {
    if (m_->tensors[t].const_index >= 0 || views_.count(int(t)) || IsLinear(int(t))) continue;
    ++total;
    if (!m_->tensor_f32[t]) continue;
    ++kept;
    auto it = plan_.keep.find(m_->tensors[t].cpu_tensor);
    names += "; " + (it != plan_.keep.end() ? it->second : "tensor " + std::to_string(m_->tensors[t].cpu_tensor));
  }
  if (kept)
    Log(0, "INFO: fp16 storage: " + std::to_string(kept) + " of " + std::to_string(total) +
               " GPU tensors kept in float" + names);
}

std::string Builder::Source(KernelBuilder& kb, std::vector<GpuKernelArg>* args) {
  std::string src = PrecisionHeader(precision_, TypedHalfReads(caps_.nv_compute_capability)) + kAccessMacros;
  std::string sig, inline_fns;
  bool first_out = true, linear_helpers = false;
  for (const auto& a : kb.args()) {
    const bool computed = a.kind == KernelBuilder::Arg::kIn && inline_uses_.count({&kb, a.name});
    if (!sig.empty() && !computed) sig += ", ";
    if (a.kind == KernelBuilder::Arg::kConst) {
      bool exact = a.exact || precision_ == Precision::kF32 || m_->const_exact[size_t(a.const_index)];
      sig += std::string("__global const ") + (exact ? "float* " : "half* ") + a.name;
      src += "#define HALF_" + a.name + (exact ? " 0\n" : " 1\n");
      src += "#define LOADW4_" + a.name + "(i) " + (exact ? "TFG_LF4_(" : "TFG_LH4_(") + a.name + ", (i))\n";
      src += "#define LOADW_" + a.name + "(i) " + (exact ? "(" + a.name + "[(i)])" : "vload_half((i), " + a.name + ")") + "\n";
      args->push_back({GpuKernelArg::kConst, a.const_index});
      continue;
    }
    // A placed output (TryPlace) keeps the shape its kernel computes; it is stored in the larger
    // tensor `real` at offsets a.at.
    const BHWC& real = m_->tensors[a.tensor].shape;
    const BHWC& s = a.placed || IsLinear(a.tensor) ? a.shape : real;
    // The tensor whose buffer this argument binds (a read view binds its base), and its storage type.
    auto v = a.kind == KernelBuilder::Arg::kIn ? views_.find(a.tensor) : views_.end();
    const bool half = m_->tensor_half(v != views_.end() ? v->second.base : a.tensor);
    const std::string L4 = half ? "LOAD4H(" : "LOAD4F(", L1 = half ? "LOAD1H(" : "LOAD1F(", S4 = half ? "STORE4H(" : "STORE4F(";
    if (!computed) sig += std::string("__global ") + (a.kind == KernelBuilder::Arg::kIn ? "const " : "") + (half ? "half* " : "float* ") + a.name;
    const std::string& n = a.name;
    // HALF_<name>: whether the argument's buffer holds half (generators that read raw storage).
    if (!computed) src += "#define HALF_" + n + (half ? " 1\n" : " 0\n");
    src += "#define " + n + "_B " + std::to_string(s.b) + "\n#define " + n + "_H " + std::to_string(s.h) + "\n#define " + n +
           "_W " + std::to_string(s.w) + "\n#define " + n + "_C " + std::to_string(s.c) + "\n#define " + n + "_S " +
           std::to_string(s.slices()) + "\n";
    auto inl = a.kind == KernelBuilder::Arg::kIn ? inline_uses_.find({&kb, a.name}) : inline_uses_.end();
    if (inl != inline_uses_.end()) {
      // A computed input (GpuInlineFn): no buffer; reads call the producer's code.
      std::string params, call;
      for (const std::string& pn : inl->second.params) {
        for (const auto& pa : kb.args()) {
          if (pa.name != pn) continue;
          if (pa.kind == KernelBuilder::Arg::kConst) {
            const bool exact = pa.exact || precision_ == Precision::kF32 || m_->const_exact[size_t(pa.const_index)];
            params += std::string("__global const ") + (exact ? "float* " : "half* ");
          } else {
            auto pv = views_.find(pa.tensor);
            params += std::string("__global const ") +
                      (m_->tensor_half(pv != views_.end() ? pv->second.base : pa.tensor) ? "half* " : "float* ");
          }
          params += pn + ", ";
          call += pn + ", ";
          break;
        }
      }
      inline_fns += "float4 inl_" + n + "(" + params + "int b, int y, int x, int s) {\nfloat4 r_ = (float4)(0.0f);\n" +
                    inl->second.body + "return r_;\n}\n";
      src += "#define READ_" + n + "(b, y, x, s) inl_" + n + "(" + call + "(b), (y), (x), (s))\n";
      src += "#define LD_" + n + "(b, y, x, c) tfg_lane_(inl_" + n + "(" + call + "(b), (y), (x), (c) >> 2), (c) & 3)\n";
      continue;
    }
    if (IsLinear(v != views_.end() ? v->second.base : a.tensor)) {
      // A direct boundary (DirectBoundaries): float32 BHWC in the staging buffer, lanes past C
      // read as zero and not stored; a read view indexes its base at the shifted coordinates.
      if (!linear_helpers) {
        linear_helpers = true;
        src += "float4 tfg_ld4_(__global const float* p, int i, int left) { return (float4)(p[i], left > 1 ? p[i + 1] : "
               "0.0f, left > 2 ? p[i + 2] : 0.0f, left > 3 ? p[i + 3] : 0.0f); }\n"
               "void tfg_st4_(__global float* p, int i, int left, float4 v) { p[i] = v.x; if (left > 1) p[i + 1] = v.y; "
               "if (left > 2) p[i + 2] = v.z; if (left > 3) p[i + 3] = v.w; }\n"
               "float4 tfg_h4_(float4 v) { ushort h[4]; vstore_half4(v, 0, (__private half*)h); return vload_half4(0, (__private const half*)h); }\n"
               "float tfg_h1_(float v) { ushort h; vstore_half(v, 0, (__private half*)&h); return vload_half(0, (__private const half*)&h); }\n";
      }
      const bool view = v != views_.end();
      const int base = view ? v->second.base : a.tensor;
      args->push_back({GpuKernelArg::kStaging, linear_.at(base)});
      // A placed output (TryPlace) indexes the larger tensor at its offsets (shift -at); a read view
      // its base at -off; lanes past either the tensor's or (placed) the part's channels are not
      // touched.
      const bool placed = a.kind == KernelBuilder::Arg::kOut && a.placed;
      const BHWC& d = view ? m_->tensors[base].shape : placed ? real : s;
      const int64_t dims[4] = {d.b, d.h, d.w, d.slices()};
      int64_t off[4] = {0, 0, 0, 0};
      if (view) std::copy(v->second.off, v->second.off + 4, off);
      if (placed) PlacedOffsets(a, off);
      std::string c[4], cond;
      ShiftedCoords(off, s, dims, c, placed ? nullptr : &cond);
      const std::string C = std::to_string(d.c), H = std::to_string(d.h), W = std::to_string(d.w);
      const std::string o3 = std::to_string(view ? 4 * v->second.off[3] : placed ? -a.at[3] : 0);
      if (a.flat >= 0)  // a RESHAPE-then-CONCATENATION part: its row-major order from an offset of each batch
        src += "#define LIDX_" + n + "(b, y, x, ch) ((int)(b) * " +
               std::to_string(int64_t(real.h) * real.w * real.c) + " + " + std::to_string(a.flat) + " + (((y) * " + W +
               " + (x)) * " + C + ") + (ch))\n";
      else
        src += "#define LIDX_" + n + "(b, y, x, ch) (((((" + c[0] + ") * " + H + " + " + c[1] + ") * " + W + " + " + c[2] +
               ") * " + C + ") + (ch) - (" + o3 + "))\n";
      src += "#define INB_" + n + "(b, y, x, s) (" + (cond.empty() ? std::string("1") : cond) + ")\n";
      // Lanes left in the slice: C itself when there is one slice (a constant the compiler folds).
      const bool one = d.slices() == 1 && o3 == "0";
      const bool whole = d.c % 4 == 0 && (!placed || s.c % 4 == 0);  // float4 loads and stores
      std::string left = one ? C : C + " - ((s) * 4 - (" + o3 + "))";
      if (placed) left = "min(" + left + ", " + std::to_string(s.c) + " - (s) * 4)";
      // Rounded through half where the tensor would be stored as half (linear_half_).
      const bool rh = linear_half_.count(base) > 0;
      std::string rd = whole ? "vload4(0, " + n + " + LIDX_" + n + "(b, y, x, (s) * 4))"
                             : "tfg_ld4_(" + n + ", LIDX_" + n + "(b, y, x, (s) * 4), " + left + ")";
      std::string one_ld = n + "[LIDX_" + n + "(b, y, x, (c))]";
      if (rh) {
        rd = "tfg_h4_(" + rd + ")";
        one_ld = "tfg_h1_(" + one_ld + ")";
      }
      const std::string ld = "(((c) - (" + o3 + ")) < " + C + " ? " + one_ld + " : 0.0f)";
      if (cond.empty()) {
        src += "#define READ_" + n + "(b, y, x, s) " + rd + "\n";
        src += "#define LD_" + n + "(b, y, x, c) " + ld + "\n";
      } else {
        src += "#define READ_" + n + "(b, y, x, s) (INB_" + n + "(b, y, x, s) ? " + rd + " : (float4)(0.0f))\n";
        src += "#define LD_" + n + "(b, y, x, c) (INB_" + n + "(b, y, x, (c) >> 2) ? " + ld + " : 0.0f)\n";
      }
      if (a.kind == KernelBuilder::Arg::kOut) {
        std::string post_ops = first_out ? kb.post_ops : std::string(), idx = "LIDX_" + n + "(wb_, wy_, wx_, ws_ * 4)";
        std::string wleft = one ? C : C + " - ws_ * 4";
        if (placed) {
          post_ops = PlacedPostOps(a, post_ops);  // after it the coordinates are the larger tensor's
          src += "#define LIDX0_" + n + "(b, y, x, ch) (((((b) * " + H + " + (y)) * " + W + " + (x)) * " + C + ") + (ch))\n";
          idx = "LIDX0_" + n + "(wb_, wy_, wx_, ws_ * 4)";
          wleft = "min(" + C + " - ws_ * 4, " + std::to_string(s.c) + " - (ws_ * 4 - " + std::to_string(a.at[3]) + "))";
        }
        const std::string st = whole ? "vstore4(wr_, 0, " + n + " + " + idx + ");"
                                     : "tfg_st4_(" + n + ", " + idx + ", " + wleft + ", wr_);";
        src += "#define WRITE_" + n + "(v_w, b_w, y_w, x_w, s_w) do { float4 wr_ = (v_w); int wb_ = (b_w), wy_ = (y_w), wx_ = (x_w), "
               "ws_ = (s_w); " + a.post + post_ops + (rh ? "wr_ = tfg_h4_(wr_); " : "") + st +
               " (void)wb_; (void)wy_; (void)wx_; } while (0)\n";
        first_out = false;
      }
      continue;
    }
    if (v != views_.end()) {
      // A read view: index the base tensor at the shifted coordinates, zero outside it.
      const View& vw = v->second;
      const BHWC& bs = m_->tensors[vw.base].shape;
      args->push_back({GpuKernelArg::kTensor, vw.base});
      const int64_t dims[4] = {bs.b, bs.h, bs.w, bs.slices()};
      std::string c[4], cond;
      ShiftedCoords(vw.off, s, dims, c, &cond);
      src += "#define IDX_" + n + "(b, y, x, s) (((((" + c[0] + ") * " + std::to_string(bs.slices()) + " + " + c[3] + ") * " +
             std::to_string(bs.h) + " + " + c[1] + ") * " + std::to_string(bs.w) + ") + " + c[2] + ")\n";
      if (cond.empty()) cond = "1";
      src += "#define INB_" + n + "(b, y, x, s) (" + cond + ")\n";
      src += "#define READ_" + n + "(b, y, x, s) (INB_" + n + "(b, y, x, s) ? " + L4 + n + ", IDX_" + n +
             "(b, y, x, s)) : (float4)(0.0f))\n";
      src += "#define LD_" + n + "(b, y, x, c) (INB_" + n + "(b, y, x, (c) >> 2) ? " + L1 + n + ", IDX_" + n +
             "(b, y, x, (c) >> 2) * 4 + ((c) & 3)) : 0.0f)\n";
      continue;
    }
    args->push_back({GpuKernelArg::kTensor, a.tensor});
    if (a.placed)
      src += "#define IDX_" + n + "(b, y, x, s) (((((b) * " + std::to_string(real.slices()) + " + (s)) * " +
             std::to_string(real.h) + " + (y)) * " + std::to_string(real.w) + ") + (x))\n";
    else
      src += "#define IDX_" + n + "(b, y, x, s) (((((b) * " + n + "_S + (s)) * " + n + "_H + (y)) * " + n + "_W) + (x))\n";
    if (a.kind == KernelBuilder::Arg::kIn) {
      src += "#define READ_" + n + "(b, y, x, s) " + L4 + n + ", IDX_" + n + "(b, y, x, s))\n";
      src += "#define LD_" + n + "(b, y, x, c) " + L1 + n + ", IDX_" + n + "(b, y, x, (c) >> 2) * 4 + ((c) & 3))\n";
    } else {
      std::string pad;
      if (real.c % 4) {
        pad = "if (ws_ == " + std::to_string(real.slices() - 1) + ") {";
        for (int l = real.c % 4; l < 4; ++l) pad += std::string(" wr_.") + "xyzw"[l] + " = 0.0f;";
        pad += " } ";
      }
      std::string post_ops = first_out ? kb.post_ops : std::string();
      int64_t off[4] = {0, 0, 0, 0};
      std::string r[4];
      if (a.placed) {
        post_ops = PlacedPostOps(a, post_ops);
        PlacedOffsets(a, off);
      }
      ShiftedCoords(off, s, nullptr, r, nullptr);
      src += "#define READ_" + n + "(b, y, x, s) " + L4 + n + ", IDX_" + n + "(" + r[0] + ", " + r[1] + ", " + r[2] + ", " + r[3] + "))\n";
      src += "#define WRITE_" + n + "(v_w, b_w, y_w, x_w, s_w) do { float4 wr_ = (v_w); int wb_ = (b_w), wy_ = (y_w), wx_ = (x_w), ws_ = (s_w); " +
             a.post + post_ops + pad + S4 + n + ", IDX_" + n +
             "(wb_, wy_, wx_, ws_), wr_); (void)wb_; (void)wy_; (void)wx_; } while (0)\n";
      first_out = false;
    }
  }
  if (!inline_fns.empty())
    src += "float tfg_lane_(float4 v, int k) { return k == 0 ? v.x : (k == 1 ? v.y : (k == 2 ? v.z : v.w)); }\n" +
           inline_fns;
  src += kb.defines();
  src += "__kernel void main_function(" + sig + ") {\n" + kb.body + "}\n";
  return src;
}

Status Builder::Assemble() {
  // A direct boundary's entry: no source (nothing launched, see the runtime), the conversion's
  // launch size (a bound buffer's conversion kernel takes it).
  auto direct_entry = [&](GpuKernelDesc k, const BHWC& s, const char* label) {
    k.global = {size_t(s.w), size_t(s.h), size_t(s.slices()) * s.b};
    k.local = DefaultLocalSize(k.global, caps_.max_work_group_size);
    k.label = label;
    m_->kernels.push_back(std::move(k));
  };
  // Input conversions BHWC float32 -> PHWC4.
  for (auto& b : m_->inputs) {
    const BHWC& s = m_->tensors[b.gpu_tensor].shape;
    GpuKernelDesc k;
    k.name = "to_phwc4";
    if (IsLinear(b.gpu_tensor)) {
      direct_entry(std::move(k), s, "direct input");
      continue;
    }
    // Host tensors are FLOAT32, or (for BOOL, quantized and FLOAT16 boundaries) values the device
    // holds as float: bools as 0/1, integers exactly, halves widened.
    const BoundaryType bt = BoundaryTypeOf(sg_.tensor(b.cpu_tensor));
    k.source =
        ToDeviceSource(m_->tensor_precision(b.gpu_tensor), TypedHalfReads(caps_.nv_compute_capability), s, bt, b.snap);
    if (!b.snap.empty()) k.label = "to_phwc4+QUANTIZE";
    k.global = {size_t(s.w), size_t(s.h), size_t(s.slices()) * s.b};
    k.args = {{GpuKernelArg::kStaging, b.staging}, {GpuKernelArg::kTensor, b.gpu_tensor}};
    m_->kernels.push_back(std::move(k));
  }
  for (size_t i = 0; i < kbs_.size(); ++i) {
    KernelBuilder& kb = *kbs_[i];
    GpuKernelDesc k;
    k.name = kb.name();
    k.node = kb_node_[i];
    k.op = sg_.nodes()[k.node].op->name;
    for (const std::string& f : kb.fused_ops) k.label += "+" + f;
    k.label = k.op + k.label;
    for (auto it = kb.inlined_ops.rbegin(); it != kb.inlined_ops.rend(); ++it) k.label = *it + "+" + k.label;
    // Constants of this builder move into the model; renumber.
    size_t base = m_->consts.size();
    for (auto& c : kb.consts()) {
      // A weight past fp16's range would be inf in half: such a buffer stays float.
      bool big = false;
      if (precision_ != Precision::kF32)
        for (float v : c) big = big || !(std::fabs(v) <= float(kHalfMax));
      m_->consts.push_back(std::move(c));
      m_->const_exact.push_back(big);
    }
    for (auto& a : kb.mutable_args())
      if (a.kind == KernelBuilder::Arg::kConst) {
        if (a.exact) m_->const_exact[base + a.const_index] = true;
        a.const_index += int(base);
      }
    k.source = Source(kb, &k.args);
    k.global = kb.grid;
    k.local = kb.local;
    m_->kernels.push_back(std::move(k));
  }
  for (auto& b : m_->outputs) {
    const BHWC& s = m_->tensors[b.gpu_tensor].shape;
    GpuKernelDesc k;
    k.name = "from_phwc4";
    if (IsLinear(b.gpu_tensor)) {
      direct_entry(std::move(k), s, "direct output");
      continue;
    }
    const BoundaryType bt = BoundaryTypeOf(sg_.tensor(b.cpu_tensor));
    k.source = FromDeviceSource(m_->tensor_precision(b.gpu_tensor), TypedHalfReads(caps_.nv_compute_capability), s, bt);
    k.global = {size_t(s.w), size_t(s.h), size_t(s.slices()) * s.b};
    k.args = {{GpuKernelArg::kTensor, b.gpu_tensor}, {GpuKernelArg::kStaging, b.staging}};
    m_->kernels.push_back(std::move(k));
  }
  for (auto& k : m_->kernels) {
    if (k.local[0] == 0 || k.local[1] == 0 || k.local[2] == 0) {
      k.local = DefaultLocalSize(k.global, caps_.max_work_group_size);
      k.tunable = true;
    }
  }
  return OkStatus();
}

void Builder::PlanMemory() {
  const int nt = int(m_->tensors.size());
  if (m_->debug_sentinels) {  // every tensor in its own exactly-sized buffer
    m_->tensor_slot.assign(nt, -1);
    for (int t = 0; t < nt; ++t) {
      if (m_->tensors[t].const_index >= 0) continue;
      m_->tensor_slot[t] = int(m_->slot_bytes.size());
      m_->slot_bytes.push_back(size_t(m_->tensors[t].shape.elements4()) * m_->tensor_bytes(t));
    }
    return;
  }
  std::vector<int> first(nt, -1), last(nt, -1);
  for (int k = 0; k < int(m_->kernels.size()); ++k)
    for (auto& a : m_->kernels[k].args)
      if (a.kind == GpuKernelArg::kTensor) {
        if (first[a.index] < 0) first[a.index] = k;
        last[a.index] = k;
      }
  std::vector<int> order;
  for (int t = 0; t < nt; ++t)
    if (m_->tensors[t].const_index < 0 && first[t] >= 0) order.push_back(t);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return first[a] < first[b]; });
  m_->tensor_slot.assign(nt, -1);
  std::vector<int> busy_until;
  for (int t : order) {
    size_t need = size_t(m_->tensors[t].shape.elements4()) * m_->tensor_bytes(t);
    need = std::max<size_t>(need, 16);
    int best = -1;
    for (int s = 0; s < int(m_->slot_bytes.size()); ++s) {
      if (busy_until[s] >= first[t]) continue;
      if (m_->slot_bytes[s] >= need) {
        if (best < 0 || m_->slot_bytes[best] < need || m_->slot_bytes[s] < m_->slot_bytes[best]) best = s;
      } else if (best < 0 || (m_->slot_bytes[best] < need && m_->slot_bytes[s] > m_->slot_bytes[best])) {
        best = s;
      }
    }
    if (best < 0) {
      m_->slot_bytes.push_back(need);
      busy_until.push_back(last[t]);
      best = int(m_->slot_bytes.size()) - 1;
    } else {
      m_->slot_bytes[best] = std::max(m_->slot_bytes[best], need);
      busy_until[best] = last[t];
    }
    m_->tensor_slot[t] = best;
  }
}

}  // namespace

std::string BoundConversionSource(Precision precision, const BHWC& shape, bool to_device, bool half_buffer,
                                  bool typed_half, const std::string& snap, bool linear) {
  BoundaryType bt = half_buffer ? BoundaryType{"half", DType::kFloat16} : BoundaryType{"float", DType::kFloat32};
  if (linear) {
    // A direct boundary's device side is float32 BHWC too (its staging buffer): lanes move as they are.
    const BHWC& s = shape;
    const std::string in = to_device ? bt.cl_type : std::string("float"), out = to_device ? std::string("float") : bt.cl_type;
    const BoundaryType dev{"float", DType::kFloat32};
    const BoundaryType& rd = to_device ? bt : dev;
    const BoundaryType& wr = to_device ? dev : bt;
    std::string k = ConversionHead(s, "__global const " + in + "* src, __global " + out + "* dst");
    for (int l = 0; l < 4; ++l)
      k += "if (s * 4 + " + std::to_string(l) + " < C) " + wr.Write("base + " + std::to_string(l), rd.Read("base + " + std::to_string(l))) + ";\n";
    return k + "}\n";
  }
  return to_device ? ToDeviceSource(precision, typed_half, shape, bt, snap)
                   : FromDeviceSource(precision, typed_half, shape, bt);
}

std::array<size_t, 3> DefaultLocalSize(const std::array<size_t, 3>& g, size_t max_wg) {
  size_t cap = std::min<size_t>(64, std::max<size_t>(1, max_wg));
  size_t lx = std::min(NextPow2(g[0]), std::min<size_t>(16, cap));
  size_t ly = std::min(NextPow2(g[1]), std::max<size_t>(1, cap / lx));
  size_t lz = std::min(NextPow2(g[2]), std::max<size_t>(1, cap / (lx * ly)));
  return {lx, ly, lz};
}

Status BuildPartitionModel(Subgraph& sg, const std::vector<int>& nodes, Precision precision,
                           const GpuDeviceCaps& caps, GpuPartitionModel* out, int* failed_node) {
  std::set<int> no_direct;
  for (int attempt = 0;; ++attempt) {
    *out = GpuPartitionModel();
    out->debug_sentinels = env::DebugSentinels();
    Builder b(sg, precision, caps, out);
    b.no_direct_ = no_direct;
    Status st = b.Run(nodes, failed_node);
    // Inputs whose readers wanted their raw PHWC4 buffer: build again with their conversion kernels.
    if (!st.ok() || b.plain_refused_.empty() || attempt > 0) return st;
    no_direct = b.plain_refused_;
  }
}

}  // namespace tflite_gpu::gpu
