"""CPU speed set of issue #14 (and the int8 MobileNets of issue #7): tflite_gpu's CPU kernels vs
ai-edge-litert with XNNPACK (its default) and with its builtin kernels
(BUILTIN_WITHOUT_DEFAULT_DELEGATES), and vs ONNX Runtime, side by side in one run, at 1 and 2 threads.

    python benchmarks/bench_speed.py                      # all models, threads 1 and 2
    python benchmarks/bench_speed.py --models face_detector_like --threads 1 --rounds 15
    python benchmarks/bench_speed.py --int8               # the int8 MobileNets too
    python benchmarks/bench_speed.py --profile palm_detection_like   # our time per op type
    python benchmarks/bench_speed.py --onnx-dir DIR      # ORT reads DIR/NAME.onnx if onnx is missing

Rounds are interleaved (each round times every engine in turn, a few invokes each, so load from
other processes hits all engines alike); per engine the median of the rounds is kept. Ratios:
ours / XNNPACK, ours / LiteRT (the faster of its two paths), ours / ORT, and ours / best (the
fastest of all three peers); their geomeans and the worst ours / best are printed at the end
(issue #14's target: geomean <= 1.0, none > 1.2).

ONNX Runtime (benchmarks/ort_engine.py) runs the model converted by benchmarks/tflite_to_onnx.py
(NCHW inside, transposed once at the graph inputs/outputs; tests/test_onnx_export.py checks its
output against LiteRT's), with intra_op_num_threads = the thread count, inter_op 1, all graph
optimizations, sequential execution; PRELU is written as Relu + Min/Mul + Add, which ORT runs ~5x
faster than its PRelu, so ORT is timed at its best. A model the converter does not map (the int8 ones) gets no
ORT column; the reason is printed. --no-ort leaves ORT out.

The selfie segmentation model uses MediaPipe's Convolution2DTransposeBias custom op: LiteRT's
builtin kernels cannot run it (only its XNNPACK delegate can), so that engine runs the builtin
TRANSPOSE_CONV twin of the same graph.

--ab-fusion adds a fifth engine, ours with the CPU graph fusions off (TFLITE_GPU_CPU_FUSION=0 while
it allocates), timed in the same interleaved rounds: the "nofuse" column, ours/nofuse and nofuse/best
(the ratio to the best peer without the fusions), with their geomeans.

XNNPACK runs int8 GEMMs on AMX tiles where the CPU has them (Sapphire Rapids and later). To compare
the two engines as on a CPU without AMX, --deny-amx refuses the AMX state to the whole process
(benchmarks/no_amx.py): both fall back to AVX-512 VNNI. TFLITE_GPU_CPU_ISA=avx512vnni alone caps
only our kernels and leaves XNNPACK on AMX.
"""
import argparse
import math
import os
import statistics
import sys
import time

import numpy as np

import tflite_gpu
from tflite_gpu.testing import zoo

FLOAT_MODELS = {
    "mobilenet_v1": lambda: zoo.mobilenet_v1(),
    "mobilenet_v2": lambda: zoo.mobilenet_v2(),
    "face_detector_like": lambda: zoo.face_detector_like(),
    "face_mesh_like": lambda: zoo.face_mesh_like(),
    "hand_landmark_like": lambda: zoo.hand_landmark_like(),
    "pose_landmark_like": lambda: zoo.pose_landmark_like(),
    "selfie_segmentation_like": lambda: zoo.selfie_segmentation_like(input_size=256),
    "palm_detection_like": lambda: zoo.palm_detection_like(),
}
# Models LiteRT's builtin kernels cannot run: the builtin-op twin they run instead.
BUILTIN_TWIN = {
    "selfie_segmentation_like": lambda: zoo.selfie_segmentation_like(input_size=256, decoder="TRANSPOSE_CONV"),
}
INT8_MODELS = {
    "mobilenet_v1_int8": lambda: zoo.ZOO["mobilenet_v1_int8"](),
    "mobilenet_v2_int8": lambda: zoo.ZOO["mobilenet_v2_int8"](),
}
ENGINES = ("ours", "xnnpack", "builtin")


