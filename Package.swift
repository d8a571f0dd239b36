// swift-tools-version:6.2
import PackageDescription
#if os(Linux)
import Foundation
#endif

// MARK: Target CPU
//
// One binary runs on every x86-64 this project supports and picks its fastest kernels when it
// starts, as XNNPACK and oneDNN do. Swift has no per-function target attribute, so each tier is a
// module compiled for its own CPU:
//
// - Engine, Tasks and CLI: `-target-cpu haswell`, the x86-64-v3 floor (AVX2, FMA, BMI1/2, F16C,
//   MOVBE: Intel Haswell 2013 and later, AMD Zen 2017 and later; the clang importer refuses the
//   name `x86-64-v3`). Their Swift SIMD code compiles to `ymm` FMAs and `vpmaddwd`.
// - Microkernels: `-target-cpu cascadelake` (AVX-512 F/CD/BW/DQ/VL and VNNI: Intel Cascade Lake
//   and later, AMD Zen 4 and later). It holds the AVX-512 float tiles and the VNNI integer
//   kernels; the engine calls it only where `RunTimeCPU` (CPUID and the OS's register state)
//   says this machine runs it. `SWIFTLITE_KERNELS=avx2` in the environment keeps a machine on
//   the AVX2 tier (for tests and measurements).
// - A CPU without AVX2 and FMA stops at start-up with a message that names what is missing
//   (`CX86Intrinsics.c`, compiled for the x86-64 baseline), not with SIGILL.
//
// `SWIFTLITE_TARGET_CPU=name` is the opt-in build for one machine: every module compiled for
// that LLVM CPU (`znver4`, `icelake-server`, `sapphirerapids`, …; `make native` passes the build
// machine's own), its kernels fixed at compile time. Such a binary may not run on an older CPU.
// On arm64 (and other hosts) there is no `-target-cpu` unless that variable is set: NEON and FMA
// are the arm64 baseline, and only the portable Swift kernels build.
//
// Swift `#if` cannot see the C compiler's `__AVX2__` or `__AVX512VNNI__`, so this manifest defines
// `SWIFTLITE_AVX2` (AVX2 + FMA), `SWIFTLITE_AVX512` (AVX-512 F/BW/DQ/VL) and `SWIFTLITE_AVX512VNNI`
// for the CPU a module is compiled for, by name (an unknown name gets none, and the portable
// Swift kernels). A Swift file that calls an intrinsic the target lacks does not compile, so a
// define must never claim too much; CX86Intrinsics declares its wrappers only when the importer
// sees the features, which turns a disagreement into a plain compile error.
let environment = Context.environment

let targetCPU: String? = {
    if let cpu = environment["SWIFTLITE_TARGET_CPU"], !cpu.isEmpty { return cpu }
    #if arch(x86_64)
    return "haswell"
    #else
    return nil
    #endif
}()

/// LLVM x86 CPU names with AVX-512 BW and VNNI; with AVX-512 F, BW, DQ, VL; with AVX2 and FMA.
let avx512VNNICPUs: Set<String> = [
    "cascadelake", "cooperlake", "icelake-client", "icelake-server", "rocketlake", "tigerlake",
    "sapphirerapids", "emeraldrapids", "graniterapids", "graniterapids-d", "znver4", "znver5",
]
let avx512CPUs: Set<String> = avx512VNNICPUs.union(["skylake-avx512", "cannonlake", "x86-64-v4"])
let avx2CPUs: Set<String> = avx512CPUs.union([
    "haswell", "broadwell", "skylake", "alderlake", "raptorlake", "meteorlake", "arrowlake", "lunarlake",
    "znver1", "znver2", "znver3", "x86-64-v3",
])

/// The defines for code compiled for `cpu`.
func defines(for cpu: String?) -> [SwiftSetting] {
    #if arch(x86_64)
    guard let cpu else { return [] }
    return (avx2CPUs.contains(cpu) ? [.define("SWIFTLITE_AVX2")] : [])
        + (avx512CPUs.contains(cpu) ? [.define("SWIFTLITE_AVX512")] : [])
        + (avx512VNNICPUs.contains(cpu) ? [.define("SWIFTLITE_AVX512VNNI")] : [])
    #else
    return []
    #endif
}

// MARK: Kernels chosen at run time
//
// When the engine's target lacks AVX-512 VNNI (the default build) the Microkernels module is
// compiled for `cascadelake` and the engine defines `SWIFTLITE_RUN_TIME_TIERS`: its float GEMM,
// depthwise and integer kernels then ask `RunTimeCPU` once which module's code to run. When the
// target has VNNI (an opt-in build for such a CPU) the module has the engine's target, and the
// choice is made at compile time.
#if arch(x86_64)
let selectsAtRunTime = !(targetCPU.map(avx512VNNICPUs.contains) ?? false)
#else
let selectsAtRunTime = false
#endif

