"""Bad inputs for the shape family: invalid models fail at allocate_tensors with a ValueError
naming the op; data-dependent errors fail the invoke with a RuntimeError; nothing crashes."""
import numpy as np
import pytest

import tflite_gpu
from op_cases.shape import In, build, to_sparse
from tflite_gpu.testing.builder import ModelBuilder

F32, I32, I64, U8, I8 = np.float32, np.int32, np.int64, np.uint8, np.int8


def allocate(model):
    it = tflite_gpu.Interpreter(model_content=model)
    it.allocate_tensors()
    return it


def bad_model(op, ins, outs, options=None, version=1, match=None):
    with pytest.raises(ValueError, match=match or op):
        allocate(build(op, ins, outs, options, version))


def bad_invoke(op, ins, outs, values, options=None, match=None):
    it = allocate(build(op, ins, outs, options))
    for d, v in zip(it.get_input_details(), values):
        it.set_tensor(d["index"], v)
    with pytest.raises(RuntimeError, match=match or op):
        it.invoke()


def x(shape, dt=F32):
    return np.zeros(shape, dt)


# ------------------------------------------------------------------ CONCATENATION
@pytest.mark.parametrize("act", ["RELU", "RELU6", "TANH"])
def test_concat_fused_activation_rejected_like_tflite(act):
    bad_model("CONCATENATION", [In([2, 3]), In([2, 2])], [([2, 5], F32)],
              dict(axis=1, fused_activation_function=act), match="fused activation")


@pytest.mark.parametrize("ins,outs,axis", [
    ([In([2, 3]), In([2, 2])], [([2, 5], F32)], 2),          # axis out of range
    ([In([2, 3]), In([2, 2])], [([2, 5], F32)], -3),
    ([In([2, 3]), In([3, 3])], [([2, 6], F32)], 1),          # other dims differ
    ([In([2, 3]), In([2, 3, 1])], [([2, 6], F32)], 1),       # rank differs
    ([In([2, 3]), In([2, 3], I32)], [([2, 6], F32)], 1),     # types differ
    ([In([2, 3]), In([2, 3])], [([2, 6], I32)], 1),          # output type differs
    ([In([]), In([])], [([2], F32)], 0),                     # non-constant scalars
])
def test_concat_bad_shapes(ins, outs, axis):
    bad_model("CONCATENATION", ins, outs, dict(axis=axis))


def test_concat_int8_quant_mismatch():
    bad_model("CONCATENATION", [In([2], I8, quant=dict(scale=[0.5], zero_point=[0])),
                                In([2], I8, quant=dict(scale=[0.25], zero_point=[0]))],
              [([4], I8, dict(scale=[0.5], zero_point=[0]))], dict(axis=0), match="quantization")


# ------------------------------------------------------------------ DEPTH_TO_SPACE / SPACE_TO_DEPTH
@pytest.mark.parametrize("op,shape,bs", [
    ("DEPTH_TO_SPACE", [1, 2, 2, 8], 0), ("DEPTH_TO_SPACE", [1, 2, 2, 6], 2), ("DEPTH_TO_SPACE", [2, 2, 8], 2),
    ("DEPTH_TO_SPACE", [1, 2, 2, 8], -2),
    ("SPACE_TO_DEPTH", [1, 3, 4, 1], 2), ("SPACE_TO_DEPTH", [1, 4, 4, 1], 0), ("SPACE_TO_DEPTH", [4, 4, 1], 2),
])
def test_block_ops_bad_params(op, shape, bs):
    bad_model(op, [In(shape)], [([1, 1, 1, 1], F32)], dict(block_size=bs))


# ------------------------------------------------------------------ RESHAPE
@pytest.mark.parametrize("ins,opts", [
    ([In([2, 3]), np.array([4, 2], I32)], None),              # element count mismatch
    ([In([2, 3]), np.array([-1, -1], I32)], None),            # two -1
    ([In([2, 3]), np.array([-2, -3], I32)], None),            # negative dims
    ([In([2, 3])], dict(new_shape=[5])),
    ([In([2, 3])], None),                                     # no shape at all: a scalar, like TFLite
])
def test_reshape_bad_shape(ins, opts):
    bad_model("RESHAPE", ins, [([6], F32)], opts)


