/// Float32 matrix product for convolutions: `C[m×n] = clamp(A[m×k] · Wᵀ + bias)`, where `W[n×k]`
/// is a filter in TFLite's layout (one row of `k` weights per output channel), packed at prepare time.
///
/// ```swift
/// // prepare:
/// let packed = FloatGEMM.PackedWeights(weights: filter, bias: bias, n: outputChannels, k: patchSize)
/// // eval:
/// FloatGEMM.multiply(m: pixels, a: patches, lda: patchSize, weights: packed, range: range, c: out, ldc: outputChannels)
/// ```
///
/// Convolutions have few columns (output channels, 8…1280) and many rows (pixels), so the design
/// follows XNNPACK's broadcast GEMM micro-kernels rather than a general SGEMM:
///
/// - **Packing.** `W` is transposed into column blocks of 32 (16 without AVX-512), `[k][32]` each; the last columns go
///   into a block of 32, 16 or 8 (`blockWidth(remaining:)`), zero-padded. The bias is padded alike.
/// - **Micro-kernel.** One call computes a 7 × 32 tile of `C`: 14 `SIMD16<Float>` accumulators
///   start at the bias; for each `p` two vectors of the block are loaded, and each of the 7 rows of
///   `A` contributes one broadcast `A[r, p]` and two FMAs. On AVX-512 the loop is `vbroadcastss` +
///   `vfmadd231ps zmm` (or the broadcast folded into the FMA as `(mem){1to16}`), unrolled twice,
///   every accumulator in a register, no calls or spills. The tile is clamped with `vmaxps`/`vminps`
///   and stored once. 7 × 16 (7 accumulators) and 7 × 8 (`SIMD8`, `ymm`) kernels take the last blocks.
///   AVX2 without AVX-512 (16 `ymm`) has 16-column blocks only and computes them in 6 × 16 tiles
///   (`tile6x16`, 12 accumulators), so there `tileRows` is 6.
/// - **Edges.** A tile with fewer than 7 rows points its missing rows at its last row, so they
///   recompute and store identical values. A block that overhangs `n` (the last one, when `n` is
///   not a multiple of 8 or ends 17–24 columns past a multiple of 32) is computed into a small
///   stack buffer and its valid columns copied out.
/// - **Cache blocking.** Rows go in chunks whose `A` fits in L2 (`chunkBytes`); within a chunk, one
///   block of `W` (`k × 32 × 4` bytes, L1 or L2) serves every tile. `k` is never split: each tile
///   runs over all of it, so `C` is written exactly once, bias and activation applied.
/// - **Rows of `A` in place.** `Runs` lets a row of `A` be several runs of adjacent values, so a
///   convolution reads its input directly instead of copying patches out (im2col).
///
/// `reference` is the plain scalar definition that the tests hold `multiply` to.
enum FloatGEMM {
    typealias Lanes = SIMD16<Float>
    typealias Half = SIMD8<Float>
    /// Rows of `C` per micro-kernel call. Seven divides MobileNet exactly (every layer has a
    /// multiple of 7² pixels), where eight wasted an eighth of the work at 7 × 7. AVX2 without
    /// AVX-512 has 16 vector registers, where 7 × 16 spills and 6 × 16 fits (`tile6x16`).
    #if SWIFTLITE_AVX2 && !SWIFTLITE_AVX512
    static let tileRows = 6
    #else
    static let tileRows = 7
    #endif
    /// Target size of one chunk of `A`'s rows.
    static let chunkBytes = 128 * 1024

    /// Width of the block of `W` that starts `remaining` columns before the end: 32 while more than
    /// 16 columns remain, then 16, then 8. So 24 columns (MobileNet's bottlenecks) are one 7 × 32
    /// tile with 8 columns of zeros, 59 GMAC/s in a 3136 × 144 × 24 product where a 16-block and an
    /// 8-block (whose 7 × 8 tile does 7 half-width FMAs per 8 loads) made 48; 32 columns make 80
    /// (AVX-512 Xeon, hot caches, best of 30). Without
    /// AVX-512's 32 registers the 14 accumulators of a 7 × 32 tile (28 `ymm` on AVX2, 56 `q` on
    /// NEON) spill in every step, so there blocks are 16 wide (7 × 16: 14 `ymm`; on AVX2 6 × 16, see
    /// `tile6x16`) until the last 8.
    @inline(always)
    static func blockWidth(remaining: Int) -> Int {
        #if SWIFTLITE_AVX512
        remaining > 16 ? 32 : remaining > 8 ? 16 : 8
        #else
        remaining > 8 ? 16 : 8
        #endif
    }

