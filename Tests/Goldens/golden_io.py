"""Shared helpers for the SwiftLite golden-fixture generators.

Everything here is deterministic: no randomness lives in this module, callers
pass seeded numpy Generators (seeded per case with `seed_for`).

Ground truth is LiteRT (ai-edge-litert) with the BUILTIN_REF op resolver, i.e.
the TFLite reference kernels, with no delegates.
"""

from __future__ import annotations

import json
import os
import shutil
import zlib
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Callable

# Quieter TensorFlow; must be set before TensorFlow is imported anywhere.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np
from ai_edge_litert import schema_py_generated as schema
from ai_edge_litert.interpreter import Interpreter, OpResolverType

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES_ROOT = REPO_ROOT / "Tests" / "EngineTests" / "Fixtures"

# --------------------------------------------------------------------------
# Versions
# --------------------------------------------------------------------------


def package_version(name: str) -> str:
    return metadata.version(name)


def origin(generator: str, resolver: str = "BUILTIN_REF") -> dict:
    return {
        "generator": generator,
        "runtime": f"ai-edge-litert {package_version('ai-edge-litert')}",
        "tensorflow": package_version("tensorflow"),
        "numpy": np.__version__,
        "resolver": resolver,
    }


# --------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------


def seed_for(name: str, salt: str | None = None) -> int:
    """Stable per-case seed: the CRC-32 of `name`, or of `name/salt` when a salt is given (one
    seed per purpose: "weights", "inputs", "calibration"). Adding or removing cases never changes
    the values of the others."""
    return zlib.crc32((name if salt is None else f"{name}/{salt}").encode())


@dataclass
class Case:
    """What every single-model case of a generator has; each generator subclasses it with its
    own options (tolerances, variants, rewrites)."""
    # The case's folder name under the suite.
    name: str
    # One line for the manifest: what the case covers and why.
    description: str
    # build(rng) -> (tf callable taking one tensor per input, [input specs][, trackable owning
    # captured variables]). Weights must be drawn from rng so that they are seeded per case.
    build: Callable
    # Operators in execution order, exactly as in the converted model.
    expect_ops: list


class Cases(list):
    """A generator's cases in order; `add` refuses a name used twice (folders would collide)."""

    def add(self, case) -> None:
        if any(c.name == case.name for c in self):
            raise ValueError(f"duplicate case {case.name}")
        self.append(case)


# --------------------------------------------------------------------------
# Running models
# --------------------------------------------------------------------------

_RESOLVERS = {
    "BUILTIN_REF": OpResolverType.BUILTIN_REF,
    # Optimized kernels without the default XNNPACK delegate; only used to
    # estimate how much a different (but correct) float implementation drifts.
    "BUILTIN_WITHOUT_DEFAULT_DELEGATES": OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
}


def make_interpreter(model_bytes: bytes, resolver: str = "BUILTIN_REF") -> Interpreter:
    interp = Interpreter(
        model_content=model_bytes,
        experimental_op_resolver_type=_RESOLVERS[resolver],
        num_threads=1,
    )
    interp.allocate_tensors()
    return interp


def input_details(model_bytes: bytes) -> list[dict]:
    return make_interpreter(model_bytes).get_input_details()


def run_model(model_bytes: bytes, inputs: list[np.ndarray], resolver: str = "BUILTIN_REF"):
    """Runs the model; returns (outputs in subgraph output order, op names)."""
    interp = make_interpreter(model_bytes, resolver)
    in_details = interp.get_input_details()
    if len(in_details) != len(inputs):
        raise ValueError(f"model has {len(in_details)} inputs, got {len(inputs)}")
    for det, arr in zip(in_details, inputs):
        if tuple(det["shape"]) != tuple(arr.shape) or det["dtype"] != arr.dtype:
            raise ValueError(f"input {det['name']}: model wants {det['shape']} {det['dtype']}, "
                             f"got {arr.shape} {arr.dtype}")
        interp.set_tensor(det["index"], arr)
    interp.invoke()
    outputs = [np.array(interp.get_tensor(d["index"])) for d in interp.get_output_details()]
    ops = [d["op_name"] for d in interp._get_ops_details()]
    return outputs, ops


def unique_in_order(items):
    seen, out = set(), []
    for it in items:
        if it not in seen:
            seen.add(it)
            out.append(it)
    return out


# --------------------------------------------------------------------------
# Reading the flatbuffer (to verify options the converter chose)
# --------------------------------------------------------------------------

_OP_NAMES = {v: k for k, v in vars(schema.BuiltinOperator).items() if not k.startswith("_")}
_TYPE_NAMES = {v: k for k, v in vars(schema.TensorType).items() if not k.startswith("_")}
_ACT_NAMES = {v: k for k, v in vars(schema.ActivationFunctionType).items() if not k.startswith("_")}
_PAD_NAMES = {v: k for k, v in vars(schema.Padding).items() if not k.startswith("_")}


