/// SPLIT_V: cuts input 0 along the constant axis in input 2 into parts of the sizes listed in the
/// constant input 1; one size may be -1 and takes what the others leave. Every fixed-size
/// element type; quantization unchanged.
enum SplitV {
    static let input = 0, sizeSplits = 1, axis = 2

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        guard case .split(let count) = context.node.options else { throw context.invalid("missing SplitVOptions") }
        try context.expect(inputs: 3 ... 3, outputs: context.node.outputs.count)
        let input = try context.input(Self.input)
        let axes = try context.integerConstant(Self.axis, role: "axis")
        guard axes.count == 1 else { throw context.invalid("axis holds \(axes.count) values, expected 1") }
        let axis = try context.normalizedAxis(axes[0], rank: input.shape.count, of: input)
        var sizes = try context.integerConstant(Self.sizeSplits, role: "size_splits")
        guard sizes.count == count, context.node.outputs.count == count, count >= 1 else {
            throw context.invalid("size_splits has \(sizes.count) entries, num_splits is \(count), with \(context.node.outputs.count) outputs; all must agree")
        }
        let extent = input.shape[axis]
        let inferred = sizes.indices.filter { sizes[$0] == -1 }
        guard inferred.count <= 1, sizes.allSatisfy({ $0 >= -1 }) else {
            throw context.invalid("size_splits \(sizes) may hold one -1 and otherwise non-negative sizes")
        }
        let known = sizes.filter { $0 >= 0 }.reduce(0, +)
        if let i = inferred.first {
            guard known <= extent else { throw context.invalid("size_splits \(sizes) exceed dimension \(axis) (\(extent)) of input shape \(input.shape)") }
            sizes[i] = extent - known
        }
        guard sizes.reduce(0, +) == extent else {
            throw context.invalid("size_splits \(sizes) do not add up to dimension \(axis) (\(extent)) of input shape \(input.shape)")
        }
        return try context.splitKernel(input: Self.input, axis: axis, sizes: sizes)
    }
}
