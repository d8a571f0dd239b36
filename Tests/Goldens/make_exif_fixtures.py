"""EXIF-orientation fixtures for the Tasks tests: grace_hopper stored in each of the eight EXIF
orientations, so that applying the tag gives the upright photo back.

    /work/venv/bin/python Tests/Goldens/make_exif_fixtures.py   # pillow==13.0.0 (the root requirements.txt)

Writes Tests/TasksTests/Fixtures/exif/:
- grace_hopper_<o>.jpg, o = 1...8: the photo scaled to 160 px wide, its pixels transformed by the
  inverse of orientation o, saved as a JPEG (quality 95) whose APP1 Exif block has Orientation = o.
- small_upright.png: the photo at 48 px wide, no EXIF; small_6.png: the same pixels stored for
  orientation 6 with an eXIf chunk (lossless, so the test compares bytes exactly).

Orientation o means (EXIF 2.32, tag 274; Pillow's ImageOps.exif_transpose): the stored image is
shown after 2 FLIP_LEFT_RIGHT, 3 ROTATE_180, 4 FLIP_TOP_BOTTOM, 5 TRANSPOSE, 6 ROTATE_270 (90° clockwise),
7 TRANSVERSE, 8 ROTATE_90 (90° counterclockwise). The script checks that Pillow's exif_transpose of each
written file gives the upright image back (exactly for PNG; for JPEG within a mean error of 5 levels).
"""
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT.parent / "shared" / "images" / "grace_hopper.png"
OUT = ROOT / "Tests" / "TasksTests" / "Fixtures" / "exif"

T = Image.Transpose
# What shows the stored pixels upright, per orientation (as ImageOps.exif_transpose applies it).
SHOW = {2: T.FLIP_LEFT_RIGHT, 3: T.ROTATE_180, 4: T.FLIP_TOP_BOTTOM, 5: T.TRANSPOSE,
        6: T.ROTATE_270, 7: T.TRANSVERSE, 8: T.ROTATE_90}
# Its inverse, which makes the stored pixels from the upright ones.
STORE = {**SHOW, 6: T.ROTATE_90, 8: T.ROTATE_270}


def scaled(image, width):
    height = round(image.height * width / image.width)
    return image.resize((width, height), Image.Resampling.LANCZOS)


def stored(upright, orientation):
    return upright if orientation == 1 else upright.transpose(STORE[orientation])


def exif_with(orientation):
    exif = Image.Exif()
    exif[0x0112] = orientation
    return exif


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    photo = Image.open(SOURCE).convert("RGB")
    upright = scaled(photo, 160)
    for o in range(1, 9):
        path = OUT / f"grace_hopper_{o}.jpg"
        stored(upright, o).save(path, quality=95, exif=exif_with(o))
        back = ImageOps.exif_transpose(Image.open(path)).convert("RGB")
        assert back.size == upright.size, (o, back.size)
        error = np.abs(np.asarray(back, np.int16) - np.asarray(upright, np.int16)).mean()
        assert error < 5, (o, error)
        print(f"{path.name}: {Image.open(path).size} stored, mean |error| after exif_transpose {error:.2f}")

    small = scaled(photo, 48)
    small.save(OUT / "small_upright.png")
    stored(small, 6).save(OUT / "small_6.png", exif=exif_with(6))
    back = ImageOps.exif_transpose(Image.open(OUT / "small_6.png")).convert("RGB")
    assert np.array_equal(np.asarray(back), np.asarray(small))
    print(f"small_upright.png {small.size}, small_6.png {Image.open(OUT / 'small_6.png').size} with eXIf")


if __name__ == "__main__":
    main()
