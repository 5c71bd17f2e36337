"""Full-integer LSTM / UNIDIRECTIONAL_SEQUENCE_LSTM (issue 7): state carried over several invokes
and reset, exact against LiteRT's builtin kernels (BUILTIN_WITHOUT_DEFAULT_DELEGATES), and hostile
quantization parameters refused at allocate_tensors with a ValueError naming the tensor. The
single-invoke cases live in tests/op_cases/lstm.py (int8_*)."""
import numpy as np
import pytest

import tflite_gpu
from harness import invoke_step, litert_interpreter, our_interpreter
from op_cases.lstm import SEQ, int8_lstm_model


@pytest.mark.parametrize("kw", [
    dict(),
    dict(op="LSTM", batch=3, peephole=True, projection=True, n_output=4, proj_bias=True),
    dict(layer_norm=True, cifg=True, time_major=True, batch=3, time=3),
], ids=["seq", "lstm_peephole_projection", "seq_layer_norm_cifg_time_major"])
@pytest.mark.parametrize("reference", [False, True], ids=["fast", "reference"])
def test_state_over_invokes_and_reset(kw, reference):
    model = int8_lstm_model(**kw)
    theirs = litert_interpreter(model)
    ours = our_interpreter(model, reference=reference)
    shape = theirs.get_input_details()[0]["shape"]
    rng = np.random.default_rng(7)
    xs = [rng.integers(-128, 128, shape).astype(np.int8) for _ in range(4)]
    for i, x in enumerate(xs[:3]):
        np.testing.assert_array_equal(invoke_step(ours, [x])[0], invoke_step(theirs, [x])[0], err_msg=f"invoke {i}")
    theirs.reset_all_variables()
    ours.reset_all_variables()
    np.testing.assert_array_equal(invoke_step(ours, [xs[3]])[0], invoke_step(theirs, [xs[3]])[0], err_msg="after reset")


def _set(key, **changes):
    def mutate(P):
        if key.startswith("intermediate_"):
            P["intermediates"][int(key.rsplit("_", 1)[1])].update(changes)
        else:
            P[key] = dict(P[key], **changes)
    return mutate


def _weight_cast(key, dtype):
    def mutate(P):
        P[key] = dict(P[key], data=P[key]["data"].astype(dtype))
    return mutate


Q = lambda s, z=0: dict(scale=[s], zero_point=[z])  # noqa: E731

HOSTILE = [
    # (id, model kwargs, expected fragments, LiteRT refuses too)
    ("no_intermediates", dict(n_intermediates=0), ["5 intermediate tensors", "got 0"], True),
    ("four_intermediates", dict(n_intermediates=4), ["5 intermediate tensors", "got 4"], True),
    ("8x8_8_lstm", dict(op="LSTM", n_intermediates=12, layer_norm=True), ["12-intermediate", "8x8_8"], None),
    # LiteRT runs this one (EvalInteger8x8_8); not implemented here: a clear refusal
    ("8x8_8_lstm_layer_norm_projection", dict(op="LSTM", n_intermediates=12, layer_norm=True, projection=True,
                                              n_output=5, proj_bias=True), ["12-intermediate", "8x8_8"], None),
    ("hidden_no_quant", dict(mutate=_set("intermediate_4", quant=None)), ["intermediate 4", "no quantization"], None),
    ("hidden_zero_scale", dict(mutate=_set("intermediate_4", quant=Q(0.0))), ["intermediate 4", "scale"], None),
    ("gate_nan_scale_layer_norm", dict(layer_norm=True, mutate=_set("intermediate_1", quant=Q(float("nan")))),
     ["intermediate 1", "forget gate", "scale"], None),
    ("weight_zero_scale", dict(mutate=_set("input_to_forget_weights", quant=Q(0.0))),
     ["input_to_forget_weights", "scale"], None),
    ("weight_inf_scale", dict(mutate=_set("recurrent_to_cell_weights", quant=Q(float("inf")))),
     ["recurrent_to_cell_weights", "scale"], None),
    ("weight_zero_point", dict(mutate=_set("input_to_output_weights", quant=Q(0.01, 3))),
     ["input_to_output_weights", "zero point 0"], None),
    ("weight_no_quant", dict(mutate=_set("recurrent_to_forget_weights", quant=None)),
     ["recurrent_to_forget_weights", "no quantization"], None),
    ("input_zero_point_out_of_range", dict(mutate=_set("input", quant=Q(0.02, 300))), ["input", "zero point 300"], None),
    ("output_state_negative_scale", dict(mutate=_set("output_state", quant=Q(-0.01))), ["output_state", "scale"], None),
    ("cell_state_not_power_of_two", dict(cell_scale=0.0003), ["cell_state", "power-of-two"], None),
    ("cell_state_scale_too_coarse", dict(cell_scale=2.0 ** -8), ["cell_state", "power-of-two"], None),
    ("cell_state_zero_point", dict(mutate=_set("cell_state", quant=Q(2.0 ** -11, 4))),
     ["cell_state", "zero point 0"], None),
    ("cell_state_int8", dict(mutate=_set("cell_state", dtype=np.int8)), ["cell_state", "INT16"], None),
    ("peephole_int8", dict(peephole=True, mutate=_weight_cast("cell_to_forget_weights", np.int8)),
     ["cell_to_forget_weights", "INT16"], None),
    ("bias_float", dict(mutate=_weight_cast("forget_gate_bias", np.float32)), ["forget_gate_bias", "INT32"], None),
    ("layer_norm_zero_scale", dict(layer_norm=True, mutate=_set("cell_layer_norm_coefficients", quant=Q(0.0))),
     ["cell_layer_norm_coefficients", "scale"], None),
    ("peephole_projection_wider_than_cell", dict(peephole=True, projection=True, n_cell=4, n_output=6),
     ["peephole", "reads past"], None),
]


@pytest.mark.parametrize("name,kw,frags,litert_refuses", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_quantization_is_refused(name, kw, frags, litert_refuses):
    model = int8_lstm_model(**kw)
    with pytest.raises(ValueError) as e:
        tflite_gpu.Interpreter(model_content=model).allocate_tensors()
    msg = str(e.value)
    op = kw.get("op", SEQ)
    assert op in msg, msg
    for f in frags:
        assert f in msg, msg
    if litert_refuses:  # where LiteRT's prepare refuses too (others it runs with garbage or crashes)
        with pytest.raises(Exception):
            litert_interpreter(model)
