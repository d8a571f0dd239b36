import Engine
import Foundation

/// The metadata to write for one model: which task shape it has and what each tensor gets.
struct MetadataPlan {
    enum Shape {
        /// One output of class scores.
        case classifier(classes: Int)
        /// The post-process op's four outputs; `roles[i]` is output i's role.
        case detector(roles: [DetectionRole], classes: Int?)
    }

    let name: String
    let shape: Shape
    let request: MetadataWriteRequest
    let outputCount: Int
    let isGrayscale: Bool
    var files: [(name: String, bytes: [UInt8])] = []

    init(graph: Graph, request: MetadataWriteRequest, existing: ModelMetadata?, limits: Limits) throws(MetadataWriteError) {
        self.request = request
        name = request.name ?? "model"
        outputCount = graph.outputs.count
        guard graph.inputs.count == 1 else {
            throw .refused("the model has \(graph.inputs.count) inputs; image task metadata describes one image input")
        }
        let input = graph.tensors[graph.inputs[0]]
        guard input.shape.count == 4, [1, 3].contains(input.shape[3]) else {
            throw .refused("input '\(input.name)' has shape \(input.shape), not an image [1, height, width, 1 or 3]")
        }
        isGrayscale = input.shape[3] == 1
        switch input.dataType {
        case .float32:
            guard let n = request.normalization else {
                throw .refused("input '\(input.name)' is float32: MediaPipe and ML Kit need its normalization; give --normalization MEAN,STD (127.5,127.5 maps pixels to [-1, 1]; 0,255 to [0, 1])")
            }
            let channels = input.shape[3]
            for (what, values) in [("mean", n.mean), ("std", n.std)] {
                guard values.count == 1 || values.count == channels else {
                    throw .refused("normalization \(what) has \(values.count) values; the input has \(channels) channel\(channels == 1 ? "" : "s") (give 1 or \(channels))")
                }
                guard values.allSatisfy(\.isFinite) else { throw .refused("normalization \(what) \(values) is not finite") }
            }
            guard n.std.allSatisfy({ $0 != 0 }) else { throw .refused("normalization std \(n.std) has a zero: (x − mean) / 0 is undefined") }
        case .uint8, .int8:
            // Normalization carried over from the model's own metadata is kept; one the user adds is refused.
            let own = existing?.inputs.first?.normalization
            if let n = request.normalization, own == nil || own?.mean != n.mean || own?.std != n.std {
                throw .refused("input '\(input.name)' is \(input.dataType): an integer input takes the pixels as they are (its quantization does the scaling); normalization \(n.mean),\(n.std) would be ignored or misapplied")
            }
        default:
            throw .refused("input '\(input.name)' is \(input.dataType); image tasks take float32, uint8 or int8 inputs")
        }
        if request.scoreThreshold.map({ !$0.isFinite }) == true {
            throw .refused("score threshold \(request.scoreThreshold!) is not a number")
        }

        let outputs = graph.outputs.map { graph.tensors[$0] }
        let post = graph.detectionPostProcess
        if post != nil || request.outputRoles != nil {
            let roles: [DetectionRole]
            if let given = request.outputRoles {
                guard given.count == outputs.count, Set(given).count == 4, outputs.count == 4 else {
                    throw .refused("--output-roles names \(given.count) outputs (\(given.map(\.rawValue).joined(separator: ","))); the model has \(outputs.count) and each of boxes, classes, scores, count must appear once")
                }
                roles = given
            } else {
                do {
                    // The prepared shapes: files often declare the post-process outputs without shapes.
                    let decided: DetectionOutputRoles
                    if let plan = try? Plan(graph: graph, limits: limits) {
                        decided = try DetectionOutputRoles(plan: plan, metadata: existing)
                    } else {
                        decided = try DetectionOutputRoles(graph: graph, tensors: graph.tensors, metadata: existing)
                    }
                    var r = [DetectionRole](repeating: .boxes, count: 4)
                    r[decided.boxes] = .boxes; r[decided.classes] = .classes; r[decided.scores] = .scores; r[decided.count] = .count
                    roles = r
                } catch {
                    throw .refused("\(error); give --output-roles in output order, e.g. scores,boxes,count,classes")
                }
            }
            let classes = post?.numClasses
            shape = .detector(roles: roles, classes: classes)
            if let labels = request.labels {
                if let first = labels.first, LabelChoice.isBackground(first), let classes, labels.count == classes + 1 {
                    throw .refused("the label file has \(labels.count) lines for \(classes) classes and starts with the background line '\(first)': MediaPipe names class i by line i, so every class would be one off; drop the first line")
                }
                if let classes, labels.count != classes {
                    throw .refused("the label file has \(labels.count) lines; the post-process op has num_classes \(classes) (one line per class index, no background line)")
                }
                files = [(request.labelFileName, Self.labelFile(labels))]
            }
        } else {
            guard outputs.count == 1 else {
                throw .refused("the model has \(outputs.count) outputs and no TFLite_Detection_PostProcess: a classifier's metadata describes one score output (give --output-roles for a detector)")
            }
            let classes = outputs[0].shape.last ?? 0
            guard classes > 0, outputs[0].elementCount == classes else {
                throw .refused("output '\(outputs[0].name)' has shape \(outputs[0].shape), not class scores [1, classes]")
            }
            shape = .classifier(classes: classes)
            if let labels = request.labels {
                guard labels.count == classes else {
                    var why = "the label file has \(labels.count) lines; output '\(outputs[0].name)' scores \(classes) classes"
                    if labels.count == classes + 1, let first = labels.first, LabelChoice.isBackground(first) {
                        why += " (its first line '\(first)' is a background line the model does not score: drop it)"
                    } else if labels.count + 1 == classes {
                        why += " (the model likely scores a background class at index 0: add a first line such as 'background')"
                    }
                    throw .refused(why)
                }
                files = [(request.labelFileName, Self.labelFile(labels))]
            }
        }
        // Zip entries here are 32-bit (no ZIP64) and need a name.
        for (fileName, bytes) in files {
            guard !fileName.isEmpty else { throw .refused("the label file needs a name to be packed under") }
            guard bytes.count <= Int(UInt32.max) / 2 else { throw .refused("label file '\(fileName)' has \(bytes.count) bytes, more than a zip entry here holds") }
        }
    }

