"""tflite_gpu.interpreter: mirrors ``ai_edge_litert.interpreter`` (and ``tf.lite``) name by name.

A script written for LiteRT runs with only the import swapped::

    from tflite_gpu.interpreter import Interpreter, load_delegate   # was: ai_edge_litert.interpreter

Module names: :class:`Interpreter`, :class:`InterpreterWithCustomOps`, :class:`SignatureRunner`,
:class:`OpResolverType`, :class:`Delegate`, :func:`load_delegate`. Every public ``Interpreter``
method and keyword of LiteRT is here with LiteRT's behaviour, dict layouts and exception types.

Where this module differs from LiteRT (on purpose, documented):

* ``num_threads=None`` means one thread, as in LiteRT; ``num_threads`` must be an int >= 1
  (ValueError otherwise, as LiteRT).
* ``model_content`` may be ``bytes``, ``bytearray``, ``memoryview`` or any contiguous buffer
  (LiteRT takes only ``bytes``); the bytes are copied, so the buffer may change afterwards.
* ``experimental_op_resolver_type``: ``BUILTIN_REF`` runs the plain reference kernels; ``AUTO``,
  ``BUILTIN`` and ``BUILTIN_WITHOUT_DEFAULT_DELEGATES`` run the optimized CPU kernels (there is no
  default delegate here: the GPU runs only when a GPU delegate is given).
* ``experimental_preserve_all_tensors=True``: every tensor gets memory of its own, so each
  intermediate tensor keeps the value its op wrote (read it with ``get_tensor``). Tensors inside
  a delegated GPU partition live on the device and cannot be read (as in LiteRT with a delegate).
* ``experimental_disable_delegate_clustering``, ``experimental_default_delegate_latest_features``,
  ``experimental_disable_delegate_node_fusion``, ``experimental_force_delegate_node_profiling``
  are accepted and have no effect: the GPU delegate keeps graph order (no clustering across
  control dependencies), has no flag-protected features, fuses within a partition only, and is
  profiled per kernel by ``enable_profiling()``. ``experimental_compress_quantization_zero_points``
  is accepted and reported back by the property of that name (zero points are kept as given).
* Errors of ``allocate_tensors()`` and ``resize_tensor_input()`` raise
  :class:`InterpreterError`, which is both a ``RuntimeError`` (what LiteRT raises) and a
  ``ValueError`` (what this package raises for invalid models and arguments).
* ``load_delegate`` of the GPU delegate library (``libtensorflowlite_gpu_delegate.so``, any
  name containing ``gpu_delegate``, or this package's own library) returns this package's GPU
  delegate configured from the external-delegate option keys (see :func:`load_delegate`). Other
  libraries raise what LiteRT raises (OSError when it cannot be loaded, ValueError when it is a
  TFLite delegate plugin, which this engine cannot run).
* ``InterpreterWithCustomOps`` also takes custom ops written in Python (:class:`CustomOp`).
"""
from __future__ import annotations

import ctypes
import enum
import os
import warnings
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

import numpy as np

from . import _core

_NP_TYPES = {
    0: np.float32, 1: np.float16, 2: np.int32, 3: np.uint8, 4: np.int64, 5: np.bytes_, 6: np.bool_,
    7: np.int16, 8: np.complex64, 9: np.int8, 10: np.float64, 11: np.complex128, 12: np.uint64,
    15: np.uint32, 16: np.uint16,
    # Packed types are held unpacked, one byte per element (LiteRT's Python API reports these too).
    17: np.int8, 19: np.int8, 20: np.uint8,
}
try:  # BFLOAT16 has a numpy dtype only through ml_dtypes (LiteRT's Python API uses it as well)
    import ml_dtypes as _ml_dtypes
    _NP_TYPES[18] = _ml_dtypes.bfloat16
except ImportError:  # pragma: no cover - bfloat16 tensors then say they need ml_dtypes
    pass


class InterpreterError(RuntimeError, ValueError):
    """Raised by allocate_tensors() / resize_tensor_input() / an unresolved custom op.

    A RuntimeError, as LiteRT raises for these, and a ValueError, as this package raises for an
    invalid model or argument; the message names the node, op and problem."""


@enum.unique
class OpResolverType(enum.Enum):
    """Mirror of LiteRT's OpResolverType.

    * ``AUTO``, ``BUILTIN``, ``BUILTIN_WITHOUT_DEFAULT_DELEGATES``: the optimized CPU kernels
      (no delegate is applied by default here).
    * ``BUILTIN_REF``: the plain reference kernels (the test oracle; slower)."""
    AUTO = 0
    BUILTIN = 1
    BUILTIN_REF = 2
    BUILTIN_WITHOUT_DEFAULT_DELEGATES = 3


