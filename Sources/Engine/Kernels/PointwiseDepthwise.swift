/// A pointwise float CONV_2D (1×1, stride 1) whose output feeds nothing but a 3×3 float
/// DEPTHWISE_CONV_2D — MobileNet's expansion and depthwise layers — run as one operator, a band
/// of rows at a time, so that the expanded tensor never leaves the cache. The first convolution
/// may also be one that reads its windows in place (`Conv2DFloat32.computesRows`: the networks'
/// 3 × 3 stride-2 stem, which feeds the first depthwise layer), from its padded frame where it
/// pads so, which the threads fill first, or with its windows in the padding from patches in the
/// worker's scratch. And where the depthwise output feeds nothing but a
/// pointwise CONV_2D (the block's projection), that runs in the bands as well (`projection`):
/// an inverted residual block as one operator, neither tensor inside it written.
///
/// Run apart, the expansion writes its whole output (150 × 150 × 96 floats, 8.6 MB, in the person
/// detector) and the depthwise convolution reads it back from L3; at a small depth the expansion
/// then runs at the speed of the stores, not of its tiles. Here each thread
/// keeps a ring of `ringRows` expanded rows (about `ringBytes`) in its own scratch: for each band
/// of `bandRows` output rows it computes the expanded rows the band needs and has not computed
/// yet (`Conv2DFloat32.outputRows`, straight into the ring), then the band's output rows
/// (`DepthwiseConv2DFloat32.convolve3x3`, reading its three rows from the ring) — with a
/// projection, into a band buffer after the ring, then the projection of those rows
/// (`outputRows` again) into the output.
///
/// Every expanded value is the same `FloatGEMM` sum as in the separate operator, and every
/// output the same depthwise sum of the same values, so the result is the separate operators'
/// bit for bit, for any bands and tiles (and every projected value the same sum of those).
/// Tiles are row parts times groups of channels (row parts only with a projection), which
/// never overlap. A part computes the one or two expanded rows above it again, unless its worker
/// has just computed the part above: the pool hands each thread a contiguous run of parts, and
/// the ring's state (`RingState`, in front of the ring) lets the next part go on from it.
///
/// `Plan` fuses the pair or the three (`init?(pointwise:depthwise:projection:)`) unless tensors
/// are preserved for inspection; the tensors between them are then never written. The int8 pair, fused the same
/// way (the depthwise kernel asking for expanded rows as it builds its taps), gained 1–3 % on
/// one thread and lost on two: its expanded tensor is a quarter of the float one and stays in
/// L2 between the operators anyway.
struct PointwiseDepthwiseFloat32: TiledKernel, PartitionedKernel {
    let pointwise: Conv2DFloat32
    let depthwise: DepthwiseConv2DFloat32
    /// The pointwise convolution that alone reads the depthwise output (an inverted residual
    /// block's projection), run on each band of depthwise rows as they are made, from a band
    /// buffer after the ring; nil: the depthwise output is written.
    let projection: Conv2DFloat32?
    /// Output rows per band.
    let bandRows: Int
    /// Expanded rows in a worker's ring: as many as one band reads.
    let ringRows: Int

    /// Target size of one worker's ring: a quarter of a 2 MiB L2.
    static let ringBytes = 512 * 1024
    /// Expanded tensors smaller than this (per image) stay in L2 between the two operators anyway.
    static let minimumExpandedBytes = 1 << 20

    /// The fused pair (or three, with `projection`), or nil when `depthwise` does not read exactly
    /// `pointwise`'s output through its 3×3 path, `pointwise` does not compute rows
    /// (`computesRows`), `projection` is not pointwise on exactly `depthwise`'s output, or the
    /// expanded tensor is below `minimumExpandedBytes` (tests lower both bounds, to run many bands
    /// on small shapes).
    init?(pointwise: Conv2DFloat32, depthwise: DepthwiseConv2DFloat32, projection: Conv2DFloat32? = nil,
          minimumExpandedBytes: Int = Self.minimumExpandedBytes, ringBytes: Int = Self.ringBytes) {
        let p = pointwise.geometry, d = depthwise.geometry
        // Convolutions fused with their own element-wise operators (`FloatEpilogue`) are not taken.
        guard pointwise.epilogue == nil, depthwise.epilogue == nil, projection?.epilogue == nil,
              pointwise.computesRows, depthwise.hasFast3x3, d.depthMultiplier == 1, depthwise.input == pointwise.output,
              p.batches == d.batches, p.outputHeight == d.inputHeight, p.outputWidth == d.inputWidth,
              p.outputChannels == d.inputChannels,
              p.outputHeight * p.outputWidth * p.outputChannels * MemoryLayout<Float>.stride >= minimumExpandedBytes
        else { return nil }
        if let projection {
            let q = projection.geometry
            guard case .pointwise = projection.layout, projection.input == depthwise.output, q.batches == d.batches,
                  q.inputHeight == d.outputHeight, q.inputWidth == d.outputWidth, q.inputChannels == d.outputChannels
            else { return nil }
        }
        self.pointwise = pointwise
        self.depthwise = depthwise
        self.projection = projection
        let rowBytes = d.inputWidth * d.inputChannels * MemoryLayout<Float>.stride
        // A band of b output rows reads (b − 1) · stride + 3 expanded rows.
        let fitting = max(3, ringBytes / rowBytes)
        bandRows = max(1, (fitting - 3) / d.strideHeight + 1)
        ringRows = (bandRows - 1) * d.strideHeight + 3
    }

