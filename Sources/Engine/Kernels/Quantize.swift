/// QUANTIZE: float32 → uint8/int8 (`AffineQuantize`), or 8-bit → 8-bit requantization
/// (`Requantize`: uint8 ↔ int8, int8 → int8, uint8 → uint8), as TFLite's reference kernels.
///
/// - From float: `q = clamp(Int32(roundf(x / scale)) + zeroPoint)`, divided and rounded (half
///   away from zero) in Float, with x86-64's conversion of out-of-range values to `Int32.min`.
/// - Between 8-bit types: `clamp(zpOut + m(q − zpIn))`, `m` the multiplier of
///   `inputScale / outputScale` divided in Double. Converter-made graphs use this with equal
///   scales and zero points 128 apart to turn uint8 model inputs into int8 and back.
enum Quantize {
    static let input = 0, output = 0

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        try context.expect(inputs: 1 ... 1, outputs: 1)
        let input = try context.input(Self.input), output = try context.output(Self.output)
        try context.expect(output, is: .uint8, .int8, role: "output")
        try context.setOutputShape(Self.output, input.shape)
        let outputQ = try context.affineQuantization(of: output, role: "output")
        let (i, o) = (context.node.inputs[Self.input], context.node.outputs[Self.output])
        switch input.dataType {
        case .float32:
            if output.dataType == .int8 {
                return QuantizeFloat32<Int8>(quantization: outputQ, count: input.elementCount, input: i, output: o)
            }
            return QuantizeFloat32<UInt8>(quantization: outputQ, count: input.elementCount, input: i, output: o)
        case .uint8, .int8:
            let inputQ = try context.affineQuantization(of: input, role: "input")
            let multiplier = QuantizedMultiplier(Double(inputQ.scale) / Double(outputQ.scale))
            let range = output.dataType == .int8 ? int32Range(of: Int8.self) : int32Range(of: UInt8.self)
            return context.byteLookupKernel(input) { x in
                let value = multiplyByQuantizedMultiplier(x - inputQ.zeroPoint, multiplier) &+ outputQ.zeroPoint
                return min(max(value, range.lowerBound), range.upperBound)
            }
        default:
            throw context.unsupported("input type \(input.dataType), expected float32, uint8 or int8")
        }
    }
}

/// Float32 → uint8/int8 affine quantization, the threads taking ranges of whole vectors.
struct QuantizeFloat32<T: FixedWidthInteger & Sendable>: PartitionedKernel {
    let quantization: AffineQuantization
    let count: Int
    let input: Int, output: Int

    // Kernels run behind `any Kernel`, whose witness would be the unspecialised generic code;
    // these make it jump to the 8-bit specialisations.
    @_specialize(where T == Int8)
    @_specialize(where T == UInt8)
    func eval(_ memory: TensorMemory) {
        memory.parallelize(self, count: count, granularity: 16, work: count * 4)
    }

    @_specialize(where T == Int8)
    @_specialize(where T == UInt8)
    func evalPart(_ range: Range<Int>, step: Int, worker: Int, memory: TensorMemory) {
        let x = memory.input(input, as: Float.self) + range.lowerBound
        let y = UnsafeMutableRawPointer(memory.output(output, as: T.self) + range.lowerBound).assumingMemoryBound(to: UInt8.self)
        // Branch-free, so that LLVM vectorizes the loop (`roundf` is a library call per element).
        for i in 0 ..< range.count { y[i] = UInt8(truncatingIfNeeded: quantizedWithoutRoundf(x[i])) }
    }

    /// One element, as TFLite's reference computes it: the definition `quantizedWithoutRoundf`
    /// is tested against.
    @inline(__always)
    func quantized(_ x: Float) -> T {
        let rounded = truncatingToInt32LikeX86((x / quantization.scale).rounded(.toNearestOrAwayFromZero))
        return T(truncatingIfNeeded: min(max(rounded &+ quantization.zeroPoint, Int32(T.min)), Int32(T.max)))
    }

    /// `quantized(x)` without a library call or a branch: the same division; NaN and values
    /// outside `−2³¹ ..< 2³¹` become `Int32.min`, as x86-64 converts them; rounding half away from
    /// zero is truncation plus one step away from zero where the dropped fraction (exact:
    /// `v − trunc(v)` is representable) is at least one half; the zero point is added wrapping,
    /// so `Int32.min + zp` with a negative `zp` clamps to the upper bound, as the reference's
    /// overflowing `int` addition does on x86-64.
    @inline(__always)
    func quantizedWithoutRoundf(_ x: Float) -> T {
        let v = x / quantization.scale
        let inRange = v >= -2_147_483_648.0 && v < 2_147_483_648.0  // false for NaN
        let safe = inRange ? v : 0
        let truncated = Int32(safe)
        let fraction = safe - Float(truncated)
        let rounded = truncated &+ (fraction >= 0.5 ? 1 : 0) &- (fraction <= -0.5 ? 1 : 0)
        let q = (inRange ? rounded : Int32.min) &+ quantization.zeroPoint
        return T(truncatingIfNeeded: min(max(q, Int32(T.min)), Int32(T.max)))
    }
}
