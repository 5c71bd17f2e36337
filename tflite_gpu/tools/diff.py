"""``tflite-gpu diff``: TFLite's Inference Diff tool.

Feeds the same random Gaussian inputs to a single-threaded CPU reference
interpreter and to the interpreter under test (built from the delegate
flags), ``--num_runs`` times, and reports both latencies and, per output, the
mean absolute element-wise difference:

    Num evaluation runs: 50
    Reference run latency: avg=84364.2(us), std_dev=12525(us)
    Test run latency: avg=7281.64(us), std_dev=2089(us)
    OutputDiff[0]: avg_error=1.96277e-05, std_dev=6.95767e-06

avg_error is the mean over runs of each run's mean |ref - test| over the
output's elements; std_dev is the (population) standard deviation of those
per-run means.  Inputs of type int8/uint8 are the Gaussian sample quantized
with the input's scale and zero point and clipped to the type's range.
Outputs are compared as stored (quantized outputs as integers, as TFLite's
tool does); ``--dequantize_outputs`` compares real values instead.
"""

from __future__ import annotations

import math
import sys
import time
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from . import _backend
from ._common import (Stat, apply_input_shapes, fill_dynamic_dims, g6, latency_line,
                      quant_params, write_results)
from .flags import (Flag, FlagError, Flags, delegate_flags, gpu_options_from_flags,
                    parse_input_layer_shapes, run_with_flags, use_gpu_from_flags)

__all__ = ["main", "gaussian_inputs", "FLAGS"]

PROG = "tflite-gpu diff"
SUMMARY = """Inference Diff: compare a single-threaded CPU reference run with a run
configured by the delegate flags, on random Gaussian inputs."""


def _flags() -> List[Flag]:
    return [
        Flag("model_file", str, "", "model file (.tflite) or zoo:NAME", aliases=("graph",)),
        Flag("num_runs", int, 50, "number of evaluation runs"),
        Flag("num_interpreter_threads", int, 1, "threads of the test interpreter",
             aliases=("num_threads",)),
        Flag("reference_backend", str, "",
             "interpreter for the reference run (default: same as --backend)",
             choices=("", "tflite_gpu", "litert")),
        Flag("input_layer", str, "", "comma-separated input names for --input_layer_shape"),
        Flag("input_layer_shape", str, "", "shapes for --input_layer, ':'-separated"),
        Flag("dequantize_outputs", bool, False,
             "compare dequantized values of quantized outputs"),
        Flag("seed", int, 0, "random seed"),
        Flag("output_file_path", str, "", "also write the report here (.json: as JSON)"),
    ] + delegate_flags()


FLAGS = _flags()


def gaussian_inputs(details: Sequence[Dict[str, Any]], rng: np.random.Generator
                    ) -> List[np.ndarray]:
    """Standard-normal data per input, respecting dtype and quantization."""
    out = []
    for d in details:
        shape = tuple(int(s) for s in d["shape"])
        dt = np.dtype(d["dtype"])
        x = rng.standard_normal(size=shape)
        if dt.kind == "f":
            out.append(x.astype(dt))
        elif dt.kind == "c":
            out.append((x + 1j * rng.standard_normal(size=shape)).astype(dt))
        elif dt == np.bool_:
            out.append(x > 0)
        elif dt.kind in "iu":
            scale, zp = quant_params(d)
            info = np.iinfo(dt)
            q = np.round(x / scale) + zp if scale > 0 else np.round(x)
            out.append(np.clip(q, info.min, info.max).astype(dt))
        else:
            out.append(np.zeros(shape, dtype=dt))
    return out


def _as_float(a: np.ndarray, d: Dict[str, Any], dequantize: bool) -> np.ndarray:
    if dequantize and np.dtype(d["dtype"]).kind in "iu":
        scale, zp = quant_params(d)
        if scale > 0:
            return (a.astype(np.float64) - zp) * scale
    if np.dtype(a.dtype).kind == "c":
        return a.astype(np.complex128)
    return a.astype(np.float64)


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    return run_with_flags(argv, PROG, SUMMARY, FLAGS, _diff, sys.stdout, sys.stderr)


