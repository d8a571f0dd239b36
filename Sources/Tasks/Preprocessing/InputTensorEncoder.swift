import Engine
import Foundation

/// Turns an `Image` into the bytes of a model's image input: orientation, region of interest,
/// crop-and-scale, bilinear resampling, normalisation and quantization.
///
/// Sampling convention: output pixel `(x, y)` samples the source at
/// `((x + 0.5) · sw / dw − 0.5, (y + 0.5) · sh / dh − 0.5)` relative to the sampled region (pixel
/// centres aligned, as OpenCV's `resize` and TF's `half_pixel_centers`), with bilinear weights and
/// edge pixels replicated beyond the border. The sampled values are rounded to 8 bits, as
/// MediaPipe's CPU path does, before normalisation.
///
/// Normalisation: float inputs get `(pixel − mean) / std` per channel from the model's metadata (or
/// `[0, 1]` scaling when there is none); uint8 inputs get the pixel values; int8 inputs get
/// `pixel − 128`.
public struct InputTensorEncoder: Sendable {
    public let width: Int
    public let height: Int
    public let channels: Int
    public let dataType: DataType
    public let mean: [Float]
    public let std: [Float]

    /// - Throws: `TaskError.unsupportedModel` unless the input is `[1, h, w, 3]` (or 1 channel) of
    ///   float32, uint8 or int8.
    public init(input: TensorDescriptor, metadata: TensorMetadata?) throws(TaskError) {
        let shape = input.shape
        guard shape.count == 4, shape[0] == 1, shape[1] > 0, shape[2] > 0, shape[3] == 3 || shape[3] == 1 else {
            throw .unsupportedModel("image input '\(input.name)' has shape \(shape), expected [1, height, width, 3]")
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

    /// The source rectangle (in pixels of `image`) that maps onto the whole input, and the
    /// destination rectangle it fills (smaller than the input only for `scaleFit`).
    func geometry(imageWidth: Int, imageHeight: Int, crop: ImageCropAndScale, region: RegionOfInterest)
        -> (source: (x: Double, y: Double, w: Double, h: Double), destination: (x: Int, y: Int, w: Int, h: Int)) {
        var sx = region.x * Double(imageWidth), sy = region.y * Double(imageHeight)
        var sw = region.width * Double(imageWidth), sh = region.height * Double(imageHeight)
        var destination = (x: 0, y: 0, w: width, h: height)
        let targetAspect = Double(width) / Double(height), sourceAspect = sw / sh
        switch crop {
        case .scaleFill:
            break
        case .centerCrop:
            if sourceAspect > targetAspect {
                let newWidth = sh * targetAspect
                sx += (sw - newWidth) / 2; sw = newWidth
            } else {
                let newHeight = sw / targetAspect
                sy += (sh - newHeight) / 2; sh = newHeight
            }
        case .scaleFit:
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

    /// Encodes `image` (already upright) as input bytes.
    public func encode(_ image: Image, crop: ImageCropAndScale = .scaleFill, region: RegionOfInterest = .full) throws(TaskError) -> Data {
        guard region.width > 0, region.height > 0, region.x >= 0, region.y >= 0,
              region.x + region.width <= 1.000001, region.y + region.height <= 1.000001 else {
            throw .invalidArgument("region of interest \(region) must lie inside the unit square with positive size")
        }
        let (source, destination) = geometry(imageWidth: image.width, imageHeight: image.height, crop: crop, region: region)
        // Resample to 8-bit RGB at the input size (black outside the destination rectangle).
        var rgb = [UInt8](repeating: 0, count: width * height * 3)
        image.pixels.withUnsafeBufferPointer { src in
            let scaleX = source.w / Double(destination.w), scaleY = source.h / Double(destination.h)
            for dy in 0 ..< destination.h {
                let fy = source.y + (Double(dy) + 0.5) * scaleY - 0.5
                let (y0, y1, wy) = Self.taps(fy, limit: image.height)
                for dx in 0 ..< destination.w {
                    let fx = source.x + (Double(dx) + 0.5) * scaleX - 0.5
                    let (x0, x1, wx) = Self.taps(fx, limit: image.width)
                    let out = ((destination.y + dy) * width + destination.x + dx) * 3
                    for c in 0 ..< 3 {
                        let p00 = Double(src[(y0 * image.width + x0) * 3 + c]), p01 = Double(src[(y0 * image.width + x1) * 3 + c])
                        let p10 = Double(src[(y1 * image.width + x0) * 3 + c]), p11 = Double(src[(y1 * image.width + x1) * 3 + c])
                        let top = p00 + (p01 - p00) * wx, bottom = p10 + (p11 - p10) * wx
                        rgb[out + c] = UInt8(min(255, max(0, (top + (bottom - top) * wy).rounded())))
                    }
                }
            }
        }
        return normalize(rgb)
    }

    /// The two source indices around `f` (clamped to the image) and the weight of the second.
    @inline(__always)
    static func taps(_ f: Double, limit: Int) -> (Int, Int, Double) {
        let clamped = min(max(f, 0), Double(limit - 1))
        let i0 = Int(clamped.rounded(.down))
        let i1 = min(i0 + 1, limit - 1)
        return (i0, i1, clamped - Double(i0))
    }

    private func normalize(_ rgb: [UInt8]) -> Data {
        let pixels = width * height
        switch dataType {
        case .float32:
            var values = [Float](repeating: 0, count: pixels * channels)
            for p in 0 ..< pixels {
                if channels == 1 {
                    let gray = (Float(rgb[p * 3]) + Float(rgb[p * 3 + 1]) + Float(rgb[p * 3 + 2])) / 3
                    values[p] = (gray - mean[0]) / std[0]
                } else {
                    for c in 0 ..< 3 {
                        let m = mean.count == 3 ? mean[c] : mean[0], s = std.count == 3 ? std[c] : std[0]
                        values[p * 3 + c] = (Float(rgb[p * 3 + c]) - m) / s
                    }
                }
            }
            return values.withUnsafeBytes { Data($0) }
        case .int8:
            return Data(rgb.map { UInt8(bitPattern: Int8(Int($0) - 128)) })
        default:
            return Data(rgb)
        }
    }
}
