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
def gpu_delegate_bin(request):
    """examples/gpu_delegate.cc: the installed package's build (example_bin), or in a developer
    tree (no CMake package config) the same source built by scripts/dev_build.sh in build/dev, so
    the example host runs here too."""
    try:
        return request.getfixturevalue("example_bin") / "gpu_delegate"
    except pytest.skip.Exception:
        root = os.path.realpath(os.path.join(os.path.dirname(__file__), ".."))
        dev = os.path.join(root, "build", "dev", "gpu_delegate")
        in_tree = os.path.realpath(os.path.dirname(tflite_gpu.__file__)) == os.path.join(root, "tflite_gpu")
        if not (in_tree and os.access(dev, os.X_OK)):
            raise
        print(f"note: no installed CMake package config; using the developer build's example host {dev}")
        return dev


@pytest.fixture(scope="module")
def example_bin(tmp_path_factory):
    cmake = _cmake()
    if not os.path.isfile(os.path.join(tflite_gpu.get_cmake_dir(), "tflite_gpuConfig.cmake")):
        pytest.skip("tflite_gpu is not installed with its CMake package config here (a developer build "
                    "from the source tree): pip install . to run the C++ example test")
    build = tmp_path_factory.mktemp("cpp_example")
    cfg = [cmake, "-S", os.path.abspath(EXAMPLES), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
           f"-Dtflite_gpu_DIR={tflite_gpu.get_cmake_dir()}"]
    r = subprocess.run(cfg, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    r = subprocess.run([cmake, "--build", str(build), "-j2"], capture_output=True, text=True, timeout=600)
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
                        str(tmp_path / "out.bin"), "2"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    want = run_litert(model, [x])[0]
    got = np.frombuffer((tmp_path / "out.bin").read_bytes(), np.float32).reshape(want.shape)
    assert rel_l2(got, want) <= 1e-5


def test_cpp_minimal_reports_bad_model(example_bin, tmp_path):
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"\x10\x00\x00\x00TFL3" + b"\xff" * 40)
    (tmp_path / "in.bin").write_bytes(b"")
    r = subprocess.run([str(example_bin / "minimal"), str(bad), str(tmp_path / "in.bin"), str(tmp_path / "o.bin")],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 1
    assert "malformed .tflite model" in r.stderr


def test_cpp_gpu_delegate_example_matches_litert(gpu_delegate_bin, tmp_path):
    from gpu_util import require_gpu
    require_gpu()
    model = zoo.encoder_decoder(seed=4)
    mpath = tmp_path / "m.tflite"
    mpath.write_bytes(model)
    d = tflite_gpu.Interpreter(model_content=model).get_input_details()[0]
    x = np.random.default_rng(1).standard_normal(d["shape"]).astype(np.float32)
    (tmp_path / "in.bin").write_bytes(x.tobytes())
    r = subprocess.run([str(gpu_delegate_bin), str(mpath), str(tmp_path / "in.bin"),
                        str(tmp_path / "out.bin")], capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, TFLITE_GPU_SITE_PACKAGES=os.pathsep.join(sys.path)))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "delegated" in r.stdout and "precision F32" in r.stdout, r.stdout
    want = run_litert(model, [x])[0]
    got = np.frombuffer((tmp_path / "out.bin").read_bytes(), np.float32).reshape(want.shape)
    assert rel_l2(got, want) <= 1e-5


