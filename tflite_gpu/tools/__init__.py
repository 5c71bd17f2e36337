"""Command-line tools of tflite_gpu (``tflite-gpu <command>``).

Each tool is a module with ``main(argv) -> exit code`` and a ``FLAGS`` list:

* ``benchmark``            TFLite's benchmark_model
* ``diff``                 TFLite's Inference Diff
* ``eval_classification``  TFLite's ILSVRC top-k evaluation
* ``eval_detection``       TFLite's COCO mAP evaluation

``metrics`` holds the top-k / IoU / COCO-AP code; ``flags`` the TFLite-style
flag parser; ``_backend`` the one factory that creates interpreters.
Submodules are imported lazily so that ``import tflite_gpu.tools`` is cheap.
"""

__all__ = ["benchmark", "diff", "eval_classification", "eval_detection", "metrics", "flags"]
