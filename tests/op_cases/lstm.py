"""LSTM family: UNIDIRECTIONAL_SEQUENCE_LSTM, LSTM (FULL and BASIC kernels) and BIDIRECTIONAL_SEQUENCE_LSTM, float32."""
import numpy as np

from harness import OpCase
from tflite_gpu.testing.builder import ModelBuilder

SEQ = "UNIDIRECTIONAL_SEQUENCE_LSTM"


def _weight(mb, v, hybrid):
    """A constant weight: float32, or (hybrid) int8 with one symmetric scale max|v| / 127."""
    if not hybrid:
        return mb.add_const(v)
    s = float(np.abs(v).max()) / 127.0 or 1.0
    q = np.clip(np.round(v / s), -127, 127).astype(np.int8)
    return mb.add_const(q, quant=dict(scale=[s], zero_point=[0]))


def lstm_model(op=SEQ, batch=2, time=3, n_input=5, n_cell=7, n_output=None, cifg=False,
               peephole=False, projection=False, proj_bias=False, layer_norm=False,
               n_inputs=24, time_major=False, act="TANH", cell_clip=0.0, proj_clip=0.0,
               seed=0, version=1, diagonal=False, options="default", hybrid=False, asymmetric=False):
    """A one-op LSTM model (24- or 20-input form) with random constant weights and variable
    state tensors. op: UNIDIRECTIONAL_SEQUENCE_LSTM ([batch, time, in] or time-major) or LSTM
    (FULL kernel, [batch, in]). hybrid: int8 weights (one scale each, zero point 0: the
    dynamic-range kernel), asymmetric: its asymmetric_quantize_inputs option."""
    rng = np.random.default_rng(seed)
    n_output = n_output if n_output is not None else n_cell
    if not projection:
        assert n_output == n_cell
    mb = ModelBuilder()
    if op == SEQ:
        shape = [time, batch, n_input] if time_major else [batch, time, n_input]
        oshape = shape[:2] + [n_output]
    else:
        shape, oshape = [batch, n_input], [batch, n_output]
    x = mb.add_input(shape, name="input")

    def w(*shp):
        fan = shp[-1] if len(shp) > 1 else 4
        return _weight(mb, (rng.standard_normal(shp) / np.sqrt(fan)).astype(np.float32), hybrid)

    def b(val=0.0, n=n_cell):
        return mb.add_const((val + 0.1 * rng.standard_normal(n)).astype(np.float32))

    ins = [x]
    ins += [-1 if cifg else w(n_cell, n_input)] + [w(n_cell, n_input) for _ in range(3)]
    if diagonal:
        ins += [-1 if cifg else w(n_cell)] + [w(n_cell) for _ in range(3)]
    else:
        ins += [-1 if cifg else w(n_cell, n_output)] + [w(n_cell, n_output) for _ in range(3)]
    if peephole:
        ins += [-1 if cifg else w(n_cell), w(n_cell), w(n_cell)]
    else:
        ins += [-1, -1, -1]
    ins += [-1 if cifg else b(), b(1.0), b(), b()]
    ins += [w(n_output, n_cell) if projection else -1,
            b(0.0, n_output) if (projection and proj_bias) else -1]
    ins += [mb.add_tensor([batch, n_output], name="output_state", is_variable=True),
            mb.add_tensor([batch, n_cell], name="cell_state", is_variable=True)]
    if n_inputs == 24:
        if layer_norm:
            ins += [-1 if cifg else b(1.0), b(1.0), b(1.0), b(1.0)]
        else:
            ins += [-1, -1, -1, -1]
    y = mb.add_tensor(oshape, name="output")
    mb.mark_output(y)
    if op == SEQ:
        opts = dict(fused_activation_function=act, cell_clip=cell_clip, proj_clip=proj_clip,
                    time_major=time_major)
        if asymmetric:
            opts["asymmetric_quantize_inputs"] = True
        if diagonal:
            opts["diagonal_recurrent_tensors"] = True
    else:
        opts = dict(fused_activation_function=act, cell_clip=cell_clip, proj_clip=proj_clip,
                    kernel_type="FULL")
        if asymmetric:
            opts["asymmetric_quantize_inputs"] = True
    if options != "default":
        opts = options
    mb.add_op(op, ins, [y], options=opts, version=version)
    return mb.build()


