#!/usr/bin/env python3
"""Write the image-decoding goldens used by Tests/TasksTests/ImageDecodingTests.swift.

Every expected pixel comes from Pillow (`Image.open(p).convert('RGB')`), never from
SwiftLite's own decoders, so the Swift tests compare against an independent reference.

Two kinds of output, both under Tests/TasksTests/Fixtures/images/:

1. For each image in <repo>/../shared/images: `<file>.json` with the width, the height,
   the 64-bit FNV-1a hash of the RGB8 bytes Pillow produces, and a few sampled pixels.
   The images themselves stay in ../shared (they are not committed).

2. Tiny synthetic images (committed, so these tests need no ../shared): PNG variants
   (gray, gray+alpha, palette, sub-byte depths, 16-bit, Adam7-interlaced, RGBA, a
   gAMA/cHRM-tagged file), JPEG variants (grayscale, 4:4:4, 4:2:0, progressive, CMYK)
   and BMP variants (top-down, 32-bit BI_RGB, 32-bit BI_BITFIELDS with a V5 header,
   16-bit 5-5-5 and 5-6-5, 8/4/1-bit palettes, a palette shorter than the indices). PNG and BMP files are written byte by
   byte here (Pillow cannot write 16-bit RGB, interlaced PNGs or most BMP variants);
   each `<file>.json` also holds the full RGB bytes Pillow decodes from it.

Run with a Python that has numpy and Pillow:  python Tests/Goldens/make_image_goldens.py
"""

import json
import struct
import sys
import warnings
import zlib
from pathlib import Path

import numpy as np
import PIL
from PIL import Image

REPO = Path(__file__).resolve().parents[2]
SHARED_IMAGES = REPO.parent / "shared" / "images"
OUT = REPO / "Tests" / "TasksTests" / "Fixtures" / "images"

FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3
MASK64 = (1 << 64) - 1


def fnv1a64(data: bytes) -> int:
    """64-bit FNV-1a over the bytes (plain Python; a few seconds for the largest image)."""
    h = FNV_OFFSET
    for b in data:
        h = ((h ^ b) * FNV_PRIME) & MASK64
    return h


