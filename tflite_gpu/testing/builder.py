"""A small, dependency-light writer for TensorFlow Lite ``.tflite`` files.

Written by hand from the public TFLite flatbuffer schema (schema v3, file
identifier ``TFL3``) using only ``flatbuffers.Builder``'s low-level API and
numpy.  It is meant for building test models, not for converting networks.

Quick reference
---------------
::

    from tflite_gpu.testing.builder import ModelBuilder, single_op_model

    mb = ModelBuilder()
    x = mb.add_input([1, 8, 8, 3], name="x")
    w = mb.add_const(np.ones((4, 3, 3, 3), np.float32), name="w")   # OHWI
    b = mb.add_const(np.zeros(4, np.float32), name="b")
    y = mb.add_tensor([1, 8, 8, 4], name="y")
    mb.add_op("CONV_2D", [x, w, b], [y],
              options=dict(padding="SAME", stride_w=1, stride_h=1,
                           fused_activation_function="RELU6"))
    mb.mark_output(y)
    mb.add_signature("serving_default", {"x": x}, {"y": y})
    tflite_bytes = mb.build()                  # or mb.build(large_buffers=True)

``ModelBuilder`` methods:

* ``add_tensor(shape, dtype=np.float32, name=None, data=None, quant=None,
  shape_signature=None, is_variable=False, sparsity=None) -> int``
  ``dtype`` is a numpy dtype (or a TensorType name such as ``'INT8'``);
  ``data`` (ndarray or raw ``bytes``) makes the tensor constant.
  ``quant=dict(scale=[...], zero_point=[...], quantized_dimension=0,
  min=None, max=None)``.
  Packed types (``'INT4'``, ``'UINT4'``, ``'INT2'``) given ``data`` as an ndarray of values are
  written in TFLite's packed layout (``pack_bits``); raw ``bytes`` are written as given.
  ``sparsity=dict(traversal_order=[...], block_map=[...], dim_metadata=[
  dict(format='DENSE', dense_size=n) | dict(format='SPARSE_CSR',
  array_segments=np.array(int32|uint16|uint8), array_indices=np.array(...))])``
* ``add_input(shape, dtype=np.float32, name=None, **kw) -> int``
* ``add_const(data, name=None, quant=None, **kw) -> int`` (dtype = data.dtype)
* ``mark_output(tensor_index)``
* ``add_op(op, inputs, outputs, options=None, version=1,
  custom_options=None) -> int`` -- ``op`` is a builtin name (``'CONV_2D'``),
  an int code, or ``('CUSTOM', 'custom_code')``.  ``-1`` in ``inputs`` is an
  omitted optional tensor.  ``options`` is a dict of the op's builtin options
  table fields by schema name; ``None`` writes no options table at all, ``{}``
  writes a table holding only defaults.  Enum fields accept names
  (``'SAME'``, ``'RELU6'``, ``'REFLECT'``, ``'BASIC'``, ``'INT32'`` ...) or ints.
  Ops whose options table is not known here (or that have none in the schema)
  may also pass ``options=('TableName', {...})`` for a table listed in
  ``OPTIONS_TABLES``.  Ops whose options live in ``builtin_options_2`` (``DILATE``,
  ``REDUCE_WINDOW``: ``OPTIONS2_TABLES``) take them the same way; they are written there.
* ``add_signature(key, inputs: {name: tensor}, outputs: {name: tensor},
  subgraph_index=0)``
* ``add_subgraph(name=None) -> SubgraphBuilder``: appends a subgraph (for
  WHILE/IF/CALL_ONCE bodies, or more signatures); it has the same
  ``add_tensor``/``add_input``/``add_const``/``mark_input``/``mark_output``/
  ``add_op`` methods and ``.index``.  Buffers and operator codes are shared
  by all subgraphs; ``ModelBuilder``'s own tensor/op methods write to the
  primary subgraph ``subgraph(0)``.  ``num_subgraphs`` counts them.
* ``add_metadata(name, data: bytes)``
* ``build(large_buffers=False) -> bytes`` -- with ``large_buffers=True``
  constant data is appended after the flatbuffer and referenced through
  ``Buffer.offset``/``Buffer.size`` (offset from file start), ``Buffer.data``
  stays empty.  Buffer 0 is always the empty sentinel buffer.

Module-level helpers (the schema tables are in ``_schema_tables``, re-exported here):

* ``BUILTIN_CODES``: name -> BuiltinOperator code (0..161),
  ``BUILTIN_NAMES``: inverse.
* ``TENSOR_TYPES``: TensorType name -> id; ``NP_TO_TENSOR_TYPE`` /
  ``TENSOR_TYPE_TO_NP`` map numpy dtypes <-> ids; ``tensor_type(dtype)``.
* ``OP_OPTIONS``: op name -> options table name; ``OPTIONS_TABLES``: table
  name -> (BuiltinOptions union id, field list).
* ``single_op_model(op, input_specs, output_specs, options=None, version=1,
  consts=None, custom_options=None) -> bytes``: one-op model.
  ``input_specs``/``output_specs`` are lists of ``(shape, dtype)`` tuples (or
  just shapes, meaning float32, or ``(shape, dtype, quant)``) -- these become
  graph inputs / outputs (see ``tflite_gpu.testing.quant`` for quantized ones).
  ``consts`` is an optional list of ndarrays appended (as constant tensors)
  to the op inputs after the graph inputs; a ``None`` entry appends ``-1``
  (an omitted optional input).  Use ``ModelBuilder`` directly for anything
  that needs a different input order.
* ``flex_options(mapping) -> bytes``: custom options as a FlexBuffer map the way
  TFLite converters write them for custom ops (MediaPipe's, the detection
  post-process): ``int`` -> INT, ``float`` -> FLOAT, ``bool`` -> BOOL,
  ``str`` -> STRING, a list/tuple of ints -> typed VECTOR_INT, of floats ->
  VECTOR_FLOAT, ``None`` -> NULL.  (``flexbuffers.Dumps`` writes lists as
  untyped vectors, which readers using ``AsTypedVector`` see as empty.)
"""

