"""The GPU delegate (TfLiteGpuDelegateV2 / TFLGpuDelegate names), backed by OpenCL."""
from __future__ import annotations

import dataclasses
import enum
import logging
import os
import site
import sys
from typing import Any, Dict, List, Mapping, Optional

import numpy as np

from . import _core

logger = logging.getLogger("tflite_gpu")


def _set_opencl_search_path() -> None:
    # The C++ loader looks for the ICD loader and PoCL shipped in the pyopencl wheel here.
    if "TFLITE_GPU_SITE_PACKAGES" not in os.environ:
        dirs = list(site.getsitepackages()) if hasattr(site, "getsitepackages") else []
        user = site.getusersitepackages() if hasattr(site, "getusersitepackages") else None
        dirs += [p for p in sys.path if p.endswith("site-packages")]
        if user:
            dirs.append(user)
        os.environ["TFLITE_GPU_SITE_PACKAGES"] = os.pathsep.join(dict.fromkeys(d for d in dirs if d))


def _log(level: int, msg: str) -> None:
    logger.log({0: logging.INFO, 1: logging.WARNING}.get(level, logging.ERROR), msg)


_set_opencl_search_path()
_core.set_log_callback(_log)


# ---------------------------------------------------------------------------------------------
# Released pyopencl buffers. pyopencl's MemoryObject.release() frees the cl_mem at once, yet the
# object's int_ptr keeps returning the old handle, and any query on it (even .size) reads freed
# memory (a segfault on PoCL). No OpenCL call can tell a freed handle from a live one, so
# release() is wrapped (once, whenever pyopencl is imported, before or after us) to mark the
# object; bind_buffer_to_tensor refuses a marked one with a clear error instead of crashing.
_RELEASED = "_tflite_gpu_released"


def _mark_pyopencl_releases(cl_module) -> None:
    # MemoryObject (Buffer, Image, ...): release() frees the cl_mem. PooledBuffer: release() gives
    # the memory back to its pool, which hands it to the next allocation or frees it.
    for name in ("MemoryObject", "PooledBuffer"):
        _wrap_release(getattr(cl_module, name, None))


def _wrap_release(cls) -> None:
    release = getattr(cls, "release", None)
    if release is None or getattr(release, "_tflite_gpu_wrapper", False):
        return

    def wrapped(self, *args, **kwargs):
        release(self, *args, **kwargs)
        try:
            setattr(self, _RELEASED, True)
        except (AttributeError, TypeError):  # an object without a __dict__: cannot be marked
            pass

    wrapped.__doc__ = release.__doc__
    wrapped.__name__ = getattr(release, "__name__", "release")
    wrapped._tflite_gpu_wrapper = True
    try:
        cls.release = wrapped
    except (AttributeError, TypeError):
        pass


class _PyopenclReleaseHook:
    """Import hook: marks pyopencl._cl's releases once it is imported (after tflite_gpu)."""

    def find_spec(self, name, path, target=None):
        if name != "pyopencl._cl":
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        exec_module = getattr(loader, "exec_module", None)
        if exec_module is None:
            return None

        def exec_and_mark(module):
            exec_module(module)
            _mark_pyopencl_releases(module)
            if self in sys.meta_path:
                sys.meta_path.remove(self)

        try:
            loader.exec_module = exec_and_mark
        except (AttributeError, TypeError):
            return None
        return spec


if "pyopencl._cl" in sys.modules:
    _mark_pyopencl_releases(sys.modules["pyopencl._cl"])
elif not any(isinstance(f, _PyopenclReleaseHook) for f in sys.meta_path):
    sys.meta_path.insert(0, _PyopenclReleaseHook())


class InferencePreference(enum.IntEnum):
    FAST_SINGLE_ANSWER = 0
    SUSTAINED_SPEED = 1
    BALANCED = 2


class InferencePriority(enum.IntEnum):
    AUTO = 0
    MAX_PRECISION = 1
    MIN_LATENCY = 2
    MIN_MEMORY_USAGE = 3


class ExperimentalFlags(enum.IntFlag):
    NONE = 0
    ENABLE_QUANT = 1
    CL_ONLY = 2
    GL_ONLY = 4
    ENABLE_SERIALIZATION = 8


