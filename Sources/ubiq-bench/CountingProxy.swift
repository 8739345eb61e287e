import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A TCP proxy on a loopback port that counts the bytes passing each way (wire bytes between a
/// device and the server, headers and WebSocket frames included).
final class CountingProxy: @unchecked Sendable {
    let target: Int
    private(set) var port = 0
    private let lock = NSLock()
    private var up = 0, down = 0
    private var listener: Int32 = -1

    init(target: Int) { self.target = target }

    var bytes: (up: Int, down: Int) { lock.lock(); defer { lock.unlock() }; return (up, down) }
    func reset() { lock.lock(); up = 0; down = 0; lock.unlock() }

    func start() throws {
        listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var one: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var addr = Self.loopback(0)
        guard withUnsafePointer(to: &addr, { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }) == 0,
              listen(listener, 64) == 0 else { throw POSIXError(.EADDRINUSE) }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(listener, $0, &len) } }
        port = Int(UInt16(bigEndian: addr.sin_port))
        let l = listener
        Thread { [self] in
            while true {
                let c = accept(l, nil, nil)
                if c < 0 { return }
                let s = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                var t = Self.loopback(target)
                guard withUnsafePointer(to: &t, { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(s, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }) == 0 else {
                    close(c); close(s); continue
                }
                for fd in [c, s] { var one: Int32 = 1; setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size)) }
                pump(from: c, to: s, upstream: true)
                pump(from: s, to: c, upstream: false)
            }
        }.start()
    }

    private func pump(from a: Int32, to b: Int32, upstream: Bool) {
        Thread { [self] in
            var buf = [UInt8](repeating: 0, count: 256 * 1024)
            while true {
                let n = buf.withUnsafeMutableBytes { recv(a, $0.baseAddress, $0.count, 0) }
                if n <= 0 { break }
                lock.lock(); if upstream { up += n } else { down += n }; lock.unlock()
                var off = 0
                while off < n {
                    let w = buf.withUnsafeBytes { send(b, $0.baseAddress! + off, n - off, Int32(MSG_NOSIGNAL)) }
                    if w <= 0 { break }
                    off += w
                }
            }
            shutdown(b, Int32(SHUT_WR))
            shutdown(a, Int32(SHUT_RD))
        }.start()
    }

    static func loopback(_ port: Int) -> sockaddr_in {
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = in_port_t(UInt16(port).bigEndian)
        a.sin_addr.s_addr = inet_addr("127.0.0.1")
        return a
    }
}
