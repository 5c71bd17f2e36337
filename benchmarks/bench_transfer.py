"""Host<->device transfer modes on the GPU delegate's OpenCL device (issue #11, host path), and the
delegate's plain set_tensor/invoke/get_tensor path with its boundary tensors in pinned host memory
or in the arena (TFLITE_GPU_PINNED_HOST=1/0, interleaved in one process).

Raw OpenCL (pyopencl, on the device a default GpuDelegate picks), median ms and GB/s per size:
  h2d pageable      clEnqueueWriteBuffer from numpy (malloc'd, pageable) memory
  h2d pinned        clEnqueueWriteBuffer from a mapped CL_MEM_ALLOC_HOST_PTR buffer's pointer
                    (what the delegate does now)
  h2d copybuf       clEnqueueCopyBuffer from an (unmapped) CL_MEM_ALLOC_HOST_PTR buffer
  h2d unmap+copy+map  the same with the unmap/map a persistently mapped tensor would need per invoke
  d2h pageable / pinned / copybuf   the reverse
  memcpy to pageable / pinned       the host copy set_tensor makes (numpy -> tensor memory)

    python benchmarks/bench_transfer.py                 # sizes of MobileNet v1 b1 / b32 input, b32 output
    python benchmarks/bench_transfer.py --e2e v1:32,v1:1 --runs 50
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tflite_gpu  # noqa: E402
from gpu_compare import timeit  # noqa: E402


def med(fn, runs, warmup=3):
    """Median ms of fn over runs calls (gpu_compare.timeit), after warmup calls."""
    return timeit(fn, runs, warmup)[0]


def raw_modes(nbytes, runs):
    import pyopencl as cl
    q = tflite_gpu.pyopencl_queue()
    ctx = q.context
    mf = cl.mem_flags
    n = nbytes // 4
    dev = cl.Buffer(ctx, mf.READ_WRITE, nbytes)
    page = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    page_out = np.empty_like(page)
    pin_buf = cl.Buffer(ctx, mf.READ_WRITE | mf.ALLOC_HOST_PTR, nbytes)
    pin, _ = cl.enqueue_map_buffer(q, pin_buf, cl.map_flags.READ | cl.map_flags.WRITE, 0, (n,), np.float32)
    pin[:] = page
    host_buf = cl.Buffer(ctx, mf.READ_WRITE | mf.ALLOC_HOST_PTR, nbytes)  # left unmapped
    cyc_buf = cl.Buffer(ctx, mf.READ_WRITE | mf.ALLOC_HOST_PTR, nbytes)
    state = {}
    state["arr"], _ = cl.enqueue_map_buffer(q, cyc_buf, cl.map_flags.READ | cl.map_flags.WRITE, 0, (n,), np.float32)

    def cycle():
        state["arr"].base.release(q)
        cl.enqueue_copy(q, dev, cyc_buf, byte_count=nbytes)
        state["arr"], _ = cl.enqueue_map_buffer(q, cyc_buf, cl.map_flags.READ | cl.map_flags.WRITE, 0, (n,),
                                                np.float32, is_blocking=True)

    def fin(f):
        def g():
            f()
            q.finish()
        return g
    modes = {
        "h2d pageable": fin(lambda: cl.enqueue_copy(q, dev, page, is_blocking=False)),
        "h2d pinned": fin(lambda: cl.enqueue_copy(q, dev, pin, is_blocking=False)),
        "h2d copybuf": fin(lambda: cl.enqueue_copy(q, dev, host_buf, byte_count=nbytes)),
        "h2d unmap+copy+map": fin(cycle),
        "d2h pageable": fin(lambda: cl.enqueue_copy(q, page_out, dev, is_blocking=False)),
        "d2h pinned": fin(lambda: cl.enqueue_copy(q, pin, dev, is_blocking=False)),
        "d2h copybuf": fin(lambda: cl.enqueue_copy(q, host_buf, dev, byte_count=nbytes)),
        "memcpy to pageable": lambda: np.copyto(page_out, page),
        "memcpy to pinned": lambda: np.copyto(pin, page),
    }
    out = {}
    for rnd in range(2):  # interleaved twice, best median kept
        for k, f in modes.items():
            t = med(f, runs)
            out[k] = min(out.get(k, 1e9), t)
    ok = bool(np.array_equal(pin, page))
    return out, q.device.name, ok


def e2e(spec, runs):
    """set_tensor + invoke + get_tensor of a zoo model, pinned on/off interleaved (2 rounds)."""
    from tflite_gpu.testing import zoo
    name, batch = spec.split(":")
    batch = int(batch)
    model = {"v1": zoo.mobilenet_v1, "v2": zoo.mobilenet_v2}[name](batch=batch)
    res, outs = {}, {}
    for rnd in range(2):
        for v in ("0", "1"):
            os.environ["TFLITE_GPU_PINNED_HOST"] = v
            d = tflite_gpu.GpuDelegate()
            it = tflite_gpu.Interpreter(model_content=model, experimental_delegates=[d])
            it.allocate_tensors()
            i, o = it.get_input_details()[0], it.get_output_details()[0]
            x = np.random.default_rng(0).standard_normal(i["shape"]).astype(np.float32)

            def step():
                it.set_tensor(i["index"], x)
                it.invoke()
                return it.get_tensor(o["index"])
            outs[v] = step()
            t_full = med(step, runs)
            t_inv = med(it.invoke, runs)
            t_set = med(lambda: it.set_tensor(i["index"], x), runs)
            pinned = d.pinned_host_memory()["bytes"]
            prev = res.get(v)
            cur = dict(full=t_full, invoke=t_inv, set_tensor=t_set, pinned_bytes=pinned)
            res[v] = cur if prev is None else {k: min(prev[k], cur[k]) for k in cur}
            del it, d
    os.environ.pop("TFLITE_GPU_PINNED_HOST", None)
    same = bool(np.array_equal(outs["0"], outs["1"]))
    return res, same


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="602112,19267584,128000")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--e2e", default="v1:32,v1:1")
    a = ap.parse_args(argv)
    for s in a.sizes.split(","):
        if not s:
            continue
        nb = int(s)
        try:
            r, dev, ok = raw_modes(nb, a.runs)
        except Exception as e:  # pyopencl missing or no device
            print(f"raw transfer modes: skipped ({type(e).__name__}: {e})")
            break
        print(f"{dev}: {nb / 1e6:.2f} MB (data intact: {ok})")
        for k, t in r.items():
            print(f"  {k:20s} {t:8.3f} ms  {nb / t / 1e6:7.2f} GB/s")
    for spec in a.e2e.split(","):
        if not spec:
            continue
        res, same = e2e(spec, a.runs)
        off, on = res["0"], res["1"]
        print(f"{spec} fp32 pinned off -> on: set+invoke+get {off['full']:.3f} -> {on['full']:.3f} ms "
              f"(x{off['full'] / on['full']:.2f}), invoke {off['invoke']:.3f} -> {on['invoke']:.3f} ms, "
              f"set_tensor {off['set_tensor']:.3f} -> {on['set_tensor']:.3f} ms; pinned bytes "
              f"{off['pinned_bytes']} / {on['pinned_bytes']}; outputs identical: {same}", flush=True)


if __name__ == "__main__":
    main()
