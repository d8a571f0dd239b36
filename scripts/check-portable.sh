#!/bin/sh
# The default release build on other x86-64 CPUs, emulated by qemu-user (Debian's qemu-user):
# - as an AVX2 + FMA machine without AVX-512 (`-cpu Haswell`) it runs the AVX2 tier and names the
#   demo photo's cat;
# - as a CPU without AVX2 (`-cpu Nehalem`) it stops at start-up with an error that names AVX2 and
#   an exit status (not a signal).
# Then, on this machine, the golden suites with the AVX2 tier forced (SWIFTLITE_KERNELS=avx2), and
# the portable Swift kernels that an arm64 or baseline x86-64 build runs (the `.int16` integer
# product among them, which an AVX2 build leaves out): the suites built for `x86-64` in their own
# scratch directory, again with the AVX-512 tier off.
# QEMU cannot emulate AVX-512, so the AVX-512 tier is checked by the plain test suite on a machine
# that has it.
set -eu
cd "$(dirname "$0")/.."
command -v qemu-x86_64 >/dev/null || { apt-get update -qq && apt-get install -y -qq qemu-user >/dev/null; }
swift build -c release --product swiftlite
binary=.build/release/swiftlite

echo "== qemu-x86_64 -cpu Haswell: swiftlite classify Models/demo/cat.png"
output=$(qemu-x86_64 -cpu Haswell "$binary" classify Models/demo/cat.png 2>/dev/null)
echo "$output"
echo "$output" | sed -n 2p | grep -q "Egyptian cat" || { echo "FAIL: the top label under Haswell is not Egyptian cat" >&2; exit 1; }

echo "== qemu-x86_64 -cpu Nehalem: swiftlite classify Models/demo/cat.png"
set +e
message=$(qemu-x86_64 -cpu Nehalem "$binary" classify Models/demo/cat.png 2>&1 >/dev/null | grep -v "TCG doesn't support")
status=$?
qemu-x86_64 -cpu Nehalem "$binary" classify Models/demo/cat.png >/dev/null 2>&1
status=$?
set -e
echo "$message"
echo "exit status $status"
if [ "$status" -eq 0 ] || [ "$status" -ge 128 ]; then echo "FAIL: expected an error exit, not $status" >&2; exit 1; fi
echo "$message" | grep -q "AVX2" || { echo "FAIL: the error does not name AVX2" >&2; exit 1; }

echo "== golden suites with SWIFTLITE_KERNELS=avx2"
SWIFTLITE_KERNELS=avx2 swift test --disable-swift-testing --filter 'Golden|Tiling|GEMM|Depthwise|PointwiseDepthwise|Threading'
echo "== golden suites built for baseline x86-64 (portable kernels), SWIFTLITE_KERNELS=avx2"
SWIFTLITE_TARGET_CPU=x86-64 SWIFTLITE_KERNELS=avx2 swift test --scratch-path .build/baseline --disable-swift-testing \
    --filter 'Golden|Tiling|GEMM|Depthwise|PointwiseDepthwise|Threading'
echo "check-portable: passed"
