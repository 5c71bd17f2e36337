"""Control flow and state over several invokes, against LiteRT (BUILTIN_WITHOUT_DEFAULT_DELEGATES):
WHILE (fixed and growing shapes), IF (static and dynamic outputs), CALL_ONCE + resource variables
(state across invokes, reset_all_variables, signature runners sharing a variable), nested calls;
hostile models (subgraph index out of range, recursion, unbounded growth, bad arity/types).
"""
import numpy as np
import pytest

import tflite_gpu
from op_cases.control_flow import (if_model, nested_model, variable_model, while_counter_model,
                                   while_grow_model)
from tflite_gpu.testing import zoo
from tflite_gpu.testing.builder import ModelBuilder

litert = pytest.importorskip("ai_edge_litert.interpreter")
F32 = np.float32


def _litert(model):
    return litert.Interpreter(model_content=model, experimental_op_resolver_type=(
        litert.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES))


def _ours(model, reference=False, **kw):
    return tflite_gpu.Interpreter(model_content=model, use_reference_kernels=reference, num_threads=2, **kw)


def _step(it, inputs):
    for d, x in zip(it.get_input_details(), inputs):
        if list(d["shape"]) != list(x.shape):
            it.resize_tensor_input(d["index"], list(x.shape))
            it.allocate_tensors()
    for d, x in zip(it.get_input_details(), inputs):
        it.set_tensor(d["index"], x)
    it.invoke()
    return [it.get_tensor(d["index"]) for d in it.get_output_details()]


def _same(got, want, what):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype, f"{what}: {g.shape}/{g.dtype} vs {w.shape}/{w.dtype}"
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6, err_msg=what)


def _run_sequence(model, sequence, reference=False):
    """Runs the same sequence of input lists (or the string 'reset') through both engines."""
    a, b = _litert(model), _ours(model, reference)
    a.allocate_tensors()
    b.allocate_tensors()
    for k, inputs in enumerate(sequence):
        if isinstance(inputs, str):
            a.reset_all_variables()
            b.reset_all_variables()
            continue
        _same(_step(b, inputs), _step(a, inputs), f"step {k}")
    return b


@pytest.mark.parametrize("reference", [False, True])
def test_while_counter_several_invokes(reference):
    rng = np.random.default_rng(0)
    seq = [[np.array(n, F32), rng.standard_normal((2, 3)).astype(F32)] for n in (3, 0, 7, 1, 3)]
    _run_sequence(while_counter_model(), seq, reference)


def test_while_growing_shapes_reuse_the_body_plan():
    rng = np.random.default_rng(1)
    seq = [[np.array(n, F32), rng.standard_normal((1, 2)).astype(F32)] for n in (5, 2, 5, 0, 6)]
    it = _run_sequence(while_grow_model(), seq)
    assert it.num_subgraphs() == 3
    # The body's arena is planned per subgraph and only grows: running the largest loop again
    # reuses it (no new allocation for the same shapes).
    _step(it, [np.array(6.0, F32), np.ones((1, 2), F32)])
    body_arena = it._core.arena_bytes(2)
    assert body_arena > 0
    _step(it, [np.array(6.0, F32), np.ones((1, 2), F32)])
    assert it._core.arena_bytes(2) == body_arena
    out = it.get_tensor(it.get_output_details()[1]["index"])
    assert out.shape == (64, 2)


@pytest.mark.parametrize("dynamic", [False, True])
def test_if_several_invokes(dynamic):
    rng = np.random.default_rng(2)
    seq = [[np.array(p), rng.standard_normal((2, 3)).astype(F32)] for p in (True, False, False, True, False)]
    _run_sequence(if_model(dynamic=dynamic), seq)


def test_nested_while_if_variable():
    rng = np.random.default_rng(3)
    seq = [[np.array(n, F32), np.array(p), rng.standard_normal(4).astype(F32)]
           for n, p in ((3, True), (2, False), (0, True), (5, False))]
    _run_sequence(nested_model(), seq)


