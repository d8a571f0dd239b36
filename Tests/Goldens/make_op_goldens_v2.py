#!/usr/bin/env python3
"""Generates the golden fixtures of the operators added for real-world models (issue 9).

Run from the repository root:

    /work/venv/bin/python Tests/Goldens/make_op_goldens_v2.py

Output (deleted and rewritten on every run):

    Tests/EngineTests/Fixtures/ops_v2/<case>_<variant>/model.tflite
    Tests/EngineTests/Fixtures/ops_v2/<case>_<variant>/input_<i>.npy   (subgraph input order)
    Tests/EngineTests/Fixtures/ops_v2/<case>_<variant>/output_<i>.npy  (subgraph output order)
    Tests/EngineTests/Fixtures/ops_v2/manifest.json

Each case is a tiny TensorFlow graph (a Keras layer for PRELU) converted with
tf.lite.TFLiteConverter into up to three variants, named `<case>_<variant>`:

- `float`: float32, no optimizations. Tolerance 0 for operators that only move,
  compare or select values (SPLIT, TRANSPOSE, GATHER, MAXIMUM, ARG_MAX, CAST,
  REDUCE_MAX, ...), 1e-5 relative to max(1, max|ref|) for the others.
- `int8`: full-integer post-training quantization with int8 inputs and outputs (a
  seeded representative dataset whose first batch is the test input). Tolerance 0.
- `uint8`: the int8 model rewritten into a true uint8 model by
  `make_quant_op_goldens.to_uint8` (zero points + 128, int8 constants flipped by
  0x80). Only where TFLite's reference kernels accept uint8. Tolerance 0.

Hybrid (dynamic-range) cases are a fourth variant, `hybrid`: `optimizations=[DEFAULT]`
with no representative dataset, so int8 weights feed CONV_2D, DEPTHWISE_CONV_2D and
FULLY_CONNECTED directly on float32 activations (per-channel or per-tensor scales,
`asymmetric_quantize_inputs` true or false). Tolerance 1e-5. They go to
`Tests/EngineTests/Fixtures/hybrid/`.

Every golden comes from LiteRT with the BUILTIN_REF op resolver. The generator
checks that the converted model holds exactly the expected operators, that the
reference run is deterministic and its outputs not constant, and that LiteRT agrees
with TensorFlow (float: 1e-4 relative; quantized: a few output steps; hybrid: a few
percent of the output range).

Optional arguments: case-name substrings; only matching cases are generated (the
manifest then lists only those). Commit the output of a run without arguments.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

sys.dont_write_bytecode = True
sys.path.insert(0, str(Path(__file__).resolve().parent))
import golden_io as G  # noqa: E402

import warnings  # noqa: E402

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import tf_keras  # noqa: E402
from ai_edge_litert import schema_py_generated as schema  # noqa: E402

import make_quant_op_goldens as Q  # noqa: E402  (to_uint8, quantize_inputs, default runtime)

GENERATOR = "Tests/Goldens/make_op_goldens_v2.py"
OPS_DIR = G.FIXTURES_ROOT / "ops_v2"
HYBRID_DIR = G.FIXTURES_ROOT / "hybrid"
SIZE_BUDGET_BYTES = 1_500_000
FLOAT_TOLERANCE = 1e-5
CALIBRATION_BATCHES = 16



@dataclass
class Case(G.Case):
    """`build(rng)` returns (fn, input specs, trackable or None); a spec is a shape (float32) or
    (shape, tf dtype, (lo, hi)) for an integer runtime input (float variant only)."""
    variants: tuple = ("float", "int8", "uint8")
    input_dist: object = ("uniform", -1.0, 1.0)
    # Exact float comparison: the operator only moves, compares or converts values.
    exact: bool = False
    # Per variant: operators that differ from expect_ops (e.g. a requantizing QUANTIZE).
    ops_override: dict = field(default_factory=dict)
    # Rewrite of the uint8 variant (after to_uint8).
    uint8_patch: Callable | None = None
    # Hybrid converter flags.
    hybrid_per_channel: bool = True
    hybrid_asymmetric: bool = True
    suite: str = "ops_v2"
    # The uint8 variant converts with per-tensor weights (to_uint8 needs one scale per tensor).
    uint8_per_tensor_weights: bool = False
    # Why the int8 golden is not checked against TensorFlow's float result (None: it is).
    no_float_check: str | None = None


CASES = G.Cases()
add = CASES.add


def fixed(fn, shapes, trackable=None):
    return lambda rng: (fn, shapes, trackable)


def set_opcode_version(op_name: str, version: int):
    """Rewrites the version of operator code `op_name` (BUILTIN_REF registers DEPTH_TO_SPACE
    only at version 1, which covers uint8)."""
    def patch(model_bytes: bytes) -> bytes:
        model = G.parse_model(model_bytes)
        value = getattr(schema.BuiltinOperator, op_name)
        for code in model.operatorCodes:
            if max(code.builtinCode, code.deprecatedBuiltinCode) == value:
                code.version = version
        return G.serialize_model(model)
    return patch


# ---------------------------------------------------------------------------
# Operator cases
# ---------------------------------------------------------------------------

# --- PRELU (Keras PReLU: alpha is a constant of the non-shared axes) ---------


def add_prelu(name, shape, shared_axes, desc=""):
    def build(rng):
        layer = tf_keras.layers.PReLU(shared_axes=shared_axes)
        layer.build((None,) + tuple(shape[1:]))
        alpha_shape = layer.get_weights()[0].shape
        layer.set_weights([rng.uniform(-0.6, 0.9, size=alpha_shape).astype(np.float32)])
        return (lambda x: layer(x)), [shape], layer
    add(Case(name, f"PRELU (Keras PReLU, shared_axes={shared_axes}) on {shape}. {desc}".strip(),
             build, ["PRELU"], input_dist=("uniform", -2.0, 2.0)))


add_prelu("prelu_shared_hw_1x3x4x5", (1, 3, 4, 5), [1, 2], "alpha [1, 1, 5] broadcast over pixels.")
add_prelu("prelu_unshared_1x2x3x4", (1, 2, 3, 4), None, "alpha [2, 3, 4]: same shape as the input.")
add_prelu("prelu_rank2_3x6", (3, 6), None, "alpha [6] on a rank-2 input.")

# --- SPLIT / SPLIT_V ----------------------------------------------------------

add(Case("split_axis3_3way_1x2x2x6", "SPLIT into 3 along axis 3.",
         fixed(lambda x: tf.split(x, 3, axis=3), [(1, 2, 2, 6)]), ["SPLIT"], exact=True))
add(Case("split_negaxis_2way_4x3x2", "SPLIT into 2 along axis -3 (= 0).",
         fixed(lambda x: tf.split(x, 2, axis=-3), [(4, 3, 2)]), ["SPLIT"], exact=True))
add(Case("split_v_axis1_1_2_3_2x6x2", "SPLIT_V sizes [1, 2, 3] along axis 1.",
         fixed(lambda x: tf.split(x, [1, 2, 3], axis=1), [(2, 6, 2)]), ["SPLIT_V"], exact=True))
add(Case("split_v_inferred_negaxis_3x7", "SPLIT_V sizes [2, -1, 1] along axis -1 (the -1 is inferred as 4).",
         fixed(lambda x: tf.split(x, [2, -1, 1], axis=-1), [(3, 7)]), ["SPLIT_V"], exact=True))

# --- TRANSPOSE_CONV -----------------------------------------------------------


def add_tconv(name, in_shape, k, cout, stride, padding, out_hw, bias, desc=""):
    def build(rng):
        cin = in_shape[3]
        w = tf.constant(rng.uniform(-0.5, 0.5, size=(k, k, cout, cin)).astype(np.float32))
        b = tf.constant(rng.uniform(-0.5, 0.5, size=(cout,)).astype(np.float32))
        out_shape = (in_shape[0], out_hw[0], out_hw[1], cout)

        def fn(x):
            y = tf.nn.conv2d_transpose(x, w, out_shape, stride, padding)
            return tf.nn.bias_add(y, b) if bias else y
        return fn, [in_shape], None
    add(Case(name, f"TRANSPOSE_CONV {in_shape} -> {out_hw}x{cout}, filter {k}x{k}, stride {stride}, "
                   f"{padding}, bias={bias}. int8 has per-channel filter scales; the uint8 variant is converted "
                   f"with per-tensor weights. {desc}".strip(), build, ["TRANSPOSE_CONV"],
             uint8_per_tensor_weights=True))


add_tconv("transpose_conv_s2_same_k3_1x3x3x2_to_4", (1, 3, 3, 2), 3, 4, 2, "SAME", (6, 6), False)
add_tconv("transpose_conv_s2_same_k3_bias_1x3x4x3_to_2", (1, 3, 4, 3), 3, 2, 2, "SAME", (6, 8), True)
add_tconv("transpose_conv_s1_valid_k2_bias_2x3x3x2_to_3", (2, 3, 3, 2), 2, 3, 1, "VALID", (4, 4), True)
add_tconv("transpose_conv_s2_valid_k3_1x2x2x3_to_2", (1, 2, 2, 3), 3, 2, 2, "VALID", (5, 5), False)

# --- EXP, RSQRT ---------------------------------------------------------------

add(Case("exp_2x9", "EXP on [-3, 1.5].", fixed(tf.exp, [(2, 9)]), ["EXP"],
         variants=("float", "int8"), input_dist=("uniform", -3.0, 1.5)))
add(Case("exp_1x4x4x3", "EXP on [-1, 1].", fixed(tf.exp, [(1, 4, 4, 3)]), ["EXP"],
         variants=("float", "int8")))
add(Case("rsqrt_2x9", "RSQRT on [0.05, 4].", fixed(tf.math.rsqrt, [(2, 9)]), ["RSQRT"],
         variants=("float", "int8"), input_dist=("uniform", 0.05, 4.0)))
add(Case("rsqrt_wide_1x3x3x4", "RSQRT on [0.5, 30].", fixed(tf.math.rsqrt, [(1, 3, 3, 4)]), ["RSQRT"],
         variants=("float", "int8"), input_dist=("uniform", 0.5, 30.0)))

# --- CONV_2D with groups (RegNet, ResNeXt) -------------------------------------------


def add_grouped(name, in_shape, cout, groups, k, stride, act=None):
    def build(rng):
        layer = tf_keras.layers.Conv2D(cout, k, strides=stride, padding="same", groups=groups, activation=act)
        layer.build((None,) + tuple(in_shape[1:]))
        layer.set_weights([rng.uniform(-0.5, 0.5, w.shape).astype(np.float32) for w in layer.get_weights()])
        return (lambda x: layer(x)), [in_shape], layer
    add(Case(name, f"CONV_2D with {groups} groups, {in_shape} -> {cout} channels, {k}x{k} stride {stride}, "
                   f"activation {act}. TFLite runs grouped convolutions with its reference kernels only; "
                   f"no uint8 kernel takes groups.", build, ["CONV_2D"], variants=("float", "int8")))


add_grouped("conv_grouped_g2_1x5x5x8_to_6", (1, 5, 5, 8), 6, 2, 3, 1)
add_grouped("conv_grouped_g4_relu_s2_2x6x6x8_to_8", (2, 6, 6, 8), 8, 4, 3, 2, "relu")

# --- GELU -----------------------------------------------------------------------

add(Case("gelu_exact_2x3x5", "GELU (exact, erf form) on [-4, 3].", fixed(lambda x: tf.nn.gelu(x, approximate=False), [(2, 3, 5)]),
         ["GELU"], input_dist=("uniform", -4.0, 3.0)))
add(Case("gelu_approximate_1x4x4x3", "GELU (tanh approximation) on [-3, 3].",
         fixed(lambda x: tf.nn.gelu(x, approximate=True), [(1, 4, 4, 3)]), ["GELU"], input_dist=("uniform", -3.0, 3.0)))

# --- DEPTH_TO_SPACE / SPACE_TO_DEPTH -------------------------------------------

add(Case("depth_to_space_b2_1x2x3x8", "DEPTH_TO_SPACE block 2. int8 DEPTH_TO_SPACE (version 2) is not "
         "in LiteRT's reference resolver, so there is no int8 variant; the uint8 model is marked version 1.",
         fixed(lambda x: tf.nn.depth_to_space(x, 2), [(1, 2, 3, 8)]), ["DEPTH_TO_SPACE"],
         variants=("float", "uint8"), exact=True, uint8_patch=set_opcode_version("DEPTH_TO_SPACE", 1)))
add(Case("depth_to_space_b3_2x2x1x9", "DEPTH_TO_SPACE block 3, batch 2.",
         fixed(lambda x: tf.nn.depth_to_space(x, 3), [(2, 2, 1, 9)]), ["DEPTH_TO_SPACE"],
         variants=("float",), exact=True))
add(Case("space_to_depth_b2_1x4x6x2", "SPACE_TO_DEPTH block 2.",
         fixed(lambda x: tf.nn.space_to_depth(x, 2), [(1, 4, 6, 2)]), ["SPACE_TO_DEPTH"], exact=True))
add(Case("space_to_depth_b3_2x3x6x1", "SPACE_TO_DEPTH block 3, batch 2.",
         fixed(lambda x: tf.nn.space_to_depth(x, 3), [(2, 3, 6, 1)]), ["SPACE_TO_DEPTH"], exact=True))

# --- ARG_MAX / ARG_MIN (inputs on a coarse grid so that ties occur) -----------

GRID = ("grid", -2.0, 2.0, 0.5)
add(Case("arg_max_lastaxis_i32_2x3x5", "ARG_MAX over axis -1, int32 output; ties pick the first index.",
         fixed(lambda x: tf.argmax(x, axis=-1, output_type=tf.int32), [(2, 3, 5)]), ["ARG_MAX"],
         input_dist=GRID, exact=True))
add(Case("arg_max_axis1_i64_2x6x3", "ARG_MAX over axis 1, int64 output.",
         fixed(lambda x: tf.argmax(x, axis=1), [(2, 6, 3)]), ["ARG_MAX"], input_dist=GRID, exact=True))
add(Case("arg_min_axis0_i32_4x3", "ARG_MIN over axis 0, int32 output.",
         fixed(lambda x: tf.argmin(x, axis=0, output_type=tf.int32), [(4, 3)]), ["ARG_MIN"],
         input_dist=GRID, exact=True))
add(Case("arg_min_lastaxis_i64_1x2x2x7", "ARG_MIN over axis 3, int64 output.",
         fixed(lambda x: tf.argmin(x, axis=3), [(1, 2, 2, 7)]), ["ARG_MIN"], input_dist=GRID, exact=True))

# --- CAST -----------------------------------------------------------------------

add(Case("cast_f32_to_i32_3x5", "CAST float32 -> int32 (truncation toward zero).",
         fixed(lambda x: tf.cast(x, tf.int32), [(3, 5)]), ["CAST"], variants=("float",),
         input_dist=("uniform", -6.0, 6.0), exact=True))
add(Case("cast_i32_to_f32_3x5", "CAST int32 -> float32.",
         fixed(lambda x: tf.cast(x, tf.float32), [((3, 5), tf.int32, (-100000, 100000))]), ["CAST"],
         variants=("float",), exact=True))
add(Case("cast_f32_to_u8_2x6", "CAST float32 -> uint8 (values in [0, 250]).",
         fixed(lambda x: tf.cast(x, tf.uint8), [(2, 6)]), ["CAST"], variants=("float",),
         input_dist=("uniform", 0.0, 250.0), exact=True))
add(Case("cast_i32_to_i64_2x4", "CAST int32 -> int64.",
         fixed(lambda x: tf.cast(x, tf.int64), [((2, 4), tf.int32, (-1000, 1000))]), ["CAST"],
         variants=("float",), exact=True))
add(Case("cast_u8_to_f32_2x5", "CAST uint8 -> float32.",
         fixed(lambda x: tf.cast(x, tf.float32), [((2, 5), tf.uint8, (0, 256))]), ["CAST"],
         variants=("float",), exact=True))

# --- MAXIMUM / MINIMUM ----------------------------------------------------------

def binary(f):
    return lambda x, y: f(x, y)


def with_constant(f, value):
    return lambda x: f(x, value)


def reduce_over(f, axes, keepdims=False):
    return lambda x: f(x, axis=axes, keepdims=keepdims)


for op, tf_fn in (("MAXIMUM", tf.maximum), ("MINIMUM", tf.minimum)):
    low = op.lower()
    add(Case(f"{low}_same_shape_2x3x4", f"{op} of two runtime tensors of one shape.",
             fixed(binary(tf_fn), [(2, 3, 4), (2, 3, 4)]), [op], exact=True, input_dist=GRID))
    add(Case(f"{low}_bcast_2x3x4_4", f"{op} broadcasting [4] over [2, 3, 4].",
             fixed(binary(tf_fn), [(2, 3, 4), (4,)]), [op], exact=True))
    add(Case(f"{low}_const_0p25_1x3x3x2", f"{op} with the scalar constant 0.25.",
             fixed(with_constant(tf_fn, 0.25), [(1, 3, 3, 2)]), [op], exact=True))

# --- TRANSPOSE --------------------------------------------------------------------

add(Case("transpose_nhwc_nchw_1x2x3x4", "TRANSPOSE perm [0, 3, 1, 2].",
         fixed(lambda x: tf.transpose(x, [0, 3, 1, 2]), [(1, 2, 3, 4)]), ["TRANSPOSE"], exact=True))
add(Case("transpose_2d_5x3", "TRANSPOSE perm [1, 0].",
         fixed(lambda x: tf.transpose(x), [(5, 3)]), ["TRANSPOSE"], exact=True))
add(Case("transpose_5d_2x1x3x2x2", "TRANSPOSE of rank 5, perm [4, 2, 0, 3, 1].",
         fixed(lambda x: tf.transpose(x, [4, 2, 0, 3, 1]), [(2, 1, 3, 2, 2)]), ["TRANSPOSE"], exact=True))

# --- GATHER -------------------------------------------------------------------------

add(Case("gather_axis1_const_2x3x4", "GATHER constant indices [2, 0, 1, 2] along axis 1.",
         fixed(lambda x: tf.gather(x, [2, 0, 1, 2], axis=1), [(2, 3, 4)]), ["GATHER"], exact=True))
add(Case("gather_negaxis_2d_indices_3x5", "GATHER constant indices [[4, 0], [1, 1], [3, 2]] along axis -1.",
         fixed(lambda x: tf.gather(x, [[4, 0], [1, 1], [3, 2]], axis=-1), [(3, 5)]), ["GATHER"], exact=True))
add(Case("gather_axis0_runtime_indices_5x3", "GATHER along axis 0 with runtime int32 indices.",
         fixed(lambda x, i: tf.gather(x, i, axis=0), [(5, 3), ((4,), tf.int32, (0, 5))]), ["GATHER"],
         variants=("float",), exact=True))
add(Case("gather_batch_dims1_2x4x3", "GATHER with batch_dims=1 (constant indices [[3, 0], [1, 1]] along axis 1).",
         fixed(lambda x: tf.gather(x, [[3, 0], [1, 1]], axis=1, batch_dims=1), [(2, 4, 3)]), ["GATHER"],
         exact=True))

# --- MIRROR_PAD ---------------------------------------------------------------------

add(Case("mirror_pad_reflect_1x4x4x2", "MIRROR_PAD REFLECT [[0, 0], [1, 2], [2, 1], [0, 0]].",
         fixed(lambda x: tf.pad(x, [[0, 0], [1, 2], [2, 1], [0, 0]], mode="REFLECT"), [(1, 4, 4, 2)]),
         ["MIRROR_PAD"], exact=True))
add(Case("mirror_pad_symmetric_1x3x4x2", "MIRROR_PAD SYMMETRIC [[0, 0], [3, 1], [0, 4], [1, 0]].",
         fixed(lambda x: tf.pad(x, [[0, 0], [3, 1], [0, 4], [1, 0]], mode="SYMMETRIC"), [(1, 3, 4, 2)]),
         ["MIRROR_PAD"], exact=True))
add(Case("mirror_pad_reflect_2d_3x4", "MIRROR_PAD REFLECT [[2, 2], [3, 0]] of rank 2.",
         fixed(lambda x: tf.pad(x, [[2, 2], [3, 0]], mode="REFLECT"), [(3, 4)]), ["MIRROR_PAD"], exact=True))

# --- DIV, SQUARED_DIFFERENCE ------------------------------------------------------

add(Case("div_same_shape_2x3x4", "DIV of two runtime tensors (divisor in [0.5, 2]).",
         fixed(lambda x, y: x / y, [(2, 3, 4), (2, 3, 4)]), ["DIV"],
         input_dist=[("uniform", -2.0, 2.0), ("uniform", 0.5, 2.0)]))
add(Case("div_bcast_1x3x3x2_2", "DIV by a runtime [2] divisor in [0.75, 1.5] (per channel; the converter "
         "turns division by a constant into MUL).",
         fixed(lambda x, y: x / y, [(1, 3, 3, 2), (2,)]), ["DIV"],
         input_dist=[("uniform", -1.0, 1.0), ("uniform", 0.75, 1.5)]))
add(Case("div_bcast_runtime_2x3_3", "DIV broadcasting a runtime [3] divisor in [-2, -0.5].",
         fixed(lambda x, y: x / y, [(2, 3), (3,)]), ["DIV"],
         input_dist=[("uniform", -1.0, 1.0), ("uniform", -2.0, -0.5)]))
# TFLite's SQUARED_DIFFERENCE has no uint8 kernel.
add(Case("squared_difference_same_shape_2x3x4", "SQUARED_DIFFERENCE of two runtime tensors.",
         fixed(tf.math.squared_difference, [(2, 3, 4), (2, 3, 4)]), ["SQUARED_DIFFERENCE"],
         variants=("float", "int8")))
add(Case("squared_difference_bcast_1x3x3x4_4", "SQUARED_DIFFERENCE broadcasting [4].",
         fixed(tf.math.squared_difference, [(1, 3, 3, 4), (4,)]), ["SQUARED_DIFFERENCE"],
         variants=("float", "int8"), input_dist=[("uniform", -1.0, 1.0), ("uniform", -0.5, 2.0)]))

# --- SUM, REDUCE_MAX --------------------------------------------------------------

# LiteRT's reference int8 SUM (reduce.cc, the kReference branch of QuantizedMeanOrSum) passes
# the int8 tensors to reference_ops::QuantizedMeanOrSum as uint8_t: it sums the bytes as uint8
# values, subtracts the int8 zero point and clamps to 0...255 before storing the byte. Its int8
# outputs are therefore far from TensorFlow's sums (and from XNNPACK's); the goldens record
# them as they are, and the uint8 variant is the meaningful one.
SUM_INT8_NOTE = "BUILTIN_REF's int8 SUM reads and writes its int8 bytes as uint8"
for op, tf_fn in (("SUM", tf.reduce_sum), ("REDUCE_MAX", tf.reduce_max)):
    low = "sum" if op == "SUM" else "reduce_max"
    exact = op == "REDUCE_MAX"
    note = SUM_INT8_NOTE if op == "SUM" else None
    desc = f" int8: {SUM_INT8_NOTE}." if op == "SUM" else ""
    # Over more than 3 elements the uint8 reading of int8 SUM saturates every output at 255 (a
    # constant, useless golden), so those SUM cases have no int8 variant.
    wide = ("float", "uint8") if op == "SUM" else ("float", "int8", "uint8")
    add(Case(f"{low}_axis1_2x3x4", f"{op} over axis 1.{desc}",
             fixed(reduce_over(tf_fn, [1]), [(2, 3, 4)]), [op], exact=exact, no_float_check=note))
    add(Case(f"{low}_negaxis_3x2", f"{op} over axis -1.{desc}",
             fixed(reduce_over(tf_fn, [-1]), [(3, 2)]), [op], exact=exact, no_float_check=note))
    add(Case(f"{low}_hw_keepdims_1x3x4x5", f"{op} over axes [1, 2], keep_dims.",
             fixed(reduce_over(tf_fn, [1, 2], True), [(1, 3, 4, 5)]), [op], exact=exact, variants=wide))
    add(Case(f"{low}_negaxes_2x3x4", f"{op} over axes [-1, 0].",
             fixed(reduce_over(tf_fn, [-1, 0]), [(2, 3, 4)]), [op], exact=exact, variants=wide))
    add(Case(f"{low}_all_3x5", f"{op} over every axis.",
             fixed(reduce_over(tf_fn, [0, 1]), [(3, 5)]), [op], exact=exact, variants=wide))


# ---------------------------------------------------------------------------
# Hybrid (dynamic-range) cases
# ---------------------------------------------------------------------------


def add_hybrid(name, kind, in_shape, build_layer, per_channel, asymmetric, desc="", input_dist=None):
    def build(rng):
        tf_keras.utils.set_random_seed(G.seed_for(name, "keras") % (2**31))
        layer = build_layer()
        layer.build((None,) + tuple(in_shape[1:]))
        weights = [rng.uniform(-1.0, 1.0, size=w.shape).astype(np.float32) for w in layer.get_weights()]
        layer.set_weights(weights)
        return (lambda x: layer(x)), [in_shape], layer
    add(Case(name, f"Hybrid {kind}: int8 weights ({'per-channel' if per_channel else 'per-tensor'}), float32 "
                   f"input quantized on the fly ({'asymmetric' if asymmetric else 'symmetric'}). {desc}".strip(),
             build, [kind], variants=("hybrid",), hybrid_per_channel=per_channel, hybrid_asymmetric=asymmetric,
             suite="hybrid", **({"input_dist": input_dist} if input_dist else {})))


# The converter leaves weights of fewer than 1024 elements in float32, hence the sizes.
# CONV_2D and DEPTHWISE_CONV_2D options have no asymmetric_quantize_inputs field: TFLite
# quantizes their inputs asymmetrically on the per-channel path and symmetrically on the
# per-tensor one. FULLY_CONNECTED has the flag, so all four combinations.
for pc in (True, False):
    tag = "pc" if pc else "pt"
    add_hybrid(f"hybrid_conv_k3_s1_same_1x6x6x8_to_16_{tag}", "CONV_2D", (1, 6, 6, 8),
               lambda: tf_keras.layers.Conv2D(16, 3, padding="same"), pc, True)
    # TFLite's hybrid DEPTHWISE_CONV_2D indexes the filter scales by output channel even when
    # there is one (per-tensor) scale: it reads past it, and its results vary from run to run.
    if pc:
        add_hybrid(f"hybrid_dw_k3_s2_1x5x5x128_relu_{tag}", "DEPTHWISE_CONV_2D", (1, 5, 5, 128),
                   lambda: tf_keras.layers.DepthwiseConv2D(3, strides=2, padding="same", activation="relu"), pc, True)
    for asym in (True, False):
        add_hybrid(f"hybrid_fc_2x48_to_24_{tag}_{'asym' if asym else 'sym'}", "FULLY_CONNECTED", (2, 48),
                   lambda: tf_keras.layers.Dense(24), pc, asym)
add_hybrid("hybrid_conv_k3_s2_valid_relu6_2x7x5x8_to_16_pc", "CONV_2D", (2, 7, 5, 8),
           lambda: tf_keras.layers.Conv2D(16, 3, strides=2, activation=tf.nn.relu6), True, True,
           desc="Batch 2: the input is quantized per batch.")
add_hybrid("hybrid_fc_relu_3x64_to_20_pc_asym", "FULLY_CONNECTED", (3, 64),
           lambda: tf_keras.layers.Dense(20, activation="relu"), True, True, desc="Fused RELU, 3 rows.")
# Every row spans [0, 15.9375], so the asymmetric input scale is 1/16 and the zero point -128;
# the inputs are multiples of 1/32, so half of them fall exactly halfway between two steps, where
# rounding x / scale before or after adding the zero point gives different steps.
add_hybrid("hybrid_fc_2x48_to_24_pc_asym_halfway", "FULLY_CONNECTED", (2, 48),
           lambda: tf_keras.layers.Dense(24), True, True, input_dist=("halfway", 15.9375, 1 / 32),
           desc="Inputs halfway between quantized steps.")


# ---------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------


def spec_of(s):
    return s if isinstance(s, tuple) and len(s) == 3 and not isinstance(s[0], int) else (s, tf.float32, None)


def draw(rng, spec, dist):
    shape, dtype, int_range = spec_of(spec)
    if dtype != tf.float32:
        return rng.integers(int_range[0], int_range[1], size=shape).astype(dtype.as_numpy_dtype)
    kind = dist[0]
    if kind == "uniform":
        return rng.uniform(dist[1], dist[2], size=shape).astype(np.float32)
    if kind == "grid":
        steps = int(round((dist[2] - dist[1]) / dist[3]))
        return (dist[1] + dist[3] * rng.integers(0, steps + 1, size=shape)).astype(np.float32)
    if kind == "halfway":
        # Multiples of dist[2] in [0, dist[1]], the first of every row dist[1] itself.
        top, step = dist[1], dist[2]
        x = (step * rng.integers(0, int(round(top / step)) + 1, size=shape)).astype(np.float32)
        x[..., 0] = top
        return x
    raise ValueError(dist)


def dists_for(case, n):
    return case.input_dist if isinstance(case.input_dist, list) else [case.input_dist] * n


def convert(case, fn, specs, variant, test_inputs, trackable):
    tspecs = [tf.TensorSpec(spec_of(s)[0], spec_of(s)[1], name=f"in_{i}") for i, s in enumerate(specs)]
    module = tf.Module()
    if trackable is not None:
        module.layer = trackable  # so that the converter can freeze the layer's variables
    module.f = tf.function(fn, input_signature=tspecs, autograph=False)
    conv = tf.lite.TFLiteConverter.from_concrete_functions([module.f.get_concrete_function()], module)
    if variant in ("int8", "uint8"):
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        dists = dists_for(case, len(specs))

        def representative():
            yield {f"in_{i}": x for i, x in enumerate(test_inputs)}
            rng = np.random.default_rng(G.seed_for(case.name, "calibration"))
            for _ in range(CALIBRATION_BATCHES - 1):
                yield {f"in_{i}": draw(rng, s, d) for i, (s, d) in enumerate(zip(specs, dists))}

        conv.representative_dataset = representative
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        conv.inference_input_type = tf.int8
        conv.inference_output_type = tf.int8
        if variant == "uint8" and case.uint8_per_tensor_weights:
            conv._experimental_disable_per_channel = True
    elif variant == "hybrid":
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv._experimental_disable_per_channel = not case.hybrid_per_channel
    model_bytes = conv.convert()
    if variant == "hybrid" and not case.hybrid_asymmetric:
        model_bytes = set_asymmetric(model_bytes, False)
    if variant == "uint8":
        model_bytes = Q.to_uint8(model_bytes)
        if case.uint8_patch is not None:
            model_bytes = case.uint8_patch(model_bytes)
    return model_bytes


def set_asymmetric(model_bytes: bytes, value: bool) -> bytes:
    """Sets `asymmetric_quantize_inputs` of every hybrid operator's options."""
    model = G.parse_model(model_bytes)
    for op in model.subgraphs[0].operators:
        opts = op.builtinOptions
        if opts is not None and hasattr(opts, "asymmetricQuantizeInputs"):
            opts.asymmetricQuantizeInputs = value
    return G.serialize_model(model)


