/// One operator of the graph, in execution order.
public struct Node: Sendable {
    /// Position in the subgraph's operator list.
    public let index: Int
    /// The builtin operator (`.custom` for custom operators; see `customName`).
    public let op: BuiltinOperator
    /// The custom operator name, for `CUSTOM` operators.
    public let customName: String?
    /// The operator code's version in the file (1 when absent).
    public let version: Int
    /// Tensor indices; `-1` marks an omitted optional input.
    public let inputs: [Int]
    /// Tensor indices of the outputs, in order.
    public let outputs: [Int]
    /// The builtin options, read out of the flatbuffer (`.none` for operators without options).
    public let options: OperatorOptions
    /// Custom options (a FlexBuffer for most custom ops).
    public let customOptions: ConstantData?

    /// The name to show: the custom name for custom operators, else the builtin's schema name.
    public var opName: String { customName ?? op.name }
}
