#!/usr/bin/env python3
"""Generates the quantized (uint8 / int8) golden fixtures for the SwiftLite engine tests.

Run from the repository root:

    /work/venv/bin/python Tests/Goldens/make_quant_goldens.py

Output (deleted and rewritten on every run):

    Tests/EngineTests/Fixtures/quant/<case>/model.tflite
    Tests/EngineTests/Fixtures/quant/<case>/input_0.npy
    Tests/EngineTests/Fixtures/quant/<case>/output_0.npy
    Tests/EngineTests/Fixtures/quant/manifest.json

Every case is a single CONV_2D, DEPTHWISE_CONV_2D or FULLY_CONNECTED operator and
its expected output comes from LiteRT with the BUILTIN_REF op resolver (TFLite's
reference kernels). Quantized results must match byte for byte, so every case
has tolerance 0. Four families:

* ``int8_*``: TF2 full-integer post-training quantization (TFLiteConverter with a
  representative dataset, TFLITE_BUILTINS_INT8, int8 input and output):
  int8 activations with zero points, symmetric int8 per-channel weights
  (``fc_*_pertensor`` cases ask the converter for per-tensor dense weights).
* ``tf1_uint8_*``: the TF1 converter (``tf.compat.v1.lite.TFLiteConverter`` with
  ``inference_type=tf.uint8``) on fake-quantized graphs: uint8 per-tensor weights with
  zero points, as quantization-aware-trained models have them.
* ``uint8_*``: the TF2 converter no longer emits uint8 per-tensor convolutions,
  so these models are written directly with the flatbuffer schema: uint8
  activations and asymmetric uint8 weights with zero points, int32 bias with
  scale input_scale * filter_scale, hand-chosen scales so that fused clamps and
  uint8 saturation are exercised.
* ``mnv1_*``, ``mnv2_*``, ``ptq_*``: one operator cut out of the shared published
  models (uint8 per-tensor MobileNet v1/v2, int8 per-channel TF2 PTQ MobileNet v2)
  with its real weights and quantization, on a small input.

Each manifest case also records ``xnnpack_max_diff``: the largest difference, in
quantized units, between LiteRT's default resolver (XNNPACK delegate) and the
reference kernels on the same input.

Optional arguments: case-name substrings; only matching cases are generated.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
import golden_io as G  # noqa: E402  (sets TF env vars before TF import)

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from ai_edge_litert import schema_py_generated as schema  # noqa: E402
from ai_edge_litert.interpreter import Interpreter, OpResolverType  # noqa: E402

GENERATOR = "Tests/Goldens/make_quant_goldens.py"
OUT_DIR = G.FIXTURES_ROOT / "quant"
SIZE_BUDGET_BYTES = 2_000_000
SHARED_MODELS = G.REPO_ROOT.parent / "shared" / "models"



@dataclass
class Case:
    name: str
    description: str
    # make(rng) -> model bytes (a single-operator model with one input).
    make: Callable
    op: str
    # Subset of decoded builtin options that must match.
    expect_options: dict = field(default_factory=dict)
    source: str = ""


CASES = G.Cases()
add = CASES.add


ACT_FN = {
    "NONE": lambda t: t,
    "RELU": tf.nn.relu,
    "RELU6": tf.nn.relu6,
    "RELU_N1_TO_1": lambda t: tf.clip_by_value(t, -1.0, 1.0),
}
ACT_CODE = {"NONE": 0, "RELU": 1, "RELU_N1_TO_1": 2, "RELU6": 3}
PAD_CODE = {"SAME": 0, "VALID": 1}

# ---------------------------------------------------------------------------
# int8: TF2 full-integer post-training quantization
# ---------------------------------------------------------------------------


def convert_int8(fn, shape, rng, per_channel_dense=True):
    spec = [tf.TensorSpec(shape, tf.float32, name="in_0")]
    cf = tf.function(fn, input_signature=spec, autograph=False).get_concrete_function()
    calibration = [rng.uniform(-1.0, 1.0, size=shape).astype(np.float32) for _ in range(64)]

    def representative():
        for x in calibration:
            yield [x]

    conv = tf.lite.TFLiteConverter.from_concrete_functions([cf])
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.representative_dataset = representative
    conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    conv.inference_input_type = tf.int8
    conv.inference_output_type = tf.int8
    if not per_channel_dense:
        conv._experimental_disable_per_channel_quantization_for_dense_layers = True
    return conv.convert()


def channel_gains(rng, n):
    """Per-output-channel weight magnitudes spread over a decade, so per-channel
    scales really differ."""
    return rng.uniform(0.3, 3.0, size=n).astype(np.float32)


def add_int8_conv(name, *, n=1, h, w, cin, cout, k, s=1, pad="SAME", dil=1, act="NONE"):
    kh, kw = (k, k) if isinstance(k, int) else k
    sh, sw = (s, s) if isinstance(s, int) else s

    def make(rng):
        W = rng.uniform(-1, 1, size=(kh, kw, cin, cout)).astype(np.float32)
        W *= channel_gains(rng, cout) / np.sqrt(kh * kw * cin) * (4.0 if act == "RELU6" else 1.5)
        b = rng.uniform(-0.5, 0.5, size=cout).astype(np.float32)
        Wt, bt = tf.constant(W), tf.constant(b)

        def f(x):
            y = tf.nn.conv2d(x, Wt, strides=[1, sh, sw, 1], padding=pad, dilations=[1, dil, dil, 1])
            return ACT_FN[act](tf.nn.bias_add(y, bt))

        return convert_int8(f, (n, h, w, cin), rng)

    add(Case(name, f"CONV_2D {kh}x{kw} stride {sh}x{sw} {pad} dilation {dil}, input {n}x{h}x{w}x{cin} "
                   f"-> {cout} channels, fused {act}; TF2 int8 PTQ, per-channel weights, int8 I/O.",
             make, "CONV_2D",
             {"padding": pad, "strideH": sh, "strideW": sw, "dilationHFactor": dil,
              "dilationWFactor": dil, "fusedActivationFunction": act},
             source="tf.lite.TFLiteConverter int8 full-integer"))


def add_int8_dw(name, *, n=1, h, w, c, mult=1, k, s=1, pad="SAME", dil=1, act="NONE"):
    kh, kw = (k, k) if isinstance(k, int) else k

    def make(rng):
        W = rng.uniform(-1, 1, size=(kh, kw, c, mult)).astype(np.float32)
        W *= channel_gains(rng, c * mult).reshape(c, mult) / np.sqrt(kh * kw) * (4.0 if act == "RELU6" else 1.5)
        b = rng.uniform(-0.5, 0.5, size=c * mult).astype(np.float32)
        Wt, bt = tf.constant(W), tf.constant(b)

        def f(x):
            y = tf.nn.depthwise_conv2d(x, Wt, strides=[1, s, s, 1], padding=pad, dilations=[dil, dil])
            return ACT_FN[act](tf.nn.bias_add(y, bt))

        return convert_int8(f, (n, h, w, c), rng)

    add(Case(name, f"DEPTHWISE_CONV_2D {kh}x{kw} stride {s} {pad} dilation {dil}, input {n}x{h}x{w}x{c}, "
                   f"depth multiplier {mult}, fused {act}; TF2 int8 PTQ, per-channel weights, int8 I/O.",
             make, "DEPTHWISE_CONV_2D",
             {"padding": pad, "strideH": s, "strideW": s, "dilationHFactor": dil,
              "dilationWFactor": dil, "depthMultiplier": mult, "fusedActivationFunction": act},
             source="tf.lite.TFLiteConverter int8 full-integer"))


def add_int8_fc(name, *, in_shape, units, act="NONE", per_channel=True):
    cin = in_shape[-1]

    def make(rng):
        W = rng.uniform(-1, 1, size=(cin, units)).astype(np.float32)
        W *= channel_gains(rng, units) / np.sqrt(cin) * (4.0 if act == "RELU6" else 1.5)
        b = rng.uniform(-0.5, 0.5, size=units).astype(np.float32)
        Wt, bt = tf.constant(W), tf.constant(b)

        def f(x):
            return ACT_FN[act](tf.matmul(x, Wt) + bt)

        return convert_int8(f, tuple(in_shape), rng, per_channel_dense=per_channel)

    kind = "per-channel" if per_channel else "per-tensor"
    add(Case(name, f"FULLY_CONNECTED input {'x'.join(map(str, in_shape))} -> {units} units, fused {act}; "
                   f"TF2 int8 PTQ, {kind} weights, int8 I/O.",
             make, "FULLY_CONNECTED", {"fusedActivationFunction": act},
             source="tf.lite.TFLiteConverter int8 full-integer"))


add_int8_conv("int8_conv_k1_s1_valid_8x8_c16to35", h=8, w=8, cin=16, cout=35, k=1, pad="VALID")
add_int8_conv("int8_conv_k1_s1_same_5x7_c35to16_relu", h=5, w=7, cin=35, cout=16, k=1, act="RELU")
add_int8_conv("int8_conv_k1_s2_valid_8x8_c16to16", h=8, w=8, cin=16, cout=16, k=1, s=2, pad="VALID")
add_int8_conv("int8_conv_k3_s1_same_7x7_c3to16_relu6", h=7, w=7, cin=3, cout=16, k=3, act="RELU6")
add_int8_conv("int8_conv_k3_s2_same_8x8_c16to35", h=8, w=8, cin=16, cout=35, k=3, s=2)
add_int8_conv("int8_conv_k3_s2_same_7x7_c3to16_relu", h=7, w=7, cin=3, cout=16, k=3, s=2, act="RELU")
add_int8_conv("int8_conv_k3_s2_valid_9x9_c35to16", h=9, w=9, cin=35, cout=16, k=3, s=2, pad="VALID")
add_int8_conv("int8_conv_k3_s1_valid_8x8_c16to3_relu6", h=8, w=8, cin=16, cout=3, k=3, pad="VALID", act="RELU6")
add_int8_conv("int8_conv_k5_s1_same_6x6_c3to16", h=6, w=6, cin=3, cout=16, k=5)
add_int8_conv("int8_conv_k5_s2_valid_9x9_c16to35_relu", h=9, w=9, cin=16, cout=35, k=5, s=2, pad="VALID", act="RELU")
add_int8_conv("int8_conv_k3_s1_same_9x9_c16to16_dilation2", h=9, w=9, cin=16, cout=16, k=3, dil=2)
add_int8_conv("int8_conv_k3_s1_valid_9x9_c3to16_dilation2_relu6", h=9, w=9, cin=3, cout=16, k=3, dil=2,
              pad="VALID", act="RELU6")
add_int8_conv("int8_conv_k2x3_s2x1_same_8x7_c3to16", h=8, w=7, cin=3, cout=16, k=(2, 3), s=(2, 1))
add_int8_conv("int8_conv_k3_s1_same_5x5_c16to16_batch2_relu", n=2, h=5, w=5, cin=16, cout=16, k=3, act="RELU")

add_int8_dw("int8_dw_k3_s1_same_7x7_c16_relu6", h=7, w=7, c=16, k=3, act="RELU6")
add_int8_dw("int8_dw_k3_s2_same_8x8_c35", h=8, w=8, c=35, k=3, s=2)
add_int8_dw("int8_dw_k3_s2_valid_9x9_c16_relu", h=9, w=9, c=16, k=3, s=2, pad="VALID", act="RELU")
add_int8_dw("int8_dw_k3_s1_valid_7x7_c3", h=7, w=7, c=3, k=3, pad="VALID")
add_int8_dw("int8_dw_k5_s1_same_6x6_c35_relu6", h=6, w=6, c=35, k=5, act="RELU6")
add_int8_dw("int8_dw_k5_s2_same_9x9_c3", h=9, w=9, c=3, k=5, s=2)
add_int8_dw("int8_dw_k3_s1_same_9x9_c16_dilation2", h=9, w=9, c=16, k=3, dil=2)
add_int8_dw("int8_dw_k3_s1_valid_9x9_c35_dilation2_relu", h=9, w=9, c=35, k=3, dil=2, pad="VALID", act="RELU")
add_int8_dw("int8_dw_k3_s1_same_7x7_c3_dm2", h=7, w=7, c=3, mult=2, k=3)
add_int8_dw("int8_dw_k3_s2_valid_8x8_c16_dm2_relu6", h=8, w=8, c=16, mult=2, k=3, s=2, pad="VALID", act="RELU6")
add_int8_dw("int8_dw_k5_s1_same_6x6_c35_dm2", h=6, w=6, c=35, mult=2, k=5)
add_int8_dw("int8_dw_k3_s1_same_5x5_c16_batch2", n=2, h=5, w=5, c=16, k=3)

add_int8_fc("int8_fc_1x16_to35", in_shape=(1, 16), units=35)
add_int8_fc("int8_fc_3x35_to16_relu", in_shape=(3, 35), units=16, act="RELU")
add_int8_fc("int8_fc_2x3_to16_relu6", in_shape=(2, 3), units=16, act="RELU6")
add_int8_fc("int8_fc_1x100_to3", in_shape=(1, 100), units=3)
add_int8_fc("int8_fc_64x64_to64", in_shape=(64, 64), units=64)
add_int8_fc("int8_fc_1x16_to35_pertensor", in_shape=(1, 16), units=35, per_channel=False)
add_int8_fc("int8_fc_3x35_to16_relu_pertensor", in_shape=(3, 35), units=16, act="RELU", per_channel=False)

# ---------------------------------------------------------------------------
# uint8: the TF1 converter on fake-quantized graphs (quantization-aware style)
# ---------------------------------------------------------------------------

tf1 = tf.compat.v1


def convert_tf1_uint8(build, in_shape, act, rng):
    """`build(xq, rng)` makes the float graph on the fake-quantized input, with its weights
    fake-quantized over their own (asymmetric) range. The output range comes from running
    the graph on random inputs; the TF1 converter then folds everything into uint8."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf1.placeholder(tf.float32, in_shape, name="input")
        xq = tf1.quantization.fake_quant_with_min_max_args(x, min=-1.0, max=1.0)
        y = build(xq, rng)
        with tf1.Session(graph=graph) as sess:
            samples = [sess.run(y, {x: rng.uniform(-1, 1, size=in_shape)}) for _ in range(8)]
            lo = min(0.0, float(min(s.min() for s in samples)))
            hi = max(0.0, float(max(s.max() for s in samples)))
            if act == "RELU6":
                lo, hi = 0.0, 6.0
            yq = tf1.quantization.fake_quant_with_min_max_args(y, min=lo, max=hi)
            conv = tf1.lite.TFLiteConverter.from_session(sess, [x], [yq])
            conv.inference_type = tf.uint8
            conv.quantized_input_stats = {"input": (128.0, 127.5)}
            return conv.convert()


