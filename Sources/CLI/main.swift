import Foundation
import Engine

/// Every subcommand, in the order `--help` lists them.
let commands = [
    CommandEntry(ClassifyCommand.self), CommandEntry(DetectCommand.self), CommandEntry(FacesCommand.self), CommandEntry(LabelCommand.self),
    CommandEntry(InspectCommand.self), CommandEntry(RunCommand.self), CommandEntry(BenchCommand.self),
    CommandEntry(ModelsCommand.self), CommandEntry(CheckCommand.self), CommandEntry(MetadataCommand.self),
]

func printHelp(_ commands: [CommandEntry]) {
    print("""
        swiftlite — run TensorFlow Lite models without TFLite

        usage: swiftlite <command> [options]

        commands:
        """)
    for c in commands { print("  \(c.name.padding(toLength: 10, withPad: " ", startingAt: 0)) \(c.summary)") }
    print("\nRun 'swiftlite <command> --help' for a command's options.")
    print("exit status: 0 success, 1 failure (for batches: some input failed), 2 usage error")
}

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("error: \(message)\n".utf8))
    exit(status)
}

var argv = Array(CommandLine.arguments.dropFirst())
guard let name = argv.first, name != "--help", name != "-h", name != "help" else {
    printHelp(commands)
    exit(argv.isEmpty ? 2 : 0)
}
// Every command's option declarations as JSON, for the tests that check `--help` against them.
if name == "__declarations" {
    struct Declared: Encodable { let command: String; let options: [OptionSpec] }
    print(try jsonText(commands.map { Declared(command: $0.name, options: $0.declarations) }))
    exit(0)
}
guard let command = commands.first(where: { $0.name == name }) else {
    fail("unknown command '\(name)' (commands: \(commands.map(\.name).joined(separator: ", ")))", status: 2)
}
argv.removeFirst()
if argv.contains("--help") || argv.contains("-h") {
    print("usage: \(command.usage)")
    exit(0)
}
do {
    try command.run(command.parse(argv))
} catch let error as CLIError {
    // A batch has already reported each failed input; a summary only helps when there were several.
    if case .someInputsFailed(_, let total) = error {
        if total > 1 { fail(error.description, status: error.exitStatus) }
        exit(error.exitStatus)
    }
    fail(error.description, status: error.exitStatus)
} catch {
    fail("\(error)", status: 1)
}
