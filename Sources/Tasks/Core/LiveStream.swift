/// One live-stream result: what the task found in the frame sent at `timestampInMilliseconds`, or
/// why it failed.
public struct LiveStreamResult<Value: Sendable & Equatable>: Sendable, Equatable {
    public var result: Result<Value, TaskError>
    public var timestampInMilliseconds: Int

    public init(result: Result<Value, TaskError>, timestampInMilliseconds: Int) {
        self.result = result
        self.timestampInMilliseconds = timestampInMilliseconds
    }
}

/// Makes a result listener that feeds an `AsyncStream`, for consumers that `for await` results
/// (a `@MainActor` view model, say) instead of implementing a delegate.
///
/// Results are buffered up to `bufferingNewest`; older ones are dropped when nobody reads, as a
/// camera pipeline wants.
func liveStream<Value: Sendable & Equatable>(of _: Value.Type, bufferingNewest limit: Int)
    -> (stream: AsyncStream<LiveStreamResult<Value>>, listener: @Sendable (Result<Value, TaskError>, Int) -> Void) {
    let (stream, continuation) = AsyncStream.makeStream(of: LiveStreamResult<Value>.self, bufferingPolicy: .bufferingNewest(max(1, limit)))
    return (stream, { result, timestamp in continuation.yield(LiveStreamResult(result: result, timestampInMilliseconds: timestamp)) })
}