    /// Where the `k` values of one row of `A` lie: `count` runs of `length` adjacent floats, the
    /// runs `stride` floats apart (a convolution's filter rows in its input).
    struct Runs {
        var count: Int, length: Int, stride: Int

        /// All `k` values adjacent: a plain row-major matrix.
        static func contiguous(_ k: Int) -> Runs { Runs(count: 1, length: k, stride: 0) }
    }

    /// `W` and the bias in the layout `multiply` reads; immutable, so shareable across sessions.
    struct PackedWeights: Sendable {
        let n: Int, k: Int
        /// Column blocks in order; the block of `width` columns from `column` is `[k][width]` at `column · k`.
        let blocks: PackedBuffer<Float>
        /// The bias, zero-padded like the blocks.
        let bias: PackedBuffer<Float>

        /// Packs `weights` (`[n][k]`, row-major) and `bias` (`n` values, zeros when nil).
        init(weights: UnsafeBufferPointer<Float>, bias: UnsafeBufferPointer<Float>?, n: Int, k: Int) {
            precondition(weights.count == n * k && (bias?.count ?? n) == n)
            self.n = n
            self.k = k
            var paddedColumns = 0
            while paddedColumns < n { paddedColumns += FloatGEMM.blockWidth(remaining: n - paddedColumns) }
            blocks = PackedBuffer(count: paddedColumns * k, initializedTo: 0)
            self.bias = PackedBuffer(count: paddedColumns, initializedTo: 0)
            var column = 0
            while column < n {
                let width = FloatGEMM.blockWidth(remaining: n - column)
                for j in 0 ..< min(width, n - column) {
                    for p in 0 ..< k { blocks.pointer[column * k + p * width + j] = weights[(column + j) * k + p] }
                    if let bias { self.bias.pointer[column + j] = bias[column + j] }
                }
                column += width
            }
        }
    }

    /// Columns of `C` in whole multiples of this are whole blocks (`blockWidth(remaining:)` stays at
    /// its widest until the last 16, or 8, columns), so a split of `0 ..< n` at multiples of it cuts
    /// no block: the `columns` of `multiply`.
    static var columnGranularity: Int { blockWidth(remaining: Int.max) }

