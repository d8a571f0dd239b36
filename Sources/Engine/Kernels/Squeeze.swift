/// SQUEEZE: removes the listed dimensions of size 1 (negative indices count from the end), or
/// every dimension of size 1 when the list is empty.
enum Squeeze {
    static let input = 0, output = 0

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        guard case .squeeze(let dims) = context.node.options else { throw context.invalid("missing SqueezeOptions") }
        try context.expect(inputs: 1 ... 1, outputs: 1)
        let shape = try context.input(Self.input).shape
        var remove = shape.map { dims.isEmpty && $0 == 1 }
        for dim in dims {
            let d = dim < 0 ? dim + shape.count : dim
            guard shape.indices.contains(d), shape[d] == 1 else {
                throw context.invalid("squeeze dimension \(dim) of input shape \(shape) is not a dimension of size 1")
            }
            remove[d] = true
        }
        let squeezed = shape.indices.filter { !remove[$0] }.map { shape[$0] }
        return try context.relabel(input: Self.input, output: Self.output, as: squeezed)
    }
}
