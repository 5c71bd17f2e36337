"""tflite_gpu.tools.metrics against hand-computed values and brute force.

AP values below are worked out by hand from COCO's definition: precision made
monotone from the right, sampled at the 101 recall points 0, 0.01, ..., 1
(the first detection whose recall reaches r), 0 past the highest recall.
"""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tflite_gpu.tools.metrics import (IOU_THRESHOLDS, box_iou, coco_evaluate, topk_accuracy,
                                      yxyx_to_xywh)


# --------------------------------------------------------------------------- top-k

def _brute_topk(scores, labels, k):
    hits = 0
    for row, lbl in zip(scores, labels):
        ranked = sorted(range(len(row)), key=lambda j: (-float(row[j]), j))
        hits += int(lbl in ranked[:k])
    return hits / len(labels)


def test_topk_small_by_hand():
    scores = np.array([[0.1, 0.7, 0.2],    # label 1: rank 0
                       [0.5, 0.3, 0.2],    # label 2: rank 2
                       [0.2, 0.3, 0.5]])   # label 1: rank 1
    acc = topk_accuracy(scores, [1, 2, 1], ks=[1, 2, 3, 4])
    assert acc.tolist() == [1 / 3, 2 / 3, 1.0, 1.0]


def test_topk_ties_go_to_lower_index():
    scores = np.array([[1.0, 1.0, 1.0]])
    assert topk_accuracy(scores, [0], ks=[1])[0] == 1.0
    assert topk_accuracy(scores, [2], ks=[1, 2, 3]).tolist() == [0.0, 0.0, 1.0]


def test_topk_invalid_label_never_counts():
    assert topk_accuracy(np.ones((2, 3)), [5, -1], ks=[1, 3, 10]).tolist() == [0.0, 0.0, 0.0]


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 12), st.integers(1, 7), st.data())
def test_topk_matches_brute_force(n, c, data):
    # integer scores from a small range, so that ties are common
    flat = data.draw(st.lists(st.integers(-3, 3), min_size=n * c, max_size=n * c))
    scores = np.array(flat, dtype=np.float32).reshape(n, c)
    labels = data.draw(st.lists(st.integers(0, c - 1), min_size=n, max_size=n))
    ks = list(range(1, c + 2))
    got = topk_accuracy(scores, labels, ks)
    want = [_brute_topk(scores, labels, k) for k in ks]
    assert got.tolist() == want
    assert all(a <= b for a, b in zip(got, got[1:]))   # monotone in k
    assert got[c - 1] == 1.0


# --------------------------------------------------------------------------- IoU

@pytest.mark.parametrize("a,b,want", [
    ([0, 0, 2, 2], [1, 1, 2, 2], Fraction(1, 7)),     # 1 / (4 + 4 - 1)
    ([0, 0, 2, 2], [0, 0, 2, 2], Fraction(1)),
    ([0, 0, 2, 2], [2, 0, 2, 2], Fraction(0)),        # touching edge
    ([0, 0, 2, 2], [5, 5, 1, 1], Fraction(0)),
    ([0, 0, 4, 2], [1, 0, 2, 2], Fraction(1, 2)),     # contained: 4 / 8
    ([0, 0, 3, 1], [1, 0, 3, 1], Fraction(1, 2)),     # 2 / (3 + 3 - 2)
    ([0, 0, 10, 10], [5, 5, 10, 10], Fraction(25, 175)),
])
def test_iou_exact_fractions(a, b, want):
    got = box_iou([a], [b])[0, 0]
    assert got == float(want)
    assert box_iou([b], [a])[0, 0] == float(want)


def test_iou_crowd_uses_detection_area():
    # crowd ground truth: intersection / area(det) = 1 / 4
    assert box_iou([[0, 0, 2, 2]], [[1, 1, 2, 2]], iscrowd=[True])[0, 0] == 0.25


