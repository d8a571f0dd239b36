import Engine
import Foundation

/// What every task needs from a model: the interpreter, its metadata, and its packed files.
final class TaskModel {
    let interpreter: Interpreter
    let metadata: ModelMetadata?
    private let archive: ZipArchive?

    init(_ options: BaseOptions) throws(TaskError) {
        guard !options.modelAssetPath.isEmpty else { throw .invalidOptions("baseOptions.modelAssetPath is empty") }
        do {
            var engineOptions = Interpreter.Options(threadCount: options.threadCount)
            engineOptions.limits = options.limits
            interpreter = try Interpreter(modelPath: options.modelAssetPath, options: engineOptions)
            try interpreter.allocateTensors()
        } catch {
            throw .model(error)
        }
        do {
            metadata = try ModelMetadata(graph: interpreter.graph)
            // Packed files are only looked for when the metadata names some.
            archive = metadata == nil ? nil : try ZipArchive(interpreter.graph.file.bytes, maxFileBytes: options.limits.maxAssociatedFileBytes)
        } catch {
            throw .unsupportedModel("\(error)")
        }
    }

    var graph: Graph { interpreter.graph }

    func inputDescriptor(_ i: Int = 0) -> TensorDescriptor { interpreter.plan.tensors[graph.inputs[i]] }
    func outputDescriptor(_ i: Int) -> TensorDescriptor { interpreter.plan.tensors[graph.outputs[i]] }

    /// The contents of a file packed in the model.
    func associatedFile(_ name: String) throws(TaskError) -> String {
        do {
            guard let bytes = try archive?.contents(of: name) else {
                throw TaskError.unsupportedModel(MetadataError.missingAssociatedFile(name).description)
            }
            return String(decoding: bytes, as: UTF8.self)
        } catch let error as TaskError {
            throw error
        } catch {
            throw .unsupportedModel("\(error)")
        }
    }

    /// Labels of output `index` from its metadata, MediaPipe's way: category names from the first
    /// label file of the given type, display names from the first one whose locale is `locale`.
    func metadataLabels(output index: Int, type: AssociatedFile.FileType = .tensorAxisLabels, locale: String) throws(TaskError) -> Labels? {
        guard let tensor = metadata?.outputs[safe: index] else { return nil }
        let files = tensor.associatedFiles.filter { $0.type == type }
        guard let first = files.first else { return nil }
        var labels = Labels(fileContents: try associatedFile(first.name))
        if !locale.isEmpty, let localized = files.first(where: { $0.locale == locale }) {
            labels.displayNames = Labels(fileContents: try associatedFile(localized.name)).names
        }
        return labels
    }

    /// Serialises inference: the engine session is single-threaded.
    private let lock = NSLock()

    /// Runs the model on `input` (the encoded image) and returns the first `outputs` outputs as
    /// floats (dequantized where needed).
    func run(_ input: Data, outputs: Int) throws(TaskError) -> [[Float]] {
        lock.lock()
        defer { lock.unlock() }
        do {
            try interpreter.copy(input, toInputAt: 0)
            try interpreter.invoke()
        } catch {
            throw .model(error)
        }
        var result = [[Float]]()
        for i in 0 ..< outputs { result.append(try scores(output: i)) }
        return result
    }

    /// The float scores of output `index`, dequantized if needed.
    func scores(output index: Int) throws(TaskError) -> [Float] {
        let tensor: Tensor
        do { tensor = try interpreter.output(at: index) } catch { throw .model(error) }
        return tensor.data.withUnsafeBytes { raw -> [Float] in
            let q = tensor.quantizationParameters
            switch tensor.dataType {
            case .float32: return Array(raw.bindMemory(to: Float.self))
            case .uint8: return raw.map { (Float(Int($0) - (q?.zeroPoint ?? 0))) * (q?.scale ?? 1) }
            case .int8: return raw.map { (Float(Int(Int8(bitPattern: $0)) - (q?.zeroPoint ?? 0))) * (q?.scale ?? 1) }
            default: return []
            }
        }
    }
}

extension Array {
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
