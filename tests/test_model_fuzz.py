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
            try:
                it.set_tensor(d["index"], np.zeros(d["shape"], d["dtype"]))
            except ValueError as e:  # e.g. a mutant whose graph input is a constant tensor
                assert str(e)
                return "rejected at set_tensor"
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


# ---- control flow (issue 12): every subgraph index of every IF / WHILE / CALL_ONCE of the
# control-flow seeds set to each interesting value, and a CALL_ONCE grafted into every subgraph
# calling every subgraph. A call graph with a cycle (self-call, a callee calling its caller) or an
# index out of range is refused at load naming it (never a stack overflow); every other variant
# loads, prepares and runs or fails with a documented error. The oracle for "cycle / out of range"
# is a call-graph walk in numpy-free Python over the mutated model (independent of the engine).
def _call_graph_problem(m):
    import fuzzlib
    ns = len(m.subgraphs)
    calls = {i: set() for i in range(ns)}
    for si, op, fields in fuzzlib._cf_ops(m):
        for k in fields:
            v = getattr(op.builtinOptions, k)
            if v < 0 or v >= ns:
                return "out_of_range"
            calls[si].add(v)
    state = {}

    def cyclic(g):
        state[g] = 1
        for r in calls[g]:
            if state.get(r) == 1 or (r not in state and cyclic(r)):
                return True
        state[g] = 2
        return False
    return "cycle" if any(g not in state and cyclic(g) for g in range(ns)) else None


def _pack(m):
    import flatbuffers
    b = flatbuffers.Builder(1024)
    b.Finish(m.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def test_control_flow_subgraph_index_sweep(monkeypatch):
    import copy
    import fuzzlib
    from ai_edge_litert import schema_py_generated as S
    from op_cases import control_flow as cf
    monkeypatch.setenv("TFLITE_GPU_MAX_WHILE_ITERATIONS", "1000")
    seeds = {"while": cf.while_counter_model(post_mul=True), "if": cf.if_model(dynamic=True),
             "call_once": cf.variable_model(second_signature=True), "nested": cf.nested_model()}
    counts = {}
    for name, data in seeds.items():
        base = S.ModelT.InitFromPackedBuf(data, 0)
        ns = len(base.subgraphs)
        variants = []
        for oi, (si, _, fields) in enumerate(fuzzlib._cf_ops(base)):
            for k in fields:
                for v in sorted({si, 0, -1, ns, 2**31 - 1, -2**31, *range(ns)}):
                    m = copy.deepcopy(base)
                    setattr(fuzzlib._cf_ops(m)[oi][1].builtinOptions, k, v)
                    variants.append((f"{name} op{oi}.{k}={v}", m))
        for ti in range(ns):  # CALL_ONCE(target) grafted at the start of subgraph ti
            for target in range(ns):
                m = copy.deepcopy(base)
                codes = m.operatorCodes = list(m.operatorCodes or [])
                c = S.OperatorCodeT()
                c.builtinCode, c.deprecatedBuiltinCode, c.version = 129, 127, 1
                codes.append(c)
                op = S.OperatorT()
                op.opcodeIndex = len(codes) - 1
                op.builtinOptionsType = S.BuiltinOptions.CallOnceOptions
                op.builtinOptions = S.CallOnceOptionsT()
                op.builtinOptions.initSubgraphIndex = target
                m.subgraphs[ti].operators = [op] + list(m.subgraphs[ti].operators or [])
                variants.append((f"{name} CALL_ONCE({target}) in subgraph {ti}", m))
        for what, m in variants:
            problem = _call_graph_problem(m)
            blob = _pack(m)
            if problem:
                with pytest.raises(ValueError, match="recursion between subgraphs" if problem == "cycle"
                                   else "refers to subgraph"):
                    tflite_gpu.Interpreter(model_content=blob)
                r = "refused_" + problem
            else:
                r = fuzzlib.run_one(blob)
            counts[r] = counts.get(r, 0) + 1
    print("control-flow index sweep:", counts)
    assert counts.get("refused_cycle", 0) > 20 and counts.get("refused_out_of_range", 0) > 20, counts
    assert counts.get("ran", 0) > 5, counts


def test_while_iteration_bound(monkeypatch):
    """TFLITE_GPU_MAX_WHILE_ITERATIONS (hosts running untrusted models; the fuzzer) stops a WHILE
    that does not stop with an error naming it; a loop within the bound computes what numpy does.
    Unset, WHILE is unbounded as in TFLite."""
    from op_cases import control_flow as cf
    monkeypatch.setenv("TFLITE_GPU_MAX_WHILE_ITERATIONS", "5")
    it = tflite_gpu.Interpreter(model_content=cf.while_counter_model())
    it.allocate_tensors()
    x = np.arange(6, dtype=np.float32).reshape(2, 3)

    def want(n):
        w = x.copy()
        for _ in range(n):
            w = w * np.float32(1.5) + np.float32(0.25)
        return w
    for n in (0, 5):
        it.set_tensor(it.get_input_details()[0]["index"], np.array(n, np.float32))
        it.set_tensor(it.get_input_details()[1]["index"], x)
        it.invoke()
        np.testing.assert_allclose(it.get_tensor(it.get_output_details()[1]["index"]), want(n), rtol=1e-6)
    it.set_tensor(it.get_input_details()[0]["index"], np.array(6, np.float32))
    with pytest.raises(RuntimeError, match=r"did not stop after 5 iterations \(TFLITE_GPU_MAX_WHILE_ITERATIONS\)"):
        it.invoke()
    monkeypatch.delenv("TFLITE_GPU_MAX_WHILE_ITERATIONS")
    it = tflite_gpu.Interpreter(model_content=cf.while_counter_model())
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], np.array(50, np.float32))
    it.set_tensor(it.get_input_details()[1]["index"], x)
    it.invoke()  # 50 iterations, past the earlier bound of 5: runs, and computes the 50 steps
    np.testing.assert_allclose(it.get_tensor(it.get_output_details()[1]["index"]), want(50), rtol=1e-6)


def test_huge_variable_tensor_is_a_clear_error():
    """A variable tensor whose shape needs more memory than the process may have (a fuzz mutant:
    an integer LSTM's output state of shape [2**31 - 1, 2, 8], 32 GiB) is a ValueError naming it
    at load; it was an uncaught std::bad_alloc (MemoryError). Run in a child whose address space
    is capped at 4 GiB (RLIMIT_AS), so the allocation fails the same way on every host."""
    import os
    import pytest
    from misuse_util import run_child
    if "libasan" in os.environ.get("LD_PRELOAD", ""):
        pytest.skip("ASan reserves terabytes of shadow address space: RLIMIT_AS cannot cap it")
    out = run_child("""
import resource
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
import tflite_gpu
from op_cases.lstm import int8_lstm_model
def grow(p):
    p["output_state"]["shape"] = [2**31 - 1, 2, 8]
m = int8_lstm_model(mutate=grow)
try:
    tflite_gpu.Interpreter(model_content=m)
    raise AssertionError("a 32 GiB variable tensor loaded under a 4 GiB address-space limit")
except ValueError as e:
    print("refused:", e)
""", timeout=120)
    assert "variable tensor" in out and "('output_state') of shape [2147483647, 2, 8]" in out and \
        "cannot be allocated" in out, out
