import TestSupport

// The names the engine tests gave their copies of SplitMix64 before it moved to TestSupport,
// kept so that tests written against them compile without importing TestSupport.

/// SplitMix64 under the name of the kernel sweeps (`KernelTestRandom(seed:)`).
typealias KernelTestRandom = SplitMix64

/// SplitMix64 under the name of the malformed-model tests (`SeededGenerator(state:)`).
typealias SeededGenerator = SplitMix64

extension SystemRandomNumberGenerator {
    /// A deterministic generator for tests (SplitMix64).
    static func seeded(_ seed: UInt64) -> SplitMix64 { SplitMix64(seed: seed) }
}
