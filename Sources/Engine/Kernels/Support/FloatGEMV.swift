/// Float32 matrix–vector product for FULLY_CONNECTED with one batch: `y = clamp(W · x + bias)`,
/// on the `FloatGEMM.PackedWeights` of `W[n×k]` (bias folded in).
///
/// ```swift
/// // prepare:
/// let packed = FloatGEMM.PackedWeights(weights: w, bias: bias, n: units, k: depth)
/// // eval:
/// FloatGEMV.multiply(x: input, weights: packed, range: range, y: out)
/// ```
///
/// FloatGEMM's 7-row tiles would compute a single row seven times. Here every weight is loaded
/// once and used once, so the product is bound by how fast the weights stream in (5 MB for
/// MobileNet's 1280 → 1000 classifier: L3 or memory, never L1):
///
/// - **Several blocks at once.** The packing's column blocks are `[k][width]` each (see
///   FloatGEMM). Up to four blocks of the widest width (32 with AVX-512, 16 otherwise) go through
///   one loop: per `p`, one broadcast of `x[p]` and one FMA per vector of each block (8
///   `zmm` accumulators with AVX-512, 8 `ymm` with AVX2), the loads folded into the FMAs. Eight
///   independent chains cover the FMA latency, and four sequential streams keep the hardware
///   prefetchers busy. Fewer than four blocks point the missing ones at the last block (they
///   recompute it from L1 and store the same values), as FloatGEMM does with missing rows.
/// - **Same sums as FloatGEMM.** Each column starts at its bias and adds `x[p] · W[j, p]` for
///   `p = 0 ..< k` in order, one FMA per step, whatever group its block falls in. So a split of
///   the columns between threads changes no bit, and the result equals row 0 of
///   `FloatGEMM.multiply` on the same packing bit for bit (the tests hold it to that).
/// - **Edges.** A block that overhangs `n` (only the last one; see `FloatGEMM.blockWidth`)
///   is computed into a stack buffer and its valid columns copied out.
///
/// A classifier's weights come from L3 or memory once per invocation, so the product runs at
/// the bandwidth of their stream, whatever the number of blocks per loop.
enum FloatGEMV {
    typealias Lanes = FloatGEMM.Lanes
    typealias Half = FloatGEMM.Half
    /// Blocks of one width per micro-kernel call.
    static let groupBlocks = 4

    /// `y = clamp(W · x + bias, range)` for the columns `columns` of `W` (all by default; bounds
    /// at multiples of `FloatGEMM.columnGranularity`, or `n`, as for `FloatGEMM.multiply`); `y`
    /// holds all `n` outputs and only `columns` of it are written.
    ///
    /// - Complexity: `columns.count · k` multiply-adds; no allocation.
    static func multiply(x: UnsafePointer<Float>, weights: FloatGEMM.PackedWeights, columns: Range<Int>? = nil,
                         range: ClosedRange<Float>, y: UnsafeMutablePointer<Float>) {
        let n = weights.n, k = weights.k
        let columns = columns ?? 0 ..< n
        let granularity = FloatGEMM.columnGranularity
        precondition(columns.lowerBound % granularity == 0 && columns.upperBound <= n
                     && (columns.upperBound == n || columns.upperBound % granularity == 0), "columns \(columns) cut a block")
        let lower = range.lowerBound, upper = range.upperBound
        withUnsafeTemporaryAllocation(of: Float.self, capacity: 32) { edge in
            var column = columns.lowerBound
            while column < columns.upperBound {
                let width = FloatGEMM.blockWidth(remaining: n - column)
                // Whole blocks of this width from `column` (at most `groupBlocks`).
                var count = 0
                while count < groupBlocks, column + (count + 1) * width <= columns.upperBound,
                      FloatGEMM.blockWidth(remaining: n - column - count * width) == width {
                    count += 1
                }
                let packed = UnsafeRawPointer(weights.blocks.pointer + column * k)
                let bias = UnsafeRawPointer(weights.bias.pointer + column)
                // No whole block: the last one overhangs `n`, so it goes through `edge`.
                let target = count > 0 ? y + column : edge.baseAddress!
                let blocks = max(count, 1)
                switch width {
                case 32: blocks32(count: blocks, k: k, x: x, packed: packed, bias: bias, lower: lower, upper: upper, y: target)
                case 16: blocks16(count: blocks, k: k, x: x, packed: packed, bias: bias, lower: lower, upper: upper, y: target)
                default: block8(k: k, x: x, packed: packed, bias: bias, lower: lower, upper: upper, y: target)
                }
                if count == 0 {
                    (y + column).update(from: edge.baseAddress!, count: n - column)
                    column = n
                } else {
                    column += count * width
                }
            }
        }
    }