def fake_quant_weights(w):
    return tf1.quantization.fake_quant_with_min_max_args(tf.constant(w), min=float(w.min()), max=float(w.max()))


def add_tf1_conv(name, *, h, w, cin, cout, k, s=1, pad="SAME", dil=1, act="NONE"):
    def make(rng):
        def build(xq, rng):
            gain = 12.0 if act == "RELU6" else 2.0  # RELU6 outputs must pass 6 for the clamp to bite
            W = (rng.uniform(-1, 1, size=(k, k, cin, cout)) / np.sqrt(k * k * cin) * gain).astype(np.float32)
            W += np.float32(0.05)  # asymmetric range: weight zero point away from 128
            b = rng.uniform(-0.3, 0.3, size=cout).astype(np.float32)
            y = tf.nn.conv2d(xq, fake_quant_weights(W), strides=[1, s, s, 1], padding=pad,
                             dilations=[1, dil, dil, 1]) + b
            return ACT_FN[act](y)
        return convert_tf1_uint8(build, [1, h, w, cin], act, rng)

    add(Case(name, f"CONV_2D {k}x{k} stride {s} {pad} dilation {dil}, input 1x{h}x{w}x{cin} -> {cout} "
                   f"channels, fused {act}; TF1 converter, fake-quant graph, inference_type uint8.",
             make, "CONV_2D", {"padding": pad, "strideH": s, "dilationHFactor": dil, "fusedActivationFunction": act},
             source="tf.compat.v1.lite.TFLiteConverter uint8 (fake quant)"))


