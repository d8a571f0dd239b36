#if SWIFTLITE_AVX2 && !SWIFTLITE_AVX512
import CX86Intrinsics
#endif

/// The float GEMM's micro-kernels (see `FloatGEMM` in the engine for the layout they read).
///
/// This file is compiled twice (see Package.swift): as `SIMDKernels` for the build's floor (AVX2
/// on x86-64) and as `SIMDKernelsAVX512`, which the engine calls only where
/// `RunTimeCPU.runsAVX512Kernels`. A row of `A` is `runCount` runs of `runLength` adjacent
/// floats, `runStride` apart. Every value of `C` is the bias (or the partial sum a previous pass
/// stored), then one FMA per step of `k` in order, so a tile's shape or width never changes a
/// result.
public enum FloatTiles {
    public typealias Lanes = SIMD16<Float>
    public typealias Half = SIMD8<Float>

    /// Where the `k` values of one row of `A` lie: `count` runs of `length` adjacent floats.
    struct Runs {
        var count: Int, length: Int, stride: Int

        /// Calls `body(start, end)` with each run's steps of `p`, in order (one call for one run).
        @inline(always)
        func forEachSpan(_ body: (Int, Int) -> Void) {
            if count == 1 {
                body(0, length)
            } else {
                for run in 0 ..< count { body(run * stride, run * stride + length) }
            }
        }
    }

    /// `x` limited to `lower...upper`: `lower` where `x < lower`, `upper` where `x > upper`, else
    /// `x` (a NaN lane stays NaN). (`SIMD.clamped` compiles to per-lane scalar code.) With
    /// AVX-512, masked replacement against broadcast bounds becomes `vmaxps`/`vminps`; on AVX2
    /// alone the optimiser made half of a tile's clamps compares and blends, so there each `ymm`
    /// half goes through `swiftlite_clamp_f32x8`. Inlinable: the engine's float kernels clamp with
    /// it too, and `SIMDKernels` is compiled for the engine's own CPU; a module that inlines the
    /// AVX2 form must itself be compiled for AVX2 (the engine is), or the intrinsics header
    /// declares no such function for it.
    @inlinable @inline(always)
    public static func clamp(_ x: Lanes, _ lower: Float, _ upper: Float) -> Lanes {
        #if SWIFTLITE_AVX2 && !SWIFTLITE_AVX512
        return Lanes(lowHalf: clamp(x.lowHalf, lower, upper), highHalf: clamp(x.highHalf, lower, upper))
        #else
        var x = x
        x.replace(with: Lanes(repeating: lower), where: x .< Lanes(repeating: lower))
        x.replace(with: Lanes(repeating: upper), where: x .> Lanes(repeating: upper))
        return x
        #endif
    }

