/// The column sums of a spatial mean: each column of a row-major `rows × columns` matrix (an
/// image's `[H·W, C]`) added into `sums[column]`, row after row, so that a float column gets the
/// sum a plain walk in memory order gives. Sixteen columns per vector and up to 64 per pass over
/// a block of rows, the sums in registers instead of going through memory for every row; the
/// last columns (fewer than 16) one at a time. The rows go in blocks of about 16 KiB, so that
/// every pass after a block's first reads it from L1.
enum ColumnSums {
    static func add<Element: ColumnSummand>(_ source: UnsafePointer<Element>, rows: Int, columns: Int,
                                            into sums: UnsafeMutablePointer<Element.Sum>) {
        let block = max(1, 16 * 1024 / max(1, columns * MemoryLayout<Element>.stride))
        var first = 0
        while first < rows {
            let count = min(block, rows - first)
            addBlock(source + first * columns, rows: count, columns: columns, into: sums)
            first += count
        }
    }

    @inline(always)
    private static func addBlock<Element: ColumnSummand>(_ source: UnsafePointer<Element>, rows: Int, columns: Int,
                                                         into sums: UnsafeMutablePointer<Element.Sum>) {
        typealias Lanes = SIMD16<Element.Sum>
        @inline(always)
        func load(_ p: UnsafeMutablePointer<Element.Sum>) -> Lanes { UnsafeRawPointer(p).loadUnaligned(as: Lanes.self) }
        @inline(always)
        func store(_ v: Lanes, _ p: UnsafeMutablePointer<Element.Sum>) { UnsafeMutableRawPointer(p).storeBytes(of: v, as: Lanes.self) }
        /// Columns `column ..< column + 16 · vectors` (`vectors` 1...4, a constant where inlined).
        @inline(always)
        func pass(_ vectors: Int, from column: Int) {
            let s = sums + column
            var s0 = load(s)
            var s1 = vectors > 1 ? load(s + 16) : s0, s2 = vectors > 2 ? load(s + 32) : s0, s3 = vectors > 3 ? load(s + 48) : s0
            var p = source + column
            for _ in 0 ..< rows {
                s0 = Element.adding(s0, p)
                if vectors > 1 { s1 = Element.adding(s1, p + 16) }
                if vectors > 2 { s2 = Element.adding(s2, p + 32) }
                if vectors > 3 { s3 = Element.adding(s3, p + 48) }
                p += columns
            }
            store(s0, s)
            if vectors > 1 { store(s1, s + 16) }
            if vectors > 2 { store(s2, s + 32) }
            if vectors > 3 { store(s3, s + 48) }
        }
        var column = 0
        while columns - column >= 64 {
            pass(4, from: column)
            column += 64
        }
        switch (columns - column) / 16 {
        case 3: pass(3, from: column)
        case 2: pass(2, from: column)
        case 1: pass(1, from: column)
        default: break
        }
        column += (columns - column) / 16 * 16
        for c in column ..< columns {
            var sum = sums[c]
            var p = source + c
            for _ in 0 ..< rows {
                sum = Element.adding(sum, p.pointee)
                p += columns
            }
            sums[c] = sum
        }
    }
}

/// An element type whose columns `ColumnSums` adds: 8-bit integers into `Int32` (wrapping, as
/// TFLite's `int32` sums), floats into floats.
protocol ColumnSummand {
    associatedtype Sum: SIMDScalar
    /// `sum` plus the sixteen elements at `p`, lane by lane.
    static func adding(_ sum: SIMD16<Sum>, _ p: UnsafePointer<Self>) -> SIMD16<Sum>
    /// `sum` plus `element`.
    static func adding(_ sum: Sum, _ element: Self) -> Sum
}

/// The 8-bit integers: sign- or zero-extended into `Int32` lanes, by the type's signedness (a
/// constant once specialised).
extension ColumnSummand where Self: FixedWidthInteger, Sum == Int32 {
    @inline(always)
    static func adding(_ sum: SIMD16<Int32>, _ p: UnsafePointer<Self>) -> SIMD16<Int32> {
        let raw = UnsafeRawPointer(p)
        return sum &+ (isSigned ? widened(raw.loadUnaligned(as: SIMD16<Int8>.self)) : widened(raw.loadUnaligned(as: SIMD16<UInt8>.self)))
    }

    @inline(always)
    static func adding(_ sum: Int32, _ element: Self) -> Int32 { sum &+ Int32(element) }
}

extension Int8: ColumnSummand { typealias Sum = Int32 }
extension UInt8: ColumnSummand { typealias Sum = Int32 }

extension Float: ColumnSummand {
    @inline(always)
    static func adding(_ sum: SIMD16<Float>, _ p: UnsafePointer<Float>) -> SIMD16<Float> {
        sum + UnsafeRawPointer(p).loadUnaligned(as: SIMD16<Float>.self)
    }

    @inline(always)
    static func adding(_ sum: Float, _ element: Float) -> Float { sum + element }
}
