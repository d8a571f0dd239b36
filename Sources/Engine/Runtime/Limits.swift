/// Ceilings on what one untrusted input may make SwiftLite spend: memory, work, output sizes.
///
/// A model, an image or a metadata archive is a promise about sizes that costs nothing to write: a
/// 292-byte model can declare an `ADD` of two `[1, 16384, 16384]` floats (3 GiB of activations), a
/// 600-byte JPEG can claim 16000 × 16000 pixels, a 1 MB zip can inflate to 1 GiB. Every such claim
/// is checked against these limits from the headers alone, before any memory is allocated or any
/// kernel runs, and refused with an error that names the tensor, operator or file and the limit.
///
/// The defaults admit every real model SwiftLite targets with a wide margin; raise a limit for an
/// unusual trusted input, lower it for a small device or a server that takes uploads.
///
/// ```swift
/// var options = Interpreter.Options()
/// options.limits.maxActivationBytes = 256 << 20      // a 256 MiB arena at most
/// let interpreter = try Interpreter(modelPath: "upload.tflite", options: options)
///
/// var limits = Limits()
/// limits.maxImagePixels = 4096 * 4096
/// let image = try Image(data: upload, limits: limits)  // Tasks
/// ```
///
/// Which layer checks what: `Plan` checks `maxActivationBytes` and `maxMACsPerInvoke`;
/// `TFLite_Detection_PostProcess` checks `maxDetections` at prepare; the image decoders (Tasks)
/// check `maxImagePixels` from the header; the metadata reader (Tasks) checks
/// `maxAssociatedFileBytes` before and while inflating.
public struct Limits: Sendable, Equatable {
    /// Most bytes of activation memory (arena plus scratch) one session may allocate, and the most
    /// any single tensor may take. Default 1 GiB; MobileNet-class models need 5–30 MB.
    public var maxActivationBytes: Int = 1 << 30

    /// Most multiply-accumulates (or, for element-wise operators, elements touched; 256 per
    /// element for float EXP, LOGISTIC, TANH, GELU and SOFTMAX) one `invoke` may cost, estimated
    /// at prepare from the shapes. Default 50 G; MobileNetV2 needs 0.3 G, SSD MobileNet 1–2 G.
    /// Refuses absurd declared shapes that would run for minutes.
    public var maxMACsPerInvoke: Int = 50_000_000_000

    /// Most detection slots (`max_detections × max_classes_per_detection`) that
    /// `TFLite_Detection_PostProcess` may size its outputs for. Default 10 000; SSD models ask for
    /// 10–100.
    public var maxDetections: Int = 10_000

    /// Most pixels (`width × height`) a decoded image may have, checked from the header before
    /// any pixel memory is allocated. Default 178 956 970, Pillow's decompression-bomb threshold
    /// (`2 × Image.MAX_IMAGE_PIXELS`), 537 MB as RGB8. libjpeg's own working memory (progressive
    /// coefficient buffers) is capped at `8 × maxImagePixels` bytes.
    public var maxImagePixels: Int = 178_956_970

    /// Most bytes any file packed in a model's metadata archive (labels, vocabularies) may have,
    /// checked against the archive's header and enforced while inflating. Default 16 MiB; label
    /// files are kilobytes.
    public var maxAssociatedFileBytes: Int = 16 << 20

    /// The defaults.
    public init() {}

    /// The defaults.
    public static let `default` = Limits()
}

extension Limits {
    /// `"123 bytes"`, or `"1073741824 bytes (1024 MiB)"` for a mebibyte and more.
    static func describe(_ bytes: Int) -> String {
        bytes >= 1 << 20 ? "\(bytes) bytes (\(bytes >> 20) MiB)" : "\(bytes) bytes"
    }

    /// Throws unless every output of the operator just prepared fits `maxActivationBytes`.
    func checkOutputs(of context: PrepareContext) throws(ModelError) {
        for slot in context.node.outputs.indices {
            let t = context.tensors[context.node.outputs[slot]]
            guard t.byteCount <= maxActivationBytes else {
                throw context.invalid("output \(slot) '\(t.name)' of shape \(t.shape) needs \(Self.describe(t.byteCount)); the activation memory limit is \(Self.describe(maxActivationBytes)) (Limits.maxActivationBytes)")
            }
        }
        guard context.scratchBytes <= maxActivationBytes else {
            throw context.invalid("needs \(Self.describe(context.scratchBytes)) of scratch memory; the activation memory limit is \(Self.describe(maxActivationBytes)) (Limits.maxActivationBytes)")
        }
    }

