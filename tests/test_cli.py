"""``tflite-gpu`` command line, run in-process through ``tflite_gpu.cli.main``.

Every expected number is computed here independently of the tools: the
classification fixtures are solid-colour images fed to MEAN + FULLY_CONNECTED
with fixed weights (so the logits are known in closed form), the detection
models output constant boxes whose AP is worked out by hand.

The interpreter the tools run on is chosen in ONE place, the ``backend``
fixture (override with TFLITE_GPU_CLI_TEST_BACKEND=tflite_gpu|litert).
"""

import json
import os
import re
import sys

import numpy as np
import pytest

from tflite_gpu.cli import main
from tflite_gpu.tools import _backend
from tflite_gpu.tools.flags import (Flag, FlagError, parse_flags, parse_input_layer_shapes,
                                    use_gpu_from_flags, delegate_flags)

builder = pytest.importorskip("tflite_gpu.testing.builder")
ModelBuilder = builder.ModelBuilder


# --------------------------------------------------------------------------- models

def add_model(n=4096, dynamic_batch=False):
    """y = x + 1 over a [1, n] float input (big enough to take measurable time)."""
    mb = ModelBuilder()
    x = mb.add_input([1, n], name="x", shape_signature=[-1, n] if dynamic_batch else None)
    one = mb.add_const(np.ones((1, n), np.float32), name="one")
    y = mb.add_tensor([1, n], name="y")
    mb.add_op("ADD", [x, one], [y], options=dict(fused_activation_function="NONE"))
    mb.mark_output(y)
    return mb.build()


def two_output_model():
    mb = ModelBuilder()
    x = mb.add_input([1, 8], name="x")
    c = mb.add_const(np.full((1, 8), 2.0, np.float32), name="c")
    y1 = mb.add_tensor([1, 8], name="sum")
    y2 = mb.add_tensor([1, 8], name="prod")
    mb.add_op("ADD", [x, c], [y1], options=dict(fused_activation_function="NONE"))
    mb.add_op("MUL", [x, c], [y2], options=dict(fused_activation_function="NONE"))
    mb.mark_output(y1)
    mb.mark_output(y2)
    return mb.build()


# colour -> class weights: logits = W @ normalised_rgb + bias
CLS_W = np.array([[1.0, -0.5, -0.9],     # red
                  [-0.7, 1.0, -0.4],     # green
                  [-0.8, -0.6, 1.0],     # blue
                  [-1.0, -1.1, -1.2],    # black
                  [0.9, 0.8, -0.95]],    # yellow
                 np.float32)
CLS_B = np.array([0.0, 0.05, -0.05, 0.1, 0.0], np.float32)
CLS_NAMES = ["red", "green", "blue", "black", "yellow"]


def classifier_model(size=12, quantized=False):
    """MEAN over H, W then FULLY_CONNECTED; optionally a uint8 input + DEQUANTIZE."""
    mb = ModelBuilder()
    if quantized:
        q = mb.add_input([1, size, size, 3], np.uint8, name="image",
                         quant=dict(scale=[2.0 / 255.0], zero_point=[128]))
        x = mb.add_tensor([1, size, size, 3], name="dequant")
        mb.add_op("DEQUANTIZE", [q], [x])
    else:
        x = mb.add_input([1, size, size, 3], name="image")
    axes = mb.add_const(np.array([1, 2], np.int32), name="axes")
    m = mb.add_tensor([1, 3], name="mean")
    mb.add_op("MEAN", [x, axes], [m], options=dict(keep_dims=False))
    w = mb.add_const(CLS_W, name="w")
    b = mb.add_const(CLS_B, name="b")
    y = mb.add_tensor([1, len(CLS_NAMES)], name="logits")
    mb.add_op("FULLY_CONNECTED", [m, w, b], [y], options=dict(fused_activation_function="NONE"))
    mb.mark_output(y)
    return mb.build()


def _constant_outputs_model(consts, size=8, score_slot=None, score_gain=0.0):
    """Outputs = const_i + 0 * mean(image) (a function of the input, constant in value).

    With score_slot set, that output gets + score_gain * mean(image) instead,
    so that brighter images score higher.
    """
    mb = ModelBuilder()
    x = mb.add_input([1, size, size, 3], name="image")
    axes = mb.add_const(np.array([1, 2, 3], np.int32), name="axes")
    m = mb.add_tensor([1], name="brightness")
    mb.add_op("MEAN", [x, axes], [m], options=dict(keep_dims=False))
    zero = mb.add_const(np.zeros(1, np.float32), name="zero")
    z = mb.add_tensor([1], name="z")
    mb.add_op("MUL", [m, zero], [z], options=dict(fused_activation_function="NONE"))
    gain = mb.add_const(np.array([score_gain], np.float32), name="gain")
    zg = mb.add_tensor([1], name="zg")
    mb.add_op("MUL", [m, gain], [zg], options=dict(fused_activation_function="NONE"))
    for i, (name, arr) in enumerate(consts):
        arr = np.asarray(arr, np.float32)
        c = mb.add_const(arr, name=name + "_const")
        y = mb.add_tensor(list(arr.shape), name=name)
        mb.add_op("ADD", [c, zg if i == score_slot else z], [y],
                  options=dict(fused_activation_function="NONE"))
        mb.mark_output(y)
    return mb.build()


def _ops_probe_ok(backend_name):
    """True when ``backend_name`` runs every op these tests use, correctly."""
    try:
        interp = _backend.make_interpreter(model_content=classifier_model(size=4),
                                           backend=backend_name)
        interp.allocate_tensors()
        rgb = np.array([0.5, -0.25, 1.0], np.float32)
        d = interp.get_input_details()[0]
        interp.set_tensor(d["index"], np.broadcast_to(rgb, (1, 4, 4, 3)).copy())
        interp.invoke()
        got = interp.get_tensor(interp.get_output_details()[0]["index"]).reshape(-1)
        if not np.allclose(got, CLS_W @ rgb + CLS_B, atol=1e-4):
            return False
        for model in (classifier_model(size=4, quantized=True),
                      _constant_outputs_model([("o", np.ones((1, 2, 4)))], size=4)):
            interp = _backend.make_interpreter(model_content=model, backend=backend_name)
            interp.allocate_tensors()
            interp.invoke()
        return True
    except Exception:
        return False


@pytest.fixture(scope="session")
def backend():
    """The ONE place that picks the interpreter behind the CLI in these tests."""
    forced = os.environ.get("TFLITE_GPU_CLI_TEST_BACKEND")
    if forced:
        return forced
    try:
        from tflite_gpu import Interpreter  # noqa: F401
        has_engine = True
    except Exception:
        has_engine = False
    if has_engine and _ops_probe_ok("tflite_gpu"):
        return "tflite_gpu"
    if has_engine:
        import warnings
        warnings.warn("tflite_gpu.Interpreter cannot run the CLI test models yet (MEAN, "
                      "FULLY_CONNECTED, DEQUANTIZE, ADD, MUL); the CLI tests use ai-edge-litert")
    try:
        import ai_edge_litert.interpreter  # noqa: F401
    except Exception:
        pytest.skip("neither tflite_gpu's engine nor ai-edge-litert can run the test models")
    return "litert"


