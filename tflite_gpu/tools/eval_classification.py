"""``tflite-gpu eval-classification``: TFLite's ILSVRC top-k evaluation tool.

Images (a folder, taken in sorted file-name order) are decoded, centrally
cropped to 87.5 % of their height and width, resized (bilinear, TensorFlow's
legacy sampling: no corner alignment, no half-pixel centres) to the model's
input size and normalised for the input type:

* float32: ``(x - 127.5) / 127.5`` (``--input_mean``, ``--input_std``);
* uint8 / int8: the float value above quantized with the input tensor's
  scale and zero point, clipped (an input without quantization parameters
  gets the raw pixel, minus 128 for int8).

``--ground_truth_labels`` has one label per image (same order, before the
denylist is applied); a label is the name of a line of
``--model_output_labels`` (or, without that file, a class index).
``--denylist_file_path`` lists 1-based image indices to skip, as in the ILSVRC
validation set's denylist.  Output lines as TFLite's tool:

    Num evaluation runs: 300
    Preprocessing latency: avg=13772.5(us), std_dev=0(us)
    Inference latency: avg=76578.4(us), std_dev=600(us)
    Top-1 Accuracy: 0.733333
    ...
    Top-10 Accuracy: 0.923333
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from . import _backend
from .benchmark import Stat, g6
from .flags import (Flag, FlagError, Flags, delegate_flags, gpu_options_from_flags,
                    run_with_flags, use_gpu_from_flags)
from .metrics import topk_accuracy

__all__ = ["main", "list_images", "load_image", "resize_bilinear", "central_crop",
           "preprocess_image", "read_lines", "FLAGS"]

PROG = "tflite-gpu eval-classification"
SUMMARY = """Top-1..top-K accuracy of an image classifier on a folder of images with
ground-truth labels (TFLite's imagenet_image_classification run_eval)."""

IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".bmp", ".gif", ".webp", ".ppm", ".pgm",
                    ".pnm", ".tif", ".tiff", ".npy")


def _flags() -> List[Flag]:
    return [
        Flag("model_file", str, "", "model file (.tflite) or zoo:NAME", aliases=("graph",)),
        Flag("ground_truth_images_path", str, "", "folder of images"),
        Flag("ground_truth_labels", str, "",
             "text file: one label per image, in sorted file-name order"),
        Flag("model_output_labels", str, "", "text file: label name of each output class"),
        Flag("denylist_file_path", str, "", "file of 1-based image indices to skip",
             aliases=("blacklist_file_path",)),
        Flag("num_images", int, 0, "number of images to evaluate (0 = all)"),
        Flag("num_ranks", int, 10, "report top-1 .. top-N accuracy"),
        Flag("num_interpreter_threads", int, 1, "CPU threads", aliases=("num_threads",)),
        Flag("crop_fraction", float, 0.875, "central crop fraction before resizing "
             "(0 or 1 = no crop)"),
        Flag("input_mean", float, 127.5, "float inputs: (pixel - mean) / std"),
        Flag("input_std", float, 127.5, "float inputs: (pixel - mean) / std"),
        Flag("output_file_path", str, "", "write the metrics here (.json: as JSON)"),
    ] + delegate_flags()


FLAGS = _flags()


# --------------------------------------------------------------------------- files

def read_lines(path: str) -> List[str]:
    with open(path, "r", encoding="utf-8") as f:
        lines = [ln.rstrip("\r\n").strip() for ln in f]
    while lines and lines[-1] == "":
        lines.pop()
    return lines


def list_images(folder: str) -> List[str]:
    if not os.path.isdir(folder):
        raise FlagError(f"image folder not found: {folder!r}")
    names = sorted(n for n in os.listdir(folder)
                   if n.lower().endswith(IMAGE_EXTENSIONS)
                   and os.path.isfile(os.path.join(folder, n)))
    return [os.path.join(folder, n) for n in names]


def _read_pnm(path: str) -> np.ndarray:
    """Binary PPM (P6) / PGM (P5), 8-bit, without Pillow."""
    with open(path, "rb") as f:
        data = f.read()
    tokens: List[bytes] = []
    pos = 0
    while len(tokens) < 4:
        while pos < len(data) and data[pos:pos + 1].isspace():
            pos += 1
        if data[pos:pos + 1] == b"#":
            while pos < len(data) and data[pos:pos + 1] not in (b"\n", b"\r"):
                pos += 1
            continue
        start = pos
        while pos < len(data) and not data[pos:pos + 1].isspace():
            pos += 1
        tokens.append(data[start:pos])
    pos += 1  # the single whitespace after maxval
    magic, w, h, maxval = tokens[0], int(tokens[1]), int(tokens[2]), int(tokens[3])
    if magic not in (b"P5", b"P6") or maxval > 255:
        raise ValueError(f"{path}: only 8-bit binary P5/P6 images are supported without Pillow")
    c = 3 if magic == b"P6" else 1
    arr = np.frombuffer(data, dtype=np.uint8, count=w * h * c, offset=pos)
    return arr.reshape(h, w, c)


