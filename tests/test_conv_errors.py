"""Conv family: bad models (ValueError naming the op at allocate_tensors), data-dependent errors
(RuntimeError at invoke), Convolution2DTransposeBias against TRANSPOSE_CONV + bias through our own
engine, every SIMD path against the reference kernels, and resizes / changing dynamic shapes."""
import os
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tflite_gpu
from harness import assert_close, require_cpu_isa, run_litert, run_tflite_gpu
from op_cases.conv import (bmm_model, conv_model, dw_model, fc_model, tc_model, tcb_equivalent_tc_model,
                           tcb_model, TCB_PARAMS)
from tflite_gpu.testing.builder import ModelBuilder, single_op_model

F32 = np.float32


def _alloc(model):
    it = tflite_gpu.Interpreter(model_content=model, num_threads=2)
    it.allocate_tensors()
    return it


def _expect_value_error(model, op, *fragments):
    with pytest.raises(ValueError) as e:
        _alloc(model)
    msg = str(e.value)
    assert op in msg, msg
    for f in fragments:
        assert f in msg, msg


def _w(*shape):
    return np.random.default_rng(0).standard_normal(shape).astype(F32)


# ---- CONV_2D ----------------------------------------------------------------------------------

def _conv(opts, in_shape=(1, 5, 5, 4), w_shape=(3, 3, 3, 4), bias=(3,), in_dtype=np.float32, w=None, out=None):
    consts = [w if w is not None else _w(*w_shape)]
    if bias is not None:
        consts.append(_w(*bias))
    return single_op_model("CONV_2D", [(list(in_shape), in_dtype)], [out or [1, 5, 5, 3]], options=opts, consts=consts)


SAME1 = dict(padding="SAME", stride_w=1, stride_h=1)


@pytest.mark.parametrize("model,frags", [
    (lambda: _conv(dict(padding="SAME", stride_w=0, stride_h=1)), ["stride"]),
    (lambda: _conv(None), ["stride"]),  # no options table: schema default strides 0
    (lambda: _conv(dict(SAME1, dilation_w_factor=0)), ["dilation"]),
    (lambda: _conv(dict(SAME1, padding=7)), ["padding"]),
    (lambda: _conv(dict(SAME1, fused_activation_function=9)), ["activation"]),
    (lambda: _conv(SAME1, w_shape=(3, 3, 4)), ["filter", "rank"]),
    (lambda: _conv(SAME1, in_shape=(5, 5, 4)), ["input", "rank"]),
    (lambda: _conv(SAME1, bias=(4,)), ["bias"]),
    (lambda: _conv(SAME1, w_shape=(3, 3, 3, 3)), ["channels"]),
    (lambda: _conv(SAME1, w_shape=(3, 3, 3, 2)), ["groups"]),  # 4 = 2 groups of 2; 3 outputs
    (lambda: _conv(SAME1, w_shape=(3, 0, 3, 4)), ["filter"]),
    (lambda: _conv(SAME1, in_dtype=np.int8), ["INT8"]),
    (lambda: _conv(SAME1, w=_w(3, 3, 3, 4).astype(np.int8)), ["INT8"]),  # hybrid: unsupported
    (lambda: single_op_model("CONV_2D", [[1, 5, 5, 4]], [[1, 5, 5, 3]], options=SAME1), ["inputs"]),
])
def test_conv2d_bad_model(model, frags):
    _expect_value_error(model(), "CONV_2D", *frags)


# ---- DEPTHWISE_CONV_2D ------------------------------------------------------------------------

def _dw(opts, w_shape=(1, 3, 3, 8), bias=(8,), in_shape=(1, 5, 5, 4)):
    consts = [_w(*w_shape)] + ([_w(*bias)] if bias else [])
    return single_op_model("DEPTHWISE_CONV_2D", [list(in_shape)], [[1, 5, 5, w_shape[-1]]], options=opts, consts=consts)


