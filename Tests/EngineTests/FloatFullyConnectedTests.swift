import XCTest
@testable import Engine
import TestSupport

/// Float FULLY_CONNECTED (`FullyConnectedFloat32`: `FloatGEMV` for one batch, `FloatGEMM` for
/// several, a dot product per output for weights computed at run time) against a plain scalar
/// reference in double precision, over batch, unit and depth counts below, at and past the block
/// widths; every thread count writes the same bytes; the GEMV equals FloatGEMM's row bit for bit.
final class FloatFullyConnectedTests: XCTestCase {
    /// Weights and bias as constants (packed at prepare) or as tensors filled at run time.
    private enum WeightSource: CaseIterable { case constant, runTime }

    /// One FULLY_CONNECTED prepared by the engine and run on a pool of `threads` threads that
    /// cuts even the smallest layer into parts; returns the output and the packed input slots.
    private func run(input: [Float], shape: [Int], weights: [Float], units: Int, depth: Int, bias: [Float]?,
                     activation: FusedActivation, source: WeightSource, keepNumDims: Bool = false,
                     threads: Int) throws -> (output: [Float], outputShape: [Int], packed: Set<Int>) {
        var storage = [UnsafeMutableRawPointer]()
        defer { storage.forEach { $0.deallocate() } }
        func memory(_ values: [Float], count: Int) -> UnsafeMutableRawPointer {
            let bytes = max(count, 1) * MemoryLayout<Float>.stride
            let p = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 64)
            p.initializeMemory(as: UInt8.self, repeating: 0xEE, count: bytes)
            values.withUnsafeBytes { p.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            storage.append(p)
            return p
        }
        var operands: [(shape: [Int], values: [Float], constant: Bool)] = [(shape, input, false),
                                                                            ([units, depth], weights, source == .constant)]
        if let bias { operands.append(([units], bias, source == .constant)) }
        var tensors = [TensorDescriptor](), addresses = [UnsafeMutableRawPointer]()
        for (i, operand) in operands.enumerated() {
            let p = memory(operand.values, count: operand.values.count)
            addresses.append(p)
            let constant = operand.constant
                ? ConstantData(bytes: UnsafeRawBufferPointer(start: p, count: operand.values.count * MemoryLayout<Float>.stride)) : nil
            tensors.append(TensorDescriptor(index: i, name: "t\(i)", dataType: .float32, shape: operand.shape, shapeSignature: nil,
                                            quantization: nil, isVariable: false, constantData: constant))
        }
        let outputIndex = operands.count
        tensors.append(TensorDescriptor(index: outputIndex, name: "out", dataType: .float32, shape: [1], shapeSignature: nil,
                                        quantization: nil, isVariable: false, constantData: nil))
        let options = FullyConnectedOptions(activation: activation, weightsFormat: 0, keepNumDims: keepNumDims)
        let node = Node(index: 0, op: .fullyConnected, customName: nil, version: 1, inputs: Array(0 ..< operands.count),
                        outputs: [outputIndex], options: .fullyConnected(options), customOptions: nil)
        var context = PrepareContext(node: node, tensors: tensors)
        let kernel = try FullyConnected.prepare(&context)
        XCTAssertTrue(kernel is FullyConnectedFloat32, "\(type(of: kernel))")
        let outputShape = context.tensors[outputIndex].shape
        let count = outputShape.reduce(1, *)
        addresses.append(memory([], count: count))
        let scratch = memory([], count: context.scratchBytes / 4 + 16)
        let stride = (context.workerScratchBytes + 63) / 64 * 64
        let workerScratch = memory([], count: threads * stride / 4 + 16)
        let pool = WorkerPool(threadCount: threads, minimumWork: 0)
        defer { pool.shutdown() }
        addresses.withUnsafeBufferPointer {
            kernel.eval(TensorMemory(addresses: $0.baseAddress!, scratch: scratch, workerScratch: workerScratch,
                                     workerScratchStride: stride, pool: pool))
        }
        let output = Array(UnsafeBufferPointer(start: addresses[outputIndex].assumingMemoryBound(to: Float.self), count: count))
        return (output, outputShape, context.packedSlots)
    }

    /// `Σ x·w + bias` per output in double precision, and the sum of the magnitudes behind it.
    private func reference(_ x: [Float], _ w: [Float], _ bias: [Float]?, batches: Int, units: Int, depth: Int)
        -> (values: [Double], scale: [Float]) {
        var values = [Double](repeating: 0, count: batches * units), scale = [Float](repeating: 0, count: batches * units)
        x.withUnsafeBufferPointer { x in
            w.withUnsafeBufferPointer { w in
                for b in 0 ..< batches {
                    for u in 0 ..< units {
                        var sum = Double(bias?[u] ?? 0), magnitude = Double(abs(bias?[u] ?? 0))
                        for d in 0 ..< depth {
                            let product = Double(x[b * depth + d]) * Double(w[u * depth + d])
                            sum += product
                            magnitude += abs(product)
                        }
                        values[b * units + u] = sum
                        scale[b * units + u] = Float(magnitude)
                    }
                }
            }
        }
        return (values, scale)
    }

