"""The GPU "missing kernels" test: every op TFLite's GPU delegate accepts
(tests/data/tflite_gpu_delegate_ops.txt, taken from its public model_builder.cc / custom parsers,
sources named there) must have a GPU kernel here (tflite_gpu.supported_ops()' has_gpu_kernel),
unless PENDING below names it with the reason. PENDING may only shrink.

Each kernel sits behind its op's one support check (a reason when a node cannot run there); the
op harness cases with gpu=True run them against our reference CPU kernels (tests/test_gpu_ops.py).
Alias custom codes must resolve to the op-table row the list names (a model using the alias runs
that op: see the alias_* cases in tests/op_cases/mediapipe.py).
"""
import os

import tflite_gpu

HERE = os.path.dirname(os.path.abspath(__file__))
LIST = os.path.join(HERE, "data", "tflite_gpu_delegate_ops.txt")

# op -> why it has no GPU kernel here. ==> remove the line when the kernel lands.
PENDING = {}


def _delegate_ops():
    out = []
    with open(LIST) as f:
        for line in f:
            line = line.split("#", 1)[0].split()
            if not line:
                continue
            kind, name = line[0], line[1]
            assert kind in ("builtin", "custom"), line
            out.append((kind, name, line[2] if len(line) > 2 else name))
    return out


def _ours():
    by_builtin, by_custom = {}, {}
    for o in tflite_gpu.supported_ops():
        if o["custom_code"] is None:
            by_builtin[o["name"]] = o
        else:
            by_custom[o["custom_code"]] = o
    return by_builtin, by_custom


def _lacking():
    by_builtin, by_custom = _ours()
    out = {}
    for kind, name, ours in _delegate_ops():
        o = (by_builtin if kind == "builtin" else by_custom).get(ours)
        if o is None:
            out[name] = "not in the op table"
        elif not o["has_gpu_kernel"]:
            out[name] = "no GPU kernel"
    return out


def test_list_is_well_formed():
    ops = _delegate_ops()
    names = [n for _, n, _ in ops]
    assert len(names) == len(set(names)), "duplicate lines"
    kinds = [k for k, _, _ in ops]
    assert (kinds.count("builtin"), kinds.count("custom")) == (80, 9), "the list as checked in: 80 builtin + 9 custom"


def test_every_gpu_delegate_op_has_a_gpu_kernel():
    lacking = _lacking()
    print(f"\nTFLite GPU delegate ops: {len(_delegate_ops())}; with a GPU kernel here: "
          f"{len(_delegate_ops()) - len(lacking)}")
    for name, why in sorted(lacking.items()):
        print(f"  {name}: {why}" + (f" (pending: {PENDING[name]})" if name in PENDING else ""))
    unexpected = sorted(n for n in lacking if n not in PENDING)
    assert not unexpected, f"ops TFLite's GPU delegate takes that lack a GPU kernel here: {unexpected}"


def test_pending_list_only_shrinks():
    done = sorted(n for n in PENDING if n not in _lacking())
    assert not done, f"now with a GPU kernel: remove {done} from PENDING in tests/test_gpu_op_coverage.py"


def test_alias_custom_codes_resolve():
    """A model whose custom code is an alias loads as the listed op (same parse and kernels)."""
    import numpy as np
    from op_cases.mediapipe import ttb_model, l2tm_model, _V2
    for model in (ttb_model((1, 4, 5, 2), 1, dict(output_size=[3, 3]), code="TransformTensor"),
                  l2tm_model((1, 478, 3), _V2, 2, code="Landmarks2TransformMatrixV2")):
        it = tflite_gpu.Interpreter(model_content=model)
        it.allocate_tensors()
        for d in it.get_input_details():
            it.set_tensor(d["index"], np.ones(d["shape"], np.float32))
        it.invoke()
