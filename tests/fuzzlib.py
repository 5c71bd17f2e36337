"""Long-lived model fuzzing (issue 12).

A worker process runs many mutants one after another in ONE interpreter process (state carries
from file to file: allocator, thread pool, the GPU delegate and its program cache), writing each
mutant to `<out>/current.tflite` before it runs it. A supervisor reads the worker's progress; when
the worker dies by a signal or stops making progress (hang), the supervisor keeps the mutant that
did it as `crash-*.tflite` / `hang-*.tflite`, and starts a new worker where the old one stopped.

Mutators: byte flips / sets, truncations, splices, and field-aware mutations of the flatbuffer via
the schema's object API (ai_edge_litert.schema_py_generated): tensor / buffer / opcode indices,
-1 (the optional-input marker) and out-of-range values, shapes and shape signatures, tensor types,
quantization vectors (lengths, zero/NaN/inf scales, zero points, quantized dimension), builtin
option integers, subgraph inputs/outputs, signature maps, opcode codes/versions, buffer
truncation, cycles, invalid UTF-8 names, STRING buffer layouts (count, offsets, lengths; numeric
constants retyped STRING and back), custom option bytes; for control-flow models (WHILE, IF, CALL_ONCE + resource
variables) the subgraph indices of IF/WHILE/CALL_ONCE (self-calls, cycles through a caller,
the primary subgraph, -1, out of range), CALL_ONCE / copies of IF and WHILE grafted into the
subgraphs they call, swapped and reordered subgraphs. A WHILE that never stops is a valid program:
workers bound it (TFLITE_GPU_MAX_WHILE_ITERATIONS) so only an engine hang counts as a hang.

Run standalone for the big run:  python tests/fuzzlib.py --mutants 100000 --gpu-share 0.2 --out DIR
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import queue
import random
import shutil
import subprocess
import tempfile
import sys
import threading
import time
from typing import Callable, Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS_DIR = os.path.join(HERE, "fuzz_corpus")
PROGRESS = "@@FUZZ "
ALLOWED = (ValueError, RuntimeError)  # the documented error types; anything else is a finding


# ---------------------------------------------------------------- seed models
def conv_reshape_builder():
    """The small CONV_2D + RESHAPE model with a signature (a fuzz seed; tests/test_model_fuzz.py too)."""
    import numpy as np
    from tflite_gpu.testing.builder import ModelBuilder
    b = ModelBuilder()
    x = b.add_input([1, 5, 5, 3])
    w = b.add_const(np.random.default_rng(0).standard_normal((4, 3, 3, 3)).astype(np.float32))
    bias = b.add_const(np.zeros(4, np.float32))
    y = b.add_tensor([1, 5, 5, 4])
    z = b.add_tensor([1, 25, 4])
    s = b.add_const(np.array([1, 25, 4], np.int32))
    b.add_op("CONV_2D", [x, w, bias], [y], options=dict(padding="SAME", stride_w=1, stride_h=1,
                                                        fused_activation_function="RELU"))
    b.add_op("RESHAPE", [y, s], [z])
    b.mark_output(z)
    b.add_signature("s", {"x": x}, {"z": z})
    return b


def seed_models(cache_dir: Optional[str] = None) -> Dict[str, bytes]:
    """Small models covering the op families, float and quantized, CPU and GPU paths."""
    from tflite_gpu.testing import zoo

    if cache_dir:
        os.makedirs(cache_dir, exist_ok=True)
        idx = os.path.join(cache_dir, "index.json")
        if os.path.exists(idx):
            names = json.load(open(idx))
            return {n: open(os.path.join(cache_dir, n + ".tflite"), "rb").read() for n in names}
    out: Dict[str, bytes] = {}
    cr = conv_reshape_builder()
    out["conv_reshape"] = cr.build()
    out["conv_reshape_large"] = cr.build(large_buffers=True)
    makers: Dict[str, Callable[[], bytes]] = {
        "encoder_decoder16": lambda: zoo.encoder_decoder(seed=1, input_size=16),
        "lstm": lambda: zoo.lstm_model(time_steps=3, input_size=4, num_units=8),
        "basic_lstm": lambda: zoo.basic_lstm_model(input_size=4, num_units=8),
        "mobilenet_v2_32": lambda: zoo.mobilenet_v2(input_size=32, alpha=0.35, num_classes=10),
        "mobilenet_v3_small_32": lambda: zoo.mobilenet_v3_small(input_size=32, alpha=0.75, num_classes=10),
        "mobilenet_v1_32_fp16": lambda: zoo.mobilenet_v1(input_size=32, alpha=0.25, num_classes=10,
                                                         weights_dtype="float16"),
        "mobilenet_v1_32_int8": lambda: zoo.quantized(zoo.mobilenet_v1, "int8", input_size=32, alpha=0.25,
                                                      num_classes=10),
        "mobilenet_v2_32_uint8io": lambda: zoo.quantized(zoo.mobilenet_v2, "uint8io", input_size=32, alpha=0.35,
                                                         num_classes=10),
        "mobilenet_v1_32_dynamic": lambda: zoo.quantized(zoo.mobilenet_v1, "dynamic", input_size=32, alpha=0.25,
                                                         num_classes=10),
    }
    # Control flow + resource variables (tests/op_cases/control_flow.py; the worker has tests/ on
    # its path): recursion and subgraph-index mutations need multi-subgraph seeds.
    def cf(fn_name, **kw):
        def make():
            from op_cases import control_flow
            return getattr(control_flow, fn_name)(**kw)
        return make
    def mediapipe_chain():
        from op_cases import mediapipe
        return mediapipe.attention_chain_model()
    makers.update({
        "cf_while_counter": cf("while_counter_model", post_mul=True),
        "cf_while_grow": cf("while_grow_model"),
        "cf_if_static": cf("if_model"),
        "cf_if_dynamic": cf("if_model", dynamic=True),
        "cf_variable_call_once": cf("variable_model", second_signature=True),
        "cf_nested_while_if_var": cf("nested_model"),
        # MediaPipe's landmark/crop custom ops: mutations reach their FlexBuffer options.
        "mediapipe_attention_chain": mediapipe_chain,
        # Small quantized models, so quantization vectors (per-tensor and per-channel int8, int16x8)
        # make up a large share of their tensors' mutations.
        "encoder_decoder16_int8": lambda: zoo.quantized(zoo.encoder_decoder, "int8", seed=1, input_size=16),
        "encoder_decoder16_int16x8": lambda: zoo.quantized(zoo.encoder_decoder, "int16x8", seed=1, input_size=16),
        "mobilenet_v1_32_int16x8": lambda: zoo.quantized(zoo.mobilenet_v1, "int16x8", input_size=32, alpha=0.25,
                                                         num_classes=10),
    })
    makers.update(_lookup_seed_makers())
    for name, fn in makers.items():
        try:
            out[name] = fn()
        except Exception as e:  # a zoo signature changed: fuzz the others, say so
            print(f"fuzz: seed model {name} unavailable ({type(e).__name__}: {e})", file=sys.stderr)
    if cache_dir:
        for n, d in out.items():
            open(os.path.join(cache_dir, n + ".tflite"), "wb").write(d)
        json.dump(sorted(out), open(os.path.join(cache_dir, "index.json"), "w"))
    return out


def _lookup_seed_makers() -> Dict[str, Callable[[], bytes]]:
    """Seeds for the ops of issue 8's last round: STRING tensors with constant string buffers
    (HASHTABLE_LOOKUP values, hashtable import keys/values and defaults), hashtable chains
    (HASHTABLE -> IMPORT -> FIND / SIZE; one imported from a CALL_ONCE init subgraph), SKIP_GRAM,
    LSH_PROJECTION (float and STRING input), EMBEDDING_LOOKUP_SPARSE, EMBEDDING_LOOKUP v5 with an
    INT4 table, INT4 CONV_2D / DEPTHWISE_CONV_2D weights, full-integer LSTM and
    UNIDIRECTIONAL_SEQUENCE_LSTM (int8x8_16), MediaPipe pooling custom ops (GPU kernels)."""
    import numpy as np

    def lookup(fn_name, *a, **kw):
        def make():
            from op_cases import lookup as lk
            return getattr(lk, fn_name)(*a, **kw)
        return make

    def versions(fn_name, *a, **kw):
        def make():
            from op_cases import versions as v
            return getattr(v, fn_name)(*a, **kw)[0]()
        return make

    def lstm8(**kw):
        def make():
            from op_cases import lstm
            return lstm.int8_lstm_model(**kw)
        return make

    def mediapipe(fn_name, *a, **kw):
        def make():
            from op_cases import mediapipe as mp
            return getattr(mp, fn_name)(*a, **kw)
        return make

    def call_once_table():
        from tflite_gpu.testing.builder import ModelBuilder
        mb = ModelBuilder()
        isg = mb.add_subgraph("init")
        h = isg.add_tensor([1], "RESOURCE")
        isg.add_op("HASHTABLE", [], [h], options=dict(table_id=7, key_dtype="STRING", value_dtype="INT64"))
        k = isg.add_const(np.array([b"cat", b"dog", b"emu"], dtype=object))
        v = isg.add_const(np.array([10, 20, 30], np.int64))
        isg.add_op("HASHTABLE_IMPORT", [h, k, v], [])
        mb.add_op("CALL_ONCE", [], [], options=dict(init_subgraph_index=isg.index))
        h0 = mb.add_tensor([1], "RESOURCE")
        mb.add_op("HASHTABLE", [], [h0], options=dict(table_id=7, key_dtype="STRING", value_dtype="INT64"))
        q = mb.add_input([4], "STRING", name="words")
        d = mb.add_const(np.array([-1], np.int64))
        o = mb.add_tensor([4], np.int64)
        mb.add_op("HASHTABLE_FIND", [h0, q, d], [o])
        n = mb.add_tensor([1], np.int64)
        mb.add_op("HASHTABLE_SIZE", [h0], [n])
        # a second table (INT64 -> STRING) whose FIND output feeds SKIP_GRAM
        h1 = mb.add_tensor([1], "RESOURCE")
        mb.add_op("HASHTABLE", [], [h1], options=dict(table_id=8, key_dtype="INT64", value_dtype="STRING"))
        mb.add_op("HASHTABLE_IMPORT", [h1, mb.add_const(np.array([10, 20], np.int64)),
                                       mb.add_const(np.array([b"a b c", b"d e"], dtype=object))], [])
        s = mb.add_tensor([4], "STRING")
        mb.add_op("HASHTABLE_FIND", [h1, o, mb.add_const(np.array([b"x y"], dtype=object))], [s])
        g = mb.add_tensor([1], "STRING")
        mb.add_op("SKIP_GRAM", [s], [g], options=dict(ngram_size=2, max_skip_size=1, include_all_ngrams=True))
        for t in (o, n, s, g):
            mb.mark_output(t)
        return mb.build()

    words = np.array([b"minus seven", b"-2", b"", b"three", b"f\xc3\xbcnf", b"ten", b"eleven", b"x" * 70],
                     dtype=object)
    return {
        "str_hashtable_lookup": lookup("hl_model", [-7, -2, 0, 3, 4, 10, 11, 50], words, 5),
        "str_hashtable_lookup_f32": lookup("hl_model", [9, 1, 5, 3], np.arange(8, dtype=np.float32).reshape(4, 2), 3),
        "str_hashtable_i64_to_str": lookup("hashtable_model", "INT64", [5, -3, 1 << 40, 0], [b"five", b"m3", b"big", b""],
                                           b"?", (2, 3)),
        "str_hashtable_str_to_i64": lookup("hashtable_model", "STRING", [b"apple", b"", b"kiwi fruit"], [1, -2, 9], -1,
                                           (4,), import_twice=([b"x"], [3])),
        "str_hashtable_call_once_chain": call_once_table,
        "str_skip_gram": lookup("skip_gram_model", 3, 1, True),
        "str_lsh_string_input": lookup("lsh_model", "SPARSE", 3, 5, (3,), "STRING"),
        "lsh_dense_weight_input": lookup("lsh_model", "DENSE", 4, 6, (5, 3), weight_input=True),
        "embedding_lookup_sparse": lookup("els_model", 6, 2, (3, 4), (5, 2), "MEAN"),
        "embedding_lookup_int4": versions("_emb_packed", "INT4", True),
        "conv_int8_x_int4": versions("_conv_int4", "CONV_2D", "INT8", True),
        "conv_f32_x_int4": versions("_conv_int4", "CONV_2D", "FLOAT32", False),
        "dwconv_int8_x_int4": versions("_conv_int4", "DEPTHWISE_CONV_2D", "INT8", True, stride=2, padding="VALID"),
        "lstm_int8_seq": lstm8(time=3, n_cell=6, peephole=True),
        "lstm_int8_layer_norm_proj": lstm8(op="LSTM", n_cell=6, n_output=4, projection=True, proj_bias=True,
                                           layer_norm=True, cifg=True, n_intermediates=5),
        "mediapipe_argmax_pool": mediapipe("argmax_model", (1, 6, 6, 3), filt=(3, 3)),
        "mediapipe_unpool": mediapipe("unpool_model", (1, 3, 3, 2)),
    }


# ---------------------------------------------------------------- mutators
def _interesting_int(rng: random.Random, n: int) -> int:
    return rng.choice([-1, -1, -2, 0, 1, n - 1, n, n + 1, n + 7, rng.randrange(max(1, n)), 2**31 - 1, -2**31,
                       65535, 1 << 20])


def _interesting_dim(rng: random.Random) -> int:
    return rng.choice([0, -1, 1, 2, 3, 7, 64, 1 << 16, 1 << 24, 2**31 - 1, -2, rng.randrange(1, 33)])


def _u32(v: int) -> int:
    return v & 0xFFFFFFFF


def field_mutate(data: bytes, rng: random.Random) -> Optional[bytes]:
    try:
        return _field_mutate(data, rng)
    except Exception:  # a mutation the object API cannot express: the caller falls back to bytes
        return None


def _field_mutate(data: bytes, rng: random.Random) -> Optional[bytes]:
    import flatbuffers
    import numpy as np
    from ai_edge_litert import schema_py_generated as S

    try:
        m = S.ModelT.InitFromPackedBuf(data, 0)
    except Exception:
        return None
    if not m.subgraphs:
        return None
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        sg = rng.choice(m.subgraphs)
        tensors = sg.tensors or []
        ops = sg.operators or []
        nt = len(tensors)
        kind = rng.randrange(18)
        if len(m.subgraphs) > 1 and rng.random() < 0.35:
            _control_flow_mutate(m, rng, S)
            continue
        if kind in (0, 1) and ops:  # operator input / output index (incl. the -1 optional marker)
            op = rng.choice(ops)
            vec = op.inputs if kind == 0 else op.outputs
            if vec is not None and len(vec):
                vec = np.array(vec, np.int64)
                vec[rng.randrange(len(vec))] = rng.choice([-1, -1, -1, _interesting_int(rng, nt), rng.randrange(max(1, nt))])
                vec = np.clip(vec, -2**31, 2**31 - 1).astype(np.int32)
                if kind == 0:
                    op.inputs = vec
                else:
                    op.outputs = vec
            elif kind == 0:
                op.inputs = np.array([-1] * rng.randrange(1, 4), np.int32)
        elif kind == 2 and ops:  # add / drop operator inputs
            op = rng.choice(ops)
            v = list(op.inputs if op.inputs is not None else [])
            if v and rng.random() < 0.5:
                v.pop(rng.randrange(len(v)))
            else:
                v.insert(rng.randrange(len(v) + 1), rng.choice([-1, rng.randrange(max(1, nt))]))
            op.inputs = np.array(v, np.int32)
        elif kind == 3 and ops:  # opcode index
            op = rng.choice(ops)
            op.opcodeIndex = _u32(_interesting_int(rng, len(m.operatorCodes or [])))
        elif kind == 4 and tensors:  # buffer index
            t = rng.choice(tensors)
            t.buffer = _u32(_interesting_int(rng, len(m.buffers or [])))
        elif kind == 5 and tensors:  # shape
            t = rng.choice(tensors)
            shp = list(t.shape if t.shape is not None else [])
            r = rng.random()
            if shp and r < 0.6:
                shp[rng.randrange(len(shp))] = _interesting_dim(rng)
            elif shp and r < 0.8:
                shp.pop(rng.randrange(len(shp)))
            else:
                shp.insert(rng.randrange(len(shp) + 1), _interesting_dim(rng))
            t.shape = np.array(shp, np.int32)
        elif kind == 6 and tensors:  # shape signature
            t = rng.choice(tensors)
            shp = list(t.shapeSignature if t.shapeSignature is not None else (t.shape if t.shape is not None else []))
            if shp:
                shp[rng.randrange(len(shp))] = rng.choice([-1, 0, _interesting_dim(rng)])
            t.shapeSignature = np.array(shp, np.int32)
        elif kind == 7 and tensors:  # tensor type
            rng.choice(tensors).type = rng.randrange(0, 23)
        elif kind == 8 and tensors:  # quantization vectors
            t = rng.choice(tensors)
            q = t.quantization or S.QuantizationParametersT()
            what = rng.randrange(5)
            if what == 0:
                q.scale = np.array([rng.choice([0.0, -1.0, float("nan"), float("inf"), 1e-30, 1e30, 0.5])]
                                   * rng.randrange(0, 5), np.float32)
            elif what == 1:
                q.zeroPoint = np.array([rng.choice([0, -129, 128, 255, 2**40, -2**40])] * rng.randrange(0, 5), np.int64)
            elif what == 2:
                q.quantizedDimension = rng.choice([-1, 0, 1, 3, 4, 7, 2**31 - 1])
            elif what == 3:
                n = rng.randrange(0, 9)
                q.scale = np.full(n, 0.1, np.float32)
                q.zeroPoint = np.zeros(rng.choice([n, n + 1, max(0, n - 1)]), np.int64)
            else:
                q.min = np.array([rng.uniform(-10, 0)], np.float32)
                q.max = np.array([rng.uniform(-10, 10)], np.float32)
            t.quantization = q
        elif kind == 9 and ops:  # builtin option integers (subgraph indices of IF/WHILE/CALL_ONCE too)
            op = rng.choice(ops)
            o = op.builtinOptions
            if o is not None:
                fields = [k for k, v in vars(o).items() if isinstance(v, (int, bool, float)) or k.endswith("subgraphIndex")]
                if fields:
                    k = rng.choice(fields)
                    v = getattr(o, k)
                    if isinstance(v, float):
                        setattr(o, k, rng.choice([0.0, -1.0, float("nan"), float("inf"), 1e30]))
                    elif isinstance(v, bool):
                        setattr(o, k, not v)
                    else:
                        setattr(o, k, rng.choice([-1, 0, 1, 2, 3, 5, 6, 100, 127, -128, len(m.subgraphs), len(m.subgraphs) + 1]))
            elif rng.random() < 0.5:
                op.builtinOptionsType = rng.randrange(1, 130)  # options of another op's type: absent table
        elif kind == 10:  # subgraph inputs / outputs
            lst = list(sg.inputs if sg.inputs is not None else []) if rng.random() < 0.5 else None
            if lst is not None:
                if lst:
                    lst[rng.randrange(len(lst))] = _interesting_int(rng, nt)
                else:
                    lst.append(_interesting_int(rng, nt))
                sg.inputs = np.clip(np.array(lst, np.int64), -2**31, 2**31 - 1).astype(np.int32)
            else:
                lst = list(sg.outputs if sg.outputs is not None else [])
                if lst:
                    lst[rng.randrange(len(lst))] = rng.choice([-1, rng.randrange(max(1, nt)), nt])
                sg.outputs = np.array(lst, np.int32)
        elif kind == 11 and m.signatureDefs:  # signature maps
            sd = rng.choice(m.signatureDefs)
            if rng.random() < 0.4:
                sd.subgraphIndex = _u32(_interesting_int(rng, len(m.subgraphs)))
            else:
                tms = (sd.inputs or []) + (sd.outputs or [])
                if tms:
                    rng.choice(tms).tensorIndex = _u32(_interesting_int(rng, nt))
        elif kind == 12 and m.operatorCodes:  # opcode codes and versions
            oc = rng.choice(m.operatorCodes)
            r = rng.random()
            if r < 0.4:
                oc.builtinCode = rng.randrange(0, 210)
                oc.deprecatedBuiltinCode = min(127, oc.builtinCode)
            elif r < 0.7:
                oc.version = rng.choice([0, -1, 1, 2, 3, 7, 100])
            else:
                oc.builtinCode = 32
                oc.customCode = rng.choice([b"", b"\xff\xfe", b"TFLite_Detection_PostProcess", b"x" * 300])
        elif kind == 13 and m.buffers:  # truncate or grow a buffer
            bufs = [b for b in m.buffers if b.data is not None and len(b.data)]
            if bufs:
                b = rng.choice(bufs)
                b.data = b.data[:rng.randrange(len(b.data))] if rng.random() < 0.7 else \
                    np.concatenate([b.data, np.zeros(rng.randrange(1, 64), np.uint8)])
        elif kind == 14 and ops:  # cycles / shared outputs
            op = rng.choice(ops)
            other = rng.choice(ops)
            if op.inputs is not None and len(op.inputs) and op.outputs is not None and len(op.outputs):
                op.inputs, op.outputs = np.array(op.inputs, np.int32), np.array(op.outputs, np.int32)
                if rng.random() < 0.5:
                    op.inputs[rng.randrange(len(op.inputs))] = op.outputs[0]
                elif other.outputs is not None and len(other.outputs):
                    op.outputs[0] = other.outputs[0]
        elif kind == 15 and tensors:  # names: invalid UTF-8, huge
            t = rng.choice(tensors)
            t.name = rng.choice([b"\xff\xfe\xfd", b"\xc3", b"a\x00b", b"n" * 5000])
        elif kind == 16 and tensors and m.buffers:  # STRING buffers: count, offsets, lengths
            _string_mutate(m, tensors, rng, S)
        elif kind == 17 and ops:  # custom options bytes (FlexBuffer maps of the MediaPipe ops)
            op = rng.choice(ops)
            co = op.customOptions
            if co is not None and len(co):
                co = bytearray(bytes(np.asarray(co, np.uint8)))
                for _ in range(rng.randrange(1, 4)):
                    i = rng.randrange(len(co))
                    co[i] = rng.choice([0, 0xFF, 0x7F, 0x80, 1, 2, 3, rng.randrange(256)])
                if rng.random() < 0.2:
                    co = co[:rng.randrange(len(co))]
                op.customOptions = np.frombuffer(bytes(co), np.uint8)
    try:
        bld = flatbuffers.Builder(max(1024, len(data)))
        bld.Finish(m.Pack(bld), file_identifier=b"TFL3")
        return bytes(bld.Output())
    except Exception:
        return None


def _string_mutate(m, tensors, rng: random.Random, S) -> None:
    """Mutates the serialized layout of a constant STRING tensor's buffer (int32 count, count + 1
    int32 offsets, bytes): the count, one offset (past the end, backwards, into the header,
    negative), the last offset, truncation inside the header, extra bytes; or makes a numeric
    constant a STRING tensor / a STRING constant another type."""
    import numpy as np
    nb = len(m.buffers)
    strs = [t for t in tensors if t.type == S.TensorType.STRING and 0 < t.buffer < nb
            and m.buffers[t.buffer].data is not None and len(m.buffers[t.buffer].data) >= 4]
    if not strs or rng.random() < 0.1:
        consts = [t for t in tensors if 0 < t.buffer < nb and m.buffers[t.buffer].data is not None
                  and len(m.buffers[t.buffer].data)]
        if consts:
            t = rng.choice(consts)
            t.type = S.TensorType.STRING if t.type != S.TensorType.STRING else rng.choice([2, 4, 3, 13])
        return
    t = rng.choice(strs)
    b = m.buffers[t.buffer]
    d = bytearray(bytes(np.asarray(b.data, np.uint8)))
    n = int.from_bytes(d[:4], "little", signed=True)
    nofs = max(0, min(n + 1, (len(d) - 4) // 4))

    def put(at, v):
        if at + 4 <= len(d):
            d[at:at + 4] = (v & 0xFFFFFFFF).to_bytes(4, "little")
    what = rng.randrange(7)
    if what == 0:  # the count
        put(0, rng.choice([0, -1, n - 1, n + 1, 2 * n, 2**31 - 1, -2**31, 1 << 20, (len(d) // 4)]))
    elif what == 1 and nofs:  # one offset
        i = rng.randrange(nofs)
        cur = int.from_bytes(d[4 + 4 * i:8 + 4 * i], "little", signed=True)
        put(4 + 4 * i, rng.choice([0, -1, 4, cur - 1, cur + 1, len(d), len(d) + 1, 2**31 - 1, -2**31, cur + 4096]))
    elif what == 2 and nofs >= 2:  # two offsets swapped (a string of negative length)
        i, j = rng.randrange(nofs), rng.randrange(nofs)
        a, c = bytes(d[4 + 4 * i:8 + 4 * i]), bytes(d[4 + 4 * j:8 + 4 * j])
        d[4 + 4 * i:8 + 4 * i], d[4 + 4 * j:8 + 4 * j] = c, a
    elif what == 3:  # truncated (inside the header or the bytes)
        d = d[:rng.randrange(len(d))]
    elif what == 4:  # extra bytes (the last offset no longer the size), optionally fixed up
        d += bytes(rng.randrange(1, 9))
        if nofs == n + 1 and rng.random() < 0.5:
            put(4 + 4 * n, len(d))
    elif what == 5 and nofs == n + 1:  # a consistent buffer with one string's bytes edited
        if len(d) > 4 * (n + 2):
            i = rng.randrange(4 * (n + 2), len(d))
            d[i] = rng.choice([0, 0xFF, 0x80, 0x20, 0xC3])
    else:  # a consistent buffer of another count (the shape no longer matches)
        k = rng.choice([0, 1, max(0, n - 1), n + 1, n + 5])
        body = [bytes([97 + (j % 26)]) * rng.randrange(0, 5) for j in range(k)]
        d = bytearray(k.to_bytes(4, "little"))
        off = 4 * (k + 2)
        for x in body:
            d += off.to_bytes(4, "little")
            off += len(x)
        d += off.to_bytes(4, "little") + b"".join(body)
    b.data = np.frombuffer(bytes(d), np.uint8)


_CF_FIELDS = ("thenSubgraphIndex", "elseSubgraphIndex", "condSubgraphIndex", "bodySubgraphIndex",
              "initSubgraphIndex")


def _cf_ops(m):
    """(subgraph index, operator, [subgraph-index fields]) of every control-flow op."""
    out = []
    for si, sg in enumerate(m.subgraphs):
        for op in sg.operators or []:
            o = op.builtinOptions
            f = [k for k in _CF_FIELDS if o is not None and hasattr(o, k)]
            if f:
                out.append((si, op, f))
    return out


def _callers(m, target: int) -> List[int]:
    return sorted({si for si, op, fs in _cf_ops(m) if any(getattr(op.builtinOptions, k) == target for k in fs)})


def _control_flow_mutate(m, rng: random.Random, S) -> None:
    """Field-aware mutations of control-flow models: subgraph indices of IF/WHILE/CALL_ONCE
    (self-calls, cycles, the primary subgraph, -1, out of range), grafted calls, reordering."""
    import copy
    import numpy as np
    ns = len(m.subgraphs)
    cfo = _cf_ops(m)
    kind = rng.randrange(5)
    if kind <= 1 and cfo:  # one subgraph index of one op
        si, op, fields = rng.choice(cfo)
        k = rng.choice(fields)
        cur = getattr(op.builtinOptions, k)
        callers = _callers(m, si)
        setattr(op.builtinOptions, k, rng.choice(
            [si, si, 0, -1, ns, ns + 1, 2**31 - 1, -2**31, rng.randrange(ns), cur + 1, cur - 1] +
            ([rng.choice(callers)] * 2 if callers else [])))
    elif kind == 2 and cfo:  # swap the two indices of an IF / WHILE, or make them equal
        si, op, fields = rng.choice(cfo)
        o = op.builtinOptions
        if len(fields) == 2:
            a, b = getattr(o, fields[0]), getattr(o, fields[1])
            if rng.random() < 0.5:
                setattr(o, fields[0], b)
                setattr(o, fields[1], a)
            else:
                setattr(o, rng.choice(fields), rng.choice([a, b]))
    elif kind == 3:  # graft a call (CALL_ONCE, or a copy of an IF / WHILE) into a subgraph
        ti = rng.randrange(ns)
        tg = m.subgraphs[ti]
        targets = [ti, 0] + _callers(m, ti) + [rng.randrange(ns)]
        if cfo and rng.random() < 0.5:
            src = copy.deepcopy(rng.choice(cfo)[1])
            nt = len(tg.tensors or [])
            if nt:
                pool = list(tg.inputs if tg.inputs is not None else []) or list(range(nt))
                src.inputs = np.array([rng.choice(pool) for _ in range(len(src.inputs if src.inputs is not None else []))], np.int32)
                src.outputs = np.array([rng.randrange(nt) for _ in range(len(src.outputs if src.outputs is not None else []))], np.int32)
            o = src.builtinOptions
            for k in _CF_FIELDS:
                if hasattr(o, k) and rng.random() < 0.7:
                    setattr(o, k, rng.choice(targets))
            new = src
        else:
            codes = m.operatorCodes = list(m.operatorCodes or [])
            idx = next((i for i, c in enumerate(codes) if max(c.builtinCode, c.deprecatedBuiltinCode) == 129), None)
            if idx is None:
                c = S.OperatorCodeT()
                c.builtinCode, c.deprecatedBuiltinCode, c.version = 129, 127, 1
                codes.append(c)
                idx = len(codes) - 1
            new = S.OperatorT()
            new.opcodeIndex = idx
            new.inputs = np.zeros(0, np.int32)
            new.outputs = np.zeros(0, np.int32)
            new.builtinOptionsType = S.BuiltinOptions.CallOnceOptions
            new.builtinOptions = S.CallOnceOptionsT()
            new.builtinOptions.initSubgraphIndex = rng.choice(targets)
        ops = list(tg.operators or [])
        ops.insert(rng.randrange(len(ops) + 1), new)
        tg.operators = ops
    else:  # reorder subgraphs (every index now names another subgraph; the primary changes)
        order = list(range(ns))
        if rng.random() < 0.5:
            rng.shuffle(order)
        else:
            i, j = rng.randrange(ns), rng.randrange(ns)
            order[i], order[j] = order[j], order[i]
        m.subgraphs = [m.subgraphs[i] for i in order]


def byte_mutate(data: bytes, rng: random.Random) -> bytes:
    if not data:  # an earlier round truncated everything: a few random bytes instead
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 16)))
    d = bytearray(data)
    kind = rng.randrange(4)
    if kind == 0:  # flips
        for _ in range(rng.randrange(1, 9)):
            d[rng.randrange(len(d))] ^= 1 << rng.randrange(8)
    elif kind == 1:  # byte sets with interesting values
        for _ in range(rng.randrange(1, 9)):
            i = rng.randrange(len(d))
            d[i] = rng.choice([0, 0xFF, 0x7F, 0x80, 1, rng.randrange(256)])
    elif kind == 2:  # truncation
        d = d[:rng.randrange(len(d))]
    else:  # an int32 set somewhere (offsets, counts, indices)
        i = rng.randrange(max(1, len(d) - 4)) & ~3
        d[i:i + 4] = rng.choice([0xFFFFFFFF, 0x7FFFFFFF, 0x80000000, 0, 1, len(d), rng.randrange(1 << 32)]).to_bytes(4, "little")
    return bytes(d)


def mutate(data: bytes, rng: random.Random) -> bytes:
    r = rng.random()
    if r < 0.55:
        m = field_mutate(data, rng)
        if m is not None:
            if rng.random() < 0.1:
                m = byte_mutate(m, rng)
            return m
    return byte_mutate(data, rng)


# ---------------------------------------------------------------- running one mutant
def run_one(data: bytes, delegate=None) -> str:
    """Loads, allocates, fills inputs, invokes and reads outputs. Returns the outcome; raises on an
    exception of a type the API does not document (a finding)."""
    import numpy as np
    import tflite_gpu

    try:
        it = tflite_gpu.Interpreter(model_content=data, num_threads=2)
    except ALLOWED as e:
        assert str(e), "empty error message"
        return "rejected_load"
    if delegate is not None:
        try:
            it.modify_graph_with_delegate(delegate)
        except ALLOWED as e:
            assert str(e)
            return "rejected_delegate"
    try:
        it.allocate_tensors()
    except ALLOWED as e:
        assert str(e)
        return "rejected_allocate"
    try:
        for d in it.get_input_details():
            if d["dtype"] in (np.float32, np.int32, np.uint8, np.int8, np.int64, np.float16, np.bool_, np.int16):
                it.set_tensor(d["index"], np.ones(d["shape"], d["dtype"]))
            elif d["dtype"] is np.bytes_:  # STRING inputs: words (the seeds' lookup keys among them)
                words = [b"cat dog", b"", b"apple", b"x y z w"]
                n = int(np.prod(d["shape"]))
                it.set_tensor(d["index"], np.array([words[i % 4] for i in range(n)], dtype=object).reshape(d["shape"]))
        it.invoke()
        for d in it.get_output_details():
            it.get_tensor(d["index"])
        for d in it.get_tensor_details():  # every name and quantization vector decodes
            pass
        sigs = it.get_signature_list()
        for k in sigs:
            it.get_signature_runner(k).get_input_details()
    except ALLOWED as e:
        assert str(e)
        # TFLITE_GPU_DEBUG_SENTINELS=1 (--sentinels): a GPU kernel wrote past its buffer
        assert "out-of-bounds write detected" not in str(e), str(e)
        return "rejected_invoke"
    return "ran"


# PoCL (the OpenCL CPU driver of these runs) allocates device buffers lazily on its own threads
# and dies with SIGSEGV when that allocation fails (a memcpy into null, pocl common.c), which the
# workers' address-space cap makes likely for a mutant with a 1.6 GB tensor. Such mutants run on
# the CPU path only (their GPU run would test the driver's out-of-memory handling, not ours).
GPU_MAX_MODEL_BYTES = 256 << 20


def _tensor_bytes(data: bytes) -> int:
    """Sum of the tensors' sizes as declared (0 when the model does not load)."""
    import numpy as np
    import tflite_gpu
    try:
        it = tflite_gpu.Interpreter(model_content=data)
        return sum(int(np.prod(d["shape"], dtype=np.float64)) * np.dtype(d["dtype"]).itemsize
                   for d in it.get_tensor_details() if d["dtype"] is not np.bytes_)
    except Exception:  # noqa: BLE001 - a bad model: the run itself reports it
        return 0


