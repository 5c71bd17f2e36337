"""The delegate contract: partitioning and its report and warnings, the op filter, options,
wait types, and the bad cases (no OpenCL, closed delegate, other threads)."""
import logging
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import tflite_gpu
from gpu_util import chain_model, delegate, require_gpu
from harness import rel_l2
from tflite_gpu.testing.builder import ModelBuilder

NONE = dict(fused_activation_function="NONE")


def run(model, x, delegates=None, **kw):
    it = tflite_gpu.Interpreter(model_content=model, experimental_delegates=delegates, **kw)
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    return it, it.get_tensor(it.get_output_details()[0]["index"])


@pytest.fixture
def x():
    return (np.random.default_rng(1).standard_normal([1, 6, 5, 7]) * 3).astype(np.float32)


def test_partitioned_model_matches_cpu_and_warns(x, caplog):
    require_gpu()
    m = chain_model()
    _, want = run(m, x)
    with caplog.at_level(logging.WARNING, logger="tflite_gpu"):
        it, got = run(m, x, [delegate(max_delegated_partitions=2)])
    assert rel_l2(got, want) <= 1e-5
    rep = it.delegation_report()
    assert rep["total_nodes"] == 5 and rep["delegated_nodes"] == 3 and rep["partitions"] == 2
    assert [(u[0], u[1]) for u in rep["unsupported"]] == [(1, "CAST"), (2, "CAST")]
    assert [u[3].split(" stays on the CPU")[0] for u in rep["unsupported"]] == ["CAST FLOAT32 -> INT32",
                                                                               "CAST INT32 -> FLOAT32"]
    lines = [r.getMessage() for r in caplog.records]
    assert sum("WARNING: op code #53 cannot be handled by this delegate." in ln for ln in lines) == 2


def test_max_delegated_partitions_takes_the_largest(x):
    require_gpu()
    it, got = run(chain_model(), x, [delegate(max_delegated_partitions=1)])
    rep = it.delegation_report()
    assert rep["partitions"] == 1 and rep["delegated_nodes"] == 2  # MUL+TANH beats ADD alone
    _, want = run(chain_model(), x)
    assert rel_l2(got, want) <= 1e-5


