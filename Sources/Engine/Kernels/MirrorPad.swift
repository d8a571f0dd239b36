/// MIRROR_PAD: pads each dimension with a mirror image of the input: REFLECT leaves out the edge
/// element (`[1, 2, 3]` padded by 2 before is `[3, 2, 1, 2, 3]`), SYMMETRIC repeats it
/// (`[2, 1, 1, 2, 3]`). `paddings` is a constant `[rank, 2]` int32/int64 tensor; each padding
/// must be at most `size − 1` (REFLECT) or `size` (SYMMETRIC), as TFLite requires.
/// Every fixed-size element type; quantization unchanged.
enum MirrorPad {
    static let input = 0, paddings = 1, output = 0

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        guard case .mirrorPad(let mode) = context.node.options else { throw context.invalid("missing MirrorPadOptions") }
        try context.expect(inputs: 2 ... 2, outputs: 1)
        let input = try context.input(Self.input)
        let size = try context.expectMovedUnchanged()
        let rank = input.shape.count
        let paddingsTensor = try context.input(Self.paddings)
        guard paddingsTensor.shape == [rank, 2] else {
            throw context.invalid("paddings have shape \(paddingsTensor.shape), expected [\(rank), 2] for input shape \(input.shape)")
        }
        let pairs = try context.integerConstant(Self.paddings, role: "paddings")
        let offset = mode == .reflect ? 1 : 0
        var shape = input.shape
        for d in 0 ..< rank {
            let limit = input.shape[d] - offset
            guard pairs[2 * d] >= 0, pairs[2 * d + 1] >= 0, pairs[2 * d] <= limit, pairs[2 * d + 1] <= limit else {
                throw context.invalid("paddings \(pairs[2 * d]), \(pairs[2 * d + 1]) of dimension \(d) must lie in 0...\(limit) for size \(input.shape[d]) in \(mode == .reflect ? "REFLECT" : "SYMMETRIC") mode")
            }
            shape[d] += pairs[2 * d] + pairs[2 * d + 1]
        }
        try context.setOutputShape(Self.output, shape)
        // The table below holds input element indices as Int32.
        guard input.shape.reduce(1, *) <= Int(Int32.max) else {
            throw context.unsupported("input shape \(input.shape) has more elements than a 32-bit index table reaches")
        }
        // Each output coordinate's input coordinate, per dimension: with the paddings checked
        // above (each at most size − offset) every coordinate is in 0 ..< size.
        let maps: [[Int]] = (0 ..< rank).map { d in
            let n = input.shape[d], before = pairs[2 * d]
            return (0 ..< shape[d]).map { o in
                let i = o - before
                if i < 0 { return -i - 1 + offset }
                if i >= n { return 2 * n - 1 - i - offset }
                return i
            }
        }
        var strides = [Int](repeating: 1, count: rank)
        for d in (0 ..< rank).dropLast().reversed() { strides[d] = strides[d + 1] * input.shape[d + 1] }
        // One source index per output element, in output order.
        var table = [Int32]()
        table.reserveCapacity(shape.reduce(1, *))
        func fill(_ d: Int, _ base: Int) {
            if d == rank { table.append(Int32(truncatingIfNeeded: base)); return }
            for i in maps[d] { fill(d + 1, base + i * strides[d]) }
        }
        if !shape.contains(0) { fill(0, 0) }
        return IndexedCopyKernel(table: PackedBuffer(table), elementSize: size,
                                 input: context.node.inputs[Self.input], output: context.node.outputs[Self.output])
    }
}

/// `output[i] = input[table[i]]`, for elements of 1, 2, 4 or 8 bytes.
struct IndexedCopyKernel: Kernel {
    let table: PackedBuffer<Int32>
    let elementSize: Int
    let input: Int, output: Int

    func eval(_ memory: TensorMemory) {
        switch elementSize {
        case 1: copy(UInt8.self, memory)
        case 2: copy(UInt16.self, memory)
        case 4: copy(UInt32.self, memory)
        default: copy(UInt64.self, memory)
        }
    }

    private func copy<T>(_: T.Type, _ memory: TensorMemory) {
        let x = memory.input(input, as: T.self), y = memory.output(output, as: T.self), t = table.pointer
        for i in 0 ..< table.count { y[i] = x[Int(t[i])] }
    }
}
