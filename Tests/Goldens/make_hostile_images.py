"""Writes hand-made hostile images: small files whose headers lie about their size or whose data
ends early, so that a careless decoder would allocate gigabytes, run for seconds, or pass padding
off as pixels. `Tests/TasksTests/HostileInputTests.swift` asserts that each is refused with an
`ImageError` naming the problem, in well under a second.

Built from scratch with Pillow and byte patching (no external files):

    python Tests/Goldens/make_hostile_images.py   # writes Tests/TasksTests/Fixtures/hostile/
"""
import io
import os
import struct
import zlib

import numpy as np
from PIL import Image

OUT = os.path.join(os.path.dirname(__file__), "..", "TasksTests", "Fixtures", "hostile")


def noise(width, height, seed=12):
    rng = np.random.default_rng(seed)
    return Image.fromarray(rng.integers(0, 256, (height, width, 3), dtype=np.uint8))


def jpeg(image, **options):
    out = io.BytesIO()
    image.save(out, "JPEG", quality=90, **options)
    return out.getvalue()


def with_jpeg_size(data, width, height):
    """Rewrites the frame header (SOF0 or SOF2) to claim `width` x `height`."""
    data = bytearray(data)
    for marker in (b"\xff\xc0", b"\xff\xc2"):
        at = data.find(marker)
        if at >= 0:
            struct.pack_into(">HH", data, at + 5, height, width)
            return bytes(data)
    raise ValueError("no SOF0/SOF2 marker")


def png_chunk(kind, payload):
    return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))


def png_bomb(width, height):
    """A complete, valid 1-bit grayscale PNG of `width` x `height` zeros: ~50 KB for 400 M pixels."""
    row = b"\x00" + bytes((width + 7) // 8)  # filter byte 0, then the packed bits
    compressor = zlib.compressobj(9)
    idat = b"".join(compressor.compress(row) for _ in range(height)) + compressor.flush()
    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", header) + png_chunk(b"IDAT", idat) + png_chunk(b"IEND", b"")


def bmp_header(width, height, pixel_bytes):
    """A 24-bit BITMAPINFOHEADER BMP claiming `width` x `height`, followed by `pixel_bytes` bytes."""
    info = struct.pack("<IiiHHIIiiII", 40, width, height, 1, 24, 0, 0, 2835, 2835, 0, 0)
    file_header = struct.pack("<2sIHHI", b"BM", 14 + 40 + pixel_bytes, 0, 0, 54)
    return file_header + info + bytes(pixel_bytes)


def main():
    os.makedirs(OUT, exist_ok=True)
    cases = {}
    baseline = jpeg(noise(16, 16))
    progressive = jpeg(noise(16, 16), progressive=True, subsampling=1)
    # A 633-byte JPEG whose header claims 16000 x 16000 (256 M pixels, over the limit): libjpeg
    # used to "decode" it into 768 MB of padding.
    cases["jpeg_claims_16000x16000.jpg"] = with_jpeg_size(baseline, 16000, 16000)[:633]
    # The progressive variant (2.4 GB and 6 s before): whole-image coefficient buffers.
    cases["jpeg_progressive_claims_16000x16000.jpg"] = with_jpeg_size(progressive, 16000, 16000)[:521]
    # Within the pixel limit (100 M pixels) but with 600 bytes of data: the missing data is an error.
    cases["jpeg_claims_10000x10000.jpg"] = with_jpeg_size(baseline, 10000, 10000)[:600]
    cases["jpeg_progressive_claims_10000x10000.jpg"] = with_jpeg_size(progressive, 10000, 10000)[:521]
    # A real 64 x 64 photo-like JPEG cut in the middle of its scan data (passed as an image before).
    whole = jpeg(noise(64, 64))
    cases["jpeg_truncated.jpg"] = whole[: len(whole) // 2]
    cases["jpeg_whole_64x64.jpg"] = whole  # HostileInputTests cuts it at every byte
    whole_progressive = jpeg(noise(64, 64), progressive=True)
    cases["jpeg_progressive_truncated.jpg"] = whole_progressive[: len(whole_progressive) // 2]
    # A complete, valid 20000 x 20000 PNG (400 M pixels, 1.2 GB as RGB) in ~50 KB.
    cases["png_bomb_20000x20000.png"] = png_bomb(20000, 20000)
    # BMPs whose headers lie: more pixels than the limit, and a size the file cannot hold.
    cases["bmp_claims_30000x30000.bmp"] = bmp_header(30000, 30000, 64)
    cases["bmp_claims_10000x10000.bmp"] = bmp_header(10000, 10000, 64)
    for name, data in cases.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
        print(f"{name}: {len(data)} bytes")


if __name__ == "__main__":
    main()
