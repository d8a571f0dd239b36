#!/usr/bin/env python3
"""Copy the demo photo shipped with SwiftLite from the scikit-image wheel.

`skimage/data/chelsea.png` ("Chelsea the cat", 451x300 RGB) is documented in
scikit-image's `skimage.data.chelsea()` docstring as:
    "No copyright restrictions.  CC0 by the photographer (Stefan van der Walt)."
The file is copied byte for byte to Models/demo/cat.png and its SHA-256 printed.

Usage: /work/venv/bin/python Models/scripts/copy_demo_photo.py
"""
import hashlib
import importlib.metadata
import os
import shutil

import skimage

HERE = os.path.dirname(os.path.abspath(__file__))
DEST = os.path.join(os.path.dirname(HERE), "demo", "cat.png")

src = os.path.join(os.path.dirname(skimage.__file__), "data", "chelsea.png")
os.makedirs(os.path.dirname(DEST), exist_ok=True)
shutil.copyfile(src, DEST)
with open(DEST, "rb") as f:
    digest = hashlib.sha256(f.read()).hexdigest()
print(f"scikit-image {importlib.metadata.version('scikit-image')}: {src} -> {DEST}")
print(f"sha256 {digest}, {os.path.getsize(DEST)} bytes")
