"""Bad inputs for the pooling family: bad model parameters fail allocate_tensors with a
ValueError naming the op; bad data (dynamic sizes, axes) fails invoke with a RuntimeError."""
import numpy as np
import pytest

import tflite_gpu
from tflite_gpu.testing.builder import single_op_model


def _alloc(model):
    it = tflite_gpu.Interpreter(model_content=model)
    it.allocate_tensors()
    return it


def _pool(op, **kw):
    opts = dict(padding="VALID", stride_w=1, stride_h=1, filter_width=2, filter_height=2)
    opts.update(kw.pop("opts", {}))
    shape = kw.pop("shape", [1, 4, 4, 2])
    dt = kw.pop("dtype", np.float32)
    return single_op_model(op, [(shape, dt)], [([1, 3, 3, 2], dt)], options=opts)


@pytest.mark.parametrize("op", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
@pytest.mark.parametrize("what,kw,msg", [
    ("zero_stride", dict(opts=dict(stride_w=0)), "stride"),
    ("negative_stride", dict(opts=dict(stride_h=-2)), "stride"),
    ("zero_filter", dict(opts=dict(filter_width=0)), "filter"),
    ("bad_padding", dict(opts=dict(padding=7)), "padding"),
    ("bad_activation", dict(opts=dict(fused_activation_function=9)), "activation"),
    ("rank3", dict(shape=[4, 4, 2]), "4-D"),
    ("int32_input", dict(dtype=np.int32), "INT32"),
])
def test_pool_bad_model(op, what, kw, msg):
    with pytest.raises(ValueError, match=op) as e:
        _alloc(_pool(op, **kw))
    assert msg in str(e.value)


def test_pool_without_options_is_an_error():
    m = single_op_model("MAX_POOL_2D", [[1, 4, 4, 2]], [[1, 4, 4, 2]], options=None)
    with pytest.raises(ValueError, match="MAX_POOL_2D.*stride"):
        _alloc(m)


def _resize(op, size, in_shape=(1, 4, 4, 2), size_dtype=np.int32, version=1, **opts):
    size = np.asarray(size, size_dtype)
    out = [in_shape[0], 2, 2, in_shape[-1]]
    return single_op_model(op, [list(in_shape)], [out], options=opts, version=version, consts=[size])


@pytest.mark.parametrize("op", ["RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR"])
def test_resize_bad_model(op):
    with pytest.raises(ValueError, match=op):
        _alloc(_resize(op, [2, 2, 2]))                       # size must be [2]
    with pytest.raises(ValueError, match=op):
        _alloc(_resize(op, [2, 2], size_dtype=np.int64))     # size must be int32
    with pytest.raises(ValueError, match=op):
        _alloc(_resize(op, [-1, 2]))                         # negative size
    with pytest.raises(ValueError, match=op):
        _alloc(_resize(op, [2, 2], in_shape=(4, 4, 2)))      # rank 3 input


def test_resize_bilinear_bad_params():
    with pytest.raises(ValueError, match="RESIZE_BILINEAR.*align_corners"):
        _alloc(_resize("RESIZE_BILINEAR", [2, 2], version=3, align_corners=True, half_pixel_centers=True))
    with pytest.raises(ValueError, match="RESIZE_BILINEAR.*positive"):
        _alloc(_resize("RESIZE_BILINEAR", [0, 2]))
    m = single_op_model("RESIZE_BILINEAR", [([1, 4, 4, 2], np.int8)], [([1, 2, 2, 2], np.int8)],
                        options={}, consts=[np.array([2, 2], np.int32)])
    with pytest.raises(ValueError, match="RESIZE_BILINEAR.*INT8"):
        _alloc(m)


@pytest.mark.parametrize("op,bad", [("RESIZE_BILINEAR", [0, 3]), ("RESIZE_BILINEAR", [3, -4]),
                                    ("RESIZE_NEAREST_NEIGHBOR", [-1, 3])])
def test_resize_bad_dynamic_size_fails_at_invoke(op, bad):
    m = single_op_model(op, [[1, 4, 4, 2], ([2], np.int32)], [[1, 2, 2, 2]], options={})
    it = _alloc(m)
    x = np.ones((1, 4, 4, 2), np.float32)
    ins = it.get_input_details()
    it.set_tensor(ins[0]["index"], x)
    it.set_tensor(ins[1]["index"], np.array([3, 5], np.int32))
    it.invoke()
    assert it.get_tensor(it.get_output_details()[0]["index"]).shape == (1, 3, 5, 2)
    it.set_tensor(ins[1]["index"], np.array(bad, np.int32))
    with pytest.raises(RuntimeError, match=op):
        it.invoke()


def test_resize_nearest_from_empty_input():
    m = single_op_model("RESIZE_NEAREST_NEIGHBOR", [[1, 0, 4, 2]], [[1, 3, 3, 2]], options={},
                        consts=[np.array([3, 3], np.int32)])
    it = _alloc(m)
    with pytest.raises(RuntimeError, match="RESIZE_NEAREST_NEIGHBOR"):
        it.invoke()


def test_softmax_bad_model():
    with pytest.raises(ValueError, match="SOFTMAX.*rank"):
        _alloc(single_op_model("SOFTMAX", [[]], [[]], options=dict(beta=1.0)))
    with pytest.raises(ValueError, match="SOFTMAX.*INT32"):
        _alloc(single_op_model("SOFTMAX", [([2, 3], np.int32)], [([2, 3], np.int32)], options=dict(beta=1.0)))


@pytest.mark.parametrize("op", ["MEAN", "SUM"])
def test_reduce_bad_model(op):
    def m(axis, in_dt=np.float32):
        return single_op_model(op, [([2, 3, 4], in_dt)], [([2, 4], in_dt)], options=dict(keep_dims=False),
                               consts=[axis])
    with pytest.raises(ValueError, match=f"{op}.*out of range"):
        _alloc(m(np.array([3], np.int32)))
    with pytest.raises(ValueError, match=f"{op}.*out of range"):
        _alloc(m(np.array([-4], np.int32)))
    with pytest.raises(ValueError, match=f"{op}.*axis"):
        _alloc(m(np.array([1.0], np.float32)))
    with pytest.raises(ValueError, match=f"{op}.*axis"):
        _alloc(m(np.array([[1]], np.int32)))
    with pytest.raises(ValueError, match=f"{op}.*INT8"):
        _alloc(m(np.array([1], np.int32), in_dt=np.int8))


@pytest.mark.parametrize("op", ["MEAN", "SUM"])
def test_reduce_bad_dynamic_axis_fails_at_invoke(op):
    m = single_op_model(op, [[2, 3, 4], ([1], np.int32)], [[2, 4]], options=dict(keep_dims=False))
    it = _alloc(m)
    ins = it.get_input_details()
    it.set_tensor(ins[0]["index"], np.ones((2, 3, 4), np.float32))
    it.set_tensor(ins[1]["index"], np.array([1], np.int32))
    it.invoke()
    want = 3.0 if op == "SUM" else 1.0
    np.testing.assert_array_equal(it.get_tensor(it.get_output_details()[0]["index"]), np.full((2, 4), want))
    it.set_tensor(ins[1]["index"], np.array([5], np.int32))
    with pytest.raises(RuntimeError, match=f"{op}.*out of range"):
        it.invoke()


def _argmax(options, axis=np.array([1], np.int32), in_dt=np.float32, shape=(2, 3), out_dt=np.int32):
    oshape = [d for i, d in enumerate(shape) if i != 1]
    return single_op_model("ARG_MAX", [(list(shape), in_dt)], [(oshape, out_dt)], options=options,
                           consts=[axis])


def test_arg_max_bad_model():
    with pytest.raises(ValueError, match="ARG_MAX.*output_type"):
        _alloc(_argmax(None))
    with pytest.raises(ValueError, match="ARG_MAX.*output_type"):
        _alloc(_argmax(dict(output_type="FLOAT32")))
    with pytest.raises(ValueError, match="ARG_MAX.*one element"):
        _alloc(_argmax(dict(output_type="INT32"), axis=np.array([0, 1], np.int32)))
    with pytest.raises(ValueError, match="ARG_MAX.*out of range"):
        _alloc(_argmax(dict(output_type="INT32"), axis=np.array([2], np.int32)))
    with pytest.raises(ValueError, match="ARG_MAX.*axis"):
        _alloc(_argmax(dict(output_type="INT32"), axis=np.array([1.0], np.float32)))
    with pytest.raises(ValueError, match="ARG_MAX.*INT64"):
        _alloc(_argmax(dict(output_type="INT32"), in_dt=np.int64))
    with pytest.raises(ValueError, match="ARG_MAX.*empty axis"):
        _alloc(_argmax(dict(output_type="INT32"), shape=(2, 0)))


def test_arg_max_bad_dynamic_axis_fails_at_invoke():
    m = single_op_model("ARG_MAX", [[2, 3], ([1], np.int32)], [([2], np.int32)],
                        options=dict(output_type="INT32"))
    it = _alloc(m)
    ins = it.get_input_details()
    it.set_tensor(ins[0]["index"], np.array([[0, 5, 5], [7, 1, 7]], np.float32))
    it.set_tensor(ins[1]["index"], np.array([-1], np.int32))
    it.invoke()
    np.testing.assert_array_equal(it.get_tensor(it.get_output_details()[0]["index"]), [1, 0])
    it.set_tensor(ins[1]["index"], np.array([2], np.int32))
    with pytest.raises(RuntimeError, match="ARG_MAX.*out of range"):
        it.invoke()
