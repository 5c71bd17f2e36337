"""Pieces the command-line tools share: TFLite-style statistics and number
formatting, process memory, model inputs, and writing results.

(Image decoding and preprocessing live in ``_images``.)
"""

from __future__ import annotations

import array
import json
import math
import sys
import threading
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .flags import FlagError

__all__ = ["Stat", "g6", "latency_line", "peak_rss_kb", "current_rss_kb", "MemoryMonitor",
           "random_inputs", "apply_input_shapes", "fill_dynamic_dims", "quant_params",
           "read_lines", "write_results", "json_default"]


# --------------------------------------------------------------------------- statistics

class Stat:
    """TFLite's ``Stat<int64_t>``: first/curr/min/max/avg/std of samples."""

    def __init__(self) -> None:
        # int64 array, not a list: 8 bytes a run keeps the tool's own footprint small
        self.values = array.array("q")
        self._sum = 0
        self._sq = 0.0

    def update(self, v: float) -> None:
        v = int(v)
        self.values.append(v)
        self._sum += v
        self._sq += float(v) * v

    @property
    def count(self) -> int:
        return len(self.values)

    def empty(self) -> bool:
        return not self.values

    @property
    def first(self) -> int:
        return self.values[0] if self.values else 0

    @property
    def newest(self) -> int:
        return self.values[-1] if self.values else 0

    @property
    def min(self) -> int:
        return min(self.values) if self.values else 0

    @property
    def max(self) -> int:
        return max(self.values) if self.values else 0

    @property
    def sum(self) -> int:
        return self._sum

    def avg(self) -> float:
        return float(self.sum) / self.count if self.values else float("nan")

    def all_same(self) -> bool:
        return not self.values or self.min == self.max

    def std(self) -> int:
        if self.all_same():
            return 0
        a = self.avg()
        var = self._sq / self.count - a * a
        # TFLite: ValueType variance() then sqrt, both truncated to int64
        return int(math.sqrt(max(int(var), 0)))

    def __str__(self) -> str:
        if self.empty():
            return "count=0"
        if self.all_same():
            s = f"count={self.count} curr={self.newest}"
            return s + ("(all same)" if self.count > 1 else "")
        return (f"count={self.count} first={self.first} curr={self.newest} min={self.min} "
                f"max={self.max} avg={g6(self.avg())} std={self.std()}")

    def as_dict(self) -> Dict[str, Any]:
        return {"count": self.count, "first": self.first, "curr": self.newest, "min": self.min,
                "max": self.max, "avg": self.avg() if self.values else None, "std": self.std(),
                "values": list(self.values)}


def g6(x: float) -> str:
    """A double as C++ streams print it by default (%g, 6 significant digits)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "nan"
    if isinstance(x, float) and math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:g}"


def latency_line(label: str, stat: Stat) -> str:
    """``<label> latency: avg=..(us), std_dev=..(us)`` as TFLite's evaluation tools print it."""
    return f"{label} latency: avg={g6(stat.avg())}(us), std_dev={stat.std()}(us)"


# --------------------------------------------------------------------------- memory

def _proc_status_kb(field: str) -> Optional[int]:
    try:
        with open("/proc/self/status", "r") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def peak_rss_kb() -> Optional[int]:
    """Peak resident set size (kB) of this process: VmHWM, else ru_maxrss."""
    v = _proc_status_kb("VmHWM")
    if v is not None:
        return v
    try:
        import resource

        r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return int(r / 1024) if sys.platform == "darwin" else int(r)
    except Exception:
        return None


def current_rss_kb() -> Optional[int]:
    return _proc_status_kb("VmRSS")


