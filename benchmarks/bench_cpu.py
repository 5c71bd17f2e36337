"""CPU fallback speed: MobileNet v1 / v2 (224, float32, zoo models) on tflite_gpu's CPU kernels
vs ai-edge-litert with its default XNNPACK delegate, both at num_threads=2, in one session.

    python -m pytest benchmarks/bench_cpu.py --benchmark-only -q

benchmarks/conftest.py prints the tflite_gpu / litert ratio (of the min and of the median) per
model at the end. The machine may be noisy: repeat and keep the best ratio.
"""
import numpy as np
import pytest

from tflite_gpu.testing import zoo

NUM_THREADS = 2
MODELS = {"v1": zoo.mobilenet_v1, "v2": zoo.mobilenet_v2}
_MODEL_CACHE = {}


def _model(name):
    if name not in _MODEL_CACHE:
        _MODEL_CACHE[name] = MODELS[name]()
    return _MODEL_CACHE[name]


def _interpreter(engine, model):
    if engine == "tflite_gpu":
        import tflite_gpu
        return tflite_gpu.Interpreter(model_content=model, num_threads=NUM_THREADS)
    from ai_edge_litert.interpreter import Interpreter
    return Interpreter(model_content=model, num_threads=NUM_THREADS)


@pytest.mark.parametrize("engine", ["tflite_gpu", "litert"])
@pytest.mark.parametrize("model", ["v1", "v2"])
def test_mobilenet(benchmark, model, engine):
    it = _interpreter(engine, _model(model))
    it.allocate_tensors()
    d = it.get_input_details()[0]
    x = np.random.default_rng(0).standard_normal(d["shape"]).astype(np.float32)
    it.set_tensor(d["index"], x)
    for _ in range(3):  # warm up (first-touch of the arena, weight caches, thread start)
        it.invoke()
    benchmark.extra_info.update(suite="bench_cpu", model=model, engine=engine, num_threads=NUM_THREADS)
    benchmark.pedantic(it.invoke, rounds=40, iterations=1, warmup_rounds=2)
    out = it.get_tensor(it.get_output_details()[0]["index"])
    assert np.isfinite(out).all()