def make(engine, model, threads):
    if engine == "ours":
        return tflite_gpu.Interpreter(model_content=model, num_threads=threads)
    if engine == "nofuse":
        return tflite_gpu.Interpreter(model_content=model, num_threads=threads)   # ready() allocates it unfused
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    if engine == "xnnpack":
        return Interpreter(model_content=model, num_threads=threads)
    return Interpreter(model_content=model, num_threads=threads,
                       experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)


def ready(it, env=None):
    old = {k: os.environ.get(k) for k in (env or {})}
    os.environ.update(env or {})
    try:
        it.allocate_tensors()   # TFLITE_GPU_CPU_FUSION is read here
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    rng = np.random.default_rng(0)
    for d in it.get_input_details():
        it.set_tensor(d["index"], rng.standard_normal(d["shape"]).astype(d["dtype"]))
    for _ in range(2):
        it.invoke()
    return it


def calibrate(it, target_s):
    t = time.perf_counter()
    it.invoke()
    dt = max(time.perf_counter() - t, 1e-5)
    return max(1, int(target_s / dt))


def make_ort(name, model, threads, onnx_dir):
    """benchmarks/ort_engine.py's ORT engine for this model, or None (the reason printed)."""
    here = os.path.dirname(os.path.abspath(__file__))
    if here not in sys.path:   # python -P (the device runs) does not put the script's folder first
        sys.path.insert(0, here)
    import ort_engine
    why = ort_engine.unavailable()
    if why is None:
        try:
            it = ort_engine.OrtEngine(ort_engine.onnx_model(name, model, onnx_dir), threads)
            for _ in range(2):
                it.invoke()
            return it
        except (ValueError, OSError) as e:   # tflite_to_onnx.Unsupported is a ValueError
            why = str(e)
    print(f"  ({name}: no ORT column: {why})", flush=True)
    return None


def bench(name, builders, threads, rounds, target_s, ort=True, onnx_dir=None, ab_fusion=False):
    model = builders[name]()
    twin = BUILTIN_TWIN[name]() if name in BUILTIN_TWIN else model
    its = {e: ready(make(e, twin if e == "builtin" else model, threads)) for e in ENGINES}
    if ab_fusion:
        its["nofuse"] = ready(make("nofuse", model, threads), {"TFLITE_GPU_CPU_FUSION": "0"})
    if ort:
        o = make_ort(name, model, threads, onnx_dir)
        if o is not None:
            its["ort"] = o
    engines = tuple(its)
    reps = {e: calibrate(it, target_s) for e, it in its.items()}
    times = {e: [] for e in engines}
    for r in range(rounds):
        order = engines if r % 2 == 0 else engines[::-1]
        for e in order:
            it, n = its[e], reps[e]
            t = time.perf_counter()
            for _ in range(n):
                it.invoke()
            times[e].append((time.perf_counter() - t) / n)
    return {e: statistics.median(v) for e, v in times.items()}


