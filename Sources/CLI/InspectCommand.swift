import Foundation
import Engine

/// `swiftlite inspect MODEL [--json]`: tensors, operators, inputs/outputs, metadata and MACs.
struct InspectCommand: Command {
    static let name = "inspect"
    static let summary = "describe a model: tensors, operators, inputs/outputs, metadata, MACs"
    static let usage = """
        swiftlite inspect MODEL [--json]

          --json    print one JSON object instead of text
        """
    static let options: Set<String> = []
    static let flags: Set<String> = ["json"]

    static func run(_ arguments: Arguments) throws {
        guard arguments.positionals.count == 1 else { throw CLIError.usage("inspect takes exactly one MODEL path, got \(arguments.positionals.count) (see 'swiftlite inspect --help')") }
        let report = try ModelReport(path: arguments.positionals[0])
        if arguments.flag("json") {
            let data = try JSONSerialization.data(withJSONObject: report.json, options: [.prettyPrinted, .sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        } else {
            print(report.text)
        }
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

    var json: [String: Any] {
        func tensorJSON(_ t: TensorDescriptor) -> [String: Any] {
            var d: [String: Any] = ["index": t.index, "name": t.name, "shape": t.shape, "type": t.dataType.rawValue, "constant": t.isConstant]
            if let q = t.quantization {
                d["quantization"] = ["scales": q.scales.map(Double.init), "zero_points": q.zeroPoints, "quantized_dimension": q.quantizedDimension]
            }
            return d
        }
        let ops: [[String: Any]] = graph.nodes.map { node in
            ["index": node.index, "op": node.opName, "inputs": node.inputs, "outputs": node.outputs,
             "options": node.customName == nil ? node.options.description : Self.describeCustomOptions(node),
             "macs": macs(node), "version": node.version]
        }
        var result: [String: Any] = [
            "model": path, "version": graph.version,
            "inputs": graph.inputs.map { tensorJSON(tensors[$0]) },
            "outputs": graph.outputs.map { tensorJSON(tensors[$0]) },
            "operators": ops, "tensors": tensors.map(tensorJSON),
            "metadata": graph.metadata.map(\.name),
            "total_macs": graph.nodes.reduce(0) { $0 + macs($1) },
        ]
        if let note = preparedNote { result["note"] = note }
        return result
    }
}
