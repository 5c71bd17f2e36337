// What an op family writes to run on the GPU delegate: a support check that returns a reason,
// and a kernel generator. Side by side with the op's CPU kernels in csrc/ops/<family>/.
//
// Tensor layout on the device ("PHWC4", the seeds' 4-channel slices): a tensor of BHWC shape
// is stored as B x S x H x W x 4 with S = ceil(C/4); element (b, y, x, c) lives at
//   (((b*S + c/4)*H + y)*W + x)*4 + c%4.
// Ranks below 4 map to BHWC as TFLite's GPU delegate does: [C] -> (1,1,1,C), [N,C] -> (N,1,1,C),
// [N,W,C] -> (N,1,W,C). The padding lanes of the last slice hold zeros after every kernel that
// writes through WRITE_<out> (it zeroes them), so kernels that reduce over channels may read
// them; kernels that compute other values in padding lanes must not rely on them.
//
// Storage precision: STORAGE is float or half (F16 modes, via vload_half4/vstore_half4, which
// need no cl_khr_fp16); arithmetic is always done in FLT4 = float4, so accumulators never
// overflow in fp16. In the F16 modes a tensor expected past fp16's range is stored as float
// (mixed storage, precision_plan.h): READ_/LD_/WRITE_ of each argument use that tensor's own
// type, so generators must access tensors only through them (never through STORAGE or LOAD4).
//
// Quantized tensors (TFLite's "floating-point view", taken with ENABLE_QUANT /
// enable_quantization, the default): on the device every int8/uint8/int16 tensor with
// quantization parameters holds its real value scale * (q - zero_point) as a float. Constant
// weights (per-tensor or per-channel, incl. int32/int64 biases) are dequantized once at init:
// generators read constants through GpuBuildContext::const_input(i), never cpu_input(i).as<>().
// Partition inputs are dequantized and outputs quantized (round half to even, saturating) by the
// boundary kernels. After every op whose output carries quantization parameters the framework
// snaps the value to that grid, q = clamp(rint(v / scale) + zp, qmin, qmax), v = (q - zp) * scale,
// inside the WRITE_ of the kernel that writes it (so results follow the integer model). Generators
// therefore compute in real values exactly as for float tensors and need no quantization code;
// their checks accept quantized tensors through InputsFloat32/OutputsFloat32 (see there).
//
// A generator writes a kernel body with the macros the KernelBuilder defines:
//   READ_<name>(b, y, x, s)      -> float4 of input tensor <name> (shapes are compile-time:
//   <name>_B, <name>_H, <name>_W, <name>_C, <name>_S)
//   LD_<name>(b, y, x, c)        -> one scalar (channel c) of input tensor <name>
//   WRITE_<name>(v, b, y, x, s)  -> stores float4 v into output <name>, after the fused
//                                   elementwise ops linked to this kernel
//   <buf>[i]                     -> for constant buffers (weights), LOADW4(<buf>, i) for float4 i
// and sets the launch grid; the body must bounds-check its global ids (the grid is rounded up
// to a multiple of the work-group size).
#pragma once
#include <array>
#include <functional>
#include <string>
#include <vector>

#include "ops/op_registry.h"
#include "tflite_gpu/status.h"
#include "tflite_gpu/types.h"

