"""tflite_gpu.testing.quant: the test helpers for quantized models, checked against LiteRT (which
reads the quantization parameters the builder writes, and dequantizes with them)."""
import numpy as np

from harness import run_litert
from tflite_gpu.testing import quant as Q


def test_builder_writes_per_tensor_and_per_channel_params():
    from ai_edge_litert.interpreter import Interpreter
    w, wqp = Q.quantize_per_channel_symmetric(np.random.default_rng(0).standard_normal((3, 4)), axis=0)
    m = Q.single_op_model_q("DEQUANTIZE", [([2, 5], np.uint8, Q.QParams(0.25, 7))],
                            [([2, 5], np.float32, None)])
    it = Interpreter(model_content=m)
    d = it.get_input_details()[0]["quantization_parameters"]
    assert np.allclose(d["scales"], [0.25]) and list(d["zero_points"]) == [7]
    m2 = Q.single_op_model_q("DEQUANTIZE", [], [([3, 4], np.float32, None)], consts=[(w, wqp)])
    it2 = Interpreter(model_content=m2)
    t = [t for t in it2.get_tensor_details() if t["name"] == "const0"][0]
    q = t["quantization_parameters"]
    assert q["quantized_dimension"] == 0
    assert np.allclose(q["scales"], wqp.scales()) and list(q["zero_points"]) == [0, 0, 0]
    assert w.dtype == np.int8 and w.min() >= -127


def test_dequantize_matches_litert():
    rng = np.random.default_rng(1)
    for dt, qp in [(np.int8, Q.QParams(0.05, -3)), (np.uint8, Q.QParams(0.1, 128)),
                   (np.int16, Q.QParams(0.001, 0))]:
        x = Q.random_q(rng, [4, 9], dt)
        m = Q.single_op_model_q("DEQUANTIZE", [([4, 9], dt, qp)], [([4, 9], np.float32, None)])
        np.testing.assert_allclose(Q.dequantize(x, qp), run_litert(m, [x])[0], rtol=0, atol=1e-4 * float(np.max(qp.scales())))  # LiteRT rounds its float steps differently: far below a step
    qp = Q.QParams([0.1, 0.2, 0.3], [0, 1, -1], axis=1)
    x = Q.random_q(rng, [2, 3, 4], np.int8)
    m = Q.single_op_model_q("DEQUANTIZE", [([2, 3, 4], np.int8, qp)], [([2, 3, 4], np.float32, None)],
                            version=4)
    np.testing.assert_allclose(Q.dequantize(x, qp), run_litert(m, [x])[0], rtol=0, atol=1e-4 * float(np.max(qp.scales())))  # LiteRT rounds its float steps differently: far below a step


def test_quantize_round_trip_and_range():
    for dt in (np.int8, np.uint8, np.int16):
        qp = Q.params_from_range(-3.0, 5.0, dt)
        x = np.linspace(-3, 5, 101).astype(np.float32)
        q = Q.quantize(x, qp, dt)
        assert q.dtype == dt
        # every value of the range is representable within half a step
        assert np.max(np.abs(Q.dequantize(q, qp) - x)) <= qp.scale * 0.5 + 1e-6
        assert Q.dequantize(Q.quantize(np.float32(0), qp, dt), qp) == 0  # zero exact
    qp = Q.QParams(0.5, 0)
    np.testing.assert_array_equal(Q.quantize([0.25, -0.25, 0.75, 1e9, -1e9], qp, np.int8),
                                  [1, -1, 2, 127, -128])  # half away from zero, saturating
