#if SWIFTLITE_AVX512
import CX86Intrinsics
#endif
import Microkernels

/// The integer matrix product behind quantized CONV_2D and FULLY_CONNECTED:
///
///     C[m, n] = bias[n] + Σ_k (A[m, k] − a₀) · B[k, n]
///
/// `A` holds activations as bytes, one row per output pixel or batch: `UInt8`, or `Int8` when
/// the product is built with `signedActivations` (so int8 tensors need no re-encoding pass);
/// `a₀` is their zero point in the same type. `B` holds the weights minus their zero point, at
/// most 9 bits (−255...255), packed at prepare time. The kernels read `Int8` activations with
/// their sign bit flipped (offset by 128), and the zero-point term is folded into the bias once,
/// `bias′[n] = bias[n] − a₀′ · Σ_k B[k, n]` (`a₀′` the zero point as the kernels read it), so the
/// inner loop is a pure dot product; in wrapping 32-bit arithmetic this equals TFLite's
/// `Σ (w − w₀)(x − x₀) + bias` exactly, whatever the order of the sums.
///
///     let gemm = IntegerGEMM(columns: 35, depth: 27, activationZeroPoint: 128,
///                            weight: { n, k in Int32(filter[n * 27 + k]) - 120 },
///                            bias: { n in bias[n] })
///     gemm.multiply(patches, rows: 49, rowStride: 27, into: output)
///
/// Four packings (`Layout`), chosen when the product is built, each with its micro-kernels
/// (`.avx2Bytes` sharing `.avx2`'s):
///
/// - `.avx512vnni` (machines with AVX-512 VNNI, whatever the build targets, see Package.swift): `vpdpbusd`,
///   64 unsigned-byte × signed-byte multiply-adds per instruction. Weights must be `Int8`, as
///   int8 weights (zero point 0) are; uint8 weights minus their zero point `w₀` (−w₀...255 − w₀)
///   are stored offset by one `s` (e.g. `s = 128 − w₀`, bytes `w − 128`), and `s · Σ_k A′[m, k]`
///   is added back from per-row sums of the activations as the kernels read them (`A′`).
///   Weights spanning more than 256 values cannot be offset so; they take `.avx2` (or `.int16`).
///   See `IntegerGEMM+VNNI.swift` and Microkernels' `VNNIProduct.swift`.
/// - `.avx2` (builds whose target CPU has AVX2, the portable floor): pairs of 16-bit weights and
///   activations, `vpmaddwd` (16 multiply-adds per instruction). See `IntegerGEMM+AVX2.swift`.
///   `.avx2Bytes` is the same product on weights that fit `Int8` (int8 weights, zero point 0),
///   stored as bytes and sign-extended as the kernel loads them (`vpmovsxbw`): half the bytes to
///   pack at prepare, to clear and page in, and to read in every product.
/// - `.int16` (builds whose target lacks AVX2: arm64, baseline x86-64): 16-bit panels and
///   widening multiply-adds, which LLVM turns into `pmaddwd` (SSE2) or `smlal` (NEON). See
///   `IntegerGEMM+Int16.swift`. An AVX2 build leaves it out: `.avx2` takes every weight it
///   could, faster, and its tiles were a third of the engine's machine code.
///
/// All compute tiles of up to 4 rows × 64 columns (`.avx2`: × 16; narrow `.int16` and
/// `.avx512vnni` products: 16 × 16 and 8 × 32) in `Int32` accumulators started at the bias, and
/// hand each finished row of 16 columns to the `IntegerGEMMOutput`. `multiply` keeps no state
/// between calls (its scratch is per call), so threads may run it at once on disjoint rows.
/// - Complexity: `rows × columns × depth` multiply-adds, rounded up to whole 16-column panels
///   (and, for `.avx512vnni`, depth rounded up to a multiple of 4).
struct IntegerGEMM: Sendable {
    /// How the weights are packed, and so which micro-kernels run.
    enum Layout: Sendable, CaseIterable {
        /// `panel[p][k][j] = B[k, 16p + j]` as `Int16`.
        case int16
        /// `panel[p][k / 2][j][k % 2] = B[k, 16p + j]` as `Int16`, depth padded with a zero
        /// weight to a multiple of 2.
        case avx2
        /// As `.avx2`, as `Int8`: for weights in −128...127 (others take `.avx2`).
        case avx2Bytes
        /// `panel[p][k / 4][j][k % 4] = B[k, 16p + j] − s[16p + j]` as `Int8`, depth padded
        /// with zero weights to a multiple of 4.
        case avx512vnni