def run(capsys, *args):
    code = main([str(a) for a in args])
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def write(tmp_path, name, data):
    p = tmp_path / name
    p.write_bytes(data)
    return str(p)


# --------------------------------------------------------------------------- dispatch

def test_usage_and_unknown_command(capsys):
    code, out, _ = run(capsys, "--help")
    assert code == 0
    for cmd in ("benchmark", "diff", "eval-classification", "eval-detection", "devices"):
        assert cmd in out
    code, _, err = run(capsys, "no-such-command")
    assert code == 2 and "unknown command" in err


def test_command_help_lists_flags(capsys):
    code, out, _ = run(capsys, "benchmark", "--help")
    assert code == 0
    for flag in ("--graph", "--num_runs", "--warmup_runs", "--use_gpu",
                 "--gpu_precision_loss_allowed", "--enable_op_profiling", "--input_layer_shape"):
        assert flag in out


# --------------------------------------------------------------------------- flags

FLAGS = [Flag("use_gpu", bool, False), Flag("num_runs", int, 50), Flag("json", str, "",
         bare_value="-"), Flag("max_secs", float, 150.0), Flag("graph", str, "")]


@pytest.mark.parametrize("argv,use_gpu", [
    ([], False), (["--use_gpu"], True), (["--use_gpu=true"], True), (["--use_gpu=false"], False),
    (["--use_gpu=1"], True), (["--use_gpu=0"], False), (["--use_gpu", "false"], False),
    (["--use_gpu", "true"], True), (["--use-gpu"], True), (["--nouse_gpu"], False),
    (["--use_gpu", "--num_runs=3"], True),
])
def test_bool_flag_forms(argv, use_gpu):
    assert parse_flags(argv, FLAGS).use_gpu is use_gpu


def test_value_flag_forms():
    f = parse_flags(["--num_runs", "7", "--max_secs=0.5", "--graph", "/m.tflite"], FLAGS)
    assert (f.num_runs, f.max_secs, f.graph) == (7, 0.5, "/m.tflite")
    assert f.given("num_runs") and not f.given("use_gpu")
    assert parse_flags(["--json"], FLAGS).json == "-"
    assert parse_flags(["--json", "out.json"], FLAGS).json == "out.json"
    assert parse_flags(["--json=o.json", "--use_gpu"], FLAGS).json == "o.json"
    assert parse_flags(["--json", "--use_gpu"], FLAGS).json == "-"


@pytest.mark.parametrize("argv,msg", [
    (["--num_run=5"], "did you mean --num_runs"),
    (["--num_runs=five"], "integer"),
    (["--use_gpu=maybe"], "boolean"),
    (["--num_runs"], "needs a value"),
    (["positional"], "unexpected argument"),
])
def test_flag_errors(argv, msg):
    with pytest.raises(FlagError, match=msg):
        parse_flags(argv, FLAGS)


def test_delegate_flag_spellings():
    fl = delegate_flags()
    assert use_gpu_from_flags(parse_flags(["--delegate=gpu"], fl))
    assert use_gpu_from_flags(parse_flags(["--use_gpu"], fl))
    assert not use_gpu_from_flags(parse_flags([], fl))
    with pytest.raises(FlagError):
        parse_flags(["--gpu_wait_type=sometimes"], fl)


def test_input_layer_shape_format():
    assert parse_input_layer_shapes("a,b", "1,224,224,3:1,10") == {"a": [1, 224, 224, 3],
                                                                   "b": [1, 10]}
    assert parse_input_layer_shapes("", "") == {}
    with pytest.raises(FlagError):
        parse_input_layer_shapes("a,b", "1,2")


# --------------------------------------------------------------------------- benchmark

STAT_RE = re.compile(r"^count=(\d+)(?: first=(\d+) curr=(\d+) min=(\d+) max=(\d+) "
                     r"avg=([\d.e+-]+) std=(\d+)| curr=(\d+)(\(all same\))?)$")


def parse_stat(line):
    m = STAT_RE.match(line)
    assert m, f"not a TFLite stat line: {line!r}"
    count = int(m.group(1))
    if m.group(2) is not None:
        first, curr, mn, mx = (int(m.group(i)) for i in range(2, 6))
        return dict(count=count, first=first, curr=curr, min=mn, max=mx,
                    avg=float(m.group(6)), std=int(m.group(7)))
    v = int(m.group(8))
    return dict(count=count, first=v, curr=v, min=v, max=v, avg=float(v), std=0)


def test_benchmark_output_lines(capsys, tmp_path, backend):
    model = classifier_model(size=160)    # MEAN over 77k floats: tens of microseconds
    path = write(tmp_path, "mean.tflite", model)
    jpath = tmp_path / "bench.json"
    code, out, err = run(capsys, "benchmark", f"--graph={path}", "--num_runs=6",
                         "--warmup_runs=3", "--warmup_min_secs=0", "--min_secs=0",
                         f"--backend={backend}", f"--json={jpath}")
    assert code == 0, err
    lines = out.splitlines()
    assert f"Loaded model {path}" in lines
    size_mb = float(re.search(r"^The input model file size \(MB\): ([\d.e+-]+)$", out,
                              re.M).group(1))
    assert size_mb == pytest.approx(len(model) / 1048576.0, rel=1e-5)
    init_ms = float(re.search(r"^Initialized session in ([\d.e+-]+)ms\.$", out, re.M).group(1))
    assert init_ms > 0
    runs = [ln for ln in lines if ln.startswith("Running benchmark for at least")]
    assert runs[0] == ("Running benchmark for at least 3 iterations and at least 0 seconds but "
                       "terminate if exceeding 150 seconds.")
    assert runs[1].startswith("Running benchmark for at least 6 iterations")
    stats = [parse_stat(ln) for ln in lines if ln.startswith("count=")]
    assert [s["count"] for s in stats] == [3, 6]
    timing = re.search(r"^Inference timings in us: Init: (\d+), First inference: (\d+), "
                       r"Warmup \(avg\): ([\d.e+-]+), Inference \(avg\): ([\d.e+-]+)$",
                       out, re.M)
    assert timing, out
    init_us, first_us, warm_avg, inf_avg = (float(g) for g in timing.groups())
    assert init_us == pytest.approx(init_ms * 1000, abs=1)
    assert first_us == stats[0]["first"] and warm_avg == pytest.approx(stats[0]["avg"])
    assert inf_avg == pytest.approx(stats[1]["avg"]) and inf_avg > 0
    assert re.search(r"^Memory footprint delta from the start of the tool \(MB\): "
                     r"init=[\d.e+-]+ overall=[\d.e+-]+$", out, re.M)

    # the printed statistics agree with the raw per-run values of the JSON
    res = json.loads(jpath.read_text())
    for key, st in (("warmup", stats[0]), ("inference", stats[1])):
        vals = np.array(res[key]["values"], dtype=np.float64)
        assert len(vals) == st["count"]
        assert (st["first"], st["curr"], st["min"], st["max"]) == (
            vals[0], vals[-1], vals.min(), vals.max())
        assert st["avg"] == pytest.approx(vals.mean(), rel=1e-5)
        assert abs(st["std"] - vals.std()) <= 1.0
    assert res["init_us"] == init_us and res["model_size_bytes"] == len(model)
    assert res["backend"] == backend


