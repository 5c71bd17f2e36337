// TensorFlow Lite's C API (tflite_gpu/c_api.h) over the C++ Interpreter.
#include "tflite_gpu/c_api.h"

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tflite_gpu/interpreter.h"
#include "tflite_gpu/model.h"
#include "runtime/string_tensor.h"

using tflite_gpu::DType;
using tflite_gpu::Status;
using tflite_gpu::Tensor;

using ErrorReporterFn = void (*)(void*, const char*, va_list);

struct TfLiteModel {
  std::shared_ptr<tflite_gpu::FlatBufferModel> model;
};

struct TfLiteInterpreterOptions {
  int32_t num_threads = -1;
  std::vector<TfLiteDelegate*> delegates;
  ErrorReporterFn reporter = nullptr;
  void* reporter_data = nullptr;
};

struct TfLiteInterpreter {
  std::shared_ptr<tflite_gpu::FlatBufferModel> model;
  std::unique_ptr<tflite_gpu::Interpreter> interp;
  ErrorReporterFn reporter = nullptr;
  void* reporter_data = nullptr;
  std::vector<std::string> signature_keys;
  bool allow_buffer_handle_output = false;
};

struct TfLiteSignatureRunner {
  TfLiteInterpreter* owner = nullptr;
  int sg = -1;  // the signature's subgraph index
  std::vector<std::pair<std::string, int>> inputs, outputs;
};

namespace {

void CallReporter(ErrorReporterFn fn, void* user, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fn(user, fmt, ap);
  va_end(ap);
}

void Report(ErrorReporterFn fn, void* user, const std::string& msg) {
  if (fn) {
    CallReporter(fn, user, "%s", msg.c_str());
  } else {
    std::fprintf(stderr, "ERROR: %s\n", msg.c_str());
  }
}

void Report(const TfLiteInterpreter* it, const std::string& msg) {
  Report(it ? it->reporter : nullptr, it ? it->reporter_data : nullptr, msg);
}

TfLiteStatus ToStatus(const TfLiteInterpreter* it, const char* call, const Status& st) {
  if (st.ok()) return kTfLiteOk;
  Report(it, std::string(call) + ": " + st.message());
  return tflite_gpu::ToTfLiteStatus(st);
}

Tensor* AsTensor(const TfLiteTensor* t) { return reinterpret_cast<Tensor*>(const_cast<TfLiteTensor*>(t)); }
TfLiteTensor* AsC(Tensor* t) { return reinterpret_cast<TfLiteTensor*>(t); }

size_t ByteSize(const Tensor& t) {
  // STRING: the size of its buffer in TFLite's string layout (count, offsets, bytes), as TFLite's
  // tensor->bytes; 0 before allocation.
  if (t.type == DType::kString) return t.data ? t.bytes : 0;
  int64_t n = t.num_elements();
  return n < 0 ? 0 : size_t(n) * tflite_gpu::DTypeSize(t.type);
}

TfLiteType ToCType(DType t) {
  switch (t) {
    case DType::kFloat32: return kTfLiteFloat32;
    case DType::kFloat16: return kTfLiteFloat16;
    case DType::kInt32: return kTfLiteInt32;
    case DType::kUInt8: return kTfLiteUInt8;
    case DType::kInt64: return kTfLiteInt64;
    case DType::kString: return kTfLiteString;
    case DType::kBool: return kTfLiteBool;
    case DType::kInt16: return kTfLiteInt16;
    case DType::kComplex64: return kTfLiteComplex64;
    case DType::kInt8: return kTfLiteInt8;
    case DType::kFloat64: return kTfLiteFloat64;
    case DType::kComplex128: return kTfLiteComplex128;
    case DType::kUInt64: return kTfLiteUInt64;
    case DType::kResource: return kTfLiteResource;
    case DType::kVariant: return kTfLiteVariant;
    case DType::kUInt32: return kTfLiteUInt32;
    case DType::kUInt16: return kTfLiteUInt16;
    case DType::kInt4: return kTfLiteInt4;
    case DType::kBFloat16: return kTfLiteBFloat16;
  }
  return kTfLiteNoType;
}

TfLiteStatus Resize(TfLiteInterpreter* it, int sg, int tensor, const int* dims, int32_t n,
                    const char* call) {
  if (n < 0 || (n > 0 && !dims)) {
    Report(it, std::string(call) + ": input_dims is NULL or input_dims_size is negative");
    return kTfLiteError;
  }
  tflite_gpu::Dims d(dims, dims + n);
  return ToStatus(it, call, it->interp->ResizeInputTensor(sg, tensor, d, false));
}

}  // namespace

