"""Post-training quantization of the zoo's float test models, written the way the TFLite
converter lays quantized models out.

It works on the :class:`~tflite_gpu.testing.builder.ModelBuilder` a zoo function filled in
(:func:`tflite_gpu.testing.zoo.builder_of`), so op options are copied exactly; the float model
is run by LiteRT (builtin kernels, ``experimental_preserve_all_tensors=True``) on a few seeded
standard-normal inputs to calibrate every activation's range.

Modes (``quantize_model(mb, mode)`` -> ``.tflite`` bytes):

* ``"int8"``: full-integer int8 with float I/O -- QUANTIZE after each float input, DEQUANTIZE
  before each float output (the converter's default for ``inference_input_type=float32``).
* ``"uint8io"``: the same int8 graph with uint8 I/O (legacy-style): uint8 input -> QUANTIZE
  (requantize to int8, zero point - 128) ... QUANTIZE (to uint8) -> uint8 output.
* ``"dynamic"``: dynamic-range ("hybrid"): float activations, the constant weights of
  CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED stored int8 (symmetric; per output channel for
  the convolutions, per tensor for FULLY_CONNECTED); biases stay float.
* ``"int16x8"``: int16 activations (symmetric, zero point 0) with int8 weights and int64 biases.

Rules (TFLite's quantization spec):

* activations int8: asymmetric per tensor over the calibrated [min, max] widened to hold 0,
  scale = (max - min) / 255, zero point = round(-128 - min / scale); int16: scale = max|x| / 32767;
* CONV_2D / DEPTHWISE_CONV_2D weights: int8 symmetric per output channel (axis 0 of OHWI, axis 3
  of 1HWC), values in [-127, 127]; FULLY_CONNECTED weights: int8 symmetric per tensor;
* biases: int32 (int64 for int16x8) with scale = input_scale * weight_scale[c], zero point 0;
* fixed output grids: SOFTMAX and LOGISTIC 1/256 zp -128 (int8), TANH 1/128 zp 0 (int8);
  all three 1/32768 zp 0 for int16;
* ops that only move or select values (RESHAPE, SQUEEZE, AVERAGE_POOL_2D, MAX_POOL_2D, PAD,
  RESIZE_*, TRANSPOSE, ...) keep their input's scale and zero point on the output;
* other float constant operands (e.g. ADD's second input, PRELU alpha) are quantized per tensor
  like activations.
"""
from __future__ import annotations

from typing import Dict, Optional, Sequence, Tuple

import numpy as np

from . import quant as Q
from .builder import BUILTIN_NAMES, ModelBuilder

__all__ = ["MODES", "calibrate", "quantize_model", "activation_params", "dequantized_weights_model"]

MODES = ("int8", "uint8io", "dynamic", "int16x8")

# Output grids TFLite fixes: op -> {activation dtype: (scale, zero_point)}.
FIXED_OUTPUT = {
    "SOFTMAX": {"int8": (1.0 / 256, -128), "int16": (1.0 / 32768, 0)},
    "LOGISTIC": {"int8": (1.0 / 256, -128), "int16": (1.0 / 32768, 0)},
    "TANH": {"int8": (1.0 / 128, 0), "int16": (1.0 / 32768, 0)},
}
# Ops whose output keeps the input's scale and zero point.
SAME_AS_INPUT = {"RESHAPE", "SQUEEZE", "EXPAND_DIMS", "AVERAGE_POOL_2D", "MAX_POOL_2D", "PAD",
                 "RESIZE_NEAREST_NEIGHBOR", "RESIZE_BILINEAR", "TRANSPOSE", "SPACE_TO_DEPTH",
                 "DEPTH_TO_SPACE", "GATHER", "SLICE", "STRIDED_SLICE", "SPLIT", "SPLIT_V",
                 "UNPACK", "PACK", "MIRROR_PAD", "BATCH_TO_SPACE_ND", "SPACE_TO_BATCH_ND"}
