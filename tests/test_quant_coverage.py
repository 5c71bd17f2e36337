"""The quantized-kernel column of the op table (supported_ops()[i]['quantized_kernels']) against
the op harness and against the list of ops LiteRT runs quantized.

LITERT_QUANTIZED is checked in, with its source: the op list of issue 7 ("Quantized models end to
end") plus ops of our table whose TFLite builtin kernels take quantized types; the types per op
are the ones ai-edge-litert 2.3's builtin resolver (BUILTIN_WITHOUT_DEFAULT_DELEGATES) accepts,
probed with single-op models built by tflite_gpu.testing.quant (allocate + invoke; an op refusing
a type raises "... only supports ..."), and for the conv family and the LSTMs from TFLite's kernel
sources (tensorflow/lite/kernels/{conv,depthwise_conv,fully_connected,transpose_conv,batch_matmul,
lstm,unidirectional_sequence_lstm}.cc: int8 / uint8 / int16x8 / hybrid eval paths).

PENDING lists (op, kind) pairs LiteRT runs but our table does not have yet. It may only shrink:
the test fails when a pending pair gets its kernel (column set) and is still listed.
"""
import tflite_gpu
from harness import all_cases

I8, U8, I16, HYB = "int8", "uint8", "int16x8", "hybrid"

LITERT_QUANTIZED = {
    # conv family (issue 7; TFLite kernel sources)
    "CONV_2D": {I8, U8, I16, HYB},
    "DEPTHWISE_CONV_2D": {I8, U8, I16, HYB},
    "FULLY_CONNECTED": {I8, U8, I16, HYB},
    "TRANSPOSE_CONV": {I8, U8, I16},
    "BATCH_MATMUL": {I8, I16, HYB},
    "LSTM": {I8, HYB},
    "UNIDIRECTIONAL_SEQUENCE_LSTM": {I8, HYB},
    # sequence ops (issue 8; TFLite basic_rnn, unidirectional/bidirectional_sequence_rnn,
    # bidirectional_sequence_lstm, svdf .cc: hybrid eval paths; SVDF's full-integer path)
    "RNN": {HYB},
    "UNIDIRECTIONAL_SEQUENCE_RNN": {HYB},
    "BIDIRECTIONAL_SEQUENCE_RNN": {HYB},
    "BIDIRECTIONAL_SEQUENCE_LSTM": {HYB},
    "SVDF": {I8, HYB},
    # elementwise (probed)
    "ADD": {I8, U8, I16},
    "SUB": {I8, U8, I16},
    "MUL": {I8, U8, I16},
    "DIV": {I8, U8, I16},
    "SQUARED_DIFFERENCE": {I8},
    "MAXIMUM": {I8, U8, I16},
    "MINIMUM": {I8, U8, I16},
    "LOGISTIC": {I8, U8, I16},
    "TANH": {I8, U8, I16},
    "HARD_SWISH": {I8, U8},
    "LEAKY_RELU": {I8, U8, I16},
    "PRELU": {I8, U8, I16},
    "RELU": {I8, U8, I16},
    "RELU6": {I8, U8, I16},
    "RELU_N1_TO_1": {I8, U8},
    "EXP": {I8, I16},
    "SQRT": {I8, I16},  # SQRT v2 (ai-edge-litert 2.3, probed in 33e67f6; cases in op_cases/versions.py)
    "QUANTIZE": {I8, U8, I16},
    "DEQUANTIZE": {I8, U8, I16},
    # comparisons (issue 8; TFLite comparisons.cc ComparisonQuantized for int8/uint8; run in
    # tests/op_cases/compare.py against LiteRT builtin)
    "EQUAL": {I8, U8},
    "NOT_EQUAL": {I8, U8},
    "LESS": {I8, U8},
    "LESS_EQUAL": {I8, U8},
    "GREATER": {I8, U8},
    "GREATER_EQUAL": {I8, U8},
    # pooling family (probed)
    "AVERAGE_POOL_2D": {I8, U8, I16},
    "MAX_POOL_2D": {I8, U8, I16},
    "MEAN": {I8, U8, I16},
    "SUM": {I8, U8, I16},
    "SOFTMAX": {I8, U8, I16},
    "RESIZE_BILINEAR": {I8, U8, I16},
    "RESIZE_NEAREST_NEIGHBOR": {I8, U8, I16},
    "ARG_MAX": {I8, U8},
    # shape family (issue 7; type-generic copies with TFLite's quant-param checks)
    "CONCATENATION": {I8, U8, I16},
    "PAD": {I8, U8, I16},
    "PADV2": {I8, U8, I16},
    "MIRROR_PAD": {I8, U8, I16},
    "RESHAPE": {I8, U8, I16},
    "STRIDED_SLICE": {I8, U8, I16},
    "SLICE": {I8, U8, I16},
    "TRANSPOSE": {I8, U8, I16},
    "GATHER": {I8, U8, I16},
    "SPLIT": {I8, U8, I16},
    "PACK": {I8, U8, I16},
    "UNPACK": {I8, U8, I16},
    "SPACE_TO_DEPTH": {I8, U8},
    "DEPTH_TO_SPACE": {I8, U8},
}

# (op, kind) pairs not done yet. Only ever remove entries.
PENDING = set()

TABLE = {op["name"]: set(op["quantized_kernels"]) for op in tflite_gpu.supported_ops()}


def test_every_quantized_kernel_has_harness_cases():
    have = {(c.op, c.quant) for c in all_cases() if c.quant}
    missing = [(op, k) for op, kinds in sorted(TABLE.items()) for k in sorted(kinds)
               if (op, k) not in have]
    assert not missing, f"quantized kernels in the table without op-harness cases of that type: {missing}"


def test_cases_name_known_quant_kinds():
    bad = [c.id for c in all_cases() if c.quant not in (None, I8, U8, I16, HYB)]
    assert not bad, f"cases with an unknown quant kind: {bad}"


def test_litert_quantized_ops_have_the_column_set():
    pending_now = sorted((op, k) for op, k in PENDING if op in TABLE)
    print(f"\nPENDING quantized kernels ({len(pending_now)}): "
          + ", ".join(f"{op}:{k}" for op, k in pending_now))
    junk = sorted(p for p in PENDING if p[0] not in LITERT_QUANTIZED or p[1] not in LITERT_QUANTIZED[p[0]])
    assert not junk, f"PENDING entries not in LITERT_QUANTIZED: {junk}"
    done_but_listed = [(op, k) for op, k in pending_now if k in TABLE[op]]
    assert not done_but_listed, f"done: remove from PENDING: {done_but_listed}"
    missing = sorted((op, k) for op, kinds in LITERT_QUANTIZED.items() if op in TABLE
                     for k in kinds if k not in TABLE[op] and (op, k) not in PENDING)
    assert not missing, f"ops LiteRT runs quantized without our kernel (and not PENDING): {missing}"


def test_column_lists_no_kind_litert_refuses():
    extra = {op: sorted(TABLE[op] - kinds) for op, kinds in LITERT_QUANTIZED.items()
             if op in TABLE and TABLE[op] - kinds}
    assert not extra, f"column lists kinds LiteRT's builtin kernels do not run: {extra}"
