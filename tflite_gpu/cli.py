"""``tflite-gpu <command> [--flag=value ...]``: the command-line entry point.

Commands: benchmark, diff, eval-classification, eval-detection, devices.
Each takes TFLite-style flags (``--graph=m.tflite --use_gpu``); ``tflite-gpu
<command> --help`` lists them.  ``main`` returns the exit code (0 ok, 1 the
run failed, 2 bad command line) so that tests can call it in-process.
"""

from __future__ import annotations

import importlib
import sys
from typing import Dict, List, Optional, Sequence, Tuple

__all__ = ["main", "COMMANDS"]

# command -> (module, one-line description)
COMMANDS: Dict[str, Tuple[str, str]] = {
    "benchmark": ("tflite_gpu.tools.benchmark",
                  "latency, init time and memory of a model (TFLite benchmark_model)"),
    "diff": ("tflite_gpu.tools.diff",
             "CPU reference vs delegate outputs on random inputs (TFLite Inference Diff)"),
    "eval-classification": ("tflite_gpu.tools.eval_classification",
                            "top-k accuracy on labelled images (TFLite ILSVRC eval)"),
    "eval-detection": ("tflite_gpu.tools.eval_detection",
                       "COCO mAP / AP50 on images with boxes (TFLite COCO eval)"),
    "devices": ("tflite_gpu.cli", "list OpenCL devices and the one the GPU delegate picks"),
}

ALIASES = {
    "benchmark-model": "benchmark", "bench": "benchmark",
    "inference-diff": "diff",
    "eval-imagenet": "eval-classification", "classification": "eval-classification",
    "eval-coco": "eval-detection", "detection": "eval-detection",
    "device": "devices", "list-devices": "devices",
}


def _usage() -> str:
    lines = ["usage: tflite-gpu <command> [--flag=value ...]", "", "commands:"]
    for name, (_, desc) in COMMANDS.items():
        lines.append(f"  {name:<20} {desc}")
    lines.append("")
    lines.append("Run 'tflite-gpu <command> --help' for the flags of a command.")
    return "\n".join(lines) + "\n"


def main(argv: Optional[Sequence[str]] = None) -> int:
    args: List[str] = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        (sys.stdout if args else sys.stderr).write(_usage())
        return 0 if args else 2
    if args[0] in ("--version", "version"):
        sys.stdout.write(f"tflite-gpu {_version()}\n")
        return 0
    cmd = args[0].replace("_", "-").lower()
    cmd = ALIASES.get(cmd, cmd)
    if cmd not in COMMANDS:
        sys.stderr.write(f"ERROR: unknown command {args[0]!r}\n\n" + _usage())
        return 2
    if cmd == "devices":
        return devices_main(args[1:])
    module = importlib.import_module(COMMANDS[cmd][0])
    return int(module.main(args[1:]) or 0)


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("tflite_gpu")
    except Exception:
        try:
            import tflite_gpu

            return str(getattr(tflite_gpu, "__version__", "unknown"))
        except Exception:
            return "unknown"


# --------------------------------------------------------------------------- devices

def _fmt_bytes(n) -> str:
    try:
        n = float(n)
    except (TypeError, ValueError):
        return "?"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024.0
    return f"{n:.1f} TiB"


def _devices_from_pyopencl() -> List[dict]:
    import pyopencl as cl

    out: List[dict] = []
    for p in cl.get_platforms():
        try:
            devs = p.get_devices()
        except Exception:
            continue
        for d in devs:
            ext = d.extensions or ""
            out.append({
                "platform": p.name.strip(), "name": d.name.strip(),
                "vendor": d.vendor.strip(),
                "type": cl.device_type.to_string(d.type),
                "driver_version": d.driver_version.strip(),
                "fp16": "cl_khr_fp16" in ext,
                "global_mem_bytes": int(d.global_mem_size),
                "compute_units": int(d.max_compute_units),
                "selected": False,
            })
    # the delegate's rule when it cannot tell us itself: first GPU, else first device
    gpus = [d for d in out if "GPU" in d["type"].upper()]
    pick = gpus[0] if gpus else (out[0] if out else None)
    if pick is not None:
        pick["selected"] = True
    return out


def devices_main(argv: Sequence[str]) -> int:
    from .tools.flags import Flag, FlagError, parse_flags, usage

    flags = [Flag("json", bool, False, "print the device list as JSON"),
             Flag("source", str, "auto", "where to read devices from",
                  choices=("auto", "tflite_gpu", "pyopencl"))]
    try:
        f = parse_flags(argv, flags)
    except FlagError as e:
        if getattr(e, "help_requested", False):
            sys.stdout.write(usage("tflite-gpu devices", "List OpenCL platforms and devices, "
                                   "and which one the GPU delegate would pick.", flags))
            return 0
        sys.stderr.write(f"ERROR: {e}\n")
        return 2
    devices = None
    source = None
    notes: List[str] = []
    if f.source in ("auto", "tflite_gpu"):
        try:
            import tflite_gpu

            devices = [dict(d) for d in tflite_gpu.list_devices()]
            source = "tflite_gpu.list_devices()"
        except Exception as e:
            notes.append(f"tflite_gpu.list_devices() failed ({e})")
    if devices is None and f.source in ("auto", "pyopencl"):
        try:
            devices = _devices_from_pyopencl()
            source = "pyopencl (the delegate's choice is a guess: first GPU)"
        except Exception as e:
            notes.append(f"pyopencl: {type(e).__name__}: {e}")
    supported = None
    try:
        import tflite_gpu

        supported = bool(tflite_gpu.CompatibilityList().is_delegate_supported_on_this_device())
    except Exception as e:
        notes.append(f"CompatibilityList failed: {e}")

    if f.json:
        import json

        sys.stdout.write(json.dumps({"source": source, "devices": devices or [],
                                     "is_delegate_supported_on_this_device": supported,
                                     "notes": notes}, indent=2, default=str) + "\n")
        return 0 if devices is not None else 1
    for n in notes:
        sys.stderr.write(f"note: {n}\n")
    if devices is None:
        sys.stdout.write("No OpenCL devices could be listed.\n")
        if supported is not None:
            sys.stdout.write(f"CompatibilityList().is_delegate_supported_on_this_device(): "
                             f"{supported}\n")
        return 1
    sys.stdout.write(f"OpenCL devices (from {source}):\n")
    if not devices:
        sys.stdout.write("  (none: no OpenCL platform/ICD found)\n")
    platform = None
    for i, d in enumerate(devices):
        if d.get("platform") != platform:
            platform = d.get("platform")
            sys.stdout.write(f"Platform: {platform}\n")
        mark = "*" if d.get("selected") else " "
        sys.stdout.write(
            f" {mark}[{i}] {d.get('name', '?')} ({d.get('vendor', '?')}, {d.get('type', '?')})\n"
            f"      driver {d.get('driver_version', '?')}, fp16: "
            f"{'yes' if d.get('fp16') else 'no'}, memory: {_fmt_bytes(d.get('global_mem_bytes'))}"
            f", compute units: {d.get('compute_units', '?')}\n")
    sel = [d for d in devices if d.get("selected")]
    sys.stdout.write(f"GPU delegate would use: {sel[0].get('name') if sel else 'none'}\n")
    if supported is not None:
        sys.stdout.write(f"CompatibilityList().is_delegate_supported_on_this_device(): "
                         f"{supported}\n")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
