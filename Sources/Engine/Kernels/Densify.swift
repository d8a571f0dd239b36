/// DENSIFY: a sparse constant (input 0) to its dense form. The loader already densified every
/// sparse constant (`Graph/Sparsity.swift`), so the output becomes a constant holding a copy of
/// those bytes at prepare time (like DEQUANTIZE of a constant), and the operator that consumes
/// it — a convolution's filter, say — can pack it as any weight. Eval does nothing.
enum Densify {
    static let input = 0, output = 0

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        try context.expect(inputs: 1 ... 1, outputs: 1)
        let input = try context.input(Self.input), output = try context.output(Self.output)
        guard input.dataType == output.dataType, input.dataType.byteSize != nil else {
            throw context.unsupported("input type \(input.dataType) with output type \(output.dataType)")
        }
        guard let data = input.constantData else { throw context.unsupported("input '\(input.name)' must be a (sparse) constant tensor") }
        try context.setOutputShape(Self.output, input.shape)
        return try context.foldOutput(Self.output, into: PackedBuffer(data.elements(as: UInt8.self)))
    }
}
