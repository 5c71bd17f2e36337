"""ONNX Runtime as a benchmark engine beside tflite_gpu and LiteRT (issue #14): the .tflite model is
converted by benchmarks/tflite_to_onnx.py (or read from a directory of pre-converted NAME.onnx files
where the onnx package is missing) and run on ORT's CPU execution provider with
intra_op_num_threads = the benchmark's thread count, inter_op_num_threads = 1, all graph
optimizations, sequential execution (ORT's default thread spinning left on, as users get it;
BENCH_ORT_SPIN=0 turns it off).
Inputs and outputs are bound once (IOBinding) so invoke() times the graph, as the other engines'
invoke() does after set_tensor.

    python benchmarks/ort_engine.py --profile face_mesh_like --threads 1 2   # ORT's time per op type
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def unavailable():
    """Why ORT cannot be benchmarked here, or None."""
    try:
        import onnxruntime  # noqa: F401
    except ImportError as e:
        return f"onnxruntime is not installed ({e})"
    return None


def onnx_model(name, tflite_bytes, onnx_dir=None):
    """ONNX bytes of the model: converted here when the onnx package is installed, else read from
    onnx_dir/NAME.onnx. Raises tflite_to_onnx.Unsupported (or FileNotFoundError) with the reason."""
    try:
        import onnx  # noqa: F401
    except ImportError:
        path = os.path.join(onnx_dir or "", name + ".onnx")
        if not onnx_dir or not os.path.exists(path):
            raise FileNotFoundError(f"the onnx package is missing and there is no pre-converted {path}")
        with open(path, "rb") as f:
            return f.read()
    import tflite_to_onnx
    return tflite_to_onnx.convert_bytes(tflite_bytes, name)


class OrtEngine:
    def __init__(self, onnx_bytes, threads, seed=0):
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        if os.environ.get("BENCH_ORT_SPIN", "1") == "0":   # ORT's pool threads block instead of spinning
            so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = ort.InferenceSession(onnx_bytes, so, providers=["CPUExecutionProvider"])
        rng = np.random.default_rng(seed)
        self.binding = self.session.io_binding()
        self.inputs = []
        for i in self.session.get_inputs():
            x = rng.standard_normal(i.shape).astype(np.float32)
            self.inputs.append(x)
            self.binding.bind_cpu_input(i.name, x)
        for o in self.session.get_outputs():
            self.binding.bind_output(o.name, "cpu")

    def invoke(self):
        self.session.run_with_iobinding(self.binding)

    def outputs(self):
        return self.binding.copy_outputs_to_cpu()


def profile(name, model, threads, invokes=20, onnx_dir=None):
    """ORT's time per op type (its own profiler, kernel times of the optimized graph: Conv nodes
    there carry fused activations / Adds; ReorderInput/Output are its NCHWc layout changes)."""
    import collections
    import json
    import tempfile
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads, so.inter_op_num_threads = threads, 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.enable_profiling = True
    so.profile_file_prefix = os.path.join(tempfile.mkdtemp(), "ort")
    s = ort.InferenceSession(onnx_model(name, model, onnx_dir), so, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    feed = {i.name: rng.standard_normal(i.shape).astype(np.float32) for i in s.get_inputs()}
    for _ in range(invokes + 3):   # all runs are profiled, the 3 first (warm-up) ones included
        s.run(None, feed)
    path = s.end_profiling()
    with open(path) as f:
        events = json.load(f)
    os.remove(path)
    per, count = collections.Counter(), collections.Counter()
    for e in events:
        if e.get("cat") == "Node" and e.get("name", "").endswith("_kernel_time"):
            per[e["args"]["op_name"]] += e["dur"]
            count[e["args"]["op_name"]] += 1
    runs = invokes + 3
    total = sum(per.values()) / runs
    print(f"{name} ORT threads={threads}: {total / 1e3:.2f} ms per run (sum of kernels)")
    for k, v in per.most_common():
        print(f"  {k:28s} {v / runs / 1e3:8.3f} ms  {100 * v / runs / total:5.1f}%  x{count[k] // runs}")


if __name__ == "__main__":
    import argparse
    from bench_speed import FLOAT_MODELS
    ap = argparse.ArgumentParser(description="ONNX Runtime's time per op type on the bench_speed float models")
    ap.add_argument("--profile", nargs="*", help="models (default: all float models)")
    ap.add_argument("--threads", nargs="*", type=int, default=[1, 2])
    ap.add_argument("--invokes", type=int, default=20)
    ap.add_argument("--onnx-dir")
    a = ap.parse_args()
    for n in a.profile or FLOAT_MODELS:
        for t in a.threads:
            profile(n, FLOAT_MODELS[n](), t, a.invokes, a.onnx_dir)
