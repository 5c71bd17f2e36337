"""int8 CPU speed: the post-training int8 MobileNet v1 / v2 (224, full-integer with float I/O,
tflite_gpu.testing.zoo mobilenet_v{1,2}_int8) on tflite_gpu's CPU kernels vs ai-edge-litert with its
default XNNPACK delegate (which runs int8 models with its QS8 kernels), at 1 and 2 threads, side
by side in one session.

    python -m pytest benchmarks/bench_quant.py --benchmark-only -q

benchmarks/conftest.py prints the tflite_gpu / litert ratio (min and median) per model and thread
count at the end (target <= 1.0). A model whose ops do not all have quantized CPU kernels yet is
skipped with the missing kernels named.
"""
import numpy as np
import pytest

import tflite_gpu
from tflite_gpu.testing import zoo

MODELS = {"v1": "mobilenet_v1_int8", "v2": "mobilenet_v2_int8"}
_cache = {}


def _model(name):
    if name not in _cache:
        _cache[name] = zoo.ZOO[MODELS[name]]()
    return _cache[name]


def _interpreter(engine, model, threads):
    if engine == "tflite_gpu":
        return tflite_gpu.Interpreter(model_content=model, num_threads=threads)
    from ai_edge_litert.interpreter import Interpreter
    return Interpreter(model_content=model, num_threads=threads)


@pytest.mark.parametrize("engine", ["tflite_gpu", "litert"])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("model", ["v1", "v2"])
def test_mobilenet_int8(benchmark, model, threads, engine):
    it = _interpreter(engine, _model(model), threads)
    try:
        it.allocate_tensors()
    except ValueError as e:
        msg = f"mobilenet_{model}_int8 does not run on tflite_gpu's CPU yet: {e}"
        print("SKIP:", msg)
        pytest.skip(msg)
    d = it.get_input_details()[0]
    x = np.random.default_rng(0).standard_normal(d["shape"]).astype(np.float32)
    it.set_tensor(d["index"], x)
    for _ in range(3):
        it.invoke()
    benchmark.extra_info.update(suite="bench_quant", model=f"mobilenet_{model}_int8", engine=engine, num_threads=threads)
    benchmark.pedantic(it.invoke, rounds=30, iterations=1, warmup_rounds=2)
    out = it.get_tensor(it.get_output_details()[0]["index"])
    assert np.isfinite(out).all()
