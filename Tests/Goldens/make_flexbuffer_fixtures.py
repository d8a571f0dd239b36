#!/usr/bin/env python3
"""Generates the FlexBuffers reader fixtures for Tests/EngineTests/FlexBuffersTests.swift.

Run from the repository root:

    /work/venv/bin/python Tests/Goldens/make_flexbuffer_fixtures.py

Output (rewritten on every run): Tests/EngineTests/Fixtures/flexbuffers/cases.json

    {"origin": {...}, "valid": [{"name", "hex", "rendering"}], "malformed": [{"name", "hex", "why"}]}

Valid blobs are written by the `flatbuffers.flexbuffers` Builder (the Python
implementation of the format, independent of ours) and rendered by walking
them with its reader into a canonical text; the Swift test walks the same bytes
with Engine's reader, renders them the same way and compares the strings.
Malformed blobs are valid blobs with bytes patched or cut off, or hand-made
byte strings; the Swift reader must throw on each (and never trap).

Canonical rendering (both sides must agree exactly):
    null                       NULL
    int(-5) uint(7)            INT / UINT, decimal
    indirect_int(-5) ...       the type name in lower snake case, as Python's Type enum
    float(3ff8000000000000)    FLOAT / INDIRECT_FLOAT: bit pattern of the value widened to a double
    bool(true)
    string(68 69) key(6869)    UTF-8 bytes as hex
    blob(00ff)
    vector[...], vector_int[...], vector_float3[...]   elements comma-separated
    map{key(..):value,...}     in stored (sorted) order
"""

from __future__ import annotations

import json
import struct
import sys
from importlib import metadata
from pathlib import Path

from flatbuffers import flexbuffers as fx

REPO_ROOT = Path(__file__).resolve().parents[2]
OUT = REPO_ROOT / "Tests" / "EngineTests" / "Fixtures" / "flexbuffers" / "cases.json"
T = fx.Type


# ---------------------------------------------------------------------------
# Canonical rendering with the Python reader
# ---------------------------------------------------------------------------


def render(ref: "fx.Ref") -> str:
    t = ref._type
    name = t.name.lower()
    if t is T.NULL:
        return "null"
    if t in (T.INT, T.INDIRECT_INT, T.UINT, T.INDIRECT_UINT):
        return f"{name}({ref.AsInt})"
    if t in (T.FLOAT, T.INDIRECT_FLOAT):
        return f"{name}({struct.pack('>d', ref.AsFloat).hex()})"
    if t is T.BOOL:
        return f"bool({'true' if ref.AsBool else 'false'})"
    if t is T.STRING:
        return f"string({ref.AsStringBytes.hex()})"
    if t is T.KEY:
        return f"key({bytes(ref.AsKeyBytes).hex()})"
    if t is T.BLOB:
        return f"blob({bytes(ref.AsBlob).hex()})"
    if t is T.MAP:
        m = ref.AsMap
        return "map{" + ",".join(f"key({bytes(k.AsKeyBytes).hex()}):{render(v)}"
                                 for k, v in zip(m.Keys, m.Values)) + "}"
    if t is T.VECTOR:
        return "vector[" + ",".join(render(e) for e in ref.AsVector) + "]"
    if T.IsTypedVector(t):
        return f"{name}[" + ",".join(render(e) for e in ref.AsTypedVector) + "]"
    if T.IsFixedTypedVector(t):
        return f"{name}[" + ",".join(render(e) for e in ref.AsFixedTypedVector) + "]"
    raise ValueError(f"cannot render {t}")


def root_render(blob: bytes) -> str:
    return render(fx.GetRoot(blob))


# ---------------------------------------------------------------------------
# Valid blobs
# ---------------------------------------------------------------------------


def built(fill) -> bytes:
    b = fx.Builder()
    fill(b)
    return bytes(b.Finish())


def detection_options(b: "fx.Builder") -> None:
    """The options map of TFLite_Detection_PostProcess, as the converter writes it."""
    with b.Map():
        b.Int("max_detections", 10)
        b.Int("max_classes_per_detection", 1)
        b.Int("detections_per_class", 100)
        b.Bool("use_regular_nms", False)
        b.Float("nms_score_threshold", 1e-8)
        b.Float("nms_iou_threshold", 0.6)
        b.Int("num_classes", 90)
        b.Float("y_scale", 10.0)
        b.Float("x_scale", 10.0)
        b.Float("h_scale", 5.0)
        b.Float("w_scale", 5.0)
        b.Bool("_output_quantized", True)