def verify(case, variant, model_bytes, executed):
    ops = G.describe_ops(model_bytes)
    names = [o["op"] for o in ops]
    if names != executed:
        raise AssertionError(f"{case.name}/{variant}: flatbuffer ops {names} != executed {executed}")
    expected = case.ops_override.get(variant, case.expect_ops)
    if names != expected:
        raise AssertionError(f"{case.name}/{variant}: ops {names}, expected {expected}")
    if variant == "hybrid":
        core = ops[0]
        if core["inputs"][0]["type"] != "FLOAT32" or core["inputs"][1]["type"] != "INT8" or not core["inputs"][1]["const"]:
            raise AssertionError(f"{case.name}: not a hybrid operator: {core['inputs']}")
        if core["op"] == "FULLY_CONNECTED" and core["options"].get("asymmetricQuantizeInputs") != case.hybrid_asymmetric:
            raise AssertionError(f"{case.name}: asymmetric_quantize_inputs is {core['options']}")
        model = G.parse_model(model_bytes)
        filt = model.subgraphs[0].tensors[model.subgraphs[0].operators[0].inputs[1]]
        n_scales = len(filt.quantization.scale)
        if (n_scales > 1) != case.hybrid_per_channel:
            raise AssertionError(f"{case.name}: filter has {n_scales} scales")
    for o in ops:
        for t in o["inputs"] + o["outputs"]:
            if t is None:
                continue
            if variant == "int8" and t["type"] not in ("INT8", "INT32", "INT64"):
                raise AssertionError(f"{case.name}/{variant}: operand of type {t['type']}")
            if variant == "uint8" and t["type"] not in ("UINT8", "INT32", "INT64"):
                raise AssertionError(f"{case.name}/{variant}: operand of type {t['type']}")


