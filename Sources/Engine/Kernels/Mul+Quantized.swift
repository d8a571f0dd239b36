import Microkernels
#if SWIFTLITE_AVX2
import SIMDKernels
import SIMDKernelsAVX512
#endif

extension Mul {
    /// Quantized MUL (uint8, int8), as TFLite's reference kernels:
    /// `zpOut + m((x − zpX)(y − zpY))`, with `m` the multiplier of `scaleX · scaleY / scaleOut`
    /// (computed in Float, then widened), clamped to the fused activation's range.
    static func prepareQuantized(_ context: inout PrepareContext, broadcast: Broadcast, activation: FusedActivation) throws(ModelError) -> any Kernel {
        let (lhs, lhsQ, rhs, rhsQ, output, outputQ) = try context.binaryQuantized()
        let multiplier = QuantizedMultiplier(Double(lhsQ.scale * rhsQ.scale / outputQ.scale))
        let range = try context.integerActivationRange(activation, output: output, outputQ)
        let (l, r, o) = (context.node.inputs[Self.lhs], context.node.inputs[Self.rhs], context.node.outputs[Self.output])
        /// The kernel, or the table of its other operand where one is a one-element constant.
        func kernel<T: FixedWidthInteger & Sendable>(_: T.Type) -> any Kernel {
            let kernel = MulQuantized<T>(lhs: l, rhs: r, output: o, broadcast: broadcast, lhsZeroPoint: lhsQ.zeroPoint,
                                         rhsZeroPoint: rhsQ.zeroPoint, multiplier: multiplier, outputZeroPoint: outputQ.zeroPoint, range: range)
            return ByteLookupKernel.binary(T.self, lhs: lhs, rhs: rhs, output: o, outputCount: broadcast.outputCount, kernel.multiplied)
                ?? kernel
        }
        return lhs.dataType == .int8 ? kernel(Int8.self) : kernel(UInt8.self)
    }
}

/// 8-bit MUL: sixteen elements a step in 32-bit lanes (`stage`, lane by lane the scalar
/// `multiplyByQuantizedMultiplier`), the rest of each run one by one (`multiplied`, the reference
/// the vector lanes are tested against). Threads take ranges of the broadcast's runs
/// (`Broadcast.spans`): of the elements for same-shape operands, of the rows for broadcast ones
/// (a squeeze-and-excitation block's `[1, h, w, c] · [1, 1, 1, c]`: rows of `c`). On x86-64, where the
/// output stage has its one-shift form, those two shapes take `QuantizedMultiplication`'s loop,
/// a task's rows in one call (`rows`).
struct MulQuantized<T: FixedWidthInteger & Sendable>: PartitionedKernel {
    let lhs: Int, rhs: Int, output: Int
    let broadcast: Broadcast
    let lhsZeroPoint: Int32, rhsZeroPoint: Int32
    let multiplier: QuantizedMultiplier
    let outputZeroPoint: Int32
    let range: ClosedRange<Int32>
    /// The output stage as sixteen equal channels, for its one-shift form (`applyWide`) where
    /// that is exact for the multiplier (a right shift, no saturation).
    let stage: ChannelRequantization
    /// `stage`'s multipliers and one-shift constants by address, into the buffers it keeps: what
    /// a task reads, without retaining them from every thread. (`unsafe`: memory no one writes
    /// after `init`.)
    nonisolated(unsafe) private let wideStage: (multipliers: UnsafeRawPointer, constants: UnsafeRawPointer)?
    /// How both operands step along the rows of the output, where they do
    /// (`Broadcast.repeatedRow`): rows of `width` elements, the operands `lhsStride` and
    /// `rhsStride` elements apart from row to row (0: one row read again). Same-shape operands
    /// are one row per task (`width` 0: the task's elements).
    let rows: (lhsStride: Int, rhsStride: Int, width: Int)?

    init(lhs: Int, rhs: Int, output: Int, broadcast: Broadcast, lhsZeroPoint: Int32, rhsZeroPoint: Int32,
         multiplier: QuantizedMultiplier, outputZeroPoint: Int32, range: ClosedRange<Int32>) {
        (self.lhs, self.rhs, self.output, self.broadcast) = (lhs, rhs, output, broadcast)
        (self.lhsZeroPoint, self.rhsZeroPoint, self.multiplier) = (lhsZeroPoint, rhsZeroPoint, multiplier)
        (self.outputZeroPoint, self.range) = (outputZeroPoint, range)
        let stage = ChannelRequantization(Array(repeating: multiplier, count: 16), zeroPoint: outputZeroPoint,
                                          range: (range.lowerBound, range.upperBound))
        self.stage = stage
        wideStage = stage.wide.map { (UnsafeRawPointer(stage.multipliers.pointer), UnsafeRawPointer($0.pointer)) }
        rows = broadcast.isElementwise ? (0, 0, 0) : broadcast.repeatedRow
    }

    /// The work of one element in the units `TensorMemory.parallelize` counts (a convolution's
    /// multiply-adds): a product and an output stage per 16 lanes, as a byte table look-up.
    static var elementWork: Int { ByteLookupKernel.lookupWork }

