#!/usr/bin/env python3
"""YOLO-layout detectors and what Ultralytics' own post-processing makes of their outputs, for
`Tests/TasksTests/YOLODetectionTests.swift`.

Pretrained YOLO weights cannot be downloaded here (only PyPI is reachable), so the models are
small hand-built graphs (the schema's object API, no TensorFlow) whose one output has a YOLO
export's layout and meaning, and whose candidates are designed to exercise the decoding:

    input [1, 64, 64, 3] float32 (RGB / 255)
      → AVERAGE_POOL_2D 16×16 → RESHAPE [1, 48]
      → FULLY_CONNECTED → boxes: centre x, y, width, height normalised to the input (as
        Ultralytics' TFLite exports write them)
      → FULLY_CONNECTED → LOGISTIC → class scores (v5: objectness, then class scores)
      → CONCATENATION → v8 [1, 4 + C, N] or v5 [1, N, 5 + C]
      (int8 variant: QUANTIZE of the v8 output to int8; NCHW variant: input [1, 3, 64, 64] and a
      TRANSPOSE first, as Ultralytics' current litert-torch exports take planes)

The biases place 64 candidates in clusters of overlapping boxes of the same and of different
classes, with confidences on both sides of the threshold; small weights let the image move them.

Goldens, per model and photo (PNG, so that both sides decode the same pixels):
  1. the input as Ultralytics' predictor makes it: `LetterBox(new_shape=64, auto=False)` on the
     BGR image (cv2 bilinear resize, gray 114 padding), RGB, float32 / 255;
  2. LiteRT (`BUILTIN_REF`) runs the model; int8 outputs are dequantized and boxes scaled by the
     input size as `ultralytics/nn/backends/litert.py` does;
  3. v8: `ultralytics.utils.nms.non_max_suppression` (conf 0.25, iou 0.7, class-aware, max_det 300);
     v5: the YOLOv5 repository's `utils/general.py non_max_suppression` steps (objectness above
     the threshold, confidence = objectness × best class score above it, class offsets of 7680,
     `torchvision.ops.nms` at iou 0.45, max_det 300), which Ultralytics' package no longer has;
  4. `ultralytics.utils.ops.scale_boxes` back onto the photo.

Run from the repository root with the YOLO environment (Tests/Goldens/requirements-yolo.txt):

    python3 -m venv /tmp/venv-yolo && /tmp/venv-yolo/bin/pip install -r Tests/Goldens/requirements-yolo.txt
    /tmp/venv-yolo/bin/python Tests/Goldens/make_yolo_goldens.py [SHARED_IMAGES_DIR]

Writes Tests/TasksTests/Fixtures/yolo/: the models, `square.png` (64×64, from scikit-image's
public-domain astronaut photo, the faces fixture), `goldens.json`.
"""
import json
import sys
from pathlib import Path

import cv2
import numpy as np
import torch
import torchvision
from ai_edge_litert import schema_py_generated as schema
from ultralytics.data.augment import LetterBox
from ultralytics.utils.nms import non_max_suppression
from ultralytics.utils.ops import scale_boxes, xywh2xyxy

sys.path.insert(0, str(Path(__file__).resolve().parent))
import golden_io as gio  # noqa: E402
import make_hostile_models as hm  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "Tests" / "TasksTests" / "Fixtures" / "yolo"
SIZE, CANDIDATES, CLASSES = 64, 64, 3
CONF = 0.25
PHOTOS = ["cat.png", "grace_hopper.png", "bird.png", "parrot.png"]


def design(rng, layout):
    """Biases of the box and score layers: 8 clusters of 8 candidates (jittered copies of one
    box), each cluster led by one class, some members won by another, logits spread around the
    confidence threshold."""
    boxes = np.zeros((CANDIDATES, 4), np.float32)
    logits = np.full((CANDIDATES, CLASSES), -4.0, np.float32)
    objectness = np.zeros(CANDIDATES, np.float32)
    for cluster in range(8):
        cx, cy = rng.uniform(0.2, 0.8, 2)
        w, h = rng.uniform(0.12, 0.4, 2)
        lead = cluster % CLASSES
        for m in range(8):
            i = cluster * 8 + m
            boxes[i] = [cx + rng.uniform(-0.04, 0.04), cy + rng.uniform(-0.04, 0.04),
                        w * rng.uniform(0.8, 1.25), h * rng.uniform(0.8, 1.25)]
            logits[i, lead] = rng.uniform(-2.5, 3.0)
            if m % 3 == 2:  # another class wins this member
                logits[i, (lead + 1) % CLASSES] = logits[i, lead] + rng.uniform(0.1, 1.0)
            objectness[i] = rng.uniform(-1.0, 4.0)
    return boxes, logits, objectness


