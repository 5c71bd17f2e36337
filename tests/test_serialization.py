"""Serialization of the prepared GPU model (issue 10): ENABLE_SERIALIZATION + serialization_dir +
model_token. A warm start must load the stored partition (cache_info()['serialization'] hits,
no program built from source) and compute what the cold start computed; every damaged or foreign
entry is rebuilt with one warning; the key follows the model bytes, the options and the token.
References: numpy for the small builder model, LiteRT (BUILTIN_WITHOUT_DEFAULT_DELEGATES) for the
zoo models. Runs on PoCL here."""
import hashlib
import logging
import os
import stat
import subprocess
import sys
import tempfile
import textwrap
import time

import numpy as np
import pytest

import tflite_gpu
from gpu_util import require_gpu
from harness import rel_l2
from misuse_util import HERE
from test_models import GPU_MODELS
from tflite_gpu import _core
from tflite_gpu.testing import zoo
from tflite_gpu.testing.builder import ModelBuilder

FLAGS = tflite_gpu.delegate.ExperimentalFlags
WARN = "serialized GPU model"


# ---------------------------------------------------------------------------------------------
# SHA-256 (csrc/runtime/sha256.cc) against hashlib, SHA-NI and portable code paths.

@pytest.mark.parametrize("n", [0, 1, 55, 56, 63, 64, 65, 119, 120, 1000, 1 << 20])
def test_sha256_matches_hashlib(n):
    data = np.random.default_rng(n).integers(0, 256, n, dtype=np.uint8).tobytes()
    want = hashlib.sha256(data).hexdigest()
    assert _core._sha256(data, False) == want  # portable
    assert _core._sha256(data) == want         # SHA-NI where the CPU has it
    if not _core._sha256_uses_hardware():
        print("note: this CPU has no SHA extensions; only the portable SHA-256 ran")


# ---------------------------------------------------------------------------------------------
# Helpers

def small_model(bias=None):
    """y = softmax(x + bias) over [1, 4, 4, 8]; `bias` is a constant (a weight) in the model bytes."""
    if bias is None:
        bias = np.linspace(-1, 1, 8, dtype=np.float32).reshape(1, 1, 1, 8)
    b = ModelBuilder()
    x = b.add_input([1, 4, 4, 8], name="x")
    c = b.add_const(np.asarray(bias, np.float32), name="bias")
    s = b.add_tensor([1, 4, 4, 8])
    z = b.add_tensor([1, 4, 4, 8])
    b.add_op("ADD", [x, c], [s], options=dict(fused_activation_function="NONE"))
    b.add_op("SOFTMAX", [s], [z], options=dict(beta=1.0))
    b.mark_output(z)
    return b.build(), bias


def small_expected(x, bias):
    s = (x + bias).astype(np.float64)
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def small_fp16_bound(x, bias):
    """fp16 storage's bound on small_model: 2 x the rel-L2 of its numpy fp16 emulation (input, bias,
    the ADD's output and the SOFTMAX's output rounded to half; fp16_emulation.py) + 1e-5."""
    from fp16_emulation import emulation_bound, half
    want = small_expected(x, bias)
    return emulation_bound(half(small_expected(half(half(x) + half(bias)), 0.0)), want)


def options(d, token="tok", **kw):
    kw.setdefault("experimental_flags", FLAGS.ENABLE_QUANT | FLAGS.ENABLE_SERIALIZATION)
    return tflite_gpu.GpuDelegateOptions(serialization_dir=None if d is None else str(d), model_token=token, **kw)


def run(model, d, feeds, token="tok", **kw):
    """One fresh delegate + interpreter; returns (outputs, cache_info)."""
    dlg = tflite_gpu.GpuDelegate(options(d, token, **kw))
    it = tflite_gpu.Interpreter(model_content=model, experimental_delegates=[dlg])
    it.allocate_tensors()
    rep = it.delegation_report()
    assert rep["delegated_nodes"] == rep["total_nodes"], rep
    for det, x in zip(it.get_input_details(), feeds):
        it.set_tensor(det["index"], x)
    it.invoke()
    return [it.get_tensor(o["index"]) for o in it.get_output_details()], dlg.cache_info()


def small_run(d, token="tok", bias=None, **kw):
    model, bias = small_model(bias)
    x = np.random.default_rng(0).standard_normal((1, 4, 4, 8)).astype(np.float32)
    outs, info = run(model, d, [x], token, **kw)
    if kw.get("is_precision_loss_allowed"):
        assert rel_l2(outs[0], small_expected(x, bias)) <= small_fp16_bound(x, bias)
    else:
        np.testing.assert_allclose(outs[0], small_expected(x, bias), rtol=1e-4, atol=1e-6)
    return info


def entries(d):
    return sorted(f for f in os.listdir(d) if f.endswith(".tfgmodel"))


def warnings_of(caplog):
    return [r.getMessage() for r in caplog.records if WARN in r.getMessage()]


def assert_warm(info, n=1):
    s = info["serialization"]
    assert s["enabled"] and s["hits"] == n and s["misses"] == 0 and s["writes"] == 0 and s["rejected"] == 0, info
    # Programs came from the entry's binaries: nothing built from source, no .clbin read.
    assert info["source_builds"] == 0 and info["disk_hits"] == 0, info


def assert_rebuilt(info):
    s = info["serialization"]
    assert s["hits"] == 0 and s["misses"] == 1 and s["writes"] == 1, info


@pytest.fixture()
def warm(tmp_path):
    require_gpu()
    d = tmp_path / "a" / "ser"
    info = small_run(d)
    s = info["serialization"]
    assert s["enabled"] and s["misses"] == 1 and s["writes"] == 1 and s["hits"] == 0, info
    assert len(entries(d)) == 1
    return d


