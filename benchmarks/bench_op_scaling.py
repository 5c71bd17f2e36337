"""Single-op 1- vs 2-thread scaling, tflite_gpu vs LiteRT XNNPACK, interleaved rounds (issue #14: do our
ops halve at 2 threads where XNNPACK's do?).

    python benchmarks/bench_op_scaling.py
"""
import statistics
import time

import numpy as np

import tflite_gpu
from tflite_gpu.testing import zoo


def model(kind, hw, cin, cout=None):
    net = zoo._Net(0, "float32", "op")
    x = net.mb.add_input([1, hw, hw, cin], name="input")
    if kind == "conv1x1":
        y = net.conv(x, cout, 1, 1, act="RELU")
    elif kind == "dw3x3":
        y = net.dwconv(x, 3, 1, act="RELU")
    else:
        y = net.binary("ADD", x, x, act="NONE")
    return net.finish({"input": x}, {"y": y})


def main():
    from ai_edge_litert.interpreter import Interpreter
    cases = [("conv1x1", 112, 16, 96), ("conv1x1", 56, 24, 144), ("dw3x3", 56, 144), ("add", 96, 16)]
    for c in cases:
        m = model(*c)
        its = {}
        for t in (1, 2):
            its[f"ours{t}"] = tflite_gpu.Interpreter(model_content=m, num_threads=t)
            its[f"xnn{t}"] = Interpreter(model_content=m, num_threads=t)
        for it in its.values():
            it.allocate_tensors()
            d = it.get_input_details()[0]
            it.set_tensor(d["index"], np.random.default_rng(0).standard_normal(d["shape"]).astype(np.float32))
            it.invoke()
        ts = {k: [] for k in its}
        for r in range(15):
            for k, it in its.items():
                t0 = time.perf_counter()
                for _ in range(10):
                    it.invoke()
                ts[k].append((time.perf_counter() - t0) / 10 * 1e6)
        md = {k: statistics.median(v) for k, v in ts.items()}
        print(f"{str(c):28s} " + " ".join(f"{k} {v:7.1f}us" for k, v in md.items())
              + f"  2T/1T ours {md['ours2'] / md['ours1']:.2f} xnn {md['xnn2'] / md['xnn1']:.2f}", flush=True)


if __name__ == "__main__":
    main()
