/// Constant bytes: weights, biases, anchors.
///
/// The memory belongs to the `Graph`'s mapped file, or — for constants computed at prepare time
/// (e.g. DEQUANTIZE of a constant, folded) — to the kernel that computed them; either way it lives
/// as long as the `Plan` that holds the graph and its kernels. Do not keep a descriptor beyond it.
public struct ConstantData: @unchecked Sendable {
    /// The raw constant bytes (little-endian elements, aligned to at least their element size).
    public let bytes: UnsafeRawBufferPointer

    /// The bytes as a typed buffer. The loader has checked that the byte count matches the tensor and
    /// that the address is a multiple of the element size (copying the constant when the file's is
    /// not); kernels only call this for the tensor's own element type.
    public func elements<T>(as type: T.Type) -> UnsafeBufferPointer<T> {
        precondition(bytes.count % MemoryLayout<T>.stride == 0)
        precondition(Int(bitPattern: bytes.baseAddress) % MemoryLayout<T>.alignment == 0, "constant read as a wider type than its own")
        return UnsafeBufferPointer(start: bytes.baseAddress?.assumingMemoryBound(to: T.self),
                                   count: bytes.count / MemoryLayout<T>.stride)
    }

    /// The elements copied into an array.
    public func array<T>(of type: T.Type) -> [T] { Array(elements(as: type)) }
}

/// Everything the engine knows about a tensor before any data flows.
public struct TensorDescriptor: Sendable {
    /// The tensor's index in the subgraph.
    public let index: Int
    /// The tensor's name in the file (may be long: converters join op names).
    public let name: String
    /// The element type.
    public let dataType: DataType
    /// Dimensions; during planning, operators may replace the shapes of the tensors they produce.
    public var shape: [Int]
    /// The shape with `-1` for dimensions unknown at conversion time, when the model records it.
    public let shapeSignature: [Int]?
    /// Affine quantization, for quantized tensors (and int8 weights of hybrid operators).
    public let quantization: QuantizationParameters?
    /// A variable tensor (state kept between invocations), as the file marks it.
    public let isVariable: Bool
    /// The tensor's contents when it is a constant.
    public let constantData: ConstantData?

    /// Whether the tensor has constant data in the file.
    public var isConstant: Bool { constantData != nil }
    /// The product of the dimensions (1 for a scalar).
    public var elementCount: Int { shape.reduce(1, *) }
    /// Bytes for `elementCount` elements; 0 for strings.
    public var byteCount: Int { elementCount * (dataType.byteSize ?? 0) }
}

/// The product of `dims` times `elementSize`, or nil if a dimension is negative or that product
/// exceeds `maxTensorBytes` with every dimension of 0 counted as 1. A tensor with no elements
/// holds no bytes, but kernels multiply runs of its dimensions (the elements before an axis,
/// those after it): bounding the product of the others keeps every such partial product far
/// from overflowing (a fuzzed model's CONCATENATION of `[0, 2^40, 2^40]` trapped there).
func checkedByteCount(_ dims: [Int], elementSize: Int) -> Int? {
    var total = elementSize, bound = elementSize
    for d in dims {
        guard d >= 0 else { return nil }
        let (product, overflow) = bound.multipliedReportingOverflow(by: max(d, 1))
        guard !overflow, product <= maxTensorBytes else { return nil }
        bound = product
        total *= d
    }
    return total
}

/// No tensor may be larger than this (4 GiB); larger shapes are rejected as absurd.
let maxTensorBytes = 1 << 32
