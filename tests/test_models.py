"""Whole models the suite builds (tflite_gpu.testing.zoo) against TensorFlow Lite (ai-edge-litert):
our CPU kernels, and the GPU delegate (fully delegated where the issue asks it).

Tolerance: rel-L2 <= 1e-5. Deep nets with random weights amplify rounding differences; where
LiteRT's own two CPU paths (XNNPACK and its builtin kernels) already disagree by more than
that on a model, the bound is twice their measured disagreement, computed in the test.
One documented exception (XNNPACK_ONLY below): models with MediaPipe's Convolution2DTransposeBias,
which only litert's XNNPACK delegate runs, are checked against litert with XNNPACK."""
import numpy as np
import pytest

import tflite_gpu
from gpu_util import delegate, require_gpu
from harness import rel_l2
from tflite_gpu.testing import zoo

# ---------------------------------------------------------------------------------------------
# The one exception to "litert's builtin kernels are the reference": MediaPipe's custom op
# Convolution2DTransposeBias exists in litert only inside its XNNPACK delegate (the builtin resolver
# fails with "unresolved custom op"). For a model registered in XNNPACK_ONLY, litert_pair returns
# litert with its default XNNPACK delegate on the model itself as the reference, and in place of
# the builtin-kernel run it runs litert's builtin kernels on a twin model that computes the same
# thing with the builtin TRANSPOSE_CONV (v3, with bias) -- so the tolerance is still twice litert's
# own XNNPACK-vs-builtin spread on that computation. test_xnnpack_only_twins_compute_the_same checks
# that the twin really is the same computation. Models are keyed by their bytes because the tests
# hand litert_pair only the model bytes.
# ---------------------------------------------------------------------------------------------
XNNPACK_ONLY = {}


def xnnpack_only(make_model, make_twin):
    def make():
        model = make_model()
        XNNPACK_ONLY[model] = make_twin
        return model
    make.twin = make_twin
    return make


MODELS = {
    "mobilenet_v1_224": lambda: zoo.mobilenet_v1(),
    "mobilenet_v2_224": lambda: zoo.mobilenet_v2(),
    "mobilenet_v1_fp16w": lambda: zoo.mobilenet_v1(input_size=128, alpha=0.5, weights_dtype="float16"),
    "mobilenet_v2_fc": lambda: zoo.mobilenet_v2(input_size=96, alpha=0.35, classifier="fc"),
    "mobilenet_v1_b3": lambda: zoo.mobilenet_v1(input_size=96, alpha=0.25, batch=3),
    "encoder_decoder": lambda: zoo.encoder_decoder(seed=2),
    "lstm": lambda: zoo.lstm_model(seed=3),
    "basic_lstm": lambda: zoo.basic_lstm_model(seed=4),
    "mobilenet_v3_small_fc": lambda: zoo.mobilenet_v3_small(input_size=96, alpha=0.75, classifier="fc", seed=1),
    "deeplab_like": lambda: zoo.deeplab_like(seed=1),
    "ssd_like": lambda: zoo.ssd_like(seed=1),
    "posenet_like": lambda: zoo.posenet_like(seed=1),
    "selfie_segmentation_like": xnnpack_only(
        lambda: zoo.selfie_segmentation_like(seed=1),
        lambda: zoo.selfie_segmentation_like(seed=1, decoder="TRANSPOSE_CONV")),
    "face_detector_like": lambda: zoo.face_detector_like(seed=1),
    # The MediaPipe-shaped CPU speed set of benchmarks/bench_speed.py, at smaller inputs.
    "face_mesh_like": lambda: zoo.face_mesh_like(input_size=96, seed=1),
    "hand_landmark_like": lambda: zoo.hand_landmark_like(input_size=96, seed=1),
    "pose_landmark_like": lambda: zoo.pose_landmark_like(input_size=128, seed=1),
    "palm_detection_like": lambda: zoo.palm_detection_like(input_size=96, seed=1),
}
# Models the GPU delegate must take whole (one partition) at sizes PoCL runs quickly.
GPU_MODELS = {
    "mobilenet_v1": lambda: zoo.mobilenet_v1(input_size=128, alpha=0.5),
    "mobilenet_v2": lambda: zoo.mobilenet_v2(input_size=96, alpha=0.5),
    "mobilenet_v1_fp16w": lambda: zoo.mobilenet_v1(input_size=96, alpha=0.25, weights_dtype="float16"),
    "encoder_decoder": lambda: zoo.encoder_decoder(seed=2),
    "mobilenet_v3_small": lambda: zoo.mobilenet_v3_small(input_size=96),
    "deeplab_like": lambda: zoo.deeplab_like(),
    "ssd_like": lambda: zoo.ssd_like(),
    "posenet_like": lambda: zoo.posenet_like(),
    "selfie_segmentation_like": xnnpack_only(
        lambda: zoo.selfie_segmentation_like(),
        lambda: zoo.selfie_segmentation_like(decoder="TRANSPOSE_CONV")),
    "face_detector_like": lambda: zoo.face_detector_like(),
}


