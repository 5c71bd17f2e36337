// program_cache.cc: see program_cache.h for the key and the file format.
#include "gpu/cl/program_cache.h"

#include "gpu/cl/secure_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <random>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "tflite_gpu/gpu_delegate.h"  // Log
#include "runtime/env.h"

namespace tflite_gpu {
namespace cl {
namespace {

constexpr char kMagic[8] = {'T', 'F', 'G', 'C', 'L', 'B', 'I', 'N'};
constexpr uint64_t kFnvPrime = 1099511628211ull;
constexpr uint64_t kFnvOffset = 14695981039346656037ull;

uint64_t Fnv1a(const void* data, size_t size, uint64_t seed = kFnvOffset) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  uint64_t h = seed;
  for (size_t i = 0; i < size; ++i) {
    h ^= p[i];
    h *= kFnvPrime;
  }
  return h;
}

void AppendU64(std::string* s, uint64_t v) { s->append(reinterpret_cast<const char*>(&v), sizeof(v)); }
void AppendU32(std::string* s, uint32_t v) { s->append(reinterpret_cast<const char*>(&v), sizeof(v)); }

void AppendField(std::string* s, const std::string& field) {
  AppendU64(s, field.size());
  s->append(field);
}

// Sequential reader over a file image; every Read fails cleanly past the end.
class Reader {
 public:
  explicit Reader(const std::string& data) : data_(data) {}
  bool Bytes(size_t n, std::string* out) {
    if (n > data_.size() - pos_) return false;
    out->assign(data_, pos_, n);
    pos_ += n;
    return true;
  }
  template <typename T>
  bool Scalar(T* out) {
    if (sizeof(T) > data_.size() - pos_) return false;
    std::memcpy(out, data_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }
  size_t pos() const { return pos_; }

 private:
  const std::string& data_;
  size_t pos_ = 0;
};

constexpr size_t kMaxCacheFileBytes = size_t(1) << 30;

// The file image: header, key material, binary, trailing checksum.
std::string EncodeFile(const std::string& material, const std::vector<uint8_t>& binary) {
  std::string s(kMagic, sizeof(kMagic));
  AppendU32(&s, kProgramCacheFormatVersion);
  AppendU32(&s, 1);  // one field: the full length-prefixed key material
  AppendField(&s, material);
  AppendU64(&s, binary.size());
  s.append(reinterpret_cast<const char*>(binary.data()), binary.size());
  AppendU64(&s, Fnv1a(s.data(), s.size()));
  return s;
}

// Returns the binary when the image is complete, intact and made for `material`.
bool DecodeFile(const std::string& image, const std::string& material, std::vector<uint8_t>* binary) {
  Reader r(image);
  std::string magic, stored_material, payload;
  uint32_t version = 0, fields = 0;
  uint64_t material_len = 0, binary_len = 0, checksum = 0;
  if (!r.Bytes(sizeof(kMagic), &magic) || magic != std::string(kMagic, sizeof(kMagic))) return false;
  if (!r.Scalar(&version) || version != kProgramCacheFormatVersion) return false;
  if (!r.Scalar(&fields) || fields != 1) return false;
  if (!r.Scalar(&material_len) || !r.Bytes(material_len, &stored_material)) return false;
  if (!r.Scalar(&binary_len) || binary_len == 0 || !r.Bytes(binary_len, &payload)) return false;
  size_t checked = r.pos();
  if (!r.Scalar(&checksum) || r.pos() != image.size()) return false;
  if (checksum != Fnv1a(image.data(), checked)) return false;
  if (stored_material != material) return false;
  binary->assign(payload.begin(), payload.end());
  return true;
}

}  // namespace

ProgramCache::ProgramCache(const Context* ctx, std::string disk_dir) : ctx_(ctx), disk_dir_(std::move(disk_dir)) {
  while (disk_dir_.size() > 1 && disk_dir_.back() == '/') disk_dir_.pop_back();
  if (disk_dir_.empty()) return;
  std::string why;
  if (!MakePrivateDirs(disk_dir_)) why = std::string("it cannot be created: ") + std::strerror(errno);
  else why = UntrustedDirReason(disk_dir_);
  if (!why.empty()) {
    refused_reason_ = "program cache directory '" + disk_dir_ + "' is not used (" + why +
                      "); compiled programs are kept in memory only";
    Log(1, "WARNING: " + refused_reason_);
    disk_dir_.clear();
  }
}

std::string ProgramCache::DefaultCacheDir() {
  return env::CacheDir();
}

std::string ProgramCache::KeyMaterial(const std::string& source, const std::string& options) const {
  const DeviceInfo& d = ctx_->device();
  std::string m;
  AppendU32(&m, kProgramCacheFormatVersion);
  for (const std::string* f : {&source, &options, &d.name, &d.vendor, &d.device_version, &d.driver_version,
                               &d.platform_name, &d.platform_version})
    AppendField(&m, *f);
  return m;
}

std::string ProgramCache::Digest(const std::string& key_material) {
  uint64_t a = Fnv1a(key_material.data(), key_material.size());
  uint64_t b = Fnv1a(key_material.data(), key_material.size(), 0x9e3779b97f4a7c15ull);
  b ^= b >> 29;  // the second hash also mixes its final state differently
  char hex[33];
  std::snprintf(hex, sizeof(hex), "%016llx%016llx", static_cast<unsigned long long>(a),
                static_cast<unsigned long long>(b));
  return hex;
}

std::string ProgramCache::DiskPath(const std::string& digest) const {
  return disk_dir_.empty() ? std::string() : disk_dir_ + "/" + digest + ".clbin";
}

std::shared_ptr<const Program> ProgramCache::Find(const std::string& source, const std::string& options) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = memory_.find(KeyMaterial(source, options));
  return it == memory_.end() ? nullptr : it->second;
}

Status ProgramCache::AddBinary(const std::string& source, const std::string& options,
                               const std::vector<uint8_t>& binary) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string material = KeyMaterial(source, options);
  if (memory_.count(material)) return OkStatus();
  TFG_ASSIGN_OR_RETURN(Program p, Program::FromBinary(*ctx_, binary, options));
  ++stats_.binary_loads;
  memory_[material] = std::make_shared<const Program>(std::move(p));
  return OkStatus();
}

