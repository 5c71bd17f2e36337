"""The NVIDIA launch path (issue #11): a GPU partition's kernels, compiled by NVIDIA's OpenCL driver,
replayed as one CUDA graph through libcuda (csrc/gpu/cuda_graph.h). The graph holds the same PTX
with the same arguments and launch sizes as the OpenCL path, so its outputs must equal the OpenCL
path's bit for bit (TFLITE_GPU_CUDA_GRAPH=0 is the reference here; both are checked against the CPU
reference kernels by the rest of the suite). What must fall back to OpenCL launches: bound buffers,
profiling, outputs kept on the device, deferred (DO_NOT_WAIT) invokes, a caller's queue, and every
device that is not NVIDIA's (where delegate.info() says why). Checked here: profiling, a caller's
queue, bound buffers and the refusal off NVIDIA. DO_NOT_WAIT and device-kept outputs are not
asserted here; test_pinned_host and test_buffer_binding run them on NVIDIA, where they must take
the OpenCL path (PartitionRuntime::CudaEligible) to keep their results.

On a machine without NVIDIA's OpenCL platform (PoCL in CI) only the refusal is checked; the rest
skips and says so. On an NVIDIA GPU the whole file runs (the device runs of issue #11).
"""
import importlib.util

import numpy as np
import pytest

import tflite_gpu
from gpu_util import CHAIN_SHAPE, chain_model, delegate, require_gpu
from tflite_gpu.testing import zoo

MODELS = ["mobilenet_v1", "mobilenet_v2", "face_detector_like", "face_mesh_like", "hand_landmark_like",
          "pose_landmark_like", "selfie_segmentation_like", "palm_detection_like"]


def _nvidia():
    require_gpu()
    info = tflite_gpu.GpuDelegate().info()
    if "NVIDIA" not in info["platform_name"]:
        pytest.skip(f"the CUDA graph path is NVIDIA's; this device is {info['device_name']} "
                    f"on {info['platform_name']}")


def _model(name):
    return zoo.ZOO[name]() if name in zoo.ZOO else getattr(zoo, name)()


def _run(model, monkeypatch, cuda, precision="F32", invokes=2, seed=0, **opts):
    monkeypatch.setenv("TFLITE_GPU_CUDA_GRAPH", cuda if isinstance(cuda, str) else "1" if cuda else "0")
    d = delegate(precision, **opts)
    it = tflite_gpu.Interpreter(model_content=model, experimental_delegates=[d])
    it.allocate_tensors()
    rng = np.random.default_rng(seed)
    outs = []
    for _ in range(invokes):  # fresh inputs each time: the graph's copies must carry them
        for i in it.get_input_details():
            it.set_tensor(i["index"], rng.standard_normal(i["shape"]).astype(np.float32))
        it.invoke()
        outs.append([it.get_tensor(o["index"]).copy() for o in it.get_output_details()])
    return outs, d.info(), it, d


def test_refused_off_nvidia_with_reason(monkeypatch):
    require_gpu()
    info0 = tflite_gpu.GpuDelegate().info()
    _, info, _, _ = _run(chain_model(), monkeypatch, cuda=True)
    if "NVIDIA" in info0["platform_name"]:
        assert info["cuda_graph_runs"] == 2 * info["partitions"], info  # each partition, 2 invokes
        assert info["cuda_graph_refused"] == ""
    else:
        assert info["cuda_graph_runs"] == 0
        assert info["cuda_graph_refused"] == "not NVIDIA's OpenCL platform", info
        assert not info["cuda_graph_programmatic"]


def test_switch_off_says_so(monkeypatch):
    _nvidia()
    _, info, _, _ = _run(chain_model(), monkeypatch, cuda=False)
    assert info["cuda_graph_runs"] == 0
    assert info["cuda_graph_refused"] == "TFLITE_GPU_CUDA_GRAPH=0"