    /// Bytes of one worker's ring.
    private var ringBytes: Int {
        (ringRows * depthwise.geometry.inputWidth * depthwise.geometry.inputChannels * MemoryLayout<Float>.stride + 63) / 64 * 64
    }

    /// Bytes of one worker's band buffer (with a projection): one band of depthwise output rows.
    private var bandBytes: Int {
        let d = depthwise.geometry
        return projection == nil ? 0 : (bandRows * d.outputWidth * d.outputChannels * MemoryLayout<Float>.stride + 63) / 64 * 64
    }

    /// One worker's ring, after its `RingState`, then its band buffer, then the first
    /// convolution's patches (`Conv2DFloat32.patchBytes`).
    var workerScratchBytes: Int { RingState.bytes + ringBytes + bandBytes + pointwise.patchBytes }

    /// The tensor the fused operators write: the projection's output, or the depthwise one.
    var output: Int { projection?.output ?? depthwise.output }

    /// What a worker's ring holds after a part: expanded rows up to `computed` of image `image`,
    /// channels `channels`, the part having ended at output row `nextRow` (−1: nothing this eval).
    struct RingState {
        var image: Int, channels: Range<Int>, nextRow: Int, computed: Int
        /// Its place in front of the ring: whole cache lines, so the ring stays aligned.
        static let bytes = (MemoryLayout<RingState>.size + 63) / 64 * 64
    }

    func eval(_ memory: TensorMemory) {
        // No worker's ring holds anything of this evaluation yet.
        for worker in 0 ..< memory.threadCount { memory.scratch(as: RingState.self, worker: worker).pointee.nextRow = -1 }
        let grid = memory.grid { self.grid(memory) }
        let p = pointwise.geometry
        for n in 0 ..< depthwise.geometry.batches {
            // A padding convolution reads one image (`computesRows`) from its frame.
            if pointwise.frameHeight > 0 {
                memory.parallelize(self, count: pointwise.frameHeight, work: p.inputHeight * p.inputWidth * p.inputChannels)
            }
            memory.parallelize(self, step: n, grid: grid)
        }
    }

    /// Rows `units` of the padded frame of the (one) image, in the shared scratch.
    func evalPart(_ units: Range<Int>, step: Int, worker: Int, memory: TensorMemory) {
        pointwise.padFrame(memory.input(pointwise.input, as: Float.self), into: memory.scratch(as: Float.self), rows: units)
    }

    /// Output rows per part at least: a part computes the two (stride 1) or one (stride 2)
    /// expanded rows above it again.
    static let minimumPartRows = 4

    /// The output rows shared out evenly in a multiple of the thread count of parts (as many as
    /// the tasks allow, of `minimumPartRows` at least), then channel parts (whole `FloatGEMM`
    /// column blocks) for the tasks left. Rows first: a tile of a few of the channels pays each
    /// row's edges and set-up again for a small part of the work. Evenly: with parts of a fixed
    /// height, 56 rows made 7 parts of 8, 4 for one thread and 3 for the other, where 8 parts of
    /// 7 rows keep both busy to the end.
    private func grid(_ memory: TensorMemory) -> TileGrid {
        let p = pointwise.geometry, d = depthwise.geometry
        let work = p.outputHeight * p.outputWidth * p.outputChannels * p.patchSize + d.outputHeight * d.outputWidth * d.outputChannels * 9
        let tasks = memory.taskCount(work: work), threads = memory.threadCount
        guard tasks > 1 else { return TileGrid(rows: d.outputHeight, columns: d.outputChannels) }
        let parts = max(1, min(tasks, d.outputHeight / Self.minimumPartRows) / threads) * threads
        let rows = WorkPartition(count: d.outputHeight, granularity: 1, maxParts: parts)
        // A projection reads every depthwise channel of its pixels: rows only.
        let columnParts = projection == nil ? max(1, tasks / rows.parts) : 1
        return TileGrid(rows: rows, columns: WorkPartition(count: d.outputChannels, granularity: FloatGEMM.columnGranularity,
                                                           maxParts: columnParts))
    }

