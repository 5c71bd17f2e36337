"""Random family (RANDOM_UNIFORM, RANDOM_STANDARD_NORMAL, MULTINOMIAL) beyond the one-invoke op
cases: the Philox stream over several invokes and after allocate_tensors / resize (bit-exact vs
LiteRT BUILTIN_WITHOUT_DEFAULT_DELEGATES for fixed seeds), seeds 0/0 (nondeterministic in both
engines: checked by distribution statistics against the exact distributions), bad models and
bad data (a clear error naming the op, never a crash), and the GPU delegate leaving them on the CPU
with a reason."""
import numpy as np
import pytest

import tflite_gpu
from harness import assert_refused, invoke_step, litert_interpreter, litert_refuses, our_interpreter
from op_cases.random import multinomial_model, random_model
from tflite_gpu.testing.builder import ModelBuilder

F32, I32, I64 = np.float32, np.int32, np.int64
RANDOM_OPS = ("RANDOM_UNIFORM", "RANDOM_STANDARD_NORMAL")


def _pair(model):
    return litert_interpreter(model), our_interpreter(model)


@pytest.mark.parametrize("op", RANDOM_OPS)
@pytest.mark.parametrize("reference", [False, True])
def test_stream_over_invokes_and_reallocation_matches_litert(op, reference):
    m = random_model(op, (5, 3), 31, 17)
    lite, ours = litert_interpreter(m), our_interpreter(m, reference=reference)
    for step in range(4):
        want, got = invoke_step(lite, [])[0], invoke_step(ours, [])[0]
        np.testing.assert_array_equal(got, want, err_msg=f"invoke {step}")
    for it in (lite, ours):  # allocate_tensors again: same behaviour as LiteRT (whatever it re-seeds)
        it.allocate_tensors()
    for step in range(2):
        np.testing.assert_array_equal(invoke_step(ours, [])[0], invoke_step(lite, [])[0], err_msg=f"after realloc {step}")


@pytest.mark.parametrize("op", RANDOM_OPS)
def test_dynamic_shape_resize_matches_litert(op):
    m = random_model(op, (1, 1), 3, 4, dynamic=True)
    lite, ours = _pair(m)
    for shape in ([2, 3], [5], [4, 1, 3], [2, 3], [2, 3]):
        for it in (lite, ours):  # a new rank of the shape input: a real resize, prepare seeds again
            it.resize_tensor_input(it.get_input_details()[0]["index"], [len(shape)])
            it.allocate_tensors()
        want = invoke_step(lite, [np.array(shape, I32)])[0]
        got = invoke_step(ours, [np.array(shape, I32)])[0]
        assert got.shape == tuple(shape)
        np.testing.assert_array_equal(got, want)


def test_multinomial_over_invokes_matches_litert():
    m = multinomial_model(3, 8, 11, 5, 6)
    lite, ours = _pair(m)
    x = np.random.default_rng(1).normal(0, 1, (3, 8)).astype(F32)
    for step in range(4):
        np.testing.assert_array_equal(invoke_step(ours, [x])[0], invoke_step(lite, [x])[0], err_msg=f"invoke {step}")


def test_multinomial_zero_samples():
    # LiteRT's Python cannot get_tensor an empty output ("Invalid tensor size"): shape checked here.
    it = our_interpreter(multinomial_model(2, 3, 0, 1, 1))
    out = invoke_step(it, [np.zeros((2, 3), F32)])[0]
    assert out.shape == (2, 0) and out.dtype == np.int64


# ------------------------------------------------------------------ seeds 0/0: statistics
N = 200_000


def test_seed_zero_is_nondeterministic_in_both_engines():
    m = random_model("RANDOM_UNIFORM", (64,), 0, 0)
    a, b = invoke_step(our_interpreter(m), [])[0], invoke_step(our_interpreter(m), [])[0]
    assert not np.array_equal(a, b), "two interpreters with seeds 0/0 drew the same numbers"
    la, lb = invoke_step(litert_interpreter(m), [])[0], invoke_step(litert_interpreter(m), [])[0]
    assert not np.array_equal(la, lb)  # LiteRT too: there is nothing to compare bit for bit


