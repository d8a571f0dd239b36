/// The integer matrix product behind quantized CONV_2D and FULLY_CONNECTED:
///
///     C[m, n] = bias[n] + Σ_k (A[m, k] − a₀) · B[k, n]
///
/// `A` holds activations as `UInt8` (int8 activations are stored offset by 128, so that every
/// activation is a non-negative byte), one row per output pixel or batch; `a₀` is their zero
/// point in the same encoding. `B` holds the weights minus their zero point, at most 9 bits
/// (−255...255), packed at prepare time into panels of 16 columns of `Int16`:
/// `panel[p][k][j] = B[k, 16p + j]`. The zero-point term is folded into the bias once,
/// `bias′[n] = bias[n] − a₀ · Σ_k B[k, n]`, so the inner loop is a pure dot product; in
/// wrapping 32-bit arithmetic this equals TFLite's `Σ (w − w₀)(x − x₀) + bias` exactly.
///
///     let gemm = IntegerGEMM(columns: 35, depth: 27, activationZeroPoint: 128,
///                            weight: { n, k in Int32(filter[n * 27 + k]) - 120 },
///                            bias: { n in bias[n] })
///     gemm.multiply(patches, rows: 49, rowStride: 27, into: output)
///
/// The micro-kernel computes a tile of 4 rows × 32 columns in sixteen-lane `Int32`
/// accumulators: per `k` it sign-extends two rows of 16 `Int16` weights, broadcasts four
/// zero-extended activations, and multiply-adds. Because every activation lane has its upper
/// 17 bits clear, LLVM turns each multiply-add into one `vpdpwssd` on AVX-512 VNNI (16
/// multiply-accumulates per instruction), `vpmaddwd` + `vpaddd` on AVX2, `pmaddwd` + `paddd`
/// in a portable SSE2 build — never a call. (LLVM does not form the pairwise `pmaddwd` that
/// would use all 32 halfword lanes from Swift SIMD code, hence one activation per lane.)
/// - Complexity: `rows × columns × depth` multiply-adds, rounded up to whole 16-column panels.
struct IntegerGEMM: Sendable {
    static let panelWidth = 16
    let columns: Int
    let depth: Int
    let panelCount: Int
    /// `panelCount × depth × 16` weights.
    let panels: PackedBuffer<Int16>
    /// `panelCount × 16` folded biases (zero past `columns`).
    let bias: PackedBuffer<Int32>

    /// Packs `weight(n, k)` (already minus the weight zero point, in −255...255) and folds
    /// `activationZeroPoint · Σ_k weight(n, k)` into `bias(n)`.
    init(columns: Int, depth: Int, activationZeroPoint: Int32,
         weight: (_ column: Int, _ k: Int) -> Int32, bias: (_ column: Int) -> Int32) {
        self.columns = columns
        self.depth = depth
        panelCount = (columns + Self.panelWidth - 1) / Self.panelWidth
        panels = PackedBuffer(count: panelCount * depth * Self.panelWidth, initializedTo: 0)
        self.bias = PackedBuffer(count: panelCount * Self.panelWidth, initializedTo: 0)
        for n in 0 ..< columns {
            let panel = panels.pointer + (n / Self.panelWidth) * depth * Self.panelWidth + n % Self.panelWidth
            var sum: Int32 = 0
            for k in 0 ..< depth {
                let w = weight(n, k)
                precondition(w >= -255 && w <= 255, "packed weights must fit in 9 bits")
                panel[k * Self.panelWidth] = Int16(w)
                sum &+= w
            }
            self.bias.pointer[n] = bias(n) &- activationZeroPoint &* sum
        }
    }

    /// Computes rows `0 ..< rows` of the product; row `m` of `A` starts at `a + m · rowStride`.
    /// Each row's result goes to `output` sixteen columns at a time.
    func multiply<Output: IntegerGEMMOutput>(_ a: UnsafePointer<UInt8>, rows: Int, rowStride: Int, into output: Output) {
        var panel = 0
        while panel < panelCount {
            let wide = panel + 1 < panelCount
            var row = 0
            if wide {
                while row + 4 <= rows {
                    tile(a, rowStride: rowStride, row: row, panel: panel, fourRows: true, wide: true, output)
                    row += 4
                }
                while row < rows {
                    tile(a, rowStride: rowStride, row: row, panel: panel, fourRows: false, wide: true, output)
                    row += 1
                }
                panel += 2
            } else {
                while row + 4 <= rows {
                    tile(a, rowStride: rowStride, row: row, panel: panel, fourRows: true, wide: false, output)
                    row += 4
                }
                while row < rows {
                    tile(a, rowStride: rowStride, row: row, panel: panel, fourRows: false, wide: false, output)
                    row += 1
                }
                panel += 1
            }
        }
    }

