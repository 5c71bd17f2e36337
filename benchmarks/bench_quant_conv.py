"""int8 conv-family kernels: tflite_gpu's CPU kernels vs ai-edge-litert with its default XNNPACK
delegate (int8 on by default), side by side in one session, at 1 and 2 threads. Single ops shaped
like MobileNet layers, plus the whole int8 / dynamic-range MobileNet v1 when every op of it has a
quantized kernel here (otherwise skipped with the reason).

    python -m pytest benchmarks/bench_quant_conv.py --benchmark-only -q

benchmarks/conftest.py prints the tflite_gpu / litert ratios at the end.
"""
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
from op_cases.conv_quant import I8, _dw_spec, _spec, qconv_model, qdw_model, qfc_model  # noqa: E402
from tflite_gpu.testing import quant as Q  # noqa: E402
from tflite_gpu.testing import zoo  # noqa: E402

CASES = {
    "conv3x3_56x56x64": (lambda: qconv_model(_spec(I8, out_qp=Q.QParams(1.0, 0)), (1, 56, 56, 64), 64), (1, 56, 56, 64)),
    "conv1x1_28x28x128_256": (lambda: qconv_model(_spec(I8, out_qp=Q.QParams(1.0, 0)), (1, 28, 28, 128), 256, k=(1, 1)),
                              (1, 28, 28, 128)),
    "dw3x3_56x56x128": (lambda: qdw_model(_dw_spec(I8), (1, 56, 56, 128)), (1, 56, 56, 128)),
    "fc_1024_1001": (lambda: qfc_model(_spec(I8), (1, 1024), 1001), (1, 1024)),
    "mobilenet_v1_int8": (lambda: zoo.ZOO["mobilenet_v1_int8"](), None),
    "mobilenet_v1_dynamic": (lambda: zoo.ZOO["mobilenet_v1_dynamic"](), None),
}
_CACHE = {}


def _model(name):
    if name not in _CACHE:
        _CACHE[name] = CASES[name][0]()
    return _CACHE[name]


@pytest.mark.parametrize("engine", ["tflite_gpu", "litert"])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("case", list(CASES))
def test_int8_conv(benchmark, case, threads, engine):
    model = _model(case)
    if engine == "tflite_gpu":
        import tflite_gpu
        try:
            it = tflite_gpu.Interpreter(model_content=model, num_threads=threads)
            it.allocate_tensors()
        except ValueError as e:
            pytest.skip(f"{case}: not runnable on tflite_gpu's CPU kernels yet: {e}")
    else:
        from ai_edge_litert.interpreter import Interpreter
        it = Interpreter(model_content=model, num_threads=threads)
        it.allocate_tensors()
    d = it.get_input_details()[0]
    rng = np.random.default_rng(0)
    if np.issubdtype(d["dtype"], np.integer):
        x = Q.random_q(rng, d["shape"], d["dtype"])
    else:
        x = rng.standard_normal(d["shape"]).astype(np.float32)
    it.set_tensor(d["index"], x)
    for _ in range(2):
        it.invoke()
    benchmark.extra_info.update(suite="bench_quant_conv", model=case, engine=engine, num_threads=threads)
    benchmark.pedantic(it.invoke, rounds=15, iterations=1, warmup_rounds=1)
