"""Binding user OpenCL buffers to tensors (GpuDelegate.bind_buffer_to_tensor, as Metal's
TFLGpuDelegateBindMetalBufferToTensor), Interpreter.set_allow_buffer_handle_output /
ensure_tensor_data_is_readable, and the transfer counter that shows the bound path does no
host<->device copy. Buffers are pyopencl buffers on the delegate's context (shared through
device=<pyopencl CommandQueue>).

Oracles: the plain CPU reference kernels (use_reference_kernels=True) on the same values, and the
same delegate's un-bound run (the bound path runs the same device kernels on the same values, so
float32 results are equal bit for bit)."""
import ctypes
import gc
import os
import subprocess
import sys

import numpy as np
import pytest

import tflite_gpu
from gpu_util import CHAIN_SHAPE, chain_model, require_gpu
from harness import rel_l2
from tflite_gpu.testing.builder import ModelBuilder

cl = pytest.importorskip("pyopencl", reason="pyopencl is needed to make OpenCL buffers to bind")

NONE = dict(fused_activation_function="NONE")
SHAPE = CHAIN_SHAPE
EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "examples")


@pytest.fixture(scope="module")
def clq():
    require_gpu()
    try:
        q = tflite_gpu.pyopencl_queue()  # the delegate's default device (NVIDIA without an ICD file too)
    except Exception as e:  # pragma: no cover - depends on the machine
        pytest.skip(f"pyopencl cannot reach the delegate's device here: {e}")
    return q.context, q


def test_pyopencl_queue_is_on_the_delegates_default_device(clq):
    ctx, q = clq
    sel = [d for d in tflite_gpu.list_devices() if d["selected"]][0]
    assert q.device.name.strip() == sel["name"].strip()
    assert q.device.platform.name.strip() == sel["platform"].strip()
    assert isinstance(tflite_gpu.expose_unregistered_vendors(), list)
    with pytest.raises(RuntimeError, match="cannot reach the device 'no such device xyz'"):
        tflite_gpu.pyopencl_queue("no such device xyz")
    with pytest.raises(TypeError, match="device_name"):
        tflite_gpu.pyopencl_queue(3)


def add_tanh(batch_dynamic=False):
    """x -> ADD(c) -> TANH -> y, all on the GPU (one partition: x in, y out)."""
    b = ModelBuilder()
    sig = dict(shape_signature=[-1] + SHAPE[1:]) if batch_dynamic else {}
    x = b.add_input(SHAPE, name="x", **sig)
    c = b.add_const(np.linspace(-1, 1, SHAPE[-1]).astype(np.float32), name="c")
    t = b.add_tensor(SHAPE, name="t", **sig)
    y = b.add_tensor(SHAPE, name="y", **sig)
    b.add_op("ADD", [x, c], [t], options=NONE)
    b.add_op("TANH", [t], [y])
    b.mark_output(y)
    return b.build()


XQ = dict(scale=[0.05], zero_point=[-3])
CQ = dict(scale=[0.02], zero_point=[1])
YQ = dict(scale=[0.06], zero_point=[2])


def int8_add():
    """int8 x (scale 0.05, zp -3) + int8 constant -> int8 y (scale 0.06, zp 2)."""
    b = ModelBuilder()
    x = b.add_input(SHAPE, dtype=np.int8, name="x", quant=XQ)
    c = b.add_const(np.arange(-3, 4, dtype=np.int8) * 10, name="c", quant=CQ)
    y = b.add_tensor(SHAPE, dtype=np.int8, name="y", quant=YQ)
    b.add_op("ADD", [x, c], [y], options=NONE)
    b.mark_output(y)
    return b.build()


def quantize_add_model():
    """float x -> QUANTIZE (int8, XQ) -> ADD int8 constant (YQ) -> DEQUANTIZE -> float y: the float-I/O
    integer model's shape, whose QUANTIZE the delegate folds into x's upload (to_phwc4+QUANTIZE)."""
    b = ModelBuilder()
    x = b.add_input(SHAPE, name="x")
    xq = b.add_tensor(SHAPE, dtype=np.int8, name="xq", quant=XQ)
    c = b.add_const(np.arange(-3, 4, dtype=np.int8) * 10, name="c", quant=CQ)
    yq = b.add_tensor(SHAPE, dtype=np.int8, name="yq", quant=YQ)
    y = b.add_tensor(SHAPE, name="y")
    b.add_op("QUANTIZE", [x], [xq])
    b.add_op("ADD", [xq, c], [yq], options=NONE)
    b.add_op("DEQUANTIZE", [yq], [y])
    b.mark_output(y)
    return b.build()


def less_model():
    """x < c -> bool y (a BOOL partition output)."""
    b = ModelBuilder()
    x = b.add_input(SHAPE, name="x")
    c = b.add_const(np.zeros(SHAPE[-1], np.float32), name="c")
    y = b.add_tensor(SHAPE, dtype=np.bool_, name="y")
    b.add_op("LESS", [x, c], [y])
    b.mark_output(y)
    return b.build()