def sample_points(width: int, height: int):
    """Corners, centre and a few fixed pseudo-random points (an LCG, so Swift needs no copy)."""
    pts = [(0, 0), (width - 1, 0), (0, height - 1), (width - 1, height - 1),
           (width // 2, height // 2)]
    state = 12345
    for _ in range(7):
        state = (state * 1103515245 + 12345) % (1 << 31)
        x = state % width
        state = (state * 1103515245 + 12345) % (1 << 31)
        y = state % height
        pts.append((x, y))
    return pts


def pil_rgb(path: Path) -> np.ndarray:
    with Image.open(path) as im:
        return np.asarray(im.convert("RGB"))


def describe(name: str, rgb: np.ndarray, full: bool, note: str = "",
             source: str = "np.asarray(Image.open(p).convert('RGB'))") -> dict:
    height, width, _ = rgb.shape
    data = np.ascontiguousarray(rgb, dtype=np.uint8).tobytes()
    doc = {
        "file": name,
        "width": width,
        "height": height,
        "fnv1a64": f"{fnv1a64(data):016x}",
        "samples": [{"x": x, "y": y, "rgb": [int(v) for v in rgb[y, x]]}
                    for x, y in sample_points(width, height)],
        "source": f"Pillow {PIL.__version__}: {source}",
    }
    if note:
        doc["note"] = note
    if full:
        doc["rgb"] = [int(v) for v in data]
    return doc


def write_json(doc: dict) -> None:
    path = OUT / (doc["file"] + ".json")
    path.write_text(json.dumps(doc, separators=(",", ":")) + "\n")


# ---------------------------------------------------------------------------
# A minimal PNG writer (filter type 0 on every row; optional Adam7 interlace).

ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4),
         (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]


def chunk(kind: bytes, payload: bytes) -> bytes:
    return (struct.pack(">I", len(payload)) + kind + payload
            + struct.pack(">I", zlib.crc32(kind + payload) & 0xFFFFFFFF))


def pack_row(samples, bit_depth: int) -> bytes:
    if bit_depth == 16:
        return b"".join(struct.pack(">H", s) for s in samples)
    if bit_depth == 8:
        return bytes(samples)
    out, acc, nbits = bytearray(), 0, 0
    for s in samples:
        acc = (acc << bit_depth) | s
        nbits += bit_depth
        if nbits == 8:
            out.append(acc)
            acc, nbits = 0, 0
    if nbits:
        out.append(acc << (8 - nbits))
    return bytes(out)


def encode_png(pixels, color_type: int, bit_depth: int, interlace=False,
               palette=None, trns=None, extra=()) -> bytes:
    """pixels: list of rows, each a list of per-pixel tuples of samples."""
    height, width = len(pixels), len(pixels[0])
    raw = bytearray()
    passes = ADAM7 if interlace else [(0, 0, 1, 1)]
    for x0, y0, dx, dy in passes:
        xs = list(range(x0, width, dx))
        ys = list(range(y0, height, dy))
        if not xs or not ys:
            continue
        for y in ys:
            samples = [s for x in xs for s in pixels[y][x]]
            raw += b"\x00" + pack_row(samples, bit_depth)
    ihdr = struct.pack(">IIBBBBB", width, height, bit_depth, color_type, 0, 0,
                       1 if interlace else 0)
    out = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
    for kind, payload in extra:
        out += chunk(kind, payload)
    if palette is not None:
        out += chunk(b"PLTE", bytes(v for rgb in palette for v in rgb))
    if trns is not None:
        out += chunk(b"tRNS", trns)
    # Split the data over two IDAT chunks to exercise chunk boundaries.
    data = zlib.compress(bytes(raw), 9)
    half = len(data) // 2
    out += chunk(b"IDAT", data[:half]) + chunk(b"IDAT", data[half:])
    return out + chunk(b"IEND", b"")


def grid(width, height, fn):
    return [[fn(x, y) for x in range(width)] for y in range(height)]


def png_variants():
    w, h = 7, 5
    v = {}
    v["gray8.png"] = encode_png(grid(w, h, lambda x, y: ((x * 37 + y * 53) % 256,)), 0, 8)
    v["gray1.png"] = encode_png(grid(w, h, lambda x, y: ((x + y) % 2,)), 0, 1)
    v["gray4_trns.png"] = encode_png(grid(w, h, lambda x, y: ((x * 3 + y) % 16,)), 0, 4,
                                     trns=struct.pack(">H", 5))
    v["gray16.png"] = encode_png(grid(w, h, lambda x, y: ((x * 9001 + y * 7777 + 0x80) % 65536,)), 0, 16)
    v["gray_alpha8.png"] = encode_png(
        grid(w, h, lambda x, y: ((x * 29 + y * 41) % 256, (x * 60 + y * 13) % 256)), 4, 8)
    v["gray_alpha16_interlaced.png"] = encode_png(
        grid(w, h, lambda x, y: ((x * 5003 + y * 3001) % 65536, (y * 16000 + x * 77) % 65536)),
        4, 16, interlace=True)
    palette = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (10, 20, 30), (200, 150, 100), (77, 88, 99)]
    v["palette8_trns.png"] = encode_png(grid(w, h, lambda x, y: ((x + 2 * y) % 6,)), 3, 8,
                                        palette=palette, trns=bytes([0, 128, 255, 7]))
    v["palette4.png"] = encode_png(grid(w, h, lambda x, y: ((x * y) % 6,)), 3, 4, palette=palette)
    v["palette2_interlaced.png"] = encode_png(grid(w, h, lambda x, y: ((x + y) % 4,)), 3, 2,
                                              palette=palette[:4], interlace=True)
    v["rgb8_interlaced.png"] = encode_png(
        grid(w, h, lambda x, y: ((x * 40) % 256, (y * 60) % 256, (x * y * 9) % 256)), 2, 8,
        interlace=True)
    v["rgb16.png"] = encode_png(
        grid(w, h, lambda x, y: ((x * 9001 + 0x7F) % 65536, (y * 13001 + 0xFF) % 65536,
                                 (x * y * 3001 + 0x80) % 65536)), 2, 16)
    # Alpha 0 with non-zero colour: decoders that premultiply or composite would lose it.
    v["rgba8.png"] = encode_png(
        grid(w, h, lambda x, y: ((x * 35) % 256, (y * 50) % 256, 200, (x * 40 + y * 7) % 256 if x else 0)),
        6, 8)
    v["rgba16_interlaced.png"] = encode_png(
        grid(w, h, lambda x, y: ((x * 9001 + y * 300) % 65536, (y * 13001 + 0x80) % 65536,
                                 (x * y * 1234) % 65536, (x * 11000 + y * 5000) % 65536)),
        6, 16, interlace=True)
    v["rgba16.png"] = encode_png(
        grid(w, h, lambda x, y: ((x * 9001 + 0x7F) % 65536, (y * 13001) % 65536, 40000,
                                 (x * 11000) % 65536)), 6, 16)
    # gAMA 1.0 plus a non-sRGB cHRM: a colour-managing decoder would change every value.
    chrm = struct.pack(">8I", 31270, 32900, 64000, 33000, 30000, 60000, 15000, 6000)
    v["rgb8_gamma1.png"] = encode_png(
        grid(w, h, lambda x, y: ((x * 40) % 256, (y * 60) % 256, 128)), 2, 8,
        extra=[(b"gAMA", struct.pack(">I", 100000)), (b"cHRM", chrm)])
    v["rgb16_gamma_srgb.png"] = encode_png(
        grid(w, h, lambda x, y: ((x * 9001) % 65536, (y * 13001) % 65536, 0x1234)), 2, 16,
        extra=[(b"sRGB", bytes([0])), (b"gAMA", struct.pack(">I", 45455))])
    return v


