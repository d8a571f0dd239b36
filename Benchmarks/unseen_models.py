"""Models nobody here tuned for, to benchmark next to LiteRT: real MediaPipe models and Keras
architectures at full size.

    python Benchmarks/unseen_models.py [--dir DIR] [NAME ...]
    NO_BUILD=1 python Benchmarks/compare_litert.py $(python Benchmarks/unseen_models.py --list)

The nine models of `compare_litert.py` are the ones every change here was measured on. This
script gathers others, so that a kernel or a fusion the nine never exercise shows up in a ratio:

- the MediaPipe 0.10.14 wheel's own `.tflite` models (BlazeFace short and full range, face, hand,
  iris and pose landmarks, palm and pose detectors; float weights stored as float16), fetched
  by `Tests/Goldens/fetch_model_zoo.py` into its cache folder (`$SWIFTLITE_MODEL_ZOO` or
  `~/.cache/swiftlite/model_zoo`);
- Keras applications at 224 × 224 with 1000 classes and random, healthy weights (MobileNetV3
  Small and Large, EfficientNetB0, ResNet50; `scripts/check_keras_applications.py` builds them
  the same way, smaller, for its correctness check), converted to float32 and to full-integer
  int8 (int8 input and output), written to `--dir` (default `~/.cache/swiftlite/unseen_models`).
  About 5 minutes on 2 cores; a model already there is kept.

`--list` prints the paths of the models present (nothing is built or fetched), one per line.
Nothing here is committed: the weights are random and the MediaPipe models are the wheel's.
"""
import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "Tests" / "Goldens"))

MEDIAPIPE = ["face_detection_short_range", "face_detection_full_range_sparse", "face_landmark", "hand_landmark_lite",
             "hand_landmark_full", "palm_detection_lite", "palm_detection_full", "pose_detection", "pose_landmark_full",
             "iris_landmark"]
KERAS = ["MobileNetV3Small", "MobileNetV3Large", "EfficientNetB0", "ResNet50"]
SIZE, CLASSES = 224, 1000


def keras_dir(explicit):
    return Path(explicit) if explicit else Path.home() / ".cache" / "swiftlite" / "unseen_models"


def paths(directory, names):
    from fetch_model_zoo import cache_dir

    zoo = cache_dir()
    found = [zoo / f"{n}.tflite" for n in MEDIAPIPE if (not names or n in names) and (zoo / f"{n}.tflite").exists()]
    for n in KERAS:
        if not names or n in names:
            found += [p for p in (directory / f"{n}_f32.tflite", directory / f"{n}_int8.tflite") if p.exists()]
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", help="where the Keras models go")
    parser.add_argument("--list", action="store_true", help="print the models present and stop")
    parser.add_argument("names", nargs="*")
    args = parser.parse_args()
    directory = keras_dir(args.dir)
    if args.list:
        print("\n".join(str(p) for p in paths(directory, args.names)))
        return
    from fetch_model_zoo import cache_dir

    if not all((cache_dir() / f"{n}.tflite").exists() for n in MEDIAPIPE):
        subprocess.run([sys.executable, str(ROOT / "Tests" / "Goldens" / "fetch_model_zoo.py")], check=True)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    os.environ["TF_USE_LEGACY_KERAS"] = "1"
    import check_keras_applications as keras

    keras.NETWORKS.setdefault("MobileNetV3Small", ("MobileNetV3Small", SIZE))
    directory.mkdir(parents=True, exist_ok=True)
    for name in KERAS:
        if args.names and name not in args.names:
            continue
        targets = {v: directory / f"{name}_{v}.tflite" for v in ("f32", "int8")}
        if all(p.exists() for p in targets.values()):
            continue
        model, shape = keras.build(name, SIZE, classes=CLASSES)
        for variant, path in targets.items():
            if not path.exists():
                data = keras.convert(model, shape, variant)
                path.with_suffix(".tmp").write_bytes(data)
                path.with_suffix(".tmp").rename(path)
                print(f"wrote {path} ({len(data)} bytes)", flush=True)
    print("\n".join(str(p) for p in paths(directory, args.names)))


if __name__ == "__main__":
    main()
