import Engine
import Foundation

/// Options of an `ImageLabeler` (ML Kit's `ImageLabelerOptions`, `CustomImageLabelerOptions` and
/// `AutoMLImageLabelerOptions` in one class).
///
/// - `ImageLabelerOptions()`: the base model that ships with SwiftLite (`ImageLabeler.baseModelPath`,
///   ImageNet EfficientNet-Lite0, 1000 labels); an unset threshold is ML Kit's base default 0.5,
///   and every label at or above it is returned.
/// - `init(localModel:)` with a `.tflite` `LocalModel` or an `AutoMLImageLabelerLocalModel`, or
///   `init(remoteModel:)` with a hosted AutoML model: an unset threshold is the model metadata's,
///   else 0.0, and at most `maxResultCount` labels are returned.
///
/// A class, as ML Kit's (`let options = ImageLabelerOptions(); options.confidenceThreshold = 0.7`).
/// The labeler copies it when created.
public final class ImageLabelerOptions {
    /// Where the model comes from.
    public enum Source: Sendable, Equatable {
        /// The base model shipped with SwiftLite.
        case base
        /// A `.tflite` file or a resolved AutoML folder.
        case local(LocalModel)
        /// An AutoML folder named by the path of its `manifest.json`, read when the labeler is made.
        case autoML(manifestPath: String)
        /// A hosted AutoML model by name, read from the `ModelManager.modelManager()` cache when
        /// the labeler is made.
        case remote(name: String)
    }

    public let source: Source
    /// Labels with a confidence below this are not returned; a value in 0...1 (ML Kit's
    /// `NSNumber?`, so `options.confidenceThreshold = 0.7` and `NSNumber(value: 0.0)` both work).
    /// nil: 0.5 for the base model; the model metadata's threshold, else 0.0, for other models.
    public var confidenceThreshold: NSNumber?
    /// At most this many labels from a custom or AutoML model (ML Kit's default is 10, also used
    /// for a value that is not positive). The base model returns every label above the threshold.
    public var maxResultCount = 10
    /// The most memory and work the model and its files may ask for (see `Limits`).
    public var limits = Limits.default

    /// The base model (ML Kit's `ImageLabelerOptions()`).
    public init() {
        source = .base
    }

    /// A `.tflite` model or an AutoML folder already read (ML Kit's `CustomImageLabelerOptions(localModel:)`).
    public init(localModel: LocalModel, confidenceThreshold: Float? = nil) {
        source = .local(localModel)
        self.confidenceThreshold = confidenceThreshold.map { NSNumber(value: $0) }
    }

    /// An AutoML Vision Edge folder (ML Kit's `AutoMLImageLabelerOptions(localModel:)`); its
    /// manifest is read when the labeler is made, and a bad one is the labeler's error.
    public init(localModel: AutoMLImageLabelerLocalModel) {
        source = .autoML(manifestPath: localModel.manifestPath)
    }

    /// A hosted AutoML model (ML Kit's `AutoMLImageLabelerOptions(remoteModel:)`); the labeler
    /// uses the copy `ModelManager.modelManager()` downloaded, and reports an error when there is none.
    public init(remoteModel: AutoMLImageLabelerRemoteModel) {
        source = .remote(name: remoteModel.name)
    }

    private init(source: Source) {
        self.source = source
    }

    /// An independent instance with the same values.
    public func copy() -> ImageLabelerOptions {
        let copy = ImageLabelerOptions(source: source)
        copy.confidenceThreshold = confidenceThreshold
        copy.maxResultCount = maxResultCount
        copy.limits = limits
        return copy
    }
}

/// ML Kit's name for the options of a labeler with a custom model.
public typealias CustomImageLabelerOptions = ImageLabelerOptions
/// ML Kit's name for the options of a labeler with an AutoML Vision Edge model.
public typealias AutoMLImageLabelerOptions = ImageLabelerOptions

/// An AutoML Vision Edge model by the path of its `manifest.json` (ML Kit's
/// `AutoMLImageLabelerLocalModel(manifestPath:)`). Creating one never fails, as in ML Kit: the
/// manifest is read when a labeler is made from it, and a missing or bad one is the error that
/// labeler reports (`results(in:)` throws it, `process` passes it to the completion).
public final class AutoMLImageLabelerLocalModel: Sendable {
    public let manifestPath: String

    public init(manifestPath: String) {
        self.manifestPath = manifestPath
    }

