"""The TFLite flatbuffer schema (v3) as data, for :mod:`tflite_gpu.testing.builder`:
enums, builtin operator codes, the builtin-options tables (union id and fields)
and which op uses which, and the field ids of the model's own tables.

Written by hand from the public ``schema.fbs``.
"""

from __future__ import annotations

import numpy as np

# ---------------------------------------------------------------------------
# Enums (schema.fbs)
# ---------------------------------------------------------------------------

TENSOR_TYPES = {
    "FLOAT32": 0, "FLOAT16": 1, "INT32": 2, "UINT8": 3, "INT64": 4,
    "STRING": 5, "BOOL": 6, "INT16": 7, "COMPLEX64": 8, "INT8": 9,
    "FLOAT64": 10, "COMPLEX128": 11, "UINT64": 12, "RESOURCE": 13,
    "VARIANT": 14, "UINT32": 15, "UINT16": 16, "INT4": 17, "BFLOAT16": 18,
    "INT2": 19, "UINT4": 20, "FLOAT8_E4M3FN": 21, "FLOAT8_E5M2": 22,
}

NP_TO_TENSOR_TYPE = {
    np.dtype(np.float32): 0, np.dtype(np.float16): 1, np.dtype(np.int32): 2,
    np.dtype(np.uint8): 3, np.dtype(np.int64): 4, np.dtype(np.bool_): 6,
    np.dtype(np.int16): 7, np.dtype(np.complex64): 8, np.dtype(np.int8): 9,
    np.dtype(np.float64): 10, np.dtype(np.complex128): 11,
    np.dtype(np.uint64): 12, np.dtype(np.uint32): 15, np.dtype(np.uint16): 16,
}
TENSOR_TYPE_TO_NP = {v: k for k, v in NP_TO_TENSOR_TYPE.items()}
try:  # BFLOAT16 has a numpy dtype only through ml_dtypes
    import ml_dtypes as _ml_dtypes
    NP_TO_TENSOR_TYPE[np.dtype(_ml_dtypes.bfloat16)] = 18
    TENSOR_TYPE_TO_NP[18] = np.dtype(_ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover
    pass
# Packed types: bits per element in a buffer (TFLite's layout: lowest bits first, see pack_bits).
PACKED_BITS = {17: 4, 20: 4, 19: 2}

_BUILTIN_OPERATORS = """
ADD AVERAGE_POOL_2D CONCATENATION CONV_2D DEPTHWISE_CONV_2D DEPTH_TO_SPACE
DEQUANTIZE EMBEDDING_LOOKUP FLOOR FULLY_CONNECTED HASHTABLE_LOOKUP
L2_NORMALIZATION L2_POOL_2D LOCAL_RESPONSE_NORMALIZATION LOGISTIC
LSH_PROJECTION LSTM MAX_POOL_2D MUL RELU RELU_N1_TO_1 RELU6 RESHAPE
RESIZE_BILINEAR RNN SOFTMAX SPACE_TO_DEPTH SVDF TANH CONCAT_EMBEDDINGS
SKIP_GRAM CALL CUSTOM EMBEDDING_LOOKUP_SPARSE PAD UNIDIRECTIONAL_SEQUENCE_RNN
GATHER BATCH_TO_SPACE_ND SPACE_TO_BATCH_ND TRANSPOSE MEAN SUB DIV SQUEEZE
UNIDIRECTIONAL_SEQUENCE_LSTM STRIDED_SLICE BIDIRECTIONAL_SEQUENCE_RNN EXP
TOPK_V2 SPLIT LOG_SOFTMAX DELEGATE BIDIRECTIONAL_SEQUENCE_LSTM CAST PRELU
MAXIMUM ARG_MAX MINIMUM LESS NEG PADV2 GREATER GREATER_EQUAL LESS_EQUAL
SELECT SLICE SIN TRANSPOSE_CONV SPARSE_TO_DENSE TILE EXPAND_DIMS EQUAL
NOT_EQUAL LOG SUM SQRT RSQRT SHAPE POW ARG_MIN FAKE_QUANT REDUCE_PROD
REDUCE_MAX PACK LOGICAL_OR ONE_HOT LOGICAL_AND LOGICAL_NOT UNPACK REDUCE_MIN
FLOOR_DIV REDUCE_ANY SQUARE ZEROS_LIKE FILL FLOOR_MOD RANGE
RESIZE_NEAREST_NEIGHBOR LEAKY_RELU SQUARED_DIFFERENCE MIRROR_PAD ABS SPLIT_V
UNIQUE CEIL REVERSE_V2 ADD_N GATHER_ND COS WHERE RANK ELU REVERSE_SEQUENCE
MATRIX_DIAG QUANTIZE MATRIX_SET_DIAG ROUND HARD_SWISH IF WHILE
NON_MAX_SUPPRESSION_V4 NON_MAX_SUPPRESSION_V5 SCATTER_ND SELECT_V2 DENSIFY
SEGMENT_SUM BATCH_MATMUL PLACEHOLDER_FOR_GREATER_OP_CODES CUMSUM CALL_ONCE
BROADCAST_TO RFFT2D CONV_3D IMAG REAL COMPLEX_ABS HASHTABLE HASHTABLE_FIND
HASHTABLE_IMPORT HASHTABLE_SIZE REDUCE_ALL CONV_3D_TRANSPOSE VAR_HANDLE
READ_VARIABLE ASSIGN_VARIABLE BROADCAST_ARGS RANDOM_STANDARD_NORMAL BUCKETIZE
RANDOM_UNIFORM MULTINOMIAL GELU DYNAMIC_UPDATE_SLICE RELU_0_TO_1
UNSORTED_SEGMENT_PROD UNSORTED_SEGMENT_MAX UNSORTED_SEGMENT_SUM ATAN2
UNSORTED_SEGMENT_MIN SIGN BITCAST BITWISE_XOR RIGHT_SHIFT
""".split()
BUILTIN_CODES = {name: i for i, name in enumerate(_BUILTIN_OPERATORS)}
# Builtins after the StableHLO block (codes 162..) that LiteRT's builtin resolver registers.
BUILTIN_CODES.update({"DILATE": 203, "REDUCE_WINDOW": 205})
BUILTIN_NAMES = {i: name for name, i in BUILTIN_CODES.items()}

_ENUMS = {
    "Padding": {"SAME": 0, "VALID": 1},
    "ActivationFunctionType": {"NONE": 0, "RELU": 1, "RELU_N1_TO_1": 2,
                               "RELU1": 2, "RELU6": 3, "TANH": 4,
                               "SIGN_BIT": 5},
    "FullyConnectedOptionsWeightsFormat": {"DEFAULT": 0,
                                           "SHUFFLED4x16INT8": 1},
    "LSTMKernelType": {"FULL": 0, "BASIC": 1},
    "MirrorPadMode": {"REFLECT": 0, "SYMMETRIC": 1},
    "CombinerType": {"SUM": 0, "MEAN": 1, "SQRTN": 2},
    "LSHProjectionType": {"UNKNOWN": 0, "SPARSE": 1, "DENSE": 2},
    "TensorType": TENSOR_TYPES,
    "DimensionType": {"DENSE": 0, "SPARSE_CSR": 1},
}

# ---------------------------------------------------------------------------
# Builtin options tables: name -> (BuiltinOptions union id, fields)
# Each field is (name, kind, default); field id == position in the list.
# kinds: 'i8' 'u8' 'bool' 'i32' 'u32' 'i64' 'f32' 'vi32' or an enum name
# (stored as int8).  ``None`` in a field list marks a deprecated slot.
# ---------------------------------------------------------------------------

_ACT = ("fused_activation_function", "ActivationFunctionType", 0)


def _empty(uid):
    return (uid, [])


OPTIONS_TABLES = {
    "Conv2DOptions": (1, [("padding", "Padding", 0), ("stride_w", "i32", 0),
                          ("stride_h", "i32", 0), _ACT,
                          ("dilation_w_factor", "i32", 1),
                          ("dilation_h_factor", "i32", 1),
                          ("quantized_bias_type", "TensorType", 0)]),
    "DepthwiseConv2DOptions": (2, [("padding", "Padding", 0),
                                   ("stride_w", "i32", 0),
                                   ("stride_h", "i32", 0),
                                   ("depth_multiplier", "i32", 0), _ACT,
                                   ("dilation_w_factor", "i32", 1),
                                   ("dilation_h_factor", "i32", 1)]),
    "ConcatEmbeddingsOptions": (3, [("num_channels", "i32", 0),
                                    ("num_columns_per_channel", "vi32", None),
                                    ("embedding_dim_per_channel", "vi32",
                                     None)]),
    "LSHProjectionOptions": (4, [("type", "LSHProjectionType", 0)]),
    "Pool2DOptions": (5, [("padding", "Padding", 0), ("stride_w", "i32", 0),
                          ("stride_h", "i32", 0), ("filter_width", "i32", 0),
                          ("filter_height", "i32", 0), _ACT]),
    "SVDFOptions": (6, [("rank", "i32", 0), _ACT,
                        ("asymmetric_quantize_inputs", "bool", False)]),
    "RNNOptions": (7, [_ACT, ("asymmetric_quantize_inputs", "bool", False)]),
    "FullyConnectedOptions": (8, [_ACT,
                                  ("weights_format",
                                   "FullyConnectedOptionsWeightsFormat", 0),
                                  ("keep_num_dims", "bool", False),
                                  ("asymmetric_quantize_inputs", "bool",
                                   False),
                                  ("quantized_bias_type", "TensorType", 0)]),
    "SoftmaxOptions": (9, [("beta", "f32", 0.0)]),
    "ConcatenationOptions": (10, [("axis", "i32", 0), _ACT]),
    "AddOptions": (11, [_ACT, ("pot_scale_int16", "bool", True)]),
    "L2NormOptions": (12, [_ACT]),
    "LocalResponseNormalizationOptions": (13, [("radius", "i32", 0),
                                               ("bias", "f32", 0.0),
                                               ("alpha", "f32", 0.0),
                                               ("beta", "f32", 0.0)]),
    "LSTMOptions": (14, [_ACT, ("cell_clip", "f32", 0.0),
                         ("proj_clip", "f32", 0.0),
                         ("kernel_type", "LSTMKernelType", 0),
                         ("asymmetric_quantize_inputs", "bool", False)]),
    "ResizeBilinearOptions": (15, [None, None,  # new_height/new_width (dep.)
                                   ("align_corners", "bool", False),
                                   ("half_pixel_centers", "bool", False)]),
    "CallOptions": (16, [("subgraph", "u32", 0)]),
    "ReshapeOptions": (17, [("new_shape", "vi32", None)]),
    "SkipGramOptions": (18, [("ngram_size", "i32", 0),
                             ("max_skip_size", "i32", 0),
                             ("include_all_ngrams", "bool", False)]),
    "SpaceToDepthOptions": (19, [("block_size", "i32", 0)]),
    "EmbeddingLookupSparseOptions": (20, [("combiner", "CombinerType", 0)]),
    "MulOptions": (21, [_ACT]),
    "PadOptions": _empty(22),
    "GatherOptions": (23, [("axis", "i32", 0), ("batch_dims", "i32", 0)]),
    "BatchToSpaceNDOptions": _empty(24),
    "SpaceToBatchNDOptions": _empty(25),
    "TransposeOptions": _empty(26),
    "ReducerOptions": (27, [("keep_dims", "bool", False)]),
    "SubOptions": (28, [_ACT, ("pot_scale_int16", "bool", True)]),
    "DivOptions": (29, [_ACT]),
    "SqueezeOptions": (30, [("squeeze_dims", "vi32", None)]),
    "SequenceRNNOptions": (31, [("time_major", "bool", False), _ACT,
                                ("asymmetric_quantize_inputs", "bool",
                                 False)]),
    "StridedSliceOptions": (32, [("begin_mask", "i32", 0),
                                 ("end_mask", "i32", 0),
                                 ("ellipsis_mask", "i32", 0),
                                 ("new_axis_mask", "i32", 0),
                                 ("shrink_axis_mask", "i32", 0),
                                 ("offset", "bool", False)]),
    "ExpOptions": _empty(33),
    "TopKV2Options": _empty(34),
    "SplitOptions": (35, [("num_splits", "i32", 0)]),
    "LogSoftmaxOptions": _empty(36),
    "CastOptions": (37, [("in_data_type", "TensorType", 0),
                         ("out_data_type", "TensorType", 0)]),
    "DequantizeOptions": _empty(38),
    "MaximumMinimumOptions": _empty(39),
    "ArgMaxOptions": (40, [("output_type", "TensorType", 0)]),
    "LessOptions": _empty(41),
    "NegOptions": _empty(42),
    "PadV2Options": _empty(43),
    "GreaterOptions": _empty(44),
    "GreaterEqualOptions": _empty(45),
    "LessEqualOptions": _empty(46),
    "SelectOptions": _empty(47),
    "SliceOptions": _empty(48),
    "TransposeConvOptions": (49, [("padding", "Padding", 0),
                                  ("stride_w", "i32", 0),
                                  ("stride_h", "i32", 0), _ACT,
                                  ("quantized_bias_type", "TensorType", 0)]),
    "SparseToDenseOptions": (50, [("validate_indices", "bool", False)]),
    "TileOptions": _empty(51),
    "ExpandDimsOptions": _empty(52),
    "EqualOptions": _empty(53),
    "NotEqualOptions": _empty(54),
    "ShapeOptions": (55, [("out_type", "TensorType", 0)]),
    "PowOptions": _empty(56),
    "ArgMinOptions": (57, [("output_type", "TensorType", 0)]),
    "FakeQuantOptions": (58, [("min", "f32", 0.0), ("max", "f32", 0.0),
                              ("num_bits", "i32", 0),
                              ("narrow_range", "bool", False)]),
    "PackOptions": (59, [("values_count", "i32", 0), ("axis", "i32", 0)]),
    "LogicalOrOptions": _empty(60),
    "OneHotOptions": (61, [("axis", "i32", 0)]),
    "LogicalAndOptions": _empty(62),
    "LogicalNotOptions": _empty(63),
    "UnpackOptions": (64, [("num", "i32", 0), ("axis", "i32", 0)]),
    "FloorDivOptions": _empty(65),
    "SquareOptions": _empty(66),
    "ZerosLikeOptions": _empty(67),
    "FillOptions": _empty(68),
    "BidirectionalSequenceLSTMOptions": (69, [_ACT, ("cell_clip", "f32", 0.0),
                                              ("proj_clip", "f32", 0.0),
                                              ("merge_outputs", "bool", False),
                                              ("time_major", "bool", True),
                                              ("asymmetric_quantize_inputs",
                                               "bool", False)]),
    "BidirectionalSequenceRNNOptions": (70, [("time_major", "bool", False),
                                             _ACT,
                                             ("merge_outputs", "bool", False),
                                             ("asymmetric_quantize_inputs",
                                              "bool", False)]),
    "UnidirectionalSequenceLSTMOptions": (71, [_ACT,
                                               ("cell_clip", "f32", 0.0),
                                               ("proj_clip", "f32", 0.0),
                                               ("time_major", "bool", False),
                                               ("asymmetric_quantize_inputs",
                                                "bool", False),
                                               ("diagonal_recurrent_tensors",
                                                "bool", False)]),
    "FloorModOptions": _empty(72),
    "RangeOptions": _empty(73),
    "ResizeNearestNeighborOptions": (74, [("align_corners", "bool", False),
                                          ("half_pixel_centers", "bool",
                                           False)]),
    "LeakyReluOptions": (75, [("alpha", "f32", 0.0)]),
    "SquaredDifferenceOptions": _empty(76),
    "MirrorPadOptions": (77, [("mode", "MirrorPadMode", 0)]),
    "AbsOptions": _empty(78),
    "SplitVOptions": (79, [("num_splits", "i32", 0)]),
    "UniqueOptions": (80, [("idx_out_type", "TensorType", 2)]),
    "ReverseV2Options": _empty(81),
    "AddNOptions": _empty(82),
    "GatherNdOptions": _empty(83),
    "CosOptions": _empty(84),
    "WhereOptions": _empty(85),
    "RankOptions": _empty(86),
    "ReverseSequenceOptions": (87, [("seq_dim", "i32", 0),
                                    ("batch_dim", "i32", 0)]),
    "MatrixDiagOptions": _empty(88),
    "QuantizeOptions": _empty(89),
    "MatrixSetDiagOptions": _empty(90),
    "HardSwishOptions": _empty(91),
    "IfOptions": (92, [("then_subgraph_index", "i32", 0),
                       ("else_subgraph_index", "i32", 0)]),
    "WhileOptions": (93, [("cond_subgraph_index", "i32", 0),
                          ("body_subgraph_index", "i32", 0)]),
    "DepthToSpaceOptions": (94, [("block_size", "i32", 0)]),
    "NonMaxSuppressionV4Options": _empty(95),
    "NonMaxSuppressionV5Options": _empty(96),
    "ScatterNdOptions": _empty(97),
    "SelectV2Options": _empty(98),
    "DensifyOptions": _empty(99),
    "SegmentSumOptions": _empty(100),
    "BatchMatMulOptions": (101, [("adj_x", "bool", False),
                                 ("adj_y", "bool", False),
                                 ("asymmetric_quantize_inputs", "bool",
                                  False)]),
    "CumsumOptions": (102, [("exclusive", "bool", False),
                            ("reverse", "bool", False)]),
    "CallOnceOptions": (103, [("init_subgraph_index", "i32", 0)]),
    "BroadcastToOptions": _empty(104),
    "Rfft2dOptions": _empty(105),
    "Conv3DOptions": (106, [("padding", "Padding", 0), ("stride_d", "i32", 0),
                            ("stride_w", "i32", 0), ("stride_h", "i32", 0),
                            _ACT, ("dilation_d_factor", "i32", 1),
                            ("dilation_w_factor", "i32", 1),
                            ("dilation_h_factor", "i32", 1)]),
    "HashtableOptions": (107, [("table_id", "i32", 0),
                               ("key_dtype", "TensorType", 0),
                               ("value_dtype", "TensorType", 0)]),
    "HashtableFindOptions": _empty(108),
    "HashtableImportOptions": _empty(109),
    "HashtableSizeOptions": _empty(110),
    "VarHandleOptions": (111, [("container", "str", None),
                               ("shared_name", "str", None)]),
    "ReadVariableOptions": _empty(112),
    "AssignVariableOptions": _empty(113),
    "RandomOptions": (114, [("seed", "i64", 0), ("seed2", "i64", 0)]),
    "BucketizeOptions": (115, [("boundaries", "vf32", None)]),
    "GeluOptions": (116, [("approximate", "bool", False)]),
    "DynamicUpdateSliceOptions": _empty(117),
    "UnsortedSegmentProdOptions": _empty(118),
    "UnsortedSegmentMaxOptions": _empty(119),
    "UnsortedSegmentMinOptions": _empty(120),
    "UnsortedSegmentSumOptions": _empty(121),
    "ATan2Options": _empty(122),
    "SignOptions": _empty(123),
    "BitcastOptions": _empty(124),
    "BitwiseXorOptions": _empty(125),
    "RightShiftOptions": _empty(126),
}

# builtin_options_2 tables (the BuiltinOptions2 union): name -> (union id, fields).
OPTIONS2_TABLES = {
    "DilateOptions": (18, []),
    "ReduceWindowOptions": (20, [("reduce_function", "enum32:ReduceWindowFunction", 0)]),
}
OP_OPTIONS2 = {"DILATE": "DilateOptions", "REDUCE_WINDOW": "ReduceWindowOptions"}

OP_OPTIONS = {
    "ADD": "AddOptions", "SUB": "SubOptions", "MUL": "MulOptions",
    "DIV": "DivOptions",
    "AVERAGE_POOL_2D": "Pool2DOptions", "MAX_POOL_2D": "Pool2DOptions",
    "L2_POOL_2D": "Pool2DOptions",
    "CONCATENATION": "ConcatenationOptions",
    "CONV_2D": "Conv2DOptions", "DEPTHWISE_CONV_2D": "DepthwiseConv2DOptions",
    "CONV_3D": "Conv3DOptions", "CONV_3D_TRANSPOSE": "Conv3DOptions",
    "FULLY_CONNECTED": "FullyConnectedOptions",
    "SOFTMAX": "SoftmaxOptions", "LOG_SOFTMAX": "LogSoftmaxOptions",
    "LSTM": "LSTMOptions",
    "UNIDIRECTIONAL_SEQUENCE_LSTM": "UnidirectionalSequenceLSTMOptions",
    "BIDIRECTIONAL_SEQUENCE_LSTM": "BidirectionalSequenceLSTMOptions",
    "RNN": "RNNOptions", "UNIDIRECTIONAL_SEQUENCE_RNN": "SequenceRNNOptions",
    "BIDIRECTIONAL_SEQUENCE_RNN": "BidirectionalSequenceRNNOptions",
    "SVDF": "SVDFOptions",
    "RESIZE_BILINEAR": "ResizeBilinearOptions",
    "RESIZE_NEAREST_NEIGHBOR": "ResizeNearestNeighborOptions",
    "RESHAPE": "ReshapeOptions", "SQUEEZE": "SqueezeOptions",
    "STRIDED_SLICE": "StridedSliceOptions",
    "TRANSPOSE_CONV": "TransposeConvOptions",
    "PAD": "PadOptions", "PADV2": "PadV2Options",
    "MIRROR_PAD": "MirrorPadOptions",
    "SPACE_TO_DEPTH": "SpaceToDepthOptions",
    "DEPTH_TO_SPACE": "DepthToSpaceOptions",
    "SPACE_TO_BATCH_ND": "SpaceToBatchNDOptions",
    "BATCH_TO_SPACE_ND": "BatchToSpaceNDOptions",
    "GATHER": "GatherOptions", "GATHER_ND": "GatherNdOptions",
    "MEAN": "ReducerOptions", "SUM": "ReducerOptions",
    "REDUCE_MAX": "ReducerOptions", "REDUCE_MIN": "ReducerOptions",
    "REDUCE_PROD": "ReducerOptions", "REDUCE_ANY": "ReducerOptions",
    "REDUCE_ALL": "ReducerOptions",
    "SPLIT": "SplitOptions", "SPLIT_V": "SplitVOptions",
    "PACK": "PackOptions", "UNPACK": "UnpackOptions",
    "CAST": "CastOptions", "SHAPE": "ShapeOptions",
    "ARG_MAX": "ArgMaxOptions", "ARG_MIN": "ArgMinOptions",
    "LEAKY_RELU": "LeakyReluOptions",
    "BATCH_MATMUL": "BatchMatMulOptions",
    "TRANSPOSE": "TransposeOptions", "SLICE": "SliceOptions",
    "SQUARED_DIFFERENCE": "SquaredDifferenceOptions",
    "MAXIMUM": "MaximumMinimumOptions", "MINIMUM": "MaximumMinimumOptions",
    "LOGICAL_AND": "LogicalAndOptions", "LOGICAL_OR": "LogicalOrOptions",
    "LOGICAL_NOT": "LogicalNotOptions",
    "EXP": "ExpOptions", "COS": "CosOptions", "ABS": "AbsOptions",
    "NEG": "NegOptions", "SQUARE": "SquareOptions", "POW": "PowOptions",
    "HARD_SWISH": "HardSwishOptions",
    "DEQUANTIZE": "DequantizeOptions", "QUANTIZE": "QuantizeOptions",
    "DENSIFY": "DensifyOptions",
    "L2_NORMALIZATION": "L2NormOptions",
    "LOCAL_RESPONSE_NORMALIZATION": "LocalResponseNormalizationOptions",
    "TILE": "TileOptions", "EXPAND_DIMS": "ExpandDimsOptions",
    "EQUAL": "EqualOptions", "NOT_EQUAL": "NotEqualOptions",
    "LESS": "LessOptions", "LESS_EQUAL": "LessEqualOptions",
    "GREATER": "GreaterOptions", "GREATER_EQUAL": "GreaterEqualOptions",
    "SELECT": "SelectOptions", "SELECT_V2": "SelectV2Options",
    "FLOOR_DIV": "FloorDivOptions", "FLOOR_MOD": "FloorModOptions",
    "ZEROS_LIKE": "ZerosLikeOptions", "FILL": "FillOptions",
    "RANGE": "RangeOptions", "ONE_HOT": "OneHotOptions",
    "TOPK_V2": "TopKV2Options", "ADD_N": "AddNOptions",
    "REVERSE_V2": "ReverseV2Options", "RANK": "RankOptions",
    "WHERE": "WhereOptions", "UNIQUE": "UniqueOptions",
    "MATRIX_DIAG": "MatrixDiagOptions", "MATRIX_SET_DIAG": "MatrixSetDiagOptions",
    "REVERSE_SEQUENCE": "ReverseSequenceOptions",
    "FAKE_QUANT": "FakeQuantOptions", "CALL": "CallOptions",
    "IF": "IfOptions", "WHILE": "WhileOptions", "CALL_ONCE": "CallOnceOptions",
    "SCATTER_ND": "ScatterNdOptions", "SEGMENT_SUM": "SegmentSumOptions",
    "CUMSUM": "CumsumOptions", "BROADCAST_TO": "BroadcastToOptions",
    "GELU": "GeluOptions", "BUCKETIZE": "BucketizeOptions",
    "DYNAMIC_UPDATE_SLICE": "DynamicUpdateSliceOptions",
    "SPARSE_TO_DENSE": "SparseToDenseOptions",
    "SKIP_GRAM": "SkipGramOptions", "LSH_PROJECTION": "LSHProjectionOptions",
    "CONCAT_EMBEDDINGS": "ConcatEmbeddingsOptions",
    "EMBEDDING_LOOKUP_SPARSE": "EmbeddingLookupSparseOptions",
    "NON_MAX_SUPPRESSION_V4": "NonMaxSuppressionV4Options",
    "NON_MAX_SUPPRESSION_V5": "NonMaxSuppressionV5Options",
    "SIGN": "SignOptions", "BITCAST": "BitcastOptions",
    "BITWISE_XOR": "BitwiseXorOptions", "RIGHT_SHIFT": "RightShiftOptions",
    "ATAN2": "ATan2Options", "RFFT2D": "Rfft2dOptions",
    "UNSORTED_SEGMENT_PROD": "UnsortedSegmentProdOptions",
    "UNSORTED_SEGMENT_MAX": "UnsortedSegmentMaxOptions",
    "UNSORTED_SEGMENT_SUM": "UnsortedSegmentSumOptions",
    "UNSORTED_SEGMENT_MIN": "UnsortedSegmentMinOptions",
    "VAR_HANDLE": "VarHandleOptions",
    "READ_VARIABLE": "ReadVariableOptions",
    "ASSIGN_VARIABLE": "AssignVariableOptions",
    "RANDOM_STANDARD_NORMAL": "RandomOptions", "RANDOM_UNIFORM": "RandomOptions",
    "MULTINOMIAL": "RandomOptions",
    "HASHTABLE": "HashtableOptions", "HASHTABLE_FIND": "HashtableFindOptions",
    "HASHTABLE_IMPORT": "HashtableImportOptions",
    "HASHTABLE_SIZE": "HashtableSizeOptions",
}

# Field ids of the fixed tables (vtable slot = field id).
_MODEL = dict(version=0, operator_codes=1, subgraphs=2, description=3,
              buffers=4, metadata_buffer=5, metadata=6, signature_defs=7)
_SUBGRAPH = dict(tensors=0, inputs=1, outputs=2, operators=3, name=4)
_TENSOR = dict(shape=0, type=1, buffer=2, name=3, quantization=4,
               is_variable=5, sparsity=6, shape_signature=7)
_QUANT = dict(min=0, max=1, scale=2, zero_point=3, details_type=4, details=5,
              quantized_dimension=6)
_SPARSITY = dict(traversal_order=0, block_map=1, dim_metadata=2)
_DIMMETA = dict(format=0, dense_size=1, array_segments_type=2,
                array_segments=3, array_indices_type=4, array_indices=5)
_OPCODE = dict(deprecated_builtin_code=0, custom_code=1, version=2,
               builtin_code=3)
_OPERATOR = dict(opcode_index=0, inputs=1, outputs=2, builtin_options_type=3,
                 builtin_options=4, custom_options=5, custom_options_format=6,
                 mutating_variable_inputs=7, intermediates=8, large_custom_options_offset=9,
                 large_custom_options_size=10, builtin_options_2_type=11, builtin_options_2=12)
_BUFFER = dict(data=0, offset=1, size=2)
_METADATA = dict(name=0, buffer=1)
_TENSORMAP = dict(name=0, tensor_index=1)
_SIGDEF = dict(inputs=0, outputs=1, signature_key=2, subgraph_index=4)

# SparseIndexVector union: Int32Vector=1, Uint16Vector=2, Uint8Vector=3.
_SPARSE_INDEX_TYPES = {np.dtype(np.int32): 1, np.dtype(np.uint16): 2,
                       np.dtype(np.uint8): 3}

_SCHEMA_VERSION = 3

_ENUMS["ReduceWindowFunction"] = {"UNSUPPORTED": 0, "ADD": 1, "MUL": 2, "MINIMUM": 3, "MAXIMUM": 4,
                                  "ALL": 5, "ANY": 6}
