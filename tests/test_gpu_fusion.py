"""Kernel-count levers of the GPU delegate (fewer launches per model), each checked against our
plain reference CPU kernels on the same model, and by the kernels it leaves (OpenCL profiling
labels: op name plus the ops fused into that kernel, boundary conversions included).

 * read views: zero PAD / PADV2 (whole slices before the channels) and RESHAPE / no-op shape
   changes that keep the BHWC layout run no kernel; their consumers read the input in place.
 * placement: CONCATENATION runs no kernel when each input is made by one kernel and read by
   nothing else; those kernels write straight into their part of the output.

Tolerances: F32 rel-L2 <= 1e-5 (as test_gpu_ops.py); fp16 storage: per output 2 x the rel-L2 of the
model's fp16 emulation (fp16_emulation.py) + 1e-5, as test_fp16_storage.py.
"""
import numpy as np
import pytest

import tflite_gpu
from gpu_util import delegate, require_gpu
from harness import rel_l2, run_tflite_gpu
from fp16_emulation import emulation_bound, fp16_storage_model, overflowing_tensors, round_feeds, run_litert
from tflite_gpu.testing.zoo import _Net, builder_of


def gpu_run(model, inputs, precision="F32"):
    """Outputs through the delegate (whole model delegated) and the kernel labels it launched."""
    it = tflite_gpu.Interpreter(model_content=model,
                                experimental_delegates=[delegate(precision, enable_profiling=True)])
    it.allocate_tensors()
    rep = it.delegation_report()
    assert rep["delegated_nodes"] == rep["total_nodes"], rep["unsupported"]
    for d, x in zip(it.get_input_details(), inputs):
        it.set_tensor(d["index"], x)
    it.enable_profiling(True)
    it.invoke()
    names = [k["name"] for k in it._core.gpu_kernel_times()]
    return [it.get_tensor(d["index"]) for d in it.get_output_details()], names


def check(build, inputs, precision="F32"):
    """`build()` makes the model (a zoo-style function: its ModelBuilder feeds the fp16 emulation)."""
    model = build()
    want = run_tflite_gpu(model, inputs, reference=True)
    got, names = gpu_run(model, inputs, precision)
    if precision == "F32":
        tols = [1e-5] * len(want)
    else:
        mb = builder_of(build)
        emul = run_litert(fp16_storage_model(mb, keep=overflowing_tensors(model, inputs)), round_feeds(inputs))
        tols = [emulation_bound(e, w) for e, w in zip(emul, want)]
    for g, w, tol in zip(got, want, tols):
        assert g.shape == w.shape
        assert rel_l2(g, w) <= tol, (precision, rel_l2(g, w), tol, names)
    return names


def pad(net, x, pads, value=None, name=None):
    shp = [s + a + b for s, (a, b) in zip(net.shape(x), pads)]
    p = net.mb.add_const(np.asarray(pads, np.int32), name=net.name("pads"))
    y = net.mb.add_tensor(shp, name=name or net.name("pad"))
    if value is None:
        net.mb.add_op("PAD", [x, p], [y])
    else:
        v = net.mb.add_const(np.asarray([value], np.float32), name=net.name("pad_value"))
        net.mb.add_op("PADV2", [x, p, v], [y])
    return y