def test_seed_zero_uniform_statistics():
    x = invoke_step(our_interpreter(random_model("RANDOM_UNIFORM", (N,), 0, 0)), [])[0].astype(np.float64)
    assert x.min() >= 0.0 and x.max() < 1.0
    se = np.sqrt(1 / 12 / N)
    assert abs(x.mean() - 0.5) < 5 * se
    assert abs(x.var() - 1 / 12) < 5 * np.sqrt(1 / 180 / N)  # var of (u - 1/2)^2 is 1/180
    hist = np.histogram(x, bins=20, range=(0, 1))[0]
    chi2 = ((hist - N / 20) ** 2 / (N / 20)).sum()
    assert chi2 < 50.0, chi2  # 19 dof: P(chi2 > 50) ~ 1e-4


def test_seed_zero_normal_statistics():
    x = invoke_step(our_interpreter(random_model("RANDOM_STANDARD_NORMAL", (N,), 0, 0)), [])[0].astype(np.float64)
    assert abs(x.mean()) < 5 / np.sqrt(N)
    assert abs(x.var() - 1.0) < 5 * np.sqrt(2 / N)
    from math import erf, sqrt
    edges = np.array([-np.inf, -2, -1, -0.5, 0, 0.5, 1, 2, np.inf])
    cdf = np.array([0.0 if e == -np.inf else 1.0 if e == np.inf else 0.5 * (1 + erf(e / sqrt(2))) for e in edges])
    expect = np.diff(cdf) * N
    hist = np.histogram(x, bins=edges)[0]
    chi2 = ((hist - expect) ** 2 / expect).sum()
    assert chi2 < 35.0, chi2  # 7 dof


def test_seed_zero_multinomial_frequencies():
    logits = np.array([[0.0, 1.0, -1.0, 2.0, -np.inf]], F32)
    it = our_interpreter(multinomial_model(1, 5, N, 0, 0))
    s = invoke_step(it, [logits])[0].ravel()
    p = np.exp(logits[0].astype(np.float64) - 2.0)
    p /= p.sum()
    counts = np.bincount(s, minlength=5)
    assert counts[4] == 0
    for k in range(4):
        assert abs(counts[k] / N - p[k]) < 5 * np.sqrt(p[k] * (1 - p[k]) / N), (k, counts[k] / N, p[k])


# ------------------------------------------------------------------ bad models / bad data
def _model(op, ins, out, options=dict(seed=1, seed2=2)):
    """ins: (shape, dtype) graph inputs or ndarray constants; out: (shape, dtype)."""
    mb = ModelBuilder()
    idx = [mb.add_const(x) if isinstance(x, np.ndarray) else mb.add_input(list(x[0]), x[1]) for x in ins]
    y = mb.add_tensor(list(out[0]), out[1])
    mb.add_op(op, idx, [y], options=options)
    mb.mark_output(y)
    return mb.build()


