// A small, bounds-checked reader for FlexBuffers maps: the custom_options of custom ops such as
// TFLite_Detection_PostProcess and MediaPipe's ops are a FlexBuffer map of scalars.
//
// Written by hand from the public FlexBuffers format description (flatbuffers' "FlexBuffers"
// internals page) instead of using flatbuffers' flexbuffers.h, because custom options are
// untrusted model bytes: every read here is checked against the buffer, every offset must point
// inside it, and a malformed buffer gives an error message instead of an out-of-bounds read.
// Only what option maps need is supported: a root MAP whose values are INT/UINT/FLOAT/BOOL
// (direct or indirect), NULL, STRING, or vectors of integers (typed VECTOR_INT/UINT, the fixed
// INT2..UINT4 forms, or an untyped VECTOR whose elements are INT/UINT); other value types can be
// skipped but not read.
//
// Layout reminders: the buffer ends with [root][root packed type][root byte width]. A packed type
// is (type << 2) | bit_width, bit_width 0..3 = 1/2/4/8 bytes. A map at address p with element
// width w stores its keys-vector offset at p-3w, the keys' width at p-2w, its size at p-w, its
// values at p + i*w and one packed type byte per value after them. Keys are offsets to
// NUL-terminated strings, sorted.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace tflite_gpu::flex {

enum Type : int {
  kNull = 0, kInt = 1, kUInt = 2, kFloat = 3, kKey = 4, kString = 5, kIndirectInt = 6,
  kIndirectUInt = 7, kIndirectFloat = 8, kMap = 9, kVector = 10, kVectorInt = 11, kVectorUInt = 12,
  kVectorFloat = 13, kVectorKey = 14, kVectorStringDeprecated = 15,
  kVectorInt2 = 16, kVectorUInt2 = 17, kVectorInt3 = 19, kVectorUInt3 = 20, kVectorInt4 = 22,
  kVectorUInt4 = 23, kBool = 26, kVectorBool = 36,
};

// Upper bound on the elements GetIntVector returns (option vectors hold a few dozen indices).
constexpr uint64_t kMaxOptionVector = uint64_t(1) << 20;

class MapReader {
 public:
  // Parses the root; ok() tells whether it is a well-formed map, error() why not.
  MapReader(const uint8_t* data, size_t size) : d_(data), n_(size) { Parse(); }
  bool ok() const { return err_.empty(); }
  const std::string& error() const { return err_; }