def add_tf1_dw(name, *, h, w, c, mult=1, k, s=1, pad="SAME", dil=1, act="NONE"):
    def make(rng):
        def build(xq, rng):
            gain = 12.0 if act == "RELU6" else 2.0
            W = (rng.uniform(-1, 1, size=(k, k, c, mult)) / k * gain - 0.05).astype(np.float32)
            b = rng.uniform(-0.3, 0.3, size=c * mult).astype(np.float32)
            y = tf.nn.depthwise_conv2d(xq, fake_quant_weights(W), strides=[1, s, s, 1], padding=pad,
                                       dilations=[dil, dil]) + b
            return ACT_FN[act](y)
        return convert_tf1_uint8(build, [1, h, w, c], act, rng)

    add(Case(name, f"DEPTHWISE_CONV_2D {k}x{k} stride {s} {pad} dilation {dil}, input 1x{h}x{w}x{c}, depth "
                   f"multiplier {mult}, fused {act}; TF1 converter, fake-quant graph, inference_type uint8.",
             make, "DEPTHWISE_CONV_2D",
             {"padding": pad, "strideH": s, "dilationHFactor": dil, "depthMultiplier": mult,
              "fusedActivationFunction": act},
             source="tf.compat.v1.lite.TFLiteConverter uint8 (fake quant)"))


