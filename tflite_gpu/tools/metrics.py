"""Evaluation metrics: top-k accuracy, box IoU, COCO-style AP.

``coco_evaluate`` follows pycocotools' COCOeval for bounding boxes with the
area range 'all' and ``maxDets=100``, step by step:

* per (image, category): detections sorted by score (stable), the first
  ``max_dets`` kept; ground truths sorted so that crowd ("ignored") boxes come
  last;
* greedy matching per IoU threshold t in 0.50:0.05:0.95: a detection takes the
  unmatched non-crowd ground truth of highest IoU >= t (crowd boxes may match
  many detections, and a detection matched to a crowd box is ignored);
* per category, all images' detections concatenated in image order and
  stably sorted by score; precision made monotone from the right and sampled
  at the 101 recall points 0:0.01:1 (``searchsorted(..., side='left')``),
  0 past the highest recall reached;
* AP = mean over the recall points, categories without any non-crowd ground
  truth excluded; mAP = mean over the 10 thresholds as well.

Boxes are ``[x, y, w, h]`` like COCO (any unit; IoU does not change under
scaling either axis, so normalised coordinates work as well as pixels).
"""

from __future__ import annotations

from typing import Any, Dict, Hashable, Iterable, List, Optional, Sequence

import numpy as np

__all__ = [
    "topk_accuracy",
    "box_iou",
    "xyxy_to_xywh",
    "yxyx_to_xywh",
    "coco_evaluate",
    "IOU_THRESHOLDS",
    "RECALL_THRESHOLDS",
]

IOU_THRESHOLDS = np.linspace(0.5, 0.95, int(np.round((0.95 - 0.5) / 0.05)) + 1, endpoint=True)
RECALL_THRESHOLDS = np.linspace(0.0, 1.00, int(np.round((1.00 - 0.0) / 0.01)) + 1, endpoint=True)


# --------------------------------------------------------------------------- top-k

def topk_ranking(scores: np.ndarray) -> np.ndarray:
    """Class indices by decreasing score; ties go to the lower index."""
    scores = np.asarray(scores)
    return np.argsort(-scores.astype(np.float64), axis=-1, kind="stable")


def topk_accuracy(scores: np.ndarray, labels: Sequence[int], ks: Iterable[int] = range(1, 11)
                  ) -> np.ndarray:
    """Fraction of rows whose label is among the k best-scored classes, per k.

    scores: [N, C]; labels: [N] class indices.  Ties are broken towards the
    lower class index.  For k >= C every row with a valid label counts.
    """
    scores = np.asarray(scores)
    if scores.ndim != 2:
        raise ValueError(f"scores must be [N, C], got shape {scores.shape}")
    labels = np.asarray(labels, dtype=np.int64).reshape(-1)
    if labels.shape[0] != scores.shape[0]:
        raise ValueError(f"{scores.shape[0]} score rows but {labels.shape[0]} labels")
    ks = list(ks)
    n = scores.shape[0]
    if n == 0:
        return np.zeros(len(ks))
    order = topk_ranking(scores)
    # rank of the true label (0 = best); labels out of range never count
    valid = (labels >= 0) & (labels < scores.shape[1])
    rank = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
    rows = np.nonzero(valid)[0]
    if rows.size:
        pos = np.argmax(order[rows] == labels[rows, None], axis=1)
        rank[rows] = pos
    return np.array([np.count_nonzero(rank < k) / n for k in ks], dtype=np.float64)


# --------------------------------------------------------------------------- boxes

def xyxy_to_xywh(b: np.ndarray) -> np.ndarray:
    b = np.asarray(b, dtype=np.float64)
    return np.stack([b[..., 0], b[..., 1], b[..., 2] - b[..., 0], b[..., 3] - b[..., 1]], -1)


def yxyx_to_xywh(b: np.ndarray) -> np.ndarray:
    """TFLite detection layout (ymin, xmin, ymax, xmax) -> (x, y, w, h)."""
    b = np.asarray(b, dtype=np.float64)
    return np.stack([b[..., 1], b[..., 0], b[..., 3] - b[..., 1], b[..., 2] - b[..., 0]], -1)


