/// Draws detections onto an image: a coloured box per detection, its keypoints if it has any, and
/// its label and score above it (in a small built-in bitmap font), so results can be looked at
/// rather than read.
public enum Annotator {
    /// Returns a copy of `image` (upright) with `detections` drawn.
    public static func draw(_ detections: [Detection], on image: MPImage) throws -> MPImage {
        var pixels = image.pixels
        let w = image.width, h = image.height
        let thickness = max(2, min(w, h) / 200)
        func plot(_ x: Int, _ y: Int, _ color: (UInt8, UInt8, UInt8)) {
            guard x >= 0, y >= 0, x < w, y < h else { return }
            let i = (y * w + x) * 3
            pixels[i] = color.0; pixels[i + 1] = color.1; pixels[i + 2] = color.2
        }
        /// Fills the rectangle `x0 ..< x1` × `y0 ..< y1` clipped to the image; a rectangle wholly
        /// outside (a label running past an edge) or inverted draws nothing.
        func fill(_ x0: Int, _ y0: Int, _ x1: Int, _ y1: Int, _ color: (UInt8, UInt8, UInt8)) {
            let left = max(0, x0), right = min(w, x1), top = max(0, y0), bottom = min(h, y1)
            guard left < right, top < bottom else { return }
            for y in top ..< bottom { for x in left ..< right { plot(x, y, color) } }
        }
        let frames = labelFrames(for: detections, width: w, height: h)
        for (n, d) in detections.enumerated() {
            let color = palette[n % palette.count]
            let b = d.boundingBox
            fill(b.originX, b.originY, b.originX + b.width, b.originY + thickness, color)
            fill(b.originX, b.originY + b.height - thickness, b.originX + b.width, b.originY + b.height, color)
            fill(b.originX, b.originY, b.originX + thickness, b.originY + b.height, color)
            fill(b.originX + b.width - thickness, b.originY, b.originX + b.width, b.originY + b.height, color)
        }
        // Keypoints (normalised to the image) as filled squares, white-rimmed so they show on the box colour.
        let radius = thickness + 1
        for (n, d) in detections.enumerated() {
            for k in d.keypoints ?? [] where k.x.isFinite && k.y.isFinite {
                let x = Int((k.x * Float(w)).rounded(.down)), y = Int((k.y * Float(h)).rounded(.down))
                guard abs(x) < 1 << 30, abs(y) < 1 << 30 else { continue }
                fill(x - radius - 1, y - radius - 1, x + radius + 2, y + radius + 2, (255, 255, 255))
                fill(x - radius, y - radius, x + radius + 1, y + radius + 1, palette[n % palette.count])
            }
        }
        // Labels after every box, so no box line crosses a label.
        for (n, frame) in frames.enumerated() {
            guard let frame else { continue }
            let color = palette[n % palette.count]
            fill(frame.x, frame.y, frame.x + frame.width, frame.y + frame.height, color)
            for (k, character) in frame.text.uppercased().enumerated() {
                let rows = font[character] ?? font["?"]!
                for (row, bits) in rows.enumerated() {
                    for col in 0 ..< 5 where bits & (0x10 >> col) != 0 {
                        let x0 = frame.x + frame.scale + k * 6 * frame.scale + col * frame.scale, y0 = frame.y + frame.scale + row * frame.scale
                        fill(x0, y0, x0 + frame.scale, y0 + frame.scale, (255, 255, 255))
                    }
                }
            }
        }
        return try MPImage(pixels: pixels, width: w, height: h)
    }

    /// Where a detection's label goes: a rectangle in pixels and the text it holds.
    public struct LabelFrame: Sendable, Equatable {
        public var x: Int, y: Int, width: Int, height: Int
        /// The label as drawn (cut to the image's width when it is wider).
        public var text: String
        /// Pixels per font dot.
        public var scale: Int

        /// Whether the two rectangles share a pixel.
        public func overlaps(_ other: LabelFrame) -> Bool {
            x < other.x + other.width && other.x < x + width && y < other.y + other.height && other.y < y + height
        }
    }