def test_use_gpu_auto_flag_forms():
    fl = delegate_flags()
    assert parse_flags(["--use_gpu=auto"], fl).use_gpu == "auto"
    assert parse_flags(["--use_gpu", "AUTO"], fl).use_gpu == "auto"
    assert parse_flags(["--use_gpu"], fl).use_gpu is True
    with pytest.raises(FlagError, match="boolean .* or auto, got 'maybe'"):
        parse_flags(["--use_gpu=maybe"], fl)


def _real_gpu_present():
    """Independent of the CLI: is there an OpenCL device of type GPU (pyopencl's view)?"""
    try:
        import pyopencl as cl
        return any(d.type & cl.device_type.GPU for p in cl.get_platforms() for d in p.get_devices())
    except Exception:
        return False


def test_benchmark_use_gpu_auto_states_its_choice(capsys, tmp_path):
    path = write(tmp_path, "add.tflite", add_model(64))
    jpath = tmp_path / "auto.json"
    code, out, err = run(capsys, "benchmark", f"--graph={path}", "--use_gpu=auto", "--num_runs=3",
                         "--warmup_min_secs=0", "--min_secs=0", f"--json={jpath}")
    assert code == 0, err
    res = json.loads(jpath.read_text())
    if _real_gpu_present():
        # a GPU exists: auto applies the delegate, unless the probe failed, which it must say
        assert re.search(r"^--use_gpu=auto: OpenCL GPU '.*' passed", out, re.M) or \
            re.search(r"^--use_gpu=auto: probe failed", out, re.M), out
    else:
        assert re.search(r"^--use_gpu=auto: no OpenCL GPU device; running the CPU kernels", out,
                         re.M), out
        assert res["use_gpu"] is False and "GPU delegate created." not in out


def test_benchmark_on_opencl_cpu_device_says_so_and_compares(capsys, tmp_path):
    import tflite_gpu
    devs = tflite_gpu.list_devices()
    sel = [d for d in devs if d.get("selected")]
    if not sel:
        pytest.skip(f"no OpenCL device for the GPU delegate here ({len(devs)} listed)")
    path = write(tmp_path, "add.tflite", add_model(4096))
    jpath = tmp_path / "cl.json"
    code, out, err = run(capsys, "benchmark", f"--graph={path}", "--use_gpu", "--num_runs=3",
                         "--warmup_min_secs=0", "--min_secs=0", f"--json={jpath}")
    assert code == 0, err
    m = re.search(r"^GPU delegate device: (.*) \((GPU|CPU), ", out, re.M)
    assert m and m.group(1) == sel[0]["name"] and m.group(2) == sel[0]["type"], out
    res = json.loads(jpath.read_text())
    if sel[0]["type"] == "CPU":
        assert "this device is the CPU seen through OpenCL" in out
        cmp_line = re.search(r"^CPU kernels \(no delegate\) on this machine: Inference \(avg\): "
                             r"([\d.e+-]+) us over (\d+) runs: ([\d.e+-]+)x", out, re.M)
        assert cmp_line, out
        c = res["cpu_comparison"]
        assert c["cpu_inference_avg_us"] == pytest.approx(float(cmp_line.group(1)), rel=1e-5)
        assert c["cpu_speedup"] == pytest.approx(res["inference"]["avg"] / c["cpu_inference_avg_us"],
                                                 rel=1e-5)
        code, out, err = run(capsys, "benchmark", f"--graph={path}", "--use_gpu", "--num_runs=2",
                             "--warmup_min_secs=0", "--min_secs=0", "--compare_cpu=false")
        assert code == 0, err
        assert "CPU kernels (no delegate)" not in out
    else:
        assert "CPU seen through OpenCL" not in out and res["cpu_comparison"] is None


def test_benchmark_json_to_stdout_is_pure_json(capsys, tmp_path, backend):
    path = write(tmp_path, "add.tflite", add_model(64))
    code, out, err = run(capsys, "benchmark", "--graph", path, "--num_runs", "4",
                         "--warmup_min_secs=0", "--min_secs=0", "--backend", backend, "--json")
    assert code == 0, err
    res = json.loads(out)           # nothing but the JSON on stdout
    assert res["inference"]["count"] == 4
    assert "Inference timings in us:" in err


def test_benchmark_max_secs_stops_early(capsys, tmp_path, backend):
    path = write(tmp_path, "add.tflite", add_model(64))
    code, out, err = run(capsys, "benchmark", f"--graph={path}", "--num_runs=100000000",
                         "--warmup_min_secs=0", "--min_secs=0", "--max_secs=0.2",
                         f"--backend={backend}")
    assert code == 0, err
    counts = [parse_stat(ln)["count"] for ln in out.splitlines() if ln.startswith("count=")]
    assert 1 <= counts[1] < 100000000


def test_benchmark_input_layer_shape_resizes(capsys, tmp_path, backend):
    path = write(tmp_path, "dyn.tflite", add_model(16, dynamic_batch=True))
    jpath = tmp_path / "r.json"
    code, out, err = run(capsys, "benchmark", f"--graph={path}", "--input_layer=x",
                         "--input_layer_shape=3,16", "--num_runs=2", "--warmup_min_secs=0",
                         "--min_secs=0", f"--backend={backend}", f"--json={jpath}")
    assert code == 0, err
    assert json.loads(jpath.read_text())["inputs"][0]["shape"] == [3, 16]
    code, out, err = run(capsys, "benchmark", f"--graph={path}", "--input_layer=x",
                         "--input_layer_shape=3,16,1", f"--backend={backend}")
    assert code == 2 and "rank" in err
    code, out, err = run(capsys, "benchmark", f"--graph={path}", "--input_layer=nope",
                         "--input_layer_shape=3,16", f"--backend={backend}")
    assert code == 2 and "no input named 'nope'" in err


