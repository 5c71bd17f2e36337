// program_cache.h: compiled-program cache, in memory and optionally on disk.
//
// Why: building OpenCL C from source costs milliseconds to seconds per kernel (PoCL runs a full
// LLVM pipeline), and a model compiles dozens of kernels. Driver binaries skip most of that.
//
// Key. A binary is only valid for the exact compiler input on the exact driver, so the key
// covers every field below, joined with length prefixes (no ambiguity between fields):
//   format version (kProgramCacheFormatVersion; bump it whenever the file layout or the way we
//   build programs changes), OpenCL C source, build options, device name, device vendor,
//   device version, driver version, platform name, platform version.
// The file name is a 128-bit hex digest of that material (two independent 64-bit FNV-1a
// hashes), and the file itself stores the full key material, which is compared on load. A
// hash collision therefore cannot return a wrong binary, it only costs a rebuild.
//
// Memory level. cl_program objects belong to one cl_context, so the in-memory map is per
// ProgramCache, and a ProgramCache is bound to one Context (which must outlive it).
//
// Disk level (optional: enabled when a directory is given; DefaultCacheDir() reads env
// TFLITE_GPU_CACHE_DIR, empty = memory only). One file per key, "<digest>.clbin":
//   "TFGCLBIN" | u32 format version | u32 field count | per field: u64 length, bytes |
//   u64 binary length | binary bytes | u64 FNV-1a checksum of everything before it.
// (Integers little-endian as written by the host; x86-64 and AArch64 agree.)
// Writes go to "<digest>.clbin.tmp.<pid>.<random>" in the same directory (created O_EXCL,
// mode 0600), are closed, then rename()d over the final name: rename within one filesystem is
// atomic, so concurrent processes see either no file or a complete one, never a torn write.
// Created directories are 0700.
// The file rules (trust, reading, atomic writes) are secure_file.h's, shared with serialization.
// Trust rule: the directory is used only if it is owned by the effective user and not writable
// by group or others (anyone who can write there could plant a binary with a valid checksum,
// which we would load and run). Otherwise a warning is logged and the cache stays in memory.
// A file that is missing, not a regular file (a directory, a fifo, a link), not owned by us,
// unreadable, short, corrupt (bad magic/checksum/version), mismatching (key material differs)
// or driver-rejected is a miss: the program is rebuilt from source and rewritten. The cache can
// never make a build fail. Disk errors on write are only counted.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gpu/cl/runtime.h"
#include "tflite_gpu/status.h"

namespace tflite_gpu {
namespace cl {

constexpr uint32_t kProgramCacheFormatVersion = 1;

struct ProgramCacheStats {
  int memory_hits = 0;
  int disk_hits = 0;       // loaded with clCreateProgramWithBinary
  int source_builds = 0;   // built from source (miss, or unusable file)
  int disk_writes = 0;
  int disk_rejects = 0;    // a file existed but was unusable
  int disk_write_errors = 0;
  int binary_loads = 0;    // programs created from a serialized model's binaries (AddBinary)
};

class ProgramCache {
 public:
  // ctx must outlive the cache. disk_dir "" = memory only; the directory is created if missing.
  explicit ProgramCache(const Context* ctx, std::string disk_dir = "");

  // The program for (source, options): from memory, else from disk, else built from source.
  // Returns the build error (with log) only when building from source fails.
  StatusOr<std::shared_ptr<const Program>> GetOrBuild(const std::string& source, const std::string& options = "");

  // The length-prefixed key material and its 32-hex-digit digest (exposed for tests/tools).
  // The program already in memory for (source, options), or null (serialization reads its binary).
  std::shared_ptr<const Program> Find(const std::string& source, const std::string& options = "");
  // Creates the program for (source, options) from a driver binary (a serialized model's) and
  // keeps it in memory, so that GetOrBuild finds it. InvalidArgument when the driver rejects it.
  Status AddBinary(const std::string& source, const std::string& options, const std::vector<uint8_t>& binary);

  std::string KeyMaterial(const std::string& source, const std::string& options) const;
  static std::string Digest(const std::string& key_material);
  std::string DiskPath(const std::string& digest) const;

  const ProgramCacheStats& stats() const { return stats_; }
  const std::string& disk_dir() const { return disk_dir_; }  // "" when memory only
  const std::string& refused_reason() const { return refused_reason_; }  // why a given dir is unused
  void ClearMemory();

  static std::string DefaultCacheDir();

 private:
  StatusOr<Program> LoadFromDisk(const std::string& digest, const std::string& material, const std::string& options);
  void StoreToDisk(const std::string& digest, const std::string& material, const Program& program);

  const Context* ctx_;
  std::string disk_dir_;
  std::string refused_reason_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<const Program>> memory_;
  ProgramCacheStats stats_;
};

}  // namespace cl
}  // namespace tflite_gpu
