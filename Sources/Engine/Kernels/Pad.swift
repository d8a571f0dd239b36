/// PAD and PADV2: surrounds the input with `paddings[d] = [before, after]` elements per dimension.
///
/// The pad value is PADV2's one-element `constant_values` input when present; otherwise 0, or for
/// quantized tensors (uint8, and int8/int16 with quantization parameters) the output's zero point,
/// which is how TFLite represents 0.
enum Pad {
    static let input = 0, paddings = 1, constantValues = 2, output = 0

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        try context.expect(inputs: 2 ... 3, outputs: 1)
        let input = try context.input(Self.input), output = try context.output(Self.output)
        guard input.dataType == output.dataType, let size = input.dataType.byteSize else {
            throw context.unsupported("input type \(input.dataType) with output type \(output.dataType)")
        }
        let rank = input.shape.count
        let paddingsTensor = try context.input(Self.paddings)
        guard paddingsTensor.shape == [rank, 2] else {
            throw context.invalid("paddings have shape \(paddingsTensor.shape), expected [\(rank), 2] for input shape \(input.shape)")
        }
        let data = try context.constant(Self.paddings)
        let pairs: [Int]
        switch paddingsTensor.dataType {
        case .int32: pairs = data.elements(as: Int32.self).map(Int.init)
        case .int64: pairs = data.elements(as: Int64.self).map(Int.init)
        default: throw context.unsupported("paddings type \(paddingsTensor.dataType), expected int32 or int64")
        }
        guard pairs.allSatisfy({ (0 ... Int(Int32.max)).contains($0) }) else {
            throw context.invalid("paddings \(pairs) must be non-negative int32 values")
        }
        let before = (0 ..< rank).map { pairs[2 * $0] }
        var shape = input.shape
        for d in 0 ..< rank { shape[d] += pairs[2 * d] + pairs[2 * d + 1] }
        try context.setOutputShape(Self.output, shape)

        let quantized = input.dataType == .uint8 || ([.int8, .int16].contains(input.dataType) && input.quantization != nil)
        var fill = Fill.bits(0)
        if let value = context.optionalInput(Self.constantValues) {
            guard value.dataType == input.dataType, value.elementCount == 1 else {
                throw context.invalid("constant_values '\(value.name)' is \(value.dataType) \(value.shape), expected one \(input.dataType) element")
            }
            if quantized, value.quantization?.scale != output.quantization?.scale || value.quantization?.zeroPoint != output.quantization?.zeroPoint {
                throw context.invalid("constant_values must be quantized like the output (scale \(output.quantization?.scale ?? 0), zero point \(output.quantization?.zeroPoint ?? 0))")
            }
            fill = .tensor(context.node.inputs[Self.constantValues])
        } else if quantized {
            let zeroPoint = output.quantization?.zeroPoint ?? 0
            let bits = input.dataType == .int16 ? 16 : 8, signed = input.dataType != .uint8
            let range = signed ? -(1 << (bits - 1)) ... (1 << (bits - 1)) - 1 : 0 ... (1 << bits) - 1
            guard range.contains(zeroPoint) else { throw context.invalid("output zero point \(zeroPoint) is outside \(input.dataType)") }
            fill = .bits(UInt64(truncatingIfNeeded: zeroPoint))
        }
        // A dimension without padding merges into the one outside it (its rows are contiguous in
        // the input and the output alike): an image padded across height and width is copied in
        // rows of width × channels elements, not one pixel at a time. One of extent 1 without
        // padding is left out: as the outermost (a batch of one) it would leave the threads one
        // block to share.
        var blocks = [(extent: Int, before: Int, after: Int)]()
        for d in 0 ..< rank {
            let (extent, after) = (input.shape[d], pairs[2 * d + 1])
            if extent == 1, before[d] == 0, after == 0 { continue }
            if let outer = blocks.last, before[d] == 0, after == 0 {
                blocks[blocks.count - 1] = (outer.extent * extent, outer.before * extent, outer.after * extent)
            } else {
                blocks.append((extent, before[d], after))
            }
        }
        var strides = [Int](repeating: size, count: blocks.count)
        for d in blocks.indices.dropLast().reversed() {
            let inner = blocks[d + 1]
            strides[d] = strides[d + 1] * (inner.before + inner.extent + inner.after)
        }
        // A float image padded with zeros across height and width only: a depthwise convolution
        // after it may read the image itself, with this padding as its own (`Plan.fuse`).
        var imagePadding: PadKernel.ImagePadding?
        if rank == 4, input.dataType == .float32, case .bits(0) = fill, pairs[0] == 0, pairs[1] == 0, pairs[6] == 0, pairs[7] == 0 {
            imagePadding = PadKernel.ImagePadding(top: pairs[2], bottom: pairs[3], left: pairs[4], right: pairs[5])
        }
        // A float tensor padded with zeros after its innermost dimension only: an ADD of it after
        // a convolution may read the input itself (`FloatEpilogue.paddedAdd`).
        var channelPadding: PadKernel.ChannelPadding?
        if rank > 0, input.dataType == .float32, case .bits(0) = fill, let channels = input.shape.last, channels > 0,
           pairs[2 * rank - 2] == 0, pairs[2 * rank - 1] > 0, pairs.dropLast(2).allSatisfy({ $0 == 0 }) {
            channelPadding = PadKernel.ChannelPadding(inputChannels: channels, outputChannels: channels + pairs[2 * rank - 1])
        }
        return PadKernel(input: context.node.inputs[Self.input], output: context.node.outputs[Self.output], elementSize: size,
                         inputShape: blocks.map(\.extent), before: blocks.map(\.before), after: blocks.map(\.after),
                         outputStrides: strides, inputBlockBytes: blocks.dropFirst().reduce(size) { $0 * $1.extent }, fill: fill,
                         imagePadding: imagePadding, channelPadding: channelPadding)
    }

    enum Fill: Sendable {
        /// The low `elementSize` bytes of this pattern (little-endian), e.g. a zero point.
        case bits(UInt64)
        /// The value held by this (one-element) tensor.
        case tensor(Int)
    }
}

