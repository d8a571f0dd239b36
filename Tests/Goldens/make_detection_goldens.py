#!/usr/bin/env python3
"""Generates the TFLite_Detection_PostProcess golden fixtures for the SwiftLite engine tests.

Run from the repository root:

    /work/venv/bin/python Tests/Goldens/make_detection_goldens.py

Output (deleted and rewritten on every run):

    Tests/EngineTests/Fixtures/detection/<case>/model.tflite, input_<i>.npy, output_<i>.npy
    Tests/EngineTests/Fixtures/detection/manifest.json
    Tests/EngineTests/Fixtures/detection_errors/<case>.tflite + errors.json

Models are built the way the TF object-detection exporter builds them
(object_detection/export_tflite_graph_lib_tf2.py): the post-processing is an
empty `tf.function` carrying `experimental_implements` with the op's attributes,
saved as a SavedModel and converted with `allow_custom_ops=True`; the MLIR
converter legalizes it to the custom op with a FlexBuffer options map.

Case families:

* op_*       the custom op alone (box encodings and class scores are model
             inputs, anchors a constant): every option, both NMS modes, ties,
             degenerate and extreme boxes. Exact (tolerance 0).
* op_uint8_* the same models patched to uint8 box encodings / scores / anchors
             with quantization parameters (the converter only emits float for
             this op; LiteRT's kernel dequantizes uint8 itself). Exact.
* ssd_*      a small SSD-style network (conv backbone, box and class heads,
             RESHAPE, LOGISTIC) feeding the op; float32, and full-integer int8
             variants marked "needs": "quantized".
* ssd_mobilenet_v1_coco_<image>: the post-processing op of the real
             ../shared/models/ssd_mobilenet_v1_coco_quant.tflite, cut out into a
             one-op model, fed with the op's uint8 inputs that LiteRT computed
             for real photos (bilinear-resized to 300x300 with PIL). Exact.

Ground truth is LiteRT with the BUILTIN_REF resolver, one thread. In fast-NMS
mode TFLite writes only the slots of the detections it found (and in regular
mode only the first max_detections rows), leaving the rest of the output
buffers as they were; SwiftLite zero-fills them. To make the comparison exact
and honest, the reference is run with every tensor preserved and the outputs
pre-filled with a sentinel; sentinel slots that LiteRT left untouched are
stored as 0 and counted in the manifest ("unwritten_slots").

Optional arguments: case-name substrings (only matching cases are generated).
"""

from __future__ import annotations

import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import golden_io as G  # noqa: E402  (sets TF env vars before TF import)

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from ai_edge_litert import schema_py_generated as schema  # noqa: E402
from ai_edge_litert.interpreter import Interpreter, OpResolverType  # noqa: E402
from flatbuffers import flexbuffers  # noqa: E402

GENERATOR = "Tests/Goldens/make_detection_goldens.py"
OUT_DIR = G.FIXTURES_ROOT / "detection"
ERR_DIR = G.FIXTURES_ROOT / "detection_errors"
SHARED = G.REPO_ROOT.parent / "shared"
SSD_MODEL = SHARED / "models" / "ssd_mobilenet_v1_coco_quant.tflite"
SSD_IMAGES = ["mug.jpg", "kite_and_cold.jpg", "table.jpg"]
SIZE_BUDGET_BYTES = 2_000_000
OP = "TFLite_Detection_PostProcess"
SENTINEL = np.float32(-98765.4375)

# The backbone of the ssd_* cases is float convolution whose rounding differs
# between implementations (SwiftLite's SGEMM vs TFLite's reference loops) by an
# ulp or two; decoded boxes and scores inherit that. With tolerance 0 (run with
# a stand-in RESHAPE kernel before the real one existed):
#   ssd_float_fast_2_classes output 0: max |Δ| 1.19e-07, 5 elements differ
#   ssd_float_regular        output 1: max |Δ| 1.19e-07, 11 elements differ
# Classes and counts stay exact as long as no two candidates are within that
# noise of each other (a flipped order would differ by far more than this
# tolerance, so it cannot hide).
BACKBONE_TOLERANCE = 2e-6
BACKBONE_TOLERANCE_REASON = ("float conv backbone: reference vs. SGEMM rounding (~1e-7 relative) "
                             "reaches the decoded boxes and sigmoid scores")



# ---------------------------------------------------------------------------
# Options and the exporter-style composite function
# ---------------------------------------------------------------------------


