#!/usr/bin/env python3
"""Generates the float32 golden fixtures for the SwiftLite engine tests.

Run from the repository root:

    /work/venv/bin/python Tests/Goldens/make_float_goldens.py

Output (deleted and rewritten on every run):

    Tests/EngineTests/Fixtures/float/<case>/model.tflite
    Tests/EngineTests/Fixtures/float/<case>/input_<i>.npy    (subgraph input order)
    Tests/EngineTests/Fixtures/float/<case>/output_<i>.npy   (subgraph output order)
    Tests/EngineTests/Fixtures/float/manifest.json

Each case is a tiny TensorFlow graph (or a whole Keras application network with
random weights) converted with tf.lite.TFLiteConverter (float32, no
optimizations unless the case is about weight storage), then run with LiteRT
using the BUILTIN_REF op resolver (TFLite reference kernels). The generator
verifies that the converted model contains exactly the expected operators and
options, so a converter change that fuses or folds something fails loudly
instead of silently producing a fixture that tests something else.

Optional arguments: case-name substrings; only matching cases are generated
(the manifest then lists only those). Used while developing; the committed
fixtures come from a run without arguments.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

sys.dont_write_bytecode = True  # keep __pycache__ out of the source tree
sys.path.insert(0, str(Path(__file__).resolve().parent))
import golden_io as G  # noqa: E402  (sets TF env vars before TF import)

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

GENERATOR = "Tests/Goldens/make_float_goldens.py"
OUT_DIR = G.FIXTURES_ROOT / "float"
DEFAULT_TOLERANCE = 1e-5
SIZE_BUDGET_BYTES = 6_000_000

# Whole-network fixtures whose weights are stored as float16. The three
# networks as float32 need ~6.0 MB for models + inputs (MobileNetV3Small at
# alpha=1.0 with include_top=True alone has ~1.5M parameters, ~6 MB), which is
# over the 6 MB fixture budget. Storing weights as float16 (converter float16
# weight quantization) keeps the exact architectures: the converter expresses it
# as DEQUANTIZE(fp16 constant) -> float32 ops, so all arithmetic is still
# float32. MobileNet v1 keeps float32 weights (pure float32 end-to-end network).
FP16_WEIGHT_NETWORKS = {"net_mobilenet_v2_035_96", "net_mobilenet_v3_small_96"}



# ---------------------------------------------------------------------------
# Case definition
# ---------------------------------------------------------------------------


@dataclass
class Case(G.Case):
    # Per operator index: subset of decoded builtin options that must match.
    expect_options: dict = field(default_factory=dict)
    # Per operator index: list of input positions that must be runtime
    # (non-constant) tensors / constant tensors.
    expect_runtime_inputs: dict = field(default_factory=dict)
    expect_const_inputs: dict = field(default_factory=dict)
    # Input value distribution: ("uniform", lo, hi) or ("normal", std), per
    # input or one for all.
    input_dist: object = ("uniform", -1.0, 1.0)
    converter_setup: Callable | None = None
    # Optional flatbuffer rewrite applied after conversion (documented per case).
    patch: Callable | None = None
    # Optional check of the converted model bytes (raises on mismatch).
    model_check: Callable | None = None
    # For patched models (whose TF function no longer matches): numpy reference
    # used to cross-check LiteRT, numpy_ref(list of inputs in arg order) -> [outputs].
    numpy_ref: Callable | None = None
    tolerance: float = DEFAULT_TOLERANCE
    tolerance_reason: str | None = None
    # Optional extra check on the reference outputs: post_check(case, outputs).
    post_check: Callable | None = None


CASES = G.Cases()
add = CASES.add


# ---------------------------------------------------------------------------
# Weight helpers
# ---------------------------------------------------------------------------


def uniform_std(rng, shape, std):
    a = np.sqrt(3.0) * std
    return rng.uniform(-a, a, size=shape).astype(np.float32)


def conv_weights(rng, kh, kw, cin, cout, gain=1.0):
    """HWIO filter with output std ~gain for unit-variance inputs."""
    return tf.constant(uniform_std(rng, (kh, kw, cin, cout), gain / np.sqrt(kh * kw * cin)))


def dw_weights(rng, kh, kw, c, mult, gain=1.0):
    return tf.constant(uniform_std(rng, (kh, kw, c, mult), gain / np.sqrt(kh * kw)))


def bias(rng, n, scale=0.5):
    return tf.constant(rng.uniform(-scale, scale, size=(n,)).astype(np.float32))


ACT_FN = {
    "NONE": lambda t: t,
    "RELU": tf.nn.relu,
    "RELU6": tf.nn.relu6,
    "RELU_N1_TO_1": lambda t: tf.clip_by_value(t, -1.0, 1.0),
}

# Activation-specific output scale so that the clamps are actually exercised.
ACT_GAIN = {"NONE": 1.0, "RELU": 1.0, "RELU6": 5.0, "RELU_N1_TO_1": 1.5}


# ---------------------------------------------------------------------------
# CONV_2D
# ---------------------------------------------------------------------------


def add_conv(name, *, n=1, h, w, cin, cout, kh, kw, sh=1, sw=1, pad="SAME", dil=1,
             act="NONE", use_bias=True, desc=""):
    gain = ACT_GAIN[act]

    def build(rng):
        W = conv_weights(rng, kh, kw, cin, cout, gain)
        b = bias(rng, cout) if use_bias else None

        def f(x):
            y = tf.nn.conv2d(x, W, strides=[1, sh, sw, 1], padding=pad, dilations=[1, dil, dil, 1])
            if b is not None:
                y = tf.nn.bias_add(y, b)
            return ACT_FN[act](y)

        return f, [(n, h, w, cin)]

    bias_txt = "bias" if use_bias else "no bias in TF (converter materializes a zero bias tensor)"
    add(Case(
        name=name,
        description=(f"CONV_2D {kh}x{kw} stride {sh}x{sw} {pad} dilation {dil}, input "
                     f"{n}x{h}x{w}x{cin} -> {cout} channels, {bias_txt}, fused {act}. {desc}").strip(),
        build=build,
        expect_ops=["CONV_2D"],
        expect_options={0: {"padding": pad, "strideH": sh, "strideW": sw,
                            "dilationHFactor": dil, "dilationWFactor": dil,
                            "fusedActivationFunction": act}},
        expect_const_inputs={0: [1, 2]},
        input_dist=("uniform", -1.0, 1.0),
    ))


add_conv("conv2d_k1x1_s1_valid_8x8_c8to17", h=8, w=8, cin=8, cout=17, kh=1, kw=1, pad="VALID")
add_conv("conv2d_k3x3_s1_same_7x7_c3to8_relu", h=7, w=7, cin=3, cout=8, kh=3, kw=3, act="RELU")
add_conv("conv2d_k3x3_s2_same_7x7_c8to8_relu6", h=7, w=7, cin=8, cout=8, kh=3, kw=3, sh=2, sw=2,
         act="RELU6")
add_conv("conv2d_k3x3_s2_same_8x8_c3to8", h=8, w=8, cin=3, cout=8, kh=3, kw=3, sh=2, sw=2)
add_conv("conv2d_k3x3_s2_valid_9x9_c8to3", h=9, w=9, cin=8, cout=3, kh=3, kw=3, sh=2, sw=2, pad="VALID")
add_conv("conv2d_k3x3_s2_valid_8x8_c3to8_relu", h=8, w=8, cin=3, cout=8, kh=3, kw=3, sh=2, sw=2,
         pad="VALID", act="RELU")
add_conv("conv2d_k3x3_s1_valid_7x7_c17to8", h=7, w=7, cin=17, cout=8, kh=3, kw=3, pad="VALID")
add_conv("conv2d_k3x3_s1_same_6x6_c17to3_relu_n1_to_1", h=6, w=6, cin=17, cout=3, kh=3, kw=3,
         act="RELU_N1_TO_1", desc="tf.clip_by_value(y,-1,1) fused as RELU_N1_TO_1.")
add_conv("conv2d_k5x5_s1_same_9x6_c1to8", h=9, w=6, cin=1, cout=8, kh=5, kw=5)
add_conv("conv2d_k5x5_s2_valid_9x6_c3to8_relu6", h=9, w=6, cin=3, cout=8, kh=5, kw=5, sh=2, sw=2,
         pad="VALID", act="RELU6")
add_conv("conv2d_k5x5_s2_same_8x8_c8to1", h=8, w=8, cin=8, cout=1, kh=5, kw=5, sh=2, sw=2)
add_conv("conv2d_k3x1_s1_same_7x7_c8to8", h=7, w=7, cin=8, cout=8, kh=3, kw=1)
add_conv("conv2d_k1x5_s1_valid_7x9_c3to8", h=7, w=9, cin=3, cout=8, kh=1, kw=5, pad="VALID")
add_conv("conv2d_k2x3_s2x1_same_8x7_c3to8", h=8, w=7, cin=3, cout=8, kh=2, kw=3, sh=2, sw=1,
         desc="Even kernel height with SAME: asymmetric padding; stride_h != stride_w.")
add_conv("conv2d_k3x3_s1x2_valid_9x9_c8to3_relu", h=9, w=9, cin=8, cout=3, kh=3, kw=3, sh=1, sw=2,
         pad="VALID", act="RELU")
add_conv("conv2d_k2x2_s2_same_7x7_c8to8", h=7, w=7, cin=8, cout=8, kh=2, kw=2, sh=2, sw=2)
add_conv("conv2d_k3x3_s1_same_9x9_c8to8_dilation2_relu6", h=9, w=9, cin=8, cout=8, kh=3, kw=3, dil=2,
         act="RELU6")
add_conv("conv2d_k3x3_s1_valid_9x9_c3to8_dilation2", h=9, w=9, cin=3, cout=8, kh=3, kw=3, dil=2,
         pad="VALID")
add_conv("conv2d_k3x3_s1_same_7x7_c8to8_nobias", h=7, w=7, cin=8, cout=8, kh=3, kw=3, use_bias=False)
add_conv("conv2d_k3x3_s1_same_6x6_c3to8_batch2_relu", n=2, h=6, w=6, cin=3, cout=8, kh=3, kw=3,
         act="RELU")
add_conv("conv2d_k1x1_s2_valid_8x8_c17to17_batch2_nobias", n=2, h=8, w=8, cin=17, cout=17, kh=1,
         kw=1, sh=2, sw=2, pad="VALID", use_bias=False)


# ---------------------------------------------------------------------------
# DEPTHWISE_CONV_2D
# ---------------------------------------------------------------------------


def add_dw(name, *, n=1, h, w, c, mult=1, k, sh=1, sw=1, pad="SAME", dil=1, act="NONE", desc=""):
    gain = ACT_GAIN[act]
    kh, kw = (k, k) if isinstance(k, int) else k

    def build(rng):
        W = dw_weights(rng, kh, kw, c, mult, gain)
        b = bias(rng, c * mult)

        def f(x):
            y = tf.nn.depthwise_conv2d(x, W, strides=[1, sh, sw, 1], padding=pad,
                                       dilations=[dil, dil])
            return ACT_FN[act](tf.nn.bias_add(y, b))

        return f, [(n, h, w, c)]

    add(Case(
        name=name,
        description=(f"DEPTHWISE_CONV_2D {kh}x{kw} stride {sh}x{sw} {pad} dilation {dil}, input "
                     f"{n}x{h}x{w}x{c}, depth multiplier {mult}, bias, fused {act}. {desc}").strip(),
        build=build,
        expect_ops=["DEPTHWISE_CONV_2D"],
        expect_options={0: {"padding": pad, "strideH": sh, "strideW": sw, "depthMultiplier": mult,
                            "dilationHFactor": dil, "dilationWFactor": dil,
                            "fusedActivationFunction": act}},
        expect_const_inputs={0: [1, 2]},
    ))


add_dw("dwconv_k3x3_s1_same_7x7_c3", h=7, w=7, c=3, k=3)
add_dw("dwconv_k3x3_s1_valid_8x8_c16_relu6", h=8, w=8, c=16, k=3, pad="VALID", act="RELU6")
add_dw("dwconv_k3x3_s2_same_8x8_c16_relu6", h=8, w=8, c=16, k=3, sh=2, sw=2, act="RELU6")
add_dw("dwconv_k3x3_s2_same_9x9_c35", h=9, w=9, c=35, k=3, sh=2, sw=2)
add_dw("dwconv_k3x3_s2_valid_9x9_c35_relu", h=9, w=9, c=35, k=3, sh=2, sw=2, pad="VALID", act="RELU")
add_dw("dwconv_k3x3_s2_valid_8x8_c8", h=8, w=8, c=8, k=3, sh=2, sw=2, pad="VALID")
add_dw("dwconv_k5x5_s1_same_9x6_c16", h=9, w=6, c=16, k=5)
add_dw("dwconv_k5x5_s2_same_7x7_c35_relu6", h=7, w=7, c=35, k=5, sh=2, sw=2, act="RELU6")
add_dw("dwconv_k5x5_s2_valid_9x9_c3", h=9, w=9, c=3, k=5, sh=2, sw=2, pad="VALID")
add_dw("dwconv_k3x3_s1_same_9x9_c8_dilation2", h=9, w=9, c=8, k=3, dil=2)
add_dw("dwconv_k3x3_s1_valid_9x9_c16_dilation2_relu6", h=9, w=9, c=16, k=3, dil=2, pad="VALID",
       act="RELU6")
add_dw("dwconv_k3x3_s1_same_7x7_c3_dm2", h=7, w=7, c=3, mult=2, k=3)
add_dw("dwconv_k3x3_s2_valid_8x8_c8_dm2_relu6", h=8, w=8, c=8, mult=2, k=3, sh=2, sw=2, pad="VALID",
       act="RELU6")
add_dw("dwconv_k5x5_s1_same_6x6_c17_dm2", h=6, w=6, c=17, mult=2, k=5)
add_dw("dwconv_k3x3_s2x1_same_8x7_c16", h=8, w=7, c=16, k=3, sh=2, sw=1,
       desc="stride_h != stride_w.")
add_dw("dwconv_k3x3_s1_same_6x6_c8_batch2", n=2, h=6, w=6, c=8, k=3)


# ---------------------------------------------------------------------------
# Pools
# ---------------------------------------------------------------------------


def add_pool(name, *, kind, h, w, c=8, k, s, pad, n=1, desc=""):
    op = {"avg": "AVERAGE_POOL_2D", "max": "MAX_POOL_2D"}[kind]

    def build(rng):
        fn = tf.nn.avg_pool2d if kind == "avg" else tf.nn.max_pool2d
        kk = [k, k] if isinstance(k, int) else list(k)
        ss = [s, s] if isinstance(s, int) else list(s)
        return (lambda x: fn(x, ksize=kk, strides=ss, padding=pad)), [(n, h, w, c)]

    kh, kw = (k, k) if isinstance(k, int) else k
    sh, sw = (s, s) if isinstance(s, int) else s
    add(Case(
        name=name,
        description=f"{op} {kh}x{kw} stride {sh}x{sw} {pad} on {n}x{h}x{w}x{c}. {desc}".strip(),
        build=build,
        expect_ops=[op],
        expect_options={0: {"padding": pad, "filterHeight": kh, "filterWidth": kw,
                            "strideH": sh, "strideW": sw, "fusedActivationFunction": "NONE"}},
    ))


for kind in ("avg", "max"):
    add_pool(f"{kind}pool_2x2_s2_valid_8x8", kind=kind, h=8, w=8, k=2, s=2, pad="VALID")
    add_pool(f"{kind}pool_2x2_s2_same_7x7", kind=kind, h=7, w=7, k=2, s=2, pad="SAME")
    add_pool(f"{kind}pool_3x3_s2_same_7x7", kind=kind, h=7, w=7, k=3, s=2, pad="SAME",
             desc="Odd size with SAME: border windows are partial.")
    add_pool(f"{kind}pool_3x3_s2_valid_9x9", kind=kind, h=9, w=9, k=3, s=2, pad="VALID")
    add_pool(f"{kind}pool_3x3_s1_same_7x7", kind=kind, h=7, w=7, k=3, s=1, pad="SAME")
    add_pool(f"{kind}pool_global_7x7", kind=kind, h=7, w=7, c=16, k=7, s=1, pad="VALID",
             desc="Window covers the whole feature map (global pooling).")
    add_pool(f"{kind}pool_3x2_s2x1_same_6x5_batch2", kind=kind, n=2, h=6, w=5, k=(3, 2), s=(2, 1),
             pad="SAME", desc="Non-square window and strides.")


# ---------------------------------------------------------------------------
# MEAN
# ---------------------------------------------------------------------------


def add_mean(name, shape, axes, keepdims):
    add(Case(
        name=name,
        description=f"MEAN over axes {axes} keep_dims={keepdims} on {shape}.",
        build=lambda rng: ((lambda x: tf.reduce_mean(x, axis=axes, keepdims=keepdims)), [shape]),
        expect_ops=["MEAN"],
        expect_options={0: {"keepDims": keepdims}},
        expect_const_inputs={0: [1]},
    ))


add_mean("mean_axes12_keepdims_1x7x7x8", (1, 7, 7, 8), [1, 2], True)
add_mean("mean_axes12_1x5x6x16", (1, 5, 6, 16), [1, 2], False)
add_mean("mean_axes12_keepdims_2x4x4x3", (2, 4, 4, 3), [1, 2], True)
add_mean("mean_axis1_2x5x7", (2, 5, 7), [1], False)
add_mean("mean_axis_last_keepdims_2x5x7", (2, 5, 7), [-1], True)


# ---------------------------------------------------------------------------
# FULLY_CONNECTED
# ---------------------------------------------------------------------------


def add_fc(name, *, in_shape, units, use_bias=True, act="NONE", keep_num_dims=False, keras=False,
           desc=""):
    cin = in_shape[-1]

    def build(rng):
        Wm = tf.constant(uniform_std(rng, (cin, units), ACT_GAIN[act] / np.sqrt(cin)))
        b = bias(rng, units) if use_bias else None
        if keras:
            import tf_keras

            layer = tf_keras.layers.Dense(units, use_bias=use_bias)
            layer.build(tuple(in_shape))
            layer.set_weights([Wm.numpy()] + ([b.numpy()] if use_bias else []))
            return (lambda x: ACT_FN[act](layer(x))), [tuple(in_shape)]

        def f(x):
            y = tf.matmul(x, Wm)
            if b is not None:
                y = y + b
            return ACT_FN[act](y)

        return f, [tuple(in_shape)]

    add(Case(
        name=name,
        description=(f"FULLY_CONNECTED input {'x'.join(map(str, in_shape))} -> {units} units, "
                     f"{'bias' if use_bias else 'no bias (optional input -1)'}, fused {act}, "
                     f"keep_num_dims={keep_num_dims}. {desc}").strip(),
        build=build,
        expect_ops=["FULLY_CONNECTED"],
        expect_options={0: {"fusedActivationFunction": act, "keepNumDims": keep_num_dims}},
        expect_const_inputs={0: [1, 2] if use_bias else [1]},
    ))


add_fc("fully_connected_1x16_to10_bias", in_shape=(1, 16), units=10)
add_fc("fully_connected_3x16_to7_nobias", in_shape=(3, 16), units=7, use_bias=False)
add_fc("fully_connected_3x20_to5_bias_relu", in_shape=(3, 20), units=5, act="RELU")
add_fc("fully_connected_1x33_to17_nobias_relu6", in_shape=(1, 33), units=17, use_bias=False,
       act="RELU6")
add_fc("fully_connected_keep_num_dims_2x3x8_to5_keras_dense", in_shape=(2, 3, 8), units=5,
       keep_num_dims=True, keras=True, desc="tf_keras Dense layer applied to a rank-3 input.")
add_fc("fully_connected_keep_num_dims_2x3x8_to6_nobias", in_shape=(2, 3, 8), units=6,
       use_bias=False, keep_num_dims=True, desc="tf.matmul of a rank-3 input by a constant.")


# ---------------------------------------------------------------------------
# SOFTMAX
# ---------------------------------------------------------------------------


def patch_softmax_beta(beta):
    def patch(model_bytes):
        model = G.parse_model(model_bytes)
        (op,) = model.subgraphs[0].operators
        op.builtinOptions.beta = float(beta)
        return G.serialize_model(model)

    return patch


def _np_softmax(v):
    v = np.asarray(v, np.float64)
    e = np.exp(v - v.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def add_softmax(name, shape, beta=1.0):
    patched = beta != 1.0
    add(Case(
        name=name,
        description=(f"SOFTMAX beta={beta} over the last axis of {shape}."
                     + (" The converter never emits beta != 1 (tf.nn.softmax(x*b) stays MUL + "
                        "SOFTMAX), so SoftmaxOptions.beta of the converted tf.nn.softmax model is "
                        "rewritten in the flatbuffer; LiteRT computes the golden." if patched else "")),
        build=lambda rng: ((lambda x: tf.nn.softmax(x)), [shape]),
        expect_ops=["SOFTMAX"],
        expect_options={0: {"beta": np.float32(beta)}},
        input_dist=("normal", 3.0),
        patch=patch_softmax_beta(beta) if patched else None,
        numpy_ref=(lambda xs: [_np_softmax(xs[0] * np.float64(beta))]) if patched else None,
    ))


add_softmax("softmax_1x10", (1, 10))
add_softmax("softmax_2x5x7", (2, 5, 7))
add_softmax("softmax_beta0p5_1x10", (1, 10), beta=0.5)
add_softmax("softmax_beta2_2x5x7", (2, 5, 7), beta=2.0)


# ---------------------------------------------------------------------------
# Element-wise activations
# ---------------------------------------------------------------------------


def add_act(name, op, fn, dist, shape=(1, 5, 5, 7), expect_options=None, desc=""):
    add(Case(
        name=name,
        description=f"{op} on {shape}, input {dist}. {desc}".strip(),
        build=lambda rng: (fn, [shape]),
        expect_ops=[op],
        expect_options={0: expect_options} if expect_options else {},
        input_dist=dist,
    ))


add_act("logistic_1x5x5x7", "LOGISTIC", tf.math.sigmoid, ("uniform", -8.0, 8.0))
add_act("tanh_1x5x5x7", "TANH", tf.math.tanh, ("uniform", -4.0, 4.0))
add_act("relu_1x5x5x7", "RELU", tf.nn.relu, ("uniform", -2.0, 2.0))
add_act("relu6_1x5x5x7", "RELU6", tf.nn.relu6, ("uniform", -8.0, 8.0))
add_act("relu_n1_to_1_1x5x5x7", "RELU_N1_TO_1", lambda x: tf.clip_by_value(x, -1.0, 1.0),
        ("uniform", -2.0, 2.0), desc="From tf.clip_by_value(x, -1, 1).")
add_act("leaky_relu_alpha0p2_1x5x5x7", "LEAKY_RELU", lambda x: tf.nn.leaky_relu(x, alpha=0.2),
        ("uniform", -2.0, 2.0), expect_options={"alpha": np.float32(0.2)})
add_act("hard_swish_1x5x5x7", "HARD_SWISH", lambda x: x * tf.nn.relu6(x + 3.0) / 6.0,
        ("uniform", -5.0, 5.0), desc="From x*relu6(x+3)/6 (tf.keras hard_swish).")
add_act("logistic_2x33", "LOGISTIC", tf.math.sigmoid, ("normal", 4.0), shape=(2, 33))
add_act("hard_swish_2x33", "HARD_SWISH", lambda x: x * tf.nn.relu6(x + 3.0) / 6.0,
        ("normal", 3.0), shape=(2, 33))


# ---------------------------------------------------------------------------
# ADD / SUB / MUL
# ---------------------------------------------------------------------------

BINARY = {"ADD": tf.add, "SUB": tf.subtract, "MUL": tf.multiply}


def add_binary(name, op, a_shape, b_shape, *, b_const=False, const_first=False, act="NONE",
               desc=""):
    tf_fn = BINARY[op]

    def build(rng):
        if b_const:
            cval = tf.constant(rng.uniform(-1.0, 1.0, size=b_shape).astype(np.float32))
            if const_first:
                return (lambda x: ACT_FN[act](tf_fn(cval, x))), [a_shape]
            return (lambda x: ACT_FN[act](tf_fn(x, cval))), [a_shape]
        return (lambda x, y: ACT_FN[act](tf_fn(x, y))), [a_shape, b_shape]

    if b_const:
        operands = (f"constant {b_shape} {op.lower()} runtime {a_shape}" if const_first
                    else f"runtime {a_shape} {op.lower()} constant {b_shape}")
        const_pos = [0] if const_first else [1]
        runtime_pos = [1] if const_first else [0]
    else:
        operands = f"runtime {a_shape} {op.lower()} runtime {b_shape}"
        const_pos, runtime_pos = [], [0, 1]
    add(Case(
        name=name,
        description=f"{op}: {operands}, fused {act}. {desc}".strip(),
        build=build,
        expect_ops=[op],
        expect_options={0: {"fusedActivationFunction": act}},
        expect_runtime_inputs={0: runtime_pos},
        expect_const_inputs={0: const_pos},
        input_dist=("uniform", -2.0, 2.0) if act == "NONE" else ("uniform", -4.0, 4.0),
    ))


for op in ("ADD", "SUB", "MUL"):
    lo = op.lower()
    add_binary(f"{lo}_same_shape_1x4x4x3", op, (1, 4, 4, 3), (1, 4, 4, 3))
    add_binary(f"{lo}_bcast_1x4x4x3_const_3", op, (1, 4, 4, 3), (3,), b_const=True)
    add_binary(f"{lo}_bcast_1x4x4x3_1x1x1x3", op, (1, 4, 4, 3), (1, 1, 1, 3))
    add_binary(f"{lo}_bcast_2x1x5_1x3x1", op, (2, 1, 5), (1, 3, 1))
    add_binary(f"{lo}_bcast_1x4x4x3_1x4x1x1", op, (1, 4, 4, 3), (1, 4, 1, 1))
    add_binary(f"{lo}_bcast_1x4x4x3_3", op, (1, 4, 4, 3), (3,))
add_binary("add_same_shape_2x3x5_relu", "ADD", (2, 3, 5), (2, 3, 5), act="RELU")
add_binary("add_bcast_1x4x4x3_const_1x1x1x3_relu6", "ADD", (1, 4, 4, 3), (1, 1, 1, 3), b_const=True,
           act="RELU6")
add_binary("sub_bcast_1x4x4x3_1x4x1x1_relu", "SUB", (1, 4, 4, 3), (1, 4, 1, 1), act="RELU")
add_binary("sub_const_lhs_1x1x1x3_minus_1x4x4x3", "SUB", (1, 4, 4, 3), (1, 1, 1, 3), b_const=True,
           const_first=True, desc="Constant is the first operand.")
add_binary("mul_bcast_2x1x5_1x3x1_relu6", "MUL", (2, 1, 5), (1, 3, 1), act="RELU6")
add_binary("mul_same_shape_1x4x4x3_relu", "MUL", (1, 4, 4, 3), (1, 4, 4, 3), act="RELU")
add_binary("mul_const_scalar_1x4x4x3", "MUL", (1, 4, 4, 3), (), b_const=True,
           desc="Rank-0 constant operand.")
add_binary("add_bcast_rank1_5_to_2x3x5", "ADD", (5,), (2, 3, 5),
           desc="Lower-rank first operand broadcast against a rank-3 second operand.")


# ---------------------------------------------------------------------------
# CONCATENATION
# ---------------------------------------------------------------------------


def add_concat(name, shapes, axis, const_index=None, desc=""):
    def build(rng):
        if const_index is None:
            return (lambda *xs: tf.concat(list(xs), axis=axis)), list(shapes)
        cval = tf.constant(rng.uniform(-1, 1, size=shapes[const_index]).astype(np.float32))
        rt = [s for i, s in enumerate(shapes) if i != const_index]

        def f(*xs):
            parts = list(xs)
            parts.insert(const_index, cval)
            return tf.concat(parts, axis=axis)

        return f, rt

    add(Case(
        name=name,
        description=f"CONCATENATION axis {axis} of {shapes}. {desc}".strip(),
        build=build,
        expect_ops=["CONCATENATION"],
        # The converter keeps the axis as written (negative axes stay negative).
        expect_options={0: {"axis": axis, "fusedActivationFunction": "NONE"}},
    ))


add_concat("concat_axis_m1_2in_1x4x4x3_1x4x4x5", [(1, 4, 4, 3), (1, 4, 4, 5)], -1)
add_concat("concat_axis_m1_3in_1x3x3x2_1x3x3x1_1x3x3x4", [(1, 3, 3, 2), (1, 3, 3, 1), (1, 3, 3, 4)], -1)
add_concat("concat_axis1_2in_1x3x4x2_1x2x4x2", [(1, 3, 4, 2), (1, 2, 4, 2)], 1)
add_concat("concat_axis1_3in_2x1x5_2x3x5_2x2x5", [(2, 1, 5), (2, 3, 5), (2, 2, 5)], 1)
add_concat("concat_axis0_3in_1x3_2x3_1x3", [(1, 3), (2, 3), (1, 3)], 0)
add_concat("concat_axis0_2in_2x2x3_1x2x3", [(2, 2, 3), (1, 2, 3)], 0)
add_concat("concat_axis_m1_const_middle_1x2x2x3", [(1, 2, 2, 3), (1, 2, 2, 2), (1, 2, 2, 1)], -1,
           const_index=1, desc="Middle operand is a constant.")


# ---------------------------------------------------------------------------
# RESHAPE / SQUEEZE / PAD / PACK / STRIDED_SLICE
# ---------------------------------------------------------------------------


def add_reshape(name, in_shape, new_shape, expect_shape_const, desc=""):
    def check(model_bytes):
        val = G.const_tensor_value(model_bytes, 0, 1)
        if val is None or list(val) != list(expect_shape_const):
            raise AssertionError(f"{name}: shape operand is {val}, expected {expect_shape_const}")

    add(Case(
        name=name,
        description=f"RESHAPE {in_shape} -> {new_shape} (constant shape operand {expect_shape_const}). {desc}".strip(),
        build=lambda rng: ((lambda x: tf.reshape(x, new_shape)), [in_shape]),
        expect_ops=["RESHAPE"],
        expect_const_inputs={0: [1]},
        model_check=check,
    ))


add_reshape("reshape_minus1_1x4x4x3_to_2xm1", (1, 4, 4, 3), [2, -1], [2, -1])
add_reshape("reshape_1x2x3x4_to_6x4", (1, 2, 3, 4), [6, 4], [6, 4])
add_reshape("reshape_2x12_to_m1x3x2x2", (2, 12), [-1, 3, 2, 2], [-1, 3, 2, 2])


def patch_reshape_to_squeeze(squeeze_dims):
    """Rewrites the single RESHAPE op into SQUEEZE(squeeze_dims), dropping the shape operand."""
    from ai_edge_litert import schema_py_generated as schema

    def patch(model_bytes):
        model = G.parse_model(model_bytes)
        sg = model.subgraphs[0]
        (op,) = sg.operators
        code = schema.OperatorCodeT()
        code.builtinCode = schema.BuiltinOperator.SQUEEZE
        code.deprecatedBuiltinCode = schema.BuiltinOperator.SQUEEZE
        code.version = 1
        model.operatorCodes = [code]
        op.opcodeIndex = 0
        op.inputs = np.array([op.inputs[0]], dtype=np.int32)
        opts = schema.SqueezeOptionsT()
        opts.squeezeDims = list(squeeze_dims)
        op.builtinOptionsType = schema.BuiltinOptions.SqueezeOptions
        op.builtinOptions = opts
        return G.serialize_model(model)

    return patch


def add_squeeze(name, in_shape, dims):
    add(Case(
        name=name,
        description=(f"SQUEEZE squeeze_dims={dims} on {in_shape}. The converter turns tf.squeeze with "
                     "static shapes into RESHAPE, so the converted RESHAPE is rewritten into SQUEEZE "
                     "(options squeeze_dims, shape operand removed); LiteRT computes the golden."),
        build=lambda rng: ((lambda x: tf.squeeze(x, axis=dims if dims else None)), [in_shape]),
        expect_ops=["SQUEEZE"],
        expect_options={0: {"squeezeDims": list(dims)}},
        patch=patch_reshape_to_squeeze(dims),
        numpy_ref=lambda xs: [np.squeeze(xs[0], axis=tuple(dims) if dims else None)],
    ))


add_squeeze("squeeze_dims_0_2_1x4x1x3", (1, 4, 1, 3), [0, 2])
add_squeeze("squeeze_dims_m1_2x3x1", (2, 3, 1), [-1])
add_squeeze("squeeze_all_1x3x1x1x2", (1, 3, 1, 1, 2), [])


def add_pad(name, in_shape, paddings, desc=""):
    def check(model_bytes):
        val = G.const_tensor_value(model_bytes, 0, 1)
        if val is None or val.tolist() != paddings:
            raise AssertionError(f"{name}: paddings operand {val}")

    add(Case(
        name=name,
        description=f"PAD {in_shape} with constant paddings {paddings} (zeros). {desc}".strip(),
        build=lambda rng: ((lambda x: tf.pad(x, paddings)), [in_shape]),
        expect_ops=["PAD"],
        expect_const_inputs={0: [1]},
        model_check=check,
    ))


add_pad("pad_spatial_1x5x5x3_1_1", (1, 5, 5, 3), [[0, 0], [1, 1], [1, 1], [0, 0]])
add_pad("pad_spatial_asymmetric_1x4x5x3", (1, 4, 5, 3), [[0, 0], [0, 1], [2, 1], [0, 0]])
add_pad("pad_all_dims_1x3x3x2", (1, 3, 3, 2), [[1, 0], [0, 2], [1, 1], [0, 3]])
add_pad("pad_rank2_3x4", (3, 4), [[2, 1], [0, 3]])


def add_pack(name, shapes, axis):
    add(Case(
        name=name,
        description=f"PACK (tf.stack) of {len(shapes)} tensors {shapes[0]} along axis {axis}.",
        build=lambda rng: ((lambda *xs: tf.stack(list(xs), axis=axis)), list(shapes)),
        expect_ops=["PACK"],
        expect_options={0: {"valuesCount": len(shapes), "axis": axis}},
    ))


add_pack("pack_axis0_2in_3x4", [(3, 4)] * 2, 0)
add_pack("pack_axis1_3in_2x3", [(2, 3)] * 3, 1)
add_pack("pack_axis_m1_2in_2x2x3", [(2, 2, 3)] * 2, -1)


def add_ss(name, in_shape, fn, expr, options):
    add(Case(
        name=name,
        description=f"STRIDED_SLICE x{expr} on {in_shape}.",
        build=lambda rng: (fn, [in_shape]),
        expect_ops=["STRIDED_SLICE"],
        expect_options={0: options},
        expect_const_inputs={0: [1, 2, 3]},
    ))


add_ss("strided_slice_masks_shrink_1x5x6x3", (1, 5, 6, 3), lambda x: x[:, 1:, ::2, 0],
       "[:, 1:, ::2, 0]", {"beginMask": 5, "endMask": 7, "shrinkAxisMask": 8})
add_ss("strided_slice_negative_stride_1x5x6x3", (1, 5, 6, 3), lambda x: x[:, ::-1, 1:5:2, :],
       "[:, ::-1, 1:5:2, :]", {"beginMask": 11, "endMask": 11, "shrinkAxisMask": 0})
add_ss("strided_slice_negative_indices_1x4x4x3", (1, 4, 4, 3), lambda x: x[:, -3:-1, :, 1:],
       "[:, -3:-1, :, 1:]", {"beginMask": 5, "endMask": 13, "shrinkAxisMask": 0})
add_ss("strided_slice_step3_shrink0_2x7x5", (2, 7, 5), lambda x: x[1, 0:7:3, 4:0:-2],
       "[1, 0:7:3, 4:0:-2]", {"shrinkAxisMask": 1})


# ---------------------------------------------------------------------------
# RESIZE_BILINEAR
# ---------------------------------------------------------------------------


def add_resize(name, in_shape, size, align_corners, half_pixel):
    add(Case(
        name=name,
        description=(f"RESIZE_BILINEAR {in_shape} -> {size}, align_corners={align_corners}, "
                     f"half_pixel_centers={half_pixel}."),
        build=lambda rng: ((lambda x: tf.compat.v1.image.resize_bilinear(
            x, size, align_corners=align_corners, half_pixel_centers=half_pixel)), [in_shape]),
        expect_ops=["RESIZE_BILINEAR"],
        expect_options={0: {"alignCorners": align_corners, "halfPixelCenters": half_pixel}},
        expect_const_inputs={0: [1]},
    ))


add_resize("resize_bilinear_up_4x5_to_7x9", (1, 4, 5, 3), [7, 9], False, False)
add_resize("resize_bilinear_up_4x5_to_7x9_align_corners", (1, 4, 5, 3), [7, 9], True, False)
add_resize("resize_bilinear_up_4x5_to_7x9_half_pixel", (1, 4, 5, 3), [7, 9], False, True)
add_resize("resize_bilinear_up2x_4x4_to_8x8_half_pixel", (1, 4, 4, 8), [8, 8], False, True)
add_resize("resize_bilinear_up2x_4x4_to_8x8_align_corners", (1, 4, 4, 8), [8, 8], True, False)
add_resize("resize_bilinear_down_8x9_to_3x4", (1, 8, 9, 3), [3, 4], False, False)
add_resize("resize_bilinear_down_8x9_to_3x4_align_corners", (1, 8, 9, 3), [3, 4], True, False)
add_resize("resize_bilinear_down_8x9_to_3x4_half_pixel", (1, 8, 9, 3), [3, 4], False, True)
add_resize("resize_bilinear_mixed_5x8_to_9x3_batch2_half_pixel", (2, 5, 8, 2), [9, 3], False, True)


# ---------------------------------------------------------------------------
# DEQUANTIZE (weights stored as float16 / int8 constants)
# ---------------------------------------------------------------------------


def fp16_weights(conv):
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.target_spec.supported_types = [tf.float16]


def legacy_int8_weight_only(conv):
    # Dynamic-range quantization with the legacy (non-MLIR) weight quantizer and
    # per-channel disabled: DEPTHWISE_CONV_2D then has no hybrid kernel, so the
    # quantizer stores the filter as a per-tensor symmetric int8 constant and
    # inserts DEQUANTIZE in front of the float DEPTHWISE_CONV_2D. (Filters with
    # fewer than 1024 elements are left in float32.)
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.experimental_new_dynamic_range_quantizer = False
    conv._experimental_disable_per_channel = True


def _conv_fp16_build(rng):
    W = conv_weights(rng, 3, 3, 8, 8)
    b = bias(rng, 8)
    return (lambda x: tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, W, 1, "SAME"), b))), [(1, 7, 7, 8)]


add(Case(
    name="dequantize_fp16_weights_conv2d_k3x3_7x7_c8to8_relu",
    description=("CONV_2D 3x3 SAME with float16 weights and bias (converter float16 weight "
                 "quantization): DEQUANTIZE(fp16 constant) -> float32 CONV_2D with fused RELU."),
    build=_conv_fp16_build,
    expect_ops=["DEQUANTIZE", "DEQUANTIZE", "CONV_2D"],
    expect_options={2: {"fusedActivationFunction": "RELU"}},
    expect_const_inputs={0: [0], 1: [0]},
    converter_setup=fp16_weights,
))


def _dw_int8_build(rng):
    W = dw_weights(rng, 3, 3, 128, 1)
    b = bias(rng, 128)
    return (lambda x: tf.nn.bias_add(tf.nn.depthwise_conv2d(x, W, [1, 1, 1, 1], "SAME"), b)), \
        [(1, 4, 4, 128)]


add(Case(
    name="dequantize_int8_weights_dwconv_k3x3_4x4_c128",
    description=("DEPTHWISE_CONV_2D 3x3 SAME, 128 channels, whose filter is stored as a per-tensor "
                 "symmetric int8 constant (legacy dynamic-range weight quantizer, per-channel "
                 "disabled): DEQUANTIZE(int8 constant) -> float32 DEPTHWISE_CONV_2D."),
    build=_dw_int8_build,
    expect_ops=["DEQUANTIZE", "DEPTHWISE_CONV_2D"],
    expect_const_inputs={0: [0]},
    converter_setup=legacy_int8_weight_only,
))


# ---------------------------------------------------------------------------
# Whole networks
# ---------------------------------------------------------------------------


def healthy_network(model, input_shape, calib_dist, seed):
    """Random BatchNorm affine params, then BN moving stats set to the batch
    statistics of a seeded random calibration batch (data-dependent init), so
    that every layer sees roughly normalized activations and the logits are
    neither vanishing nor exploding."""
    import tf_keras

    rng = np.random.default_rng(seed)
    bns = [l for l in model.layers if isinstance(l, tf_keras.layers.BatchNormalization)]
    for l in bns:
        gamma, beta, mean, var = l.get_weights()
        l.set_weights([rng.uniform(0.6, 1.4, gamma.shape).astype(np.float32),
                       rng.uniform(-0.3, 0.3, beta.shape).astype(np.float32), mean, var])
        l.momentum = 0.0
    calib = draw(rng, (8,) + tuple(input_shape), calib_dist)
    model(calib, training=True)  # momentum 0: moving stats := batch stats
    for l in bns:
        l.momentum = 0.99


NET_COMMON = ("include_top=True, weights=None, classes=10, random weights "
              "(tf_keras.utils.set_random_seed(0)); BatchNorm gamma/beta randomized and moving "
              "stats calibrated on a seeded random batch so activations stay healthy. Built with "
              "classifier_activation=None and tf.nn.softmax applied on top, so the model has two "
              "outputs: the softmax probabilities and the logits (the tensor feeding SOFTMAX).")


# The bound, 1e-5 relative to max(1, max|x|), holds for whole networks too: SwiftLite
# measured 2.8e-6 (v1), 6.4e-6 (v2) and 1.4e-6 (v3 small) against these fixtures.
NET_TOLERANCE = 1e-5
NET_TOLERANCE_REASON = None


def add_net(name, factory, input_hw, dist, arch_desc):
    fp16 = name in FP16_WEIGHT_NETWORKS

    def build(rng):
        import tf_keras

        tf_keras.utils.set_random_seed(0)
        model = factory(tf_keras)
        healthy_network(model, (*input_hw, 3), dist, G.seed_for(name, "calib"))

        def f(x):
            logits = model(x, training=False)
            return tf.nn.softmax(logits), logits

        return f, [(1, *input_hw, 3)], model

    weights_desc = (" Weights stored as float16 (converter float16 weight quantization: DEQUANTIZE "
                    "of fp16 constants, float32 arithmetic) to fit the fixture size budget."
                    if fp16 else " float32 weights.")
    lo, hi = dist[1], dist[2]
    add(Case(
        name=name,
        description=f"{arch_desc}, {NET_COMMON}{weights_desc} Input uniform [{lo:g}, {hi:g}].",
        build=build,
        expect_ops=None,  # whatever the network converts to; recorded in the manifest
        input_dist=dist,
        converter_setup=fp16_weights if fp16 else None,
        post_check=check_softmax_logits,
        tolerance=NET_TOLERANCE,
        tolerance_reason=NET_TOLERANCE_REASON,
    ))


def check_softmax_logits(case, outputs):
    """Finds which output is the softmax of the other; returns a description note."""
    def softmax(v):
        e = np.exp(v.astype(np.float64) - v.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    for p_idx, l_idx in ((0, 1), (1, 0)):
        probs, logits = outputs[p_idx], outputs[l_idx]
        if np.allclose(probs, softmax(logits), atol=1e-6):
            break
    else:
        raise AssertionError(f"{case.name}: no output is the softmax of the other")
    if probs.max() > 0.99 or np.ptp(probs) < 0.02:
        raise AssertionError(f"{case.name}: degenerate probabilities {probs}")
    return f"In subgraph output order: output_{p_idx} = probabilities, output_{l_idx} = logits."


add_net(
    "net_mobilenet_v1_025_128",
    lambda K: K.applications.MobileNet(input_shape=(128, 128, 3), alpha=0.25, weights=None,
                                       classes=10, classifier_activation=None),
    (128, 128), ("uniform", -1.0, 1.0),
    "tf_keras.applications.MobileNet alpha=0.25 128x128x3",
)
add_net(
    "net_mobilenet_v2_035_96",
    lambda K: K.applications.MobileNetV2(input_shape=(96, 96, 3), alpha=0.35, weights=None,
                                         classes=10, classifier_activation=None),
    (96, 96), ("uniform", -1.0, 1.0),
    "tf_keras.applications.MobileNetV2 alpha=0.35 96x96x3",
)
add_net(
    "net_mobilenet_v3_small_96",
    lambda K: K.applications.MobileNetV3Small(input_shape=(96, 96, 3), alpha=1.0,
                                              minimalistic=False, weights=None, classes=10,
                                              classifier_activation=None),
    (96, 96), ("uniform", 0.0, 255.0),
    ("tf_keras.applications.MobileNetV3Small alpha=1.0 minimalistic=False 96x96x3 with "
     "include_preprocessing=True (Rescaling layer, hence input range [0,255])"),
)


# ---------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------


def draw(rng, shape, dist):
    kind = dist[0]
    if kind == "uniform":
        return rng.uniform(dist[1], dist[2], size=shape).astype(np.float32)
    if kind == "normal":
        return (rng.standard_normal(size=shape) * dist[1]).astype(np.float32)
    raise ValueError(dist)


def convert(fn, shapes, setup, trackable=None):
    specs = [tf.TensorSpec(s, tf.float32, name=f"in_{i}") for i, s in enumerate(shapes)]
    module = tf.Module()
    if trackable is not None:
        module.model = trackable  # tracks the variables the function captures
    module.f = tf.function(fn, input_signature=specs, autograph=False)
    cf = module.f.get_concrete_function()
    conv = tf.lite.TFLiteConverter.from_concrete_functions([cf], module)
    if setup is not None:
        setup(conv)
    return conv.convert()


def verify_structure(case: Case, model_bytes: bytes, executed_ops: list) -> None:
    ops = G.describe_ops(model_bytes)
    names = [o["op"] for o in ops]
    if names != executed_ops:
        raise AssertionError(f"{case.name}: flatbuffer ops {names} != executed ops {executed_ops}")
    if case.expect_ops is not None and names != case.expect_ops:
        raise AssertionError(f"{case.name}: converted ops {names}, expected {case.expect_ops}")
    for idx, want in case.expect_options.items():
        have = ops[idx]["options"]
        for k, v in want.items():
            if k not in have or (have[k] != v and not (isinstance(v, float) and np.float32(have[k]) == v)):
                raise AssertionError(f"{case.name}: op {idx} option {k}={have.get(k)!r}, want {v!r}"
                                     f" (all: {have})")
    for idx, positions in case.expect_runtime_inputs.items():
        for p in positions:
            t = ops[idx]["inputs"][p]
            if t is None or t["const"]:
                raise AssertionError(f"{case.name}: op {idx} input {p} should be a runtime tensor")
    for idx, positions in case.expect_const_inputs.items():
        for p in positions:
            t = ops[idx]["inputs"][p]
            if t is None or not t["const"]:
                raise AssertionError(f"{case.name}: op {idx} input {p} should be a constant")
    # Every graph input must feed something non-constant: no case may have been
    # folded into a constant output.
    if not G.input_details(model_bytes):
        raise AssertionError(f"{case.name}: model has no inputs (constant-folded?)")


def check_sane(case: Case, outputs: list) -> None:
    for i, o in enumerate(outputs):
        if o.dtype != np.float32:
            raise AssertionError(f"{case.name}: output {i} dtype {o.dtype}")
        if not np.all(np.isfinite(o)):
            raise AssertionError(f"{case.name}: output {i} has NaN/Inf")
        if o.size > 1 and np.all(o == o.flat[0]):
            raise AssertionError(f"{case.name}: output {i} is constant ({o.flat[0]})")
        if np.all(o == 0):
            raise AssertionError(f"{case.name}: output {i} is all zeros")


# LiteRT reference vs. TensorFlow itself (or numpy for patched models), as a
# sanity check of the goldens; relative to max(1, max|x|). TF runs with oneDNN
# off but may still use a different summation order, hence the loose bound.
CROSS_CHECK_BOUND = 1e-4


def cross_check(case: Case, fn, args, outputs) -> str:
    if case.converter_setup is not None:
        return "tf-check=skipped (weights stored at reduced precision)"
    if case.patch is not None:
        if case.numpy_ref is None:
            raise AssertionError(f"{case.name}: patched model needs numpy_ref")
        expected = case.numpy_ref(args)
        what = "numpy"
    else:
        try:
            res = fn(*[tf.constant(a) for a in args])
        except tf.errors.InvalidArgumentError as e:  # e.g. TF CPU lacks the kernel variant
            return f"tf-check=n/a ({str(e).split('}}')[-1].split('[Op')[0].strip()})"
        res = list(res) if isinstance(res, (tuple, list)) else [res]
        expected = [np.asarray(r) for r in res]
        what = "tf"
    if len(expected) != len(outputs):
        raise AssertionError(f"{case.name}: {what} gives {len(expected)} outputs")
    worst = 0.0
    for out in outputs:
        # match by shape and smallest difference (subgraph output order may differ)
        cands = [e for e in expected if tuple(e.shape) == tuple(out.shape)]
        if not cands:
            raise AssertionError(f"{case.name}: no {what} output with shape {out.shape}")
        scale = max(1.0, float(np.max(np.abs(out))))
        d = min(float(np.max(np.abs(e.astype(np.float64) - out))) for e in cands) / scale
        worst = max(worst, d)
    if worst > CROSS_CHECK_BOUND:
        raise AssertionError(f"{case.name}: LiteRT vs {what} differ by {worst:.3g}")
    return f"{what}-check={worst:.2e}"


def drift_vs_optimized(model_bytes, inputs, ref_outputs):
    """max |optimized - reference| / max(1, max|reference|) over outputs: how much a
    different, correct float implementation (LiteRT's optimized kernels) drifts."""
    opt, _ = G.run_model(model_bytes, inputs, resolver="BUILTIN_WITHOUT_DEFAULT_DELEGATES")
    worst = 0.0
    for a, b in zip(opt, ref_outputs):
        scale = max(1.0, float(np.max(np.abs(b))))
        worst = max(worst, float(np.max(np.abs(a.astype(np.float64) - b))) / scale)
    return worst


def generate(case: Case):
    rng = np.random.default_rng(G.seed_for(case.name, "weights"))
    fn, shapes, *trackable = case.build(rng)
    model_bytes = convert(fn, shapes, case.converter_setup, *trackable)
    if case.patch is not None:
        model_bytes = case.patch(model_bytes)
    if case.model_check is not None:
        case.model_check(model_bytes)

    # Inputs in the subgraph's input order (names are in_<arg index>).
    details = G.input_details(model_bytes)
    in_rng = np.random.default_rng(G.seed_for(case.name, "inputs"))
    dists = case.input_dist if isinstance(case.input_dist, list) else [case.input_dist] * len(shapes)
    by_arg = [draw(in_rng, s, d) for s, d in zip(shapes, dists)]
    inputs = []
    for det in details:
        arg = int(det["name"].split("in_")[-1].split(":")[0])
        inputs.append(by_arg[arg])

    outputs, executed_ops = G.run_model(model_bytes, inputs)
    verify_structure(case, model_bytes, executed_ops)
    check_sane(case, outputs)
    note = case.post_check(case, outputs) if case.post_check is not None else None
    xcheck = cross_check(case, fn, by_arg, outputs)
    # Determinism: a second run must give bit-identical outputs.
    again, _ = G.run_model(model_bytes, inputs)
    for a, b in zip(outputs, again):
        if not np.array_equal(a, b):
            raise AssertionError(f"{case.name}: reference run is not deterministic")
    drift = drift_vs_optimized(model_bytes, inputs, outputs)
    interp = G.make_interpreter(model_bytes)
    io = {"inputs": [{"name": d["name"], "shape": [int(x) for x in d["shape"]],
                      "dtype": np.dtype(d["dtype"]).name} for d in interp.get_input_details()],
          "outputs": [{"name": d["name"], "shape": [int(x) for x in d["shape"]],
                       "dtype": np.dtype(d["dtype"]).name} for d in interp.get_output_details()]}
    return model_bytes, inputs, outputs, G.unique_in_order(executed_ops), drift, note, io, xcheck


def main(argv):
    filters = argv[1:]
    selected = [c for c in CASES if not filters or any(f in c.name for f in filters)]
    G.reset_dir(OUT_DIR)
    manifest_cases = []
    for case in selected:
        model_bytes, inputs, outputs, ops, drift, note, io, xcheck = generate(case)
        G.write_case(OUT_DIR, case.name, model_bytes, inputs, outputs)
        entry = {"name": case.name, "ops": ops, "tolerance": case.tolerance,
                 "description": case.description + (" " + note if note else "")}
        if case.tolerance_reason:
            entry["tolerance_reason"] = case.tolerance_reason
        # Informational: tensor names/shapes of input_<i>.npy / output_<i>.npy
        # (subgraph order, which need not follow the TF function's argument order).
        entry.update(io)
        manifest_cases.append(entry)
        flag = "  <-- drift above tolerance" if drift > case.tolerance else ""
        out_desc = ", ".join(f"{list(o.shape)} range [{o.min():.4g}, {o.max():.4g}]" for o in outputs)
        print(f"{case.name:60s} {len(model_bytes):8d} B  ops={ops}  out={out_desc}  "
              f"ref-vs-optimized={drift:.2e}{flag}  {xcheck}", flush=True)
    G.write_manifest(OUT_DIR, G.origin(GENERATOR), manifest_cases)
    total = G.dir_size(OUT_DIR)
    print(f"\n{len(manifest_cases)} cases written to {OUT_DIR.relative_to(G.REPO_ROOT)}")
    print(f"total fixture size: {total} bytes ({total / 1e6:.3f} MB)")
    if not filters and total > SIZE_BUDGET_BYTES:
        raise SystemExit(f"fixture size {total} exceeds budget {SIZE_BUDGET_BYTES}")


if __name__ == "__main__":
    main(sys.argv)
