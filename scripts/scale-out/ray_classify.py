"""Classify many images with SwiftLite on a Ray cluster (or one machine in local mode).

The contract with the engine is the CLI's batch mode, nothing else:

  * each Ray task gets a shard of image paths and runs ``swiftlite classify --jsonl -`` with the
    paths on stdin, one per line;
  * swiftlite writes exactly one JSON object per input line, in input order: either
    ``{"image": PATH, "classifications": [...]}`` or ``{"image": PATH, "error": WHY}``; exit
    status 0 means all succeeded, 1 that some image failed (still one line each), 2 a usage error;
  * this driver zips the shard's paths with those lines, so every input has exactly one result.

Usage (the swiftlite binary must exist on every node, at the same path)::

    python scripts/scale-out/ray_classify.py --swiftlite .build/release/swiftlite \\
        --model Models/efficientnet_lite0_f32.tflite --concurrency 2 --out results.jsonl IMAGE_OR_DIR ...
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import ray

IMAGE_EXTENSIONS = {".png", ".jpg", ".jpeg", ".bmp"}


def list_images(arguments: list[str]) -> list[str]:
    """Files as given; directories walked recursively for image extensions, sorted."""
    paths: list[str] = []
    for argument in arguments:
        if os.path.isdir(argument):
            found = []
            for root, _, files in os.walk(argument):
                found += [os.path.join(root, f) for f in files if os.path.splitext(f)[1].lower() in IMAGE_EXTENSIONS]
            paths += sorted(found)
        else:
            paths.append(argument)
    return paths


class SwiftLiteShard:
    """One Ray actor: classifies the batches it is given with one swiftlite process per batch."""

    def __init__(self, swiftlite: str, model: str, max_results: int, threads_per_actor: int):
        self.command = [swiftlite, "classify", "--jsonl", "--model", model, "--max-results", str(max_results),
                        "--workers", str(threads_per_actor), "-"]

    def __call__(self, batch: dict) -> dict:
        paths = [str(p) for p in batch["path"]]
        run = subprocess.run(self.command, input="\n".join(paths) + "\n", capture_output=True, text=True)
        lines = run.stdout.splitlines()
        results, errors = [], []
        if run.returncode == 2 or len(lines) != len(paths):
            # A usage error or a crash: the whole shard failed; say so for every path in it.
            why = f"swiftlite exited {run.returncode} with {len(lines)} of {len(paths)} results: {run.stderr.strip()[-500:]}"
            return {"path": paths, "result": [None] * len(paths), "error": [why] * len(paths)}
        for path, line in zip(paths, lines):
            record = json.loads(line)
            if record.get("image") != path:
                results.append(None)
                errors.append(f"result out of order: expected {path}, got {record.get('image')}")
            elif "error" in record:
                results.append(None)
                errors.append(record["error"])
            else:
                results.append(json.dumps(record["classifications"]))
                errors.append(None)
        return {"path": paths, "result": results, "error": errors}


def classify(paths: list[str], swiftlite: str, model: str, concurrency: int, batch_size: int,
             max_results: int = 5, threads_per_actor: int = 1) -> list[dict]:
    """Runs the shards and returns one row per input: path, result (JSON text) or error."""
    # One block per shard, made on the driver (no repartition stage competing for the actors' CPUs).
    dataset = ray.data.from_items([{"path": p} for p in paths],
                                  override_num_blocks=max(1, (len(paths) + batch_size - 1) // batch_size))
    classified = dataset.map_batches(
        SwiftLiteShard,
        fn_constructor_kwargs={"swiftlite": swiftlite, "model": model, "max_results": max_results,
                               "threads_per_actor": threads_per_actor},
        batch_size=batch_size, concurrency=concurrency, num_cpus=threads_per_actor, batch_format="numpy")
    return classified.take_all()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("images", nargs="+", help="image files or directories")
    parser.add_argument("--swiftlite", default=".build/release/swiftlite")
    parser.add_argument("--model", default="Models/efficientnet_lite0_f32.tflite")
    parser.add_argument("--concurrency", type=int, default=2, help="Ray actors (each runs one swiftlite at a time)")
    parser.add_argument("--batch-size", type=int, default=32, help="paths per swiftlite process")
    parser.add_argument("--out", default="-", help="JSON lines, one per input (default stdout)")
    parser.add_argument("--address", default=None, help="Ray cluster address (default: local mode)")
    args = parser.parse_args()

    paths = list_images(args.images)
    ray.init(address=args.address, include_dashboard=False, log_to_driver=False)
    start = time.monotonic()
    rows = classify(paths, os.path.abspath(args.swiftlite), os.path.abspath(args.model), args.concurrency, args.batch_size)
    seconds = time.monotonic() - start
    out = sys.stdout if args.out == "-" else open(args.out, "w")
    for row in rows:
        record = {"image": row["path"]}
        if row["error"] is not None:
            record["error"] = row["error"]
        else:
            record["classifications"] = json.loads(row["result"])
        out.write(json.dumps(record) + "\n")
    failed = sum(row["error"] is not None for row in rows)
    print(f"{len(rows)} images, {failed} failed, {len(rows) / seconds:.1f} images/s", file=sys.stderr)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
