"""Shared helpers: run a classifier .tflite with LiteRT (reference kernels) and
with MediaPipe's Python ImageClassifier.

Used by verify_classifiers.py and Tests/Goldens/make_mediapipe_classifier_goldens.py.
"""
from __future__ import annotations

import glob
import io
import os
import zipfile
from typing import Dict, List, Optional, Tuple

import numpy as np
from PIL import Image

PHOTO_EXTS = (".png", ".jpg", ".jpeg", ".bmp")


def list_photos(folder: str) -> List[str]:
    """One file per photo stem, preferring png > jpg > bmp when several exist."""
    rank = {".png": 0, ".jpg": 1, ".jpeg": 1, ".bmp": 2}
    best: Dict[str, str] = {}
    for p in glob.glob(os.path.join(folder, "*")):
        stem, ext = os.path.splitext(os.path.basename(p))
        ext = ext.lower()
        if ext not in rank:
            continue
        if stem not in best or rank[ext] < rank[os.path.splitext(best[stem])[1].lower()]:
            best[stem] = p
    return [best[k] for k in sorted(best)]


def embedded_labels(model_path: str) -> Optional[List[str]]:
    """Labels from the TENSOR_AXIS_LABELS file packed in the model (zip tail)."""
    with open(model_path, "rb") as f:
        buf = f.read()
    try:
        z = zipfile.ZipFile(io.BytesIO(buf))
    except zipfile.BadZipFile:
        return None
    names = [n for n in z.namelist() if n.endswith(".txt")]
    if not names:
        return None
    return z.read(names[0]).decode("utf-8").splitlines()


# ---------------------------------------------------------------------------
# LiteRT
# ---------------------------------------------------------------------------
class LiteRTClassifier:
    def __init__(self, model_path: str, mean: float = 127.5, std: float = 127.5):
        from ai_edge_litert import interpreter as litert

        self.interp = litert.Interpreter(
            model_path=model_path,
            experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF,
            num_threads=1)
        self.interp.allocate_tensors()
        self.inp = self.interp.get_input_details()[0]
        self.out = self.interp.get_output_details()[0]
        self.mean, self.std = mean, std
        _, self.h, self.w, _ = self.inp["shape"]

    def preprocess(self, path: str) -> np.ndarray:
        """PIL decode -> RGB -> bilinear resize of the whole frame (no crop)."""
        im = Image.open(path).convert("RGB").resize((int(self.w), int(self.h)), Image.BILINEAR)
        rgb = np.asarray(im)
        if self.inp["dtype"] == np.uint8:
            return rgb[None]
        return ((rgb.astype(np.float32) - self.mean) / self.std)[None]

    def scores(self, path: str) -> np.ndarray:
        self.interp.set_tensor(self.inp["index"], self.preprocess(path))
        self.interp.invoke()
        y = self.interp.get_tensor(self.out["index"])[0].reshape(-1)
        if self.out["dtype"] != np.float32:
            scale, zp = self.out["quantization"]
            y = (y.astype(np.float32) - zp) * scale
        return y


# ---------------------------------------------------------------------------
# MediaPipe
# ---------------------------------------------------------------------------
def mediapipe_image(path: str) -> Tuple["object", str]:
    """Decode a photo for MediaPipe.

    PNG/JPEG: MediaPipe's own decoder (mp.Image.create_from_file).
    BMP (which it does not decode) or anything it rejects: PIL -> RGB uint8
    numpy -> mp.Image(SRGB).
    Returns (image, description of the decoding).
    """
    import mediapipe as mp

    if not path.lower().endswith(".bmp"):
        try:
            img = mp.Image.create_from_file(path)
            if img.image_format == mp.ImageFormat.SRGB:
                return img, "mp.Image.create_from_file (MediaPipe decoder), SRGB"
            arr = np.asarray(img.numpy_view())[..., :3].copy()
            return (mp.Image(image_format=mp.ImageFormat.SRGB, data=arr),
                    f"mp.Image.create_from_file ({img.image_format.name}) -> first 3 channels -> SRGB")
        except Exception:  # noqa: BLE001 - fall through to PIL
            pass
    arr = np.ascontiguousarray(np.asarray(Image.open(path).convert("RGB"), dtype=np.uint8))
    return (mp.Image(image_format=mp.ImageFormat.SRGB, data=arr),
            "PIL.Image.open(...).convert('RGB') -> uint8 numpy -> mp.Image(SRGB)")


class MediaPipeClassifier:
    def __init__(self, model_path: str, max_results: int = 5):
        from mediapipe.tasks.python import vision
        from mediapipe.tasks.python.core import base_options

        opts = vision.ImageClassifierOptions(
            base_options=base_options.BaseOptions(model_asset_path=model_path),
            max_results=max_results)
        self.clf = vision.ImageClassifier.create_from_options(opts)

    def classify(self, image) -> List[dict]:
        res = self.clf.classify(image)
        cats = res.classifications[0].categories
        return [dict(index=int(c.index), score=float(c.score),
                     category_name=c.category_name, display_name=c.display_name)
                for c in cats]

    def close(self):
        self.clf.close()