def pad_model():
    """Spatial + channel PAD before a VALID conv, a PAD of a PAD before a depthwise conv, a spatial
    PAD before a 1x1 conv, a channel
    PAD (4 before, 3 after) as an ADD operand, a channel PAD read lane by lane (CONCATENATION at an
    unaligned channel offset), a PADV2 with a non-zero value (a kernel) and a PAD that is a graph
    output (a kernel: the boundary reads a buffer)."""
    net = _Net(3, "float32", "pad views")
    x = net.mb.add_input([1, 9, 7, 5], name="x")
    a = pad(net, x, [[0, 0], [1, 2], [2, 1], [0, 3]])
    a = net.conv(a, 8, k=3, act="NONE", padding="VALID", gain=1.0, prefix="c1")        # [1, 10, 8, 8]
    b = pad(net, pad(net, a, [[0, 0], [1, 0], [0, 1], [0, 0]]), [[0, 0], [0, 1], [2, 0], [4, 0]])
    b = net.dwconv(b, k=3, act="NONE", padding="VALID", gain=1.0)                       # [1, 10, 9, 12]
    c = pad(net, net.conv(b, 5, k=1, act="NONE", gain=1.0, prefix="c2"), [[0, 0], [0, 0], [0, 0], [4, 3]])
    d = net.binary("ADD", net.conv(b, 12, k=1, act="NONE", gain=1.0, prefix="c3"), c)
    e = net.concat([net.conv(d, 3, k=1, act="NONE", gain=1.0, prefix="c4"),
                    pad(net, net.conv(d, 2, k=1, act="NONE", gain=1.0, prefix="c5"), [[0, 0], [0, 0], [0, 0], [0, 2]])],
                   axis=3)
    f = pad(net, e, [[0, 0], [1, 1], [1, 1], [0, 0]], value=1.5)
    g = pad(net, net.conv(f, 4, k=1, act="NONE", gain=1.0, prefix="c6"), [[0, 0], [1, 0], [0, 0], [0, 0]], name="out2")
    # A 1x1 conv reading a spatially padded view (its flattened pointwise read does not apply).
    h = net.conv(pad(net, b, [[0, 0], [1, 1], [0, 2], [0, 0]]), 4, k=1, act="NONE", gain=1.0, prefix="c8")
    return net.finish({"x": x}, {"out": net.conv(f, 6, k=3, act="NONE", gain=1.0, prefix="c7"), "out2": g, "out3": h})


@pytest.mark.parametrize("precision", ["F32", "F32_F16"])
def test_zero_pad_runs_no_kernel(precision):
    require_gpu()
    x = np.random.default_rng(0).standard_normal([1, 9, 7, 5]).astype(np.float32)
    names = check(pad_model, [x], precision)
    # Kernels left: the PADV2 with value 1.5 and the PAD that is a graph output.
    assert sorted(n for n in names if n.startswith("PAD")) == ["PAD", "PADV2"], names
    # The ADD whose other operand is a PAD view fuses into the conv that makes its chain input.
    assert "CONV_2D+ADD" in names, names


def reshape_model():
    """conv -> RESHAPE [1,1,1,C] -> [1,C] -> SOFTMAX, and conv -> RESHAPE [1,1,4,C] -> [1,4,C] ->
    ADD (fuses through the alias into the conv) -> graph output."""
    net = _Net(4, "float32", "reshape aliases")
    x = net.mb.add_input([1, 1, 4, 6], name="x")
    p = net.conv(net.global_avg_pool(x), 10, k=1, act="NONE", gain=1.0, prefix="logits")
    probs = net.softmax(net.reshape(p, [1, 10]))
    r = net.reshape(net.conv(x, 7, k=1, act="NONE", gain=1.0, prefix="c1"), [1, 4, 7])
    s = net.binary("ADD", r, net.scalar(0.5))
    return net.finish({"x": x}, {"probs": probs, "sum": s})


@pytest.mark.parametrize("precision", ["F32", "F32_F16"])
def test_layout_preserving_reshape_is_an_alias(precision):
    require_gpu()
    x = np.random.default_rng(1).standard_normal([1, 1, 4, 6]).astype(np.float32)
    names = check(reshape_model, [x], precision)
    assert not [n for n in names if "RESHAPE" in n], names
    assert "CONV_2D+ADD" in names, names


def concat_model():
    """Channel CONCATENATION of conv outputs (8 + 4 + 3 channels; the first with an ADD of a
    per-channel constant fused before placement) followed by LOGISTIC; a width CONCATENATION of
    RESHAPE kernels (SSD-style heads, a graph output); a channel CONCATENATION at an unaligned
    offset (5 + 3: a kernel) and one with the model input among its inputs (a kernel)."""
    net = _Net(5, "float32", "concat placement")
    x = net.mb.add_input([1, 6, 5, 7], name="x")
    a = net.binary("ADD", net.conv(x, 8, k=3, act="NONE", gain=1.0, prefix="a"),
                   net.mb.add_const(np.linspace(-1, 1, 8).astype(np.float32), name="bias8"))
    b = net.conv(x, 4, k=1, act="RELU", gain=1.0, prefix="b")
    c = net.conv(x, 3, k=1, act="NONE", gain=1.0, prefix="c")
    cat = net.concat([a, b, c], axis=3)                                           # [1, 6, 5, 15]
    sig = net.unary("LOGISTIC", cat)
    heads = [net.reshape(net.conv(sig, 8, k=1, act="NONE", gain=1.0, prefix="h0"), [1, 60, 4], new_shape_option=False),
             net.reshape(net.conv(net.conv(sig, 6, k=3, stride=2, act="RELU", gain=1.0, prefix="h1a"), 12, k=1,
                                  act="NONE", gain=1.0, prefix="h1"), [1, 27, 4], new_shape_option=False)]
    boxes = net.concat(heads, axis=1, name="boxes")                               # [1, 87, 4]
    odd = net.concat([net.conv(sig, 5, k=1, act="NONE", gain=1.0, prefix="o5"),
                      net.conv(sig, 3, k=1, act="NONE", gain=1.0, prefix="o3")], axis=3)
    mixed = net.concat([x, net.conv(odd, 2, k=1, act="NONE", gain=1.0, prefix="m")], axis=3, name="mixed")
    return net.finish({"x": x}, {"boxes": boxes, "mixed": mixed})