def basic_lstm_model(batch=1, n_input=8, n_units=16, seed=0, outputs=(0, 1, 2, 3), act="TANH",
                     cell_clip=0.0, proj_clip=0.0, version=2):
    rng = np.random.default_rng(seed)
    mb = ModelBuilder()
    x = mb.add_input([batch, n_input], name="input")
    prev_act = mb.add_input([batch, n_units], name="prev_activation")
    wts = mb.add_const((rng.standard_normal((4 * n_units, n_input + n_units)) /
                        np.sqrt(n_input + n_units)).astype(np.float32))
    bias = mb.add_const((0.1 * rng.standard_normal(4 * n_units)).astype(np.float32))
    prev_state = mb.add_input([batch, n_units], name="prev_state")
    outs = [mb.add_tensor([batch, n_units], name="activation"),
            mb.add_tensor([batch, n_units], name="state"),
            mb.add_tensor([batch, n_input + n_units], name="concat_temp"),
            mb.add_tensor([batch, 4 * n_units], name="activation_temp")]
    for i in outputs:
        mb.mark_output(outs[i])
    mb.add_op("LSTM", [x, prev_act, wts, bias, prev_state], outs,
              options=dict(fused_activation_function=act, cell_clip=cell_clip,
                           proj_clip=proj_clip, kernel_type="BASIC"), version=version)
    return mb.build()


def _seq_inputs(shape):
    return lambda rng: [rng.standard_normal(shape).astype(np.float32)]


def _seq_case(name, **kw):
    op = kw.get("op", SEQ)
    batch, time, n_input = kw.get("batch", 2), kw.get("time", 3), kw.get("n_input", 5)
    if op == SEQ:
        shape = [time, batch, n_input] if kw.get("time_major") else [batch, time, n_input]
    else:
        shape = [batch, n_input]
    return OpCase(op, name, lambda: lstm_model(**kw), _seq_inputs(shape))


def _basic_case(name, **kw):
    batch, ni, nu = kw.get("batch", 1), kw.get("n_input", 8), kw.get("n_units", 16)
    return OpCase("LSTM", name, lambda: basic_lstm_model(**kw),
                  lambda rng: [rng.standard_normal((batch, ni)).astype(np.float32),
                               rng.standard_normal((batch, nu)).astype(np.float32),
                               rng.standard_normal((batch, nu)).astype(np.float32)])


CASES = [
    _seq_case("basic"),
    _seq_case("20_inputs", n_inputs=20),
    _seq_case("time_major", time_major=True),
    _seq_case("batch1_long", batch=1, time=12, n_input=6, n_cell=9),
    _seq_case("cifg", cifg=True),
    _seq_case("peephole", peephole=True),
    _seq_case("cifg_peephole", cifg=True, peephole=True),
    _seq_case("projection", projection=True, n_output=4),
    _seq_case("projection_bias_clip", projection=True, proj_bias=True, n_output=5, proj_clip=0.2),
    _seq_case("cell_clip", cell_clip=0.3),
    _seq_case("layer_norm", layer_norm=True),
    _seq_case("layer_norm_cifg_peephole", layer_norm=True, cifg=True, peephole=True),
    _seq_case("everything", layer_norm=True, peephole=True, projection=True, proj_bias=True,
              n_output=4, cell_clip=0.5, proj_clip=0.3, time_major=True, batch=3),
    _seq_case("act_none_quirk", act="NONE"),
    _seq_case("act_relu", act="RELU"),
    _seq_case("act_relu6", act="RELU6"),
    _seq_case("act_relu_n1_to_1", act="RELU_N1_TO_1", cifg=True),
    _seq_case("act_sign_bit", act="SIGN_BIT"),
    _seq_case("no_options", options=None),
    _seq_case("diagonal_recurrent", diagonal=True, version=4),
    _seq_case("diagonal_cifg_peephole", diagonal=True, cifg=True, peephole=True, version=4),
    _seq_case("large", batch=2, time=5, n_input=40, n_cell=96, projection=True, n_output=48),
    _seq_case("large_threads", batch=4, time=3, n_input=64, n_cell=160),
    _seq_case("v2", version=2),
    _seq_case("v3", version=3, peephole=True),
    _seq_case("input_size_1", n_input=1, n_cell=3),
    _seq_case("full", op="LSTM"),
    _seq_case("full_20_inputs", op="LSTM", n_inputs=20, batch=3),
    _seq_case("full_cifg_peephole_proj", op="LSTM", cifg=True, peephole=True, projection=True,
              proj_bias=True, n_output=3, proj_clip=0.4, cell_clip=0.6),
    _seq_case("full_layer_norm", op="LSTM", layer_norm=True, batch=1),
    _seq_case("full_act_none", op="LSTM", act="NONE"),
    _seq_case("full_v4", op="LSTM", version=4),
    _basic_case("basic_kernel"),
    _basic_case("basic_kernel_batch3", batch=3, n_input=5, n_units=7),
    _basic_case("basic_kernel_big", batch=2, n_input=70, n_units=64),
    _basic_case("basic_kernel_relu_ignored", act="RELU", cell_clip=1.0),
    _basic_case("basic_kernel_v1", version=1, batch=2),
    _basic_case("basic_kernel_outputs01", outputs=(0, 1)),
]