def _resolver_type(value) -> Optional[OpResolverType]:
    if isinstance(value, OpResolverType):
        return value
    # Accept LiteRT's / tf.lite's own enum (same member names).
    if isinstance(value, enum.Enum) and type(value).__name__ == "OpResolverType":
        return OpResolverType.__members__.get(value.name)
    return None


def _details(info: Dict[str, Any]) -> Dict[str, Any]:
    """LiteRT's tensor-details dict, key by key and type by type."""
    block = int(info.get("block_size", 0))
    # Blockwise quantization: LiteRT gives the scale tensor's values in its own dtype (float16).
    scales = np.asarray(info["scales"], dtype=None if block else np.float32).reshape(-1)
    if scales.dtype == np.float64:  # an empty list
        scales = scales.astype(np.float32)
    zps = np.asarray(info["zero_points"], dtype=np.int32).reshape(-1)
    quant = (float(scales[0]), int(zps[0]) if zps.size else 0) if scales.size == 1 and not block else (0.0, 0)
    sp = info.get("sparsity")
    sparsity: Dict[str, Any] = {}
    if sp:
        dims = []
        for d in sp["dim_metadata"]:
            if d["format"] == 0:
                dims.append({"format": 0, "dense_size": int(d["dense_size"])})
            else:
                dims.append({"format": 1, "array_segments": np.asarray(d["array_segments"], np.int32),
                             "array_indices": np.asarray(d["array_indices"], np.int32)})
        sparsity = {"traversal_order": np.asarray(sp["traversal_order"], np.int32)}
        if len(sp["block_map"]):  # LiteRT gives block_map only when the model has one
            sparsity["block_map"] = np.asarray(sp["block_map"], np.int32)
        sparsity["dim_metadata"] = dims
    return {
        "name": info["name"],
        "index": int(info["index"]),
        "shape": np.asarray(info["shape"], dtype=np.int32),
        "shape_signature": np.asarray(info["shape_signature"], dtype=np.int32),
        "dtype": _NP_TYPES.get(info["type"], np.void),
        "quantization": quant,
        "quantization_parameters": {"scales": scales, "zero_points": zps,
                                    "quantized_dimension": int(info["quantized_dimension"]),
                                    "block_size": block},
        "sparsity_parameters": sparsity,
    }


# ---------------------------------------------------------------------------------------------
# Delegates
# ---------------------------------------------------------------------------------------------
def _is_gpu_delegate_library(library) -> bool:
    try:
        path = os.fspath(library)
    except TypeError:
        return False
    if not isinstance(path, str):
        path = os.fsdecode(path)
    base = os.path.basename(path).lower()
    if "gpu_delegate" in base or "gpudelegate" in base or base.startswith("libtflite_gpu"):
        return True
    pkg = os.path.dirname(os.path.abspath(__file__))
    try:
        return os.path.commonpath([os.path.realpath(path), os.path.realpath(pkg)]) == os.path.realpath(pkg)
    except ValueError:
        return False


class Delegate:
    """LiteRT's ``Delegate(library, options=None)``.

    For the GPU delegate library (see :func:`load_delegate`) it holds this package's
    :class:`~tflite_gpu.GpuDelegate` configured from ``options`` (the external-delegate keys).
    Any other library is loaded as LiteRT loads it (``OSError`` when it cannot be loaded,
    ``AttributeError`` when it is not a delegate plugin); a TFLite delegate plugin is then
    refused with ``ValueError``: this engine does not run TFLite's C delegate interface."""

    def __init__(self, library, options: Optional[Mapping[str, Any]] = None):
        self._gpu = None
        self.library = library
        if _is_gpu_delegate_library(library):
            from .delegate import GpuDelegate, GpuDelegateOptions
            opts = GpuDelegateOptions.from_external_options(options)
            try:
                self._gpu = GpuDelegate(opts)
            except RuntimeError as e:  # no usable OpenCL device: the delegate cannot be created
                raise ValueError(f"the GPU delegate cannot be created: {e}") from None
            self.options = opts
            return
        lib = ctypes.pydll.LoadLibrary(library)          # OSError, as LiteRT
        lib.tflite_plugin_create_delegate                # AttributeError, as LiteRT
        raise ValueError(f"{library} is a TensorFlow Lite external delegate plugin; tflite_gpu runs models "
                         "with its own engine and applies only its own GPU delegate (load it with "
                         "load_delegate('libtensorflowlite_gpu_delegate.so', options))")

    def _modify_graph(self, interpreter) -> None:
        self._gpu._modify_graph(interpreter)

    @property
    def gpu_delegate(self):
        """The :class:`~tflite_gpu.GpuDelegate` this object holds."""
        return self._gpu

    def close(self) -> None:
        if self._gpu is not None:
            self._gpu.close()

    def __repr__(self) -> str:
        return f"<tflite_gpu.interpreter.Delegate {self.library!r}>"


