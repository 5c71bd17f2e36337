"""Pinned host memory for the GPU delegate's partition inputs and outputs (issue #11, host path).

The interpreter gives every boundary tensor of a GPU partition host memory the delegate allocates
(an OpenCL CL_MEM_ALLOC_HOST_PTR buffer mapped once; pinned on a discrete GPU), so set_tensor
writes straight into memory the device copies from by direct DMA. TFLITE_GPU_PINNED_HOST=0 keeps
them in the arena (the A/B switch). These tests check the contracts that must not change:

* results: bit-identical to the arena path (same device kernels, same values) and close to the
  CPU reference kernels (use_reference_kernels=True), with partitions whose boundaries are shared
  with CPU nodes (a CPU node reading a partition input, CPU nodes between two partitions);
* resize_tensor_input + allocate_tensors cycles (growing and shrinking), tensor() views;
* lifetimes: interpreter deleted before / after its delegate, two interpreters on one delegate,
  an interpreter deleted while a DO_NOT_WAIT run is still in flight (scripts/sanitize.sh runs
  this file under ASan), and inputs rewritable as soon as a DO_NOT_WAIT invoke returns.
"""
import gc

import numpy as np
import pytest

import tflite_gpu
from gpu_util import CHAIN_SHAPE, chain_model, delegate, require_gpu
from harness import invoke_step, our_interpreter, rel_l2, run_tflite_gpu
from tflite_gpu.testing.builder import ModelBuilder

NONE = dict(fused_activation_function="NONE")
SHAPE = CHAIN_SHAPE
NBYTES = 4 * int(np.prod(SHAPE))


def fork_model(batch_dynamic=False):
    """x -> ADD(c) -> MUL(c) -> y1 on the GPU, and x -> LOGISTIC -> y2, which the op filter keeps on
    the CPU: a CPU node reads the partition's input from the delegate's host memory."""
    b = ModelBuilder()
    sig = dict(shape_signature=[-1] + SHAPE[1:]) if batch_dynamic else {}
    x = b.add_input(SHAPE, name="x", **sig)
    c = b.add_const(np.linspace(-1, 1, SHAPE[-1]).astype(np.float32))
    t = b.add_tensor(SHAPE, **sig)
    y1 = b.add_tensor(SHAPE, name="y1", **sig)
    y2 = b.add_tensor(SHAPE, name="y2", **sig)
    b.add_op("ADD", [x, c], [t], options=NONE)
    b.add_op("MUL", [t, c], [y1], options=NONE)
    b.add_op("LOGISTIC", [x], [y2])
    b.mark_output(y1)
    b.mark_output(y2)
    return b.build()


def values(shape, seed):
    return (np.random.default_rng(seed).standard_normal(shape) * 2).astype(np.float32)


def outputs(it):
    return [it.get_tensor(o["index"]) for o in it.get_output_details()]


