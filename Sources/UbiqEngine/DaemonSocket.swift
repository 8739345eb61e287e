import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A request to a running daemon over its Unix socket (one JSON line each way).
public struct DaemonRequest: Codable, Sendable {
    public var command: String
    public init(command: String) { self.command = command }
}

/// The daemon's answer.
public struct DaemonResponse: Codable, Sendable {
    public var ok: Bool
    public var message: String?
    public var status: EngineStatus?
    public init(ok: Bool, message: String? = nil, status: EngineStatus? = nil) { self.ok = ok; self.message = message; self.status = status }
}

/// The daemon's control socket: `status` and `sync` from other `ubiq` commands of the same home.
public final class DaemonSocket: @unchecked Sendable {
    let path: String
    var fd: Int32 = -1
    let handler: @Sendable (DaemonRequest) async -> DaemonResponse

    public init(path: String, handler: @escaping @Sendable (DaemonRequest) async -> DaemonResponse) {
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
        chmod(path, 0o600)
        let listener = fd
        let thread = Thread { [handler] in
            while true {
                let c = accept(listener, nil, nil)
                if c < 0 { if errno == EINTR { continue }; return }
                Task {
                    defer { close(c) }
                    guard let line = Self.readLine(c), let req = try? JSONDecoder().decode(DaemonRequest.self, from: Data(line.utf8)) else {
                        Self.writeLine(c, DaemonResponse(ok: false, message: "bad request"))
                        return
                    }
                    Self.writeLine(c, await handler(req))
                }
            }
        }
        thread.start()
    }

    public func stop() {
        if fd >= 0 { shutdown(fd, Int32(SHUT_RDWR)); close(fd); fd = -1 }
        unlink(path)
    }

    static func readLine(_ fd: Int32, limit: Int = 1 << 20) -> String? {
        var out: [UInt8] = []
        var b: UInt8 = 0
        while out.count < limit {
            let n = read(fd, &b, 1)
            if n <= 0 { break }
            if b == 0x0A { return String(decoding: out, as: UTF8.self) }
            out.append(b)
        }
        return out.isEmpty ? nil : String(decoding: out, as: UTF8.self)
    }

    static func writeLine<T: Encodable>(_ fd: Int32, _ value: T) {
        guard var data = try? JSONEncoder().encode(value) else { return }
        data.append(0x0A)
        _ = data.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Sends one request to the daemon of a home; nil if no daemon answers.
    public static func ask(_ path: String, _ request: DaemonRequest) -> DaemonResponse? {
        guard var addr = address(path) else { return nil }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        let rc = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        guard rc == 0 else { return nil }
        writeLine(fd, request)
        guard let line = readLine(fd) else { return nil }
        return try? JSONDecoder().decode(DaemonResponse.self, from: Data(line.utf8))
    }
}
