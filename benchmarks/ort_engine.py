"""ONNX Runtime as a benchmark engine beside tflite_gpu and LiteRT (issue #14): the .tflite model is
converted by benchmarks/tflite_to_onnx.py (or read from a directory of pre-converted NAME.onnx files
where the onnx package is missing) and run on ORT's CPU execution provider with
intra_op_num_threads = the benchmark's thread count, inter_op_num_threads = 1, all graph
optimizations, sequential execution (ORT's default thread spinning left on, as users get it).
Inputs and outputs are bound once (IOBinding) so invoke() times the graph, as the other engines'
invoke() does after set_tensor.
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