class WaitType(enum.IntEnum):
    PASSIVE = 0
    ACTIVE = 1
    DO_NOT_WAIT = 2
    AGGRESSIVE = 3


_UNSET = object()


@dataclasses.dataclass
class GpuDelegateOptions:
    """TfLiteGpuDelegateOptionsV2 fields plus the Metal (TFLGpuDelegateOptions) names.

    ``allow_precision_loss`` is the Metal name of ``is_precision_loss_allowed`` and
    ``enable_quantization`` the Metal name of ``ExperimentalFlags.ENABLE_QUANT``; when given they win.
    ``device``: None (a GPU if there is one, else the PoCL CPU device), an index, a name
    substring, "gpu"/"cpu", or a pyopencl Context / CommandQueue to share.
    ``op_filter``: op names forced to the CPU (also env TFLITE_GPU_OP_FILTER).
    """
    is_precision_loss_allowed: bool = False
    inference_preference: InferencePreference = InferencePreference.FAST_SINGLE_ANSWER
    inference_priority1: InferencePriority = InferencePriority.MAX_PRECISION
    inference_priority2: InferencePriority = InferencePriority.AUTO
    inference_priority3: InferencePriority = InferencePriority.AUTO
    experimental_flags: ExperimentalFlags = ExperimentalFlags.ENABLE_QUANT
    max_delegated_partitions: int = 1
    serialization_dir: Optional[str] = None
    model_token: Optional[str] = None
    wait_type: WaitType = WaitType.PASSIVE
    enable_quantization: Any = _UNSET
    allow_precision_loss: Any = _UNSET
    device: Any = None
    op_filter: Optional[List[str]] = None
    enable_profiling: bool = False

    def __post_init__(self):
        self._validate()
        if self.allow_precision_loss is not _UNSET:
            self.is_precision_loss_allowed = bool(self.allow_precision_loss)
        if self.enable_quantization is not _UNSET:
            flags = ExperimentalFlags(int(self.experimental_flags))
            self.experimental_flags = (flags | ExperimentalFlags.ENABLE_QUANT) if self.enable_quantization \
                else (flags & ~ExperimentalFlags.ENABLE_QUANT)
        try:
            self.inference_preference = InferencePreference(int(self.inference_preference))
            self.inference_priority1 = InferencePriority(int(self.inference_priority1))
            self.inference_priority2 = InferencePriority(int(self.inference_priority2))
            self.inference_priority3 = InferencePriority(int(self.inference_priority3))
            self.wait_type = WaitType(int(self.wait_type))
        except ValueError as e:
            raise ValueError(f"GpuDelegateOptions: {e}") from None
        if not isinstance(self.max_delegated_partitions, int) or self.max_delegated_partitions < 1:
            raise ValueError("GpuDelegateOptions: max_delegated_partitions must be an int >= 1")

    def _validate(self) -> None:
        """Every field's type and range, with an error naming the field (values reach C fields of
        fixed width: an unchecked one would be cut, wrapped or refused by the binding unclearly)."""
        def integral(name, lo, hi):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, enum.Enum)) or not hasattr(v, "__index__"):
                raise TypeError(f"GpuDelegateOptions.{name}: expected an int, got {type(v).__name__} ({v!r})")
            if not lo <= int(v) <= hi:
                raise ValueError(f"GpuDelegateOptions.{name}: {int(v)} is out of range [{lo}, {hi}]")

        def flag(name):
            v = getattr(self, name)
            if not isinstance(v, (bool, int)) or (not isinstance(v, bool) and int(v) not in (0, 1)):
                raise TypeError(f"GpuDelegateOptions.{name}: expected a bool, got {type(v).__name__} ({v!r})")

        def text(name, value):
            if value is None:
                return None
            if isinstance(value, os.PathLike):
                value = os.fspath(value)
            if isinstance(value, bytes):
                try:
                    value = value.decode()
                except UnicodeDecodeError:
                    raise ValueError(f"GpuDelegateOptions.{name}: bytes that are not UTF-8") from None
            if not isinstance(value, str):
                raise TypeError(f"GpuDelegateOptions.{name}: expected a str, got {type(value).__name__} ({value!r})")
            if "\x00" in value:
                raise ValueError(f"GpuDelegateOptions.{name}: contains a NUL character ({value!r})")
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise ValueError(f"GpuDelegateOptions.{name}: not encodable as UTF-8 ({value!r})") from None
            return value

        flag("is_precision_loss_allowed")
        flag("enable_profiling")
        for name in ("inference_preference", "inference_priority1", "inference_priority2", "inference_priority3",
                     "wait_type"):
            integral(name, -2**31, 2**31 - 1)
        integral("max_delegated_partitions", 1, 2**31 - 1)
        integral("experimental_flags", 0, int(max(ExperimentalFlags)) * 2 - 1)
        self.serialization_dir = text("serialization_dir", self.serialization_dir)
        self.model_token = text("model_token", self.model_token)
        if self.op_filter is not None:
            if isinstance(self.op_filter, (str, bytes)) or not hasattr(self.op_filter, "__iter__"):
                raise TypeError("GpuDelegateOptions.op_filter: expected a list of op names, got "
                                f"{type(self.op_filter).__name__} ({self.op_filter!r})")
            self.op_filter = [text("op_filter", x) for x in self.op_filter]
            if any("," in x for x in self.op_filter):
                raise ValueError(f"GpuDelegateOptions.op_filter: op names cannot contain ',' ({self.op_filter!r})")
        dev = self.device
        if isinstance(dev, bool):
            raise TypeError("GpuDelegateOptions.device: expected None, an index, a name, or a pyopencl "
                            "Context/CommandQueue, got bool")
        if isinstance(dev, int) and not 0 <= dev < 2**31:
            raise ValueError(f"GpuDelegateOptions.device: index {dev} is out of range")
        if isinstance(dev, (str, bytes, os.PathLike)):
            self.device = text("device", dev)
        elif dev is not None and not isinstance(dev, int) and not hasattr(dev, "int_ptr") \
                and not hasattr(getattr(dev, "context", None), "int_ptr"):
            raise ValueError(f"GpuDelegateOptions.device: expected None, an index, a name, or a pyopencl "
                             f"Context/CommandQueue, got {type(dev).__name__}")

    @classmethod
    def from_external_options(cls, options: Optional[Mapping[str, Any]]) -> "GpuDelegateOptions":
        """Options from TFLite's GPU external-delegate keys (``load_delegate(lib, options)``).

        Keys (either spelling): is_precision_loss_allowed / gpu_precision_loss_allowed /
        allow_precision_loss; inference_preference / gpu_inference_preference;
        gpu_inference_for_sustained_speed; inference_priority1..3 / gpu_inference_priority1..3;
        experimental_flags; gpu_experimental_enable_quant / enable_quantization;
        max_delegated_partitions (0: no limit); serialization_dir / delegate_serialize_dir;
        model_token / delegate_serialize_token (both together, without experimental_flags, set
        ENABLE_SERIALIZATION as the benchmark tool does); wait_type / gpu_wait_type; gpu_backend ("cl");
        device. Values may be strings (as LiteRT passes them) or Python values. An unknown key or a
        bad value raises ValueError naming it."""
        kw: Dict[str, Any] = {}
        flags: Optional[int] = None
        quant: Optional[bool] = None
        for key, value in (options or {}).items():
            k = str(key)
            spec = _EXTERNAL_KEYS.get(k)
            if spec is None:
                raise ValueError(f"unknown GPU delegate option {k!r}; valid keys: {', '.join(sorted(_EXTERNAL_KEYS))}")
            field, parse = spec
            try:
                v = parse(value)
            except ValueError as e:
                raise ValueError(f"bad value {value!r} for GPU delegate option {k!r}: {e}") from None
            if field == "experimental_flags":
                flags = v
            elif field == "enable_quant":
                quant = v
            elif field == "sustained_speed":
                if v:
                    kw["inference_preference"] = InferencePreference.SUSTAINED_SPEED
            elif field == "gpu_backend":
                pass
            else:
                kw[field] = v
        f = ExperimentalFlags(flags) if flags is not None else ExperimentalFlags.ENABLE_QUANT
        if flags is None and kw.get("serialization_dir") and kw.get("model_token"):
            # A directory and a token turn serialization on, as the benchmark tool's
            # --delegate_serialize_dir/--delegate_serialize_token do (explicit flags win).
            f |= ExperimentalFlags.ENABLE_SERIALIZATION
        if quant is not None:
            f = (f | ExperimentalFlags.ENABLE_QUANT) if quant else (f & ~ExperimentalFlags.ENABLE_QUANT)
        kw["experimental_flags"] = f
        return cls(**kw)

    def _to_core(self) -> Dict[str, Any]:
        d: Dict[str, Any] = {
            "is_precision_loss_allowed": int(bool(self.is_precision_loss_allowed)),
            "inference_preference": int(self.inference_preference),
            "inference_priority1": int(self.inference_priority1),
            "inference_priority2": int(self.inference_priority2),
            "inference_priority3": int(self.inference_priority3),
            "experimental_flags": int(self.experimental_flags),
            "max_delegated_partitions": int(self.max_delegated_partitions),
            "serialization_dir": self.serialization_dir,
            "model_token": self.model_token,
            "wait_type": int(self.wait_type),
            "enable_profiling": int(bool(self.enable_profiling)),
            "op_filter": ",".join(self.op_filter) if self.op_filter else None,
        }
        dev = self.device
        if dev is None:
            pass
        elif isinstance(dev, (int, str)):
            d["device"] = str(dev)
        else:  # a pyopencl Context or CommandQueue to share
            queue = None
            if hasattr(dev, "context") and hasattr(dev, "finish"):
                queue, ctx = dev, dev.context
            else:
                ctx = dev
            if not hasattr(ctx, "int_ptr"):
                raise ValueError(f"GpuDelegateOptions.device: expected None, an index, a name, or a pyopencl "
                                 f"Context/CommandQueue, got {type(dev).__name__}")
            d["cl_context"] = int(ctx.int_ptr)
            if queue is not None:
                d["cl_queue"] = int(queue.int_ptr)
        return d


