"""Scale-out on Ray Data: a callable class for ``Dataset.map_batches`` on an actor pool.

    import ray, tflite_gpu.ray as tgr
    ds = ray.data.from_items(...)            # or read_images(...), read_parquet(...)
    out = ds.map_batches(tgr.TFLitePredictor,
                         fn_constructor_kwargs=dict(model_path="m.tflite", use_gpu=True,
                                                    input_columns=["image"],
                                                    output_columns=["scores"]),
                         concurrency=2, num_gpus=1, batch_size=32)

One interpreter (and GPU delegate) per actor, built once in ``__init__``. Ray gives each actor with
``num_gpus=1`` its own GPU through ``CUDA_VISIBLE_DEVICES``; NVIDIA's OpenCL driver honours that
variable, so the delegate's default device choice (the first OpenCL GPU) is the actor's GPU. AMD's
OpenCL honours ``GPU_DEVICE_ORDINAL`` (ROCm: ``ROCR_VISIBLE_DEVICES``) and Intel's compute runtime
``ZE_AFFINITY_MASK``; Ray sets those only for its accelerator types, so on those vendors pass
``gpu_options={"device": ...}`` per actor or set the variable in ``runtime_env``.

``use_gpu``: ``True`` applies the GPU delegate when Ray assigned this actor a GPU (an actor with
``num_gpus=0`` runs the CPU kernels, and ``report()`` says so); ``"auto"`` applies it where
``CompatibilityList`` finds a GPU it helps on; ``False`` never. A ``device`` in ``gpu_options``
is an explicit choice and is honoured even without a Ray GPU (e.g. PoCL's CPU device in tests).

Batches: a dict of numpy arrays (``batch_format="numpy"``, Ray's default), a pandas DataFrame or
a pyarrow Table. Each input column holds one row per example (arrays of the model input's shape
without its batch dimension). The model's batch dimension is resized to the batch size (once per
distinct size); a model whose batch cannot be resized runs the batch in chunks of its fixed
batch, the last chunk padded. Outputs are appended as columns (``output_columns``, default the
model's output names). The model is read once per actor, from ``model_path`` or from
``model_content`` (bytes, or a Ray ObjectRef to bytes put once with ``ray.put``).
"""
from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Sequence, Union

import numpy as np

from .delegate import CompatibilityList, GpuDelegate, GpuDelegateOptions
from .interpreter import Interpreter

__all__ = ["TFLitePredictor"]


def _ray_gpu_ids() -> Optional[List[Any]]:
    """The GPU ids Ray assigned to this worker, or None outside a Ray worker."""
    try:
        import ray
        if not ray.is_initialized():
            return None
        return list(ray.get_gpu_ids())
    except Exception:
        return None


def _dense(x: Any) -> np.ndarray:
    """Rows held as objects (pandas cells, nested arrow lists) -> one dense array."""
    a = np.asarray(x)
    if a.dtype == object:
        return np.stack([_dense(e) for e in a]) if a.size else a
    return a