    /// Up to four 32-column blocks (`count`, 1...4), adjacent from `packed` (`k · 32` floats
    /// each), into `y[0 ..< 32 · count]`.
    @inline(never)
    static func blocks32(count: Int, k: Int, x: UnsafePointer<Float>, packed: UnsafeRawPointer, bias: UnsafeRawPointer,
                         lower: Float, upper: Float, y: UnsafeMutablePointer<Float>) {
        let blockBytes = k * 32 * MemoryLayout<Float>.stride
        let w0 = packed, w1 = count > 1 ? w0 + blockBytes : w0, w2 = count > 2 ? w1 + blockBytes : w1
        let w3 = count > 3 ? w2 + blockBytes : w2
        let b0 = bias, b1 = count > 1 ? b0 + 128 : b0, b2 = count > 2 ? b1 + 128 : b1, b3 = count > 3 ? b2 + 128 : b2
        var c00 = b0.loadUnaligned(as: Lanes.self), c01 = b0.loadUnaligned(fromByteOffset: 64, as: Lanes.self)
        var c10 = b1.loadUnaligned(as: Lanes.self), c11 = b1.loadUnaligned(fromByteOffset: 64, as: Lanes.self)
        var c20 = b2.loadUnaligned(as: Lanes.self), c21 = b2.loadUnaligned(fromByteOffset: 64, as: Lanes.self)
        var c30 = b3.loadUnaligned(as: Lanes.self), c31 = b3.loadUnaligned(fromByteOffset: 64, as: Lanes.self)
        var offset = 0
        for p in 0 ..< k {
            let xp = Lanes(repeating: x[p])
            c00 = c00.addingProduct(xp, w0.loadUnaligned(fromByteOffset: offset, as: Lanes.self))
            c01 = c01.addingProduct(xp, w0.loadUnaligned(fromByteOffset: offset + 64, as: Lanes.self))
            c10 = c10.addingProduct(xp, w1.loadUnaligned(fromByteOffset: offset, as: Lanes.self))
            c11 = c11.addingProduct(xp, w1.loadUnaligned(fromByteOffset: offset + 64, as: Lanes.self))
            c20 = c20.addingProduct(xp, w2.loadUnaligned(fromByteOffset: offset, as: Lanes.self))
            c21 = c21.addingProduct(xp, w2.loadUnaligned(fromByteOffset: offset + 64, as: Lanes.self))
            c30 = c30.addingProduct(xp, w3.loadUnaligned(fromByteOffset: offset, as: Lanes.self))
            c31 = c31.addingProduct(xp, w3.loadUnaligned(fromByteOffset: offset + 64, as: Lanes.self))
            offset += 128
        }
        let y0 = UnsafeMutableRawPointer(y), y1 = count > 1 ? y0 + 128 : y0, y2 = count > 2 ? y1 + 128 : y1
        let y3 = count > 3 ? y2 + 128 : y2
        y0.storeBytes(of: FloatGEMM.clamp(c00, lower, upper), as: Lanes.self)
        y0.storeBytes(of: FloatGEMM.clamp(c01, lower, upper), toByteOffset: 64, as: Lanes.self)
        y1.storeBytes(of: FloatGEMM.clamp(c10, lower, upper), as: Lanes.self)
        y1.storeBytes(of: FloatGEMM.clamp(c11, lower, upper), toByteOffset: 64, as: Lanes.self)
        y2.storeBytes(of: FloatGEMM.clamp(c20, lower, upper), as: Lanes.self)
        y2.storeBytes(of: FloatGEMM.clamp(c21, lower, upper), toByteOffset: 64, as: Lanes.self)
        y3.storeBytes(of: FloatGEMM.clamp(c30, lower, upper), as: Lanes.self)
        y3.storeBytes(of: FloatGEMM.clamp(c31, lower, upper), toByteOffset: 64, as: Lanes.self)
    }

