// The tiles of `VNNIProduct` (see VNNIProduct.swift for the layout they read): the block loop
// `multiplyRows` and every helper it inlines, kept in one file so that each `@inline(always)`
// call stays within the file that defines its callee.
#if SWIFTLITE_AVX512VNNI
import CX86Intrinsics

extension VNNIProduct {
    /// The product (see the opening comment of VNNIProduct.swift). `Int8` rows are first copied
    /// with their sign bits flipped, a block at a time, so that one kernel reads every row as
    /// unsigned bytes straight into `vpbroadcastd` (an `xor` per row and group of 4 in the tiles
    /// cost about a fifth of the time of layers with deep rows).
    @inline(never)
    func multiplyRows<Output: VNNIOutput>(_ a: UnsafePointer<UInt8>, rows: Int, rowStride: Int,
                                          scratch: UnsafeMutableRawPointer?, into output: Output) {
        let signed = signedActivations
        let blockRows = blockRows
        // The last panel holds at most 8 of the output's columns: its tall tiles compute only
        // those (`ymm`), and its other lanes are never stored.
        let halfLastPanel = output.columns - (panelCount - 1) * Self.panelWidth <= 8
        // The row sums fit the stack (1 KiB); the flipped rows are the caller's `scratch`.
        withUnsafeTemporaryAllocation(of: Int32.self, capacity: Self.rowBlock) { sums in
            do {
                let flipped = UnsafeMutableBufferPointer(start: scratch?.assumingMemoryBound(to: UInt8.self),
                                                         count: signed ? blockRows * depth : 0)
                let corrections = weightOffset == 0 ? nil : UnsafePointer(sums.baseAddress!)
                var start = 0
                while start < rows {
                    let count = min(blockRows, rows - start)
                    var block = Block(a: a + start * rowStride, rowStride: rowStride, firstRow: start, corrections: corrections)
                    if signed {
                        if rowStride == depth {
                            // Adjacent rows (a 1 × 1 convolution's pixels): one run of bytes, so
                            // that short rows do not each pay for a masked tail.
                            flipSignBits(block.a, to: flipped.baseAddress!, count: count * depth)
                        } else {
                            for r in 0 ..< count {
                                flipSignBits(block.a + r * rowStride, to: flipped.baseAddress! + r * depth, count: depth)
                            }
                        }
                        block = Block(a: UnsafePointer(flipped.baseAddress!), rowStride: depth, firstRow: start,
                                      corrections: corrections)
                    }
                    if weightOffset != 0 {
                        for r in 0 ..< count {
                            sums[r] = weightOffset &* rowSum(block.a + r * block.rowStride)
                        }
                    }
                    var panel = 0
                    while panel < panelCount {
                        switch panelCount - panel {
                        case 4...:
                            multiplyPanels(block, rows: count, panel: panel, width: 4, halfLast: false, output)
                            panel += 4
                        case 2, 3:
                            multiplyPanels(block, rows: count, panel: panel, width: 2,
                                           halfLast: halfLastPanel && panel + 2 == panelCount, output)
                            panel += 2
                        default:
                            multiplyPanels(block, rows: count, panel: panel, width: 1, halfLast: halfLastPanel, output)
                            panel += 1
                        }
                    }
                    start += count
                }
            }
        }
    }

    /// The weights of four panels from `panel` (the tiles that cover four panels at once).
    @inline(always)
    private func panelWeights(_ panel: Int) -> (UnsafeRawPointer, UnsafeRawPointer, UnsafeRawPointer, UnsafeRawPointer) {
        let w0 = panels + panel * panelBytes
        return (w0, w0 + panelBytes, w0 + 2 * panelBytes, w0 + 3 * panelBytes)
    }

    /// The bias of `width` (1, 2 or 4) panels from `panel`: the accumulators' starting values. The
    /// blocks past `width` repeat the first; those accumulators are never stored.
    @inline(always)
    private func panelBias(_ panel: Int, width: Int) -> (SIMD16<Int32>, SIMD16<Int32>, SIMD16<Int32>, SIMD16<Int32>) {
        let raw = UnsafeRawPointer(bias + panel * Self.panelWidth)
        let b0 = swiftlite_load_dwords(raw)
        let b1 = width >= 2 ? swiftlite_load_dwords(raw + 64) : b0
        let b2 = width == 4 ? swiftlite_load_dwords(raw + 128) : b0
        let b3 = width == 4 ? swiftlite_load_dwords(raw + 192) : b0
        return (b0, b1, b2, b3)
    }

