"""Where batch-1 GPU latency goes: host enqueue or device time (issue #11).

For each model and setting, the wall median of invoke and its *gated device time*: a spin
kernel (~1 ms) is queued first on the delegate's queue, so the host has enqueued the whole invoke
before the device reaches it; device = wall(spin + invoke) - wall(spin). When device ~ wall, the
invoke is device-bound (the host's enqueue cost is hidden behind the device), and the device time
per kernel bounds what fewer launches can save. The same gating on a chain of empty kernels gives
the device's cost of one dependent kernel launch on this driver (the floor per kernel).

  python3 -P benchmarks/gpu_b1_floor.py [--models v1,v2,face_detector_like,...] [--runs 100]
         [--rounds 2] [--fp16] [--cuda] [CONFIG ...]

A CONFIG is NAME=VAR:VALUE[,VAR:VALUE...] (environment variables set while that setting's
interpreter is built, e.g. tail=TFLITE_GPU_ENABLE_FUSION:tail); "default" is always measured
first. Rounds interleave the settings; each row also gives the output's largest difference from
the default setting's (fusion levers must not change results beyond rounding).
Each row splits the device time into the launch floor (kernels x the empty-kernel cost) and the
rest (compute). --cuda also measures the floor of the same GPU through CUDA (PyTorch, when it
is installed with a CUDA device): 30 tiny dependent kernels gated the same way behind
torch.cuda._sleep, on a stream and replayed as a CUDA graph -- what the OpenCL driver's floor
compares to.
The delegate runs on pyopencl's queue (the gate must share it), so on NVIDIA the rows measure the
OpenCL launch path, not the CUDA graph path the delegate takes on its own queue (README,
TFLITE_GPU_CUDA_GRAPH); benchmarks/gpu_compare.py times that one.
Needs pyopencl (tflite_gpu.pyopencl_queue) and a GPU; on PoCL it runs but measures the CPU.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

import tflite_gpu

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_compare import shared_queue  # noqa: E402
from gpu_env_sweep import model_of  # noqa: E402

SPIN_SRC = r"""
__kernel void spin(__global float* io, int iters) {
  float x = io[1];
  for (int i = 0; i < iters; ++i) x = x * 0.9999999f + 1e-7f;
  io[0] = x;
}
__kernel void empty(__global float* io) { if (get_global_id(0) > 1000000) io[0] = 1.0f; }
"""


def median_us(sync, fn, n):
    """Median wall microseconds of fn() over n runs, each between two sync() calls (the device idle)."""
    ts = []
    for _ in range(n):
        sync()
        t0 = time.perf_counter()
        fn()
        sync()
        ts.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(ts)


def cuda_floor(n=30, runs=50):
    """Per-kernel device cost of n tiny dependent CUDA kernels (PyTorch add_ on 64 floats) gated
    behind a ~1 ms torch.cuda._sleep: (stream us, graph us) per kernel, or None without CUDA."""
    try:
        import torch
        if not torch.cuda.is_available():
            return None
    except ImportError:
        return None
    x = torch.zeros(64, device="cuda")

    def med(fn):
        return median_us(torch.cuda.synchronize, fn, runs)

    def chain():
        for _ in range(n):
            x.add_(1.0)

    sleep = lambda: torch.cuda._sleep(2_000_000)  # noqa: E731  (cycles: ~1 ms)
    graph = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        chain()
        torch.cuda.synchronize()
        with torch.cuda.graph(graph):
            chain()
    torch.cuda.synchronize()
    s = med(sleep)
    stream_us = (med(lambda: (sleep(), chain())) - s) / n
    graph_us = (med(lambda: (sleep(), graph.replay())) - med(sleep)) / n
    return stream_us, graph_us


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="v1,v2")
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--fp16", action="store_true")
    ap.add_argument("--cuda", action="store_true", help="also the CUDA floor of the same GPU (PyTorch)")
    ap.add_argument("configs", nargs="*")
    a = ap.parse_args()
    configs = [("default", {})]
    for c in a.configs:
        name, _, spec = c.partition("=")
        env = {}
        for kv in filter(None, spec.split(",")):
            k, _, v = kv.partition(":")
            if not k.startswith("TFLITE_GPU_"):
                sys.exit(f"config {c!r}: {k!r} is not a TFLITE_GPU_ variable")
            env[k] = v
        configs.append((name, env))
    env_vars = {k for _, env in configs for k in env}

    cl, _, q = shared_queue()
    prg = cl.Program(q.context, SPIN_SRC).build()
    io = cl.Buffer(q.context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=np.ones(4, np.float32))
    spin, empty = cl.Kernel(prg, "spin"), cl.Kernel(prg, "empty")
    empty.set_args(io)
    launch = cl.enqueue_nd_range_kernel
    # Calibrate the spin to ~1 ms (longer than any invoke's enqueue here).
    spin.set_args(io, np.int32(100000))
    t = median_us(q.finish, lambda: launch(q, spin, (1,), (1,)), 10)
    spin.set_args(io, np.int32(max(1000, int(100000 * 1000.0 / max(t, 1.0)))))
    gate = lambda: launch(q, spin, (1,), (1,))  # noqa: E731
    s = median_us(q.finish, gate, 30)
    chain = median_us(q.finish, lambda: (gate(), [launch(q, empty, (64,), (64,)) for _ in range(30)]), 30) - s
    dev = q.device
    print(f"# {dev.name} ({dev.platform.name}, driver {dev.driver_version}); spin {s:.0f} us; 30 empty dependent "
          f"kernels behind it: {chain:.1f} us = {chain / 30:.2f} us of device time per kernel", flush=True)
    floor = chain / 30
    if a.cuda:
        c = cuda_floor()
        print("# CUDA on the same GPU: " + ("PyTorch with CUDA not available" if c is None else
              f"30 tiny dependent kernels behind torch.cuda._sleep: {c[0]:.2f} us per kernel on a stream, "
              f"{c[1]:.2f} us replayed as a CUDA graph"), flush=True)

    refs = {}
    for rnd in range(a.rounds):
        for name, env in configs:
            for k in env_vars:
                os.environ.pop(k, None)
            os.environ.update(env)
            for m in a.models.split(","):
                model = model_of(m, 1)
                d = tflite_gpu.GpuDelegate(tflite_gpu.GpuDelegateOptions(is_precision_loss_allowed=a.fp16, device=q))
                it = tflite_gpu.Interpreter(model_content=model, experimental_delegates=[d])
                it.allocate_tensors()
                rng = np.random.default_rng(0)
                for i in it.get_input_details():
                    it.set_tensor(i["index"], rng.standard_normal(i["shape"]).astype(np.float32))
                for _ in range(10):
                    it.invoke()
                inv = it.invoke
                wall = median_us(q.finish, inv, a.runs)
                s0 = median_us(q.finish, gate, 30)
                gated = median_us(q.finish, lambda: (gate(), inv()), a.runs)
                s1 = median_us(q.finish, gate, 30)
                device = gated - (s0 + s1) / 2
                y = it.get_tensor(it.get_output_details()[0]["index"]).copy()
                if name == "default":
                    refs[m] = y
                diff = float(np.abs(y - refs[m]).max()) if m in refs else float("nan")
                dp = tflite_gpu.GpuDelegate(tflite_gpu.GpuDelegateOptions(is_precision_loss_allowed=a.fp16,
                                                                           enable_profiling=True))
                itp = tflite_gpu.Interpreter(model_content=model, experimental_delegates=[dp])
                itp.allocate_tensors()
                for i in itp.get_input_details():
                    itp.set_tensor(i["index"], np.zeros(i["shape"], np.float32))
                itp.enable_profiling(True)
                itp.invoke()
                kernels = len(itp._core.gpu_kernel_times())
                print(f"round {rnd} {name:10s} {m:26s} wall {wall:7.1f} us | gated device {device:7.1f} us "
                      f"({device / max(kernels, 1):5.2f} us/kernel) | {kernels} kernels: floor {kernels * floor:5.1f} + "
                      f"rest {device - kernels * floor:5.1f} us | max|out - default| {diff:.1e}",
                      flush=True)


if __name__ == "__main__":
    main()
