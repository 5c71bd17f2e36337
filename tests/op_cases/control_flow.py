"""Control flow and resource variables: IF, WHILE, CALL_ONCE, VAR_HANDLE, READ_VARIABLE,
ASSIGN_VARIABLE. The models are multi-subgraph models from the test builder; the oracle is LiteRT
(BUILTIN_WITHOUT_DEFAULT_DELEGATES). These ops stay on the CPU (gpu=False): the GPU delegate
partitions the primary subgraph only. tests/test_control_flow.py runs the same models over
several consecutive invokes (state, reset_all_variables, signature runners) and hostile forms.
"""
import numpy as np

from harness import OpCase
from tflite_gpu.testing.builder import ModelBuilder

F32 = np.float32


def _cond_counter_positive(mb, var_specs):
    """cond(n, ...) = bool(n) (n a float counter; CAST float->bool is n != 0)."""
    cond = mb.add_subgraph("cond")
    ins = [cond.add_input(shape, dt, name=f"c{i}", shape_signature=sig)
           for i, (shape, dt, sig) in enumerate(var_specs)]
    c = cond.add_tensor([], np.bool_, name="c")
    cond.add_op("CAST", [ins[0]], [c], options=dict(in_data_type="FLOAT32", out_data_type="BOOL"))
    cond.mark_output(c)
    return cond


def while_counter_model(shape=(2, 3), post_mul=False):
    """vars (n, x): while n: n -= 1; x = x * 1.5 + 0.25. Iterations come from the input n.
    post_mul: the primary subgraph also computes x_out * x (a GPU-able op after the loop)."""
    mb = ModelBuilder()
    specs = [([], F32, None), (list(shape), F32, None)]
    cond = _cond_counter_positive(mb, specs)
    body = mb.add_subgraph("body")
    bn = body.add_input([], name="n")
    bx = body.add_input(list(shape), name="x")
    one = body.add_const(np.array(1.0, F32), name="one")
    k = body.add_const(np.array(1.5, F32), name="k")
    b = body.add_const(np.array(0.25, F32), name="b")
    n2 = body.add_tensor([], name="n2")
    t = body.add_tensor(list(shape), name="t")
    x2 = body.add_tensor(list(shape), name="x2")
    body.add_op("SUB", [bn, one], [n2])
    body.add_op("MUL", [bx, k], [t])
    body.add_op("ADD", [t, b], [x2])
    body.mark_output(n2)
    body.mark_output(x2)
    n = mb.add_input([], name="n")
    x = mb.add_input(list(shape), name="x")
    no = mb.add_tensor([], name="n_out")
    xo = mb.add_tensor(list(shape), name="x_out")
    mb.add_op("WHILE", [n, x], [no, xo],
              options=dict(cond_subgraph_index=cond.index, body_subgraph_index=body.index))
    mb.mark_output(no)
    if post_mul:
        xm = mb.add_tensor(list(shape), name="x_mul")
        mb.add_op("MUL", [xo, x], [xm])
        xo = xm
    mb.mark_output(xo)
    mb.add_signature("serving_default", {"n": n, "x": x}, {"n_out": no, "x_out": xo})
    return mb.build()


def while_grow_model(width=2):
    """vars (n, x[k, width]): while n: n -= 1; x = concat(x, x + 1, axis 0): k doubles every
    iteration, so the body is re-planned for each new shape (dynamic loop outputs)."""
    mb = ModelBuilder()
    specs = [([], F32, None), ([1, width], F32, [-1, width])]
    cond = _cond_counter_positive(mb, specs)
    body = mb.add_subgraph("body")
    bn = body.add_input([], name="n")
    bx = body.add_input([1, width], name="x", shape_signature=[-1, width])
    one = body.add_const(np.array(1.0, F32), name="one")
    n2 = body.add_tensor([], name="n2")
    xp = body.add_tensor([1, width], name="xp", shape_signature=[-1, width])
    x2 = body.add_tensor([2, width], name="x2", shape_signature=[-1, width])
    body.add_op("SUB", [bn, one], [n2])
    body.add_op("ADD", [bx, one], [xp])
    body.add_op("CONCATENATION", [bx, xp], [x2], options=dict(axis=0))
    body.mark_output(n2)
    body.mark_output(x2)
    n = mb.add_input([], name="n")
    x = mb.add_input([1, width], name="x")
    no = mb.add_tensor([], name="n_out")
    xo = mb.add_tensor([1, width], name="x_out", shape_signature=[-1, width])
    mb.add_op("WHILE", [n, x], [no, xo],
              options=dict(cond_subgraph_index=cond.index, body_subgraph_index=body.index))
    mb.mark_output(no)
    mb.mark_output(xo)
    return mb.build()