    /// `C = clamp(A · Wᵀ + bias, range)`; `A` rows are `lda` apart (each laid out as `runs`, by
    /// default contiguous), `C` rows `ldc` apart. Only `columns` of `C` (all by default; bounds at
    /// multiples of `columnGranularity`, or `n`) are computed: threads that split the columns each
    /// read only their part of `W`, and every value is computed as it would be without the split.
    ///
    /// - Complexity: `m · columns.count · k` multiply-adds; no allocation.
    static func multiply(m: Int, a: UnsafePointer<Float>, lda: Int, runs: Runs? = nil, weights: PackedWeights,
                         columns: Range<Int>? = nil, range: ClosedRange<Float>, c: UnsafeMutablePointer<Float>, ldc: Int) {
        let n = weights.n, k = weights.k
        let runs = runs ?? .contiguous(k)
        let columns = columns ?? 0 ..< n
        precondition(runs.count * runs.length == k, "runs do not cover k")
        precondition(columns.lowerBound % columnGranularity == 0 && columns.upperBound <= n
                     && (columns.upperBound == n || columns.upperBound % columnGranularity == 0), "columns \(columns) cut a block")
        let chunkRows = max(tileRows, chunkBytes / max(1, k * MemoryLayout<Float>.stride) / tileRows * tileRows)
        let lower = range.lowerBound, upper = range.upperBound
        withUnsafeTemporaryAllocation(of: Float.self, capacity: tileRows * 32) { edge in
            var chunkStart = 0
            while chunkStart < m {
                let chunkEnd = min(m, chunkStart + chunkRows)
                var column = columns.lowerBound
                while column < columns.upperBound {
                    let width = blockWidth(remaining: n - column), columns = min(width, n - column)
                    let packed = UnsafeRawPointer(weights.blocks.pointer + column * k)
                    let bias = UnsafeRawPointer(weights.bias.pointer + column)
                    var row = chunkStart
                    while row < chunkEnd {
                        let rows = min(tileRows, chunkEnd - row)
                        let target = columns == width ? c + row * ldc + column : edge.baseAddress!
                        let targetStride = columns == width ? ldc : width
                        switch width {
                        case 32: tile7x32(rows: rows, runs: runs, a: a + row * lda, lda: lda, packed: packed, bias: bias,
                                          lower: lower, upper: upper, c: target, ldc: targetStride)
                        case 16:
                            #if SWIFTLITE_AVX2 && !SWIFTLITE_AVX512
                            tile6x16(rows: rows, runs: runs, a: a + row * lda, lda: lda, packed: packed, bias: bias,
                                     lower: lower, upper: upper, c: target, ldc: targetStride)
                            #else
                            tile7x16(rows: rows, runs: runs, a: a + row * lda, lda: lda, packed: packed, bias: bias,
                                     lower: lower, upper: upper, c: target, ldc: targetStride)
                            #endif
                        default: tile7x8(rows: rows, runs: runs, a: a + row * lda, lda: lda, packed: packed, bias: bias,
                                         lower: lower, upper: upper, c: target, ldc: targetStride)
                        }
                        if columns < width {
                            for r in 0 ..< rows { (c + (row + r) * ldc + column).update(from: edge.baseAddress! + r * width, count: columns) }
                        }
                        row += tileRows
                    }
                    column += width
                }
                chunkStart = chunkEnd
            }
        }
    }

    /// `x` limited to `lower...upper`. (`SIMD.clamped` compiles to per-lane scalar code; masked
    /// replacement against broadcast bounds becomes `vmaxps`/`vminps`.)
    @inline(always)
    static func clamp(_ x: Lanes, _ lower: Float, _ upper: Float) -> Lanes {
        var x = x
        x.replace(with: Lanes(repeating: lower), where: x .< Lanes(repeating: lower))
        x.replace(with: Lanes(repeating: upper), where: x .> Lanes(repeating: upper))
        return x
    }

    @inline(always)
    static func clamp(_ x: Half, _ lower: Float, _ upper: Float) -> Half {
        var x = x
        x.replace(with: Half(repeating: lower), where: x .< Half(repeating: lower))
        x.replace(with: Half(repeating: upper), where: x .> Half(repeating: upper))
        return x
    }

    /// The first row of a tile at `first` and the next six `stride` apart; rows past `count` (1...7)
    /// repeat the last one, so a short tile recomputes and stores that row's values again.
    @inline(always)
    static func rowPointers<P: Strideable>(_ first: P, stride: P.Stride, count: Int) -> (P, P, P, P, P, P, P) {
        let p1 = count > 1 ? first.advanced(by: stride) : first, p2 = count > 2 ? p1.advanced(by: stride) : p1
        let p3 = count > 3 ? p2.advanced(by: stride) : p2, p4 = count > 4 ? p3.advanced(by: stride) : p3
        let p5 = count > 5 ? p4.advanced(by: stride) : p4, p6 = count > 6 ? p5.advanced(by: stride) : p5
        return (first, p1, p2, p3, p4, p5, p6)
    }

    // The micro-kernels. `accumulate` is inlined twice: once for contiguous rows, whose single loop
    // then has no outer loop around it (that cost ~10% at k = 16), and once inside the loop over runs.