    static func labelFile(_ labels: [String]) -> [UInt8] {
        return Array((labels.joined(separator: "\n") + "\n").utf8)
    }

    /// `metadata_schema.fbs` slots and union tags for the tables written here, beyond those the
    /// reader uses (`MetadataField`).
    enum Slot {
        static let boundingBoxIndex = 0, boundingBoxType = 1, boundingBoxCoordinates = 2
        static let rangeMin = 0, rangeMax = 1
        /// `BoundingBoxType.BOUNDARIES`, `CoordinateType.RATIO`.
        static let boundaries: Int8 = 1, ratio: Int8 = 0
    }

    /// The metadata FlatBuffer.
    func build() -> [UInt8] {
        var b = FlatBufferBuilder()
        typealias T = MetadataField.Tensor
        typealias C = MetadataField.Content

        func associatedFile(_ name: String, type: AssociatedFile.FileType, description: String) -> Int {
            let n = b.string(name), d = b.string(description)
            b.startTable()
            b.add(slot: MetadataField.AssociatedFile.name, reference: n)
            b.add(slot: MetadataField.AssociatedFile.description, reference: d)
            b.add(slot: MetadataField.AssociatedFile.type, type.rawValue)
            return b.endTable()
        }
        func emptyTable() -> Int { b.startTable(); return b.endTable() }
        func content(_ tag: UInt8, _ properties: Int, range: Int?) -> Int {
            b.startTable()
            b.add(slot: C.propertiesType, tag)
            b.add(slot: C.properties, reference: properties)
            if let range { b.add(slot: C.range, reference: range) }
            return b.endTable()
        }
        func rangeTwo() -> Int {
            // The detection outputs' box/class/score dimension is dimension 2 ([1, N, 4] / [1, N]: N at 1, values at 2).
            b.startTable()
            b.add(slot: Slot.rangeMin, Int32(2))
            b.add(slot: Slot.rangeMax, Int32(2))
            return b.endTable()
        }
        func processUnit(_ tag: UInt8, _ options: Int) -> Int {
            b.startTable()
            b.add(slot: MetadataField.ProcessUnit.optionsType, tag)
            b.add(slot: MetadataField.ProcessUnit.options, reference: options)
            return b.endTable()
        }
        func thresholdUnits() -> Int? {
            guard let t = request.scoreThreshold else { return nil }
            b.startTable()
            b.add(slot: MetadataField.ScoreThresholdingOptions.globalScoreThreshold, t)
            let options = b.endTable()
            return b.vector(references: [processUnit(MetadataField.ProcessUnit.scoreThresholdingOptions, options)])
        }
        func tensor(name: String, description: String, content: Int?, units: Int?, files: Int?) -> Int {
            let n = b.string(name), d = b.string(description)
            b.startTable()
            b.add(slot: T.name, reference: n)
            b.add(slot: T.description, reference: d)
            if let content { b.add(slot: T.content, reference: content) }
            if let units { b.add(slot: T.processUnits, reference: units) }
            if let files { b.add(slot: T.associatedFiles, reference: files) }
            return b.endTable()
        }

        // Input: an RGB (or grayscale) image, normalized when float.
        b.startTable()
        b.add(slot: MetadataField.ImageProperties.colorSpace, isGrayscale ? MetadataField.ImageProperties.grayscale : MetadataField.ImageProperties.rgb)
        let image = b.endTable()
        let inputContent = content(MetadataField.ContentProperties.imageProperties, image, range: nil)
        var inputUnits: Int?
        if let n = request.normalization {
            let mean = b.vector(n.mean), std = b.vector(n.std)
            b.startTable()
            b.add(slot: MetadataField.NormalizationOptions.mean, reference: mean)
            b.add(slot: MetadataField.NormalizationOptions.std, reference: std)
            let options = b.endTable()
            inputUnits = b.vector(references: [processUnit(MetadataField.ProcessUnit.normalizationOptions, options)])
        }
        let input = tensor(name: "image", description: "Input image to be processed.", content: inputContent, units: inputUnits, files: nil)

        var outputs = [Int]()
        switch shape {
        case .classifier:
            let features = content(MetadataField.ContentProperties.featureProperties, emptyTable(), range: nil)
            let labels = files.first.map { b.vector(references: [associatedFile($0.name, type: .tensorAxisLabels, description: "Labels for categories that the model can recognize.")]) }
            outputs = [tensor(name: "probability", description: "Scores of the categories.", content: features, units: thresholdUnits(), files: labels)]
        case .detector(let roles, _):
            for role in roles {
                switch role {
                case .boxes:
                    // index: where left, top, right, bottom sit in a box [ymin, xmin, ymax, xmax].
                    let index = b.vector([UInt32(1), 0, 3, 2])
                    b.startTable()
                    b.add(slot: Slot.boundingBoxIndex, reference: index)
                    b.add(slot: Slot.boundingBoxType, Slot.boundaries)
                    b.add(slot: Slot.boundingBoxCoordinates, Slot.ratio)
                    let box = b.endTable()
                    let c = content(MetadataField.ContentProperties.boundingBoxProperties, box, range: rangeTwo())
                    outputs.append(tensor(name: role.metadataName, description: "The locations of the detected boxes.", content: c, units: nil, files: nil))
                case .classes:
                    let c = content(MetadataField.ContentProperties.featureProperties, emptyTable(), range: rangeTwo())
                    let labels = files.first.map { b.vector(references: [associatedFile($0.name, type: .tensorValueLabels, description: "Labels for objects that the model can detect.")]) }
                    outputs.append(tensor(name: role.metadataName, description: "The categories of the detected boxes.", content: c, units: nil, files: labels))
                case .scores:
                    let c = content(MetadataField.ContentProperties.featureProperties, emptyTable(), range: rangeTwo())
                    outputs.append(tensor(name: role.metadataName, description: "The scores of the detected boxes.", content: c, units: thresholdUnits(), files: nil))
                case .count:
                    outputs.append(tensor(name: role.metadataName, description: "The number of the detected boxes.", content: nil, units: nil, files: nil))
                }
            }
        }
        let inputVector = b.vector(references: [input])
        let outputVector = b.vector(references: outputs)
        b.startTable()
        b.add(slot: MetadataField.SubGraph.inputTensorMetadata, reference: inputVector)
        b.add(slot: MetadataField.SubGraph.outputTensorMetadata, reference: outputVector)
        let subgraph = b.endTable()
        let subgraphs = b.vector(references: [subgraph])
        let modelName = b.string(name)
        let version = b.string(MetadataWriter.minParserVersion)
        b.startTable()
        b.add(slot: MetadataField.Model.name, reference: modelName)
        b.add(slot: MetadataField.Model.subgraphMetadata, reference: subgraphs)
        b.add(slot: MetadataField.Model.minParserVersion, reference: version)
        let root = b.endTable()
        return b.finish(root: root, identifier: "M001")
    }
}
