// Bounds-checked reader for the flatbuffer wire format, used only to read .tflite files.
//
// Why hand-written: the .tflite file is untrusted input, and the build must work from a plain
// `pip install` (no flatc, no generated code committed). The format is small: a root offset,
// tables found through a vtable, vectors and strings with a length prefix. Every access below
// checks that what it reads lies inside the buffer; a violation throws FbError (internal only:
// the model loader catches it and returns a Status naming the path that failed).
// Loops are bounded by vector lengths that were themselves checked against the buffer size,
// so a hostile file cannot make the reader hang or read out of bounds.
#pragma once
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace tflite_gpu::fb {

struct FbError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

  void Check(uint64_t pos, uint64_t len, const char* what) const {
    if (pos > size_ || len > size_ - pos)
      throw FbError(std::string(what) + " out of bounds (offset " + std::to_string(pos) +
                    ", length " + std::to_string(len) + ", file size " + std::to_string(size_) + ")");
  }
  template <typename T>
  T Read(uint64_t pos, const char* what) const {
    Check(pos, sizeof(T), what);
    T v;
    std::memcpy(&v, data_ + pos, sizeof(T));
    return v;
  }

 private:
  const uint8_t* data_;
  size_t size_;
};

class Table;

// A vector of scalars, tables, or strings in the buffer. Length already bounds-checked.
class Vec {
 public:
  Vec() = default;
  Vec(const Reader* r, uint64_t start, uint32_t len, uint32_t elem)
      : r_(r), start_(start), len_(len), elem_(elem) {}
  uint32_t size() const { return len_; }
  bool empty() const { return len_ == 0; }
  uint64_t start() const { return start_; }
  const uint8_t* raw() const { return r_ ? r_->data() + start_ : nullptr; }
  template <typename T>
  T Get(uint32_t i) const {
    return r_->Read<T>(start_ + uint64_t(i) * sizeof(T), "vector element");
  }
  template <typename T>
  std::vector<T> ToVector() const {
    std::vector<T> out(len_);
    if (len_) std::memcpy(out.data(), raw(), size_t(len_) * sizeof(T));
    return out;
  }
  Table GetTable(uint32_t i, const char* what) const;
  std::string GetString(uint32_t i, const char* what) const;

 private:
  const Reader* r_ = nullptr;
  uint64_t start_ = 0;
  uint32_t len_ = 0;
  uint32_t elem_ = 0;
};

class Table {
 public:
  Table() = default;
  static Table At(const Reader* r, uint64_t pos, const char* what) {
    Table t;
    t.r_ = r;
    t.pos_ = pos;
    r->Check(pos, 4, what);
    int32_t soff = r->Read<int32_t>(pos, what);
    int64_t vt = int64_t(pos) - int64_t(soff);
    if (vt < 0) throw FbError(std::string(what) + ": vtable offset points before the file start");
    t.vt_ = uint64_t(vt);
    t.vt_size_ = r->Read<uint16_t>(t.vt_, what);
    uint16_t obj = r->Read<uint16_t>(t.vt_ + 2, what);
    if (t.vt_size_ < 4 || (t.vt_size_ & 1))
      throw FbError(std::string(what) + ": malformed vtable (size " + std::to_string(t.vt_size_) + ")");
    r->Check(t.vt_, t.vt_size_, what);
    r->Check(pos, obj, what);
    t.obj_size_ = obj;
    return t;
  }
  bool valid() const { return r_ != nullptr; }
  const Reader* reader() const { return r_; }

  // Offset of field `id` inside the object, or 0 if absent. Checks `len` bytes fit in the object.
  uint16_t FieldOffset(int id, uint32_t len) const {
    if (!r_) return 0;
    uint64_t slot = 4 + 2u * uint64_t(id);
    if (slot + 2 > vt_size_) return 0;
    uint16_t off = r_->Read<uint16_t>(vt_ + slot, "vtable entry");
    if (off == 0) return 0;
    if (uint32_t(off) + len > obj_size_)
      throw FbError("table field " + std::to_string(id) + " lies outside its table");
    return off;
  }
  bool Has(int id) const { return FieldOffset(id, 1) != 0; }

