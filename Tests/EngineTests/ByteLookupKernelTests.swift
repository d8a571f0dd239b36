import XCTest

@testable import Engine
import TestSupport

/// The byte look-up kernel: tables that only add a constant are applied as that addition, every
/// other table entry by entry, in parts on several threads, the same bytes either way.
final class ByteLookupKernelTests: XCTestCase {
    func testEveryTableGivesItsEntriesOnOneAndThreeThreads() {
        var rng = KernelTestRandom(seed: 5)
        let count = 1000  // not a multiple of a part's 64 bytes
        let input = (0 ..< count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
        let random = (0 ..< 256).map { _ in UInt8.random(in: 0 ... 255, using: &rng) }
        let kernels: [(String, ByteLookupKernel, (UInt8) -> UInt8)] = [
            ("uint8 to int8", ByteLookupKernel(UInt8.self, count: count, input: 0, output: 1) { $0 - 128 }, { $0 ^ 0x80 }),
            ("int8 to uint8", ByteLookupKernel(Int8.self, count: count, input: 0, output: 1) { $0 + 128 }, { $0 ^ 0x80 }),
            ("identity", ByteLookupKernel(table: (0 ... 255).map { UInt8($0) }, count: count, input: 0, output: 1), { $0 }),
            ("clamped shift", ByteLookupKernel(UInt8.self, count: count, input: 0, output: 1) { min($0 + 3, 255) },
             { UInt8(min(Int($0) + 3, 255)) }),
            ("random", ByteLookupKernel(table: random, count: count, input: 0, output: 1), { random[Int($0)] }),
        ]
        XCTAssertNotNil(kernels[0].1.offset)
        XCTAssertNotNil(kernels[1].1.offset)
        XCTAssertEqual(kernels[2].1.offset, 0)
        XCTAssertNil(kernels[3].1.offset, "a clamped table is not an addition")
        XCTAssertNil(kernels[4].1.offset)
        for threads in [1, 3] {
            let pool = WorkerPool(threadCount: threads, minimumWork: 0)
            defer { pool.shutdown() }
            for (name, kernel, expected) in kernels {
                var output = [UInt8](repeating: 0xEE, count: count + 1)  // one guard byte
                input.withUnsafeBytes { x in
                    output.withUnsafeMutableBytes { y in
                        let addresses = [UnsafeMutableRawPointer(mutating: x.baseAddress!), y.baseAddress!]
                        addresses.withUnsafeBufferPointer { pointers in
                            let scratch = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 64)
                            defer { scratch.deallocate() }
                            kernel.eval(TensorMemory(addresses: pointers.baseAddress!, scratch: scratch, workerScratch: scratch,
                                                     workerScratchStride: 0, pool: pool))
                        }
                    }
                }
                XCTAssertEqual(Array(output.prefix(count)), input.map(expected), "\(name) on \(threads) threads")
                XCTAssertEqual(output.last, 0xEE, "\(name) wrote past the last element")
            }
        }
    }

    /// Every form of look-up this machine runs gives each byte its table entry: runs of 0 to 200
    /// bytes (the vector steps' tails and several steps) from unaligned starts, a random table,
    /// into a separate buffer with guard bytes around it and in place.
    func testEveryLookupFormGivesTheTableEntries() {
        var rng = KernelTestRandom(seed: 11)
        let table = (0 ..< 256).map { _ in UInt8.random(in: 0 ... 255, using: &rng) }
        let source = (0 ..< 260).map { _ in UInt8.random(in: 0 ... 255, using: &rng) }
        let forms = ByteLookup.allCases.filter(\.runsHere)
        XCTAssertTrue(forms.contains(ByteLookup.fastest))
        #if arch(x86_64)
        XCTAssertTrue(forms.contains(.avx2), "every x86-64 machine this project runs on has AVX2")
        #endif
        for form in forms {
            for count in 0 ... 200 {
                for start in [0, 1, 3] {
                    let x = Array(source[start ..< start + count])
                    let expected = x.map { table[Int($0)] }
                    var y = [UInt8](repeating: 0xEE, count: count + 2)
                    table.withUnsafeBufferPointer { t in
                        x.withUnsafeBufferPointer { xs in
                            y.withUnsafeMutableBufferPointer { ys in
                                form.apply(t.baseAddress!, xs.baseAddress ?? t.baseAddress!, ys.baseAddress! + 1, count: count)
                            }
                        }
                    }
                    XCTAssertEqual(Array(y[1 ..< count + 1]), expected, "\(form), \(count) bytes from \(start)")
                    XCTAssertEqual([y[0], y[count + 1]], [0xEE, 0xEE], "\(form) wrote outside \(count) bytes")
                    var inPlace = x
                    table.withUnsafeBufferPointer { t in
                        inPlace.withUnsafeMutableBufferPointer { b in
                            if let p = b.baseAddress { form.apply(t.baseAddress!, p, p, count: count) }
                        }
                    }
                    XCTAssertEqual(inPlace, expected, "\(form) in place, \(count) bytes")
                }
            }
        }
    }
}