def tf_outputs(fn, by_arg):
    res = fn(*[tf.constant(a) for a in by_arg])
    return [np.asarray(r) for r in (res if isinstance(res, (tuple, list)) else [res])]


def float_check(case, fn, by_arg, outputs, variant) -> str:
    expected = tf_outputs(fn, by_arg)
    if len(expected) != len(outputs):
        raise AssertionError(f"{case.name}: TF has {len(expected)} outputs, LiteRT {len(outputs)}")
    worst = 0.0
    for out in outputs:
        cands = [e for e in expected if e.shape == out.shape and e.dtype == out.dtype]
        if not cands:
            raise AssertionError(f"{case.name}: no TF output like {out.shape} {out.dtype}")
        err = min(float(np.max(np.abs(out.astype(np.float64) - c.astype(np.float64)))) if out.size else 0.0
                  for c in cands)
        scale = max(1.0, max(float(np.max(np.abs(c))) if c.size else 0.0 for c in cands))
        rel = err / scale
        bound = 1e-4 if variant == "float" else 0.03
        if rel > bound:
            raise AssertionError(f"{case.name}/{variant}: LiteRT differs from TF by {rel:.3g} (bound {bound})")
        worst = max(worst, rel)
    return f"tf-check={worst:.2g}"


def generate(case, variant):
    rng = np.random.default_rng(G.seed_for(case.name, "weights"))
    fn, specs, trackable = case.build(rng)
    in_rng = np.random.default_rng(G.seed_for(case.name, "inputs"))
    by_arg = [draw(in_rng, s, d) for s, d in zip(specs, dists_for(case, len(specs)))]
    model_bytes = convert(case, fn, specs, variant, by_arg, trackable)

    interp = G.make_interpreter(model_bytes)
    in_details, out_details = interp.get_input_details(), interp.get_output_details()
    arg_of = [int(d["name"].split("in_")[-1].split(":")[0]) for d in in_details]
    ordered = [by_arg[a] for a in arg_of]
    inputs = Q.quantize_inputs(ordered, in_details) if variant in ("int8", "uint8") else ordered
    outputs, executed = G.run_model(model_bytes, inputs)
    verify(case, variant, model_bytes, executed)
    for i, o in enumerate(outputs):
        if o.size > 1 and np.all(o == o.flat[0]):
            raise AssertionError(f"{case.name}/{variant}: output {i} is constant ({o.flat[0]})")
    again, _ = G.run_model(model_bytes, inputs)
    if any(not np.array_equal(a, b) for a, b in zip(outputs, again)):
        raise AssertionError(f"{case.name}/{variant}: reference run is not deterministic")
    if variant in ("float", "hybrid"):
        check = float_check(case, fn, by_arg, outputs, variant)
    elif variant == "int8" and case.no_float_check:
        check = "tf-check=skipped (" + case.no_float_check + ")"
    elif variant == "int8" and all(o.dtype in (np.int8, np.uint8) for o in outputs):
        check = Q.float_check(case, fn, by_arg, outputs, out_details)
    else:
        check = "tf-check=skipped"
    fast = Q.run_default_runtime(model_bytes, inputs)
    xnn = max((float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))) if a.size else 0.0)
              for a, b in zip(fast, outputs))
    if variant in ("float", "hybrid"):
        tolerance = 0 if case.exact else FLOAT_TOLERANCE
    else:
        tolerance = 0
        xnn = int(xnn)
    io = {"inputs": [{"name": d["name"], "shape": [int(x) for x in d["shape"]],
                      "dtype": np.dtype(d["dtype"]).name} for d in in_details],
          "outputs": [{"name": d["name"], "shape": [int(x) for x in d["shape"]],
                       "dtype": np.dtype(d["dtype"]).name} for d in out_details]}
    return model_bytes, inputs, outputs, G.unique_in_order(executed), tolerance, xnn, io, check