def _parse_bool(v) -> bool:
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)) and int(v) in (0, 1):
        return bool(v)
    t = str(v).strip().lower()
    if t in ("1", "true", "yes", "on"):
        return True
    if t in ("0", "false", "no", "off"):
        return False
    raise ValueError("expected a bool (1/0/true/false)")


def _parse_int(v) -> int:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    t = str(v).strip()
    try:
        return int(t, 0)
    except ValueError:
        raise ValueError("expected an integer") from None


def _parse_enum(enum_cls, prefix: str):
    def parse(v):
        if isinstance(v, enum_cls):
            return v
        if isinstance(v, (int, np.integer)) and not isinstance(v, bool) or str(v).strip().lstrip("-").isdigit():
            n = int(str(v).strip()) if not isinstance(v, (int, np.integer)) else int(v)
            try:
                return enum_cls(n)
            except ValueError:
                raise ValueError(f"expected one of {[m.value for m in enum_cls]} "
                                 f"({', '.join(m.name for m in enum_cls)})") from None
        t = str(v).strip().upper()
        if t.startswith(prefix):
            t = t[len(prefix):]
        if t in enum_cls.__members__:
            return enum_cls[t]
        raise ValueError(f"expected one of {', '.join(m.name for m in enum_cls)} or their numbers")
    return parse


