import Engine
import Foundation

/// Everything needed to turn a raw-output SSD's two tensors (boxes `[1, N, coords]`, scores
/// `[1, N, classes]`) into detections: the anchors, the box decoding and the non-max suppression
/// — MediaPipe's `SsdAnchorsCalculator` → `TensorsToDetectionsCalculator` →
/// `NonMaxSuppressionCalculator`.
///
/// ```swift
/// let options = ObjectDetectorOptions(modelPath: "blazeface.tflite")
/// options.rawOutputDecoding = SsdDecoding.face(inputSize: 128, minScore: 0.5, minSuppressionThreshold: 0.3)
/// ```
public struct SsdDecoding: Sendable, Equatable, Codable {
    public var anchors: SsdAnchorOptions
    public var boxes: BoxDecodingOptions
    public var nonMaxSuppression: NonMaxSuppressionOptions

    public init(anchors: SsdAnchorOptions, boxes: BoxDecodingOptions, nonMaxSuppression: NonMaxSuppressionOptions) {
        self.anchors = anchors; self.boxes = boxes; self.nonMaxSuppression = nonMaxSuppression
    }

    /// The input sizes of MediaPipe's face detectors: 128 (short range), 192 (full range).
    public static let faceInputSizes = [128, 192]

    /// MediaPipe's face detector configuration for a square `inputSize` input, as its
    /// `face_detector_graph.cc` chooses it for models without metadata: the short-range anchors
    /// for 128, the full-range ones for 192; weighted NMS by intersection over union. nil for any
    /// other size.
    public static func face(inputSize: Int, minScore: Float, minSuppressionThreshold: Float) -> SsdDecoding? {
        let anchors: SsdAnchorOptions
        switch inputSize {
        case 128: anchors = .faceShortRange
        case 192: anchors = .faceFullRange
        default: return nil
        }
        let count = inputSize == 128 ? 896 : 2304
        return SsdDecoding(anchors: anchors, boxes: .face(inputSize: inputSize, numBoxes: count, minScoreThresh: minScore),
                           nonMaxSuppression: NonMaxSuppressionOptions(algorithm: .weighted, minSuppressionThreshold: minSuppressionThreshold))
    }
}

/// An `SsdDecoding` checked against a model's outputs, with its anchors generated once.
struct SsdDecoder: Sendable {
    let decoding: SsdDecoding
    let anchors: [Anchor]
    /// Positions of the boxes and scores outputs in the model's output list.
    let boxesOutput: Int, scoresOutput: Int

    /// - Throws: `TaskError.invalidOptions` for inconsistent options (anchor count ≠ `numBoxes`, ...),
    ///   `TaskError.unsupportedModel` when the model's outputs are not boxes `[1, numBoxes, numCoords]`
    ///   and scores `[1, numBoxes, numClasses]` (a leading `[1, 1, ...]` is accepted too), float32 or
    ///   8-bit quantized.
    init(_ decoding: SsdDecoding, outputs: [TensorDescriptor], task: String) throws(TaskError) {
        try decoding.boxes.validate()
        try decoding.nonMaxSuppression.validate()
        let count = try decoding.anchors.anchorCount()
        let b = decoding.boxes
        guard count == b.numBoxes else {
            throw .invalidOptions("the SSD anchor options make \(count) anchors, the box decoding expects numBoxes \(b.numBoxes)")
        }
        anchors = try decoding.anchors.anchors()
        self.decoding = decoding
        func fits(_ t: TensorDescriptor, _ last: Int) -> Bool {
            let s = t.shape
            return (s == [1, b.numBoxes, last] || s == [1, 1, b.numBoxes, last]) && [.float32, .uint8, .int8].contains(t.dataType)
        }
        let list = outputs.enumerated().map { "\($0) '\($1.name)' \($1.shape) \($1.dataType)" }.joined(separator: ", ")
        guard outputs.count == 2 else {
            throw .unsupportedModel("\(task) needs 2 outputs (boxes [1, \(b.numBoxes), \(b.numCoords)] and scores [1, \(b.numBoxes), \(b.numClasses)]), the model has \(outputs.count): \(list)")
        }
        // MediaPipe reads output 0 as boxes and 1 as scores; a model listing them the other way round is accepted too.
        if fits(outputs[0], b.numCoords) && fits(outputs[1], b.numClasses) {
            (boxesOutput, scoresOutput) = (0, 1)
        } else if fits(outputs[1], b.numCoords) && fits(outputs[0], b.numClasses) {
            (boxesOutput, scoresOutput) = (1, 0)
        } else {
            throw .unsupportedModel("\(task) needs boxes [1, \(b.numBoxes), \(b.numCoords)] and scores [1, \(b.numBoxes), \(b.numClasses)] "
                + "(float32 or 8-bit), the model's outputs are \(list)")
        }
    }

    /// Decoded, suppressed detections in normalised input coordinates, best first.
    func detections(_ outputs: [[Float]]) -> [NormalizedDetection] {
        let decoded = decoding.boxes.decode(boxes: outputs[boxesOutput], scores: outputs[scoresOutput], anchors: anchors)
        return decoding.nonMaxSuppression.apply(decoded)
    }

    /// Runs the model on `image` and returns its detections in the stored image's frame, best
    /// first: letterboxed (MediaPipe's face and palm detectors: aspect ratio kept, black around)
    /// or stretched to the input (MediaPipe's object detector), decoded, suppressed, projected
    /// back, boxes in pixels and keypoints normalised to the image. Category names are left to
    /// the caller.
    func detections(in image: MPImage, model: TaskModel, encoder: InputTensorEncoder, letterbox: Bool) throws(TaskError) -> [Detection] {
        let upright = image.applyingOrientation()
        let input: Data, box: Letterbox?
        if letterbox {
            let (data, placed) = encoder.encodeLetterboxed(upright)
            (input, box) = (data, placed)
        } else {
            (input, box) = (try encoder.encode(upright, crop: .scaleFill), nil)
        }
        let outputs = try model.run(input, outputs: 2)
        return detections(outputs).map { found in
            // Letterboxed input coordinates onto the image; stretched ones already are the image's.
            var d = box.map { found.projected($0.project) } ?? found
            if image.orientation != .up {
                // Normalised upright coordinates back to the stored frame (MediaPipe's unrotated one).
                let r = RegionOfInterest(x: Double(d.xmin), y: Double(d.ymin), width: Double(d.width), height: Double(d.height))
                    .inStoredFrame(of: image.orientation)
                d.xmin = Float(r.x); d.ymin = Float(r.y); d.width = Float(r.width); d.height = Float(r.height)
                d.keypoints = d.keypoints.map { k in
                    let p = RegionOfInterest(x: Double(k.x), y: Double(k.y), width: 0, height: 0).inStoredFrame(of: image.orientation)
                    return NormalizedKeypoint(x: Float(p.x), y: Float(p.y), label: k.label, score: k.score)
                }
            }
            return Detection(boundingBox: d.pixelBox(imageWidth: image.width, imageHeight: image.height),
                             categories: [Category(index: d.classIndex, score: d.score, categoryName: nil, displayName: nil)],
                             keypoints: d.keypoints.isEmpty ? nil : d.keypoints)
        }
    }
}
