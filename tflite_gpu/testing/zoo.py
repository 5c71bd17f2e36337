"""Whole test models built with :mod:`tflite_gpu.testing.builder`.

Every function returns ``.tflite`` bytes with random but seeded weights
(``numpy.random.default_rng(seed)``, He-style init so activations stay in a
sane range).  All models run under ai-edge-litert.

* ``mobilenet_v1(input_size=224, alpha=1.0, num_classes=1001, seed=0,
  batch=1, weights_dtype='float32', classifier='conv', large_buffers=False)``
* ``mobilenet_v2(input_size=224, alpha=1.0, num_classes=1001, seed=0,
  batch=1, weights_dtype='float32', classifier='conv', large_buffers=False)``
  ``weights_dtype='float16'`` stores weights/biases as float16 constants
  followed by DEQUANTIZE ops (post-training float16 quantization layout);
  ``classifier='fc'`` uses FULLY_CONNECTED instead of the 1x1 conv head;
  ``large_buffers=True`` writes weights after the flatbuffer
  (``Buffer.offset``/``size``).
* ``encoder_decoder(seed=0, input_size=64, num_classes=4)`` -- conv
  downsampling, TRANSPOSE_CONV + RESIZE_BILINEAR(half_pixel_centers)
  upsampling, CONCATENATION skips, SOFTMAX and LOGISTIC heads (2 outputs).
* ``lstm_model(seed=0, batch=1, time_steps=8, input_size=16, num_units=32,
  num_classes=10)`` -- UNIDIRECTIONAL_SEQUENCE_LSTM (24-input form, optional
  tensors -1, variable state tensors) + FULLY_CONNECTED(keep_num_dims) +
  SOFTMAX.
* ``basic_lstm_model(seed=0, batch=1, input_size=8, num_units=16)`` -- one
  LSTM op with kernel_type BASIC (version 2): inputs (input,
  prev_activation, weights, biases, prev_state), 4 outputs
  (activation, state, concat_temp, activation_temp); the first two are the
  graph outputs.
* ``ZOO``: name -> zero-argument callable returning bytes.
"""

from __future__ import annotations

import numpy as np

from .builder import ModelBuilder

__all__ = ["mobilenet_v1", "mobilenet_v2", "encoder_decoder", "lstm_model",
           "basic_lstm_model", "ZOO"]


def _same_out(size, stride):
    return (size + stride - 1) // stride


def _make_divisible(v, divisor=8, min_value=None):
    min_value = min_value or divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


