#!/usr/bin/env python3
"""Checks that the micro-kernels of a release build make no call to a generic SIMD helper.

    python3 scripts/check-hot-loops.py [BINARY]    (default .build/release/swiftlite)

The kernels load and store vectors through `UnsafeRawPointer.loadUnaligned` / `storeBytes`
specialised for a SIMD type, and do arithmetic through SIMD operators; the optimiser normally
inlines them all, but whether it does depends on how many callers a specialisation has in the
whole module. Once, a new `SIMD8<Float>` load in another kernel of the same module made it keep
that specialisation as a function, and the 6 × 16 float tile then called it for every load:
every float convolution 2.5 to 5 times slower, and no test saw it (the results were the same
bytes). This disassembles the binary with `objdump` (binutils), takes every function of the
kernel types below, and fails, naming them, if any calls a function whose name is one of those
helpers (a standard-library SIMD generic, `loadUnaligned`, `storeBytes`). Calls to other
functions (a precondition's failure path, a nested kernel) are allowed.

It also fails if a float tile or depthwise row of the AVX2 module (`SIMDKernels`) holds a
`vblendvps`: the activation's clamp there once compiled, for half of a tile's accumulators, to a
compare and two 128-bit blends instead of `vmaxps`/`vminps` (`FloatTiles.clamp` now goes through
an intrinsic); the results were the same, only slower.

And it fails if the float LOGISTIC or swish loops hold scalar float arithmetic (`vfmadd213ss`,
`vmulss`, ...): their lanes are vectors, so a scalar operation means LLVM took a vector
expression apart. Written with the standard library's lane-by-lane `addingProduct`, the
exponential once compiled to scalar and 128-bit pieces, 2.8 times slower, the same results.
"""
import re
import subprocess
import sys

BINARY = sys.argv[1] if len(sys.argv) > 1 else ".build/release/swiftlite"
# Mangled-name fragments of the kernel types whose functions must not call the helpers.
KERNELS = ["10FloatTilesO", "18FloatDepthwiseRowsO", "16DepthwiseTapRowsO", "17QuantizedAdditionO",
           "23QuantizedMultiplicationO", "12IntegerGEMMV", "11VNNIProductV", "17DepthwiseRowVNNIO",
           "18RequantizationBlockV", "15LogisticFloat32V", "12SwishFloat32V", "16FloatElementwiseO",
           "16MaxPool2DFloat32V", "18MaxPool2DQuantizedV", "13FloatEpilogueV"]
# Mangled-name fragments of the AVX2 module's float kernels, which must hold no `vblendvps`.
NO_BLENDS = ["11SIMDKernels10FloatTilesO", "11SIMDKernels18FloatDepthwiseRowsO"]
# Mangled-name fragments of the element-wise float kernels, which must hold no scalar arithmetic.
NO_SCALARS = ["15LogisticFloat32V", "12SwishFloat32V", "16FloatElementwiseO"]
SCALAR = re.compile(r"\tv(add|sub|mul|div|min|max|sqrt|f[n]?madd[0-9]+|f[n]?msub[0-9]+)ss\b")
# Mangled-name fragments of the helpers: `loadUnaligned`, `storeBytes`, and stdlib SIMD generics.
HELPERS = re.compile(r"13loadUnaligned|10storeBytes|s4SIMDP|s[56]SIMD[0-9]+V")

def main():
    listing = subprocess.run(["objdump", "-d", "--no-show-raw-insn", BINARY], check=True,
                             capture_output=True, text=True).stdout
    function, checked, bad = None, set(), {}
    for line in listing.splitlines():
        header = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if header:
            name = header.group(1)
            function = name if any(k in name for k in KERNELS) else None
            if function:
                checked.add(function)
            continue
        if function and "\tvblendvps" in line and any(k in function for k in NO_BLENDS):
            bad.setdefault(function, set()).add("vblendvps (a clamp compiled to blends)")
        if function and SCALAR.search(line) and any(k in function for k in NO_SCALARS):
            bad.setdefault(function, set()).add("scalar float arithmetic (a vector expression taken apart)")
        if function and "\tcall" in line:
            target = re.search(r"<([^>+]+)", line)
            if target and HELPERS.search(target.group(1)):
                bad.setdefault(function, set()).add(target.group(1))
    if not checked:
        sys.exit(f"FAIL: no kernel functions found in {BINARY} (stripped, or not a release build?)")
    for function, targets in sorted(bad.items()):
        print(f"FAIL: {function}\n  has {', '.join(sorted(targets))}", file=sys.stderr)
    if bad:
        sys.exit(1)
    print(f"ok: {len(checked)} kernel functions in {BINARY}, none calls a generic SIMD helper, blends in a float tile "
          "or does scalar arithmetic in an element-wise float loop")

main()