/// Writes each output byte once: per dimension (after merging those without padding into the
/// one outside), the pad value before the input's block, the block (its rows copied whole at the
/// innermost dimension), then the pad value after it. Threads take ranges of the outermost
/// dimension's output blocks (an image's rows, for a batch of one padded across height and width).
struct PadKernel: PartitionedKernel {
    let input: Int, output: Int
    let elementSize: Int
    /// The merged dimensions' input extents, and the padding before and after each, in elements.
    let inputShape: [Int], before: [Int], after: [Int]
    /// The output's strides in bytes, per merged dimension.
    let outputStrides: [Int]
    /// Bytes of the input under one index of the outermost merged dimension.
    let inputBlockBytes: Int
    let fill: Pad.Fill
    /// Where this pads a float32 `[N, H, W, C]` image with +0 across height and width only:
    /// the rows above and below, the columns left and right.
    let imagePadding: ImagePadding?

    struct ImagePadding: Sendable, Equatable {
        var top, bottom, left, right: Int
    }

    /// Where this pads a float32 tensor with +0 after its innermost dimension only (a residual
    /// shortcut widened to the channels of the convolution it is added to): each group of
    /// `inputChannels` input values becomes `outputChannels` output values, the input's first.
    let channelPadding: ChannelPadding?

    struct ChannelPadding: Sendable, Equatable {
        var inputChannels, outputChannels: Int
    }

    func eval(_ memory: TensorMemory) {
        let out = memory.raw(output)
        let bits = pattern(memory)
        if inputShape.isEmpty {
            out.copyMemory(from: memory.raw(input), byteCount: elementSize)
            return
        }
        guard inputShape.count > 1 else {
            var source = UnsafeRawPointer(memory.raw(input))
            copy(dimension: 0, from: &source, to: out, pattern: bits)
            return
        }
        let blocks = before[0] + inputShape[0] + after[0]
        memory.parallelize(self, count: blocks, work: blocks * outputStrides[0] / elementSize * TensorMemory.elementWork)
    }

    /// Output blocks `units` of the outermost dimension (of two or more).
    func evalPart(_ units: Range<Int>, step: Int, worker: Int, memory: TensorMemory) {
        let out = memory.raw(output), input = UnsafeRawPointer(memory.raw(input))
        let pattern = self.pattern(memory)
        let stride = outputStrides[0]
        for block in units {
            let i = block - before[0]
            if i < 0 || i >= inputShape[0] {
                fill(out + block * stride, bytes: stride, pattern: pattern)
            } else {
                var source = input + i * inputBlockBytes
                copy(dimension: 1, from: &source, to: out + block * stride, pattern: pattern)
            }
        }
    }

    /// The pad value's bits (the low `elementSize` bytes).
    private func pattern(_ memory: TensorMemory) -> UInt64 {
        var bits: UInt64 = 0
        switch fill {
        case .bits(let b): bits = b
        case .tensor(let t):
            withUnsafeMutableBytes(of: &bits) { $0.copyMemory(from: UnsafeRawBufferPointer(start: memory.raw(t), count: elementSize)) }
        }
        return bits
    }

    /// The output block of `dimension` at `destination`: its padding and the input block (all of
    /// it, in order, from `source`).
    private func copy(dimension d: Int, from source: inout UnsafeRawPointer, to destination: UnsafeMutableRawPointer,
                      pattern: UInt64) {
        let stride = outputStrides[d]
        fill(destination, bytes: before[d] * stride, pattern: pattern)
        let start = destination + before[d] * stride
        if d == inputShape.count - 1 {
            let n = inputShape[d] * elementSize
            start.copyMemory(from: source, byteCount: n)
            source += n
        } else {
            for i in 0 ..< inputShape[d] { copy(dimension: d + 1, from: &source, to: start + i * stride, pattern: pattern) }
        }
        fill(start + inputShape[d] * stride, bytes: after[d] * stride, pattern: pattern)
    }

    /// `bytes` (a multiple of the element size) of the pad value from `destination`.
    private func fill(_ destination: UnsafeMutableRawPointer, bytes: Int, pattern: UInt64) {
        guard bytes > 0 else { return }
        let count = bytes / elementSize
        switch elementSize {
        case 1: destination.assumingMemoryBound(to: UInt8.self).update(repeating: UInt8(truncatingIfNeeded: pattern), count: count)
        case 2: destination.assumingMemoryBound(to: UInt16.self).update(repeating: UInt16(truncatingIfNeeded: pattern), count: count)
        case 4: destination.assumingMemoryBound(to: UInt32.self).update(repeating: UInt32(truncatingIfNeeded: pattern), count: count)
        default: destination.assumingMemoryBound(to: UInt64.self).update(repeating: pattern, count: count)
        }
    }
}
