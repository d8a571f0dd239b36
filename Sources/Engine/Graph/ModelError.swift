/// Why a model could not be loaded, prepared or run.
///
/// Every case names what was wrong and where, so that a message alone is enough to find the problem.
public enum ModelError: Error, Equatable, CustomStringConvertible {
    /// The file could not be opened or mapped.
    case unreadable(path: String, reason: String)
    /// The bytes are not a well-formed TFLite flatbuffer.
    case malformed(String)
    /// A tensor's description is invalid (shape, type, buffer).
    case invalidTensor(index: Int, name: String, reason: String)
    /// The operator graph is inconsistent (indices, ordering, cycles).
    case invalidGraph(String)
    /// An operator's inputs, outputs or options break the operator's rules.
    case invalidOperator(op: String, index: Int, reason: String)
    /// The engine has no kernel for this operator (or this variant of it).
    case unsupportedOperator(op: String, index: Int, reason: String)
    /// An API call was made with bad arguments (wrong input index, wrong byte count, ...).
    case invalidArgument(String)

    /// One line naming what was wrong and where (the path, tensor or operator, and the rule).
    public var description: String {
        switch self {
        case let .unreadable(path, reason): return "cannot read model '\(path)': \(reason)"
        case let .malformed(reason): return "malformed model: \(reason)"
        case let .invalidTensor(index, name, reason): return "tensor \(index) '\(name)': \(reason)"
        case let .invalidGraph(reason): return "invalid graph: \(reason)"
        case let .invalidOperator(op, index, reason): return "operator \(index) (\(op)): \(reason)"
        case let .unsupportedOperator(op, index, reason): return "operator \(index) (\(op)) is not supported: \(reason)"
        case let .invalidArgument(reason): return reason
        }
    }
}

extension ModelError {
    /// Wraps a low-level flatbuffer problem with the place it was found.
    static func malformed(_ context: String, _ error: FlatBufferError) -> ModelError {
        .malformed("\(context): \(error)")
    }
}
