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

    /// An image-mode call: `method` must be this mode's, `image` must not be mirrored (MediaPipe's
    /// tasks apply rotations only); then `run` at timestamp 0.
    func image<R>(_ image: MPImage, method: String, _ run: (MPImage, Int) throws(TaskError) -> R) throws(TaskError) -> R {
        try checkMode(.image, method: method)
        try Self.checkOrientation(image)
        return try run(image, 0)
    }

    /// A video-mode call: as `image`, and `timestamp` later than the previous frame's.
    func videoFrame<R>(_ image: MPImage, timestamp: Int, method: String,
                       _ run: (MPImage, Int) throws(TaskError) -> R) throws(TaskError) -> R {
        try checkMode(.video, method: method)
        try Self.checkOrientation(image)
        try advance(to: timestamp)
        return try run(image, timestamp)
    }

    /// A live-stream call: checked as a video frame from the caller's thread (errors thrown there),
    /// then `run` on the serial queue and `deliver` with its result, unless a frame is still in flight.
    func liveStreamFrame<R>(_ image: MPImage, timestamp: Int, method: String,
                            _ run: @escaping @Sendable (MPImage, Int) throws(TaskError) -> R,
                            deliver: @escaping @Sendable (Result<R, TaskError>) -> Void) throws(TaskError) {
        try checkMode(.liveStream, method: method)
        try Self.checkOrientation(image)
        try advance(to: timestamp)
        submit({ () throws(TaskError) in try run(image, timestamp) }, deliver: deliver)
    }

    /// Throws for a mirrored orientation: MediaPipe-style tasks apply rotations only.
    static func checkOrientation(_ image: MPImage) throws(TaskError) {
        if image.orientation.isMirrored {
            throw .invalidArgument("orientation .\(image.orientation) mirrors the image; MediaPipe-style tasks apply rotations only (.up, .down, .left, .right)")
        }
    }

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

extension Result where Failure == TaskError {
    /// The value and the error, exactly one of them non-nil (a live-stream delegate's arguments).
    var parts: (Success?, TaskError?) {
        switch self {
        case .success(let value): (value, nil)
        case .failure(let error): (nil, error)
        }
    }
}
