"""Sharing the delegate's OpenCL device with pyopencl (for buffer binding and GPU pipelines).

Buffer binding needs the user's buffers on the delegate's context, so the usual pattern is: make a
pyopencl queue and pass it as ``GpuDelegate(device=queue)``. On many Linux GPU hosts pyopencl cannot
see the GPU at all: NVIDIA's driver installs ``libnvidia-opencl.so.1`` but no
``/etc/OpenCL/vendors/nvidia.icd`` (containers, CUDA-only installs). Our own loader finds such
drivers itself; pyopencl's ICD loader only reads registered vendors. ``pyopencl_queue()`` registers
those drivers for pyopencl's loader (a private vendors folder named by ``OCL_ICD_VENDORS``, set
before pyopencl's first platform query) and returns a queue on the device the delegate picks by
default (the ``selected`` entry of ``tflite_gpu.list_devices()``), or on a device you name.
"""
import atexit
import ctypes
import glob
import os
import shutil
import tempfile

from .delegate import list_devices

_CANDIDATES = ("libnvidia-opencl.so.1", "libamdocl64.so", "libigdrcl.so")
_exposed = None


def _registered_names(folder):
    names = set()
    for path in glob.glob(os.path.join(folder, "*.icd")):
        try:
            with open(path) as f:
                names.add(os.path.basename(f.read().strip()))
        except OSError:
            pass
    return names


def expose_unregistered_vendors():
    """Make OpenCL drivers that are installed but not registered by an ICD file visible to ICD
    loaders initialised later in this process (pyopencl's). Must run before pyopencl's first
    ``get_platforms()``; later it has no effect (the loader reads its vendor list once). Returns the
    driver names added (empty when none was missing). Idempotent."""
    global _exposed
    if _exposed is not None:
        return list(_exposed)
    _exposed = []
    current = os.environ.get("OCL_ICD_VENDORS")
    if current and not os.path.isdir(current):
        return []  # a single .icd file or library chosen by the user: leave that choice alone
    folder = current or "/etc/OpenCL/vendors"
    registered = _registered_names(folder)
    extra = [v for v in os.environ.get("TFLITE_GPU_OPENCL_VENDORS", "").split(":") if v] + list(_CANDIDATES)
    missing = []
    for lib in extra:
        if os.path.basename(lib) in registered or lib in missing:
            continue
        try:
            ctypes.CDLL(lib)
        except OSError:
            continue
        missing.append(lib)
    if not missing:
        return []
    tmp = tempfile.mkdtemp(prefix="tflite_gpu_icd_")
    atexit.register(shutil.rmtree, tmp, True)
    for path in glob.glob(os.path.join(folder, "*.icd")):
        try:
            shutil.copy(path, tmp)
        except OSError:
            pass
    for i, lib in enumerate(missing):
        with open(os.path.join(tmp, f"tflite_gpu_vendor{i}.icd"), "w") as f:
            f.write(lib + "\n")
    os.environ["OCL_ICD_VENDORS"] = tmp
    _exposed = missing
    return list(missing)


def pyopencl_queue(device_name=None):
    """A ``pyopencl.CommandQueue`` on the delegate's default device (``list_devices()``'s selected
    entry), or on the first device whose name contains ``device_name``. Pass it to
    ``GpuDelegate(device=queue)`` so buffers made with its context can be bound. Raises
    ``RuntimeError`` naming the devices seen when pyopencl cannot reach the device."""
    expose_unregistered_vendors()
    import pyopencl as cl
    if device_name is None:
        sel = [d for d in list_devices() if d.get("selected")]
        if not sel:
            raise RuntimeError("tflite_gpu sees no OpenCL device")
        want_name, want_platform = sel[0]["name"], sel[0]["platform"]
    else:
        if not isinstance(device_name, str) or not device_name:
            raise TypeError("device_name must be a non-empty str or None")
        want_name, want_platform = device_name, None
    seen = []
    for p in cl.get_platforms():
        for d in p.get_devices():
            seen.append(f"{p.name}: {d.name}")
            if device_name is None:
                if d.name.strip() == want_name.strip() and p.name.strip() == want_platform.strip():
                    return cl.CommandQueue(cl.Context([d]))
            elif device_name in d.name:
                return cl.CommandQueue(cl.Context([d]))
    want = f"{want_platform}: {want_name}" if want_platform else repr(device_name)
    raise RuntimeError(f"pyopencl cannot reach the device {want}; it sees {seen or 'no device'}"
                       " (call tflite_gpu.pyopencl_queue() before any other pyopencl use in the process)")
