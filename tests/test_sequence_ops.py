"""Sequence ops beyond the one-invoke op cases (tests/op_cases/rnn.py, svdf.py, lstm.py): RNN,
UNIDIRECTIONAL_SEQUENCE_RNN, BIDIRECTIONAL_SEQUENCE_RNN, BIDIRECTIONAL_SEQUENCE_LSTM and SVDF keep
their state in variable tensors updated in place. Checked against ai-edge-litert's builtin kernels
(OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES) over consecutive invokes and after
reset_all_variables; bad models refused at allocate_tensors with a ValueError naming the op; the
GPU delegate leaves them on the CPU and the partitioned model matches the CPU run."""
import numpy as np
import pytest

import tflite_gpu
from gpu_util import delegate, require_gpu
from harness import assert_close, invoke_step, litert_interpreter, our_interpreter
from op_cases.lstm import BIDI as BILSTM, bidi_lstm_model
from op_cases.rnn import BIDI as BIRNN, UNI, rnn_model
from op_cases.svdf import svdf_model
from tflite_gpu.testing.builder import ModelBuilder


def _feed(it, rng):
    out = []
    for d in it.get_input_details():
        if d["dtype"] == np.int8:
            out.append(rng.integers(-128, 128, d["shape"]).astype(np.int8))
        else:
            out.append(rng.standard_normal(d["shape"]).astype(np.float32))
    return out