@pytest.mark.parametrize("model,frags", [
    (lambda: _dw(dict(SAME1, depth_multiplier=2), w_shape=(2, 3, 3, 8)), ["first dimension"]),
    (lambda: _dw(dict(SAME1, depth_multiplier=2), w_shape=(1, 3, 3, 6), bias=(6,)), ["multiple"]),
    (lambda: _dw(dict(padding="VALID", stride_w=1, stride_h=0, depth_multiplier=2)), ["stride"]),
    (lambda: _dw(dict(SAME1, depth_multiplier=2, dilation_h_factor=-1)), ["dilation"]),
    (lambda: _dw(dict(SAME1, depth_multiplier=2), bias=(4,)), ["bias"]),
    (lambda: _dw(dict(SAME1, depth_multiplier=2), in_shape=(1, 5, 5, 0)), ["multiple"]),
])
def test_depthwise_bad_model(model, frags):
    _expect_value_error(model(), "DEPTHWISE_CONV_2D", *frags)


# ---- FULLY_CONNECTED --------------------------------------------------------------------------

def _fc(opts, in_shape=(2, 4), w=(3, 4), bias=(3,), out=(2, 3), outputs=1):
    consts = [_w(*w) if isinstance(w, tuple) else w] + ([_w(*bias)] if bias else [])
    return single_op_model("FULLY_CONNECTED", [list(in_shape)], [list(out)] * outputs, options=opts, consts=consts)


@pytest.mark.parametrize("model,frags", [
    (lambda: _fc(dict(weights_format="SHUFFLED4x16INT8")), ["SHUFFLED4x16INT8", "not supported"]),
    (lambda: _fc(dict(weights_format="SHUFFLED4x16INT8"), outputs=2), ["SHUFFLED4x16INT8"]),
    (lambda: _fc(dict(fused_activation_function="TANH")), ["TANH"]),
    (lambda: _fc(dict(fused_activation_function="SIGN_BIT")), ["SIGN_BIT"]),
    (lambda: _fc(dict(), w=(3, 4, 1)), ["weights", "rank"]),
    (lambda: _fc(dict(), in_shape=(2, 5)), ["multiple"]),
    (lambda: _fc(dict(keep_num_dims=True), in_shape=(2, 3, 4), w=(3, 6)), ["keep_num_dims"]),
    (lambda: _fc(dict(), bias=(4,)), ["bias"]),
    (lambda: _fc(dict(), w=(3, 0)), ["input"]),
    (lambda: _fc(dict(), w=_w(3, 4).astype(np.int8)), ["INT8"]),
])
def test_fully_connected_bad_model(model, frags):
    _expect_value_error(model(), "FULLY_CONNECTED", *frags)


# ---- TRANSPOSE_CONV ---------------------------------------------------------------------------

def _tc(oshape=(1, 8, 8, 2), oshape_dtype=np.int32, w_shape=(2, 3, 3, 3), in_shape=(1, 4, 4, 3), bias=(2,),
        opts=dict(padding="SAME", stride_w=2, stride_h=2)):
    mb = ModelBuilder()
    s = mb.add_const(np.asarray(oshape, oshape_dtype), name="s")
    w = mb.add_const(_w(*w_shape), name="w")
    x = mb.add_input(list(in_shape), name="x")
    ins = [s, w, x] + ([mb.add_const(_w(*bias), name="b")] if bias else [])
    y = mb.add_tensor([1, 8, 8, 2], name="y")
    mb.add_op("TRANSPOSE_CONV", ins, [y], options=opts, version=3)
    mb.mark_output(y)
    return mb.build()


@pytest.mark.parametrize("model,frags", [
    (lambda: _tc(oshape_dtype=np.float32), ["output_shape", "INT32"]),
    (lambda: _tc(oshape=(1, 8, 8)), ["output_shape"]),
    (lambda: _tc(oshape=(1, 20, 20, 2)), ["inconsistent"]),
    (lambda: _tc(oshape=(1, 8, 8, 5)), ["channels"]),
    (lambda: _tc(oshape=(2, 8, 8, 2)), ["batch"]),
    (lambda: _tc(oshape=(1, 0, 8, 2)), ["output shape"]),
    (lambda: _tc(w_shape=(2, 3, 3, 4)), ["channels"]),
    (lambda: _tc(bias=(3,)), ["bias"]),
    (lambda: _tc(opts=dict(padding="SAME", stride_w=0, stride_h=2)), ["stride"]),
    (lambda: _tc(opts=None), ["stride"]),
    (lambda: _tc(w_shape=(2, 3, 3)), ["weights", "rank"]),
])
def test_transpose_conv_bad_model(model, frags):
    _expect_value_error(model(), "TRANSPOSE_CONV", *frags)


