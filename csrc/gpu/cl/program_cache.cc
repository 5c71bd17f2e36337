// program_cache.cc: see program_cache.h for the key and the file format.
#include "gpu/cl/program_cache.h"

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

// Any problem (not a regular file, not ours, unreadable, absurdly large, a read error) is a miss.
constexpr off_t kMaxCacheFileBytes = off_t(1) << 30;

bool ReadWholeFile(const std::string& path, std::string* out) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return false;
  struct stat st;
  bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
            !(st.st_mode & (S_IWGRP | S_IWOTH)) && st.st_size >= 0 && st.st_size <= kMaxCacheFileBytes;
  if (ok) {
    try {
      out->resize(size_t(st.st_size));
    } catch (const std::bad_alloc&) {
      ok = false;
    }
  }
  size_t got = 0;
  while (ok && got < out->size()) {
    ssize_t n = read(fd, &(*out)[got], out->size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) ok = false;  // error, or the file shrank under us
    else got += size_t(n);
  }
  close(fd);
  return ok;
}

bool MakeDirs(const std::string& dir) {
  if (dir.empty()) return false;
  std::string partial;
  for (size_t i = 0; i <= dir.size(); ++i) {
    if (i == dir.size() || dir[i] == '/') {
      partial = dir.substr(0, i);
      if (!partial.empty() && mkdir(partial.c_str(), 0700) != 0 && errno != EEXIST) return false;
    }
  }
  struct stat st;
  return stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The trust rule (as ssh's for ~/.ssh): a cache directory is used only when it is a directory
// owned by the effective user and not writable by group or others, since anyone who can write
// there could plant a compiled kernel that we would load and run. "" = trusted.
std::string UntrustedReason(const std::string& dir) {
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0) return std::string("cannot stat it: ") + std::strerror(errno);
  if (S_ISLNK(st.st_mode)) {
    if (stat(dir.c_str(), &st) != 0) return "it is a dangling symbolic link";
  }
  if (!S_ISDIR(st.st_mode)) return "it is not a directory";
  if (st.st_uid != geteuid())
    return "it is owned by uid " + std::to_string(st.st_uid) + ", not by the current user (uid " +
           std::to_string(geteuid()) + ")";
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", unsigned(st.st_mode & 07777));
    return std::string("it is writable by ") + ((st.st_mode & S_IWOTH) ? "others" : "its group") + " (mode " + mode +
           "); chmod go-w it";
  }
  return "";
}
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

// Writes a 0600 file "<path>.tmp.<pid>.<random>" (O_EXCL: never through a planted link), then
// renames it over `path`: readers see no file or a whole one.
bool WriteAtomically(const std::string& path, const std::string& image) {
  static std::atomic<unsigned> counter{0};
  static const uint64_t salt = [] {
    std::random_device rd;
    return (uint64_t(rd()) << 32) ^ rd() ^ uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
  }();
  char suffix[64];
  std::snprintf(suffix, sizeof(suffix), ".tmp.%ld.%016llx", long(getpid()),
                static_cast<unsigned long long>(salt ^ (uint64_t(counter++) * 0x9e3779b97f4a7c15ull)));
  std::string tmp = path + suffix;
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return false;
  bool ok = true;
  size_t put = 0;
  while (ok && put < image.size()) {
    ssize_t n = write(fd, image.data() + put, image.size() - put);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) ok = false;
    else put += size_t(n);
  }
  ok = close(fd) == 0 && ok;
  if (ok) ok = std::rename(tmp.c_str(), path.c_str()) == 0;
  if (!ok) unlink(tmp.c_str());
  return ok;
}

}  // namespace

ProgramCache::ProgramCache(const Context* ctx, std::string disk_dir) : ctx_(ctx), disk_dir_(std::move(disk_dir)) {
  while (disk_dir_.size() > 1 && disk_dir_.back() == '/') disk_dir_.pop_back();
  if (disk_dir_.empty()) return;
  std::string why;
  if (!MakeDirs(disk_dir_)) why = std::string("it cannot be created: ") + std::strerror(errno);
  else why = UntrustedReason(disk_dir_);
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

void ProgramCache::ClearMemory() {
  std::lock_guard<std::mutex> lock(mu_);
  memory_.clear();
}

StatusOr<Program> ProgramCache::LoadFromDisk(const std::string& digest, const std::string& material,
                                             const std::string& options) {
  std::string image;
  if (disk_dir_.empty() || !ReadWholeFile(DiskPath(digest), &image)) return NotFound("no cache file");
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
  if (WriteAtomically(DiskPath(digest), EncodeFile(material, binary.value()))) ++stats_.disk_writes;
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
