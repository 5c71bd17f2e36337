"""fp16 storage (F32_F16) through whole zoo models, bounded by what fp16 storage must cost.

Reference: LiteRT's builtin kernels (BUILTIN_WITHOUT_DEFAULT_DELEGATES) in float32. Bound: the
error of an fp16-storage emulation of the same graph (fp16_emulation.py: every stored tensor and
constant rounded to half, float arithmetic, run by LiteRT's builtin kernels), with the tensors
whose float32 value exceeds 65504 kept in float -- the ideal mixed storage. The delegate rounds a
subset of what the emulation rounds (nothing inside a fused kernel), so its error must not exceed
the emulation's; the factor 2 allows for the two roundings of a tensor landing on different sides
(rounding errors of the same size, not the same sign), and 1e-5 is the float32 bound of
test_models.py for the parts where fp16 costs nothing.

The delegate is not told which tensors overflow: it decides at prepare from the graph
(gpu/precision_plan.h). The hazard model (pose_landmark_like with its soft-argmax heatmap decode:
EXP of unnormalised heatmap logits, SUM over the heatmap) shows the plan is needed: with every
tensor in half (TFLITE_GPU_FP16_ALL_HALF=1) its decoded landmarks are garbage, with the plan they
are within the emulation's bound. Each model's count of float-kept tensors is printed (they cost
fp16's speed on those tensors) and must cover the overflowing ones."""
import logging
import re

import numpy as np
import pytest

import tflite_gpu
from fp16_emulation import emulation_bound, fp16_storage_model, overflowing_tensors, round_feeds, run_litert
from gpu_util import delegate, require_gpu
from harness import rel_l2
from tflite_gpu.testing import zoo

# name -> (zoo function, kwargs): the hazard model and zoo nets at sizes PoCL runs quickly.
MODELS = {
    "pose_landmark_decode": (zoo.pose_landmark_like, dict(input_size=128, seed=1, heatmap_decode=True)),
    "mobilenet_v1": (zoo.mobilenet_v1, dict(input_size=128, alpha=0.5)),
    "posenet_like": (zoo.posenet_like, dict(seed=1)),
    "ssd_like": (zoo.ssd_like, dict(seed=1)),
    "hand_landmark_like": (zoo.hand_landmark_like, dict(input_size=96, seed=1)),
    # Squeeze-and-excite gates (hard sigmoid, relu6(x + 3) / 6) times feature maps in 9 blocks: the
    # plan once kept 11 of its 127 tensors in float (estimates compounding through the gates) that
    # peak below 20; storing them as half costs nothing the emulation can see.
    "mobilenet_v3_small": (zoo.mobilenet_v3_small, dict(input_size=96, seed=1)),
}


_KEPT_RE = re.compile(r"fp16 storage: (\d+) of (\d+) GPU tensors kept in float")


def _gpu_run(model, feeds, caplog):
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="tflite_gpu"):
        it = tflite_gpu.Interpreter(model_content=model, experimental_delegates=[delegate("F32_F16")])
        it.allocate_tensors()
    kept, total = 0, 0
    for r in caplog.records:
        m = _KEPT_RE.search(r.getMessage())
        if m:
            kept += int(m.group(1))
            total += int(m.group(2))
    for d, x in zip(it.get_input_details(), feeds):
        it.set_tensor(d["index"], x)
    it.invoke()
    names = [d["name"] for d in it.get_output_details()]
    msgs = " ".join(r.getMessage() for r in caplog.records)
    return [it.get_tensor(d["index"]) for d in it.get_output_details()], names, kept, total, msgs


def _errors(got, want):
    return [rel_l2(a, b) if np.all(np.isfinite(a)) else float("inf") for a, b in zip(got, want)]


