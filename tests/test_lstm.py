"""LSTM family beyond the one-invoke op cases: state carried over several invokes (zoo models
and op cases, against ai-edge-litert), and bad models (ValueError naming the op)."""
import numpy as np
import pytest

import tflite_gpu
from harness import assert_close, invoke_step, litert_interpreter, our_interpreter, rel_l2
from op_cases.lstm import SEQ, lstm_model
from tflite_gpu.testing import zoo
from tflite_gpu.testing.builder import ModelBuilder


@pytest.mark.parametrize("reference", [False, True], ids=["fast", "reference"])
@pytest.mark.parametrize("kw", [
    dict(),
    dict(batch=3, time_steps=5, input_size=7, num_units=20),
], ids=["default", "batch3"])
def test_zoo_lstm_model_state_carried(reference, kw):
    model = zoo.lstm_model(**kw)
    want_it, got_it = litert_interpreter(model), our_interpreter(model, reference)
    shape = want_it.get_input_details()[0]["shape"]
    rng = np.random.default_rng(1)
    for step in range(5):
        x = rng.standard_normal(shape).astype(np.float32)
        want, got = invoke_step(want_it, [x]), invoke_step(got_it, [x])
        assert_close(got, want, 1e-5, f"invoke {step}")


@pytest.mark.parametrize("reference", [False, True], ids=["fast", "reference"])
def test_zoo_basic_lstm_model_state_fed_back(reference):
    model = zoo.basic_lstm_model(batch=2)
    want_it, got_it = litert_interpreter(model), our_interpreter(model, reference)
    names = [d["name"] for d in want_it.get_input_details()]
    assert names == [d["name"] for d in got_it.get_input_details()]
    rng = np.random.default_rng(2)
    act = np.zeros((2, 16), np.float32)
    state = np.zeros((2, 16), np.float32)
    for step in range(6):
        x = rng.standard_normal((2, 8)).astype(np.float32)
        feed = {"input": x, "prev_activation": act, "prev_state": state}
        ins = [feed[n] for n in names]
        want, got = invoke_step(want_it, ins), invoke_step(got_it, ins)
        assert_close(got, want, 1e-5, f"invoke {step}")
        out_names = [d["name"] for d in got_it.get_output_details()]
        act, state = got[out_names.index("activation")], got[out_names.index("state")]


@pytest.mark.parametrize("kw", [
    dict(peephole=True, projection=True, proj_bias=True, n_output=4, cell_clip=0.5, proj_clip=0.3),
    dict(cifg=True, layer_norm=True, time_major=True),
    dict(op="LSTM", peephole=True, layer_norm=True),
    dict(act="NONE", batch=1),
], ids=["peephole_projection", "cifg_layernorm_time_major", "full_op", "act_none"])
def test_op_state_carried_over_invokes(kw):
    model = lstm_model(**kw)
    want_it, got_it, ref_it = litert_interpreter(model), our_interpreter(model), our_interpreter(model, reference=True)
    shape = want_it.get_input_details()[0]["shape"]
    rng = np.random.default_rng(3)
    for step in range(4):
        x = rng.standard_normal(shape).astype(np.float32)
        want = invoke_step(want_it, [x])
        assert_close(invoke_step(got_it, [x]), want, 1e-5, f"fast, invoke {step}")
        assert_close(invoke_step(ref_it, [x]), want, 1e-5, f"reference, invoke {step}")


def test_state_persists_and_changes_the_output():
    model = lstm_model()
    it = our_interpreter(model)
    x = np.random.default_rng(4).standard_normal(it.get_input_details()[0]["shape"]).astype(np.float32)
    a, b = invoke_step(it, [x])[0], invoke_step(it, [x])[0]
    assert rel_l2(a, b) > 1e-3  # the second invoke starts from the first one's final state


# ------------------------------------------------------------------------------ bad models
def _alloc(model):
    it = tflite_gpu.Interpreter(model_content=model)
    it.allocate_tensors()
    return it