    /// The label rectangle of each detection (nil for one without a category), all inside the
    /// `width` × `height` image and none overlapping another while there is room.
    ///
    /// Each label is tried above its box, then inside the box's top, then below it; a candidate
    /// that overlaps a label already placed moves down past that label. The rectangle is then
    /// shifted (not clipped) into the image, and text wider than the image is cut to fit.
    public static func labelFrames(for detections: [Detection], width w: Int, height h: Int) -> [LabelFrame?] {
        let scale = max(2, min(w, h) / 250)
        let glyphWidth = 6 * scale, textHeight = 9 * scale
        var placed: [LabelFrame] = []
        return detections.map { d -> LabelFrame? in
            guard let c = d.categories.first, w > 0, h > 0 else { return nil }
            var text = "\(c.label) \(Int((c.score * 100).rounded()))%"
            let fitting = max(1, (w - scale) / glyphWidth)
            if text.count > fitting { text = String(text.prefix(fitting)) }
            let labelWidth = min(w, text.count * glyphWidth + scale), labelHeight = min(h, textHeight)
            let b = d.boundingBox
            let x = min(max(0, b.originX), w - labelWidth)
            func inside(_ y: Int) -> LabelFrame {
                LabelFrame(x: x, y: min(max(0, y), h - labelHeight), width: labelWidth, height: labelHeight, text: text, scale: scale)
            }
            var best: LabelFrame?
            for start in [b.originY - labelHeight, b.originY, b.originY + max(0, b.height)] {
                var frame = inside(start)
                // Move down past every placed label it meets; each step passes one label, so at
                // most `placed.count` steps.
                for _ in 0 ... placed.count {
                    guard let blocker = placed.first(where: frame.overlaps) else { break }
                    frame = inside(blocker.y + blocker.height)
                }
                if !placed.contains(where: frame.overlaps) {
                    best = frame
                    break
                }
                best = best ?? frame
            }
            if let best { placed.append(best) }
            return best
        }
    }

    private static let palette: [(UInt8, UInt8, UInt8)] = [
        (230, 25, 75), (60, 180, 75), (0, 130, 200), (245, 130, 48), (145, 30, 180), (70, 240, 240), (240, 50, 230), (128, 128, 0),
    ]

    /// A 5×7 bitmap font: seven rows of five bits (most significant bit on the left).
    private static let font: [Character: [UInt8]] = [
        "A": [0x0E, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11], "B": [0x1E, 0x11, 0x11, 0x1E, 0x11, 0x11, 0x1E],
        "C": [0x0E, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0E], "D": [0x1E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x1E],
        "E": [0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x1F], "F": [0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x10],
        "G": [0x0E, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0F], "H": [0x11, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11],
        "I": [0x0E, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E], "J": [0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0C],
        "K": [0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11], "L": [0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1F],
        "M": [0x11, 0x1B, 0x15, 0x15, 0x11, 0x11, 0x11], "N": [0x11, 0x19, 0x15, 0x13, 0x11, 0x11, 0x11],
        "O": [0x0E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E], "P": [0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10, 0x10],
        "Q": [0x0E, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0D], "R": [0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11],
        "S": [0x0F, 0x10, 0x10, 0x0E, 0x01, 0x01, 0x1E], "T": [0x1F, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04],
        "U": [0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E], "V": [0x11, 0x11, 0x11, 0x11, 0x11, 0x0A, 0x04],
        "W": [0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0A], "X": [0x11, 0x11, 0x0A, 0x04, 0x0A, 0x11, 0x11],
        "Y": [0x11, 0x11, 0x0A, 0x04, 0x04, 0x04, 0x04], "Z": [0x1F, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1F],
        "0": [0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E], "1": [0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E],
        "2": [0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F], "3": [0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E],
        "4": [0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02], "5": [0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E],
        "6": [0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E], "7": [0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08],
        "8": [0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E], "9": [0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C],
        " ": [0, 0, 0, 0, 0, 0, 0], ".": [0, 0, 0, 0, 0, 0x0C, 0x0C], ",": [0, 0, 0, 0, 0x0C, 0x04, 0x08],
        "-": [0, 0, 0, 0x1F, 0, 0, 0], "_": [0, 0, 0, 0, 0, 0, 0x1F], "%": [0x18, 0x19, 0x02, 0x04, 0x08, 0x13, 0x03],
        "(": [0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02], ")": [0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08],
        ":": [0, 0x0C, 0x0C, 0, 0x0C, 0x0C, 0], "?": [0x0E, 0x11, 0x01, 0x02, 0x04, 0, 0x04],
        "#": [0x0A, 0x0A, 0x1F, 0x0A, 0x1F, 0x0A, 0x0A], "'": [0x04, 0x04, 0, 0, 0, 0, 0],
    ]
}
