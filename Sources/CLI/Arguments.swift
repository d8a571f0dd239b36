/// A small command-line parser in swift-argument-parser's shape: positionals, `--option value`,
/// `--option=value` (repeatable: the last one wins, `values(of:)` has them all) and `--flag`.
///
/// Each command declares the options it accepts, once, as `Option` values: name, value
/// placeholder, help, default and how the text is parsed. The parser accepts exactly the declared
/// names, `--help` is generated from the same declarations, and a bad value is reported with the
/// flag as the user typed it.
struct Arguments {
    private(set) var positionals: [String] = []
    private var values: [String: [String]] = [:]
    /// How the user spelled each option (`--max-results` or `--max-results=...`), for messages.
    private var spelled: [String: String] = [:]

    /// Parses `arguments` against declarations.
    /// - Throws: `CLIError.usage` naming an unknown option, a flag given a value or an option without one.
    init(_ arguments: [String], accepting declarations: [OptionSpec]) throws(CLIError) {
        let byName = Dictionary(declarations.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
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
                guard let spec = byName[name] else { throw .usage("unknown option --\(name)") }
                spelled[name] = "--\(name)"
                if spec.isFlag {
                    guard inlineValue == nil else { throw .usage("--\(name) is a flag and takes no value, got '\(argument)'") }
                    values[name, default: []].append("true")
                } else {
                    guard let value = inlineValue ?? iterator.next() else {
                        throw .usage("--\(name) needs a value (\(spec.valueName ?? "VALUE"))")
                    }
                    values[name, default: []].append(value)
                }
            } else if argument.hasPrefix("-"), argument.count > 1, Double(argument) == nil {
                throw .usage("unknown option \(argument)")
            } else {
                positionals.append(argument)
            }
        }
    }

    /// The parsed value of `option`: its last occurrence, else its default.
    /// - Throws: `CLIError.usage` naming the flag and what it expects.
    subscript<Value>(_ option: Option<Value>) -> Value {
        get throws(CLIError) {
            guard let text = values[option.spec.name]?.last else { return option.defaultValue }
            guard let value = option.parse(text) else {
                throw .usage("\(spelled[option.spec.name] ?? "--\(option.spec.name)") must be \(option.expectation), got '\(text)'")
            }
            return value
        }
    }

    /// Every value given for `option`, parsed, in order.
    func values<Value>(of option: Option<Value>) throws(CLIError) -> [Value] {
        var result = [Value]()
        for text in values[option.spec.name] ?? [] {
            guard let value = option.parse(text) else {
                throw .usage("--\(option.spec.name) must be \(option.expectation), got '\(text)'")
            }
            result.append(value)
        }
        return result
    }

    /// Whether the user gave `option` at all.
    func contains<Value>(_ option: Option<Value>) -> Bool { contains(option.spec) }

    /// Whether the user gave the option `spec` declares (for options of different value types in one list).
    func contains(_ spec: OptionSpec) -> Bool { values[spec.name] != nil }
}

/// What `--help` shows of an option and what the parser needs to know: its name and whether it
/// takes a value.
struct OptionSpec: Sendable, Equatable, Codable {
    /// The name without the dashes: `max-results`.
    let name: String
    /// The value's placeholder in help (`N`), or nil for a flag.
    let valueName: String?
    let help: String
    /// The default, as shown in help.
    var defaultText: String? = nil

    var isFlag: Bool { valueName == nil }
    /// `--max-results N`
    var synopsis: String { "--\(name)" + (valueName.map { " \($0)" } ?? "") }
}

/// An option declared once: its spec (name, placeholder, help, default text), its default value
/// and how its text is parsed.
///
/// ```swift
/// static let maxResults = Option<Int>.integer("max-results", value: "N", help: "top N per head", default: 5, in: -1 ... 1000)
/// let n = try arguments[Self.maxResults]
/// ```
struct Option<Value: Sendable>: Sendable {
    let spec: OptionSpec
    let defaultValue: Value
    /// What a valid value is, for the error message: "an integer in 1...64".
    let expectation: String
    let parse: @Sendable (String) -> Value?
}

extension Option where Value == Bool {
    /// `--json`: true when given.
    static func flag(_ name: String, help: String) -> Option {
        Option(spec: OptionSpec(name: name, valueName: nil, help: help), defaultValue: false,
               expectation: "given without a value", parse: { _ in true })
    }
}

extension Option where Value == Int {
    static func integer(_ name: String, value: String, help: String, default defaultValue: Int, in range: ClosedRange<Int>) -> Option {
        Option(spec: OptionSpec(name: name, valueName: value, help: help, defaultText: "\(defaultValue)"), defaultValue: defaultValue,
               expectation: "an integer in \(range.lowerBound)...\(range.upperBound)", parse: { Int($0).flatMap { range.contains($0) ? $0 : nil } })
    }
}

// For an optional value, `parse` returns `Value?` = `T??`: `.none` is "invalid", `.some(nil)`
// would be "valid and absent", so each parser below spells out `.some(v)` and `.none`.