class _Net:
    """Tiny helper tracking NHWC shapes on top of ModelBuilder."""

    def __init__(self, seed, weights_dtype="float32", description=None):
        self.mb = ModelBuilder(description or "tflite_gpu zoo model")
        self.rng = np.random.default_rng(seed)
        self.wdtype = np.dtype(weights_dtype)
        if self.wdtype not in (np.dtype(np.float32), np.dtype(np.float16)):
            raise ValueError("weights_dtype must be 'float32' or 'float16'")
        self.n = 0

    def name(self, prefix):
        self.n += 1
        return f"{prefix}_{self.n}"

    def shape(self, t):
        return self.mb.tensor_shape(t)

    def weight(self, arr, name):
        """Constant float weight; float16 + DEQUANTIZE when requested."""
        arr = np.asarray(arr, np.float32)
        if self.wdtype == np.float16:
            c = self.mb.add_const(arr.astype(np.float16), name=name + "_fp16")
            out = self.mb.add_tensor(arr.shape, np.float32, name=name)
            self.mb.add_op("DEQUANTIZE", [c], [out], version=3)
            return out
        return self.mb.add_const(arr, name=name)

    def he(self, shape, fan_in, gain=2.0):
        return (self.rng.standard_normal(shape) *
                np.sqrt(gain / fan_in)).astype(np.float32)

    def bias(self, n, scale=0.05):
        return (self.rng.standard_normal(n) * scale).astype(np.float32)

    def conv(self, x, cout, k=3, stride=1, act="RELU6", padding="SAME",
             gain=2.0, prefix="conv"):
        n, h, w, cin = self.shape(x)
        nm = self.name(prefix)
        wt = self.weight(self.he((cout, k, k, cin), k * k * cin, gain),
                         nm + "_w")
        b = self.weight(self.bias(cout), nm + "_b")
        if padding == "SAME":
            oh, ow = _same_out(h, stride), _same_out(w, stride)
        else:
            oh, ow = (h - k) // stride + 1, (w - k) // stride + 1
        y = self.mb.add_tensor([n, oh, ow, cout], name=nm)
        self.mb.add_op("CONV_2D", [x, wt, b], [y], options=dict(
            padding=padding, stride_w=stride, stride_h=stride,
            fused_activation_function=act, dilation_w_factor=1,
            dilation_h_factor=1))
        return y

    def dwconv(self, x, k=3, stride=1, act="RELU6", mult=1):
        n, h, w, cin = self.shape(x)
        nm = self.name("dwconv")
        cout = cin * mult
        wt = self.weight(self.he((1, k, k, cout), k * k), nm + "_w")
        b = self.weight(self.bias(cout), nm + "_b")
        y = self.mb.add_tensor([n, _same_out(h, stride), _same_out(w, stride),
                                cout], name=nm)
        self.mb.add_op("DEPTHWISE_CONV_2D", [x, wt, b], [y], options=dict(
            padding="SAME", stride_w=stride, stride_h=stride,
            depth_multiplier=mult, fused_activation_function=act,
            dilation_w_factor=1, dilation_h_factor=1))
        return y

    def global_avg_pool(self, x):
        n, h, w, c = self.shape(x)
        y = self.mb.add_tensor([n, 1, 1, c], name=self.name("avgpool"))
        self.mb.add_op("AVERAGE_POOL_2D", [x], [y], options=dict(
            padding="VALID", stride_w=2, stride_h=2, filter_width=w,
            filter_height=h, fused_activation_function="NONE"))
        return y

    def reshape(self, x, new_shape):
        shp = self.mb.add_const(np.asarray(new_shape, np.int32),
                                name=self.name("shape"))
        y = self.mb.add_tensor(new_shape, name=self.name("reshape"))
        self.mb.add_op("RESHAPE", [x, shp], [y],
                       options=dict(new_shape=list(new_shape)))
        return y

    def fc(self, x, units, act="NONE", keep_num_dims=False, gain=1.0):
        shp = self.shape(x)
        cin = shp[-1]
        nm = self.name("fc")
        wt = self.weight(self.he((units, cin), cin, gain), nm + "_w")
        b = self.weight(self.bias(units), nm + "_b")
        out_shape = (shp[:-1] + [units] if keep_num_dims
                     else [int(np.prod(shp[:-1])), units])
        y = self.mb.add_tensor(out_shape, name=nm)
        self.mb.add_op("FULLY_CONNECTED", [x, wt, b], [y], options=dict(
            fused_activation_function=act, weights_format="DEFAULT",
            keep_num_dims=keep_num_dims))
        return y

    def softmax(self, x, beta=1.0, name="probs"):
        y = self.mb.add_tensor(self.shape(x), name=name)
        self.mb.add_op("SOFTMAX", [x], [y], options=dict(beta=beta))
        return y

    def classifier_head(self, x, num_classes, classifier):
        n = self.shape(x)[0]
        x = self.global_avg_pool(x)
        if classifier == "conv":
            # Larger gain: logits std ~1.5 so probabilities are not flat.
            x = self.conv(x, num_classes, k=1, act="NONE", gain=8.0,
                          prefix="logits_conv")
            x = self.reshape(x, [n, num_classes])
        elif classifier == "fc":
            x = self.reshape(x, [n, self.shape(x)[-1]])
            x = self.fc(x, num_classes, gain=8.0)
        else:
            raise ValueError("classifier must be 'conv' or 'fc'")
        return self.softmax(x)

    def finish(self, inputs, outputs, large_buffers=False):
        for o in outputs.values():
            self.mb.mark_output(o)
        self.mb.add_signature("serving_default", inputs, outputs)
        return self.mb.build(large_buffers=large_buffers)


def mobilenet_v1(input_size=224, alpha=1.0, num_classes=1001, seed=0,
                 batch=1, weights_dtype="float32", classifier="conv",
                 large_buffers=False):
    """MobileNet v1: conv3x3/2 + 13 depthwise-separable blocks (RELU6),
    average pool, 1x1 conv classifier, reshape, softmax."""
    net = _Net(seed, weights_dtype, "mobilenet_v1 (tflite_gpu zoo)")

    def ch(c):
        return max(8, int(c * alpha))

    x_in = net.mb.add_input([batch, input_size, input_size, 3], name="input")
    x = net.conv(x_in, ch(32), k=3, stride=2)
    blocks = [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2),
              (512, 1), (512, 1), (512, 1), (512, 1), (512, 1), (1024, 2),
              (1024, 1)]
    for c, s in blocks:
        x = net.dwconv(x, 3, s)
        x = net.conv(x, ch(c), k=1, stride=1, prefix="pwconv")
    y = net.classifier_head(x, num_classes, classifier)
    return net.finish({"input": x_in}, {"probs": y}, large_buffers)