    /// Up to four 16-column blocks (`count`, 1...4), adjacent from `packed` (`k · 16` floats
    /// each), into `y[0 ..< 16 · count]`. Without AVX-512 these are the main blocks (each
    /// `Lanes` is two `ymm`, so eight accumulators); with it, only the one near the end.
    @inline(never)
    static func blocks16(count: Int, k: Int, x: UnsafePointer<Float>, packed: UnsafeRawPointer, bias: UnsafeRawPointer,
                         lower: Float, upper: Float, y: UnsafeMutablePointer<Float>) {
        let blockBytes = k * 16 * MemoryLayout<Float>.stride
        let w0 = packed, w1 = count > 1 ? w0 + blockBytes : w0, w2 = count > 2 ? w1 + blockBytes : w1
        let w3 = count > 3 ? w2 + blockBytes : w2
        let b0 = bias, b1 = count > 1 ? b0 + 64 : b0, b2 = count > 2 ? b1 + 64 : b1, b3 = count > 3 ? b2 + 64 : b2
        var c0 = b0.loadUnaligned(as: Lanes.self), c1 = b1.loadUnaligned(as: Lanes.self)
        var c2 = b2.loadUnaligned(as: Lanes.self), c3 = b3.loadUnaligned(as: Lanes.self)
        var offset = 0
        for p in 0 ..< k {
            let xp = Lanes(repeating: x[p])
            c0 = c0.addingProduct(xp, w0.loadUnaligned(fromByteOffset: offset, as: Lanes.self))
            c1 = c1.addingProduct(xp, w1.loadUnaligned(fromByteOffset: offset, as: Lanes.self))
            c2 = c2.addingProduct(xp, w2.loadUnaligned(fromByteOffset: offset, as: Lanes.self))
            c3 = c3.addingProduct(xp, w3.loadUnaligned(fromByteOffset: offset, as: Lanes.self))
            offset += 64
        }
        let y0 = UnsafeMutableRawPointer(y), y1 = count > 1 ? y0 + 64 : y0, y2 = count > 2 ? y1 + 64 : y1
        let y3 = count > 3 ? y2 + 64 : y2
        y0.storeBytes(of: FloatGEMM.clamp(c0, lower, upper), as: Lanes.self)
        y1.storeBytes(of: FloatGEMM.clamp(c1, lower, upper), as: Lanes.self)
        y2.storeBytes(of: FloatGEMM.clamp(c2, lower, upper), as: Lanes.self)
        y3.storeBytes(of: FloatGEMM.clamp(c3, lower, upper), as: Lanes.self)
    }

    /// The last 8-column block (`SIMD8`, half-width registers; there is at most one) into `y[0 ..< 8]`.
    @inline(never)
    static func block8(k: Int, x: UnsafePointer<Float>, packed: UnsafeRawPointer, bias: UnsafeRawPointer,
                       lower: Float, upper: Float, y: UnsafeMutablePointer<Float>) {
        var c = bias.loadUnaligned(as: Half.self)
        var offset = 0
        for p in 0 ..< k {
            c = c.addingProduct(Half(repeating: x[p]), packed.loadUnaligned(fromByteOffset: offset, as: Half.self))
            offset += 32
        }
        UnsafeMutableRawPointer(y).storeBytes(of: FloatGEMM.clamp(c, lower, upper), as: Half.self)
    }

    /// `Σ a[i] · b[i]` over `count` values, in SIMD partial sums (two `Lanes`) and then a scalar
    /// tail: the product for weights that are not packed (computed at run time), row by row.
    @inline(__always)
    static func dot(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, count: Int) -> Float {
        let ra = UnsafeRawPointer(a), rb = UnsafeRawPointer(b)
        var s0 = Lanes(), s1 = Lanes()
        var i = 0
        while i + 32 <= count {
            s0 = s0.addingProduct(ra.loadUnaligned(fromByteOffset: i * 4, as: Lanes.self), rb.loadUnaligned(fromByteOffset: i * 4, as: Lanes.self))
            s1 = s1.addingProduct(ra.loadUnaligned(fromByteOffset: i * 4 + 64, as: Lanes.self),
                                  rb.loadUnaligned(fromByteOffset: i * 4 + 64, as: Lanes.self))
            i += 32
        }
        if i + 16 <= count {
            s0 = s0.addingProduct(ra.loadUnaligned(fromByteOffset: i * 4, as: Lanes.self), rb.loadUnaligned(fromByteOffset: i * 4, as: Lanes.self))
            i += 16
        }
        var sum = (s0 + s1).sum()
        while i < count {
            sum = sum.addingProduct(a[i], b[i])
            i += 1
        }
        return sum
    }
}
