#!/usr/bin/env python3
"""Reference inputs for InputTensorEncoder's two resampling conventions, for the Tasks tests.

Run from the repository root:

    /work/venv/bin/python Tests/Goldens/make_preprocessing_goldens.py

Needs numpy and Pillow, and for the MediaPipe references mediapipe and tensorflow (the
environment of make_mediapipe_classifier_goldens.py; Models/scripts/write_metadata.py adds the
metadata). Writes Tests/TasksTests/Fixtures/preprocessing/:

  * source_7x5.png   a 7 (wide) x 5 (high) RGB image of seeded random pixels
                     (np.random.default_rng(20240607)), written with Pillow and
                     read back to check it round-trips exactly;
  * <case>.half_pixel.npy, <case>.mediapipe.npy
                     the expected uint8 input, shape (height, width, 3), of a
                     uint8 [1, height, width, 3] model input, for
                     ResamplingConvention.halfPixelCenters and .mediapipe;
  * manifest.json    the origin and the cases: target size, crop mode, region.

Both conventions share the geometry documented on InputTensorEncoder
(Sources/Tasks/Preprocessing/InputTensorEncoder.swift):

  * the source rectangle (sx, sy, sw, sh) in pixels is the region of interest
    scaled by the image size, then
      - scaleFill: unchanged, mapped onto the whole input;
      - centerCrop: the largest centred sub-rectangle with the input's aspect
        ratio;
      - scaleFit: unchanged, mapped onto a centred destination rectangle of the
        source's aspect ratio (size rounded half away from zero, at least 1,
        offset = floor(free / 2)); the rest of the input is black (0).

halfPixelCenters, computed here in numpy:

  * destination pixel (x, y) of a dw x dh destination samples the source at
        fx = sx + (x + 0.5) * (sw / dw) - 0.5,  fy = sy + (y + 0.5) * (sh / dh) - 0.5
    (pixel centres aligned, TF half_pixel_centers / OpenCV resize), clamped to
    [0, w - 1] x [0, h - 1] (edge pixels replicated), bilinear between
    floor(f) and min(floor(f) + 1, size - 1);
  * the interpolated value (float64: top = p00 + (p01 - p00) * wx, bottom
    likewise, value = top + (bottom - top) * wy) is rounded half away from
    zero and clamped to 0...255.

mediapipe, recorded from MediaPipe itself: a probe model per destination size
(float32 [1, dh, dw, 3] -> RESHAPE -> [1, dh*dw*3], converted with TensorFlow,
with image-classifier metadata mean 0 / std 1 so that the input range is
0...255 and each "class score" is one input value) run by MediaPipe's Python
ImageClassifier (max_results -1) on the source image, with the source
rectangle passed as ImageProcessingOptions.region_of_interest (normalised).
MediaPipe resamples on uint8 and then converts to float, so the scores are the
8-bit values it feeds a uint8 model. scaleFit's destination rectangle is
probed at its own size and pasted into a black input. (OpenCV's Python
warpPerspective is no substitute: cv2 5.x interpolates differently from the
OpenCV inside MediaPipe, by up to 3 levels on this image.)

Deterministic: two runs give byte-identical files.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
from PIL import Image

REPO = Path(__file__).resolve().parents[2]
OUT_DIR = REPO / "Tests" / "TasksTests" / "Fixtures" / "preprocessing"
GENERATOR = "Tests/Goldens/make_preprocessing_goldens.py"
SEED = 20240607
SOURCE_W, SOURCE_H = 7, 5

# (name, target width, target height, crop, region (x, y, w, h) normalised)
CASES = [
    ("fill_down_3x4", 3, 4, "scaleFill", (0.0, 0.0, 1.0, 1.0)),
    ("fill_up_11x9", 11, 9, "scaleFill", (0.0, 0.0, 1.0, 1.0)),
    ("center_down_3x4", 3, 4, "centerCrop", (0.0, 0.0, 1.0, 1.0)),
    ("center_up_11x9", 11, 9, "centerCrop", (0.0, 0.0, 1.0, 1.0)),
    ("fit_down_3x4", 3, 4, "scaleFit", (0.0, 0.0, 1.0, 1.0)),
    ("fit_up_11x9", 11, 9, "scaleFit", (0.0, 0.0, 1.0, 1.0)),
    ("roi_fill_up_11x9", 11, 9, "scaleFill", (0.25, 0.2, 0.5, 0.6)),
    ("roi_center_down_3x4", 3, 4, "centerCrop", (0.1, 0.0, 0.8, 1.0)),
]


def round_half_away(v: np.ndarray) -> np.ndarray:
    return np.where(v >= 0, np.floor(v + 0.5), np.ceil(v - 0.5))


def geometry(w: int, h: int, dw_total: int, dh_total: int, crop: str, region):
    sx, sy = region[0] * w, region[1] * h
    sw, sh = region[2] * w, region[3] * h
    dest = (0, 0, dw_total, dh_total)
    target_aspect, source_aspect = dw_total / dh_total, sw / sh
    if crop == "centerCrop":
        if source_aspect > target_aspect:
            new_w = sh * target_aspect
            sx += (sw - new_w) / 2
            sw = new_w
        else:
            new_h = sw / target_aspect
            sy += (sh - new_h) / 2
            sh = new_h
    elif crop == "scaleFit":
        if source_aspect > target_aspect:
            fh = max(1, int(round_half_away(np.float64(dw_total / source_aspect))))
            dest = (0, (dh_total - fh) // 2, dw_total, fh)
        else:
            fw = max(1, int(round_half_away(np.float64(dh_total * source_aspect))))
            dest = ((dw_total - fw) // 2, 0, fw, dh_total)
    else:
        assert crop == "scaleFill", crop
    return (sx, sy, sw, sh), dest


def taps(f: np.ndarray, size: int):
    clamped = np.clip(f, 0, size - 1)
    i0 = np.floor(clamped).astype(np.int64)
    i1 = np.minimum(i0 + 1, size - 1)
    return i0, i1, clamped - i0


def encode(img: np.ndarray, dw_total: int, dh_total: int, crop: str, region) -> np.ndarray:
    h, w, _ = img.shape
    (sx, sy, sw, sh), (dx, dy, dw, dh) = geometry(w, h, dw_total, dh_total, crop, region)
    fy = sy + (np.arange(dh, dtype=np.float64) + 0.5) * (sh / dh) - 0.5
    fx = sx + (np.arange(dw, dtype=np.float64) + 0.5) * (sw / dw) - 0.5
    y0, y1, wy = taps(fy, h)
    x0, x1, wx = taps(fx, w)
    p = img.astype(np.float64)
    p00, p01 = p[y0][:, x0], p[y0][:, x1]
    p10, p11 = p[y1][:, x0], p[y1][:, x1]
    wx, wy = wx[None, :, None], wy[:, None, None]
    top = p00 + (p01 - p00) * wx
    bottom = p10 + (p11 - p10) * wx
    value = np.clip(round_half_away(top + (bottom - top) * wy), 0, 255).astype(np.uint8)
    out = np.zeros((dh_total, dw_total, 3), dtype=np.uint8)
    out[dy:dy + dh, dx:dx + dw] = value
    return out


def probe_model(w: int, h: int) -> bytes:
    """float32 [1, h, w, 3] -> [1, h*w*3], with classifier metadata mean 0, std 1."""
    import os
    import sys

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    sys.path.insert(0, str(REPO / "Models" / "scripts"))
    from write_metadata import add_classifier_metadata

    @tf.function(input_signature=[tf.TensorSpec([1, h, w, 3], tf.float32)])
    def flatten(x):
        return tf.reshape(x, [1, h * w * 3])

    converter = tf.lite.TFLiteConverter.from_concrete_functions([flatten.get_concrete_function()])
    model, _ = add_classifier_metadata(converter.convert(), [f"value{i}" for i in range(h * w * 3)],
                                       name="preprocessing probe", description="input values as scores",
                                       mean=0.0, std=1.0)
    return model


def encode_mediapipe(img: np.ndarray, dw_total: int, dh_total: int, crop: str, region) -> np.ndarray:
    import tempfile

    import mediapipe as mp
    from mediapipe.tasks.python import vision
    from mediapipe.tasks.python.components.containers import rect
    from mediapipe.tasks.python.core import base_options
    from mediapipe.tasks.python.vision.core import image_processing_options

    h, w, _ = img.shape
    (sx, sy, sw, sh), (dx, dy, dw, dh) = geometry(w, h, dw_total, dh_total, crop, region)
    roi = rect.RectF(left=sx / w, top=sy / h, right=(sx + sw) / w, bottom=(sy + sh) / h)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "probe.tflite"
        path.write_bytes(probe_model(dw, dh))
        classifier = vision.ImageClassifier.create_from_options(vision.ImageClassifierOptions(
            base_options=base_options.BaseOptions(model_asset_path=str(path)), max_results=-1))
        result = classifier.classify(mp.Image(image_format=mp.ImageFormat.SRGB, data=np.ascontiguousarray(img)),
                                     image_processing_options.ImageProcessingOptions(region_of_interest=roi))
        classifier.close()
    values = np.full(dh * dw * 3, np.nan)
    for c in result.classifications[0].categories:
        values[c.index] = c.score
    assert np.all(values == np.round(values)) and values.min() >= 0 and values.max() <= 255, values
    out = np.zeros((dh_total, dw_total, 3), dtype=np.uint8)
    out[dy:dy + dh, dx:dx + dw] = values.reshape(dh, dw, 3).astype(np.uint8)
    return out


def main():
    from importlib import metadata

    if OUT_DIR.exists():
        shutil.rmtree(OUT_DIR)
    OUT_DIR.mkdir(parents=True)
    rng = np.random.default_rng(SEED)
    source = rng.integers(0, 256, size=(SOURCE_H, SOURCE_W, 3), dtype=np.uint8)
    png = OUT_DIR / f"source_{SOURCE_W}x{SOURCE_H}.png"
    Image.fromarray(source, "RGB").save(png, optimize=False)
    assert np.array_equal(np.asarray(Image.open(png).convert("RGB")), source)

    cases = []
    for name, w, h, crop, region in CASES:
        np.save(OUT_DIR / f"{name}.half_pixel.npy", encode(source, w, h, crop, region), allow_pickle=False)
        np.save(OUT_DIR / f"{name}.mediapipe.npy", encode_mediapipe(source, w, h, crop, region), allow_pickle=False)
        cases.append({"name": name, "width": w, "height": h, "crop": crop,
                      "region": {"x": region[0], "y": region[1], "width": region[2], "height": region[3]}})
        print(f"{name}: {w}x{h} {crop} region {region}")
    manifest = {
        "origin": {"generator": GENERATOR, "numpy": np.__version__,
                   "pillow": Image.__version__, "mediapipe": metadata.version("mediapipe"),
                   "tensorflow": metadata.version("tensorflow"), "seed": SEED,
                   "conventions": {
                       "half_pixel": "numpy: half-pixel centres, bilinear, edge replicate, rounded half away "
                                     "from zero to uint8",
                       "mediapipe": "MediaPipe ImageClassifier on a RESHAPE probe model (mean 0, std 1), "
                                    "source rectangle as region_of_interest"}},
        "source": png.name,
        "cases": cases,
    }
    (OUT_DIR / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")


if __name__ == "__main__":
    main()
