import Foundation

/// Where Ultralytics' `LetterBox` puts an image in a YOLO model's input, and how its
/// `scale_boxes` maps input pixels back onto the image.
///
/// The image is scaled by `r = min(inputHeight / height, inputWidth / width)` to
/// `round(width · r) × round(height · r)` (Python's `round`: halves to even; at least 1), centred,
/// and the rest of the input is gray 114; the left and top margins are `round(margin / 2 − 0.1)`.
/// Back on the image, `x = (x′ − left) / (scaledWidth / width)` (and so for y), clipped to the image.
struct YOLOLetterbox: Sendable, Equatable {
    let imageWidth: Int, imageHeight: Int
    /// The scaled image's size and its top-left corner in the input.
    let scaledWidth: Int, scaledHeight: Int, left: Int, top: Int

    /// Ultralytics' padding value (`LetterBox(padding_value=114)`).
    static let fill: UInt8 = 114

    init(imageWidth: Int, imageHeight: Int, inputWidth: Int, inputHeight: Int) {
        self.imageWidth = imageWidth
        self.imageHeight = imageHeight
        let r = min(Double(inputHeight) / Double(imageHeight), Double(inputWidth) / Double(imageWidth))
        scaledWidth = max(Int((Double(imageWidth) * r).rounded(.toNearestOrEven)), 1)
        scaledHeight = max(Int((Double(imageHeight) * r).rounded(.toNearestOrEven)), 1)
        left = Int((Double(inputWidth - scaledWidth) / 2 - 0.1).rounded(.toNearestOrEven))
        top = Int((Double(inputHeight - scaledHeight) / 2 - 0.1).rounded(.toNearestOrEven))
    }

    /// An input-pixel x (or y) on the image, clipped to it.
    func imageX(_ x: Float) -> Float {
        min(max((x - Float(left)) / Float(Double(scaledWidth) / Double(imageWidth)), 0), Float(imageWidth))
    }

    func imageY(_ y: Float) -> Float {
        min(max((y - Float(top)) / Float(Double(scaledHeight) / Double(imageHeight)), 0), Float(imageHeight))
    }
}

extension InputTensorEncoder {
    /// Encodes `image` (already upright) as Ultralytics' predictor feeds a YOLO model: letterboxed
    /// (`YOLOLetterbox`), resampled with pixel centres aligned (OpenCV's `resize`, bilinear),
    /// gray 114 around, then this encoder's normalisation (`x / 255` for a float input without
    /// metadata, as Ultralytics).
    func encodeYOLOLetterboxed(_ image: MPImage) -> (Data, YOLOLetterbox) {
        let box = YOLOLetterbox(imageWidth: image.width, imageHeight: image.height, inputWidth: width, inputHeight: height)
        var resize = self
        resize.convention = .halfPixelCenters
        let rgb = resize.resampled(image, source: (0, 0, Double(image.width), Double(image.height)),
                                   destination: (box.left, box.top, box.scaledWidth, box.scaledHeight), fill: YOLOLetterbox.fill)
        return (normalize(rgb), box)
    }
}
