"""Batch inference of a .tflite model over a Ray dataset, one interpreter (and GPU delegate) per
actor. Runs anywhere Ray runs: on a machine with NVIDIA GPUs give each actor one with
num_gpus=1 (Ray sets CUDA_VISIBLE_DEVICES, NVIDIA's OpenCL honours it); without a GPU the actors
run the CPU kernels.

    pip install "tflite_gpu[ray]"
    python examples/ray_batch_inference.py [model.tflite] [--gpus N]
"""
import argparse

import numpy as np
import ray

from tflite_gpu.ray import TFLitePredictor
from tflite_gpu.testing.zoo import mobilenet_v1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model", nargs="?", help=".tflite file (default: a zoo MobileNet v1 built here)")
    ap.add_argument("--gpus", type=int, default=0, help="actors, one GPU each (0: CPU actors)")
    ap.add_argument("--actors", type=int, default=2)
    ap.add_argument("--images", type=int, default=64)
    args = ap.parse_args()

    ray.init()
    model = open(args.model, "rb").read() if args.model else mobilenet_v1(input_size=128, alpha=0.5)
    model_ref = ray.put(model)                       # shipped once through the object store
    rng = np.random.default_rng(0)
    ds = ray.data.from_items([{"id": i, "image": rng.random((128, 128, 3), dtype=np.float32)}
                              for i in range(args.images)])
    actors = args.gpus or args.actors
    out = ds.map_batches(TFLitePredictor,
                         fn_constructor_kwargs=dict(model_content=model_ref,
                                                    use_gpu=bool(args.gpus),
                                                    gpu_options=dict(is_precision_loss_allowed=True),
                                                    input_columns=["image"],
                                                    output_columns=["probs"]),
                         concurrency=actors, num_gpus=1 if args.gpus else 0, batch_size=16,
                         batch_format="numpy")
    for row in out.select_columns(["id", "probs"]).take(5):
        print(row["id"], "top-1 class", int(np.argmax(row["probs"])))


if __name__ == "__main__":
    main()
