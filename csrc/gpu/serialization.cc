// serialization.cc: see serialization.h for the format and the key.
#include "gpu/serialization.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include "gpu/cl/secure_file.h"
#include "runtime/env.h"
#include "runtime/sha256.h"
#include "tflite_gpu/c_api.h"  // TfLiteVersion
#include "runtime/subgraph.h"
#include "tflite_gpu/gpu_delegate.h"  // Log

namespace tflite_gpu {
namespace gpu {
namespace {

constexpr char kMagic[8] = {'T', 'F', 'G', 'M', 'O', 'D', 'E', 'L'};
constexpr size_t kHeaderBytes = 8 + 4 + 4 + 8 + 32;
// Launch sizes and buffer sizes beyond these cannot come from our builder: a file holding them
// is refused before anything is allocated on the device.
constexpr uint64_t kMaxLaunchDim = uint64_t(1) << 31;
constexpr uint64_t kMaxBufferBytes = uint64_t(1) << 40;

class Writer {
 public:
  void U8(uint8_t v) { s_.push_back(char(v)); }
  void U32(uint32_t v) { s_.append(reinterpret_cast<const char*>(&v), 4); }
  void I32(int32_t v) { s_.append(reinterpret_cast<const char*>(&v), 4); }
  void U64(uint64_t v) { s_.append(reinterpret_cast<const char*>(&v), 8); }
  void Str(const std::string& v) {
    U64(v.size());
    s_.append(v);
  }
  void Bytes(const void* p, size_t n) { s_.append(static_cast<const char*>(p), n); }
  std::string& str() { return s_; }

 private:
  std::string s_;
};

// Bounds-checked reader: the first failure is kept (with what was being read) and every later
// read fails, so decoding code can read on and check once.
class Reader {
 public:
  Reader(const char* p, size_t n) : p_(p), n_(n) {}
  bool ok() const { return err_.empty(); }
  const std::string& error() const { return err_; }
  size_t left() const { return n_ - pos_; }
  void Fail(const std::string& what) {
    if (err_.empty()) err_ = what + " (at payload byte " + std::to_string(pos_) + ")";
  }
  bool Raw(void* dst, size_t n, const char* what) {
    if (!ok()) return false;
    if (n > left()) {
      Fail(std::string("truncated while reading ") + what);
      return false;
    }
    std::memcpy(dst, p_ + pos_, n);
    pos_ += n;
    return true;
  }
  uint8_t U8(const char* what) { uint8_t v = 0; Raw(&v, 1, what); return v; }
  uint32_t U32(const char* what) { uint32_t v = 0; Raw(&v, 4, what); return v; }
  int32_t I32(const char* what) { int32_t v = 0; Raw(&v, 4, what); return v; }
  uint64_t U64(const char* what) { uint64_t v = 0; Raw(&v, 8, what); return v; }
  // A count of elements taking at least `min_bytes` each: never more than the bytes left allow,
  // so a corrupted count cannot make us allocate more than the file's size.
  size_t Count(size_t min_bytes, const char* what) {
    uint64_t c = U64(what);
    if (!ok()) return 0;
    if (c > left() / std::max<size_t>(1, min_bytes)) {
      Fail(std::string("count of ") + what + " (" + std::to_string(c) + ") exceeds the bytes left (" +
           std::to_string(left()) + ")");
      return 0;
    }
    return size_t(c);
  }
  std::string Str(const char* what) {
    size_t n = Count(1, what);
    std::string s;
    if (ok() && n) {
      s.assign(p_ + pos_, n);
      pos_ += n;
    }
    return s;
  }