def x_values(seed=1, shape=SHAPE):
    return (np.random.default_rng(seed).standard_normal(shape) * 2).astype(np.float32)


def reference(model, x):
    """Our plain CPU reference kernels."""
    it = tflite_gpu.Interpreter(model_content=model, use_reference_kernels=True)
    xi = it.get_input_details()[0]["index"]
    if list(x.shape) != list(it.get_input_details()[0]["shape"]):
        it.resize_tensor_input(xi, list(x.shape))
    it.allocate_tensors()
    it.set_tensor(xi, x)
    it.invoke()
    return it.get_tensor(it.get_output_details()[0]["index"])


def gpu_interp(model, queue, **opts):
    d = tflite_gpu.GpuDelegate(tflite_gpu.GpuDelegateOptions(device=queue, **opts))
    it = tflite_gpu.Interpreter(model_content=model, experimental_delegates=[d])
    it.allocate_tensors()
    return it, d, it.get_input_details()[0]["index"], it.get_output_details()[0]["index"]


def unbound(model, queue, x, **opts):
    it, _, xi, yi = gpu_interp(model, queue, **opts)
    it.set_tensor(xi, x)
    it.invoke()
    return it.get_tensor(yi)


def cl_buffer(ctx, array=None, nbytes=None):
    mf = cl.mem_flags
    if array is not None:
        return cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=np.ascontiguousarray(array))
    return cl.Buffer(ctx, mf.READ_WRITE, size=nbytes)


def read(queue, buf, shape, dtype=np.float32):
    out = np.empty(shape, dtype)
    cl.enqueue_copy(queue, out, buf)
    queue.finish()
    return out


def delta(d, before):
    now = d.transfer_stats()
    return {k: now[k] - before[k] for k in now}


# ----------------------------------------------------------------------------------- results
def test_bound_input_reads_the_buffer(clq):
    ctx, q = clq
    m, x = add_tanh(), x_values()
    it, d, xi, yi = gpu_interp(m, q)
    d.bind_buffer_to_tensor(xi, cl_buffer(ctx, x))
    with pytest.raises(ValueError, match="OpenCL buffer is bound to it"):  # its data lives in the buffer
        it.set_tensor(xi, np.zeros(SHAPE, np.float32))
    before = d.transfer_stats()
    it.invoke()
    assert delta(d, before)["host_to_device"] == 0
    got = it.get_tensor(yi)
    np.testing.assert_array_equal(got, unbound(m, q, x))
    assert rel_l2(got, reference(m, x)) <= 1e-6


def test_bound_output_is_written_on_the_device(clq):
    ctx, q = clq
    m, x = add_tanh(), x_values(2)
    it, d, xi, yi = gpu_interp(m, q)
    yb = cl_buffer(ctx, nbytes=x.nbytes)
    d.bind_buffer_to_tensor(yi, yb)
    it.set_allow_buffer_handle_output(True)
    it.set_tensor(xi, x)
    before = d.transfer_stats()
    it.invoke()
    assert delta(d, before) == dict(host_to_device=1, device_to_host=0, host_to_device_bytes=x.nbytes,
                                    device_to_host_bytes=0)
    got = read(q, yb, SHAPE)
    np.testing.assert_array_equal(got, unbound(m, q, x))
    assert rel_l2(got, reference(m, x)) <= 1e-6


def test_bound_input_and_output_do_no_transfer(clq):
    """The zero-copy claim: with input and output bound and buffer-handle outputs allowed, invoke
    enqueues no clEnqueueWriteBuffer / clEnqueueReadBuffer at all; the un-bound run does one each."""
    ctx, q = clq
    m = add_tanh()
    it, d, xi, yi = gpu_interp(m, q)
    x0 = x_values(3)
    it.set_tensor(xi, x0)
    before = d.transfer_stats()
    it.invoke()
    assert delta(d, before) == dict(host_to_device=1, device_to_host=1, host_to_device_bytes=x0.nbytes,
                                    device_to_host_bytes=x0.nbytes)
    xb, yb = cl_buffer(ctx, nbytes=x0.nbytes), cl_buffer(ctx, nbytes=x0.nbytes)
    d.bind_buffer_to_tensor(xi, xb)
    d.bind_buffer_to_tensor(yi, yb)
    it.set_allow_buffer_handle_output(True)
    for seed in (4, 5):  # new input values each time, written by pyopencl, never by the interpreter
        x = x_values(seed)
        cl.enqueue_copy(q, xb, x)
        before = d.transfer_stats()
        it.invoke()
        assert delta(d, before) == dict(host_to_device=0, device_to_host=0, host_to_device_bytes=0,
                                        device_to_host_bytes=0)
        got = read(q, yb, SHAPE)
        np.testing.assert_array_equal(got, unbound(m, q, x))
        assert rel_l2(got, reference(m, x)) <= 1e-6


