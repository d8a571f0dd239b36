# The two commands of the README's Quick start. Both install missing system packages first.
.PHONY: demo test native bench fuzz sanitize docs check-house

demo:
	@scripts/install-system-packages.sh
	swift build -c release --product swiftlite
	.build/release/swiftlite classify Models/demo/cat.png

test:
	@scripts/install-system-packages.sh
	swift build
	swift test --disable-swift-testing

# The DocC reference for Engine and Tasks in .build/docs/, built with the toolchain's own docc from
# compiler-emitted symbol graphs (scripts/build-docs.sh); any documentation warning fails it.
docs:
	@scripts/install-system-packages.sh
	scripts/build-docs.sh

# README at most 250 lines without commit hashes, Swift files of at most 400 lines, every
# relative link in README.md and docs/ resolving (CI runs it first).
check-house:
	python3 scripts/check-house.py

# Opt-in: a release build for this machine's own CPU only (kernels fixed at compile time; the
# binary may not run on an older CPU), in its own scratch directory.
native:
	@scripts/install-system-packages.sh
	SWIFTLITE_TARGET_CPU=$$(scripts/native-cpu.sh) swift build -c release --product swiftlite --scratch-path .build/native
	@echo "built .build/native/release/swiftlite for $$(scripts/native-cpu.sh)"

bench:
	@scripts/install-system-packages.sh
	swift build -c release --product swiftlite
	.build/release/swiftlite bench ../shared/models/perf/mobilenet_v2_1.0_224_f32.tflite

# The default build under qemu-user as an AVX2 machine (names the demo cat) and as a CPU without
# AVX2 (a clear error, not SIGILL), then the golden suites on the AVX2 tier and on the portable
# kernels of a baseline x86-64 build (scripts/check-portable.sh).
.PHONY: check-portable
check-portable:
	@scripts/install-system-packages.sh
	scripts/check-portable.sh

# An app that depends on a local tag of this repository with `from:` builds and classifies the
# demo photo (passes once Package.swift is at swift-tools-version 6.2).
# The release build's micro-kernels call no generic SIMD helper (`loadUnaligned`, `storeBytes`,
# a stdlib SIMD generic): whether the optimiser inlines those depends on the whole module, and one
# left as a function slows a kernel several times over with the same results.
.PHONY: check-hot-loops
check-hot-loops:
	@scripts/install-system-packages.sh
	swift build -c release --product swiftlite
	python3 scripts/check-hot-loops.py .build/release/swiftlite

.PHONY: check-dependency
check-dependency:
	@scripts/install-system-packages.sh
	scripts/check-versioned-dependency.sh

# Every fuzz target in turn on one worker at nice 19 (see scripts/fuzz.sh): the model target until
# FUZZ_MODEL_RUNS executions (at most FUZZ_MODEL_SECONDS), the others FUZZ_SECONDS each. A finding
# does not stop a run: the inputs are kept in Fuzz/.build/crashes/TARGET/ and the summary at the end
# names every target that kept one.
FUZZ_SECONDS ?= 60
FUZZ_MODEL_RUNS ?= 1000000
FUZZ_MODEL_SECONDS ?= 10800
fuzz:
	@scripts/install-system-packages.sh
	@failed=""; rm -f Fuzz/.build/logs/summary.txt; \
	scripts/fuzz.sh model $(FUZZ_MODEL_SECONDS) $(FUZZ_MODEL_RUNS) || failed="$$failed model"; \
	for target in image flexbuffers metadata numpy automl; do \
	    scripts/fuzz.sh $$target $(FUZZ_SECONDS) || failed="$$failed $$target"; \
	done; \
	echo "== fuzz summary"; cat Fuzz/.build/logs/summary.txt; \
	if [ -n "$$failed" ]; then echo "findings kept for:$$failed"; exit 1; fi

# The test suite under AddressSanitizer (with LeakSanitizer; scripts/lsan.supp lists the toolchain's
# own leaks), then the concurrent tests (live stream, sessions sharing a plan) under
# ThreadSanitizer, with the worker pool running real kernels on two threads. Each sanitizer builds in its own scratch directory, so `make test` stays as fast.
sanitize:
	@scripts/install-system-packages.sh
	swift build --build-tests --scratch-path .build/asan --sanitize=address
	LSAN_OPTIONS=suppressions=$(CURDIR)/scripts/lsan.supp:print_suppressions=0 \
	    swift test --skip-build --scratch-path .build/asan --sanitize=address --disable-swift-testing
	swift build --build-tests --scratch-path .build/tsan --sanitize=thread
	TSAN_OPTIONS=halt_on_error=1 swift test --skip-build --scratch-path .build/tsan --sanitize=thread \
	    --disable-swift-testing --filter 'testLiveStream|testSessionsShareThePlan|Concurrent|ThreadingTests.testPool|ThreadingTests.testSessionsStartAndStopWorkers|ThreadingTests.test.*GoldensOnTwoThreads'

# Thirteen `tf_keras.applications` families with random weights (ResNet, DenseNet, Inception,
# NASNet, ConvNeXt, ...), as float32 and int8 models, every tensor compared with LiteRT's reference
# kernels at 1 and 2 threads (scripts/check_keras_applications.py, about 15 minutes). Needs the
# Python environment of requirements.txt: `make check-architectures PYTHON=venv/bin/python`.
PYTHON ?= python3
.PHONY: check-architectures
check-architectures:
	@scripts/install-system-packages.sh
	swift build -c release --product swiftlite
	$(PYTHON) scripts/check_keras_applications.py