namespace tflite_gpu {
namespace gpu {

struct BHWC {
  int b = 1, h = 1, w = 1, c = 1;
  int slices() const { return (c + 3) / 4; }
  int64_t elements4() const { return int64_t(b) * slices() * h * w * 4; }
  bool operator==(const BHWC& o) const { return b == o.b && h == o.h && w == o.w && c == o.c; }
  bool operator!=(const BHWC& o) const { return !(*this == o); }
};
// Quantized tensors the device holds as real values and snaps after each write: int8/uint8/int16
// with exactly one scale.
bool IsQuantizedActivation(const Tensor& t);
// Real values of a constant tensor (see GpuBuildContext::const_input); a reason when its type or
// quantization parameters cannot be read.
Status DequantizeConst(const Tensor& t, std::vector<float>* out);
// OpenCL statements snapping float4 `v` to the grid of quantized tensor `t`.
std::string SnapCode(const Tensor& t, const std::string& v);
// Codegen helpers shared by the op families.
std::string FloatLiteral(float v);  // exact OpenCL literal, also for inf/NaN: as_float(0x...u)
size_t NextPow2(size_t v);

// Maps a tensor shape of rank <= 4 to BHWC; false for rank > 4.
bool ToBHWC(const Dims& d, BHWC* out);
// The BHWC axis (0=B,1=H,2=W,3=C) of axis `axis` of a tensor of rank `rank`, or -1.
int AxisToBHWC(int axis, int rank);

enum class Precision { kF32, kF32F16, kF16 };  // F32_F16: fp16 storage, fp32 arithmetic

struct GpuDeviceCaps {
  bool enable_quant = true;  // delegate setting the checks need: ENABLE_QUANT / enable_quantization
  bool fp16_storage = false;  // the partition stores tensors in half (F16 / F32_F16 precision)
  bool fp16 = false;
  size_t max_work_group_size = 256;
  int compute_units = 0;  // 0: unknown
  bool is_gpu = true;
  std::string vendor;
  int nv_compute_capability = 0;  // NVIDIA: major * 10 + minor (80+: mma.sync through inline PTX); 0 elsewhere
  // The device has a CUDA twin (cuda_graph.h DeviceOf) and the delegate's queue is its own (a
  // caller's queue keeps OpenCL launches): partitions launch as CUDA graphs, whose
  // per-kernel floor (~1.2 us on an H100) is a third of an OpenCL launch's, which moves the
  // kernel-count levers' break-even (see partition_model.cc's kDefaultDwPwMaxTimes).
  bool cuda_graph = false;
};

// Read-only view for the support check.
class GpuCheckContext {
 public:
  GpuCheckContext(Subgraph& sg, const Node& node, const GpuDeviceCaps& caps) : sg_(sg), node_(node), caps_(caps) {}
  const Node& node() const { return node_; }
  int num_inputs() const { return int(node_.inputs.size()); }
  int num_outputs() const { return int(node_.outputs.size()); }
  bool has_input(int i) const { return i < num_inputs() && node_.inputs[i] >= 0; }
  const Tensor& input(int i) const;
  const Tensor& output(int i) const;
  const GpuDeviceCaps& caps() const { return caps_; }
  // Common checks; each returns a reason on failure.
  // "Real-valued" tensors: FLOAT32, or with ENABLE_QUANT a quantized tensor the device holds as
  // real values (see the header comment): int8/uint8 (and int16 in F32 precision) with one
  // scale/zero point, or a constant int8/uint8/int16/int32/int64 tensor with per-tensor or
  // per-channel parameters (dequantized once). Refusals name the reason (ENABLE_QUANT off,
  // per-channel activations, int16 in fp16 storage, bad parameters).
  Status InputsFloat32(std::initializer_list<int> which) const;
  Status OutputsFloat32() const;
  Status RealTensor(const Tensor& t, const std::string& what) const;
  Status Rank4OrLess(const Tensor& t, const char* what) const;
  Status Constant(int input, const char* what) const;

 private:
  Subgraph& sg_;
  const Node& node_;
  const GpuDeviceCaps& caps_;
};

struct GpuTensorRef {
  int id = -1;  // GPU tensor id in the partition
  BHWC shape;
};

class KernelBuilder {
 public:
  explicit KernelBuilder(std::string name) : name_(std::move(name)) {}
  void AddInput(const std::string& arg, const GpuTensorRef& t);
  void AddOutput(const std::string& arg, const GpuTensorRef& t);
  // Constant data (weights) as STORAGE (float or half per precision) or, with exact=true, always
  // float (for values that must not lose precision, e.g. indices).
  void AddConstBuffer(const std::string& arg, std::vector<float> data, bool exact = false);
  void AddDefine(const std::string& line) { defines_ += line + "\n"; }
  // Expression reading input `arg` at output coordinates with TFLite broadcasting: dims of size
  // 1 read index 0, and a 1-channel tensor is splatted across the 4 lanes.
  // Default coordinates are those in scope inside WRITE_ (where fused snippets run).
  std::string ReadBroadcast(const std::string& arg, const BHWC& out_shape, const char* b = "wb_",
                            const char* y = "wy_", const char* x = "wx_", const char* s = "ws_") const;
  // The same for tensors of different ranks (numpy rules: the lower rank is left-padded with
  // 1s): `in`/`out` are the interpreter shapes of the input and of the output.
  std::string ReadBroadcastDims(const std::string& arg, const Dims& in, const Dims& out, const char* b = "wb_",
                                const char* y = "wy_", const char* x = "wx_", const char* s = "ws_") const;
  std::string body;                    // kernel body (see header comment)
  std::array<size_t, 3> grid{1, 1, 1};  // global size before rounding to the work group
  std::array<size_t, 3> local{0, 0, 0};  // 0: the framework picks

