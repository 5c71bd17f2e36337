"""Helpers for quantized test models: affine quantization of numpy arrays (per-tensor and
per-channel), picking scales from a float range, and quantized single-op models built with
``tflite_gpu.testing.builder``.

The rounding here is TFLite's *reference* rule for float -> int (``round`` half away from zero,
then ``+ zero_point``, then clamp). It is for making test data and model constants; it is not an
oracle for any kernel (the oracle is LiteRT).

Quick reference::

    from tflite_gpu.testing import quant as Q

    qp = Q.params_from_range(-3.0, 5.0, np.int8)         # QParams(scale, zero_point)
    x_q = Q.quantize(x, qp, np.int8)                     # float -> int8
    x_f = Q.dequantize(x_q, qp)                          # int8 -> float32
    w_q, wqp = Q.quantize_per_channel_symmetric(w, axis=0)   # int8 weights, zero points 0
    model = Q.single_op_model_q("ADD",
        inputs=[([1, 8, 8, 3], np.int8, qp), ([1, 8, 8, 3], np.int8, qp)],
        outputs=[([1, 8, 8, 3], np.int8, Q.QParams(0.05, -2))],
        options=dict(fused_activation_function="NONE"))
    Q.random_q(rng, [1, 8, 8, 3], np.int8)               # uniform over the whole type range
"""
from __future__ import annotations

import dataclasses
from typing import Optional, Sequence, Tuple, Union

import numpy as np

from tflite_gpu.testing.builder import single_op_model

__all__ = [
    "QParams", "qrange", "quant_dict", "params_from_range", "symmetric_params",
    "quantize", "dequantize", "quantize_per_channel_symmetric", "random_q",
    "qspec", "single_op_model_q", "quant_kind",
]


@dataclasses.dataclass(frozen=True)
class QParams:
    """Affine quantization ``real = scale * (q - zero_point)``.

    Per-tensor: ``scale``/``zero_point`` scalars. Per-channel: sequences of equal length plus
    ``axis`` (TFLite's ``quantized_dimension``).
    """
    scale: Union[float, Sequence[float]]
    zero_point: Union[int, Sequence[int]] = 0
    axis: Optional[int] = None

    @property
    def per_channel(self) -> bool:
        return self.axis is not None

    def scales(self) -> np.ndarray:
        return np.atleast_1d(np.asarray(self.scale, np.float32))

    def zero_points(self) -> np.ndarray:
        zp = np.atleast_1d(np.asarray(self.zero_point, np.int64))
        if zp.size == 1 and self.scales().size > 1:
            zp = np.full(self.scales().size, int(zp[0]), np.int64)
        return zp

    def as_dict(self) -> dict:
        """The ``quant=`` dict ``ModelBuilder.add_tensor`` takes."""
        return quant_dict(self)


def qrange(dtype) -> Tuple[int, int]:
    """(qmin, qmax) of an integer numpy dtype."""
    info = np.iinfo(np.dtype(dtype))
    return int(info.min), int(info.max)


def quant_dict(qp: Optional[Union[QParams, dict]]) -> Optional[dict]:
    """QParams (or an already-built dict, or None) -> the builder's ``quant=`` dict."""
    if qp is None or isinstance(qp, dict):
        return qp
    d = dict(scale=[float(s) for s in qp.scales()],
             zero_point=[int(z) for z in qp.zero_points()])
    if qp.axis is not None:
        d["quantized_dimension"] = int(qp.axis)
    return d


def params_from_range(lo: float, hi: float, dtype=np.int8, symmetric: Optional[bool] = None) -> QParams:
    """Scale and zero point covering [lo, hi] (widened to include 0), as TFLite's converter picks
    them: ``scale = (hi - lo) / (qmax - qmin)``, zero point ``round(qmin - lo / scale)`` clamped
    to the type. ``symmetric`` (default: True for int16, else False) gives zero point 0 and
    ``scale = max(|lo|, |hi|) / qmax``."""
    dtype = np.dtype(dtype)
    qmin, qmax = qrange(dtype)
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    if symmetric is None:
        symmetric = dtype == np.int16
    if symmetric:
        m = max(abs(lo), abs(hi))
        return QParams(m / qmax if m > 0 else 1.0, 0)
    if hi == lo:
        return QParams(1.0, 0 if qmin < 0 <= qmax else qmin)
    scale = (hi - lo) / (qmax - qmin)
    zp = int(np.clip(np.round(qmin - lo / scale), qmin, qmax))
    return QParams(scale, zp)