  // Looks up a key. Returns false (and leaves *out) when the key is absent or NULL; sets the error
  // when the value exists but is not a number.
  bool GetDouble(const char* key, double* out) {
    size_t i;
    if (!Find(key, &i)) return false;
    return ReadNumber(i, key, out);
  }
  bool GetInt(const char* key, int64_t* out) {
    double v;
    size_t i;
    if (!Find(key, &i)) return false;
    int t = ValueType(i);
    if (t == kInt || t == kIndirectInt || t == kUInt || t == kIndirectUInt || t == kBool) {
      uint64_t raw;
      int w;
      if (!ScalarBits(i, &raw, &w)) return false;
      if (t == kInt || t == kIndirectInt) *out = SignExtend(raw, w);
      else *out = int64_t(raw);
      return true;
    }
    if (!ReadNumber(i, key, &v)) return false;
    *out = int64_t(v);
    return true;
  }
  bool GetBool(const char* key, bool* out) {
    int64_t v;
    if (!GetInt(key, &v)) return false;
    *out = v != 0;
    return true;
  }
  // A vector of integers. Returns false when absent or NULL (error unset), or when the value is not
  // such a vector (error set).
  bool GetIntVector(const char* key, std::vector<int64_t>* out) {
    size_t i;
    if (!Find(key, &i)) return false;
    int t = ValueType(i);
    int ew = ValueWidth(i);  // element width of the referenced vector
    uint64_t p;
    if (!Indirect(map_ + uint64_t(i) * uint64_t(w_), w_, &p)) return false;
    uint64_t size = 0;
    bool is_signed = true, untyped = false, empty_only = false;
    switch (t) {
      case kVector: untyped = true; break;
      case kVectorInt: break;
      case kVectorUInt: is_signed = false; break;
      case kVectorInt2: size = 2; break;
      case kVectorUInt2: size = 2; is_signed = false; break;
      case kVectorInt3: size = 3; break;
      case kVectorUInt3: size = 3; is_signed = false; break;
      case kVectorInt4: size = 4; break;
      case kVectorUInt4: size = 4; is_signed = false; break;
      case kVectorFloat: case kVectorKey: case kVectorStringDeprecated: case kVectorBool:
        empty_only = true;  // writers may type an empty vector by other rules; only [] is taken
        break;
      default:
        return Fail(std::string("'") + key + "' is not a vector of integers (flexbuffer type " + std::to_string(t) + ")");
    }
    if (size == 0) {  // sized vector: the length precedes the elements
      if (p < uint64_t(ew) || !ReadUInt(p - uint64_t(ew), ew, &size)) return Fail(std::string("'") + key + "': vector header");
      if (size > kMaxOptionVector) return Fail(std::string("'") + key + "' has " + std::to_string(size) + " elements");
    }
    if (empty_only && size != 0)
      return Fail(std::string("'") + key + "' is not a vector of integers (flexbuffer type " + std::to_string(t) + ")");
    if (!Range(p, size * uint64_t(ew) + (untyped ? size : 0)))
      return Fail(std::string("'") + key + "' runs past the end of the options");
    out->clear();
    out->reserve(size_t(size));
    for (uint64_t e = 0; e < size; ++e) {
      if (untyped) {
        int et = d_[p + size * uint64_t(ew) + e] >> 2;
        if (et != kInt && et != kUInt)
          return Fail(std::string("'") + key + "' element " + std::to_string(e) + " is not an integer (flexbuffer type " +
                      std::to_string(et) + ")");
        is_signed = et == kInt;
      }
      uint64_t raw;
      if (!ReadUInt(p + e * uint64_t(ew), ew, &raw)) return false;
      out->push_back(is_signed ? SignExtend(raw, ew) : int64_t(raw));
    }
    return true;
  }
  // A string value. Returns false when absent or NULL (error unset), or not a string (error set).
  bool GetString(const char* key, std::string* out) {
    size_t i;
    if (!Find(key, &i)) return false;
    int t = ValueType(i);
    if (t != kString) return Fail(std::string("'") + key + "' is not a string (flexbuffer type " + std::to_string(t) + ")");
    int ew = ValueWidth(i);
    uint64_t p, len;
    if (!Indirect(map_ + uint64_t(i) * uint64_t(w_), w_, &p)) return false;
    if (p < uint64_t(ew) || !ReadUInt(p - uint64_t(ew), ew, &len)) return Fail(std::string("'") + key + "': string header");
    if (!Range(p, len)) return Fail(std::string("'") + key + "' runs past the end of the options");
    out->assign(reinterpret_cast<const char*>(d_ + p), size_t(len));
    return true;
  }
  // Whether the map holds a non-NULL value under key.
  bool Has(const char* key) {
    size_t i;
    return Find(key, &i);
  }

 private:
  bool Fail(const std::string& m) {
    if (err_.empty()) err_ = "malformed flexbuffer custom options: " + m;
    return false;
  }
  bool Range(uint64_t pos, uint64_t len) const { return pos <= n_ && len <= n_ - pos; }
  bool ReadUInt(uint64_t pos, int w, uint64_t* out) {
    if (!Range(pos, uint64_t(w))) return Fail("read past the end");
    uint64_t v = 0;
    for (int b = 0; b < w; ++b) v |= uint64_t(d_[pos + uint64_t(b)]) << (8 * b);  // little endian
    *out = v;
    return true;
  }
  static int64_t SignExtend(uint64_t v, int w) {
    if (w >= 8) return int64_t(v);
    uint64_t sign = uint64_t(1) << (8 * w - 1);
    return int64_t((v ^ sign) - sign);
  }
  // Follows an offset stored at pos (width w) backwards.
  bool Indirect(uint64_t pos, int w, uint64_t* target) {
    uint64_t off;
    if (!ReadUInt(pos, w, &off)) return false;
    if (off > pos) return Fail("offset points before the buffer start");
    *target = pos - off;
    return true;
  }