def _build(flags: Flags, backend: str, threads: int, use_gpu: bool, shapes):
    path, content, _ = _backend.load_model(flags.model_file)
    interp = _backend.make_interpreter(
        model_path=path, model_content=content, num_threads=threads, use_gpu=use_gpu,
        gpu_options=gpu_options_from_flags(flags), backend=backend,
        warn=lambda m: sys.stderr.write(m + "\n"))
    apply_input_shapes(interp, shapes)
    fill_dynamic_dims(interp, skip=list(shapes))
    interp.allocate_tensors()
    return interp


def _diff(flags: Flags) -> int:
    out, err = sys.stdout, sys.stderr
    try:
        if flags.num_runs <= 0:
            raise FlagError("--num_runs must be positive")
        shapes = parse_input_layer_shapes(flags.input_layer, flags.input_layer_shape)
        use_gpu = use_gpu_from_flags(flags)
        ref_backend = flags.reference_backend or flags.backend
        ref = _build(flags, ref_backend, 1, False, shapes)
        test = _build(flags, flags.backend, flags.num_interpreter_threads, use_gpu, shapes)

        rin, tin = ref.get_input_details(), test.get_input_details()
        rout, tout = ref.get_output_details(), test.get_output_details()
        if len(rin) != len(tin) or len(rout) != len(tout):
            raise _backend.BackendError("reference and test interpreters disagree on the "
                                        "number of inputs/outputs")
        rng = np.random.default_rng(flags.seed)
        ref_lat, test_lat = Stat(), Stat()
        per_run: List[List[float]] = [[] for _ in rout]
        for _ in range(flags.num_runs):
            inputs = gaussian_inputs(rin, rng)
            for dr, dtst, a in zip(rin, tin, inputs):
                ref.set_tensor(dr["index"], a)
                test.set_tensor(dtst["index"], a)
            t0 = time.perf_counter_ns()
            ref.invoke()
            t1 = time.perf_counter_ns()
            test.invoke()
            t2 = time.perf_counter_ns()
            ref_lat.update((t1 - t0) // 1000)
            test_lat.update((t2 - t1) // 1000)
            for i, (dr, dtst) in enumerate(zip(rout, tout)):
                a = _as_float(ref.get_tensor(dr["index"]), dr, flags.dequantize_outputs)
                b = _as_float(test.get_tensor(dtst["index"]), dtst, flags.dequantize_outputs)
                if a.shape != b.shape:
                    raise _backend.BackendError(
                        f"output {i} has shape {a.shape} in the reference run but {b.shape} "
                        "in the test run")
                per_run[i].append(float(np.mean(np.abs(a - b))) if a.size else 0.0)

        lines = [f"Num evaluation runs: {flags.num_runs}",
                 latency_line("Reference run", ref_lat),
                 latency_line("Test run", test_lat)]
        diffs = []
        for i, errs in enumerate(per_run):
            e = np.asarray(errs, dtype=np.float64)
            avg = float(e.mean())
            std = float(math.sqrt(max(float(np.mean(e * e)) - avg * avg, 0.0)))
            if np.all(e == e[0]):
                std = 0.0
            diffs.append({"index": i, "name": rout[i].get("name", ""), "avg_error": avg,
                          "std_dev": std})
            lines.append(f"OutputDiff[{i}]: avg_error={g6(avg)}, std_dev={g6(std)}")
        out.write("\n".join(lines) + "\n")
        if flags.output_file_path:
            write_results(flags.output_file_path, lines, {
                "num_runs": flags.num_runs, "reference_latency_us": ref_lat.as_dict(),
                "test_latency_us": test_lat.as_dict(), "output_diff": diffs,
                "backend": flags.backend, "reference_backend": ref_backend,
                "use_gpu": use_gpu})
        return 0
    except FlagError as e:
        err.write(f"ERROR: {e}\n")
        return 2
    except _backend.BackendError as e:
        err.write(f"ERROR: {e}\n")
        return 1
    except Exception as e:
        err.write(f"ERROR: inference diff failed: {type(e).__name__}: {e}\n")
        return 1
