/// A permutation of a tensor's dimensions, planned once at prepare time: TRANSPOSE, and the
/// 6-D views of DEPTH_TO_SPACE and SPACE_TO_DEPTH.
///
/// Output dimension `d` is input dimension `permutation[d]`. Size-1 dimensions are dropped and
/// output dimensions that stay neighbours in the input are merged, so that
/// `[1, 2, 3, 4]` with `[0, 3, 1, 2]` becomes a copy of `[6, 4]` transposed to `[4, 6]`.
///
/// ```swift
/// let t = Transposition(inputShape: [2, 3], permutation: [1, 0], elementSize: 4)
/// // t.extents == [3, 2], t.inputStrides == [1, 3]
/// ```
struct Transposition: Sendable, Equatable {
    /// Most dimensions after merging (TFLite's TRANSPOSE accepts rank 6).
    static let maxRank = 6

    /// Output extents and the input element stride of each, outermost first; never empty.
    let extents: [Int], inputStrides: [Int]
    let elementSize: Int
    let count: Int

    init(inputShape: [Int], permutation: [Int], elementSize: Int) {
        var inputStride = [Int](repeating: 1, count: inputShape.count)
        for d in inputShape.indices.dropLast().reversed() { inputStride[d] = inputStride[d + 1] * inputShape[d + 1] }
        var extents = [Int](), strides = [Int](), previous = -2
        for p in permutation where inputShape[p] != 1 {
            // Output neighbours that are input neighbours in the same order form one run.
            if p == previous + 1, let last = extents.last, strides.last == inputStride[p] * inputShape[p] {
                extents[extents.count - 1] = last * inputShape[p]
                strides[strides.count - 1] = inputStride[p]
            } else {
                extents.append(inputShape[p])
                strides.append(inputStride[p])
            }
            previous = p
        }
        if extents.isEmpty { extents = [1]; strides = [1] }
        self.extents = extents
        self.inputStrides = strides
        self.elementSize = elementSize
        count = inputShape.reduce(1, *)
    }

    /// Copies `input` to `output` in output order.
    func apply(_ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer) {
        if count == 0 { return }
        switch elementSize {
        case 1: run(input.assumingMemoryBound(to: UInt8.self), output.assumingMemoryBound(to: UInt8.self))
        case 2: run(input.assumingMemoryBound(to: UInt16.self), output.assumingMemoryBound(to: UInt16.self))
        case 4: run(input.assumingMemoryBound(to: UInt32.self), output.assumingMemoryBound(to: UInt32.self))
        default: run(input.assumingMemoryBound(to: UInt64.self), output.assumingMemoryBound(to: UInt64.self))
        }
    }

    private func run<T>(_ input: UnsafePointer<T>, _ output: UnsafeMutablePointer<T>) {
        let pad = Self.maxRank - extents.count
        func e(_ i: Int) -> Int { i < pad ? 1 : extents[i - pad] }
        func s(_ i: Int) -> Int { i < pad ? 0 : inputStrides[i - pad] }
        let (e0, e1, e2, e3, e4, n) = (e(0), e(1), e(2), e(3), e(4), e(5))
        let (s0, s1, s2, s3, s4, stride) = (s(0), s(1), s(2), s(3), s(4), s(5))
        var out = output
        for i0 in 0 ..< e0 {
            for i1 in 0 ..< e1 {
                for i2 in 0 ..< e2 {
                    for i3 in 0 ..< e3 {
                        for i4 in 0 ..< e4 {
                            let row = input + (i0 * s0 + i1 * s1 + i2 * s2 + i3 * s3 + i4 * s4)
                            if stride == 1 {
                                out.update(from: row, count: n)
                            } else {
                                for i in 0 ..< n { out[i] = row[i * stride] }
                            }
                            out += n
                        }
                    }
                }
            }
        }
    }
}

/// Copies the input through a prepared `Transposition`.
struct TranspositionKernel: Kernel {
    let plan: Transposition
    let input: Int, output: Int

    func eval(_ memory: TensorMemory) {
        plan.apply(memory.raw(input), memory.raw(output))
    }
}

extension PrepareContext {
    /// Checks that input 0 and output 0 hold the same element type with a fixed size and, for
    /// quantized 8-bit tensors, the same scale and zero point (the data is moved, never
    /// rescaled). Returns the element size in bytes.
    func expectMovedUnchanged(input inputSlot: Int = 0, output outputSlot: Int = 0) throws(ModelError) -> Int {
        let input = try input(inputSlot), output = try output(outputSlot)
        guard input.dataType == output.dataType, let size = input.dataType.byteSize else {
            throw unsupported("input type \(input.dataType) with output type \(output.dataType)")
        }
        if [.uint8, .int8, .int16].contains(input.dataType), let q = input.quantization, let p = output.quantization,
           q.scale != p.scale || q.zeroPoint != p.zeroPoint {
            throw unsupported("output '\(output.name)' (scale \(p.scale), zero point \(p.zeroPoint)) must be quantized like the input (scale \(q.scale), zero point \(q.zeroPoint))")
        }
        return size
    }

    /// The integer elements of constant input `slot` (int32 or int64).
    func integerConstant(_ slot: Int, role: String) throws(ModelError) -> [Int] {
        let t = try input(slot)
        let data = try constant(slot)
        switch t.dataType {
        case .int32: return data.elements(as: Int32.self).map(Int.init)
        case .int64:
            let values = data.elements(as: Int64.self)
            guard values.allSatisfy({ Int64(Int32.min) ... Int64(Int32.max) ~= $0 }) else {
                throw invalid("\(role) '\(t.name)' holds values outside the int32 range")
            }
            return values.map { Int($0) }
        default: throw unsupported("\(role) '\(t.name)' has type \(t.dataType), expected int32 or int64")
        }
    }
}