    /// One micro-tile: 4 or 1 rows × 32 or 16 columns. The flags are constants at every call
    /// site, so each inlined copy keeps only its own accumulators.
    @inline(always)
    private func tile<Output: IntegerGEMMOutput>(_ a: UnsafePointer<UInt8>, rowStride: Int, row: Int, panel: Int,
                                                 fourRows: Bool, wide: Bool, _ output: Output) {
        let panelBytes = depth * Self.panelWidth * MemoryLayout<Int16>.stride
        let w0 = UnsafeRawPointer(panels.pointer) + panel * panelBytes
        let w1 = w0 + panelBytes
        let biasRaw = UnsafeRawPointer(bias.pointer + panel * Self.panelWidth)
        let b0 = biasRaw.loadUnaligned(as: SIMD16<Int32>.self)
        let b1 = wide ? biasRaw.loadUnaligned(fromByteOffset: 64, as: SIMD16<Int32>.self) : b0
        var c00 = b0, c01 = b1, c10 = b0, c11 = b1, c20 = b0, c21 = b1, c30 = b0, c31 = b1
        let r0 = a + row * rowStride
        let r1 = r0 + rowStride, r2 = r1 + rowStride, r3 = r2 + rowStride
        for k in 0 ..< depth {
            let v0 = widened(w0.loadUnaligned(fromByteOffset: k &* 32, as: SIMD16<Int16>.self))
            let v1 = wide ? widened(w1.loadUnaligned(fromByteOffset: k &* 32, as: SIMD16<Int16>.self)) : v0
            let x0 = SIMD16<Int32>(repeating: Int32(r0[k]))
            c00 &+= v0 &* x0
            if wide { c01 &+= v1 &* x0 }
            if fourRows {
                let x1 = SIMD16<Int32>(repeating: Int32(r1[k]))
                let x2 = SIMD16<Int32>(repeating: Int32(r2[k]))
                let x3 = SIMD16<Int32>(repeating: Int32(r3[k]))
                c10 &+= v0 &* x1
                c20 &+= v0 &* x2
                c30 &+= v0 &* x3
                if wide {
                    c11 &+= v1 &* x1
                    c21 &+= v1 &* x2
                    c31 &+= v1 &* x3
                }
            }
        }
        let column = panel * Self.panelWidth
        output.store(c00, row: row, column: column)
        if wide { output.store(c01, row: row, column: column + Self.panelWidth) }
        if fourRows {
            output.store(c10, row: row + 1, column: column)
            output.store(c20, row: row + 2, column: column)
            output.store(c30, row: row + 3, column: column)
            if wide {
                output.store(c11, row: row + 1, column: column + Self.panelWidth)
                output.store(c21, row: row + 2, column: column + Self.panelWidth)
                output.store(c31, row: row + 3, column: column + Self.panelWidth)
            }
        }
    }

    /// The plain triple loop the packed product is tested against: `C[m, n]` in row-major
    /// order, computed exactly as TFLite's reference kernels do.
    static func reference(_ a: UnsafePointer<UInt8>, rows: Int, rowStride: Int, columns: Int, depth: Int,
                          activationZeroPoint: Int32, weight: (Int, Int) -> Int32, bias: (Int) -> Int32) -> [Int32] {
        var c = [Int32](repeating: 0, count: rows * columns)
        for m in 0 ..< rows {
            for n in 0 ..< columns {
                var acc: Int32 = 0
                for k in 0 ..< depth { acc &+= weight(n, k) &* (Int32(a[m * rowStride + k]) &- activationZeroPoint) }
                c[m * columns + n] = acc &+ bias(n)
            }
        }
        return c
    }
}

/// Where `IntegerGEMM.multiply` puts its results: sixteen consecutive columns of one row at a
/// time (lanes at or past the product's column count are padding and must not be stored).
protocol IntegerGEMMOutput {
    func store(_ values: SIMD16<Int32>, row: Int, column: Int)
}

/// Requantizes each result with a per-column `ChannelRequantization` and stores bytes
/// (`UInt8` or `Int8`: the clamp range decides, the low byte is the same).
struct RequantizedGEMMOutput: IntegerGEMMOutput {
    let base: UnsafeMutablePointer<UInt8>
    let rowStride: Int
    let columns: Int
    let stage: ChannelRequantization

    @inline(always)
    func store(_ values: SIMD16<Int32>, row: Int, column: Int) {
        storeLowBytes(stage.apply(values, channel: column), to: base + row * rowStride + column, count: columns - column)
    }
}

/// Stores the raw 32-bit results (tests, and kernels with their own output stage).
struct AccumulatorGEMMOutput: IntegerGEMMOutput {
    let base: UnsafeMutablePointer<Int32>
    let rowStride: Int
    let columns: Int

    @inline(always)
    func store(_ values: SIMD16<Int32>, row: Int, column: Int) {
        let destination = base + row * rowStride + column
        for lane in 0 ..< min(16, columns - column) { destination[lane] = values[lane] }
    }
}
