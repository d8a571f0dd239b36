/// One SSD anchor: a box centre and size in normalised input coordinates (0...1), the prior a
/// raw-output SSD's box regressions are offsets from.
public struct Anchor: Sendable, Equatable, Codable {
    public var xCenter: Float, yCenter: Float, width: Float, height: Float

    public init(xCenter: Float, yCenter: Float, width: Float, height: Float) {
        self.xCenter = xCenter; self.yCenter = yCenter; self.width = width; self.height = height
    }
}

/// How to generate the anchors of a raw-output SSD (BlazeFace, palm detectors, MobileNet SSDs
/// exported without `TFLite_Detection_PostProcess`), with the semantics of MediaPipe's
/// `SsdAnchorsCalculatorOptions` (`mediapipe/calculators/tflite/ssd_anchors_calculator.cc`).
///
/// ```swift
/// let anchors = try SsdAnchorOptions.faceShortRange.anchors()   // 896 anchors, 16×16×2 + 8×8×6
/// ```
///
/// Layers that share a stride are merged into one grid: each cell of that grid holds, for each
/// merged layer in turn, one anchor per aspect ratio (plus one interpolated-scale anchor when
/// `interpolatedScaleAspectRatio > 0`). Cells are visited row by row, anchors within a cell in
/// that order — the order the model's outputs follow.
public struct SsdAnchorOptions: Sendable, Equatable, Codable {
    public var numLayers: Int
    public var minScale: Float
    public var maxScale: Float
    public var inputSizeHeight: Int
    public var inputSizeWidth: Int
    public var anchorOffsetX: Float = 0.5
    public var anchorOffsetY: Float = 0.5
    /// One stride per layer (required); a layer's grid is `ceil(inputSize / stride)` cells on each
    /// side unless feature map sizes are given.
    public var strides: [Int] = []
    /// Explicit grid sizes per layer; when set, `strides` only decide which layers merge.
    public var featureMapHeights: [Int] = []
    public var featureMapWidths: [Int] = []
    public var aspectRatios: [Float] = [1]
    /// Aspect ratio of the extra anchor at scale √(scaleᵢ · scaleᵢ₊₁); 0 or less adds none.
    public var interpolatedScaleAspectRatio: Float = 1
    /// The first layer uses the predefined anchors (scale 0.1 at ratio 1, then ratios 2 and ½).
    public var reduceBoxesInLowestLayer = false
    /// Every anchor has width and height 1 (the regressions then carry the whole size).
    public var fixedAnchorSize = false

    public init(numLayers: Int, minScale: Float, maxScale: Float, inputSizeHeight: Int, inputSizeWidth: Int,
                strides: [Int], aspectRatios: [Float] = [1], interpolatedScaleAspectRatio: Float = 1,
                fixedAnchorSize: Bool = false) {
        self.numLayers = numLayers; self.minScale = minScale; self.maxScale = maxScale
        self.inputSizeHeight = inputSizeHeight; self.inputSizeWidth = inputSizeWidth
        self.strides = strides; self.aspectRatios = aspectRatios
        self.interpolatedScaleAspectRatio = interpolatedScaleAspectRatio; self.fixedAnchorSize = fixedAnchorSize
    }

    /// MediaPipe's short-range face detector (BlazeFace, 128×128 input): 896 anchors.
    public static let faceShortRange = SsdAnchorOptions(
        numLayers: 4, minScale: 0.1484375, maxScale: 0.75, inputSizeHeight: 128, inputSizeWidth: 128,
        strides: [8, 16, 16, 16], interpolatedScaleAspectRatio: 1, fixedAnchorSize: true)

    /// MediaPipe's full-range face detector (192×192 input): 2304 anchors on one 48×48 grid.
    public static let faceFullRange = SsdAnchorOptions(
        numLayers: 1, minScale: 0.1484375, maxScale: 0.75, inputSizeHeight: 192, inputSizeWidth: 192,
        strides: [4], interpolatedScaleAspectRatio: 0, fixedAnchorSize: true)

    /// The anchor scale of layer `index` of `count`: linear from `minScale` to `maxScale`, or
    /// their midpoint for a single layer. Computed in Double, stored in Float, as MediaPipe's
    /// expression promotes to double before returning a float.
    static func scale(min: Float, max: Float, index: Int, count: Int) -> Float {
        if count == 1 { return (min + max) * 0.5 }
        return Float(Double(min) + Double(max - min) * Double(index) / Double(Float(count) - 1))
    }

    /// How many anchors `anchors()` returns, without building them.
    /// - Throws: as `anchors()`.
    public func anchorCount() throws(TaskError) -> Int {
        try layerGrids().reduce(0) { $0 + $1.height * $1.width * $1.perCell.count }
    }

