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
/// with its own `store` (the engine's in `IntegerGEMMOutput.swift`). It holds plain pointers into the
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
    /// The channels' `WideRequantization` constants, which this module's kernels apply instead
    /// of the two rounding steps: given only when every channel shifts right and no multiplier
    /// is `Int32.min` (else the kernels take the two steps).
    public let wide: UnsafeRawPointer?

    public init(base: UnsafeMutablePointer<UInt8>, rowStride: Int, columns: Int,
                multipliers: UnsafeRawPointer, leftShifts: UnsafeRawPointer, rightShifts: UnsafeRawPointer,
                shiftsLeft: Bool, saturates: Bool, zeroPoint: Int32, minimum: Int32, maximum: Int32,
                wide: UnsafeRawPointer?) {
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
        self.wide = wide
    }

    /// The same stage for a product's columns from `offset` (a multiple of 16) on, numbered from 0.
    public func dropping(columns offset: Int) -> RequantizedGEMMOutput {
        assert(offset % 16 == 0, "column ranges start at a block of 16 channels")
        return RequantizedGEMMOutput(
            base: base + offset, rowStride: rowStride, columns: columns - offset,
            multipliers: multipliers + 4 * offset, leftShifts: leftShifts + 4 * offset,
            rightShifts: rightShifts + 4 * offset, shiftsLeft: shiftsLeft, saturates: saturates,
            zeroPoint: zeroPoint, minimum: minimum, maximum: maximum,
            wide: wide.map { $0 + offset / 16 * WideRequantization.valuesPerBlock * 8 })
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
/// Where this module's kernels put sixteen consecutive results of one row. A tile asks for the
/// `Block` of each of its column blocks once and passes it to every row's store: what the
/// stores read besides the results (the one-shift form's constants) is then loaded once per
/// tile, where a load inside each store is repeated after every store before it (which might
/// write over it, as far as the compiler knows).
protocol VNNIOutput {
    associatedtype Block
    /// Columns of the product stored; lanes at or past it are never stored.
    var columns: Int { get }
    /// What storing the 16 columns at `column` reads besides the results.
    func block(at column: Int) -> Block
    func store(_ values: SIMD16<Int32>, row: Int, column: Int, block: Block)
    /// `width` (2 or 4) blocks of 16 results of one row from `column` (`c0` first; those past
    /// `width` are ignored, and so are their `blocks`).
    func store(_ c0: SIMD16<Int32>, _ c1: SIMD16<Int32>, _ c2: SIMD16<Int32>, _ c3: SIMD16<Int32>,
               row: Int, column: Int, width: Int, blocks: (Block, Block, Block, Block))
    /// A tile's results: `rows` (1 or 4) rows of `width` (1, 2 or 4) blocks of 16 from `column`,
    /// `r0` at row `row` (`r1`...`r3` are ignored for one row, the blocks past `width` always).
    func storeTile(_ r0: TileRow, _ r1: TileRow, _ r2: TileRow, _ r3: TileRow, rows: Int, row: Int, column: Int, width: Int)
}

/// One row of a tile's results: up to four blocks of 16 columns.
typealias TileRow = (SIMD16<Int32>, SIMD16<Int32>, SIMD16<Int32>, SIMD16<Int32>)

extension VNNIOutput {
    @inline(always)
    func store(_ c0: SIMD16<Int32>, _ c1: SIMD16<Int32>, _ c2: SIMD16<Int32>, _ c3: SIMD16<Int32>,
               row: Int, column: Int, width: Int, blocks: (Block, Block, Block, Block)) {
        storeBlocks(c0, c1, c2, c3, row: row, column: column, width: width, blocks: blocks)
    }

    @inline(always)
    func storeTile(_ r0: TileRow, _ r1: TileRow, _ r2: TileRow, _ r3: TileRow, rows: Int, row: Int, column: Int, width: Int) {
        storeTileByRows(r0, r1, r2, r3, rows: rows, row: row, column: column, width: width)
    }

    /// A tile's rows one at a time, every block's `Block` taken once for all of them: `width`
    /// (1, 2 or 4) blocks per row, one block through the one-block `store`.
    @inline(always)
    func storeTileByRows(_ r0: TileRow, _ r1: TileRow, _ r2: TileRow, _ r3: TileRow, rows: Int, row: Int, column: Int, width: Int) {
        let blocks = blocks(at: column, width: width)
        @inline(always)
        func storeRow(_ r: TileRow, _ offset: Int) {
            if width == 1 {
                store(r.0, row: row + offset, column: column, block: blocks.0)
            } else {
                store(r.0, r.1, r.2, r.3, row: row + offset, column: column, width: width, blocks: blocks)
            }
        }
        storeRow(r0, 0)
        if rows == 4 {
            storeRow(r1, 1)
            storeRow(r2, 2)
            storeRow(r3, 3)
        }
    }

    /// The blocks of a row one at a time, through the one-block `store`.
    @inline(always)
    func storeBlocks(_ c0: SIMD16<Int32>, _ c1: SIMD16<Int32>, _ c2: SIMD16<Int32>, _ c3: SIMD16<Int32>,
                     row: Int, column: Int, width: Int, blocks: (Block, Block, Block, Block)) {
        store(c0, row: row, column: column, block: blocks.0)
        store(c1, row: row, column: column + 16, block: blocks.1)
        if width == 4 {
            store(c2, row: row, column: column + 32, block: blocks.2)
            store(c3, row: row, column: column + 48, block: blocks.3)
        }
    }

    /// The blocks of `width` (1, 2 or 4) column blocks from `column`; those past `width` repeat
    /// the first.
    @inline(always)
    func blocks(at column: Int, width: Int) -> (Block, Block, Block, Block) {
        let b0 = block(at: column)
        let b1 = width >= 2 ? block(at: column + 16) : b0
        return width == 4 ? (b0, b1, block(at: column + 32), block(at: column + 48)) : (b0, b1, b0, b0)
    }
}

/// How a `RequantizingStore` computes the stage of sixteen columns, from the `Constants` of
/// their block: `scaled`, to which `offset` is still to be added (the stage's zero point, or 0
/// where `scaled` has added it), before the clamp (the store clamps again). The stores of two or
/// four blocks add `offset` to words, after the first pack (`swiftlite_store_clamped_bytes`):
/// one `vpaddsw` per 32 results instead of a `vpaddd` per 16.
protocol RequantizationForm {
    associatedtype Constants
    static func constants(of stage: RequantizedGEMMOutput, column: Int) -> Constants
    static func scaled(_ values: SIMD16<Int32>, _ constants: Constants, of stage: RequantizedGEMMOutput) -> SIMD16<Int32>
    static func offset(of stage: RequantizedGEMMOutput) -> Int32
}

extension RequantizationForm {
    /// The sixteen results with their offset, before the clamp.
    @inline(always)
    static func requantized(_ values: SIMD16<Int32>, _ constants: Constants, of stage: RequantizedGEMMOutput) -> SIMD16<Int32> {
        scaled(values, constants, of: stage) &+ SIMD16(repeating: offset(of: stage))
    }
}

/// The one-shift form (`WideRequantization`); the stage must have its constants.
enum WideForm: RequantizationForm {
    @inline(always)
    static func constants(of stage: RequantizedGEMMOutput, column: Int) -> WideBlock { WideBlock(stage, column: column) }

    @inline(always)
    static func scaled(_ values: SIMD16<Int32>, _ constants: WideBlock, of stage: RequantizedGEMMOutput) -> SIMD16<Int32> {
        constants.scaled(values, nonnegative: false)
    }

    @inline(always)
    static func offset(of stage: RequantizedGEMMOutput) -> Int32 { stage.zeroPoint }
}

/// The one-shift form without its correction for negative products
/// (`swiftlite_requantize_wide_nonnegative`): the same bytes as `WideForm` for stages whose
/// clamp starts at or above the zero point (`RequantizedGEMMOutput.clampsBelowZeroPoint`).
enum WideNonNegativeForm: RequantizationForm {
    @inline(always)
    static func constants(of stage: RequantizedGEMMOutput, column: Int) -> WideBlock { WideBlock(stage, column: column) }

    @inline(always)
    static func scaled(_ values: SIMD16<Int32>, _ constants: WideBlock, of stage: RequantizedGEMMOutput) -> SIMD16<Int32> {
        constants.scaled(values, nonnegative: true)
    }

    @inline(always)
    static func offset(of stage: RequantizedGEMMOutput) -> Int32 { stage.zeroPoint }
}

/// One block of 16 channels' constants of the one-shift form (the `Constants` of `WideForm`
/// and `WideNonNegativeForm`), loaded once for the rows of a tile or the pixels of a row.
struct WideBlock {
    let multipliers, oddMultipliers, evenNudges, oddNudges, shifts: SIMD16<Int32>

    /// The block at `column` (a multiple of 16) of a stage that has the wide form.
    @inline(always)
    init(_ stage: RequantizedGEMMOutput, column: Int) {
        let constants = stage.wide.unsafelyUnwrapped + (column >> 4) &* (WideRequantization.valuesPerBlock &* 8)
        multipliers = swiftlite_load_dwords(stage.multipliers + column &* 4)
        oddMultipliers = swiftlite_load_dwords(constants)
        evenNudges = swiftlite_load_dwords(constants + 64)
        oddNudges = swiftlite_load_dwords(constants + 128)
        shifts = swiftlite_load_dwords(constants + 192)
    }

    /// `WideForm.scaled`, or `WideNonNegativeForm.scaled` when `nonnegative`.
    @inline(always)
    func scaled(_ values: SIMD16<Int32>, nonnegative: Bool) -> SIMD16<Int32> {
        nonnegative
            ? swiftlite_requantize_wide_nonnegative_block(values, multipliers, oddMultipliers, evenNudges, oddNudges, shifts)
            : swiftlite_requantize_wide_block(values, multipliers, oddMultipliers, evenNudges, oddNudges, shifts)
    }
}

/// The two rounding steps lane by lane (`RequantizationBlock`), for the stages the wide form
/// does not cover; its constants stay where they are (the column). Its results have the zero
/// point added and are clamped already.
enum LaneForm: RequantizationForm {
    @inline(always)
    static func constants(of stage: RequantizedGEMMOutput, column: Int) -> Int { column }

    @inline(always)
    static func scaled(_ values: SIMD16<Int32>, _ column: Int, of stage: RequantizedGEMMOutput) -> SIMD16<Int32> {
        stage.requantization(at: column).apply(values)
    }

    @inline(always)
    static func offset(of stage: RequantizedGEMMOutput) -> Int32 { 0 }
}

/// What the engine's `RequantizedGEMMOutput.store` stores, in this module's instructions and in
/// the stage's `Form`: one block of 16 columns, or rows of 2 or 4 blocks packed to bytes at once.
struct RequantizingStore<Form: RequantizationForm>: VNNIOutput {
    let stage: RequantizedGEMMOutput

    var columns: Int { stage.columns }

    @inline(always)
    func block(at column: Int) -> Form.Constants { Form.constants(of: stage, column: column) }

    @inline(always)
    func store(_ values: SIMD16<Int32>, row: Int, column: Int, block: Form.Constants) {
        storeRequantized(Form.requantized(values, block, of: stage), row: row, column: column)
    }

    /// Sixteen requantized results at `column`, clamped and stored as bytes.
    @inline(always)
    func storeRequantized(_ unclamped: SIMD16<Int32>, row: Int, column: Int) {
        let destination = stage.base + row * stage.rowStride + column
        var clamped = SIMD16<Int32>()
        // A lane loop, which LLVM makes one `vpmaxsd` and one `vpminsd` (see RequantizationBlock).
        for lane in 0 ..< 16 { clamped[lane] = min(max(unclamped[lane], stage.minimum), stage.maximum) }
        // A constant 16 folds the store's mask away.
        if stage.columns - column >= 16 {
            swiftlite_store_low_bytes(destination, clamped, 16)
        } else {
            swiftlite_store_low_bytes(destination, clamped, stage.columns - column)
        }
    }

    /// `width` (2 or 4) blocks of 16 results of one row from `column`, packed to bytes together
    /// (`swiftlite_store_clamped_bytes`) when the clamp range lies inside a byte's, else one
    /// block at a time.
    @inline(always)
    func store(_ c0: SIMD16<Int32>, _ c1: SIMD16<Int32>, _ c2: SIMD16<Int32>, _ c3: SIMD16<Int32>,
               row: Int, column: Int, width: Int, blocks: (Form.Constants, Form.Constants, Form.Constants, Form.Constants)) {
        guard let unsignedBytes = stage.packedBytesAreUnsigned else {
            return storeBlocks(c0, c1, c2, c3, row: row, column: column, width: width, blocks: blocks)
        }
        let q0 = Form.scaled(c0, blocks.0, of: stage), q1 = Form.scaled(c1, blocks.1, of: stage)
        let q2 = width == 4 ? Form.scaled(c2, blocks.2, of: stage) : q0
        let q3 = width == 4 ? Form.scaled(c3, blocks.3, of: stage) : q0
        swiftlite_store_clamped_bytes(stage.base + row * stage.rowStride + column, q0, q1, q2, q3, width,
                                      unsignedBytes ? 1 : 0, Form.offset(of: stage), stage.minimum, stage.maximum,
                                      min(stage.columns - column, 16 * width))
    }
}

extension RequantizingStore {
    /// A tile's results requantized one block of columns at a time, for all its rows, holding
    /// only that block's constants (the 16 results and one block's five vectors fit the 32
    /// registers; all four blocks' constants beside the results did not, and were spilled),
    /// then clamped, packed and stored row by row. One block per row, or a clamp range wider
    /// than a byte's: row by row through the one-block `store`.
    @inline(always)
    func storeTile(_ r0: TileRow, _ r1: TileRow, _ r2: TileRow, _ r3: TileRow, rows: Int, row: Int, column: Int, width: Int) {
        guard width > 1, let unsignedBytes = stage.packedBytesAreUnsigned else {
            return storeTileByRows(r0, r1, r2, r3, rows: rows, row: row, column: column, width: width)
        }
        var (r0, r1, r2, r3) = (r0, r1, r2, r3)
        @inline(always)
        func requantize(_ a: inout SIMD16<Int32>, _ b: inout SIMD16<Int32>, _ c: inout SIMD16<Int32>, _ d: inout SIMD16<Int32>,
                        column: Int) {
            let constants = block(at: column)
            a = Form.scaled(a, constants, of: stage)
            if rows == 4 {
                b = Form.scaled(b, constants, of: stage)
                c = Form.scaled(c, constants, of: stage)
                d = Form.scaled(d, constants, of: stage)
            }
        }
        requantize(&r0.0, &r1.0, &r2.0, &r3.0, column: column)
        requantize(&r0.1, &r1.1, &r2.1, &r3.1, column: column + 16)
        if width == 4 {
            requantize(&r0.2, &r1.2, &r2.2, &r3.2, column: column + 32)
            requantize(&r0.3, &r1.3, &r2.3, &r3.3, column: column + 48)
        }
        let count = min(stage.columns - column, 16 * width), unsigned: Int32 = unsignedBytes ? 1 : 0
        @inline(always)
        func pack(_ r: TileRow, _ offset: Int) {
            swiftlite_store_clamped_bytes(stage.base + (row + offset) * stage.rowStride + column, r.0, r.1,
                                          width == 4 ? r.2 : r.0, width == 4 ? r.3 : r.0, width, unsigned,
                                          Form.offset(of: stage), stage.minimum, stage.maximum, count)
        }
        pack(r0, 0)
        if rows == 4 {
            pack(r1, 1)
            pack(r2, 2)
            pack(r3, 3)
        }
    }
}

extension RequantizedGEMMOutput {
    /// Whether every result below the zero point is clamped up to `minimum` or above, so that
    /// requantized values ≤ 0 need not be told apart (`WideNonNegativeForm`).
    @inline(always)
    var clampsBelowZeroPoint: Bool { minimum >= zeroPoint }

    /// Whether the clamp range fits the unsigned (true) or the signed (false) bytes that the
    /// packing instructions saturate to; nil when it fits neither (it is wider than a byte's).
    @inline(always)
    var packedBytesAreUnsigned: Bool? {
        if minimum >= 0 && maximum <= 255 { return true }
        if minimum >= -128 && maximum <= 127 { return false }
        return nil
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
    func block(at column: Int) {}

    @inline(always)
    func store(_ values: SIMD16<Int32>, row: Int, column: Int, block: Void) {
        let destination = base + row * rowStride + column
        for lane in 0 ..< min(16, columns - column) { destination[lane] = values[lane] }
    }
}
#endif
