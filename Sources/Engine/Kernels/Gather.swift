/// GATHER: slices of `params` (input 0) along `axis`, picked by the int32/int64 `indices`
/// (input 1); with `batch_dims = b` the first `b` dimensions of both are batch dimensions.
/// Output shape `params[..<axis] + indices[b...] + params[(axis + 1)...]`, as TFLite's reference
/// kernel. Every fixed-size element type; quantization unchanged.
///
/// Constant indices are checked at prepare. TFLite fails the run on an out-of-range runtime
/// index; a kernel here cannot fail at run time, so such an index gives a slice of zeros.
enum Gather {
    static let params = 0, indices = 1, output = 0

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        guard case .gather(let declaredAxis, let declaredBatchDims) = context.node.options else {
            throw context.invalid("missing GatherOptions")
        }
        try context.expect(inputs: 2 ... 2, outputs: 1)
        let params = try context.input(Self.params), indices = try context.input(Self.indices)
        let size = try context.expectMovedUnchanged(input: Self.params, output: Self.output)
        try context.expect(indices, is: .int32, .int64, role: "indices")
        let axis = try context.normalizedAxis(declaredAxis, rank: params.shape.count, of: params)
        let batchDims = declaredBatchDims < 0 ? declaredBatchDims + indices.shape.count : declaredBatchDims
        guard batchDims >= 0, batchDims <= axis, batchDims <= indices.shape.count,
              Array(params.shape[..<batchDims]) == Array(indices.shape[..<batchDims]) else {
            throw context.invalid("batch_dims \(declaredBatchDims) must be ≤ axis \(axis) and name leading dimensions shared by params \(params.shape) and indices \(indices.shape)")
        }
        let shape = Array(params.shape[..<axis]) + Array(indices.shape[batchDims...]) + Array(params.shape[(axis + 1)...])
        try context.setOutputShape(Self.output, shape)
        let axisSize = params.shape[axis]
        if let data = indices.constantData {
            let values: [Int] = indices.dataType == .int32 ? data.elements(as: Int32.self).map(Int.init) : data.elements(as: Int64.self).map { Int($0) }
            if let bad = values.first(where: { $0 < 0 || $0 >= axisSize }) {
                throw context.invalid("index \(bad) is out of range for dimension \(axis) (\(axisSize)) of params '\(params.name)' shape \(params.shape)")
            }
        }
        let kernel = GatherKernel(params: context.node.inputs[Self.params], indices: context.node.inputs[Self.indices],
                                  output: context.node.outputs[Self.output], indicesAreInt64: indices.dataType == .int64,
                                  batches: params.shape[..<batchDims].reduce(1, *),
                                  outer: params.shape[batchDims ..< axis].reduce(1, *), axisSize: axisSize,
                                  coordinates: indices.shape[batchDims...].reduce(1, *),
                                  sliceBytes: params.shape[(axis + 1)...].reduce(1, *) * size)
        return kernel
    }
}

struct GatherKernel: Kernel {
    let params: Int, indices: Int, output: Int
    let indicesAreInt64: Bool
    let batches: Int, outer: Int, axisSize: Int, coordinates: Int
    let sliceBytes: Int

    func eval(_ memory: TensorMemory) {
        let source = UnsafeRawPointer(memory.raw(params))
        var destination = memory.raw(output)
        let index32 = memory.input(indices, as: Int32.self), index64 = memory.input(indices, as: Int64.self)
        for b in 0 ..< batches {
            for o in 0 ..< outer {
                let base = source + (b * outer + o) * axisSize * sliceBytes
                for i in 0 ..< coordinates {
                    let index = indicesAreInt64 ? Int(truncatingIfNeeded: index64[b * coordinates + i]) : Int(index32[b * coordinates + i])
                    if index >= 0 && index < axisSize {
                        destination.copyMemory(from: base + index * sliceBytes, byteCount: sliceBytes)
                    } else {
                        destination.initializeMemory(as: UInt8.self, repeating: 0, count: sliceBytes)
                    }
                    destination += sliceBytes
                }
            }
        }
    }
}
