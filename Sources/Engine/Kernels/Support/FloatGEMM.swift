import CX86Intrinsics
import SIMDKernels
import SIMDKernelsAVX512

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
///   (`tile6x16`, 12 accumulators), so there `tileRows` is 6; a last 16-column block and the
///   8-column one after it go together through 3 × 24 bands (`tile6x24`, `joinsLastBlocks`).
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
///   floats) come from L3 or memory, and their first tile waited on them. Not where `A` is read
///   in place on AVX2 alone (`prefetchesInPlace`).
/// - **Rows of `A` in place.** `Runs` lets a row of `A` be several runs of adjacent values, so a
///   convolution reads its input directly instead of copying patches out (im2col).
/// - **Epilogue.** The element-wise operators fused after a convolution (`FloatEpilogue`) go
///   over each chunk of rows once all its columns are stored; where `W` is small, chunks are cut
///   to `epilogueChunkBytes` of `C`, so the epilogue reads them from L2.
///
/// `reference` is the plain scalar definition that the tests hold `multiply` to.
enum FloatGEMM {
    typealias Lanes = SIMD16<Float>
    typealias Half = SIMD8<Float>

    /// Whether this machine runs the AVX-512 tiles (7 × 32, 32 `zmm` registers) of the
    /// `SIMDKernelsAVX512` module; otherwise `SIMDKernels`, compiled for the build's floor. Fixed for the
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
    /// Rows of the next tile when `remaining` rows of a chunk are left: up to `tileRows`. On AVX2
    /// without AVX-512 the 6-row band gives way to a 5- or 4-row one wherever whole 6-row bands
    /// would leave 1–3 rows or 7 for the end: a band of fewer than 4 rows takes as long as a 4-row
    /// one (its eight FMA chains, no longer enough to hide their latency, become fewer), and there
    /// is no 7-row band. So 49 rows (a 7 × 7 layer) go as 6 · 6 + 5 + 4 + 4, the time of 49 rows
    /// in 6-row bands, where eight 6-row bands and a 4-row one for the last row took that of 52.
    static func tileHeight(remaining: Int) -> Int {
        guard tileRows == 6 else { return min(tileRows, remaining) }
        return avx2BandHeight(remaining: remaining)
    }

    /// `tileHeight` of the AVX2 bands (6, 5 or 4 rows; at most `remaining`), on any build.
    static func avx2BandHeight(remaining r: Int) -> Int {
        func leavesShortBand(_ rest: Int) -> Bool { rest == 7 || (1 ... 3).contains(rest) }
        if r <= 6 { return r }
        if r == 7 { return 4 }
        if !leavesShortBand(r - 6) { return 6 }
        return leavesShortBand(r - 5) ? 4 : 5
    }

    /// Whether the last 16-column block and an 8-column block after it (`n` 8 or fewer past a
    /// multiple of 16, at least 24: MobileNetV2's and EfficientNet's 24- and 40-channel
    /// projections) run as one 24-column tile (`FloatTiles.tile6x24`) where a product covers
    /// both: AVX2 without AVX-512, whose 8-column tile does a broadcast per FMA.
    static let joinsLastBlocks: Bool = {
        #if SWIFTLITE_AVX2
        !wide
        #else
        false
        #endif
    }()

    /// Target size of one chunk of `A`'s rows.
    static let chunkBytes = 128 * 1024
    /// The most of `A` kept as one chunk when `W` is much larger (a quarter of a 2 MiB L2).
    static let maximumChunkBytes = 512 * 1024
    /// With an epilogue, chunks hold at most this much of `C` (a quarter of a 512 KiB L2, so that
    /// it is still in L2 when the epilogue reads it) where `W`'s columns take at most
    /// `epilogueWeightBytes`. Each chunk reads those columns of `W` again, so a chunk spans many
    /// tiles: 128 rows of ResNet's 64 → 256 channels per read of their 64 KiB of weights.
    static let epilogueChunkBytes = 128 * 1024
    static let epilogueWeightBytes = 64 * 1024
    /// Steps of `p` per slice of a block whose `k` exceeds two slices: a slice of `W` is 12 KiB
    /// (96 steps of a 32-column block, 192 of a 16-column one), and with the slice of `A` of a
    /// 7 × 7 layer's 49 rows (19 KiB at 96 steps) it stays in a 32 KiB L1 across the chunk's
    /// tiles, where a whole block (`k` = 1152: 147 KiB at 32 columns) would come from L2 for every
    /// tile. Each slice after the first reloads and stores the tiles' partial sums, which 96
    /// steps of a 16-column block did not pay back.
    static let depthSlice = wide ? 96 : 192
    /// Whether the tiles prefetch the next block when `A`'s rows are runs of an input read in
    /// place. `swiftlite_prefetch` is a `prefetcht1`, which Intel's CPUs and AMD's from Zen 4
    /// (the AVX-512 ones) put in L2, but AMD's before Zen 4 (most AVX2-only CPUs this project
    /// meets) put in L1, as a load would. In place, a tile's rows are overlapping windows of a
    /// few input rows, read again and again from L1; there a block's worth of prefetched weights
    /// evicts them. The products of rows copied out (1 × 1 and im2col layers), whose weights
    /// come from memory with few rows to hide it, keep the prefetch.
    static let prefetchesInPlace = wide