def test_op_filter_option_and_env(x, monkeypatch):
    require_gpu()
    it, got = run(chain_model(), x, [delegate(op_filter=["TANH"], max_delegated_partitions=3)])
    rep = it.delegation_report()
    refused = {u[1]: u[3] for u in rep["unsupported"]}
    assert "op filter" in refused["TANH"]
    assert rep["delegated_nodes"] == 2
    monkeypatch.setenv("TFLITE_GPU_OP_FILTER", "ADD,MUL")
    it, got2 = run(chain_model(), x, [delegate(max_delegated_partitions=3)])
    assert it.delegation_report()["delegated_nodes"] == 1
    np.testing.assert_allclose(got, got2, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("wait", list(tflite_gpu.WaitType))
def test_wait_types_give_the_same_result(x, wait):
    require_gpu()
    _, want = run(chain_model(), x)
    it, got = run(chain_model(), x, [delegate(wait_type=wait, max_delegated_partitions=2)])
    assert rel_l2(got, want) <= 1e-5
    # Twice more: a deferred read must not leak into the next invoke.
    for k in range(2):
        it.set_tensor(it.get_input_details()[0]["index"], x * (k + 2))
        it.invoke()
        _, w2 = run(chain_model(), x * (k + 2))
        assert rel_l2(it.get_tensor(it.get_output_details()[0]["index"]), w2) <= 1e-5


def test_precision_options():
    require_gpu()
    assert delegate().info()["precision"] == "F32"
    lossy = delegate("F32_F16").info()
    assert lossy["precision"] == ("F16" if lossy["fp16"] else "F32_F16")
    metal = tflite_gpu.GpuDelegate(tflite_gpu.GpuDelegateOptions(allow_precision_loss=True)).info()
    assert metal["precision"] == lossy["precision"]
    prio = tflite_gpu.GpuDelegate(tflite_gpu.GpuDelegateOptions(
        inference_priority1=tflite_gpu.InferencePriority.MIN_LATENCY)).info()
    assert prio["precision"] == lossy["precision"]


def test_fp16_model_close_to_fp32(x):
    require_gpu()
    _, want = run(chain_model(), x)
    _, got = run(chain_model(), x, [delegate("F32_F16", max_delegated_partitions=2)])
    # Bound: what fp16 storage must cost on this graph (fp16_emulation.py, as test_fp16_storage.py);
    # the half-rounded sum feeds a truncating CAST, so a rounding can move a value across an integer.
    from fp16_emulation import emulation_bound, fp16_storage_model, round_feeds, run_litert
    emul = run_litert(fp16_storage_model(chain_model(builder=True)), round_feeds([x]))[0]
    e, bound = rel_l2(got, want), emulation_bound(emul, want)
    assert 0 < e <= bound, (e, bound)  # > 0: fp16 storage really happened


def test_closed_delegate_is_refused(x):
    require_gpu()
    d = delegate()
    d.close()
    assert d.closed
    it = tflite_gpu.Interpreter(model_content=chain_model())
    with pytest.raises(RuntimeError, match="closed"):
        it.modify_graph_with_delegate(d)
    with delegate() as d2:
        it2, _ = run(chain_model(), x, [d2])
    assert d2.closed


def test_invoke_from_another_thread(x):
    require_gpu()
    it = tflite_gpu.Interpreter(model_content=chain_model(), experimental_delegates=[delegate(max_delegated_partitions=2)])
    it.allocate_tensors()
    out = {}

    def work():
        it.set_tensor(it.get_input_details()[0]["index"], x)
        it.invoke()
        out["y"] = it.get_tensor(it.get_output_details()[0]["index"])

    t = threading.Thread(target=work)
    t.start()
    t.join()
    _, want = run(chain_model(), x)
    assert rel_l2(out["y"], want) <= 1e-5


def test_resize_after_delegation_rebuilds(x):
    require_gpu()
    it = tflite_gpu.Interpreter(model_content=chain_model(), experimental_delegates=[delegate(max_delegated_partitions=2)])
    it.resize_tensor_input(0, [2, 6, 5, 7])
    it.allocate_tensors()
    x2 = np.concatenate([x, -x])
    it.set_tensor(0, x2)
    it.invoke()
    got = it.get_tensor(it.get_output_details()[0]["index"])
    ref = tflite_gpu.Interpreter(model_content=chain_model())
    ref.resize_tensor_input(0, [2, 6, 5, 7])
    ref.allocate_tensors()
    ref.set_tensor(0, x2)
    ref.invoke()
    assert rel_l2(got, ref.get_tensor(ref.get_output_details()[0]["index"])) <= 1e-5


def test_no_opencl_gives_clear_error_and_cpu_still_works(tmp_path):
    code = (
        "import numpy as np, tflite_gpu\n"
        "try:\n"
        "    tflite_gpu.GpuDelegate()\n"
        "    print('DELEGATE_CREATED')\n"
        "except RuntimeError as e:\n"
        "    print('ERR', e)\n"
        "from tflite_gpu.testing.builder import ModelBuilder\n"
        "b = ModelBuilder(); x = b.add_input([4]); y = b.add_tensor([4]); b.add_op('RELU', [x], [y]); b.mark_output(y)\n"
        "it = tflite_gpu.Interpreter(model_content=b.build()); it.allocate_tensors()\n"
        "it.set_tensor(x, np.array([-1, 2, -3, 4], np.float32)); it.invoke(); print('CPU', it.get_tensor(y).tolist())\n"
    )
    env = dict(os.environ, TFLITE_GPU_OPENCL_LIBRARY="none",
               TFLITE_GPU_SITE_PACKAGES=str(tmp_path), TFLITE_GPU_OPENCL_VENDORS="none", OCL_ICD_VENDORS=str(tmp_path))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120,
                       cwd=str(tmp_path))  # not the repo root: its tflite_gpu/ would shadow the installed one
    assert r.returncode == 0, r.stderr
    assert "DELEGATE_CREATED" not in r.stdout, r.stdout
    assert "ERR" in r.stdout and "OpenCL" in r.stdout, r.stdout
    assert "CPU [0.0, 2.0, 0.0, 4.0]" in r.stdout