    func evalTile(rows: Range<Int>, columns: Range<Int>, step n: Int, worker: Int, memory: TensorMemory) {
        let p = pointwise.geometry, d = depthwise.geometry
        let state = memory.scratch(as: RingState.self, worker: worker)
        let continues = state.pointee.nextRow == rows.lowerBound && state.pointee.image == n && state.pointee.channels == columns
        let source = pointwise.frameHeight > 0 ? UnsafePointer(memory.scratch(as: Float.self))
                                               : memory.input(pointwise.input, as: Float.self) + n * p.inputHeight * p.inputWidth * p.inputChannels
        let outputChannels = projection?.geometry.outputChannels ?? d.outputChannels
        let computed = run(source, memory.output(output, as: Float.self) + n * d.outputHeight * d.outputWidth * outputChannels,
                           rows: rows, channels: columns, ring: memory.scratch(as: Float.self, worker: worker, offset: RingState.bytes),
                           band: memory.scratch(as: Float.self, worker: worker, offset: RingState.bytes + ringBytes),
                           patches: memory.scratch(as: Float.self, worker: worker, offset: RingState.bytes + ringBytes + bandBytes),
                           computed: continues ? state.pointee.computed : 0)
        state.pointee = RingState(image: n, channels: columns, nextRow: rows.upperBound, computed: computed)
    }

    /// Output rows `rows`, channels `channels` (bounds at multiples of `FloatGEMM.columnGranularity`,
    /// or the channel count; all of them with a projection) of one image, read from `source` (the
    /// image, or its padded frame where `pointwise` pads so); `ring` holds `ringRows` expanded
    /// rows, `band` (with a projection) `bandRows` depthwise rows, `patches` the first
    /// convolution's `patchBytes`. `out` is the depthwise output, or the projection's with one.
    /// `computed`: the ring already holds these channels of the expanded rows up to there, as the
    /// part that ended at `rows.lowerBound` left them (0 when it holds nothing). Returns the new
    /// `computed`.
    @discardableResult
    func run(_ source: UnsafePointer<Float>, _ out: UnsafeMutablePointer<Float>, rows: Range<Int>, channels: Range<Int>,
             ring: UnsafeMutablePointer<Float>, band buffer: UnsafeMutablePointer<Float>? = nil,
             patches: UnsafeMutablePointer<Float>? = nil, computed alreadyComputed: Int = 0) -> Int {
        let d = depthwise.geometry
        let rowElements = d.inputWidth * d.inputChannels
        // Expanded rows below `computed` are in the ring (those the current band needs, at least):
        // row `y` at slot `y % ringRows`.
        var computed = alreadyComputed
        var band = rows.lowerBound
        while band < rows.upperBound {
            let end = min(rows.upperBound, band + bandRows)
            let first = max(0, band * d.strideHeight - d.padTop)
            let last = min(d.inputHeight, (end - 1) * d.strideHeight - d.padTop + 3)
            var y = max(first, computed)
            while y < last {
                // Rows in consecutive slots, up to the end of the ring.
                let slot = y % ringRows, count = min(last - y, ringRows - slot)
                pointwise.outputRows(source, rows: y ..< y + count, columns: channels, c: ring + slot * rowElements, ldc: d.inputChannels,
                                     patches: patches)
                y += count
            }
            computed = max(computed, last)
            if let projection, let buffer {
                // The band's depthwise rows into the buffer, then their projection.
                depthwise.convolve3x3(buffer, rows: band ..< end, channels: channels, firstRow: band) {
                    UnsafePointer(ring + $0 % ringRows * rowElements)
                }
                let n = projection.geometry.outputChannels
                projection.outputRows(UnsafePointer(buffer), rows: 0 ..< end - band, columns: 0 ..< n,
                                      c: out + band * d.outputWidth * n, ldc: n)
            } else {
                depthwise.convolve3x3(out, rows: band ..< end, channels: channels) { UnsafePointer(ring + $0 % ringRows * rowElements) }
            }
            band = end
        }
        return computed
    }
}
