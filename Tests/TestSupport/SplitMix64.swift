/// SplitMix64 (Steele, Lea and Flood 2014): a tiny, fast, deterministic generator, so that random
/// sweeps and seeded inputs are the same on every run and every machine.
///
/// ```swift
/// var rng = SplitMix64(seed: 42)
/// let byte = UInt8.random(in: 0 ... 255, using: &rng)
/// ```
public struct SplitMix64: RandomNumberGenerator, Sendable {
    /// The generator's whole state: the next output is a mix of `state + 0x9E3779B97F4A7C15`.
    public var state: UInt64

    public init(seed: UInt64) { state = seed }

    /// The same as `init(seed:)`, under the name the older test helpers used.
    public init(state: UInt64) { self.state = state }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// The low 32 bits of the next output, as a signed integer (every `Int32` equally likely).
    public mutating func int32() -> Int32 { Int32(truncatingIfNeeded: next()) }
}

/// Deterministic floats uniform in [-1, 1) from a 64-bit linear congruential generator (Knuth's
/// MMIX constants): the values of the float kernel tests, fixed by `state`.
public struct SeededFloats: Sendable {
    public var state: UInt64

    public init(state: UInt64) { self.state = state }

    public mutating func next() -> Float {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Float(state >> 40) / Float(1 << 23) - 1
    }

    /// `count` values.
    public mutating func array(_ count: Int) -> [Float] { (0 ..< count).map { _ in next() } }
}