  // Used by the framework.
  struct Arg {
    enum Kind { kIn, kOut, kConst } kind;
    std::string name;
    int tensor = -1;
    int const_index = -1;
    BHWC shape;
    bool exact = false;
    std::string post;  // outputs: code WRITE_ applies first (the quantization snap of this output)
    // Outputs placed into a larger tensor (GpuPlaceFn): `shape` stays the logical shape the body
    // sees; WRITE_ shifts its coordinates by `at` after the first `post_split` chars of post_ops.
    bool placed = false;
    int64_t at[4] = {0, 0, 0, 0};
    size_t post_split = 0;
    // An output a direct boundary's RESHAPE-then-CONCATENATION part became (partition_model.cc,
    // DirectBoundaries): written at this offset of each batch of the larger BHWC tensor, in its own
    // shape's row-major order (-1: not such an output).
    int64_t flat = -1;
  };
  const std::vector<Arg>& args() const { return args_; }
  std::vector<Arg>& mutable_args() { return args_; }  // the framework's rewrites (partition_model.cc)
  const std::string& name() const { return name_; }
  const std::string& defines() const { return defines_; }
  std::vector<std::vector<float>>& consts() { return consts_; }
  std::string post_ops;  // fused elementwise code applied by WRITE_ of the first output
  std::vector<std::string> fused_ops;  // names of the ops linked into it (for profiles)
  std::vector<std::string> inlined_ops;  // producers whose values it computes (label prefix)