def test_fp16_buffers_with_precision_loss(clq):
    ctx, q = clq
    m = add_tanh()
    x16 = x_values(6).astype(np.float16)
    it, d, xi, yi = gpu_interp(m, q, is_precision_loss_allowed=True)
    assert d.info()["precision"] in ("F16", "F32_F16")
    yb = cl_buffer(ctx, nbytes=x16.nbytes)
    d.bind_buffer_to_tensor(xi, cl_buffer(ctx, x16), dtype=np.float16)
    d.bind_buffer_to_tensor(yi, yb, dtype="float16")
    it.set_allow_buffer_handle_output(True)
    before = d.transfer_stats()
    it.invoke()
    assert delta(d, before)["host_to_device"] == 0 and delta(d, before)["device_to_host"] == 0
    got = read(q, yb, SHAPE, np.float16)
    # Same device values as the host path (x16 is exact in the fp16 storage, and so is the output).
    want_gpu = unbound(m, q, x16.astype(np.float32), is_precision_loss_allowed=True)
    np.testing.assert_array_equal(got, want_gpu.astype(np.float16))
    assert rel_l2(got.astype(np.float32), reference(m, x16.astype(np.float32))) <= 2e-3


def test_int8_model_binds_dequantized_floats(clq):
    ctx, q = clq
    m = int8_add()
    xq = np.random.default_rng(7).integers(-128, 128, SHAPE).astype(np.int8)
    xf = ((xq.astype(np.float32) - XQ["zero_point"][0]) * np.float32(XQ["scale"][0])).astype(np.float32)
    it, d, xi, yi = gpu_interp(m, q)
    assert it.delegation_report()["delegated_nodes"] == 1
    yb = cl_buffer(ctx, nbytes=xf.nbytes)
    d.bind_buffer_to_tensor(xi, cl_buffer(ctx, xf))
    d.bind_buffer_to_tensor(yi, yb)
    it.set_allow_buffer_handle_output(True)
    it.invoke()
    got = read(q, yb, SHAPE)
    s, zp = np.float32(YQ["scale"][0]), YQ["zero_point"][0]
    # The device's output values are on y's grid; the host path quantizes exactly those.
    want_q = unbound(m, q, xq)
    np.testing.assert_allclose(got, (want_q.astype(np.float32) - zp) * s, rtol=0, atol=float(s) * 1e-4)
    ref_q = reference(m, xq)
    assert np.max(np.abs(got - (ref_q.astype(np.float32) - zp) * s)) <= float(s) * 1.001  # 1 step, as test_gpu_quant
    # and the int8 host tensor on request is the quantized value
    it.ensure_tensor_data_is_readable(yi)
    np.testing.assert_array_equal(it.get_tensor(yi), want_q)


def test_quantize_folded_into_input_upload_also_on_a_bound_input(clq):
    """A QUANTIZE of a float input runs inside the input's conversion kernel (no kernel of its own);
    a bound input's conversion must snap the same way: bound == unbound == reference, in steps of y."""
    ctx, q = clq
    m = quantize_add_model()
    x = x_values(11)
    want_ref = reference(m, x)
    # unbound, with kernel labels: the QUANTIZE has no kernel, the upload carries it
    d = tflite_gpu.GpuDelegate(tflite_gpu.GpuDelegateOptions(device=q, enable_profiling=True))
    it = tflite_gpu.Interpreter(model_content=m, experimental_delegates=[d])
    it.allocate_tensors()
    xi, yi = it.get_input_details()[0]["index"], it.get_output_details()[0]["index"]
    assert it.delegation_report()["delegated_nodes"] == 3
    it.set_tensor(xi, x)
    it.enable_profiling(True)
    it.invoke()
    labels = [k["name"] for k in it._core.gpu_kernel_times()]
    assert labels[0] == "to_phwc4+QUANTIZE" and "QUANTIZE" not in labels[1:], labels
    want = it.get_tensor(yi).copy()
    s = float(YQ["scale"][0])
    assert np.max(np.abs(want - want_ref)) <= s * 1.001  # 1 step, as test_gpu_quant
    # bound input (raw floats, not on x's grid): the same snapped result, bit for bit
    it2, d2, xi2, yi2 = gpu_interp(m, q)
    d2.bind_buffer_to_tensor(xi2, cl_buffer(ctx, x))
    it2.invoke()
    np.testing.assert_array_equal(it2.get_tensor(yi2), want)
    # and turning the fusion off (a separate QUANTIZE kernel) gives the same values
    os.environ["TFLITE_GPU_DISABLE_FUSION"] = "elementwise"
    try:
        np.testing.assert_array_equal(unbound(m, q, x), want)
    finally:
        del os.environ["TFLITE_GPU_DISABLE_FUSION"]