@pytest.mark.parametrize("precision", ["F32", "F32_F16"])
@pytest.mark.parametrize("name", MODELS)
def test_bit_identical_to_opencl_launches(name, precision, monkeypatch):
    _nvidia()
    m = _model(name)
    # The same kernels on both paths: the depthwise + 1x1 fusion's default differs between them
    # (test_dwpw_default_follows_the_launch_path).
    monkeypatch.setenv("TFLITE_GPU_FUSION_DWPW_MAX_TIMES", "2")
    want, off, _, _ = _run(m, monkeypatch, cuda=False, precision=precision)
    got, on, _, _ = _run(m, monkeypatch, cuda=True, precision=precision)
    assert off["cuda_graph_runs"] == 0
    assert on["cuda_graph_runs"] >= 2 and on["cuda_graph_refused"] == "", on
    for a, b in zip(want, got):
        for x, y in zip(a, b):
            assert x.shape == y.shape
            assert np.array_equal(x, y), f"{name} {precision}: max |diff| {np.abs(x - y).max()}"
    assert not np.array_equal(got[0][0], got[1][0])  # the second input reached the device


def _kernel_labels(it):
    it.enable_profiling(True)
    it.invoke()
    return [k["name"] for k in it._core.gpu_kernel_times()]


@pytest.mark.parametrize("name", ["mobilenet_v2", "face_detector_like"])
def test_dwpw_default_follows_the_launch_path(name, monkeypatch):
    """Where partitions launch as CUDA graphs the depthwise + 1x1 fusion is off by default (its
    recomputation costs more than the ~1.2 us launch it saves); with OpenCL launches its default
    fuses the pairs computed at most twice. Both plans give the reference's values (checked by the
    zoo and fusion tests); here the plans themselves."""
    _nvidia()
    monkeypatch.delenv("TFLITE_GPU_FUSION_DWPW_MAX_TIMES", raising=False)
    monkeypatch.delenv("TFLITE_GPU_DISABLE_FUSION", raising=False)
    m = _model(name)
    _, off, it_off, _ = _run(m, monkeypatch, cuda=False, invokes=1)
    _, on, it_on, _ = _run(m, monkeypatch, cuda=True, invokes=1)
    assert on["cuda_graph_runs"] >= 1 and off["cuda_graph_runs"] == 0
    fused_off = [k for k in _kernel_labels(it_off) if k.startswith("DEPTHWISE_CONV_2D+CONV_2D")]
    fused_on = [k for k in _kernel_labels(it_on) if k.startswith("DEPTHWISE_CONV_2D+CONV_2D")]
    assert fused_off, "OpenCL launches: the default fuses some depthwise + 1x1 pairs"
    assert not fused_on, fused_on
    # A caller's queue always launches through OpenCL: it gets that path's plan.
    if importlib.util.find_spec("pyopencl") is not None:
        _, caller, it_q, _ = _run(m, monkeypatch, cuda=True, invokes=1, device=tflite_gpu.pyopencl_queue())
        assert caller["cuda_graph_runs"] == 0
        assert [k for k in _kernel_labels(it_q) if k.startswith("DEPTHWISE_CONV_2D+CONV_2D")] == fused_off


@pytest.mark.parametrize("name", ["mobilenet_v2", "pose_landmark_like"])
def test_programmatic_launches_match_serial_graph(name, monkeypatch):
    """Programmatic dependent launches (compute capability 9.0+) only move launches earlier; each
    kernel waits for its predecessor before touching memory, so values equal the serial graph's."""
    _nvidia()
    m = _model(name)
    want, serial, _, _ = _run(m, monkeypatch, cuda="serial", invokes=3)
    got, pdl, _, _ = _run(m, monkeypatch, cuda=True, invokes=3)
    assert serial["cuda_graph_runs"] >= 3 and pdl["cuda_graph_runs"] >= 3
    assert not serial["cuda_graph_programmatic"]
    if not pdl["cuda_graph_programmatic"]:
        pytest.skip(f"{pdl['device_name']} has no programmatic dependent launches (compute capability 9.0+, "
                    "cuLaunchKernelEx): the default graph is the serial one")
    for a, b in zip(want, got):
        for x, y in zip(a, b):
            assert np.array_equal(x, y), f"{name}: max |diff| {np.abs(x - y).max()}"


