/// SHAPE (`ShapeOperator`: `Shape` names tensor dimensions elsewhere): the input's dimensions as
/// an int32 or int64 vector (the output's type, which `ShapeOptions.out_type` names). Shapes are
/// fixed once the plan is prepared, so the output is folded into a constant at prepare time and
/// eval does nothing; dynamic-batch exports compute RESHAPE targets from it
/// (`SHAPE → STRIDED_SLICE → PACK → RESHAPE`).
enum ShapeOperator {
    static let input = 0, output = 0

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        try context.expect(inputs: 1 ... 1, outputs: 1)
        let input = try context.input(Self.input), output = try context.output(Self.output)
        try context.setOutputShape(Self.output, [input.shape.count])
        switch output.dataType {
        case .int32:
            guard input.shape.allSatisfy({ $0 <= Int(Int32.max) }) else { throw context.invalid("input shape \(input.shape) does not fit int32") }
            return try context.foldOutput(Self.output, into: PackedBuffer(input.shape.map { Int32($0) }))
        case .int64:
            return try context.foldOutput(Self.output, into: PackedBuffer(input.shape.map { Int64($0) }))
        case let type:
            throw context.unsupported("output type \(type), expected int32 or int64")
        }
    }
}
