#!/usr/bin/env python3
"""MediaPipe's verdict on models whose metadata `swiftlite metadata write` wrote.

Run from the repository root after `swift build`:

    /work/venv/bin/python Tests/Goldens/make_metadata_writer_goldens.py [.build/debug/swiftlite]

Versions: mediapipe==1.2.3, Python 3.11 (requirements.txt).

For each case the script

  1. makes a metadata-less copy of the model by renaming its `TFLITE_METADATA`
     metadata entry to `XFLITE_METADATA` (same length, so nothing else moves;
     TFLite readers then find no metadata) -- the Swift tests make the same copy;
  2. checks that MediaPipe refuses that copy (and records its message);
  3. runs `swiftlite metadata write` on it (labels, normalization as given);
  4. loads the written model in MediaPipe (ImageClassifier or ObjectDetector)
     and records its results on Models/demo/cat.png, and for the classifier also
     MediaPipe's results on the original model with its own metadata, which must
     be the same categories with the same scores.

The SHA-256 of every written model is recorded: the Swift tests write the same
bytes with MetadataWriter and compare the hash, then compare SwiftLite's
results with MediaPipe's. Writes Tests/TasksTests/Fixtures/metadata_writer/goldens.json.
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("GLOG_minloglevel", "2")

import mediapipe as mp  # noqa: E402
from mediapipe.tasks import python as mp_python  # noqa: E402
from mediapipe.tasks.python import vision  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
OUT = REPO / "Tests" / "TasksTests" / "Fixtures" / "metadata_writer" / "goldens.json"
IMAGE = REPO / "Models" / "demo" / "cat.png"

CASES = [
    # name, model, flags for `metadata write`, task
    ("efficientnet_lite0_f32", REPO / "Models" / "efficientnet_lite0_f32.tflite",
     ["--labels", str(REPO / "Models" / "imagenet_labels_1000.txt"), "--normalization", "127.5,127.5",
      "--name", "EfficientNet-Lite0 (written by swiftlite)"], "classify"),
    ("ssd_mobilenet_v1_coco_quant", SHARED / "models" / "ssd_mobilenet_v1_coco_quant.tflite",
     ["--labels", str(SHARED / "models" / "labels" / "coco_labels.txt"), "--score-threshold", "0.3"], "detect"),
]


def strip_metadata(src: Path, dst: Path) -> None:
    data = bytearray(src.read_bytes())
    at = data.find(b"TFLITE_METADATA")
    if at >= 0:
        data[at:at + 1] = b"X"
    dst.write_bytes(bytes(data))


def classify(path: Path) -> list:
    options = vision.ImageClassifierOptions(base_options=mp_python.BaseOptions(model_asset_path=str(path)), max_results=5)
    with vision.ImageClassifier.create_from_options(options) as c:
        result = c.classify(mp.Image.create_from_file(str(IMAGE)))
    return [{"index": k.index, "name": k.category_name, "score": k.score} for k in result.classifications[0].categories]


def detect(path: Path) -> list:
    options = vision.ObjectDetectorOptions(base_options=mp_python.BaseOptions(model_asset_path=str(path)))
    with vision.ObjectDetector.create_from_options(options) as d:
        result = d.detect(mp.Image.create_from_file(str(IMAGE)))
    return [{"box": [x.bounding_box.origin_x, x.bounding_box.origin_y, x.bounding_box.width, x.bounding_box.height],
             "index": x.categories[0].index, "name": x.categories[0].category_name, "score": x.categories[0].score}
            for x in result.detections]


def main() -> None:
    binary = Path(sys.argv[1] if len(sys.argv) > 1 else REPO / ".build" / "debug" / "swiftlite")
    run = {"classify": classify, "detect": detect}
    cases = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, model, flags, task in CASES:
            if not model.exists():
                print(f"skip {name}: {model} missing")
                continue
            bare = Path(tmp) / f"{name}_bare.tflite"
            strip_metadata(model, bare)
            try:
                run[task](bare)
                refusal = None
            except Exception as error:  # MediaPipe raises RuntimeError/ValueError
                refusal = str(error).splitlines()[0]
            written = Path(tmp) / f"{name}_written.tflite"
            subprocess.run([str(binary), "metadata", "write", str(bare), "--out", str(written), *flags], check=True)
            case = {"name": name, "model": str(model.relative_to(REPO.parent if "shared" in model.parts else REPO)),
                    "flags": [f.replace(str(REPO) + "/", "").replace(str(SHARED.parent) + "/", "") for f in flags],
                    "task": task, "image": "Models/demo/cat.png",
                    "mediapipe_refused_without_metadata": refusal,
                    "written_sha256": hashlib.sha256(written.read_bytes()).hexdigest(),
                    "written_bytes": written.stat().st_size,
                    "mediapipe_on_written": run[task](written)}
            if task == "classify":
                original = run[task](model)
                case["mediapipe_on_original"] = original
                same = [(a["index"], round(a["score"], 6)) for a in original] == [(b["index"], round(b["score"], 6)) for b in case["mediapipe_on_written"]]
                case["written_matches_original"] = same
            print(json.dumps({k: v for k, v in case.items() if k not in ("mediapipe_on_written", "mediapipe_on_original")}))
            cases.append(case)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"generator": "Tests/Goldens/make_metadata_writer_goldens.py", "mediapipe": mp.__version__,
                               "cases": cases}, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