 private:
  const char* p_;
  size_t n_, pos_ = 0;
  std::string err_;
};

void PutKernel(Writer& w, const GpuKernelDesc& k, uint32_t program) {
  w.Str(k.name);
  w.U32(program);
  for (size_t v : k.global) w.U64(v);
  for (size_t v : k.local) w.U64(v);
  w.U8(k.tunable ? 1 : 0);
  w.U64(k.args.size());
  for (const GpuKernelArg& a : k.args) {
    w.U32(uint32_t(a.kind));
    w.I32(a.index);
  }
  w.I32(k.node);
  w.Str(k.op);
  w.Str(k.label);
}

void PutBoundaries(Writer& w, const std::vector<GpuPartitionModel::Boundary>& v) {
  w.U64(v.size());
  for (auto& b : v) {
    w.I32(b.cpu_tensor);
    w.I32(b.gpu_tensor);
    w.I32(b.staging);
    w.Str(b.snap);
  }
}

void GetBoundaries(Reader& r, std::vector<GpuPartitionModel::Boundary>* v, const char* what) {
  size_t n = r.Count(20, what);
  v->resize(n);
  for (auto& b : *v) {
    b.cpu_tensor = r.I32(what);
    b.gpu_tensor = r.I32(what);
    b.staging = r.I32(what);
    b.snap = r.Str(what);
  }
}

std::string Idx(const char* what, size_t i) { return std::string(what) + " " + std::to_string(i); }

}  // namespace

void AppendKeyField(std::string* key, const std::string& name, const std::string& value) {
  *key += name;
  *key += '[';
  *key += std::to_string(value.size());
  *key += "]=";
  *key += value;
  *key += '\n';
}

std::string EncodeSerializedPartition(const std::string& key, const SerializedPartition& p) {
  const GpuPartitionModel& m = p.model;
  Writer w;
  w.Str(key);
  w.U32(uint32_t(m.precision));
  w.U8(m.debug_sentinels ? 1 : 0);
  w.U8(p.tuned ? 1 : 0);
  w.U64(m.nodes.size());
  for (int n : m.nodes) w.I32(n);
  w.U64(m.tensors.size());
  for (const GpuTensorDesc& t : m.tensors) {
    for (int d : {t.shape.b, t.shape.h, t.shape.w, t.shape.c}) w.I32(d);
    w.I32(t.cpu_tensor);
    w.I32(t.const_index);
  }
  for (size_t i = 0; i < m.tensors.size(); ++i) w.U8(i < m.tensor_f32.size() && m.tensor_f32[i] ? 1 : 0);
  w.U64(m.consts.size());
  for (size_t i = 0; i < m.consts.size(); ++i) {
    w.U8(i < m.const_exact.size() && m.const_exact[i] ? 1 : 0);
    w.U64(m.consts[i].size());
    w.Bytes(m.consts[i].data(), m.consts[i].size() * sizeof(float));
  }
  w.U64(p.sources.size());
  for (size_t i = 0; i < p.sources.size(); ++i) {
    w.Str(p.sources[i]);
    w.U64(p.binaries[i].size());
    w.Bytes(p.binaries[i].data(), p.binaries[i].size());
  }
  w.U64(m.kernels.size());
  for (const GpuKernelDesc& k : m.kernels) {
    uint32_t prog = 0;  // a direct boundary's entry names no program
    if (k.source.empty()) prog = kDirectBoundaryProgram;
    else while (prog < p.sources.size() && p.sources[prog] != k.source) ++prog;
    PutKernel(w, k, prog);
  }
  PutBoundaries(w, m.inputs);
  PutBoundaries(w, m.outputs);
  w.U64(m.staging_bytes.size());
  for (size_t b : m.staging_bytes) w.U64(b);
  w.U64(m.tensor_slot.size());
  for (int s : m.tensor_slot) w.I32(s);
  w.U64(m.slot_bytes.size());
  for (size_t b : m.slot_bytes) w.U64(b);

  const std::string& payload = w.str();
  std::array<uint8_t, 32> sum = Sha256::Hash(payload.data(), payload.size());
  Writer h;
  h.Bytes(kMagic, sizeof(kMagic));
  h.U32(kSerializationFormatVersion);
  h.U32(0);
  h.U64(payload.size());
  h.Bytes(sum.data(), sum.size());
  std::string out = std::move(h.str());
  out += payload;
  return out;
}

Status DecodeSerializedPartition(const std::string& image, const std::string& key, SerializedPartition* out) {
  if (image.size() < kHeaderBytes)
    return InvalidArgument("truncated: " + std::to_string(image.size()) + " bytes, shorter than the " +
                           std::to_string(kHeaderBytes) + "-byte header");
  if (std::memcmp(image.data(), kMagic, sizeof(kMagic)) != 0) return InvalidArgument("bad magic (not a TFGMODEL file)");
  uint32_t version, reserved;
  uint64_t length;
  std::memcpy(&version, image.data() + 8, 4);
  std::memcpy(&reserved, image.data() + 12, 4);
  std::memcpy(&length, image.data() + 16, 8);
  if (version != kSerializationFormatVersion)
    return InvalidArgument("format version " + std::to_string(version) + ", this library reads version " +
                           std::to_string(kSerializationFormatVersion));
  if (reserved != 0) return InvalidArgument("reserved header field is " + std::to_string(reserved) + ", not 0");
  if (length != image.size() - kHeaderBytes)
    return InvalidArgument("length mismatch: the header says " + std::to_string(length) + " payload bytes, the file has " +
                           std::to_string(image.size() - kHeaderBytes) + " (truncated or extended)");
  const char* payload = image.data() + kHeaderBytes;
  std::array<uint8_t, 32> sum = Sha256::Hash(payload, size_t(length));
  if (std::memcmp(sum.data(), image.data() + 24, 32) != 0)
    return InvalidArgument("SHA-256 checksum mismatch (the payload is corrupt)");

  Reader r(payload, size_t(length));
  std::string stored_key = r.Str("key");
  if (r.ok() && stored_key != key) return InvalidArgument("the entry was made for another key (model, options or device)");
  SerializedPartition p;
  GpuPartitionModel& m = p.model;
  uint32_t prec = r.U32("precision");
  if (r.ok() && prec > uint32_t(Precision::kF16)) r.Fail("bad precision " + std::to_string(prec));
  m.precision = Precision(prec);
  m.debug_sentinels = r.U8("debug flag") != 0;
  p.tuned = r.U8("tuned flag") != 0;
  m.nodes.resize(r.Count(4, "nodes"));
  for (int& n : m.nodes) n = r.I32("node");
  m.tensors.resize(r.Count(24, "tensors"));
  for (GpuTensorDesc& t : m.tensors) {
    t.shape.b = r.I32("shape");
    t.shape.h = r.I32("shape");
    t.shape.w = r.I32("shape");
    t.shape.c = r.I32("shape");
    t.cpu_tensor = r.I32("tensor");
    t.const_index = r.I32("tensor");
  }
  m.tensor_f32.assign(m.tensors.size(), 0);
  for (size_t i = 0; i < m.tensors.size() && r.ok(); ++i) {
    const uint8_t f = r.U8("tensor storage flag");
    if (r.ok() && f > 1) r.Fail(Idx("bad storage flag of GPU tensor", i));
    m.tensor_f32[i] = f;
  }
  size_t nconsts = r.Count(9, "constants");
  m.consts.resize(nconsts);
  m.const_exact.resize(nconsts);
  for (size_t i = 0; i < nconsts && r.ok(); ++i) {
    m.const_exact[i] = r.U8("constant flag") != 0;
    size_t n = r.Count(sizeof(float), "constant values");
    m.consts[i].resize(n);
    r.Raw(m.consts[i].data(), n * sizeof(float), "constant values");
  }
  size_t nprog = r.Count(16, "programs");
  p.sources.resize(nprog);
  p.binaries.resize(nprog);
  for (size_t i = 0; i < nprog && r.ok(); ++i) {
    p.sources[i] = r.Str("program source");
    size_t n = r.Count(1, "program binary");
    if (r.ok() && n == 0) r.Fail(Idx("empty binary for program", i));
    p.binaries[i].resize(n);
    r.Raw(p.binaries[i].data(), n, "program binary");
  }
  m.kernels.resize(r.Count(8 + 4 + 48 + 1 + 8 + 4 + 16, "kernels"));
  for (size_t ki = 0; ki < m.kernels.size() && r.ok(); ++ki) {
    GpuKernelDesc& k = m.kernels[ki];
    k.name = r.Str("kernel name");
    uint32_t prog = r.U32("program index");
    if (r.ok() && prog >= nprog && prog != kDirectBoundaryProgram) r.Fail(Idx("program index out of range in kernel", ki));
    if (r.ok() && prog != kDirectBoundaryProgram) k.source = p.sources[prog];
    for (size_t& v : k.global) v = size_t(r.U64("global size"));
    for (size_t& v : k.local) v = size_t(r.U64("local size"));
    for (int d = 0; d < 3 && r.ok(); ++d)
      if (k.global[d] > kMaxLaunchDim || k.local[d] > kMaxLaunchDim) r.Fail(Idx("launch size out of range in kernel", ki));
    k.tunable = r.U8("tunable flag") != 0;
    k.args.resize(r.Count(8, "kernel arguments"));
    for (GpuKernelArg& a : k.args) {
      uint32_t kind = r.U32("argument kind");
      if (r.ok() && kind > uint32_t(GpuKernelArg::kStaging)) r.Fail(Idx("bad argument kind in kernel", ki));
      a.kind = GpuKernelArg::Kind(kind);
      a.index = r.I32("argument index");
    }
    k.node = r.I32("kernel node");
    k.op = r.Str("kernel op");
    k.label = r.Str("kernel label");
  }
  GetBoundaries(r, &m.inputs, "inputs");
  GetBoundaries(r, &m.outputs, "outputs");
  m.staging_bytes.resize(r.Count(8, "staging sizes"));
  for (size_t& b : m.staging_bytes) b = size_t(r.U64("staging size"));
  m.tensor_slot.resize(r.Count(4, "tensor slots"));
  for (int& s : m.tensor_slot) s = r.I32("tensor slot");
  m.slot_bytes.resize(r.Count(8, "slot sizes"));
  for (size_t& b : m.slot_bytes) b = size_t(r.U64("slot size"));
  if (r.ok() && r.left() != 0) r.Fail(std::to_string(r.left()) + " unexpected trailing bytes");
  if (!r.ok()) return InvalidArgument("malformed payload: " + r.error());
  *out = std::move(p);
  return OkStatus();
}

Status ValidatePartitionModel(const GpuPartitionModel& m, const Subgraph& sg, const std::vector<int>& nodes) {
  const size_t nt = m.tensors.size(), nc = m.consts.size(), ns = m.staging_bytes.size(), nslots = m.slot_bytes.size();
  const size_t ncpu = sg.tensors_size();
  if (m.nodes != nodes) return InvalidArgument("the entry is for other nodes");
  if (m.tensor_slot.size() != nt) return InvalidArgument("tensor slot table size differs from the tensor count");
  for (size_t i = 0; i < nt; ++i) {
    const GpuTensorDesc& t = m.tensors[i];
    if (t.cpu_tensor < -1 || (t.cpu_tensor >= 0 && size_t(t.cpu_tensor) >= ncpu))
      return InvalidArgument(Idx("interpreter tensor index out of range in GPU tensor", i));
    if (t.const_index < -1 || (t.const_index >= 0 && size_t(t.const_index) >= nc))
      return InvalidArgument(Idx("constant index out of range in GPU tensor", i));
    int s = m.tensor_slot[i];
    if (s < -1 || (s >= 0 && size_t(s) >= nslots)) return InvalidArgument(Idx("slot out of range for GPU tensor", i));
    // The buffer behind a tensor holds its whole PHWC4 image (what the kernels index).
    const BHWC& sh = t.shape;
    if (sh.b < 1 || sh.h < 1 || sh.w < 1 || sh.c < 1 || sh.b > (1 << 24) || sh.h > (1 << 24) || sh.w > (1 << 24) ||
        sh.c > (1 << 24) ||
        static_cast<unsigned __int128>(sh.b) * sh.h * sh.w * (uint64_t(sh.slices()) * 4) > kMaxBufferBytes)
      return InvalidArgument(Idx("bad shape of GPU tensor", i));
    const uint64_t need = uint64_t(sh.elements4());
    if (s >= 0 && m.slot_bytes[size_t(s)] < need * m.tensor_bytes(int(i)))
      return InvalidArgument(Idx("buffer slot too small for GPU tensor", i));
    if (t.const_index >= 0 && m.consts[size_t(t.const_index)].size() < need)
      return InvalidArgument(Idx("constant too small for GPU tensor", i));
    // A float-stored constant is uploaded as float (const_exact), as its readers declare it.
    if (t.const_index >= 0 && m.precision != Precision::kF32 &&
        bool(m.tensor_f32[i]) != bool(m.const_exact[size_t(t.const_index)]))
      return InvalidArgument(Idx("storage flag and constant flag disagree for GPU tensor", i));
  }
  for (size_t b : m.slot_bytes)
    if (b > kMaxBufferBytes) return InvalidArgument("a buffer slot size is out of range");
  for (size_t b : m.staging_bytes)
    if (b > kMaxBufferBytes) return InvalidArgument("a staging size is out of range");
  for (size_t ki = 0; ki < m.kernels.size(); ++ki)
    for (const GpuKernelArg& a : m.kernels[ki].args) {
      size_t limit = a.kind == GpuKernelArg::kTensor ? nt : a.kind == GpuKernelArg::kConst ? nc : ns;
      if (a.index < 0 || size_t(a.index) >= limit) return InvalidArgument(Idx("argument index out of range in kernel", ki));
      if (a.kind == GpuKernelArg::kTensor && m.tensor_slot[size_t(a.index)] < 0 && m.tensors[size_t(a.index)].const_index < 0)
        return InvalidArgument(Idx("an argument names a GPU tensor without a buffer in kernel", ki));
    }
  // Direct boundaries (empty entries, see GpuKernelDesc::source): only in the boundary positions,
  // with no arguments; the model's kernels index their staging buffers as float32 of the GPU
  // tensor's element count, and no other staging buffer.
  const size_t nk = m.kernels.size(), n_in = m.inputs.size(), n_out = m.outputs.size();
  if (n_in + n_out > nk) return InvalidArgument("fewer kernels than boundary conversions");
  std::set<int> direct_staging;
  for (size_t ki = 0; ki < nk; ++ki) {
    if (!m.kernels[ki].source.empty()) continue;
    const bool in = ki < n_in, out = ki >= nk - n_out;
    if ((!in && !out) || !m.kernels[ki].args.empty()) return InvalidArgument(Idx("an empty kernel is no boundary entry:", ki));
    const auto& b = in ? m.inputs[ki] : m.outputs[ki - (nk - n_out)];
    if (b.staging < 0 || size_t(b.staging) >= ns || b.gpu_tensor < 0 || size_t(b.gpu_tensor) >= nt)
      return InvalidArgument("a direct boundary names no staging buffer or GPU tensor");
    const BHWC& sh = m.tensors[size_t(b.gpu_tensor)].shape;
    if (m.staging_bytes[size_t(b.staging)] != uint64_t(sh.b) * sh.h * sh.w * sh.c * 4)
      return InvalidArgument(Idx("a direct boundary's staging size differs from its float32 tensor in kernel", ki));
    direct_staging.insert(b.staging);
  }
  for (size_t ki = n_in; ki + n_out < nk; ++ki)
    for (const GpuKernelArg& a : m.kernels[ki].args)
      if (a.kind == GpuKernelArg::kStaging && !direct_staging.count(a.index))
        return InvalidArgument(Idx("a model kernel names a staging buffer of no direct boundary in kernel", ki));
  for (const auto* list : {&m.inputs, &m.outputs})
    for (const auto& b : *list) {
      if (b.cpu_tensor < 0 || size_t(b.cpu_tensor) >= ncpu) return InvalidArgument("a boundary names no interpreter tensor");
      if (b.gpu_tensor < 0 || size_t(b.gpu_tensor) >= nt) return InvalidArgument("a boundary names no GPU tensor");
      if (b.staging < 0 || size_t(b.staging) >= ns) return InvalidArgument("a boundary names no staging buffer");
      // The runtime copies staging_bytes between the host tensor and the device: exactly the
      // tensor's size for its current shape, as a fresh build computes it. (Not Tensor::bytes:
      // when a resize rebuilds the partition, Prepare runs before the tensors are re-allocated,
      // so bytes still holds the old size and a valid entry would be refused.)
      const Tensor& ct = sg.tensor(b.cpu_tensor);
      const int64_t n = NumElements(ct.shape);
      if (n < 0 || m.staging_bytes[b.staging] != size_t(n) * DTypeSize(ct.type))
        return InvalidArgument("a staging size differs from its interpreter tensor's size");
    }
  return OkStatus();
}

ModelSerializer::ModelSerializer(std::string dir, std::string key_prefix)
    : dir_(std::move(dir)), key_prefix_(std::move(key_prefix)) {
  stats_.enabled = true;
  stats_.dir = dir_;
}

std::string ModelSerializer::PartitionKey(Subgraph& sg, const std::vector<int>& nodes, std::string* why) const {
  SharedState* sh = sg.shared();
  if (!sh || !sh->model_data || !sh->model_size) {
    *why = "the interpreter's model bytes are not available";
    return "";
  }
  if (sh->model_sha256.empty()) sh->model_sha256 = Sha256Hex(sh->model_data, sh->model_size);
  std::string key = key_prefix_;
  AppendKeyField(&key, "model_sha256", sh->model_sha256);
  AppendKeyField(&key, "subgraph", std::to_string(sg.index()));
  std::string ns, shapes;
  std::set<int> seen;
  for (int n : nodes) {
    ns += std::to_string(n) + ",";
    const Node& node = sg.nodes()[size_t(n)];
    for (const std::vector<int>* list : {&node.inputs, &node.outputs})
      for (int t : *list) {
        if (t < 0 || !seen.insert(t).second) continue;
        const Tensor& tt = sg.tensor(t);
        shapes += std::to_string(t) + ":" + std::to_string(int(tt.type)) + ":";
        for (int d : tt.shape) shapes += std::to_string(d) + "x";
        shapes += ";";
      }
  }
  AppendKeyField(&key, "nodes", ns);
  AppendKeyField(&key, "tensors", shapes);
  // The kernel-count levers change the kernels built: a partition built under other settings is
  // another entry (the field is absent with the defaults, so default keys are unchanged).
  const std::string fusion = env::Get("TFLITE_GPU_DISABLE_FUSION") + "/" + env::Get("TFLITE_GPU_FUSION_DWPW_MAX_MACS") +
                             (env::Get("TFLITE_GPU_FUSION_DWPW_MAX_TIMES").empty()
                                  ? std::string()
                                  : "/times=" + env::Get("TFLITE_GPU_FUSION_DWPW_MAX_TIMES")) +
                             "/enable=" + env::Get("TFLITE_GPU_ENABLE_FUSION") + env::ConvGemm() + "/mma=" + env::ConvMma() +
                             (env::ConvSplitK().empty() ? "" : "/splitk=" + env::ConvSplitK()) +
                             (env::DwRows() == 0 ? "" : "/dwrows=" + std::to_string(env::DwRows())) +
                             (env::Vload() ? "/vload" : "");
  if (fusion != "//enable=") AppendKeyField(&key, "fusion", fusion);
  return key;
}

std::string ModelSerializer::PathFor(const std::string& key) const {
  return dir_ + "/" + Sha256Hex(key.data(), key.size()) + ".tfgmodel";
}

void ModelSerializer::Reject(const std::string& path, const std::string& why) {
  ++stats_.rejected;
  stats_.reject_reasons.push_back(path + ": " + why);
  rejected_paths_.insert(path);
  Log(1, "WARNING: serialized GPU model '" + path + "' is not used (" + why + "); rebuilding it and rewriting the entry");
}

void ModelSerializer::RejectLoaded(const std::string& key, const std::string& why) {
  std::lock_guard<std::mutex> l(mu_);
  --stats_.hits;
  ++stats_.misses;
  Reject(PathFor(key), why);
}

bool ModelSerializer::Load(const std::string& key, const Subgraph& sg, const std::vector<int>& nodes,
                           cl::ProgramCache* cache, GpuPartitionModel* model, bool* tuned) {
  std::lock_guard<std::mutex> l(mu_);
  std::string path = PathFor(key), image, why;
  cl::FileRead r = cl::ReadTrustedFile(path, kMaxSerializedModelBytes, &image, &why);
  if (r == cl::FileRead::kMissing) {
    ++stats_.misses;
    return false;
  }
  SerializedPartition p;
  Status st = r == cl::FileRead::kOk ? DecodeSerializedPartition(image, key, &p) : InvalidArgument(why);
  if (st.ok()) st = ValidatePartitionModel(p.model, sg, nodes);
  for (size_t i = 0; st.ok() && i < p.sources.size(); ++i) {
    Status b = cache->AddBinary(p.sources[i], "", p.binaries[i]);
    if (!b.ok()) st = InvalidArgument("the driver refused program " + std::to_string(i) + ": " + b.message());
  }
  if (!st.ok()) {
    ++stats_.misses;
    Reject(path, st.message());
    return false;
  }
  ++stats_.hits;
  stats_.files.push_back(path);
  *model = std::move(p.model);
  *tuned = p.tuned;
  return true;
}

void ModelSerializer::Save(const std::string& key, const GpuPartitionModel& model, bool tuned, cl::ProgramCache* cache) {
  std::lock_guard<std::mutex> l(mu_);
  SerializedPartition p;
  p.model = model;
  p.tuned = tuned;
  std::string why;
  for (const GpuKernelDesc& k : model.kernels) {
    if (k.source.empty()) continue;  // a direct boundary's entry (no program)
    bool known = false;
    for (const std::string& s : p.sources) known = known || s == k.source;
    if (known) continue;
    std::shared_ptr<const cl::Program> prog = cache->Find(k.source, "");
    StatusOr<std::vector<uint8_t>> bin = prog ? prog->Binary() : StatusOr<std::vector<uint8_t>>(NotFound("not compiled"));
    if (!bin.ok() || bin->empty()) {
      why = "the driver gave no binary for kernel '" + k.name + "'";
      break;
    }
    p.sources.push_back(k.source);
    p.binaries.push_back(std::move(bin.value()));
  }
  std::string path = PathFor(key);
  if (why.empty() && cl::WriteFileAtomically(path, EncodeSerializedPartition(key, p), &why)) {
    ++stats_.writes;
    stats_.files.push_back(path);
    return;
  }
  ++stats_.write_errors;
  // One warning per event: after a rejection the warning already said we rebuild.
  if (!warned_write_ && !rejected_paths_.count(path)) {
    warned_write_ = true;
    Log(1, "WARNING: could not save the serialized GPU model in '" + dir_ + "' (" + why +
               "); the delegate works without it, and the next start will build again");
  }
}

}  // namespace gpu
}  // namespace tflite_gpu

