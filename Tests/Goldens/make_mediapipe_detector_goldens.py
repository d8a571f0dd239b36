#!/usr/bin/env python3
"""Reference results for SSD object detectors: MediaPipe's Python ObjectDetector
(task level) and LiteRT's raw outputs (engine level).

Run from the repository root:

    /work/venv/bin/python Tests/Goldens/make_mediapipe_detector_goldens.py

Models
  * ../shared/models/ssd_mobilenet_v1_coco_quant.tflite — has no metadata; for
    MediaPipe, object-detector metadata is written into a TEMPORARY copy with
    MediaPipe's writer (labels = ../shared/models/labels/coco_labelmap.txt exactly
    as it is, line 0 "???"; normalisation mean 127.5 / std 127.5, which for this
    uint8 model only documents the float meaning of the input: MediaPipe feeds
    raw pixels). ../shared is never written.
  * Models/person_detector_f32.tflite, Models/person_detector_int8.tflite —
    metadata embedded (Models/scripts/build_person_detector.py).

1. MediaPipe → Tests/TasksTests/Fixtures/mediapipe_detector/<model>.json
   Photos: every ../shared/images photo, one per stem (png > jpg > bmp), decoded
   with PIL → RGB uint8 numpy → mp.Image(SRGB). Options: running mode IMAGE,
   max_results -1, score_threshold 0.3, nothing else. Detections are recorded
   exactly as MediaPipe returned them, in its order. Each JSON also records:
     - "preprocessing": how MediaPipe maps the image to the model input
       (stretch), with the evidence measured by this script;
     - "box_convention": how MediaPipe turns the op's normalised boxes into its
       integer pixel boxes, with the evidence measured by this script (see
       box_convention_evidence()).

2. LiteRT (BUILTIN_REF) raw outputs → Tests/EngineTests/Fixtures/ssd_coco/ and
   Tests/EngineTests/Fixtures/person_detector/ (no model files: the tests read
   the model from the path in each case's "model" field, relative to the
   repository root). Layout and manifest as Tests/Goldens/golden_io.py writes
   them (input_0.npy, output_0..3.npy per case; manifest.json with origin and
   cases), plus per case "model" and "model_sha256".
     ssd_coco: photo_<stem> = the photo resized to 300x300 with PIL
       (Image.resize((300, 300), Image.BILINEAR)), uint8; random_<i> (i < 5) =
       uint8 noise from np.random.default_rng(crc32(case name)). Tolerance 0.
     person_detector: int8_<stem> for every photo (uint8 input, tolerance 0);
       f32_<stem> for PERSON_F32_PHOTOS only (float32 input (p-127.5)/127.5 of
       the same PIL resize; 1.08 MB per input, hence the subset; tolerance 5e-5
       like the float networks, since float kernels may round differently).
"""
from __future__ import annotations

