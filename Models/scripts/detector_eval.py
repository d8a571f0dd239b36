"""Shared helpers: run an SSD detector .tflite (ending in TFLite_Detection_PostProcess)
with LiteRT (reference kernels) and with MediaPipe's Python ObjectDetector.

Used by build_person_detector.py and Tests/Goldens/make_mediapipe_detector_goldens.py.
"""
from __future__ import annotations

from typing import List, Optional, Tuple, Union

import numpy as np
from PIL import Image


# ---------------------------------------------------------------------------
# LiteRT
# ---------------------------------------------------------------------------
class LiteRTDetector:
    """LiteRT BUILTIN_REF interpreter for a detector whose outputs are
    (boxes, classes, scores, count) in the subgraph's output order."""

    def __init__(self, model: Union[str, bytes], mean: float = 127.5, std: float = 127.5):
        from ai_edge_litert import interpreter as litert

        kw = dict(model_content=model) if isinstance(model, (bytes, bytearray)) else dict(model_path=model)
        self.interp = litert.Interpreter(
            experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF, num_threads=1, **kw)
        self.interp.allocate_tensors()
        self.inp = self.interp.get_input_details()[0]
        self.outs = self.interp.get_output_details()
        self.mean, self.std = mean, std
        _, self.h, self.w, _ = (int(d) for d in self.inp["shape"])

    def resize(self, path: str) -> np.ndarray:
        """PIL decode -> RGB -> bilinear resize of the whole frame (stretch, no crop)."""
        im = Image.open(path).convert("RGB").resize((self.w, self.h), Image.BILINEAR)
        return np.asarray(im, dtype=np.uint8)

    def input_tensor(self, rgb: np.ndarray) -> np.ndarray:
        """[H,W,3] RGB pixels (uint8, or float 0..255 from a float resize) -> input tensor."""
        if self.inp["dtype"] == np.uint8:
            if rgb.dtype != np.uint8:
                rgb = np.clip(np.round(rgb), 0, 255).astype(np.uint8)
            return np.ascontiguousarray(rgb[None])
        return ((rgb.astype(np.float32) - self.mean) / self.std)[None]

    def run(self, x: np.ndarray) -> List[np.ndarray]:
        """Raw outputs, in the subgraph's output order."""
        self.interp.set_tensor(self.inp["index"], x)
        self.interp.invoke()
        return [np.array(self.interp.get_tensor(d["index"])) for d in self.outs]

    def detect_array(self, rgb: np.ndarray) -> List[dict]:
        boxes, classes, scores, count = self.run(self.input_tensor(rgb))
        n = int(count.reshape(-1)[0])
        return [dict(box=[float(v) for v in boxes[0, i]], class_index=int(classes[0, i]),
                     score=float(scores[0, i])) for i in range(n)]

    def detect(self, path: str) -> List[dict]:
        return self.detect_array(self.resize(path))


# ---------------------------------------------------------------------------
# MediaPipe
# ---------------------------------------------------------------------------
def pil_mediapipe_image(path: str) -> Tuple["object", str]:
    """PIL decode -> RGB uint8 numpy -> mp.Image(SRGB). Returns (image, how)."""
    import mediapipe as mp

    arr = np.ascontiguousarray(np.asarray(Image.open(path).convert("RGB"), dtype=np.uint8))
    return (mp.Image(image_format=mp.ImageFormat.SRGB, data=arr),
            "PIL.Image.open(...).convert('RGB') -> uint8 numpy -> mp.Image(SRGB)")


class MediaPipeDetector:
    def __init__(self, model_path: str, max_results: int = -1,
                 score_threshold: Optional[float] = None):
        from mediapipe.tasks.python import vision
        from mediapipe.tasks.python.core import base_options

        kw = {} if score_threshold is None else dict(score_threshold=score_threshold)
        opts = vision.ObjectDetectorOptions(
            base_options=base_options.BaseOptions(model_asset_path=model_path),
            running_mode=vision.RunningMode.IMAGE,
            max_results=max_results, **kw)
        self.det = vision.ObjectDetector.create_from_options(opts)

    def detect(self, image) -> List[dict]:
        res = self.det.detect(image)
        out = []
        for d in res.detections:
            bb = d.bounding_box
            out.append(dict(
                bounding_box=dict(origin_x=int(bb.origin_x), origin_y=int(bb.origin_y),
                                  width=int(bb.width), height=int(bb.height)),
                # MediaPipe's C API reports index -1 (Python: None) when the label
                # map replaced the class id by its name; kept as returned.
                categories=[dict(index=None if c.index is None else int(c.index), score=float(c.score),
                                 category_name=c.category_name, display_name=c.display_name)
                            for c in d.categories]))
        return out

    def close(self):
        self.det.close()