def symmetric_params(max_abs, dtype=np.int8, narrow_range=True, axis=None) -> QParams:
    """Zero-point-0 params with ``scale = max_abs / (qmax)`` (``narrow_range``: int8 range
    [-127, 127] as TFLite's weights); ``max_abs`` may be a vector (per-channel, needs axis)."""
    qmin, qmax = qrange(dtype)
    m = np.asarray(max_abs, np.float64)
    s = np.where(m > 0, m / qmax, 1.0)
    if s.ndim == 0:
        return QParams(float(s), 0)
    return QParams([float(v) for v in s], [0] * s.size, axis)


def _bcast(qp: QParams, ndim: int):
    s = qp.scales().astype(np.float64)
    z = qp.zero_points()
    if qp.per_channel:
        shape = [1] * ndim
        shape[qp.axis] = s.size
        return s.reshape(shape), z.reshape(shape)
    return s[0], z[0]


def quantize(x, qp: QParams, dtype=np.int8) -> np.ndarray:
    """float -> integer: ``clamp(round_half_away(x / scale) + zero_point)``; per-channel along
    ``qp.axis``."""
    x = np.asarray(x, np.float64)
    s, z = _bcast(qp, x.ndim)
    qmin, qmax = qrange(dtype)
    r = np.trunc(x / s + np.copysign(0.5, x / s))  # half away from zero
    return np.clip(r + z, qmin, qmax).astype(dtype)


def dequantize(q, qp: QParams) -> np.ndarray:
    """integer -> float32: ``(q - zero_point) * scale``; per-channel along ``qp.axis``."""
    q = np.asarray(q)
    s, z = _bcast(qp, q.ndim)
    return ((q.astype(np.int64) - z) * s).astype(np.float32)


def quantize_per_channel_symmetric(w, axis=0, dtype=np.int8, narrow_range=True):
    """Weights -> (int8 array, per-channel QParams with zero points 0), as TFLite's converter
    quantizes conv/FC weights (``narrow_range``: values in [-127, 127])."""
    w = np.asarray(w, np.float32)
    red = tuple(d for d in range(w.ndim) if d != axis)
    qp = symmetric_params(np.abs(w).max(axis=red), dtype, narrow_range, axis)
    q = quantize(w, qp, dtype)
    if narrow_range:
        q = np.maximum(q, qrange(dtype)[0] + 1).astype(dtype)
    return q, qp


def random_q(rng: np.random.Generator, shape, dtype=np.int8, lo: Optional[int] = None,
             hi: Optional[int] = None) -> np.ndarray:
    """Uniform integers in [lo, hi] (default: the whole range of dtype)."""
    qmin, qmax = qrange(dtype)
    lo = qmin if lo is None else max(int(lo), qmin)
    hi = qmax if hi is None else min(int(hi), qmax)
    return rng.integers(lo, hi + 1, size=list(shape), dtype=np.int64).astype(dtype)


def qspec(shape, dtype, qp: Optional[Union[QParams, dict]]):
    """An input/output spec for ``builder.single_op_model``: ``(shape, dtype, quant dict)``."""
    return (list(shape), np.dtype(dtype), quant_dict(qp))


def single_op_model_q(op, inputs, outputs, options=None, version=1, consts=None,
                      custom_options=None) -> bytes:
    """``builder.single_op_model`` with quantized tensors: ``inputs``/``outputs`` are lists of
    ``(shape, dtype, QParams|dict|None)``; ``consts`` lists ndarrays, ``(ndarray, QParams|dict)``
    or None (an omitted optional input)."""
    ins = [qspec(*s) if len(s) == 3 else s for s in inputs]
    outs = [qspec(*s) if len(s) == 3 else s for s in outputs]
    cs = None
    if consts is not None:
        cs = []
        for c in consts:
            if isinstance(c, tuple):
                cs.append((c[0], quant_dict(c[1])))
            else:
                cs.append(c)
    return single_op_model(op, ins, outs, options=options, version=version, consts=cs,
                           custom_options=custom_options)


# The names of the quantized-kernel column (tflite_gpu.supported_ops()[i]['quantized_kernels']).
_KIND = {np.dtype(np.int8): "int8", np.dtype(np.uint8): "uint8", np.dtype(np.int16): "int16x8"}


def quant_kind(dtype) -> Optional[str]:
    """The quantized-kernel column entry an integer activation type belongs to ('int8', 'uint8',
    'int16x8'), or None."""
    return _KIND.get(np.dtype(dtype))
