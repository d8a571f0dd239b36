#!/usr/bin/env python3
"""Records LiteRT reference outputs of public real-world models (the model-zoo test).

    /work/venv/bin/python Tests/Goldens/make_model_zoo_goldens.py

Models come from `fetch_model_zoo.py` (MediaPipe 0.10.14's `mediapipe/modules/*.tflite`, kept in a
cache folder outside the repository, never committed). For each model that LiteRT's BUILTIN_REF
resolver can run (models with MediaPipe custom operators are listed in the manifest's `skipped`
with the reason), the script writes

    Tests/EngineTests/Fixtures/model_zoo/<model>/input_<i>.npy   uint8, seeded
    Tests/EngineTests/Fixtures/model_zoo/<model>/output_<i>.npy  LiteRT BUILTIN_REF outputs (float32)
    Tests/EngineTests/Fixtures/model_zoo/manifest.json           name, file, bytes, SHA-256, operators

Inputs are stored as uint8 `q` to keep the fixtures small; the model's float32 input is
`Float(q) / 127.5 − 1` (computed the same way, in float32, by the Swift test). Tolerance:
5e-5 relative to max(1, max|ref|), as for the whole networks of `make_float_goldens.py`
(float sums over thousands of terms in another order), unless a case says otherwise.
"""

from __future__ import annotations

import hashlib
import sys
import zlib
from collections import Counter
from pathlib import Path

sys.dont_write_bytecode = True
sys.path.insert(0, str(Path(__file__).resolve().parent))
import golden_io as G  # noqa: E402
import fetch_model_zoo as F  # noqa: E402

import numpy as np  # noqa: E402

GENERATOR = "Tests/Goldens/make_model_zoo_goldens.py"
OUT_DIR = G.FIXTURES_ROOT / "model_zoo"
TOLERANCE = 5e-5
SIZE_BUDGET_BYTES = 3_500_000
# Left out to keep the fixtures small (palm_detection_full and hand_landmark_full, the larger
# siblings of the lite models, are recorded: their outputs are small).
LEFT_OUT = {"pose_landmark_full.tflite": "its segmentation and heatmap outputs would add ~1 MB"}


def main() -> None:
    models = F.fetch(F.cache_dir())
    G.reset_dir(OUT_DIR)
    cases, skipped = [], []
    for path in models:
        model_bytes = path.read_bytes()
        digest = hashlib.sha256(model_bytes).hexdigest()
        if path.name in LEFT_OUT:
            skipped.append({"model_file": path.name, "sha256": digest, "reason": LEFT_OUT[path.name]})
            continue
        try:
            interp = G.make_interpreter(model_bytes)
        except Exception as error:  # custom operators LiteRT does not have
            skipped.append({"model_file": path.name, "sha256": digest, "reason": str(error).split("\n")[0][:200]})
            print(f"{path.name:45s} skipped: {skipped[-1]['reason']}")
            continue
        rng = np.random.default_rng(zlib.crc32(path.name.encode()))
        raw = [rng.integers(0, 256, size=d["shape"], dtype=np.uint8) for d in interp.get_input_details()]
        inputs = [q.astype(np.float32) / np.float32(127.5) - np.float32(1) for q in raw]
        outputs, ops = G.run_model(model_bytes, inputs)
        again, _ = G.run_model(model_bytes, inputs)
        if any(not np.array_equal(a, b) for a, b in zip(outputs, again)):
            raise AssertionError(f"{path.name}: reference run is not deterministic")
        name = path.stem
        G.write_case(OUT_DIR, name, model_bytes=b"", inputs=raw, outputs=outputs)
        (OUT_DIR / name / "model.tflite").unlink()  # the model stays in the cache folder
        counts = Counter(ops)
        cases.append({"name": name, "model": f"zoo:{path.name}", "model_file": path.name, "bytes": len(model_bytes),
                      "sha256": digest, "source": f"PyPI {F.WHEEL_PACKAGE}: mediapipe/modules/.../{path.name}",
                      "ops": G.unique_in_order(ops), "op_counts": dict(counts), "tolerance": TOLERANCE,
                      "input_encoding": "uint8 q; the float32 input is Float(q) / 127.5 - 1",
                      "outputs": [{"shape": [int(x) for x in o.shape], "dtype": o.dtype.name} for o in outputs]})
        print(f"{path.name:45s} {len(model_bytes):9d} B {digest[:16]} ops={dict(counts)}", flush=True)
    manifest = {"origin": G.origin(GENERATOR), "cases": cases, "skipped": skipped}
    import json
    with open(OUT_DIR / "manifest.json", "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    total = G.dir_size(OUT_DIR)
    print(f"{len(cases)} models recorded, {len(skipped)} skipped; {total} bytes")
    if total > SIZE_BUDGET_BYTES:
        raise SystemExit(f"fixture size {total} exceeds budget {SIZE_BUDGET_BYTES}")


if __name__ == "__main__":
    main()
