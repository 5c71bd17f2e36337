// Reading the FlexBuffer-map custom options of MediaPipe's landmark / transform custom ops
// (Landmarks2TransformMatrix, TransformLandmarks, TransformTensorBilinear). Every failure names
// the op and the option: a missing required key, a value of the wrong type, a value out of range.
#pragma once
#include <cmath>
#include <string>
#include <vector>

#include "model/flexbuffer.h"
#include "ops/op_registry.h"

namespace tflite_gpu::mp {

class Options {
 public:
  // `op` is the custom code used in messages. A null/empty buffer reads as an empty map when
  // allow_empty, otherwise it is an error (see Open).
  Options(const char* op, const OptionsView& o)
      : op_(op), present_(o.custom && o.custom_size > 0),
        m_(present_ ? o.custom : kEmpty, present_ ? o.custom_size : sizeof(kEmpty)) {}

  // Checks that the options exist (when required) and parse as a map.
  Status Open(bool required) {
    if (!present_ && required) return Err("custom options (a FlexBuffer map) are missing");
    if (!m_.ok()) return Err(m_.error());
    return OkStatus();
  }

  // Integer option in [lo, hi]; `dflt` used when absent unless required.
  Status Int(const char* key, bool required, int64_t lo, int64_t hi, int dflt, int* out) {
    int64_t v;
    if (!m_.GetInt(key, &v)) {
      if (!m_.ok()) return Err(m_.error());
      if (required) return Missing(key);
      *out = dflt;
      return OkStatus();
    }
    if (v < lo || v > hi)
      return Err(std::string(key) + " = " + std::to_string(v) + " (must be in " + std::to_string(lo) + ".." +
                 std::to_string(hi) + ")");
    *out = int(v);
    return OkStatus();
  }

  // Finite float option.
  Status Float(const char* key, bool required, float dflt, float* out) {
    double v;
    if (!m_.GetDouble(key, &v)) {
      if (!m_.ok()) return Err(m_.error());
      if (required) return Missing(key);
      *out = dflt;
      return OkStatus();
    }
    if (!std::isfinite(v) || std::fabs(v) > 3.0e38) return Err(std::string(key) + " is not a finite float32");
    *out = float(v);
    return OkStatus();
  }

  // Vector of integers in [lo, hi], at least min_size elements.
  Status IntVector(const char* key, size_t min_size, int64_t lo, int64_t hi, std::vector<int>* out) {
    std::vector<int64_t> v;
    if (!m_.GetIntVector(key, &v)) {
      if (!m_.ok()) return Err(m_.error());
      return Missing(key);
    }
    if (v.size() < min_size)
      return Err(std::string(key) + " has " + std::to_string(v.size()) + " elements (needs at least " +
                 std::to_string(min_size) + ")");
    out->clear();
    for (size_t i = 0; i < v.size(); ++i) {
      if (v[i] < lo || v[i] > hi)
        return Err(std::string(key) + "[" + std::to_string(i) + "] = " + std::to_string(v[i]) + " (must be in " +
                   std::to_string(lo) + ".." + std::to_string(hi) + ")");
      out->push_back(int(v[i]));
    }
    return OkStatus();
  }

  // String option; false (no error) when absent.
  Status String(const char* key, bool* present, std::string* out) {
    *present = m_.GetString(key, out);
    if (!m_.ok()) return Err(m_.error());
    return OkStatus();
  }

  Status Err(const std::string& m) const { return InvalidArgument(std::string(op_) + ": " + m); }

 private:
  Status Missing(const char* key) const { return Err(std::string("custom option '") + key + "' is missing"); }
  // An empty FlexBuffer map (what flexbuffers writes for {}): keys size 0; map header (keys offset
  // 0, keys width 1, size 0); root offset 0, type MAP, width 1.
  static constexpr uint8_t kEmpty[] = {0, 0, 1, 0, 0, 0x24, 1};
  const char* op_;
  bool present_;
  flex::MapReader m_;
};

}  // namespace tflite_gpu::mp