BAD_MODELS = [
    # name, model, words in our message, LiteRT refuses it too
    ("shape_float", _model("RANDOM_UNIFORM", [np.array([2, 3], F32)], ((2, 3), F32)), ["shape input", "INT32"], True),
    ("shape_2d", _model("RANDOM_UNIFORM", [np.array([[2, 3]], I32)], ((2, 3), F32)), ["1-D"], True),
    ("output_int32", _model("RANDOM_STANDARD_NORMAL", [np.array([4], I32)], ((4,), I32)), ["FLOAT32"], False),
    ("negative_dim", _model("RANDOM_UNIFORM", [np.array([2, -3], I32)], ((2, 3), F32)), ["negative dimension"], True),
    ("huge", _model("RANDOM_UNIFORM", [np.array([1 << 30, 1 << 30], I32)], ((1, 1), F32)), ["too large"], True),
    ("too_many_dims", _model("RANDOM_UNIFORM", [np.ones(9, I32)], ((1,), F32)), ["at most 8"], False),
    ("two_inputs", _model("RANDOM_UNIFORM", [np.array([2], I32), np.array([2], I32)], ((2,), F32)), ["input"], True),
    ("logits_int32", _model("MULTINOMIAL", [((2, 3), I32), np.array(4, I32)], ((2, 4), I64)), ["logits", "FLOAT32"], True),
    ("logits_3d", _model("MULTINOMIAL", [((1, 2, 3), F32), np.array(4, I32)], ((2, 4), I64)), ["2-D"], True),
    ("no_classes", _model("MULTINOMIAL", [((2, 0), F32), np.array(4, I32)], ((2, 4), I64)), ["at least one class"], None),
    ("num_samples_float", _model("MULTINOMIAL", [((2, 3), F32), np.array(4.0, F32)], ((2, 4), I64)), ["num_samples"], True),
    ("num_samples_negative", _model("MULTINOMIAL", [((2, 3), F32), np.array(-1, I32)], ((2, 4), I64)), [">= 0"], None),
    ("num_samples_vector", _model("MULTINOMIAL", [((2, 3), F32), np.array([4], I32)], ((2, 4), I64)), ["scalar"], None),
    ("output_float", _model("MULTINOMIAL", [((2, 3), F32), np.array(4, I32)], ((2, 4), F32)), ["INT64 or INT32"], False),
]


@pytest.mark.parametrize("name,model,words,litert", BAD_MODELS, ids=[b[0] for b in BAD_MODELS])
def test_bad_model_is_a_clear_error(name, model, words, litert):
    # litert None: LiteRT checks it only at invoke (or not at all for the empty logits); True: it
    # refuses too; False: LiteRT accepts the model and fails in its own way or not at all.
    if litert:
        assert litert_refuses(model)
    msg = assert_refused(model, words=words)
    assert ("RANDOM" in msg) or ("MULTINOMIAL" in msg), msg


def test_bad_dynamic_data_is_a_runtime_error():
    m = random_model("RANDOM_UNIFORM", (1,), 1, 2, dynamic=True)
    # (LiteRT 2.3 itself crashes on this one: a segmentation fault, so it is not asked.)
    assert_refused(m, [np.array([-4], I32)], words=["negative dimension"], at_invoke=True)
    m = multinomial_model(2, 3, 1, 1, 2, dynamic=True)
    bad = [np.zeros((2, 3), F32), np.array(-5, I32)]
    assert litert_refuses(m, bad)
    assert_refused(m, bad, words=["num_samples", ">= 0"], at_invoke=True)


def test_no_options_table_means_seeds_zero():
    mb = ModelBuilder()
    s = mb.add_const(np.array([16], I32))
    y = mb.add_tensor([16], F32)
    mb.add_op("RANDOM_UNIFORM", [s], [y], options=None)
    mb.mark_output(y)
    x = invoke_step(our_interpreter(mb.build()), [])[0]
    assert x.shape == (16,) and np.all((x >= 0) & (x < 1))


# ------------------------------------------------------------------ GPU: stays on the CPU
@pytest.mark.parametrize("model", [random_model("RANDOM_UNIFORM", (4, 4), 1, 2),
                                   random_model("RANDOM_STANDARD_NORMAL", (4, 4), 1, 2),
                                   multinomial_model(2, 4, 3, 1, 2)], ids=["uniform", "normal", "multinomial"])
def test_gpu_delegate_leaves_them_on_the_cpu(model):
    from gpu_util import delegate
    d = delegate("F32")
    it = tflite_gpu.Interpreter(model_content=model, experimental_delegates=[d])
    it.allocate_tensors()
    rep = it.delegation_report()
    assert rep["delegated_nodes"] == 0 and rep["unsupported"] and all(u[3] for u in rep["unsupported"]), rep
    ins = [np.zeros(x["shape"], x["dtype"]) for x in it.get_input_details()]
    want = invoke_step(litert_interpreter(model), ins)[0]
    np.testing.assert_array_equal(invoke_step(it, ins)[0], want)