@pytest.mark.parametrize("precision", ["F32", "F32_F16"])
def test_concatenation_inputs_written_in_place(precision):
    require_gpu()
    x = np.random.default_rng(2).standard_normal([1, 6, 5, 7]).astype(np.float32)
    names = check(concat_model, [x], precision)
    # Two placed (no kernel); the unaligned one and the one reading the model input run.
    assert sum(1 for n in names if n.startswith("CONCATENATION")) == 2, names
    assert "CONV_2D+ADD" in names and "LOGISTIC" in names, names


def dwpw_model(batch=1):
    """Depthwise + 1x1 conv pairs (the depthwise computed inside the 1x1 conv's kernel):
    3x3 SAME RELU6 -> 1x1 (8 -> 16 channels, 32 output channels: more than one item group);
    3x3 stride 2 over a zero-PAD view, 6 channels (padding lanes) -> 1x1 with 5 outputs and a
    residual ADD fused behind it; 5x5 VALID dilation 2 -> 1x1 RELU. Kept as two kernels: a
    depthwise read twice (1x1 conv and ADD), one followed by a 3x3 conv, and multiplier 2."""
    net = _Net(6, "float32", "depthwise + pointwise")
    x = net.mb.add_input([batch, 12, 11, 8], name="x")
    a = net.conv(net.dwconv(x, k=3, act="RELU6", gain=1.0), 32, k=1, act="NONE", gain=1.0, prefix="pw1")
    a6 = net.conv(a, 6, k=1, act="RELU", gain=1.0, prefix="to6")                          # [b, 12, 11, 6]
    p = pad(net, a6, [[0, 0], [0, 0], [0, 1], [0, 0]])                                    # [b, 12, 12, 6]
    d = net.dwconv(p, k=3, stride=2, act="NONE", gain=1.0)                                # [b, 6, 6, 6]
    short = net.conv(net.max_pool(a6, k=2, stride=2), 5, k=1, act="NONE", gain=1.0, prefix="short")
    b = net.binary("ADD", net.conv(d, 5, k=1, act="NONE", gain=1.0, prefix="pw2"), short)  # [b, 6, 6, 5]
    c = net.conv(net.dwconv(a, k=5, dilation=2, padding="VALID", act="NONE", gain=1.0), 12, k=1, act="RELU",
                 gain=1.0, prefix="pw3")                                                  # [b, 4, 3, 12]
    e = net.dwconv(c, k=3, act="NONE", gain=1.0)
    twice = net.binary("ADD", net.conv(e, 12, k=1, act="NONE", gain=1.0, prefix="pw4"), e)
    f = net.conv(net.dwconv(twice, k=3, act="RELU", gain=1.0), 4, k=3, act="NONE", gain=1.0, prefix="c3")
    g = net.conv(net.dwconv(twice, k=3, mult=2, act="NONE", gain=1.0), 8, k=1, act="NONE", gain=1.0, prefix="pw5")
    return net.finish({"x": x}, {"b": b, "f": f, "g": g})


def kernel_labels(names, label):
    return sum(1 for n in names if n == label or n.startswith(label + "+"))


# splitk: the 1x1 kernel computing the depthwise values -- "all": the split-K kernel (staged
# in local memory) on every 1x1 layer, "0": the direct kernel. (By default the split-K kernel
# takes the pairs whose 1x1 layer the GEMM would not, and the others keep two kernels.)
@pytest.mark.parametrize("precision,batch,splitk", [("F32", 1, "all"), ("F32_F16", 1, "all"), ("F32", 2, "all"),
                                                    ("F32", 1, "0"), ("F32", 2, "0")])
