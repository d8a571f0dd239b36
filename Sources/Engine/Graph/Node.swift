/// One operator of the graph, in execution order.
public struct Node: Sendable {
    /// Position in the subgraph's operator list.
    public let index: Int
    public let op: BuiltinOperator
    /// The custom operator name, for `CUSTOM` operators.
    public let customName: String?
    public let version: Int
    /// Tensor indices; `-1` marks an omitted optional input.
    public let inputs: [Int]
    public let outputs: [Int]
    public let options: OperatorOptions
    /// Custom options (a FlexBuffer for most custom ops).
    public let customOptions: ConstantData?

    /// The name to show: the custom name for custom operators, else the builtin's schema name.
    public var opName: String { customName ?? op.name }
}