    /// Rows of the next chunk when `remaining` rows are left and a chunk holds at most `limit`:
    /// the rows left in as few chunks as `limit` allows, of equal size rounded up to whole tiles.
    /// Every chunk reads all the weights it multiplies, so a chunk of the few rows left over by
    /// full ones (49 as 24 + 24 + 1) would read them all for almost nothing.
    static func nextChunk(remaining: Int, limit: Int) -> Int {
        guard remaining > limit else { return remaining }
        let chunks = (remaining + limit - 1) / limit, even = (remaining + chunks - 1) / chunks
        return min(limit, (even + tileRows - 1) / tileRows * tileRows)
    }

    /// Width of the block of `W` that starts `remaining` columns before the end: 32 while more than
    /// 16 columns remain, then 16, then 8. So 24 columns (MobileNet's bottlenecks) are one 7 × 32
    /// tile with 8 columns of zeros rather than a 16-block and an 8-block, whose 7 × 8 tile does
    /// 7 half-width FMAs per 8 loads. Without AVX-512's 32 registers the 14 accumulators of a 7 × 32 tile (28 `ymm` on AVX2, 56 `q` on
    /// NEON) spill in every step, so there blocks are 16 wide (7 × 16: 14 `ymm`; on AVX2 6 × 16, see
    /// `tile6x16`) until the last 8.
    @inline(always)
    static func blockWidth(remaining: Int) -> Int {
        if wide { return remaining > 16 ? 32 : remaining > 8 ? 16 : 8 }
        return remaining > 8 ? 16 : 8
    }

    /// Where the `k` values of one row of `A` lie: `count` runs of `length` adjacent floats, the
    /// runs `stride` floats apart (a convolution's filter rows in its input).
    struct Runs {
        var count: Int, length: Int, stride: Int

        /// All `k` values adjacent: a plain row-major matrix.
        static func contiguous(_ k: Int) -> Runs { Runs(count: 1, length: k, stride: 0) }
    }

    /// Columns of `C` in whole multiples of this are whole blocks (`blockWidth(remaining:)` stays at
    /// its widest until the last 16, or 8, columns), so a split of `0 ..< n` at multiples of it cuts
    /// no block: the `columns` of `multiply`.
    static var columnGranularity: Int { blockWidth(remaining: Int.max) }

