"""tflite_gpu.ray.TFLitePredictor: batches in every Ray format, batch resizing and the fixed-batch
fallback, and a real local Ray cluster (Ray Data map_batches over an actor pool of 2). The
reference is one plain tflite_gpu Interpreter run per example (batch 1), independent of the
predictor's batching."""
import os
import stat
import tempfile

import numpy as np
import pytest

from tflite_gpu import Interpreter, list_devices
from tflite_gpu.testing.zoo import _Net, mobilenet_v1

from harness import rel_l2

N = 10


@pytest.fixture(scope="module")
def models():
    return {
        # reshape to a constant [1, classes]: the batch cannot be resized -> chunks of 1
        "fixed": mobilenet_v1(input_size=32, alpha=0.25, num_classes=10),
        # convolutions + a global pool: the batch dimension resizes
        "resizable": conv_pool_model(),
    }


@pytest.fixture(scope="module")
def images():
    rng = np.random.default_rng(7)
    return {"fixed": rng.standard_normal((N, 32, 32, 3)).astype(np.float32),
            "resizable": rng.standard_normal((N, 16, 16, 3)).astype(np.float32)}


def conv_pool_model():
    net = _Net(3, "float32", "conv + pool (test_ray)")
    x_in = net.mb.add_input([1, 16, 16, 3], name="image")
    x = net.conv(x_in, 8, k=3, stride=2)
    x = net.dwconv(x, 3, 1)
    x = net.conv(x, 6, k=1, stride=1, prefix="pw")
    y = net.global_avg_pool(x)
    return net.finish({"image": x_in}, {"features": y})


def reference(model, x):
    """One interpreter, one example at a time."""
    it = Interpreter(model_content=model)
    it.allocate_tensors()
    inp, outs = it.get_input_details()[0], it.get_output_details()
    res = [[] for _ in outs]
    for row in x:
        it.set_tensor(inp["index"], row[None])
        it.invoke()
        for r, o in zip(res, outs):
            r.append(it.get_tensor(o["index"])[0].copy())
    return [np.stack(r) for r in res], [o["name"] for o in outs]


@pytest.mark.parametrize("which", ["fixed", "resizable"])
def test_predictor_numpy_pandas_arrow(models, images, which):
    from tflite_gpu.ray import TFLitePredictor
    model, x = models[which], images[which]
    want, names = reference(model, x)
    p = TFLitePredictor(model_content=model, use_gpu=False, input_columns=["image"])
    for n in (N, 3, N):                       # batch sizes change between calls
        got = p({"image": x[:n], "id": np.arange(n)})
        assert list(got["id"]) == list(range(n))
        for name, w in zip(names, want):
            np.testing.assert_allclose(got[name], w[:n], rtol=1e-5, atol=1e-5)
    assert p._resizable is (which == "resizable")
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"image": list(x), "id": range(N)})
    got = p(df)
    assert list(got.columns) == ["image", "id"] + names
    np.testing.assert_allclose(np.stack(got[names[0]].to_numpy()), want[0], rtol=1e-5, atol=1e-5)
    pa = pytest.importorskip("pyarrow")
    tab = pa.table({"image": [r.tolist() for r in x], "id": list(range(N))})
    got = p(tab)
    np.testing.assert_allclose(got[names[0]], want[0], rtol=1e-5, atol=1e-5)


def test_predictor_bad_input(models, images):
    from tflite_gpu.ray import TFLitePredictor
    m, x = models["fixed"], images["fixed"]
    with pytest.raises(ValueError, match="exactly one of model_path and model_content"):
        TFLitePredictor()
    with pytest.raises(ValueError, match="use_gpu must be True, False or 'auto'"):
        TFLitePredictor(model_content=m, use_gpu="yes")
    with pytest.raises(TypeError, match="gpu_options must be a dict"):
        TFLitePredictor(model_content=m, gpu_options=3)
    with pytest.raises(ValueError, match="bad gpu_options"):
        TFLitePredictor(model_content=m, gpu_options={"no_such_option": 1})
    with pytest.raises(ValueError, match="output_columns has 2 names"):
        TFLitePredictor(model_content=m, output_columns=["a", "b"])
    p = TFLitePredictor(model_content=m, use_gpu=False)
    with pytest.raises(KeyError, match="cannot tell which columns"):
        p({"a": x, "b": x})
    p = TFLitePredictor(model_content=m, use_gpu=False, input_columns=["image"])
    with pytest.raises(KeyError, match=r"input column\(s\) \['image'\] not in the batch"):
        p({"img": x})
    with pytest.raises(ValueError, match=r"rows have shape \(16, 16, 3\)"):
        p({"image": x[:, :16, :16]})
    with pytest.raises(TypeError, match="a batch must be a dict"):
        p([x])
    # still usable after the errors
    want, names = reference(m, x[:2])
    np.testing.assert_allclose(p({"image": x[:2]})[names[0]], want[0], rtol=1e-5, atol=1e-5)


def test_predictor_auto_follows_the_compatibility_probe(models):
    from tflite_gpu import CompatibilityList
    from tflite_gpu.ray import TFLitePredictor
    probe = CompatibilityList().probe_result()
    assert probe["ok"] == CompatibilityList().is_delegate_supported_on_this_device()
    rep = TFLitePredictor(model_content=models["resizable"], use_gpu="auto").report()
    assert rep["delegate"] is probe["ok"], (rep, probe)
    if probe["ok"]:
        assert probe["device"] in rep["why"] and rep["device_is_gpu"]
    else:
        assert probe["reason"] and probe["reason"] in rep["why"], (rep, probe)


