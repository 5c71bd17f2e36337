"""Per-kernel sweep of one TFLITE_GPU_* setting on the GPU delegate: for each model, precision and
value of the variable (interleaved rounds in one process), the wall median of invoke and each
kernel's profiled time, printed as one row per kernel (kernel name under each value, as the
generator's choice may differ) -- to read which tile wins on which layer.

  python3 -P benchmarks/gpu_env_sweep.py VAR "v1,v2" "fp32,fp16" val1 val2 ...   ("-" = unset)
  env SWEEP_RUNS (default 30), SWEEP_ROUNDS (default 2), SWEEP_BATCH (default 1)
"""
import os
import sys
import time

import numpy as np

import tflite_gpu
from tflite_gpu.testing import zoo


def model_of(name, batch):
    fn = {"v1": zoo.mobilenet_v1, "v2": zoo.mobilenet_v2}.get(name)
    return fn(batch=batch) if fn else (zoo.ZOO[name]() if name in zoo.ZOO else getattr(zoo, name)())


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
            print(f"== {m} b{batch} {p} {var}: wall ms (best round median) / sum of profiled kernel us", flush=True)
            for v in vals:
                walls = [r[0] for r in res[v]]
                print(f"  {v:>18}: wall {min(walls):.3f} ms {[round(w, 3) for w in walls]}, "
                      f"{len(res[v][-1][1])} kernels, profiled sum {sum(res[v][-1][2]):.1f} us")
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
