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
            typealias F = MetadataField.Model
            name = try root.string(F.name)
            description = try root.string(F.description)
            version = try root.string(F.version)
            author = try root.string(F.author)
            license = try root.string(F.license)
            associatedFiles = try Self.files(root.vector(F.associatedFiles))
            minParserVersion = try root.string(F.minParserVersion)
            typealias S = MetadataField.SubGraph
            let subgraph = try root.vector(F.subgraphMetadata)?.tables().first
            inputs = try (subgraph?.vector(S.inputTensorMetadata)?.tables() ?? []).map(TensorMetadata.init)
            outputs = try (subgraph?.vector(S.outputTensorMetadata)?.tables() ?? []).map(TensorMetadata.init)
            if let subgraphFiles = try subgraph?.vector(S.associatedFiles) { associatedFiles += try Self.files(subgraphFiles) }
        } catch let error as MetadataError {
            throw error
        } catch {
            throw .malformed("\(error)")
        }
    }

    static func files(_ vector: Vector?) throws -> [AssociatedFile] {
        try (vector?.tables() ?? []).map { t in
            typealias F = MetadataField.AssociatedFile
            return AssociatedFile(name: try t.string(F.name) ?? "", description: try t.string(F.description),
                                  type: AssociatedFile.FileType(rawValue: try t.scalar(F.type, default: Int8(0))) ?? .unknown,
                                  locale: try t.string(F.locale))
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
        typealias F = MetadataField.Tensor
        name = try t.string(F.name)
        description = try t.string(F.description)
        associatedFiles = try ModelMetadata.files(t.vector(F.associatedFiles))
        typealias C = MetadataField.Content
        if let content = try t.table(F.content),
           try content.scalar(C.propertiesType, default: UInt8(0)) == MetadataField.ContentProperties.imageProperties,
           let image = try content.table(C.properties) {
            isGrayscale = try image.scalar(MetadataField.ImageProperties.colorSpace, default: Int8(0)) == MetadataField.ImageProperties.grayscale
        }
        typealias P = MetadataField.ProcessUnit
        for unit in try t.vector(F.processUnits)?.tables() ?? [] {
            let kind = try unit.scalar(P.optionsType, default: UInt8(0))
            guard let options = try unit.table(P.options) else { continue }
            switch kind {
            case P.normalizationOptions:
                typealias N = MetadataField.NormalizationOptions
                normalization = (try options.vector(N.mean)?.floats() ?? [], try options.vector(N.std)?.floats() ?? [])
            case P.scoreThresholdingOptions:
                scoreThreshold = try options.float(MetadataField.ScoreThresholdingOptions.globalScoreThreshold, default: 0)
            default:
                break
            }
        }
    }
}

/// Field slots of the `metadata_schema.fbs` tables read here (a table's fields are numbered in
/// declaration order, deprecated ones included), and the union tags compared against.
enum MetadataField {
    /// `ModelMetadata`.
    enum Model {
        static let name = 0, description = 1, version = 2, subgraphMetadata = 3, author = 4, license = 5
        static let associatedFiles = 6, minParserVersion = 7
    }
    /// `SubGraphMetadata`.
    enum SubGraph {
        static let name = 0, description = 1, inputTensorMetadata = 2, outputTensorMetadata = 3, associatedFiles = 4
    }
    /// `TensorMetadata`.
    enum Tensor {
        static let name = 0, description = 1, dimensionNames = 2, content = 3, processUnits = 4, stats = 5, associatedFiles = 6
    }
    /// `Content`: a `ContentProperties` union (type tag, then value).
    enum Content {
        static let propertiesType = 0, properties = 1, range = 2
    }
    /// `ContentProperties` union tags.
    enum ContentProperties {
        static let featureProperties: UInt8 = 1, imageProperties: UInt8 = 2, boundingBoxProperties: UInt8 = 3
    }
    /// `ImageProperties`; `ColorSpaceType` values.
    enum ImageProperties {
        static let colorSpace = 0, defaultSize = 1
        static let rgb: Int8 = 1, grayscale: Int8 = 2
    }
    /// `ProcessUnit`: a `ProcessUnitOptions` union (type tag, then value), and its tags.
    enum ProcessUnit {
        static let optionsType = 0, options = 1
        static let normalizationOptions: UInt8 = 1, scoreCalibrationOptions: UInt8 = 2, scoreThresholdingOptions: UInt8 = 3
    }
    /// `NormalizationOptions`.
    enum NormalizationOptions {
        static let mean = 0, std = 1
    }
    /// `ScoreThresholdingOptions`.
    enum ScoreThresholdingOptions {
        static let globalScoreThreshold = 0
    }
    /// `AssociatedFile`.
    enum AssociatedFile {
        static let name = 0, description = 1, type = 2, locale = 3, version = 4
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
