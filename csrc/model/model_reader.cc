#include "model/model_reader.h"
#include "runtime/string_tensor.h"

#include <climits>
#include <limits>

namespace tflite_gpu {
namespace {

using fb::FbError;
using fb::Table;
using fb::Vec;

// Field ids from the public TFLite schema (schema.fbs, version 3).
namespace F {
enum Model { kVersion = 0, kOperatorCodes = 1, kSubgraphs = 2, kDescription = 3, kBuffers = 4,
             kMetadataBuffer = 5, kMetadata = 6, kSignatureDefs = 7 };
enum OpCode { kDeprecatedBuiltin = 0, kCustomCode = 1, kOpVersion = 2, kBuiltinCode = 3 };
enum SubGraph { kTensors = 0, kInputs = 1, kOutputs = 2, kOperators = 3, kName = 4 };
enum TensorF { kShape = 0, kType = 1, kBuffer = 2, kTName = 3, kQuant = 4, kIsVariable = 5,
               kSparsity = 6, kShapeSignature = 7 };
enum Quant { kMin = 0, kMax = 1, kScale = 2, kZeroPoint = 3, kDetailsType = 4, kDetails = 5, kQDim = 6 };
// QuantizationDetails union member 2: BlockwiseQuantization { scales: int; zero_points: int; block_size: int; }
enum Blockwise { kBwScales = 0, kBwZeroPoints = 1, kBwBlockSize = 2 };
enum Sparsity { kTraversal = 0, kBlockMap = 1, kDimMeta = 2 };
enum DimMeta { kFormat = 0, kDenseSize = 1, kSegType = 2, kSeg = 3, kIdxType = 4, kIdx = 5 };
enum Op { kOpcodeIndex = 0, kOpInputs = 1, kOpOutputs = 2, kOptType = 3, kOptions = 4,
          kCustomOptions = 5, kIntermediates = 8, kLargeCustomOffset = 9, kLargeCustomSize = 10,
          kOpt2Type = 11, kOptions2 = 12 };
enum Buffer { kData = 0, kOffset = 1, kSize = 2 };
enum Meta { kMetaName = 0, kMetaBuffer = 1 };
enum Sig { kSigInputs = 0, kSigOutputs = 1, kSigKey = 2, kSigSubgraph = 4 };
enum TMap { kTMName = 0, kTMIndex = 1 };
}  // namespace F

std::string Ctx(const std::string& where, const std::string& msg) { return where + ": " + msg; }

std::vector<int32_t> IntVec(const Table& t, int id, const char* what) {
  return t.Vector(id, 4, what).ToVector<int32_t>();
}

std::vector<int32_t> SparseIndexVec(const Table& dm, int type_id, int val_id, const char* what) {
  uint8_t ty = dm.Scalar<uint8_t>(type_id, 0);
  if (ty == 0) return {};
  Table v = dm.SubTable(val_id, what);
  if (!v.valid()) throw FbError(std::string(what) + ": union value missing");
  std::vector<int32_t> out;
  if (ty == 1) return v.Vector(0, 4, what).ToVector<int32_t>();
  if (ty == 2) {
    Vec vv = v.Vector(0, 2, what);
    for (uint32_t i = 0; i < vv.size(); ++i) out.push_back(vv.Get<uint16_t>(i));
    return out;
  }
  if (ty == 3) {
    Vec vv = v.Vector(0, 1, what);
    for (uint32_t i = 0; i < vv.size(); ++i) out.push_back(vv.Get<uint8_t>(i));
    return out;
  }
  throw FbError(std::string(what) + ": unknown sparse index vector type " + std::to_string(ty));
}

void ReadTensor(const Table& t, size_t num_buffers, TensorDef* d, const std::string& where) {
  d->shape = IntVec(t, F::kShape, "tensor shape");
  for (int32_t s : d->shape)
    if (s < 0) throw FbError(Ctx(where, "negative dimension " + std::to_string(s) + " in shape"));
  int8_t ty = t.Scalar<int8_t>(F::kType, 0);
  if (!DTypeKnown(ty)) throw FbError(Ctx(where, "unknown tensor type " + std::to_string(ty)));
  d->type = static_cast<DType>(ty);
  d->buffer = t.Scalar<uint32_t>(F::kBuffer, 0);
  if (d->buffer >= num_buffers && num_buffers > 0)
    throw FbError(Ctx(where, "buffer index " + std::to_string(d->buffer) + " out of range (" +
                                 std::to_string(num_buffers) + " buffers)"));
  d->name = t.String(F::kTName, "tensor name");
  d->is_variable = t.Bool(F::kIsVariable);
  d->shape_signature = IntVec(t, F::kShapeSignature, "tensor shape_signature");
  if (!d->shape_signature.empty() && d->shape_signature.size() != d->shape.size())
    throw FbError(Ctx(where, "shape_signature rank differs from shape rank"));
  Table q = t.SubTable(F::kQuant, "quantization");
  if (q.valid()) {
    d->quant.min = q.Vector(F::kMin, 4, "quant min").ToVector<float>();
    d->quant.max = q.Vector(F::kMax, 4, "quant max").ToVector<float>();
    d->quant.scale = q.Vector(F::kScale, 4, "quant scale").ToVector<float>();
    d->quant.zero_point = q.Vector(F::kZeroPoint, 8, "quant zero_point").ToVector<int64_t>();
    for (int64_t zp : d->quant.zero_point)  // every kernel (and TFLite's API) holds zero points as int32
      if (zp < INT32_MIN || zp > INT32_MAX)
        throw FbError(Ctx(where, "quantization zero_point " + std::to_string(zp) + " is outside the int32 range"));
    d->quant.quantized_dimension = q.Scalar<int32_t>(F::kQDim, 0);
    if (q.Scalar<uint8_t>(F::kDetailsType, 0) == 2) {  // BlockwiseQuantization
      Table bw = q.SubTable(F::kDetails, "blockwise quantization");
      if (!bw.valid()) throw FbError(Ctx(where, "blockwise quantization without its details table"));
      d->quant.blockwise_scales = bw.Scalar<int32_t>(F::kBwScales, 0);
      d->quant.blockwise_zero_points = bw.Scalar<int32_t>(F::kBwZeroPoints, 0);
      d->quant.block_size = bw.Scalar<int32_t>(F::kBwBlockSize, 0);
      if (d->quant.block_size <= 0)
        throw FbError(Ctx(where, "blockwise quantization with block_size " + std::to_string(d->quant.block_size)));
    }
    if (!d->quant.scale.empty()) {
      if (!d->quant.zero_point.empty() && d->quant.zero_point.size() != d->quant.scale.size())
        throw FbError(Ctx(where, "quantization scale and zero_point lengths differ"));
      if (d->quant.scale.size() > 1) {
        int qd = d->quant.quantized_dimension;
        if (qd < 0 || size_t(qd) >= d->shape.size() ||
            size_t(d->shape[qd]) != d->quant.scale.size())
          throw FbError(Ctx(where, "per-channel quantization has " +
                                       std::to_string(d->quant.scale.size()) +
                                       " scales but quantized_dimension " + std::to_string(qd) +
                                       " does not match the shape " + DimsToString(d->shape)));
      }
    }
  }
  Table sp = t.SubTable(F::kSparsity, "sparsity");
  if (sp.valid()) {
    auto s = std::make_shared<SparsityParams>();
    s->traversal_order = IntVec(sp, F::kTraversal, "traversal_order");
    s->block_map = IntVec(sp, F::kBlockMap, "block_map");
    Vec dms = sp.Vector(F::kDimMeta, 4, "dim_metadata");
    for (uint32_t i = 0; i < dms.size(); ++i) {
      Table dm = dms.GetTable(i, "dim_metadata");
      DimensionMetadata m;
      m.format = dm.Scalar<int8_t>(F::kFormat, 0);
      m.dense_size = dm.Scalar<int32_t>(F::kDenseSize, 0);
      m.array_segments = SparseIndexVec(dm, F::kSegType, F::kSeg, "array_segments");
      m.array_indices = SparseIndexVec(dm, F::kIdxType, F::kIdx, "array_indices");
      s->dim_metadata.push_back(std::move(m));
    }
    d->sparsity = std::move(s);
  }
}

void CheckIndexList(const std::vector<int32_t>& v, size_t n, bool allow_optional,
                    const std::string& where) {
  for (int32_t i : v) {
    if (i == -1 && allow_optional) continue;
    if (i < 0 || size_t(i) >= n)
      throw FbError(Ctx(where, "tensor index " + std::to_string(i) + " out of range (" +
                                   std::to_string(n) + " tensors)"));
  }
}

void ReadModelImpl(const fb::Reader& r, ModelDef* m) {
  if (r.size() < 8) throw FbError("file too small to be a .tflite model (" + std::to_string(r.size()) + " bytes)");
  if (std::memcmp(r.data() + 4, "TFL3", 4) != 0)
    throw FbError("missing the TFL3 file identifier: not a TensorFlow Lite model");
  uint32_t root = r.Read<uint32_t>(0, "root offset");
  Table model = Table::At(&r, root, "model table");
  m->version = model.Scalar<uint32_t>(F::kVersion, 0);
  if (m->version != 3)
    throw FbError("unsupported schema version " + std::to_string(m->version) + " (expected 3)");
  m->description = model.String(F::kDescription, "description");

  Vec bufs = model.Vector(F::kBuffers, 4, "buffers");
  m->buffers.resize(bufs.size());
  for (uint32_t i = 0; i < bufs.size(); ++i) {
    Table b = bufs.GetTable(i, "buffer");
    Vec d = b.Vector(F::kData, 1, "buffer data");
    uint64_t off = b.Scalar<uint64_t>(F::kOffset, 0), sz = b.Scalar<uint64_t>(F::kSize, 0);
    if (d.size()) {
      m->buffers[i] = {d.raw(), d.size()};
    } else if (off > 1) {  // offset/size form: offset counted from the start of the file
      r.Check(off, sz, ("buffer " + std::to_string(i) + " (offset/size form)").c_str());
      m->buffers[i] = {r.data() + off, size_t(sz)};
    }
  }

  Vec codes = model.Vector(F::kOperatorCodes, 4, "operator_codes");
  for (uint32_t i = 0; i < codes.size(); ++i) {
    Table c = codes.GetTable(i, "operator code");
    OperatorCodeDef oc;
    int32_t dep = c.Scalar<int8_t>(F::kDeprecatedBuiltin, 0);
    int32_t code = c.Scalar<int32_t>(F::kBuiltinCode, 0);
    oc.builtin_code = std::max(dep, code);  // TFLite's GetBuiltinCode rule
    if (oc.builtin_code < 0) throw FbError("operator code " + std::to_string(i) + " is negative");
    oc.custom_code = c.String(F::kCustomCode, "custom_code");
    oc.version = c.Scalar<int32_t>(F::kOpVersion, 1);
    m->operator_codes.push_back(std::move(oc));
  }

  Vec sgs = model.Vector(F::kSubgraphs, 4, "subgraphs");
  if (sgs.size() == 0) throw FbError("model has no subgraphs");
  for (uint32_t s = 0; s < sgs.size(); ++s) {
    std::string where = "subgraph " + std::to_string(s);
    Table sg = sgs.GetTable(s, "subgraph");
    SubgraphDef d;
    d.name = sg.String(F::kName, "subgraph name");
    Vec ts = sg.Vector(F::kTensors, 4, "tensors");
    d.tensors.resize(ts.size());
    for (uint32_t t = 0; t < ts.size(); ++t) {
      std::string tw = where + ", tensor " + std::to_string(t);
      ReadTensor(ts.GetTable(t, "tensor"), m->buffers.size(), &d.tensors[t], tw);
      const TensorDef& td = d.tensors[t];
      if (td.quant.block_size > 0) {  // the scale / zero-point tensors are tensors of this subgraph
        const int32_t n = int32_t(ts.size());
        if (td.quant.blockwise_scales < 0 || td.quant.blockwise_scales >= n)
          throw FbError(Ctx(tw, "blockwise quantization scales tensor " + std::to_string(td.quant.blockwise_scales) +
                                    " out of range (" + std::to_string(n) + " tensors)"));
        if (td.quant.blockwise_zero_points < -1 || td.quant.blockwise_zero_points >= n)
          throw FbError(Ctx(tw, "blockwise quantization zero_points tensor " +
                                    std::to_string(td.quant.blockwise_zero_points) + " out of range (" +
                                    std::to_string(n) + " tensors)"));
      }
      if (td.buffer != 0 && td.buffer < m->buffers.size() && m->buffers[td.buffer].data) {
        size_t have = m->buffers[td.buffer].size;
        size_t es = DTypeSize(td.type);
        int64_t n = NumElements(td.shape);
        if (!td.sparsity && td.type != DType::kString && es != 0) {
          const uint64_t need = n < 0 ? 0 : DTypeFileBytes(td.type, uint64_t(n));
          if (n < 0 || need != have)
            throw FbError(Ctx(tw, "'" + td.name + "' shape " + DimsToString(td.shape) + " needs " +
                                      std::to_string(need) + " bytes" +
                                      (DTypePackedBits(td.type) ? std::string(" (") + DTypeName(td.type) +
                                                                      " packs " + std::to_string(8 / DTypePackedBits(td.type)) +
                                                                      " elements a byte)"
                                                                : std::string()) +
                                      " but its buffer has " + std::to_string(have)));
        }
        if (td.type == DType::kString && !td.sparsity) {
          const std::string why = CheckStringBuffer(m->buffers[td.buffer].data, have, n);
          if (!why.empty()) throw FbError(Ctx(tw, "'" + td.name + "' (STRING) " + why));
        }
        if (DTypePackedBits(td.type) && td.is_variable)
          throw FbError(Ctx(tw, "'" + td.name + "': variable " + std::string(DTypeName(td.type)) +
                                    " tensors are not supported"));
        if (DTypePackedBits(td.type) && td.sparsity)
          throw FbError(Ctx(tw, "'" + td.name + "': sparse " + std::string(DTypeName(td.type)) +
                                    " tensors are not supported"));
      }
    }
    d.inputs = IntVec(sg, F::kInputs, "subgraph inputs");
    d.outputs = IntVec(sg, F::kOutputs, "subgraph outputs");
    CheckIndexList(d.inputs, d.tensors.size(), false, where + " inputs");
    CheckIndexList(d.outputs, d.tensors.size(), false, where + " outputs");
    Vec ops = sg.Vector(F::kOperators, 4, "operators");
    for (uint32_t o = 0; o < ops.size(); ++o) {
      std::string ow = where + ", operator " + std::to_string(o);
      Table op = ops.GetTable(o, "operator");
      OperatorDef od;
      od.opcode_index = op.Scalar<uint32_t>(F::kOpcodeIndex, 0);
      if (od.opcode_index >= m->operator_codes.size())
        throw FbError(Ctx(ow, "opcode_index " + std::to_string(od.opcode_index) + " out of range (" +
                                  std::to_string(m->operator_codes.size()) + " operator codes)"));
      od.inputs = IntVec(op, F::kOpInputs, "operator inputs");
      od.outputs = IntVec(op, F::kOpOutputs, "operator outputs");
      od.intermediates = IntVec(op, F::kIntermediates, "operator intermediates");
      CheckIndexList(od.inputs, d.tensors.size(), true, ow + " inputs");
      CheckIndexList(od.outputs, d.tensors.size(), false, ow + " outputs");
      CheckIndexList(od.intermediates, d.tensors.size(), true, ow + " intermediates");
      od.options_type = op.Scalar<uint8_t>(F::kOptType, 0);
      od.options = op.SubTable(F::kOptions, "builtin options");
      od.options2_type = op.Scalar<uint8_t>(F::kOpt2Type, 0);
      od.options2 = op.SubTable(F::kOptions2, "builtin options 2");
      Vec co = op.Vector(F::kCustomOptions, 1, "custom options");
      od.custom_options = co.raw();
      od.custom_options_size = co.size();
      uint64_t lco = op.Scalar<uint64_t>(F::kLargeCustomOffset, 0);
      uint64_t lcs = op.Scalar<uint64_t>(F::kLargeCustomSize, 0);
      if (lco > 1 && lcs > 0) {
        r.Check(lco, lcs, "large custom options");
        od.custom_options = r.data() + lco;
        od.custom_options_size = size_t(lcs);
      }
      d.operators.push_back(std::move(od));
    }
    m->subgraphs.push_back(std::move(d));
  }

  Vec metas = model.Vector(F::kMetadata, 4, "metadata");
  for (uint32_t i = 0; i < metas.size(); ++i) {
    Table mt = metas.GetTable(i, "metadata");
    std::string name = mt.String(F::kMetaName, "metadata name");
    uint32_t b = mt.Scalar<uint32_t>(F::kMetaBuffer, 0);
    if (b >= m->buffers.size())
      throw FbError("metadata '" + name + "' names buffer " + std::to_string(b) + " out of range");
    const BufferDef& bd = m->buffers[b];
    m->metadata.emplace_back(name, std::string(reinterpret_cast<const char*>(bd.data), bd.size));
  }

  Vec sigs = model.Vector(F::kSignatureDefs, 4, "signature_defs");
  for (uint32_t i = 0; i < sigs.size(); ++i) {
    Table sg = sigs.GetTable(i, "signature def");
    SignatureDefT sd;
    sd.key = sg.String(F::kSigKey, "signature key");
    sd.subgraph_index = sg.Scalar<uint32_t>(F::kSigSubgraph, 0);
    if (sd.subgraph_index >= m->subgraphs.size())
      throw FbError("signature '" + sd.key + "' names subgraph " + std::to_string(sd.subgraph_index) + " out of range");
    size_t nt = m->subgraphs[sd.subgraph_index].tensors.size();
    for (int io = 0; io < 2; ++io) {
      Vec maps = sg.Vector(io == 0 ? F::kSigInputs : F::kSigOutputs, 4, "signature tensor map");
      for (uint32_t k = 0; k < maps.size(); ++k) {
        Table tm = maps.GetTable(k, "tensor map");
        std::string nm = tm.String(F::kTMName, "tensor map name");
        uint32_t idx = tm.Scalar<uint32_t>(F::kTMIndex, 0);
        if (idx >= nt)
          throw FbError("signature '" + sd.key + "' maps '" + nm + "' to tensor " + std::to_string(idx) + " out of range");
        (io == 0 ? sd.inputs : sd.outputs).emplace_back(nm, int32_t(idx));
      }
    }
    m->signatures.push_back(std::move(sd));
  }
}

}  // namespace

Status ReadModel(const fb::Reader* reader, ModelDef* out) {
  try {
    ReadModelImpl(*reader, out);
  } catch (const FbError& e) {
    return InvalidArgument(std::string("malformed .tflite model: ") + e.what());
  } catch (const std::bad_alloc&) {
    return InvalidArgument("malformed .tflite model: a length field asks for more memory than available");
  } catch (const std::length_error&) {
    return InvalidArgument("malformed .tflite model: a length field is too large");
  }
  return OkStatus();
}

}  // namespace tflite_gpu