@pytest.mark.parametrize("oshape", [[1, 20, 20, 2], [1, -8, 8, 2], [2, 8, 8, 2], [1, 8, 8, 9]])
def test_transpose_conv_dynamic_shape_error_at_invoke(oshape):
    it = _alloc(tc_model([1, 4, 4, 3], 2, shape_input=True))
    d = {x["name"]: x["index"] for x in it.get_input_details()}
    it.set_tensor(d["output_shape"], np.asarray(oshape, np.int32))
    it.set_tensor(d["x"], np.ones((1, 4, 4, 3), F32))
    with pytest.raises(RuntimeError, match="TRANSPOSE_CONV"):
        it.invoke()


def test_transpose_conv_dynamic_shape_changes_between_invokes():
    model = tc_model([1, 4, 4, 3], 2, shape_input=True)
    x = np.random.default_rng(1).standard_normal((1, 4, 4, 3)).astype(F32)
    ours = _alloc(model)
    for oshape in ([1, 8, 8, 2], [1, 7, 8, 2], [1, 7, 7, 2], [1, 8, 8, 2]):
        shp = np.asarray(oshape, np.int32)
        want = run_litert(model, [shp, x])
        d = {t["name"]: t["index"] for t in ours.get_input_details()}
        ours.set_tensor(d["output_shape"], shp)
        ours.set_tensor(d["x"], x)
        ours.invoke()
        got = ours.get_tensor(ours.get_output_details()[0]["index"])
        assert_close([got], want, 1e-5, f"output_shape {oshape}")


# ---- BATCH_MATMUL -----------------------------------------------------------------------------

def _bmm(a_shape, b_shape, dtype=np.float32, opts=None):
    mb = ModelBuilder()
    a = mb.add_input(list(a_shape), dtype, name="a")
    b = mb.add_input(list(b_shape), dtype, name="b")
    y = mb.add_tensor([1], dtype, name="y")
    mb.add_op("BATCH_MATMUL", [a, b], [y], options=opts or dict(adj_x=False, adj_y=False))
    mb.mark_output(y)
    return mb.build()


@pytest.mark.parametrize("model,frags", [
    (lambda: _bmm([4], [4, 5]), ["rank"]),
    (lambda: _bmm([1, 1, 1, 2, 3, 4], [4, 5]), ["rank"]),
    (lambda: _bmm([2, 3, 4], [2, 5, 4]), ["contraction"]),
    (lambda: _bmm([2, 3, 4], [3, 4, 5]), ["broadcast"]),
    (lambda: _bmm([2, 3, 4], [2, 4, 5], dtype=np.int32), ["INT32"]),
    (lambda: _bmm([2, 3, 4], [2, 4, 5], dtype=np.int8), ["INT8"]),
])
def test_batch_matmul_bad_model(model, frags):
    _expect_value_error(model(), "BATCH_MATMUL", *frags)


# ---- Convolution2DTransposeBias ---------------------------------------------------------------

def _tcb(custom_options, n_inputs=3):
    mb = ModelBuilder()
    x = mb.add_input([1, 4, 4, 3], name="x")
    ins = [x, mb.add_const(_w(2, 3, 3, 3), name="w"), mb.add_const(_w(2), name="b")][:n_inputs]
    y = mb.add_tensor([1, 8, 8, 2], name="y")
    mb.add_op(("CUSTOM", "Convolution2DTransposeBias"), ins, [y], custom_options=custom_options)
    mb.mark_output(y)
    return mb.build()