# GPU delegate (gpu_lstm.cc): only the BASIC kernel runs there; the FULL kernel and the sequence
# op keep their state in variable tensors updated in place, which the delegate does not keep.
for _c in CASES:
    if _c.op == SEQ or not _c.name.startswith("basic_kernel"):
        _c.gpu = False
        _c.note = "GPU: variable state tensors (only the BASIC LSTM kernel runs on the GPU)"
CASES.append(_basic_case("basic_kernel_gpu_lanes", batch=2, n_input=4, n_units=6))


BIDI = "BIDIRECTIONAL_SEQUENCE_LSTM"


def bidi_lstm_model(batch=2, time=3, n_input=4, fw_cell=5, bw_cell=5, fw_out=None, bw_out=None,
                    cifg=False, peephole=False, proj_bias=False, merge_outputs=False, time_major=True,
                    act="TANH", cell_clip=0.0, proj_clip=0.0, aux=None, aux_size=None, seed=0,
                    options="default", hybrid=False, asymmetric=False, version=1):
    """A one-op BIDIRECTIONAL_SEQUENCE_LSTM (48 inputs) with random constant weights and variable
    states. fw_out/bw_out: projection sizes (None: no projection). aux: None, 'cross' (aux_input
    with aux weights for both cells) or 'bw_input' (aux_input without aux weights)."""
    rng = np.random.default_rng(seed)
    aux_size = aux_size or n_input
    mb = ModelBuilder()
    shape = [time, batch, n_input] if time_major else [batch, time, n_input]
    x = mb.add_input(shape, name="input")
    a = mb.add_input(shape[:2] + [aux_size], name="aux_input") if aux else -1

    def w(*shp):
        fan = shp[-1] if len(shp) > 1 else 4
        return _weight(mb, (rng.standard_normal(shp) / np.sqrt(fan)).astype(np.float32), hybrid)

    def b(n, val=0.0):
        return mb.add_const((val + 0.1 * rng.standard_normal(n)).astype(np.float32))

    def cell(nc, no, ni):
        proj = no is not None
        no = no if proj else nc
        ins = [-1 if cifg else w(nc, ni)] + [w(nc, ni) for _ in range(3)]
        ins += [-1 if cifg else w(nc, no)] + [w(nc, no) for _ in range(3)]
        ins += ([-1 if cifg else w(nc), w(nc), w(nc)] if peephole else [-1, -1, -1])
        ins += [-1 if cifg else b(nc), b(nc, 1.0), b(nc), b(nc)]
        ins += [w(no, nc) if proj else -1, b(no) if (proj and proj_bias) else -1]
        return ins, no
    fw, fo = cell(fw_cell, fw_out, n_input)
    bw, bo = cell(bw_cell, bw_out, aux_size if aux == "bw_input" else n_input)
    states = [mb.add_tensor([batch, fo], name="fw_output_state", is_variable=True),
              mb.add_tensor([batch, fw_cell], name="fw_cell_state", is_variable=True),
              mb.add_tensor([batch, bo], name="bw_output_state", is_variable=True),
              mb.add_tensor([batch, bw_cell], name="bw_cell_state", is_variable=True)]
    if aux == "cross":
        auxw = [-1 if cifg else w(fw_cell, aux_size)] + [w(fw_cell, aux_size) for _ in range(3)]
        auxw += [-1 if cifg else w(bw_cell, aux_size)] + [w(bw_cell, aux_size) for _ in range(3)]
    else:
        auxw = [-1] * 8
    ins = [x] + fw + bw + states + [a] + auxw
    if merge_outputs:
        outs = [mb.add_tensor(shape[:2] + [fo + bo], name="output")]
    else:
        outs = [mb.add_tensor(shape[:2] + [fo], name="fw_output"),
                mb.add_tensor(shape[:2] + [bo], name="bw_output")]
    for o in outs:
        mb.mark_output(o)
    opts = dict(fused_activation_function=act, cell_clip=cell_clip, proj_clip=proj_clip,
                merge_outputs=merge_outputs, time_major=time_major)
    if asymmetric:
        opts["asymmetric_quantize_inputs"] = True
    if options != "default":
        opts = options
    mb.add_op(BIDI, ins, outs, options=opts, version=version)
    return mb.build()


