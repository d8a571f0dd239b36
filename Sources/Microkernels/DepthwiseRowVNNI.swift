// The AVX-512 VNNI rows of the engine's quantized 3×3 and 5×5 DEPTHWISE_CONV_2D (`DepthwiseConv2DTapRows`),
// compiled for AVX-512 VNNI whatever the engine's target (see Package.swift); the engine calls
// it when the build targets VNNI or CPUID says the machine has it.
#if SWIFTLITE_AVX512VNNI
import CX86Intrinsics

/// One output row of the 3×3 depthwise convolution from its three tap rows: for each output
/// column and each block of 16 channels in `channels` (multiples of 16), one `vpdpbusd` per tap
/// row — a lane holds one channel's three taps of that filter row as unsigned bytes, the
/// weights the filter row as signed bytes `(w₀, w₁, w₂, 0)` — then the stage's requantization
/// (the wide form when the stage has it, else the two rounding steps, held in registers across
/// the row) and a byte store of the channels below `stage.columns`, two blocks at once where
/// the clamp fits a byte.
///
/// With `halves`, each weight is the sum of two signed bytes (uint8 filters minus their zero
/// point span −255...255): `weights` holds the first of each pair for the three filter rows,
/// then the second, and each tap row goes through two `vpdpbusd`, six per sixteen outputs.
///
/// - Parameters:
///   - taps: the three tap rows, `width × paddedChannels` 32-bit lanes each, block-major
///     (`swiftlite_tap_row_offset`).
///   - weights: `[3, paddedChannels]` tap quads (`[2, 3, paddedChannels]` with `halves`);
///     `bias`: `paddedChannels` accumulators' start.
///   - stage: the output channels' requantization; its `base` is the output row (pixels
///     `stage.rowStride` bytes apart), its `columns` the channel count.
///
/// Never inlined: the caller is compiled for another target, which may lack these instructions.
@inline(never)
public func depthwise3x3RowVNNI(taps: (UnsafeRawPointer, UnsafeRawPointer, UnsafeRawPointer), width: Int,
                                paddedChannels cp: Int, channels range: Range<Int>, weights: UnsafeRawPointer,
                                halves: Bool = false, bias: UnsafeRawPointer, stage: RequantizedGEMMOutput) {
    if halves {
        depthwise3x3Row(taps: taps, width: width, paddedChannels: cp, channels: range, weights: weights, halves: true,
                        bias: bias, stage: stage)
    } else {
        depthwise3x3Row(taps: taps, width: width, paddedChannels: cp, channels: range, weights: weights, halves: false,
                        bias: bias, stage: stage)
    }
}