from __future__ import annotations

import flatbuffers
import numpy as np

# The schema as data (enums, operator codes, options tables, table field ids).
from ._schema_tables import (BUILTIN_CODES, BUILTIN_NAMES, NP_TO_TENSOR_TYPE, OP_OPTIONS,
                             OP_OPTIONS2, OPTIONS2_TABLES, OPTIONS_TABLES, PACKED_BITS,
                             TENSOR_TYPE_TO_NP, TENSOR_TYPES, _BUFFER,
                             _DIMMETA, _ENUMS, _METADATA, _MODEL, _OPCODE, _OPERATOR, _QUANT,
                             _SCHEMA_VERSION, _SIGDEF, _SPARSE_INDEX_TYPES, _SPARSITY,
                             _SUBGRAPH, _TENSOR, _TENSORMAP)

__all__ = [
    "ModelBuilder",
    "SubgraphBuilder",
    "single_op_model",
    "BUILTIN_CODES",
    "BUILTIN_NAMES",
    "TENSOR_TYPES",
    "NP_TO_TENSOR_TYPE",
    "TENSOR_TYPE_TO_NP",
    "OP_OPTIONS",
    "OPTIONS_TABLES",
    "tensor_type",
    "pack_bits",
    "PACKED_BITS",
    "OPTIONS2_TABLES",
]


def pack_bits(values, bits) -> bytes:
    """TFLite's packed layout of INT4 / UINT4 (bits=4) and INT2 (bits=2) buffers: element i of
    the flattened tensor sits in byte i // (8 // bits) at bit (i % (8 // bits)) * bits, lowest
    bits first; ceil(n * bits / 8) bytes. Values are taken modulo 2**bits (two's complement)."""
    v = np.asarray(values).reshape(-1).astype(np.int64) & ((1 << bits) - 1)
    per = 8 // bits
    pad = (-len(v)) % per
    v = np.concatenate([v, np.zeros(pad, np.int64)]).reshape(-1, per)
    shifts = np.arange(per, dtype=np.int64) * bits
    return (v << shifts).sum(axis=1).astype(np.uint8).tobytes()


def string_buffer(values) -> bytes:
    """TFLite's STRING tensor buffer: int32 count n, n + 1 int32 offsets from the start of the
    buffer (the last one is its size), then the bytes of each string (str values as UTF-8)."""
    items = [v.encode("utf-8") if isinstance(v, str) else bytes(v) for v in values]
    n = len(items)
    offsets = [4 * (n + 2)]
    for b in items:
        offsets.append(offsets[-1] + len(b))
    return np.array([n] + offsets, "<i4").tobytes() + b"".join(items)


def tensor_type(dtype) -> int:
    """TensorType id for a numpy dtype, a TensorType name or an int id."""
    if isinstance(dtype, (int, np.integer)):
        return int(dtype)
    if isinstance(dtype, str) and dtype.upper() in TENSOR_TYPES:
        return TENSOR_TYPES[dtype.upper()]
    dt = np.dtype(dtype)
    if dt.kind in ("U", "S", "O"):
        return TENSOR_TYPES["STRING"]
    try:
        return NP_TO_TENSOR_TYPE[dt]
    except KeyError:
        raise ValueError(f"unsupported tensor dtype {dtype!r}") from None


def _enum_value(enum_name, value):
    if isinstance(value, str):
        table = _ENUMS[enum_name]
        key = value if value in table else value.upper()
        if key not in table:
            raise ValueError(f"{value!r} is not a {enum_name} "
                             f"(one of {sorted(table)})")
        return table[key]
    if enum_name == "TensorType" and not isinstance(value, (int, np.integer,
                                                            bool)):
        return tensor_type(value)
    return int(value)


