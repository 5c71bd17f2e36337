"""A/B of the float conv work split (issue #14): TFLITE_GPU_CPU_SPLIT=affine (default: each thread
its own contiguous share of the output rows, the same in every op) vs =dynamic (tasks in any order,
small-K GEMMs also split over output channels). The variable is read once per process, so each
round runs one child process per variant, alternating which goes first; per model and thread count
the median over rounds of each child's median invoke time.

    python benchmarks/bench_split_ab.py --models mobilenet_v2 palm_detection_like --rounds 5
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

# bench_speed's interpreter setup (ready: seeded inputs, 2 invokes), 1 more warm-up invoke, then
# gpu_compare's median timing; the median in seconds per model and thread count.
CHILD = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from bench_speed import FLOAT_MODELS, make, ready
from gpu_compare import timeit
out = {}
for name in sys.argv[2].split(","):
    model = FLOAT_MODELS[name]()
    for t in [int(v) for v in sys.argv[3].split(",")]:
        it = ready(make("ours", model, t))
        out[f"{name} {t}"] = timeit(it.invoke, int(sys.argv[4]), warmup=1)[0] / 1e3
print(json.dumps(out))
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", nargs="*", default=["mobilenet_v2", "palm_detection_like", "hand_landmark_like",
                                                     "pose_landmark_like"])
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--invokes", type=int, default=40)
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    res = {"affine": {}, "dynamic": {}}
    print(f"load average {' / '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    for r in range(a.rounds):
        order = ("affine", "dynamic") if r % 2 == 0 else ("dynamic", "affine")
        for v in order:
            env = dict(os.environ, TFLITE_GPU_CPU_SPLIT=v)
            p = subprocess.run([sys.executable, "-P", "-c", CHILD, here, ",".join(a.models), a.threads,
                                str(a.invokes)], env=env, capture_output=True, text=True)
            if p.returncode != 0:
                print(p.stderr[-2000:])
                return 1
            for k, s in json.loads(p.stdout.strip().splitlines()[-1]).items():
                res[v].setdefault(k, []).append(s)
    print(f"{'model thr':34s} {'affine ms':>10s} {'dynamic ms':>10s} affine/dynamic")
    for k in res["affine"]:
        x, y = statistics.median(res["affine"][k]), statistics.median(res["dynamic"][k])
        print(f"{k:34s} {x * 1e3:10.3f} {y * 1e3:10.3f} {x / y:8.3f}")
    print(f"load average after {' / '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
