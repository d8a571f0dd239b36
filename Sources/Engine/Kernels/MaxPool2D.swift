/// MAX_POOL_2D: `output[n, y, x, c] = act(max of input[n, iy, ix, c] over the window)`; window taps
/// in the padding are ignored.
enum MaxPool2D {
    static let input = 0, output = 0

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        let pool = try context.pool2D(input: Self.input, output: Self.output)
        if pool.type != .float32 { return try prepareQuantized(&context, geometry: pool.geometry, activation: pool.activation) }
        return MaxPool2DFloat32(geometry: pool.geometry, range: pool.floatRange,
                                input: context.node.inputs[Self.input], output: context.node.outputs[Self.output])
    }
}

/// Float32 max pooling, all channels of an output pixel at once: sixteen channels a step, held
/// in registers over the window's taps, then eight, then one at a time. Each starts at
/// `−greatestFiniteMagnitude` and takes `m < v ? v : m` per tap (std::max(m, v), as TFLite: a
/// NaN input is skipped), then clamps to the fused activation's range.
struct MaxPool2DFloat32: PartitionedKernel {
    let geometry: Pool2DGeometry
    let range: ClosedRange<Float>
    let input: Int, output: Int

    func eval(_ memory: TensorMemory) {
        let g = geometry
        // Threads take whole output rows.
        memory.parallelize(self, count: g.batches * g.outputHeight,
                           work: g.batches * g.outputHeight * g.outputWidth * g.channels * g.filterHeight * g.filterWidth)
    }

    /// Output rows `outputRows`, counted over all batches.
    func evalPart(_ outputRows: Range<Int>, step: Int, worker: Int, memory: TensorMemory) {
        let g = geometry
        let c = g.channels, stride = MemoryLayout<Float>.stride
        let (lower, upper) = (range.lowerBound, range.upperBound)
        let base = memory.input(input, as: Float.self), out = memory.output(output, as: Float.self)
        for outputRow in outputRows {
            let oy = outputRow % g.outputHeight
            let image = UnsafeRawPointer(base + outputRow / g.outputHeight * g.inputHeight * g.inputWidth * c)
            var dst = UnsafeMutableRawPointer(out + outputRow * g.outputWidth * c)
            let rows = g.inputRows(oy)
            for ox in 0 ..< g.outputWidth {
                let window = Window(rows: rows, columns: g.inputColumns(ox), rowBytes: g.inputWidth &* c &* stride, pixelBytes: c &* stride)
                var ch = 0
                while ch &+ 16 <= c {
                    let m = window.maximum(image + ch &* stride, SIMD16<Float>(repeating: -.greatestFiniteMagnitude))
                    dst.storeBytes(of: FloatGEMM.clamp(m, lower, upper), toByteOffset: ch &* stride, as: SIMD16<Float>.self)
                    ch &+= 16
                }
                if ch &+ 8 <= c {
                    let m = window.maximum(image + ch &* stride, SIMD8<Float>(repeating: -.greatestFiniteMagnitude))
                    dst.storeBytes(of: FloatGEMM.clamp(m, lower, upper), toByteOffset: ch &* stride, as: SIMD8<Float>.self)
                    ch &+= 8
                }
                while ch < c {
                    let m = window.maximum(image + ch &* stride, -Float.greatestFiniteMagnitude)
                    dst.storeBytes(of: FloatGEMM.clamp(m, lower, upper), toByteOffset: ch &* stride, as: Float.self)
                    ch &+= 1
                }
                dst += c &* stride
            }
        }
    }

    /// One output pixel's window: input rows and columns, and the bytes between rows and pixels.
    /// Each `maximum` folds the taps at `source` plus each tap's offset into `m` (one overload per
    /// lane type: written over `SIMD`, the selection compiled to a loop over the lanes).
    private struct Window {
        let rows: Range<Int>, columns: Range<Int>
        let rowBytes: Int, pixelBytes: Int

        @inline(__always)
        func maximum(_ source: UnsafeRawPointer, _ start: SIMD16<Float>) -> SIMD16<Float> {
            var m = start
            for iy in rows {
                var tap = iy &* rowBytes &+ columns.lowerBound &* pixelBytes
                for _ in columns {
                    let v = source.loadUnaligned(fromByteOffset: tap, as: SIMD16<Float>.self)
                    m = m.replacing(with: v, where: m .< v)
                    tap &+= pixelBytes
                }
            }
            return m
        }

        @inline(__always)
        func maximum(_ source: UnsafeRawPointer, _ start: SIMD8<Float>) -> SIMD8<Float> {
            var m = start
            for iy in rows {
                var tap = iy &* rowBytes &+ columns.lowerBound &* pixelBytes
                for _ in columns {
                    let v = source.loadUnaligned(fromByteOffset: tap, as: SIMD8<Float>.self)
                    m = m.replacing(with: v, where: m .< v)
                    tap &+= pixelBytes
                }
            }
            return m
        }

        @inline(__always)
        func maximum(_ source: UnsafeRawPointer, _ start: Float) -> Float {
            var m = start
            for iy in rows {
                var tap = iy &* rowBytes &+ columns.lowerBound &* pixelBytes
                for _ in columns {
                    let v = source.load(fromByteOffset: tap, as: Float.self)
                    m = m < v ? v : m
                    tap &+= pixelBytes
                }
            }
            return m
        }
    }
}
