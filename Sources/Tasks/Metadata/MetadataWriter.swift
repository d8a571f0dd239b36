import CZlib
import Engine
import Foundation

/// What `MetadataWriter` writes into a model. Fields left nil are taken from the model's existing
/// metadata when it has some, else left out.
public struct MetadataWriteRequest: Sendable {
    /// The model's name (`ModelMetadata.name`).
    public var name: String?
    /// Label lines: for a classifier, one per output class (`TENSOR_AXIS_LABELS`); for a detector,
    /// one per class index of the post-process op (`TENSOR_VALUE_LABELS`, no background line).
    public var labels: [String]?
    /// The name the label file is packed under.
    public var labelFileName = "labels.txt"
    /// Per-channel (or one for all channels) `(x − mean) / std` of a float input.
    public var normalization: (mean: [Float], std: [Float])?
    /// `ScoreThresholdingOptions.global_score_threshold` of the score output.
    public var scoreThreshold: Float?
    /// For a detector: the role of each model output in model order (`.boxes`, ...); nil lets
    /// `DetectionOutputRoles` decide.
    public var outputRoles: [DetectionRole]?

    public init() {}
}

/// A detector output's role, as `--output-roles` spells it.
public enum DetectionRole: String, Sendable, CaseIterable {
    case boxes, classes, scores, count

    /// The output tensor name MediaPipe's object detector looks up in the metadata.
    var metadataName: String {
        switch self {
        case .boxes: return "location"
        case .classes: return "category"
        case .scores: return "score"
        case .count: return "number of detections"
        }
    }
}

/// Why metadata was not written.
public enum MetadataWriteError: Error, Equatable, CustomStringConvertible {
    /// The request would produce wrong metadata for this model.
    case refused(String)
    /// The model file cannot be read or rewritten.
    case unreadableModel(String)

    public var description: String {
        switch self {
        case .refused(let why): return "refusing to write metadata: \(why)"
        case .unreadableModel(let why): return "cannot rewrite the model: \(why)"
        }
    }
}

/// Writes TFLite Metadata into a model the way tflite-support's `MetadataPopulator` does:
///
/// - the metadata FlatBuffer (`metadata_schema.fbs`, identifier `M001`) becomes a new buffer of
///   the model, named by a `metadata` entry `TFLITE_METADATA` (an existing entry of that name is
///   dropped, the others kept);
/// - the label file is packed as an associated file in a zip archive (stored, not deflated)
///   appended to the model, with offsets counted from the start of the file.
///
/// The model's root table is rewritten in front of the original bytes, which follow unchanged at
/// a 16-byte-aligned shift (every reference inside them is relative, so they stay valid); the new
/// root refers to the original operator codes, subgraphs and buffers.
///
/// ```swift
/// var request = MetadataWriteRequest()
/// request.labels = ["cat", "dog"]
/// request.normalization = ([127.5], [127.5])
/// let written = try MetadataWriter.write(model: bytes, request)
/// ```
public enum MetadataWriter {
    /// Field slots of `schema.fbs`'s `Model`, `Buffer` and `Metadata` tables.
    enum ModelField {
        static let version = 0, operatorCodes = 1, subgraphs = 2, description = 3, buffers = 4
        static let metadataBuffer = 5, metadata = 6, signatureDefs = 7
        static let bufferData = 0, bufferOffset = 1
        static let metadataName = 0, metadataBufferIndex = 1
    }

    /// The metadata parser version that reads every field written here (no field introduced after 1.0.0).
    static let minParserVersion = "1.0.0"

    /// The model `model` with `request`'s metadata.
    /// - Throws: `MetadataWriteError.refused` for a request that does not fit the model (label
    ///   count ≠ classes, normalization of an integer input, a float input without
    ///   normalization, ...), `.unreadableModel` for a file that is not a readable model.
    public static func write(model: [UInt8], _ request: MetadataWriteRequest, limits: Limits = .default) throws(MetadataWriteError) -> [UInt8] {
        let graph: Graph
        do {
            graph = try Graph(data: Data(model))
        } catch {
            throw .unreadableModel("\(error)")
        }
        let existing = try? ModelMetadata(graph: graph)
        var request = request
        if request.name == nil { request.name = existing?.name }
        if request.normalization == nil, let n = existing?.inputs.first?.normalization { request.normalization = n }
        if request.scoreThreshold == nil { request.scoreThreshold = existing?.outputs.compactMap(\.scoreThreshold).first }
        if request.labels == nil, let existing, let (name, lines) = try existingLabels(existing, graph: graph, limits: limits) {
            request.labels = lines
            request.labelFileName = name
        }
        let plan = try MetadataPlan(graph: graph, request: request, existing: existing, limits: limits)
        let metadata = plan.build()
        return try rewrite(model: model, metadata: metadata, files: plan.files)
    }

    /// The name and lines of the label file already packed in the model (the first label file of any output), or nil.
    static func existingLabels(_ metadata: ModelMetadata, graph: Graph, limits: Limits) throws(MetadataWriteError) -> (String, [String])? {
        let files = metadata.outputs.flatMap(\.associatedFiles).filter { $0.type == .tensorAxisLabels || $0.type == .tensorValueLabels }
        guard let file = files.first else { return nil }
        do {
            guard let archive = try ZipArchive(graph.associatedFilesBytes, maxFileBytes: limits.maxAssociatedFileBytes),
                  let bytes = try archive.contents(of: file.name) else { return nil }
            return (file.name, Labels(fileContents: String(decoding: bytes, as: UTF8.self)).names)
        } catch {
            throw .unreadableModel("the existing label file '\(file.name)': \(error)")
        }
    }