# ---------------------------------------------------------------------------------------------
# Cold / warm

def _litert(model, feeds):
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    it = Interpreter(model_content=model, num_threads=1,
                     experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    it.allocate_tensors()
    for det, x in zip(it.get_input_details(), feeds):
        it.set_tensor(det["index"], x)
    it.invoke()
    return [it.get_tensor(o["index"]) for o in it.get_output_details()]


# test_models.py's GPU models, byte for byte: the same kernels, so the driver's own kernel cache
# (PoCL's) compiles them once for both files and CI pays the cold start only once.
MODELS = {k: GPU_MODELS[k] for k in ("mobilenet_v1", "mobilenet_v2", "encoder_decoder")}


@pytest.mark.parametrize("precision", ["F32", "F16"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_cold_and_warm_agree(tmp_path, name, precision):
    """The warm start loads the entry (no codegen, no compile) and gives the cold start's outputs
    bit for bit; both are within the GPU bounds of test_models.py of LiteRT builtin (F32: 1e-4
    rel-L2, fp16 storage: 2 x the rel-L2 of the net's fp16 emulation + 1e-5)."""
    require_gpu()
    model = MODELS[name]()
    from ai_edge_litert.interpreter import Interpreter
    rng = np.random.default_rng(3)
    feeds = [rng.standard_normal(d["shape"]).astype(d["dtype"]) for d in
             Interpreter(model_content=model).get_input_details()]
    ref = _litert(model, feeds)
    kw = dict(is_precision_loss_allowed=precision != "F32")
    cold, info = run(model, tmp_path, feeds, **kw)
    assert info["serialization"]["writes"] == 1, info
    warm, info = run(model, tmp_path, feeds, **kw)
    assert_warm(info)
    tols = [1e-4] * len(ref)
    if precision != "F32":
        from fp16_emulation import emulation_bound, fp16_storage_model, overflowing_tensors, round_feeds
        from fp16_emulation import run_litert as litert_builtin
        from test_models import FP16_NETS
        fn, kw = FP16_NETS[name]
        emul = litert_builtin(fp16_storage_model(zoo.builder_of(fn, **kw), keep=overflowing_tensors(model, feeds)),
                              round_feeds(feeds))
        tols = [emulation_bound(e, r) for e, r in zip(emul, ref)]
    for c, w, r, tol in zip(cold, warm, ref, tols):
        np.testing.assert_array_equal(c, w)
        assert rel_l2(c, r) <= tol, (name, precision, rel_l2(c, r), tol)


def test_sustained_speed_tuning_is_stored(tmp_path):
    """SUSTAINED_SPEED tunes at the cold start; the warm start loads the tuned sizes (no tuning:
    the entry says it was tuned) and computes the same."""
    require_gpu()
    pref = tflite_gpu.delegate.InferencePreference.SUSTAINED_SPEED
    a = small_run(tmp_path, inference_preference=pref)
    assert a["serialization"]["writes"] == 1, a
    b = small_run(tmp_path, inference_preference=pref)
    assert_warm(b)
    # the preference is part of the key: the default preference misses
    assert_rebuilt(small_run(tmp_path))


# ---------------------------------------------------------------------------------------------
# Files: modes, temporaries

def test_modes_and_no_temporaries(warm, tmp_path):
    for p in (tmp_path / "a", warm):
        assert stat.S_IMODE(os.stat(p).st_mode) == 0o700, (p, oct(os.stat(p).st_mode))
    for f in os.listdir(warm):
        assert ".tmp." not in f, f"temporary file left behind: {f}"
        assert stat.S_IMODE(os.stat(warm / f).st_mode) == 0o600, f
    with open(warm / entries(warm)[0], "rb") as fh:
        head = fh.read(56)
    assert head[:8] == b"TFGMODEL"
    payload_len = int.from_bytes(head[16:24], "little")
    assert os.path.getsize(warm / entries(warm)[0]) == 56 + payload_len
    assert_warm(small_run(warm))


# ---------------------------------------------------------------------------------------------
# Tampering: every kind is rebuilt with one warning and right outputs, and rewritten.

def _resign(b):
    """A payload edit with a valid checksum (as only someone who can write the 0700 dir could make)."""
    return b[:24] + hashlib.sha256(b[56:]).digest() + b[56:]


def _program_index_at(b, kernel):
    """(byte offset in the file of kernel record `kernel`'s program index, number of programs),
    walking the payload as EncodeSerializedPartition writes it."""
    pay, p = b[56:], 0

    def take(n):
        nonlocal p
        p += n
        return int.from_bytes(pay[p - n:p], "little")
    take(take(8))                                          # key
    take(4), take(1), take(1)                              # precision, sentinels, tuned
    take(4 * take(8))                                      # nodes
    nt = take(8)
    take(24 * nt), take(nt)                                # tensors, their storage flags
    for _ in range(take(8)):                               # constants
        take(1), take(4 * take(8))
    nprog = take(8)
    for _ in range(nprog):                                 # programs: source, binary
        take(take(8)), take(take(8))
    for k in range(take(8)):
        take(take(8))                                      # name
        if k == kernel:
            return 56 + p, nprog
        take(4), take(48), take(1), take(8 * take(8)), take(4), take(take(8)), take(take(8))
    raise AssertionError("no such kernel record")


def _set_program_index(b, kernel, prog):
    off, _ = _program_index_at(b, kernel)
    return _resign(b[:off] + prog.to_bytes(4, "little") + b[off + 4:])


def test_direct_boundaries_are_empty_entries(warm):
    """The small model's input (read by the ADD through READ_) and output (written by SOFTMAX) are
    direct boundaries: their entries (kernels 0 and 3) carry no program; the ADD's (kernel 1) names
    one of the entry's programs."""
    b = (warm / entries(warm)[0]).read_bytes()
    idx = [int.from_bytes(b[o:o + 4], "little") for o, _ in (_program_index_at(b, k) for k in range(4))]
    nprog = _program_index_at(b, 0)[1]
    assert idx[0] == idx[3] == 0xFFFFFFFF and idx[1] < nprog and idx[2] < nprog, (idx, nprog)


TAMPER = {
    "truncate": (lambda b: b[:len(b) // 2], "length mismatch"),
    "truncate_header": (lambda b: b[:20], "truncated"),
    "flip": (lambda b: b[:len(b) - 100] + bytes([b[len(b) - 100] ^ 0x10]) + b[len(b) - 99:], "checksum"),
    "bad_magic": (lambda b: b"TFGMODEX" + b[8:], "bad magic"),
    "wrong_version": (lambda b: b[:8] + (99).to_bytes(4, "little") + b[12:], "format version 99"),
    "extended": (lambda b: b + b"\0" * 16, "length mismatch"),
    "empty": (lambda b: b"", "truncated"),
    # a huge count behind a valid checksum: refused before any allocation
    "huge_count": (lambda b: _resign(b[:56] + (2**62).to_bytes(8, "little") + b[64:]), "exceeds the bytes left"),
    # the last field is the last buffer slot's size: shrunk behind a valid checksum, it is refused
    # (kernels would write past the buffer)
    "small_slot": (lambda b: _resign(b[:-8] + (4).to_bytes(8, "little")), "buffer slot too small"),
    "trailing": (lambda b: _resign(b[:16] + (len(b) - 56 + 4).to_bytes(8, "little") + b[24:] + b"\0\0\0\0"),
                 "trailing bytes"),
    # kernel 1 (the ADD: entries 0 and 3 are the boundary conversions, direct or not) made an empty
    # entry, which only a direct boundary's place may hold
    "empty_model_kernel": (lambda b: _set_program_index(b, 1, 0xFFFFFFFF), "an empty kernel is no boundary entry"),
}


@pytest.mark.parametrize("kind", sorted(TAMPER))
def test_tampered_entry_is_rebuilt(warm, kind, caplog):
    f = warm / entries(warm)[0]
    edit, why = TAMPER[kind]
    f.write_bytes(edit(f.read_bytes()))
    os.chmod(f, 0o600)
    with caplog.at_level(logging.WARNING, logger="tflite_gpu"):
        info = small_run(warm)
    assert_rebuilt(info)
    s = info["serialization"]
    assert s["rejected"] == 1 and why in s["reject_reasons"][0], s
    assert len(warnings_of(caplog)) == 1, warnings_of(caplog)
    assert_warm(small_run(warm))  # rewritten


def test_swapped_entry_is_rebuilt(warm, caplog):
    """Another key's valid file under this key's name: the stored key is compared."""
    small_run(warm, token="other")
    files = entries(warm)
    assert len(files) == 2
    blobs = {f: (warm / f).read_bytes() for f in files}
    (warm / files[0]).write_bytes(blobs[files[1]])
    (warm / files[1]).write_bytes(blobs[files[0]])
    with caplog.at_level(logging.WARNING, logger="tflite_gpu"):
        info = small_run(warm)
    assert_rebuilt(info)
    assert "another key" in info["serialization"]["reject_reasons"][0], info
    assert len(warnings_of(caplog)) == 1


def test_directory_in_place_of_the_file(warm, caplog):
    f = warm / entries(warm)[0]
    os.remove(f)
    os.mkdir(f)
    with caplog.at_level(logging.WARNING, logger="tflite_gpu"):
        info = small_run(warm)
    s = info["serialization"]
    # rebuilt; the rename over a directory fails, so the entry cannot be rewritten: counted
    assert s["hits"] == 0 and s["rejected"] == 1 and "directory" in s["reject_reasons"][0], s
    assert s["write_errors"] == 1, s
    assert len(warnings_of(caplog)) == 1, warnings_of(caplog)  # the rejection (the failed save is counted)


def test_group_or_world_writable_file_is_rebuilt(warm, caplog):
    f = warm / entries(warm)[0]
    os.chmod(f, 0o666)
    with caplog.at_level(logging.WARNING, logger="tflite_gpu"):
        info = small_run(warm)
    assert_rebuilt(info)
    assert "writable by others" in info["serialization"]["reject_reasons"][0], info
    assert len(warnings_of(caplog)) == 1
    assert stat.S_IMODE(os.stat(f).st_mode) == 0o600  # the rewrite is private again


def test_symlink_in_place_of_the_file(warm, tmp_path):
    f = warm / entries(warm)[0]
    target = tmp_path / "elsewhere.bin"
    target.write_bytes(f.read_bytes())
    os.remove(f)
    os.symlink(target, f)
    info = small_run(warm)
    assert_rebuilt(info)
    assert "symbolic link" in info["serialization"]["reject_reasons"][0], info


def test_unreadable_file_is_rebuilt(warm, caplog):
    if os.geteuid() == 0:
        pytest.skip("root reads a mode-000 file anyway, so an unreadable file cannot be made here; "
                    "run as a normal user")
    f = warm / entries(warm)[0]
    os.chmod(f, 0)
    with caplog.at_level(logging.WARNING, logger="tflite_gpu"):
        info = small_run(warm)
    assert_rebuilt(info)
    assert len(warnings_of(caplog)) == 1


def test_foreign_owner_file_is_rebuilt(warm):
    if os.geteuid() != 0:
        pytest.skip("needs root to give a file to another uid (chown)")
    os.chown(warm / entries(warm)[0], 65534, 65534)
    info = small_run(warm)
    assert info["serialization"]["rejected"] == 1 and "owned by uid 65534" in info["serialization"]["reject_reasons"][0]


def test_world_writable_dir_is_not_used(warm, caplog):
    os.chmod(warm, 0o777)
    with caplog.at_level(logging.WARNING, logger="tflite_gpu"):
        info = small_run(warm)
    s = info["serialization"]
    assert not s["enabled"] and "writable by others" in s["disabled_reason"] and s["hits"] == 0, info
    assert len([m for m in (r.getMessage() for r in caplog.records) if "not used" in m]) == 1


# ---------------------------------------------------------------------------------------------
# Key changes

def test_key_changes_rebuild(warm):
    # a weight edited in the model bytes (same shapes, same token): never the stale weights
    bias = np.full((1, 1, 1, 8), 0.5, np.float32)
    assert_rebuilt(small_run(warm, bias=bias))
    assert_rebuilt(small_run(warm, token="tok2"))
    assert_rebuilt(small_run(warm, is_precision_loss_allowed=True))
    assert_rebuilt(small_run(warm, op_filter=["MUL"]))
    assert len(entries(warm)) == 5
    # and each is warm afterwards
    assert_warm(small_run(warm, bias=bias))
    assert_warm(small_run(warm))


def test_flag_without_token_or_dir_warns_once(tmp_path, caplog):
    require_gpu()
    with caplog.at_level(logging.WARNING, logger="tflite_gpu"):
        info = small_run(tmp_path, token=None)
    s = info["serialization"]
    assert not s["enabled"] and "model_token" in s["disabled_reason"], s
    assert entries(tmp_path) == []
    msgs = [r.getMessage() for r in caplog.records if "ENABLE_SERIALIZATION" in r.getMessage()]
    assert len(msgs) == 1, msgs
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="tflite_gpu"):
        info = small_run(None, token="tok")
    assert "serialization_dir" in info["serialization"]["disabled_reason"], info
    # without the flag: nothing said, nothing stored
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="tflite_gpu"):
        info = small_run(tmp_path / "x", experimental_flags=FLAGS.ENABLE_QUANT)
    assert not info["serialization"]["enabled"] and info["serialization"]["disabled_reason"] == ""
    assert not [r for r in caplog.records if "serializ" in r.getMessage()]


def test_load_delegate_keys_reach_serialization(tmp_path):
    require_gpu()
    model, bias = small_model()
    opts = tflite_gpu.GpuDelegateOptions.from_external_options({
        "delegate_serialize_dir": str(tmp_path), "delegate_serialize_token": "t",
        "experimental_flags": str(int(FLAGS.ENABLE_QUANT | FLAGS.ENABLE_SERIALIZATION))})
    for expect_hit in (False, True):
        dlg = tflite_gpu.GpuDelegate(opts)
        it = tflite_gpu.Interpreter(model_content=model, experimental_delegates=[dlg])
        it.allocate_tensors()
        s = dlg.cache_info()["serialization"]
        assert s["hits"] == int(expect_hit) and s["writes"] == int(not expect_hit), s


def test_benchmark_tool_flags_reach_serialization(tmp_path):
    """--delegate_serialize_dir / --delegate_serialize_token of the benchmark tool (gpu_options of
    tflite_gpu.tools): the second interpreter loads the partition."""
    require_gpu()
    from tflite_gpu.tools import _backend
    from tflite_gpu.tools.flags import delegate_flags, gpu_options_from_flags, parse_flags
    model, bias = small_model()
    fl = parse_flags(["--use_gpu", f"--delegate_serialize_dir={tmp_path}", "--delegate_serialize_token=bt"],
                     delegate_flags())
    for expect_hit in (False, True):
        dlg = _backend._make_gpu_delegate(gpu_options_from_flags(fl))
        it = tflite_gpu.Interpreter(model_content=model, experimental_delegates=[dlg])
        it.allocate_tensors()
        s = dlg.cache_info()["serialization"]
        assert s["hits"] == int(expect_hit) and s["writes"] == int(not expect_hit), s
        x = np.ones((1, 4, 4, 8), np.float32)
        it.set_tensor(0, x)
        it.invoke()
        # the tool's default allows precision loss (TFLite's): the fp16 emulation bound
        assert rel_l2(it.get_tensor(it.get_output_details()[0]["index"]), small_expected(x, bias)) <= \
            small_fp16_bound(x, bias)
    # gpu_options without enable_quant keep ENABLE_QUANT on next to ENABLE_SERIALIZATION
    d = _backend._make_gpu_delegate({"serialization_dir": str(tmp_path), "model_token": "bt"})
    assert d.options.experimental_flags == FLAGS.ENABLE_QUANT | FLAGS.ENABLE_SERIALIZATION


# ---------------------------------------------------------------------------------------------
# Unwritable directories

def _make_read_only(d):
    """chmod 0500 for a normal user; root bypasses modes, so then the immutable attribute
    (chattr +i). Returns the undo function, or skips with the reason."""
    if os.geteuid() != 0:
        os.chmod(d, 0o500)
        return lambda: os.chmod(d, 0o700)
    import shutil
    if shutil.which("chattr") is None:
        pytest.skip("running as root (directory modes do not stop root) and chattr is not installed")
    r = subprocess.run(["chattr", "+i", str(d)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"running as root and chattr +i failed ({r.stderr.strip()}): no read-only directory here")
    return lambda: subprocess.run(["chattr", "-i", str(d)], check=True)


def test_read_only_dir(warm, caplog):
    """A directory we cannot write: stored entries still load, new ones are built and run right,
    one warning per delegate, nothing left behind."""
    undo = _make_read_only(warm)
    try:
        assert_warm(small_run(warm))  # reading still works
        with caplog.at_level(logging.WARNING, logger="tflite_gpu"):
            info = small_run(warm, token="new")
            info2 = small_run(warm, token="new2")
        s = info["serialization"]
        assert s["misses"] == 1 and s["writes"] == 0 and s["write_errors"] == 1, s
        assert info2["serialization"]["write_errors"] == 1
        saves = [m for m in warnings_of(caplog) if "could not save" in m]
        assert len(saves) == 2 and "cannot create a file there" in saves[0], saves
    finally:
        undo()
    assert len(entries(warm)) == 1 and not [f for f in os.listdir(warm) if ".tmp." in f]


# ---------------------------------------------------------------------------------------------
# Concurrency

CONCURRENT = """
import sys, time
sys.path.insert(0, {here!r})
from test_serialization import small_run
info = small_run({d!r})
print("SER", info["serialization"])
"""


def _child_env():
    # The tests' folder and the tflite_gpu being tested (absolute: children run in another cwd).
    pkg_parent = os.path.dirname(os.path.dirname(os.path.abspath(tflite_gpu.__file__)))
    return dict(os.environ, PYTHONPATH=os.pathsep.join([HERE, pkg_parent, os.environ.get("PYTHONPATH", "")]))


def _child(code, timeout=240):
    e = _child_env()
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                       timeout=timeout, env=e, cwd=tempfile.gettempdir())
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    return p.stdout + p.stderr


def test_two_processes_prepare_at_once(tmp_path):
    require_gpu()
    d = tmp_path / "shared"
    e = _child_env()
    code = textwrap.dedent(CONCURRENT.format(here=HERE, d=str(d)))
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=e, cwd=tempfile.gettempdir()) for _ in range(2)]
    try:
        outs = [p.communicate(timeout=240) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0 and "SER" in out, out[-2000:] + err[-3000:]
    assert len(entries(d)) == 1 and not [f for f in os.listdir(d) if ".tmp." in f], os.listdir(d)
    assert_warm(small_run(d))  # the surviving file is whole and valid


# ---------------------------------------------------------------------------------------------
# The C API: TfLiteGpuDelegateOptionsV2's experimental_flags / serialization_dir / model_token

C_API = """
import ctypes, os, sys
import numpy as np
sys.path.insert(0, {here!r})
import tflite_gpu
from test_serialization import small_model, small_expected
pkg = os.path.dirname(os.path.abspath(tflite_gpu.__file__))
lib = next(p for p in (os.path.join(d, "libtflite_gpu.so") for d in (pkg, os.path.join(pkg, "lib"),
           tflite_gpu.get_library_dir())) if os.path.isfile(p))
L = ctypes.CDLL(lib)
class Opts(ctypes.Structure):
    _fields_ = [("is_precision_loss_allowed", ctypes.c_int32), ("inference_preference", ctypes.c_int32),
                ("inference_priority1", ctypes.c_int32), ("inference_priority2", ctypes.c_int32),
                ("inference_priority3", ctypes.c_int32), ("experimental_flags", ctypes.c_int64),
                ("max_delegated_partitions", ctypes.c_int32), ("serialization_dir", ctypes.c_char_p),
                ("model_token", ctypes.c_char_p), ("wait_type", ctypes.c_int32), ("device", ctypes.c_char_p),
                ("op_filter", ctypes.c_char_p), ("cl_context", ctypes.c_void_p), ("cl_queue", ctypes.c_void_p),
                ("enable_profiling", ctypes.c_int32)]
P = ctypes.c_void_p
L.TfLiteGpuDelegateOptionsV2Default.restype = Opts
L.TfLiteGpuDelegateV2Create.restype = P
L.TfLiteGpuDelegateV2Create.argtypes = [ctypes.POINTER(Opts)]
L.TfLiteGpuDelegateV2Delete.argtypes = [P]
L.TfLiteModelCreate.restype = P
L.TfLiteModelCreate.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
L.TfLiteModelDelete.argtypes = [P]
L.TfLiteInterpreterOptionsCreate.restype = P
L.TfLiteInterpreterOptionsAddDelegate.argtypes = [P, P]
L.TfLiteInterpreterOptionsDelete.argtypes = [P]
L.TfLiteInterpreterCreate.restype = P
L.TfLiteInterpreterCreate.argtypes = [P, P]
L.TfLiteInterpreterDelete.argtypes = [P]
L.TfLiteInterpreterAllocateTensors.argtypes = [P]
L.TfLiteInterpreterInvoke.argtypes = [P]
L.TfLiteInterpreterGetInputTensor.restype = P
L.TfLiteInterpreterGetInputTensor.argtypes = [P, ctypes.c_int32]
L.TfLiteInterpreterGetOutputTensor.restype = P
L.TfLiteInterpreterGetOutputTensor.argtypes = [P, ctypes.c_int32]
L.TfLiteTensorCopyFromBuffer.argtypes = [P, P, ctypes.c_size_t]
L.TfLiteTensorCopyToBuffer.argtypes = [P, P, ctypes.c_size_t]
model, bias = small_model()
d = {d!r}
x = np.random.default_rng(1).standard_normal((1, 4, 4, 8)).astype(np.float32)
def once():
    o = L.TfLiteGpuDelegateOptionsV2Default()
    o.experimental_flags |= 8  # TFLITE_GPU_EXPERIMENTAL_FLAGS_ENABLE_SERIALIZATION
    o.serialization_dir = d.encode()
    o.model_token = b"c-api"
    dlg = L.TfLiteGpuDelegateV2Create(ctypes.byref(o))
    m = L.TfLiteModelCreate(model, len(model))
    io = L.TfLiteInterpreterOptionsCreate()
    L.TfLiteInterpreterOptionsAddDelegate(io, dlg)
    it = L.TfLiteInterpreterCreate(m, io)
    assert it, "TfLiteInterpreterCreate failed"
    L.TfLiteInterpreterOptionsDelete(io)
    assert L.TfLiteInterpreterAllocateTensors(it) == 0
    assert L.TfLiteTensorCopyFromBuffer(L.TfLiteInterpreterGetInputTensor(it, 0), x.ctypes.data, x.nbytes) == 0
    assert L.TfLiteInterpreterInvoke(it) == 0
    y = np.empty_like(x)
    assert L.TfLiteTensorCopyToBuffer(L.TfLiteInterpreterGetOutputTensor(it, 0), y.ctypes.data, y.nbytes) == 0
    np.testing.assert_allclose(y, small_expected(x, bias), rtol=1e-4, atol=1e-6)
    L.TfLiteInterpreterDelete(it)
    L.TfLiteModelDelete(m)
    L.TfLiteGpuDelegateV2Delete(dlg)
    files = sorted(f for f in os.listdir(d) if f.endswith(".tfgmodel"))
    assert len(files) == 1, files
    return os.stat(os.path.join(d, files[0])).st_ino
first = once()
second = once()
assert first == second, "the warm start rewrote the entry instead of loading it"
print("C_API_OK")
"""


def test_c_api_options_reach_serialization(tmp_path):
    """Through the C API (ctypes, in a child): the first run writes one entry, the second loads it
    (an entry is only ever replaced by rename, which would change its inode)."""
    require_gpu()
    out = _child(C_API.format(here=HERE, d=str(tmp_path / "c")))
    assert "C_API_OK" in out, out


# ---------------------------------------------------------------------------------------------
# A full directory: the entry's write fails part-way. The delegate works without saving, says so
# once, and leaves no temporary file behind (nor a partial entry).

FULL_DIR = """
import json, logging, os, resource, signal, sys
sys.path.insert(0, {here!r})
from test_serialization import big_run
msgs = []
class H(logging.Handler):
    def emit(self, r):
        msgs.append(r.getMessage())
logging.getLogger("tflite_gpu").addHandler(H())
d, mode = sys.argv[1], sys.argv[2]
if mode == "rlimit":
    # Files may grow to half the entry's size: the write stops part-way with EFBIG (SIGXFSZ
    # ignored, so write() reports the error instead of the signal killing us).
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    limit = int(sys.argv[3])
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
info = big_run(d)  # asserts the outputs against numpy
print("RESULT", json.dumps(dict(info=info["serialization"], msgs=msgs, files=os.listdir(d))))
"""


def big_run(d):
    """small_run's model with a 2 MiB constant: the entry (~2 MiB) is much larger than any file the
    driver writes while compiling (PoCL's LLVM writes its own files, which the limit would cut
    too), so a limit at half the entry's size meets only our write."""
    shape = [1, 128, 128, 32]
    bias = np.random.default_rng(7).standard_normal(shape).astype(np.float32)
    b = ModelBuilder()
    x = b.add_input(shape, name="x")
    c = b.add_const(bias, name="bias")
    s_, z = b.add_tensor(shape), b.add_tensor(shape)
    b.add_op("ADD", [x, c], [s_], options=dict(fused_activation_function="NONE"))
    b.add_op("SOFTMAX", [s_], [z], options=dict(beta=1.0))
    b.mark_output(z)
    xv = np.random.default_rng(8).standard_normal(shape).astype(np.float32)
    outs, info = run(b.build(), d, [xv])
    np.testing.assert_allclose(outs[0], small_expected(xv, bias), rtol=1e-4, atol=1e-6)
    return info


def _full_dir_child(d, mode, *args, prefix=()):
    e = _child_env()
    code = textwrap.dedent(FULL_DIR.format(here=HERE))
    p = subprocess.run(list(prefix) + [sys.executable, "-c", code, str(d), mode] + [str(a) for a in args],
                       capture_output=True, text=True, timeout=240, env=e, cwd=tempfile.gettempdir())
    return p


def _check_full_dir_result(p, why):
    import json
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    line = next(ln for ln in p.stdout.splitlines() if ln.startswith("RESULT "))
    r = json.loads(line[len("RESULT "):])
    s = r["info"]
    assert s["enabled"] and s["misses"] == 1 and s["writes"] == 0 and s["write_errors"] == 1, s
    saves = [m for m in r["msgs"] if WARN in m]
    assert len(saves) == 1 and "could not save" in saves[0] and why in saves[0], r["msgs"]
    assert not [f for f in r["files"] if ".tmp." in f or f.endswith(".tfgmodel")], r["files"]
    return r


def test_full_dir_write_fails_mid_file(tmp_path):
    """RLIMIT_FSIZE at half the entry's size: write() fails part-way (EFBIG), as on a full disk
    (big_run says why the limit meets only our write; .clbin writes of the program cache in the
    same directory fail the same way, silently)."""
    require_gpu()
    ref = tmp_path / "ref"
    big_run(ref)
    size = os.path.getsize(ref / entries(ref)[0])
    d = tmp_path / "full"
    r = _check_full_dir_result(_full_dir_child(d, "rlimit", size // 2), "File too large")
    # Nothing usable was left, so the next start (no limit) builds, saves, and then loads it.
    assert_rebuilt(big_run(d))
    assert_warm(big_run(d))
    assert not [f for f in os.listdir(d) if ".tmp." in f], (r, os.listdir(d))


def test_full_filesystem(tmp_path):
    """A real full file system (ENOSPC): a tmpfs smaller than the entry, mounted in a private mount
    namespace of the child (root and unshare needed; skipped otherwise with the reason)."""
    require_gpu()
    import shutil
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("needs root and unshare(1) to mount a small tmpfs in a private mount namespace "
                    "(test_full_dir_write_fails_mid_file covers the failing write without them)")
    probe = subprocess.run(["unshare", "-m", "sh", "-c", f"mount -t tmpfs -o size=64k tmpfs {tmp_path}"],
                           capture_output=True, text=True, timeout=60)
    if probe.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({probe.stderr.strip()})")
    ref = tmp_path / "ref"
    big_run(ref)
    size = os.path.getsize(ref / entries(ref)[0])
    # tmpfs counts whole pages: room for about half the entry, at least one page.
    room = max(4096, (size // 2) // 4096 * 4096)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    d = mnt / "ser"
    p = _full_dir_child(d, "tmpfs", prefix=[
        "unshare", "-m", "sh", "-c", f'mount -t tmpfs -o size={room},mode=0700 tmpfs "{mnt}" && exec "$@"', "sh"])
    _check_full_dir_result(p, "No space left on device")
    assert os.listdir(mnt) == []  # the tmpfs lived in the child's namespace only


def test_failed_rename_leaves_no_temporary(warm):
    """Another write error (rename over a directory fails): the unique temporary name is removed."""
    f = warm / entries(warm)[0]
    os.remove(f)
    os.mkdir(f)
    info = small_run(warm)
    assert info["serialization"]["write_errors"] == 1, info
    assert not [x for x in os.listdir(warm) if ".tmp." in x], os.listdir(warm)


# ---------------------------------------------------------------------------------------------
# What the key covers, read from the stored entry (its full key text is the payload's first field)

def _stored_key(path):
    b = open(path, "rb").read()
    n = int.from_bytes(b[56:64], "little")
    fields, text = {}, b[64:64 + n].decode()
    while text:  # name[len]=value\n
        name, rest = text.split("[", 1)
        ln, rest = rest.split("]=", 1)
        fields[name] = rest[:int(ln)]
        text = rest[int(ln) + 1:]
    return fields, b[64 + n + 4 + 1]  # (fields, the 'tuned' byte after precision and sentinels)


def test_key_names_model_hash_token_options_and_driver(tmp_path):
    """The key holds the SHA-256 of the model bytes (hashlib), the token, every option, and the
    device as OpenCL reports it (pyopencl): name, vendor, device version, CL_DRIVER_VERSION (not
    the platform version, which on NVIDIA is the CUDA version)."""
    require_gpu()
    model, _ = small_model()
    dlg = tflite_gpu.GpuDelegate(options(tmp_path, token="key-test"))
    it = tflite_gpu.Interpreter(model_content=model, experimental_delegates=[dlg])
    it.allocate_tensors()
    k, tuned = _stored_key(tmp_path / entries(tmp_path)[0])
    assert tuned == 0
    assert k["model_sha256"] == hashlib.sha256(model).hexdigest()
    assert k["model_token"] == "key-test"
    for f in ("precision", "is_precision_loss_allowed", "inference_preference", "priorities", "experimental_flags",
              "max_delegated_partitions", "op_filter", "format", "library", "nodes", "tensors"):
        assert f in k, (f, k)
    assert k["experimental_flags"] == str(int(FLAGS.ENABLE_QUANT | FLAGS.ENABLE_SERIALIZATION))
    info = dlg.info()
    assert k["device_name"] == info["device_name"] and k["driver_version"] == info["driver_version"], (k, info)
    cl = pytest.importorskip("pyopencl", reason="pyopencl gives the independent view of the device")
    devs = [d for p in cl.get_platforms() for d in p.get_devices() if d.name == info["device_name"]]
    assert devs, info
    dev = devs[0]
    assert k["driver_version"] == dev.driver_version and k["device_vendor"] == dev.vendor
    assert k["device_version"] == dev.version
    assert dev.platform.version in k["platform"]


def test_more_option_changes_rebuild(warm):
    """Options the other key test does not touch: priorities, the partition limit, the flags."""
    P = tflite_gpu.delegate.InferencePriority
    assert_rebuilt(small_run(warm, inference_priority2=P.MIN_MEMORY_USAGE))  # priority1 MAX_PRECISION: still F32
    assert_rebuilt(small_run(warm, max_delegated_partitions=3))
    assert_rebuilt(small_run(warm, experimental_flags=FLAGS.ENABLE_SERIALIZATION))  # no ENABLE_QUANT
    assert_warm(small_run(warm, max_delegated_partitions=3))


def test_sustained_speed_entry_is_marked_tuned(tmp_path):
    """The SUSTAINED_SPEED entry says its launch sizes are tuned, so the warm start skips tuning
    (gpu_delegate.cc: tuning runs only when the loaded entry is not tuned)."""
    require_gpu()
    pref = tflite_gpu.delegate.InferencePreference.SUSTAINED_SPEED
    small_run(tmp_path, inference_preference=pref)
    k, tuned = _stored_key(tmp_path / entries(tmp_path)[0])
    assert tuned == 1 and k["inference_preference"] == str(int(pref)), k


def test_load_delegate_with_dir_and_token_keys(tmp_path):
    """tflite_gpu.load_delegate (LiteRT's entry point) with the directory and token keys: as the
    benchmark tool, the two together turn serialization on; the second start loads the entry."""
    require_gpu()
    model, bias = small_model()
    x = np.random.default_rng(5).standard_normal((1, 4, 4, 8)).astype(np.float32)
    for expect_hit in (False, True):
        dl = tflite_gpu.load_delegate("libtensorflowlite_gpu_delegate.so",
                                      {"serialization_dir": str(tmp_path), "model_token": "ld"})
        it = tflite_gpu.Interpreter(model_content=model, experimental_delegates=[dl])
        it.allocate_tensors()
        s = dl.gpu_delegate.cache_info()["serialization"]
        assert s["enabled"] and s["hits"] == int(expect_hit) and s["writes"] == int(not expect_hit), s
        it.set_tensor(0, x)
        it.invoke()
        np.testing.assert_allclose(it.get_tensor(it.get_output_details()[0]["index"]), small_expected(x, bias),
                                   rtol=1e-4, atol=1e-6)
    # flags given explicitly win: without ENABLE_SERIALIZATION nothing is serialized
    o = tflite_gpu.GpuDelegateOptions.from_external_options(
        {"delegate_serialize_dir": str(tmp_path), "delegate_serialize_token": "ld", "experimental_flags": "ENABLE_QUANT"})
    assert o.experimental_flags == FLAGS.ENABLE_QUANT
    o = tflite_gpu.GpuDelegateOptions.from_external_options({"delegate_serialize_dir": str(tmp_path)})
    assert o.experimental_flags == FLAGS.ENABLE_QUANT  # a directory alone: no serialization


# ---------------------------------------------------------------------------------------------
# Several partitions, and resized inputs

def two_partition_model():
    """x -> ADD(c) -> CAST(int32) -> CAST(float32) -> MUL(x) -> TANH -> y: the CASTs stay on the
    CPU (op_filter), so the GPU gets two partitions, [ADD] and [MUL, TANH]."""
    b = ModelBuilder()
    shape = [1, 4, 4, 8]
    c_val = np.linspace(-1, 1, 8, dtype=np.float32)
    x = b.add_input(shape, name="x")
    c = b.add_const(c_val, name="c")
    t1, t2, t3, t4, y = (b.add_tensor(shape, dtype=dt) for dt in (np.float32, np.int32, np.float32, np.float32,
                                                                   np.float32))
    b.add_op("ADD", [x, c], [t1], options=dict(fused_activation_function="NONE"))
    b.add_op("CAST", [t1], [t2], options=dict(in_data_type="FLOAT32", out_data_type="INT32"))
    b.add_op("CAST", [t2], [t3], options=dict(in_data_type="INT32", out_data_type="FLOAT32"))
    b.add_op("MUL", [t3, x], [t4], options=dict(fused_activation_function="NONE"))
    b.add_op("TANH", [t4], [y])
    b.mark_output(y)

    def expected(xv):
        return np.tanh(np.trunc(xv + c_val) * xv)
    return b.build(), expected


def test_each_partition_has_its_entry(tmp_path):
    require_gpu()
    model, expected = two_partition_model()
    xv = (np.random.default_rng(9).standard_normal((1, 4, 4, 8)) * 3).astype(np.float32)
    infos = []
    for _ in range(2):
        dlg = tflite_gpu.GpuDelegate(options(tmp_path, max_delegated_partitions=2, op_filter=["CAST"]))
        it = tflite_gpu.Interpreter(model_content=model, experimental_delegates=[dlg])
        it.allocate_tensors()
        assert dlg.info()["partitions"] == 2, dlg.info()
        it.set_tensor(0, xv)
        it.invoke()
        np.testing.assert_allclose(it.get_tensor(it.get_output_details()[0]["index"]), expected(xv),
                                   rtol=1e-5, atol=1e-6)
        infos.append(dlg.cache_info())
    s = infos[0]["serialization"]
    assert s["misses"] == 2 and s["writes"] == 2, s
    assert len(entries(tmp_path)) == 2
    assert_warm(infos[1], n=2)


def test_resized_input_has_its_own_entry(tmp_path):
    """The partition's tensor shapes are in the key: each shape the partition is built for (the
    model's at delegation, then each resize, which rebuilds it) stores and later loads its own
    entry; outputs stay right."""
    require_gpu()
    model, bias = small_model()
    rng = np.random.default_rng(10)

    def start(batches):
        dlg = tflite_gpu.GpuDelegate(options(tmp_path))
        it = tflite_gpu.Interpreter(model_content=model, experimental_delegates=[dlg])
        for n in batches:
            it.resize_tensor_input(0, [n, 4, 4, 8])
            it.allocate_tensors()
            xv = rng.standard_normal((n, 4, 4, 8)).astype(np.float32)
            it.set_tensor(0, xv)
            it.invoke()
            np.testing.assert_allclose(it.get_tensor(it.get_output_details()[0]["index"]), small_expected(xv, bias),
                                       rtol=1e-4, atol=1e-6)
        return dlg.cache_info()["serialization"]

    s = start([2])  # built for batch 1 when the delegate is applied, then for batch 2
    assert s["misses"] == 2 and s["writes"] == 2 and s["hits"] == 0, s
    s = start([2])
    assert s["hits"] == 2 and s["misses"] == 0 and s["writes"] == 0, s
    s = start([2, 3])  # batch 3 is new: one miss and write
    assert s["hits"] == 2 and s["misses"] == 1 and s["writes"] == 1, s
    s = start([3])
    assert s["hits"] == 2 and s["misses"] == 0, s
    assert len(entries(tmp_path)) == 3


def test_stale_temporary_of_a_killed_writer_is_removed(tmp_path):
    """A writer killed between creating its temporary and the rename leaves '<entry>.tmp.<pid>.<rand>'.
    The next save of that entry removes such temporaries untouched for an hour; a recent one (a
    writer that may still be running) and other entries' temporaries are left alone."""
    require_gpu()
    ref = tmp_path / "ref"
    small_run(ref)
    name = entries(ref)[0]  # the key does not include the directory: same name elsewhere
    d = tmp_path / "d"
    d.mkdir(mode=0o700)
    old = time.time() - 2 * 3600
    stale, fresh, other = (d / f"{name}.tmp.999999.0123456789abcdef", d / f"{name}.tmp.999998.fedcba9876543210",
                           d / ("0" * 64 + ".tfgmodel.tmp.999997.00000000000000aa"))
    for f in (stale, fresh, other):
        f.write_bytes(b"partial")
    os.utime(stale, (old, old))
    os.utime(other, (old, old))
    assert_rebuilt(small_run(d))
    left = sorted(os.listdir(d))
    assert not stale.exists() and fresh.exists() and other.exists(), left
    assert_warm(small_run(d))
