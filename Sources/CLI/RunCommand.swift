import Foundation
import Engine

/// `swiftlite run MODEL --input A.npy ... --output-dir DIR`: run a model on `.npy` inputs.
struct RunCommand: ParsedCommand {
    static let name = "run"
    static let summary = "run a model on .npy inputs, write .npy outputs (and intermediates)"
    static let synopsis = "run MODEL --input A.npy [--input B.npy ...] --output-dir DIR [options]"

    static let input = Option<String?>.string("input", value: "FILE", help: "one per model input, in the subgraph's input order")
    static let outputDir = Option<String?>.string("output-dir", value: "DIR", help: "writes DIR/output_0.npy, output_1.npy, ... (the tensors' own dtypes)")
    static let threads = Option<Int>.integer("threads", value: "N", help: "threads per operator (same bytes for any N)", default: 1, in: 1 ... Session.maxThreadCount)
    static let dumpIntermediates = Option.flag("dump-intermediates", help: "also write every computed tensor as DIR/tensors/<index>_<short name>.npy, with DIR/tensors/index.json naming each file's tensor in full")
    static let stopAfter = Option<Int?>.integer("stop-after", value: "OP", help: "run operators 0...OP only (with --dump-intermediates, to bisect)", in: 0 ... Int(Int32.max))
    static let declarations = [input.spec, outputDir.spec, threads.spec, dumpIntermediates.spec, stopAfter.spec]

    let modelPaths: [String]
    let inputs: [String]
    let outputDirectory: String?
    let options: Interpreter.Options
    let stopAfterOperator: Int?

    init(_ arguments: Arguments) throws(CLIError) {
        modelPaths = arguments.positionals
        inputs = try arguments.values(of: Self.input).compactMap { $0 }
        outputDirectory = try arguments[Self.outputDir]
        var options = Interpreter.Options(threadCount: try arguments[Self.threads])
        options.preserveAllTensors = try arguments[Self.dumpIntermediates]
        self.options = options
        stopAfterOperator = try arguments[Self.stopAfter]
    }

    func validate() throws(CLIError) {
        guard modelPaths.count == 1 else { throw .usage("run takes exactly one MODEL path, got \(modelPaths.count) (see 'swiftlite run --help')") }
        guard let outputDirectory else { throw .usage("--output-dir is required") }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: outputDirectory, isDirectory: &isDirectory), !isDirectory.boolValue {
            throw .usage("--output-dir \(outputDirectory) is a file, not a folder")
        }
    }

    func run() throws {
        let outputDir = outputDirectory ?? ""
        let dump = options.preserveAllTensors
        let stopAfter = stopAfterOperator
        let interpreter = try Interpreter(modelPath: modelPaths[0], options: options)
        guard inputs.count == interpreter.inputTensorCount else {
            throw CLIError.usage("the model has \(interpreter.inputTensorCount) inputs, got \(inputs.count) --input files")
        }
        try interpreter.allocateTensors()
        for (i, path) in inputs.enumerated() {
            let array: NumpyArray
            do { array = try NumpyArray(contentsOf: URL(fileURLWithPath: path)) } catch {
                throw CLIError.failed("\(path): \(error)")
            }
            let expected = try interpreter.input(at: i)
            guard array.dataType == expected.dataType, array.shape.reduce(1, *) == expected.shape.dimensions.reduce(1, *) else {
                throw CLIError.failed("\(path): \(array.dataType) \(array.shape) does not match input \(i) '\(expected.name)' (\(expected.dataType) \(expected.shape.dimensions))")
            }
            try interpreter.copy(array.data, toInputAt: i)
        }
        let start = DispatchTime.now().uptimeNanoseconds
        try interpreter.invoke(stopAfter: stopAfter)
        let millis = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6

        let dir = URL(fileURLWithPath: outputDir)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        for i in 0 ..< interpreter.outputTensorCount {
            let t = try interpreter.output(at: i)
            try NumpyArray(dataType: t.dataType, shape: t.shape.dimensions, data: t.data).npyData()
                .write(to: dir.appendingPathComponent("output_\(i).npy"))
        }
        if dump {
            let tensorsDir = dir.appendingPathComponent("tensors")
            try FileManager.default.createDirectory(at: tensorsDir, withIntermediateDirectories: true)
            let lastOp = stopAfter ?? interpreter.graph.nodes.count - 1
            var computed = Set(interpreter.graph.inputs)
            for node in interpreter.graph.nodes where node.index <= lastOp { computed.formUnion(node.outputs) }
            var entries = [DumpedTensor]()
            for index in computed.sorted() {
                let t = try interpreter.tensor(index)
                let file = "\(index)_\(Self.fileNamePart(t.name)).npy"
                try NumpyArray(dataType: t.dataType, shape: t.shape.dimensions, data: t.data).npyData()
                    .write(to: tensorsDir.appendingPathComponent(file))
                entries.append(DumpedTensor(file: file, tensor: index, name: t.name, shape: t.shape.dimensions,
                                            dtype: t.dataType.rawValue, scales: t.quantizationParameters?.scales,
                                            zeroPoints: t.quantizationParameters?.zeroPoints))
            }
            try Data(try jsonText(entries).utf8).write(to: tensorsDir.appendingPathComponent("index.json"))
        }
        print("ran \(interpreter.graph.nodes.count) operators in \(String(format: "%.2f", millis)) ms; outputs in \(dir.path)")
    }

    /// One line of `tensors/index.json`: the file and the tensor's full name, shape, type and
    /// quantization (file names keep only a short, safe part of the name).
    struct DumpedTensor: Encodable {
        let file: String
        let tensor: Int
        let name: String
        let shape: [Int]
        let dtype: String
        let scales: [Float]?
        let zeroPoints: [Int]?
    }

    /// A file-name-safe part of a tensor name: letters, digits, `-` and `.` kept, the rest `_`,
    /// at most 80 bytes (real exports have names of ~800 characters; file names stop at 255).
    static func fileNamePart(_ name: String) -> String {
        var part = ""
        for c in name {
            let safe: Character = c.isASCII && (c.isLetter || c.isNumber || c == "-" || c == ".") ? c : "_"
            guard part.utf8.count < 80 else { break }
            part.append(safe)
        }
        return part
    }
}