def load_image(path: str) -> np.ndarray:
    """Decode to an HxWx3 uint8 RGB array (Pillow; .npy and P5/P6 without it)."""
    low = path.lower()
    if low.endswith(".npy"):
        arr = np.load(path)
    else:
        try:
            from PIL import Image
        except ImportError:
            Image = None
        if Image is not None:
            with Image.open(path) as im:
                arr = np.asarray(im.convert("RGB"))
        elif low.endswith((".ppm", ".pgm", ".pnm")):
            arr = _read_pnm(path)
        else:
            raise RuntimeError(f"decoding {os.path.basename(path)} needs Pillow "
                               "(pip install pillow); .npy and binary .ppm/.pgm work without")
    arr = np.asarray(arr)
    if arr.ndim == 2:
        arr = arr[:, :, None]
    if arr.ndim != 3:
        raise ValueError(f"{path}: expected an HxW or HxWxC image, got shape {arr.shape}")
    if arr.shape[2] == 1:
        arr = np.repeat(arr, 3, axis=2)
    elif arr.shape[2] == 4:
        arr = arr[:, :, :3]
    if arr.dtype != np.uint8:
        arr = np.clip(np.round(arr.astype(np.float64)), 0, 255).astype(np.uint8)
    return arr


# --------------------------------------------------------------------------- preprocessing

def central_crop(img: np.ndarray, fraction: float) -> np.ndarray:
    if fraction <= 0 or fraction >= 1:
        return img
    h, w = img.shape[:2]
    ch = max(1, int(round(h * fraction)))
    cw = max(1, int(round(w * fraction)))
    y0 = (h - ch) // 2
    x0 = (w - cw) // 2
    return img[y0:y0 + ch, x0:x0 + cw]


def resize_bilinear(img: np.ndarray, out_h: int, out_w: int) -> np.ndarray:
    """TF legacy bilinear resize (align_corners=False, half_pixel_centers=False)."""
    img = np.asarray(img, dtype=np.float32)
    in_h, in_w = img.shape[:2]
    if (in_h, in_w) == (out_h, out_w):
        return img.copy()
    ys = np.arange(out_h, dtype=np.float64) * (in_h / out_h)
    xs = np.arange(out_w, dtype=np.float64) * (in_w / out_w)
    y0 = np.floor(ys).astype(np.int64)
    x0 = np.floor(xs).astype(np.int64)
    y1 = np.minimum(y0 + 1, in_h - 1)
    x1 = np.minimum(x0 + 1, in_w - 1)
    dy = (ys - y0).astype(np.float32)[:, None, None]
    dx = (xs - x0).astype(np.float32)[None, :, None]
    top = img[y0][:, x0] * (1 - dx) + img[y0][:, x1] * dx
    bot = img[y1][:, x0] * (1 - dx) + img[y1][:, x1] * dx
    return top * (1 - dy) + bot * dy


def input_geometry(detail: Dict[str, Any]) -> Tuple[int, int, int]:
    shape = [int(s) for s in detail["shape"]]
    if len(shape) == 4:
        return shape[1], shape[2], shape[3]
    if len(shape) == 3:
        return shape[0], shape[1], shape[2]
    raise ValueError(f"expected an image input [1,H,W,C], got shape {shape}")


def preprocess_image(img: np.ndarray, detail: Dict[str, Any], crop_fraction: float = 0.875,
                     mean: float = 127.5, std: float = 127.5) -> np.ndarray:
    """HxWx3 uint8 -> the input tensor (with batch dimension) for ``detail``."""
    h, w, c = input_geometry(detail)
    x = central_crop(np.asarray(img), crop_fraction)
    x = resize_bilinear(x, h, w)
    if c == 1:
        x = (x[..., 0:1] * 0.299 + x[..., 1:2] * 0.587 + x[..., 2:3] * 0.114)
    elif c != 3:
        raise ValueError(f"model input has {c} channels; images give 1 or 3")
    dt = np.dtype(detail["dtype"])
    shape = tuple(int(s) for s in detail["shape"])
    if dt.kind == "f":
        return ((x - mean) / std).astype(dt).reshape(shape)
    if dt in (np.uint8, np.int8):
        q = detail.get("quantization") or (0.0, 0)
        scale, zp = float(q[0]), int(q[1])
        info = np.iinfo(dt)
        if scale > 0:
            v = np.round((x - mean) / std / scale) + zp
        else:
            v = np.round(x) - (128 if dt == np.int8 else 0)
        return np.clip(v, info.min, info.max).astype(dt).reshape(shape)
    raise ValueError(f"unsupported image input type {dt}")


