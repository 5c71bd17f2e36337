// The contract between the interpreter and an op family. One OpImpl per op, looked up through
// the single table in op_list.inc.
//
// Life of a node:
//   parse    (once, at interpreter build)  builtin/custom options -> node.params; arity checks
//   prepare  (every allocate_tensors / resize, and at invoke when an input is dynamic)
//            type checks, output shapes (ctx.SetOutputShape), scratch (ctx.RequestScratch),
//            weight packing into node.user_data when weights are constant
//   eval     (every invoke) the fast kernel
//   eval_ref the plain scalar kernel kept as the test oracle (nullptr: eval is already plain)
// Every failure is a Status whose message names the op and the problem; the interpreter
// prefixes the node index.
#pragma once
#include <algorithm>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "model/flatbuffer.h"
#include "ops/activation.h"
#include "tflite_gpu/status.h"
#include "tflite_gpu/types.h"

namespace tflite_gpu {

class Subgraph;
class ThreadPool;

struct Node {
  int index = 0;
  const struct OpInfo* op = nullptr;
  int version = 1;
  std::vector<int32_t> inputs, outputs, intermediates;
  std::shared_ptr<void> params;     // parsed options, type chosen by the op
  std::shared_ptr<void> user_data;  // prepared state (packed weights, ...)
  size_t scratch_bytes = 0;
  bool delegated = false;           // replaced by a delegate kernel
  bool folded = false;              // constant-folded at allocation (not part of the plan)
  // CPU graph fusion (Subgraph::FuseCpuNodes, decided at every allocate_tensors): on a float
  // CONV_2D, the chain it absorbs: a residual ADD and/or a per-channel PRELU after it. The conv
  // writes prelu(clamp_add(clamp_conv(conv + bias) + residual)) straight into the chain's last
  // output `out` (its own output and an ADD's before a fused PRELU are written by no step). On the
  // absorbed nodes fused_into = the conv's node index (-1 otherwise). The fused conv runs at the
  // step of the chain's last node (run_at), in place of it; the other steps are skipped.
  struct CpuFusion {
    int run_at = -1;    // the node whose plan step runs this conv (-1: no fusion)
    int out = -1;       // the tensor the conv writes
    int add_node = -1;  // the residual ADD (-1: none)
    int residual = -1;  // its other operand (same shape as the conv's output)
    float lo = 0.f, hi = 0.f;  // its clamp (its fused activation over float's finite range)
    int prelu_node = -1;  // the PRELU (-1: none)
    int alpha = -1;       // its alpha: a constant of out_c floats
    int pad_node = -1;    // a channel PAD (zeros after the last channel) making the residual: the
    int res_c = 0;        // conv reads its input, of res_c channels, instead (0: no PAD)
  } fuse;
  int fused_into = -1;
  std::vector<int> subgraph_refs;   // subgraphs this node calls (WHILE, IF, CALL_ONCE), set by
                                    // parse; the interpreter checks range and recursion at load
  template <typename T> const T& P() const { return *static_cast<const T*>(params.get()); }
  template <typename T> T* U() const { return static_cast<T*>(user_data.get()); }
};

// View of the builtin options table; accessors return the schema default when absent.
struct OptionsView {
  fb::Table table;
  uint8_t type = 0;
  const uint8_t* custom = nullptr;
  size_t custom_size = 0;
  fb::Table table2;   // builtin_options_2 (DILATE, REDUCE_WINDOW, ...)
  uint8_t type2 = 0;  // its BuiltinOptions2 union type
  template <typename T> T Get(int field, T dflt) const { return table.Scalar<T>(field, dflt); }
  bool GetBool(int field, bool dflt = false) const { return table.Bool(field, dflt); }
  std::vector<int32_t> GetInts(int field) const {
    return table.Vector(field, 4, "option vector").ToVector<int32_t>();
  }
};

class OpContext {
 public:
  OpContext(Subgraph* sg, Node* node, ThreadPool* pool) : sg_(sg), node_(node), pool_(pool) {}
  Node& node() { return *node_; }
  const Node& node() const { return *node_; }
  Subgraph& subgraph() { return *sg_; }
  ThreadPool* pool() { return pool_; }
  int num_inputs() const { return int(node_->inputs.size()); }
  int num_outputs() const { return int(node_->outputs.size()); }
  // Inputs a model marks absent (tensor index -1, TFLite's optional-input marker). An op declares
  // an input optional by asking has_input(i) / optional_input(i) in prepare; the interpreter
  // (Subgraph::PrepareNode) refuses the node when an absent input was not asked about, or was
  // read through input(i): input(i)/output(i) on an absent or out-of-range position never touch
  // memory, they return an empty placeholder tensor (shape [0], no data) and record the misuse,
  // which turns into an error naming the op, node and input position. No per-op code needed.
  bool has_input(int i) const {
    if (i >= 0 && i < 64) asked_ |= uint64_t(1) << i;
    return i >= 0 && i < num_inputs() && node_->inputs[i] >= 0;
  }
  Tensor& input(int i);
  Tensor* optional_input(int i) { return has_input(i) ? &input(i) : nullptr; }
  Tensor& output(int i);
  // Set by input()/output() on a position the node does not have (-1 when none).
  int missing_input() const { return missing_input_; }
  int missing_output() const { return missing_output_; }
  // Absent (-1) inputs that prepare neither asked about nor read (bit i: input i).
  uint64_t UnacknowledgedAbsentInputs() const;
  // Sets an output's type and shape. At prepare time an arena output is placed later; a dynamic
  // output (shape depends on data not known at prepare) is (re)allocated immediately.
  Status SetOutputShape(int i, const Dims& shape);
  Status SetOutputType(int i, DType t);
  // Marks output i as dynamic: its shape is computed at eval via SetOutputShape.
  void SetOutputDynamic(int i);
  bool IsConstantOrPersistent(const Tensor& t) const;  // data known at prepare time
  void RequestScratch(size_t bytes) { node_->scratch_bytes = std::max(node_->scratch_bytes, bytes); }
  void* scratch();
  Status Error(const std::string& msg) const;  // InvalidArgument naming the op
  // Helpers for the common checks.
  Status CheckArity(int min_in, int max_in, int min_out, int max_out) const;
  Status CheckType(const Tensor& t, DType expect, const char* what) const;

