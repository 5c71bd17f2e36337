"""Runs a misuse scenario in a child Python process, so that a hang (deadlock) or a crash
(SIGSEGV, abort, sanitizer report) is a test failure with the child's output, not a frozen or
aborted test run. The child gets this directory on sys.path (harness, builder helpers)."""
import os
import subprocess
import sys
import tempfile
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))


def run_child(code: str, timeout: float = 120.0, env=None):
    """Runs `code` in a fresh interpreter; returns its stdout. Fails on a hang, a signal or rc != 0."""
    e = dict(os.environ)
    # Relative entries (PYTHONPATH=. in a developer tree) made absolute: the child runs elsewhere.
    inherited = [os.path.abspath(p) if p else p for p in e.get("PYTHONPATH", "").split(os.pathsep)]
    e["PYTHONPATH"] = os.pathsep.join([HERE] + inherited)
    e.setdefault("PYTHONFAULTHANDLER", "1")
    if env:
        e.update(env)
    try:
        # cwd outside the repository: `python -c` puts the cwd first on sys.path, and the source
        # tree's tflite_gpu/ (no built _core) would shadow the installed package.
        p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                           timeout=timeout, env=e, cwd=tempfile.gettempdir())
    except subprocess.TimeoutExpired as ex:
        out = (ex.stdout or b"").decode() if isinstance(ex.stdout, bytes) else (ex.stdout or "")
        err = (ex.stderr or b"").decode() if isinstance(ex.stderr, bytes) else (ex.stderr or "")
        raise AssertionError(f"child hung (no exit within {timeout:.0f} s: a deadlock?)\n--- stdout\n{out[-4000:]}"
                             f"\n--- stderr\n{err[-4000:]}") from None
    if p.returncode != 0:
        how = f"killed by signal {-p.returncode}" if p.returncode < 0 else f"exit code {p.returncode}"
        raise AssertionError(f"child failed ({how})\n--- stdout\n{p.stdout[-4000:]}\n--- stderr\n{p.stderr[-6000:]}")
    if "ERROR: AddressSanitizer" in p.stderr or "runtime error:" in p.stderr:
        raise AssertionError(f"sanitizer report in the child\n{p.stderr[-6000:]}")
    return p.stdout


def custom_op_model(name="MyOp", signature=False):
    """RELU -> CUSTOM `name` -> ADD(., x): y = f(relu(x)) + x on [2, 3] float32 (tensors x, a, c,
    y = 0..3); with signature, a "serving_default" signature x -> y. Shared by the drop-in and
    re-entrancy tests (the latter builds it in its child processes)."""
    from tflite_gpu.testing.builder import ModelBuilder
    b = ModelBuilder()
    x = b.add_input([2, 3], name="x")
    a = b.add_tensor([2, 3], name="a")
    c = b.add_tensor([2, 3], name="c")
    y = b.add_tensor([2, 3], name="y")
    b.add_op("RELU", [x], [a])
    b.add_op(("CUSTOM", name), [a], [c])
    b.add_op("ADD", [c, x], [y], options=dict(fused_activation_function="NONE"))
    b.mark_output(y)
    if signature:
        b.add_signature("serving_default", {"x": x}, {"y": y})
    return b.build()
