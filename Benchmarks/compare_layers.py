"""Layer by layer: each convolution and fully connected layer of a model, rebuilt as a model of
that one operator, timed in swiftlite and in LiteRT XNNPACK in the same run.

    python Benchmarks/compare_layers.py MODEL [--threads N] [--int8] [--avx2] [--limit N] [--keep DIR]

A whole-model ratio (Benchmarks/compare_litert.py) says how far apart the two runtimes are, not
where. This script reads MODEL's CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED operators (input
and output shapes, kernel size, strides, padding, dilation and fused ReLU or ReLU6), builds one
Keras layer of the same shape for each distinct one (float32, or with --int8 quantized by the
converter from random calibration data, int8 in and out), converts it, and times it in both runtimes,
alternated for ROUNDS rounds (default 5) of RUNS invocations (default 200): LiteRT with its default
delegate (XNNPACK, num_threads=N) and `swiftlite bench --threads N` (release build), whose fresh
process first runs untimed invocations for about WARMUP_MS (default 300), as in compare_litert.py.

Per layer: the MACs, each runtime's median of its per-round medians in µs, and the ratio
swiftlite / XNNPACK with its spread over rounds; then the layers weighted by how many times they
occur, so that the rows that cost the most whole-model time stand out. A layer alone is not the
layer in its model: swiftlite fuses some pairs and triples of layers (see docs/DESIGN.md), and
alone a layer's input and weights stay in the cache between invocations. LiteRT's Python
`invoke` adds a few µs to its column, which matters only for the smallest layers.

With --int8 every layer is rebuilt as the converter quantizes today (int8 activations, per-channel
int8 weights), whatever MODEL's own types: a TF1 uint8 model's layers run other kernels in it.
A layer that Keras or the converter cannot express is listed as skipped.
Each layer has a bias and its operator's fused activation (a separate activation operator after it
is left out). --keep DIR writes the one-layer models to DIR (layerN.tflite, in the order printed)
and keeps them, for `swiftlite bench --profile` or `perf record` on one layer. --avx2 puts both
runtimes on their AVX2 kernels, as `compare_litert.py --avx2` does.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

from compare_litert import EXE, limit_litert_to_avx2, litert_round, warmup_runs  # this folder is the script's first import path

ROUNDS = int(os.environ.get("ROUNDS", "5"))
RUNS = int(os.environ.get("RUNS", "200"))


ACTIVATIONS = {0: None, 1: "relu", 3: "relu6"}


def layers_of(path):
    """The distinct (kind, input shape, output shape, kernel, strides, padding, dilation,
    activation) of the model's convolution and fully connected operators, with how often each
    occurs, in model order (read with TensorFlow's flatbuffer schema module)."""
    from tensorflow.lite.python import schema_py_generated as schema
    with open(path, "rb") as f:
        model = schema.ModelT.InitFromObj(schema.Model.GetRootAsModel(f.read(), 0))
    graph = model.subgraphs[0]
    kinds = {schema.BuiltinOperator.CONV_2D: "CONV_2D", schema.BuiltinOperator.DEPTHWISE_CONV_2D: "DEPTHWISE_CONV_2D",
             schema.BuiltinOperator.FULLY_CONNECTED: "FULLY_CONNECTED"}
    found = {}
    for op in graph.operators:
        code = model.operatorCodes[op.opcodeIndex]
        name = kinds.get(max(code.builtinCode, code.deprecatedBuiltinCode))
        if name is None:
            continue
        x, w = (tuple(int(v) for v in graph.tensors[i].shape) for i in op.inputs[:2])
        y = tuple(int(v) for v in graph.tensors[op.outputs[0]].shape)
        options = op.builtinOptions
        activation = ACTIVATIONS.get(options.fusedActivationFunction)
        if name == "FULLY_CONNECTED":
            batch = int(np.prod(x)) // w[1]
            key = (name, (batch, w[1]), (batch, w[0]), None, None, None, None, activation)
        else:
            key = (name, x, y, (w[1], w[2]), (options.strideH, options.strideW),
                   "same" if options.padding == schema.Padding.SAME else "valid",
                   (options.dilationHFactor, options.dilationWFactor), activation)
        found[key] = found.get(key, 0) + 1
    return found


def build(key, int8, directory, number):
    import tensorflow as tf
    name, x, y, kernel, strides, padding, dilation, activation = key
    if name == "FULLY_CONNECTED":
        inputs = tf.keras.Input(shape=x[1:], batch_size=x[0])
        layer = tf.keras.layers.Dense(y[1], activation=activation)
    elif name == "CONV_2D":
        inputs = tf.keras.Input(shape=x[1:], batch_size=x[0])
        layer = tf.keras.layers.Conv2D(y[3], kernel, strides=strides, padding=padding, dilation_rate=dilation,
                                       activation=activation)
    else:
        inputs = tf.keras.Input(shape=x[1:], batch_size=x[0])
        layer = tf.keras.layers.DepthwiseConv2D(kernel, strides=strides, padding=padding, dilation_rate=dilation,
                                                depth_multiplier=y[3] // x[3], activation=activation)
    model = tf.keras.Model(inputs, layer(inputs))
    rng = np.random.default_rng(number)
    model.set_weights([rng.uniform(-0.5, 0.5, w.shape).astype(np.float32) for w in model.get_weights()])
    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    if int8:
        def calibration():
            for _ in range(4):
                yield [rng.uniform(-1, 1, inputs.shape).astype(np.float32)]
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
        converter.representative_dataset = calibration
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        converter.inference_input_type = tf.int8
        converter.inference_output_type = tf.int8
    path = os.path.join(directory, f"layer{number}.tflite")
    # The converter prints the exported function's signature on file descriptor 1.
    sys.stdout.flush()
    saved = os.dup(1)
    with open(os.devnull, "w") as null:
        os.dup2(null.fileno(), 1)
        try:
            flatbuffer = converter.convert()
        finally:
            os.dup2(saved, 1)
            os.close(saved)
    with open(path, "wb") as f:
        f.write(flatbuffer)
    return path


def swiftlite_round(path, threads, runs, estimate_us):
    """The median of `runs` timed invocations in a fresh `swiftlite bench` process, in µs, after
    untimed ones for about WARMUP_MS (at least 10), counted from `estimate_us` per invocation (as
    `compare_litert.py` does: a young process runs slow at random on the shared VMs)."""
    warmup = warmup_runs(estimate_us / 1e3, 10)
    out = subprocess.run([EXE, "bench", path, "--runs", str(runs), "--warmup", str(warmup), "--threads", str(threads), "--json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["median_ms"] * 1e3


def describe(key):
    name, x, y, kernel, strides, padding, dilation, activation = key
    suffix = (f" {activation}" if activation else "")
    if name == "FULLY_CONNECTED":
        return f"FC {x[1]}→{y[1]}" + (f" ×{x[0]}" if x[0] > 1 else "") + suffix
    short = "CONV" if name == "CONV_2D" else "DW"
    stride = strides[0] if strides[0] == strides[1] else f"{strides[0]}×{strides[1]}"
    return (f"{short} {kernel[0]}×{kernel[1]}/{stride} {x[1]}×{x[2]}×{x[3]}→{y[3]}" + ("" if padding == "same" else " valid")
            + ("" if dilation == (1, 1) else f" d{dilation[0]}") + suffix)


def macs(key):
    name, x, y, kernel = key[:4]
    if name == "FULLY_CONNECTED":
        return x[0] * x[1] * y[1]
    per_output = kernel[0] * kernel[1] * (x[3] if name == "CONV_2D" else 1)
    return y[1] * y[2] * y[3] * per_output


def main():
    args = sys.argv[1:]
    if "-h" in args or "--help" in args:
        print(__doc__)
        return
    threads, int8, limit, keep = 1, False, None, None
    if "--threads" in args:
        i = args.index("--threads"); threads = int(args[i + 1]); del args[i:i + 2]
    if "--limit" in args:
        i = args.index("--limit"); limit = int(args[i + 1]); del args[i:i + 2]
    if "--keep" in args:
        i = args.index("--keep"); keep = args[i + 1]; del args[i:i + 2]
    if "--int8" in args:
        int8 = True; args.remove("--int8")
    avx2 = "--avx2" in args
    if avx2:
        args.remove("--avx2")
    if len(args) != 1 or args[0].startswith("-"):
        sys.exit(__doc__)
    if not os.path.isfile(args[0]):
        sys.exit(f"compare_layers.py: no model file at {args[0]}")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    from ai_edge_litert.interpreter import Interpreter
    if avx2:
        os.environ["SWIFTLITE_KERNELS"] = "avx2"  # inherited by every `swiftlite bench`
        limit_litert_to_avx2()
    layers = list(layers_of(args[0]).items())[:limit]
    rows = []
    with tempfile.TemporaryDirectory() as temporary:
        directory = keep or temporary
        if keep:
            os.makedirs(keep, exist_ok=True)
        for number, (key, count) in enumerate(layers):
            try:
                path = build(key, int8, directory, number)
            except Exception as error:  # a layer Keras or the converter cannot express
                print(f"{describe(key):34s} ×{count:<2d} skipped: {str(error).splitlines()[0][:80]}", flush=True)
                continue
            interpreter = Interpreter(model_path=path, num_threads=threads)
            interpreter.allocate_tensors()
            detail = interpreter.get_input_details()[0]
            rng = np.random.default_rng(number)
            if detail["dtype"] == np.float32:
                interpreter.set_tensor(detail["index"], rng.uniform(-1, 1, detail["shape"]).astype(np.float32))
            else:
                interpreter.set_tensor(detail["index"], rng.integers(-128, 128, detail["shape"]).astype(np.int8))
            for _ in range(10):
                interpreter.invoke()
            ours, theirs = [], []
            for _ in range(ROUNDS):
                theirs.append(litert_round(interpreter, RUNS) * 1e3)
                ours.append(swiftlite_round(path, threads, RUNS, theirs[-1]))
            ratios = [a / b for a, b in zip(ours, theirs)]
            rows.append((key, count, float(np.median(theirs)), float(np.median(ours)), ratios))
            print(f"{describe(key):34s} ×{count:<2d} {macs(key) / 1e6:7.2f} M  XNNPACK {np.median(theirs):8.1f} µs"
                  f"  swiftlite {np.median(ours):8.1f} µs  {np.median(ratios):5.2f} ({min(ratios):.2f}-{max(ratios):.2f})",
                  flush=True)
    total_theirs = sum(count * t for _, count, t, _, _ in rows)
    total_ours = sum(count * o for _, count, _, o, _ in rows)
    print(f"\n{os.path.basename(args[0])}, {'int8' if int8 else 'float32'}, {threads} thread(s){', AVX2 kernels' if avx2 else ''}, {ROUNDS} rounds of {RUNS}: "
          f"these layers alone sum to {total_theirs / 1e3:.2f} ms in XNNPACK and {total_ours / 1e3:.2f} ms in swiftlite "
          f"({total_ours / total_theirs:.2f})")
    print("where swiftlite loses the most time (count × (swiftlite − XNNPACK)):")
    for key, count, t, o, _ in sorted(rows, key=lambda r: -r[1] * (r[3] - r[2]))[:8]:
        print(f"  {describe(key):34s} ×{count:<2d} {count * (o - t):+8.1f} µs")


if __name__ == "__main__":
    main()
