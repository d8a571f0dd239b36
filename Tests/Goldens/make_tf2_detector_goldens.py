#!/usr/bin/env python3
"""Generates TF2 Object Detection API-style SSD fixtures for ObjectDetector's output-role tests.

Run from the repository root:

    /work/venv/bin/python Tests/Goldens/make_tf2_detector_goldens.py

Output (deleted and rewritten on every run):

    Tests/TasksTests/Fixtures/tf2_detector/<case>.tflite
    Tests/TasksTests/Fixtures/tf2_detector/image.png      (the 48x48 photo every case sees)
    Tests/TasksTests/Fixtures/tf2_detector/manifest.json  (origin, roles, LiteRT outputs per case)

Each SSD is the small network of make_detection_goldens.py (conv backbone, box and class heads,
the exporter-style `experimental_implements` post-processing, converted by the real TFLite
converter), float32, 48x48 input. Then the model is made to look like a TF2 OD-API export:

* its subgraph outputs are reordered to scores, boxes, count, classes (what
  export_tflite_graph_tf2.py SavedModels produce once converted), and
* `tf2_ssd_int8` is the same network with full-integer int8 quantization (int8 input fed the
  8-bit value minus 128, as MediaPipe does), compared exactly, and
* its output tensors are renamed: `tf2_ssd_exporter_names` keeps the converter's
  "StatefulPartitionedCall:<n>" names (no role in the name: the post-process op's output
  slot decides); `tf2_ssd_role_names` uses the SavedModel signature keys as tensor names
  ("detection_scores", ...: the tensor-name rule decides); `tf2_ssd_metadata` additionally
  carries MediaPipe-style metadata (mediapipe's object-detector metadata writer, whose four
  output entries — "location", "category", "score", "number of detections" — are listed in the
  reordered output order, as a model author describing this model would), labels and
  normalisation mean 127.5 / std 127.5 (the metadata rule decides).

`shapes_only` has four outputs shaped like the op's but computed by ordinary operators with
role-less names (the shape rule decides boxes and count; the two [1, N] outputs are classes then
scores in model order). `undecidable_four_outputs` is a model without the post-process op whose four float [1, 10]
outputs have role-less names: ObjectDetector must refuse it with an error naming what it found.

Ground truth: LiteRT with the BUILTIN_REF resolver on the exact input tensor ObjectDetector
builds for image.png (its size equals the model's, so resampling is the identity; pixels are
normalised as MediaPipe does: x / 255 without metadata, (x - 127.5) / 127.5 with it).
"""

from __future__ import annotations

import io
import json
import sys
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import golden_io as G  # noqa: E402  (sets TF env vars before TF import)
import make_detection_goldens as D  # noqa: E402

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from PIL import Image  # noqa: E402
import flatbuffers  # noqa: E402
from ai_edge_litert import schema_py_generated as schema  # noqa: E402
from mediapipe.tasks.metadata import metadata_schema_py_generated as md  # noqa: E402

GENERATOR = "Tests/Goldens/make_tf2_detector_goldens.py"
OUT_DIR = G.REPO_ROOT / "Tests" / "TasksTests" / "Fixtures" / "tf2_detector"
SIZE = 48
LABELS = ["circle", "square", "triangle"]
# TF2 export order of the post-process op's outputs, as op slots (boxes 0, classes 1, scores 2, count 3).
TF2_ORDER = [2, 0, 3, 1]
ROLE_OF_SLOT = ["location", "category", "score", "number of detections"]
SIGNATURE_KEYS = ["detection_boxes", "detection_classes", "detection_scores", "num_detections"]


def photo() -> np.ndarray:
    """A deterministic 48x48 RGB picture: a gradient with a few bright rectangles."""
    rng = np.random.default_rng(D.seed_for("tf2_detector_photo"))
    y, x = np.mgrid[0:SIZE, 0:SIZE]
    img = np.stack([x * 5, y * 5, (x + y) * 2], axis=-1).astype(np.float64)
    for _ in range(4):
        x0, y0 = rng.integers(0, SIZE - 12, 2)
        img[y0:y0 + 12, x0:x0 + 12] = rng.integers(0, 256, 3)
    return np.clip(img, 0, 255).astype(np.uint8)


