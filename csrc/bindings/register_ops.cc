#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "ops/op_registry.h"

namespace py = pybind11;

namespace tflite_gpu::bindings {

void RegisterOps(py::module_& m) {
  m.def("supported_ops", [] {
    py::list out;
    for (const OpInfo& op : AllOps()) {
      py::dict d;
      d["name"] = op.name;
      d["builtin_code"] = op.builtin_code;
      d["custom_code"] = op.custom_code ? py::object(py::str(op.custom_code)) : py::object(py::none());
      d["max_version"] = op.max_version;
      d["family"] = op.family;
      d["has_cpu_kernel"] = op.impl->eval != nullptr;
      d["has_reference_kernel"] = op.impl->eval_ref != nullptr || op.impl->eval != nullptr;
      d["has_gpu_kernel"] = op.gpu != nullptr;
      py::list q;  // the quantized-kernel column
      if (op.quant & QI8) q.append("int8");
      if (op.quant & QU8) q.append("uint8");
      if (op.quant & QI16) q.append("int16x8");
      if (op.quant & QHYB) q.append("hybrid");
      d["quantized_kernels"] = q;
      out.append(d);
    }
    return out;
  }, "Every op in the engine's table, in table order.");
  m.def("builtin_name", &BuiltinName);
}

}  // namespace tflite_gpu::bindings
