"""TFLite-style command-line flags.

The TFLite tools (benchmark_model, run_eval, inference_diff) take flags of the
form ``--name=value``.  We accept that form and, for convenience, also
``--name value``; boolean flags may be given bare (``--use_gpu``), with a
value (``--use_gpu=true``, ``--use_gpu=0``) or followed by a separate boolean
word (``--use_gpu false``).  Dashes and underscores in names are equivalent
(``--use-gpu`` == ``--use_gpu``).  An unknown flag is an error that names the
flag, unlike benchmark_model which only warns about "unconsumed" flags: a typo
in ``--use_gpu`` silently benchmarking the CPU is worse than a refusal.

Only stdlib; no argparse, because argparse has no notion of the
``--flag=true/false`` bool form and prints usage in a different shape from
the TFLite tools.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence

__all__ = [
    "Flag",
    "FlagError",
    "Flags",
    "parse_bool",
    "parse_flags",
    "usage",
    "delegate_flags",
    "gpu_options_from_flags",
    "parse_input_layer_shapes",
]

_TRUE = {"true", "1", "yes", "y", "on", "t"}
_FALSE = {"false", "0", "no", "n", "off", "f"}


class FlagError(ValueError):
    """Bad command line: unknown flag, missing or malformed value."""


def parse_bool(text: str) -> bool:
    t = str(text).strip().lower()
    if t in _TRUE:
        return True
    if t in _FALSE:
        return False
    raise FlagError(f"expected a boolean (true/false/1/0), got {text!r}")


@dataclass
class Flag:
    """One flag.

    type: bool, int, float or str.
    choices: allowed values (for str flags), compared case-insensitively.
    bare_value: for a non-bool flag, the value taken when the flag is given
        without a value (``--json`` alone means "stdout"); ``None`` means a
        value is required.
    aliases: other accepted names (TFLite tools differ: ``--graph`` vs
        ``--model_file``).
    words: for a bool flag, extra words accepted as values and returned as
        lower-case strings (``--use_gpu=auto``).
    """

    name: str
    type: type = str
    default: Any = None
    help: str = ""
    choices: Optional[Sequence[str]] = None
    bare_value: Any = None
    aliases: Sequence[str] = ()
    words: Sequence[str] = ()

    def convert(self, raw: str) -> Any:
        if self.type is bool:
            low = str(raw).strip().lower()
            if low in self.words:
                return low
            try:
                return parse_bool(raw)
            except FlagError:
                if self.words:
                    raise FlagError(f"--{self.name}: expected a boolean (true/false/1/0) or "
                                    f"{'/'.join(self.words)}, got {raw!r}") from None
                raise
        if self.type is int:
            try:
                return int(raw, 0) if raw.strip().lower().startswith(("0x", "-0x")) else int(raw)
            except ValueError:
                # accept "1e3" and "10.0" for integer flags, as long as exact
                try:
                    f = float(raw)
                except ValueError:
                    raise FlagError(f"--{self.name}: expected an integer, got {raw!r}") from None
                if f != int(f):
                    raise FlagError(f"--{self.name}: expected an integer, got {raw!r}")
                return int(f)
        if self.type is float:
            try:
                return float(raw)
            except ValueError:
                raise FlagError(f"--{self.name}: expected a number, got {raw!r}") from None
        value = str(raw)
        if self.choices is not None:
            low = value.lower()
            allowed = [c.lower() for c in self.choices]
            if low not in allowed:
                raise FlagError(
                    f"--{self.name}: {value!r} is not one of {', '.join(self.choices)}")
            value = self.choices[allowed.index(low)]
        return value


class Flags:
    """Parsed flag values; attribute access (``flags.use_gpu``) and a dict."""

    def __init__(self, values: Dict[str, Any], given: Iterable[str]):
        self.__dict__["_values"] = dict(values)
        self.__dict__["_given"] = set(given)

    def __getattr__(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value: Any) -> None:
        self._values[name] = value

    def given(self, name: str) -> bool:
        """True when the flag appeared on the command line."""
        return name in self._given

    def as_dict(self) -> Dict[str, Any]:
        return dict(self._values)

    def __repr__(self) -> str:
        return f"Flags({self._values!r})"


def _norm(name: str) -> str:
    return name.strip().replace("-", "_")


def parse_flags(argv: Sequence[str], flags: Sequence[Flag]) -> Flags:
    """Parse ``argv`` against ``flags``.  Raises FlagError; ``--help`` raises
    FlagError with ``.help_requested = True``."""
    table: Dict[str, Flag] = {}
    for f in flags:
        table[_norm(f.name)] = f
        for a in f.aliases:
            table[_norm(a)] = f
    values = {f.name: f.default for f in flags}
    given: List[str] = []
    args = list(argv)
    i = 0
    while i < len(args):
        tok = args[i]
        i += 1
        if tok in ("-h", "--help", "-help", "--helpfull"):
            err = FlagError("help requested")
            err.help_requested = True  # type: ignore[attr-defined]
            raise err
        if not tok.startswith("--") or tok == "--":
            raise FlagError(f"unexpected argument {tok!r} (flags look like --name=value)")
        body = tok[2:]
        if "=" in body:
            name, raw = body.split("=", 1)
            has_value = True
        else:
            name, raw, has_value = body, None, False
        key = _norm(name)
        flag = table.get(key)
        if flag is None and key.startswith("no") and not has_value:
            # --nouse_gpu, the absl spelling of --use_gpu=false
            cand = table.get(key[2:].lstrip("_"))
            if cand is not None and cand.type is bool:
                values[cand.name] = False
                given.append(cand.name)
                continue
        if flag is None:
            near = _suggest(key, table)
            hint = f" (did you mean --{near}?)" if near else ""
            raise FlagError(f"unknown flag --{name}{hint}")
        if not has_value:
            nxt = args[i] if i < len(args) else None
            if flag.type is bool:
                if nxt is not None and nxt.strip().lower() in (_TRUE | _FALSE | set(flag.words)):
                    raw = nxt
                    i += 1
                else:
                    raw = "true"
            elif flag.bare_value is not None:
                if nxt is not None and not nxt.startswith("-"):
                    raw = nxt
                    i += 1
                else:
                    values[flag.name] = flag.bare_value
                    given.append(flag.name)
                    continue
            else:
                if nxt is None or (nxt.startswith("--") and len(nxt) > 2):
                    raise FlagError(f"--{name} needs a value (--{name}=VALUE)")
                raw = nxt
                i += 1
        values[flag.name] = flag.convert(raw)
        given.append(flag.name)
    return Flags(values, given)


def _suggest(key: str, table: Dict[str, Flag]) -> Optional[str]:
    import difflib

    near = difflib.get_close_matches(key, list(table), n=1, cutoff=0.75)
    return near[0] if near else None


def usage(prog: str, summary: str, flags: Sequence[Flag]) -> str:
    lines = [f"usage: {prog} --flag=value ...", "", summary.strip(), "", "Flags:"]
    for f in flags:
        if f.type is bool:
            kind = "bool"
        elif f.type is int:
            kind = "int32"
        elif f.type is float:
            kind = "float"
        else:
            kind = "string"
        default = f.default
        if f.type is bool:
            default = "true" if default else "false"
        elif default is None:
            default = '""'
        names = "--" + f.name + "".join(f" (--{a})" for a in f.aliases)
        lines.append(f"\t{names}={default}\t{kind}\toptional\t{f.help}")
        if f.choices:
            lines.append(f"\t\tone of: {', '.join(f.choices)}")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------
# Delegate flags shared by every tool (the TFLite "delegate registrar" set).

WAIT_TYPES = ("passive", "active", "do_not_wait", "aggressive")


def delegate_flags() -> List[Flag]:
    return [
        Flag("use_gpu", bool, False, "apply the GPU delegate: true, false, or auto (the GPU "
             "delegate where CompatibilityList finds a GPU it helps on, else the CPU kernels; "
             "the choice and its reason are printed)", words=("auto",)),
        Flag("delegate", str, "", "delegate to apply: gpu, or empty/none/cpu for none "
             "(the run_eval spelling of --use_gpu)",
             choices=("", "none", "cpu", "gpu", "xnnpack")),
        Flag("gpu_precision_loss_allowed", bool, True,
             "allow fp16 precision in GPU kernels (TFLite's default is true)"),
        Flag("gpu_experimental_enable_quant", bool, True,
             "let the GPU delegate run quantized models (dequantized view)"),
        Flag("gpu_inference_for_sustained_speed", bool, False,
             "prefer SUSTAINED_SPEED over FAST_SINGLE_ANSWER"),
        Flag("gpu_wait_type", str, "", "GPU sync wait type: passive, active, do_not_wait, "
             "aggressive (empty = delegate default)", choices=("",) + WAIT_TYPES),
        Flag("max_delegated_partitions", int, 0,
             "max number of partitions to delegate (0 = delegate's default)"),
        Flag("delegate_serialize_dir", str, "",
             "directory for GPU delegate serialization (the prepared GPU model needs "
             "--delegate_serialize_token too; alone: the compiled-program cache)"),
        Flag("delegate_serialize_token", str, "",
             "model token for GPU delegate serialization"),
        Flag("gpu_device", str, "", "OpenCL device to use: index or a substring of its name "
             "(empty = the delegate's choice)"),
        Flag("backend", str, "tflite_gpu",
             "interpreter to use: tflite_gpu (this package) or litert (ai-edge-litert, "
             "for comparisons)", choices=("tflite_gpu", "litert")),
    ]


def gpu_choice_from_flags(flags: Flags) -> "tuple[bool, str]":
    """(apply the GPU delegate?, why) from --use_gpu / --delegate. ``--use_gpu=auto`` asks
    ``tflite_gpu.CompatibilityList`` (a real OpenCL GPU that passes a probe kernel); the reason
    is empty when the user chose explicitly."""
    d = (flags.delegate or "").lower()
    if d == "gpu":
        return True, ""
    if d in ("none", "cpu", "xnnpack") and not flags.given("use_gpu"):
        return False, ""
    if flags.use_gpu == "auto":
        from . import _backend  # lazy: flags.py stays importable without the engine
        return _backend.auto_gpu_choice()
    return bool(flags.use_gpu), ""


def use_gpu_from_flags(flags: Flags) -> bool:
    """Whether to apply the GPU delegate; with --use_gpu=auto the choice and its reason are
    written to stderr (the tools print it; benchmark uses gpu_choice_from_flags itself)."""
    use, why = gpu_choice_from_flags(flags)
    if why:
        import sys
        sys.stderr.write(why + "\n")
    return use


def gpu_options_from_flags(flags: Flags) -> Dict[str, Any]:
    """The gpu_options dict understood by ``_backend.make_interpreter``."""
    opts: Dict[str, Any] = {
        "precision_loss_allowed": bool(flags.gpu_precision_loss_allowed),
        "enable_quant": bool(flags.gpu_experimental_enable_quant),
        "sustained_speed": bool(flags.gpu_inference_for_sustained_speed),
    }
    if flags.gpu_wait_type:
        opts["wait_type"] = flags.gpu_wait_type
    if flags.max_delegated_partitions and flags.max_delegated_partitions > 0:
        opts["max_delegated_partitions"] = int(flags.max_delegated_partitions)
    if flags.delegate_serialize_dir:
        opts["serialization_dir"] = flags.delegate_serialize_dir
    if flags.delegate_serialize_token:
        opts["model_token"] = flags.delegate_serialize_token
    if flags.gpu_device:
        dev = flags.gpu_device
        opts["device"] = int(dev) if dev.isdigit() else dev
    return opts


def parse_input_layer_shapes(names: str, shapes: str) -> Dict[str, List[int]]:
    """``--input_layer=a,b --input_layer_shape=1,224,224,3:1,10`` -> dict."""
    names_l = [n for n in (names or "").split(",") if n != ""]
    shapes_l = [s for s in (shapes or "").split(":") if s != ""] if shapes else []
    if not names_l and not shapes_l:
        return {}
    if len(names_l) != len(shapes_l):
        raise FlagError(
            f"--input_layer names {len(names_l)} input(s) but --input_layer_shape gives "
            f"{len(shapes_l)} shape(s); separate shapes with ':' (e.g. 1,224,224,3:1,10)")
    out: Dict[str, List[int]] = {}
    for n, s in zip(names_l, shapes_l):
        try:
            dims = [int(d) for d in s.split(",") if d.strip() != ""]
        except ValueError:
            raise FlagError(f"bad --input_layer_shape entry {s!r}: expected comma-separated "
                            "integers") from None
        if any(d < 0 for d in dims):
            raise FlagError(f"bad --input_layer_shape entry {s!r}: negative dimension")
        out[n] = dims
    return out


def run_with_flags(argv: Sequence[str], prog: str, summary: str, flags: Sequence[Flag],
                   body: Callable[[Flags], int], stdout, stderr) -> int:
    """Parse, print usage on --help / errors, run ``body``."""
    try:
        parsed = parse_flags(argv, flags)
    except FlagError as e:
        if getattr(e, "help_requested", False):
            stdout.write(usage(prog, summary, flags))
            return 0
        stderr.write(f"ERROR: {e}\n")
        stderr.write(f"Run '{prog} --help' for the list of flags.\n")
        return 2
    return body(parsed)
