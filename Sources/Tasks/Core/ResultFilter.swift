/// MediaPipe's result options, shared by the classifier and the detector: a score threshold,
/// category allow/deny lists by name (mutually exclusive), and a cap on the number of results
/// (any negative value for all). Filtering happens before the cap.
///
/// Names become class indices once, as MediaPipe's `GetAllowOrDenyCategoryIndicesIfAny`
/// (`mediapipe/tasks/cc/components/processors/classification_postprocessing_graph.cc`) does: each
/// name maps to the first index whose label is that name (a later duplicate label is never
/// matched), unknown names are skipped, and when no name is known the list does not filter at all.
struct ResultFilter: Sendable {
    let threshold: Float
    /// The only indices kept, when an allowlist named at least one known label.
    let allowed: Set<Int>?
    /// Indices never kept.
    let denied: Set<Int>
    let maxResults: Int

    init(threshold: Float, allowlist: [String], denylist: [String], labels: Labels?, maxResults: Int) {
        self.threshold = threshold
        self.maxResults = maxResults
        func indices(_ names: [String]) -> Set<Int> {
            guard let labels else { return [] }
            var first = [String: Int]()
            for (i, name) in labels.names.enumerated() where first[name] == nil { first[name] = i }
            return Set(names.compactMap { first[$0] })
        }
        let allowed = indices(allowlist)
        self.allowed = allowed.isEmpty ? nil : allowed
        denied = indices(denylist)
    }

    /// Checks the options as MediaPipe does when a task is created (`SanityCheckClassifierOptions`).
    static func validate(maxResults: Int, scoreThreshold: Float?, allowlist: [String], denylist: [String]) throws(TaskError) {
        guard allowlist.isEmpty || denylist.isEmpty else {
            throw .invalidOptions("categoryAllowlist and categoryDenylist are mutually exclusive; set at most one")
        }
        guard maxResults != 0 else {
            throw .invalidOptions("maxResults must be != 0 (a negative value returns all results)")
        }
        if let t = scoreThreshold, !t.isFinite { throw .invalidOptions("scoreThreshold must be finite") }
    }

    /// Checks that a result receiver is given exactly in the live-stream mode.
    static func validate(runningMode: RunningMode, hasListener: Bool) throws(TaskError) {
        if runningMode == .liveStream, !hasListener {
            throw .invalidOptions("the liveStream running mode needs a live-stream delegate or a resultListener")
        }
        if runningMode != .liveStream, hasListener {
            throw .invalidOptions("a live-stream delegate or resultListener is only used in the liveStream running mode")
        }
    }

    /// True when a category with this score and class index passes the threshold and the lists.
    func accepts(score: Float, index: Int) -> Bool {
        guard score >= threshold else { return false }
        if let allowed { return allowed.contains(index) }
        return !denied.contains(index)
    }

    /// Keeps the first `maxResults` of already sorted results (all of them when it is negative).
    func cap<T>(_ results: inout [T]) {
        if maxResults > 0, results.count > maxResults { results.removeLast(results.count - maxResults) }
    }
}