    /// The 7 × 32 micro-kernel (see the type's documentation); rows past `rows` repeat the last row.
    @inline(never)
    static func tile7x32(rows: Int, runs: Runs, a: UnsafePointer<Float>, lda: Int, packed: UnsafeRawPointer,
                         bias: UnsafeRawPointer, lower: Float, upper: Float, c: UnsafeMutablePointer<Float>, ldc: Int) {
        let (a0, a1, a2, a3, a4, a5, a6) = rowPointers(a, stride: lda, count: rows)
        let bias0 = bias.loadUnaligned(as: Lanes.self), bias1 = bias.loadUnaligned(fromByteOffset: 64, as: Lanes.self)
        var c00 = bias0, c01 = bias1, c10 = bias0, c11 = bias1, c20 = bias0, c21 = bias1, c30 = bias0, c31 = bias1
        var c40 = bias0, c41 = bias1, c50 = bias0, c51 = bias1, c60 = bias0, c61 = bias1
        var w = packed
        @inline(always)
        func accumulate(_ start: Int, _ end: Int) {
            for p in start ..< end {
                let w0 = w.loadUnaligned(as: Lanes.self), w1 = w.loadUnaligned(fromByteOffset: 64, as: Lanes.self)
                w += 128
                c00 = c00.addingProduct(Lanes(repeating: a0[p]), w0); c01 = c01.addingProduct(Lanes(repeating: a0[p]), w1)
                c10 = c10.addingProduct(Lanes(repeating: a1[p]), w0); c11 = c11.addingProduct(Lanes(repeating: a1[p]), w1)
                c20 = c20.addingProduct(Lanes(repeating: a2[p]), w0); c21 = c21.addingProduct(Lanes(repeating: a2[p]), w1)
                c30 = c30.addingProduct(Lanes(repeating: a3[p]), w0); c31 = c31.addingProduct(Lanes(repeating: a3[p]), w1)
                c40 = c40.addingProduct(Lanes(repeating: a4[p]), w0); c41 = c41.addingProduct(Lanes(repeating: a4[p]), w1)
                c50 = c50.addingProduct(Lanes(repeating: a5[p]), w0); c51 = c51.addingProduct(Lanes(repeating: a5[p]), w1)
                c60 = c60.addingProduct(Lanes(repeating: a6[p]), w0); c61 = c61.addingProduct(Lanes(repeating: a6[p]), w1)
            }
        }
        if runs.count == 1 {
            accumulate(0, runs.length)
        } else {
            for run in 0 ..< runs.count { accumulate(run * runs.stride, run * runs.stride + runs.length) }
        }
        let (r0, r1, r2, r3, r4, r5, r6) = rowPointers(c, stride: ldc, count: rows)
        UnsafeMutableRawPointer(r0).storeBytes(of: clamp(c00, lower, upper), as: Lanes.self)
        UnsafeMutableRawPointer(r0 + 16).storeBytes(of: clamp(c01, lower, upper), as: Lanes.self)
        UnsafeMutableRawPointer(r1).storeBytes(of: clamp(c10, lower, upper), as: Lanes.self)
        UnsafeMutableRawPointer(r1 + 16).storeBytes(of: clamp(c11, lower, upper), as: Lanes.self)
        UnsafeMutableRawPointer(r2).storeBytes(of: clamp(c20, lower, upper), as: Lanes.self)
        UnsafeMutableRawPointer(r2 + 16).storeBytes(of: clamp(c21, lower, upper), as: Lanes.self)
        UnsafeMutableRawPointer(r3).storeBytes(of: clamp(c30, lower, upper), as: Lanes.self)
        UnsafeMutableRawPointer(r3 + 16).storeBytes(of: clamp(c31, lower, upper), as: Lanes.self)
        UnsafeMutableRawPointer(r4).storeBytes(of: clamp(c40, lower, upper), as: Lanes.self)
        UnsafeMutableRawPointer(r4 + 16).storeBytes(of: clamp(c41, lower, upper), as: Lanes.self)
        UnsafeMutableRawPointer(r5).storeBytes(of: clamp(c50, lower, upper), as: Lanes.self)
        UnsafeMutableRawPointer(r5 + 16).storeBytes(of: clamp(c51, lower, upper), as: Lanes.self)
        UnsafeMutableRawPointer(r6).storeBytes(of: clamp(c60, lower, upper), as: Lanes.self)
        UnsafeMutableRawPointer(r6 + 16).storeBytes(of: clamp(c61, lower, upper), as: Lanes.self)
    }

