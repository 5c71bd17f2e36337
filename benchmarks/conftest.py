"""Prints tflite_gpu / litert time ratios of benchmarks/bench_cpu.py at the end of the session,
with the conditions (CPU count, load average: the numbers are only comparable on a quiet machine)."""
import os

# pytest-benchmark suites of int8 runs (extra_info suite) -> the heading of their ratio table.
QUANT_SUITES = {
    "bench_quant_conv": "int8 conv family: tflite_gpu / litert (XNNPACK int8) time ratio (lower is better)",
    "bench_quant": "int8 MobileNets (zoo mobilenet_v{1,2}_int8): tflite_gpu CPU / litert (XNNPACK int8) time ratio "
                   "(lower is better)",
}


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    bs = getattr(config, "_benchmarksession", None)
    if bs is None or not getattr(bs, "benchmarks", None):
        return
    stats = {}
    qstats = {}
    for b in bs.benchmarks:
        info = b.extra_info or {}
        if info.get("suite") == "bench_cpu" and b.stats is not None:
            stats[(info["model"], info["engine"])] = (b.stats.min, b.stats.median)
        elif info.get("suite") in QUANT_SUITES and b.stats is not None:
            qstats.setdefault(info["suite"], {})[(info["model"], info["num_threads"], info["engine"])] = \
                (b.stats.min, b.stats.median)
    tr = terminalreporter
    for suite, st in sorted(qstats.items()):
        tr.write_sep("-", QUANT_SUITES[suite])
        for m, t in sorted({(m, t) for m, t, _ in st}):
            a, b = st.get((m, t, "tflite_gpu")), st.get((m, t, "litert"))
            if a and b:
                tr.write_line(f"{m} threads={t}: min {a[0] * 1e3:.2f} ms vs {b[0] * 1e3:.2f} ms -> ratio {a[0] / b[0]:.2f}; "
                              f"median {a[1] * 1e3:.2f} ms vs {b[1] * 1e3:.2f} ms -> ratio {a[1] / b[1]:.2f}")
    models = sorted({m for m, _ in stats})
    if not models and not qstats:
        return
    if models:
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
