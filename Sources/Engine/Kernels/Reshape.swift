/// RESHAPE: the same elements under a new shape, taken from the constant int32 `shape` input when
/// there is one (a vector), else from the options' `new_shape`. One dimension may be -1 (inferred).
enum Reshape {
    static let input = 0, shape = 1, output = 0

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        guard case .reshape(let newShape) = context.node.options else { throw context.invalid("missing ReshapeOptions") }
        try context.expect(inputs: 1 ... 2, outputs: 1)
        let requested: [Int]
        if let shape = context.optionalInput(Self.shape), shape.dataType == .int32, shape.shape.count == 1 {
            if let data = shape.constantData {
                requested = data.elements(as: Int32.self).map(Int.init)
            } else if let newShape {
                // A shape computed at run time; the converter records the same shape in the options.
                requested = newShape
            } else {
                throw context.unsupported("shape input '\(shape.name)' is computed at run time and the options record no new_shape")
            }
        } else {
            // Old converters wrote [0] for a scalar.
            requested = newShape == [0] ? [] : newShape ?? []
        }
        let count = try context.input(Self.input).elementCount
        return try context.relabel(input: Self.input, output: Self.output, as: try inferShape(requested, elementCount: count, context))
    }

    /// `requested` with its -1 (if any) replaced so that the shape holds `elementCount` elements.
    static func inferShape(_ requested: [Int], elementCount: Int, _ context: PrepareContext) throws(ModelError) -> [Int] {
        let inferred = requested.indices.filter { requested[$0] == -1 }
        guard inferred.count <= 1, requested.allSatisfy({ $0 >= -1 }) else {
            throw context.invalid("new shape \(requested) may contain one -1 and otherwise only sizes ≥ 0")
        }
        guard let axis = inferred.first else { return requested }
        var shape = requested
        shape[axis] = 1
        guard let known = checkedByteCount(shape, elementSize: 1), known > 0, elementCount % known == 0 else {
            throw context.invalid("new shape \(requested) cannot hold \(elementCount) elements")
        }
        shape[axis] = elementCount / known
        return shape
    }
}
