#!/usr/bin/env python3
"""Golden values for SwiftLite's quantization helpers, taken from TFLite itself.

Every value in the output comes from running a single-op quantized model through
the LiteRT (TFLite) interpreter with the BUILTIN_REF op resolver, i.e. TFLite's
reference kernels -- nothing here re-implements the arithmetic:

* requantize: QUANTIZE int32 -> int16 (zero points 0). The reference kernel
  computes clamp(MultiplyByQuantizedMultiplier(x, QuantizeMultiplier(s_in / s_out)))
  so it pins down QuantizeMultiplier and MultiplyByQuantizedMultiplier.
* lut: uint8/int8 LOGISTIC and TANH over all 256 inputs (the lookup tables).
* hard_swish: uint8/int8 HARD_SWISH over all 256 inputs.
* softmax: uint8/int8 SOFTMAX (uint8, int8 and int16 outputs) on random rows.

Output: Tests/EngineTests/Fixtures/quant_math/goldens.json, read by
Tests/EngineTests/QuantizationTests.swift. The run is deterministic (fixed seed):
two runs give byte-identical files. It needs only ai-edge-litert, numpy and
flatbuffers from the root requirements.txt (not TensorFlow), and takes ~2 s.

    /work/venv/bin/python Tests/Goldens/make_quant_math_goldens.py   # from the repository root
"""

import json
from importlib import metadata
from pathlib import Path

import flatbuffers
import numpy as np
from ai_edge_litert import schema_py_generated as schema
from ai_edge_litert.interpreter import Interpreter, OpResolverType

TYPES = {
    "uint8": (schema.TensorType.UINT8, np.uint8),
    "int8": (schema.TensorType.INT8, np.int8),
    "int16": (schema.TensorType.INT16, np.int16),
    "int32": (schema.TensorType.INT32, np.int32),
}


def f32(x):
    """The float32 value TFLite will see, as a Python float (exact in JSON)."""
    return float(np.float32(x))


def tensor(name, type_name, shape, scale, zero_point, buffer_index):
    quant = schema.QuantizationParametersT()
    quant.scale = [f32(scale)]
    quant.zeroPoint = [int(zero_point)]
    t = schema.TensorT()
    t.name = name
    t.type = TYPES[type_name][0]
    t.shape = list(shape)
    t.buffer = buffer_index
    t.quantization = quant
    return t


def single_op_model(op, in_tensor, out_tensor, options_type=0, options=None):
    code = schema.OperatorCodeT()
    code.builtinCode = op
    code.deprecatedBuiltinCode = op if op < 127 else 127
    code.version = 1
    operator = schema.OperatorT()
    operator.opcodeIndex = 0
    operator.inputs = [0]
    operator.outputs = [1]
    operator.builtinOptionsType = options_type
    operator.builtinOptions = options
    subgraph = schema.SubGraphT()
    subgraph.tensors = [in_tensor, out_tensor]
    subgraph.inputs = [0]
    subgraph.outputs = [1]
    subgraph.operators = [operator]
    model = schema.ModelT()
    model.version = 3
    model.operatorCodes = [code]
    model.subgraphs = [subgraph]
    model.buffers = [schema.BufferT(), schema.BufferT(), schema.BufferT()]
    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def run(op, in_type, out_type, values, shape, in_q, out_q, options_type=0, options=None):
    model = single_op_model(
        op,
        tensor("input", in_type, shape, in_q[0], in_q[1], 1),
        tensor("output", out_type, shape, out_q[0], out_q[1], 2),
        options_type,
        options,
    )
    interpreter = Interpreter(
        model_content=model, experimental_op_resolver_type=OpResolverType.BUILTIN_REF
    )
    interpreter.allocate_tensors()
    data = np.array(values, dtype=TYPES[in_type][1]).reshape(shape)
    interpreter.set_tensor(interpreter.get_input_details()[0]["index"], data)
    interpreter.invoke()
    out = interpreter.get_tensor(interpreter.get_output_details()[0]["index"])
    return [int(v) for v in out.reshape(-1)]


def type_range(type_name):
    info = np.iinfo(TYPES[type_name][1])
    return list(range(int(info.min), int(info.max) + 1))


def requantize_cases(rng):
    cases = []
    scale_pairs = [
        (1.0, 1.0), (1.0, 2.0), (0.5, 0.75), (1e-3, 0.37), (3e-6, 1.0), (2.5e-9, 1.0),
        (0.1, 0.1000001), (1.0, 3.0), (7.3, 1.0), (100.0, 1.0), (0.0078125, 0.00390625),
        (1.0, 1.9999999), (4.6566e-10, 1.0), (1.1e-10, 1.0),
    ]
    edges = [0, 1, -1, 2, -2, 3, -3, 5, -5, 7, -7, 255, -255, 32767, -32768,
             2**20, -(2**20), 2**30, -(2**30), 2**31 - 1, -(2**31)]
    for s_in, s_out in scale_pairs:
        ratio = np.float64(f32(s_in)) / np.float64(f32(s_out))
        # Inputs whose result mostly stays inside int16, plus edges.
        bound = int(min(2**31 - 1, max(1, 40000 / ratio)))
        randoms = rng.integers(-bound, bound, size=200, endpoint=True).tolist()
        values = edges + [int(v) for v in randoms]
        outputs = run(schema.BuiltinOperator.QUANTIZE, "int32", "int16", values,
                      [len(values)], (s_in, 0), (s_out, 0))
        cases.append({"input_scale": f32(s_in), "output_scale": f32(s_out),
                      "inputs": values, "outputs": outputs})
    return cases


