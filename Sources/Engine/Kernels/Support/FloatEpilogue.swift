/// The element-wise operators after a float convolution that `Plan.fuse` runs inside it: an ADD
/// of another tensor of the output's shape (or of a PAD's zero-padding of one along its channels,
/// read from the PAD's input), a PRELU with one alpha per output channel, a RELU,
/// RELU6 or RELU_N1_TO_1, a HARD_SWISH, up to three in the model's order. `FloatGEMM.multiply`
/// applies them to each chunk of rows of `C` once its columns are stored, while it is in cache
/// (in L2 where the weights are small), and `DepthwiseConv2DFloat32` to each of its tiles, on the
/// thread that computed it; the convolution's own output is never written.
///
/// Each value goes through the arithmetic of the separate kernels (`ArithmeticFloat32`,
/// `PreluFloat32`, `ReluFloat32`, `HardSwishFloat32`), in the same order: the fused step writes
/// their bytes.
///
/// Everything but an ADD's other operand, which lives in a session's memory, is resolved at
/// prepare (`prepared`); binding, once per tile at eval, only fills in that pointer.
/// (`@unchecked`: `prepared` points into `alphas`, which this value keeps alive and nothing changes.)
struct FloatEpilogue: @unchecked Sendable {
    enum Stage: Sendable {
        /// `clamp(c + other)`, or `clamp(other + c)` where the ADD lists the other tensor first;
        /// `other` has the output's shape.
        case add(other: Int, otherFirst: Bool, lower: Float, upper: Float)
        /// `add` of `other` padded with +0 along its innermost dimension (a PAD's output, which
        /// is not written): each output pixel's first `padding.otherChannels` channels add
        /// `other`'s, the rest add +0.
        case paddedAdd(other: Int, padding: ChannelPadding, otherFirst: Bool, lower: Float, upper: Float)
        /// `c ≥ 0 ? c : c · alpha[channel]`, one alpha per output channel.
        case prelu(alpha: PackedBuffer<Float>)
        /// `clamp(c)` (a RELU-family operator).
        case clamp(lower: Float, upper: Float)
        /// `c · clamp(c + 3, 0, 6) / 6`.
        case hardSwish
    }

    static let maxStages = 3

    /// A padded ADD operand's channels (`otherChannels`) against the output's (`channels`).
    struct ChannelPadding: Sendable {
        var otherChannels, channels: Int
    }

    /// The stages in order, the alphas as pointers into `alphas`, an ADD's operand unbound.
    private let prepared: Bound
    private let alphas: [PackedBuffer<Float>]

    /// At most `maxStages` stages, in order.
    init(stages: [Stage]) {
        precondition(stages.count <= Self.maxStages)
        var steps = [Bound.Step](repeating: .none, count: Self.maxStages), alphas = [PackedBuffer<Float>]()
        for (i, stage) in stages.enumerated() {
            switch stage {
            case let .add(other, otherFirst, lower, upper):
                steps[i] = .add(tensor: other, other: nil, otherFirst: otherFirst, lower: lower, upper: upper)
            case let .paddedAdd(other, padding, otherFirst, lower, upper):
                steps[i] = .paddedAdd(tensor: other, other: nil, start: 0, padding: padding, otherFirst: otherFirst,
                                      lower: lower, upper: upper)
            case let .prelu(alpha):
                alphas.append(alpha)
                steps[i] = .prelu(alpha: UnsafePointer(alpha.pointer))
            case let .clamp(lower, upper):
                steps[i] = .clamp(lower: lower, upper: upper)
            case .hardSwish:
                steps[i] = .hardSwish
            }
        }
        prepared = Bound(steps: (steps[0], steps[1], steps[2]), count: stages.count)
        self.alphas = alphas
    }

