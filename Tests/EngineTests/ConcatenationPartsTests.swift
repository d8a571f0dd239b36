import XCTest

@testable import Engine

/// The re-scaling uint8 concatenation computed in ranges of output elements on several threads
/// (ranges that start and end inside chunks, empty chunks, several outer slices) writes the bytes
/// of the definition: each slice the inputs' chunks in turn, re-scaled inputs through their tables.
final class ConcatenationPartsTests: XCTestCase {
    func testPartsOnThreadsWriteTheWholeConcatenation() {
        let outer = 3, chunks = [5, 0, 70, 130, 1]
        let inputs: [[UInt8]] = chunks.enumerated().map { i, n in (0 ..< outer * n).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ i) } }
        let halve = PackedBuffer((0 ... 255).map { UInt8($0 / 2) }), invert = PackedBuffer((0 ... 255).map { UInt8(255 - $0) })
        let tables: [PackedBuffer<UInt8>?] = [halve, nil, nil, invert, halve]
        let kernel = ConcatenationUInt8Rescaling(inputs: Array(0 ..< chunks.count), output: chunks.count, outerCount: outer,
                                                  chunkSizes: chunks, tables: tables)
        var expected = [UInt8]()
        for o in 0 ..< outer {
            for (i, n) in chunks.enumerated() {
                for j in 0 ..< n {
                    let x = inputs[i][o * n + j]
                    expected.append(tables[i].map { $0.pointer[Int(x)] } ?? x)
                }
            }
        }
        for threads in [1, 3] {
            let pool = WorkerPool(threadCount: threads, minimumWork: 0)
            defer { pool.shutdown() }
            var output = [UInt8](repeating: 0xEE, count: expected.count + 1)  // one guard byte
            let sources = inputs.map { bytes -> UnsafeMutableRawPointer in
                let p = UnsafeMutableRawPointer.allocate(byteCount: max(bytes.count, 1), alignment: 64)
                if !bytes.isEmpty { bytes.withUnsafeBytes { p.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) } }
                return p
            }
            defer { sources.forEach { $0.deallocate() } }
            output.withUnsafeMutableBytes { y in
                let addresses = sources + [y.baseAddress!]
                addresses.withUnsafeBufferPointer { pointers in
                    let scratch = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 64)
                    defer { scratch.deallocate() }
                    kernel.eval(TensorMemory(addresses: pointers.baseAddress!, scratch: scratch, workerScratch: scratch,
                                             workerScratchStride: 0, pool: pool))
                }
            }
            XCTAssertEqual(Array(output.prefix(expected.count)), expected, "\(threads) threads")
            XCTAssertEqual(output.last, 0xEE, "wrote past the output")
        }
    }
}
