import Foundation

extension Interpreter {
    /// Fills every input with deterministic noise, for benchmarks (whose inputs must be the same
    /// from run to run and process to process, but need not mean anything).
    ///
    /// One SplitMix64 stream from `seed` runs through the inputs in order, one draw per element of
    /// a float32 input (its top 24 bits scaled to [−1, 1)) and one per byte of any other input
    /// (its low 8 bits).
    public func fillInputsWithNoise(seed: UInt64 = 0) throws(ModelError) {
        var state = seed
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        for i in 0 ..< inputTensorCount {
            let input = try input(at: i)
            var bytes = Data(count: input.data.count)
            bytes.withUnsafeMutableBytes { raw in
                if input.dataType == .float32 {
                    let floats = raw.bindMemory(to: Float.self)
                    for k in floats.indices { floats[k] = Float(next() >> 40) / Float(1 << 23) - 1 }
                } else {
                    for k in raw.indices { raw[k] = UInt8(truncatingIfNeeded: next()) }
                }
            }
            try copy(bytes, toInputAt: i)
        }
    }
}