def test_benchmark_peak_memory(capsys, tmp_path, backend):
    path = write(tmp_path, "add.tflite", add_model(256))
    code, out, err = run(capsys, "benchmark", f"--graph={path}", "--num_runs=3",
                         "--warmup_min_secs=0", "--min_secs=0.05",
                         "--report_peak_memory_footprint", "--memory_footprint_check_interval_ms=5",
                         f"--backend={backend}")
    assert code == 0, err
    m = re.search(r"^Overall peak memory footprint \(MB\) via periodic monitoring: "
                  r"([\d.e+-]+)$", out, re.M)
    assert m
    with open("/proc/self/status") as f:
        hwm_mb = [int(ln.split()[1]) for ln in f if ln.startswith("VmHWM:")][0] / 1024.0
    # a sampled RSS cannot exceed the peak; the tool prints MB with 2 decimals (rounding adds <= 0.005)
    assert 1.0 < float(m.group(1)) <= hwm_mb + 0.005 + 1e-6


def test_benchmark_missing_model_and_zoo(capsys, tmp_path, backend, monkeypatch):
    code, _, err = run(capsys, "benchmark", "--graph=/nonexistent.tflite", f"--backend={backend}")
    assert code == 1 and "not found" in err
    zoo = pytest.importorskip("tflite_gpu.testing.zoo")
    tiny = add_model(32)
    monkeypatch.setitem(zoo.ZOO, "cli_test_tiny", lambda: tiny)
    code, out, err = run(capsys, "benchmark", "--graph=zoo:cli_test_tiny", "--num_runs=2",
                         "--warmup_min_secs=0", "--min_secs=0", f"--backend={backend}")
    assert code == 0, err
    assert "Loaded model zoo:cli_test_tiny" in out
    code, _, err = run(capsys, "benchmark", "--graph=zoo:no_such_model", f"--backend={backend}")
    assert code == 1 and "cli_test_tiny" in err      # lists what exists


class _Wrapped:
    """A real interpreter plus scripted engine hooks."""

    def __init__(self, inner, profile=None, offsets=None):
        self._inner = inner
        self._profile = profile
        self._offsets = offsets
        self._invokes = 0
        self.profiling_calls = []
        if profile is not None:
            self.get_profile = lambda: list(self._profile)
            self.enable_profiling = lambda on=True: self.profiling_calls.append(on)

    def invoke(self):
        self._invokes += 1
        self._inner.invoke()

    def get_tensor(self, index):
        a = self._inner.get_tensor(index)
        if self._offsets is not None:
            a = a + np.float32(self._offsets[(self._invokes - 1) % len(self._offsets)])
        return a

    def __getattr__(self, name):
        return getattr(self._inner, name)


def _patch_interpreter(monkeypatch, **wrap_kw):
    real = _backend.make_interpreter
    made = []

    def fake(*a, **kw):
        w = _Wrapped(real(*a, **kw), **wrap_kw)
        made.append(w)
        return w
    monkeypatch.setattr(_backend, "make_interpreter", fake)
    return made


def test_benchmark_op_profiling_table(capsys, tmp_path, backend, monkeypatch):
    # per run: node 0 ADD on the CPU 100 us, a GPU kernel covering nodes 1-2 300 us
    profile = [{"step": 0, "name": "ADD", "device": "CPU", "us": 100.0, "nodes": [0]},
               {"step": 1, "name": "CONV_2D", "device": "GPU", "us": 300.0, "nodes": [1, 2]}]
    made = _patch_interpreter(monkeypatch, profile=profile)
    path = write(tmp_path, "add.tflite", add_model(64))
    code, out, err = run(capsys, "benchmark", f"--graph={path}", "--num_runs=4",
                         "--warmup_min_secs=0", "--min_secs=0", "--enable_op_profiling",
                         f"--backend={backend}")
    assert code == 0, err
    assert made[0].profiling_calls == [True, False]
    assert "Operator-wise Profiling Info for Regular Benchmark Runs:" in out
    for title in ("Run Order", "Top by Computation Time", "Summary by node type"):
        assert f"============================== {title} ==============================" in out
    header = ("\t" + "[node type]".rjust(24) + "\t" + "[first]".rjust(9) + "\t"
              + "[avg ms]".rjust(9) + "\t" + "[%]".rjust(8) + "\t" + "[cdf%]".rjust(8) + "\t"
              + "[mem KB]".rjust(10) + "\t" + "[times called]".rjust(9) + "\t[Name]")
    assert header in out.splitlines()
    rows = [ln.split("\t")[1:] for ln in out.splitlines()
            if ln.startswith("\t") and ("ADD" in ln or "CONV_2D" in ln)]
    run_order, by_time, by_type = rows[0:2], rows[2:4], rows[4:6]
    # 100 / 400 = 25 %, 300 / 400 = 75 %
    assert [r[0].strip() for r in run_order] == ["ADD", "CONV_2D"]
    assert [c.strip() for c in run_order[0][1:7]] == ["0.100", "0.100", "25.000%", "25.000%",
                                                      "0.000", "1"]
    assert [c.strip() for c in run_order[1][1:7]] == ["0.300", "0.300", "75.000%", "100.000%",
                                                      "0.000", "1"]
    assert run_order[0][7].endswith(":0 (CPU)") and run_order[1][7] == "[nodes 1,2] (GPU)"
    assert [r[0].strip() for r in by_time] == ["CONV_2D", "ADD"]
    assert [c.strip() for c in by_time[1][3:5]] == ["25.000%", "100.000%"]
    assert [r[0].strip() for r in by_type] == ["CONV_2D", "ADD"]
    assert [c.strip() for c in by_type[0][1:5]] == ["1", "0.300", "75.000%", "75.000%"]
    assert "Number of nodes executed: 2" in out
    assert "Timings (microseconds): count=4 curr=400(all same)" in out


def test_benchmark_op_profiling_absent_hook_still_runs(capsys, tmp_path, backend, monkeypatch):
    _patch_interpreter(monkeypatch)       # no get_profile on the wrapper...
    monkeypatch.setattr(_Wrapped, "__getattr__", lambda self, n: (
        (_ for _ in ()).throw(AttributeError(n)) if n in ("get_profile", "enable_profiling",
                                                          "set_profiling")
        else getattr(self._inner, n)))
    path = write(tmp_path, "add.tflite", add_model(64))
    code, out, err = run(capsys, "benchmark", f"--graph={path}", "--num_runs=2",
                         "--warmup_min_secs=0", "--min_secs=0", "--enable_op_profiling",
                         f"--backend={backend}")
    assert code == 0, err
    assert "Op profiling is not available" in err
    assert "Inference timings in us:" in out


def test_progress_only_on_a_tty():
    import io
    from tflite_gpu.tools.benchmark import _Progress

    class Tty(io.StringIO):
        def isatty(self):
            return True
    tty, pipe = Tty(), io.StringIO()
    for stream in (tty, pipe):
        p = _Progress(stream)
        p.update("benchmark", 7)
        p.done()
    assert tty.getvalue().startswith("\rbenchmark: 7 runs") and pipe.getvalue() == ""


