#!/bin/sh
# Builds the DocC reference for the Engine and Tasks modules into .build/docs/ with the
# toolchain's own docc (no SwiftPM plugin): the compiler emits the symbol graphs during a build
# in a scratch directory of its own, then `docc convert` joins each module's graphs with its
# catalog (Sources/<Module>/<Module>.docc). Any warning — a broken symbol link, a missing
# article — fails the build.
#
#   scripts/build-docs.sh                     # both modules; fails on any warning
#   DOCS_WARNINGS=allow scripts/build-docs.sh # print warnings but build anyway
#   DOCS_SCRATCH=path scripts/build-docs.sh   # another scratch directory for the build
set -eu
cd "$(dirname "$0")/.."

scratch=${DOCS_SCRATCH:-.build/docs-build}
graphs="$scratch/symbol-graphs"
output=.build/docs
strict=--warnings-as-errors
if [ "${DOCS_WARNINGS:-}" = allow ]; then strict=; fi

swift_path=$(command -v swift)
docc=$(dirname "$(readlink -f "$swift_path")")/docc
[ -x "$docc" ] || docc=$(command -v docc) || { echo "error: no docc next to $swift_path or on PATH" >&2; exit 1; }

# The graphs are rewritten whenever a module recompiles, so an incremental build keeps them current.
mkdir -p "$graphs"
swift build --target Tasks --scratch-path "$scratch" \
    -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$PWD/$graphs"

rm -rf "$output"
mkdir -p "$output"
for module in Engine Tasks; do
    # The module's own graph and its extensions of other modules (Tasks@Foundation, ...).
    module_graphs="$scratch/symbol-graphs-$module"
    rm -rf "$module_graphs"
    mkdir -p "$module_graphs"
    cp "$graphs/$module.symbols.json" "$module_graphs/"
    for extension in "$graphs/$module@"*.symbols.json; do
        [ -e "$extension" ] && cp "$extension" "$module_graphs/"
    done
    "$docc" convert "Sources/$module/$module.docc" \
        --additional-symbol-graph-dir "$module_graphs" \
        --fallback-display-name "$module" \
        --fallback-bundle-identifier "org.swiftlite.$module" \
        --transform-for-static-hosting \
        $strict \
        --output-dir "$output/$module.doccarchive"
done
echo "documentation in $output/Engine.doccarchive and $output/Tasks.doccarchive"