let targetSettings: [SwiftSetting] =
    (targetCPU.map { [.unsafeFlags(["-target-cpu", $0])] } ?? [])
    + defines(for: targetCPU)
    + (selectsAtRunTime ? [.define("SWIFTLITE_RUN_TIME_TIERS")] : [])

let microkernelSettings: [SwiftSetting] = selectsAtRunTime
    ? [.unsafeFlags(["-target-cpu", "cascadelake"])] + defines(for: "cascadelake")
    : targetSettings

/// Every module keeps Swift's checks in every build: overflow and bounds traps are on in Engine,
/// Tasks and CLI alike, so a gap in a kernel's validation stops the process instead of corrupting
/// memory. Micro-kernels that must not trap use wrapping operators and raw pointers, with the
/// invariant that prepare proved stated where they are called. Debug builds are optimised too:
/// the test suite runs whole networks, which unoptimised kernels would take minutes over;
/// `-enable-testing` stays on for `@testable`.
let optimised: [SwiftSetting] = [.unsafeFlags(["-O"])]

/// The micro-kernels keep overflow and bounds checks too, but not the run-time exclusivity
/// checks: their tiles keep accumulators in local variables that nested functions update, which
/// the checker tracks with a call per access in the innermost loops. They touch memory only
/// through raw pointers whose ranges the engine's prepare proved, so the checks guard nothing.
let microkernelChecks: [SwiftSetting] = [.unsafeFlags(["-O", "-enforce-exclusivity=unchecked"])]

let package = Package(
    name: "SwiftLite",
    products: [
        .library(name: "Engine", targets: ["Engine"]),
        .library(name: "Tasks", targets: ["Tasks"]),
        .executable(name: "swiftlite", targets: ["CLI"]),
    ],
    targets: [
        .systemLibrary(name: "CPNG", pkgConfig: "libpng",
                       providers: [.apt(["libpng-dev"])]),
        .systemLibrary(name: "CJPEG", pkgConfig: "libjpeg",
                       providers: [.apt(["libjpeg62-turbo-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib",
                       providers: [.apt(["zlib1g-dev"])]),
        .target(name: "CX86Intrinsics",
                cSettings: targetCPU.map(avx2CPUs.contains) == true ? [.define("SWIFTLITE_REQUIRES_X86_64_V3")] : []),
        .target(name: "Microkernels", dependencies: ["CX86Intrinsics"], swiftSettings: microkernelSettings + microkernelChecks),
        .target(name: "SIMDKernels", dependencies: ["CX86Intrinsics"], swiftSettings: targetSettings + microkernelChecks),
        // SIMDKernelsAVX512 does not import SIMDKernels; the dependency only orders the build so
        // that Microkernels (the longest of the three) compiles beside the other two in turn.
        .target(name: "SIMDKernelsAVX512", dependencies: ["CX86Intrinsics", "SIMDKernels"],
                swiftSettings: microkernelSettings + microkernelChecks),
        .target(name: "Engine", dependencies: ["CX86Intrinsics", "Microkernels", "SIMDKernels", "SIMDKernelsAVX512"],
                swiftSettings: targetSettings + optimised),
        .target(name: "CJPEGShim", dependencies: ["CJPEG"]),
        .target(name: "CPNGShim", dependencies: ["CPNG"]),
        .target(name: "Tasks", dependencies: ["Engine", "CPNG", "CJPEG", "CZlib", "CJPEGShim", "CPNGShim"],
                resources: [.copy("Resources/efficientnet_lite0_int8.tflite")],
                swiftSettings: targetSettings + optimised),
        // The CLI parses arguments and prints results: every loop over tensors or pixels is in
        // Engine or Tasks. It is not optimised in release builds either, which would only lengthen
        // the build (it is the last module compiled, so nothing runs beside it).
        .executableTarget(name: "CLI", dependencies: ["Engine", "Tasks"],
                          swiftSettings: [.unsafeFlags(["-Onone"], .when(configuration: .release))]),
        .target(name: "TestSupport", dependencies: ["Engine"], path: "Tests/TestSupport"),
        .testTarget(name: "EngineTests", dependencies: ["Engine", "Microkernels", "SIMDKernels", "SIMDKernelsAVX512", "TestSupport"],
                    exclude: ["Fixtures"], swiftSettings: defines(for: targetCPU)),
        .testTarget(name: "TasksTests", dependencies: ["Tasks", "TestSupport"], exclude: ["Fixtures"]),
        .testTarget(name: "CLITests", dependencies: ["TestSupport"]),
    ]
)
