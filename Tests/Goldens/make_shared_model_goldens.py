#!/usr/bin/env python3
"""Whole-model goldens for the canonical quantized models in ../shared/models.

For each model below, LiteRT with the BUILTIN_REF op resolver (TFLite's reference
kernels, no delegates, one thread) is run on

* 5 seeded random inputs: `np.random.default_rng(seed).integers(0, 256, shape,
  dtype=np.uint8)` for seeds 0..4 (cases `random_seed<k>`), and
* every photo in ../shared/images (case `photo_<stem>`; the .png when a photo also
  exists in another format), decoded and resized exactly like
  `Image.open(p).convert('RGB').resize((w, h), Image.BILINEAR)` (no crop).

Models (read from ../shared; neither models nor photos are copied into the repo):

    mobilenet_v1_0.25_128_quant          outputs: the model's outputs
    mobilenet_v2_1.0_224_quant           outputs: the model's outputs
    mobilenet_v2_1.0_224_inat_bird_quant outputs: the model's outputs
    tf2_mobilenet_v2_1.0_224_ptq         outputs: the model's outputs
    ssd_mobilenet_v1_coco_quant          outputs: the backbone only -- the box
        encodings and class predictions that feed the TFLite_Detection_PostProcess
        custom op (its third input, the anchors, is a constant and not recorded),
        read with experimental_preserve_all_tensors=True.

Output, under Tests/EngineTests/Fixtures/shared_models/:

    <model-stem>/manifest.json
    <model-stem>/<case>/input_0.npy          (uint8, the model's input shape)
    <model-stem>/<case>/output_<k>.npy       (the model's outputs in subgraph order; for
                                              the SSD: output_0 = box encodings,
                                              output_1 = class predictions)
    mobilenet_v1_0.25_128_quant/intermediates/<tensor index>.npy
        every tensor an operator computes (no constants, not the graph input) for
        the case photo_cat, from a BUILTIN_REF run with preserve_all_tensors.

manifest.json:

    {"origin": {"generator", "runtime", "tensorflow", "numpy", "pillow", "resolver": "BUILTIN_REF", ...},
     "model": "models/<file>",            # relative to ../shared
     "model_bytes": ..., "model_sha256": ...,
     "input": {"index", "name", "shape", "dtype", "scale", "zero_point"},
     "output_tensors": [{"file": "output_0.npy", "index", "name", "shape", "dtype", "scale", "zero_point", "role"}],
     "cases": [{"name", "input_source", "tolerance": 0,
                "outputs": "model outputs" | {"tensors": [box_idx, class_idx]},
                "xnnpack_identical": bool, "xnnpack_max_diff": int, "xnnpack_differing_bytes": int}],
     "intermediates": {...}               # mobilenet_v1_0.25_128_quant only
    }

`xnnpack_*` compares each golden with LiteRT's default configuration (resolver
AUTO: optimized kernels plus the XNNPACK delegate, one thread); max_diff is in
quantized units. For the SSD backbone the default configuration cannot preserve
intermediates, so that run uses an in-memory copy of the model whose subgraph
outputs are the two backbone tensors (checked to give the same BUILTIN_REF
values as the preserved run).

Before writing, the script checks the results the shared README documents
(mobilenet_v2 cat/grace_hopper/parrot, inat bird, SSD mug), that a second run with
a fresh interpreter is identical, and that the preserved intermediates end in the
model's output. The output is deterministic (two runs give byte-identical files);
it takes ~20 s on a busy 2-core machine.

Size: ~14.8 MB on disk (the SSD alone is 6.8 MB: 300x300x3 inputs and 1917x91 class
predictions), above the project's ~8 MB wish; every model keeps its 5 random cases
and all photos. The three 224x224 models get identical input files, which git
stores once (~10.3 MB of distinct files, ~7 MB zlib-compressed).

    /work/venv/bin/python Tests/Goldens/make_shared_model_goldens.py   # from the repository root
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import golden_io as G  # first: it quiets TensorFlow logging before LiteRT is imported
import numpy as np
import PIL
from ai_edge_litert.interpreter import Interpreter, OpResolverType
from PIL import Image

SHARED = G.REPO_ROOT.parent / "shared"
OUT_DIR = G.FIXTURES_ROOT / "shared_models"
RANDOM_SEEDS = range(5)
IMAGE_PREFERENCE = (".png", ".jpg", ".jpeg", ".bmp")
INTERMEDIATES_MODEL = "mobilenet_v1_0.25_128_quant"
INTERMEDIATES_CASE = "photo_cat"
# A soft budget for the whole fixture directory: the run prints a warning above it and
# fails above the hard limit (a guard against accidentally recording large tensors).
SOFT_LIMIT_BYTES = 8_000_000
HARD_LIMIT_BYTES = 20_000_000

MODELS = [
    "mobilenet_v1_0.25_128_quant.tflite",
    "mobilenet_v2_1.0_224_quant.tflite",
    "mobilenet_v2_1.0_224_inat_bird_quant.tflite",
    "tf2_mobilenet_v2_1.0_224_ptq.tflite",
    "ssd_mobilenet_v1_coco_quant.tflite",
]
SSD_MODEL = "ssd_mobilenet_v1_coco_quant.tflite"
POSTPROCESS_OP = "TFLite_Detection_PostProcess"

# Top-1 results the shared README documents (model file, case) -> label.
EXPECTED_TOP1 = {
    ("mobilenet_v2_1.0_224_quant.tflite", "photo_cat"): "Egyptian cat",
    ("mobilenet_v2_1.0_224_quant.tflite", "photo_grace_hopper"): "military uniform",
    ("mobilenet_v2_1.0_224_quant.tflite", "photo_parrot"): "macaw",
    ("mobilenet_v2_1.0_224_inat_bird_quant.tflite", "photo_bird"): "Poecile atricapillus (Black-capped Chickadee)",
    (SSD_MODEL, "photo_mug"): "cup",
}
LABELS = {
    "mobilenet_v1_0.25_128_quant.tflite": "imagenet_labels.txt",
    "mobilenet_v2_1.0_224_quant.tflite": "imagenet_labels.txt",
    "tf2_mobilenet_v2_1.0_224_ptq.tflite": "imagenet_labels.txt",
    "mobilenet_v2_1.0_224_inat_bird_quant.tflite": "inat_bird_labels.txt",
    SSD_MODEL: "coco_labelmap.txt",  # line 0 is '???'; the model's class c is line c + 1
}


# --------------------------------------------------------------------------
# Running LiteRT
# --------------------------------------------------------------------------


def reference_interpreter(model_bytes: bytes, preserve: bool) -> Interpreter:
    interp = Interpreter(model_content=model_bytes, num_threads=1,
                         experimental_op_resolver_type=OpResolverType.BUILTIN_REF,
                         experimental_preserve_all_tensors=preserve)
    interp.allocate_tensors()
    return interp


def default_interpreter(model_bytes: bytes) -> Interpreter:
    """LiteRT as users get it: optimized kernels with the XNNPACK delegate."""
    interp = Interpreter(model_content=model_bytes, num_threads=1)
    interp.allocate_tensors()
    ops = {d["op_name"] for d in interp._get_ops_details()}
    if "DELEGATE" not in ops:
        raise RuntimeError("the default LiteRT interpreter did not apply the XNNPACK delegate")
    return interp


def invoke(interp: Interpreter, x: np.ndarray, tensors: list[int]) -> list[np.ndarray]:
    interp.set_tensor(interp.get_input_details()[0]["index"], x)
    interp.invoke()
    return [np.array(interp.get_tensor(t)) for t in tensors]


def with_outputs(model_bytes: bytes, outputs: list[int]) -> bytes:
    """The model with its main subgraph's outputs replaced by `outputs`."""
    model = G.parse_model(model_bytes)
    model.subgraphs[0].outputs = np.array(outputs, dtype=np.int32)
    return G.serialize_model(model)


