"""Compare `swiftlite run` outputs (and intermediates) with LiteRT's reference kernels.

    swiftlite run MODEL --input in.npy --output-dir out --dump-intermediates
    python scripts/compare_with_litert.py MODEL out --input in.npy [--input in2.npy ...]

Runs MODEL with LiteRT (BUILTIN_REF, every tensor preserved) on the same inputs, then compares
out/output_<k>.npy with the model outputs and, when out/tensors/ exists, every dumped tensor with
LiteRT's, in operator order. Prints the first operator whose output differs — the place to look —
and exits 1 if anything differs beyond the tolerance (0 for integer tensors; 1e-5 relative to
max(1, max|x|) for float ones).
"""
import argparse
import glob
import os
import sys

import numpy as np
from ai_edge_litert.interpreter import Interpreter, OpResolverType


def differs(ours, theirs):
    if ours.shape != theirs.shape or ours.dtype != theirs.dtype:
        return f"shape/dtype {ours.dtype}{list(ours.shape)} vs {theirs.dtype}{list(theirs.shape)}"
    if np.issubdtype(theirs.dtype, np.floating):
        err = float(np.max(np.abs(ours.astype(np.float64) - theirs), initial=0.0))
        scale = max(1.0, float(np.max(np.abs(theirs), initial=0.0)))
        return None if err <= 1e-5 * scale else f"max |diff| {err:.3g} (relative {err / scale:.3g})"
    diff = int(np.count_nonzero(ours != theirs))
    if diff == 0:
        return None
    return f"{diff} of {theirs.size} elements differ, max |diff| {int(np.max(np.abs(ours.astype(np.int64) - theirs)))}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("out_dir")
    parser.add_argument("--input", action="append", required=True)
    args = parser.parse_args()

    interpreter = Interpreter(model_path=args.model, experimental_preserve_all_tensors=True,
                              experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
    interpreter.allocate_tensors()
    for detail, path in zip(interpreter.get_input_details(), args.input):
        interpreter.set_tensor(detail["index"], np.load(path))
    interpreter.invoke()

    failed = False
    for k, detail in enumerate(interpreter.get_output_details()):
        problem = differs(np.load(os.path.join(args.out_dir, f"output_{k}.npy")), interpreter.get_tensor(detail["index"]))
        print(f"output {k} '{detail['name']}': {problem or 'ok'}")
        failed |= problem is not None

    dumped = {int(os.path.basename(p).split("_")[0]): p for p in glob.glob(os.path.join(args.out_dir, "tensors", "*.npy"))}
    if dumped:
        checked = 0
        for op in interpreter._get_ops_details():
            for t in op["outputs"]:
                if t not in dumped:
                    continue
                checked += 1
                problem = differs(np.load(dumped[t]), interpreter.get_tensor(t))
                if problem:
                    print(f"first difference: operator {op['index']} ({op['op_name']}) output tensor {t}: {problem}")
                    sys.exit(1)
        print(f"all {checked} intermediate tensors agree")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
