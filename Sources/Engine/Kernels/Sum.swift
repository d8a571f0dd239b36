/// SUM: the sum of the input over the constant int32 axes in input 1 (negative axes count from
/// the end; repeats count once; `keep_dims` keeps reduced axes with size 1). float32 adds each
/// output's inputs in input order, as TFLite's reference `ReduceGeneric`; uint8/int8 are in
/// `Sum+Quantized.swift`.
enum Sum {
    static let input = Mean.input, axes = Mean.axes, output = Mean.output

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        var reduction = try Mean.reduction(&context)
        let input = try context.input(Self.input)
        switch input.dataType {
        case .float32:
            try context.expect(try context.output(Self.output), is: .float32, role: "output")
            // MEAN's kernel sums in the same order; dividing by one leaves every sum unchanged.
            reduction.count = 1
            return MeanFloat32(reduction, input: context.node.inputs[Self.input], output: context.node.outputs[Self.output])
        case .uint8, .int8:
            return try prepareQuantized(&context, reduction: reduction)
        default:
            throw context.unsupported("input type \(input.dataType)")
        }
    }
}
