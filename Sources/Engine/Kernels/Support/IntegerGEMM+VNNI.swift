// `IntegerGEMM`'s `.avx512vnni` layout runs the kernels of Microkernels/VNNIProduct.swift, a
// module compiled for AVX-512 VNNI (whatever this module's target, see Package.swift). They
// store through the stages they have a `store` of their own for (`IntegerGEMMOutput.vnniStage`);
// any other stage gets their results through a block of accumulators on the stack.
import Microkernels

extension IntegerGEMM {
    #if SWIFTLITE_AVX512VNNI || SWIFTLITE_RUN_TIME_TIERS
    /// The packed panels as the `.avx512vnni` kernels read them.
    private var vnniProduct: VNNIProduct {
        vnniProduct(panels: 0 ..< panelCount)
    }

    /// Rows per block of the `.avx512vnni` kernels' row sums (tests make products taller).
    static var rowBlock: Int { VNNIProduct.rowBlock }

    /// `scratchBytes` of the `.avx512vnni` kernels.
    var vnniScratchBytes: Int { vnniProduct.scratchBytes }

    /// Panels `range` (of those this product computes) as the `.avx512vnni` kernels read them.
    private func vnniProduct(panels range: Range<Int>) -> VNNIProduct {
        VNNIProduct(panels: UnsafeRawPointer(panels.pointer + range.lowerBound * panelBytes),
                    bias: UnsafePointer(bias.pointer + range.lowerBound * Self.panelWidth),
                    panelBytes: panelBytes, panelCount: range.count, depth: depth,
                    weightOffset: weightOffset, signedActivations: signedActivations)
    }

    /// Rows per block of accumulators handed on to a stage the kernels have no `store` for, and
    /// panels per block: 4 × 64 results, 1 KiB, which `withUnsafeTemporaryAllocation` keeps on the
    /// stack (at 16 KiB it went to the heap, an allocation in every FULLY_CONNECTED call).
    private static let accumulatorBlock = (rows: 4, panels: 4)

    /// The `.avx512vnni` product (see `IntegerGEMM`).
    func multiplyVNNI<Output: IntegerGEMMOutput>(_ a: UnsafePointer<UInt8>, rows: Int, rowStride: Int,
                                                 scratch: UnsafeMutableRawPointer?, into output: Output) {
        switch output.vnniStage {
        case .requantized(let stage):
            vnniProduct.multiply(a, rows: rows, rowStride: rowStride, scratch: scratch, into: stage)
        case .accumulators(let stage):
            vnniProduct.multiply(a, rows: rows, rowStride: rowStride, scratch: scratch, into: stage)
        case nil:
            let block = Self.accumulatorBlock
            withUnsafeTemporaryAllocation(of: Int32.self, capacity: block.rows * block.panels * Self.panelWidth) { buffer in
                let accumulators = buffer.baseAddress!
                var first = 0
                while first < panelCount {
                    let count = min(block.panels, panelCount - first), width = count * Self.panelWidth
                    let product = vnniProduct(panels: first ..< first + count)
                    var row = 0
                    while row < rows {
                        let height = min(block.rows, rows - row)
                        product.multiply(a + row * rowStride, rows: height, rowStride: rowStride, scratch: scratch,
                                         into: AccumulatorGEMMOutput(base: accumulators, rowStride: width, columns: width))
                        for r in 0 ..< height {
                            for p in 0 ..< count {
                                output.store(loadLanes(accumulators + r * width + p * Self.panelWidth),
                                             row: row + r, column: (first + p) * Self.panelWidth)
                            }
                        }
                        row += height
                    }
                    first += count
                }
            }
        }
    }
    #else
    static var rowBlock: Int { 256 }
    var vnniScratchBytes: Int { 0 }

    func multiplyVNNI<Output: IntegerGEMMOutput>(_ a: UnsafePointer<UInt8>, rows: Int, rowStride: Int,
                                                 scratch: UnsafeMutableRawPointer?, into output: Output) {
        preconditionFailure("IntegerGEMM.Layout.avx512vnni is not compiled into this build")
    }
    #endif
}