@pytest.mark.parametrize("reference", [False, True])
def test_variable_state_across_invokes_and_reset(reference):
    rng = np.random.default_rng(4)
    xs = [[rng.standard_normal(3).astype(F32)] for _ in range(6)]
    # reset_all_variables between invokes: LiteRT 2.3 keeps resource variables (and does not
    # re-run CALL_ONCE); we follow it.
    _run_sequence(variable_model(), xs[:3] + ["reset"] + xs[3:], reference)


def test_variable_shared_between_signature_runners():
    model = variable_model(second_signature=True)
    a, b = _litert(model), _ours(model)
    assert b.num_subgraphs() == a.num_subgraphs() == 3
    ra, rb = {k: a.get_signature_runner(k) for k in ("step", "peek")}, {k: b.get_signature_runner(k) for k in ("step", "peek")}
    rng = np.random.default_rng(5)
    for k, key in enumerate(["peek", "step", "step", "peek", "step", "peek"]):
        arg = {"s": rng.standard_normal(3).astype(F32)} if key == "peek" else {"x": rng.standard_normal(3).astype(F32)}
        wa, wb = ra[key](**arg), rb[key](**arg)
        assert wa.keys() == wb.keys()
        for name in wa:
            np.testing.assert_allclose(wb[name], wa[name], rtol=1e-6, err_msg=f"call {k} {key}.{name}")


def test_read_before_assign_is_an_error():
    model = variable_model(with_call_once=False)
    a = _litert(model)
    a.allocate_tensors()
    with pytest.raises(Exception):
        a.invoke()  # LiteRT refuses too
    b = _ours(model)
    b.allocate_tensors()
    with pytest.raises(RuntimeError, match="read before any ASSIGN_VARIABLE"):
        b.invoke()


def test_reset_all_variables_resets_variable_tensors_like_litert():
    model = zoo.lstm_model()
    rng = np.random.default_rng(6)
    d = _litert(model)
    d.allocate_tensors()
    shape = list(d.get_input_details()[0]["shape"])
    xs = [[rng.uniform(-1, 1, shape).astype(F32)] for _ in range(4)]
    _run_sequence(model, xs[:2] + ["reset"] + xs[2:])


def test_control_flow_stays_on_cpu_with_a_reason_under_the_gpu_delegate():
    from gpu_util import delegate
    dlg = delegate()
    model = while_counter_model(post_mul=True)
    rng = np.random.default_rng(7)
    inputs = [np.array(4.0, F32), rng.standard_normal((2, 3)).astype(F32)]
    it = _ours(model, experimental_delegates=[dlg])
    it.allocate_tensors()
    got = _step(it, inputs)
    a = _litert(model)
    a.allocate_tensors()
    _same(got, _step(a, inputs), "delegated model")
    rep = it.delegation_report()
    reasons = [u for u in rep["unsupported"] if u[1] == "WHILE"]
    assert reasons and "control flow" in reasons[0][3], rep
    assert rep["partitions"] == 1 and rep["delegated_nodes"] == 1, rep  # the MUL after the loop


# ---------------------------------------------------------------------------------------------
# Hostile models
# ---------------------------------------------------------------------------------------------

def _while_with(cond_index, body_index, extra_subgraphs=0):
    mb = ModelBuilder()
    for _ in range(extra_subgraphs):
        sg = mb.add_subgraph()
        a = sg.add_input([], F32)
        sg.mark_output(a)
    n = mb.add_input([], name="n")
    no = mb.add_tensor([], name="n_out")
    mb.add_op("WHILE", [n], [no], options=dict(cond_subgraph_index=cond_index, body_subgraph_index=body_index))
    mb.mark_output(no)
    return mb.build()


@pytest.mark.parametrize("cond,body", [(5, 1), (1, -1), (1, 1 << 30)])
def test_subgraph_index_out_of_range(cond, body):
    with pytest.raises(ValueError, match="refers to subgraph .* but the model has 2 subgraph"):
        _ours(_while_with(cond, body, extra_subgraphs=1))