def _bidi_case(name, **kw):
    tm = kw.get("time_major", True)
    batch, time, n_input = kw.get("batch", 2), kw.get("time", 3), kw.get("n_input", 4)
    shape = [time, batch, n_input] if tm else [batch, time, n_input]
    aux_shape = shape[:2] + [kw.get("aux_size") or n_input]

    def gen(rng):
        xs = [rng.standard_normal(shape).astype(np.float32)]
        if kw.get("aux"):
            xs.append(rng.standard_normal(aux_shape).astype(np.float32))
        return xs
    c = OpCase(BIDI, name, lambda: bidi_lstm_model(**kw), gen)
    c.gpu = False
    c.note = "GPU: CPU op (variable state tensors)"
    return c


CASES += [
    _bidi_case("basic"),
    _bidi_case("batch_major", time_major=False),
    _bidi_case("merge", merge_outputs=True),
    _bidi_case("merge_batch_major_batch1", merge_outputs=True, time_major=False, batch=1),
    _bidi_case("cifg_peephole", cifg=True, peephole=True),
    _bidi_case("projection_clip", fw_out=3, bw_out=3, proj_bias=True, proj_clip=0.4, cell_clip=0.7),
    _bidi_case("aux_cross", aux="cross", aux_size=5),
    _bidi_case("aux_cross_cifg_merge", aux="cross", cifg=True, merge_outputs=True),
    _bidi_case("aux_bw_input", aux="bw_input"),
    _bidi_case("aux_bw_input_batch_major", aux="bw_input", time_major=False),
    _bidi_case("act_relu_long", act="RELU", time=8, batch=1),
    _bidi_case("act_none", act="NONE"),
    _bidi_case("no_options", options=None, time_major=False),
]


# Hybrid (dynamic-range) LSTMs (issue 7): int8 weights with one scale each, float activations; the
# input, aux input, output state and projection input rows quantized on the fly per step
# (symmetric or asymmetric_quantize_inputs), as TFLite's lstm_eval EvalHybrid. Exact against LiteRT
# builtin (tol 0): the int8 dot products are exact, the float steps are TFLite's in its order, and the
# activations are the Eigen functions LiteRT's build runs (lstm.cc, namespace eig).
def _hyb(case):
    case.quant = "hybrid"
    case.tol = 0.0
    return case