# --------------------------------------------------------------- buffer-handle outputs
def test_allow_buffer_handle_output_and_ensure_readable(clq):
    """Unbound outputs stay on the device when allowed; ensure_tensor_data_is_readable copies one;
    get_tensor / tensor() of a stale output copy it first (documented), never return old data."""
    _, q = clq
    m = add_tanh()
    it, d, xi, yi = gpu_interp(m, q)
    it.set_allow_buffer_handle_output(True)
    x1, x2 = x_values(8), x_values(9)
    it.set_tensor(xi, x1)
    before = d.transfer_stats()
    it.invoke()
    assert delta(d, before)["device_to_host"] == 0
    before = d.transfer_stats()
    it.ensure_tensor_data_is_readable(yi)
    assert delta(d, before)["device_to_host"] == 1
    it.ensure_tensor_data_is_readable(yi)  # already readable: no second copy
    assert delta(d, before)["device_to_host"] == 1
    np.testing.assert_array_equal(it.get_tensor(yi), unbound(m, q, x1))
    it.set_tensor(xi, x2)
    it.invoke()  # y is stale again: get_tensor copies, so it is x2's result
    np.testing.assert_array_equal(it.get_tensor(yi), unbound(m, q, x2))
    it.set_tensor(xi, x1)
    it.invoke()
    np.testing.assert_array_equal(it.tensor(yi)(), unbound(m, q, x1))
    # Back to the default: outputs are read at invoke.
    it.set_allow_buffer_handle_output(False)
    before = d.transfer_stats()
    it.invoke()
    assert delta(d, before)["device_to_host"] == 1


def test_bound_output_without_allow_is_also_copied_to_host(clq):
    """TFLite's Invoke makes every output readable unless buffer-handle outputs are allowed: a bound
    output is written to its buffer and read to host memory too."""
    ctx, q = clq
    m, x = add_tanh(), x_values(10)
    it, d, xi, yi = gpu_interp(m, q)
    yb = cl_buffer(ctx, nbytes=x.nbytes)
    d.bind_buffer_to_tensor(yi, yb)
    it.set_tensor(xi, x)
    before = d.transfer_stats()
    it.invoke()
    assert delta(d, before)["device_to_host"] == 1
    want = unbound(m, q, x)
    np.testing.assert_array_equal(read(q, yb, SHAPE), want)
    before = d.transfer_stats()
    np.testing.assert_array_equal(it.get_tensor(yi), want)
    assert delta(d, before)["device_to_host"] == 0


def test_stale_output_with_bound_buffer_converts_on_request(clq):
    ctx, q = clq
    m, x = add_tanh(), x_values(11)
    it, d, xi, yi = gpu_interp(m, q)
    d.bind_buffer_to_tensor(yi, cl_buffer(ctx, nbytes=x.nbytes))
    it.set_allow_buffer_handle_output(True)
    it.set_tensor(xi, x)
    it.invoke()
    np.testing.assert_array_equal(it.get_tensor(yi), unbound(m, q, x))


def test_do_not_wait_with_bound_buffers_on_the_shared_queue(clq):
    """DO_NOT_WAIT returns without waiting; work enqueued after invoke on the same (in-order) queue
    sees the finished output."""
    ctx, q = clq
    m, x = add_tanh(), x_values(20)
    it, d, xi, yi = gpu_interp(m, q, wait_type=tflite_gpu.WaitType.DO_NOT_WAIT)
    yb = cl_buffer(ctx, nbytes=x.nbytes)
    d.bind_buffer_to_tensor(xi, cl_buffer(ctx, x))
    d.bind_buffer_to_tensor(yi, yb)
    it.set_allow_buffer_handle_output(True)
    it.invoke()
    np.testing.assert_array_equal(read(q, yb, SHAPE), unbound(m, q, x))
    np.testing.assert_array_equal(it.get_tensor(yi), unbound(m, q, x))


def test_binding_on_a_partition_loaded_from_serialization(clq, tmp_path):
    """A warm start (ENABLE_SERIALIZATION + serialization_dir + model_token) loads the prepared
    partition from disk; binding works on it as on a freshly built one."""
    ctx, q = clq
    m, x = add_tanh(), x_values(21)
    flags = tflite_gpu.ExperimentalFlags
    opts = dict(experimental_flags=flags.ENABLE_QUANT | flags.ENABLE_SERIALIZATION,
                serialization_dir=str(tmp_path), model_token="bind-test")
    gpu_interp(m, q, **opts)  # cold: writes the entry
    it, d, xi, yi = gpu_interp(m, q, **opts)
    assert d.cache_info()["serialization"]["hits"] >= 1, d.cache_info()
    yb = cl_buffer(ctx, nbytes=x.nbytes)
    d.bind_buffer_to_tensor(xi, cl_buffer(ctx, x))
    d.bind_buffer_to_tensor(yi, yb)
    it.set_allow_buffer_handle_output(True)
    before = d.transfer_stats()
    it.invoke()
    assert delta(d, before)["host_to_device"] == 0 and delta(d, before)["device_to_host"] == 0
    np.testing.assert_array_equal(read(q, yb, SHAPE), unbound(m, q, x))