def test_recursion_is_refused_at_load():
    # main WHILE -> body 1; body 1 holds an IF whose branches are 2 and 1 -> cycle 1 -> 1
    mb = ModelBuilder()
    body = mb.add_subgraph("body")
    other = mb.add_subgraph("other")
    a = other.add_input([], F32)
    other.mark_output(a)
    bx = body.add_input([], name="x")
    p = body.add_const(np.array(True), name="p")
    bo = body.add_tensor([], name="o")
    body.add_op("IF", [p, bx], [bo], options=dict(then_subgraph_index=other.index, else_subgraph_index=body.index))
    body.mark_output(bo)
    n = mb.add_input([], name="n")
    no = mb.add_tensor([], name="n_out")
    mb.add_op("WHILE", [n], [no], options=dict(cond_subgraph_index=other.index, body_subgraph_index=body.index))
    mb.mark_output(no)
    with pytest.raises(ValueError, match=r"recursion between subgraphs .*1 -> 1"):
        _ours(mb.build())


def test_self_call_of_the_primary_subgraph_is_refused():
    mb = ModelBuilder()
    mb.add_op("CALL_ONCE", [], [], options=dict(init_subgraph_index=0))
    x = mb.add_input([1])
    mb.mark_output(x)
    with pytest.raises(ValueError, match=r"recursion between subgraphs .*0 -> 0"):
        _ours(mb.build())


def _unbounded_growth_model():
    """while True: x = concat(x, x): the loop never stops and x doubles every iteration."""
    mb = ModelBuilder()
    cond = mb.add_subgraph("cond")
    ci = cond.add_input([1], F32, shape_signature=[-1])
    t = cond.add_const(np.array(True), name="true")
    c = cond.add_tensor([], np.bool_, name="c")
    cond.add_op("LOGICAL_AND", [t, t], [c])
    cond.mark_output(c)
    del ci
    body = mb.add_subgraph("body")
    bx = body.add_input([1], F32, shape_signature=[-1])
    b2 = body.add_tensor([2], F32, shape_signature=[-1])
    body.add_op("CONCATENATION", [bx, bx], [b2], options=dict(axis=0))
    body.mark_output(b2)
    x = mb.add_input([1], name="x")
    y = mb.add_tensor([1], name="y", shape_signature=[-1])
    mb.add_op("WHILE", [x], [y], options=dict(cond_subgraph_index=cond.index, body_subgraph_index=body.index))
    mb.mark_output(y)
    return mb.build()


def test_unbounded_growth_stops_at_the_cap(monkeypatch):
    monkeypatch.setenv("TFLITE_GPU_MAX_LOOP_TENSOR_BYTES", str(1 << 20))
    it = _ours(_unbounded_growth_model())
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], np.ones(1, F32))
    with pytest.raises(RuntimeError, match=r"grew to shape \[524288\] .* over the cap of 1048576 bytes"):
        it.invoke()


def test_while_arity_and_type_errors():
    # body returns a different number of values than the loop carries
    mb = ModelBuilder()
    cond = mb.add_subgraph("cond")
    cond.add_input([], F32)
    ci2 = cond.add_input([], F32)
    c = cond.add_tensor([], np.bool_)
    cond.add_op("CAST", [ci2], [c], options=dict(in_data_type="FLOAT32", out_data_type="BOOL"))
    cond.mark_output(c)
    body = mb.add_subgraph("body")
    b0 = body.add_input([], F32)
    body.add_input([], F32)
    body.mark_output(b0)
    a = mb.add_input([], name="a")
    b = mb.add_input([], name="b")
    oa, ob = mb.add_tensor([]), mb.add_tensor([])
    mb.add_op("WHILE", [a, b], [oa, ob], options=dict(cond_subgraph_index=cond.index, body_subgraph_index=body.index))
    mb.mark_output(oa)
    it = _ours(mb.build())
    with pytest.raises(ValueError, match="body subgraph 2 has 2 inputs and 1 outputs; expected 2 and 2"):
        it.allocate_tensors()


def test_if_condition_must_be_bool():
    mb = ModelBuilder()
    sg = mb.add_subgraph()
    a = sg.add_input([2])
    sg.mark_output(a)
    p = mb.add_input([], F32, name="p")
    x = mb.add_input([2], name="x")
    y = mb.add_tensor([2])
    mb.add_op("IF", [p, x], [y], options=dict(then_subgraph_index=1, else_subgraph_index=1))
    mb.mark_output(y)
    it = _ours(mb.build())
    with pytest.raises(ValueError, match="the condition has type FLOAT32, expected BOOL"):
        it.allocate_tensors()
