#if SWIFTLITE_AVX512
import CX86Intrinsics
#endif

/// How `IntegerGEMM` lays its weights out in panels, one packing per `Layout` (and, below, where
/// its tiles find a panel's weights and bias).
extension IntegerGEMM {
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
    static func packBytePairs(_ source: UnsafeRawPointer, into target: UnsafeMutableRawPointer, columns: Int, depth: Int,
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
    static func packVNNI(_ source: UnsafeRawPointer, into target: UnsafeMutableRawPointer, columns: Int, depth: Int,
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
    static func packPairs(_ source: UnsafeRawPointer, into target: UnsafeMutableRawPointer, columns: Int, depth: Int,
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

    /// The panels of `layout` for weights `w[n · depth + k]`, with their bytes and the weight
    /// offset they carry (`.avx512vnni` only: `offset`; zero padding past `columns` and `depth`).
    static func pack(_ w: UnsafePointer<Int16>, columns: Int, depth: Int, panelCount: Int, layout: Layout,
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