# ---------------------------------------------------------------------------
# BMP writer: file header + info header (40 or 124 bytes) + optional masks/palette.

def bmp_bytes(width, height, bpp, rows_bytes, compression=0, header_size=40,
              masks=None, palette=None, top_down=False):
    """rows_bytes: unpadded pixel bytes for each row, top row first."""
    stride = ((width * bpp + 31) // 32) * 4
    pixel_rows = rows_bytes if top_down else list(reversed(rows_bytes))
    body = b"".join(r + b"\x00" * (stride - len(r)) for r in pixel_rows)
    extra = b""
    info = struct.pack("<IiiHHIIiiII", header_size, width, -height if top_down else height,
                       1, bpp, compression, len(body), 2835, 2835,
                       len(palette) if palette else 0, 0)
    if header_size == 40:
        if masks is not None:
            extra = struct.pack("<3I", *masks[:3])
    else:
        m = list(masks) if masks is not None else [0, 0, 0, 0]
        info += struct.pack("<4I", *m) + b"sRGB" + b"\x00" * 36 + b"\x00" * 12
        if header_size == 124:
            info += struct.pack("<4I", 4, 0, 0, 0)
        assert len(info) == header_size, len(info)
    table = b"".join(bytes([b, g, r, 0]) for r, g, b in (palette or []))
    offset = 14 + len(info) + len(extra) + len(table)
    fh = b"BM" + struct.pack("<IHHI", offset + len(body), 0, 0, offset)
    return fh + info + extra + table + body


def bmp_variants():
    w, h = 7, 5
    rgb = lambda x, y: ((x * 36 + 3) % 256, (y * 50 + 1) % 256, (x * y * 11 + 9) % 256)
    v = {}
    rows24 = [b"".join(bytes([b, g, r]) for r, g, b in (rgb(x, y) for x in range(w))) for y in range(h)]
    v["bmp24_topdown.bmp"] = bmp_bytes(w, h, 24, rows24, top_down=True)
    v["bmp24_bottomup.bmp"] = bmp_bytes(w, h, 24, rows24)
    rows32 = [b"".join(bytes([b, g, r, 0x5A]) for r, g, b in (rgb(x, y) for x in range(w))) for y in range(h)]
    v["bmp32_rgb.bmp"] = bmp_bytes(w, h, 32, rows32)
    v["bmp32_bitfields_v5.bmp"] = bmp_bytes(
        w, h, 32, rows32, compression=3, header_size=124,
        masks=(0x00FF0000, 0x0000FF00, 0x000000FF, 0xFF000000))
    rows555 = [b"".join(struct.pack("<H", ((r >> 3) << 10) | ((g >> 3) << 5) | (b >> 3))
                        for r, g, b in (rgb(x, y) for x in range(w))) for y in range(h)]
    v["bmp16_555.bmp"] = bmp_bytes(w, h, 16, rows555)
    rows565 = [b"".join(struct.pack("<H", ((r >> 3) << 11) | ((g >> 2) << 5) | (b >> 3))
                        for r, g, b in (rgb(x, y) for x in range(w))) for y in range(h)]
    v["bmp16_565.bmp"] = bmp_bytes(w, h, 16, rows565, compression=3,
                                   masks=(0xF800, 0x07E0, 0x001F))
    palette = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (10, 20, 30), (200, 150, 100), (77, 88, 99)]
    rows8 = [bytes((x + 2 * y) % 6 for x in range(w)) for y in range(h)]
    v["bmp8_palette.bmp"] = bmp_bytes(w, h, 8, rows8, palette=palette)
    # Indices 3-5 lie beyond the 3-color palette: Pillow (and SwiftLite) show them black.
    v["bmp8_short_palette.bmp"] = bmp_bytes(w, h, 8, rows8, palette=palette[:3])
    rows4 = [pack_row([(x * y) % 6 for x in range(w)], 4) for y in range(h)]
    v["bmp4_palette.bmp"] = bmp_bytes(w, h, 4, rows4, palette=palette)
    rows1 = [pack_row([(x + y) % 2 for x in range(w)], 1) for y in range(h)]
    v["bmp1_palette_topdown.bmp"] = bmp_bytes(w, h, 1, rows1, palette=palette[3:5], top_down=True)
    return v