def test_benchmark_plot_without_matplotlib(capsys, tmp_path, backend, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)     # import fails
    path = write(tmp_path, "add.tflite", add_model(64))
    png = tmp_path / "lat.png"
    code, out, err = run(capsys, "benchmark", f"--graph={path}", "--num_runs=3",
                         "--warmup_min_secs=0", "--min_secs=0", f"--plot={png}",
                         f"--backend={backend}")
    assert code == 0, err
    assert "matplotlib is not installed" in err and not png.exists()


def test_benchmark_plot_with_matplotlib(capsys, tmp_path, backend):
    pytest.importorskip("matplotlib")
    path = write(tmp_path, "add.tflite", add_model(64))
    png = tmp_path / "lat.png"
    code, out, err = run(capsys, "benchmark", f"--graph={path}", "--num_runs=5",
                         "--warmup_min_secs=0", "--min_secs=0", f"--plot={png}",
                         f"--backend={backend}")
    assert code == 0, err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_gpu_flags_map_to_delegate_options(monkeypatch):
    """--gpu_* flags -> GpuDelegateOptions keyword arguments (API.md names)."""
    import enum
    import tflite_gpu
    from tflite_gpu.tools.flags import gpu_options_from_flags

    class ExperimentalFlags(enum.IntFlag):
        NONE = 0
        ENABLE_QUANT = 1
        CL_ONLY = 2
        ENABLE_SERIALIZATION = 4

    WaitType = enum.Enum("WaitType", "PASSIVE ACTIVE DO_NOT_WAIT AGGRESSIVE")
    InferencePreference = enum.Enum("InferencePreference",
                                    "FAST_SINGLE_ANSWER SUSTAINED_SPEED")
    seen = {}

    class Options:
        def __init__(self, **kw):
            seen.update(kw)

    class Delegate:
        def __init__(self, options):
            self.options = options

    for name, val in (("ExperimentalFlags", ExperimentalFlags), ("WaitType", WaitType),
                      ("InferencePreference", InferencePreference),
                      ("GpuDelegateOptions", Options), ("GpuDelegate", Delegate)):
        monkeypatch.setattr(tflite_gpu, name, val, raising=False)
    fl = parse_flags(["--use_gpu", "--gpu_precision_loss_allowed=false",
                      "--gpu_wait_type=aggressive", "--gpu_inference_for_sustained_speed",
                      "--max_delegated_partitions=3", "--delegate_serialize_dir=/tmp/s",
                      "--delegate_serialize_token=tok", "--gpu_device=1"], delegate_flags())
    d = _backend._make_gpu_delegate(gpu_options_from_flags(fl))
    assert isinstance(d, Delegate)
    assert seen == dict(is_precision_loss_allowed=False, enable_quantization=True,
                        experimental_flags=ExperimentalFlags.ENABLE_QUANT
                        | ExperimentalFlags.ENABLE_SERIALIZATION,
                        inference_preference=InferencePreference.SUSTAINED_SPEED,
                        wait_type=WaitType.AGGRESSIVE, max_delegated_partitions=3,
                        serialization_dir="/tmp/s", model_token="tok", device=1)
    seen.clear()
    _backend._make_gpu_delegate(gpu_options_from_flags(
        parse_flags(["--gpu_experimental_enable_quant=false"], delegate_flags())))
    assert seen["experimental_flags"] == ExperimentalFlags.NONE
    assert seen["is_precision_loss_allowed"] is True        # TFLite's default


def test_litert_backend_with_use_gpu_warns_and_runs(capsys):
    pytest.importorskip("ai_edge_litert.interpreter")
    msgs = []
    interp = _backend.make_interpreter(model_content=add_model(8), use_gpu=True,
                                       backend="litert", warn=msgs.append)
    interp.allocate_tensors()
    interp.invoke()
    assert msgs and "not available with --backend=litert" in msgs[0]


# --------------------------------------------------------------------------- diff

DIFF_RE = {
    "runs": re.compile(r"^Num evaluation runs: (\d+)$", re.M),
    "ref": re.compile(r"^Reference run latency: avg=([\d.e+-]+)\(us\), std_dev=(\d+)\(us\)$",
                      re.M),
    "test": re.compile(r"^Test run latency: avg=([\d.e+-]+)\(us\), std_dev=(\d+)\(us\)$", re.M),
    "out": re.compile(r"^OutputDiff\[(\d+)\]: avg_error=([\d.e+-]+), std_dev=([\d.e+-]+)$",
                      re.M),
}


def test_diff_same_backend_is_exact(capsys, tmp_path, backend):
    path = write(tmp_path, "two.tflite", two_output_model())
    code, out, err = run(capsys, "diff", f"--model_file={path}", "--num_runs=7",
                         f"--backend={backend}")
    assert code == 0, err
    assert DIFF_RE["runs"].search(out).group(1) == "7"
    # A tiny model can run in under a microsecond on a fast engine: latencies are >= 0.
    assert float(DIFF_RE["ref"].search(out).group(1)) >= 0
    assert float(DIFF_RE["test"].search(out).group(1)) >= 0
    diffs = DIFF_RE["out"].findall(out)
    assert [d[0] for d in diffs] == ["0", "1"]
    assert all(float(d[1]) == 0.0 and float(d[2]) == 0.0 for d in diffs)


def test_diff_measures_a_known_error(capsys, tmp_path, backend, monkeypatch):
    # the test interpreter (the second one built) is off by 0.25, 0.75, 0.25, 0.75 ...
    offsets = [0.25, 0.75]
    real = _backend.make_interpreter
    calls = []

    def fake(*a, **kw):
        interp = real(*a, **kw)
        calls.append(kw.get("num_threads"))
        return _Wrapped(interp, offsets=offsets) if len(calls) == 2 else interp
    monkeypatch.setattr(_backend, "make_interpreter", fake)
    path = write(tmp_path, "two.tflite", two_output_model())
    code, out, err = run(capsys, "diff", f"--model_file={path}", "--num_runs=6",
                         "--num_interpreter_threads=2", f"--backend={backend}")
    assert code == 0, err
    assert calls == [1, 2]        # reference single-threaded, test as asked
    per_run = np.array(offsets * 3)
    for idx, avg, std in DIFF_RE["out"].findall(out):
        assert float(avg) == pytest.approx(per_run.mean(), rel=1e-5)
        assert float(std) == pytest.approx(per_run.std(), rel=1e-5)


def test_diff_gaussian_inputs_respect_quantization():
    from tflite_gpu.tools.diff import gaussian_inputs

    rng = np.random.default_rng(0)
    details = [{"shape": [20000], "dtype": np.int8, "quantization": (0.05, -3)},
               {"shape": [20000], "dtype": np.uint8, "quantization": (0.001, 128)},
               {"shape": [20000], "dtype": np.float32, "quantization": (0.0, 0)}]
    q8, u8, f32 = gaussian_inputs(details, rng)
    assert q8.dtype == np.int8 and u8.dtype == np.uint8 and f32.dtype == np.float32
    real = (q8.astype(np.float64) + 3) * 0.05                 # dequantized: N(0, 1)
    assert abs(real.mean()) < 0.05 and abs(real.std() - 1) < 0.05
    assert u8.min() == 0 and u8.max() == 255                   # tiny scale: clipped
    assert abs(f32.mean()) < 0.05 and abs(f32.std() - 1) < 0.05


