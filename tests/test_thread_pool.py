"""The CPU thread pool (csrc/runtime/thread_pool): its C++ stress test (every ParallelFor of odd
sizes covers its range exactly once, from several pools and threads, nested and shared; a blocked
worker is woken; built also under ThreadSanitizer where the compiler has it), and interpreters at
2-3 threads invoked from several Python threads at once, checked against numpy and LiteRT. A hang
fails on a timeout instead of blocking the suite."""
import os
import subprocess
import threading

import numpy as np
import pytest

import tflite_gpu
from harness import find_cxx, rel_l2, run_litert
from tflite_gpu.testing import zoo
from tflite_gpu.testing.builder import ModelBuilder

ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), ".."))
SOURCES = [os.path.join(ROOT, "tests", "c", "thread_pool_stress.cc"),
           os.path.join(ROOT, "csrc", "runtime", "thread_pool.cc"),
           os.path.join(ROOT, "csrc", "runtime", "env.cc")]


def _cxx():
    cxx = find_cxx("the thread-pool stress test")
    if not all(os.path.isfile(s) for s in SOURCES):
        pytest.skip("the C++ sources are not here (installed package, no source tree)")
    return cxx


@pytest.mark.parametrize("sanitizer", ["none", "thread"])
def test_thread_pool_stress(tmp_path, sanitizer):
    cxx = _cxx()
    exe = tmp_path / "stress"
    flags = ["-O2"] if sanitizer == "none" else ["-O1", "-g", "-fsanitize=thread"]
    cmd = [cxx, "-std=c++17", "-Wall", "-Wextra", "-Werror", "-pthread", *flags, "-I", os.path.join(ROOT, "csrc"),
           *SOURCES, "-o", str(exe)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if r.returncode != 0 and sanitizer != "none":
        probe = subprocess.run([cxx, "-fsanitize=thread", "-x", "c++", "-", "-o", str(tmp_path / "probe")],
                               input="int main(){}", capture_output=True, text=True, timeout=60)
        if probe.returncode != 0:
            pytest.skip(f"{cxx} cannot build with -fsanitize=thread here: {probe.stderr.strip()[:200]}")
    assert r.returncode == 0, r.stdout + r.stderr
    env = dict(os.environ, TSAN_OPTIONS="halt_on_error=1 exitcode=66")
    iters = "2000" if sanitizer == "none" else "400"
    try:
        r = subprocess.run([str(exe), "30", iters], capture_output=True, text=True, timeout=240, env=env)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"thread_pool_stress did not finish in 240 s (hang): {e.stderr!r}")
    assert r.returncode == 0, f"exit {r.returncode}\n{r.stdout}\n{r.stderr}"
    assert "0 failures" in r.stdout, r.stdout


