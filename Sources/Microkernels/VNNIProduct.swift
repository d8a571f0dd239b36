// The `.avx512vnni` micro-kernels of the engine's `IntegerGEMM`, compiled for AVX-512 BW and
// VNNI whatever the engine's target (see Package.swift): the engine calls them only when the
// build targets VNNI or CPUID says the machine has it.
//
// Per group of 4 depths a tile loads one 64-byte vector per panel (16 columns × 4 signed weight
// bytes), broadcasts each row's 4 activation bytes (`vpbroadcastd` from memory; `Int8` rows are
// first copied with their sign bits flipped), and issues one `vpdpbusd` per row and panel: 64
// byte products summed into the 16 `Int32` lanes. A last group of 1–3 depths is assembled byte
// by byte, so no row is read past its `depth` bytes; its missing weights are zero.
//
// When the weights carry an offset `s` (uint8 weights, see `IntegerGEMM`), the rows of each
// block of `rowBlock` rows are first summed (`vpdpbusd` against bytes of ones) and `s · Σ A′`
// starts each row's accumulators.
#if SWIFTLITE_AVX512VNNI
import CX86Intrinsics

/// A product packed in `IntegerGEMM`'s `.avx512vnni` layout, as its kernels read it: panels of
/// 16 columns, `panel[p][k / 4][j][k % 4] = B[k, 16p + j] − s` as `Int8`, and 16 folded biases
/// per panel (see `IntegerGEMM`). It refers to memory the engine's product owns.
public struct VNNIProduct {
    let panels: UnsafeRawPointer
    let bias: UnsafePointer<Int32>
    let panelBytes: Int
    let panelCount: Int
    let depth: Int
    let weightOffset: Int32
    let signedActivations: Bool

    /// `panelCount` panels of `panelBytes` from `panels` (the first panel computed), their
    /// `panelCount × 16` biases from `bias`; `weightOffset` is `s`; rows of `Int8` when
    /// `signedActivations`.
    public init(panels: UnsafeRawPointer, bias: UnsafePointer<Int32>, panelBytes: Int, panelCount: Int, depth: Int,
                weightOffset: Int32, signedActivations: Bool) {
        self.panels = panels
        self.bias = bias
        self.panelBytes = panelBytes
        self.panelCount = panelCount
        self.depth = depth
        self.weightOffset = weightOffset
        self.signedActivations = signedActivations
    }

    static let panelWidth = 16
    /// Rows per block of row sums (a stack buffer of this many).
    public static let rowBlock = 256
    /// Bytes of `Int8` rows flipped to unsigned at once.
    static let flippedBlockBytes = 32 * 1024

    /// Rows per block: the row sums' block, or as many flipped rows as fit `flippedBlockBytes`
    /// (whole 16-row tiles, at least one).
    var blockRows: Int {
        signedActivations ? max(16, min(Self.rowBlock, Self.flippedBlockBytes / max(depth, 1)) / 16 * 16) : Self.rowBlock
    }

    /// Bytes of scratch one `multiply` needs: a block of flipped `Int8` rows (none for `UInt8` rows).
    public var scratchBytes: Int { signedActivations ? blockRows * depth : 0 }

    /// Rows `0 ..< rows` of the product (row `m` of `A` at `a + m · rowStride`), requantized to bytes
    /// (in the wide form when `output` has its constants, without its negative-product correction
    /// when the clamp makes that moot). `scratch` holds `scratchBytes` bytes
    /// (nil when that is 0).
    public func multiply(_ a: UnsafePointer<UInt8>, rows: Int, rowStride: Int, scratch: UnsafeMutableRawPointer?,
                         into output: RequantizedGEMMOutput) {
        if output.wide != nil, output.clampsBelowZeroPoint {
            multiplyRows(a, rows: rows, rowStride: rowStride, scratch: scratch, into: RequantizingStore<WideNonNegativeForm>(stage: output))
        } else if output.wide != nil {
            multiplyRows(a, rows: rows, rowStride: rowStride, scratch: scratch, into: RequantizingStore<WideForm>(stage: output))
        } else {
            multiplyRows(a, rows: rows, rowStride: rowStride, scratch: scratch, into: RequantizingStore<LaneForm>(stage: output))
        }
    }

    /// As above, the raw 32-bit results.
    public func multiply(_ a: UnsafePointer<UInt8>, rows: Int, rowStride: Int, scratch: UnsafeMutableRawPointer?,
                         into output: AccumulatorGEMMOutput) {
        multiplyRows(a, rows: rows, rowStride: rowStride, scratch: scratch, into: output)
    }

    /// Up to `rowBlock` rows of `A`, where their results go, and their accumulators'
    /// starting offsets `s · Σ_k A′[m, k]` (nil when `s` is 0).
    struct Block {
        let a: UnsafePointer<UInt8>
        let rowStride: Int
        /// Row of the product (and of the output) that `a` starts.
        let firstRow: Int
        let corrections: UnsafePointer<Int32>?
    }
}
#endif