/// 8-bit ADD, SUB and MUL of a one-element constant become tables of the other operand, and a
/// run of table operators (the converter's QUANTIZE around them) one table: the plan that does
/// both writes the unfused plan's bytes, and a run stopped inside the chain writes the output of
/// the operator it stopped after.
final class ByteTableChainTests: XCTestCase {
    /// An 8-bit convolution and the table operators after it (hard-swish; a swish's LOGISTIC and
    /// MUL), fused: the table applied to each part of the convolution's output as it is
    /// computed. The same bytes as the unfused plan at 1–3 threads and at every stop; the
    /// goldens (LiteRT's reference kernels, `QuantizedOpGoldenTests`) check the fused plan's
    /// outputs as well.
    func testConvolutionsApplyTheTableAfterThem() throws {
        let root = Fixtures.directory("EngineTests").appendingPathComponent("quant_ops")
        for base in ["conv_swish_1x9x11x5_k3s1_c40", "conv_hard_swish_1x8x8x24_k1s1_c72", "dwconv_swish_1x10x9x48_k3s2",
                     "dwconv_hard_swish_1x7x12x20_k5s1"] {
            for variant in ["int8", "uint8io"] {
                let name = "\(base)_\(variant)"
                let graph = try Graph(contentsOf: root.appendingPathComponent("\(name)/model.tflite").path)
                let fused = try Plan(graph: graph), unfused = try Plan(graph: graph, preserveAllTensors: true)
                let convolution = try XCTUnwrap(fused.steps.first { ["CONV_2D", "DEPTHWISE_CONV_2D"].contains($0.node.opName) }, name)
                // The activation, then (uint8 output) the converter's QUANTIZE, composed with it.
                let activation = base.contains("hard") ? ["HARD_SWISH"] : ["LOGISTIC", "MUL"]
                XCTAssertEqual(Array(convolution.fused.map(\.node.opName).prefix(activation.count)), activation, name)
                #if SWIFTLITE_AVX2
                let table = (convolution.kernel as? Conv2DQuantized)?.outputTable ?? (convolution.kernel as? DepthwiseConv2DTapRows)?.outputTable
                XCTAssertNotNil(table, "\(name): the activation's table in the convolution")
                #endif
                let inputCount = unfused.tensors[graph.inputs[0]].byteCount
                let input = (0 ..< inputCount).map { UInt8(truncatingIfNeeded: $0 &* 97 &+ 11) }
                let reference = try Session(plan: unfused, threadCount: 1)
                try input.withUnsafeBytes { try reference.copy($0, toTensor: graph.inputs[0]) }
                reference.invoke()
                let stops: [Int?] = [nil] + (0 ..< graph.nodes.count).map { $0 }
                for threads in [1, 2, 3] {
                    for stop in stops {
                        let session = try Session(plan: fused, threadCount: threads)
                        try input.withUnsafeBytes { try session.copy($0, toTensor: graph.inputs[0]) }
                        session.invoke(stopAfter: stop)
                        let written = stop.map { graph.nodes[$0].outputs[0] } ?? graph.outputs[0]
                        XCTAssertEqual(Array(session.bytes(ofTensor: written)), Array(reference.bytes(ofTensor: written)),
                                       "\(name), \(threads) threads, stopped after \(stop.map(String.init) ?? "the end")")
                    }
                }
            }
        }
    }

    func testConstantOperandTablesAndTheirChainMatchTheUnfusedPlan() throws {
        let root = Fixtures.directory("EngineTests").appendingPathComponent("quant_ops")
        for name in ["mul_scalar_const_1x16x16x3_relu6_uint8io", "sub_scalar_const_first_1x16x16x3_relu_uint8io"] {
            let graph = try Graph(contentsOf: root.appendingPathComponent("\(name)/model.tflite").path)
            let fused = try Plan(graph: graph), unfused = try Plan(graph: graph, preserveAllTensors: true)
            XCTAssertEqual(fused.fusedOperators, [1, 2], "\(name): QUANTIZE, the operator and QUANTIZE as one table")
            XCTAssertTrue(fused.steps[0].kernel is ByteLookupKernel, name)
            XCTAssertTrue(unfused.steps[1].kernel is ByteLookupKernel, "\(name): the constant operand's table")
            // Every byte, three times over, in an order that is not the bytes' own.
            let input = (0 ..< 768).map { UInt8(truncatingIfNeeded: $0 &* 77 &+ 5) }
            let reference = try Session(plan: unfused, threadCount: 1)
            try input.withUnsafeBytes { try reference.copy($0, toTensor: graph.inputs[0]) }
            reference.invoke()
            for stop in [nil, 0, 1] as [Int?] {
                let session = try Session(plan: fused, threadCount: 2)
                try input.withUnsafeBytes { try session.copy($0, toTensor: graph.inputs[0]) }
                session.invoke(stopAfter: stop)
                let written = stop.map { graph.nodes[$0].outputs[0] } ?? graph.outputs[0]
                XCTAssertEqual(Array(session.bytes(ofTensor: written)), Array(reference.bytes(ofTensor: written)),
                               "\(name) stopped after \(stop.map(String.init) ?? "the end")")
            }
        }
    }
}