    func eval(_ memory: TensorMemory) {
        memory.parallelize(self, count: broadcast.units, granularity: broadcast.unitGranularity,
                           work: broadcast.outputCount * Self.elementWork)
    }

    // Kernels run behind `any Kernel`, whose witness would be the unspecialised generic code;
    // these make it jump to the 8-bit specialisations.
    @_specialize(where T == Int8)
    @_specialize(where T == UInt8)
    func evalPart(_ units: Range<Int>, step: Int, worker: Int, memory: TensorMemory) {
        let x = memory.input(lhs, as: T.self), y = memory.input(rhs, as: T.self), z = memory.output(output, as: T.self)
        #if SWIFTLITE_AVX2
        if let wide = wideStage, let rows {
            // Same-shape operands: the task's elements as one row; else the task's rows of `width`.
            let u = units.lowerBound
            let (count, width, l, r, o) = rows.width == 0 ? (1, units.count, u, u, u)
                : (units.count, rows.width, u * rows.lhsStride, u * rows.rhsStride, u * rows.width)
            let run = KernelSelection.runsAVX512 ? SIMDKernelsAVX512.QuantizedMultiplication.rows : SIMDKernels.QuantizedMultiplication.rows
            run(T.isSigned, x + l, rows.lhsStride, y + r, rows.rhsStride,
                UnsafeMutableRawPointer(z + o).assumingMemoryBound(to: UInt8.self), count, width,
                (lhsZeroPoint, rhsZeroPoint, outputZeroPoint), (wide.multipliers, wide.constants), stage.clampsBelowZeroPoint,
                range.lowerBound, range.upperBound)
            return
        }
        #endif
        let (xStep, yStep) = broadcast.innerStrides
        broadcast.spans(units) { l, r, o, count in
            multiply(x + l, repeatingLeft: xStep == 0, y + r, repeatingRight: yStep == 0, z + o, count: count)
        }
    }

    /// One element: the reference arithmetic.
    @inline(__always)
    func multiplied(_ x: T, _ y: T) -> T {
        // Zero points lie in the type's range, so |product| ≤ 255².
        let product = (Int32(x) - lhsZeroPoint) * (Int32(y) - rhsZeroPoint)
        let value = outputZeroPoint &+ multiplyByQuantizedMultiplier(product, multiplier)
        return T(truncatingIfNeeded: min(max(value, range.lowerBound), range.upperBound))
    }

    /// `count` outputs from `x` and `y`, each stepping by one element or repeating its first.
    /// The lanes take TFLite's `MultiplyByQuantizedMultiplier` in the one-shift form where it is
    /// exact and the build has it (AVX2), else `stage`'s block without its saturation step, exact
    /// for every multiplier but `Int32.min` (which no scale ratio gives, `QuantizedMultiplier`'s being
    /// below 2^31; such a kernel takes the reference arithmetic throughout).
    @_specialize(where T == Int8)
    @_specialize(where T == UInt8)
    func multiply(_ x: UnsafePointer<T>, repeatingLeft: Bool, _ y: UnsafePointer<T>, repeatingRight: Bool,
                  _ z: UnsafeMutablePointer<T>, count: Int) {
        let xOffset = SIMD16<Int32>(repeating: lhsZeroPoint), yOffset = SIMD16<Int32>(repeating: rhsZeroPoint)
        let out = UnsafeMutableRawPointer(z).assumingMemoryBound(to: UInt8.self)
        @inline(__always)
        func lanes(_ p: UnsafePointer<T>, at i: Int, repeating: Bool) -> SIMD16<Int32> {
            if repeating { return SIMD16(repeating: Int32(p[0])) }
            let raw = UnsafeRawPointer(p + i)
            return T.isSigned ? widened(raw.loadUnaligned(as: SIMD16<Int8>.self)) : widened(raw.loadUnaligned(as: SIMD16<UInt8>.self))
        }
        let end = multiplier.multiplier == Int32.min ? 0 : count - count % 16
        var i = 0
        #if SWIFTLITE_AVX2
        if let wide = wideStage {
            let nonnegative = stage.clampsBelowZeroPoint
            while i < end {
                let product = (lanes(x, at: i, repeating: repeatingLeft) &- xOffset) &* (lanes(y, at: i, repeating: repeatingRight) &- yOffset)
                let scaled = ChannelRequantization.applyWide(product, multipliers: wide.multipliers, constants: wide.constants,
                                                             nonnegative: nonnegative)!
                storeClampedBytes(scaled, offset: outputZeroPoint, minimum: range.lowerBound, maximum: range.upperBound,
                                  to: out + i, count: 16)
                i &+= 16
            }
        }
        #endif
        let block = stage.block(at: 0)
        while i < end {
            let product = (lanes(x, at: i, repeating: repeatingLeft) &- xOffset) &* (lanes(y, at: i, repeating: repeatingRight) &- yOffset)
            // A shift left by 0 where the multiplier shifts right: one instruction either way.
            storeLowBytes(block.apply(product, saturating: false, shiftingLeft: true), to: out + i, count: 16)
            i &+= 16
        }
        while i < count {
            z[i] = multiplied(x[repeatingLeft ? 0 : i], y[repeatingRight ? 0 : i])
            i += 1
        }
    }
}
