"""Delegate initialisation time with serialization (issue 10): cold (empty serialization dir,
empty program cache, and - on PoCL - an empty PoCL kernel cache), program-cache-only (the
compiled programs on disk, no model token: codegen, weight transformation and tuning still run),
and warm (the serialized partition: none of that runs). Init = GpuDelegate() + Interpreter(...)
(ModifyGraphWithDelegate) + allocate_tensors().

    pytest benchmarks/bench_serialization.py --benchmark-only -s

Prints warm/cold and warm/program-cache ratios at the end (target of the seed: warm <= 0.10 cold).
Cold runs once per model (a second cold run would find the driver's own kernel cache warm);
set POCL_CACHE_DIR yourself to keep PoCL's cache elsewhere (this module points it at a fresh
temporary directory when unset, so PoCL's first compile of each kernel is really a compile).
NVIDIA's driver keeps its own compiled-kernel cache (~/.nv/ComputeCache): CUDA_CACHE_PATH is pointed
at a fresh temporary directory likewise, so cold is a first start on a fresh machine and warm a second
start (the driver cache then filled, as it would be).
"""
import os
import shutil
import tempfile
import time

_POCL_TMP = None
if "POCL_CACHE_DIR" not in os.environ:
    _POCL_TMP = tempfile.mkdtemp(prefix="bench_ser_pocl_")
    os.environ["POCL_CACHE_DIR"] = _POCL_TMP
if "CUDA_CACHE_PATH" not in os.environ:
    os.environ["CUDA_CACHE_PATH"] = tempfile.mkdtemp(prefix="bench_ser_nvcache_")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import tflite_gpu  # noqa: E402
from tflite_gpu.testing import zoo  # noqa: E402

FLAGS = tflite_gpu.delegate.ExperimentalFlags
MODELS = {
    "mobilenet_v1": lambda: zoo.mobilenet_v1(),
    "mobilenet_v2": lambda: zoo.mobilenet_v2(),
    "selfie_segmentation_like": lambda: zoo.selfie_segmentation_like(seed=1),
    "face_detector_like": lambda: zoo.face_detector_like(seed=1),
}
if os.environ.get("BENCH_SER_MODELS"):
    MODELS = {k: v for k, v in MODELS.items() if k in os.environ["BENCH_SER_MODELS"].split(",")}
MODES = ["cold", "program_cache", "warm"]
PRECISION = os.environ.get("BENCH_SER_PRECISION", "F32")
_state = {}     # model -> (bytes, dir primed by the cold run)
RESULTS = {}    # (model, mode) -> seconds (min)


def _init(model, d, token):
    kw = dict(serialization_dir=str(d), model_token=token,
              experimental_flags=FLAGS.ENABLE_QUANT | FLAGS.ENABLE_SERIALIZATION,
              is_precision_loss_allowed=PRECISION != "F32")
    t = time.perf_counter()
    dlg = tflite_gpu.GpuDelegate(tflite_gpu.GpuDelegateOptions(**kw))
    it = tflite_gpu.Interpreter(model_content=model, experimental_delegates=[dlg])
    it.allocate_tensors()
    dt = time.perf_counter() - t
    return dt, it, dlg.cache_info()


def _cold(name):
    """The one cold init of a model (fresh dirs); keeps the primed dir for the other modes."""
    if name not in _state:
        model = MODELS[name]()
        d = tempfile.mkdtemp(prefix="bench_ser_")
        dt, it, info = _init(model, os.path.join(d, "ser"), "bench")
        assert info["serialization"]["writes"] >= 1, info
        _state[name] = (model, os.path.join(d, "ser"), dt)
    return _state[name]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", list(MODELS))
def test_init(benchmark, name, mode):
    try:
        tflite_gpu.GpuDelegate()
    except RuntimeError as e:
        pytest.skip(f"no OpenCL device: {e}")
    first = name not in _state
    model, d, cold_s = _cold(name)
    benchmark.extra_info.update(model=name, mode=mode, precision=PRECISION, suite="bench_serialization")
    if mode == "cold":
        if not first:
            pytest.skip("cold runs first for each model (the driver's kernel cache is warm now)")
        benchmark.pedantic(lambda: None, rounds=1, iterations=1)  # the figure is the timed cold init
        RESULTS[(name, mode)] = cold_s
        return
    if mode == "program_cache":
        def once():
            dt, _, info = _init(model, d, None)  # no token: only the program cache is used
            assert info["source_builds"] == 0 and info["serialization"]["hits"] == 0, info
            return dt
    else:
        def once():
            dt, _, info = _init(model, d, "bench")
            assert info["serialization"]["hits"] >= 1 and info["source_builds"] == 0, info
            return dt
    times = []
    benchmark.pedantic(lambda: times.append(once()), rounds=5, iterations=1, warmup_rounds=1)
    RESULTS[(name, mode)] = min(times[1:] if len(times) > 1 else times)


def teardown_module(module):
    print()
    dev = ""
    try:
        dev = tflite_gpu.GpuDelegate().info()["device_name"]
    except RuntimeError:
        pass
    print(f"--- serialization: init seconds (min), precision {PRECISION}, device {dev!r}")
    wc, wp = [], []
    for name in MODELS:
        c, p, w = (RESULTS.get((name, m)) for m in MODES)
        if c is None or w is None:
            continue
        line = f"{name}: cold {c * 1e3:.1f} ms, program cache {p * 1e3:.1f} ms, warm {w * 1e3:.1f} ms -> " \
               f"warm/cold {w / c:.3f}"
        wc.append((name, w / c))
        if p:
            line += f", warm/program-cache {w / p:.3f}"
            wp.append((name, w / p))
        print(line)
    if wc:
        # One line for a closing note: every model's ratios, and the seed's target (warm <= 0.10 cold).
        ok = all(r <= 0.10 for _, r in wc)
        print(f"SUMMARY serialization [{dev}, {PRECISION}] warm/cold: " + ", ".join(f"{n} {r:.3f}" for n, r in wc) +
              f" (target <= 0.10: {'met' if ok else 'NOT met'}); warm/program-cache: " +
              (", ".join(f"{n} {r:.2f}" for n, r in wp) or "n/a"))
    for name, (_, d, _) in _state.items():
        shutil.rmtree(os.path.dirname(d), ignore_errors=True)
    if _POCL_TMP:
        shutil.rmtree(_POCL_TMP, ignore_errors=True)
