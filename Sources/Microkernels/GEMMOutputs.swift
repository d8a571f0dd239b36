#if SWIFTLITE_AVX512
import CX86Intrinsics
#endif

/// The integer product's output stage for quantized CONV_2D: each result requantized with its
/// column's multiplier and shifts (TFLite's `MultiplyByQuantizedMultiplier`), plus the output
/// zero point, clamped, stored as a byte (`UInt8` or `Int8`: the clamp range decides, the low
/// byte is the same). Row `m`, column `n` goes to `base[m · rowStride + n]`; the channel arrays
/// hold one `Int32` per column, padded to a multiple of 16.
///
/// Defined here so that both the engine's kernels and this module's can store through it, each
/// with its own `store` (the engine's in `IntegerGEMM.swift`). It holds plain pointers into the
/// engine's `ChannelRequantization`, no references: each task makes one.
public struct RequantizedGEMMOutput {
    public let base: UnsafeMutablePointer<UInt8>
    public let rowStride: Int
    /// Columns of the product; lanes at or past it are padding and are not stored.
    public let columns: Int
    public let multipliers: UnsafeRawPointer
    public let leftShifts: UnsafeRawPointer
    public let rightShifts: UnsafeRawPointer
    /// Some channel shifts left (a real multiplier of 1 or more): without, the loads, masks and
    /// shifts of that step are skipped.
    public let shiftsLeft: Bool
    /// Some multiplier is `Int32.min`, whose square saturates: the saturating product is used.
    public let saturates: Bool
    public let zeroPoint: Int32, minimum: Int32, maximum: Int32

    public init(base: UnsafeMutablePointer<UInt8>, rowStride: Int, columns: Int,
                multipliers: UnsafeRawPointer, leftShifts: UnsafeRawPointer, rightShifts: UnsafeRawPointer,
                shiftsLeft: Bool, saturates: Bool, zeroPoint: Int32, minimum: Int32, maximum: Int32) {
        self.base = base
        self.rowStride = rowStride
        self.columns = columns
        self.multipliers = multipliers
        self.leftShifts = leftShifts
        self.rightShifts = rightShifts
        self.shiftsLeft = shiftsLeft
        self.saturates = saturates
        self.zeroPoint = zeroPoint
        self.minimum = minimum
        self.maximum = maximum
    }

    /// The same stage for a product's columns from `offset` on, numbered from 0.
    public func dropping(columns offset: Int) -> RequantizedGEMMOutput {
        RequantizedGEMMOutput(base: base + offset, rowStride: rowStride, columns: columns - offset,
                              multipliers: multipliers + 4 * offset, leftShifts: leftShifts + 4 * offset,
                              rightShifts: rightShifts + 4 * offset, shiftsLeft: shiftsLeft, saturates: saturates,
                              zeroPoint: zeroPoint, minimum: minimum, maximum: maximum)
    }
}

/// The raw 32-bit results: row `m`, column `n` at `base[m · rowStride + n]` (tests, and output
/// stages computed after the product).
public struct AccumulatorGEMMOutput {
    public let base: UnsafeMutablePointer<Int32>
    public let rowStride: Int
    /// Columns of the product; lanes at or past it are padding and are not stored.
    public let columns: Int

    public init(base: UnsafeMutablePointer<Int32>, rowStride: Int, columns: Int) {
        self.base = base
        self.rowStride = rowStride
        self.columns = columns
    }

    /// The same results for a product's columns from `offset` on, numbered from 0.
    public func dropping(columns offset: Int) -> AccumulatorGEMMOutput {
        AccumulatorGEMMOutput(base: base + offset, rowStride: rowStride, columns: columns - offset)
    }
}

#if SWIFTLITE_AVX512VNNI
/// Where this module's kernels put sixteen consecutive results of one row.
protocol VNNIOutput {
    func store(_ values: SIMD16<Int32>, row: Int, column: Int)
}

extension RequantizedGEMMOutput: VNNIOutput {
    /// The engine's `RequantizedGEMMOutput.store`, in this module's instructions.
    @inline(always)
    func store(_ values: SIMD16<Int32>, row: Int, column: Int) {
        let destination = base + row * rowStride + column
        let block = requantization(at: column)
        // A constant 16 folds the store's mask away.
        if columns - column >= 16 {
            swiftlite_store_low_bytes(destination, block.apply(values), 16)
        } else {
            swiftlite_store_low_bytes(destination, block.apply(values), columns - column)
        }
    }

    /// The stage of columns `column ..< column + 16` in registers; the left shifts are loaded
    /// only when some channel has one.
    @inline(always)
    func requantization(at column: Int) -> RequantizationBlock {
        let offset = column &* 4
        return RequantizationBlock(
            multipliers: swiftlite_load_dwords(multipliers + offset),
            leftShifts: shiftsLeft ? swiftlite_load_dwords(leftShifts + offset) : SIMD16(),
            rightShifts: swiftlite_load_dwords(rightShifts + offset), saturates: saturates, shiftsLeft: shiftsLeft,
            zeroPoint: zeroPoint, minimum: minimum, maximum: maximum)
    }
}

extension AccumulatorGEMMOutput: VNNIOutput {
    @inline(always)
    func store(_ values: SIMD16<Int32>, row: Int, column: Int) {
        let destination = base + row * rowStride + column
        for lane in 0 ..< min(16, columns - column) { destination[lane] = values[lane] }
    }
}
#endif
