"""Random family: RANDOM_UNIFORM, RANDOM_STANDARD_NORMAL, MULTINOMIAL (oracle: LiteRT
BUILTIN_WITHOUT_DEFAULT_DELEGATES). Every case has fixed nonzero seeds, and then both engines
draw the same Philox stream: the cases ask for bit-exact outputs (tol 0). Several invokes, re-seeding
at allocate_tensors and the seeds 0/0 (nondeterministic) case are in tests/test_random_ops.py.
num_samples 0 (LiteRT's Python cannot return the empty output) is in that file too.
CPU only: TFLite's GPU delegate takes none of these ops.
"""
import numpy as np

from harness import OpCase
from tflite_gpu.testing.builder import ModelBuilder

F32, I32, I64 = np.float32, np.int32, np.int64


def random_model(op, shape, seed, seed2, dynamic=False):
    mb = ModelBuilder()
    s = mb.add_input([len(shape)], I32, name="shape") if dynamic else mb.add_const(np.array(shape, I32), name="shape")
    y = mb.add_tensor(list(shape), F32, name="y")
    mb.add_op(op, [s], [y], options=dict(seed=seed, seed2=seed2))
    mb.mark_output(y)
    return mb.build()


def multinomial_model(batch, classes, num_samples, seed, seed2, out=I64, dynamic=False):
    mb = ModelBuilder()
    lg = mb.add_input([batch, classes], F32, name="logits")
    ns = mb.add_input([], I32, name="num_samples") if dynamic else mb.add_const(np.array(num_samples, I32))
    y = mb.add_tensor([batch, num_samples], out, name="samples")
    mb.add_op("MULTINOMIAL", [lg, ns], [y], options=dict(seed=seed, seed2=seed2))
    mb.mark_output(y)
    return mb.build()


def no_inputs(rng):
    return []


def shape_input(shape):
    return lambda rng: [np.array(shape, I32)]


def logits(batch, classes, extra=(), scale=2.0, special=False):
    def make(rng):
        x = rng.normal(0.0, scale, (batch, classes)).astype(F32)
        if special:  # -inf logits never drawn, a nan logit ignored, a row of only -inf
            x[0, 1] = -np.inf
            x[0, 3] = np.nan
            if batch > 1:
                x[1, :] = -np.inf
        return [x] + [np.asarray(e) for e in extra]
    return make


CASES = []
for _op in ("RANDOM_UNIFORM", "RANDOM_STANDARD_NORMAL"):
    for _name, _shape, _s, _s2 in [("2x3x5", (2, 3, 5), 42, 7), ("odd_7", (7,), 1, 0), ("one", (1,), 0, 5),
                                   ("4096", (64, 64), 123456789, 987654321),
                                   ("seed_high_bits", (3, 11), (1 << 40) + 3, -(1 << 50) - 9),
                                   ("negative_seeds", (2, 9), -1, -2), ("empty", (3, 0), 5, 5), ("scalar", (), 8, 9)]:
        CASES.append(OpCase(_op, _name, (lambda op=_op, s=_shape, a=_s, b=_s2: random_model(op, s, a, b)),
                            no_inputs, tol=0.0, gpu=False))
    CASES.append(OpCase(_op, "dynamic_shape", (lambda op=_op: random_model(op, (1, 1), 11, 12, dynamic=True)),
                        shape_input((3, 7, 5)), tol=0.0, gpu=False))

for _name, _b, _c, _n, _s, _s2, _out, _sp in [
        ("3x5_n7", 3, 5, 7, 42, 7, I64, False), ("1x100_n1000", 1, 100, 1000, 3, 4, I64, False),
        ("int32_out", 4, 9, 13, 77, 1, I32, False),
        ("one_class", 3, 1, 5, 9, 9, I64, False), ("inf_nan_logits", 3, 6, 17, 5, 6, I64, True)]:
    CASES.append(OpCase("MULTINOMIAL", _name,
                        (lambda b=_b, c=_c, n=_n, s=_s, s2=_s2, o=_out: multinomial_model(b, c, n, s, s2, o)),
                        logits(_b, _c, special=_sp), tol=0.0, gpu=False))
CASES.append(OpCase("MULTINOMIAL", "dynamic_num_samples", lambda: multinomial_model(2, 6, 1, 21, 22, dynamic=True),
                    logits(2, 6, extra=(np.array(9, I32),)), tol=0.0, gpu=False))
