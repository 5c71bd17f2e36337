// Shared by the register_*.cc files: the Python-facing interpreter object.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

// Only the public API (csrc/include/tflite_gpu/): the library exports nothing else.
#include "tflite_gpu/interpreter.h"

namespace py = pybind11;

namespace tflite_gpu::bindings {

inline void ThrowStatus(const Status& st) {
  switch (st.code()) {
    case StatusCode::kOk: return;
    case StatusCode::kInvalidArgument: case StatusCode::kUnimplemented: throw py::value_error(st.message());
    case StatusCode::kOutOfRange: throw py::index_error(st.message());
    case StatusCode::kNotFound: throw py::key_error(st.message());
    default: throw std::runtime_error(st.message());
  }
}

inline py::dtype NumpyDType(DType t) {
  switch (t) {
    case DType::kFloat32: return py::dtype("float32");
    case DType::kFloat16: return py::dtype("float16");
    case DType::kFloat64: return py::dtype("float64");
    case DType::kInt32: return py::dtype("int32");
    case DType::kInt64: return py::dtype("int64");
    case DType::kInt16: return py::dtype("int16");
    case DType::kInt8: return py::dtype("int8");
    case DType::kUInt8: return py::dtype("uint8");
    case DType::kUInt16: return py::dtype("uint16");
    case DType::kUInt32: return py::dtype("uint32");
    case DType::kUInt64: return py::dtype("uint64");
    case DType::kBool: return py::dtype("bool");
    case DType::kComplex64: return py::dtype("complex64");
    case DType::kComplex128: return py::dtype("complex128");
    // Packed types are held unpacked, one byte per element (as LiteRT's Python API reports them).
    case DType::kInt4: case DType::kInt2: return py::dtype("int8");
    case DType::kUInt4: return py::dtype("uint8");
    case DType::kBFloat16: {
      py::object ml;
      try {
        ml = py::module_::import("ml_dtypes");
      } catch (py::error_already_set&) {
        throw py::value_error("tensor type BFLOAT16 needs the ml_dtypes package (pip install ml_dtypes) for its "
                              "numpy dtype");
      }
      return py::dtype::from_args(ml.attr("bfloat16"));
    }
    default: throw py::value_error(std::string("tensor type ") + DTypeName(t) + " has no numpy equivalent here");
  }
}

// LiteRT's words for a call refused while a numpy view of the arena is alive.
inline constexpr const char* kViewsAliveMessage =
    "There is at least 1 reference to internal data in the interpreter in the form of a numpy array or slice. "
    "Be sure to only hold the function returned from tensor() if you are using raw data access.";

// Said when a callback the interpreter is making (a Python custom op's fn or shape_fn, a log
// handler, an object's __del__ or __float__ run by Python meanwhile) calls the same interpreter.
inline constexpr const char* kReentrantMessage =
    "re-entrant call: this interpreter is busy on this thread (in invoke(), allocate_tensors(), "
    "modify_graph_with_delegate() or another call) and a callback it made (a Python custom op, a log handler) "
    "called the same interpreter again; an interpreter cannot be used from inside its own callbacks "
    "(compute with numpy there, or use a second Interpreter)";

// A mutex that knows which thread holds it, so a call made from inside a callback on the thread
// that holds it is refused (kReentrantMessage) instead of waiting on itself forever.
class OwnedMutex {
 public:
  void lock() {
    mu_.lock();
    owner_.store(std::this_thread::get_id(), std::memory_order_relaxed);
  }
  bool try_lock() {
    if (!mu_.try_lock()) return false;
    owner_.store(std::this_thread::get_id(), std::memory_order_relaxed);
    return true;
  }
  void unlock() {
    owner_.store(std::thread::id(), std::memory_order_relaxed);
    mu_.unlock();
  }
  // Only the holder writes owner_ with its own id, so equality is exact for the calling thread.
  bool held_by_this_thread() const {
    return owner_.load(std::memory_order_relaxed) == std::this_thread::get_id();
  }