# ------------------------------------------------------------------------ unbind, resize, refs
def test_unbind_returns_to_host_copies(clq):
    ctx, q = clq
    m = add_tanh()
    it, d, xi, yi = gpu_interp(m, q)
    xa, xb_ = x_values(12), x_values(13)
    d.bind_buffer_to_tensor(xi, cl_buffer(ctx, xa))
    it.invoke()
    np.testing.assert_array_equal(it.get_tensor(yi), unbound(m, q, xa))
    d.bind_buffer_to_tensor(xi, None)
    d.bind_buffer_to_tensor(xi, None)  # unbinding twice is fine
    it.set_tensor(xi, xb_)
    before = d.transfer_stats()
    it.invoke()
    assert delta(d, before)["host_to_device"] == 1
    np.testing.assert_array_equal(it.get_tensor(yi), unbound(m, q, xb_))


def test_resize_drops_bindings_with_a_clear_error(clq):
    ctx, q = clq
    m = add_tanh(batch_dynamic=True)
    it, d, xi, yi = gpu_interp(m, q)
    x1 = x_values(14)
    d.bind_buffer_to_tensor(xi, cl_buffer(ctx, x1))
    it.invoke()
    np.testing.assert_array_equal(it.get_tensor(yi), unbound(m, q, x1))
    it.resize_tensor_input(xi, [2] + SHAPE[1:])
    it.allocate_tensors()
    with pytest.raises(RuntimeError, match=r"unbound when the graph was re-prepared after a resize.*\[2, 6, 5, 7\]"):
        it.invoke()
    x2 = x_values(15, [2] + SHAPE[1:])
    with pytest.raises(ValueError, match="needs 1680"):  # the old size no longer fits
        d.bind_buffer_to_tensor(xi, cl_buffer(ctx, x1))
    d.bind_buffer_to_tensor(xi, cl_buffer(ctx, x2))
    it.invoke()
    assert rel_l2(it.get_tensor(yi), reference(m, x2)) <= 1e-6
    # Unbinding also clears the error.
    it.resize_tensor_input(xi, SHAPE)
    it.allocate_tensors()
    with pytest.raises(RuntimeError, match="resize"):
        it.invoke()
    d.bind_buffer_to_tensor(xi, None)
    it.set_tensor(xi, x1)
    it.invoke()
    np.testing.assert_array_equal(it.get_tensor(yi), unbound(m, q, x1))


def test_delegate_keeps_the_buffer_alive(clq):
    ctx, q = clq
    m, x = add_tanh(), x_values(16)
    it, d, xi, yi = gpu_interp(m, q)
    b = cl_buffer(ctx, x)
    d.bind_buffer_to_tensor(xi, b)
    del b
    gc.collect()
    it.invoke()
    np.testing.assert_array_equal(it.get_tensor(yi), unbound(m, q, x))


def test_raw_cl_mem_int_and_c_names(clq):
    """A raw cl_mem integer binds as a pyopencl.Buffer does (the caller keeps the buffer alive)."""
    ctx, q = clq
    m, x = add_tanh(), x_values(17)
    it, d, xi, yi = gpu_interp(m, q)
    b = cl_buffer(ctx, x)
    d.bind_buffer_to_tensor(xi, b.int_ptr)
    it.invoke()
    np.testing.assert_array_equal(it.get_tensor(yi), unbound(m, q, x))


def test_partition_output_read_by_cpu_node_can_be_bound(clq):
    """t1 (ADD's output, read by the CPU CAST) is a partition output: bound, it is written to the
    buffer and still read to host memory for the CPU node, even with buffer-handle outputs allowed."""
    ctx, q = clq
    m, x = chain_model(), x_values(18)
    it, d, xi, yi = gpu_interp(m, q, max_delegated_partitions=2)
    t1 = next(t["index"] for t in it.get_tensor_details() if t["name"] == "t1")
    tb = cl_buffer(ctx, nbytes=x.nbytes)
    d.bind_buffer_to_tensor(t1, tb)
    it.set_allow_buffer_handle_output(True)
    it.set_tensor(xi, x)
    it.invoke()
    np.testing.assert_array_equal(read(q, tb, SHAPE), x + np.linspace(-1, 1, 7, dtype=np.float32))
    assert rel_l2(it.get_tensor(yi), reference(m, x)) <= 1e-6


# --------------------------------------------------------------------------- validation
def test_bind_before_modify_graph_is_refused(clq):
    ctx, q = clq
    d = tflite_gpu.GpuDelegate(device=q)
    with pytest.raises(RuntimeError, match="after ModifyGraphWithDelegate"):
        d.bind_buffer_to_tensor(0, cl_buffer(ctx, nbytes=64))


