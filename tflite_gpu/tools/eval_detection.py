"""``tflite-gpu eval-detection``: TFLite's COCO object-detection evaluation.

Ground truth, either:

* ``--ground_truth_json``: COCO format (images[{id, file_name, width,
  height}], annotations[{image_id, category_id, bbox: [x, y, w, h], iscrowd?}],
  categories[{id, name}]);
* ``--ground_truth_proto``: the text proto TFLite's preprocess_coco_minival
  writes (``detection_results { objects { bounding_box { normalized_top ...}
  class_id } image_name image_id }``), where class_id is the model's output
  class index.

Model outputs, either:

(a) TFLite_Detection_PostProcess's four outputs: boxes [1,N,4] (ymin, xmin,
    ymax, xmax, normalised), classes [1,N], scores [1,N], count [1];
(b) raw box encodings [1,A,4] and class scores [1,A,C], with
    ``--anchors_file`` (.npy [A,4]: ycenter, xcenter, h, w), decoded with the
    SSD scales (``--box_scales``, default 10,10,5,5) and filtered by per-class
    greedy NMS in numpy.

Model class index -> COCO category: by name through ``--model_output_labels``
when given; otherwise index i is the i-th category of the JSON (sorted by id).
Images are resized (no crop) to the input and normalised as in
eval-classification.  AP is COCO's box AP (101-point interpolation, IoU
0.50:0.05:0.95, area 'all', 100 detections per image), see metrics.py.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from . import _backend
from ._common import Stat, g6, latency_line, quant_params, read_lines, write_results
from ._images import load_image, preprocess_image
from .flags import (Flag, FlagError, Flags, delegate_flags, gpu_options_from_flags,
                    run_with_flags, use_gpu_from_flags)
from .metrics import box_iou, coco_evaluate, yxyx_to_xywh

__all__ = ["main", "decode_ssd_boxes", "nms", "multiclass_nms", "parse_text_proto", "FLAGS"]

PROG = "tflite-gpu eval-detection"
SUMMARY = """COCO-style mAP of an object detector on a folder of images with ground truth
(TFLite's coco_object_detection run_eval)."""


def _flags() -> List[Flag]:
    return [
        Flag("model_file", str, "", "model file (.tflite) or zoo:NAME", aliases=("graph",)),
        Flag("ground_truth_images_path", str, "", "folder of images"),
        Flag("ground_truth_json", str, "", "COCO-format ground truth JSON"),
        Flag("ground_truth_proto", str, "", "TFLite ObjectDetectionGroundTruth text proto"),
        Flag("model_output_labels", str, "", "text file: label name of each output class"),
        Flag("num_images", int, 0, "number of images to evaluate (0 = all)"),
        Flag("num_interpreter_threads", int, 1, "CPU threads", aliases=("num_threads",)),
        Flag("anchors_file", str, "", ".npy [A,4] anchors (ycenter, xcenter, h, w) for raw "
             "box-encoding outputs"),
        Flag("box_scales", str, "10,10,5,5", "SSD decoding scales y,x,h,w"),
        Flag("score_activation", str, "none", "for raw outputs: activation of class scores",
             choices=("none", "sigmoid", "softmax")),
        Flag("background_class", str, "auto", "raw outputs: first score column is background "
             "(true/false/auto: when it has one column more than the labels)",
             choices=("auto", "true", "false")),
        Flag("score_threshold", float, 0.0, "drop detections scoring at or below this"),
        Flag("nms_iou_threshold", float, 0.6, "raw outputs: NMS IoU threshold"),
        Flag("max_detections", int, 100, "detections kept per image"),
        Flag("input_mean", float, 127.5, "float inputs: (pixel - mean) / std"),
        Flag("input_std", float, 127.5, "float inputs: (pixel - mean) / std"),
        Flag("per_category", bool, False, "print the AP of each category"),
        Flag("output_file_path", str, "", "write the metrics here (.json: as JSON)"),
    ] + delegate_flags()


FLAGS = _flags()


# --------------------------------------------------------------------------- text proto

_TOKEN = re.compile(r'\s*(?:(#[^\n]*)|([{}:;,<>\[\]])|("(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\')'
                    r'|([^\s{}:;,<>\[\]"\']+))')


def parse_text_proto(text: str) -> Dict[str, List[Any]]:
    """Minimal protobuf text-format parser: every field becomes a list."""
    tokens = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            if text[pos:].strip() == "":
                break
            raise ValueError(f"text proto: cannot parse near {text[pos:pos + 30]!r}")
        pos = m.end()
        if m.group(1):
            continue
        tok = m.group(2) or m.group(3) or m.group(4)
        if tok:
            tokens.append(tok)

    def value(tok: str) -> Any:
        if tok[0] in "\"'":
            return bytes(tok[1:-1], "utf-8").decode("unicode_escape")
        low = tok.lower()
        if low in ("true", "false"):
            return low == "true"
        try:
            return int(tok)
        except ValueError:
            pass
        try:
            return float(tok.rstrip("fF"))
        except ValueError:
            return tok

    def message(i: int, closer: Optional[str]) -> Tuple[Dict[str, List[Any]], int]:
        msg: Dict[str, List[Any]] = {}
        while i < len(tokens):
            tok = tokens[i]
            if closer is not None and tok == closer:
                return msg, i + 1
            if tok in (",", ";"):
                i += 1
                continue
            name = tok
            i += 1
            if i < len(tokens) and tokens[i] == ":":
                i += 1
            if i < len(tokens) and tokens[i] in ("{", "<"):
                sub, i = message(i + 1, "}" if tokens[i] == "{" else ">")
                msg.setdefault(name, []).append(sub)
            elif i < len(tokens) and tokens[i] == "[":
                i += 1
                while tokens[i] != "]":
                    if tokens[i] != ",":
                        msg.setdefault(name, []).append(value(tokens[i]))
                    i += 1
                i += 1
            else:
                if i >= len(tokens):
                    raise ValueError(f"text proto: field {name!r} has no value")
                msg.setdefault(name, []).append(value(tokens[i]))
                i += 1
        if closer is not None:
            raise ValueError("text proto: unbalanced braces")
        return msg, i

    msg, _ = message(0, None)
    return msg


def _first(m: Dict[str, List[Any]], key: str, default: Any = None) -> Any:
    v = m.get(key)
    return v[0] if v else default


# --------------------------------------------------------------------------- ground truth

class GroundTruth:
    """Images (file name -> id), normalised boxes, category ids and names."""

    def __init__(self) -> None:
        self.images: Dict[str, Any] = {}        # file name -> image id
        self.sizes: Dict[Any, Tuple[Optional[float], Optional[float]]] = {}
        self.annotations: List[Dict[str, Any]] = []  # bbox normalised [x,y,w,h]
        self.categories: List[Any] = []
        self.category_names: Dict[Any, str] = {}
        self.pixel_boxes = False  # JSON: bbox in pixels, normalised once sizes are known

    @classmethod
    def from_json(cls, path: str) -> "GroundTruth":
        with open(path, "r") as f:
            data = json.load(f)
        gt = cls()
        for im in data.get("images", []):
            gt.images[os.path.basename(im["file_name"])] = im["id"]
            gt.sizes[im["id"]] = (im.get("width"), im.get("height"))
        for c in sorted(data.get("categories", []), key=lambda c: c["id"]):
            gt.categories.append(c["id"])
            gt.category_names[c["id"]] = str(c.get("name", c["id"]))
        for i, a in enumerate(data.get("annotations", [])):
            gt.annotations.append({"id": a.get("id", i + 1), "image_id": a["image_id"],
                                   "category_id": a["category_id"],
                                   "bbox": [float(v) for v in a["bbox"]],
                                   "iscrowd": int(a.get("iscrowd", 0))})
        if not gt.categories:
            gt.categories = sorted({a["category_id"] for a in gt.annotations})
        gt.pixel_boxes = True
        return gt

    @classmethod
    def from_proto(cls, path: str) -> "GroundTruth":
        with open(path, "r") as f:
            msg = parse_text_proto(f.read())
        gt = cls()
        results = msg.get("detection_results", [])
        if not results and "objects" in msg:
            results = [msg]
        for n, r in enumerate(results):
            name = _first(r, "image_name", f"image_{n}")
            image_id = _first(r, "image_id", n)
            gt.images[os.path.basename(str(name))] = image_id
            for o in r.get("objects", []):
                b = _first(o, "bounding_box", {})
                top = float(_first(b, "normalized_top", 0.0))
                bottom = float(_first(b, "normalized_bottom", 0.0))
                left = float(_first(b, "normalized_left", 0.0))
                right = float(_first(b, "normalized_right", 0.0))
                cid = int(_first(o, "class_id", 0))
                gt.annotations.append({"id": len(gt.annotations) + 1, "image_id": image_id,
                                       "category_id": cid,
                                       "bbox": [left, top, right - left, bottom - top],
                                       "iscrowd": 0})
        gt.categories = sorted({a["category_id"] for a in gt.annotations})
        return gt

    def normalise(self, image_id: Any, width: float, height: float) -> None:
        """Pixel boxes of one image -> normalised (JSON ground truth)."""
        for a in self.annotations:
            if a["image_id"] == image_id and not a.get("_norm"):
                x, y, w, h = a["bbox"]
                a["bbox"] = [x / width, y / height, w / width, h / height]
                a["_norm"] = True


# --------------------------------------------------------------------------- decoding

def decode_ssd_boxes(encodings: np.ndarray, anchors: np.ndarray,
                     scales: Sequence[float] = (10.0, 10.0, 5.0, 5.0)) -> np.ndarray:
    """SSD box decoding (TFLite_Detection_PostProcess's) -> [A,4] ymin,xmin,ymax,xmax."""
    e = np.asarray(encodings, dtype=np.float64).reshape(-1, 4)
    a = np.asarray(anchors, dtype=np.float64).reshape(-1, 4)
    if e.shape[0] != a.shape[0]:
        raise ValueError(f"{e.shape[0]} box encodings but {a.shape[0]} anchors")
    ys, xs, hs, ws = [float(s) for s in scales]
    yc = e[:, 0] / ys * a[:, 2] + a[:, 0]
    xc = e[:, 1] / xs * a[:, 3] + a[:, 1]
    h = np.exp(e[:, 2] / hs) * a[:, 2]
    w = np.exp(e[:, 3] / ws) * a[:, 3]
    return np.stack([yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2], axis=1)


def nms(boxes_yxyx: np.ndarray, scores: np.ndarray, iou_threshold: float,
        max_out: int) -> np.ndarray:
    """Greedy NMS; returns kept indices by decreasing score.  A box is dropped
    when its IoU with a kept box exceeds ``iou_threshold``."""
    scores = np.asarray(scores, dtype=np.float64)
    order = np.argsort(-scores, kind="stable")
    xywh = yxyx_to_xywh(boxes_yxyx)
    keep: List[int] = []
    suppressed = np.zeros(len(order), dtype=bool)
    for oi, i in enumerate(order):
        if suppressed[oi]:
            continue
        keep.append(int(i))
        if len(keep) >= max_out:
            break
        rest = order[oi + 1:]
        if rest.size:
            ious = box_iou(xywh[i:i + 1], xywh[rest])[0]
            suppressed[oi + 1:] |= ious > iou_threshold
    return np.array(keep, dtype=np.int64)


def multiclass_nms(boxes_yxyx: np.ndarray, class_scores: np.ndarray, score_threshold: float,
                   iou_threshold: float, max_detections: int
                   ) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-class NMS; returns (boxes [K,4], classes [K], scores [K]) best first."""
    boxes_all, cls_all, sc_all = [], [], []
    for c in range(class_scores.shape[1]):
        s = class_scores[:, c]
        cand = np.nonzero(s > score_threshold)[0]
        if cand.size == 0:
            continue
        kept = cand[nms(boxes_yxyx[cand], s[cand], iou_threshold, max_detections)]
        boxes_all.append(boxes_yxyx[kept])
        cls_all.append(np.full(kept.size, c, dtype=np.int64))
        sc_all.append(s[kept])
    if not boxes_all:
        return np.zeros((0, 4)), np.zeros(0, np.int64), np.zeros(0)
    b = np.concatenate(boxes_all)
    c = np.concatenate(cls_all)
    s = np.concatenate(sc_all)
    order = np.argsort(-s, kind="stable")[:max_detections]
    return b[order], c[order], s[order]


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _softmax(x: np.ndarray) -> np.ndarray:
    z = x - x.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def _dequant(a: np.ndarray, d: Dict[str, Any]) -> np.ndarray:
    a = np.asarray(a)
    if a.dtype.kind in "iu":
        scale, zp = quant_params(d)
        if scale > 0:
            return (a.astype(np.float64) - zp) * scale
    return a.astype(np.float64)


class OutputDecoder:
    """Finds which output is which and turns one invoke's outputs into
    (boxes yxyx normalised [K,4], class indices [K], scores [K])."""

    def __init__(self, details: List[Dict[str, Any]], flags: Flags, num_labels: Optional[int]):
        self.details = details
        self.flags = flags
        shapes = [tuple(int(s) for s in d["shape"]) for d in details]
        self.anchors = None
        if len(details) >= 4 and not flags.anchors_file:
            self.mode = "postprocess"
            self._assign_postprocess(shapes)
        elif len(details) >= 2:
            self.mode = "raw"
            if not flags.anchors_file:
                raise FlagError("the model has raw box outputs; give --anchors_file (.npy [A,4] "
                                "ycenter,xcenter,h,w)")
            self.anchors = np.load(flags.anchors_file).astype(np.float64).reshape(-1, 4)
            self._assign_raw(shapes)
            try:
                self.scales = [float(v) for v in flags.box_scales.split(",")]
                assert len(self.scales) == 4
            except Exception:
                raise FlagError("--box_scales needs four numbers, e.g. 10,10,5,5") from None
            c = shapes[self.i_scores][-1]
            bg = flags.background_class
            self.skip_background = (bg == "true" or (bg == "auto" and num_labels is not None
                                                     and c == num_labels + 1))
        else:
            raise FlagError(f"cannot interpret a detection model with {len(details)} output(s): "
                            "expected the 4 TFLite_Detection_PostProcess outputs or raw "
                            "boxes + scores")

    def _assign_postprocess(self, shapes: List[tuple]) -> None:
        names = [str(d.get("name", "")).lower() for d in self.details]
        box = [i for i, s in enumerate(shapes) if len(s) == 3 and s[-1] == 4]
        if not box:
            raise FlagError("no [1,N,4] boxes output among the model outputs")
        self.i_boxes = box[0]
        n = shapes[self.i_boxes][1]
        flat = [i for i, s in enumerate(shapes) if i != self.i_boxes and len(s) == 2
                and s[-1] == n]
        count = [i for i, s in enumerate(shapes) if i != self.i_boxes and i not in flat
                 and int(np.prod(s)) == 1]
        if len(flat) < 2 or not count:
            raise FlagError(f"unexpected detection outputs {shapes}; expected boxes [1,N,4], "
                            "classes [1,N], scores [1,N], count [1]")
        self.i_count = count[0]
        by_name_scores = [i for i in flat if "score" in names[i]]
        by_name_classes = [i for i in flat if "class" in names[i]]
        if by_name_scores and by_name_classes:
            self.i_scores, self.i_classes = by_name_scores[0], by_name_classes[0]
        else:
            self.i_classes, self.i_scores = flat[0], flat[1]  # TFLite's order
        self._checked = False

    def _assign_raw(self, shapes: List[tuple]) -> None:
        names = [str(d.get("name", "")).lower() for d in self.details]
        a = self.anchors.shape[0]
        cands = [i for i, s in enumerate(shapes) if len(s) >= 2 and s[-2] == a]
        boxes = [i for i in cands if shapes[i][-1] == 4]
        if not boxes:
            raise FlagError(f"no [1,{a},4] box-encoding output matches the {a} anchors")
        named = [i for i in boxes if "box" in names[i] or "loc" in names[i]]
        self.i_boxes = named[0] if named else boxes[0]
        scores = [i for i in cands if i != self.i_boxes]
        if not scores:
            raise FlagError(f"no [1,{a},C] class-score output")
        self.i_scores = scores[0]

    def decode(self, outputs: List[np.ndarray]) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        f = self.flags
        if self.mode == "postprocess":
            boxes = _dequant(outputs[self.i_boxes], self.details[self.i_boxes]).reshape(-1, 4)
            classes = _dequant(outputs[self.i_classes], self.details[self.i_classes]).reshape(-1)
            scores = _dequant(outputs[self.i_scores], self.details[self.i_scores]).reshape(-1)
            if not self._checked:
                # classes are whole numbers; if the "classes" slot is not, swap
                frac = lambda v: np.any(np.abs(v - np.round(v)) > 1e-6)  # noqa: E731
                if frac(classes) and not frac(scores):
                    self.i_classes, self.i_scores = self.i_scores, self.i_classes
                    classes, scores = scores, classes
                self._checked = True
            count = int(round(float(np.asarray(outputs[self.i_count]).reshape(-1)[0])))
            count = max(0, min(count, boxes.shape[0]))
            boxes, classes, scores = boxes[:count], classes[:count], scores[:count]
            keep = scores > f.score_threshold
            boxes, classes, scores = boxes[keep], classes[keep], scores[keep]
            order = np.argsort(-scores, kind="stable")[:f.max_detections]
            return boxes[order], np.round(classes[order]).astype(np.int64), scores[order]
        enc = _dequant(outputs[self.i_boxes], self.details[self.i_boxes]).reshape(-1, 4)
        sc = _dequant(outputs[self.i_scores], self.details[self.i_scores])
        sc = sc.reshape(self.anchors.shape[0], -1)
        if f.score_activation == "sigmoid":
            sc = _sigmoid(sc)
        elif f.score_activation == "softmax":
            sc = _softmax(sc)
        if self.skip_background:
            sc = sc[:, 1:]
        boxes = decode_ssd_boxes(enc, self.anchors, self.scales)
        return multiclass_nms(boxes, sc, f.score_threshold, f.nms_iou_threshold,
                              f.max_detections)


# --------------------------------------------------------------------------- main

def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    return run_with_flags(argv, PROG, SUMMARY, FLAGS, _evaluate, sys.stdout, sys.stderr)


def _class_to_category(gt: GroundTruth, names: Optional[List[str]], from_json: bool,
                       err) -> Dict[int, Any]:
    if not from_json:
        return {}  # proto class ids are already model class indices
    if names is not None:
        by_name = {v: k for k, v in gt.category_names.items()}
        mapping = {i: by_name[n] for i, n in enumerate(names) if n in by_name}
        if not mapping:
            err.write("WARNING: no --model_output_labels name matches a ground-truth category "
                      "name; every detection will be dropped\n")
        return mapping
    return {i: c for i, c in enumerate(gt.categories)}


def _evaluate(flags: Flags) -> int:
    out, err = sys.stdout, sys.stderr
    try:
        for name in ("model_file", "ground_truth_images_path"):
            if not getattr(flags, name):
                raise FlagError(f"--{name} is required")
        if bool(flags.ground_truth_json) == bool(flags.ground_truth_proto):
            raise FlagError("give one of --ground_truth_json and --ground_truth_proto")
        from_json = bool(flags.ground_truth_json)
        gt = (GroundTruth.from_json(flags.ground_truth_json) if from_json
              else GroundTruth.from_proto(flags.ground_truth_proto))
        names = read_lines(flags.model_output_labels) if flags.model_output_labels else None
        folder = flags.ground_truth_images_path
        if not os.path.isdir(folder):
            raise FlagError(f"image folder not found: {folder!r}")
        present = sorted(n for n in gt.images if os.path.isfile(os.path.join(folder, n)))
        missing = len(gt.images) - len(present)
        if missing:
            err.write(f"WARNING: {missing} ground-truth image(s) not found in {folder}; "
                      "skipped\n")
        if flags.num_images > 0:
            present = present[:flags.num_images]
        if not present:
            raise FlagError("no images to evaluate")
        cls2cat = _class_to_category(gt, names, from_json, err)

        use_gpu = use_gpu_from_flags(flags)
        path, content, _ = _backend.load_model(flags.model_file)
        interp = _backend.make_interpreter(
            model_path=path, model_content=content,
            num_threads=flags.num_interpreter_threads, use_gpu=use_gpu,
            gpu_options=gpu_options_from_flags(flags), backend=flags.backend,
            warn=lambda m: err.write(m + "\n"))
        interp.allocate_tensors()
        ind = interp.get_input_details()
        outd = interp.get_output_details()
        if len(ind) != 1:
            raise FlagError(f"the model has {len(ind)} inputs; a detector has one image input")
        decoder = OutputDecoder(outd, flags, len(names) if names is not None else None)

        pre_lat, inf_lat = Stat(), Stat()
        detections: List[Dict[str, Any]] = []
        image_ids = []
        for fname in present:
            image_id = gt.images[fname]
            image_ids.append(image_id)
            t0 = time.perf_counter_ns()
            img = load_image(os.path.join(folder, fname))
            x = preprocess_image(img, ind[0], 0.0, flags.input_mean, flags.input_std)
            t1 = time.perf_counter_ns()
            if from_json:
                w, h = gt.sizes.get(image_id, (None, None))
                gt.normalise(image_id, float(w or img.shape[1]), float(h or img.shape[0]))
            interp.set_tensor(ind[0]["index"], x)
            t2 = time.perf_counter_ns()
            interp.invoke()
            t3 = time.perf_counter_ns()
            pre_lat.update((t1 - t0) // 1000)
            inf_lat.update((t3 - t2) // 1000)
            boxes, classes, scores = decoder.decode([interp.get_tensor(d["index"])
                                                     for d in outd])
            xywh = yxyx_to_xywh(np.clip(boxes, 0.0, 1.0)) if boxes.size else boxes
            for b, c, s in zip(xywh, classes, scores):
                cat = cls2cat.get(int(c)) if from_json else int(c)
                if cat is None:
                    continue
                detections.append({"image_id": image_id, "category_id": cat,
                                   "bbox": [float(v) for v in b], "score": float(s)})

        id_set = set(image_ids)
        gts = [a for a in gt.annotations if a["image_id"] in id_set]
        res = coco_evaluate(gts, detections, image_ids=image_ids, category_ids=gt.categories)
        lines = [f"Num evaluation runs: {len(present)}",
                 latency_line("Preprocessing", pre_lat),
                 latency_line("Inference", inf_lat)]
        for t, ap in zip(res["iou_thresholds"], res["ap_per_iou"]):
            lines.append(f"Average Precision [IOU Threshold={g6(round(float(t), 2))}]: "
                         f"{g6(float(ap))}")
        lines.append(f"Overall mAP: {g6(res['mAP'])}")
        lines.append(f"AP50: {g6(res['AP50'])}")
        lines.append(f"mAP (IoU 0.5:0.95): {g6(res['mAP'])}")
        if flags.per_category:
            for cat, ap in res["ap_per_category"].items():
                label = gt.category_names.get(cat) or (
                    names[cat] if names and isinstance(cat, int) and cat < len(names) else cat)
                lines.append(f"AP[{label}]: {g6(ap)}")
        out.write("\n".join(lines) + "\n")
        if flags.output_file_path:
            write_results(flags.output_file_path, lines, {
                "num_runs": len(present), "AP50": res["AP50"], "mAP": res["mAP"],
                "AP75": res["AP75"], "ap_per_iou": [float(v) for v in res["ap_per_iou"]],
                "ap_per_category": {str(k): v for k, v in res["ap_per_category"].items()},
                "preprocessing_latency_us": {"avg": pre_lat.avg(), "std_dev": pre_lat.std()},
                "inference_latency_us": {"avg": inf_lat.avg(), "std_dev": inf_lat.std()},
                "backend": flags.backend, "use_gpu": use_gpu})
        return 0
    except FlagError as e:
        err.write(f"ERROR: {e}\n")
        return 2
    except (OSError, ValueError, _backend.BackendError) as e:
        err.write(f"ERROR: {e}\n")
        return 1
    except Exception as e:
        err.write(f"ERROR: evaluation failed: {type(e).__name__}: {e}\n")
        return 1