def profile(name, builders, threads, invokes=20):
    it = ready(make("ours", builders[name](), threads))
    it.enable_profiling(True)
    per = {}
    for _ in range(invokes):
        it.invoke()
        for e in it.get_profile():
            per[e["name"]] = per.get(e["name"], 0.0) + e["us"] / invokes
    total = sum(per.values())
    print(f"{name} threads={threads}: {total / 1e3:.2f} ms per invoke (sum of ops)")
    for k, v in sorted(per.items(), key=lambda kv: -kv[1]):
        print(f"  {k:28s} {v / 1e3:8.3f} ms  {100 * v / total:5.1f}%")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", nargs="*", help="subset of the set (default: all float models)")
    ap.add_argument("--threads", nargs="*", type=int, default=[1, 2])
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--round-ms", type=float, default=60.0, help="time per engine per round")
    ap.add_argument("--int8", action="store_true", help="add the int8 MobileNets")
    ap.add_argument("--int8-only", action="store_true")
    ap.add_argument("--profile", nargs="*", help="print our time per op type for these models instead")
    ap.add_argument("--no-ort", action="store_true", help="leave ONNX Runtime out")
    ap.add_argument("--onnx-dir", help="pre-converted NAME.onnx files, used where the onnx package is missing")
    ap.add_argument("--ab-fusion", action="store_true",
                    help="also time ours with the CPU graph fusions off (TFLITE_GPU_CPU_FUSION=0), same rounds")
    ap.add_argument("--deny-amx", action="store_true",
                    help="refuse AMX to every engine (benchmarks/no_amx.py): XNNPACK and ours on AVX-512 VNNI, "
                         "as on a CPU without AMX")
    args = ap.parse_args(argv)
    if args.deny_amx:
        here = os.path.dirname(os.path.abspath(__file__))
        if here not in sys.path:
            sys.path.insert(0, here)
        import no_amx
        print(f"AMX denied to this process: {no_amx.deny()}")
    builders = dict(FLOAT_MODELS)
    builders.update(INT8_MODELS)
    if args.profile is not None:
        for name in args.profile or FLOAT_MODELS:
            for t in args.threads:
                profile(name, builders, t)
        return 0
    names = args.models or (list(INT8_MODELS) if args.int8_only else
                            list(FLOAT_MODELS) + (list(INT8_MODELS) if args.int8 else []))
    unknown = [n for n in names if n not in builders]
    if unknown:
        ap.error(f"unknown models {unknown}; known: {sorted(builders)}")
    print(f"{os.cpu_count()} CPUs, load average {' / '.join(f'{x:.2f}' for x in os.getloadavg())}; "
          f"{args.rounds} interleaved rounds, median ms per invoke")
    print(f"{'model':26s} thr {'ours':>8s} {'xnnpack':>8s} {'builtin':>8s} {'ort':>8s}"
          f"  ours/xnn ours/lrt ours/ort ours/best" +
          (f" {'nofuse':>8s} ours/nofuse nofuse/best" if args.ab_fusion else ""))
    cols = ("xnn", "lrt", "ort", "best") + (("nofuse", "nofuse_best") if args.ab_fusion else ())
    ratios = {t: {} for t in args.threads}
    for t in args.threads:
        for name in names:
            m = bench(name, builders, t, args.rounds, args.round_ms / 1e3, ort=not args.no_ort,
                      onnx_dir=args.onnx_dir, ab_fusion=args.ab_fusion)
            lrt = min(m["xnnpack"], m["builtin"])
            r = dict(xnn=m["ours"] / m["xnnpack"], lrt=m["ours"] / lrt,
                     ort=m["ours"] / m["ort"] if "ort" in m else None,
                     best=m["ours"] / min(lrt, m.get("ort", lrt)))
            if args.ab_fusion:
                r["nofuse"] = m["ours"] / m["nofuse"]
                r["nofuse_best"] = m["nofuse"] / min(lrt, m.get("ort", lrt))
            ratios[t][name] = r
            ort_ms = f"{m['ort'] * 1e3:8.2f}" if "ort" in m else f"{'-':>8s}"
            print(f"{name:26s} {t:3d} {m['ours'] * 1e3:8.2f} {m['xnnpack'] * 1e3:8.2f} {m['builtin'] * 1e3:8.2f} "
                  f"{ort_ms}  " + " ".join(f"{r[c]:8.2f}" if r[c] is not None else f"{'-':>8s}" for c in cols[:4]) +
                  (f" {m['nofuse'] * 1e3:8.2f} {r['nofuse']:11.3f} {r['nofuse_best']:11.2f}" if args.ab_fusion else ""),
                  flush=True)
    for t, rs in ratios.items():
        if not rs:
            continue
        parts = []
        for c in cols:
            v = [r[c] for r in rs.values() if r[c] is not None]
            if v:
                parts.append(f"ours/{c} {math.exp(sum(math.log(a) for a in v) / len(v)):.2f} ({len(v)})")
        worst = max(rs.items(), key=lambda kv: kv[1]["best"])
        extra = ""
        if args.ab_fusion:
            wn = max(rs.items(), key=lambda kv: kv[1]["nofuse_best"])
            extra = f"; worst nofuse/best {wn[0]} {wn[1]['nofuse_best']:.2f}"
        print(f"threads={t}: geomean " + ", ".join(parts).replace("ours/nofuse_best", "nofuse/best") +
              f"; worst ours/best {worst[0]} {worst[1]['best']:.2f}" + extra)
    print(f"load average after: {' / '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
