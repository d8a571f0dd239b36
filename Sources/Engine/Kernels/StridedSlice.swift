/// STRIDED_SLICE: numpy basic slicing `input[b0:e0:s0, …]` with constant int32 `begin`, `end` and
/// `strides`, resolved exactly as TFLite's kernel does (`strided_slice.cc` and
/// `strided_slice_logic.h`): the ellipsis and new-axis masks are first rewritten into an
/// "effective" input with inserted size-1 dimensions, then each dimension's start and end are made
/// non-negative and clamped, and begin/end masks select the full range.
enum StridedSlice {
    static let input = 0, begin = 1, end = 2, strides = 3, output = 0

    /// What a slice reads: for every dimension of the effective input, the first index, how many
    /// indices and the step between them.
    struct Slicing: Equatable {
        /// The input's shape with a 1 inserted for every new axis.
        var inputShape: [Int]
        var starts: [Int], counts: [Int], steps: [Int]
        /// `counts` without the shrunk dimensions.
        var outputShape: [Int]
    }

    /// Why the begin/end/strides or masks cannot slice the input.
    struct Invalid: Error, Equatable {
        var reason: String
    }

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        guard case .stridedSlice(let options) = context.node.options else { throw context.invalid("missing StridedSliceOptions") }
        try context.expect(inputs: 4 ... 4, outputs: 1)
        let input = try context.input(Self.input), output = try context.output(Self.output)
        guard input.dataType == output.dataType, let size = input.dataType.byteSize else {
            throw context.unsupported("input type \(input.dataType) with output type \(output.dataType)")
        }
        var vectors = [[Int]]()
        for (slot, role) in [(Self.begin, "begin"), (Self.end, "end"), (Self.strides, "strides")] {
            let t = try context.input(slot)
            try context.expect(t, is: .int32, role: role)
            try context.expect(t, rank: 1, role: role)
            vectors.append(try context.constant(slot).elements(as: Int32.self).map(Int.init))
        }
        guard vectors[1].count == vectors[0].count, vectors[2].count == vectors[0].count else {
            throw context.invalid("begin, end and strides have \(vectors.map(\.count)) elements; they must have equal lengths")
        }
        if options.offset && (options.ellipsisMask != 0 || options.newAxisMask != 0) {
            throw context.unsupported("offset together with ellipsis_mask or new_axis_mask")
        }
        let slicing: Slicing
        do {
            slicing = try resolve(inputShape: input.shape, begin: vectors[0], end: vectors[1], strides: vectors[2], options: options)
        } catch {
            throw context.invalid(error.reason)
        }
        try context.setOutputShape(Self.output, slicing.outputShape)
        // An empty output: nothing to copy. Its starts and steps are not checked, and the sizes of
        // an empty input may be anything: a step of −65 534 times the stride of [0, 525 569, 6,
        // 805 306 371]'s second dimension overflowed `Int` below.
        if slicing.counts.contains(0) {
            return StridedSliceKernel<UInt8>(input: 0, output: 0, offset: 0, counts: [], steps: [])
        }
        // Every index the kernel reads, start + k·step for k in 0 ..< count, is in 0 ..< size
        // along its dimension (the first and the last suffice: the steps are uniform): checked here.
        for d in slicing.inputShape.indices {
            let first = slicing.starts[d], last = first + (slicing.counts[d] - 1) * slicing.steps[d]
            guard (0 ..< slicing.inputShape[d]).contains(first), (0 ..< slicing.inputShape[d]).contains(last) else {
                throw context.invalid("dimension \(d) reads indices \(first) through \(last) of an input of size \(slicing.inputShape[d])")
            }
        }

