#include <cmath>
#include <cstdio>
#include <cstring>

#include "gpu/gpu_op.h"
#include "runtime/subgraph.h"

namespace tflite_gpu::gpu {

std::string FloatLiteral(float v) {
  uint32_t u;
  std::memcpy(&u, &v, 4);
  char buf[32];
  std::snprintf(buf, sizeof(buf), "as_float(0x%08xu)", u);
  return buf;
}

size_t NextPow2(size_t v) {
  size_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

bool ToBHWC(const Dims& d, BHWC* out) {
  switch (d.size()) {
    case 0: *out = {1, 1, 1, 1}; return true;
    case 1: *out = {1, 1, 1, d[0]}; return true;
    case 2: *out = {d[0], 1, 1, d[1]}; return true;
    case 3: *out = {d[0], 1, d[1], d[2]}; return true;
    case 4: *out = {d[0], d[1], d[2], d[3]}; return true;
    default: return false;
  }
}

int AxisToBHWC(int axis, int rank) {
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return -1;
  static const int k1[] = {3}, k2[] = {0, 3}, k3[] = {0, 2, 3}, k4[] = {0, 1, 2, 3};
  switch (rank) {
    case 1: return k1[axis];
    case 2: return k2[axis];
    case 3: return k3[axis];
    case 4: return k4[axis];
    default: return -1;
  }
}

const Tensor& GpuCheckContext::input(int i) const { return sg_.tensor(node_.inputs[i]); }
const Tensor& GpuCheckContext::output(int i) const { return sg_.tensor(node_.outputs[i]); }

Status GpuCheckContext::InputsFloat32(std::initializer_list<int> which) const {
  for (int i : which) {
    if (!has_input(i)) continue;
    if (input(i).type != DType::kFloat32)
      return Unimplemented(std::string("input ") + std::to_string(i) + " has type " + DTypeName(input(i).type) +
                           "; the GPU kernel takes FLOAT32");
  }
  return OkStatus();
}

Status GpuCheckContext::OutputsFloat32() const {
  for (int i = 0; i < num_outputs(); ++i)
    if (output(i).type != DType::kFloat32)
      return Unimplemented(std::string("output ") + std::to_string(i) + " has type " + DTypeName(output(i).type) +
                           "; the GPU kernel produces FLOAT32");
  return OkStatus();
}

Status GpuCheckContext::Rank4OrLess(const Tensor& t, const char* what) const {
  if (t.shape.size() > 4)
    return Unimplemented(std::string(what) + " has rank " + std::to_string(t.shape.size()) + "; the GPU takes rank <= 4");
  return OkStatus();
}

Status GpuCheckContext::Constant(int i, const char* what) const {
  if (!has_input(i) || !input(i).is_const) return Unimplemented(std::string(what) + " must be a constant tensor on the GPU");
  return OkStatus();
}

void KernelBuilder::AddInput(const std::string& arg, const GpuTensorRef& t) {
  args_.push_back({Arg::kIn, arg, t.id, -1, t.shape, false});
}
void KernelBuilder::AddOutput(const std::string& arg, const GpuTensorRef& t) {
  args_.push_back({Arg::kOut, arg, t.id, -1, t.shape, false});
}
void KernelBuilder::AddConstBuffer(const std::string& arg, std::vector<float> data, bool exact) {
  consts_.push_back(std::move(data));
  args_.push_back({Arg::kConst, arg, -1, int(consts_.size()) - 1, BHWC{}, exact});
}

std::string KernelBuilder::ReadBroadcast(const std::string& arg, const BHWC& out, const char* b, const char* y,
                                         const char* x, const char* s) const {
  const Arg* a = nullptr;
  for (const Arg& it : args_)
    if (it.name == arg) a = &it;
  if (!a) return "(float4)(0)";
  const BHWC& in = a->shape;
  std::string bb = in.b == 1 ? "0" : b, yy = in.h == 1 ? "0" : y, xx = in.w == 1 ? "0" : x;
  if (in.c == 1 && out.c != 1)
    return "((float4)(READ_" + arg + "(" + bb + ", " + yy + ", " + xx + ", 0).x))";
  std::string ss = in.slices() == 1 ? "0" : s;
  return "READ_" + arg + "(" + bb + ", " + yy + ", " + xx + ", " + ss + ")";
}

std::string KernelBuilder::ReadBroadcastDims(const std::string& arg, const Dims& in, const Dims& out,
                                             const char* b, const char* y, const char* x, const char* s) const {
  const int R = int(out.size()), r = int(in.size());
  if (r == R) {
    BHWC o;
    ToBHWC(out, &o);
    return ReadBroadcast(arg, o, b, y, x, s);
  }
  const char* out_coord[4] = {b, y, x, s};
  std::string coord[4] = {"0", "0", "0", "0"};
  for (int j = 0; j < r; ++j) {
    int ain = AxisToBHWC(j, r);
    int i = j + (R - r);
    int aout = AxisToBHWC(i, R);
    if (ain < 0 || aout < 0) continue;
    if (in[j] != 1) coord[ain] = out_coord[aout];
  }
  BHWC ib, ob;
  ToBHWC(in, &ib);
  ToBHWC(out, &ob);
  if (ib.c == 1 && ob.c != 1)
    return "((float4)(READ_" + arg + "(" + coord[0] + ", " + coord[1] + ", " + coord[2] + ", 0).x))";
  return "READ_" + arg + "(" + coord[0] + ", " + coord[1] + ", " + coord[2] + ", " + (ib.slices() == 1 ? std::string("0") : coord[3]) + ")";
}

}  // namespace tflite_gpu::gpu