def is_constant(model_bytes: bytes, tensor: int) -> bool:
    model = G.parse_model(model_bytes)
    t = model.subgraphs[0].tensors[tensor]
    buf = model.buffers[t.buffer]
    return buf is not None and buf.data is not None and len(buf.data) > 0


# --------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------


def photos() -> list[Path]:
    """One file per photo stem under ../shared/images, preferring .png."""
    by_stem: dict[str, list[Path]] = {}
    for p in sorted((SHARED / "images").iterdir()):
        if p.suffix.lower() in IMAGE_PREFERENCE:
            by_stem.setdefault(p.stem, []).append(p)
    return [min(files, key=lambda p: IMAGE_PREFERENCE.index(p.suffix.lower()))
            for _, files in sorted(by_stem.items())]


def cases_for(shape: tuple[int, ...]) -> list[tuple[str, dict, np.ndarray]]:
    """(name, input_source, uint8 input) for the random and photo cases of an input shape."""
    _, h, w, c = shape
    assert c == 3, shape
    out = []
    for seed in RANDOM_SEEDS:
        x = np.random.default_rng(seed).integers(0, 256, size=shape, dtype=np.uint8)
        out.append((f"random_seed{seed}",
                    {"kind": "random", "seed": seed,
                     "recipe": f"np.random.default_rng({seed}).integers(0, 256, {list(shape)}, dtype=np.uint8)"},
                    x))
    for p in photos():
        img = Image.open(p).convert("RGB").resize((w, h), Image.BILINEAR)
        x = np.asarray(img, dtype=np.uint8).reshape(shape)
        out.append((f"photo_{p.stem}",
                    {"kind": "photo", "file": f"images/{p.name}",
                     "recipe": f"Image.open(p).convert('RGB').resize(({w}, {h}), Image.BILINEAR)"},
                    x))
    return out