class TFLitePredictor:
    """Runs a .tflite model on each batch of a Ray dataset (see the module docstring)."""

    def __init__(self, model_path: Optional[str] = None, model_content: Any = None,
                 use_gpu: Union[bool, str] = "auto",
                 gpu_options: Union[None, Dict[str, Any], GpuDelegateOptions] = None,
                 input_columns: Optional[Sequence[str]] = None,
                 output_columns: Optional[Sequence[str]] = None,
                 num_threads: Optional[int] = None):
        if (model_path is None) == (model_content is None):
            raise ValueError("TFLitePredictor: give exactly one of model_path and model_content")
        if model_content is not None and type(model_content).__name__ == "ObjectRef":
            import ray
            model_content = ray.get(model_content)
        if use_gpu not in (True, False, "auto"):
            raise ValueError(f"TFLitePredictor: use_gpu must be True, False or 'auto', got {use_gpu!r}")
        if isinstance(gpu_options, GpuDelegateOptions):
            opts, explicit_device = gpu_options, False
        elif gpu_options is None or isinstance(gpu_options, dict):
            kw = dict(gpu_options or {})
            explicit_device = kw.get("device") not in (None, "")
            try:
                opts = GpuDelegateOptions(**kw)
            except TypeError as e:
                raise ValueError(f"TFLitePredictor: bad gpu_options: {e}") from None
        else:
            raise TypeError("TFLitePredictor: gpu_options must be a dict or GpuDelegateOptions, "
                            f"got {type(gpu_options).__name__}")

        gpu_ids = _ray_gpu_ids()
        self._why = ""
        apply = False
        if use_gpu is True:
            if explicit_device or gpu_ids is None or gpu_ids:
                apply = True
                self._why = ("gpu_options names the device" if explicit_device else
                             f"Ray assigned GPU(s) {gpu_ids}" if gpu_ids else "use_gpu=True")
            else:
                self._why = "use_gpu=True but Ray assigned this actor no GPU (num_gpus=0): CPU kernels"
        elif use_gpu == "auto":
            if explicit_device:
                apply, self._why = True, "gpu_options names the device"
            elif gpu_ids is not None and not gpu_ids:
                self._why = "use_gpu='auto' and Ray assigned this actor no GPU: CPU kernels"
            else:
                probe = CompatibilityList().probe_result()
                apply = bool(probe["ok"])
                self._why = (f"use_gpu='auto': OpenCL GPU '{probe['device']}' passed the delegate's probe"
                             if apply else f"use_gpu='auto': {probe['reason'] or 'no usable OpenCL GPU'}: CPU kernels")
        else:
            self._why = "use_gpu=False: CPU kernels"

        self._delegate = GpuDelegate(opts) if apply else None
        kwargs: Dict[str, Any] = {}
        if num_threads is not None:
            kwargs["num_threads"] = int(num_threads)
        if self._delegate is not None:
            kwargs["experimental_delegates"] = [self._delegate]
        if model_path is not None:
            self._interp = Interpreter(model_path=os.fspath(model_path), **kwargs)
        else:
            self._interp = Interpreter(model_content=bytes(model_content), **kwargs)
        self._interp.allocate_tensors()
        self._inputs = self._interp.get_input_details()
        self._outputs = self._interp.get_output_details()
        self._model_batch = [int(d["shape"][0]) if len(d["shape"]) else 1 for d in self._inputs]
        names = [d["name"] for d in self._inputs]
        if input_columns is None:
            self._in_cols = None          # resolved against the first batch's columns
        else:
            self._in_cols = [str(c) for c in input_columns]
            if len(self._in_cols) != len(names):
                raise ValueError(f"TFLitePredictor: input_columns has {len(self._in_cols)} names, "
                                 f"the model has {len(names)} inputs ({names})")
        outs = [d["name"] or f"output_{i}" for i, d in enumerate(self._outputs)]
        self._out_cols = [str(c) for c in output_columns] if output_columns is not None else outs
        if len(self._out_cols) != len(self._outputs):
            raise ValueError(f"TFLitePredictor: output_columns has {len(self._out_cols)} names, "
                             f"the model has {len(self._outputs)} outputs ({outs})")
        self._batch = None                # the batch size the tensors are allocated for
        self._resizable = True

    # -- what Ray calls --------------------------------------------------------------------
    def __call__(self, batch: Any) -> Any:
        kind, cols = self._columns(batch)
        in_cols = self._input_columns(cols)
        arrays = [self._stack(cols[c], d, c) for c, d in zip(in_cols, self._inputs)]
        n = arrays[0].shape[0]
        for c, a in zip(in_cols, arrays):
            if a.shape[0] != n:
                raise ValueError(f"TFLitePredictor: column {c!r} has {a.shape[0]} rows, "
                                 f"{in_cols[0]!r} has {n}")
        outs = self._run(arrays, n)
        return self._with_outputs(batch, kind, cols, outs)

    def report(self) -> Dict[str, Any]:
        """For logging per actor: the choice made, the device, the delegation report."""
        rep: Dict[str, Any] = {"pid": os.getpid(), "why": self._why,
                               "delegate": self._delegate is not None,
                               "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
                               "ray_gpu_ids": _ray_gpu_ids()}
        if self._delegate is not None:
            info = self._delegate.info()
            rep["device"] = info.get("device_name")
            rep["device_is_gpu"] = info.get("device_is_gpu")
            rep["delegation"] = self._interp.delegation_report()
        return rep

    # -- internals ---------------------------------------------------------------------------
    @staticmethod
    def _columns(batch: Any):
        if isinstance(batch, dict):
            return "dict", batch
        mod = type(batch).__module__
        if mod.startswith("pandas"):
            return "pandas", {c: batch[c] for c in batch.columns}
        if mod.startswith("pyarrow"):
            return "arrow", {c: batch.column(c) for c in batch.column_names}
        raise TypeError(f"TFLitePredictor: a batch must be a dict of numpy arrays, a pandas "
                        f"DataFrame or a pyarrow Table, got {type(batch).__name__}")

    def _input_columns(self, cols: Dict[str, Any]) -> List[str]:
        if self._in_cols is not None:
            missing = [c for c in self._in_cols if c not in cols]
            if missing:
                raise KeyError(f"TFLitePredictor: input column(s) {missing} not in the batch "
                               f"(columns: {sorted(cols)})")
            return self._in_cols
        names = [d["name"] for d in self._inputs]
        if all(n in cols for n in names):
            return names
        if len(names) == 1 and len(cols) == 1:
            return list(cols)
        raise KeyError(f"TFLitePredictor: cannot tell which columns feed the model's inputs "
                       f"{names} (batch columns: {sorted(cols)}); pass input_columns=[...]")

    @staticmethod
    def _stack(col: Any, detail: Dict[str, Any], name: str) -> np.ndarray:
        if hasattr(col, "to_numpy") and type(col).__module__.startswith("pyarrow"):
            col = col.to_numpy(zero_copy_only=False)
        elif hasattr(col, "to_numpy"):
            col = col.to_numpy()
        a = _dense(col)
        want = np.dtype(detail["dtype"])
        if a.dtype != want:
            if np.issubdtype(want, np.integer) and not np.issubdtype(a.dtype, np.integer):
                raise TypeError(f"TFLitePredictor: column {name!r} has dtype {a.dtype}; the model "
                                f"input {detail['name']!r} takes {want}")
            a = a.astype(want)
        row_shape = tuple(int(x) for x in detail["shape_signature"][1:]) if len(detail["shape"]) else ()
        if a.ndim != len(row_shape) + 1 or any(r >= 0 and r != s for r, s in zip(row_shape, a.shape[1:])):
            raise ValueError(f"TFLitePredictor: column {name!r} rows have shape {a.shape[1:]}; the "
                             f"model input {detail['name']!r} takes {row_shape} per example")
        return np.ascontiguousarray(a)

    def _allocate_for(self, n: int, arrays: List[np.ndarray]) -> bool:
        """Resize every input's batch dimension to n; False when the model refuses."""
        if self._batch == n:
            return True
        if not self._resizable:
            return False
        try:
            for d, a in zip(self._inputs, arrays):
                self._interp.resize_tensor_input(d["index"], [n] + list(a.shape[1:]))
            self._interp.allocate_tensors()
        except (RuntimeError, ValueError):
            self._resizable = False
            for d in self._inputs:               # back to the model's own shapes
                self._interp.resize_tensor_input(d["index"], list(d["shape"]))
            self._interp.allocate_tensors()
            self._batch = None
            return False
        self._batch = n
        return True

    def _invoke(self, arrays: List[np.ndarray]) -> List[np.ndarray]:
        for d, a in zip(self._inputs, arrays):
            self._interp.set_tensor(d["index"], a)
        self._interp.invoke()
        return [self._interp.get_tensor(d["index"]) for d in self._outputs]   # get_tensor copies

    def _run(self, arrays: List[np.ndarray], n: int) -> List[np.ndarray]:
        if self._allocate_for(n, arrays):
            return self._invoke(arrays)
        fixed = self._model_batch[0]               # chunks of the model's own batch, last padded
        chunks: List[List[np.ndarray]] = []
        for s in range(0, n, fixed):
            part = []
            for a in arrays:
                c = a[s:s + fixed]
                if c.shape[0] < fixed:
                    c = np.concatenate([c, np.repeat(c[-1:], fixed - c.shape[0], axis=0)])
                part.append(c)
            outs = self._invoke(part)
            chunks.append([o[:min(fixed, n - s)] for o in outs])
        return [np.concatenate([c[i] for c in chunks]) for i in range(len(self._outputs))]

    def _with_outputs(self, batch: Any, kind: str, cols: Dict[str, Any], outs: List[np.ndarray]):
        if kind == "dict":
            res = dict(batch)
            for c, o in zip(self._out_cols, outs):
                res[c] = o
            return res
        if kind == "pandas":
            res = batch.copy()
            for c, o in zip(self._out_cols, outs):
                res[c] = list(o) if o.ndim > 1 else o
            return res
        res = {c: self._stack_any(v) for c, v in cols.items()}   # arrow -> numpy dict
        for c, o in zip(self._out_cols, outs):
            res[c] = o
        return res

    @staticmethod
    def _stack_any(col: Any) -> np.ndarray:
        a = col.to_numpy(zero_copy_only=False) if hasattr(col, "to_numpy") else np.asarray(col)
        try:
            return _dense(a)
        except ValueError:           # ragged rows: keep them as objects
            return a
