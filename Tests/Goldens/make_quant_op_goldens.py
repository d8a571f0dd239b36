#!/usr/bin/env python3
"""Generates the quantized single-operator golden fixtures for the SwiftLite engine tests.

Run from the repository root:

    /work/venv/bin/python Tests/Goldens/make_quant_op_goldens.py

Output (deleted and rewritten on every run):

    Tests/EngineTests/Fixtures/quant_ops/<case>_<variant>/model.tflite
    Tests/EngineTests/Fixtures/quant_ops/<case>_<variant>/input_<i>.npy   (subgraph input order)
    Tests/EngineTests/Fixtures/quant_ops/<case>_<variant>/output_<i>.npy  (subgraph output order)
    Tests/EngineTests/Fixtures/quant_ops/manifest.json

Each case is a tiny TensorFlow graph converted with full-integer post-training
quantization (tf.lite.TFLiteConverter, optimizations=[DEFAULT], a seeded
representative dataset, supported_ops=[TFLITE_BUILTINS_INT8]) into one or more
variants:

- `int8`: int8 inputs and outputs (inference_input_type = inference_output_type
  = tf.int8); the graph is exactly the case's operators, all int8.
- `uint8io`: uint8 inputs and outputs; the converter adds QUANTIZE uint8 -> int8
  after each input and QUANTIZE int8 -> uint8 before each output around the
  same int8 operators (QUANTIZE requantization).
- `uint8`: the `int8` model rewritten into a true uint8 per-tensor model (every
  int8 tensor becomes uint8 with its zero point + 128, constant int8 data
  flipped by 0x80). This is how the uint8 kernels of TFLite (a different code
  path for CONCATENATION, RESIZE_BILINEAR, ...) get exercised without TF1's
  removed uint8 converter; TFLite accepts these models like any uint8 model.
- `floatio` (some cases): float32 inputs and outputs; the converter adds
  QUANTIZE float32 -> int8 and DEQUANTIZE int8 -> float32.
- `floatio_uint8` (with `floatio`): the `floatio` model rewritten to uint8 as
  above (QUANTIZE float32 -> uint8, DEQUANTIZE uint8 -> float32).

Every golden comes from LiteRT with the BUILTIN_REF op resolver (TFLite's
reference kernels), and the tests compare byte for byte (`"tolerance": 0`).
Each manifest entry also records `xnnpack_max_diff`: the largest |difference|
between LiteRT's default runtime (XNNPACK delegate and optimized kernels) and
the reference kernels on the same inputs, in quantized units (float units for
the float outputs of `floatio` variants). It shows which operators an
implementation cannot match by merely being "a correct quantized kernel".

The generator checks that the converter produced exactly the expected
operators (and options), that the reference run is deterministic, and that the
dequantized outputs agree with TensorFlow's float result to within a few
quantization steps (unpatched cases).

Optional arguments: case-name substrings; only matching cases are generated
(the manifest then lists only those). Commit the output of a run without
arguments.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

sys.dont_write_bytecode = True  # keep __pycache__ out of the source tree
sys.path.insert(0, str(Path(__file__).resolve().parent))
import golden_io as G  # noqa: E402  (sets TF env vars before TF import)

import warnings  # noqa: E402

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from ai_edge_litert import schema_py_generated as schema  # noqa: E402
from ai_edge_litert.interpreter import Interpreter, OpResolverType  # noqa: E402

GENERATOR = "Tests/Goldens/make_quant_op_goldens.py"
OUT_DIR = G.FIXTURES_ROOT / "quant_ops"
SIZE_BUDGET_BYTES = 1_500_000
DEFAULT_VARIANTS = ("int8", "uint8io", "uint8")
CALIBRATION_BATCHES = 16



# ---------------------------------------------------------------------------
# Case definition
# ---------------------------------------------------------------------------


@dataclass
class Case(G.Case):
    """`build(rng)`'s callable takes one float tensor per input; `expect_ops` and `expect_options`
    describe the `int8` variant."""
    # Per operator index of the `int8` variant: subset of builtin options that must match.
    expect_options: dict = field(default_factory=dict)
    # Float input distribution (also used for calibration): ("uniform", lo, hi) or
    # ("normal", std), per input or one for all.
    input_dist: object = ("uniform", -1.0, 1.0)
    variants: tuple = DEFAULT_VARIANTS
    # Rewrite of every converted model (e.g. an option the converter never emits); must not
    # depend on the QUANTIZE operators the uint8io/floatio variants add.
    patch: Callable | None = None
    # Extra rewrite of the true-uint8 variants only (e.g. quantization parameters that int8
    # kernels reject but uint8 kernels support).
    uint8_patch: Callable | None = None
    # False when `patch` makes TensorFlow's float function a wrong reference (the uint8
    # variants are never checked against it).
    float_check: bool = True


CASES = G.Cases()
add = CASES.add


# ---------------------------------------------------------------------------
# Flatbuffer rewrites
# ---------------------------------------------------------------------------


def find_op(model, name):
    """The single operator of subgraph 0 whose builtin is `name`."""
    sg = model.subgraphs[0]
    found = [op for op in sg.operators if _builtin_name(model, op) == name]
    if len(found) != 1:
        raise AssertionError(f"expected one {name} operator, found {len(found)}")
    return found[0]


def _builtin_name(model, op):
    code = model.operatorCodes[op.opcodeIndex]
    value = max(code.builtinCode, code.deprecatedBuiltinCode)
    return {v: k for k, v in vars(schema.BuiltinOperator).items() if not k.startswith("_")}[value]


def to_uint8(model_bytes: bytes) -> bytes:
    """Rewrites every int8 tensor into uint8 with the same scale and zero point + 128."""
    model = G.parse_model(model_bytes)
    flipped = set()  # the converter shares one buffer between equal constants: flip it once
    for t in model.subgraphs[0].tensors:
        if t.type != schema.TensorType.INT8:
            continue
        q = t.quantization
        if q is None or q.scale is None or len(q.scale) != 1:
            raise AssertionError(f"tensor {t.name!r}: int8 without per-tensor quantization")
        t.type = schema.TensorType.UINT8
        q.zeroPoint = np.array([int(q.zeroPoint[0]) + 128], dtype=np.int64)
        buf = model.buffers[t.buffer]
        if buf is not None and buf.data is not None and len(buf.data) > 0 and t.buffer not in flipped:
            buf.data = (np.asarray(buf.data, dtype=np.uint8) ^ 0x80).astype(np.uint8)
            flipped.add(t.buffer)
    return G.serialize_model(model)


def patch_softmax_beta(beta):
    def patch(model_bytes):
        model = G.parse_model(model_bytes)
        find_op(model, "SOFTMAX").builtinOptions.beta = float(beta)
        return G.serialize_model(model)

    return patch


def patch_reshape_to_squeeze(squeeze_dims):
    """Rewrites the RESHAPE operator into SQUEEZE(squeeze_dims), dropping the shape operand."""

    def patch(model_bytes):
        model = G.parse_model(model_bytes)
        op = find_op(model, "RESHAPE")
        code = schema.OperatorCodeT()
        code.builtinCode = schema.BuiltinOperator.SQUEEZE
        code.deprecatedBuiltinCode = schema.BuiltinOperator.SQUEEZE
        code.version = 1
        model.operatorCodes.append(code)
        op.opcodeIndex = len(model.operatorCodes) - 1
        op.inputs = np.array([op.inputs[0]], dtype=np.int32)
        opts = schema.SqueezeOptionsT()
        opts.squeezeDims = list(squeeze_dims)
        op.builtinOptionsType = schema.BuiltinOptions.SqueezeOptions
        op.builtinOptions = opts
        return G.serialize_model(model)

    return patch


def patch_graph_input_quantization(input_name_suffix, scale_factor, zero_point):
    """Gives the graph input named `serving_default_<suffix>:0` a different scale (× factor)
    and zero point. Used on uint8 CONCATENATION models, whose inputs may be quantized
    differently from the output (int8 CONCATENATION forbids it)."""

    def patch(model_bytes):
        model = G.parse_model(model_bytes)
        sg = model.subgraphs[0]
        for i in sg.inputs:
            t = sg.tensors[i]
            if t.name.decode() == f"serving_default_{input_name_suffix}:0":
                t.quantization.scale = np.array([np.float32(t.quantization.scale[0] * scale_factor)],
                                                dtype=np.float32)
                t.quantization.zeroPoint = np.array([zero_point], dtype=np.int64)
                return G.serialize_model(model)
        raise AssertionError(f"no graph input {input_name_suffix}")

    return patch


# ---------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------

# --- QUANTIZE / DEQUANTIZE --------------------------------------------------
# Every uint8io variant runs QUANTIZE uint8 <-> int8; these add float32 <-> 8-bit
# and an int8 -> int8 requantization between two scales.

add(Case(
    name="quantize_float_roundtrip_1x4x4x3",
    description=("QUANTIZE float32 -> int8 (uint8 in floatio_uint8) of the input, a RESHAPE, and "
                 "DEQUANTIZE back to float32; inputs include values beyond the calibrated range "
                 "(clamped) and values exactly halfway between two steps."),
    build=lambda rng: ((lambda x: tf.reshape(x, (1, 48))), [(1, 4, 4, 3)]),
    expect_ops=["RESHAPE"],
    input_dist=("uniform", -1.3, 1.3),
    variants=("int8", "floatio", "floatio_uint8"),
))
add(Case(
    name="quantize_requantize_int8_concat_shared_input",
    description=("x feeds two CONCATENATIONs whose outputs have different ranges; int8 "
                 "concatenation needs equal scales, so the converter requantizes x for one of them "
                 "with QUANTIZE int8 -> int8 (a true rescale)."),
    build=lambda rng: ((lambda x, y: (tf.concat([x, 5.0 * y], -1), tf.concat([x, 0.2 * y], -1))),
                       [(1, 4, 4, 3), (1, 4, 4, 2)]),
    expect_ops=["QUANTIZE", "MUL", "CONCATENATION", "MUL", "CONCATENATION"],
    variants=("int8", "uint8io", "uint8", "floatio"),
))


# --- Pooling ------------------------------------------------------------------


def add_pool(name, kind, shape, k, s, pad, act="NONE", scale_in=1.0):
    fn = tf.nn.avg_pool2d if kind == "AVERAGE_POOL_2D" else tf.nn.max_pool2d
    acts = {"NONE": lambda t: t, "RELU6": tf.nn.relu6, "RELU": tf.nn.relu}
    ops = (["MUL"] if scale_in != 1.0 else []) + [kind]
    add(Case(
        name=name,
        description=(f"{kind} {k[0]}x{k[1]} stride {s[0]}x{s[1]} {pad} on {shape}, fused {act}"
                     + (f" (input scaled by {scale_in} with MUL first so that the fused clamp bites)"
                        if scale_in != 1.0 else "") + "."),
        build=lambda rng: ((lambda x: acts[act](fn(x * scale_in if scale_in != 1.0 else x, k, s, pad))),
                           [shape]),
        expect_ops=ops,
        expect_options={len(ops) - 1: {"padding": pad, "filterHeight": k[0], "filterWidth": k[1],
                                       "strideH": s[0], "strideW": s[1],
                                       "fusedActivationFunction": act}},
    ))


add_pool("avgpool_2x2_s2_valid_1x6x6x5", "AVERAGE_POOL_2D", (1, 6, 6, 5), (2, 2), (2, 2), "VALID")
add_pool("avgpool_3x3_s1_same_1x5x5x4", "AVERAGE_POOL_2D", (1, 5, 5, 4), (3, 3), (1, 1), "SAME")
add_pool("avgpool_3x3_s2_same_2x7x6x3", "AVERAGE_POOL_2D", (2, 7, 6, 3), (3, 3), (2, 2), "SAME")
add_pool("avgpool_global_7x7_valid_1x7x7x8", "AVERAGE_POOL_2D", (1, 7, 7, 8), (7, 7), (1, 1), "VALID")
add_pool("avgpool_2x3_s2x1_same_relu6_1x5x6x3", "AVERAGE_POOL_2D", (1, 5, 6, 3), (2, 3), (2, 1), "SAME",
         act="RELU6", scale_in=4.0)
add_pool("maxpool_2x2_s2_valid_1x6x6x5", "MAX_POOL_2D", (1, 6, 6, 5), (2, 2), (2, 2), "VALID")
add_pool("maxpool_3x3_s2_same_1x7x7x4", "MAX_POOL_2D", (1, 7, 7, 4), (3, 3), (2, 2), "SAME")
add_pool("maxpool_3x3_s1_same_2x5x4x3", "MAX_POOL_2D", (2, 5, 4, 3), (3, 3), (1, 1), "SAME")
add_pool("maxpool_1x1_s2_valid_1x5x5x3", "MAX_POOL_2D", (1, 5, 5, 3), (1, 1), (2, 2), "VALID")


# --- MEAN ---------------------------------------------------------------------


def add_mean(name, shape, axes, keepdims, dist=("uniform", -1.0, 1.0)):
    add(Case(
        name=name,
        description=(f"MEAN over axes {axes} of {shape}, keep_dims={keepdims}; the output's "
                     "scale and zero point differ from the input's (requantizing mean)."),
        build=lambda rng: ((lambda x: tf.reduce_mean(x, axis=axes, keepdims=keepdims)), [shape]),
        expect_ops=["MEAN"],
        expect_options={0: {"keepDims": keepdims}},
        input_dist=dist,
    ))


add_mean("mean_axes12_keepdims_1x7x7x8", (1, 7, 7, 8), [1, 2], True)
add_mean("mean_axes12_1x5x6x4", (1, 5, 6, 4), [1, 2], False, ("uniform", -0.5, 2.0))
add_mean("mean_axis_m1_2x3x10", (2, 3, 10), [-1], False)
add_mean("mean_axes03_keepdims_3x2x2x5", (3, 2, 2, 5), [0, 3], True, ("normal", 1.0))
add_mean("mean_axis1_2x9x4", (2, 9, 4), [1], True)
# Rows of 16 outputs and more (the lanes of the engine's output stage) with a tail past them.
add_mean("mean_axes12_1x7x7x40", (1, 7, 7, 40), [1, 2], False)
add_mean("mean_axes12_keepdims_2x4x4x33", (2, 4, 4, 33), [1, 2], True, ("normal", 1.0))
# One image's channels summed in registers: passes of 64, 48, 32 and 16 channels, a tail past them.
add_mean("mean_axes12_1x12x10x180", (1, 12, 10, 180), [1, 2], False)
add_mean("mean_axes12_keepdims_1x9x9x96", (1, 9, 9, 96), [1, 2], True, ("normal", 1.0))
add_mean("mean_axes12_1x4x5x17", (1, 4, 5, 17), [1, 2], False, ("uniform", -0.5, 2.0))


# --- SOFTMAX ------------------------------------------------------------------


def add_softmax(name, shape, beta=1.0, dist=("normal", 3.0)):
    patched = beta != 1.0
    add(Case(
        name=name,
        description=(f"SOFTMAX beta={beta} over the last axis of {shape}."
                     + (" The converter never emits beta != 1, so SoftmaxOptions.beta is rewritten "
                        "in the flatbuffer; LiteRT computes the golden." if patched else "")),
        build=lambda rng: ((lambda x: tf.nn.softmax(x)), [shape]),
        expect_ops=["SOFTMAX"],
        expect_options={0: {"beta": np.float32(beta)}},
        input_dist=dist,
        patch=patch_softmax_beta(beta) if patched else None,
        float_check=not patched,
    ))


def patch_softmax_int16_output(model_bytes):
    """Makes the SOFTMAX output int16 with scale 1/65536 and zero point -32768 (the offset
    TFLite's 8-bit-input, int16-output softmax writes)."""
    model = G.parse_model(model_bytes)
    sg = model.subgraphs[0]
    t = sg.tensors[find_op(model, "SOFTMAX").outputs[0]]
    t.type = schema.TensorType.INT16
    t.quantization.scale = np.array([1.0 / 65536], dtype=np.float32)
    t.quantization.zeroPoint = np.array([-32768], dtype=np.int64)
    return G.serialize_model(model)


add_softmax("softmax_1x10", (1, 10))
add_softmax("softmax_2x3x17", (2, 3, 17), dist=("normal", 1.0))
add_softmax("softmax_beta0p5_1x10", (1, 10), beta=0.5)
add_softmax("softmax_beta2p5_3x7", (3, 7), beta=2.5)
add_softmax("softmax_1x1001", (1, 1001), dist=("normal", 4.0))
# Rows of 128 and more (the engine's per-row output tables), with differences past diff_min.
add_softmax("softmax_beta2p5_2x200", (2, 200), beta=2.5, dist=("normal", 2.0))
add(Case(
    name="softmax_int16_output_2x13",
    description=("SOFTMAX of 8-bit input into an int16 output (scale 1/65536, zero point -32768), "
                 "rewritten in the flatbuffer since the converter keeps 8-bit outputs; uint8 "
                 "variant: uint8 -> int16."),
    build=lambda rng: ((lambda x: tf.nn.softmax(x)), [(2, 13)]),
    expect_ops=["SOFTMAX"],
    input_dist=("normal", 2.0),
    variants=("int8", "uint8"),
    patch=patch_softmax_int16_output,
))
add(Case(
    name="softmax_int16_output_1x300",
    description="softmax_int16_output_2x13 with one row of 300 elements.",
    build=lambda rng: ((lambda x: tf.nn.softmax(x)), [(1, 300)]),
    expect_ops=["SOFTMAX"],
    input_dist=("normal", 2.0),
    variants=("int8", "uint8"),
    patch=patch_softmax_int16_output,
))


# --- Elementwise activations --------------------------------------------------


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
add_act("logistic_2x33", "LOGISTIC", tf.math.sigmoid, ("normal", 2.0), shape=(2, 33))
add_act("tanh_1x5x5x7", "TANH", tf.math.tanh, ("uniform", -4.0, 4.0))
add_act("tanh_2x33", "TANH", tf.math.tanh, ("normal", 0.7), shape=(2, 33))
add_act("hard_swish_1x5x5x7", "HARD_SWISH", lambda x: x * tf.nn.relu6(x + 3.0) / 6.0,
        ("uniform", -5.0, 5.0), desc="From x*relu6(x+3)/6.")
add_act("hard_swish_2x33", "HARD_SWISH", lambda x: x * tf.nn.relu6(x + 3.0) / 6.0,
        ("uniform", -8.0, 3.0), shape=(2, 33))
add_act("relu_1x5x5x7", "RELU", tf.nn.relu, ("uniform", -2.0, 2.0),
        desc="Input and output scales differ: RELU requantizes.")
add_act("relu6_1x5x5x7", "RELU6", tf.nn.relu6, ("uniform", -8.0, 9.0))
add_act("relu6_narrow_2x33", "RELU6", tf.nn.relu6, ("uniform", -1.0, 2.0), shape=(2, 33),
        desc="Input range below 6: the upper clamp lies outside the output range.")
add_act("relu_n1_to_1_1x5x5x7", "RELU_N1_TO_1", lambda x: tf.clip_by_value(x, -1.0, 1.0),
        ("uniform", -2.0, 2.0), desc="From tf.clip_by_value(x, -1, 1).")
add_act("leaky_relu_alpha0p2_1x5x5x7", "LEAKY_RELU", lambda x: tf.nn.leaky_relu(x, alpha=0.2),
        ("uniform", -2.0, 2.0), expect_options={"alpha": np.float32(0.2)})
add_act("leaky_relu_alpha_m0p3_2x33", "LEAKY_RELU", lambda x: tf.nn.leaky_relu(x, alpha=-0.3),
        ("uniform", -2.0, 1.0), shape=(2, 33), expect_options={"alpha": np.float32(-0.3)},
        desc="Negative alpha (TFLite multiplies by |alpha| and negates).")


# --- ADD / SUB / MUL ----------------------------------------------------------

BINARY = {"ADD": tf.add, "SUB": tf.subtract, "MUL": tf.multiply}
ACT_FN = {"NONE": lambda t: t, "RELU": tf.nn.relu, "RELU6": tf.nn.relu6,
          "RELU_N1_TO_1": lambda t: tf.clip_by_value(t, -1.0, 1.0)}


def add_binary(name, op, a_shape, b_shape, *, b_const=False, const_first=False, act="NONE", dists=None, desc=""):
    """`const_first` (with `b_const`): the constant is the left operand, `op(constant, x)`."""
    tf_fn = BINARY[op]

    def build(rng):
        if b_const:
            cval = tf.constant(rng.uniform(-1.5, 1.5, size=b_shape).astype(np.float32))
            if const_first:
                return (lambda x: ACT_FN[act](tf_fn(cval, x))), [a_shape]
            return (lambda x: ACT_FN[act](tf_fn(x, cval))), [a_shape]
        return (lambda x, y: ACT_FN[act](tf_fn(x, y))), [a_shape, b_shape]

    operands = (f"constant {b_shape} and runtime {a_shape}" if b_const and const_first
                else f"runtime {a_shape} and constant {b_shape}" if b_const
                else f"runtime {a_shape} and runtime {b_shape}")
    add(Case(
        name=name,
        description=f"{op} of {operands}, fused {act}. {desc}".strip(),
        build=build,
        expect_ops=[op],
        expect_options={0: {"fusedActivationFunction": act}},
        input_dist=dists if dists is not None else ("uniform", -1.0, 1.0),
    ))


add_binary("add_same_shape_1x4x4x3", "ADD", (1, 4, 4, 3), (1, 4, 4, 3),
           dists=[("uniform", -1.0, 1.0), ("uniform", -4.0, 3.0)], desc="Different input scales.")
add_binary("add_bcast_1x4x4x3_3", "ADD", (1, 4, 4, 3), (3,))
add_binary("add_bcast_1x4x4x3_1x4x1x1_relu", "ADD", (1, 4, 4, 3), (1, 4, 1, 1), act="RELU")
add_binary("add_bcast_2x1x5_1x3x1_relu6", "ADD", (2, 1, 5), (1, 3, 1), act="RELU6",
           dists=[("uniform", -4.0, 4.0), ("uniform", 0.0, 5.0)])
add_binary("add_const_1x4x4x3_1x1x1x3", "ADD", (1, 4, 4, 3), (1, 1, 1, 3), b_const=True)
add_binary("add_scalar_const_2x3x5", "ADD", (2, 3, 5), (), b_const=True)
add_binary("sub_same_shape_2x3x5", "SUB", (2, 3, 5), (2, 3, 5),
           dists=[("uniform", -1.0, 1.0), ("uniform", -0.2, 0.6)])
add_binary("sub_bcast_1x4x4x3_3", "SUB", (1, 4, 4, 3), (3,))
add_binary("sub_bcast_2x1x5_1x3x1_relu", "SUB", (2, 1, 5), (1, 3, 1), act="RELU")
add_binary("sub_const_1x4x4x3_4x1x3", "SUB", (1, 4, 4, 3), (4, 1, 3), b_const=True)
add_binary("mul_same_shape_1x4x4x3", "MUL", (1, 4, 4, 3), (1, 4, 4, 3),
           dists=[("uniform", -2.0, 2.0), ("uniform", -0.5, 1.5)])
add_binary("mul_bcast_1x4x4x3_3_relu6", "MUL", (1, 4, 4, 3), (3,), act="RELU6",
           dists=[("uniform", -3.0, 3.0), ("uniform", 0.0, 4.0)])
add_binary("mul_bcast_2x1x5_1x3x1", "MUL", (2, 1, 5), (1, 3, 1))
add_binary("mul_const_1x4x4x3_1x4x1x3", "MUL", (1, 4, 4, 3), (1, 4, 1, 3), b_const=True)
add_binary("mul_bcast_rank1_5_to_2x3x5_relu_n1_to_1", "MUL", (2, 3, 5), (5,), act="RELU_N1_TO_1",
           dists=[("uniform", -2.0, 2.0), ("uniform", -1.0, 1.0)])
# A one-element constant on either side (a Keras Rescaling layer's MUL and ADD): the output is a
# function of the other operand's byte; 768 inputs reach most of the 256.
add_binary("mul_scalar_const_1x16x16x3_relu6", "MUL", (1, 16, 16, 3), (), b_const=True, act="RELU6",
           dists=("uniform", -4.0, 4.0))
add_binary("sub_scalar_const_1x16x16x3", "SUB", (1, 16, 16, 3), (), b_const=True)
add_binary("sub_scalar_const_first_1x16x16x3_relu", "SUB", (1, 16, 16, 3), (1, 1, 1, 1), b_const=True, const_first=True,
           act="RELU")
add_binary("add_scalar_const_first_1x16x16x3", "ADD", (1, 16, 16, 3), (), b_const=True, const_first=True,
           dists=("uniform", -3.0, 2.0))


# --- A convolution and the activation table after it --------------------------


def add_conv_activation(name, act_ops, act_fn, shape, k, stride, *, cout=None, depthwise=False, desc=""):
    """CONV_2D (or DEPTHWISE_CONV_2D, multiplier 1) with bias, then an activation that the
    converter leaves as its own 8-bit operators (HARD_SWISH; a swish's LOGISTIC and MUL), which
    the engine fuses into the convolution's output stores."""
    def build(rng):
        cin = shape[-1]
        w_shape = (k, k, cin, 1) if depthwise else (k, k, cin, cout)
        w = tf.constant(rng.normal(0.0, 1.0 / np.sqrt(k * k * (1 if depthwise else cin)), size=w_shape).astype(np.float32))
        b = tf.constant(rng.normal(0.0, 0.2, size=(cin if depthwise else cout,)).astype(np.float32))

        def f(x):
            if depthwise:
                y = tf.nn.depthwise_conv2d(x, w, [1, stride, stride, 1], "SAME")
            else:
                y = tf.nn.conv2d(x, w, stride, "SAME")
            return act_fn(y + b)
        return f, [shape]
    conv = "DEPTHWISE_CONV_2D" if depthwise else "CONV_2D"
    add(Case(
        name=name,
        description=f"{conv} {k}x{k}/{stride} SAME on {shape} then {'+'.join(act_ops)}. {desc}".strip(),
        build=build,
        expect_ops=[conv] + act_ops,
        input_dist=("uniform", -2.0, 2.0),
        # Per-channel int8 weights: TFLite's uint8 convolutions take per-tensor weights only.
        variants=("int8", "uint8io"),
    ))


def _swish(x):
    return x * tf.math.sigmoid(x)


def _hard_swish(x):
    return x * tf.nn.relu6(x + 3.0) / 6.0


add_conv_activation("conv_swish_1x9x11x5_k3s1_c40", ["LOGISTIC", "MUL"], _swish, (1, 9, 11, 5), 3, 1, cout=40,
                    desc="A swish (EfficientNet's).")
add_conv_activation("conv_hard_swish_1x8x8x24_k1s1_c72", ["HARD_SWISH"], _hard_swish, (1, 8, 8, 24), 1, 1, cout=72,
                    desc="A 1x1 expansion with hard-swish (MobileNetV3's).")
add_conv_activation("dwconv_swish_1x10x9x48_k3s2", ["LOGISTIC", "MUL"], _swish, (1, 10, 9, 48), 3, 2, depthwise=True,
                    desc="A depthwise layer with its swish, channels past one 16-lane block.")
add_conv_activation("dwconv_hard_swish_1x7x12x20_k5s1", ["HARD_SWISH"], _hard_swish, (1, 7, 12, 20), 5, 1, depthwise=True,
                    desc="A 5x5 depthwise layer with hard-swish.")


# --- CONCATENATION ------------------------------------------------------------


def add_concat(name, shapes, axis, gains, uint8_rescale=None, desc=""):
    """Concatenates input_i * gains[i] (a MUL when gain != 1). `uint8_rescale` =
    (input suffix, scale factor, zero point): in the uint8 variant that graph input, which
    feeds the CONCATENATION directly, gets other quantization parameters."""
    ops = ["MUL"] * sum(g != 1.0 for g in gains) + ["CONCATENATION"]

    def build(rng):
        def f(*xs):
            return tf.concat([x * g if g != 1.0 else x for x, g in zip(xs, gains)], axis=axis)
        return f, list(shapes)

    add(Case(
        name=name,
        description=(f"CONCATENATION along axis {axis} of {shapes} scaled by {gains}. {desc}").strip(),
        build=build,
        expect_ops=ops,
        expect_options={len(ops) - 1: {"axis": axis}},
        uint8_patch=patch_graph_input_quantization(*uint8_rescale) if uint8_rescale else None,
    ))


add_concat("concat_axis3_1x4x4x3_1x4x4x2", [(1, 4, 4, 3), (1, 4, 4, 2)], 3, [1.0, 1.0])
add_concat("concat_axis_m1_gains_1x3x3x2_x3", [(1, 3, 3, 2)] * 3, -1, [1.0, 4.0, 0.5],
           desc="The converter gives every operand the output's scale.")
add_concat("concat_axis1_2x3x4_2x2x4", [(2, 3, 4), (2, 2, 4)], 1, [1.0, 1.0],
           uint8_rescale=("in_1", 0.37, 200),
           desc=("uint8 variant: the second input is requantized to scale x0.37 and zero point "
                 "200, so uint8 CONCATENATION rescales it (TFLite's ConcatenationWithScaling); "
                 "int8 CONCATENATION rejects differing scales."))
add_concat("concat_axis0_3x5_2x5_4x5", [(3, 5), (2, 5), (4, 5)], 0, [1.0, 1.0, 1.0],
           uint8_rescale=("in_0", 2.5, 3),
           desc="uint8 variant: the first input is requantized (scale x2.5, zero point 3).")


# --- Shape-only operators -----------------------------------------------------


def add_shape_op(name, op, fn, shape, desc="", patch=None, expect_options=None):
    add(Case(
        name=name,
        description=f"{op} on {shape}. {desc}".strip(),
        build=lambda rng: (fn, [shape] if not isinstance(shape, list) else shape),
        expect_ops=[op],
        expect_options={0: expect_options} if expect_options else {},
        patch=patch,
    ))


add_shape_op("reshape_1x4x4x3_to_2x24", "RESHAPE", lambda x: tf.reshape(x, (2, 24)), (1, 4, 4, 3))
add_shape_op("squeeze_dims_0_2_1x4x1x3", "SQUEEZE", lambda x: tf.squeeze(x, [0, 2]), (1, 4, 1, 3),
             desc="Converted as RESHAPE and rewritten into SQUEEZE.",
             patch=patch_reshape_to_squeeze([0, 2]))
add_shape_op("pad_spatial_1x4x5x3", "PAD", lambda x: tf.pad(x, [[0, 0], [1, 2], [2, 1], [0, 0]]),
             (1, 4, 5, 3), desc="Padded with the zero point.")
add_shape_op("padv2_value0p5_1x3x3x2", "PADV2",
             lambda x: tf.pad(x, [[0, 0], [1, 1], [0, 2], [1, 0]], constant_values=0.5), (1, 3, 3, 2),
             desc="tf.pad with constant_values=0.5: an int8 constant pad value.")
add_shape_op("pack_axis1_2x3", "PACK", lambda x, y: tf.stack([x, y], 1), [(2, 3), (2, 3)])
add_shape_op("strided_slice_negative_stride_1x5x6x3", "STRIDED_SLICE",
             lambda x: x[:, ::-1, 1:5:2, :], (1, 5, 6, 3))


# --- RESIZE_BILINEAR ----------------------------------------------------------


def add_resize(name, in_shape, size, align_corners, half_pixel):
    add(Case(
        name=name,
        description=(f"RESIZE_BILINEAR {in_shape} -> {size}, align_corners={align_corners}, "
                     f"half_pixel_centers={half_pixel}. int8 runs TFLite's integer kernel, uint8 "
                     "its float kernel."),
        build=lambda rng: ((lambda x: tf.compat.v1.image.resize_bilinear(
            x, size, align_corners=align_corners, half_pixel_centers=half_pixel)), [in_shape]),
        expect_ops=["RESIZE_BILINEAR"],
        expect_options={0: {"alignCorners": align_corners, "halfPixelCenters": half_pixel}},
    ))


add_resize("resize_bilinear_up_4x5_to_7x9", (1, 4, 5, 3), [7, 9], False, False)
add_resize("resize_bilinear_up_4x5_to_7x9_align_corners", (1, 4, 5, 3), [7, 9], True, False)
add_resize("resize_bilinear_up_4x5_to_7x9_half_pixel", (1, 4, 5, 3), [7, 9], False, True)
add_resize("resize_bilinear_up2x_3x3_to_6x6_half_pixel", (1, 3, 3, 4), [6, 6], False, True)
add_resize("resize_bilinear_down_8x9_to_3x4", (1, 8, 9, 3), [3, 4], False, False)
add_resize("resize_bilinear_down_8x9_to_3x4_half_pixel", (2, 8, 9, 2), [3, 4], False, True)
add_resize("resize_bilinear_down_8x9_to_3x4_align_corners", (1, 8, 9, 3), [3, 4], True, False)


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


def dists_for(case, n):
    return case.input_dist if isinstance(case.input_dist, list) else [case.input_dist] * n


def convert(case: Case, fn, shapes, io_type, test_inputs):
    specs = [tf.TensorSpec(s, tf.float32, name=f"in_{i}") for i, s in enumerate(shapes)]
    module = tf.Module()
    module.f = tf.function(fn, input_signature=specs, autograph=False)
    conv = tf.lite.TFLiteConverter.from_concrete_functions([module.f.get_concrete_function()], module)
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    dists = dists_for(case, len(shapes))

    def representative():
        # The test inputs come first, so that the golden run stays inside the calibrated ranges.
        # Keyed by name: a plain list would be matched to the converted model's input order,
        # which need not be the function's argument order.
        yield {f"in_{i}": x for i, x in enumerate(test_inputs)}
        rng = np.random.default_rng(G.seed_for(case.name, "calibration"))
        for _ in range(CALIBRATION_BATCHES - 1):
            yield {f"in_{i}": draw(rng, s, d) for i, (s, d) in enumerate(zip(shapes, dists))}

    conv.representative_dataset = representative
    conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    if io_type is not None:
        conv.inference_input_type = io_type
        conv.inference_output_type = io_type
    return conv.convert()


def make_model(case: Case, fn, shapes, variant: str, test_inputs) -> bytes:
    io = {"int8": tf.int8, "uint8io": tf.uint8, "uint8": tf.int8,
          "floatio": None, "floatio_uint8": None}[variant]
    model_bytes = convert(case, fn, shapes, io, test_inputs)
    if case.patch is not None:
        model_bytes = case.patch(model_bytes)
    if variant in ("uint8", "floatio_uint8"):
        model_bytes = to_uint8(model_bytes)
        if case.uint8_patch is not None:
            model_bytes = case.uint8_patch(model_bytes)
    return model_bytes


def verify_structure(case: Case, variant: str, model_bytes: bytes, executed: list) -> None:
    ops = G.describe_ops(model_bytes)
    names = [o["op"] for o in ops]
    if names != executed:
        raise AssertionError(f"{case.name}/{variant}: flatbuffer ops {names} != executed {executed}")
    core = ops
    expected = case.expect_ops
    if variant in ("uint8io", "floatio", "floatio_uint8"):
        # The converter's input/output conversions (QUANTIZE, DEQUANTIZE) may merge with the
        # case's own requantizations, so compare the other operators only.
        conversions = ("QUANTIZE", "DEQUANTIZE")
        if "QUANTIZE" not in names or (variant.startswith("floatio") and "DEQUANTIZE" not in names):
            raise AssertionError(f"{case.name}/{variant}: no input/output conversion in {names}")
        core = [o for o in ops if o["op"] not in conversions]
        expected = [n for n in case.expect_ops if n not in conversions]
    core_names = [o["op"] for o in core]
    if core_names != expected:
        raise AssertionError(f"{case.name}/{variant}: ops {names}, expected {case.expect_ops}")
    for idx, want in case.expect_options.items():
        position = idx if core is ops else sum(n not in conversions for n in case.expect_ops[:idx + 1]) - 1
        have = core[position]["options"]
        for k, v in want.items():
            if k not in have or (have[k] != v and not (isinstance(v, float) and np.float32(have[k]) == v)):
                raise AssertionError(f"{case.name}/{variant}: op {idx} option {k}={have.get(k)!r}, "
                                     f"want {v!r} (all: {have})")
    want_type = {"int8": "INT8", "uint8io": "INT8", "uint8": "UINT8", "floatio": "INT8",
                 "floatio_uint8": "UINT8"}[variant]
    for o in core:
        for t in o["inputs"] + o["outputs"]:
            if t is not None and t["type"] not in (want_type, "INT32", "INT16"):
                raise AssertionError(f"{case.name}/{variant}: operand of type {t['type']}, expected {want_type}")


def quantize_inputs(floats, details):
    out = []
    for x, d in zip(floats, details):
        if d["dtype"] == np.float32:
            out.append(x)
            continue
        scale, zp = d["quantization"]
        info = np.iinfo(d["dtype"])
        q = np.clip(np.round(x.astype(np.float64) / scale) + zp, info.min, info.max)
        out.append(q.astype(d["dtype"]))
    return out


def with_rounding_ties(interp, floats):
    """Float inputs whose first elements sit exactly halfway between two quantization steps of
    the QUANTIZE that consumes them (k + 0.5 steps from the zero point, k = -6 ... 5), so that
    the fixtures pin the rounding rule (half away from zero)."""
    tensors = {t["index"]: t for t in interp.get_tensor_details()}
    consumers = {}
    for op in interp._get_ops_details():
        if op["op_name"] == "QUANTIZE":
            consumers[int(op["inputs"][0])] = tensors[int(op["outputs"][0])]["quantization"]
    out = []
    for x, det in zip(floats, interp.get_input_details()):
        scale, zp = consumers[det["index"]]
        x = x.copy()
        flat = x.reshape(-1)
        ties = np.array([(k + 0.5) * scale for k in range(-6, 6)], dtype=np.float32)
        if not np.all(np.abs((ties / np.float32(scale)) % 1) == 0.5):
            raise AssertionError("tie values do not divide to exact halves")
        flat[: len(ties)] = ties
        out.append(x)
    return out


def dequantize(arr, detail):
    if arr.dtype == np.float32:
        return arr.astype(np.float64)
    scale, zp = detail["quantization"]
    return (arr.astype(np.float64) - zp) * scale


def run_default_runtime(model_bytes, inputs):
    """LiteRT's default runtime: optimized kernels with the XNNPACK delegate applied."""
    interp = Interpreter(model_content=model_bytes, experimental_op_resolver_type=OpResolverType.AUTO,
                         num_threads=1)
    interp.allocate_tensors()
    for det, arr in zip(interp.get_input_details(), inputs):
        interp.set_tensor(det["index"], arr)
    interp.invoke()
    return [np.array(interp.get_tensor(d["index"])) for d in interp.get_output_details()]


def float_check(case, fn, float_inputs_by_arg, outputs, details) -> str:
    """Dequantized golden vs TensorFlow float, in output quantization steps."""
    res = fn(*[tf.constant(a) for a in float_inputs_by_arg])
    expected = [np.asarray(r, np.float64) for r in (res if isinstance(res, (tuple, list)) else [res])]
    worst_steps = 0.0
    for out, det in zip(outputs, details):
        cands = [e for e in expected if e.shape == out.shape]
        if not cands:
            raise AssertionError(f"{case.name}: no TF output with shape {out.shape}")
        got = dequantize(out, det)
        step = det["quantization"][0] if out.dtype != np.float32 else 0.0
        span = max(float(np.ptp(c)) for c in cands)
        err = min(float(np.max(np.abs(got - c))) for c in cands)
        # A few steps of output quantization plus the error the quantized inputs carry.
        bound = 4 * step + 0.03 * max(span, 1e-6)
        if err > bound:
            raise AssertionError(f"{case.name}: dequantized golden differs from TF float by {err:.4g} "
                                 f"(bound {bound:.4g})")
        if step > 0:
            worst_steps = max(worst_steps, err / step)
    return f"tf-check={worst_steps:.1f} steps"


def generate(case: Case, variant: str):
    rng = np.random.default_rng(G.seed_for(case.name, "weights"))
    fn, shapes = case.build(rng)
    in_rng = np.random.default_rng(G.seed_for(case.name, "inputs"))
    by_arg = [draw(in_rng, s, d) for s, d in zip(shapes, dists_for(case, len(shapes)))]
    model_bytes = make_model(case, fn, shapes, variant, by_arg)

    interp = G.make_interpreter(model_bytes)
    in_details, out_details = interp.get_input_details(), interp.get_output_details()
    arg_of = [int(d["name"].split("in_")[-1].split(":")[0]) for d in in_details]
    floats = [by_arg[a] for a in arg_of]
    if variant.startswith("floatio"):
        floats = with_rounding_ties(interp, floats)
        for a, x in zip(arg_of, floats):
            by_arg[a] = x
    inputs = quantize_inputs(floats, in_details)

    outputs, executed = G.run_model(model_bytes, inputs)
    verify_structure(case, variant, model_bytes, executed)
    for i, o in enumerate(outputs):
        if o.size > 1 and np.all(o == o.flat[0]):
            raise AssertionError(f"{case.name}/{variant}: output {i} is constant ({o.flat[0]})")
    again, _ = G.run_model(model_bytes, inputs)
    if any(not np.array_equal(a, b) for a, b in zip(outputs, again)):
        raise AssertionError(f"{case.name}/{variant}: reference run is not deterministic")
    check = (float_check(case, fn, by_arg, outputs, out_details)
             if case.float_check and variant != "uint8" else "tf-check=skipped")

    fast = run_default_runtime(model_bytes, inputs)
    xnn = 0.0
    for a, b in zip(fast, outputs):
        xnn = max(xnn, float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))))
    xnn = int(xnn) if all(o.dtype != np.float32 for o in outputs) else xnn

    io = {"inputs": [{"name": d["name"], "shape": [int(x) for x in d["shape"]],
                      "dtype": np.dtype(d["dtype"]).name} for d in in_details],
          "outputs": [{"name": d["name"], "shape": [int(x) for x in d["shape"]],
                       "dtype": np.dtype(d["dtype"]).name} for d in out_details]}
    return model_bytes, inputs, outputs, G.unique_in_order(executed), xnn, io, check


