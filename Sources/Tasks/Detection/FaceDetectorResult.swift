/// What `FaceDetector` returns for one image: one `Detection` per face, best first, each with its
/// box in pixels of the stored image, one category (index 0, the face score) and six keypoints
/// normalised to the image — the left eye, right eye, nose tip, mouth centre, left and right
/// ear tragion, "left" and "right" as seen by the viewer (MediaPipe's order).
public struct FaceDetectorResult: Sendable, Equatable, Codable {
    public var detections: [Detection]
    public var timestampInMilliseconds: Int

    public init(detections: [Detection], timestampInMilliseconds: Int = 0) {
        self.detections = detections
        self.timestampInMilliseconds = timestampInMilliseconds
    }
}
