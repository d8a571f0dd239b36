import Foundation
import Engine

/// `swiftlite inspect MODEL [--json]`: tensors, operators, inputs/outputs, metadata and MACs.
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
    let graph: Graph
    /// Shapes after preparation when every operator is supported, else the shapes the file declares.
    let tensors: [TensorDescriptor]
    let preparedNote: String?

    init(path: String) throws {
        self.path = path
        graph = try Graph(contentsOf: path)
        do {
            tensors = try Plan(graph: graph).tensors
            preparedNote = nil
        } catch {
            tensors = graph.tensors
            preparedNote = "not runnable by this engine: \(error)"
        }
    }

    /// Multiply-accumulates of one operator, from its filter and output shapes.
    func macs(_ node: Node) -> Int { node.multiplyAccumulates(tensors: tensors) }

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
        var lines = ["model: \(path)", "schema version: \(graph.version)"]
        if let d = graph.description { lines.append("description: \(d)") }
        if graph.subgraphCount > 1 { lines.append("subgraphs: \(graph.subgraphCount) (only the first is run)") }
        if let note = preparedNote { lines.append("note: \(note)") }
        func tensorLine(_ i: Int) -> String {
            let t = tensors[i]
            return "\(i) '\(t.name)' \(t.dataType) \(t.shape) \(Self.describe(t.quantization))".trimmingCharacters(in: .whitespaces)
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
            lines.append("  \(node.index) \(node.opName) in=\(node.inputs) out=\(node.outputs)\(m > 0 ? " macs=\(m)" : "")\(opts.isEmpty ? "" : " \(opts)")")
        }
        lines.append("total MACs: \(total)")
        lines.append("tensors (\(tensors.count)):")
        lines += tensors.indices.map { "  " + tensorLine($0) + (tensors[$0].isConstant ? " const" : "") }
        lines.append("metadata: \(graph.metadata.isEmpty ? "none" : graph.metadata.map(\.name).joined(separator: ", "))")
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
        enum CodingKeys: String, CodingKey { case model, version, inputs, outputs, tensors, operators, metadata, totalMacs = "total_macs", note }
    }

    var json: JSON {
        func tensorJSON(_ t: TensorDescriptor) -> JSON.Tensor {
            JSON.Tensor(index: t.index, name: t.name, shape: t.shape, type: t.dataType.rawValue, constant: t.isConstant,
                        quantization: t.quantization.map { q in
                            JSON.Quantization(scales: q.scales.map(Double.init), zeroPoints: q.zeroPoints, quantizedDimension: q.quantizedDimension)
                        })
        }
        let ops = graph.nodes.map { node in
            JSON.Operator(index: node.index, op: node.opName, inputs: node.inputs, outputs: node.outputs,
                          options: node.customName == nil ? node.options.description : Self.describeCustomOptions(node),
                          macs: macs(node), version: node.version)
        }
        return JSON(model: path, version: graph.version,
                    inputs: graph.inputs.map { tensorJSON(tensors[$0]) }, outputs: graph.outputs.map { tensorJSON(tensors[$0]) },
                    tensors: tensors.map(tensorJSON), operators: ops, metadata: graph.metadata.map(\.name),
                    totalMacs: graph.nodes.reduce(0) { $0 + macs($1) }, note: preparedNote)
    }
}