def worker_main(args) -> None:
    """One long-lived process: mutants start..start+count-1 of the deterministic stream `seed`."""
    # A mutant may be a valid model needing a huge arena or variable tensor: its allocation fails
    # (a documented error) instead of swamping the host. Not under ASan (its shadow memory
    # reserves terabytes of address space; supervise() makes its allocator return null instead).
    if args.max_mem_gb > 0 and "libasan" not in os.environ.get("LD_PRELOAD", ""):
        import resource
        lim = int(args.max_mem_gb * (1 << 30))
        resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
    import tflite_gpu

    models = seed_models(args.models)
    names = sorted(models)
    if args.only:  # comma-separated name prefixes: fuzz those seeds only
        names = [n for n in names if any(n.startswith(p) for p in args.only.split(","))]
    dlg = None
    if args.gpu_share > 0:
        try:
            dlg = tflite_gpu.GpuDelegate()
        except RuntimeError as e:
            print(f"{PROGRESS}nogpu {e}", flush=True)
    cur = os.path.join(args.out, "current.tflite")
    for i in range(args.start, args.start + args.count):
        rng = random.Random(f"{args.seed}:{i}")
        name = names[rng.randrange(len(names))]
        data = models[name]
        for _ in range(rng.choice([1, 1, 2, 3])):
            data = mutate(data, rng)
        gpu = dlg is not None and rng.random() < args.gpu_share
        if gpu and _tensor_bytes(data) > GPU_MAX_MODEL_BYTES:
            gpu = False  # see GPU_MAX_MODEL_BYTES
        with open(cur, "wb") as f:
            f.write(data)
        print(f"{PROGRESS}start {i} {name} {'gpu' if gpu else 'cpu'}", flush=True)
        try:
            outcome = run_one(data, dlg if gpu else None)
        except Exception as e:  # an undocumented exception type or an empty message
            outcome = "finding"
            keep = os.path.join(args.out, f"finding-{hashlib.sha1(data).hexdigest()[:12]}.tflite")
            with open(keep, "wb") as f:
                f.write(data)
            print(f"{PROGRESS}finding {i} {type(e).__name__}: {str(e)[:300]!r} -> {keep}", flush=True)
        print(f"{PROGRESS}done {i} {outcome}", flush=True)


