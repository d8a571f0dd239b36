import CX86Intrinsics
import SIMDKernels
import SIMDKernelsAVX512

extension FloatGEMM {
    /// `W` and the bias in the layout `multiply` reads; immutable, so shareable across sessions.
    struct PackedWeights: Sendable {
        let n: Int, k: Int
        /// Column blocks in order; the block of `width` columns from `column` is `[k][width]` at `column · k`.
        let blocks: PackedBuffer<Float>
        /// The bias, zero-padded like the blocks.
        let bias: PackedBuffer<Float>

        /// `rows` weight rows of `k` from `source` as one block: `block[p · width + j] =
        /// source[j · k + p]`. On x86-64 in 8 × 8 tiles through registers, 8 depths of every row
        /// of the block at a time (the 8 × `width` floats written stay in L1 and are written whole,
        /// where a weight at a time would store 4 bytes to a different line each time).
        private static func transpose(_ source: UnsafePointer<Float>, rows: Int, k: Int,
                                      into block: UnsafeMutablePointer<Float>, width: Int) {
            var p0 = 0, j0 = 0
            #if SWIFTLITE_AVX2
            let wholeRows = rows / 8 * 8
            while p0 + 8 <= k {
                j0 = 0
                while j0 < wholeRows {
                    swiftlite_transpose_8x8_floats(source + j0 * k + p0, k, block + p0 * width + j0, width)
                    j0 += 8
                }
                for j in j0 ..< rows {
                    for p in p0 ..< p0 + 8 { block[p * width + j] = source[j * k + p] }
                }
                p0 += 8
            }
            #endif
            for j in 0 ..< rows {
                for p in p0 ..< k { block[p * width + j] = source[j * k + p] }
            }
        }

        /// Packs `weights` (`[n][k]`, row-major) and `bias` (`n` values, zeros when nil).
        init(weights: UnsafeBufferPointer<Float>, bias: UnsafeBufferPointer<Float>?, n: Int, k: Int) {
            precondition(weights.count == n * k && (bias?.count ?? n) == n)
            self.n = n
            self.k = k
            var paddedColumns = 0
            while paddedColumns < n { paddedColumns += FloatGEMM.blockWidth(remaining: n - paddedColumns) }
            blocks = PackedBuffer(count: paddedColumns * k, initializedTo: 0)
            self.bias = PackedBuffer(count: paddedColumns, initializedTo: 0)
            var column = 0
            let source = weights.baseAddress!
            while column < n {
                let width = FloatGEMM.blockWidth(remaining: n - column), used = min(width, n - column)
                Self.transpose(source + column * k, rows: used, k: k, into: blocks.pointer + column * k, width: width)
                if let bias {
                    for j in 0 ..< used { self.bias.pointer[column + j] = bias[column + j] }
                }
                column += width
            }
        }
    }
}
