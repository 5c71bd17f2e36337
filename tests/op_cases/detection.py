"""Detection family: TFLite_Detection_PostProcess (SSD box decoding + NMS, a custom op that
LiteRT's builtin resolver registers; oracle: LiteRT BUILTIN_WITHOUT_DEFAULT_DELEGATES).

Options travel as a FlexBuffer map (written with the `flatbuffers` package's flexbuffers).
Scores are drawn from a continuous distribution, so no two candidates tie (tie order is the one
thing TFLite's unstable partial sorts leave open).
"""
import numpy as np
from flatbuffers import flexbuffers

from harness import OpCase, run_litert
from tflite_gpu.testing.builder import ModelBuilder

F32 = np.float32


def anchors_grid(n_side=4, scales=(0.2, 0.35)):
    a = []
    for i in range(n_side):
        for j in range(n_side):
            for s in scales:
                a.append([(i + 0.5) / n_side, (j + 0.5) / n_side, s, s * 1.3])
    return np.array(a, F32)


def dpp_options(**kw):
    opts = dict(max_detections=10, max_classes_per_detection=1, detections_per_class=100,
                use_regular_nms=False, nms_score_threshold=0.3, nms_iou_threshold=0.5,
                num_classes=3, y_scale=10.0, x_scale=10.0, h_scale=5.0, w_scale=5.0)
    opts.update(kw)
    return flexbuffers.Dumps(opts)


def dpp_model(num_boxes=32, code=4, label_offset=1, anchors=None, **opts):
    o = dict(opts)
    ncls = o.get("num_classes", 3)
    mdet = o.get("max_detections", 10)
    mcls = o.get("max_classes_per_detection", 1)
    anchors = anchors_grid() if anchors is None else anchors
    assert anchors.shape[0] == num_boxes
    mb = ModelBuilder()
    enc = mb.add_input([1, num_boxes, code], name="box_encodings")
    cls = mb.add_input([1, num_boxes, ncls + label_offset], name="class_predictions")
    anc = mb.add_const(anchors, name="anchors")
    rows = mdet * mcls
    outs = [mb.add_tensor([1, rows, 4], name="detection_boxes"),
            mb.add_tensor([1, rows], name="detection_classes"),
            mb.add_tensor([1, rows], name="detection_scores"),
            mb.add_tensor([1], name="num_detections")]
    mb.add_op(("CUSTOM", "TFLite_Detection_PostProcess"), [enc, cls, anc], outs,
              custom_options=dpp_options(**opts))
    for t in outs:
        mb.mark_output(t)
    return mb.build()


def dpp_inputs(num_boxes=32, code=4, classes=4, clustered=True):
    def make(rng):
        enc = rng.normal(0.0, 1.0, (1, num_boxes, code)).astype(F32)
        if clustered:  # neighbouring anchors predict overlapping boxes: NMS has work to do
            enc[0, 1::2, :2] = enc[0, 0::2, :2] * 0.9
        logits = rng.normal(0.0, 2.0, (1, num_boxes, classes))
        return [enc, (1.0 / (1.0 + np.exp(-logits))).astype(F32)]
    return make


_P = [
    ("fast_1class", {}, 1),
    ("fast_3classes_per_box", dict(max_classes_per_detection=3), 1),
    ("fast_2classes_no_background", dict(max_classes_per_detection=2), 0),
    ("fast_iou_0_3_score_0_5", dict(nms_iou_threshold=0.3, nms_score_threshold=0.5), 1),
    ("fast_max_det_3", dict(max_detections=3), 1),
    ("fast_scales_1", dict(y_scale=1.0, x_scale=1.0, h_scale=1.0, w_scale=1.0), 1),
    ("fast_all_below_threshold", dict(nms_score_threshold=0.999), 1),
    ("regular", dict(use_regular_nms=True), 1),
    ("regular_det_per_class_2", dict(use_regular_nms=True, detections_per_class=2), 1),
    ("regular_max_det_20_iou_0_7", dict(use_regular_nms=True, max_detections=20, nms_iou_threshold=0.7), 0),
    ("regular_score_0_6", dict(use_regular_nms=True, nms_score_threshold=0.6, num_classes=5), 1),
]

def litert_masked(model_fn, per_box):
    """LiteRT's outputs with the rows past num_detections set to zero: LiteRT's fast path leaves
    those rows unwritten (whatever its arena held); ours writes zeros there, as its regular path
    does. The rows that carry detections are LiteRT's own values."""
    def ref(*inputs):
        boxes, classes, scores, num = run_litert(model_fn(), list(inputs))
        valid = int(num[0]) * per_box
        for a in (boxes, classes, scores):
            a[:, valid:] = 0
        return [boxes, classes, scores, num]
    return ref


CASES = []
for _name, _opts, _lo in _P + [("fast_code_size_6", dict(code=6), 1)]:
    _ncls = _opts.get("num_classes", 3)
    _per_box = min(_opts.get("max_classes_per_detection", 1), _ncls)
    _fn = (lambda o=_opts, lo=_lo: dpp_model(label_offset=lo, **o))
    CASES.append(OpCase("TFLite_Detection_PostProcess", _name, _fn,
                        dpp_inputs(classes=_ncls + _lo, code=_opts.get("code", 4)),
                        oracle="numpy", ref_fn=litert_masked(_fn, _per_box), gpu=False,
                        note="oracle: LiteRT builtin, rows past num_detections zeroed"))