    /// The stage that `kernel` computes on `producer`, a float tensor of `channels` channels
    /// (innermost) that no other operator reads, with the tensor it writes; nil for any other
    /// operator or operand layout.
    static func stage(_ kernel: any Kernel, on producer: Int, channels: Int, tensors: [TensorDescriptor]) -> (Stage, output: Int)? {
        if let add = kernel as? ArithmeticFloat32<Addition>, add.broadcast.isElementwise, add.lhs != add.rhs,
           add.lhs == producer || add.rhs == producer {
            let other = add.lhs == producer ? add.rhs : add.lhs
            guard !tensors[other].isConstant else { return nil }
            return (.add(other: other, otherFirst: other == add.lhs, lower: add.lower, upper: add.upper), add.output)
        }
        if let prelu = kernel as? PreluFloat32, prelu.input == producer, prelu.alpha != producer,
           let alphas = perChannel(tensors[prelu.alpha], channels: channels) {
            return (.prelu(alpha: alphas), prelu.output)
        }
        if let relu = kernel as? ReluFloat32, relu.input == producer {
            return (.clamp(lower: relu.lower, upper: relu.upper), relu.output)
        }
        if let hardSwish = kernel as? HardSwishFloat32, hardSwish.input == producer {
            return (.hardSwish, hardSwish.output)
        }
        return nil
    }

    /// The ADD `kernel` of `producer` (a float tensor of `channels` channels that no other
    /// operator reads) and of the output of `pad`, which pads a non-constant float tensor with +0
    /// after its innermost dimension to `channels`: the stage that reads the PAD's input instead,
    /// with the tensor the ADD writes; nil for any other operator or layout. The ADD of a padded
    /// channel computes `c + (+0)` as the separate kernels do (`−0` becomes `+0`).
    static func paddedAdd(_ kernel: any Kernel, on producer: Int, pad: PadKernel, channels: Int,
                          tensors: [TensorDescriptor]) -> (Stage, output: Int)? {
        guard let padding = pad.channelPadding, padding.outputChannels == channels, !tensors[pad.input].isConstant,
              let add = kernel as? ArithmeticFloat32<Addition>, add.broadcast.isElementwise,
              (add.lhs, add.rhs) == (producer, pad.output) || (add.lhs, add.rhs) == (pad.output, producer) else { return nil }
        let operand = ChannelPadding(otherChannels: padding.inputChannels, channels: channels)
        return (.paddedAdd(other: pad.input, padding: operand, otherFirst: add.lhs == pad.output, lower: add.lower, upper: add.upper),
                add.output)
    }

    /// A constant float alpha of one value per channel or one for all, broadcast along every
    /// other axis, as `channels` values; nil otherwise.
    private static func perChannel(_ alpha: TensorDescriptor, channels: Int) -> PackedBuffer<Float>? {
        guard alpha.dataType == .float32, let bytes = alpha.constantData?.bytes,
              alpha.shape.dropLast().allSatisfy({ $0 == 1 }), [1, channels].contains(alpha.shape.last ?? 1),
              bytes.count == (alpha.shape.last ?? 1) * MemoryLayout<Float>.stride else { return nil }
        let values = PackedBuffer<Float>(count: channels, initializedTo: 0)
        let shared = bytes.count == MemoryLayout<Float>.stride
        for j in 0 ..< channels {
            values.pointer[j] = bytes.loadUnaligned(fromByteOffset: (shared ? 0 : j) * MemoryLayout<Float>.stride, as: Float.self)
        }
        return values
    }

    /// The stages on one session's tensors, for a `C` that starts at the output's first element.
    func bound(memory: TensorMemory) -> Bound {
        func bind(_ step: Bound.Step) -> Bound.Step {
            switch step {
            case let .add(tensor, _, otherFirst, lower, upper):
                .add(tensor: tensor, other: memory.input(tensor, as: Float.self), otherFirst: otherFirst, lower: lower, upper: upper)
            case let .paddedAdd(tensor, _, start, padding, otherFirst, lower, upper):
                .paddedAdd(tensor: tensor, other: memory.input(tensor, as: Float.self), start: start, padding: padding,
                           otherFirst: otherFirst, lower: lower, upper: upper)
            default:
                step
            }
        }
        return Bound(steps: (bind(prepared.steps.0), bind(prepared.steps.1), bind(prepared.steps.2)), count: prepared.count)
    }