extension Option {
    /// A number in `range` (`Int`, `Double`, ... parsed by their `init?(_: String)`); nil when not given.
    static func ranged<Number: LosslessStringConvertible & Comparable & Sendable>(
        _ name: String, value: String, help: String, in range: ClosedRange<Number>, kind: String
    ) -> Option where Value == Number? {
        Option(spec: OptionSpec(name: name, valueName: value, help: help), defaultValue: nil,
               expectation: "\(kind) in \(range.lowerBound)...\(range.upperBound)", parse: { text -> Number?? in
                   guard let v = Number(text), range.contains(v) else { return .none }
                   return .some(v)
               })
    }
}

extension Option where Value == Int? {
    static func integer(_ name: String, value: String, help: String, in range: ClosedRange<Int>) -> Option {
        ranged(name, value: value, help: help, in: range, kind: "an integer")
    }
}

extension Option where Value == Double? {
    static func number(_ name: String, value: String, help: String, in range: ClosedRange<Double>) -> Option {
        ranged(name, value: value, help: help, in: range, kind: "a number")
    }
}

extension Option where Value == String? {
    /// Any text; nil when not given.
    static func string(_ name: String, value: String, help: String, default defaultText: String? = nil) -> Option {
        Option(spec: OptionSpec(name: name, valueName: value, help: help, defaultText: defaultText), defaultValue: nil,
               expectation: "a non-empty value", parse: { text -> String?? in text.isEmpty ? .none : .some(text) })
    }
}

extension Option {
    /// One of a fixed set of words, each mapped to a value.
    static func choice(_ name: String, value: String, help: String, default defaultWord: String, _ choices: KeyValuePairs<String, Value>) -> Option {
        let table = Dictionary(choices.map { ($0.key, $0.value) }, uniquingKeysWith: { a, _ in a })
        let words = choices.map(\.key)
        return Option(spec: OptionSpec(name: name, valueName: value, help: help, defaultText: defaultWord),
                      defaultValue: table[defaultWord]!,
                      expectation: words.dropLast().joined(separator: ", ") + " or " + (words.last ?? ""), parse: { table[$0] })
    }
}

/// An error the CLI reports as one `error: ...` line.
enum CLIError: Error, CustomStringConvertible {
    /// The command line is wrong (exit status 2).
    case usage(String)
    /// The command could not do its work (exit status 1).
    case failed(String)
    /// Some inputs of a batch failed; each was reported as it happened (exit status 1).
    case someInputsFailed(failed: Int, total: Int)

    var description: String {
        switch self {
        case .usage(let message), .failed(let message): return message
        case .someInputsFailed(let failed, let total): return "\(failed) of \(total) inputs failed"
        }
    }

    /// The process exit status for this error.
    var exitStatus: Int32 {
        switch self {
        case .usage: return 2
        case .failed, .someInputsFailed: return 1
        }
    }
}

/// A subcommand in swift-argument-parser's shape: it declares its options once, is made from the
/// parsed arguments, checks them in `validate()` and then runs. `usage` comes from `declarations`,
/// so `--help` lists exactly what the parser accepts.
protocol ParsedCommand {
    static var name: String { get }
    /// One line for `swiftlite --help`.
    static var summary: String { get }
    /// The first usage line after `swiftlite `: `classify [options] IMAGE...`.
    static var synopsis: String { get }
    static var declarations: [OptionSpec] { get }
    /// Text after the option list (inputs, output, exit status).
    static var discussion: String { get }
    /// Reads the options; throws a usage error naming a flag whose value is malformed.
    init(_ arguments: Arguments) throws(CLIError)
    /// Rejects contradictory or missing arguments with a usage error that names the flags.
    func validate() throws(CLIError)
    func run() throws
}

extension ParsedCommand {
    static var discussion: String { "" }
    func validate() throws(CLIError) {}

    static var usage: String {
        let width = min(26, (declarations.map(\.synopsis.count).max() ?? 0) + 2)
        var lines = ["swiftlite \(synopsis)", ""]
        for spec in declarations {
            var help = spec.help
            if let d = spec.defaultText { help += " (default \(d))" }
            let head = "  " + spec.synopsis
            lines.append(head.count + 2 > width + 2 ? head + "\n" + String(repeating: " ", count: width + 2) + help
                                                    : head.padding(toLength: width + 2, withPad: " ", startingAt: 0) + help)
        }
        if !discussion.isEmpty { lines += ["", discussion] }
        return lines.joined(separator: "\n")
    }

    static func run(_ arguments: Arguments) throws {
        let command = try Self(arguments)
        try command.validate()
        try command.run()
    }
}

/// A command's description and entry point, type-erased so that commands can sit in one list.
struct CommandEntry {
    let name, summary, usage: String
    let declarations: [OptionSpec]
    let run: (Arguments) throws -> Void

    init<C: ParsedCommand>(_ command: C.Type) {
        name = C.name
        summary = C.summary
        usage = C.usage
        declarations = C.declarations
        run = C.run
    }

    func parse(_ arguments: [String]) throws(CLIError) -> Arguments {
        try Arguments(arguments, accepting: declarations)
    }
}