def test_iou_matrix_shape_and_empty():
    m = box_iou([[0, 0, 1, 1], [0, 0, 2, 2]], [[0, 0, 1, 1], [0, 0, 2, 2], [9, 9, 1, 1]])
    assert m.shape == (2, 3)
    np.testing.assert_array_equal(m, [[1, 0.25, 0], [0.25, 1, 0]])
    assert box_iou(np.zeros((0, 4)), [[0, 0, 1, 1]]).shape == (0, 1)


def test_yxyx_to_xywh():
    np.testing.assert_array_equal(yxyx_to_xywh([[0.1, 0.2, 0.5, 0.9]]),
                                  [[0.2, 0.1, 0.9 - 0.2, 0.5 - 0.1]])


# --------------------------------------------------------------------------- AP

def gt(img, cat, box, crowd=0):
    return {"image_id": img, "category_id": cat, "bbox": list(box), "iscrowd": crowd}


def dt(img, cat, box, score):
    return {"image_id": img, "category_id": cat, "bbox": list(box), "score": score}


def ap(v):
    # pycocotools divides by (tp + fp + eps), so a perfect AP can read 1 - 2e-16
    return pytest.approx(v, abs=1e-12)


A = [10, 10, 20, 20]
B = [50, 50, 20, 20]
C = [100, 10, 30, 30]
FAR = [300, 300, 5, 5]


def test_perfect_detections_give_one():
    g = [gt(1, 1, A), gt(1, 2, B), gt(2, 1, C)]
    d = [dt(1, 1, A, 0.9), dt(1, 2, B, 0.8), dt(2, 1, C, 0.7)]
    r = coco_evaluate(g, d)
    assert r["mAP"] == ap(1.0) and r["AP50"] == ap(1.0) and r["AP75"] == ap(1.0)
    assert r["ap_per_iou"].tolist() == ap([1.0] * 10)


def test_false_positive_ranked_first_gives_half():
    # FP (0.9) then TP (0.8), one GT: precision [0, 1/2] -> monotone [1/2, 1/2],
    # recall [0, 1]: every recall point reads 1/2.
    r = coco_evaluate([gt(1, 1, A)], [dt(1, 1, FAR, 0.9), dt(1, 1, A, 0.8)])
    assert r["AP50"] == pytest.approx(0.5, abs=1e-12)
    assert r["mAP"] == pytest.approx(0.5, abs=1e-12)


def test_false_positive_after_full_recall_changes_nothing():
    r = coco_evaluate([gt(1, 1, A)], [dt(1, 1, A, 0.9), dt(1, 1, FAR, 0.8)])
    assert r["mAP"] == ap(1.0)


def test_tp_fp_tp_two_ground_truths():
    # recall [1/2, 1/2, 1], precision [1, 1/2, 2/3] -> monotone [1, 2/3, 2/3]
    # r in {0, .01, ..., .50} (51 points) -> 1 ; r in {.51 ... 1} (50 points) -> 2/3
    g = [gt(1, 1, A), gt(1, 1, B)]
    d = [dt(1, 1, A, 0.9), dt(1, 1, FAR, 0.8), dt(1, 1, B, 0.7)]
    want = (51 * 1 + 50 * Fraction(2, 3)) / 101
    r = coco_evaluate(g, d)
    assert r["AP50"] == pytest.approx(float(want), abs=1e-12)
    assert r["mAP"] == pytest.approx(float(want), abs=1e-12)


def test_recall_never_reached_counts_zero():
    # 2 GT, one found: recall points above 0.5 read 0 -> 51/101
    r = coco_evaluate([gt(1, 1, A), gt(1, 1, B)], [dt(1, 1, A, 0.9)])
    assert r["mAP"] == pytest.approx(51 / 101, abs=1e-12)


def test_no_detections_gives_zero_and_no_ground_truth_excludes_category():
    r = coco_evaluate([gt(1, 1, A)], [])
    assert r["mAP"] == ap(0.0)
    # category 2 has no ground truth: excluded from the mean, not counted as 0
    r = coco_evaluate([gt(1, 1, A)], [dt(1, 1, A, 0.9), dt(1, 2, B, 0.9)],
                      category_ids=[1, 2])
    assert r["mAP"] == ap(1.0)
    assert r["ap_per_category"][2] == ap(-1.0)


