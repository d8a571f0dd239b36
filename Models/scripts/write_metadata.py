"""Attach MediaPipe/TFLite image-classifier metadata to a .tflite model.

Uses MediaPipe's own metadata writers
(``mediapipe.tasks.python.metadata.metadata_writers.image_classifier`` and
``metadata_writer``), after installing the pure-Python stand-in for the
compiled ``_pywrap_metadata_version`` module the wheel lacks
(see ``mp_metadata_shim.py``).

What gets written:
  * ModelMetadata: name, description, version, author, license
  * input tensor: ImageProperties (RGB), NormalizationOptions(mean, std),
    value range (derived by the writer from the tensor type)
  * output tensor: FeatureProperties + the labels as an associated file of
    type TENSOR_AXIS_LABELS (packed into the model's zip tail)
"""
from __future__ import annotations

import contextlib
import json
import os
import sys
import time
import types
import zipfile
from typing import List, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mp_metadata_shim  # noqa: E402

mp_metadata_shim.install()

from mediapipe.tasks.python.metadata.metadata_writers import image_classifier  # noqa: E402
from mediapipe.tasks.python.metadata.metadata_writers import metadata_info  # noqa: E402
from mediapipe.tasks.python.metadata.metadata_writers import metadata_writer  # noqa: E402


@contextlib.contextmanager
def _fixed_zip_timestamps():
    """Make the packed associated files reproducible.

    The populator appends the label file with ``ZipFile.writestr(name, data)``,
    which stamps the entry with the current local time; we pin it to the zip
    epoch (1980-01-01 00:00:00) so rebuilding gives byte-identical models.
    """
    fixed = time.struct_time((1980, 1, 1, 0, 0, 0, 1, 1, 0))
    shim = types.SimpleNamespace(time=lambda: 315532800.0, localtime=lambda *_: fixed)
    real = zipfile.time
    zipfile.time = shim
    try:
        yield
    finally:
        zipfile.time = real


def add_classifier_metadata(
    model_buffer: bytes,
    labels: List[str],
    *,
    name: str,
    description: str,
    version: Optional[str] = None,
    author: Optional[str] = None,
    licenses: Optional[str] = None,
    mean: float = 127.5,
    std: float = 127.5,
    labels_filename: str = "labels.txt",
) -> tuple[bytes, dict]:
    """Return (model_with_metadata, metadata_as_dict)."""
    if any("\n" in l for l in labels):
        raise ValueError("labels must not contain newlines")
    writer = image_classifier.MetadataWriter.create(
        bytearray(model_buffer),
        input_norm_mean=[mean],
        input_norm_std=[std],
        labels=metadata_writer.Labels().add(labels, exported_filename=labels_filename),
    )
    # `create` only sets name+description; replace the general block to also
    # carry version / author / licence.
    writer.writer._general_md = metadata_info.GeneralMd(
        name=name, version=version, description=description,
        author=author, licenses=licenses)
    with _fixed_zip_timestamps():
        tflite, meta_json = writer.populate()
    return bytes(tflite), json.loads(meta_json)


def add_detector_metadata(
    model_buffer: bytes,
    labels: List[str],
    *,
    name: str,
    description: str,
    version: Optional[str] = None,
    author: Optional[str] = None,
    licenses: Optional[str] = None,
    mean: float = 127.5,
    std: float = 127.5,
    labels_filename: str = "labels.txt",
    score_threshold: Optional[float] = None,
) -> tuple[bytes, dict]:
    """Object-detector metadata for a model ending in TFLite_Detection_PostProcess.

    Uses ``object_detector.MetadataWriter.create_for_models_with_nms``: image
    input (RGB, NormalizationOptions mean/std), and the four outputs named
    location / category / score / number of detections, grouped as
    "detection_result"; the labels become a TENSOR_VALUE_LABELS file on the
    category tensor (label i = class value i emitted by the op).  MediaPipe's
    writer pairs the metadata with the op's outputs by tensor index (lowest
    index = boxes), not by the subgraph's output order.

    ``score_threshold`` adds ScoreThresholdingOptions (a recommended global
    threshold) to the score tensor, which the writer's helper does not expose.
    Returns (model_with_metadata, metadata_as_dict).
    """
    from mediapipe.tasks.python.metadata.metadata_writers import object_detector

    if any("\n" in l for l in labels):
        raise ValueError("labels must not contain newlines")
    writer = object_detector.MetadataWriter.create_for_models_with_nms(
        bytearray(model_buffer),
        input_norm_mean=[mean],
        input_norm_std=[std],
        labels=metadata_writer.Labels().add(labels, exported_filename=labels_filename),
    )
    writer.writer._general_md = metadata_info.GeneralMd(
        name=name, version=version, description=description,
        author=author, licenses=licenses)
    if score_threshold is not None:
        score_mds = [md for md in writer.writer._output_mds
                     if isinstance(md, metadata_info.ClassificationTensorMd)]
        if len(score_mds) != 1:
            raise RuntimeError("expected exactly one score tensor in the detector metadata")
        score_mds[0].score_thresholding_md = metadata_info.ScoreThresholdingMd(score_threshold)
    with _fixed_zip_timestamps():
        tflite, meta_json = writer.populate()
    return bytes(tflite), json.loads(meta_json)