def load_delegate(library, options: Optional[Mapping[str, Any]] = None) -> Delegate:
    """LiteRT's ``load_delegate(library, options=None)``.

    The GPU delegate library names people use -- ``libtensorflowlite_gpu_delegate.so``, any name
    containing ``gpu_delegate``, and this package's own library (``libtflite_gpu.so``, or any path
    inside the installed package) -- give this package's GPU delegate. ``options`` takes the keys of
    TFLite's GPU external delegate and of its benchmark tool (values may be strings, as LiteRT
    passes them, or Python values):

    ==========================================================  ===================================
    ``is_precision_loss_allowed`` / ``gpu_precision_loss_allowed``  bool (``1``/``0``/``true``/``false``)
    ``inference_preference`` / ``gpu_inference_preference``       0..2 or ``FAST_SINGLE_ANSWER``,
                                                                  ``SUSTAINED_SPEED``, ``BALANCED``
    ``gpu_inference_for_sustained_speed``                         bool (SUSTAINED_SPEED)
    ``inference_priority1..3`` / ``gpu_inference_priority1..3``   0..3 or ``AUTO``, ``MAX_PRECISION``,
                                                                  ``MIN_LATENCY``, ``MIN_MEMORY_USAGE``
    ``experimental_flags``                                        int or names joined by ``|``
                                                                  (``ENABLE_QUANT|CL_ONLY``)
    ``gpu_experimental_enable_quant`` / ``enable_quantization``   bool
    ``max_delegated_partitions``                                  int >= 0 (0: no limit)
    ``serialization_dir`` / ``delegate_serialize_dir``            path
    ``model_token`` / ``delegate_serialize_token``                string
    ``wait_type`` / ``gpu_wait_type``                             ``passive``, ``active``,
                                                                  ``do_not_wait``, ``aggressive``
    ``gpu_backend``                                               ``cl`` (the only backend here)
    ``device``                                                    OpenCL device: index, name part,
                                                                  ``gpu`` or ``cpu``
    ==========================================================  ===================================

    An unknown key or a bad value raises ValueError naming it. Like LiteRT, a delegate that cannot
    be created raises ``ValueError('Failed to load delegate from <library>\\n<why>')`` -- so the
    documented ``except ValueError:`` fallback to the CPU works when no OpenCL device exists.
    Other libraries: see :class:`Delegate`."""
    try:
        return Delegate(library, options)
    except ValueError as e:
        raise ValueError("Failed to load delegate from {}\n{}".format(library, str(e))) from None


# ---------------------------------------------------------------------------------------------
# Custom ops written in Python
# ---------------------------------------------------------------------------------------------
class CustomOp:
    """A custom op implemented in Python, for ``InterpreterWithCustomOps``.

    ``CustomOp(name, fn, shape_fn=None)``: a model's CUSTOM op whose custom code is ``name`` runs
    ``fn(*inputs) -> output or tuple of outputs`` on the CPU, with numpy arrays in (copies of the
    input tensors; ``None`` for an omitted optional input) and numpy arrays out. Each returned
    array must have the dtype the model declares for that output (no silent casts).

    Output shapes: with ``shape_fn(*input_shapes) -> [output_shape, ...]`` (a bare shape is
    accepted for one output) they are fixed at ``allocate_tensors()`` and every call must return
    exactly them; without it the outputs are dynamic and take the shapes ``fn`` returns at every
    ``invoke()`` (ops after it are re-prepared for those shapes).

    An exception raised by ``fn`` makes ``invoke()`` raise RuntimeError with its message. A node
    running a Python op is never delegated to the GPU (the rest of the model may be)."""

    def __init__(self, name: str, fn: Callable[..., Any], shape_fn: Optional[Callable[..., Any]] = None):
        if not isinstance(name, str) or not name:
            raise ValueError("CustomOp: name must be a non-empty str (the model's custom_code)")
        if not callable(fn):
            raise ValueError(f"CustomOp {name!r}: fn must be callable")
        if shape_fn is not None and not callable(shape_fn):
            raise ValueError(f"CustomOp {name!r}: shape_fn must be callable or None")
        self.name, self.fn, self.shape_fn = name, fn, shape_fn

    def __repr__(self) -> str:
        return f"CustomOp({self.name!r})"