    /// The 7 × 16 micro-kernel, for a 16-column block.
    @inline(never)
    static func tile7x16(rows: Int, runs: Runs, a: UnsafePointer<Float>, lda: Int, packed: UnsafeRawPointer,
                         bias: UnsafeRawPointer, lower: Float, upper: Float, c: UnsafeMutablePointer<Float>, ldc: Int) {
        let (a0, a1, a2, a3, a4, a5, a6) = rowPointers(a, stride: lda, count: rows)
        let bias0 = bias.loadUnaligned(as: Lanes.self)
        var c0 = bias0, c1 = bias0, c2 = bias0, c3 = bias0, c4 = bias0, c5 = bias0, c6 = bias0
        var w = packed
        @inline(always)
        func accumulate(_ start: Int, _ end: Int) {
            for p in start ..< end {
                let w0 = w.loadUnaligned(as: Lanes.self)
                w += 64
                c0 = c0.addingProduct(Lanes(repeating: a0[p]), w0)
                c1 = c1.addingProduct(Lanes(repeating: a1[p]), w0)
                c2 = c2.addingProduct(Lanes(repeating: a2[p]), w0)
                c3 = c3.addingProduct(Lanes(repeating: a3[p]), w0)
                c4 = c4.addingProduct(Lanes(repeating: a4[p]), w0)
                c5 = c5.addingProduct(Lanes(repeating: a5[p]), w0)
                c6 = c6.addingProduct(Lanes(repeating: a6[p]), w0)
            }
        }
        if runs.count == 1 {
            accumulate(0, runs.length)
        } else {
            for run in 0 ..< runs.count { accumulate(run * runs.stride, run * runs.stride + runs.length) }
        }
        let (r0, r1, r2, r3, r4, r5, r6) = rowPointers(c, stride: ldc, count: rows)
        UnsafeMutableRawPointer(r0).storeBytes(of: clamp(c0, lower, upper), as: Lanes.self)
        UnsafeMutableRawPointer(r1).storeBytes(of: clamp(c1, lower, upper), as: Lanes.self)
        UnsafeMutableRawPointer(r2).storeBytes(of: clamp(c2, lower, upper), as: Lanes.self)
        UnsafeMutableRawPointer(r3).storeBytes(of: clamp(c3, lower, upper), as: Lanes.self)
        UnsafeMutableRawPointer(r4).storeBytes(of: clamp(c4, lower, upper), as: Lanes.self)
        UnsafeMutableRawPointer(r5).storeBytes(of: clamp(c5, lower, upper), as: Lanes.self)
        UnsafeMutableRawPointer(r6).storeBytes(of: clamp(c6, lower, upper), as: Lanes.self)
    }

    #if SWIFTLITE_AVX2 && !SWIFTLITE_AVX512
    /// The AVX2 kernel for a 16-column block: 6 rows (`tileRows`), or 4 when at most 4 remain.
    ///
    /// With 16 `ymm`, 7 × 16 needs 14 accumulators, two weight vectors and a broadcast: LLVM
    /// spilled two accumulators and moved the rest through `vmovaps` chains, about 30 moves
    /// per step of 14 FMAs. A 4-row band and a 3-row band fit, but the 3-row band's 6
    /// accumulators cannot hide the FMA latency (4 cycles at 2 per cycle wants 8 chains in flight).
    /// 6 × 16 keeps 12 chains and 15 registers. Every value of `C` is still `bias + Σ_p` in
    /// order, one FMA per `p`, so the results do not depend on the tile shape.
    @inline(never)
    static func tile6x16(rows: Int, runs: Runs, a: UnsafePointer<Float>, lda: Int, packed: UnsafeRawPointer,
                         bias: UnsafeRawPointer, lower: Float, upper: Float, c: UnsafeMutablePointer<Float>, ldc: Int) {
        if rows > 4 {
            band16(6, rows: rows, runs: runs, a: a, lda: lda, packed: packed, bias: bias, lower: lower, upper: upper, c: c, ldc: ldc)
        } else {
            band4x16(rows: rows, runs: runs, a: a, lda: lda, packed: packed, bias: bias, lower: lower, upper: upper, c: c, ldc: ldc)
        }
    }

