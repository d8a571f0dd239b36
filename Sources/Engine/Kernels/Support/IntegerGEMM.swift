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

    /// Bytes of one panel of `depth` weights in `layout` (see `panelBytes`).
    static func panelBytes(depth: Int, layout: Layout) -> Int {
        switch layout {
        case .int16: depth * panelWidth * MemoryLayout<Int16>.stride
        case .avx2: (depth + 1) / 2 * 64
        case .avx2Bytes: (depth + 1) / 2 * 32
        case .avx512vnni: (depth + 3) / 4 * 64
        }
    }

    /// `.avx2Bytes` panels: depths `2h`, `2h + 1` of column `n` are two bytes `w − zp` (mod 256:
    /// the `Int8` the kernels read, every value fitting one) at byte `(n / 16) · panelBytes +
    /// h · 32 + (n % 16) · 2`: each raw byte minus `delta` (`zp`). Depths from `rowLength` on
    /// (a patch's padding, weight 0) stay zero.
    private static func packBytePairs(_ source: UnsafeRawPointer, into target: UnsafeMutableRawPointer, columns: Int, depth: Int,
                                      rowLength: Int, panelBytes: Int, delta: UInt8) {
        let pairs = rowLength / 2
        // Whole panels a line at a time: pair `h` of the 16 columns' rows gathered into one
        // 32-byte line, stored once. The last, partial panel and an odd row's last depth take
        // the column loop below.
        let wholePanels = columns / panelWidth
        let lineDeltas = SIMD32<UInt8>(repeating: delta)
        for panel in 0 ..< wholePanels {
            let rows = source + panel * panelWidth * rowLength, out = target + panel * panelBytes
            for h in 0 ..< pairs {
                var line = SIMD16<UInt16>()
                let pair = rows + 2 * h
                for c in 0 ..< panelWidth { line[c] = pair.loadUnaligned(fromByteOffset: c * rowLength, as: UInt16.self) }
                out.storeBytes(of: unsafeBitCast(line, to: SIMD32<UInt8>.self) &- lineDeltas, toByteOffset: 32 * h,
                               as: SIMD32<UInt8>.self)
            }
        }
        for n in 0 ..< columns {
            let row = source + n * rowLength
            let column = target + (n / panelWidth) * panelBytes + (n % panelWidth) * 2
            let firstDepth = n < wholePanels * panelWidth ? 2 * pairs : 0
            for k in firstDepth ..< rowLength {
                column.storeBytes(of: row.load(fromByteOffset: k, as: UInt8.self) &- delta, toByteOffset: (k / 2) * 32 + k % 2,
                                  as: UInt8.self)
            }
        }
    }

    /// `.avx512vnni` panels: depths `4g ..< 4g + 4` of column `n` are one word at byte
    /// `(n / 16) · panelBytes + g · 64 + (n % 16) · 4`, each byte `w − zp − s` (mod 256, which is
    /// the `Int8` the kernels read): the raw byte minus `delta`. Depths `rowLength ..< depth`
    /// are the padding's weight 0 (the byte `padding`, `−s`); those past `depth` stay zero.
    private static func packVNNI(_ source: UnsafeRawPointer, into target: UnsafeMutableRawPointer, columns: Int, depth: Int,
                                 rowLength: Int, panelBytes: Int, delta: UInt8, padding: UInt8) {
        let deltas = SIMD4<UInt8>(repeating: delta)
        let words = rowLength / 4
        // Whole panels a line at a time: word `g` of the 16 columns' rows gathered into one
        // 64-byte line and stored once. The last, partial panel and the depths past the last
        // whole word take the column loop below.
        let wholePanels = columns / panelWidth
        let lineDeltas = SIMD64<UInt8>(repeating: delta)
        for panel in 0 ..< wholePanels {
            let rows = source + panel * panelWidth * rowLength, out = target + panel * panelBytes
            for g in 0 ..< words {
                var line = SIMD16<UInt32>()
                let word = rows + 4 * g
                for c in 0 ..< panelWidth { line[c] = word.loadUnaligned(fromByteOffset: c * rowLength, as: UInt32.self) }
                out.storeBytes(of: unsafeBitCast(line, to: SIMD64<UInt8>.self) &- lineDeltas, toByteOffset: 64 * g,
                               as: SIMD64<UInt8>.self)
            }
        }
        for n in 0 ..< columns {
            let row = source + n * rowLength
            let column = target + (n / panelWidth) * panelBytes + (n % panelWidth) * 4
            for g in 0 ..< (n < wholePanels * panelWidth ? 0 : words) {
                let bytes = row.loadUnaligned(fromByteOffset: 4 * g, as: SIMD4<UInt8>.self) &- deltas
                column.storeBytes(of: bytes, toByteOffset: 64 * g, as: SIMD4<UInt8>.self)
            }
            for k in 4 * words ..< depth {
                let byte = k < rowLength ? row.load(fromByteOffset: k, as: UInt8.self) &- delta : padding
                column.storeBytes(of: byte, toByteOffset: (k / 4) * 64 + k % 4, as: UInt8.self)
            }
        }
    }

    /// `.avx2` panels: depths `2h`, `2h + 1` of column `n` are two `Int16` values `w − zp` at byte
    /// `(n / 16) · panelBytes + h · 64 + (n % 16) · 4`; depths from `rowLength` on stay zero.
    private static func packPairs(_ source: UnsafeRawPointer, into target: UnsafeMutableRawPointer, columns: Int, depth: Int,
                                  rowLength: Int, panelBytes: Int, encoding: WeightEncoding) {
        // `w − zp` is in −255...255 (a range-checked zero point), so it fits the `Int16`.
        @inline(__always)
        func value(_ byte: UInt8) -> Int16 { Int16(truncatingIfNeeded: encoding.value(byte)) }
        let pairs = rowLength / 2
        // Whole panels a line at a time: pair `h` of the 16 columns' rows gathered into one
        // 64-byte line, widened lane by lane (byte 0 of a lane's pair to its low `Int16`, byte
        // 1 to its high one) and stored once. Column by column, each line would be written 16
        // times, 4 bytes at a time. The last, partial panel and an odd row's last depth take the
        // column loop below.
        let wholePanels = columns / panelWidth
        let zeros = SIMD16<Int32>(repeating: encoding.zeroPoint)
        for panel in 0 ..< wholePanels {
            let rows = source + panel * panelWidth * rowLength, out = target + panel * panelBytes
            for h in 0 ..< pairs {
                var line = SIMD16<UInt32>()
                let pair = rows + 2 * h
                for c in 0 ..< panelWidth { line[c] = UInt32(pair.loadUnaligned(fromByteOffset: c * rowLength, as: UInt16.self)) }
                let bytes = unsafeBitCast(line, to: SIMD16<Int32>.self)
                let low: SIMD16<Int32>, high: SIMD16<Int32>
                if encoding.isSigned {
                    low = (bytes &<< 24) &>> 24
                    high = (bytes &<< 16) &>> 24
                } else {
                    low = bytes & 0xFF
                    high = bytes &>> 8
                }
                let words = ((low &- zeros) & 0xFFFF) | ((high &- zeros) &<< 16)
                out.storeBytes(of: words, toByteOffset: 64 * h, as: SIMD16<Int32>.self)
            }
        }
        for n in 0 ..< columns {
            let row = source.assumingMemoryBound(to: UInt8.self) + n * rowLength
            let column = target + (n / panelWidth) * panelBytes + (n % panelWidth) * 4
            for h in 0 ..< (n < wholePanels * panelWidth ? 0 : pairs) {
                column.storeBytes(of: SIMD2(value(row[2 * h]), value(row[2 * h + 1])), toByteOffset: h * 64, as: SIMD2<Int16>.self)
            }
            if rowLength % 2 == 1 {
                column.storeBytes(of: value(row[rowLength - 1]), toByteOffset: pairs * 64, as: Int16.self)
            }
        }
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

    /// The panels of `layout` for weights `w[n · depth + k]`, with their bytes and the weight
    /// offset they carry (`.avx512vnni` only: `offset`; zero padding past `columns` and `depth`).
    private static func pack(_ w: UnsafePointer<Int16>, columns: Int, depth: Int, panelCount: Int, layout: Layout,
                             offset: Int32) -> (Int, PackedBuffer<UInt8>, Int32) {
        let panelBytes = Self.panelBytes(depth: depth, layout: layout)
        let storage = PackedBuffer<UInt8>(count: panelCount * panelBytes, initializedTo: 0)
        let raw = UnsafeMutableRawPointer(storage.pointer)
        switch layout {
        case .int16:
            for n in 0 ..< columns {
                let panel = raw + (n / panelWidth) * panelBytes + (n % panelWidth) * 2
                for k in 0 ..< depth {
                    panel.storeBytes(of: w[n * depth + k], toByteOffset: k * 32, as: Int16.self)
                }
            }
            return (panelBytes, storage, 0)
        case .avx2:
            for n in 0 ..< columns {
                let panel = raw + (n / panelWidth) * panelBytes + (n % panelWidth) * 4
                for k in 0 ..< depth {
                    panel.storeBytes(of: w[n * depth + k], toByteOffset: (k / 2) * 64 + (k % 2) * 2, as: Int16.self)
                }
            }
            return (panelBytes, storage, 0)
        case .avx2Bytes:
            for n in 0 ..< columns {
                let panel = storage.pointer + (n / panelWidth) * panelBytes + (n % panelWidth) * 2
                for k in 0 ..< depth { panel[(k / 2) * 32 + k % 2] = UInt8(truncatingIfNeeded: w[n * depth + k]) }
            }
            return (panelBytes, storage, 0)
        case .avx512vnni:
            let narrowOffset = Int16(offset)
            for n in 0 ..< columns {
                let panel = storage.pointer + (n / panelWidth) * panelBytes + (n % panelWidth) * 4
                for k in 0 ..< depth {
                    panel[(k / 4) * 64 + k % 4] = UInt8(truncatingIfNeeded: w[n * depth + k] &- narrowOffset)
                }
            }
            return (panelBytes, storage, offset)
        }
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

extension IntegerGEMM {
    /// The weights of four panels from `panel` (the tiles that cover four panels at once).
    @inline(__always)
    func panelWeights(_ panel: Int) -> (UnsafeRawPointer, UnsafeRawPointer, UnsafeRawPointer, UnsafeRawPointer) {
        let w0 = UnsafeRawPointer(panels.pointer) + panel * panelBytes
        return (w0, w0 + panelBytes, w0 + 2 * panelBytes, w0 + 3 * panelBytes)
    }

    /// The bias of `width` (1, 2 or 4) panels from `panel`: the accumulators' starting values. The
    /// blocks past `width` repeat the first; those accumulators are never stored.
    @inline(__always)
    func panelBias(_ panel: Int, width: Int) -> (SIMD16<Int32>, SIMD16<Int32>, SIMD16<Int32>, SIMD16<Int32>) {
        let raw = UnsafeRawPointer(bias.pointer + panel * Self.panelWidth)
        let b0 = loadLanes(raw)
        let b1 = width >= 2 ? loadLanes(raw + 64) : b0
        let b2 = width == 4 ? loadLanes(raw + 128) : b0
        let b3 = width == 4 ? loadLanes(raw + 192) : b0
        return (b0, b1, b2, b3)
    }
}

/// Sixteen `Int32` lanes from `p`, any alignment. With AVX-512 through CX86Intrinsics: the
/// stdlib's generic `loadUnaligned` was once left as calls in the products' hot loops by an
/// unrelated change elsewhere in the module (see `swiftlite_load_dwords`).
@inline(always)
func loadLanes(_ p: UnsafeRawPointer) -> SIMD16<Int32> {
    #if SWIFTLITE_AVX512
    swiftlite_load_dwords(p)
    #else
    p.loadUnaligned(as: SIMD16<Int32>.self)
    #endif
}

/// Where the packed panels (or their biases) of an `IntegerGEMM` start for its kernels: the
/// first panel of the product, or of the column range one call computes.
struct PanelStart<Element>: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<Element>
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

/// Where `IntegerGEMM.multiply` puts its results: sixteen consecutive columns of one row at a
/// time (lanes at or past the product's column count are padding and must not be stored).
protocol IntegerGEMMOutput {
    func store(_ values: SIMD16<Int32>, row: Int, column: Int)
    /// The same stage as one the `.avx512vnni` kernels have their own `store` for (they are
    /// compiled apart and cannot call this one's), or nil: they then pass their results on
    /// through a buffer of accumulators.
    var vnniStage: VNNIStage? { get }
}

extension IntegerGEMMOutput {
    var vnniStage: VNNIStage? { nil }
}

/// The output stages the `.avx512vnni` kernels store through themselves.
enum VNNIStage {
    case requantized(RequantizedGEMMOutput)
    case accumulators(AccumulatorGEMMOutput)
}

/// Requantizes each result with a per-column `ChannelRequantization` and stores bytes (the
/// type is in Microkernels, where the `.avx512vnni` kernels store through it too).
///
/// It holds plain pointers to the stage's channel arrays: through `stage.apply`, every byte
/// store (which may alias anything) made the kernels reload each array's address from its
/// buffer object before the next block.
extension RequantizedGEMMOutput: IntegerGEMMOutput {
    init(base: UnsafeMutablePointer<UInt8>, rowStride: Int, columns: Int, stage: ChannelRequantization) {
        self.init(base: base, rowStride: rowStride, columns: columns,
                  multipliers: UnsafeRawPointer(stage.multipliers.pointer),
                  leftShifts: UnsafeRawPointer(stage.leftShifts.pointer),
                  rightShifts: UnsafeRawPointer(stage.rightShifts.pointer),
                  shiftsLeft: stage.shiftsLeft, saturates: stage.saturates,
                  zeroPoint: stage.zeroPoint, minimum: stage.minimum, maximum: stage.maximum,
                  wide: stage.wide.map { UnsafeRawPointer($0.pointer) })
    }

    var vnniStage: VNNIStage? { .requantized(self) }

    @inline(always)
    func store(_ values: SIMD16<Int32>, row: Int, column: Int) {
        let offset = column &* 4
        let destination = base + row * rowStride + column
        // The one-shift form where the stage has it and the build has code for it (AVX2).
        if let wide, let product = ChannelRequantization.applyWide(
            values, multipliers: multipliers + offset, constants: wide + (column >> 4) &* (WideRequantization.valuesPerBlock &* 8),
            nonnegative: minimum >= zeroPoint) {
            return storeClampedBytes(product, offset: zeroPoint, minimum: minimum, maximum: maximum, to: destination,
                                     count: columns - column)
        }
        // The left shifts are loaded only when some channel has one (most convolutions: none).
        let block = RequantizationBlock(
            multipliers: loadLanes(multipliers + offset), leftShifts: shiftsLeft ? loadLanes(leftShifts + offset) : SIMD16(),
            rightShifts: loadLanes(rightShifts + offset), saturates: saturates, shiftsLeft: shiftsLeft,
            zeroPoint: zeroPoint, minimum: minimum, maximum: maximum)
        storeLowBytes(block.apply(values), to: destination, count: columns - column)
    }
}

/// Stores the raw 32-bit results (tests, and kernels with their own output stage).
extension AccumulatorGEMMOutput: IntegerGEMMOutput {
    var vnniStage: VNNIStage? { .accumulators(self) }

    @inline(always)
    func store(_ values: SIMD16<Int32>, row: Int, column: Int) {
        let destination = base + row * rowStride + column
        for lane in 0 ..< min(16, columns - column) { destination[lane] = values[lane] }
    }
}

/// What packing weight bytes needs to know before it writes a panel: each column's
/// `Σ_k (w − zp)` (the padding adds 0) and the extremes of all the weights, the padding's 0
/// among them, from one pass over the bytes.
struct WeightByteStatistics {
    /// `Σ_k (w − zp)` of each column (wrapping, as the bias folding uses it).
    let sums: [Int32]
    /// The smallest and largest `w − zp`, as `IntegerGEMM`'s packing of values finds them (255
    /// and −255 when there are no weights).
    let lowest: Int32, highest: Int32

    init(_ bytes: UnsafeRawBufferPointer, columns: Int, rowLength: Int, depth: Int, encoding: WeightEncoding) {
        // int8 bytes with their sign bit flipped: unsigned order is then the values' order, and
        // the value is `key − base`.
        let flip: UInt8 = encoding.isSigned ? 0x80 : 0
        let base = (encoding.isSigned ? 128 : 0) &+ encoding.zeroPoint
        var lowKey: UInt8 = 255, highKey: UInt8 = 0
        var sums = [Int32](repeating: 0, count: columns)
        if let source = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) {
            for n in 0 ..< columns {
                let row = source + n * rowLength
                var sum: UInt32 = 0, low: UInt8 = 255, high: UInt8 = 0
                // Runs of at most 257 keys summed in 16 bits (257 · 255 < 2^16), which LLVM
                // vectorizes twice as wide as a 32-bit sum.
                var start = 0
                while start < rowLength {
                    let end = min(rowLength, start + 257)
                    var run: UInt16 = 0
                    for k in start ..< end {
                        let key = row[k] ^ flip
                        run &+= UInt16(key)
                        low = min(low, key)
                        high = max(high, key)
                    }
                    sum &+= UInt32(run)
                    start = end
                }
                sums[n] = Int32(truncatingIfNeeded: sum) &- Int32(truncatingIfNeeded: rowLength) &* base
                lowKey = min(lowKey, low)
                highKey = max(highKey, high)
            }
        }
        var lowest: Int32 = 255, highest: Int32 = -255
        if columns > 0, rowLength > 0 {
            lowest = Int32(lowKey) - base
            highest = Int32(highKey) - base
        }
        if columns > 0, rowLength < depth {
            lowest = min(lowest, 0)
            highest = max(highest, 0)
        }
        self.sums = sums
        self.lowest = lowest
        self.highest = highest
    }

    /// `s`, which the `.avx512vnni` layout subtracts from every weight so that all fit `Int8`:
    /// 0 when they fit as they are, else the lowest moved to −128.
    var offset: Int32 { lowest < -128 || highest > 127 ? lowest + 128 : 0 }

    /// The layout to pack directly from the bytes for a product asked to use `layout`: itself
    /// when it is `.avx512vnni` (and every weight fits `Int8` once offset: a byte's 256 values
    /// and the padding's 0, which is the value of the byte `zp`, always do for a valid zero
    /// point) or `.avx2`; `.avx2Bytes` where every weight fits `Int8` as it is, else `.avx2`;
    /// nil for `.int16` or weights outside −255...255, which take the general form.
    func directLayout(for layout: IntegerGEMM.Layout) -> IntegerGEMM.Layout? {
        guard lowest >= -255, highest <= 255 else { return nil }
        switch layout {
        case .avx512vnni: return highest - offset <= 127 ? .avx512vnni : nil
        case .avx2: return .avx2
        case .avx2Bytes: return lowest >= -128 && highest <= 127 ? .avx2Bytes : .avx2
        case .int16: return nil
        }
    }
}
