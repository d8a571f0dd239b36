#!/usr/bin/env python3
"""Generates the sparse-weight golden fixtures (schema `sparsity`, DENSIFY) for the engine tests.

Run from the repository root:

    /work/venv/bin/python Tests/Goldens/make_sparse_goldens.py

Output (deleted and rewritten on every run):

    Tests/EngineTests/Fixtures/sparse/<case>/model.tflite, input_<i>.npy, output_<i>.npy
    Tests/EngineTests/Fixtures/sparse/manifest.json
    Tests/EngineTests/Fixtures/sparse_errors/<case>.tflite
    Tests/EngineTests/Fixtures/sparse_errors/manifest.json

Golden cases (outputs from LiteRT with the BUILTIN_REF op resolver):

- converter-made (`optimizations=[EXPERIMENTAL_SPARSITY]` on pruned weights): random sparsity
  becomes DENSIFY (CSR, uint16 segments, uint8 indices) before FULLY_CONNECTED or CONV_2D;
  1x4-block sparsity stays a sparse weight read by float FULLY_CONNECTED itself; with
  full-integer quantization added, an int8 DENSIFY before FULLY_CONNECTED.
- hand-written: the DENSIFY input of a converter-made model re-compressed by this script with
  the schema object API (int32, uint16 or uint8 index vectors, 2x2 blocks, a column-major
  traversal order, two CSR levels in a rank-4 CONV_2D filter).

Float tolerance 1e-5 relative to max(1, max|ref|) (TFLite's sparse FULLY_CONNECTED sums in
another order than a dense one); int8 cases are exact.

Error cases: copies of a hand-written model with one field broken (a segment past the
indices, an index outside its dimension, too few values, a traversal order that is not a
permutation, decreasing segments, a block size that does not divide its dimension, a
DENSE size that disagrees with the shape, and a valid one whose dense form is 2 GiB in a
file of kilobytes). The engine must reject each when loading with
`ModelError.invalidTensor` whose message contains the manifest's `expect` text. LiteRT is
not run on them.
"""

from __future__ import annotations

import sys
import zlib
from pathlib import Path

sys.dont_write_bytecode = True
sys.path.insert(0, str(Path(__file__).resolve().parent))
import golden_io as G  # noqa: E402

import json  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from ai_edge_litert import schema_py_generated as schema  # noqa: E402

GENERATOR = "Tests/Goldens/make_sparse_goldens.py"
OUT_DIR = G.FIXTURES_ROOT / "sparse"
ERR_DIR = G.FIXTURES_ROOT / "sparse_errors"
TOLERANCE = 1e-5


def rng_for(name, salt=""):
    return np.random.default_rng(zlib.crc32(f"{name}/{salt}".encode()))


def convert(fn, shapes, name, int8=False):
    specs = [tf.TensorSpec(s, tf.float32, name=f"in_{i}") for i, s in enumerate(shapes)]
    module = tf.Module()
    module.f = tf.function(fn, input_signature=specs, autograph=False)
    conv = tf.lite.TFLiteConverter.from_concrete_functions([module.f.get_concrete_function()], module)
    conv.optimizations = [tf.lite.Optimize.EXPERIMENTAL_SPARSITY]
    if int8:
        conv.optimizations = [tf.lite.Optimize.DEFAULT, tf.lite.Optimize.EXPERIMENTAL_SPARSITY]
        rng = rng_for(name, "calibration")
        conv.representative_dataset = lambda: ([rng.uniform(-1, 1, s).astype(np.float32) for s in shapes] for _ in range(8))
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        conv.inference_input_type = tf.int8
        conv.inference_output_type = tf.int8
    return conv.convert()


def sparse_tensors(model_bytes):
    model = G.parse_model(model_bytes)
    return [t for t in model.subgraphs[0].tensors if t.sparsity is not None]


def describe_sparsity(t):
    s = t.sparsity
    names = {1: "int32", 2: "uint16", 3: "uint8"}
    levels = []
    for d in s.dimMetadata:
        if d.format == schema.DimensionType.DENSE:
            levels.append(f"DENSE {d.denseSize}")
        else:
            levels.append(f"CSR({names.get(d.arraySegmentsType)}/{names.get(d.arrayIndicesType)})")
    return (f"traversal {[int(x) for x in s.traversalOrder]}, "
            f"block_map {[int(x) for x in s.blockMap] if s.blockMap is not None else []}, "
            f"levels [{', '.join(levels)}]")


# ---------------------------------------------------------------------------
# Writing sparsity by hand
# ---------------------------------------------------------------------------