    /// A tile of at most 4 rows (`tile6x16`'s last ones).
    @inline(never)
    static func band4x16(rows: Int, runs: Runs, a: UnsafePointer<Float>, lda: Int, packed: UnsafeRawPointer,
                         bias: UnsafeRawPointer, lower: Float, upper: Float, c: UnsafeMutablePointer<Float>, ldc: Int) {
        band16(4, rows: rows, runs: runs, a: a, lda: lda, packed: packed, bias: bias, lower: lower, upper: upper, c: c, ldc: ldc)
    }

    /// `count` (4 or 6, a constant where inlined) rows × 16 columns in `Half` (`ymm`) vectors:
    /// `2 · count` accumulators, two weight vectors and one broadcast, at most 15 of the 16
    /// registers, so the loop is loads, `vbroadcastss` and `vfmadd231ps` only. Per `p`, 2 weight
    /// loads and `count` broadcasts feed `2 · count` FMAs. Rows past `rows` (1 ... count)
    /// repeat the last row.
    @inline(always)
    static func band16(_ count: Int, rows: Int, runs: Runs, a: UnsafePointer<Float>, lda: Int, packed: UnsafeRawPointer,
                       bias: UnsafeRawPointer, lower: Float, upper: Float, c: UnsafeMutablePointer<Float>, ldc: Int) {
        let (a0, a1, a2, a3, a4, a5, _) = rowPointers(a, stride: lda, count: rows)
        let bias0 = bias.loadUnaligned(as: Half.self), bias1 = bias.loadUnaligned(fromByteOffset: 32, as: Half.self)
        var c00 = bias0, c01 = bias1, c10 = bias0, c11 = bias1, c20 = bias0, c21 = bias1, c30 = bias0, c31 = bias1
        var c40 = bias0, c41 = bias1, c50 = bias0, c51 = bias1
        var w = packed
        @inline(always)
        func accumulate(_ start: Int, _ end: Int) {
            for p in start ..< end {
                let w0 = w.loadUnaligned(as: Half.self), w1 = w.loadUnaligned(fromByteOffset: 32, as: Half.self)
                w += 64
                let x0 = Half(repeating: a0[p]), x1 = Half(repeating: a1[p])
                c00 = c00.addingProduct(x0, w0); c01 = c01.addingProduct(x0, w1)
                c10 = c10.addingProduct(x1, w0); c11 = c11.addingProduct(x1, w1)
                let x2 = Half(repeating: a2[p]), x3 = Half(repeating: a3[p])
                c20 = c20.addingProduct(x2, w0); c21 = c21.addingProduct(x2, w1)
                c30 = c30.addingProduct(x3, w0); c31 = c31.addingProduct(x3, w1)
                if count > 4 {
                    let x4 = Half(repeating: a4[p]), x5 = Half(repeating: a5[p])
                    c40 = c40.addingProduct(x4, w0); c41 = c41.addingProduct(x4, w1)
                    c50 = c50.addingProduct(x5, w0); c51 = c51.addingProduct(x5, w1)
                }
            }
        }
        if runs.count == 1 {
            accumulate(0, runs.length)
        } else {
            for run in 0 ..< runs.count { accumulate(run * runs.stride, run * runs.stride + runs.length) }
        }
        let (r0, r1, r2, r3, r4, r5, _) = rowPointers(c, stride: ldc, count: rows)
        UnsafeMutableRawPointer(r0).storeBytes(of: clamp(c00, lower, upper), as: Half.self)
        UnsafeMutableRawPointer(r0 + 8).storeBytes(of: clamp(c01, lower, upper), as: Half.self)
        UnsafeMutableRawPointer(r1).storeBytes(of: clamp(c10, lower, upper), as: Half.self)
        UnsafeMutableRawPointer(r1 + 8).storeBytes(of: clamp(c11, lower, upper), as: Half.self)
        UnsafeMutableRawPointer(r2).storeBytes(of: clamp(c20, lower, upper), as: Half.self)
        UnsafeMutableRawPointer(r2 + 8).storeBytes(of: clamp(c21, lower, upper), as: Half.self)
        UnsafeMutableRawPointer(r3).storeBytes(of: clamp(c30, lower, upper), as: Half.self)
        UnsafeMutableRawPointer(r3 + 8).storeBytes(of: clamp(c31, lower, upper), as: Half.self)
        if count > 4 {
            UnsafeMutableRawPointer(r4).storeBytes(of: clamp(c40, lower, upper), as: Half.self)
            UnsafeMutableRawPointer(r4 + 8).storeBytes(of: clamp(c41, lower, upper), as: Half.self)
            UnsafeMutableRawPointer(r5).storeBytes(of: clamp(c50, lower, upper), as: Half.self)
            UnsafeMutableRawPointer(r5 + 8).storeBytes(of: clamp(c51, lower, upper), as: Half.self)
        }
    }
    #endif