def test_reshape_too_many_option_dims():
    with pytest.raises(ValueError, match="RESHAPE"):
        allocate(build("RESHAPE", [In([1])], [([1] * 9, F32)], dict(new_shape=[1] * 9)))


def test_reshape_dynamic_shape_mismatch_at_invoke():
    bad_invoke("RESHAPE", [In([2, 3]), In([2], I32)], [([3, 2], F32)],
               [x([2, 3]), np.array([4, 4], I32)], match="RESHAPE")


# ------------------------------------------------------------------ PAD / PADV2 / MIRROR_PAD
@pytest.mark.parametrize("op,ins", [
    ("PAD", [In([2, 3]), np.array([[1, -1], [0, 0]], I32)]),           # negative padding
    ("PAD", [In([2, 3]), np.array([[1, 1]], I32)]),                    # wrong paddings shape
    ("PAD", [In([2, 3]), np.array([[1, 1, 1], [0, 0, 0]], I32)]),
    ("PAD", [In([2, 3]), np.array([[1, 1], [0, 0]], np.float32)]),     # float paddings
    ("PAD", [In([2, 3]), np.array([[1, 1], [0, 2 ** 40]], I64)]),      # overflow
    ("PADV2", [In([2, 3]), np.array([[1, 1], [0, 0]], I32), np.array([1, 2], F32)]),  # 2 constant values
    ("PADV2", [In([2, 3]), np.array([[1, 1], [0, 0]], I32), np.array([1], I32)]),     # type differs
])
def test_pad_bad_params(op, ins):
    bad_model(op, ins, [([4, 3], F32)])


def test_pad_dynamic_negative_paddings_at_invoke():
    bad_invoke("PAD", [In([2, 3]), In([2, 2], I32)], [([2, 3], F32)],
               [x([2, 3]), np.array([[0, 0], [-1, 0]], I32)], match="negative")


@pytest.mark.parametrize("mode,pads", [("REFLECT", [[3, 0], [0, 0]]), ("REFLECT", [[0, 0], [0, 4]]),
                                        ("SYMMETRIC", [[4, 0], [0, 0]]), ("SYMMETRIC", [[0, -1], [0, 0]])])
def test_mirror_pad_too_large(mode, pads):
    bad_model("MIRROR_PAD", [In([3, 4]), np.array(pads, I32)], [([3, 4], F32)], dict(mode=mode))


def test_mirror_pad_reflect_of_empty_dim_fails_like_tflite():
    bad_model("MIRROR_PAD", [In([2, 0]), np.array([[1, 1], [0, 0]], I32)], [([4, 0], F32)], dict(mode="REFLECT"))


def test_mirror_pad_dynamic_too_large_at_invoke():
    bad_invoke("MIRROR_PAD", [In([3, 4]), In([2, 2], I32)], [([3, 4], F32)],
               [x([3, 4]), np.array([[3, 3], [0, 0]], I32)], dict(mode="REFLECT"), match="REFLECT")


@pytest.mark.parametrize("opts", [dict(mode=7), None])
def test_mirror_pad_bad_or_missing_mode(opts):
    bad_model("MIRROR_PAD", [In([3, 4]), np.array([[1, 1], [1, 1]], I32)], [([5, 6], F32)], opts)


# ------------------------------------------------------------------ GATHER
@pytest.mark.parametrize("ins,opts", [
    ([In([3, 4]), np.array([0], I32)], dict(axis=2)),
    ([In([3, 4]), np.array([0], I32)], dict(axis=-3)),
    ([In([3, 4]), np.array([[0]], I32)], dict(axis=0, batch_dims=1)),     # batch_dims > axis
    ([In([3, 4]), np.array([[0, 1]], I32)], dict(axis=1, batch_dims=1)),  # batch dims differ
    ([In([3, 4]), np.array([0.0], F32)], dict(axis=0)),                   # float indices
])
def test_gather_bad_params(ins, opts):
    bad_model("GATHER", ins, [([1, 4], F32)], opts)