def add_tf1_fc(name, *, batch, depth, units, act="NONE"):
    def make(rng):
        def build(xq, rng):
            W = (rng.uniform(-1, 1, size=(depth, units)) / np.sqrt(depth) * 2 + 0.03).astype(np.float32)
            b = rng.uniform(-0.3, 0.3, size=units).astype(np.float32)
            return ACT_FN[act](tf.matmul(xq, fake_quant_weights(W)) + b)
        return convert_tf1_uint8(build, [batch, depth], act, rng)

    add(Case(name, f"FULLY_CONNECTED input {batch}x{depth} -> {units} units, fused {act}; TF1 converter, "
                   f"fake-quant graph, inference_type uint8.",
             make, "FULLY_CONNECTED", {"fusedActivationFunction": act},
             source="tf.compat.v1.lite.TFLiteConverter uint8 (fake quant)"))


add_tf1_conv("tf1_uint8_conv_k3_s1_same_7x7_c3to16_relu6", h=7, w=7, cin=3, cout=16, k=3, act="RELU6")
add_tf1_conv("tf1_uint8_conv_k1_s1_valid_6x6_c16to35", h=6, w=6, cin=16, cout=35, k=1, pad="VALID")
add_tf1_conv("tf1_uint8_conv_k5_s2_valid_9x9_c16to16_relu", h=9, w=9, cin=16, cout=16, k=5, s=2, pad="VALID",
             act="RELU")
add_tf1_conv("tf1_uint8_conv_k3_s2_same_8x8_c35to16", h=8, w=8, cin=35, cout=16, k=3, s=2)
add_tf1_conv("tf1_uint8_conv_k3_s1_same_9x9_c16to16_dilation2", h=9, w=9, cin=16, cout=16, k=3, dil=2)
add_tf1_dw("tf1_uint8_dw_k3_s2_same_8x8_c35_relu6", h=8, w=8, c=35, k=3, s=2, act="RELU6")
add_tf1_dw("tf1_uint8_dw_k3_s1_same_7x7_c3_dm2", h=7, w=7, c=3, mult=2, k=3)
add_tf1_dw("tf1_uint8_dw_k5_s1_valid_9x9_c16", h=9, w=9, c=16, k=5, pad="VALID")
add_tf1_dw("tf1_uint8_dw_k3_s1_same_9x9_c16_dilation2_relu", h=9, w=9, c=16, k=3, dil=2, act="RELU")
add_tf1_fc("tf1_uint8_fc_2x35_to16_relu", batch=2, depth=35, units=16, act="RELU")
add_tf1_fc("tf1_uint8_fc_1x100_to10", batch=1, depth=100, units=10)

# ---------------------------------------------------------------------------
# Writing single-operator models directly (uint8 per-tensor, and cut-outs)
# ---------------------------------------------------------------------------

TENSOR_TYPE = {np.dtype(np.uint8): schema.TensorType.UINT8, np.dtype(np.int8): schema.TensorType.INT8,
               np.dtype(np.int32): schema.TensorType.INT32}
OP_CODE = {"CONV_2D": schema.BuiltinOperator.CONV_2D,
           "DEPTHWISE_CONV_2D": schema.BuiltinOperator.DEPTHWISE_CONV_2D,
           "FULLY_CONNECTED": schema.BuiltinOperator.FULLY_CONNECTED}


@dataclass
class TensorSpec:
    name: str
    dtype: np.dtype
    shape: tuple
    scales: list
    zero_points: list
    quantized_dimension: int = 0
    data: np.ndarray | None = None


def single_op_model(op, options, tensors, op_version, description):
    """A model whose one subgraph runs `op` on tensors [input, filter, bias, output]."""
    model = schema.ModelT()
    model.version = 3
    model.description = description
    model.buffers = [schema.BufferT()]  # buffer 0: the conventional empty buffer
    sg = schema.SubGraphT()
    sg.tensors = []
    for t in tensors:
        tt = schema.TensorT()
        tt.name = t.name
        tt.type = TENSOR_TYPE[np.dtype(t.dtype)]
        tt.shape = np.array(t.shape, dtype=np.int32)
        q = schema.QuantizationParametersT()
        q.scale = np.array(t.scales, dtype=np.float32)
        q.zeroPoint = np.array(t.zero_points, dtype=np.int64)
        q.quantizedDimension = t.quantized_dimension
        tt.quantization = q
        if t.data is not None:
            buf = schema.BufferT()
            buf.data = np.frombuffer(np.ascontiguousarray(t.data, dtype=np.dtype(t.dtype).newbyteorder("<")).tobytes(),
                                     dtype=np.uint8)
            model.buffers.append(buf)
            tt.buffer = len(model.buffers) - 1
        else:
            tt.buffer = 0
        sg.tensors.append(tt)
    code = schema.OperatorCodeT()
    code.builtinCode = OP_CODE[op]
    code.deprecatedBuiltinCode = OP_CODE[op]
    code.version = op_version
    model.operatorCodes = [code]
    o = schema.OperatorT()
    o.opcodeIndex = 0
    o.inputs = np.array([0, 1, 2], dtype=np.int32)
    o.outputs = np.array([3], dtype=np.int32)
    o.builtinOptionsType, o.builtinOptions = options
    sg.operators = [o]
    sg.inputs = np.array([0], dtype=np.int32)
    sg.outputs = np.array([3], dtype=np.int32)
    sg.name = "main"
    model.subgraphs = [sg]
    return G.serialize_model(model)


