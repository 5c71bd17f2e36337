"""``tflite-gpu benchmark``: TFLite's benchmark_model, in Python.

Same flags and the same output lines as benchmark_model, so that logs can be
compared side by side:

    Loaded model /tmp/m.tflite
    The input model file size (MB): 16.9008
    Initialized session in 254.327ms.
    Running benchmark for at least 1 iterations and at least 0.5 seconds but terminate if exceeding 150 seconds.
    count=42 first=57426 curr=8806 min=8487 max=57426 avg=11921.7 std=7497
    Running benchmark for at least 50 iterations and at least 1 seconds but terminate if exceeding 150 seconds.
    count=115 first=9044 curr=8737 min=8501 max=9343 avg=8742.42 std=133
    Inference timings in us: Init: 254327, First inference: 57426, Warmup (avg): 11921.7, Inference (avg): 8742.42
    Memory footprint delta from the start of the tool (MB): init=37.1797 overall=54.0312
    Overall peak memory footprint (MB) via periodic monitoring: 58.293

Timings are of ``invoke()`` alone (inputs are written once, before the
runs), in integer microseconds, and the statistics follow TFLite's
``Stat<int64_t>`` (population std truncated to an integer; "(all same)" when
every run took the same time).  Memory deltas are of the process' peak RSS
(VmHWM, as ru_maxrss in TFLite); the periodic monitor samples VmRSS.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from . import _backend
from ._common import (MemoryMonitor, Stat, apply_input_shapes, fill_dynamic_dims, g6,
                      json_default, peak_rss_kb, random_inputs)
from .flags import (Flag, FlagError, Flags, delegate_flags, gpu_options_from_flags,
                    parse_input_layer_shapes, run_with_flags, gpu_choice_from_flags)

__all__ = ["main", "Stat", "MemoryMonitor", "random_inputs", "format_op_profile", "FLAGS"]

PROG = "tflite-gpu benchmark"
SUMMARY = """Measure initialization time, latency and memory of a .tflite model, like
TFLite's benchmark_model.  --graph also takes zoo:NAME (tflite_gpu.testing.zoo)."""


def _flags() -> List[Flag]:
    return [
        Flag("graph", str, "", "model file (.tflite) or zoo:NAME", aliases=("model_file",)),
        Flag("num_threads", int, -1, "number of CPU threads (-1: the interpreter's default)"),
        Flag("warmup_runs", int, 1, "minimum number of warmup runs"),
        Flag("warmup_min_secs", float, 0.5, "minimum seconds of warmup runs"),
        Flag("num_runs", int, 50, "minimum number of runs"),
        Flag("min_secs", float, 1.0, "minimum seconds of regular runs"),
        Flag("max_secs", float, 150.0,
             "stop the runs after this many seconds (also the warmup); 0 = no limit"),
        Flag("run_delay", float, -1.0, "delay between runs in seconds (< 0: none)"),
        Flag("enable_op_profiling", bool, False, "print per-operator timings"),
        Flag("max_profiling_buffer_entries", int, 1024, "accepted for compatibility; unused"),
        Flag("profiling_output_csv_file", str, "",
             "write the op profile as CSV to this file instead of the tables"),
        Flag("input_layer", str, "", "comma-separated input names for --input_layer_shape"),
        Flag("input_layer_shape", str, "",
             "shapes for --input_layer, ':'-separated, e.g. 1,224,224,3:1,10"),
        Flag("report_peak_memory_footprint", bool, False,
             "sample the RSS periodically in a background thread and report the peak"),
        Flag("memory_footprint_check_interval_ms", int, 50, "interval of that sampling"),
        Flag("json", str, "", "write results as JSON to FILE, or to stdout when given bare "
             "(then the text report goes to stderr)", bare_value="-"),
        Flag("plot", str, "", "write a latency histogram and per-run timeline to FILE.png "
             "(needs matplotlib)"),
        Flag("seed", int, 0, "random seed for the input data"),
        Flag("verbose", bool, False, "print every parameter value"),
        Flag("compare_cpu", bool, True, "when the GPU delegate runs on an OpenCL CPU device "
             "(PoCL), also time the CPU kernels and print the comparison"),
    ] + delegate_flags()


FLAGS = _flags()


# --------------------------------------------------------------------------- op profile

