"""Misuse from Python (issue 12): threads sharing one interpreter, numpy views held across state
changes. Every scenario runs in a child process (misuse_util.run_child): a deadlock is a timeout
failure and a crash is a failure with the child's output, never a frozen or aborted test run.
The oracle for results is numpy (the model is one ADD+RELU, or ADD then CONV for the views)."""
import pytest

from misuse_util import run_child

MODEL = """
import numpy as np
from tflite_gpu.testing.builder import ModelBuilder

def add_model(shape=(1, 4, 4, 3)):
    b = ModelBuilder()
    x = b.add_input(list(shape), name="x", shape_signature=[-1] + list(shape[1:]))
    y = b.add_input(list(shape), name="y", shape_signature=[-1] + list(shape[1:]))
    z = b.add_tensor(list(shape), name="z", shape_signature=[-1] + list(shape[1:]))
    b.add_op("ADD", [x, y], [z], options=dict(fused_activation_function="RELU"))
    b.mark_output(z)
    b.add_signature("serving_default", {"x": x, "y": y}, {"z": z})
    return b.build()
"""

THREADS = """
import faulthandler, sys, threading, time
import tflite_gpu
faulthandler.dump_traceback_later(90, exit=True)  # a hang prints every thread's stack, then exits 1

GPU = {gpu}
delegates = [tflite_gpu.GpuDelegate()] if GPU else None
it = tflite_gpu.Interpreter(model_content=add_model(), experimental_delegates=delegates, num_threads=2)
it.allocate_tensors()
if GPU:
    assert it.delegation_report()["delegated_nodes"] == 1, it.delegation_report()
rng = np.random.default_rng(0)
a = rng.standard_normal((1, 4, 4, 3)).astype(np.float32)
b = rng.standard_normal((1, 4, 4, 3)).astype(np.float32)
runner = it.get_signature_runner()

VIEWS = "reference to internal data"   # refused because another thread holds a view right now
def view_read():
    v = it.tensor(2)()
    s = float(v.sum())
    del v
    return s

calls = {{
    "allocate_tensors": lambda: it.allocate_tensors(),
    "invoke": lambda: it.invoke(),
    "resize_tensor_input": lambda: it.resize_tensor_input(0, [1, 4, 4, 3]),
    "set_tensor": lambda: it.set_tensor(0, a),
    "get_tensor": lambda: it.get_tensor(2),
    "tensor": view_read,
    "get_input_details": lambda: it.get_input_details(),
    "get_output_details": lambda: it.get_output_details(),
    "get_tensor_details": lambda: it.get_tensor_details(),
    "get_signature_list": lambda: it.get_signature_list(),
    "signature_runner": lambda: runner(x=a, y=b),
    "_get_ops_details": lambda: it._get_ops_details(),
    "delegation_report": lambda: it.delegation_report(),
    "profile": lambda: (it.enable_profiling(True), it.get_profile()),
    "num_threads": lambda: it.num_threads(),
    "get_metadata": lambda: it.get_metadata(),
}}
counts = {{k: 0 for k in calls}}
refused = {{k: 0 for k in calls}}
errors = []
stop = time.time() + {seconds}

def worker(name):
    fn = calls[name]
    while time.time() < stop:
        try:
            fn()
            counts[name] += 1
        except RuntimeError as e:
            if VIEWS not in str(e):
                errors.append((name, repr(e)))
                return
            refused[name] += 1
        except Exception as e:
            errors.append((name, repr(e)))
            return

ts = [threading.Thread(target=worker, args=(n,)) for n in calls for _ in range(2)]
for t in ts: t.start()
for t in ts: t.join()
assert not errors, errors
for k, n in counts.items():
    assert n > 0, f"{{k}} never completed: {{counts}} {{refused}}"
# After the storm the interpreter still computes the right thing (numpy oracle).
it.set_tensor(0, a); it.set_tensor(1, b); it.invoke()
np.testing.assert_allclose(it.get_tensor(2), np.maximum(a + b, 0), rtol=1e-5, atol=1e-6)
np.testing.assert_allclose(runner(x=b, y=a)["z"], np.maximum(a + b, 0), rtol=1e-5, atol=1e-6)
print("calls", sum(counts.values()), "refused", sum(refused.values()), counts)
"""


@pytest.mark.parametrize("gpu", [False, True], ids=["cpu", "gpu"])
def test_threads_share_one_interpreter(gpu):
    """32 threads (2 per public method) hammer one interpreter for 2 s: no hang (child timeout),
    no error other than the documented views refusal, every method completes, results right."""
    if gpu:
        from gpu_util import require_gpu
        require_gpu()
    out = run_child(MODEL + THREADS.format(gpu=gpu, seconds=2.0), timeout=150)
    print(out)
    assert "calls" in out


def test_two_plain_invokes_do_not_deadlock():
    """The reported case: two threads, each only invoke() on one interpreter."""
    run_child(MODEL + """
import threading, tflite_gpu
it = tflite_gpu.Interpreter(model_content=add_model((1, 64, 64, 32)))
it.allocate_tensors()
def w():
    for _ in range(300):
        it.invoke()
ts = [threading.Thread(target=w) for _ in range(2)]
[t.start() for t in ts]; [t.join() for t in ts]
""", timeout=60)