def test_depthwise_computed_in_pointwise_conv(precision, batch, splitk, monkeypatch):
    require_gpu()
    monkeypatch.setenv("TFLITE_GPU_CONV_SPLITK", splitk)
    monkeypatch.delenv("TFLITE_GPU_DISABLE_FUSION", raising=False)
    monkeypatch.delenv("TFLITE_GPU_FUSION_DWPW_MAX_MACS", raising=False)
    monkeypatch.delenv("TFLITE_GPU_ENABLE_FUSION", raising=False)
    # Every pair, whatever its recomputation (the default limit, 2, depends on the device's tiles).
    monkeypatch.setenv("TFLITE_GPU_FUSION_DWPW_MAX_TIMES", "1000")
    x = np.random.default_rng(6).standard_normal([batch, 12, 11, 8]).astype(np.float32)
    model = lambda: dwpw_model(batch)
    names = check(model, [x], precision)
    assert kernel_labels(names, "DEPTHWISE_CONV_2D+CONV_2D") == 3, names
    assert "DEPTHWISE_CONV_2D+CONV_2D+ADD" in names, names  # the residual ADD stays fused
    assert names.count("DEPTHWISE_CONV_2D") == 3, names  # read twice, 3x3 consumer, multiplier 2
    # Turned off (the lead's A/B switch): three more kernels, same outputs.
    monkeypatch.setenv("TFLITE_GPU_DISABLE_FUSION", "dwpw")
    off = check(model, [x], precision)
    assert len(off) == len(names) + 3, (names, off)
    assert kernel_labels(off, "DEPTHWISE_CONV_2D+CONV_2D") == 0, off
    # A recomputation budget below every pair's cost keeps them apart too.
    monkeypatch.delenv("TFLITE_GPU_DISABLE_FUSION")
    monkeypatch.setenv("TFLITE_GPU_FUSION_DWPW_MAX_MACS", "100")
    assert len(check(model, [x], precision)) == len(names) + 3
    # A recomputation limit of 0 fuses none; the default limit fuses a subset (checked by check()
    # against the reference like the others).
    monkeypatch.delenv("TFLITE_GPU_FUSION_DWPW_MAX_MACS")
    monkeypatch.setenv("TFLITE_GPU_FUSION_DWPW_MAX_TIMES", "0")
    assert len(check(model, [x], precision)) == len(names) + 3
    monkeypatch.delenv("TFLITE_GPU_FUSION_DWPW_MAX_TIMES")
    dflt = check(model, [x], precision)
    # Each pair is fused or not as a whole: one kernel fewer per fused pair, no partial states.
    fused = kernel_labels(dflt, "DEPTHWISE_CONV_2D+CONV_2D")
    assert len(dflt) == len(names) + 3 - fused, (fused, names, dflt)


def tail_model(batch=1):
    """Classifier tails: global AVERAGE_POOL_2D (RELU6) -> 1x1 CONV_2D -> RESHAPE -> SOFTMAX, and
    MEAN over H, W (keep_dims false) -> FULLY_CONNECTED with 10 units; a MEAN that is also a graph
    output keeps its kernel."""
    net = _Net(7, "float32", "classifier tails")
    x = net.mb.add_input([batch, 5, 6, 20], name="x")
    pooled = net.mb.add_tensor([batch, 1, 1, 20], name="pooled")
    net.mb.add_op("AVERAGE_POOL_2D", [x], [pooled], options=dict(
        padding="VALID", stride_w=1, stride_h=1, filter_width=6, filter_height=5, fused_activation_function="RELU6"))
    probs = net.softmax(net.reshape(net.conv(pooled, 37, k=1, act="NONE", gain=1.0, prefix="logits"), [batch, 37]))
    axes = net.mb.add_const(np.asarray([1, 2], np.int32), name="axes")
    m = net.mb.add_tensor([batch, 20], name="mean")
    net.mb.add_op("MEAN", [x, axes], [m], options=dict(keep_dims=False))
    fc = net.fc(m, 10, act="RELU")
    m2 = net.mb.add_tensor([batch, 20], name="mean_out")
    net.mb.add_op("MEAN", [x, axes], [m2], options=dict(keep_dims=False))
    return net.finish({"x": x}, {"probs": probs, "fc": fc, "mean_out": m2})


