"""Latency of swiftlite next to LiteRT on the same machine, in the same run.

    python Benchmarks/compare_litert.py [MODEL ...]

For each model: LiteRT with its default delegate (XNNPACK) on 1 thread, LiteRT's reference
kernels (BUILTIN_REF), and `swiftlite bench` (release build, 1 thread), each the median of the
same number of invocations on random inputs, interleaved model by model so that machine noise
hits all three alike. Prints a table with ratios to LiteRT XNNPACK.
"""
import json
import os
import subprocess
import sys
import time

import numpy as np
from ai_edge_litert.interpreter import Interpreter, OpResolverType

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(os.path.dirname(ROOT), "shared", "models")
DEFAULT_MODELS = [
    "perf/mobilenet_v2_1.0_224_f32.tflite",
    "perf/mobilenet_v2_1.0_224_int8.tflite",
    "mobilenet_v2_1.0_224_quant.tflite",
    "tf2_mobilenet_v2_1.0_224_ptq.tflite",
]
RUNS = int(os.environ.get("RUNS", "30"))


def litert_median(path, resolver, runs):
    kwargs = {"num_threads": 1}
    if resolver is not None:
        kwargs["experimental_op_resolver_type"] = resolver
    interpreter = Interpreter(model_path=path, **kwargs)
    interpreter.allocate_tensors()
    rng = np.random.default_rng(0)
    for d in interpreter.get_input_details():
        if d["dtype"] == np.float32:
            x = rng.uniform(-1, 1, d["shape"]).astype(np.float32)
        else:
            info = np.iinfo(d["dtype"])
            x = rng.integers(info.min, info.max + 1, d["shape"]).astype(d["dtype"])
        interpreter.set_tensor(d["index"], x)
    for _ in range(3):
        interpreter.invoke()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        interpreter.invoke()
        times.append((time.perf_counter() - start) * 1e3)
    return float(np.median(times))


def swiftlite_median(path, runs):
    exe = os.path.join(ROOT, ".build", "release", "swiftlite")
    out = subprocess.run([exe, "bench", path, "--runs", str(runs), "--threads", "1", "--json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["median_ms"]


def main():
    subprocess.run(["swift", "build", "-c", "release", "--product", "swiftlite"], cwd=ROOT, check=True)
    models = sys.argv[1:] or [os.path.join(SHARED, m) for m in DEFAULT_MODELS]
    print(f"{'model':42s} {'LiteRT XNNPACK':>15s} {'LiteRT ref':>12s} {'swiftlite':>10s} {'vs XNNPACK':>11s} {'vs ref':>8s}")
    for path in models:
        xnn = litert_median(path, None, RUNS)
        ref_runs = max(3, RUNS // 10)  # the reference kernels are slow
        ref = litert_median(path, OpResolverType.BUILTIN_REF, ref_runs)
        ours = swiftlite_median(path, RUNS)
        print(f"{os.path.basename(path):42s} {xnn:13.2f}ms {ref:10.2f}ms {ours:8.2f}ms {ours / xnn:10.2f}x {ours / ref:7.2f}x")


if __name__ == "__main__":
    main()
