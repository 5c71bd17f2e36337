"""Absent (-1) and out-of-range operator inputs/outputs (issue 12, item 3).

The sweep: for the first LiteRT-checked case of every op in the harness, each input position of
the op under test is set to -1 (TFLite's optional-input marker). Oracle: LiteRT
(BUILTIN_WITHOUT_DEFAULT_DELEGATES) on the same file. Where LiteRT runs it (the input is optional),
we must run it too and match LiteRT's outputs within the case's tolerance; where we refuse, it is
a ValueError naming the node and the input position, never a crash (both sides run in child
processes) and never a read of tensors[-1]."""
import json

import numpy as np
import pytest

import tflite_gpu
from misuse_util import run_child
from tflite_gpu.testing.builder import ModelBuilder

SWEEP = r"""
import json, os, sys
import numpy as np
from ai_edge_litert import schema_py_generated as S
import flatbuffers
from harness import all_cases, {runner}

path = {path!r}
done = set()
if os.path.exists(path):
    for line in open(path):
        done.add(json.loads(line)[0])
NAMES = {{v: k for k, v in vars(S.BuiltinOperator).items() if not k.startswith("_")}}
seen = set()
res_file = open(path, "a")
for case in all_cases():
    if case.oracle != "litert" or case.op in seen:
        continue
    try:
        data = case.model()
        inputs = list(case.inputs(np.random.default_rng(0)))
        m = S.ModelT.InitFromPackedBuf(data, 0)
    except Exception:
        continue
    seen.add(case.op)
    sg = m.subgraphs[0]
    for j, op in enumerate(sg.operators):
        oc = m.operatorCodes[op.opcodeIndex]
        code = max(oc.builtinCode, oc.deprecatedBuiltinCode)
        if NAMES.get(code) != case.op:
            continue
        for k in range(len(op.inputs)):
            key = f"{{case.id}}|op{{j}}|in{{k}}"
            if op.inputs[k] < 0 or key in done:
                continue
            saved = np.array(op.inputs)
            op.inputs = np.array(saved)
            op.inputs[k] = -1
            b = flatbuffers.Builder(1024)
            b.Finish(m.Pack(b), file_identifier=b"TFL3")
            op.inputs = saved
            mutant = bytes(b.Output())
            open(path + ".pending", "w").write(key)
            try:
                res = {runner}(mutant, inputs)
                rec = [key, "ran", [np.asarray(r, np.float64).ravel().tolist() for r in res]]
            except Exception as e:
                rec = [key, "error", type(e).__name__, str(e)]
            res_file.write(json.dumps(rec) + "\n")
            res_file.flush()
"""


def _sweep(tmp_path, runner, crash_is_refusal):
    """Runs the sweep in child processes. LiteRT itself crashes on some absent inputs (it reads
    the missing tensor): with crash_is_refusal a crash is recorded as LiteRT refusing that file and
    the sweep resumes after it; for our runtime any crash fails the test."""
    path = str(tmp_path / f"{runner}.jsonl")
    crashes = []
    for _ in range(200):
        try:
            run_child(SWEEP.format(runner=runner, path=path), timeout=400)
            break
        except AssertionError as e:
            if not crash_is_refusal or "hung" in str(e):
                raise
            key = open(path + ".pending").read()
            crashes.append(key)
            with open(path, "a") as f:
                f.write(json.dumps([key, "error", "crash", str(e).splitlines()[0]]) + "\n")
    out = {}
    for line in open(path):
        rec = json.loads(line)
        out[rec[0]] = rec[1:]
    return out, crashes


def test_absent_inputs_sweep_vs_litert(tmp_path):
    ours, _ = _sweep(tmp_path, "run_tflite_gpu", crash_is_refusal=False)
    ref, litert_crashes = _sweep(tmp_path, "run_litert", crash_is_refusal=True)
    print(f"LiteRT crashed on {len(litert_crashes)} of these files: {litert_crashes}")
    from harness import all_cases
    tol = {c.id: c.tol for c in all_cases()}
    assert len(ours) > 100, len(ours)
    stricter, both_ran, refused = [], 0, 0
    for key, got in ours.items():
        case_id = key.split("|")[0]
        k = int(key.split("|in")[1])
        want = ref.get(key)
        if got[0] == "error":
            refused += 1
            # InterpreterError (tflite_gpu.interpreter) subclasses both ValueError and RuntimeError
            assert got[1] in ("ValueError", "RuntimeError", "InterpreterError"), (key, got)
            if want is not None and want[0] == "ran":
                stricter.append((key, got[2]))
            continue
        if want is None or want[0] != "ran":
            continue  # we accept the input as optional where LiteRT refuses: our kernel handles absence
        both_ran += 1
        assert len(got[1]) == len(want[1]), key
        for g, w in zip(got[1], want[1]):
            g, w = np.asarray(g), np.asarray(w)
            assert g.shape == w.shape, key
            denom = np.linalg.norm(w)
            err = np.linalg.norm(g - w) / denom if denom > 0 else np.linalg.norm(g - w)
            assert err <= max(tol.get(case_id, 1e-5), 1e-5), (key, err)
    print(f"{len(ours)} variants: {refused} refused by us, {both_ran} optional inputs run by both and matching")
    assert not stricter, f"LiteRT runs these absent inputs as optional but we refuse them: {stricter}"


def _conv_model(drop):
    b = ModelBuilder()
    x = b.add_input([1, 5, 5, 3])
    w = b.add_const(np.ones((4, 3, 3, 3), np.float32))
    bias = b.add_const(np.zeros(4, np.float32))
    y = b.add_tensor([1, 5, 5, 4])
    ins = [x, w, bias]
    ins[drop] = -1
    b.add_op("CONV_2D", ins, [y], options=dict(padding="SAME", stride_w=1, stride_h=1, fused_activation_function="NONE"))
    b.mark_output(y)
    return b.build()


def test_required_input_absent_names_node_and_position():
    it = tflite_gpu.Interpreter(model_content=_conv_model(1))
    with pytest.raises(ValueError, match=r"node 0 \(CONV_2D v1\): input 1 is required by the op but the model marks it absent"):
        it.allocate_tensors()


def test_add_second_input_absent():
    b = ModelBuilder()
    x = b.add_input([1, 4])
    y = b.add_tensor([1, 4])
    b.add_op("ADD", [x, -1], [y], options=dict(fused_activation_function="NONE"))
    b.mark_output(y)
    it = tflite_gpu.Interpreter(model_content=b.build())
    with pytest.raises(ValueError, match=r"node 0 \(ADD v1\): input 1 is"):
        it.allocate_tensors()


def test_missing_input_position_beyond_the_list():
    b = ModelBuilder()
    x = b.add_input([1, 4])
    y = b.add_tensor([1, 4])
    b.add_op("RELU", [], [y])
    b.mark_output(y)
    it = tflite_gpu.Interpreter(model_content=b.build())
    with pytest.raises(ValueError, match=r"node 0 \(RELU v1\)"):
        it.allocate_tensors()