    /// `C = clamp(A · Wᵀ + bias, range)`; `A` rows are `lda` apart (each laid out as `runs`, by
    /// default contiguous), `C` rows `ldc` apart. Only `columns` of `C` (all by default; bounds at
    /// multiples of `columnGranularity`, or `n`) are computed: threads that split the columns each
    /// read only their part of `W`, and every value is computed as it would be without the split.
    /// `epilogue` (bound for this `C`) goes over each chunk of rows once its `columns` are final.
    ///
    /// - Complexity: `m · columns.count · k` multiply-adds; no allocation.
    static func multiply(m: Int, a: UnsafePointer<Float>, lda: Int, runs: Runs? = nil, weights: PackedWeights,
                         columns: Range<Int>? = nil, range: ClosedRange<Float>, c: UnsafeMutablePointer<Float>, ldc: Int,
                         epilogue: FloatEpilogue.Bound? = nil) {
        let n = weights.n, k = weights.k
        let runs = runs ?? .contiguous(k)
        let columns = columns ?? 0 ..< n
        if m == 1 && (runs.count == 1 || runs.stride == runs.length) {
            // One row (a convolution on a 1 × 1 image, or one whose window is its whole input, its
            // runs adjacent): the tiles would compute it seven times. FloatGEMV's sums are this
            // product's row 0, bit for bit.
            FloatGEMV.multiply(x: a, weights: weights, columns: columns, range: range, y: c)
            epilogue?.apply(c + columns.lowerBound, offset: columns.lowerBound, ldc: 0, rows: 1, columns: columns.count,
                            channel: columns.lowerBound)
            return
        }
        precondition(runs.count * runs.length == k, "runs do not cover k")
        precondition(columns.lowerBound % columnGranularity == 0 && columns.upperBound <= n
                     && (columns.upperBound == n || columns.upperBound % columnGranularity == 0), "columns \(columns) cut a block")
        // Every chunk reads all of `W`'s `columns` again: `A` stays one chunk while it is at most
        // twice `chunkBytes`, or no larger than those weights (up to `maximumChunkBytes`): the late
        // layers, 49 rows of 1152 and weights six times that, 100 rows of 1280 and weights 2.5 times that.
        let rowBytes = max(1, k * MemoryLayout<Float>.stride)
        let weightBytes = columns.count * rowBytes, aBytes = m * rowBytes
        var chunkRows = aBytes <= 2 * chunkBytes || (aBytes <= weightBytes && aBytes <= maximumChunkBytes)
            ? max(1, m) : max(tileRows, chunkBytes / rowBytes / tileRows * tileRows)
        if epilogue != nil && weightBytes <= epilogueWeightBytes {
            // The epilogue goes over each chunk's C while it is in L2; weights this small cost
            // little to read again for every chunk.
            chunkRows = min(chunkRows, max(tileRows, epilogueChunkBytes / (columns.count * MemoryLayout<Float>.stride) / tileRows * tileRows))
        }
        let sliced = runs.count == 1 && k > 2 * depthSlice
        let prefetches = runs.count == 1 || prefetchesInPlace
        let tileRows = tileRows, wideTiles = wide, joinsLastBlocks = joinsLastBlocks
        let lower = range.lowerBound, upper = range.upperBound
        withUnsafeTemporaryAllocation(of: Float.self, capacity: tileRows * 32) { edge in
            var chunkStart = 0
            while chunkStart < m {
                let chunkEnd = chunkStart + nextChunk(remaining: m - chunkStart, limit: chunkRows)
                var column = columns.lowerBound
                while column < columns.upperBound {
                    let packedWidth = blockWidth(remaining: n - column)
                    // The last 16-column block and the 8-column one after it, both in `columns`, go
                    // through one 24-column tile (`joinsLastBlocks`).
                    let joined = joinsLastBlocks && packedWidth == 16 && column + 16 < columns.upperBound
                        && blockWidth(remaining: n - column - 16) == 8
                    let width = joined ? 24 : packedWidth, blockColumns = min(width, n - column)
                    let packed = UnsafeRawPointer(weights.blocks.pointer + column * k)
                    let bias = UnsafeRawPointer(weights.bias.pointer + column)
                    // A block too large for L1 goes in slices of `depthSlice` steps, each over every
                    // tile of the chunk (partial sums kept in C), when it writes C directly.
                    let slice = sliced && blockColumns == width ? depthSlice : k
                    let slices = (k + slice - 1) / slice
                    // The next block's weights are fetched a part per tile while this block's
                    // tiles compute from the inner cache, so that its first tile need not wait.
                    let next = prefetches && column + width < columns.upperBound ? packed + width * k * MemoryLayout<Float>.stride : nil
                    let nextBytes = next == nil ? 0 : blockWidth(remaining: n - column - width) * k * MemoryLayout<Float>.stride
                    let part = (nextBytes / (slices * ((chunkEnd - chunkStart + tileRows - 1) / tileRows)) + 63) & ~63
                    var fetched = 0
                    var depth = 0
                    while depth < k {
                        let depthEnd = min(k, depth + slice)
                        let sliceRuns = slice == k ? runs : Runs.contiguous(depthEnd - depth)
                        let slicePacked = packed + depth * packedWidth * MemoryLayout<Float>.stride
                        let resume = depth > 0, finish = depthEnd == k
                        var row = chunkStart
                        while row < chunkEnd {
                            let rows = tileHeight(remaining: chunkEnd - row)
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
                            let (runCount, runLength, runStride) = (sliceRuns.count, sliceRuns.length, sliceRuns.stride)
                            switch (width, wideTiles) {
                            case (24, _):
                                #if SWIFTLITE_AVX2
                                SIMDKernels.FloatTiles.tile6x24(
                                    rows: rows, runCount: runCount, runLength: runLength, runStride: runStride, a: a, lda: lda,
                                    packed: slicePacked, packed8: packed + (16 * k + depth * 8) * MemoryLayout<Float>.stride, bias: bias,
                                    lower: lower, upper: upper, c: target, ldc: targetStride, resume: resume, finish: finish)
                                #else
                                preconditionFailure("24-column tiles are AVX2's")
                                #endif
                            case (32, _):
                                SIMDKernelsAVX512.FloatTiles.tile7x32(
                                    rows: rows, runCount: runCount, runLength: runLength, runStride: runStride, a: a, lda: lda,
                                    packed: slicePacked, bias: bias, lower: lower, upper: upper, c: target, ldc: targetStride,
                                    resume: resume, finish: finish)
                            case (16, true):
                                SIMDKernelsAVX512.FloatTiles.tile7x16(
                                    rows: rows, runCount: runCount, runLength: runLength, runStride: runStride, a: a, lda: lda,
                                    packed: slicePacked, bias: bias, lower: lower, upper: upper, c: target, ldc: targetStride,
                                    resume: resume, finish: finish)
                            case (16, false):
                                #if SWIFTLITE_AVX2
                                SIMDKernels.FloatTiles.tile6x16(
                                    rows: rows, runCount: runCount, runLength: runLength, runStride: runStride, a: a, lda: lda,
                                    packed: slicePacked, bias: bias, lower: lower, upper: upper, c: target, ldc: targetStride,
                                    resume: resume, finish: finish)
                                #else
                                SIMDKernels.FloatTiles.tile7x16(
                                    rows: rows, runCount: runCount, runLength: runLength, runStride: runStride, a: a, lda: lda,
                                    packed: slicePacked, bias: bias, lower: lower, upper: upper, c: target, ldc: targetStride,
                                    resume: resume, finish: finish)
                                #endif
                            case (_, true):
                                SIMDKernelsAVX512.FloatTiles.tile7x8(
                                    rows: rows, runCount: runCount, runLength: runLength, runStride: runStride, a: a, lda: lda,
                                    packed: slicePacked, bias: bias, lower: lower, upper: upper, c: target, ldc: targetStride,
                                    resume: resume, finish: finish)
                            case (_, false):
                                SIMDKernels.FloatTiles.tile7x8(
                                    rows: rows, runCount: runCount, runLength: runLength, runStride: runStride, a: a, lda: lda,
                                    packed: slicePacked, bias: bias, lower: lower, upper: upper, c: target, ldc: targetStride,
                                    resume: resume, finish: finish)
                            }
                            if blockColumns < width {
                                for r in 0 ..< rows { (c + (row + r) * ldc + column).update(from: edge.baseAddress! + r * width, count: blockColumns) }
                            }
                            row += rows
                        }
                        depth = depthEnd
                    }
                    column += width
                }
                epilogue?.apply(c + chunkStart * ldc + columns.lowerBound, offset: chunkStart * ldc + columns.lowerBound, ldc: ldc,
                                rows: chunkEnd - chunkStart, columns: columns.count, channel: columns.lowerBound)
                chunkStart = chunkEnd
            }
        }
    }

