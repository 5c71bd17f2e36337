"""CPU graph fusion (Subgraph::FuseCpuNodes, issue #14): a float CONV_2D whose output only a
same-shape float ADD reads computes that ADD (and its fused activation) in its output stage and
writes the ADD's output; likewise a PRELU with a per-channel constant alpha after the conv or after
that ADD. The chain's last step runs the fused conv, the other steps are skipped.

Each model runs through LiteRT's builtin kernels (BUILTIN_WITHOUT_DEFAULT_DELEGATES, the oracle;
rel-L2 <= 1e-5 as the op harness) and through ours with the fusion on and off
(TFLITE_GPU_CPU_FUSION=0): fused and unfused outputs must be bit-identical (the residual is added
to the same clamped conv value, then clamped as the ADD does). Whether a fusion happened is read
from the op profile, where a fused step is one entry named "CONV_2D+ADD" (+PRELU) covering its nodes.
"""
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tflite_gpu
from harness import assert_close, require_cpu_isa, run_litert
from tflite_gpu.testing.zoo import _Net, _res_block


def build(kind, batch=1, c=20, k=1, conv_act="NONE", add_act="NONE", swap=False, hw=9, cpad=8):
    """Small conv -> ADD residual models. kind:
      input:      ADD(x, conv(x)), the residual a graph input, the ADD's output the model output
      after:      conv(x), then the residual MAX_POOL_2D(x) (written after the conv in file order)
      two_uses:   the ADD's output feeds a second ADD and a conv and is a model output too
      conv_read:  the conv's output is also read by a MUL (no fusion)
      conv_out:   the conv's output is also a model output (no fusion)
      broadcast:  the residual is [1, 1, 1, C] (no fusion)
      block:      zoo _res_block (5x5 depthwise + 1x1 conv, MAX_POOL_2D + channel PAD shortcut, stride 2)
      prelu:      zoo _res_block with PRELU after the ADD
      conv_prelu: conv -> PRELU (alpha [1, 1, C]), then conv -> ADD -> PRELU (alpha [C])
      prelu_full: conv -> ADD -> PRELU whose alpha has the full [1, H, W, C] shape (ADD fused only)
      add_read:   conv -> ADD -> PRELU, the ADD's output also read by a MUL (ADD fused only)
      pad:        ADD(PAD(x) to cout channels, conv(x) to cout); then a PRELU (PAD fused: the conv
                  reads x and adds zeros past its channels)
      pad_before: the PAD also pads before the channels (not fused; the ADD is)
      pad_read:   the PAD's output also read by a MUL (not fused; the ADD is)
    """
    net = _Net(3, "float32", f"cpu fusion {kind}")
    x = net.mb.add_input([batch, hw, hw, c], name="x")

    def add(a, b, act=add_act):
        return net.binary("ADD", b, a, act=act) if swap else net.binary("ADD", a, b, act=act)

    outs = {}
    if kind == "input":
        outs["y"] = add(x, net.conv(x, c, k, act=conv_act, gain=1.0))
    elif kind == "after":
        h = net.conv(x, c, k, act=conv_act, gain=1.0)
        outs["y"] = add(net.max_pool(x, 3, 1), h)
    elif kind == "two_uses":
        h = net.conv(x, c, k, act=conv_act, gain=1.0)
        y = add(x, h)
        outs["y"] = y
        outs["z"] = net.binary("ADD", y, net.conv(y, c, 1, act="NONE", gain=1.0), act="RELU6")
    elif kind == "conv_read":
        h = net.conv(x, c, k, act=conv_act, gain=1.0)
        outs["y"] = add(x, h)
        outs["m"] = net.binary("MUL", h, x)
    elif kind == "conv_out":
        h = net.conv(x, c, k, act=conv_act, gain=1.0)
        outs["y"] = add(x, h)
        outs["h"] = h
    elif kind == "broadcast":
        h = net.conv(x, c, k, act=conv_act, gain=1.0)
        r = net.mb.add_const(np.linspace(-1, 1, c, dtype=np.float32).reshape(1, 1, 1, c), name="r")
        outs["y"] = add(r, h)
    elif kind == "block":
        outs["y"] = _res_block(net, _res_block(net, x, 2 * c, 2, k=5, act=add_act), 2 * c, 1, k=5, act=add_act)
    elif kind == "prelu":
        outs["y"] = _res_block(net, _res_block(net, x, c, 1, k=3, act="PRELU"), c, 1, k=3, act="PRELU")
    elif kind in ("conv_prelu", "prelu_full", "add_read"):
        def prelu(t, alpha_shape):
            al = net.mb.add_const((0.25 + 0.1 * net.rng.standard_normal(alpha_shape)).astype(np.float32),
                                  name=net.name("alpha"))
            y = net.mb.add_tensor(net.shape(t), name=net.name("prelu"))
            net.mb.add_op("PRELU", [t, al], [y])
            return y
        if kind == "conv_prelu":
            h = prelu(net.conv(x, c, k, act=conv_act, gain=1.0), [1, 1, c])
            outs["y"] = prelu(add(h, net.conv(h, c, k, act=conv_act, gain=1.0)), [c])
        elif kind == "prelu_full":
            outs["y"] = prelu(add(x, net.conv(x, c, k, act=conv_act, gain=1.0)), [1, hw, hw, c])
        else:
            s = add(x, net.conv(x, c, k, act=conv_act, gain=1.0))
            outs["y"] = prelu(s, [1, 1, c])
            outs["m"] = net.binary("MUL", s, x)
    elif kind in ("pad", "pad_before", "pad_read"):
        cout = c + cpad
        h = net.conv(x, cout, k, act=conv_act, gain=1.0)
        if kind == "pad_before":
            p = net.mb.add_const(np.asarray([[0, 0], [0, 0], [0, 0], [2, cpad - 2]], np.int32), name="padc")
            sc = net.mb.add_tensor([batch, hw, hw, cout], name="padded")
            net.mb.add_op("PAD", [x, p], [sc])
        else:
            sc = net.pad_channels(x, cout)
        s = add(sc, h)
        if kind == "pad_read":
            outs["m"] = net.binary("MUL", sc, sc)
        outs["y"] = net.prelu(s) if kind == "pad" and add_act == "NONE" else s
    else:
        raise ValueError(kind)
    return net.finish({"x": x}, outs)