    /// Throws when the arena and scratch of a planned graph exceed `maxActivationBytes`; the
    /// message names the largest activation.
    func checkArena(bytes arena: Int, scratch: Int, tensors: [TensorDescriptor]) throws(ModelError) {
        let (total, overflow) = arena.addingReportingOverflow(scratch)
        guard overflow || total > maxActivationBytes else { return }
        let largest = tensors.filter { !$0.isConstant }.max { $0.byteCount < $1.byteCount }
        let culprit = largest.map { ", the largest being tensor \($0.index) '\($0.name)' of shape \($0.shape) (\(Self.describe($0.byteCount)))" } ?? ""
        throw .invalidGraph("the activations need \(Self.describe(arena)) plus \(Self.describe(scratch)) of scratch\(culprit); the activation memory limit is \(Self.describe(maxActivationBytes)) (Limits.maxActivationBytes)")
    }

    /// The estimated cost of one operator from its prepared shapes: multiply-accumulates for
    /// convolutions, fully connected layers and pooling windows, candidate comparisons for
    /// detection post-processing, elements read and written for everything else. A dimension of
    /// size 0 counts as 1: the loops around it still run (the fuzzer's RESIZE_BILINEAR of zero
    /// channels to 16384 × 20000 held no bytes and took 13 s). Saturates instead of overflowing.
    static func estimatedMACs(_ context: PrepareContext) -> Int {
        func saturatingProduct(_ values: [Int]) -> Int {
            values.reduce(1) { $0.multipliedReportingOverflow(by: max($1, 1)).overflow ? Int.max : $0 * max($1, 1) }
        }
        func elements(_ index: Int) -> Int { index >= 0 ? saturatingProduct(context.tensors[index].shape) : 0 }
        func saturatingSum(_ values: [Int]) -> Int {
            values.reduce(0) { $0.addingReportingOverflow($1).overflow ? Int.max : $0 + $1 }
        }
        let node = context.node
        let outputs = saturatingSum(node.outputs.map(elements))
        let filter = node.inputs.count > 1 && node.inputs[1] >= 0 ? context.tensors[node.inputs[1]].shape : []
        switch node.op {
        case .conv2D where filter.count == 4:
            return saturatingProduct([outputs, filter[1], filter[2], filter[3]])
        case .depthwiseConv2D where filter.count == 4:
            return saturatingProduct([outputs, filter[1], filter[2]])
        case .fullyConnected where filter.count == 2:
            return saturatingProduct([outputs, filter[1]])
        case .resizeBilinear:
            // Four taps per output element.
            return saturatingSum([saturatingProduct([outputs, 4])] + node.inputs.map(elements))
        case .averagePool2D, .maxPool2D:
            // Every output reads its window (clipped to the input): a large filter is the cost.
            guard case .pool2D(let o) = node.options, node.inputs.first.map({ $0 >= 0 }) == true else { break }
            let input = context.tensors[node.inputs[0]].shape
            guard input.count == 4 else { break }
            return saturatingProduct([outputs, min(max(o.filterHeight, 1), input[1]), min(max(o.filterWidth, 1), input[2])])
        case .custom where node.customName == "TFLite_Detection_PostProcess" && node.inputs.count > 1 && node.inputs[1] >= 0:
            // Non-maximum suppression compares each kept detection with every candidate score.
            let scores = context.tensors[node.inputs[1]].shape
            let boxes = scores.count == 3 ? max(scores[1], 0) : 0
            return saturatingSum([saturatingProduct([elements(node.inputs[1]), min(boxes, context.limits.maxDetections)]),
                                  outputs] + node.inputs.map(elements))
        default:
            break
        }
        let touched = saturatingSum([outputs] + node.inputs.map(elements))
        let floatOutput = node.outputs.first.map { $0 >= 0 && context.tensors[$0].dataType == .float32 } ?? false
        return floatOutput && Self.transcendental.contains(node.op) ? saturatingProduct([touched, Self.transcendentalCost]) : touched
    }

    /// Float operators that evaluate an exponential or hyperbolic function per element (their
    /// integer forms read tables, and count as elements touched).
    static let transcendental: Set<BuiltinOperator> = [.exp, .logistic, .tanh, .gelu, .softmax]

    /// What one element of a `transcendental` operator counts for, in multiply-accumulates: an
    /// element of TANH, GELU, LOGISTIC or EXP takes as long as some hundreds of a convolution's
    /// vectorised multiply-accumulates (a polynomial and a division per element, against a
    /// sixteenth of one FMA). Counted as one, the default budget would admit a model that runs for
    /// minutes; counted as 256, the same budget bounds it to seconds.
    static let transcendentalCost = 256

    /// Adds the operator's estimated cost to `total` and throws once it exceeds `maxMACsPerInvoke`.
    func accumulateMACs(_ context: PrepareContext, into total: inout Int) throws(ModelError) {
        let cost = Self.estimatedMACs(context)
        let (sum, overflow) = total.addingReportingOverflow(cost)
        total = overflow ? Int.max : sum
        guard total <= maxMACsPerInvoke else {
            throw context.invalid("brings the estimated work per invoke to \(total) multiply-accumulates (this operator \(cost)); the limit is \(maxMACsPerInvoke) (Limits.maxMACsPerInvoke)")
        }
    }
}