def test_iou_dependent_matching():
    # a det of IoU (20-3)/(20+3) with its GT (shifted 3 px of 20 in x): 17/23 = 0.739
    # -> TP for thresholds 0.50 .. 0.70 (5 of 10), missed above.
    shifted = [13, 10, 20, 20]
    iou = box_iou([shifted], [A])[0, 0]
    assert iou == pytest.approx(17 / 23)
    r = coco_evaluate([gt(1, 1, A)], [dt(1, 1, shifted, 0.9)])
    assert r["ap_per_iou"].tolist() == ap([1.0] * 5 + [0.0] * 5)
    assert r["AP50"] == ap(1.0) and r["AP75"] == ap(0.0)
    assert r["mAP"] == pytest.approx(0.5)


def test_mean_over_categories():
    g = [gt(1, 1, A), gt(1, 2, B)]
    d = [dt(1, 1, A, 0.9), dt(1, 2, FAR, 0.95), dt(1, 2, B, 0.5)]
    r = coco_evaluate(g, d)
    assert r["ap_per_category"][1] == ap(1.0)
    assert r["ap_per_category"][2] == pytest.approx(0.5)
    assert r["mAP"] == pytest.approx(0.75)


def test_crowd_ground_truth_ignores_its_detections():
    # the detection on the crowd box is neither TP nor FP
    g = [gt(1, 1, A), gt(1, 1, C, crowd=1)]
    d = [dt(1, 1, C, 0.99), dt(1, 1, A, 0.5)]
    assert coco_evaluate(g, d)["mAP"] == ap(1.0)
    g[1]["iscrowd"] = 0     # now it is a real GT found second: still perfect
    assert coco_evaluate(g, d)["mAP"] == ap(1.0)
    g = [gt(1, 1, A)]       # and without it, the 0.99 det is an FP ranked first
    assert coco_evaluate(g, d)["mAP"] == pytest.approx(0.5)


def test_one_gt_matched_once():
    # two identical dets on one GT: TP then FP (after full recall) -> 1.0;
    # two GTs but both dets on the first -> recall 1/2 -> 51/101
    assert coco_evaluate([gt(1, 1, A)], [dt(1, 1, A, 0.9), dt(1, 1, A, 0.8)])["mAP"] == ap(1.0)
    r = coco_evaluate([gt(1, 1, A), gt(1, 1, B)], [dt(1, 1, A, 0.9), dt(1, 1, A, 0.8)])
    assert r["mAP"] == pytest.approx(51 / 101)


def test_max_dets_per_image():
    # the only TP is the 101st detection of the image by score: cut off
    d = [dt(1, 1, FAR, 0.9 - i * 1e-4) for i in range(100)] + [dt(1, 1, A, 0.1)]
    assert coco_evaluate([gt(1, 1, A)], d)["mAP"] == ap(0.0)
    assert coco_evaluate([gt(1, 1, A)], d, max_dets=101)["mAP"] > 0.0


def test_images_concatenated_in_order_for_ties():
    # same score on two images: image 1's det comes first (pycocotools' stable sort)
    g = [gt(1, 1, A), gt(2, 1, A)]
    d = [dt(1, 1, FAR, 0.5), dt(2, 1, A, 0.5)]
    # order FP, TP over 2 GT: precision [0, 1/2], recall [0, 1/2] -> 51 points of 1/2
    assert coco_evaluate(g, d)["mAP"] == pytest.approx(51 * 0.5 / 101)


# --------------------------------------------------------------------------- properties

boxes = st.tuples(st.integers(0, 20), st.integers(0, 20), st.integers(1, 12), st.integers(1, 12))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 3), st.integers(1, 2), boxes), min_size=1, max_size=8),
       st.lists(st.tuples(st.integers(1, 3), st.integers(1, 2), boxes), max_size=10),
       st.randoms(use_true_random=False))
