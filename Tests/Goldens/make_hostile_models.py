"""Writes hand-made hostile .tflite files: models that are valid flatbuffers but lie, so that a
careless engine would corrupt memory, read outside a buffer or exhaust the machine.

Every model is built from scratch with the schema's object API (`schema_py_generated`, shipped
with ai-edge-litert; no TensorFlow needed). `Tests/EngineTests/HostileModelTests.swift` asserts
that loading, planning and invoking each one either throws an error naming the problem or runs
safely; none may crash.

    python Tests/Goldens/make_hostile_models.py   # writes Tests/EngineTests/Fixtures/hostile/
"""
import os
import shutil

import flatbuffers
import numpy as np
from ai_edge_litert import schema_py_generated as schema

OUT = os.path.join(os.path.dirname(__file__), "..", "EngineTests", "Fixtures", "hostile")


def tensor(name, shape, buffer=0, type_=schema.TensorType.FLOAT32, variable=False):
    t = schema.TensorT()
    t.name = name.encode()
    t.shape = list(shape)
    t.type = type_
    t.buffer = buffer
    t.isVariable = variable
    return t


def buffer(data=b""):
    b = schema.BufferT()
    b.data = list(data) if data else None
    return b


def model(tensors, operators, codes, inputs, outputs, buffers):
    m = schema.ModelT()
    m.version = 3
    m.operatorCodes = []
    for builtin in codes:
        c = schema.OperatorCodeT()
        c.builtinCode = builtin
        c.deprecatedBuiltinCode = min(builtin, 127)
        c.version = 1
        m.operatorCodes.append(c)
    sg = schema.SubGraphT()
    sg.tensors, sg.operators, sg.inputs, sg.outputs = tensors, operators, inputs, outputs
    m.subgraphs = [sg]
    m.buffers = [buffer()] + buffers  # buffer 0 is the empty sentinel
    builder = flatbuffers.Builder(1024)
    builder.Finish(m.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def operator(code, inputs, outputs, options_type=0, options=None):
    op = schema.OperatorT()
    op.opcodeIndex = code
    op.inputs, op.outputs = inputs, outputs
    op.builtinOptionsType, op.builtinOptions = options_type, options
    return op


def pad_model(output: schema.TensorT, extra_buffers=()):
    """PAD float32 [1,2,3,1] by one on each side of the two spatial axes into `output`."""
    paddings = np.array([[0, 0], [1, 1], [1, 1], [0, 0]], dtype=np.int32).tobytes()
    tensors = [tensor("input", [1, 2, 3, 1]), tensor("paddings", [4, 2], 1, schema.TensorType.INT32), output]
    return model(tensors, [operator(0, [0, 1], [2], schema.BuiltinOptions.PadOptions, schema.PadOptionsT())],
                 [schema.BuiltinOperator.PAD], [0], [2], [buffer(paddings), *extra_buffers])


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    cases = {}
    # The fuzzer's heap overflow: PAD's output declared empty (shape [0]), with an empty buffer and
    # is_variable set. It used to become a "constant" on a shared 16-byte block that PAD then
    # resized to 4x5 floats and wrote 80 bytes into.
    cases["pad_into_empty_variable.tflite"] = pad_model(tensor("out", [0], buffer=2, variable=True), [buffer()])
    # The same without the variable flag: an operator output backed by a (zero-byte) constant.
    cases["pad_into_empty_constant.tflite"] = pad_model(tensor("out", [0], buffer=2), [buffer()])
    # An output backed by a real constant buffer of the declared size: operators never write constants.
    cases["pad_into_constant.tflite"] = pad_model(tensor("out", [1, 4, 5, 1], buffer=2), [buffer(bytes(80))])
    # A variable tensor that claims file data (TFLite refuses it as well).
    cases["variable_with_data.tflite"] = pad_model(tensor("out", [1, 4, 5, 1], buffer=2, variable=True),
                                                   [buffer(bytes(80))])
    # A variable whose declared shape is smaller than what PAD makes of it.
    cases["pad_resizes_variable.tflite"] = pad_model(tensor("out", [1, 1, 1, 1], variable=True))
    for name, data in cases.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
        print(f"{name}: {len(data)} bytes")


if __name__ == "__main__":
    main()
