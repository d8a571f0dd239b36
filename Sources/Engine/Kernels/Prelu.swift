/// PRELU: `output = x ≥ 0 ? x : x · alpha` with `alpha` (input 1, usually a constant of the
/// non-shared axes) broadcast against `x`; the output has the input's shape, as TFLite
/// requires. float32 here; uint8/int8 in `Prelu+Quantized.swift`.
enum Prelu {
    static let input = 0, alpha = 1, output = 0

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        try context.expect(inputs: 2 ... 2, outputs: 1)
        let input = try context.input(Self.input)
        let broadcast = try context.broadcast(lhs: Self.input, rhs: Self.alpha, output: Self.output)
        guard broadcast.outputShape == input.shape else {
            throw context.invalid("alpha '\(try context.input(Self.alpha).name)' \(try context.input(Self.alpha).shape) broadcasts input \(input.shape) to \(broadcast.outputShape); the output must keep the input's shape")
        }
        switch input.dataType {
        case .float32:
            return PreluFloat32(input: context.node.inputs[Self.input], alpha: context.node.inputs[Self.alpha],
                                output: context.node.outputs[Self.output], broadcast: broadcast)
        case .uint8, .int8:
            return try prepareQuantized(&context, broadcast: broadcast)
        case let type:
            throw context.unsupported("input type \(type), expected float32, uint8 or int8")
        }
    }
}

/// Threads take ranges of the broadcast's runs (`Broadcast.spans`): rows of channels, for an
/// image with one alpha per channel.
struct PreluFloat32: PartitionedKernel {
    let input: Int, alpha: Int, output: Int
    let broadcast: Broadcast

    func eval(_ memory: TensorMemory) {
        memory.parallelize(self, count: broadcast.units, granularity: broadcast.unitGranularity,
                           work: broadcast.outputCount * TensorMemory.elementWork)
    }

    func evalPart(_ units: Range<Int>, step: Int, worker: Int, memory: TensorMemory) {
        let x = memory.input(input, as: Float.self), a = memory.input(alpha, as: Float.self)
        let y = memory.output(output, as: Float.self)
        let (xStep, aStep) = broadcast.innerStrides
        broadcast.spans(units) { l, r, o, count in
            if xStep == 1 {
                Self.prelu(x + l, a + r, repeatingAlpha: aStep == 0, y + o, count: count)
            } else {
                for i in 0 ..< count { y[o + i] = Self.prelu(x[l + i * xStep], a[r + i * aStep]) }
            }
        }
    }

    @inline(__always)
    static func prelu(_ x: Float, _ alpha: Float) -> Float { x >= 0 ? x : x * alpha }

    /// `prelu` lane by lane (NaN lanes take the product). On the concrete vector types: written
    /// generically over `SIMD`, the comparison and the selection compiled to a loop over the lanes.
    @inline(always)
    static func prelu(_ x: SIMD16<Float>, _ alpha: SIMD16<Float>) -> SIMD16<Float> { (x * alpha).replacing(with: x, where: x .>= .zero) }

    @inline(always)
    static func prelu(_ x: SIMD8<Float>, _ alpha: SIMD8<Float>) -> SIMD8<Float> { (x * alpha).replacing(with: x, where: x .>= .zero) }

    /// `count` outputs from contiguous inputs and contiguous (or one repeated) alphas: sixteen
    /// lanes a step, each `x ≥ 0 ? x : x · alpha` as `prelu` (NaN lanes take the product).
    static func prelu(_ x: UnsafePointer<Float>, _ alpha: UnsafePointer<Float>, repeatingAlpha: Bool,
                      _ y: UnsafeMutablePointer<Float>, count: Int) {
        typealias Lanes = SIMD16<Float>
        let source = UnsafeRawPointer(x), alphas = UnsafeRawPointer(alpha), destination = UnsafeMutableRawPointer(y)
        let stride = MemoryLayout<Float>.stride, repeated = Lanes(repeating: alpha[0])
        let end = count - count % Lanes.scalarCount
        var i = 0
        while i < end {
            let v = source.loadUnaligned(fromByteOffset: i &* stride, as: Lanes.self)
            let w = repeatingAlpha ? repeated : alphas.loadUnaligned(fromByteOffset: i &* stride, as: Lanes.self)
            destination.storeBytes(of: prelu(v, w), toByteOffset: i &* stride, as: Lanes.self)
            i &+= Lanes.scalarCount
        }
        while i < count {
            y[i] = prelu(x[i], alpha[repeatingAlpha ? 0 : i])
            i += 1
        }
    }
}
