"""Full-integer LSTM / UNIDIRECTIONAL_SEQUENCE_LSTM (issue 7): state carried over several invokes
and reset, exact against LiteRT's builtin kernels (BUILTIN_WITHOUT_DEFAULT_DELEGATES), and hostile
quantization parameters refused at allocate_tensors with a ValueError naming the tensor. Both
integer forms: 8x8_16 (5 intermediates, LSTM and the sequence op) and 8x8_8 (12 intermediates,
LSTM only, the forms LiteRT runs; a random sample of them, all of the sweep with
TFLITE_GPU_TEST_FULL=1). The single-invoke cases live in tests/op_cases/lstm.py (int8_*, int8x8_8_*)."""
import os
import subprocess
import sys
import tempfile

import numpy as np
import pytest

import tflite_gpu
from harness import invoke_step, litert_interpreter, our_interpreter
from op_cases.lstm import SEQ, bidi_lstm_model, int8_lstm_model, int8x8_8_lstm_model, lstm_model


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
    ("8x8_8_sequence_op", dict(n_intermediates=12, layer_norm=True, projection=True, n_output=5, proj_bias=True,
                               cell_scale=2.0 ** -15), ["12-intermediate", "8x8_8", "LSTM-only", "5 intermediate"],
     True),
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


# ---------------------------------------------------------------------------------------- 8x8_8
FULL = bool(os.environ.get("TFLITE_GPU_TEST_FULL"))


def _run_both(model, steps, seed, reset_at=None):
    theirs = litert_interpreter(model)
    ours = our_interpreter(model)
    shape = theirs.get_input_details()[0]["shape"]
    rng = np.random.default_rng(seed)
    for i in range(steps):
        if i == reset_at:
            theirs.reset_all_variables()
            ours.reset_all_variables()
        x = rng.integers(-128, 128, shape).astype(np.int8)
        np.testing.assert_array_equal(invoke_step(ours, [x])[0], invoke_step(theirs, [x])[0], err_msg=f"invoke {i}")


@pytest.mark.parametrize("kw", [
    dict(),
    dict(cifg=True, peephole=True, batch=3, cell_clip=0.3, proj_clip=0.1),
], ids=["basic", "cifg_peephole_clips"])
def test_8x8_8_state_over_invokes_and_reset(kw):
    _run_both(int8x8_8_lstm_model(**kw), steps=6, seed=3, reset_at=4)


def _random_8x8_8(rng):
    """Random geometry, options, and scales / zero points of the input, the output state and the
    12 intermediates (sums ~1e-5..2e-3, matmul outputs 0.005..0.2 with zero points in [-10, 10))."""
    inter8 = [(float(rng.uniform(1e-5, 2e-3)), 0) if i % 3 == 0 else
              (float(rng.uniform(0.005, 0.2)), int(rng.integers(-10, 10))) for i in range(12)]
    return dict(n_cell=int(rng.integers(1, 40)), n_output=int(rng.integers(1, 40)), n_input=int(rng.integers(1, 30)),
                batch=int(rng.integers(1, 5)), cifg=bool(rng.integers(2)), peephole=bool(rng.integers(2)),
                seed=int(rng.integers(1000)), cell_clip=float(rng.choice([0, 0.3, 0.9, 1.5])),
                proj_clip=float(rng.choice([0, 0.05, 0.5])),
                x_q=(float(rng.uniform(0.005, 0.1)), int(rng.integers(-20, 20))),
                h_q=(float(rng.uniform(0.003, 0.05)), int(rng.integers(-20, 20))), inter8=inter8)


SWEEP = list(range(60)) if FULL else [0, 17, 33, 58]  # a fixed sample in the fast run


@pytest.mark.parametrize("trial", SWEEP)
def test_8x8_8_random_sweep(trial):
    kw = _random_8x8_8(np.random.default_rng(1000 + trial))
    _run_both(int8x8_8_lstm_model(**kw), steps=4, seed=trial)


def _litert_crashes(model):
    """Whether LiteRT's builtin kernels die on the model (allocate + one invoke of zeros) in a child."""
    with tempfile.NamedTemporaryFile(suffix=".tflite", delete=False) as f:
        f.write(model)
    code = ("import sys, numpy as np\n"
            "from ai_edge_litert.interpreter import Interpreter, OpResolverType\n"
            "it = Interpreter(model_path=sys.argv[1], experimental_op_resolver_type="
            "OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)\n"
            "it.allocate_tensors()\n"
            "d = it.get_input_details()[0]\n"
            "it.set_tensor(d['index'], np.zeros(d['shape'], d['dtype']))\n"
            "it.invoke()\n")
    try:
        p = subprocess.run([sys.executable, "-c", code, f.name], capture_output=True, timeout=120,
                           cwd=tempfile.gettempdir())
    finally:
        os.unlink(f.name)
    return p.returncode < 0