def supervise(mutants: int, out: str, seed: str = "0", gpu_share: float = 0.2, hang_s: float = 60.0,
              nice: int = 0, env: Optional[dict] = None, log=print, worker_chunk: int = 0, only: str = "",
              max_mem_gb: float = 8.0) -> dict:
    """Runs `mutants` mutants in long-lived workers; returns counts and the kept crashing files.
    worker_chunk > 0 restarts the worker after that many mutants (0: one worker for all)."""
    os.makedirs(out, exist_ok=True)
    models_dir = os.path.join(out, "seed_models")
    seed_models(models_dir)  # build once, shared by every worker
    stats: Dict[str, int] = {}
    per_seed: Dict[str, int] = {}
    findings: List[str] = []
    kept: List[str] = []
    i = 0
    t0 = time.time()
    e = dict(os.environ)
    # Relative entries (PYTHONPATH=. in a developer tree) made absolute: workers run elsewhere.
    inherited = [os.path.abspath(p) if p else p for p in e.get("PYTHONPATH", "").split(os.pathsep)]
    e["PYTHONPATH"] = os.pathsep.join([HERE] + inherited)
    # A mutant may be a valid program that loops forever or grows a loop value without bound
    # (allowed: models are programs); bounded here so a hang report means an engine hang.
    e.setdefault("TFLITE_GPU_MAX_WHILE_ITERATIONS", "20000")
    e.setdefault("TFLITE_GPU_MAX_LOOP_TENSOR_BYTES", str(64 << 20))
    if "libasan" in e.get("LD_PRELOAD", ""):  # huge allocations fail with bad_alloc, not an ASan abort
        e["ASAN_OPTIONS"] = (e.get("ASAN_OPTIONS", "") + ":allocator_may_return_null=1").lstrip(":")
    if env:
        e.update(env)
    while i < mutants:
        count = mutants - i if worker_chunk <= 0 else min(worker_chunk, mutants - i)
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--start", str(i), "--count", str(count),
               "--seed", seed, "--gpu-share", str(gpu_share), "--out", out, "--models", models_dir]
        if only:
            cmd += ["--only", only]
        cmd += ["--max-mem-gb", str(max_mem_gb)]
        if nice:
            cmd = ["nice", "-n", str(nice)] + cmd
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e,
                             cwd=tempfile.gettempdir())  # not the repo root (see misuse_util)
        q: "queue.Queue[Optional[str]]" = queue.Queue()
        err_tail: List[str] = []

        def pump_out():
            for line in p.stdout:
                q.put(line)
            q.put(None)

        def pump_err():
            for line in p.stderr:
                err_tail.append(line)
                del err_tail[:-200]

        threading.Thread(target=pump_out, daemon=True).start()
        threading.Thread(target=pump_err, daemon=True).start()
        current = None
        last = time.time()
        hung = False
        while True:
            try:
                line = q.get(timeout=1.0)
            except queue.Empty:
                if current is not None and time.time() - last > hang_s:
                    hung = True
                    p.kill()
                    break
                continue
            if line is None:
                break
            if not line.startswith(PROGRESS):
                continue
            last = time.time()
            parts = line[len(PROGRESS):].split()
            if parts[0] == "start":
                current = (int(parts[1]), parts[2], parts[3])
            elif parts[0] == "done":
                stats[parts[2]] = stats.get(parts[2], 0) + 1
                if current is not None:  # per path (cpu / gpu) and per seed model
                    stats[current[2]] = stats.get(current[2], 0) + 1
                    per_seed[current[1]] = per_seed.get(current[1], 0) + 1
                i = int(parts[1]) + 1
                current = None
                if i % 1000 == 0:
                    log(f"fuzz: {i} mutants, {time.time() - t0:.0f} s, {stats}")
            elif parts[0] == "nogpu":
                stats["nogpu"] = 1
            elif parts[0] == "finding":
                findings.append(line.strip())
                log(f"fuzz: {line.strip()}")
        p.wait()
        if current is not None:  # died or hung inside a mutant
            what = "hang" if hung else f"crash(rc={p.returncode})"
            src = os.path.join(out, "current.tflite")
            dst = os.path.join(out, f"{what.split('(')[0]}-{_digest(src)}.tflite")
            shutil.copy(src, dst)
            kept.append(dst)
            stats[what.split("(")[0]] = stats.get(what.split("(")[0], 0) + 1
            log(f"fuzz: {what} at mutant {current} -> {dst}\n" + "".join(err_tail[-30:]))
            i = current[0] + 1
        elif p.returncode != 0:
            raise RuntimeError(f"fuzz worker failed outside a mutant (rc={p.returncode}):\n" + "".join(err_tail[-40:]))
    stats["mutants"] = i
    stats["seconds"] = int(time.time() - t0)
    return {"stats": stats, "per_seed": per_seed, "kept": kept, "findings": findings}


