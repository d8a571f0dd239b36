import Foundation
import Engine

/// Every subcommand, in the order `--help` lists them.
let commands = [
    CommandEntry(ClassifyCommand.self), CommandEntry(DetectCommand.self), CommandEntry(LabelCommand.self),
    CommandEntry(InspectCommand.self), CommandEntry(RunCommand.self), CommandEntry(BenchCommand.self),
]

func printHelp(_ commands: [CommandEntry]) {
    print("""
        swiftlite — run TensorFlow Lite models without TFLite

        usage: swiftlite <command> [options]

        commands:
        """)
    for c in commands { print("  \(c.name.padding(toLength: 10, withPad: " ", startingAt: 0)) \(c.summary)") }
    print("\nRun 'swiftlite <command> --help' for a command's options.")
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("error: \(message)\n".utf8))
    exit(1)
}

var argv = Array(CommandLine.arguments.dropFirst())
guard let name = argv.first, name != "--help", name != "-h", name != "help" else {
    printHelp(commands)
    exit(argv.isEmpty ? 1 : 0)
}
guard let command = commands.first(where: { $0.name == name }) else {
    fail("unknown command '\(name)' (commands: \(commands.map(\.name).joined(separator: ", ")))")
}
argv.removeFirst()
if argv.contains("--help") || argv.contains("-h") {
    print("usage: \(command.usage)")
    exit(0)
}
do {
    try command.run(Arguments(argv, options: command.options, flags: command.flags))
} catch {
    fail("\(error)")
}
