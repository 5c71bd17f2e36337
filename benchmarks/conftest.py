"""Prints tflite_gpu / litert time ratios of benchmarks/bench_cpu.py at the end of the session."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    bs = getattr(config, "_benchmarksession", None)
    if bs is None or not getattr(bs, "benchmarks", None):
        return
    stats = {}
    for b in bs.benchmarks:
        info = b.extra_info or {}
        if "model" in info and "engine" in info and b.stats is not None:
            st = b.stats
            stats[(info["model"], info["engine"])] = (st.min, st.median)
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
