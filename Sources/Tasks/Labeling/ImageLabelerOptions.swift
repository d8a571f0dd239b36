import Foundation

/// Options of an `ImageLabeler` (ML Kit's `ImageLabelerOptions` / `CustomImageLabelerOptions`).
public struct ImageLabelerOptions: Sendable {
    /// The model: a `.tflite` file, or an AutoML Vision Edge folder (see `LocalModel`).
    public var localModel: LocalModel
    /// Labels with a confidence below this are not returned (ML Kit's default is 0.5).
    public var confidenceThreshold: Float = 0.5
    /// At most this many labels (ML Kit's default is 10).
    public var maxResultCount = 10

    public init(localModel: LocalModel, confidenceThreshold: Float = 0.5) {
        self.localModel = localModel
        self.confidenceThreshold = confidenceThreshold
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
    ///   `modelFile`/`labelsFile`, or names files that do not exist.
    public init(manifestFolder folder: String) throws(TaskError) {
        let dir = URL(fileURLWithPath: folder)
        let manifestURL = dir.appendingPathComponent("manifest.json")
        guard let data = FileManager.default.contents(atPath: manifestURL.path) else {
            throw .invalidOptions("AutoML folder '\(folder)' has no readable manifest.json")
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
        modelPath = dir.appendingPathComponent(modelFile).path
        labelsPath = dir.appendingPathComponent(labelsFile).path
        for path in [modelPath, labelsPath!] where !FileManager.default.fileExists(atPath: path) {
            throw .invalidOptions("\(manifestURL.path) names '\(path)', which does not exist")
        }
    }
}

/// One label of an image (ML Kit's `ImageLabel`).
public struct ImageLabel: Sendable, Equatable, Codable {
    public var text: String
    public var confidence: Float
    public var index: Int
}
