"""Re-entrancy (issue 12): a callback the interpreter makes while it runs (a Python custom op's fn
during invoke(), its shape_fn during allocate_tensors(), a `tflite_gpu` log handler during
modify_graph_with_delegate()) that calls the SAME interpreter gets a RuntimeError naming the
re-entrant call: never a self-deadlock, never a call into a half-run graph. Afterwards the
interpreter works and computes the right thing (numpy oracle). Each scenario runs in a child
process (misuse_util.run_child): a hang is a timeout failure, a crash a failure with its output."""
import pytest

from misuse_util import run_child

PRELUDE = """
import faulthandler, logging
import numpy as np
import tflite_gpu
from tflite_gpu import interpreter as tfi
import misuse_util
import threading, time
faulthandler.dump_traceback_later(100, exit=True)  # a hang prints every thread's stack, then exits 1

RE = "re-entrant call"

def custom_op_model(name="MyOp"):
    return misuse_util.custom_op_model(name, signature=True)

X = np.array([[1, -2, 3], [-0.5, 4, -6]], np.float32)

def want(x):
    return np.tanh(np.maximum(x, 0)) * 2 + x

# Every public call that reaches the engine, as a callback would make it on the running interpreter.
CALLS = {
    "invoke": lambda it: it.invoke(),
    "allocate_tensors": lambda it: it.allocate_tensors(),
    "set_tensor": lambda it: it.set_tensor(0, X),
    "get_tensor": lambda it: it.get_tensor(0),
    "tensor": lambda it: it.tensor(0)(),
    "resize_tensor_input": lambda it: it.resize_tensor_input(0, [2, 3]),
    "reset_all_variables": lambda it: it.reset_all_variables(),
    "get_input_details": lambda it: it.get_input_details(),
    "get_output_details": lambda it: it.get_output_details(),
    "get_tensor_details": lambda it: it.get_tensor_details(),
    "_get_ops_details": lambda it: it._get_ops_details(),
    "num_subgraphs": lambda it: it.num_subgraphs(),
    "signature_runner": lambda it: it.get_signature_runner()(x=X),
    "delegation_report": lambda it: it.delegation_report(),
    "get_profile": lambda it: it.get_profile(),
}

def try_call(it, name, seen):
    try:
        CALLS[name](it)
    except RuntimeError as e:
        seen[name] = str(e)
        return
    seen[name] = "ran"

def check(seen, where, names=CALLS):
    assert set(seen) == set(names), (where, sorted(set(names) - set(seen)))
    bad = {k: v for k, v in seen.items() if RE not in v}
    assert not bad, (where, bad)
"""

CUSTOM_OPS = PRELUDE + """
# 1. fn (during invoke) calls each method and catches the error; the outer invoke completes.
for name in CALLS:
    holder, seen = {}, {}
    def fn(a, name=name):
        try_call(holder["it"], name, seen)
        return np.tanh(a) * 2
    it = tfi.InterpreterWithCustomOps(model_content=custom_op_model(), custom_ops={"MyOp": (fn, lambda s: [s])})
    holder["it"] = it
    it.allocate_tensors()
    it.set_tensor(0, X)
    it.invoke()
    np.testing.assert_allclose(it.get_tensor(3), want(X), rtol=1e-6)
    check(seen, "fn/" + name, [name])
    # the lock was released: the same interpreter keeps working from the outside
    it.set_tensor(0, -X); it.invoke()
    np.testing.assert_allclose(it.get_tensor(3), want(-X), rtol=1e-6)
print("fn ok", len(CALLS))

# 2. fn lets the error propagate: the outer invoke raises RuntimeError naming the custom op and
# the re-entrant call; the interpreter is usable afterwards.
holder = {}
def fn2(a):
    holder["it"].invoke()
    return a
it = tfi.InterpreterWithCustomOps(model_content=custom_op_model(), custom_ops={"MyOp": (fn2, lambda s: [s])})
holder["it"] = it
it.allocate_tensors(); it.set_tensor(0, X)
try:
    it.invoke()
    raise AssertionError("re-entrant invoke from a custom op ran")
except RuntimeError as e:
    assert "custom op 'MyOp'" in str(e) and RE in str(e), e
it2 = tfi.InterpreterWithCustomOps(model_content=custom_op_model(), custom_ops={"MyOp": (lambda a: np.tanh(a) * 2, lambda s: [s])})
it2.allocate_tensors(); it2.set_tensor(0, X); it2.invoke()
np.testing.assert_allclose(it2.get_tensor(3), want(X), rtol=1e-6)
print("propagate ok")

# 3. shape_fn (during allocate_tensors, and again after a resize) calls each method.
for name in CALLS:
    holder, seen = {"armed": False}, {}
    def shape_fn(s, name=name):
        if holder["armed"]:
            try_call(holder["it"], name, seen)
        return [s]
    it = tfi.InterpreterWithCustomOps(model_content=custom_op_model(),
                                      custom_ops={"MyOp": (lambda a: np.tanh(a) * 2, shape_fn)})
    holder["it"] = it
    holder["armed"] = True
    it.allocate_tensors()
    holder["armed"] = False
    check(seen, "shape_fn/" + name, [name])
    it.set_tensor(0, X); it.invoke()
    np.testing.assert_allclose(it.get_tensor(3), want(X), rtol=1e-6)
print("shape_fn ok", len(CALLS))

# 4. dynamic outputs (no shape_fn): fn runs inside invoke with the output shape set from its
# result; a re-entrant resize + allocate there must not move the arena under the running graph.
holder, seen = {}, {}
def fn4(a):
    it = holder["it"]
    for name in ("resize_tensor_input", "allocate_tensors", "invoke"):
        try_call(it, name, seen)
    return np.tanh(a) * 2
it = tfi.InterpreterWithCustomOps(model_content=custom_op_model(), custom_ops={"MyOp": fn4})
holder["it"] = it
it.allocate_tensors()
for k in range(3):
    it.set_tensor(0, X + k); it.invoke()
    np.testing.assert_allclose(it.get_tensor(3), want(X + k), rtol=1e-6)
assert seen and all(RE in v for v in seen.values()), seen

# 5. a second interpreter used from inside the callback is fine (only the running one refuses).
other = tflite_gpu.Interpreter(model_content=custom_op_model("MyOq"))
it = tfi.InterpreterWithCustomOps(model_content=custom_op_model(), custom_ops={
    "MyOp": lambda a: (other.get_input_details(), np.tanh(a) * 2)[1]})
it.allocate_tensors(); it.set_tensor(0, X); it.invoke()
np.testing.assert_allclose(it.get_tensor(3), want(X), rtol=1e-6)
# Another thread that uses the busy interpreter from the callback waits (calls serialise); it is
# not re-entrant, so it is not refused, and it finishes once the callback returns: no deadlock.
done = []
def fn(a):
    t = threading.Thread(target=lambda: done.append(holder2["it"].get_input_details()))
    t.start()
    t.join(0.2)  # it waits for the interpreter (GIL released while it waits): we go on
    done.append("callback returned")
    return np.tanh(a) * 2
holder2 = {}
it = tfi.InterpreterWithCustomOps(model_content=custom_op_model(), custom_ops={"MyOp": (fn, lambda s: [s])})
holder2["it"] = it
it.allocate_tensors(); it.set_tensor(0, X); it.invoke()
for _ in range(200):
    if len(done) == 2:
        break
    time.sleep(0.05)
assert len(done) == 2 and done[0] == "callback returned", done
print("custom ops ok")
"""


