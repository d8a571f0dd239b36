#!/usr/bin/env python3
"""Reference results for FaceDetector: MediaPipe 0.10.14's own Python FaceDetector
(mediapipe.tasks.python.vision.FaceDetector) on the face models its wheel carries.

MediaPipe 0.10.14 is pinned (Tests/Goldens/requirements-mediapipe-0.10.14.txt), in a venv of its
own OUTSIDE the repository (the main venv has mediapipe 1.2.3):

    python3 -m venv /work/venv-mp010
    /work/venv-mp010/bin/pip install -r Tests/Goldens/requirements-mediapipe-0.10.14.txt
    /work/venv-mp010/bin/python Tests/Goldens/make_mediapipe_face_goldens.py

Models: mediapipe/modules/face_detection/face_detection_short_range.tflite from the wheel (the
same file, by SHA-256, as the model-zoo cache's, which the Swift test reads). The full-range
sparse model is tried too: MediaPipe 0.10.14's FaceDetectorGraph hard-codes the short-range
anchors (896 boxes), so it refuses the 2304-box full-range model; the refusal is recorded.

The full-range golden comes from a second run with the root venv (mediapipe 1.2.3, pinned in
the root requirements.txt), whose FaceDetectorGraph chooses the anchors by input size (128 or
192); that run reads the model from the model-zoo cache (fetch_model_zoo.py) and writes only
face_detection_full_range_sparse.json:

    /work/venv/bin/python Tests/Goldens/make_mediapipe_face_goldens.py

Photos: every ../shared/images photo (one per stem, png > jpg > bmp; they are read, never
copied) and Tests/TasksTests/Fixtures/faces/astronaut.jpg (scikit-image's astronaut(), public
domain NASA photo; written by this script when missing). Each is decoded with PIL ->
RGB uint8 numpy -> mp.Image(SRGB) (SwiftLite's decoders match PIL byte for byte).

Options: running mode IMAGE, min_detection_confidence 0.5 and min_suppression_threshold 0.3
(MediaPipe's defaults); a second pass with min_detection_confidence 0.3 exercises more boxes.

Also written, from MediaPipe's semantics re-implemented here in numpy (not from SwiftLite):
the SSD anchors of both face models (ssd_anchors_calculator.cc with face_detector_graph.cc's
options): count, the first and last three, and every 97th.

Output: Tests/TasksTests/Fixtures/mediapipe_face/face_detection_short_range.json and
Tests/TasksTests/Fixtures/mediapipe_face/anchors.json.
"""
from __future__ import annotations

import hashlib
import importlib.metadata
import json
import math
import os
from pathlib import Path

os.environ.setdefault("GLOG_minloglevel", "2")

import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
OUT = REPO / "Tests" / "TasksTests" / "Fixtures" / "mediapipe_face"
FIXTURE = REPO / "Tests" / "TasksTests" / "Fixtures" / "faces" / "astronaut.jpg"
GENERATOR = "Tests/Goldens/make_mediapipe_face_goldens.py"
CONFIDENCES = (0.5, 0.3)
SUPPRESSION = 0.3


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def photos() -> list[Path]:
    rank = {".png": 0, ".jpg": 1, ".jpeg": 1, ".bmp": 2}
    best: dict[str, Path] = {}
    for p in sorted((SHARED / "images").iterdir()):
        ext = p.suffix.lower()
        if ext in rank and (p.stem not in best or rank[ext] < rank[best[p.stem].suffix.lower()]):
            best[p.stem] = p
    return [best[k] for k in sorted(best)]


def make_fixture() -> None:
    """scikit-image's astronaut (NASA, public domain), 512x512, as a baseline JPEG (quality 90)."""
    if FIXTURE.exists():
        return
    from skimage import data

    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(data.astronaut()).save(FIXTURE, quality=90)


# ---------------------------------------------------------------------------
# SSD anchors, MediaPipe semantics (ssd_anchors_calculator.cc, non-multiscale path)
# ---------------------------------------------------------------------------
def calculate_scale(min_scale, max_scale, index, count):
    f = np.float32
    if count == 1:
        return f((f(min_scale) + f(max_scale)) * f(0.5))
    # float + (float - float) * 1.0 * int / (count - 1.0f): promoted to double, returned as float
    return f(float(f(min_scale)) + float(f(max_scale) - f(min_scale)) * 1.0 * index / float(f(count) - f(1)))