import hashlib
import importlib.metadata
import json
import math
import os
import shutil
import sys
import tempfile
import zlib
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("GLOG_minloglevel", "2")

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
sys.path.insert(0, str(REPO / "Models" / "scripts"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402

import golden_io  # noqa: E402
from classifier_eval import embedded_labels, list_photos  # noqa: E402
from detector_eval import LiteRTDetector, MediaPipeDetector, pil_mediapipe_image  # noqa: E402

GENERATOR = "Tests/Goldens/make_mediapipe_detector_goldens.py"
MP_OUT = REPO / "Tests" / "TasksTests" / "Fixtures" / "mediapipe_detector"
ENGINE_OUT = REPO / "Tests" / "EngineTests" / "Fixtures"
MAX_RESULTS = -1
SCORE_THRESHOLD = 0.3
N_RANDOM = 5
PERSON_F32_PHOTOS = ("grace_hopper", "kite_and_cold", "face")
COCO = SHARED / "models" / "ssd_mobilenet_v1_coco_quant.tflite"
COCO_LABELMAP = SHARED / "models" / "labels" / "coco_labelmap.txt"

MODELS = [
    # (json name, path, base, labels file for a temporary metadata copy or None, description)
    ("ssd_mobilenet_v1_coco_quant", COCO, SHARED, COCO_LABELMAP,
     "TFLite example-app SSD MobileNet v1 COCO, uint8, TFLite_Detection_PostProcess (10 detections)"),
    ("person_detector_f32", REPO / "Models" / "person_detector_f32.tflite", REPO, None,
     "SwiftLite default detector, SSDLite-MobileNetV2 person, float32 (float16-stored weights)"),
    ("person_detector_int8", REPO / "Models" / "person_detector_int8.tflite", REPO, None,
     "SwiftLite default detector, SSDLite-MobileNetV2 person, int8 backbone, uint8 input"),
]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_labels(labels_file: Path) -> list:
    labels = labels_file.read_text().splitlines()
    while labels and not labels[-1].strip():
        labels.pop()
    return labels


def with_metadata(model: Path, labels_file: Path, tmp: Path) -> Path:
    from write_metadata import add_detector_metadata

    buf, _ = add_detector_metadata(
        model.read_bytes(), read_labels(labels_file), name=model.stem,
        description="temporary copy with metadata for golden generation",
        mean=127.5, std=127.5, labels_filename=labels_file.name)
    out = tmp / model.name
    out.write_bytes(buf)
    return out


# ---------------------------------------------------------------------------
# How MediaPipe maps the image and the boxes
# ---------------------------------------------------------------------------
# Candidate rules for MediaPipe's integer pixel box, from the op's normalised box
# (ymin, xmin, ymax, xmax) and the image size W x H. trunc = C++ float->int cast.
def _mediapipe_rule(b, W, H):
    f = np.float32
    return (max(0, int(f(b[1]) * f(W))), max(0, int(f(b[0]) * f(H))),
            min(W, int((f(b[3]) - f(b[1])) * f(W))), min(H, int((f(b[2]) - f(b[0])) * f(H))))


BOX_RULES = {
    "origin=max(0,trunc(xmin*W)), size=min(W,trunc((xmax-xmin)*W)) [float32]": _mediapipe_rule,
    "origin=max(0,trunc(xmin*W)), size=trunc((xmax-xmin)*W) [float32]": lambda b, W, H: (
        max(0, int(np.float32(b[1]) * np.float32(W))), max(0, int(np.float32(b[0]) * np.float32(H))),
        int((np.float32(b[3]) - np.float32(b[1])) * np.float32(W)),
        int((np.float32(b[2]) - np.float32(b[0])) * np.float32(H))),
    "origin=trunc(xmin*W), size=trunc((xmax-xmin)*W)": lambda b, W, H: (
        int(b[1] * W), int(b[0] * H), int((b[3] - b[1]) * W), int((b[2] - b[0]) * H)),
    "origin=round(xmin*W), size=round((xmax-xmin)*W)": lambda b, W, H: (
        round(b[1] * W), round(b[0] * H), round((b[3] - b[1]) * W), round((b[2] - b[0]) * H)),
    "origin=floor(xmin*W), size=floor((xmax-xmin)*W)": lambda b, W, H: (
        math.floor(b[1] * W), math.floor(b[0] * H), math.floor((b[3] - b[1]) * W),
        math.floor((b[2] - b[0]) * H)),
    "origin=round(xmin*W), size=round(xmax*W)-round(xmin*W)": lambda b, W, H: (
        round(b[1] * W), round(b[0] * H), round(b[3] * W) - round(b[1] * W),
        round(b[2] * H) - round(b[0] * H)),
}
# Pixel-repetition factors (kx, ky): a 300x300 image with every pixel repeated
# kx times across and ky times down, stretched back to 300x300 by MediaPipe's
# bilinear warp (source coordinate = destination * size ratio), gives the model
# exactly the 300x300 pixels again — but only if MediaPipe stretches; a
# letterbox would pad the non-square ones.
REPEATS = [(1, 1), (2, 2), (3, 1), (1, 3), (3, 2)]
EVIDENCE_PHOTOS = ("grace_hopper", "kite_and_cold", "face", "cat", "mug")


def box_convention_evidence(model_path: Path, mp_model_path: Path, photos) -> dict:
    """Run MediaPipe on pixel-repeated 300x300 images (aspect ratios 1:1, 3:1, 1:3,
    3:2), whose model input is exactly known, and compare its pixel boxes with
    LiteRT's normalised boxes on that input under each rule in BOX_RULES. Uses
    every detection the op emits (score threshold 0), so that boxes crossing the
    image border are included."""
    import mediapipe as mp

    detector = MediaPipeDetector(str(mp_model_path), max_results=-1, score_threshold=0.0)
    lrt = LiteRTDetector(str(model_path))
    counts = {k: 0 for k in BOX_RULES}
    near = {k: 0 for k in BOX_RULES}  # all four numbers within 1 px
    total, max_score_diff, count_mismatches = 0, 0.0, 0
    samples = {}
    for p in photos:
        base = lrt.resize(p)
        ref = lrt.detect_array(base)
        for kx, ky in REPEATS:
            big = np.ascontiguousarray(np.repeat(np.repeat(base, ky, 0), kx, 1))
            H, W = big.shape[:2]
            got = detector.detect(mp.Image(image_format=mp.ImageFormat.SRGB, data=big))
            if len(got) != len(ref):
                count_mismatches += 1  # cannot pair detections by position; compare none here
                continue
            for d, g in zip(ref, got):
                total += 1
                max_score_diff = max(max_score_diff, abs(d["score"] - g["categories"][0]["score"]))
                bb = g["bounding_box"]
                actual = (bb["origin_x"], bb["origin_y"], bb["width"], bb["height"])
                b = d["box"]
                kind = ("size capped at the image size" if max(b[2] - b[0], b[3] - b[1]) > 1 else
                        "negative origin" if min(b[0], b[1]) < 0 else
                        "ordinary" if (kx, ky) == (3, 2) and d["score"] >= SCORE_THRESHOLD else None)
                if kind and kind not in samples:
                    f = np.float32
                    samples[kind] = {
                        "photo": Path(p).stem, "image_size": [W, H], "score": d["score"],
                        "litert_box_ymin_xmin_ymax_xmax": [float(v) for v in b],
                        "xmin*W": float(f(b[1]) * f(W)), "ymin*H": float(f(b[0]) * f(H)),
                        "(xmax-xmin)*W": float((f(b[3]) - f(b[1])) * f(W)),
                        "(ymax-ymin)*H": float((f(b[2]) - f(b[0])) * f(H)),
                        "mediapipe_bounding_box": bb}
                for k, rule in BOX_RULES.items():
                    r = rule(d["box"], W, H)
                    counts[k] += r == actual
                    near[k] += all(abs(u - v) <= 1 for u, v in zip(r, actual))
    detector.close()
    return {"model": str(Path(model_path).name), "photos": [Path(p).stem for p in photos],
            "mediapipe_score_threshold": 0.0,
            "repeats_kx_ky": REPEATS, "detections_compared": total,
            "images_skipped_for_a_different_detection_count": count_mismatches,
            "max_abs_score_difference": max_score_diff,
            "boxes_matching_each_rule_exactly": counts,
            "boxes_matching_each_rule_within_1px": near,
            "samples": samples}


def _iou(a, b):
    """IoU of two (origin_x, origin_y, width, height) boxes."""
    ix = max(0, min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0]))
    iy = max(0, min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = a[2] * a[3] + b[2] * b[3] - inter
    return inter / union if union > 0 else 0.0


def mediapipe_vs_litert(model_path: Path, mp_model_path: Path, photos) -> dict:
    """MediaPipe (its own TFLite runtime, XNNPACK) vs LiteRT BUILTIN_REF on the
    identical 300x300 input (each photo PIL-resized to 300x300 and given to
    MediaPipe at that size, so its resize is the identity): detections with
    score >= SCORE_THRESHOLD, matched greedily by IoU."""
    import mediapipe as mp

    detector = MediaPipeDetector(str(mp_model_path), max_results=-1, score_threshold=SCORE_THRESHOLD)
    lrt = LiteRTDetector(str(model_path))
    rule = next(iter(BOX_RULES.values()))
    matched, unmatched, max_ds, max_dpx = 0, 0, 0.0, 0
    for p in photos:
        base = lrt.resize(p)
        ref = [(d["score"], rule(d["box"], 300, 300)) for d in lrt.detect_array(base)
               if d["score"] >= SCORE_THRESHOLD]
        got = [(g["categories"][0]["score"], tuple(g["bounding_box"].values()))
               for g in detector.detect(mp.Image(image_format=mp.ImageFormat.SRGB, data=base))]
        for sc, box in got:
            ious = [_iou(box, rb) for _, rb in ref]
            if ious and max(ious) > 0.5:
                j = int(np.argmax(ious))
                max_ds = max(max_ds, abs(sc - ref[j][0]))
                max_dpx = max(max_dpx, max(abs(x - y) for x, y in zip(box, ref[j][1])))
                matched += 1
                ref.pop(j)
            else:
                unmatched += 1
        unmatched += len(ref)
    detector.close()
    return {"photos": "all, PIL-resized to 300x300", "score_threshold": SCORE_THRESHOLD,
            "matched_detections": matched, "unmatched_detections": unmatched,
            "max_abs_score_difference": max_ds, "max_abs_pixel_difference_at_300x300": max_dpx}


# ---------------------------------------------------------------------------
# Raw LiteRT fixtures
# ---------------------------------------------------------------------------
def write_raw_cases(root: Path, model_path: Path, model_rel: str, cases, tolerance_for, description_for):
    """cases: list of (name, input array). Writes <root>/<name>/input_0.npy, output_i.npy."""
    golden_io.reset_dir(root)
    model_bytes = model_path.read_bytes()
    digest = hashlib.sha256(model_bytes).hexdigest()
    entries = []
    for name, x in cases:
        outputs, ops = golden_io.run_model(model_bytes, [x])
        again, _ = golden_io.run_model(model_bytes, [x])
        if any(not np.array_equal(a, b) for a, b in zip(outputs, again)):
            raise RuntimeError(f"{name}: LiteRT is not deterministic")
        d = root / name
        d.mkdir()
        golden_io.save_npy(d / "input_0.npy", x)
        for i, y in enumerate(outputs):
            golden_io.save_npy(d / f"output_{i}.npy", y)
        interp = golden_io.make_interpreter(model_bytes)
        ins, outs = interp.get_input_details(), interp.get_output_details()
        entry = {
            "name": name,
            "model": model_rel,
            "model_sha256": digest,
            "ops": golden_io.unique_in_order(ops),
            "tolerance": tolerance_for(name),
            "description": description_for(name),
            "inputs": [{"name": ins[0]["name"], "shape": list(x.shape), "dtype": str(x.dtype)}],
            "outputs": [{"name": o["name"], "shape": list(y.shape), "dtype": str(y.dtype)}
                        for o, y in zip(outs, outputs)],
        }
        if tolerance_for(name) > 0:
            entry["tolerance_reason"] = (
                "float32 network (float16-stored weights): other correct float kernels may round "
                "differently; where two candidate scores are nearly tied, such rounding can also swap "
                "their order or the NMS outcome, so a mismatch should be checked per detection")
        entries.append(entry)
        n = int(outputs[3].reshape(-1)[0])
        print(f"  {root.name}/{name}: count {n}, top scores "
              f"{[round(float(s), 3) for s in outputs[2].reshape(-1)[:3]]}")
    golden_io.write_manifest(root, golden_io.origin(GENERATOR), entries)
    print(f"  {root.name}: {len(entries)} cases, {golden_io.dir_size(root)} bytes")


def pil_300(path: str) -> np.ndarray:
    return np.asarray(Image.open(path).convert("RGB").resize((300, 300), Image.BILINEAR), dtype=np.uint8)


def make_raw_fixtures(photos):
    stems = [(Path(p).stem, p) for p in photos]
    # --- COCO SSD -----------------------------------------------------------------
    cases = [(f"photo_{s}", pil_300(p)[None]) for s, p in stems]
    for i in range(N_RANDOM):
        name = f"random_{i}"
        rng = np.random.default_rng(zlib.crc32(f"ssd_coco/{name}".encode()))
        cases.append((name, rng.integers(0, 256, size=(1, 300, 300, 3), dtype=np.uint8)))
    write_raw_cases(
        ENGINE_OUT / "ssd_coco", COCO, "../shared/models/ssd_mobilenet_v1_coco_quant.tflite", cases,
        tolerance_for=lambda n: 0,
        description_for=lambda n: (
            f"../shared/images photo '{n[6:]}' resized to 300x300 with PIL Image.resize BILINEAR, uint8"
            if n.startswith("photo_") else
            f"uint8 noise, np.random.default_rng(zlib.crc32(b'ssd_coco/{n}')).integers(0, 256)"))
    # --- person detectors ------------------------------------------------------------
    cases = [(f"int8_{s}", pil_300(p)[None]) for s, p in stems]
    f32_cases = [(f"f32_{s}", ((pil_300(p).astype(np.float32) - 127.5) / 127.5)[None])
                 for s, p in stems if s in PERSON_F32_PHOTOS]
    root = ENGINE_OUT / "person_detector"
    golden_io.reset_dir(root)
    entries = []
    tmp = tempfile.TemporaryDirectory()  # outside the repository
    for kind, model_rel, cs in (("int8", "Models/person_detector_int8.tflite", cases),
                                ("f32", "Models/person_detector_f32.tflite", f32_cases)):
        sub = Path(tmp.name) / f"person_{kind}"
        write_raw_cases(
            sub, REPO / model_rel, model_rel, cs,
            tolerance_for=lambda n: 0 if n.startswith("int8_") else 5e-5,
            description_for=lambda n: (
                f"../shared/images photo '{n.split('_', 1)[1]}' resized to 300x300 with PIL "
                "Image.resize BILINEAR" + (", uint8" if n.startswith("int8_")
                                           else ", float32 (p - 127.5) / 127.5")))
        manifest = json.loads((sub / "manifest.json").read_text())
        entries += manifest["cases"]
        for c in manifest["cases"]:
            shutil.move(str(sub / c["name"]), str(root / c["name"]))
    tmp.cleanup()
    golden_io.write_manifest(root, golden_io.origin(GENERATOR), entries)
    print(f"  {root.relative_to(REPO)}: {len(entries)} cases, {golden_io.dir_size(root)} bytes")


# ---------------------------------------------------------------------------
def main():
    if not SHARED.is_dir():
        raise SystemExit(f"{SHARED} not found")
    photos = list_photos(str(SHARED / "images"))
    versions = {p: importlib.metadata.version(p)
                for p in ("mediapipe", "ai-edge-litert", "numpy", "pillow")}
    options = {"running_mode": "IMAGE", "max_results": MAX_RESULTS,
               "score_threshold": SCORE_THRESHOLD, "category_allowlist": None,
               "category_denylist": None, "display_names_locale": None,
               "region_of_interest": None, "rotation_degrees": 0}
    if MP_OUT.exists():
        shutil.rmtree(MP_OUT)
    MP_OUT.mkdir(parents=True)

    # The rule is established on the float model, where MediaPipe's inference
    # (XNNPACK) matches LiteRT's reference kernels to ~1e-6; the quantized models'
    # kernels differ by a few quantization steps, so they are only compared within 1 px.
    f32_path = REPO / "Models" / "person_detector_f32.tflite"
    exact = box_convention_evidence(
        f32_path, f32_path, [p for p in photos if Path(p).stem in EVIDENCE_PHOTOS])
    counts = exact["boxes_matching_each_rule_exactly"]
    best = max(counts, key=counts.get)
    if (counts[best] != exact["detections_compared"] or best != next(iter(BOX_RULES))
            or exact["images_skipped_for_a_different_detection_count"]):
        raise RuntimeError(f"the documented box rule does not explain every MediaPipe box: {exact}")
    print(f"box rule: {best}: {counts[best]}/{exact['detections_compared']} exact "
          f"(max |score diff| {exact['max_abs_score_difference']:.1e})")

    with tempfile.TemporaryDirectory() as tmpdir:
        for name, path, base, labels_file, desc in MODELS:
            run_path = path
            metadata_note = "embedded in the model file (labels.txt: 'person'; score threshold 0.3)"
            if labels_file is not None:
                run_path = with_metadata(path, labels_file, Path(tmpdir))
                metadata_note = (
                    "none in the original; added to a temporary copy with MediaPipe's object_detector "
                    "metadata writer (create_for_models_with_nms): labels "
                    f"{labels_file.relative_to(SHARED)} as is (TENSOR_VALUE_LABELS, 91 lines, line 0 "
                    "'???'), normalization mean 127.5 std 127.5, no score threshold")
            packed = embedded_labels(str(run_path))
            det = MediaPipeDetector(str(run_path), max_results=MAX_RESULTS,
                                    score_threshold=SCORE_THRESHOLD)
            images = []
            for p in photos:
                img, how = pil_mediapipe_image(p)
                rel = str(Path(p).relative_to(SHARED))
                images.append({"file": rel, "decoded_with": how, "width": img.width,
                               "height": img.height, "detections": det.detect(img)})
            det.close()
            vs_litert = mediapipe_vs_litert(path, run_path, photos)
            notes = [
                "detections are in MediaPipe's output order (the op's order, descending score)",
                "MediaPipe runs the model with its own TFLite runtime (XNNPACK), not the reference "
                "kernels: for quantized models its scores and boxes differ from LiteRT BUILTIN_REF by a "
                "few quantization steps (see mediapipe_vs_litert_reference), and detections near the "
                "score threshold can appear or vanish; compare with a tolerance",
                "category index: MediaPipe's C API reports -1 (Python None, here null) for these models: "
                "the label map replaces the class id by its name; category_name is the label file's "
                "line at the op's class value, display_name is null (no display-names file)",
            ]
            if labels_file is not None:
                notes.append(
                    "label offset: the op's class c (0-based, background removed) is looked up as line c "
                    "of coco_labelmap.txt, whose line 0 is '???': MediaPipe therefore reports a person "
                    "(class 0, line 1 'person') as category_name '???', a bicycle (class 1) as "
                    "'person', etc. — every name is shifted by one. These goldens record that as "
                    "MediaPipe returned it; a label file without the '???' line (e.g. "
                    "coco_labels.txt for this model's first classes) would name class c correctly")
            doc = {
                "generator": GENERATOR,
                "versions": versions,
                "model": {
                    "file": str(path.relative_to(base)),
                    "relative_to": "repository root" if base == REPO else "../shared",
                    "sha256": sha256(path),
                    "description": desc,
                    "metadata": metadata_note,
                },
                "options": options,
                "labels": {
                    "packed_lines": len(packed),
                    "lookup": "category_name = line c (0-based) of the packed label file, c = the op's "
                              "class output (background already removed by the op); no offset applied",
                    "class_0_reported_as": packed[0],
                },
                "preprocessing": {
                    "resize": "stretch",
                    "detail": "the whole image is stretched to the 300x300 input (no crop, no letterbox): "
                              "box x coordinates scale with the image width and y with its height. "
                              "Evidence: on images made by repeating each pixel of a 300x300 image "
                              f"{REPEATS} (kx, ky) times, MediaPipe returns exactly LiteRT's boxes for "
                              "the 300x300 image scaled by each image's own width and height "
                              "(box_convention.evidence); a letterbox would shift and shrink them on the "
                              "non-square images. MediaPipe's warp is bilinear without antialiasing "
                              "(see the classifier goldens), so a PIL (antialiased) resize gives "
                              "slightly different scores on real photos",
                },
                "box_convention": {
                    "rule": "origin_x = max(0, int(xmin * W)), origin_y = max(0, int(ymin * H)), "
                            "width = min(W, int((xmax - xmin) * W)), height = min(H, int((ymax - ymin) * H)), "
                            "with (ymin, xmin, ymax, xmax) the op's normalised box, W x H the image size, "
                            "float32 arithmetic and int() truncating toward zero (a C++ float->int cast). "
                            "Not a clip to the image: a negative origin becomes 0 WITHOUT shrinking the "
                            "size, a box reaching past the right/bottom edge keeps its full size (only a "
                            "size larger than the image itself is capped), so origin + size may exceed "
                            "the image",
                    "evidence": exact,
                },
                "mediapipe_vs_litert_reference": vs_litert,
                "notes": notes,
                "images_relative_to": "../shared",
                "images": images,
            }
            out = MP_OUT / f"{name}.json"
            out.write_text(json.dumps(doc, indent=1) + "\n")
            summary = "; ".join(
                f"{Path(i['file']).stem}: " + ", ".join(
                    f"{d['categories'][0]['category_name']} {d['categories'][0]['score']:.2f}"
                    for d in i["detections"][:4]) for i in images if i["detections"])
            print(f"{out.relative_to(REPO)}: {summary}")
            print(f"  MediaPipe vs LiteRT reference on identical input: {vs_litert}")

    make_raw_fixtures(photos)


if __name__ == "__main__":
    main()