    /// `x` limited to `lower...upper`, for the engine's float kernels: `SIMDKernels`' clamp, which
    /// is compiled for the engine's own CPU.
    @inline(always)
    static func clamp(_ x: Lanes, _ lower: Float, _ upper: Float) -> Lanes { SIMDKernels.FloatTiles.clamp(x, lower, upper) }

    @inline(always)
    static func clamp(_ x: Half, _ lower: Float, _ upper: Float) -> Half { SIMDKernels.FloatTiles.clamp(x, lower, upper) }

    /// The 4-lane form (a depthwise layer's last channels), with the same semantics.
    @inline(always)
    static func clamp(_ x: SIMD4<Float>, _ lower: Float, _ upper: Float) -> SIMD4<Float> {
        var x = x
        x.replace(with: SIMD4(repeating: lower), where: x .< SIMD4(repeating: lower))
        x.replace(with: SIMD4(repeating: upper), where: x .> SIMD4(repeating: upper))
        return x
    }

    /// `x` limited to `lower...upper` as TFLite's reference kernels limit it
    /// (`std::min(std::max(x, lower), upper)`) and the lane forms above do: `lower` only where
    /// `x < lower`, `upper` only where `x > upper`, so −0 and NaN stay as they are. (Swift's
    /// `max(x, 0)` turns −0 into +0.)
    @inline(always)
    static func clamp(_ x: Float, _ lower: Float, _ upper: Float) -> Float {
        let y = x < lower ? lower : x
        return y > upper ? upper : y
    }

    /// Plain scalar `C = clamp(A · Wᵀ + bias, range)` on the unpacked filter: the oracle for `multiply`.
    static func reference(m: Int, n: Int, k: Int, a: UnsafePointer<Float>, lda: Int, weights: UnsafePointer<Float>,
                          bias: UnsafePointer<Float>?, range: ClosedRange<Float>, c: UnsafeMutablePointer<Float>, ldc: Int) {
        for i in 0 ..< m {
            for j in 0 ..< n {
                var sum = bias?[j] ?? 0
                for p in 0 ..< k { sum += a[i * lda + p] * weights[j * k + p] }
                c[i * ldc + j] = clamp(sum, range.lowerBound, range.upperBound)
            }
        }
    }
}
