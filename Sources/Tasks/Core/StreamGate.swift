import Foundation
import Synchronization

/// Enforces MediaPipe's running-mode rules: the right method for the mode, strictly increasing
/// timestamps in video and live-stream modes, and (for live streams) at most one frame in flight —
/// a frame that arrives while the previous one is being processed is dropped.
final class StreamGate: Sendable {
    let mode: RunningMode
    private let state = Mutex<(lastTimestamp: Int?, busy: Bool)>((nil, false))
    /// Where live-stream frames run and their results are delivered, one at a time.
    private let queue = DispatchQueue(label: "swiftlite.live-stream")

    init(mode: RunningMode) { self.mode = mode }

    /// Throws unless `call` is the method of this gate's running mode.
    func checkMode(_ call: RunningMode, method: String) throws(TaskError) {
        guard call == mode else {
            throw .invalidArgument("\(method) is for the \(call.rawValue) running mode; this task was created in \(mode.rawValue) mode")
        }
    }

    /// Records `timestamp`, throwing if it is not later than the previous one.
    func advance(to timestamp: Int) throws(TaskError) {
        let previous: Int? = state.withLock { s in
            if let last = s.lastTimestamp, timestamp <= last { return last }
            s.lastTimestamp = timestamp
            return nil
        }
        if let previous {
            throw .invalidArgument("timestamp \(timestamp) ms is not later than the previous frame's \(previous) ms; timestamps must increase")
        }
    }

    /// Marks a frame in flight; false if one already is (the caller drops the frame).
    private func tryBegin() -> Bool {
        state.withLock { s in
            if s.busy { return false }
            s.busy = true
            return true
        }
    }

    private func end() { state.withLock { $0.busy = false } }

    /// Runs a live-stream frame's `work` on the serial queue and passes its result to `deliver` —
    /// unless a frame is still in flight, in which case this one is dropped.
    func submit<R>(_ work: @escaping @Sendable () throws(TaskError) -> R,
                   deliver: @escaping @Sendable (Result<R, TaskError>) -> Void) {
        guard tryBegin() else { return }
        queue.async { [self] in
            defer { end() }
            let result: Result<R, TaskError>
            do throws(TaskError) { result = .success(try work()) } catch { result = .failure(error) }
            deliver(result)
        }
    }
}