# --------------------------------------------------------------------------- classification

# (colour, label written in the ground truth); some deliberately wrong
CLS_IMAGES = [((255, 0, 0), "red"), ((0, 255, 0), "green"), ((0, 0, 255), "blue"),
              ((0, 0, 0), "black"), ((255, 255, 0), "yellow"), ((250, 10, 5), "yellow"),
              ((10, 240, 20), "blue"), ((0, 0, 0), "red"), ((240, 230, 10), "red"),
              ((20, 20, 230), "green")]


def _expected_topk(entries, ks=range(1, 11)):
    """Rank of each label under logits = W @ ((rgb - 127.5) / 127.5) + b, in float64."""
    ranks = []
    for rgb, label in entries:
        x = (np.array(rgb, np.float64) - 127.5) / 127.5
        logits = CLS_W.astype(np.float64) @ x + CLS_B
        true = logits[CLS_NAMES.index(label)]
        assert np.sum(np.isclose(logits, true, atol=1e-3)) == 1   # no near-ties
        ranks.append(int(np.sum(logits > true)))
    return [sum(r < k for r in ranks) / len(ranks) for k in ks]


def _write_images(folder, entries, size=(30, 20)):
    from PIL import Image

    folder.mkdir()
    for i, (rgb, _) in enumerate(entries):
        arr = np.zeros((size[1], size[0], 3), np.uint8)
        arr[:] = rgb
        # sorted-name order = list order; mix formats
        if i % 3 == 2:
            np.save(folder / f"img_{i:03d}.npy", arr)
        else:
            Image.fromarray(arr).save(folder / f"img_{i:03d}.png")
    (folder / "notes.txt").write_text("not an image")


def _cls_setup(tmp_path, entries=CLS_IMAGES, quantized=False):
    pytest.importorskip("PIL")
    images = tmp_path / "images"
    _write_images(images, entries)
    labels = tmp_path / "gt.txt"
    labels.write_text("\n".join(lbl for _, lbl in entries) + "\n")
    names = tmp_path / "labels.txt"
    names.write_text("\n".join(CLS_NAMES) + "\n")
    model = write(tmp_path, "cls.tflite", classifier_model(quantized=quantized))
    return model, str(images), str(labels), str(names)


TOPK_RE = re.compile(r"^Top-(\d+) Accuracy: ([\d.e+-]+)$", re.M)


@pytest.mark.parametrize("quantized", [False, True])
def test_eval_classification_topk(capsys, tmp_path, backend, quantized):
    model, images, labels, names = _cls_setup(tmp_path, quantized=quantized)
    out_json = tmp_path / "acc.json"
    code, out, err = run(capsys, "eval-classification", f"--model_file={model}",
                         f"--ground_truth_images_path={images}",
                         f"--ground_truth_labels={labels}", f"--model_output_labels={names}",
                         "--num_images=0", f"--backend={backend}",
                         f"--output_file_path={out_json}")
    assert code == 0, err
    assert re.search(r"^Num evaluation runs: 10$", out, re.M)
    assert re.search(r"^Preprocessing latency: avg=[\d.e+-]+\(us\), std_dev=\d+\(us\)$", out,
                     re.M)
    assert re.search(r"^Inference latency: avg=[\d.e+-]+\(us\), std_dev=\d+\(us\)$", out, re.M)
    got = [(int(k), float(v)) for k, v in TOPK_RE.findall(out)]
    want = _expected_topk(CLS_IMAGES)
    assert [k for k, _ in got] == list(range(1, 11))
    assert [v for _, v in got] == pytest.approx(want, abs=1e-6)
    assert want[0] == 0.5       # the fixture itself: 5 of 10 labels are right
    assert json.loads(out_json.read_text())["topk_accuracies"] == pytest.approx(want)


def test_eval_classification_denylist_and_num_images(capsys, tmp_path, backend):
    model, images, labels, names = _cls_setup(tmp_path)
    deny = tmp_path / "deny.txt"
    deny.write_text("2\n6 9\n")              # 1-based: drops entries 1, 5 and 8
    kept = [e for i, e in enumerate(CLS_IMAGES, start=1) if i not in (2, 6, 9)]
    code, out, err = run(capsys, "eval-classification", f"--model_file={model}",
                         f"--ground_truth_images_path={images}",
                         f"--ground_truth_labels={labels}", f"--model_output_labels={names}",
                         f"--denylist_file_path={deny}", "--num_images=5",
                         f"--backend={backend}")
    assert code == 0, err
    assert re.search(r"^Num evaluation runs: 5$", out, re.M)
    got = [float(v) for _, v in TOPK_RE.findall(out)]
    assert got == pytest.approx(_expected_topk(kept[:5]), abs=1e-6)


def test_eval_classification_index_labels_and_errors(capsys, tmp_path, backend):
    model, images, labels, names = _cls_setup(tmp_path)
    idx = tmp_path / "idx.txt"
    idx.write_text("\n".join(str(CLS_NAMES.index(lbl)) for _, lbl in CLS_IMAGES))
    code, out, err = run(capsys, "eval-classification", f"--model_file={model}",
                         f"--ground_truth_images_path={images}", f"--ground_truth_labels={idx}",
                         "--num_ranks=3", f"--backend={backend}")
    assert code == 0, err
    assert [float(v) for _, v in TOPK_RE.findall(out)] == pytest.approx(
        _expected_topk(CLS_IMAGES, range(1, 4)), abs=1e-6)
    short = tmp_path / "short.txt"
    short.write_text("red\n")
    code, _, err = run(capsys, "eval-classification", f"--model_file={model}",
                       f"--ground_truth_images_path={images}", f"--ground_truth_labels={short}",
                       f"--backend={backend}")
    assert code == 2 and "1 ground-truth labels for 10 images" in err


def test_preprocessing_crop_resize_normalise():
    from tflite_gpu.tools.eval_classification import (central_crop, preprocess_image,
                                                      resize_bilinear)

    img = np.arange(16 * 8 * 3, dtype=np.uint8).reshape(16, 8, 3)
    c = central_crop(img, 0.5)
    assert c.shape == (8, 4, 3) and (c == img[4:12, 2:6]).all()
    # 2x downscale with TF's legacy sampling picks the even rows/cols exactly
    r = resize_bilinear(img, 8, 4)
    np.testing.assert_array_equal(r, img[::2, ::2].astype(np.float32))
    # constant images stay constant; float normalisation (x - 127.5) / 127.5
    solid = np.full((10, 10, 3), 255, np.uint8)
    d = {"shape": [1, 4, 4, 3], "dtype": np.float32, "quantization": (0.0, 0)}
    assert np.allclose(preprocess_image(solid, d), 1.0)
    dq = {"shape": [1, 4, 4, 3], "dtype": np.uint8, "quantization": (1 / 128, 128)}
    assert (preprocess_image(solid, dq) == 255).all()      # 1.0 * 128 + 128, clipped
    di = {"shape": [1, 4, 4, 3], "dtype": np.int8, "quantization": (0.5, 10)}
    assert (preprocess_image(np.zeros((4, 4, 3), np.uint8), di) == 8).all()   # -1/0.5 + 10


