// pybind11 module _core: one register_*.cc per area, no logic here.
#include <pybind11/pybind11.h>

namespace py = pybind11;

namespace tflite_gpu::bindings {
void RegisterInterpreter(py::module_& m);
void RegisterOps(py::module_& m);
void RegisterDelegate(py::module_& m);
}  // namespace tflite_gpu::bindings

PYBIND11_MODULE(_core, m) {
  m.doc() = "tflite_gpu C++ core";
  tflite_gpu::bindings::RegisterInterpreter(m);
  tflite_gpu::bindings::RegisterOps(m);
  tflite_gpu::bindings::RegisterDelegate(m);
}
