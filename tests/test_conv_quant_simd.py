"""The quantized conv-family kernels on every SIMD path this CPU has (TFLITE_GPU_CPU_ISA lowers it):
fast kernels (qgemm's AMX-INT8 tile GEMM, its AVX-512 VNNI micro-kernel with its fused AVX-512 requantization, the AVX2
madd micro-kernel and AVX2 requantization, or their scalar fallbacks) against our plain reference
kernels, exactly for integer outputs (the reference kernels themselves
are checked against LiteRT in tests/test_ops.py)."""
import os
import subprocess
import sys
import textwrap

import pytest

from harness import require_cpu_isa


# "avx512": AVX-512 without VNNI (the int8 kernels take their AVX2 path); "avx512vnni": the VNNI
# kernels where the CPU has them (AMX off); "amx": the AMX-INT8 tile GEMM where the CPU and OS have
# it. A level the CPU lacks is skipped (the env var only lowers: it would rerun a lower one).
@pytest.mark.parametrize("isa", ["scalar", "sse2", "avx2", "avx512", "avx512vnni", "amx"])
def test_quantized_simd_paths_match_reference_kernels(isa):
    require_cpu_isa(isa)
    code = textwrap.dedent("""
        import sys, zlib
        import numpy as np
        sys.path.insert(0, sys.argv[1])
        from harness import run_tflite_gpu, assert_close
        from op_cases.conv_quant import CASES
        for case in CASES:
            rng = np.random.default_rng(zlib.crc32(case.id.encode()))
            xs = list(case.inputs(rng))
            fast = run_tflite_gpu(case.model(), xs, reference=False, num_threads=2)
            ref = run_tflite_gpu(case.model(), xs, reference=True)
            assert_close(fast, ref, 2e-6, case.id)
        print("ok", len(CASES))
    """)
    env = dict(os.environ, TFLITE_GPU_CPU_ISA=isa)
    tests_dir = os.path.dirname(os.path.abspath(__file__))
    r = subprocess.run([sys.executable, "-c", code, tests_dir], env=env, capture_output=True, text=True, timeout=600,
                       cwd=tests_dir)
    assert r.returncode == 0 and "ok" in r.stdout, r.stdout[-3000:] + r.stderr[-3000:]
