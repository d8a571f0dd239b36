"""Writes hand-made hostile .tflite files: models that are valid flatbuffers but lie, so that a
careless engine would corrupt memory, read outside a buffer or exhaust the machine (memory,
time: see `Limits`).

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
from flatbuffers import flexbuffers

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


def model(tensors, operators, codes, inputs, outputs, buffers, metadata=None):
    """A one-subgraph model; `codes` are builtin codes or custom operator names; `metadata` is a
    list of (name, buffer index) pairs."""
    m = schema.ModelT()
    m.version = 3
    m.operatorCodes = []
    for builtin in codes:
        c = schema.OperatorCodeT()
        if isinstance(builtin, str):
            c.builtinCode = c.deprecatedBuiltinCode = schema.BuiltinOperator.CUSTOM
            c.customCode = builtin.encode()
        else:
            c.builtinCode = builtin
            c.deprecatedBuiltinCode = min(builtin, 127)
        c.version = 1
        m.operatorCodes.append(c)
    if metadata:
        m.metadata = []
        for name, index in metadata:
            entry = schema.MetadataT()
            entry.name, entry.buffer = name.encode(), index
            m.metadata.append(entry)
    sg = schema.SubGraphT()
    sg.tensors, sg.operators, sg.inputs, sg.outputs = tensors, operators, inputs, outputs
    m.subgraphs = [sg]
    m.buffers = [buffer()] + buffers  # buffer 0 is the empty sentinel
    builder = flatbuffers.Builder(1024)
    builder.Finish(m.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def operator(code, inputs, outputs, options_type=0, options=None, custom=None):
    op = schema.OperatorT()
    op.opcodeIndex = code
    op.inputs, op.outputs = inputs, outputs
    op.builtinOptionsType, op.builtinOptions = options_type, options
    op.customOptions = list(custom) if custom else None
    return op


def add_model(shape):
    """ADD of two float32 inputs of `shape`: declared sizes only, no data in the file."""
    tensors = [tensor("a", shape), tensor("b", shape), tensor("sum", shape)]
    return model(tensors, [operator(0, [0, 1], [2], schema.BuiltinOptions.AddOptions, schema.AddOptionsT())],
                 [schema.BuiltinOperator.ADD], [0, 1], [2], [])


def conv_model(input_shape, filter_shape):
    """CONV_2D float32, SAME padding, stride 1: a small filter in the file, huge declared input."""
    out_shape = list(input_shape[:3]) + [filter_shape[0]]
    weights = np.full(filter_shape, 0.01, dtype=np.float32).tobytes()
    bias = np.zeros(filter_shape[0], dtype=np.float32).tobytes()
    tensors = [tensor("image", input_shape), tensor("filter", filter_shape, 1), tensor("bias", [filter_shape[0]], 2),
               tensor("features", out_shape)]
    options = schema.Conv2DOptionsT()
    options.padding, options.strideH, options.strideW = schema.Padding.SAME, 1, 1
    return model(tensors, [operator(0, [0, 1, 2], [3], schema.BuiltinOptions.Conv2DOptions, options)],
                 [schema.BuiltinOperator.CONV_2D], [0], [3], [buffer(weights), buffer(bias)])


def pool_model(input_shape, window):
    """AVERAGE_POOL_2D, SAME padding, stride 1, with a `window` x `window` filter."""
    options = schema.Pool2DOptionsT()
    options.padding, options.strideH, options.strideW = schema.Padding.SAME, 1, 1
    options.filterHeight = options.filterWidth = window
    tensors = [tensor("image", input_shape), tensor("pooled", input_shape)]
    return model(tensors, [operator(0, [0], [1], schema.BuiltinOptions.Pool2DOptions, options)],
                 [schema.BuiltinOperator.AVERAGE_POOL_2D], [0], [1], [])


def resize_model(size):
    """RESIZE_BILINEAR of a [1, 2, 2, 1] float32 input to `size` (a constant): a tiny input whose
    output the model decides."""
    tensors = [tensor("input", [1, 2, 2, 1]), tensor("size", [2], 1, schema.TensorType.INT32),
               tensor("resized", [1, 1, 1, 1])]  # the declared output shape is a lie too
    return model(tensors, [operator(0, [0, 1], [2], schema.BuiltinOptions.ResizeBilinearOptions,
                                    schema.ResizeBilinearOptionsT())],
                 [schema.BuiltinOperator.RESIZE_BILINEAR], [0], [2],
                 [buffer(np.array(size, dtype=np.int32).tobytes())])


def resize_int8_model(input_shape, size):
    """RESIZE_BILINEAR int8 (scale 0.05, zero point 3 in and out) of `input_shape` to the constant
    `size`, align_corners and half_pixel_centers false."""
    def int8(name, shape):
        t = tensor(name, shape, type_=schema.TensorType.INT8)
        t.quantization = schema.QuantizationParametersT()
        t.quantization.scale, t.quantization.zeroPoint = [0.05], [3]
        return t
    tensors = [int8("input", input_shape), tensor("size", [2], 1, schema.TensorType.INT32),
               int8("resized", [input_shape[0], *size, input_shape[3]])]
    return model(tensors, [operator(0, [0, 1], [2], schema.BuiltinOptions.ResizeBilinearOptions,
                                    schema.ResizeBilinearOptionsT())],
                 [schema.BuiltinOperator.RESIZE_BILINEAR], [0], [2],
                 [buffer(np.array(size, dtype=np.int32).tobytes())])


def detection_model(max_detections):
    """TFLite_Detection_PostProcess over 4 anchors and 1 class, asking for `max_detections`."""
    b = flexbuffers.Builder()
    with b.Map():
        b.Int("max_detections", max_detections)
        b.Int("max_classes_per_detection", 1)
        b.Bool("use_regular_nms", False)
        b.Float("nms_score_threshold", 0.3)
        b.Float("nms_iou_threshold", 0.5)
        b.Int("num_classes", 1)
        for key in ("y_scale", "x_scale", "h_scale", "w_scale"):
            b.Float(key, 10.0)
    anchors = np.tile(np.array([0.5, 0.5, 0.2, 0.2], dtype=np.float32), (4, 1)).tobytes()
    tensors = [tensor("boxes", [1, 4, 4]), tensor("scores", [1, 4, 2]), tensor("anchors", [4, 4], 1),
               tensor("detection_boxes", [1, 1, 4]), tensor("detection_classes", [1, 1]),
               tensor("detection_scores", [1, 1]), tensor("num_detections", [1])]
    return model(tensors, [operator(0, [0, 1, 2], [3, 4, 5, 6], custom=b.Finish())],
                 ["TFLite_Detection_PostProcess"], [0, 1], [3, 4, 5, 6], [buffer(anchors)])


def pad_model(output: schema.TensorT, extra_buffers=()):
    """PAD float32 [1,2,3,1] by one on each side of the two spatial axes into `output`."""
    paddings = np.array([[0, 0], [1, 1], [1, 1], [0, 0]], dtype=np.int32).tobytes()
    tensors = [tensor("input", [1, 2, 3, 1]), tensor("paddings", [4, 2], 1, schema.TensorType.INT32), output]
    return model(tensors, [operator(0, [0, 1], [2], schema.BuiltinOptions.PadOptions, schema.PadOptionsT())],
                 [schema.BuiltinOperator.PAD], [0], [2], [buffer(paddings), *extra_buffers])


def main():
    os.makedirs(OUT, exist_ok=True)
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
    # Resource exhaustion (Limits): a 292-byte model that made a session allocate and zero 3 GiB,
    # then add 268 M floats.
    cases["add_16384x16384.tflite"] = add_model([1, 16384, 16384])
    # 512 MiB of activations (within the memory limit) but 52.6 G multiply-accumulates: minutes.
    cases["conv_52g_macs.tflite"] = conv_model([1, 2048, 2048, 16], [16, 7, 7, 16])
    # 128 MiB in and out, but every output averages a 2048 x 2048 window: 1.4e14 additions.
    cases["average_pool_huge_window.tflite"] = pool_model([1, 2048, 2048, 8], 2048)
    # A [1, 2, 2, 1] input resized to 16384 x 20000: one 1.2 GiB output decided by a constant.
    cases["resize_to_1_2_gib.tflite"] = resize_model([16384, 20000])
    # 100 M detection slots: 1.6 GB of outputs from a 4-anchor model.
    cases["detection_100m.tflite"] = detection_model(100_000_000)
    # Not hostile, only long-winded: tensor names of ~800 characters, as Teachable Machine, TF2 and
    # MediaPipe exports have; `run --dump-intermediates` must still write its files.
    long = "model/" + "/".join(f"block_{i}/StatefulPartitionedCall/sequential/conv_pw_{i}_bn/FusedBatchNormV3" for i in range(11))
    paddings = np.array([[0, 0], [1, 1], [1, 1], [0, 0]], dtype=np.int32).tobytes()
    cases["long_tensor_names.tflite"] = model(
        [tensor(long + ";input", [1, 2, 3, 1]), tensor(long + ";paddings", [4, 2], 1, schema.TensorType.INT32),
         tensor(long + ";output", [1, 4, 5, 1])],
        [operator(0, [0, 1], [2], schema.BuiltinOptions.PadOptions, schema.PadOptionsT())],
        [schema.BuiltinOperator.PAD], [0], [2], [buffer(paddings)])
    # The fuzzer's out-of-bounds read: RESIZE_BILINEAR int8 [1, 8, 8, 8] to 242 x 191, whose
    # 10-bit fixed-point row scale (34) puts output row 241's lower index at row 8 of 8.
    cases["fuzz_resize_bilinear_int8_242x191.tflite"] = resize_int8_model([1, 8, 8, 8], [242, 191])
    # (fuzz_*.tflite in the same folder are inputs the fuzzer found, committed as found.)
    for name, data in cases.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
        print(f"{name}: {len(data)} bytes")


if __name__ == "__main__":
    main()
