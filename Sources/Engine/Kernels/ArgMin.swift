/// ARG_MIN: the index of the smallest element along the constant axis in input 1, as int32 or
/// int64; the first index wins a tie (a later element must be strictly smaller). Shares its
/// validation and kernel with ARG_MAX (`ArgMinMax` in `ArgMax.swift`).
enum ArgMin {
    static let input = 0, axis = 1, output = 0

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        try ArgMinMax.prepare(&context, selectsMinimum: true)
    }
}