def if_model(shape=(2, 3), dynamic=False):
    """p ? then(x) : else(x). then: x + c. else: x * c, or (dynamic) concat(x, x * c) so the
    branches give different shapes and the IF output is dynamic."""
    mb = ModelBuilder()
    c = np.linspace(-1.0, 2.0, int(np.prod(shape)), dtype=F32).reshape(shape)
    then_sg = mb.add_subgraph("then")
    a = then_sg.add_input(list(shape), name="a")
    kc = then_sg.add_const(c, name="c")
    o = then_sg.add_tensor(list(shape), name="o")
    then_sg.add_op("ADD", [a, kc], [o])
    then_sg.mark_output(o)
    else_sg = mb.add_subgraph("else")
    a = else_sg.add_input(list(shape), name="a")
    kc = else_sg.add_const(c, name="c")
    o = else_sg.add_tensor(list(shape), name="o")
    else_sg.add_op("MUL", [a, kc], [o])
    if dynamic:
        o2 = else_sg.add_tensor([2 * shape[0]] + list(shape[1:]), name="o2")
        else_sg.add_op("CONCATENATION", [a, o], [o2], options=dict(axis=0))
        o = o2
    else_sg.mark_output(o)
    p = mb.add_input([], np.bool_, name="p")
    x = mb.add_input(list(shape), name="x")
    sig = [-1] + list(shape[1:]) if dynamic else None
    y = mb.add_tensor(list(shape), name="y", shape_signature=sig)
    mb.add_op("IF", [p, x], [y],
              options=dict(then_subgraph_index=then_sg.index, else_subgraph_index=else_sg.index))
    mb.mark_output(y)
    return mb.build()


def variable_model(shape=(3,), init=None, with_call_once=True, second_signature=False):
    """A tf.Variable as the converter writes it: CALL_ONCE(init) assigns the initial value; each
    invoke reads v, outputs r = v, y = v + x, and assigns v = y. With second_signature, a second
    signature ("peek", its own subgraph) reads the same variable (shared_name "v")."""
    init = np.arange(1, int(np.prod(shape)) + 1, dtype=F32).reshape(shape) if init is None else init
    mb = ModelBuilder()
    if with_call_once:
        isg = mb.add_subgraph("init")
        h = isg.add_tensor([], "RESOURCE", name="h")
        isg.add_op("VAR_HANDLE", [], [h], options=dict(container="", shared_name="v"))
        c = isg.add_const(init, name="init")
        isg.add_op("ASSIGN_VARIABLE", [h, c], [])
        mb.add_op("CALL_ONCE", [], [], options=dict(init_subgraph_index=isg.index))
    h0 = mb.add_tensor([], "RESOURCE", name="h")
    mb.add_op("VAR_HANDLE", [], [h0], options=dict(container="", shared_name="v"))
    x = mb.add_input(list(shape), name="x")
    r = mb.add_tensor(list(shape), name="r")
    mb.add_op("READ_VARIABLE", [h0], [r])
    y = mb.add_tensor(list(shape), name="y")
    mb.add_op("ADD", [r, x], [y])
    mb.add_op("ASSIGN_VARIABLE", [h0, y], [])
    mb.mark_output(r)
    mb.mark_output(y)
    mb.add_signature("step", {"x": x}, {"r": r, "y": y})
    if second_signature:
        peek = mb.add_subgraph("peek")
        if with_call_once:
            peek.add_op("CALL_ONCE", [], [], options=dict(init_subgraph_index=isg.index))
        hp = peek.add_tensor([], "RESOURCE", name="h")
        peek.add_op("VAR_HANDLE", [], [hp], options=dict(container="", shared_name="v"))
        s = peek.add_input(list(shape), name="s")
        rp = peek.add_tensor(list(shape), name="rp")
        peek.add_op("READ_VARIABLE", [hp], [rp])
        sc = peek.add_tensor(list(shape), name="scaled")
        peek.add_op("MUL", [rp, s], [sc])
        peek.mark_output(sc)
        mb.add_signature("peek", {"s": s}, {"scaled": sc}, subgraph_index=peek.index)
    return mb.build()


