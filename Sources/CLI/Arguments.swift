/// A small command-line parser: positionals, `--option value` (repeatable) and `--flag`.
///
/// Each command declares the options and flags it accepts; anything else is an error with a
/// message that names it.
struct Arguments {
    private(set) var positionals: [String] = []
    private var values: [String: [String]] = [:]
    private var flags: Set<String> = []

    init(_ arguments: [String], options: Set<String>, flags: Set<String>) throws(CLIError) {
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            if argument == "--" {
                while let rest = iterator.next() { positionals.append(rest) }
            } else if argument.hasPrefix("--") {
                var name = String(argument.dropFirst(2))
                var inlineValue: String?
                if let eq = name.firstIndex(of: "=") {
                    inlineValue = String(name[name.index(after: eq)...])
                    name = String(name[..<eq])
                }
                if flags.contains(name), inlineValue == nil {
                    self.flags.insert(name)
                } else if options.contains(name) {
                    guard let value = inlineValue ?? iterator.next() else { throw .usage("--\(name) needs a value") }
                    values[name, default: []].append(value)
                } else {
                    throw .usage("unknown option --\(name)")
                }
            } else if argument.hasPrefix("-"), argument.count > 1, Double(argument) == nil {
                throw .usage("unknown option \(argument)")
            } else {
                positionals.append(argument)
            }
        }
    }

    func flag(_ name: String) -> Bool { flags.contains(name) }
    func all(_ name: String) -> [String] { values[name] ?? [] }
    /// The last value given for `name`.
    func value(_ name: String) -> String? { values[name]?.last }

    func int(_ name: String, in range: ClosedRange<Int>) throws(CLIError) -> Int? {
        guard let text = value(name) else { return nil }
        guard let v = Int(text), range.contains(v) else {
            throw .usage("--\(name) must be an integer in \(range.lowerBound)...\(range.upperBound), got '\(text)'")
        }
        return v
    }

    func double(_ name: String, in range: ClosedRange<Double>) throws(CLIError) -> Double? {
        guard let text = value(name) else { return nil }
        guard let v = Double(text), range.contains(v) else {
            throw .usage("--\(name) must be a number in \(range.lowerBound)...\(range.upperBound), got '\(text)'")
        }
        return v
    }
}

/// An error the CLI reports as one `error: ...` line.
enum CLIError: Error, CustomStringConvertible {
    case usage(String)
    case failed(String)

    var description: String {
        switch self {
        case .usage(let message), .failed(let message): return message
        }
    }
}

/// A subcommand: its name, help text, and what it does with its arguments.
protocol Command {
    static var name: String { get }
    static var summary: String { get }
    static var usage: String { get }
    static var options: Set<String> { get }
    static var flags: Set<String> { get }
    static func run(_ arguments: Arguments) throws
}

/// A command's description and entry point, type-erased so that commands can sit in one list.
struct CommandEntry {
    let name, summary, usage: String
    let options, flags: Set<String>
    let run: (Arguments) throws -> Void

    init<C: Command>(_ command: C.Type) {
        name = C.name
        summary = C.summary
        usage = C.usage
        options = C.options
        flags = C.flags
        run = C.run
    }
}