void ProgramCache::ClearMemory() {
  std::lock_guard<std::mutex> lock(mu_);
  memory_.clear();
}

StatusOr<Program> ProgramCache::LoadFromDisk(const std::string& digest, const std::string& material,
                                             const std::string& options) {
  std::string image;
  std::string why;
  // Anything unusable (not a regular file, not ours, unreadable, too large) is a plain miss.
  if (disk_dir_.empty() || ReadTrustedFile(DiskPath(digest), kMaxCacheFileBytes, &image, &why) != FileRead::kOk)
    return NotFound("no cache file");
  std::vector<uint8_t> binary;
  if (!DecodeFile(image, material, &binary)) {
    ++stats_.disk_rejects;
    return InvalidArgument("unusable cache file");
  }
  StatusOr<Program> program = Program::FromBinary(*ctx_, binary, options);
  if (!program.ok()) ++stats_.disk_rejects;
  return program;
}

void ProgramCache::StoreToDisk(const std::string& digest, const std::string& material, const Program& program) {
  if (disk_dir_.empty()) return;
  StatusOr<std::vector<uint8_t>> binary = program.Binary();
  if (!binary.ok() || binary->empty()) {
    ++stats_.disk_write_errors;
    return;
  }
  std::string why;
  if (WriteFileAtomically(DiskPath(digest), EncodeFile(material, binary.value()), &why)) ++stats_.disk_writes;
  else ++stats_.disk_write_errors;
}

StatusOr<std::shared_ptr<const Program>> ProgramCache::GetOrBuild(const std::string& source,
                                                                  const std::string& options) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string material = KeyMaterial(source, options);
  auto it = memory_.find(material);
  if (it != memory_.end()) {
    ++stats_.memory_hits;
    return it->second;
  }
  std::string digest = Digest(material);
  StatusOr<Program> loaded = LoadFromDisk(digest, material, options);
  std::shared_ptr<const Program> result;
  if (loaded.ok()) {
    ++stats_.disk_hits;
    result = std::make_shared<const Program>(std::move(loaded.value()));
  } else {
    TFG_ASSIGN_OR_RETURN(Program built, Program::Build(*ctx_, source, options));
    ++stats_.source_builds;
    StoreToDisk(digest, material, built);
    result = std::make_shared<const Program>(std::move(built));
  }
  memory_[material] = result;
  return result;
}

}  // namespace cl
}  // namespace tflite_gpu