@pytest.mark.parametrize("idx", [[0, 3], [-1, 0], [2 ** 31 - 1, 0]])
def test_gather_out_of_range_index_at_invoke(idx):
    bad_invoke("GATHER", [In([3, 4]), In([2], I32)], [([2, 4], F32)], [x([3, 4]), np.array(idx, I32)],
               dict(axis=0), match="out of range")


def test_gather_constant_index_out_of_range_at_invoke():
    bad_invoke("GATHER", [In([3, 4]), np.array([5], I64)], [([1, 4], F32)], [x([3, 4])], dict(axis=0),
               match="out of range")


def test_gather_all_constant_out_of_range_fails_at_allocation():
    bad_model("GATHER", [np.zeros([3, 4], F32), np.array([5], I32)], [([1, 4], F32)], dict(axis=0),
              match="out of range")


# ------------------------------------------------------------------ TRANSPOSE
@pytest.mark.parametrize("perm", [[0, 0, 1], [0, 1], [0, 1, 3], [-4, 0, 1], [0, 1, 2, 3]])
def test_transpose_bad_perm(perm):
    bad_model("TRANSPOSE", [In([2, 3, 4]), np.array(perm, I32)], [([2, 3, 4], F32)])


def test_transpose_dynamic_bad_perm_at_invoke():
    bad_invoke("TRANSPOSE", [In([2, 3, 4]), In([3], I32)], [([2, 3, 4], F32)],
               [x([2, 3, 4]), np.array([1, 1, 0], I32)], match="perm")


# ------------------------------------------------------------------ STRIDED_SLICE
def ss_ins(begin, end, strides, shape=(4, 5)):
    return [In(list(shape))] + [np.array(v, I32) for v in (begin, end, strides)]


@pytest.mark.parametrize("ins,opts", [
    (ss_ins([0, 0], [2, 2], [1, 0]), {}),                               # zero stride
    (ss_ins([0, 0], [2], [1, 1]), {}),                                  # length mismatch
    (ss_ins([0, 0], [2, 2], [1]), {}),
    (ss_ins([5, 0], [6, 2], [1, 1]), dict(shrink_axis_mask=1)),         # shrink index out of range
    (ss_ins([-9, 0], [0, 2], [-1, 1]), dict(shrink_axis_mask=1)),
    (ss_ins([0, 0], [1, 1], [1, 1]), dict(ellipsis_mask=3)),            # two ellipses
    (ss_ins([0] * 32, [1] * 32, [1] * 32, shape=[1] * 32), {}),        # > 31 indices
    (ss_ins([3, 0], [4, 5], [1, 1]), dict(offset=True)),                # offset slice past the end
    (ss_ins([0, 0], [2, 2], [1, -2 ** 31]), {}),                        # INT32_MIN stride
])
def test_strided_slice_bad(ins, opts):
    bad_model("STRIDED_SLICE", ins, [([1, 1], F32)], opts)


def test_strided_slice_dynamic_zero_stride_at_invoke():
    bad_invoke("STRIDED_SLICE", [In([4, 5]), In([2], I32), In([2], I32), In([2], I32)], [([2, 2], F32)],
               [x([4, 5]), np.array([0, 0], I32), np.array([2, 2], I32), np.array([1, 0], I32)],
               match="stride")


def test_strided_slice_hostile_masks_do_not_read_past_spec():
    # Mask bits beyond the spec (TFLite would read begin[1] here) are ignored.
    it = allocate(build("STRIDED_SLICE", ss_ins([1], [3], [1], shape=(4, 5, 2, 2, 2)), [([2, 5, 2, 2, 2], F32)],
                        dict(ellipsis_mask=4, new_axis_mask=-8, shrink_axis_mask=-2)))
    v = np.arange(160, dtype=F32).reshape(4, 5, 2, 2, 2)
    it.set_tensor(it.get_input_details()[0]["index"], v)
    it.invoke()
    np.testing.assert_array_equal(it.get_tensor(it.get_output_details()[0]["index"]), v[1:3])


# ------------------------------------------------------------------ SLICE
@pytest.mark.parametrize("begin,size,it", [([1, 0], [4, 1], I32), ([0, 2], [1, 4], I64), ([-1, 0], [1, 1], I32),
                                           ([0, 0], [-2, 1], I32), ([5, 0], [-1, 1], I32), ([0], [1], I32)])