def ours(model, x, threads=2, fusion=True, monkeypatch=None, **kw):
    """Outputs of our fast CPU kernels and the number of fused conv + ADD steps."""
    if not fusion:
        monkeypatch.setenv("TFLITE_GPU_CPU_FUSION", "0")   # read by allocate_tensors
    it = tflite_gpu.Interpreter(model_content=model, num_threads=threads, **kw)
    d = it.get_input_details()[0]
    if list(d["shape"]) != list(x.shape):
        it.resize_tensor_input(d["index"], list(x.shape))
    it.allocate_tensors()
    if not fusion:
        monkeypatch.delenv("TFLITE_GPU_CPU_FUSION")
    it.set_tensor(d["index"], x)
    it.enable_profiling(True)
    it.invoke()
    prof = it.get_profile()
    fused = [e for e in prof if e["name"].startswith("CONV_2D+")]
    for e in fused:
        assert len(e["nodes"]) == e["name"].count("+") + 1, e
    it.fused_names = sorted(e["name"] for e in fused)
    return [it.get_tensor(o["index"]) for o in it.get_output_details()], len(fused), it


def check(model, x, want_fused, threads, monkeypatch, names=None):
    want = run_litert(model, [x])
    got, n, it = ours(model, x, threads)
    assert_close(got, want, 1e-5, "fused vs LiteRT BUILTIN")
    assert n == want_fused, f"{n} fused steps, expected {want_fused}"
    if names is not None:
        assert it.fused_names == sorted(names)
    plain, n0, _ = ours(model, x, threads, fusion=False, monkeypatch=monkeypatch)
    assert n0 == 0
    for a, b in zip(got, plain):
        np.testing.assert_array_equal(a, b, err_msg="fused and unfused outputs differ")


