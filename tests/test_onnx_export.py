"""benchmarks/tflite_to_onnx.py: the .tflite -> ONNX converter that lets the CPU speed benchmark
(issue #14) time ONNX Runtime on the same graphs. ORT's output on the converted model must match
LiteRT's on the .tflite (BUILTIN = BUILTIN_WITHOUT_DEFAULT_DELEGATES; the op harness' oracle for
each op case), or the ORT timings would be of a different computation.

Tolerance: relative L2 <= 1e-5, the op harness' fp32 bound. Both engines compute in fp32 and differ
only in summation order and in how they evaluate exp/sigmoid; measured over the zoo the largest
deviation is 1.7e-6 (pose landmark's LOGISTIC output), so 1e-5 leaves 6x margin while a wrong
layout, padding or resize mode gives errors of order 0.1-1.
"""
import importlib.util
import os
from collections import Counter

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="onnx is not installed (pip install onnx): the converter needs it")
ort = pytest.importorskip("onnxruntime", reason="onnxruntime is not installed (pip install onnxruntime)")

from harness import all_cases, rel_l2, run_litert  # noqa: E402
from tflite_gpu.testing import zoo  # noqa: E402

TOL = 1e-5
_BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")


def _load(name):
    spec = importlib.util.spec_from_file_location(f"_bench_{name}", os.path.join(_BENCH, name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


T = _load("tflite_to_onnx")


def run_ort(onnx_bytes, inputs):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    s = ort.InferenceSession(onnx_bytes, so, providers=["CPUExecutionProvider"])
    feed = {i.name: np.asarray(x) for i, x in zip(s.get_inputs(), inputs)}
    return s.run(None, feed)


# The float models of benchmarks/bench_speed.py (the issue #14 set) and the zoo's other float models.
# Selfie segmentation: LiteRT's builtin kernels cannot run MediaPipe's Convolution2DTransposeBias,
# so its oracle is the builtin TRANSPOSE_CONV twin of the same graph (same seed, same weights).
ZOO_MODELS = {
    "mobilenet_v1": (zoo.mobilenet_v1, None),
    "mobilenet_v2": (zoo.mobilenet_v2, None),
    "face_detector_like": (zoo.face_detector_like, None),
    "face_mesh_like": (zoo.face_mesh_like, None),
    "hand_landmark_like": (zoo.hand_landmark_like, None),
    "pose_landmark_like": (zoo.pose_landmark_like, None),
    "selfie_segmentation_like": (lambda: zoo.selfie_segmentation_like(input_size=256),
                                 lambda: zoo.selfie_segmentation_like(input_size=256, decoder="TRANSPOSE_CONV")),
    "palm_detection_like": (zoo.palm_detection_like, None),
    "mobilenet_v1_fp16": (zoo.ZOO["mobilenet_v1_fp16"], None),
    "mobilenet_v3_small": (zoo.ZOO["mobilenet_v3_small"], None),
    "deeplab_like": (zoo.ZOO["deeplab_like"], None),
    "ssd_like": (zoo.ZOO["ssd_like"], None),
    "posenet_like": (zoo.ZOO["posenet_like"], None),
    "encoder_decoder": (zoo.ZOO["encoder_decoder"], None),
}


@pytest.mark.parametrize("name", list(ZOO_MODELS))
def test_zoo_model_matches_litert(name):
    build, twin = ZOO_MODELS[name]
    model = build()
    onnx_model = T.convert(model, name)
    rng = np.random.default_rng(0)
    from ai_edge_litert.interpreter import Interpreter
    shapes = [list(d["shape"]) for d in Interpreter(model_content=model).get_input_details()]
    xs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    got = run_ort(onnx_model.SerializeToString(), xs)
    want = run_litert(twin() if twin else model, xs)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape, f"{name} output {i}: ORT {g.shape} vs LiteRT {w.shape}"
        assert float(np.std(w)) > 0, f"{name} output {i} is constant: the comparison would prove nothing"
        err = rel_l2(g, w)
        assert err <= TOL, f"{name} output {i}: ORT vs LiteRT BUILTIN rel L2 {err:.2e} > {TOL}"


def test_mobilenets_transpose_only_at_the_input():
    """NHWC -> NCHW once at the graph boundary: the only Transpose in the MobileNets (whose
    output is 2-D) is the input's."""
    for build in (zoo.mobilenet_v1, zoo.mobilenet_v2):
        ops = Counter(n.op_type for n in T.convert(build()).graph.node)
        assert ops["Transpose"] == 1, ops
        assert ops["Conv"] >= 27


def _case_skip_reason(model, xs):
    """Why an op case cannot be compared on a static-shape ONNX conversion, or None."""
    from ai_edge_litert.interpreter import Interpreter
    try:
        details = Interpreter(model_content=model).get_input_details()
    except (RuntimeError, ValueError) as e:
        return f"LiteRT cannot load it ({str(e)[:40]})"
    if any(list(d["shape"]) != list(np.shape(x)) for d, x in zip(details, xs)):
        return "inputs resized at run time (the conversion is static-shape)"
    if any(np.asarray(x).dtype.kind == "f" and not np.isfinite(x).all() for x in xs):
        return "non-finite inputs (LiteRT's clamping quirks are not mapped)"
    return None


def test_op_cases_match_the_oracle():
    """Every float op case of the op harness (tests/op_cases) that the converter maps: ORT's output
    equals the case's oracle (LiteRT BUILTIN, LiteRT XNNPACK for the MediaPipe custom ops, or the
    case's numpy reference). Cases the converter refuses (Unsupported, counted by reason below) or
    that a static-shape conversion cannot express are left out and printed."""
    compared, skipped, failures = 0, Counter(), []
    for case in all_cases():
        if case.quant:
            skipped["quantized kernel case"] += 1
            continue
        model = case.model()   # built once: some case builders draw weights from a shared generator
        try:
            onnx_bytes = T.convert_bytes(model)
        except T.Unsupported as e:
            skipped[f"converter: {str(e)[:60]}"] += 1
            continue
        xs = list(case.inputs(np.random.default_rng(0)))
        why = _case_skip_reason(model, xs)
        if why:
            skipped[why] += 1
            continue
        try:
            want = (list(case.ref_fn(*xs)) if case.oracle == "numpy" else
                    run_litert(model, xs, xnnpack=(case.oracle == "litert_xnnpack")))
        except RuntimeError as e:
            skipped[f"the oracle refuses it ({str(e)[:40]})"] += 1
            continue
        got = run_ort(onnx_bytes, xs)
        compared += 1
        errs = [rel_l2(g, w) if np.shape(g) == np.shape(w) else float("inf") for g, w in zip(got, want)]
        if len(got) != len(want) or max(errs, default=0.0) > TOL:
            failures.append(f"{case.id}: rel L2 {errs}")
    print(f"\n{compared} op cases compared; left out:")
    for why, n in skipped.most_common(15):
        print(f"  {n:4d} {why}")
    assert not failures, "\n".join(failures)
    assert compared >= 500, f"only {compared} op cases converted: the converter lost ops"


def test_unsupported_is_named():
    with pytest.raises(T.Unsupported, match="quantized"):
        T.convert(zoo.ZOO["mobilenet_v1_int8"]())
    with pytest.raises(T.Unsupported, match="UNIDIRECTIONAL_SEQUENCE_LSTM"):
        T.convert(zoo.ZOO["lstm"]())
    with pytest.raises(T.Unsupported, match="TFL3"):
        T.convert(b"\0" * 64)


def test_prelu_native_form_matches_too():
    """prelu='native' (ONNX PRelu, as tf2onnx writes it) computes the same as the default form."""
    model = zoo.face_mesh_like()
    xs = [np.random.default_rng(0).standard_normal((1, 192, 192, 3)).astype(np.float32)]
    onnx_model = T.convert(model, prelu="native")
    assert Counter(n.op_type for n in onnx_model.graph.node)["PRelu"] == 13
    want = run_litert(model, xs)
    for g, w in zip(run_ort(onnx_model.SerializeToString(), xs), want):
        assert rel_l2(g, w) <= TOL
