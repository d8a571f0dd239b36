/// A detection before it becomes pixels: MediaPipe's `RELATIVE_BOUNDING_BOX` location (origin and
/// size normalised to the model input, later to the image), the best class and its score, and the
/// keypoints in the same coordinates. What box decoding produces and NMS consumes.
struct NormalizedDetection: Sendable, Equatable {
    var xmin: Float, ymin: Float, width: Float, height: Float
    var score: Float
    var classIndex: Int
    var keypoints: [NormalizedKeypoint]

    var xmax: Float { xmin + width }
    var ymax: Float { ymin + height }

    /// The detection moved through `transform` (a point map from model-input to image coordinates):
    /// keypoints mapped one by one; the box becomes the smallest upright box around its four mapped
    /// corners (MediaPipe's `DetectionProjectionCalculator`).
    func projected(_ transform: (Float, Float) -> (Float, Float)) -> NormalizedDetection {
        var out = self
        out.keypoints = keypoints.map { k in
            var p = k
            (p.x, p.y) = transform(k.x, k.y)
            return p
        }
        let corners = [transform(xmin, ymin), transform(xmin + width, ymin), transform(xmin + width, ymin + height), transform(xmin, ymin + height)]
        var left = Float.greatestFiniteMagnitude, top = Float.greatestFiniteMagnitude
        var right = -Float.greatestFiniteMagnitude, bottom = -Float.greatestFiniteMagnitude
        for (x, y) in corners {
            left = min(left, x); top = min(top, y); right = max(right, x); bottom = max(bottom, y)
        }
        out.xmin = left; out.ymin = top; out.width = right - left; out.height = bottom - top
        return out
    }

    /// MediaPipe's pixel box (`DetectionTransformationCalculator`): each of origin and size is the
    /// float32 product with the image side truncated toward zero, then bounded to 0...side.
    func pixelBox(imageWidth: Int, imageHeight: Int) -> BoundingBox {
        let w = Float(imageWidth), h = Float(imageHeight)
        func bounded(_ v: Float, _ side: Int) -> Int { max(0, min(ObjectDetector.truncated(v), side)) }
        return BoundingBox(originX: bounded(xmin * w, imageWidth), originY: bounded(ymin * h, imageHeight),
                           width: bounded(width * w, imageWidth), height: bounded(height * h, imageHeight))
    }
}