def parse_model(model_bytes: bytes) -> "schema.ModelT":
    return schema.ModelT.InitFromPackedBuf(bytearray(model_bytes), 0)


def serialize_model(model: "schema.ModelT") -> bytes:
    import flatbuffers

    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def _op_code_name(model, op) -> str:
    code = model.operatorCodes[op.opcodeIndex]
    value = max(code.builtinCode, code.deprecatedBuiltinCode)
    return _OP_NAMES.get(value, f"UNKNOWN_{value}")


def describe_ops(model_bytes: bytes) -> list[dict]:
    """One dict per operator of subgraph 0: name, decoded options, operand info."""
    model = parse_model(model_bytes)
    sg = model.subgraphs[0]
    out = []
    for op in sg.operators:
        entry = {"op": _op_code_name(model, op), "inputs": [], "outputs": []}
        for key, idxs in (("inputs", op.inputs), ("outputs", op.outputs)):
            for t in (idxs if idxs is not None else []):
                if t < 0:
                    entry[key].append(None)
                    continue
                ten = sg.tensors[t]
                buf = model.buffers[ten.buffer]
                is_const = buf is not None and buf.data is not None and len(buf.data) > 0
                entry[key].append({
                    "shape": [int(s) for s in (ten.shape if ten.shape is not None else [])],
                    "type": _TYPE_NAMES.get(ten.type, str(ten.type)),
                    "const": bool(is_const or (buf is not None and buf.size and buf.size > 0)),
                })
        opts = {}
        if op.builtinOptions is not None:
            for k, v in vars(op.builtinOptions).items():
                if isinstance(v, (bool, int, float)) or v is None:
                    if k == "fusedActivationFunction":
                        v = _ACT_NAMES.get(v, v)
                    elif k == "padding":
                        v = _PAD_NAMES.get(v, v)
                    opts[k] = v
                elif isinstance(v, np.ndarray) or isinstance(v, list):
                    opts[k] = [int(x) for x in v]
        entry["options"] = opts
        out.append(entry)
    return out


def const_tensor_value(model_bytes: bytes, op_index: int, input_pos: int) -> np.ndarray | None:
    """Value of a constant input of an operator of subgraph 0 (None if not constant)."""
    model = parse_model(model_bytes)
    sg = model.subgraphs[0]
    t = sg.operators[op_index].inputs[input_pos]
    if t < 0:
        return None
    ten = sg.tensors[t]
    buf = model.buffers[ten.buffer]
    if buf is None or buf.data is None or len(buf.data) == 0:
        return None
    dtype = {schema.TensorType.FLOAT32: np.float32, schema.TensorType.INT32: np.int32,
             schema.TensorType.INT64: np.int64, schema.TensorType.FLOAT16: np.float16,
             schema.TensorType.INT8: np.int8}[ten.type]
    arr = np.frombuffer(bytes(bytearray(buf.data)), dtype=np.dtype(dtype).newbyteorder("<"))
    return arr.reshape([int(s) for s in ten.shape]) if ten.shape is not None else arr


# --------------------------------------------------------------------------
# Writing fixtures
# --------------------------------------------------------------------------


def save_npy(path: Path, arr: np.ndarray) -> None:
    """np.save in the array's own dtype, C order, little-endian, format v1.0."""
    arr = np.asarray(arr)
    if arr.dtype.byteorder == ">":
        arr = arr.astype(arr.dtype.newbyteorder("<"))
    # np.ascontiguousarray makes 0-d arrays 1-d; keep scalars (e.g. a full reduction) scalar.
    arr = np.ascontiguousarray(arr).reshape(arr.shape)
    with open(path, "wb") as f:
        np.lib.format.write_array(f, arr, version=(1, 0), allow_pickle=False)


def reset_dir(path: Path) -> None:
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)


def write_case(root: Path, name: str, model_bytes: bytes, inputs, outputs) -> None:
    case_dir = root / name
    if case_dir.exists():
        raise ValueError(f"duplicate case name {name}")
    case_dir.mkdir(parents=True)
    (case_dir / "model.tflite").write_bytes(model_bytes)
    for i, arr in enumerate(inputs):
        save_npy(case_dir / f"input_{i}.npy", arr)
    for i, arr in enumerate(outputs):
        save_npy(case_dir / f"output_{i}.npy", arr)


def write_manifest(root: Path, origin_dict: dict, cases: list[dict]) -> None:
    with open(root / "manifest.json", "w") as f:
        json.dump({"origin": origin_dict, "cases": cases}, f, indent=1)
        f.write("\n")


def dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