def test_slice_bad(begin, size, it):
    bad_model("SLICE", [In([4, 5]), np.array(begin, it), np.array(size, it)], [([1, 1], F32)])


def test_slice_dynamic_out_of_range_at_invoke():
    bad_invoke("SLICE", [In([4, 5]), In([2], I32), In([2], I32)], [([1, 1], F32)],
               [x([4, 5]), np.array([3, 0], I32), np.array([2, 1], I32)], match="SLICE")


# ------------------------------------------------------------------ SPLIT
@pytest.mark.parametrize("axis,n,outs", [
    (1, 2, 3),    # outputs != num_splits
    (1, 4, 4),    # not an even split
    (2, 2, 2),    # axis out of range
    (-3, 2, 2),
    (1, 0, 1),
])
def test_split_bad(axis, n, outs):
    bad_model("SPLIT", [np.array([axis], I32), In([4, 6])], [([4, 3], F32)] * outs, dict(num_splits=n))


def test_split_dynamic_axis_out_of_range_at_invoke():
    bad_invoke("SPLIT", [In([1], I32), In([4, 6])], [([4, 3], F32)] * 2, [np.array([5], I32), x([4, 6])],
               dict(num_splits=2), match="axis")


def test_split_empty_axis_tensor():
    bad_invoke("SPLIT", [In([0], I32), In([4, 6])], [([4, 3], F32)] * 2, [np.zeros([0], I32), x([4, 6])],
               dict(num_splits=2), match="axis")


# ------------------------------------------------------------------ PACK / UNPACK / SHAPE
@pytest.mark.parametrize("ins,opts", [
    ([In([2]), In([2])], dict(values_count=3, axis=0)),
    ([In([2]), In([3])], dict(values_count=2, axis=0)),
    ([In([2]), In([2])], dict(values_count=2, axis=2)),
    ([In([2]), In([2])], dict(values_count=2, axis=-3)),
    ([In([2]), In([2], I32)], dict(values_count=2, axis=0)),
])
def test_pack_bad(ins, opts):
    bad_model("PACK", ins, [([2, 2], F32)], opts)


@pytest.mark.parametrize("shape,opts,outs", [
    ([2, 3], dict(num=3, axis=0), 3), ([2, 3], dict(num=2, axis=0), 3), ([2, 3], dict(num=2, axis=2), 2),
    ([0, 3], dict(num=0, axis=0), 0),
])
def test_unpack_bad(shape, opts, outs):
    bad_model("UNPACK", [In(shape)], [([3], F32)] * outs, opts)


@pytest.mark.parametrize("opts", [None, {}, dict(out_type="FLOAT32")])
def test_shape_bad_out_type(opts):
    bad_model("SHAPE", [In([2, 3])], [([2], I32)], opts)


# ------------------------------------------------------------------ DENSIFY: hostile sparsity
def densify(values, shape, sparsity, dt=F32):
    mb = ModelBuilder()
    w = mb.add_tensor(list(shape), dt, data=np.asarray(values, dt), sparsity=sparsity)
    y = mb.add_tensor(list(shape), dt)
    mb.add_op("DENSIFY", [w], [y])
    mb.mark_output(y)
    return mb.build()


def good_sparse():
    dense = np.array([[0, 1, 0, 2], [0, 0, 0, 0], [3, 0, 0, 4]], F32)
    return to_sparse(dense, [0, 1], ["DENSE", "SPARSE_CSR"])


def test_densify_good_baseline():
    values, sp = good_sparse()
    it = allocate(densify(values, [3, 4], sp))
    it.invoke()
    np.testing.assert_array_equal(it.get_tensor(it.get_output_details()[0]["index"]),
                                  [[0, 1, 0, 2], [0, 0, 0, 0], [3, 0, 0, 4]])


def _csr(seg, idx):
    return dict(format="SPARSE_CSR", array_segments=np.array(seg, I32), array_indices=np.array(idx, I32))


