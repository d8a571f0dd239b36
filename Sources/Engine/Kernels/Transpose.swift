/// TRANSPOSE: `output` dimension `d` is input dimension `perm[d]`, for every element type with a
/// fixed size (float32, 8-bit quantized, int32, ...). `perm` is a constant int32/int64 vector
/// holding each of `0 ..< rank` once; rank at most 6, as TFLite.
enum Transpose {
    static let input = 0, permutation = 1, output = 0

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        try context.expect(inputs: 2 ... 2, outputs: 1)
        let input = try context.input(Self.input)
        let size = try context.expectMovedUnchanged()
        let perm = try context.integerConstant(Self.permutation, role: "perm")
        let rank = input.shape.count
        guard rank <= Transposition.maxRank else { throw context.unsupported("input rank \(rank), at most \(Transposition.maxRank)") }
        guard perm.count == rank, Set(perm) == Set(0 ..< rank) else {
            throw context.invalid("perm \(perm) is not a permutation of the \(rank) dimensions of input shape \(input.shape)")
        }
        try context.setOutputShape(Self.output, perm.map { input.shape[$0] })
        return TranspositionKernel(plan: Transposition(inputShape: input.shape, permutation: perm, elementSize: size),
                                   input: context.node.inputs[Self.input], output: context.node.outputs[Self.output])
    }
}