def valid_cases() -> list[tuple[str, bytes]]:
    cases = [
        ("null", fx.Dumps(None)),
        ("int_1_byte", fx.Dumps(-3)),
        ("int_2_bytes", fx.Dumps(-300)),
        ("int_4_bytes", fx.Dumps(2**31 - 1)),
        ("int_8_bytes_min", fx.Dumps(-(2**63))),
        ("uint_1_byte", built(lambda b: b.UInt(200))),
        ("uint_2_bytes", built(lambda b: b.UInt(65535))),
        ("uint_4_bytes", built(lambda b: b.UInt(2**32 - 1))),
        ("uint_8_bytes_max", built(lambda b: b.UInt(2**64 - 1))),
        ("float_32", fx.Dumps(1.5)),
        ("float_64", fx.Dumps(0.1)),
        ("float_negative_zero", built(lambda b: b.Float(-0.0, 4))),
        ("float_infinity", built(lambda b: b.Float(float("inf"), 8))),
        ("bool_true", fx.Dumps(True)),
        ("bool_false", fx.Dumps(False)),
        ("string_ascii", fx.Dumps("hello")),
        ("string_utf8", fx.Dumps("h\u00e9llo \u2713 \U0001F600")),
        ("string_empty", fx.Dumps("")),
        ("string_long_16bit_offsets", fx.Dumps("x" * 300)),
        ("blob", built(lambda b: b.Blob(bytes(range(256)) + b"\x00\xff"))),
        ("indirect_int", built(lambda b: b.IndirectInt(-123456789))),
        ("indirect_uint", built(lambda b: b.IndirectUInt(2**40))),
        ("indirect_float_32", built(lambda b: b.IndirectFloat(2.5, 4))),
        ("indirect_float_64", built(lambda b: b.IndirectFloat(1e-300))),
        ("vector_untyped_mixed", fx.Dumps([1, "a", 2.5, None, True, [1, 2], {"k": -1}])),
        ("vector_empty", fx.Dumps([])),
        ("vector_nested", fx.Dumps([[[]], [[1], [2, [3.25]]]])),
        ("vector_wide_elements", fx.Dumps([1, 2**40, -7])),
        ("typed_vector_int8", built(lambda b: b.TypedVectorFromElements([1, -2, 3], T.INT))),
        ("typed_vector_int64", built(lambda b: b.TypedVectorFromElements([1, -(2**50), 3], T.INT))),
        ("typed_vector_uint16", built(lambda b: b.TypedVectorFromElements([1, 60000], T.UINT))),
        ("typed_vector_float32", built(lambda b: b.TypedVectorFromElements([0.5, -1.25, 3.0], T.FLOAT))),
        ("typed_vector_float64", built(lambda b: b.TypedVectorFromElements([0.1, 0.2], T.FLOAT))),
        ("typed_vector_bool", built(lambda b: b.TypedVectorFromElements([True, False, True], T.BOOL))),
        ("typed_vector_key", built(lambda b: b.TypedVectorFromElements(["b", "a"], T.KEY))),
        ("fixed_vector_int2", built(lambda b: b.FixedTypedVectorFromElements([7, -8], T.INT))),
        ("fixed_vector_uint3", built(lambda b: b.FixedTypedVectorFromElements([1, 2, 70000], T.UINT))),
        ("fixed_vector_float4", built(lambda b: b.FixedTypedVectorFromElements([1.0, 2.0, 3.5, -4.0], T.FLOAT))),
        ("map_empty", fx.Dumps({})),
        ("map_simple", fx.Dumps({"b": 2, "a": 1, "c": "three"})),
        ("map_nested", fx.Dumps({"outer": {"inner": [1, 2, {"deep": True}]}, "z": None})),
        ("map_keys_sharing_prefixes", fx.Dumps({"a": 1, "ab": 2, "abc": 3, "b": 4, "B": 5, "": 6})),
        ("map_300_keys", fx.Dumps({f"key{i:03d}": i for i in range(300)})),
        ("map_wide_values", fx.Dumps({"small": 1, "big": 2**62, "neg": -(2**62)})),
        ("detection_postprocess_options", built(detection_options)),
    ]
    return cases


# ---------------------------------------------------------------------------
# Malformed blobs
# ---------------------------------------------------------------------------


def patched(blob: bytes, at: int, value: int) -> bytes:
    out = bytearray(blob)
    out[at] = value
    return bytes(out)


