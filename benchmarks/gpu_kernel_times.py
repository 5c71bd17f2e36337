"""Per-kernel device times of the CUDA graph launch path (issue #11), for tuning kernel choices.

On NVIDIA a partition's kernels replay as one CUDA graph (csrc/gpu/cuda_graph.h), where OpenCL's
profiling events no longer apply (they time the OpenCL launches, ~7 us each more). This tool reads
each graph kernel's duration from CUPTI through torch.profiler (PyTorch's CUDA build; the graph
kernels are recorded like any other), matches them by position with the kernel labels of an
OpenCL-profiled run of the same model, and prints a table: one row per kernel, one column per
environment setting, each the median over 20 invokes. Settings are read when the delegate is
built, so one process compares them (each gets its own interpreter). The last block keeps the
settings whose kernel count equals the "nodw" setting's (or the base's) and gives each row's best.

  python3 -P benchmarks/gpu_kernel_times.py v1,v2 "nodw:TFLITE_GPU_DISABLE_FUSION=dwpw;k16x4:TFLITE_GPU_DISABLE_FUSION=dwpw,TFLITE_GPU_CONV_SPLITK=16x4x4x2x0x2x1"

FP16=1 runs fp16 storage. Run on an NVIDIA GPU with torch (CUDA) installed; the ChooseSplitKSmall
estimate (conv_common_gpu.cc), the depthwise row target (conv_common_gpu.h) and the dwpw default
under CUDA graphs (partition_model.cc) came from its tables on an H100 (2026-11-27).
"""
import os, sys, json, statistics, time
import numpy as np, torch, tflite_gpu
from torch.profiler import profile, ProfilerActivity
from tflite_gpu.testing import zoo
sys.path.insert(0, "benchmarks")
import gpu_compare as gc
MODELS = sys.argv[1].split(",")
CFGS = [("base", {})]
for c in sys.argv[2].split(";"):
    if not c: continue
    n, kv = c.split(":", 1)
    CFGS.append((n, dict(x.split("=", 1) for x in kv.split(",") if x)))
FP16 = os.environ.get("FP16", "0") == "1"
torch.zeros(1, device="cuda")
def model(m):
    if m == "v1": return zoo.mobilenet_v1()
    if m == "v2": return zoo.mobilenet_v2()
    return zoo.ZOO[m]()
def interp(mm, env):
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    d = tflite_gpu.GpuDelegate(tflite_gpu.GpuDelegateOptions(is_precision_loss_allowed=FP16))
    it = tflite_gpu.Interpreter(model_content=mm, experimental_delegates=[d]); it.allocate_tensors()
    for k, v in saved.items():
        if v is None: os.environ.pop(k, None)
        else: os.environ[k] = v
    rng = np.random.default_rng(0)
    for i in it.get_input_details(): it.set_tensor(i["index"], rng.standard_normal(i["shape"]).astype(np.float32))
    for _ in range(10): it.invoke()
    return it, d
N = 20
for m in MODELS:
    mm = model(m)
    cols = {}
    for name, env in CFGS:
        it, d = interp(mm, env)
        with profile(activities=[ProfilerActivity.CUDA]) as p:
            for _ in range(N): it.invoke(); time.sleep(0.0003)
        fn = f"/tmp/trace_{m}_{name}.json"; p.export_chrome_trace(fn)
        ev = sorted([e for e in json.load(open(fn))["traceEvents"] if e.get("cat") == "kernel"], key=lambda e: e["ts"])
        K = len(ev) // N
        durs = [statistics.median(ev[r * K + k]["dur"] for r in range(N)) for k in range(K)]
        wall = statistics.median([gc.timeit(it.invoke, 100)[0] for _ in range(3)]) * 1e3
        out = it.get_tensor(it.get_output_details()[0]["index"]).copy()
        cols[name] = (durs, wall, [f"{e['args'].get('grid')}{e['args'].get('block')}" for e in ev[:K]], out)
        del it, d
    base = cols["base"]
    ref = cols.get("nodw", base)
    print(f"== {m}: wall " + " ".join(f"{n}={c[1]:.1f}" for n, c in cols.items()) + " | sum " + " ".join(f"{n}={sum(c[0]):.1f}" for n, c in cols.items()) + " | K " + " ".join(f"{n}={len(c[0])}" for n, c in cols.items()))
    print(" maxdiff vs base: " + " ".join(f"{n}={float(np.max(np.abs(c[3]-base[3]))):.2e}" for n, c in cols.items()))
    names = [n for n, _ in CFGS]
    print("  k  " + " ".join(f"{n[:9]:>9s}" for n in names))
    for k in range(len(base[0])):
        row = []
        for n in names:
            c = cols[n]
            row.append(f"{c[0][k]:9.2f}" if len(c[0]) == len(base[0]) else "        -")
        print(f"  {k:2d} " + " ".join(row) + "  " + base[2][k])
    print("  rows of the configs with nodw's kernel count:")
    same = [n for n in names if len(cols[n][0]) == len(ref[0])]
    print("  k  " + " ".join(f"{n[:9]:>9s}" for n in same))
    best_sum = 0
    for k in range(len(ref[0])):
        vals = [cols[n][0][k] for n in same]
        best_sum += min(vals)
        print(f"  {k:2d} " + " ".join(f"{v:9.2f}" for v in vals) + f"  best {same[vals.index(min(vals))]} {ref[2][k]}")
    print(f"  sum of per-layer best {best_sum:.1f} vs nodw {sum(ref[0]):.1f}")
