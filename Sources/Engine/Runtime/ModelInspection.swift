/// The few things tasks (classifier, detector, labeler) and `inspect` need to know about a model,
/// asked of the Engine instead of read from its internals: a tensor's values as floats, the bytes
/// where associated files are packed, and which output of the detection post-process op is which.

extension Session {
    /// The values of tensor `index` as floats: float32 as they are, uint8/int8 dequantized with the
    /// tensor's per-tensor scale and zero point (`(q − zeroPoint) · scale`), nil for other types.
    ///
    /// ```swift
    /// session.invoke()
    /// let scores = session.dequantizedValues(ofTensor: plan.graph.outputs[0]) ?? []
    /// ```
    ///
    /// Valid until the next `invoke`. A tensor index out of range gives nil.
    public func dequantizedValues(ofTensor index: Int) -> [Float]? {
        guard plan.tensors.indices.contains(index) else { return nil }
        let tensor = plan.tensors[index]
        return Dequantization.floats(bytes(ofTensor: index), dataType: tensor.dataType, quantization: tensor.quantization)
    }
}

extension Dequantization {
    /// `raw` (the bytes of a tensor of `dataType`) as floats: float32 copied, uint8/int8
    /// dequantized with the tensor's first scale and zero point (a task's score and box outputs
    /// are quantized per tensor); nil for other types.
    static func floats(_ raw: UnsafeRawBufferPointer, dataType: DataType, quantization: QuantizationParameters?) -> [Float]? {
        var values = [Float](repeating: 0, count: dataType == .float32 ? raw.count / 4 : raw.count)
        switch dataType {
        case .float32:
            // A byte copy: the bytes of a constant need not be 4-aligned.
            values.withUnsafeMutableBytes { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[0 ..< $0.count])) }
        case .uint8, .int8:
            guard let base = raw.baseAddress else { return values }
            let q = AffineQuantization(scale: quantization?.scale ?? 1, zeroPoint: Int32(clamping: quantization?.zeroPoint ?? 0))
            values.withUnsafeMutableBufferPointer { Dequantization(dataType, q).dequantize(base, count: raw.count, into: $0.baseAddress!) }
        default: return nil
        }
        return values
    }
}

extension Plan {
    /// The prepared descriptor (shape after shape inference) of the model's input number `position`.
    /// - Precondition: `position` is in `graph.inputs.indices`.
    public func inputTensor(_ position: Int) -> TensorDescriptor { tensors[graph.inputs[position]] }

    /// The prepared descriptor of the model's output number `position`.
    /// - Precondition: `position` is in `graph.outputs.indices`.
    public func outputTensor(_ position: Int) -> TensorDescriptor { tensors[graph.outputs[position]] }

    /// The shape of tensor `index` after preparation: shape inference fills in what the file
    /// leaves out (the post-process op's outputs, for one). Nil when the model has no tensor `index`.
    ///
    /// ```swift
    /// if let op = plan.detectionPostProcess, let boxes = op.boxes, let shape = plan.tensorShape(boxes) {
    ///     print("up to \(shape[1]) boxes")
    /// }
    /// ```
    public func tensorShape(_ index: Int) -> [Int]? {
        tensors.indices.contains(index) ? tensors[index].shape : nil
    }

    /// The model's `TFLite_Detection_PostProcess` operator, with shapes after preparation (the
    /// file usually declares its outputs without shapes); see `Graph.detectionPostProcess`.
    public var detectionPostProcess: DetectionPostProcessDescription? {
        graph.detectionPostProcess(tensors: tensors)
    }
}

extension Graph {
    /// The whole model file. TFLite's metadata tools append the associated files (label maps,
    /// vocabularies) after the flatbuffer as a zip archive, so this is where a reader finds them.
    /// Valid as long as the graph.
    public var associatedFilesBytes: UnsafeRawBufferPointer { file.bytes }

    /// The model's `TFLite_Detection_PostProcess` operator (the last one, if several), described by
    /// the roles of its tensors; nil when the model has none.
    ///
    /// ```swift
    /// if let op = graph.detectionPostProcess, let at = graph.outputs.firstIndex(of: op.boxes) {
    ///     print("output \(at) holds the boxes")
    /// }
    /// ```
    /// `scoreColumns` comes from the shapes the file declares; `Plan.detectionPostProcess` has the
    /// prepared ones.
    public var detectionPostProcess: DetectionPostProcessDescription? { detectionPostProcess(tensors: tensors) }

    /// The description with the class-score shape read from `tensors` (declared or prepared).
    public func detectionPostProcess(tensors: [TensorDescriptor]) -> DetectionPostProcessDescription? {
        guard let node = nodes.last(where: { $0.customName == DetectionPostProcessDescription.customName }) else { return nil }
        return DetectionPostProcessDescription(node, tensors: tensors)
    }
}

/// What the `TFLite_Detection_PostProcess` operator reads and writes: tensor indices by role.
///
/// Its outputs are, in op order: boxes `[1, M, 4]` (ymin, xmin, ymax, xmax, normalised), classes
/// `[1, M]`, scores `[1, M]` and the detection count `[1]`; a model's subgraph outputs may list
/// them in any order (TF2 Object Detection API exports: scores, boxes, count, classes).
public struct DetectionPostProcessDescription: Sendable, Equatable {
    /// The operator's custom name.
    public static let customName = "TFLite_Detection_PostProcess"

    /// The operator's position in the graph.
    public let nodeIndex: Int
    /// Output tensor indices; nil for an output slot the operator does not have.
    public let boxes: Int?, classes: Int?, scores: Int?, count: Int?
    /// The class-score input's last dimension (classes, with the background column when the
    /// model has one); nil when the input is absent or not of rank 3.
    public let scoreColumns: Int?
    /// The operator's `num_classes` option (classes without background); nil when absent.
    public let numClasses: Int?
    /// The operator's `max_detections` option; nil when absent.
    public let maxDetections: Int?
    /// The operator's `max_classes_per_detection` option; nil when absent.
    public let maxClassesPerDetection: Int?

    init(_ node: Node, tensors: [TensorDescriptor]) {
        func output(_ slot: Int) -> Int? { node.outputs.indices.contains(slot) && node.outputs[slot] >= 0 ? node.outputs[slot] : nil }
        nodeIndex = node.index
        boxes = output(0); classes = output(1); scores = output(2); count = output(3)
        if node.inputs.count > 1, tensors.indices.contains(node.inputs[1]), tensors[node.inputs[1]].shape.count == 3 {
            scoreColumns = tensors[node.inputs[1]].shape[2]
        } else {
            scoreColumns = nil
        }
        numClasses = node.customOptions.flatMap { Self.intOption("num_classes", in: $0.bytes) }
        maxDetections = node.customOptions.flatMap { Self.intOption("max_detections", in: $0.bytes) }
        maxClassesPerDetection = node.customOptions.flatMap { Self.intOption("max_classes_per_detection", in: $0.bytes) }
    }

    /// An integer entry of a FlexBuffer options map; nil when missing, not a number or unreadable.
    static func intOption(_ key: String, in bytes: UnsafeRawBufferPointer) -> Int? {
        guard let map = try? FlexBuffer.root(bytes).map() else { return nil }
        for i in 0 ..< map.count where (try? map.key(at: i)) == key {
            guard let value = try? map.values.element(at: i) else { return nil }
            if let v = try? value.int() { return Int(exactly: v) }
            return (try? value.double()).flatMap { Int(exactly: $0) }
        }
        return nil
    }
}
