"""tflite_gpu.Interpreter: a drop-in for tf.lite.Interpreter backed by the C++ core."""
from __future__ import annotations

import enum
import os
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from . import _core

_NP_TYPES = {
    0: np.float32, 1: np.float16, 2: np.int32, 3: np.uint8, 4: np.int64, 5: np.object_, 6: np.bool_,
    7: np.int16, 8: np.complex64, 9: np.int8, 10: np.float64, 11: np.complex128, 12: np.uint64,
    15: np.uint32, 16: np.uint16,
}


class OpResolverType(enum.Enum):
    """Mirror of tf.lite.experimental.OpResolverType. BUILTIN_REF runs the plain reference kernels."""
    AUTO = 0
    BUILTIN = 1
    BUILTIN_REF = 2
    BUILTIN_WITHOUT_DEFAULT_DELEGATES = 3


def _details(info: Dict[str, Any]) -> Dict[str, Any]:
    scales = np.asarray(info["scales"], dtype=np.float32)
    zps = np.asarray(info["zero_points"], dtype=np.int32)
    quant = (float(scales[0]), int(zps[0]) if zps.size else 0) if scales.size == 1 else (0.0, 0)
    sp = info.get("sparsity")
    sparsity: Dict[str, Any] = {}
    if sp:
        dims = []
        for d in sp["dim_metadata"]:
            if d["format"] == 0:
                dims.append({"format": 0, "dense_size": d["dense_size"]})
            else:
                dims.append({"format": 1, "array_segments": np.asarray(d["array_segments"], np.int32),
                             "array_indices": np.asarray(d["array_indices"], np.int32)})
        sparsity = {"traversal_order": np.asarray(sp["traversal_order"], np.int32),
                    "block_map": np.asarray(sp["block_map"], np.int32), "dim_metadata": dims}
    return {
        "name": info["name"],
        "index": info["index"],
        "shape": np.asarray(info["shape"], dtype=np.int32),
        "shape_signature": np.asarray(info["shape_signature"], dtype=np.int32),
        "dtype": _NP_TYPES.get(info["type"], np.void),
        "quantization": quant,
        "quantization_parameters": {"scales": scales, "zero_points": zps,
                                    "quantized_dimension": info["quantized_dimension"]},
        "sparsity_parameters": sparsity,
    }


