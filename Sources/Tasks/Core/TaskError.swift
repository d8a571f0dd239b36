import Engine

/// Why a task (classifier, detector, labeler) could not be created or run.
public enum TaskError: Error, Equatable, CustomStringConvertible {
    /// Options that contradict each other or are out of range.
    case invalidOptions(String)
    /// An argument to a call is invalid (wrong running mode, old timestamp, bad region, ...).
    case invalidArgument(String)
    /// The model does not have the inputs/outputs this task needs.
    case unsupportedModel(String)
    /// Labels are missing or do not match the model.
    case invalidLabels(String)
    /// The model could not be loaded or run.
    case model(ModelError)

    public var description: String {
        switch self {
        case .invalidOptions(let s): return "invalid options: \(s)"
        case .invalidArgument(let s): return s
        case .unsupportedModel(let s): return "unsupported model: \(s)"
        case .invalidLabels(let s): return "labels: \(s)"
        case .model(let e): return e.description
        }
    }
}
