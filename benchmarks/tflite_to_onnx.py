"""A small .tflite -> ONNX converter for the float models of the CPU speed set (issue #14), so that
ONNX Runtime can be timed on the same graphs as tflite_gpu and LiteRT.

    python benchmarks/tflite_to_onnx.py model.tflite model.onnx
    python benchmarks/tflite_to_onnx.py --zoo OUT_DIR      # the bench_speed float set

It reads the flatbuffer itself (field ids from tflite_gpu.testing._schema_tables) and writes the
graph with onnx.helper. Activations of rank 4 are kept in NCHW inside the graph: each graph input
is transposed NHWC -> NCHW once and each output back, so ORT runs its native NCHW kernels; weights
are rearranged at conversion time. Fused activations become separate Relu / Clip / Tanh nodes
(ORT's optimizer fuses them into Conv). Only the float ops these models use are mapped; any other
op raises Unsupported naming it (callers skip such a model and print the reason).

This is a benchmark tool, not part of the package.
"""
from __future__ import annotations

import argparse
import os
import struct
import sys

import numpy as np

from tflite_gpu.testing import _schema_tables as S

OPSET = 17
IR_VERSION = 8  # the IR version of opset 17, so older ONNX Runtime builds load the files too


class Unsupported(ValueError):
    """The model uses something this converter does not map."""


# ----------------------------------------------------------------------------- flatbuffer reading

class _Table:
    __slots__ = ("buf", "pos", "vt", "vtlen")

    def __init__(self, buf, pos):
        self.buf, self.pos = buf, pos
        self.vt = pos - struct.unpack_from("<i", buf, pos)[0]
        self.vtlen = struct.unpack_from("<H", buf, self.vt)[0]

    def _off(self, field):
        o = 4 + 2 * field
        if o >= self.vtlen:
            return 0
        return struct.unpack_from("<H", self.buf, self.vt + o)[0]

    def scalar(self, field, fmt, default=0):
        o = self._off(field)
        return default if o == 0 else struct.unpack_from("<" + fmt, self.buf, self.pos + o)[0]

    def _ref(self, field):
        o = self._off(field)
        if o == 0:
            return None
        p = self.pos + o
        return p + struct.unpack_from("<I", self.buf, p)[0]

    def table(self, field):
        p = self._ref(field)
        return None if p is None else _Table(self.buf, p)

    def vector(self, field, dtype):
        p = self._ref(field)
        if p is None:
            return None
        n = struct.unpack_from("<I", self.buf, p)[0]
        return np.frombuffer(self.buf, dtype=dtype, count=n, offset=p + 4)

    def tables(self, field):
        p = self._ref(field)
        if p is None:
            return []
        n = struct.unpack_from("<I", self.buf, p)[0]
        out = []
        for i in range(n):
            e = p + 4 + 4 * i
            out.append(_Table(self.buf, e + struct.unpack_from("<I", self.buf, e)[0]))
        return out

    def string(self, field):
        p = self._ref(field)
        if p is None:
            return None
        n = struct.unpack_from("<I", self.buf, p)[0]
        return bytes(self.buf[p + 4:p + 4 + n]).decode("utf-8", "replace")


_KIND_FMT = {"i8": "b", "u8": "B", "bool": "?", "i32": "i", "u32": "I", "i64": "q", "f32": "f"}
_OPTIONS_BY_UNION = {uid: (name, fields) for name, (uid, fields) in S.OPTIONS_TABLES.items()}
_ENUM_NAMES = {k: {v: n for n, v in e.items()} for k, e in S._ENUMS.items()}