 private:
  std::mutex mu_;
  std::atomic<std::thread::id> owner_{};
};

// Thread safety. Every call on one interpreter takes mu_, so calls from several threads serialise.
// Lock order: a thread never WAITS for mu_ while it holds the GIL (Lock() releases the GIL before
// blocking); holding mu_ and then taking the GIL back is fine, since whoever holds the GIL never
// waits for mu_. Re-entrancy: a callback run while this thread holds mu_ (Python custom ops take
// the GIL inside invoke/allocate) that calls the same interpreter gets RuntimeError
// (kReentrantMessage), never a self-deadlock or a call into a half-run graph. Long work (allocate, invoke, delegation) runs with the GIL released.
//
// View safety (LiteRT's rule). tensor_view() hands out numpy arrays aliasing the arena. Each one
// holds a ViewAnchor (its numpy base) that counts live views; a call that can move or free the
// arena, or rewrite it (allocate, resize, invoke, delegation), is refused with RuntimeError while
// the count is non-zero. The count changes only with the GIL held.
class PyInterpreter {
 public:
  PyInterpreter(std::unique_ptr<FlatBufferModel> model, const InterpreterOptions& opts) : model_(std::move(model)) {
    ThrowStatus(InterpreterBuilder(*model_, ops::builtin::BuiltinOpResolver(), opts)(&interp_));
  }

  // Checks a subgraph index; returns it.
  int sg(int i) const {
    if (!interp_->has_subgraph(i)) throw py::index_error("subgraph " + std::to_string(i) + " out of range");
    return i;
  }
  Tensor& tensor(int sgi, int index) {
    sg(sgi);
    Tensor* t = interp_->tensor(sgi, index);
    if (!t)
      throw py::value_error("Tensor index " + std::to_string(index) + " out of range (the model has " +
                            std::to_string(interp_->tensors_size(sgi)) + " tensors)");
    return *t;
  }

  std::unique_lock<OwnedMutex> Lock() {
    if (mu_.held_by_this_thread()) throw std::runtime_error(kReentrantMessage);
    std::unique_lock<OwnedMutex> l(mu_, std::try_to_lock);
    if (!l.owns_lock()) {
      py::gil_scoped_release r;
      l.lock();
    }
    return l;
  }
  void CheckNoViews() const {
    if (live_views_ > 0) throw std::runtime_error(kViewsAliveMessage);
  }
  int live_views() const { return live_views_; }

  void Allocate(int sgi) {
    auto l = Lock();
    CheckNoViews();
    Status st;
    {
      py::gil_scoped_release r;
      st = interp_->AllocateTensors(sg(sgi));
    }
    ThrowStatus(st);
  }
  void Invoke(int sgi) {
    auto l = Lock();
    CheckNoViews();
    sg(sgi);
    if (!interp_->allocated(sgi))
      throw std::runtime_error("invoke() called before allocate_tensors(): call allocate_tensors() first "
                               "(and again after resize_tensor_input())");
    Status st;
    {
      py::gil_scoped_release r;
      st = interp_->Invoke(sgi);
    }
    if (!st.ok()) throw std::runtime_error(st.message());
  }

  py::dict TensorInfo(int sgi, int index) {
    auto l = Lock();
    Tensor& t = tensor(sgi, index);
    py::dict d;
    d["name"] = t.name;
    d["index"] = index;
    d["type"] = int(t.type);
    d["type_name"] = DTypeName(t.type);
    d["shape"] = t.shape;
    d["shape_signature"] = t.shape_signature;
    d["scales"] = t.quant.scale;
    d["zero_points"] = t.quant.zero_point;
    d["quantized_dimension"] = t.quant.quantized_dimension;
    d["block_size"] = t.quant.block_size;
    if (t.quant.block_size > 0) {
      // As LiteRT: the scales and zero points are the contents of their tensors (their own dtypes).
      d["scales"] = ConstContents(sgi, t.quant.blockwise_scales);
      d["zero_points"] = ConstContents(sgi, t.quant.blockwise_zero_points);
    }
    d["is_const"] = t.is_const;
    d["is_variable"] = t.is_variable;
    d["allocated"] = t.data != nullptr;
    if (t.sparsity) {
      py::dict sp;
      sp["traversal_order"] = t.sparsity->traversal_order;
      sp["block_map"] = t.sparsity->block_map;
      py::list dms;
      for (auto& dm : t.sparsity->dim_metadata) {
        py::dict x;
        x["format"] = dm.format;
        x["dense_size"] = dm.dense_size;
        x["array_segments"] = dm.array_segments;
        x["array_indices"] = dm.array_indices;
        dms.append(x);
      }
      sp["dim_metadata"] = dms;
      d["sparsity"] = sp;
    } else {
      d["sparsity"] = py::none();
    }
    return d;
  }

