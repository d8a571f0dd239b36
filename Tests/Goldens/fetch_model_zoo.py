#!/usr/bin/env python3
"""Fetches the public models of the model-zoo test into a cache folder outside the repository.

    /work/venv/bin/python Tests/Goldens/fetch_model_zoo.py [--dir DIR]

The models are the `.tflite` files that the MediaPipe 0.10.14 wheel (PyPI, Apache-2.0) ships under
`mediapipe/modules/`: face and palm detectors, face/hand/iris/pose landmark models, a sparse
face detector. The wheel is fetched with `pip download mediapipe==0.10.14 --no-deps` (the 1.x
wheels no longer carry these models), the models are extracted flat into the cache folder, and
each one's SHA-256 is checked against `Tests/EngineTests/Fixtures/model_zoo/manifest.json` when
that manifest lists it.

Cache folder: `--dir`, else `$SWIFTLITE_MODEL_ZOO`, else `~/.cache/swiftlite/model_zoo` — the
place `ModelZooGoldenTests` looks (it skips, saying how to run this script, when a model is absent).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

WHEEL_PACKAGE = "mediapipe==0.10.14"
REPO_ROOT = Path(__file__).resolve().parents[2]
MANIFEST = REPO_ROOT / "Tests" / "EngineTests" / "Fixtures" / "model_zoo" / "manifest.json"


def cache_dir(explicit: str | None = None) -> Path:
    if explicit:
        return Path(explicit)
    if os.environ.get("SWIFTLITE_MODEL_ZOO"):
        return Path(os.environ["SWIFTLITE_MODEL_ZOO"])
    return Path.home() / ".cache" / "swiftlite" / "model_zoo"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fetch(directory: Path) -> list[Path]:
    """Downloads the wheel once and extracts every `mediapipe/modules/**.tflite`; returns them."""
    directory.mkdir(parents=True, exist_ok=True)
    wheels = directory / "wheels"
    wheel = next(iter(sorted(wheels.glob("mediapipe-0.10.14-*.whl"))), None) if wheels.exists() else None
    if wheel is None:
        subprocess.run([sys.executable, "-m", "pip", "download", WHEEL_PACKAGE, "--no-deps",
                        "--only-binary=:all:", "--python-version", "3.11", "--platform",
                        "manylinux2014_x86_64", "-d", str(wheels)], check=True)
        wheel = next(iter(sorted(wheels.glob("mediapipe-0.10.14-*.whl"))))
    models = []
    with zipfile.ZipFile(wheel) as z:
        for info in z.infolist():
            if info.filename.startswith("mediapipe/modules/") and info.filename.endswith(".tflite"):
                target = directory / Path(info.filename).name
                if not target.exists() or target.stat().st_size != info.file_size:
                    target.write_bytes(z.read(info))
                models.append(target)
    return sorted(models)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dir", help="cache folder (default $SWIFTLITE_MODEL_ZOO or ~/.cache/swiftlite/model_zoo)")
    args = parser.parse_args()
    directory = cache_dir(args.dir)
    models = fetch(directory)
    expected = {}
    if MANIFEST.exists():
        manifest = json.loads(MANIFEST.read_text())
        expected = {c["model_file"]: c["sha256"] for c in manifest["cases"] + manifest.get("skipped", [])}
    bad = 0
    for m in models:
        digest = sha256(m)
        status = "" if m.name not in expected else ("ok" if expected[m.name] == digest else "SHA-256 MISMATCH")
        bad += status == "SHA-256 MISMATCH"
        print(f"{m.name:45s} {m.stat().st_size:9d} B {digest} {status}")
    print(f"{len(models)} models in {directory}")
    if bad:
        raise SystemExit(f"{bad} models differ from the manifest")


if __name__ == "__main__":
    main()