        // Dimensions read once only move the start; the rest become loops.
        var offset = 0, stride = 1, counts = [Int](), steps = [Int]()
        for d in slicing.inputShape.indices.reversed() {
            offset += slicing.starts[d] * stride
            if slicing.counts[d] != 1 {
                counts.insert(slicing.counts[d], at: 0)
                steps.insert(slicing.steps[d] * stride, at: 0)
            }
            stride *= slicing.inputShape[d]
        }
        if counts.isEmpty { (counts, steps) = ([1], [1]) }
        let (i, o) = (context.node.inputs[Self.input], context.node.outputs[Self.output])
        switch size {
        case 1: return StridedSliceKernel<UInt8>(input: i, output: o, offset: offset, counts: counts, steps: steps)
        case 2: return StridedSliceKernel<UInt16>(input: i, output: o, offset: offset, counts: counts, steps: steps)
        case 4: return StridedSliceKernel<UInt32>(input: i, output: o, offset: offset, counts: counts, steps: steps)
        default: return StridedSliceKernel<UInt64>(input: i, output: o, offset: offset, counts: counts, steps: steps)
        }
    }

    /// Resolves a slice of `inputShape` the way TFLite does.
    ///
    /// For example `x[:, 1:, ::2, 0]` on a `[1, 5, 6, 3]` input is begin `[0, 1, 0, 0]`, end
    /// `[0, 0, 0, 1]`, strides `[1, 1, 2, 1]`, begin mask 5, end mask 7, shrink mask 8: starts
    /// `[0, 1, 0, 0]`, counts `[1, 4, 3, 1]`, output shape `[1, 4, 3]`.
    static func resolve(inputShape: [Int], begin: [Int], end: [Int], strides: [Int],
                        options o: StridedSliceOptions) throws(Invalid) -> Slicing {
        func bit(_ mask: Int, _ i: Int) -> Bool { i >= 0 && i < 32 && mask & (1 << i) != 0 }
        let specs = begin.count, rank = inputShape.count

        // New axes outside the ellipsis add dimensions to the effective input.
        let newAxes = (0 ..< specs).filter { !bit(o.ellipsisMask, $0) && bit(o.newAxisMask, $0) }.count
        // (LiteRT 2.x slices any rank; older TFLite stopped at 5 dimensions.)
        let dims = rank + newAxes

        // The ellipsis stands for as many full dimensions as the specs leave unnamed; a new axis
        // bit at the ellipsis's own position has no effect.
        var ellipsis = [Bool](repeating: false, count: dims), newAxis = ellipsis
        var ellipsisStart = dims, expanded = 0
        var i = 0
        while i < dims {
            if bit(o.ellipsisMask, i) {
                ellipsisStart = i
                let ellipsisEnd = max(i + 1, min(i + 1 + newAxes + rank - specs, dims))
                expanded = ellipsisEnd - ellipsisStart - 1
                while i < ellipsisEnd { ellipsis[i] = true; i += 1 }
                continue
            }
            newAxis[i] = bit(o.newAxisMask, i - expanded)
            i += 1
        }

        var slicing = Slicing(inputShape: [], starts: [], counts: [], steps: [], outputShape: [])
        var added = 0, ellipsisSkipped = 0
        for d in 0 ..< dims {
            var (b, e, s) = (0, 0, 1)
            var (fromFirst, toLast, shrink) = (false, false, false)
            var size = 1
            if newAxis[d] {
                (b, e) = (0, 1)
                added += 1
            } else {
                guard (0 ..< rank).contains(d - added) else {
                    throw Invalid(reason: "the masks (ellipsis \(o.ellipsisMask), new axis \(o.newAxisMask)) do not fit input rank \(rank)")
                }
                size = inputShape[d - added]
                if ellipsis[d] {
                    ellipsisSkipped = max(0, d - ellipsisStart)
                    (fromFirst, toLast) = (true, true)
                } else if d >= specs + expanded {
                    (fromFirst, toLast) = (true, true)
                } else {
                    let spec = d - ellipsisSkipped
                    guard (0 ..< specs).contains(spec) else {
                        throw Invalid(reason: "the masks (ellipsis \(o.ellipsisMask), new axis \(o.newAxisMask)) do not fit \(specs) slice specs")
                    }
                    (b, e, s) = (begin[spec], end[spec], strides[spec])
                    (fromFirst, toLast, shrink) = (bit(o.beginMask, spec), bit(o.endMask, spec), bit(o.shrinkAxisMask, spec))
                }
            }
            guard s != 0 else { throw Invalid(reason: "stride of dimension \(d) is 0") }

            // StridedSliceStartForAxis / StridedSliceEndForAxis.
            var start = b < 0 ? b + size : b
            start = s > 0 ? min(max(start, 0), size) : min(max(start, -1), size - 1)
            if fromFirst { start = s > 0 ? 0 : size - 1 }
            var stop: Int
            if shrink {
                stop = start >= size ? start : start + 1
            } else {
                stop = o.offset ? e + start : e
                if stop < 0 { stop += size }
                stop = s > 0 ? min(max(stop, 0), size) : min(max(stop, -1), size - 1)
                if toLast { stop = s > 0 ? size : -1 }
            }
            let count = max(0, ceilingDivision(stop - start, s))
            if shrink {
                guard count == 1 else { throw Invalid(reason: "shrunk dimension \(d) (index \(b), stride \(s)) selects no element of size \(size)") }
            } else {
                // With `offset`, TFLite sizes the output from `end` alone (the slice's length).
                let length = o.offset ? max(0, ceilingDivision(e, s)) : count
                guard length == count else {
                    throw Invalid(reason: "offset slice of dimension \(d) (begin \(b), length \(e), stride \(s)) leaves the input of size \(size)")
                }
                slicing.outputShape.append(count)
            }
            slicing.inputShape.append(size)
            slicing.starts.append(start)
            slicing.counts.append(count)
            slicing.steps.append(s)
        }
        return slicing
    }

    /// ⌈a / b⌉ for b ≠ 0 (TFLite computes it in float, which is exact for tensor-sized values).
    static func ceilingDivision(_ a: Int, _ b: Int) -> Int {
        let (q, r) = a.quotientAndRemainder(dividingBy: b)
        return r != 0 && (r > 0) == (b > 0) ? q + 1 : q
    }
}

/// Gathers the slice: nested loops over `counts` with input steps `steps` (in elements), from
/// input element `offset`; a unit innermost step is one block copy.
struct StridedSliceKernel<Element>: Kernel {
    let input: Int, output: Int
    let offset: Int
    let counts: [Int], steps: [Int]

    func eval(_ memory: TensorMemory) {
        guard !counts.isEmpty else { return }
        var out = memory.output(output, as: Element.self)
        copy(level: 0, from: memory.input(input, as: Element.self) + offset, to: &out)
    }

    private func copy(level: Int, from source: UnsafePointer<Element>, to out: inout UnsafeMutablePointer<Element>) {
        let n = counts[level], step = steps[level]
        if level == counts.count - 1 {
            if step == 1 {
                out.update(from: source, count: n)
            } else {
                for i in 0 ..< n { out[i] = source[i * step] }
            }
            out += n
            return
        }
        for i in 0 ..< n { copy(level: level + 1, from: source + i * step, to: &out) }
    }
}