def ssd_anchors(num_layers, min_scale, max_scale, height, width, strides, aspect_ratios,
                interpolated, fixed_size, offset=0.5, reduce_lowest=False):
    f = np.float32
    anchors = []
    layer = 0
    while layer < num_layers:
        ratios, scales = [], []
        last = layer
        while last < len(strides) and strides[last] == strides[layer]:
            scale = calculate_scale(min_scale, max_scale, last, len(strides))
            if last == 0 and reduce_lowest:
                ratios += [1.0, 2.0, 0.5]
                scales += [f(0.1), scale, scale]
            else:
                for r in aspect_ratios:
                    ratios.append(r)
                    scales.append(scale)
                if interpolated > 0:
                    nxt = f(1.0) if last == len(strides) - 1 else calculate_scale(
                        min_scale, max_scale, last + 1, len(strides))
                    scales.append(f(math.sqrt(float(f(scale * nxt)))))
                    ratios.append(interpolated)
            last += 1
        sizes = [(f(s * f(math.sqrt(r))), f(s / f(math.sqrt(r)))) for r, s in zip(ratios, scales)]
        fh = math.ceil(height / strides[layer])
        fw = math.ceil(width / strides[layer])
        for y in range(fh):
            for x in range(fw):
                for w, h in sizes:
                    xc = f(f(x + f(offset)) * f(1.0) / f(fw))
                    yc = f(f(y + f(offset)) * f(1.0) / f(fh))
                    anchors.append((float(xc), float(yc), 1.0 if fixed_size else float(w),
                                    1.0 if fixed_size else float(h)))
        layer = last
    return anchors


def anchor_goldens() -> dict:
    configs = {
        # face_detector_graph.cc, image_width == 128
        "short_range_128": dict(num_layers=4, min_scale=0.1484375, max_scale=0.75, height=128, width=128,
                                strides=[8, 16, 16, 16], aspect_ratios=[1.0], interpolated=1.0, fixed_size=True),
        # face_detector_graph.cc (newer MediaPipe), image_width == 192
        "full_range_192": dict(num_layers=1, min_scale=0.1484375, max_scale=0.75, height=192, width=192,
                               strides=[4], aspect_ratios=[1.0], interpolated=0.0, fixed_size=True),
        # Not a face model: exercises sizes (fixed_anchor_size false), merged layers, several
        # aspect ratios and reduce_boxes_in_lowest_layer (the calculator's SSD MobileNet example, 300x300).
        "ssd_mobilenet_300": dict(num_layers=6, min_scale=0.2, max_scale=0.95, height=300, width=300,
                                  strides=[16, 32, 64, 128, 256, 512], aspect_ratios=[1.0, 2.0, 0.5, 3.0, 0.3333],
                                  interpolated=1.0, fixed_size=False, reduce_lowest=True),
    }
    out = {}
    for name, c in configs.items():
        a = ssd_anchors(**c)
        picked = sorted(set([0, 1, 2, len(a) - 3, len(a) - 2, len(a) - 1] + list(range(0, len(a), 97))))
        out[name] = {"options": c, "count": len(a),
                     "samples": [{"index": i, "x_center": a[i][0], "y_center": a[i][1],
                                  "w": a[i][2], "h": a[i][3]} for i in picked]}
    return out


# ---------------------------------------------------------------------------
def detector(model: Path, confidence: float):
    from mediapipe.tasks.python import vision
    from mediapipe.tasks.python.core import base_options

    return vision.FaceDetector.create_from_options(vision.FaceDetectorOptions(
        base_options=base_options.BaseOptions(model_asset_path=str(model)),
        running_mode=vision.RunningMode.IMAGE,
        min_detection_confidence=confidence, min_suppression_threshold=SUPPRESSION))