def test_partitions_around_cpu_nodes_and_resize(monkeypatch):
    """The chain model's two partitions with CPU nodes between them, then a resize (partitions and
    host buffers rebuilt, the graph with them)."""
    _nvidia()
    want, _, _, _ = _run(chain_model(), monkeypatch, cuda=False)
    got, info, it, _ = _run(chain_model(), monkeypatch, cuda=True)
    assert info["cuda_graph_runs"] == 2 * info["partitions"]
    for a, b in zip(want, got):
        assert np.array_equal(a[0], b[0])
    it.resize_tensor_input(it.get_input_details()[0]["index"], [2] + CHAIN_SHAPE[1:])
    it.allocate_tensors()
    x = np.random.default_rng(3).standard_normal([2] + CHAIN_SHAPE[1:]).astype(np.float32)
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    y = it.get_tensor(it.get_output_details()[0]["index"])
    monkeypatch.setenv("TFLITE_GPU_CUDA_GRAPH", "0")
    ref = tflite_gpu.Interpreter(model_content=chain_model(), experimental_delegates=[delegate()])
    ref.resize_tensor_input(ref.get_input_details()[0]["index"], [2] + CHAIN_SHAPE[1:])
    ref.allocate_tensors()
    ref.set_tensor(ref.get_input_details()[0]["index"], x)
    ref.invoke()
    assert np.array_equal(y, ref.get_tensor(ref.get_output_details()[0]["index"]))


def test_profiling_and_bound_buffers_use_opencl(monkeypatch):
    _nvidia()
    pytest.importorskip("pyopencl", reason="binding needs pyopencl buffers")
    m = zoo.ZOO["selfie_segmentation_like"]()
    monkeypatch.setenv("TFLITE_GPU_CUDA_GRAPH", "1")
    # The same kernels whatever the path (a caller's queue gets the OpenCL launches' dwpw default).
    monkeypatch.setenv("TFLITE_GPU_FUSION_DWPW_MAX_TIMES", "2")
    # Profiling: per-kernel device times need the OpenCL events.
    d = delegate(enable_profiling=True)
    it = tflite_gpu.Interpreter(model_content=m, experimental_delegates=[d])
    it.allocate_tensors()
    it.enable_profiling(True)
    it.invoke()
    assert len(it._core.gpu_kernel_times()) > 0
    assert d.info()["cuda_graph_runs"] == 0
    # A caller's queue (shared with pyopencl for binding): launches stay on it.
    import pyopencl as cl
    q = tflite_gpu.pyopencl_queue()
    d = delegate(device=q)
    it = tflite_gpu.Interpreter(model_content=m, experimental_delegates=[d])
    it.allocate_tensors()
    inp = it.get_input_details()[0]
    x = np.random.default_rng(1).standard_normal(inp["shape"]).astype(np.float32)
    it.set_tensor(inp["index"], x)
    it.invoke()
    host = it.get_tensor(it.get_output_details()[0]["index"]).copy()
    assert d.info()["cuda_graph_runs"] == 0
    d.bind_buffer_to_tensor(inp["index"], cl.Buffer(q.context, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR,
                                                    hostbuf=x))
    it.invoke()
    assert d.info()["cuda_graph_runs"] == 0
    assert np.array_equal(it.get_tensor(it.get_output_details()[0]["index"]), host)
    # Our own queue: the graph, same values.
    d = delegate()
    it = tflite_gpu.Interpreter(model_content=m, experimental_delegates=[d])
    it.allocate_tensors()
    it.set_tensor(inp["index"], x)
    it.invoke()
    assert d.info()["cuda_graph_runs"] == 1
    assert np.array_equal(it.get_tensor(it.get_output_details()[0]["index"]), host)
