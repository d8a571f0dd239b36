import Foundation

/// `TFLite_Detection_PostProcess` (custom): decodes SSD box encodings against anchors, then keeps the
/// best non-overlapping boxes with non-maximum suppression, exactly as TFLite's reference kernel does.
///
/// Inputs: box encodings `[1, N, ≥4]` (`y, x, h, w` relative to the anchor, float32 or uint8),
/// class scores `[1, N, C]` or `[1, N, C + 1]` with a leading background column (float32 or
/// uint8), anchors `[N, 4]` (`ycenter, xcenter, h, w`, a constant of the box encodings' type).
/// Outputs (float32): boxes `[1, M, 4]` (`ymin, xmin, ymax, xmax`), classes `[1, M]`, scores
/// `[1, M]`, count `[1]`, where `M = max_detections · max_classes_per_detection`. Slots past the
/// detections are zero (TFLite leaves some of them unwritten; see `eval`).
///
/// Two suppression modes, chosen by `use_regular_nms`:
/// - fast (default): each anchor is ranked by its best class score, one suppression pass runs over
///   all anchors, and each kept anchor reports its top `max_classes_per_detection` classes;
/// - regular: suppression runs per class (at most `detections_per_class` boxes each), and the
///   best `max_detections` of all classes are kept.
///
/// Ordering matches TFLite bit for bit: candidates are ranked with a stable sort (equal scores keep
/// anchor order), per-class results are merged stably (earlier classes first), and an anchor's
/// top classes come from a replica of libstdc++'s heap-based `std::partial_sort` (which LiteRT
/// uses), so equal class scores come out in the same order (`LibstdcxxOrdering`, in Support/).
/// The kernel itself (decoding, both suppressions) is in DetectionPostProcess+NMS.swift.
///
/// Where this kernel is stricter or kinder than TFLite (models LiteRT cannot run either way):
/// everything TFLite checks only on invoke (IoU threshold in (0, 1], positive limits, boxes with
/// ymin ≤ ymax, which holds exactly when no anchor has a negative height or width) is checked at
/// prepare; anchors must be a constant; a missing `max_classes_per_detection` means 1 (TFLite
/// reads 0 and fails); required options that are missing or not numbers are errors (TFLite
/// reads 0). int8 inputs are rejected, as LiteRT does.
enum DetectionPostProcess {
    static let customName = "TFLite_Detection_PostProcess"
    static let boxEncodings = 0, classPredictions = 1, anchors = 2
    static let detectionBoxes = 0, detectionClasses = 1, detectionScores = 2, detectionCount = 3

    /// The FlexBuffer options of the operator.
    struct Options: Sendable, Equatable {
        var maxDetections: Int
        var maxClassesPerDetection = 1
        var detectionsPerClass = 100
        var useRegularNMS = false
        var scoreThreshold: Float
        var iouThreshold: Float
        var numClasses: Int
        /// Divisors of the encoded `y, x, h, w`.
        var yScale, xScale, hScale, wScale: Float
    }

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        let options = try readOptions(context)
        try context.expect(inputs: 3 ... 3, outputs: 4)
        let boxes = try context.input(boxEncodings), scores = try context.input(classPredictions)
        let anchorTensor = try context.input(anchors)
        try context.expect(boxes, is: .float32, .uint8, role: "box encodings")
        try context.expect(scores, is: .float32, .uint8, role: "class predictions")
        try context.expect(boxes, rank: 3, role: "box encodings")
        try context.expect(scores, rank: 3, role: "class predictions")
        try context.expect(anchorTensor, rank: 2, role: "anchors")
        let boxCount = boxes.shape[1]
        guard boxes.shape[0] == 1, boxes.shape[2] >= 4 else {
            throw context.invalid("box encodings '\(boxes.name)' have shape \(boxes.shape), expected [1, N, 4] (or more than 4 values per box)")
        }
        guard scores.shape[0] == 1, scores.shape[1] == boxCount else {
            throw context.invalid("class predictions '\(scores.name)' have shape \(scores.shape), expected [1, \(boxCount), classes] to match box encodings \(boxes.shape)")
        }
        let classesWithBackground = scores.shape[2]
        guard classesWithBackground == options.numClasses || classesWithBackground == options.numClasses + 1 else {
            throw context.invalid("class predictions '\(scores.name)' have \(classesWithBackground) classes per box, expected num_classes = \(options.numClasses) or \(options.numClasses + 1) (with background)")
        }
        guard anchorTensor.shape == [boxCount, 4] else {
            throw context.invalid("anchors '\(anchorTensor.name)' have shape \(anchorTensor.shape), expected [\(boxCount), 4] to match box encodings \(boxes.shape)")
        }
        // TFLite reads anchors with the box encodings' element type.
        try context.expect(anchorTensor, is: boxes.dataType, role: "anchors (which must have the box encodings' type)")
        let anchorValues = try dequantizedAnchors(context, anchorTensor)

