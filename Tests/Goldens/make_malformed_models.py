"""Writes deliberately broken .tflite files for the engine's error tests.

Each file starts from one small valid model (CONV_2D -> MAX_POOL_2D) converted by TensorFlow, then breaks
one rule through the schema's object API (or by cutting/patching bytes). The Swift tests assert that
loading each one throws an error naming the problem, and never crashes.

    python Tests/Goldens/make_malformed_models.py     # writes Tests/EngineTests/Fixtures/malformed/
"""
import os
import shutil

import flatbuffers
import numpy as np
import tensorflow as tf
from tensorflow.lite.python import schema_py_generated as schema

OUT = os.path.join(os.path.dirname(__file__), "..", "EngineTests", "Fixtures", "malformed")


def base_model() -> bytes:
    rng = np.random.default_rng(0)
    w = tf.constant(rng.standard_normal((3, 3, 2, 4)).astype(np.float32))
    b = tf.constant(rng.standard_normal((4,)).astype(np.float32))

    @tf.function(input_signature=[tf.TensorSpec([1, 5, 5, 2], tf.float32)])
    def f(x):
        y = tf.nn.conv2d(x, w, strides=1, padding="SAME") + b
        return tf.nn.max_pool2d(y, ksize=2, strides=2, padding="VALID")

    converter = tf.lite.TFLiteConverter.from_concrete_functions([f.get_concrete_function()], f)
    return converter.convert()


def unpack(data: bytes):
    return schema.ModelT.InitFromObj(schema.Model.GetRootAsModel(data, 0))


def pack(model) -> bytes:
    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    good = base_model()
    cases = {"valid.tflite": good}

    cases["truncated.tflite"] = good[: len(good) // 3]
    cases["random_bytes.tflite"] = np.random.default_rng(1).integers(0, 256, 4096, dtype=np.uint8).tobytes()
    cases["wrong_identifier.tflite"] = good[:4] + b"XYZ9" + good[8:]
    # Root offset pointing far past the end of the file.
    cases["root_offset_outside.tflite"] = (0x7FFFFF00).to_bytes(4, "little") + good[4:]

    m = unpack(good)
    sg = m.subgraphs[0]
    op = sg.operators[0]
    op.inputs = [op.inputs[0], 999, op.inputs[2]]
    cases["tensor_index_out_of_range.tflite"] = pack(m)

    m = unpack(good)
    m.subgraphs[0].operators[0].opcodeIndex = 42
    cases["opcode_index_out_of_range.tflite"] = pack(m)

    # Cycle: the first operator reads the tensor the second one writes.
    m = unpack(good)
    sg = m.subgraphs[0]
    first, second = sg.operators
    first.inputs = [second.outputs[0]] + list(first.inputs[1:])
    cases["cyclic_graph.tflite"] = pack(m)

    # Disconnected: the graph output is a tensor that no operator produces.
    m = unpack(good)
    sg = m.subgraphs[0]
    t = schema.TensorT()
    t.shape = [1, 5, 5, 4]
    t.type = schema.TensorType.FLOAT32
    t.name = b"orphan"
    sg.tensors.append(t)
    sg.outputs = [len(sg.tensors) - 1]
    t.shape = [1, 2, 2, 4]
    cases["disconnected_graph.tflite"] = pack(m)

    # A shape whose byte size overflows 64 bits.
    m = unpack(good)
    m.subgraphs[0].tensors[m.subgraphs[0].inputs[0]].shape = [2**31 - 1, 2**31 - 1, 2**31 - 1, 3]
    cases["absurd_shape.tflite"] = pack(m)

    # A constant whose buffer is shorter than its shape needs.
    m = unpack(good)
    sg = m.subgraphs[0]
    weights = sg.tensors[sg.operators[0].inputs[1]]
    m.buffers[weights.buffer].data = m.buffers[weights.buffer].data[:10]
    cases["constant_too_short.tflite"] = pack(m)

    # An operator the engine does not implement (a custom op).
    m = unpack(good)
    code = schema.OperatorCodeT()
    code.builtinCode = schema.BuiltinOperator.CUSTOM
    code.deprecatedBuiltinCode = schema.BuiltinOperator.CUSTOM
    code.customCode = b"MyUnknownOp"
    code.version = 1
    m.operatorCodes.append(code)
    m.subgraphs[0].operators[1].opcodeIndex = len(m.operatorCodes) - 1
    cases["unknown_custom_op.tflite"] = pack(m)

    # Conv filter with the wrong rank.
    m = unpack(good)
    sg = m.subgraphs[0]
    weights = sg.tensors[sg.operators[0].inputs[1]]
    weights.shape = [4, 9, 2]
    cases["conv_filter_rank3.tflite"] = pack(m)

    for name, data in cases.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
        print(f"{name}: {len(data)} bytes")


if __name__ == "__main__":
    main()