def int8_ssd() -> bytes:
    """The SSD with full-integer int8 quantization (int8 input; the post-process op stays float)."""
    options = D.Options(max_detections=6, num_classes=len(LABELS), nms_score_threshold=0.2)
    rng = np.random.default_rng(D.seed_for("tf2_ssd_int8"))
    model, _ = D.ssd_model(options, rng, SIZE, SIZE, anchors_per_cell=2,
                           classes_with_background=len(LABELS) + 1, quantized=True)
    return model


def base_ssd(pixels: np.ndarray) -> bytes:
    """The first seeded SSD whose detections on `pixels` span at least two classes (random heads
    often saturate on one), so a classes/scores mix-up cannot go unnoticed."""
    options = D.Options(max_detections=6, num_classes=len(LABELS), nms_score_threshold=0.2)
    for attempt in range(50):
        rng = np.random.default_rng(D.seed_for(f"tf2_ssd_{attempt}"))
        model, _ = D.ssd_model(options, rng, SIZE, SIZE, anchors_per_cell=2,
                               classes_with_background=len(LABELS) + 1, quantized=False)
        by_role = dict(zip(D.op_output_roles(model), run(model, pixels, 0.0, 255.0)))
        if len(set(by_role["classes"][0, :int(by_role["count"][0])].tolist())) >= 2:
            return model
    raise AssertionError("no seed gave detections of two classes")


def tf2_shaped(model_bytes: bytes, names: list[str] | None) -> bytes:
    """Reorders the subgraph outputs to TF2_ORDER; renames them (by op slot) when `names` is given."""
    model = G.parse_model(model_bytes)
    sg = model.subgraphs[0]
    op = next(o for o in sg.operators if model.operatorCodes[o.opcodeIndex].customCode == D.OP.encode())
    slots = list(op.outputs)
    sg.outputs = [slots[s] for s in TF2_ORDER]
    for position, slot in enumerate(TF2_ORDER):
        sg.tensors[slots[slot]].name = (names[slot] if names else f"StatefulPartitionedCall:{position}").encode()
    return G.serialize_model(model)


def with_metadata(model_bytes: bytes) -> bytes:
    """Packs metadata_schema.fbs metadata as MediaPipe's metadata writer lays it out (whose
    pybind module the mediapipe wheel lacks): normalisation on the input; four output entries
    named "location", "category", "score", "number of detections", listed in the model's
    (reordered) output order; the labels file on "category", zipped after the model."""
    def output_md(slot: int):
        t = md.TensorMetadataT()
        t.name = ROLE_OF_SLOT[slot]
        if slot == 1:
            f = md.AssociatedFileT()
            f.name, f.description, f.type = "labels.txt", "Labels for categories.", md.AssociatedFileType.TENSOR_VALUE_LABELS
            t.associatedFiles = [f]
        return t

    norm = md.NormalizationOptionsT()
    norm.mean, norm.std = [127.5], [127.5]
    unit = md.ProcessUnitT()
    unit.optionsType, unit.options = md.ProcessUnitOptions.NormalizationOptions, norm
    image = md.TensorMetadataT()
    image.name, image.processUnits = "image", [unit]
    sub = md.SubGraphMetadataT()
    sub.inputTensorMetadata = [image]
    sub.outputTensorMetadata = [output_md(s) for s in TF2_ORDER]
    root = md.ModelMetadataT()
    root.name, root.description, root.version = "tf2_ssd_metadata", "TF2 OD-API-style SSD with reordered outputs", "v1"
    root.subgraphMetadata = [sub]
    b = flatbuffers.Builder(0)
    b.Finish(root.Pack(b), file_identifier=b"M001")
    blob = bytes(b.Output())

    model = G.parse_model(model_bytes)
    buffer = schema.BufferT()
    buffer.data = list(blob)
    model.buffers.append(buffer)
    entry = schema.MetadataT()
    entry.name, entry.buffer = "TFLITE_METADATA", len(model.buffers) - 1
    model.metadata = (model.metadata or []) + [entry]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as z:
        z.writestr(zipfile.ZipInfo("labels.txt", date_time=(2026, 1, 1, 0, 0, 0)), "\n".join(LABELS) + "\n")
    return G.serialize_model(model) + out.getvalue()


def undecidable() -> bytes:
    class Four(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([1, SIZE, SIZE, 3], tf.float32, name="image")])
        def run(self, image):
            m = tf.reduce_mean(image, axis=[1, 2])
            v = tf.matmul(m, tf.constant(np.linspace(-1, 1, 30, dtype=np.float32).reshape(3, 10)))
            return {"out_a": v, "out_b": v * 2.0, "out_c": v + 1.0, "out_d": v - 1.0}

    m = Four()
    with_names = D.convert_saved_model(m, m.run.get_concrete_function())
    return with_names