# ---------------------------------------------------------------------------
# JPEG variants, encoded by Pillow (any encoder will do: the goldens are what
# Pillow decodes from the committed bytes).

def jpeg_variants():
    w, h = 19, 13
    yy, xx = np.mgrid[0:h, 0:w]
    rgb = np.stack([(xx * 13) % 256, (yy * 19) % 256, ((xx + yy) * 7 + 40) % 256], axis=-1).astype(np.uint8)
    color = Image.fromarray(rgb, "RGB")
    gray = Image.fromarray(((xx * 11 + yy * 17) % 256).astype(np.uint8), "L")
    cmyk = color.convert("CMYK")
    v = {}

    def save(im, name, **kw):
        import io
        buf = io.BytesIO()
        im.save(buf, "JPEG", **kw)
        v[name] = buf.getvalue()

    save(gray, "gray.jpg", quality=90)
    save(color, "color444.jpg", quality=92, subsampling=0)
    save(color, "color420.jpg", quality=85, subsampling=2)
    save(color, "progressive422.jpg", quality=80, subsampling=1, progressive=True)
    save(cmyk, "cmyk.jpg", quality=90)
    return v


def main() -> int:
    # Pillow warns that palette transparency given as bytes is better converted to RGBA;
    # convert('RGB') drops the transparency either way, which is what the goldens want.
    warnings.filterwarnings("ignore", message="Palette images with Transparency")
    OUT.mkdir(parents=True, exist_ok=True)

    # 1. Shared images (not committed; only their goldens are).
    if SHARED_IMAGES.is_dir():
        for path in sorted(SHARED_IMAGES.iterdir()):
            if path.suffix.lower() not in (".png", ".jpg", ".jpeg", ".bmp"):
                continue
            write_json(describe(path.name, pil_rgb(path), full=False))
            print("golden", path.name)
    else:
        print(f"warning: {SHARED_IMAGES} not found; shared-image goldens not written",
              file=sys.stderr)

    # 2. Synthetic fixtures (committed together with their goldens).
    fixtures = {}
    fixtures.update(png_variants())
    fixtures.update(bmp_variants())
    fixtures.update(jpeg_variants())
    for name, data in fixtures.items():
        path = OUT / name
        path.write_bytes(data)
        if name == "cmyk.jpg":
            continue  # SwiftLite rejects CMYK JPEGs; no pixel golden needed.
        with Image.open(path) as im:
            mode = im.mode
            if mode == "I;16":
                # Pillow's convert('RGB') clips 16-bit gray to 255 instead of scaling, so
                # the golden is the high byte of the 16-bit samples Pillow decodes.
                g = (np.asarray(im).astype(np.uint16) >> 8).astype(np.uint8)
                rgb = np.repeat(g[:, :, None], 3, axis=2)
                note = "high byte of Pillow's I;16 samples (Pillow's convert('RGB') clips them)"
                write_json(describe(name, rgb, full=True, note=note,
                                    source="np.asarray(Image.open(p)) >> 8, gray replicated"))
                print("fixture", name, mode)
                continue
        write_json(describe(name, pil_rgb(path), full=True))
        print("fixture", name, mode)
    return 0


if __name__ == "__main__":
    sys.exit(main())