        /// The layouts this build can run here, slowest first: `.avx2` and `.avx2Bytes` when
        /// compiled for them, else `.int16`; then `.avx512vnni` when compiled for it, or when its
        /// kernels (compiled apart, see Package.swift) run on this machine.
        static var allCases: [Layout] {
            #if SWIFTLITE_AVX2
            var layouts = [Layout.avx2, .avx2Bytes]
            #else
            var layouts = [Layout.int16]
            #endif
            if KernelSelection.runsVNNI { layouts.append(.avx512vnni) }
            return layouts
        }

        /// The fastest layout of this build.
        static var preferred: Layout { allCases.last! }

        /// The layout for a product of `rows` rows (per image or batch): `preferred`, except
        /// that `.avx2Bytes` is kept for products of at most one tile's rows (4: a fully
        /// connected layer's batch, a convolution on a 1 × 1 image), which read each weight
        /// once, from L2 or memory (the classifier's 1280 → 1000: 2.5 MB as pairs); there
        /// reading half the bytes pays for extending them. Where many tiles read each weight
        /// again from L1, the pairs' plain loads leave the vector ports to the products.
        static func preferred(rows: Int) -> Layout {
            let layout = preferred
            return layout == .avx2Bytes && rows > bytesMaximumRows ? .avx2 : layout
        }

        /// The most rows that `preferred(rows:)` packs as bytes for.
        static let bytesMaximumRows = 4
    }

    static let panelWidth = 16
    let columns: Int
    let depth: Int
    /// Rows of `A` are `Int8` rather than `UInt8`.
    let signedActivations: Bool
    let layout: Layout
    /// Panels the kernels compute: all of them, or those of a column range (`multiply(columns:)`).
    private(set) var panelCount: Int
    /// Columns with results in the last panel computed (1...16): fewer than 16 when it is the
    /// product's last panel and `columns` is not a multiple of 16.
    private(set) var lastPanelColumns: Int
    /// Bytes of one panel: `depth × 16 × 2` (`.int16`), `⌈depth / 2⌉ × 64` (`.avx2`),
    /// `⌈depth / 2⌉ × 32` (`.avx2Bytes`), `⌈depth / 4⌉ × 64` (`.avx512vnni`).
    let panelBytes: Int
    /// `panelCount` panels of `panelBytes`, from the first the kernels compute.
    private(set) var panels: PanelStart<UInt8>
    /// `panelCount × 16` folded biases (zero past `columns`), from the first panel computed.
    private(set) var bias: PanelStart<Int32>
    /// The memory `panels` and `bias` point into, kept alive with the product.
    private let panelStorage: PackedBuffer<UInt8>
    private let biasStorage: PackedBuffer<Int32>
    /// `.avx512vnni` only: `s`, subtracted from every weight so that all fit `Int8`, and added
    /// back as `s · Σ_k A′[m, k]` (zero, and no row sums, when the weights fit as they are).
    let weightOffset: Int32