extern "C" {

const char* TfLiteVersion(void) { return "0.1.0"; }

const char* TfLiteTypeGetName(TfLiteType type) {
  switch (type) {
    case kTfLiteNoType: return "NOTYPE";
    case kTfLiteFloat32: return "FLOAT32";
    case kTfLiteInt32: return "INT32";
    case kTfLiteUInt8: return "UINT8";
    case kTfLiteInt64: return "INT64";
    case kTfLiteString: return "STRING";
    case kTfLiteBool: return "BOOL";
    case kTfLiteInt16: return "INT16";
    case kTfLiteComplex64: return "COMPLEX64";
    case kTfLiteInt8: return "INT8";
    case kTfLiteFloat16: return "FLOAT16";
    case kTfLiteFloat64: return "FLOAT64";
    case kTfLiteComplex128: return "COMPLEX128";
    case kTfLiteUInt64: return "UINT64";
    case kTfLiteResource: return "RESOURCE";
    case kTfLiteVariant: return "VARIANT";
    case kTfLiteUInt32: return "UINT32";
    case kTfLiteUInt16: return "UINT16";
    case kTfLiteInt4: return "INT4";
    case kTfLiteBFloat16: return "BFLOAT16";
  }
  return "NOTYPE";
}

// ---- model ----
TfLiteModel* TfLiteModelCreate(const void* model_data, size_t model_size) {
  if (!model_data) {
    Report(nullptr, nullptr, "TfLiteModelCreate: model_data is NULL");
    return nullptr;
  }
  Status st;
  auto m = tflite_gpu::FlatBufferModel::BuildFromBytes(
      std::string(static_cast<const char*>(model_data), model_size), &st);
  if (!m) {
    Report(nullptr, nullptr, "TfLiteModelCreate: " + (st.ok() ? std::string("invalid model") : st.message()));
    return nullptr;
  }
  return new TfLiteModel{std::shared_ptr<tflite_gpu::FlatBufferModel>(std::move(m))};
}

TfLiteModel* TfLiteModelCreateFromFile(const char* model_path) {
  if (!model_path) {
    Report(nullptr, nullptr, "TfLiteModelCreateFromFile: model_path is NULL");
    return nullptr;
  }
  Status st;
  auto m = tflite_gpu::FlatBufferModel::BuildFromFile(model_path, &st);
  if (!m) {
    Report(nullptr, nullptr, std::string("TfLiteModelCreateFromFile: ") + model_path + ": " +
                                 (st.ok() ? std::string("cannot load the model") : st.message()));
    return nullptr;
  }
  return new TfLiteModel{std::shared_ptr<tflite_gpu::FlatBufferModel>(std::move(m))};
}

void TfLiteModelDelete(TfLiteModel* model) { delete model; }

// ---- options ----
TfLiteInterpreterOptions* TfLiteInterpreterOptionsCreate(void) { return new TfLiteInterpreterOptions; }
void TfLiteInterpreterOptionsDelete(TfLiteInterpreterOptions* options) { delete options; }
void TfLiteInterpreterOptionsSetNumThreads(TfLiteInterpreterOptions* options, int32_t num_threads) {
  if (options) options->num_threads = num_threads;
}
void TfLiteInterpreterOptionsAddDelegate(TfLiteInterpreterOptions* options, TfLiteDelegate* delegate) {
  if (options && delegate) options->delegates.push_back(delegate);
}
void TfLiteInterpreterOptionsSetErrorReporter(TfLiteInterpreterOptions* options,
                                              void (*reporter)(void* user_data, const char* format, va_list args),
                                              void* user_data) {
  if (!options) return;
  options->reporter = reporter;
  options->reporter_data = user_data;
}

// ---- interpreter ----
TfLiteInterpreter* TfLiteInterpreterCreate(const TfLiteModel* model, const TfLiteInterpreterOptions* optional_options) {
  ErrorReporterFn rep = optional_options ? optional_options->reporter : nullptr;
  void* rep_data = optional_options ? optional_options->reporter_data : nullptr;
  if (!model || !model->model) {
    Report(rep, rep_data, "TfLiteInterpreterCreate: model is NULL");
    return nullptr;
  }
  tflite_gpu::InterpreterOptions o;
  if (optional_options) o.num_threads = optional_options->num_threads > 0 ? optional_options->num_threads : -1;
  auto it = std::make_unique<TfLiteInterpreter>();
  it->model = model->model;
  it->reporter = rep;
  it->reporter_data = rep_data;
  Status st = tflite_gpu::InterpreterBuilder(*it->model, tflite_gpu::ops::builtin::BuiltinOpResolver(), o)(&it->interp);
  if (!st.ok()) {
    Report(rep, rep_data, "TfLiteInterpreterCreate: " + st.message());
    return nullptr;
  }
  if (optional_options) {
    for (TfLiteDelegate* d : optional_options->delegates) {
      st = it->interp->ModifyGraphWithDelegate(d);
      if (!st.ok()) {
        Report(rep, rep_data, "TfLiteInterpreterCreate: applying the delegate failed: " + st.message());
        return nullptr;
      }
    }
  }
  it->signature_keys = it->interp->signature_keys();
  return it.release();
}

void TfLiteInterpreterDelete(TfLiteInterpreter* interpreter) { delete interpreter; }

int32_t TfLiteInterpreterGetInputTensorCount(const TfLiteInterpreter* interpreter) {
  return interpreter ? int32_t(interpreter->interp->inputs().size()) : 0;
}

TfLiteTensor* TfLiteInterpreterGetInputTensor(const TfLiteInterpreter* interpreter, int32_t input_index) {
  if (!interpreter) return nullptr;
  const auto& ins = interpreter->interp->inputs();
  if (input_index < 0 || size_t(input_index) >= ins.size()) {
    Report(interpreter, "TfLiteInterpreterGetInputTensor: input " + std::to_string(input_index) +
                            " out of range (the model has " + std::to_string(ins.size()) + " inputs)");
    return nullptr;
  }
  return AsC(interpreter->interp->tensor(ins[input_index]));
}

TfLiteStatus TfLiteInterpreterResizeInputTensor(TfLiteInterpreter* interpreter, int32_t input_index,
                                                const int* input_dims, int32_t input_dims_size) {
  if (!interpreter) return kTfLiteError;
  const auto& ins = interpreter->interp->inputs();
  if (input_index < 0 || size_t(input_index) >= ins.size()) {
    Report(interpreter, "TfLiteInterpreterResizeInputTensor: input " + std::to_string(input_index) + " out of range");
    return kTfLiteError;
  }
  return Resize(interpreter, 0, ins[input_index], input_dims, input_dims_size,
                "TfLiteInterpreterResizeInputTensor");
}

TfLiteStatus TfLiteInterpreterAllocateTensors(TfLiteInterpreter* interpreter) {
  if (!interpreter) return kTfLiteError;
  return ToStatus(interpreter, "TfLiteInterpreterAllocateTensors", interpreter->interp->AllocateTensors());
}

TfLiteStatus TfLiteInterpreterInvoke(TfLiteInterpreter* interpreter) {
  if (!interpreter) return kTfLiteError;
  return ToStatus(interpreter, "TfLiteInterpreterInvoke", interpreter->interp->Invoke());
}

int32_t TfLiteInterpreterGetOutputTensorCount(const TfLiteInterpreter* interpreter) {
  return interpreter ? int32_t(interpreter->interp->outputs().size()) : 0;
}

const TfLiteTensor* TfLiteInterpreterGetOutputTensor(const TfLiteInterpreter* interpreter, int32_t output_index) {
  if (!interpreter) return nullptr;
  const auto& outs = interpreter->interp->outputs();
  if (output_index < 0 || size_t(output_index) >= outs.size()) {
    Report(interpreter, "TfLiteInterpreterGetOutputTensor: output " + std::to_string(output_index) +
                            " out of range (the model has " + std::to_string(outs.size()) + " outputs)");
    return nullptr;
  }
  int idx = outs[output_index];
  // Outputs a delegate keeps on its device are copied back on first read (TFLite does this in
  // Invoke), unless the host asked to keep them there (TfLiteInterpreterSetAllowBufferHandleOutput):
  // then TfLiteInterpreterEnsureTensorDataIsReadable copies, and TfLiteTensorCopyToBuffer refuses
  // the stale tensor.
  if (!interpreter->allow_buffer_handle_output) {
    Status st = interpreter->interp->EnsureTensorDataIsReadable(idx);
    if (!st.ok()) Report(interpreter, "TfLiteInterpreterGetOutputTensor: " + st.message());
  }
  return AsC(interpreter->interp->tensor(idx));
}

TfLiteStatus TfLiteInterpreterSetAllowBufferHandleOutput(const TfLiteInterpreter* interpreter,
                                                         bool allow_buffer_handle_output) {
  if (!interpreter) return kTfLiteError;
  auto* it = const_cast<TfLiteInterpreter*>(interpreter);
  it->allow_buffer_handle_output = allow_buffer_handle_output;
  return ToStatus(it, "TfLiteInterpreterSetAllowBufferHandleOutput",
                  it->interp->SetAllowBufferHandleOutput(allow_buffer_handle_output));
}

TfLiteStatus TfLiteInterpreterEnsureTensorDataIsReadable(TfLiteInterpreter* interpreter, int tensor_index) {
  if (!interpreter) return kTfLiteError;
  return ToStatus(interpreter, "TfLiteInterpreterEnsureTensorDataIsReadable",
                  interpreter->interp->EnsureTensorDataIsReadable(tensor_index));
}

// ---- tensors ----
TfLiteType TfLiteTensorType(const TfLiteTensor* tensor) { return tensor ? ToCType(AsTensor(tensor)->type) : kTfLiteNoType; }
int32_t TfLiteTensorNumDims(const TfLiteTensor* tensor) { return tensor ? int32_t(AsTensor(tensor)->shape.size()) : 0; }
int32_t TfLiteTensorDim(const TfLiteTensor* tensor, int32_t dim_index) {
  if (!tensor) return -1;
  const Tensor* t = AsTensor(tensor);
  return (dim_index >= 0 && size_t(dim_index) < t->shape.size()) ? t->shape[dim_index] : -1;
}
size_t TfLiteTensorByteSize(const TfLiteTensor* tensor) { return tensor ? ByteSize(*AsTensor(tensor)) : 0; }
void* TfLiteTensorData(const TfLiteTensor* tensor) { return tensor ? AsTensor(tensor)->data : nullptr; }
const char* TfLiteTensorName(const TfLiteTensor* tensor) { return tensor ? AsTensor(tensor)->name.c_str() : nullptr; }

TfLiteQuantizationParams TfLiteTensorQuantizationParams(const TfLiteTensor* tensor) {
  TfLiteQuantizationParams q = {0.f, 0};
  if (!tensor) return q;
  const Tensor* t = AsTensor(tensor);
  if (t->quant.scale.size() == 1) {
    q.scale = t->quant.scale[0];
    q.zero_point = t->quant.zero_point.empty() ? 0 : int32_t(t->quant.zero_point[0]);
  }
  return q;
}

TfLiteStatus TfLiteTensorCopyFromBuffer(TfLiteTensor* tensor, const void* input_data, size_t input_data_size) {
  if (!tensor || (!input_data && input_data_size)) return kTfLiteError;
  Tensor* t = AsTensor(tensor);
  if (t->type == DType::kString && !t->is_const && t->buffer_handle < 0) {
    // Any size: the buffer is a STRING tensor in TFLite's layout (int32 count = the tensor's
    // element count, count + 1 int32 offsets from the buffer start, the last one its size, then
    // the bytes); checked, then copied into the tensor's heap storage.
    if (t->alloc != tflite_gpu::Allocation::kDynamic) {
      Report(nullptr, nullptr, "TfLiteTensorCopyFromBuffer: STRING tensor '" + t->name +
                                   "' has no memory yet: call TfLiteInterpreterAllocateTensors first");
      return kTfLiteError;
    }
    const int64_t n = t->num_elements();
    const std::string why = tflite_gpu::CheckStringBuffer(static_cast<const uint8_t*>(input_data), input_data_size, n);
    if (!why.empty()) {
      Report(nullptr, nullptr, "TfLiteTensorCopyFromBuffer: the buffer for STRING tensor '" + t->name + "' of shape " +
                                   tflite_gpu::DimsToString(t->shape) + " " + why);
      return kTfLiteError;
    }
    try {
      t->owned.assign(static_cast<const uint8_t*>(input_data), static_cast<const uint8_t*>(input_data) + input_data_size);
      t->owned.push_back(0);
    } catch (const std::bad_alloc&) {
      Report(nullptr, nullptr, "TfLiteTensorCopyFromBuffer: STRING tensor '" + t->name + "': out of memory");
      return kTfLiteError;
    }
    t->data = t->owned.data();
    t->bytes = input_data_size;
    t->data_is_stale = false;
    return kTfLiteOk;
  }
  size_t bytes = ByteSize(*t);
  if (input_data_size != bytes) {
    Report(nullptr, nullptr, "TfLiteTensorCopyFromBuffer: tensor '" + t->name + "' holds " + std::to_string(bytes) +
                                 " bytes, the buffer has " + std::to_string(input_data_size));
    return kTfLiteError;
  }
  if (t->is_const) {
    Report(nullptr, nullptr, "TfLiteTensorCopyFromBuffer: tensor '" + t->name + "' is a constant");
    return kTfLiteError;
  }
  if (t->buffer_handle >= 0) {
    Report(nullptr, nullptr, "TfLiteTensorCopyFromBuffer: tensor '" + t->name +
                                 "' has an OpenCL buffer bound to it (TfLiteGpuDelegateBindBufferToTensor): its data "
                                 "lives in that buffer; write the buffer instead, or unbind it (bind NULL) first");
    return kTfLiteError;
  }
  if (bytes && !t->data) {
    Report(nullptr, nullptr, "TfLiteTensorCopyFromBuffer: tensor '" + t->name +
                                 "' has no memory yet: call TfLiteInterpreterAllocateTensors first");
    return kTfLiteError;
  }
  if (bytes > t->bytes) {  // resized input: the storage follows at TfLiteInterpreterAllocateTensors
    Report(nullptr, nullptr, "TfLiteTensorCopyFromBuffer: tensor '" + t->name + "' was resized to " +
                                 tflite_gpu::DimsToString(t->shape) + " but its storage still holds " + std::to_string(t->bytes) +
                                 " bytes: call TfLiteInterpreterAllocateTensors first");
    return kTfLiteError;
  }
  if (bytes) std::memcpy(t->data, input_data, bytes);
  t->data_is_stale = false;
  return kTfLiteOk;
}

TfLiteStatus TfLiteTensorCopyToBuffer(const TfLiteTensor* output_tensor, void* output_data, size_t output_data_size) {
  if (!output_tensor || (!output_data && output_data_size)) return kTfLiteError;
  const Tensor* t = AsTensor(output_tensor);
  size_t bytes = ByteSize(*t);
  if (output_data_size != bytes) {
    Report(nullptr, nullptr, "TfLiteTensorCopyToBuffer: tensor '" + t->name + "' holds " + std::to_string(bytes) +
                                 " bytes, the buffer has " + std::to_string(output_data_size));
    return kTfLiteError;
  }
  if (bytes && !t->data) {
    Report(nullptr, nullptr, "TfLiteTensorCopyToBuffer: tensor '" + t->name + "' has no data on the CPU");
    return kTfLiteError;
  }
  if (t->data_is_stale) {
    Report(nullptr, nullptr, "TfLiteTensorCopyToBuffer: tensor '" + t->name + "' is kept on the GPU (buffer-handle "
                                 "output): call TfLiteInterpreterEnsureTensorDataIsReadable first");
    return kTfLiteError;
  }
  if (bytes > t->bytes) {
    Report(nullptr, nullptr, "TfLiteTensorCopyToBuffer: tensor '" + t->name + "' was resized to " +
                                 tflite_gpu::DimsToString(t->shape) + " but its storage still holds " + std::to_string(t->bytes) +
                                 " bytes: call TfLiteInterpreterAllocateTensors first");
    return kTfLiteError;
  }
  if (bytes) std::memcpy(output_data, t->data, bytes);
  return kTfLiteOk;
}

// ---- signatures ----
int32_t TfLiteInterpreterGetSignatureCount(const TfLiteInterpreter* interpreter) {
  return interpreter ? int32_t(interpreter->signature_keys.size()) : 0;
}

const char* TfLiteInterpreterGetSignatureKey(const TfLiteInterpreter* interpreter, int32_t signature_index) {
  if (!interpreter || signature_index < 0 || size_t(signature_index) >= interpreter->signature_keys.size()) return nullptr;
  return interpreter->signature_keys[signature_index].c_str();
}

TfLiteSignatureRunner* TfLiteInterpreterGetSignatureRunner(const TfLiteInterpreter* interpreter, const char* signature_key) {
  if (!interpreter || !signature_key) return nullptr;
  TfLiteInterpreter* it = const_cast<TfLiteInterpreter*>(interpreter);
  int sg = it->interp->signature_subgraph_index(signature_key);
  const auto* ins = it->interp->signature_inputs(signature_key);
  const auto* outs = it->interp->signature_outputs(signature_key);
  if (sg < 0 || !ins || !outs) {
    Report(it, std::string("TfLiteInterpreterGetSignatureRunner: no signature '") + signature_key + "'");
    return nullptr;
  }
  auto* r = new TfLiteSignatureRunner;
  r->owner = it;
  r->sg = sg;
  r->inputs.assign(ins->begin(), ins->end());
  r->outputs.assign(outs->begin(), outs->end());
  return r;
}

static int FindName(const std::vector<std::pair<std::string, int>>& v, const char* name) {
  if (!name) return -1;
  for (const auto& kv : v)
    if (kv.first == name) return kv.second;
  return -1;
}

size_t TfLiteSignatureRunnerGetInputCount(const TfLiteSignatureRunner* r) { return r ? r->inputs.size() : 0; }
const char* TfLiteSignatureRunnerGetInputName(const TfLiteSignatureRunner* r, int32_t i) {
  return (r && i >= 0 && size_t(i) < r->inputs.size()) ? r->inputs[i].first.c_str() : nullptr;
}
TfLiteStatus TfLiteSignatureRunnerResizeInputTensor(TfLiteSignatureRunner* r, const char* input_name,
                                                    const int* input_dims, int32_t input_dims_size) {
  if (!r) return kTfLiteError;
  int t = FindName(r->inputs, input_name);
  if (t < 0) {
    Report(r->owner, std::string("TfLiteSignatureRunnerResizeInputTensor: no input '") + (input_name ? input_name : "(null)") + "'");
    return kTfLiteError;
  }
  return Resize(r->owner, r->sg, t, input_dims, input_dims_size, "TfLiteSignatureRunnerResizeInputTensor");
}
TfLiteStatus TfLiteSignatureRunnerAllocateTensors(TfLiteSignatureRunner* r) {
  if (!r) return kTfLiteError;
  return ToStatus(r->owner, "TfLiteSignatureRunnerAllocateTensors", r->owner->interp->AllocateTensors(r->sg));
}
TfLiteTensor* TfLiteSignatureRunnerGetInputTensor(TfLiteSignatureRunner* r, const char* input_name) {
  if (!r) return nullptr;
  int t = FindName(r->inputs, input_name);
  return t < 0 ? nullptr : AsC(r->owner->interp->tensor(r->sg, t));
}
TfLiteStatus TfLiteSignatureRunnerInvoke(TfLiteSignatureRunner* r) {
  if (!r) return kTfLiteError;
  return ToStatus(r->owner, "TfLiteSignatureRunnerInvoke", r->owner->interp->Invoke(r->sg));
}
size_t TfLiteSignatureRunnerGetOutputCount(const TfLiteSignatureRunner* r) { return r ? r->outputs.size() : 0; }
const char* TfLiteSignatureRunnerGetOutputName(const TfLiteSignatureRunner* r, int32_t i) {
  return (r && i >= 0 && size_t(i) < r->outputs.size()) ? r->outputs[i].first.c_str() : nullptr;
}
const TfLiteTensor* TfLiteSignatureRunnerGetOutputTensor(const TfLiteSignatureRunner* r, const char* output_name) {
  if (!r) return nullptr;
  int t = FindName(r->outputs, output_name);
  return t < 0 ? nullptr : AsC(r->owner->interp->tensor(r->sg, t));
}
void TfLiteSignatureRunnerDelete(TfLiteSignatureRunner* r) { delete r; }

}  // extern "C"
