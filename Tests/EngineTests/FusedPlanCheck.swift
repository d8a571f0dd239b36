import XCTest
@testable import Engine
import TestSupport

/// Checks a plan that fuses operators (`plan`, of `graph`, from the model file `name`) against the unfused plan
/// (`preserveAllTensors` fuses nothing) on seeded inputs:
///
/// - where `checksReuse`, a tensor between fused operators, written only by a run that stops
///   there, shares its bytes with tensors written after the fused step (the arena does not keep
///   them for it) — true of MobileNet-like networks, whose later tensors are as large, but left
///   to the placement order elsewhere;
/// - at 1, 2 and 3 threads, two invocations in a row give the unfused plan's output bytes;
/// - a run that stops before a fused operator writes the output of the one before as the unfused
///   plan does (every such stop on one thread, the first `stops` on more).
///
/// Operators folded at prepare, whose outputs are constants, may lie among fused ones; their
/// outputs are not checked.
func assertFusedPlanMatchesUnfused(_ graph: Graph, plan fused: Plan, name: String, stops: Int = 4, checksReuse: Bool = true,
                                   file: StaticString = #filePath, line: UInt = #line) throws {
    let unfused = try Plan(graph: graph, preserveAllTensors: true)
    XCTAssertTrue(unfused.fusedOperators.isEmpty, file: file, line: line)
    func differences(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        guard a.count == b.count else { return max(a.count, b.count) }
        return zip(a, b).filter { $0 != $1 }.count
    }
    // Operators before a fused one whose output lives in the arena.
    let between = Set(fused.fusedOperators.map { $0 - 1 }).filter { !fused.tensors[graph.nodes[$0].outputs[0]].isConstant }
    let fusedSet = Set(fused.fusedOperators)
    for stop in between.sorted() where checksReuse {
        var runEnd = stop + 1
        while fusedSet.contains(runEnd + 1) { runEnd += 1 }
        let t = graph.nodes[stop].outputs[0]
        let offset = try XCTUnwrap(fused.arenaOffsets[t], file: file, line: line)
        let bytes = offset ..< offset + fused.tensors[t].byteCount
        let reused = graph.nodes[(runEnd + 1)...].contains { node in
            node.outputs.contains { u in fused.arenaOffsets[u].map { bytes.overlaps($0 ..< $0 + fused.tensors[u].byteCount) } ?? false }
        }
        XCTAssertTrue(reused, "\(name): tensor \(t) between fused operators keeps its bytes to itself", file: file, line: line)
    }
    let reference = try Session(plan: unfused, threadCount: 1)
    var values = SeededFloats(state: 5)
    for t in graph.inputs {
        let input = values.array(unfused.tensors[t].elementCount)
        try input.withUnsafeBytes { try reference.copy($0, toTensor: t) }
    }
    reference.invoke()
    for threads in [1, 2, 3] {
        let session = try Session(plan: fused, threadCount: threads)
        // Twice: a worker's state from the first run (a fused kernel's ring of rows) must not
        // carry into the second.
        for _ in 0 ..< 2 {
            for t in graph.inputs { try session.copy(reference.bytes(ofTensor: t), toTensor: t) }
            session.invoke()
        }
        for t in graph.outputs {
            XCTAssertEqual(differences(session.bytes(ofTensor: t), reference.bytes(ofTensor: t)), 0,
                           "\(name) output \(t), \(threads) threads: bytes that differ", file: file, line: line)
        }
        // The inputs again before each stop: their memory is reused once read.
        for stop in between.sorted().prefix(threads == 1 ? Int.max : stops) {
            let written = graph.nodes[stop].outputs[0]
            for t in graph.inputs { try session.copy(reference.bytes(ofTensor: t), toTensor: t) }
            session.invoke(stopAfter: stop)
            XCTAssertEqual(differences(session.bytes(ofTensor: written), reference.bytes(ofTensor: written)), 0,
                           "\(name) stopped after operator \(stop), \(threads) threads: bytes that differ", file: file, line: line)
        }
    }
}