    /// Packs `weight(n, k)` (already minus the weight zero point, in −255...255) for this
    /// build's fastest kernels and folds `activationZeroPoint · Σ_k weight(n, k)` into `bias(n)`.
    init(columns: Int, depth: Int, activationZeroPoint: Int32, signedActivations: Bool = false,
         weight: (_ column: Int, _ k: Int) -> Int32, bias: (_ column: Int) -> Int32) {
        self.init(columns: columns, depth: depth, activationZeroPoint: activationZeroPoint,
                  signedActivations: signedActivations, layout: .preferred, weight: weight, bias: bias)
    }

    /// As above, packed for `layout` (one of `Layout.allCases`). `.avx512vnni` falls back to
    /// the next layout for weights it cannot represent (spanning more than 256 values).
    init(columns: Int, depth: Int, activationZeroPoint: Int32, signedActivations: Bool = false, layout: Layout,
         weight: (_ column: Int, _ k: Int) -> Int32, bias: (_ column: Int) -> Int32) {
        var values = [Int16](repeating: 0, count: columns * depth)
        for n in 0 ..< columns {
            for k in 0 ..< depth {
                let w = weight(n, k)
                precondition(w >= -255 && w <= 255, "packed weights must fit in 9 bits")
                values[n * depth + k] = Int16(w)
            }
        }
        self.init(columns: columns, depth: depth, activationZeroPoint: activationZeroPoint,
                  signedActivations: signedActivations, layout: layout, values: values, bias: bias)
    }

    /// Packs a constant weight tensor's bytes (what CONV_2D and FULLY_CONNECTED hold): column
    /// `n`'s weights are the `rowLength` bytes from `weightBytes[n · rowLength]`, each read as
    /// `encoding.value(byte)`; depths from `rowLength` up to `depth` (a patch's padding) are 0.
    /// The same product as the closure form with `weight: { n, k in k < rowLength ?
    /// encoding.value(weightBytes[n * rowLength + k]) : 0 }`, without a call per weight; the
    /// `.avx512vnni` and `.avx2` layouts are packed from the bytes directly (`WeightByteStatistics`).
    init(columns: Int, depth: Int, activationZeroPoint: Int32, signedActivations: Bool = false, layout: Layout = .preferred,
         weightBytes: UnsafeRawBufferPointer, rowLength: Int, encoding: WeightEncoding, bias: (_ column: Int) -> Int32) {
        precondition(rowLength >= 0 && rowLength <= depth && weightBytes.count >= columns * rowLength,
                     "a weight row is at most depth bytes, and the tensor holds every column's row")
        let statistics = WeightByteStatistics(weightBytes, columns: columns, rowLength: rowLength, depth: depth, encoding: encoding)
        if let direct = statistics.directLayout(for: layout) {
            self.init(columns: columns, depth: depth, activationZeroPoint: activationZeroPoint,
                      signedActivations: signedActivations, directLayout: direct, weightBytes: weightBytes,
                      rowLength: rowLength, encoding: encoding, statistics: statistics, bias: bias)
            return
        }
        // A range-checked zero point (−128...255) leaves every value in −255...255.
        let zero = Int16(encoding.zeroPoint)
        var values = [Int16](repeating: 0, count: columns * depth)
        values.withUnsafeMutableBufferPointer { v in
            guard let target = v.baseAddress, let source = weightBytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
            for n in 0 ..< columns {
                let row = source + n * rowLength, out = target + n * depth
                if encoding.isSigned {
                    for k in 0 ..< rowLength { out[k] = Int16(Int8(bitPattern: row[k])) &- zero }
                } else {
                    for k in 0 ..< rowLength { out[k] = Int16(row[k]) &- zero }
                }
            }
        }
        self.init(columns: columns, depth: depth, activationZeroPoint: activationZeroPoint,
                  signedActivations: signedActivations, layout: layout, values: values, bias: bias)
    }

