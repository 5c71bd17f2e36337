#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "tflite_gpu/ops.h"

namespace py = pybind11;

namespace tflite_gpu::bindings {

void RegisterOps(py::module_& m) {
  m.def("supported_ops", [] {
    py::list out;
    for (const OpDescription& op : SupportedOps()) {
      py::dict d;
      d["name"] = op.name;
      d["builtin_code"] = op.builtin_code;
      d["custom_code"] = op.is_custom ? py::object(py::str(op.custom_code)) : py::object(py::none());
      d["max_version"] = op.max_version;
      d["family"] = op.family;
      d["has_cpu_kernel"] = op.has_cpu_kernel;
      d["has_reference_kernel"] = op.has_reference_kernel;
      d["has_gpu_kernel"] = op.has_gpu_kernel;
      d["quantized_kernels"] = op.quantized_kernels;  // the quantized-kernel column
      out.append(d);
    }
    return out;
  }, "Every op in the engine's table, in table order.");
  m.def("builtin_name", &BuiltinOpName);
}

}  // namespace tflite_gpu::bindings