def _collect_custom_ops(registerers, custom_ops) -> Dict[str, tuple]:
    out: Dict[str, tuple] = {}

    def add(op: CustomOp):
        if op.name in out:
            raise ValueError(f"custom op {op.name!r} registered twice")
        out[op.name] = (op.fn, op.shape_fn)

    for r in registerers or ():
        if isinstance(r, CustomOp):
            add(r)
        elif isinstance(r, str):
            # LiteRT looks the registerer up as a symbol of the process and calls it with a
            # tflite::MutableOpResolver*: the same lookup error for a missing symbol; an existing
            # one is TFLite C++ code this engine cannot call.
            try:
                getattr(ctypes.CDLL(None), r)
            except AttributeError:
                raise ValueError(f"Looking up symbol '{r}' failed: it is not a symbol of this process") from None
            raise ValueError(f"custom op registerer '{r}' is a TensorFlow Lite C++ function (it registers into a "
                             "tflite::MutableOpResolver), which tflite_gpu cannot use; register the op in Python "
                             "with tflite_gpu.interpreter.CustomOp(name, fn)")
        elif callable(r):
            raise ValueError(f"custom op registerer {r!r} is a function taking a tflite::MutableOpResolver pointer, "
                             "which tflite_gpu cannot provide; register the op in Python with "
                             "tflite_gpu.interpreter.CustomOp(name, fn)")
        else:
            raise ValueError(f"custom_op_registerers entries must be CustomOp objects, symbol names or "
                             f"functions, got {type(r).__name__}")
    for name, v in (custom_ops or {}).items():
        if isinstance(v, CustomOp):
            add(v if v.name == name else CustomOp(name, v.fn, v.shape_fn))
        elif isinstance(v, tuple):
            add(CustomOp(name, *v))
        else:
            add(CustomOp(name, v))
    return out


def _model_bytes(model_content) -> bytes:
    if isinstance(model_content, bytes):
        return model_content
    if isinstance(model_content, str):
        raise TypeError("model_content must be bytes (the .tflite file's content), got str; "
                        "use model_path= for a file name")
    try:
        mv = memoryview(model_content)
    except TypeError:
        raise TypeError(f"model_content must be bytes-like, got {type(model_content).__name__}") from None
    return mv.tobytes()


_PRESERVE_WARNING = ("Warning: Enabling `experimental_preserve_all_tensors` with the BUILTIN or AUTO op resolver is "
                     "intended for debugging purposes only. Be aware that this can significantly increase memory "
                     "usage by storing all intermediate tensors. If you encounter memory problems or are not "
                     "actively debugging, consider disabling this option.")