  template <typename T>
  T Scalar(int id, T dflt) const {
    uint16_t off = FieldOffset(id, sizeof(T));
    return off ? r_->Read<T>(pos_ + off, "scalar field") : dflt;
  }
  bool Bool(int id, bool dflt = false) const { return Scalar<uint8_t>(id, dflt ? 1 : 0) != 0; }

  // Follow a uoffset field; returns 0 if absent.
  uint64_t Deref(int id, const char* what) const {
    uint16_t off = FieldOffset(id, 4);
    if (!off) return 0;
    uint64_t p = pos_ + off;
    uint32_t rel = r_->Read<uint32_t>(p, what);
    if (rel == 0) throw FbError(std::string(what) + ": zero offset");
    uint64_t target = p + rel;
    r_->Check(target, 4, what);
    return target;
  }
  Table SubTable(int id, const char* what) const {
    uint64_t t = Deref(id, what);
    return t ? Table::At(r_, t, what) : Table();
  }
  Vec Vector(int id, uint32_t elem_size, const char* what) const {
    uint64_t t = Deref(id, what);
    if (!t) return Vec();
    return MakeVec(r_, t, elem_size, what);
  }
  std::string String(int id, const char* what) const {
    uint64_t t = Deref(id, what);
    if (!t) return std::string();
    Vec v = MakeVec(r_, t, 1, what);
    return CheckedUtf8(v.raw(), v.size(), what);
  }
  // FlatBuffers strings are UTF-8: a name that is not fails the load here, naming the field,
  // instead of surfacing later as a UnicodeDecodeError (or a garbled error message) in Python.
  static std::string CheckedUtf8(const uint8_t* p, size_t n, const char* what) {
    size_t i = 0;
    while (i < n) {
      uint8_t c = p[i];
      size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
      bool ok = len != 0 && i + len <= n;
      uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
      for (size_t k = 1; ok && k < len; ++k) {
        ok = (p[i + k] & 0xC0) == 0x80;
        cp = (cp << 6) | (p[i + k] & 0x3F);
      }
      // no overlong forms, no surrogates, nothing past U+10FFFF (what Python's decoder accepts)
      if (ok) ok = !(len == 2 && cp < 0x80) && !(len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) &&
                   !(len == 4 && (cp < 0x10000 || cp > 0x10FFFF));
      if (!ok) throw FbError(std::string(what) + " is not valid UTF-8 (bad byte at offset " + std::to_string(i) + ")");
      i += len;
    }
    return std::string(reinterpret_cast<const char*>(p), n);
  }
  static Vec MakeVec(const Reader* r, uint64_t t, uint32_t elem, const char* what) {
    uint32_t len = r->Read<uint32_t>(t, what);
    r->Check(t + 4, uint64_t(len) * elem, what);
    return Vec(r, t + 4, len, elem);
  }

 private:
  const Reader* r_ = nullptr;
  uint64_t pos_ = 0, vt_ = 0;
  uint16_t vt_size_ = 0, obj_size_ = 0;
};

inline Table Vec::GetTable(uint32_t i, const char* what) const {
  if (i >= len_) throw FbError(std::string(what) + ": index out of range");
  uint64_t p = start_ + uint64_t(i) * 4;
  uint32_t rel = r_->Read<uint32_t>(p, what);
  if (rel == 0) throw FbError(std::string(what) + ": zero offset");
  return Table::At(r_, p + rel, what);
}
inline std::string Vec::GetString(uint32_t i, const char* what) const {
  if (i >= len_) throw FbError(std::string(what) + ": index out of range");
  uint64_t p = start_ + uint64_t(i) * 4;
  uint32_t rel = r_->Read<uint32_t>(p, what);
  Vec s = Table::MakeVec(r_, p + rel, 1, what);
  return Table::CheckedUtf8(s.raw(), s.size(), what);
}

}  // namespace tflite_gpu::fb