def fc(tensors, buffers, name, inputs_index, weights, bias):
    """Appends a FULLY_CONNECTED's weights, bias and output tensors; returns the op's inputs and output index."""
    buffers.append(hm.buffer(weights.astype(np.float32).tobytes()))
    tensors.append(hm.tensor(name + "/weights", list(weights.shape), buffer=len(buffers)))
    w = len(tensors) - 1
    buffers.append(hm.buffer(bias.astype(np.float32).tobytes()))
    tensors.append(hm.tensor(name + "/bias", list(bias.shape), buffer=len(buffers)))
    b = len(tensors) - 1
    tensors.append(hm.tensor(name, [1, weights.shape[0]]))
    return [inputs_index, w, b], len(tensors) - 1


def build(layout, int8_output, seed, channels_first=False):
    rng = np.random.default_rng(seed)
    boxes, logits, objectness = design(rng, layout)
    B = schema.BuiltinOperator
    codes = [B.AVERAGE_POOL_2D, B.RESHAPE, B.FULLY_CONNECTED, B.LOGISTIC, B.CONCATENATION, B.QUANTIZE, B.TRANSPOSE]
    op = {c: i for i, c in enumerate(codes)}
    tensors = [hm.tensor("images", [1, 3, SIZE, SIZE] if channels_first else [1, SIZE, SIZE, 3])]
    buffers, operators = [], []
    image = 0
    if channels_first:  # PyTorch-converted exports take planes: transpose them to NHWC first
        buffers.append(hm.buffer(np.array([0, 2, 3, 1], np.int32).tobytes()))
        tensors.append(hm.tensor("perm", [4], buffer=len(buffers), type_=schema.TensorType.INT32))
        tensors.append(hm.tensor("images_nhwc", [1, SIZE, SIZE, 3]))
        operators.append(hm.operator(op[B.TRANSPOSE], [0, 1], [2]))
        image = 2

    def reshape(src, shape, name):
        tensors.append(hm.tensor(name, shape))
        o = schema.ReshapeOptionsT()
        o.newShape = list(shape)
        operators.append(hm.operator(op[B.RESHAPE], [src], [len(tensors) - 1], schema.BuiltinOptions.ReshapeOptions, o))
        return len(tensors) - 1

    tensors.append(hm.tensor("pooled", [1, 4, 4, 3]))
    pooled = len(tensors) - 1
    pool = schema.Pool2DOptionsT()
    pool.padding, pool.strideW, pool.strideH, pool.filterWidth, pool.filterHeight = schema.Padding.VALID, 16, 16, 16, 16
    operators.append(hm.operator(op[B.AVERAGE_POOL_2D], [image], [pooled], schema.BuiltinOptions.Pool2DOptions, pool))
    features = reshape(pooled, [1, 48], "features")

    def dense(name, bias, scale):
        weights = rng.uniform(-scale, scale, (bias.size, 48)).astype(np.float32)
        inputs, out = fc(tensors, buffers, name, features, weights, bias)
        options = schema.FullyConnectedOptionsT()
        operators.append(hm.operator(op[B.FULLY_CONNECTED], inputs, [out], schema.BuiltinOptions.FullyConnectedOptions, options))
        return out

    def sigmoid(src, size, name):
        tensors.append(hm.tensor(name, [1, size]))
        operators.append(hm.operator(op[B.LOGISTIC], [src], [len(tensors) - 1]))
        return len(tensors) - 1

    def concat(parts, shape, axis, name):
        tensors.append(hm.tensor(name, shape))
        o = schema.ConcatenationOptionsT()
        o.axis = axis
        operators.append(hm.operator(op[B.CONCATENATION], parts, [len(tensors) - 1], schema.BuiltinOptions.ConcatenationOptions, o))
        return len(tensors) - 1

    if layout == "v8":
        box = reshape(dense("box", boxes.T.reshape(-1), 0.002), [1, 4, CANDIDATES], "box_rows")
        cls = dense("cls", logits.T.reshape(-1), 0.05)
        cls = reshape(sigmoid(cls, CLASSES * CANDIDATES, "cls_sigmoid"), [1, CLASSES, CANDIDATES], "cls_rows")
        out = concat([box, cls], [1, 4 + CLASSES, CANDIDATES], 1, "output0_float")
    else:
        box = reshape(dense("box", boxes.reshape(-1), 0.002), [1, CANDIDATES, 4], "box_columns")
        scores = np.concatenate([objectness[:, None], logits], 1)
        oc = dense("obj_cls", scores.reshape(-1), 0.05)
        oc = reshape(sigmoid(oc, (1 + CLASSES) * CANDIDATES, "obj_cls_sigmoid"), [1, CANDIDATES, 1 + CLASSES], "obj_cls_columns")
        out = concat([box, oc], [1, CANDIDATES, 5 + CLASSES], 2, "output0_float")
    if int8_output:
        q = schema.QuantizationParametersT()
        q.scale, q.zeroPoint = [1.25 / 255], [-128]
        tensors.append(hm.tensor("output0", list(tensors[out].shape), type_=schema.TensorType.INT8))
        tensors[-1].quantization = q
        operators.append(hm.operator(op[B.QUANTIZE], [out], [len(tensors) - 1]))
        out = len(tensors) - 1
    else:
        tensors[out].name = b"output0"
    return hm.model(tensors, operators, codes, [0], [out], buffers)


