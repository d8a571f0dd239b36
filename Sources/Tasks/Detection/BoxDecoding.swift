import Foundation

/// How a raw-output SSD's box and score tensors become detections, with the semantics of
/// MediaPipe's `TensorsToDetectionsCalculatorOptions` (the CPU path of
/// `mediapipe/calculators/tensor/tensors_to_detections_calculator.cc`).
///
/// Box row `i` holds `numCoords` values: at `boxCoordOffset` the box (y, x, h, w — or x, y, w, h
/// when `reverseOutputOrder`), at `keypointCoordOffset` `numKeypoints` points (y, x — or x, y).
/// Relative to anchor `i`:
///
///     xCenter = x / xScale · anchor.width + anchor.xCenter      (y likewise)
///     w = w / wScale · anchor.width    (or exp(w / wScale) · anchor.width)
///     keypoint x = kx / xScale · anchor.width + anchor.xCenter
///
/// Each box's score is the best over its classes (after clipping to ±`scoreClippingThresh` and
/// a sigmoid when `sigmoidScore`); boxes scoring below `minScoreThresh` and boxes with a negative
/// or NaN size are dropped.
public struct BoxDecodingOptions: Sendable, Equatable, Codable {
    public var numClasses: Int
    public var numBoxes: Int
    public var numCoords: Int
    public var boxCoordOffset = 0
    public var keypointCoordOffset = 0
    public var numKeypoints = 0
    /// Only 2 (x and y) is supported, as in MediaPipe.
    public var numValuesPerKeypoint = 2
    public var xScale: Float = 0, yScale: Float = 0, wScale: Float = 0, hScale: Float = 0
    public var applyExponentialOnBoxSize = false
    /// Boxes and keypoints are stored x before y (x, y, w, h) instead of (y, x, h, w).
    public var reverseOutputOrder = false
    public var sigmoidScore = false
    /// Raw scores are clipped to ±this before the sigmoid; nil clips nothing.
    public var scoreClippingThresh: Float?
    /// Boxes scoring below this are dropped; nil keeps every box.
    public var minScoreThresh: Float?

    public init(numClasses: Int, numBoxes: Int, numCoords: Int, xScale: Float, yScale: Float, wScale: Float, hScale: Float) {
        self.numClasses = numClasses; self.numBoxes = numBoxes; self.numCoords = numCoords
        self.xScale = xScale; self.yScale = yScale; self.wScale = wScale; self.hScale = hScale
    }

    /// MediaPipe's face detector decoding for a model of `inputSize`×`inputSize` with `numBoxes`
    /// anchors: one class, 16 values per box (box, then six keypoints), x before y, sigmoid
    /// scores clipped at ±100, scales equal to the input size.
    public static func face(inputSize: Int, numBoxes: Int, minScoreThresh: Float) -> BoxDecodingOptions {
        let s = Float(inputSize)
        var o = BoxDecodingOptions(numClasses: 1, numBoxes: numBoxes, numCoords: 16, xScale: s, yScale: s, wScale: s, hScale: s)
        o.keypointCoordOffset = 4; o.numKeypoints = 6
        o.sigmoidScore = true; o.scoreClippingThresh = 100; o.reverseOutputOrder = true
        o.minScoreThresh = minScoreThresh
        return o
    }