@pytest.mark.parametrize("name", list(MODELS))
def test_fp16_storage_within_emulation_bound(name, caplog):
    require_gpu()
    fn, kw = MODELS[name]
    mb = zoo.builder_of(fn, **kw)
    model = mb.build()
    rng = np.random.default_rng(11)
    from ai_edge_litert.interpreter import Interpreter
    feeds = [rng.standard_normal(d["shape"]).astype(d["dtype"]) for d in Interpreter(model_content=model).get_input_details()]
    feeds = round_feeds(feeds)
    ref = run_litert(model, feeds)
    over = overflowing_tensors(model, feeds)
    emul = run_litert(fp16_storage_model(mb, keep=over), feeds)
    e_emul = _errors(emul, ref)
    got, names, kept, total, msgs = _gpu_run(model, feeds, caplog)
    e_gpu = _errors(got, ref)
    print(f"\n{name}: {kept} GPU tensors kept in float (of {total} when any); overflowing in float32: {sorted(over)}")
    for n, a, b in zip(names, e_gpu, e_emul):
        print(f"  {n}: delegate fp16 rel-L2 {a:.3g}, emulation {b:.3g}")
    for n, a, b in zip(names, e_gpu, e_emul):
        assert np.isfinite(b), f"{name} output {n}: the emulation itself is not finite"
        assert a <= 2 * b + 1e-5, f"{name} output {n}: fp16 rel-L2 {a:.3g} > 2 x emulation {b:.3g} + 1e-5"
    # Every tensor that overflows must be one the delegate kept (its name is in the log line).
    for t in over:
        assert f"'{t}'" in msgs, f"{name}: tensor {t} exceeds 65504 in float32 but was stored as half: {msgs}"
    if not over:
        assert kept == 0, f"{name}: nothing overflows, yet {kept} tensors were kept in float: {msgs}"


def test_fp16_hazard_model_needs_the_plan(monkeypatch, caplog):
    """Without the plan (every tensor half) the hazard model's decoded landmarks are garbage, as
    the emulation that rounds every tensor predicts; with it they are right (test above)."""
    require_gpu()
    fn, kw = MODELS["pose_landmark_decode"]
    mb = zoo.builder_of(fn, **kw)
    model = mb.build()
    rng = np.random.default_rng(11)
    feeds = round_feeds([rng.standard_normal([1, 128, 128, 3]).astype(np.float32)])
    ref = run_litert(model, feeds)
    emul_all = _errors(run_litert(fp16_storage_model(mb), feeds), ref)
    monkeypatch.setenv("TFLITE_GPU_FP16_ALL_HALF", "1")
    got, names, kept, _, _ = _gpu_run(model, feeds, caplog)
    assert kept == 0
    i = names.index("heatmap_xy")
    e = _errors(got, ref)[i]
    assert not emul_all[i] <= 0.1, f"all-half emulation rel-L2 {emul_all[i]:.3g}: the model shows no hazard"
    assert not e <= 0.1, f"all-half delegate rel-L2 {e:.3g}: the model shows no hazard"


@pytest.mark.parametrize("seed,heat_gain", [(1, 0.05), (2, 0.1), (2, 0.5), (2, 1.0), (3, 2.0)])
def test_plan_keeps_what_overflows_across_hazard_strengths(seed, heat_gain, caplog):
    """The pose-landmark hazard from marginal (only the SUM of exponentials past 65504) to strong
    (EXP itself): every tensor whose float32 value exceeds fp16's range on this input (LiteRT
    builtin) is one the plan keeps in float, judged from the graph alone."""
    require_gpu()
    model = zoo.pose_landmark_like(input_size=128, seed=seed, heatmap_decode=True, heat_gain=heat_gain)
    feeds = round_feeds([np.random.default_rng(11).standard_normal([1, 128, 128, 3]).astype(np.float32)])
    over = overflowing_tensors(model, feeds)
    assert over, f"heat_gain {heat_gain}: nothing overflows, the case shows no hazard"
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="tflite_gpu"):
        tflite_gpu.Interpreter(model_content=model, experimental_delegates=[delegate("F32_F16")]).allocate_tensors()
    msgs = " ".join(r.getMessage() for r in caplog.records)
    missed = [t for t in sorted(over) if f"'{t}'" not in msgs]
    assert not missed, f"heat_gain {heat_gain}: {missed} exceed 65504 in float32 but were stored as half: {msgs}"


