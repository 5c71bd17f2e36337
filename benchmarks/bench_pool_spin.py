"""Thread-pool wake-up A/B (issue #14): the same build, interpreters differing only in
TFLITE_GPU_SPIN_US (how long idle workers spin before blocking; read when the pool starts), timed
in interleaved rounds, median ms per invoke and the ratio to the first setting.

    python benchmarks/bench_pool_spin.py --spins 0 200 --threads 2 [--models ...]
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

import tflite_gpu
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_speed import FLOAT_MODELS  # noqa: E402


def make(model, spin, threads):
    os.environ["TFLITE_GPU_SPIN_US"] = str(spin)
    try:
        it = tflite_gpu.Interpreter(model_content=model, num_threads=threads)
    finally:
        del os.environ["TFLITE_GPU_SPIN_US"]
    it.allocate_tensors()
    rng = np.random.default_rng(0)
    for d in it.get_input_details():
        it.set_tensor(d["index"], rng.standard_normal(d["shape"]).astype(d["dtype"]))
    it.invoke()
    return it


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", nargs="*")
    ap.add_argument("--spins", nargs="+", type=int, default=[0, 200])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--invokes", type=int, default=5)
    a = ap.parse_args()
    print(f"load {os.getloadavg()}, threads {a.threads}, spins (us) {a.spins}")
    for n in a.models or list(FLOAT_MODELS):
        m = FLOAT_MODELS[n]()
        its = [(s, make(m, s, a.threads)) for s in a.spins]
        ts = {s: [] for s in a.spins}
        for r in range(a.rounds):
            for s, it in (its if r % 2 == 0 else its[::-1]):
                t = time.perf_counter()
                for _ in range(a.invokes):
                    it.invoke()
                ts[s].append((time.perf_counter() - t) / a.invokes)
        md = {s: statistics.median(v) * 1e3 for s, v in ts.items()}
        base = md[a.spins[0]]
        print(f"{n:26s} " + " ".join(f"spin{s}={v:7.3f} ({v / base:.3f})" for s, v in md.items()), flush=True)
    print(f"load after {os.getloadavg()}")


if __name__ == "__main__":
    main()