def nested_model():
    """WHILE whose body holds an IF (p = n > 2 via CAST of n - 2.5 sign... kept simple: the IF
    condition is an input carried through the loop) and a variable counter updated inside the
    body: nested subgraph calls and state written from a loop body."""
    mb = ModelBuilder()
    specs = [([], F32, None), ([], np.bool_, None), ([4], F32, None)]
    cond = _cond_counter_positive(mb, specs)
    then_sg = mb.add_subgraph("then")
    a = then_sg.add_input([4], name="a")
    k = then_sg.add_const(np.array([1.0, -1.0, 0.5, 2.0], F32), name="k")
    o = then_sg.add_tensor([4], name="o")
    then_sg.add_op("ADD", [a, k], [o])
    then_sg.mark_output(o)
    else_sg = mb.add_subgraph("else")
    a = else_sg.add_input([4], name="a")
    k = else_sg.add_const(np.array(0.5, F32), name="k")
    o = else_sg.add_tensor([4], name="o")
    else_sg.add_op("MUL", [a, k], [o])
    else_sg.mark_output(o)
    body = mb.add_subgraph("body")
    bn = body.add_input([], name="n")
    bp = body.add_input([], np.bool_, name="p")
    bx = body.add_input([4], name="x")
    one = body.add_const(np.array(1.0, F32), name="one")
    n2 = body.add_tensor([], name="n2")
    body.add_op("SUB", [bn, one], [n2])
    x2 = body.add_tensor([4], name="x2")
    body.add_op("IF", [bp, bx], [x2],
                options=dict(then_subgraph_index=then_sg.index, else_subgraph_index=else_sg.index))
    # count iterations in a resource variable
    h = body.add_tensor([], "RESOURCE", name="h")
    body.add_op("VAR_HANDLE", [], [h], options=dict(container="c", shared_name="iters"))
    cnt = body.add_tensor([1], name="cnt")
    body.add_op("READ_VARIABLE", [h], [cnt])
    cnt2 = body.add_tensor([1], name="cnt2")
    body.add_op("ADD", [cnt, one], [cnt2])
    body.add_op("ASSIGN_VARIABLE", [h, cnt2], [])
    np_ = body.add_tensor([], np.bool_, name="np")
    body.add_op("LOGICAL_AND", [bp, bp], [np_])
    body.mark_output(n2)
    body.mark_output(np_)
    body.mark_output(x2)
    # main: init counter to 0, loop, read counter
    hm = mb.add_tensor([], "RESOURCE", name="h")
    mb.add_op("VAR_HANDLE", [], [hm], options=dict(container="c", shared_name="iters"))
    zero = mb.add_const(np.zeros(1, F32), name="zero")
    mb.add_op("ASSIGN_VARIABLE", [hm, zero], [])
    n = mb.add_input([], name="n")
    p = mb.add_input([], np.bool_, name="p")
    x = mb.add_input([4], name="x")
    no = mb.add_tensor([], name="n_out")
    po = mb.add_tensor([], np.bool_, name="p_out")
    xo = mb.add_tensor([4], name="x_out")
    mb.add_op("WHILE", [n, p, x], [no, po, xo],
              options=dict(cond_subgraph_index=cond.index, body_subgraph_index=body.index))
    cnt_out = mb.add_tensor([1], name="iters")
    mb.add_op("READ_VARIABLE", [hm], [cnt_out])
    mb.mark_output(xo)
    mb.mark_output(cnt_out)
    return mb.build()


def _n(v):
    return lambda rng: np.array(v, F32)


def _x(shape):
    return lambda rng: rng.standard_normal(shape).astype(F32)


CASES = [
    OpCase("WHILE", "counter_3", while_counter_model,
           lambda rng: [np.array(3.0, F32), rng.standard_normal((2, 3)).astype(F32)], gpu=False),
    OpCase("WHILE", "counter_0_iterations", while_counter_model,
           lambda rng: [np.array(0.0, F32), rng.standard_normal((2, 3)).astype(F32)], gpu=False),
    OpCase("WHILE", "grow_4", while_grow_model,
           lambda rng: [np.array(4.0, F32), rng.standard_normal((1, 2)).astype(F32)], gpu=False),
    OpCase("WHILE", "nested_if_and_variable", nested_model,
           lambda rng: [np.array(3.0, F32), np.array(True), rng.standard_normal(4).astype(F32)], gpu=False),
    OpCase("IF", "then", if_model, lambda rng: [np.array(True), rng.standard_normal((2, 3)).astype(F32)], gpu=False),
    OpCase("IF", "else", if_model, lambda rng: [np.array(False), rng.standard_normal((2, 3)).astype(F32)], gpu=False),
    OpCase("IF", "dynamic_else", lambda: if_model(dynamic=True),
           lambda rng: [np.array(False), rng.standard_normal((2, 3)).astype(F32)], gpu=False),
    OpCase("IF", "dynamic_then", lambda: if_model(dynamic=True),
           lambda rng: [np.array(True), rng.standard_normal((2, 3)).astype(F32)], gpu=False),
]
for _op in ("CALL_ONCE", "VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE"):
    CASES.append(OpCase(_op, "tf_variable_step", variable_model,
                        lambda rng: [rng.standard_normal(3).astype(F32)], gpu=False))
