"""Writes the seed corpora Fuzz/Corpus/<target>/ from the repository's own test fixtures (small
files only: the corpus stays well under a few MB). Seeds are starting points; libFuzzer's work
corpus grows under Fuzz/.build/corpus/ and is not committed.

    /work/venv/bin/python Fuzz/make_corpus.py     # needs ai-edge-litert (for the metadata seed)
"""
import glob
import hashlib
import json
import os
import shutil

from ai_edge_litert import schema_py_generated as schema

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
OUT = os.path.join(ROOT, "Fuzz", "Corpus")
ENGINE = os.path.join(ROOT, "Tests", "EngineTests", "Fixtures")
TASKS = os.path.join(ROOT, "Tests", "TasksTests", "Fixtures")


def write(target, data, name=None):
    folder = os.path.join(OUT, target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name or hashlib.sha1(data).hexdigest()[:16]), "wb") as f:
        f.write(data)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def models():
    """One small model per fixture family (the directory name up to its shape), plus every
    malformed, error and hostile model under 64 KB."""
    seen = set()
    for path in sorted(glob.glob(os.path.join(ENGINE, "*", "*", "model.tflite"))):
        family = os.path.basename(os.path.dirname(path)).split("_1x")[0].split("_f32")[0][:24]
        if os.path.getsize(path) <= 24_000 and family not in seen:
            seen.add(family)
            write("model", read(path), os.path.basename(os.path.dirname(path)) + ".tflite")
    for folder in ("malformed", "errors", "hostile", "detection_errors"):
        for path in sorted(glob.glob(os.path.join(ENGINE, folder, "**", "*.tflite"), recursive=True)):
            if os.path.getsize(path) <= 64_000:
                write("model", read(path), folder + "_" + os.path.basename(path))


def fusion_chains():
    """Float convolutions followed by operators the plan runs inside them (a residual ADD, then
    RELU6), with float32 weights and with float16 ones (whose DEQUANTIZEs the plan folds).
    Converted here: no fixture has the pattern in under 24 KB."""
    import numpy as np
    import tensorflow as tf

    keras = tf.keras
    x = keras.Input((6, 6, 4), batch_size=1)
    y = keras.layers.Conv2D(8, 3, padding="same", activation="relu")(x)
    z = keras.layers.Add()([keras.layers.Conv2D(8, 1)(y), y])
    model = keras.Model(x, keras.layers.ReLU(6.0)(z))
    rng = np.random.default_rng(7)
    model.set_weights([rng.uniform(-0.5, 0.5, w.shape).astype(np.float32) for w in model.get_weights()])
    for name, fp16 in (("fusion_conv_add_relu6", False), ("fusion_conv_add_relu6_fp16", True)):
        converter = tf.lite.TFLiteConverter.from_keras_model(model)
        if fp16:
            converter.optimizations = [tf.lite.Optimize.DEFAULT]
            converter.target_spec.supported_types = [tf.float16]
        write("model", converter.convert(), name + ".tflite")


def images():
    for path in sorted(glob.glob(os.path.join(TASKS, "images", "*")) + glob.glob(os.path.join(TASKS, "hostile", "*.*"))):
        if not path.endswith(".json") and os.path.getsize(path) <= 64_000 and not path.endswith(".tflite"):
            write("image", read(path), os.path.basename(path))


def flexbuffers():
    cases = json.load(open(os.path.join(ENGINE, "flexbuffers", "cases.json")))
    for group in cases.values():
        if isinstance(group, list):
            for case in group:
                if "hex" in case:
                    write("flexbuffers", bytes.fromhex(case["hex"]), case["name"])
    # Real TFLite_Detection_PostProcess options.
    for path in sorted(glob.glob(os.path.join(ENGINE, "hostile", "detection_*.tflite")) +
                       glob.glob(os.path.join(ENGINE, "detection", "op_fast_basic", "model.tflite"))):
        model = schema.ModelT.InitFromPackedBuf(read(path), 0)
        for op in model.subgraphs[0].operators:
            if op.customOptions is not None:
                write("flexbuffers", bytes(bytearray(op.customOptions)), "detection_options_" + os.path.basename(os.path.dirname(path)))


def metadata():
    model_path = os.path.join(TASKS, "hostile", "automl_traversal", "model.tflite")
    model = schema.ModelT.InitFromPackedBuf(read(model_path), 0)
    for entry in model.metadata or []:
        write("metadata", bytes(bytearray(model.buffers[entry.buffer].data)), "metadata_" + entry.name.decode())
    for path in sorted(glob.glob(os.path.join(TASKS, "zip", "*.zip"))):
        write("metadata", read(path), os.path.basename(path))


def numpy():
    seen = set()
    for path in sorted(glob.glob(os.path.join(ENGINE, "*", "*", "*.npy"))):
        data = read(path)
        header = data[:data.find(b"}") + 1]
        if len(data) <= 4096 and header not in seen:  # one per dtype/shape header
            seen.add(header)
            write("numpy", data)
        if len(seen) >= 40:
            break


def automl():
    folder = os.path.join(ROOT, "Models", "dog_breeds_automl")
    dictionary = read(os.path.join(folder, "dict.txt"))[:200]
    manifests = [read(os.path.join(folder, "manifest.json")),
                 read(os.path.join(TASKS, "hostile", "automl_traversal", "manifest.json")),
                 b'{"modelFile": "sub/../model.tflite", "labelsFile": "sub/labels.txt"}',
                 b'{"modelFile": "out/secret.txt", "labelsFile": "secret.txt", "modelType": "IMAGE_LABELING"}']
    for i, manifest in enumerate(manifests):
        write("automl", manifest + b"\xff" + dictionary, f"manifest_{i}")


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    models()
    fusion_chains()
    images()
    flexbuffers()
    metadata()
    numpy()
    automl()
    for target in sorted(os.listdir(OUT)):
        files = os.listdir(os.path.join(OUT, target))
        size = sum(os.path.getsize(os.path.join(OUT, target, f)) for f in files)
        print(f"{target}: {len(files)} files, {size} bytes")


if __name__ == "__main__":
    main()