    /// The stages with their tensors' addresses, for the `C` of one `FloatGEMM.multiply`: the
    /// other operand of an ADD at the element `C` starts at (`advanced(by:)` moves it with `C`).
    /// Holds no references, so passing it costs nothing.
    struct Bound {
        enum Step {
            case none
            /// The other operand is tensor `tensor`, at `other` once bound.
            case add(tensor: Int, other: UnsafePointer<Float>?, otherFirst: Bool, lower: Float, upper: Float)
            /// The padded operand's first element is `other` once bound; `C`'s first element is
            /// element `start` of the output (the padded operand is not laid out as `C` is).
            case paddedAdd(tensor: Int, other: UnsafePointer<Float>?, start: Int, padding: ChannelPadding, otherFirst: Bool,
                           lower: Float, upper: Float)
            case prelu(alpha: UnsafePointer<Float>)
            case clamp(lower: Float, upper: Float)
            case hardSwish
        }

        var steps: (Step, Step, Step) = (.none, .none, .none)
        var count = 0

        /// The stages for a `C` that starts `elements` further on.
        func advanced(by elements: Int) -> Bound {
            func moved(_ step: Step) -> Step {
                switch step {
                case let .add(tensor, other, otherFirst, lower, upper):
                    .add(tensor: tensor, other: other.map { $0 + elements }, otherFirst: otherFirst, lower: lower, upper: upper)
                case let .paddedAdd(tensor, other, start, padding, otherFirst, lower, upper):
                    .paddedAdd(tensor: tensor, other: other, start: start + elements, padding: padding, otherFirst: otherFirst,
                               lower: lower, upper: upper)
                default:
                    step
                }
            }
            return Bound(steps: (moved(steps.0), moved(steps.1), moved(steps.2)), count: count)
        }

        /// Applies the stages to `rows` rows of `columns` values at `c` (rows `ldc` apart), whose
        /// first value is output channel `channel`, `offset` elements into the product's `C`. An
        /// ADD and the stage after it go over the block in one pass (each vector loaded and stored
        /// once); every other stage in a pass of its own. Each pass is a loop of 8 lanes and a
        /// scalar tail, and computes each stage's arithmetic in the model's order.
        func apply(_ c: UnsafeMutablePointer<Float>, offset: Int, ldc: Int, rows: Int, columns: Int, channel: Int) {
            let block = Block(c: c, ldc: ldc, rows: rows, columns: columns)
            var i = 0
            while i < count {
                let next = i + 1 < count ? step(i + 1) : .none
                i += Self.pass(step(i), then: next, block, offset: offset, channel: channel) ? 2 : 1
            }
        }

        private func step(_ i: Int) -> Step {
            switch i {
            case 0: steps.0
            case 1: steps.1
            default: steps.2
            }
        }

        /// The block of `C` that one `apply` goes over.
        private struct Block {
            let c: UnsafeMutablePointer<Float>
            let ldc: Int, rows: Int, columns: Int
        }

        /// One pass of `step`, and of `next` with it where `step` is an ADD; whether `next` was
        /// applied.
        private static func pass(_ step: Step, then next: Step, _ block: Block, offset: Int, channel: Int) -> Bool {
            switch step {
            case .none:
                return false
            case let .add(_, other, otherFirst, lower, upper):
                return pass(AddLanes(other: other! + offset, otherFirst: otherFirst, lower: lower, upper: upper), then: next, block,
                            channel: channel)
            case let .paddedAdd(_, other, start, padding, otherFirst, lower, upper):
                let add = PaddedAddLanes(other: other!, start: start + offset, padding: padding, otherFirst: otherFirst,
                                         lower: lower, upper: upper)
                return pass(add, then: next, block, channel: channel)
            case let .prelu(alpha):
                map(block, PreluLanes(alpha: alpha + channel), Identity())
            case let .clamp(lower, upper):
                map(block, ClampLanes(lower: lower, upper: upper), Identity())
            case .hardSwish:
                map(block, HardSwishLanes(), Identity())
            }
            return false
        }

