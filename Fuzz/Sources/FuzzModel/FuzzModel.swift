import Engine
import Foundation
import Tasks

/// Model bytes → Graph → metadata → Plan → Session → invoke on zero inputs: every stage either
/// throws a `ModelError`/`MetadataError` or completes. Limits are tighter than the defaults so that
/// each input costs milliseconds (the defaults are tested by HostileModelTests).
nonisolated(unsafe) private var limits: Limits = {
    var l = Limits()
    l.maxActivationBytes = 64 << 20
    l.maxMACsPerInvoke = 10_000_000
    l.maxDetections = 1000
    return l
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzModel(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Data(bytes: data, count: size)
    guard let graph = try? Graph(data: bytes) else { return 0 }
    _ = try? ModelMetadata(graph: graph)
    guard let plan = try? Plan(graph: graph, limits: limits) else { return 0 }
    let session = Session(plan: plan)
    session.invoke()
    for output in graph.outputs { _ = session.bytes(ofTensor: output).reduce(0, &+) }
    return 0
}
