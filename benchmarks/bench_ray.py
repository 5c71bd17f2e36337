"""Ray Data throughput vs actor count: tflite_gpu.ray.TFLitePredictor over a dataset of
images (MobileNet v1 0.5/128, zoo), map_batches on an actor pool of 1, 2 (and 4 where the
machine has the cores). CPU actors by default; TFLITE_GPU_BENCH_RAY_GPUS=N gives each actor one
GPU (N actors at most).

    python -m pytest benchmarks/bench_ray.py --benchmark-only -q

Each round is one full pass of the dataset, as a user's job runs it: map_batches starts its actor
pool (process start, model load, interpreter build) inside the round, so small datasets measure
mostly that start-up; raise TFLITE_GPU_BENCH_RAY_IMAGES for the steady-state rate. images/s =
IMAGES / time. Ray's own start (ray.init) is outside the rounds."""
import os

import numpy as np
import pytest

ray = pytest.importorskip("ray")

IMAGES = int(os.environ.get("TFLITE_GPU_BENCH_RAY_IMAGES", "256"))
GPUS = int(os.environ.get("TFLITE_GPU_BENCH_RAY_GPUS", "0"))
ACTORS = [a for a in (1, 2, 4, 8) if a <= max(2, (GPUS or os.cpu_count() or 2))]


@pytest.fixture(scope="module")
def cluster():
    ray.init(include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    ray.data.DataContext.get_current().enable_progress_bars = False
    yield ray
    ray.shutdown()


@pytest.mark.parametrize("actors", ACTORS)
def test_throughput(benchmark, cluster, actors):
    from tflite_gpu.ray import TFLitePredictor
    from tflite_gpu.testing.zoo import mobilenet_v1
    model = cluster.put(mobilenet_v1(input_size=128, alpha=0.5))
    rng = np.random.default_rng(0)
    ds = cluster.data.from_items([{"id": i, "image": rng.random((128, 128, 3), dtype=np.float32)}
                                  for i in range(IMAGES)]).materialize()

    def one_pass():
        out = ds.map_batches(TFLitePredictor,
                             fn_constructor_kwargs=dict(model_content=model, use_gpu=bool(GPUS),
                                                        input_columns=["image"],
                                                        output_columns=["probs"], num_threads=1),
                             concurrency=actors, num_gpus=1 if GPUS else 0,
                             num_cpus=0 if GPUS else 1, batch_size=16, batch_format="numpy")
        return out.select_columns(["id"]).count()

    assert one_pass() == IMAGES
    n = benchmark.pedantic(one_pass, rounds=3, iterations=1)
    assert n == IMAGES
    benchmark.extra_info.update(suite="bench_ray", actors=actors, gpus=GPUS,
                                images_per_s=IMAGES / benchmark.stats.stats.min)
