#!/usr/bin/env python3
"""Check classifier .tflite files with LiteRT (reference kernels) and MediaPipe.

For every photo (one per stem, png preferred) prints LiteRT's and MediaPipe's
top-1, and, when several models with the same label set are given, compares
every model's LiteRT probabilities with the first one (top-1 agreement, top-5
overlap, max |Δp|).  --expect NAME=LABEL[|LABEL...] turns a check into a
failure (non-zero exit) when LiteRT's or MediaPipe's top-1 differs.

Usage:
    /work/venv/bin/python Models/scripts/verify_classifiers.py \
        Models/efficientnet_lite0_f32.tflite Models/efficientnet_lite0_int8.tflite \
        --images /work/shared/images \
        --expect "cat=Egyptian cat|tabby|tiger cat" \
        --expect "grace_hopper=military uniform" --expect parrot=macaw
"""
from __future__ import annotations

import argparse
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("GLOG_minloglevel", "2")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

from classifier_eval import (LiteRTClassifier, MediaPipeClassifier,  # noqa: E402
                             embedded_labels, list_photos, mediapipe_image)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="+")
    ap.add_argument("--images", default="/work/shared/images")
    ap.add_argument("--photos", nargs="*", help="explicit photo files (default: all in --images)")
    ap.add_argument("--expect", action="append", default=[])
    args = ap.parse_args()

    expect = {}
    for e in args.expect:
        k, _, v = e.partition("=")
        expect[k] = set(v.split("|"))
    photos = args.photos or list_photos(args.images)
    failures = []
    ref = None  # (labels, {photo: probs})
    for model in args.models:
        labels = embedded_labels(model)
        lrt = LiteRTClassifier(model)
        mpc = MediaPipeClassifier(model, max_results=5)
        print(f"\n== {os.path.basename(model)}  input {lrt.inp['dtype'].__name__} "
              f"{[int(d) for d in lrt.inp['shape']]}, output {lrt.out['dtype'].__name__} {[int(d) for d in lrt.out['shape']]}, "
              f"{len(labels)} labels")
        print(f"   {'photo':22s} {'LiteRT top-1':38s} {'MediaPipe top-1':38s}")
        probs_by_photo = {}
        for p in photos:
            stem = os.path.splitext(os.path.basename(p))[0]
            probs = lrt.scores(p)
            probs_by_photo[p] = probs
            i = int(np.argmax(probs))
            img, _ = mediapipe_image(p)
            top = mpc.classify(img)[0]
            a = f"{labels[i]} {probs[i]:.3f}"
            b = f"{top['category_name']} {top['score']:.3f}"
            flag = ""
            if stem in expect:
                ok = labels[i] in expect[stem] and top["category_name"] in expect[stem]
                flag = "ok" if ok else "WRONG"
                if not ok:
                    failures.append((model, stem))
            print(f"   {os.path.basename(p):22s} {a:38s} {b:38s} {flag}")
        mpc.close()
        if ref is None:
            ref = (labels, probs_by_photo, model)
        elif labels == ref[0]:
            agree, overlap, maxdiff = 0, [], 0.0
            for p, probs in probs_by_photo.items():
                r = ref[1][p]
                agree += int(np.argmax(r) == np.argmax(probs))
                overlap.append(len(set(np.argsort(-r)[:5]) & set(np.argsort(-probs)[:5])))
                maxdiff = max(maxdiff, float(np.max(np.abs(r - probs))))
            print(f"   vs {os.path.basename(ref[2])}: top-1 agrees on {agree}/{len(photos)}, "
                  f"mean top-5 overlap {np.mean(overlap):.1f}/5, max |dp| {maxdiff:.3f}")
    if failures:
        print("\nFAILED:", failures)
        sys.exit(1)
    print("\nall expectations met")


if __name__ == "__main__":
    main()