CASES += [_hyb(c) for c in [
    _seq_case("hyb_basic", hybrid=True, version=2),
    _seq_case("hyb_asym", hybrid=True, asymmetric=True, version=2),
    _seq_case("hyb_time_major_asym", hybrid=True, asymmetric=True, time_major=True, batch=3, version=2),
    _seq_case("hyb_cifg_peephole", hybrid=True, cifg=True, peephole=True, version=2),
    _seq_case("hyb_peephole_asym", hybrid=True, peephole=True, asymmetric=True, version=2),
    _seq_case("hyb_projection", hybrid=True, projection=True, proj_bias=True, n_output=4, proj_clip=0.3,
              version=2),
    _seq_case("hyb_projection_asym", hybrid=True, asymmetric=True, projection=True, n_output=5, version=2),
    _seq_case("hyb_layer_norm_asym", hybrid=True, asymmetric=True, layer_norm=True, peephole=True, version=3),
    _seq_case("hyb_everything", hybrid=True, asymmetric=True, layer_norm=True, peephole=True, projection=True,
              proj_bias=True, n_output=4, cell_clip=0.5, proj_clip=0.3, time_major=True, batch=3, version=3),
    _seq_case("hyb_act_none_quirk", hybrid=True, act="NONE", version=2),
    _seq_case("hyb_large", hybrid=True, asymmetric=True, batch=2, time=5, n_input=40, n_cell=96, projection=True,
              n_output=48, version=2),
    _seq_case("hyb_full", op="LSTM", hybrid=True, version=2),
    _seq_case("hyb_full_asym_cifg_proj", op="LSTM", hybrid=True, asymmetric=True, cifg=True, peephole=True,
              projection=True, proj_bias=True, n_output=3, cell_clip=0.6, version=4),
    _seq_case("hyb_full_layer_norm", op="LSTM", hybrid=True, layer_norm=True, version=3),
]]
for _c in CASES[-14:]:
    _c.gpu = False
    _c.note = "GPU: CPU op (variable state tensors)"
CASES += [_hyb(c) for c in [
    _bidi_case("hyb_basic", hybrid=True, version=3),
    _bidi_case("hyb_asym_batch_major", hybrid=True, asymmetric=True, time_major=False, version=3),
    _bidi_case("hyb_merge_cifg_peephole", hybrid=True, merge_outputs=True, cifg=True, peephole=True, version=3),
    _bidi_case("hyb_projection_asym", hybrid=True, asymmetric=True, fw_out=3, bw_out=3, proj_bias=True,
               proj_clip=0.4, cell_clip=0.7, version=3),
    _bidi_case("hyb_aux_cross_asym", hybrid=True, asymmetric=True, aux="cross", aux_size=5, version=3),
    _bidi_case("hyb_aux_bw_input", hybrid=True, aux="bw_input", version=3),
]]


# Full-integer LSTMs (issue 7): int8 input / output state / weights, int16 cell state (a power-of-two
# scale), int16 peephole and layer norm coefficients, int32 biases, and the 5 intermediate tensors
# TFLite's lstm.cc reads for its effective scales (4 gate matmul outputs: used with layer norm,
# else Q3.12; 5th: the hidden state o * tanh(c) before the projection). TFLite's lstm_eval.cc
# EvalInteger8x8_16; exact (0 steps) against LiteRT builtin over several time steps.
def _sym_q(v, dtype, qmax):
    s = float(np.abs(v).max()) / qmax or 1.0
    return np.clip(np.round(v / s), -qmax, qmax).astype(dtype), s


