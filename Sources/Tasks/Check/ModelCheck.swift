import Engine
import Foundation

/// The task a model is checked against.
public enum CheckTask: String, Sendable, CaseIterable {
    case classify, detect, label, faces
}

/// Does a model fit a task, and if not, why: findings in words a user acts on.
///
/// Each finding is `.ok` (a fact that fits), `.note` (fits, but worth knowing: float16 weights,
/// logits), `.warning` (runs, but results may surprise: a detection cap that binds) or
/// `.problem` (does not fit; `fits` is false). The verdict on the task itself comes from creating
/// the real task (`ImageClassifier`, `ObjectDetector`, `ImageLabeler`), so `check` and the tasks
/// never disagree; the findings around it explain the model's parts.
///
/// ```swift
/// let report = ModelCheck.run(modelPath: "ssd.tflite", task: .detect)
/// for f in report.findings { print(f.level, f.topic, f.message) }
/// ```
public struct ModelCheck: Sendable, Encodable {
    public struct Finding: Sendable, Encodable, Equatable {
        public enum Level: String, Sendable, Encodable { case ok, note, warning, problem }
        public let level: Level
        /// What the finding is about: "model", "input", "outputs", "operators", "weights",
        /// "labels", "normalization", "roles", "scores", "threshold", "cap", "task".
        public let topic: String
        public let message: String
    }

    public let model: String
    public let task: String
    public var findings: [Finding] = []
    /// No finding is a problem.
    public var fits: Bool { !findings.contains { $0.level == .problem } }

    /// What `run` reads besides the model: the `maxResults` a detector would use (-1 for all).
    public struct Options: Sendable {
        public var maxResults = -1
        public var limits = Limits.default
        public init() {}
    }

    mutating func add(_ level: Finding.Level, _ topic: String, _ message: String) {
        findings.append(Finding(level: level, topic: topic, message: message))
    }

