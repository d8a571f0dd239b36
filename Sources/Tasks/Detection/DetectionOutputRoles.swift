import Engine

/// Which of a detector's four outputs holds the boxes, the classes, the scores and the detection
/// count, and which rule decided it.
///
/// TFLite's `TFLite_Detection_PostProcess` writes boxes, classes, scores, count; TF1 exports list
/// the model's outputs in that order, TF2 Object Detection API exports in another (scores, boxes,
/// count, classes). The rules, tried in order:
///
/// 1. `.metadata`: the model metadata's output tensor names "location", "category", "score" and
///    "number of detections" (MediaPipe's `object_detector_graph.cc`, which falls back to the
///    order 0, 1, 2, 3 when a name is missing);
/// 2. `.tensorNames`: the output tensors' own names, each naming one role ("detection_boxes" or
///    "location", "detection_classes" or "category", "detection_scores", "num_detections" or
///    "count");
/// 3. `.postProcessOutputs`: which output slot of the post-process op each model output is (TF2
///    exports name them "StatefulPartitionedCall:<n>", which says nothing);
/// 4. `.shapeAndType`: boxes are the one `[1, N, 4]` output, the count the one single-element
///    output, and the two `[1, N]` outputs classes then scores in model order (MediaPipe's
///    default order).
///
/// ```swift
/// let roles = try DetectionOutputRoles(plan: plan, metadata: try ModelMetadata(graph: plan.graph))
/// print(roles.boxes, roles.rule)   // 1 tensorNames
/// ```
public struct DetectionOutputRoles: Sendable, Equatable, CustomStringConvertible {
    /// How the roles were decided.
    public enum Rule: String, Sendable, Equatable {
        case metadata = "model metadata tensor names"
        case tensorNames = "output tensor names"
        case postProcessOutputs = "TFLite_Detection_PostProcess output slots"
        case shapeAndType = "output shapes and types"
        /// Raw boxes and scores decoded with `ObjectDetectorOptions.rawOutputDecoding`: classes are
        /// the best column of the scores output, and there is no count output (`count` is -1).
        case anchorDecoding = "anchor decoding options"
        /// One YOLO output (`YOLOOptions`): boxes, class scores and confidences are all in it, and
        /// there is no count output (`count` is -1).
        case yoloLayout = "YOLO output layout"
    }

    /// Positions in the model's output list.
    public let boxes: Int, classes: Int, scores: Int, count: Int
    /// The rule that decided all four.
    public let rule: Rule

    /// The positions by role, in op order: boxes, classes, scores, count.
    public var positions: [Int] { [boxes, classes, scores, count] }

    /// "boxes=output 1, classes=output 3, scores=output 0, count=output 2 (by output tensor names)".
    public var description: String {
        switch rule {
        case .anchorDecoding:
            "boxes=output \(boxes), scores=output \(scores), classes from the best score column, no count output (by \(rule.rawValue))"
        case .yoloLayout:
            "boxes and class scores=output \(boxes), no count output (by \(rule.rawValue))"
        default:
            "boxes=output \(boxes), classes=output \(classes), scores=output \(scores), count=output \(count) (by \(rule.rawValue))"
        }
    }

    init(_ positions: [Int], rule: Rule) {
        boxes = positions[0]; classes = positions[1]; scores = positions[2]; count = positions[3]
        self.rule = rule
    }

    /// The roles of a raw-output SSD's two outputs (rule `.anchorDecoding`).
    init(rawBoxes boxes: Int, scores: Int) {
        self.init([boxes, scores, scores, -1], rule: .anchorDecoding)
    }

    /// The roles of a YOLO export's one output (rule `.yoloLayout`).
    init(yoloOutput output: Int) {
        self.init([output, output, output, -1], rule: .yoloLayout)
    }

    /// Decides the roles of a prepared model's outputs.
    /// - Throws: `TaskError.unsupportedModel` when the model does not have four outputs or no rule
    ///   decides them; the message lists every output's name, shape and type.
    public init(plan: Plan, metadata: ModelMetadata?) throws(TaskError) {
        try self.init(outputs: plan.graph.outputs.indices.map(plan.outputTensor), outputIndices: plan.graph.outputs,
                      postProcess: plan.detectionPostProcess, metadata: metadata)
    }

