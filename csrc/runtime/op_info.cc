// The public op listing (tflite_gpu/ops.h) over the internal op table.
#include "tflite_gpu/ops.h"

#include "ops/op_registry.h"

namespace tflite_gpu {

std::vector<OpDescription> SupportedOps() {
  std::vector<OpDescription> out;
  for (const OpInfo& op : AllOps()) {
    OpDescription d;
    d.name = op.name;
    d.builtin_code = op.builtin_code;
    d.is_custom = op.custom_code != nullptr;
    if (op.custom_code) d.custom_code = op.custom_code;
    d.max_version = op.max_version;
    d.family = op.family;
    d.has_cpu_kernel = op.impl->eval != nullptr;
    d.has_reference_kernel = op.impl->eval_ref != nullptr || op.impl->eval != nullptr;
    d.has_gpu_kernel = op.gpu != nullptr;
    if (op.quant & QI8) d.quantized_kernels.push_back("int8");
    if (op.quant & QU8) d.quantized_kernels.push_back("uint8");
    if (op.quant & QI16) d.quantized_kernels.push_back("int16x8");
    if (op.quant & QHYB) d.quantized_kernels.push_back("hybrid");
    out.push_back(std::move(d));
  }
  return out;
}

std::string BuiltinOpName(int builtin_code) { return BuiltinName(builtin_code); }

}  // namespace tflite_gpu
