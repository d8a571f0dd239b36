/// The eight orientations applied: EXIF values, mirrored variants, and the geometry that maps
/// rectangles between the stored frame and the upright one.
extension MPImage.Orientation {
    /// The orientation an EXIF/TIFF `Orientation` tag (274) names, as `CGImagePropertyOrientation`
    /// and `UIImage.Orientation` read it: 1 up, 2 upMirrored, 3 down, 4 downMirrored,
    /// 5 leftMirrored, 6 right, 7 rightMirrored, 8 left. Nil for any other value.
    public init?(exifValue: Int) {
        switch exifValue {
        case 1: self = .up
        case 2: self = .upMirrored
        case 3: self = .down
        case 4: self = .downMirrored
        case 5: self = .leftMirrored
        case 6: self = .right
        case 7: self = .rightMirrored
        case 8: self = .left
        default: return nil
        }
    }

    /// The EXIF `Orientation` value of this orientation (1...8).
    public var exifValue: Int {
        switch self {
        case .up: 1
        case .upMirrored: 2
        case .down: 3
        case .downMirrored: 4
        case .leftMirrored: 5
        case .right: 6
        case .rightMirrored: 7
        case .left: 8
        }
    }

    /// True for the four mirrored orientations (which MediaPipe's tasks reject).
    public var isMirrored: Bool { [.upMirrored, .downMirrored, .leftMirrored, .rightMirrored].contains(self) }

    /// True when the upright image's width is the stored height.
    var swapsSides: Bool { [.left, .right, .leftMirrored, .rightMirrored].contains(self) }

    /// The stored pixel `(x, y)` that upright pixel `(u, v)` shows, for stored size `w × h`
    /// (EXIF 2.32 §4.6.4 A, tag 274: where row 0 and column 0 of the stored image appear).
    @inline(__always)
    func storedPixel(_ u: Int, _ v: Int, width w: Int, height h: Int) -> (x: Int, y: Int) {
        switch self {
        case .up: (u, v)
        case .upMirrored: (w - 1 - u, v)
        case .down: (w - 1 - u, h - 1 - v)
        case .downMirrored: (u, h - 1 - v)
        case .leftMirrored: (v, u)
        case .right: (v, h - 1 - u)
        case .rightMirrored: (w - 1 - v, h - 1 - u)
        case .left: (w - 1 - v, u)
        }
    }

    /// The orientation that undoes this one (the two quarter turns swap; the others undo themselves).
    var inverse: MPImage.Orientation {
        switch self {
        case .right: .left
        case .left: .right
        default: self
        }
    }
}

extension MPImage {
    /// The pixels as they are meant to be seen: ``orientation`` applied, mirrored orientations
    /// included (as Vision and Core Image apply `CGImagePropertyOrientation`), with orientation `.up`.
    ///
    /// ```swift
    /// let stored = try MPImage(pixels: [1, 1, 1, 2, 2, 2], width: 2, height: 1, orientation: .upMirrored)
    /// let shown = stored.applyingOrientation()   // pixel 2, then pixel 1
    /// ```
    /// - Complexity: O(width × height); an `.up` image is returned as it is.
    public func applyingOrientation() -> MPImage {
        guard orientation != .up else { return self }
        let outWidth = orientation.swapsSides ? height : width
        let outHeight = orientation.swapsSides ? width : height
        let count = width * height
        let o = orientation, w = width, h = height
        let out = pixels.withUnsafeBufferPointer { src in
            [UInt8](unsafeUninitializedCapacity: count * 3) { dst, initialized in
                var i = 0
                for v in 0 ..< outHeight {
                    for u in 0 ..< outWidth {
                        let (x, y) = o.storedPixel(u, v, width: w, height: h)
                        let s = (y * w + x) * 3
                        dst[i] = src[s]; dst[i + 1] = src[s + 1]; dst[i + 2] = src[s + 2]
                        i += 3
                    }
                }
                initialized = count * 3
            }
        }
        return MPImage(unchecked: out, width: outWidth, height: outHeight, orientation: .up)
    }
}

extension RegionOfInterest {
    /// This rectangle, given in normalised coordinates of the stored pixels, in normalised
    /// coordinates of the image with `orientation` applied.
    func inUprightFrame(of orientation: MPImage.Orientation) -> RegionOfInterest {
        let (x, y, w, h) = (self.x, self.y, width, height)
        switch orientation {
        case .up: return self
        case .upMirrored: return .init(x: 1 - x - w, y: y, width: w, height: h)
        case .down: return .init(x: 1 - x - w, y: 1 - y - h, width: w, height: h)
        case .downMirrored: return .init(x: x, y: 1 - y - h, width: w, height: h)
        case .leftMirrored: return .init(x: y, y: x, width: h, height: w)
        case .right: return .init(x: 1 - y - h, y: x, width: h, height: w)
        case .rightMirrored: return .init(x: 1 - y - h, y: 1 - x - w, width: h, height: w)
        case .left: return .init(x: y, y: 1 - x - w, width: h, height: w)
        }
    }

    /// This rectangle, given in normalised coordinates of the upright image, in normalised
    /// coordinates of the stored pixels.
    func inStoredFrame(of orientation: MPImage.Orientation) -> RegionOfInterest {
        inUprightFrame(of: orientation.inverse)
    }
}