# --------------------------------------------------------------------------
# Describing tensors
# --------------------------------------------------------------------------


def describe(details: dict) -> dict:
    scale, zero_point = details["quantization"]
    return {"index": int(details["index"]), "name": details["name"],
            "shape": [int(s) for s in details["shape"]], "dtype": np.dtype(details["dtype"]).name,
            "scale": float(scale), "zero_point": int(zero_point)}


def top1(model_file: str, ref_outputs: list[np.ndarray]) -> tuple[str, float]:
    labels = (SHARED / "models" / "labels" / LABELS[model_file]).read_text().splitlines()
    if model_file == SSD_MODEL:
        # Full-model outputs: boxes, classes, scores, count; detections are sorted by score.
        return labels[int(ref_outputs[1][0, 0]) + 1], float(ref_outputs[2][0, 0])
    probs = ref_outputs[0].reshape(-1)
    k = int(np.argmax(probs))
    return labels[k], float(probs[k]) / 256.0


def xnnpack_comparison(golden: list[np.ndarray], fast: list[np.ndarray]) -> dict:
    max_diff, differing = 0, 0
    for g, f in zip(golden, fast, strict=True):
        assert g.shape == f.shape and g.dtype == f.dtype, (g.shape, f.shape, g.dtype, f.dtype)
        d = np.abs(g.astype(np.int64) - f.astype(np.int64))
        max_diff = max(max_diff, int(d.max()))
        differing += int(np.count_nonzero(d))
    return {"xnnpack_identical": differing == 0, "xnnpack_max_diff": max_diff,
            "xnnpack_differing_bytes": differing}


# --------------------------------------------------------------------------
# One model
# --------------------------------------------------------------------------


