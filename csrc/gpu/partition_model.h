// The prepared GPU model of one delegated partition, and the builder that makes it.
//
// GpuPartitionModel is plain data (sources, launch sizes, argument bindings, constant weights,
// memory plan) so that it can be written to disk and read back (serialization) and run by
// PartitionRuntime without any op knowledge.
//
// Decisions the builder makes:
//  * Fusion: an elementwise node whose chain input (input 0, or input 1 for commutative ops) is
//    the single-consumer output of an earlier kernel in the partition, with the same shape, and
//    whose other inputs exist before that kernel runs, is linked into that kernel's WRITE_ (no
//    kernel launch, no intermediate buffer). Chains of such nodes link one after another.
//  * Boundaries: each partition input (a CPU tensor, BHWC float32) is uploaded to a staging
//    buffer and converted to PHWC4 by a kernel; each output is converted back and read. A float32
//    boundary whose tensor only the model's kernels touch (through the access macros) is instead
//    kept in BHWC in the staging buffer itself, with no conversion kernel (a direct boundary).
//  * Memory: GPU tensors (not constants) share buffers by lifetime over the kernel sequence:
//    in order of first use, a tensor takes the smallest free buffer that fits, else grows the
//    largest free one, else gets a new one (TFLite's greedy-in-order strategy).
#pragma once
#include <array>
#include <string>
#include <vector>

#include "gpu/gpu_op.h"

namespace tflite_gpu {
class Subgraph;
namespace gpu {

struct GpuTensorDesc {
  BHWC shape;
  int cpu_tensor = -1;   // the interpreter tensor it mirrors (-1 for temporaries)
  int const_index = -1;  // constant tensors: index into consts (PHWC4 order)
};

struct GpuKernelArg {
  enum Kind { kTensor = 0, kConst = 1, kStaging = 2 } kind;
  int index;
};

struct GpuKernelDesc {
  std::string name;
  // Empty for a direct boundary's conversion entry (partition_model.cc, DirectBoundaries): the
  // tensor is kept in the host's layout in the boundary's staging buffer, which the model's
  // kernels index (kStaging arguments); nothing is launched, but the entry keeps its place (the
  // first inputs.size() kernels convert the inputs, the last outputs.size() the outputs) and its
  // launch size (a bound buffer's conversion kernel takes it).
  std::string source;
  std::array<size_t, 3> global{1, 1, 1};
  std::array<size_t, 3> local{0, 0, 0};  // 0: the framework picks it (and may tune it)
  bool tunable = false;  // the framework chose `local` (the kernel does not depend on it)
  std::vector<GpuKernelArg> args;
  int node = -1;  // the node it came from (-1 for boundary conversions)
  std::string op;  // its op name ("" for boundary conversions)
  std::string label;  // op name plus fused ops, e.g. "CONV_2D+ADD+RELU6" (profiles)
};

struct GpuPartitionModel {
  Precision precision = Precision::kF32;
  std::vector<int> nodes;
  std::vector<GpuTensorDesc> tensors;
  std::vector<std::vector<float>> consts;
  std::vector<bool> const_exact;  // kept in float even in fp16 modes
  // Mixed storage (precision_plan.h): per GPU tensor, 1 = stored as float even in the fp16 modes
  // (a value the plan expects past fp16's range). Kernels declare and read each tensor argument
  // with its own type, so fp16 and float tensors meet at kernel boundaries with no conversion
  // kernel. A constant tensor's flag equals its const_exact entry; a read view reads its base's.
  std::vector<uint8_t> tensor_f32;
  std::vector<GpuKernelDesc> kernels;
  // snap: OpenCL statements on float4 `v` that the conversion kernel of an input runs before it
  // stores (a QUANTIZE from the float host input to a grid, folded into the upload); empty for none.
  struct Boundary { int cpu_tensor; int gpu_tensor; int staging; std::string snap; };
  std::vector<Boundary> inputs, outputs;
  std::vector<size_t> staging_bytes;
  std::vector<int> tensor_slot;   // per GPU tensor: buffer slot (-1 for constants)
  std::vector<size_t> slot_bytes;
  // Debug (env TFLITE_GPU_DEBUG_SENTINELS=1): no buffer sharing, and the runtime surrounds every
  // buffer's end with a sentinel pattern it checks after each run (out-of-bounds writes).
  bool debug_sentinels = false;
  // Whether GPU tensor t is stored as half, and its bytes per element.
  bool tensor_half(int t) const {
    return precision != Precision::kF32 && !(t >= 0 && size_t(t) < tensor_f32.size() && tensor_f32[size_t(t)]);
  }
  size_t tensor_bytes(int t) const { return tensor_half(t) ? 2 : 4; }
  // The precision the boundary conversion kernels of tensor t use (kF32 for a float-stored one).
  Precision tensor_precision(int t) const { return tensor_half(t) ? precision : Precision::kF32; }
};

// Builds the model of `nodes` (a contiguous run of the plan, all passing their GPU check).
// On a generator failure, *failed_node names the node.
Status BuildPartitionModel(Subgraph& sg, const std::vector<int>& nodes, Precision precision,
                           const GpuDeviceCaps& caps, GpuPartitionModel* out, int* failed_node);

// A boundary conversion between a PHWC4 device tensor of `shape` and a user's OpenCL buffer
// holding it in BHWC float32 (half_buffer: float16), with no (de)quantization (buffer binding:
// quantized tensors are bound as their dequantized values). Same argument order and launch
// geometry as the model's own conversion kernels (to_device: (buffer, tensor); else (tensor, buffer)).
// linear: the device tensor is a direct boundary's (float32 BHWC in its staging buffer, see
// GpuKernelDesc::source), so only the element type changes.
// typed_half: TypedHalfReads of the device.
std::string BoundConversionSource(Precision precision, const BHWC& shape, bool to_device, bool half_buffer,
                                  bool typed_half, const std::string& snap = std::string(), bool linear = false);

// Whether kernels read and write 4 halves through a uint2* (partition_model.cc's VectorAccess) on
// a device of this NVIDIA compute capability (0: not NVIDIA), rather than through vload_half4.
inline bool TypedHalfReads(int nv_compute_capability) { return nv_compute_capability > 0; }

// Local work size for a grid (framework default).
std::array<size_t, 3> DefaultLocalSize(const std::array<size_t, 3>& grid, size_t max_wg);

}  // namespace gpu
}  // namespace tflite_gpu