  // A constant tensor's values, flattened (empty when absent or not a constant).
  py::object ConstContents(int sgi, int index) {
    const Tensor* c = index >= 0 ? interp_->tensor(sgi, index) : nullptr;
    if (!c || !c->is_const || !c->data || c->num_elements() < 0 || DTypeSize(c->type) == 0)
      return py::list();
    py::array out(NumpyDType(c->type), std::vector<py::ssize_t>{py::ssize_t(c->num_elements())});
    size_t bytes = size_t(c->num_elements()) * DTypeSize(c->type);
    if (bytes > c->bytes && c->bytes != 0) return py::list();
    if (bytes) std::memcpy(out.mutable_data(), c->data, bytes);
    return out;
  }

  void CheckReadable(Tensor& t, int index) {
    if (!t.data && t.num_elements() != 0)
      throw py::value_error("Tensor " + std::to_string(index) + " ('" + t.name + "') has no data: " +
                            (interp_->allocated() ? "it is internal to a delegated partition (only the "
                                                    "partition's inputs and outputs live on the CPU)"
                                                  : "call allocate_tensors() first"));
    // resize_tensor_input changes the shape at once; the storage follows at allocate_tensors().
    // Until then the old storage may be smaller than the new shape: refuse to read or write it.
    if (t.data && StorageBehindShape(t))
      throw py::value_error("Tensor " + std::to_string(index) + " ('" + t.name + "') was resized to " +
                            DimsToString(t.shape) + " but its storage still has the old size: call "
                            "allocate_tensors() first");
  }

  static bool StorageBehindShape(const Tensor& t) {
    const int64_t n = t.num_elements();
    if (t.type == DType::kString) {  // a written string buffer holds exactly its shape's strings
      int32_t count = 0;
      if (t.bytes >= 4) std::memcpy(&count, t.data, 4);
      return n < 0 || int64_t(count) != n;
    }
    return n < 0 || uint64_t(n) * DTypeSize(t.type) > t.bytes;
  }

  py::array GetTensor(int sgi, int index) {
    auto l = Lock();
    Tensor& t = tensor(sgi, index);
    CheckReadable(t, index);
    if (t.data_is_stale && sgi == 0) ThrowStatus(interp_->EnsureTensorDataIsReadable(index));
    if (t.type == DType::kString) return GetStrings(t);
    py::array out(NumpyDType(t.type), std::vector<py::ssize_t>(t.shape.begin(), t.shape.end()));
    size_t bytes = size_t(std::max<int64_t>(0, t.num_elements())) * DTypeSize(t.type);
    CopyTensorData(out.mutable_data(), t.data, bytes);
    return out;
  }

  // STRING tensors (TFLite's layout: int32 count, count + 1 int32 offsets, bytes) come out as
  // LiteRT gives them: a numpy object array of bytes of the tensor's shape.
  static py::array GetStrings(const Tensor& t) {
    const int64_t n = std::max<int64_t>(0, t.num_elements());
    int32_t count = 0;
    if (t.data && t.bytes >= 4) std::memcpy(&count, t.data, 4);
    py::list items;
    for (int64_t i = 0; i < n; ++i) {
      if (i < count) {
        int32_t a, b;
        std::memcpy(&a, t.data + 4 * (i + 1), 4);
        std::memcpy(&b, t.data + 4 * (i + 2), 4);
        items.append(py::bytes(reinterpret_cast<const char*>(t.data) + a, size_t(b - a)));
      } else {
        items.append(py::bytes());
      }
    }
    py::module_ np = py::module_::import("numpy");
    py::object arr = np.attr("empty")(py::make_tuple(n), py::arg("dtype") = "object");
    for (int64_t i = 0; i < n; ++i) arr.attr("__setitem__")(i, items[size_t(i)]);
    py::tuple shape(t.shape.size());
    for (size_t i = 0; i < t.shape.size(); ++i) shape[i] = t.shape[i];
    return arr.attr("reshape")(shape).cast<py::array>();
  }

