// The `.avx2` micro-kernels of `IntegerGEMM`, compiled only for targets with AVX2 (Package.swift
// defines SWIFTLITE_AVX2): the portable build's integer product.
//
// `vpmaddwd` multiplies pairs of 16-bit lanes and adds each pair into a 32-bit lane, 16
// multiply-adds per instruction, where the `.int16` kernels' one activation per lane gives 8.
// Weights are stored as pairs of depths per column (`panel[p][k / 2][j][k % 2]`, 64 bytes per
// pair: two `ymm`), and the activations of a block of rows are first widened to `Int16` in a
// scratch buffer (`Int8` ones with their sign bit flipped), so each row's pair is one
// `vpbroadcastd` from memory. A tile is 4 rows × 16 columns: 8 accumulators in 16 `ymm`
// registers, per pair 2 weight loads, 4 broadcasts, 8 `vpmaddwd` and 8 `vpaddd`. A last panel
// of at most 8 columns takes 4 × 8 tiles (its high half is zero padding), so a product of 24
// columns does the work of 24 rather than 32. `.avx2Bytes` panels hold the same pairs as bytes
// (32 per pair), which the loop sign-extends as it loads them (`vpmovsxbw` from memory).
//
// That loop is at the arithmetic ceiling of AVX2: `vpmaddwd` + `vpaddd` are two vector-ALU
// instructions per 16 multiply-adds on three vector ports (`vpmaddwd` on two of them), at best
// 24 multiply-adds per cycle, where AVX-512 VNNI's `vpdpbusd zmm` does 64 in one, up to two
// per cycle. `vpmaddubsw` (32 per instruction) is no way around it: it adds its two
// u8 · s8 products with 16-bit saturation, and 255 · 127 · 2 = 64770 > 32767, so full-range
// activations and weights saturate; splitting an operand to 7 bits to stay exact doubles the
// instructions again.
#if SWIFTLITE_AVX2
import CX86Intrinsics

extension IntegerGEMM {
    /// Bytes of widened activations per block of rows (L1-sized).
    static let widenedBlockBytes = 32 * 1024

    /// Rows widened at once: as many as fit `widenedBlockBytes`, in whole 4-row tiles.
    private var avx2BlockRows: Int { max(4, Self.widenedBlockBytes / max(1, 4 * ((depth + 1) / 2)) / 4 * 4) }

    /// Scratch for one block of widened rows.
    var avx2ScratchBytes: Int { avx2BlockRows * 2 * ((depth + 1) / 2) * MemoryLayout<Int16>.stride }

    /// The `.avx2` product (see the type's documentation); `scratch` holds `avx2ScratchBytes`.
    func multiplyAVX2<Output: IntegerGEMMOutput>(_ a: UnsafePointer<UInt8>, rows: Int, rowStride: Int,
                                                 scratch: UnsafeMutableRawPointer, into output: Output) {
        if signedActivations {
            multiplySignedAVX2(a, rows: rows, rowStride: rowStride, scratch: scratch, into: output)
        } else {
            multiplyUnsignedAVX2(a, rows: rows, rowStride: rowStride, scratch: scratch, into: output)
        }
    }

    @inline(never)
    private func multiplyUnsignedAVX2<Output: IntegerGEMMOutput>(_ a: UnsafePointer<UInt8>, rows: Int, rowStride: Int,
                                                                 scratch: UnsafeMutableRawPointer, into output: Output) {
        if layout == .avx2Bytes {
            multiplyWidened(a, rows: rows, rowStride: rowStride, flip: 0, bytes: true, scratch: scratch, into: output)
        } else {
            multiplyWidened(a, rows: rows, rowStride: rowStride, flip: 0, bytes: false, scratch: scratch, into: output)
        }
    }

    @inline(never)
    private func multiplySignedAVX2<Output: IntegerGEMMOutput>(_ a: UnsafePointer<UInt8>, rows: Int, rowStride: Int,
                                                               scratch: UnsafeMutableRawPointer, into output: Output) {
        if layout == .avx2Bytes {
            multiplyWidened(a, rows: rows, rowStride: rowStride, flip: 0x80, bytes: true, scratch: scratch, into: output)
        } else {
            multiplyWidened(a, rows: rows, rowStride: rowStride, flip: 0x80, bytes: false, scratch: scratch, into: output)
        }
    }

    /// The product with `flip` XORed into every activation byte and weights in `.avx2Bytes`
    /// panels (`bytes`) or `.avx2` ones; both constants where inlined.
    @inline(always)
    private func multiplyWidened<Output: IntegerGEMMOutput>(_ a: UnsafePointer<UInt8>, rows: Int, rowStride: Int, flip: UInt8,
                                                            bytes: Bool, scratch: UnsafeMutableRawPointer, into output: Output) {
        let pairs = (depth + 1) / 2
        // Widened rows are `2 · pairs` halfwords apart, the odd depth's partner zero.
        let widenedStride = 2 * pairs
        let blockRows = avx2BlockRows
        do {
            let widened = scratch.assumingMemoryBound(to: Int16.self)
            var start = 0
            while start < rows {
                let count = min(blockRows, rows - start)
                for r in 0 ..< count {
                    let source = a + (start + r) * rowStride, destination = widened + r * widenedStride
                    for k in 0 ..< depth { destination[k] = Int16(source[k] ^ flip) }
                    if depth < widenedStride { destination[depth] = 0 }
                }
                let x = UnsafeRawPointer(widened)
                // A last panel of at most 8 columns (24 output channels: 16 + 8) computes only
                // its low half.
                let halfLast = lastPanelColumns <= Self.panelWidth / 2
                for panel in 0 ..< panelCount - (halfLast ? 1 : 0) {
                    tilesAVX2(x, stride: widenedStride * 2, rows: count, outputRow: start, panel: panel,
                              halfWidth: false, bytes: bytes, pairs: pairs, output)
                }
                if halfLast {
                    tilesAVX2(x, stride: widenedStride * 2, rows: count, outputRow: start, panel: panelCount - 1,
                              halfWidth: true, bytes: bytes, pairs: pairs, output)
                }
                start += count
            }
        }
    }

