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
    /// Whether `VNNIProduct`'s kernels run here: this module is built for AVX-512 VNNI (see
    /// Package.swift) and CPUID says this machine has every feature that target implies. Read once.
    /// `SWIFTLITE_RUN_TIME_VNNI=0` in the environment says no (to measure a portable build's own
    /// kernels on a VNNI machine).
    public static let runsVNNIKernels: Bool = {
        #if arch(x86_64) && SWIFTLITE_AVX512VNNI
        if let setting = getenv("SWIFTLITE_RUN_TIME_VNNI"), String(cString: setting) == "0" { return false }
        return swiftlite_cpu_runs_cascadelake_code() != 0
        #else
        return false
        #endif
    }()
}
