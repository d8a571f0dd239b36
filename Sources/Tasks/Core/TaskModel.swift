import Engine
import Foundation

/// What every task needs from a model: one prepared `Plan` (immutable, shared by every caller), a
/// pool of `Session`s (one per concurrent call), the metadata and the packed files.
final class TaskModel: Sendable {
    let plan: Plan
    let metadata: ModelMetadata?
    /// A read-only view of the plan's model bytes (which live as long as the plan).
    nonisolated(unsafe) private let archive: ZipArchive?
    private let sessions = SessionPool()
    /// Threads per operator in each session (`BaseOptions.threadCount`, default 1).
    private let threadCount: Int

    convenience init(_ options: BaseOptions) throws(TaskError) {
        try self.init(options.snapshot)
    }

    init(_ options: BaseOptions.Snapshot) throws(TaskError) {
        threadCount = options.threadCount ?? 1
        do {
            try Session.validate(threadCount: threadCount)
            if let buffer = options.modelAssetBuffer {
                guard options.modelAssetPath == nil || options.modelAssetPath == "" else {
                    throw TaskError.invalidOptions("set one of baseOptions.modelAssetPath and baseOptions.modelAssetBuffer, not both")
                }
                plan = try Plan(graph: Graph(data: buffer), limits: options.limits)
            } else {
                guard let path = options.modelAssetPath, !path.isEmpty else {
                    throw TaskError.invalidOptions(options.modelAssetPath == nil
                        ? "baseOptions.modelAssetPath is nil (a model file that was not found?) and no modelAssetBuffer is set"
                        : "baseOptions.modelAssetPath is empty (set it or modelAssetBuffer)")
                }
                // Only the interpreter's plan is kept (it never allocates a session); sessions come from the pool.
                var engineOptions = Interpreter.Options(threadCount: options.threadCount)
                engineOptions.limits = options.limits
                plan = try Interpreter(modelPath: path, options: engineOptions).plan
            }
        } catch let error as TaskError {
            throw error
        } catch let error as ModelError {
            throw .model(error)
        } catch {
            throw .unsupportedModel("\(error)")
        }
        do {
            metadata = try ModelMetadata(graph: plan.graph)
            // Packed files are only looked for when the metadata names some.
            archive = metadata == nil ? nil : try ZipArchive(plan.graph.associatedFilesBytes, maxFileBytes: options.limits.maxAssociatedFileBytes)
        } catch {
            throw .unsupportedModel("\(error)")
        }
    }

    /// The model of an image task and the encoder of its one input; `task` ("an image
    /// classifier") names the task in the error for a model with any other number of inputs.
    static func imageTask(_ options: BaseOptions, task: String) throws(TaskError) -> (TaskModel, InputTensorEncoder) {
        let model = try TaskModel(options)
        guard model.graph.inputs.count == 1 else {
            throw .unsupportedModel("\(task) needs exactly one input, the model has \(model.graph.inputs.count)")
        }
        return (model, try InputTensorEncoder(input: model.inputDescriptor(), metadata: model.metadata?.inputs.first))
    }

    var graph: Graph { plan.graph }

    func inputDescriptor(_ i: Int = 0) -> TensorDescriptor { plan.inputTensor(i) }
    func outputDescriptor(_ i: Int) -> TensorDescriptor { plan.outputTensor(i) }

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
    /// label file of the given type, display names from the first one whose locale is `locale`;
    /// with the name of the category-name file.
    func metadataLabels(output index: Int, type: AssociatedFile.FileType = .tensorAxisLabels, locale: String) throws(TaskError) -> (Labels, String)? {
        guard let tensor = metadata?.outputs[safe: index] else { return nil }
        let files = tensor.associatedFiles.filter { $0.type == type }
        guard let first = files.first else { return nil }
        var labels = Labels(fileContents: try associatedFile(first.name))
        if !locale.isEmpty, let localized = files.first(where: { $0.locale == locale }) {
            labels.displayNames = Labels(fileContents: try associatedFile(localized.name)).names
        }
        return (labels, first.name)
    }

    /// The user's label file (`path`), else the labels of output `index` from the metadata.
    func labels(path: String?, limits: Limits, output index: Int, type: AssociatedFile.FileType = .tensorAxisLabels,
                locale: String) throws(TaskError) -> LabelChoice {
        try LabelChoice.load(path: path, limits: limits) { () throws(TaskError) in
            try metadataLabels(output: index, type: type, locale: locale)
        }
    }

    /// Runs the model on `input` (the encoded image) and returns the first `outputs` outputs as
    /// floats (dequantized where needed). Calls from several threads run in parallel, each on a
    /// session of its own.
    func run(_ input: Data, outputs: Int) throws(TaskError) -> [[Float]] {
        let session = sessions.take(plan, threadCount: threadCount)
        defer { sessions.give(session) }
        do {
            try session.copy(input, toTensor: graph.inputs[0])
        } catch {
            throw .model(error)
        }
        session.invoke()
        // Tasks check at creation that their outputs are float32 or 8-bit quantized.
        return (0 ..< outputs).map { session.dequantizedValues(ofTensor: graph.outputs[$0]) ?? [] }
    }
}

/// Idle sessions of one plan. A call takes one (or makes one when all are busy) and gives it back,
/// so the pool grows to the largest number of concurrent calls and no call waits for another.
private final class SessionPool: @unchecked Sendable {
    private let lock = NSLock()
    /// Guarded by `lock`; a session is only ever used by the one call that took it.
    private var idle: [Session] = []

    /// `threadCount` was validated when the task was created, so making a session cannot fail.
    func take(_ plan: Plan, threadCount: Int) -> Session {
        lock.lock()
        let session = idle.popLast()
        lock.unlock()
        return session ?? (try! Session(plan: plan, threadCount: threadCount))
    }

    func give(_ session: Session) {
        lock.lock()
        idle.append(session)
        lock.unlock()
    }
}

extension Array {
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
