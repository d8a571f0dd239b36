/// Maps operators to the functions that prepare their kernels.
/// Immutable once built (`standard` is a constant), hence safe to share.
struct OpRegistry: @unchecked Sendable {
    typealias Prepare = (inout PrepareContext) throws(ModelError) -> any Kernel

    private var builtins: [BuiltinOperator: Prepare] = [:]
    private var customs: [String: Prepare] = [:]

    mutating func register(_ op: BuiltinOperator, _ prepare: @escaping Prepare) { builtins[op] = prepare }
    mutating func register(custom name: String, _ prepare: @escaping Prepare) { customs[name] = prepare }

    func prepare(for node: Node) -> Prepare? {
        if let name = node.customName { return customs[name] }
        return builtins[node.op]
    }

    /// Every operator this engine implements.
    static let standard: OpRegistry = {
        var r = OpRegistry()
        registerStandardKernels(&r)
        return r
    }()
}
