/// How `Conv2DFloat32` reads its windows: which layout a geometry takes, and the copies the
/// layouts make (the padded frame, one window's patch, im2col's rows), with the scalar oracle.
extension Conv2DFloat32 {
    /// Whether the patches are copied out (im2col) rather than read in place: where they are not
    /// runs of the input (dilated across), where rows would underuse the tiles (`rowsWasteTiles`),
    /// and for a 1 × 1 filter that strides. In place, each output row is a product of its own that
    /// reads all the weights (ResNet's 1 × 1 / 2 shortcuts: 2 MB of them for a row of 14 pixels);
    /// a 1 × 1 filter's patches are its input pixels, each copied once (a quarter of the input at
    /// stride 2), and then one product covers all of them.
    static func copiesPatches(_ g: Conv2D.Geometry) -> Bool {
        !windowsAreRuns(g) || rowsWasteTiles(g)
    }

    /// Whether the layout in place reads this convolution's windows: runs of the input (undilated
    /// across), and not a strided 1 × 1 filter's single pixels.
    static func windowsAreRuns(_ g: Conv2D.Geometry) -> Bool {
        g.dilationWidth == 1 && !(g.filterHeight == 1 && g.filterWidth == 1)
    }

    /// Whether in place, where each output row is a product of its own, rows would underuse the
    /// float tiles, and there are several rows for im2col's patches to run on across:
    /// - rows shorter than a tile (`FloatGEMM.tileRows`): a row of 5 pixels fills 5 of a tile's 7
    ///   rows (3: 3 of 7), where im2col's 25 pixels fill 25 of 28; SSD's extra layers
    ///   (10 × 10 → 5 × 5 and smaller), never the 112- and 150-pixel stems;
    /// - on AVX2, rows that end in a band of fewer than 4 rows (7 pixels: bands of 4 and 3). A band
    ///   of h rows keeps 2h sums in flight, and two FMA units of 4 cycles' latency need 8: the
    ///   3-row band runs at three quarters of the rate. ResNet's last 3 × 3 layers (7 × 7 output);
    /// - on AVX-512, whose 7-row tiles compute all 7 rows whatever is left of the row, rows whose
    ///   tiles leave more than a fifth of their rows unused: 8–11, 15, 16 and 22 pixels (the
    ///   2 × 2 / 2 layers of the iris model, 32 → 16 and 16 → 8 pixels across).
    static func rowsWasteTiles(_ g: Conv2D.Geometry) -> Bool {
        guard g.batches * g.outputHeight > 1 else { return false }
        if g.outputWidth < FloatGEMM.tileRows { return true }
        if FloatGEMM.tileRows == 7 {
            let tileRows = (g.outputWidth + 6) / 7 * 7
            return 5 * (tileRows - g.outputWidth) > tileRows
        }
        guard FloatGEMM.tileRows == 6 else { return false }
        var remaining = g.outputWidth
        while remaining > 0 {
            let band = FloatGEMM.tileHeight(remaining: remaining)
            if band < 4 { return true }
            remaining -= band
        }
        return false
    }

    /// Rows `rows` of the frame `outputRows` reads for one image where the layout pads (nothing
    /// otherwise); `frame` holds `scratchBytes`.
    func padFrame(_ image: UnsafePointer<Float>, into frame: UnsafeMutablePointer<Float>, rows: Range<Int>) {
        guard case .inPlace(padding: .frame(let height, let width)) = layout else { return }
        pad(image, into: frame, height: height, width: width, rows: rows)
    }

    /// The padded frame's height (0 where the layout does not pad).
    var frameHeight: Int {
        guard case .inPlace(padding: .frame(let height, _)) = layout else { return 0 }
        return height
    }

    /// Copies one image into a `height × width` frame of zeros, at (`padTop`, `padLeft`): the frame's rows `rows`.
    private func pad(_ image: UnsafePointer<Float>, into frame: UnsafeMutablePointer<Float>, height: Int, width: Int, rows: Range<Int>) {
        let g = geometry
        let c = g.inputChannels
        let rowLength = width * c, before = g.padLeft * c, inside = g.inputWidth * c
        for y in rows {
            let row = frame + y * rowLength, iy = y - g.padTop
            guard iy >= 0, iy < g.inputHeight else {
                row.update(repeating: 0, count: rowLength)
                continue
            }
            row.update(repeating: 0, count: before)
            (row + before).update(from: image + iy * inside, count: inside)
            (row + before + inside).update(repeating: 0, count: rowLength - before - inside)
        }
    }

    /// The window of output pixel (`row`, `column`) of one image as `patchSize` values in the
    /// filter's order (rows, columns, channels), zeros where it falls in the padding.
    @inline(__always)
    func patch(_ image: UnsafePointer<Float>, row oy: Int, column ox: Int, into patch: UnsafeMutablePointer<Float>) {
        let g = geometry
        let c = g.inputChannels
        var dst = patch
        for ky in 0 ..< g.filterHeight {
            let iy = oy * g.strideHeight - g.padTop + ky * g.dilationHeight
            for kx in 0 ..< g.filterWidth {
                let ix = ox * g.strideWidth - g.padLeft + kx * g.dilationWidth
                if iy >= 0, iy < g.inputHeight, ix >= 0, ix < g.inputWidth {
                    dst.update(from: image + (iy * g.inputWidth + ix) * c, count: c)
                } else {
                    dst.update(repeating: 0, count: c)
                }
                dst += c
            }
        }
    }

    /// Lays out the receptive field of each output pixel in `pixels` as one row of `patchSize`
    /// values, zero where it falls in the padding.
    func im2col(_ source: UnsafePointer<Float>, pixels: Range<Int>, into patches: UnsafeMutablePointer<Float>) {
        var dst = patches
        for pixel in pixels {
            patch(source, row: pixel / geometry.outputWidth, column: pixel % geometry.outputWidth, into: dst)
            dst += geometry.patchSize
        }
    }

    /// Plain scalar convolution of all batches, straight from the definition: the oracle for `convolve`.
    func reference(_ source: UnsafePointer<Float>, _ out: UnsafeMutablePointer<Float>, filter: UnsafePointer<Float>,
                   bias: UnsafePointer<Float>?) {
        let g = geometry
        for b in 0 ..< g.batches {
            for oy in 0 ..< g.outputHeight {
                for ox in 0 ..< g.outputWidth {
                    for o in 0 ..< g.outputChannels {
                        var sum = bias?[o] ?? 0
                        for ky in 0 ..< g.filterHeight {
                            for kx in 0 ..< g.filterWidth {
                                let iy = oy * g.strideHeight - g.padTop + ky * g.dilationHeight
                                let ix = ox * g.strideWidth - g.padLeft + kx * g.dilationWidth
                                guard iy >= 0, iy < g.inputHeight, ix >= 0, ix < g.inputWidth else { continue }
                                for i in 0 ..< g.inputChannels {
                                    sum += source[((b * g.inputHeight + iy) * g.inputWidth + ix) * g.inputChannels + i]
                                        * filter[((o * g.filterHeight + ky) * g.filterWidth + kx) * g.inputChannels + i]
                                }
                            }
                        }
                        out[((b * g.outputHeight + oy) * g.outputWidth + ox) * g.outputChannels + o] = FloatGEMM.clamp(sum, range.lowerBound, range.upperBound)
                    }
                }
            }
        }
    }
}
