import Foundation

// The prepared `TFLite_Detection_PostProcess`: box decoding and the two non-maximum suppressions
// (options and prepare are in DetectionPostProcess.swift; the C++ orderings it relies on for ties
// are in Support/LibstdcxxOrdering.swift).

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
    /// Dequantization of uint8 inputs (nil for float32).
    let boxesQuantization: Dequantization?
    let scoresQuantization: Dequantization?
    let outputs: [Int]
    let layout: Layout

    /// Byte offsets of the working arrays in session scratch.
    struct Layout {
        var decodedBoxes = 0, dequantizedScores = 0
        var keepScores = 0, keepIndices = 0, order = 0, orderTemp = 0, active = 0, selected = 0
        /// The kept boxes in score order, one array per coordinate and one of areas.
        var sortedBoxes = 0
        /// The radix sort's keys (two arrays) and its histogram.
        var sortKeys = 0, sortHistogram = 0
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
        boxesQuantization = boxes.dataType == .uint8 ? try DetectionPostProcess.dequantization(context, boxes, role: "box encodings") : nil
        scoresQuantization = scores.dataType == .uint8 ? try DetectionPostProcess.dequantization(context, scores, role: "class predictions") : nil
        outputs = context.node.outputs

        let n = boxCount
        var l = Layout()
        l.decodedBoxes = l.reserve(Float.self, 4 * n)
        if scoresQuantization != nil { l.dequantizedScores = l.reserve(Float.self, n * classesWithBackground) }
        l.keepScores = l.reserve(Float.self, n)
        l.keepIndices = l.reserve(Int32.self, n)
        l.order = l.reserve(Int32.self, n)
        l.orderTemp = l.reserve(Int32.self, n)
        l.active = l.reserve(Int32.self, n)
        l.sortedBoxes = l.reserve(Float.self, 5 * n)
        l.sortKeys = l.reserve(UInt32.self, 2 * n)
        l.sortHistogram = l.reserve(Int.self, 256)
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
        if let q = boxesQuantization?.channels[0] {
            let raw = memory.input(boxesInput, as: UInt8.self)
            decodeBoxes(into: decoded) { i, k in q.dequantize(Int32(raw[i * encodingLength + k])) }
        } else {
            let raw = memory.input(boxesInput, as: Float.self)
            decodeBoxes(into: decoded) { i, k in raw[i * encodingLength + k] }
        }

        let scores: UnsafePointer<Float>
        if let q = scoresQuantization {
            let dequantized = memory.scratch(as: Float.self, offset: layout.dequantizedScores)
            q.dequantize(memory.raw(scoresInput), count: boxCount * classesWithBackground, into: dequantized)
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
                LibstdcxxOrdering.partialSortDescending(classOrder, count: numClasses, prefix: k, by: rowScores)
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
            LibstdcxxOrdering.mergeDescending(candidates, firstCount: size, secondCount: kept, temp: temp) { $0.score }
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
        let active = memory.scratch(as: Int32.self, offset: layout.active)
        let selected = memory.scratch(as: Int32.self, offset: layout.selected)
        let threshold = options.scoreThreshold, iouThreshold = options.iouThreshold

        var kept = 0
        for i in 0 ..< boxCount where scores[i] >= threshold {
            keepScores[kept] = scores[i]
            keepIndices[kept] = Int32(i)
            kept += 1
        }
        // None of the kept scores is NaN: they passed `>=`.
        LibstdcxxOrdering.stableSortDescending(order, count: kept, by: UnsafePointer(keepScores), temp: orderTemp,
                                               keys: memory.scratch(as: UInt32.self, offset: layout.sortKeys),
                                               histogram: memory.scratch(as: Int.self, offset: layout.sortHistogram))

        // The kept boxes in score order, a coordinate (or the area) per array, so that one box's
        // overlaps with all later ones are vector loads (`suppressOverlaps`).
        let sorted = memory.scratch(as: Float.self, offset: layout.sortedBoxes)
        let yMins = sorted, xMins = sorted + boxCount, yMaxes = sorted + 2 * boxCount, xMaxes = sorted + 3 * boxCount
        let areas = sorted + 4 * boxCount
        for i in 0 ..< kept {
            let box = boxes + 4 * Int(keepIndices[Int(order[i])])
            (yMins[i], xMins[i], yMaxes[i], xMaxes[i]) = (box[0], box[1], box[2], box[3])
            areas[i] = Self.area(box[0], box[1], box[2], box[3])
        }

        let outputSize = min(kept, limit)
        var count = 0, remaining = kept
        active.update(repeating: 1, count: kept)
        for i in 0 ..< kept {
            if remaining == 0 || count >= outputSize { break }
            guard active[i] == 1 else { continue }
            selected[count] = keepIndices[Int(order[i])]
            count += 1
            active[i] = 0
            remaining -= 1
            // Every later box that is still active and overlaps this one by more than the
            // threshold is suppressed.
            let a = (yMins[i], xMins[i], yMaxes[i], xMaxes[i], areas[i])
            var suppressed: Int32 = 0
            var j = i + 1
            while j + Lanes.scalarCount <= kept {
                suppressed &+= Self.suppressOverlaps(with: a, at: j, yMins: yMins, xMins: xMins, yMaxes: yMaxes, xMaxes: xMaxes,
                                                     areas: areas, active: active, threshold: iouThreshold)
                j += Lanes.scalarCount
            }
            while j < kept {
                let iou = Self.intersectionOverUnion(a, (yMins[j], xMins[j], yMaxes[j], xMaxes[j], areas[j]))
                let hit: Int32 = iou > iouThreshold ? active[j] : 0
                active[j] &= ~hit
                suppressed &+= hit
                j += 1
            }
            remaining -= Int(suppressed)
        }
        return count
    }

    /// The vectors of `suppressOverlaps` and `argMax`.
    typealias Lanes = SIMD8<Float>

    /// Boxes `j ..< j + 8` of the score-ordered arrays against box `a`: those still active whose
    /// IoU with `a` exceeds `threshold` become inactive; returns how many did. Each lane is
    /// `intersectionOverUnion` with the same operations in the same order (so the same float),
    /// and `std::max`/`std::min` as masked replacements: the scalar loop, which LLVM left scalar
    /// (a compare and branch per box), took most of a 1917-anchor detector's post-process.
    @inline(__always)
    private static func suppressOverlaps(with a: (Float, Float, Float, Float, area: Float), at j: Int,
                                         yMins: UnsafePointer<Float>, xMins: UnsafePointer<Float>,
                                         yMaxes: UnsafePointer<Float>, xMaxes: UnsafePointer<Float>,
                                         areas: UnsafePointer<Float>, active: UnsafeMutablePointer<Int32>,
                                         threshold: Float) -> Int32 {
        @inline(__always) func load(_ p: UnsafePointer<Float>) -> Lanes { UnsafeRawPointer(p + j).loadUnaligned(as: Lanes.self) }
        @inline(__always) func cxxMax(_ x: Lanes, _ y: Lanes) -> Lanes { x.replacing(with: y, where: x .< y) }
        @inline(__always) func cxxMin(_ x: Lanes, _ y: Lanes) -> Lanes { x.replacing(with: y, where: y .< x) }
        let zero = Lanes(repeating: 0), area = load(areas), aArea = Lanes(repeating: a.area)
        let yMin = cxxMax(Lanes(repeating: a.0), load(yMins)), xMin = cxxMax(Lanes(repeating: a.1), load(xMins))
        let yMax = cxxMin(Lanes(repeating: a.2), load(yMaxes)), xMax = cxxMin(Lanes(repeating: a.3), load(xMaxes))
        let intersection = cxxMax(yMax - yMin, zero) * cxxMax(xMax - xMin, zero)
        let iou = (intersection / (aArea + area - intersection)).replacing(with: 0, where: aArea .<= zero .| area .<= zero)
        let flags = UnsafeMutableRawPointer(active + j)
        let wasActive = flags.loadUnaligned(as: SIMD8<Int32>.self)
        let hit = SIMD8<Int32>(repeating: 0).replacing(with: wasActive, where: iou .> Lanes(repeating: threshold))
        flags.storeBytes(of: wasActive & ~hit, as: SIMD8<Int32>.self)
        return hit.wrappedSum()
    }

    // MARK: - Helpers with TFLite's exact semantics

    /// IoU of two `ymin, xmin, ymax, xmax` boxes given with their `area`s; 0 when either has no
    /// area. `std::max`/`std::min` are spelled out because they differ from Swift's for NaN.
    /// Every term is computed (the quotient is discarded when an area is not positive), so a loop
    /// over boxes has no branches.
    @inline(__always)
    static func intersectionOverUnion(_ a: (Float, Float, Float, Float, area: Float),
                                      _ b: (Float, Float, Float, Float, area: Float)) -> Float {
        let yMin = cxxMax(a.0, b.0), xMin = cxxMax(a.1, b.1)
        let yMax = cxxMin(a.2, b.2), xMax = cxxMin(a.3, b.3)
        let intersection = cxxMax(yMax - yMin, 0) * cxxMax(xMax - xMin, 0)
        let quotient = intersection / (a.area + b.area - intersection)
        return a.area <= 0 || b.area <= 0 ? 0 : quotient
    }

    /// The area of a `ymin, xmin, ymax, xmax` box, as TFLite computes it.
    @inline(__always)
    static func area(_ yMin: Float, _ xMin: Float, _ yMax: Float, _ xMax: Float) -> Float {
        (yMax - yMin) * (xMax - xMin)
    }

    @inline(__always) static func cxxMax(_ a: Float, _ b: Float) -> Float { a < b ? b : a }
    @inline(__always) static func cxxMin(_ a: Float, _ b: Float) -> Float { b < a ? b : a }

    /// Index of the first largest value, ignoring NaNs (0 if all are NaN, or `count` is 0).
    ///
    /// Two vector passes (every anchor of an SSD takes one over its 90 class scores; a scalar
    /// loop with a branch per score was most of the post-process): the largest non-NaN value
    /// (lanes start at −∞ and take a value only when it is greater, which a NaN never is), then
    /// the first index that equals it (−0 and +0 are equal, as the scalar comparison has them).
    /// No value equals −∞ only when all are NaN.
    static func argMax(_ values: UnsafePointer<Float>, count: Int) -> Int {
        let raw = UnsafeRawPointer(values)
        var lanes = Lanes(repeating: -.infinity)
        var i = 0
        while i + Lanes.scalarCount <= count {
            let v = raw.loadUnaligned(fromByteOffset: i * 4, as: Lanes.self)
            lanes.replace(with: v, where: v .> lanes)
            i += Lanes.scalarCount
        }
        var largest = lanes.max()
        while i < count {
            if values[i] > largest { largest = values[i] }
            i += 1
        }
        i = 0
        let target = Lanes(repeating: largest)
        while i + Lanes.scalarCount <= count {
            let equal = raw.loadUnaligned(fromByteOffset: i * 4, as: Lanes.self) .== target
            if any(equal) {
                for lane in 0 ..< Lanes.scalarCount where equal[lane] { return i + lane }
            }
            i += Lanes.scalarCount
        }
        while i < count {
            if values[i] == largest { return i }
            i += 1
        }
        return 0
    }

    /// `LibstdcxxOrdering.partialSortDescending`, the order of an anchor's top classes.
    static func partialSortDescending(_ order: UnsafeMutablePointer<Int32>, count: Int, prefix: Int, by values: UnsafePointer<Float>) {
        LibstdcxxOrdering.partialSortDescending(order, count: count, prefix: prefix, by: values)
    }
}