    /// Decides the roles of `graph`'s outputs, with `tensors` the descriptors to judge shapes by
    /// (`Plan.tensors` after preparation; a file often declares the op's outputs without shapes).
    /// - Throws: as `init(plan:metadata:)`.
    public init(graph: Graph, tensors: [TensorDescriptor], metadata: ModelMetadata?) throws(TaskError) {
        try self.init(outputs: graph.outputs.map { tensors[$0] }, outputIndices: graph.outputs,
                      postProcess: graph.detectionPostProcess(tensors: tensors), metadata: metadata)
    }

    /// The rules above, applied to the model's output descriptors in model order (`outputs[i]`
    /// describes tensor `outputIndices[i]`) and its post-process op, both read with one set of shapes
    /// (prepared or declared).
    init(outputs: [TensorDescriptor], outputIndices: [Int], postProcess: DetectionPostProcessDescription?,
         metadata: ModelMetadata?) throws(TaskError) {
        guard outputs.count == 4 else {
            throw .unsupportedModel("an object detector needs 4 outputs (boxes, classes, scores, count), the model has \(outputs.count): \(Self.list(outputs))")
        }
        if let names = metadata?.outputs.map(\.name), names.count == 4,
           let p = Self.unique(["location", "category", "score", "number of detections"].map { role in names.indices.filter { names[$0] == role } }) {
            self.init(p, rule: .metadata)
        } else if let p = Self.unique(Self.nameKeywords.map { words in
            outputs.indices.filter { i in words.contains { outputs[i].name.lowercased().contains($0) } }
        }) {
            self.init(p, rule: .tensorNames)
        } else if let op = postProcess,
                  let p = Self.unique([op.boxes, op.classes, op.scores, op.count].map { t in outputIndices.indices.filter { outputIndices[$0] == t } }) {
            self.init(p, rule: .postProcessOutputs)
        } else {
            let boxes = outputs.indices.filter { outputs[$0].shape.count == 3 && outputs[$0].shape.last == 4 }
            let count = outputs.indices.filter { outputs[$0].elementCount == 1 }
            let rows = outputs.indices.filter { outputs[$0].shape.count == 2 && outputs[$0].elementCount > 1 }
            guard boxes.count == 1, count.count == 1, rows.count == 2,
                  outputs[rows[0]].shape == outputs[rows[1]].shape, outputs[rows[0]].shape[1] == outputs[boxes[0]].shape[1] else {
                throw .unsupportedModel("cannot tell which output is boxes, classes, scores and count: no metadata names "
                    + "\"location\"/\"category\"/\"score\"/\"number of detections\", no output tensor name per role, "
                    + "no TFLite_Detection_PostProcess feeding the outputs, and shapes that do not single out boxes [1, N, 4], "
                    + "classes and scores [1, N] and count [1]; outputs: \(Self.list(outputs))")
            }
            self.init([boxes[0], rows[0], rows[1], count[0]], rule: .shapeAndType)
        }
        try check(outputs)
    }

    /// Substrings of an output tensor's name that give its role, by role (boxes, classes, scores, count).
    static let nameKeywords = [["box", "location"], ["class", "categor"], ["score"], ["num_detections", "num detections", "count"]]

    /// The positions when each candidate list has exactly one entry and all four differ.
    static func unique(_ candidates: [[Int]]) -> [Int]? {
        guard candidates.allSatisfy({ $0.count == 1 }) else { return nil }
        let positions = candidates.map { $0[0] }
        return Set(positions).count == 4 ? positions : nil
    }

    static func list(_ outputs: [TensorDescriptor]) -> String {
        outputs.enumerated().map { "\($0) '\($1.name)' \($1.shape) \($1.dataType)" }.joined(separator: ", ")
    }

    /// The decided outputs must have the shapes and types the detector reads.
    private func check(_ outputs: [TensorDescriptor]) throws(TaskError) {
        let b = outputs[boxes]
        guard b.shape.count == 3, b.shape.last == 4, b.dataType == .float32 else {
            throw .unsupportedModel("output \(boxes) '\(b.name)' (boxes, by \(rule.rawValue)) has shape \(b.shape) \(b.dataType), expected [1, N, 4] float32")
        }
        for (i, role) in [(classes, "classes"), (scores, "scores"), (count, "count")] {
            let t = outputs[i]
            guard [.float32, .uint8, .int8].contains(t.dataType) else {
                throw .unsupportedModel("output \(i) '\(t.name)' (\(role), by \(rule.rawValue)) has type \(t.dataType), expected float32 or 8-bit quantized")
            }
        }
    }
}
