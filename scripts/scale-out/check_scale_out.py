"""Checks the Ray recipe end to end in local mode: a few hundred images (the shared photos,
resized and rotated into a temporary folder, plus broken files), 1 and then 2 Ray workers; every
input must get exactly one result, broken files an error, and both runs the same answers.
Prints images/second for each run. Run by check-scale-out.sh (not part of `swift test`)."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import ray
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ray_classify import classify, list_images  # noqa: E402

SIZES = [96, 160, 224, 320, 448]
ROTATIONS = [0, 90, 180, 270]
FORMATS = ["png", "jpg", "bmp"]


def make_images(photos: str, folder: str) -> tuple[list[str], set[str]]:
    """Resized and rotated copies of every photo, in three formats; then broken files."""
    made = []
    sources = sorted(f for f in os.listdir(photos) if os.path.splitext(f)[1].lower() in {".png", ".jpg", ".jpeg", ".bmp"})
    for n, name in enumerate(sources):
        with Image.open(os.path.join(photos, name)) as original:
            rgb = original.convert("RGB")
        for size in SIZES:
            for rotation in ROTATIONS:
                copy = rgb.copy()
                copy.thumbnail((size, size))
                copy = copy.rotate(rotation, expand=True)
                fmt = FORMATS[(n + size + rotation) % len(FORMATS)]
                path = os.path.join(folder, f"{os.path.splitext(name)[0]}_{size}_{rotation}.{fmt}")
                copy.save(path)
                made.append(path)
    broken = {
        "empty.png": b"",
        "text.jpg": b"this is not a JPEG",
        "truncated.png": open(made[0], "rb").read()[:100] if made[0].endswith(".png") else b"\x89PNG\r\n\x1a\n" + b"\0" * 20,
        "truncated.jpg": b"\xff\xd8\xff\xe0" + b"\0" * 50,
        "garbage.bmp": b"BM" + os.urandom(60),
    }
    broken_paths = set()
    for name, data in broken.items():
        path = os.path.join(folder, "broken", name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        broken_paths.add(path)
    return made, broken_paths


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--swiftlite", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--photos", default="/work/shared/images")
    parser.add_argument("--batch-size", type=int, default=24)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="swiftlite-scale-") as folder:
        made, broken = make_images(args.photos, folder)
        paths = list_images([folder])
        assert len(paths) == len(made) + len(broken), (len(paths), len(made), len(broken))
        print(f"{len(paths)} inputs: {len(made)} images, {len(broken)} broken files")
        answers = {}
        failures = 0
        for concurrency in [1, 2]:
            # A fresh local cluster per run: Ray Data keeps a finished pool's actors (and their CPUs)
            # for a while, which starved the second run's actors when both shared one cluster.
            ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, object_store_memory=200 * 1024 * 1024)
            start = time.monotonic()
            rows = classify(paths, args.swiftlite, args.model, concurrency=concurrency, batch_size=args.batch_size, max_results=1)
            seconds = time.monotonic() - start
            by_path: dict[str, list[dict]] = {}
            for row in rows:
                by_path.setdefault(str(row["path"]), []).append(row)
            problems = []
            if sorted(by_path) != sorted(paths):
                problems.append(f"inputs without a result: {sorted(set(paths) - set(by_path))[:5]}, "
                                f"results for no input: {sorted(set(by_path) - set(paths))[:5]}")
            problems += [f"{p}: {len(r)} results" for p, r in by_path.items() if len(r) != 1]
            for path, [row] in ((p, r) for p, r in by_path.items() if len(r) == 1):
                if (path in broken) != (row["error"] is not None):
                    problems.append(f"{path}: error={row['error']!r}")
            answers[concurrency] = {p: (r[0]["result"], r[0]["error"]) for p, r in by_path.items()}
            print(f"{concurrency} Ray worker{'s' if concurrency > 1 else ''}: {len(rows)} results in {seconds:.1f} s, "
                  f"{len(rows) / seconds:.1f} images/s, {sum(r['error'] is not None for r in rows)} errors "
                  f"(e.g. {next(r['error'] for r in rows if r['error'] is not None)!r})")
            for problem in problems[:20]:
                print("FAIL:", problem)
            failures += len(problems)
            ray.shutdown()
        if answers[1] != answers[2]:
            differing = [p for p in paths if answers[1].get(p) != answers[2].get(p)]
            print(f"FAIL: 1 and 2 workers differ on {len(differing)} inputs, e.g. {differing[:3]}")
            failures += 1
    print("ok" if failures == 0 else f"{failures} problems")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