    /// `count` bytes from `source` to `destination` with their top bits flipped (`Int8` x as
    /// `UInt8` x + 128), 64 at a time, the last ones by masked loads and stores.
    @inline(always)
    private func flipSignBits(_ source: UnsafePointer<UInt8>, to destination: UnsafeMutablePointer<UInt8>, count depth: Int) {
        let flip = SIMD16<Int32>(repeating: Int32(bitPattern: 0x8080_8080))
        var k = 0
        while k + 64 <= depth {
            let x = swiftlite_load_dwords(source + k)
            UnsafeMutableRawPointer(destination + k).storeBytes(of: x ^ flip, as: SIMD16<Int32>.self)
            k += 64
        }
        if k < depth {
            swiftlite_store_bytes(destination + k, swiftlite_load_bytes(source + k, depth - k) ^ flip, depth - k)
        }
    }

    /// All rows of the block for panels `panel ..< panel + width`: tall tiles for narrow
    /// products (their last panel in `ymm` with `halfLast`), then four rows per tile, then one.
    @inline(always)
    private func multiplyPanels<Output: VNNIOutput>(_ block: Block, rows: Int, panel: Int, width: Int, halfLast: Bool,
                                                    _ output: Output) {
        var row = 0
        if width == 1 {
            if halfLast {
                row = halfPanelTiles(block, rows: rows, panel: panel, width: 1, output)
            }
            while row + 16 <= rows {
                tile16x16(block, row: row, panel: panel, half: false, output)
                row += 16
            }
        } else if width == 2 {
            if halfLast {
                row = halfPanelTiles(block, rows: rows, panel: panel, width: 2, output)
            }
            while row + 8 <= rows {
                tile8x32(block, row: row, panel: panel, halfSecond: false, output)
                row += 8
            }
        }
        while row + 4 <= rows {
            tile(block, row: row, panel: panel, fourRows: true, width: width, output)
            row += 4
        }
        while row < rows {
            tile(block, row: row, panel: panel, fourRows: false, width: width, output)
            row += 1
        }
    }

    /// The tall tiles of `width` (1 or 2) panels from `panel` whose last one holds at most 8
    /// columns (`tile16x16` with `half`, `tile8x32` with `halfSecond`); returns the rows done.
    /// Not inlined: a third and fourth copy of the tiles inside `multiplyRows` would leave too few
    /// registers for the other tiles' constants, which would then spill.
    @inline(never)
    private func halfPanelTiles<Output: VNNIOutput>(_ block: Block, rows: Int, panel: Int, width: Int, _ output: Output) -> Int {
        var row = 0
        if width == 1 {
            while row + 16 <= rows {
                tile16x16(block, row: row, panel: panel, half: true, output)
                row += 16
            }
        } else {
            while row + 8 <= rows {
                tile8x32(block, row: row, panel: panel, halfSecond: true, output)
                row += 8
            }
        }
        return row
    }

