"""benchmarks/gpu_env_sweep.py's CUPTI mode on a hand-written trace: kernels taken in start order,
matched by position across invokes, medians per position, a wrong count refused."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
import gpu_env_sweep  # noqa: E402


def test_kernel_medians_by_position():
    # 3 invokes of 2 kernels, listed out of order, with non-kernel events between them.
    durs = [(10.0, 1.0), (30.0, 2.0), (20.0, 9.0)]
    events = [{"cat": "cuda_runtime", "ts": 0, "dur": 99}]
    for r, (a, b) in enumerate(durs):
        events.append({"cat": "kernel", "ts": 100 * r + 50, "dur": b})
        events.append({"cat": "kernel", "ts": 100 * r, "dur": a})
    assert gpu_env_sweep.kernel_medians(events, 3, 2) == [20.0, 2.0]


def test_kernel_medians_refuses_a_wrong_count():
    events = [{"cat": "kernel", "ts": t, "dur": 1.0} for t in range(5)]
    with pytest.raises(RuntimeError, match="5 kernels in 3 invokes, expected 2"):
        gpu_env_sweep.kernel_medians(events, 3, 2)