def predictor_input(bgr, channels_first=False):
    """The tensor Ultralytics' predictor feeds a 64×64 TFLite model: letterboxed, RGB, / 255, in
    NCHW (its litert-torch exports) or transposed to NHWC (onnx2tf exports)."""
    boxed = LetterBox(new_shape=(SIZE, SIZE), auto=False, stride=32)(image=bgr)
    rgb = boxed[..., ::-1].transpose(2, 0, 1)[None]
    x = (torch.from_numpy(np.ascontiguousarray(rgb)).float() / 255).numpy()
    return x if channels_first else x.transpose(0, 2, 3, 1)


def yolov5_nms(x, conf_thres=CONF, iou_thres=0.45, max_det=300, max_wh=7680):
    """The YOLOv5 repository's `non_max_suppression` (one image, no extra classes or labels), step
    by step: objectness candidates, confidence = objectness × class score, best class, class offsets,
    torchvision NMS."""
    x = x[x[:, 4] > conf_thres]
    x[:, 5:] *= x[:, 4:5]
    box = xywh2xyxy(x[:, :4])
    conf, j = x[:, 5:].max(1, keepdim=True)
    x = torch.cat((box, conf, j.float()), 1)[conf.view(-1) > conf_thres]
    c = x[:, 5:6] * max_wh
    keep = torchvision.ops.nms(x[:, :4] + c, x[:, 4], iou_thres)[:max_det]
    return x[keep]


def detections(model_bytes, layout, bgr, channels_first=False):
    inputs = np.ascontiguousarray(predictor_input(bgr, channels_first))
    outputs, _ = gio.run_model(model_bytes, [inputs])
    raw = outputs[0]
    interpreter = gio.make_interpreter(model_bytes)
    details = interpreter.get_output_details()[0]
    if raw.dtype == np.int8:
        scale, zero_point = details["quantization"]
        raw = (raw.astype(np.float32) - zero_point) * np.float32(scale)
    raw = raw.astype(np.float32).copy()
    if layout == "v8":
        raw[:, [0, 2]] *= SIZE  # ultralytics/nn/backends/litert.py: x[:, [0, 2]] *= w
        raw[:, [1, 3]] *= SIZE
        kept = non_max_suppression(torch.from_numpy(raw), CONF, 0.7, agnostic=False, max_det=300)[0]
    else:
        raw[..., :4] *= np.float32(SIZE)  # YOLOv5 DetectMultiBackend: y[..., :4] *= [w, h, w, h]
        kept = yolov5_nms(torch.from_numpy(raw[0]))
    boxes = scale_boxes((SIZE, SIZE), kept[:, :4].clone(), bgr.shape[:2])
    return [{"x1": float(b[0]), "y1": float(b[1]), "x2": float(b[2]), "y2": float(b[3]),
             "score": float(k[4]), "class": int(k[5])} for b, k in zip(boxes, kept)]


def main():
    shared = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared" / "images"
    OUT.mkdir(parents=True, exist_ok=True)
    astronaut = cv2.imread(str(ROOT / "Tests/TasksTests/Fixtures/faces/astronaut.jpg"))
    square = cv2.resize(astronaut[0:400, 56:456], (SIZE, SIZE), interpolation=cv2.INTER_AREA)
    cv2.imwrite(str(OUT / "square.png"), square)
    square = cv2.imread(str(OUT / "square.png"))
    models = {"yolov8_float.tflite": ("v8", False, 8, False), "yolov8_int8_output.tflite": ("v8", True, 8, False),
              "yolov8_nchw_float.tflite": ("v8", False, 8, True), "yolov5_float.tflite": ("v5", False, 5, False)}
    goldens = {"generator": "make_yolo_goldens.py", "resolver": "BUILTIN_REF",
               "versions": {p: gio.package_version(p) for p in ["ai-edge-litert", "ultralytics", "torch", "torchvision", "opencv-python", "numpy"]},
               "confidence": CONF, "models": {}}
    for name, (layout, int8_output, seed, channels_first) in models.items():
        data = build(layout, int8_output, seed, channels_first)
        (OUT / name).write_bytes(data)
        cases = {"square.png": detections(data, layout, square, channels_first)}
        for photo in PHOTOS:
            cases[photo] = detections(data, layout, cv2.imread(str(shared / photo)), channels_first)
        goldens["models"][name] = {"layout": layout, "iou": 0.7 if layout == "v8" else 0.45, "images": cases}
        print(name, len(data), "bytes;", {k: len(v) for k, v in cases.items()})
    (OUT / "goldens.json").write_text(json.dumps(goldens, indent=1) + "\n")


if __name__ == "__main__":
    main()