 private:
  std::string name_;
  std::vector<Arg> args_;
  std::string defines_;
  std::vector<std::vector<float>> consts_;
};

class GpuBuildContext {
 public:
  virtual ~GpuBuildContext() = default;
  virtual const Node& node() const = 0;
  virtual const Tensor& cpu_input(int i) const = 0;
  virtual const Tensor& cpu_output(int i) const = 0;
  virtual bool has_input(int i) const = 0;
  // The real values of constant input i as float (FLOAT32 as is, FLOAT16 widened, quantized
  // types dequantized per tensor or per channel), computed once and kept while the partition
  // is built.
  virtual const std::vector<float>& const_input(int i) = 0;
  virtual GpuTensorRef input(int i) = 0;   // a GPU tensor (constants are uploaded once)
  virtual GpuTensorRef output(int i) = 0;
  virtual KernelBuilder& NewKernel(const std::string& name) = 0;
  // An intermediate GPU tensor private to this op (e.g. a two-pass reduction).
  virtual GpuTensorRef NewTemp(const BHWC& shape) = 0;
  virtual Precision precision() const = 0;
  virtual const GpuDeviceCaps& caps() const = 0;
  // For elementwise snippets: which input carries the fused value (0, or 1 for a commutative
  // op whose chain entered as input 1); the snippet reads the other operand(s) itself.
  virtual int chain_input() const = 0;
  // Whether READ_ of tensor t may use flattened coordinates (y = 0, x = y * W + x): false for a
  // read view that pads H or W (see GpuReadView), whose reads need the true coordinates, and for
  // a computed input (see GpuInlineFn).
  virtual bool flat_readable(const GpuTensorRef& t) const = 0;
  // Whether tensor t is computed by its readers (GpuInlineFn): each READ_ of it runs the
  // producer's code, so generators should read each value as few times as they can.
  virtual bool computed(const GpuTensorRef& t) const = 0;
  // Whether tensor t has a buffer of its own in PHWC4 at its shape (neither a read view nor
  // computed), so a generator may index its storage directly (raw loads, see HALF_<name>).
  virtual bool plain(const GpuTensorRef& t) const = 0;
};

// Elementwise ops also provide a snippet so they can be fused into the producer of their
// first input: `code` transforms the float4 `value` in place (statements on one logical line,
// no // comments), may read other inputs it adds to `kb` under names starting with `prefix`
// (read at the output coordinates wb_, wy_, wx_, ws_ with kb.ReadBroadcast), and must keep
// padding lanes finite.
using GpuElementwiseFn = Status (*)(GpuBuildContext& ctx, KernelBuilder& kb, const std::string& value,
                                    const std::string& prefix, std::string* code);

// Ops that only move data may instead be read in place: a read view makes output 0 an index map
// of input 0 (no kernel, no buffer). Reading the output at (b, y, x, c) reads the input at
// (b - before[0], y - before[1], x - before[2], c - before[3]) and 0 outside the input
// (zero padding); before[3] is a multiple of 4 (whole slices). With no offsets and the same BHWC
// shape the output is the input under another name (an alias: RESHAPE, SQUEEZE...). The framework
// reads views through READ_/LD_ of the consumers, so every generator must read its inputs through
// those macros (never by raw index).
struct GpuReadView {
  int64_t before[4] = {0, 0, 0, 0};
};
// True when the node is such a view (and fills *v); false runs the op's kernel.
using GpuViewFn = bool (*)(GpuBuildContext& ctx, GpuReadView* v);
// Ops that only assemble their inputs (CONCATENATION) may instead have the kernels that make
// their inputs write straight into output 0: input i lands at offsets (*at)[i].before (channel
// offsets a multiple of 4; every input but the last whole slices). True when the node can be
// placed so; the framework then checks each producer (one kernel writes it, nothing else reads
// it) and runs the op's kernel when one does not qualify.
using GpuPlaceFn = bool (*)(GpuBuildContext& ctx, std::vector<GpuReadView>* at);

// Producer/consumer fusion by recomputation ("computed inputs"). A producer op (DEPTHWISE_CONV_2D,
// a global AVERAGE_POOL_2D / MEAN) whose output value at one (b, y, x, slice) is cheap to compute
// from its own inputs may have no kernel: its single consumer's kernel computes every value it
// reads (READ_/LD_ of that input call a function). The framework does this only when the consumer's GpuAcceptInlineFn accepts the
// input and the recomputation stays within budget (TFLITE_GPU_FUSION_DWPW_MAX_MACS); it is off
// for tail (pool, mean) unless TFLITE_GPU_ENABLE_FUSION names it (opt-in, see env.h); dwpw
// (depthwise) is on where each value is computed at most TFLITE_GPU_FUSION_DWPW_MAX_TIMES times.
//
// GpuInlineFn (producer, node() = the producer): adds the inputs and constants the computation
// needs to the reader's kernel `kb` under names starting with `prefix`, and sets `*body` to
// statements computing float4 r_ (declared by the framework) at the coordinates b, y, x, s of its
// output 0 (all in range), reading through the READ_/LD_/LOADW macros of those names. The
// framework applies the output's quantization snap and zeroes the padding lanes. `*macs` gets the
// multiply-adds per float4 value (the recomputation budget).
using GpuInlineFn = Status (*)(GpuBuildContext& ctx, KernelBuilder& kb, const std::string& prefix, std::string* body,
                               int64_t* macs);
// GpuAcceptInlineFn (consumer, node() = the consumer): how many times its kernel will compute each
// value of input `input` when that input is computed (>= 1), or 0 to refuse (the producer then
// runs its own kernel).
using GpuAcceptInlineFn = int64_t (*)(GpuBuildContext& ctx, int input);

// Shared generator boilerplate.
// One work item per output pixel and 4-channel slice of the output "dst" of shape o: sets
// kb.grid to (W, H, slices * B) and returns the statements declaring x, y, s, b (returning early
// for the work items of the rounded-up grid).
inline std::string PerSliceGrid(KernelBuilder& kb, const BHWC& o) {
  kb.grid = {size_t(o.w), size_t(o.h), size_t(o.slices()) * size_t(o.b)};
  return "int x = get_global_id(0), y = get_global_id(1), bs = get_global_id(2);\n"
         "if (x >= dst_W || y >= dst_H || bs >= dst_S * dst_B) return;\n"
         "int s = bs % dst_S, b = bs / dst_S;\n";
}

// The node has exactly `inputs` inputs, none omitted (and `outputs` outputs unless negative).
inline Status ExpectArity(const GpuCheckContext& c, int inputs, int outputs = -1) {
  bool ok = c.num_inputs() == inputs && (outputs < 0 || c.num_outputs() == outputs);
  for (int i = 0; ok && i < inputs; ++i) ok = c.has_input(i);
  if (ok) return OkStatus();
  std::string want = "expects " + std::to_string(inputs) + (inputs == 1 ? " input" : " inputs");
  if (outputs >= 0) want += ", " + std::to_string(outputs) + (outputs == 1 ? " output" : " outputs");
  return Unimplemented(want);
}

}  // namespace gpu

// Rank > 4 and zero-sized tensors never reach a check: the partitioner refuses them first.
// An op has a GPU kernel when its family defines (in csrc/ops/<family>/gpu_*.cc, or in
// <cpu kernel>_gpu.cc next to the CPU kernel: conv2d.cc <-> conv2d_gpu.cc)
//   extern const GpuOpSupport kGpu_ADD;  // (declared by op_registry.h)
//   const GpuOpSupport kGpu_ADD = {CheckAdd, /*build=*/nullptr, AddSnippet, /*commutative=*/true};
struct GpuOpSupport {
  Status (*check)(const gpu::GpuCheckContext& ctx) = nullptr;  // OK or the reason it can't run
  Status (*build)(gpu::GpuBuildContext& ctx) = nullptr;        // nullptr for pure elementwise ops
  gpu::GpuElementwiseFn elementwise = nullptr;
  bool commutative = false;  // the fused chain may enter as input 1 (ADD, MUL, MAXIMUM, MINIMUM)
  gpu::GpuViewFn view = nullptr;  // data-movement ops readable in place (see GpuReadView)
  gpu::GpuPlaceFn place = nullptr;  // ops whose inputs can be written in place (see GpuPlaceFn)
  gpu::GpuInlineFn inline_read = nullptr;  // producers their reader may compute (see GpuInlineFn)
  gpu::GpuAcceptInlineFn accept_inline = nullptr;  // consumers that may compute an input
};

}  // namespace tflite_gpu