    /// The `.avx512vnni` or `.avx2` panels of weight bytes, written from the bytes themselves:
    /// each column's row is read once, four depths (`.avx512vnni`: one 32-bit word of bytes
    /// minus `zp + s`, bytewise) or two (`.avx2`: a word of two `Int16` values) per store, where
    /// the general form widens every weight into an array of `Int16` first (twice the weights'
    /// size, paged in and read three more times). The same panels, folded biases and offset `s`
    /// as that form, byte for byte.
    private init(columns: Int, depth: Int, activationZeroPoint: Int32, signedActivations: Bool, directLayout layout: Layout,
                 weightBytes: UnsafeRawBufferPointer, rowLength: Int, encoding: WeightEncoding,
                 statistics: WeightByteStatistics, bias: (_ column: Int) -> Int32) {
        precondition(Layout.allCases.contains(layout), "layout \(layout) is not compiled into this build")
        self.columns = columns
        self.depth = depth
        self.signedActivations = signedActivations
        self.layout = layout
        let panels = (columns + Self.panelWidth - 1) / Self.panelWidth
        panelCount = panels
        lastPanelColumns = Self.columnsInLastPanel(upTo: columns)
        let offset = layout == .avx512vnni ? statistics.offset : 0
        let offsetZeroPoint = signedActivations ? activationZeroPoint &+ 128 : activationZeroPoint
        let folded = PackedBuffer<Int32>(count: panels * Self.panelWidth, initializedTo: 0)
        for n in 0 ..< columns {
            folded.pointer[n] = bias(n) &- offsetZeroPoint &* statistics.sums[n]
        }
        let panelBytes = Self.panelBytes(depth: depth, layout: layout)
        let storage = PackedBuffer<UInt8>(count: panels * panelBytes, initializedTo: 0)
        if let source = weightBytes.baseAddress, columns > 0 {
            let target = UnsafeMutableRawPointer(storage.pointer)
            if layout == .avx512vnni {
                Self.packVNNI(source, into: target, columns: columns, depth: depth, rowLength: rowLength, panelBytes: panelBytes,
                              delta: UInt8(truncatingIfNeeded: encoding.zeroPoint &+ offset),
                              padding: UInt8(truncatingIfNeeded: -offset))
            } else if layout == .avx2Bytes {
                Self.packBytePairs(source, into: target, columns: columns, depth: depth, rowLength: rowLength,
                                   panelBytes: panelBytes, delta: UInt8(truncatingIfNeeded: encoding.zeroPoint))
            } else {
                Self.packPairs(source, into: target, columns: columns, depth: depth, rowLength: rowLength, panelBytes: panelBytes,
                               encoding: encoding)
            }
        }
        biasStorage = folded
        self.bias = PanelStart(pointer: folded.pointer)
        self.panelBytes = panelBytes
        panelStorage = storage
        weightOffset = offset
        self.panels = PanelStart(pointer: storage.pointer)
    }

