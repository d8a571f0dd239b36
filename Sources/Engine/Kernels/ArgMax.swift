/// ARG_MAX: the index of the largest element along the constant axis in input 1 (one int32 or
/// int64 value, negative counts from the end), as int32 or int64 (`output_type`). The first
/// index wins a tie: like TFLite's reference kernel, a later element replaces the best only
/// when strictly greater (so a NaN never wins unless it comes first). 8-bit inputs compare
/// their raw values, which orders them like the real values they stand for.
enum ArgMax {
    static let input = 0, axis = 1, output = 0

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        try ArgMinMax.prepare(&context, selectsMinimum: false)
    }
}

/// What ARG_MAX and ARG_MIN share: validation and the kernel (only the comparison differs).
enum ArgMinMax {
    static func prepare(_ context: inout PrepareContext, selectsMinimum: Bool) throws(ModelError) -> any Kernel {
        guard case .argMinMax(let declaredType) = context.node.options else { throw context.invalid("missing ArgMaxOptions/ArgMinOptions") }
        try context.expect(inputs: 2 ... 2, outputs: 1)
        let input = try context.input(ArgMax.input), output = try context.output(ArgMax.output)
        guard let outputType = declaredType, outputType == .int32 || outputType == .int64 else {
            throw context.unsupported("output_type \(declaredType?.rawValue ?? "unknown"), expected int32 or int64")
        }
        guard output.dataType == outputType else {
            throw context.invalid("output '\(output.name)' has type \(output.dataType), output_type says \(outputType)")
        }
        let axes = try context.integerConstant(ArgMax.axis, role: "axis")
        guard axes.count == 1 else { throw context.invalid("axis holds \(axes.count) values, expected 1") }
        let axis = try context.normalizedAxis(axes[0], rank: input.shape.count, of: input)
        var shape = input.shape
        shape.remove(at: axis)
        try context.setOutputShape(ArgMax.output, shape)
        let geometry = (outer: input.shape[..<axis].reduce(1, *), extent: input.shape[axis],
                        inner: input.shape[(axis + 1)...].reduce(1, *))
        guard geometry.extent > 0 else { throw context.invalid("dimension \(axis) of input shape \(input.shape) is empty") }
        let (i, o) = (context.node.inputs[ArgMax.input], context.node.outputs[ArgMax.output])
        func make<T: Comparable & Sendable>(_: T.Type) -> any Kernel {
            if outputType == .int64 {
                return ArgMinMaxKernel<T, Int64>(input: i, output: o, outer: geometry.outer, extent: geometry.extent,
                                                 inner: geometry.inner, selectsMinimum: selectsMinimum)
            }
            return ArgMinMaxKernel<T, Int32>(input: i, output: o, outer: geometry.outer, extent: geometry.extent,
                                             inner: geometry.inner, selectsMinimum: selectsMinimum)
        }
        switch input.dataType {
        case .float32: return make(Float.self)
        case .uint8: return make(UInt8.self)
        case .int8: return make(Int8.self)
        case .int16: return make(Int16.self)
        case .int32: return make(Int32.self)
        case .int64: return make(Int64.self)
        default: throw context.unsupported("input type \(input.dataType)")
        }
    }
}

struct ArgMinMaxKernel<T: Comparable & Sendable, Index: FixedWidthInteger & Sendable>: Kernel {
    let input: Int, output: Int
    /// The input as `[outer, extent, inner]`, reduced over `extent`.
    let outer: Int, extent: Int, inner: Int
    let selectsMinimum: Bool

    func eval(_ memory: TensorMemory) {
        let x = memory.input(input, as: T.self), y = memory.output(output, as: Index.self)
        for o in 0 ..< outer {
            for i in 0 ..< inner {
                let base = x + o * extent * inner + i
                var best = base[0], bestIndex = 0
                for k in 1 ..< max(extent, 1) {
                    let value = base[k * inner]
                    if selectsMinimum ? value < best : value > best {
                        best = value
                        bestIndex = k
                    }
                }
                y[o * inner + i] = Index(bestIndex)
            }
        }
    }
}
