#!/usr/bin/env python3
"""Small models with what SwiftLite cannot run, for `inspect` and `ModelSurvey` tests.

    /work/venv/bin/python Tests/Goldens/make_unsupported_models.py

Output (deleted and rewritten on every run): `Tests/EngineTests/Fixtures/unsupported/`

- `complex64_tensor.tflite`: |rfft(x)| of a float [1, 16] input, converted by the real TFLite
  converter: RFFT2D and COMPLEX_ABS operators around a COMPLEX64 tensor (LiteRT runs it).
- `unknown_custom_op.tflite`: x * 2 + 1 converted, then the ADD operator re-coded as the custom
  operator `MyUnknownOp` (no runtime knows it; LiteRT refuses it too).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import golden_io as G  # noqa: E402

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from ai_edge_litert import schema_py_generated as schema  # noqa: E402

OUT_DIR = G.FIXTURES_ROOT / "unsupported"


def convert(fn, spec) -> bytes:
    conv = tf.lite.TFLiteConverter.from_concrete_functions([fn.get_concrete_function(spec)])
    return conv.convert()


def complex_model() -> bytes:
    @tf.function
    def spectrum(x):
        return tf.abs(tf.signal.rfft(x))
    model = convert(spectrum, tf.TensorSpec([1, 16], tf.float32))
    out, _ = G.run_model(model, [np.linspace(-1, 1, 16, dtype=np.float32)[None]])  # LiteRT runs it
    assert out[0].shape == (1, 9), out[0].shape
    return model


def custom_model() -> bytes:
    @tf.function
    def affine(x):
        return x * 2.0 + 1.0
    model = G.parse_model(convert(affine, tf.TensorSpec([1, 4], tf.float32)))
    ops = model.subgraphs[0].operators
    add = next(o for o in ops if model.operatorCodes[o.opcodeIndex].builtinCode == schema.BuiltinOperator.ADD)
    code = schema.OperatorCodeT()
    code.builtinCode = schema.BuiltinOperator.CUSTOM
    code.deprecatedBuiltinCode = schema.BuiltinOperator.CUSTOM
    code.customCode = b"MyUnknownOp"
    code.version = 1
    model.operatorCodes.append(code)
    add.opcodeIndex = len(model.operatorCodes) - 1
    add.builtinOptionsType, add.builtinOptions = 0, None
    return G.serialize_model(model)


def main() -> None:
    G.reset_dir(OUT_DIR)
    for name, model in [("complex64_tensor", complex_model()), ("unknown_custom_op", custom_model())]:
        (OUT_DIR / f"{name}.tflite").write_bytes(model)
        print(f"{name}.tflite: {len(model)} bytes, ops {[d['op'] for d in G.describe_ops(model)]}")


if __name__ == "__main__":
    main()