# Which input is the weight (per-channel axis) of the weight-bearing ops.
WEIGHT_OPS = {"CONV_2D": (1, 2, 0), "DEPTHWISE_CONV_2D": (1, 2, 3), "FULLY_CONNECTED": (1, 2, None)}
# The version the converter writes for each op and mode (unknown ops keep their float version).
_VERSIONS = {
    "int8": {"CONV_2D": 3, "DEPTHWISE_CONV_2D": 3, "FULLY_CONNECTED": 4, "ADD": 2, "SUB": 2,
             "MUL": 2, "AVERAGE_POOL_2D": 2, "MAX_POOL_2D": 2, "SOFTMAX": 2, "LOGISTIC": 2,
             "TANH": 2, "CONCATENATION": 2, "PAD": 2, "MEAN": 2, "RESIZE_BILINEAR": 2,
             "QUANTIZE": 2, "DEQUANTIZE": 2, "HARD_SWISH": 1, "RELU": 2, "RELU6": 2},
    "int16": {"CONV_2D": 4, "DEPTHWISE_CONV_2D": 5, "FULLY_CONNECTED": 7, "ADD": 3, "SUB": 3,
              "MUL": 4, "AVERAGE_POOL_2D": 3, "MAX_POOL_2D": 3, "SOFTMAX": 3, "LOGISTIC": 3,
              "TANH": 3, "CONCATENATION": 3, "PAD": 4, "MEAN": 3, "QUANTIZE": 3,
              "DEQUANTIZE": 4, "RELU": 3, "RELU6": 3},
    "dynamic": {"CONV_2D": 5, "DEPTHWISE_CONV_2D": 6, "FULLY_CONNECTED": 3},
}


def _op_name(mb: ModelBuilder, op) -> str:
    code, custom, _ = mb._opcodes[op.opcode_index]
    return custom if custom else BUILTIN_NAMES[code]


def _op_version(mb: ModelBuilder, op) -> int:
    return mb._opcodes[op.opcode_index][2]


def _is_float_activation(mb: ModelBuilder, t: int) -> bool:
    tt = mb._tensors[t]
    return tt.buffer == 0 and tt.type == 0  # FLOAT32, not constant


def _const_array(mb: ModelBuilder, t: int) -> np.ndarray:
    from .builder import TENSOR_TYPE_TO_NP
    tt = mb._tensors[t]
    return np.frombuffer(mb._buffers[tt.buffer], TENSOR_TYPE_TO_NP[tt.type]).reshape(tt.shape)


