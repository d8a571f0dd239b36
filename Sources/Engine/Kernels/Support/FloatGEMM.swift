import CX86Intrinsics

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
///   block of `W` (`k × 32 × 4` bytes) serves every tile. A block of more than two `depthSlice`s
///   of `k` (contiguous rows of `A`, a block inside `n`) goes a slice at a time over the chunk's
///   tiles, so that the slice stays in L1: each pass starts from the partial sums the last one
///   stored in `C` (the bias for the first) and the last pass clamps. Every value is still the
///   bias, then one FMA per `p` in order: stored and reloaded floats are exact, so the results
///   are the same bytes as without slices.
/// - **Prefetch.** While a block's tiles run, the next block's weights are requested into the
///   outer caches a part per tile (`swiftlite_prefetch`): the late layers' weights (1152 × 192
///   floats) come from L3 or memory, and their first tile waited on them.
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
    /// The most of `A` kept as one chunk when `W` is much larger (a quarter of a 2 MiB L2).
    static let maximumChunkBytes = 512 * 1024
    /// Steps of `p` per slice of a block whose `k` exceeds two slices: a 32-column slice of `W`
    /// is 12 KiB, and with the slice of `A` of a 7 × 7 layer's 49 rows (19 KiB) it stays in a 32 KiB
    /// L1 across the chunk's tiles, where a whole block (`k` = 1152: 147 KiB) came from L2 for
    /// every tile. In EfficientNet-Lite0 f32's 7 × 7 layers (1 thread, min of 5 alternated
    /// rounds) 1152 → 192 took 0.18 ms unsliced, 0.16 in slices of 96; 1152 → 320 0.32 → 0.27.
    static let depthSlice = 96

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
        // Every chunk reads all of `W`'s `columns` again: `A` stays one chunk while it is at most
        // twice `chunkBytes`, or no larger than those weights (up to `maximumChunkBytes`): the late
        // layers, 49 rows of 1152 and weights six times that, 100 rows of 1280 and weights 2.5 times that.
        let rowBytes = max(1, k * MemoryLayout<Float>.stride)
        let weightBytes = columns.count * rowBytes, aBytes = m * rowBytes
        let chunkRows = aBytes <= 2 * chunkBytes || (aBytes <= weightBytes && aBytes <= maximumChunkBytes)
            ? max(1, m) : max(tileRows, chunkBytes / rowBytes / tileRows * tileRows)
        let sliced = runs.count == 1 && k > 2 * depthSlice
        let lower = range.lowerBound, upper = range.upperBound
        withUnsafeTemporaryAllocation(of: Float.self, capacity: tileRows * 32) { edge in
            var chunkStart = 0
            while chunkStart < m {
                let chunkEnd = min(m, chunkStart + chunkRows)
                var column = columns.lowerBound
                while column < columns.upperBound {
                    let width = blockWidth(remaining: n - column), blockColumns = min(width, n - column)
                    let packed = UnsafeRawPointer(weights.blocks.pointer + column * k)
                    let bias = UnsafeRawPointer(weights.bias.pointer + column)
                    // A block too large for L1 goes in slices of `depthSlice` steps, each over every
                    // tile of the chunk (partial sums kept in C), when it writes C directly.
                    let slice = sliced && blockColumns == width ? depthSlice : k
                    let slices = (k + slice - 1) / slice
                    // The next block's weights are fetched a part per tile while this block's
                    // tiles compute from the inner cache, so that its first tile need not wait.
                    let next = column + width < columns.upperBound ? packed + width * k * MemoryLayout<Float>.stride : nil
                    let nextBytes = next == nil ? 0 : blockWidth(remaining: n - column - width) * k * MemoryLayout<Float>.stride
                    let part = (nextBytes / (slices * ((chunkEnd - chunkStart + tileRows - 1) / tileRows)) + 63) & ~63
                    var fetched = 0
                    var depth = 0
                    while depth < k {
                        let depthEnd = min(k, depth + slice)
                        let sliceRuns = slice == k ? runs : Runs.contiguous(depthEnd - depth)
                        let slicePacked = packed + depth * width * MemoryLayout<Float>.stride
                        let resume = depth > 0, finish = depthEnd == k
                        var row = chunkStart
                        while row < chunkEnd {
                            let rows = min(tileRows, chunkEnd - row)
                            if let next {
                                let end = min(nextBytes, fetched + part)
                                while fetched < end {
                                    swiftlite_prefetch(next + fetched)
                                    fetched += 64
                                }
                            }
                            let a = a + row * lda + depth
                            let target = blockColumns == width ? c + row * ldc + column : edge.baseAddress!
                            let targetStride = blockColumns == width ? ldc : width
                            switch width {
                            case 32: tile7x32(rows: rows, runs: sliceRuns, a: a, lda: lda, packed: slicePacked, bias: bias, lower: lower,
                                              upper: upper, c: target, ldc: targetStride, resume: resume, finish: finish)
                            case 16:
                                #if SWIFTLITE_AVX2 && !SWIFTLITE_AVX512
                                tile6x16(rows: rows, runs: sliceRuns, a: a, lda: lda, packed: slicePacked, bias: bias, lower: lower,
                                         upper: upper, c: target, ldc: targetStride, resume: resume, finish: finish)
                                #else
                                tile7x16(rows: rows, runs: sliceRuns, a: a, lda: lda, packed: slicePacked, bias: bias, lower: lower,
                                         upper: upper, c: target, ldc: targetStride, resume: resume, finish: finish)
                                #endif
                            default: tile7x8(rows: rows, runs: sliceRuns, a: a, lda: lda, packed: slicePacked, bias: bias, lower: lower,
                                             upper: upper, c: target, ldc: targetStride, resume: resume, finish: finish)
                            }
                            if blockColumns < width {
                                for r in 0 ..< rows { (c + (row + r) * ldc + column).update(from: edge.baseAddress! + r * width, count: blockColumns) }
                            }
                            row += tileRows
                        }
                        depth = depthEnd
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

    /// A tile's accumulator at the start of a pass: the bias, or (`resume`) the partial sum the
    /// previous slice of `k` left in C at `row`.
    @inline(always)
    static func initial<V: SIMD>(_ bias: V, _ row: UnsafeMutablePointer<Float>, _ resume: Bool) -> V where V.Scalar == Float {
        resume ? UnsafeRawPointer(row).loadUnaligned(as: V.self) : bias
    }

    /// What a pass stores: the clamped result after the last slice of `k` (`finish`), else the partial sum.
    @inline(always)
    static func final(_ x: Lanes, _ lower: Float, _ upper: Float, _ finish: Bool) -> Lanes { finish ? clamp(x, lower, upper) : x }

    @inline(always)
    static func final(_ x: Half, _ lower: Float, _ upper: Float, _ finish: Bool) -> Half { finish ? clamp(x, lower, upper) : x }

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
                         bias: UnsafeRawPointer, lower: Float, upper: Float, c: UnsafeMutablePointer<Float>, ldc: Int,
                         resume: Bool, finish: Bool) {
        let (a0, a1, a2, a3, a4, a5, a6) = rowPointers(a, stride: lda, count: rows)
        let (r0, r1, r2, r3, r4, r5, r6) = rowPointers(c, stride: ldc, count: rows)
        let bias0 = bias.loadUnaligned(as: Lanes.self), bias1 = bias.loadUnaligned(fromByteOffset: 64, as: Lanes.self)
        var c00 = initial(bias0, r0, resume), c01 = initial(bias1, r0 + 16, resume)
        var c10 = initial(bias0, r1, resume), c11 = initial(bias1, r1 + 16, resume)
        var c20 = initial(bias0, r2, resume), c21 = initial(bias1, r2 + 16, resume)
        var c30 = initial(bias0, r3, resume), c31 = initial(bias1, r3 + 16, resume)
        var c40 = initial(bias0, r4, resume), c41 = initial(bias1, r4 + 16, resume)
        var c50 = initial(bias0, r5, resume), c51 = initial(bias1, r5 + 16, resume)
        var c60 = initial(bias0, r6, resume), c61 = initial(bias1, r6 + 16, resume)
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
        UnsafeMutableRawPointer(r0).storeBytes(of: final(c00, lower, upper, finish), as: Lanes.self)
        UnsafeMutableRawPointer(r0 + 16).storeBytes(of: final(c01, lower, upper, finish), as: Lanes.self)
        UnsafeMutableRawPointer(r1).storeBytes(of: final(c10, lower, upper, finish), as: Lanes.self)
        UnsafeMutableRawPointer(r1 + 16).storeBytes(of: final(c11, lower, upper, finish), as: Lanes.self)
        UnsafeMutableRawPointer(r2).storeBytes(of: final(c20, lower, upper, finish), as: Lanes.self)
        UnsafeMutableRawPointer(r2 + 16).storeBytes(of: final(c21, lower, upper, finish), as: Lanes.self)
        UnsafeMutableRawPointer(r3).storeBytes(of: final(c30, lower, upper, finish), as: Lanes.self)
        UnsafeMutableRawPointer(r3 + 16).storeBytes(of: final(c31, lower, upper, finish), as: Lanes.self)
        UnsafeMutableRawPointer(r4).storeBytes(of: final(c40, lower, upper, finish), as: Lanes.self)
        UnsafeMutableRawPointer(r4 + 16).storeBytes(of: final(c41, lower, upper, finish), as: Lanes.self)
        UnsafeMutableRawPointer(r5).storeBytes(of: final(c50, lower, upper, finish), as: Lanes.self)
        UnsafeMutableRawPointer(r5 + 16).storeBytes(of: final(c51, lower, upper, finish), as: Lanes.self)
        UnsafeMutableRawPointer(r6).storeBytes(of: final(c60, lower, upper, finish), as: Lanes.self)
        UnsafeMutableRawPointer(r6 + 16).storeBytes(of: final(c61, lower, upper, finish), as: Lanes.self)
    }

    /// The 7 × 16 micro-kernel, for a 16-column block.
    @inline(never)
    static func tile7x16(rows: Int, runs: Runs, a: UnsafePointer<Float>, lda: Int, packed: UnsafeRawPointer,
                         bias: UnsafeRawPointer, lower: Float, upper: Float, c: UnsafeMutablePointer<Float>, ldc: Int,
                         resume: Bool, finish: Bool) {
        let (a0, a1, a2, a3, a4, a5, a6) = rowPointers(a, stride: lda, count: rows)
        let (r0, r1, r2, r3, r4, r5, r6) = rowPointers(c, stride: ldc, count: rows)
        let bias0 = bias.loadUnaligned(as: Lanes.self)
        var c0 = initial(bias0, r0, resume), c1 = initial(bias0, r1, resume), c2 = initial(bias0, r2, resume)
        var c3 = initial(bias0, r3, resume), c4 = initial(bias0, r4, resume), c5 = initial(bias0, r5, resume)
        var c6 = initial(bias0, r6, resume)
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
        UnsafeMutableRawPointer(r0).storeBytes(of: final(c0, lower, upper, finish), as: Lanes.self)
        UnsafeMutableRawPointer(r1).storeBytes(of: final(c1, lower, upper, finish), as: Lanes.self)
        UnsafeMutableRawPointer(r2).storeBytes(of: final(c2, lower, upper, finish), as: Lanes.self)
        UnsafeMutableRawPointer(r3).storeBytes(of: final(c3, lower, upper, finish), as: Lanes.self)
        UnsafeMutableRawPointer(r4).storeBytes(of: final(c4, lower, upper, finish), as: Lanes.self)
        UnsafeMutableRawPointer(r5).storeBytes(of: final(c5, lower, upper, finish), as: Lanes.self)
        UnsafeMutableRawPointer(r6).storeBytes(of: final(c6, lower, upper, finish), as: Lanes.self)
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
                         bias: UnsafeRawPointer, lower: Float, upper: Float, c: UnsafeMutablePointer<Float>, ldc: Int,
                         resume: Bool, finish: Bool) {
        if rows > 4 {
            band16(6, rows: rows, runs: runs, a: a, lda: lda, packed: packed, bias: bias, lower: lower, upper: upper, c: c, ldc: ldc, resume: resume, finish: finish)
        } else {
            band4x16(rows: rows, runs: runs, a: a, lda: lda, packed: packed, bias: bias, lower: lower, upper: upper, c: c, ldc: ldc, resume: resume, finish: finish)
        }
    }

    /// A tile of at most 4 rows (`tile6x16`'s last ones).
    @inline(never)
    static func band4x16(rows: Int, runs: Runs, a: UnsafePointer<Float>, lda: Int, packed: UnsafeRawPointer,
                         bias: UnsafeRawPointer, lower: Float, upper: Float, c: UnsafeMutablePointer<Float>, ldc: Int,
                         resume: Bool, finish: Bool) {
        band16(4, rows: rows, runs: runs, a: a, lda: lda, packed: packed, bias: bias, lower: lower, upper: upper, c: c, ldc: ldc, resume: resume, finish: finish)
    }

    /// `count` (4 or 6, a constant where inlined) rows × 16 columns in `Half` (`ymm`) vectors:
    /// `2 · count` accumulators, two weight vectors and one broadcast, at most 15 of the 16
    /// registers, so the loop is loads, `vbroadcastss` and `vfmadd231ps` only. Per `p`, 2 weight
    /// loads and `count` broadcasts feed `2 · count` FMAs. Rows past `rows` (1 ... count)
    /// repeat the last row.
    @inline(always)
    static func band16(_ count: Int, rows: Int, runs: Runs, a: UnsafePointer<Float>, lda: Int, packed: UnsafeRawPointer,
                       bias: UnsafeRawPointer, lower: Float, upper: Float, c: UnsafeMutablePointer<Float>, ldc: Int,
                       resume: Bool, finish: Bool) {
        let (a0, a1, a2, a3, a4, a5, _) = rowPointers(a, stride: lda, count: rows)
        let (r0, r1, r2, r3, r4, r5, _) = rowPointers(c, stride: ldc, count: rows)
        let bias0 = bias.loadUnaligned(as: Half.self), bias1 = bias.loadUnaligned(fromByteOffset: 32, as: Half.self)
        var c00 = initial(bias0, r0, resume), c01 = initial(bias1, r0 + 8, resume)
        var c10 = initial(bias0, r1, resume), c11 = initial(bias1, r1 + 8, resume)
        var c20 = initial(bias0, r2, resume), c21 = initial(bias1, r2 + 8, resume)
        var c30 = initial(bias0, r3, resume), c31 = initial(bias1, r3 + 8, resume)
        var c40 = count > 4 ? initial(bias0, r4, resume) : bias0, c41 = count > 4 ? initial(bias1, r4 + 8, resume) : bias1
        var c50 = count > 4 ? initial(bias0, r5, resume) : bias0, c51 = count > 4 ? initial(bias1, r5 + 8, resume) : bias1
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
        UnsafeMutableRawPointer(r0).storeBytes(of: final(c00, lower, upper, finish), as: Half.self)
        UnsafeMutableRawPointer(r0 + 8).storeBytes(of: final(c01, lower, upper, finish), as: Half.self)
        UnsafeMutableRawPointer(r1).storeBytes(of: final(c10, lower, upper, finish), as: Half.self)
        UnsafeMutableRawPointer(r1 + 8).storeBytes(of: final(c11, lower, upper, finish), as: Half.self)
        UnsafeMutableRawPointer(r2).storeBytes(of: final(c20, lower, upper, finish), as: Half.self)
        UnsafeMutableRawPointer(r2 + 8).storeBytes(of: final(c21, lower, upper, finish), as: Half.self)
        UnsafeMutableRawPointer(r3).storeBytes(of: final(c30, lower, upper, finish), as: Half.self)
        UnsafeMutableRawPointer(r3 + 8).storeBytes(of: final(c31, lower, upper, finish), as: Half.self)
        if count > 4 {
            UnsafeMutableRawPointer(r4).storeBytes(of: final(c40, lower, upper, finish), as: Half.self)
            UnsafeMutableRawPointer(r4 + 8).storeBytes(of: final(c41, lower, upper, finish), as: Half.self)
            UnsafeMutableRawPointer(r5).storeBytes(of: final(c50, lower, upper, finish), as: Half.self)
            UnsafeMutableRawPointer(r5 + 8).storeBytes(of: final(c51, lower, upper, finish), as: Half.self)
        }
    }
    #endif

    /// The 7 × 8 micro-kernel (`SIMD8`, half-width registers), for an 8-column block.
    @inline(never)
    static func tile7x8(rows: Int, runs: Runs, a: UnsafePointer<Float>, lda: Int, packed: UnsafeRawPointer,
                        bias: UnsafeRawPointer, lower: Float, upper: Float, c: UnsafeMutablePointer<Float>, ldc: Int,
                        resume: Bool, finish: Bool) {
        let (a0, a1, a2, a3, a4, a5, a6) = rowPointers(a, stride: lda, count: rows)
        let (r0, r1, r2, r3, r4, r5, r6) = rowPointers(c, stride: ldc, count: rows)
        let bias0 = bias.loadUnaligned(as: Half.self)
        var c0 = initial(bias0, r0, resume), c1 = initial(bias0, r1, resume), c2 = initial(bias0, r2, resume)
        var c3 = initial(bias0, r3, resume), c4 = initial(bias0, r4, resume), c5 = initial(bias0, r5, resume)
        var c6 = initial(bias0, r6, resume)
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
        UnsafeMutableRawPointer(r0).storeBytes(of: final(c0, lower, upper, finish), as: Half.self)
        UnsafeMutableRawPointer(r1).storeBytes(of: final(c1, lower, upper, finish), as: Half.self)
        UnsafeMutableRawPointer(r2).storeBytes(of: final(c2, lower, upper, finish), as: Half.self)
        UnsafeMutableRawPointer(r3).storeBytes(of: final(c3, lower, upper, finish), as: Half.self)
        UnsafeMutableRawPointer(r4).storeBytes(of: final(c4, lower, upper, finish), as: Half.self)
        UnsafeMutableRawPointer(r5).storeBytes(of: final(c5, lower, upper, finish), as: Half.self)
        UnsafeMutableRawPointer(r6).storeBytes(of: final(c6, lower, upper, finish), as: Half.self)
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
