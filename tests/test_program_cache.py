"""The on-disk program cache under tampering (issue 12, item 4). Every case checks that the model
still computes the numpy result through the GPU delegate (the cache can never make a build fail
nor change results) and what the cache did (GpuDelegate._core.cache_info(): hits, rejects,
the directory in use or why it was refused). Runs on PoCL here; cases that could take the
process down (a forged file with a valid checksum) run in a child process."""
import logging
import os
import stat

import numpy as np
import pytest

import tflite_gpu
from gpu_util import require_gpu
from misuse_util import run_child
from tflite_gpu.testing.builder import ModelBuilder

FLAGS = tflite_gpu.delegate.ExperimentalFlags


def two_op_model():
    b = ModelBuilder()
    x = b.add_input([1, 4, 4, 8], name="x")
    y = b.add_input([1, 4, 4, 8], name="y")
    s = b.add_tensor([1, 4, 4, 8])
    z = b.add_tensor([1, 4, 4, 8])
    b.add_op("ADD", [x, y], [s], options=dict(fused_activation_function="NONE"))
    b.add_op("SOFTMAX", [s], [z], options=dict(beta=1.0))
    b.mark_output(z)
    return b.build()


def expected(a, c):
    s = (a + c).astype(np.float64)
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def run_with_cache(cache_dir):
    """One fresh delegate with the cache in cache_dir; asserts the numpy result; returns cache_info."""
    # No model_token: the flag + directory alone keep only the compiled-program cache there (the
    # serialized prepared model needs the token too; tests/test_serialization.py covers that).
    dlg = tflite_gpu.GpuDelegate(tflite_gpu.GpuDelegateOptions(
        serialization_dir=str(cache_dir),
        experimental_flags=FLAGS.ENABLE_QUANT | FLAGS.ENABLE_SERIALIZATION))
    it = tflite_gpu.Interpreter(model_content=two_op_model(), experimental_delegates=[dlg])
    it.allocate_tensors()
    assert it.delegation_report()["delegated_nodes"] == 2, it.delegation_report()
    rng = np.random.default_rng(0)
    a = rng.standard_normal((1, 4, 4, 8)).astype(np.float32)
    c = rng.standard_normal((1, 4, 4, 8)).astype(np.float32)
    it.set_tensor(0, a)
    it.set_tensor(1, c)
    it.invoke()
    np.testing.assert_allclose(it.get_tensor(it.get_output_details()[0]["index"]), expected(a, c), rtol=1e-4, atol=1e-6)
    return dlg._core.cache_info()


def entries(d):
    return sorted(f for f in os.listdir(d) if f.endswith(".clbin"))


@pytest.fixture()
def warm(tmp_path):
    require_gpu()
    d = tmp_path / "a" / "b" / "cache"
    info = run_with_cache(d)
    assert info["dir"] == str(d) and info["disk_writes"] >= 2, info
    return d


def test_created_private_and_reused(warm, tmp_path):
    for p in (tmp_path / "a", tmp_path / "a" / "b", warm):
        assert stat.S_IMODE(os.stat(p).st_mode) == 0o700, (p, oct(os.stat(p).st_mode))
    files = entries(warm)
    assert len(files) >= 2
    for f in files:
        assert stat.S_IMODE(os.stat(warm / f).st_mode) == 0o600
    assert not [f for f in os.listdir(warm) if ".tmp." in f], "temporary files left behind"
    info = run_with_cache(warm)
    assert info["disk_hits"] == len(files) and info["source_builds"] == 0, info