def inputs_for(model, seed=0, runs=1):
    from ai_edge_litert.interpreter import Interpreter
    det = Interpreter(model_content=model).get_input_details()
    rng = np.random.default_rng(seed)
    return [[rng.standard_normal(d["shape"]).astype(d["dtype"]) for d in det] for _ in range(runs)]


def run_seq(make_interp, feeds):
    """Runs several invokes on one interpreter (state carries over for LSTMs)."""
    it = make_interp()
    it.allocate_tensors()
    outs = []
    for feed in feeds:
        for d, x in zip(it.get_input_details(), feed):
            it.set_tensor(d["index"], x)
        it.invoke()
        outs.append([it.get_tensor(d["index"]) for d in it.get_output_details()])
    return outs


def litert_pair(model, feeds):
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    xnn = run_seq(lambda: Interpreter(model_content=model, num_threads=1), feeds)
    twin = XNNPACK_ONLY.get(model)
    if twin is not None:
        # The one exception (see XNNPACK_ONLY): the reference is litert's XNNPACK path on the model
        # itself; litert's builtin kernels run the builtin-op twin for the spread.
        builtin = run_seq(lambda: Interpreter(model_content=twin(), num_threads=1,
                                              experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES),
                          feeds)
        return builtin, xnn
    ref = run_seq(lambda: Interpreter(model_content=model, num_threads=1,
                                      experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES),
                  feeds)
    return xnn, ref


def bound(xnn, ref):
    spread = max(rel_l2(a, b) for ra, rb in zip(xnn, ref) for a, b in zip(ra, rb))
    return max(1e-5, 2 * spread), spread


@pytest.mark.parametrize("name", list(MODELS))
def test_cpu_matches_litert(name):
    model = MODELS[name]()
    feeds = inputs_for(model, runs=3 if "lstm" in name else 1)
    xnn, ref = litert_pair(model, feeds)
    tol, spread = bound(xnn, ref)
    for kernels in ("fast", "reference"):
        got = run_seq(lambda: tflite_gpu.Interpreter(model_content=model, num_threads=2,
                                                     use_reference_kernels=kernels == "reference"), feeds)
        for step, (g, r) in enumerate(zip(got, ref)):
            for i, (a, b) in enumerate(zip(g, r)):
                e = rel_l2(a, b)
                assert e <= tol, f"{name} [{kernels}] step {step} output {i}: rel-L2 {e:.3g} > {tol:.3g} " \
                                 f"(litert XNNPACK vs builtin spread {spread:.3g})"


@pytest.mark.parametrize("name", list(GPU_MODELS))
def test_gpu_delegate_matches_litert(name):
    require_gpu()
    model = GPU_MODELS[name]()
    feeds = inputs_for(model, seed=5)
    xnn, ref = litert_pair(model, feeds)
    tol, spread = bound(xnn, ref)
    d = delegate()
    got = run_seq(lambda: tflite_gpu.Interpreter(model_content=model, experimental_delegates=[d]), feeds)
    it = tflite_gpu.Interpreter(model_content=model, experimental_delegates=[delegate()])
    rep = it.delegation_report()
    assert rep["partitions"] == 1 and rep["delegated_nodes"] == rep["total_nodes"], rep
    for a, b in zip(got[0], ref[0]):
        e = rel_l2(a, b)
        assert e <= tol, f"{name} [GPU F32]: rel-L2 {e:.3g} > {tol:.3g} (litert spread {spread:.3g})"


# The fp16 nets of GPU_MODELS, as (zoo function, kwargs) for their ModelBuilder.
FP16_NETS = {
    "mobilenet_v1": (zoo.mobilenet_v1, dict(input_size=128, alpha=0.5)),
    "mobilenet_v2": (zoo.mobilenet_v2, dict(input_size=96, alpha=0.5)),
    "encoder_decoder": (zoo.encoder_decoder, dict(seed=2)),
}