@pytest.fixture(scope="module")
def ray_cluster():
    try:
        import ray
        import ray.data  # noqa: F401
    except Exception as e:  # pragma: no cover - depends on the Python version
        print(f"SKIP REASON: Ray cannot be imported for this Python: {e}")
        pytest.skip(f"Ray is not installable/importable here: {e}")
    # Ray's workers put the driver's working directory first on sys.path: started from the
    # repository root, the source tree's tflite_gpu/ (no built _core) would shadow the installed
    # package. Start them from a neutral directory, and hand them the driver's own import path.
    import tflite_gpu
    pkg_parent = os.path.dirname(os.path.dirname(os.path.abspath(tflite_gpu.__file__)))
    cwd = os.getcwd()
    os.chdir(tempfile.gettempdir())
    try:
        ray.init(num_cpus=4, include_dashboard=False, ignore_reinit_error=True,
                 log_to_driver=False, configure_logging=False,
                 runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join(
                     [pkg_parent] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])}})
    finally:
        os.chdir(cwd)
    try:
        ray.data.DataContext.get_current().enable_progress_bars = False
    except Exception:
        pass
    yield ray
    ray.shutdown()


def _with_pid(base):
    """A subclass (defined in a function, so Ray pickles it by value) that records which actor
    ran each row and what the actor chose."""
    class Tagged(base):
        def __call__(self, batch):
            out = super().__call__(batch)
            n = len(out["id"])
            out["pid"] = np.full(n, os.getpid())
            out["why"] = np.array([self.report()["why"]] * n)
            out["delegated"] = np.full(n, self.report()["delegate"])
            return out
    return Tagged


def _two_busy_actors(ray):
    """Two actors, both started before any block is dispatched (wait_for_min_actors_s), at most one
    block in flight per actor: every actor serves blocks, also when the machine is loaded (with
    concurrency=2 alone, Ray handed every block to the first actor that came up)."""
    ray.data.DataContext.get_current().wait_for_min_actors_s = 600
    return dict(compute=ray.data.ActorPoolStrategy(size=2, max_tasks_in_flight_per_actor=1))


def test_ray_data_two_actors_match_single_interpreter(ray_cluster, models, images):
    ray = ray_cluster
    from tflite_gpu.ray import TFLitePredictor
    model, x = models["fixed"], images["fixed"]
    want, names = reference(model, x)
    ds = ray.data.from_items([{"image": x[i], "id": i} for i in range(N)], override_num_blocks=5)
    out = ds.map_batches(_with_pid(TFLitePredictor),
                         fn_constructor_kwargs=dict(model_content=ray.put(model), use_gpu=True,
                                                    input_columns=["image"], output_columns=["p"]),
                         **_two_busy_actors(ray), num_gpus=0, num_cpus=1, batch_size=2,
                         batch_format="numpy")
    rows = sorted(out.take_all(), key=lambda r: r["id"])
    assert [r["id"] for r in rows] == list(range(N))
    got = np.stack([r["p"] for r in rows])
    np.testing.assert_allclose(got, want[0], rtol=1e-5, atol=1e-5)
    # num_gpus=0 with use_gpu=True: CPU kernels, and the actor says why
    assert all(not r["delegated"] for r in rows)
    assert all("Ray assigned this actor no GPU" in str(r["why"]) for r in rows)
    pids = {int(r["pid"]) for r in rows}
    print(f"rows ran on {len(pids)} actor process(es)")
    assert len(pids) == 2, pids


def test_ray_actors_share_one_serialization_dir(ray_cluster, models, images, tmp_path):
    ray = ray_cluster
    from tflite_gpu import ExperimentalFlags
    from tflite_gpu.ray import TFLitePredictor
    devs = [d for d in list_devices() if d.get("selected")]
    if not devs:
        pytest.skip(f"no OpenCL device for the GPU delegate here: {list_devices()}")
    model, x = models["resizable"], images["resizable"]
    want, names = reference(model, x)
    cache = tmp_path / "shared_cache"
    opts = dict(device=devs[0]["index"], serialization_dir=str(cache), model_token="ray_test",
                experimental_flags=ExperimentalFlags.ENABLE_SERIALIZATION,
                is_precision_loss_allowed=False)
    ds = ray.data.from_items([{"image": x[i], "id": i} for i in range(N)], override_num_blocks=4)
    out = ds.map_batches(_with_pid(TFLitePredictor),
                         fn_constructor_kwargs=dict(model_path=_write(tmp_path, model),
                                                    use_gpu=True, gpu_options=opts,
                                                    input_columns=["image"]),
                         **_two_busy_actors(ray), num_gpus=0, num_cpus=1, batch_size=3,
                         batch_format="numpy")
    rows = sorted(out.take_all(), key=lambda r: r["id"])
    assert all(r["delegated"] for r in rows)
    assert len({int(r["pid"]) for r in rows}) == 2
    got = np.stack([r[names[0]] for r in rows])
    e = rel_l2(got, want[0])  # F32 delegate (no precision loss): the GPU tests' bound
    assert e <= 1e-5, f"delegated actors vs the CPU reference: rel-L2 {e:.3g}"
    files = [os.path.join(dp, f) for dp, _, fs in os.walk(cache) for f in fs]
    assert files, "the delegate wrote nothing to the shared serialization_dir"
    assert stat.S_IMODE(os.stat(cache).st_mode) == 0o700
    for f in files:
        assert stat.S_IMODE(os.stat(f).st_mode) == 0o600, f
        assert not os.path.basename(f).startswith(".tmp"), f"temporary file left behind: {f}"


def _write(tmp_path, model):
    p = tmp_path / "model.tflite"
    p.write_bytes(model)
    return str(p)
