"""Architectures nobody here trained: `tf_keras.applications` networks with random weights, as float32
and as full-integer int8 models, run by `swiftlite run` and by LiteRT's reference kernels, every
tensor compared.

    make check-architectures                       # builds swiftlite, then runs this
    python scripts/check_keras_applications.py [NAME ...] [--exe PATH] [--keep DIR] [--size N]
        [--variants f32,int8,int8-floatio,int8-uint8io,int8-pertensor,fp16]

The golden suites cover MobileNet v1, v2 and v3-small built the same way; this check takes the
other families people convert (ResNet, DenseNet, Inception, Xception, NASNet, EfficientNet,
ConvNeXt, RegNet, VGG, MobileNetV3-large), whose layers chain operators in ways the per-operator
fixtures do not: SE blocks, 1 × 1 stride-2 shortcuts, concatenations of many inputs, layer norms
built from MEAN / SQUARED_DIFFERENCE / RSQRT, GELU, 7 × 7 grouped convolutions (ConvNeXt's
depthwise layers, exported as CONV_2D with groups). Nothing it makes is committed; it needs the
Python environment of requirements.txt and takes about 15 minutes on 2 cores.

Each network is built at a small input size with `weights=None` and a seeded initialisation; the
BatchNorm scales and offsets are drawn at random and the moving statistics set from a seeded
calibration batch, so that activations neither vanish nor explode. The int8 model is converted
with a seeded representative dataset, int8 input and output. One seeded input per network.

`--variants` adds other conversions (float input and output around int8, uint8 input and output,
per-tensor int8 weights, float16 weights); the default is float32 and int8.

Checks, at 1 and at 2 threads: int8 — every tensor swiftlite computes is byte-identical to
LiteRT BUILTIN_REF's (the model's outputs and every intermediate, float outputs of an int8 model
included). Float32 and float16 weights — differences are
measured relative to max(1, max|x|) of the reference tensor: each output within 1e-5, or within
twice what LiteRT's own XNNPACK kernels differ from BUILTIN_REF on that output if that is more
(sums taken in another order drift apart over a hundred random-weight layers: InceptionV3's
probabilities move by about 2e-5 in XNNPACK), and every intermediate within 1e-3 (which a wrong
operator exceeds by orders of magnitude). Exits 1 if any check fails.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402

# The converter's note that int8 input statistics were not given: the input's scale comes from the
# representative dataset, as intended.
warnings.filterwarnings("ignore", message="Statistics for quantized inputs")

ROOT = Path(__file__).resolve().parent.parent
OUTPUT_TOLERANCE = 1e-5
INTERMEDIATE_TOLERANCE = 1e-3

# name: (constructor in tf_keras.applications, input height and width). Sizes are the smallest
# each family accepts comfortably, to keep the run short (NASNetMobile's top needs 224).
NETWORKS = {
    "MobileNetV3Large": ("MobileNetV3Large", 96),
    "EfficientNetB0": ("EfficientNetB0", 64),
    "EfficientNetV2B0": ("EfficientNetV2B0", 64),
    "ResNet50": ("ResNet50", 64),
    "ResNet50V2": ("ResNet50V2", 64),
    "DenseNet121": ("DenseNet121", 64),
    "InceptionV3": ("InceptionV3", 96),
    "Xception": ("Xception", 96),
    "NASNetMobile": ("NASNetMobile", 224),
    "ConvNeXtTiny": ("ConvNeXtTiny", 64),
    "RegNetX002": ("RegNetX002", 64),
    "RegNetY002": ("RegNetY002", 64),
    "VGG16": ("VGG16", 32),
}


def build(name, size=None, classes=10):
    """The network with random, healthy weights, and its input shape (without the batch);
    `size` overrides the network's input height and width, `classes` sets the top's width."""
    import tf_keras

    constructor, side = NETWORKS[name]
    side = size or side
    shape = (side, side, 3)
    tf_keras.utils.set_random_seed(0)
    options = {"include_preprocessing": False} if name == "MobileNetV3Large" else {}
    model = getattr(tf_keras.applications, constructor)(input_shape=shape, weights=None, classes=classes, **options)
    rng = np.random.default_rng(7)
    norms = [layer for layer in model.layers if isinstance(layer, tf_keras.layers.BatchNormalization)]
    for layer in norms:
        # Weights in order: gamma (if `scale`), beta (if `center`), moving mean, moving variance.
        weights = layer.get_weights()
        k = 0
        if layer.scale:
            weights[k] = rng.uniform(0.6, 1.4, weights[k].shape).astype(np.float32)
            k += 1
        if layer.center:
            weights[k] = rng.uniform(-0.3, 0.3, weights[k].shape).astype(np.float32)
        layer.set_weights(weights)
        layer.momentum = 0.0
    model(rng.uniform(-1, 1, (8,) + shape).astype(np.float32), training=True)  # moving stats := batch stats
    for layer in norms:
        layer.momentum = 0.99
    return model, shape


# The conversions a network can be checked in: what the converter is asked for.
VARIANTS = {
    "f32": "float32",
    "int8": "full-integer int8, int8 input and output",
    "int8-floatio": "full-integer int8 with float32 input and output (QUANTIZE and DEQUANTIZE at the ends)",
    "int8-uint8io": "full-integer int8 with uint8 input and output",
    "int8-pertensor": "full-integer int8 with one weight scale per tensor",
    "fp16": "float16 weights behind DEQUANTIZE",
}
DEFAULT_VARIANTS = ("f32", "int8")


def convert(model, shape, variant):
    import tensorflow as tf

    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    if variant == "fp16":
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
        converter.target_spec.supported_types = [tf.float16]
    elif variant.startswith("int8"):
        rng = np.random.default_rng(1)

        def representative():
            for _ in range(8):
                yield [rng.uniform(-1, 1, (1,) + shape).astype(np.float32)]

        converter.optimizations = [tf.lite.Optimize.DEFAULT]
        converter.representative_dataset = representative
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        if variant != "int8-floatio":
            io = tf.uint8 if variant == "int8-uint8io" else tf.int8
            converter.inference_input_type = io
            converter.inference_output_type = io
        if variant == "int8-pertensor":
            converter._experimental_disable_per_channel = True
    return converter.convert()


def reference(path, x):
    """LiteRT BUILTIN_REF run on `x`, with every tensor kept: the interpreter, and the input it was
    given (`x` quantized with the input's scale and zero point when that input is int8 or uint8)."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    interpreter = Interpreter(model_path=str(path), experimental_preserve_all_tensors=True,
                              experimental_op_resolver_type=OpResolverType.BUILTIN_REF, num_threads=1)
    interpreter.allocate_tensors()
    detail = interpreter.get_input_details()[0]
    if detail["dtype"] != np.float32:
        scale, zero = detail["quantization"]
        limits = np.iinfo(detail["dtype"])
        x = np.clip(np.round(x / scale) + zero, limits.min, limits.max).astype(detail["dtype"])
    interpreter.set_tensor(detail["index"], x)
    interpreter.invoke()
    return interpreter, x


