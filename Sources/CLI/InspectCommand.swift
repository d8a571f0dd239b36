import Foundation
import Engine
import Tasks

/// `swiftlite inspect MODEL [--json]`: tensors, operators, inputs/outputs, metadata and MACs; what
/// the engine cannot run (unknown operators, unsupported tensor types), marked, with exit status 0;
/// for detectors, which output is which and the rule that decided; the labels the metadata packs.
struct InspectCommand: ParsedCommand {
    static let name = "inspect"
    static let summary = "describe a model: tensors, operators, inputs/outputs, metadata, MACs"
    static let synopsis = "inspect MODEL [--json]"
    static let json = Option.flag("json", help: "print one JSON object instead of text")
    static let declarations = [json.spec]

    let path: String
    let asJSON: Bool

    init(_ arguments: Arguments) throws(CLIError) {
        guard arguments.positionals.count == 1 else { throw .usage("inspect takes exactly one MODEL path, got \(arguments.positionals.count) (see 'swiftlite inspect --help')") }
        path = arguments.positionals[0]
        asJSON = try arguments[Self.json]
    }

    func run() throws {
        let report = try ModelReport(path: path)
        print(asJSON ? try jsonText(report.json) : report.text)
    }
}

/// What `inspect` reports, computed once and rendered as text or JSON.
struct ModelReport {
    let path: String
    /// The schema-level view, readable even when `graph` is nil.
    let survey: ModelSurvey
    /// nil when the engine cannot even load the model (a tensor type it does not represent, ...).
    let graph: Graph?
    /// Shapes after preparation when every operator is supported, else the shapes the file declares.
    let tensors: [TensorDescriptor]
    let preparedNote: String?
    /// Detector output roles (when the model has the post-process op or four outputs), or why not.
    let detectionRoles: Result<DetectionOutputRoles, TaskError>?
    /// Label files the metadata packs, by output position.
    let metadataLabels: [(output: Int, file: String)]

    init(path: String) throws {
        self.path = path
        let file = try MappedFile(path: path)
        survey = try ModelSurvey(bytes: file.bytes)
        var note: String?
        var loaded: Graph?
        do { loaded = try Graph(file: file) } catch { note = "not loadable by this engine: \(error)" }
        graph = loaded
        var tensors = loaded?.tensors ?? []
        if let graph = loaded {
            do { tensors = try Plan(graph: graph).tensors } catch { note = "not runnable by this engine: \(error)" }
        }
        self.tensors = tensors
        preparedNote = note
        let metadata = loaded.flatMap { try? ModelMetadata(graph: $0) }
        // Shown for models with the post-process op, and for other four-output models whose roles are decided.
        if let graph = loaded, graph.detectionPostProcess != nil || graph.outputs.count == 4 {
            let roles = Result { () throws(TaskError) in try DetectionOutputRoles(graph: graph, tensors: tensors, metadata: metadata) }
            if case .failure = roles, graph.detectionPostProcess == nil { detectionRoles = nil } else { detectionRoles = roles }
        } else {
            detectionRoles = nil
        }
        metadataLabels = (metadata?.outputs ?? []).enumerated().compactMap { i, t in
            t.associatedFiles.first { $0.type == .tensorAxisLabels || $0.type == .tensorValueLabels }.map { (i, $0.name) }
        }
    }

    /// Why the engine cannot run operator `index`, or nil.
    func operatorProblem(_ index: Int) -> String? {
        survey.operators.indices.contains(index) && !survey.operators[index].isImplemented ? "no kernel in SwiftLite" : nil
    }

    /// What is special about tensor `index` (unsupported type, sparse), or nil.
    func tensorProblem(_ index: Int) -> String? {
        guard survey.tensors.indices.contains(index) else { return nil }
        let t = survey.tensors[index]
        if !t.isSupportedType { return "type \(t.typeName) unsupported" }
        if t.isSparse { return "sparse, densified at load" }
        return nil
    }

    /// The "cannot run" summary: counts and names.
    var unsupportedSummary: String {
        let ops = survey.unimplementedOperators, types = survey.unsupportedTensors
        if ops.isEmpty && types.isEmpty { return "SwiftLite has a kernel for every operator and supports every tensor type" }
        var parts = [String]()
        if !ops.isEmpty {
            parts.append("\(ops.count) operator\(ops.count == 1 ? "" : "s") without a kernel (\(Array(Set(ops.map(\.name))).sorted().joined(separator: ", ")))")
        }
        if !types.isEmpty {
            parts.append("\(types.count) tensor\(types.count == 1 ? "" : "s") of unsupported type (\(Array(Set(types.map(\.typeName))).sorted().joined(separator: ", ")))")
        }
        return "cannot run: " + parts.joined(separator: "; ")
    }

    var rolesLine: String? {
        switch detectionRoles {
        case .success(let roles): return "detection outputs: \(roles)"
        case .failure(let error): return "detection outputs: undecided: \(error)"
        case nil: return nil
        }
    }