# 8x8_8 forms LiteRT 2.3 does not run: without layer norm, a projection or a projection bias its kernel
# dereferences a null pointer (SIGSEGV, checked in a child process); we refuse them.
@pytest.mark.parametrize("kw,frag", [
    (dict(layer_norm=False), "layer norm coefficients"),
    (dict(projection=False, proj_bias=False), "projection_weights"),
    (dict(proj_bias=False), "projection_bias"),
], ids=["no_layer_norm", "no_projection", "no_projection_bias"])
def test_8x8_8_forms_litert_crashes_on_are_refused(kw, frag):
    model = int8x8_8_lstm_model(**kw)
    with pytest.raises(ValueError) as e:
        tflite_gpu.Interpreter(model_content=model).allocate_tensors()
    msg = str(e.value)
    for f in ("LSTM", "12-intermediate", "8x8_8", frag, "crashes"):
        assert f in msg, msg
    assert _litert_crashes(model), "LiteRT ran it: the refusal's reason no longer holds"


def _inter8(i, scale=None, zp=None, quant="keep"):
    def mutate(P):
        q = P["intermediates"][i]["quant"]
        if quant is None:
            P["intermediates"][i] = dict(P["intermediates"][i], quant=None)
        else:
            P["intermediates"][i] = dict(P["intermediates"][i], quant=dict(
                scale=[q["scale"][0] if scale is None else scale], zero_point=[q["zero_point"][0] if zp is None else zp]))
    return mutate


# Hostile quantization of the 8x8_8 form: ValueError at allocate_tensors naming the tensor. LiteRT's
# prepare flags a cell state scale other than 2^-15 but then runs anyway (its kernel assumes Q0.15);
# a missing intermediate quantization crashes it.
@pytest.mark.parametrize("kw,frags", [
    (dict(cell_scale_override=2.0 ** -11), ["cell_state", "2^-15"]),
    (dict(mutate=_inter8(4, quant=None)), ["intermediate 4", "forget gate W_x x", "no quantization"]),
    (dict(mutate=_inter8(9, scale=0.0)), ["intermediate 9", "output gate sum", "scale"]),
    (dict(mutate=_inter8(11, scale=float("inf"))), ["intermediate 11", "output gate W_h h", "scale"]),
    (dict(mutate=_inter8(7, zp=200)), ["intermediate 7", "cell gate W_x x", "zero point 200"]),
    (dict(mutate=_set("projection_bias", data=np.zeros(5, np.int16))), ["projection_bias", "INT32"]),
    (dict(mutate=_set("forget_layer_norm_coefficients", quant=Q(float("nan")))),
     ["forget_layer_norm_coefficients", "scale"]),
], ids=["cell_scale_2e-11", "intermediate_no_quant", "sum_zero_scale", "inf_scale", "zero_point_out_of_range",
        "projection_bias_int16", "layer_norm_nan_scale"])
def test_8x8_8_hostile_quantization_is_refused(kw, frags):
    kw = dict(kw)
    cs = kw.pop("cell_scale_override", None)
    if cs is not None:
        from op_cases.lstm import inter8_default
        model = int8_lstm_model(op="LSTM", layer_norm=True, projection=True, proj_bias=True, n_output=5,
                                cell_scale=cs, hidden_q=(2.0 ** -15, 0), n_intermediates=12, inter8=inter8_default())
    else:
        model = int8x8_8_lstm_model(**kw)
    with pytest.raises(ValueError) as e:
        tflite_gpu.Interpreter(model_content=model).allocate_tensors()
    msg = str(e.value)
    for f in ["LSTM"] + frags:
        assert f in msg, msg