class Interpreter:
    """Interpreter(model_path=None, model_content=None, experimental_delegates=None, num_threads=None,
    experimental_op_resolver_type=OpResolverType.AUTO, experimental_preserve_all_tensors=False, ...)

    LiteRT's Interpreter: same calls, keywords, dict layouts and exception types (see the module
    docstring for the documented differences). Extra keyword: ``use_reference_kernels`` (the same as
    ``experimental_op_resolver_type=OpResolverType.BUILTIN_REF``)."""

    def __init__(self, model_path=None, model_content=None,
                 experimental_delegates: Optional[Sequence[Any]] = None, num_threads: Optional[int] = None,
                 experimental_op_resolver_type=OpResolverType.AUTO,
                 experimental_preserve_all_tensors: bool = False,
                 experimental_disable_delegate_clustering: bool = False,
                 experimental_default_delegate_latest_features: bool = False,
                 experimental_compress_quantization_zero_points: bool = False,
                 experimental_disable_delegate_node_fusion: bool = False,
                 experimental_force_delegate_node_profiling: bool = False,
                 use_reference_kernels: bool = False):
        if not hasattr(self, "_custom_ops"):
            self._custom_ops: Dict[str, tuple] = {}
        self._experimental_compress_quantization_zero_points = experimental_compress_quantization_zero_points
        resolver = _resolver_type(experimental_op_resolver_type)
        if resolver is None:
            raise ValueError("Unrecognized passed in op resolver type: {}".format(experimental_op_resolver_type))
        if experimental_preserve_all_tensors and resolver in (OpResolverType.AUTO, OpResolverType.BUILTIN):
            warnings.warn(_PRESERVE_WARNING)
        if num_threads is not None:
            if not isinstance(num_threads, int):
                raise ValueError("type of num_threads should be int")
            if num_threads < 1:
                raise ValueError("num_threads should >= 1")
        content = None
        if model_content is not None and not isinstance(model_content, (bytes, str)):
            content = _model_bytes(model_content)  # bytearray, memoryview, numpy buffers
            has_content = True
        else:
            has_content = bool(model_content)
            content = model_content
        if model_path and not has_content:
            path = os.fspath(model_path)
            if not os.path.isfile(path):
                raise ValueError(f"Could not open '{path}': no such file")
            self._core = self._make_core(model_path=path, model_content=None, num_threads=num_threads,
                                         resolver=resolver, preserve=experimental_preserve_all_tensors,
                                         reference=use_reference_kernels)
        elif has_content and not model_path:
            self._model_content = content
            self._core = self._make_core(model_path=None, model_content=_model_bytes(content),
                                         num_threads=num_threads, resolver=resolver,
                                         preserve=experimental_preserve_all_tensors, reference=use_reference_kernels)
        elif not has_content and not model_path:
            raise ValueError("`model_path` or `model_content` must be specified.")
        else:
            raise ValueError("Can't both provide `model_path` and `model_content`")
        self._delegates: List[Any] = []
        for d in experimental_delegates or ():
            self.modify_graph_with_delegate(d)
        self._signature_defs = self.get_signature_list()

    def _make_core(self, model_path, model_content, num_threads, resolver, preserve, reference):
        ref = bool(reference) or resolver == OpResolverType.BUILTIN_REF
        return _core.Interpreter(model_path=model_path, model_content=model_content,
                                 num_threads=1 if num_threads is None else int(num_threads),
                                 use_reference_kernels=ref, preserve_all_tensors=bool(preserve),
                                 custom_ops=dict(self._custom_ops))

    # ---- allocation and execution ----
    def allocate_tensors(self) -> None:
        try:
            self._core.allocate_tensors(0)
        except (ValueError, IndexError, KeyError) as e:
            raise InterpreterError(str(e).strip("'\"") if isinstance(e, KeyError) else str(e)) from None

    def invoke(self) -> None:
        """Runs the model (releases the GIL). RuntimeError when it cannot run (not allocated,
        a kernel or the delegate failed), as LiteRT."""
        self._core.invoke(0)

    def reset_all_variables(self) -> None:
        """Resets every variable tensor (is_variable, e.g. LSTM state) of every subgraph to zero.

        As in LiteRT 2.3, resource variables (VAR_HANDLE/ASSIGN_VARIABLE) keep their values and
        CALL_ONCE init subgraphs that already ran do not run again."""
        self._core.reset_variable_tensors()

    def resize_tensor_input(self, input_index: int, tensor_size, strict: bool = False) -> None:
        # LiteRT converts with np.array(tensor_size, dtype=np.int32).
        dims = [int(d) for d in np.array(tensor_size, dtype=np.int32).reshape(-1)]
        try:
            self._core.resize_input(0, int(input_index), dims, bool(strict))
        except (ValueError, IndexError, KeyError) as e:
            raise InterpreterError(str(e)) from None

    # ---- tensors ----
    def _check_subgraph(self, subgraph_index) -> int:
        if not isinstance(subgraph_index, (int, np.integer)):
            raise TypeError(f"subgraph_index must be an int, got {type(subgraph_index).__name__}")
        n = self._core.num_subgraphs()
        if subgraph_index < 0 or subgraph_index >= n:
            raise ValueError(f"Invalid subgraph index {int(subgraph_index)} exceeds max subgraph index {n}: out of "
                             f"range (the model has {n} subgraphs)")
        return int(subgraph_index)

    def _check_index(self, index, subgraph_index: int = 0) -> int:
        if not isinstance(index, (int, np.integer)):
            raise TypeError(f"Tensor index must be an int, got {type(index).__name__}")
        n = self._core.num_tensors(subgraph_index)
        if index < 0 or index >= n:
            raise ValueError(f"Invalid tensor index {int(index)} exceeds max tensor index {n}: out of range "
                             f"(the model has {n} tensors)")
        return int(index)

    def _get_tensor_details(self, tensor_index, subgraph_index) -> Dict[str, Any]:
        sg = self._check_subgraph(int(subgraph_index))
        return _details(self._core.tensor_info(sg, self._check_index(int(tensor_index), sg)))

    def num_subgraphs(self) -> int:
        """Returns the number of subgraphs in the model."""
        return int(self._core.num_subgraphs())

    def get_input_details(self) -> List[Dict[str, Any]]:
        return [_details(self._core.tensor_info(0, i)) for i in self._core.inputs(0)]

    def get_output_details(self) -> List[Dict[str, Any]]:
        return [_details(self._core.tensor_info(0, i)) for i in self._core.outputs(0)]

    def get_tensor_details(self, subgraph_index: int = 0) -> List[Dict[str, Any]]:
        n = self._core.num_subgraphs()
        if subgraph_index < 0 or subgraph_index >= n:
            raise ValueError(f"subgraph_index is out of range: {subgraph_index} for the model, which has {n} subgraphs.")
        return [_details(self._core.tensor_info(subgraph_index, i))
                for i in range(self._core.num_tensors(subgraph_index))]

    def set_tensor(self, tensor_index: int, value) -> None:
        """Copies ``value`` into the tensor; ValueError on a wrong dtype or shape, as LiteRT.
        ValueError too while an OpenCL buffer is bound to the tensor
        (GpuDelegate.bind_buffer_to_tensor): its data lives in that buffer, as with TFLite's buffer
        handles, so write the buffer, or unbind it first."""
        idx = self._check_index(tensor_index)
        if not isinstance(value, np.ndarray):
            info = self._core.tensor_info(0, idx)
            value = np.asarray(value, dtype=_NP_TYPES.get(info["type"]))
        self._core.set_tensor(0, idx, value)

    def get_tensor(self, tensor_index: int, subgraph_index: int = 0) -> np.ndarray:
        """A copy of the tensor's value. With experimental_preserve_all_tensors=True intermediate
        tensors keep their values after invoke() and can be read here. A GPU output kept on the
        device (set_allow_buffer_handle_output) is copied to host memory first."""
        sg = self._check_subgraph(subgraph_index)
        return self._core.get_tensor(sg, self._check_index(tensor_index, sg))

    def tensor(self, tensor_index: int):
        """Returns a callable that gives a numpy view of the tensor's current buffer (like tf.lite).

        LiteRT's rule holds: while any array obtained from the callable (or a slice of it) is
        alive, invoke(), allocate_tensors(), resize_tensor_input() and delegation raise
        RuntimeError ("There is at least 1 reference to internal data ..."), so a view can never
        outlive or alias a moved buffer. Hold the callable, not the array. The view is read-only for
        constants and for tensors bound to an OpenCL buffer (their data lives in the buffer)."""
        idx = self._check_index(tensor_index)
        return lambda: self._core.tensor_view(0, idx)

    # ---- ops ----
    def _all_nodes(self) -> List[Dict[str, Any]]:
        # The model's nodes, then (after a delegate is applied) one "DELEGATE" node per delegate
        # kernel with the partition's inputs and outputs, as LiteRT lists them.
        return self._core.nodes(0) + self._core.nodes(0, delegate_kernels=True)

    def _get_op_details(self, op_index: int) -> Dict[str, Any]:
        nodes = self._all_nodes()
        if not isinstance(op_index, (int, np.integer)) or op_index < 0 or op_index >= len(nodes):
            raise ValueError("Invalid node index")
        return self._op_entry(nodes[int(op_index)])

    def _op_entry(self, n: Dict[str, Any]) -> Dict[str, Any]:
        ins = np.asarray(n["inputs"], dtype=np.int32)
        outs = np.asarray(n["outputs"], dtype=np.int32)
        return {
            "index": int(n["index"]),
            "op_name": n["op_name"],
            "inputs": ins,
            "outputs": outs,
            "operand_types": [_NP_TYPES.get(self._core.tensor_info(0, int(t))["type"], np.void) for t in ins if t != -1],
            "result_types": [_NP_TYPES.get(self._core.tensor_info(0, int(t))["type"], np.void) for t in outs if t != -1],
        }

    def _get_ops_details(self) -> List[Dict[str, Any]]:
        """One dict per node of the model (LiteRT's keys: index, op_name, inputs, outputs,
        operand_types, result_types); after delegation, one "DELEGATE" node per delegated
        partition follows the model's nodes, as in LiteRT."""
        return [self._op_entry(n) for n in self._all_nodes()]

    # ---- signatures ----
    def _get_full_signature_list(self) -> Dict[str, Dict[str, Dict[str, int]]]:
        return {s["key"]: {"inputs": dict(s["inputs"]), "outputs": dict(s["outputs"])}
                for s in self._core.signatures()}

    def get_signature_list(self) -> Dict[str, Dict[str, List[str]]]:
        """{signature_key: {'inputs': [names], 'outputs': [names]}}, as LiteRT."""
        return {k: {"inputs": list(v["inputs"].keys()), "outputs": list(v["outputs"].keys())}
                for k, v in self._get_full_signature_list().items()}

    def get_signature_runner(self, signature_key: Optional[str] = None) -> "SignatureRunner":
        if signature_key is None:
            if len(self._signature_defs) != 1:
                raise ValueError(
                    "SignatureDef signature_key is None and model has {0} Signatures. "
                    "None is only allowed when the model has 1 SignatureDef".format(len(self._signature_defs)))
            signature_key = next(iter(self._signature_defs))
        return SignatureRunner(interpreter=self, signature_key=signature_key)

    @property
    def experimental_compress_quantization_zero_points(self) -> bool:
        return self._experimental_compress_quantization_zero_points

    # ---- delegates (the C++-style calls) ----
    def modify_graph_with_delegate(self, delegate) -> None:
        apply = getattr(delegate, "_modify_graph", None)
        if apply is None:
            raise ValueError(f"{delegate!r} is not a tflite_gpu delegate")
        apply(self)
        self._delegates.append(delegate)

    def set_allow_buffer_handle_output(self, allow: bool) -> None:
        """Interpreter::SetAllowBufferHandleOutput. With True, invoke() leaves GPU-delegate outputs
        that no CPU node reads on the device (in a bound buffer, see
        GpuDelegate.bind_buffer_to_tensor, or in the delegate's own): no device-to-host copy.
        Their host copies are then stale: ensure_tensor_data_is_readable(i) copies one, and
        get_tensor(i) / tensor(i)() copy it first themselves (one transfer each time the output
        is stale), so a stale value is never returned. False (the default): every output is
        copied to host memory at invoke, bound or not, as TFLite's Invoke does."""
        self._core.set_allow_buffer_handle_output(bool(allow))

    def ensure_tensor_data_is_readable(self, tensor_index: int) -> None:
        """Interpreter::EnsureTensorDataIsReadable: copies a delegate output kept on the device
        to host memory (no-op when it is there already)."""
        self._core.ensure_tensor_data_is_readable(self._check_index(tensor_index))

    def delegation_report(self) -> Dict[str, Any]:
        nodes = self._core.nodes(0)
        infos = self._core.delegate_info()
        unsupported = []
        partitions = 0
        for info in infos:
            partitions += info["partitions"]
            unsupported += [(r[0], r[1], r[2], r[3]) for r in info["refused"]]
        # Nodes folded into constants at allocation (DEQUANTIZE of fp16 weights, ...) run nowhere.
        live = [n for n in nodes if not n["folded"]]
        report = {
            "delegated_nodes": sum(1 for n in live if n["delegated"]),
            "total_nodes": len(live),
            "folded_nodes": len(nodes) - len(live),
            "partitions": partitions,
            "unsupported": unsupported,
        }
        if infos:
            report["device"] = infos[-1]["device_name"]
            report["precision"] = infos[-1]["precision"]
        return report

    # ---- extras ----
    def num_threads(self) -> int:
        return self._core.num_threads()

    def enable_profiling(self, on: bool = True) -> None:
        self._core.set_profiling(bool(on))

    def get_profile(self) -> List[Dict[str, Any]]:
        """Per-step timings of the last invoke (after enable_profiling): name, device, us, nodes.

        CPU nodes are timed with the host clock. A GPU partition is expanded into its kernels,
        timed on the device with OpenCL profiling events (device "GPU", the node each kernel
        came from), plus one entry for what the partition cost beyond its kernels (uploads,
        downloads, launches: device "GPU", name "TfLiteGpuDelegateV2 (transfers/launch)")."""
        steps = self._core.profile(0)
        kernels = self._core.gpu_kernel_times() if any(s["device"] == "GPU" for s in steps) else []
        if not kernels:
            return steps
        ops = {n["index"]: n["op_name"] for n in self._core.nodes(0)}
        out: List[Dict[str, Any]] = []
        for s in steps:
            if s["device"] != "GPU":
                out.append(s)
                continue
            mine = [k for k in kernels if k["node"] in s["nodes"] or k["node"] < 0]
            dev = 0.0
            for k in mine:
                if k["node"] < 0:
                    continue  # boundary conversions are part of the transfers entry
                out.append({"step": s["step"], "name": k["name"] or ops.get(k["node"], "?"), "device": "GPU",
                            "us": k["us"], "nodes": [k["node"]]})
                dev += k["us"]
            out.append({"step": s["step"], "name": "TfLiteGpuDelegateV2 (transfers/launch)", "device": "GPU",
                        "us": max(0.0, s["us"] - dev), "nodes": []})
        return out

    def arena_bytes(self) -> int:
        return self._core.arena_bytes(0)

    def get_metadata(self) -> Dict[str, bytes]:
        return self._core.model_metadata()


