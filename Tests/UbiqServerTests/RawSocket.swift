import Foundation
import NIOHTTP1
import UbiqTesting
#if canImport(Glibc)
import Glibc
#endif

typealias NIOHTTPMethod = HTTPMethod

/// Sends raw bytes to a loopback port, reads whatever comes back for a moment, and closes.
enum RawSocket {
    /// A connected socket to the loopback `port` (the caller closes it).
    static func connected(port: Int) throws -> Int32 {
        guard let fd = LoopbackProxy.connected(port: port) else { throw POSIXError(.ECONNREFUSED) }
        return fd
    }

    /// Waits (at most `seconds`) for the other end to close `fd`; true if it did.
    static func closedByPeer(_ fd: Int32, within seconds: Int) -> Bool {
        var tv = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var buf = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = recv(fd, &buf, buf.count, 0)
            if n == 0 || (n < 0 && errno == ECONNRESET) { return true }
            if n < 0 { return false }  // timed out
        }
    }

    /// What has arrived on `fd` (waiting at most `seconds` for the first bytes), as text.
    static func received(_ fd: Int32, within seconds: Int) -> String {
        var tv = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var buf = [UInt8](repeating: 0, count: 4096)
        let n = recv(fd, &buf, buf.count, 0)
        return n > 0 ? String(decoding: buf[..<n], as: UTF8.self) : ""
    }

    /// Sends `bytes` on `fd`, giving up after 5 s (a server that stops reading never holds the
    /// test's thread).
    static func sendBytes(_ fd: Int32, _ bytes: [UInt8]) {
        var sendLimit = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &sendLimit, socklen_t(MemoryLayout<timeval>.size))
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    static func sendText(_ fd: Int32, _ text: String) { sendBytes(fd, Array(text.utf8)) }

    /// A socket connected to the loopback `port` from the loopback address `source` (any
    /// 127.x.y.z: the server sees a client of that address).
    static func connected(port: Int, from source: String) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr(source)
        var to = sockaddr_in()
        to.sin_family = sa_family_t(AF_INET)
        to.sin_port = in_port_t(UInt16(port).bigEndian)
        to.sin_addr.s_addr = inet_addr("127.0.0.1")
        let ok = withUnsafePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } } == 0
            && withUnsafePointer(to: &to) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } } == 0
        guard ok else { close(fd); throw POSIXError(.ECONNREFUSED) }
        return fd
    }

    /// One login sent from `source`; the answer's status code (0 if none came).
    static func login(port: Int, from source: String, user: String, password: String) throws -> Int {
        let fd = try connected(port: port, from: source)
        defer { close(fd) }
        let body = "{\"user\":\"\(user)\",\"password\":\"\(password)\",\"deviceName\":\"x\"}"
        sendText(fd, "POST /v1/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)")
        let answer = received(fd, within: 60)
        guard answer.hasPrefix("HTTP/1.1 "), let code = Int(answer.dropFirst(9).prefix(3)) else { return 0 }
        return code
    }

    static func sendAndClose(port: Int, _ bytes: [UInt8]) throws {
        let fd = try connected(port: port)
        defer { close(fd) }
        var tv = timeval(tv_sec: 0, tv_usec: 300_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        sendBytes(fd, bytes)
        var buf = [UInt8](repeating: 0, count: 4096)
        _ = recv(fd, &buf, buf.count, 0)
    }
}
