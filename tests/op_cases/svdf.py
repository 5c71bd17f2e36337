"""SVDF: float, hybrid (int8 weights, float activations, symmetric/asymmetric input
quantization) and integer (int8 input/output, int16 state and weights_time), against LiteRT's
builtin kernel (BUILTIN_WITHOUT_DEFAULT_DELEGATES). A CPU op (variable state)."""
import numpy as np

from harness import OpCase
from tflite_gpu.testing.builder import ModelBuilder


def _sym(w, dtype=np.int8, qmax=127):
    scale = float(np.abs(w).max()) / qmax
    return np.clip(np.round(w / scale), -qmax, qmax).astype(dtype), scale


def svdf_model(batch=2, n_input=5, units=4, rank=1, memory=3, bias=True, act="NONE", mode="float",
               asymmetric=False, seed=0, version=None, options="default"):
    rng = np.random.default_rng(seed)
    F = units * rank
    mb = ModelBuilder()
    wf = (rng.standard_normal((F, n_input)) / np.sqrt(n_input)).astype(np.float32)
    wt = (rng.standard_normal((F, memory)) / np.sqrt(memory)).astype(np.float32)
    bv = (0.1 * rng.standard_normal(units)).astype(np.float32)
    if mode == "integer":
        x = mb.add_input([batch, n_input], np.int8, name="input", quant=dict(scale=[0.03], zero_point=[3]))
        q, s = _sym(wf)
        wf_t = mb.add_const(q, quant=dict(scale=[s], zero_point=[0]))
        q, s2 = _sym(wt, np.int16, 32767)
        wt_t = mb.add_const(q, quant=dict(scale=[s2], zero_point=[0]))
        st_scale = 0.0005
        b_t = mb.add_const(np.round(bv / (st_scale * s2)).astype(np.int32),
                           quant=dict(scale=[st_scale * s2], zero_point=[0])) if bias else -1
        st = mb.add_tensor([batch, memory * F], np.int16, name="state", is_variable=True,
                           quant=dict(scale=[st_scale], zero_point=[0]))
        y = mb.add_tensor([batch, units], np.int8, name="output", quant=dict(scale=[0.02], zero_point=[-5]))
    else:
        x = mb.add_input([batch, n_input], name="input")
        if mode == "hybrid":
            q, s = _sym(wf)
            wf_t = mb.add_const(q, quant=dict(scale=[s], zero_point=[0]))
            q, s = _sym(wt)
            wt_t = mb.add_const(q, quant=dict(scale=[s], zero_point=[0]))
        else:
            wf_t, wt_t = mb.add_const(wf), mb.add_const(wt)
        b_t = mb.add_const(bv) if bias else -1
        st = mb.add_tensor([batch, memory * F], name="state", is_variable=True)
        y = mb.add_tensor([batch, units], name="output")
    mb.mark_output(y)
    opts = dict(rank=rank, fused_activation_function=act, asymmetric_quantize_inputs=asymmetric)
    if options != "default":
        opts = options
    if version is None:
        version = {"float": 1, "hybrid": 4 if asymmetric else 2, "integer": 3}[mode]
    mb.add_op("SVDF", [x, wf_t, wt_t, b_t, st], [y], options=opts, version=version)
    return mb.build()


def _case(name, tol=1e-5, **kw):
    batch, n_input, mode = kw.get("batch", 2), kw.get("n_input", 5), kw.get("mode", "float")

    def gen(rng):
        if mode == "integer":
            return [rng.integers(-128, 128, (batch, n_input)).astype(np.int8)]
        return [rng.standard_normal((batch, n_input)).astype(np.float32)]
    c = OpCase("SVDF", name, lambda: svdf_model(**kw), gen, tol=tol,
               quant={"float": None, "hybrid": "hybrid", "integer": "int8"}[mode])
    c.gpu = False
    c.note = "GPU: CPU op (variable state)"
    return c


CASES = [
    _case("basic"),
    _case("rank2_relu", rank=2, act="RELU", memory=4),
    _case("no_bias_tanh", bias=False, act="TANH", batch=1),
    _case("wide", batch=3, n_input=40, units=16, rank=2, memory=10, act="RELU6"),
    _case("memory1", memory=1),
    _case("hybrid", mode="hybrid", rank=2),
    _case("hybrid_asymmetric", mode="hybrid", asymmetric=True, act="RELU", batch=3),
    _case("hybrid_no_bias", mode="hybrid", bias=False, memory=5),
    _case("integer", mode="integer", act="RELU"),
    _case("integer_rank2_no_bias", mode="integer", act="RELU", rank=2, bias=False, memory=4, batch=3),
]
