import CX86Intrinsics
import Microkernels

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
    typealias Lanes = FloatTiles.Lanes
    typealias Half = FloatTiles.Half
    typealias Runs = FloatRuns

    /// Whether this machine runs the AVX-512 tiles (7 × 32, 32 `zmm` registers) of the
    /// Microkernels module; otherwise the engine's own tiles for its target run. Fixed for the
    /// process: weights packed at prepare are laid out for it.
    static let wide: Bool = KernelSelection.runsAVX512

    /// Rows of `C` per micro-kernel call. Seven divides MobileNet exactly (every layer has a
    /// multiple of 7² pixels), where eight wasted an eighth of the work at 7 × 7. AVX2 without
    /// AVX-512 has 16 vector registers, where 7 × 16 spills and 6 × 16 fits (`tile6x16`).
    static let tileRows: Int = {
        #if SWIFTLITE_AVX2
        wide ? 7 : 6
        #else
        7
        #endif
    }()
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
        if wide { return remaining > 16 ? 32 : remaining > 8 ? 16 : 8 }
        return remaining > 8 ? 16 : 8
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
        let tileRows = tileRows, wideTiles = wide
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
                            switch (width, wideTiles) {
                            case (32, _):
                                FloatTiles.tile7x32(rows: rows, runs: sliceRuns, a: a, lda: lda, packed: slicePacked, bias: bias, lower: lower,
                                                    upper: upper, c: target, ldc: targetStride, resume: resume, finish: finish)
                            case (16, true):
                                FloatTiles.tile7x16(rows: rows, runs: sliceRuns, a: a, lda: lda, packed: slicePacked, bias: bias, lower: lower,
                                                    upper: upper, c: target, ldc: targetStride, resume: resume, finish: finish)
                            case (16, false):
                                tile16(rows: rows, runs: sliceRuns, a: a, lda: lda, packed: slicePacked, bias: bias, lower: lower,
                                       upper: upper, c: target, ldc: targetStride, resume: resume, finish: finish)
                            case (_, true):
                                FloatTiles.tile7x8(rows: rows, runs: sliceRuns, a: a, lda: lda, packed: slicePacked, bias: bias, lower: lower,
                                                   upper: upper, c: target, ldc: targetStride, resume: resume, finish: finish)
                            case (_, false):
                                tile7x8(rows: rows, runs: sliceRuns, a: a, lda: lda, packed: slicePacked, bias: bias, lower: lower,
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

    // The engine's own tiles, compiled for its target: used where the AVX-512 tiles do not run.

    /// `x` limited to `lower...upper` (see `FloatTiles.clamp`).
    @inline(always)
    static func clamp(_ x: Lanes, _ lower: Float, _ upper: Float) -> Lanes { FloatTiles.clamp(x, lower, upper) }

    @inline(always)
    static func clamp(_ x: Half, _ lower: Float, _ upper: Float) -> Half { FloatTiles.clamp(x, lower, upper) }

    /// A 16-column block: 6 × 16 on AVX2 (`tile6x16`), 7 × 16 elsewhere.
    @inline(never)
    static func tile16(rows: Int, runs: Runs, a: UnsafePointer<Float>, lda: Int, packed: UnsafeRawPointer,
                       bias: UnsafeRawPointer, lower: Float, upper: Float, c: UnsafeMutablePointer<Float>, ldc: Int,
                       resume: Bool, finish: Bool) {
        #if SWIFTLITE_AVX2
        if rows > 4 {
            band16(6, rows: rows, runs: runs, a: a, lda: lda, packed: packed, bias: bias, lower: lower, upper: upper, c: c, ldc: ldc, resume: resume, finish: finish)
        } else {
            band16(4, rows: rows, runs: runs, a: a, lda: lda, packed: packed, bias: bias, lower: lower, upper: upper, c: c, ldc: ldc, resume: resume, finish: finish)
        }
        #else
        FloatTiles.tile7x16Body(rows: rows, runs: runs, a: a, lda: lda, packed: packed, bias: bias, lower: lower, upper: upper,
                                c: c, ldc: ldc, resume: resume, finish: finish)
        #endif
    }

    /// An 8-column block (`SIMD8`, half-width registers).
    @inline(never)
    static func tile7x8(rows: Int, runs: Runs, a: UnsafePointer<Float>, lda: Int, packed: UnsafeRawPointer,
                        bias: UnsafeRawPointer, lower: Float, upper: Float, c: UnsafeMutablePointer<Float>, ldc: Int,
                        resume: Bool, finish: Bool) {
        FloatTiles.tile7x8Body(rows: rows, runs: runs, a: a, lda: lda, packed: packed, bias: bias, lower: lower, upper: upper,
                               c: c, ldc: ldc, resume: resume, finish: finish)
    }

    #if SWIFTLITE_AVX2
    /// The AVX2 kernel for a 16-column block is 6 rows (`tileRows`), or 4 when at most 4 remain.
    ///
    /// With 16 `ymm`, 7 × 16 needs 14 accumulators, two weight vectors and a broadcast, and LLVM
    /// spills; a 3-row band's 6 accumulators cannot hide the FMA latency (4 cycles at 2 per cycle
    /// wants 8 chains in flight). 6 × 16 keeps 12 chains and 15 registers. Every value of `C` is
    /// still `bias + Σ_p` in order, one FMA per `p`, so the results do not depend on the tile shape.
    /// `count` (4 or 6, a constant where inlined) rows × 16 columns in `Half` (`ymm`) vectors:
    /// `2 · count` accumulators, two weight vectors and one broadcast, at most 15 of the 16
    /// registers, so the loop is loads, `vbroadcastss` and `vfmadd231ps` only. Per `p`, 2 weight
    /// loads and `count` broadcasts feed `2 · count` FMAs. Rows past `rows` (1 ... count)
    /// repeat the last row.
    @inline(always)
    static func band16(_ count: Int, rows: Int, runs: Runs, a: UnsafePointer<Float>, lda: Int, packed: UnsafeRawPointer,
                       bias: UnsafeRawPointer, lower: Float, upper: Float, c: UnsafeMutablePointer<Float>, ldc: Int,
                       resume: Bool, finish: Bool) {
        let (a0, a1, a2, a3, a4, a5, _) = FloatTiles.rowPointers(a, stride: lda, count: rows)
        let (r0, r1, r2, r3, r4, r5, _) = FloatTiles.rowPointers(c, stride: ldc, count: rows)
        let bias0 = bias.loadUnaligned(as: Half.self), bias1 = bias.loadUnaligned(fromByteOffset: 32, as: Half.self)
        var c00 = FloatTiles.initial(bias0, r0, resume), c01 = FloatTiles.initial(bias1, r0 + 8, resume)
        var c10 = FloatTiles.initial(bias0, r1, resume), c11 = FloatTiles.initial(bias1, r1 + 8, resume)
        var c20 = FloatTiles.initial(bias0, r2, resume), c21 = FloatTiles.initial(bias1, r2 + 8, resume)
        var c30 = FloatTiles.initial(bias0, r3, resume), c31 = FloatTiles.initial(bias1, r3 + 8, resume)
        var c40 = count > 4 ? FloatTiles.initial(bias0, r4, resume) : bias0, c41 = count > 4 ? FloatTiles.initial(bias1, r4 + 8, resume) : bias1
        var c50 = count > 4 ? FloatTiles.initial(bias0, r5, resume) : bias0, c51 = count > 4 ? FloatTiles.initial(bias1, r5 + 8, resume) : bias1
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
        UnsafeMutableRawPointer(r0).storeBytes(of: FloatTiles.final(c00, lower, upper, finish), as: Half.self)
        UnsafeMutableRawPointer(r0 + 8).storeBytes(of: FloatTiles.final(c01, lower, upper, finish), as: Half.self)
        UnsafeMutableRawPointer(r1).storeBytes(of: FloatTiles.final(c10, lower, upper, finish), as: Half.self)
        UnsafeMutableRawPointer(r1 + 8).storeBytes(of: FloatTiles.final(c11, lower, upper, finish), as: Half.self)
        UnsafeMutableRawPointer(r2).storeBytes(of: FloatTiles.final(c20, lower, upper, finish), as: Half.self)
        UnsafeMutableRawPointer(r2 + 8).storeBytes(of: FloatTiles.final(c21, lower, upper, finish), as: Half.self)
        UnsafeMutableRawPointer(r3).storeBytes(of: FloatTiles.final(c30, lower, upper, finish), as: Half.self)
        UnsafeMutableRawPointer(r3 + 8).storeBytes(of: FloatTiles.final(c31, lower, upper, finish), as: Half.self)
        if count > 4 {
            UnsafeMutableRawPointer(r4).storeBytes(of: FloatTiles.final(c40, lower, upper, finish), as: Half.self)
            UnsafeMutableRawPointer(r4 + 8).storeBytes(of: FloatTiles.final(c41, lower, upper, finish), as: Half.self)
            UnsafeMutableRawPointer(r5).storeBytes(of: FloatTiles.final(c50, lower, upper, finish), as: Half.self)
            UnsafeMutableRawPointer(r5 + 8).storeBytes(of: FloatTiles.final(c51, lower, upper, finish), as: Half.self)
        }
    }
    #endif


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
