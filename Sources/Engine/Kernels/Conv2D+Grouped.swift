extension Conv2D {
    /// Grouped CONV_2D (the filter's input depth `I/g` divides the input's `I`, `g` groups, each
    /// output channel `o` reading input channels `(o / (O/g))·I/g ..< +I/g`), as TFLite's reference
    /// kernels (the only ones that accept groups): float32 sums `input · filter` over filter row,
    /// column and channel in that order and adds the bias; int8 (`ConvPerChannel`) sums
    /// `(q − zpIn) · filter` in Int32, adds the bias, and requantizes per output channel
    /// (multipliers of `inputScale · filterScale_o / outputScale` in Double). Plain scalar loops.
    static func prepareGrouped(_ context: inout PrepareContext, geometry g: Geometry, groups: Int,
                               activation: FusedActivation) throws(ModelError) -> any Kernel {
        let input = try context.input(Self.input), filter = try context.input(Self.filter), output = try context.output(Self.output)
        guard g.outputChannels % groups == 0 else {
            throw context.invalid("\(g.outputChannels) output channels do not divide into \(groups) groups")
        }
        guard filter.isConstant else { throw context.unsupported("grouped convolution needs a constant filter ('\(filter.name)')") }
        let (i, o) = (context.node.inputs[Self.input], context.node.outputs[Self.output])
        switch input.dataType {
        case .float32:
            try context.expect(filter, is: .float32, role: "filter")
            try context.expect(output, is: .float32, role: "output")
            var bias: PackedBuffer<Float>?
            if let b = context.optionalInput(Self.bias) {
                try context.expect(b, is: .float32, role: "bias")
                bias = PackedBuffer(try context.constant(Self.bias).elements(as: Float.self))
            }
            let range = try context.floatActivationRange(activation)
            return GroupedConv2DFloat32(geometry: g, groups: groups, filter: PackedBuffer(try context.constant(Self.filter).elements(as: Float.self)),
                                        bias: bias, lower: range.lowerBound, upper: range.upperBound, input: i, output: o)
        case .int8:
            try context.expect(filter, is: .int8, role: "filter")
            try context.expect(output, is: .int8, role: "output")
            let inputQ = try context.affineQuantization(of: input, role: "input"), outputQ = try context.affineQuantization(of: output, role: "output")
            guard let filterQ = filter.quantization, filterQ.scales.count == 1 || filterQ.scales.count == g.outputChannels,
                  filterQ.zeroPoints.allSatisfy({ $0 == 0 }) else {
                throw context.invalid("filter '\(filter.name)' needs symmetric scales, one or one per output channel")
            }
            var bias = [Int32](repeating: 0, count: g.outputChannels)
            if let b = context.optionalInput(Self.bias) {
                try context.expect(b, is: .int32, role: "bias")
                bias = try context.constant(Self.bias).array(of: Int32.self)
            }
            let multipliers = QuantizedMultiplier.perChannel(inputScale: inputQ.scale, filterScales: filterQ.scales,
                                                             outputScale: outputQ.scale, channelCount: g.outputChannels)
            return GroupedConv2DInt8(geometry: g, groups: groups, filter: PackedBuffer(try context.constant(Self.filter).elements(as: Int8.self)),
                                     bias: PackedBuffer(bias), multipliers: multipliers, inputZeroPoint: inputQ.zeroPoint,
                                     outputZeroPoint: outputQ.zeroPoint, range: try context.integerActivationRange(activation, output: output, outputQ),
                                     input: i, output: o)
        case let type:
            throw context.unsupported("grouped convolution on \(type), expected float32 or int8")
        }
    }
}

struct GroupedConv2DFloat32: Kernel {
    let geometry: Conv2D.Geometry
    let groups: Int
    /// `[O, kH, kW, I/groups]`.
    let filter: PackedBuffer<Float>
    let bias: PackedBuffer<Float>?
    let lower: Float, upper: Float
    let input: Int, output: Int

    func eval(_ memory: TensorMemory) {
        let g = geometry, depth = g.inputChannels / groups, perGroup = g.outputChannels / groups
        let x = memory.input(input, as: Float.self), y = memory.output(output, as: Float.self), w = filter.pointer
        g.forEachOutputPixel { b, originY, originX, outputOffset in
            for oc in 0 ..< g.outputChannels {
                let first = (oc / perGroup) * depth
                var total: Float = 0
                g.forEachTapInside(batch: b, originY: originY, originX: originX) { pixelOffset, tap in
                    let pixel = x + pixelOffset + first, taps = w + (oc * g.filterHeight * g.filterWidth + tap) * depth
                    for ic in 0 ..< depth { total += pixel[ic] * taps[ic] }
                }
                let value = total + (bias?.pointer[oc] ?? 0)
                y[outputOffset + oc] = FloatGEMM.clamp(value, lower, upper)
            }
        }
    }
}

struct GroupedConv2DInt8: Kernel {
    let geometry: Conv2D.Geometry
    let groups: Int
    let filter: PackedBuffer<Int8>
    let bias: PackedBuffer<Int32>
    let multipliers: [QuantizedMultiplier]
    let inputZeroPoint: Int32, outputZeroPoint: Int32
    let range: ClosedRange<Int32>
    let input: Int, output: Int

    func eval(_ memory: TensorMemory) {
        let g = geometry, depth = g.inputChannels / groups, perGroup = g.outputChannels / groups
        let x = memory.input(input, as: Int8.self), y = memory.output(output, as: Int8.self), w = filter.pointer
        g.forEachOutputPixel { b, originY, originX, outputOffset in
            for oc in 0 ..< g.outputChannels {
                let first = (oc / perGroup) * depth
                var acc: Int32 = 0
                g.forEachTapInside(batch: b, originY: originY, originX: originX) { pixelOffset, tap in
                    let pixel = x + pixelOffset + first, taps = w + (oc * g.filterHeight * g.filterWidth + tap) * depth
                    for ic in 0 ..< depth { acc &+= (Int32(pixel[ic]) - inputZeroPoint) * Int32(taps[ic]) }
                }
                let value = multiplyByQuantizedMultiplier(acc &+ bias.pointer[oc], multipliers[oc]) &+ outputZeroPoint
                y[outputOffset + oc] = Int8(truncatingIfNeeded: min(max(value, range.lowerBound), range.upperBound))
            }
        }
    }
}
