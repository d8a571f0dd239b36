/// Non-maximum suppression of decoded detections, with the semantics of MediaPipe's
/// `NonMaxSuppressionCalculator` (`mediapipe/calculators/util/non_max_suppression_calculator.cc`).
///
/// Detections are visited by descending score (equal scores in input order). `.default` keeps a
/// detection unless it overlaps an already kept one by more than `minSuppressionThreshold`.
/// `.weighted` (MediaPipe's face detectors) takes the best remaining detection, gathers every
/// remaining detection overlapping it by more than the threshold (itself included), and outputs
/// the best one with its box corners and keypoints replaced by the score-weighted means of the
/// gathered ones — its own score kept; the gathered ones are removed and the rest repeat.
public struct NonMaxSuppressionOptions: Sendable, Equatable, Codable {
    public enum Algorithm: String, Sendable, Equatable, Codable { case `default`, weighted }
    /// How two boxes' overlap is measured.
    public enum OverlapType: String, Sendable, Equatable, Codable {
        /// Intersection over the union's bounding box (MediaPipe's JACCARD).
        case jaccard
        /// Intersection over the area of the box being tested.
        case modifiedJaccard
        /// Intersection over union.
        case intersectionOverUnion
    }

    public var algorithm: Algorithm
    public var overlapType: OverlapType
    /// Detections overlapping a kept one by more than this are suppressed (merged for `.weighted`).
    public var minSuppressionThreshold: Float
    /// Stops at the first detection scoring below this, when positive.
    public var minScoreThreshold: Float = -1
    /// At most this many detections for `.default`; any negative value for all. `.weighted`
    /// ignores it, as MediaPipe does.
    public var maxResults = -1

    public init(algorithm: Algorithm, overlapType: OverlapType = .intersectionOverUnion, minSuppressionThreshold: Float) {
        self.algorithm = algorithm; self.overlapType = overlapType; self.minSuppressionThreshold = minSuppressionThreshold
    }

    func validate() throws(TaskError) {
        guard !minSuppressionThreshold.isNaN, !minScoreThreshold.isNaN else {
            throw .invalidOptions("non-max suppression: thresholds must be numbers")
        }
        guard maxResults != 0 else { throw .invalidOptions("non-max suppression: maxResults 0 (use a negative value for all)") }
    }

    /// The overlap of `rest` with `kept` (MediaPipe's `OverlapSimilarity(type, rect1: rest, rect2: kept)`
    /// in the weighted loop, `(kept, rest)` in the default one): 0 for boxes that do not touch or
    /// have a negative size, else the intersection's area over the type's normalisation (0 when
    /// that is not positive).
    static func overlap(_ type: OverlapType, _ a: NormalizedDetection, _ b: NormalizedDetection) -> Float {
        // MediaPipe's Rectangle: empty when min > max; `Intersects` also accepts touching edges.
        guard a.width >= 0, a.height >= 0, b.width >= 0, b.height >= 0,
              !(b.xmax < a.xmin || a.xmax < b.xmin || b.ymax < a.ymin || a.ymax < b.ymin) else { return 0 }
        let ix = min(a.xmax, b.xmax) - max(a.xmin, b.xmin), iy = min(a.ymax, b.ymax) - max(a.ymin, b.ymin)
        let intersection = ix * iy
        let areaA = (a.xmax - a.xmin) * (a.ymax - a.ymin), areaB = (b.xmax - b.xmin) * (b.ymax - b.ymin)
        let normalization: Float
        switch type {
        case .jaccard:
            normalization = (max(a.xmax, b.xmax) - min(a.xmin, b.xmin)) * (max(a.ymax, b.ymax) - min(a.ymin, b.ymin))
        case .modifiedJaccard:
            normalization = areaB
        case .intersectionOverUnion:
            normalization = areaA + areaB - intersection
        }
        return normalization > 0 ? intersection / normalization : 0
    }

    /// The detections that survive, in output order (descending score of each kept detection).
    func apply(_ detections: [NormalizedDetection]) -> [NormalizedDetection] {
        // Indices by descending score, ties in input order (MediaPipe's std::sort leaves ties unspecified).
        let order = detections.indices.sorted {
            detections[$0].score != detections[$1].score ? detections[$0].score > detections[$1].score : $0 < $1
        }
        return algorithm == .weighted ? weighted(detections, order) : plain(detections, order)
    }

    private func plain(_ detections: [NormalizedDetection], _ order: [Int]) -> [NormalizedDetection] {
        let limit = maxResults < 0 ? detections.count : maxResults
        var kept = [NormalizedDetection]()
        for i in order {
            let d = detections[i]
            if minScoreThreshold > 0 && d.score < minScoreThreshold { break }
            if !kept.contains(where: { Self.overlap(overlapType, $0, d) > minSuppressionThreshold }) { kept.append(d) }
            if kept.count >= limit { break }
        }
        return kept
    }

    private func weighted(_ detections: [NormalizedDetection], _ order: [Int]) -> [NormalizedDetection] {
        var remaining = order, output = [NormalizedDetection]()
        // Invariant: `remaining` holds the not yet merged detections by descending score; each pass
        // removes at least the best one or stops.
        while let first = remaining.first {
            let best = detections[first]
            if minScoreThreshold > 0 && best.score < minScoreThreshold { break }
            var candidates = [Int](), rest = [Int]()
            for i in remaining {
                if Self.overlap(overlapType, detections[i], best) > minSuppressionThreshold { candidates.append(i) } else { rest.append(i) }
            }
            var merged = best
            if !candidates.isEmpty {
                // Score-weighted sums of the corners and keypoints, in float32 and candidate order.
                var total: Float = 0, xmin: Float = 0, ymin: Float = 0, xmax: Float = 0, ymax: Float = 0
                var points = [Float](repeating: 0, count: best.keypoints.count * 2)
                for i in candidates {
                    let c = detections[i], s = c.score
                    total += s
                    xmin += c.xmin * s; ymin += c.ymin * s
                    xmax += (c.xmin + c.width) * s; ymax += (c.ymin + c.height) * s
                    for k in 0 ..< min(best.keypoints.count, c.keypoints.count) {
                        points[k * 2] += c.keypoints[k].x * s
                        points[k * 2 + 1] += c.keypoints[k].y * s
                    }
                }
                merged.xmin = xmin / total; merged.ymin = ymin / total
                merged.width = xmax / total - merged.xmin; merged.height = ymax / total - merged.ymin
                for k in merged.keypoints.indices {
                    merged.keypoints[k].x = points[k * 2] / total
                    merged.keypoints[k].y = points[k * 2 + 1] / total
                }
            }
            output.append(merged)
            // Nothing merged (the best box has no area): MediaPipe stops here.
            if rest.count == remaining.count { break }
            remaining = rest
        }
        return output
    }
}
