import Engine
import Foundation

/// Why a task (classifier, detector, labeler) could not be created or run.
///
/// `description` (and `localizedDescription`, through `LocalizedError`) is the one line the CLI
/// prints after `error: `. The cause stays a case: an image that cannot be made is `.image`, a
/// model that cannot be loaded is `.model`.
public enum TaskError: Error, Equatable, CustomStringConvertible, LocalizedError {
    /// Options that contradict each other or are out of range.
    case invalidOptions(String)
    /// An argument to a call is invalid (wrong running mode, old timestamp, bad region, mirrored
    /// orientation, ...).
    case invalidArgument(String)
    /// The model does not have the inputs/outputs this task needs.
    case unsupportedModel(String)
    /// Labels are missing or do not match the model.
    case invalidLabels(String)
    /// The model could not be loaded or run.
    case model(ModelError)
    /// The image could not be made (decoded, converted from a pixel buffer, ...).
    case image(ImageError)

    public var description: String {
        switch self {
        case .invalidOptions(let s): return "invalid options: \(s)"
        case .invalidArgument(let s): return s
        case .unsupportedModel(let s): return "unsupported model: \(s)"
        case .invalidLabels(let s): return "labels: \(s)"
        case .model(let e): return e.description
        case .image(let e): return e.description
        }
    }

    public var errorDescription: String? { description }
}

extension ImageError: LocalizedError {
    /// The same sentence as `description`.
    public var errorDescription: String? { description }
}