def conv_options(pad, sh, sw, dil, act):
    o = schema.Conv2DOptionsT()
    o.padding, o.strideH, o.strideW = PAD_CODE[pad], sh, sw
    o.dilationHFactor = o.dilationWFactor = dil
    o.fusedActivationFunction = ACT_CODE[act]
    return schema.BuiltinOptions.Conv2DOptions, o


def dw_options(pad, s, dil, mult, act):
    o = schema.DepthwiseConv2DOptionsT()
    o.padding, o.strideH, o.strideW = PAD_CODE[pad], s, s
    o.dilationHFactor = o.dilationWFactor = dil
    o.depthMultiplier = mult
    o.fusedActivationFunction = ACT_CODE[act]
    return schema.BuiltinOptions.DepthwiseConv2DOptions, o


def fc_options(act):
    o = schema.FullyConnectedOptionsT()
    o.fusedActivationFunction = ACT_CODE[act]
    return schema.BuiltinOptions.FullyConnectedOptions, o


def window_out(size, k, s, dil, pad):
    eff = (k - 1) * dil + 1
    return (size + s - 1) // s if pad == "SAME" else (size + s - eff) // s


def float_result(op, x, w, b, *, s=(1, 1), pad="VALID", dil=1, mult=1):
    """The real-valued operator on already dequantized float64 arrays (TF float ops)."""
    x = tf.constant(x, tf.float64)
    if op == "CONV_2D":  # w: OHWI
        y = tf.nn.conv2d(x, tf.constant(np.transpose(w, (1, 2, 3, 0))), strides=[1, s[0], s[1], 1],
                         padding=pad, dilations=[1, dil, dil, 1])
    elif op == "DEPTHWISE_CONV_2D":  # w: 1 x kh x kw x (c*mult)
        kh, kw, c = w.shape[1], w.shape[2], w.shape[3] // mult
        y = tf.nn.depthwise_conv2d(x, tf.constant(w.reshape(kh, kw, c, mult)), strides=[1, s[0], s[1], 1],
                                   padding=pad, dilations=[dil, dil])
    else:  # w: units x depth
        y = tf.matmul(x, tf.constant(w.T))
    return (y + b).numpy()


def output_params(y, act, dtype, squeeze=0.85):
    """Scale and zero point covering `squeeze` × the range of the real result (so
    some outputs saturate); with a fused activation the range also covers the
    activation's bounds, so the clamp is applied inside the representable range."""
    lo, hi = float(y.min()), float(y.max())
    lo, hi = min(lo, 0.0) * squeeze, max(hi, 0.0) * squeeze
    if act == "RELU6":
        lo, hi = min(lo, -0.5), max(hi, 6.5)
    if act == "RELU_N1_TO_1":
        lo, hi = min(lo, -1.5), max(hi, 1.5)
    info = np.iinfo(dtype)
    scale = (hi - lo) / (info.max - info.min)
    zero_point = int(np.clip(round(info.min - lo / scale), info.min, info.max))
    return float(np.float32(scale)), zero_point