def malformed_cases() -> list[tuple[str, bytes, str]]:
    options = built(detection_options)
    simple_map = fx.Dumps({"a": 1, "b": 2})
    vector = fx.Dumps([1, 2, 3])
    string = fx.Dumps("hello")
    T_KEY, T_FLOAT, T_STRING = int(T.KEY), int(T.FLOAT), int(T.STRING)

    # Layout of fx.Dumps({"a": 1, "b": 2}) (all widths 1):
    #   0 'a' 0  2 'b' 0  4 keys: [2] 2 4 -> 3, 5 (distances) ...
    # Rather than hard-coding positions, locate fields from the end of the buffer.
    root_slot = len(simple_map) - 3          # 1-byte root slot: distance back to the values
    values = root_slot - simple_map[root_slot]
    keys_slot = values - 3                    # distance back to the keys vector
    count_at = values - 1

    vec_root = len(vector) - 3
    vec_data = vec_root - vector[vec_root]
    str_root = len(string) - 3
    str_data = str_root - string[str_root]

    return [
        ("empty", b"", "shorter than the 3-byte trailer"),
        ("two_bytes", b"\x04\x01", "shorter than the 3-byte trailer"),
        ("root_width_3", patched(options, len(options) - 1, 3), "root width is not 1, 2, 4 or 8"),
        ("root_width_0", patched(options, len(options) - 1, 0), "root width is not 1, 2, 4 or 8"),
        ("root_width_larger_than_buffer", b"\x00\x04\x08", "8-byte root slot in a 3-byte buffer"),
        ("truncated_last_byte", options[:-1], "trailer now reads a garbage width/type"),
        ("truncated_front_half", options[len(options) // 2:], "offsets point before the start"),
        ("truncated_front_one_byte", options[1:], "first key loses its first byte; offsets shift"),
        ("unknown_type_code", patched(fx.Dumps(1), len(fx.Dumps(1)) - 2, 27 << 2), "type code 27 does not exist"),
        ("root_offset_out_of_range", patched(simple_map, root_slot, 0xFF), "root distance 255 > position"),
        ("map_count_huge", patched(simple_map, count_at, 0xFF), "map claims 255 entries"),
        ("map_keys_offset_out_of_range", patched(simple_map, keys_slot, 0xFF), "keys distance out of range"),
        ("map_key_width_invalid", patched(simple_map, values - 2, 3), "key width 3"),
        ("vector_count_huge", patched(vector, vec_data - 1, 0xFF), "vector claims 255 elements"),
        ("vector_element_type_invalid", patched(vector, vec_data + 3, 30 << 2), "element type code 30"),
        ("string_length_huge", patched(string, str_data - 1, 0xFF), "string claims 255 bytes"),
        ("string_invalid_utf8", patched(string, str_data, 0xFF), "0xFF is never valid UTF-8"),
        # 'abc', then a 1-byte slot holding distance 3 (-> offset 0), type KEY, width 1: no NUL anywhere.
        ("key_without_terminator", b"abc\x03" + bytes([T_KEY << 2, 1]), "key runs to the end"),
        # A 2-byte float slot (half floats are not supported).
        ("float_2_bytes", b"\x00\x3c" + bytes([T_FLOAT << 2, 2]), "float of 2 bytes"),
        # A string whose size field (width 1) sits before the start of the buffer.
        ("string_size_before_start", b"\x00" + bytes([1, T_STRING << 2, 1]), "size prefix at offset -1"),
    ]


# ---------------------------------------------------------------------------


def main() -> None:
    valid = []
    for name, blob in valid_cases():
        valid.append({"name": name, "hex": blob.hex(), "rendering": root_render(blob)})
    malformed = [{"name": n, "hex": b.hex(), "why": why} for n, b, why in malformed_cases()]
    names = [c["name"] for c in valid + malformed]
    if len(names) != len(set(names)):
        raise SystemExit("duplicate case names")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    doc = {
        "origin": {
            "generator": "Tests/Goldens/make_flexbuffer_fixtures.py",
            "writer": f"flatbuffers {metadata.version('flatbuffers')} (Python flexbuffers.Builder)",
        },
        "valid": valid,
        "malformed": malformed,
    }
    with open(OUT, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(f"{len(valid)} valid and {len(malformed)} malformed blobs written to {OUT.relative_to(REPO_ROOT)}"
          f" ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    sys.exit(main())