@dataclass
class Options:
    max_detections: int = 10
    max_classes_per_detection: int = 1
    detections_per_class: int | None = None        # None: not in the options (kernel default 100)
    use_regular_nms: bool = False
    nms_score_threshold: float = 0.3
    nms_iou_threshold: float = 0.5
    num_classes: int = 5
    y_scale: float = 10.0
    x_scale: float = 10.0
    h_scale: float = 5.0
    w_scale: float = 5.0

    def implements_signature(self) -> str:
        """The `experimental_implements` string, formatted like export_tflite_graph_lib_tf2.py."""
        parts = [f'name: "{OP}"',
                 f'attr {{ key: "max_detections" value {{ i: {self.max_detections} }} }}',
                 f'attr {{ key: "max_classes_per_detection" value {{ i: {self.max_classes_per_detection} }} }}',
                 f'attr {{ key: "use_regular_nms" value {{ b: {str(self.use_regular_nms).lower()} }} }}']
        # detections_per_class is dropped by the converter; see fix_custom_options.
        for key in ("nms_score_threshold", "nms_iou_threshold", "y_scale", "x_scale", "h_scale", "w_scale"):
            parts.append(f'attr {{ key: "{key}" value {{ f: {getattr(self, key)!r} }} }}')
        parts.append(f'attr {{ key: "num_classes" value {{ i: {self.num_classes} }} }}')
        return " ".join(parts)

    def slots(self) -> int:
        return self.max_detections * self.max_classes_per_detection


def postprocess_fn(options: Options):
    @tf.function(experimental_implements=options.implements_signature())
    def dummy_post_processing(box_encodings, class_predictions, anchors):  # noqa: ARG001
        return (tf.constant(0.0, name="boxes"), tf.constant(0.0, name="scores"),
                tf.constant(0.0, name="classes"), tf.constant(0.0, name="num_detections"))
    return dummy_post_processing


def convert_saved_model(module: tf.Module, signature, setup=None) -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        tf.saved_model.save(module, tmp, signatures=signature)
        conv = tf.lite.TFLiteConverter.from_saved_model(tmp)
        conv.allow_custom_ops = True
        if setup is not None:
            setup(conv)
        return conv.convert()


def fix_custom_options(model_bytes: bytes, options: Options, omit: tuple = ()) -> bytes:
    """The converter's legalization writes a fixed set of keys: it needs all of them and silently
    drops `detections_per_class`. Re-writes the options map with `detections_per_class` added (when
    the case sets it) and the `omit` keys removed, keeping every other value and its FlexBuffer type."""
    model = G.parse_model(model_bytes)
    ops = model.subgraphs[0].operators
    op = next(o for o in ops if model.operatorCodes[o.opcodeIndex].customCode == OP.encode())
    values = flexbuffers.Loads(bytes(bytearray(op.customOptions)))
    if options.detections_per_class is not None:
        values["detections_per_class"] = options.detections_per_class
    for key in omit:
        values.pop(key)
    op.customOptions = list(options_blob(values, base={}))
    return G.serialize_model(model)


def op_only_model(options: Options, anchors: np.ndarray, classes_with_background: int,
                  encoding_length: int = 4) -> bytes:
    """A model whose only operator is the custom op: inputs box encodings, class scores."""
    n = anchors.shape[0]
    post = postprocess_fn(options)
    anchors_const = tf.constant(anchors)

    class OpOnly(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([1, n, encoding_length], tf.float32, name="box_encodings"),
                                      tf.TensorSpec([1, n, classes_with_background], tf.float32,
                                                    name="class_predictions")])
        def run(self, box_encodings, class_predictions):
            # The exporter reverses the outputs (tf.function reverses them on the way in).
            return post(box_encodings, class_predictions, anchors_const)[::-1]

    m = OpOnly()
    return convert_saved_model(m, m.run.get_concrete_function())


def ssd_model(options: Options, rng, height: int, width: int, anchors_per_cell: int,
              classes_with_background: int, quantized: bool) -> tuple[bytes, np.ndarray]:
    """A small SSD: conv 3x3/2 + ReLU, then 1x1 box and class heads, reshaped to
    [1, N, 4] and [1, N, classes] (sigmoid), into the custom op. Returns the model and its anchors."""
    fh, fw = (height + 1) // 2, (width + 1) // 2
    n = fh * fw * anchors_per_cell
    anchors = grid_anchors(fh, fw, anchors_per_cell)
    w1 = tf.constant(rng.normal(0, 0.4, (3, 3, 3, 16)).astype(np.float32))
    b1 = tf.constant(rng.normal(0, 0.1, (16,)).astype(np.float32))
    wb = tf.constant(rng.normal(0, 0.5, (1, 1, 16, 4 * anchors_per_cell)).astype(np.float32))
    bb = tf.constant(rng.normal(0, 0.2, (4 * anchors_per_cell,)).astype(np.float32))
    wc = tf.constant(rng.normal(0, 0.6, (1, 1, 16, classes_with_background * anchors_per_cell)).astype(np.float32))
    bc = tf.constant(rng.normal(-0.5, 0.5, (classes_with_background * anchors_per_cell,)).astype(np.float32))
    post = postprocess_fn(options)
    anchors_const = tf.constant(anchors)

    class SSD(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([1, height, width, 3], tf.float32, name="image")])
        def run(self, image):
            x = tf.nn.relu(tf.nn.conv2d(image, w1, 2, "SAME") + b1)
            box = tf.reshape(tf.nn.conv2d(x, wb, 1, "SAME") + bb, [1, n, 4])
            cls = tf.sigmoid(tf.reshape(tf.nn.conv2d(x, wc, 1, "SAME") + bc, [1, n, classes_with_background]))
            return post(box, cls, anchors_const)[::-1]

    setup = None
    if quantized:
        calib = np.random.default_rng(G.seed_for("calibration"))

        def representative():
            for _ in range(16):
                yield {"image": calib.uniform(-1, 1, (1, height, width, 3)).astype(np.float32)}

        def setup(conv):
            conv.optimizations = [tf.lite.Optimize.DEFAULT]
            conv.representative_dataset = representative
            conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
            conv.inference_input_type = tf.int8

    m = SSD()
    return convert_saved_model(m, m.run.get_concrete_function(), setup), anchors