def _mixed_boundary_model():
    """x * 2e4 overflows half (the plan keeps it float: estimated peak 8 * 2e4); it is read through
    a zero-PAD view, scaled back below 1e4 and placed into a CONCATENATION with a half tensor,
    summed (a float partition output) and reshaped: float and half tensors meet at every kind of
    kernel boundary (kernel, view, placed output, partition output)."""
    from tflite_gpu.testing.builder import ModelBuilder
    mb = ModelBuilder()
    x = mb.add_input([1, 6, 5, 6], name="x")

    def op(name, ins, shape, opts=None, out_name=None):
        y = mb.add_tensor(shape, name=out_name)
        mb.add_op(name, ins, [y], options=opts)
        return y
    big = op("MUL", [x, mb.add_const(np.asarray([2e4], np.float32))], [1, 6, 5, 6], out_name="big")
    pad = op("PAD", [big, mb.add_const(np.asarray([[0, 0], [1, 0], [0, 1], [0, 2]], np.int32))], [1, 7, 6, 8])
    small = op("MUL", [pad, mb.add_const(np.asarray([1e-4], np.float32))], [1, 7, 6, 8], out_name="small")
    other = op("ADD", [op("MUL", [pad, mb.add_const(np.asarray([0.0], np.float32))], [1, 7, 6, 8]),
                       mb.add_const(np.full([1, 7, 6, 8], 0.5, np.float32))], [1, 7, 6, 8])
    cat = op("CONCATENATION", [small, other], [1, 7, 6, 16], dict(axis=3), out_name="cat")
    total = op("SUM", [big, mb.add_const(np.asarray([1, 2], np.int32))], [1, 1, 1, 6], dict(keep_dims=True),
               out_name="total")
    flat = op("RESHAPE", [big, mb.add_const(np.asarray([1, 180], np.int32))], [1, 180], out_name="flat")
    for t in (cat, total, flat):
        mb.mark_output(t)
    return mb


def test_mixed_storage_boundaries(monkeypatch, caplog):
    require_gpu()
    mb = _mixed_boundary_model()
    model = mb.build()
    rng = np.random.default_rng(3)
    feeds = round_feeds([(rng.standard_normal([1, 6, 5, 6]) * 2).astype(np.float32)])
    ref = run_litert(model, feeds)
    assert np.abs(ref[2]).max() > 65504  # the hazard is real on this input
    got, names, kept, _, msgs = _gpu_run(model, feeds, caplog)
    assert "'big'" in msgs and kept >= 1, msgs
    # Bound: the emulation keeping what overflows in float (the ideal mixed storage), as above.
    emul = run_litert(fp16_storage_model(mb, keep=overflowing_tensors(model, feeds)), feeds)
    for n, g, r, em in zip(names, got, ref, emul):
        e, b = rel_l2(g, r), emulation_bound(em, r)
        print(f"mixed storage: output {n} rel-L2 {e:.3g}, bound {b:.3g}")
        assert e <= b, f"mixed storage: output {n} rel-L2 {e:.3g} > 2 x emulation + 1e-5 = {b:.3g}"
    monkeypatch.setenv("TFLITE_GPU_FP16_ALL_HALF", "1")
    got, _, kept, _, _ = _gpu_run(model, feeds, caplog)
    assert kept == 0 and not np.all(np.isfinite(got[2]))  # all half: the big values are inf


@pytest.mark.parametrize("precision", ["F32", "F32_F16"])
def test_aligned_vector_access_matches_the_builtins(precision, monkeypatch):
    """Tensors and weights are read and written as aligned float4 vectors, and on NVIDIA 4 halves
    as one uint2 (partition_model.cc; elsewhere halves keep vload_half4, so on PoCL the fp16 case
    checks the float tensors it keeps); TFLITE_GPU_VLOAD=1 goes through OpenCL's vload4 /
    vload_half4 instead. The same values move either way, so the outputs must be bit-identical: on
    a small MobileNet (every kernel family reads through them) and on the mixed float / half
    boundary model."""
    require_gpu()
    rng = np.random.default_rng(4)
    models = [zoo.mobilenet_v1(input_size=96, alpha=0.25), _mixed_boundary_model().build()]
    for model in models:
        it0 = tflite_gpu.Interpreter(model_content=model)
        feeds = [rng.standard_normal(d["shape"]).astype(np.float32) for d in it0.get_input_details()]
        outs = []
        for vload in ("0", "1"):
            monkeypatch.setenv("TFLITE_GPU_VLOAD", vload)
            it = tflite_gpu.Interpreter(model_content=model, experimental_delegates=[delegate(precision)])
            it.allocate_tensors()
            rep = it.delegation_report()
            assert rep["delegated_nodes"] == rep["total_nodes"], rep["unsupported"]
            for d, x in zip(it.get_input_details(), feeds):
                it.set_tensor(d["index"], x)
            it.invoke()
            outs.append([it.get_tensor(d["index"]) for d in it.get_output_details()])
        for a, b in zip(*outs):
            assert np.array_equal(a, b, equal_nan=True), (precision, np.abs(a - b).max())
