import Foundation

/// A point of a detection (a face's eye, nose tip, mouth, ear), normalised to the image:
/// `x` and `y` in 0...1 of the stored image's width and height (MediaPipe's `NormalizedKeypoint`).
/// Points of a detection near the border may lie slightly outside 0...1.
public struct NormalizedKeypoint: Sendable, Equatable, Codable {
    public var x: Float
    public var y: Float
    /// The point's name, when the model names it (MediaPipe's face models do not).
    public var label: String?
    /// The point's confidence, when the model gives one.
    public var score: Float?

    public init(x: Float, y: Float, label: String? = nil, score: Float? = nil) {
        self.x = x; self.y = y; self.label = label; self.score = score
    }

    /// The point as MediaPipe iOS gives it (`location`, a `CGPoint` in normalised coordinates).
    public var location: CGPoint { CGPoint(x: CGFloat(x), y: CGFloat(y)) }
}