    /// The 7 × 8 micro-kernel (`SIMD8`, half-width registers), for an 8-column block.
    @inline(never)
    static func tile7x8(rows: Int, runs: Runs, a: UnsafePointer<Float>, lda: Int, packed: UnsafeRawPointer,
                        bias: UnsafeRawPointer, lower: Float, upper: Float, c: UnsafeMutablePointer<Float>, ldc: Int) {
        let (a0, a1, a2, a3, a4, a5, a6) = rowPointers(a, stride: lda, count: rows)
        let bias0 = bias.loadUnaligned(as: Half.self)
        var c0 = bias0, c1 = bias0, c2 = bias0, c3 = bias0, c4 = bias0, c5 = bias0, c6 = bias0
        var w = packed
        @inline(always)
        func accumulate(_ start: Int, _ end: Int) {
            for p in start ..< end {
                let w0 = w.loadUnaligned(as: Half.self)
                w += 32
                c0 = c0.addingProduct(Half(repeating: a0[p]), w0)
                c1 = c1.addingProduct(Half(repeating: a1[p]), w0)
                c2 = c2.addingProduct(Half(repeating: a2[p]), w0)
                c3 = c3.addingProduct(Half(repeating: a3[p]), w0)
                c4 = c4.addingProduct(Half(repeating: a4[p]), w0)
                c5 = c5.addingProduct(Half(repeating: a5[p]), w0)
                c6 = c6.addingProduct(Half(repeating: a6[p]), w0)
            }
        }
        if runs.count == 1 {
            accumulate(0, runs.length)
        } else {
            for run in 0 ..< runs.count { accumulate(run * runs.stride, run * runs.stride + runs.length) }
        }
        let (r0, r1, r2, r3, r4, r5, r6) = rowPointers(c, stride: ldc, count: rows)
        UnsafeMutableRawPointer(r0).storeBytes(of: clamp(c0, lower, upper), as: Half.self)
        UnsafeMutableRawPointer(r1).storeBytes(of: clamp(c1, lower, upper), as: Half.self)
        UnsafeMutableRawPointer(r2).storeBytes(of: clamp(c2, lower, upper), as: Half.self)
        UnsafeMutableRawPointer(r3).storeBytes(of: clamp(c3, lower, upper), as: Half.self)
        UnsafeMutableRawPointer(r4).storeBytes(of: clamp(c4, lower, upper), as: Half.self)
        UnsafeMutableRawPointer(r5).storeBytes(of: clamp(c5, lower, upper), as: Half.self)
        UnsafeMutableRawPointer(r6).storeBytes(of: clamp(c6, lower, upper), as: Half.self)
    }

    /// Plain scalar `C = clamp(A · Wᵀ + bias, range)` on the unpacked filter: the oracle for `multiply`.
    static func reference(m: Int, n: Int, k: Int, a: UnsafePointer<Float>, lda: Int, weights: UnsafePointer<Float>,
                          bias: UnsafePointer<Float>?, range: ClosedRange<Float>, c: UnsafeMutablePointer<Float>, ldc: Int) {
        for i in 0 ..< m {
            for j in 0 ..< n {
                var sum = bias?[j] ?? 0
                for p in 0 ..< k { sum += a[i * lda + p] * weights[j * k + p] }
                c[i * ldc + j] = min(max(sum, range.lowerBound), range.upperBound)
            }
        }
    }
}
