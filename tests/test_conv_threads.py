"""The float CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED fast kernels at 1, 2 and 3 threads, on
shapes big enough to be split among threads (the op cases are mostly too small for that): every
split path of gemm.cc (row-only split of small-K GEMMs, row x channel-panel split of large-B ones,
implicit-GEMM convolution rows) and of depthwise.cc (3x3 / 5x5 / generic / multiplier > 1 rows),
with odd channel counts, strides, dilation, padding and batch > 1. Oracle: LiteRT BUILTIN
(BUILTIN_WITHOUT_DEFAULT_DELEGATES); also our plain reference kernels. Each interpreter invokes
twice (a pool worker takes its fixed share from its first task on)."""
import os
import subprocess
import sys
import textwrap
import zlib

import numpy as np
import pytest

import tflite_gpu
from harness import OpCase, assert_close, oracle_outputs, run_tflite_gpu
from op_cases.conv import conv_model, dw_model, fc_model


def _c(name, in_shape, cout, **kw):
    return OpCase("CONV_2D", name, lambda: conv_model(in_shape, cout, **kw),
                  lambda rng: [rng.standard_normal(in_shape).astype(np.float32)])


def _d(name, in_shape, **kw):
    return OpCase("DEPTHWISE_CONV_2D", name, lambda: dw_model(in_shape, **kw),
                  lambda rng: [rng.standard_normal(in_shape).astype(np.float32)])


def _f(name, in_shape, units, **kw):
    return OpCase("FULLY_CONNECTED", name, lambda: fc_model(in_shape, units, **kw),
                  lambda rng: [rng.standard_normal(in_shape).astype(np.float32)])


CASES = [
    # 1x1, small K, many rows: split over rows only (whole output pixels per thread).
    _c("1x1_k16_n96_relu6", [1, 56, 56, 16], 96, k=(1, 1), act="RELU6"),
    _c("1x1_k24_n37_batch2", [2, 29, 31, 24], 37, k=(1, 1)),
    _c("1x1_k32_n192", [1, 28, 28, 32], 192, k=(1, 1), act="RELU"),
    # 1x1 with a large B (rows x channel-panel tasks).
    _c("1x1_k512_n520", [1, 14, 14, 512], 520, k=(1, 1)),
    # Implicit GEMM (3x3 stride 2, 5x5, dilation, VALID, batch 2).
    _c("3x3_s2_stem", [1, 57, 57, 3], 32, stride=(2, 2), act="RELU6"),
    _c("5x5_valid_b2", [2, 23, 21, 7], 19, k=(5, 5), padding="VALID"),
    _c("3x3_dil2", [1, 30, 30, 16], 24, dil=(2, 2), version=2),
    _c("1x1_s2", [1, 45, 45, 24], 40, k=(1, 1), stride=(2, 2)),
    # Depthwise: 3x3 / 5x5 fast rows, generic rows (dilation, 7x7), multiplier > 1.
    _d("3x3_c144", [1, 56, 56, 144], act="RELU6"),
    _d("3x3_s2_c24_b2", [2, 41, 40, 24], stride=(2, 2), act="RELU"),
    _d("5x5_c33", [1, 48, 48, 33], k=(5, 5)),
    _d("5x5_s2_valid_c40", [1, 47, 45, 40], k=(5, 5), stride=(2, 2), padding="VALID"),
    _d("3x3_dil2_c32", [1, 40, 40, 32], dil=(2, 2), version=2),
    _d("7x7_c20", [1, 36, 36, 20], k=(7, 7)),
    _d("mult2_c16", [1, 40, 40, 16], mult=2, act="RELU6"),
    _d("mult3_s2_c7_b2", [2, 45, 45, 7], mult=3, stride=(2, 2)),
    # FULLY_CONNECTED through the same GEMM.
    _f("m300_k24_n40", [300, 24], 40, act="RELU"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_threads_match_litert_and_reference(case):
    rng = np.random.default_rng(zlib.crc32(case.id.encode()))
    xs = list(case.inputs(rng))
    want = oracle_outputs(case, xs)
    ref = run_tflite_gpu(case.model(), xs, reference=True, num_threads=1)
    assert_close(ref, want, case.tol, f"{case.id} reference")
    for threads in (1, 2, 3):
        it = tflite_gpu.Interpreter(model_content=case.model(), num_threads=threads)
        it.allocate_tensors()
        it.set_tensor(it.get_input_details()[0]["index"], xs[0])
        for run in range(2):
            it.invoke()
            got = [it.get_tensor(d["index"]) for d in it.get_output_details()]
            assert_close(got, want, case.tol, f"{case.id} {threads} threads, invoke {run + 1}")
            assert_close(got, ref, 2e-6, f"{case.id} {threads} threads vs reference, invoke {run + 1}")


@pytest.mark.parametrize("case", [CASES[0], CASES[8], CASES[14]], ids=lambda c: c.id)
def test_more_threads_than_inline_shares(case):
    """9 threads: more shares than ParallelTasksAffine keeps on the stack (8)."""
    xs = list(case.inputs(np.random.default_rng(zlib.crc32(case.id.encode()))))
    ref = run_tflite_gpu(case.model(), xs, reference=True, num_threads=1)
    assert_close(run_tflite_gpu(case.model(), xs, num_threads=9), ref, 2e-6, f"{case.id} 9 threads")


def test_dynamic_split_matches_reference():
    """TFLITE_GPU_CPU_SPLIT=dynamic (the comparison split) gives the same results."""
    code = textwrap.dedent("""
        import sys, zlib
        import numpy as np
        sys.path.insert(0, sys.argv[1])
        from harness import run_tflite_gpu, assert_close
        from test_conv_threads import CASES
        for case in CASES:
            xs = list(case.inputs(np.random.default_rng(zlib.crc32(case.id.encode()))))
            ref = run_tflite_gpu(case.model(), xs, reference=True, num_threads=1)
            for threads in (2, 3):
                assert_close(run_tflite_gpu(case.model(), xs, num_threads=threads), ref, 2e-6, case.id)
        print("ok", len(CASES))
    """)
    tests_dir = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, TFLITE_GPU_CPU_SPLIT="dynamic")
    if env.get("PYTHONPATH"):  # relative entries (PYTHONPATH=. in a checkout) must survive the cwd change
        env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p) for p in env["PYTHONPATH"].split(os.pathsep) if p)
    r = subprocess.run([sys.executable, "-c", code, tests_dir], env=env, capture_output=True, text=True,
                       timeout=600, cwd=tests_dir)
    assert r.returncode == 0 and "ok" in r.stdout, r.stdout[-3000:] + r.stderr[-3000:]
