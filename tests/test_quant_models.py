"""Whole quantized models (tflite_gpu.testing.quantize applied to the zoo's MobileNets): the files
themselves (LiteRT reads and runs them, their layout follows TFLite's quantization spec), our CPU
path against LiteRT's builtin kernels, and the GPU delegate against LiteRT's builtin kernels.

Oracles: LiteRT with OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES ("builtin"), and LiteRT
with its default XNNPACK delegate only to measure LiteRT's own spread.

Bounds, in steps of the quantized output's grid (the int8/int16 tensor DEQUANTIZE reads, or the
uint8 output itself):
* CPU: <= 1 step from builtin (the issue's bound: our integer kernels follow TFLite's arithmetic).
* GPU delegate: <= max(2 steps, 2 x LiteRT's XNNPACK-vs-builtin disagreement on the same inputs,
  measured here). The delegate runs the float view of the model (TFLite's GPU design: weights
  dequantized once, each quantized output snapped to its grid), so it differs from the integer
  kernels by rounding ties, not by design.
* Dynamic-range models have float outputs: the GPU result is checked against LiteRT builtin on the
  same computation it performs (the float model whose weights are the dequantized int8 weights,
  rel-L2 <= 1e-4 in F32), and against the hybrid model itself in absolute terms:
  <= max(2/256, 2 x XNNPACK-vs-builtin) on softmax probabilities.
"""

import numpy as np
import pytest

import tflite_gpu
from gpu_util import delegate, require_gpu
from harness import rel_l2, run_litert
from tflite_gpu.testing import quantize as QZ
from tflite_gpu.testing import zoo

NETS = {
    "mobilenet_v1": (zoo.mobilenet_v1, dict(input_size=96, alpha=0.25, num_classes=16)),
    "mobilenet_v2": (zoo.mobilenet_v2, dict(input_size=96, alpha=0.35, num_classes=16)),
}
MODES = QZ.MODES
_cache = {}


def model(net, mode):
    key = (net, mode)
    if key not in _cache:
        fn, kw = NETS[net]
        _cache[key] = zoo.quantized(fn, mode, **kw) if mode != "float" else fn(**kw)
    return _cache[key]


def litert(m, xnnpack=False):
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    kind = OpResolverType.AUTO if xnnpack else OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES
    return Interpreter(model_content=m, experimental_op_resolver_type=kind, num_threads=1)


def float_inputs(seed, n=2):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((1, 96, 96, 3)).astype(np.float32) for _ in range(n)]


def model_input(m, x):
    """The float input as the model takes it (uint8 I/O models: quantized with the input's params)."""
    d = litert(m).get_input_details()[0]
    if d["dtype"] == np.uint8:
        s, z = d["quantization"]
        return np.clip(np.round(x / s) + z, 0, 255).astype(np.uint8)
    return x


def output_step(m):
    """Scale of the model's quantized output grid (the tensor the final DEQUANTIZE reads, or the
    uint8 output), read through LiteRT's tensor details."""
    it = litert(m)
    out = it.get_output_details()[0]
    if out["dtype"] != np.float32:
        return out["quantization"][0]
    det = {d["index"]: d for d in it.get_tensor_details()}
    for op in it._get_ops_details():
        if op["op_name"] == "DEQUANTIZE" and out["index"] in list(op["outputs"]):
            return det[op["inputs"][0]]["quantization"][0]
    return None


def to_real(m, y):
    if y.dtype == np.uint8:
        s, z = litert(m).get_output_details()[0]["quantization"]
        return (y.astype(np.float64) - z) * s
    return y.astype(np.float64)


