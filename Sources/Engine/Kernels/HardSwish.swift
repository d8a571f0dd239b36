/// HARD_SWISH: `x · relu6(x + 3) / 6`, in TFLite's reference order: multiply first, then divide by 6.
enum HardSwish {
    static let input = 0, output = 0

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        try context.prepareElementwise(float: { HardSwishFloat32(count: $0, input: $1, output: $2) },
                                       quantized: prepareQuantized(_:count:))
    }
}

/// Threads take ranges of whole cache lines, as in `ReluFloat32`.
struct HardSwishFloat32: PartitionedKernel {
    let count: Int
    let input: Int, output: Int

    func eval(_ memory: TensorMemory) {
        memory.parallelize(self, count: count, granularity: 16, work: count * TensorMemory.elementWork)
    }

    func evalPart(_ range: Range<Int>, step: Int, worker: Int, memory: TensorMemory) {
        let x = memory.input(input, as: Float.self), y = memory.output(output, as: Float.self)
        for i in range { y[i] = Self.hardSwish(x[i]) }
    }

    /// `x · clamp(x + 3, 0, 6) / 6`. Dividing by 6 (not multiplying by 1/6) keeps the result
    /// bit-identical to the reference. A NaN `x` gives NaN whichever way the clamp treats it
    /// (`x` is the product's first operand); `x + 3` is never −0.
    @inline(always)
    static func hardSwish(_ x: Float) -> Float { x * FloatGEMM.clamp(x + 3, 0, 6) / 6 }

    /// `hardSwish` lane by lane.
    @inline(always)
    static func hardSwish(_ x: SIMD8<Float>) -> SIMD8<Float> {
        x * FloatGEMM.clamp(x + SIMD8(repeating: 3), 0, 6) / SIMD8(repeating: 6)
    }
}
