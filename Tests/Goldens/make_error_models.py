"""Writes tiny single-operator .tflite models that break an operator's rules, for the engine's
prepare-error tests (Tests/EngineTests/FloatKernelEdgeTests.swift).

The converter never produces such models, so each one is assembled directly with the TFLite
schema's object API. Every model is also handed to LiteRT (BUILTIN_REF): the script stops if LiteRT
accepts one, so each fixture is invalid for the reference runtime too, not just for SwiftLite.

Usage: /work/venv/bin/python Tests/Goldens/make_error_models.py
Output: Tests/EngineTests/Fixtures/errors/<name>.tflite
"""

from __future__ import annotations

import numpy as np

import golden_io as G

schema = G.schema
OUT_DIR = G.FIXTURES_ROOT / "errors"

F32, I32 = schema.TensorType.FLOAT32, schema.TensorType.INT32
NUMPY = {F32: np.float32, I32: np.int32}


def tensor(name, shape, type_=F32, data=None):
    """A tensor spec; `data` (an array-like) makes it a constant."""
    return {"name": name, "shape": shape, "type": type_, "data": data}


def single_op_model(op, options_type, options, inputs, outputs):
    """A model whose only subgraph runs one builtin operator.

    `inputs` may contain None for an omitted optional input (-1). Non-constant inputs become the
    subgraph's inputs; the operator's outputs become its outputs.
    """
    model = schema.ModelT()
    model.version = 3
    model.description = "SwiftLite error fixture"
    code = schema.OperatorCodeT()
    code.builtinCode = op
    code.deprecatedBuiltinCode = min(op, 127)
    code.version = 1
    model.operatorCodes = [code]
    model.buffers = [schema.BufferT()]  # buffer 0: the schema's empty sentinel

    sg = schema.SubGraphT()
    sg.tensors, sg.inputs = [], []

    def add(spec):
        t = schema.TensorT()
        t.name, t.shape, t.type = spec["name"], list(spec["shape"]), spec["type"]
        t.buffer = 0
        if spec["data"] is not None:
            buf = schema.BufferT()
            arr = np.asarray(spec["data"], dtype=NUMPY[spec["type"]]).reshape(spec["shape"])
            buf.data = np.frombuffer(arr.astype(arr.dtype.newbyteorder("<")).tobytes(), dtype=np.uint8)
            model.buffers.append(buf)
            t.buffer = len(model.buffers) - 1
        sg.tensors.append(t)
        index = len(sg.tensors) - 1
        if spec["data"] is None and spec not in outputs:
            sg.inputs.append(index)
        return index

    operator = schema.OperatorT()
    operator.opcodeIndex = 0
    operator.inputs = [-1 if spec is None else add(spec) for spec in inputs]
    operator.outputs = [add(spec) for spec in outputs]
    operator.builtinOptionsType = options_type
    operator.builtinOptions = options
    sg.outputs = list(operator.outputs)
    sg.operators = [operator]
    sg.name = "main"
    model.subgraphs = [sg]
    return G.serialize_model(model)


def fully_connected(input_shape, weights_shape, output_shape, *, weights_format=0, keep_num_dims=False):
    o = schema.FullyConnectedOptionsT()
    o.weightsFormat, o.keepNumDims = weights_format, keep_num_dims
    units = weights_shape[0]
    rng = np.random.default_rng(0)
    return single_op_model(
        schema.BuiltinOperator.FULLY_CONNECTED, schema.BuiltinOptions.FullyConnectedOptions, o,
        [tensor("input", input_shape),
         tensor("weights", weights_shape, data=rng.standard_normal(weights_shape)),
         tensor("bias", [units], data=np.zeros(units))],
        [tensor("output", output_shape)])


def mean(input_shape, axes, output_shape, *, constant_axes=True):
    o = schema.ReducerOptionsT()
    o.keepDims = False
    return single_op_model(
        schema.BuiltinOperator.MEAN, schema.BuiltinOptions.ReducerOptions, o,
        [tensor("input", input_shape),
         tensor("axes", [len(axes)], I32, data=axes if constant_axes else None)],
        [tensor("output", output_shape)])


def max_pool(input_shape, filter_hw, stride, padding, output_shape):
    o = schema.Pool2DOptionsT()
    o.padding = padding
    o.filterHeight, o.filterWidth = filter_hw
    o.strideH = o.strideW = stride
    return single_op_model(
        schema.BuiltinOperator.MAX_POOL_2D, schema.BuiltinOptions.Pool2DOptions, o,
        [tensor("input", input_shape)], [tensor("output", output_shape)])


def softmax(input_shape):
    o = schema.SoftmaxOptionsT()
    o.beta = 1.0
    return single_op_model(
        schema.BuiltinOperator.SOFTMAX, schema.BuiltinOptions.SoftmaxOptions, o,
        [tensor("input", input_shape)], [tensor("output", input_shape)])


# name: (model, whether LiteRT must reject it too). Models LiteRT runs either are valid TFLite that
# the engine does not support, or break a rule that LiteRT leaves unchecked (noted at the case).
CASES = {
    # 2·5 = 10 input elements cannot be split into rows of the weights' depth 4. LiteRT 2.3 does not
    # check this: it runs 10 // 4 = 2 rows and silently ignores the last 2 elements.
    "fully_connected_depth_not_dividing": (fully_connected([2, 5], [3, 4], [2, 3]), False),
    # 48 elements do split into rows of 4, but keep_num_dims needs the last dimension to be 4.
    "fully_connected_keep_num_dims_mismatch":
        (fully_connected([2, 3, 8], [5, 4], [2, 3, 5], keep_num_dims=True), True),
    # weights_format 1 = SHUFFLED4x16INT8, which LiteRT only implements for uint8 inputs.
    "fully_connected_shuffled_weights": (fully_connected([1, 16], [4, 16], [1, 4], weights_format=1), True),
    "mean_axis_out_of_range": (mean([1, 4, 4, 3], [1, 4], [1, 4]), True),
    # Axes computed at run time: valid TFLite, unsupported by the engine (shapes are fixed at prepare).
    "mean_axes_not_constant": (mean([1, 4, 4, 3], [1, 2], [1, 3], constant_axes=False), False),
    # A 5×5 window cannot be placed inside a 3×3 input without padding. LiteRT 2.3 runs it and
    # produces an empty [1, 0, 0, 2] output; the engine rejects it.
    "max_pool_filter_larger_than_input_valid":
        (max_pool([1, 3, 3, 2], (5, 5), 1, schema.Padding.VALID, [1, 1, 1, 2]), False),
    "softmax_scalar_input": (softmax([]), True),
}


def litert_rejects(model_bytes: bytes) -> bool:
    try:
        interp = G.make_interpreter(model_bytes)  # allocates, i.e. runs every Prepare
        interp.invoke()  # some checks (dynamic shapes) only run here
    except Exception:  # LiteRT raises RuntimeError/ValueError with its own message
        return True
    return False


def main() -> None:
    G.reset_dir(OUT_DIR)
    for name, (model_bytes, must_reject) in CASES.items():
        rejected = litert_rejects(model_bytes)
        if must_reject and not rejected:
            raise SystemExit(f"{name}: LiteRT accepts this model, so it is no error fixture")
        (OUT_DIR / f"{name}.tflite").write_bytes(model_bytes)
        print(f"wrote {name}.tflite ({len(model_bytes)} bytes), {'rejected' if rejected else 'run'} by LiteRT")


if __name__ == "__main__":
    main()
