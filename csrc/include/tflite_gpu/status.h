// Status: the error type of the C++ core. Every fallible call returns a Status (or StatusOr<T>);
// nothing in the core throws across the public API. The Python binding turns kInvalidArgument
// into ValueError, kFailedPrecondition/kInternal into RuntimeError, kNotFound into KeyError/
// IndexError as tf.lite does, kUnavailable into RuntimeError naming the missing device.
#pragma once
#include <string>
#include <utility>
#include <optional>

#include "tflite_gpu/export.h"

namespace tflite_gpu {

enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument = 1,   // malformed model, wrong dtype/shape, bad option value
  kNotFound = 2,          // unknown tensor index, signature key
  kUnimplemented = 3,     // op or op version the engine lacks
  kFailedPrecondition = 4,// invoke before allocate, delegate used after delete
  kUnavailable = 5,       // no OpenCL / no device
  kInternal = 6,          // kernel compile failure, driver error
  kOutOfRange = 7,        // index out of range
};

class TFLITE_GPU_API Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string msg) : code_(code), msg_(std::move(msg)) {}
  static Status Ok() { return Status(); }
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return msg_; }
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string msg_;
};

inline Status OkStatus() { return Status(); }
inline Status InvalidArgument(std::string m) { return Status(StatusCode::kInvalidArgument, std::move(m)); }
inline Status NotFound(std::string m) { return Status(StatusCode::kNotFound, std::move(m)); }
inline Status Unimplemented(std::string m) { return Status(StatusCode::kUnimplemented, std::move(m)); }
inline Status FailedPrecondition(std::string m) { return Status(StatusCode::kFailedPrecondition, std::move(m)); }
inline Status Unavailable(std::string m) { return Status(StatusCode::kUnavailable, std::move(m)); }
inline Status Internal(std::string m) { return Status(StatusCode::kInternal, std::move(m)); }
inline Status OutOfRange(std::string m) { return Status(StatusCode::kOutOfRange, std::move(m)); }

template <typename T>
class StatusOr {
 public:
  StatusOr(Status s) : status_(std::move(s)) {}  // NOLINT: implicit by design
  StatusOr(T v) : value_(std::move(v)) {}        // NOLINT
  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  T&& value() && { return std::move(*value_); }
  const T& value() const& { return *value_; }
  T* operator->() { return &*value_; }
  T& operator*() { return *value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace tflite_gpu

#define TFG_RETURN_IF_ERROR(expr)                 \
  do {                                            \
    ::tflite_gpu::Status _st = (expr);            \
    if (!_st.ok()) return _st;                    \
  } while (0)

#define TFG_CONCAT_INNER(a, b) a##b
#define TFG_CONCAT(a, b) TFG_CONCAT_INNER(a, b)
#define TFG_ASSIGN_OR_RETURN(lhs, expr)                          \
  auto TFG_CONCAT(_sor_, __LINE__) = (expr);                     \
  if (!TFG_CONCAT(_sor_, __LINE__).ok()) return TFG_CONCAT(_sor_, __LINE__).status(); \
  lhs = std::move(TFG_CONCAT(_sor_, __LINE__).value())

// Source parity with TensorFlow Lite's C API: code written as
//   if (interpreter->Invoke() != kTfLiteOk) return false;
// compiles against tflite_gpu unchanged (TfLiteStatus is in c_common.h, shared with C).
#include "tflite_gpu/c_common.h"

namespace tflite_gpu {
inline TfLiteStatus ToTfLiteStatus(const Status& s) {
  if (s.ok()) return kTfLiteOk;
  return s.code() == StatusCode::kUnimplemented ? kTfLiteUnresolvedOps : kTfLiteError;
}
inline bool operator==(const Status& s, TfLiteStatus t) { return ToTfLiteStatus(s) == t; }
inline bool operator!=(const Status& s, TfLiteStatus t) { return ToTfLiteStatus(s) != t; }
}  // namespace tflite_gpu
