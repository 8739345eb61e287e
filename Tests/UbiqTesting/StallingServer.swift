import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A listener on loopback that answers every request with a response head and the first bytes
/// of a longer body, then says nothing more while holding the connection open — a server whose
/// storage froze half-way through an answer.
public final class StallingServer: @unchecked Sendable {
    public let port: Int
    private let fd: Int32
    private let lock = NSLock()
    private var accepted: [Int32] = []
    private var stopped = false
    private var answered = 0

    /// Requests answered with half a body so far.
    public var requestsStalled: Int { lock.withLock { answered } }

    public init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && listen(fd, 16) == 0 && getsockname(fd, $0, &len) == 0 }
        }
        guard bound else { close(fd); throw POSIXError(.EADDRINUSE) }
        self.fd = fd
        port = Int(UInt16(bigEndian: addr.sin_port))
        let thread = Thread { [self] in serve() }
        thread.start()
    }

    private func serve() {
        while true {
            let c = accept(fd, nil, nil)
            guard c >= 0 else { return }  // the listener was closed
            let keep = lock.withLock { () -> Bool in
                if stopped { return false }
                accepted.append(c)
                return true
            }
            guard keep else { close(c); return }
            // The request's head (bounded), then half an answer.
            var buffer = [UInt8](repeating: 0, count: 65_536)
            var seen: [UInt8] = []
            while seen.count < 65_536 {
                let n = recv(c, &buffer, buffer.count, 0)
                if n <= 0 { break }
                seen += buffer[0..<n]
                if seen.count >= 4 && String(decoding: seen.suffix(min(seen.count, 4096)), as: UTF8.self).contains("\r\n\r\n") { break }
            }
            let half = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"items\": ["
            _ = half.withCString { send(c, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
            lock.withLock { answered += 1 }
        }
    }

    /// Closes the listener and every connection it took.
    public func stop() {
        let open = lock.withLock { () -> [Int32] in
            stopped = true
            defer { accepted.removeAll() }
            return accepted
        }
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
        for c in open { close(c) }
    }
}
