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
    rows, summary = [], []
    for prec in a.precisions.split(","):
        r = run_tflite_gpu_bound(model, prec == "fp16", a.runs)
        rows.append(dict(model="mobilenet_v1", batch=a.batch, size=a.size, requested=prec, result=r))
        print(bound_line(f"mobilenet_v1 {a.size} b{a.batch} {prec}", r), flush=True)
        if "skipped" not in r:
            # images per second from the median invoke; ratios > 1: bound is faster
            ips = {k: a.batch / (r[f"{k}_ms"] / 1e3) for k in ("host", "bound_input", "bound_io")}
            summary.append(f"{prec} ({r['precision']}) img/s host {ips['host']:.1f}, bound in {ips['bound_input']:.1f} "
                           f"(x{ips['bound_input'] / ips['host']:.2f}), bound in+out {ips['bound_io']:.1f} "
                           f"(x{ips['bound_io'] / ips['host']:.2f}); MB up/down per invoke host "
                           f"{r['host_transfers']['host_to_device_bytes'] / 1e6:.1f}/"
                           f"{r['host_transfers']['device_to_host_bytes'] / 1e6:.2f}, bound in+out "
                           f"{r['bound_io_transfers']['host_to_device_bytes'] / 1e6:.1f}/"
                           f"{r['bound_io_transfers']['device_to_host_bytes'] / 1e6:.2f}; "
                           f"max|bound-host| {r['max_abs_diff_vs_host']:.1e}")
    if summary:
        dev = next(r["result"]["device"] for r in rows if "skipped" not in r["result"])
        print(f"SUMMARY binding [{dev}] mobilenet_v1 {a.size} b{a.batch}, median of {a.runs}: " + " | ".join(summary))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
