// Custom ops written in Python: a HostCustomOp whose callbacks call a Python function with numpy
// arrays (copies of the inputs) and copy the returned arrays into the outputs. Invoke and
// allocate run without the GIL; the callbacks take it.
#include "py_interpreter.h"

namespace tflite_gpu::bindings {

namespace {

std::string PyErrorText(py::error_already_set& e) {
  std::string m = e.what();
  return m.size() > 2000 ? m.substr(0, 2000) + "..." : m;
}

py::tuple ShapeTuple(const Dims& d) {
  py::tuple t(d.size());
  for (size_t i = 0; i < d.size(); ++i) t[i] = d[i];
  return t;
}

Status ParseShape(const std::string& name, int i, py::handle h, Dims* out) {
  try {
    out->clear();
    for (py::handle v : py::iter(h)) {
      long long d = py::reinterpret_borrow<py::object>(v).attr("__index__")().cast<long long>();
      if (d < 0 || d > INT32_MAX)
        return InvalidArgument("custom op '" + name + "': shape function gave dimension " + std::to_string(d) +
                               " for output " + std::to_string(i));
      out->push_back(int32_t(d));
    }
  } catch (py::error_already_set& e) {
    return InvalidArgument("custom op '" + name + "': shape function result for output " + std::to_string(i) +
                           " is not a sequence of ints: " + PyErrorText(e));
  }
  return OkStatus();
}

}  // namespace

std::shared_ptr<HostCustomOp> MakePythonCustomOp(const std::string& name, py::object fn, py::object shape_fn) {
  auto op = std::make_shared<HostCustomOp>();
  op->name = name;
  // The Python objects are owned by shared holders released under the GIL.
  auto hold = [](py::object o) {
    return std::shared_ptr<py::object>(new py::object(std::move(o)), [](py::object* p) {
      py::gil_scoped_acquire g;
      delete p;
    });
  };
  auto f = hold(std::move(fn));
  if (!shape_fn.is_none()) {
    auto sf = hold(std::move(shape_fn));
    op->prepare = [name, sf](HostOpContext& ctx) -> Status {
      py::gil_scoped_acquire g;
      try {
        py::list shapes;
        for (int i = 0; i < ctx.num_inputs(); ++i) {
          const Tensor* t = ctx.input(i);
          shapes.append(t ? py::object(ShapeTuple(t->shape)) : py::object(py::none()));
        }
        py::object r = (*sf)(*shapes);
        py::list outs;
        if (ctx.num_outputs() == 1 && !py::isinstance<py::list>(r) && !py::isinstance<py::tuple>(r))
          return InvalidArgument("custom op '" + name + "': the shape function must return a list of shapes");
        outs = py::list(r);
        // One output: a bare shape (a list of ints) is accepted too.
        if (ctx.num_outputs() == 1 && py::len(outs) > 0 && py::isinstance<py::int_>(outs[0])) {
          py::list w;
          w.append(outs);
          outs = w;
        }
        if (int(py::len(outs)) != ctx.num_outputs())
          return InvalidArgument("custom op '" + name + "': the shape function returned " +
                                 std::to_string(py::len(outs)) + " shapes for " + std::to_string(ctx.num_outputs()) +
                                 " outputs");
        for (int i = 0; i < ctx.num_outputs(); ++i) {
          Dims d;
          TFG_RETURN_IF_ERROR(ParseShape(name, i, outs[i], &d));
          TFG_RETURN_IF_ERROR(ctx.SetOutputShape(i, d));
        }
      } catch (py::error_already_set& e) {
        return InvalidArgument("custom op '" + name + "': the shape function raised " + PyErrorText(e));
      } catch (const std::exception& e) {
        return InvalidArgument("custom op '" + name + "': " + e.what());
      }
      return OkStatus();
    };
  }
  const bool static_shapes = bool(op->prepare);
  op->eval = [name, f, static_shapes](HostOpContext& ctx) -> Status {
    py::gil_scoped_acquire g;
    try {
      py::list args;
      for (int i = 0; i < ctx.num_inputs(); ++i) {
        const Tensor* t = ctx.input(i);
        if (!t) {
          args.append(py::none());
          continue;
        }
        py::array a(NumpyDType(t->type), std::vector<py::ssize_t>(t->shape.begin(), t->shape.end()));
        size_t bytes = size_t(std::max<int64_t>(0, t->num_elements())) * DTypeSize(t->type);
        if (bytes && t->data) std::memcpy(a.mutable_data(), t->data, bytes);
        args.append(a);
      }
      py::object r = (*f)(*args);
      py::list outs;
      if (py::isinstance<py::tuple>(r) || py::isinstance<py::list>(r))
        outs = py::list(r);
      else
        outs.append(r);
      if (int(py::len(outs)) != ctx.num_outputs())
        return InvalidArgument("custom op '" + name + "' returned " + std::to_string(py::len(outs)) +
                               " arrays; the node has " + std::to_string(ctx.num_outputs()) + " outputs");
      for (int i = 0; i < ctx.num_outputs(); ++i) {
        Tensor* o = ctx.output(i);
        py::dtype want = NumpyDType(o->type);
        py::array a = py::array::ensure(outs[i]);
        if (!a) {
          PyErr_Clear();
          return InvalidArgument("custom op '" + name + "': output " + std::to_string(i) + " is not array-like");
        }
        if (!a.dtype().equal(want))
          return InvalidArgument("custom op '" + name + "': output " + std::to_string(i) + " has dtype " +
                                 std::string(py::str(a.dtype())) + " but the model declares " +
                                 std::string(py::str(want)) + " (" + DTypeName(o->type) + ")");
        Dims shape;
        for (py::ssize_t k = 0; k < a.ndim(); ++k) {
          if (a.shape(k) > INT32_MAX)
            return InvalidArgument("custom op '" + name + "': output " + std::to_string(i) + " is too large");
          shape.push_back(int32_t(a.shape(k)));
        }
        if (static_shapes) {
          if (shape != o->shape)
            return InvalidArgument("custom op '" + name + "': output " + std::to_string(i) + " has shape " +
                                   DimsToString(shape) + " but the shape function said " + DimsToString(o->shape));
        } else {
          TFG_RETURN_IF_ERROR(ctx.SetOutputShape(i, shape));
        }
        py::array c = py::array::ensure(a, py::array::c_style);
        size_t bytes = size_t(std::max<int64_t>(0, o->num_elements())) * DTypeSize(o->type);
        if (bytes) {
          if (!o->data || o->bytes < bytes)
            return Internal("custom op '" + name + "': output " + std::to_string(i) + " has no storage");
          std::memcpy(o->data, c.data(), bytes);
        }
      }
    } catch (py::error_already_set& e) {
      return InvalidArgument("custom op '" + name + "' raised " + PyErrorText(e));
    } catch (const std::exception& e) {
      return InvalidArgument("custom op '" + name + "': " + e.what());
    }
    return OkStatus();
  };
  return op;
}

}  // namespace tflite_gpu::bindings