def mobilenet_v2(input_size=224, alpha=1.0, num_classes=1001, seed=0,
                 batch=1, weights_dtype="float32", classifier="conv",
                 large_buffers=False):
    """MobileNet v2: inverted residual blocks (expansion 6, linear
    bottlenecks, residual ADD, RELU6), 1x1 conv to 1280, avg pool,
    classifier, softmax."""
    net = _Net(seed, weights_dtype, "mobilenet_v2 (tflite_gpu zoo)")
    x_in = net.mb.add_input([batch, input_size, input_size, 3], name="input")
    x = net.conv(x_in, _make_divisible(32 * alpha), k=3, stride=2)
    settings = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]
    for t, c, n, s in settings:
        cout = _make_divisible(c * alpha)
        for i in range(n):
            stride = s if i == 0 else 1
            cin = net.shape(x)[-1]
            h = x
            if t != 1:
                h = net.conv(h, cin * t, k=1, prefix="expand")
            h = net.dwconv(h, 3, stride)
            # Linear bottleneck; smaller gain keeps the residual sum bounded.
            h = net.conv(h, cout, k=1, act="NONE", gain=0.5,
                         prefix="project")
            if stride == 1 and cin == cout:
                y = net.mb.add_tensor(net.shape(h), name=net.name("add"))
                net.mb.add_op("ADD", [x, h], [y], options=dict(
                    fused_activation_function="NONE"))
                h = y
            x = h
    last = _make_divisible(1280 * alpha) if alpha > 1.0 else 1280
    x = net.conv(x, last, k=1, prefix="conv_last")
    y = net.classifier_head(x, num_classes, classifier)
    return net.finish({"input": x_in}, {"probs": y}, large_buffers)


