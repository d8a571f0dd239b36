// swift-tools-version:6.2
import PackageDescription
#if os(Linux)
import Foundation
#endif

// MARK: Target CPU
//
// The engine's hot loops are Swift SIMD code; how fast they are depends on which instructions the
// compiler may use, so the target CPU is a build choice (one value for the Swift compiler and for
// the clang importer, which compiles the inline C wrappers in CX86Intrinsics):
//
// - x86-64, default: `-target-cpu native`, the machine that builds (AVX-512 VNNI on the
//   development machine). The binary may not run on an older CPU.
// - `SWIFTLITE_PORTABLE=1`: `-target-cpu haswell`, the AVX2 + FMA floor (Intel Haswell 2013 and
//   later, AMD Excavator/Zen 2015 and later). Every kernel still compiles to vector FMAs
//   (`vfmadd…ps ymm`) and `vpmaddwd`, and the integer product switches to its AVX-512 VNNI
//   kernels on machines that have them (see "Kernels chosen at run time" below). On a CPU
//   without AVX2 and FMA such a binary dies of SIGILL (illegal instruction) in its first kernel.
// - `SWIFTLITE_TARGET_CPU=name`: any LLVM CPU name the clang importer accepts (`haswell`,
//   `skylake-avx512`, `icelake-server`, `znver4`, …; not `x86-64-v3`, which it refuses); it
//   overrides SWIFTLITE_PORTABLE. `SWIFTLITE_TARGET_CPU=x86-64` runs on every x86-64 but is not a
//   fast target: without FMA every float multiply-add is a call to software `fma` per lane
//   (correct results, two orders of magnitude slower) and the integer kernels are SSE2.
// - arm64 (and other hosts): no `-target-cpu` unless SWIFTLITE_TARGET_CPU is set (not every
//   toolchain accepts `native` there); NEON and FMA are the arm64 baseline, so the SIMD loops
//   vectorise as they are; none of the defines below is set, so only portable Swift kernels build.
//
// Kernels select code by what the build targets, at compile time. Swift `#if` cannot see the C
// compiler's `__AVX2__` or `__AVX512VNNI__`, so this manifest defines `SWIFTLITE_AVX2` (AVX2 + FMA),
// `SWIFTLITE_AVX512` (AVX-512 F/BW/DQ/VL: 32 vector registers) and `SWIFTLITE_AVX512VNNI`
// (AVX-512 BW + VNNI) when the chosen CPU has them: for `native` as /proc/cpuinfo lists them (the
// native target is the build machine), otherwise by CPU name; an unknown name gets none, and the
// portable Swift kernels. A Swift file that calls an intrinsic the target lacks does not compile,
// so a define must never claim too much; CX86Intrinsics declares its wrappers only when the
// importer sees the features, which turns a disagreement into a plain compile error.
let environment = Context.environment