def test_bind_errors_name_the_problem(clq):
    ctx, q = clq
    it, d, xi, yi = gpu_interp(add_tanh(), q)
    nbytes = int(np.prod(SHAPE)) * 4
    good = cl_buffer(ctx, nbytes=nbytes)
    names = {t["name"]: t["index"] for t in it.get_tensor_details()}
    with pytest.raises(ValueError, match=r"buffer has 16 bytes, the tensor \[1, 6, 5, 7\] needs 840"):
        d.bind_buffer_to_tensor(xi, cl_buffer(ctx, nbytes=16))
    with pytest.raises(ValueError, match="needs 840"):
        d.bind_buffer_to_tensor(yi, cl_buffer(ctx, nbytes=nbytes - 4))
    other = cl.Context(devices=ctx.devices)
    with pytest.raises(ValueError, match="another OpenCL context"):
        d.bind_buffer_to_tensor(xi, cl_buffer(other, nbytes=nbytes))
    with pytest.raises(ValueError, match="not an OpenCL buffer"):  # a valid object, but a queue
        d.bind_buffer_to_tensor(xi, q.int_ptr)
    # A handle whose memory holds no live buffer (what a released one leaves): the dispatch word of a
    # real buffer followed by zeros. The driver's answer is mapped to an error, not a crash.
    fake = (ctypes.c_uint64 * 512)()
    fake[0] = ctypes.c_uint64.from_address(good.int_ptr).value
    with pytest.raises(ValueError, match="not an OpenCL buffer|not a valid OpenCL memory object"):
        d.bind_buffer_to_tensor(xi, ctypes.addressof(fake))
    with pytest.raises(ValueError, match="internal to a GPU partition"):
        d.bind_buffer_to_tensor(names["t"], good)
    with pytest.raises(ValueError, match="constant"):
        d.bind_buffer_to_tensor(names["c"], good)
    with pytest.raises(IndexError, match="out of range"):
        d.bind_buffer_to_tensor(99, good)
    with pytest.raises(ValueError, match="float16 .* computes in F32"):
        d.bind_buffer_to_tensor(xi, good, dtype=np.float16)
    with pytest.raises(ValueError, match="float32 or float16"):
        d.bind_buffer_to_tensor(xi, good, dtype=np.int8)
    with pytest.raises(ValueError, match="not a cl_mem handle"):
        d.bind_buffer_to_tensor(xi, 0)
    with pytest.raises(TypeError, match="pyopencl.Buffer"):
        d.bind_buffer_to_tensor(xi, "buffer")
    with pytest.raises(TypeError, match="tensor_index"):
        d.bind_buffer_to_tensor("x", good)
    # Nothing was bound by the failed calls: invoke uses the host copies.
    x = x_values(19)
    it.set_tensor(xi, x)
    it.invoke()
    assert rel_l2(it.get_tensor(yi), reference(add_tanh(), x)) <= 1e-6
    d.close()
    with pytest.raises(RuntimeError, match="closed"):
        d.bind_buffer_to_tensor(xi, good)


def test_bind_errors_at_partition_boundaries(clq):
    ctx, q = clq
    it, d, xi, yi = gpu_interp(chain_model(), q, max_delegated_partitions=2)
    names = {t["name"]: t["index"] for t in it.get_tensor_details()}
    good = cl_buffer(ctx, nbytes=int(np.prod(SHAPE)) * 4)
    with pytest.raises(ValueError, match="computed by a CPU node"):
        d.bind_buffer_to_tensor(names["t3"], good)
    with pytest.raises(ValueError, match=r"node \d \((ADD|MUL)\), outside the GPU partition, reads it"):
        d.bind_buffer_to_tensor(xi, good)  # x feeds both partitions: host memory must hold it
    with pytest.raises(ValueError, match="CPU nodes only"):
        d.bind_buffer_to_tensor(names["t2"], good)
    it2, d2, _, y2 = gpu_interp(less_model(), q)
    with pytest.raises(ValueError, match="type BOOL cannot be bound"):
        d2.bind_buffer_to_tensor(y2, good)


def test_bind_to_model_the_delegate_took_nothing_from(clq):
    ctx, q = clq
    d = tflite_gpu.GpuDelegate(device=q, op_filter=["ADD", "TANH"])
    it = tflite_gpu.Interpreter(model_content=add_tanh(), experimental_delegates=[d])
    it.allocate_tensors()
    with pytest.raises(ValueError, match="took no node"):
        d.bind_buffer_to_tensor(0, cl_buffer(ctx, nbytes=int(np.prod(SHAPE)) * 4))


