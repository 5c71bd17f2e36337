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
* ``builder_of(fn, *args, **kw)``: the ModelBuilder a zoo function filled in;
  ``quantized(fn, mode, *args, **kw)``: its post-training quantized variant
  (modes 'int8', 'uint8io', 'dynamic', 'int16x8'; see
  :mod:`tflite_gpu.testing.quantize`).
* ``ZOO``: name -> zero-argument callable returning bytes; includes
  ``mobilenet_v{1,2}_{int8,uint8io,dynamic,int16x8}``.
"""

from __future__ import annotations

import struct

import numpy as np

from .builder import ModelBuilder

__all__ = ["mobilenet_v1", "mobilenet_v2", "encoder_decoder", "lstm_model",
           "basic_lstm_model", "mobilenet_v3_small", "deeplab_like", "ssd_like", "posenet_like",
           "selfie_segmentation_like", "face_detector_like", "ZOO", "builder_of", "quantized"]


def _same_out(size, stride):
    return (size + stride - 1) // stride


def _conv_out(size, k, stride, padding, dilation=1):
    if padding == "SAME":
        return _same_out(size, stride)
    return (size - (k - 1) * dilation - 1) // stride + 1


def _make_divisible(v, divisor=8, min_value=None):
    min_value = min_value or divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


def _np_act(x, act):
    if act in (None, "NONE"):
        return x
    if act == "RELU":
        return np.maximum(x, 0)
    if act == "RELU6":
        return np.clip(x, 0, 6)
    if act == "HARD_SWISH":
        return x * np.clip(x + 3, 0, 6) / 6
    raise ValueError(act)


def _np_conv(x, w, stride, dilation, padding, depthwise=False):
    """NHWC convolution in numpy (weights OHWI; depthwise: 1HWC)."""
    n, h, wd, c = x.shape
    kh, kw = w.shape[1:3]
    oh = _conv_out(h, kh, stride, padding, dilation)
    ow = _conv_out(wd, kw, stride, padding, dilation)
    if padding == "SAME":
        ph = max((oh - 1) * stride + (kh - 1) * dilation + 1 - h, 0)
        pw = max((ow - 1) * stride + (kw - 1) * dilation + 1 - wd, 0)
        x = np.pad(x, ((0, 0), (ph // 2, ph - ph // 2),
                       (pw // 2, pw - pw // 2), (0, 0)))
    taps = [x[:, i * dilation:i * dilation + (oh - 1) * stride + 1:stride,
              j * dilation:j * dilation + (ow - 1) * stride + 1:stride, :]
            for i in range(kh) for j in range(kw)]
    patches = np.stack(taps, axis=3)                     # n, oh, ow, k*k, c
    if depthwise:
        return np.einsum("nhwkc,kc->nhwc", patches, w[0].reshape(kh * kw, c))
    return np.einsum("nhwkc,okc->nhwo", patches,
                     w.reshape(w.shape[0], kh * kw, c))


class _Net:
    """Builds a zoo model on top of ModelBuilder, tracking NHWC shapes and drawing seeded
    weights (He init).

    With ``calibrate=True`` it also runs a seeded random input (given with ``input``)
    through the graph in numpy as it is built (conv, depthwise, activations, ADD/MUL,
    MEAN, RESHAPE, FULLY_CONNECTED) and, for convs/FCs given ``target_std``, rescales
    the He-initialized weights so the pre-activation output has that standard deviation
    (LSUV-style data-dependent init).  Needed where plain He gains are unstable:
    HARD_SWISH is ~x/2 near 0 and ~x for large x, so a fixed gain either fades to the
    linear regime or blows up."""

    def __init__(self, seed, weights_dtype="float32", description=None, calibrate=False):
        self.mb = ModelBuilder(description or "tflite_gpu zoo model")
        self.rng = np.random.default_rng(seed)
        self.wdtype = np.dtype(weights_dtype)
        if self.wdtype not in (np.dtype(np.float32), np.dtype(np.float16)):
            raise ValueError("weights_dtype must be 'float32' or 'float16'")
        self.n = 0
        self.calibrate = calibrate
        self.vals = {}   # tensor -> its numpy value on the calibration input
        self.calib_rng = np.random.default_rng(seed + 7919)

    def name(self, prefix):
        self.n += 1
        return f"{prefix}_{self.n}"

    def shape(self, t):
        return self.mb.tensor_shape(t)

    def input(self, shape, name):
        x = self.mb.add_input(list(shape), name=name)
        if self.calibrate:
            self.vals[x] = self.calib_rng.standard_normal(shape)
        return x

    # ---------------------------------------------------------------- weights

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

    def _calibrated(self, x, wt, target_std, fn):
        """Rescales ``wt`` so that fn(x, wt) has std target_std."""
        xv = self.vals.get(x)
        if target_std is None or xv is None:
            return wt
        z = fn(xv, wt)
        sd = float(z.std())
        return (wt * (target_std / sd)).astype(np.float32) if sd > 0 else wt

    def _weighted(self, x, wv, bv, act, fn, target_std, prefix):
        """Rescale (calibration), the value of the output on the calibration input, then
        the weight and bias constants: ``(weight tensor, bias tensor, value or None)``."""
        wv = self._calibrated(x, wv, target_std, fn)
        val = _np_act(fn(self.vals[x], wv) + bv, act) if x in self.vals else None
        return self.weight(wv, prefix + "_w"), self.weight(bv, prefix + "_b"), val

    def _track(self, y, val):
        if val is not None:
            self.vals[y] = val

    # ---------------------------------------------------------------- layers

    def conv(self, x, cout, k=3, stride=1, act="RELU6", dilation=1, padding="SAME",
             gain=2.0, prefix="conv", bias_scale=0.05, target_std=None):
        n, h, w, cin = self.shape(x)
        nm = self.name(prefix)
        wv = self.he((cout, k, k, cin), k * k * cin, gain)
        bv = self.bias(cout, bias_scale)

        def fn(xv, wv):
            return _np_conv(xv, wv, stride, dilation, padding)
        wt, b, val = self._weighted(x, wv, bv, act, fn, target_std, nm)
        y = self.mb.add_tensor([n, _conv_out(h, k, stride, padding, dilation),
                                _conv_out(w, k, stride, padding, dilation),
                                cout], name=nm)
        self.mb.add_op("CONV_2D", [x, wt, b], [y], options=dict(
            padding=padding, stride_w=stride, stride_h=stride,
            fused_activation_function=act, dilation_w_factor=dilation,
            dilation_h_factor=dilation))
        self._track(y, val)
        return y

    def dwconv(self, x, k=3, stride=1, act="RELU6", mult=1, dilation=1, padding="SAME",
               gain=2.0, target_std=None):
        n, h, w, cin = self.shape(x)
        nm = self.name("dwconv")
        cout = cin * mult
        wv = self.he((1, k, k, cout), k * k, gain)
        bv = self.bias(cout)
        if mult != 1 and x in self.vals:
            raise ValueError("calibration supports depth_multiplier 1 only")

        def fn(xv, wv):
            return _np_conv(xv, wv, stride, dilation, padding, True)
        wt, b, val = self._weighted(x, wv, bv, act, fn, target_std, nm)
        y = self.mb.add_tensor([n, _conv_out(h, k, stride, padding, dilation),
                                _conv_out(w, k, stride, padding, dilation),
                                cout], name=nm)
        self.mb.add_op("DEPTHWISE_CONV_2D", [x, wt, b], [y], options=dict(
            padding=padding, stride_w=stride, stride_h=stride,
            depth_multiplier=mult, fused_activation_function=act,
            dilation_w_factor=dilation, dilation_h_factor=dilation))
        self._track(y, val)
        return y

    def fc(self, x, units, act="NONE", keep_num_dims=False, gain=1.0, target_std=None):
        """FULLY_CONNECTED; an input of rank > 2 is flattened to [-1, C] unless
        ``keep_num_dims``."""
        shp = self.shape(x)
        cin = shp[-1]
        nm = self.name("fc")
        wv = self.he((units, cin), cin, gain)
        bv = self.bias(units)
        out_shape = (shp[:-1] + [units] if keep_num_dims
                     else [int(np.prod(shp[:-1])), units])

        def fn(xv, wv):
            return (xv.reshape(-1, cin) @ wv.T).reshape(out_shape)
        wt, b, val = self._weighted(x, wv, bv, act, fn, target_std, nm)
        y = self.mb.add_tensor(out_shape, name=nm)
        self.mb.add_op("FULLY_CONNECTED", [x, wt, b], [y], options=dict(
            fused_activation_function=act, weights_format="DEFAULT",
            keep_num_dims=keep_num_dims))
        self._track(y, val)
        return y

    def transpose_conv_bias(self, x, cout, k=2, stride=2, op="custom",
                            gain=2.0):
        """MediaPipe's Convolution2DTransposeBias (SAME padding): inputs
        (input, weights OHWI, bias), custom options <iii> (padding 1=SAME,
        stride_w, stride_h).  ``op='TRANSPOSE_CONV'`` writes the same
        computation as a builtin TRANSPOSE_CONV (v3, with bias)."""
        n, h, w, cin = self.shape(x)
        nm = self.name("tconv_bias")
        wt = self.mb.add_const(
            self.he((cout, k, k, cin), k * k * cin / (stride * stride), gain),
            name=nm + "_w")
        b = self.mb.add_const(self.bias(cout), name=nm + "_b")
        oshape = [n, h * stride, w * stride, cout]
        y = self.mb.add_tensor(oshape, name=nm)
        if op == "custom":
            self.mb.add_op(("CUSTOM", "Convolution2DTransposeBias"),
                           [x, wt, b], [y],
                           custom_options=struct.pack("<iii", 1, stride,
                                                      stride))
        elif op == "TRANSPOSE_CONV":
            os_ = self.mb.add_const(np.asarray(oshape, np.int32),
                                    name=nm + "_oshape")
            self.mb.add_op("TRANSPOSE_CONV", [os_, wt, x, b], [y],
                           options=dict(padding="SAME", stride_w=stride,
                                        stride_h=stride), version=3)
        else:
            raise ValueError("op must be 'custom' or 'TRANSPOSE_CONV'")
        return y

    def unary(self, op, x, prefix=None):
        y = self.mb.add_tensor(self.shape(x), name=self.name(prefix or
                                                             op.lower()))
        self.mb.add_op(op, [x], [y])
        if x in self.vals and op in ("RELU", "RELU6", "HARD_SWISH"):
            self.vals[y] = _np_act(self.vals[x], op)
        return y

    def act(self, x, act):
        """A standalone activation op (for those the converter cannot fuse)."""
        if act in (None, "NONE"):
            return x
        if act == "PRELU":
            return self.prelu(x)
        return self.unary(act, x)

    def prelu(self, x):
        c = self.shape(x)[-1]
        # Keras PReLU(shared_axes=[1, 2]) -> alpha of shape [1, 1, C].
        alpha = self.weight(
            (0.25 + 0.05 * self.rng.standard_normal((1, 1, c))).astype(
                np.float32), self.name("prelu_alpha"))
        y = self.mb.add_tensor(self.shape(x), name=self.name("prelu"))
        self.mb.add_op("PRELU", [x, alpha], [y])
        return y

    def binary(self, op, a, b, act="NONE", prefix=None):
        sa, sb = self.shape(a), self.shape(b)
        r = max(len(sa), len(sb))
        sa, sb = [1] * (r - len(sa)) + sa, [1] * (r - len(sb)) + sb
        out = [max(p, q) for p, q in zip(sa, sb)]
        y = self.mb.add_tensor(out, name=self.name(prefix or op.lower()))
        self.mb.add_op(op, [a, b], [y],
                       options=dict(fused_activation_function=act))
        if a in self.vals and b in self.vals and op in ("ADD", "MUL"):
            va, vb = self.vals[a], self.vals[b]
            self.vals[y] = _np_act(va + vb if op == "ADD" else va * vb, act)
        return y

    def scalar(self, v):
        c = self.mb.add_const(np.asarray([v], np.float32),
                              name=self.name("scalar"))
        if self.calibrate:
            self.vals[c] = np.asarray([v], np.float64)
        return c

    def hard_sigmoid(self, x):
        """relu6(x + 3) * (1/6), as Keras' MobileNetV3 writes it and the
        converter keeps it (ADD, RELU6, MUL)."""
        t = self.binary("ADD", x, self.scalar(3.0), prefix="hsig_add")
        t = self.unary("RELU6", t, prefix="hsig_relu6")
        return self.binary("MUL", t, self.scalar(1.0 / 6.0), prefix="hsig")

    def softmax(self, x, beta=1.0, name="probs"):
        y = self.mb.add_tensor(self.shape(x), name=name)
        self.mb.add_op("SOFTMAX", [x], [y], options=dict(beta=beta))
        return y

    # ---------------------------------------------------------------- pooling, shapes

    def global_avg_pool(self, x):
        n, h, w, c = self.shape(x)
        y = self.mb.add_tensor([n, 1, 1, c], name=self.name("avgpool"))
        self.mb.add_op("AVERAGE_POOL_2D", [x], [y], options=dict(
            padding="VALID", stride_w=2, stride_h=2, filter_width=w,
            filter_height=h, fused_activation_function="NONE"))
        return y

    def mean_hw(self, x):
        n, h, w, c = self.shape(x)
        axes = self.mb.add_const(np.asarray([1, 2], np.int32),
                                 name=self.name("mean_axes"))
        y = self.mb.add_tensor([n, 1, 1, c], name=self.name("mean"))
        self.mb.add_op("MEAN", [x, axes], [y], options=dict(keep_dims=True))
        if x in self.vals:
            self.vals[y] = self.vals[x].mean(axis=(1, 2), keepdims=True)
        return y

    def max_pool(self, x, k=2, stride=2, padding="SAME"):
        n, h, w, c = self.shape(x)
        y = self.mb.add_tensor([n, _conv_out(h, k, stride, padding),
                                _conv_out(w, k, stride, padding), c],
                               name=self.name("maxpool"))
        self.mb.add_op("MAX_POOL_2D", [x], [y], options=dict(
            padding=padding, stride_w=stride, stride_h=stride,
            filter_width=k, filter_height=k,
            fused_activation_function="NONE"))
        return y

    def reshape(self, x, new_shape, name=None, new_shape_option=True):
        """RESHAPE to the constant shape input; ``new_shape_option`` also writes it into
        ReshapeOptions (the converter does for the MobileNets; the later models have the
        shape tensor only)."""
        shp = self.mb.add_const(np.asarray(new_shape, np.int32),
                                name=self.name("shape"))
        y = self.mb.add_tensor(new_shape, name=name or self.name("reshape"))
        self.mb.add_op("RESHAPE", [x, shp], [y], options=(
            dict(new_shape=list(new_shape)) if new_shape_option else None))
        if x in self.vals:
            self.vals[y] = self.vals[x].reshape(new_shape)
        return y

    def resize_bilinear(self, x, size, align_corners=False,
                        half_pixel_centers=False):
        n, _, _, c = self.shape(x)
        sz = self.mb.add_const(np.asarray(size, np.int32),
                               name=self.name("resize_size"))
        y = self.mb.add_tensor([n, size[0], size[1], c],
                               name=self.name("resize"))
        self.mb.add_op("RESIZE_BILINEAR", [x, sz], [y], options=dict(
            align_corners=align_corners,
            half_pixel_centers=half_pixel_centers),
            version=3 if half_pixel_centers else 1)
        return y

    def concat(self, xs, axis, name=None):
        shp = list(self.shape(xs[0]))
        ax = axis % len(shp)
        shp[ax] = sum(self.shape(t)[ax] for t in xs)
        y = self.mb.add_tensor(shp, name=name or self.name("concat"))
        self.mb.add_op("CONCATENATION", list(xs), [y], options=dict(
            axis=axis, fused_activation_function="NONE"))
        return y

    def pad_channels(self, x, cout):
        n, h, w, c = self.shape(x)
        p = self.mb.add_const(np.asarray([[0, 0], [0, 0], [0, 0],
                                          [0, cout - c]], np.int32),
                              name=self.name("pad_c"))
        y = self.mb.add_tensor([n, h, w, cout], name=self.name("pad"))
        self.mb.add_op("PAD", [x, p], [y])
        return y

    # ---------------------------------------------------------------- model

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
        if _CAPTURE:
            _CAPTURE[-1].append(self.mb)
        return self.mb.build(large_buffers=large_buffers)


_CAPTURE = []  # builder_of: stack of lists receiving the ModelBuilder of each finished model


def builder_of(fn, *args, **kwargs):
    """The filled-in ModelBuilder of the zoo model `fn(*args, **kwargs)` (what the quantizer in
    tflite_gpu.testing.quantize rewrites)."""
    _CAPTURE.append([])
    try:
        fn(*args, **kwargs)
        got = _CAPTURE[-1]
    finally:
        _CAPTURE.pop()
    if len(got) != 1:
        raise ValueError(f"{getattr(fn, '__name__', fn)} did not build exactly one zoo model")
    return got[0]


def quantized(fn, mode, *args, **kwargs):
    """Post-training quantized variant of a zoo model: mode 'int8' (float I/O), 'uint8io',
    'dynamic' or 'int16x8' (see tflite_gpu.testing.quantize)."""
    from .quantize import quantize_model
    return quantize_model(builder_of(fn, *args, **kwargs), mode)


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
# Post-training quantized MobileNets (tflite_gpu.testing.quantize): full-integer int8 with float
# I/O, int8 with uint8 I/O, dynamic-range (int8 weights, float activations) and int16x8.
for _net in ("mobilenet_v1", "mobilenet_v2"):
    for _mode, _suffix in (("int8", "int8"), ("uint8io", "uint8io"), ("dynamic", "dynamic"),
                           ("int16x8", "int16x8")):
        ZOO[f"{_net}_{_suffix}"] = (lambda n=_net, m=_mode: quantized(globals()[n], m))


# ---------------------------------------------------------------------------
# More whole models: MobileNet v3 small, DeepLab-, SSD-, PoseNet-, MediaPipe
# selfie-segmentation- and BlazeFace-like graphs.  Laid out the way the TFLite
# converter writes the real networks (fused activations where the converter
# fuses them, HARD_SWISH as one op, GlobalAveragePooling as MEAN keep_dims,
# atrous convolutions as CONV_2D/DEPTHWISE_CONV_2D with dilation factors, SSD
# predictors reshaped to [1, N, 4] / [1, N, C] and concatenated on axis 1).
# ---------------------------------------------------------------------------

def mobilenet_v3_small(input_size=96, alpha=1.0, num_classes=1001, seed=0,
                       classifier="conv"):
    """MobileNet v3 small (Keras applications layout): conv3x3/2 +
    HARD_SWISH, 11 inverted-residual blocks with RELU or HARD_SWISH,
    depthwise 3x3/5x5, squeeze-and-excite (MEAN keep_dims -> 1x1 CONV RELU
    -> 1x1 CONV -> ADD 3, RELU6, MUL 1/6 -> MUL broadcast over the feature
    map), residual ADDs; conv1x1 + HARD_SWISH, MEAN pool, 1x1 conv 1024 +
    HARD_SWISH, classifier (``'conv'``: 1x1 conv + RESHAPE, ``'fc'``:
    RESHAPE + FULLY_CONNECTED), SOFTMAX.  Weights are He-initialized, then
    rescaled on a seeded random input (``_Net(calibrate=True)``) so pre-activations
    have std ~2 (HARD_SWISH in its non-linear range), SE gates spread over
    (0, 1) and logits std 2."""
    net = _Net(seed, "float32", "mobilenet_v3_small (tflite_gpu zoo)",
                calibrate=True)

    def depth(v):
        return _make_divisible(v, 8)

    x_in = net.input([1, input_size, input_size, 3], name="input")
    x = net.conv(x_in, 16, 3, 2, target_std=2.0, prefix="stem", act="NONE")
    x = net.act(x, "HARD_SWISH")
    # (expansion, filters, kernel, stride, se_ratio, activation)
    blocks = [(1, 16, 3, 2, 0.25, "RELU"), (72 / 16, 24, 3, 2, None, "RELU"),
              (88 / 24, 24, 3, 1, None, "RELU"),
              (4, 40, 5, 2, 0.25, "HARD_SWISH"),
              (6, 40, 5, 1, 0.25, "HARD_SWISH"),
              (6, 40, 5, 1, 0.25, "HARD_SWISH"),
              (3, 48, 5, 1, 0.25, "HARD_SWISH"),
              (3, 48, 5, 1, 0.25, "HARD_SWISH"),
              (6, 96, 5, 2, 0.25, "HARD_SWISH"),
              (6, 96, 5, 1, 0.25, "HARD_SWISH"),
              (6, 96, 5, 1, 0.25, "HARD_SWISH")]
    for i, (t, c, k, s, se, a) in enumerate(blocks):
        cin = net.shape(x)[-1]
        fused = "RELU" if a == "RELU" else "NONE"   # the converter fuses RELU
        h = x
        if i > 0:                                   # block 0: no expansion
            h = net.conv(h, depth(cin * t), 1, act=fused, target_std=2.0,
                          prefix="expand")
            h = net.act(h, None if fused == "RELU" else a)
        h = net.dwconv(h, k, s, act=fused, target_std=2.0)
        h = net.act(h, None if fused == "RELU" else a)
        if se:
            ce = net.shape(h)[-1]
            g = net.mean_hw(h)
            g = net.conv(g, depth(ce * se), 1, act="RELU", target_std=1.0,
                          prefix="se_reduce")
            g = net.conv(g, ce, 1, act="NONE", target_std=2.0,
                          prefix="se_expand")
            g = net.hard_sigmoid(g)
            h = net.binary("MUL", h, g, prefix="se_mul")
        cout = depth(c * alpha)
        h = net.conv(h, cout, 1, act="NONE", target_std=1.0,
                      prefix="project")
        if s == 1 and cin == cout:
            h = net.binary("ADD", x, h, prefix="add")
        x = h
    x = net.conv(x, depth(net.shape(x)[-1] * 6), 1, target_std=2.0,
                  prefix="conv_last", act="NONE")
    x = net.act(x, "HARD_SWISH")
    x = net.mean_hw(x)
    last = depth(1024 * alpha) if alpha > 1.0 else 1024
    x = net.conv(x, last, 1, target_std=2.0, prefix="conv_head", act="NONE")
    x = net.act(x, "HARD_SWISH")
    if classifier == "conv":
        x = net.conv(x, num_classes, 1, target_std=2.0,
                      prefix="logits_conv", act="NONE")
        x = net.reshape(x, [1, num_classes], new_shape_option=False)
    elif classifier == "fc":
        x = net.reshape(x, [1, last], new_shape_option=False)
        x = net.fc(x, num_classes, target_std=2.0)
    else:
        raise ValueError("classifier must be 'conv' or 'fc'")
    y = net.softmax(x)
    return net.finish({"input": x_in}, {"probs": y})


def _inverted_residual(net, x, cout, t=6, stride=1, dilation=1, k=3):
    cin = net.shape(x)[-1]
    h = x
    if t != 1:
        h = net.conv(h, cin * t, 1, act="RELU6", prefix="expand")
    h = net.dwconv(h, k, stride, act="RELU6", dilation=dilation)
    h = net.conv(h, cout, 1, act="NONE", gain=1.0, prefix="project")
    if stride == 1 and cin == cout:
        h = net.binary("ADD", x, h, prefix="add")
    return h


def deeplab_like(input_size=65, num_classes=8, seed=0, aspp_channels=32):
    """DeepLab v3 (MobileNet v2 backbone, output stride 16): inverted
    residual backbone (the last stage atrous, depthwise dilation 2), ASPP
    with a 1x1 branch, CONV_2D branches at dilation 2 and 4 and an image
    pooling branch (MEAN keep_dims -> 1x1 conv RELU -> RESIZE_BILINEAR back
    up), CONCATENATION on channels, 1x1 projection, 1x1 logits,
    RESIZE_BILINEAR (align_corners, DeepLab's (n*16+1) sizes) to the input
    size, SOFTMAX."""
    net = _Net(seed, "float32", "deeplab_like (tflite_gpu zoo)")
    s = input_size
    x_in = net.mb.add_input([1, s, s, 3], name="image")
    x = net.conv(x_in, 16, 3, 2, act="RELU6", prefix="stem")       # /2
    x = _inverted_residual(net, x, 8, t=1)
    x = _inverted_residual(net, x, 16, stride=2)                    # /4
    x = _inverted_residual(net, x, 16)
    x = _inverted_residual(net, x, 24, stride=2)                    # /8
    x = _inverted_residual(net, x, 24)
    x = _inverted_residual(net, x, 32, stride=2)                    # /16
    x = _inverted_residual(net, x, 32)
    x = _inverted_residual(net, x, 48, dilation=2)                  # atrous
    x = _inverted_residual(net, x, 48, dilation=2)
    _, fh, fw, _ = net.shape(x)
    a = aspp_channels
    b0 = net.conv(x, a, 1, act="RELU", prefix="aspp0")
    b1 = net.conv(x, a, 3, act="RELU", dilation=2, prefix="aspp1")
    b2 = net.conv(x, a, 3, act="RELU", dilation=4, prefix="aspp2")
    p = net.mean_hw(x)
    p = net.conv(p, a, 1, act="RELU", prefix="image_pooling")
    p = net.resize_bilinear(p, [fh, fw], align_corners=True)
    cat = net.concat([p, b0, b1, b2], axis=3)
    x = net.conv(cat, a, 1, act="RELU", prefix="concat_projection")
    logits = net.conv(x, num_classes, 1, act="NONE", gain=8.0,
                       prefix="logits")
    up = net.resize_bilinear(logits, [s, s], align_corners=True)
    y = net.softmax(up, name="segmentation")
    return net.finish({"image": x_in}, {"segmentation": y})


def ssd_like(input_size=96, num_classes=91, seed=0, alpha=0.5,
             anchors=(3, 6)):
    """SSD (MobileNet v1 feature extractor): depthwise-separable backbone,
    box (4 per anchor) and class (num_classes per anchor) 1x1 predictor
    convs on the stride-16 and stride-32 feature maps, each RESHAPEd to
    [1, N_i, 4] / [1, N_i, C] and CONCATENATED on axis 1; LOGISTIC on the
    class scores.  Two outputs (raw boxes, scores); no postprocess op."""
    net = _Net(seed, "float32", "ssd_like (tflite_gpu zoo)")

    def ch(c):
        return max(8, int(c * alpha))

    x_in = net.mb.add_input([1, input_size, input_size, 3],
                            name="normalized_input_image_tensor")
    x = net.conv(x_in, ch(32), 3, 2, act="RELU6", prefix="stem")
    feats = []
    for c, s in [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2),
                 (512, 1), (512, 1), (512, 1), (512, 1), (512, 1), (1024, 2),
                 (1024, 1)]:
        x = net.dwconv(x, 3, s, act="RELU6")
        x = net.conv(x, ch(c), 1, act="RELU6", prefix="pwconv")
        feats.append(x)
    # Like SSD MobileNet v1: predictors on conv_11 (stride 16, the last
    # 512-channel block) and conv_13 (stride 32).
    f16, f32 = feats[10], feats[12]
    boxes, scores = [], []
    for f, a in zip((f16, f32), anchors):
        _, h, w, _ = net.shape(f)
        n = h * w * a
        bx = net.conv(f, 4 * a, 1, act="NONE", gain=1.0, prefix="box_pred")
        boxes.append(net.reshape(bx, [1, n, 4], new_shape_option=False))
        cl = net.conv(f, num_classes * a, 1, act="NONE", gain=1.0,
                       prefix="class_pred")
        scores.append(net.reshape(cl, [1, n, num_classes], new_shape_option=False))
    raw_boxes = net.concat(boxes, axis=1, name="raw_outputs/box_encodings")
    logits = net.concat(scores, axis=1, name="raw_outputs/class_logits")
    probs = net.mb.add_tensor(net.shape(logits),
                              name="raw_outputs/class_predictions")
    net.mb.add_op("LOGISTIC", [logits], [probs])
    return net.finish({"normalized_input_image_tensor": x_in},
                      {"raw_boxes": raw_boxes, "scores": probs})


def posenet_like(input_size=97, seed=0, alpha=0.5, num_keypoints=17):
    """PoseNet (MobileNet v1, output stride 16): the blocks after stride 16
    run at stride 1 with dilation 2 (atrous depthwise), heads: heatmaps
    (1x1 conv + LOGISTIC), offsets (2K) and forward/backward displacement
    maps (2 x 2 x (K-1), one conv) -- 3 outputs at (size-1)/16+1."""
    net = _Net(seed, "float32", "posenet_like (tflite_gpu zoo)")

    def ch(c):
        return max(8, int(c * alpha))

    x_in = net.mb.add_input([1, input_size, input_size, 3], name="image")
    x = net.conv(x_in, ch(32), 3, 2, act="RELU6", prefix="stem")
    stride, rate = 2, 1
    for c, s in [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2),
                 (512, 1), (512, 1), (512, 1), (512, 1), (512, 1), (1024, 2),
                 (1024, 1)]:
        d = 1
        if stride == 16 and s == 2:
            s, rate = 1, rate * 2                   # output stride 16
        if stride == 16:
            d = rate
        stride *= s
        x = net.dwconv(x, 3, s, act="RELU6", dilation=d)
        x = net.conv(x, ch(c), 1, act="RELU6", prefix="pwconv")
    k = num_keypoints
    hm = net.conv(x, k, 1, act="NONE", gain=1.0, prefix="heatmap_logits")
    heat = net.mb.add_tensor(net.shape(hm), name="heatmaps")
    net.mb.add_op("LOGISTIC", [hm], [heat])
    off = net.conv(x, 2 * k, 1, act="NONE", gain=1.0, prefix="offsets")
    disp = net.conv(x, 4 * (k - 1), 1, act="NONE", gain=1.0,
                     prefix="displacements")
    return net.finish({"image": x_in}, {"heatmaps": heat, "offsets": off,
                                        "displacements": disp})


def selfie_segmentation_like(input_size=64, seed=0, decoder="custom"):
    """MediaPipe-style segmentation: encoder of conv/depthwise-separable
    blocks with PRELU (alpha [1, 1, C]) and residual ADDs, decoder of
    Convolution2DTransposeBias (MediaPipe custom op; SAME, stride 2) with
    skip ADDs, 1-channel mask through LOGISTIC.  ``decoder='TRANSPOSE_CONV'``
    builds the same computation with the builtin TRANSPOSE_CONV (v3, bias)
    instead (litert's builtin kernels cannot run the custom op; only its
    XNNPACK delegate can)."""
    net = _Net(seed, "float32", "selfie_segmentation_like (tflite_gpu zoo)")
    s = input_size
    x_in = net.mb.add_input([1, s, s, 3], name="input_1")

    def sep(x, cout, stride=1, k=3):
        h = net.dwconv(x, k, stride, gain=1.0, act="NONE")
        h = net.conv(h, cout, 1, gain=1.0, prefix="pw", act="NONE")
        if stride == 1 and net.shape(x)[-1] == cout:
            h = net.binary("ADD", x, h, prefix="res_add")
        return net.prelu(h)

    e0 = net.prelu(net.conv(x_in, 16, 3, 2, gain=1.0, prefix="stem", act="NONE"))  # /2
    e0 = sep(e0, 16)
    e1 = sep(e0, 24, 2)                                                  # /4
    e1 = sep(e1, 24)
    e2 = sep(e1, 32, 2, k=5)                                             # /8
    e2 = sep(e2, 32, k=5)
    d = net.prelu(net.transpose_conv_bias(e2, 24, k=2, op=decoder,
                                          gain=1.0))                     # /4
    d = net.binary("ADD", d, e1, prefix="skip_add")
    d = sep(d, 24)
    d = net.prelu(net.transpose_conv_bias(d, 16, k=3, op=decoder,
                                          gain=1.0))                     # /2
    d = net.binary("ADD", d, e0, prefix="skip_add")
    d = sep(d, 16)
    logits = net.transpose_conv_bias(d, 1, k=2, op=decoder, gain=0.5)   # /1
    mask = net.mb.add_tensor(net.shape(logits), name="segment")
    net.mb.add_op("LOGISTIC", [logits], [mask])
    return net.finish({"input_1": x_in}, {"segment": mask})


def face_detector_like(input_size=128, seed=0, num_coords=16):
    """BlazeFace (front model): conv5x5/2 + RELU, blaze blocks (depthwise
    5x5 + 1x1 conv, residual ADD + RELU; channel growth via PAD on the
    shortcut, stride-2 shortcuts through MAX_POOL_2D 2x2/2), heads on the
    stride-8 (2 anchors) and stride-16 (6 anchors) maps: 1x1 convs RESHAPEd
    to [1, N_i, 16] / [1, N_i, 1] and CONCATENATED on axis 1 (regressors,
    classificators)."""
    net = _Net(seed, "float32", "face_detector_like (tflite_gpu zoo)")
    s = input_size
    x_in = net.mb.add_input([1, s, s, 3], name="input")
    x = net.conv(x_in, 24, 5, 2, act="RELU", prefix="stem")

    def blaze(x, cout, stride=1):
        cin = net.shape(x)[-1]
        h = net.dwconv(x, 5, stride, gain=1.0, act="NONE")
        h = net.conv(h, cout, 1, gain=0.25, prefix="blaze_pw", act="NONE")
        sc = x
        if stride == 2:
            sc = net.max_pool(sc, 2, 2)
        if cout > cin:
            sc = net.pad_channels(sc, cout)
        return net.binary("ADD", sc, h, act="RELU", prefix="blaze_add")

    for c, st in [(24, 1), (28, 1), (32, 2), (36, 1), (42, 1), (48, 2),
                  (56, 1), (64, 1), (72, 1), (80, 1), (88, 1)]:
        x = blaze(x, c, st)
    f8 = x
    for c, st in [(96, 2), (96, 1), (96, 1), (96, 1), (96, 1)]:
        x = blaze(x, c, st)
    f16 = x
    regs, clss = [], []
    for f, a in ((f8, 2), (f16, 6)):
        _, h, w, _ = net.shape(f)
        n = h * w * a
        c = net.conv(f, a, 1, gain=1.0, prefix="classificator", act="NONE")
        clss.append(net.reshape(c, [1, n, 1], new_shape_option=False))
        r = net.conv(f, a * num_coords, 1, gain=1.0, prefix="regressor", act="NONE")
        regs.append(net.reshape(r, [1, n, num_coords], new_shape_option=False))
    reg = net.concat(regs, axis=1, name="regressors")
    cls = net.concat(clss, axis=1, name="classificators")
    return net.finish({"input": x_in}, {"regressors": reg,
                                        "classificators": cls})


ZOO.update({
    "mobilenet_v3_small": lambda: mobilenet_v3_small(),
    "deeplab_like": lambda: deeplab_like(),
    "ssd_like": lambda: ssd_like(),
    "posenet_like": lambda: posenet_like(),
    "selfie_segmentation_like": lambda: selfie_segmentation_like(),
    "face_detector_like": lambda: face_detector_like(),
})


# ---------------------------------------------------------------------------
# MediaPipe-shaped landmark / detection models (the CPU speed set of the
# benchmarks): face-mesh-, hand-landmark-, pose-landmark- and palm-detection-
# like graphs, laid out as the converter writes the real ones (PRELU after
# residual ADDs, MAX_POOL_2D + channel PAD shortcuts, RESIZE_BILINEAR
# upsampling with skip ADDs, heads RESHAPEd and CONCATENATED).
# ---------------------------------------------------------------------------

def _res_block(net, x, cout, stride=1, k=3, act="PRELU", gain=0.5):
    """Depthwise k x k + 1x1 conv, shortcut (MAX_POOL_2D 2x2/2 when strided,
    channel PAD when cout grows), ADD, then the activation (PRELU as a separate
    op, RELU fused into the ADD)."""
    cin = net.shape(x)[-1]
    h = net.dwconv(x, k, stride, gain=1.0, act="NONE")
    h = net.conv(h, cout, 1, gain=gain, prefix="res_pw", act="NONE")
    sc = x
    if stride == 2:
        sc = net.max_pool(sc, 2, 2)
    if cout > cin:
        sc = net.pad_channels(sc, cout)
    if act == "PRELU":
        return net.prelu(net.binary("ADD", sc, h, prefix="res_add"))
    return net.binary("ADD", sc, h, act=act, prefix="res_add")


def face_mesh_like(input_size=192, seed=0, num_landmarks=468):
    """Face mesh (landmark) net: conv3x3/2 + PRELU, residual depthwise 3x3
    blocks with PRELU (stride-2 ones through MAX_POOL_2D + channel PAD),
    16 -> 32 -> 64 -> 128 channels down to 3x3; heads: landmarks (3x3 VALID
    conv to 3 * num_landmarks, RESHAPE [1, 3N]) and face flag (3x3 VALID conv
    to 2 -- flag and a spare logit, so the output is not a single number -- LOGISTIC)."""
    net = _Net(seed, "float32", "face_mesh_like (tflite_gpu zoo)")
    s = input_size
    x_in = net.mb.add_input([1, s, s, 3], name="input_1")
    x = net.prelu(net.conv(x_in, 16, 3, 2, gain=1.0, prefix="stem", act="NONE"))
    for c, st in [(16, 1), (16, 1), (32, 2), (32, 1), (64, 2), (64, 1), (128, 2), (128, 1),
                  (128, 2), (128, 1), (128, 2), (128, 1)]:
        x = _res_block(net, x, c, st)
    _, fh, fw, _ = net.shape(x)
    lm = net.conv(x, 3 * num_landmarks, fh, 1, padding="VALID", gain=1.0, prefix="landmarks", act="NONE")
    lm = net.reshape(lm, [1, 3 * num_landmarks], name="conv2d_21", new_shape_option=False)
    fl = net.conv(x, 2, fh, 1, padding="VALID", gain=1.0, prefix="face_flag", act="NONE")
    flag = net.mb.add_tensor(net.shape(fl), name="conv2d_31")
    net.mb.add_op("LOGISTIC", [fl], [flag])
    return net.finish({"input_1": x_in}, {"landmarks": lm, "face_flag": flag})


def hand_landmark_like(input_size=224, seed=0, num_landmarks=21):
    """Hand landmark (full) net: MobileNet v2-style inverted residual blocks
    (3x3 and 5x5 depthwise, RELU6) to stride 32, MEAN pool, heads: landmarks
    (FULLY_CONNECTED 3N), hand presence and handedness (one FULLY_CONNECTED 2 +
    LOGISTIC)."""
    net = _Net(seed, "float32", "hand_landmark_like (tflite_gpu zoo)")
    s = input_size
    x_in = net.mb.add_input([1, s, s, 3], name="input_1")
    x = net.conv(x_in, 24, 3, 2, act="RELU6", prefix="stem")
    for c, t, st, k in [(16, 1, 1, 3), (24, 4, 2, 3), (24, 4, 1, 3), (40, 4, 2, 5), (40, 4, 1, 5),
                        (80, 4, 2, 3), (80, 4, 1, 3), (112, 4, 1, 5), (112, 4, 1, 5), (192, 4, 2, 5),
                        (192, 4, 1, 5)]:
        x = _inverted_residual(net, x, c, t=t, stride=st, k=k)
    x = net.conv(x, 576, 1, act="RELU6", prefix="head")
    x = net.reshape(net.mean_hw(x), [1, 576], new_shape_option=False)
    lm = net.fc(x, 3 * num_landmarks)
    z = net.fc(x, 2, gain=4.0)
    flags = net.mb.add_tensor(net.shape(z), name="hand_flag_handedness")
    net.mb.add_op("LOGISTIC", [z], [flags])
    return net.finish({"input_1": x_in}, {"landmarks": lm, "hand_flag_handedness": flags})


def pose_landmark_like(input_size=256, seed=0, num_landmarks=39, heatmap_decode=False, heat_gain=1.0):
    """Pose landmark net: blaze encoder (residual depthwise 3x3 blocks, RELU
    fused into the ADDs, MAX_POOL_2D + channel PAD shortcuts) to stride 32,
    decoder of RESIZE_BILINEAR x2 + 1x1 lateral convs + skip ADDs back to
    stride 4; heads: heatmap (1x1 conv, num_landmarks channels), segmentation
    (1x1 conv + LOGISTIC) and landmarks (stride-2 depthwise blocks down to
    2x2, 2x2 VALID conv to 5N, RESHAPE).

    ``heatmap_decode=True`` adds a soft-argmax decode of the heatmap, written
    as a converter writes ``exp(h) / reduce_sum(exp(h))`` without the max
    subtraction: EXP, SUM over H and W, DIV, then MUL by the pixel-centre
    grids and SUM, giving output ``heatmap_xy`` [1, 2N] in input pixels.
    Unnormalised heatmap logits (random weights give RMS ~8, peaks ~28;
    ``heat_gain`` scales the heatmap weights' variance) make EXP and the SUM
    of 64x64 exponentials exceed 65504: the fp16-storage hazard of a real
    pose landmark model (fp32 exact, fp16 storage garbage)."""
    net = _Net(seed, "float32", "pose_landmark_like (tflite_gpu zoo)")
    s = input_size
    x_in = net.mb.add_input([1, s, s, 3], name="input_1")
    x = net.conv(x_in, 24, 3, 2, act="RELU", prefix="stem")
    feats = []
    for c, n in [(24, 1), (48, 2), (96, 2), (192, 2), (288, 2)]:
        for i in range(n):
            x = _res_block(net, x, c, 2 if (i == 0 and c != 24) else 1, act="RELU")
        feats.append(x)                          # strides 2, 4, 8, 16, 32
    y = net.conv(feats[-1], 48, 1, act="RELU", prefix="lat")
    for f in (feats[3], feats[2], feats[1]):     # up to stride 4
        _, fh, fw, _ = net.shape(f)
        y = net.resize_bilinear(y, [fh, fw])
        y = net.binary("ADD", y, net.conv(f, 48, 1, act="RELU", prefix="lat"), prefix="skip_add")
        y = _res_block(net, y, 48, act="RELU")
    heat = net.conv(y, num_landmarks, 1, act="NONE", gain=heat_gain, prefix="heatmap")
    sg = net.conv(y, 1, 1, act="NONE", gain=1.0, prefix="seg_logits")
    seg = net.mb.add_tensor(net.shape(sg), name="segmentation")
    net.mb.add_op("LOGISTIC", [sg], [seg])
    z = y
    for c in (96, 192, 288, 288, 288):
        z = _res_block(net, z, c, 2, act="RELU")
    _, zh, _, _ = net.shape(z)
    lm = net.conv(z, 5 * num_landmarks, zh, 1, padding="VALID", gain=1.0, prefix="ld", act="NONE")
    lm = net.reshape(lm, [1, 5 * num_landmarks], name="ld_3d", new_shape_option=False)
    outputs = {"ld_3d": lm, "heatmap": heat, "segmentation": seg}
    if heatmap_decode:
        outputs["heatmap_xy"] = _soft_argmax(net, heat, s)
    return net.finish({"input_1": x_in}, outputs)


def _soft_argmax(net, heat, input_size):
    """exp(h) / sum_hw(exp(h)) weighted by the pixel centres of each heatmap
    cell: [1, H, W, K] -> [1, 2K] (x of every landmark, then y)."""
    _, h, w, k = net.shape(heat)
    axes = net.mb.add_const(np.asarray([1, 2], np.int32), name=net.name("hw_axes"))

    def reduce_sum(x, name):
        y = net.mb.add_tensor([1, 1, 1, net.shape(x)[-1]], name=net.name(name))
        net.mb.add_op("SUM", [x, axes], [y], options=dict(keep_dims=True))
        return y
    e = net.unary("EXP", heat, prefix="heat_exp")
    z = reduce_sum(e, "heat_sum")
    p = net.binary("DIV", e, z, prefix="heat_prob")
    gx = net.weight(((np.arange(w) + 0.5) * input_size / w).reshape(1, 1, w, 1), net.name("grid_x"))
    gy = net.weight(((np.arange(h) + 0.5) * input_size / h).reshape(1, h, 1, 1), net.name("grid_y"))
    xs = reduce_sum(net.binary("MUL", p, gx, prefix="heat_px"), "heat_x")
    ys = reduce_sum(net.binary("MUL", p, gy, prefix="heat_py"), "heat_y")
    xy = net.concat([xs, ys], axis=3)
    return net.reshape(xy, [1, 2 * k], name="heatmap_xy", new_shape_option=False)


def palm_detection_like(input_size=192, seed=0, num_coords=18):
    """Palm detection (lite) net: conv5x5/2 + RELU, blaze blocks with 5x5
    depthwise (RELU fused into the residual ADD, MAX_POOL_2D + channel PAD
    shortcuts) to stride 32, FPN-style top-down path (RESIZE_BILINEAR x2 +
    ADD) to stride 8; heads on the stride-8 (2 anchors) and stride-16
    (6 anchors) maps: 1x1 convs RESHAPEd to [1, N_i, 18] / [1, N_i, 1] and
    CONCATENATED on axis 1."""
    net = _Net(seed, "float32", "palm_detection_like (tflite_gpu zoo)")
    s = input_size
    x_in = net.mb.add_input([1, s, s, 3], name="input_1")
    x = net.conv(x_in, 32, 5, 2, act="RELU", prefix="stem")
    feats = []
    for c, n in [(32, 2), (64, 2), (128, 2), (256, 2), (256, 2)]:
        for i in range(n):
            x = _res_block(net, x, c, 2 if (i == 0 and c != 32) else 1, k=5, act="RELU")
        feats.append(x)                          # strides 2, 4, 8, 16, 32
    f32 = feats[4]
    _, h16, w16, _ = net.shape(feats[3])
    f16 = net.binary("ADD", net.resize_bilinear(f32, [h16, w16]), feats[3], act="RELU", prefix="fpn_add")
    f16 = _res_block(net, f16, 256, k=5, act="RELU")
    _, h8, w8, _ = net.shape(feats[2])
    t = net.conv(f16, 128, 1, act="RELU", prefix="fpn_lat")
    f8 = net.binary("ADD", net.resize_bilinear(t, [h8, w8]), feats[2], act="RELU", prefix="fpn_add")
    f8 = _res_block(net, f8, 128, k=5, act="RELU")
    regs, clss = [], []
    for f, a in ((f8, 2), (f16, 6)):
        _, h, w, _ = net.shape(f)
        n = h * w * a
        c = net.conv(f, a, 1, gain=1.0, prefix="classificator", act="NONE")
        clss.append(net.reshape(c, [1, n, 1], new_shape_option=False))
        r = net.conv(f, a * num_coords, 1, gain=1.0, prefix="regressor", act="NONE")
        regs.append(net.reshape(r, [1, n, num_coords], new_shape_option=False))
    reg = net.concat(regs, axis=1, name="Identity")
    cls = net.concat(clss, axis=1, name="Identity_1")
    return net.finish({"input_1": x_in}, {"regressors": reg, "classificators": cls})


ZOO.update({
    "face_mesh_like": lambda: face_mesh_like(),
    "hand_landmark_like": lambda: hand_landmark_like(),
    "pose_landmark_like": lambda: pose_landmark_like(),
    "palm_detection_like": lambda: palm_detection_like(),
})
