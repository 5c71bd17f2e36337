"""The one place where the command-line tools obtain an interpreter.

``make_interpreter`` builds either this package's ``tflite_gpu.Interpreter``
(with a ``tflite_gpu.GpuDelegate`` when ``use_gpu``), or, for comparisons and
for the tools' own tests while the engine is being written, the
``ai_edge_litert`` interpreter.  Both are driven through the tf.lite
Interpreter API only (allocate_tensors, get_input_details, set_tensor, invoke,
get_tensor, resize_tensor_input), so every tool works with either.

Engine hooks the tools use where the interpreter has them (this package's
Interpreter has them all, ai_edge_litert's none but the last; see ``optional_hook``):

* ``interp.delegation_report()`` -> dict(delegated_nodes, total_nodes,
  partitions, unsupported=[(node_index, op_name, version, reason)])
* ``interp.enable_profiling(enabled: bool)`` and ``interp.get_profile()`` ->
  the steps of the latest invoke() (dicts with nodes, name, device, us), device
  being "CPU" or "GPU" (GPU times from OpenCL events)
* ``interp.arena_bytes()`` -> the CPU tensor arena's size
* ``interp._get_ops_details()`` -> the nodes (for the op profile's names)
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable, Dict, List, Optional, Tuple

__all__ = [
    "BackendError",
    "make_interpreter",
    "load_model",
    "optional_hook",
    "interpreter_class",
]

BACKENDS = ("tflite_gpu", "litert")

# Delegates must outlive the interpreter that uses them; tf.lite's Interpreter
# keeps a reference itself, but we do not rely on it.
_KEEPALIVE: list = []


class BackendError(RuntimeError):
    """The interpreter or delegate could not be created."""


def interpreter_class(backend: str = "tflite_gpu"):
    """Return the Interpreter class of ``backend`` (imported lazily)."""
    if backend == "tflite_gpu":
        try:
            import tflite_gpu  # noqa: WPS433 (lazy on purpose)
        except Exception as e:  # pragma: no cover - depends on the build
            raise BackendError(f"cannot import tflite_gpu: {e}") from e
        return tflite_gpu.Interpreter
    if backend == "litert":
        try:
            from ai_edge_litert.interpreter import Interpreter
        except Exception as e:
            raise BackendError(
                f"backend 'litert' needs the ai-edge-litert package: {e}") from e
        return Interpreter
    raise BackendError(f"unknown backend {backend!r}; expected one of {', '.join(BACKENDS)}")


def load_model(graph: str) -> Tuple[Optional[str], Optional[bytes], int]:
    """Resolve a --graph/--model_file value.

    Returns (model_path, model_content, size_in_bytes); exactly one of path
    and content is set.  ``zoo:<name>`` builds the model from
    ``tflite_gpu.testing.zoo.ZOO[name]()``.
    """
    if not graph:
        raise BackendError("no model given (--graph=/path/to/model.tflite or --graph=zoo:NAME)")
    if graph.startswith("zoo:"):
        name = graph[4:]
        try:
            from tflite_gpu.testing.zoo import ZOO
        except Exception as e:
            raise BackendError(f"cannot import tflite_gpu.testing.zoo: {e}") from e
        if name not in ZOO:
            raise BackendError(
                f"unknown zoo model {name!r}; available: {', '.join(sorted(ZOO))}")
        content = ZOO[name]()
        if not isinstance(content, (bytes, bytearray)):
            raise BackendError(f"zoo model {name!r} did not return .tflite bytes")
        return None, bytes(content), len(content)
    if not os.path.isfile(graph):
        raise BackendError(f"model file not found: {graph}")
    return graph, None, os.path.getsize(graph)


def _make_gpu_delegate(gpu_options: Dict[str, Any]):
    import tflite_gpu

    kw: Dict[str, Any] = {}
    o = dict(gpu_options or {})
    if "precision_loss_allowed" in o:
        kw["is_precision_loss_allowed"] = bool(o["precision_loss_allowed"])
    flags_enum = tflite_gpu.ExperimentalFlags
    exp_flags = None
    if "enable_quant" in o:
        kw["enable_quantization"] = bool(o["enable_quant"])
        exp_flags = flags_enum.ENABLE_QUANT if o["enable_quant"] else flags_enum.NONE
    if o.get("serialization_dir") or o.get("model_token"):
        if o.get("serialization_dir"):
            kw["serialization_dir"] = o["serialization_dir"]
        if o.get("model_token"):
            kw["model_token"] = o["model_token"]
        ser = flags_enum.ENABLE_SERIALIZATION
        # ENABLE_QUANT stays on unless asked off (it is the options' default).
        exp_flags = (flags_enum.ENABLE_QUANT | ser) if exp_flags is None else (exp_flags | ser)
    if exp_flags is not None:
        kw["experimental_flags"] = exp_flags
    if o.get("sustained_speed"):
        kw["inference_preference"] = tflite_gpu.InferencePreference.SUSTAINED_SPEED
    if o.get("wait_type"):
        wt = getattr(tflite_gpu.WaitType, str(o["wait_type"]).upper(), None)
        if wt is None:
            raise BackendError(f"unsupported --gpu_wait_type {o['wait_type']!r}")
        kw["wait_type"] = wt
    if o.get("max_delegated_partitions"):
        kw["max_delegated_partitions"] = int(o["max_delegated_partitions"])
    if o.get("device") not in (None, ""):
        kw["device"] = o["device"]
    try:
        options = tflite_gpu.GpuDelegateOptions(**kw)
    except TypeError as e:
        raise BackendError(f"GpuDelegateOptions rejected {sorted(kw)}: {e}") from e
    try:
        return tflite_gpu.GpuDelegate(options)
    except Exception as e:
        raise BackendError(f"failed to create the GPU delegate: {e}") from e


def make_interpreter(model_path: Optional[str] = None, num_threads: Optional[int] = None,
                     use_gpu: bool = False, gpu_options: Optional[Dict[str, Any]] = None,
                     backend: str = "tflite_gpu", model_content: Optional[bytes] = None,
                     warn: Optional[Callable[[str], None]] = None):
    """Create an interpreter (tensors NOT yet allocated).

    gpu_options keys (all optional): precision_loss_allowed (bool),
    enable_quant (bool), sustained_speed (bool), wait_type ('passive',
    'active', 'do_not_wait', 'aggressive'), max_delegated_partitions (int),
    serialization_dir (str), model_token (str), device (int or str).
    """
    if warn is None:
        def warn(msg: str) -> None:
            sys.stderr.write(msg + "\n")
    if (model_path is None) == (model_content is None):
        raise BackendError("give exactly one of model_path and model_content")
    cls = interpreter_class(backend)
    kwargs: Dict[str, Any] = {}
    if model_path is not None:
        kwargs["model_path"] = model_path
    else:
        kwargs["model_content"] = model_content
    if num_threads is not None and num_threads > 0:
        kwargs["num_threads"] = int(num_threads)
    delegates = []
    if use_gpu:
        if backend == "litert":
            warn("WARNING: the GPU delegate is not available with --backend=litert; "
                 "running on the CPU.")
        else:
            delegates.append(_make_gpu_delegate(gpu_options or {}))
    if delegates:
        kwargs["experimental_delegates"] = delegates
    try:
        interp = cls(**kwargs)
    except Exception as e:
        raise BackendError(f"failed to create the interpreter: {e}") from e
    if delegates:
        _KEEPALIVE.extend(delegates)
        try:
            interp._tflite_gpu_tools_delegates = delegates  # type: ignore[attr-defined]
        except Exception:
            pass
    return interp


def auto_gpu_choice() -> Tuple[bool, str]:
    """``--use_gpu=auto``: the GPU delegate where CompatibilityList says it helps (a real OpenCL
    GPU that compiles and runs its probe kernel correctly), else the CPU kernels. Returns
    (use the GPU delegate?, the reason, printed by the tools)."""
    try:
        import tflite_gpu
        probe = tflite_gpu.CompatibilityList().probe_result()
        ok = bool(probe["ok"])
    except Exception as e:  # no engine / no OpenCL at all: the CPU kernels still run
        return False, f"--use_gpu=auto: the GPU check failed ({e}); running the CPU kernels."
    if ok:
        return True, (f"--use_gpu=auto: OpenCL GPU '{probe.get('device')}' passed the delegate's "
                      "probe: applying the GPU delegate.")
    why = probe.get("reason") or "no usable OpenCL GPU"
    return False, (f"--use_gpu=auto: {why}; running the CPU kernels (an OpenCL CPU device such as "
                   "PoCL works with --use_gpu=true, but it is a test device, slower than the CPU "
                   "kernels).")


def delegate_device_lines(interp: Any) -> Tuple[List[str], bool]:
    """Lines naming the OpenCL device the GPU delegate of ``interp`` runs on, and whether that
    device is a CPU seen through OpenCL (PoCL). ([], False) when there is no delegate info."""
    dl = getattr(interp, "_tflite_gpu_tools_delegates", None) or []
    if not dl:
        return [], False
    try:
        info = dict(dl[0].info())
    except Exception as e:
        return [f"WARNING: the GPU delegate's info() failed: {e}"], False
    is_gpu = bool(info.get("device_is_gpu"))
    kind = "GPU" if is_gpu else "CPU"
    lines = [f"GPU delegate device: {info.get('device_name', '?')} ({kind}, "
             f"{info.get('device_vendor', '?')}; platform '{info.get('platform_name', '?')}', "
             f"driver {info.get('driver_version', '?')}; precision {info.get('precision', '?')})"]
    if not is_gpu:
        lines.append("NOTE: no OpenCL GPU is in use: this device is the CPU seen through OpenCL "
                     "(PoCL), a test device, not a fast path. The CPU kernels (--use_gpu=false, "
                     "or --use_gpu=auto) run models faster here; a comparison follows the "
                     "benchmark (--compare_cpu=false skips it).")
    return lines, not is_gpu


def optional_hook(obj: Any, name: str) -> Optional[Callable]:
    """``getattr(obj, name)`` if it is callable, else None."""
    fn = getattr(obj, name, None)
    return fn if callable(fn) else None


def node_names(interp: Any) -> Dict[int, str]:
    """node index -> '[out_tensor_name]' (TFLite's profiler naming), best effort."""
    out: Dict[int, str] = {}
    details = None
    fn = optional_hook(interp, "_get_ops_details")   # both backends have it (private in LiteRT)
    if fn is not None:
        try:
            details = fn()
        except Exception:
            details = None
    if not details:
        return out
    try:
        tensors = {d["index"]: d.get("name", "") for d in interp.get_tensor_details()}
    except Exception:
        tensors = {}
    for d in details:
        try:
            idx = int(d["index"])
            outs = [tensors.get(int(t), str(t)) for t in d.get("outputs", [])]
            out[idx] = "[" + ", ".join(outs) + "]"
        except Exception:
            continue
    return out