    /// Multiply-accumulates of one operator, from its filter and output shapes.
    func macs(_ node: Node) -> Int { node.multiplyAccumulates(tensors: tensors) }

    /// Text for a model the engine cannot load: the survey's operators and tensors, marked.
    var surveyText: String {
        var lines = ["model: \(path)"]
        if let note = preparedNote { lines.append("note: \(note)") }
        lines.append(unsupportedSummary)
        func tensorLine(_ i: Int) -> String {
            guard survey.tensors.indices.contains(i) else { return "\(i) (out of range)" }
            let t = survey.tensors[i]
            return "\(i) '\(t.name)' \(t.typeName) \(t.shape)" + (tensorProblem(i).map { " [\($0)]" } ?? "")
        }
        lines.append("inputs:")
        lines += survey.inputs.map { "  " + tensorLine($0) }
        lines.append("outputs:")
        lines += survey.outputs.map { "  " + tensorLine($0) }
        lines.append("operators (\(survey.operators.count)):")
        lines += survey.operators.map { op in
            "  \(op.index) \(op.name) in=\(op.inputs) out=\(op.outputs)" + (operatorProblem(op.index).map { " [cannot run: \($0)]" } ?? "")
        }
        lines.append("tensors (\(survey.tensors.count)):")
        lines += survey.tensors.indices.map { "  " + tensorLine($0) }
        return lines.joined(separator: "\n")
    }

    /// Custom options shown as `key=value` when they are a FlexBuffer map of scalars (as for
    /// TFLite_Detection_PostProcess); otherwise their size.
    static func describeCustomOptions(_ node: Node) -> String {
        guard let options = node.customOptions, options.bytes.count > 0 else { return "" }
        guard let map = try? FlexBuffer.root(options.bytes).map() else { return "custom_options=\(options.bytes.count) bytes" }
        return (0 ..< map.count).compactMap { i -> String? in
            guard let key = try? map.key(at: i), let value = try? map.values.element(at: i) else { return nil }
            switch value.type {
            case .bool: return (try? value.bool()).map { "\(key)=\($0)" }
            case .int, .indirectInt: return (try? value.int()).map { "\(key)=\($0)" }
            case .uint, .indirectUInt: return (try? value.uint()).map { "\(key)=\($0)" }
            case .float, .indirectFloat: return (try? value.double()).map { "\(key)=\(Float($0))" }
            case .string, .key: return (try? value.string()).map { "\(key)=\($0)" }
            default: return "\(key)=<\(value.type)>"
            }
        }.joined(separator: " ")
    }

    static func describe(_ q: QuantizationParameters?) -> String {
        guard let q else { return "" }
        if q.isPerChannel { return "per-channel(\(q.scales.count) scales, axis \(q.quantizedDimension))" }
        return "scale=\(q.scale) zero_point=\(q.zeroPoint)"
    }

    var text: String {
        guard let graph else { return surveyText }
        var lines = ["model: \(path)", "schema version: \(graph.version)"]
        if let d = graph.description { lines.append("description: \(d)") }
        if graph.subgraphCount > 1 { lines.append("subgraphs: \(graph.subgraphCount) (only the first is run)") }
        if let note = preparedNote { lines.append("note: \(note)") }
        lines.append(unsupportedSummary)
        if let roles = rolesLine { lines.append(roles) }
        func tensorLine(_ i: Int) -> String {
            let t = tensors[i]
            return "\(i) '\(t.name)' \(t.dataType) \(t.shape) \(Self.describe(t.quantization))".trimmingCharacters(in: .whitespaces)
                + (tensorProblem(i).map { " [\($0)]" } ?? "")
        }
        lines.append("inputs:")
        lines += graph.inputs.map { "  " + tensorLine($0) }
        lines.append("outputs:")
        lines += graph.outputs.map { "  " + tensorLine($0) }
        lines.append("operators (\(graph.nodes.count)):")
        var total = 0
        for node in graph.nodes {
            let m = macs(node)
            total += m
            let opts = node.customName == nil ? node.options.description : Self.describeCustomOptions(node)
            lines.append("  \(node.index) \(node.opName) in=\(node.inputs) out=\(node.outputs)\(m > 0 ? " macs=\(m)" : "")\(opts.isEmpty ? "" : " \(opts)")"
                         + (operatorProblem(node.index).map { " [cannot run: \($0)]" } ?? ""))
        }
        lines.append("total MACs: \(total)")
        lines.append("tensors (\(tensors.count)):")
        lines += tensors.indices.map { "  " + tensorLine($0) + (tensors[$0].isConstant ? " const" : "") }
        lines.append("metadata: \(graph.metadata.isEmpty ? "none" : graph.metadata.map(\.name).joined(separator: ", "))")
        if metadataLabels.isEmpty {
            lines.append("labels: none in the metadata (classify/detect use --labels, else category indices)")
        } else {
            lines += metadataLabels.map { "labels: output \($0.output) from model metadata ('\($0.file)'); a --labels file takes precedence" }
        }
        return lines.joined(separator: "\n")
    }

