import Engine
import Foundation

/// How output pixels sample the source image when resizing.
public enum ResamplingConvention: String, Sendable, CaseIterable {
    /// MediaPipe's CPU path (OpenCV `warpPerspective`, `INTER_LINEAR`, replicated border): output
    /// pixel `x` samples source position `x · sw / dw` (pixel corners aligned, no half-pixel
    /// offset), the position rounded to 1/32 pixel, bilinear weights in 1/32768 fixed point, the
    /// result rounded to 8 bits. Reproduces MediaPipe's input tensors exactly.
    case mediapipe
    /// Pixel centres aligned — source position `(x + 0.5) · sw / dw − 0.5` — as PIL, OpenCV's
    /// `resize` and TF's `half_pixel_centers`; bilinear in double precision, rounded to 8 bits.
    case halfPixelCenters
}

/// Turns an `MPImage` into the bytes of a model's image input: region of interest, crop-and-scale,
/// bilinear resampling (see `ResamplingConvention`; MediaPipe's by default), normalisation and
/// quantization. Pixels outside the image replicate the nearest edge pixel.
///
/// Normalisation, as MediaPipe: float inputs get the 8-bit value mapped linearly from [0, 255] onto
/// `[(0 − mean) / std, (255 − mean) / std]` per channel (mean and std from the model's metadata;
/// `[0, 1]` when there is none); uint8 inputs get the 8-bit values; int8 inputs get `value − 128`.
public struct InputTensorEncoder: Sendable {
    public let width: Int
    public let height: Int
    public let channels: Int
    public let dataType: DataType
    /// The input is `[1, 3, height, width]` (planes of R, G and B, as PyTorch-converted models such
    /// as Ultralytics' current TFLite exports take) rather than `[1, height, width, 3]`.
    public let channelsFirst: Bool
    public let mean: [Float]
    public let std: [Float]
    public var convention = ResamplingConvention.mediapipe

    /// - Throws: `TaskError.unsupportedModel` unless the input is `[1, h, w, 3]` (or 1 channel), or
    ///   `[1, 3, h, w]` (channels first), of float32, uint8 or int8.
    public init(input: TensorDescriptor, metadata: TensorMetadata?) throws(TaskError) {
        var shape = input.shape
        // Channels first: 3 planes, and a last axis that cannot be channels.
        channelsFirst = shape.count == 4 && shape[1] == 3 && shape[3] != 3 && shape[3] != 1
        if channelsFirst { shape = [shape[0], shape[2], shape[3], shape[1]] }
        guard shape.count == 4, shape[0] == 1, shape[1] > 0, shape[2] > 0, shape[3] == 3 || shape[3] == 1 else {
            throw .unsupportedModel("image input '\(input.name)' has shape \(input.shape), expected [1, height, width, 3] or [1, 3, height, width]")
        }
        guard [.float32, .uint8, .int8].contains(input.dataType) else {
            throw .unsupportedModel("image input '\(input.name)' has type \(input.dataType), expected float32, uint8 or int8")
        }
        height = shape[1]; width = shape[2]; channels = shape[3]; dataType = input.dataType
        let normalization = metadata?.normalization
        let mean = normalization?.mean ?? [], std = normalization?.std ?? []
        guard [0, 1, channels].contains(mean.count), mean.count == std.count || (mean.isEmpty && std.isEmpty),
              std.allSatisfy({ $0 != 0 && $0.isFinite }) else {
            throw .unsupportedModel("metadata normalization mean \(mean) / std \(std) does not fit \(channels) channels")
        }
        if input.dataType == .float32 && mean.isEmpty {
            self.mean = [0]; self.std = [255]
        } else {
            self.mean = mean; self.std = std
        }
    }

    /// `region` when it lies inside the unit square with a positive size.
    static func checked(_ region: RegionOfInterest) throws(TaskError) -> RegionOfInterest {
        // The slack absorbs rounding in regions mapped between orientations.
        let slack = 0.000001
        guard region.width > 0, region.height > 0, region.x >= -slack, region.y >= -slack,
              region.x + region.width <= 1 + slack, region.y + region.height <= 1 + slack else {
            throw .invalidArgument("region of interest \(region) must lie inside the unit square with positive size")
        }
        return region
    }