def _read_options(op, opname):
    """The builtin options of an operator as a dict (enum fields by name); the schema defaults
    where the options table (or a field) is absent, as LiteRT reads them."""
    utype = op.scalar(S._OPERATOR["builtin_options_type"], "B")
    t = op.table(S._OPERATOR["builtin_options"])
    if utype == 0 or t is None or utype not in _OPTIONS_BY_UNION:
        if opname not in S.OP_OPTIONS:
            return {}
        t, fields = None, S.OPTIONS_TABLES[S.OP_OPTIONS[opname]][1]
    else:
        fields = _OPTIONS_BY_UNION[utype][1]
    out = {}
    for fid, f in enumerate(fields):
        if f is None:
            continue
        name, kind, default = f
        if t is None:
            out[name] = _ENUM_NAMES[kind].get(default, default) if kind in _ENUM_NAMES else default
        elif kind in _KIND_FMT:
            out[name] = t.scalar(fid, _KIND_FMT[kind], default)
        elif kind == "vi32":
            v = t.vector(fid, "<i4")
            out[name] = None if v is None else [int(a) for a in v]
        elif kind in _ENUM_NAMES:
            out[name] = _ENUM_NAMES[kind].get(t.scalar(fid, "b", default), default)
    return out


class TfliteModel:
    """Subgraph 0 of a .tflite file: tensors (shape, numpy dtype, constant data, name), operators
    (op name, inputs, outputs, options, custom code/options), graph inputs and outputs."""

    def __init__(self, data: bytes):
        buf = memoryview(bytes(data))
        if len(buf) < 8 or bytes(buf[4:8]) != b"TFL3":
            raise Unsupported("not a .tflite flatbuffer (no TFL3 identifier)")
        model = _Table(buf, struct.unpack_from("<I", buf, 0)[0])
        codes = []
        for c in model.tables(S._MODEL["operator_codes"]):
            b = max(c.scalar(S._OPCODE["deprecated_builtin_code"], "b"), c.scalar(S._OPCODE["builtin_code"], "i"))
            codes.append((S.BUILTIN_NAMES.get(b, f"builtin_{b}"), c.string(S._OPCODE["custom_code"])))
        buffers = []
        for b in model.tables(S._MODEL["buffers"]):
            d = b.vector(S._BUFFER["data"], np.uint8)
            if (d is None or len(d) == 0) and b.scalar(S._BUFFER["offset"], "Q") > 1:
                off, size = b.scalar(S._BUFFER["offset"], "Q"), b.scalar(S._BUFFER["size"], "Q")
                d = np.frombuffer(buf, np.uint8, count=size, offset=off)
            buffers.append(d)
        sgs = model.tables(S._MODEL["subgraphs"])
        if len(sgs) != 1:
            raise Unsupported(f"{len(sgs)} subgraphs (control flow) are not mapped")
        sg = sgs[0]
        self.tensors = []
        for t in sg.tables(S._SUBGRAPH["tensors"]):
            shape = t.vector(S._TENSOR["shape"], "<i4")
            shape = [] if shape is None else [int(a) for a in shape]
            ttype = t.scalar(S._TENSOR["type"], "b")
            if ttype not in S.TENSOR_TYPE_TO_NP:
                raise Unsupported(f"tensor type {ttype}")
            dt = S.TENSOR_TYPE_TO_NP[ttype]
            if t.table(S._TENSOR["quantization"]) is not None and dt != np.float32:
                q = t.table(S._TENSOR["quantization"])
                if q.vector(S._QUANT["scale"], "<f4") is not None:
                    raise Unsupported("quantized tensors are not mapped (float models only)")
            if t.table(S._TENSOR["sparsity"]) is not None:
                raise Unsupported("sparse tensors are not mapped")
            b = buffers[t.scalar(S._TENSOR["buffer"], "I")] if buffers else None
            data = None
            if b is not None and len(b):
                data = np.frombuffer(bytes(b), dtype=dt).reshape(shape)
            self.tensors.append(dict(shape=shape, dtype=dt, data=data, name=t.string(S._TENSOR["name"]) or ""))
        self.inputs = [int(i) for i in sg.vector(S._SUBGRAPH["inputs"], "<i4")]
        self.outputs = [int(i) for i in sg.vector(S._SUBGRAPH["outputs"], "<i4")]
        self.ops = []
        for o in sg.tables(S._SUBGRAPH["operators"]):
            name, custom = codes[o.scalar(S._OPERATOR["opcode_index"], "I")]
            co = o.vector(S._OPERATOR["custom_options"], np.uint8)
            self.ops.append(dict(
                op=name, custom=custom,
                inputs=[int(i) for i in o.vector(S._OPERATOR["inputs"], "<i4")],
                outputs=[int(i) for i in o.vector(S._OPERATOR["outputs"], "<i4")],
                options=_read_options(o, name), custom_options=None if co is None else bytes(co)))