def _edited_lstm(edit, op=SEQ, n_inputs=24, options="default"):
    """A small LSTM whose input list / tensors `edit(mb, ins)` may change before the op is added."""
    rng = np.random.default_rng(0)
    mb = ModelBuilder()
    B, T, I, C = 2, 3, 4, 5
    x = mb.add_input([B, T, I] if op == SEQ else [B, I], name="input")

    def w(*s):
        return mb.add_const(rng.standard_normal(s).astype(np.float32))
    ins = [x] + [w(C, I) for _ in range(4)] + [w(C, C) for _ in range(4)] + [-1, -1, -1]
    ins += [w(C) for _ in range(4)] + [-1, -1]
    ins += [mb.add_tensor([B, C], is_variable=True), mb.add_tensor([B, C], is_variable=True)]
    if n_inputs == 24:
        ins += [-1, -1, -1, -1]
    ins = edit(mb, ins, w) or ins
    y = mb.add_tensor([B, T, C] if op == SEQ else [B, C])
    mb.mark_output(y)
    if options == "default":
        options = dict(fused_activation_function="TANH")
        if op == "LSTM":
            options["kernel_type"] = "FULL"
    mb.add_op(op, ins, [y], options=options)
    return mb.build()


def _set(i, fn):
    def edit(mb, ins, w):
        ins = list(ins)
        ins[i] = fn(mb, w)
        return ins
    return edit


@pytest.mark.parametrize("op", [SEQ, "LSTM"])
@pytest.mark.parametrize("name,edit,msg", [
    ("wrong_input_weights_shape", _set(2, lambda mb, w: w(5, 3)), "input_to_forget_weights"),
    ("wrong_recurrent_shape", _set(6, lambda mb, w: w(5, 4)), "recurrent_to_forget_weights"),
    ("wrong_bias_shape", _set(13, lambda mb, w: w(4)), "forget_gate_bias"),
    ("half_cifg", _set(5, lambda mb, w: -1), "both present or both absent"),
    ("missing_forget_weights", _set(2, lambda mb, w: -1), "missing"),
    ("peephole_partial", _set(10, lambda mb, w: w(5)), "peephole"),
    ("proj_bias_without_weights", _set(17, lambda mb, w: w(5)), "projection"),
    ("state_not_variable", _set(18, lambda mb, w: w(2, 5)), "variable"),
    ("state_wrong_size", _set(19, lambda mb, w: mb.add_tensor([3, 5], is_variable=True)), "cell_state"),
    ("int8_weights", _set(3, lambda mb, w: mb.add_const(np.ones((5, 4), np.int8))), "hybrid"),
    ("layer_norm_partial", _set(21, lambda mb, w: w(5)), "layer_norm_coefficients"),
])
def test_lstm_bad_model(op, name, edit, msg):
    with pytest.raises(ValueError, match=op) as e:
        _alloc(_edited_lstm(edit, op=op))
    assert msg in str(e.value)


@pytest.mark.parametrize("op", [SEQ, "LSTM"])
def test_lstm_bad_params(op):
    extra = dict(kernel_type="FULL") if op == "LSTM" else {}
    with pytest.raises(ValueError, match=f"{op}.*cell_clip"):
        _alloc(_edited_lstm(lambda *a: None, op=op, options=dict(cell_clip=-1.0, **extra)))
    with pytest.raises(ValueError, match=f"{op}.*activation"):
        _alloc(_edited_lstm(lambda *a: None, op=op, options=dict(fused_activation_function=11, **extra)))
    with pytest.raises(ValueError, match=f"{op}.*inputs"):
        _alloc(_edited_lstm(lambda mb, ins, w: ins[:21], op=op))


def test_lstm_full_needs_options():
    with pytest.raises(ValueError, match="LSTM.*options"):
        _alloc(_edited_lstm(lambda *a: None, op="LSTM", options=None))


def test_lstm_batch_resize_must_match_state():
    it = tflite_gpu.Interpreter(model_content=lstm_model(batch=2, time=3, n_input=5))
    it.resize_tensor_input(it.get_input_details()[0]["index"], [3, 3, 5])
    with pytest.raises(ValueError, match="UNIDIRECTIONAL_SEQUENCE_LSTM.*output_state"):
        it.allocate_tensors()