def index_vector(values, kind):
    cls = {"int32": schema.Int32VectorT, "uint16": schema.Uint16VectorT, "uint8": schema.Uint8VectorT}[kind]
    code = {"int32": schema.SparseIndexVector.Int32Vector, "uint16": schema.SparseIndexVector.Uint16Vector,
            "uint8": schema.SparseIndexVector.Uint8Vector}[kind]
    v = cls()
    v.values = [int(x) for x in values]
    return code, v


def compress(dense, traversal, block_map, block_sizes, formats, kind):
    """Compresses `dense` into (values, dim metadata) like TFLite's FormatConverter."""
    n = dense.ndim
    expanded = [dense.shape[d] // (block_sizes[block_map.index(d)] if d in block_map else 1) for d in range(n)]
    expanded += list(block_sizes)

    def element(coord):
        idx = []
        for d in range(n):
            i = coord[traversal.index(d)]
            if d in block_map:
                j = block_map.index(d)
                i = i * block_sizes[j] + coord[traversal.index(n + j)]
            idx.append(i)
        return dense[tuple(idx)]

    def subtree_nonzero(prefix):
        level = len(prefix)
        if level == len(traversal):
            return element(prefix) != 0
        return any(subtree_nonzero(prefix + [i]) for i in range(expanded[traversal[level]]))

    levels = [{"segments": [0], "indices": []} for _ in traversal]
    values = []
    # Breadth-first per level: positions of each level in order.
    positions = [[]]
    for level, d in enumerate(traversal):
        nxt = []
        for prefix in positions:
            if formats[level] == "dense":
                nxt.extend(prefix + [i] for i in range(expanded[d]))
            else:
                for i in range(expanded[d]):
                    if subtree_nonzero(prefix + [i]):
                        levels[level]["indices"].append(i)
                        nxt.append(prefix + [i])
                levels[level]["segments"].append(len(levels[level]["indices"]))
        positions = nxt
    values = [element(p) for p in positions]
    metadata = []
    for level, d in enumerate(traversal):
        m = schema.DimensionMetadataT()
        if formats[level] == "dense":
            m.format = schema.DimensionType.DENSE
            m.denseSize = expanded[d]
        else:
            m.format = schema.DimensionType.SPARSE_CSR
            m.arraySegmentsType, m.arraySegments = index_vector(levels[level]["segments"], kind)
            m.arrayIndicesType, m.arrayIndices = index_vector(levels[level]["indices"], kind)
        metadata.append(m)
    return np.array(values, dtype=dense.dtype), metadata


def make_sparse(model_bytes, dense, traversal, block_map, block_sizes, formats, kind):
    """Rewrites the converter's DENSIFY input constant (random-sparsity model) with our own
    compression of `dense` (same shape)."""
    model = G.parse_model(model_bytes)
    sg = model.subgraphs[0]
    (t,) = [t for t in sg.tensors if t.sparsity is not None]
    assert list(t.shape) == list(dense.shape), (t.shape, dense.shape)
    values, metadata = compress(dense, traversal, block_map, block_sizes, formats, kind)
    sp = schema.SparsityParametersT()
    sp.traversalOrder = list(traversal)
    sp.blockMap = list(block_map)
    sp.dimMetadata = metadata
    t.sparsity = sp
    model.buffers[t.buffer].data = np.frombuffer(values.astype("<f4").tobytes(), dtype=np.uint8)
    return G.serialize_model(model)


# ---------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------


def pruned(rng, shape, density):
    w = rng.uniform(-1, 1, shape).astype(np.float32)
    return w * (rng.random(shape) < density)


def block_pruned(rng, shape, block, density):
    w = rng.uniform(-1, 1, shape).astype(np.float32)
    keep = rng.random((shape[0] // block[0], shape[1] // block[1])) < density
    return w * np.kron(keep, np.ones(block, np.float32))


def fc_model(w, name, int8=False):
    wt = tf.constant(w)
    return convert(lambda x: tf.matmul(x, wt, transpose_b=True) + 0.25, [(2, w.shape[1])], name, int8)


def conv_model(w, name):
    wt = tf.constant(w)
    return convert(lambda x: tf.nn.conv2d(x, wt, 1, "SAME"), [(1, 5, 5, w.shape[2])], name)


def densify_base(shape, name):
    """A converter-made DENSIFY model whose sparse constant has `shape`: FULLY_CONNECTED weights
    for rank 2, a CONV_2D filter ([O, kH, kW, I] in TFLite) for rank 4. Returns the model and the
    dense weights as TFLite stores them."""
    rng = rng_for(name, "weights")
    if len(shape) == 2:
        w = pruned(rng, shape, 0.15)
        return fc_model(w, name), w, ["DENSIFY", "FULLY_CONNECTED"]
    o, kh, kw, i = shape
    w = pruned(rng, (kh, kw, i, o), 0.15)
    return conv_model(w, name), np.ascontiguousarray(w.transpose(3, 0, 1, 2)), ["DENSIFY", "CONV_2D"]


CASES = []


def case(name, description):
    def register(fn):
        CASES.append((name, description, fn))
        return fn
    return register


@case("fc_random_csr_32x64", "Random 80%-pruned FULLY_CONNECTED weight: converter's DENSIFY (CSR) -> FULLY_CONNECTED.")
def _():
    return fc_model(pruned(rng_for("fc_random", "w"), (32, 64), 0.2), "fc_random"), ["DENSIFY", "FULLY_CONNECTED"]


@case("fc_block1x4_32x64", "1x4-block-pruned FULLY_CONNECTED weight: FULLY_CONNECTED reads the sparse weight itself.")
def _():
    return fc_model(block_pruned(rng_for("fc_block", "w"), (32, 64), (1, 4), 0.25), "fc_block"), ["FULLY_CONNECTED"]


@case("fc_block1x4_int8_32x64", "1x4-block-pruned weight with full-integer quantization: int8 DENSIFY -> FULLY_CONNECTED.")
def _():
    return (fc_model(block_pruned(rng_for("fc_block_int8", "w"), (32, 64), (1, 4), 0.25), "fc_block_int8", int8=True),
            ["DENSIFY", "FULLY_CONNECTED"])


@case("conv_random_csr_3x3x16x16", "Random-pruned CONV_2D filter: DENSIFY -> CONV_2D.")
def _():
    return conv_model(pruned(rng_for("conv_random", "w"), (3, 3, 16, 16), 0.2), "conv_random"), ["DENSIFY", "CONV_2D"]


def add_handwritten(name, description, shape, traversal, block_map, block_sizes, formats, kind):
    @case(name, description)
    def _():
        model_bytes, w, ops = densify_base(shape, name)
        rewritten = make_sparse(model_bytes, w, traversal, block_map, block_sizes, formats, kind)
        # The rewrite stores the same weights: both models must compute the same outputs.
        interp = G.make_interpreter(model_bytes)
        x = [rng_for(name, "check").uniform(-1, 1, d["shape"]).astype(np.float32) for d in interp.get_input_details()]
        a, _ = G.run_model(model_bytes, x)
        b, _ = G.run_model(rewritten, x)
        if not all(np.allclose(p, q, rtol=0, atol=1e-5) for p, q in zip(a, b)):
            raise AssertionError(f"{name}: the re-compressed weights change the outputs")
        return rewritten, ops


add_handwritten("densify_csr_int32_24x40", "Hand-written CSR rows (int32 index vectors) of FULLY_CONNECTED weights.",
                (24, 40), [0, 1], [], [], ["dense", "csr"], "int32")
add_handwritten("densify_block2x2_uint16_24x40", "Hand-written 2x2 blocks: block rows dense, block columns CSR "
                "(uint16), blocks dense.", (24, 40), [0, 1, 2, 3], [0, 1], [2, 2], ["dense", "csr", "dense", "dense"],
                "uint16")
add_handwritten("densify_colmajor_csr_uint8_24x40", "Hand-written traversal order [1, 0] (columns outermost), "
                "CSR rows (uint8).", (24, 40), [1, 0], [], [], ["dense", "csr"], "uint8")
add_handwritten("densify_rank4_two_csr_16x3x3x16", "Hand-written CONV_2D filter: two CSR levels (int32) and a "
                "1x2 block on the input channels.", (16, 3, 3, 16), [0, 1, 2, 3, 4], [3], [2],
                ["dense", "csr", "csr", "dense", "dense"], "int32")


# ---------------------------------------------------------------------------
# Malformed sparse models
# ---------------------------------------------------------------------------


def break_model(model_bytes, edit):
    model = G.parse_model(model_bytes)
    (t,) = [t for t in model.subgraphs[0].tensors if t.sparsity is not None]
    edit(t, model)
    return G.serialize_model(model)


def csr_level(t):
    return [m for m in t.sparsity.dimMetadata if m.format == schema.DimensionType.SPARSE_CSR][0]


ERRORS = [
    ("segment_past_indices", "array_segments end at",
     lambda t, m: setattr(csr_level(t).arraySegments, "values", list(csr_level(t).arraySegments.values[:-1]) + [10_000])),
    ("index_out_of_range", "outside its dimension",
     lambda t, m: setattr(csr_level(t).arrayIndices, "values", [60_000] + list(csr_level(t).arrayIndices.values[1:]))),
    ("too_few_values", "the buffer holds",
     lambda t, m: setattr(m.buffers[t.buffer], "data", m.buffers[t.buffer].data[:-4])),
    ("traversal_not_permutation", "is not a permutation",
     lambda t, m: setattr(t.sparsity, "traversalOrder", [0, 0])),
    ("decreasing_segments", "decrease at entry",
     lambda t, m: setattr(csr_level(t).arraySegments, "values",
                          [0, 5] + [1] + list(csr_level(t).arraySegments.values[3:]))),
    ("dense_size_mismatch", "is DENSE of size",
     lambda t, m: setattr(t.sparsity.dimMetadata[0], "denseSize", t.sparsity.dimMetadata[0].denseSize + 1)),
    ("missing_levels", "dim_metadata has",
     lambda t, m: setattr(t.sparsity, "dimMetadata", t.sparsity.dimMetadata[:1])),
    # Valid parameters whose dense form is 2 GiB of zeros: the columns (a CSR level, whose
    # indices stay in range) widened 2^19 times, in a file of a few kilobytes.
    ("dense_form_past_the_budget", "may densify to",
     lambda t, m: setattr(t, "shape", [t.shape[0], t.shape[1] << 19])),
]


def main():
    warnings.filterwarnings("ignore", message=".*scheduled for deletion.*")
    G.reset_dir(OUT_DIR)
    G.reset_dir(ERR_DIR)
    entries = []
    base_for_errors = None
    for name, description, build in CASES:
        model_bytes, expect_ops = build()
        sparse = sparse_tensors(model_bytes)
        if not sparse:
            raise AssertionError(f"{name}: no sparse tensor in the converted model")
        interp = G.make_interpreter(model_bytes)
        details = interp.get_input_details()
        rng = rng_for(name, "inputs")
        inputs = []
        for d in details:
            x = rng.uniform(-1, 1, d["shape"]).astype(np.float32)
            if d["dtype"] != np.float32:
                scale, zp = d["quantization"]
                x = np.clip(np.round(x / scale) + zp, -128, 127).astype(d["dtype"])
            inputs.append(x)
        outputs, ops = G.run_model(model_bytes, inputs)
        if G.unique_in_order(ops) != expect_ops:
            raise AssertionError(f"{name}: ops {ops}, expected {expect_ops}")
        again, _ = G.run_model(model_bytes, inputs)
        if any(not np.array_equal(a, b) for a, b in zip(outputs, again)):
            raise AssertionError(f"{name}: reference run is not deterministic")
        if any(o.size > 1 and np.all(o == o.flat[0]) for o in outputs):
            raise AssertionError(f"{name}: constant output")
        G.write_case(OUT_DIR, name, model_bytes, inputs, outputs)
        exact = all(o.dtype != np.float32 for o in outputs)
        entries.append({"name": name, "ops": G.unique_in_order(ops), "tolerance": 0 if exact else TOLERANCE,
                        "resolver": "BUILTIN_REF", "description": description,
                        "sparsity": [describe_sparsity(t) for t in sparse]})
        print(f"{name:40s} {len(model_bytes):6d} B ops={ops} {entries[-1]['sparsity']}", flush=True)
        if name == "densify_csr_int32_24x40":
            base_for_errors = model_bytes
    G.write_manifest(OUT_DIR, G.origin(GENERATOR), entries)

    errors = []
    for name, expect, edit in ERRORS:
        (ERR_DIR / f"{name}.tflite").write_bytes(break_model(base_for_errors, edit))
        errors.append({"name": name, "model": f"{name}.tflite", "expect": expect,
                       "description": f"densify_csr_int32_24x40 with one field broken: {name.replace('_', ' ')}."})
    with open(ERR_DIR / "manifest.json", "w") as f:
        json.dump({"origin": G.origin(GENERATOR), "cases": errors}, f, indent=1)
        f.write("\n")
    print(f"{len(entries)} golden cases, {len(errors)} malformed models; "
          f"{G.dir_size(OUT_DIR) + G.dir_size(ERR_DIR)} bytes")


if __name__ == "__main__":
    main()
