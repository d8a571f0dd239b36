import Engine
import Foundation

/// How a task receives its images (MediaPipe's running modes).
public enum RunningMode: String, Sendable {
    /// Independent images: call the image method (`classify(image:)`, `detect(image:)`).
    case image
    /// Frames of a decoded video: call the video method with increasing timestamps.
    case video
    /// A live camera stream: call the async method; results arrive on a callback, and a frame that
    /// arrives while the previous one is still being processed is dropped.
    case liveStream
}

/// The model a task runs: a `.tflite` path or the model's bytes in memory (MediaPipe's
/// `BaseOptions` with `modelAssetPath` / `modelAssetBuffer`); set exactly one.
///
/// A class, as MediaPipe's: `options.baseOptions.modelAssetPath = path` changes the options'
/// own instance. A task copies it (`copy()`) when it is created, so later changes to this object
/// do not reach a task that already runs.
public final class BaseOptions {
    /// The `.tflite` file. Optional as MediaPipe's (`Bundle.main.path(forResource:ofType:)` is a
    /// `String?`); a task created with neither this nor `modelAssetBuffer` fails with
    /// `TaskError.invalidOptions`.
    public var modelAssetPath: String?
    /// The `.tflite` file's bytes (for a model downloaded or bundled as data).
    public var modelAssetBuffer: Data?
    /// Threads per operator in each call's session (`1...Session.maxThreadCount`); nil means 1.
    public var threadCount: Int?
    /// The most memory and work the model and its packed files may ask for (see `Limits`).
    public var limits = Limits.default

    public init(modelAssetPath: String? = nil, modelAssetBuffer: Data? = nil, threadCount: Int? = nil) {
        self.modelAssetPath = modelAssetPath
        self.modelAssetBuffer = modelAssetBuffer
        self.threadCount = threadCount
    }

    /// An independent instance with the same values.
    public func copy() -> BaseOptions {
        let copy = BaseOptions(modelAssetPath: modelAssetPath, modelAssetBuffer: modelAssetBuffer, threadCount: threadCount)
        copy.limits = limits
        return copy
    }

    /// The values a task reads, as one Sendable value.
    var snapshot: Snapshot {
        Snapshot(modelAssetPath: modelAssetPath, modelAssetBuffer: modelAssetBuffer, threadCount: threadCount, limits: limits)
    }

    struct Snapshot: Sendable {
        let modelAssetPath: String?
        let modelAssetBuffer: Data?
        let threadCount: Int?
        let limits: Limits
    }
}

/// One class: its index in the model's output, score, and names.
public struct Category: Sendable, Equatable, Codable {
    public var index: Int
    public var score: Float
    /// The label from the model's label file (metadata or a file you passed).
    public var categoryName: String?
    /// The label in the display-names locale, when the model has such a file.
    public var displayName: String?

    public init(index: Int, score: Float, categoryName: String?, displayName: String?) {
        self.index = index
        self.score = score
        self.categoryName = categoryName
        self.displayName = displayName
    }
}