def int8_lstm_model(op=SEQ, batch=2, time=4, n_input=5, n_cell=8, n_output=None, cifg=False,
                    peephole=False, projection=False, proj_bias=False, layer_norm=False,
                    time_major=False, cell_clip=0.0, proj_clip=0.0, seed=0, version=None,
                    x_q=(0.02, 5), h_q=None, hidden_q=None, cell_scale=2.0 ** -11, gate_scales=None,
                    n_intermediates=5, act="TANH", mutate=None, inter8=None):
    """A one-op full-integer LSTM (24 inputs). x_q / h_q / hidden_q: (scale, zero point) of the
    input, the output state (= output) and the hidden intermediate. mutate(parts) may edit the
    dict of tensor kwargs before the model is written (hostile-parameter tests). inter8: the 12
    (scale, zero point) pairs of the 8x8_8 form's INT8 intermediates (see int8x8_8_lstm_model)."""
    rng = np.random.default_rng(seed)
    n_output = n_output if n_output is not None else n_cell
    if not projection:
        assert n_output == n_cell
    h_q = h_q or ((0.015, -3) if projection else (1.0 / 128, -2))
    hidden_q = hidden_q or ((1.0 / 128, 0) if projection else h_q)
    gate_scales = gate_scales or [0.00031, 0.00027, 0.00035, 0.00029]
    sx = x_q[0]
    mb = ModelBuilder()
    P = {}  # name -> dict(shape, dtype, data, quant) or None
    if op == SEQ:
        shape = [time, batch, n_input] if time_major else [batch, time, n_input]
        oshape = shape[:2] + [n_output]
    else:
        shape, oshape = [batch, n_input], [batch, n_output]
    P["input"] = dict(shape=shape, dtype=np.int8, quant=dict(scale=[x_q[0]], zero_point=[x_q[1]]))
    gates = ["input", "forget", "cell", "output"]
    ln_scale = {}
    for k, gname in enumerate(gates):
        absent = cifg and k == 0
        for src, cols in (("input", n_input), ("recurrent", n_output)):
            v = (rng.standard_normal((n_cell, cols)) / np.sqrt(cols)).astype(np.float32)
            q, s = _sym_q(v, np.int8, 127)
            P[f"{src}_to_{gname}_weights"] = None if absent else dict(
                data=q, quant=dict(scale=[s], zero_point=[0]))
        if layer_norm and not absent:
            c = (1.0 + 0.2 * rng.standard_normal(n_cell)).astype(np.float32)
            q, s = _sym_q(c, np.int16, 32767)
            ln_scale[k] = s
            P[f"{gname}_layer_norm_coefficients"] = dict(data=q, quant=dict(scale=[s], zero_point=[0]))
        else:
            P[f"{gname}_layer_norm_coefficients"] = None
        if peephole and k != 2 and not absent:
            q, s = _sym_q((0.5 * rng.standard_normal(n_cell)).astype(np.float32), np.int16, 32767)
            P[f"cell_to_{gname}_weights"] = dict(data=q, quant=dict(scale=[s], zero_point=[0]))
        elif k != 2:
            P[f"cell_to_{gname}_weights"] = None
    for k, gname in enumerate(gates):
        if cifg and k == 0:
            P[f"{gname}_gate_bias"] = None
            continue
        b = ((1.0 if k == 1 else 0.0) + 0.2 * rng.standard_normal(n_cell)).astype(np.float32)
        bs = ln_scale[k] / 1024.0 if layer_norm else P[f"input_to_{gname}_weights"]["quant"]["scale"][0] * sx
        P[f"{gname}_gate_bias"] = dict(data=np.round(b / bs).astype(np.int32), quant=dict(scale=[bs], zero_point=[0]))
    if projection:
        v = (rng.standard_normal((n_output, n_cell)) / np.sqrt(n_cell)).astype(np.float32)
        q, s = _sym_q(v, np.int8, 127)
        P["projection_weights"] = dict(data=q, quant=dict(scale=[s], zero_point=[0]))
        if proj_bias:
            bs = s * hidden_q[0]
            b = (0.1 * rng.standard_normal(n_output)).astype(np.float32)
            P["projection_bias"] = dict(data=np.round(b / bs).astype(np.int32), quant=dict(scale=[bs], zero_point=[0]))
        else:
            P["projection_bias"] = None
    else:
        P["projection_weights"] = P["projection_bias"] = None
    P["output_state"] = dict(shape=[batch, n_output], dtype=np.int8, is_variable=True,
                             quant=dict(scale=[h_q[0]], zero_point=[h_q[1]]))
    P["cell_state"] = dict(shape=[batch, n_cell], dtype=np.int16, is_variable=True,
                           quant=dict(scale=[cell_scale], zero_point=[0]))
    P["output"] = dict(shape=oshape, dtype=np.int8, quant=dict(scale=[h_q[0]], zero_point=[h_q[1]]))
    inter = [dict(shape=[], dtype=np.int16, quant=dict(scale=[gate_scales[k]], zero_point=[0])) for k in range(4)]
    inter.append(dict(shape=[], dtype=np.int8, quant=dict(scale=[hidden_q[0]], zero_point=[hidden_q[1]])))
    P["intermediates"] = inter[:n_intermediates] if n_intermediates <= 5 else inter + [
        dict(shape=[], dtype=np.int8, quant=dict(scale=[0.01], zero_point=[0]))] * (n_intermediates - 5)
    if inter8 is not None:
        P["intermediates"] = [dict(shape=[], dtype=np.int8, quant=dict(scale=[s], zero_point=[z])) for s, z in inter8]
    if mutate:
        mutate(P)

    def tensor(name, spec, is_input=False):
        if spec is None:
            return -1
        spec = dict(spec)
        if "data" in spec:
            return mb.add_const(spec.pop("data"), name=name, **spec)
        shp, dt = spec.pop("shape"), spec.pop("dtype")
        if is_input:
            return mb.add_input(shp, dt, name=name, **spec)
        return mb.add_tensor(shp, dt, name=name, **spec)
    order = (["input"] + [f"input_to_{g}_weights" for g in gates] + [f"recurrent_to_{g}_weights" for g in gates]
             + ["cell_to_input_weights", "cell_to_forget_weights", "cell_to_output_weights"]
             + [f"{g}_gate_bias" for g in gates] + ["projection_weights", "projection_bias",
                                                    "output_state", "cell_state"]
             + [f"{g}_layer_norm_coefficients" for g in gates])
    ins = [tensor(n, P[n], is_input=(n == "input")) for n in order]
    y = tensor("output", P["output"])
    mb.mark_output(y)
    its = [tensor(f"intermediate_{i}", s) for i, s in enumerate(P["intermediates"])]
    if op == SEQ:
        opts = dict(fused_activation_function=act, cell_clip=cell_clip, proj_clip=proj_clip, time_major=time_major)
    else:
        opts = dict(fused_activation_function=act, cell_clip=cell_clip, proj_clip=proj_clip, kernel_type="FULL")
    if version is None:
        version = 4 if op == "LSTM" else 3
    mb.add_op(op, ins, [y], options=opts, version=version, intermediates=its)
    return mb.build()


