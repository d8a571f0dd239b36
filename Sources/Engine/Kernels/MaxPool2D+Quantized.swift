extension MaxPool2D {
    /// Integer max pooling (uint8, int8): the window's maximum (padding excluded), clamped to the
    /// fused activation's range, as TFLite's reference kernels. Input and output share their
    /// quantization (the output's is used for the clamp).
    static func prepareQuantized(_ context: inout PrepareContext, geometry: Pool2DGeometry, activation: FusedActivation) throws(ModelError) -> any Kernel {
        let (input, _, output, outputQ) = try context.unaryQuantized()
        let range = try context.integerActivationRange(activation, output: output, outputQ)
        let (i, o) = (context.node.inputs[Self.input], context.node.outputs[Self.output])
        if input.dataType == .int8 {
            return MaxPool2DQuantized<Int8>(geometry: geometry, lower: Int8(range.lowerBound), upper: Int8(range.upperBound), input: i, output: o)
        }
        return MaxPool2DQuantized<UInt8>(geometry: geometry, lower: UInt8(range.lowerBound), upper: UInt8(range.upperBound), input: i, output: o)
    }
}

/// Integer max pooling of an 8-bit tensor, all channels of an output pixel at once.
struct MaxPool2DQuantized<T: FixedWidthInteger & Sendable>: PartitionedKernel {
    let geometry: Pool2DGeometry
    let lower: T, upper: T
    let input: Int, output: Int

    // Kernels run behind `any Kernel`, whose witness would be the unspecialised generic code;
    // these make it jump to the 8-bit specialisations.
    @_specialize(where T == Int8)
    @_specialize(where T == UInt8)
    func eval(_ memory: TensorMemory) {
        let g = geometry
        // Threads take whole output rows.
        memory.parallelize(self, count: g.batches * g.outputHeight,
                           work: g.batches * g.outputHeight * g.outputWidth * g.channels * g.filterHeight * g.filterWidth)
    }

    /// Output rows `outputRows`, counted over all batches: sixteen channels a step, held in a
    /// register over the window's taps, then one at a time. Int8 bytes are compared as UInt8
    /// after flipping their top bit (`x ^ 0x80` maps −128...127 to 0...255 in order), so one
    /// loop serves both types; the flip is undone on the store.
    @_specialize(where T == Int8)
    @_specialize(where T == UInt8)
    func evalPart(_ outputRows: Range<Int>, step: Int, worker: Int, memory: TensorMemory) {
        let g = geometry
        let c = g.channels
        let flip: UInt8 = T.isSigned ? 0x80 : 0
        let lower = UInt8(truncatingIfNeeded: lower) ^ flip, upper = UInt8(truncatingIfNeeded: upper) ^ flip
        let (flips, low, high) = (SIMD16<UInt8>(repeating: flip), SIMD16<UInt8>(repeating: lower), SIMD16<UInt8>(repeating: upper))
        let base = UnsafeRawPointer(memory.input(input, as: T.self)), out = UnsafeMutableRawPointer(memory.output(output, as: T.self))
        for outputRow in outputRows {
            let oy = outputRow % g.outputHeight
            let image = base + outputRow / g.outputHeight * g.inputHeight * g.inputWidth * c
            var dst = out + outputRow * g.outputWidth * c
            let rows = g.inputRows(oy), rowBytes = g.inputWidth &* c
            for ox in 0 ..< g.outputWidth {
                let columns = g.inputColumns(ox)
                var ch = 0
                while ch &+ 16 <= c {
                    var m = SIMD16<UInt8>(repeating: 0)
                    for iy in rows {
                        var tap = iy &* rowBytes &+ columns.lowerBound &* c &+ ch
                        for _ in columns {
                            let v = image.loadUnaligned(fromByteOffset: tap, as: SIMD16<UInt8>.self) ^ flips
                            m = m.replacing(with: v, where: m .< v)
                            tap &+= c
                        }
                    }
                    m = m.replacing(with: low, where: m .< low)
                    dst.storeBytes(of: m.replacing(with: high, where: m .> high) ^ flips, toByteOffset: ch, as: SIMD16<UInt8>.self)
                    ch &+= 16
                }
                while ch < c {
                    var m: UInt8 = 0
                    for iy in rows {
                        for ix in columns { m = max(m, image.load(fromByteOffset: (iy &* g.inputWidth &+ ix) &* c &+ ch, as: UInt8.self) ^ flip) }
                    }
                    dst.storeBytes(of: min(max(m, lower), upper) ^ flip, toByteOffset: ch, as: UInt8.self)
                    ch &+= 1
                }
                dst += c
            }
        }
    }
}