def _parse_flags(v) -> int:
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        n = int(v)
    else:
        t = str(v).strip()
        try:
            n = int(t, 0)
        except ValueError:
            n = 0
            for part in t.replace(",", "|").split("|"):
                name = part.strip().upper()
                if name.startswith("TFLITE_GPU_EXPERIMENTAL_FLAGS_"):
                    name = name[len("TFLITE_GPU_EXPERIMENTAL_FLAGS_"):]
                if name not in ExperimentalFlags.__members__:
                    raise ValueError(f"unknown flag {part.strip()!r}; flags: "
                                     f"{', '.join(ExperimentalFlags.__members__)}") from None
                n |= int(ExperimentalFlags[name])
    allowed = 0
    for m in ExperimentalFlags:
        allowed |= int(m)
    if n < 0 or n & ~allowed:
        raise ValueError(f"flags {n:#x} has bits outside the known flags ({allowed:#x})")
    return n


def _parse_partitions(v) -> int:
    n = _parse_int(v)
    if n < 0:
        raise ValueError("expected an integer >= 0 (0: no limit)")
    return n if n > 0 else 2 ** 31 - 1


def _parse_str(v) -> str:
    if v is None:
        raise ValueError("expected a string")
    return os.fspath(v) if isinstance(v, os.PathLike) else str(v)