    /// One micro-tile: 4 or 1 rows × 64, 32 or 16 columns (`width` panels). The arguments are
    /// constants at every call site, so each inlined copy keeps only its own accumulators.
    @inline(always)
    private func tile<Output: VNNIOutput>(_ block: Block, row: Int, panel: Int, fourRows: Bool, width: Int,
                                                     _ output: Output) {
        let (w0, w1, w2, w3) = panelWeights(panel)
        let (b0, b1, b2, b3) = panelBias(panel, width: width)
        var c00 = b0, c01 = b1, c02 = b2, c03 = b3
        var c10 = b0, c11 = b1, c12 = b2, c13 = b3
        var c20 = b0, c21 = b1, c22 = b2, c23 = b3
        var c30 = b0, c31 = b1, c32 = b2, c33 = b3
        if let corrections = block.corrections {
            let t0 = SIMD16(repeating: corrections[row])
            c00 &+= t0; c01 &+= t0; c02 &+= t0; c03 &+= t0
            if fourRows {
                let t1 = SIMD16(repeating: corrections[row + 1])
                let t2 = SIMD16(repeating: corrections[row + 2])
                let t3 = SIMD16(repeating: corrections[row + 3])
                c10 &+= t1; c11 &+= t1; c12 &+= t1; c13 &+= t1
                c20 &+= t2; c21 &+= t2; c22 &+= t2; c23 &+= t2
                c30 &+= t3; c31 &+= t3; c32 &+= t3; c33 &+= t3
            }
        }
        let r0 = block.a + row * block.rowStride

        @inline(always)
        func accumulate(_ group: Int, _ x: (Int) -> SIMD16<Int32>) {
            let x0 = x(0)
            let x1 = fourRows ? x(1) : x0, x2 = fourRows ? x(2) : x0, x3 = fourRows ? x(3) : x0
            let offset = group &* 64
            let v0 = swiftlite_load_dwords(w0 + offset)
            let v1 = width >= 2 ? swiftlite_load_dwords(w1 + offset) : v0
            let v2 = width == 4 ? swiftlite_load_dwords(w2 + offset) : v0
            let v3 = width == 4 ? swiftlite_load_dwords(w3 + offset) : v0
            c00 = swiftlite_dpbusd(c00, x0, v0)
            if width >= 2 { c01 = swiftlite_dpbusd(c01, x0, v1) }
            if width == 4 { c02 = swiftlite_dpbusd(c02, x0, v2); c03 = swiftlite_dpbusd(c03, x0, v3) }
            if fourRows {
                c10 = swiftlite_dpbusd(c10, x1, v0)
                c20 = swiftlite_dpbusd(c20, x2, v0)
                c30 = swiftlite_dpbusd(c30, x3, v0)
                if width >= 2 {
                    c11 = swiftlite_dpbusd(c11, x1, v1)
                    c21 = swiftlite_dpbusd(c21, x2, v1)
                    c31 = swiftlite_dpbusd(c31, x3, v1)
                }
                if width == 4 {
                    c12 = swiftlite_dpbusd(c12, x1, v2); c13 = swiftlite_dpbusd(c13, x1, v3)
                    c22 = swiftlite_dpbusd(c22, x2, v2); c23 = swiftlite_dpbusd(c23, x2, v3)
                    c32 = swiftlite_dpbusd(c32, x3, v2); c33 = swiftlite_dpbusd(c33, x3, v3)
                }
            }
        }

        forEachGroup(rows: r0, rowStride: block.rowStride, accumulate)
        let outputRow = block.firstRow + row
        output.storeTile((c00, c01, c02, c03), (c10, c11, c12, c13), (c20, c21, c22, c23), (c30, c31, c32, c33),
                         rows: fourRows ? 4 : 1, row: outputRow, column: panel * Self.panelWidth, width: width)
    }