# --------------------------------------------------------------------------- detection

# normalised (ymin, xmin, ymax, xmax) boxes
BOX_A = [0.1, 0.1, 0.5, 0.5]
BOX_B = [0.5, 0.5, 0.9, 0.9]
JUNK = [0.0, 0.8, 0.1, 0.95]
IMG_W, IMG_H = 200, 100


def _px(box, dx=0.0):
    """normalised yxyx -> COCO pixel [x, y, w, h] for a 200x100 image, shifted dx px."""
    y0, x0, y1, x1 = box
    return [x0 * IMG_W + dx, y0 * IMG_H, (x1 - x0) * IMG_W, (y1 - y0) * IMG_H]


def _postprocess_model():
    # slots: A as class 0 (0.9), B as class 1 (0.8), junk class 0 (0.99) beyond count=2
    boxes = np.array([[BOX_A, BOX_B, JUNK]], np.float32)
    classes = np.array([[0, 1, 0]], np.float32)
    scores = np.array([[0.9, 0.8, 0.99]], np.float32)
    count = np.array([2], np.float32)
    # scores + 0.01 * mean(image): the white image scores above the black one
    return _constant_outputs_model([("boxes", boxes), ("classes", classes),
                                    ("scores", scores), ("count", count)],
                                   size=8, score_slot=2, score_gain=0.01)


def _det_images(tmp_path, names_colours):
    from PIL import Image

    folder = tmp_path / "det_images"
    folder.mkdir()
    for name, v in names_colours:
        Image.fromarray(np.full((IMG_H, IMG_W, 3), v, np.uint8)).save(folder / name)
    return str(folder)


AP_RE = re.compile(r"^Average Precision \[IOU Threshold=([\d.]+)\]: ([\d.e+-]+)$", re.M)


def _det_results(out):
    ap50 = float(re.search(r"^AP50: ([\d.e+-]+)$", out, re.M).group(1))
    m = float(re.search(r"^mAP \(IoU 0\.5:0\.95\): ([\d.e+-]+)$", out, re.M).group(1))
    per_iou = [(float(t), float(v)) for t, v in AP_RE.findall(out)]
    return ap50, m, per_iou


def test_eval_detection_postprocess_layout_json(capsys, tmp_path, backend):
    """Hand-computed AP.

    white.png (id 7): cat at A; dog at B shifted 13 px in x: IoU (80-13)/(80+13) = 0.720
    black.png (id 3): cat at A; no dog -> its dog detection is a false positive.
    cat: TP, TP -> AP 1 at every threshold.
    dog: white's det (scores 0.81) before black's (0.79): TP then FP for IoU <= 0.70
    (AP 1), FP, FP above (AP 0) -> dog AP 0.5 over 0.50:0.95, 1 at 0.50.
    The junk slot (class 0, score 0.99) lies beyond count=2: if read, cat AP drops.
    """
    pytest.importorskip("PIL")
    images = _det_images(tmp_path, [("white.png", 255), ("black.png", 0)])
    gt = {"images": [{"id": 7, "file_name": "white.png", "width": IMG_W, "height": IMG_H},
                     {"id": 3, "file_name": "black.png", "width": IMG_W, "height": IMG_H},
                     {"id": 9, "file_name": "absent.png", "width": IMG_W, "height": IMG_H}],
          "annotations": [{"id": 1, "image_id": 7, "category_id": 1, "bbox": _px(BOX_A)},
                          {"id": 2, "image_id": 7, "category_id": 4, "bbox": _px(BOX_B, 13)},
                          {"id": 3, "image_id": 3, "category_id": 1, "bbox": _px(BOX_A)}],
          "categories": [{"id": 4, "name": "dog"}, {"id": 1, "name": "cat"}]}
    gt_path = tmp_path / "gt.json"
    gt_path.write_text(json.dumps(gt))
    model = write(tmp_path, "det.tflite", _postprocess_model())
    # without labels: class i -> i-th category by id (0 -> 1 'cat', 1 -> 4 'dog')
    code, out, err = run(capsys, "eval-detection", f"--model_file={model}",
                         f"--ground_truth_images_path={images}",
                         f"--ground_truth_json={gt_path}", "--per_category",
                         f"--backend={backend}")
    assert code == 0, err
    assert "1 ground-truth image(s) not found" in err
    assert re.search(r"^Num evaluation runs: 2$", out, re.M)
    assert re.search(r"^Inference latency: avg=[\d.e+-]+\(us\), std_dev=\d+\(us\)$", out, re.M)
    ap50, m, per_iou = _det_results(out)
    assert ap50 == pytest.approx(1.0, abs=1e-6)
    assert m == pytest.approx(0.75, abs=1e-6)
    assert [t for t, _ in per_iou] == pytest.approx([0.5 + 0.05 * i for i in range(10)])
    assert [v for _, v in per_iou] == pytest.approx([1.0] * 5 + [0.5] * 5, abs=1e-6)
    assert float(re.search(r"^AP\[dog\]: ([\d.e+-]+)$", out, re.M).group(1)) == \
        pytest.approx(0.5, abs=1e-6)

    # with labels mapping by name; swapping the names swaps the classes: the
    # model's class 0 (boxes at A) now claims 'dog', which has no GT at A.
    labels = tmp_path / "labels.txt"
    labels.write_text("dog\ncat\n")
    code, out, err = run(capsys, "eval-detection", f"--model_file={model}",
                         f"--ground_truth_images_path={images}",
                         f"--ground_truth_json={gt_path}", f"--model_output_labels={labels}",
                         f"--backend={backend}")
    assert code == 0, err
    ap50, m, _ = _det_results(out)
    assert ap50 == pytest.approx(0.0, abs=1e-6) and m == pytest.approx(0.0, abs=1e-6)