def output_tolerances(path, x, interpreter):
    """Per output: 1e-5, or twice LiteRT XNNPACK's difference from `interpreter`'s (BUILTIN_REF's)
    output if that is larger."""
    from ai_edge_litert.interpreter import Interpreter

    fast = Interpreter(model_path=str(path), num_threads=1)
    fast.allocate_tensors()
    fast.set_tensor(fast.get_input_details()[0]["index"], x)
    fast.invoke()
    return [max(OUTPUT_TOLERANCE, 2 * worst(fast.get_tensor(f["index"]), interpreter.get_tensor(r["index"])))
            for f, r in zip(fast.get_output_details(), interpreter.get_output_details())]


def worst(ours, theirs):
    """For float tensors the largest difference relative to max(1, max|theirs|); for integer ones
    the number of elements that differ. None when the shapes or types differ."""
    if ours.shape != theirs.shape or ours.dtype != theirs.dtype:
        return None
    if np.issubdtype(theirs.dtype, np.floating):
        scale = max(1.0, float(np.max(np.abs(theirs), initial=0.0)))
        return float(np.max(np.abs(ours.astype(np.float64) - theirs), initial=0.0)) / scale
    return int(np.count_nonzero(ours != theirs))


def compare(exe, path, x, interpreter, tolerances, threads, work):
    """Runs swiftlite on `x` and compares with the reference (float outputs within `tolerances`):
    (failures, summary)."""
    out = work / f"out{threads}"
    np.save(work / "input.npy", x)
    run = subprocess.run([str(exe), "run", str(path), "--input", str(work / "input.npy"), "--output-dir", str(out),
                          "--threads", str(threads), "--dump-intermediates"], capture_output=True, text=True)
    if run.returncode != 0:
        return [f"swiftlite run failed: {run.stderr.strip()[:300]}"], ""
    failures, outputs, largest = [], [], 0.0
    for k, detail in enumerate(interpreter.get_output_details()):
        d = worst(np.load(out / f"output_{k}.npy"), interpreter.get_tensor(detail["index"]))
        if d is None:
            failures.append(f"output {k}: shape or type differs")
        elif isinstance(d, float):
            outputs.append(d)
            if d > tolerances[k]:
                failures.append(f"output {k}: {d:.2e} (tolerance {tolerances[k]:.2e})")
        elif d > 0:
            failures.append(f"output {k}: {d} elements differ")
    index = json.loads((out / "tensors" / "index.json").read_text())
    files = {int(entry["tensor"]): out / "tensors" / entry["file"] for entry in index}
    checked = 0
    for op in interpreter._get_ops_details():
        for t in op["outputs"]:
            if t not in files:
                continue
            checked += 1
            d = worst(np.load(files[t]), interpreter.get_tensor(t))
            where = f"operator {op['index']} ({op['op_name']}), tensor {t}"
            if d is None:
                failures.append(f"{where}: shape or type differs")
            elif isinstance(d, float):
                largest = max(largest, d)
                if d > INTERMEDIATE_TOLERANCE:
                    failures.append(f"{where}: {d:.2e}")
            elif d > 0:
                failures.append(f"{where}: {d} elements differ")
    if checked == 0:
        failures.append("no intermediate tensor was dumped")
    if outputs:
        summary = (f"{checked} tensors; outputs within {max(outputs):.1e} (tolerance {max(tolerances):.1e}), "
                   f"intermediates within {largest:.1e}")
    else:
        summary = f"{checked} tensors, " + ("all identical" if not failures else f"{len(failures)} differ")
    return failures, summary


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help=f"networks to check (default: all of {', '.join(NETWORKS)})")
    parser.add_argument("--exe", default=str(ROOT / ".build/release/swiftlite"))
    parser.add_argument("--keep", help="write the models and tensors here instead of a temporary folder")
    parser.add_argument("--size", type=int, help="input height and width for every network (odd sizes give odd "
                        "feature maps after each stride-2 layer)")
    parser.add_argument("--variants", default=",".join(DEFAULT_VARIANTS),
                        help="comma-separated conversions: " + "; ".join(f"{k}: {v}" for k, v in VARIANTS.items()))
    args = parser.parse_args()
    unknown = [n for n in args.names if n not in NETWORKS]
    if unknown:
        sys.exit(f"unknown network(s) {', '.join(unknown)}; known: {', '.join(NETWORKS)}")
    variants = args.variants.split(",")
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        sys.exit(f"unknown variant(s) {', '.join(unknown)}; known: {', '.join(VARIANTS)}")
    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="swiftlite-architectures-"))
    base.mkdir(parents=True, exist_ok=True)
    failed = []
    for name in args.names or NETWORKS:
        model, shape = build(name, args.size)
        x = np.random.default_rng(3).uniform(-1, 1, (1,) + shape).astype(np.float32)
        for variant in variants:
            case = f"{name} {variant}"
            work = base / case.replace(" ", "_")
            work.mkdir(exist_ok=True)
            path = work / "model.tflite"
            path.write_bytes(convert(model, shape, variant))
            interpreter, given = reference(path, x)
            # An integer model's float outputs come from DEQUANTIZE of exact bytes: exact too.
            tolerances = (output_tolerances(path, given, interpreter) if not variant.startswith("int8")
                          else [0.0] * len(interpreter.get_output_details()))
            operators = sorted({op["op_name"] for op in interpreter._get_ops_details()})
            for threads in (1, 2):
                failures, summary = compare(args.exe, path, given, interpreter, tolerances, threads, work)
                status = "ok" if not failures else "FAILED"
                print(f"{case:30s} {threads} thread{'s' if threads > 1 else ' '}  {status}  {summary}", flush=True)
                for failure in failures[:5]:
                    print(f"    {failure}")
                if failures:
                    failed.append(f"{case}, {threads} thread(s)")
            print(f"{'':30s} operators: {', '.join(operators)}")
    print(f"\n{len(failed)} failing: {'; '.join(failed)}" if failed else "\nall agree")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