def _op_code(op):
    """Returns (builtin_code, custom_code or None, name)."""
    if isinstance(op, (tuple, list)):
        if len(op) != 2 or str(op[0]).upper() != "CUSTOM":
            raise ValueError(f"bad op spec {op!r}; use ('CUSTOM', name)")
        return BUILTIN_CODES["CUSTOM"], str(op[1]), "CUSTOM"
    if isinstance(op, (int, np.integer)):
        return int(op), None, BUILTIN_NAMES.get(int(op), str(op))
    name = str(op).upper()
    if name not in BUILTIN_CODES:
        raise ValueError(f"unknown builtin operator {op!r}")
    return BUILTIN_CODES[name], None, name


# ---------------------------------------------------------------------------
# Low-level flatbuffer helpers
# ---------------------------------------------------------------------------

def _vec_numpy(b, arr, dtype):
    arr = np.ascontiguousarray(np.asarray(arr, dtype=dtype).reshape(-1))
    return b.CreateNumpyVector(arr)


def _vec_bytes(b, data: bytes, alignment=16):
    n = len(data)
    b.StartVector(1, n, alignment)
    b.head = b.head - n
    b.Bytes[b.head:b.head + n] = data
    return b.EndVector()


def _vec_offsets(b, offsets):
    b.StartVector(4, len(offsets), 4)
    for off in reversed(offsets):
        b.PrependUOffsetTRelative(off)
    return b.EndVector()


def _write_options_table(b, table_name, values):
    uid, fields = (OPTIONS_TABLES[table_name] if table_name in OPTIONS_TABLES
                   else OPTIONS2_TABLES[table_name])
    values = dict(values or {})
    known = {f[0] for f in fields if f is not None}
    unknown = set(values) - known
    if unknown:
        raise KeyError(f"{table_name} has no field(s) {sorted(unknown)}; "
                       f"fields: {sorted(known)}")
    # Vectors / strings must be created before the table is started.
    pre = {}
    for f in fields:
        if f is None or f[0] not in values or values[f[0]] is None:
            continue
        name, kind, _ = f
        if kind == "vi32":
            pre[name] = _vec_numpy(b, values[name], np.int32)
        elif kind == "vf32":
            pre[name] = _vec_numpy(b, values[name], np.float32)
        elif kind == "str":
            pre[name] = b.CreateString(values[name])
    b.StartObject(len(fields))
    for slot, f in enumerate(fields):
        if f is None:
            continue
        name, kind, default = f
        if name not in values or values[name] is None:
            continue
        v = values[name]
        if name in pre:
            b.PrependUOffsetTRelativeSlot(slot, pre[name], 0)
        elif kind == "i32":
            b.PrependInt32Slot(slot, int(v), int(default))
        elif kind.startswith("enum32:"):  # an enum stored as int32 (names or ints)
            b.PrependInt32Slot(slot, _enum_value(kind[7:], v), int(default))
        elif kind == "u32":
            b.PrependUint32Slot(slot, int(v), int(default))
        elif kind == "i64":
            b.PrependInt64Slot(slot, int(v), int(default))
        elif kind == "f32":
            b.PrependFloat32Slot(slot, float(v), float(default))
        elif kind == "bool":
            b.PrependBoolSlot(slot, bool(v), bool(default))
        elif kind in ("i8",):
            b.PrependInt8Slot(slot, int(v), int(default))
        elif kind in ("u8",):
            b.PrependUint8Slot(slot, int(v), int(default))
        else:  # enum stored as byte
            b.PrependInt8Slot(slot, _enum_value(kind, v), int(default))
    return uid, b.EndObject()


# ---------------------------------------------------------------------------
# Model builder
# ---------------------------------------------------------------------------

class _Tensor:
    __slots__ = ("shape", "type", "name", "buffer", "quant", "shape_signature",
                 "is_variable", "sparsity")


class _Op:
    __slots__ = ("opcode_index", "inputs", "outputs", "options", "options2",
                 "custom_options", "intermediates")