def record_model(model_file: str, origin: dict) -> dict:
    """Writes one model's cases and manifest; returns a summary for the log."""
    model_bytes = (SHARED / "models" / model_file).read_bytes()
    stem = Path(model_file).stem
    model_dir = OUT_DIR / stem
    model_dir.mkdir(parents=True)

    probe = reference_interpreter(model_bytes, preserve=True)
    (in_details,) = probe.get_input_details()
    out_details = probe.get_output_details()
    if in_details["dtype"] != np.uint8:
        raise RuntimeError(f"{model_file}: input dtype {in_details['dtype']}, expected uint8")
    model_outputs = [int(d["index"]) for d in out_details]

    if model_file == SSD_MODEL:
        ops = probe._get_ops_details()
        (post,) = [o for o in ops if o["op_name"] == POSTPROCESS_OP]
        boxes, classes, anchors = (int(t) for t in post["inputs"])
        if not is_constant(model_bytes, anchors) or is_constant(model_bytes, boxes) or is_constant(model_bytes, classes):
            raise RuntimeError(f"{POSTPROCESS_OP} inputs: expected computed boxes/classes and constant anchors")
        golden_tensors = [boxes, classes]
        case_outputs: str | dict = {"tensors": golden_tensors}
        roles = ["box encodings (input 0 of TFLite_Detection_PostProcess)",
                 "class predictions (input 1 of TFLite_Detection_PostProcess)"]
        details = {int(d["index"]): d for d in probe.get_tensor_details()}
        described = [describe(details[t]) for t in golden_tensors]
        fast_model = with_outputs(model_bytes, golden_tensors)
    else:
        golden_tensors = model_outputs
        case_outputs = "model outputs"
        roles = ["model output"] * len(golden_tensors)
        described = [describe(d) for d in out_details]
        fast_model = model_bytes
    for k, (d, role) in enumerate(zip(described, roles)):
        d["file"] = f"output_{k}.npy"
        d["role"] = role
        if d["dtype"] != "uint8":
            raise RuntimeError(f"{model_file}: recorded tensor {d['index']} is {d['dtype']}, expected uint8")

    reference = reference_interpreter(model_bytes, preserve=True)
    fast = default_interpreter(fast_model)
    fast_reference = reference_interpreter(fast_model, preserve=False) if fast_model is not model_bytes else None
    shape = tuple(int(s) for s in in_details["shape"])
    manifest_cases, log = [], []
    for i, (name, source, x) in enumerate(cases_for(shape)):
        golden = invoke(reference, x, golden_tensors)
        full = [np.array(reference.get_tensor(t)) for t in model_outputs]
        if i == 0:
            again = invoke(reference_interpreter(model_bytes, preserve=True), x, golden_tensors)
            if any(not np.array_equal(a, b) for a, b in zip(golden, again)):
                raise RuntimeError(f"{model_file} {name}: a second BUILTIN_REF run differs")
        if fast_reference is not None:
            check = invoke(fast_reference, x, golden_tensors)
            if any(not np.array_equal(a, b) for a, b in zip(golden, check)):
                raise RuntimeError(f"{model_file} {name}: the re-output model differs from the preserved tensors")
        comparison = xnnpack_comparison(golden, invoke(fast, x, golden_tensors))
        label, score = top1(model_file, full)
        expected = EXPECTED_TOP1.get((model_file, name))
        if expected is not None and label != expected:
            raise RuntimeError(f"{model_file} {name}: top-1 '{label}', the shared README says '{expected}'")

        case_dir = model_dir / name
        case_dir.mkdir()
        G.save_npy(case_dir / "input_0.npy", x)
        for k, arr in enumerate(golden):
            G.save_npy(case_dir / f"output_{k}.npy", arr)
        manifest_cases.append({"name": name, "input_source": source, "tolerance": 0,
                               "outputs": case_outputs, **comparison})
        log.append(f"  {name:24s} top1={label!r} ({score:.2f})  xnnpack: "
                   + ("identical" if comparison["xnnpack_identical"] else
                      f"max diff {comparison['xnnpack_max_diff']}, {comparison['xnnpack_differing_bytes']} bytes differ"))

    manifest = {
        "origin": origin,
        "model": f"models/{model_file}",
        "model_bytes": len(model_bytes),
        "model_sha256": hashlib.sha256(model_bytes).hexdigest(),
        "input": describe(in_details),
        "output_tensors": described,
        "xnnpack_reference": "LiteRT default interpreter (resolver AUTO: optimized kernels + XNNPACK delegate), num_threads=1"
                             + ("; model outputs replaced by the two backbone tensors" if model_file == SSD_MODEL else ""),
        "cases": manifest_cases,
    }
    if stem == INTERMEDIATES_MODEL:
        manifest["intermediates"] = record_intermediates(model_bytes, model_dir, model_outputs)
    with open(model_dir / "manifest.json", "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    return {"stem": stem, "log": log, "bytes": G.dir_size(model_dir)}


def record_intermediates(model_bytes: bytes, model_dir: Path, model_outputs: list[int]) -> dict:
    """Every operator output for INTERMEDIATES_CASE, from a preserved BUILTIN_REF run."""
    x = np.load(model_dir / INTERMEDIATES_CASE / "input_0.npy")
    interp = reference_interpreter(model_bytes, preserve=True)
    interp.set_tensor(interp.get_input_details()[0]["index"], x)
    interp.invoke()
    out = model_dir / "intermediates"
    out.mkdir()
    tensors = []
    for op in interp._get_ops_details():
        for t in (int(t) for t in op["outputs"]):
            if is_constant(model_bytes, t):
                raise RuntimeError(f"operator {op['index']} writes constant tensor {t}")
            G.save_npy(out / f"{t}.npy", np.array(interp.get_tensor(t)))
            tensors.append({"tensor": t, "op_index": int(op["index"]), "op": op["op_name"]})
    final = [np.load(model_dir / INTERMEDIATES_CASE / f"output_{k}.npy") for k in range(len(model_outputs))]
    if any(not np.array_equal(np.load(out / f"{t}.npy"), f) for t, f in zip(model_outputs, final)):
        raise RuntimeError("the preserved run's outputs differ from the recorded case outputs")
    return {"case": INTERMEDIATES_CASE, "directory": "intermediates",
            "description": "every tensor an operator writes (not constants, not the graph input), "
                           "BUILTIN_REF with experimental_preserve_all_tensors=True; "
                           "listed in execution order with the operator LiteRT reports",
            "tensors": tensors}


def main(argv: list[str]) -> None:
    if len(argv) > 1:
        sys.exit("usage: make_shared_model_goldens.py (no arguments)")
    if not (SHARED / "models").is_dir():
        sys.exit(f"{SHARED} not found: this script needs the shared models and photos")
    origin = G.origin("Tests/Goldens/make_shared_model_goldens.py")
    origin["pillow"] = PIL.__version__
    origin["num_threads"] = 1
    origin["preserve_all_tensors"] = True
    G.reset_dir(OUT_DIR)
    summaries = []
    for model_file in MODELS:
        summary = record_model(model_file, origin)
        print(f"{summary['stem']}: {summary['bytes']} bytes")
        print("\n".join(summary["log"]))
        summaries.append(summary)
    total = G.dir_size(OUT_DIR)
    unique = {hashlib.sha256(p.read_bytes()).hexdigest(): p.stat().st_size
              for p in OUT_DIR.rglob("*") if p.is_file()}
    print(f"\ntotal fixture size: {total} bytes ({total / 1e6:.2f} MB); "
          f"{sum(unique.values())} bytes of distinct files (git stores identical files once)")
    if total > HARD_LIMIT_BYTES:
        sys.exit(f"fixtures take {total} bytes, more than the hard limit {HARD_LIMIT_BYTES}")
    if total > SOFT_LIMIT_BYTES:
        print(f"warning: above the {SOFT_LIMIT_BYTES}-byte budget")


if __name__ == "__main__":
    main(sys.argv)
