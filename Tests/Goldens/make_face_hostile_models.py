#!/usr/bin/env python3
"""Models with a face detector's 128x128 float input but outputs it cannot decode, for
FaceDetector's hostile-input tests. Built with the schema's object API (no TensorFlow); run
from the repository root with the root venv:

    /work/venv/bin/python Tests/Goldens/make_face_hostile_models.py

Writes Tests/TasksTests/Fixtures/hostile/:
  * face_128_wrong_box_count.tflite — two RESHAPEs of the input: [1, 3072, 16] and
    [1, 49152, 1] (3072 box rows where the short-range anchors make 896);
  * face_128_one_output.tflite — one RESHAPE of the input to [1, 3072, 16] (no scores tensor).
Each file is checked to load and run in LiteRT (BUILTIN_REF).
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import golden_io as gio  # noqa: E402
import make_hostile_models as hm  # noqa: E402
from ai_edge_litert import schema_py_generated as schema  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "Tests" / "TasksTests" / "Fixtures" / "hostile"


def reshape_model(shapes):
    """Input [1, 128, 128, 3] float32, one RESHAPE (new shape as an option) per output shape."""
    tensors = [hm.tensor("input", [1, 128, 128, 3])]
    operators = []
    for i, shape in enumerate(shapes):
        tensors.append(hm.tensor(f"output_{i}", shape))
        options = schema.ReshapeOptionsT()
        options.newShape = list(shape)
        operators.append(hm.operator(0, [0], [len(tensors) - 1], schema.BuiltinOptions.ReshapeOptions, options))
    return hm.model(tensors, operators, [schema.BuiltinOperator.RESHAPE], [0], list(range(1, len(tensors))), [])


def main():
    for name, shapes in (("face_128_wrong_box_count.tflite", [[1, 3072, 16], [1, 49152, 1]]),
                         ("face_128_one_output.tflite", [[1, 3072, 16]])):
        data = reshape_model(shapes)
        outputs, _ = gio.run_model(data, [np.zeros([1, 128, 128, 3], np.float32)])
        assert [list(o.shape) for o in outputs] == shapes, [o.shape for o in outputs]
        (OUT / name).write_bytes(data)
        print(OUT / name, len(data), "bytes, outputs", shapes)


if __name__ == "__main__":
    main()
