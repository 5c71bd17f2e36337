"""Bound OpenCL buffers (zero copy) vs host copies: MobileNet v1 through the GPU delegate with the
input uploaded from host memory on every invoke (batch 32 at 224: 19.3 MB), with the input bound
to an OpenCL buffer, and with input and output bound (GpuDelegate.bind_buffer_to_tensor,
set_allow_buffer_handle_output). Same delegate, context and queue for the three; prints the
median invoke time, the bytes the interpreter moved per invoke (GpuDelegate.transfer_stats) and
the ratios bound/host (lower is better).

    python benchmarks/bench_binding.py                       # MobileNet v1, batch 32, 224, fp32+fp16
    python benchmarks/bench_binding.py --batch 4 --size 128 --runs 5   # a quick run (PoCL)
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_compare import bound_line, run_tflite_gpu_bound  # noqa: E402

from tflite_gpu.testing import zoo  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--precisions", default="fp32,fp16")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    model = zoo.mobilenet_v1(input_size=a.size, batch=a.batch)
    rows = []
    for prec in a.precisions.split(","):
        r = run_tflite_gpu_bound(model, prec == "fp16", a.runs)
        rows.append(dict(model="mobilenet_v1", batch=a.batch, size=a.size, requested=prec, result=r))
        print(bound_line(f"mobilenet_v1 {a.size} b{a.batch} {prec}", r), flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