@pytest.mark.parametrize("name,values,sp", [
    ("index_out_of_range", [1, 2, 3, 4],
     dict(traversal_order=[0, 1], block_map=[], dim_metadata=[dict(format="DENSE", dense_size=3), _csr([0, 2, 2, 4], [1, 9, 0, 3])])),
    ("negative_index", [1, 2, 3, 4],
     dict(traversal_order=[0, 1], block_map=[], dim_metadata=[dict(format="DENSE", dense_size=3), _csr([0, 2, 2, 4], [1, -1, 0, 3])])),
    ("segment_past_indices", [1, 2, 3, 4],
     dict(traversal_order=[0, 1], block_map=[], dim_metadata=[dict(format="DENSE", dense_size=3), _csr([0, 2, 2, 40], [1, 3, 0, 3])])),
    ("decreasing_segments", [1, 2, 3, 4],
     dict(traversal_order=[0, 1], block_map=[], dim_metadata=[dict(format="DENSE", dense_size=3), _csr([0, 3, 1, 4], [1, 3, 0, 3])])),
    ("short_values", [1, 2],
     dict(traversal_order=[0, 1], block_map=[], dim_metadata=[dict(format="DENSE", dense_size=3), _csr([0, 2, 2, 4], [1, 3, 0, 3])])),
    ("dense_size_too_big", [1] * 12,
     dict(traversal_order=[0, 1], block_map=[], dim_metadata=[dict(format="DENSE", dense_size=30), dict(format="DENSE", dense_size=4)])),
    ("bad_traversal", [1, 2, 3, 4],
     dict(traversal_order=[0, 0], block_map=[], dim_metadata=[dict(format="DENSE", dense_size=3), _csr([0, 2, 2, 4], [1, 3, 0, 3])])),
    ("traversal_out_of_range", [1, 2, 3, 4],
     dict(traversal_order=[0, 7], block_map=[], dim_metadata=[dict(format="DENSE", dense_size=3), _csr([0, 2, 2, 4], [1, 3, 0, 3])])),
    ("short_traversal", [1, 2, 3, 4],
     dict(traversal_order=[0], block_map=[], dim_metadata=[dict(format="DENSE", dense_size=3), _csr([0, 2, 2, 4], [1, 3, 0, 3])])),
    ("missing_dim_metadata", [1, 2, 3, 4],
     dict(traversal_order=[0, 1], block_map=[], dim_metadata=[dict(format="DENSE", dense_size=3)])),
    ("empty_segments", [1, 2, 3, 4],
     dict(traversal_order=[0, 1], block_map=[], dim_metadata=[dict(format="DENSE", dense_size=3), _csr([], [1, 3, 0, 3])])),
    ("block_map_out_of_range", [1] * 12,
     dict(traversal_order=[0, 1, 2], block_map=[5], dim_metadata=[dict(format="DENSE", dense_size=3),
                                                                   dict(format="DENSE", dense_size=2),
                                                                   dict(format="DENSE", dense_size=2)])),
    ("block_size_not_dividing", [1] * 12,
     dict(traversal_order=[0, 1, 2], block_map=[0], dim_metadata=[dict(format="DENSE", dense_size=1),
                                                                   dict(format="DENSE", dense_size=4),
                                                                   dict(format="DENSE", dense_size=2)])),
    ("zero_block_size", [1] * 12,
     dict(traversal_order=[0, 1, 2], block_map=[1], dim_metadata=[dict(format="DENSE", dense_size=3),
                                                                   dict(format="DENSE", dense_size=4),
                                                                   dict(format="DENSE", dense_size=0)])),
    ("sparse_block_dim", [1] * 12,
     dict(traversal_order=[0, 1, 2], block_map=[1], dim_metadata=[dict(format="DENSE", dense_size=3),
                                                                   dict(format="DENSE", dense_size=2),
                                                                   _csr([0, 1], [0])])),
])
def test_densify_hostile_metadata(name, values, sp):
    with pytest.raises(ValueError, match="DENSIFY"):
        allocate(densify(values, [3, 4], sp))


def test_densify_requires_constant_sparse_input():
    bad_model("DENSIFY", [In([3, 4])], [([3, 4], F32)])
    bad_model("DENSIFY", [np.ones([3, 4], F32)], [([3, 4], F32)], match="sparsity")