@pytest.mark.parametrize("model,frags", [
    (lambda: _tcb(struct.pack("<ii", 1, 2)), ["custom_options"]),
    (lambda: _tcb(None), ["custom_options"]),
    (lambda: _tcb(struct.pack("<iii", 0, 2, 2)), ["padding"]),
    (lambda: _tcb(struct.pack("<iii", 3, 2, 2)), ["padding"]),
    (lambda: _tcb(struct.pack("<iii", 1, 0, 2)), ["stride"]),
    (lambda: _tcb(struct.pack("<iii", 1, 2, 2), n_inputs=2), ["inputs"]),
])
def test_transpose_conv_bias_bad_model(model, frags):
    _expect_value_error(model(), "Convolution2DTransposeBias", *frags)


@pytest.mark.parametrize("name,shape,cout,kw", TCB_PARAMS, ids=[p[0] for p in TCB_PARAMS])
@pytest.mark.parametrize("kernels", ["fast", "reference"])
def test_transpose_conv_bias_equals_transpose_conv_plus_bias(name, shape, cout, kw, kernels):
    """The custom op and TRANSPOSE_CONV (v3, with the same bias), both through our engine."""
    x = np.random.default_rng(3).standard_normal(shape).astype(F32)
    ref = kernels == "reference"
    got = run_tflite_gpu(tcb_model(shape, cout, **kw), [x], reference=ref)
    tc_model_bytes = tcb_equivalent_tc_model(shape, cout, **kw)
    oshape = got[0].shape
    want = run_tflite_gpu(tc_model_bytes, [x], reference=ref)
    assert want[0].shape == oshape
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-5)


def test_transpose_conv_bias_inconsistent_declared_shape_is_recomputed():
    # A declared output shape that does not fit the input: the shape is computed (SAME: in*stride).
    mb = ModelBuilder()
    x = mb.add_input([1, 4, 5, 3], name="x")
    y = mb.add_tensor([1, 1, 1, 1], name="y")
    mb.add_op(("CUSTOM", "Convolution2DTransposeBias"), [x, mb.add_const(_w(2, 3, 3, 3)), mb.add_const(_w(2))], [y],
              custom_options=struct.pack("<iii", 1, 2, 2))
    mb.mark_output(y)
    out = run_tflite_gpu(mb.build(), [np.ones((1, 4, 5, 3), F32)])
    assert out[0].shape == (1, 8, 10, 2)


# ---- resize -----------------------------------------------------------------------------------

@pytest.mark.parametrize("model,shapes,xnnpack", [
    (lambda: conv_model([1, 8, 8, 3], 6, act="RELU6"), [[1, 8, 8, 3], [2, 13, 11, 3], [1, 3, 3, 3]], False),
    (lambda: conv_model([1, 8, 8, 16], 24, k=(1, 1)), [[1, 8, 8, 16], [1, 20, 20, 16]], False),
    (lambda: dw_model([1, 9, 9, 16], stride=(2, 2)), [[1, 9, 9, 16], [3, 17, 6, 16]], False),
    (lambda: fc_model([2, 3, 8], 5, keep_num_dims=True), [[2, 3, 8], [4, 1, 8]], False),
    (lambda: bmm_model([2, 3, 4], [2, 4, 5]), [([2, 3, 4], [2, 4, 5]), ([3, 7, 4], [1, 4, 6])], False),
], ids=["conv3x3", "conv1x1", "depthwise", "fully_connected", "batch_matmul"])
def test_resize_input(model, shapes, xnnpack):
    m = model()
    it = tflite_gpu.Interpreter(model_content=m, num_threads=2)
    rng = np.random.default_rng(0)
    for shp in shapes:
        shp_list = shp if isinstance(shp, tuple) else (shp,)
        xs = [rng.standard_normal(s).astype(F32) for s in shp_list]
        for d, s in zip(it.get_input_details(), shp_list):
            it.resize_tensor_input(d["index"], s)
        it.allocate_tensors()
        for d, x in zip(it.get_input_details(), xs):
            it.set_tensor(d["index"], x)
        it.invoke()
        got = [it.get_tensor(d["index"]) for d in it.get_output_details()]
        want = run_litert(m, xs, xnnpack=xnnpack)
        assert_close(got, want, 1e-5, f"shape {shp}")


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_transpose_conv_bias_resize_input(padding):
    # litert's XNNPACK keeps the model's declared output shape, so after a resize the oracle is
    # litert's TRANSPOSE_CONV (+ the same bias) built for the new input size.
    it = tflite_gpu.Interpreter(model_content=tcb_model([1, 4, 4, 3], 2, padding=padding), num_threads=2)
    rng = np.random.default_rng(0)
    for shp in ([1, 4, 4, 3], [1, 6, 5, 3], [2, 3, 7, 3]):
        x = rng.standard_normal(shp).astype(F32)
        it.resize_tensor_input(it.get_input_details()[0]["index"], shp)
        it.allocate_tensors()
        it.set_tensor(it.get_input_details()[0]["index"], x)
        it.invoke()
        got = it.get_tensor(it.get_output_details()[0]["index"])
        want = run_litert(tcb_equivalent_tc_model(shp, 2, padding=padding), [x])
        assert_close([got], want, 1e-5, f"shape {shp}")