def _parse_backend(v) -> str:
    t = str(v).strip().lower()
    if t not in ("cl", "opencl", ""):
        raise ValueError("this GPU delegate has only the OpenCL backend ('cl')")
    return t


_PREF = _parse_enum(InferencePreference, "TFLITE_GPU_INFERENCE_PREFERENCE_")
_PRIO = _parse_enum(InferencePriority, "TFLITE_GPU_INFERENCE_PRIORITY_")
_WAIT = _parse_enum(WaitType, "TFLGPUDELEGATEWAITTYPE")

# external-delegate option key -> (GpuDelegateOptions field or special, parser)
_EXTERNAL_KEYS: Dict[str, Any] = {
    "is_precision_loss_allowed": ("is_precision_loss_allowed", _parse_bool),
    "gpu_precision_loss_allowed": ("is_precision_loss_allowed", _parse_bool),
    "allow_precision_loss": ("is_precision_loss_allowed", _parse_bool),
    "inference_preference": ("inference_preference", _PREF),
    "gpu_inference_preference": ("inference_preference", _PREF),
    "gpu_inference_for_sustained_speed": ("sustained_speed", _parse_bool),
    "inference_priority1": ("inference_priority1", _PRIO),
    "inference_priority2": ("inference_priority2", _PRIO),
    "inference_priority3": ("inference_priority3", _PRIO),
    "gpu_inference_priority1": ("inference_priority1", _PRIO),
    "gpu_inference_priority2": ("inference_priority2", _PRIO),
    "gpu_inference_priority3": ("inference_priority3", _PRIO),
    "experimental_flags": ("experimental_flags", _parse_flags),
    "gpu_experimental_enable_quant": ("enable_quant", _parse_bool),
    "enable_quantization": ("enable_quant", _parse_bool),
    "max_delegated_partitions": ("max_delegated_partitions", _parse_partitions),
    "serialization_dir": ("serialization_dir", _parse_str),
    "delegate_serialize_dir": ("serialization_dir", _parse_str),
    "model_token": ("model_token", _parse_str),
    "delegate_serialize_token": ("model_token", _parse_str),
    "wait_type": ("wait_type", _WAIT),
    "gpu_wait_type": ("wait_type", _WAIT),
    "gpu_backend": ("gpu_backend", _parse_backend),
    "device": ("device", _parse_str),
}