def _digest(path: str) -> str:
    return hashlib.sha1(open(path, "rb").read()).hexdigest()[:12]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mutants", type=int, default=int(os.environ.get("TFLITE_GPU_FUZZ_MUTANTS", "100000")))
    ap.add_argument("--gpu-share", type=float, default=0.2)
    ap.add_argument("--seed", default=os.environ.get("TFLITE_GPU_FUZZ_SEED", "big"))
    ap.add_argument("--out", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "tflite_gpu_fuzz"))
    ap.add_argument("--hang-s", type=float, default=120.0)
    ap.add_argument("--nice", type=int, default=0)
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--count", type=int, default=0)
    ap.add_argument("--models", default=None)
    ap.add_argument("--sentinels", action="store_true",
                    help="TFLITE_GPU_DEBUG_SENTINELS=1: a GPU write past a buffer's end is a finding")
    ap.add_argument("--max-mem-gb", type=float, default=8.0,
                    help="address-space limit of a worker (RLIMIT_AS; 0: none)")
    ap.add_argument("--only", default="", help="comma-separated seed-name prefixes (default: every seed)")
    args = ap.parse_args(argv)
    if args.worker:
        worker_main(args)
        return 0
    r = supervise(args.mutants, args.out, seed=args.seed, gpu_share=args.gpu_share, hang_s=args.hang_s,
                  env={"TFLITE_GPU_DEBUG_SENTINELS": "1"} if args.sentinels else None,
                  nice=args.nice, log=lambda s: print(s, flush=True), only=args.only,
                  max_mem_gb=args.max_mem_gb)
    print(json.dumps(r, indent=1), flush=True)
    return 1 if (r["kept"] or r["findings"]) else 0


if __name__ == "__main__":
    sys.exit(main())
