extension FullyConnected {
    /// Integer fully connected layer (uint8 per-tensor, int8 per-tensor or per-channel).
    static func prepareQuantized(_ context: inout PrepareContext, shape: Shape, activation: FusedActivation) throws(ModelError) -> any Kernel {
        try FullyConnectedQuantized(&context, shape: shape, activation: activation)
    }
}

/// Integer FULLY_CONNECTED, byte-identical to LiteRT's reference kernels
/// (`reference_ops::FullyConnected` for uint8, `reference_integer_ops::FullyConnected` and
/// `FullyConnectedPerChannel` for int8):
///
/// - per-tensor weights (uint8, or int8 with one scale): `Σ (w − w₀)(x − x₀) + bias`;
/// - per-channel weights (int8 only): `Σ w (x − x₀) + bias`, weight zero points ignored;
///
/// then, unlike CONV_2D, a rescale in Double (see `requantizeInDouble`), the output zero point
/// and the activation clamp. The products run through `IntegerGEMM` with constant weights
/// packed at prepare time.
struct FullyConnectedQuantized: TiledKernel {
    let shape: FullyConnected.Shape
    let input: Int, output: Int
    let encoding: ActivationEncoding
    let gemm: IntegerGEMM
    /// `Double(inputScale) · Double(filterScale[unit]) / Double(outputScale)` per unit.
    let scales: PackedBuffer<Double>
    let zeroPoint: Int32
    let range: ClosedRange<Int32>

    init(_ context: inout PrepareContext, shape s: FullyConnected.Shape, activation: FusedActivation) throws(ModelError) {
        switch activation {
        case .none, .relu, .relu6, .reluN1To1: break
        case .tanh, .signBit: throw context.unsupported("fused activation \(activation) (TFLite allows only clamps here)")
        }
        let operands = try context.quantizedOperands(input: FullyConnected.input, weights: FullyConnected.weights,
                                                     bias: FullyConnected.bias, output: FullyConnected.output, role: "weights")
        let type = operands.type, weightsTensor = operands.weights, weightsQ = operands.weightsQ, biasTensor = operands.bias
        let inputQ = operands.inputQ, outputQ = operands.outputQ
        encoding = operands.encoding
        guard weightsTensor.isConstant else {
            throw context.unsupported("quantized weights '\(weightsTensor.name)' must be a constant tensor")
        }
        let units = s.units
        let filterScales: [Float]
        let weightEncoding: WeightEncoding
        if weightsQ.scales.count == 1 {
            try context.checkZeroPoints(weightsQ, of: weightsTensor, role: "weights")
            weightEncoding = WeightEncoding(type, zeroPoint: Int32(weightsQ.zeroPoint))
            try context.checkBiasScale(biasTensor, inputScale: inputQ.scale, filterScale: weightsQ.scale, outputScale: outputQ.scale)
            filterScales = Array(repeating: weightsQ.scale, count: units)
        } else {
            guard type == .int8 else {
                throw context.unsupported("uint8 weights '\(weightsTensor.name)' have \(weightsQ.scales.count) scales; per-channel quantization needs int8")
            }
            let dimension = weightsQ.quantizedDimension
            guard weightsQ.scales.count == units, dimension >= 0, dimension < 2,
                  weightsTensor.shape[dimension] == units else {
                throw context.invalid("weights '\(weightsTensor.name)' have \(weightsQ.scales.count) scales along dimension \(dimension), expected \(units)")
            }
            weightEncoding = WeightEncoding(type, zeroPoint: 0)
            filterScales = weightsQ.scales
        }
        scales = PackedBuffer(filterScales.map {
            fullyConnectedEffectiveScale(inputScale: inputQ.scale, filterScale: $0, outputScale: outputQ.scale)
        })
        zeroPoint = outputQ.zeroPoint
        range = try context.integerActivationRange(activation, output: operands.output, outputQ)

        let weights = try context.constant(FullyConnected.weights).bytes
        var biasValues: UnsafeBufferPointer<Int32>?
        if biasTensor != nil { biasValues = try context.constant(FullyConnected.bias).elements(as: Int32.self) }
        let depth = s.inputDepth
        // int8 inputs are read in place (the product offsets them itself, as in CONV_2D), so
        // their zero point goes in as the signed value.
        gemm = IntegerGEMM(columns: units, depth: depth, activationZeroPoint: encoding.zeroPointValue,
                           signedActivations: encoding.isSigned, layout: .preferred(rows: s.batches),
                           weightBytes: weights, rowLength: depth, encoding: weightEncoding,
                           bias: { n in biasValues?[n] ?? 0 })
        shape = s
        input = context.node.inputs[FullyConnected.input]
        output = context.node.outputs[FullyConnected.output]
        context.requestWorkerScratch(bytes: gemm.scratchBytes)
        context.markPacked(FullyConnected.weights)
        if biasTensor != nil { context.markPacked(FullyConnected.bias) }
    }

