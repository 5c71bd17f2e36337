"""The one op-test harness: every op family declares cases in tests/op_cases/<family>.py; the
tests run each case through TensorFlow Lite (ai-edge-litert, the outside oracle), our fast CPU
kernels and our plain reference kernels (and, with the GPU delegate, the GPU path).

A case is a single-op (or few-op) model the suite builds itself plus seeded inputs.
"""
from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from typing import Callable, List, Optional, Sequence

import numpy as np
import pytest


@dataclasses.dataclass
class OpCase:
    op: str                       # the op table name this case covers ("ADD", "Convolution2DTransposeBias")
    name: str                     # short id, unique within the op
    model: Callable[[], bytes]    # builds the .tflite bytes
    inputs: Callable[[np.random.Generator], Sequence[np.ndarray]]  # one array per graph input
    tol: float = 1e-5             # rel-L2 bound vs the oracle (exact match for integer/bool outputs)
    oracle: str = "litert"        # "litert": ai-edge-litert builtin kernels; "litert_xnnpack": with
                                  # its default delegate (for ops only it has); "numpy": ref_fn below
    ref_fn: Optional[Callable[..., Sequence[np.ndarray]]] = None  # independent numpy reference
    gpu: bool = True              # the GPU delegate is expected to take this op (issue 3)
    gpu_tol: Optional[float] = None  # F32_F16 bound if not the default
    fp16_ref: Optional[Callable[..., Sequence[np.ndarray]]] = None  # numpy fp16-storage emulation:
                                  # ref_fn with every stored tensor (inputs, intermediates between
                                  # ops, outputs) rounded to half (fp16_emulation.half); F32_F16's
                                  # bound per output is then 2 x its rel-L2 + 1e-5 (test_gpu_ops)
    gpu_fp16: bool = True         # False: the values do not fit fp16 storage (say why in note)
    note: str = ""
    quant: Optional[str] = None   # the quantized kernel this case covers, named as the op table's
                                  # quantized-kernel column ('int8', 'uint8', 'int16x8', 'hybrid');
                                  # tflite_gpu.testing.quant.quant_kind(dtype) maps a type to it

    @property
    def id(self) -> str:
        return f"{self.op}-{self.name}"


def all_cases() -> List[OpCase]:
    import op_cases  # tests/op_cases
    out: List[OpCase] = []
    for m in pkgutil.iter_modules(op_cases.__path__):
        mod = importlib.import_module(f"op_cases.{m.name}")
        out.extend(getattr(mod, "CASES", []))
    return out


def rel_l2(got: np.ndarray, want: np.ndarray) -> float:
    g = np.asarray(got, np.float64).ravel()
    w = np.asarray(want, np.float64).ravel()
    denom = np.linalg.norm(w)
    diff = np.linalg.norm(g - w)
    return float(diff / denom) if denom > 0 else float(diff)


def run_tflite_gpu(model: bytes, inputs, reference=False, delegates=None, num_threads=2):
    import tflite_gpu
    it = tflite_gpu.Interpreter(model_content=model, use_reference_kernels=reference,
                                experimental_delegates=delegates, num_threads=num_threads)
    return _run(it, inputs)


def run_litert(model: bytes, inputs, xnnpack=False):
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    kind = OpResolverType.AUTO if xnnpack else OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES
    it = Interpreter(model_content=model, experimental_op_resolver_type=kind, num_threads=1)
    return _run(it, inputs)


def _run(it, inputs):
    details = it.get_input_details()
    assert len(details) == len(inputs), f"case gives {len(inputs)} inputs, model has {len(details)}"
    for d, x in zip(details, inputs):
        if list(d["shape"]) != list(x.shape):
            it.resize_tensor_input(d["index"], list(x.shape))
    it.allocate_tensors()
    for d, x in zip(it.get_input_details(), inputs):
        it.set_tensor(d["index"], x)
    it.invoke()
    return [it.get_tensor(d["index"]) for d in it.get_output_details()]


def oracle_outputs(case: OpCase, inputs):
    if case.oracle == "numpy":
        return list(case.ref_fn(*inputs))
    return run_litert(case.model(), inputs, xnnpack=(case.oracle == "litert_xnnpack"))


def find_cxx(what: str) -> str:
    """A C++ compiler on PATH (c++, g++, clang++), or skip saying what could not be built."""
    import shutil
    cxx = next((shutil.which(c) for c in ("c++", "g++", "clang++") if shutil.which(c)), None)
    if cxx is None:
        pytest.skip(f"no C++ compiler here: cannot build {what}")
    return cxx


