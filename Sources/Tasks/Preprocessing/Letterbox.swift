import Foundation

/// Where a letterboxed image sits in a model input, and how to map the model's normalised
/// coordinates back onto the image: MediaPipe's `ImageToTensorCalculator` with
/// `keep_aspect_ratio` and `BORDER_ZERO` (what its face and palm detectors use).
///
/// The image's rectangle is widened (or heightened) about its centre to the input's aspect ratio
/// (`PadRoi` in `image_to_tensor_utils.cc`); that padded rectangle is warped onto the whole input
/// and whatever falls outside the image is black — pixel value 0 before normalisation, so −1 for
/// a [−1, 1] model.
struct Letterbox: Sendable, Equatable {
    /// The padded source rectangle in image pixels (origin may be negative).
    var x: Float, y: Float, width: Float, height: Float
    /// The projection from normalised input coordinates to normalised image coordinates:
    /// `x′ = x · scaleX + offsetX`, `y′ = y · scaleY + offsetY` (MediaPipe's `PROJECTION_MATRIX`
    /// for an unrotated region, computed in float32 as `GetRotatedSubRectToRectTransformMatrix`).
    var scaleX: Float, offsetX: Float, scaleY: Float, offsetY: Float

    /// The letterbox of a `imageWidth`×`imageHeight` image in a `inputWidth`×`inputHeight` input.
    init(imageWidth: Int, imageHeight: Int, inputWidth: Int, inputHeight: Int) {
        let centerX = 0.5 * Float(imageWidth), centerY = 0.5 * Float(imageHeight)
        var w = Float(imageWidth), h = Float(imageHeight)
        let inputAspect = Float(inputHeight) / Float(inputWidth), imageAspect = h / w
        if inputAspect > imageAspect {
            h = w * inputAspect
        } else {
            w = h / inputAspect
        }
        x = centerX - 0.5 * w; y = centerY - 0.5 * h; width = w; height = h
        let g = 1 / Float(imageWidth), k = 1 / Float(imageHeight)
        scaleX = w * g; offsetX = (-0.5 * w + centerX) * g
        scaleY = h * k; offsetY = (-0.5 * h + centerY) * k
    }

    /// A normalised input point on the normalised image.
    func project(_ px: Float, _ py: Float) -> (Float, Float) {
        (px * scaleX + offsetX, py * scaleY + offsetY)
    }
}

extension InputTensorEncoder {
    /// Encodes `image` (already upright) letterboxed into the input, as MediaPipe's CPU
    /// image-to-tensor converter does with `keep_aspect_ratio` and a zero border: output pixel
    /// `(dx, dy)` samples the source at `letterbox.origin + d · letterbox.size / inputSize`,
    /// rounded to 1/32 pixel, bilinear in OpenCV's fixed point; a tap outside the image reads 0.
    /// Always uses MediaPipe's resampling, whatever `convention` says.
    func encodeLetterboxed(_ image: MPImage) -> (Data, Letterbox) {
        let box = Letterbox(imageWidth: image.width, imageHeight: image.height, inputWidth: width, inputHeight: height)
        var exact = self
        exact.convention = .mediapipe
        var rgb = [UInt8](repeating: 0, count: width * height * 3)
        // OpenCV's boxPoints puts the far corner at 2 · centre − near corner (float32); the warp
        // maps the corners onto the input's corners, so the step is their distance over the size.
        let right = 2 * (0.5 * Float(image.width)) - box.x, bottom = 2 * (0.5 * Float(image.height)) - box.y
        let scaleX = (Double(right) - Double(box.x)) / Double(width), scaleY = (Double(bottom) - Double(box.y)) / Double(height)
        /// The source index at or left of output position `index`, and the 1/32 fraction past it.
        func tap(_ origin: Float, _ index: Int, _ scale: Double) -> (Int, Int) {
            let fixed = Int(((Double(origin) + Double(index) * scale) * 32).rounded(.toNearestOrEven))
            return (fixed >> 5, fixed & 31)
        }
        image.pixels.withUnsafeBufferPointer { src in
            for dy in 0 ..< height {
                let (y0, fy) = tap(box.y, dy, scaleY)
                // Row starts of the two taps, -1 for a tap outside the image.
                let r0 = (0 ..< image.height).contains(y0) ? y0 * image.width : -1
                let r1 = (0 ..< image.height).contains(y0 + 1) ? (y0 + 1) * image.width : -1
                for dx in 0 ..< width {
                    let (x0, fx) = tap(box.x, dx, scaleX)
                    let c0 = (0 ..< image.width).contains(x0) ? x0 : -1, c1 = (0 ..< image.width).contains(x0 + 1) ? x0 + 1 : -1
                    // Taps wholly outside the image are black; no need to blend.
                    if r0 < 0 && r1 < 0 || c0 < 0 && c1 < 0 { continue }
                    let out = (dy * width + dx) * 3
                    for c in 0 ..< 3 {
                        func value(_ r: Int, _ col: Int) -> Int { r < 0 || col < 0 ? 0 : Int(src[(r + col) * 3 + c]) }
                        rgb[out + c] = exact.blend(value(r0, c0), value(r0, c1), value(r1, c0), value(r1, c1), Double(fx), Double(fy))
                    }
                }
            }
        }
        return (normalize(rgb), box)
    }
}