    @inlinable @inline(always)
    public static func clamp(_ x: Half, _ lower: Float, _ upper: Float) -> Half {
        #if SWIFTLITE_AVX2 && !SWIFTLITE_AVX512
        return swiftlite_clamp_f32x8(x, lower, upper)
        #else
        var x = x
        x.replace(with: Half(repeating: lower), where: x .< Half(repeating: lower))
        x.replace(with: Half(repeating: upper), where: x .> Half(repeating: upper))
        return x
        #endif
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

    /// The 7 × 32 tile: 14 accumulators of 16 lanes (AVX-512's 32 `zmm` hold them).
    @inline(never)
    public static func tile7x32(rows: Int, runCount: Int, runLength: Int, runStride: Int, a: UnsafePointer<Float>, lda: Int,
                              packed: UnsafeRawPointer, bias: UnsafeRawPointer, lower: Float, upper: Float,
                              c: UnsafeMutablePointer<Float>, ldc: Int, resume: Bool, finish: Bool) {
        tile7x32Body(rows: rows, runs: Runs(count: runCount, length: runLength, stride: runStride), a: a, lda: lda, packed: packed,
            bias: bias, lower: lower, upper: upper, c: c, ldc: ldc, resume: resume, finish: finish)
    }

    /// The 7 × 16 tile, for a 16-column block.
    @inline(never)
    public static func tile7x16(rows: Int, runCount: Int, runLength: Int, runStride: Int, a: UnsafePointer<Float>, lda: Int,
                              packed: UnsafeRawPointer, bias: UnsafeRawPointer, lower: Float, upper: Float,
                              c: UnsafeMutablePointer<Float>, ldc: Int, resume: Bool, finish: Bool) {
        tile7x16Body(rows: rows, runs: Runs(count: runCount, length: runLength, stride: runStride), a: a, lda: lda, packed: packed,
            bias: bias, lower: lower, upper: upper, c: c, ldc: ldc, resume: resume, finish: finish)
    }

    /// The 6 × 16 tile of `SIMD8` halves, for a 16-column block on AVX2 (16 `ymm`): 6 rows go
    /// through the 6-row band, 5 through the 5-row one, at most 4 through the 4-row one.
    @inline(never)
    public static func tile6x16(rows: Int, runCount: Int, runLength: Int, runStride: Int, a: UnsafePointer<Float>, lda: Int,
                              packed: UnsafeRawPointer, bias: UnsafeRawPointer, lower: Float, upper: Float,
                              c: UnsafeMutablePointer<Float>, ldc: Int, resume: Bool, finish: Bool) {
        let runs = Runs(count: runCount, length: runLength, stride: runStride)
        if rows > 5 {
            band16(6, rows: rows, runs: runs, a: a, lda: lda, packed: packed, bias: bias, lower: lower, upper: upper,
                   c: c, ldc: ldc, resume: resume, finish: finish)
        } else if rows == 5 {
            band16(5, rows: rows, runs: runs, a: a, lda: lda, packed: packed, bias: bias, lower: lower, upper: upper,
                   c: c, ldc: ldc, resume: resume, finish: finish)
        } else {
            band16(4, rows: rows, runs: runs, a: a, lda: lda, packed: packed, bias: bias, lower: lower, upper: upper,
                   c: c, ldc: ldc, resume: resume, finish: finish)
        }
    }

    /// Up to 6 rows × 24 columns in `Half` (`ymm`) vectors, for AVX2's last 16-column block and
    /// the 8-column block after it (`packed8`: their layouts as packed, `[k][16]` and `[k][8]`;
    /// `bias` their 24 adjacent values): bands of 3 rows (2 + 2 for 4, 3 + 2 for 5), nine
    /// accumulators and three weight vectors each, every row computed once. The 8-column
    /// block's own tile does one broadcast per FMA; here each broadcast feeds three (the 6 × 16
    /// bands' feed two).
    @inline(never)
    public static func tile6x24(rows: Int, runCount: Int, runLength: Int, runStride: Int, a: UnsafePointer<Float>, lda: Int,
                                packed: UnsafeRawPointer, packed8: UnsafeRawPointer, bias: UnsafeRawPointer, lower: Float,
                                upper: Float, c: UnsafeMutablePointer<Float>, ldc: Int, resume: Bool, finish: Bool) {
        let runs = Runs(count: runCount, length: runLength, stride: runStride)
        var row = 0
        while row < rows {
            let count = rows - row == 4 ? 2 : min(3, rows - row)
            let a = a + row * lda, c = c + row * ldc
            switch count {
            case 3:
                band24(3, runs: runs, a: a, lda: lda, packed: packed, packed8: packed8, bias: bias, lower: lower,
                       upper: upper, c: c, ldc: ldc, resume: resume, finish: finish)
            case 2:
                band24(2, runs: runs, a: a, lda: lda, packed: packed, packed8: packed8, bias: bias, lower: lower,
                       upper: upper, c: c, ldc: ldc, resume: resume, finish: finish)
            default:
                band24(1, runs: runs, a: a, lda: lda, packed: packed, packed8: packed8, bias: bias, lower: lower,
                       upper: upper, c: c, ldc: ldc, resume: resume, finish: finish)
            }
            row += count
        }
    }

    /// The 7 × 8 tile (`SIMD8`, half-width registers), for an 8-column block.
    @inline(never)
    public static func tile7x8(rows: Int, runCount: Int, runLength: Int, runStride: Int, a: UnsafePointer<Float>, lda: Int,
                              packed: UnsafeRawPointer, bias: UnsafeRawPointer, lower: Float, upper: Float,
                              c: UnsafeMutablePointer<Float>, ldc: Int, resume: Bool, finish: Bool) {
        tile7x8Body(rows: rows, runs: Runs(count: runCount, length: runLength, stride: runStride), a: a, lda: lda, packed: packed,
            bias: bias, lower: lower, upper: upper, c: c, ldc: ldc, resume: resume, finish: finish)
    }

    /// The 7 × 32 micro-kernel (see the type's documentation); rows past `rows` repeat the last row.
    @inline(always)
    static func tile7x32Body(rows: Int, runs: Runs, a: UnsafePointer<Float>, lda: Int, packed: UnsafeRawPointer,
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
        runs.forEachSpan(accumulate)
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
    @inline(always)
    static func tile7x16Body(rows: Int, runs: Runs, a: UnsafePointer<Float>, lda: Int, packed: UnsafeRawPointer,
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
        runs.forEachSpan(accumulate)
        UnsafeMutableRawPointer(r0).storeBytes(of: final(c0, lower, upper, finish), as: Lanes.self)
        UnsafeMutableRawPointer(r1).storeBytes(of: final(c1, lower, upper, finish), as: Lanes.self)
        UnsafeMutableRawPointer(r2).storeBytes(of: final(c2, lower, upper, finish), as: Lanes.self)
        UnsafeMutableRawPointer(r3).storeBytes(of: final(c3, lower, upper, finish), as: Lanes.self)
        UnsafeMutableRawPointer(r4).storeBytes(of: final(c4, lower, upper, finish), as: Lanes.self)
        UnsafeMutableRawPointer(r5).storeBytes(of: final(c5, lower, upper, finish), as: Lanes.self)
        UnsafeMutableRawPointer(r6).storeBytes(of: final(c6, lower, upper, finish), as: Lanes.self)
    }

    /// The 7 × 8 micro-kernel (`SIMD8`, half-width registers), for an 8-column block.
    @inline(always)
    static func tile7x8Body(rows: Int, runs: Runs, a: UnsafePointer<Float>, lda: Int, packed: UnsafeRawPointer,
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
        runs.forEachSpan(accumulate)
        UnsafeMutableRawPointer(r0).storeBytes(of: final(c0, lower, upper, finish), as: Half.self)
        UnsafeMutableRawPointer(r1).storeBytes(of: final(c1, lower, upper, finish), as: Half.self)
        UnsafeMutableRawPointer(r2).storeBytes(of: final(c2, lower, upper, finish), as: Half.self)
        UnsafeMutableRawPointer(r3).storeBytes(of: final(c3, lower, upper, finish), as: Half.self)
        UnsafeMutableRawPointer(r4).storeBytes(of: final(c4, lower, upper, finish), as: Half.self)
        UnsafeMutableRawPointer(r5).storeBytes(of: final(c5, lower, upper, finish), as: Half.self)
        UnsafeMutableRawPointer(r6).storeBytes(of: final(c6, lower, upper, finish), as: Half.self)
    }

    /// `count` (1, 2 or 3, a constant where inlined) rows × 24 columns in `Half` vectors: the
    /// first 16 columns from `packed` (`[k][16]`), the last 8 from `packed8` (`[k][8]`). Per `p`,
    /// 3 weight loads and `count` broadcasts feed `3 · count` FMAs; at most 13 registers.
    @inline(always)
    static func band24(_ count: Int, runs: Runs, a: UnsafePointer<Float>, lda: Int, packed: UnsafeRawPointer,
                       packed8: UnsafeRawPointer, bias: UnsafeRawPointer, lower: Float, upper: Float,
                       c: UnsafeMutablePointer<Float>, ldc: Int, resume: Bool, finish: Bool) {
        let (a0, a1, a2, _, _, _, _) = rowPointers(a, stride: lda, count: count)
        let (r0, r1, r2, _, _, _, _) = rowPointers(c, stride: ldc, count: count)
        let bias0 = bias.loadUnaligned(as: Half.self), bias1 = bias.loadUnaligned(fromByteOffset: 32, as: Half.self)
        let bias2 = bias.loadUnaligned(fromByteOffset: 64, as: Half.self)
        var c00 = initial(bias0, r0, resume), c01 = initial(bias1, r0 + 8, resume), c02 = initial(bias2, r0 + 16, resume)
        var c10 = count > 1 ? initial(bias0, r1, resume) : bias0, c11 = count > 1 ? initial(bias1, r1 + 8, resume) : bias1
        var c12 = count > 1 ? initial(bias2, r1 + 16, resume) : bias2
        var c20 = count > 2 ? initial(bias0, r2, resume) : bias0, c21 = count > 2 ? initial(bias1, r2 + 8, resume) : bias1
        var c22 = count > 2 ? initial(bias2, r2 + 16, resume) : bias2
        var w = packed, w8 = packed8
        @inline(always)
        func accumulate(_ start: Int, _ end: Int) {
            for p in start ..< end {
                let w0 = w.loadUnaligned(as: Half.self), w1 = w.loadUnaligned(fromByteOffset: 32, as: Half.self)
                let w2 = w8.loadUnaligned(as: Half.self)
                w += 64
                w8 += 32
                let x0 = Half(repeating: a0[p])
                c00 = c00.addingProduct(x0, w0); c01 = c01.addingProduct(x0, w1); c02 = c02.addingProduct(x0, w2)
                if count > 1 {
                    let x1 = Half(repeating: a1[p])
                    c10 = c10.addingProduct(x1, w0); c11 = c11.addingProduct(x1, w1); c12 = c12.addingProduct(x1, w2)
                }
                if count > 2 {
                    let x2 = Half(repeating: a2[p])
                    c20 = c20.addingProduct(x2, w0); c21 = c21.addingProduct(x2, w1); c22 = c22.addingProduct(x2, w2)
                }
            }
        }
        runs.forEachSpan(accumulate)
        UnsafeMutableRawPointer(r0).storeBytes(of: final(c00, lower, upper, finish), as: Half.self)
        UnsafeMutableRawPointer(r0 + 8).storeBytes(of: final(c01, lower, upper, finish), as: Half.self)
        UnsafeMutableRawPointer(r0 + 16).storeBytes(of: final(c02, lower, upper, finish), as: Half.self)
        if count > 1 {
            UnsafeMutableRawPointer(r1).storeBytes(of: final(c10, lower, upper, finish), as: Half.self)
            UnsafeMutableRawPointer(r1 + 8).storeBytes(of: final(c11, lower, upper, finish), as: Half.self)
            UnsafeMutableRawPointer(r1 + 16).storeBytes(of: final(c12, lower, upper, finish), as: Half.self)
        }
        if count > 2 {
            UnsafeMutableRawPointer(r2).storeBytes(of: final(c20, lower, upper, finish), as: Half.self)
            UnsafeMutableRawPointer(r2 + 8).storeBytes(of: final(c21, lower, upper, finish), as: Half.self)
            UnsafeMutableRawPointer(r2 + 16).storeBytes(of: final(c22, lower, upper, finish), as: Half.self)
        }
    }

    /// `count` (4, 5 or 6, a constant where inlined) rows × 16 columns in `Half` (`ymm`) vectors:
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
        var c50 = count > 5 ? initial(bias0, r5, resume) : bias0, c51 = count > 5 ? initial(bias1, r5 + 8, resume) : bias1
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
                    let x4 = Half(repeating: a4[p])
                    c40 = c40.addingProduct(x4, w0); c41 = c41.addingProduct(x4, w1)
                }
                if count > 5 {
                    let x5 = Half(repeating: a5[p])
                    c50 = c50.addingProduct(x5, w0); c51 = c51.addingProduct(x5, w1)
                }
            }
        }
        runs.forEachSpan(accumulate)
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
        }
        if count > 5 {
            UnsafeMutableRawPointer(r5).storeBytes(of: final(c50, lower, upper, finish), as: Half.self)
            UnsafeMutableRawPointer(r5 + 8).storeBytes(of: final(c51, lower, upper, finish), as: Half.self)
        }
    }
}
