import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A tiny HTTP/1.1 server on 127.0.0.1 for tests that download: a real socket on an ephemeral
/// port, one connection at a time, `Connection: close` after every response.
///
/// Bounded: it stops when `stop()` is called, when it is deallocated, or `lifetime` seconds after
/// it started, whichever comes first. It only ever binds the loopback address.
///
/// ```swift
/// let server = try LoopbackHTTPServer { request in .init(status: 200, body: Data("hi".utf8)) }
/// let url = server.url("/model.tflite")
/// ```
public final class LoopbackHTTPServer: @unchecked Sendable {
    public struct Request: Sendable {
        public let method: String
        public let path: String
        /// Header names in lower case.
        public let headers: [String: String]
    }

    public struct Response: Sendable {
        public var status: Int
        public var headers: [String: String]
        public var body: Data
        /// The `Content-Length` sent; more than `body.count` makes a truncated response.
        public var contentLength: Int?
        /// The body is sent in pieces of this size ...
        public var chunkSize: Int
        /// ... with this pause between them (a slow server).
        public var pauseBetweenChunks: TimeInterval

        public init(status: Int, headers: [String: String] = [:], body: Data = Data(), contentLength: Int? = nil,
                    chunkSize: Int = 1 << 16, pauseBetweenChunks: TimeInterval = 0) {
            self.status = status
            self.headers = headers
            self.body = body
            self.contentLength = contentLength
            self.chunkSize = chunkSize
            self.pauseBetweenChunks = pauseBetweenChunks
        }
    }

    public let port: UInt16
    private let listener: Int32
    private let handler: @Sendable (Request) -> Response
    private let lock = NSLock()
    private var stopped = false
    private var received: [Request] = []
    private let finished = DispatchSemaphore(value: 0)

    /// Starts listening on `127.0.0.1:<ephemeral>`.
    /// - Throws: `POSIXError` if the socket cannot be made.
    public init(lifetime: TimeInterval = 120, handler: @escaping @Sendable (Request) -> Response) throws {
        self.handler = handler
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            let code = errno
            close(fd)
            throw POSIXError(.init(rawValue: code) ?? .EIO)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = UInt16(bigEndian: address.sin_port)
        let deadline = Date().addingTimeInterval(lifetime)
        Thread { [self] in serve(until: deadline) }.start()
    }

    deinit { stop() }

    /// `http://127.0.0.1:<port><path>`
    public func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    /// The requests received so far, in order.
    public var requests: [Request] {
        lock.lock()
        defer { lock.unlock() }
        return received
    }

    /// Stops accepting and waits until the serving thread has closed the socket.
    public func stop() {
        lock.lock()
        let wasStopped = stopped
        stopped = true
        lock.unlock()
        if !wasStopped { finished.wait() }
    }

    private var isStopped: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopped
    }

    private func serve(until deadline: Date) {
        defer {
            close(listener)
            finished.signal()
        }
        while !isStopped, Date() < deadline {
            var poller = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { continue }
            handle(connection)
            close(connection)
        }
    }

    private func handle(_ connection: Int32) {
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while data.range(of: Data("\r\n\r\n".utf8)) == nil, data.count < 1 << 16 {
            let n = recv(connection, &buffer, buffer.count, 0)
            guard n > 0 else { return }
            data.append(contentsOf: buffer[0 ..< n])
        }
        let head = String(decoding: data, as: UTF8.self).components(separatedBy: "\r\n\r\n")[0]
        let lines = head.components(separatedBy: "\r\n")
        let parts = lines[0].split(separator: " ")
        guard parts.count >= 2 else { return }
        var headers = [String: String]()
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let request = Request(method: String(parts[0]), path: String(parts[1]), headers: headers)
        lock.lock()
        received.append(request)
        lock.unlock()

        let response = handler(request)
        var text = "HTTP/1.1 \(response.status) \(response.status == 200 ? "OK" : "Status")\r\n"
        var fields = response.headers
        fields["Content-Length"] = "\(response.contentLength ?? response.body.count)"
        fields["Connection"] = "close"
        for (name, value) in fields.sorted(by: { $0.key < $1.key }) { text += "\(name): \(value)\r\n" }
        text += "\r\n"
        guard sendAll(connection, Data(text.utf8)) else { return }
        var offset = 0
        while offset < response.body.count {
            if offset > 0, response.pauseBetweenChunks > 0 { Thread.sleep(forTimeInterval: response.pauseBetweenChunks) }
            let end = min(offset + response.chunkSize, response.body.count)
            guard sendAll(connection, response.body[offset ..< end]) else { return }
            offset = end
        }
    }

    private func sendAll(_ connection: Int32, _ data: Data) -> Bool {
        data.withUnsafeBytes { raw -> Bool in
            var sent = 0
            while sent < raw.count {
                let n = send(connection, raw.baseAddress! + sent, raw.count - sent, Int32(MSG_NOSIGNAL))
                guard n > 0 else { return false }
                sent += n
            }
            return true
        }
    }
}
