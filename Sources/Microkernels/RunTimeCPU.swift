#if arch(x86_64)
import CX86Intrinsics
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#endif

/// What the running machine can execute of the code this module is compiled for.
public enum RunTimeCPU {
    /// Whether this module's AVX-512 kernels (the float tiles and the VNNI integer kernels) run
    /// here: the module is built for AVX-512 VNNI (see Package.swift), CPUID says this machine has
    /// every feature that target implies, and the OS saves the `zmm` and mask registers. Read once.
    /// `SWIFTLITE_KERNELS=avx2` in the environment says no, so that a build's AVX2 tier can be
    /// run and timed on an AVX-512 machine.
    public static let runsAVX512Kernels: Bool = {
        #if arch(x86_64) && SWIFTLITE_AVX512VNNI
        if let setting = getenv("SWIFTLITE_KERNELS"), String(cString: setting).lowercased() == "avx2" { return false }
        return swiftlite_cpu_runs_cascadelake_code() != 0
        #else
        return false
        #endif
    }()

    /// Whether `VNNIProduct`'s and the depthwise rows' `vpdpbusd` kernels run here: the same
    /// module, so the same answer as `runsAVX512Kernels`.
    public static var runsVNNIKernels: Bool { runsAVX512Kernels }
}