def add_uint8(name, op, *, n=1, h=1, w=1, cin, cout=None, k=1, s=1, pad="VALID", dil=1, mult=1,
              act="NONE", in_zp=128, in_scale=1 / 128, w_zp=None, target=4.0, fc_batch=1,
              multiplier_above_one=False, desc=""):
    """A hand-written uint8 model: uint8 input/output with zero points, asymmetric
    uint8 weights with a zero point, int32 bias. `target` is the largest real
    output magnitude wanted before the activation (scales the weights)."""
    kh, kw = (k, k) if isinstance(k, int) else k
    sh, sw = (s, s) if isinstance(s, int) else s

    def make(rng):
        wz = int(rng.integers(90, 170)) if w_zp is None else w_zp
        if op == "CONV_2D":
            in_shape, wshape = (n, h, w, cin), (cout, kh, kw, cin)
            out_shape = (n, window_out(h, kh, sh, dil, pad), window_out(w, kw, sw, dil, pad), cout)
            channels = cout
        elif op == "DEPTHWISE_CONV_2D":
            in_shape, wshape = (n, h, w, cin), (1, kh, kw, cin * mult)
            out_shape = (n, window_out(h, kh, sh, dil, pad), window_out(w, kw, sw, dil, pad), cin * mult)
            channels = cin * mult
        else:
            in_shape, wshape = (fc_batch, cin), (cout, cin)
            out_shape, channels = (fc_batch, cout), cout
        if multiplier_above_one:
            # Tiny weights around the zero point: accumulators stay small, and an
            # output scale below input_scale * filter_scale gives a real multiplier > 1.
            wq = (wz + rng.integers(-1, 2, size=wshape)).astype(np.uint8)
        else:
            # Spread around the zero point like trained weights, clipped to uint8.
            wq = np.clip(np.rint(wz + rng.normal(0, 45, size=wshape)), 0, 255).astype(np.uint8)
        bias_range = 20 if multiplier_above_one else 3000
        bq = rng.integers(-bias_range, bias_range, size=channels).astype(np.int32)
        x_cal = rng.integers(0, 256, size=in_shape)
        xf = (x_cal.astype(np.float64) - in_zp) * in_scale
        wf = wq.astype(np.float64) - wz
        # Real result with filter scale 1 (bias scale = input scale); it is linear in
        # the filter scale, which is then chosen to reach `target`.
        y1 = float_result(op, xf, wf, bq * in_scale, s=(sh, sw), pad=pad, dil=dil, mult=mult)
        w_scale = float(np.float32(target / max(np.abs(y1).max(), 1e-6)))
        bias_scale = float(np.float32(np.float32(in_scale) * np.float32(w_scale)))
        y = y1 * w_scale
        if multiplier_above_one:
            out_scale = float(np.float32(bias_scale / 1.37))
            out_zp = 131
        else:
            out_scale, out_zp = output_params(y, act, np.uint8)
        tensors = [
            TensorSpec("input", np.uint8, in_shape, [in_scale], [in_zp]),
            TensorSpec("filter", np.uint8, wshape, [w_scale], [wz], data=wq),
            TensorSpec("bias", np.int32, (channels,), [bias_scale], [0], data=bq),
            TensorSpec("output", np.uint8, out_shape, [out_scale], [out_zp]),
        ]
        if op == "CONV_2D":
            options, version = conv_options(pad, sh, sw, dil, act), 1
        elif op == "DEPTHWISE_CONV_2D":
            options, version = dw_options(pad, sh, dil, mult, act), 1
        else:
            options, version = fc_options(act), 1
        return single_op_model(op, options, tensors, version, f"SwiftLite golden {name}")

    shape_txt = f"{fc_batch}x{cin} -> {cout} units" if op == "FULLY_CONNECTED" else (
        f"{kh}x{kw} stride {sh}x{sw} {pad} dilation {dil}, input {n}x{h}x{w}x{cin}"
        + (f" -> {cout} channels" if op == "CONV_2D" else f", depth multiplier {mult}"))
    expect = {"fusedActivationFunction": act}
    if op != "FULLY_CONNECTED":
        expect.update({"padding": pad, "strideH": sh, "strideW": sw, "dilationHFactor": dil})
    add(Case(name, f"{op} {shape_txt}, fused {act}; hand-written uint8 model (asymmetric uint8 weights, "
                   f"input zero point {in_zp}). {desc}".strip(),
             make, op, expect, source="written with the TFLite flatbuffer schema"))


add_uint8("uint8_conv_k1_s1_valid_6x6_c16to35", "CONV_2D", h=6, w=6, cin=16, cout=35)
add_uint8("uint8_conv_k1_s2_valid_7x7_c35to16_relu", "CONV_2D", h=7, w=7, cin=35, cout=16, s=2, act="RELU",
          in_zp=0, in_scale=6 / 255)
add_uint8("uint8_conv_k3_s1_same_7x7_c3to16_relu6", "CONV_2D", h=7, w=7, cin=3, cout=16, k=3, pad="SAME",
          act="RELU6", target=10.0)
add_uint8("uint8_conv_k3_s2_same_8x8_c16to16", "CONV_2D", h=8, w=8, cin=16, cout=16, k=3, s=2, pad="SAME",
          in_zp=77)
add_uint8("uint8_conv_k3_s2_valid_9x9_c35to3_relu_n1_to_1", "CONV_2D", h=9, w=9, cin=35, cout=3, k=3, s=2,
          act="RELU_N1_TO_1", target=2.0)
add_uint8("uint8_conv_k5_s1_same_6x6_c3to35", "CONV_2D", h=6, w=6, cin=3, cout=35, k=5, pad="SAME")
add_uint8("uint8_conv_k5_s2_valid_9x9_c16to16_relu6", "CONV_2D", h=9, w=9, cin=16, cout=16, k=5, s=2,
          act="RELU6", target=10.0)
add_uint8("uint8_conv_k3_s1_same_9x9_c16to16_dilation2_relu", "CONV_2D", h=9, w=9, cin=16, cout=16, k=3,
          pad="SAME", dil=2, act="RELU")
add_uint8("uint8_conv_k3_s1_valid_9x9_c3to16_dilation2", "CONV_2D", h=9, w=9, cin=3, cout=16, k=3, dil=2)
add_uint8("uint8_conv_k3_s1_same_5x5_c16to16_batch2", "CONV_2D", n=2, h=5, w=5, cin=16, cout=16, k=3,
          pad="SAME", w_zp=255, desc="Weight zero point 255.")
add_uint8("uint8_conv_k1_s1_valid_5x5_c3to16_multiplier_above_one", "CONV_2D", h=5, w=5, cin=3, cout=16,
          in_zp=140, multiplier_above_one=True,
          desc="Output scale below input*filter scale: real multiplier 1.37 (positive shift).")

add_uint8("uint8_dw_k3_s1_same_7x7_c16_relu6", "DEPTHWISE_CONV_2D", h=7, w=7, cin=16, k=3, pad="SAME",
          act="RELU6", target=10.0)
add_uint8("uint8_dw_k3_s2_same_8x8_c35", "DEPTHWISE_CONV_2D", h=8, w=8, cin=35, k=3, s=2, pad="SAME", in_zp=3)
add_uint8("uint8_dw_k3_s2_valid_9x9_c3_relu", "DEPTHWISE_CONV_2D", h=9, w=9, cin=3, k=3, s=2, act="RELU")
add_uint8("uint8_dw_k5_s1_same_6x6_c16", "DEPTHWISE_CONV_2D", h=6, w=6, cin=16, k=5, pad="SAME")
add_uint8("uint8_dw_k3_s1_same_9x9_c16_dilation2_relu6", "DEPTHWISE_CONV_2D", h=9, w=9, cin=16, k=3,
          pad="SAME", dil=2, act="RELU6", target=10.0)
