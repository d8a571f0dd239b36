#!/usr/bin/env bash
# Checks that an app can depend on a *released* SwiftLite: a throw-away package, in a temporary
# folder, that depends on a local tag of this repository with `from:` (as a user's app would on a
# GitHub release), imports Tasks, classifies Models/demo/cat.png with
# Models/efficientnet_lite0_f32.tflite and prints the top result.
#
# SwiftPM refuses `unsafeFlags` in versioned dependencies before tools version 6.2, so this only
# passes once Package.swift says `// swift-tools-version:6.2` (or later).
#
#   scripts/check-versioned-dependency.sh          # checks the committed HEAD
#   CHECK_TOOLS_VERSION=6.2 scripts/check-versioned-dependency.sh
#       # first rewrites line 1 of Package.swift in the temporary clone (never in this checkout)
#
# Exits non-zero if the app does not resolve, build, run, or name a cat.
set -euo pipefail

repo=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
work=$(mktemp -d "${TMPDIR:-/tmp}/swiftlite-dependency-check.XXXXXX")
trap 'rm -rf "$work"' EXIT
tag=0.1.0-check

git clone --quiet "$repo" "$work/swiftlite"
cd "$work/swiftlite"
if [ -n "${CHECK_TOOLS_VERSION:-}" ]; then
  sed -i "1s|.*|// swift-tools-version:${CHECK_TOOLS_VERSION}|" Package.swift
  git -c user.name=check -c user.email=check@localhost commit --quiet -am "check: tools version ${CHECK_TOOLS_VERSION}"
fi
git tag "$tag"
echo "SwiftLite $(git rev-parse --short HEAD) tagged $tag, $(head -1 Package.swift)"

mkdir -p "$work/app/Sources/App"
cat > "$work/app/Package.swift" <<SWIFT
// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "App",
    dependencies: [
        .package(url: "file://$work/swiftlite", from: "$tag"),
    ],
    targets: [
        .executableTarget(name: "App", dependencies: [.product(name: "Tasks", package: "swiftlite")]),
    ]
)
SWIFT
cat > "$work/app/Sources/App/main.swift" <<'SWIFT'
import Foundation
import Tasks

let arguments = CommandLine.arguments
var options = ImageClassifierOptions(modelPath: arguments[1])
options.maxResults = 1
let classifier = try ImageClassifier(options: options)
let result = try classifier.classify(image: try Image(contentsOf: URL(fileURLWithPath: arguments[2])))
guard let top = result.classifications.first?.categories.first else {
    FileHandle.standardError.write(Data("error: no result\n".utf8))
    exit(1)
}
print("\(top.categoryName ?? "#\(top.index)") \(top.score)")
SWIFT

cd "$work/app"
swift build
top=$(.build/debug/App "$repo/Models/efficientnet_lite0_f32.tflite" "$repo/Models/demo/cat.png")
echo "top result: $top"
case "$top" in
  *cat*) echo "ok: an app depending on SwiftLite from: \"$tag\" builds and classifies" ;;
  *) echo "error: expected a cat, got '$top'" >&2; exit 1 ;;
esac