def require_cpu_isa(isa: str) -> None:
    """Skip (saying so) a TFLITE_GPU_CPU_ISA level this CPU lacks: the variable can only lower the
    ISA, so the case would rerun a lower path while claiming this one."""
    flags = {"avx512": "avx512f", "avx512vnni": "avx512_vnni", "amx": "amx_int8"}.get(isa)
    if flags is None:
        return
    try:
        with open("/proc/cpuinfo") as f:
            have = f.read().split()
    except OSError:
        return  # not Linux: the case runs whatever the CPU has
    if flags not in have:
        pytest.skip(f"this CPU has no {flags}: TFLITE_GPU_CPU_ISA={isa} would run a lower ISA")


def assert_close(got, want, tol, what=""):
    assert len(got) == len(want), f"{what}: {len(got)} outputs vs {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape, f"{what} output {i}: shape {g.shape} vs {w.shape}"
        assert g.dtype == w.dtype, f"{what} output {i}: dtype {g.dtype} vs {w.dtype}"
        if w.dtype.name == "bfloat16":  # ml_dtypes' bfloat16: compared as the float32 values it holds
            g, w = g.astype(np.float32), w.astype(np.float32)
        if np.iscomplexobj(w):  # complex outputs: compared as (re, im) float pairs
            g = np.ascontiguousarray(g).view(g.real.dtype)
            w = np.ascontiguousarray(w).view(w.real.dtype)
        if np.issubdtype(w.dtype, np.floating):
            assert np.all(np.isfinite(g) == np.isfinite(w)), f"{what} output {i}: non-finite mismatch"
            fin = np.isfinite(w)
            e = rel_l2(g[fin], w[fin])
            assert e <= tol, f"{what} output {i}: rel-L2 {e:.3g} > {tol:g}"
        else:
            np.testing.assert_array_equal(g, w, err_msg=f"{what} output {i}")


def normal_inputs(shape, extra=()):
    """Case inputs: one float32 N(0, 1) array of `shape` from the case's rng, then the `extra`
    arrays as given (constant graph inputs such as a dynamic fft_length or output_shape)."""
    def make(rng):
        return [rng.normal(0.0, 1.0, shape).astype(np.float32)] + [np.asarray(e) for e in extra]
    return make


# ------------------------------------------------------------------ stateful runs (several invokes)
def litert_interpreter(model: bytes):
    """LiteRT builtin kernels (BUILTIN_WITHOUT_DEFAULT_DELEGATES), one thread, tensors allocated."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    it = Interpreter(model_content=model, num_threads=1,
                     experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    it.allocate_tensors()
    return it


def our_interpreter(model: bytes, reference=False, delegates=None, num_threads=2):
    """Ours (fast or reference kernels, optional delegates), tensors allocated."""
    import tflite_gpu
    it = tflite_gpu.Interpreter(model_content=model, use_reference_kernels=reference, num_threads=num_threads,
                                experimental_delegates=delegates)
    it.allocate_tensors()
    return it


def invoke_step(it, inputs):
    """One invoke of an allocated interpreter (either engine): set the inputs, return the outputs."""
    for d, x in zip(it.get_input_details(), inputs):
        it.set_tensor(d["index"], x)
    it.invoke()
    return [it.get_tensor(d["index"]) for d in it.get_output_details()]


# ------------------------------------------------------------------ bad models / bad data
def litert_refuses(model: bytes, inputs=None) -> bool:
    """True if LiteRT's builtin kernels (BUILTIN_WITHOUT_DEFAULT_DELEGATES) refuse the model at
    allocate_tensors or the data at invoke (inputs None: zeros of each input's shape and type).
    Inputs LiteRT will not take (set_tensor) are a bug of the case, not a refusal: that error
    propagates."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    it = Interpreter(model_content=model, num_threads=1,
                     experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    try:
        it.allocate_tensors()
    except (RuntimeError, ValueError):
        return True
    details = it.get_input_details()
    if inputs is None:
        inputs = [np.zeros(d["shape"], d["dtype"]) for d in details]
    for d, x in zip(details, inputs):
        it.set_tensor(d["index"], x)
    try:
        it.invoke()
    except (RuntimeError, ValueError):
        return True
    return False


def assert_refused(model: bytes, inputs=(), match=None, words=(), at_invoke=False, num_threads=None):
    """Ours refuses: a bad model is a ValueError at allocate_tensors; with at_invoke, the model
    allocates and the bad data is a RuntimeError at invoke. The message must match the regex
    `match` (if given) and contain each of `words`. Returns the message."""
    import tflite_gpu
    kw = {} if num_threads is None else dict(num_threads=num_threads)
    it = tflite_gpu.Interpreter(model_content=model, **kw)
    if not at_invoke:
        with pytest.raises(ValueError, match=match) as e:
            it.allocate_tensors()
    else:
        it.allocate_tensors()
        for d, x in zip(it.get_input_details(), inputs):
            it.set_tensor(d["index"], x)
        with pytest.raises(RuntimeError, match=match) as e:
            it.invoke()
    msg = str(e.value)
    for w in words:
        assert w in msg, f"{w!r} not in the message: {msg}"
    return msg