    /// Packs `values[n · depth + k]` = weight `(n, k)` (in −255...255) for `layout`.
    private init(columns: Int, depth: Int, activationZeroPoint: Int32, signedActivations: Bool, layout: Layout,
                 values: [Int16], bias: (_ column: Int) -> Int32) {
        precondition(Layout.allCases.contains(layout), "layout \(layout) is not compiled into this build")
        precondition(values.count == columns * depth)
        self.columns = columns
        self.depth = depth
        self.signedActivations = signedActivations
        let panels = (columns + Self.panelWidth - 1) / Self.panelWidth
        panelCount = panels
        lastPanelColumns = Self.columnsInLastPanel(upTo: columns)
        let padded = panels * Self.panelWidth
        var lowest: Int16 = 255, highest: Int16 = -255
        for w in values {
            lowest = min(lowest, w)
            highest = max(highest, w)
        }
        precondition(lowest >= -255 && highest <= 255, "packed weights must fit in 9 bits")
        let low = Int32(lowest), high = Int32(highest)
        // Bytes hold `w − offset`: every weight as it is when all fit, else from −128 up.
        let offset: Int32 = low < -128 || high > 127 ? low + 128 : 0
        let chosen = layout == .avx512vnni && high - offset > 127 ? (Layout.allCases.contains(.avx2) ? .avx2 : .int16)
            : layout == .avx2Bytes && (low < -128 || high > 127) ? .avx2 : layout
        self.layout = chosen

        // The kernels read int8 activations offset by 128; so is their zero point here.
        let offsetZeroPoint = signedActivations ? activationZeroPoint &+ 128 : activationZeroPoint
        let folded = PackedBuffer<Int32>(count: padded, initializedTo: 0)
        let (panelBytes, panelStorage, weightOffset) = values.withUnsafeBufferPointer { v in
            let w = v.baseAddress ?? UnsafePointer(bitPattern: MemoryLayout<Int16>.alignment)!
            for n in 0 ..< columns {
                var sum: Int32 = 0
                for k in 0 ..< depth { sum &+= Int32(w[n * depth + k]) }
                folded.pointer[n] = bias(n) &- offsetZeroPoint &* sum
            }
            return Self.pack(w, columns: columns, depth: depth, panelCount: panels, layout: chosen, offset: offset)
        }
        biasStorage = folded
        self.bias = PanelStart(pointer: folded.pointer)
        self.panelBytes = panelBytes
        self.panelStorage = panelStorage
        self.weightOffset = weightOffset
        self.panels = PanelStart(pointer: panelStorage.pointer)
    }

    /// Bytes of scratch memory one `multiply` call needs (int8 rows re-encoded, rows widened to
    /// 16 bits), whatever its row count; 0 when the layout reads rows in place. Kernels reserve
    /// it at prepare (per worker when threads share the product) so `eval` allocates nothing.
    var scratchBytes: Int {
        switch layout {
        case .int16:
            return 0
        case .avx2, .avx2Bytes:
            #if SWIFTLITE_AVX2
            return avx2ScratchBytes
            #else
            return 0
            #endif
        case .avx512vnni:
            return vnniScratchBytes
        }
    }

    /// Computes rows `0 ..< rows` of the product; row `m` of `A` starts at `a + m · rowStride`.
    /// Each row's result goes to `output` sixteen columns at a time. `scratch` holds at least
    /// `scratchBytes` bytes, or is nil to let the call find its own (for tests and one-off calls).
    func multiply<Output: IntegerGEMMOutput>(_ a: UnsafePointer<UInt8>, rows: Int, rowStride: Int,
                                             scratch: UnsafeMutableRawPointer?, into output: Output) {
        guard scratch == nil, scratchBytes > 0 else {
            return multiply(a, rows: rows, rowStride: rowStride, buffer: scratch, into: output)
        }
        withUnsafeTemporaryAllocation(byteCount: scratchBytes, alignment: 64) { buffer in
            multiply(a, rows: rows, rowStride: rowStride, buffer: buffer.baseAddress!, into: output)
        }
    }

    /// Computes output columns `columns` of rows `0 ..< rows` (as `multiply`, which computes them
    /// all): the results, and the weights read, of those columns only, so that threads can split
    /// a product by columns (each reading its part of the weights) as well as by rows. The range
    /// starts at a multiple of `panelWidth` and ends at one or at `self.columns`. Every column's
    /// result is the same bytes whatever range it is computed in. `output` receives columns
    /// numbered as in the whole product.
    func multiply<Output: IntegerGEMMOutput>(_ a: UnsafePointer<UInt8>, rows: Int, rowStride: Int, columns range: Range<Int>,
                                             scratch: UnsafeMutableRawPointer?, into output: Output) {
        precondition(range.lowerBound % Self.panelWidth == 0 && range.lowerBound >= 0
                     && (range.upperBound % Self.panelWidth == 0 || range.upperBound == columns) && range.upperBound <= columns,
                     "a column range of a product starts and ends at whole panels")
        guard range != 0 ..< columns else {
            return multiply(a, rows: rows, rowStride: rowStride, scratch: scratch, into: output)
        }
        guard !range.isEmpty else { return }
        let first = range.lowerBound / Self.panelWidth
        var part = self
        part.panelCount = (range.upperBound + Self.panelWidth - 1) / Self.panelWidth - first
        part.lastPanelColumns = Self.columnsInLastPanel(upTo: range.upperBound)
        part.panels = PanelStart(pointer: panels.pointer + first * panelBytes)
        part.bias = PanelStart(pointer: bias.pointer + first * Self.panelWidth)
        part.multiply(a, rows: rows, rowStride: rowStride, scratch: scratch,
                      into: ColumnOffsetGEMMOutput(output: output, offset: range.lowerBound))
    }

