// The `.int16` micro-kernels of `IntegerGEMM`: portable Swift SIMD, for targets without AVX2
// (an AVX2 build runs `.avx2` instead and leaves these out).
//
// Per `k` a tile sign-extends one row of 16 `Int16` weights per panel, broadcasts each row's
// zero-extended activation (`Int8` ones with their sign bit flipped, i.e. offset by 128, the
// offset folded into the bias), and multiply-adds. Because every activation lane has its upper
// 17 bits clear, LLVM turns each multiply-add into one `vpdpwssd` on AVX-512 VNNI (16
// multiply-accumulates per instruction), `vpmaddwd` + `vpaddd` on AVX2, `pmaddwd` + `paddd` on
// SSE2 — never a call. (LLVM does not form the pairwise `pmaddwd` that would use all 32
// halfword lanes from Swift SIMD code, hence one activation per lane.)

#if !SWIFTLITE_AVX2
extension IntegerGEMM {
    /// The `.int16` product (see the type's documentation).
    func multiplyInt16<Output: IntegerGEMMOutput>(_ a: UnsafePointer<UInt8>, rows: Int, rowStride: Int, into output: Output) {
        if signedActivations {
            multiplySigned(a, rows: rows, rowStride: rowStride, into: output)
        } else {
            multiplyUnsigned(a, rows: rows, rowStride: rowStride, into: output)
        }
    }

    // One function per activation type, each small enough for LLVM to inline every load.
    @inline(never)
    private func multiplyUnsigned<Output: IntegerGEMMOutput>(_ a: UnsafePointer<UInt8>, rows: Int, rowStride: Int, into output: Output) {
        multiply(a, rows: rows, rowStride: rowStride, signed: false, into: output)
    }

    @inline(never)
    private func multiplySigned<Output: IntegerGEMMOutput>(_ a: UnsafePointer<UInt8>, rows: Int, rowStride: Int, into output: Output) {
        multiply(a, rows: rows, rowStride: rowStride, signed: true, into: output)
    }

    @inline(always)
    private func multiply<Output: IntegerGEMMOutput>(_ a: UnsafePointer<UInt8>, rows: Int, rowStride: Int, signed: Bool,
                                                     into output: Output) {
        var panel = 0
        while panel < panelCount {
            switch panelCount - panel {
            case 4...:
                multiplyPanels(a, rows: rows, rowStride: rowStride, panel: panel, width: 4, signed: signed, output)
                panel += 4
            case 2, 3:
                multiplyPanels(a, rows: rows, rowStride: rowStride, panel: panel, width: 2, signed: signed, output)
                panel += 2
            default:
                multiplyPanels(a, rows: rows, rowStride: rowStride, panel: panel, width: 1, signed: signed, output)
                panel += 1
            }
        }
    }

    /// All rows of panels `panel ..< panel + width`: four rows per tile, then one.
    @inline(always)
    private func multiplyPanels<Output: IntegerGEMMOutput>(_ a: UnsafePointer<UInt8>, rows: Int, rowStride: Int, panel: Int,
                                                           width: Int, signed: Bool, _ output: Output) {
        var row = 0
        // Narrow panels take taller tiles (16 accumulators either way), so each weight load
        // serves more rows and enough independent `vpdpwssd` chains hide its latency.
        if width == 1 {
            while row + 16 <= rows {
                tile16x16(a, rowStride: rowStride, row: row, panel: panel, signed: signed, output)
                row += 16
            }
        } else if width == 2 {
            while row + 8 <= rows {
                tile8x32(a, rowStride: rowStride, row: row, panel: panel, signed: signed, output)
                row += 8
            }
        }
        while row + 4 <= rows {
            tile(a, rowStride: rowStride, row: row, panel: panel, fourRows: true, width: width, signed: signed, output)
            row += 4
        }
        while row < rows {
            tile(a, rowStride: rowStride, row: row, panel: panel, fourRows: false, width: width, signed: signed, output)
            row += 1
        }
    }