CASES = {
    "chain_2_partitions": (chain_model, dict(max_delegated_partitions=2), 4),
    "cpu_reads_gpu_input": (fork_model, dict(op_filter=["LOGISTIC"]), 2),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_boundaries_in_pinned_memory_same_results(case, monkeypatch):
    require_gpu()
    make, opts, n_boundaries = CASES[case]
    m, x = make(), values(SHAPE, 1)
    got = {}
    for pinned in ("0", "1"):
        monkeypatch.setenv("TFLITE_GPU_PINNED_HOST", pinned)
        d = delegate(**opts)
        it = our_interpreter(m, delegates=[d])
        got[pinned] = invoke_step(it, [x])
        mem = d.pinned_host_memory()
        if pinned == "1":
            assert mem == dict(buffers=n_boundaries, bytes=n_boundaries * NBYTES), mem
        else:
            assert mem == dict(buffers=0, bytes=0), mem
        # A second invoke with other values: the memory is reused, not stale.
        x2 = values(SHAPE, 2)
        for a, b in zip(invoke_step(it, [x2]), run_tflite_gpu(m, [x2], reference=True)):
            assert rel_l2(a, b) <= 1e-5
        del it
        gc.collect()
        assert d.pinned_host_memory() == dict(buffers=0, bytes=0)  # freed with the interpreter
    for a, b, r in zip(got["0"], got["1"], run_tflite_gpu(m, [x], reference=True)):
        np.testing.assert_array_equal(b, a)  # same kernels, same values: bit for bit
        assert rel_l2(b, r) <= 1e-5


def test_resize_reallocate_cycles(monkeypatch):
    require_gpu()
    monkeypatch.delenv("TFLITE_GPU_PINNED_HOST", raising=False)
    m = fork_model(batch_dynamic=True)
    d = delegate(op_filter=["LOGISTIC"])
    it = our_interpreter(m, delegates=[d])
    xi = it.get_input_details()[0]["index"]
    peak = 0
    for i, batch in enumerate([3, 1, 5, 2, 5]):
        it.resize_tensor_input(xi, [batch] + SHAPE[1:])
        it.allocate_tensors()
        x = values([batch] + SHAPE[1:], 10 + i)
        if i % 2:  # through a tensor() view of the pinned input
            view = it.tensor(xi)()
            view[...] = x
            del view
            it.invoke()
            got = outputs(it)
        else:
            got = invoke_step(it, [x])
        for a, r in zip(got, run_tflite_gpu(m, [x], reference=True)):
            assert a.shape == r.shape
            assert rel_l2(a, r) <= 1e-5
        mem = d.pinned_host_memory()
        assert mem["buffers"] == 2  # x and y1; memory is kept while large enough, regrown otherwise
        peak = max(peak, batch)
        assert mem["bytes"] == 2 * peak * NBYTES, (batch, mem)
    del it
    gc.collect()
    assert d.pinned_host_memory()["buffers"] == 0


def test_interpreter_deleted_before_and_after_delegate():
    require_gpu()
    m, x = fork_model(), values(SHAPE, 3)
    want = run_tflite_gpu(m, [x], reference=True)
    # Interpreter first: the pinned memory goes with it; the delegate stays usable.
    d = delegate(op_filter=["LOGISTIC"])
    it = our_interpreter(m, delegates=[d])
    invoke_step(it, [x])
    del it
    gc.collect()
    assert d.pinned_host_memory() == dict(buffers=0, bytes=0)
    it = our_interpreter(m, delegates=[d])
    for a, r in zip(invoke_step(it, [x]), want):
        assert rel_l2(a, r) <= 1e-5
    # Delegate closed and dropped first: the interpreter keeps running on its partitions.
    d.close()
    del d
    gc.collect()
    for a, r in zip(invoke_step(it, [x]), want):
        assert rel_l2(a, r) <= 1e-5
    del it
    gc.collect()


def test_two_interpreters_on_one_delegate():
    require_gpu()
    m = chain_model()
    d = delegate(max_delegated_partitions=2)
    a, b = our_interpreter(m, delegates=[d]), our_interpreter(m, delegates=[d])
    assert d.pinned_host_memory()["buffers"] == 8  # each interpreter's own boundaries
    xa, xb = values(SHAPE, 4), values(SHAPE, 5)
    a.set_tensor(0, xa)
    b.set_tensor(0, xb)  # must not land in a's memory
    a.invoke()
    b.invoke()
    ra, rb = run_tflite_gpu(m, [xa], reference=True), run_tflite_gpu(m, [xb], reference=True)
    assert rel_l2(outputs(a)[0], ra[0]) <= 1e-5
    assert rel_l2(outputs(b)[0], rb[0]) <= 1e-5
    del a
    gc.collect()
    assert d.pinned_host_memory()["buffers"] == 4
    for o, r in zip(invoke_step(b, [xa]), ra):
        assert rel_l2(o, r) <= 1e-5


def test_do_not_wait_input_rewritable_when_invoke_returns():
    """DO_NOT_WAIT leaves the outputs in flight, but the input's host memory is the caller's again
    when invoke returns: rewriting it at once must not change the running inference."""
    require_gpu()
    m = fork_model(batch_dynamic=True)
    d = delegate(op_filter=["LOGISTIC"], wait_type=tflite_gpu.WaitType.DO_NOT_WAIT)
    it = tflite_gpu.Interpreter(model_content=m, experimental_delegates=[d])
    big = [4096] + SHAPE[1:]  # ~3.4 MB: an upload still running when invoke returned would be seen
    it.resize_tensor_input(0, big)
    it.allocate_tensors()
    x1, x2 = values(big, 6), values(big, 7)
    want1, want2 = run_tflite_gpu(m, [x1], reference=True), run_tflite_gpu(m, [x2], reference=True)
    yi = it.get_output_details()[0]["index"]
    for _ in range(3):
        it.set_tensor(0, x1)
        it.invoke()
        it.set_tensor(0, x2)
        assert rel_l2(it.get_tensor(yi), want1[0]) <= 1e-5
        it.invoke()
        assert rel_l2(it.get_tensor(yi), want2[0]) <= 1e-5
    # Deleted with a run in flight: the kernel finishes it before its memory is freed.
    it.set_tensor(0, x1)
    it.invoke()
    del it
    gc.collect()
    assert d.pinned_host_memory() == dict(buffers=0, bytes=0)


@pytest.mark.parametrize("threads", ["1", "3", None])
def test_large_tensor_copies_split_over_threads(threads, monkeypatch):
    """set_tensor / get_tensor copies of 8 MB or more run on up to TFLITE_GPU_COPY_THREADS threads
    (an odd size, not a multiple of the 64-byte chunking): the values arrive exactly, through the
    CPU kernels and through the GPU delegate's pinned boundaries."""
    if threads is None:
        monkeypatch.delenv("TFLITE_GPU_COPY_THREADS", raising=False)
    else:
        monkeypatch.setenv("TFLITE_GPU_COPY_THREADS", threads)
    n = 2_100_003  # 8.4 MB of float32
    b = ModelBuilder()
    x = b.add_input([1, n], name="x")
    one = b.add_const(np.ones([1], np.float32))
    y = b.add_tensor([1, n], name="y")
    b.add_op("ADD", [x, one], [y], options=NONE)
    b.mark_output(y)
    m = b.build()
    v = values([1, n], 8)
    want = v + np.float32(1)
    for delegates in ([], None):
        if delegates is None:
            require_gpu()
            delegates = [delegate()]
        it = tflite_gpu.Interpreter(model_content=m, experimental_delegates=delegates)
        it.allocate_tensors()
        it.set_tensor(0, v)
        np.testing.assert_array_equal(it.get_tensor(0), v)
        it.invoke()
        np.testing.assert_array_equal(it.get_tensor(it.get_output_details()[0]["index"]), want)