# ----------------------------------------------------------------------------- conversion

_TO_NCHW = [0, 3, 1, 2]
_TO_NHWC = [0, 2, 3, 1]
_ACT_CLIP = {"RELU6": (0.0, 6.0), "RELU_N1_TO_1": (-1.0, 1.0)}
_UNARY = {"LOGISTIC": "Sigmoid", "TANH": "Tanh", "RELU": "Relu", "EXP": "Exp", "HARD_SWISH": "HardSwish",
          "ABS": "Abs", "NEG": "Neg", "SQRT": "Sqrt", "FLOOR": "Floor", "CEIL": "Ceil", "ELU": "Elu"}
_BINARY = {"ADD": "Add", "SUB": "Sub", "MUL": "Mul", "DIV": "Div", "MAXIMUM": "Max", "MINIMUM": "Min"}


def _same_pads(size, k, stride, dilation):
    """TF 'SAME' padding of one spatial axis: (before, after)."""
    out = -(-size // stride)
    total = max((out - 1) * stride + (k - 1) * dilation + 1 - size, 0)
    return total // 2, total - total // 2


class _Converter:
    def __init__(self, m: TfliteModel, prelu="decomposed"):
        import onnx
        from onnx import helper, numpy_helper
        self.onnx, self.h, self.nh = onnx, helper, numpy_helper
        self.m = m
        if prelu not in ("decomposed", "native"):
            raise ValueError("prelu must be 'decomposed' or 'native'")
        self.prelu = prelu
        self.nodes, self.inits = [], []
        self.val = {}     # tflite tensor index -> (onnx name, layout 'nchw' | 'native')
        self.conv = {}    # (tensor index, layout) -> onnx name of a converted copy
        self.n = 0

    # ------------------------------------------------------------------ helpers
    def uniq(self, base):
        self.n += 1
        return f"{base}__{self.n}"

    def const(self, arr, base="c"):
        name = self.uniq(base)
        self.inits.append(self.nh.from_array(np.ascontiguousarray(arr), name))
        return name

    def node(self, op, inputs, base, **attrs):
        out = self.uniq(base)
        self.nodes.append(self.h.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def shape(self, t):
        return self.m.tensors[t]["shape"]

    def data(self, t):
        d = self.m.tensors[t]["data"]
        if d is None:
            # a weight written as float16 + DEQUANTIZE (folded in _fold_dequantize)
            d = self.folded.get(t)
        return d

    def is_const(self, t):
        return self.data(t) is not None

    def get(self, t, layout):
        """ONNX name of tflite tensor t in the requested layout ('nchw' only for rank 4)."""
        if self.is_const(t):
            key = (t, layout)
            if key not in self.conv:
                d = self.data(t).astype(np.float32) if self.data(t).dtype == np.float16 else self.data(t)
                self.conv[key] = self.const(d.transpose(_TO_NCHW) if layout == "nchw" else d, "w")
            return self.conv[key]
        name, have = self.val[t]
        if have == layout:
            return name
        key = (t, layout)
        if key not in self.conv:
            nhwc = list(self.shape(t))
            nchw = [nhwc[p] for p in _TO_NCHW]
            if [a for a in _TO_NCHW if nhwc[a] != 1] == sorted(a for a in _TO_NCHW if nhwc[a] != 1):
                # only size-1 axes move (e.g. [1, 1, 1, C]): a free Reshape, not a Transpose
                to = nchw if layout == "nchw" else nhwc
                self.conv[key] = self.node("Reshape", [name, self.const(np.asarray(to, np.int64), "s")], "rs")
            else:
                perm = _TO_NCHW if layout == "nchw" else _TO_NHWC
                self.conv[key] = self.node("Transpose", [name], "tr", perm=perm)
        return self.conv[key]

    def layout_of(self, t):
        if self.is_const(t):
            return "native"
        return self.val[t][1]

    def set(self, t, name, layout):
        self.val[t] = (name, layout)

    def act(self, x, a):
        if a in (None, "NONE"):
            return x
        if a == "RELU":
            return self.node("Relu", [x], "relu")
        if a in _ACT_CLIP:
            lo, hi = _ACT_CLIP[a]
            return self.node("Clip", [x, self.const(np.float32(lo), "lo"), self.const(np.float32(hi), "hi")], "clip")
        raise Unsupported(f"fused activation {a}" + (" (LiteRT's float kernels ignore it)" if a == "TANH" else ""))

    def bcast_const(self, t, rank4_nchw):
        """A constant operand of an elementwise op whose other operand is NCHW rank 4."""
        d = self.data(t)
        d = d.astype(np.float32) if d.dtype == np.float16 else d
        if d.ndim == 0 or d.size == 1:
            return self.const(d, "k")
        d = d.reshape((1,) * (4 - d.ndim) + d.shape)
        return self.const(d.transpose(_TO_NCHW), "k")

    # ------------------------------------------------------------------ ops
    def conv2d(self, op, depthwise):
        x, w, b = op["inputs"][:3] + [-1] * (3 - len(op["inputs"][:3]))
        o = op["options"]
        wd = self.data(w)
        if wd is None:
            raise Unsupported(f"{op['op']} with non-constant weights")
        wd = wd.astype(np.float32)
        _, ih, iw, cin = self.shape(x)
        if depthwise:
            kh, kw, cout = wd.shape[1:]
            wo = wd.reshape(kh, kw, cout).transpose(2, 0, 1)[:, None]   # [Cout, 1, KH, KW]
            group = cin
        else:
            cout, kh, kw, wcin = wd.shape
            wo = wd.transpose(0, 3, 1, 2)                               # OIHW
            group = cin // wcin
        sh, sw = o.get("stride_h", 1), o.get("stride_w", 1)
        dh, dw = o.get("dilation_h_factor", 1), o.get("dilation_w_factor", 1)
        if o.get("padding") == "SAME":
            (pt, pb), (pl, pr) = _same_pads(ih, kh, sh, dh), _same_pads(iw, kw, sw, dw)
        else:
            pt = pb = pl = pr = 0
        if ih + pt + pb < (kh - 1) * dh + 1 or iw + pl + pr < (kw - 1) * dw + 1:
            raise Unsupported(f"{op['op']} with a filter larger than its padded input (empty output)")
        ins = [self.get(x, "nchw"), self.const(wo, "w")]
        if b >= 0 and self.is_const(b):
            ins.append(self.const(self.data(b).astype(np.float32), "b"))
        y = self.node("Conv", ins, "conv", kernel_shape=[kh, kw], strides=[sh, sw], dilations=[dh, dw],
                      pads=[pt, pl, pb, pr], group=group)
        self.set(op["outputs"][0], self.act(y, o.get("fused_activation_function")), "nchw")

    def transpose_conv(self, x, w, b, stride_h, stride_w, same, out_shape, act=None):
        wd = self.data(w)
        if wd is None:
            raise Unsupported("transpose conv with non-constant weights")
        cout, kh, kw, cin = wd.shape
        _, ih, iw, _ = self.shape(x)
        _, oh, ow, _ = out_shape
        pads, opad = [], []
        for i, k, s, o in ((ih, kh, stride_h, oh), (iw, kw, stride_w, ow)):
            total = max((i - 1) * s + k - o, 0) if same else 0
            full = (i - 1) * s + k - total
            if o < full - 0 or o - full >= s:
                raise Unsupported(f"transpose conv output size {o} for input {i}, kernel {k}, stride {s}")
            pads.append((total // 2, total - total // 2))
            opad.append(o - full)
        ins = [self.get(x, "nchw"), self.const(wd.astype(np.float32).transpose(3, 0, 1, 2), "w")]  # IOHW
        if b is not None and b >= 0 and self.is_const(b):
            ins.append(self.const(self.data(b).astype(np.float32), "b"))
        attrs = dict(kernel_shape=[kh, kw], strides=[stride_h, stride_w],
                     pads=[pads[0][0], pads[1][0], pads[0][1], pads[1][1]])
        if any(opad):
            attrs["output_padding"] = opad
        y = self.node("ConvTranspose", ins, "tconv", **attrs)
        return self.act(y, act)

    def convert_op(self, op):
        kind, o, ins, outs = op["op"], op["options"], op["inputs"], op["outputs"]
        out = outs[0]
        if kind == "CONV_2D":
            return self.conv2d(op, False)
        if kind == "DEPTHWISE_CONV_2D":
            return self.conv2d(op, True)
        if kind == "TRANSPOSE_CONV":
            b = ins[3] if len(ins) > 3 else None
            y = self.transpose_conv(ins[2], ins[1], b, o["stride_h"], o["stride_w"], o["padding"] == "SAME",
                                    self.shape(out), o.get("fused_activation_function"))
            return self.set(out, y, "nchw")
        if kind == "CUSTOM" and op["custom"] == "Convolution2DTransposeBias":
            pad, sw, sh = struct.unpack_from("<iii", op["custom_options"] or b"", 0)
            y = self.transpose_conv(ins[0], ins[1], ins[2], sh, sw, pad == 1, self.shape(out))
            return self.set(out, y, "nchw")
        if kind == "CUSTOM":
            raise Unsupported(f"custom op {op['custom']}")
        if kind == "DEQUANTIZE":
            d = self.data(ins[0])
            if d is None or d.dtype != np.float16:
                raise Unsupported("DEQUANTIZE of a non-constant or quantized tensor")
            self.folded[out] = d.astype(np.float32)
            return None
        if kind in _BINARY:
            a, b = ins
            nchw = any(len(self.shape(t)) == 4 and self.layout_of(t) == "nchw" for t in (a, b))
            names = []
            for t in (a, b):
                if self.is_const(t):
                    names.append(self.bcast_const(t, nchw) if nchw else self.get(t, "native"))
                elif nchw:
                    if len(self.shape(t)) != 4:
                        raise Unsupported(f"{kind} broadcasting rank {len(self.shape(t))} with rank 4")
                    names.append(self.get(t, "nchw"))
                else:
                    names.append(self.get(t, "native"))
            y = self.node(_BINARY[kind], names, kind.lower())
            return self.set(out, self.act(y, o.get("fused_activation_function")), "nchw" if nchw else "native")
        if kind in _UNARY or kind == "RELU6" or kind == "RELU_N1_TO_1":
            x = ins[0]
            lay = self.layout_of(x)
            xn = self.get(x, lay)
            y = self.act(xn, kind) if kind in _ACT_CLIP else self.node(_UNARY[kind], [xn], kind.lower())
            return self.set(out, y, lay)
        if kind == "LEAKY_RELU":
            lay = self.layout_of(ins[0])
            return self.set(out, self.node("LeakyRelu", [self.get(ins[0], lay)], "lrelu", alpha=o["alpha"]), lay)
        if kind == "PRELU":
            x, alpha = ins
            if not self.is_const(alpha):
                raise Unsupported("PRELU with non-constant alpha")
            lay = self.layout_of(x)
            al = self.bcast_const(alpha, True) if lay == "nchw" else self.get(alpha, "native")
            xin = self.get(x, lay)
            if self.prelu == "native":
                return self.set(out, self.node("PRelu", [xin, al], "prelu"), lay)
            # relu(x) + alpha * min(x, 0): the same values (x > 0: x + alpha * 0; x <= 0: 0 + alpha * x),
            # and ORT runs these four vectorized kernels ~5x faster than its broadcasting PRelu
            # (1x16x96x96 with alpha [16, 1, 1], 1 thread: 0.25 ms vs 1.35 ms), so ORT is timed at its best.
            neg = self.node("Min", [xin, self.const(np.float32(0), "zero")], "prelu_min")
            y = self.node("Add", [self.node("Relu", [xin], "prelu_relu"),
                                  self.node("Mul", [neg, al], "prelu_mul")], "prelu")
            return self.set(out, y, lay)
        if kind in ("PAD", "PADV2"):
            x = ins[0]
            p = self.data(ins[1])
            if p is None:
                raise Unsupported(f"{kind} with non-constant paddings")
            p = p.astype(np.int64).reshape(-1, 2)
            lay = "nchw" if len(self.shape(x)) == 4 else "native"
            if lay == "nchw":
                p = p[_TO_NCHW]
            pads = self.const(np.concatenate([p[:, 0], p[:, 1]]), "pads")
            pin = [self.get(x, lay), pads]
            if kind == "PADV2" and len(ins) > 2 and ins[2] >= 0:
                pin.append(self.const(self.data(ins[2]).astype(np.float32).reshape(()), "pv"))
            return self.set(out, self.node("Pad", pin, "pad", mode="constant"), lay)
        if kind in ("RESHAPE", "SQUEEZE", "EXPAND_DIMS"):
            shp = self.const(np.asarray(self.shape(out), np.int64), "shape")
            return self.set(out, self.node("Reshape", [self.get(ins[0], "native"), shp], "reshape"), "native")
        if kind == "CONCATENATION":
            rank = len(self.shape(out))
            ax = o["axis"] % rank
            nchw = rank == 4 and all(self.layout_of(t) == "nchw" or self.is_const(t) for t in ins)
            lay = "nchw" if nchw else "native"
            if nchw:
                ax = _TO_NCHW.index(ax)
            y = self.node("Concat", [self.get(t, lay) for t in ins], "concat", axis=ax)
            return self.set(out, self.act(y, o.get("fused_activation_function")), lay)
        if kind in ("AVERAGE_POOL_2D", "MAX_POOL_2D"):
            x = ins[0]
            _, ih, iw, _ = self.shape(x)
            kh, kw, sh, sw = o["filter_height"], o["filter_width"], o["stride_h"], o["stride_w"]
            xin = self.get(x, "nchw")
            if kind == "AVERAGE_POOL_2D" and (kh, kw) == (ih, iw) and o["padding"] == "VALID":
                y = self.node("GlobalAveragePool", [xin], "gap")
            else:
                if o["padding"] == "SAME":
                    (pt, pb), (pl, pr) = _same_pads(ih, kh, sh, 1), _same_pads(iw, kw, sw, 1)
                else:
                    pt = pb = pl = pr = 0
                attrs = dict(kernel_shape=[kh, kw], strides=[sh, sw], pads=[pt, pl, pb, pr])
                if kind == "AVERAGE_POOL_2D":
                    attrs["count_include_pad"] = 0
                y = self.node("AveragePool" if kind == "AVERAGE_POOL_2D" else "MaxPool", [xin], "pool", **attrs)
            return self.set(out, self.act(y, o.get("fused_activation_function")), "nchw")
        if kind in ("MEAN", "SUM", "REDUCE_MAX", "REDUCE_MIN"):
            x = ins[0]
            axes = self.data(ins[1])
            if axes is None:
                raise Unsupported(f"{kind} with non-constant axes")
            rank = len(self.shape(x))
            axes = sorted({int(a) % rank for a in np.asarray(axes).reshape(-1)})
            keep = bool(o.get("keep_dims"))
            lay = self.layout_of(x)
            if lay == "nchw" and not keep and axes != [1, 2]:
                lay = "native"
            if lay == "nchw":
                if kind == "MEAN" and axes == [1, 2]:
                    y = self.node("GlobalAveragePool", [self.get(x, lay)], "gap")
                    if not keep:
                        y = self.node("Reshape", [y, self.const(np.asarray(self.shape(out), np.int64), "s")], "rs")
                    return self.set(out, y, "nchw" if keep else "native")
                axes = [_TO_NCHW.index(a) for a in axes]
            oname = {"MEAN": "ReduceMean", "SUM": "ReduceSum", "REDUCE_MAX": "ReduceMax",
                     "REDUCE_MIN": "ReduceMin"}[kind]
            xin = self.get(x, lay)
            if oname == "ReduceSum":   # axes is an input from opset 13 on
                y = self.node(oname, [xin, self.const(np.asarray(axes, np.int64), "ax")], "red", keepdims=int(keep))
            else:
                y = self.node(oname, [xin], "red", axes=axes, keepdims=int(keep))
            return self.set(out, y, lay if keep else "native")
        if kind in ("RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR"):
            x = ins[0]
            n, _, _, c = self.shape(x)
            _, oh, ow, _ = self.shape(out)
            ac, hp = bool(o.get("align_corners")), bool(o.get("half_pixel_centers"))
            if ac and hp:
                raise Unsupported(f"{kind} with both align_corners and half_pixel_centers")
            sizes = self.const(np.asarray([n, c, oh, ow], np.int64), "sizes")
            if kind == "RESIZE_BILINEAR":
                attrs = dict(mode="linear", coordinate_transformation_mode=(
                    "align_corners" if ac else "half_pixel" if hp else "asymmetric"))
            else:
                attrs = dict(mode="nearest", coordinate_transformation_mode=(
                    "align_corners" if ac else "tf_half_pixel_for_nn" if hp else "asymmetric"),
                    nearest_mode="round_prefer_ceil" if ac else "floor")
            y = self.node("Resize", [self.get(x, "nchw"), "", "", sizes], "resize", **attrs)
            return self.set(out, y, "nchw")
        if kind == "SOFTMAX":
            x = ins[0]
            rank = len(self.shape(x))
            lay = self.layout_of(x) if rank == 4 else "native"
            xin = self.get(x, lay)
            beta = o.get("beta", 1.0)
            if beta != 1.0:
                xin = self.node("Mul", [xin, self.const(np.float32(beta), "beta")], "beta")
            return self.set(out, self.node("Softmax", [xin], "softmax", axis=1 if lay == "nchw" else -1), lay)
        if kind == "FULLY_CONNECTED":
            x, w = ins[0], ins[1]
            b = ins[2] if len(ins) > 2 else -1
            wd = self.data(w)
            if wd is None:
                raise Unsupported("FULLY_CONNECTED with non-constant weights")
            units, cin = wd.shape
            xin = self.get(x, "native")
            if len(self.shape(x)) != 2:
                xin = self.node("Reshape", [xin, self.const(np.asarray([-1, cin], np.int64), "s")], "flat")
            ins_ = [xin, self.const(wd.astype(np.float32), "w")]
            if b >= 0 and self.is_const(b):
                ins_.append(self.const(self.data(b).astype(np.float32), "b"))
            y = self.node("Gemm", ins_, "fc", transB=1)
            if list(self.shape(out)) != [int(np.prod(self.shape(x)[:-1])), units]:
                y = self.node("Reshape", [y, self.const(np.asarray(self.shape(out), np.int64), "s")], "rs")
            return self.set(out, self.act(y, o.get("fused_activation_function")), "native")
        if kind == "TRANSPOSE":
            perm = self.data(ins[1])
            if perm is None:
                raise Unsupported("TRANSPOSE with non-constant perm")
            y = self.node("Transpose", [self.get(ins[0], "native")], "transpose", perm=[int(p) % len(perm) for p in perm])
            return self.set(out, y, "native")
        raise Unsupported(f"op {kind}")

    def convert(self, name="model"):
        h, onnx = self.h, self.onnx
        self.folded = {}
        m = self.m
        graph_inputs = []
        for t in m.inputs:
            tt = m.tensors[t]
            if tt["dtype"] != np.float32:
                raise Unsupported(f"input {tt['name']!r} is {tt['dtype']}, not float32")
            graph_inputs.append(h.make_tensor_value_info(tt["name"], onnx.TensorProto.FLOAT, tt["shape"]))
            self.set(t, tt["name"], "native")
            if len(tt["shape"]) == 4:   # transposed once at the boundary
                self.conv[(t, "nchw")] = self.node("Transpose", [tt["name"]], "in_nchw", perm=_TO_NCHW)
        for op in m.ops:
            self.convert_op(op)
        graph_outputs = []
        for t in m.outputs:
            tt = m.tensors[t]
            src = self.get(t, "native")
            self.nodes.append(h.make_node("Identity", [src], [tt["name"]], name=tt["name"] + "__out"))
            graph_outputs.append(h.make_tensor_value_info(
                tt["name"], h.np_dtype_to_tensor_dtype(np.dtype(tt["dtype"])), tt["shape"]))
        graph = h.make_graph(self.nodes, name, graph_inputs, graph_outputs, self.inits)
        model = h.make_model(graph, opset_imports=[h.make_opsetid("", OPSET)],
                             producer_name="tflite_gpu benchmarks/tflite_to_onnx.py")
        model.ir_version = IR_VERSION
        onnx.checker.check_model(model)
        return model


def convert(tflite_bytes: bytes, name="model", prelu="decomposed"):
    """The ONNX ModelProto of a float .tflite model; raises Unsupported naming the first op or
    feature it does not map. prelu='native' writes PRELU as ONNX PRelu (as tf2onnx does) instead of
    Relu + Min/Mul + Add (ORT's faster form)."""
    m = TfliteModel(tflite_bytes)
    used = set(m.inputs) | {t for op in m.ops for t in op["inputs"] + op["outputs"] if t >= 0}
    for t in sorted(used):
        if 0 in m.tensors[t]["shape"]:
            raise Unsupported(f"tensor {m.tensors[t]['name']!r} has no elements (shape {m.tensors[t]['shape']})")
    for op in m.ops:
        if op["op"] == "CUSTOM" and op["custom"] != "Convolution2DTransposeBias":
            raise Unsupported(f"custom op {op['custom']}")
    return _Converter(m, prelu).convert(name)


def convert_bytes(tflite_bytes: bytes, name="model", prelu="decomposed") -> bytes:
    return convert(tflite_bytes, name, prelu).SerializeToString()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("src", nargs="?", help=".tflite file")
    ap.add_argument("dst", nargs="?", help=".onnx file to write")
    ap.add_argument("--zoo", metavar="DIR", help="convert the bench_speed float set into DIR")
    args = ap.parse_args(argv)
    if args.zoo:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from bench_speed import FLOAT_MODELS
        os.makedirs(args.zoo, exist_ok=True)
        for name, build in FLOAT_MODELS.items():
            try:
                data = convert_bytes(build(), name)
            except Unsupported as e:
                print(f"{name}: skipped ({e})")
                continue
            with open(os.path.join(args.zoo, name + ".onnx"), "wb") as f:
                f.write(data)
            print(f"{name}: {len(data) / 1e6:.1f} MB")
        return 0
    if not (args.src and args.dst):
        ap.error("give SRC and DST, or --zoo DIR")
    with open(args.src, "rb") as f:
        data = convert_bytes(f.read(), os.path.splitext(os.path.basename(args.src))[0])
    with open(args.dst, "wb") as f:
        f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