# ---------------------------------------------------------------------------------------------
# NON_MAX_SUPPRESSION_V4 / V5 (builtin; oracle: LiteRT BUILTIN_WITHOUT_DEFAULT_DELEGATES).
# Boxes come in overlapping clusters (corners sometimes swapped: TFLite orders them per box).
# ---------------------------------------------------------------------------------------------
I32 = np.int32


def nms_boxes(n, rng, swap=True):
    centers = rng.uniform(0.0, 1.0, (max(1, n // 3), 2))
    c = centers[rng.integers(0, len(centers), n)] + rng.normal(0.0, 0.03, (n, 2))
    hw = rng.uniform(0.05, 0.3, (n, 2))
    b = np.concatenate([c - hw / 2, c + hw / 2], axis=1)
    if swap:
        flip = rng.random(n) < 0.3
        b[flip] = b[flip][:, [2, 3, 0, 1]]
    return b.astype(F32)


def nms_model(soft, n, max_out, iou, score_thr, sigma=0.0, dynamic_max=False, dynamic_thr=False):
    mb = ModelBuilder()
    boxes = mb.add_input([n, 4], name="boxes")
    scores = mb.add_input([n], name="scores")
    mos = mb.add_input([], I32, name="max_output_size") if dynamic_max else \
        mb.add_const(np.array(max_out, I32), name="max_output_size")
    if dynamic_thr:
        thr = [mb.add_input([], F32, name="iou_threshold"), mb.add_input([], F32, name="score_threshold")]
    else:
        thr = [mb.add_const(np.array(iou, F32), name="iou_threshold"),
               mb.add_const(np.array(score_thr, F32), name="score_threshold")]
    ins = [boxes, scores, mos] + thr
    if soft:
        ins.append(mb.add_const(np.array(sigma, F32), name="soft_nms_sigma"))
    outs = [mb.add_tensor([max_out], I32, name="selected_indices")]
    if soft:
        outs.append(mb.add_tensor([max_out], F32, name="selected_scores"))
    outs.append(mb.add_tensor([], I32, name="valid_outputs"))
    mb.add_op("NON_MAX_SUPPRESSION_V5" if soft else "NON_MAX_SUPPRESSION_V4", ins, outs)
    for t in outs:
        mb.mark_output(t)
    return mb.build()


def nms_inputs(n, ties=False, extra=()):
    def make(rng):
        s = rng.uniform(0.0, 1.0, n)
        if ties:
            s = np.round(s * 4) / 4
        return [nms_boxes(n, rng), s.astype(F32)] + [np.asarray(e) for e in extra]
    return make


_NMS = [  # name, soft, n, max_out, iou, score_thr, sigma, extra
    ("v4_basic", False, 20, 10, 0.5, 0.0, 0.0, {}),
    ("v4_iou_0_3_thr_0_4", False, 40, 16, 0.3, 0.4, 0.0, {}),
    ("v4_max_out_3", False, 30, 3, 0.6, 0.1, 0.0, {}),
    ("v4_max_out_0", False, 10, 0, 0.5, 0.0, 0.0, {}),
    ("v4_all_below_threshold", False, 12, 5, 0.5, 2.0, 0.0, {}),
    ("v4_score_ties", False, 24, 12, 0.5, 0.0, 0.0, dict(ties=True)),
    ("v4_no_boxes", False, 0, 4, 0.5, 0.0, 0.0, {}),
    ("v5_hard", True, 20, 10, 0.5, 0.0, 0.0, {}),
    ("v5_soft_sigma_0_5", True, 30, 12, 0.6, 0.1, 0.5, {}),
    ("v5_soft_sigma_0_2_iou_1", True, 30, 20, 1.0, 0.05, 0.2, {}),
    ("v5_soft_max_out_4", True, 40, 4, 0.4, 0.2, 0.8, {}),
]

for _name, _soft, _n, _m, _iou, _thr, _sig, _x in _NMS:
    CASES.append(OpCase("NON_MAX_SUPPRESSION_V5" if _soft else "NON_MAX_SUPPRESSION_V4", _name,
                        (lambda s=_soft, n=_n, m=_m, i=_iou, t=_thr, g=_sig: nms_model(s, n, m, i, t, g)),
                        nms_inputs(_n, **_x), gpu=False))
# max_output_size and the thresholds as graph inputs (dynamic outputs sized at invoke).
CASES.append(OpCase("NON_MAX_SUPPRESSION_V4", "dynamic_max_output_and_thresholds",
                    lambda: nms_model(False, 25, 1, 0.0, 0.0, dynamic_max=True, dynamic_thr=True),
                    nms_inputs(25, extra=(np.array(7, I32), np.array(0.45, F32), np.array(0.2, F32))), gpu=False))
CASES.append(OpCase("NON_MAX_SUPPRESSION_V5", "dynamic_max_output",
                    lambda: nms_model(True, 25, 1, 0.5, 0.1, 0.4, dynamic_max=True),
                    nms_inputs(25, extra=(np.array(9, I32),)), gpu=False))