def test_cpp_gpu_delegate_example_with_bound_buffers(gpu_delegate_bin, tmp_path):
    """examples/gpu_delegate.cc with "bind": input and output in OpenCL buffers bound through the C
    calls (TfLiteGpuDelegateBindBufferToTensor, TFLGpuDelegateBindMetalBufferToTensor), buffer-handle
    outputs allowed: Invoke moves nothing between host and device, the output equals the
    host-copy run and LiteRT's, and EnsureTensorDataIsReadable's host copy equals the buffer."""
    from gpu_util import require_gpu
    require_gpu()
    src = next((d["source"] for d in tflite_gpu.list_devices() if d.get("selected")), "")
    if not src.startswith("loader:"):
        pytest.skip(f"the delegate reaches OpenCL without an ICD loader here ({src!r}); the example's host "
                    "side needs a loader to dlopen")
    model = zoo.encoder_decoder(seed=4)
    mpath = tmp_path / "m.tflite"
    mpath.write_bytes(model)
    d = tflite_gpu.Interpreter(model_content=model).get_input_details()[0]
    x = np.random.default_rng(2).standard_normal(d["shape"]).astype(np.float32)
    (tmp_path / "in.bin").write_bytes(x.tobytes())
    env = dict(os.environ, TFLITE_GPU_SITE_PACKAGES=os.pathsep.join(sys.path),
               TFLITE_GPU_OPENCL_LIBRARY=src[len("loader:"):])
    outs = {}
    for mode in ("host", "bind"):
        r = subprocess.run([str(gpu_delegate_bin), str(mpath), str(tmp_path / "in.bin"),
                            str(tmp_path / f"{mode}.bin")] + (["bind"] if mode == "bind" else []),
                           capture_output=True, text=True, env=env)
        assert r.returncode == 0, r.stdout + r.stderr
        outs[mode] = (tmp_path / f"{mode}.bin").read_bytes()
    assert "bound invoke: 0 host->device, 0 device->host transfers" in r.stdout, r.stdout
    assert "host copy matches the bound buffer" in r.stdout, r.stdout
    assert outs["bind"] == outs["host"]
    want = run_litert(model, [x])[0]
    got = np.frombuffer(outs["bind"], np.float32).reshape(want.shape)
    assert rel_l2(got, want) <= 1e-5


def test_cpp_delegation_report_equals_python(gpu_delegate_bin, tmp_path):
    """A C++ host gets the report Python's delegation_report() gives: the same counts and the same
    refused nodes (node, op, version, reason). Ops are refused through TFLITE_GPU_OP_FILTER, which
    both read."""
    from gpu_util import require_gpu
    require_gpu()
    model = zoo.encoder_decoder(seed=4)
    mpath = tmp_path / "m.tflite"
    mpath.write_bytes(model)
    pkg_parent = os.path.dirname(os.path.dirname(os.path.abspath(tflite_gpu.__file__)))  # the child runs elsewhere
    env = dict(os.environ, TFLITE_GPU_SITE_PACKAGES=os.pathsep.join(sys.path),
               TFLITE_GPU_OP_FILTER="CONCATENATION,LOGISTIC",
               PYTHONPATH=os.pathsep.join([pkg_parent, os.environ.get("PYTHONPATH", "")]))
    py = subprocess.run([sys.executable, "-c", (
        "import sys, tflite_gpu; d = tflite_gpu.GpuDelegate(tflite_gpu.GpuDelegateOptions()); "
        "it = tflite_gpu.Interpreter(model_path=sys.argv[1], experimental_delegates=[d]); "
        "r = it.delegation_report(); "
        "print(f\"delegated {r['delegated_nodes']}/{r['total_nodes']} nodes in {r['partitions']} partition(s)\"); "
        "[print(f'unsupported: node {n} {op} v{v}: {why}') for n, op, v, why in r['unsupported']]"),
        str(mpath)], capture_output=True, text=True, env=env, cwd=str(tmp_path), timeout=600)
    assert py.returncode == 0, py.stdout + py.stderr
    d = tflite_gpu.Interpreter(model_content=model).get_input_details()[0]
    (tmp_path / "in.bin").write_bytes(np.zeros(d["shape"], np.float32).tobytes())
    r = subprocess.run([str(gpu_delegate_bin), str(mpath), str(tmp_path / "in.bin"),
                        str(tmp_path / "out.bin")], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    want = py.stdout.splitlines()
    assert sum(line.startswith("unsupported: ") for line in want) >= 2, want  # the filter refused ops
    got = [line[line.index("delegated "):] if line.startswith("device: ") else line for line in r.stdout.splitlines()]
    assert got == want, (got, want)


# ------------------------------------------------------------------ the C API (seed 000's C example)
def _c_example_io(tmp_path, seed):
    model = zoo.encoder_decoder(seed=seed)
    mpath = tmp_path / "m.tflite"
    mpath.write_bytes(model)
    d = tflite_gpu.Interpreter(model_content=model).get_input_details()[0]
    x = np.random.default_rng(seed).standard_normal(d["shape"]).astype(np.float32)
    (tmp_path / "in.bin").write_bytes(x.tobytes())
    return model, mpath, x


@pytest.mark.parametrize("gpu", [False, True], ids=["cpu", "gpu_delegate"])
def test_c_example_matches_litert(example_bin, tmp_path, gpu):
    # examples/c_api_example.c is plain C11 (-std=c11 -pedantic -Werror, see examples/CMakeLists.txt).
    if gpu:
        from gpu_util import require_gpu
        require_gpu()
    model, mpath, x = _c_example_io(tmp_path, 5)
    r = subprocess.run([str(example_bin / "c_api_example"), str(mpath), str(tmp_path / "in.bin"),
                        str(tmp_path / "out.bin")] + (["--gpu"] if gpu else []), capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, TFLITE_GPU_SITE_PACKAGES=os.pathsep.join(sys.path)))
    assert r.returncode == 0, r.stdout + r.stderr
    assert ("GPU delegate" if gpu else "CPU") in r.stdout, r.stdout
    want = run_litert(model, [x])[0]
    got = np.frombuffer((tmp_path / "out.bin").read_bytes(), np.float32).reshape(want.shape)
    assert rel_l2(got, want) <= 1e-5