VARIANT_NOTES = {
    "float": "float32 model.",
    "int8": "int8 model with int8 inputs and outputs (full-integer post-training quantization).",
    "uint8": "The int8 model rewritten into a true uint8 per-tensor model (zero points + 128).",
    "hybrid": "Dynamic-range quantization (optimizations=[DEFAULT], no representative dataset).",
}


def main(argv):
    warnings.filterwarnings("ignore", message=".*scheduled for deletion.*")
    filters = argv[1:]
    jobs = [(c, v) for c in CASES for v in c.variants
            if not filters or any(f in f"{c.name}_{v}" for f in filters)]
    roots = {"ops_v2": OPS_DIR, "hybrid": HYBRID_DIR}
    suites = [s for s in roots if any(c.suite == s for c, _ in jobs)]
    for suite in suites:
        G.reset_dir(roots[suite])
    manifests = {s: [] for s in suites}
    for case, variant in jobs:
        name = f"{case.name}_{variant}"
        root = roots[case.suite]
        model_bytes, inputs, outputs, ops, tol, xnn, io, check = generate(case, variant)
        G.write_case(root, name, model_bytes, inputs, outputs)
        entry = {"name": name, "ops": ops, "tolerance": tol, "resolver": "BUILTIN_REF",
                 "xnnpack_max_diff": xnn,
                 "description": f"{case.description} Variant {variant}: {VARIANT_NOTES[variant]}"}
        entry.update(io)
        manifests[case.suite].append(entry)
        out_desc = ", ".join(f"{list(o.shape)} {o.dtype}" for o in outputs)
        print(f"{name:62s} {len(model_bytes):6d} B ops={ops} out={out_desc} tol={tol} "
              f"xnnpack-diff={xnn:.3g} {check}", flush=True)
    for suite in suites:
        root = roots[suite]
        G.write_manifest(root, G.origin(GENERATOR), manifests[suite])
        total = G.dir_size(root)
        print(f"{len(manifests[suite])} cases written to {root.relative_to(G.REPO_ROOT)} ({total} bytes)")
        if not filters and total > SIZE_BUDGET_BYTES:
            raise SystemExit(f"fixture size {total} exceeds budget {SIZE_BUDGET_BYTES}")


if __name__ == "__main__":
    main(sys.argv)