class Interpreter:
    """Interpreter(model_path=None, model_content=None, experimental_delegates=None, num_threads=None)

    Same calls and dict layouts as tf.lite.Interpreter. Extra keyword arguments:
    ``experimental_op_resolver_type`` (OpResolverType.BUILTIN_REF selects the plain reference
    kernels) and ``use_reference_kernels`` (the same, as a bool).
    """

    def __init__(self, model_path: Optional[str] = None, model_content: Optional[bytes] = None,
                 experimental_delegates: Optional[Sequence[Any]] = None, num_threads: Optional[int] = None,
                 experimental_op_resolver_type: OpResolverType = OpResolverType.AUTO,
                 experimental_preserve_all_tensors: bool = False, use_reference_kernels: bool = False):
        if model_path is None and model_content is None:
            raise ValueError("Interpreter needs model_path or model_content")
        if model_path is not None and model_content is not None:
            raise ValueError("Interpreter takes model_path or model_content, not both")
        if num_threads is not None:
            if not isinstance(num_threads, int) or isinstance(num_threads, bool):
                raise ValueError("type of num_threads should be int")
            if num_threads < -1 or num_threads == 0:
                raise ValueError("num_threads should be >= 1 (or -1 for the default)")
        if model_path is not None:
            model_path = os.fspath(model_path)
        ref = use_reference_kernels or experimental_op_resolver_type == OpResolverType.BUILTIN_REF
        self._core = _core.Interpreter(model_path=model_path, model_content=model_content,
                                       num_threads=-1 if num_threads is None else num_threads,
                                       use_reference_kernels=bool(ref))
        self._delegates: List[Any] = []
        for d in experimental_delegates or ():
            self.modify_graph_with_delegate(d)

    # ---- allocation and execution ----
    def allocate_tensors(self) -> None:
        self._core.allocate_tensors(0)

    def invoke(self) -> None:
        self._core.invoke(0)

    def reset_all_variables(self) -> None:
        """Resets every variable tensor (is_variable, e.g. LSTM state) of every subgraph to zero.

        As in LiteRT 2.3, resource variables (VAR_HANDLE/ASSIGN_VARIABLE) keep their values and
        CALL_ONCE init subgraphs that already ran do not run again."""
        self._core.reset_variable_tensors()

    def num_subgraphs(self) -> int:
        return self._core.num_subgraphs()

    def resize_tensor_input(self, input_index: int, tensor_size, strict: bool = False) -> None:
        dims = [int(d) for d in np.asarray(tensor_size).reshape(-1)]
        self._core.resize_input(0, int(input_index), dims, bool(strict))

    # ---- tensors ----
    def _check_index(self, index: int) -> int:
        n = self._core.num_tensors(0)
        if not isinstance(index, (int, np.integer)) or isinstance(index, bool):
            raise ValueError(f"Tensor index must be an int, got {type(index).__name__}")
        if index < 0 or index >= n:
            raise ValueError(f"Tensor index {index} out of range (the model has {n} tensors)")
        return int(index)

    def get_input_details(self) -> List[Dict[str, Any]]:
        return [_details(self._core.tensor_info(0, i)) for i in self._core.inputs(0)]

    def get_output_details(self) -> List[Dict[str, Any]]:
        return [_details(self._core.tensor_info(0, i)) for i in self._core.outputs(0)]

    def get_tensor_details(self) -> List[Dict[str, Any]]:
        return [_details(self._core.tensor_info(0, i)) for i in range(self._core.num_tensors(0))]

    def set_tensor(self, tensor_index: int, value) -> None:
        idx = self._check_index(tensor_index)
        if not isinstance(value, np.ndarray):
            info = self._core.tensor_info(0, idx)
            value = np.asarray(value, dtype=_NP_TYPES.get(info["type"]))
        self._core.set_tensor(0, idx, value)

    def get_tensor(self, tensor_index: int, subgraph_index: int = 0) -> np.ndarray:
        return self._core.get_tensor(subgraph_index, self._check_index(tensor_index))

    def tensor(self, tensor_index: int):
        """Returns a callable that gives a numpy view of the tensor's current buffer (like tf.lite).

        LiteRT's rule holds: while any array obtained from the callable (or a slice of it) is
        alive, invoke(), allocate_tensors(), resize_tensor_input() and delegation raise
        RuntimeError ("There is at least 1 reference to internal data ..."), so a view can never
        outlive or alias a moved buffer. Hold the callable, not the array."""
        idx = self._check_index(tensor_index)
        return lambda: self._core.tensor_view(0, idx)

    # ---- signatures ----
    def get_signature_list(self) -> Dict[str, Dict[str, List[str]]]:
        return {s["key"]: {"inputs": sorted(s["inputs"]), "outputs": sorted(s["outputs"])}
                for s in self._core.signatures()}

    def get_signature_runner(self, signature_key: Optional[str] = None) -> "SignatureRunner":
        sigs = {s["key"]: s for s in self._core.signatures()}
        if signature_key is None:
            if len(sigs) != 1:
                raise ValueError("SignatureDef signature_key is None and the model has "
                                 f"{len(sigs)} signatures; pass one of {sorted(sigs)}")
            signature_key = next(iter(sigs))
        if signature_key not in sigs:
            raise ValueError(f"Invalid signature_key provided: {signature_key!r}; the model has {sorted(sigs)}")
        return SignatureRunner(self, sigs[signature_key])

    # ---- delegates (the C++-style calls) ----
    def modify_graph_with_delegate(self, delegate) -> None:
        apply = getattr(delegate, "_modify_graph", None)
        if apply is None:
            raise ValueError(f"{delegate!r} is not a tflite_gpu delegate")
        apply(self)
        self._delegates.append(delegate)

    def set_allow_buffer_handle_output(self, allow: bool) -> None:
        self._allow_buffer_handle_output = bool(allow)
        fn = getattr(self._core, "set_allow_buffer_handle_output", None)
        if fn is not None:
            fn(bool(allow))

    def ensure_tensor_data_is_readable(self, tensor_index: int) -> None:
        idx = self._check_index(tensor_index)
        fn = getattr(self._core, "ensure_tensor_data_is_readable", None)
        if fn is not None:
            fn(idx)

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

    def _get_ops_details(self) -> List[Dict[str, Any]]:
        return [{"index": n["index"], "op_name": n["op_name"], "inputs": np.asarray(n["inputs"]),
                 "outputs": np.asarray(n["outputs"]), "version": n["version"]} for n in self._core.nodes(0)]

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
    """Runs one signature: runner(**inputs) -> {output_name: ndarray}, like tf.lite's."""

    def __init__(self, interpreter: Interpreter, sig: Dict[str, Any]):
        self._interp = interpreter
        self._core = interpreter._core
        self._sg = sig["subgraph"]
        self._inputs: Dict[str, int] = dict(sig["inputs"])
        self._outputs: Dict[str, int] = dict(sig["outputs"])
        self._allocated = False

    def get_input_details(self) -> Dict[str, Dict[str, Any]]:
        return {k: _details(self._core.tensor_info(self._sg, i)) for k, i in self._inputs.items()}

    def get_output_details(self) -> Dict[str, Dict[str, Any]]:
        return {k: _details(self._core.tensor_info(self._sg, i)) for k, i in self._outputs.items()}

    def __call__(self, **kwargs) -> Dict[str, np.ndarray]:
        missing = set(self._inputs) - set(kwargs)
        extra = set(kwargs) - set(self._inputs)
        if extra:
            raise ValueError(f"Invalid Input name ({sorted(extra)[0]}) for SignatureDef; inputs are {sorted(self._inputs)}")
        if missing:
            raise ValueError(f"Missing input(s) for SignatureDef: {sorted(missing)}")
        for name, value in kwargs.items():
            idx = self._inputs[name]
            value = np.asarray(value)
            info = self._core.tensor_info(self._sg, idx)
            if list(value.shape) != list(info["shape"]):
                self._core.resize_input(self._sg, idx, [int(d) for d in value.shape], False)
                self._allocated = False
        if not self._allocated or not self._core.allocated(self._sg):
            self._core.allocate_tensors(self._sg)
            self._allocated = True
        for name, value in kwargs.items():
            self._core.set_tensor(self._sg, self._inputs[name], np.asarray(value))
        self._core.invoke(self._sg)
        return {k: self._core.get_tensor(self._sg, i) for k, i in self._outputs.items()}