# ---------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------


def grid_anchors(fh: int, fw: int, per_cell: int) -> np.ndarray:
    """SSD-style anchors (ycenter, xcenter, h, w): cell centers, several aspect ratios."""
    out = []
    for y in range(fh):
        for x in range(fw):
            for a in range(per_cell):
                ratio = [1.0, 2.0, 0.5, 3.0, 1 / 3][a % 5]
                size = 0.25 + 0.1 * (a // 5)
                out.append([(y + 0.5) / fh, (x + 0.5) / fw, size / np.sqrt(ratio), size * np.sqrt(ratio)])
    return np.array(out, dtype=np.float32)


def random_anchors(rng, n: int, clusters: int) -> np.ndarray:
    """Anchors gathered around a few centers, so that decoded boxes overlap and NMS has work."""
    centers = rng.uniform(0.2, 0.8, (clusters, 2))
    pick = rng.integers(0, clusters, n)
    yx = centers[pick] + rng.normal(0, 0.04, (n, 2))
    hw = rng.uniform(0.1, 0.4, (n, 2))
    return np.concatenate([yx, hw], axis=1).astype(np.float32)


def box_encodings(rng, n: int, length: int = 4, spread: float = 1.0) -> np.ndarray:
    enc = rng.normal(0, 1, (1, n, length)) * spread
    enc[..., 2:4] *= 0.5
    return enc.astype(np.float32)


def class_scores(rng, n: int, classes: int, levels: int | None = None) -> np.ndarray:
    s = 1 / (1 + np.exp(-rng.normal(-0.5, 1.5, (1, n, classes))))
    if levels is not None:  # few distinct values: many exact ties
        s = np.round(s * levels) / levels
    return s.astype(np.float32)


# ---------------------------------------------------------------------------
# Running the reference
# ---------------------------------------------------------------------------


def reference_outputs(model_bytes: bytes, inputs: list[np.ndarray]):
    """Runs LiteRT (BUILTIN_REF, 1 thread, all tensors preserved) with the outputs pre-filled with
    SENTINEL. Returns (outputs with never-written slots set to 0, number of such slots, op names)."""
    interp = Interpreter(model_content=model_bytes, experimental_op_resolver_type=OpResolverType.BUILTIN_REF,
                         num_threads=1, experimental_preserve_all_tensors=True)
    interp.allocate_tensors()
    for det, arr in zip(interp.get_input_details(), inputs, strict=True):
        if tuple(det["shape"]) != arr.shape or det["dtype"] != arr.dtype:
            raise ValueError(f"input {det['name']}: want {det['shape']} {det['dtype']}, got {arr.shape} {arr.dtype}")
        interp.set_tensor(det["index"], arr)
    for det in interp.get_output_details():
        interp.set_tensor(det["index"], np.full(det["shape"], SENTINEL, dtype=det["dtype"]))
    interp.invoke()
    outputs, unwritten = [], 0
    for det in interp.get_output_details():
        out = np.array(interp.get_tensor(det["index"]))
        mask = out == SENTINEL
        unwritten += int(mask.sum())
        out[mask] = 0
        outputs.append(out)
    ops = [d["op_name"] for d in interp._get_ops_details()]
    # Plain run (no preservation, no sentinel) must agree on every slot that was written.
    plain, _ = G.run_model(model_bytes, inputs)
    for a, b in zip(outputs, plain):
        written = a != 0
        if not np.array_equal(a[written], b[written]):
            raise AssertionError("preserved-tensor run differs from a plain run")
    return outputs, unwritten, ops


def op_output_roles(model_bytes: bytes) -> list[str]:
    """For each subgraph output, which output of the custom op it is."""
    model = G.parse_model(model_bytes)
    sg = model.subgraphs[0]
    op = next(o for o in sg.operators if model.operatorCodes[o.opcodeIndex].customCode == OP.encode())
    roles = ["boxes", "classes", "scores", "count"]
    return [roles[list(op.outputs).index(t)] for t in sg.outputs]


def check_detection_outputs(name: str, model_bytes: bytes, outputs: list, options: Options) -> dict:
    roles = op_output_roles(model_bytes)
    by_role = dict(zip(roles, outputs))
    count = int(by_role["count"][0])
    m = options.slots()
    if by_role["boxes"].shape != (1, m, 4) or by_role["scores"].shape != (1, m):
        raise AssertionError(f"{name}: unexpected output shapes {[o.shape for o in outputs]}")
    return {"count": count, "roles": roles}


# ---------------------------------------------------------------------------
# uint8 patching of op-only models
# ---------------------------------------------------------------------------


def quant_params(lo: float, hi: float) -> tuple[float, int]:
    scale = (hi - lo) / 255.0
    zero_point = int(np.clip(round(-lo / scale), 0, 255))
    return float(np.float32(scale)), zero_point


def quantize(x: np.ndarray, scale: float, zero_point: int) -> np.ndarray:
    return np.clip(np.round(x / np.float32(scale)) + zero_point, 0, 255).astype(np.uint8)


def patch_to_uint8(model_bytes: bytes, boxes_q, scores_q, anchors_q, anchors: np.ndarray) -> bytes:
    """Retypes the op's inputs to uint8 with the given (scale, zero point); None keeps float32."""
    model = G.parse_model(model_bytes)
    sg = model.subgraphs[0]
    op = sg.operators[0]
    for slot, q in ((0, boxes_q), (1, scores_q)):
        if q is None:
            continue
        t = sg.tensors[op.inputs[slot]]
        t.type = schema.TensorType.UINT8
        t.quantization = schema.QuantizationParametersT()
        t.quantization.scale, t.quantization.zeroPoint = [q[0]], [q[1]]
    if anchors_q is not None:
        t = sg.tensors[op.inputs[2]]
        t.type = schema.TensorType.UINT8
        t.quantization = schema.QuantizationParametersT()
        t.quantization.scale, t.quantization.zeroPoint = [anchors_q[0]], [anchors_q[1]]
        model.buffers[t.buffer].data = np.frombuffer(quantize(anchors, *anchors_q).tobytes(), dtype=np.uint8)
    return G.serialize_model(model)


# ---------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------


@dataclass
class OpCase:
    name: str
    description: str
    options: Options
    n: int = 64
    clusters: int = 6
    background: bool = True
    score_levels: int | None = None
    encoding_length: int = 4
    spread: float = 1.0
    uint8: tuple | None = None   # (boxes?, scores?) patch flags for op_uint8_* cases
    omit: tuple = ()             # option keys removed after conversion (the kernel's defaults apply)
    anchors_fn: object = None    # rng, n -> anchors (default random_anchors)
    edit_inputs: object = None   # (boxes, scores) -> (boxes, scores)


def degenerate_anchors(rng, n):
    a = random_anchors(rng, n, 4)
    a[::5, 2] = 0.0    # zero height: zero area, IoU 0 with everything
    a[1::7, 3] = 0.0   # zero width
    return a


def extreme_inputs(boxes, scores):
    boxes = boxes.copy()
    boxes[0, 0, 2] = 500.0     # exp(100) overflows float: a box of infinite height
    boxes[0, 1, 3] = -500.0    # exp(-100) · w underflows: a box of zero width
    boxes[0, 2, :2] = 1e30     # center far away
    scores = scores.copy()
    scores[0, :3, 1] = 0.999
    return boxes, scores


OP_CASES = [
    OpCase("op_fast_basic", "fast NMS, 1 class per detection, 5 classes + background", Options()),
    OpCase("op_fast_low_threshold_all_slots", "fast NMS where every slot is filled", Options(nms_score_threshold=0.0, max_detections=8)),
    OpCase("op_fast_high_threshold_few", "fast NMS with few boxes above threshold (unwritten slots)",
           Options(nms_score_threshold=0.85, max_detections=12)),
    OpCase("op_fast_no_background", "class predictions without a background column",
           Options(num_classes=4), background=False),
    OpCase("op_fast_3_classes_per_detection", "fast NMS reporting the top 3 classes of each box",
           Options(max_classes_per_detection=3, num_classes=7, max_detections=6)),
    OpCase("op_fast_classes_per_detection_above_num_classes", "max_classes_per_detection 4 > num_classes 3 (dummy slots)",
           Options(max_classes_per_detection=4, num_classes=3, max_detections=5)),
    OpCase("op_fast_ties_top_classes", "scores on 5 levels: equal class scores ordered by partial_sort, equal box scores by stable sort",
           Options(max_classes_per_detection=3, num_classes=9, max_detections=10, nms_score_threshold=0.2),
           score_levels=4),
    OpCase("op_fast_ties_single_class", "scores on 3 levels, one class per detection (ArgMax picks the first maximum)",
           Options(num_classes=6, max_detections=10, nms_score_threshold=0.0), score_levels=2),
    OpCase("op_fast_use_regular_nms_omitted", "use_regular_nms removed from the options (default: fast)",
           Options(max_classes_per_detection=2, num_classes=4), omit=("use_regular_nms",)),
    OpCase("op_fast_iou_1", "IoU threshold 1: only identical boxes could be suppressed",
           Options(nms_iou_threshold=1.0, max_detections=20)),
    OpCase("op_fast_iou_small_scales_1", "IoU threshold 0.05, all box-coder scales 1",
           Options(nms_iou_threshold=0.05, y_scale=1.0, x_scale=1.0, h_scale=1.0, w_scale=1.0)),
    OpCase("op_fast_keypoint_encodings", "box encodings with 8 values per box (keypoints after the box)",
           Options(), encoding_length=8),
    OpCase("op_fast_degenerate_boxes", "anchors of zero height or width (zero-area boxes)",
           Options(nms_score_threshold=0.1, max_detections=15), anchors_fn=degenerate_anchors),
    OpCase("op_fast_extreme_encodings", "exp() overflow to an infinite box, underflow to a zero-width box, a far center",
           Options(nms_score_threshold=0.5), edit_inputs=extreme_inputs),
    OpCase("op_fast_large", "500 anchors, 20 classes + background",
           Options(num_classes=20, max_detections=25, nms_score_threshold=0.6, nms_iou_threshold=0.6), n=500, clusters=20),
    OpCase("op_regular_basic", "regular NMS, detections_per_class omitted (100)",
           Options(use_regular_nms=True)),
    OpCase("op_regular_2_per_class", "regular NMS, at most 2 detections per class",
           Options(use_regular_nms=True, detections_per_class=2, num_classes=8, max_detections=10)),
    OpCase("op_regular_ties", "regular NMS with many equal scores across classes (stable merge order)",
           Options(use_regular_nms=True, detections_per_class=4, num_classes=6, max_detections=12,
                   nms_score_threshold=0.2), score_levels=4),
    OpCase("op_regular_few", "regular NMS with few boxes above threshold",
           Options(use_regular_nms=True, nms_score_threshold=0.9, max_detections=10)),
    OpCase("op_regular_no_background", "regular NMS, no background column",
           Options(use_regular_nms=True, num_classes=4), background=False),
    OpCase("op_regular_2_classes_per_detection", "regular NMS with max_classes_per_detection 2 (rows past max_detections unwritten)",
           Options(use_regular_nms=True, max_classes_per_detection=2, max_detections=6)),
    OpCase("op_regular_large", "regular NMS, 500 anchors, 20 classes + background",
           Options(use_regular_nms=True, num_classes=20, max_detections=25, detections_per_class=5,
                   nms_score_threshold=0.6), n=500, clusters=20),
    OpCase("op_uint8_fast", "fast NMS, uint8 box encodings, scores and anchors", Options(),
           uint8=(True, True)),
    OpCase("op_uint8_regular", "regular NMS, uint8 box encodings, scores and anchors",
           Options(use_regular_nms=True, detections_per_class=3), uint8=(True, True)),
    OpCase("op_uint8_scores_only", "float box encodings and anchors, uint8 scores (many ties)",
           Options(max_classes_per_detection=2, nms_score_threshold=0.1), uint8=(False, True)),
    OpCase("op_uint8_boxes_only", "uint8 box encodings and anchors, float scores",
           Options(use_regular_nms=True), uint8=(True, False)),
]


def build_op_case(c: OpCase):
    rng = np.random.default_rng(G.seed_for(c.name))
    o = c.options
    anchors = (c.anchors_fn or (lambda r, n: random_anchors(r, n, c.clusters)))(rng, c.n)
    classes = o.num_classes + (1 if c.background else 0)
    boxes = box_encodings(rng, c.n, c.encoding_length, c.spread)
    scores = class_scores(rng, c.n, classes, c.score_levels)
    if c.edit_inputs is not None:
        boxes, scores = c.edit_inputs(boxes, scores)
    model = op_only_model(o, anchors, classes, c.encoding_length)
    model = fix_custom_options(model, o, c.omit)
    if c.uint8 is not None:
        boxes_q = quant_params(float(boxes.min()), float(boxes.max())) if c.uint8[0] else None
        scores_q = (1 / 256, 0) if c.uint8[1] else None
        anchors_q = quant_params(0.0, float(anchors.max())) if c.uint8[0] else None
        model = patch_to_uint8(model, boxes_q, scores_q, anchors_q, anchors)
        if boxes_q is not None:
            boxes = quantize(boxes, *boxes_q)
        if scores_q is not None:
            scores = quantize(scores, *scores_q)
    by_name = {"box_encodings": boxes, "class_predictions": scores}
    inputs = [by_name[d["name"].split("serving_default_")[-1].split(":")[0]] for d in G.input_details(model)]
    return model, inputs


@dataclass
class SSDCase:
    name: str
    description: str
    options: Options
    height: int = 12
    width: int = 12
    anchors_per_cell: int = 3
    quantized: bool = False


SSD_CASES = [
    SSDCase("ssd_float_fast", "conv backbone + heads, fast NMS", Options(num_classes=4, nms_score_threshold=0.5)),
    SSDCase("ssd_float_fast_2_classes", "conv backbone + heads, fast NMS, 2 classes per detection",
            Options(num_classes=4, max_classes_per_detection=2, nms_score_threshold=0.5, max_detections=8)),
    SSDCase("ssd_float_regular", "conv backbone + heads, regular NMS",
            Options(num_classes=4, use_regular_nms=True, detections_per_class=5, nms_score_threshold=0.5)),
    SSDCase("ssd_int8_fast", "full-integer int8 backbone + heads, fast NMS",
            Options(num_classes=4, nms_score_threshold=0.5), quantized=True),
    SSDCase("ssd_int8_regular", "full-integer int8 backbone + heads, regular NMS",
            Options(num_classes=4, use_regular_nms=True, detections_per_class=5, nms_score_threshold=0.5),
            quantized=True),
]


def build_ssd_case(c: SSDCase):
    rng = np.random.default_rng(G.seed_for(c.name))
    model, _ = ssd_model(c.options, rng, c.height, c.width, c.anchors_per_cell, c.options.num_classes + 1, c.quantized)
    det = G.input_details(model)[0]
    image = rng.uniform(-1, 1, (1, c.height, c.width, 3)).astype(np.float32)
    if det["dtype"] == np.int8:
        scale, zero_point = det["quantization"]
        image = np.clip(np.round(image / scale) + zero_point, -128, 127).astype(np.int8)
    return model, [image]


# ---------------------------------------------------------------------------
# The real SSD MobileNet v1: its post-processing op, cut out
# ---------------------------------------------------------------------------


def cut_out_postprocess(model_bytes: bytes) -> tuple[bytes, list[int]]:
    """A one-op model with the custom op of `model_bytes`; returns it and the original indices
    of its input tensors (box encodings, class predictions)."""
    model = G.parse_model(model_bytes)
    sg = model.subgraphs[0]
    op_index = next(i for i, o in enumerate(sg.operators) if model.operatorCodes[o.opcodeIndex].customCode == OP.encode())
    op = sg.operators[op_index]
    keep = list(op.inputs) + list(op.outputs)
    remap = {old: new for new, old in enumerate(keep)}
    new_buffers = [schema.BufferT()]
    tensors = []
    for old in keep:
        t = sg.tensors[old]
        buf = model.buffers[t.buffer]
        if buf is not None and buf.data is not None and len(buf.data) > 0:
            new_buffers.append(buf)
            t.buffer = len(new_buffers) - 1
        else:
            t.buffer = 0
        tensors.append(t)
    op.inputs = [remap[i] for i in op.inputs]
    op.outputs = [remap[i] for i in op.outputs]
    code = model.operatorCodes[op.opcodeIndex]
    op.opcodeIndex = 0
    model.operatorCodes = [code]
    sg.tensors = tensors
    sg.operators = [op]
    sg.inputs = [remap[keep[0]], remap[keep[1]]]
    sg.outputs = list(op.outputs)
    model.buffers = new_buffers
    model.subgraphs = [sg]
    model.signatureDefs = []
    model.metadata = []
    model.metadataBuffer = []
    return G.serialize_model(model), keep[:2]


def ssd_real_cases():
    """(name, description, model, inputs, reference outputs of the full model) per image."""
    from PIL import Image

    full = SSD_MODEL.read_bytes()
    one_op, (boxes_index, scores_index) = cut_out_postprocess(full)
    interp = Interpreter(model_content=full, experimental_op_resolver_type=OpResolverType.BUILTIN_REF,
                         num_threads=1, experimental_preserve_all_tensors=True)
    interp.allocate_tensors()
    inp = interp.get_input_details()[0]
    for image_name in SSD_IMAGES:
        img = Image.open(SHARED / "images" / image_name).convert("RGB").resize((300, 300), Image.BILINEAR)
        interp.set_tensor(inp["index"], np.asarray(img, dtype=np.uint8)[None])
        interp.invoke()
        inputs = [np.array(interp.get_tensor(boxes_index)), np.array(interp.get_tensor(scores_index))]
        full_outputs = [np.array(interp.get_tensor(d["index"])) for d in interp.get_output_details()]
        stem = Path(image_name).stem
        yield (f"ssd_mobilenet_v1_coco_{stem}",
               f"post-processing of ssd_mobilenet_v1_coco_quant.tflite on {image_name} (uint8 inputs captured from LiteRT)",
               one_op, inputs, full_outputs)


# ---------------------------------------------------------------------------
# Error models
# ---------------------------------------------------------------------------


def with_custom_options(model_bytes: bytes, options: bytes) -> bytes:
    model = G.parse_model(model_bytes)
    model.subgraphs[0].operators[0].customOptions = list(options)
    return G.serialize_model(model)


DEFAULT_OPTIONS = {"max_detections": 10, "max_classes_per_detection": 1, "use_regular_nms": False,
                   "nms_score_threshold": 0.3, "nms_iou_threshold": 0.5, "num_classes": 5,
                   "y_scale": 10.0, "x_scale": 10.0, "h_scale": 5.0, "w_scale": 5.0}


def options_blob(overrides: dict, remove: tuple = (), base: dict | None = None) -> bytes:
    """The op's options as a FlexBuffer map; values are written with the Python type they have."""
    base = dict(DEFAULT_OPTIONS if base is None else base)
    base.update(overrides)
    for k in remove:
        base.pop(k)
    b = flexbuffers.Builder()
    with b.Map():
        for k, v in base.items():
            if isinstance(v, bool):
                b.Bool(k, v)
            elif isinstance(v, int):
                b.Int(k, v)
            elif isinstance(v, float):
                b.Float(k, v)
            elif isinstance(v, str):
                b.String(k, v)
            elif isinstance(v, list):
                with b.Vector(k):
                    for e in v:
                        b.Float(e)
            else:
                raise TypeError(v)
    return bytes(b.Finish())


def with_anchors(model_bytes: bytes, anchors: np.ndarray) -> bytes:
    model = G.parse_model(model_bytes)
    sg = model.subgraphs[0]
    t = sg.tensors[sg.operators[0].inputs[2]]
    t.shape = list(anchors.shape)
    model.buffers[t.buffer].data = np.frombuffer(anchors.astype(np.float32).tobytes(), dtype=np.uint8)
    return G.serialize_model(model)


def with_input_type(model_bytes: bytes, slot: int, tensor_type: int) -> bytes:
    model = G.parse_model(model_bytes)
    sg = model.subgraphs[0]
    t = sg.tensors[sg.operators[0].inputs[slot]]
    t.type = tensor_type
    t.quantization = schema.QuantizationParametersT()
    t.quantization.scale, t.quantization.zeroPoint = [0.05], [0]
    return G.serialize_model(model)


def error_cases():
    """(name, model bytes, substrings the SwiftLite error must contain)."""
    rng = np.random.default_rng(G.seed_for("errors"))
    n = 16
    anchors = random_anchors(rng, n, 3)
    base = op_only_model(Options(), anchors, 6)
    yield "anchors_3_columns", with_anchors(base, anchors[:, :3]), ["anchors", "[16, 3]", "expected [16, 4]"]
    yield "anchors_count_mismatch", with_anchors(base, np.concatenate([anchors, anchors[:2]])), ["anchors", "[18, 4]", "expected [16, 4]"]
    yield "anchors_rank_3", with_anchors(base, anchors[None]), ["anchors", "rank 2"]
    negative = anchors.copy()
    negative[5, 2] = -0.1
    yield "anchors_negative_height", with_anchors(base, negative), ["anchor 5", "negative height"]
    yield "num_classes_mismatch", with_custom_options(base, options_blob({"num_classes": 3})), ["6 classes per box", "num_classes = 3"]
    yield "missing_max_detections", with_custom_options(base, options_blob({}, remove=("max_detections",))), ["'max_detections'", "missing"]
    yield "missing_num_classes", with_custom_options(base, options_blob({}, remove=("num_classes",))), ["'num_classes'", "missing"]
    yield "missing_y_scale", with_custom_options(base, options_blob({}, remove=("y_scale",))), ["'y_scale'", "missing"]
    yield "iou_threshold_is_string", with_custom_options(base, options_blob({"nms_iou_threshold": "0.5"})), ["'nms_iou_threshold'", "string", "expected a number"]
    yield "max_detections_is_float", with_custom_options(base, options_blob({"max_detections": 10.0})), ["'max_detections'", "float", "expected an integer"]
    yield "use_regular_nms_is_float", with_custom_options(base, options_blob({"use_regular_nms": 1.0})), ["'use_regular_nms'", "expected a bool"]
    yield "h_scale_is_vector", with_custom_options(base, options_blob({"h_scale": [5.0]})), ["'h_scale'", "vector", "expected a number"]
    yield "iou_threshold_zero", with_custom_options(base, options_blob({"nms_iou_threshold": 0.0})), ["nms_iou_threshold", "(0, 1]"]
    yield "max_classes_per_detection_zero", with_custom_options(base, options_blob({"max_classes_per_detection": 0})), ["max_classes_per_detection", "> 0"]
    yield "options_not_a_map", with_custom_options(base, bytes(flexbuffers.Dumps([1, 2]))), ["not a FlexBuffer map"]
    yield "options_truncated", with_custom_options(base, options_blob({})[40:]), ["custom options"]
    yield "options_empty", with_custom_options(base, b""), ["no custom options"]
    yield "box_encodings_int8", with_input_type(base, 0, schema.TensorType.INT8), ["box encodings", "int8", "float32 or uint8"]


# ---------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------


def litert_error(model_bytes: bytes) -> str:
    """What LiteRT says about an error model (for the record; SwiftLite is stricter in places)."""
    try:
        interp = Interpreter(model_content=model_bytes, experimental_op_resolver_type=OpResolverType.BUILTIN_REF,
                             num_threads=1)
        interp.allocate_tensors()
        for d in interp.get_input_details():
            interp.set_tensor(d["index"], np.zeros(d["shape"], dtype=d["dtype"]))
        interp.invoke()
        return "runs"
    except Exception as e:  # noqa: BLE001
        return "fails: " + str(e).strip().splitlines()[0][:160]


def main(argv: list[str]) -> None:
    filters = argv[1:]
    selected = lambda name: not filters or any(f in name for f in filters)  # noqa: E731
    G.reset_dir(OUT_DIR)
    cases = []

    def record(name, description, model, inputs, options: Options | None, tolerance=0, tolerance_reason=None,
               needs=None, expected=None):
        outputs, unwritten, ops = reference_outputs(model, inputs)
        if expected is not None:  # real SSD: the cut-out op must reproduce the full model
            for a, b in zip(outputs, expected, strict=True):
                if not np.array_equal(a, b):
                    raise AssertionError(f"{name}: the one-op model differs from the full model")
        info = check_detection_outputs(name, model, outputs, options) if options else {"count": int(outputs[op_output_roles(model).index("count")][0])}
        G.write_case(OUT_DIR, name, model, inputs, outputs)
        entry = {"name": name, "ops": G.unique_in_order(ops), "tolerance": tolerance, "description": description,
                 "detections": info["count"], "unwritten_slots": unwritten}
        details = Interpreter(model_content=model, experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
        entry["inputs"] = [{"name": d["name"], "shape": [int(x) for x in d["shape"]], "dtype": np.dtype(d["dtype"]).name}
                           for d in details.get_input_details()]
        entry["outputs"] = [{"name": d["name"], "role": role, "shape": list(o.shape), "dtype": o.dtype.name}
                            for d, role, o in zip(details.get_output_details(), op_output_roles(model), outputs)]
        if tolerance_reason:
            entry["tolerance_reason"] = tolerance_reason
        if needs:
            entry["needs"] = needs
        cases.append(entry)
        types = ",".join(str(a.dtype) for a in inputs)
        print(f"{name:52s} {len(model):7d} B  inputs {types:16s} ops={entry['ops']} "
              f"detections={info['count']} unwritten={unwritten}", flush=True)

    for c in OP_CASES:
        if selected(c.name):
            model, inputs = build_op_case(c)
            record(c.name, c.description, model, inputs, c.options)
    for c in SSD_CASES:
        if selected(c.name):
            model, inputs = build_ssd_case(c)
            if c.quantized:
                record(c.name, c.description, model, inputs, c.options, tolerance=0, needs="quantized")
            else:
                record(c.name, c.description, model, inputs, c.options, tolerance=BACKBONE_TOLERANCE,
                       tolerance_reason=BACKBONE_TOLERANCE_REASON,
                       needs="the backbone's kernels (CONV_2D, RESHAPE, LOGISTIC)")
    if SSD_MODEL.exists():
        for name, description, model, inputs, expected in ssd_real_cases():
            if selected(name):
                record(name, description, model, inputs, None, expected=expected)
    else:
        print(f"warning: {SSD_MODEL} missing, real-model cases skipped")

    G.write_manifest(OUT_DIR, G.origin(GENERATOR), cases)

    if not filters or any("error" in f for f in filters):
        G.reset_dir(ERR_DIR)
        errors = []
        for name, model, expect in error_cases():
            (ERR_DIR / f"{name}.tflite").write_bytes(model)
            errors.append({"name": name, "expect": expect, "litert": litert_error(model)})
            print(f"error model {name:40s} LiteRT {errors[-1]['litert']}")
        with open(ERR_DIR / "errors.json", "w") as f:
            json.dump({"origin": G.origin(GENERATOR), "cases": errors}, f, indent=1)
            f.write("\n")

    total = G.dir_size(OUT_DIR) + (G.dir_size(ERR_DIR) if ERR_DIR.exists() else 0)
    print(f"\n{len(cases)} cases written to {OUT_DIR.relative_to(G.REPO_ROOT)}; total fixture size {total} bytes")
    if not filters and total > SIZE_BUDGET_BYTES:
        raise SystemExit(f"fixture size {total} exceeds budget {SIZE_BUDGET_BYTES}")


if __name__ == "__main__":
    main(sys.argv)