def _fnv1a(data, h=14695981039346656037):
    for byte in data:
        h = ((h ^ byte) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


TAMPER = {
    "truncate": lambda b, other: b[:len(b) // 2],
    "flip": lambda b, other: b[:len(b) // 2] + bytes([b[len(b) // 2] ^ 0x40]) + b[len(b) // 2 + 1:],
    "garbage": lambda b, other: os.urandom(len(b)),
    "empty": lambda b, other: b"",
    "swapped": lambda b, other: other,  # another entry's valid file under this name
}


@pytest.mark.parametrize("kind", sorted(TAMPER))
def test_tampered_entry_is_a_miss(warm, kind):
    files = entries(warm)
    blobs = [open(warm / f, "rb").read() for f in files]
    for i, f in enumerate(files):
        open(warm / f, "wb").write(TAMPER[kind](blobs[i], blobs[(i + 1) % len(blobs)]))
    info = run_with_cache(warm)
    assert info["disk_hits"] == 0 and info["source_builds"] == len(files), info
    if kind != "empty":
        assert info["disk_rejects"] == len(files), info
    # rewritten: the next delegate hits again
    assert run_with_cache(warm)["disk_hits"] == len(files)


def test_directory_and_fifo_entries_are_misses(warm):
    files = entries(warm)
    os.remove(warm / files[0])
    os.mkdir(warm / files[0])           # a directory where a file should be
    os.remove(warm / files[1])
    os.mkfifo(warm / files[1])          # a fifo: opening must not block
    info = run_with_cache(warm)
    assert info["source_builds"] == 2 and info["disk_hits"] == len(files) - 2, info


@pytest.mark.parametrize("mode,why", [(0o777, "writable by others"), (0o770, "writable by its group"),
                                      (0o1777, "writable by others")])
def test_group_or_world_writable_dir_is_refused(warm, mode, why, caplog):
    os.chmod(warm, mode)
    n = len(entries(warm))
    with caplog.at_level(logging.WARNING, logger="tflite_gpu"):
        info = run_with_cache(warm)
    assert info["dir"] == "" and why in info["refused"], info
    assert info["disk_hits"] == 0 and info["disk_writes"] == 0, info
    assert any("not used" in r.getMessage() for r in caplog.records), [r.getMessage() for r in caplog.records]
    assert len(entries(warm)) == n


def _need_root():
    if os.geteuid() != 0:
        pytest.skip("needs root to make a directory owned by another uid (chown)")


def test_foreign_owner_is_refused(warm):
    _need_root()
    os.chown(warm, 65534, 65534)
    os.chmod(warm, 0o755)
    info = run_with_cache(warm)
    assert info["dir"] == "" and "owned by uid 65534" in info["refused"], info
    assert info["disk_hits"] == 0


def test_foreign_file_in_own_dir_is_a_miss(warm):
    _need_root()
    files = entries(warm)
    os.chown(warm / files[0], 65534, 65534)
    info = run_with_cache(warm)
    assert info["source_builds"] == 1 and info["disk_hits"] == len(files) - 1, info


def test_read_only_dir(tmp_path):
    """A 0500 cache dir of the current user: hits are used, nothing is written, results stay right."""
    require_gpu()
    if os.geteuid() == 0:
        pytest.skip("root bypasses directory permissions, so a read-only directory cannot be made here; "
                    "run as a normal user (the foreign-owner and writable-dir cases cover root)")
    d = tmp_path / "ro"
    n = run_with_cache(d)["disk_writes"]
    os.chmod(d, 0o500)
    try:
        info = run_with_cache(d)
        assert info["dir"] == str(d) and info["disk_hits"] == n and info["disk_writes"] == 0, info
        os.chmod(d, 0o700)
        for f in entries(d):
            os.remove(d / f)
        os.chmod(d, 0o500)
        info = run_with_cache(d)  # misses, and the writes fail: counted, never raised
        assert info["source_builds"] == n and info["disk_write_errors"] == n, info
    finally:
        os.chmod(d, 0o700)


FORGED = """
import os, sys
from test_program_cache import run_with_cache, entries, _fnv1a
d = {d!r}
for f in entries(d):
    b = open(os.path.join(d, f), "rb").read()
    body = b[:-8]
    # keep header + key material, replace the binary by garbage of the same length, re-sign
    n = int.from_bytes(body[16:24], "little")
    head = body[:24 + n + 8]
    blen = int.from_bytes(head[-8:], "little")
    forged = head + os.urandom(blen)
    open(os.path.join(d, f), "wb").write(forged + _fnv1a(forged).to_bytes(8, "little"))
info = run_with_cache(d)
print("INFO", info)
assert info["disk_hits"] == 0 and info["disk_rejects"] == len(entries(d)), info
"""


def test_forged_checksum_garbage_binary_is_rejected_by_the_driver(warm):
    out = run_child(FORGED.format(d=str(warm)), timeout=300)
    assert "INFO" in out


def test_forged_file_in_foreign_dir_is_never_loaded(warm):
    """The threat of the issue: someone who can write the directory plants a file with a valid
    checksum. A directory writable by others is refused before any file is read."""
    os.chmod(warm, 0o777)
    out = run_child(FORGED.replace('assert info["disk_hits"] == 0 and info["disk_rejects"] == len(entries(d)), info',
                                   'assert info["dir"] == "" and info["disk_rejects"] == 0 and info["disk_hits"] == 0, info')
                    .format(d=str(warm)), timeout=300)
    assert "INFO" in out
