"""The C++ example host (examples/minimal.cc), built against the installed package's CMake
config and run on a model; its output must match TensorFlow Lite's."""
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import tflite_gpu
from harness import rel_l2, run_litert
from tflite_gpu.testing import zoo

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "examples")


def _cmake():
    exe = shutil.which("cmake")
    if exe is None:
        pytest.skip("cmake is not installed here: cannot build the C++ example")
    return exe


@pytest.fixture(scope="module")
def example_bin(tmp_path_factory):
    cmake = _cmake()
    if not os.path.isfile(os.path.join(tflite_gpu.get_cmake_dir(), "tflite_gpuConfig.cmake")):
        pytest.skip("tflite_gpu is not installed with its CMake package config here (a developer build "
                    "from the source tree): pip install . to run the C++ example test")
    build = tmp_path_factory.mktemp("cpp_example")
    cfg = [cmake, "-S", os.path.abspath(EXAMPLES), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
           f"-Dtflite_gpu_DIR={tflite_gpu.get_cmake_dir()}"]
    r = subprocess.run(cfg, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    r = subprocess.run([cmake, "--build", str(build), "-j2"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    return build


def test_cpp_minimal_matches_litert(example_bin, tmp_path):
    model = zoo.encoder_decoder(seed=3)
    mpath = tmp_path / "m.tflite"
    mpath.write_bytes(model)
    interp = tflite_gpu.Interpreter(model_content=model)
    d = interp.get_input_details()[0]
    x = np.random.default_rng(0).standard_normal(d["shape"]).astype(np.float32)
    (tmp_path / "in.bin").write_bytes(x.tobytes())
    r = subprocess.run([str(example_bin / "minimal"), str(mpath), str(tmp_path / "in.bin"),
                        str(tmp_path / "out.bin"), "2"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    want = run_litert(model, [x])[0]
    got = np.frombuffer((tmp_path / "out.bin").read_bytes(), np.float32).reshape(want.shape)
    assert rel_l2(got, want) <= 1e-5


def test_cpp_minimal_reports_bad_model(example_bin, tmp_path):
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"\x10\x00\x00\x00TFL3" + b"\xff" * 40)
    (tmp_path / "in.bin").write_bytes(b"")
    r = subprocess.run([str(example_bin / "minimal"), str(bad), str(tmp_path / "in.bin"), str(tmp_path / "o.bin")],
                       capture_output=True, text=True)
    assert r.returncode == 1
    assert "malformed .tflite model" in r.stderr


def test_cpp_gpu_delegate_example_matches_litert(example_bin, tmp_path):
    from gpu_util import require_gpu
    require_gpu()
    model = zoo.encoder_decoder(seed=4)
    mpath = tmp_path / "m.tflite"
    mpath.write_bytes(model)
    d = tflite_gpu.Interpreter(model_content=model).get_input_details()[0]
    x = np.random.default_rng(1).standard_normal(d["shape"]).astype(np.float32)
    (tmp_path / "in.bin").write_bytes(x.tobytes())
    r = subprocess.run([str(example_bin / "gpu_delegate"), str(mpath), str(tmp_path / "in.bin"),
                        str(tmp_path / "out.bin")], capture_output=True, text=True,
                       env=dict(os.environ, TFLITE_GPU_SITE_PACKAGES=os.pathsep.join(sys.path)))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "delegated" in r.stdout and "precision F32" in r.stdout, r.stdout
    want = run_litert(model, [x])[0]
    got = np.frombuffer((tmp_path / "out.bin").read_bytes(), np.float32).reshape(want.shape)
    assert rel_l2(got, want) <= 1e-5
