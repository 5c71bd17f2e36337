"""Basic RNN family: RNN, UNIDIRECTIONAL_SEQUENCE_RNN, BIDIRECTIONAL_SEQUENCE_RNN (float32 and
hybrid: int8 weights, float activations, symmetric or asymmetric input quantization), against
LiteRT's builtin kernels (BUILTIN_WITHOUT_DEFAULT_DELEGATES). CPU ops: the GPU delegate leaves
them on the CPU (variable state tensors)."""
import numpy as np

from harness import OpCase
from tflite_gpu.testing.builder import ModelBuilder

UNI, BIDI = "UNIDIRECTIONAL_SEQUENCE_RNN", "BIDIRECTIONAL_SEQUENCE_RNN"


def _weights(mb, rng, shape, hybrid):
    w = (rng.standard_normal(shape) / np.sqrt(shape[-1])).astype(np.float32)
    if not hybrid:
        return mb.add_const(w)
    scale = float(np.abs(w).max()) / 127.0
    q = np.clip(np.round(w / scale), -127, 127).astype(np.int8)
    return mb.add_const(q, quant=dict(scale=[scale], zero_point=[0]))


def rnn_model(op="RNN", batch=2, time=3, n_input=4, units=5, bw_units=None, act="TANH",
              time_major=False, hybrid=False, asymmetric=False, merge_outputs=False, aux=None,
              aux_size=None, version=None, seed=0, options="default"):
    """A one-op RNN-family model with random constant weights and variable hidden state(s).
    aux (BIDIRECTIONAL only): None, 'cross' (aux_input with aux weights for both cells) or
    'bw_input' (aux_input without aux weights: LiteRT's non-stacking mode)."""
    rng = np.random.default_rng(seed)
    bw_units = bw_units or units
    aux_size = aux_size or n_input
    mb = ModelBuilder()
    if op == "RNN":
        shape = [batch, n_input]
    else:
        shape = [time, batch, n_input] if time_major else [batch, time, n_input]
    x = mb.add_input(shape, name="input")

    def bias(n):
        return mb.add_const((0.1 * rng.standard_normal(n)).astype(np.float32))

    def state(n, name):
        return mb.add_tensor([batch, n], name=name, is_variable=True)

    def out(n, name):
        t = mb.add_tensor(shape[:-1] + [n], name=name)
        mb.mark_output(t)
        return t

    if op != BIDI:
        ins = [x, _weights(mb, rng, (units, n_input), hybrid), _weights(mb, rng, (units, units), hybrid),
               bias(units), state(units, "hidden_state")]
        outs = [out(units, "output")]
        if op == "RNN":
            opts = dict(fused_activation_function=act, asymmetric_quantize_inputs=asymmetric)
        else:
            opts = dict(time_major=time_major, fused_activation_function=act,
                        asymmetric_quantize_inputs=asymmetric)
    else:
        a = mb.add_input(shape[:-1] + [aux_size], name="aux_input") if aux else -1
        fw = [_weights(mb, rng, (units, n_input), hybrid), _weights(mb, rng, (units, units), hybrid),
              bias(units), state(units, "fw_hidden_state")]
        bw = [_weights(mb, rng, (bw_units, n_input), hybrid), _weights(mb, rng, (bw_units, bw_units), hybrid),
              bias(bw_units), state(bw_units, "bw_hidden_state")]
        if aux == "cross":
            aw = [_weights(mb, rng, (units, aux_size), hybrid), _weights(mb, rng, (bw_units, aux_size), hybrid)]
        else:
            aw = [-1, -1]
        ins = [x] + fw + bw + [a] + aw
        if merge_outputs:
            outs = [out(units + bw_units, "output")]
        else:
            outs = [out(units, "fw_output"), out(bw_units, "bw_output")]
        opts = dict(time_major=time_major, fused_activation_function=act, merge_outputs=merge_outputs,
                    asymmetric_quantize_inputs=asymmetric)
    if options != "default":
        opts = options
    if version is None:
        version = (3 if asymmetric else 2) if hybrid else 1
    mb.add_op(op, ins, outs, options=opts, version=version)
    return mb.build()


def _inputs(op, batch=2, time=3, n_input=4, time_major=False, aux=None, aux_size=None, **_):
    if op == "RNN":
        shape = [batch, n_input]
    else:
        shape = [time, batch, n_input] if time_major else [batch, time, n_input]

    def gen(rng):
        xs = [rng.standard_normal(shape).astype(np.float32)]
        if aux:
            xs.append(rng.standard_normal(shape[:-1] + [aux_size or n_input]).astype(np.float32))
        return xs
    return gen


def _case(op, name, tol=1e-5, **kw):
    c = OpCase(op, name, lambda: rnn_model(op, **kw), _inputs(op, **kw), tol=tol,
               quant="hybrid" if kw.get("hybrid") else None)
    c.gpu = False
    c.note = "GPU: CPU op (variable hidden state updated in place)"
    return c


CASES = [
    _case("RNN", "basic"),
    _case("RNN", "batch1_relu", batch=1, act="RELU"),
    _case("RNN", "act_none", act="NONE", units=8, n_input=3),
    _case("RNN", "relu6_wide", act="RELU6", batch=3, n_input=37, units=19),
    _case("RNN", "no_options", options=None),
    _case("RNN", "hybrid", hybrid=True, batch=3, n_input=9, units=6),
    _case("RNN", "hybrid_asymmetric", hybrid=True, asymmetric=True, batch=2, n_input=9, units=6),
    _case(UNI, "basic"),
    _case(UNI, "time_major", time_major=True),
    _case(UNI, "long_relu_n1", time=10, batch=1, act="RELU_N1_TO_1", units=7),
    _case(UNI, "sign_bit", act="SIGN_BIT"),
    _case(UNI, "wide", batch=3, time=4, n_input=33, units=21),
    _case(UNI, "hybrid", hybrid=True, time=4, units=7),
    _case(UNI, "hybrid_time_major", hybrid=True, time_major=True, time=4),
    _case(UNI, "hybrid_asymmetric", hybrid=True, asymmetric=True, n_input=11),
    _case(UNI, "hybrid_asymmetric_time_major", hybrid=True, asymmetric=True, time_major=True, batch=3),
    _case(BIDI, "basic"),
    _case(BIDI, "time_major", time_major=True, bw_units=6),
    _case(BIDI, "merge", merge_outputs=True, bw_units=3),
    _case(BIDI, "merge_time_major", merge_outputs=True, time_major=True, batch=3),
    _case(BIDI, "aux_cross", aux="cross", aux_size=6),
    _case(BIDI, "aux_cross_time_major_merge", aux="cross", time_major=True, merge_outputs=True),
    _case(BIDI, "aux_bw_input_time_major", aux="bw_input", time_major=True),
    _case(BIDI, "aux_bw_input_batch_major", aux="bw_input"),
    _case(BIDI, "relu_batch1", act="RELU", batch=1, time=5),
    _case(BIDI, "hybrid", hybrid=True, units=6, bw_units=4),
    _case(BIDI, "hybrid_merge_asymmetric", hybrid=True, asymmetric=True, merge_outputs=True),
    _case(BIDI, "hybrid_time_major", hybrid=True, time_major=True),
    _case(BIDI, "hybrid_aux_cross", hybrid=True, aux="cross", asymmetric=True),
]
