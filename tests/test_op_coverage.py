"""The "missing ops" test: our op table against the builtin ops that LiteRT's BUILTIN resolver
registers (tests/data/litert_builtin_ops.txt, written by scripts/litert_builtin_ops.py from the
installed ai-edge-litert, STABLEHLO_* left out; TF Flex ops are custom ops and never listed).

For every LiteRT builtin op our table must have a row with the same builtin code and a max version
at least LiteRT's highest, unless the op is in PENDING below. PENDING may only shrink: the test
fails when an op in it is now fully in the table, so whoever adds an op removes its line.
"""
import os
import subprocess
import sys

import pytest

import tflite_gpu

HERE = os.path.dirname(os.path.abspath(__file__))
LIST = os.path.join(HERE, "data", "litert_builtin_ops.txt")

# Ops (name: LiteRT's highest version) our table lacks or supports only up to a lower version.
# ==> OP HELPERS: when you add an op (or raise its max version to LiteRT's), REMOVE ITS LINE HERE
# ==> in the same commit; test_pending_list_only_shrinks fails until you do.
PENDING = {}


def _litert_ops():
    ops = {}
    with open(LIST) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            code, name, versions = line.split()
            ops[name] = (int(code), [int(v) for v in versions.split(",")])
    return ops


def _our_builtins():
    return {o["name"]: o for o in tflite_gpu.supported_ops() if o["custom_code"] is None}


def _lacking():
    ours = _our_builtins()
    out = {}
    for name, (code, versions) in _litert_ops().items():
        have = ours[name]["max_version"] if name in ours else 0
        if have < max(versions):
            out[name] = (max(versions), have)
    return out


def test_checked_in_list_matches_installed_litert():
    pytest.importorskip("ai_edge_litert")
    r = subprocess.run([sys.executable, os.path.join(HERE, "..", "scripts", "litert_builtin_ops.py"), "--check"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


def test_missing_ops_are_pending():
    lacking = _lacking()
    print(f"\nLiteRT builtin ops: {len(_litert_ops())}; fully in our table: "
          f"{len(_litert_ops()) - len(lacking)}; lacking: {len(lacking)}")
    for name, (want, have) in sorted(lacking.items(), key=lambda kv: _litert_ops()[kv[0]][0]):
        print(f"  {name}: LiteRT up to v{want}, ours " + (f"up to v{have}" if have else "missing"))
    unexpected = {n: v for n, v in lacking.items() if n not in PENDING or PENDING[n] != v[0]}
    assert not unexpected, f"ops LiteRT registers that the table lacks and PENDING does not list: {unexpected}"


def test_pending_list_only_shrinks():
    lacking = _lacking()
    done = sorted(n for n in PENDING if n not in lacking)
    assert not done, f"now in the op table: remove {done} from PENDING in tests/test_op_coverage.py"


def test_table_rows_agree_with_litert():
    litert = _litert_ops()
    for name, o in _our_builtins().items():
        assert name in litert, f"{name} is not a builtin op of LiteRT's resolver"
        code, versions = litert[name]
        assert o["builtin_code"] == code, f"{name}: builtin code {o['builtin_code']}, LiteRT's is {code}"
        assert o["max_version"] <= max(versions), \
            f"{name}: table claims version {o['max_version']}, LiteRT registers up to {max(versions)}"