class GpuDelegate:
    """TfLiteGpuDelegateV2Create / TFLGpuDelegateCreate. Raises RuntimeError when no OpenCL device
    can be used (the message says why); the CPU interpreter keeps working."""

    def __init__(self, options: Optional[GpuDelegateOptions] = None, **kwargs):
        if options is None:
            options = GpuDelegateOptions(**kwargs)
        elif kwargs:
            raise ValueError("pass either a GpuDelegateOptions or keyword options, not both")
        elif not isinstance(options, GpuDelegateOptions):
            hint = f"; for a device write GpuDelegate(device={options!r})" if isinstance(options, (str, int)) else ""
            raise TypeError(f"GpuDelegate(options): expected a GpuDelegateOptions, got {type(options).__name__}{hint}")
        else:
            options._validate()  # fields may have been assigned after construction
        self.options = options
        self._shared = options.device if (options.device is not None and not isinstance(options.device, (int, str))) else None
        self._core = _core.GpuDelegate(options._to_core())
        self._core.init()
        self._buffers: Dict[int, Any] = {}

    def _modify_graph(self, interpreter) -> None:
        if self._core.closed:
            raise RuntimeError("the GPU delegate was closed (TfLiteGpuDelegateV2Delete); create a new one")
        interpreter._core.modify_graph_with_delegate(self._core)

    def info(self) -> Dict[str, Any]:
        """Device, precision and the last partitioning (refused nodes with reasons)."""
        return self._core.info()

    def bind_buffer_to_tensor(self, tensor_index: int, buffer, dtype=np.float32) -> None:
        """TFLGpuDelegateBindMetalBufferToTensor / TfLiteGpuDelegateBindBufferToTensor: after
        ``modify_graph_with_delegate``, invoke reads input ``tensor_index`` straight from ``buffer``
        or writes output ``tensor_index`` straight into it (no host copy).

        ``buffer``: a ``pyopencl.Buffer`` (or a raw ``cl_mem`` int) of the delegate's OpenCL
        context (create the delegate with ``device=`` your pyopencl Context or CommandQueue),
        holding the whole tensor in BHWC order as ``dtype`` values: float32, or float16 when the
        delegate allows precision loss. Quantized tensors are bound as their dequantized float
        values. ``None`` unbinds (host copies again). Inputs must be model inputs that only the
        GPU partition reads. The delegate keeps a reference to the buffer while bound.

        Work enqueued on another queue than the delegate's must be finished before invoke
        (sharing the queue through ``device=`` orders it). A bound output is not copied to host
        memory when the interpreter has ``set_allow_buffer_handle_output(True)``; otherwise it is
        copied too, as TFLite's Invoke does. Resizing an input drops the bindings: invoke then
        fails until they are bound again (or unbound).
        A ``pyopencl.Buffer`` whose ``release()`` was called is refused (ValueError); releasing
        it while bound is safe (the delegate retains the memory until unbound). A raw ``cl_mem``
        int must be live: a freed handle cannot be recognised by any OpenCL call (they would read
        the freed memory), so passing one is undefined behaviour, as in OpenCL itself."""
        if self._core.closed:
            raise RuntimeError("the GPU delegate was closed (TfLiteGpuDelegateV2Delete); create a new one")
        if isinstance(tensor_index, bool) or not isinstance(tensor_index, (int, np.integer)):
            raise TypeError(f"bind_buffer_to_tensor: tensor_index must be an int, got {type(tensor_index).__name__}")
        index = int(tensor_index)
        try:
            dt = np.dtype(dtype)
        except TypeError as e:
            raise TypeError(f"bind_buffer_to_tensor: dtype {dtype!r} is not a numpy dtype") from e
        if dt not in (np.dtype(np.float32), np.dtype(np.float16)):
            raise ValueError(f"bind_buffer_to_tensor: a bound buffer holds float32 or float16 values, not {dt}")
        if buffer is None:
            handle = 0
        elif isinstance(buffer, (int, np.integer)) and not isinstance(buffer, bool):
            handle = int(buffer)
            if handle <= 0 or handle >= 1 << 64:
                raise ValueError(f"bind_buffer_to_tensor: {handle} is not a cl_mem handle")
        elif hasattr(buffer, "int_ptr"):
            if getattr(buffer, _RELEASED, False):
                raise ValueError(f"bind_buffer_to_tensor: the {type(buffer).__name__} was released (release() "
                                 "freed its OpenCL memory or gave it back to its pool); bind a live buffer")
            try:
                handle = int(buffer.int_ptr)
            except Exception as e:  # pyopencl raises once the buffer was released
                raise ValueError(f"bind_buffer_to_tensor: the {type(buffer).__name__} cannot be used: {e} "
                                 "(was it released?)") from e
            if handle == 0:
                raise ValueError(f"bind_buffer_to_tensor: the {type(buffer).__name__} has no OpenCL handle "
                                 "(was it released?)")
        else:
            raise TypeError("bind_buffer_to_tensor: buffer must be a pyopencl.Buffer, a cl_mem handle (int) or None, "
                            f"got {type(buffer).__name__}")
        self._core.bind_buffer(index, handle, dt == np.dtype(np.float16))
        if buffer is None:
            self._buffers.pop(index, None)
        else:
            self._buffers[index] = buffer

    def transfer_stats(self) -> Dict[str, int]:
        """Host<->device transfers this delegate enqueued so far: ``host_to_device`` /
        ``device_to_host`` (clEnqueueWriteBuffer / clEnqueueReadBuffer commands) and their
        ``*_bytes``. Constants uploaded when the model is prepared are not counted. Empty before
        the device is initialised."""
        s = self._core.transfer_stats()
        return {k: v for k, v in s.items() if not k.startswith("pinned_host_")}

    def pinned_host_memory(self) -> Dict[str, int]:
        """Pinned host memory this delegate holds now: ``buffers`` and ``bytes``. The inputs and
        outputs of its partitions live there (set_tensor writes it, invoke uploads from it by
        direct DMA) unless TFLITE_GPU_PINNED_HOST=0; it is freed with the interpreter. Empty
        before the device is initialised."""
        s = self._core.transfer_stats()
        return {k[len("pinned_host_"):]: v for k, v in s.items() if k.startswith("pinned_host_")}

    def close(self) -> None:
        """TfLiteGpuDelegateV2Delete: the delegate can no longer be applied."""
        self._core.close()

    @property
    def closed(self) -> bool:
        return self._core.closed

    def cache_info(self) -> Dict[str, Any]:
        """What the caches did: the compiled-program cache (dir, refused, memory_hits, disk_hits,
        source_builds, disk_writes, disk_rejects, disk_write_errors) and, under 'serialization',
        the serialized prepared models (enabled, dir, disabled_reason, hits, misses, writes,
        write_errors, rejected, reject_reasons, files). README.md, "Serialization"."""
        return self._core.cache_info()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def list_devices() -> List[Dict[str, Any]]:
    """OpenCL platforms/devices; `selected` marks the one a default GpuDelegate would use."""
    try:
        devs = _core.list_devices()
    except RuntimeError as e:
        logger.info("no OpenCL: %s", e)
        return []
    try:
        sel = _core.default_device("")
    except RuntimeError:
        sel = -1
    for d in devs:
        d["selected"] = d["index"] == sel
    return devs