# ---- every SIMD path against the reference kernels ---------------------------------------------

@pytest.mark.parametrize("isa", ["scalar", "sse2", "avx2", "avx512"])
def test_simd_paths_match_reference_kernels(isa):
    """Runs every conv-family case in a subprocess with TFLITE_GPU_CPU_ISA=isa (it can only lower
    the ISA the CPU has) and compares the fast kernels with our plain reference kernels."""
    require_cpu_isa(isa)
    code = textwrap.dedent("""
        import sys, zlib
        import numpy as np
        sys.path.insert(0, sys.argv[1])
        from harness import run_tflite_gpu, assert_close
        from op_cases.conv import CASES
        for case in CASES:
            rng = np.random.default_rng(zlib.crc32(case.id.encode()))
            xs = list(case.inputs(rng))
            fast = run_tflite_gpu(case.model(), xs, reference=False, num_threads=2)
            ref = run_tflite_gpu(case.model(), xs, reference=True)
            assert_close(fast, ref, 2e-6, case.id)
        print("ok", len(CASES))
    """)
    env = dict(os.environ, TFLITE_GPU_CPU_ISA=isa)
    tests_dir = os.path.dirname(os.path.abspath(__file__))
    # cwd: not the repository root, whose tflite_gpu/ source folder would shadow the installed package.
    r = subprocess.run([sys.executable, "-c", code, tests_dir], env=env, capture_output=True, text=True, timeout=600,
                       cwd=tests_dir)
    assert r.returncode == 0 and "ok" in r.stdout, r.stdout[-3000:] + r.stderr[-3000:]


# ---- hostile sizes: clear errors, never overflow --------------------------------------------

def test_conv2d_huge_filter_input_is_rejected():
    m = single_op_model("CONV_2D", [[1, 4, 4, 1], [1, 70000, 70000, 1]], [[1, 4, 4, 1]], options=SAME1)
    with pytest.raises((ValueError, MemoryError), match="CONV_2D|too large|allocated"):
        _alloc(m)


def test_batch_matmul_huge_batch_is_rejected():
    m = _bmm([65536, 65536, 1, 1], [1, 1])
    with pytest.raises((ValueError, MemoryError), match="BATCH_MATMUL|too large|allocated"):
        _alloc(m)


@pytest.mark.parametrize("op,model", [
    ("CONV_2D", lambda: single_op_model("CONV_2D", [[1, 5, 5, 4]], [([1, 5, 5, 3], np.int32)], options=SAME1,
                                        consts=[_w(3, 3, 3, 4), _w(3)])),
    ("DEPTHWISE_CONV_2D", lambda: single_op_model("DEPTHWISE_CONV_2D", [[1, 5, 5, 4]], [([1, 5, 5, 4], np.int32)],
                                                  options=dict(SAME1, depth_multiplier=1), consts=[_w(1, 3, 3, 4)])),
    ("FULLY_CONNECTED", lambda: single_op_model("FULLY_CONNECTED", [[2, 4]], [([2, 3], np.int32)], options={},
                                                consts=[_w(3, 4)])),
    ("BATCH_MATMUL", lambda: single_op_model("BATCH_MATMUL", [[2, 4], [4, 3]], [([2, 3], np.int32)], options={})),
])
def test_non_float_output_tensor_is_rejected(op, model):
    _expect_value_error(model(), op, "output", "INT32")