def output_scores(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    if a.ndim >= 2 and a.shape[0] == 1:
        a = a[0]
    return a.reshape(-1).astype(np.float64)


# --------------------------------------------------------------------------- main

def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    return run_with_flags(argv, PROG, SUMMARY, FLAGS, _evaluate, sys.stdout, sys.stderr)


def _read_denylist(path: str) -> set:
    with open(path, "r") as f:
        text = f.read().replace(",", " ")
    try:
        return {int(t) for t in text.split()}
    except ValueError as e:
        raise FlagError(f"--denylist_file_path: expected integers: {e}") from None


def _label_index(label: str, names: Optional[List[str]], table: Dict[str, int]) -> int:
    if names is not None and label in table:
        return table[label]
    try:
        return int(label)
    except ValueError:
        raise FlagError(f"ground-truth label {label!r} is not in --model_output_labels"
                        if names is not None else
                        f"ground-truth label {label!r} is not a class index; give "
                        "--model_output_labels to map names") from None


def _evaluate(flags: Flags) -> int:
    out, err = sys.stdout, sys.stderr
    try:
        for name in ("model_file", "ground_truth_images_path", "ground_truth_labels"):
            if not getattr(flags, name):
                raise FlagError(f"--{name} is required")
        images = list_images(flags.ground_truth_images_path)
        labels = read_lines(flags.ground_truth_labels)
        if len(labels) != len(images):
            raise FlagError(f"{len(labels)} ground-truth labels for {len(images)} images in "
                            f"{flags.ground_truth_images_path}")
        names = read_lines(flags.model_output_labels) if flags.model_output_labels else None
        table = {n: i for i, n in reversed(list(enumerate(names)))} if names else {}
        items = list(zip(images, labels))
        if flags.denylist_file_path:
            deny = _read_denylist(flags.denylist_file_path)
            items = [it for i, it in enumerate(items, start=1) if i not in deny]
        if flags.num_images > 0:
            items = items[:flags.num_images]
        if not items:
            raise FlagError("no images to evaluate")
        gt = [_label_index(lbl, names, table) for _, lbl in items]

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
            raise FlagError(f"the model has {len(ind)} inputs; a classifier has one image input")
        pre_lat, inf_lat = Stat(), Stat()
        rows = []
        for img_path, _ in items:
            t0 = time.perf_counter_ns()
            x = preprocess_image(load_image(img_path), ind[0], flags.crop_fraction,
                                 flags.input_mean, flags.input_std)
            t1 = time.perf_counter_ns()
            interp.set_tensor(ind[0]["index"], x)
            t2 = time.perf_counter_ns()
            interp.invoke()
            t3 = time.perf_counter_ns()
            pre_lat.update((t1 - t0) // 1000)
            inf_lat.update((t3 - t2) // 1000)
            rows.append(output_scores(interp.get_tensor(outd[0]["index"])))
        num_classes = rows[0].shape[0]
        if names is not None and len(names) != num_classes:
            err.write(f"WARNING: {len(names)} model output labels but the model outputs "
                      f"{num_classes} classes\n")
        scores = np.stack(rows)
        ks = list(range(1, max(1, flags.num_ranks) + 1))
        acc = topk_accuracy(scores, gt, ks)

        lines = [f"Num evaluation runs: {len(items)}",
                 f"Preprocessing latency: avg={g6(pre_lat.avg())}(us), "
                 f"std_dev={pre_lat.std()}(us)",
                 f"Inference latency: avg={g6(inf_lat.avg())}(us), "
                 f"std_dev={inf_lat.std()}(us)"]
        lines += [f"Top-{k} Accuracy: {g6(float(a))}" for k, a in zip(ks, acc)]
        out.write("\n".join(lines) + "\n")
        if flags.output_file_path:
            with open(flags.output_file_path, "w") as f:
                if flags.output_file_path.endswith(".json"):
                    json.dump({"num_runs": len(items),
                               "preprocessing_latency_us": {"avg": pre_lat.avg(),
                                                            "std_dev": pre_lat.std()},
                               "inference_latency_us": {"avg": inf_lat.avg(),
                                                        "std_dev": inf_lat.std()},
                               "topk_accuracies": [float(a) for a in acc],
                               "backend": flags.backend, "use_gpu": use_gpu}, f, indent=2)
                else:
                    f.write("\n".join(lines) + "\n")
        return 0
    except FlagError as e:
        err.write(f"ERROR: {e}\n")
        return 2
    except (OSError, _backend.BackendError) as e:
        err.write(f"ERROR: {e}\n")
        return 1
    except Exception as e:
        err.write(f"ERROR: evaluation failed: {type(e).__name__}: {e}\n")
        return 1
