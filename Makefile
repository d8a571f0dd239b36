# The two commands of the README's Quick start. Both install missing system packages first.
.PHONY: demo test bench

demo:
	@scripts/install-system-packages.sh
	swift build -c release --product swiftlite
	.build/release/swiftlite classify Models/demo/cat.png

test:
	@scripts/install-system-packages.sh
	swift build
	swift test --disable-swift-testing

bench:
	@scripts/install-system-packages.sh
	swift build -c release --product swiftlite
	.build/release/swiftlite bench ../shared/models/perf/mobilenet_v2_1.0_224_f32.tflite

# An app that depends on a local tag of this repository with `from:` builds and classifies the
# demo photo (passes once Package.swift is at swift-tools-version 6.2).
.PHONY: check-dependency
check-dependency:
	@scripts/install-system-packages.sh
	scripts/check-versioned-dependency.sh