    /// One panel of `rows` widened rows, 4 at a time, then 1; their results go to rows from
    /// `outputRow`.
    @inline(always)
    private func tilesAVX2<Output: IntegerGEMMOutput>(_ x: UnsafeRawPointer, stride: Int, rows: Int, outputRow: Int, panel: Int,
                                                      halfWidth: Bool, bytes: Bool, pairs: Int, _ output: Output) {
        var row = 0
        while row + 4 <= rows {
            tileAVX2(x, stride: stride, row: row, outputRow: outputRow + row, panel: panel,
                     fourRows: true, halfWidth: halfWidth, bytes: bytes, pairs: pairs, output)
            row += 4
        }
        while row < rows {
            tileAVX2(x, stride: stride, row: row, outputRow: outputRow + row, panel: panel,
                     fourRows: false, halfWidth: halfWidth, bytes: bytes, pairs: pairs, output)
            row += 1
        }
    }

    /// 4 or 1 rows × 16 columns, or × 8 (`halfWidth`: the panel's high half is padding, not
    /// computed; its lanes repeat the low half and are never stored); `x` holds the widened rows,
    /// `stride` bytes apart. `bytes`: the panel is `.avx2Bytes`, each pair's 16 columns 32 bytes.
    @inline(always)
    private func tileAVX2<Output: IntegerGEMMOutput>(_ x: UnsafeRawPointer, stride: Int, row: Int, outputRow: Int, panel: Int,
                                                     fourRows: Bool, halfWidth: Bool, bytes: Bool, pairs: Int, _ output: Output) {
        typealias Lanes = SIMD8<Int32>
        let w = UnsafeRawPointer(panels.pointer) + panel * panelBytes
        let biasRaw = UnsafeRawPointer(bias.pointer + panel * Self.panelWidth)
        let low = biasRaw.loadUnaligned(as: Lanes.self), high = biasRaw.loadUnaligned(fromByteOffset: 32, as: Lanes.self)
        var c0l = low, c0h = high, c1l = low, c1h = high, c2l = low, c2h = high, c3l = low, c3h = high
        let x0 = x + row * stride, x1 = x0 + stride, x2 = x1 + stride, x3 = x2 + stride
        /// Columns 0–7 (`half` 0) or 8–15 of `pair`'s weights, as `Int16` pairs.
        @inline(always)
        func weights(_ pair: Int, _ half: Int) -> Lanes {
            bytes ? swiftlite_widen_signed_bytes(w + (pair &* 32 &+ half &* 16))
                : w.loadUnaligned(fromByteOffset: pair &* 64 &+ half &* 32, as: Lanes.self)
        }
        for pair in 0 ..< pairs {
            let v0 = weights(pair, 0)
            let a0 = Lanes(repeating: x0.loadUnaligned(fromByteOffset: pair &* 4, as: Int32.self))
            c0l &+= swiftlite_madd16(a0, v0)
            if fourRows {
                let a1 = Lanes(repeating: x1.loadUnaligned(fromByteOffset: pair &* 4, as: Int32.self))
                let a2 = Lanes(repeating: x2.loadUnaligned(fromByteOffset: pair &* 4, as: Int32.self))
                let a3 = Lanes(repeating: x3.loadUnaligned(fromByteOffset: pair &* 4, as: Int32.self))
                c1l &+= swiftlite_madd16(a1, v0)
                c2l &+= swiftlite_madd16(a2, v0)
                c3l &+= swiftlite_madd16(a3, v0)
                if !halfWidth {
                    let v1 = weights(pair, 1)
                    c0h &+= swiftlite_madd16(a0, v1)
                    c1h &+= swiftlite_madd16(a1, v1)
                    c2h &+= swiftlite_madd16(a2, v1)
                    c3h &+= swiftlite_madd16(a3, v1)
                }
            } else if !halfWidth {
                c0h &+= swiftlite_madd16(a0, weights(pair, 1))
            }
        }
        if halfWidth { c0h = c0l; c1h = c1l; c2h = c2l; c3h = c3l }
        let column = panel * Self.panelWidth
        output.store(SIMD16(lowHalf: c0l, highHalf: c0h), row: outputRow, column: column)
        if fourRows {
            output.store(SIMD16(lowHalf: c1l, highHalf: c1h), row: outputRow + 1, column: column)
            output.store(SIMD16(lowHalf: c2l, highHalf: c2h), row: outputRow + 2, column: column)
            output.store(SIMD16(lowHalf: c3l, highHalf: c3h), row: outputRow + 3, column: column)
        }
    }
}
#endif