/// `depthwise3x3RowVNNI` with `halves` a constant in each copy: two copies of the pixel loops,
/// neither testing `halves` per block. (One copy that tests it ran its models' depthwise layers
/// measurably slower; a closure that takes the constant is not specialised by the compiler.)
@inline(always)
private func depthwise3x3Row(taps: (UnsafeRawPointer, UnsafeRawPointer, UnsafeRawPointer), width: Int,
                             paddedChannels cp: Int, channels range: Range<Int>, weights: UnsafeRawPointer,
                             halves: Bool, bias: UnsafeRawPointer, stage: RequantizedGEMMOutput) {
    let (r0, r1, r2) = taps
    /// The second weights of each pair: filter row `row`'s quads of the block at channel `c`.
    @inline(always)
    func second(_ row: Int, _ c: Int) -> SIMD16<Int32> { swiftlite_load_dwords(weights + ((3 + row) * cp + c) * 4) }
    /// The second halves' products of one block added to `acc` (nothing without halves): the
    /// taps at `at`, the block's weights read again from L1 for each pixel.
    @inline(always)
    func secondHalves(_ acc: SIMD16<Int32>, _ at: Int, _ c: Int) -> SIMD16<Int32> {
        guard halves else { return acc }
        let acc1 = swiftlite_dpbusd(acc, swiftlite_load_dwords(r0 + at), second(0, c))
        return swiftlite_dpbusd(swiftlite_dpbusd(acc1, swiftlite_load_dwords(r1 + at), second(1, c)),
                                swiftlite_load_dwords(r2 + at), second(2, c))
    }
    var c = range.lowerBound
    /// Pairs of blocks (32 channels) from `c` while they last, requantized in `Form`: per pixel
    /// the 32 results packed to bytes and stored at once, and their clamp byte by byte. Two
    /// blocks' first weights (6 vectors), biases (2) and stage constants (10) stay in registers
    /// across the row beside the accumulators (four blocks' would not fit the 32 registers).
    @inline(always)
    func twoBlocks<Form: RequantizationForm>(_ form: Form.Type, unsignedBytes: Bool) {
        while c + 32 <= range.upperBound {
            let count = min(stage.columns - c, 32)
            @inline(always)
            func quads(_ row: Int) -> (SIMD16<Int32>, SIMD16<Int32>) {
                let base = weights + (row * cp + c) * 4
                return (swiftlite_load_dwords(base), swiftlite_load_dwords(base + 64))
            }
            let w0 = quads(0), w1 = quads(1), w2 = quads(2)
            let b = (swiftlite_load_dwords(bias + c * 4), swiftlite_load_dwords(bias + c * 4 + 64))
            let k = (Form.constants(of: stage, column: c), Form.constants(of: stage, column: c + 16))
            // The two blocks' quads of column `x` at `offset` and `offset + second`.
            var offset = swiftlite_tap_row_offset(0, c, width, 1)
            let second = swiftlite_tap_row_offset(0, c + 16, width, 1) - offset
            for x in 0 ..< width {
                @inline(always)
                func block(_ bias: SIMD16<Int32>, _ w0: SIMD16<Int32>, _ w1: SIMD16<Int32>, _ w2: SIMD16<Int32>, _ at: Int,
                           _ column: Int) -> SIMD16<Int32> {
                    let acc = swiftlite_dpbusd(bias, swiftlite_load_dwords(r0 + at), w0)
                    let first = swiftlite_dpbusd(swiftlite_dpbusd(acc, swiftlite_load_dwords(r1 + at), w1), swiftlite_load_dwords(r2 + at), w2)
                    return secondHalves(first, at, column)
                }
                let q0 = Form.scaled(block(b.0, w0.0, w1.0, w2.0, offset, c), k.0, of: stage)
                let q1 = Form.scaled(block(b.1, w0.1, w1.1, w2.1, offset &+ second, c &+ 16), k.1, of: stage)
                swiftlite_store_clamped_bytes(stage.base + x &* stage.rowStride + c, q0, q1, q0, q0, 2,
                                              unsignedBytes ? 1 : 0, Form.offset(of: stage), stage.minimum, stage.maximum,
                                              count)
                offset &+= 64
            }
            c += 32
        }
    }
    // Two blocks at a time where the stage has the wide form and its clamp fits a byte.
    if stage.wide != nil, let unsignedBytes = stage.packedBytesAreUnsigned {
        if stage.clampsBelowZeroPoint {
            twoBlocks(WideNonNegativeForm.self, unsignedBytes: unsignedBytes)
        } else {
            twoBlocks(WideForm.self, unsignedBytes: unsignedBytes)
        }
    }
    while c < range.upperBound {
        let w0 = swiftlite_load_dwords(weights + c * 4)
        let w1 = swiftlite_load_dwords(weights + (cp + c) * 4)
        let w2 = swiftlite_load_dwords(weights + (2 * cp + c) * 4)
        let b = swiftlite_load_dwords(bias + c * 4), column = c
        storeRow(stage, column: c, width: width) { x in
            let offset = swiftlite_tap_row_offset(x, column, width, 1)
            let acc = swiftlite_dpbusd(b, swiftlite_load_dwords(r0 + offset), w0)
            let first = swiftlite_dpbusd(swiftlite_dpbusd(acc, swiftlite_load_dwords(r1 + offset), w1), swiftlite_load_dwords(r2 + offset), w2)
            return secondHalves(first, offset, column)
        }
        c += 16
    }
}

/// The pixels `0 ..< width` of one block of 16 channels at `column`: each pixel's sums
/// (`accumulators(x)`) requantized in the stage's form (the wide one when the stage has it, else
/// the two rounding steps, held in registers across the row) and stored as bytes, the channels
/// below `stage.columns`. One copy of the pixel loop per form, so that no form or flag is tested
/// per pixel.
@inline(always)
func storeRow(_ stage: RequantizedGEMMOutput, column c: Int, width: Int, _ accumulators: (Int) -> SIMD16<Int32>) {
    /// The one-shift forms, through the store's own constants of the block (`VNNIOutput.Block`),
    /// loaded once for the row.
    @inline(always)
    func wide<Form: RequantizationForm>(_ form: Form.Type) {
        let output = RequantizingStore<Form>(stage: stage), constants = output.block(at: c)
        for x in 0 ..< width { output.store(accumulators(x), row: x, column: c, block: constants) }
    }
    @inline(always)
    func lanes(saturating: Bool, shiftingLeft: Bool) {
        let block = stage.requantization(at: c), count = min(stage.columns - c, 16)
        for x in 0 ..< width {
            swiftlite_store_low_bytes(stage.base + x &* stage.rowStride + c,
                                      block.apply(accumulators(x), saturating: saturating, shiftingLeft: shiftingLeft), count)
        }
    }
    switch (stage.wide != nil, stage.saturates, stage.shiftsLeft) {
    case (true, _, _) where stage.clampsBelowZeroPoint: wide(WideNonNegativeForm.self)
    case (true, _, _): wide(WideForm.self)
    case (false, true, _): lanes(saturating: true, shiftingLeft: true)
    case (false, false, true): lanes(saturating: false, shiftingLeft: true)
    case (false, false, false): lanes(saturating: false, shiftingLeft: false)
    }
}

