// Binding of the GPU delegate (TfLiteGpuDelegateV2Create & co), device listing and the log
// sink that forwards delegate messages to Python's `tflite_gpu` logger.
#include <climits>
#include <memory>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "py_interpreter.h"
#include "tflite_gpu/gpu_delegate.h"
#include "tflite_gpu/serialization.h"

namespace tflite_gpu::bindings {

namespace {

struct PyGpuDelegate {
  TfLiteGpuDelegateOptionsV2 opts{};
  std::string device, op_filter, serialization_dir, model_token;
  std::shared_ptr<TfLiteDelegate> delegate;
  bool closed = false;
  void CheckOpen() const {
    if (closed) throw std::runtime_error("the GPU delegate was closed (TfLiteGpuDelegateV2Delete); create a new one");
  }
};

// Leaked on purpose: a static py::object would be destroyed after the interpreter finalises.
py::object* g_log_callback = nullptr;

void LogToPython(int level, const char* msg, void*) {
  py::gil_scoped_acquire gil;
  if (g_log_callback && !g_log_callback->is_none()) {
    try {
      (*g_log_callback)(level, std::string(msg));
      return;
    } catch (...) {
    }
  }
  std::fprintf(stderr, "%s\n", msg);
}

py::dict InfoDict(const GpuDelegateInfo& i) {
  py::dict d;
  d["available"] = i.available;
  d["unavailable_reason"] = i.unavailable_reason;
  d["device_name"] = i.device_name;
  d["device_vendor"] = i.device_vendor;
  d["platform_name"] = i.platform_name;
  d["driver_version"] = i.driver_version;
  d["device_is_gpu"] = i.device_is_gpu;
  d["fp16"] = i.fp16;
  d["precision"] = i.precision;
  py::list refused;
  for (auto& r : i.refused) refused.append(py::make_tuple(r.node, r.op, r.version, r.reason, r.builtin_code));
  d["refused"] = refused;
  d["partitions"] = i.partitions;
  d["partition_sizes"] = i.partition_sizes;
  d["profiling_queue"] = i.profiling_queue;
  d["cuda_graph_runs"] = i.cuda_graph_runs;
  d["cuda_graph_refused"] = i.cuda_graph_refused;
  d["cuda_graph_programmatic"] = i.cuda_graph_programmatic;
  return d;
}

py::dict SerializationDict(TfLiteDelegate* delegate) {
  GpuSerializationStats s;
  py::dict d;
  if (!GpuDelegateSerializationState(delegate, &s)) return d;
  d["enabled"] = s.enabled;
  d["dir"] = s.dir;
  d["disabled_reason"] = s.disabled_reason;
  d["hits"] = s.hits;
  d["misses"] = s.misses;
  d["writes"] = s.writes;
  d["write_errors"] = s.write_errors;
  d["rejected"] = s.rejected;
  d["reject_reasons"] = s.reject_reasons;
  d["files"] = s.files;
  return d;
}

}  // namespace

void RegisterDelegate(py::module_& m) {
  m.def("_sha256", [](py::bytes data, bool allow_hw) {
    std::string_view v = data;
    return Sha256Hex(v.data(), v.size(), allow_hw);
  }, py::arg("data"), py::arg("allow_hw") = true);
  m.def("_sha256_uses_hardware", [] { return Sha256UsesHardware(); });
  m.def("set_log_callback", [](py::object cb) {
    delete g_log_callback;
    g_log_callback = new py::object(cb);
    SetLogSink(cb.is_none() ? nullptr : &LogToPython, nullptr);
  });
  m.def("list_devices", [] {
    py::list out;
    std::vector<GpuDeviceDescription> devs;
    Status st = ListGpuDevices(&devs);
    if (!st.ok()) throw std::runtime_error(st.message());
    for (const auto& d : devs) {
      py::dict x;
      x["index"] = d.index;
      x["platform"] = d.platform;
      x["platform_version"] = d.platform_version;
      x["name"] = d.name;
      x["vendor"] = d.vendor;
      x["type"] = d.type;
      x["driver_version"] = d.driver_version;
      x["device_version"] = d.device_version;
      x["fp16"] = d.fp16;
      x["global_mem_bytes"] = d.global_mem_bytes;
      x["compute_units"] = d.compute_units;
      x["max_work_group_size"] = d.max_work_group_size;
      x["source"] = d.source;
      out.append(x);
    }
    return out;
  });
  m.def("default_device", [](const std::string& spec) {
    int index = -1;
    Status st = SelectGpuDevice(spec, &index);
    if (!st.ok()) throw std::runtime_error(st.message());
    return index;
  }, py::arg("spec") = "");

  py::class_<PyGpuDelegate>(m, "GpuDelegate")
      .def(py::init([](py::dict o) {
        auto p = std::make_unique<PyGpuDelegate>();  // freed if an option is refused
        p->opts = TfLiteGpuDelegateOptionsV2Default();
        // Every value is checked here too (the C API has fixed-width fields): a wrong type or an
        // out-of-range int is a TypeError/ValueError naming the option, never a cast error or a
        // silently cut value.
        auto cast_error = [](const char* k, py::handle v, const char* want) {
          return py::type_error(std::string("GpuDelegate option '") + k + "': expected " + want + ", got " +
                                std::string(py::str(py::type::of(v).attr("__name__"))));
        };
        auto get_int = [&](const char* k, int64_t lo, int64_t hi) -> int64_t {
          py::object v = o[k];
          if (!py::isinstance<py::int_>(v)) throw cast_error(k, v, "an int");
          int overflow = 0;
          long long x = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
          if (overflow || x < lo || x > hi)
            throw py::value_error(std::string("GpuDelegate option '") + k + "': " + std::string(py::str(v)) +
                                  " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
          return x;
        };
        auto geti = [&](const char* k, int32_t* dst) {
          if (o.contains(k)) *dst = int32_t(get_int(k, INT32_MIN, INT32_MAX));
        };
        geti("is_precision_loss_allowed", &p->opts.is_precision_loss_allowed);
        geti("inference_preference", &p->opts.inference_preference);
        geti("inference_priority1", &p->opts.inference_priority1);
        geti("inference_priority2", &p->opts.inference_priority2);
        geti("inference_priority3", &p->opts.inference_priority3);
        geti("max_delegated_partitions", &p->opts.max_delegated_partitions);
        geti("wait_type", &p->opts.wait_type);
        geti("enable_profiling", &p->opts.enable_profiling);
        if (o.contains("experimental_flags")) p->opts.experimental_flags = get_int("experimental_flags", 0, INT32_MAX);
        auto gets = [&](const char* k, std::string* dst, const char** field) {
          if (o.contains(k) && !o[k].is_none()) {
            if (!py::isinstance<py::str>(o[k])) throw cast_error(k, o[k], "a str");
            *dst = o[k].cast<std::string>();
            if (dst->find('\0') != std::string::npos)
              throw py::value_error(std::string("GpuDelegate option '") + k + "': contains a NUL character");
            *field = dst->c_str();
          }
        };
        gets("device", &p->device, &p->opts.device);
        gets("op_filter", &p->op_filter, &p->opts.op_filter);
        gets("serialization_dir", &p->serialization_dir, &p->opts.serialization_dir);
        gets("model_token", &p->model_token, &p->opts.model_token);
        if (o.contains("cl_context") && !o["cl_context"].is_none()) {
          p->opts.cl_context = reinterpret_cast<void*>(uintptr_t(get_int("cl_context", 1, INT64_MAX)));
          if (o.contains("cl_queue") && !o["cl_queue"].is_none())
            p->opts.cl_queue = reinterpret_cast<void*>(uintptr_t(get_int("cl_queue", 1, INT64_MAX)));
        }
        p->delegate.reset(TfLiteGpuDelegateV2Create(&p->opts), [](TfLiteDelegate* d) { TfLiteGpuDelegateV2Delete(d); });
        return p.release();
      }))
      .def("init", [](PyGpuDelegate& d) {
        d.CheckOpen();
        Status st;
        {
          py::gil_scoped_release r;
          st = GpuDelegateInit(d.delegate.get());
        }
        if (!st.ok()) throw std::runtime_error(st.message());
      })
      .def("info", [](PyGpuDelegate& d) { return InfoDict(GetGpuDelegateInfo(d.delegate.get())); })
      .def("close", [](PyGpuDelegate& d) {
        if (d.delegate) GpuDelegateMarkDeleted(d.delegate.get());
        d.closed = true;
      })
      .def("cache_info", [](PyGpuDelegate& d) {
        std::string dir, refused;
        int c[6] = {0, 0, 0, 0, 0, 0};
        py::dict out;
        if (!d.delegate || !GpuDelegateCacheState(d.delegate.get(), &dir, &refused, c)) return out;
        out["dir"] = dir;
        out["refused"] = refused;
        const char* names[6] = {"memory_hits", "disk_hits", "source_builds", "disk_writes", "disk_rejects",
                                "disk_write_errors"};
        for (int i = 0; i < 6; ++i) out[names[i]] = c[i];
        out["serialization"] = SerializationDict(d.delegate.get());
        return out;
      })
      .def("bind_buffer", [](PyGpuDelegate& d, int tensor_index, uint64_t cl_mem_handle, bool half) {
        d.CheckOpen();
        Status st;
        {
          py::gil_scoped_release r;
          st = GpuDelegateBindBuffer(d.delegate.get(), tensor_index, reinterpret_cast<void*>(uintptr_t(cl_mem_handle)),
                                     half ? kTfLiteFloat16 : kTfLiteFloat32);
        }
        if (!st.ok()) {
          if (st.code() == StatusCode::kFailedPrecondition) throw std::runtime_error(st.message());
          ThrowStatus(st);
        }
      })
      .def("transfer_stats", [](PyGpuDelegate& d) {
        GpuTransferStats t;
        py::dict out;
        if (!d.delegate || !GpuDelegateTransferStats(d.delegate.get(), &t)) return out;
        out["host_to_device"] = t.host_to_device;
        out["device_to_host"] = t.device_to_host;
        out["host_to_device_bytes"] = t.host_to_device_bytes;
        out["device_to_host_bytes"] = t.device_to_host_bytes;
        out["pinned_host_buffers"] = t.pinned_host_buffers;
        out["pinned_host_bytes"] = t.pinned_host_bytes;
        return out;
      })
      .def_property_readonly("closed", [](PyGpuDelegate& d) { return d.closed; });

  // Interpreter methods that involve delegates.
  auto cls = py::reinterpret_borrow<py::object>(m.attr("Interpreter"));
  py::class_<PyInterpreter>& ic = static_cast<py::class_<PyInterpreter>&>(cls);
  ic.def("modify_graph_with_delegate", [](PyInterpreter& self, py::object pyd) {
    PyGpuDelegate& d = pyd.cast<PyGpuDelegate&>();
    d.CheckOpen();
    auto l = self.Lock();
    self.CheckNoViews();
    Status st;
    {
      py::gil_scoped_release r;
      st = self.interp().ModifyGraphWithDelegate(d.delegate.get());
    }
    if (!st.ok()) {
      if (st.code() == StatusCode::kUnavailable || st.code() == StatusCode::kFailedPrecondition)
        throw std::runtime_error(st.message());
      ThrowStatus(st);
    }
    self.delegates.push_back(pyd);
  });
  ic.def("gpu_kernel_times", [](PyInterpreter& self) {
    auto l = self.Lock();
    py::list out;
    for (const DelegateKernelTime& t : self.interp().delegate_kernel_times()) {
      py::dict d;
      d["node"] = t.node;
      d["name"] = t.name;
      d["us"] = t.us;
      d["kernel"] = t.kernel;
      out.append(d);
    }
    return out;
  });
  ic.def("delegate_info", [](PyInterpreter& self) {
    auto l = self.Lock();
    py::list out;
    for (auto& o : self.delegates) out.append(InfoDict(GetGpuDelegateInfo(o.cast<PyGpuDelegate&>().delegate.get())));
    return out;
  });
  ic.def("set_allow_buffer_handle_output", [](PyInterpreter& self, bool v) {
    auto l = self.Lock();
    ThrowStatus(self.interp().SetAllowBufferHandleOutput(v));
  });
  ic.def("ensure_tensor_data_is_readable", [](PyInterpreter& self, int i) {
    auto l = self.Lock();
    Status st;
    {
      py::gil_scoped_release r;
      st = self.interp().EnsureTensorDataIsReadable(i);
    }
    ThrowStatus(st);
  });
}

}  // namespace tflite_gpu::bindings
