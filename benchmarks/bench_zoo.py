"""The zoo the tests build, timed on this engine's CPU kernels, through the GPU delegate (default
OpenCL device), and on ai-edge-litert (XNNPACK), in one pytest-benchmark session.

    pytest benchmarks/bench_zoo.py --benchmark-only --benchmark-json=zoo.json
    python benchmarks/compare_table.py zoo.json

ONNX Runtime is compared in benchmarks/bench_speed.py (on models converted by
benchmarks/tflite_to_onnx.py).
"""
import os

import numpy as np
import pytest

import tflite_gpu
from tflite_gpu.testing import zoo

THREADS = int(os.environ.get("BENCH_THREADS", "2"))
MODELS = ["mobilenet_v1", "mobilenet_v2", "mobilenet_v1_fp16", "encoder_decoder", "lstm"]
ENGINES = ["tflite_gpu_cpu", "tflite_gpu_gpu", "litert"]
_cache = {}


def model_bytes(name):
    if name not in _cache:
        _cache[name] = zoo.ZOO[name]()
    return _cache[name]


def make(engine, model):
    if engine == "litert":
        litert = pytest.importorskip("ai_edge_litert.interpreter")
        return litert.Interpreter(model_content=model, num_threads=THREADS)
    if engine == "tflite_gpu_gpu":
        try:
            d = tflite_gpu.GpuDelegate()
        except RuntimeError as e:
            pytest.skip(f"no OpenCL device: {e}")
        return tflite_gpu.Interpreter(model_content=model, experimental_delegates=[d], num_threads=THREADS)
    return tflite_gpu.Interpreter(model_content=model, num_threads=THREADS)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", MODELS)
def test_zoo(benchmark, name, engine):
    it = make(engine, model_bytes(name))
    it.allocate_tensors()
    rng = np.random.default_rng(0)
    for d in it.get_input_details():
        it.set_tensor(d["index"], rng.standard_normal(d["shape"]).astype(d["dtype"]))
    benchmark.extra_info.update(model=name, engine=engine, threads=THREADS)
    if engine == "tflite_gpu_gpu":
        rep = it.delegation_report()
        benchmark.extra_info.update(delegated=f"{rep['delegated_nodes']}/{rep['total_nodes']}",
                                    device=rep.get("device", ""))
    benchmark.pedantic(it.invoke, rounds=10 if engine != "tflite_gpu_gpu" else 5, warmup_rounds=1, iterations=1)