def test_ap_properties(gts, dts, rnd):
    g = [gt(i, c, b) for i, c, b in gts]
    scores = rnd.sample(range(1, 1000), len(dts))   # distinct scores
    d = [dt(i, c, b, s / 1000) for (i, c, b), s in zip(dts, scores)]
    r = coco_evaluate(g, d)
    assert 0.0 <= r["mAP"] <= 1.0 and 0.0 <= r["AP50"] <= 1.0
    # AP decreases (weakly) with the IoU threshold
    assert all(a >= b - 1e-12 for a, b in zip(r["ap_per_iou"], r["ap_per_iou"][1:]))
    # shuffling the detection list changes nothing when scores are distinct
    d2 = list(d)
    rnd.shuffle(d2)
    assert coco_evaluate(g, d2)["mAP"] == pytest.approx(r["mAP"], abs=1e-12)
    # low-scored far-away false positives never change AP
    extra = [dt(i, c, FAR, 1e-6) for i, c, _ in gts]
    assert coco_evaluate(g, d + extra)["mAP"] == pytest.approx(r["mAP"], abs=1e-12)
    # detections equal to the ground truth, scored above everything, give 1.0
    perfect = [dt(x["image_id"], x["category_id"], x["bbox"], 2.0) for x in g]
    assert coco_evaluate(g, perfect)["mAP"] == ap(1.0)


def test_iou_thresholds_are_cocos():
    assert IOU_THRESHOLDS[0] == 0.5 and len(IOU_THRESHOLDS) == 10
    assert IOU_THRESHOLDS[-1] == pytest.approx(0.95)


def test_against_pycocotools_when_installed():
    pytest.importorskip("pycocotools")
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval
    import contextlib
    import io

    rng = np.random.default_rng(1)
    images = [{"id": i, "width": 100, "height": 100} for i in range(1, 6)]
    cats = [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}, {"id": 5, "name": "c"}]
    anns, dets = [], []
    for im in images:
        for _ in range(rng.integers(1, 5)):
            x, y = rng.uniform(0, 60, 2)
            w, h = rng.uniform(10, 40, 2)
            c = int(rng.choice([1, 2, 5]))
            anns.append({"id": len(anns) + 1, "image_id": im["id"], "category_id": c,
                         "bbox": [x, y, w, h], "area": w * h,
                         "iscrowd": int(rng.random() < 0.1)})
            for _ in range(rng.integers(0, 3)):   # jittered detections
                j = rng.normal(0, 4, 4)
                dets.append({"image_id": im["id"], "category_id": c,
                             "bbox": [x + j[0], y + j[1], max(1, w + j[2]), max(1, h + j[3])],
                             "score": float(rng.random())})
        for _ in range(rng.integers(0, 3)):       # random false positives
            x, y = rng.uniform(0, 80, 2)
            dets.append({"image_id": im["id"], "category_id": int(rng.choice([1, 2, 5])),
                         "bbox": [x, y, 15, 15], "score": float(rng.random())})
    coco = COCO()
    coco.dataset = {"images": images, "annotations": anns, "categories": cats}
    with contextlib.redirect_stdout(io.StringIO()):
        coco.createIndex()
        res = coco.loadRes([dict(d) for d in dets])
        ev = COCOeval(coco, res, "bbox")
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    ours = coco_evaluate(anns, dets, image_ids=[im["id"] for im in images],
                         category_ids=[c["id"] for c in cats])
    # stats[0] = AP@[.5:.95] (area all, maxDets 100), stats[1] = AP50
    assert ours["mAP"] == pytest.approx(ev.stats[0], abs=1e-9)
    assert ours["AP50"] == pytest.approx(ev.stats[1], abs=1e-9)
    assert ours["AP75"] == pytest.approx(ev.stats[2], abs=1e-9)
