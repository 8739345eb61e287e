import Foundation
import UbiqProtocol
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's control socket: other `ubiq` commands of the same home send it a
/// ``DeviceRequest`` and read the ``DeviceResponse`` (stream events first, one per line).
public final class DaemonSocket: @unchecked Sendable {
    public typealias Handler = @Sendable (DeviceRequest, @escaping @Sendable (DeviceResponse) async -> Bool) async -> DeviceResponse
    let path: String
    var fd: Int32 = -1
    let handler: Handler

    public init(path: String, handler: @escaping Handler) {
        self.path = path
        self.handler = handler
    }

    static func address(_ path: String) -> sockaddr_un? {
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: addr.sun_path) else { return nil }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
            raw[bytes.count] = 0
        }
        return addr
    }

    /// Binds and serves on a background thread.
    public func start() throws {
        unlink(path)
        guard var addr = Self.address(path) else { throw EngineError(.invalidPath, "socket path too long: \(path)") }
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw EngineError(.storageFailure, "cannot create the daemon socket") }
        let rc = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        guard rc == 0, listen(fd, 16) == 0 else { throw EngineError(.storageFailure, "cannot listen on \(path): \(String(cString: strerror(errno)))") }
        // The state folder is 0700 (nobody else can reach the socket between bind and chmod).
        guard chmod(path, 0o600) == 0 else { throw EngineError(.storageFailure, "cannot make \(path) private: \(String(cString: strerror(errno)))") }
        let listener = fd
        let thread = Thread { [handler] in
            while true {
                let c = accept(listener, nil, nil)
                if c < 0 { if errno == EINTR { continue }; return }
                Task {
                    defer { close(c) }
                    guard let line = LineReader(c).next(limit: 16 << 20), let req = try? WireCoding.decode(DeviceRequest.self, from: Data(line.utf8)) else {
                        Self.writeLine(c, DeviceResponse(ok: false, message: "bad request"))
                        return
                    }
                    let final = await handler(req) { Self.writeLine(c, $0) }
                    Self.writeLine(c, final)
                }
            }
        }
        thread.start()
    }

    public func stop() {
        if fd >= 0 { shutdown(fd, Int32(SHUT_RDWR)); close(fd); fd = -1 }
        unlink(path)
    }

    /// Reads newline-terminated lines from a socket, in blocks.
    final class LineReader {
        let fd: Int32
        var buffer: [UInt8] = []
        var start = 0
        init(_ fd: Int32) { self.fd = fd }

        func next(limit: Int = 1 << 20) -> String? {
            while true {
                if let nl = buffer[start...].firstIndex(of: 0x0A) {
                    let line = String(decoding: buffer[start..<nl], as: UTF8.self)
                    start = nl + 1
                    if start > 1 << 16 { buffer.removeFirst(start); start = 0 }
                    return line
                }
                guard buffer.count - start < limit else { return nil }
                var block = [UInt8](repeating: 0, count: 1 << 16)
                let n = Glibc.read(fd, &block, block.count)
                if n <= 0 {
                    guard start < buffer.count else { return nil }
                    let line = String(decoding: buffer[start...], as: UTF8.self)
                    start = buffer.count
                    return line
                }
                buffer += block[..<n]
            }
        }
    }

    /// Writes one JSON line; false when the peer has gone.
    @discardableResult
    static func writeLine<T: Encodable>(_ fd: Int32, _ value: T) -> Bool {
        guard var data = try? WireCoding.encode(value) else { return false }
        data.append(0x0A)
        return data.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == data.count
    }

    /// Sends one request to the daemon of a home and returns its final answer, passing stream
    /// events to `onEvent` (return false to stop listening); nil if no daemon answers.
    public static func ask(_ path: String, _ request: DeviceRequest, onEvent: (DeviceResponse) -> Bool = { _ in true }) -> DeviceResponse? {
        guard var addr = address(path) else { return nil }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        let rc = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        guard rc == 0 else { return nil }
        writeLine(fd, request)
        let reader = LineReader(fd)
        while let line = reader.next(limit: 512 << 20) {
            guard let r = try? WireCoding.decode(DeviceResponse.self, from: Data(line.utf8)) else { return nil }
            if !r.isStreamEvent { return r }
            if !onEvent(r) { return DeviceResponse(ok: true) }
        }
        return nil
    }
}