def calibrate(model: bytes, num_samples: int = 4, seed: int = 1234,
              inputs: Optional[Sequence[Sequence[np.ndarray]]] = None) -> Dict[int, Tuple[float, float]]:
    """Runs the float model with LiteRT's builtin kernels over seeded standard-normal inputs
    (or `inputs`) and returns {tensor index: (min, max)} for every float tensor it computes."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    it = Interpreter(model_content=model, experimental_preserve_all_tensors=True,
                     experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    it.allocate_tensors()
    det = it.get_input_details()
    if inputs is None:
        rng = np.random.default_rng(seed)
        inputs = [[rng.standard_normal(d["shape"]).astype(d["dtype"]) for d in det]
                  for _ in range(num_samples)]
    ranges: Dict[int, Tuple[float, float]] = {}
    for sample in inputs:
        for d, x in zip(det, sample):
            it.set_tensor(d["index"], x)
        it.invoke()
        for td in it.get_tensor_details():
            if td["dtype"] != np.float32:
                continue
            try:
                v = it.get_tensor(td["index"])
            except ValueError:  # tensors without data (optional, unused)
                continue
            if v.size == 0 or not np.all(np.isfinite(v)):
                continue
            lo, hi = float(v.min()), float(v.max())
            old = ranges.get(td["index"])
            ranges[td["index"]] = (lo, hi) if old is None else (min(old[0], lo), max(old[1], hi))
    return ranges


def activation_params(lo: float, hi: float, dtype: str) -> Tuple[float, int]:
    """(scale, zero_point) of a per-tensor activation over [lo, hi] (widened to hold 0):
    asymmetric for int8, symmetric for int16 (quant.params_from_range)."""
    qp = Q.params_from_range(lo, hi, np.int16 if dtype == "int16" else np.int8)
    return float(qp.scale), int(qp.zero_point)


def _symmetric_weights(w: np.ndarray, axis: Optional[int]):
    """int8 symmetric weights in [-127, 127]: (q, scales) per channel of `axis` or per tensor."""
    if axis is None:
        qp = Q.symmetric_params(float(np.abs(w).max()), np.int8)
        q = np.maximum(Q.quantize(w, qp, np.int8), -127).astype(np.int8)
        return q, qp.scales().astype(np.float64)
    q, qp = Q.quantize_per_channel_symmetric(w, axis=axis)
    return q, qp.scales().astype(np.float64)


class _Quantizer:
    def __init__(self, mb: ModelBuilder, mode: str, ranges: Dict[int, Tuple[float, float]], twin: bool = False):
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        self.src, self.mode, self.ranges = mb, mode, ranges
        self.twin = twin  # dynamic mode: write the dequantized weights as FLOAT32 instead
        self.act = "int16" if mode == "int16x8" else "int8"
        self.act_np = np.int16 if mode == "int16x8" else np.int8
        self.out = ModelBuilder(mb.description + f" [{mode}]")
        self.map: Dict[int, int] = {}
        self.params: Dict[int, Tuple[float, int]] = {}  # old activation tensor -> (scale, zp)

    def name(self, t):
        return self.src._tensors[t].name

    # -- activation parameters --------------------------------------------------------------
    def plan_activations(self):
        src = self.src
        for t in src._inputs:
            if _is_float_activation(src, t):
                self.params[t] = self._from_range(t)
        for op in src._ops:
            name = _op_name(src, op)
            if name in ("QUANTIZE", "DEQUANTIZE"):
                raise ValueError(f"the float model already has a {name} op; quantize a float model")
            for o in op.outputs:
                if not _is_float_activation(src, o):
                    continue
                if name in FIXED_OUTPUT:
                    self.params[o] = FIXED_OUTPUT[name][self.act]
                elif name in SAME_AS_INPUT and op.inputs and op.inputs[0] in self.params:
                    self.params[o] = self.params[op.inputs[0]]
                else:
                    self.params[o] = self._from_range(o)

    def _from_range(self, t):
        if t not in self.ranges:
            raise ValueError(f"no calibration range for tensor {t} ('{self.name(t)}')")
        return activation_params(*self.ranges[t], self.act)

    # -- tensors ------------------------------------------------------------------------------
    def copy_tensor(self, t):
        tt = self.src._tensors[t]
        data = self.src._buffers[tt.buffer] if tt.buffer else None
        return self.out.add_tensor(tt.shape, _np_type(tt.type), name=tt.name, data=data, quant=tt.quant,
                                   shape_signature=tt.shape_signature, is_variable=tt.is_variable,
                                   sparsity=tt.sparsity)

    def activation(self, t):
        if t not in self.map:
            tt = self.src._tensors[t]
            s, z = self.params[t]
            self.map[t] = self.out.add_tensor(tt.shape, self.act_np, name=tt.name,
                                              quant=dict(scale=[s], zero_point=[z]),
                                              shape_signature=tt.shape_signature)
        return self.map[t]

    def const_operand(self, t):
        """A float constant operand that is not a weight: quantized per tensor like an activation."""
        tt = self.src._tensors[t]
        if tt.type != 0:
            return self.copy_tensor(t)
        w = _const_array(self.src, t)
        s, z = activation_params(float(w.min()), float(w.max()), self.act)
        return self.out.add_tensor(tt.shape, self.act_np, name=tt.name, data=Q.quantize(w, Q.QParams(s, z), self.act_np),
                                   quant=dict(scale=[s], zero_point=[z]))

    def weights(self, op_name, op, in_scale):
        wi, bi, axis = WEIGHT_OPS[op_name]
        w = _const_array(self.src, op.inputs[wi])
        q, ws = _symmetric_weights(w, axis)
        wq = dict(scale=ws.tolist(), zero_point=[0] * len(ws), quantized_dimension=axis or 0)
        if self.twin:
            shape = [1] * w.ndim
            if axis is not None:
                shape[axis] = -1
            deq = (q.astype(np.float64) * ws.reshape(shape) if axis is not None else q * ws[0]).astype(np.float32)
            new_w = self.out.add_tensor(w.shape, np.float32, name=self.name(op.inputs[wi]), data=deq)
        else:
            new_w = self.out.add_tensor(w.shape, np.int8, name=self.name(op.inputs[wi]), data=q, quant=wq)
        new_b = -1
        if len(op.inputs) > bi and op.inputs[bi] >= 0:
            b = _const_array(self.src, op.inputs[bi])
            if self.mode == "dynamic":
                new_b = self.copy_tensor(op.inputs[bi])
            else:
                bs = in_scale * (ws if len(ws) == b.shape[-1] else np.full(b.shape[-1], ws[0]))
                bdt = np.int64 if self.act == "int16" else np.int32
                bq = Q.quantize(b, Q.QParams(bs.tolist(), [0] * len(bs), 0), bdt)
                new_b = self.out.add_tensor(b.shape, bdt, name=self.name(op.inputs[bi]), data=bq,
                                            quant=dict(scale=bs.tolist(), zero_point=[0] * len(bs)))
        return wi, new_w, bi, new_b

    # -- ops ----------------------------------------------------------------------------------
    def add_op(self, op, name, inputs, outputs, version):
        code, custom, _ = self.src._opcodes[op.opcode_index]
        kind = ("CUSTOM", custom) if custom else name
        options = op.options
        if options is not None:
            table, values = options
            values = dict(values)
            if self.act == "int16" and name in ("ADD", "SUB"):
                values["pot_scale_int16"] = False  # general int16 scales, as the converter writes
            options = (table, values)
        self.out.add_op(kind, inputs, outputs, options=options, version=version,
                        custom_options=op.custom_options, intermediates=op.intermediates)

    def run(self) -> bytes:
        src, out = self.src, self.out
        if self.mode == "dynamic":
            return self._run_dynamic()
        self.plan_activations()
        io_in, io_out = {}, {}
        # Graph inputs: float (or uint8) tensors, QUANTIZE into the integer graph.
        for t in src._inputs:
            if not _is_float_activation(src, t):
                io_in[t] = self.copy_tensor(t)
                self.map[t] = io_in[t]
                continue
            s, z = self.params[t]
            tt = src._tensors[t]
            if self.mode == "uint8io":
                x = out.add_tensor(tt.shape, np.uint8, name=tt.name, quant=dict(scale=[s], zero_point=[z + 128]))
            else:
                x = out.add_tensor(tt.shape, np.float32, name=tt.name)
            io_in[t] = x
            q = self.activation(t)
            out._tensors[q].name = tt.name + "_int" if self.mode != "int16x8" else tt.name + "_int16"
            out.add_op("QUANTIZE", [x], [q], version=_VERSIONS[self.act]["QUANTIZE"])
        for op in src._ops:
            name = _op_name(src, op)
            ins = []
            for i, t in enumerate(op.inputs):
                if t < 0:
                    ins.append(-1)
                elif t in self.map:
                    ins.append(self.map[t])
                elif src._tensors[t].buffer == 0:
                    if not _is_float_activation(src, t):
                        self.map[t] = self.copy_tensor(t)
                        ins.append(self.map[t])
                    else:
                        ins.append(self.activation(t))
                else:
                    ins.append(None)  # constant: filled below
            if name in WEIGHT_OPS:
                in_scale = self.params[op.inputs[0]][0]
                wi, new_w, bi, new_b = self.weights(name, op, in_scale)
                ins[wi] = new_w
                if bi < len(ins):
                    ins[bi] = new_b
            for i, t in enumerate(op.inputs):
                if ins[i] is None:
                    ins[i] = self.const_operand(t)
            outs = [self.activation(o) if _is_float_activation(src, o) else self.map.setdefault(o, self.copy_tensor(o))
                    for o in op.outputs]
            self.add_op(op, name, ins, outs, _VERSIONS[self.act].get(name, _op_version(src, op)))
        # Graph outputs: DEQUANTIZE to float (or QUANTIZE to uint8).
        for t in src._outputs:
            if t not in self.params:
                io_out[t] = self.map[t]
                out.mark_output(self.map[t])
                continue
            q = self.map[t]
            tt = src._tensors[t]
            out._tensors[q].name = tt.name + ("_int16" if self.act == "int16" else "_int8")
            s, z = self.params[t]
            if self.mode == "uint8io":
                y = out.add_tensor(tt.shape, np.uint8, name=tt.name, quant=dict(scale=[s], zero_point=[z + 128]))
                out.add_op("QUANTIZE", [q], [y], version=_VERSIONS["int8"]["QUANTIZE"])
            else:
                y = out.add_tensor(tt.shape, np.float32, name=tt.name)
                out.add_op("DEQUANTIZE", [q], [y], version=_VERSIONS[self.act]["DEQUANTIZE"])
            io_out[t] = y
            out.mark_output(y)
        for t in src._inputs:
            out._inputs.append(io_in[t])
        self._signatures(io_in, io_out)
        return out.build()

    def _run_dynamic(self) -> bytes:
        src, out = self.src, self.out
        weight_of = {}
        for op in src._ops:
            name = _op_name(src, op)
            if name in WEIGHT_OPS and src._tensors[op.inputs[WEIGHT_OPS[name][0]]].buffer:
                weight_of[id(op)] = name
        for op in src._ops:
            name = _op_name(src, op)
            ins = [-1 if t < 0 else None for t in op.inputs]
            version = _op_version(src, op)
            if id(op) in weight_of:
                wi, new_w, bi, new_b = self.weights(name, op, None)
                ins[wi] = new_w
                if bi < len(ins):
                    ins[bi] = new_b
                version = version if self.twin else _VERSIONS["dynamic"][name]
            for i, t in enumerate(op.inputs):
                if ins[i] is None:
                    ins[i] = self.map[t] if t in self.map else self.map.setdefault(t, self.copy_tensor(t))
            outs = [self.map.setdefault(o, self.copy_tensor(o)) for o in op.outputs]
            self.add_op(op, name, ins, outs, version)
        for t in src._inputs:
            out._inputs.append(self.map.setdefault(t, self.copy_tensor(t)))
        for t in src._outputs:
            out.mark_output(self.map[t])
        self._signatures({t: self.map[t] for t in src._inputs}, {t: self.map[t] for t in src._outputs})
        return out.build()

    def _signatures(self, io_in, io_out):
        for key, ins, outs, sg in self.src._signatures:
            self.out.add_signature(key, {k: io_in[v] for k, v in ins.items()},
                                   {k: io_out[v] for k, v in outs.items()}, sg)


def _np_type(type_id):
    from .builder import TENSOR_TYPE_TO_NP
    return TENSOR_TYPE_TO_NP.get(type_id, type_id)


def dequantized_weights_model(mb: ModelBuilder) -> bytes:
    """The float model that computes what the GPU delegate computes for the "dynamic" variant of
    `mb`: the same graph with each int8 weight of that variant replaced by its dequantized
    FLOAT32 value (q * scale)."""
    return _Quantizer(mb, "dynamic", {}, twin=True).run()


def quantize_model(mb: ModelBuilder, mode: str, ranges: Optional[Dict[int, Tuple[float, float]]] = None,
                   num_samples: int = 4, seed: int = 1234) -> bytes:
    """The quantized `.tflite` of the float model in `mb` (see the module docstring for modes).
    `ranges` defaults to :func:`calibrate` on the float model."""
    if ranges is None and mode != "dynamic":
        ranges = calibrate(mb.build(), num_samples=num_samples, seed=seed)
    return _Quantizer(mb, mode, ranges or {}).run()
