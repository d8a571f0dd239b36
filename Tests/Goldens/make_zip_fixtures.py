"""Zip archives for the ZipArchive tests, written by Python's zipfile: one stored and one deflated
entry, appended after 1000 bytes of other data (as a .tflite file carries its associated files), and
a copy whose deflated data is corrupted.

    python Tests/Goldens/make_zip_fixtures.py   # → Tests/TasksTests/Fixtures/zip/
"""
import io
import zipfile
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "TasksTests" / "Fixtures" / "zip"
LABELS = "".join(f"label number {i}\n" for i in range(200))  # compressible text
NOTE = "stored entry\n"


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr(zipfile.ZipInfo("note.txt", date_time=(2026, 1, 1, 0, 0, 0)), NOTE, compress_type=zipfile.ZIP_STORED)
        z.writestr(zipfile.ZipInfo("labels.txt", date_time=(2026, 1, 1, 0, 0, 0)), LABELS, compress_type=zipfile.ZIP_DEFLATED)
    archive = bytes(range(256)) * 3 + bytes(232) + buffer.getvalue()  # 1000 bytes of "model" first
    (OUT / "appended.zip").write_bytes(archive)
    # Corrupt the deflated stream: flip bytes in the middle of labels.txt's data.
    start = archive.index(b"labels.txt") + len("labels.txt")
    corrupt = bytearray(archive)
    for k in range(start + 20, start + 40):
        corrupt[k] ^= 0xFF
    (OUT / "corrupt_deflate.zip").write_bytes(bytes(corrupt))
    (OUT / "labels.txt").write_text(LABELS)


if __name__ == "__main__":
    main()