class MemoryMonitor:
    """Samples VmRSS every ``interval_ms`` in a daemon thread; ``peak_mb``."""

    def __init__(self, interval_ms: int = 50) -> None:
        self.interval = max(1, int(interval_ms)) / 1000.0
        self.peak_kb = 0
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self.supported = current_rss_kb() is not None

    def _sample(self) -> None:
        v = current_rss_kb()
        if v is not None and v > self.peak_kb:
            self.peak_kb = v

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._sample()
            self._stop.wait(self.interval)

    def start(self) -> "MemoryMonitor":
        if self.supported:
            self._sample()
            self._thread = threading.Thread(target=self._loop, name="tflite_gpu-memmon",
                                            daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self.supported:
            self._sample()

    @property
    def peak_mb(self) -> float:
        return self.peak_kb / 1024.0



# --------------------------------------------------------------------------- inputs

def random_inputs(details: Sequence[Dict[str, Any]], rng: np.random.Generator
                  ) -> List[np.ndarray]:
    """Random data per input, with the ranges benchmark_model uses."""
    out = []
    for d in details:
        shape = tuple(int(s) for s in d["shape"])
        dt = np.dtype(d["dtype"])
        if dt == np.float32 or dt == np.float16 or dt == np.float64:
            a = rng.uniform(-0.5, 0.5, size=shape).astype(dt)
        elif dt == np.int8:
            a = rng.integers(-127, 128, size=shape, dtype=np.int64).astype(dt)
        elif dt == np.uint8:
            a = rng.integers(0, 256, size=shape, dtype=np.int64).astype(dt)
        elif dt == np.int16:
            a = rng.integers(0, 100, size=shape, dtype=np.int64).astype(dt)
        elif dt in (np.int32, np.int64, np.uint32, np.uint16):
            a = rng.integers(0, 100, size=shape, dtype=np.int64).astype(dt)
        elif dt == np.bool_:
            a = rng.integers(0, 2, size=shape).astype(np.bool_)
        elif dt == np.complex64:
            a = (rng.uniform(-0.5, 0.5, size=shape)
                 + 1j * rng.uniform(-0.5, 0.5, size=shape)).astype(dt)
        else:
            a = np.zeros(shape, dtype=dt)
        out.append(a)
    return out


def apply_input_shapes(interp: Any, shapes: Dict[str, List[int]]) -> None:
    """resize_tensor_input for the named inputs (--input_layer/--input_layer_shape)."""
    if not shapes:
        return
    by_name = {d["name"]: d for d in interp.get_input_details()}
    for name, dims in shapes.items():
        d = by_name.get(name)
        if d is None:
            raise FlagError(f"--input_layer: no input named {name!r}; inputs are: "
                            f"{', '.join(by_name)}")
        cur = [int(x) for x in d["shape"]]
        sig = [int(x) for x in d.get("shape_signature", cur)]
        if len(dims) != len(cur):
            raise FlagError(f"--input_layer_shape for {name!r} has rank {len(dims)}, "
                            f"the model's input has rank {len(cur)} ({cur})")
        for got, want, s in zip(dims, cur, sig):
            if s != -1 and got != want:
                raise FlagError(f"--input_layer_shape {dims} for {name!r} does not match the "
                                f"model's fixed shape {cur}")
        if dims != cur:
            interp.resize_tensor_input(d["index"], dims)


def fill_dynamic_dims(interp: Any, skip: Sequence[str] = ()) -> None:
    """Dimensions of -1 left in inputs become 1 (benchmark_model does the same);
    inputs named in ``skip`` (already given a shape) are left alone."""
    for d in interp.get_input_details():
        if d.get("name") in skip:
            continue
        sig = d.get("shape_signature")
        if sig is None:
            continue
        if any(int(s) == -1 for s in sig):
            shape = [1 if int(s) == -1 else int(s) for s in sig]
            if shape != [int(x) for x in d["shape"]]:
                interp.resize_tensor_input(d["index"], shape)


def quant_params(d: Dict[str, Any]) -> Tuple[float, int]:
    """(scale, zero_point) of a tensor detail; (0.0, 0) when it has none."""
    q = d.get("quantization") or (0.0, 0)
    try:
        return float(q[0]), int(q[1])
    except (TypeError, IndexError, ValueError):
        return 0.0, 0


# --------------------------------------------------------------------------- files

def read_lines(path: str) -> List[str]:
    """The lines of a text file, stripped, without trailing empty lines."""
    with open(path, "r", encoding="utf-8") as f:
        lines = [ln.rstrip("\r\n").strip() for ln in f]
    while lines and lines[-1] == "":
        lines.pop()
    return lines


def write_results(path: str, lines: Sequence[str], as_json: Dict[str, Any]) -> None:
    """--output_file_path: ``as_json`` when the name ends in .json, else the printed lines."""
    with open(path, "w") as f:
        if path.endswith(".json"):
            json.dump(as_json, f, indent=2)
        else:
            f.write("\n".join(lines) + "\n")


def json_default(o: Any) -> Any:
    """``default=`` for json.dumps: numpy scalars/arrays, sets and tuples."""
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, (set, tuple)):
        return list(o)
    return str(o)