class SubgraphBuilder:
    """One subgraph of a model: its tensors, inputs, outputs and ops.

    Buffers, operator codes, signatures and metadata belong to the owning
    ``ModelBuilder`` and are shared by all its subgraphs.  Get one with
    ``ModelBuilder.add_subgraph()`` (``ModelBuilder.subgraph(0)`` is the
    primary subgraph that ``ModelBuilder``'s own methods write to).
    """

    def __init__(self, model, index, name):
        self._model = model
        self.index = index
        self.name = name
        self._tensors = []
        self._inputs = []
        self._outputs = []
        self._ops = []

    # -- tensors ---------------------------------------------------------
    def add_tensor(self, shape, dtype=np.float32, name=None, data=None,
                   quant=None, shape_signature=None, is_variable=False,
                   sparsity=None) -> int:
        t = _Tensor()
        t.shape = [int(d) for d in shape]
        t.type = tensor_type(dtype)
        idx = len(self._tensors)
        t.name = name if name is not None else f"t{idx}"
        t.buffer = 0
        if data is not None:
            if isinstance(data, (bytes, bytearray, memoryview)):
                raw = bytes(data)
            elif t.type == TENSOR_TYPES["STRING"]:  # values: TFLite's string buffer layout
                arr = np.asarray(data, dtype=object)
                if arr.size != int(np.prod(t.shape)):
                    raise ValueError(f"{arr.size} strings for a tensor of shape {t.shape}")
                raw = string_buffer(arr.reshape(-1))
            elif t.type in PACKED_BITS:  # values in an ndarray: packed as TFLite packs them
                arr = np.asarray(data)
                if int(np.prod(arr.shape)) != int(np.prod(t.shape)):
                    raise ValueError(f"{arr.size} values for a packed tensor of shape {t.shape}")
                raw = pack_bits(arr, PACKED_BITS[t.type])
            else:
                arr = np.asarray(data)
                np_t = TENSOR_TYPE_TO_NP.get(t.type)
                if np_t is not None and arr.dtype != np_t:
                    arr = arr.astype(np_t)
                raw = np.ascontiguousarray(arr).tobytes()
            t.buffer = len(self._model._buffers)
            self._model._buffers.append(raw)
        t.quant = quant
        t.shape_signature = (None if shape_signature is None
                             else [int(d) for d in shape_signature])
        t.is_variable = bool(is_variable)
        t.sparsity = sparsity
        self._tensors.append(t)
        return idx

    def add_input(self, shape, dtype=np.float32, name=None, **kw) -> int:
        idx = self.add_tensor(shape, dtype, name=name, **kw)
        self._inputs.append(idx)
        return idx

    def add_const(self, data, name=None, quant=None, **kw) -> int:
        if isinstance(data, (bytes, bytearray)):
            raise TypeError("add_const needs an ndarray; use add_tensor(data="
                            "bytes) for raw buffers")
        arr = np.asarray(data)
        if arr.dtype == np.float64 and "dtype" not in kw:
            arr = arr.astype(np.float32)
        dtype = kw.pop("dtype", arr.dtype)
        shape = kw.pop("shape", arr.shape)
        return self.add_tensor(shape, dtype, name=name, data=arr, quant=quant,
                               **kw)

    def mark_output(self, tensor_index):
        self._outputs.append(int(tensor_index))

    def mark_input(self, tensor_index):
        self._inputs.append(int(tensor_index))

    @property
    def num_tensors(self):
        return len(self._tensors)

    def tensor_shape(self, index):
        return list(self._tensors[index].shape)

    # -- ops -------------------------------------------------------------
    def add_op(self, op, inputs, outputs, options=None, version=1,
               custom_options: bytes = None, intermediates=None) -> int:
        o = self._model._make_op(op, inputs, outputs, options, version,
                                 custom_options, intermediates)
        self._ops.append(o)
        return len(self._ops) - 1