    enum CodingKeys: String, CodingKey { case model, task, findings, fits }
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(model, forKey: .model)
        try c.encode(task, forKey: .task)
        try c.encode(findings, forKey: .findings)
        try c.encode(fits, forKey: .fits)
    }

    /// Checks the model at `modelPath` against `task`. Never throws: an unreadable model is a problem finding.
    public static func run(modelPath: String, task: CheckTask, options: Options = Options()) -> ModelCheck {
        var report = ModelCheck(model: modelPath, task: task.rawValue)
        let graph: Graph
        do {
            graph = try Graph(contentsOf: modelPath)
        } catch {
            report.add(.problem, "model", "not a model SwiftLite can read: \(error)")
            return report
        }
        report.survey(graph)
        let metadata: ModelMetadata?
        do {
            metadata = try ModelMetadata(graph: graph)
            report.add(.ok, "metadata", metadata == nil ? "no TFLite Metadata" : "TFLite Metadata\(metadata?.name.map { " '\($0)'" } ?? "") with \(metadata?.inputs.count ?? 0) input and \(metadata?.outputs.count ?? 0) output descriptions")
        } catch {
            report.add(.problem, "metadata", "\(error); rewrite it with 'swiftlite metadata write'")
            metadata = nil
        }
        let plan: Plan
        do {
            plan = try Plan(graph: graph, limits: options.limits)
        } catch {
            report.add(.problem, "model", "SwiftLite cannot prepare the model: \(error)")
            return report
        }
        // A YOLO export's float input takes x / 255 (Ultralytics' predictor), which is SwiftLite's
        // guess without metadata.
        let yolo = task == .detect && YOLODecoder.recognizes(plan)
        report.input(plan, metadata: metadata, yolo: yolo)
        switch task {
        case .classify, .label: report.classifier(plan, metadata: metadata, task: task, path: modelPath, options: options)
        case .detect: report.detector(plan, metadata: metadata, path: modelPath, options: options)
        case .faces: report.faces(plan, path: modelPath, options: options)
        }
        return report
    }

    /// Operators and tensor types SwiftLite cannot run; sparse, float16 and hybrid weights.
    mutating func survey(_ graph: Graph) {
        let survey: ModelSurvey
        do {
            survey = try ModelSurvey(bytes: graph.associatedFilesBytes)
        } catch {
            add(.problem, "model", "cannot survey the operators: \(error)")
            return
        }
        let missing = survey.unimplementedOperators
        if missing.isEmpty {
            add(.ok, "operators", "all \(survey.operators.count) operators are implemented (\(Set(survey.operators.map(\.name)).sorted().joined(separator: ", ")))")
        } else {
            let names = Dictionary(grouping: missing, by: \.name).map { "\($0.key) ×\($0.value.count)" }.sorted()
            add(.problem, "operators", "SwiftLite does not implement \(names.joined(separator: ", ")) (operators \(missing.prefix(5).map { String($0.index) }.joined(separator: ", "))\(missing.count > 5 ? ", ..." : "")); such a model cannot run here")
        }
        let badTypes = survey.unsupportedTensors
        if !badTypes.isEmpty {
            let kinds = Set(badTypes.map(\.typeName)).sorted().joined(separator: ", ")
            add(.problem, "tensors", "\(badTypes.count) tensors of types SwiftLite does not support (\(kinds)), e.g. '\(badTypes[0].name)'")
        }
        if !survey.sparseTensors.isEmpty {
            add(.note, "weights", "\(survey.sparseTensors.count) sparse weight tensors (densified when the model is prepared)")
        }
        let constants = graph.tensors.filter(\.isConstant)
        let half = constants.filter { $0.dataType == .float16 }
        if !half.isEmpty { add(.note, "weights", "\(half.count) float16-stored weight tensors (dequantized to float32 when prepared)") }
        let inputIsFloat = graph.inputs.first.map { graph.tensors[$0].dataType == .float32 } ?? false
        let int8Weights = constants.filter { $0.dataType == .int8 && $0.shape.count >= 2 }
        if inputIsFloat, !int8Weights.isEmpty, graph.nodes.allSatisfy({ $0.op != .quantize }) {
            add(.note, "weights", "hybrid model: \(int8Weights.count) int8 weight tensors with float activations (dynamic-range quantization)")
        }
    }

    /// The image input and its normalization.
    mutating func input(_ plan: Plan, metadata: ModelMetadata?, yolo: Bool = false) {
        let graph = plan.graph
        guard graph.inputs.count == 1 else {
            add(.problem, "input", "the model has \(graph.inputs.count) inputs; image tasks feed exactly one image")
            return
        }
        let t = plan.inputTensor(0)
        let channelsFirst = t.shape.count == 4 && t.shape[1] == 3 && t.shape[3] != 3 && t.shape[3] != 1
        guard t.shape.count == 4, t.shape[3] == 3 || t.shape[3] == 1 || channelsFirst else {
            add(.problem, "input", "input '\(t.name)' has shape \(t.shape); an image input is [1, height, width, 3] or [1, 3, height, width]")
            return
        }
        add(.ok, "input", "image input '\(t.name)' \(t.shape) \(t.dataType)" + (channelsFirst ? " (channels first: fed as R, G, B planes)" : ""))
        let normalization = metadata?.inputs.first?.normalization
        switch t.dataType {
        case .float32:
            if let n = normalization {
                add(.ok, "normalization", "float input normalized as (x − \(n.mean)) / \(n.std) (from the metadata)")
            } else if yolo {
                add(.ok, "normalization", "float input without NormalizationOptions metadata: a YOLO export takes x / 255, as Ultralytics' predictor feeds it (MediaPipe and ML Kit would refuse the model)")
            } else {
                add(.problem, "normalization", "float input without NormalizationOptions metadata: MediaPipe and ML Kit refuse the model, SwiftLite guesses (x − 0) / 255; "
                    + "write the model's own normalization with 'swiftlite metadata write MODEL --out OUT --normalization MEAN,STD' (127.5,127.5 for inputs in [-1, 1], 0,255 for [0, 1])")
            }
        case .uint8, .int8:
            add(.ok, "normalization", "\(t.dataType) input: pixels go in as they are (the input quantization does the scaling)")
        default:
            add(.problem, "input", "input '\(t.name)' is \(t.dataType); image tasks take float32, uint8 or int8")
        }
    }

    /// The operator that produces `tensor`, skipping reshapes and (de)quantizations.
    static func producer(of tensor: Int, in graph: Graph) -> Node? {
        var current = tensor
        for _ in 0 ..< graph.nodes.count {
            guard let node = graph.nodes.last(where: { $0.outputs.contains(current) }) else { return nil }
            guard [.reshape, .squeeze, .quantize, .dequantize].contains(node.op), let first = node.inputs.first, first >= 0 else { return node }
            current = first
        }
        return nil
    }

    mutating func classifier(_ plan: Plan, metadata: ModelMetadata?, task: CheckTask, path: String, options: Options) {
        let graph = plan.graph
        let name = task == .label ? "image labeler" : "image classifier"
        if graph.detectionPostProcess != nil {
            add(.problem, "outputs", "the model ends in TFLite_Detection_PostProcess: it is an object detector (\(graph.outputs.count) outputs: boxes, classes, scores, count), not an \(name) with [1, classes] score outputs; use --task detect")
            return
        }
        for i in graph.outputs.indices {
            let t = plan.outputTensor(i)
            let classes = t.shape.last ?? 0
            guard t.elementCount == classes, classes > 0 else {
                add(.problem, "outputs", "output \(i) '\(t.name)' has shape \(t.shape); an \(name) reads [1, classes] scores")
                continue
            }
            switch Self.producer(of: graph.outputs[i], in: graph)?.op {
            case .softmax?:
                add(.ok, "scores", "output \(i) '\(t.name)' [1, \(classes)] \(t.dataType): softmax probabilities (scoreActivation none)")
            case .logistic?:
                add(.ok, "scores", "output \(i) '\(t.name)' [1, \(classes)] \(t.dataType): sigmoid probabilities (scoreActivation none)")
            default:
                add(.note, "scores", "output \(i) '\(t.name)' [1, \(classes)] \(t.dataType) is not produced by SOFTMAX or LOGISTIC: it holds logits, "
                    + "so scores are unbounded and a score threshold in [0, 1] means little; apply scoreActivation softmax (one label per image) or sigmoid (several), "
                    + "which this build does not do for you")
            }
        }
        if let t = metadata?.outputs.compactMap(\.scoreThreshold).first {
            add(.ok, "threshold", "the metadata recommends score threshold \(t)")
        }
        do {
            let labels: [LabelChoice]
            if task == .label {
                labels = [try ImageLabeler(options: ImageLabelerOptions(localModel: LocalModel(path: path))).labelChoice]
            } else {
                let o = ImageClassifierOptions(modelPath: path)
                o.baseOptions.limits = options.limits
                labels = try ImageClassifier(options: o).labelChoices
            }
            for (i, choice) in labels.enumerated() {
                if choice.labels == nil {
                    add(.warning, "labels", "output \(i) has no labels (no label file in the metadata): categories show as #index; add them with 'swiftlite metadata write --labels FILE' or pass --labels")
                } else {
                    let classes = plan.outputTensor(min(i, graph.outputs.count - 1)).shape.last ?? 0
                    add(.ok, "labels", "output \(i): \(choice) for \(classes) classes")
                }
            }
            add(.ok, "task", "fits the \(name) (\(task.rawValue))")
        } catch {
            add(.problem, "task", "the \(name) refuses the model: \(error)")
        }
    }

    /// The layout a YOLO export's one output is read in, or why it cannot be.
    mutating func yolo(_ outputs: [TensorDescriptor]) {
        do {
            let d = try YOLODecoder(YOLOOptions(), outputs: outputs)
            let layout = d.layout == .v8 ? "YOLOv8 layout [1, 4 + classes, candidates]" : "YOLOv5 layout [1, candidates, 5 + classes] (with objectness)"
            add(.ok, "outputs", "one output \(outputs[0].shape): \(layout), decided by its shape (the longer axis holds the candidates): "
                + "\(d.classes) classes, \(d.candidates) candidates, boxes taken as fractions of the input (Ultralytics' TFLite export); "
                + "decoded with Ultralytics' class-aware NMS at IoU \(d.iouThreshold) (--iou, --agnostic)")
        } catch {
            add(.problem, "outputs", "\(error)")
        }
    }

    mutating func detector(_ plan: Plan, metadata: ModelMetadata?, path: String, options: Options) {
        let graph = plan.graph
        let outputs = graph.outputs.indices.map { plan.outputTensor($0) }
        let post = plan.detectionPostProcess
        if post == nil {
            if outputs.count == 1, outputs[0].elementCount == outputs[0].shape.last {
                add(.problem, "outputs", "one output \(outputs[0].shape): this is a classifier (class scores), not a detector; use --task classify")
            } else if outputs.count == 2 {
                add(.problem, "outputs", "two outputs \(outputs.map(\.shape)): raw box and score tensors of an SSD without TFLite_Detection_PostProcess (BlazeFace-style anchors): use --task faces for MediaPipe's face models; the object detector decodes others only with anchor options (ObjectDetectorOptions.rawOutputDecoding)")
            } else if YOLODecoder.recognizes(plan) {
                yolo(outputs)
            } else {
                add(.note, "outputs", "no TFLite_Detection_PostProcess operator; the four outputs must still be boxes, classes, scores and count")
            }
        } else if let post {
            add(.ok, "outputs", "ends in TFLite_Detection_PostProcess (operator \(post.nodeIndex)\(post.numClasses.map { ", num_classes \($0)" } ?? ""))")
        }
        let isYOLO = YOLODecoder.recognizes(plan)
        if !isYOLO {
            do {
                let roles = try DetectionOutputRoles(plan: plan, metadata: metadata)
                add(.ok, "roles", roles.description)
            } catch {
                add(.problem, "roles", "\(error)")
                return
            }
        }
        if let t = metadata?.outputs.compactMap(\.scoreThreshold).first {
            add(.ok, "threshold", "the metadata recommends score threshold \(t)")
        } else if isYOLO {
            add(.note, "threshold", "no recommended score threshold in the metadata: YOLO confidences must exceed Ultralytics' default \(YOLOOptions.defaultConfidence) unless --score-threshold says otherwise")
        } else if let t = metadata?.outputs.compactMap(\.scoreThreshold).first {
            add(.ok, "threshold", "the metadata recommends score threshold \(t)")
        } else {
            add(.note, "threshold", "no recommended score threshold in the metadata: every detection the post-process op keeps is returned; pass --score-threshold or write one with 'swiftlite metadata write --score-threshold X'")
        }
        if let cap = DetectionCap(plan: plan) {
            if let warning = cap.warning(maxResults: options.maxResults) {
                add(.warning, "cap", warning)
            } else {
                add(.ok, "cap", "the model returns at most \(cap.slots) detections (max_detections \(cap.maxDetections))")
            }
        }
        do {
            let o = ObjectDetectorOptions(modelPath: path)
            o.baseOptions.limits = options.limits
            let detector = try ObjectDetector(options: o)
            let choice = detector.labelChoice
            if choice.labels == nil {
                add(.warning, "labels", "no labels (no label file in the metadata): detections show as #index; add them with 'swiftlite metadata write --labels FILE' or pass --labels")
            } else {
                var text = "\(choice)"
                if choice.droppedBackground != nil { text += "; MediaPipe would use the file as is and name every class one off" }
                add(.ok, "labels", text)
            }
            add(.ok, "task", "fits the object detector (detect)")
        } catch {
            add(.problem, "task", "the object detector refuses the model: \(error)")
        }
    }
}