def test_custom_op_callbacks_calling_their_interpreter():
    out = run_child(CUSTOM_OPS, timeout=150)
    assert "custom ops ok" in out, out


LOG_HANDLER = PRELUDE + """
# A `tflite_gpu` log handler (the delegate's log sink calls it) that calls the interpreter being
# delegated: the delegate warns about the CUSTOM op it cannot take during modify_graph_with_delegate.
holder, seen, records = {}, {}, []

class Reenter(logging.Handler):
    def emit(self, record):
        records.append(record.getMessage())
        it = holder.get("it")
        if it is not None:
            for name in CALLS:
                try_call(it, name, seen)

log = logging.getLogger("tflite_gpu")
log.addHandler(Reenter())
log.setLevel(logging.INFO)
it = tfi.InterpreterWithCustomOps(model_content=custom_op_model(), custom_ops={"MyOp": (lambda a: np.tanh(a) * 2, lambda s: [s])})
holder["it"] = it
it.modify_graph_with_delegate(tflite_gpu.GpuDelegate())
holder.pop("it")
assert records, "the delegate logged nothing (the scenario needs its warning about the CUSTOM op)"
check(seen, "log handler")
it.allocate_tensors(); it.set_tensor(0, X); it.invoke()
np.testing.assert_allclose(it.get_tensor(3), want(X), rtol=1e-5, atol=1e-6)
assert it.delegation_report()["delegated_nodes"] >= 1, it.delegation_report()

print("log handler ok", records[:1])
"""


def test_log_handler_calling_the_interpreter_being_delegated():
    from gpu_util import require_gpu
    require_gpu()
    out = run_child(LOG_HANDLER, timeout=150)
    assert "log handler ok" in out, out


def test_cpp_host_op_calling_its_interpreter(tmp_path):
    """tests/c/reentrant_host_op.cc: a C++ HostCustomOp whose eval calls AllocateTensors,
    ResizeInputTensor, Invoke and ModifyGraphWithDelegate on the running interpreter gets an error
    for each (the engine refuses, below the binding's lock), and the outer Invoke's result is right."""
    import os
    import subprocess
    import tflite_gpu
    from harness import find_cxx
    cxx = find_cxx("the C++ host test program")
    inc, lib = tflite_gpu.get_include(), tflite_gpu.get_library_dir()
    if not os.path.isfile(os.path.join(inc, "tflite_gpu", "interpreter.h")):
        pytest.skip(f"the installed package has no headers at {inc}")
    exe = tmp_path / "reentrant_host_op"
    src = os.path.join(os.path.dirname(__file__), "c", "reentrant_host_op.cc")
    flags = []
    if os.environ.get("LD_PRELOAD", "").find("asan") >= 0:  # the sanitizer build's library
        flags = ["-fsanitize=address,undefined"]
    r = subprocess.run([cxx, "-std=c++17", "-Wall", "-Wextra", "-Werror", *flags, src, "-I", inc, "-L", lib,
                        "-ltflite_gpu", f"-Wl,-rpath,{lib}", "-o", str(exe)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    code = PRELUDE.split("X = np.array")[0] + "\nopen(%r, 'wb').write(custom_op_model())\n" % str(tmp_path / "m.tflite")
    run_child(code, timeout=60)
    r = subprocess.run([str(exe), str(tmp_path / "m.tflite")], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[-1] == "ok", r.stdout
    assert "AllocateTensors called on subgraph 0 ('main') while it is running" in r.stdout, r.stdout
    assert "ResizeInputTensor called on subgraph 0" in r.stdout, r.stdout
    assert "is invoked while it is already running" in r.stdout, r.stdout
    assert "ModifyGraphWithDelegate called while the interpreter is running" in r.stdout, r.stdout