class CompatibilityList:
    """Answers whether the GPU delegate would help here: a real GPU that passes a probe (context,
    compile, run a tiny kernel). PoCL on the CPU works for the delegate but is not 'supported'
    here, so code written like the TFLite guide falls back to CPU threads."""

    def __init__(self):
        self._probe: Optional[Dict[str, Any]] = None

    def _run_probe(self) -> Dict[str, Any]:
        if self._probe is None:
            result: Dict[str, Any] = {"ok": False, "reason": "", "device": None}
            gpus = [d for d in list_devices() if d["type"] == "GPU"]
            if not gpus:
                result["reason"] = "no OpenCL GPU device"
            else:
                try:
                    from .testing.builder import ModelBuilder
                    import numpy as np
                    from .interpreter import Interpreter
                    b = ModelBuilder()
                    x = b.add_input([1, 2, 2, 4])
                    y = b.add_tensor([1, 2, 2, 4])
                    b.add_op("ADD", [x, x], [y], options=dict(fused_activation_function="NONE"))
                    b.mark_output(y)
                    dlg = GpuDelegate(GpuDelegateOptions(device="gpu"))
                    it = Interpreter(model_content=b.build(), experimental_delegates=[dlg])
                    it.allocate_tensors()
                    v = np.arange(16, dtype=np.float32).reshape(1, 2, 2, 4)
                    it.set_tensor(x, v)
                    it.invoke()
                    ok = np.allclose(it.get_tensor(y), 2 * v) and it.delegation_report()["delegated_nodes"] == 1
                    result.update(ok=bool(ok), device=dlg.info()["device_name"],
                                  reason="" if ok else "the probe kernel gave wrong results")
                except Exception as e:  # the probe answers 'no', it never raises
                    result["reason"] = f"probe failed: {e}"
            self._probe = result
        return self._probe

    def probe_result(self) -> Dict[str, Any]:
        """The probe behind the answer: {'ok': bool, 'reason': why not ('' when ok), 'device':
        the GPU's name or None}. Run once per CompatibilityList; never raises."""
        return dict(self._run_probe())

    def is_delegate_supported_on_this_device(self) -> bool:
        return self._run_probe()["ok"]

    def best_options_for_this_device(self) -> GpuDelegateOptions:
        p = self._run_probe()
        if not p["ok"]:
            return GpuDelegateOptions()
        return GpuDelegateOptions(device="gpu", is_precision_loss_allowed=True,
                                  inference_priority1=InferencePriority.MIN_LATENCY)