 private:
  Tensor& Missing(int i, bool is_input);
  Subgraph* sg_;
  Node* node_;
  ThreadPool* pool_;
  mutable uint64_t asked_ = 0;  // inputs prepare looked at (has_input/optional_input/input)
  int missing_input_ = -1, missing_output_ = -1;
};

using ParseFn = Status (*)(const OptionsView& opts, Node& node);
using PrepareFn = Status (*)(OpContext& ctx);
using EvalFn = Status (*)(OpContext& ctx);

struct GpuOpSupport;  // csrc/gpu/gpu_op.h

struct OpImpl {
  ParseFn parse = nullptr;      // nullptr: no options
  PrepareFn prepare = nullptr;
  EvalFn eval = nullptr;
  EvalFn eval_ref = nullptr;
  bool fold_constants = false;  // evaluate once at allocation when every input is constant
                                // (DEQUANTIZE of fp16 weights, DENSIFY of sparse weights)
};

// The quantized-kernel column of op_list.inc.
enum QuantKind : uint32_t { QNONE = 0, QI8 = 1, QU8 = 2, QI16 = 4, QHYB = 8 };

struct OpInfo {
  const char* name;
  int builtin_code;        // 32 (CUSTOM) for custom ops
  const char* custom_code; // nullptr for builtins
  int max_version;
  const char* family;
  const OpImpl* impl;
  const GpuOpSupport* gpu;  // nullptr: no GPU kernel (the node stays on the CPU)
  uint32_t quant;           // QuantKind flags: which quantized kernels the op has
};

// Runs a HostCustomOp (tflite_gpu/interpreter.h) held in node.params (csrc/runtime/host_ops.cc).
extern const OpImpl kHostCustomOpImpl;

// Every op of op_list.inc, in table order.
const std::vector<OpInfo>& AllOps();
const OpInfo* FindBuiltinOp(int builtin_code);
const OpInfo* FindCustomOp(const std::string& custom_code);
// Name of any TFLite builtin code (also those we do not implement), e.g. "ADD", "BUILTIN_137".
std::string BuiltinName(int code);

// kOp_NAME: the CPU side (csrc/ops/<family>/*.cc). kGpu_NAME: the GPU side, defined by the
// family's gpu_*.cc, or <cpu kernel>_gpu.cc next to its CPU kernel (conv, shape), when the op has a
// GPU kernel (weak: absent means CPU only).
#define TFG_BUILTIN(NAME, CODE, MAXV, FAMILY, QUANT) \
  extern const OpImpl kOp_##NAME;             \
  extern const GpuOpSupport kGpu_##NAME __attribute__((weak));
#define TFG_CUSTOM(NAME, CUSTOM, MAXV, FAMILY, QUANT) \
  extern const OpImpl kOp_##NAME;              \
  extern const GpuOpSupport kGpu_##NAME __attribute__((weak));
#include "ops/op_list.inc"
#undef TFG_BUILTIN
#undef TFG_CUSTOM

// Fused activation: see ops/activation.h (the enum, bounds, names, GPU snippet).
Status CheckActivation(int v, Activation* out);

enum class Padding : int8_t { kSame = 0, kValid = 1 };
Status CheckPadding(int v, Padding* out);
// TFLite's output size and leading pad for one spatial dimension.
int ConvOutputSize(Padding p, int in, int filter, int stride, int dilation);
int ConvPadBefore(Padding p, int in, int filter, int stride, int dilation, int out);

}  // namespace tflite_gpu