add_uint8("uint8_dw_k3_s1_same_7x7_c3_dm2", "DEPTHWISE_CONV_2D", h=7, w=7, cin=3, k=3, pad="SAME", mult=2)
add_uint8("uint8_dw_k3_s2_valid_8x8_c35_dm2_relu", "DEPTHWISE_CONV_2D", h=8, w=8, cin=35, k=3, s=2, mult=2,
          act="RELU", in_zp=200)
add_uint8("uint8_dw_k3_s1_valid_5x5_c16_batch2", "DEPTHWISE_CONV_2D", n=2, h=5, w=5, cin=16, k=3, w_zp=0,
          desc="Weight zero point 0.")

add_uint8("uint8_fc_1x16_to35", "FULLY_CONNECTED", cin=16, cout=35)
add_uint8("uint8_fc_3x35_to16_relu", "FULLY_CONNECTED", cin=35, cout=16, fc_batch=3, act="RELU", in_zp=5)
add_uint8("uint8_fc_2x3_to16_relu6", "FULLY_CONNECTED", cin=3, cout=16, fc_batch=2, act="RELU6", target=10.0)
add_uint8("uint8_fc_1x200_to3", "FULLY_CONNECTED", cin=200, cout=3)
add_uint8("uint8_fc_48x40_to50", "FULLY_CONNECTED", cin=40, cout=50, fc_batch=48, in_zp=97)

# ---------------------------------------------------------------------------
# Operators cut out of the shared published models
# ---------------------------------------------------------------------------


def add_cutout(name, model_file, op_index, hw, desc):
    def make(rng):
        src = (SHARED_MODELS / model_file).read_bytes()
        m = G.parse_model(src)
        sg = m.subgraphs[0]
        op = sg.operators[op_index]
        code = m.operatorCodes[op.opcodeIndex]
        op_name = {v: k for k, v in OP_CODE.items()}[max(code.builtinCode, code.deprecatedBuiltinCode)]
        specs = []
        for role, t_index in zip(("input", "filter", "bias", "output"), list(op.inputs) + list(op.outputs)):
            t = sg.tensors[t_index]
            q = t.quantization
            buf = m.buffers[t.buffer]
            dtype = {schema.TensorType.UINT8: np.uint8, schema.TensorType.INT8: np.int8,
                     schema.TensorType.INT32: np.int32}[t.type]
            data = None
            if buf is not None and buf.data is not None and len(buf.data) > 0:
                data = np.frombuffer(bytes(bytearray(buf.data)), dtype=np.dtype(dtype).newbyteorder("<"))
            shape = [int(d) for d in t.shape]
            if role in ("input", "output"):
                shape[1], shape[2] = hw
            specs.append(TensorSpec(role, dtype, tuple(shape), [float(v) for v in q.scale],
                                    [int(v) for v in q.zeroPoint], int(q.quantizedDimension), data))
        opts = op.builtinOptions
        s_h, s_w, dil = opts.strideH, opts.strideW, opts.dilationHFactor
        pad = {0: "SAME", 1: "VALID"}[opts.padding]
        fh, fw = specs[1].shape[1], specs[1].shape[2]
        out = list(specs[3].shape)
        out[1], out[2] = window_out(hw[0], fh, s_h, dil, pad), window_out(hw[1], fw, s_w, dil, pad)
        specs[3].shape = tuple(out)
        return single_op_model(op_name, (op.builtinOptionsType, opts), specs, code.version,
                               f"SwiftLite golden {name}: operator {op_index} of {model_file}")

    op_name = "DEPTHWISE_CONV_2D" if "_dw_" in name else "CONV_2D"
    add(Case(name, f"{op_name}: operator {op_index} of shared/models/{model_file} (real weights and "
                   f"quantization) on a {hw[0]}x{hw[1]} input. {desc}".strip(),
             make, op_name, source=f"cut out of shared/models/{model_file}"))


add_cutout("mnv1_conv_op0_k3_s2_c3to8_relu6", "mobilenet_v1_0.25_128_quant.tflite", 0, (9, 9), "uint8 per-tensor.")
add_cutout("mnv1_dw_op1_k3_s1_c8_relu6", "mobilenet_v1_0.25_128_quant.tflite", 1, (7, 7), "uint8 per-tensor.")
add_cutout("mnv1_conv_op2_k1_c8to16_relu6", "mobilenet_v1_0.25_128_quant.tflite", 2, (7, 7), "uint8 per-tensor.")
add_cutout("mnv1_dw_op3_k3_s2_c16_relu6", "mobilenet_v1_0.25_128_quant.tflite", 3, (8, 8), "uint8 per-tensor.")
add_cutout("mnv2_conv_op3_k1_c16to96_relu6", "mobilenet_v2_1.0_224_quant.tflite", 3, (5, 5), "uint8 per-tensor.")
add_cutout("mnv2_dw_op4_k3_s2_c96_relu6", "mobilenet_v2_1.0_224_quant.tflite", 4, (7, 7), "uint8 per-tensor.")
add_cutout("mnv2_conv_op5_k1_c96to24", "mobilenet_v2_1.0_224_quant.tflite", 5, (5, 5),
           "uint8 per-tensor, no activation.")
add_cutout("ptq_conv_op1_k3_s2_c3to32_relu6", "tf2_mobilenet_v2_1.0_224_ptq.tflite", 1, (9, 9),
           "int8 per-channel.")
