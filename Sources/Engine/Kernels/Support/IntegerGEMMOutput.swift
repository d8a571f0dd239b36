import Microkernels

/// Where `IntegerGEMM.multiply` puts its results: sixteen consecutive columns of one row at a
/// time (lanes at or past the product's column count are padding and must not be stored).
protocol IntegerGEMMOutput {
    func store(_ values: SIMD16<Int32>, row: Int, column: Int)
    /// The same stage as one the `.avx512vnni` kernels have their own `store` for (they are
    /// compiled apart and cannot call this one's), or nil: they then pass their results on
    /// through a buffer of accumulators.
    var vnniStage: VNNIStage? { get }
}

extension IntegerGEMMOutput {
    var vnniStage: VNNIStage? { nil }
}

/// The output stages the `.avx512vnni` kernels store through themselves.
enum VNNIStage {
    case requantized(RequantizedGEMMOutput)
    case accumulators(AccumulatorGEMMOutput)
}

/// Requantizes each result with a per-column `ChannelRequantization` and stores bytes (the
/// type is in Microkernels, where the `.avx512vnni` kernels store through it too).
///
/// It holds plain pointers to the stage's channel arrays: through `stage.apply`, every byte
/// store (which may alias anything) made the kernels reload each array's address from its
/// buffer object before the next block.
extension RequantizedGEMMOutput: IntegerGEMMOutput {
    init(base: UnsafeMutablePointer<UInt8>, rowStride: Int, columns: Int, stage: ChannelRequantization) {
        self.init(base: base, rowStride: rowStride, columns: columns,
                  multipliers: UnsafeRawPointer(stage.multipliers.pointer),
                  leftShifts: UnsafeRawPointer(stage.leftShifts.pointer),
                  rightShifts: UnsafeRawPointer(stage.rightShifts.pointer),
                  shiftsLeft: stage.shiftsLeft, saturates: stage.saturates,
                  zeroPoint: stage.zeroPoint, minimum: stage.minimum, maximum: stage.maximum,
                  wide: stage.wide.map { UnsafeRawPointer($0.pointer) })
    }

    var vnniStage: VNNIStage? { .requantized(self) }

    @inline(always)
    func store(_ values: SIMD16<Int32>, row: Int, column: Int) {
        let offset = column &* 4
        let destination = base + row * rowStride + column
        // The one-shift form where the stage has it and the build has code for it (AVX2).
        if let wide, let product = ChannelRequantization.applyWide(
            values, multipliers: multipliers + offset, constants: wide + (column >> 4) &* (WideRequantization.valuesPerBlock &* 8),
            nonnegative: minimum >= zeroPoint) {
            return storeClampedBytes(product, offset: zeroPoint, minimum: minimum, maximum: maximum, to: destination,
                                     count: columns - column)
        }
        // The left shifts are loaded only when some channel has one (most convolutions: none).
        let block = RequantizationBlock(
            multipliers: loadLanes(multipliers + offset), leftShifts: shiftsLeft ? loadLanes(leftShifts + offset) : SIMD16(),
            rightShifts: loadLanes(rightShifts + offset), saturates: saturates, shiftsLeft: shiftsLeft,
            zeroPoint: zeroPoint, minimum: minimum, maximum: maximum)
        storeLowBytes(block.apply(values), to: destination, count: columns - column)
    }
}

/// Stores the raw 32-bit results (tests, and kernels with their own output stage).
extension AccumulatorGEMMOutput: IntegerGEMMOutput {
    var vnniStage: VNNIStage? { .accumulators(self) }

    @inline(always)
    func store(_ values: SIMD16<Int32>, row: Int, column: Int) {
        let destination = base + row * rowStride + column
        for lane in 0 ..< min(16, columns - column) { destination[lane] = values[lane] }
    }
}

/// What packing weight bytes needs to know before it writes a panel: each column's
/// `Σ_k (w − zp)` (the padding adds 0) and the extremes of all the weights, the padding's 0
/// among them, from one pass over the bytes.
struct WeightByteStatistics {
    /// `Σ_k (w − zp)` of each column (wrapping, as the bias folding uses it).
    let sums: [Int32]
    /// The smallest and largest `w − zp`, as `IntegerGEMM`'s packing of values finds them (255
    /// and −255 when there are no weights).
    let lowest: Int32, highest: Int32

    init(_ bytes: UnsafeRawBufferPointer, columns: Int, rowLength: Int, depth: Int, encoding: WeightEncoding) {
        // int8 bytes with their sign bit flipped: unsigned order is then the values' order, and
        // the value is `key − base`.
        let flip: UInt8 = encoding.isSigned ? 0x80 : 0
        let base = (encoding.isSigned ? 128 : 0) &+ encoding.zeroPoint
        var lowKey: UInt8 = 255, highKey: UInt8 = 0
        var sums = [Int32](repeating: 0, count: columns)
        if let source = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) {
            for n in 0 ..< columns {
                let row = source + n * rowLength
                var sum: UInt32 = 0, low: UInt8 = 255, high: UInt8 = 0
                // Runs of at most 257 keys summed in 16 bits (257 · 255 < 2^16), which LLVM
                // vectorizes twice as wide as a 32-bit sum.
                var start = 0
                while start < rowLength {
                    let end = min(rowLength, start + 257)
                    var run: UInt16 = 0
                    for k in start ..< end {
                        let key = row[k] ^ flip
                        run &+= UInt16(key)
                        low = min(low, key)
                        high = max(high, key)
                    }
                    sum &+= UInt32(run)
                    start = end
                }
                sums[n] = Int32(truncatingIfNeeded: sum) &- Int32(truncatingIfNeeded: rowLength) &* base
                lowKey = min(lowKey, low)
                highKey = max(highKey, high)
            }
        }
        var lowest: Int32 = 255, highest: Int32 = -255
        if columns > 0, rowLength > 0 {
            lowest = Int32(lowKey) - base
            highest = Int32(highKey) - base
        }
        if columns > 0, rowLength < depth {
            lowest = min(lowest, 0)
            highest = max(highest, 0)
        }
        self.sums = sums
        self.lowest = lowest
        self.highest = highest
    }

    /// `s`, which the `.avx512vnni` layout subtracts from every weight so that all fit `Int8`:
    /// 0 when they fit as they are, else the lowest moved to −128.
    var offset: Int32 { lowest < -128 || highest > 127 ? lowest + 128 : 0 }

    /// The layout to pack directly from the bytes for a product asked to use `layout`: itself
    /// when it is `.avx512vnni` (and every weight fits `Int8` once offset: a byte's 256 values
    /// and the padding's 0, which is the value of the byte `zp`, always do for a valid zero
    /// point) or `.avx2`; `.avx2Bytes` where every weight fits `Int8` as it is, else `.avx2`;
    /// nil for `.int16` or weights outside −255...255, which take the general form.
    func directLayout(for layout: IntegerGEMM.Layout) -> IntegerGEMM.Layout? {
        guard lowest >= -255, highest <= 255 else { return nil }
        switch layout {
        case .avx512vnni: return highest - offset <= 127 ? .avx512vnni : nil
        case .avx2: return .avx2
        case .avx2Bytes: return lowest >= -128 && highest <= 127 ? .avx2Bytes : .avx2
        case .int16: return nil
        }
    }
}