def test_options_validation():
    with pytest.raises(ValueError):
        tflite_gpu.GpuDelegateOptions(max_delegated_partitions=0)
    with pytest.raises(ValueError):
        tflite_gpu.GpuDelegateOptions(wait_type=9)
    with pytest.raises(ValueError):
        tflite_gpu.GpuDelegateOptions(device=object())._to_core()


def test_shared_pyopencl_context(x):
    require_gpu()
    cl = pytest.importorskip("pyopencl")
    try:
        ctx = cl.create_some_context(interactive=False)
    except Exception as e:  # pragma: no cover - depends on the machine
        pytest.skip(f"pyopencl cannot create a context here: {e}")
    q = cl.CommandQueue(ctx)
    d = tflite_gpu.GpuDelegate(tflite_gpu.GpuDelegateOptions(device=q, max_delegated_partitions=2))
    _, got = run(chain_model(), x, [d])
    _, want = run(chain_model(), x)
    assert rel_l2(got, want) <= 1e-5


def test_kernel_compile_failure_falls_back_to_cpu(x, monkeypatch, caplog):
    require_gpu()
    monkeypatch.setenv("TFLITE_GPU_DEBUG_BREAK_KERNEL", "MUL")
    with caplog.at_level(logging.WARNING, logger="tflite_gpu"):
        it, got = run(chain_model(), x, [delegate(max_delegated_partitions=3)])
    rep = it.delegation_report()
    refused = {u[1]: u[3] for u in rep["unsupported"]}
    assert "MUL" in refused and "compile" in refused["MUL"], refused
    assert rep["delegated_nodes"] == 2  # ADD and TANH still on the GPU
    assert any("op code #18 cannot be handled" in r.getMessage() for r in caplog.records)
    _, want = run(chain_model(), x)
    assert rel_l2(got, want) <= 1e-5


def test_sustained_speed_tunes_without_changing_results(x):
    require_gpu()
    _, want = run(chain_model(), x, [delegate(max_delegated_partitions=2)])
    _, got = run(chain_model(), x, [delegate(max_delegated_partitions=2,
                                             inference_preference=tflite_gpu.InferencePreference.SUSTAINED_SPEED)])
    np.testing.assert_array_equal(got, want)


def test_queue_profiles_only_when_asked(x):
    """Invokes run on a plain OpenCL queue (a profiling one costs NVIDIA's driver host time per
    enqueue); op profiling and work-group tuning move to a profiling queue of the delegate's own and
    back, finishing the other queue first, so results and their order are unchanged."""
    require_gpu()
    _, want = run(chain_model(), x)
    d = delegate(max_delegated_partitions=2)
    it, got = run(chain_model(), x, [d])
    assert d.info()["profiling_queue"] is False
    assert rel_l2(got, want) <= 1e-5
    for profiled in (True, False, True, False):
        it.enable_profiling(profiled)
        y = (x * (2.0 if profiled else -1.0)).astype(np.float32)
        it.set_tensor(it.get_input_details()[0]["index"], y)
        it.invoke()
        assert d.info()["profiling_queue"] is profiled
        _, ref = run(chain_model(), y)
        assert rel_l2(it.get_tensor(it.get_output_details()[0]["index"]), ref) <= 1e-5
        if profiled:
            times = it._core.gpu_kernel_times()
            assert times and all(k["us"] > 0 for k in times), times
    # enable_profiling on the delegate: a profiling queue from the start; SUSTAINED_SPEED tunes on a
    # profiling queue and invokes on the plain one.
    dp = delegate(enable_profiling=True)
    run(chain_model(), x, [dp])
    assert dp.info()["profiling_queue"] is True
    ds = delegate(inference_preference=tflite_gpu.InferencePreference.SUSTAINED_SPEED)
    _, got = run(chain_model(), x, [ds])
    assert ds.info()["profiling_queue"] is False and rel_l2(got, want) <= 1e-5


