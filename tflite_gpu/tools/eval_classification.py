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

import sys
import time
from typing import Dict, List, Optional, Sequence

import numpy as np

from . import _backend
from ._common import Stat, g6, latency_line, read_lines, write_results
from ._images import (central_crop, list_images, load_image, preprocess_image,  # noqa: F401
                      resize_bilinear)
from .flags import (Flag, FlagError, Flags, delegate_flags, gpu_options_from_flags,
                    run_with_flags, use_gpu_from_flags)
from .metrics import topk_accuracy

__all__ = ["main", "list_images", "load_image", "resize_bilinear", "central_crop",
           "preprocess_image", "read_lines", "FLAGS"]

PROG = "tflite-gpu eval-classification"
SUMMARY = """Top-1..top-K accuracy of an image classifier on a folder of images with
ground-truth labels (TFLite's imagenet_image_classification run_eval)."""


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


# --------------------------------------------------------------------------- outputs

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
                 latency_line("Preprocessing", pre_lat),
                 latency_line("Inference", inf_lat)]
        lines += [f"Top-{k} Accuracy: {g6(float(a))}" for k, a in zip(ks, acc)]
        out.write("\n".join(lines) + "\n")
        if flags.output_file_path:
            write_results(flags.output_file_path, lines, {
                "num_runs": len(items),
                "preprocessing_latency_us": {"avg": pre_lat.avg(), "std_dev": pre_lat.std()},
                "inference_latency_us": {"avg": inf_lat.avg(), "std_dev": inf_lat.std()},
                "topk_accuracies": [float(a) for a in acc],
                "backend": flags.backend, "use_gpu": use_gpu})
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
