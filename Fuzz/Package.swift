// swift-tools-version:5.4
// (5.4, before testable executables: SwiftPM then leaves `main` alone for libFuzzer to define.)
import PackageDescription

/// libFuzzer targets for SwiftLite, one executable per input format. Each defines
/// `LLVMFuzzerTestOneInput`; libFuzzer supplies `main`. Build and run through
/// `scripts/fuzz.sh TARGET SECONDS` (it passes `-sanitize=fuzzer,address -parse-as-library`); a plain
/// `swift build` here cannot link (no `main`).
///
/// A separate package so that the root `Package.swift` stays free of fuzzing flags. Debug builds
/// keep Swift's bounds and overflow checks on: the fuzzer must see the traps that `-Ounchecked`
/// would turn into silent corruption.
let package = Package(
    name: "SwiftLiteFuzz",
    dependencies: [.package(name: "SwiftLite", path: "..")],
    targets: [
        .executableTarget(name: "FuzzModel", dependencies: [.product(name: "Engine", package: "SwiftLite"),
                                                            .product(name: "Tasks", package: "SwiftLite")]),
        .executableTarget(name: "FuzzImage", dependencies: [.product(name: "Tasks", package: "SwiftLite")]),
        .executableTarget(name: "FuzzFlexBuffers", dependencies: [.product(name: "Engine", package: "SwiftLite")]),
        .executableTarget(name: "FuzzMetadata", dependencies: [.product(name: "Engine", package: "SwiftLite"),
                                                               .product(name: "Tasks", package: "SwiftLite")]),
        .executableTarget(name: "FuzzNumpy", dependencies: [.product(name: "Engine", package: "SwiftLite")]),
        .executableTarget(name: "FuzzAutoML", dependencies: [.product(name: "Tasks", package: "SwiftLite")]),
    ]
)