/// How many detections the model's `TFLite_Detection_PostProcess` can return:
/// `max_detections × max_classes_per_detection` slots (regular NMS returns `max_detections`).
public struct DetectionCap: Sendable, Equatable {
    public let maxDetections: Int
    /// The op's output rows: the most detections any image can have.
    public let slots: Int

    /// The cap of a prepared model's post-process op, nil without one or without `max_detections`.
    public init?(plan: Plan) {
        guard let op = plan.detectionPostProcess, let max = op.maxDetections, max > 0 else { return nil }
        maxDetections = max
        // The boxes output [1, slots, 4] is the op's real row count after preparation.
        if let boxes = op.boxes, let shape = plan.tensorShape(boxes), shape.count == 3, shape[1] > 0 {
            slots = shape[1]
        } else {
            slots = max * (op.maxClassesPerDetection ?? 1)
        }
    }

    /// The cap of the model at `path`; nil when it cannot be read or has no post-process op.
    public init?(modelPath: String) {
        guard let graph = try? Graph(contentsOf: modelPath), let plan = try? Plan(graph: graph) else { return nil }
        self.init(plan: plan)
    }

    /// Text when the cap is smaller than `maxResults` (a negative `maxResults` asks for all), else nil.
    public func warning(maxResults: Int) -> String? {
        guard maxResults > slots else { return nil }
        return "the model's TFLite_Detection_PostProcess returns at most \(slots) detections (max_detections \(maxDetections)), fewer than maxResults \(maxResults): images with more objects lose the lower-scoring ones"
    }

    /// Text when one image filled every slot: more objects may have been cut off.
    public func filledWarning(path: String) -> String {
        "\(path) filled all \(slots) detection slots of the model (max_detections \(maxDetections)): objects beyond them were dropped by the model itself; more need a model exported with a larger max_detections"
    }
}