def box_iou(dets: np.ndarray, gts: np.ndarray, iscrowd: Optional[Sequence[bool]] = None
            ) -> np.ndarray:
    """IoU matrix [D, G] of ``[x, y, w, h]`` boxes, as pycocotools' bbox IoU.

    For a crowd ground truth the union is the detection's own area.
    """
    d = np.asarray(dets, dtype=np.float64).reshape(-1, 4)
    g = np.asarray(gts, dtype=np.float64).reshape(-1, 4)
    if d.shape[0] == 0 or g.shape[0] == 0:
        return np.zeros((d.shape[0], g.shape[0]))
    crowd = (np.zeros(g.shape[0], bool) if iscrowd is None
             else np.asarray(iscrowd, dtype=bool).reshape(-1))
    da = d[:, 2] * d[:, 3]
    ga = g[:, 2] * g[:, 3]
    w = (np.minimum(d[:, None, 0] + d[:, None, 2], g[None, :, 0] + g[None, :, 2])
         - np.maximum(d[:, None, 0], g[None, :, 0]))
    h = (np.minimum(d[:, None, 1] + d[:, None, 3], g[None, :, 1] + g[None, :, 3])
         - np.maximum(d[:, None, 1], g[None, :, 1]))
    inter = np.where((w > 0) & (h > 0), w * h, 0.0)
    union = np.where(crowd[None, :], da[:, None], da[:, None] + ga[None, :] - inter)
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = np.where(union > 0, inter / union, 0.0)
    return iou


# --------------------------------------------------------------------------- COCO AP

def _evaluate_image(dts: List[dict], gts: List[dict], iou_thrs: np.ndarray, max_dets: int):
    """pycocotools COCOeval.evaluateImg for one (image, category), area 'all'."""
    if not dts and not gts:
        return None
    g_ignore = np.array([1 if g.get("iscrowd", 0) or g.get("ignore", 0) else 0 for g in gts],
                        dtype=np.int64)
    gtind = np.argsort(g_ignore, kind="mergesort")
    gts = [gts[i] for i in gtind]
    g_ignore = g_ignore[gtind]
    dtind = np.argsort([-float(d["score"]) for d in dts], kind="mergesort")
    dts = [dts[i] for i in dtind[:max_dets]]
    iscrowd = [bool(g.get("iscrowd", 0)) for g in gts]
    ious = box_iou([d["bbox"] for d in dts], [g["bbox"] for g in gts], iscrowd)

    T, G, D = len(iou_thrs), len(gts), len(dts)
    gtm = np.zeros((T, G), dtype=bool)
    dtm = np.zeros((T, D), dtype=bool)
    dt_ig = np.zeros((T, D), dtype=bool)
    if G and D:
        for ti, t in enumerate(iou_thrs):
            for di in range(D):
                best = min(float(t), 1 - 1e-10)
                m = -1
                for gi in range(G):
                    if gtm[ti, gi] and not iscrowd[gi]:
                        continue
                    if m > -1 and g_ignore[m] == 0 and g_ignore[gi] == 1:
                        break
                    if ious[di, gi] < best:
                        continue
                    best = ious[di, gi]
                    m = gi
                if m == -1:
                    continue
                dt_ig[ti, di] = bool(g_ignore[m])
                dtm[ti, di] = True
                gtm[ti, m] = True
    return {
        "scores": np.array([float(d["score"]) for d in dts], dtype=np.float64),
        "matched": dtm,
        "ignored": dt_ig,
        "gt_ignore": g_ignore.astype(bool),
    }


def _precision_at_recalls(tp: np.ndarray, fp: np.ndarray, npig: int,
                          rec_thrs: np.ndarray) -> np.ndarray:
    nd = tp.shape[0]
    rc = tp / npig
    pr = tp / (fp + tp + np.spacing(1))
    pr = pr.copy()
    for i in range(nd - 1, 0, -1):
        if pr[i] > pr[i - 1]:
            pr[i - 1] = pr[i]
    inds = np.searchsorted(rc, rec_thrs, side="left")
    q = np.zeros(len(rec_thrs))
    ok = inds < nd
    q[ok] = pr[inds[ok]]
    return q