    func eval(_ memory: TensorMemory) {
        let s = shape
        guard s.batches > 0, s.units > 0 else { return }
        memory.parallelize(self, grid: memory.grid { grid(memory) })
    }

    /// The tiles the threads take: batches down, blocks of whole GEMM panels of units across,
    /// cut so that the threads read the least (`TileGrid.cheapest`): one batch, as in a classifier's last layer, splits the
    /// units, so each thread reads only its part of the weights.
    private func grid(_ memory: TensorMemory) -> TileGrid {
        grid(tasks: memory.taskCount(work: shape.batches * shape.units * shape.inputDepth), threadCount: memory.threadCount)
    }

    /// The grid for at most `tasks` tiles on `threadCount` threads.
    func grid(tasks: Int, threadCount: Int) -> TileGrid {
        let s = shape
        guard tasks > 1 else { return TileGrid(rows: s.batches, columns: s.units) }
        let columnGranularity = IntegerGEMM.panelWidth * (s.units >= 512 ? 4 : 1)
        return TileGrid.cheapest(tasks: tasks, threads: threadCount, rows: s.batches, rowGranularity: 1,
                                 columns: s.units, columnGranularity: columnGranularity,
                                 bytesPerRowPart: gemm.panelCount * gemm.panelBytes,
                                 bytesPerColumnPart: s.batches * s.inputDepth)
    }

    /// Batches `rows`, units `columns`.
    func evalTile(rows: Range<Int>, columns: Range<Int>, step: Int, worker: Int, memory: TensorMemory) {
        multiply(batches: rows, units: columns, worker: worker, memory: memory)
    }

    /// Batches `rows`, units `columns` (whole GEMM panels).
    func multiply(batches rows: Range<Int>, units columns: Range<Int>, worker: Int, memory: TensorMemory) {
        let s = shape
        let source = memory.input(input, as: UInt8.self)
        let destination = memory.output(output, as: UInt8.self)
        let stage = DoubleRequantizedGEMMOutput(base: destination + rows.lowerBound * s.units, rowStride: s.units, columns: s.units,
                                                scales: UnsafePointer(scales.pointer), zeroPoint: zeroPoint,
                                                minimum: range.lowerBound, maximum: range.upperBound)
        gemm.multiply(source + rows.lowerBound * s.inputDepth, rows: rows.count, rowStride: s.inputDepth, columns: columns,
                      scratch: UnsafeMutableRawPointer(memory.scratch(as: UInt8.self, worker: worker)), into: stage)
    }
}

/// The output stage of LiteRT's reference FULLY_CONNECTED: each accumulator rescaled in Double
/// with its unit's scale, then the zero point and the clamp, stored as a byte.
struct DoubleRequantizedGEMMOutput: IntegerGEMMOutput {
    let base: UnsafeMutablePointer<UInt8>
    let rowStride: Int
    let columns: Int
    let scales: UnsafePointer<Double>
    let zeroPoint: Int32
    let minimum: Int32
    let maximum: Int32

    @inline(always)
    func store(_ values: SIMD16<Int32>, row: Int, column: Int) {
        let destination = base + row * rowStride + column
        for lane in 0 ..< min(16, columns - column) {
            // `acc_scaled += output_offset` wraps in the reference too (out-of-range doubles
            // become Int32.min first).
            let q = requantizeInDouble(values[lane], scale: scales[column + lane]) &+ zeroPoint
            destination[lane] = UInt8(truncatingIfNeeded: min(max(q, minimum), maximum))
        }
    }
}
