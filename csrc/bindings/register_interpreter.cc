// Binding of FlatBufferModel + Interpreter. The Python class tflite_gpu.Interpreter builds the
// tf.lite-shaped dicts on top of these calls. Invoke releases the GIL; one mutex per
// interpreter serialises calls on it (taken through PyInterpreter::Lock(), which never waits
// for it with the GIL held), so interpreters in different threads run in parallel.
#include "py_interpreter.h"

namespace tflite_gpu::bindings {

std::shared_ptr<HostCustomOp> MakePythonCustomOp(const std::string& name, py::object fn, py::object shape_fn);

PyInterpreter* MakeInterpreter(py::object model_path, py::object model_content, int num_threads, bool reference,
                               bool preserve_all_tensors, py::dict custom_ops) {
  InterpreterOptions opts;
  opts.num_threads = num_threads;
  opts.use_reference_kernels = reference;
  opts.preserve_all_tensors = preserve_all_tensors;
  for (auto kv : custom_ops) {
    py::tuple t = py::reinterpret_borrow<py::tuple>(kv.second);
    opts.host_custom_ops.push_back(MakePythonCustomOp(py::str(kv.first), t[0], t[1]));
  }
  Status st;
  std::unique_ptr<FlatBufferModel> model;
  if (!model_path.is_none()) {
    std::string p = py::str(model_path);
    py::gil_scoped_release r;
    model = FlatBufferModel::BuildFromFile(p.c_str(), &st);
  } else if (!model_content.is_none()) {
    std::string bytes;
    if (py::isinstance<py::bytes>(model_content)) {
      bytes = std::string(model_content.cast<py::bytes>());
    } else {
      py::buffer_info bi = py::buffer(model_content).request();
      bytes.assign(static_cast<const char*>(bi.ptr), size_t(bi.size * bi.itemsize));
    }
    py::gil_scoped_release r;
    model = FlatBufferModel::BuildFromBytes(std::move(bytes), &st);
  } else {
    throw py::value_error("Interpreter needs model_path or model_content");
  }
  if (!model) ThrowStatus(st.ok() ? InvalidArgument("could not load the model") : st);
  return new PyInterpreter(std::move(model), opts);
}

void RegisterInterpreter(py::module_& m) {
  py::class_<PyInterpreter>(m, "Interpreter", py::dynamic_attr())
      .def(py::init(&MakeInterpreter), py::arg("model_path") = py::none(), py::arg("model_content") = py::none(),
           py::arg("num_threads") = -1, py::arg("use_reference_kernels") = false,
           py::arg("preserve_all_tensors") = false, py::arg("custom_ops") = py::dict())
      .def("allocate_tensors", &PyInterpreter::Allocate, py::arg("subgraph") = 0)
      .def("invoke", &PyInterpreter::Invoke, py::arg("subgraph") = 0)
      .def("inputs", [](PyInterpreter& s, int g) { auto l = s.Lock(); return s.interp().inputs(s.sg(g)); }, py::arg("subgraph") = 0)
      .def("outputs", [](PyInterpreter& s, int g) { auto l = s.Lock(); return s.interp().outputs(s.sg(g)); }, py::arg("subgraph") = 0)
      .def("num_tensors", [](PyInterpreter& s, int g) { auto l = s.Lock(); return s.interp().tensors_size(s.sg(g)); }, py::arg("subgraph") = 0)
      .def("num_subgraphs", [](PyInterpreter& s) { auto l = s.Lock(); return s.interp().subgraphs_size(); })
      .def("reset_variable_tensors", [](PyInterpreter& s) {
        auto l = s.Lock();
        s.CheckNoViews();
        ThrowStatus(s.interp().ResetVariableTensors());
      })
      .def("allocated", [](PyInterpreter& s, int g) { auto l = s.Lock(); return s.interp().allocated(s.sg(g)); }, py::arg("subgraph") = 0)
      .def("tensor_info", &PyInterpreter::TensorInfo, py::arg("subgraph"), py::arg("index"))
      .def("get_tensor", &PyInterpreter::GetTensor, py::arg("subgraph"), py::arg("index"))
      .def("tensor_view", [](py::object self, int g, int i) { return self.cast<PyInterpreter&>().TensorView(self, g, i); })
      .def("set_tensor", &PyInterpreter::SetTensor, py::arg("subgraph"), py::arg("index"), py::arg("value"))
      .def("resize_input", &PyInterpreter::Resize, py::arg("subgraph"), py::arg("index"), py::arg("dims"),
           py::arg("strict") = false)
      .def("nodes", &PyInterpreter::Nodes, py::arg("subgraph") = 0, py::arg("delegate_kernels") = false)
      .def("signatures", &PyInterpreter::Signatures)
      .def("num_threads", [](PyInterpreter& s) { auto l = s.Lock(); return s.interp().num_threads(); })
      .def("set_num_threads", [](PyInterpreter& s, int n) {
        auto l = s.Lock();
        s.interp().SetNumThreads(n);
      })
      .def("set_profiling", [](PyInterpreter& s, bool on) { auto l = s.Lock(); s.interp().SetProfiling(on); })
      .def("profile", &PyInterpreter::Profile, py::arg("subgraph") = 0)
      .def("arena_bytes", [](PyInterpreter& s, int g) { auto l = s.Lock(); return s.interp().arena_bytes(s.sg(g)); }, py::arg("subgraph") = 0)
      .def("model_description", [](PyInterpreter& s) { auto l = s.Lock(); return s.interp().model().description(); })
      .def("model_metadata", [](PyInterpreter& s) {
        auto l = s.Lock();
        py::dict d;
        for (auto& kv : s.interp().model().metadata()) d[py::str(kv.first)] = py::bytes(kv.second);
        return d;
      })
      .def("live_views", &PyInterpreter::live_views);
}

}  // namespace tflite_gpu::bindings