def shapes_only() -> bytes:
    """Four outputs shaped like the post-process op's (boxes [1, 6, 4], two [1, 6], count [1]) but
    computed by ordinary operators, with role-less names: only their shapes tell them apart."""
    class Shaped(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([1, SIZE, SIZE, 3], tf.float32, name="image")])
        def run(self, image):
            m = tf.reduce_mean(image, axis=[1, 2])
            w = tf.constant(np.linspace(0, 1, 18, dtype=np.float32).reshape(3, 6))
            row = tf.sigmoid(tf.matmul(m, w))
            return {"out_a": tf.reshape(tf.concat([row, row, row, row], axis=1), [1, 6, 4]), "out_b": row,
                    "out_c": row * 0.5, "out_d": tf.reduce_sum(row, axis=1)}

    m = Shaped()
    return D.convert_saved_model(m, m.run.get_concrete_function())


def run(model_bytes: bytes, pixels: np.ndarray, mean: float, std: float) -> list[np.ndarray]:
    if G.input_details(model_bytes)[0]["dtype"] == np.int8:
        # MediaPipe (and ObjectDetector) feed an int8 image input the 8-bit value minus 128.
        outputs, _ = G.run_model(model_bytes, [(pixels.astype(np.int16) - 128).astype(np.int8)[None]])
        return [np.asarray(o) for o in outputs]
    x = ((pixels.astype(np.float32) - np.float32(mean)) / np.float32(std))[None].astype(np.float32)
    outputs, _ = G.run_model(model_bytes, [x])
    return [np.asarray(o) for o in outputs]


def main() -> None:
    G.reset_dir(OUT_DIR)
    pixels = photo()
    Image.fromarray(pixels).save(OUT_DIR / "image.png")
    base = base_ssd(pixels)
    role_names = tf2_shaped(base, SIGNATURE_KEYS)
    cases = {
        "tf2_ssd_exporter_names": (tf2_shaped(base, None), 0.0, 255.0, "post-process op outputs"),
        "tf2_ssd_role_names": (role_names, 0.0, 255.0, "tensor names"),
        "tf2_ssd_metadata": (with_metadata(tf2_shaped(base, SIGNATURE_KEYS)), 127.5, 127.5, "metadata"),
        "tf2_ssd_int8": (tf2_shaped(int8_ssd(), None), 0.0, 0.0, "post-process op outputs"),
    }
    manifest = {"origin": G.origin(GENERATOR), "image": "image.png", "labels": LABELS,
                "tolerance": D.BACKBONE_TOLERANCE, "tolerance_reason": D.BACKBONE_TOLERANCE_REASON, "cases": []}
    for name, (model, mean, std, rule) in cases.items():
        (OUT_DIR / f"{name}.tflite").write_bytes(model)
        outputs = run(model, pixels, mean, std)
        details = G.make_interpreter(model).get_output_details()
        roles = [ROLE_OF_SLOT[s] for s in TF2_ORDER]
        by_role = dict(zip(roles, outputs))
        count = int(by_role["number of detections"][0])
        if count == 0:
            raise AssertionError(f"{name}: no detections; pick another seed")
        manifest["cases"].append({
            "name": name, "model": f"{name}.tflite", "rule": rule, "roles": roles,
            # int8 backbone: exact (SwiftLite's int8 kernels are bit-exact with BUILTIN_REF).
            "tolerance": 0.0 if name.endswith("int8") else D.BACKBONE_TOLERANCE,
            "output_names": [d["name"] for d in details],
            "count": count,
            "boxes": by_role["location"][0, :count].tolist(),
            "classes": by_role["category"][0, :count].tolist(),
            "scores": by_role["score"][0, :count].tolist(),
        })
    (OUT_DIR / "undecidable_four_outputs.tflite").write_bytes(undecidable())
    shaped = shapes_only()
    (OUT_DIR / "shapes_only.tflite").write_bytes(shaped)
    manifest["shapes_only"] = {"model": "shapes_only.tflite",
                               "output_shapes": [[int(x) for x in d["shape"]] for d in G.make_interpreter(shaped).get_output_details()]}
    with open(OUT_DIR / "manifest.json", "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    print(f"wrote {OUT_DIR} ({G.dir_size(OUT_DIR)} bytes)")


if __name__ == "__main__":
    main()