        let slots = options.maxDetections * options.maxClassesPerDetection
        try context.setOutputShape(detectionBoxes, [1, slots, 4])
        try context.setOutputShape(detectionClasses, [1, slots])
        try context.setOutputShape(detectionScores, [1, slots])
        try context.setOutputShape(detectionCount, [1])
        for slot in 0 ..< 4 { try context.expect(try context.output(slot), is: .float32, role: "output \(slot)") }

        return try DetectionPostProcessKernel(&context, options: options, anchors: anchorValues, boxes: boxes, scores: scores)
    }

    /// Reads and validates the options map. Required keys that are missing, null or of a
    /// non-numeric type throw an error naming the key.
    static func readOptions(_ context: PrepareContext) throws(ModelError) -> Options {
        guard let blob = context.node.customOptions, blob.bytes.count > 0 else {
            throw context.invalid("has no custom options (expected a FlexBuffer map with max_detections, num_classes, nms_score_threshold, ...)")
        }
        let map: FlexBufferMap
        do { map = try FlexBuffer.root(blob.bytes).map() } catch { throw context.invalid("custom options are not a FlexBuffer map: \(error)") }
        let reader = OptionReader(map: map, context: context)
        var o = Options(maxDetections: try reader.int("max_detections"),
                        scoreThreshold: try reader.float("nms_score_threshold"),
                        iouThreshold: try reader.float("nms_iou_threshold"),
                        numClasses: try reader.int("num_classes"),
                        yScale: try reader.float("y_scale"), xScale: try reader.float("x_scale"),
                        hScale: try reader.float("h_scale"), wScale: try reader.float("w_scale"))
        if let v = try reader.optionalInt("max_classes_per_detection") { o.maxClassesPerDetection = v }
        if let v = try reader.optionalInt("detections_per_class") { o.detectionsPerClass = v }
        if let v = try reader.optionalBool("use_regular_nms") { o.useRegularNMS = v }

        // TFLite checks these at prepare or, for the thresholds and per-mode limits, on every invoke.
        guard o.maxDetections >= 0 else { throw context.invalid("custom option max_detections = \(o.maxDetections) must be ≥ 0") }
        guard o.numClasses > 0 else { throw context.invalid("custom option num_classes = \(o.numClasses) must be > 0") }
        guard o.maxClassesPerDetection > 0 else {
            throw context.invalid("custom option max_classes_per_detection = \(o.maxClassesPerDetection) must be > 0")
        }
        guard o.detectionsPerClass >= 0 else { throw context.invalid("custom option detections_per_class = \(o.detectionsPerClass) must be ≥ 0") }
        guard o.iouThreshold > 0, o.iouThreshold <= 1 else {
            throw context.invalid("custom option nms_iou_threshold = \(o.iouThreshold) must be in (0, 1]")
        }
        let (product, overflow) = o.maxDetections.multipliedReportingOverflow(by: o.maxClassesPerDetection)
        guard !overflow, Int32(exactly: product) != nil, Int32(exactly: 2 * o.maxDetections) != nil else {
            throw context.invalid("max_detections \(o.maxDetections) × max_classes_per_detection \(o.maxClassesPerDetection) overflows int32")
        }
        // The outputs hold this many slots whatever the input: a lying model could ask for 10⁸.
        let slots = o.maxDetections * o.maxClassesPerDetection
        guard slots <= context.limits.maxDetections else {
            throw context.invalid("max_detections \(o.maxDetections) × max_classes_per_detection \(o.maxClassesPerDetection) = \(slots) detection slots; the limit is \(context.limits.maxDetections) (Limits.maxDetections)")
        }
        if o.useRegularNMS, min(o.detectionsPerClass, o.maxDetections) <= 0 {
            throw context.invalid("regular NMS needs detections_per_class (\(o.detectionsPerClass)) and max_detections (\(o.maxDetections)) > 0")
        }
        return o
    }

    /// The anchors as floats, `[N, 4]`; uint8 anchors are dequantized as TFLite does it.
    private static func dequantizedAnchors(_ context: PrepareContext, _ tensor: TensorDescriptor) throws(ModelError) -> PackedBuffer<Float> {
        let data = try context.constant(anchors)
        let count = tensor.elementCount
        let values = PackedBuffer<Float>(count: count, initializedTo: 0)
        if tensor.dataType == .uint8 {
            let q = try dequantization(context, tensor, role: "anchors")
            if let raw = data.bytes.baseAddress { q.dequantize(raw, count: count, into: values.pointer) }
        } else {
            let raw = data.elements(as: Float.self)
            for i in 0 ..< count { values.pointer[i] = raw[i] }
        }
        // Negative sizes make decoded boxes with ymin > ymax, which TFLite rejects on every invoke.
        for i in 0 ..< tensor.shape[0] where values.pointer[4 * i + 2] < 0 || values.pointer[4 * i + 3] < 0 {
            throw context.invalid("anchor \(i) of '\(tensor.name)' has negative height or width (\(values.pointer[4 * i + 2]), \(values.pointer[4 * i + 3]))")
        }
        return values
    }

    /// The per-tensor quantization of a uint8 input (zero point checked to lie in 0...255).
    static func dequantization(_ context: PrepareContext, _ tensor: TensorDescriptor, role: String) throws(ModelError) -> Dequantization {
        Dequantization(.uint8, try context.affineQuantization(of: tensor, role: role))
    }

    /// Reads typed values from the options map, naming the key in every error.
    private struct OptionReader {
        let map: FlexBufferMap
        let context: PrepareContext

        private func lookup(_ key: String) throws(ModelError) -> FlexBufferReference? {
            do {
                guard let ref = try map.value(forKey: key), !ref.isNull else { return nil }
                return ref
            } catch {
                throw context.invalid("custom options: cannot look up '\(key)': \(error)")
            }
        }

        private func missing(_ key: String) -> ModelError {
            context.invalid("required custom option '\(key)' is missing (or null)")
        }

        func optionalInt(_ key: String) throws(ModelError) -> Int? {
            guard let ref = try lookup(key) else { return nil }
            let value: Int64
            do { value = try ref.int() } catch {
                throw context.invalid("custom option '\(key)' is \(ref.type), expected an integer")
            }
            guard let v = Int32(exactly: value) else { throw context.invalid("custom option '\(key)' = \(value) does not fit in int32") }
            return Int(v)
        }

        func int(_ key: String) throws(ModelError) -> Int {
            guard let v = try optionalInt(key) else { throw missing(key) }
            return v
        }

        func float(_ key: String) throws(ModelError) -> Float {
            guard let ref = try lookup(key) else { throw missing(key) }
            do { return Float(try ref.double()) } catch {
                throw context.invalid("custom option '\(key)' is \(ref.type), expected a number")
            }
        }

        func optionalBool(_ key: String) throws(ModelError) -> Bool? {
            guard let ref = try lookup(key) else { return nil }
            do { return try ref.bool() } catch {
                throw context.invalid("custom option '\(key)' is \(ref.type), expected a bool")
            }
        }
    }
}
