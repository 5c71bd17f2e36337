#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "model/model_internals.h"
#include "model/model_reader.h"
#include "tflite_gpu/model.h"

namespace tflite_gpu {

struct __attribute__((visibility("hidden"))) FlatBufferModel::Impl {
  std::string owned;          // BuildFromBytes
  void* map = nullptr;        // BuildFromFile
  size_t map_size = 0;
  const uint8_t* data = nullptr;
  size_t size = 0;
  std::unique_ptr<fb::Reader> reader;
  ModelDef def;
  ~Impl() {
    if (map) munmap(map, map_size);
  }
};

FlatBufferModel::FlatBufferModel() : impl_(new Impl) {}
FlatBufferModel::~FlatBufferModel() = default;
const ModelDef& ModelInternals::def(const FlatBufferModel& m) { return m.impl_->def; }
const std::string& FlatBufferModel::description() const { return impl_->def.description; }
const std::vector<std::pair<std::string, std::string>>& FlatBufferModel::metadata() const {
  return impl_->def.metadata;
}
const uint8_t* FlatBufferModel::data() const { return impl_->data; }
size_t FlatBufferModel::size() const { return impl_->size; }


static Status ParseInto(FlatBufferModel::Impl* impl, const uint8_t* data, size_t size) {
  impl->data = data;
  impl->size = size;
  impl->reader.reset(new fb::Reader(data, size));
  return ReadModel(impl->reader.get(), &impl->def);
}

std::unique_ptr<FlatBufferModel> FlatBufferModel::BuildFromFile(const char* path, Status* status) {
  std::unique_ptr<FlatBufferModel> m(new FlatBufferModel);
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (status) *status = InvalidArgument(std::string("could not open model file '") + path + "': " + std::strerror(errno));
    return nullptr;
  }
  struct stat sb;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    ::close(fd);
    if (status) *status = InvalidArgument(std::string("model path '") + path + "' is not a regular file");
    return nullptr;
  }
  size_t size = size_t(sb.st_size);
  if (size == 0) {
    ::close(fd);
    if (status) *status = InvalidArgument(std::string("model file '") + path + "' is empty");
    return nullptr;
  }
  void* p = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) {
    if (status) *status = InvalidArgument(std::string("could not map model file '") + path + "': " + std::strerror(errno));
    return nullptr;
  }
  m->impl_->map = p;
  m->impl_->map_size = size;
  Status st = ParseInto(m->impl_.get(), static_cast<const uint8_t*>(p), size);
  if (!st.ok()) st = InvalidArgument(std::string(path) + ": " + st.message());
  if (status) *status = st;
  return st.ok() ? std::move(m) : nullptr;
}

std::unique_ptr<FlatBufferModel> FlatBufferModel::BuildFromBuffer(const char* data, size_t size, Status* status) {
  std::unique_ptr<FlatBufferModel> m(new FlatBufferModel);
  Status st = ParseInto(m->impl_.get(), reinterpret_cast<const uint8_t*>(data), size);
  if (status) *status = st;
  return st.ok() ? std::move(m) : nullptr;
}

std::unique_ptr<FlatBufferModel> FlatBufferModel::BuildFromBytes(std::string bytes, Status* status) {
  std::unique_ptr<FlatBufferModel> m(new FlatBufferModel);
  m->impl_->owned = std::move(bytes);
  // std::string data is at least 16-byte aligned from the allocator for non-SSO sizes.
  const auto* d = reinterpret_cast<const uint8_t*>(m->impl_->owned.data());
  Status st = ParseInto(m->impl_.get(), d, m->impl_->owned.size());
  if (status) *status = st;
  return st.ok() ? std::move(m) : nullptr;
}

}  // namespace tflite_gpu