    /// One micro-tile: 4 or 1 rows × 64, 32 or 16 columns (`width` panels). The arguments are
    /// constants at every call site, so each inlined copy keeps only its own accumulators.
    @inline(always)
    private func tile<Output: IntegerGEMMOutput>(_ a: UnsafePointer<UInt8>, rowStride: Int, row: Int, panel: Int,
                                                 fourRows: Bool, width: Int, signed: Bool, _ output: Output) {
        let (w0, w1, w2, w3) = panelWeights(panel)
        let (b0, b1, b2, b3) = panelBias(panel, width: width)
        var c00 = b0, c01 = b1, c02 = b2, c03 = b3
        var c10 = b0, c11 = b1, c12 = b2, c13 = b3
        var c20 = b0, c21 = b1, c22 = b2, c23 = b3
        var c30 = b0, c31 = b1, c32 = b2, c33 = b3
        let r0 = a + row * rowStride
        let r1 = r0 + rowStride, r2 = r1 + rowStride, r3 = r2 + rowStride
        for k in 0 ..< depth {
            let v0 = widened(w0.loadUnaligned(fromByteOffset: k &* 32, as: SIMD16<Int16>.self))
            let v1 = width >= 2 ? widened(w1.loadUnaligned(fromByteOffset: k &* 32, as: SIMD16<Int16>.self)) : v0
            let v2 = width == 4 ? widened(w2.loadUnaligned(fromByteOffset: k &* 32, as: SIMD16<Int16>.self)) : v0
            let v3 = width == 4 ? widened(w3.loadUnaligned(fromByteOffset: k &* 32, as: SIMD16<Int16>.self)) : v0
            let x0 = activation(r0[k], signed: signed)
            c00 &+= v0 &* x0
            if width >= 2 { c01 &+= v1 &* x0 }
            if width == 4 { c02 &+= v2 &* x0; c03 &+= v3 &* x0 }
            if fourRows {
                let x1 = activation(r1[k], signed: signed)
                let x2 = activation(r2[k], signed: signed)
                let x3 = activation(r3[k], signed: signed)
                c10 &+= v0 &* x1
                c20 &+= v0 &* x2
                c30 &+= v0 &* x3
                if width >= 2 {
                    c11 &+= v1 &* x1
                    c21 &+= v1 &* x2
                    c31 &+= v1 &* x3
                }
                if width == 4 {
                    c12 &+= v2 &* x1; c13 &+= v3 &* x1
                    c22 &+= v2 &* x2; c23 &+= v3 &* x2
                    c32 &+= v2 &* x3; c33 &+= v3 &* x3
                }
            }
        }
        storeRow(c00, c01, c02, c03, row: row, panel: panel, width: width, output)
        if fourRows {
            storeRow(c10, c11, c12, c13, row: row + 1, panel: panel, width: width, output)
            storeRow(c20, c21, c22, c23, row: row + 2, panel: panel, width: width, output)
            storeRow(c30, c31, c32, c33, row: row + 3, panel: panel, width: width, output)
        }
    }

    /// 16 rows × one panel: each weight vector serves sixteen rows.
    @inline(always)
    private func tile16x16<Output: IntegerGEMMOutput>(_ a: UnsafePointer<UInt8>, rowStride: Int, row: Int, panel: Int,
                                                      signed: Bool, _ output: Output) {
        let w = UnsafeRawPointer(panels.pointer) + panel * panelBytes
        let b = UnsafeRawPointer(bias.pointer + panel * Self.panelWidth).loadUnaligned(as: SIMD16<Int32>.self)
        let r = a + row * rowStride, s = rowStride
        var c0 = b, c1 = b, c2 = b, c3 = b, c4 = b, c5 = b, c6 = b, c7 = b
        var c8 = b, c9 = b, c10 = b, c11 = b, c12 = b, c13 = b, c14 = b, c15 = b
        for k in 0 ..< depth {
            let v = widened(w.loadUnaligned(fromByteOffset: k &* 32, as: SIMD16<Int16>.self))
            c0 &+= v &* activation(r[k], signed: signed)
            c1 &+= v &* activation(r[s &+ k], signed: signed)
            c2 &+= v &* activation(r[2 &* s &+ k], signed: signed)
            c3 &+= v &* activation(r[3 &* s &+ k], signed: signed)
            c4 &+= v &* activation(r[4 &* s &+ k], signed: signed)
            c5 &+= v &* activation(r[5 &* s &+ k], signed: signed)
            c6 &+= v &* activation(r[6 &* s &+ k], signed: signed)
            c7 &+= v &* activation(r[7 &* s &+ k], signed: signed)
            c8 &+= v &* activation(r[8 &* s &+ k], signed: signed)
            c9 &+= v &* activation(r[9 &* s &+ k], signed: signed)
            c10 &+= v &* activation(r[10 &* s &+ k], signed: signed)
            c11 &+= v &* activation(r[11 &* s &+ k], signed: signed)
            c12 &+= v &* activation(r[12 &* s &+ k], signed: signed)
            c13 &+= v &* activation(r[13 &* s &+ k], signed: signed)
            c14 &+= v &* activation(r[14 &* s &+ k], signed: signed)
            c15 &+= v &* activation(r[15 &* s &+ k], signed: signed)
        }
        let column = panel * Self.panelWidth
        output.store(c0, row: row + 0, column: column)
        output.store(c1, row: row + 1, column: column)
        output.store(c2, row: row + 2, column: column)
        output.store(c3, row: row + 3, column: column)
        output.store(c4, row: row + 4, column: column)
        output.store(c5, row: row + 5, column: column)
        output.store(c6, row: row + 6, column: column)
        output.store(c7, row: row + 7, column: column)
        output.store(c8, row: row + 8, column: column)
        output.store(c9, row: row + 9, column: column)
        output.store(c10, row: row + 10, column: column)
        output.store(c11, row: row + 11, column: column)
        output.store(c12, row: row + 12, column: column)
        output.store(c13, row: row + 13, column: column)
        output.store(c14, row: row + 14, column: column)
        output.store(c15, row: row + 15, column: column)
    }