        /// `first` (an ADD) with `next` in one pass where `next` is a PRELU, a clamp or a
        /// HARD_SWISH; alone otherwise. Whether `next` was applied.
        private static func pass<First: StageLanes>(_ first: First, then next: Step, _ block: Block, channel: Int) -> Bool {
            switch next {
            case let .prelu(alpha):
                map(block, first, PreluLanes(alpha: alpha + channel))
            case let .clamp(lower, upper):
                map(block, first, ClampLanes(lower: lower, upper: upper))
            case .hardSwish:
                map(block, first, HardSwishLanes())
            default:
                map(block, first, Identity())
                return false
            }
            return true
        }

        /// `c[r · ldc + j] = second(first(c[r · ldc + j]))` over the block, each stage told the
        /// value's place (`r · ldc + j` from the block's first value, column `j`): 8 columns at a
        /// time, then one at a time.
        @inline(__always)
        private static func map<First: StageLanes, Second: StageLanes>(_ block: Block, _ first: First, _ second: Second) {
            typealias Half = FloatGEMM.Half
            let c = block.c, columns = block.columns
            let whole = columns & ~(Half.scalarCount - 1), stride = MemoryLayout<Float>.stride
            var row = 0
            for _ in 0 ..< block.rows {
                let a = first.row(row), b = second.row(row)
                let base = UnsafeMutableRawPointer(c + row)
                var j = 0
                while j < whole {
                    let v = base.loadUnaligned(fromByteOffset: j &* stride, as: Half.self)
                    base.storeBytes(of: b.lanes(a.lanes(v, row &+ j, j), row &+ j, j), toByteOffset: j &* stride, as: Half.self)
                    j &+= Half.scalarCount
                }
                while j < columns {
                    c[row &+ j] = b.scalar(a.scalar(c[row &+ j], row &+ j, j), row &+ j, j)
                    j &+= 1
                }
                row &+= block.ldc
            }
        }
    }
}

/// One epilogue stage's arithmetic on 8 values and on one, given each value's place in the
/// block (`at`, from its first value) and its column (from the block's first channel); `row`
/// makes the stage for the row whose first value is at `at`.
private protocol StageLanes {
    func row(_ at: Int) -> Self
    func lanes(_ v: FloatGEMM.Half, _ at: Int, _ column: Int) -> FloatGEMM.Half
    func scalar(_ x: Float, _ at: Int, _ column: Int) -> Float
}

extension StageLanes {
    @inline(__always) func row(_ at: Int) -> Self { self }
}

/// No stage: the value as it is.
private struct Identity: StageLanes {
    @inline(__always) func lanes(_ v: FloatGEMM.Half, _ at: Int, _ column: Int) -> FloatGEMM.Half { v }
    @inline(__always) func scalar(_ x: Float, _ at: Int, _ column: Int) -> Float { x }
}

/// `clamp(c + other)` (`other + c` where the ADD lists it first), `other` laid out as the
/// block's `C` from the block's first value. An unbounded range clamps nothing (`FloatGEMM.clamp`
/// changes only values outside it), so it is skipped.
private struct AddLanes: StageLanes {
    let other: UnsafePointer<Float>
    let otherFirst: Bool
    let lower: Float, upper: Float

    @inline(__always)
    func lanes(_ v: FloatGEMM.Half, _ at: Int, _ column: Int) -> FloatGEMM.Half {
        let w = UnsafeRawPointer(other + at).loadUnaligned(as: FloatGEMM.Half.self)
        let sum = otherFirst ? w + v : v + w
        return lower == -.infinity && upper == .infinity ? sum : FloatGEMM.clamp(sum, lower, upper)
    }

