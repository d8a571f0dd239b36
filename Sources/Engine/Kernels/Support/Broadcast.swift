/// Numpy broadcasting of two operands, planned once at prepare time.
///
/// Shapes are aligned at their last dimension (the shorter one is padded with leading 1s); each
/// pair of dimensions must be equal or contain a 1. The plan drops every output dimension of size 1
/// and merges neighbouring dimensions that broadcast the same way, so that eval runs at most six
/// nested loops whose innermost operand strides are 0 or 1:
///
/// ```swift
/// let plan = Broadcast([1, 8, 8, 16], [16])!
/// // plan.outputShape == [1, 8, 8, 16]
/// // plan.extents == [64, 16], plan.lhsStrides == [16, 1], plan.rhsStrides == [0, 1]
/// ```
///
/// Same-shape operands collapse to one flat loop, and a scalar operand to one loop with stride 0.
struct Broadcast: Sendable, Equatable {
    /// Most loop levels a plan may have (TFLite's broadcasting kernels stop at 6 dimensions too;
    /// same-shape operands of any rank collapse to one level).
    static let maxRank = 6

    let lhsShape: [Int], rhsShape: [Int]
    let outputShape: [Int]
    /// Loop extents, outermost first; never empty (a one-element output is `[1]`).
    let extents: [Int]
    /// Element strides of each operand per loop level; 0 where that operand is broadcast.
    let lhsStrides: [Int], rhsStrides: [Int]
    let outputCount: Int

    /// Plans `lhs ⊕ rhs`, or returns nil when the shapes do not broadcast.
    init?(_ lhs: [Int], _ rhs: [Int]) {
        guard let output = Self.outputShape(lhs, rhs) else { return nil }
        lhsShape = lhs
        rhsShape = rhs
        outputShape = output
        outputCount = output.reduce(1, *)
        let rank = output.count
        let l = Array(repeating: 1, count: rank - lhs.count) + lhs
        let r = Array(repeating: 1, count: rank - rhs.count) + rhs

        // Each output dimension of size > 1, with which operand (if any) repeats along it;
        // neighbours that repeat the same operand merge into one loop level.
        var levels = [(extent: Int, lhsRepeats: Bool, rhsRepeats: Bool)]()
        for d in 0 ..< rank where output[d] != 1 {
            let level = (extent: output[d], lhsRepeats: l[d] == 1, rhsRepeats: r[d] == 1)
            if let last = levels.last, last.lhsRepeats == level.lhsRepeats, last.rhsRepeats == level.rhsRepeats {
                levels[levels.count - 1].extent *= level.extent
            } else {
                levels.append(level)
            }
        }
        if levels.isEmpty { levels = [(1, true, true)] }

        var lhsStrides = [Int](repeating: 0, count: levels.count)
        var rhsStrides = [Int](repeating: 0, count: levels.count)
        var lhsStep = 1, rhsStep = 1
        for i in levels.indices.reversed() {
            if !levels[i].lhsRepeats { lhsStrides[i] = lhsStep; lhsStep *= levels[i].extent }
            if !levels[i].rhsRepeats { rhsStrides[i] = rhsStep; rhsStep *= levels[i].extent }
        }
        extents = levels.map(\.extent)
        self.lhsStrides = lhsStrides
        self.rhsStrides = rhsStrides
    }

    /// The numpy broadcast of two shapes, or nil when a pair of aligned dimensions differs and
    /// neither is 1.
    static func outputShape(_ lhs: [Int], _ rhs: [Int]) -> [Int]? {
        let rank = max(lhs.count, rhs.count)
        var output = [Int](repeating: 1, count: rank)
        for d in 0 ..< rank {
            let a = d < rank - lhs.count ? 1 : lhs[d - (rank - lhs.count)]
            let b = d < rank - rhs.count ? 1 : rhs[d - (rank - rhs.count)]
            guard a == b || a == 1 || b == 1 else { return nil }
            output[d] = a == 1 ? b : a
        }
        return output
    }

    /// True when both operands have the output's shape (up to leading 1s): one flat loop.
    var isElementwise: Bool { extents.count == 1 && lhsStrides[0] == 1 && rhsStrides[0] == 1 }

    /// The output as rows of `width` along which both operands step by one, one operand the same
    /// row for every output row (its stride 0) and the other the next row (stride `width`): a
    /// squeeze-and-excitation block's `[1, h, w, c] · [1, 1, 1, c]`, the scale on either side. Nil
    /// for every other plan.
    var repeatedRow: (lhsStride: Int, rhsStride: Int, width: Int)? {
        guard extents.count == 2, innerStrides == (1, 1), lhsStrides[0] == 0 || rhsStrides[0] == 0 else { return nil }
        return (lhsStrides[0], rhsStrides[0], extents[1])
    }

    /// What a kernel shares out over threads (`spans`): with one loop level, its elements; with
    /// more, the rows of the innermost level (`extents.last` elements each).
    var units: Int { extents.count == 1 ? outputCount : outputCount / extents[extents.count - 1] }

    /// The granularity to cut `units` at: whole cache lines of floats (16 elements) with one loop
    /// level, single rows with more.
    var unitGranularity: Int { extents.count == 1 ? 16 : 1 }

    /// The operands' strides along the innermost level: each 0 (repeated) or 1 (contiguous).
    var innerStrides: (lhs: Int, rhs: Int) { (lhsStrides[lhsStrides.count - 1], rhsStrides[rhsStrides.count - 1]) }