def record(result) -> list:
    out = []
    for d in result.detections:
        b = d.bounding_box
        out.append({
            "bounding_box": {"origin_x": b.origin_x, "origin_y": b.origin_y, "width": b.width, "height": b.height},
            "score": d.categories[0].score,
            "index": d.categories[0].index,
            "keypoints": [{"x": k.x, "y": k.y} for k in d.keypoints],
        })
    return out


def main():
    import mediapipe as mp

    if not SHARED.is_dir():
        raise SystemExit(f"{SHARED} not found")
    make_fixture()
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "anchors.json").write_text(json.dumps(
        {"generator": GENERATOR, "semantics": "mediapipe/calculators/tflite/ssd_anchors_calculator.cc (v0.10.14), "
         "re-implemented in numpy float32; options from mediapipe/tasks/cc/vision/face_detector/face_detector_graph.cc",
         "configs": anchor_goldens()}, indent=1) + "\n")

    modules = Path(mp.__file__).parent / "modules" / "face_detection"
    images = [(p, str(p.relative_to(SHARED)), "../shared") for p in photos()] + \
             [(FIXTURE, str(FIXTURE.relative_to(REPO)), "repository root")]
    versions = {p: importlib.metadata.version(p) for p in ("mediapipe", "numpy", "pillow")}

    refused = {}
    if versions["mediapipe"] == "0.10.14":
        names = ("face_detection_short_range", "face_detection_full_range_sparse")
    else:
        names = ("face_detection_full_range_sparse",)
        zoo = Path(os.environ.get("SWIFTLITE_MODEL_ZOO") or Path.home() / ".cache" / "swiftlite" / "model_zoo")
        modules = zoo  # this wheel's own copy may differ; the zoo's is the 0.10.14 wheel's file
    for name in names:
        model = modules / f"{name}.tflite"
        runs = []
        try:
            for confidence in CONFIDENCES:
                det = detector(model, confidence)
                entries = []
                for path, rel, base in images:
                    arr = np.ascontiguousarray(np.asarray(Image.open(path).convert("RGB"), dtype=np.uint8))
                    result = det.detect(mp.Image(image_format=mp.ImageFormat.SRGB, data=arr))
                    entries.append({"file": rel, "relative_to": base, "width": arr.shape[1], "height": arr.shape[0],
                                    "detections": record(result)})
                det.close()
                runs.append({"min_detection_confidence": confidence, "min_suppression_threshold": SUPPRESSION,
                             "images": entries})
        except Exception as error:  # MediaPipe refuses the model (full range in 0.10.14)
            refused[name] = str(error).strip().splitlines()[-1][:300]
            print(f"{name}: MediaPipe {versions['mediapipe']} refuses it: {refused[name]}")
            continue
        doc = {
            "generator": GENERATOR,
            "versions": versions,
            "model": {"file": f"{name}.tflite", "from": str(model.parent) if modules != Path(mp.__file__).parent / "modules" / "face_detection"
                      else f"mediapipe {versions['mediapipe']} wheel, mediapipe/modules/face_detection/",
                      "sha256": sha256(model), "model_zoo_path": f"~/.cache/swiftlite/model_zoo/{name}.tflite"},
            "decoded_with": "PIL.Image.open(...).convert('RGB') -> uint8 numpy -> mp.Image(SRGB)",
            "notes": [
                "detections in MediaPipe's order (weighted NMS output, descending score)",
                "bounding_box in pixels of the image; keypoints normalised to the image (six: eyes, nose, mouth, ears)",
                "category index 0, no category name (MediaPipe's face detector has no labels)",
            ],
            "runs": runs,
            "refused_models": refused,
        }
        out = OUT / f"{name}.json"
        out.write_text(json.dumps(doc, indent=1) + "\n")
        for run in runs:
            counts = {Path(e["file"]).stem: len(e["detections"]) for e in run["images"]}
            print(f"{out.relative_to(REPO)} @ {run['min_detection_confidence']}: {counts}")
    if refused and versions["mediapipe"] == "0.10.14":
        # Attach the refusals to the short-range golden, which always exists.
        path = OUT / "face_detection_short_range.json"
        doc = json.loads(path.read_text())
        doc["refused_models"] = refused
        path.write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main()