def data(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("k,c,conv_act,add_act,swap", [
    (1, 20, "NONE", "NONE", False),     # 1x1 direct GEMM, partial panel
    (1, 72, "NONE", "RELU", True),      # wide panels + a partial one, operands swapped
    (3, 20, "RELU6", "RELU", False),    # implicit-GEMM conv with border pixels, both activations
    (3, 16, "NONE", "RELU_N1_TO_1", True),
])
def test_residual_from_input(threads, k, c, conv_act, add_act, swap, monkeypatch):
    model = build("input", c=c, k=k, conv_act=conv_act, add_act=add_act, swap=swap)
    check(model, data([1, 9, 9, c]), 1, threads, monkeypatch)


@pytest.mark.parametrize("threads", [1, 2])
def test_batch2_and_large(threads, monkeypatch):
    # batch 2 and enough rows that the GEMM splits over both threads (affine row shares)
    model = build("input", batch=2, c=48, k=3, add_act="RELU", hw=40)
    check(model, data([2, 40, 40, 48], 1), 1, threads, monkeypatch)


@pytest.mark.parametrize("kind,fused", [("after", 1), ("two_uses", 2), ("conv_read", 0), ("conv_out", 0),
                                        ("broadcast", 0)])
@pytest.mark.parametrize("threads", [1, 2])
def test_graph_shapes(kind, fused, threads, monkeypatch):
    model = build(kind, c=24, k=3, add_act="RELU", swap=(kind == "after"))
    check(model, data([1, 9, 9, 24], 2), fused, threads, monkeypatch)


@pytest.mark.parametrize("threads", [1, 2])
def test_zoo_blocks(threads, monkeypatch):
    # palm / face-mesh residual blocks: the shortcut (MAX_POOL_2D, PAD) runs after the conv
    check(build("block", c=16, add_act="RELU", hw=24), data([1, 24, 24, 16], 3), 2, threads, monkeypatch)
    check(build("prelu", c=16, hw=24), data([1, 24, 24, 16], 4), 2, threads, monkeypatch)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("k,c", [(1, 20), (3, 36)])
def test_prelu(threads, k, c, monkeypatch):
    x = data([2, 9, 9, c], 9)
    check(build("conv_prelu", c=c, k=k, add_act="RELU6"), x, 2, threads, monkeypatch,
          names=["CONV_2D+ADD+PRELU", "CONV_2D+PRELU"])
    check(build("prelu_full", c=c, k=k), x, 1, threads, monkeypatch, names=["CONV_2D+ADD"])
    check(build("add_read", c=c, k=k, conv_act="RELU"), x, 1, threads, monkeypatch, names=["CONV_2D+ADD"])


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("c,cpad,k,add_act,swap", [
    (12, 8, 1, "RELU", False),    # 20 channels: the residual's 12 end inside the first vector
    (16, 24, 3, "NONE", True),    # 40: whole vectors of residual, then zeros; + PRELU
    (24, 40, 1, "RELU6", False),  # 64 (AVX-512 wide panels): a panel with no residual column
])
def test_channel_pad_residual(threads, c, cpad, k, add_act, swap, monkeypatch):
    x = data([2, 9, 9, c], 12)
    name = "CONV_2D+ADD+PAD" + ("+PRELU" if add_act == "NONE" else "")
    check(build("pad", batch=2, c=c, cpad=cpad, k=k, add_act=add_act, swap=swap), x, 1, threads, monkeypatch,
          names=[name])
    check(build("pad_before", batch=2, c=c, cpad=cpad, k=k, add_act=add_act), x, 1, threads, monkeypatch,
          names=["CONV_2D+ADD"])
    check(build("pad_read", batch=2, c=c, cpad=cpad, k=k, add_act=add_act), x, 1, threads, monkeypatch,
          names=["CONV_2D+ADD"])


def test_non_finite_inputs(monkeypatch):
    # inf / NaN through the fused clamp, residual add and PRELU select: bit-exact vs unfused, and
    # vs our reference kernels (same non-finite places, finite values within 1e-5). Not vs LiteRT for conv_prelu: there LiteRT's CONV_2D with NONE
    # clamps +-inf to +-FLT_MAX where ours (fused or not, fast or reference) keeps +-inf, a
    # difference of the conv kernels themselves (the 'input' model shows none and is checked).
    x = data([1, 9, 9, 20], 10)
    x[0, 2, 3, 4], x[0, 5, 5, :3], x[0, 8, 0, 7] = np.inf, -np.inf, np.nan
    check(build("input", c=20, k=3, add_act="NONE"), x, 1, 1, monkeypatch)
    model = build("conv_prelu", c=20, k=1, add_act="RELU")
    got, n, _ = ours(model, x, 2)
    plain, _, _ = ours(model, x, 2, fusion=False, monkeypatch=monkeypatch)
    ref, _, _ = ours(model, x, 2, use_reference_kernels=True)
    assert n == 2 and not np.isfinite(got[0]).all()
    np.testing.assert_array_equal(got[0], plain[0])
    assert_close(got, ref, 1e-5, "fused vs reference kernels")


def test_resize_batch(monkeypatch):
    # built for batch 1, run at batch 3: the fusion is decided again at allocate_tensors
    model = build("input", c=20, k=3, add_act="RELU6")
    check(model, data([3, 9, 9, 20], 5), 1, 2, monkeypatch)


def test_off_with_reference_kernels_and_preserve_all():
    model = build("input", c=20, k=3, add_act="RELU")
    x = data([1, 9, 9, 20], 6)
    want = run_litert(model, [x])
    got, n, _ = ours(model, x, use_reference_kernels=True)
    assert n == 0
    assert_close(got, want, 1e-5, "reference kernels")
    # experimental_preserve_all_tensors: the conv's own output keeps its value, as LiteRT's
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    lr = Interpreter(model_content=model, experimental_preserve_all_tensors=True,
                     experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    lr.allocate_tensors()
    lr.set_tensor(lr.get_input_details()[0]["index"], x)
    lr.invoke()
    got, n, it = ours(model, x, experimental_preserve_all_tensors=True)
    assert n == 0
    assert_close(got, want, 1e-5, "preserve_all_tensors")
    conv_out = [d["index"] for d in it.get_tensor_details() if re.fullmatch(r"conv_\d+", d["name"])]
    assert conv_out
    for t in conv_out:
        assert_close([it.get_tensor(t)], [lr.get_tensor(t)], 1e-5, f"intermediate {t}")


def test_env_switch_and_intermediate_storage(monkeypatch):
    model = build("input", c=20, k=1)
    x = data([1, 9, 9, 20], 7)
    _, n_off, _ = ours(model, x, fusion=False, monkeypatch=monkeypatch)
    _, n_on, it = ours(model, x)
    assert (n_off, n_on) == (0, 1)
    # the fused conv's own output (written by no step) still has storage of its shape
    seen = 0
    for d in it.get_tensor_details():
        if re.fullmatch(r"conv_\d+", d["name"]):
            seen += 1
            assert it.get_tensor(d["index"]).shape == (1, 9, 9, 20)
    assert seen == 1


@pytest.mark.parametrize("isa", ["scalar", "sse2", "avx2", "avx512"])
def test_simd_paths(isa):
    """The fused output stage of every micro-kernel ISA (TFLITE_GPU_CPU_ISA can only lower the ISA
    the CPU has): a few models above, in a subprocess, vs LiteRT BUILTIN and bit-exact vs unfused."""
    require_cpu_isa(isa)
    code = textwrap.dedent("""
        import os, sys
        import numpy as np
        sys.path.insert(0, sys.argv[1])
        import test_cpu_fusion as t
        from harness import assert_close, run_litert
        n = 0
        for kw, shape, nfused in [(dict(kind="input", c=20, k=1, add_act="RELU"), [2, 9, 9, 20], 1),
                                  (dict(kind="input", c=44, k=3, conv_act="RELU6", swap=True), [1, 9, 9, 44], 1),
                                  (dict(kind="after", c=12, k=3, add_act="RELU6"), [1, 7, 7, 12], 1),
                                  (dict(kind="conv_prelu", c=20, k=3), [1, 7, 7, 20], 2),
                                  (dict(kind="pad", c=12, k=3, cpad=9), [1, 7, 7, 12], 1)]:
            model, x = t.build(**kw), t.data(shape, 8)
            want = run_litert(model, [x])
            for th in (1, 2):
                os.environ.pop("TFLITE_GPU_CPU_FUSION", None)
                got, nf, _ = t.ours(model, x, th)
                assert nf == nfused, nf
                assert_close(got, want, 1e-5, str(kw))
                os.environ["TFLITE_GPU_CPU_FUSION"] = "0"
                plain, nf0, _ = t.ours(model, x, th)
                assert nf0 == 0
                for a, b in zip(got, plain):
                    assert np.array_equal(a, b), kw
                n += 1
        print("ok", n)
    """)
    env = dict(os.environ, TFLITE_GPU_CPU_ISA=isa)
    tests_dir = os.path.dirname(os.path.abspath(__file__))
    # cwd: not the repository root, whose tflite_gpu/ source folder would shadow the installed package.
    r = subprocess.run([sys.executable, "-c", code, tests_dir], env=env, capture_output=True, text=True, timeout=300,
                       cwd=tests_dir)
    assert r.returncode == 0 and "ok" in r.stdout, r.stdout[-3000:] + r.stderr[-3000:]


@pytest.mark.parametrize("op_filter,fused", [(["CONV_2D", "ADD"], 2), (["CONV_2D"], 0)])
def test_with_gpu_delegate(op_filter, fused):
    """Nodes the GPU delegate (PoCL here) leaves on the CPU: conv + ADD both there fuse (their
    residual then comes from a GPU partition); an ADD on the GPU reads the conv's output from a
    partition, so that conv is not fused."""
    from gpu_util import delegate
    model = build("block", c=16, add_act="RELU", hw=24)
    x = data([1, 24, 24, 16], 11)
    want = run_litert(model, [x])
    got, n, it = ours(model, x, experimental_delegates=[delegate(op_filter=op_filter, max_delegated_partitions=16)])
    assert it.delegation_report()["delegated_nodes"] > 0
    assert n == fused
    assert_close(got, want, 1e-5, f"op_filter {op_filter}")