def test_host_writes_to_a_bound_tensor_are_refused(clq):
    """TFLite's rule: a tensor with a buffer handle takes its data from the handle. So set_tensor
    on a bound input (or output) raises, naming the binding, instead of writing host memory that
    invoke would ignore; tensor() gives a read-only view. Unbinding (or a resize, which drops the
    binding) makes the host copy writable again."""
    ctx, q = clq
    m = add_tanh(batch_dynamic=True)
    it, d, xi, yi = gpu_interp(m, q)
    x, x2 = x_values(30), x_values(31)
    xb, yb = cl_buffer(ctx, x), cl_buffer(ctx, nbytes=x.nbytes)
    d.bind_buffer_to_tensor(xi, xb)
    d.bind_buffer_to_tensor(yi, yb)
    for t in (xi, yi):
        with pytest.raises(ValueError, match=rf"Cannot set tensor {t} .*OpenCL buffer is bound to it.*"
                                             rf"bind_buffer_to_tensor\({t}, None\)"):
            it.set_tensor(t, x2)
    view = it.tensor(xi)()
    assert not view.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        view[...] = 0
    del view
    it.invoke()  # the refused writes changed nothing: the buffer's values were used
    np.testing.assert_array_equal(read(q, yb, SHAPE), unbound(m, q, x))
    d.bind_buffer_to_tensor(xi, None)
    it.set_tensor(xi, x2)
    view = it.tensor(xi)()
    assert view.flags.writeable
    del view
    it.invoke()
    np.testing.assert_array_equal(read(q, yb, SHAPE), unbound(m, q, x2))
    # a resize drops the bindings: the output is host-writable again (invoke says what to do)
    it.resize_tensor_input(xi, [2] + SHAPE[1:])
    it.allocate_tensors()
    it.set_tensor(yi, np.zeros([2] + SHAPE[1:], np.float32))


C_API_BOUND = """
import ctypes, os, sys
import numpy as np
import pyopencl as cl
sys.path.insert(0, {here!r})
import tflite_gpu
from test_buffer_binding import add_tanh, x_values, reference
pkg = os.path.dirname(os.path.abspath(tflite_gpu.__file__))
lib = next(p for p in (os.path.join(d, "libtflite_gpu.so") for d in (pkg, os.path.join(pkg, "lib"),
           tflite_gpu.get_library_dir())) if os.path.isfile(p))
L = ctypes.CDLL(lib)
P = ctypes.c_void_p
for name, res, args in [("TfLiteGpuDelegateV2Create", P, [P]), ("TfLiteGpuDelegateV2Delete", None, [P]),
                        ("TfLiteModelCreate", P, [ctypes.c_char_p, ctypes.c_size_t]), ("TfLiteModelDelete", None, [P]),
                        ("TfLiteInterpreterOptionsCreate", P, []), ("TfLiteInterpreterOptionsAddDelegate", None, [P, P]),
                        ("TfLiteInterpreterOptionsDelete", None, [P]), ("TfLiteInterpreterCreate", P, [P, P]),
                        ("TfLiteInterpreterDelete", None, [P]), ("TfLiteInterpreterAllocateTensors", ctypes.c_int, [P]),
                        ("TfLiteInterpreterInvoke", ctypes.c_int, [P]),
                        ("TfLiteInterpreterGetInputTensor", P, [P, ctypes.c_int32]),
                        ("TfLiteInterpreterGetOutputTensor", P, [P, ctypes.c_int32]),
                        ("TfLiteTensorCopyFromBuffer", ctypes.c_int, [P, P, ctypes.c_size_t]),
                        ("TfLiteTensorCopyToBuffer", ctypes.c_int, [P, P, ctypes.c_size_t]),
                        ("TfLiteGpuDelegateGetClContext", ctypes.c_int, [P, ctypes.POINTER(P), ctypes.POINTER(P)]),
                        ("TfLiteGpuDelegateBindBufferToTensor", ctypes.c_int, [P, P, ctypes.c_int])]:
    f = getattr(L, name)
    f.restype, f.argtypes = res, args
model = add_tanh()
xi = tflite_gpu.Interpreter(model_content=model).get_input_details()[0]["index"]
x, x2 = x_values(32), x_values(33)
dlg = L.TfLiteGpuDelegateV2Create(None)
m = L.TfLiteModelCreate(model, len(model))
io = L.TfLiteInterpreterOptionsCreate()
L.TfLiteInterpreterOptionsAddDelegate(io, dlg)
it = L.TfLiteInterpreterCreate(m, io)
assert it
assert L.TfLiteInterpreterAllocateTensors(it) == 0
c, qq = P(), P()
assert L.TfLiteGpuDelegateGetClContext(dlg, ctypes.byref(c), ctypes.byref(qq)) == 0
ctx = cl.Context.from_int_ptr(c.value)
buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=x)
assert L.TfLiteGpuDelegateBindBufferToTensor(dlg, buf.int_ptr, xi) == 0
tin = L.TfLiteInterpreterGetInputTensor(it, 0)
assert L.TfLiteTensorCopyFromBuffer(tin, x2.ctypes.data, x2.nbytes) == 1  # kTfLiteError: bound
assert L.TfLiteInterpreterInvoke(it) == 0
y = np.empty_like(x)
assert L.TfLiteTensorCopyToBuffer(L.TfLiteInterpreterGetOutputTensor(it, 0), y.ctypes.data, y.nbytes) == 0
assert float(np.abs(y - reference(model, x)).max()) <= 1e-5, "bound input not used"
assert L.TfLiteGpuDelegateBindBufferToTensor(dlg, None, xi) == 0  # unbind: host copies again
assert L.TfLiteTensorCopyFromBuffer(tin, x2.ctypes.data, x2.nbytes) == 0
assert L.TfLiteInterpreterInvoke(it) == 0
assert L.TfLiteTensorCopyToBuffer(L.TfLiteInterpreterGetOutputTensor(it, 0), y.ctypes.data, y.nbytes) == 0
assert float(np.abs(y - reference(model, x2)).max()) <= 1e-5
L.TfLiteInterpreterDelete(it)
L.TfLiteInterpreterOptionsDelete(io)
L.TfLiteModelDelete(m)
L.TfLiteGpuDelegateV2Delete(dlg)
print("C_API_BOUND_OK")
"""


