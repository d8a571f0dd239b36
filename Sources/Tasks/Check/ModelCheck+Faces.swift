import Engine

extension ModelCheck {
    /// `--task faces`: a square 128×128 or 192×192 image input (MediaPipe's short- and full-range
    /// face models, whose anchors are known), and two outputs that are the boxes and scores those
    /// anchors imply; then whether `FaceDetector` accepts the model.
    mutating func faces(_ plan: Plan, path: String, options: Options) {
        let input = plan.inputTensor(0)
        let side = input.shape.count == 4 && input.shape[1] == input.shape[2] ? input.shape[1] : 0
        guard let decoding = SsdDecoding.face(inputSize: side, minScore: 0.5, minSuppressionThreshold: 0.3) else {
            add(.problem, "input", "input \(input.shape): the face detector knows the anchors of MediaPipe's face models only, "
                + "128x128 (short range, 896 anchors) and 192x192 (full range, 2304 anchors); for another raw-output SSD "
                + "give ObjectDetectorOptions.rawOutputDecoding its anchor options")
            return
        }
        add(.ok, "anchors", "input \(side)x\(side): MediaPipe's \(side == 128 ? "short" : "full")-range face anchors (\(decoding.boxes.numBoxes) boxes, weighted NMS)")
        do {
            let decoder = try SsdDecoder(decoding, outputs: plan.graph.outputs.indices.map(plan.outputTensor), task: "a face detector")
            add(.ok, "outputs", "boxes = output \(decoder.boxesOutput), scores = output \(decoder.scoresOutput)")
            let o = FaceDetectorOptions(modelPath: path)
            o.baseOptions.limits = options.limits
            _ = try FaceDetector(options: o)
            add(.ok, "task", "fits the face detector (faces)")
        } catch {
            add(.problem, "task", "the face detector refuses the model: \(error)")
        }
    }
}
