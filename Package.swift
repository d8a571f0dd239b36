// swift-tools-version:6.0
import PackageDescription

/// Hot loops are only vectorised for the machine at hand when the compiler is told the CPU.
/// Set SWIFTLITE_PORTABLE=1 to build a binary that runs on any x86-64.
let nativeCPU: [SwiftSetting] =
    Context.environment["SWIFTLITE_PORTABLE"] == nil ? [.unsafeFlags(["-target-cpu", "native"])] : []

/// Release builds drop the engine's remaining bounds checks (prepare validated every index).
/// Debug builds of the engine and tasks are optimised too: the test suite runs whole networks and
/// unoptimised integer kernels would take minutes; `-enable-testing` stays on for `@testable`.
let optimised: [SwiftSetting] = [
    .unsafeFlags(["-Ounchecked"], .when(configuration: .release)),
    .unsafeFlags(["-O"], .when(configuration: .debug)),
]

let package = Package(
    name: "SwiftLite",
    products: [
        .library(name: "Engine", targets: ["Engine"]),
        .library(name: "Tasks", targets: ["Tasks"]),
        .executable(name: "swiftlite", targets: ["CLI"]),
    ],
    targets: [
        .systemLibrary(name: "CBLAS", pkgConfig: "openblas",
                       providers: [.apt(["libopenblas-dev"])]),
        .systemLibrary(name: "CPNG", pkgConfig: "libpng",
                       providers: [.apt(["libpng-dev"])]),
        .systemLibrary(name: "CJPEG", pkgConfig: "libjpeg",
                       providers: [.apt(["libjpeg62-turbo-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib",
                       providers: [.apt(["zlib1g-dev"])]),
        .target(name: "Engine", dependencies: ["CBLAS"], swiftSettings: nativeCPU + optimised),
        .target(name: "CJPEGShim", dependencies: ["CJPEG"]),
        .target(name: "CPNGShim", dependencies: ["CPNG"]),
        .target(name: "Tasks", dependencies: ["Engine", "CPNG", "CJPEG", "CZlib", "CJPEGShim", "CPNGShim"],
                swiftSettings: nativeCPU + optimised),
        .executableTarget(name: "CLI", dependencies: ["Engine", "Tasks"]),
        .executableTarget(name: "Benchmarks", dependencies: ["Engine"], path: "Benchmarks", exclude: ["compare_litert.py"],
                          swiftSettings: nativeCPU + optimised),
        .target(name: "TestSupport", dependencies: ["Engine"], path: "Tests/TestSupport"),
        .testTarget(name: "EngineTests", dependencies: ["Engine", "TestSupport"],
                    exclude: ["Fixtures"]),
        .testTarget(name: "TasksTests", dependencies: ["Tasks", "TestSupport"], exclude: ["Fixtures"]),
        .testTarget(name: "CLITests", dependencies: ["TestSupport"]),
    ]
)
