/// MINIMUM: `output = lhs < rhs ? lhs : rhs` elementwise with numpy broadcasting (TFLite's
/// reference expression). Shares its validation and kernel with MAXIMUM (`Selection` in
/// `Maximum.swift`).
enum Minimum {
    static let lhs = 0, rhs = 1, output = 0

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        try Selection.prepare(&context, selectsMinimum: true)
    }
}