    /// 8 rows × two panels: accumulators `cR0`, `cR1` hold row `R`'s two panels.
    @inline(always)
    private func tile8x32<Output: IntegerGEMMOutput>(_ a: UnsafePointer<UInt8>, rowStride: Int, row: Int, panel: Int,
                                                     signed: Bool, _ output: Output) {
        let w0 = UnsafeRawPointer(panels.pointer) + panel * panelBytes
        let w1 = w0 + panelBytes
        let biasRaw = UnsafeRawPointer(bias.pointer + panel * Self.panelWidth)
        let b0 = biasRaw.loadUnaligned(as: SIMD16<Int32>.self)
        let b1 = biasRaw.loadUnaligned(fromByteOffset: 64, as: SIMD16<Int32>.self)
        let r = a + row * rowStride, s = rowStride
        var c00 = b0, c01 = b1, c10 = b0, c11 = b1, c20 = b0, c21 = b1, c30 = b0, c31 = b1
        var c40 = b0, c41 = b1, c50 = b0, c51 = b1, c60 = b0, c61 = b1, c70 = b0, c71 = b1
        for k in 0 ..< depth {
            let v0 = widened(w0.loadUnaligned(fromByteOffset: k &* 32, as: SIMD16<Int16>.self))
            let v1 = widened(w1.loadUnaligned(fromByteOffset: k &* 32, as: SIMD16<Int16>.self))
            let x0 = activation(r[k], signed: signed), x1 = activation(r[s &+ k], signed: signed)
            let x2 = activation(r[2 &* s &+ k], signed: signed), x3 = activation(r[3 &* s &+ k], signed: signed)
            let x4 = activation(r[4 &* s &+ k], signed: signed), x5 = activation(r[5 &* s &+ k], signed: signed)
            let x6 = activation(r[6 &* s &+ k], signed: signed), x7 = activation(r[7 &* s &+ k], signed: signed)
            c00 &+= v0 &* x0; c01 &+= v1 &* x0
            c10 &+= v0 &* x1; c11 &+= v1 &* x1
            c20 &+= v0 &* x2; c21 &+= v1 &* x2
            c30 &+= v0 &* x3; c31 &+= v1 &* x3
            c40 &+= v0 &* x4; c41 &+= v1 &* x4
            c50 &+= v0 &* x5; c51 &+= v1 &* x5
            c60 &+= v0 &* x6; c61 &+= v1 &* x6
            c70 &+= v0 &* x7; c71 &+= v1 &* x7
        }
        let unused = SIMD16<Int32>()
        storeRow(c00, c01, unused, unused, row: row + 0, panel: panel, width: 2, output)
        storeRow(c10, c11, unused, unused, row: row + 1, panel: panel, width: 2, output)
        storeRow(c20, c21, unused, unused, row: row + 2, panel: panel, width: 2, output)
        storeRow(c30, c31, unused, unused, row: row + 3, panel: panel, width: 2, output)
        storeRow(c40, c41, unused, unused, row: row + 4, panel: panel, width: 2, output)
        storeRow(c50, c51, unused, unused, row: row + 5, panel: panel, width: 2, output)
        storeRow(c60, c61, unused, unused, row: row + 6, panel: panel, width: 2, output)
        storeRow(c70, c71, unused, unused, row: row + 7, panel: panel, width: 2, output)
    }

    @inline(always)
    func storeRow<Output: IntegerGEMMOutput>(_ c0: SIMD16<Int32>, _ c1: SIMD16<Int32>, _ c2: SIMD16<Int32>,
                                             _ c3: SIMD16<Int32>, row: Int, panel: Int, width: Int, _ output: Output) {
        let column = panel * Self.panelWidth
        output.store(c0, row: row, column: column)
        if width >= 2 { output.store(c1, row: row, column: column + Self.panelWidth) }
        if width == 4 {
            output.store(c2, row: row, column: column + 2 * Self.panelWidth)
            output.store(c3, row: row, column: column + 3 * Self.panelWidth)
        }
    }

    /// One activation in every lane. An `Int8` is read offset by 128 (the sign bit flipped, a
    /// scalar `xor`): zero-extended lanes give `vpdpwssd`, sign-extended ones `vpmulld`.
    @inline(always)
    private func activation(_ byte: UInt8, signed: Bool) -> SIMD16<Int32> {
        SIMD16(repeating: Int32(signed ? byte ^ 0x80 : byte))
    }
}
#endif