class ModelBuilder:
    """Accumulates a model: subgraphs (the primary one is written through
    this object's own methods), buffers, signatures, metadata.

    Multi-subgraph models (control flow: WHILE, IF, CALL_ONCE)::

        mb = ModelBuilder()
        body = mb.add_subgraph("body")      # SubgraphBuilder, index 1
        x = body.add_input([1]); ...; body.add_op("ADD", ...)
        mb.add_op("WHILE", [...], [...],
                  options=dict(cond_subgraph_index=cond.index,
                               body_subgraph_index=body.index))
    """

    def __init__(self, description="tflite_gpu test model"):
        self.description = description
        self._opcodes = []          # (builtin_code, custom_code, version)
        self._opcode_index = {}
        self._buffers = [None]      # buffer 0: empty sentinel
        self._metadata = []         # (name, buffer index)
        self._signatures = []
        self._subgraphs = [SubgraphBuilder(self, 0, "main")]

    # -- subgraphs -------------------------------------------------------
    def add_subgraph(self, name=None) -> SubgraphBuilder:
        """Appends a subgraph (index = number of subgraphs so far)."""
        idx = len(self._subgraphs)
        sg = SubgraphBuilder(self, idx, name if name is not None
                             else f"subgraph{idx}")
        self._subgraphs.append(sg)
        return sg

    def subgraph(self, index) -> SubgraphBuilder:
        return self._subgraphs[index]

    @property
    def num_subgraphs(self):
        return len(self._subgraphs)

    # The primary subgraph's state, as before multi-subgraph support.
    @property
    def subgraph_name(self):
        return self._subgraphs[0].name

    @subgraph_name.setter
    def subgraph_name(self, v):
        self._subgraphs[0].name = v

    @property
    def _tensors(self):
        return self._subgraphs[0]._tensors

    @property
    def _inputs(self):
        return self._subgraphs[0]._inputs

    @property
    def _outputs(self):
        return self._subgraphs[0]._outputs

    @property
    def _ops(self):
        return self._subgraphs[0]._ops

    # -- tensors (primary subgraph) ----------------------------------------
    def add_tensor(self, *a, **kw) -> int:
        return self._subgraphs[0].add_tensor(*a, **kw)

    def add_input(self, *a, **kw) -> int:
        return self._subgraphs[0].add_input(*a, **kw)

    def add_const(self, *a, **kw) -> int:
        return self._subgraphs[0].add_const(*a, **kw)

    def mark_output(self, tensor_index):
        self._subgraphs[0].mark_output(tensor_index)

    def mark_input(self, tensor_index):
        self._subgraphs[0].mark_input(tensor_index)

    @property
    def num_tensors(self):
        return self._subgraphs[0].num_tensors

    def tensor_shape(self, index):
        return self._subgraphs[0].tensor_shape(index)

    # -- ops -------------------------------------------------------------
    def _get_opcode(self, code, custom, version):
        key = (code, custom, int(version))
        if key not in self._opcode_index:
            self._opcode_index[key] = len(self._opcodes)
            self._opcodes.append(key)
        return self._opcode_index[key]

    def add_op(self, op, inputs, outputs, options=None, version=1,
               custom_options: bytes = None, intermediates=None) -> int:
        return self._subgraphs[0].add_op(op, inputs, outputs, options,
                                         version, custom_options,
                                         intermediates)

    def _make_op(self, op, inputs, outputs, options, version, custom_options,
                 intermediates):
        code, custom, name = _op_code(op)
        o = _Op()
        o.opcode_index = self._get_opcode(code, custom, version)
        o.inputs = [int(i) for i in inputs]
        o.outputs = [int(i) for i in outputs]
        o.intermediates = (None if intermediates is None
                           else [int(i) for i in intermediates])
        o.options = None
        o.options2 = None
        if options is not None and ((isinstance(options, tuple) and len(options) == 2
                                     and options[0] in OPTIONS2_TABLES)
                                    or (not isinstance(options, tuple) and name in OP_OPTIONS2)):
            # builtin_options_2 (the BuiltinOptions2 union: DILATE, REDUCE_WINDOW, ...)
            table, values = options if isinstance(options, tuple) else (OP_OPTIONS2[name], options)
            known = {f[0] for f in OPTIONS2_TABLES[table][1]}
            bad = set(values or {}) - known
            if bad:
                raise KeyError(f"{table} has no field(s) {sorted(bad)}; fields: {sorted(known)}")
            o.options2 = (table, dict(values or {}))
            options = None
        if options is not None:
            if (isinstance(options, tuple) and len(options) == 2
                    and isinstance(options[0], str)):
                table, values = options
            else:
                table, values = OP_OPTIONS.get(name), options
                if table is None:
                    if values:
                        raise ValueError(f"op {name} has no builtin options "
                                         "table known to this builder")
            if table is not None:
                if table not in OPTIONS_TABLES:
                    raise ValueError(f"unknown options table {table}")
                # validate eagerly so errors point at the add_op call
                _, fields = OPTIONS_TABLES[table]
                known = {f[0] for f in fields if f is not None}
                bad = set(values or {}) - known
                if bad:
                    raise KeyError(f"{table} has no field(s) {sorted(bad)}; "
                                   f"fields: {sorted(known)}")
                o.options = (table, dict(values or {}))
        o.custom_options = (None if custom_options is None
                            else bytes(custom_options))
        return o

    # -- signatures / metadata ------------------------------------------
    def add_signature(self, key, inputs, outputs, subgraph_index=0):
        self._signatures.append((str(key), dict(inputs), dict(outputs),
                                 int(subgraph_index)))

    def add_metadata(self, name, data: bytes):
        idx = len(self._buffers)
        self._buffers.append(bytes(data))
        self._metadata.append((str(name), idx))

    # -- serialization ----------------------------------------------------
    def _build_quant(self, b, q):
        offs = {}
        for key, dt in (("min", np.float32), ("max", np.float32),
                        ("scale", np.float32), ("zero_point", np.int64)):
            v = q.get(key)
            if v is not None:
                offs[key] = _vec_numpy(b, np.atleast_1d(v), dt)
        b.StartObject(7)
        for key, off in offs.items():
            b.PrependUOffsetTRelativeSlot(_QUANT[key], off, 0)
        b.PrependInt32Slot(_QUANT["quantized_dimension"],
                           int(q.get("quantized_dimension", 0) or 0), 0)
        return b.EndObject()

    def _build_index_vector(self, b, arr):
        arr = np.asarray(arr)
        if arr.dtype not in _SPARSE_INDEX_TYPES:
            arr = arr.astype(np.int32)
        utype = _SPARSE_INDEX_TYPES[arr.dtype]
        vec = _vec_numpy(b, arr, arr.dtype)
        b.StartObject(1)
        b.PrependUOffsetTRelativeSlot(0, vec, 0)
        return utype, b.EndObject()

    def _build_sparsity(self, b, sp):
        dims = []
        for dm in sp.get("dim_metadata", []):
            fmt = _enum_value("DimensionType", dm.get("format", "DENSE"))
            seg = idx = None
            if dm.get("array_segments") is not None:
                seg = self._build_index_vector(b, dm["array_segments"])
            if dm.get("array_indices") is not None:
                idx = self._build_index_vector(b, dm["array_indices"])
            b.StartObject(6)
            b.PrependInt8Slot(_DIMMETA["format"], fmt, 0)
            b.PrependInt32Slot(_DIMMETA["dense_size"],
                               int(dm.get("dense_size", 0) or 0), 0)
            if seg is not None:
                b.PrependUint8Slot(_DIMMETA["array_segments_type"], seg[0], 0)
                b.PrependUOffsetTRelativeSlot(_DIMMETA["array_segments"],
                                              seg[1], 0)
            if idx is not None:
                b.PrependUint8Slot(_DIMMETA["array_indices_type"], idx[0], 0)
                b.PrependUOffsetTRelativeSlot(_DIMMETA["array_indices"],
                                              idx[1], 0)
            dims.append(b.EndObject())
        trav = _vec_numpy(b, sp.get("traversal_order", []), np.int32)
        bmap = (None if sp.get("block_map") is None
                else _vec_numpy(b, sp["block_map"], np.int32))
        dvec = _vec_offsets(b, dims)
        b.StartObject(3)
        b.PrependUOffsetTRelativeSlot(_SPARSITY["traversal_order"], trav, 0)
        if bmap is not None:
            b.PrependUOffsetTRelativeSlot(_SPARSITY["block_map"], bmap, 0)
        b.PrependUOffsetTRelativeSlot(_SPARSITY["dim_metadata"], dvec, 0)
        return b.EndObject()

    def _build_tensor(self, b, t):
        name = b.CreateString(t.name)
        shape = _vec_numpy(b, t.shape, np.int32)
        sig = (None if t.shape_signature is None
               else _vec_numpy(b, t.shape_signature, np.int32))
        quant = None if not t.quant else self._build_quant(b, t.quant)
        sp = None if not t.sparsity else self._build_sparsity(b, t.sparsity)
        b.StartObject(8)
        b.PrependUOffsetTRelativeSlot(_TENSOR["shape"], shape, 0)
        b.PrependInt8Slot(_TENSOR["type"], t.type, 0)
        b.PrependUint32Slot(_TENSOR["buffer"], t.buffer, 0)
        b.PrependUOffsetTRelativeSlot(_TENSOR["name"], name, 0)
        if quant is not None:
            b.PrependUOffsetTRelativeSlot(_TENSOR["quantization"], quant, 0)
        b.PrependBoolSlot(_TENSOR["is_variable"], t.is_variable, False)
        if sp is not None:
            b.PrependUOffsetTRelativeSlot(_TENSOR["sparsity"], sp, 0)
        if sig is not None:
            b.PrependUOffsetTRelativeSlot(_TENSOR["shape_signature"], sig, 0)
        return b.EndObject()

    def _build_operator(self, b, o):
        ins = _vec_numpy(b, o.inputs, np.int32)
        outs = _vec_numpy(b, o.outputs, np.int32)
        inter = (None if o.intermediates is None
                 else _vec_numpy(b, o.intermediates, np.int32))
        opt = None
        if o.options is not None:
            opt = _write_options_table(b, *o.options)
        opt2 = None
        if o.options2 is not None:
            opt2 = _write_options_table(b, *o.options2)
        cust = None
        if o.custom_options is not None:
            cust = _vec_bytes(b, o.custom_options, 1)
        b.StartObject(13)
        b.PrependUint32Slot(_OPERATOR["opcode_index"], o.opcode_index, 0)
        b.PrependUOffsetTRelativeSlot(_OPERATOR["inputs"], ins, 0)
        b.PrependUOffsetTRelativeSlot(_OPERATOR["outputs"], outs, 0)
        if opt is not None:
            b.PrependUint8Slot(_OPERATOR["builtin_options_type"], opt[0], 0)
            b.PrependUOffsetTRelativeSlot(_OPERATOR["builtin_options"],
                                          opt[1], 0)
        if cust is not None:
            b.PrependUOffsetTRelativeSlot(_OPERATOR["custom_options"], cust, 0)
        if inter is not None:
            b.PrependUOffsetTRelativeSlot(_OPERATOR["intermediates"], inter, 0)
        if opt2 is not None:
            b.PrependUint8Slot(_OPERATOR["builtin_options_2_type"], opt2[0], 0)
            b.PrependUOffsetTRelativeSlot(_OPERATOR["builtin_options_2"], opt2[1], 0)
        return b.EndObject()

    def _build_opcode(self, b, key):
        code, custom, version = key
        cc = None if custom is None else b.CreateString(custom)
        b.StartObject(4)
        b.PrependInt8Slot(_OPCODE["deprecated_builtin_code"], min(code, 127),
                          0)
        if cc is not None:
            b.PrependUOffsetTRelativeSlot(_OPCODE["custom_code"], cc, 0)
        b.PrependInt32Slot(_OPCODE["version"], version, 1)
        b.PrependInt32Slot(_OPCODE["builtin_code"], code, 0)
        return b.EndObject()

    def _build_tensormaps(self, b, mapping):
        offs = []
        for name, idx in mapping.items():
            s = b.CreateString(str(name))
            b.StartObject(2)
            b.PrependUOffsetTRelativeSlot(_TENSORMAP["name"], s, 0)
            b.PrependUint32Slot(_TENSORMAP["tensor_index"], int(idx), 0)
            offs.append(b.EndObject())
        return _vec_offsets(b, offs)

    def _build_signature(self, b, sig):
        key, ins, outs, sg = sig
        iv = self._build_tensormaps(b, ins)
        ov = self._build_tensormaps(b, outs)
        k = b.CreateString(key)
        b.StartObject(5)
        b.PrependUOffsetTRelativeSlot(_SIGDEF["inputs"], iv, 0)
        b.PrependUOffsetTRelativeSlot(_SIGDEF["outputs"], ov, 0)
        b.PrependUOffsetTRelativeSlot(_SIGDEF["signature_key"], k, 0)
        b.PrependUint32Slot(_SIGDEF["subgraph_index"], sg, 0)
        return b.EndObject()

    def _build_buffer(self, b, data=None, offset=None, size=None):
        dv = None
        if data:
            dv = _vec_bytes(b, data, 16)
        b.StartObject(3)
        if dv is not None:
            b.PrependUOffsetTRelativeSlot(_BUFFER["data"], dv, 0)
        if offset is not None:
            b.PrependUint64Slot(_BUFFER["offset"], int(offset), 0)
            b.PrependUint64Slot(_BUFFER["size"], int(size), 0)
        return b.EndObject()

    def _serialize(self, large_buffers, buffer_locations):
        total = sum(len(d) for d in self._buffers[1:] if d)
        b = flatbuffers.Builder(1024 + (0 if large_buffers else total)
                                + 256 * sum(len(sg._tensors) + len(sg._ops)
                                            for sg in self._subgraphs))
        # Buffers first (largest payloads).
        buf_offs = []
        for i, data in enumerate(self._buffers):
            if large_buffers and data:
                off, size = buffer_locations.get(i, (2, len(data)))
                buf_offs.append(self._build_buffer(b, None, off, size))
            else:
                buf_offs.append(self._build_buffer(b, data))
        buffers_vec = _vec_offsets(b, buf_offs)

        sg_offs = []
        for sg in self._subgraphs:
            tensors_vec = _vec_offsets(b, [self._build_tensor(b, t)
                                           for t in sg._tensors])
            ops_vec = _vec_offsets(b, [self._build_operator(b, o)
                                       for o in sg._ops])
            inputs_vec = _vec_numpy(b, sg._inputs, np.int32)
            outputs_vec = _vec_numpy(b, sg._outputs, np.int32)
            sg_name = b.CreateString(sg.name)
            b.StartObject(5)
            b.PrependUOffsetTRelativeSlot(_SUBGRAPH["tensors"], tensors_vec, 0)
            b.PrependUOffsetTRelativeSlot(_SUBGRAPH["inputs"], inputs_vec, 0)
            b.PrependUOffsetTRelativeSlot(_SUBGRAPH["outputs"], outputs_vec,
                                          0)
            b.PrependUOffsetTRelativeSlot(_SUBGRAPH["operators"], ops_vec, 0)
            b.PrependUOffsetTRelativeSlot(_SUBGRAPH["name"], sg_name, 0)
            sg_offs.append(b.EndObject())
        subgraphs_vec = _vec_offsets(b, sg_offs)

        opcodes_vec = _vec_offsets(b, [self._build_opcode(b, k)
                                       for k in self._opcodes])
        desc = b.CreateString(self.description)

        meta_vec = None
        if self._metadata:
            moffs = []
            for name, bidx in self._metadata:
                s = b.CreateString(name)
                b.StartObject(2)
                b.PrependUOffsetTRelativeSlot(_METADATA["name"], s, 0)
                b.PrependUint32Slot(_METADATA["buffer"], bidx, 0)
                moffs.append(b.EndObject())
            meta_vec = _vec_offsets(b, moffs)
        sig_vec = None
        if self._signatures:
            sig_vec = _vec_offsets(b, [self._build_signature(b, s)
                                       for s in self._signatures])

        b.StartObject(8)
        b.PrependUint32Slot(_MODEL["version"], _SCHEMA_VERSION, 0)
        b.PrependUOffsetTRelativeSlot(_MODEL["operator_codes"], opcodes_vec, 0)
        b.PrependUOffsetTRelativeSlot(_MODEL["subgraphs"], subgraphs_vec, 0)
        b.PrependUOffsetTRelativeSlot(_MODEL["description"], desc, 0)
        b.PrependUOffsetTRelativeSlot(_MODEL["buffers"], buffers_vec, 0)
        if meta_vec is not None:
            b.PrependUOffsetTRelativeSlot(_MODEL["metadata"], meta_vec, 0)
        if sig_vec is not None:
            b.PrependUOffsetTRelativeSlot(_MODEL["signature_defs"], sig_vec, 0)
        model = b.EndObject()
        b.Finish(model, file_identifier=b"TFL3")
        return bytes(b.Output())

    def build(self, large_buffers=False) -> bytes:
        if not large_buffers:
            return self._serialize(False, None)
        # Two passes: the flatbuffer's size does not depend on the offset
        # values (uint64 slots are always written as long as they are
        # non-zero), so serialize once with placeholders, then lay out the
        # data after it and serialize again with the real offsets.
        placeholder = {i: (2, len(d)) for i, d in enumerate(self._buffers)
                       if d}
        head = self._serialize(True, placeholder)
        align = 64
        pos = (len(head) + align - 1) // align * align
        locations = {}
        for i, d in enumerate(self._buffers):
            if d:
                locations[i] = (pos, len(d))
                pos = (pos + len(d) + align - 1) // align * align
        head = self._serialize(True, locations)
        out = bytearray(pos)
        out[:len(head)] = head
        for i, (off, size) in locations.items():
            out[off:off + size] = self._buffers[i]
        return bytes(out)


