/// MediaPipe's result options, shared by the classifier and the detector: a score threshold,
/// category allow/deny lists by name (mutually exclusive; unknown names are ignored), and a cap on
/// the number of results (−1 for all). Filtering happens before the cap.
struct ResultFilter: Sendable {
    let threshold: Float
    let allow: Set<String>
    let deny: Set<String>
    let maxResults: Int

    /// Checks the options as MediaPipe does when a task is created.
    static func validate(maxResults: Int, scoreThreshold: Float?, allowlist: [String], denylist: [String]) throws(TaskError) {
        guard allowlist.isEmpty || denylist.isEmpty else {
            throw .invalidOptions("categoryAllowlist and categoryDenylist are mutually exclusive; set at most one")
        }
        guard maxResults != 0, maxResults >= -1 else {
            throw .invalidOptions("maxResults must be -1 (all) or positive, got \(maxResults)")
        }
        if let t = scoreThreshold, !t.isFinite { throw .invalidOptions("scoreThreshold must be finite") }
    }

    /// Checks that a listener is given exactly in the live-stream mode.
    static func validate(runningMode: RunningMode, hasListener: Bool) throws(TaskError) {
        if runningMode == .liveStream, !hasListener {
            throw .invalidOptions("the liveStream running mode needs a resultListener")
        }
        if runningMode != .liveStream, hasListener {
            throw .invalidOptions("a resultListener is only used in the liveStream running mode")
        }
    }

    var usesNames: Bool { !allow.isEmpty || !deny.isEmpty }

    /// True when a category with this score and name passes the threshold and the lists.
    func accepts(score: Float, name: String?) -> Bool {
        guard score >= threshold else { return false }
        if !allow.isEmpty { return allow.contains(name ?? "") }
        if let name, deny.contains(name) { return false }
        return true
    }

    /// Keeps the first `maxResults` of already sorted results.
    func cap<T>(_ results: inout [T]) {
        if maxResults > 0, results.count > maxResults { results.removeLast(results.count - maxResults) }
    }
}