    func validate() throws(TaskError) {
        guard numClasses > 0, numBoxes > 0, numBoxes <= 1_000_000, numClasses <= 100_000 else {
            throw .invalidOptions("box decoding: numClasses \(numClasses) and numBoxes \(numBoxes) must be positive (boxes ≤ 1 000 000, classes ≤ 100 000)")
        }
        guard numValuesPerKeypoint == 2 else {
            throw .invalidOptions("box decoding: numValuesPerKeypoint \(numValuesPerKeypoint) is not supported (only 2, x and y, as MediaPipe)")
        }
        guard numKeypoints >= 0, numKeypoints <= 1000, boxCoordOffset >= 0, keypointCoordOffset >= 0,
              numCoords == numKeypoints * numValuesPerKeypoint + 4,
              boxCoordOffset + 4 <= numCoords, keypointCoordOffset + numKeypoints * 2 <= numCoords else {
            throw .invalidOptions("box decoding: numCoords \(numCoords) must be 4 + 2 × numKeypoints (\(numKeypoints)), with the box at "
                + "\(boxCoordOffset) and the keypoints at \(keypointCoordOffset) inside each row")
        }
        guard [xScale, yScale, wScale, hScale].allSatisfy({ $0.isFinite && $0 != 0 }) else {
            throw .invalidOptions("box decoding: scales x \(xScale) y \(yScale) w \(wScale) h \(hScale) must be finite and non-zero")
        }
        if let c = scoreClippingThresh, c.isNaN {
            throw .invalidOptions("box decoding: scoreClippingThresh \(c) must be a number")
        }
    }

    /// Decodes `boxes` (`numBoxes × numCoords` values) and `scores` (`numBoxes × numClasses`)
    /// against `anchors` (`numBoxes` of them) into the detections that pass `minScoreThresh`,
    /// in box order. Tasks check the sizes when they are created; short arrays give no detections.
    func decode(boxes: [Float], scores: [Float], anchors: [Anchor]) -> [NormalizedDetection] {
        guard boxes.count >= numBoxes * numCoords, scores.count >= numBoxes * numClasses, anchors.count == numBoxes else { return [] }
        var detections = [NormalizedDetection]()
        for i in 0 ..< numBoxes {
            // The best class of box i; -Float.greatestFiniteMagnitude and class -1 when every score is NaN.
            var best = -Float.greatestFiniteMagnitude, bestClass = -1
            for c in 0 ..< numClasses {
                var score = scores[i * numClasses + c]
                if sigmoidScore {
                    if let clip = scoreClippingThresh { score = min(max(score, -clip), clip) }
                    score = 1 / (1 + exp(-score))
                }
                if best < score { best = score; bestClass = c }
            }
            if let threshold = minScoreThresh, best < threshold { continue }
            let anchor = anchors[i], row = i * numCoords, b = row + boxCoordOffset
            var x = boxes[b + 1], y = boxes[b], w = boxes[b + 3], h = boxes[b + 2]
            if reverseOutputOrder { (x, y, w, h) = (boxes[b], boxes[b + 1], boxes[b + 2], boxes[b + 3]) }
            let xCenter = x / xScale * anchor.width + anchor.xCenter
            let yCenter = y / yScale * anchor.height + anchor.yCenter
            if applyExponentialOnBoxSize {
                h = exp(h / hScale) * anchor.height
                w = exp(w / wScale) * anchor.width
            } else {
                h = h / hScale * anchor.height
                w = w / wScale * anchor.width
            }
            let ymin = yCenter - h / 2, xmin = xCenter - w / 2, ymax = yCenter + h / 2, xmax = xCenter + w / 2
            let width = xmax - xmin, height = ymax - ymin
            // Negative or NaN sizes are dropped, as MediaPipe does (downstream code assumes w, h ≥ 0).
            guard width >= 0, height >= 0 else { continue }
            var keypoints = [NormalizedKeypoint]()
            keypoints.reserveCapacity(numKeypoints)
            for k in 0 ..< numKeypoints {
                let o = row + keypointCoordOffset + k * numValuesPerKeypoint
                let kx = reverseOutputOrder ? boxes[o] : boxes[o + 1], ky = reverseOutputOrder ? boxes[o + 1] : boxes[o]
                keypoints.append(NormalizedKeypoint(x: kx / xScale * anchor.width + anchor.xCenter,
                                                    y: ky / yScale * anchor.height + anchor.yCenter))
            }
            detections.append(NormalizedDetection(xmin: xmin, ymin: ymin, width: width, height: height,
                                                  score: best, classIndex: bestClass, keypoints: keypoints))
        }
        return detections
    }
}