def test_c_api_copy_from_buffer_refuses_a_bound_input(clq, tmp_path):
    """The C API: TfLiteTensorCopyFromBuffer on an input bound with TfLiteGpuDelegateBindBufferToTensor
    fails (the reason on the error reporter) and invoke reads the buffer; after unbinding (NULL)
    the host copy is used again. ctypes in a child, on the delegate's own context."""
    here = os.path.dirname(os.path.abspath(__file__))
    pkg_parent = os.path.dirname(os.path.dirname(os.path.abspath(tflite_gpu.__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([here, pkg_parent, os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, "-c", C_API_BOUND.format(here=here)], capture_output=True, text=True,
                       timeout=300, env=env, cwd=str(tmp_path))
    assert r.returncode == 0 and "C_API_BOUND_OK" in r.stdout, r.stdout[-3000:] + r.stderr[-3000:]
    assert "has an OpenCL buffer bound to it" in r.stderr, r.stderr[-3000:]


def test_released_pyopencl_buffer_is_refused(clq):
    """pyopencl's release() frees the cl_mem, yet int_ptr still returns the old handle and any
    query on it reads freed memory (PoCL segfaults). tflite_gpu marks released objects, so binding
    one is a ValueError, not a crash. Released after binding is fine: the delegate retains it."""
    ctx, q = clq
    m, x = add_tanh(), x_values(34)
    it, d, xi, yi = gpu_interp(m, q)
    b = cl_buffer(ctx, x)
    b.release()
    with pytest.raises(ValueError, match="was released"):
        d.bind_buffer_to_tensor(xi, b)
    it.set_tensor(xi, x)  # nothing was bound
    it.invoke()
    np.testing.assert_array_equal(it.get_tensor(yi), unbound(m, q, x))
    x2 = x_values(35)
    b2 = cl_buffer(ctx, x2)
    d.bind_buffer_to_tensor(xi, b2)
    b2.release()  # the delegate's retain keeps the memory
    it.invoke()
    np.testing.assert_array_equal(it.get_tensor(yi), unbound(m, q, x2))
    d.bind_buffer_to_tensor(xi, None)
    # a pooled buffer given back to its pool (pyopencl.tools.MemoryPool) is refused too
    import pyopencl.tools
    pool = pyopencl.tools.MemoryPool(pyopencl.tools.ImmediateAllocator(q))
    pb = pool.allocate(x.nbytes)
    pb.release()
    with pytest.raises(ValueError, match="was released"):
        d.bind_buffer_to_tensor(xi, pb)


@pytest.mark.parametrize("order", ["pyopencl_first", "tflite_gpu_first"])
def test_release_is_marked_whatever_the_import_order(order, tmp_path):
    mods = ["pyopencl", "tflite_gpu"] if order == "pyopencl_first" else ["tflite_gpu", "pyopencl"]
    code = ("import importlib, sys\n"
            f"for n in {mods!r}: importlib.import_module(n)\n"
            "import pyopencl._cl as c\n"
            "assert getattr(c.MemoryObject.release, '_tflite_gpu_wrapper', False), 'release() not wrapped'\n"
            "assert getattr(c.PooledBuffer.release, '_tflite_gpu_wrapper', False), 'PooledBuffer not wrapped'\n"
            "print('WRAPPED')\n")
    pkg_parent = os.path.dirname(os.path.dirname(os.path.abspath(tflite_gpu.__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([pkg_parent, os.environ.get("PYTHONPATH", "")]))
    # cwd elsewhere: "-c" puts the working directory first on sys.path, and in a source checkout
    # with the package installed (CI, the device run) that would import the unbuilt tree
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env,
                       cwd=str(tmp_path))
    assert r.returncode == 0 and "WRAPPED" in r.stdout, r.stdout + r.stderr


# ------------------------------------------------------------------------------- example
def test_gpu_pipeline_example_runs(clq):
    r = subprocess.run([sys.executable, os.path.join(EXAMPLES, "gpu_pipeline.py")], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "transfers by the interpreter: 0 host->device, 0 device->host" in r.stdout, r.stdout
    assert "matches the host-copy run" in r.stdout, r.stdout