let targetCPU: String? = {
    if let cpu = environment["SWIFTLITE_TARGET_CPU"], !cpu.isEmpty { return cpu }
    #if arch(x86_64)
    return environment["SWIFTLITE_PORTABLE"] == "1" ? "haswell" : "native"
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

/// Whether the build machine's CPU flags (Linux) include all of `flags`.
func hostHas(_ flags: [String]) -> Bool {
    #if os(Linux)
    guard let cpuinfo = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
          let line = cpuinfo.split(separator: "\n").first(where: { $0.hasPrefix("flags") }) else { return false }
    let present = Set(line.split(separator: " ").map(String.init))
    return flags.allSatisfy(present.contains)
    #else
    return false
    #endif
}

/// Whether the target CPU has `flags` (as /proc/cpuinfo names them), by name or, for `native`, by looking.
func targetHas(_ flags: [String], named cpus: Set<String>) -> Bool {
    #if arch(x86_64)
    guard let cpu = targetCPU else { return false }
    return cpu == "native" ? hostHas(flags) : cpus.contains(cpu)
    #else
    return false
    #endif
}

let targetsAVX512VNNI = targetHas(["avx512f", "avx512bw", "avx512_vnni"], named: avx512VNNICPUs)
let targetsAVX512 = targetHas(["avx512f", "avx512bw", "avx512dq", "avx512vl"], named: avx512CPUs)
let targetsAVX2 = targetHas(["avx2", "fma"], named: avx2CPUs)

// MARK: Kernels chosen at run time
//
// Swift has no per-function target attribute, so code for a richer CPU than the build's target
// lives in a module of its own, `Microkernels`, compiled for that CPU and called only when CPUID
// says the running machine has it. On x86-64 builds whose target lacks AVX-512 VNNI (the
// portable build, an AVX2 or AVX-512-only machine's native build) that module is compiled for
// `cascadelake` — AVX-512 F/CD/BW/DQ/VL and VNNI, features every AVX-512 VNNI CPU has (Intel
// Cascade Lake and later, AMD Zen 4 and later) — and the engine defines
// `SWIFTLITE_AVX512VNNI_AT_RUN_TIME`; the integer product and the int8 3×3 depthwise kernel then
// pack for `vpdpbusd` when the machine has it. When the target has VNNI the module has the
// engine's target; elsewhere it holds only portable lane arithmetic.
#if arch(x86_64)
let selectsVNNIAtRunTime = !targetsAVX512VNNI
#else
let selectsVNNIAtRunTime = false
#endif

let targetSettings: [SwiftSetting] =
    (targetCPU.map { [.unsafeFlags(["-target-cpu", $0])] } ?? [])
    + (targetsAVX2 ? [.define("SWIFTLITE_AVX2")] : [])
    + (targetsAVX512 ? [.define("SWIFTLITE_AVX512")] : [])
    + (targetsAVX512VNNI ? [.define("SWIFTLITE_AVX512VNNI")] : [])
    + (selectsVNNIAtRunTime ? [.define("SWIFTLITE_AVX512VNNI_AT_RUN_TIME")] : [])

let microkernelSettings: [SwiftSetting] = selectsVNNIAtRunTime
    ? [.unsafeFlags(["-target-cpu", "cascadelake"]), .define("SWIFTLITE_AVX512"), .define("SWIFTLITE_AVX512VNNI")]
    : targetSettings

/// Release builds drop the engine's remaining bounds checks (prepare validated every index).
/// Debug builds of the engine are optimised too: the test suite runs whole networks and
/// unoptimised integer kernels would take minutes; `-enable-testing` stays on for `@testable`.
let optimised: [SwiftSetting] = [
    .unsafeFlags(["-Ounchecked"], .when(configuration: .release)),
    .unsafeFlags(["-O"], .when(configuration: .debug)),
]

/// Tasks parse untrusted files in Swift (BMP, zip, metadata, EXIF, label files, pixel buffers), so
/// they keep Swift's checks in every build: a validation gap traps instead of corrupting memory
/// (`swiftlite classify` on three photos, model load included, takes 0.16 s this way). The engine
/// keeps `-Ounchecked` for now: there `-O` costs 22–29 % on int8 models, all of it in the integer
/// GEMM and quantized depthwise micro-kernels, which are to move to wrapping arithmetic first.
let checked: [SwiftSetting] = [.unsafeFlags(["-O"])]

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
        .target(name: "CX86Intrinsics"),
        .target(name: "Microkernels", dependencies: ["CX86Intrinsics"], swiftSettings: microkernelSettings + optimised),
        .target(name: "Engine", dependencies: ["CX86Intrinsics", "Microkernels"], swiftSettings: targetSettings + optimised),
        .target(name: "CJPEGShim", dependencies: ["CJPEG"]),
        .target(name: "CPNGShim", dependencies: ["CPNG"]),
        .target(name: "Tasks", dependencies: ["Engine", "CPNG", "CJPEG", "CZlib", "CJPEGShim", "CPNGShim"],
                resources: [.copy("Resources/efficientnet_lite0_int8.tflite")],
                swiftSettings: targetSettings + checked),
        .executableTarget(name: "CLI", dependencies: ["Engine", "Tasks"]),
        .target(name: "TestSupport", dependencies: ["Engine"], path: "Tests/TestSupport"),
        .testTarget(name: "EngineTests", dependencies: ["Engine", "Microkernels", "TestSupport"],
                    exclude: ["Fixtures"]),
        .testTarget(name: "TasksTests", dependencies: ["Tasks", "TestSupport"], exclude: ["Fixtures"]),
        .testTarget(name: "CLITests", dependencies: ["TestSupport"]),
    ]
)