def encoder_decoder(seed=0, input_size=64, num_classes=4):
    """Small segmentation-style net (needs input_size divisible by 4)."""
    net = _Net(seed, "float32", "encoder_decoder (tflite_gpu zoo)")
    mb = net.mb
    s = input_size
    x_in = mb.add_input([1, s, s, 3], name="image")
    e1 = net.conv(x_in, 16, 3, 1, act="RELU")               # s
    e2 = net.conv(e1, 32, 3, 2, act="RELU")                 # s/2
    e3 = net.conv(e2, 64, 3, 2, act="RELU")                 # s/4
    # TRANSPOSE_CONV: inputs (output_shape, weights OHWI, input, bias).
    up_shape = [1, s // 2, s // 2, 32]
    oshape = mb.add_const(np.asarray(up_shape, np.int32), name="tconv_shape")
    tw = mb.add_const(net.he((32, 3, 3, 64), 9 * 64 / 4), name="tconv_w")
    tb = mb.add_const(net.bias(32), name="tconv_b")
    d3 = mb.add_tensor(up_shape, name="tconv")
    mb.add_op("TRANSPOSE_CONV", [oshape, tw, e3, tb], [d3],
              options=dict(padding="SAME", stride_w=2, stride_h=2),
              version=3)
    d3r = mb.add_tensor(up_shape, name="tconv_relu")
    mb.add_op("RELU", [d3], [d3r])
    cat2 = mb.add_tensor([1, s // 2, s // 2, 64], name="skip2")
    mb.add_op("CONCATENATION", [d3r, e2], [cat2], options=dict(
        axis=3, fused_activation_function="NONE"))
    d2 = net.conv(cat2, 32, 3, 1, act="RELU")
    size = mb.add_const(np.asarray([s, s], np.int32), name="resize_size")
    d2u = mb.add_tensor([1, s, s, 32], name="resize")
    mb.add_op("RESIZE_BILINEAR", [d2, size], [d2u], options=dict(
        align_corners=False, half_pixel_centers=True), version=3)
    cat1 = mb.add_tensor([1, s, s, 48], name="skip1")
    mb.add_op("CONCATENATION", [d2u, e1], [cat1], options=dict(
        axis=-1, fused_activation_function="NONE"))
    d1 = net.conv(cat1, 16, 3, 1, act="RELU")
    logits = net.conv(d1, num_classes, 1, 1, act="NONE", gain=1.0,
                      prefix="logits")
    seg = net.softmax(logits, name="segmentation")
    mlog = net.conv(d1, 1, 1, 1, act="NONE", gain=1.0, prefix="mask_logits")
    mask = mb.add_tensor([1, s, s, 1], name="mask")
    mb.add_op("LOGISTIC", [mlog], [mask])
    return net.finish({"image": x_in}, {"segmentation": seg, "mask": mask})


def lstm_model(seed=0, batch=1, time_steps=8, input_size=16, num_units=32,
               num_classes=10):
    """UNIDIRECTIONAL_SEQUENCE_LSTM (batch-major) + FULLY_CONNECTED."""
    net = _Net(seed, "float32", "lstm_model (tflite_gpu zoo)")
    mb = net.mb
    x_in = mb.add_input([batch, time_steps, input_size], name="sequence")
    ni, nc = input_size, num_units

    def w(shape, fan_in):
        return mb.add_const(net.he(shape, fan_in, 1.0), name=net.name("lstm_w"))

    def bias(val=0.0):
        return mb.add_const(np.full(nc, val, np.float32) + net.bias(nc),
                            name=net.name("lstm_b"))

    ins = [x_in]
    ins += [w((nc, ni), ni) for _ in range(4)]     # 1-4 input_to_{i,f,c,o}
    ins += [w((nc, nc), nc) for _ in range(4)]     # 5-8 recurrent_to_{i,f,c,o}
    ins += [-1, -1, -1]                            # 9-11 peepholes
    ins += [bias(), bias(1.0), bias(), bias()]     # 12-15 gate biases
    ins += [-1, -1]                                # 16-17 projection
    out_state = mb.add_tensor([batch, nc], name="output_state",
                              is_variable=True)
    cell_state = mb.add_tensor([batch, nc], name="cell_state",
                               is_variable=True)
    ins += [out_state, cell_state]                 # 18-19 state
    ins += [-1, -1, -1, -1]                        # 20-23 layer norm
    assert len(ins) == 24
    seq = mb.add_tensor([batch, time_steps, nc], name="lstm_out")
    mb.add_op("UNIDIRECTIONAL_SEQUENCE_LSTM", ins, [seq], options=dict(
        fused_activation_function="TANH", cell_clip=10.0, proj_clip=0.0,
        time_major=False, asymmetric_quantize_inputs=False))
    logits = net.fc(seq, num_classes, keep_num_dims=True)
    probs = net.softmax(logits)
    return net.finish({"sequence": x_in}, {"probs": probs})


def basic_lstm_model(seed=0, batch=1, input_size=8, num_units=16):
    """A single LSTM op with the BASIC kernel (5 inputs, 4 outputs)."""
    net = _Net(seed, "float32", "basic_lstm_model (tflite_gpu zoo)")
    mb = net.mb
    ni, nc = input_size, num_units
    x = mb.add_input([batch, ni], name="input")
    prev_act = mb.add_input([batch, nc], name="prev_activation")
    weights = mb.add_const(net.he((4 * nc, ni + nc), ni + nc, 1.0),
                           name="weights")
    biases = mb.add_const(net.bias(4 * nc), name="biases")
    prev_state = mb.add_input([batch, nc], name="prev_state")
    act = mb.add_tensor([batch, nc], name="activation")
    state = mb.add_tensor([batch, nc], name="state")
    concat_temp = mb.add_tensor([batch, ni + nc], name="concat_temp")
    act_temp = mb.add_tensor([batch, 4 * nc], name="activation_temp")
    mb.add_op("LSTM", [x, prev_act, weights, biases, prev_state],
              [act, state, concat_temp, act_temp],
              options=dict(fused_activation_function="TANH", cell_clip=0.0,
                           proj_clip=0.0, kernel_type="BASIC"), version=2)
    return net.finish({"input": x, "prev_activation": prev_act,
                       "prev_state": prev_state},
                      {"activation": act, "state": state})


ZOO = {
    "mobilenet_v1": lambda: mobilenet_v1(),
    "mobilenet_v1_fp16": lambda: mobilenet_v1(weights_dtype="float16"),
    "mobilenet_v1_0.25_128": lambda: mobilenet_v1(input_size=128, alpha=0.25),
    "mobilenet_v2": lambda: mobilenet_v2(),
    "mobilenet_v2_fp16": lambda: mobilenet_v2(weights_dtype="float16"),
    "mobilenet_v2_0.35_96": lambda: mobilenet_v2(input_size=96, alpha=0.35),
    "encoder_decoder": lambda: encoder_decoder(),
    "lstm": lambda: lstm_model(),
    "basic_lstm": lambda: basic_lstm_model(),
}