def test_op_profiling_times_gpu_kernels_on_the_device(x):
    require_gpu()
    it = tflite_gpu.Interpreter(model_content=chain_model(), experimental_delegates=[delegate(max_delegated_partitions=2)])
    it.allocate_tensors()
    it.set_tensor(0, x)
    it.enable_profiling(True)
    it.invoke()
    prof = it.get_profile()
    gpu = [p for p in prof if p["device"] == "GPU" and p["nodes"]]
    cpu = [p for p in prof if p["device"] == "CPU"]
    # ADD (node 0); TANH (node 4) is fused into MUL's kernel (node 3).
    assert [(p["nodes"], p["name"]) for p in gpu] == [([0], "ADD"), ([3], "MUL+TANH")]
    assert [p["name"] for p in cpu] == ["CAST", "CAST"]
    assert all(p["us"] > 0 for p in gpu)


def quant_model(in_dtype=np.int8):
    """int8 (or fp16) input -> DEQUANTIZE -> ADD -> RELU -> QUANTIZE -> int8 output."""
    b = ModelBuilder()
    q_in = dict(scale=[0.05], zero_point=[3]) if in_dtype != np.float16 else None
    x = b.add_input([1, 4, 5, 6], dtype=in_dtype, quant=q_in)
    f = b.add_tensor([1, 4, 5, 6])
    c = b.add_const(np.linspace(-2, 2, 6).astype(np.float32))
    g = b.add_tensor([1, 4, 5, 6])
    h = b.add_tensor([1, 4, 5, 6])
    y = b.add_tensor([1, 4, 5, 6], dtype=np.int8, quant=dict(scale=[0.04], zero_point=[-5]))
    b.add_op("DEQUANTIZE", [x], [f], version=2 if in_dtype != np.float16 else 3)
    b.add_op("ADD", [f, c], [g], options=NONE)
    b.add_op("RELU", [g], [h])
    b.add_op("QUANTIZE", [h], [y])
    b.mark_output(y)
    return b.build()


@pytest.mark.parametrize("in_dtype", [np.int8, np.uint8, np.float16])
def test_enable_quant_takes_quantized_boundaries(in_dtype):
    require_gpu()
    rng = np.random.default_rng(3)
    if in_dtype == np.float16:
        xq = rng.standard_normal((1, 4, 5, 6)).astype(np.float16)
    else:
        info = np.iinfo(in_dtype)
        xq = rng.integers(info.min, info.max + 1, size=(1, 4, 5, 6)).astype(in_dtype)
    m = quant_model(in_dtype)
    _, want = run(m, xq)
    it, got = run(m, xq, [delegate(experimental_flags=tflite_gpu.ExperimentalFlags.ENABLE_QUANT)])
    rep = it.delegation_report()
    assert rep["delegated_nodes"] == rep["total_nodes"] == 4, rep
    assert got.dtype == np.int8
    # The GPU reproduces TFLite's QUANTIZE rounding (half to even of x * (1/scale)), but a device may
    # contract the dequantize/add into fused multiply-adds (NVIDIA does), which moves values that
    # sit exactly on a .5 tie of the quantization grid by one step. PoCL matches exactly.
    diff = np.abs(got.astype(int) - want.astype(int))
    assert diff.max() <= 1 and np.count_nonzero(diff) <= 3, (np.count_nonzero(diff), diff.max())
    it2, got2 = run(m, xq, [delegate(enable_quantization=False)])
    rep2 = it2.delegation_report()
    refused = {u[1]: u[3] for u in rep2["unsupported"]}
    assert set(refused) == {"DEQUANTIZE", "QUANTIZE"} and all("ENABLE_QUANT" in r for r in refused.values())
    np.testing.assert_array_equal(got2, want)