    private func activated(_ values: [Double], _ activation: FusedActivation) -> [Float] {
        values.map { v in
            switch activation {
            case .relu: Float(max(v, 0))
            case .relu6: Float(min(max(v, 0), 6))
            default: Float(v)
            }
        }
    }

    /// Every batch, unit and depth count of the grid, with and without bias, for each activation
    /// and weight source, matches the reference; 2 and 3 threads write the bytes of 1.
    func testMatchesReferenceOnEveryThreadCount() throws {
        var values = SeededFloats(state: 77)
        for batches in [1, 2, 7, 9] {
            for units in [1, 7, 8, 16, 17, 33, 100, 1000] {
                for depth in [1, 5, 16, 1280] {
                    let x = values.array(batches * depth), w = values.array(units * depth), b = values.array(units)
                    for bias in [b, nil] {
                        let expected = reference(x, w, bias, batches: batches, units: units, depth: depth)
                        for activation in [FusedActivation.none, .relu, .relu6] {
                            for source in WeightSource.allCases {
                                let what = "\(batches)×\(depth) → \(units) bias \(bias != nil) \(activation) \(source)"
                                let one = try run(input: x, shape: [batches, depth], weights: w, units: units, depth: depth, bias: bias,
                                                  activation: activation, source: source, threads: 1)
                                XCTAssertEqual(one.outputShape, [batches, units], what)
                                assertClose(one.output, activated(expected.values, activation), scale: expected.scale, what)
                                for threads in [2, 3] {
                                    let many = try run(input: x, shape: [batches, depth], weights: w, units: units, depth: depth, bias: bias,
                                                       activation: activation, source: source, threads: threads)
                                    XCTAssertEqual(many.output.map(\.bitPattern), one.output.map(\.bitPattern), "\(what) on \(threads) threads")
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// Constant weights and bias are packed (the file's pages need not stay resident); run-time
    /// ones are read in place. keep_num_dims keeps the leading dimensions.
    func testPackingAndKeepNumDims() throws {
        var values = SeededFloats(state: 5)
        let x = values.array(2 * 3 * 20), w = values.array(40 * 20), b = values.array(40)
        let packed = try run(input: x, shape: [2, 3, 20], weights: w, units: 40, depth: 20, bias: b,
                             activation: .none, source: .constant, keepNumDims: true, threads: 2)
        XCTAssertEqual(packed.packed, [FullyConnected.weights, FullyConnected.bias])
        XCTAssertEqual(packed.outputShape, [2, 3, 40])
        let runTime = try run(input: x, shape: [2, 3, 20], weights: w, units: 40, depth: 20, bias: b,
                              activation: .none, source: .runTime, keepNumDims: true, threads: 2)
        XCTAssertEqual(runTime.packed, [])
        let expected = reference(x, w, b, batches: 6, units: 40, depth: 20)
        assertClose(packed.output, activated(expected.values, .none), scale: expected.scale, "packed")
        assertClose(runTime.output, activated(expected.values, .none), scale: expected.scale, "run time")
    }

    /// The GEMV writes exactly FloatGEMM's tile bytes for the same row (computed as the first of
    /// two, since `multiply` hands a single row to the GEMV), whole and in column parts, and writes
    /// nothing outside the columns it is given.
    func testGEMVEqualsGEMMRowBitForBit() {
        var values = SeededFloats(state: 9)
        for n in [1, 8, 9, 20, 24, 25, 31, 33, 40, 56, 64, 100, 129, 1000] {
            for k in [1, 3, 64, 300] {
                let x = values.array(k), w = values.array(n * k), bias = values.array(n)
                let packed = w.withUnsafeBufferPointer { w in
                    bias.withUnsafeBufferPointer { FloatGEMM.PackedWeights(weights: w, bias: $0, n: n, k: k) }
                }
                var rows = [Float](repeating: 0, count: 2 * n), gemv = [Float](repeating: .nan, count: n)
                FloatGEMM.multiply(m: 2, a: x + x, lda: k, weights: packed, range: -0.75 ... 0.75, c: &rows, ldc: n)
                let gemm = Array(rows[0 ..< n])
                FloatGEMV.multiply(x: x, weights: packed, range: -0.75 ... 0.75, y: &gemv)
                XCTAssertEqual(gemv.map(\.bitPattern), gemm.map(\.bitPattern), "n \(n) k \(k)")
                for parts in [2, 3, 8] {
                    let split = WorkPartition(count: n, granularity: FloatGEMM.columnGranularity, maxParts: parts)
                    var tiled = [Float](repeating: .nan, count: n)
                    for p in (0 ..< split.parts).reversed() {
                        let columns = split.range(p)
                        var part = [Float](repeating: .nan, count: n)
                        FloatGEMV.multiply(x: x, weights: packed, columns: columns, range: -0.75 ... 0.75, y: &part)
                        XCTAssertTrue(part.indices.filter { !columns.contains($0) }.allSatisfy { part[$0].isNaN }, "n \(n) part \(columns)")
                        for j in columns { tiled[j] = part[j] }
                    }
                    XCTAssertEqual(tiled.map(\.bitPattern), gemm.map(\.bitPattern), "n \(n) k \(k) in \(split.parts) parts")
                }
            }
        }
    }
}