def _odd_model(h, w, c):
    """ADD, PRELU, channel PAD, CONCATENATION, MAX_POOL_2D and MUL over odd shapes, each big enough
    for the pool to split it at 2-3 threads."""
    mb = ModelBuilder()
    x = mb.add_input([1, h, w, c], name="x")
    y = mb.add_input([1, h, w, c], name="y")
    rng = np.random.default_rng(7)
    alpha = rng.uniform(0.05, 0.5, (1, 1, c)).astype(np.float32)
    s = mb.add_tensor([1, h, w, c], name="s")
    mb.add_op("ADD", [x, y], [s], options=dict(fused_activation_function="NONE"))
    p = mb.add_tensor([1, h, w, c], name="p")
    mb.add_op("PRELU", [s, mb.add_const(alpha, name="alpha")], [p])
    pads = np.array([[0, 0], [0, 0], [0, 0], [0, 3]], np.int32)
    q = mb.add_tensor([1, h, w, c + 3], name="q")
    mb.add_op("PAD", [p, mb.add_const(pads, name="pads")], [q])
    cat = mb.add_tensor([1, h, w, 2 * c + 3], name="cat")
    mb.add_op("CONCATENATION", [q, x], [cat], options=dict(axis=3, fused_activation_function="NONE"))
    mp = mb.add_tensor([1, h // 2, w // 2, 2 * c + 3], name="mp")
    mb.add_op("MAX_POOL_2D", [cat], [mp], options=dict(padding="VALID", stride_w=2, stride_h=2, filter_width=2,
                                                        filter_height=2, fused_activation_function="NONE"))
    m = mb.add_tensor([1, h // 2, w // 2, 2 * c + 3], name="m")
    mb.add_op("MUL", [mp, mp], [m], options=dict(fused_activation_function="NONE"))
    mb.mark_output(cat)
    mb.mark_output(m)

    def ref(xv, yv):
        sv = xv + yv
        pv = np.where(sv >= 0, sv, sv * alpha)
        qv = np.pad(pv, [(0, 0), (0, 0), (0, 0), (0, 3)])
        cv = np.concatenate([qv, xv], axis=3)
        hh, ww = h // 2 * 2, w // 2 * 2
        mv = cv[:, :hh, :ww].reshape(1, h // 2, 2, w // 2, 2, -1).max(axis=(2, 4))
        return cv, mv * mv

    return mb.build(), ref


def _run_threads(jobs, timeout=180):
    """Runs each job in its own thread; a job still running after `timeout` s fails the test."""
    errors = []

    def wrap(fn):
        def run():
            try:
                fn()
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)
        return run

    ths = [threading.Thread(target=wrap(j), daemon=True) for j in jobs]
    for t in ths:
        t.start()
    for t in ths:
        t.join(timeout)
        assert not t.is_alive(), f"an interpreter thread did not finish in {timeout} s (hang in the thread pool?)"
    if errors:
        raise errors[0]


def test_interpreters_in_threads_odd_shapes():
    shapes = [(61, 67, 19), (64, 31, 37), (17, 129, 31)]  # >= 2 * 32768 elements: split at 2-3 threads
    models = [_odd_model(*s) for s in shapes]

    def job(k):
        def fn():
            model, ref = models[k % len(models)]
            h, w, c = shapes[k % len(shapes)]
            it = tflite_gpu.Interpreter(model_content=model, num_threads=2 + k % 2)
            it.allocate_tensors()
            rng = np.random.default_rng(k)
            for i in range(25):
                xv = rng.standard_normal((1, h, w, c)).astype(np.float32)
                yv = rng.standard_normal((1, h, w, c)).astype(np.float32)
                it.set_tensor(it.get_input_details()[0]["index"], xv)
                it.set_tensor(it.get_input_details()[1]["index"], yv)
                it.invoke()
                want = ref(xv, yv)
                for d, wv in zip(it.get_output_details(), want):
                    got = it.get_tensor(d["index"])
                    np.testing.assert_array_equal(got, wv, err_msg=f"job {k} invoke {i} {d['name']}")
        return fn

    _run_threads([job(k) for k in range(6)])


def test_model_from_threads_matches_litert():
    model = zoo.face_mesh_like(input_size=96)
    rng = np.random.default_rng(3)
    xs = [rng.uniform(-1, 1, (1, 96, 96, 3)).astype(np.float32) for _ in range(3)]
    want = [run_litert(model, [x]) for x in xs]  # BUILTIN_WITHOUT_DEFAULT_DELEGATES, 1 thread

    def job(k):
        def fn():
            it = tflite_gpu.Interpreter(model_content=model, num_threads=2 + k % 2)
            it.allocate_tensors()
            for i in range(12):
                x = xs[(i + k) % len(xs)]
                it.set_tensor(it.get_input_details()[0]["index"], x)
                it.invoke()
                for d, w in zip(it.get_output_details(), want[(i + k) % len(xs)]):
                    err = rel_l2(it.get_tensor(d["index"]), w)
                    assert err <= 1e-5, f"job {k} invoke {i} {d['name']}: rel-L2 {err:.3g} vs LiteRT"
        return fn

    _run_threads([job(k) for k in range(4)])
