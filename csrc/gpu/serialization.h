// Serialization of prepared GPU partitions (TFLITE_GPU_EXPERIMENTAL_FLAGS_ENABLE_SERIALIZATION +
// serialization_dir + model_token). README.md, "Serialization".
//
// One file per delegated partition, "<dir>/<hex SHA-256 of the key>.tfgmodel":
//   "TFGMODEL" | u32 format version | u32 0 | u64 payload length | 32-byte SHA-256 of the payload |
//   payload = key string, the GpuPartitionModel (kernel sources, launch sizes - tuned ones when
//   tuning ran -, argument bindings, constants already in the device layout, boundaries, staging
//   sizes, buffer plan), whether it was tuned, and the driver binary of every distinct program.
// (Integers little-endian as the host writes them; x86-64 and AArch64 agree.)
//
// The key (its full text is stored and compared too, so another entry's valid file under this
// name is refused) covers: our format and library versions, SHA-256 of the model bytes, the
// model token, the partition (subgraph, every node id, the shapes and types of its tensors),
// every option that changes the prepared model (resolved precision, is_precision_loss_allowed,
// preference, the three priorities, experimental flags, max_delegated_partitions, op filter,
// debug environment), and the device (name, vendor, device version, driver version, platform
// name and version, OpenCL C version, fp16, max work-group size).
//
// Decoding treats the file as untrusted: every count and length is checked against the bytes
// left before anything is allocated, every index against its table, and the model against the
// interpreter's tensors. Any problem is a Status naming it; the delegate then rebuilds.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "gpu/cl/device.h"
#include "gpu/cl/program_cache.h"
#include "gpu/partition_model.h"
#include "tflite_gpu/gpu_delegate.h"
#include "tflite_gpu/serialization.h"

namespace tflite_gpu {
class Subgraph;
namespace gpu {

constexpr uint32_t kSerializationFormatVersion = 4;  // 2: per-tensor storage flag (mixed fp16/float); 3: input snaps;
                                                     // 4: direct boundaries (empty entries, kStaging in model kernels)
// The program index of a direct boundary's entry (no program).
constexpr uint32_t kDirectBoundaryProgram = 0xFFFFFFFFu;
constexpr size_t kMaxSerializedModelBytes = size_t(4) << 30;

struct SerializedPartition {
  GpuPartitionModel model;
  bool tuned = false;
  std::vector<std::string> sources;            // distinct kernel sources
  std::vector<std::vector<uint8_t>> binaries;  // their driver binaries, same order
};

std::string EncodeSerializedPartition(const std::string& key, const SerializedPartition& p);
// Checks the header, the length, the checksum and the key, then decodes with bounds checks.
Status DecodeSerializedPartition(const std::string& image, const std::string& key, SerializedPartition* out);
// Structural checks of a decoded model against the interpreter's tensors (indices, sizes).
Status ValidatePartitionModel(const GpuPartitionModel& m, const Subgraph& sg, const std::vector<int>& nodes);

// Per delegate: where entries go, the fixed part of the key, counters.
class ModelSerializer {
 public:
  // dir must already be usable (created, trusted); key_prefix = options + device part of the key.
  ModelSerializer(std::string dir, std::string key_prefix);

  // The key of a partition, or "" (with *why) when the model bytes are unknown.
  std::string PartitionKey(Subgraph& sg, const std::vector<int>& nodes, std::string* why) const;
  std::string PathFor(const std::string& key) const;

  // A hit: the model, and its programs added to `cache` from their binaries. On a rejected
  // entry: one warning, counted, false. No entry: counted miss, false.
  bool Load(const std::string& key, const Subgraph& sg, const std::vector<int>& nodes, cl::ProgramCache* cache,
            GpuPartitionModel* model, bool* tuned);
  // The entry was loaded but could not be used (e.g. the runtime refused it): warn, count.
  void RejectLoaded(const std::string& key, const std::string& why);
  // Writes the entry (binaries from `cache`). A failure warns once per delegate and is counted.
  void Save(const std::string& key, const GpuPartitionModel& model, bool tuned, cl::ProgramCache* cache);

  GpuSerializationStats stats() const {
    std::lock_guard<std::mutex> l(mu_);
    return stats_;
  }

 private:
  void Reject(const std::string& path, const std::string& why);  // mu_ held
  // Interpreters sharing the delegate may build partitions on several threads at once.
  mutable std::mutex mu_;
  std::string dir_, key_prefix_;
  GpuSerializationStats stats_;
  bool warned_write_ = false;
  std::set<std::string> rejected_paths_;
};

// Appends a length-prefixed field to a key (no ambiguity between fields).
void AppendKeyField(std::string* key, const std::string& name, const std::string& value);

}  // namespace gpu
}  // namespace tflite_gpu

namespace tflite_gpu {
namespace gpu {
// The delegate's serializer, or null when serialization is off. Needs the flag, a directory and
// a model token; the flag without them (or a directory the program cache refused) logs one
// warning and *disabled_reason says why. `opts` are the delegate's options (string fields unused).
std::unique_ptr<ModelSerializer> MakeModelSerializer(const TfLiteGpuDelegateOptionsV2& opts, const std::string& dir,
                                                     const std::string& token, const std::vector<std::string>& op_filter,
                                                     Precision precision, const GpuDeviceCaps& caps,
                                                     const cl::DeviceInfo& device, const std::string& cache_refused,
                                                     std::string* disabled_reason);
}  // namespace gpu
}  // namespace tflite_gpu