@pytest.mark.parametrize("precision,batch", [("F32", 1), ("F32_F16", 1), ("F32", 3)])
def test_global_average_computed_in_classifier(precision, batch, monkeypatch):
    require_gpu()
    monkeypatch.delenv("TFLITE_GPU_DISABLE_FUSION", raising=False)
    monkeypatch.delenv("TFLITE_GPU_FUSION_DWPW_MAX_MACS", raising=False)
    monkeypatch.setenv("TFLITE_GPU_ENABLE_FUSION", "tail")  # opt-in lever (slower on NVIDIA, env.h)
    x = np.random.default_rng(7).standard_normal([batch, 5, 6, 20]).astype(np.float32) + 0.5
    model = lambda: tail_model(batch)
    names = check(model, [x], precision)
    assert "AVERAGE_POOL_2D+CONV_2D" in names and "MEAN+FULLY_CONNECTED" in names, names
    assert names.count("MEAN") == 1 and "AVERAGE_POOL_2D" not in names, names
    monkeypatch.setenv("TFLITE_GPU_DISABLE_FUSION", "tail")
    off = check(model, [x], precision)
    assert len(off) == len(names) + 2 and "AVERAGE_POOL_2D" in off, (names, off)
    monkeypatch.delenv("TFLITE_GPU_DISABLE_FUSION")
    monkeypatch.delenv("TFLITE_GPU_ENABLE_FUSION")
    assert check(model, [x], precision) == off  # default (not opted in): the tail keeps its kernels


def boundary_model(batch=2):
    """Direct boundaries: a float input (5 channels, batch 2) read by two 3x3 convs and through a
    zero-PAD view (4 channels before, rows around) by a 1x1 conv; outputs of 6 channels (a conv +
    LOGISTIC), a conv -> RESHAPE [B, 63, 8] (the RESHAPE's kernel goes: the conv writes the output's
    bytes), the padded-view conv, a rank-2 input through TANH to a 10-channel output, and two
    CONCATENATION outputs written in place by their producers: channels 8 + 3 (11, a ragged last
    slice) and, as BlazeFace's heads, RESHAPEs [B, 63, 8] + [B, 20, 8] along axis 1 (their RESHAPEs
    run no kernel either: each conv writes its rows of every batch). (No reader of
    an input here takes raw loads, which keep that input's conversion: see test_gpu_mma.)"""
    net = _Net(11, "float32", "direct boundaries")
    x = net.mb.add_input([batch, 9, 7, 5], name="x")
    v = net.mb.add_input([batch, 10], name="v")
    o1 = net.unary("LOGISTIC", net.conv(x, 6, k=3, act="NONE", gain=1.0, prefix="c1"))
    o2 = net.reshape(net.conv(x, 8, k=3, act="RELU", gain=1.0, prefix="c2"), [batch, 63, 8])
    o3 = net.conv(pad(net, x, [[0, 0], [1, 1], [0, 0], [4, 0]]), 4, k=1, act="NONE", gain=1.0, prefix="c3")
    o4 = net.unary("TANH", v)
    o5 = net.concat([net.conv(x, 8, k=3, act="NONE", gain=1.0, prefix="c5"),
                     net.conv(x, 3, k=3, act="RELU", gain=1.0, prefix="c6")], axis=3)
    o6 = net.concat([net.reshape(net.conv(x, 8, k=3, act="NONE", gain=1.0, prefix="c7"), [batch, 63, 8]),
                     net.reshape(net.conv(x, 8, k=3, stride=2, act="NONE", gain=1.0, prefix="c8"), [batch, 20, 8])], axis=1)
    return net.finish({"x": x, "v": v}, {"o1": o1, "o2": o2, "o3": o3, "o4": o4, "o5": o5, "o6": o6})