    /// `multiply` with scratch of its own.
    func multiply<Output: IntegerGEMMOutput>(_ a: UnsafePointer<UInt8>, rows: Int, rowStride: Int, into output: Output) {
        multiply(a, rows: rows, rowStride: rowStride, scratch: nil, into: output)
    }

    private func multiply<Output: IntegerGEMMOutput>(_ a: UnsafePointer<UInt8>, rows: Int, rowStride: Int,
                                                     buffer: UnsafeMutableRawPointer?, into output: Output) {
        switch layout {
        case .int16:
            #if SWIFTLITE_AVX2
            preconditionFailure("IntegerGEMM.Layout.int16 is not compiled into an AVX2 build")
            #else
            multiplyInt16(a, rows: rows, rowStride: rowStride, into: output)
            #endif
        case .avx2, .avx2Bytes:
            #if SWIFTLITE_AVX2
            multiplyAVX2(a, rows: rows, rowStride: rowStride, scratch: buffer!, into: output)
            #else
            preconditionFailure("IntegerGEMM.Layout.avx2 is not compiled into this build")
            #endif
        case .avx512vnni:
            multiplyVNNI(a, rows: rows, rowStride: rowStride, scratch: buffer, into: output)
        }
    }

    /// Columns of the last panel of columns `0 ..< end` (16 when `end` is a multiple of 16 or 0).
    static func columnsInLastPanel(upTo end: Int) -> Int {
        end == 0 ? panelWidth : end - (end - 1) / panelWidth * panelWidth
    }

    /// The plain triple loop the packed product is tested against: `C[m, n]` in row-major
    /// order, computed exactly as TFLite's reference kernels do.
    static func reference(_ a: UnsafePointer<UInt8>, rows: Int, rowStride: Int, columns: Int, depth: Int,
                          activationZeroPoint: Int32, signedActivations: Bool = false,
                          weight: (Int, Int) -> Int32, bias: (Int) -> Int32) -> [Int32] {
        var c = [Int32](repeating: 0, count: rows * columns)
        for m in 0 ..< rows {
            for n in 0 ..< columns {
                var acc: Int32 = 0
                for k in 0 ..< depth {
                    let byte = a[m * rowStride + k]
                    let x = signedActivations ? Int32(Int8(bitPattern: byte)) : Int32(byte)
                    acc &+= weight(n, k) &* (x &- activationZeroPoint)
                }
                c[m * columns + n] = acc &+ bias(n)
            }
        }
        return c
    }
}

/// Passes a column range's results on numbered as columns of the whole product.
private struct ColumnOffsetGEMMOutput<Output: IntegerGEMMOutput>: IntegerGEMMOutput {
    let output: Output
    let offset: Int

    @inline(always)
    func store(_ values: SIMD16<Int32>, row: Int, column: Int) {
        output.store(values, row: row, column: column + offset)
    }

    var vnniStage: VNNIStage? {
        switch output.vnniStage {
        case .requantized(let stage): .requantized(stage.dropping(columns: offset))
        case .accumulators(let stage): .accumulators(stage.dropping(columns: offset))
        case nil: nil
        }
    }
}
