"""Per-kernel sweep of one TFLITE_GPU_* setting on the GPU delegate: for each model, precision and
value of the variable (interleaved rounds in one process), the wall median of invoke and each
kernel's profiled time, printed as one row per kernel (kernel name under each value, as the
generator's choice may differ) -- to read which tile wins on which layer.

  python3 -P benchmarks/gpu_env_sweep.py VAR "v1,v2" "fp32,fp16" val1 val2 ...   ("-" = unset)
  env SWEEP_RUNS (default 30), SWEEP_ROUNDS (default 2), SWEEP_BATCH (default 1)

Settings common to every value go in the environment of the command itself (e.g.
TFLITE_GPU_DISABLE_FUSION=dwpw to compare 1x1 tiles on unfused layers).

SWEEP_CUPTI=1 (NVIDIA, with PyTorch's CUDA build): each kernel's time is its device time inside
the CUDA graph the delegate replays (cuda_graph.h), read from CUPTI through torch.profiler over 20
invokes of the plain (non-profiling) interpreter, instead of OpenCL's profiling events, which time
the OpenCL launches (~7 us each more than the graph's kernels take). Kernels are matched by
position with the profiled run's names. The split-K small-layer estimate, the depthwise row
target and the dwpw default under CUDA graphs came from such tables on an H100
(results_h100_kernel_times.txt).
"""
import json
import os
import sys
import tempfile
import time

import numpy as np

import tflite_gpu
from tflite_gpu.testing import zoo


def model_of(name, batch):
    fn = {"v1": zoo.mobilenet_v1, "v2": zoo.mobilenet_v2}.get(name)
    return fn(batch=batch) if fn else (zoo.ZOO[name]() if name in zoo.ZOO else getattr(zoo, name)())


def kernel_medians(events, invokes, n_kernels):
    """Median duration (us) of each of n_kernels kernels over `invokes` consecutive invokes, from
    a Chrome trace's events (kernels in start order, n_kernels per invoke)."""
    ev = sorted((e for e in events if e.get("cat") == "kernel"), key=lambda e: e["ts"])
    if len(ev) != invokes * n_kernels:
        raise RuntimeError(f"CUPTI recorded {len(ev)} kernels in {invokes} invokes, expected {n_kernels} per invoke "
                           "(is the CUDA graph path on? info()['cuda_graph_refused'] says why not)")
    return [float(np.median([ev[r * n_kernels + k]["dur"] for r in range(invokes)])) for k in range(n_kernels)]


def cupti_kernel_us(it, n_kernels, invokes=20):
    """Each kernel's device time (us) in it's invokes, from CUPTI through torch.profiler."""
    import torch
    from torch.profiler import ProfilerActivity, profile
    torch.zeros(1, device="cuda")  # PyTorch's CUDA state before the profiler starts
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        for _ in range(invokes):
            it.invoke()
            time.sleep(0.0003)
    with tempfile.TemporaryDirectory() as d:
        fn = os.path.join(d, "trace.json")
        p.export_chrome_trace(fn)
        with open(fn) as f:
            events = json.load(f)["traceEvents"]
    return kernel_medians(events, invokes, n_kernels)


def measure(model, fp16, runs):
    d = tflite_gpu.GpuDelegate(tflite_gpu.GpuDelegateOptions(is_precision_loss_allowed=fp16))
    it = tflite_gpu.Interpreter(model_content=model, experimental_delegates=[d])
    it.allocate_tensors()
    rng = np.random.default_rng(0)
    xs = [(i["index"], rng.standard_normal(i["shape"]).astype(np.float32)) for i in it.get_input_details()]
    for i, x in xs:
        it.set_tensor(i, x)
    for _ in range(5):
        it.invoke()
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter()
        it.invoke()
        ts.append(time.perf_counter() - t0)
    dp = tflite_gpu.GpuDelegate(tflite_gpu.GpuDelegateOptions(is_precision_loss_allowed=fp16, enable_profiling=True))
    itp = tflite_gpu.Interpreter(model_content=model, experimental_delegates=[dp])
    itp.allocate_tensors()
    for i, x in xs:
        itp.set_tensor(i, x)
    itp.enable_profiling(True)
    prof = []
    for _ in range(3):
        itp.invoke()
        prof.append(itp._core.gpu_kernel_times())
    ks = prof[-1]
    if os.environ.get("SWEEP_CUPTI") == "1":
        us = cupti_kernel_us(it, len(ks))
    else:
        us = [float(np.median([p[j]["us"] for p in prof])) for j in range(len(ks))]
    return float(np.median(ts)) * 1e3, [(k["kernel"], k["name"]) for k in ks], us


def main():
    var, models, precs, vals = sys.argv[1], sys.argv[2].split(","), sys.argv[3].split(","), sys.argv[4:]
    runs = int(os.environ.get("SWEEP_RUNS", "30"))
    rounds = int(os.environ.get("SWEEP_ROUNDS", "2"))
    batch = int(os.environ.get("SWEEP_BATCH", "1"))
    for m in models:
        model = model_of(m, batch)
        for p in precs:
            res = {}
            for _ in range(rounds):
                for v in vals:
                    if v == "-":
                        os.environ.pop(var, None)
                    else:
                        os.environ[var] = v
                    res.setdefault(v, []).append(measure(model, p == "fp16", runs))
            os.environ.pop(var, None)
            src = "CUPTI (CUDA graph)" if os.environ.get("SWEEP_CUPTI") == "1" else "profiled"
            print(f"== {m} b{batch} {p} {var}: wall ms (best round median) / sum of {src} kernel us", flush=True)
            for v in vals:
                walls = [r[0] for r in res[v]]
                print(f"  {v:>18}: wall {min(walls):.3f} ms {[round(w, 3) for w in walls]}, "
                      f"{len(res[v][-1][1])} kernels, {src} sum {sum(res[v][-1][2]):.1f} us")
            base = res[vals[0]][-1]
            n = len(base[1])
            if all(len(res[v][-1][1]) == n for v in vals):
                print("  kernel".ljust(30) + "".join(f"{v[:14]:>15}" for v in vals))
                for j in range(n):
                    row = f"  {j:2d} {base[1][j][1][:25]:25}"
                    row += "".join(f"{min(r[2][j] for r in res[v]):15.2f}" for v in vals)
                    names = sorted({res[v][-1][1][j][0] for v in vals})
                    if len(names) > 1 or "_" in names[0]:
                        row += "   " + " | ".join(res[v][-1][1][j][0].replace("conv2d_", "") for v in vals)
                    print(row, flush=True)


if __name__ == "__main__":
    main()
