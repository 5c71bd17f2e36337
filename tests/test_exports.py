"""libtflite_gpu.so exports its public API only (built with -fvisibility=hidden; the public
declarations carry TFLITE_GPU_API): no subgraph, model-reader, op-kernel or OpenCL symbol is
exported, and the public headers name no internal type."""
import os
import re
import shutil
import subprocess

import pytest

import tflite_gpu

PKG = os.path.dirname(os.path.abspath(tflite_gpu.__file__))
HEADERS = os.path.join(os.path.dirname(__file__), "..", "csrc", "include", "tflite_gpu")

# Internal names: none may appear in an exported symbol or a public header.
INTERNAL = ["Subgraph", "ModelDef", "OperatorDef", "SubgraphDef", "OpContext", "OpImpl",
            "OpInfo", "OptionsView", "DelegateKernel", "SharedState", "ThreadPool", "AlignedBuffer",
            "PartitionModel", "PartitionRuntime", "ProgramCache", "GpuDelegateKernel", "kOp_", "kGpu_",
            "tflite_gpu::cl::", "tflite_gpu::gpu::", "tflite_gpu::fb::", "tflite_gpu::bindings::", "tflite_gpu::env::"]
INTERNAL_RE = re.compile("|".join(r"(?<![\w])" + re.escape(w) + ("" if w.endswith(("_", "::")) else r"(?!\w)")
                                  for w in INTERNAL))


def _library():
    for d in (PKG, os.path.join(PKG, "lib"), tflite_gpu.get_library_dir()):
        p = os.path.join(d, "libtflite_gpu.so")
        if os.path.isfile(p):
            return p
    pytest.fail(f"libtflite_gpu.so not found next to the package ({PKG}) or in its lib/ folder")


def _exported():
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("nm (binutils) is not installed here: cannot list the library's exported symbols")
    r = subprocess.run([nm, "-D", "--defined-only", "--demangle", _library()], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    syms = []
    for line in r.stdout.splitlines():
        parts = line.split(None, 2)
        if len(parts) == 3:
            syms.append(parts[2])
    assert len(syms) > 50, r.stdout[:2000]
    return syms


def _public_identifiers():
    words = set()
    for f in os.listdir(HEADERS):
        if f.endswith(".h"):
            with open(os.path.join(HEADERS, f)) as fh:
                words |= set(re.findall(r"[A-Za-z_]\w*", fh.read()))
    return words


def test_no_internal_symbol_is_exported():
    syms = _exported()
    bad = [s for s in syms if INTERNAL_RE.search(s)]
    assert not bad, f"{len(bad)} internal symbols exported, e.g. {bad[:10]}"


def test_every_exported_name_is_declared_in_a_public_header():
    public = _public_identifiers()
    bad = []
    for s in syms_without_std(_exported()):
        if s.startswith(("TfLite", "TFLGpu")):
            assert re.match(r"^\w+$", s), s
            if s not in public:
                bad.append(s)
            continue
        for name in re.findall(r"tflite_gpu::((?:\w+::)*\w+)", s):
            if any(part not in public for part in name.split("::")):
                bad.append(s)
                break
    assert not bad, f"exported but not public: {bad[:10]}"
    # The C API and the GPU delegate's C calls are all there.
    syms = set(_exported())
    for f in ("TfLiteModelCreate", "TfLiteInterpreterCreate", "TfLiteInterpreterInvoke", "TfLiteTensorCopyToBuffer",
              "TfLiteSignatureRunnerInvoke", "TfLiteGpuDelegateV2Create", "TFLGpuDelegateDelete"):
        assert f in syms, f"{f} is not exported"
    assert any(s.startswith("tflite_gpu::Interpreter::Invoke(") for s in syms)


def syms_without_std(syms):
    """Drop the weak instantiations of standard templates over standard types (std::string vectors
    and the like) that every C++ library exports; any of our types in them is still checked."""
    out = []
    for s in syms:
        if s.startswith(("std::", "void std::", "__gnu_cxx::", "std::__cxx11::")) or " std::" in s.split("(")[0]:
            if "tflite_gpu::" not in s:
                continue
        out.append(s)
    return out


def test_public_headers_name_no_internal_type():
    for f in sorted(os.listdir(HEADERS)):
        with open(os.path.join(HEADERS, f)) as fh:
            text = fh.read()
        m = INTERNAL_RE.search(text)
        assert not m, f"csrc/include/tflite_gpu/{f} names the internal {m.group(0)}"
        for inc in re.findall(r'#include "([^"]+)"', text):
            assert inc.startswith("tflite_gpu/"), f"{f} includes the internal header {inc}"


def test_binding_uses_only_the_public_headers():
    bdir = os.path.join(os.path.dirname(__file__), "..", "csrc", "bindings")
    for f in sorted(os.listdir(bdir)):
        with open(os.path.join(bdir, f)) as fh:
            for inc in re.findall(r'#include "([^"]+)"', fh.read()):
                assert inc.startswith("tflite_gpu/") or os.path.isfile(os.path.join(bdir, inc)), \
                    f"csrc/bindings/{f} includes the internal header {inc}"