@pytest.mark.parametrize("name", list(FP16_NETS))
def test_gpu_delegate_fp16_close(name):
    """fp16 storage through whole nets, bounded per output by what fp16 storage must cost on that
    graph: 2 x the rel-L2 of its fp16 emulation (fp16_emulation.py: every constant and stored
    tensor rounded to half, tensors over 65504 kept in float, run by LiteRT builtin) + 1e-5, as in
    test_fp16_storage.py."""
    from fp16_emulation import emulation_bound, fp16_storage_model, overflowing_tensors, round_feeds, run_litert
    require_gpu()
    fn, kw = FP16_NETS[name]
    mb = zoo.builder_of(fn, **kw)
    model = mb.build()
    assert model == GPU_MODELS[name]()
    feeds = inputs_for(model, seed=6)
    _, ref = litert_pair(model, feeds)
    emul = run_litert(fp16_storage_model(mb, keep=overflowing_tensors(model, feeds[0])), round_feeds(feeds[0]))
    got = run_seq(lambda: tflite_gpu.Interpreter(model_content=model, experimental_delegates=[delegate("F32_F16")]),
                  feeds)
    for i, (a, b, e) in enumerate(zip(got[0], ref[0], emul)):
        bound = emulation_bound(e, b)
        print(f"{name} output {i}: fp16 rel-L2 {rel_l2(a, b):.3g}, bound {bound:.3g}")
        assert rel_l2(a, b) <= bound, f"{name} output {i}: fp16 rel-L2 {rel_l2(a, b):.3g} > 2 x emulation + 1e-5 = {bound:.3g}"


def test_partitioned_model_gives_same_results_and_report(caplog):
    """An op in the middle forced to the CPU: two GPU partitions around it, same outputs."""
    require_gpu()
    model = GPU_MODELS["encoder_decoder"]()
    feeds = inputs_for(model, seed=7)
    _, ref = litert_pair(model, feeds)
    from tflite_gpu.interpreter import Interpreter
    plain = Interpreter(model_content=model)
    ops = plain._get_ops_details()
    mid = ops[len(ops) // 2]["op_name"]
    d = delegate(op_filter=[mid], max_delegated_partitions=8)
    import logging
    with caplog.at_level(logging.WARNING, logger="tflite_gpu"):
        it = tflite_gpu.Interpreter(model_content=model, experimental_delegates=[d])
    rep = it.delegation_report()
    assert rep["partitions"] >= 2 and rep["delegated_nodes"] < rep["total_nodes"]
    assert all(u[1] == mid for u in rep["unsupported"])
    assert any("cannot be handled by this delegate" in r.getMessage() and mid in r.getMessage() for r in caplog.records)
    got = run_seq(lambda: tflite_gpu.Interpreter(model_content=model, experimental_delegates=[
        delegate(op_filter=[mid], max_delegated_partitions=8)]), feeds)
    for a, b in zip(got[0], ref[0]):
        assert rel_l2(a, b) <= 1e-5


@pytest.mark.parametrize("table,name", [(t, n) for t, d in (("cpu", MODELS), ("gpu", GPU_MODELS))
                                        for n, f in d.items() if hasattr(f, "twin")])
def test_xnnpack_only_twins_compute_the_same(table, name):
    """The twin differs from the model only in Convolution2DTransposeBias -> TRANSPOSE_CONV, and
    litert computes the same outputs for both."""
    from ai_edge_litert.interpreter import Interpreter
    make = (MODELS if table == "cpu" else GPU_MODELS)[name]
    model, twin = make(), make.twin()
    ops = [o["op_name"] for o in tflite_gpu.interpreter.Interpreter(model_content=model)._get_ops_details()]
    twin_ops = [o["op_name"] for o in tflite_gpu.interpreter.Interpreter(model_content=twin)._get_ops_details()]
    assert "Convolution2DTransposeBias" in ops and "Convolution2DTransposeBias" not in twin_ops
    assert [o for o in ops if o != "Convolution2DTransposeBias"] == [o for o in twin_ops if o != "TRANSPOSE_CONV"]
    assert ops.count("Convolution2DTransposeBias") == twin_ops.count("TRANSPOSE_CONV")
    feeds = inputs_for(model, seed=8)
    got = run_seq(lambda: Interpreter(model_content=model, num_threads=1), feeds)[0]
    twin_xnn = run_seq(lambda: Interpreter(model_content=twin, num_threads=1), feeds)[0]
    builtin, xnn = litert_pair(model, feeds)
    for a, b, c, d in zip(got, twin_xnn, builtin[0], xnn[0]):
        assert rel_l2(a, b) <= 1e-6            # XNNPACK runs both as the same deconvolution
        assert rel_l2(c, d) <= 1e-5            # litert's builtin TRANSPOSE_CONV agrees closely
