// SHA-256 (FIPS 180-4), used to key and check serialized GPU models.
//
// Portable C++ everywhere; on x86-64 CPUs with the SHA extensions (SHA-NI) the block function
// uses them, chosen at run time (CPUID), so one build runs on every x86-64.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace tflite_gpu {

class Sha256 {
 public:
  // allow_hw=false forces the portable block function (tests compare both).
  explicit Sha256(bool allow_hw = true);
  void Update(const void* data, size_t size);
  std::array<uint8_t, 32> Final();  // the object must not be updated afterwards

  static std::array<uint8_t, 32> Hash(const void* data, size_t size, bool allow_hw = true);
  static std::string Hex(const std::array<uint8_t, 32>& digest);
  static bool HardwareAvailable();  // SHA-NI present and used

 private:
  void Blocks(const uint8_t* p, size_t nblocks);
  uint32_t h_[8];
  uint8_t buf_[64];
  size_t buf_len_ = 0;
  uint64_t total_ = 0;
  bool hw_ = false;
};

}  // namespace tflite_gpu