namespace tflite_gpu {
namespace gpu {

std::unique_ptr<ModelSerializer> MakeModelSerializer(const TfLiteGpuDelegateOptionsV2& o, const std::string& dir,
                                                     const std::string& token, const std::vector<std::string>& op_filter,
                                                     Precision precision, const GpuDeviceCaps& caps,
                                                     const cl::DeviceInfo& d, const std::string& cache_refused,
                                                     std::string* disabled_reason) {
  disabled_reason->clear();
  if (!(o.experimental_flags & TFLITE_GPU_EXPERIMENTAL_FLAGS_ENABLE_SERIALIZATION)) return nullptr;
  if (dir.empty() || token.empty()) {
    *disabled_reason = std::string("ENABLE_SERIALIZATION is set but ") +
                       (dir.empty() && token.empty() ? "serialization_dir and model_token are"
                        : dir.empty()                ? "serialization_dir is"
                                                     : "model_token is") +
                       " not set: the prepared GPU model is not serialized (it needs both)" +
                       (dir.empty() ? "" : "; compiled programs are still cached in serialization_dir");
  } else if (!cache_refused.empty()) {
    *disabled_reason = cache_refused;  // already logged by the program cache
    return nullptr;
  } else {
    std::string why;
    if (!cl::MakePrivateDirs(dir)) why = std::string("it cannot be created: ") + std::strerror(errno);
    else why = cl::UntrustedDirReason(dir);
    if (!why.empty()) *disabled_reason = "serialization directory '" + dir + "' is not used (" + why + ")";
  }
  if (!disabled_reason->empty()) {
    Log(1, "WARNING: " + *disabled_reason);
    return nullptr;
  }
  std::string k;
  AppendKeyField(&k, "format", std::to_string(kSerializationFormatVersion));
  AppendKeyField(&k, "library", TfLiteVersion());
  AppendKeyField(&k, "model_token", token);
  AppendKeyField(&k, "precision", std::to_string(int(precision)));
  AppendKeyField(&k, "fp16_all_half", env::Fp16AllHalf() ? "1" : "0");
  AppendKeyField(&k, "is_precision_loss_allowed", std::to_string(o.is_precision_loss_allowed));
  AppendKeyField(&k, "inference_preference", std::to_string(o.inference_preference));
  AppendKeyField(&k, "priorities", std::to_string(o.inference_priority1) + "," + std::to_string(o.inference_priority2) +
                                       "," + std::to_string(o.inference_priority3));
  AppendKeyField(&k, "experimental_flags", std::to_string(o.experimental_flags));
  AppendKeyField(&k, "max_delegated_partitions", std::to_string(o.max_delegated_partitions));
  std::string filter;
  for (const std::string& f : op_filter) filter += f + ",";
  AppendKeyField(&k, "op_filter", filter);
  AppendKeyField(&k, "debug", std::string(env::DebugSentinels() ? "sentinels" : "") + "|" + env::DebugBreakKernel());
  AppendKeyField(&k, "caps", std::to_string(caps.fp16) + "," + std::to_string(caps.fp16_storage) + "," +
                                 std::to_string(caps.enable_quant) + "," + std::to_string(caps.max_work_group_size) +
                                 "," + std::to_string(caps.is_gpu) + "," + std::to_string(caps.nv_compute_capability) +
                                 "," + std::to_string(caps.cuda_graph));
  AppendKeyField(&k, "device_name", d.name);
  AppendKeyField(&k, "device_vendor", d.vendor);
  AppendKeyField(&k, "device_version", d.device_version);
  AppendKeyField(&k, "driver_version", d.driver_version);  // CL_DRIVER_VERSION (not the CUDA version)
  AppendKeyField(&k, "platform", d.platform_name + " | " + d.platform_version);
  AppendKeyField(&k, "opencl_c_version", d.opencl_c_version);
  return std::make_unique<ModelSerializer>(dir, std::move(k));
}

}  // namespace gpu
}  // namespace tflite_gpu
