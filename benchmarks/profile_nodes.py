"""Per-node CPU time of tflite_gpu at 1 and 2 threads (issue #14: where 2-thread time does not halve).

    python benchmarks/profile_nodes.py mobilenet_v2 face_mesh_like --invokes 50 --top 25

For each model: the wall time per invoke at each thread count, the sum of the profiled node times,
and the nodes ranked by time at the highest thread count, with their op, output shape and the
time ratio t(2 threads) / t(1 thread) (0.5 = perfect scaling). Per op type totals at the end.
"""
import argparse
import statistics
import sys
import time

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from bench_speed import FLOAT_MODELS, INT8_MODELS, make, ready  # noqa: E402


def node_times(model, threads, invokes):
    it = ready(make("ours", model, threads))  # bench_speed's setup (2 invokes), 3 more warm-up invokes
    for _ in range(3):
        it.invoke()
    walls = []
    for _ in range(invokes):
        t = time.perf_counter(); it.invoke(); walls.append(time.perf_counter() - t)
    it.enable_profiling(True)
    per = {}
    for _ in range(invokes):
        it.invoke()
        for e in it.get_profile():
            per.setdefault(tuple(e["nodes"]), (e["name"], []))[1].append(e["us"])
    ops = it._get_ops_details()
    td = {d["index"]: d for d in it.get_tensor_details()}
    info = {}
    for k, (name, us) in per.items():
        o = ops[k[0]]
        shp = lambda i: "x".join(map(str, td[i]["shape"])) if i in td and i >= 0 else "-"
        info[k] = (name, statistics.median(us), shp(o["inputs"][0]) + "->" + shp(o["outputs"][0]))
    return statistics.median(walls), info


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("models", nargs="+")
    ap.add_argument("--invokes", type=int, default=40)
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--threads", nargs="*", type=int, default=[1, 2])
    a = ap.parse_args()
    b = dict(FLOAT_MODELS); b.update(INT8_MODELS)
    for m in a.models:
        model = b[m]()
        res = {t: node_times(model, t, a.invokes) for t in a.threads}
        t0, tn = a.threads[0], a.threads[-1]
        print(f"== {m}: " + ", ".join(f"{t}T wall {res[t][0]*1e3:.3f} ms sum {sum(v[1] for v in res[t][1].values())/1e3:.3f} ms"
                                      for t in a.threads))
        infos = res[tn][1]
        rows = sorted(infos, key=lambda k: -infos[k][1])
        print(f"  {'node':>5s} {'op':22s} {'shape':34s} {'us@'+str(t0):>8s} {'us@'+str(tn):>8s} ratio")
        for k in rows[:a.top]:
            n, us, s = infos[k]
            u0 = res[t0][1].get(k, (n, float('nan'), s))[1]
            print(f"  {k[0]:5d} {n:22s} {s:34s} {u0:8.1f} {us:8.1f} {us/u0:5.2f}")
        by = {}
        for t in a.threads:
            for k, (n, us, s) in res[t][1].items():
                by.setdefault(n, {}).setdefault(t, 0.0)
                by[n][t] += us
        for n, d in sorted(by.items(), key=lambda kv: -kv[1][tn]):
            print(f"  type {n:22s} " + " ".join(f"{d.get(t,0)/1e3:7.3f}ms@{t}" for t in a.threads)
                  + f"  ratio {d.get(tn,0)/max(d.get(t0,1e-9),1e-9):.2f}  count {sum(1 for v in res[tn][1].values() if v[0]==n)}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