    /// 16 rows × one panel: each weight vector serves sixteen rows. With `half`, only the
    /// panel's first 8 columns, in `ymm` (`swiftlite_dpbusd_low`; the other lanes are undefined).
    @inline(always)
    private func tile16x16<Output: VNNIOutput>(_ block: Block, row: Int, panel: Int, half: Bool, _ output: Output) {
        let w = panels + panel * panelBytes
        let b = swiftlite_load_dwords(bias + panel * Self.panelWidth)
        var c0 = b, c1 = b, c2 = b, c3 = b, c4 = b, c5 = b, c6 = b, c7 = b
        var c8 = b, c9 = b, c10 = b, c11 = b, c12 = b, c13 = b, c14 = b, c15 = b
        if let corrections = block.corrections {
            let t = corrections + row
            c0 &+= SIMD16(repeating: t[0]); c1 &+= SIMD16(repeating: t[1])
            c2 &+= SIMD16(repeating: t[2]); c3 &+= SIMD16(repeating: t[3])
            c4 &+= SIMD16(repeating: t[4]); c5 &+= SIMD16(repeating: t[5])
            c6 &+= SIMD16(repeating: t[6]); c7 &+= SIMD16(repeating: t[7])
            c8 &+= SIMD16(repeating: t[8]); c9 &+= SIMD16(repeating: t[9])
            c10 &+= SIMD16(repeating: t[10]); c11 &+= SIMD16(repeating: t[11])
            c12 &+= SIMD16(repeating: t[12]); c13 &+= SIMD16(repeating: t[13])
            c14 &+= SIMD16(repeating: t[14]); c15 &+= SIMD16(repeating: t[15])
        }
        let r = block.a + row * block.rowStride, s = block.rowStride

        @inline(always)
        func accumulate(_ group: Int, _ x: (Int) -> SIMD16<Int32>) {
            let at = w + group &* 64
            let v = half ? SIMD16<Int32>() : swiftlite_load_dwords(at)
            @inline(always)
            func dot(_ c: SIMD16<Int32>, _ x: SIMD16<Int32>) -> SIMD16<Int32> {
                half ? swiftlite_dpbusd_low(c, x, at) : swiftlite_dpbusd(c, x, v)
            }
            c0 = dot(c0, x(0)); c1 = dot(c1, x(1)); c2 = dot(c2, x(2)); c3 = dot(c3, x(3))
            c4 = dot(c4, x(4)); c5 = dot(c5, x(5)); c6 = dot(c6, x(6)); c7 = dot(c7, x(7))
            c8 = dot(c8, x(8)); c9 = dot(c9, x(9)); c10 = dot(c10, x(10)); c11 = dot(c11, x(11))
            c12 = dot(c12, x(12)); c13 = dot(c13, x(13)); c14 = dot(c14, x(14)); c15 = dot(c15, x(15))
        }

        forEachGroup(rows: r, rowStride: s, accumulate)
        let column = panel * Self.panelWidth, o = block.firstRow + row, k = output.block(at: column)
        output.store(c0, row: o, column: column, block: k); output.store(c1, row: o + 1, column: column, block: k)
        output.store(c2, row: o + 2, column: column, block: k); output.store(c3, row: o + 3, column: column, block: k)
        output.store(c4, row: o + 4, column: column, block: k); output.store(c5, row: o + 5, column: column, block: k)
        output.store(c6, row: o + 6, column: column, block: k); output.store(c7, row: o + 7, column: column, block: k)
        output.store(c8, row: o + 8, column: column, block: k); output.store(c9, row: o + 9, column: column, block: k)
        output.store(c10, row: o + 10, column: column, block: k); output.store(c11, row: o + 11, column: column, block: k)
        output.store(c12, row: o + 12, column: column, block: k); output.store(c13, row: o + 13, column: column, block: k)
        output.store(c14, row: o + 14, column: column, block: k); output.store(c15, row: o + 15, column: column, block: k)
    }

    /// 8 rows × two panels: each weight vector serves eight rows. With `halfSecond`, only the
    /// second panel's first 8 columns, in `ymm` (as `tile16x16`).
    @inline(always)
    private func tile8x32<Output: VNNIOutput>(_ block: Block, row: Int, panel: Int, halfSecond: Bool, _ output: Output) {
        let w0 = panels + panel * panelBytes, w1 = w0 + panelBytes
        let biasRaw = UnsafeRawPointer(bias + panel * Self.panelWidth)
        let b0 = swiftlite_load_dwords(biasRaw)
        let b1 = swiftlite_load_dwords(biasRaw + 64)
        var c00 = b0, c10 = b0, c20 = b0, c30 = b0, c40 = b0, c50 = b0, c60 = b0, c70 = b0
        var c01 = b1, c11 = b1, c21 = b1, c31 = b1, c41 = b1, c51 = b1, c61 = b1, c71 = b1
        if let corrections = block.corrections {
            let t = corrections + row
            let t0 = SIMD16(repeating: t[0]), t1 = SIMD16(repeating: t[1]), t2 = SIMD16(repeating: t[2])
            let t3 = SIMD16(repeating: t[3]), t4 = SIMD16(repeating: t[4]), t5 = SIMD16(repeating: t[5])
            let t6 = SIMD16(repeating: t[6]), t7 = SIMD16(repeating: t[7])
            c00 &+= t0; c10 &+= t1; c20 &+= t2; c30 &+= t3; c40 &+= t4; c50 &+= t5; c60 &+= t6; c70 &+= t7
            c01 &+= t0; c11 &+= t1; c21 &+= t2; c31 &+= t3; c41 &+= t4; c51 &+= t5; c61 &+= t6; c71 &+= t7
        }
        let r = block.a + row * block.rowStride, s = block.rowStride

        @inline(always)
        func accumulate(_ group: Int, _ x: (Int) -> SIMD16<Int32>) {
            let v0 = swiftlite_load_dwords(w0 + group &* 64)
            let at1 = w1 + group &* 64
            let v1 = halfSecond ? SIMD16<Int32>() : swiftlite_load_dwords(at1)
            @inline(always)
            func dot1(_ c: SIMD16<Int32>, _ x: SIMD16<Int32>) -> SIMD16<Int32> {
                halfSecond ? swiftlite_dpbusd_low(c, x, at1) : swiftlite_dpbusd(c, x, v1)
            }
            let x0 = x(0), x1 = x(1), x2 = x(2), x3 = x(3), x4 = x(4), x5 = x(5), x6 = x(6), x7 = x(7)
            c00 = swiftlite_dpbusd(c00, x0, v0); c01 = dot1(c01, x0)
            c10 = swiftlite_dpbusd(c10, x1, v0); c11 = dot1(c11, x1)
            c20 = swiftlite_dpbusd(c20, x2, v0); c21 = dot1(c21, x2)
            c30 = swiftlite_dpbusd(c30, x3, v0); c31 = dot1(c31, x3)
            c40 = swiftlite_dpbusd(c40, x4, v0); c41 = dot1(c41, x4)
            c50 = swiftlite_dpbusd(c50, x5, v0); c51 = dot1(c51, x5)
            c60 = swiftlite_dpbusd(c60, x6, v0); c61 = dot1(c61, x6)
            c70 = swiftlite_dpbusd(c70, x7, v0); c71 = dot1(c71, x7)
        }

        forEachGroup(rows: r, rowStride: s, accumulate)
        let column = panel * Self.panelWidth, o = block.firstRow + row, k = output.blocks(at: column, width: 2)
        output.store(c00, c01, c00, c00, row: o, column: column, width: 2, blocks: k)
        output.store(c10, c11, c10, c10, row: o + 1, column: column, width: 2, blocks: k)
        output.store(c20, c21, c20, c20, row: o + 2, column: column, width: 2, blocks: k)
        output.store(c30, c31, c30, c30, row: o + 3, column: column, width: 2, blocks: k)
        output.store(c40, c41, c40, c40, row: o + 4, column: column, width: 2, blocks: k)
        output.store(c50, c51, c50, c50, row: o + 5, column: column, width: 2, blocks: k)
        output.store(c60, c61, c60, c60, row: o + 6, column: column, width: 2, blocks: k)
        output.store(c70, c71, c70, c70, row: o + 7, column: column, width: 2, blocks: k)
    }