def _int8_case(name, **kw):
    op = kw.get("op", SEQ)
    batch, time, n_input = kw.get("batch", 2), kw.get("time", 4), kw.get("n_input", 5)
    if op == SEQ:
        shape = [time, batch, n_input] if kw.get("time_major") else [batch, time, n_input]
    else:
        shape = [batch, n_input]
    c = OpCase(op, name, lambda: int8_lstm_model(**kw),
               lambda rng: [rng.integers(-128, 128, shape).astype(np.int8)], quant="int8")
    c.gpu = False
    c.note = "GPU: CPU op (variable state tensors)"
    return c


# Each case runs its time steps in one invoke (state carried step to step; tests/test_lstm_int8.py
# checks several invokes). Zero points: input 5, output state -3 / -2, hidden 0 or the output
# state's; LiteRT starts the INT8 output state at its zero point (ResetVariableTensors).
CASES += [
    _int8_case("int8_basic"),
    _int8_case("int8_time_major", time_major=True, batch=3, time=5),
    _int8_case("int8_cifg", cifg=True),
    _int8_case("int8_peephole", peephole=True, time=6),
    _int8_case("int8_cifg_peephole_clip", cifg=True, peephole=True, cell_clip=0.8),
    _int8_case("int8_cell_clip_wide", cell_clip=3.0, time=6),
    _int8_case("int8_layer_norm", layer_norm=True, n_cell=12, time=6,
               gate_scales=[0.001, 0.0005, 0.002, 0.0001]),
    _int8_case("int8_layer_norm_cifg_peephole", layer_norm=True, cifg=True, peephole=True),
    _int8_case("int8_projection", projection=True, n_output=5, proj_bias=True),
    _int8_case("int8_projection_hidden_zp", projection=True, n_output=6, hidden_q=(1.0 / 128, 7), time=5),
    _int8_case("int8_projection_clip_no_bias", projection=True, n_output=4, proj_clip=0.05, time=5),
    # peephole with a projection narrower than the cell: TFLite's peephole covers n_output entries
    _int8_case("int8_peephole_projection", peephole=True, projection=True, n_output=5),
    _int8_case("int8_peephole_projection_time_major", peephole=True, projection=True, n_output=5,
               time_major=True, batch=3),
    _int8_case("int8_everything", layer_norm=True, peephole=True, projection=True, proj_bias=True, n_output=6,
               cell_clip=0.8, proj_clip=0.5, time_major=True, batch=3, time=5),
    _int8_case("int8_cell_scale_2e-9_wide_input", x_q=(0.2, -7), cell_scale=2.0 ** -9, time=6),
    _int8_case("int8_cell_scale_2e-15", cell_scale=2.0 ** -15, time=5),
    _int8_case("int8_hidden_grid_not_output_grid", hidden_q=(0.01, 5), h_q=(1.0 / 90, 3), x_q=(0.03, -20), time=5),
    _int8_case("int8_act_relu_ignored", act="RELU"),
    _int8_case("int8_tiny", n_input=1, n_cell=1, batch=1, time=7),
    _int8_case("int8_large", batch=2, time=5, n_input=40, n_cell=64, projection=True, n_output=32),
    _int8_case("int8_full", op="LSTM", batch=3),
    _int8_case("int8_full_layer_norm_cifg", op="LSTM", layer_norm=True, cifg=True, batch=4),
    _int8_case("int8_full_peephole_projection", op="LSTM", peephole=True, projection=True, proj_bias=True,
               n_output=3, batch=3),
]