MODELS = {
    "rnn": lambda: rnn_model("RNN", batch=2, n_input=5, units=6),
    "rnn_hybrid_asym": lambda: rnn_model("RNN", hybrid=True, asymmetric=True),
    "uni_rnn": lambda: rnn_model(UNI, time=4),
    "uni_rnn_hybrid_time_major": lambda: rnn_model(UNI, hybrid=True, time_major=True),
    "bidi_rnn_merge": lambda: rnn_model(BIRNN, merge_outputs=True, aux="cross"),
    "bidi_rnn_hybrid": lambda: rnn_model(BIRNN, hybrid=True, time_major=True),
    "bidi_lstm": lambda: bidi_lstm_model(peephole=True, fw_out=3, bw_out=3),
    "bidi_lstm_batch_major": lambda: bidi_lstm_model(time_major=False, aux="cross"),
    "svdf": lambda: svdf_model(rank=2, memory=4, act="RELU"),
    "svdf_hybrid": lambda: svdf_model(mode="hybrid", memory=3),
    "svdf_integer": lambda: svdf_model(mode="integer", act="RELU", memory=3),
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_state_across_invokes_and_reset(name):
    model = MODELS[name]()
    want_it, got_it, ref_it = litert_interpreter(model), our_interpreter(model), our_interpreter(model, reference=True)
    rng = np.random.default_rng(7)
    feeds = [_feed(want_it, rng) for _ in range(3)]
    tol = 0 if name == "svdf_integer" else 1e-5
    first = None
    for step, feed in enumerate(feeds):
        want = invoke_step(want_it, feed)
        if step == 0:
            first = want
        assert_close(invoke_step(got_it, feed), want, tol, f"{name} fast, invoke {step}")
        assert_close(invoke_step(ref_it, feed), want, tol, f"{name} reference, invoke {step}")
    for it in (want_it, got_it, ref_it):
        it.reset_all_variables()
    # After the reset the first input gives the first invoke's outputs again, in both engines.
    want = invoke_step(want_it, feeds[0])
    assert_close(want, first, 0, f"{name} LiteRT after reset")
    assert_close(invoke_step(got_it, feeds[0]), want, tol, f"{name} fast, after reset")
    assert_close(invoke_step(ref_it, feeds[0]), want, tol, f"{name} reference, after reset")


def test_state_changes_the_output():
    it = our_interpreter(rnn_model(UNI))
    x = np.random.default_rng(1).standard_normal(it.get_input_details()[0]["shape"]).astype(np.float32)
    a, b = invoke_step(it, [x])[0], invoke_step(it, [x])[0]
    assert np.abs(a - b).max() > 1e-3


def test_bidi_lstm_merge_batch_major_is_the_unmerged_outputs_side_by_side():
    """LiteRT's merged batch-major BIDIRECTIONAL_SEQUENCE_LSTM offsets batch b's output state by
    b * (fw_out + bw_out) (past the state tensor for b > 0); the oracle here is LiteRT's unmerged
    run of the same weights, concatenated."""
    kw = dict(batch=3, time=4, time_major=False, peephole=True, aux="cross")
    merged, split = bidi_lstm_model(merge_outputs=True, **kw), bidi_lstm_model(merge_outputs=False, **kw)
    want_it, got_it = litert_interpreter(split), our_interpreter(merged)
    rng = np.random.default_rng(3)
    for step in range(2):
        feed = _feed(want_it, rng)
        fw, bw = invoke_step(want_it, feed)
        assert_close(invoke_step(got_it, feed), [np.concatenate([fw, bw], axis=-1)], 1e-5, f"invoke {step}")


# ------------------------------------------------------------------------------ GPU partitioning
def test_gpu_delegate_partitions_around_sequence_ops():
    """CONV-free chain ADD -> UNIDIRECTIONAL_SEQUENCE_RNN -> MUL: the delegate takes ADD and MUL
    and leaves the RNN (variable state) on the CPU; results match the CPU run over two invokes."""
    require_gpu()
    rng = np.random.default_rng(0)
    B, T, I, U = 2, 3, 4, 5
    mb = ModelBuilder()
    x = mb.add_input([B, T, I], name="x")
    c = mb.add_const(rng.standard_normal([B, T, I]).astype(np.float32))
    a = mb.add_tensor([B, T, I])
    mb.add_op("ADD", [x, c], [a], options=dict(fused_activation_function="NONE"))
    w = mb.add_const((rng.standard_normal((U, I)) / 2).astype(np.float32))
    r = mb.add_const((rng.standard_normal((U, U)) / 3).astype(np.float32))
    bias = mb.add_const(rng.standard_normal(U).astype(np.float32) * 0.1)
    h = mb.add_tensor([B, U], is_variable=True, name="h")
    y = mb.add_tensor([B, T, U])
    mb.add_op(UNI, [a, w, r, bias, h], [y], options=dict(fused_activation_function="TANH"))
    k = mb.add_const(np.full([1, 1, U], 2.0, np.float32))
    z = mb.add_tensor([B, T, U], name="z")
    mb.add_op("MUL", [y, k], [z], options=dict(fused_activation_function="NONE"))
    mb.mark_output(z)
    model = mb.build()
    cpu = our_interpreter(model, reference=True)
    gpu = our_interpreter(model, delegates=[delegate(max_delegated_partitions=2)])
    rep = gpu.delegation_report()
    assert rep["total_nodes"] == 3 and rep["delegated_nodes"] == 2 and rep["partitions"] == 2, rep
    assert [u[1] for u in rep["unsupported"]] == [UNI]
    for step in range(2):
        feed = [rng.standard_normal([B, T, I]).astype(np.float32)]
        assert_close(invoke_step(gpu, feed), invoke_step(cpu, feed), 1e-5, f"invoke {step}")


# ------------------------------------------------------------------------------ bad models
def _alloc(model):
    it = tflite_gpu.Interpreter(model_content=model)
    it.allocate_tensors()
    return it


def _rnn_edit(op, edit, **kw):
    """rnn_model's op with input list edited by edit(mb, ins) before the op is added."""
    rng = np.random.default_rng(0)
    mb = ModelBuilder()
    B, T, I, U = 2, 3, 4, 5
    x = mb.add_input([B, I] if op == "RNN" else [B, T, I])

    def w(*s, dt=np.float32):
        return mb.add_const(rng.standard_normal(s).astype(dt))
    h = mb.add_tensor([B, U], is_variable=True)
    ins = [x, w(U, I), w(U, U), w(U), h]
    ins = edit(mb, ins, w) or ins
    y = mb.add_tensor([B, U] if op == "RNN" else [B, T, U])
    mb.mark_output(y)
    mb.add_op(op, ins, [y], options=kw.get("options", dict(fused_activation_function="TANH")))
    return mb.build()


def _set(i, fn):
    def edit(mb, ins, w):
        ins = list(ins)
        ins[i] = fn(mb, w)
        return ins
    return edit


@pytest.mark.parametrize("op", ["RNN", UNI])
@pytest.mark.parametrize("name,edit,msg", [
    ("weights_wrong_cols", _set(1, lambda mb, w: w(5, 3)), "weights (input 1) must have shape [5, 4], got [5, 3]"),
    ("recurrent_not_square", _set(2, lambda mb, w: w(5, 4)),
     "recurrent_weights (input 2) must have shape [5, 5], got [5, 4]"),
    ("bias_wrong", _set(3, lambda mb, w: w(4)), "bias (input 3) must have shape [5], got [4]"),
    ("state_not_variable", _set(4, lambda mb, w: w(2, 5)), "hidden_state (input 4) must be a variable tensor"),
    ("state_wrong_shape", _set(4, lambda mb, w: mb.add_tensor([3, 5], is_variable=True)),
     "hidden_state (input 4) must have shape [2, 5] (batch, units), got [3, 5]"),
    ("mixed_types", _set(2, lambda mb, w: mb.add_const(np.ones((5, 5), np.int8),
                                                       quant=dict(scale=[0.1], zero_point=[0]))),
     "recurrent_weights (input 2) has type INT8, expected FLOAT32"),
    ("hybrid_no_scale", lambda mb, ins, w: [ins[0], mb.add_const(np.ones((5, 4), np.int8)),
                                            mb.add_const(np.ones((5, 5), np.int8)), ins[3], ins[4]],
     "weights (input 1): hybrid INT8 weights need exactly one (per-tensor) scale, got 0"),
    ("missing_bias", _set(3, lambda mb, w: -1), "required input 3 is missing"),
    ("too_few_inputs", lambda mb, ins, w: ins[:4], "expects 5 inputs, got 4"),
])
def test_rnn_bad_model(op, name, edit, msg):
    with pytest.raises(ValueError, match=op) as e:
        _alloc(_rnn_edit(op, edit))
    assert msg in str(e.value), str(e.value)


@pytest.mark.parametrize("op", ["RNN", UNI])
def test_rnn_bad_activation_and_rank(op):
    with pytest.raises(ValueError, match=f"{op}.*activation"):
        _alloc(_rnn_edit(op, lambda *a: None, options=dict(fused_activation_function=9)))
    if op == UNI:
        with pytest.raises(ValueError, match=f"{op}.*3-D"):
            _alloc(_rnn_edit(op, _set(0, lambda mb, w: mb.add_input([2, 4]))))


def test_bidi_rnn_bad_models():
    ok = rnn_model(BIRNN)
    _alloc(ok)
    with pytest.raises(ValueError, match=f"{BIRNN}: expects 1 output.s. with merge_outputs=true, got 2"):
        _alloc(rnn_model(BIRNN, options=dict(merge_outputs=True, fused_activation_function="TANH")))
    with pytest.raises(ValueError, match=f"{BIRNN}.*aux_input.*last dimension"):  # LiteRT would read OOB
        _alloc(rnn_model(BIRNN, aux="cross", aux_size=6, time_major=True))
    with pytest.raises(ValueError, match=f"{BIRNN}.*aux_input.*last dimension"):
        _alloc(rnn_model(BIRNN, aux="cross", aux_size=6, hybrid=True))  # hybrid: every layout


def test_bidi_lstm_bad_models():
    _alloc(bidi_lstm_model())
    with pytest.raises(ValueError, match=f"{BILSTM}.*forward cell's sizes"):
        _alloc(bidi_lstm_model(bw_cell=6))
    with pytest.raises(ValueError, match=f"{BILSTM}.*input's width"):
        _alloc(bidi_lstm_model(aux="bw_input", aux_size=6))
    with pytest.raises(ValueError, match=f"{BILSTM}: expects 1 output.s. with merge_outputs=true, got 2"):
        _alloc(bidi_lstm_model(options=dict(merge_outputs=True)))
    with pytest.raises(ValueError, match=f"{BILSTM}.*cell_clip"):
        _alloc(bidi_lstm_model(cell_clip=-1.0))


def _svdf_edit(edit, **kw):
    rng = np.random.default_rng(0)
    mb = ModelBuilder()
    B, I, F, M = 2, 5, 4, 3
    x = mb.add_input([B, I])

    def w(*s):
        return mb.add_const(rng.standard_normal(s).astype(np.float32))
    ins = [x, w(F, I), w(F, M), w(F // kw.get("rank", 1)), mb.add_tensor([B, M * F], is_variable=True)]
    ins = edit(mb, ins, w) or ins
    y = mb.add_tensor([B, F // kw.get("rank", 1)])
    mb.mark_output(y)
    mb.add_op("SVDF", ins, [y], options=kw.get("options", dict(rank=kw.get("rank", 1))))
    return mb.build()


@pytest.mark.parametrize("name,edit,kw,msg", [
    ("rank_zero", None, dict(options=dict(rank=0)), "rank must be positive, got 0"),
    ("rank_not_dividing", None, dict(options=dict(rank=3)), "the number of filters (4) must be a multiple of rank (3)"),
    ("feature_cols", _set(1, lambda mb, w: w(4, 6)), {}, "weights_feature (input 1) has 6 columns, the input has 5"),
    ("time_rows", _set(2, lambda mb, w: w(5, 3)), {}, "weights_time (input 2) has 5 rows, expected filters = 4"),
    ("bias_size", _set(3, lambda mb, w: w(3)), {}, "bias (input 3) must have shape [4], got [3]"),
    ("state_not_variable", _set(4, lambda mb, w: w(2, 12)), {}, "state (input 4) must be a variable tensor"),
    ("state_size", _set(4, lambda mb, w: mb.add_tensor([2, 11], is_variable=True)), {},
     "state (input 4) must have shape [2, 12] (batch, memory_size * filters), got [2, 11]"),
    ("hybrid_time_not_int8", _set(1, lambda mb, w: mb.add_const(np.ones((4, 5), np.int8),
                                                                quant=dict(scale=[0.1], zero_point=[0]))),
     {}, "weights_time (input 2) has type FLOAT32, the hybrid SVDF needs INT8"),
    ("input_int32", _set(0, lambda mb, w: mb.add_input([2, 5], np.int32)), {},
     "input has type INT32, expected FLOAT32 (float or hybrid) or INT8 (integer)"),
])
def test_svdf_bad_model(name, edit, kw, msg):
    with pytest.raises(ValueError, match="SVDF") as e:
        _alloc(_svdf_edit(edit or (lambda *a: None), **kw))
    assert msg in str(e.value), str(e.value)


def test_svdf_integer_needs_relu():
    with pytest.raises(ValueError, match="SVDF.*RELU"):
        _alloc(svdf_model(mode="integer", act="TANH"))