  // A numpy array of bytes / str (kind S, U or O) into a STRING tensor (str as UTF-8).
  static void SetStrings(Tensor& t, int index, py::array value) {
    const char kind = value.dtype().kind();
    if (kind != 'S' && kind != 'U' && kind != 'O')
      throw py::value_error("Cannot set tensor: Got value of type " + std::string(py::str(value.dtype())) +
                            " but expected type STRING (bytes or str values) for tensor " + std::to_string(index) +
                            ", name: " + t.name);
    py::list flat = value.attr("ravel")().attr("tolist")();
    std::vector<std::string> items;
    items.reserve(flat.size());
    uint64_t total = 4 * (uint64_t(flat.size()) + 2);
    for (py::handle h : flat) {
      if (py::isinstance<py::bytes>(h))
        items.push_back(h.cast<std::string>());
      else if (py::isinstance<py::str>(h)) {
        try {
          items.push_back(py::reinterpret_borrow<py::str>(h).attr("encode")("utf-8").cast<std::string>());
        } catch (py::error_already_set& e) {  // e.g. a lone surrogate
          throw py::value_error("Cannot set tensor " + std::to_string(index) + " ('" + t.name + "'): string " +
                                std::to_string(items.size()) + " cannot be encoded as UTF-8 (" + e.what() + ")");
        }
      } else
        throw py::value_error("Cannot set tensor " + std::to_string(index) + " ('" + t.name +
                              "'): a STRING tensor takes bytes or str values, got " +
                              std::string(py::str(h.get_type().attr("__name__"))));
      total += items.back().size();
    }
    if (total > uint64_t(INT32_MAX))
      throw py::value_error("Cannot set tensor " + std::to_string(index) + " ('" + t.name + "'): " +
                            std::to_string(total) + " bytes of strings (the STRING layout allows 2 GiB)");
    t.owned.assign(size_t(total) + 1, 0);
    uint8_t* p = t.owned.data();
    auto put = [&](size_t at, int32_t x) { std::memcpy(p + at, &x, 4); };
    put(0, int32_t(items.size()));
    int32_t off = int32_t(4 * (items.size() + 2));
    for (size_t i = 0; i < items.size(); ++i) {
      put(4 * (i + 1), off);
      if (!items[i].empty()) std::memcpy(p + off, items[i].data(), items[i].size());
      off += int32_t(items[i].size());
    }
    put(4 * (items.size() + 1), off);
    t.data = p;
    t.bytes = size_t(total);
  }