# The "8x8_8" integer LSTM (issue 7): LSTM (not the sequence op) with 12 INT8 intermediates, the
# matmul outputs W_x x / W_h h of each gate as int8 and their int16 sums (TFLite's lstm_eval.cc
# EvalInteger8x8_8, float layer norm and activations). The cell state's scale must be 2^-15, the
# hidden o * tanh(c) is Q0.15 (the projection bias scale is w_p * 2^-15). Intermediates, per gate
# g = input, forget, cell, output: 3g + 0 the int16 sum (only its scale is read), 3g + 1 W_x x,
# 3g + 2 W_h h (scale and zero point each).
def inter8_default(sx=0.035, sh=0.025, zx=3, zh=-2, ssum=None):
    ssum = ssum if ssum is not None else max(sx, sh) / 200.0
    return [(ssum, 0), (sx, zx), (sh, zh)] * 4


def int8x8_8_lstm_model(layer_norm=True, projection=True, proj_bias=True, n_cell=8, n_output=5, inter8=None,
                        batch=2, **kw):
    kw.setdefault("op", "LSTM")
    return int8_lstm_model(layer_norm=layer_norm, projection=projection, proj_bias=proj_bias, n_cell=n_cell,
                           n_output=n_output if projection else n_cell, batch=batch, cell_scale=2.0 ** -15,
                           hidden_q=(2.0 ** -15, 0), n_intermediates=12,
                           inter8=inter8 if inter8 is not None else inter8_default(), **kw)


def _int8x8_8_case(name, **kw):
    batch, n_input = kw.get("batch", 2), kw.get("n_input", 5)
    c = OpCase("LSTM", name, lambda: int8x8_8_lstm_model(**kw),
               lambda rng: [rng.integers(-128, 128, (batch, n_input)).astype(np.int8)], quant="int8")
    c.gpu = False
    c.note = "GPU: CPU op (variable state tensors)"
    return c


# 8x8_8: the forms LiteRT 2.3 runs (layer norm + projection + projection bias; CIFG or not, with or
# without peepholes -- its kernel ignores the input gate and the peepholes). One step per invoke.
_I8_DISTINCT = [(4e-4, 0), (0.05, 2), (0.03, -1), (3e-4, 0), (0.04, 3), (0.02, -4),
                (5e-4, 0), (0.06, -2), (0.035, 5), (2e-4, 0), (0.045, 1), (0.025, 6)]
CASES += [
    _int8x8_8_case("int8x8_8_basic"),
    _int8x8_8_case("int8x8_8_cifg", cifg=True, batch=3),
    _int8x8_8_case("int8x8_8_peephole_distinct_intermediates", peephole=True, inter8=_I8_DISTINCT),
    _int8x8_8_case("int8x8_8_cifg_peephole_clips", cifg=True, peephole=True, cell_clip=0.4, proj_clip=0.05),
    _int8x8_8_case("int8x8_8_cell_clip_ge_1_ignored", cell_clip=1.5, batch=1),
    _int8x8_8_case("int8x8_8_wide", n_input=33, n_cell=48, n_output=20, batch=3, x_q=(0.05, -9)),
    _int8x8_8_case("int8x8_8_tiny", n_input=1, n_cell=1, n_output=1, batch=1),
]