VIEWS = MODEL + """
import gc, tflite_gpu
MSG = "There is at least 1 reference to internal data in the interpreter in the form of a numpy array or slice"

def fresh():
    it = tflite_gpu.Interpreter(model_content=add_model())
    it.allocate_tensors()
    return it

def refuses(it, call):
    try:
        call(it)
    except RuntimeError as e:
        assert MSG in str(e), e
        return True
    return False

CALLS = {
    "invoke": lambda it: it.invoke(),
    "allocate_tensors": lambda it: it.allocate_tensors(),
    "resize_tensor_input": lambda it: it.resize_tensor_input(0, [3, 4, 4, 3]),
    "signature_runner": lambda it: it.get_signature_runner()(x=np.ones((2, 4, 4, 3), np.float32),
                                                             y=np.ones((2, 4, 4, 3), np.float32)),
}
HOLDS = {
    "view": lambda f: f(),
    "slice": lambda f: f()[0, 1:3],
    "reshape": lambda f: f().reshape(-1),
    "memoryview": lambda f: memoryview(f()),
    "in_list": lambda f: [f()],
    "np.asarray": lambda f: np.asarray(f()),
    "transpose": lambda f: f().T,
}
n = 0
for hname, hold in HOLDS.items():
    for cname, call in CALLS.items():
        it = fresh()
        fn = it.tensor(0)
        h = hold(fn)
        assert refuses(it, call), f"{cname} ran while a {hname} of tensor 0 was alive"
        # the refused call changed nothing: the view still aliases the live input buffer
        it.set_tensor(0, np.full((1, 4, 4, 3), 5, np.float32))
        assert float(np.asarray(h if hname != "in_list" else h[0]).reshape(-1)[0]) == 5.0
        del h
        gc.collect()
        # released: the call works again and computes the right thing (numpy oracle)
        assert not refuses(it, call), f"{cname} still refused after the {hname} was released"
        n += 1
# Holding only the function returned by tensor() is fine (LiteRT's documented pattern).
it = fresh()
fin, fout = it.tensor(0), it.tensor(2)
for k in range(3):
    fin()[...] = k
    it.set_tensor(1, np.ones((1, 4, 4, 3), np.float32))
    it.invoke()
    assert np.all(fout() == k + 1)
# The reported use-after-free: a view kept across a larger resize + allocate, then written.
it = fresh()
v = it.tensor(0)()
for call in (lambda: it.resize_tensor_input(0, [64, 4, 4, 3]), it.allocate_tensors, it.invoke):
    try:
        call()
        raise AssertionError("a state change ran with a view alive")
    except RuntimeError as e:
        assert MSG in str(e)
v[...] = 1.0   # still the live buffer: no crash, no write elsewhere
del v
it.resize_tensor_input(0, [64, 4, 4, 3]); it.resize_tensor_input(1, [64, 4, 4, 3])
it.allocate_tensors()
x = np.random.default_rng(1).standard_normal((64, 4, 4, 3)).astype(np.float32)
it.set_tensor(0, x); it.set_tensor(1, -2 * x); it.invoke()
np.testing.assert_allclose(it.get_tensor(2), np.maximum(-x, 0), rtol=1e-6)
# A view outlives its interpreter object: the view keeps the buffers alive.
it = fresh()
it.set_tensor(0, np.full((1, 4, 4, 3), 3, np.float32))
v = it.tensor(0)()
del it
gc.collect()
assert float(v.sum()) == 3 * 48
v[...] = 0
print("cases", n)
"""


def test_views_block_state_changes():
    """Each way of holding a view x each call that must refuse (LiteRT's RuntimeError); released
    view -> the call works again; the resize+allocate+write use-after-free is refused."""
    out = run_child(VIEWS, timeout=120)
    assert "cases 28" in out, out


def test_views_block_delegation():
    from gpu_util import require_gpu
    require_gpu()
    run_child(MODEL + """
import gc, tflite_gpu
it = tflite_gpu.Interpreter(model_content=add_model())
it.allocate_tensors()
d = tflite_gpu.GpuDelegate()
v = it.tensor(2)()
try:
    it.modify_graph_with_delegate(d)
    raise AssertionError("delegation ran with a view alive")
except RuntimeError as e:
    assert "reference to internal data" in str(e)
del v; gc.collect()
it.modify_graph_with_delegate(d)
it.allocate_tensors()
a = np.arange(48, dtype=np.float32).reshape(1, 4, 4, 3) - 20
it.set_tensor(0, a); it.set_tensor(1, a); it.invoke()
np.testing.assert_allclose(it.get_tensor(2), np.maximum(2 * a, 0), rtol=1e-6)
assert it.delegation_report()["delegated_nodes"] == 1
""", timeout=120)


def test_resized_input_before_allocate_is_refused():
    """resize_tensor_input changes the shape at once, the storage at allocate_tensors(). In
    between, get_tensor / set_tensor / tensor() of a grown input read and wrote past the old
    storage (found by the fuzz helper's API probe: 'double free or corruption', abort); now a
    ValueError naming the tensor. After allocate_tensors() the new shape runs (oracle: numpy)."""
    out = run_child(MODEL + """
import tflite_gpu
it = tflite_gpu.Interpreter(model_content=add_model())
it.allocate_tensors()
it.resize_tensor_input(0, [64, 4, 4, 3])
big = np.ones((64, 4, 4, 3), np.float32)
n = 0
for call in (lambda: it.get_tensor(0), lambda: it.set_tensor(0, big), lambda: it.tensor(0)()):
    try:
        call()
        raise AssertionError("a resized input was read or written before allocate_tensors()")
    except ValueError as e:
        assert "('x') was resized to [64, 4, 4, 3]" in str(e) and "allocate_tensors() first" in str(e), e
        n += 1
it.resize_tensor_input(1, [64, 4, 4, 3])
it.allocate_tensors()
x = np.random.default_rng(2).standard_normal((64, 4, 4, 3)).astype(np.float32)
it.set_tensor(0, x); it.set_tensor(1, -2 * x); it.invoke()
np.testing.assert_allclose(it.get_tensor(2), np.maximum(-x, 0), rtol=1e-6)
print("refused", n)
""", timeout=120)
    assert "refused 3" in out, out