class SignatureRunner:
    """LiteRT's SignatureRunner: ``runner(**inputs) -> {output_name: ndarray}``.

    Made by ``Interpreter.get_signature_runner(key)`` (or ``SignatureRunner(interpreter, key)``)."""

    def __init__(self, interpreter: Optional[Interpreter] = None, signature_key: Optional[str] = None):
        if not interpreter:
            raise ValueError("None interpreter provided.")
        if not signature_key:
            raise ValueError("None signature_key provided.")
        self._interpreter = interpreter
        self._signature_key = signature_key
        sigs = {s["key"]: s for s in interpreter._core.signatures()}
        if signature_key not in sigs:
            raise ValueError(f'Invalid signature_key provided: "{signature_key}". The model has {sorted(sigs)}')
        sig = sigs[signature_key]
        self._core = interpreter._core
        self._subgraph_index = int(sig["subgraph"])
        self._inputs: Dict[str, int] = dict(sig["inputs"])
        self._outputs: Dict[str, int] = dict(sig["outputs"])
        self._signature_def = {"inputs": dict(self._inputs), "outputs": dict(self._outputs)}
        self._allocated = False

    def get_input_details(self) -> Dict[str, Dict[str, Any]]:
        return {k: _details(self._core.tensor_info(self._subgraph_index, i)) for k, i in self._inputs.items()}

    def get_output_details(self) -> Dict[str, Dict[str, Any]]:
        return {k: _details(self._core.tensor_info(self._subgraph_index, i)) for k, i in self._outputs.items()}

    def __call__(self, **kwargs) -> Dict[str, np.ndarray]:
        if len(kwargs) != len(self._inputs):
            raise ValueError("Invalid number of inputs provided for running a SignatureDef, expected %s vs provided %s; "
                             "inputs are %s" % (len(self._inputs), len(kwargs), sorted(self._inputs)))
        sg = self._subgraph_index
        values = {}
        for name, value in kwargs.items():
            if name not in self._inputs:
                raise ValueError("Invalid Input name (%s) for SignatureDef; inputs are %s" % (name, sorted(self._inputs)))
            value = np.asarray(value)
            values[name] = value
            idx = self._inputs[name]
            info = self._core.tensor_info(sg, idx)
            if list(value.shape) != list(info["shape"]):
                try:
                    self._core.resize_input(sg, idx, [int(d) for d in value.shape], False)
                except (ValueError, IndexError, KeyError) as e:
                    raise InterpreterError(str(e)) from None
                self._allocated = False
        if not self._allocated or not self._core.allocated(sg):
            try:
                self._core.allocate_tensors(sg)
            except (ValueError, IndexError, KeyError) as e:
                raise InterpreterError(str(e)) from None
            self._allocated = True
        for name, value in values.items():
            self._core.set_tensor(sg, self._inputs[name], value)
        self._core.invoke(sg)
        return {k: self._core.get_tensor(sg, i) for k, i in self._outputs.items()}