    @inline(__always)
    func scalar(_ x: Float, _ at: Int, _ column: Int) -> Float {
        FloatGEMM.clamp(otherFirst ? other[at] + x : x + other[at], lower, upper)
    }
}

/// The ADD of `other` padded with +0 along its innermost dimension (`Stage.paddedAdd`). The
/// block's value at `at` is output element `start + at`; a row lies in one output pixel, whose
/// channels below `padding.otherChannels` add `other`'s values of that pixel and the rest +0
/// (`row` finds the pixel once per row).
private struct PaddedAddLanes: StageLanes {
    let other: UnsafePointer<Float>
    let start: Int
    let padding: FloatEpilogue.ChannelPadding
    let otherFirst: Bool
    let lower: Float, upper: Float
    /// For one row: its pixel's `other` values from the row's first channel, and how many of
    /// the row's columns are such channels.
    var source: UnsafePointer<Float>? = nil, shared = 0

    func row(_ at: Int) -> PaddedAddLanes {
        let element = start &+ at, pixel = element / padding.channels
        let channel = element &- pixel &* padding.channels
        var row = self
        row.source = other + (pixel &* padding.otherChannels &+ channel)
        row.shared = max(0, padding.otherChannels &- channel)
        return row
    }

    @inline(__always)
    func lanes(_ v: FloatGEMM.Half, _ column: Int) -> FloatGEMM.Half {
        typealias Half = FloatGEMM.Half
        var w = Half(repeating: 0)
        if column &+ Half.scalarCount <= shared {
            w = UnsafeRawPointer(source.unsafelyUnwrapped + column).loadUnaligned(as: Half.self)
        } else if column < shared {
            for lane in 0 ..< shared &- column { w[lane] = source.unsafelyUnwrapped[column &+ lane] }
        }
        let sum = otherFirst ? w + v : v + w
        return lower == -.infinity && upper == .infinity ? sum : FloatGEMM.clamp(sum, lower, upper)
    }

    @inline(__always)
    func lanes(_ v: FloatGEMM.Half, _ at: Int, _ column: Int) -> FloatGEMM.Half { lanes(v, column) }

    @inline(__always)
    func scalar(_ x: Float, _ at: Int, _ column: Int) -> Float {
        let w: Float = column < shared ? source.unsafelyUnwrapped[column] : 0
        return FloatGEMM.clamp(otherFirst ? w + x : x + w, lower, upper)
    }
}

/// `c ≥ 0 ? c : c · alpha[column]`, `alpha` from the block's first channel.
private struct PreluLanes: StageLanes {
    let alpha: UnsafePointer<Float>

    @inline(__always)
    func lanes(_ v: FloatGEMM.Half, _ at: Int, _ column: Int) -> FloatGEMM.Half {
        PreluFloat32.prelu(v, UnsafeRawPointer(alpha + column).loadUnaligned(as: FloatGEMM.Half.self))
    }

    @inline(__always)
    func scalar(_ x: Float, _ at: Int, _ column: Int) -> Float { PreluFloat32.prelu(x, alpha[column]) }
}

/// `clamp(c)`.
private struct ClampLanes: StageLanes {
    let lower: Float, upper: Float

    @inline(__always)
    func lanes(_ v: FloatGEMM.Half, _ at: Int, _ column: Int) -> FloatGEMM.Half { FloatGEMM.clamp(v, lower, upper) }

    @inline(__always)
    func scalar(_ x: Float, _ at: Int, _ column: Int) -> Float { FloatGEMM.clamp(x, lower, upper) }
}

/// `c · clamp(c + 3, 0, 6) / 6`.
private struct HardSwishLanes: StageLanes {
    @inline(__always)
    func lanes(_ v: FloatGEMM.Half, _ at: Int, _ column: Int) -> FloatGEMM.Half { HardSwishFloat32.hardSwish(v) }

    @inline(__always)
    func scalar(_ x: Float, _ at: Int, _ column: Int) -> Float { HardSwishFloat32.hardSwish(x) }
}