    /// Generates the anchors, in the order the model's outputs follow.
    /// - Throws: `TaskError.invalidOptions` when the layer count, strides, grid sizes or input
    ///   size are inconsistent, or the anchors would exceed 1 000 000.
    /// - Complexity: O(number of anchors).
    public func anchors() throws(TaskError) -> [Anchor] {
        var anchors = [Anchor]()
        for grid in try layerGrids() {
            for y in 0 ..< grid.height {
                for x in 0 ..< grid.width {
                    let xCenter = (Float(x) + anchorOffsetX) / Float(grid.width)
                    let yCenter = (Float(y) + anchorOffsetY) / Float(grid.height)
                    for size in grid.perCell {
                        anchors.append(fixedAnchorSize
                            ? Anchor(xCenter: xCenter, yCenter: yCenter, width: 1, height: 1)
                            : Anchor(xCenter: xCenter, yCenter: yCenter, width: size.width, height: size.height))
                    }
                }
            }
        }
        return anchors
    }

    /// One grid of merged same-stride layers: its size and the anchor sizes of each cell.
    struct LayerGrid {
        var height: Int, width: Int
        var perCell: [(width: Float, height: Float)]
    }

    func validate() throws(TaskError) {
        guard numLayers > 0, numLayers <= 64 else { throw .invalidOptions("SSD anchors: numLayers \(numLayers) must be 1...64") }
        guard inputSizeWidth > 0, inputSizeHeight > 0, inputSizeWidth <= 1 << 16, inputSizeHeight <= 1 << 16 else {
            throw .invalidOptions("SSD anchors: input size \(inputSizeWidth)x\(inputSizeHeight) must be 1...65536")
        }
        // MediaPipe merges layers by stride even when feature map sizes are given (and loops
        // forever without strides), so one stride per layer is always required.
        guard strides.count == numLayers else {
            throw .invalidOptions("SSD anchors: \(strides.count) strides for \(numLayers) layers (one stride per layer)")
        }
        if !featureMapHeights.isEmpty || !featureMapWidths.isEmpty {
            guard featureMapHeights.count == numLayers, featureMapWidths.count == numLayers else {
                throw .invalidOptions("SSD anchors: feature map sizes \(featureMapHeights)x\(featureMapWidths) must give one height and width per layer (\(numLayers))")
            }
            guard (featureMapHeights + featureMapWidths).allSatisfy({ $0 > 0 && $0 <= 4096 }) else {
                throw .invalidOptions("SSD anchors: feature map sizes must be 1...4096")
            }
        }
        guard strides.allSatisfy({ $0 > 0 }) else { throw .invalidOptions("SSD anchors: strides \(strides) must be positive") }
        guard !aspectRatios.isEmpty || interpolatedScaleAspectRatio > 0 || reduceBoxesInLowestLayer,
              (aspectRatios + [minScale, maxScale, anchorOffsetX, anchorOffsetY]).allSatisfy(\.isFinite),
              aspectRatios.allSatisfy({ $0 > 0 }), interpolatedScaleAspectRatio.isFinite else {
            throw .invalidOptions("SSD anchors: aspect ratios \(aspectRatios) must be positive and give each cell an anchor; scales and offsets finite")
        }
    }

    /// The grids in output order. Layers are merged while their stride equals the first one's
    /// (MediaPipe compares strides even when feature map sizes are given).
    func layerGrids() throws(TaskError) -> [LayerGrid] {
        try validate()
        var grids = [LayerGrid](), total = 0
        var layer = 0
        while layer < numLayers {
            var perCell = [(width: Float, height: Float)]()
            var last = layer
            // Invariant: layers layer..<last share strides[layer], and their anchors are in perCell.
            while last < strides.count && strides[last] == strides[layer] {
                let scale = Self.scale(min: minScale, max: maxScale, index: last, count: strides.count)
                var ratiosAndScales = [(ratio: Float, scale: Float)]()
                if last == 0 && reduceBoxesInLowestLayer {
                    ratiosAndScales = [(1, 0.1), (2, scale), (0.5, scale)]
                } else {
                    ratiosAndScales = aspectRatios.map { ($0, scale) }
                    if interpolatedScaleAspectRatio > 0 {
                        let next = last == strides.count - 1 ? 1 : Self.scale(min: minScale, max: maxScale, index: last + 1, count: strides.count)
                        ratiosAndScales.append((interpolatedScaleAspectRatio, (scale * next).squareRoot()))
                    }
                }
                perCell += ratiosAndScales.map { (width: $0.scale * $0.ratio.squareRoot(), height: $0.scale / $0.ratio.squareRoot()) }
                last += 1
            }
            let height: Int, width: Int
            if !featureMapHeights.isEmpty {
                height = featureMapHeights[layer]; width = featureMapWidths[layer]
            } else {
                height = (inputSizeHeight + strides[layer] - 1) / strides[layer]
                width = (inputSizeWidth + strides[layer] - 1) / strides[layer]
            }
            total += height * width * perCell.count
            guard total <= 1_000_000 else { throw .invalidOptions("SSD anchors: more than 1 000 000 anchors") }
            grids.append(LayerGrid(height: height, width: width, perCell: perCell))
            layer = last
        }
        return grids
    }
}