# ---------------------------------------------------------------------------------------- hybrid
# Dynamic-range (hybrid) LSTM, UNIDIRECTIONAL_SEQUENCE_LSTM and BIDIRECTIONAL_SEQUENCE_LSTM, symmetric
# and asymmetric_quantize_inputs, exact against LiteRT builtin over 4 invokes (one of all-zero inputs):
# the int8 products are exact, the float steps are TFLite's in its order, the activations are the
# Eigen functions LiteRT's build runs and its asymmetric row scale is computed in float (lstm.cc).
# Before those two, 1-ulp differences could grow into one int8 step of a re-quantized row (2 of 350
# random models, rel-L2 up to 1.6e-2). A fixed sample; TFLITE_GPU_TEST_FULL=1 runs 60 models.
def _random_hybrid(rng, trial):
    kind = ["LSTM", SEQ, "BIDI"][int(rng.integers(3))]
    asym, cifg, peep = (bool(rng.integers(2)) for _ in range(3))
    nc, ni, batch = int(rng.integers(1, 30)), int(rng.integers(1, 20)), int(rng.integers(1, 4))
    clips = dict(cell_clip=float(rng.choice([0, 0.5])), proj_clip=float(rng.choice([0, 0.3])))
    if kind == "BIDI":
        proj = bool(rng.integers(2))
        aux = [None, "cross", "bw_input"][int(rng.integers(3))]
        fo = int(rng.integers(1, 20)) if proj else None
        tm, merge = bool(rng.integers(2)), bool(rng.integers(2))
        if merge and not tm:
            batch = 1  # LiteRT's merged batch-major path reads past its state for batch > 1 (test_sequence_ops)
        kw = dict(batch=batch, time=int(rng.integers(1, 5)), n_input=ni, fw_cell=nc, bw_cell=nc, fw_out=fo, bw_out=fo,
                  cifg=cifg, peephole=peep, proj_bias=proj and bool(rng.integers(2)), merge_outputs=merge,
                  time_major=tm, aux=aux, aux_size=(ni if aux == "bw_input" else int(rng.integers(1, 8))) if aux else None,
                  seed=trial, hybrid=True, asymmetric=asym, version=3, **clips)
        return bidi_lstm_model(**kw), kw
    proj, ln = bool(rng.integers(2)), bool(rng.integers(2))
    kw = dict(op=kind, batch=batch, time=int(rng.integers(1, 5)), n_input=ni, n_cell=nc,
              n_output=int(rng.integers(1, 20)) if proj else None, cifg=cifg, peephole=peep, projection=proj,
              proj_bias=proj and bool(rng.integers(2)), layer_norm=ln, time_major=bool(rng.integers(2)), seed=trial,
              hybrid=True, asymmetric=asym, version=3, act=["TANH", "RELU", "NONE"][int(rng.integers(3))], **clips)
    return lstm_model(**kw), kw


HYBRID_SWEEP = list(range(60)) if FULL else [1, 4, 9, 14, 22, 37, 40, 51]


@pytest.mark.parametrize("trial", HYBRID_SWEEP)
def test_hybrid_random_sweep(trial):
    model, kw = _random_hybrid(np.random.default_rng(500 + trial), trial)
    theirs = litert_interpreter(model)
    ours = our_interpreter(model, reference=bool(trial % 2))
    rng = np.random.default_rng(trial)
    for i in range(4):
        xs = [(rng.standard_normal(d["shape"]) * (0.5 if i % 2 else 2.0)).astype(np.float32)
              for d in theirs.get_input_details()]
        if i == 1:
            xs = [np.zeros_like(x) for x in xs]
        for a, b in zip(invoke_step(theirs, xs), invoke_step(ours, xs)):
            np.testing.assert_array_equal(b, a, err_msg=f"invoke {i} ({kw})")


def _uint8_weight(mb, v, hybrid):
    s = float(np.abs(v).max()) / 127.0 or 1.0
    return mb.add_const((np.clip(np.round(v / s), -127, 127) + 128).astype(np.uint8),
                        quant=dict(scale=[s], zero_point=[128]))


def _per_channel_weight(mb, v, hybrid):
    if v.ndim == 1:
        s = float(np.abs(v).max()) / 127.0 or 1.0
        return mb.add_const(np.clip(np.round(v / s), -127, 127).astype(np.int8), quant=dict(scale=[s], zero_point=[0]))
    s = np.abs(v).max(axis=1) / 127.0
    return mb.add_const(np.clip(np.round(v / s[:, None]), -127, 127).astype(np.int8),
                        quant=dict(scale=[float(x) for x in s], zero_point=[0] * len(s), quantized_dimension=0))


# Hybrid forms LiteRT 2.3 runs but computes garbage with: UINT8 weights (read through int8_t
# pointers), per-channel weight scales (its hybrid LSTM reads one scale per tensor), INT8 diagonal
# recurrent weights (read as float32, past the tensor). We refuse them with a ValueError naming why.
@pytest.mark.parametrize("weight,kw,frags", [
    (_uint8_weight, dict(version=2), ["input_to_output_weights", "UINT8", "INT8"]),
    (_per_channel_weight, dict(version=2), ["per-channel"]),
    (None, dict(diagonal=True, version=4), ["diagonal", "hybrid"]),
], ids=["uint8_weights", "per_channel_weights", "diagonal_int8"])
def test_hybrid_forms_litert_misreads_are_refused(weight, kw, frags, monkeypatch):
    import op_cases.lstm as L
    if weight is not None:
        monkeypatch.setattr(L, "_weight", weight)
    model = L.lstm_model(hybrid=True, **kw)
    litert_interpreter(model)  # LiteRT accepts it
    with pytest.raises(ValueError) as e:
        tflite_gpu.Interpreter(model_content=model).allocate_tensors()
    msg = str(e.value)
    for f in [SEQ] + frags:
        assert f in msg, msg