add_cutout("ptq_dw_op8_k3_s1_c144_relu6", "tf2_mobilenet_v2_1.0_224_ptq.tflite", 8, (5, 5),
           "int8 per-channel along dimension 3.")
add_cutout("ptq_conv_op9_k1_c144to24", "tf2_mobilenet_v2_1.0_224_ptq.tflite", 9, (4, 6),
           "int8 per-channel, no activation.")

# ---------------------------------------------------------------------------
# Running and writing
# ---------------------------------------------------------------------------


def random_input(rng, det):
    info = np.iinfo(det["dtype"])
    return rng.integers(info.min, info.max + 1, size=tuple(det["shape"])).astype(det["dtype"])


def run_default_resolver(model_bytes, inputs):
    """LiteRT as users get it: default resolver, XNNPACK delegate applied."""
    interp = Interpreter(model_content=model_bytes, experimental_op_resolver_type=OpResolverType.AUTO,
                         num_threads=1)
    interp.allocate_tensors()
    for det, arr in zip(interp.get_input_details(), inputs):
        interp.set_tensor(det["index"], arr)
    interp.invoke()
    return [np.array(interp.get_tensor(d["index"])) for d in interp.get_output_details()]


def quant_summary(model_bytes):
    """Types and scale counts of the operator's operands, for the manifest."""
    m = G.parse_model(model_bytes)
    sg = m.subgraphs[0]
    op = sg.operators[0]
    out = {}
    for role, t_index in zip(("input", "filter", "bias", "output"), list(op.inputs) + list(op.outputs)):
        if t_index < 0:
            continue
        t = sg.tensors[t_index]
        q = t.quantization
        out[role] = {"type": G._TYPE_NAMES.get(t.type, str(t.type)),
                     "scales": 0 if q is None or q.scale is None else len(q.scale)}
        if q is not None and q.scale is not None and len(q.scale) > 1:
            out[role]["quantized_dimension"] = int(q.quantizedDimension)
    return out


def generate(case: Case):
    rng = np.random.default_rng(G.seed_for(case.name, "weights"))
    model_bytes = case.make(rng)
    ops = G.describe_ops(model_bytes)
    names = [o["op"] for o in ops]
    if names != [case.op]:
        raise AssertionError(f"{case.name}: model has operators {names}, expected [{case.op}]")
    have = ops[0]["options"]
    for k, v in case.expect_options.items():
        if have.get(k) != v:
            raise AssertionError(f"{case.name}: option {k}={have.get(k)!r}, want {v!r} (all: {have})")
    details = G.input_details(model_bytes)
    in_rng = np.random.default_rng(G.seed_for(case.name, "inputs"))
    inputs = [random_input(in_rng, d) for d in details]
    outputs, executed = G.run_model(model_bytes, inputs)
    if executed != [case.op]:
        raise AssertionError(f"{case.name}: executed {executed}")
    for o in outputs:
        if o.dtype not in (np.uint8, np.int8):
            raise AssertionError(f"{case.name}: output dtype {o.dtype}")
        if np.all(o == o.flat[0]):
            raise AssertionError(f"{case.name}: output is constant ({o.flat[0]})")
    again, _ = G.run_model(model_bytes, inputs)
    if not all(np.array_equal(a, b) for a, b in zip(outputs, again)):
        raise AssertionError(f"{case.name}: reference run is not deterministic")
    xnn = run_default_resolver(model_bytes, inputs)
    xnn_diff = max(int(np.max(np.abs(a.astype(np.int32) - b.astype(np.int32)))) for a, b in zip(xnn, outputs))
    xnn_count = sum(int(np.sum(a != b)) for a, b in zip(xnn, outputs))
    return model_bytes, inputs, outputs, xnn_diff, xnn_count


def main(argv):
    filters = argv[1:]
    selected = [c for c in CASES if not filters or any(f in c.name for f in filters)]
    G.reset_dir(OUT_DIR)
    manifest_cases = []
    for case in selected:
        model_bytes, inputs, outputs, xnn_diff, xnn_count = generate(case)
        G.write_case(OUT_DIR, case.name, model_bytes, inputs, outputs)
        o = outputs[0]
        saturated = int(np.sum((o == np.iinfo(o.dtype).min) | (o == np.iinfo(o.dtype).max)))
        manifest_cases.append({
            "name": case.name, "ops": [case.op], "tolerance": 0, "resolver": "BUILTIN_REF",
            "description": case.description,
            "source": case.source, "quantization": quant_summary(model_bytes),
            "xnnpack_max_diff": xnn_diff, "xnnpack_differing": xnn_count,
        })
        print(f"{case.name:58s} {len(model_bytes):7d} B out={list(o.shape)} {o.dtype} "
              f"[{o.min()}, {o.max()}] saturated={saturated}/{o.size} "
              f"xnnpack max|Δ|={xnn_diff} ({xnn_count} differ)", flush=True)
    origin = G.origin(GENERATOR)
    origin["comparison"] = "bit-exact (tolerance 0)"
    origin["xnnpack_note"] = ("xnnpack_max_diff: max |default resolver (XNNPACK) - BUILTIN_REF| in quantized "
                              "units on the same input; xnnpack_differing: how many elements differ")
    G.write_manifest(OUT_DIR, origin, manifest_cases)
    total = G.dir_size(OUT_DIR)
    print(f"\n{len(manifest_cases)} cases written to {OUT_DIR.relative_to(G.REPO_ROOT)}")
    print(f"total fixture size: {total} bytes ({total / 1e6:.3f} MB)")
    if not filters and total > SIZE_BUDGET_BYTES:
        raise SystemExit(f"fixture size {total} exceeds budget {SIZE_BUDGET_BYTES}")


if __name__ == "__main__":
    main(sys.argv)
