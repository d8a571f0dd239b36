extension FullyConnected {
    /// Hybrid FULLY_CONNECTED (float32 input and output, constant int8 weights), as TFLite's
    /// `EvalHybridDense` with its portable tensor utilities: each input row is quantized on the
    /// fly (`HybridInputQuantization`, symmetric or with `asymmetric_quantize_inputs`), the dot
    /// products run in Int32 (minus `rowSum_u · zeroPoint_b` for asymmetric rows), and
    ///
    ///     output[b, u] = act(bias[u] + Float(dot) · (rowScale_b · filterScale_u))
    ///
    /// with one filter scale or one per unit. Weights are never dequantized.
    static func prepareHybrid(_ context: inout PrepareContext, shape: Shape, options: FullyConnectedOptions) throws(ModelError) -> any Kernel {
        let (_, q, bias, range) = try context.hybridOperands(weights: Self.weights, bias: Self.bias, output: Self.output, role: "weights",
                                                            channels: shape.units, dimension: 0, perTensor: true,
                                                            what: "unit", activation: options.activation)
        let values = try context.constant(Self.weights).elements(as: Int8.self)
        var rowSums = [Int32](repeating: 0, count: shape.units)
        for u in 0 ..< shape.units {
            for d in 0 ..< shape.inputDepth { rowSums[u] += Int32(values[u * shape.inputDepth + d]) }
        }
        context.requestScratch(bytes: shape.batches * shape.inputDepth)
        return FullyConnectedHybrid(shape: shape, weights: PackedBuffer(values), rowSums: PackedBuffer(rowSums),
                                    scales: q.scales.count == 1 ? Array(repeating: q.scales[0], count: shape.units) : q.scales,
                                    bias: bias, asymmetric: options.asymmetricQuantizeInputs,
                                    lower: range.lowerBound, upper: range.upperBound,
                                    input: context.node.inputs[Self.input], output: context.node.outputs[Self.output])
    }
}

/// A plain scalar loop (correctness first); see `FullyConnected.prepareHybrid`.
struct FullyConnectedHybrid: Kernel {
    let shape: FullyConnected.Shape
    /// `[units, inputDepth]`.
    let weights: PackedBuffer<Int8>
    let rowSums: PackedBuffer<Int32>
    let scales: [Float]
    let bias: PackedBuffer<Float>?
    let asymmetric: Bool
    let lower: Float, upper: Float
    let input: Int, output: Int

    func eval(_ memory: TensorMemory) {
        let x = memory.input(input, as: Float.self), y = memory.output(output, as: Float.self)
        let q = memory.scratch(as: Int8.self), w = weights.pointer
        let depth = shape.inputDepth
        for b in 0 ..< shape.batches {
            let row = q + b * depth
            var rowScale: Float, zeroPoint: Int32 = 0
            if asymmetric {
                (rowScale, zeroPoint) = HybridInputQuantization.asymmetric(x + b * depth, count: depth, into: row)
            } else {
                rowScale = HybridInputQuantization.symmetric(x + b * depth, count: depth, into: row)
            }
            for u in 0 ..< shape.units {
                var dot: Int32 = 0
                let weightsRow = w + u * depth
                for d in 0 ..< depth { dot &+= Int32(weightsRow[d]) * Int32(row[d]) }
                dot &-= rowSums.pointer[u] &* zeroPoint
                let value = (bias?.pointer[u] ?? 0) + Float(dot) * (rowScale * scales[u])
                y[b * shape.units + u] = FloatGEMM.clamp(value, lower, upper)
            }
        }
    }
}