def coco_evaluate(ground_truth: Sequence[Dict[str, Any]], detections: Sequence[Dict[str, Any]],
                  *, image_ids: Optional[Sequence[Hashable]] = None,
                  category_ids: Optional[Sequence[Hashable]] = None,
                  iou_thresholds: Sequence[float] = IOU_THRESHOLDS,
                  recall_thresholds: Sequence[float] = RECALL_THRESHOLDS,
                  max_dets: int = 100) -> Dict[str, Any]:
    """COCO box AP.

    ground_truth: dicts with image_id, category_id, bbox [x,y,w,h], optional
    iscrowd.  detections: dicts with image_id, category_id, bbox, score.
    image_ids / category_ids default to those seen in the ground truth (plus
    detection images); detections of other categories are dropped, as
    pycocotools does with categories absent from the ground-truth file.

    Returns dict: mAP (IoU .50:.95), AP50, AP75, ap_per_iou [T],
    ap_per_category {cat: AP over all thresholds}, precision [T, R, K]
    (-1 where the category has no ground truth), iou_thresholds,
    category_ids.  AP values are -1.0 when nothing can be evaluated.
    """
    iou_thrs = np.asarray(iou_thresholds, dtype=np.float64)
    rec_thrs = np.asarray(recall_thresholds, dtype=np.float64)
    if category_ids is None:
        category_ids = sorted({g["category_id"] for g in ground_truth}, key=_sort_key)
    cat_list = list(category_ids)
    cat_set = set(cat_list)
    if image_ids is None:
        image_ids = sorted({g["image_id"] for g in ground_truth}
                           | {d["image_id"] for d in detections}, key=_sort_key)
    img_list = list(image_ids)

    gts_by: Dict[tuple, List[dict]] = {}
    dts_by: Dict[tuple, List[dict]] = {}
    for g in ground_truth:
        gts_by.setdefault((g["image_id"], g["category_id"]), []).append(g)
    for d in detections:
        if d["category_id"] in cat_set:
            dts_by.setdefault((d["image_id"], d["category_id"]), []).append(d)

    T, R, K = len(iou_thrs), len(rec_thrs), len(cat_list)
    precision = -np.ones((T, R, K))
    recall = -np.ones((T, K))
    for k, cat in enumerate(cat_list):
        evals = []
        for img in img_list:
            e = _evaluate_image(dts_by.get((img, cat), []), gts_by.get((img, cat), []),
                                iou_thrs, max_dets)
            if e is not None:
                evals.append(e)
        if not evals:
            continue
        scores = np.concatenate([e["scores"][:max_dets] for e in evals])
        order = np.argsort(-scores, kind="mergesort")
        dtm = np.concatenate([e["matched"][:, :max_dets] for e in evals], axis=1)[:, order]
        dt_ig = np.concatenate([e["ignored"][:, :max_dets] for e in evals], axis=1)[:, order]
        g_ig = np.concatenate([e["gt_ignore"] for e in evals])
        npig = int(np.count_nonzero(~g_ig))
        if npig == 0:
            continue
        tps = dtm & ~dt_ig
        fps = ~dtm & ~dt_ig
        tp_sum = np.cumsum(tps, axis=1).astype(np.float64)
        fp_sum = np.cumsum(fps, axis=1).astype(np.float64)
        for t in range(T):
            precision[t, :, k] = _precision_at_recalls(tp_sum[t], fp_sum[t], npig, rec_thrs)
            recall[t, k] = tp_sum[t][-1] / npig if tp_sum.shape[1] else 0.0

    def _mean(p: np.ndarray) -> float:
        v = p[p > -1]
        return float(np.mean(v)) if v.size else -1.0

    ap_per_iou = np.array([_mean(precision[t]) for t in range(T)])
    result: Dict[str, Any] = {
        "mAP": _mean(precision),
        "ap_per_iou": ap_per_iou,
        "iou_thresholds": iou_thrs,
        "category_ids": cat_list,
        "precision": precision,
        "recall": recall,
        "ap_per_category": {cat: _mean(precision[:, :, k]) for k, cat in enumerate(cat_list)},
    }
    for name, thr in (("AP50", 0.5), ("AP75", 0.75)):
        hit = np.nonzero(np.isclose(iou_thrs, thr, rtol=0, atol=1e-12))[0]
        result[name] = _mean(precision[hit]) if hit.size else -1.0
    return result


def _sort_key(v: Any):
    # ints before strings, each in natural order (image ids may be either)
    return (0, v, "") if isinstance(v, (int, np.integer)) else (1, 0, str(v))