VARIANT_NOTES = {
    "int8": "int8 model with int8 inputs and outputs.",
    "uint8io": ("int8 model with uint8 inputs and outputs (converter-added QUANTIZE uint8 -> int8 "
                "and int8 -> uint8 around the int8 operators)."),
    "uint8": "The int8 model rewritten into a true uint8 per-tensor model (zero points + 128).",
    "floatio": ("int8 model with float32 inputs and outputs (converter-added QUANTIZE float32 -> "
                "int8 and DEQUANTIZE int8 -> float32)."),
    "floatio_uint8": ("The floatio model rewritten to uint8: QUANTIZE float32 -> uint8 and "
                      "DEQUANTIZE uint8 -> float32 around true uint8 operators."),
}


def main(argv):
    # Calibration with named inputs goes through TensorFlow's deprecated interpreter, which
    # warns once per conversion.
    warnings.filterwarnings("ignore", message=".*scheduled for deletion.*")
    filters = argv[1:]
    jobs = [(c, v) for c in CASES for v in c.variants
            if not filters or any(f in f"{c.name}_{v}" for f in filters)]
    G.reset_dir(OUT_DIR)
    manifest_cases = []
    for case, variant in jobs:
        name = f"{case.name}_{variant}"
        model_bytes, inputs, outputs, ops, xnn, io, check = generate(case, variant)
        G.write_case(OUT_DIR, name, model_bytes, inputs, outputs)
        entry = {"name": name, "ops": ops, "tolerance": 0, "resolver": "BUILTIN_REF",
                 "xnnpack_max_diff": xnn,
                 "description": f"{case.description} Variant {variant}: {VARIANT_NOTES[variant]}"}
        entry.update(io)
        manifest_cases.append(entry)
        out_desc = ", ".join(f"{list(o.shape)} {o.dtype} [{o.min()}, {o.max()}]" for o in outputs)
        print(f"{name:70s} {len(model_bytes):6d} B  ops={ops}  out={out_desc}  xnnpack-diff={xnn}  {check}",
              flush=True)
    G.write_manifest(OUT_DIR, G.origin(GENERATOR), manifest_cases)
    total = G.dir_size(OUT_DIR)
    print(f"\n{len(manifest_cases)} cases written to {OUT_DIR.relative_to(G.REPO_ROOT)}")
    print(f"total fixture size: {total} bytes ({total / 1e6:.3f} MB)")
    if not filters and total > SIZE_BUDGET_BYTES:
        raise SystemExit(f"fixture size {total} exceeds budget {SIZE_BUDGET_BYTES}")


if __name__ == "__main__":
    main(sys.argv)