    /// The report as JSON: `inspect --json`.
    struct JSON: Encodable {
        struct Quantization: Encodable {
            let scales: [Double]
            let zeroPoints: [Int]
            let quantizedDimension: Int
            enum CodingKeys: String, CodingKey { case scales, zeroPoints = "zero_points", quantizedDimension = "quantized_dimension" }
        }
        struct Tensor: Encodable {
            let index: Int, name: String, shape: [Int], type: String, constant: Bool
            let quantization: Quantization?
        }
        struct Operator: Encodable {
            let index: Int, op: String, inputs: [Int], outputs: [Int], options: String, macs: Int, version: Int
        }
        let model: String
        let version: Int
        let inputs, outputs, tensors: [Tensor]
        let operators: [Operator]
        let metadata: [String]
        let totalMacs: Int
        let note: String?
        /// Operators without a kernel and tensors of unsupported type, by index and name.
        let cannotRun: CannotRun
        let sparseTensors: [Int]
        let detectionOutputs: DetectionOutputs?
        let metadataLabels: [Labels]
        struct CannotRun: Encodable {
            let summary: String
            let operators: [Named]
            let tensors: [Named]
        }
        struct Named: Encodable { let index: Int, name: String, type: String? }
        struct DetectionOutputs: Encodable {
            let boxes, classes, scores, count: Int?
            let rule: String?
            let error: String?
        }
        struct Labels: Encodable { let output: Int, file: String }
        enum CodingKeys: String, CodingKey {
            case model, version, inputs, outputs, tensors, operators, metadata, totalMacs = "total_macs", note
            case cannotRun = "cannot_run", sparseTensors = "sparse_tensors", detectionOutputs = "detection_outputs", metadataLabels = "metadata_labels"
        }
    }

    var json: JSON {
        func tensorJSON(_ t: TensorDescriptor) -> JSON.Tensor {
            JSON.Tensor(index: t.index, name: t.name, shape: t.shape, type: t.dataType.rawValue, constant: t.isConstant,
                        quantization: t.quantization.map { q in
                            JSON.Quantization(scales: q.scales.map(Double.init), zeroPoints: q.zeroPoints, quantizedDimension: q.quantizedDimension)
                        })
        }
        let cannotRun = JSON.CannotRun(
            summary: unsupportedSummary,
            operators: survey.unimplementedOperators.map { JSON.Named(index: $0.index, name: $0.name, type: nil) },
            tensors: survey.unsupportedTensors.map { JSON.Named(index: $0.index, name: $0.name, type: $0.typeName) })
        let roles: JSON.DetectionOutputs? = switch detectionRoles {
        case .success(let r): JSON.DetectionOutputs(boxes: r.boxes, classes: r.classes, scores: r.scores, count: r.count, rule: r.rule.rawValue, error: nil)
        case .failure(let e): JSON.DetectionOutputs(boxes: nil, classes: nil, scores: nil, count: nil, rule: nil, error: e.description)
        case nil: nil
        }
        let sparse = survey.sparseTensors.map(\.index)
        let labels = metadataLabels.map { JSON.Labels(output: $0.output, file: $0.file) }
        guard let graph else {
            // Not loadable: the survey's view, declared types as the schema names them.
            func surveyTensor(_ t: ModelSurvey.Tensor) -> JSON.Tensor {
                JSON.Tensor(index: t.index, name: t.name, shape: t.shape, type: t.typeName.lowercased(), constant: false, quantization: nil)
            }
            let ops = survey.operators.map {
                JSON.Operator(index: $0.index, op: $0.name, inputs: $0.inputs, outputs: $0.outputs, options: "", macs: 0, version: 0)
            }
            return JSON(model: path, version: 0,
                        inputs: survey.inputs.compactMap { survey.tensors.indices.contains($0) ? surveyTensor(survey.tensors[$0]) : nil },
                        outputs: survey.outputs.compactMap { survey.tensors.indices.contains($0) ? surveyTensor(survey.tensors[$0]) : nil },
                        tensors: survey.tensors.map(surveyTensor), operators: ops, metadata: [], totalMacs: 0, note: preparedNote,
                        cannotRun: cannotRun, sparseTensors: sparse, detectionOutputs: nil, metadataLabels: [])
        }
        let ops = graph.nodes.map { node in
            JSON.Operator(index: node.index, op: node.opName, inputs: node.inputs, outputs: node.outputs,
                          options: node.customName == nil ? node.options.description : Self.describeCustomOptions(node),
                          macs: macs(node), version: node.version)
        }
        return JSON(model: path, version: graph.version,
                    inputs: graph.inputs.map { tensorJSON(tensors[$0]) }, outputs: graph.outputs.map { tensorJSON(tensors[$0]) },
                    tensors: tensors.map(tensorJSON), operators: ops, metadata: graph.metadata.map(\.name),
                    totalMacs: graph.nodes.reduce(0) { $0 + macs($1) }, note: preparedNote,
                    cannotRun: cannotRun, sparseTensors: sparse, detectionOutputs: roles, metadataLabels: labels)
    }
}