    /// The source rectangle (in pixels of `image`) that maps onto the whole input, and the
    /// destination rectangle it fills (smaller than the input only for `scaleFit`).
    func geometry(imageWidth: Int, imageHeight: Int, crop: ImageCropAndScale, region: RegionOfInterest)
        -> (source: (x: Double, y: Double, w: Double, h: Double), destination: (x: Int, y: Int, w: Int, h: Int)) {
        var sx = region.x * Double(imageWidth), sy = region.y * Double(imageHeight)
        var sw = region.width * Double(imageWidth), sh = region.height * Double(imageHeight)
        var destination = (x: 0, y: 0, w: width, h: height)
        let targetAspect = Double(width) / Double(height), sourceAspect = sw / sh
        switch crop {
        case .scaleFill, .scaleFillRotate90CCW:
            break
        case .centerCrop:
            if sourceAspect > targetAspect {
                let newWidth = sh * targetAspect
                sx += (sw - newWidth) / 2; sw = newWidth
            } else {
                let newHeight = sw / targetAspect
                sy += (sh - newHeight) / 2; sh = newHeight
            }
        case .scaleFit, .scaleFitRotate90CCW:
            if sourceAspect > targetAspect {
                let h = max(1, Int((Double(width) / sourceAspect).rounded()))
                destination = (0, (height - h) / 2, width, h)
            } else {
                let w = max(1, Int((Double(height) * sourceAspect).rounded()))
                destination = ((width - w) / 2, 0, w, height)
            }
        }
        return ((sx, sy, sw, sh), destination)
    }

    /// Encodes `image` (already upright) as input bytes. The rotating crops turn the image 90°
    /// counterclockwise first (and `region` is then in the rotated image's coordinates).
    public func encode(_ image: MPImage, crop: ImageCropAndScale = .scaleFill, region: RegionOfInterest = .full) throws(TaskError) -> Data {
        _ = try Self.checked(region)
        if crop == .scaleFitRotate90CCW || crop == .scaleFillRotate90CCW {
            let turned = MPImage(unchecked: image.pixels, width: image.width, height: image.height, orientation: .left).applyingOrientation()
            return try encode(turned, crop: crop == .scaleFitRotate90CCW ? .scaleFit : .scaleFill, region: region)
        }
        let (source, destination) = geometry(imageWidth: image.width, imageHeight: image.height, crop: crop, region: region)
        return normalize(resampled(image, source: source, destination: destination, fill: 0))
    }

    /// 8-bit RGB at the input size: `source` (pixels of `image`) resampled onto `destination`,
    /// every pixel outside `destination` set to `fill`.
    func resampled(_ image: MPImage, source: (x: Double, y: Double, w: Double, h: Double),
                   destination: (x: Int, y: Int, w: Int, h: Int), fill: UInt8) -> [UInt8] {
        var rgb = [UInt8](repeating: fill, count: width * height * 3)
        let scaleX = source.w / Double(destination.w), scaleY = source.h / Double(destination.h)
        image.pixels.withUnsafeBufferPointer { src in
            for dy in 0 ..< destination.h {
                let (y0, y1, wy) = taps(source.y, Double(dy), scaleY, limit: image.height)
                for dx in 0 ..< destination.w {
                    let (x0, x1, wx) = taps(source.x, Double(dx), scaleX, limit: image.width)
                    let out = ((destination.y + dy) * width + destination.x + dx) * 3
                    let r0 = y0 * image.width, r1 = y1 * image.width
                    for c in 0 ..< 3 {
                        let p00 = Int(src[(r0 + x0) * 3 + c]), p01 = Int(src[(r0 + x1) * 3 + c])
                        let p10 = Int(src[(r1 + x0) * 3 + c]), p11 = Int(src[(r1 + x1) * 3 + c])
                        rgb[out + c] = blend(p00, p01, p10, p11, wx, wy)
                    }
                }
            }
        }
        return rgb
    }