/// One output row of the 5×5 depthwise convolution from its five tap rows: as
/// `depthwise3x3RowVNNI`, with two tap quads per output column and channel in each tap row —
/// taps 0...3 of the filter row, then tap 4 and three zero bytes — so two `vpdpbusd` per filter
/// row, ten per sixteen outputs (twenty with `halves`, whose second weights follow the first).
///
/// - Parameters:
///   - taps: the five tap rows, `width × 2 × paddedChannels` 32-bit lanes each, block-major
///     (`swiftlite_tap_row_offset`, two quads per column).
///   - weights: `[5, 2, paddedChannels]` weight quads `(w₀, w₁, w₂, w₃)`, `(w₄, 0, 0, 0)`
///     (`[2, 5, 2, paddedChannels]` with `halves`).
@inline(never)
public func depthwise5x5RowVNNI(taps: (UnsafeRawPointer, UnsafeRawPointer, UnsafeRawPointer, UnsafeRawPointer, UnsafeRawPointer),
                                width: Int, paddedChannels cp: Int, channels range: Range<Int>,
                                weights: UnsafeRawPointer, halves: Bool = false, bias: UnsafeRawPointer, stage: RequantizedGEMMOutput) {
    if halves {
        depthwise5x5Row(taps: taps, width: width, paddedChannels: cp, channels: range, weights: weights, halves: true,
                        bias: bias, stage: stage)
    } else {
        depthwise5x5Row(taps: taps, width: width, paddedChannels: cp, channels: range, weights: weights, halves: false,
                        bias: bias, stage: stage)
    }
}

/// `depthwise5x5RowVNNI` with `halves` a constant in each copy (see `depthwise3x3Row`).
@inline(always)
private func depthwise5x5Row(taps: (UnsafeRawPointer, UnsafeRawPointer, UnsafeRawPointer, UnsafeRawPointer, UnsafeRawPointer),
                             width: Int, paddedChannels cp: Int, channels range: Range<Int>,
                             weights: UnsafeRawPointer, halves: Bool, bias: UnsafeRawPointer, stage: RequantizedGEMMOutput) {
    let (r0, r1, r2, r3, r4) = taps
    var c = range.lowerBound
    while c < range.upperBound {
        @inline(always)
        func quad(_ row: Int, _ q: Int) -> SIMD16<Int32> { swiftlite_load_dwords(weights + ((row * 2 + q) * cp + c) * 4) }
        let w00 = quad(0, 0), w01 = quad(0, 1), w10 = quad(1, 0), w11 = quad(1, 1), w20 = quad(2, 0)
        let w21 = quad(2, 1), w30 = quad(3, 0), w31 = quad(3, 1), w40 = quad(4, 0), w41 = quad(4, 1)
        let b = swiftlite_load_dwords(bias + c * 4)
        storeRow(stage, column: c, width: width) { x in
            // Column `x`'s two quads of this block.
            let offset = swiftlite_tap_row_offset(x, c, width, 2), next = 64
            @inline(always)
            func row(_ acc: SIMD16<Int32>, _ taps: UnsafeRawPointer, _ first: SIMD16<Int32>, _ second: SIMD16<Int32>) -> SIMD16<Int32> {
                swiftlite_dpbusd(swiftlite_dpbusd(acc, swiftlite_load_dwords(taps + offset), first),
                                 swiftlite_load_dwords(taps + (offset &+ next)), second)
            }
            let sum = row(row(row(row(row(b, r0, w00, w01), r1, w10, w11), r2, w20, w21), r3, w30, w31), r4, w40, w41)
            guard halves else { return sum }
            // The second halves, read from L1 for each pixel.
            @inline(always)
            func half(_ row: Int, _ q: Int) -> SIMD16<Int32> { quad(5 + row, q) }
            return row(row(row(row(row(sum, r0, half(0, 0), half(0, 1)), r1, half(1, 0), half(1, 1)), r2, half(2, 0), half(2, 1)),
                           r3, half(3, 0), half(3, 1)), r4, half(4, 0), half(4, 1))
        }
        c += 16
    }
}
#endif
