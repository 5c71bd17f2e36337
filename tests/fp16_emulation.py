"""fp16-storage emulation of a model: what storing tensors as IEEE half must cost, computed by an
independent engine (LiteRT's builtin kernels) instead of our delegate.

fp16_storage_model(mb, keep) rewrites a ModelBuilder's graph so that every float32 constant holds
its value rounded to float16, and every float32 op output passes through CAST float32 -> float16 ->
float32 (round to nearest even, inf past 65504: what vstore_half does) before any op reads it,
except the tensors named in `keep` (stored as float). Arithmetic stays float32 inside each op, as
in the delegate's kernels, so the rewritten model run by LiteRT gives the result of fp16 storage
with float arithmetic. It rounds at least as often as the delegate (which also rounds constants,
inputs and every tensor stored between kernels, but not values inside a fused kernel), so its
error is what fp16 storage costs on that graph.

overflowing_tensors(model, feeds) names the tensors whose float32 value (LiteRT builtin, same
input) exceeds fp16's range: the tensors a correct mixed-storage plan must keep in float. It is
an oracle for the test, computed from the reference run, not from the delegate."""
import copy

import numpy as np

from tflite_gpu.testing.builder import tensor_type

F16_MAX = 65504.0
_F32 = tensor_type(np.float32)
_F16 = tensor_type(np.float16)


def fp16_storage_model(mb, keep=()):
    mb = copy.deepcopy(mb)
    keep = set(keep)
    sg = mb._subgraphs[0]
    for t in sg._tensors:
        if t.buffer and t.type == _F32 and mb._buffers[t.buffer]:
            v = np.frombuffer(mb._buffers[t.buffer], np.float32)
            mb._buffers[t.buffer] = v.astype(np.float16).astype(np.float32).tobytes()
    ops = []
    for o in list(sg._ops):
        ops.append(o)
        for j, t in enumerate(o.outputs):
            tt = sg._tensors[t]
            if t < 0 or tt.type != _F32 or tt.is_variable or tt.name in keep:
                continue
            raw = sg.add_tensor(tt.shape, np.float32, name=tt.name + "/f32")
            half = sg.add_tensor(tt.shape, np.float16, name=tt.name + "/f16")
            o.outputs[j] = raw
            ops.append(mb._make_op("CAST", [raw], [half], None, 1, None, None))
            ops.append(mb._make_op("CAST", [half], [t], None, 1, None, None))
    sg._ops = ops
    return mb.build()


def half(x):
    """float32 values as fp16 storage keeps them (round to nearest even, inf past 65504)."""
    return np.asarray(x, np.float32).astype(np.float16).astype(np.float32)


def emulation_bound(emul, want):
    """The fp16-storage bound of one output: twice the emulation's rel-L2 (the delegate rounds a
    subset of what the emulation rounds; 2 allows for roundings landing on different sides) plus
    1e-5, the float32 bound, where fp16 costs nothing."""
    from harness import rel_l2
    return 2 * rel_l2(emul, want) + 1e-5


def round_feeds(feeds):
    """Inputs as the delegate stores them (half)."""
    return [np.asarray(x, np.float32).astype(np.float16).astype(np.float32) if x.dtype == np.float32 else x
            for x in feeds]


def _litert(model, preserve=False):
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    it = Interpreter(model_content=model, num_threads=1, experimental_preserve_all_tensors=preserve,
                     experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    it.allocate_tensors()
    return it


def run_litert(model, feeds):
    it = _litert(model)
    for d, x in zip(it.get_input_details(), feeds):
        it.set_tensor(d["index"], x)
    it.invoke()
    return [it.get_tensor(d["index"]) for d in it.get_output_details()]


def overflowing_tensors(model, feeds):
    from ai_edge_litert.interpreter import Interpreter
    n_graph = len(Interpreter(model_content=model).get_tensor_details())  # before the kernels' scratch
    it = _litert(model, preserve=True)
    for d, x in zip(it.get_input_details(), feeds):
        it.set_tensor(d["index"], x)
    it.invoke()
    out = set()
    for t in it.get_tensor_details():
        # Only the model's tensors: LiteRT's kernels add unnamed scratch tensors at prepare (a
        # reduction's accumulator), which no delegate stores.
        if t["dtype"] != np.float32 or t["index"] >= n_graph:
            continue
        try:
            v = it.get_tensor(t["index"])
        except ValueError:
            continue
        if v.size and not np.all(np.abs(v) <= F16_MAX):
            out.add(t["name"])
    return out