# ------------------------------------------------------------------------------------------------
# The files.
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("net", sorted(NETS))
def test_quantized_model_files_follow_the_spec_and_run_in_litert(net, mode):
    m = model(net, mode)
    it = litert(m)
    it.allocate_tensors()
    det = {d["index"]: d for d in it.get_tensor_details()}
    ops = it._get_ops_details()
    act = {"int8": np.int8, "uint8io": np.int8, "int16x8": np.int16, "dynamic": np.float32}[mode]
    io = {"int8": np.float32, "uint8io": np.uint8, "int16x8": np.float32, "dynamic": np.float32}[mode]
    assert it.get_input_details()[0]["dtype"] == io and it.get_output_details()[0]["dtype"] == io
    weight_ops = 0
    for op in ops:
        name = op["op_name"]
        if name in ("CONV_2D", "DEPTHWISE_CONV_2D"):
            weight_ops += 1
            x, w, b = (det[i] for i in op["inputs"])
            assert x["dtype"] == act and w["dtype"] == np.int8
            qp = w["quantization_parameters"]
            axis = 0 if name == "CONV_2D" else 3
            # Per-channel symmetric weights along the output-channel axis, values in [-127, 127].
            assert qp["quantized_dimension"] == axis and len(qp["scales"]) == w["shape"][axis]
            assert not np.any(qp["zero_points"]) and it.get_tensor(w["index"]).min() >= -127
            if mode == "dynamic":
                assert b["dtype"] == np.float32 and det[op["outputs"][0]]["dtype"] == np.float32
            else:
                assert b["dtype"] == (np.int64 if mode == "int16x8" else np.int32)
                in_scale = x["quantization_parameters"]["scales"][0]
                np.testing.assert_allclose(b["quantization_parameters"]["scales"], in_scale * qp["scales"],
                                           rtol=1e-6)
        if mode != "dynamic" and name in QZ.FIXED_OUTPUT:
            o = det[op["outputs"][0]]
            want = QZ.FIXED_OUTPUT[name]["int16" if mode == "int16x8" else "int8"]
            assert o["quantization"] == pytest.approx(want)
        if mode != "dynamic" and name in ("RESHAPE", "AVERAGE_POOL_2D"):
            assert det[op["outputs"][0]]["quantization"] == det[op["inputs"][0]]["quantization"]
    assert weight_ops > 10
    # Close to the float model it came from (LiteRT on both): within 3 steps of the int8 output
    # grid of 1/256 on the softmax probabilities -- scales or zero points that were wrong anywhere
    # would move these by far more.
    for x in float_inputs(7):
        want = run_litert(model(net, "float"), [x])[0]
        got = to_real(m, run_litert(m, [model_input(m, x)])[0])
        assert np.abs(got - want).max() <= 3 / 256, np.abs(got - want).max()


# ------------------------------------------------------------------------------------------------
# Which CPU quantized kernels a model needs (the quantized-kernel column of the op table).
# ------------------------------------------------------------------------------------------------

def required_kernels(m):
    """{(op, kind)} the model needs: kind from each op's non-constant integer tensors ('int8',
    'uint8', 'int16x8'), or 'hybrid' for a weight op with float input and int8 weights."""
    from tflite_gpu.testing import quant as Q
    it = litert(m)
    det = {d["index"]: d for d in it.get_tensor_details()}
    need = set()
    for op in it._get_ops_details():
        name = op["op_name"]
        ins = [i for i in op["inputs"] if i >= 0]
        if name in QZ.WEIGHT_OPS and det[ins[0]]["dtype"] == np.float32 and det[ins[1]]["dtype"] == np.int8:
            need.add((name, "hybrid"))
            continue
        for i in list(ins) + list(op["outputs"]):
            if len(ins) > 1 and i in ins[1:] and name in QZ.WEIGHT_OPS:
                continue
            k = Q.quant_kind(det[i]["dtype"])
            if k:
                need.add((name, k))
    return need


def missing_cpu_kernels(m):
    have = {o["name"]: set(o["quantized_kernels"]) for o in tflite_gpu.supported_ops()}
    return sorted(f"{op}[{k}]" for op, k in required_kernels(m) if k not in have.get(op, set()))


def require_cpu_kernels(m, what):
    missing = missing_cpu_kernels(m)
    if missing:
        msg = f"{what}: the CPU has no quantized kernel yet for {', '.join(missing)} (op table QUANT column)"
        print("SKIP:", msg)
        pytest.skip(msg)


def run_ours(m, x, delegates=None, threads=1):
    it = tflite_gpu.Interpreter(model_content=m, experimental_delegates=delegates, num_threads=threads)
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    return it, it.get_tensor(it.get_output_details()[0]["index"])


def steps(a, b, step):
    return float(np.abs(a.astype(np.float64) - b.astype(np.float64)).max() / step)


def litert_spread(m, xs, step):
    """LiteRT's own XNNPACK-vs-builtin disagreement on these inputs, in output steps."""
    return max(steps(run_litert(m, [x], xnnpack=True)[0], run_litert(m, [x])[0], step) for x in xs)