def test_eval_detection_ground_truth_proto(capsys, tmp_path, backend):
    pytest.importorskip("PIL")
    images = _det_images(tmp_path, [("white.png", 255), ("black.png", 0)])

    def obj(cls, box, dx=0.0):
        y0, x0, y1, x1 = box
        return (f"  objects {{\n    bounding_box {{\n      normalized_top: {y0}\n"
                f"      normalized_bottom: {y1}\n      normalized_left: {x0 + dx / IMG_W}\n"
                f"      normalized_right: {x1 + dx / IMG_W}\n    }}\n    class_id: {cls}\n  }}\n")
    proto = ("# ObjectDetectionGroundTruth\n"
             f"detection_results {{\n{obj(0, BOX_A)}{obj(1, BOX_B, 13)}"
             '  image_name: "white.png"\n  image_id: 7\n}\n'
             f"detection_results {{\n{obj(0, BOX_A)}"
             '  image_name: "black.png"\n  image_id: 3\n}\n')
    p = tmp_path / "gt.pbtxt"
    p.write_text(proto)
    model = write(tmp_path, "det.tflite", _postprocess_model())
    code, out, err = run(capsys, "eval-detection", f"--model_file={model}",
                         f"--ground_truth_images_path={images}",
                         f"--ground_truth_proto={p}", f"--backend={backend}")
    assert code == 0, err
    ap50, m, _ = _det_results(out)
    assert ap50 == pytest.approx(1.0, abs=1e-6) and m == pytest.approx(0.75, abs=1e-6)


def _encode(box, anchor, scales=(10.0, 10.0, 5.0, 5.0)):
    """Inverse of SSD decoding, written from the definition (box/anchor centre-size)."""
    y0, x0, y1, x1 = box
    yc, xc, h, w = (y0 + y1) / 2, (x0 + x1) / 2, y1 - y0, x1 - x0
    ya, xa, ha, wa = anchor
    return [(yc - ya) / ha * scales[0], (xc - xa) / wa * scales[1],
            np.log(h / ha) * scales[2], np.log(w / wa) * scales[3]]


def test_eval_detection_raw_outputs_anchors_and_nms(capsys, tmp_path, backend):
    """Raw encodings + anchors.  GT: cats at A and D, dogs at B and C.

    anchor 0 = A (cat 0.9), anchor 1 ~ A shifted (cat 0.85, IoU 0.82 with A:
    NMS must drop it), anchor 2 = B (dog 0.8), anchor 3 is far off but its
    encoding decodes to C exactly (dog 0.7), anchor 4 = D (cat 0.5).
    With NMS every detection is a TP: AP 1.  Without NMS the duplicate would
    be an FP between the two cat TPs: cat AP (51 + 50 * 2/3) / 101.
    """
    pytest.importorskip("PIL")
    D = [0.6, 0.05, 0.9, 0.3]
    C = [0.05, 0.6, 0.35, 0.95]
    anchors = np.array([[0.3, 0.3, 0.4, 0.4], [0.3, 0.33, 0.4, 0.4], [0.7, 0.7, 0.4, 0.4],
                        [0.5, 0.5, 0.2, 0.2], [0.75, 0.175, 0.3, 0.25]], np.float32)
    enc = np.zeros((1, 5, 4), np.float32)
    enc[0, 3] = _encode(C, anchors[3])
    # columns: background, cat, dog
    scores = np.array([[[0.05, 0.9, 0.0], [0.05, 0.85, 0.0], [0.1, 0.0, 0.8],
                        [0.1, 0.0, 0.7], [0.2, 0.5, 0.0]]], np.float32)
    model = write(tmp_path, "raw.tflite",
                  _constant_outputs_model([("raw_boxes", enc), ("class_scores", scores)]))
    np.save(tmp_path / "anchors.npy", anchors)
    images = _det_images(tmp_path, [("a.png", 128)])
    gt = {"images": [{"id": 1, "file_name": "a.png", "width": IMG_W, "height": IMG_H}],
          "annotations": [{"image_id": 1, "category_id": 17, "bbox": _px(BOX_A)},
                          {"image_id": 1, "category_id": 17, "bbox": _px(D)},
                          {"image_id": 1, "category_id": 18, "bbox": _px(BOX_B)},
                          {"image_id": 1, "category_id": 18, "bbox": _px(C)}],
          "categories": [{"id": 17, "name": "cat"}, {"id": 18, "name": "dog"}]}
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    (tmp_path / "labels.txt").write_text("cat\ndog\n")
    args = ["eval-detection", f"--model_file={model}", f"--ground_truth_images_path={images}",
            f"--ground_truth_json={tmp_path / 'gt.json'}",
            f"--model_output_labels={tmp_path / 'labels.txt'}",
            f"--anchors_file={tmp_path / 'anchors.npy'}", "--per_category",
            f"--backend={backend}"]
    code, out, err = run(capsys, *args)
    assert code == 0, err
    ap50, m, _ = _det_results(out)
    assert ap50 == pytest.approx(1.0, abs=1e-6) and m == pytest.approx(1.0, abs=1e-6)
    # NMS off (threshold 1.0 keeps everything): the duplicate costs exactly what we said
    code, out, err = run(capsys, *args, "--nms_iou_threshold=1.0")
    assert code == 0, err
    cat = float(re.search(r"^AP\[cat\]: ([\d.e+-]+)$", out, re.M).group(1))
    assert cat == pytest.approx((51 + 50 * 2 / 3) / 101, abs=1e-6)


def test_ssd_decoding_and_nms_units():
    from tflite_gpu.tools.eval_detection import decode_ssd_boxes, nms, parse_text_proto

    anchor = np.array([[0.5, 0.5, 0.2, 0.4]])
    np.testing.assert_allclose(decode_ssd_boxes(np.zeros((1, 4)), anchor),
                               [[0.4, 0.3, 0.6, 0.7]])
    # ty = 10 -> centre moves by one anchor height; th = 5 ln 2 -> height doubles
    np.testing.assert_allclose(decode_ssd_boxes([[10.0, 0, 5 * np.log(2), 0]], anchor),
                               [[0.5, 0.3, 0.9, 0.7]])
    boxes = np.array([[0, 0, 1, 1], [0, 0.05, 1, 1.05], [2, 2, 3, 3]], np.float64)
    assert nms(boxes, [0.5, 0.9, 0.1], 0.5, 10).tolist() == [1, 2]
    assert nms(boxes, [0.5, 0.9, 0.1], 0.99, 10).tolist() == [1, 0, 2]
    assert nms(boxes, [0.5, 0.9, 0.1], 0.99, 2).tolist() == [1, 0]
    msg = parse_text_proto('a { b: 1 c: "x y" d { e: 2.5 } d { e: -1 } } f: true # c\n')
    assert msg == {"a": [{"b": [1], "c": ["x y"], "d": [{"e": [2.5]}, {"e": [-1]}]}],
                   "f": [True]}


# --------------------------------------------------------------------------- devices

def test_devices_runs(capsys):
    code, out, err = run(capsys, "devices", "--json")
    res = json.loads(out)
    assert set(res) >= {"source", "devices", "is_delegate_supported_on_this_device"}
    if code == 0:
        for d in res["devices"]:
            assert {"platform", "name", "vendor", "type", "fp16", "global_mem_bytes",
                    "compute_units", "selected"} <= set(d)
        assert sum(bool(d["selected"]) for d in res["devices"]) <= 1
    code, out, err = run(capsys, "devices")
    assert code in (0, 1)
    assert ("OpenCL devices" in out) or ("No OpenCL devices" in out)