    /// The two source indices around output position `index` (clamped to the image: replicated
    /// border) and the weight of the second, in 1/32 steps for `.mediapipe`.
    @inline(__always)
    private func taps(_ origin: Double, _ index: Double, _ scale: Double, limit: Int) -> (Int, Int, Double) {
        switch convention {
        case .mediapipe:
            // OpenCV rounds the source position to 1/32 pixel (round half to even) and splits it.
            let fixed = Int(((origin + index * scale) * 32).rounded(.toNearestOrEven))
            let whole = fixed >> 5, fraction = fixed & 31
            return (min(max(whole, 0), limit - 1), min(max(whole + 1, 0), limit - 1), Double(fraction))
        case .halfPixelCenters:
            let f = min(max(origin + (index + 0.5) * scale - 0.5, 0), Double(limit - 1))
            let i0 = Int(f.rounded(.down))
            return (i0, min(i0 + 1, limit - 1), f - Double(i0))
        }
    }

    /// Bilinear blend of four 8-bit values, rounded to 8 bits.
    @inline(__always)
    func blend(_ p00: Int, _ p01: Int, _ p10: Int, _ p11: Int, _ wx: Double, _ wy: Double) -> UInt8 {
        switch convention {
        case .mediapipe:
            // Weights (32 − fx)(32 − fy)·32 etc. sum to exactly 1 << 15, as OpenCV's fixed-point table.
            let fx = Int(wx), fy = Int(wy)
            let sum = p00 * (32 - fx) * (32 - fy) + p01 * fx * (32 - fy) + p10 * (32 - fx) * fy + p11 * fx * fy
            return UInt8(clamping: (sum * 32 + (1 << 14)) >> 15)
        case .halfPixelCenters:
            let top = Double(p00) + Double(p01 - p00) * wx, bottom = Double(p10) + Double(p11 - p10) * wx
            return UInt8(min(255, max(0, (top + (bottom - top) * wy).rounded())))
        }
    }

    /// The input's values from 8-bit RGB: `[h, w, channels]`, or the planes R, G, B for a
    /// channels-first input.
    func normalize(_ rgb: [UInt8]) -> Data {
        let pixels = width * height
        switch dataType {
        case .float32:
            // Per channel: value · scale + low, mapping [0, 255] onto [low, high] (MediaPipe's way).
            func range(_ c: Int) -> (scale: Float, low: Float) {
                let m = mean.count == 3 ? mean[c] : mean[0], s = std.count == 3 ? std[c] : std[0]
                let low = (0 - m) / s, high = (255 - m) / s
                return ((high - low) / 255, low)
            }
            let ranges = (0 ..< 3).map(range)
            var values = [Float](repeating: 0, count: pixels * channels)
            if channels == 1 {
                for p in 0 ..< pixels {
                    let gray = (Float(rgb[p * 3]) + Float(rgb[p * 3 + 1]) + Float(rgb[p * 3 + 2])) / 3
                    values[p] = gray * ranges[0].scale + ranges[0].low
                }
            } else {
                // Element (p, c) goes to c · pixels + p (planes) or p · 3 + c (interleaved).
                let (pixelStride, planeStride) = channelsFirst ? (1, pixels) : (3, 1)
                for c in 0 ..< 3 {
                    let (scale, low) = ranges[c]
                    for p in 0 ..< pixels { values[p * pixelStride + c * planeStride] = Float(rgb[p * 3 + c]) * scale + low }
                }
            }
            return values.withUnsafeBytes { Data($0) }
        case .int8:
            return Data(eightBit(rgb).map { UInt8(bitPattern: Int8(Int($0) - 128)) })
        default:
            return Data(eightBit(rgb))
        }
    }

    /// The 8-bit values in the input's layout: RGB as is or as planes, or for one channel the
    /// rounded mean of R, G, B.
    private func eightBit(_ rgb: [UInt8]) -> [UInt8] {
        if channelsFirst {
            let pixels = width * height
            return (0 ..< 3 * pixels).map { i in rgb[(i % pixels) * 3 + i / pixels] }
        }
        guard channels == 1 else { return rgb }
        return (0 ..< width * height).map { (p: Int) -> UInt8 in
            let sum = Int(rgb[p * 3]) + Int(rgb[p * 3 + 1]) + Int(rgb[p * 3 + 2])
            return UInt8((sum + 1) / 3)
        }
    }
}