def test_basic_lstm_bad_model():
    def m(wshape=None, bshape=None, dt=np.float32):
        mb = ModelBuilder()
        x = mb.add_input([1, 3], dt)
        pa = mb.add_input([1, 4], dt)
        wt = mb.add_const(np.zeros(wshape or (16, 7), dt))
        bs = mb.add_const(np.zeros(bshape or (16,), dt))
        ps = mb.add_input([1, 4], dt)
        outs = [mb.add_tensor(s, dt) for s in ([1, 4], [1, 4], [1, 7], [1, 16])]
        for o in outs:
            mb.mark_output(o)
        mb.add_op("LSTM", [x, pa, wt, bs, ps], outs, options=dict(kernel_type="BASIC"), version=2)
        return mb.build()
    _alloc(m())
    with pytest.raises(ValueError, match="LSTM.*weights"):
        _alloc(m(wshape=(16, 6)))
    with pytest.raises(ValueError, match="LSTM.*biases"):
        _alloc(m(bshape=(15,)))
    with pytest.raises(ValueError, match="LSTM.*FLOAT32"):
        _alloc(m(dt=np.int32))


@pytest.mark.parametrize("op", [SEQ, "LSTM"])
def test_weights_given_at_run_time(op):
    """Weights that are graph inputs (not constants) are read at every invoke."""
    rng = np.random.default_rng(5)
    B, T, I, C, P = 2, 3, 4, 6, 5
    mb = ModelBuilder()
    x = mb.add_input([B, T, I] if op == SEQ else [B, I], name="x")
    w_in = mb.add_input([C, I], name="input_to_cell")
    r_in = mb.add_input([C, P], name="recurrent_to_forget")
    p_in = mb.add_input([P, C], name="projection")

    def w(*s):
        return mb.add_const((rng.standard_normal(s) / np.sqrt(s[-1])).astype(np.float32))
    ins = [x, w(C, I), w(C, I), w_in, w(C, I), w(C, P), r_in, w(C, P), w(C, P), w(C), w(C), w(C),
           w(C), w(C), w(C), w(C), p_in, w(P),
           mb.add_tensor([B, P], is_variable=True), mb.add_tensor([B, C], is_variable=True),
           w(C), w(C), w(C), w(C)]
    y = mb.add_tensor([B, T, P] if op == SEQ else [B, P])
    mb.mark_output(y)
    opts = dict(fused_activation_function="TANH", cell_clip=0.8, proj_clip=0.5)
    if op == "LSTM":
        opts["kernel_type"] = "FULL"
    mb.add_op(op, ins, [y], options=opts)
    model = mb.build()
    want_it, got_it, ref_it = litert_interpreter(model), our_interpreter(model), our_interpreter(model, reference=True)
    for step in range(3):
        feed = [rng.standard_normal(d["shape"]).astype(np.float32) * 0.5
                for d in want_it.get_input_details()]
        want = invoke_step(want_it, feed)
        assert_close(invoke_step(got_it, feed), want, 1e-5, f"fast, invoke {step}")
        assert_close(invoke_step(ref_it, feed), want, 1e-5, f"reference, invoke {step}")


def test_sequence_length_resize():
    """A longer sequence after resize_tensor_input (the state size does not depend on time)."""
    model = lstm_model(batch=2, time=3, n_input=5, peephole=True)
    want_it, got_it = litert_interpreter(model), our_interpreter(model)
    rng = np.random.default_rng(6)
    for it in (want_it, got_it):
        it.resize_tensor_input(it.get_input_details()[0]["index"], [2, 7, 5])
        it.allocate_tensors()
    for step in range(2):
        x = rng.standard_normal((2, 7, 5)).astype(np.float32)
        assert_close(invoke_step(got_it, [x]), invoke_step(want_it, [x]), 1e-5, f"invoke {step}")