def out_step(m, y):
    """Output grid step in the units the output is read in (uint8 outputs: 1 integer step)."""
    return 1.0 if y.dtype != np.float32 else output_step(m)


# ------------------------------------------------------------------------------------------------
# CPU: <= 1 step from LiteRT builtin.
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("net", sorted(NETS))
def test_quantized_model_on_cpu_matches_litert_builtin(net, mode):
    m = model(net, mode)
    require_cpu_kernels(m, f"{net} {mode}")
    for x in float_inputs(11):
        xi = model_input(m, x)
        want = run_litert(m, [xi])[0]
        _, got = run_ours(m, xi, threads=2)
        assert got.dtype == want.dtype
        if mode == "dynamic":
            # Float output of hybrid kernels: the same arithmetic as LiteRT's hybrid path, so
            # within float rounding of it (<= 1 step of a 1/256 probability grid is far looser).
            assert np.abs(got - want).max() <= 1 / 256
        else:
            assert steps(got, want, out_step(m, want)) <= 1


# ------------------------------------------------------------------------------------------------
# GPU delegate: one partition, <= max(2 steps, 2 x LiteRT's XNNPACK-vs-builtin spread).
# ------------------------------------------------------------------------------------------------

GPU_PARAMS = [(n, m, "F32") for n in sorted(NETS) for m in MODES] + \
             [(n, m, "F32_F16") for n in sorted(NETS) for m in ("int8", "uint8io", "dynamic")]


@pytest.mark.parametrize("net,mode,precision", GPU_PARAMS)
def test_quantized_model_through_the_gpu_delegate(net, mode, precision):
    require_gpu()
    m = model(net, mode)
    # ModifyGraphWithDelegate partitions a prepared graph, so the CPU kernels' prepare must accept
    # every node first.
    require_cpu_kernels(m, f"{net} {mode}")
    xs = float_inputs(13)
    d = delegate(precision)
    for k, x in enumerate(xs):
        xi = model_input(m, x)
        it, got = run_ours(m, xi, [d])
        rep = it.delegation_report()
        assert rep["partitions"] == 1 and rep["delegated_nodes"] == rep["total_nodes"], rep["unsupported"]
        want = run_litert(m, [xi])[0]
        assert got.dtype == want.dtype and got.shape == want.shape
        if mode == "dynamic":
            # The delegate computes the float model whose weights are the dequantized int8 weights
            # (TFLite's GPU design); LiteRT builtin on that model is the exact reference for it ...
            twin = QZ.dequantized_weights_model(zoo.builder_of(NETS[net][0], **NETS[net][1]))
            ref = run_litert(twin, [xi])[0]
            assert rel_l2(got, ref) <= (1e-5 if precision == "F32" else 5e-3), rel_l2(got, ref)
            # ... and it stays within LiteRT's own spread of the hybrid model's result.
            spread = np.abs(run_litert(m, [xi], xnnpack=True)[0] - want).max()
            bound = max(2 / 256, 2 * spread)
            assert np.abs(got - want).max() <= bound, (np.abs(got - want).max(), bound)
            continue
        step = out_step(m, want)
        bound = max(2.0, 2 * litert_spread(m, [xi], step))
        assert steps(got, want, step) <= bound, (steps(got, want, step), bound)


@pytest.mark.parametrize("mode", ["int8", "dynamic"])
def test_enable_quantization_off_keeps_quantized_nodes_on_the_cpu(mode):
    require_gpu()
    m = model("mobilenet_v1", mode)
    require_cpu_kernels(m, f"mobilenet_v1 {mode}")
    xi = model_input(m, float_inputs(17, 1)[0])
    _, want = run_ours(m, xi)
    it, got = run_ours(m, xi, [delegate(enable_quantization=False)])
    rep = it.delegation_report()
    refused = rep["unsupported"]
    # Every node touches a quantized tensor (int8 activations, or int8 weights), so none is taken.
    assert rep["delegated_nodes"] == 0 or mode == "dynamic", rep
    weight_nodes = [u for u in refused if u[1] in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED")]
    assert weight_nodes and all("ENABLE_QUANT" in u[3] for u in weight_nodes), refused
    if mode == "int8":
        np.testing.assert_array_equal(got, want)  # all on the CPU
    else:  # float nodes between the refused ones (pool, reshape, softmax) may run on the GPU in F32
        assert rel_l2(got, want) <= 1e-5