  void Parse() {
    if (!d_ || n_ < 3) { Fail("fewer than 3 bytes"); return; }
    int root_w = d_[n_ - 1];
    if (root_w != 1 && root_w != 2 && root_w != 4 && root_w != 8) { Fail("bad root width"); return; }
    uint8_t packed = d_[n_ - 2];
    if ((packed >> 2) != kMap) { Fail("the root is not a map"); return; }
    if (uint64_t(root_w) + 2 > n_) { Fail("root does not fit"); return; }
    uint64_t root_pos = n_ - 2 - uint64_t(root_w);
    uint64_t map;
    if (!Indirect(root_pos, root_w, &map)) return;
    w_ = 1 << (packed & 3);
    if (map < 3u * uint64_t(w_)) { Fail("map header before the buffer start"); return; }
    uint64_t size, keys_w;
    if (!ReadUInt(map - uint64_t(w_), w_, &size) || !ReadUInt(map - 2u * uint64_t(w_), w_, &keys_w)) return;
    if (keys_w != 1 && keys_w != 2 && keys_w != 4 && keys_w != 8) { Fail("bad key width"); return; }
    uint64_t keys;
    if (!Indirect(map - 3u * uint64_t(w_), w_, &keys)) return;
    if (size > n_) { Fail("map size larger than the buffer"); return; }
    // values then one type byte per value
    if (!Range(map, size * uint64_t(w_) + size)) { Fail("map values run past the end"); return; }
    uint64_t nkeys;
    if (keys < keys_w || !ReadUInt(keys - keys_w, int(keys_w), &nkeys)) { Fail("keys vector header"); return; }
    if (nkeys != size) { Fail("keys and values differ in count"); return; }
    if (!Range(keys, size * keys_w)) { Fail("keys run past the end"); return; }
    map_ = map;
    size_ = size;
    keys_ = keys;
    keys_w_ = int(keys_w);
  }

  bool KeyAt(size_t i, const char** s, size_t* len) {
    uint64_t k;
    if (!Indirect(keys_ + uint64_t(i) * uint64_t(keys_w_), keys_w_, &k)) return false;
    const void* z = std::memchr(d_ + k, 0, n_ - k);
    if (!z) return Fail("key string not terminated");
    *s = reinterpret_cast<const char*>(d_ + k);
    *len = size_t(static_cast<const uint8_t*>(z) - (d_ + k));
    return true;
  }

  bool Find(const char* key, size_t* index) {
    if (!ok()) return false;
    size_t klen = std::strlen(key);
    for (size_t i = 0; i < size_; ++i) {  // linear: option maps hold a dozen keys
      const char* s;
      size_t len;
      if (!KeyAt(i, &s, &len)) return false;
      if (len == klen && std::memcmp(s, key, len) == 0) {
        if (ValueType(i) == kNull) return false;
        *index = i;
        return true;
      }
    }
    return false;
  }

  int ValueType(size_t i) const { return d_[map_ + size_ * uint64_t(w_) + i] >> 2; }
  int ValueWidth(size_t i) const { return 1 << (d_[map_ + size_ * uint64_t(w_) + i] & 3); }

  // Raw bits of a scalar value (following an indirection) and their width in bytes.
  bool ScalarBits(size_t i, uint64_t* raw, int* width) {
    int t = ValueType(i);
    uint64_t pos = map_ + uint64_t(i) * uint64_t(w_);
    if (t == kInt || t == kUInt || t == kFloat || t == kBool) {
      *width = w_;
      return ReadUInt(pos, w_, raw);
    }
    if (t == kIndirectInt || t == kIndirectUInt || t == kIndirectFloat) {
      uint64_t target;
      if (!Indirect(pos, w_, &target)) return false;
      *width = ValueWidth(i);
      return ReadUInt(target, *width, raw);
    }
    return Fail("value type " + std::to_string(t) + " is not a scalar");
  }

  bool ReadNumber(size_t i, const char* key, double* out) {
    int t = ValueType(i);
    if (!(t == kInt || t == kUInt || t == kFloat || t == kBool || t == kIndirectInt || t == kIndirectUInt ||
          t == kIndirectFloat))
      return Fail(std::string("'") + key + "' is not a number (flexbuffer type " + std::to_string(t) + ")");
    uint64_t raw;
    int w;
    if (!ScalarBits(i, &raw, &w)) return Fail(std::string("'") + key + "' is not a number");
    if (t == kFloat || t == kIndirectFloat) {
      if (w == 4) {
        uint32_t b = uint32_t(raw);
        float f;
        std::memcpy(&f, &b, 4);
        *out = f;
      } else if (w == 8) {
        std::memcpy(out, &raw, 8);
      } else {
        return Fail(std::string("'") + key + "' is a float of width " + std::to_string(w));
      }
    } else if (t == kInt || t == kIndirectInt) {
      *out = double(SignExtend(raw, w));
    } else {
      *out = double(raw);
    }
    return true;
  }

  const uint8_t* d_;
  size_t n_;
  std::string err_;
  uint64_t map_ = 0, size_ = 0, keys_ = 0;
  int w_ = 1, keys_w_ = 1;
};

}  // namespace tflite_gpu::flex