    /// The model and label files the manifest names (see `LocalModel.init(manifestPath:)`).
    public func resolved() throws(TaskError) -> LocalModel {
        try LocalModel(manifestPath: manifestPath)
    }
}

/// A model on disk, as ML Kit's `LocalModel`: a `.tflite` path, or an AutoML Vision Edge export
/// folder whose `manifest.json` names the model and label files.
public struct LocalModel: Sendable, Equatable {
    public let modelPath: String
    /// The label file named by an AutoML manifest (`dict.txt`), if any.
    public let labelsPath: String?

    /// A plain `.tflite` model (labels from its metadata).
    public init(path: String) {
        modelPath = path
        labelsPath = nil
    }

    /// An AutoML Vision Edge folder: reads `manifest.json`
    /// (`{"modelFile": "model.tflite", "labelsFile": "dict.txt", "modelType": "IMAGE_LABELING"}`).
    /// - Throws: `TaskError.invalidOptions` when the manifest is missing, is not JSON, lacks
    ///   `modelFile`/`labelsFile`, or names a file that is not inside the folder (see
    ///   `init(manifestPath:)`).
    public init(manifestFolder folder: String) throws(TaskError) {
        try self.init(manifestPath: URL(fileURLWithPath: folder).appendingPathComponent("manifest.json").path)
    }

    /// An AutoML Vision Edge export by the path of its `manifest.json` (ML Kit's
    /// `AutoMLImageLabelerLocalModel(manifestPath:)`).
    ///
    /// The manifest names its model and label files relative to its own folder. A name that is
    /// absolute, contains `..`, or resolves (through symbolic links) outside that folder is refused
    /// with the same message as a missing file, so a manifest cannot read, or probe for, files
    /// elsewhere on the machine.
    /// - Throws: `TaskError.invalidOptions` naming the manifest and the field.
    public init(manifestPath: String) throws(TaskError) {
        let manifestURL = URL(fileURLWithPath: manifestPath)
        // A manifest is a few lines of JSON; 1 MiB is generous.
        guard let data = try? SmallFile.read(manifestURL.path, limit: 1 << 20) else {
            throw .invalidOptions("AutoML manifest '\(manifestPath)' is not readable or larger than 1 MiB")
        }
        guard let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw .invalidOptions("\(manifestURL.path) is not a JSON object")
        }
        guard let modelFile = json["modelFile"] as? String, !modelFile.isEmpty else {
            throw .invalidOptions("\(manifestURL.path) has no \"modelFile\" string")
        }
        guard let labelsFile = json["labelsFile"] as? String, !labelsFile.isEmpty else {
            throw .invalidOptions("\(manifestURL.path) has no \"labelsFile\" string")
        }
        if let type = json["modelType"] as? String, type != "IMAGE_LABELING" {
            throw .invalidOptions("\(manifestURL.path) has modelType \"\(type)\", expected \"IMAGE_LABELING\"")
        }
        let folder = manifestURL.deletingLastPathComponent().path
        modelPath = try Self.file(modelFile, field: "modelFile", inside: folder, manifest: manifestURL.path)
        labelsPath = try Self.file(labelsFile, field: "labelsFile", inside: folder, manifest: manifestURL.path)
    }

    /// The real path of `name` when it is a regular file inside `folder`; otherwise one error for
    /// every reason (absent, absolute, `..`, a link out), which therefore reveals nothing outside.
    private static func file(_ name: String, field: String, inside folder: String, manifest: String) throws(TaskError) -> String {
        let refusal = TaskError.invalidOptions("\(manifest): \"\(field)\" '\(name)' is not a file inside the manifest's folder")
        let components = name.split(separator: "/", omittingEmptySubsequences: false)
        guard !name.hasPrefix("/"), !name.contains("\0"), !components.contains("..") else { throw refusal }
        guard let root = realPath(folder), let resolved = realPath(folder + "/" + name),
              resolved.hasPrefix(root.hasSuffix("/") ? root : root + "/") else { throw refusal }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: resolved, isDirectory: &isDirectory), !isDirectory.boolValue else { throw refusal }
        return resolved
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}

/// One label of an image (ML Kit's `ImageLabel`).
public struct ImageLabel: Sendable, Equatable, Codable {
    public var text: String
    public var confidence: Float
    public var index: Int

    public init(text: String, confidence: Float, index: Int) {
        self.text = text
        self.confidence = confidence
        self.index = index
    }
}
