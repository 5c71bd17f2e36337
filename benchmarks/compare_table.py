"""Turns a pytest-benchmark JSON (benchmarks/bench_zoo.py, bench_cpu.py) into a comparison
table: median time per engine and the ratio of each engine to the baseline engine.

    python benchmarks/compare_table.py zoo.json [--baseline litert]
"""
import argparse
import json
import sys
from collections import defaultdict


def table(path, baseline):
    with open(path) as f:
        data = json.load(f)
    times = defaultdict(dict)
    extra = {}
    for b in data["benchmarks"]:
        info = b.get("extra_info", {})
        model, engine = info.get("model"), info.get("engine")
        if model is None or engine is None:
            continue
        times[model][engine] = b["stats"]["median"] * 1e3
        extra[(model, engine)] = info
    engines = sorted({e for m in times.values() for e in m}, key=lambda e: (e != baseline, e))
    head = ["model"] + [f"{e} (ms)" for e in engines] + [f"{e}/{baseline}" for e in engines if e != baseline]
    rows = [head]
    for model in sorted(times):
        t = times[model]
        row = [model] + [f"{t[e]:.3f}" if e in t else "-" for e in engines]
        for e in engines:
            if e == baseline:
                continue
            row.append(f"{t[e] / t[baseline]:.2f}" if e in t and baseline in t else "-")
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("json")
    ap.add_argument("--baseline", default="litert")
    a = ap.parse_args(argv)
    print(table(a.json, a.baseline))
    return 0


if __name__ == "__main__":
    sys.exit(main())
