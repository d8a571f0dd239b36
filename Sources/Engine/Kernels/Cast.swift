/// CAST: converts every element to the output's type, as C++'s `static_cast` does on x86-64 in
/// TFLite's kernel: float → integer truncates toward zero (values outside the integer range give
/// the x86 "integer indefinite" value, then keep the low bits for narrower types), integer →
/// float rounds to nearest, integer → integer keeps the low bits, anything → bool is `x != 0`.
/// Types: float32, float16, float64, bool, int8, uint8, int16, uint16, int32, uint32, int64.
enum Cast {
    static let input = 0, output = 0

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        try context.expect(inputs: 1 ... 1, outputs: 1)
        let input = try context.input(Self.input), output = try context.output(Self.output)
        guard let from = CastKernel.Element(input.dataType), let to = CastKernel.Element(output.dataType) else {
            throw context.unsupported("cast from \(input.dataType) to \(output.dataType)")
        }
        try context.setOutputShape(Self.output, input.shape)
        return CastKernel(input: context.node.inputs[Self.input], output: context.node.outputs[Self.output],
                          count: input.elementCount, from: from, to: to)
    }
}

/// Elementwise conversion through a value that holds any source element exactly: `Double` for
/// the float types, `Int64` for the integer types and bool.
struct CastKernel: Kernel {
    enum Element: Sendable {
        case float32, float16, float64, bool, int8, uint8, int16, uint16, int32, uint32, int64

        init?(_ type: DataType) {
            switch type {
            case .float32: self = .float32
            case .float16: self = .float16
            case .float64: self = .float64
            case .bool: self = .bool
            case .int8: self = .int8
            case .uint8: self = .uint8
            case .int16: self = .int16
            case .uint16: self = .uint16
            case .int32: self = .int32
            case .uint32: self = .uint32
            case .int64: self = .int64
            default: return nil
            }
        }
    }

    enum Value {
        case floating(Double)
        case integer(Int64)
    }

    let input: Int, output: Int
    let count: Int
    let from: Element, to: Element

    func eval(_ memory: TensorMemory) {
        let x = UnsafeRawPointer(memory.raw(input)), y = memory.raw(output)
        for i in 0 ..< count { store(load(x, i), y, i) }
    }

    @inline(__always)
    private func load(_ p: UnsafeRawPointer, _ i: Int) -> Value {
        switch from {
        case .float32: return .floating(Double(p.assumingMemoryBound(to: Float.self)[i]))
        case .float16: return .floating(Double(Float(p.assumingMemoryBound(to: Float16.self)[i])))
        case .float64: return .floating(p.assumingMemoryBound(to: Double.self)[i])
        case .bool: return .integer(p.assumingMemoryBound(to: UInt8.self)[i] != 0 ? 1 : 0)
        case .int8: return .integer(Int64(p.assumingMemoryBound(to: Int8.self)[i]))
        case .uint8: return .integer(Int64(p.assumingMemoryBound(to: UInt8.self)[i]))
        case .int16: return .integer(Int64(p.assumingMemoryBound(to: Int16.self)[i]))
        case .uint16: return .integer(Int64(p.assumingMemoryBound(to: UInt16.self)[i]))
        case .int32: return .integer(Int64(p.assumingMemoryBound(to: Int32.self)[i]))
        case .uint32: return .integer(Int64(p.assumingMemoryBound(to: UInt32.self)[i]))
        case .int64: return .integer(p.assumingMemoryBound(to: Int64.self)[i])
        }
    }

    @inline(__always)
    private func store(_ v: Value, _ p: UnsafeMutableRawPointer, _ i: Int) {
        switch to {
        case .float32:
            switch v {
            case .floating(let d): p.assumingMemoryBound(to: Float.self)[i] = Float(d)
            case .integer(let n): p.assumingMemoryBound(to: Float.self)[i] = Float(n)
            }
        case .float16:
            switch v {
            case .floating(let d): p.assumingMemoryBound(to: Float16.self)[i] = Float16(Float(d))
            case .integer(let n): p.assumingMemoryBound(to: Float16.self)[i] = Float16(Float(n))
            }
        case .float64:
            switch v {
            case .floating(let d): p.assumingMemoryBound(to: Double.self)[i] = d
            case .integer(let n): p.assumingMemoryBound(to: Double.self)[i] = Double(n)
            }
        case .bool:
            switch v {
            case .floating(let d): p.assumingMemoryBound(to: UInt8.self)[i] = d != 0 ? 1 : 0
            case .integer(let n): p.assumingMemoryBound(to: UInt8.self)[i] = n != 0 ? 1 : 0
            }
        case .int8: p.assumingMemoryBound(to: Int8.self)[i] = Int8(truncatingIfNeeded: narrow(v))
        case .uint8: p.assumingMemoryBound(to: UInt8.self)[i] = UInt8(truncatingIfNeeded: narrow(v))
        case .int16: p.assumingMemoryBound(to: Int16.self)[i] = Int16(truncatingIfNeeded: narrow(v))
        case .uint16: p.assumingMemoryBound(to: UInt16.self)[i] = UInt16(truncatingIfNeeded: narrow(v))
        case .int32: p.assumingMemoryBound(to: Int32.self)[i] = Int32(truncatingIfNeeded: narrow(v))
        case .uint32: p.assumingMemoryBound(to: UInt32.self)[i] = UInt32(truncatingIfNeeded: wide(v))
        case .int64: p.assumingMemoryBound(to: Int64.self)[i] = wide(v)
        }
    }

    /// For destinations of at most 32 bits: x86's 32-bit truncating conversion of floats.
    @inline(__always)
    private func narrow(_ v: Value) -> Int64 {
        switch v {
        case .floating(let d):
            // NaN fails both comparisons.
            guard d >= -2_147_483_648.0, d < 2_147_483_648.0 else { return Int64(Int32.min) }
            return Int64(d.rounded(.towardZero))
        case .integer(let n): return n
        }
    }

    /// For 64-bit (and uint32) destinations: x86's 64-bit truncating conversion, which gives
    /// `Int64.min` for NaN and out-of-range values.
    @inline(__always)
    private func wide(_ v: Value) -> Int64 {
        switch v {
        case .floating(let d):
            guard d.isFinite, d > -9.223372036854775808e18, d < 9.223372036854775808e18 else { return .min }
            return Int64(d.rounded(.towardZero))
        case .integer(let n): return n
        }
    }
}
