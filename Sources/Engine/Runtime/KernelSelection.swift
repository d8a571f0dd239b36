import Microkernels

/// The kernel families this build runs on this machine. The same model's speed depends on them
/// (see Package.swift and the README's Building section), so benchmark records name them.
public enum KernelSelection {
    /// The float kernels' tier: `avx512` (the Microkernels module's 7 × 32 tiles in 32 `zmm`
    /// registers, chosen by CPUID unless `SWIFTLITE_KERNELS=avx2`), `avx2` (the engine's own
    /// 6 × 16 tiles of `ymm`), or `portable` (Swift SIMD for the build's target: NEON on arm64).
    public static var float: String {
        if runsAVX512 { return "avx512" }
        #if SWIFTLITE_AVX2
        return "avx2"
        #else
        return "portable"
        #endif
    }

    /// Whether the Microkernels module's AVX-512 code runs in this process: chosen by CPUID when
    /// the engine is built for the AVX2 floor (the default build), fixed when the build targets
    /// an AVX-512 CPU.
    static let runsAVX512: Bool = {
        #if SWIFTLITE_RUN_TIME_TIERS
        return RunTimeCPU.runsAVX512Kernels
        #elseif SWIFTLITE_AVX512
        return true
        #else
        return false
        #endif
    }()

    /// Whether the integer kernels' `vpdpbusd` code runs here: the build targets AVX-512 VNNI, or
    /// the code compiled apart for it (Microkernels, see Package.swift) runs on this machine.
    /// The integer GEMM and the int8 3×3 depthwise kernel pack their weights for it then.
    static var runsVNNI: Bool {
        #if SWIFTLITE_AVX512VNNI
        true
        #elseif SWIFTLITE_RUN_TIME_TIERS
        RunTimeCPU.runsVNNIKernels
        #else
        false
        #endif
    }

    /// The integer GEMM's kernels on this machine: `avx512vnni` (compiled for the build's
    /// target), `avx512vnni (run time)` (compiled apart, chosen because this CPU has them: the
    /// portable build on a VNNI machine), `avx2` or `int16`.
    public static var integer: String {
        switch IntegerGEMM.Layout.preferred {
        case .avx512vnni:
            #if SWIFTLITE_AVX512VNNI
            "avx512vnni"
            #else
            "avx512vnni (run time)"
            #endif
        case .avx2, .avx2Bytes: "avx2"
        case .int16: "int16"
        }
    }
}