  py::array TensorView(py::object self, int sgi, int index) {
    auto l = Lock();
    Tensor& t = tensor(sgi, index);
    if (t.type == DType::kString)
      throw py::value_error("Tensor " + std::to_string(index) + " ('" + t.name +
                            "') is a STRING tensor: tensor() gives no view of it, use get_tensor()");
    CheckReadable(t, index);
    // A delegate output kept on the device is copied to host memory first (as get_tensor does).
    if (t.data_is_stale && sgi == 0) ThrowStatus(interp_->EnsureTensorDataIsReadable(index));
    std::vector<py::ssize_t> shape(t.shape.begin(), t.shape.end());
    py::dtype dt = NumpyDType(t.type);
    // The anchor keeps the interpreter alive and counts this view until numpy drops its base.
    struct ViewAnchor { PyInterpreter* interp; PyObject* owner; };
    auto* anchor = new ViewAnchor{this, self.inc_ref().ptr()};
    ++live_views_;
    py::capsule base(anchor, [](void* p) {
      auto* a = static_cast<ViewAnchor*>(p);
      --a->interp->live_views_;
      Py_DECREF(a->owner);
      delete a;
    });
    py::array arr(dt, shape, {}, t.data, base);
    // Read-only: constants, and tensors bound to an OpenCL buffer (their data lives there; a host
    // write would be ignored by invoke).
    if (t.is_const || t.buffer_handle >= 0)
      py::detail::array_proxy(arr.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
    return arr;
  }

  void SetTensor(int sgi, int index, py::array value) {
    auto l = Lock();
    Tensor& t = tensor(sgi, index);
    const bool str = t.type == DType::kString;
    py::dtype want = str ? value.dtype() : NumpyDType(t.type);
    if (!value.dtype().is(want) && !value.dtype().equal(want))
      throw py::value_error("Cannot set tensor: Got value of type " + std::string(py::str(value.dtype())) +
                            " but expected type " + std::string(py::str(want)) + " (" + DTypeName(t.type) +
                            ") for tensor " + std::to_string(index) + ", name: " + t.name);
    if (size_t(value.ndim()) != t.shape.size())
      throw py::value_error("Cannot set tensor: Dimension mismatch. Got " + std::to_string(value.ndim()) +
                            " dimensions but expected " + std::to_string(t.shape.size()) + " " +
                            DimsToString(t.shape) + " for tensor " + std::to_string(index) + ", name: " + t.name);
    for (size_t i = 0; i < t.shape.size(); ++i)
      if (value.shape(i) != t.shape[i])
        throw py::value_error("Cannot set tensor: Dimension mismatch. Got " + std::to_string(value.shape(i)) +
                              " but expected " + std::to_string(t.shape[i]) + " for dimension " + std::to_string(i) +
                              " of tensor " + std::to_string(index) + " " + DimsToString(t.shape) + ", name: " + t.name);
    if (t.is_const) throw py::value_error("Cannot set tensor " + std::to_string(index) + " ('" + t.name + "'): it is a constant");
    if (t.buffer_handle >= 0)
      throw py::value_error("Cannot set tensor " + std::to_string(index) + " ('" + t.name +
                            "'): an OpenCL buffer is bound to it (GpuDelegate.bind_buffer_to_tensor), so its data "
                            "lives in that buffer (invoke reads a bound input from it and writes a bound output into "
                            "it); write the buffer instead, or unbind it (bind_buffer_to_tensor(" +
                            std::to_string(index) + ", None)) to use host copies again");
    CheckReadable(t, index);
    if (str) {  // the memory planner keeps STRING tensors in resizable heap storage (kDynamic)
      if (t.alloc != Allocation::kDynamic && t.alloc != Allocation::kOwned)
        throw py::value_error("Cannot set tensor " + std::to_string(index) + " ('" + t.name + "'): call allocate_tensors() first");
      SetStrings(t, index, value);
      t.data_is_stale = false;
      return;
    }
    py::array c = py::array::ensure(value, py::array::c_style | py::array::forcecast);
    size_t bytes = size_t(std::max<int64_t>(0, t.num_elements())) * DTypeSize(t.type);
    if (const int bits = DTypePackedBits(t.type)) {  // one byte per element: the values must fit the type
      const int lo = t.type == DType::kUInt4 ? 0 : -(1 << (bits - 1));
      const int hi = t.type == DType::kUInt4 ? (1 << bits) - 1 : (1 << (bits - 1)) - 1;
      const uint8_t* p = static_cast<const uint8_t*>(c.data());
      for (size_t i = 0; i < bytes; ++i) {
        const int v = t.type == DType::kUInt4 ? int(p[i]) : int(int8_t(p[i]));
        if (v < lo || v > hi)
          throw py::value_error("Cannot set tensor " + std::to_string(index) + " ('" + t.name + "'): value " +
                                std::to_string(v) + " at flat index " + std::to_string(i) + " is out of the " +
                                DTypeName(t.type) + " range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
      }
    }
    CopyTensorData(t.data, c.data(), bytes);
    t.data_is_stale = false;
  }

  void Resize(int sgi, int index, std::vector<int32_t> dims, bool strict) {
    auto l = Lock();
    CheckNoViews();
    tensor(sgi, index);
    ThrowStatus(interp_->ResizeInputTensor(sgi, index, dims, strict));
  }

  // The model's nodes (delegate_kernels=false), or the "DELEGATE" nodes TFLite appends after
  // delegation (delegate_kernels=true).
  py::list Nodes(int sgi, bool delegate_kernels) {
    auto l = Lock();
    py::list out;
    for (const NodeInfo& n : interp_->node_details(sg(sgi))) {
      if (n.delegate_kernel != delegate_kernels) continue;
      py::dict d;
      d["index"] = n.index;
      d["op_name"] = n.op_name;
      d["builtin_code"] = n.builtin_code;
      d["unresolved"] = n.unresolved;
      d["version"] = n.version;
      d["inputs"] = n.inputs;
      d["outputs"] = n.outputs;
      d["delegated"] = n.delegated;
      d["folded"] = n.folded;
      out.append(d);
    }
    return out;
  }

  py::list Signatures() {
    auto l = Lock();
    py::list out;
    for (const std::string& k : interp_->signature_keys()) {
      py::dict d;
      d["key"] = k;
      d["subgraph"] = std::max(0, interp_->signature_subgraph_index(k));
      d["inputs"] = *interp_->signature_inputs(k);
      d["outputs"] = *interp_->signature_outputs(k);
      out.append(d);
    }
    return out;
  }

  py::list Profile(int sgi) {
    auto l = Lock();
    py::list out;
    for (const ProfileEntry& e : interp_->last_profile(sg(sgi))) {
      py::dict d;
      d["step"] = e.step;
      d["name"] = e.name;
      d["device"] = e.device;
      d["us"] = e.us;
      d["nodes"] = e.nodes;
      out.append(d);
    }
    return out;
  }

  Interpreter& interp() { return *interp_; }
  OwnedMutex& mu() { return mu_; }  // take it through Lock(), never directly with the GIL held
  std::vector<py::object> delegates;  // kept alive while the interpreter uses them

 private:
  std::unique_ptr<FlatBufferModel> model_;
  std::unique_ptr<Interpreter> interp_;
  OwnedMutex mu_;
  int live_views_ = 0;  // numpy views of this interpreter's tensors alive now (GIL-protected)
};


}  // namespace tflite_gpu::bindings
