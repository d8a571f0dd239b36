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
/// uses), so equal class scores come out in the same order.
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
            let q = try quantization(context, tensor, role: "anchors")
            let raw = data.elements(as: UInt8.self)
            for i in 0 ..< count { values.pointer[i] = dequantize(raw[i], q) }
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

    /// Per-tensor scale and zero point of a uint8 input (zero point checked to lie in 0...255).
    static func quantization(_ context: PrepareContext, _ tensor: TensorDescriptor, role: String) throws(ModelError) -> (scale: Float, zeroPoint: Int32) {
        let q = try context.affineQuantization(of: tensor, role: role)
        return (q.scale, q.zeroPoint)
    }

    /// `(q − zeroPoint) · scale` in float, which equals TFLite's float and double formulations
    /// (both round the exact product once).
    @inline(__always)
    static func dequantize(_ q: UInt8, _ p: (scale: Float, zeroPoint: Int32)) -> Float {
        Float(Int32(q) - p.zeroPoint) * p.scale
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

/// The prepared operator. All working memory is session scratch, laid out at prepare time.
struct DetectionPostProcessKernel: Kernel {
    let options: DetectionPostProcess.Options
    let boxCount: Int
    /// Values per box encoding (4, or more when keypoints follow the box).
    let encodingLength: Int
    let classesWithBackground: Int
    /// 1 when the class predictions start with a background column, else 0.
    let labelOffset: Int
    /// Classes reported per anchor by fast NMS: `min(max_classes_per_detection, num_classes)`.
    let classesPerAnchor: Int
    let anchors: PackedBuffer<Float>
    let boxesInput: Int, scoresInput: Int
    /// Quantization of uint8 inputs (nil for float32).
    let boxesQuantization: (scale: Float, zeroPoint: Int32)?
    let scoresQuantization: (scale: Float, zeroPoint: Int32)?
    let outputs: [Int]
    let layout: Layout

    /// Byte offsets of the working arrays in session scratch.
    struct Layout {
        var decodedBoxes = 0, dequantizedScores = 0
        var keepScores = 0, keepIndices = 0, order = 0, orderTemp = 0, active = 0, selected = 0
        var anchorScores = 0, topClasses = 0, classOrder = 0
        var candidates = 0, candidatesTemp = 0
        var size = 0

        /// Reserves `count` elements of `T` (16-byte aligned) and returns their offset.
        mutating func reserve<T>(_ type: T.Type, _ count: Int) -> Int {
            let offset = (size + 15) / 16 * 16
            size = offset + max(count, 1) * MemoryLayout<T>.stride
            return offset
        }
    }

    /// A detection of regular NMS: an anchor, its class and score.
    struct Candidate {
        var score: Float
        var anchor: Int32
        var classIndex: Int32
    }

    init(_ context: inout PrepareContext, options: DetectionPostProcess.Options, anchors: PackedBuffer<Float>,
         boxes: TensorDescriptor, scores: TensorDescriptor) throws(ModelError) {
        self.options = options
        self.anchors = anchors
        boxCount = boxes.shape[1]
        encodingLength = boxes.shape[2]
        classesWithBackground = scores.shape[2]
        labelOffset = classesWithBackground - options.numClasses
        classesPerAnchor = min(options.maxClassesPerDetection, options.numClasses)
        boxesInput = boxes.index
        scoresInput = scores.index
        boxesQuantization = boxes.dataType == .uint8 ? try DetectionPostProcess.quantization(context, boxes, role: "box encodings") : nil
        scoresQuantization = scores.dataType == .uint8 ? try DetectionPostProcess.quantization(context, scores, role: "class predictions") : nil
        outputs = context.node.outputs

        let n = boxCount
        var l = Layout()
        l.decodedBoxes = l.reserve(Float.self, 4 * n)
        if scoresQuantization != nil { l.dequantizedScores = l.reserve(Float.self, n * classesWithBackground) }
        l.keepScores = l.reserve(Float.self, n)
        l.keepIndices = l.reserve(Int32.self, n)
        l.order = l.reserve(Int32.self, n)
        l.orderTemp = l.reserve(Int32.self, n)
        l.active = l.reserve(UInt8.self, n)
        l.selected = l.reserve(Int32.self, n)
        l.anchorScores = l.reserve(Float.self, n)
        if options.useRegularNMS {
            // The running list never holds more than max_detections, nor more than all (anchor,
            // class) pairs; one class adds at most min(detections_per_class, N).
            let kept = min(options.maxDetections, n * options.numClasses)
            l.candidates = l.reserve(Candidate.self, kept + min(options.detectionsPerClass, n))
            l.candidatesTemp = l.reserve(Candidate.self, kept)
        } else {
            l.topClasses = l.reserve(Int32.self, n * classesPerAnchor)
            l.classOrder = l.reserve(Int32.self, options.numClasses)
        }
        layout = l
        context.requestScratch(bytes: l.size)
    }

    // MARK: - Eval

    func eval(_ memory: TensorMemory) {
        let decoded = memory.scratch(as: Float.self, offset: layout.decodedBoxes)
        if let q = boxesQuantization {
            let raw = memory.input(boxesInput, as: UInt8.self)
            decodeBoxes(into: decoded) { i, k in DetectionPostProcess.dequantize(raw[i * encodingLength + k], q) }
        } else {
            let raw = memory.input(boxesInput, as: Float.self)
            decodeBoxes(into: decoded) { i, k in raw[i * encodingLength + k] }
        }

        let scores: UnsafePointer<Float>
        if let q = scoresQuantization {
            let raw = memory.input(scoresInput, as: UInt8.self)
            let dequantized = memory.scratch(as: Float.self, offset: layout.dequantizedScores)
            for i in 0 ..< boxCount * classesWithBackground { dequantized[i] = DetectionPostProcess.dequantize(raw[i], q) }
            scores = UnsafePointer(dequantized)
        } else {
            scores = memory.input(scoresInput, as: Float.self)
        }

        // TFLite leaves the slots after the last detection unwritten in fast mode (and those past
        // max_detections in regular mode); they are zero here.
        let slots = options.maxDetections * options.maxClassesPerDetection
        let outBoxes = memory.output(outputs[DetectionPostProcess.detectionBoxes], as: Float.self)
        let outClasses = memory.output(outputs[DetectionPostProcess.detectionClasses], as: Float.self)
        let outScores = memory.output(outputs[DetectionPostProcess.detectionScores], as: Float.self)
        outBoxes.update(repeating: 0, count: 4 * slots)
        outClasses.update(repeating: 0, count: slots)
        outScores.update(repeating: 0, count: slots)

        let count: Int
        if options.useRegularNMS {
            count = regularNMS(memory, scores: scores, boxes: decoded, outBoxes: outBoxes, outClasses: outClasses, outScores: outScores)
        } else {
            count = fastNMS(memory, scores: scores, boxes: decoded, outBoxes: outBoxes, outClasses: outClasses, outScores: outScores)
        }
        memory.output(outputs[DetectionPostProcess.detectionCount], as: Float.self)[0] = Float(count)
    }

    /// Center-size decoding: `ycenter = y / yScale · anchor.h + anchor.y`,
    /// `half_h = ½ · exp(h / hScale) · anchor.h` (likewise x, w), in double and rounded to float
    /// at the same points as TFLite, then `ymin, xmin, ymax, xmax = center ∓ half`.
    @inline(__always)
    private func decodeBoxes(into decoded: UnsafeMutablePointer<Float>, _ encoding: (Int, Int) -> Float) {
        let o = options
        let sy = Double(o.yScale), sx = Double(o.xScale), sh = Double(o.hScale), sw = Double(o.wScale)
        for i in 0 ..< boxCount {
            let a = anchors.pointer + 4 * i
            let ay = Double(a[0]), ax = Double(a[1]), ah = Double(a[2]), aw = Double(a[3])
            let yCenter = Float(Double(encoding(i, 0)) / sy * ah + ay)
            let xCenter = Float(Double(encoding(i, 1)) / sx * aw + ax)
            let halfH = Float(0.5 * exp(Double(encoding(i, 2)) / sh) * ah)
            let halfW = Float(0.5 * exp(Double(encoding(i, 3)) / sw) * aw)
            let box = decoded + 4 * i
            box[0] = yCenter - halfH
            box[1] = xCenter - halfW
            box[2] = yCenter + halfH
            box[3] = xCenter + halfW
        }
    }

    /// Fast NMS: rank anchors by their best class, suppress once, report each kept anchor's top classes.
    private func fastNMS(_ memory: TensorMemory, scores: UnsafePointer<Float>, boxes: UnsafePointer<Float>,
                         outBoxes: UnsafeMutablePointer<Float>, outClasses: UnsafeMutablePointer<Float>,
                         outScores: UnsafeMutablePointer<Float>) -> Int {
        let k = classesPerAnchor, numClasses = options.numClasses
        let anchorScores = memory.scratch(as: Float.self, offset: layout.anchorScores)
        let topClasses = memory.scratch(as: Int32.self, offset: layout.topClasses)
        let classOrder = memory.scratch(as: Int32.self, offset: layout.classOrder)
        for row in 0 ..< boxCount {
            let rowScores = scores + row * classesWithBackground + labelOffset
            if k == 1 {
                topClasses[row] = Int32(Self.argMax(rowScores, count: numClasses))
            } else {
                for c in 0 ..< numClasses { classOrder[c] = Int32(c) }
                Self.partialSortDescending(classOrder, count: numClasses, prefix: k, by: rowScores)
                (topClasses + row * k).update(from: classOrder, count: k)
            }
            anchorScores[row] = rowScores[Int(topClasses[row * k])]
        }
        let selected = memory.scratch(as: Int32.self, offset: layout.selected)
        let kept = suppress(memory, scores: UnsafePointer(anchorScores), boxes: boxes, limit: options.maxDetections)
        for (n, anchor) in UnsafeBufferPointer(start: selected, count: kept).enumerated() {
            let a = Int(anchor)
            let rowScores = scores + a * classesWithBackground + labelOffset
            for col in 0 ..< k {
                let slot = options.maxClassesPerDetection * n + col
                let classIndex = Int(topClasses[a * k + col])
                (outBoxes + 4 * slot).update(from: boxes + 4 * a, count: 4)
                outClasses[slot] = Float(classIndex)
                outScores[slot] = rowScores[classIndex]
            }
        }
        return kept
    }

    /// Regular NMS: suppress per class, then keep the best `max_detections` over all classes,
    /// merging each class's (score-sorted) selection stably into the running list.
    private func regularNMS(_ memory: TensorMemory, scores: UnsafePointer<Float>, boxes: UnsafePointer<Float>,
                            outBoxes: UnsafeMutablePointer<Float>, outClasses: UnsafeMutablePointer<Float>,
                            outScores: UnsafeMutablePointer<Float>) -> Int {
        let maxDetections = options.maxDetections
        let perClass = min(options.detectionsPerClass, maxDetections)
        let classScores = memory.scratch(as: Float.self, offset: layout.anchorScores)
        let selected = memory.scratch(as: Int32.self, offset: layout.selected)
        let candidates = memory.scratch(as: Candidate.self, offset: layout.candidates)
        let temp = memory.scratch(as: Candidate.self, offset: layout.candidatesTemp)
        var size = 0
        for col in 0 ..< options.numClasses {
            for row in 0 ..< boxCount { classScores[row] = scores[row * classesWithBackground + col + labelOffset] }
            let kept = suppress(memory, scores: UnsafePointer(classScores), boxes: boxes, limit: perClass)
            guard kept > 0 else { continue }
            for i in 0 ..< kept {
                let anchor = selected[i]
                candidates[size + i] = Candidate(score: classScores[Int(anchor)], anchor: anchor, classIndex: Int32(col))
            }
            Self.mergeDescending(candidates, firstCount: size, secondCount: kept, temp: temp)
            size = min(size + kept, maxDetections)
        }
        for i in 0 ..< size {
            let c = candidates[i]
            (outBoxes + 4 * i).update(from: boxes + 4 * Int(c.anchor), count: 4)
            outClasses[i] = Float(c.classIndex)
            outScores[i] = c.score
        }
        return size
    }

    /// Single-class greedy NMS over `scores` (one per anchor): keeps scores ≥ the threshold,
    /// visits them from the highest (stable for ties), selects each box that no selected box
    /// overlaps by IoU > the threshold, and stops after `limit`. Writes the selected anchors to
    /// the `selected` scratch array and returns how many there are.
    private func suppress(_ memory: TensorMemory, scores: UnsafePointer<Float>, boxes: UnsafePointer<Float>, limit: Int) -> Int {
        let keepScores = memory.scratch(as: Float.self, offset: layout.keepScores)
        let keepIndices = memory.scratch(as: Int32.self, offset: layout.keepIndices)
        let order = memory.scratch(as: Int32.self, offset: layout.order)
        let orderTemp = memory.scratch(as: Int32.self, offset: layout.orderTemp)
        let active = memory.scratch(as: UInt8.self, offset: layout.active)
        let selected = memory.scratch(as: Int32.self, offset: layout.selected)
        let threshold = options.scoreThreshold, iouThreshold = options.iouThreshold

        var kept = 0
        for i in 0 ..< boxCount where scores[i] >= threshold {
            keepScores[kept] = scores[i]
            keepIndices[kept] = Int32(i)
            kept += 1
        }
        Self.stableSortDescending(order, count: kept, by: UnsafePointer(keepScores), temp: orderTemp)

        let outputSize = min(kept, limit)
        var count = 0, remaining = kept
        active.update(repeating: 1, count: kept)
        for i in 0 ..< kept {
            if remaining == 0 || count >= outputSize { break }
            guard active[i] == 1 else { continue }
            let box = Int(keepIndices[Int(order[i])])
            selected[count] = Int32(box)
            count += 1
            active[i] = 0
            remaining -= 1
            for j in (i + 1) ..< kept where active[j] == 1 {
                if Self.intersectionOverUnion(boxes + 4 * box, boxes + 4 * Int(keepIndices[Int(order[j])])) > iouThreshold {
                    active[j] = 0
                    remaining -= 1
                }
            }
        }
        return count
    }

    // MARK: - Helpers with TFLite's exact semantics

    /// IoU of two `ymin, xmin, ymax, xmax` boxes; 0 when either has no area. `std::max`/`std::min`
    /// are spelled out because they differ from Swift's for NaN.
    @inline(__always)
    static func intersectionOverUnion(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>) -> Float {
        let areaA = (a[2] - a[0]) * (a[3] - a[1])
        let areaB = (b[2] - b[0]) * (b[3] - b[1])
        if areaA <= 0 || areaB <= 0 { return 0 }
        let yMin = cxxMax(a[0], b[0]), xMin = cxxMax(a[1], b[1])
        let yMax = cxxMin(a[2], b[2]), xMax = cxxMin(a[3], b[3])
        let intersection = cxxMax(yMax - yMin, 0) * cxxMax(xMax - xMin, 0)
        return intersection / (areaA + areaB - intersection)
    }

    @inline(__always) static func cxxMax(_ a: Float, _ b: Float) -> Float { a < b ? b : a }
    @inline(__always) static func cxxMin(_ a: Float, _ b: Float) -> Float { b < a ? b : a }

    /// Index of the first largest value, ignoring NaNs (0 if all are NaN).
    static func argMax(_ values: UnsafePointer<Float>, count: Int) -> Int {
        var best = 0, bestValue = values[0]
        for i in 1 ..< max(count, 1) {
            let v = values[i]
            if !v.isNaN, bestValue.isNaN || v > bestValue {
                best = i
                bestValue = v
            }
        }
        return bestValue.isNaN ? 0 : best
    }

    /// Writes `0..<count` to `order`, sorted by decreasing `values`; equal values keep index order
    /// (the result of a stable sort). Bottom-up merge sort through `temp`.
    static func stableSortDescending(_ order: UnsafeMutablePointer<Int32>, count: Int, by values: UnsafePointer<Float>,
                                     temp: UnsafeMutablePointer<Int32>) {
        for i in 0 ..< count { order[i] = Int32(i) }
        var source = order, target = temp
        var width = 1
        while width < count {
            var start = 0
            while start < count {
                let mid = min(start + width, count), end = min(start + 2 * width, count)
                var i = start, j = mid, out = start
                while i < mid, j < end {
                    // Take from the right run only when strictly greater: ties keep their order.
                    if values[Int(source[j])] > values[Int(source[i])] {
                        target[out] = source[j]; j += 1
                    } else {
                        target[out] = source[i]; i += 1
                    }
                    out += 1
                }
                while i < mid { target[out] = source[i]; i += 1; out += 1 }
                while j < end { target[out] = source[j]; j += 1; out += 1 }
                start = end
            }
            swap(&source, &target)
            width *= 2
        }
        if source != order { order.update(from: source, count: count) }
    }

    /// Merges the two score-sorted runs `candidates[0..<firstCount]` and the `secondCount` after
    /// it, keeping first-run entries ahead of equal second-run ones (`std::inplace_merge`).
    /// Only the first `firstCount` entries are copied to `temp`, so it needs that many slots.
    static func mergeDescending(_ candidates: UnsafeMutablePointer<Candidate>, firstCount: Int, secondCount: Int,
                                temp: UnsafeMutablePointer<Candidate>) {
        temp.update(from: candidates, count: firstCount)
        var i = 0, j = firstCount, out = 0
        let end = firstCount + secondCount
        while i < firstCount, j < end {
            if candidates[j].score > temp[i].score {
                candidates[out] = candidates[j]; j += 1
            } else {
                candidates[out] = temp[i]; i += 1
            }
            out += 1
        }
        while i < firstCount { candidates[out] = temp[i]; i += 1; out += 1 }
        // Remaining second-run entries are already in place.
    }

    /// Reorders `order[0..<count]` so that its first `prefix` entries index the largest `values`,
    /// largest first, by libstdc++'s `std::partial_sort` algorithm (heap-select the prefix, then
    /// heap-sort it), with the comparison `values[a] > values[b]`. Any other algorithm would
    /// order equal values differently.
    static func partialSortDescending(_ order: UnsafeMutablePointer<Int32>, count: Int, prefix: Int, by values: UnsafePointer<Float>) {
        @inline(__always) func before(_ a: Int32, _ b: Int32) -> Bool { values[Int(a)] > values[Int(b)] }

        /// Sifts the hole at `hole` down to a leaf, then pushes `value` back up (`__adjust_heap`).
        func adjust(_ hole: Int, _ length: Int, _ value: Int32) {
            let top = hole
            var hole = hole, child = hole
            while child < (length - 1) / 2 {
                child = 2 * (child + 1)
                if before(order[child], order[child - 1]) { child -= 1 }
                order[hole] = order[child]
                hole = child
            }
            if length & 1 == 0, child == (length - 2) / 2 {
                child = 2 * (child + 1)
                order[hole] = order[child - 1]
                hole = child - 1
            }
            var parent = (hole - 1) / 2
            while hole > top, before(order[parent], value) {
                order[hole] = order[parent]
                hole = parent
                parent = (hole - 1) / 2
            }
            order[hole] = value
        }

        /// Moves the heap top to `result` and re-heaps `order[0..<length]` with the old `order[result]`.
        func pop(_ length: Int, _ result: Int) {
            let value = order[result]
            order[result] = order[0]
            adjust(0, length, value)
        }

        if prefix >= 2 {
            var parent = (prefix - 2) / 2
            while true {
                adjust(parent, prefix, order[parent])
                if parent == 0 { break }
                parent -= 1
            }
        }
        for i in prefix ..< max(count, prefix) where before(order[i], order[0]) { pop(prefix, i) }
        var last = prefix
        while last > 1 {
            last -= 1
            pop(last, last)
        }
    }
}