class OpStats:
    """Per-step accumulation over the regular runs.

    A profile entry is one executed step: a CPU node, or a GPU kernel that may
    cover several fused nodes.  Keyed by (node indices, op, device).
    """

    def __init__(self) -> None:
        self.nodes: Dict[Any, Dict[str, Any]] = {}
        self.run_totals = Stat()
        self.num_runs = 0

    def add_run(self, entries: Sequence[Any], names: Dict[int, str]) -> None:
        total = 0.0
        for e in entries:
            nodes, op, device, us = _profile_entry(e)
            key = (tuple(nodes), op, device)
            n = self.nodes.get(key)
            if n is None:
                if len(nodes) == 1:
                    label = f"{names.get(nodes[0], f'[node {nodes[0]}]')}:{nodes[0]}"
                elif nodes:
                    label = "[nodes " + ",".join(str(i) for i in nodes) + "]"
                else:
                    label = f"[{op}]"
                n = {"nodes": list(nodes), "type": op, "device": device,
                     "name": f"{label} ({device})" if device else label,
                     "times": [], "times_called": 0, "run_order": len(self.nodes)}
                self.nodes[key] = n
            n["times"].append(float(us))
            n["times_called"] += 1
            total += us
        self.run_totals.update(int(total))
        self.num_runs += 1

    def as_list(self) -> List[Dict[str, Any]]:
        out = []
        for n in sorted(self.nodes.values(), key=lambda n: n["run_order"]):
            t = n["times"]
            out.append({"nodes": n["nodes"], "op": n["type"], "device": n["device"],
                        "name": n["name"], "first_us": t[0], "avg_us": sum(t) / len(t),
                        "times_called": n["times_called"] // max(1, self.num_runs)})
        return out


def _profile_entry(e: Any) -> Tuple[List[int], str, str, float]:
    """Accepts the engine's dicts {step, name, device, us, nodes} as well as
    (node_index, op_name, device, microseconds) tuples."""
    if isinstance(e, dict):
        nodes = e.get("nodes")
        if nodes is None:
            idx = e.get("node_index", e.get("index", e.get("step")))
            nodes = [] if idx is None else [idx]
        op = e.get("op_name", e.get("name", e.get("op", e.get("type", "?"))))
        dev = e.get("device", "")
        us = e.get("us", e.get("microseconds", e.get("time_us", 0.0)))
    else:
        nodes, op, dev, us = [e[0]], e[1], e[2], e[3]
    return [int(i) for i in list(nodes)], str(op), str(dev or ""), float(us)


def _field(v: Any, width: int) -> str:
    if isinstance(v, float):
        v = f"{v:.3f}"
    return "\t" + str(v).rjust(width)


def format_op_profile(stats: OpStats, title: str = "Regular Benchmark Runs") -> str:
    """The tables TFLite's profile summarizer prints (StatsCalculator)."""
    nodes = list(stats.nodes.values())
    runs = max(1, stats.num_runs)
    total_sum = sum(sum(n["times"]) for n in nodes) or 1e-12

    def header(t: str) -> str:
        return ("============================== " + t + " ==============================\n"
                + _field("[node type]", 24) + _field("[first]", 9) + _field("[avg ms]", 9)
                + _field("[%]", 8) + _field("[cdf%]", 8) + _field("[mem KB]", 10)
                + _field("[times called]", 9) + "\t[Name]")

    def rows(ordered: List[Dict[str, Any]]) -> List[str]:
        lines, cum = [], 0.0
        for n in ordered:
            s = sum(n["times"])
            cum += s
            lines.append(_field(n["type"], 24) + _field(n["times"][0] / 1000.0, 9)
                         + _field(s / len(n["times"]) / 1000.0, 9)
                         + _field(s * 100.0 / total_sum, 7) + "%"
                         + _field(cum * 100.0 / total_sum, 7) + "%"
                         + _field(0.0, 10) + _field(n["times_called"] // runs, 9)
                         + "\t" + n["name"])
        return lines

    out = [f"Operator-wise Profiling Info for {title}:"]
    out.append(header("Run Order"))
    out += rows(sorted(nodes, key=lambda n: n["run_order"]))
    out.append("")
    out.append(header("Top by Computation Time"))
    out += rows(sorted(nodes, key=lambda n: (-sum(n["times"]) / len(n["times"]),
                                             n["run_order"])))
    out.append("")
    out.append(f"Number of nodes executed: {len(nodes)}")
    out.append("============================== Summary by node type "
               "==============================")
    out.append(_field("[Node type]", 24) + _field("[count]", 9) + _field("[avg ms]", 10)
               + _field("[avg %]", 11) + _field("[cdf %]", 11) + _field("[mem KB]", 10)
               + _field("[times called]", 10))
    by_type: Dict[str, Dict[str, float]] = {}
    accumulated = 0
    for n in nodes:
        per_run = int(sum(n["times"]) / runs)
        accumulated += per_run
        t = by_type.setdefault(n["type"], {"count": 0, "us": 0, "called": 0})
        t["count"] += 1
        t["us"] += per_run
        t["called"] += n["times_called"] // runs
    cdf = 0.0
    for name, t in sorted(by_type.items(), key=lambda kv: (-kv[1]["us"], kv[0])):
        pct = t["us"] / accumulated * 100.0 if accumulated else 0.0
        cdf += pct
        out.append(_field(name, 24) + _field(int(t["count"]), 9)
                   + _field(t["us"] / 1000.0, 10) + _field(pct, 10) + "%"
                   + _field(cdf, 10) + "%" + _field(0.0, 10) + _field(int(t["called"]), 9))
    devices: Dict[str, float] = {}
    for n in nodes:
        if n["device"]:
            devices[n["device"]] = devices.get(n["device"], 0.0) + sum(n["times"]) / runs
    if devices:
        out.append("")
        tot = sum(devices.values()) or 1e-12
        out.append("Time by device: " + ", ".join(
            f"{d}={v / 1000.0:.3f}ms ({v * 100.0 / tot:.1f}%)" for d, v in sorted(devices.items())))
    out.append("")
    out.append(f"Timings (microseconds): {stats.run_totals}")
    out.append("Memory (bytes): count=0")
    out.append(f"{len(nodes)} nodes observed")
    out.append("")
    return "\n".join(out) + "\n"


def op_profile_csv(stats: OpStats) -> str:
    lines = ["node type, first, avg_ms, %, cdf%, mem KB, times called, name, device"]
    nodes = sorted(stats.nodes.values(), key=lambda n: n["run_order"])
    total = sum(sum(n["times"]) for n in nodes) or 1e-12
    cum = 0.0
    for n in nodes:
        s = sum(n["times"])
        cum += s
        name = n["name"].replace(",", "\t")
        lines.append(f"{n['type']}, {n['times'][0] / 1000.0:.3f}, "
                     f"{s / len(n['times']) / 1000.0:.3f}, {s * 100.0 / total:.3f}%, "
                     f"{cum * 100.0 / total:.3f}%, 0.000, "
                     f"{n['times_called'] // max(1, stats.num_runs)}, {name}, {n['device']}")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- plotting

def write_plot(path: str, warmup: Stat, regular: Stat, title: str) -> Optional[str]:
    """Histogram + timeline PNG.  Returns an error message instead of raising."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception:
        return ("matplotlib is not installed, so no plot was written "
                "(pip install matplotlib to get --plot)")
    try:
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
        vals = np.array(regular.values, dtype=np.float64)
        if vals.size:
            # clip the long tail so that the bulk stays readable
            hi = float(np.percentile(vals, 99.5)) if vals.size >= 200 else float(vals.max())
            lo = float(vals.min())
            n_out = int(np.count_nonzero(vals > hi))
            ax1.hist(vals[vals <= hi], bins=min(50, max(5, vals.size // 2)),
                     range=(lo, max(hi, lo + 1)), color="tab:blue")
            if n_out:
                ax1.text(0.98, 0.02, f"{n_out} runs > {hi:.0f} us not shown",
                         transform=ax1.transAxes, ha="right", va="bottom", fontsize=8)
            ax1.axvline(vals.mean(), color="tab:red", linestyle="--",
                        label=f"avg {vals.mean():.0f} us")
            ax1.legend()
        ax1.set_xlabel("latency (us)")
        ax1.set_ylabel("runs")
        ax1.set_title("Latency histogram (regular runs)")
        w = np.array(warmup.values, dtype=np.float64)
        style = ".-" if w.size + vals.size <= 500 else "-"
        ax2.plot(np.arange(w.size), w, style, color="tab:orange", label="warmup", lw=0.8)
        ax2.plot(np.arange(w.size, w.size + vals.size), vals, style, color="tab:blue",
                 label="regular", lw=0.8)
        ax2.set_xlabel("run")
        ax2.set_ylabel("latency (us)")
        ax2.set_title("Per-run timeline")
        ax2.legend()
        fig.suptitle(title)
        fig.tight_layout()
        fig.savefig(path, dpi=100)
        plt.close(fig)
    except Exception as e:  # pragma: no cover - matplotlib internals
        return f"could not write the plot: {e}"
    return None


# --------------------------------------------------------------------------- runner

class _Progress:
    """One-line '\\r' counter on stderr, only when stderr is a terminal."""

    def __init__(self, stream) -> None:
        self.stream = stream
        try:
            self.enabled = bool(stream.isatty())
        except Exception:
            self.enabled = False
        self._last = 0.0

    def update(self, label: str, n: int) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self._last < 0.1:
            return
        self._last = now
        self.stream.write(f"\r{label}: {n} runs")
        self.stream.flush()

    def done(self) -> None:
        if self.enabled:
            self.stream.write("\r\033[K")
            self.stream.flush()


def _run_loop(interp, min_runs: int, min_secs: float, max_secs: float, run_delay: float,
              progress: _Progress, label: str, after_invoke=None) -> Stat:
    stat = Stat()
    min_us = min_secs * 1e6
    max_us = max_secs * 1e6 if max_secs > 0 else float("inf")
    start = time.perf_counter()
    now_us = 0.0
    run = 0
    while (run < min_runs or now_us < min_us) and now_us <= max_us:
        t0 = time.perf_counter_ns()
        interp.invoke()
        t1 = time.perf_counter_ns()
        stat.update((t1 - t0) // 1000)
        if after_invoke is not None:
            after_invoke()
        if run_delay > 0:
            time.sleep(run_delay)
        run += 1
        progress.update(label, run)
        now_us = (time.perf_counter() - start) * 1e6
    progress.done()
    return stat


def _delegation_lines(interp, use_gpu: bool) -> Tuple[List[str], Optional[Dict[str, Any]]]:
    if not use_gpu:
        return [], None
    fn = _backend.optional_hook(interp, "delegation_report")
    if fn is None:
        return [], None
    try:
        rep = dict(fn())
    except Exception as e:
        return [f"WARNING: delegation_report() failed: {e}"], None
    lines = []
    dn, tn = rep.get("delegated_nodes"), rep.get("total_nodes")
    parts = rep.get("partitions")
    if dn is not None and tn is not None:
        lines.append(f"Replacing {dn} out of {tn} node(s) with delegate (TfLiteGpuDelegateV2) "
                     f"node, yielding {parts} partitions for the whole graph.")
        if dn == tn and tn > 0:
            lines.append("Explicitly applied GPU delegate, and the model graph will be "
                         "completely executed by the delegate.")
        elif dn and dn > 0:
            lines.append("Explicitly applied GPU delegate, and the model graph will be "
                         f"partially executed by the delegate w/ {parts} delegate kernels.")
        else:
            lines.append("Though GPU delegate is explicitly applied, the model graph will "
                         "not be executed by the delegate.")
    for item in rep.get("unsupported", []) or []:
        try:
            idx, op, ver, reason = item
            lines.append(f"  node {idx} {op} v{ver} stays on the CPU: {reason}")
        except Exception:
            lines.append(f"  {item}")
    return lines, rep


def _profile_collector(stats: OpStats, get_profile, names: Dict[int, str]):
    def after() -> None:
        stats.add_run(list(get_profile() or []), names)
    return after


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    return run_with_flags(argv, PROG, SUMMARY, FLAGS, _benchmark, sys.stdout, sys.stderr)


def _benchmark(flags: Flags) -> int:
    json_to_stdout = flags.json == "-"
    run = _BenchmarkRun(flags, out=sys.stderr if json_to_stdout else sys.stdout,
                        err=sys.stderr)
    try:
        return run.execute()
    except (FlagError, _backend.BackendError) as e:
        run.err.write(f"ERROR: {e}\n")
        return 1 if isinstance(e, _backend.BackendError) else 2
    except Exception as e:
        run.err.write(f"ERROR: benchmark failed: {type(e).__name__}: {e}\n")
        return 1
    finally:
        run.stop_monitor()


class _BenchmarkRun:
    """One ``tflite-gpu benchmark`` run, step by step (``execute`` lists the steps).

    The text report goes to ``out`` (stderr when the JSON goes to stdout), warnings
    and errors to ``err``.
    """

    def __init__(self, flags: Flags, out, err) -> None:
        self.flags = flags
        self.out = out
        self.err = err
        self.start_mem_kb = peak_rss_kb()
        self.monitor: Optional[MemoryMonitor] = None

    def log(self, msg: str = "") -> None:
        self.out.write(msg + "\n")

    def warn(self, msg: str) -> None:
        self.err.write("WARNING: " + msg + "\n")

    def stop_monitor(self) -> None:
        if self.monitor is not None:
            self.monitor.stop()

    def execute(self) -> int:
        flags = self.flags
        self.use_gpu, gpu_why = gpu_choice_from_flags(flags)
        self.shapes = parse_input_layer_shapes(flags.input_layer, flags.input_layer_shape)
        self.log_parameters(gpu_why)
        if flags.report_peak_memory_footprint:
            self.monitor = MemoryMonitor(flags.memory_footprint_check_interval_ms).start()
        self.initialize()
        self.set_random_inputs()

        progress = _Progress(self.err)
        self.log_run_header(flags.warmup_runs, flags.warmup_min_secs)
        self.warmup = _run_loop(self.interp, flags.warmup_runs, flags.warmup_min_secs,
                                flags.max_secs, flags.run_delay, progress, "warmup")
        self.log(str(self.warmup))
        self.log()
        after_invoke = self.start_op_profiling()
        self.log_run_header(flags.num_runs, flags.min_secs)
        self.regular = _run_loop(self.interp, flags.num_runs, flags.min_secs, flags.max_secs,
                                 flags.run_delay, progress, "benchmark",
                                 after_invoke=after_invoke)
        self.log(str(self.regular))
        self.log()
        self.finish_op_profiling()

        self.log_timings()
        self.cpu_cmp = None
        if self.on_cl_cpu and flags.compare_cpu:
            self.cpu_cmp = _compare_cpu(flags, self.path, self.content, self.shapes,
                                        self.in_details, self.inf_avg, self.log, self.err)
        self.mem = self.memory_report()
        self.write_json()
        self.write_plot()
        return 0

    # ---------------------------------------------------------------- steps

    def log_parameters(self, gpu_why: Optional[str]) -> None:
        flags, log = self.flags, self.log
        log("STARTING!")
        log(f"Log parameter values verbosely: [{1 if flags.verbose else 0}]")
        if flags.verbose:
            for k, v in sorted(flags.as_dict().items()):
                log(f"{k}: [{v}]")
        else:
            log(f"Graph: [{flags.graph}]")
            if flags.num_threads > 0:
                log(f"Num threads: [{flags.num_threads}]")
            if flags.enable_op_profiling:
                log("Enable op profiling: [1]")
            if flags.report_peak_memory_footprint:
                log("Report the peak memory footprint: [1]")
            if flags.input_layer:
                log(f"Input layers: [{flags.input_layer}]")
                log(f"Input shapes: [{flags.input_layer_shape}]")
            if self.use_gpu:
                log("Use gpu: [1]")
            if flags.backend != "tflite_gpu":
                log(f"Backend: [{flags.backend}]")
        if flags.num_threads > 0:
            log(f"#threads used for CPU inference: [{flags.num_threads}]")
        if gpu_why:
            log(gpu_why)

    def initialize(self) -> None:
        """Load the model, build the interpreter (and delegate), resize and allocate:
        the timed 'Init'."""
        flags = self.flags
        # (a zoo: model is built here, outside the timed init; a file is read by the
        # interpreter, inside it, as benchmark_model does)
        self.path, self.content, self.size = _backend.load_model(flags.graph)
        t_init0 = time.perf_counter_ns()
        self.log(f"Loaded model {flags.graph}")
        interp = _backend.make_interpreter(
            model_path=self.path, model_content=self.content,
            num_threads=flags.num_threads if flags.num_threads > 0 else None,
            use_gpu=self.use_gpu, gpu_options=gpu_options_from_flags(flags),
            backend=flags.backend, warn=lambda m: self.err.write(m + "\n"))
        self.on_cl_cpu = False
        if self.use_gpu and flags.backend == "tflite_gpu":
            self.log("GPU delegate created.")
            dev_lines, self.on_cl_cpu = _backend.delegate_device_lines(interp)
            for line in dev_lines:
                self.log(line)
        apply_input_shapes(interp, self.shapes)
        fill_dynamic_dims(interp, skip=list(self.shapes))
        interp.allocate_tensors()
        t_init1 = time.perf_counter_ns()
        self.interp = interp
        self.init_us = (t_init1 - t_init0) // 1000
        self.init_mem_kb = peak_rss_kb()

        dlines, self.delegation = _delegation_lines(interp, self.use_gpu)
        for line in dlines:
            self.log(line)
        self.log(f"The input model file size (MB): {g6(self.size / (1024.0 * 1024.0))}")
        self.log(f"Initialized session in {g6(self.init_us / 1000.0)}ms.")

    def set_random_inputs(self) -> None:
        rng = np.random.default_rng(self.flags.seed)
        self.in_details = self.interp.get_input_details()
        for d, a in zip(self.in_details, random_inputs(self.in_details, rng)):
            self.interp.set_tensor(d["index"], a)

    def log_run_header(self, runs: int, secs: float) -> None:
        self.log(f"Running benchmark for at least {runs} iterations and at least "
                 f"{g6(secs)} seconds but terminate if exceeding {g6(self.flags.max_secs)} "
                 "seconds.")

    def _set_profiling(self, on: bool) -> None:
        setp = _backend.optional_hook(self.interp, "enable_profiling")
        if setp is not None:
            setp(on)

    def start_op_profiling(self):
        """--enable_op_profiling: turn the engine's profiler on; returns the per-run
        collector for the regular runs (None when not profiling)."""
        self.op_stats: Optional[OpStats] = None
        self.profile_note: Optional[str] = None
        if not self.flags.enable_op_profiling:
            return None
        get_profile = _backend.optional_hook(self.interp, "get_profile")
        if get_profile is None:
            self.profile_note = (f"Op profiling is not available with the "
                                 f"'{self.flags.backend}' backend (its interpreter has no "
                                 "get_profile()); no per-operator table.")
            return None
        self._set_profiling(True)
        self.op_stats = OpStats()
        return _profile_collector(self.op_stats, get_profile,
                                  _backend.node_names(self.interp))

    def finish_op_profiling(self) -> None:
        if self.op_stats is not None:
            self._set_profiling(False)
            csv_path = self.flags.profiling_output_csv_file
            if csv_path:
                with open(csv_path, "w") as f:
                    f.write(op_profile_csv(self.op_stats))
                self.log(f"Op profile written to {csv_path}")
            else:
                self.out.write(format_op_profile(self.op_stats))
        elif self.profile_note:
            self.warn(self.profile_note)

    def log_timings(self) -> None:
        warmup, regular = self.warmup, self.regular
        self.first_us = warmup.first if not warmup.empty() else regular.first
        warm_avg = warmup.avg() if not warmup.empty() else float("nan")
        self.inf_avg = regular.avg() if not regular.empty() else float("nan")
        self.log(f"Inference timings in us: Init: {self.init_us}, First inference: "
                 f"{self.first_us}, Warmup (avg): {g6(warm_avg)}, Inference (avg): "
                 f"{g6(self.inf_avg)}")

    def memory_report(self) -> Dict[str, Any]:
        """Peak-RSS deltas, the periodic monitor's peak and the engine's own figures."""
        overall_mem_kb = peak_rss_kb()
        mem: Dict[str, Any] = {}
        if (self.start_mem_kb is not None and self.init_mem_kb is not None
                and overall_mem_kb is not None):
            mem["init_mb"] = (self.init_mem_kb - self.start_mem_kb) / 1024.0
            mem["overall_mb"] = (overall_mem_kb - self.start_mem_kb) / 1024.0
            self.log("Note: as the benchmark tool itself affects memory footprint, the "
                     "following is only APPROXIMATE to the actual memory footprint of the "
                     "model at runtime. Take the information at your discretion.")
            self.log(f"Memory footprint delta from the start of the tool (MB): "
                     f"init={g6(mem['init_mb'])} overall={g6(mem['overall_mb'])}")
        if self.monitor is not None:
            monitor, self.monitor = self.monitor, None
            monitor.stop()
            if monitor.supported:
                mem["peak_mb"] = monitor.peak_mb
                self.log(f"Overall peak memory footprint (MB) via periodic monitoring: "
                         f"{g6(monitor.peak_mb)}")
            else:
                self.warn("periodic memory monitoring is not supported here "
                          "(no /proc/self/status).")
        self.engine_memory(mem)
        return mem

    def engine_memory(self, mem: Dict[str, Any]) -> None:
        """The engine's CPU tensor arena (arena_bytes(); LiteRT has none) into mem["engine"]."""
        arena_bytes = _backend.optional_hook(self.interp, "arena_bytes")
        if arena_bytes is None:
            return
        try:
            usage = {"cpu_arena_bytes": int(arena_bytes())}
        except Exception as e:
            self.warn(f"arena_bytes() failed: {e}")
            return
        mem["engine"] = usage
        self.log(f"CPU tensor arena (MB): {g6(usage['cpu_arena_bytes'] / 1048576.0)}")

    def result(self) -> Dict[str, Any]:
        flags = self.flags
        return {
            "model": flags.graph,
            "model_size_bytes": self.size,
            "backend": flags.backend,
            "use_gpu": self.use_gpu,
            "num_threads": flags.num_threads,
            "inputs": [{"name": d.get("name", ""), "shape": [int(x) for x in d["shape"]],
                        "dtype": np.dtype(d["dtype"]).name} for d in self.in_details],
            "init_us": self.init_us,
            "first_inference_us": self.first_us,
            "warmup": self.warmup.as_dict(),
            "inference": self.regular.as_dict(),
            "memory": self.mem,
            "delegation": self.delegation,
            "cpu_comparison": self.cpu_cmp,
            "op_profile": self.op_stats.as_list() if self.op_stats is not None else None,
            "flags": {k: v for k, v in flags.as_dict().items()},
        }

    def write_json(self) -> None:
        if not self.flags.json:
            return
        text = json.dumps(self.result(), indent=2, default=json_default)
        if self.flags.json == "-":
            sys.stdout.write(text + "\n")
        else:
            with open(self.flags.json, "w") as f:
                f.write(text + "\n")
            self.log(f"Results written as JSON to {self.flags.json}")

    def write_plot(self) -> None:
        flags = self.flags
        if not flags.plot:
            return
        msg = write_plot(flags.plot, self.warmup, self.regular,
                         f"{os.path.basename(flags.graph)} ({flags.backend}"
                         f"{', GPU' if self.use_gpu else ''})")
        if msg:
            self.warn(msg)
        else:
            self.log(f"Plot written to {flags.plot}")


def _compare_cpu(flags: Flags, path, content, shapes, in_details, delegate_avg_us: float,
                 log, err) -> Optional[Dict[str, Any]]:
    """The GPU delegate ran on an OpenCL CPU device: time the CPU kernels on the same inputs
    (a short run: 1 warmup, then up to num_runs runs or 2 s) and say how they compare."""
    try:
        interp = _backend.make_interpreter(
            model_path=path, model_content=content,
            num_threads=flags.num_threads if flags.num_threads > 0 else None,
            use_gpu=False, backend=flags.backend, warn=lambda m: err.write(m + "\n"))
        apply_input_shapes(interp, shapes)
        fill_dynamic_dims(interp, skip=list(shapes))
        interp.allocate_tensors()
        rng = np.random.default_rng(flags.seed)
        for d, a in zip(interp.get_input_details(), random_inputs(in_details, rng)):
            interp.set_tensor(d["index"], a)
        interp.invoke()
        times = []
        t_end = time.perf_counter() + 2.0
        while len(times) < max(1, flags.num_runs) and (not times or time.perf_counter() < t_end):
            t0 = time.perf_counter_ns()
            interp.invoke()
            times.append((time.perf_counter_ns() - t0) / 1000.0)
    except Exception as e:
        err.write(f"WARNING: the CPU-kernel comparison failed: {type(e).__name__}: {e}\n")
        return None
    cpu_avg = float(np.mean(times))
    ratio = delegate_avg_us / cpu_avg if cpu_avg > 0 else float("nan")
    log(f"CPU kernels (no delegate) on this machine: Inference (avg): {g6(cpu_avg)} us over "
        f"{len(times)} runs: {g6(ratio)}x the speed of the GPU delegate on this OpenCL CPU "
        "device (use --use_gpu=auto to pick the faster path).")
    return {"cpu_inference_avg_us": cpu_avg, "runs": len(times),
            "delegate_inference_avg_us": delegate_avg_us, "cpu_speedup": ratio}