    /// Calls `accumulate(g, x)` for every group `g` of 4 depths, the last of 1–3 depths when
    /// `depth` is not a multiple of 4 (its missing bytes zero), where `x(i)` is row `i`'s bytes of
    /// the group (rows `rowStride` apart from `rows`) in every lane. Inlined into each tile with
    /// its own `accumulate`.
    @inline(always)
    private func forEachGroup(rows r: UnsafePointer<UInt8>, rowStride s: Int, _ accumulate: (Int, (Int) -> SIMD16<Int32>) -> Void) {
        let groups = depth / 4, tail = depth % 4
        for group in 0 ..< groups {
            let k = group &* 4
            accumulate(group) { quad(r + ($0 &* s &+ k)) }
        }
        if tail > 0 {
            let k = groups &* 4
            accumulate(groups) { partialQuad(r + ($0 &* s &+ k), count: tail) }
        }
    }

    /// `Σ_k A′[m, k]` of one row, the bytes as the kernels read them (unsigned): `vpdpbusd`
    /// against bytes of ones, 64 at a time, the last ones by a masked load.
    @inline(always)
    private func rowSum(_ row: UnsafePointer<UInt8>) -> Int32 {
        let ones = SIMD16<Int32>(repeating: 0x0101_0101)
        var sum = SIMD16<Int32>()
        var k = 0
        while k + 64 <= depth {
            sum = swiftlite_dpbusd(sum, swiftlite_load_dwords(row + k), ones)
            k += 64
        }
        if k < depth { sum = swiftlite_dpbusd(sum, swiftlite_load_bytes(row + k, depth - k), ones) }
        return sum.wrappedSum()
    }

    /// The four bytes at `p` in every lane.
    @inline(always)
    private func quad(_ p: UnsafePointer<UInt8>) -> SIMD16<Int32> {
        swiftlite_broadcast_dword(p)
    }

    /// The first `count` (1...3) bytes at `p` in every lane, the rest zero: only `count` bytes are read.
    @inline(always)
    private func partialQuad(_ p: UnsafePointer<UInt8>, count: Int) -> SIMD16<Int32> {
        var word = UInt32(p[0])
        if count > 1 { word |= UInt32(p[1]) << 8 }
        if count > 2 { word |= UInt32(p[2]) << 16 }
        return SIMD16(repeating: Int32(bitPattern: word))
    }
}
#endif