# ---------------------------------------------------------------------------
# Convenience
# ---------------------------------------------------------------------------

def _spec(spec):
    """``shape`` | ``(shape, dtype)`` | ``(shape, dtype, quant)`` -> (shape, dtype, quant)."""
    if isinstance(spec, tuple) and len(spec) == 3 and not isinstance(
            spec[1], (int, np.integer)):
        return list(spec[0]), spec[1], spec[2]
    if isinstance(spec, tuple) and len(spec) == 2 and not isinstance(
            spec[1], (int, np.integer)):
        return list(spec[0]), spec[1], None
    return list(spec), np.float32, None


def _const(c):
    """``ndarray`` | ``(ndarray, quant)`` -> (ndarray, quant)."""
    if isinstance(c, tuple) and len(c) == 2 and (c[1] is None
                                                 or isinstance(c[1], dict)):
        return c[0], c[1]
    return c, None


def single_op_model(op, input_specs, output_specs, options=None, version=1,
                    consts=None, custom_options=None) -> bytes:
    """Builds a model made of a single op.

    ``input_specs`` / ``output_specs``: lists of ``(shape, dtype)`` (or bare
    shapes for float32, or ``(shape, dtype, quant)`` with ``quant`` a dict as
    ``add_tensor`` takes: ``dict(scale=[..], zero_point=[..],
    quantized_dimension=0)``); they become the graph's inputs ``in0..`` and
    outputs ``out0..``.  ``consts``: ndarrays (or ``(ndarray, quant)``)
    appended to the op's inputs as constant tensors (``None`` entries append
    ``-1``).
    """
    mb = ModelBuilder()
    ins = []
    for i, s in enumerate(input_specs):
        shape, dt, q = _spec(s)
        ins.append(mb.add_input(shape, dt, name=f"in{i}", quant=q))
    for j, c in enumerate(consts or []):
        if c is None:
            ins.append(-1)
            continue
        arr, q = _const(c)
        ins.append(mb.add_const(arr, name=f"const{j}", quant=q))
    outs = []
    for i, s in enumerate(output_specs):
        shape, dt, q = _spec(s)
        t = mb.add_tensor(shape, dt, name=f"out{i}", quant=q)
        mb.mark_output(t)
        outs.append(t)
    mb.add_op(op, ins, outs, options=options, version=version,
              custom_options=custom_options)
    return mb.build()


def flex_options(mapping) -> bytes:
    """Custom options: a FlexBuffer map of scalars, strings and typed vectors
    (see the module docstring)."""
    from flatbuffers import flexbuffers
    fbb = flexbuffers.Builder()
    with fbb.Map():
        for key in sorted(mapping):
            v = mapping[key]
            if v is None:
                fbb.Key(key)
                fbb.Null()
            elif isinstance(v, bool):
                fbb.Bool(key, v)
            elif isinstance(v, (int, np.integer)):
                fbb.Int(key, int(v))
            elif isinstance(v, (float, np.floating)):
                fbb.Float(key, float(v))
            elif isinstance(v, str):
                fbb.String(key, v)
            elif isinstance(v, (list, tuple, np.ndarray)):
                vals = list(v)
                if all(isinstance(e, (int, np.integer)) and not isinstance(e, bool) for e in vals):
                    fbb.TypedVectorFromElements(key, [int(e) for e in vals], flexbuffers.Type.INT)
                else:
                    fbb.TypedVectorFromElements(key, [float(e) for e in vals], flexbuffers.Type.FLOAT)
            else:
                raise TypeError(f"flex_options: unsupported value for {key!r}: {type(v).__name__}")
    return bytes(fbb.Finish())