class InterpreterWithCustomOps(Interpreter):
    """LiteRT's InterpreterWithCustomOps(custom_op_registerers=None, **kwargs), plus custom ops
    written in Python.

    ``custom_op_registerers``: a list whose entries are :class:`CustomOp` objects (a custom op in
    Python), or LiteRT's symbol names / registerer functions -- those register TFLite C++ kernels
    into a ``tflite::MutableOpResolver``, which this engine cannot use: a missing symbol raises
    LiteRT's ValueError, an existing one a ValueError saying so. ``custom_ops``: the same as a dict
    ``{name: fn | (fn, shape_fn) | CustomOp}``. Example::

        def my_op(x):                       # numpy in, numpy out
            return np.tanh(x) * 2

        it = InterpreterWithCustomOps(model_content=m, custom_op_registerers=[CustomOp("MyOp", my_op)])
    """

    def __init__(self, custom_op_registerers=None, custom_ops: Optional[Mapping[str, Any]] = None, **kwargs):
        self._custom_op_registerers = custom_op_registerers or []
        self._custom_ops = _collect_custom_ops(self._custom_op_registerers, custom_ops)
        super().__init__(**kwargs)


__all__ = ["Interpreter", "InterpreterWithCustomOps", "SignatureRunner", "OpResolverType", "Delegate",
           "load_delegate", "CustomOp", "InterpreterError"]
