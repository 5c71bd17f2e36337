"""Prints tflite_gpu / litert time ratios of benchmarks/bench_cpu.py at the end of the session,
with the conditions (CPU count, load average: the numbers are only comparable on a quiet machine)."""
import os


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    bs = getattr(config, "_benchmarksession", None)
    if bs is None or not getattr(bs, "benchmarks", None):
        return
    stats = {}
    for b in bs.benchmarks:
        info = b.extra_info or {}
        if info.get("suite") == "bench_cpu" and b.stats is not None:
            stats[(info["model"], info["engine"])] = (b.stats.min, b.stats.median)
    models = sorted({m for m, _ in stats})
    if not models:
        return
    tr = terminalreporter
    tr.write_sep("-", "tflite_gpu / litert (XNNPACK) time ratio, num_threads=2 (lower is better)")
    for m in models:
        a, b = stats.get((m, "tflite_gpu")), stats.get((m, "litert"))
        if not a or not b:
            continue
        tr.write_line(f"mobilenet_{m}: min {a[0] * 1e3:.2f} ms vs {b[0] * 1e3:.2f} ms -> ratio {a[0] / b[0]:.2f}; "
                      f"median {a[1] * 1e3:.2f} ms vs {b[1] * 1e3:.2f} ms -> ratio {a[1] / b[1]:.2f}")
    try:
        load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        load = "n/a"
    tr.write_line(f"conditions: {os.cpu_count()} CPUs, load average {load}")
