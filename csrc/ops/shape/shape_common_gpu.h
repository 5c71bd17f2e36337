// GPU helpers shared by the shape family's generators (*_gpu.cc next to each op's CPU kernel):
// PHWC4 data movement kernels over FLOAT32 tensors of rank <= 4.
//
// Two kernel shapes, both one work item per output (x, y, slice*batch):
//  * slice kernels move whole float4 slices (the channel axis maps onto the input's channel
//    axis at a multiple of 4): every layout op takes this path when the channels line up;
//  * lane kernels compute the 4 lanes one by one (each lane finds its input element and loads
//    one scalar), for channel offsets that are not a multiple of 4 and for ops that move data
//    across the channel axis.
// Index arithmetic is done on compile-time shapes, so divisions are by constants.
#pragma once
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "gpu/gpu_op.h"
#include "ops/shape/shape_common.h"
#include "runtime/subgraph.h"

namespace tflite_gpu {
namespace shape_gpu {

using gpu::BHWC;
using gpu::GpuBuildContext;
using gpu::GpuCheckContext;
using gpu::KernelBuilder;

inline std::string Str(int64_t v) { return std::to_string(v); }

inline std::string FloatLit(float v) { return gpu::FloatLiteral(v); }

inline BHWC Shape(const Tensor& t) {
  BHWC s;
  gpu::ToBHWC(t.shape, &s);
  return s;
}

inline int Dim(const BHWC& s, int a) { return a == 0 ? s.b : a == 1 ? s.h : a == 2 ? s.w : s.c; }

// Values of a constant integer tensor; false when not constant or not an integer type.
inline bool ConstInts(const Tensor& t, std::vector<int64_t>* v) {
  if (!t.is_const || !t.data) return false;
  const int64_t n = t.num_elements();
  if (n < 0) return false;
  v->resize(size_t(n));
  for (int64_t i = 0; i < n; ++i) {
    switch (t.type) {
      case DType::kInt32: (*v)[i] = t.as<int32_t>()[i]; break;
      case DType::kInt64: (*v)[i] = t.as<int64_t>()[i]; break;
      case DType::kInt16: (*v)[i] = t.as<int16_t>()[i]; break;
      case DType::kInt8: (*v)[i] = t.as<int8_t>()[i]; break;
      default: return false;
    }
  }
  return true;
}

// ------------------------------------------------------------------------------ checks
inline Status DataTensor(const GpuCheckContext& c, const Tensor& t, const std::string& what) {
  TFG_RETURN_IF_ERROR(c.RealTensor(t, what));  // FLOAT32, or quantized with ENABLE_QUANT
  TFG_RETURN_IF_ERROR(c.Rank4OrLess(t, what.c_str()));
  if (t.num_elements() <= 0) return Unimplemented(what + " has no elements (zero-sized tensors stay on the CPU)");
  return OkStatus();
}

// The data inputs `which` and every output: FLOAT32, rank <= 4, not empty.
inline Status CheckData(const GpuCheckContext& c, std::initializer_list<int> which) {
  for (int i : which) {
    if (!c.has_input(i)) return Unimplemented("input " + Str(i) + " is missing");
    TFG_RETURN_IF_ERROR(DataTensor(c, c.input(i), "input " + Str(i)));
  }
  for (int i = 0; i < c.num_outputs(); ++i) TFG_RETURN_IF_ERROR(DataTensor(c, c.output(i), "output " + Str(i)));
  return OkStatus();
}

// ------------------------------------------------------------------------------ kernel shapes
// Launch over (x, y, slice*batch) of the output "dst"; declares b, y, x, s.
inline std::string Prologue(KernelBuilder& kb, const BHWC& o) { return gpu::PerSliceGrid(kb, o); }

// A kernel named `name` reading input 0 as "src" and writing output 0 as "dst".
inline KernelBuilder& SrcDstKernel(GpuBuildContext& ctx, const std::string& name) {
  KernelBuilder& kb = ctx.NewKernel(name);
  kb.AddInput("src", ctx.input(0));
  kb.AddOutput("dst", ctx.output(0));
  return kb;
}

// `code` sets float4 v from the output coordinates b, y, x, s.
inline void SliceKernel(KernelBuilder& kb, const BHWC& o, const std::string& code) {
  kb.body = Prologue(kb, o) + "float4 v = (float4)(0.0f);\n" + code + "\nWRITE_dst(v, b, y, x, s);\n";
}

// `code` sets float e from the output coordinates b, y, x, c (one lane).
inline void LaneKernel(KernelBuilder& kb, const BHWC& o, const std::string& code) {
  kb.body = Prologue(kb, o) +
            "float r_[4] = {0.0f, 0.0f, 0.0f, 0.0f};\n"
            "for (int l_ = 0; l_ < 4; ++l_) {\n"
            "int c = s * 4 + l_;\n"
            "if (c >= dst_C) break;\n"
            "float e = 0.0f;\n" +
            code +
            "\nr_[l_] = e;\n"
            "}\n"
            "WRITE_dst((float4)(r_[0], r_[1], r_[2], r_[3]), b, y, x, s);\n";
}

// Input coordinate along one BHWC axis: off + mul * (output coordinate of axis src); src -1: off.
struct Affine {
  int src = -1;
  int64_t off = 0, mul = 1;
};
using AxisMap = std::array<Affine, 4>;

inline AxisMap Identity() {
  AxisMap m;
  for (int a = 0; a < 4; ++a) m[a].src = a;
  return m;
}

// Whole slices can be moved: the input channel is the output channel plus a multiple of 4.
inline bool Aligned(const AxisMap& m) {
  if (m[3].src != 3 || m[3].mul != 1 || m[3].off % 4 != 0) return false;
  for (int a = 0; a < 3; ++a)
    if (m[a].src == 3) return false;
  return true;
}

inline std::string Coord(const Affine& f, bool slices) {
  if (f.src < 0) return Str(f.off);
  static const char* kVar[4] = {"b", "y", "x", "c"};
  std::string v = (slices && f.src == 3) ? "s" : kVar[f.src];
  int64_t off = (slices && f.src == 3) ? f.off / 4 : f.off;
  std::string e = f.mul == 1 ? v : "(" + Str(f.mul) + " * " + v + ")";
  if (off == 0) return e;
  return "(" + e + (off > 0 ? " + " : " - ") + Str(off > 0 ? off : -off) + ")";
}

// READ_ (slices) or LD_ (lanes) of input `name` through map m.
inline std::string Read(const std::string& name, const AxisMap& m, bool slices) {
  std::string r = (slices ? "READ_" : "LD_") + name + "(";
  for (int a = 0; a < 4; ++a) r += Coord(m[a], slices) + (a < 3 ? ", " : ")");
  return r;
}

// A single-input gather through an affine map (slice kernel when aligned).
inline void AffineKernel(GpuBuildContext& ctx, KernelBuilder& kb, const BHWC& o, const AxisMap& m) {
  if (Aligned(m)) {
    SliceKernel(kb, o, "v = " + Read("src", m, true) + ";");
  } else {
    LaneKernel(kb, o, "e = " + Read("src", m, false) + ";");
  }
}

// The whole generator of an op that is one affine gather of input 0 into output 0.
inline Status BuildAffine(GpuBuildContext& ctx, const std::string& name, const AxisMap& m) {
  AffineKernel(ctx, SrcDstKernel(ctx, name), Shape(ctx.cpu_output(0)), m);
  return OkStatus();
}

// Output linear index L (row-major over the output) -> input linear index IL (`map` sets IL
// from L), then IL -> input coordinates. vec: 4 consecutive output lanes map to one input slice.
inline std::string LinearRead(const std::string& name, bool vec) {
  const std::string& n = name;
  return "int ic_ = IL % " + n + "_C, ip_ = IL / " + n + "_C;\n"
         "int ix_ = ip_ % " + n + "_W, iy_ = (ip_ / " + n + "_W) % " + n + "_H, ib_ = ip_ / (" + n + "_W * " + n +
         "_H);\n" + (vec ? "v = READ_" + n + "(ib_, iy_, ix_, ic_ >> 2);" : "e = LD_" + n + "(ib_, iy_, ix_, ic_);");
}

inline void LinearKernel(GpuBuildContext& ctx, KernelBuilder& kb, const BHWC& o, const std::string& map, bool vec) {
  if (vec) {
    SliceKernel(kb, o, "int L = ((b * dst_H + y) * dst_W + x) * dst_C + s * 4;\nint IL;\n" + map + "\n" +
                           LinearRead("src", true));
  } else {
    LaneKernel(kb, o, "int L = ((b * dst_H + y) * dst_W + x) * dst_C + c;\nint IL;\n" + map + "\n" +
                          LinearRead("src", false));
  }
}

// Build function of ops whose check always refuses them.
inline Status NoBuild(GpuBuildContext&) { return Unimplemented("no GPU kernel"); }

}  // namespace shape_gpu
}  // namespace tflite_gpu
