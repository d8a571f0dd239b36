/// An operator whose output was computed once at prepare time (e.g. DEQUANTIZE of a float16 or
/// int8 weight). The output tensor became a constant pointing into `values`, which this kernel
/// keeps alive for as long as the plan lives; eval has nothing left to do.
struct FoldedConstant<Element>: Kernel, DiscardableConstant {
    let values: PackedBuffer<Element>

    func eval(_ memory: TensorMemory) {}

    var discardableConstant: (any DiscardableConstant)? { self }

    func discard() { values.discard() }
}

/// A kernel that owns a folded constant, which the plan frees once every operator that reads it
/// has packed its own copy.
protocol DiscardableConstant {
    /// Frees the values; called at most once, while the plan is being built (one thread).
    func discard()
}

extension PrepareContext {
    /// Turns output `slot` into a constant tensor holding `values`, so that later operators that
    /// need constant inputs (a convolution's filter) can read it while they are prepared.
    /// `values` must hold exactly the output's bytes and must outlive the plan: keep it in the
    /// returned kernel (`FoldedConstant`).
    mutating func foldOutput<Element>(_ slot: Int, into values: PackedBuffer<Element>) throws(ModelError) -> FoldedConstant<Element> {
        let t = try output(slot)
        let bytes = UnsafeRawBufferPointer(start: values.pointer, count: values.count * MemoryLayout<Element>.stride)
        guard bytes.count == t.byteCount else {
            throw invalid("folded output '\(t.name)' has \(bytes.count) bytes, its shape \(t.shape) needs \(t.byteCount)")
        }
        tensors[t.index] = TensorDescriptor(index: t.index, name: t.name, dataType: t.dataType, shape: t.shape,
                                            shapeSignature: t.shapeSignature, quantization: t.quantization,
                                            isVariable: t.isVariable, constantData: ConstantData(bytes: bytes))
        return FoldedConstant(values: values)
    }
}
