"""benchmarks/compare_table.py on a hand-written pytest-benchmark JSON."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
import compare_table  # noqa: E402


def test_table_ratios(tmp_path):
    def b(model, engine, median):
        return {"extra_info": {"model": model, "engine": engine}, "stats": {"median": median}}
    data = {"benchmarks": [b("m1", "litert", 0.010), b("m1", "ours", 0.005), b("m2", "litert", 0.002),
                           b("m2", "ours", 0.006), {"extra_info": {}, "stats": {"median": 1}}]}
    p = tmp_path / "x.json"
    p.write_text(json.dumps(data))
    out = compare_table.table(str(p), "litert")
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["model", "litert", "(ms)"]
    m1 = [ln for ln in lines if ln.startswith("m1")][0].split()
    m2 = [ln for ln in lines if ln.startswith("m2")][0].split()
    assert m1 == ["m1", "10.000", "5.000", "0.50"]
    assert m2 == ["m2", "2.000", "6.000", "3.00"]