    /// Calls `body(lhsOffset, rhsOffset, outputOffset, count)` for the contiguous runs of output
    /// that `units` (a range of `units`) covers, in order: output elements
    /// `outputOffset ..< outputOffset + count`, whose operands start at element `lhsOffset` and
    /// `rhsOffset` and step by `innerStrides`. One run of the units' elements with one loop level,
    /// one run per row with more; rows are followed like an odometer, one division per level at
    /// the first.
    @inline(__always)
    func spans(_ units: Range<Int>, _ body: (_ lhs: Int, _ rhs: Int, _ output: Int, _ count: Int) -> Void) {
        guard !units.isEmpty else { return }
        let (la, rb) = innerStrides
        guard extents.count > 1 else {
            body(units.lowerBound * la, units.lowerBound * rb, units.lowerBound, units.count)
            return
        }
        let outer = extents.count - 1, n = extents[outer]
        withUnsafeTemporaryAllocation(of: Int.self, capacity: outer) { index in
            var lhs = 0, rhs = 0, rest = units.lowerBound
            for level in (0 ..< outer).reversed() {
                index[level] = rest % extents[level]
                rest /= extents[level]
                lhs += index[level] * lhsStrides[level]
                rhs += index[level] * rhsStrides[level]
            }
            for row in units {
                body(lhs, rhs, row * n, n)
                var level = outer - 1
                while level >= 0 {
                    index[level] += 1
                    lhs += lhsStrides[level]
                    rhs += rhsStrides[level]
                    if index[level] < extents[level] { break }
                    lhs -= extents[level] * lhsStrides[level]
                    rhs -= extents[level] * rhsStrides[level]
                    index[level] = 0
                    level -= 1
                }
            }
        }
    }

    /// Computes `output[i] = op(lhs[…], rhs[…])` over the broadcast output, in row-major order.
    ///
    /// `op` is inlined into the loops; the innermost loop is specialised for contiguous and
    /// repeated operands.
    @inline(__always)
    func apply<A, B, R>(_ lhs: UnsafePointer<A>, _ rhs: UnsafePointer<B>, _ output: UnsafeMutablePointer<R>,
                        _ op: (A, B) -> R) {
        if outputCount == 0 { return }
        // Pad the plan to exactly `maxRank` levels so that the loop nest is fixed.
        let pad = Self.maxRank - extents.count
        @inline(__always) func e(_ i: Int) -> Int { i < pad ? 1 : extents[i - pad] }
        @inline(__always) func ls(_ i: Int) -> Int { i < pad ? 0 : lhsStrides[i - pad] }
        @inline(__always) func rs(_ i: Int) -> Int { i < pad ? 0 : rhsStrides[i - pad] }
        let (e0, e1, e2, e3, e4, n) = (e(0), e(1), e(2), e(3), e(4), e(5))
        let (la0, la1, la2, la3, la4, la) = (ls(0), ls(1), ls(2), ls(3), ls(4), ls(5))
        let (rb0, rb1, rb2, rb3, rb4, rb) = (rs(0), rs(1), rs(2), rs(3), rs(4), rs(5))
        var out = output
        for i0 in 0 ..< e0 {
            for i1 in 0 ..< e1 {
                for i2 in 0 ..< e2 {
                    for i3 in 0 ..< e3 {
                        for i4 in 0 ..< e4 {
                            let a = lhs + (i0 * la0 + i1 * la1 + i2 * la2 + i3 * la3 + i4 * la4)
                            let b = rhs + (i0 * rb0 + i1 * rb1 + i2 * rb2 + i3 * rb3 + i4 * rb4)
                            if la == 1 && rb == 1 {
                                for i in 0 ..< n { out[i] = op(a[i], b[i]) }
                            } else if la == 0 && rb == 1 {
                                let x = a[0]
                                for i in 0 ..< n { out[i] = op(x, b[i]) }
                            } else if la == 1 && rb == 0 {
                                let y = b[0]
                                for i in 0 ..< n { out[i] = op(a[i], y) }
                            } else {
                                for i in 0 ..< n { out[i] = op(a[i * la], b[i * rb]) }
                            }
                            out += n
                        }
                    }
                }
            }
        }
    }
}

extension PrepareContext {
    /// Validates a two-operand elementwise operator (ADD, SUB, MUL): both inputs and the output
    /// share one element type, and the input shapes broadcast. Sets the output's shape.
    mutating func broadcast(lhs: Int, rhs: Int, output: Int) throws(ModelError) -> Broadcast {
        let a = try input(lhs), b = try input(rhs), out = try self.output(output)
        guard a.dataType == b.dataType, a.dataType == out.dataType else {
            throw invalid("operand types \(a.dataType) and \(b.dataType) with output \(out.dataType) must all be equal")
        }
        guard let plan = Broadcast(a.shape, b.shape) else {
            throw invalid("operand shapes \(a.shape) ('\(a.name)') and \(b.shape) ('\(b.name)') do not broadcast")
        }
        guard plan.extents.count <= Broadcast.maxRank else {
            throw unsupported("broadcasting \(a.shape) with \(b.shape) needs \(plan.extents.count) loop levels, at most \(Broadcast.maxRank)")
        }
        try setOutputShape(output, plan.outputShape)
        return plan
    }

    /// The clamp range of a fused activation on int32 values (TFLite's `CalculateActivationRange`).
    func int32ActivationRange(_ activation: FusedActivation) throws(ModelError) -> ClosedRange<Int32> {
        switch activation {
        case .none: return Int32.min ... Int32.max
        case .relu: return 0 ... Int32.max
        case .reluN1To1: return -1 ... 1
        case .relu6: return 0 ... 6
        case .tanh, .signBit: throw unsupported("fused activation \(activation) is not supported")
        }
    }
}
