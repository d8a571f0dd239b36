import Foundation
import TestSupport
import XCTest

/// The built `swiftlite` on older x86-64 CPUs, emulated by qemu-user (Debian's `qemu-user`; .ci/run
/// installs it): as an AVX2 + FMA machine without AVX-512 (`-cpu Haswell`) it runs the AVX2 kernels
/// and names the demo cat; as a CPU without AVX2 (`-cpu Nehalem`) it stops before any kernel with
/// an error naming AVX2 and an exit status, not a signal.
final class PortableBinaryTests: XCTestCase {
    static let qemu: URL? = ["/usr/bin/qemu-x86_64", "/usr/local/bin/qemu-x86_64"]
        .map(URL.init(fileURLWithPath:)).first { FileManager.default.isExecutableFile(atPath: $0.path) }

    /// Whether this process, and so the `swiftlite` built beside it, runs under AddressSanitizer
    /// (`make sanitize`): its shadow memory is more address space than qemu-user maps.
    static let sanitized: Bool = {
        guard let process = dlopen(nil, RTLD_NOW) else { return false }
        defer { dlclose(process) }
        return dlsym(process, "__asan_init") != nil
    }()

    func emulated(cpu: String, _ arguments: [String]) throws -> (status: Int32, exited: Bool, stdout: String, stderr: String) {
        #if !arch(x86_64)
        throw XCTSkip("x86-64 only")
        #else
        guard let qemu = Self.qemu else { throw XCTSkip("qemu-x86_64 not installed (apt-get install qemu-user)") }
        guard let executable = CLITests.executable else { throw XCTSkip("swiftlite executable not built (`make test` builds it)") }
        guard !Self.sanitized else { throw XCTSkip("qemu-user cannot run a swiftlite built with AddressSanitizer") }
        let directory = try TemporaryDirectories.make(for: self, prefix: "qemu")
        let out = directory.appendingPathComponent("stdout"), err = directory.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        let process = Process()
        process.executableURL = qemu
        process.arguments = ["-cpu", cpu, executable.path] + arguments
        process.currentDirectoryURL = CLITests.root
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        try process.run()
        process.waitUntilExit()
        let stderr = String(decoding: try Data(contentsOf: err), as: UTF8.self)
            .split(separator: "\n").filter { !$0.contains("TCG doesn't support") }.joined(separator: "\n")
        return (process.terminationStatus, process.terminationReason == .exit,
                String(decoding: try Data(contentsOf: out), as: UTF8.self), stderr)
        #endif
    }

    func testAVX2MachineNamesTheCat() throws {
        let run = try emulated(cpu: "Haswell", ["classify", "Models/demo/cat.png"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let lines = run.stdout.split(separator: "\n")
        XCTAssertGreaterThan(lines.count, 1, run.stdout)
        XCTAssertTrue(lines.dropFirst().first?.contains("Egyptian cat") ?? false, run.stdout)
    }

    func testCPUWithoutAVX2GetsAnErrorNotASignal() throws {
        let run = try emulated(cpu: "Nehalem", ["classify", "Models/demo/cat.png"])
        XCTAssertTrue(run.exited, "terminated by signal \(run.status)")
        XCTAssertNotEqual(run.status, 0)
        XCTAssertEqual(run.stdout, "")
        XCTAssertTrue(run.stderr.hasPrefix("error: "), run.stderr)
        XCTAssertTrue(run.stderr.contains("AVX2"), run.stderr)
    }
}