@pytest.mark.parametrize("precision", ["F32", "F32_F16"])
def test_direct_boundaries_run_no_conversion_kernel(precision, monkeypatch):
    require_gpu()
    monkeypatch.delenv("TFLITE_GPU_DISABLE_FUSION", raising=False)
    rng = np.random.default_rng(11)
    feeds = [rng.standard_normal([2, 9, 7, 5]).astype(np.float32), rng.standard_normal([2, 10]).astype(np.float32)]
    names = check(boundary_model, feeds, precision)
    assert not [n for n in names if n.startswith(("to_phwc4", "from_phwc4", "CONCATENATION"))], names
    assert "RESHAPE" not in names, names  # o2's and o6's parts: the convs write the outputs' bytes
    on_out, _ = gpu_run(boundary_model(), feeds, precision)
    monkeypatch.setenv("TFLITE_GPU_DISABLE_FUSION", "boundary")
    off = check(boundary_model, feeds, precision)
    # Bit-identical: the same values (F32_F16: direct boundaries round through half where the
    # conversion kernels stored half).
    off_out, _ = gpu_run(boundary_model(), feeds, precision)
    for a, b in zip(on_out, off_out):
        assert np.array_equal(a, b), (precision, float(np.max(np.abs(a - b))))
    assert off.count("to_phwc4") == 2 and off.count("from_phwc4") == 6 and off.count("RESHAPE") == 3, off
    assert len(off) == len(names) + 11, (names, off)


def test_direct_input_kept_for_raw_readers(monkeypatch):
    """An input whose reader takes raw PHWC4 loads (the tensor-core kernel, forced onto its plain
    path by TFLITE_GPU_CONV_MMA=plain on any device) keeps its conversion kernel: the partition is
    built again with that input converted; its output stays direct."""
    require_gpu()
    monkeypatch.delenv("TFLITE_GPU_DISABLE_FUSION", raising=False)
    monkeypatch.setenv("TFLITE_GPU_CONV_MMA", "plain")

    def build():
        net = _Net(13, "float32", "raw reader")
        x = net.mb.add_input([1, 6, 5, 8], name="x")
        return net.finish({"x": x}, {"y": net.conv(x, 12, k=1, act="NONE", gain=1.0, prefix="c")})
    x = np.random.default_rng(13).standard_normal([1, 6, 5, 8]).astype(np.float32)
    names = check(build, [x])
    assert names == ["to_phwc4", "CONV_2D"], names


def test_direct_boundaries_bound_buffers():
    """Buffer binding on direct boundaries, bit-exact with an unbound interpreter of the same options
    fed the buffer's values: float32 buffers (F32) are read and written in place by the model's
    kernels (no conversion kernel runs); float16 buffers (F32_F16) convert BHWC <-> BHWC, one kernel
    each (the float16 output: the unbound output rounded to half, as vstore_half and numpy both
    round to nearest even)."""
    require_gpu()
    cl = pytest.importorskip("pyopencl", reason="buffer binding needs pyopencl")
    model = boundary_model()
    rng = np.random.default_rng(12)
    feeds = [rng.standard_normal([2, 9, 7, 5]).astype(np.float32), rng.standard_normal([2, 10]).astype(np.float32)]
    q = tflite_gpu.pyopencl_queue()
    mf = cl.mem_flags
    for half in (False, True):
        dt = np.float16 if half else np.float32
        x = feeds[0].astype(dt)

        def interp():
            d = tflite_gpu.GpuDelegate(tflite_gpu.GpuDelegateOptions(is_precision_loss_allowed=half, device=q,
                                                                     enable_profiling=True))
            it = tflite_gpu.Interpreter(model_content=model, experimental_delegates=[d])
            it.allocate_tensors()
            it.enable_profiling(True)
            it.set_tensor(it.get_input_details()[1]["index"], feeds[1])
            return d, it
        _, ref = interp()
        ref.set_tensor(ref.get_input_details()[0]["index"], x.astype(np.float32))
        ref.invoke()
        d, it = interp()
        ins, outs = it.get_input_details(), it.get_output_details()
        d.bind_buffer_to_tensor(ins[0]["index"], cl.Buffer(q.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x), dt)
        ob = cl.Buffer(q.context, mf.READ_WRITE, size=int(np.prod(outs[0]["shape"])) * np.dtype(dt).itemsize)
        d.bind_buffer_to_tensor(outs[0]["index"], ob, dt)
        it.set_allow_buffer_handle_output(True)
        it.invoke()
        got0 = np.empty(outs[0]["shape"], dt)
        cl.enqueue_copy(q, got0, ob)
        q.finish()
        want = [ref.get_tensor(o["index"]) for o in ref.get_output_details()]
        assert np.array_equal(got0, want[0].astype(dt)), half
        names, ref_names = ([k["name"] for k in i._core.gpu_kernel_times()] for i in (it, ref))
        assert len(names) == len(ref_names) + (2 if half else 0), (half, names, ref_names)
        for o, w in zip(outs[1:], want[1:]):
            assert np.array_equal(it.get_tensor(o["index"]), w), (half, o["name"])
