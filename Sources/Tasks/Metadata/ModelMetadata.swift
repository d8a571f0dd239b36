import Engine

/// TFLite Metadata (`metadata_schema.fbs`, file identifier `M001`): what a model's author says
/// about its inputs and outputs — normalisation, labels, score thresholds.
///
/// Read from the buffer named by the model's `TFLITE_METADATA` metadata entry.
///
/// ```swift
/// if let metadata = try ModelMetadata(graph: graph) {
///     print(metadata.name, metadata.inputs.first?.normalization as Any)
/// }
/// ```
public struct ModelMetadata: Sendable {
    public var name: String?
    public var description: String?
    public var version: String?
    public var author: String?
    public var license: String?
    public var minParserVersion: String?
    public var inputs: [TensorMetadata]
    public var outputs: [TensorMetadata]
    public var associatedFiles: [AssociatedFile]

    /// The metadata of `graph`, or nil when the model has none.
    /// - Throws: `MetadataError` if the metadata buffer is malformed.
    public init?(graph: Graph) throws(MetadataError) {
        guard let entry = graph.metadata.first(where: { $0.name == "TFLITE_METADATA" }) else { return nil }
        try self.init(bytes: entry.data.bytes)
    }

    /// Parses a metadata flatbuffer.
    public init(bytes: UnsafeRawBufferPointer) throws(MetadataError) {
        let reader = ByteReader(bytes)
        do {
            guard bytes.count >= 8, Array(try reader.slice(4, 4)) == Array("M001".utf8) else {
                throw MetadataError.malformed("metadata buffer lacks the 'M001' identifier")
            }
            let root = try Table.root(of: reader)
            name = try root.string(0)
            description = try root.string(1)
            version = try root.string(2)
            author = try root.string(4)
            license = try root.string(5)
            associatedFiles = try Self.files(root.vector(6))
            minParserVersion = try root.string(7)
            let subgraph = try root.vector(3)?.tables().first
            inputs = try (subgraph?.vector(2)?.tables() ?? []).map(TensorMetadata.init)
            outputs = try (subgraph?.vector(3)?.tables() ?? []).map(TensorMetadata.init)
            if let subgraphFiles = try subgraph?.vector(4) { associatedFiles += try Self.files(subgraphFiles) }
        } catch let error as MetadataError {
            throw error
        } catch {
            throw .malformed("\(error)")
        }
    }

    static func files(_ vector: Vector?) throws -> [AssociatedFile] {
        try (vector?.tables() ?? []).map { t in
            AssociatedFile(name: try t.string(0) ?? "", description: try t.string(1),
                           type: AssociatedFile.FileType(rawValue: try t.scalar(2, default: Int8(0))) ?? .unknown,
                           locale: try t.string(3))
        }
    }
}

/// Metadata of one input or output tensor.
public struct TensorMetadata: Sendable {
    public var name: String?
    public var description: String?
    /// Per-channel `(x − mean) / std` applied to inputs before quantization (one value = all channels).
    public var normalization: (mean: [Float], std: [Float])?
    /// A recommended score threshold for outputs (`ScoreThresholdingOptions`).
    public var scoreThreshold: Float?
    /// For image inputs: the colour space, when stated.
    public var isGrayscale = false
    public var associatedFiles: [AssociatedFile]

    init(_ t: Table) throws {
        name = try t.string(0)
        description = try t.string(1)
        associatedFiles = try ModelMetadata.files(t.vector(6))
        if let content = try t.table(3), try content.scalar(0, default: UInt8(0)) == 2, let image = try content.table(1) {
            isGrayscale = try image.scalar(0, default: Int8(0)) == 2
        }
        for unit in try t.vector(4)?.tables() ?? [] {
            let kind = try unit.scalar(0, default: UInt8(0))
            guard let options = try unit.table(1) else { continue }
            switch kind {
            case 1:
                normalization = (try options.vector(0)?.floats() ?? [], try options.vector(1)?.floats() ?? [])
            case 3:
                scoreThreshold = try options.float(0, default: 0)
            default:
                break
            }
        }
    }
}

/// A file packed into the model (labels, vocabularies, ...).
public struct AssociatedFile: Sendable, Equatable {
    /// The schema's `AssociatedFileType`.
    public enum FileType: Int8, Sendable {
        case unknown = 0, descriptions, tensorAxisLabels, tensorValueLabels, tensorAxisScoreCalibration, vocabulary
    }
    public var name: String
    public var description: String?
    public var type: FileType
    /// ISO 639-1 locale such as "en" or "fr", for translated label files.
    public var locale: String?
}

/// Problems with a model's metadata or associated files.
public enum MetadataError: Error, Equatable, CustomStringConvertible {
    case malformed(String)
    case missingAssociatedFile(String)

    public var description: String {
        switch self {
        case .malformed(let why): return "malformed TFLite metadata: \(why)"
        case .missingAssociatedFile(let name): return "associated file '\(name)' is named in the metadata but not packed in the model"
        }
    }
}