    /// The model with `metadata` as its `TFLITE_METADATA` buffer and `files` zipped after it.
    static func rewrite(model: [UInt8], metadata: [UInt8], files: [(name: String, bytes: [UInt8])]) throws(MetadataWriteError) -> [UInt8] {
        let raw = RawFlatBuffer(bytes: model)
        typealias F = ModelField
        var b = FlatBufferBuilder()
        // Objects of the original file sit right after the new prefix: position q there is Ref −q.
        func old(_ position: Int) -> Int { -position }
        let root: Int
        do {
            guard model.count >= 8, Array(model[4 ..< 8]) == Array("TFL3".utf8) else {
                throw MetadataWriteError.unreadableModel("no 'TFL3' file identifier")
            }
            let modelTable = try raw.root()
            var oldBuffers = [Int]()
            if let v = try raw.target(F.buffers, table: modelTable) { oldBuffers = try raw.references(vector: v) }
            for (i, buffer) in oldBuffers.enumerated() {
                if let at = try raw.field(F.bufferOffset, table: buffer), try raw.u64(at) > 1 {
                    throw MetadataWriteError.unreadableModel("buffer \(i) is stored outside the flatbuffer (the >2 GB layout), which this writer does not move")
                }
            }
            var keptMetadata = [Int]()
            if let v = try raw.target(F.metadata, table: modelTable) {
                for entry in try raw.references(vector: v) {
                    var name: String?
                    if let s = try raw.target(F.metadataName, table: entry) { name = try raw.string(s) }
                    if name != "TFLITE_METADATA" { keptMetadata.append(entry) }
                }
            }
            let data = b.bytes(metadata, alignment: 16)
            b.startTable()
            b.add(slot: F.bufferData, reference: data)
            let buffer = b.endTable()
            let name = b.string("TFLITE_METADATA")
            b.startTable()
            b.add(slot: F.metadataName, reference: name)
            b.add(slot: F.metadataBufferIndex, UInt32(oldBuffers.count))
            let entry = b.endTable()
            let metadataVector = b.vector(references: keptMetadata.map(old) + [entry])
            let buffers = b.vector(references: oldBuffers.map(old) + [buffer])
            var copied = [(Int, Int)]()
            for slot in [F.operatorCodes, F.subgraphs, F.description, F.metadataBuffer, F.signatureDefs] {
                if let target = try raw.target(slot, table: modelTable) { copied.append((slot, target)) }
            }
            var version = 0
            if let at = try raw.field(F.version, table: modelTable) { version = try raw.u32(at) }
            b.startTable()
            b.add(slot: F.version, UInt32(truncatingIfNeeded: version))
            for (slot, target) in copied { b.add(slot: slot, reference: old(target)) }
            b.add(slot: F.buffers, reference: buffers)
            b.add(slot: F.metadata, reference: metadataVector)
            root = b.endTable()
        } catch let error as MetadataWriteError {
            throw error
        } catch {
            throw .unreadableModel("the model flatbuffer points outside the file (\(error))")
        }
        let prefix = b.finish(root: root, identifier: "TFL3", alignTo: 16)
        var out = prefix + model
        // Zip offsets are 32-bit (no ZIP64 here).
        guard out.count + files.reduce(0, { $0 + $1.bytes.count + 2 * $1.name.utf8.count + 100 }) < Int(UInt32.max) else {
            throw .unreadableModel("the model is too large for a 32-bit zip archive of its associated files")
        }
        if !files.isEmpty { out += ZipWriter.storedArchive(files, at: out.count) }
        return out
    }
}

/// Writes a zip archive of stored (uncompressed) entries, as TFLite's `MetadataPopulator` packs
/// associated files after a model.
enum ZipWriter {
    /// The archive, with every offset counted from `base`: the position the archive will start
    /// at in the file it is appended to (so the whole file reads as one zip archive).
    static func storedArchive(_ files: [(name: String, bytes: [UInt8])], at base: Int) -> [UInt8] {
        var out = [UInt8]()
        func u16(_ v: Int) { out += [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        func u32(_ v: Int) { for k in 0 ..< 4 { out.append(UInt8(v >> (8 * k) & 0xFF)) } }
        var directory: [(name: [UInt8], crc: Int, size: Int, offset: Int)] = []
        for file in files {
            let name = Array(file.name.utf8)
            let crc = file.bytes.withUnsafeBufferPointer { Int(crc32(0, $0.baseAddress, uInt($0.count))) }
            directory.append((name, crc, file.bytes.count, base + out.count))
            u32(0x0403_4b50); u16(10); u16(0); u16(0)
            u16(0); u16(0x21)          // DOS time 00:00, date 1980-01-01
            u32(crc); u32(file.bytes.count); u32(file.bytes.count)
            u16(name.count); u16(0)
            out += name
            out += file.bytes
        }
        let directoryStart = out.count
        for e in directory {
            u32(0x0201_4b50); u16(20); u16(10); u16(0); u16(0)
            u16(0); u16(0x21)
            u32(e.crc); u32(e.size); u32(e.size)
            u16(e.name.count); u16(0); u16(0); u16(0); u16(0); u32(0)
            u32(e.offset)
            out += e.name
        }
        let directorySize = out.count - directoryStart
        u32(0x0605_4b50); u16(0); u16(0); u16(directory.count); u16(directory.count)
        u32(directorySize); u32(base + directoryStart); u16(0)
        return out
    }
}