def test_c_example_reports_errors(example_bin, tmp_path):
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"\x10\x00\x00\x00TFL3" + b"\xff" * 40)
    r = subprocess.run([str(example_bin / "c_api_example"), str(bad), "in.bin", "out.bin"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 1 and "malformed .tflite model" in r.stderr, r.stderr
    model, mpath, x = _c_example_io(tmp_path, 6)
    (tmp_path / "short.bin").write_bytes(x.tobytes()[:-4])
    r = subprocess.run([str(example_bin / "c_api_example"), str(mpath), str(tmp_path / "short.bin"),
                        str(tmp_path / "o.bin")], capture_output=True, text=True, timeout=600)
    assert r.returncode == 1 and "TfLiteTensorCopyFromBuffer" in r.stderr and "bytes" in r.stderr, r.stderr


def _cc():
    for exe in ("cc", "gcc", "clang"):
        if shutil.which(exe):
            return shutil.which(exe)
    pytest.skip("no C compiler here: cannot build the C API test program")


def test_c_api_headers_and_signature_runner_from_c(tmp_path):
    """tests/c/c_api_signatures.c: every C API call group (signature runners, resize, quantization
    parameters, error reporter, NULL handles), compiled with `cc -std=c11 -pedantic -Werror`."""
    cc = _cc()
    inc, lib = tflite_gpu.get_include(), tflite_gpu.get_library_dir()
    if not os.path.isfile(os.path.join(inc, "tflite_gpu", "c_api.h")):
        pytest.skip(f"the installed package has no headers at {inc}")
    exe = tmp_path / "c_api_signatures"
    src = os.path.join(os.path.dirname(__file__), "c", "c_api_signatures.c")
    r = subprocess.run([cc, "-std=c11", "-Wall", "-Wextra", "-pedantic", "-Werror", src, "-I", inc, "-L", lib,
                        "-ltflite_gpu", f"-Wl,-rpath,{lib}", "-o", str(exe)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    from tflite_gpu.testing.builder import ModelBuilder
    b = ModelBuilder()
    x = b.add_input([1, 3], name="x", shape_signature=[-1, 3])
    y = b.add_input([1, 3], name="y", shape_signature=[-1, 3])
    z = b.add_tensor([1, 3], name="z", shape_signature=[-1, 3])
    b.add_op("ADD", [x, y], [z], options=dict(fused_activation_function="NONE"))
    b.mark_output(z)
    b.add_signature("serving_default", {"lhs": x, "rhs": y}, {"sum": z})
    m = tmp_path / "add.tflite"
    m.write_bytes(b.build())
    r = subprocess.run([str(exe), str(m)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "all ok, 4 errors reported as expected" in r.stdout, r.stdout + r.stderr
    assert "negative dimension" in r.stderr and "no signature 'nope'" in r.stderr, r.stderr


def test_c_api_buffer_handle_outputs_from_c(tmp_path):
    """tests/c/c_api_buffer_handles.c (C11, -pedantic -Werror): TfLiteInterpreterSetAllowBufferHandleOutput
    keeps the GPU output on the device, TfLiteTensorCopyToBuffer refuses it while stale,
    TfLiteInterpreterEnsureTensorDataIsReadable copies it; binding before the delegate is applied fails
    cleanly."""
    from gpu_util import require_gpu
    require_gpu()
    cc = _cc()
    inc, lib = tflite_gpu.get_include(), tflite_gpu.get_library_dir()
    if not os.path.isfile(os.path.join(inc, "tflite_gpu", "c_api.h")):
        pytest.skip(f"the installed package has no headers at {inc}")
    exe = tmp_path / "c_api_buffer_handles"
    src = os.path.join(os.path.dirname(__file__), "c", "c_api_buffer_handles.c")
    r = subprocess.run([cc, "-std=c11", "-Wall", "-Wextra", "-pedantic", "-Werror", src, "-I", inc, "-L", lib,
                        "-ltflite_gpu", f"-Wl,-rpath,{lib}", "-o", str(exe)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    from tflite_gpu.testing.builder import ModelBuilder
    b = ModelBuilder()
    x = b.add_input([1, 3], name="x")
    y = b.add_input([1, 3], name="y")
    z = b.add_tensor([1, 3], name="z")
    b.add_op("ADD", [x, y], [z], options=dict(fused_activation_function="NONE"))
    b.mark_output(z)
    m = tmp_path / "add.tflite"
    m.write_bytes(b.build())
    r = subprocess.run([str(exe), str(m), str(z)], capture_output=True, text=True,
                       env=dict(os.environ, TFLITE_GPU_SITE_PACKAGES=os.pathsep.join(sys.path)))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "all ok, 1 errors reported as expected" in r.stdout, r.stdout + r.stderr
    assert "kept on the GPU" in r.stderr and "after ModifyGraphWithDelegate" in r.stderr, r.stderr


def test_c_api_string_tensors_from_c(tmp_path):
    """tests/c/c_api_strings.c (C11, -pedantic -Werror): a STRING input written and a STRING output
    read in TFLite's string buffer layout (TfLiteTensorByteSize / Data / CopyFromBuffer /
    CopyToBuffer), malformed buffers refused, the strings kept across a second AllocateTensors;
    the output strings equal LiteRT's (BUILTIN_WITHOUT_DEFAULT_DELEGATES) for the same input."""
    cc = _cc()
    inc, lib = tflite_gpu.get_include(), tflite_gpu.get_library_dir()
    if not os.path.isfile(os.path.join(inc, "tflite_gpu", "c_api.h")):
        pytest.skip(f"the installed package has no headers at {inc}")
    exe = tmp_path / "c_api_strings"
    src = os.path.join(os.path.dirname(__file__), "c", "c_api_strings.c")
    r = subprocess.run([cc, "-std=c11", "-Wall", "-Wextra", "-pedantic", "-Werror", src, "-I", inc, "-L", lib,
                        "-ltflite_gpu", f"-Wl,-rpath,{lib}", "-o", str(exe)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    import numpy as np
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    from tflite_gpu.testing.builder import ModelBuilder
    b = ModelBuilder()
    x = b.add_input([2, 2], "STRING", name="words")
    flat = b.add_tensor([4], "STRING")
    b.add_op("RESHAPE", [x, b.add_const(np.array([4], np.int32))], [flat])
    y = b.add_tensor([5], "STRING", name="picked")
    b.add_op("GATHER", [flat, b.add_const(np.array([3, 0, 2, 2, 1], np.int32))], [y], options=dict(axis=0))
    b.mark_output(y)
    m = tmp_path / "strings.tflite"
    m.write_bytes(b.build())
    r = subprocess.run([str(exe), str(m)], capture_output=True, timeout=600)
    out = r.stdout.decode("utf-8")
    assert r.returncode == 0, out + r.stderr.decode("utf-8", "replace")
    assert "all ok" in out, out
    lit = Interpreter(model_path=str(m), experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    lit.allocate_tensors()
    words = np.array([b"alpha", b"", "gr\u00fc\u00df".encode(), b"z"], dtype=object).reshape(2, 2)
    lit.set_tensor(lit.get_input_details()[0]["index"], words)
    lit.invoke()
    want = lit.get_tensor(lit.get_output_details()[0]["index"])
    line = [ln for ln in out.splitlines() if ln.startswith("out: ")][0]
    assert line[len("out: "):].split("|") == [w.decode("utf-8") for w in want], (line, want)
