"""Hostile .tflite files: truncations, bit flips and random mutations of valid models must give a
ValueError naming the problem (or load and run), never a crash or hang. Each case runs in the
test process: a crash fails the whole run, which is the point."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tflite_gpu
from tflite_gpu.testing import zoo


def small_models():
    from fuzzlib import conv_reshape_builder
    b = conv_reshape_builder()
    return [b.build(), b.build(large_buffers=True), zoo.encoder_decoder(seed=1, input_size=16)]


MODELS = small_models()


def outputs_of(data: bytes):
    it = tflite_gpu.Interpreter(model_content=data)
    it.allocate_tensors()
    for d in it.get_input_details():
        it.set_tensor(d["index"], np.zeros(d["shape"], d["dtype"]))
    it.invoke()
    return [it.get_tensor(d["index"]) for d in it.get_output_details()]


def try_load_and_run(data: bytes):
    try:
        it = tflite_gpu.Interpreter(model_content=data)
    except ValueError as e:
        assert str(e), "empty error message"
        return "rejected"
    try:
        it.allocate_tensors()
    except ValueError as e:
        assert str(e)
        return "rejected at allocate"
    for d in it.get_input_details():
        if d["dtype"] in (np.float32, np.int32, np.uint8, np.int8, np.int64, np.float16, np.bool_, np.int16):
            it.set_tensor(d["index"], np.zeros(d["shape"], d["dtype"]))
    try:
        it.invoke()
    except RuntimeError as e:
        assert str(e)
        return "rejected at invoke"
    for d in it.get_output_details():
        it.get_tensor(d["index"])
    return "ran"


@pytest.mark.parametrize("mi", range(len(MODELS)))
def test_every_truncation_is_rejected_cleanly(mi):
    data = MODELS[mi]
    step = max(1, len(data) // 400)
    full = outputs_of(data)
    for n in list(range(0, len(data), step)) + [len(data) - 1]:
        r = try_load_and_run(data[:n])
        if r == "ran":  # only trailing padding was cut: everything it read was there
            for a, b in zip(outputs_of(data[:n]), full):
                np.testing.assert_array_equal(a, b)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mi=st.integers(0, len(MODELS) - 1), flips=st.lists(st.tuples(st.integers(0, 10**7), st.integers(0, 255)),
                                                         min_size=1, max_size=8))
def test_random_byte_mutations(mi, flips):
    data = bytearray(MODELS[mi])
    for pos, val in flips:
        data[pos % len(data)] = val
    try_load_and_run(bytes(data))


@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=0, max_size=512))
def test_random_bytes(blob):
    r = try_load_and_run(b"\x1c\x00\x00\x00TFL3" + blob if len(blob) % 2 else blob)
    assert r in ("rejected", "rejected at allocate", "rejected at invoke", "ran")


def test_specific_messages():
    with pytest.raises(ValueError, match="TFL3"):
        tflite_gpu.Interpreter(model_content=b"\x00" * 64)
    with pytest.raises(ValueError, match="too small"):
        tflite_gpu.Interpreter(model_content=b"\x01\x02")
    data = bytearray(MODELS[0])
    data[0:4] = (len(data) + 100).to_bytes(4, "little")
    with pytest.raises(ValueError, match="out of bounds"):
        tflite_gpu.Interpreter(model_content=bytes(data))


# ---- long-lived fuzzing (issue 12): many mutants in ONE worker process, state carried between
# files; byte and field-aware flatbuffer mutations (tests/fuzzlib.py); CPU and GPU delegate.
# CI runs TFLITE_GPU_FUZZ_CI_MUTANTS (default 1500); the big run is `python tests/fuzzlib.py
# --mutants 100000` (or TFLITE_GPU_FUZZ_MUTANTS=... with TFLITE_GPU_TEST_FULL=1 here).
def test_long_lived_fuzzing(tmp_path):
    import os
    import fuzzlib
    full = os.environ.get("TFLITE_GPU_TEST_FULL") == "1"
    n = int(os.environ.get("TFLITE_GPU_FUZZ_MUTANTS" if full else "TFLITE_GPU_FUZZ_CI_MUTANTS",
                           "100000" if full else "1500"))
    r = fuzzlib.supervise(n, str(tmp_path / "fuzz"), seed=os.environ.get("TFLITE_GPU_FUZZ_SEED", "ci"),
                          gpu_share=0.05, hang_s=120)
    print("long-lived fuzzing:", r["stats"])
    assert r["stats"]["mutants"] == n
    assert not r["kept"], f"crashing/hanging mutants (copy them to tests/fuzz_corpus): {r['kept']}"
    assert not r["findings"], r["findings"]


def test_regression_corpus():
    """Every file of tests/fuzz_corpus (a mutant that once crashed, hung or raised an undocumented
    error type) is handled with documented errors only, CPU and GPU, in one child process."""
    import os
    import fuzzlib
    from misuse_util import run_child
    files = sorted(f for f in os.listdir(fuzzlib.CORPUS_DIR) if f.endswith(".tflite"))
    assert files, "tests/fuzz_corpus is empty"
    out = run_child(f"""
import os, fuzzlib, tflite_gpu
from gpu_util import _probe
dlg = tflite_gpu.GpuDelegate() if _probe()[0] else None
for f in {files!r}:
    data = open(os.path.join(fuzzlib.CORPUS_DIR, f), "rb").read()
    for d in (None, dlg):
        print(f, "gpu" if d else "cpu", fuzzlib.run_one(data, d), flush=True)
""", timeout=600)
    print(out)
    assert sum(1 for line in out.splitlines() if line.endswith(("ran", "rejected_load", "rejected_allocate",
                                                                "rejected_delegate", "rejected_invoke"))) >= len(files)
