#!/usr/bin/env python3
"""Reference results of MediaPipe's Python ImageClassifier, for the Tasks tests.

Run from the repository root:

    /work/venv/bin/python Tests/Goldens/make_mediapipe_classifier_goldens.py

Writes Tests/TasksTests/Fixtures/mediapipe_classifier/<model>.json for

  * Models/efficientnet_lite0_f32.tflite   (metadata embedded in the model)
  * Models/efficientnet_lite0_int8.tflite  (metadata embedded in the model)
  * ../shared/models/mobilenet_v2_1.0_224_quant.tflite
  * ../shared/models/mobilenet_v2_1.0_224_inat_bird_quant.tflite

MediaPipe needs TFLite metadata (labels). The shared models as distributed
already carry image-classifier metadata (normalisation 127.5/127.5, labels
packed as TENSOR_AXIS_LABELS); the script checks that the packed labels equal
../shared/models/labels/<file> and then runs the *original* file, so the Swift
tests can load the very same bytes. Only if a shared model had no metadata
would metadata be added to a temporary copy with MediaPipe's image classifier
metadata writer (same labels, mean 127.5 / std 127.5 — for uint8 inputs the
writer stores the value range 0..255 and MediaPipe feeds raw pixels, so
mean/std only document the float meaning of the quantized input).
../shared is never written.

Photos: every ../shared/images/* photo, one per stem, png preferred over jpg
over bmp. PNG/JPEG are decoded by MediaPipe (mp.Image.create_from_file); BMP,
which MediaPipe does not decode, via PIL -> RGB uint8 numpy ->
mp.Image(SRGB). Each image entry records which path was taken.

Options: running_mode IMAGE, max_results 5, everything else default (no score
threshold, no allow/deny list, no region of interest / rotation).
"""
from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("GLOG_minloglevel", "2")

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
sys.path.insert(0, str(REPO / "Models" / "scripts"))

from classifier_eval import (MediaPipeClassifier, embedded_labels, list_photos,  # noqa: E402
                             mediapipe_image)

GENERATOR = "Tests/Goldens/make_mediapipe_classifier_goldens.py"
OUT_DIR = REPO / "Tests" / "TasksTests" / "Fixtures" / "mediapipe_classifier"
MAX_RESULTS = 5

MODELS = [
    # (json name, path, base for the recorded path, labels file or None if embedded, description)
    ("efficientnet_lite0_f32", REPO / "Models" / "efficientnet_lite0_f32.tflite", REPO, None,
     "SwiftLite default classifier, float32"),
    ("efficientnet_lite0_int8", REPO / "Models" / "efficientnet_lite0_int8.tflite", REPO, None,
     "SwiftLite default classifier, full-integer int8 (uint8 I/O)"),
    ("mobilenet_v2_1.0_224_quant", SHARED / "models" / "mobilenet_v2_1.0_224_quant.tflite", SHARED,
     SHARED / "models" / "labels" / "imagenet_labels.txt",
     "TF hosted MobileNet v2 1.0 224 quant (uint8), 1001 classes incl. background"),
    ("mobilenet_v2_1.0_224_inat_bird_quant", SHARED / "models" / "mobilenet_v2_1.0_224_inat_bird_quant.tflite",
     SHARED, SHARED / "models" / "labels" / "inat_bird_labels.txt",
     "MobileNet v2 iNaturalist birds (uint8), 965 classes"),
]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_labels(labels_file: Path) -> list:
    labels = labels_file.read_text().splitlines()
    while labels and not labels[-1].strip():
        labels.pop()
    return labels


def with_metadata(model: Path, labels_file: Path, tmp: Path) -> Path:
    from write_metadata import add_classifier_metadata

    labels = read_labels(labels_file)
    buf, _ = add_classifier_metadata(
        model.read_bytes(), labels, name=model.stem,
        description="temporary copy with metadata for golden generation",
        mean=127.5, std=127.5, labels_filename=labels_file.name)
    out = tmp / model.name
    out.write_bytes(buf)
    return out


def main():
    if not SHARED.is_dir():
        raise SystemExit(f"{SHARED} not found")
    photos = list_photos(str(SHARED / "images"))
    if OUT_DIR.exists():
        shutil.rmtree(OUT_DIR)
    OUT_DIR.mkdir(parents=True)
    versions = {p: importlib.metadata.version(p) for p in ("mediapipe", "numpy", "pillow")}

    with tempfile.TemporaryDirectory() as tmpdir:
        for name, path, base, labels_file, desc in MODELS:
            run_path = path
            metadata_note = "embedded in the model file"
            packed = embedded_labels(str(path))
            if labels_file is not None and packed is not None:
                if packed != read_labels(labels_file):
                    raise SystemExit(f"{path.name}: packed labels differ from {labels_file}")
                metadata_note = (
                    "embedded in the model file as distributed (image classifier metadata, "
                    "normalization mean 127.5 std 127.5, packed labels identical to "
                    f"{labels_file.relative_to(SHARED)})")
            elif labels_file is not None:
                run_path = with_metadata(path, labels_file, Path(tmpdir))
                metadata_note = (
                    "none in the original; added to a temporary copy with MediaPipe's "
                    f"image_classifier metadata writer: labels {labels_file.relative_to(SHARED)} "
                    "(TENSOR_AXIS_LABELS), normalization mean 127.5 std 127.5")
            clf = MediaPipeClassifier(str(run_path), max_results=MAX_RESULTS)
            images = []
            for p in photos:
                img, how = mediapipe_image(p)
                images.append({
                    "file": str(Path(p).relative_to(SHARED)),
                    "decoded_with": how,
                    "width": img.width,
                    "height": img.height,
                    "categories": clf.classify(img),
                })
            clf.close()
            doc = {
                "generator": GENERATOR,
                "versions": versions,
                "model": {
                    "file": str(path.relative_to(base)),
                    "relative_to": "repository root" if base == REPO else "../shared",
                    "sha256": sha256(path),
                    "description": desc,
                    "metadata": metadata_note,
                },
                "options": {"running_mode": "IMAGE", "max_results": MAX_RESULTS,
                            "score_threshold": None, "region_of_interest": None,
                            "rotation_degrees": 0},
                "notes": [
                    "categories are in MediaPipe's output order (descending score); the order "
                    "among categories with equal scores (common for uint8 outputs, e.g. several "
                    "0.0) is not specified, so compare tied entries as a set",
                    "preprocessing is MediaPipe's own: the whole image is stretched to the model "
                    "input (no crop, no letterbox) by a bilinear warp WITHOUT antialiasing "
                    "(cv::warpAffine INTER_LINEAR, BORDER_REPLICATE, on uint8 pixels, "
                    "corner-aligned map x_src = x_dst * src_w / dst_w); emulating that and running "
                    "LiteRT (BUILTIN_REF) reproduced these scores within ~1e-2 when the goldens were "
                    "made, whereas an antialiased (PIL) bilinear resize differs by up to ~0.14",
                ],
                "images_relative_to": "../shared",
                "images": images,
            }
            out = OUT_DIR / f"{name}.json"
            out.write_text(json.dumps(doc, indent=1) + "\n")
            tops = ", ".join(f"{Path(i['file']).stem}={i['categories'][0]['category_name']}"
                             f" {i['categories'][0]['score']:.3f}" for i in images)
            print(f"{out.relative_to(REPO)}: {tops}")


if __name__ == "__main__":
    main()