def lut_cases():
    cases = []
    logistic = [
        ("uint8", 0.1, 128, 1 / 256, 0), ("uint8", 0.0235, 37, 1 / 256, 0),
        ("uint8", 0.5, 200, 1 / 256, 0), ("int8", 0.1, 0, 1 / 256, -128),
        ("int8", 0.0625, -20, 1 / 256, -128), ("int8", 0.013, 5, 1 / 256, -128),
    ]
    tanh = [
        ("uint8", 0.05, 128, 1 / 128, 128), ("uint8", 0.031, 90, 0.0079, 120),
        ("int8", 0.05, 0, 1 / 128, 0), ("int8", 0.021, -7, 0.0077, 3),
    ]
    for op_name, op, params in (("LOGISTIC", schema.BuiltinOperator.LOGISTIC, logistic),
                                ("TANH", schema.BuiltinOperator.TANH, tanh)):
        for type_name, s_in, zp_in, s_out, zp_out in params:
            values = type_range(type_name)
            outputs = run(op, type_name, type_name, values, [len(values)],
                          (s_in, zp_in), (s_out, zp_out))
            cases.append({"op": op_name, "type": type_name,
                          "input_scale": f32(s_in), "input_zero_point": zp_in,
                          "output_scale": f32(s_out), "output_zero_point": zp_out,
                          "outputs": outputs})
    return cases


def hard_swish_cases():
    cases = []
    params = [
        ("uint8", 0.1, 128, 0.05, 20), ("uint8", 0.03, 100, 0.02, 10),
        ("uint8", 0.2, 50, 0.15, 5), ("uint8", 0.0125, 128, 0.008, 0),
        ("int8", 0.1, 0, 0.05, -108), ("int8", 0.047, -30, 0.031, -118),
        ("int8", 2.5, 3, 1.7, -100), ("int8", 0.004, 10, 0.0031, -60),
    ]
    for type_name, s_in, zp_in, s_out, zp_out in params:
        values = type_range(type_name)
        outputs = run(schema.BuiltinOperator.HARD_SWISH, type_name, type_name, values,
                      [len(values)], (s_in, zp_in), (s_out, zp_out))
        cases.append({"type": type_name, "input_scale": f32(s_in), "input_zero_point": zp_in,
                      "output_scale": f32(s_out), "output_zero_point": zp_out,
                      "outputs": outputs})
    return cases


def softmax_cases(rng):
    cases = []
    params = [
        ("uint8", "uint8", 1.0, 1 / 256, 0, 1 / 256, 0, 4, 10),
        ("uint8", "uint8", 1.0, 0.1, 128, 1 / 256, 0, 3, 37),
        ("uint8", "uint8", 0.5, 0.05, 100, 1 / 256, 0, 3, 5),
        ("int8", "int8", 1.0, 0.1, 0, 1 / 256, -128, 4, 10),
        ("int8", "int8", 1.0, 0.0625, 12, 1 / 256, -128, 3, 100),
        ("int8", "int8", 2.0, 0.3, -5, 1 / 256, -128, 2, 7),
        ("int8", "int16", 1.0, 0.1, 0, 1 / 32768, -32768, 3, 16),
        ("uint8", "int16", 1.0, 0.05, 128, 1 / 32768, -32768, 2, 9),
    ]
    for in_type, out_type, beta, s_in, zp_in, s_out, zp_out, rows, depth in params:
        lo, hi = np.iinfo(TYPES[in_type][1]).min, np.iinfo(TYPES[in_type][1]).max
        data = rng.integers(lo, hi, size=(rows, depth), endpoint=True)
        data[0, :] = data[0, 0]  # a row of equal values
        values = [int(v) for v in data.reshape(-1)]
        options = schema.SoftmaxOptionsT()
        options.beta = beta
        outputs = run(schema.BuiltinOperator.SOFTMAX, in_type, out_type, values,
                      [rows, depth], (s_in, zp_in), (s_out, zp_out),
                      schema.BuiltinOptions.SoftmaxOptions, options)
        cases.append({"input_type": in_type, "output_type": out_type, "beta": f32(beta),
                      "input_scale": f32(s_in), "input_zero_point": zp_in,
                      "output_scale": f32(s_out), "output_zero_point": zp_out,
                      "rows": rows, "depth": depth, "inputs": values, "outputs": outputs})
    return cases


OUTPUT = (Path(__file__).resolve().parents[2]
          / "Tests" / "EngineTests" / "Fixtures" / "quant_math" / "goldens.json")


def main():
    rng = np.random.default_rng(20240601)
    goldens = {
        "origin": {
            "generator": "Tests/Goldens/make_quant_math_goldens.py",
            "runtime": f"ai-edge-litert {metadata.version('ai-edge-litert')}",
            "numpy": np.__version__,
            "resolver": "BUILTIN_REF",
        },
        "requantize": requantize_cases(rng),
        "lut": lut_cases(),
        "hard_swish": hard_swish_cases(),
        "softmax": softmax_cases(rng),
    }
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    with open(OUTPUT, "w") as f:
        json.dump(goldens, f, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {OUTPUT} ({OUTPUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
